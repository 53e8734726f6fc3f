"""Whether a graph can only run through `astream`: the views' `use_async` default.

Why: `lgnb.run(graph, ...)`, `lgnb.lens(...)` and a history view's replays drive
`graph.stream` unless told `use_async=True`, and a graph with an `async def` node (or
conditional edge) fails there with "No synchronous function provided". A notebook user
should not need to know which driver their graph needs: the views ask this module.
Reads only what both engines' compiled graphs expose (`nodes`, each node's `bound` and
`writers`, `get_subgraphs`), so LangGraph's graphs are read the same way.
"""

from __future__ import annotations

from typing import Any

__all__ = ("needs_async",)


def _async_only(runnable: Any) -> bool:
    """A callable wrapper (lgnb's NodeCallable, LangGraph's RunnableCallable) holding an
    async function and no sync one (lgnb's over such a RunnableCallable run as a Runnable:
    no function of its own, `is_async`)."""
    if getattr(runnable, "func", False) is not None:
        return False
    return getattr(runnable, "afunc", None) is not None or getattr(runnable, "is_async", None) is True


def _graph_needs_async(graph: Any) -> bool:
    nodes = getattr(graph, "nodes", None)
    if not isinstance(nodes, dict):
        return False
    for node in nodes.values():
        if _async_only(getattr(node, "bound", None)) or getattr(node, "async_writers", False):
            return True
        for writer in getattr(node, "writers", None) or ():
            if _async_only(writer) or getattr(writer, "is_async", False):
                return True
            # LangGraph's conditional edge: a RunnableCallable of its BranchSpec's `_route`,
            # whose `path` wraps the user's router
            spec = getattr(getattr(writer, "func", None), "__self__", None)
            if _async_only(getattr(spec, "path", None)):
                return True
    return False


def needs_async(graph: Any) -> bool:
    """True when `graph` or one of its subgraphs has a node or conditional edge that is
    async only; False for anything it cannot read (a remote graph: its server decides)."""
    try:
        if _graph_needs_async(graph):
            return True
        get_subgraphs = getattr(graph, "get_subgraphs", None)
        if get_subgraphs is None:
            return False
        return any(_graph_needs_async(sub) for _, sub in get_subgraphs(recurse=True))
    except Exception:  # noqa: BLE001 - a graph we cannot read runs the sync way, as before
        return False

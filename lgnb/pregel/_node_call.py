"""A compiled node called on its own: `graph.nodes["name"].invoke(input)`.

LangGraph's testing guide unit-tests a node this way: the node's code runs on the input
as given (no state read, no reducers, no writes) and the call returns what the code
returned. There is no run, so extras a node declares get what a run without them would
give: `config` (the node's metadata and tags under the given config), `runtime` (no
context, no store, a writer that drops), `writer` (drops), `store`/`previous`/`error`
(None). LangGraph refuses a `runtime` parameter here; lgnb gives the empty runtime so a
node that declares one can be tested the same way. `get_config()` and
`get_stream_writer()` still raise outside a run, as on LangGraph.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb._internal.callable import NodeCallable
    from lgnb.pregel._node import PregelNode

__all__ = ("ainvoke_node", "astream_node", "invoke_node", "stream_node")


def _config(node: PregelNode, config: Any) -> dict[str, Any]:
    from langchain_core.runnables.config import ensure_config, merge_configs

    own = {"metadata": dict(node.metadata or {}), "tags": list(node.tags or ())}
    return dict(ensure_config(merge_configs(own, config)))  # type: ignore[arg-type]


def _extras(bound: NodeCallable, config: dict[str, Any]) -> dict[str, Any]:
    from lgnb.runtime import Runtime

    kwargs: dict[str, Any] = {}
    for name in bound.inject:
        if name == "config":
            kwargs[name] = config
        elif name == "runtime":
            kwargs[name] = Runtime()
        elif name == "writer":
            kwargs[name] = Runtime().stream_writer
        else:  # store, previous, error
            kwargs[name] = None
    return kwargs


def _bound(node: PregelNode) -> NodeCallable:
    bound = node.bound
    if bound is None:
        raise TypeError(f"Node `{node.name}` has no code to call (it only routes its input).")
    # a node of a graph `from_langgraph` rebuilt: its library code (a ToolNode, a
    # RunnableCallable) is called as LangGraph calls it, with no lgnb task to answer for
    wrapped = getattr(bound.func or bound.afunc, "_lgnb_wraps", None)
    if wrapped is not None:
        from lgnb._internal.callable import NodeCallable

        return NodeCallable(wrapped, name=node.name)
    return bound


def invoke_node(node: PregelNode, input: Any, config: Any = None, **kwargs: Any) -> Any:
    """Run the node's code once on `input` and return what it returned."""
    bound, cfg = _bound(node), _config(node, config)
    if bound.subgraph is not None:
        return bound.subgraph.invoke(input, cfg, **kwargs)
    if bound.runnable is not None:
        return bound.runnable.invoke(input, cfg, **kwargs)
    if bound.func is None:
        raise TypeError(
            f'No synchronous function provided to "{node.name}".\n'
            "Either initialize with a synchronous function or invoke via the async API "
            "(ainvoke, astream, etc.)"
        )
    return bound.func(input, **{**_extras(bound, cfg), **kwargs})  # as LangGraph: keywords reach the code


async def ainvoke_node(node: PregelNode, input: Any, config: Any = None, **kwargs: Any) -> Any:
    """Async `invoke_node`; a synchronous node runs in a worker thread, as on LangGraph."""
    bound, cfg = _bound(node), _config(node, config)
    if bound.subgraph is not None:
        return await bound.subgraph.ainvoke(input, cfg, **kwargs)
    if bound.runnable is not None:
        return await bound.runnable.ainvoke(input, cfg, **kwargs)
    if bound.afunc is not None:
        return await bound.afunc(input, **{**_extras(bound, cfg), **kwargs})
    return await asyncio.to_thread(invoke_node, node, input, config, **kwargs)


def stream_node(node: PregelNode, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
    """The node's output as a stream: a subgraph's or a Runnable's chunks, else its one result."""
    bound = _bound(node)
    runnable = bound.subgraph if bound.subgraph is not None else bound.runnable
    if runnable is not None:
        yield from runnable.stream(input, _config(node, config), **kwargs)
        return
    yield invoke_node(node, input, config, **kwargs)


async def astream_node(node: PregelNode, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
    """Async `stream_node`."""
    bound = _bound(node)
    runnable = bound.subgraph if bound.subgraph is not None else bound.runnable
    if runnable is not None:
        async for chunk in runnable.astream(input, _config(node, config), **kwargs):
            yield chunk
        return
    yield await ainvoke_node(node, input, config, **kwargs)

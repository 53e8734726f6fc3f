"""LangGraph's prebuilt agent and tools, for a program ported by swapping its imports.

`from lgnb.prebuilt import create_react_agent, ToolNode, tools_condition` is what
`from langgraph.prebuilt import ...` was. `create_react_agent` builds the agent with
LangGraph's own factory (its prompt, hooks, `response_format`, `version`, all of its
options), then rebuilds it as an lgnb graph (`lgnb.graph.from_langgraph`): it runs on
lgnb's engine, with the checkpointer, store and breakpoints it was given, and the
notebook views show its steps. The tool helpers are LangGraph's own objects: they run
inside lgnb graphs as they are (`ToolNode` as a node, `tools_condition` as a conditional
edge, `InjectedState`/`InjectedStore`/`ToolRuntime` in a tool's signature).

Needs the `langgraph-prebuilt` package (which brings LangGraph): lgnb does not depend on
it, so an import of this module without it names the package to install.
"""

from __future__ import annotations

from typing import Any

try:
    from langgraph.prebuilt import (
        InjectedState,
        InjectedStore,
        ToolCallTransformer,
        ToolNode,
        ToolRuntime,
        ValidationNode,
        tools_condition,
    )
    from langgraph.prebuilt import create_react_agent as _langgraph_create_react_agent
except ImportError as exc:  # pragma: no cover - exercised in an environment without it
    raise ImportError(
        "lgnb.prebuilt re-exports LangGraph's prebuilt agent and tools, which are not installed "
        f"({exc}): pip install langgraph-prebuilt"
    ) from exc

__all__ = (
    "InjectedState",
    "InjectedStore",
    "ToolCallTransformer",
    "ToolNode",
    "ToolRuntime",
    "ValidationNode",
    "create_react_agent",
    "tools_condition",
)


def create_react_agent(*args: Any, **kwargs: Any) -> Any:
    """LangGraph's `create_react_agent(model, tools, ...)`, as an lgnb compiled graph.

    Takes exactly LangGraph's arguments (an lgnb saver or store included) and returns
    `lgnb.graph.from_langgraph(agent)`: the same nodes, edges, schemas, policies,
    checkpointer, store, breakpoints, name and config, run by lgnb.
    """
    import warnings

    from lgnb.graph import from_langgraph

    # LangGraph's deprecation warning names its caller's line: re-issued here, it names
    # the user's (Python shows a DeprecationWarning by default only from `__main__`)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = _langgraph_create_react_agent(*args, **kwargs)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    return from_langgraph(agent)


create_react_agent.__wrapped__ = _langgraph_create_react_agent  # type: ignore[attr-defined]


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.prebuilt`, as it is."""
    import langgraph.prebuilt

    return getattr(langgraph.prebuilt, name)

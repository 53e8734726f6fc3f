"""`langgraph.prebuilt.tool_node` under lgnb's name (`ToolNode`, `tools_condition`,
`InjectedState`, `InjectedStore`, `ToolRuntime`, ...): LangGraph's own objects, which run
inside lgnb graphs as they are (see `lgnb.prebuilt`)."""

from typing import Any

import langgraph.prebuilt.tool_node as _langgraph
from langgraph.prebuilt.tool_node import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.prebuilt.tool_node` (its module `__all__` lists fewer)."""
    return getattr(_langgraph, name)

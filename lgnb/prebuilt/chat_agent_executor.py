"""`langgraph.prebuilt.chat_agent_executor` under lgnb's name: the agent's state schemas
(`AgentState`, ...) and helpers as LangGraph defines them, and `create_react_agent` (also
`create_tool_calling_executor`) building the agent as an lgnb graph (see `lgnb.prebuilt`)."""

from typing import Any

import langgraph.prebuilt.chat_agent_executor as _langgraph
from langgraph.prebuilt.chat_agent_executor import *  # noqa: F403

from lgnb.prebuilt import create_react_agent

create_tool_calling_executor = create_react_agent


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.prebuilt.chat_agent_executor` (its module `__all__` lists fewer)."""
    return getattr(_langgraph, name)

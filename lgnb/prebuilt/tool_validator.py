"""`langgraph.prebuilt.tool_validator` under lgnb's name (`ValidationNode`): LangGraph's
own objects, which run inside lgnb graphs as they are (see `lgnb.prebuilt`)."""

from typing import Any

import langgraph.prebuilt.tool_validator as _langgraph
from langgraph.prebuilt.tool_validator import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.prebuilt.tool_validator`."""
    return getattr(_langgraph, name)

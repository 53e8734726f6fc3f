"""pytest plugin for LangChain's agent tests on lgnb: every agent `create_agent` builds is
rebuilt on lgnb with `lgnb.graph.from_langgraph`, as a user porting an agent does.

Loaded before the test modules import `create_agent`, so both `langchain.agents` and
`langchain.agents.factory` hand out the wrapped function.
"""

from __future__ import annotations

import functools
from typing import Any

import langchain.agents
import langchain.agents.factory

from lgnb.graph import from_langgraph

_create_agent = langchain.agents.factory.create_agent


@functools.wraps(_create_agent)
def create_agent(*args: Any, **kwargs: Any) -> Any:
    return from_langgraph(_create_agent(*args, **kwargs))


langchain.agents.factory.create_agent = create_agent  # type: ignore[assignment]
langchain.agents.create_agent = create_agent  # type: ignore[assignment]

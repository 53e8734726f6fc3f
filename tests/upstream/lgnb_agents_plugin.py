"""pytest plugin for agent test suites on lgnb: every agent a library factory builds
(LangChain's `create_agent`, `langgraph.prebuilt`'s `create_react_agent`, the multi-agent
builders `create_supervisor` and `create_swarm`) is rebuilt on lgnb with
`lgnb.graph.from_langgraph`, as a user porting an agent does. (The multi-agent factories
return a `StateGraph` builder: `from_langgraph` makes it an lgnb builder, so the test's own
`.compile()` compiles an lgnb graph.)

Loaded before the test modules import the factories, so every module that hands one out
hands out the wrapped function.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from lgnb.graph import from_langgraph

# (module that defines the factory, modules that re-export it), name
_FACTORIES = (
    (("langchain.agents.factory", "langchain.agents"), "create_agent"),
    (("langgraph.prebuilt.chat_agent_executor", "langgraph.prebuilt"), "create_react_agent"),
    (("langgraph_supervisor.supervisor", "langgraph_supervisor"), "create_supervisor"),
    (("langgraph_swarm.swarm", "langgraph_swarm"), "create_swarm"),
)


def _on_lgnb(factory: Any) -> Any:
    @functools.wraps(factory)
    def build(*args: Any, **kwargs: Any) -> Any:
        return from_langgraph(factory(*args, **kwargs))

    return build


for modules, name in _FACTORIES:
    try:
        loaded = [importlib.import_module(m) for m in modules]
    except ImportError:  # that library is not installed: its suite is not run
        continue
    wrapped = _on_lgnb(getattr(loaded[0], name))
    for module in loaded:
        setattr(module, name, wrapped)

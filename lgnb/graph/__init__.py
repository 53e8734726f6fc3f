"""Graph builders: `StateGraph`, its compiled form, and the message helpers.

`MessagesState` and `add_messages` load LangChain's message classes, so they are
imported on first use: `import lgnb.graph` stays light for graphs without messages.
"""

from typing import Any

from lgnb._internal.constants import END, START
from lgnb.graph._port import from_langgraph
from lgnb.graph.state import CompiledStateGraph, StateGraph

__all__ = (
    "END",
    "START",
    "StateGraph",
    "CompiledStateGraph",
    "MessagesState",
    "MessageGraph",
    "add_messages",
    "from_langgraph",
)


def __getattr__(name: str) -> Any:
    if name in ("MessagesState", "MessageGraph", "add_messages"):
        from lgnb.graph import message

        return getattr(message, name)
    raise AttributeError(f"module 'lgnb.graph' has no attribute {name!r}")

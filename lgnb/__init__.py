"""lgnb: a LangGraph-compatible graph runtime for Jupyter, and the live views around it.

Port a LangGraph program by replacing `langgraph` with `lgnb` in its imports. The
common names are re-exported here; the notebook entry points `lgnb.run`, `lgnb.show`
and `lgnb.Run` are loaded on first use, so `import lgnb` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import END, START
from lgnb.config import get_config, get_stream_writer
from lgnb.errors import GraphRecursionError, InvalidUpdateError
from lgnb.graph import StateGraph
from lgnb.types import Command, Interrupt, RetryPolicy, Send, interrupt

if TYPE_CHECKING:  # loaded on first use (`__getattr__` below); typed here for checkers
    from lgnb.graph.message import MessagesState, add_messages
    from lgnb.widgets import Run, history, lens, register_form, run, show

__version__ = "0.1.0"

__all__ = (
    "END",
    "START",
    "Command",
    "GraphRecursionError",
    "Interrupt",
    "InvalidUpdateError",
    "MessagesState",
    "RetryPolicy",
    "Run",
    "Send",
    "StateGraph",
    "add_messages",
    "attach",
    "connect",
    "get_config",
    "get_stream_writer",
    "history",
    "inbox",
    "interrupt",
    "lens",
    "register_form",
    "run",
    "show",
)

_LAZY = {"run", "show", "Run", "history", "lens", "register_form"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from lgnb import widgets

        return getattr(widgets, name)
    if name in ("connect", "attach", "inbox"):
        from lgnb import remote

        return getattr(remote, name)
    if name in ("MessagesState", "add_messages"):
        from lgnb.graph import message

        return getattr(message, name)
    raise AttributeError(f"module 'lgnb' has no attribute {name!r}")


def _warm_views() -> None:
    from lgnb._warm import schedule_in_kernel

    schedule_in_kernel()


_warm_views()

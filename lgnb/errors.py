"""Exceptions raised by the lgnb engine.

Each mirrors the LangGraph class of the same name, so `except` clauses port unchanged;
messages name the thing that is wrong and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lgnb.types import Command, Interrupt

__all__ = (
    "EmptyChannelError",
    "ErrorCode",
    "GraphRecursionError",
    "InvalidUpdateError",
    "GraphBubbleUp",
    "GraphInterrupt",
    "NodeInterrupt",
    "ParentCommand",
    "EmptyInputError",
    "TaskNotFound",
    "UnknownInterruptError",
    "create_error_message",
)


class ErrorCode(Enum):
    """Troubleshooting codes, shared with LangGraph's documentation pages."""

    GRAPH_RECURSION_LIMIT = "GRAPH_RECURSION_LIMIT"
    INVALID_CONCURRENT_GRAPH_UPDATE = "INVALID_CONCURRENT_GRAPH_UPDATE"
    INVALID_GRAPH_NODE_RETURN_VALUE = "INVALID_GRAPH_NODE_RETURN_VALUE"
    MULTIPLE_SUBGRAPHS = "MULTIPLE_SUBGRAPHS"
    INVALID_CHAT_HISTORY = "INVALID_CHAT_HISTORY"


def create_error_message(*, message: str, error_code: ErrorCode) -> str:
    """Append the troubleshooting link LangGraph users already know."""
    return (
        f"{message}\n"
        "For troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/"
        f"errors/{error_code.value}"
    )


class EmptyChannelError(Exception):
    """A channel was read before any value was written to it."""


class GraphBubbleUp(Exception):
    """Base of the exceptions that stop a task without being a failure."""


class GraphRecursionError(RecursionError):
    """The run reached `recursion_limit` super-steps without finishing.

    Raise the limit with `graph.invoke(input, {"recursion_limit": 100})`, or check the
    graph for a loop that never reaches END.
    """


class InvalidUpdateError(Exception):
    """A node's update could not be applied: two writes to a single-value key in one
    step, or a return value that is not a mapping of state keys."""


class GraphInterrupt(GraphBubbleUp):
    """Raised by `interrupt()`; the loop records it and pauses the run."""

    def __init__(self, interrupts: Sequence[Interrupt] = ()) -> None:
        super().__init__(interrupts)


class ParentCommand(GraphBubbleUp):
    """Carries a `Command(graph=Command.PARENT)` from a subgraph to its parent."""

    args: tuple[Command]

    def __init__(self, command: Command) -> None:
        super().__init__(command)


class EmptyInputError(Exception):
    """The graph received an empty input."""


class TaskNotFound(Exception):
    """A task could not be found (distributed execution)."""




class NodeInterrupt(GraphInterrupt):
    """Deprecated: raise `interrupt(value)` instead. Interrupts the node with `value`."""

    def __init__(self, value: object, id: str | None = None) -> None:
        import warnings

        from lgnb.types import Interrupt
        from lgnb.warnings import LangGraphDeprecatedSinceV10

        warnings.warn(
            LangGraphDeprecatedSinceV10(
                "NodeInterrupt is deprecated. Please use `langgraph.types.interrupt` instead."
            ),
            stacklevel=2,
        )
        if id is None:
            super().__init__([Interrupt(value=value)])
        else:
            super().__init__([Interrupt(value=value, id=id)])


class UnknownInterruptError(Exception):
    """A resume that matches no pending interrupt; nothing was written, the thread is
    unchanged and its interrupts (`pending_ids`) can still be answered.

    `reason`: "not_pending" (the ids are not waiting for an answer, or nothing is),
    "empty_map" (an empty resume map), "ambiguous" (one value, several interrupts).
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        interrupt_ids: Sequence[str] = (),
        pending_ids: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.interrupt_ids = tuple(interrupt_ids)
        self.pending_ids = tuple(pending_ids)

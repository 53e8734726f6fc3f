"""Exceptions raised by the lgnb engine.

Each mirrors the LangGraph class of the same name, so `except` clauses port unchanged;
messages name the thing that is wrong and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from lgnb.types import Command, Interrupt

__all__ = (
    "EmptyChannelError",
    "ErrorCode",
    "GraphDrained",
    "GraphRecursionError",
    "InvalidUpdateError",
    "GraphBubbleUp",
    "GraphInterrupt",
    "NodeCancelledError",
    "NodeError",
    "NodeInterrupt",
    "NodeTimeoutError",
    "ParentCommand",
    "EmptyInputError",
    "TaskNotFound",
    "ThreadBusyError",
    "UnknownInterruptError",
    "create_error_message",
    "is_invalid_resume",
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


class _Twinned(BaseException):
    """When LangGraph is loaded too, an instance is also an instance of LangGraph's class
    of the same name, so code written against LangGraph's errors catches lgnb's (`except
    langgraph.errors.GraphRecursionError`), and library code that lets LangGraph's
    signals through (`except langgraph.errors.GraphBubbleUp: raise`) lets lgnb's through
    (`_internal/langgraph_twins.py`)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from lgnb._internal.langgraph_twins import twin_of

        return super().__new__(twin_of(cls), *args, **kwargs)  # type: ignore[arg-type,unused-ignore]


class EmptyChannelError(_Twinned, Exception):
    """A channel was read before any value was written to it."""


class GraphBubbleUp(_Twinned, Exception):
    """Base of the exceptions that stop a task without being a failure (a LangGraph
    `GraphBubbleUp` too, when LangGraph is loaded)."""


class GraphDrained(GraphBubbleUp):
    """The run stopped early, at a super-step boundary, because `RunControl.request_drain()`
    was called (e.g. on shutdown). The last checkpoint is intact: invoke again with the
    same thread to continue. `reason` is the string given to `request_drain`.
    """

    def __init__(self, reason: str = "shutdown") -> None:
        super().__init__(f"Graph drained: {reason}")
        self.reason = reason


class GraphRecursionError(_Twinned, RecursionError):
    """The run reached `recursion_limit` super-steps without finishing.

    Raise the limit with `graph.invoke(input, {"recursion_limit": 100})`, or check the
    graph for a loop that never reaches END.
    """


class InvalidUpdateError(_Twinned, Exception):
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


class EmptyInputError(_Twinned, Exception):
    """The graph received an empty input."""


class TaskNotFound(_Twinned, Exception):
    """A task could not be found (distributed execution)."""


class ThreadBusyError(RuntimeError):
    """lgnb only: a run asked for a thread another run is running on (`multitask="reject"`,
    the default of `lgnb.run`). LangGraph's server answers such a request with HTTP 409.

    `thread_id` is the thread; `holder` says which run holds it (run id, process, host).
    """

    def __init__(self, thread_id: str, holder: str, *, note: str | None = None) -> None:
        self.thread_id = thread_id
        self.holder = holder
        message = (
            f"Thread {thread_id!r} is busy: {holder} is running on it, and lgnb runs one "
            "run per thread at a time (two at once would overwrite each other's state). "
        )
        if note:
            message += note
        else:
            message += (
                "Wait for it to end (run.wait()), cancel it (run.cancel()), or start this "
                "run with multitask='enqueue' (wait for it to end, then run on the thread's "
                "latest state) or multitask='interrupt' (cancel it, then run)."
            )
        super().__init__(message)




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


class UnknownInterruptError(_Twinned, Exception):
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


@dataclass(frozen=True, slots=True)
class NodeError:
    """What a node-level error handler receives about the failure.

    A handler registered with `add_node(..., error_handler=...)` gets it by declaring a
    parameter annotated `NodeError`: `node` is the failed node's name, `error` what it raised.
    """

    node: str
    error: BaseException


class NodeCancelledError(_Twinned, Exception):
    """A node's own code raised `asyncio.CancelledError`.

    Cancellation started by the engine (stopping siblings of a failed task) is silent;
    a node that raises `CancelledError` itself fails like any other error, as this type,
    so the run reports an error instead of finishing quietly.
    """

    node: str

    def __init__(self, node: str, message: str | None = None) -> None:
        super().__init__(message or f"Node {node!r} raised asyncio.CancelledError")
        self.node = node


class NodeTimeoutError(_Twinned, Exception):
    """A node attempt ran longer than its `TimeoutPolicy` allows.

    `kind` says which limit fired ("run": total time, "idle": time without progress) and
    `timeout` is that limit; `run_timeout` / `idle_timeout` are the configured policy.
    Not a subclass of the built-in `TimeoutError` (an `OSError`), so the default
    `RetryPolicy` retries it.
    """

    node: str
    timeout: float
    run_timeout: float | None
    idle_timeout: float | None
    elapsed: float
    kind: Literal["idle", "run"]

    def __init__(
        self,
        node: str,
        elapsed: float,
        *,
        kind: Literal["idle", "run"],
        idle_timeout: float | None = None,
        run_timeout: float | None = None,
    ) -> None:
        if kind == "idle":
            if idle_timeout is None:
                raise ValueError("NodeTimeoutError(kind='idle') needs idle_timeout=")
            self.timeout = idle_timeout
            message = (
                f"Node '{node}' exceeded its idle timeout of {idle_timeout:.3f}s "
                f"without making progress (elapsed: {elapsed:.3f}s)."
            )
        elif kind == "run":
            if run_timeout is None:
                raise ValueError("NodeTimeoutError(kind='run') needs run_timeout=")
            self.timeout = run_timeout
            message = (
                f"Node '{node}' exceeded its run timeout of {run_timeout:.3f}s "
                f"(elapsed: {elapsed:.3f}s)."
            )
        else:
            raise ValueError(f"NodeTimeoutError: kind must be 'idle' or 'run', got {kind!r}")
        super().__init__(message)
        self.node = node
        self.elapsed = elapsed
        self.kind = kind
        self.idle_timeout = idle_timeout
        self.run_timeout = run_timeout


_INVALID_RESUME = "_langgraph_invalid_resume"


def mark_invalid_resume(error: BaseException) -> None:
    """Flag `error` as raised by a resume value that failed the interrupt's `response_schema`."""
    setattr(error, _INVALID_RESUME, True)


def is_invalid_resume(error: BaseException) -> bool:
    """Whether `error` came from a resume value that did not match `response_schema`.

    `interrupt()` raises a `pydantic.ValidationError` then; callers such as `ToolNode`
    use this to tell it from bad tool arguments, so the interrupt can be answered again.
    """
    return getattr(error, _INVALID_RESUME, False) is True

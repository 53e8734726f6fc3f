"""`Runtime`: what a node may ask for besides its state — context, store, stream writer.

A node declares `runtime: Runtime[MyContext]` and receives the run's `context=` value
(validated against the graph's `context_schema`), the store, the custom-stream writer,
a `heartbeat` for idle timeouts, and the run's `RunControl` (cooperative draining).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from lgnb._internal.context import ExecutionInfo, current_task
from lgnb.types import StreamWriter

__all__ = (
    "BaseUser",
    "DEFAULT_RUNTIME",
    "ExecutionInfo",
    "RunControl",
    "Runtime",
    "ServerInfo",
    "get_runtime",
)

ContextT = TypeVar("ContextT")


def _no_op_writer(_: Any) -> None:
    """The writer nodes get when the caller did not ask for `custom` events."""


def _no_op_heartbeat() -> None:
    """The heartbeat nodes get outside an idle-timed attempt."""


def __getattr__(name: str) -> Any:
    if name == "BaseUser":  # re-exported as LangGraph does; langgraph_sdk is optional here
        from langgraph_sdk.auth.types import BaseUser

        return BaseUser
    raise AttributeError(f"module 'lgnb.runtime' has no attribute {name!r}")


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Set by a LangGraph server for its runs (assistant, graph, authenticated user);
    None when the graph runs locally."""

    assistant_id: str
    graph_id: str
    user: Any = None


class RunControl:
    """Run-scoped control: ask a running graph to stop cleanly at the next step boundary.

    Create one per run and pass it in `Runtime(control=...)` / read it from
    `runtime.control`; after `request_drain()` the run stops before its next super-step
    with `GraphDrained`, its last checkpoint intact. Safe from any thread: the request is
    one attribute write. A drained control stays drained; do not reuse it.
    """

    __slots__ = ("_drain_reason",)

    def __init__(self) -> None:
        self._drain_reason: str | None = None

    def request_drain(self, reason: str = "shutdown") -> None:
        """Ask the run to stop at the next super-step boundary, for `reason`."""
        self._drain_reason = reason

    @property
    def drain_requested(self) -> bool:
        """Whether `request_drain` was called."""
        return self._drain_reason is not None

    @property
    def drain_reason(self) -> str | None:
        """The reason given to `request_drain`, or None."""
        return self._drain_reason


@dataclass(frozen=True, slots=True)
class Runtime(Generic[ContextT]):
    """Run-scoped values injected into nodes that declare a `runtime` parameter.

    `heartbeat()` records progress for the node's idle timeout; `control` is the run's
    `RunControl` (None outside a run); `server_info` is set by a LangGraph server.
    """

    context: ContextT = None  # type: ignore[assignment]
    store: Any = None
    stream_writer: StreamWriter = field(default=_no_op_writer)
    heartbeat: Callable[[], None] = field(default=_no_op_heartbeat)
    previous: Any = None
    execution_info: ExecutionInfo | None = None
    server_info: ServerInfo | None = None
    control: RunControl | None = None

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """`other`'s values where it has them (truthy, or a non-default writer/heartbeat,
        or a non-None `previous`), this runtime's elsewhere."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=(
                other.stream_writer
                if other.stream_writer is not _no_op_writer
                else self.stream_writer
            ),
            heartbeat=(
                other.heartbeat if other.heartbeat is not _no_op_heartbeat else self.heartbeat
            ),
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy with some fields replaced."""
        return replace(self, **overrides)

    def patch_execution_info(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy whose `execution_info` has some fields replaced."""
        if self.execution_info is None:
            raise RuntimeError(
                "Runtime.patch_execution_info: execution_info is not set yet "
                "(it is filled in when the task is prepared)."
            )
        return replace(self, execution_info=self.execution_info.patch(**overrides))

    @property
    def drain_requested(self) -> bool:
        """Whether the run's `RunControl` was asked to drain."""
        return self.control.drain_requested if self.control is not None else False

    @property
    def drain_reason(self) -> str | None:
        """The reason given to `RunControl.request_drain`, or None."""
        return self.control.drain_reason if self.control is not None else None


DEFAULT_RUNTIME: Runtime[Any] = Runtime()
"""A runtime with no context, store, writer, execution info or control."""


def get_runtime(context_schema: type[ContextT] | None = None) -> Runtime[ContextT]:
    """The Runtime of the node currently running (call it from inside a node)."""
    return current_task().task_runtime()

"""`Runtime`: what a node may ask for besides its state — context, store, stream writer.

A node declares `runtime: Runtime[MyContext]` and receives the run's `context=` value
(validated against the graph's `context_schema`), the store, and the custom-stream writer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from lgnb.types import StreamWriter

__all__ = ("ExecutionInfo", "Runtime", "get_runtime")

ContextT = TypeVar("ContextT")


def _no_op_writer(_: Any) -> None:
    """The writer nodes get when the caller did not ask for `custom` events."""


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Where a node execution runs: checkpoint, namespace, task, thread, attempt."""

    checkpoint_id: str
    checkpoint_ns: str
    task_id: str
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None

    def patch(self, **overrides: Any) -> ExecutionInfo:
        return replace(self, **overrides)


@dataclass(frozen=True, slots=True)
class Runtime(Generic[ContextT]):
    """Run-scoped values injected into nodes that declare a `runtime` parameter."""

    context: ContextT = None  # type: ignore[assignment]
    store: Any = None
    stream_writer: StreamWriter = field(default=_no_op_writer)
    previous: Any = None
    execution_info: ExecutionInfo | None = None

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy with some fields replaced."""
        return replace(self, **overrides)


def get_runtime(context_schema: type[ContextT] | None = None) -> Runtime[ContextT]:
    """The Runtime of the node currently running (call it from inside a node)."""
    from lgnb.pregel._context import current_task

    return current_task().task_runtime()

"""The value types a LangGraph program passes to and receives from the engine.

`Send`, `Command`, `Interrupt`, `RetryPolicy`, `Overwrite`, `StateSnapshot`, ... with the
fields, equality and reprs of their LangGraph namesakes, so code and tests port by
changing the import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    NamedTuple,
    TypeVar,
    Union,
)

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import CheckpointMetadata

__all__ = (
    "All",
    "Checkpointer",
    "Command",
    "Durability",
    "GraphOutput",
    "Interrupt",
    "Overwrite",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamPart",
    "StreamWriter",
    "interrupt",
)

All = Literal["*"]
"""Special value: every node (for `interrupt_before` / `interrupt_after`)."""

StreamMode = Literal["values", "updates", "checkpoints", "tasks", "debug", "messages", "custom"]
"""What `stream()` emits: see the engine docs for each mode's payload."""

Durability = Literal["sync", "async", "exit"]
"""When checkpoints are written: before the next step starts, while it runs, or once at exit."""

StreamWriter = Callable[[Any], None]
"""Type of the `writer` argument a node may declare to emit `custom` stream events."""

Checkpointer = Union[None, bool, Any]
"""A `BaseCheckpointSaver`, `True` (inherit the parent's, per thread), `False` (none), or None."""

StreamPart = dict[str, Any]
"""A v2 stream part: `{"type": mode, "ns": namespace, "data": payload}`."""

N = TypeVar("N", bound=Hashable)
OutputT = TypeVar("OutputT")


def default_retry_on(exc: Exception) -> bool:
    """Whether a failed node should be retried when no `retry_on` is given.

    Programming errors (ValueError, TypeError, ArithmeticError, ImportError, LookupError,
    NameError, SyntaxError, RuntimeError, ReferenceError, StopIteration,
    StopAsyncIteration, OSError) are not retried; HTTP 5xx errors of `requests`/`httpx`
    are; everything else is.
    """
    if isinstance(exc, ConnectionError):
        return True
    if type(exc).__name__ in ("HTTPStatusError",):  # httpx
        status = getattr(getattr(exc, "response", None), "status_code", 500)
        return status >= 500
    if type(exc).__name__ == "HTTPError" and type(exc).__module__.startswith("requests"):
        response = getattr(exc, "response", None)
        return response is None or response.status_code >= 500
    if isinstance(
        exc,
        (
            ValueError,
            TypeError,
            ArithmeticError,
            ImportError,
            LookupError,
            NameError,
            SyntaxError,
            RuntimeError,
            ReferenceError,
            StopIteration,
            StopAsyncIteration,
            OSError,
        ),
    ):
        return False
    return True


class RetryPolicy(NamedTuple):
    """How to retry a node that raised: intervals in seconds, attempts including the first."""

    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    max_attempts: int = 3
    jitter: bool = True
    retry_on: type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool] = (
        default_retry_on
    )


class Send:
    """Run `node` in the next super-step with `arg` as its input (map-reduce fan-out)."""

    __slots__ = ("node", "arg", "timeout")

    def __init__(self, /, node: str, arg: Any, *, timeout: float | None = None) -> None:
        self.node = node
        self.arg = arg
        self.timeout = timeout

    def __hash__(self) -> int:
        return hash((self.node, self.arg, self.timeout))

    def __repr__(self) -> str:
        if self.timeout is None:
            return f"Send(node={self.node!r}, arg={self.arg!r})"
        return f"Send(node={self.node!r}, arg={self.arg!r}, timeout={self.timeout!r})"

    def __eq__(self, value: object) -> bool:
        return (
            isinstance(value, Send)
            and self.node == value.node
            and self.arg == value.arg
            and self.timeout == value.timeout
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Command(Generic[N]):
    """Update state, route to nodes, and/or resume an interrupt, in one return value.

    `graph=Command.PARENT` sends the command to the closest parent graph (from a subgraph
    node); `resume` answers `interrupt()` calls (a value, or `{interrupt_id: value}`).
    """

    graph: str | None = None
    update: Any | None = None
    resume: dict[str, Any] | Any | None = None
    goto: Send | Sequence[Send | N] | N = ()

    PARENT: ClassVar[Literal["__parent__"]] = "__parent__"

    def __repr__(self) -> str:
        contents = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if getattr(self, f.name)
        )
        return f"Command({contents})"

    def _update_as_tuples(self) -> Sequence[tuple[str, Any]]:
        from lgnb._internal.fields import update_as_tuples

        update = self.update
        if isinstance(update, dict):
            return list(update.items())
        if isinstance(update, (list, tuple)) and all(
            isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str) for t in update
        ):
            return update
        if (tuples := update_as_tuples(update)) is not None:
            return tuples
        if update is not None:
            return [("__root__", update)]
        return []


@dataclass(init=False, slots=True)
class Interrupt:
    """A question a node asked with `interrupt(value)`; answer it with `Command(resume=...)`."""

    value: Any
    id: str
    response_schema: Any = None

    def __init__(self, value: Any, id: str = "placeholder-id", *, response_schema: Any = None) -> None:
        self.value = value
        self.id = id
        self.response_schema = response_schema

    @classmethod
    def from_ns(cls, value: Any, ns: str, *, response_schema: Any = None) -> Interrupt:
        from lgnb._internal.ids import interrupt_id

        return cls(value=value, id=interrupt_id(ns, 0), response_schema=response_schema)


@dataclass(frozen=True, slots=True)
class Overwrite:
    """Write `value` to a reducer channel as is, bypassing the reducer."""

    value: Any
    type: Literal["__overwrite__"] = "__overwrite__"


@dataclass(frozen=True)
class GraphOutput(Generic[OutputT]):
    """What `invoke(..., version="v2")` returns: the output value and pending interrupts."""

    value: OutputT
    interrupts: tuple[Interrupt, ...] = ()


class StateUpdate(NamedTuple):
    """One update of `bulk_update_state`: values as if written by `as_node`."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None


class PregelTask(NamedTuple):
    """A task of a step, as `get_state()` reports it."""

    id: str
    name: str
    path: tuple[str | int | tuple, ...]
    error: Exception | None = None
    interrupts: tuple[Interrupt, ...] = ()
    state: None | RunnableConfig | StateSnapshot = None
    result: Any | None = None


class StateSnapshot(NamedTuple):
    """The state of a thread at the beginning of a step."""

    values: dict[str, Any] | Any
    next: tuple[str, ...]
    config: RunnableConfig
    metadata: CheckpointMetadata | None
    created_at: str | None
    parent_config: RunnableConfig | None
    tasks: tuple[PregelTask, ...]
    interrupts: tuple[Interrupt, ...]


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """Pause the graph and surface `value` to the caller; return the resume value.

    The first call raises `GraphInterrupt`; the loop saves a checkpoint with the
    interrupt. `Command(resume=answer)` re-runs the node from its first line and this
    call then returns `answer`. Several calls in one node are answered in order. Needs
    a checkpointer: `compile(checkpointer=InMemorySaver())` and a `thread_id`.
    """
    from lgnb.pregel._interrupt import interrupt as _interrupt

    return _interrupt(value, response_schema=response_schema)

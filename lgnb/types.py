"""The value types a LangGraph program passes to and receives from the engine.

`Send`, `Command`, `Interrupt`, `RetryPolicy`, `Overwrite`, `StateSnapshot`, ... with the
fields, equality and reprs of their LangGraph namesakes, so code and tests port by
changing the import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from datetime import timedelta
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

from typing_extensions import NotRequired, TypedDict

from lgnb._internal.constants import RESUME
from lgnb._internal.context import current_task, nested_langgraph_config
from lgnb._internal.ids import interrupt_id
from lgnb._internal.missing import MISSING
from lgnb.errors import GraphInterrupt, mark_invalid_resume

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointMetadata

__all__ = (
    "All",
    "MultitaskStrategy",
    "CachePolicy",
    "CheckpointPayload",
    "CheckpointStreamPart",
    "CheckpointTask",
    "Checkpointer",
    "Command",
    "CustomStreamPart",
    "DebugPayload",
    "DebugStreamPart",
    "Durability",
    "GraphOutput",
    "Interrupt",
    "MessagesStreamPart",
    "Overwrite",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamOptions",
    "StreamPart",
    "StreamWriter",
    "TaskPayload",
    "TaskResultPayload",
    "TasksStreamPart",
    "TimeoutPolicy",
    "TracePolicy",
    "UpdatesStreamPart",
    "ValuesStreamPart",
    "interrupt",
    "omit_payload",
)

All = Literal["*"]
"""Special value: every node (for `interrupt_before` / `interrupt_after`)."""

StreamMode = Literal[
    "values", "updates", "checkpoints", "tasks", "debug", "messages", "custom", "tools", "pregel", "lgnb:custom"
]
"""What `stream()` emits: see the engine docs for each mode's payload. LangGraph's seven
modes, plus "tools" (tool-call events, which LangGraph streams too), and lgnb's own
"pregel" (the records of `lgnb.pregel.records`) and "lgnb:custom" (custom events naming
the task that wrote them)."""

Durability = Literal["sync", "async", "exit"]
"""When checkpoints are written: before the next step starts, while it runs, or once at exit."""

MultitaskStrategy = Literal["reject", "enqueue", "interrupt"]
"""What a run does when its thread is busy (LangGraph server's names): refuse with
`ThreadBusyError`, wait for the running one, or cancel it (lgnb's `multitask=`)."""

StreamWriter = Callable[[Any], None]
"""Type of the `writer` argument a node may declare to emit `custom` stream events."""

Checkpointer = Union[None, bool, "BaseCheckpointSaver[Any]"]
"""A `BaseCheckpointSaver`, `True` (inherit the parent's, per thread), `False` (none), or None."""



class StreamOptions(TypedDict, total=False):
    """The keyword options `lgnb.run` and `lgnb.lens` hand on to `graph.stream` (the
    views add the stream modes they need and `subgraphs=True`)."""

    context: Any
    stream_mode: StreamMode | Sequence[StreamMode]
    interrupt_before: All | Sequence[str] | None
    interrupt_after: All | Sequence[str] | None
    durability: Durability | None
    output_keys: str | Sequence[str] | None
    debug: bool | None
    subgraphs: bool
    #: a RemoteGraph's: HTTP headers and extra run parameters for the server
    headers: dict[str, str] | None
    params: Any


N = TypeVar("N", bound=Hashable)
OutputT = TypeVar("OutputT")
StateT = TypeVar("StateT")


# ---------------------------------------------------------------- v2 stream parts
# What `stream(..., version="v2")` yields, one TypedDict per mode: `{"type", "ns", "data"}`
# (plus `interrupts` for values). Discriminate on `part["type"]`.


class TaskPayload(TypedDict):
    """A task starting (`tasks` mode): its id, node name, input and triggers."""

    id: str
    name: str
    input: Any
    triggers: list[str]
    metadata: NotRequired[dict[str, Any]]


class TaskResultPayload(TypedDict):
    """A task finished (`tasks` mode): error text or None, interrupts, writes by channel."""

    id: str
    name: str
    error: str | None
    interrupts: list[dict]
    result: dict[str, Any]


class CheckpointTask(TypedDict):
    """A task listed in a `CheckpointPayload`: `error`, or `result` + `interrupts`, or
    only `interrupts` (pending); `state` is the subgraph's snapshot or config, or None."""

    id: str
    name: str
    error: NotRequired[str]
    result: NotRequired[Any]
    interrupts: NotRequired[list[dict]]
    state: Any


class CheckpointPayload(TypedDict, Generic[StateT]):
    """A checkpoint (`checkpoints` mode): config, metadata, values, next nodes, tasks."""

    config: RunnableConfig | None
    metadata: CheckpointMetadata
    values: StateT
    next: list[str]
    parent_config: RunnableConfig | None
    tasks: list[CheckpointTask]


class _DebugCheckpointPayload(TypedDict, Generic[StateT]):
    step: int
    timestamp: str
    type: Literal["checkpoint"]
    payload: CheckpointPayload[StateT]


class _DebugTaskPayload(TypedDict):
    step: int
    timestamp: str
    type: Literal["task"]
    payload: TaskPayload


class _DebugTaskResultPayload(TypedDict):
    step: int
    timestamp: str
    type: Literal["task_result"]
    payload: TaskResultPayload


DebugPayload = Union[_DebugCheckpointPayload[StateT], _DebugTaskPayload, _DebugTaskResultPayload]
"""A `debug` mode event: `{"step", "timestamp", "type", "payload"}`; discriminate on `type`."""


class ValuesStreamPart(TypedDict, Generic[OutputT]):
    """`values` mode: the full state after a step, and the interrupts raised in it."""

    type: Literal["values"]
    ns: tuple[str, ...]
    data: OutputT
    interrupts: tuple[Interrupt, ...]


class UpdatesStreamPart(TypedDict):
    """`updates` mode: `{node: update}` (also `__interrupt__`, `__metadata__` keys)."""

    type: Literal["updates"]
    ns: tuple[str, ...]
    data: dict[str, Any]


class MessagesStreamPart(TypedDict):
    """`messages` mode: `(message chunk, metadata)` from a chat model inside a node."""

    type: Literal["messages"]
    ns: tuple[str, ...]
    data: tuple[Any, dict[str, Any]]


class CustomStreamPart(TypedDict):
    """`custom` mode: whatever a node passed to its `StreamWriter`."""

    type: Literal["custom"]
    ns: tuple[str, ...]
    data: Any


class CheckpointStreamPart(TypedDict, Generic[StateT]):
    """`checkpoints` mode: a `CheckpointPayload`."""

    type: Literal["checkpoints"]
    ns: tuple[str, ...]
    data: CheckpointPayload[StateT]


class TasksStreamPart(TypedDict):
    """`tasks` mode: a task starting (`TaskPayload`) or finishing (`TaskResultPayload`)."""

    type: Literal["tasks"]
    ns: tuple[str, ...]
    data: TaskPayload | TaskResultPayload


class DebugStreamPart(TypedDict, Generic[StateT]):
    """`debug` mode: a `DebugPayload`."""

    type: Literal["debug"]
    ns: tuple[str, ...]
    data: DebugPayload[StateT]


StreamPart = Union[
    ValuesStreamPart[OutputT],
    UpdatesStreamPart,
    MessagesStreamPart,
    CustomStreamPart,
    CheckpointStreamPart[StateT],
    TasksStreamPart,
    DebugStreamPart[StateT],
]
"""A v2 stream part, any mode: `{"type": mode, "ns": namespace, "data": payload}`."""


def default_retry_on(exc: Exception) -> bool:
    """Whether a failed node should be retried when no `retry_on` is given.

    Programming errors (ValueError, TypeError, ArithmeticError, ImportError, LookupError,
    NameError, SyntaxError, RuntimeError, ReferenceError, StopIteration,
    StopAsyncIteration, OSError) are not retried; HTTP 5xx errors of `requests`/`httpx`
    are; everything else is.
    """
    if isinstance(exc, ConnectionError):
        return True
    if any(k.__name__ == "HTTPStatusError" and k.__module__.startswith("httpx")
           for k in type(exc).__mro__):
        status = exc.response.status_code  # type: ignore[attr-defined]
        return 500 <= status < 600
    if type(exc).__name__ == "HTTPError" and type(exc).__module__.startswith("requests"):
        # as LangGraph: a `requests.Response` is falsy for any 4xx/5xx (`.ok`), so every
        # `raise_for_status()` error is retried (429 Too Many Requests above all)
        response = getattr(exc, "response", None)
        return (500 <= response.status_code < 600) if response else True
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


def _timeout_seconds(value: float | timedelta | None, *, field: str) -> float | None:
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise ValueError(f"TimeoutPolicy.{field} must be greater than 0, got {value!r}")
    return seconds


@dataclass(frozen=True, kw_only=True, slots=True)
class TimeoutPolicy:
    """Time limits for one attempt of a node (seconds, or a `timedelta`).

    `run_timeout` caps an attempt's wall-clock time; `idle_timeout` caps the time without
    progress, refreshed by writes, stream output and callbacks (`refresh_on="auto"`) or
    only by `runtime.heartbeat()` (`refresh_on="heartbeat"`). A limit that fires raises
    `NodeTimeoutError`. Enforced through asyncio cancellation: a sync node blocking the
    thread is stopped only when it yields control.
    """

    run_timeout: float | timedelta | None = None
    idle_timeout: float | timedelta | None = None
    refresh_on: Literal["auto", "heartbeat"] = "auto"

    @classmethod
    def coerce(cls, value: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
        """A policy with float seconds from a number, a timedelta or a policy; None when
        no limit is set. Raises ValueError for a limit <= 0 or an unknown `refresh_on`."""
        if value is None:
            return None
        if not isinstance(value, TimeoutPolicy):
            value = cls(run_timeout=value)
        if value.refresh_on not in ("auto", "heartbeat"):
            raise ValueError(
                f"TimeoutPolicy.refresh_on must be 'auto' or 'heartbeat', got {value.refresh_on!r}"
            )
        run = _timeout_seconds(value.run_timeout, field="run_timeout")
        idle = _timeout_seconds(value.idle_timeout, field="idle_timeout")
        if run is None and idle is None:
            return None
        if run == value.run_timeout and idle == value.idle_timeout and (
            type(value.run_timeout) in (float, type(None))
            and type(value.idle_timeout) in (float, type(None))
        ):
            return value
        return cls(run_timeout=run, idle_timeout=idle, refresh_on=value.refresh_on)


@dataclass(frozen=True, kw_only=True, slots=True)
class TracePolicy:
    """How a node's own trace run records its input and output.

    `process_inputs` / `process_outputs` receive the raw value and return what to record
    (e.g. a summary of a long message list); the node itself still gets and returns the
    real values. Only the node's run is affected, not child runs or the graph's run. Not
    a redaction tool: use the LangSmith client's `hide_inputs`/`hide_outputs` for secrets.
    """

    process_inputs: Callable[[Any], Any] | None = None
    process_outputs: Callable[[Any], Any] | None = None


def omit_payload(_value: Any) -> dict[str, Any]:
    """A `TracePolicy` processor that records an empty payload (keeps the span, drops the
    value)."""
    return {}


KeyFuncT = TypeVar("KeyFuncT", bound=Callable[..., Union[str, bytes]])


def _freeze(obj: Any, depth: int = 10) -> Any:
    """A hashable, order-independent stand-in for `obj` (dicts sorted, lists as tuples)."""
    from collections.abc import Mapping
    from collections.abc import Sequence as Seq

    if isinstance(obj, Hashable) or depth <= 0:
        return obj
    if isinstance(obj, Mapping):
        return tuple(sorted((k, _freeze(v, depth - 1)) for k, v in obj.items()))
    if isinstance(obj, Seq):
        return tuple(_freeze(x, depth - 1) for x in obj)
    if hasattr(obj, "tobytes"):  # numpy arrays and the like
        return (type(obj).__name__, obj.tobytes(), getattr(obj, "shape", None))
    return obj


def default_cache_key(*args: Any, **kwargs: Any) -> str | bytes:
    """The cache key of a node's input: the pickled, frozen arguments.

    Pickle is only used to *produce* bytes to hash, never to load anything.
    """
    import pickle

    return pickle.dumps((_freeze(args), _freeze(kwargs)), protocol=5, fix_imports=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class CachePolicy(Generic[KeyFuncT]):
    """Cache a node's (or task's) writes, keyed by its input.

    `key_func` maps the input to a key (default: a hash of the pickled input); `ttl` is
    the entry's lifetime in seconds (None: never expires). Needs `compile(cache=...)`.
    """

    key_func: KeyFuncT = default_cache_key  # type: ignore[assignment]
    ttl: int | None = None


class Send:
    """Run `node` in the next super-step with `arg` as its input (map-reduce fan-out)."""

    __slots__ = ("node", "arg", "timeout")

    # `timeout` may come positionally: langgraph-checkpoint's serializer rebuilds a stored
    # Send as `Send(node, arg, timeout)`
    def __init__(self, /, node: str, arg: Any, timeout: Any = None) -> None:
        self.node = node
        self.arg = arg
        # a TimeoutPolicy for the task, over the node's (checked now, not at run time)
        self.timeout = TimeoutPolicy.coerce(timeout)

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

    def __init__(
        self,
        value: Any,
        id: str = "placeholder-id",
        *,
        response_schema: Any = None,
        **deprecated_kwargs: Any,
    ) -> None:
        # `ns`, `when`, `resumable` (removed in LangGraph 0.6) are still accepted so old
        # code and saved data load; a sequence `ns` without an id gives the id it implied.
        self.value = value
        self.response_schema = response_schema
        ns = deprecated_kwargs.get("ns")
        if id == "placeholder-id" and isinstance(ns, Sequence) and ns is not None:
            from xxhash import xxh3_128_hexdigest

            self.id = xxh3_128_hexdigest("|".join(ns).encode())
        else:
            self.id = id

    @property
    def interrupt_id(self) -> str:
        """Deprecated alias of `id`."""
        import warnings

        from lgnb.warnings import LangGraphDeprecatedSinceV10

        warnings.warn(
            "`interrupt_id` is deprecated. Use `id` instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        return self.id

    @classmethod
    def from_ns(cls, value: Any, ns: str, *, response_schema: Any = None) -> Interrupt:
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

    def __getitem__(self, key: str) -> Any:
        """Deprecated dict-style access (v1 results were dicts): use `.value` / `.interrupts`."""
        _warn_dict_access("result[key]")
        if key == "__interrupt__":
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        """Deprecated `key in result`: use `.value` / `.interrupts`."""
        _warn_dict_access("key in result")
        if key == "__interrupt__":
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


def _warn_dict_access(how: str) -> None:
    import warnings

    from lgnb.warnings import LangGraphDeprecatedSinceV11

    warnings.warn(
        f"Accessing GraphOutput via `{how}` is deprecated. Use `result.value` to access the "
        "output value directly, or `result.interrupts` for interrupts.",
        LangGraphDeprecatedSinceV11,
        stacklevel=3,
    )


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
    error: BaseException | None = None  # the error the node raised, as it was raised
    interrupts: tuple[Interrupt, ...] = ()
    state: None | RunnableConfig | StateSnapshot = None
    result: Any | None = None


class CacheKey(NamedTuple):
    """Where a task's cached writes live: namespace, key, lifetime in seconds."""

    ns: tuple[str, ...]
    key: str
    ttl: int | None


@dataclass(frozen=True, slots=True)
class PregelExecutableTask:
    """A task ready to run, in LangGraph's shape: node name, input, the runnable `proc`,
    the `writes` it collects, its config, triggers, retry/cache/timeout policies, id and
    path. lgnb's loop schedules its own `Task` objects; this type is for code written
    against LangGraph's executor API."""

    name: str
    input: Any
    proc: Any
    writes: Any
    config: RunnableConfig
    triggers: Sequence[str]
    retry_policy: Sequence[RetryPolicy]
    cache_key: CacheKey | None
    id: str
    path: tuple[str | int | tuple, ...]
    writers: Sequence[Any] = ()
    subgraphs: Sequence[Any] = ()
    timeout: TimeoutPolicy | None = None


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

    With `response_schema` (a JSON schema dict, or a type pydantic can validate) the
    interrupt carries the schema, and an answer is validated against it before the node
    sees it; an invalid answer raises and is neither recorded nor consumed.
    """
    ctx = current_task()
    if nested_langgraph_config(ctx) is not None:  # in a LangGraph graph this task invoked
        from langgraph.types import interrupt as langgraph_interrupt

        return langgraph_interrupt(value, response_schema=response_schema)
    task, loop = ctx.task, ctx.loop
    if ctx.resume is None:
        ctx.resume, _ = loop.resume_for(task)
    idx = ctx.interrupt_index
    ctx.interrupt_index += 1
    adapter = _schema_adapter(response_schema)
    if adapter is not None:
        loop.allow_response_schema(response_schema)
    answers = ctx.resume
    if idx < len(answers):
        validated = _validate_answer(adapter, answers[idx])  # an invalid answer is not recorded
        task.writes.append((RESUME, answers[: idx + 1]))
        return validated
    value_null = loop.peek_null_resume()
    if value_null is not MISSING:
        validated = _validate_answer(adapter, value_null)  # an invalid answer is not consumed
        loop.take_null_resume()
        answers.append(value_null)
        task.writes.append((RESUME, list(answers)))
        return validated
    schema = None
    if response_schema is not None:
        schema = response_schema if isinstance(response_schema, dict) else adapter.json_schema()
    raise GraphInterrupt(
        (Interrupt(value=value, id=interrupt_id(task.ns, len(answers)), response_schema=schema),)
    )


def _schema_adapter(schema: Any) -> Any:
    """A pydantic `TypeAdapter` for a type schema; None for no schema or a JSON-schema dict."""
    if schema is None or isinstance(schema, dict):
        return None
    from pydantic import TypeAdapter  # only when a node asks for validation

    return TypeAdapter(schema)


def _validate_answer(adapter: Any, value: Any) -> Any:
    """The resume value checked against `response_schema`; a failure is flagged so that
    `lgnb.errors.is_invalid_resume` tells it from other validation errors."""
    if adapter is None:
        return value
    from pydantic import ValidationError

    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        mark_invalid_resume(exc)
        raise


PLAIN_DATA_TYPES = (
    "Send", "Command", "Interrupt", "Overwrite", "TimeoutPolicy", "StateSnapshot", "PregelTask",
)
"""lgnb's value types that checkpoints may hold: plain data, as LangGraph's own are."""


def _register_plain_data() -> None:
    """Tell langgraph-checkpoint's serializer that lgnb's value types are plain data, as
    LangGraph's are: without this, a saver in its default mode warns on every lgnb value
    it loads (an interrupt, a Send), and a strict one refuses it."""
    try:
        from langgraph.checkpoint.serde import _msgpack
    except ImportError:  # pragma: no cover - very old langgraph-checkpoint
        return
    ours = frozenset(("lgnb.types", name) for name in PLAIN_DATA_TYPES)
    current = getattr(_msgpack, "SAFE_MSGPACK_TYPES", None)
    if isinstance(current, frozenset) and not ours <= current:
        _msgpack.SAFE_MSGPACK_TYPES = current | ours


_register_plain_data()

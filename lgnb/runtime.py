"""`Runtime`: what a node may ask for besides its state — context, store, stream writer.

A node declares `runtime: Runtime[MyContext]` and receives the run's `context=` value
(validated against the graph's `context_schema`), the store, the custom-stream writer,
a `heartbeat` for idle timeouts, and the run's `RunControl` (cooperative draining, and
`cancel_requested` once the run was cancelled).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lgnb._internal.context import ExecutionInfo, current_task, nested_langgraph_config
from lgnb._internal.frozen import slot_builder
from lgnb.types import StreamWriter

if TYPE_CHECKING:  # loaded on first use (`__getattr__`): langgraph_sdk is optional
    from langgraph_sdk.auth.types import BaseUser

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


_GATE = threading.Lock()
"""Guards every control's cancel flag and save count (held for a few instructions; one
lock for all, so a control stays plain data that copies and compares as before)."""


class RunControl:
    """Run-scoped control: ask a running graph to stop, cleanly or at once.

    Create one per run and pass it to `stream(..., control=...)` / read it from
    `runtime.control`. Safe from any thread.

    * `request_drain()` (LangGraph's): the run stops before its next super-step with
      `GraphDrained`, its last checkpoint intact; resume the thread later.
    * `request_cancel()` (lgnb's): the run is abandoned. From the moment it returns the
      run writes nothing more to its thread — no checkpoint, no pending write, no node
      cache entry — so a new run on the thread is never overwritten by the old one. A
      node still running is not killed (Python cannot stop a thread): it runs to its
      end and its writes are thrown away; it can read `runtime.cancel_requested` to
      stop early. The run's stream ends with `asyncio.CancelledError`.

    A drained or cancelled control stays so; do not reuse it.
    """

    __slots__ = ("_drain_reason", "_cancel_reason", "_saving", "_on_cancel")

    def __init__(self) -> None:
        self._drain_reason: str | None = None
        self._cancel_reason: str | None = None
        # saves under way, per thread (ident -> count); None until the first save
        self._saving: dict[int, int] | None = None
        # called once the run is cancelled and has no save under way (lease release)
        self._on_cancel: list[Callable[[], None]] | None = None

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

    def request_cancel(self, reason: str = "request_cancel() was called", *, timeout: float = 30.0) -> None:
        """Cancel the run: once this returns, it writes nothing more to its thread.

        A save already under way in another thread is waited for (up to `timeout`
        seconds) before returning; one under way on the calling thread's own event loop
        (an async saver's call in flight) cannot be waited for here, so the run's lease
        on the thread is released only when it ends. Idempotent; the first `reason` stays.
        """
        me = threading.get_ident()
        deadline = time.monotonic() + timeout
        with _GATE:
            if self._cancel_reason is None:
                self._cancel_reason = reason
        while True:
            with _GATE:
                others = any(n for t, n in (self._saving or {}).items() if t != me)
            if not others or time.monotonic() >= deadline:
                break
            time.sleep(0.002)
        self._settle()

    @property
    def cancel_requested(self) -> bool:
        """Whether `request_cancel` was called: a node may check it to stop early (what
        it returns is discarded anyway)."""
        return self._cancel_reason is not None

    @property
    def cancel_reason(self) -> str | None:
        """The reason given to `request_cancel`, or None."""
        return self._cancel_reason

    # -- the engine's side: every checkpoint / write save passes through these ----------
    def _begin_save(self, key: Any = None) -> bool:
        """A save may start (False once cancelled: the run writes nothing more).

        `key` names who carries it out (default: this thread); a save queued for the
        background writer (durability "async") has a key of its own, so a cancel waits
        for it whichever thread asks."""
        with _GATE:
            if self._cancel_reason is not None:
                return False
            saving = self._saving
            if saving is None:
                saving = self._saving = {}
            me = threading.get_ident() if key is None else key
            saving[me] = saving.get(me, 0) + 1
            return True

    def _end_save(self, key: Any = None) -> None:
        """A save admitted by `_begin_save` (with the same `key`) ended (done or failed)."""
        with _GATE:
            saving = self._saving
            assert saving is not None
            me = threading.get_ident() if key is None else key
            left = saving[me] - 1
            if left:
                saving[me] = left
            else:
                del saving[me]
            cancelled = self._cancel_reason is not None
        if cancelled:
            self._settle()

    def _when_cancelled(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the run is cancelled and no save of it is under way (at
        once if that is already so)."""
        with _GATE:
            if self._on_cancel is None:
                self._on_cancel = []
            self._on_cancel.append(callback)
        if self._cancel_reason is not None:
            self._settle()

    def _settle(self) -> None:
        with _GATE:
            if self._cancel_reason is None or self._saving or not self._on_cancel:
                return
            callbacks, self._on_cancel = self._on_cancel, None
        for callback in callbacks:
            callback()


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
        if overrides.keys() == {"execution_info"}:
            return self._with_execution_info(overrides["execution_info"])
        return replace(self, **overrides)

    def _with_execution_info(self, info: ExecutionInfo | None) -> Runtime[ContextT]:
        """A copy carrying `info`: every node's runtime, so built without `replace`'s
        field introspection or the frozen `__init__`'s per-field `object.__setattr__`."""
        return _build_runtime(
            self.context, self.store, self.stream_writer, self.heartbeat, self.previous,
            info, self.server_info, self.control,
        )

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

    @property
    def cancel_requested(self) -> bool:
        """Whether the run was cancelled (`RunControl.request_cancel`, `lgnb.run`'s
        `cancel()`, or another run on the thread with `multitask="interrupt"`). A node
        that sees it may stop early: nothing it returns is saved any more."""
        return bool(getattr(self.control, "cancel_requested", False))


_build_runtime = slot_builder(Runtime)

DEFAULT_RUNTIME: Runtime[Any] = Runtime()
"""A runtime with no context, store, writer, execution info or control."""


def get_runtime(context_schema: type[ContextT] | None = None) -> Runtime[ContextT]:
    """The Runtime of the node currently running (call it from inside a node). In a node
    of a graph LangGraph compiled that an lgnb node invokes, that node's, as LangGraph's
    `get_runtime()` gives it (its execution info, namespace and stream writer)."""
    ctx = current_task()
    nested = nested_langgraph_config(ctx)
    if nested is not None:
        return nested["configurable"]["__pregel_runtime"]
    return ctx.task_runtime()

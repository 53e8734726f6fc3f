"""`StreamTransformer`: the extension point of v3 run streams.

A transformer watches the protocol events of a run (`process`, in registration order)
and builds *projections*: the dict returned by `init()`, whose `StreamChannel`s the mux
binds, closes and fails for it. A transformer with `_native = True` also has its
projection keys set as attributes of the run stream (`run.values`, `run.messages`).

Sync lane vs async lane: a transformer that overrides `aprocess` / `afinalize` / `afail`,
or sets `requires_async`, needs `astream_events`; the mux refuses it under
`stream_events` at registration (unless it sets `supports_sync`). `schedule(coro)` ties
async side work to the run: the mux awaits it before finalizing, cancels it on failure.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Any, ClassVar, Literal

from lgnb.stream._event import ProtocolEvent

__all__ = ("StreamTransformer", "needs_async_lane")

_log = logging.getLogger("lgnb.stream")


class StreamTransformer(ABC):
    """Observes a run's protocol events and builds typed projections of them.

    Class attributes:
    - `required_stream_modes`: the stream modes the graph must emit for this
      transformer; a v3 run asks the graph for the union over its transformers.
    - `before_builtins`: register ahead of the built-in transformers (for transformers
      that rewrite event content, e.g. redaction, before it is snapshotted).
    - `requires_async` / `supports_sync`: see the module docstring.

    `scope` is the namespace of the mux the transformer belongs to (`()` at the root);
    factories are called as `factory(scope)`.
    """

    requires_async: ClassVar[bool] = False
    supports_sync: ClassVar[bool] = False
    required_stream_modes: ClassVar[tuple[str, ...]] = ()
    before_builtins: ClassVar[bool] = False

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self.scope: tuple[str, ...] = scope

    @abstractmethod
    def init(self) -> dict[str, Any]:
        """The projection: name -> value (usually a `StreamChannel`)."""

    def _on_register(self, mux: Any) -> None:  # noqa: B027 - an optional hook
        """Called once the mux has wired this transformer in (a hook for subclasses)."""

    def process(self, event: ProtocolEvent) -> bool:
        """See one event (sync lane). Return False to keep it out of the main event log."""
        raise NotImplementedError(f"{type(self).__name__} must override process() or aprocess()")

    async def aprocess(self, event: ProtocolEvent) -> bool:
        """See one event (async lane); the pipeline waits for it. Defaults to `process`."""
        return self.process(event)

    def finalize(self) -> None:  # noqa: B027 - an optional hook
        """The run ended normally (sync lane). Projection channels are closed for you."""

    async def afinalize(self) -> None:
        """The run ended normally (async lane); scheduled work has been awaited."""
        self.finalize()

    def fail(self, err: BaseException) -> None:  # noqa: B027 - an optional hook
        """The run ended with `err` (sync lane). Projection channels are failed for you."""

    async def afail(self, err: BaseException) -> None:
        """The run ended with `err` (async lane); scheduled work has been cancelled."""
        self.fail(err)

    def schedule(
        self, coro: Coroutine[Any, Any, Any], *, on_error: Literal["log", "raise"] = "log"
    ) -> asyncio.Task[Any]:
        """Run `coro` as part of this run: awaited before `afinalize`, cancelled on failure.

        `on_error="log"` logs an exception and carries on; `"raise"` makes the run fail
        with it when the mux closes. Needs a running event loop (`astream_events`).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{type(self).__name__}.schedule() requires a running event loop; this "
                "transformer must run under astream(), not stream(). Set "
                "requires_async=True on the class so this fails at registration rather "
                "than at first event."
            ) from None
        task = asyncio.create_task(_logged(coro) if on_error == "log" else coro)
        tasks = self._scheduled_task_set()
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    def _scheduled_task_set(self) -> set[asyncio.Task[Any]]:
        """The tasks `schedule` started and that are still running (created lazily, so
        subclasses need not call `super().__init__`)."""
        tasks = self.__dict__.get("_stream_scheduled_tasks")
        if tasks is None:
            tasks = self.__dict__["_stream_scheduled_tasks"] = set()
        return tasks


async def _logged(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coro
    except asyncio.CancelledError:
        raise
    except BaseException:  # noqa: BLE001 - logged, per schedule(on_error="log")
        _log.exception("Scheduled StreamTransformer task failed")
        return None


def needs_async_lane(transformer: StreamTransformer) -> bool:
    """Whether `transformer` can only run under `astream_events`."""
    if transformer.requires_async:
        return True
    if transformer.supports_sync:
        return False
    cls = type(transformer)
    # the defaults are those of the base it was written against: lgnb's, or LangGraph's
    # (LangChain's agent transformers subclass `langgraph.stream.StreamTransformer`)
    base = next((k for k in cls.__mro__ if k.__name__ == "StreamTransformer"), StreamTransformer)
    return any(
        getattr(cls, name) is not getattr(base, name)
        for name in ("aprocess", "afinalize", "afail")
    )

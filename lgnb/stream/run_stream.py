"""Run streams: what `stream_events(version="v3")` / `astream_events(version="v3")` return.

A run stream owns a `StreamMux` and the graph's stream iterator. Nothing runs in the
background: iterating any projection (`run.values`, `run.messages`, `iter(run)`, ...)
pulls one graph event at a time through the mux (the *pump*), so the caller's loop drives
the run. `run.output` / `interrupted` / `interrupts` drive it to the end (on the async
lane they are coroutine methods). `abort()` (or leaving a `with` block) stops it early,
closing the graph iterator so running nodes and subgraphs are cancelled.

Subgraph handles (`SubgraphRunStream`) are run streams over a child mux that the
`SubgraphTransformer` feeds; their pump is the root's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, NoReturn

from lgnb.stream._event import ProtocolEvent, from_stream_part
from lgnb.stream._mux import StreamMux
from lgnb.stream.stream_channel import StreamChannel, is_stream_channel

if TYPE_CHECKING:
    from lgnb.stream.transformers import LifecyclePayload, SubgraphStatus

__all__ = (
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "GraphRunStream",
    "SubgraphRunStream",
)


class _RunState:
    """What sync and async run streams share: projections as attributes, the run's
    result (last own-level `values`, interrupts), errors."""

    values: StreamChannel[dict[str, Any]]
    messages: StreamChannel[Any]
    lifecycle: StreamChannel[LifecyclePayload]
    subgraphs: StreamChannel[Any]
    updates: StreamChannel[dict[str, Any]]
    custom: StreamChannel[Any]
    checkpoints: StreamChannel[dict[str, Any]]
    debug: StreamChannel[dict[str, Any]]
    tasks: StreamChannel[dict[str, Any]]

    def _setup(self, mux: StreamMux) -> None:
        self._mux = mux
        self.extensions: Mapping[str, Any] = MappingProxyType(mux.extensions)
        self._exhausted = False
        self._latest: dict[str, Any] | None = None
        self._interrupted = False
        self._interrupts: list[Any] = []
        self._scope_list = list(mux.scope)
        for key in mux.native_keys:
            setattr(self, key, mux.extensions[key])

    def __getattr__(self, name: str) -> NoReturn:
        # only reached for names that are not set: say which projections exist
        mux = self.__dict__.get("_mux")
        known = ", ".join(sorted(mux.native_keys)) if mux is not None else ""
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r} "
            f"(registered projections: {known or 'none'})"
        )

    def _observe_event(self, event: ProtocolEvent) -> None:
        """Track the run's own-level `values` events: the output and the interrupts."""
        if event["method"] != "values":
            return
        params = event["params"]
        if params["namespace"] != self._scope_list:
            return
        self._latest = params["data"]
        if interrupts := params.get("interrupts", ()):
            self._interrupted = True
            self._interrupts.extend(interrupts)

    def _raise_if_failed(self) -> None:
        if (err := self._mux._events._error) is not None:
            raise err


class GraphRunStream(_RunState):
    """A sync v3 run: iterate its projections (or itself, for raw protocol events)."""

    def __init__(self, graph_iter: Iterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True) -> None:
        """`graph_iter`: the graph's v2 stream parts (None for a handle driven by an
        outer run); `wire_pump=False` keeps a pump inherited from a parent mux."""
        self._graph_iter = graph_iter
        self._setup(mux)
        if wire_pump:
            mux.bind_pump(self._pump_next)

    def _pump_next(self) -> bool:
        """Pull one graph event through the mux; False once the graph is done or failed."""
        if self._exhausted or self._graph_iter is None:
            return False
        try:
            event = from_stream_part(next(self._graph_iter))
            self._observe_event(event)
            self._mux.push(event)
            return True
        except StopIteration:
            self._exhausted = True
            self._mux.close()
            return False
        except Exception as exc:  # noqa: BLE001 - the graph or a transformer failed
            self._exhausted = True
            self._mux.fail(exc)
            return False

    def _finish(self) -> None:
        while self._pump_next():
            pass
        self._raise_if_failed()

    def abort(self) -> None:
        """Stop the run now (idempotent): the graph iterator is closed, the mux closed."""
        if self._exhausted:
            return
        self._exhausted = True
        graph_iter, self._graph_iter = self._graph_iter, None
        close = getattr(graph_iter, "close", None)
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001 - stopping anyway
                pass
        try:
            self._mux.close()
        except Exception:  # noqa: BLE001 - stopping anyway
            pass

    def __enter__(self) -> GraphRunStream:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.abort()

    @property
    def output(self) -> dict[str, Any] | None:
        """Run to the end; the last state at this run's level (raises the run's error)."""
        self._finish()
        return self._latest

    @property
    def interrupted(self) -> bool:
        """Run to the end; whether it stopped at an interrupt."""
        self._finish()
        return self._interrupted

    @property
    def interrupts(self) -> list[Any]:
        """Run to the end; the interrupts it stopped at."""
        self._finish()
        return self._interrupts

    def __iter__(self) -> Iterator[ProtocolEvent]:
        """The raw protocol events of the run, as logged by the mux."""
        return iter(self._mux._events)

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """`(name, item)` from several projections, in the order the items arrived.

        The named channels are subscribed for the duration of the iteration.
        """
        channels: dict[str, StreamChannel[Any]] = {}
        try:
            for name in names:
                ch = self.extensions[name]
                if not is_stream_channel(ch):
                    raise TypeError(
                        f"interleave() requires StreamChannel projections, got "
                        f"{type(ch).__name__} for {name!r}"
                    )
                if ch._is_async is None:
                    raise TypeError(
                        f"StreamChannel {name!r} has not been bound yet. "
                        "Register the transformer with a StreamMux first."
                    )
                if ch._is_async:
                    raise TypeError(
                        f"StreamChannel {name!r} is bound to async mode — sync interleave() "
                        "cannot consume async channels."
                    )
                if ch._subscribed:
                    raise RuntimeError(
                        f"StreamChannel {name!r} already has a subscriber; use .tee(n) for fan-out."
                    )
                ch._subscribed = True
                channels[name] = ch
            live = dict(channels)
            while live:
                first: tuple[int, str] | None = None
                for name, ch in list(live.items()):
                    if ch._items:
                        stamp = ch._items[0][0]
                        if first is None or stamp < first[0]:
                            first = (stamp, name)
                    elif ch._closed:
                        if ch._error is not None:
                            raise ch._error
                        del live[name]
                if first is not None:
                    yield first[1], live[first[1]]._items.popleft()[1]
                    continue
                pump = self._mux._pump_fn
                if pump is not None and pump():
                    continue
                # nothing more will come: finish the closed ones, stop on the rest
                for name, ch in list(live.items()):
                    if not ch._items and ch._closed:
                        if ch._error is not None:
                            raise ch._error
                        del live[name]
                if not any(ch._items for ch in live.values()):
                    break
        finally:
            for ch in channels.values():
                ch._subscribed = False


class AsyncGraphRunStream(_RunState):
    """An async v3 run. Cursors share one pump: one task pulls from the graph at a time,
    the others wait for its step and then look at their own queues."""

    def __init__(
        self, graph_aiter: AsyncIterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True
    ) -> None:
        self._graph_aiter = graph_aiter
        self._setup(mux)
        self._pump_cond = asyncio.Condition()
        self._pumping = False
        self._anext_task: asyncio.Future[Any] | None = None
        self._aborting = False
        if wire_pump:
            mux.bind_apump(self._apump_next)

    async def _apump_next(self) -> bool:
        """Pull one graph event (or wait for the task that is pulling one)."""
        async with self._pump_cond:
            if self._exhausted or self._graph_aiter is None:
                return False
            if self._pumping:
                await self._pump_cond.wait()
                return not self._exhausted
            self._pumping = True
        try:
            # pulled in a child task, so `abort()` can cancel a pull in flight (and with
            # it the running nodes); `aclose()` cannot while the generator is running
            self._anext_task = asyncio.ensure_future(self._graph_aiter.__anext__())
            try:
                part = await self._anext_task
            except asyncio.CancelledError:
                if self._aborting:
                    self._exhausted = True
                    return False
                self._anext_task.cancel()
                raise
            except StopAsyncIteration:
                self._exhausted = True
                await self._mux.aclose()
                return False
            except Exception as exc:  # noqa: BLE001 - delivered through the projections
                self._exhausted = True
                await self._mux.afail(exc)
                return False
            finally:
                self._anext_task = None
            event = from_stream_part(part)
            self._observe_event(event)
            try:
                await self._mux.apush(event)
            except Exception as exc:  # noqa: BLE001 - a transformer failed: the run fails
                self._exhausted = True
                await self._mux.afail(exc)
                return False
            return True
        finally:
            async with self._pump_cond:
                self._pumping = False
                self._pump_cond.notify_all()

    async def abort(self) -> None:
        """Stop the run now (idempotent): a pull in flight is cancelled, the graph
        iterator closed, the mux closed."""
        async with self._pump_cond:
            if self._exhausted:
                return
            self._exhausted = True
            self._aborting = True
            graph_aiter, self._graph_aiter = self._graph_aiter, None
            pulling = self._anext_task
            self._pump_cond.notify_all()
        if pulling is not None and not pulling.done():
            pulling.cancel()
            try:
                await pulling
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping anyway
                pass
        aclose = getattr(graph_aiter, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception:  # noqa: BLE001 - stopping anyway
                pass
        try:
            await self._mux.aclose()
        except Exception:  # noqa: BLE001 - stopping anyway
            pass

    async def __aenter__(self) -> AsyncGraphRunStream:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.abort()

    async def _finish(self) -> None:
        while await self._apump_next():
            pass
        self._raise_if_failed()

    async def output(self) -> dict[str, Any] | None:
        """Run to the end; the last state at this run's level (`await run.output()`)."""
        await self._finish()
        return self._latest

    async def interrupted(self) -> bool:
        """Run to the end; whether it stopped at an interrupt."""
        await self._finish()
        return self._interrupted

    async def interrupts(self) -> list[Any]:
        """Run to the end; the interrupts it stopped at."""
        await self._finish()
        return self._interrupts

    def __aiter__(self) -> AsyncIterator[ProtocolEvent]:
        """The raw protocol events of the run, as logged by the mux."""
        return self._mux._events.__aiter__()


class _SubgraphHandle:
    """What a subgraph handle adds: where it runs and how it ended (set in place by
    `SubgraphTransformer`)."""

    path: tuple[str, ...]
    graph_name: str | None
    trigger_call_id: str | None
    status: SubgraphStatus
    error: str | None
    _seen_terminal: bool

    def _start_handle(self, path: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None) -> None:
        self.path = path
        self.graph_name = graph_name
        self.trigger_call_id = trigger_call_id
        self.status = "started"
        self.error = None
        self._seen_terminal = False

    def _parent_may_pump(self) -> bool:
        mux: StreamMux = self._mux  # type: ignore[attr-defined]
        return not (self._exhausted or self._seen_terminal or mux._events._closed)  # type: ignore[attr-defined]


class SubgraphRunStream(GraphRunStream, _SubgraphHandle):
    """A subgraph of a sync run, as discovered: its own projections, the root's pump."""

    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        self._parent_pump_fn: Callable[[], bool] | None = mux._pump_fn
        super().__init__(None, mux, wire_pump=False)
        self._start_handle(path, graph_name, trigger_call_id)

    def _pump_next(self) -> bool:
        if not self._parent_may_pump() or self._parent_pump_fn is None:
            return False
        return self._parent_pump_fn()


class AsyncSubgraphRunStream(AsyncGraphRunStream, _SubgraphHandle):
    """A subgraph of an async run, as discovered: its own projections, the root's pump."""

    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        self._parent_apump_fn: Callable[[], Awaitable[bool]] | None = mux._apump_fn
        super().__init__(None, mux, wire_pump=False)
        self._start_handle(path, graph_name, trigger_call_id)

    async def _apump_next(self) -> bool:
        if not self._parent_may_pump() or self._parent_apump_fn is None:
            return False
        return await self._parent_apump_fn()

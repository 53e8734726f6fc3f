"""`StreamMux`: routes a run's protocol events through its transformers into one log.

Each event passes every transformer in order (a transformer may keep it out of the main
log by returning False, but the later ones still see it); then it is appended to the
main event log (`_events`), which `iter(run)` drains. The root mux numbers logged events
(`seq`). Named `StreamChannel`s found in projections mirror their pushes into the log.

A mux is built from transformer *factories* (`factory(scope)`) so a subgraph handle can
get a fresh pipeline scoped to its namespace (`_make_child`), sharing the root's pump.
Transformers flagged `before_builtins` are registered first, order kept within each lane.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from lgnb.stream._event import ProtocolEvent
from lgnb.stream._transformer import StreamTransformer, needs_async_lane
from lgnb.stream.stream_channel import StreamChannel, is_stream_channel

__all__ = ("StreamMux", "TransformerFactory")

TransformerFactory = Callable[[tuple[str, ...]], StreamTransformer]


class StreamMux:
    """The event pipeline of one run stream (or of one subgraph handle)."""

    def __init__(
        self,
        transformers: list[StreamTransformer] | None = None,
        *,
        is_async: bool = False,
        factories: list[TransformerFactory] | None = None,
        scope: tuple[str, ...] = (),
        _assign_seq: bool = True,
    ) -> None:
        """`factories` are cloned into subgraph scopes; pre-built `transformers` are
        registered on this mux only."""
        self.is_async = is_async
        self.scope = scope
        self._assign_seq = _assign_seq
        self._events: StreamChannel[ProtocolEvent] = StreamChannel()
        self._events._bind(is_async=is_async)
        self._events._bind_mux(self)
        self._transformers: list[StreamTransformer] = []
        self._channels: list[StreamChannel[Any]] = []
        self._seq = 0
        self._push_seq = 0
        self.extensions: dict[str, Any] = {}
        self.native_keys: set[str] = set()
        self._projection_owners: dict[str, str] = {}
        self._transformer_by_key: dict[str, StreamTransformer] = {}
        self._factories = list(factories) if factories is not None else None
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        if factories is not None:
            self._register_all(factory(scope) for factory in factories)
        self._register_all(transformers or ())

    # ---- registration
    def _register_all(self, transformers: Iterable[StreamTransformer]) -> None:
        built = list(transformers)
        for t in [t for t in built if getattr(t, "before_builtins", False)] + [
            t for t in built if not getattr(t, "before_builtins", False)
        ]:
            self._register(t)

    def _register(self, transformer: StreamTransformer) -> None:
        """Wire one transformer: its projection merged, its channels bound (and the
        named ones mirrored into the log)."""
        name = type(transformer).__name__
        if not self.is_async and needs_async_lane(transformer):
            raise RuntimeError(
                f"{name} requires an async run — it overrides aprocess/afinalize/afail or "
                "sets requires_async=True. Use astream(), not stream()."
            )
        projection = transformer.init()
        if not isinstance(projection, dict):
            raise TypeError(
                f"StreamTransformer.init() must return a dict, got {type(projection).__name__}"
            )
        clashes = sorted(set(projection) & set(self.extensions))
        if clashes:
            owners = ", ".join(f"{k!r} (owned by {self._projection_owners[k]})" for k in clashes)
            raise ValueError(
                f"Transformer {name} returned projection keys that conflict with "
                f"already-registered keys: {owners}"
            )
        native = bool(getattr(transformer, "_native", False))
        self._transformers.append(transformer)
        for value in projection.values():
            if is_stream_channel(value):
                self._adopt(value, native=native)
        self.extensions.update(projection)
        for key in projection:
            self._projection_owners[key] = name
            self._transformer_by_key[key] = transformer
        if native:
            self.native_keys.update(projection)
        transformer._on_register(self)

    def _adopt(self, channel: StreamChannel[Any], *, native: bool) -> None:
        channel._bind(is_async=self.is_async)
        channel._bind_mux(self)
        self._channels.append(channel)
        if channel.name is not None:
            method = channel.name if native else f"custom:{channel.name}"
            channel._wire(functools.partial(self._forward, method))

    def transformer_by_key(self, key: str) -> StreamTransformer | None:
        """The transformer whose projection holds `key`."""
        return self._transformer_by_key.get(key)

    def _next_push_seq(self) -> int:
        self._push_seq += 1
        return self._push_seq

    # ---- pumps and nesting
    def bind_pump(self, fn: Callable[[], bool]) -> None:
        """Let every cursor of this mux (log, projections, message streams) pull events."""
        self._pump_fn = fn
        for ch in (self._events, *self._channels):
            ch._request_more = fn
        for t in self._transformers:
            if (bind := getattr(t, "_bind_pump", None)) is not None:
                bind(fn)

    def bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        """Async twin of `bind_pump`."""
        self._apump_fn = fn
        for ch in (self._events, *self._channels):
            ch._arequest_more = fn
        for t in self._transformers:
            if (bind := getattr(t, "_bind_apump", None)) is not None:
                bind(fn)

    def _make_child(self, scope: tuple[str, ...]) -> StreamMux:
        """A mux with fresh transformers from the same factories, scoped to `scope`,
        driven by this mux's pump."""
        if self._factories is None:
            raise RuntimeError(
                "StreamMux._make_child requires the mux to be constructed with "
                "`factories=`; pre-built transformers can't be cloned to a new scope."
            )
        child = StreamMux(
            factories=self._factories, is_async=self.is_async, scope=scope, _assign_seq=False
        )
        if self._pump_fn is not None:
            child.bind_pump(self._pump_fn)
        if self._apump_fn is not None:
            child.bind_apump(self._apump_fn)
        return child

    # ---- events
    def _log(self, event: ProtocolEvent) -> None:
        if self._assign_seq:
            self._seq += 1
            event["seq"] = self._seq
        self._events.push(event)

    def push(self, event: ProtocolEvent) -> None:
        """Pass `event` through every transformer, then log it unless one suppressed it."""
        keep = True
        for t in self._transformers:
            if not t.process(event):
                keep = False
        if keep:
            self._log(event)

    async def apush(self, event: ProtocolEvent) -> None:
        """Async lane of `push`: each transformer's `aprocess` is awaited in turn."""
        keep = True
        for t in self._transformers:
            if not await t.aprocess(event):
                keep = False
        if keep:
            self._log(event)

    def _forward(self, method: str, item: Any) -> None:
        """Log a named channel's push (not passed through transformers: no recursion)."""
        self._log(
            {
                "type": "event",
                "method": method,
                "params": {"namespace": [], "timestamp": int(time.time() * 1000), "data": item},
            }
        )

    # ---- end of run
    def _end_channels(self, err: BaseException | None) -> None:
        for ch in self._channels:
            if not ch._closed:
                ch.close() if err is None else ch.fail(err)
        if not self._events._closed:
            self._events.close() if err is None else self._events.fail(err)

    def close(self) -> None:
        """Finalize every transformer (all of them, even if one raises), close every
        channel and the log, then re-raise the first `finalize` error."""
        first: BaseException | None = None
        for t in self._transformers:
            try:
                t.finalize()
            except BaseException as exc:  # noqa: BLE001 - re-raised after cleanup
                first = first or exc
        self._end_channels(None)
        if first is not None:
            raise first

    def fail(self, err: BaseException) -> None:
        """Tell every transformer the run failed; fail every channel and the log."""
        for t in self._transformers:
            try:
                t.fail(err)
            except BaseException:  # noqa: BLE001 - the run's error is the one reported
                pass
        self._end_channels(err)

    def _scheduled(self) -> list[asyncio.Task[Any]]:
        return [
            task
            for t in self._transformers
            for task in t.__dict__.get("_stream_scheduled_tasks", ())
            if not task.done()
        ]

    async def aclose(self) -> None:
        """Async lane of `close`: scheduled work is awaited first (its first error,
        under `on_error="raise"`, is raised)."""
        pending = self._scheduled()
        if pending:
            results = await asyncio.gather(*pending, return_exceptions=True)
            for r in results:
                if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
                    raise r
        first: BaseException | None = None
        for t in self._transformers:
            try:
                await t.afinalize()
            except BaseException as exc:  # noqa: BLE001 - re-raised after cleanup
                first = first or exc
        self._end_channels(None)
        if first is not None:
            raise first

    async def afail(self, err: BaseException) -> None:
        """Async lane of `fail`: scheduled work is cancelled and awaited first."""
        pending = self._scheduled()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for t in self._transformers:
            try:
                await t.afail(err)
            except BaseException:  # noqa: BLE001 - the run's error is the one reported
                pass
        self._end_channels(err)

"""`StreamChannel`: one projection of a v3 run — a single-consumer queue the caller drains.

A transformer pushes items; the one subscriber iterates them. Nothing runs in the
background: when the queue is empty the cursor asks the run's *pump* for one more graph
event (`_request_more` / `_arequest_more`, set by the run stream), so the caller's loop is
what drives the graph and memory stays bounded by the caller's pace.

A channel is bound once to the sync or the async lane (by the mux that registers it) and
then offers only that iteration protocol. Items pushed before anyone subscribed are
dropped (nobody could read them), except that a *named* channel forwards every push to
its mux's event log as a protocol event (`method` = the name, or `custom:<name>` for
channels of non-native transformers).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from lgnb.stream._mux import StreamMux

__all__ = ("StreamChannel", "is_stream_channel")

T = TypeVar("T")


class StreamChannel(Generic[T]):
    """A drainable, single-subscriber queue, optionally mirrored into the run's event log."""

    def __init__(self, name: str | None = None, *, maxlen: int | None = None) -> None:
        """`name`: forward every push to the mux's event log under that method.
        `maxlen`: accepted for LangGraph compatibility; the caller-driven pump already
        bounds the queue."""
        if maxlen is not None and maxlen <= 0:
            raise ValueError("StreamChannel maxlen must be a positive int or None")
        self.name = name
        self._maxlen = maxlen
        # (arrival stamp, item): the stamp orders items across channels (`interleave`)
        self._items: deque[tuple[int, T]] = deque()
        self._closed = False
        self._error: BaseException | None = None
        self._is_async: bool | None = None
        self._subscribed = False
        self._request_more: Callable[[], bool] | None = None
        self._arequest_more: Callable[[], Awaitable[bool]] | None = None
        self._wire_fn: Callable[[T], None] | None = None
        self._mux: StreamMux | None = None

    # ---- wiring (done by the mux)
    def _bind(self, *, is_async: bool) -> None:
        """Fix the lane this channel is iterated on; once."""
        if self._is_async is not None:
            raise RuntimeError("StreamChannel is already bound to a lane (sync or async)")
        self._is_async = is_async

    def _bind_mux(self, mux: StreamMux) -> None:
        self._mux = mux

    def _wire(self, fn: Callable[[T], None]) -> None:
        """Install the function that mirrors each push into the mux's event log."""
        self._wire_fn = fn

    # ---- producer side
    def push(self, item: T) -> None:
        """Queue `item` for the subscriber (if any) and forward it when wired."""
        if self._subscribed:
            if self._closed:
                raise RuntimeError("Cannot push to a closed StreamChannel")
            stamp = self._mux._next_push_seq() if self._mux is not None else 0
            self._items.append((stamp, item))
        if self._wire_fn is not None:
            self._wire_fn(item)

    def close(self) -> None:
        """No more items: the cursor ends once the queue is drained."""
        self._closed = True

    def fail(self, err: BaseException) -> None:
        """No more items: the cursor raises `err` once the queue is drained."""
        self._error = err
        self._closed = True

    # ---- consumer side
    def _subscribe(self, *, is_async: bool) -> None:
        if self._is_async is None:
            raise TypeError(
                "StreamChannel has not been bound yet. "
                "Register the transformer with a StreamMux first."
            )
        if self._is_async and not is_async:
            raise TypeError("This StreamChannel is bound to async mode — use 'async for' instead.")
        if is_async and not self._is_async:
            raise TypeError("This StreamChannel is bound to sync mode — use 'for' instead.")
        if self._subscribed:
            raise RuntimeError(
                "StreamChannel already has a subscriber; use "
                f"{'.atee(n)' if is_async else '.tee(n)'} for fan-out."
            )
        self._subscribed = True

    def _next_ready(self) -> tuple[bool, Any]:
        """`(True, item)` when one is queued; `(False, None)` when the channel is done
        (raising its error if it failed); `(False, _MORE)` when the pump must run."""
        if self._items:
            return True, self._items.popleft()[1]
        if self._closed:
            if self._error is not None:
                raise self._error
            return False, None
        return False, _MORE

    def __iter__(self) -> Iterator[T]:
        """Subscribe (once) and iterate; an empty queue pulls the next graph event."""
        self._subscribe(is_async=False)
        return self._cursor()

    def _cursor(self) -> Iterator[T]:
        while True:
            ok, item = self._next_ready()
            if ok:
                yield item
                continue
            if item is not _MORE or self._request_more is None:
                return
            if not self._request_more() and not self._items and not self._closed:
                return

    def __aiter__(self) -> AsyncIterator[T]:
        """Subscribe (once) and iterate asynchronously; see `__iter__`."""
        self._subscribe(is_async=True)
        return self._acursor()

    async def _acursor(self) -> AsyncIterator[T]:
        while True:
            ok, item = self._next_ready()
            if ok:
                yield item
                continue
            if item is not _MORE or self._arequest_more is None:
                return
            if not await self._arequest_more() and not self._items and not self._closed:
                return

    # ---- fan-out
    def tee(self, n: int = 2) -> tuple[Iterator[T], ...]:
        """Subscribe once and hand out `n` iterators that each see every item."""
        if n < 1:
            raise ValueError("tee() requires n >= 1")
        source = iter(self)
        buffers: list[deque[T]] = [deque() for _ in range(n)]
        done = False

        def branch(buf: deque[T]) -> Iterator[T]:
            nonlocal done
            while True:
                if buf:
                    yield buf.popleft()
                    continue
                if done:
                    return
                try:
                    item = next(source)
                except StopIteration:
                    done = True
                    return
                for b in buffers:
                    b.append(item)

        return tuple(branch(b) for b in buffers)

    def atee(self, n: int = 2) -> tuple[AsyncIterator[T], ...]:
        """Async `tee`: branches take turns pulling from the one cursor."""
        if n < 1:
            raise ValueError("atee() requires n >= 1")
        source = self.__aiter__()
        buffers: list[deque[T]] = [deque() for _ in range(n)]
        state: dict[str, Any] = {"done": False, "error": None}
        lock = asyncio.Lock()

        async def branch(buf: deque[T]) -> AsyncIterator[T]:
            while True:
                if buf:
                    yield buf.popleft()
                    continue
                if state["done"]:
                    if state["error"] is not None:
                        raise state["error"]
                    return
                async with lock:
                    if buf or state["done"]:
                        continue
                    try:
                        item = await source.__anext__()
                    except StopAsyncIteration:
                        state["done"] = True
                        continue
                    except Exception as exc:  # noqa: BLE001 - re-raised in every branch
                        state["done"], state["error"] = True, exc
                        continue
                    for b in buffers:
                        b.append(item)

        return tuple(branch(b) for b in buffers)


_MORE: Any = object()


def is_stream_channel(value: object) -> bool:
    """Whether `value` is a projection channel: lgnb's `StreamChannel`, or LangGraph's, which
    keeps the same wiring (`_bind`, `_bind_mux`, `_wire`, the pump hooks, stamped items), so
    transformers written for LangGraph (LangChain's agents register some) run on lgnb's mux."""
    if isinstance(value, StreamChannel):
        return True
    return any(k.__name__ == "StreamChannel" and k.__module__ == "langgraph.stream.stream_channel"
               for k in type(value).__mro__)

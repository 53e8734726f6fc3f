"""Move stream chunks from where the graph runs to the thread that owns the run.

The graph never runs on the kernel's loop thread: a synchronous `graph.stream(...)` runs
in a worker thread, an asynchronous `graph.astream(...)` as a task on lgnb's background
loop. Either producer appends chunks to one buffer. The consumer is the run's loop: one
`call_soon_threadsafe` wake-up per batch (not per chunk, so thousands of tokens a second
do not flood the loop) — or, while a kernel cell blocks in `Run.wait()`, that very cell,
which pumps the buffer itself (`pump`). That is why `wait()` needs no nested event loop:
re-entering a running kernel loop (nest-asyncio applied mid-iteration) crashes ipykernel
with "IndexError: pop from an empty deque".

A producer that streams thousands of tokens a second holds the GIL almost all the time, so
every other Python thread of the kernel gets it only at the interpreter's switch interval
(5 ms), once per blocking call. Sending one comm message takes several such turns in
ipykernel's IOPub thread, which made a batch take 20–200 ms to leave the kernel. So after
the consumer sent something it calls `hand_off()`, and the producer, at its next chunk,
sleeps `HAND_OFF` seconds (at most once per flush, ~25 times a second: ~2.5% of its time)
to let the send go out. `sys.setswitchinterval` would do it for the whole process: no.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future
from typing import Any

#: Seconds the producer lets go of the GIL after the consumer sent a message.
HAND_OFF = 0.001

OnChunks = Callable[[list[Any]], None]
OnEnd = Callable[[BaseException | None], None]


class Pump:
    """One stream segment: a producer filling a buffer, consumed on `loop` or by `pump()`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_chunks: OnChunks, on_end: OnEnd) -> None:
        self._loop, self._on_chunks, self._on_end = loop, on_chunks, on_end
        self._cond = threading.Condition()
        self._buffer: list[Any] = []
        self._scheduled = False
        self._ended = False
        self._error: BaseException | None = None
        self._finished = False
        self._cancelled = False
        self._hand_off = False
        self._future: Future[None] | None = None
        self.thread: threading.Thread | None = None

    # -- producers -------------------------------------------------------------------
    def start_sync(self, make_iter: Callable[[], Iterator[Any]]) -> None:
        """Iterate a synchronous stream in a daemon worker thread."""
        self.thread = threading.Thread(target=self._work_sync, args=(make_iter,), name="lgnb-run", daemon=True)
        self.thread.start()

    def start_async(self, make_iter: Callable[[], AsyncIterator[Any]], loop: asyncio.AbstractEventLoop) -> None:
        """Iterate an asynchronous stream as a task on `loop` (lgnb's background loop)."""
        self._future = asyncio.run_coroutine_threadsafe(self._work_async(make_iter), loop)

    def cancel(self) -> None:
        self._cancelled = True
        if self._future is not None:
            self._future.cancel()

    def hand_off(self) -> None:
        """Ask the producer to let go of the GIL for a moment at its next chunk."""
        self._hand_off = True

    def _put(self, chunk: Any) -> None:
        if self._hand_off:
            self._hand_off = False
            time.sleep(HAND_OFF)
        with self._cond:
            self._buffer.append(chunk)
            wake, self._scheduled = not self._scheduled, True
            self._cond.notify_all()
        if wake:
            self._loop.call_soon_threadsafe(self.pump_nowait)

    def _end(self, error: BaseException | None) -> None:
        with self._cond:
            self._ended, self._error = True, error
            self._cond.notify_all()
        self._loop.call_soon_threadsafe(self.pump_nowait)

    def _work_sync(self, make_iter: Callable[[], Iterator[Any]]) -> None:
        error: BaseException | None = None
        iterator: Iterator[Any] | None = None
        try:
            iterator = make_iter()
            for chunk in iterator:
                if self._cancelled:
                    break
                self._put(chunk)
        except BaseException as exc:  # delivered to the run, which shows and re-raises it
            error = exc
        finally:
            close = getattr(iterator, "close", None)
            if self._cancelled and callable(close):
                try:
                    close()
                except Exception:
                    pass
            self._end(error)

    async def _work_async(self, make_iter: Callable[[], AsyncIterator[Any]]) -> None:
        error: BaseException | None = None
        try:
            async for chunk in make_iter():
                if self._cancelled:
                    break
                self._put(chunk)
        except asyncio.CancelledError:
            pass
        except BaseException as exc:
            error = exc
        self._end(error)

    # -- consumer (the run's loop thread) ---------------------------------------------
    def pump_nowait(self) -> None:
        """Deliver buffered chunks, then the end once the producer is done."""
        with self._cond:
            chunks, self._buffer, self._scheduled = self._buffer, [], False
            ended = self._ended and not self._finished
            if ended:
                self._finished = True
        try:
            if chunks:
                self._on_chunks(chunks)
        finally:  # the end is delivered once, whatever showing the last chunks raised
            if ended:
                self._on_end(self._error)

    def pump(self, timeout: float) -> None:
        """Wait up to `timeout` s for chunks or the end, then deliver them (blocking wait)."""
        with self._cond:
            if not self._buffer and not (self._ended and not self._finished):
                self._cond.wait(timeout)
        self.pump_nowait()

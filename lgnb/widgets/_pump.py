"""Hand stream chunks to the run where the graph produces them: in the run's own thread.

The graph never runs on the kernel's loop thread: a synchronous `graph.stream(...)` runs
in a worker thread, an asynchronous `graph.astream(...)` as a task on lgnb's background
loop. Either producer hands each chunk to the run at once (`on_chunks`, in the producer's
thread), and the end too (`on_end`). So the run's state (`status`, `result`, interrupts)
is current the moment the engine produced it, from any thread, and the view's updates go
out while a cell blocks the kernel's loop (`time.sleep(3)`): nothing waits for that loop
to drain a queue. The run serialises its own state and sends (one lock per run).

A producer that streams thousands of tokens a second holds the GIL almost all the time, so
every other Python thread of the kernel gets it only at the interpreter's switch interval
(5 ms), once per blocking call. Sending one comm message takes several such turns in
ipykernel's IOPub thread, which made a batch take 20–200 ms to leave the kernel. So after
the run sent something it calls `hand_off()`, and the producer, at its next chunk, sleeps
`HAND_OFF` seconds (at most once per flush, ~25 times a second: ~2.5% of its time) to let
the send go out. `sys.setswitchinterval` would do it for the whole process: no.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future
from typing import Any

#: Seconds the producer lets go of the GIL after the run sent a message.
HAND_OFF = 0.001

OnChunks = Callable[[list[Any]], None]
OnEnd = Callable[[BaseException | None], None]


class Pump:
    """One stream segment: a producer that hands its chunks, then its end, to the run."""

    def __init__(self, on_chunks: OnChunks, on_end: OnEnd) -> None:
        self._on_chunks, self._on_end = on_chunks, on_end
        self._cancelled = False
        self._hand_off = False
        self._future: Future[None] | None = None
        self.thread: threading.Thread | None = None

    def start_sync(self, make_iter: Callable[[], Iterator[Any]]) -> None:
        """Iterate a synchronous stream in a daemon worker thread."""
        self.thread = threading.Thread(target=self._work_sync, args=(make_iter,), name="lgnb-run", daemon=True)
        self.thread.start()

    def start_async(self, make_iter: Callable[[], AsyncIterator[Any]], loop: asyncio.AbstractEventLoop) -> None:
        """Iterate an asynchronous stream as a task on `loop` (lgnb's background loop)."""
        self._future = asyncio.run_coroutine_threadsafe(self._work_async(make_iter), loop)

    def cancel(self) -> None:
        """Deliver nothing more (the run settled as cancelled) and stop iterating."""
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
        if not self._cancelled:  # a cancelled segment's leftovers never reach the run
            self._on_chunks([chunk])

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
            self._on_end(error)

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
        self._on_end(error)

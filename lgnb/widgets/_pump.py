"""Move stream chunks from where the graph runs to the run's event loop.

`ThreadPump` iterates a synchronous `graph.stream(...)` in a worker thread and hands
chunks to the loop in batches: one `call_soon_threadsafe` per batch, not per chunk, so a
model streaming thousands of tokens a second does not flood the loop with wake-ups.
`AsyncPump` iterates `graph.astream(...)` as a task on the loop itself.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

OnChunks = Callable[[list[Any]], None]
OnEnd = Callable[[BaseException | None], None]


class ThreadPump:
    """Run `make_iter()` in a daemon thread; deliver chunks and the end on `loop`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_chunks: OnChunks, on_end: OnEnd) -> None:
        self._loop, self._on_chunks, self._on_end = loop, on_chunks, on_end
        self._lock = threading.Lock()
        self._buffer: list[Any] = []
        self._scheduled = False
        self._cancelled = False
        self.thread: threading.Thread | None = None

    def start(self, make_iter: Callable[[], Iterator[Any]]) -> None:
        self.thread = threading.Thread(target=self._work, args=(make_iter,), name="lgnb-run", daemon=True)
        self.thread.start()

    def cancel(self) -> None:
        self._cancelled = True

    def _work(self, make_iter: Callable[[], Iterator[Any]]) -> None:
        error: BaseException | None = None
        iterator: Iterator[Any] | None = None
        try:
            iterator = make_iter()
            for chunk in iterator:
                if self._cancelled:
                    break
                with self._lock:
                    self._buffer.append(chunk)
                    wake, self._scheduled = not self._scheduled, True
                if wake:
                    self._loop.call_soon_threadsafe(self._drain)
        except BaseException as exc:  # delivered to the run, which shows and re-raises it
            error = exc
        finally:
            close = getattr(iterator, "close", None)
            if self._cancelled and callable(close):
                try:
                    close()
                except Exception:
                    pass
            self._loop.call_soon_threadsafe(self._finish, error)

    def _drain(self) -> None:
        with self._lock:
            chunks, self._buffer, self._scheduled = self._buffer, [], False
        if chunks:
            self._on_chunks(chunks)

    def _finish(self, error: BaseException | None) -> None:
        self._drain()
        self._on_end(error)


class AsyncPump:
    """Iterate `make_iter()` (an async iterator) as a task on `loop`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_chunks: OnChunks, on_end: OnEnd) -> None:
        self._loop, self._on_chunks, self._on_end = loop, on_chunks, on_end
        self.task: asyncio.Task[None] | None = None

    def start(self, make_iter: Callable[[], AsyncIterator[Any]]) -> None:
        self.task = self._loop.create_task(self._work(make_iter))

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    async def _work(self, make_iter: Callable[[], AsyncIterator[Any]]) -> None:
        error: BaseException | None = None
        try:
            async for chunk in make_iter():
                self._on_chunks([chunk])
        except asyncio.CancelledError:
            pass
        except BaseException as exc:
            error = exc
        self._on_end(error)

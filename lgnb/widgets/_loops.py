"""Which event loop a run's waiters live on, lgnb's background loop, and its timer thread.

In a Jupyter kernel `await run` waits on the kernel's own loop. Outside a running loop (a
script, a plain test) there is no loop to borrow, so runs share one private background
loop thread (which also runs `astream` producers). Timers that must fire while the
kernel's loop is blocked by a busy cell (a view's flush cadence) use `call_later`'s own
thread, which no event loop can hold up.
"""

from __future__ import annotations

import asyncio
import heapq
import threading
import time
from collections.abc import Callable
from typing import Any

_bg_loop: asyncio.AbstractEventLoop | None = None
_bg_lock = threading.Lock()


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def background_loop() -> asyncio.AbstractEventLoop:
    """A daemon thread running an event loop, started on first use."""
    global _bg_loop
    with _bg_lock:
        if _bg_loop is None or _bg_loop.is_closed():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=serve, name="lgnb-loop", daemon=True).start()
            ready.wait()
            _bg_loop = loop
        return _bg_loop


def loop_for_run() -> asyncio.AbstractEventLoop:
    """The caller's running loop (a kernel cell) or the background loop."""
    return running_loop() or background_loop()


def loop_of(saver: Any) -> asyncio.AbstractEventLoop | None:
    """The event loop `saver` is bound to, or None: LangGraph's async savers
    (``AsyncSqliteSaver``, ``AsyncPostgresSaver``) remember the loop they were made on.
    Their sync methods hand each call to that loop and wait for it, so they work from any
    other thread while that loop is free, and raise ``InvalidStateError`` on its own
    thread — which, in a notebook, is where every cell and every widget message runs."""
    bound = getattr(saver, "loop", None)
    return bound if isinstance(bound, asyncio.AbstractEventLoop) else None


def refuses_sync_here(saver: Any) -> bool:
    """Whether `saver` is bound to the event loop running on this thread (see `loop_of`)."""
    bound = loop_of(saver)
    if bound is None:
        return False
    try:
        return asyncio.get_running_loop() is bound
    except RuntimeError:
        return False


def loop_bound_error(saver: Any, what: str, *, instead: str | None = None) -> RuntimeError:
    """The error for a call on the thread of the loop `saver` is bound to that would read
    the saver there, or block while the graph saves through it (see `loop_of`), naming
    what works instead (`instead`; by default, calling `what` off the loop)."""
    name = what.rsplit(".", 1)[-1]
    owner = what.rsplit(".", 1)[0].lower().replace("historyview", "view")
    instead = instead or f"`await asyncio.to_thread({owner}.{name})`"
    return RuntimeError(
        f"{what}: the graph's {type(saver).__name__} is bound to the event loop of this thread, where "
        "this cell runs: it takes no synchronous call here, and it saves only while this loop is free. "
        f"The view's buttons work (they run on a thread of their own); from code, use {instead}. "
        "lgnb's savers (lgnb.checkpoint.sqlite.aio.AsyncSqliteSaver, ...) work from any thread.")


class Timer:
    """A callback due at a monotonic time, fired by :func:`call_later`'s thread; `cancel()`
    before it fires and it never does."""

    __slots__ = ("when", "fn", "cancelled")

    def __init__(self, when: float, fn: Callable[[], None]) -> None:
        self.when, self.fn, self.cancelled = when, fn, False

    def __lt__(self, other: Timer) -> bool:
        return self.when < other.when

    def cancel(self) -> None:
        self.cancelled = True


_timers: list[Timer] = []
_timers_cond = threading.Condition()
_timer_thread: threading.Thread | None = None


def call_later(delay: float, fn: Callable[[], None]) -> Timer:
    """Call `fn` after `delay` s on lgnb's timer thread, whatever any event loop is doing.

    A view's flush cadence must not wait for the kernel's loop: a cell that blocks it
    (`time.sleep(3)`, a long computation) would freeze the view and then make it jump. The
    one timer thread runs callbacks one at a time; they must be short and never raise (a
    callback that raises is dropped, the thread goes on)."""
    global _timer_thread
    timer = Timer(time.monotonic() + max(0.0, delay), fn)
    with _timers_cond:
        heapq.heappush(_timers, timer)
        if _timer_thread is None or not _timer_thread.is_alive():
            _timer_thread = threading.Thread(target=_serve_timers, name="lgnb-timers", daemon=True)
            _timer_thread.start()
        _timers_cond.notify()
    return timer


def _serve_timers() -> None:
    while True:
        with _timers_cond:
            while not _timers or _timers[0].when > time.monotonic():
                _timers_cond.wait(None if not _timers else _timers[0].when - time.monotonic())
            timer = heapq.heappop(_timers)
        if not timer.cancelled:
            try:
                timer.fn()
            except Exception:  # noqa: BLE001 S110 - a view's flush records its own failures
                pass


class Repeating:
    """`fn()` every `interval` s on its own daemon thread, until `cancel()` or `fn` returns
    False. For pollers that may block on I/O (a saver read): they get a thread of their
    own instead of holding up the timer thread or an event loop a busy cell blocks."""

    def __init__(self, interval: float, fn: Callable[[], bool | None], *, name: str) -> None:
        if not interval > 0:
            raise ValueError(f"{name}: the interval must be a positive number of seconds, not {interval!r}")
        self._interval, self._fn = interval, fn
        self._stop, self._done = threading.Event(), threading.Event()
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        try:
            while not self._stop.wait(self._interval):
                try:
                    if self._fn() is False:
                        break
                except Exception:  # noqa: BLE001 S112 - a poller's hiccup: try again next time
                    continue
        finally:
            self._done.set()

    def cancel(self) -> bool:
        """Stop before the next call (a call under way finishes)."""
        self._stop.set()
        return True

    def done(self) -> bool:
        return self._stop.is_set() or self._done.is_set()

"""A notebook's stop button held back while a saver writes.

Jupyter's stop button sends SIGINT to the kernel; Python raises KeyboardInterrupt in the
main thread at the next bytecode boundary, which can be inside a saver's network I/O. A
PostgreSQL connection (psycopg) interrupted mid-pipeline cancels its query and closes
itself, so every later call on the saver fails until it is made again. LangGraph's engine
never meets this: it saves from a thread of its own, where no KeyboardInterrupt lands.
lgnb saves inline (cheaper), so it holds the signal back for the length of one write and
raises KeyboardInterrupt right after it: the stop still stops the run, one write later.

Savers whose writes a KeyboardInterrupt cannot break (lgnb's SQLite saver rolls back and
goes on; the in-memory saver has no connection) are called as they are: no signal calls.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["holds_interrupts", "interrupts_held"]

_SAFE: dict[type, bool] = {}


def holds_interrupts(saver: Any) -> bool:
    """Whether a write of `saver` in this thread should hold a KeyboardInterrupt back: the
    main thread, Python's own SIGINT handler in place, a saver not known to be safe."""
    kind = type(saver)
    safe = _SAFE.get(kind)
    if safe is None:
        safe = _SAFE[kind] = bool(getattr(kind, "interrupt_safe", False)) or kind.__name__ in (
            "InMemorySaver", "MemorySaver")
    if safe or threading.current_thread() is not threading.main_thread():
        return False
    return signal.getsignal(signal.SIGINT) is signal.default_int_handler


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Run the block with SIGINT recorded instead of raised; raise KeyboardInterrupt after
    it if one came (not when the block itself failed: that error already stops the run)."""
    caught: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        caught.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt

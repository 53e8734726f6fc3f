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

import _signal  # type: ignore[import-not-found]  # (no stub: what `signal` wraps)
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["call_holding_interrupts", "holds_interrupts"]

_T = TypeVar("_T")
# `_signal`'s functions are what `signal.signal` / `getsignal` wrap, without their
# conversions to and from `enum` members (~3 µs a call): a saved step makes four
_SIGINT = _signal.SIGINT
_DEFAULT = _signal.default_int_handler

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
    return _signal.getsignal(_SIGINT) is _DEFAULT


def call_holding_interrupts(fn: Callable[..., _T], *args: Any) -> _T:
    """`fn(*args)` with SIGINT recorded instead of raised; KeyboardInterrupt raised after
    it if one came (not when `fn` itself failed: that error already stops the run)."""
    caught: list[int] = []
    previous = _signal.signal(_SIGINT, lambda signum, frame: caught.append(signum))
    try:
        result = fn(*args)
    finally:
        _signal.signal(_SIGINT, previous)
    if caught:
        raise KeyboardInterrupt
    return result

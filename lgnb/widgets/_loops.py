"""Which event loop a run lives on, and how to wait for it without deadlocking.

In a Jupyter kernel the run is a task on the kernel's own loop (so widget messages and
clicks are handled between chunks). Outside a running loop (a script, a plain test) there
is no loop to borrow, so runs share one private background loop thread.
"""

from __future__ import annotations

import asyncio
import threading

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

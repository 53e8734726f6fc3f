"""Delivering a run's events while it proceeds: pooled driver threads, async wake-ups.

A sync `stream()` that asks for live events (`messages`, `custom`, subgraphs) runs its loop
on a pooled driver thread and yields events as they are queued; `astream` wakes up when a
worker thread (a sync node) queues one. Both drain the one event queue through the call's
formatter.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from lgnb.pregel._driver import run_to_end
from lgnb.pregel._run import give_permit

if TYPE_CHECKING:
    from lgnb.pregel._loop import Loop
    from lgnb.pregel._run import StreamSink

__all__ = (
    "aclose_driver",
    "drain",
    "ensure_future",
    "install_async_wakeup",
    "stream_threaded",
    "wait_either",
)


def drain(items: Any, fmt: Any) -> Iterator[Any]:
    """The queued events, shaped for the caller (unwanted modes dropped)."""
    while items:
        ok, chunk = fmt(items.popleft())
        if ok:
            yield chunk


def stream_threaded(
    loop: Loop, input: Any, sink: StreamSink, fmt: Any, resuming: bool | None
) -> Iterator[Any]:
    """Run the loop in a worker thread so events reach the caller while nodes run."""
    import contextvars

    items = sink.items
    error: list[BaseException] = []

    def work() -> None:
        try:
            run_to_end(loop, input, resuming=resuming)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            error.append(exc)
        finally:
            sink.close()

    loop.gate = sink.gate  # each step starts when the consumer asks for more
    context = contextvars.copy_context()
    _GATED[sink] = loop.run
    done = _driver_pool().submit(context.run, work)
    popleft = items.popleft
    try:
        while True:
            sink.wait()
            while items:
                ok, chunk = fmt(popleft())
                if ok:
                    yield chunk
            if not sink.let_in():
                continue
            if sink.closed and not items:
                break
    finally:
        _let_go(sink, loop.run)
        _GATED.pop(sink, None)
        done.result()
    if error:
        raise error[0]


_GATED: weakref.WeakKeyDictionary[StreamSink, Any] = weakref.WeakKeyDictionary()
"""The sinks of threaded streams not closed yet, with their runs."""


def _let_go(sink: StreamSink, run: Any) -> None:
    """Stop a threaded stream's run: a producer waiting at a step's start goes on, sees
    the run cancelled, and ends."""
    run.cancelled = True
    sink.gated = False
    give_permit(sink.opened)


def _let_all_go() -> None:
    """At interpreter exit, before the executors join their threads: a stream its
    consumer dropped without closing (a generator left in a reference cycle) would keep
    its driver waiting at a step's start, and the exit waiting on that driver."""
    for sink, run in list(_GATED.items()):
        _let_go(sink, run)


# run before `concurrent.futures` joins its threads (callbacks run last-registered first)
threading._register_atexit(_let_all_go)  # type: ignore[attr-defined]


_DRIVERS: Any = None
_DRIVERS_LOCK = threading.Lock()


def _driver_pool() -> Any:
    """Threads that drive streamed runs, kept between calls (starting one costs ~0.2 ms).

    Separate from the task pool: a driver waits on its run's tasks, so sharing one pool
    could leave no thread for them."""
    global _DRIVERS
    if _DRIVERS is None:
        with _DRIVERS_LOCK:
            if _DRIVERS is None:
                from concurrent.futures import ThreadPoolExecutor

                _DRIVERS = ThreadPoolExecutor(
                    max_workers=256, thread_name_prefix="lgnb-run"
                )
    return _DRIVERS


def ensure_future(coro: Any) -> Any:
    import asyncio

    return asyncio.ensure_future(coro)


def install_async_wakeup(sink: StreamSink) -> None:
    """Let `astream` wake up when a worker thread (sync node) puts an event."""
    import asyncio

    aloop = asyncio.get_running_loop()
    event = asyncio.Event()
    items = sink.items
    main_thread = threading.get_ident()

    def put(item: Any) -> None:
        items.append(item)
        if threading.get_ident() == main_thread:
            event.set()
        else:
            aloop.call_soon_threadsafe(event.set)

    sink.put = put
    sink.event = event  # type: ignore[attr-defined]


async def aclose_driver(agen: Any, step: Any) -> None:
    """Close `adrive` when `astream` ends: a step still in flight (the consumer stopped
    or was cancelled mid-step) is cancelled and awaited first, so the run stops its
    tasks and saves what it must; closing a generator that is running would fail."""
    import asyncio

    if step is not None and not step.done():
        step.cancel()
        try:
            await step
        except (asyncio.CancelledError, StopAsyncIteration):
            pass
        except Exception:  # noqa: BLE001 - the run failed while stopping: nothing to report to
            pass
    await agen.aclose()


async def wait_either(step: Any, sink: StreamSink) -> None:
    import asyncio

    event = sink.event  # type: ignore[attr-defined]
    if sink.items:
        return
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({step, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        event.clear()

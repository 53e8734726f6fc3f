"""Delivering a run's events while it proceeds: async wake-ups, draining the queue.

A sync `stream()` that asks for live events (`messages`, `custom`, subgraphs) runs its loop
in the caller's thread and a slow task in a worker thread, yielding events as they come
(`_driver.drive`, `live=`); `astream` wakes up when a worker thread (a sync node) queues
one. Both drain the one event queue through the call's formatter.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb.pregel._run import StreamSink

__all__ = (
    "aclose_driver",
    "drain",
    "ensure_future",
    "install_async_wakeup",
    "wait_either",
)


def drain(items: Any, fmt: Any) -> Iterator[Any]:
    """The queued events, shaped for the caller (unwanted modes dropped)."""
    only = getattr(fmt, "only_mode", None)
    if only is not None:  # one mode, plain payloads: no call per event
        popleft = items.popleft
        while items:
            event = popleft()
            if event[1] == only:
                yield event[2]
        return
    while items:
        ok, chunk = fmt(items.popleft())
        if ok:
            yield chunk


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


async def aclose_driver(agen: Any, step: Any, closed: Any = None) -> None:
    """Close `adrive` when `astream` ends: a step still in flight (the consumer stopped
    or was cancelled mid-step) is cancelled and awaited first, so the run stops its
    tasks and saves what it must; closing a generator that is running would fail.
    `closed`: the run's loop when the consumer closed the stream: the driver takes the
    step's cancellation as that close (the tasks that ended are kept, as LangGraph)."""
    import asyncio

    if step is not None and not step.done():
        if closed is not None:
            closed.closing = True
        step.cancel()
        try:
            await step
        except (asyncio.CancelledError, StopAsyncIteration):
            pass
        except Exception:  # noqa: BLE001 - the run failed while stopping: nothing to report to
            pass
    elif step is not None and not step.cancelled():
        step.exception()  # ended while the consumer held a chunk: taken, or asyncio logs it
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

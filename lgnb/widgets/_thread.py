"""What `lgnb.run` asks of a graph's `stream` so that a run has its thread to itself and
`cancel()` means cancelled.

Each segment of a run (its start, each resume) gets a fresh `RunControl`: `Run.cancel()`
calls its `request_cancel()`, after which the run writes nothing more to the thread (a
node still running finishes unseen, its writes thrown away). An lgnb graph also gets
`multitask=` (default "reject"): a second `lgnb.run` on a busy thread — the same cell run
twice, or a run in another process sharing the saver's database — is refused with
`ThreadBusyError`, waits ("enqueue") or cancels the first ("interrupt").

A LangGraph graph's engine takes no lease, so the view takes it for it
(`leased_stream`, the same lease program lgnb's engine runs): in this kernel whatever
its saver, and across processes when the saver keeps a lease table (lgnb's SQLite and
PostgreSQL savers). It takes a `control` but has no cancel: the view asks it to drain
(stop at the next step boundary; the step that was running is still saved), and an
"interrupt" waits for that. A RemoteGraph's runs live on its server, which has its own
`multitask_strategy`.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from lgnb.pregel._lease import arelease_lease, leasing, release_lease, thread_busy
from lgnb.pregel._program import aanswer, answer
from lgnb.runtime import RunControl

__all__ = (
    "aleased_stream",
    "cancel_segment",
    "check_not_busy",
    "leased_stream",
    "segment_options",
    "view_takes_lease",
    "was_cancelled",
)


def _accepts(graph: Any, method: str) -> frozenset[str]:
    try:
        return frozenset(inspect.signature(getattr(graph, method)).parameters)
    except (TypeError, ValueError, AttributeError):
        return frozenset()


def segment_options(graph: Any, method: str, options: dict[str, Any], *, multitask: str | None,
                    checkpointed: bool) -> tuple[dict[str, Any], Any]:
    """The keyword arguments `graph.<method>` gets for one segment, and its control
    (None when the graph takes none)."""
    accepted = _accepts(graph, method)
    extra: dict[str, Any] = {}
    control = options.get("control")
    if control is None and "control" in accepted:
        control = extra["control"] = RunControl()
    if multitask is not None and checkpointed and "multitask" in accepted and "multitask" not in options:
        extra["multitask"] = multitask
    return extra, control


def view_takes_lease(graph: Any) -> bool:
    """Whether the view must take the thread's lease itself: a local graph with a saver
    whose engine takes none (LangGraph's: its `stream` has no `multitask`)."""
    from lgnb.remote._edge import is_remote

    saver = getattr(graph, "checkpointer", None)
    if saver is None or isinstance(saver, bool) or is_remote(graph):
        return False
    return "multitask" not in _accepts(graph, "stream")


def check_not_busy(graph: Any, config: dict[str, Any], multitask: str | None) -> None:
    """Refuse at once (`ThreadBusyError`) when a run of this kernel holds the thread and
    `multitask` is "reject" (a run in another process is refused when the stream starts,
    and the view shows the error)."""
    if multitask != "reject":
        return
    if "multitask" not in _accepts(graph, "stream") and not view_takes_lease(graph):
        return
    from lgnb.errors import ThreadBusyError

    thread_id = (config.get("configurable") or {}).get("thread_id")
    holder = thread_busy(getattr(graph, "checkpointer", None), thread_id)
    if holder is not None:
        raise ThreadBusyError(str(thread_id), holder.describe())


def cancel_segment(control: Any, reason: str) -> None:
    """Cancel a segment through its control: `request_cancel` (lgnb's engine writes
    nothing more), and `request_drain`, all a LangGraph engine reads (it stops at the
    next step boundary)."""
    if control is None:
        return
    cancel = getattr(control, "request_cancel", None)
    if cancel is not None:
        cancel(reason)
    control.request_drain(reason)


def was_cancelled(control: Any) -> str | None:
    """Why the segment was cancelled (by `Run.cancel()` or by another run with
    `multitask="interrupt"`), or None."""
    return getattr(control, "cancel_reason", None)


class _Holder:
    """What the lease program reads of a run (and where it leaves `lease`), for a graph
    whose engine takes no lease."""

    __slots__ = ("checkpointer", "control", "multitask", "lease", "__weakref__")

    def __init__(self, saver: Any, control: Any, multitask: str) -> None:
        self.checkpointer = saver
        self.control = control
        self.multitask = multitask
        self.lease: Any = None


def leased_stream(open_stream: Callable[[], Iterator[Any]], graph: Any, config: dict[str, Any],
                  multitask: str, control: Any) -> Iterator[Any]:
    """`open_stream()`'s chunks, run while holding the thread's lease (taken as
    `multitask` says before the graph reads its checkpoint; given back however the
    stream ends)."""
    holder = _Holder(graph.checkpointer, control, multitask)
    answer(leasing(holder, config))
    try:
        yield from open_stream()
    finally:
        release_lease(holder)


async def aleased_stream(open_stream: Callable[[], AsyncIterator[Any]], graph: Any, config: dict[str, Any],
                         multitask: str, control: Any) -> AsyncIterator[Any]:
    """`leased_stream` for `astream`."""
    holder = _Holder(graph.checkpointer, control, multitask)
    await aanswer(leasing(holder, config))
    try:
        async for chunk in open_stream():
            yield chunk
    finally:
        await arelease_lease(holder)

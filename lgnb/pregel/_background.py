"""`durability="async"`: a run's saves written while its next step runs.

With durability `"sync"` the driver carries out the loop's queued saves (`Loop.io`:
`put_writes` of each finished task, `put` of each checkpoint, node-cache writes) before
anything else runs. With `"async"` — LangGraph's default — it hands them to a
`BackgroundSaves` and goes on: the next super-step runs while they are written. That
hides a saver's latency (SQLite's commit, a PostgreSQL round trip: both release the GIL)
behind the nodes' own work.

What `"async"` keeps:

* **Order.** One run's saves run in the order they were queued, on one writer (a thread
  of the run's own for sync runs, shared by its subgraphs; a chain of asyncio tasks for
  async runs): a task's writes before the checkpoint that follows them, a checkpoint
  before its children. Runs never wait on each other's saves.
* **At most one checkpoint in flight.** Before a loop queues the save of checkpoint N+1
  it waits for that of N; so a crash loses at most the super-step that just finished,
  and only while its save is under way (LangGraph documents the same risk for async
  durability). `"sync"` loses nothing.
* **Saved before the run answers.** A loop waits for all its saves when it ends — done,
  failed, interrupted or cancelled — so what `invoke` returns, an interrupt a form shows,
  and the next run or `get_state` all see the saved thread. A subgraph's loop does the
  same before its parent goes on.
* **Errors reach the run.** A save that fails drops every save of its loop queued after
  it (they would name a checkpoint that is not there) and raises in the run at its next
  barrier — the step running meanwhile finishes first, as its sibling tasks would — or
  when it ends.
* **Cancellation.** Each save still passes the run's `RunControl` gate (`_flushing`):
  once the run is cancelled, nothing more is written.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb.pregel._loop import Loop

__all__ = ("AsyncBackgroundSaves", "BackgroundSaves", "close_writer")

_IDLE_EXIT = 5.0
"""Seconds an idle writer thread waits for a run to take it before it ends."""


class _Writer:
    """One run's writer thread: runs submitted jobs in order. When its run ends and the
    queue is empty the thread waits, idle, for another run to take it (starting a thread
    costs about as much as a save); after `_IDLE_EXIT` seconds unused it ends."""

    def __init__(self) -> None:
        self.cv = threading.Condition()
        self.jobs: deque[Callable[[], None]] = deque()
        self.thread: threading.Thread | None = None
        self.closing = False

    def submit(self, job: Callable[[], None]) -> None:
        with self.cv:
            self.jobs.append(job)
            if self.thread is None:
                self.thread = threading.Thread(target=self._main, name="lgnb-saves", daemon=True)
                self.thread.start()
            else:
                self.cv.notify_all()

    def close(self) -> None:
        """The run ended: once its queue is empty the writer is free for another run."""
        with self.cv:
            if self.thread is None or not self.jobs:
                # nothing queued (the run waited for its saves): free now, so a run that
                # starts at once takes this writer rather than starting a thread
                with _IDLE_LOCK:
                    _IDLE.append(self)
            else:
                self.closing = True
                self.cv.notify_all()

    def _main(self) -> None:
        cv = self.cv
        jobs = self.jobs
        while True:
            with cv:
                while not jobs:
                    if self.closing:
                        self.closing = False
                        with _IDLE_LOCK:
                            _IDLE.append(self)
                    if not cv.wait(_IDLE_EXIT) and not jobs:
                        # unused for a while (free, or its run went quiet): the thread
                        # ends; a later submit starts another
                        with _IDLE_LOCK:
                            if self in _IDLE:
                                _IDLE.remove(self)
                        self.thread = None
                        return
                job = jobs.popleft()
            job()  # never raises: BackgroundSaves' jobs record their own errors


_IDLE: list[_Writer] = []
"""Writers whose run ended, free for the next run (their threads wait for work)."""
_IDLE_LOCK = threading.Lock()


def _forget_idle_writers() -> None:
    """In a forked child the idle writers' threads do not exist: start afresh."""
    global _IDLE_LOCK
    _IDLE.clear()
    _IDLE_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_idle_writers)


def writer_of(run: Any) -> _Writer:
    """The writer of `run` (a RunContext: the root call and its subgraphs), an idle one
    taken over or a new one."""
    writer = run.__dict__.get("_saves_writer")
    if writer is None:
        with _IDLE_LOCK:
            writer = _IDLE.pop() if _IDLE else None
        if writer is None:
            writer = _Writer()
        run._saves_writer = writer
    return writer


def close_writer(run: Any) -> None:
    """The root loop of `run` ended (all its saves done): free its writer."""
    writer = run.__dict__.pop("_saves_writer", None)
    if writer is not None:
        writer.close()


def _has_checkpoint(ops: list[tuple]) -> bool:
    return any(op[0] == "put" for op in ops)


class _Saves:
    """What both kinds of background saves share: the first failed save's error."""

    __slots__ = ("error", "raised")

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.raised = False

    def check(self) -> None:
        """Raise a failed save's error, once."""
        error = self.error
        if error is not None and not self.raised:
            self.raised = True
            raise error


class BackgroundSaves(_Saves):
    """The saves of one loop of a sync run, carried out by its run's writer thread."""

    __slots__ = ("loop", "writer", "submitted", "done", "last_put")

    def __init__(self, loop: Loop) -> None:
        super().__init__()
        self.loop = loop
        self.writer = writer_of(loop.run)
        self.submitted = 0
        self.done = 0
        self.last_put = 0  # the ticket of the latest batch holding a checkpoint

    def take(self, background: bool) -> bool:
        """Deal with the loop's queued saves: queue them for the writer (`background`),
        or — False — leave them to be written now, once the earlier ones are done.
        After a failed save they are dropped, and a checkpoint's save raises the error."""
        checkpoint = _has_checkpoint(self.loop.io)
        if not background:
            self.settle()
        elif checkpoint:
            self.settle(self.last_put)  # at most one checkpoint in flight
        loop = self.loop
        with self.writer.cv:  # (reentrant) ops taken and numbered in the order they run
            ops = loop.io
            gate = _taken(self, ops, background, checkpoint, threaded=True)
            if gate is False:
                return False
            loop.io = []
            if gate is True:
                return True
            self.submitted += 1
            if checkpoint:
                self.last_put = self.submitted
            self.writer.submit(lambda: self._save(ops, gate))
        return True

    def _save(self, ops: list[tuple], gate: Any) -> None:
        from lgnb.pregel._driver import _flushing
        from lgnb.pregel._program import answer

        try:
            if self.error is None:
                answer(_flushing(self.loop, ops, admitted=True))
        except BaseException as e:  # noqa: BLE001 - raised in the run (at a barrier or the end)
            self.error = e
        finally:
            if gate is not None:
                gate()
            cv = self.writer.cv
            with cv:
                self.done += 1
                cv.notify_all()

    def settle(self, ticket: int | None = None) -> None:
        """Block until the saves up to `ticket` (default: all) are done."""
        target = self.submitted if ticket is None else ticket
        if self.done < target:
            cv = self.writer.cv
            with cv:
                while self.done < target:
                    cv.wait()

    def wait(self) -> None:
        """All saves done; a failed one's error raised (once)."""
        self.settle()
        self.check()


def _taken(saves: Any, ops: list[tuple], background: bool, checkpoint: bool, *, threaded: bool
           ) -> bool | Any:
    """What `take` does with `ops` (the loop's queued saves; the caller takes them out of
    `loop.io` unless the answer is False) once the earlier saves it must wait for are
    done: True — dealt with (dropped after a failed save, raising its error if they hold a
    checkpoint; or cancelled; or none), False — write them now, or else the gate to queue
    them with (`_admit`)."""
    if saves.error is not None:
        if checkpoint:
            saves.check()
        return True
    if not background:
        return False
    if not ops:
        return True
    gate = _admit(saves.loop, threaded=threaded)
    if gate is False:
        return True  # cancelled: the run writes nothing more
    return gate


def _admit(loop: Loop, *, threaded: bool) -> Any:
    """Pass the run's `RunControl` gate when saves are queued, not when they are
    written: a save queued before a cancel counts as under way (`request_cancel` waits
    for it), one queued after it is dropped. A threaded save has a key of its own, so a
    cancel from the run's thread waits for it too; an asyncio one counts on its event
    loop's thread (a cancel from that thread cannot wait for it, as for any save there).
    Returns False (cancelled), None (no gate) or the callable that ends the save."""
    control = loop.run.control
    begin = getattr(control, "_begin_save", None)
    if begin is None:
        return None
    key = ("background", next(_keys)) if threaded else None
    if not begin(key):
        return False
    return lambda: control._end_save(key)


_keys = itertools.count()


class _Batch:
    """Saves queued together, and how many of them are written (`AsyncBackgroundSaves`)."""

    __slots__ = ("ops", "done", "gate")

    def __init__(self, ops: list[tuple], gate: Any) -> None:
        self.ops = ops
        self.done = 0
        self.gate = gate


class AsyncBackgroundSaves(_Saves):
    """The saves of one loop of an async run: a chain of asyncio tasks on its event loop.

    A chain cancelled before it is written — `asyncio.run` cancels every task when a node
    raises `SystemExit` or `KeyboardInterrupt`, which asyncio lets escape its loop — does
    not lose finished steps: the run writes what is left as it ends (`wait`)."""

    __slots__ = ("loop", "last", "last_put", "unfinished")

    def __init__(self, loop: Loop) -> None:
        super().__init__()
        self.loop = loop
        self.last: asyncio.Future[None] | None = None
        self.last_put: asyncio.Future[None] | None = None
        self.unfinished: list[_Batch] = []

    async def take(self, background: bool) -> list[tuple] | None:
        """`BackgroundSaves.take`, awaited, of the saves queued when it is called (those
        queued while it waits for earlier ones are the next call's: the step's barrier
        may queue its checkpoint meanwhile, `adrive`). Returns the saves to write now, or
        None when they are dealt with."""
        loop = self.loop
        ops, loop.io = loop.io, []
        checkpoint = _has_checkpoint(ops)
        try:
            if not background:
                await self.settle(self.last)
            elif checkpoint:
                await self.settle(self.last_put)
        except BaseException:
            loop.io[:0] = ops  # not taken after all
            raise
        gate = _taken(self, ops, background, checkpoint, threaded=False)
        if gate is False:
            return ops
        if gate is True:
            return None
        batch = _Batch(ops, gate)
        self.unfinished.append(batch)
        self.last = asyncio.ensure_future(self._save(self.last, batch))
        if checkpoint:
            self.last_put = self.last
        return None

    async def _save(self, previous: asyncio.Future[None] | None, batch: _Batch) -> None:
        try:
            if previous is not None:
                await asyncio.wait((previous,))
            if self.error is None:
                await self._write(batch)
        except asyncio.CancelledError:
            return  # (left unfinished: written by the run as it ends, `wait`)
        except BaseException as e:  # noqa: BLE001 - raised in the run (at a barrier or the end)
            self.error = e
        if batch in self.unfinished:
            self.unfinished.remove(batch)
        if batch.gate is not None:
            batch.gate()

    async def _write(self, batch: _Batch) -> None:
        """Write the batch's saves not written yet, one by one, in order."""
        from lgnb.pregel._driver import _flushing
        from lgnb.pregel._program import aanswer

        for i in range(batch.done, len(batch.ops)):
            await aanswer(_flushing(self.loop, batch.ops[i:i + 1], admitted=True))
            batch.done = i + 1

    async def settle(self, fut: asyncio.Future[None] | None) -> None:
        """Wait for `fut` even if the run is cancelled meanwhile (its save must end)."""
        if fut is not None and not fut.done():
            try:
                await asyncio.shield(fut)
            except asyncio.CancelledError:
                await asyncio.wait((fut,))
                raise

    async def wait(self) -> None:
        try:
            await self.settle(self.last)
        except asyncio.CancelledError:
            if not self.unfinished or self.last is None or not self.last.done():
                raise  # (the run is cancelled while its saves go on: they finish on their own)
        # the batches a cancel stopped before they were written (see the class): now
        while self.unfinished:
            batch = self.unfinished[0]
            if self.error is None:
                try:
                    await self._write(batch)
                except BaseException as e:  # noqa: BLE001 - raised below, as any failed save's
                    self.error = e
            self.unfinished.pop(0)
            if batch.gate is not None:
                batch.gate()
        self.check()

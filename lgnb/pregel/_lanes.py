"""Lanes: engine threads that take one job at a time, handed over by a lock.

A live stream (`custom`, `messages`, `subgraphs=True`) runs each task off the calling
thread, as LangGraph's runner does, so a node's events reach the consumer while it runs.
In a chain every step is one such task, and the hand-off is the whole cost of a trivial
node: a `ThreadPoolExecutor.submit` builds a `Future` (a `Condition`), a work item and a
queue entry, and wakes a worker through the queue's lock and condition; the worker's
`set_result` notifies every waiter. A lane is a parked thread and a lock: giving it a job
is setting an attribute and releasing the lock, and the consumer is woken by the stream
sink's own lock (`StreamSink.nudge`), so a round trip costs about a third.

Lanes are made on demand, never limited (a run waiting on its lane never holds a thread
another run needs, as LangGraph gives each run an executor of its own), and up to
`IDLE_KEPT` idle ones are parked for the next job. As a pool's workers, a lane running a
job when the interpreter exits finishes it first (a node's side effects are not cut off
half-way; the idle ones just end), and a process forked from this one starts with none
(their threads do not exist in the child).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from itertools import count
from typing import Any

__all__ = ("IDLE_KEPT", "Job", "run_in_lane")

IDLE_KEPT = 8
"""How many idle lanes stay parked for the next job; more end with their job."""

_IDLE: list[_Lane] = []
_IDLE_LOCK = threading.Lock()
_LIVE: set[_Lane] = set()  # every lane whose thread runs (idle or not)
_NAMES = count()
_closing = False  # the interpreter is exiting: lanes end once their job is done


class Job:
    """One call run in a lane: `done()`, `wait()`, `result()` and `exception()`, as a
    `concurrent.futures.Future` of it, and `on_done` (one callable, set before the job
    starts) called in the lane once the outcome is set."""

    __slots__ = ("_call", "_value", "_error", "_done", "_finished", "on_done")

    def __init__(self, call: Callable[[], Any], on_done: Callable[[], None] | None = None) -> None:
        self._call: Callable[[], Any] | None = call
        self._value: Any = None
        self._error: BaseException | None = None
        self._done = False
        self._finished = threading.Lock()  # held until the outcome is set (`wait`)
        self._finished.acquire()
        self.on_done = on_done

    def _run(self) -> None:
        call = self._call
        assert call is not None  # (run once)
        try:
            self._value = call()
        except BaseException as e:  # noqa: BLE001 - handed to the waiter, as a Future does
            self._error = e
        self._call = call = None  # (its arguments: not kept alive by a parked job)

    def _settle(self) -> None:
        self._done = True
        self._finished.release()
        if self.on_done is not None:
            self.on_done()

    def done(self) -> bool:
        return self._done

    def wait(self) -> None:
        """Block until the job ended."""
        if not self._done:
            self._finished.acquire()
            self._finished.release()

    def exception(self) -> BaseException | None:
        self.wait()
        return self._error

    def result(self) -> Any:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._value


class _Lane:
    __slots__ = ("_go", "_job", "thread")

    def __init__(self) -> None:
        self._go = threading.Lock()
        self._go.acquire()
        self._job: Job | None = None
        # (a daemon thread, joined at exit by `_finish_at_exit` as a pool joins its workers)
        self.thread = threading.Thread(target=self._serve, name=f"lgnb-lane-{next(_NAMES)}", daemon=True)
        with _IDLE_LOCK:
            _LIVE.add(self)
        self.thread.start()

    def give(self, job: Job | None) -> None:
        """Hand over `job` (None: end the thread)."""
        self._job = job
        self._go.release()

    def _serve(self) -> None:
        try:
            while True:
                self._go.acquire()
                job = self._job
                self._job = None
                if job is None:
                    return
                job._run()
                # parked again *before* the waiter is woken: the next job it gives finds
                # this lane idle rather than starting a thread (it waits on `_go` meanwhile)
                with _IDLE_LOCK:
                    parked = len(_IDLE) < IDLE_KEPT and not _closing
                    if parked:
                        _IDLE.append(self)
                job._settle()
                del job
                if not parked:
                    return
        finally:
            with _IDLE_LOCK:
                _LIVE.discard(self)


def run_in_lane(job: Job) -> Job:
    """Start `job` in an idle lane (a new one if none is idle); returns it. Once the
    interpreter exits, refused as a pool refuses new work (RuntimeError)."""
    with _IDLE_LOCK:
        if _closing:
            raise RuntimeError("cannot schedule new futures after interpreter shutdown")
        lane = _IDLE.pop() if _IDLE else None
    if lane is None:
        lane = _Lane()
    lane.give(job)
    return job


def _finish_at_exit() -> None:
    """Interpreter exit: the idle lanes end, the busy ones finish their job first."""
    global _closing
    with _IDLE_LOCK:
        _closing = True
        idle, _IDLE[:] = list(_IDLE), []
        live = list(_LIVE)
    for lane in idle:
        lane.give(None)
    for lane in live:
        if lane.thread is not threading.current_thread():
            lane.thread.join()


def _forget_lanes() -> None:
    """In a forked child: the parent's lanes have no threads here."""
    global _IDLE_LOCK
    _IDLE_LOCK = threading.Lock()
    _IDLE.clear()
    _LIVE.clear()


threading._register_atexit(_finish_at_exit)  # type: ignore[attr-defined]  # (as concurrent.futures does)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_lanes)

"""Parallel tasks of a blocking run, run one after the other in one pool thread while
they are quick.

A super-step with several tasks runs them "in parallel" (LangGraph's semantics: they
overlap, each sees the state as the step began, their writes are applied together at the
barrier). For a synchronous node that overlap only pays when it waits — on the network,
a subprocess, a lock, C code that lets go of the GIL: CPU-bound Python code runs one
thread at a time anyway, and handing a 20 µs node to a pool thread of its own costs more
than the node (a `submit`, a context switch, a wake-up per task).

So the engine learns, per compiled node, whether its last run took less than `HANDOFF`
(runs in the pool are timed too). A multi-task step whose nodes are all known to be quick
runs them one after the other in *one* thread (`_driver._inline`): one hand-off for the
step at most, not one per task; any other step gives each task a pool thread as before (a
node's first run, so a node that sleeps, waits on I/O or on a sibling is seen to be slow,
and its tasks overlap and report as they finish, as in LangGraph). That thread is never
the calling one, as a pool thread never is: a node there could not call `asyncio.run`
under a notebook's running event loop, would see the caller's `threading.local` values
and use its sqlite3 connections, and a program would behave one way on a graph's first
run and another way after. A watchdog keeps the overlap if a
quick node turns slow: once a task has run for `HANDOFF` seconds, every task not started
yet gets a pool thread of its own (each in a copy of the step's context, as a pool task
always does), so a node that blocks, even one waiting for a sibling, holds the others back
by `HANDOFF` at most; it is then known to be slow.

Each task runs in its own copy of the step's context (a `ContextVar` a node sets is not
seen by its siblings), in plan order, and commits from its thread as it ends, so its
update is streamed right after its own events, as LangGraph's pool commits each task.
The batch itself runs in a lane (`lgnb.pregel._lanes`), never in the pool its tasks are
handed to: a batch waiting for a sibling it handed off must not hold a thread that
sibling needs.

Only for runs without a checkpointer: there a handed-off task that finished early would
have its writes saved only once the slow batch task returned, and a crash meanwhile
would lose finished work (with a saver, every finished task's writes are saved at once,
so its steps go to the pool as before). Not used either when the step has a
`step_timeout`, a `max_concurrency` or a `pregel` recorder.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

__all__ = ("HANDOFF", "Batch", "known_quick", "learn")

HANDOFF = 0.001
"""Seconds a task of a batch may run before its unstarted siblings get pool threads of their own."""


def known_quick(node: Any) -> bool:
    """Whether `node` ran before and its last run took less than `HANDOFF` (a node that
    never ran, or ran slow, sends its steps to the pool)."""
    return node.slow is False


def learn(node: Any, seconds: float) -> None:
    """Remember whether a run of `node` was slow (on the compiled node itself)."""
    node.slow = seconds >= HANDOFF


class Batch:
    """The unstarted tasks of one step run one after the other in one thread, which the
    watchdog may hand to pool threads of their own. `take()` gives the next task to run inline (None when none is left
    there); `handed` holds `(future, task)` of those the watchdog started."""

    __slots__ = ("_lock", "_queue", "_start", "_context", "handed", "_running_since", "_stopped", "_handed_off")

    def __init__(self, tasks: list[Any], start: Callable[[Any, contextvars.Context], Future]) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Any] = deque(tasks)
        self._start = start  # (task, context) -> a pool future of that task
        self._context = contextvars.copy_context()  # the step's context, copied per task
        self.handed: list[tuple[Future, Any]] = []
        self._running_since: float | None = None
        self._stopped = False  # nothing more runs here (handed off, or the step stops)
        self._handed_off = False

    # -- the driver's side -------------------------------------------------------------
    def take(self) -> Any:
        """The next task to run here (None: the rest went to the pool, or none is left)."""
        with self._lock:
            if self._stopped or not self._queue:
                return None
            self._running_since = time.monotonic()
            return self._queue.popleft()

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` in a fresh copy of the step's context, watched."""
        _watch(self)
        try:
            return self._context.copy().run(fn, *args)
        finally:
            with self._lock:
                self._running_since = None

    def push_front(self, task: Any) -> None:
        """Run `task` next (an error handler of the task that just failed)."""
        with self._lock:
            if self._handed_off:  # the rest went to the pool: so does this one
                self.handed.append((self._start(task, self._context.copy()), task))
            elif not self._stopped:
                self._queue.appendleft(task)

    def stop(self) -> None:
        """Start nothing more (a failure, a cancel): what was not started is dropped."""
        with self._lock:
            self._stopped = True
            self._queue.clear()
        _unwatch(self)

    def close(self) -> None:
        _unwatch(self)

    # -- the watchdog's side -----------------------------------------------------------
    def _check(self, now: float) -> bool:
        """Hand the unstarted tasks to the pool if the running one has been at it for
        `HANDOFF`; True when this batch needs no more watching."""
        with self._lock:
            if self._stopped:
                return True
            since = self._running_since
            if since is None or now - since < HANDOFF:
                return not self._queue
            rest, self._queue = list(self._queue), deque()
            self._stopped = self._handed_off = True
            for task in rest:
                self.handed.append((self._start(task, self._context.copy()), task))
        return True


# ---------------------------------------------------------------------- the watchdog
_watched: set[Batch] = set()
_cond = threading.Condition()
_thread: threading.Thread | None = None


def _watch(batch: Batch) -> None:
    global _thread
    with _cond:
        if batch in _watched:
            return
        _watched.add(batch)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_watchdog, name="lgnb-step-watchdog", daemon=True)
            _thread.start()
        _cond.notify()


def _unwatch(batch: Batch) -> None:
    with _cond:
        _watched.discard(batch)


def _watchdog() -> None:
    while True:
        with _cond:
            while not _watched:
                _cond.wait()
            batches = list(_watched)
        time.sleep(HANDOFF / 2)
        now = time.monotonic()
        for batch in batches:
            if batch._check(now):
                _unwatch(batch)


def _reset_after_fork() -> None:
    global _cond, _thread
    _watched.clear()
    _cond = threading.Condition()
    _thread = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)

"""How many `@task` calls of a step run at once: `max_concurrency`, as LangGraph's pool.

LangGraph runs a step's tasks and the task calls they make on one executor per run: a
sync run's pool has `max_concurrency` threads (default: Python's `ThreadPoolExecutor`
size, cpu + 4), an async run gates every coroutine on a semaphore of `max_concurrency`
(default: none). The calling node holds one of them while it waits, so an entrypoint
fanning out 8 calls under `max_concurrency=3` runs 2 at a time. lgnb's calls run in lanes
of their own, so they are held back here instead: a step's calls share
`max(1, limit - the step's tasks in the pool)` slots (a lone task LangGraph runs in the
calling thread holds none), and a call queued for a slot starts when a running one ends.

When the step fails (a call raised, a step timeout, the run cancelled), the calls still held
back never start, as LangGraph cancels the ones its pool has not started (`cancel_queued_calls`).

Two differences, both where LangGraph hangs: the gate always has a slot (under
`max_concurrency=1`, or with more waiting nodes than the limit, LangGraph's pool has no
thread left for the calls), and calls made by a task call are not held back (a chain of
calls waiting on calls deeper than the limit would wait forever on a full pool).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lgnb.pregel._loop import Loop

__all__ = ("CallGate", "acall_gate", "call_gate", "cancel_queued_calls")


class CallGate:
    """Up to `slots` started jobs at once; the others wait, in call order."""

    __slots__ = ("free", "queue", "lock", "step")

    def __init__(self, slots: int, step: int) -> None:
        self.free = slots
        self.queue: deque[tuple[Callable[[], object], Callable[[], object]]] = deque()
        self.lock = threading.Lock()
        self.step = step

    def submit(self, start: Callable[[], object], cancel: Callable[[], object] = lambda: None) -> None:
        """Call `start()` now if a slot is free, else when one is (from `done`); a job still
        waiting when the step fails gets `cancel()` instead (`cancel_queued`)."""
        with self.lock:
            if self.free <= 0:
                self.queue.append((start, cancel))
                return
            self.free -= 1
        start()

    def done(self) -> None:
        """A started job ended: its slot goes to the next waiting one, if any."""
        with self.lock:
            if not self.queue:
                self.free += 1
                return
            start, _ = self.queue.popleft()
        start()

    def cancel_queued(self) -> None:
        """The step failed (a call raised, a step timeout, the run cancelled): the jobs still
        waiting never start, as LangGraph's pool cancels the calls it has not started."""
        with self.lock:
            waiting, self.queue = list(self.queue), deque()
        for _, cancel in waiting:
            cancel()


def _slots(loop: Loop, *, is_async: bool) -> int | None:
    from lgnb.pregel._driver import default_concurrency

    limit = loop.run.user_config.get("max_concurrency") or (None if is_async else default_concurrency())
    if not limit:
        return None
    # the step's tasks (not its calls, also tasks of the step) hold slots of their own,
    # but for a lone task LangGraph runs in the calling thread: no step timeout, and no
    # live stream (whose waiter makes LangGraph hand every task to its pool)
    tasks = sum(1 for t in loop.tasks.values() if t.path[-1] is not True)
    # (an `@entrypoint` streams eagerly, also under `invoke`: LangGraph runs it in its pool)
    inline = tasks <= 1 and not loop.live and not loop.step_timeout and not getattr(loop.graph, "stream_eager", False)
    running = 0 if inline else min(limit, tasks)
    return max(1, limit - running)


def call_gate(loop: Loop) -> CallGate | None:
    """The gate of the sync calls of `loop`'s current step (None: no limit). Called
    holding the loop's call lock."""
    gate: CallGate | None = loop.__dict__.get("call_gate")
    if gate is None or gate.step != loop.step:
        slots = _slots(loop, is_async=False)
        if slots is None:
            return None
        gate = loop.__dict__["call_gate"] = CallGate(slots, loop.step)
    return gate


def cancel_queued_calls(loop: Loop) -> None:
    """The calls of `loop`'s step still held back never start (the step failed): a sync
    call's future is cancelled; an async call waiting for the semaphore is cancelled (from
    the event loop's thread: the async driver's)."""
    gate = loop.__dict__.get("call_gate")
    if gate is not None and gate.step == loop.step:
        gate.cancel_queued()
    waiting = loop.__dict__.get("waiting_calls")
    if waiting:
        for runner in list(waiting):
            runner.cancel()


def acall_gate(loop: Loop) -> asyncio.Semaphore | None:
    """The gate of the async calls of `loop`'s current step (None: no limit), made on the
    running event loop. Called holding the loop's call lock."""
    held = loop.__dict__.get("acall_gate")
    if held is None or held[0] != loop.step:
        slots = _slots(loop, is_async=True)
        held = loop.__dict__["acall_gate"] = (loop.step, None if slots is None else asyncio.Semaphore(slots))
    return held[1]

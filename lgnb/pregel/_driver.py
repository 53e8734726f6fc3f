"""Drivers: run a Loop's super-steps, execute its tasks and carry out its I/O.

The whole run is written once, as `_run`: a generator that makes every decision (when to
plan, which tasks start, how many at once, the order in which finished tasks commit, when
a failure or a cancellation stops the step) and *asks* its driver for what needs a clock
or a thread. It yields requests:

    (sync_fn, async_fn, args[, kwargs])
                                call one of them (await the async one) and send back the
                                result; an exception is thrown back into `_run` (the
                                protocol of `lgnb.pregel._program`, whose programs `_run`
                                runs inline with `yield from`)
    _EMIT                       a task committed: hand control to the caller, which drains
                                the stream queue

`drive` (blocking generator), `run_to_end` (blocking, for callers that drain nothing
until the end) and `adrive` (async generator) only answer requests, so
concurrency limits, cancellation and error handling cannot drift apart. One shortcut:
under `run_to_end` a step of one task is `_step_here`, plain calls from `_run` (the
sequential branch of `_step` without its yields, which a sync answerer would only turn
back into the same calls), so no generator of the driver is on the stack while the node
runs. Starting,
cancelling and waiting for parallel tasks is the executor strategy's job: `_THREADS`
(sync nodes in a shared pool; a graph run inside a task uses a second pool, `_pool`) or `_AIO` (asyncio tasks; sync nodes go to threads inside `arun_task`).

A failing task does not discard its finished siblings: their writes are recorded first,
then the error propagates.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
import types
from collections import deque
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ThreadPoolExecutor, wait
from functools import partial
from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import NO_WRITES
from lgnb._internal.context import TaskContext
from lgnb.errors import (
    ErrorCode,
    GraphBubbleUp,
    GraphDrained,
    GraphInterrupt,
    GraphRecursionError,
    create_error_message,
    is_invalid_resume,
)
from lgnb.pregel._background import AsyncBackgroundSaves, BackgroundSaves, close_writer
from lgnb.pregel._cache import aread_cache, read_cache
from lgnb.pregel._call import await_calls, wait_calls
from lgnb.pregel._call_gate import cancel_queued_calls
from lgnb.pregel._handlers import ERROR_SOURCE_NODE, handler_task, handles, node_error_for
from lgnb.pregel._inline import Batch, known_quick, learn
from lgnb.pregel._lanes import Job, run_in_lane
from lgnb.pregel._lifecycle import aon_interrupt, aon_resume, on_interrupt, on_resume, wants_lifecycle
from lgnb.pregel._loop import Loop
from lgnb.pregel._migrate import save_request
from lgnb.pregel._options import DEFAULT_RECURSION_LIMIT
from lgnb.pregel._program import Program, aanswer, answer
from lgnb.pregel._runner import CONTROL_WRITES, arun_task, commit_writes, run_task, task_program
from lgnb.pregel._task import Task
from lgnb.pregel._trace import graph_ended, graph_started
from lgnb.runtime import RunControl

if TYPE_CHECKING:
    from lgnb.pregel._run import StreamSink

__all__ = ("drive", "adrive", "run_to_end", "flush_io", "aflush_io")

_POOLS: dict[str, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()
_IN_WORKER = threading.local()


def _pool() -> ThreadPoolExecutor:
    """The pool parallel tasks run in: a run's own (a graph called from this thread)
    shares one of 64 threads; a graph run *inside* a task (a subgraph, or a graph a node
    invokes) gets threads of a second, much larger pool, so its parallel branches overlap
    too (LangGraph gives every invocation an executor of its own) while a task waiting on
    its graph's branches never holds a thread those branches need."""
    if getattr(_IN_WORKER, "active", False):
        return _nested_pool()
    return _POOLS.get("lgnb-task") or _made("lgnb-task", 64)


def _nested_pool() -> ThreadPoolExecutor:
    """The larger pool (`_pool` from inside a pool worker)."""
    return _POOLS.get("lgnb-nested") or _made("lgnb-nested", 1024)


def _made(name: str, workers: int) -> ThreadPoolExecutor:
    """The pool of threads named `name`, made on first use."""
    with _POOL_LOCK:
        pool = _POOLS.get(name)
        if pool is None:
            pool = _POOLS[name] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        return pool


def _forget_pools() -> None:
    """In a forked child: the parent's pools have no threads here (a task handed to one
    would wait forever); new ones are made on first use."""
    global _POOL_LOCK
    _POOL_LOCK = threading.Lock()
    _POOLS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def default_concurrency() -> int:
    """How many sync tasks of one step run at once without `max_concurrency`: as many
    as LangGraph's executor has threads (Python's `ThreadPoolExecutor` default)."""
    return min(32, (os.cpu_count() or 1) + 4)


def _op_request(loop: Loop, saver: Any, op: tuple) -> Request:
    """The request carrying out one queued op: a node-cache write or a saver call."""
    if op[0] == "cache_set":
        cache = loop.graph.cache
        return (cache.set, cache.aset, (op[1],))
    return save_request(saver, op)


def _flushing(loop: Loop, ops: list[tuple] | None = None, *, admitted: bool = False) -> Program[None]:
    """Carry out the loop's queued checkpoint saves and node-cache writes (or `ops`, taken
    from it earlier; `admitted`: by the gate then, `_background`), in order.

    Each passes the run's `RunControl` gate: once the run is cancelled
    (`request_cancel`), nothing more is written, whoever queued it. `_flush_here` drives
    it for a sync saver."""
    saver = loop.checkpointer
    control = loop.run.control
    if ops is None:
        ops, loop.io = loop.io, []
    begin = None if admitted else getattr(control, "_begin_save", None)
    for op in ops:
        if begin is not None and not begin():
            return  # cancelled: the run writes nothing more
        try:
            yield _op_request(loop, saver, op)
        finally:
            if begin is not None:
                control._end_save()


def _flush_here(loop: Loop, ops: list[tuple] | None = None, *, admitted: bool = False) -> None:
    """`answer(_flushing(...))` for a sync saver, driven by a plain loop: each request's
    sync function called in place, a failure thrown back (the gate's `finally` runs, the
    error goes on). A saved step flushes twice (its task's writes, its checkpoint), and
    `answer`'s round trips were ~3% of a step's cost with an in-memory saver."""
    program = _flushing(loop, ops, admitted=admitted)
    for request in program:
        try:
            request[0](*request[2])  # type: ignore[misc]  # (a saver request always has its sync function)
        except BaseException as exc:  # noqa: BLE001 - the program ends its save, then re-raises it
            program.throw(exc)


def _in_background(loop: Loop) -> bool:
    """Durability "async" and a task not known to be quick is about to run or running:
    its saves overlap that task. Beside quick tasks (or none) a hand-off to the writer
    costs more than it hides, so they are saved at once, after any still in the
    background (`lgnb.pregel._background`). Node-cache writes are never deferred: the
    next call of a cached `@task` in this run must find the value (as in LangGraph)."""
    if loop.durability != "async" or loop.checkpointer is None:
        return False
    for op in loop.io:
        if op[0] == "cache_set":
            return False
    for task in list(loop.tasks.values()):  # (a `@task` call may add one meanwhile)
        if not task.writes and not known_quick(task.node):
            return True
    return False


def flush_io(loop: Loop) -> None:
    """Carry out queued checkpoint saves with a sync saver: now, or in the background
    while slow tasks run (durability "async": `_in_background`)."""
    if loop.io:
        if loop.driven_async:
            # a sync `@task` call's worker thread of an async run: its writes are saved
            # here and now, beside the run's own asyncio chain (savers key writes by
            # checkpoint id, so they need not wait for it)
            _flush_here(loop)
            return
        saves = loop.background
        background = _in_background(loop)
        if saves is None and background:
            saves = loop.background = BackgroundSaves(loop)
        if saves is not None and saves.take(background):
            return
        _flush_here(loop)


async def aflush_io(loop: Loop) -> None:
    """Carry out queued checkpoint saves with an async saver (see `flush_io`)."""
    if loop.io:
        if not loop.driven_async:  # an async `@task` call of a sync run: as in `flush_io`
            await aanswer(_flushing(loop))
            return
        saves = loop.background
        background = _in_background(loop)
        if saves is None and background:
            saves = loop.background = AsyncBackgroundSaves(loop)
        if saves is not None:  # the saves queued now, once the earlier ones are done
            if (ops := await saves.take(background)) is not None:
                await aanswer(_flushing(loop, ops))
            return
        await aanswer(_flushing(loop))


def saves_done(loop: Loop) -> None:
    """Wait for the loop's background saves (durability "async"); raise a failed one's
    error. The loop's run ends here: it lets go of its saves, which hold it (so neither
    waits for the cyclic GC)."""
    saves = loop.background
    if saves is not None:
        try:
            saves.wait()
        finally:
            loop.background = None


async def asaves_done(loop: Loop) -> None:
    saves = loop.background
    if saves is not None:
        try:
            await saves.wait()
        finally:
            loop.background = None


# ---------------------------------------------------------------------- executors
_DROPPED = object()
"""The outcome of a task the step cancelled: nothing to commit."""


class _Threads:
    """Parallel tasks as pool threads (sync driver). A running thread cannot be stopped:
    after a failure it finishes and its writes are kept; tasks not started yet are not."""

    settles = False  # an aborted step does not wait for its running threads
    is_async = False

    @staticmethod
    def start(ctx: TaskContext, policies: Any) -> Future:
        run = contextvars.copy_context().run
        return _pool().submit(run, _run_in_worker, ctx, policies)

    @staticmethod
    def cancel(fut: Future) -> None:
        fut.cancel()

    @staticmethod
    def outcome(fut: Future) -> Any:
        return _DROPPED if fut.cancelled() else fut.result()

    @staticmethod
    def wait(running: Any, timeout: float | None) -> set[Future]:
        if timeout is None and len(running) == 1:
            # one future (a quick step's batch, a lone task): its own condition is a third
            # of the cost of `concurrent.futures.wait`'s waiter (~15 against ~50 µs here)
            fut = next(iter(running))
            try:
                fut.exception()
            except CancelledError:
                pass
            return {fut}
        return wait(running, timeout, return_when=FIRST_COMPLETED)[0]

    @staticmethod
    def wait_unseen(running: Any, timeout: float | None) -> set[Future]:
        """`wait`, without handing the consumer what the tasks stream meanwhile (`drive`
        goes live only for `wait`): once a task of the step failed, LangGraph's runner
        streams nothing more of the step (but where a sibling that fails at once is seen
        in the same wait as an earlier task's end, a race); the tasks still running end
        and are saved."""
        return wait(running, timeout, return_when=FIRST_COMPLETED)[0]

    @staticmethod
    def wait_all(running: Any) -> None:
        return None


class _Aio:
    """Parallel tasks as asyncio tasks (async driver). Cancelled tasks are awaited, so a
    node sees its `CancelledError` before the step ends."""

    settles = True
    is_async = True

    @staticmethod
    def start(ctx: TaskContext, policies: Any) -> asyncio.Future:
        return asyncio.ensure_future(arun_task(ctx, policies))

    @staticmethod
    def cancel(fut: asyncio.Future) -> None:
        fut.cancel()

    @staticmethod
    def outcome(fut: asyncio.Future) -> Any:
        return _DROPPED if fut.cancelled() else fut.result()

    @staticmethod
    async def wait(running: Any, timeout: float | None) -> set[asyncio.Future]:
        return (await asyncio.wait(running, timeout=timeout, return_when=asyncio.FIRST_COMPLETED))[0]

    @staticmethod
    async def wait_all(running: Any) -> None:
        await asyncio.wait(running)


_THREADS = _Threads()
_AIO = _Aio()


def _run_in_worker(ctx: TaskContext, policies: Any) -> BaseException | None:
    before = getattr(_IN_WORKER, "active", False)
    _IN_WORKER.active = True
    began = time.perf_counter()
    try:
        return run_task(ctx, policies)
    finally:
        _IN_WORKER.active = before
        learn(ctx.task.node, time.perf_counter() - began)


def in_worker(fn: Any, *args: Any) -> Any:
    """`fn(*args)` as a pool worker's work: graphs it runs take threads of the nested
    pool, never of the one it holds a thread of (`_pool`)."""
    before = getattr(_IN_WORKER, "active", False)
    _IN_WORKER.active = True
    try:
        return fn(*args)
    finally:
        _IN_WORKER.active = before


class _QuickStep:
    """A quick step's shared state (`_inline`). Every task of the step commits itself from
    the thread that ran it, as it ends, under one lock — as LangGraph's pool commits each
    task from its thread — so its update is streamed right after its own events. Tasks
    run in another pool thread (handed off by the watchdog, or an error handler's) say
    on a `settled` future when they committed: the driver waits for those, nothing else."""

    def __init__(self, loop: Loop, runtime: Any, errors: list[BaseException], pool: ThreadPoolExecutor) -> None:
        self.loop = loop
        self.runtime = runtime
        self.errors = errors
        self.pool = pool  # where the step's tasks go when they leave the batch
        self.default = loop.retry_policy
        self.lock = threading.RLock()  # (a handler's task that ends at once commits in its starter's thread)
        self.settled: list[Future] = []
        # a stream's consumer gets each update as it is committed: set at each commit
        self.progress: Future | None = Future() if loop.drained else None

    def finish(self, task: Task, exc: Any) -> None:
        """Commit `task` (`exc`: its outcome); a run cancelled through its `RunControl`
        commits nothing more (a node that finishes now has its writes thrown away)."""
        if exc is _DROPPED or _abandoned(self.loop.run):
            return
        with self.lock:
            handler = _commit(self.loop, task, exc, self.errors)
            if handler is not None:  # as LangGraph's pool: behind the tasks already running
                self.start(handler, contextvars.copy_context())
            progress = self.progress
            if progress is not None and not progress.done():
                progress.set_result(None)

    def nudge(self) -> None:
        """The batch ended: a stream's driver, waiting on `progress`, wakes."""
        with self.lock:
            progress = self.progress
            if progress is not None and not progress.done():
                progress.set_result(None)

    def progressed(self) -> bool:
        """Whether a task committed since the last call (a stream's consumer may drain)."""
        with self.lock:
            progress = self.progress
            if progress is None or not progress.done():
                return False
            self.progress = Future()
            return True

    def start(self, task: Task, context: contextvars.Context) -> Future:
        """Run `task` in a pool thread of its own, in `context`; it commits as it ends."""
        ctx = _context(self.loop, task, self.runtime)
        settled: Future = Future()
        self.settled.append(settled)

        def done(fut: Future) -> None:
            try:
                self.finish(task, _THREADS.outcome(fut))
            finally:
                settled.set_result(None)

        fut = self.pool.submit(context.run, _run_in_worker, ctx, task.node.retry_policy or self.default)
        fut.add_done_callback(done)
        return fut

    def unsettled(self) -> list[Future]:
        return [f for f in list(self.settled) if not f.done()]


def _run_batch(batch: Batch, step: _QuickStep) -> None:
    """The pool thread's side of `_inline`: the batch's tasks, one after the other, each
    in its own copy of the step's context, each committed as it ends. Stops taking tasks
    once the run is cancelled."""
    run = step.loop.run
    before = getattr(_IN_WORKER, "active", False)
    _IN_WORKER.active = True
    try:
        while (task := batch.take()) is not None:
            if run.cancelled or _abandoned(run):
                batch.stop()
                break
            ctx = _context(step.loop, task, step.runtime)
            began = time.perf_counter()
            exc = batch.run(run_task, ctx, task.node.retry_policy or step.default)
            learn(task.node, time.perf_counter() - began)
            step.finish(task, exc)
    finally:
        _IN_WORKER.active = before
        batch.close()


# ---------------------------------------------------------------------- the run, once
_EMIT = object()
Request = Any


def _commit(
    loop: Loop, task: Task, exc: BaseException | None, errors: list[BaseException]
) -> Task | None:
    """Record a finished task; a failure goes to `errors`, or to the node's error
    handler, whose task (to run in this step) is returned."""
    if exc is None:
        done = task.writes
        for c, _ in done:  # `commit_writes(task, None)`, inline: once per task
            if c not in CONTROL_WRITES:
                break
        else:
            done.append((NO_WRITES, None))
        loop.put_writes(task, done)
        return None
    if not isinstance(exc, GraphBubbleUp) and hasattr(exc, "add_note"):
        exc.add_note(f"During task with name '{task.name}' and id '{task.id}'")
    writes = commit_writes(task, exc)
    handler = handler_task(loop, task, exc) if handles(task, exc) else None
    if handler is not None and writes is not None:
        writes.append((ERROR_SOURCE_NODE, task.name))
    if writes is not None:
        loop.put_writes(task, writes)
    if handler is None:
        errors.append(exc)
    return handler


def _context(loop: Loop, task: Task, runtime: Any) -> TaskContext:
    ctx = TaskContext(task, loop, runtime)
    if task.node.is_error_handler:
        ctx.node_error = node_error_for(loop, task)
    return ctx


def _failed(errors: list[BaseException]) -> bool:
    """Whether an error stops the step's other tasks. Interrupts do not, nor does a
    resume value that failed its `response_schema`: it is raised once the others end,
    so a task answered in the same resume is not cut off after its side effects (and
    run again, with the same answer, on the next resume)."""
    return any(not isinstance(e, GraphBubbleUp) and not is_invalid_resume(e) for e in errors)


def _raise_step_errors(errors: list[BaseException]) -> None:
    """After a step: a real error wins over interrupts; interrupts are raised together.

    `errors` is emptied, and no frame on the way keeps what is raised: each error's
    traceback holds the frames it passed through, so a frame holding it would make a
    cycle that keeps the run's state (tasks, inputs, writes) until a full collection of
    the cyclic GC — after every interrupt, which the run swallows."""
    if not errors:
        return
    error = _step_error(errors)
    errors.clear()
    try:
        raise error
    finally:
        error = None  # type: ignore[assignment]


def _step_error(errors: list[BaseException]) -> BaseException:
    for exc in errors:
        if not isinstance(exc, GraphBubbleUp):
            return exc
    for exc in errors:
        if not isinstance(exc, GraphInterrupt):
            return exc
    return GraphInterrupt(tuple(i for exc in errors for i in (exc.args[0] if exc.args else ())))


def _cancelled(run: Any = None) -> BaseException:
    reason = getattr(getattr(run, "control", None), "cancel_reason", None)
    return asyncio.CancelledError(f"the run was cancelled: {reason}" if reason else "the run was cancelled")


def _cancellable(run: Any) -> RunControl | None:
    """The run's control if it can cancel the run (lgnb's `RunControl`, whose
    `_cancel_reason` the per-task checks read directly), else None: LangGraph's control,
    which a caller may pass, only drains."""
    control = run.control
    return control if isinstance(control, RunControl) else None


def _abandoned(run: Any) -> bool:
    """Whether the run was cancelled through its `RunControl`: it commits nothing more
    (a node that finishes now has its writes thrown away)."""
    control = _cancellable(run)
    return control is not None and control._cancel_reason is not None


def _stop_stragglers(run: Any) -> None:
    """The stream was closed or its task cancelled, and what LangGraph saves on the way
    out is saved: from now on the run is cancelled (`RunControl.request_cancel`), so a
    node still running in a thread sees `runtime.cancel_requested` and anything it
    would still write is dropped."""
    cancel = getattr(run.control, "request_cancel", None)
    if cancel is not None and not run.control.cancel_requested:
        cancel("its stream was closed or its task cancelled")


def _committed(loop: Loop, *, deferred: bool = False, held: _Held | None = None) -> Generator[Request, Any, None]:
    """A task's writes are saved before anything else runs; then the caller may drain.
    `deferred`: the async driver finishes the save before its next request instead
    (`astart_flush`), so the step's other finished tasks commit without a pass of the
    event loop in between, as under LangGraph. `held`: the step's tasks still running
    commit themselves while the consumer holds the stream (`_Held`)."""
    if loop.io:
        yield (flush_io, astart_flush if deferred else aflush_io, (loop,))
    if loop.drained:
        if held is None:
            yield _EMIT
            return
        held.hold()
        try:
            yield _EMIT
        finally:
            held.release()


class _Held:
    """A sync stream's step of several tasks while its consumer holds the stream: between
    two chunks, or after a `break` with the iterator kept (`it = graph.stream(...)` in a
    cell, or IPython's `_`). The driver does not run then, so a task ending in its thread
    commits itself — as LangGraph's pool commits each task in its done callback — and its
    writes are saved: the thread's state (`get_state`) has them, and a resume does not
    run the node again. The driver skips the tasks so committed when it goes on."""

    def __init__(self, loop: Loop, running: dict[Any, Task], errors: list[BaseException], is_async: bool,
                 queue: deque[Task], start: Callable[[], None], limit: int) -> None:
        self.loop = loop
        self.running = running
        self.errors = errors
        # the tasks `max_concurrency` (or the pool's size) held back: one starts as one
        # ends, as in LangGraph's pool, also while the consumer holds the stream
        self.queue = queue
        self.start = start
        self.limit = limit
        self.is_async = is_async  # (an `astream`'s tasks: futures of the event loop, saved by it)
        self.lock = threading.Lock()
        self.holding = False
        self.hooked: set[Any] = set()
        self.early: set[Any] = set()  # the futures committed so (the driver skips them)
        self.handlers: list[tuple[Task, Task]] = []  # (failed task, its error handler's task)
        self.saves: list[asyncio.Future[None]] = []  # an `astream`'s saves of those commits

    def hold(self) -> None:
        """The consumer gets the stream: tasks that end from now on commit themselves, and
        the tasks held back start as threads free up (here, at once if some are free)."""
        with self.lock:
            self.holding = True
            self._start_queued()
        for fut in list(self.running):
            # (one that ended already commits now, in plan order: the driver takes a
            # step's ended tasks in that order, so those left are after the one it took)
            if fut not in self.hooked:
                self.hooked.add(fut)
                fut.add_done_callback(self._ended)

    def _ended(self, fut: Any) -> None:
        with self.lock:
            if not self.holding or fut in self.early:
                return  # the driver runs: it commits the task
            task = self.running.get(fut)
            exc = _THREADS.outcome(fut)
            if task is None or exc is _DROPPED or _abandoned(self.loop.run):
                return
            self.early.add(fut)
            handler = _commit(self.loop, task, exc, self.errors)
            if handler is not None:
                self.handlers.append((task, handler))
            if not self.is_async:
                flush_io(self.loop)
            elif self.loop.io:
                self.saves.append(asyncio.ensure_future(aflush_io(self.loop)))
            self._start_queued()
            started = [f for f in self.running if f not in self.hooked]
        for later in started:  # (outside the lock: one that ended already commits now)
            self.hooked.add(later)
            later.add_done_callback(self._ended)

    def _start_queued(self) -> None:
        """(locked) Start held-back tasks while fewer than `limit` run, unless a task of
        the step failed or the run was cancelled (the driver then records them)."""
        while (self.queue and not _failed(self.errors) and not self.loop.run.cancelled
               and len(self.running) - len(self.early) < self.limit):
            self.start()

    def release(self) -> None:
        """The driver goes on: it commits what ends from now on."""
        with self.lock:
            self.holding = False

    def close(self) -> None:
        """The step is over: let go of its futures (each holds this object in its
        callbacks: a reference cycle the cyclic GC would have to free)."""
        with self.lock:
            self.holding = False
            self.hooked.clear()
            self.early.clear()
            self.handlers.clear()

    def purge(self) -> None:
        """Drop the tasks committed so from the step's running ones (before the driver
        settles the rest: a close, the stop button)."""
        for fut in self.early:
            self.running.pop(fut, None)


async def _saved_meanwhile(held: _Held) -> None:
    """The saves `astream`'s tasks started while the consumer held the stream, done
    before the driver saves anything more (a failed one raises here)."""
    saves, held.saves = held.saves, []
    for save in saves:
        await save


def _sync_never(*_: Any) -> None:  # (a request only the async driver makes)
    raise AssertionError("an async-only request reached the sync driver")


def _task_starts(loop: Loop, task: Task, runtime: Any, control: Any) -> TaskContext:
    """A task of a step run in turn is about to start: the run must not be cancelled;
    its context (an error handler's carries the error)."""
    run = loop.run
    if run.cancelled or (control is not None and control._cancel_reason is not None):
        raise _cancelled(run)
    ctx = TaskContext(task, loop, runtime)
    if task.node.is_error_handler:
        ctx.node_error = node_error_for(loop, task)
    if loop.recorder is not None:
        loop.recorder.start(task)
    return ctx


def _task_ends(loop: Loop, task: Task, exc: BaseException | None, errors: list[BaseException],
               control: Any) -> Task | None:
    """A task run in turn ended: committed unless the run was cancelled meanwhile; an
    error handler's task to run next is returned."""
    if control is not None and control._cancel_reason is not None:
        raise _cancelled(loop.run)
    return _commit(loop, task, exc, errors)


def _step_here(loop: Loop, runtime: Any, control: RunControl | None, *,
               defer: bool = False, tasks: list[Task] | None = None) -> list[BaseException] | None:
    """`_step` for a sync run that nobody drains before its end (`run_to_end`): a step of
    one task runs here as plain calls, its saves included, so no generator of the driver
    is on the stack while the node runs (every exception raised in the node walks each
    one) and no request makes a round trip through them — ~3% of a ReAct node's engine
    overhead. A step of several tasks, or with a step timeout, is `_step`'s. `control`:
    the run's `_cancellable` control.

    `defer`: a stream that is not live (`_plain_steps`), whose lone task's events are
    handed over at the next step's start anyway: the step's errors are returned instead
    of raised, for the caller to hand the consumer the events so far first, where `_step`
    does (the caller checked the step has one task and no timeout: `tasks`, the step's)."""
    if tasks is None:
        tasks = loop.runnable_tasks()
    if not tasks:
        return None
    if len(tasks) > 1 or loop.step_timeout:
        answer(_step(loop, runtime, _THREADS))
        return None
    run = loop.run
    recorder = loop.recorder
    default = loop.retry_policy
    timed = loop.checkpointer is not None and loop.durability == "async"
    errors: list[BaseException] = []
    i = 0
    while i < len(tasks):  # one task, and the error handlers it hands on to
        task = tasks[i]
        i += 1
        # `_task_starts` and `_task_ends`, inline: this runs once per node of every `invoke`
        if run.cancelled or (control is not None and control._cancel_reason is not None):
            raise _cancelled(run)
        ctx = TaskContext(task, loop, runtime)
        node = task.node
        if node.is_error_handler:
            ctx.node_error = node_error_for(loop, task)
        if recorder is not None:
            recorder.start(task)
        if timed:
            began = time.perf_counter()
            exc = run_task(ctx, node.retry_policy or default)
            learn(node, time.perf_counter() - began)
        else:
            exc = run_task(ctx, node.retry_policy or default)
        if exc is not None and not isinstance(exc, Exception):
            raise exc  # KeyboardInterrupt, SystemExit: not the task's error, as in `_step`
        if control is not None and control._cancel_reason is not None:
            raise _cancelled(run)
        handler = _commit(loop, task, exc, errors)
        if loop.io:  # a task's writes are saved before anything else runs
            flush_io(loop)
        if errors and _failed(errors):
            break
        if handler is not None:
            tasks.insert(i, handler)
    if errors:
        exc = None  # (see `_raise_step_errors`)
        if defer:
            return errors
        _raise_step_errors(errors)
    return None


def _plain_steps(loop: Loop, ex: Any) -> bool:
    """Whether a drained sync stream's lone-task steps may run as `_step_here`'s plain
    calls: the stream is not live (its node runs in this thread either way, and nothing
    of the step reaches the consumer before the step ends but a failure's events, which
    `_run` hands over before raising, as `_step` does) and no node has an error handler
    (`_step` hands over a failure's events before its handler runs)."""
    if ex.is_async or loop.live:
        return False
    return not any(node.error_handler is not None for node in loop.nodes.values())


def _step(loop: Loop, runtime: Any, ex: Any) -> Generator[Request, Any, None]:
    """Run the step's tasks: inline when alone, else concurrently.
    (`_step_here` is this for a sync run nobody drains before its end.)"""
    tasks = loop.runnable_tasks()
    if not tasks:
        return
    run = loop.run
    default = loop.retry_policy
    errors: list[BaseException] = []
    step_timeout = loop.step_timeout
    if len(tasks) == 1 and not step_timeout:
        # looked up once per step: a plain run pays one test per feature, not a lookup
        control = _cancellable(run)
        # durability "async" saves in the background only while slow tasks run: learn which
        timed = loop.checkpointer is not None and loop.durability == "async"
        is_async = ex.is_async
        i = 0
        while i < len(tasks):
            task = tasks[i]
            i += 1
            ctx = _task_starts(loop, task, runtime, control)
            policies = task.node.retry_policy or default
            began = time.perf_counter() if timed else 0.0
            if is_async:  # its requests go straight to the driver's answerer
                exc = yield from task_program(ctx, policies, True)
            else:  # one request: while it runs, no generator of the driver is on the stack
                try:
                    exc = yield (run_task, None, (ctx, policies))  # (see `run_task`)
                except _Closed as closed:  # the consumer stopped the stream meanwhile
                    if closed.outcome is not _DROPPED and _keeps_late_writes(loop):
                        _commit(loop, task, closed.outcome, errors)
                        if loop.io:
                            yield (flush_io, aflush_io, (loop,))
                    raise
                except _Stopped as stopped:  # (see `_live`)
                    if stopped.outcome is not _DROPPED and _keeps_late_writes(loop):
                        _commit(loop, task, stopped.outcome, errors)
                        if loop.io:
                            yield (flush_io, aflush_io, (loop,))
                    raise stopped.error from None
            early: _Early | None = None
            if isinstance(exc, _Early):  # committed from its thread while the consumer held the stream
                early, exc = exc, exc.exc
                errors.extend(early.errors)
            if timed:
                learn(task.node, time.perf_counter() - began)
            if exc is not None and not isinstance(exc, Exception):
                if isinstance(exc, _Closed):  # `astream` closed while the node ran: cancelled
                    yield from _cancelled_by_close(loop, (task,))
                elif loop.live and not is_async and (writes := commit_writes(task, exc)) is not None:
                    # a live stream's task ran in a thread, as in LangGraph's pool, whose
                    # future records any error; else LangGraph records only an `Exception`
                    loop.put_writes(task, writes)
                    if loop.io:
                        yield (flush_io, aflush_io, (loop,))
                raise exc
            handler = _task_ends(loop, task, exc, errors, control) if early is None else early.handler
            if loop.io:  # a task's writes are saved before anything else runs
                # (at once before an error handler's task: a failed save must not reach
                # it as its own error, to retry or handle)
                yield (flush_io, astart_flush if handler is None else aflush_io, (loop,))
            # `invoke` drains nothing between tasks (no round trip); a stream hands over
            # a lone task's events at the next step's start, once its writes are applied
            # (a consumer changing a chunk cannot change the state), as LangGraph does,
            # and at once when it failed, the step runs more, or the stream is live
            # (LangGraph runs a live stream's every task in its pool and yields as each ends)
            # — but not between a failed task and its error handler: on LangGraph a consumer
            # that stops at the failure's events does not stop the handler
            if loop.drained and handler is None and (loop.live or exc is not None or len(tasks) > 1):
                yield _EMIT
            if errors and _failed(errors):
                break
            if handler is not None:
                tasks.insert(i, handler)
    elif (ex is _THREADS and loop.checkpointer is None and loop.recorder is None and not step_timeout
          and not run.user_config.get("max_concurrency") and all(known_quick(t.node) for t in tasks)):
        yield from _inline(loop, runtime, tasks, errors)
    else:
        yield from _concurrently(loop, runtime, tasks, ex, errors)
    if errors:
        exc = None  # (see `_raise_step_errors`)
        _raise_step_errors(errors)


def _inline(loop: Loop, runtime: Any, tasks: list[Task], errors: list[BaseException]
            ) -> Generator[Request, Any, None]:
    """A sync step of known-quick nodes, run one after the other by *one* pool thread
    (`_run_batch`): one hand-off for the step instead of one per task, while every task
    still runs off the calling thread, as LangGraph's pool runs a step's tasks (a node
    that calls `asyncio.run` under a notebook's running event loop, or keeps a
    `threading.local`, sees what it sees there). The tasks not started yet go to other
    pool threads once one runs for `HANDOFF` (`lgnb.pregel._inline`). Each task commits
    as it ends, from its thread (`_QuickStep`). A failure does not stop the siblings
    planned after it: LangGraph starts a step's tasks together, so they all run (their
    side effects happen) before the error is raised.

    The batch runs in a lane, never in the pool its step's tasks are handed to: a batch
    waiting on a sibling it handed off must not hold the thread that sibling needs (64
    callers at once, or `@task` calls each running a graph, would wait forever). Never in
    the calling thread either, even for an `invoke` nobody drains: a node there would see
    the caller's `threading.local` values, its sqlite3 connections would work where they
    fail in a pool thread, and the program would behave one way on a graph's first run
    (nodes not known quick yet, so in the pool) and another way after."""
    run = loop.run
    step = _QuickStep(loop, runtime, errors, _pool())
    batch = Batch(tasks, step.start)
    # (a lane: the cheapest hand-off, `lgnb.pregel._lanes`; its end counts as progress)
    job = run_in_lane(Job(partial(_run_batch, batch, step), step.nudge))
    try:
        while True:
            waiting: dict[Any, None]
            if not job.done():  # (a stream waits on its progress, which the job's end sets too)
                waiting = {job if step.progress is None else step.progress: None}
            else:
                waiting = dict.fromkeys(step.unsettled())
                if not waiting:
                    break
                if step.progress is not None:
                    waiting[step.progress] = None
            yield (_THREADS.wait, _THREADS.wait, (waiting, None))
            if step.progressed():  # (a stream: its consumer gets each update as it is committed)
                yield _EMIT
            if job.done():
                job.result()
    except (_Closed, KeyboardInterrupt):
        # the consumer closed the stream, or the stop button was pressed while this
        # thread waited: as LangGraph's pool, the step's tasks all run and end, their
        # writes kept, and nothing more is streamed
        job.wait()
        while left := step.unsettled():
            wait(left)
        raise
    except BaseException:
        batch.stop()
        raise
    if _abandoned(run):
        raise _cancelled(run)
    yield from _committed(loop)  # (a node-cache write queued by a commit: saved now)


def _concurrently(
    loop: Loop, runtime: Any, tasks: list[Task], ex: Any, errors: list[BaseException]
) -> Generator[Request, Any, None]:
    """At most `max_concurrency` tasks at once (the next starts when one ends); finished
    tasks commit in plan order; a failure or a cancelled run starts nothing more and
    cancels what can be cancelled."""
    run = loop.run
    default = loop.retry_policy
    order: dict[int, float] = {id(t): i for i, t in enumerate(tasks)}
    limit = run.user_config.get("max_concurrency") or (len(tasks) if ex.is_async else default_concurrency())
    queue = deque(tasks)
    running: dict[Any, Task] = {}
    stopping = False
    wait_for = ex.wait
    timeout = loop.step_timeout
    deadline = time.monotonic() + timeout if timeout else None

    def start_next() -> None:
        task = queue.popleft()
        ctx = _context(loop, task, runtime)
        if loop.recorder is not None:
            loop.recorder.start(task)
        running[ex.start(ctx, task.node.retry_policy or default)] = task

    # (a live stream's waits hold the step too: `_live`)
    held = loop.held = _Held(loop, running, errors, ex.is_async, queue, start_next, limit) if loop.drained else None

    try:
        while True:
            if _abandoned(run):
                raise _cancelled(run)
            while queue and not stopping and len(running) < limit:
                start_next()
            if not running:
                break
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            done = yield (wait_for, wait_for, (running, left))
            if not done:  # `step_timeout` passed with tasks still running
                if held is not None:
                    held.purge()
                cancel_queued_calls(loop)  # (the `@task` calls held back never start)
                if not ex.is_async:
                    # a thread cannot be stopped: as LangGraph, the step waits for those
                    # running and keeps their writes (a resume does not run them again;
                    # under durability "exit" it does: saved before they end); the tasks
                    # its pool had not started are cancelled, recorded so
                    yield from _record_cancelled(loop, queue)
                    queue.clear()
                    yield from _settle(loop, running, ex, errors, keep=_keeps_late_writes(loop), unseen=True)
                else:  # as LangGraph: every task of the step cancelled, recorded so
                    yield from _stop_async(loop, running, queue, ex, errors, order)
                # LangGraph's async runs time out in `asyncio.wait_for`: a bare TimeoutError
                raise TimeoutError() if ex.is_async else TimeoutError("Timed out")
            if _abandoned(run):
                raise _cancelled(run)
            for fut in sorted(done, key=lambda f: order[id(running[f])]):
                task = running.pop(fut)
                if held is not None and fut in held.early:  # committed while the consumer held the stream
                    continue
                exc = ex.outcome(fut)
                if exc is _DROPPED and ex.is_async and stopping and not run.cancelled:
                    # a sibling's failure cancelled it: LangGraph records the cancel (not
                    # under durability "exit": it saved the thread as the failure came),
                    # once its stream raised: nothing of it is streamed
                    if _keeps_late_writes(loop) and (writes := commit_writes(task, asyncio.CancelledError())) is not None:
                        loop.put_writes(task, writes, quiet=True)
                        yield from _committed(loop)
                elif exc is not _DROPPED:
                    if wait_for is not ex.wait and not _keeps_late_writes(loop):
                        continue  # (durability "exit": saved as the failure was raised)
                    handler = _commit(loop, task, exc, errors)
                    if handler is not None:
                        # as LangGraph's pool (or semaphore): behind the tasks still waiting
                        order[id(handler)] = order[id(task)] + 0.5
                        queue.append(handler)
                    if wait_for is ex.wait:
                        yield from _committed(loop, deferred=handler is None, held=held)
                    elif loop.io:
                        yield (flush_io, aflush_io, (loop,))
                    if held is not None and held.saves:
                        yield (_sync_never, _saved_meanwhile, (held,))
                    while held is not None and held.handlers:  # (tasks that failed meanwhile)
                        failed, handler = held.handlers.pop(0)
                        order[id(handler)] = order[id(failed)] + 0.5
                        queue.append(handler)
            # a cancelled run stops the step; a failure too in an async run (LangGraph
            # cancels the siblings)
            if not stopping and (run.cancelled or (ex.is_async and errors and _failed(errors))):
                stopping = True
                cancel_queued_calls(loop)
                for fut in running:
                    ex.cancel(fut)
                if not run.cancelled:  # the tasks `max_concurrency` held back: cancelled too
                    if _keeps_late_writes(loop):
                        yield from _record_cancelled(loop, queue)
                    queue.clear()
            elif not stopping and not ex.is_async and errors and _failed(errors):
                # a sync step, as LangGraph's pool of threads: the threads the finished
                # tasks freed have taken the next tasks before the failure is seen; the
                # tasks still queued are cancelled (recorded so: a resume runs them), the
                # running ones end and are saved, and the step streams nothing more
                while queue and len(running) < limit:
                    start_next()
                stopping = True
                cancel_queued_calls(loop)
                wait_for = _THREADS.wait_unseen
                yield from _record_cancelled(loop, queue)
                queue.clear()
    except _Closed:
        if held is not None:
            held.purge()
        if ex.is_async:
            # as LangGraph: the tasks that ended are kept, the others cancelled (and recorded so)
            yield from _stop_async(loop, running, queue, ex, errors, order)
        else:
            # LangGraph's pool was handed every task of the step, and on the way out waits
            # for them all: the tasks `max_concurrency` held back run too
            if not stopping:
                yield from _settle(loop, running, ex, errors, keep=_keeps_late_writes(loop),
                                   queue=queue, start=start_next, limit=limit)
            else:
                yield from _settle(loop, running, ex, errors, keep=_keeps_late_writes(loop))
        raise
    except KeyboardInterrupt:
        if held is not None:
            held.purge()
        if not ex.is_async:
            # the stop button while threads run: as LangGraph, they end and are kept
            # (under durability "exit" not: the thread is saved as the interrupt comes)
            yield from _settle(loop, running, ex, errors, keep=_keeps_late_writes(loop))
            raise
        for fut in running:
            ex.cancel(fut)
        raise
    except asyncio.CancelledError:
        if held is not None:
            held.purge()
        if not ex.is_async or run.cancelled or _abandoned(run):
            # (the run's own cancel, `RunControl.request_cancel`: nothing more is committed)
            for fut in running:
                ex.cancel(fut)
            if running and ex.settles:
                yield (ex.wait_all, ex.wait_all, (list(running),))
            raise
        # the run itself was cancelled (`task.cancel()`, `asyncio.wait_for` running out):
        # as LangGraph, the tasks that ended are kept, and those still running or held
        # back by `max_concurrency` are cancelled, each with its `CancelledError`
        # recorded as its error (a resume runs them again)
        yield from _stop_async(loop, running, queue, ex, errors, order)
        raise
    except BaseException:
        for fut in running:
            ex.cancel(fut)
        if running and ex.settles:
            yield (ex.wait_all, ex.wait_all, (list(running),))
        raise
    finally:
        loop.held = None
        if held is not None:
            held.close()


def _settle(loop: Loop, running: dict[Any, Task], ex: Any, errors: list[BaseException], *,
            keep: bool = True, queue: deque[Task] | None = None, start: Any = None,
            limit: int = 0, unseen: bool = False) -> Generator[Request, Any, None]:
    """Wait for the `running` threads of a timed-out step, or of a stream its consumer
    closed, committing each as it ends: as in LangGraph, a thread cannot be stopped, so its
    writes are kept and a resume does not run the node again (unless `keep` is false: then
    only those that had ended are kept, see `_keeps_late_writes`). A task still waiting
    for a pool thread runs too: LangGraph's sync runner hands its pool every task of the
    step without cancel-on-exit, and waits for the pool on the way out (a loaded machine
    is where a task has not started yet when the consumer closes). So do the tasks of
    `queue`, which `max_concurrency` held back: `start` starts the next, at most `limit`
    running at once. `unseen`: the consumer is not handed what they stream (a timed-out
    step, whose error LangGraph raises before they end)."""
    ended = () if keep else {fut for fut in running if fut.done()}
    wait_for = ex.wait_unseen if unseen else ex.wait  # (`drive` goes live only for `wait`)
    while running or queue:
        while queue and len(running) < limit:
            start()
        done = yield (wait_for, wait_for, (running, None))
        for fut in done:
            task = running.pop(fut)
            exc = ex.outcome(fut)
            if exc is not _DROPPED and (keep or fut in ended):
                _commit(loop, task, exc, errors)
                if not unseen:
                    yield from _committed(loop)
                elif loop.io:
                    yield (flush_io, aflush_io, (loop,))


def _stop_async(loop: Loop, running: dict[Any, Task], queue: deque[Task], ex: Any,
                errors: list[BaseException], order: dict[int, float]) -> Generator[Request, Any, None]:
    """Stop an async step (a closed `astream`, `step_timeout`): the tasks that ended are
    kept, the running ones cancelled and, with those `max_concurrency` held back, recorded
    as cancelled, as LangGraph does (not under durability "exit")."""
    for fut in running:
        ex.cancel(fut)
    if running:
        yield (ex.wait_all, ex.wait_all, (list(running),))
    cancelled = []
    for fut in sorted(running, key=lambda f: order[id(running[f])]):
        if (exc := ex.outcome(fut)) is _DROPPED:
            cancelled.append(running[fut])
        else:
            _commit(loop, running[fut], exc, errors)
    try:
        yield from _committed(loop)
    except _Closed:
        # a live `astream` whose consumer was cancelled closes as the ended tasks' updates
        # are handed over: the cancelled ones are recorded all the same
        yield from _cancelled_by_close(loop, cancelled + list(queue))
        raise
    else:
        yield from _cancelled_by_close(loop, cancelled + list(queue))
    finally:
        running.clear()
        queue.clear()


def _record_cancelled(loop: Loop, tasks: Any) -> Generator[Request, Any, None]:
    """Tasks of a sync step a failure stopped before they started: as LangGraph's
    cancelled futures, each has a `CancelledError` recorded as its error, so a resume
    runs it."""
    for task in tasks:
        if (writes := commit_writes(task, asyncio.CancelledError())) is not None:
            loop.put_writes(task, writes)
    if loop.io:
        yield (flush_io, aflush_io, (loop,))


def _keeps_late_writes(loop: Loop) -> bool:
    """Whether a task that ends after its stream was closed has its writes kept: not
    under durability "exit", where LangGraph saves the thread as the stream closes, before
    the threads still running end (a resume runs their nodes again)."""
    return loop.durability != "exit"


def _cancelled_by_close(loop: Loop, tasks: Any) -> Generator[Request, Any, None]:
    """An async step was stopped (its stream closed, `step_timeout`) while `tasks` ran or
    waited: they were cancelled, and, as LangGraph does, each has a `CancelledError`
    recorded as its error (a resume runs it again) — except under durability "exit",
    whose save on the way out comes first."""
    if not _keeps_late_writes(loop):
        return
    for task in tasks:
        if (writes := commit_writes(task, asyncio.CancelledError())) is not None:
            loop.put_writes(task, writes)
    if loop.io:
        yield (flush_io, aflush_io, (loop,))


def _run(loop: Loop, input: Any, resuming: bool | None, ex: Any) -> Generator[Request, Any, None]:
    """One (sub)graph run: input, super-steps until done, exit bookkeeping."""
    run = loop.run
    runtime = run.runtime_for(loop)
    loop.runtime = runtime
    loop.driven_async = ex.is_async
    flush = (flush_io, aflush_io, (loop,))  # asked for only when I/O is queued
    exc: BaseException | None = None
    tracing = run.tracing
    try:
        if tracing:
            yield from graph_started(loop, input, ex.is_async)
        loop.first(input, resuming=resuming)
        if loop.io:
            yield flush
        if loop.is_resuming and wants_lifecycle(loop):
            yield (on_resume, aon_resume, (loop,))
        cached = loop.graph.cache is not None
        here = not ex.is_async and not loop.drained  # `run_to_end`: steps as plain calls
        plain = not here and _plain_steps(loop, ex)  # a stream's lone tasks, likewise
        control = _cancellable(run)
        while loop.tick():
            if loop.io:
                yield flush
            if cached:  # served from the node cache: not run
                yield (read_cache, aread_cache, (loop,))
                yield from _committed(loop)
            # the step is planned and nothing of it has run: the consumer gets every event
            # so far first (the last step's updates and values, this one's task starts), so
            # one that stops at an event stops the run there, as with LangGraph
            if loop.drained:
                yield _EMIT
            try:
                if here:
                    _step_here(loop, runtime, control)
                elif plain and not loop.step_timeout and len(tasks := loop.runnable_tasks()) == 1:
                    failed = _step_here(loop, runtime, control, defer=True, tasks=tasks)
                    tasks = None  # (this frame lives as long as the run: hold no task)
                    if failed:
                        yield _EMIT  # the failure's events first, as `_step` hands them over
                        _raise_step_errors(failed)
                else:
                    yield from _step(loop, runtime, ex)
            except BaseException:
                if loop.__dict__.get("calls"):  # the step failed: held-back calls never start
                    cancel_queued_calls(loop)
                raise
            finally:
                if loop.__dict__.get("calls"):  # `@task` calls still running
                    yield (wait_calls, await_calls, (loop,))
            if loop.io:  # (after a save the async driver has not finished: behind it)
                yield (flush_io, astart_flush, (loop,))
            loop.after_tick()
            if loop.io and loop.durability != "async":  # "async": saved beside the next step
                yield flush
            if run.cancelled or (control is not None and control._cancel_reason is not None):
                raise _cancelled(run)
    except BaseException as e:  # noqa: BLE001 - re-raised below unless it is a swallowed interrupt
        exc = e
    try:
        swallow = loop.finish(exc)
        if loop.io or run.lease is not None:  # (`adrive` also ends a task's save here, so
            yield flush  # one that fails does not skip giving the lease back below)
        if loop.background is not None:  # durability "async": all saved before answering
            yield (saves_done, asaves_done, (loop,))
    finally:
        if not loop.is_nested:
            close_writer(run)
        if run.lease is not None:  # a root run's thread is free (one run per thread)
            from lgnb.pregel._lease import arelease_lease, release_lease

            yield (release_lease, arelease_lease, (run,))
    if not loop.is_nested and isinstance(exc, (asyncio.CancelledError, _Closed)):
        _stop_stragglers(run)
    if isinstance(exc, GraphInterrupt) and not loop.is_nested and wants_lifecycle(loop):
        yield (on_interrupt, aon_interrupt, (loop, exc))
    if tracing:
        if loop.drained:  # the consumer has every event before the graph's run ends
            yield _EMIT
        # a run out of steps (or drained) raises once its stream is drained: its trace
        # ends with that error already, as LangGraph's does
        ended = exc if exc is not None else exit_error(loop, loop.config)
        yield from graph_ended(loop, None if swallow else ended)
        ended = None
    # the error's traceback holds this frame, which holds the loop: the frame lets go of
    # the error (raised, or a swallowed interrupt), or the run's state would wait in that
    # cycle for a full collection of the cyclic GC
    try:
        if exc is not None and not swallow:
            raise exc
    finally:
        exc = None


def exit_error(loop: Loop, config: dict[str, Any]) -> Exception | None:
    """The error a run that finished its steps without failing ends with, if any: the
    recursion limit reached (`GraphRecursionError`) or the run drained (`GraphDrained`)."""
    if loop.status == "draining":
        return GraphDrained(loop.run.control.drain_reason or "shutdown")
    if loop.status == "out_of_steps":
        limit = config.get("recursion_limit", DEFAULT_RECURSION_LIMIT)
        return GraphRecursionError(
            create_error_message(
                message=(
                    f"Recursion limit of {limit} reached without "
                    "hitting a stop condition. You can increase the limit by setting "
                    "the `recursion_limit` config key."
                ),
                error_code=ErrorCode.GRAPH_RECURSION_LIMIT,
            )
        )
    return None


def _start_saving(loop: Loop) -> asyncio.Future[None] | None:
    """Start saving `loop`'s queued checkpoint I/O in the driver's task; `None` when it is
    done already (a saver whose async methods finish without suspending: the in-memory
    savers), else the save, going on in a task of its own.

    A nested graph's save always ends with a hop through the event loop (a task to await):
    under LangGraph the parent's stream takes a subgraph's chunks while the subgraph runs,
    so a consumer sees a subgraph node's update before the subgraph's end; and so with
    lgnb. The save starts here all the same (the loop's queued I/O is taken now), so after
    a task (`astart_flush`) the hop comes after the step's barrier, as the root's does:
    LangGraph hands a subgraph's chunks to the parent's stream through
    `call_soon_threadsafe`, so its consumer reads a subgraph node's update once
    `add_messages` gave the node's messages their ids."""
    coro = aflush_io(loop)
    try:
        waiting = coro.send(None)
    except StopIteration:
        return asyncio.ensure_future(_hop()) if loop.is_nested else None
    except BaseException:
        coro.close()
        raise
    return asyncio.ensure_future(_resumed(coro, waiting))


async def _hop() -> None:
    """Nothing: awaited as a task, one pass of the event loop (`_start_saving`)."""


async def _finish_saving(save: asyncio.Future[None]) -> None:
    """Saves started are finished even when the run is cancelled meanwhile (a consumer
    that stops streaming must not lose the writes of the task it just saw); the
    cancellation is raised once the save is done. However often it comes: an anyio cancel
    scope (Starlette and FastAPI when a client goes away) cancels the task again at every
    pass of the event loop until it leaves the scope."""
    cancelled: asyncio.CancelledError | None = None
    while not save.done():
        try:
            await asyncio.shield(save)
        except asyncio.CancelledError as e:
            cancelled = e
    save.result()  # the save's own error, if it failed
    if cancelled is not None:
        raise cancelled


async def _finish_saving_or_drop(save: asyncio.Future[None], loop: Loop) -> None:
    """`_finish_saving` of a save `adrive` finishes late. If it failed, what `loop` queued
    since (the checkpoint of the step's barrier, which reads the writes that were not
    saved: a `DeltaChannel` checkpoint holds none of its values) is dropped, as if the
    save had failed before the barrier: the thread stays at its last saved checkpoint and
    a resume runs the task again."""
    try:
        await _finish_saving(save)
    except BaseException:
        if save.done() and not save.cancelled() and save.exception() is not None:
            loop.io = []
        raise


async def astart_flush(loop: Loop) -> None:
    """`aflush_io` after a step's lone task (`_step`): `adrive` starts the save and
    finishes it before its next request, not at once. So, as under LangGraph (which saves
    a task's writes in the background), nothing else on the event loop runs between the
    task's end and the step's barrier: an `astream_events` consumer (AG-UI) serializing a
    live update chunk reads it after `add_messages` gave its messages their ids. Awaited
    anywhere else, it is `aflush_io`."""
    await aflush_io(loop)


async def _then_flush(previous: asyncio.Future[None], previous_loop: Loop, loop: Loop,
                      ops: list[tuple]) -> None:
    """Save `ops` (taken from `loop.io` when asked) once the save `previous` is done: an
    `astart_flush` that came while it was under way. A failed `previous` drops them (the
    checkpoint they belong with is not saved)."""
    await _finish_saving_or_drop(previous, previous_loop)
    loop.io[:0] = ops
    await aflush_io(loop)


@types.coroutine
def _resumed(coro: Any, waiting: Any) -> Generator[Any, Any, Any]:
    """Go on with `coro`, which has yielded `waiting` (the future it awaits) to the task
    now running this: what `await coro` would do from that point."""
    while True:
        try:
            reply = yield waiting
        except BaseException as e:  # noqa: BLE001
            try:
                waiting = coro.throw(e)
            except StopIteration as done:
                return done.value
            continue
        try:
            waiting = coro.send(reply)
        except StopIteration as done:
            return done.value


class _Stopped(BaseException):
    """`_live`: the stop button was pressed while the lone task ran in a thread; it ended
    (`outcome`, `run_task`'s result), and `error` (the `KeyboardInterrupt`) stops the run."""

    def __init__(self, error: BaseException, outcome: Any) -> None:
        super().__init__()
        self.error = error
        self.outcome = outcome


class _Closed(BaseException):
    """Thrown into `_run` when the caller closes the driver: the run ends (and saves what
    it must) without handing control back. `outcome`: what the lone task running in a
    thread at that moment returned (`run_task`'s result; `_DROPPED`: none ran)."""

    def __init__(self, outcome: Any = _DROPPED) -> None:
        super().__init__()
        self.outcome = outcome


# ---------------------------------------------------------------------- the two drivers
def run_to_end(loop: Loop, input: Any, *, resuming: bool | None = None) -> None:
    """Run `loop` to completion in this thread, handing nothing back between tasks — for
    callers that drain nothing until the end (`invoke`, a nested graph's run).

    Not a generator: `_run` is answered by `answer` directly, and is not even asked to
    stop after each task (`loop.drained`). One generator fewer on the stack also makes
    every exception a node raises (and LangChain raises a few per model call, caught)
    cheaper to raise."""
    loop.drained = False
    answer(_run(loop, input, resuming, _THREADS))


def drive(loop: Loop, input: Any, *, resuming: bool | None = None,
          live: StreamSink | None = None) -> Iterator[None]:
    """Run `loop` to completion in the caller's thread, yielding whenever events can be
    drained: at each step's start (so the run goes on only when the consumer asks for
    more, as LangGraph's stream), after a step's tasks, and — with `live`, the run's
    sink made blocking — while a task runs in a worker thread, as its events come (a
    node not known to be quick, so its tokens and custom events reach the consumer
    while it runs; a quick one runs here)."""
    loop.drained = True
    loop.live = live is not None
    program = _run(loop, input, resuming, _THREADS)
    reply: Any = None
    error: BaseException | None = None
    closed = False
    while True:
        try:
            request = program.send(reply) if error is None else program.throw(error)
        except StopIteration:
            break
        except _Closed:
            break
        reply = error = None
        if request is _EMIT:
            if closed:
                continue
            try:
                yield
            except GeneratorExit:
                closed = True
                error = _Closed()
            continue
        fn = request[0]
        try:
            if live is not None and (fn is run_task or fn is _THREADS.wait) and not closed:
                reply = yield from _live(live, fn, request[2], loop)
            else:
                reply = fn(*request[2], **request[3]) if len(request) > 3 else fn(*request[2])
        except GeneratorExit:  # the consumer stopped while a task ran in a thread
            closed = True
            error = _Closed()
        except _Closed as e:  # ... a lone task, which finished: `_step` keeps its writes
            closed = True
            error = e
        except BaseException as e:  # noqa: BLE001 - the run decides what to do with it
            error = e
    if closed:
        raise GeneratorExit


def _live(sink: StreamSink, fn: Any, args: tuple, loop: Loop) -> Generator[None, None, Any]:
    """`fn(*args)` for a live stream: a task (`run_task`) or a wait for parallel tasks
    (`_THREADS.wait`, of `loop`'s step: `loop.held`), yielding to the consumer whenever
    events come meanwhile."""
    if fn is run_task:
        # in a pool thread even when known to be quick, as LangGraph's runner runs every
        # task of a live stream: a node turning slow still streams its events as they come
        # (a lane: the cheapest hand-off, `lgnb.pregel._lanes`)
        ctx, policies = args
        lone = _LoneHeld(ctx, sink)
        fut = lone.job = Job(partial(contextvars.copy_context().run, _run_in_worker, ctx, policies), lone.ended)
        run_in_lane(fut)
        try:
            try:
                yield from _drain_until(sink, (fut,), None, lone)
            finally:
                lone.job = None  # (the job's callback holds `lone`: no cycle left behind)
        except KeyboardInterrupt as stop:
            # the stop button while the task ran in a thread: a thread cannot be stopped,
            # so, as LangGraph's pool, the task ends and its writes are kept; then the run
            # stops (nothing more is streamed)
            fut.wait()
            raise _Stopped(stop, _DROPPED if lone.early is not None else fut.result()) from None
        except GeneratorExit:
            # the consumer stopped: a thread cannot be stopped, so, as LangGraph, the
            # task ends and its writes are kept (a resume does not run the node again)
            dropped = fut.exception() is not None or lone.early is not None
            raise _Closed(_DROPPED if dropped else fut.result()) from None
        return fut.result() if lone.early is None else lone.early
    running, timeout = args
    done = yield from _drain_until(sink, running, timeout, loop.held)
    return done


class _Early:
    """A lone task committed from its thread while the consumer held the stream
    (`_LoneHeld`): its outcome, its error handler's task, the error it raised."""

    __slots__ = ("errors", "exc", "handler")

    def __init__(self, exc: BaseException | None, handler: Task | None, errors: list[BaseException]) -> None:
        self.exc = exc
        self.handler = handler
        self.errors = errors


class _LoneHeld:
    """`_Held` for a live stream's lone task, run in a lane: if it ends while the consumer
    holds the stream (a `break` with the iterator kept), it commits from the lane and its
    writes are saved, as LangGraph's pool commits in its done callback; the driver then
    gets an `_Early` instead of the outcome. Cheap per chunk: the lock (`_LONE_LOCK`) is
    taken only once the job ended or the consumer holds the stream."""

    __slots__ = ("ctx", "early", "holding", "job", "sink")

    def __init__(self, ctx: TaskContext, sink: StreamSink) -> None:
        self.ctx = ctx
        self.sink = sink
        self.job: Job | None = None
        self.holding = False
        self.early: _Early | None = None

    def hold(self) -> None:
        self.holding = True
        job = self.job
        if job is not None and job.done():
            self._commit()

    def release(self) -> None:
        self.holding = False
        job = self.job
        if job is not None and job.done():
            with _LONE_LOCK:  # (a commit the lane began while the consumer held: done now)
                pass

    def ended(self) -> None:
        """The job's end (in its lane)."""
        self.sink.nudge()
        if self.holding:
            self._commit()

    def _commit(self) -> None:
        with _LONE_LOCK:
            job = self.job
            if not self.holding or self.early is not None or job is None or job._error is not None:
                return
            exc = job._value
            loop, task = self.ctx.loop, self.ctx.task
            control = loop.run.control
            if (exc is not None and not isinstance(exc, Exception)) or _abandoned(loop.run) or (
                    control is not None and getattr(control, "_cancel_reason", None) is not None):
                return  # (the driver's: a stop, a cancelled run)
            errors: list[BaseException] = []
            handler = _commit(loop, task, exc, errors)
            flush_io(loop)
            self.early = _Early(exc, handler, errors)


_LONE_LOCK = threading.Lock()
"""Orders a lone task's commit from its lane against the driver going on (`_LoneHeld`)."""


def _drain_until(sink: StreamSink, futures: Any, timeout: float | None,
                 held: _Held | _LoneHeld | None = None) -> Generator[None, None, set[Future]]:
    """Yield to the consumer as events come until one of `futures` is done (its set
    returned) or `timeout` passes (an empty set). `held`: the step, told when the consumer
    holds the stream (`_Held`)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for fut in futures:
        if isinstance(fut, Future):  # (a lane's `Job` nudges the sink itself)
            fut.add_done_callback(sink.nudge)

    def ready() -> bool:
        return any(f.done() for f in futures)

    while True:
        done = {f for f in futures if f.done()}
        if done:
            return done
        if sink.items:
            if held is None:
                yield
                continue
            held.hold()
            try:
                yield
            finally:
                held.release()
            continue
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return set()
        sink.wait(ready, left)


async def adrive(loop: Loop, input: Any, *, resuming: bool | None = None) -> AsyncIterator[None]:
    """`drive` for the event loop: the same run, requests awaited."""
    loop.drained = True
    program = _run(loop, input, resuming, _AIO)
    reply: Any = None
    error: BaseException | None = None
    closed = thrown = False
    saving: asyncio.Future[None] | None = None  # a task's writes being saved (`astart_flush`)
    saving_loop = loop  # the (sub)graph loop whose writes they are
    try:
        while True:
            try:
                request = program.send(reply) if error is None else program.throw(error)
            except StopIteration:
                break
            except _Closed:
                break
            reply = error = None
            if request is _EMIT:
                if closed:
                    continue
                try:
                    yield
                except GeneratorExit:
                    closed = thrown = True
                    error = _Closed()
                continue
            try:
                fn = request[1]
                if fn is astart_flush:
                    target = request[2][0]
                    if saving is None:
                        saving = _start_saving(target)
                    else:  # behind the save under way, without waiting for it here
                        ops, target.io = target.io, []
                        saving = asyncio.ensure_future(_then_flush(saving, saving_loop, target, ops))
                    saving_loop = target
                    reply = None
                    continue
                if saving is not None:  # finished before anything else is asked
                    save, saving = saving, None
                    await _finish_saving_or_drop(save, saving_loop)
                if fn is aflush_io:
                    if (started := _start_saving(request[2][0])) is not None:
                        await _finish_saving(started)
                    reply = None
                elif len(request) > 3:
                    reply = await fn(*request[2], **request[3])
                else:
                    reply = await fn(*request[2])
            except BaseException as e:  # noqa: BLE001
                error = e
                if not closed and isinstance(e, asyncio.CancelledError) and loop.__dict__.get("closing"):
                    # `astream`'s consumer closed it while this step ran (`aclose_driver`):
                    # the run ends as when it is closed between two events
                    closed = True
                    error = _Closed()
                    uncancel = getattr(asyncio.current_task(), "uncancel", None)  # 3.11+
                    if uncancel is not None:
                        uncancel()
    finally:
        if saving is not None:  # the run ended (or failed) right after a task
            await _finish_saving_or_drop(saving, saving_loop)
    if thrown:
        raise GeneratorExit

"""Drivers: run a Loop's super-steps, execute its tasks and carry out its I/O.

`drive` (blocking, a generator that yields after every committed task so a `stream()`
caller can drain the queue) and `adrive` (async generator) are the only places where
sync and async differ; the Loop and the task runner are shared.

Parallel tasks of a step run concurrently: sync nodes in a shared thread pool (or in
order, inside a worker thread, to never exhaust the pool), async nodes as asyncio tasks.
A failing task does not discard its finished siblings: their writes are recorded first,
then the error propagates.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from lgnb.errors import GraphBubbleUp, GraphInterrupt
from lgnb.pregel._context import TaskContext
from lgnb.pregel._loop import Loop
from lgnb.pregel._runner import arun_task, commit_writes, run_task
from lgnb.pregel._task import Task
from lgnb.pregel._trace import aend_graph, astart_graph, end_graph, start_graph

__all__ = ("drive", "adrive", "flush_io", "aflush_io")

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
_IN_WORKER = threading.local()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=64, thread_name_prefix="lgnb-task")
    return _POOL


def flush_io(loop: Loop) -> None:
    """Carry out queued checkpoint saves with a sync saver."""
    if not loop.io:
        return
    ops, loop.io = loop.io, []
    saver = loop.checkpointer
    for op in ops:
        if op[0] == "put":
            saver.put(op[1], op[2], op[3], op[4])
        else:
            saver.put_writes(op[1], op[2], op[3], op[4])


async def aflush_io(loop: Loop) -> None:
    """Carry out queued checkpoint saves with an async saver."""
    if not loop.io:
        return
    ops, loop.io = loop.io, []
    saver = loop.checkpointer
    for op in ops:
        if op[0] == "put":
            await saver.aput(op[1], op[2], op[3], op[4])
        else:
            await saver.aput_writes(op[1], op[2], op[3], op[4])


def _commit(loop: Loop, task: Task, exc: BaseException | None, errors: list[BaseException]) -> None:
    if exc is not None and not isinstance(exc, GraphBubbleUp) and hasattr(exc, "add_note"):
        exc.add_note(f"During task with name '{task.name}' and id '{task.id}'")
    writes = commit_writes(task, exc)
    if writes is not None:
        loop.put_writes(task, writes)
    if exc is not None:
        errors.append(exc)


def _raise_step_errors(errors: list[BaseException]) -> None:
    """After a step: a real error wins over interrupts; interrupts are raised together."""
    if not errors:
        return
    for exc in errors:
        if not isinstance(exc, GraphBubbleUp):
            raise exc
    for exc in errors:
        if not isinstance(exc, GraphInterrupt):
            raise exc
    interrupts = [i for exc in errors for i in (exc.args[0] if exc.args else ())]
    raise GraphInterrupt(tuple(interrupts))


def _run_in_worker(ctx: TaskContext, policies: Any) -> BaseException | None:
    _IN_WORKER.active = True
    try:
        return run_task(ctx, policies)
    finally:
        _IN_WORKER.active = False


def _execute_step(loop: Loop, runtime: Any) -> Iterator[None]:
    tasks = loop.runnable_tasks()
    policies = loop.graph.retry_policy
    errors: list[BaseException] = []
    if len(tasks) == 1 or getattr(_IN_WORKER, "active", False):
        for task in tasks:
            if loop.run.cancelled:
                raise _cancelled()
            exc = run_task(TaskContext(task, loop, runtime), task.node.retry_policy or policies)
            _commit(loop, task, exc, errors)
            flush_io(loop)  # a finished task's writes are saved before anything else runs
            yield
            if errors and not isinstance(errors[-1], GraphBubbleUp):
                break
    elif tasks:
        pool = _pool()
        order = {id(t): i for i, t in enumerate(tasks)}
        limit = loop.run.user_config.get("max_concurrency") or len(tasks)
        queue = list(reversed(tasks))
        futures: dict[Future, Task] = {}

        pending: set[Future] = set()

        def submit() -> None:
            task = queue.pop()
            ctx = TaskContext(task, loop, runtime)
            run = contextvars.copy_context().run
            fut = pool.submit(run, _run_in_worker, ctx, task.node.retry_policy or policies)
            futures[fut] = task
            pending.add(fut)

        while queue and len(pending) < limit:
            submit()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            pending -= done
            for fut in sorted(done, key=lambda f: order[id(futures[f])]):
                _commit(loop, futures[fut], fut.result(), errors)
                flush_io(loop)
                yield
                if queue and not loop.run.cancelled:
                    submit()  # `max_concurrency`: the next task starts when one ends
    _raise_step_errors(errors)


def _cancelled() -> BaseException:
    return asyncio.CancelledError("the run was cancelled")


def drive(loop: Loop, input: Any, *, resuming: bool | None = None) -> Iterator[None]:
    """Run `loop` to completion, yielding after each task so events can be drained."""
    runtime = loop.run.runtime_for(loop)
    loop.runtime = runtime
    exc: BaseException | None = None
    tracing = loop.run.tracing
    if loop.run.messages_handler is not None and loop.state:
        loop.run.messages_handler.observe(loop.state)
    try:
        if tracing:
            start_graph(loop, input)
        loop.first(input, resuming=resuming)
        flush_io(loop)
        while loop.tick():
            flush_io(loop)
            yield from _execute_step(loop, runtime)
            flush_io(loop)
            loop.after_tick()
            flush_io(loop)
            if loop.run.cancelled:
                raise _cancelled()
    except BaseException as e:  # noqa: BLE001 - re-raised below unless it is a swallowed interrupt
        exc = e
    swallow = loop.finish(exc)
    flush_io(loop)
    if tracing:
        end_graph(loop, None if swallow else exc)
    if exc is not None and not swallow:
        raise exc


async def _aexecute_step(loop: Loop, runtime: Any) -> AsyncIterator[None]:
    tasks = loop.runnable_tasks()
    policies = loop.graph.retry_policy
    errors: list[BaseException] = []
    if len(tasks) == 1:
        task = tasks[0]
        exc = await arun_task(TaskContext(task, loop, runtime), task.node.retry_policy or policies)
        _commit(loop, task, exc, errors)
        await aflush_io(loop)
        yield
    elif tasks:
        order = {id(t): i for i, t in enumerate(tasks)}
        running = {
            asyncio.ensure_future(
                arun_task(TaskContext(t, loop, runtime), t.node.retry_policy or policies)
            ): t
            for t in tasks
        }
        pending = set(running)
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for fut in sorted(done, key=lambda f: order[id(running[f])]):
                    _commit(loop, running[fut], fut.result(), errors)
                    await aflush_io(loop)
                    yield
                if any(not isinstance(e, GraphBubbleUp) for e in errors):
                    for fut in pending:
                        fut.cancel()
                    break
        finally:
            for fut in pending:
                fut.cancel()
    _raise_step_errors(errors)


async def adrive(loop: Loop, input: Any, *, resuming: bool | None = None) -> AsyncIterator[None]:
    """Async twin of `drive`."""
    runtime = loop.run.runtime_for(loop)
    loop.runtime = runtime
    exc: BaseException | None = None
    tracing = loop.run.tracing
    if loop.run.messages_handler is not None and loop.state:
        loop.run.messages_handler.observe(loop.state)
    try:
        if tracing:
            await astart_graph(loop, input)
        loop.first(input, resuming=resuming)
        await aflush_io(loop)
        while loop.tick():
            await aflush_io(loop)
            async for _ in _aexecute_step(loop, runtime):
                yield
            await aflush_io(loop)
            loop.after_tick()
            await aflush_io(loop)
    except BaseException as e:  # noqa: BLE001
        exc = e
    swallow = loop.finish(exc)
    await aflush_io(loop)
    if tracing:
        await aend_graph(loop, None if swallow else exc)
    if exc is not None and not swallow:
        raise exc

"""Task calls of the functional API: a `@task` called inside a running node.

A call becomes a PUSH task of the caller's step (path `(PUSH, caller path, call index,
True)`, the trailing True marking a call), with a task id derived like LangGraph's so a
thread paused by one engine resumes on the other. It starts at once, concurrently with
its caller, and returns a future:

- in a sync run, a `concurrent.futures.Future` (the task runs on the driver's pool);
- inside a coroutine, an `asyncio.Future` (the task runs as an asyncio task).

The task's return value is written to RETURN, saved as a pending write of the step like
any task's writes, and streamed (`updates`: `{task name: value}`). A task that finished
before an interrupt or an error is not run again when the caller re-runs: its saved
RETURN resolves the future. A task's interrupt is recorded for it but streamed by its
caller, which the interrupt reaches through the future.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any

from lgnb._internal.callable import is_async_callable, is_store_annotation
from lgnb._internal.constants import ERROR, NS_SEP, PUSH, RETURN
from lgnb._internal.context import DRIVER_LOOP, TaskContext, current_task
from lgnb._internal.ids import task_id as make_task_id
from lgnb.channels.base import MISSING
from lgnb.pregel._call_gate import acall_gate, call_gate
from lgnb.pregel._node import PregelNode
from lgnb.pregel._status import read_task_statuses
from lgnb.pregel._task import Task
from lgnb.runtime import _no_op_writer

if TYPE_CHECKING:
    from lgnb.pregel._loop import Loop
    from lgnb.types import CachePolicy, RetryPolicy

__all__ = ("Call", "SyncAsyncFuture", "call", "schedule_call", "wait_calls", "await_calls")

_INJECTABLE = ("config", "writer", "runtime", "store", "previous")


class SyncAsyncFuture(Future[Any]):
    """A concurrent future that can also be awaited (a sync task called from async code)."""

    def __await__(self) -> Any:
        return asyncio.wrap_future(self).__await__()


class CallContext(TaskContext):
    """The context of a task call: a TaskContext that knows the calling task (whose
    traced run becomes the parent of the call's run)."""

    __slots__ = ("caller",)

    caller: TaskContext


class Call:
    """One call of a task function: the function, its arguments, its policies."""

    __slots__ = ("func", "args", "kwargs", "name", "retry_policy", "cache_policy", "node")

    def __init__(
        self,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        name: str,
        retry_policy: Sequence[RetryPolicy] = (),
        cache_policy: CachePolicy | None = None,
        node: PregelNode | None = None,
    ) -> None:
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.name = name
        self.retry_policy = retry_policy
        self.cache_policy = cache_policy
        self.node = node or call_node(func, name, retry_policy)


class CallCallable:
    """The `bound` of a call task: calls the function with the call's arguments, adding
    the extras (`config`, `writer`, `runtime`, `store`, `previous`) it declares and the
    caller did not pass."""

    __slots__ = ("name", "func", "is_async", "inject", "subgraph", "runnable")

    def __init__(self, func: Callable[..., Any], name: str) -> None:
        self.name = name
        self.func = func
        self.is_async = is_async_callable(func)
        self.subgraph = None
        self.runnable = None
        try:
            params = list(inspect.signature(func).parameters.values())
        except (TypeError, ValueError):
            params = []
        self.inject = tuple(
            (i, p.name)
            for i, p in enumerate(params)
            if p.name in _INJECTABLE
            and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            and (p.name != "store" or is_store_annotation(p.annotation))
        )

    def _kwargs(self, value: tuple[tuple[Any, ...], dict[str, Any]], ctx: TaskContext) -> dict[str, Any]:
        args, kwargs = value
        if not self.inject:
            return kwargs
        extra = dict(kwargs)
        for index, name in self.inject:
            if name in extra or index < len(args):
                continue
            if name == "config":
                extra[name] = ctx.config
            elif name == "writer":
                extra[name] = ctx.runtime.stream_writer
            elif name == "runtime":
                extra[name] = ctx.task_runtime()
            elif name == "store":
                extra[name] = ctx.runtime.store
            elif name == "previous":
                extra[name] = ctx.runtime.previous
        return extra

    def trace_input(self, value: tuple[tuple[Any, ...], dict[str, Any]]) -> dict[str, Any]:
        """The call's arguments by parameter name (what a traced run records as inputs)."""
        arguments = self.bound_arguments(value)
        if arguments is None:
            args, kwargs = value
            return {"args": args, **kwargs}
        return arguments

    def bound_arguments(self, value: tuple[tuple[Any, ...], dict[str, Any]]) -> dict[str, Any] | None:
        """The call's arguments by parameter name, defaults applied and `**kwargs` flattened,
        as LangGraph's task run receives its inputs; None when they do not fit the signature."""
        args, kwargs = value
        try:
            sig = inspect.signature(self.func)
            bound = sig.bind_partial(*args, **kwargs)
        except (TypeError, ValueError):
            return None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop("self", None)
        arguments.pop("cls", None)
        for name, param in sig.parameters.items():
            if param.kind == inspect.Parameter.VAR_KEYWORD and name in arguments:
                arguments.update(arguments.pop(name))
        return arguments

    def call(self, value: Any, ctx: TaskContext) -> Any:
        if self.is_async:
            raise TypeError(
                f"Task `{self.name}` is an async function: call it from an async entrypoint "
                "or node and run the graph with `ainvoke` / `astream`."
            )
        return self.func(*value[0], **self._kwargs(value, ctx))

    async def acall(self, value: Any, ctx: TaskContext) -> Any:
        if self.is_async:
            return await self.func(*value[0], **self._kwargs(value, ctx))
        return self.func(*value[0], **self._kwargs(value, ctx))


def _return_writer(task: Task, output: Any) -> list[tuple[str, Any]]:
    return [(RETURN, output)]


def call_node(func: Callable[..., Any], name: str, retry_policy: Sequence[RetryPolicy] = ()) -> PregelNode:
    """The node a task function runs as (built once per task function)."""
    return PregelNode(
        name=name,
        triggers=[PUSH],
        channels=[],
        bound=CallCallable(func, name),  # type: ignore[arg-type]
        writers=[_return_writer],
        retry_policy=retry_policy,
    )


def _path_str(part: Any) -> str:
    """LangGraph's string form of a task path (part of a call task's id)."""
    if isinstance(part, (tuple, list)):
        return "~" + ", ".join(_path_str(x) for x in part)
    if isinstance(part, int):
        return f"{part:010d}"
    return str(part)


def _lock(loop: Loop) -> threading.RLock:
    lock = loop.__dict__.get("call_lock")
    if lock is None:
        lock = loop.__dict__.setdefault("call_lock", threading.RLock())
    return lock


def _make_task(parent: TaskContext, call: Call) -> Task:
    """The PUSH task of `call`, numbered by the caller's call counter."""
    loop = parent.loop
    with _lock(loop):
        idx = parent.call_index
        parent.call_index += 1
    name = call.name
    ptask = parent.task
    # under the caller's task, as LangGraph names it (its config's checkpoint_ns): the
    # task id hashes it, so a thread paused by one engine resumes on the other
    base_ns = f"{ptask.ns}|{name}" if ptask.ns else name
    tid = make_task_id(
        loop.checkpoint_id, base_ns, str(loop.step), name, PUSH, _path_str(ptask.path), str(idx)
    )
    task = Task(
        id=tid,
        name=name,
        path=(PUSH, ptask.path, idx, True),
        input=(call.args, call.kwargs),
        node=call.node,
        triggers=(PUSH,),
        ns=f"{base_ns}:{tid}",
    )
    if parent._config is not None:  # (what the caller added to its metadata in place too)
        task.metadata = dict(parent._config.get("metadata") or {})
    return task


def _saved_outcome(loop: Loop, task: Task) -> tuple[bool, Any, BaseException | None]:
    """(finished before?, its return value, its error) from the step's saved writes."""
    if loop.__dict__.get("is_replaying"):
        return False, None, None
    mine = [w for w in loop.pending if w[0] == task.id]
    if not mine:
        return False, None, None
    status = read_task_statuses(mine).get(task.id)
    if status is None or not status.output:
        return False, None, None
    task.writes = list(status.output)
    loop.reapplied_ids.add(task.id)
    value = next((v for c, v in status.output if c == RETURN), None)
    return True, value, None


def _from_cache(loop: Loop, task: Task, call: Call) -> tuple[bool, Any]:
    """Serve the call from the graph's cache when its policy allows (True, value)."""
    from lgnb.pregel._cache import CACHE_NS_WRITES, cache_key, identifier

    policy = call.cache_policy or getattr(loop.graph, "cache_policy", None)
    if policy is None:
        return False, None
    ns = (CACHE_NS_WRITES, identifier(call.func) or "__dynamic__")
    key = task.cache_key = cache_key(policy, ns, *call.args, **call.kwargs)
    hits = loop.graph.cache.get(((key.ns, key.key),))
    writes = hits.get((key.ns, key.key))
    if writes is None:
        return False, None
    task.writes = [tuple(w) for w in writes]
    with _lock(loop):
        loop.put_writes(task, list(task.writes), cached=True)
    return True, next((v for c, v in task.writes if c == RETURN), None)


def _accept(loop: Loop, task: Task) -> None:
    with _lock(loop):
        loop.tasks[task.id] = task
        if loop.emits.tasks:
            from lgnb.pregel._io import task_start_payload

            loop.emit("tasks", task_start_payload(task, loop.run.task_config(loop, task)))


def _outcome(task: Task, exc: BaseException | None) -> tuple[Any, BaseException | None]:
    if exc is not None:
        return None, exc
    value = next((v for c, v in task.writes if c == RETURN), MISSING)
    if value is MISSING:
        err = next((v for c, v in task.writes if c == ERROR), None)
        if err is not None:
            return None, err if isinstance(err, BaseException) else Exception(err)
        return None, None
    return value, None


def _commit(loop: Loop, task: Task, exc: BaseException | None) -> None:
    from lgnb.pregel._runner import commit_writes

    if exc is not None and not _is_bubble_up(exc) and hasattr(exc, "add_note"):
        exc.add_note(f"During task with name '{task.name}' and id '{task.id}'")
    with _lock(loop):
        writes = commit_writes(task, exc)
        if writes is not None:
            loop.put_writes(task, writes)


def _is_bubble_up(exc: BaseException) -> bool:
    from lgnb.errors import GraphBubbleUp

    return isinstance(exc, GraphBubbleUp)


def _calls(loop: Loop) -> list[Any]:
    calls = loop.__dict__.get("calls")
    if calls is None:
        calls = loop.__dict__.setdefault("calls", [])
    return calls


def schedule_call(call: Call) -> Any:
    """Start `call` as a task of the running step; return its future."""
    parent = current_task()
    try:
        aio: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        aio = None
    if aio is not None and not parent.loop.driven_async:
        # a sync run called in a thread whose event loop it blocks (a notebook cell runs
        # inside the kernel's loop): its calls run as a sync run's, as LangGraph's sync
        # runner runs them, not on that loop, which cannot run them until the run ends
        aio = None
    driver = None
    if aio is None and (parent.loop.driven_async or getattr(call.node.bound, "is_async", False)):
        # a sync node of an async run: the task runs on the run's event loop (a sync task
        # in a thread from there), as LangGraph's async runner schedules every call
        driver = DRIVER_LOOP.get()
        if driver is None and getattr(call.node.bound, "is_async", False):
            raise RuntimeError(
                "In an sync context async tasks cannot be called\n"
                f"Task `{call.name}` is an async function called from a sync run: run the "
                "graph with `ainvoke` / `astream`, or make the task synchronous."
            )
    loop = parent.loop
    task = _make_task(parent, call)
    finished, value, _ = _saved_outcome(loop, task)
    _accept(loop, task)
    if not finished and loop.graph.cache is not None:
        finished, value = _from_cache(loop, task, call)
    policies = call.retry_policy or loop.graph.retry_policy
    if finished:
        if aio is not None:
            afut = aio.create_future()
            afut.set_result(value)
            return afut
        fut: Future = SyncAsyncFuture()
        fut.set_result(value)
        return fut
    ctx = CallContext(task, loop, _call_runtime(parent))
    ctx.caller = parent
    if aio is not None:
        return _start_async(aio, loop, task, ctx, policies)
    if driver is not None:
        return _start_on_driver(driver, loop, task, ctx, policies)
    return _start_threaded(loop, task, ctx, policies)


def _call_runtime(parent: TaskContext) -> Any:
    """The runtime of a `@task` call: the caller's, its custom events labelled with the
    caller's namespace (as LangGraph labels them: the call's namespace minus its own
    segment), not the graph's."""
    runtime = parent.runtime
    if runtime.stream_writer is _no_op_writer:
        return runtime
    loop = parent.loop
    writer = loop.run.runtime_for(loop, ns=tuple(parent.task.ns.split(NS_SEP))).stream_writer
    return runtime.override(stream_writer=writer)


def _start_on_driver(
    aio: asyncio.AbstractEventLoop, loop: Loop, task: Task, ctx: CallContext, policies: Any
) -> Future:
    """An async task called from a sync node's thread: it runs on the run's event loop;
    the caller gets a concurrent future (the step awaits the task as any other call)."""
    fut: Future = SyncAsyncFuture()

    async def start() -> None:  # runs in the caller's context (call_soon_threadsafe copies it)
        try:
            fut.set_result(await _start_async(aio, loop, task, ctx, policies))
        except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
            fut.set_exception(e)

    asyncio.run_coroutine_threadsafe(start(), aio)
    return fut


def _start_threaded(loop: Loop, task: Task, ctx: CallContext, policies: Any) -> Future:
    from lgnb.pregel._driver import flush_io, in_worker
    from lgnb.pregel._lanes import Job, run_in_lane
    from lgnb.pregel._runner import run_task

    # Always in a thread of its own, as on LangGraph, even when the caller waits on it at
    # once: run by a waiting caller, a call saw the caller's `threading.local` values and
    # could use its sqlite3 connections, on some runs and not others. A lane's, not a
    # pool's: LangGraph gives every run an executor of its own, so callers waiting on
    # calls that wait on calls (entrypoints calling tasks that invoke entrypoints, from
    # many threads at once) never wait on a full pool; lanes are not limited either.
    fut = SyncAsyncFuture()
    gate = None
    if not isinstance(ctx.caller, CallContext):  # (a call's own calls are not held back: `_call_gate`)
        with _lock(loop):
            gate = call_gate(loop)

    def work() -> None:
        try:
            if not fut.set_running_or_notify_cancel():
                return  # cancelled before it started: it does not run, as a pool's future
            try:
                # (a graph the call runs takes threads of the nested pool, never of the one
                # running the call: 64 calls each running a graph must not wait on each other)
                exc = in_worker(run_task, ctx, policies)
                _commit(loop, task, exc)
                with _lock(loop):  # this thread saves the call's writes (`flush_io` says how)
                    flush_io(loop)
                value, err = _outcome(task, exc)
            except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
                value, err = None, e
        finally:
            if gate is not None:
                gate.done()  # the next call held back by `max_concurrency` starts
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(value)

    _calls(loop).append(fut)
    job = Job(partial(contextvars.copy_context().run, work))  # (the caller's context)
    if gate is None:
        run_in_lane(job)
    else:
        gate.submit(partial(run_in_lane, job), fut.cancel)  # (cancelled queued: `work` never runs)
    return fut


def _start_async(
    aio: asyncio.AbstractEventLoop, loop: Loop, task: Task, ctx: CallContext, policies: Any
) -> asyncio.Future:
    from lgnb.pregel._driver import aflush_io
    from lgnb.pregel._runner import arun_task

    afut: asyncio.Future = aio.create_future()

    gate = None
    if not isinstance(ctx.caller, CallContext):  # (a call's own calls are not held back: `_call_gate`)
        with _lock(loop):
            gate = acall_gate(loop)

    async def work() -> None:
        try:
            if gate is None:
                exc = await arun_task(ctx, policies)
            else:
                waiting = _waiting(loop)
                waiting.add(runner)  # (cancelled while it waits, if the step fails)
                try:
                    await gate.acquire()  # at most `max_concurrency` at once, as LangGraph's semaphore
                finally:
                    waiting.discard(runner)
                try:
                    exc = await arun_task(ctx, policies)
                finally:
                    gate.release()
            _commit(loop, task, exc)
            value, err = _outcome(task, exc)
        except BaseException as e:  # noqa: BLE001
            value, err = None, e
        if not afut.done():
            if isinstance(err, asyncio.CancelledError):
                afut.cancel()
            elif err is not None:
                afut.set_exception(err)
            else:
                afut.set_result(value)
        # Saved after the caller has its result, as LangGraph's background put_writes: a
        # slow saver (a database round trip) does not hold the caller back. The step
        # awaits this (`await_calls`), so a failed save still fails the step.
        await aflush_io(loop)

    runner = asyncio.ensure_future(work())
    _calls(loop).append(runner)

    def on_done(f: asyncio.Future) -> None:
        if f.cancelled() and not runner.done():
            runner.cancel()  # the caller cancelled the call: stop the task

    afut.add_done_callback(on_done)
    return afut


def _waiting(loop: Loop) -> set[Any]:
    """The async calls of `loop` waiting for a slot of `acall_gate` (`cancel_queued_calls`)."""
    waiting = loop.__dict__.get("waiting_calls")
    if waiting is None:
        waiting = loop.__dict__.setdefault("waiting_calls", set())
    return waiting


def wait_calls(loop: Loop) -> None:
    """Block until every task call started in the step has finished (sync driver)."""
    calls = loop.__dict__.get("calls")
    while calls:
        fut = calls.pop()
        if isinstance(fut, Future):
            try:
                fut.exception()
            except BaseException:  # noqa: BLE001 - the caller saw it through the future
                pass


async def await_calls(loop: Loop) -> None:
    """Await every task call started in the step (async driver)."""
    calls = loop.__dict__.get("calls")
    while calls:
        fut = calls.pop()
        if isinstance(fut, Future):
            await asyncio.wrap_future(fut)
        else:
            try:
                await fut
            except asyncio.CancelledError:
                pass


def call(
    func: Callable[..., Any],
    *args: Any,
    retry_policy: Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy | None = None,
    **kwargs: Any,
) -> Any:
    """Run `func(*args, **kwargs)` as a task of the running node; return its future."""
    name = getattr(func, "__name__", None) or type(func).__name__
    return schedule_call(
        Call(
            func,
            args,
            kwargs,
            name=name,
            retry_policy=tuple(retry_policy or ()),
            cache_policy=cache_policy,
        )
    )

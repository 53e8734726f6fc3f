"""Executing tasks: call the node, turn its return value into writes, retry on failure.

A task's life (attempts, retries and their waits, tracing, cancellation, the writes of
its output) is written once, as the generator `task_program`, which asks for what needs a
thread or a clock; `arun_task` (coroutine) and `run_task` (blocking) answer it. The one
exception is the commonest task, a synchronous one in an untraced run: `run_task` runs
it as a plain function, since it asks for nothing (see `run_task`). Neither touches the
loop's bookkeeping: the driver commits the finished task in the loop's thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import sys
import time
from collections.abc import Callable, Coroutine, Generator, Sequence
from contextvars import Token, copy_context
from typing import Any, cast

from lgnb._internal.constants import ERROR, INTERRUPT, NO_WRITES, NS_SEP, RESUME
from lgnb._internal.context import DRIVER_LOOP, TASK_CTX, TaskContext, lazy_config
from lgnb._internal.foreign import adopt
from lgnb._internal.streamed_node import astreamed, streams_nodes
from lgnb.errors import (
    GraphBubbleUp,
    GraphInterrupt,
    NodeCancelledError,
    NodeTimeoutError,
    ParentCommand,
)
from lgnb.pregel._options import recast_ns
from lgnb.pregel._program import Program, aanswer, answer
from lgnb.pregel._task import Task
from lgnb.pregel._trace import (
    enter_run_tree,
    exit_run_tree,
    node_ended,
    node_failed,
    node_started,
)
from lgnb.types import Command, RetryPolicy, TimeoutPolicy

logger = logging.getLogger(__name__)

__all__ = ("run_task", "arun_task", "task_program", "commit_writes")

def _langchain_loaded() -> bool:
    """Whether LangChain's runnables are imported: only then can a node call a Runnable
    that reads its config from LangChain's context variable (a graph of plain functions
    never imports them, and pays nothing)."""
    global _LC_CONFIG_VAR
    if _LC_CONFIG_VAR is None:
        module = sys.modules.get("langchain_core.runnables.config")
        if module is None:
            return False
        _LC_CONFIG_VAR = module.var_child_runnable_config
    return True


def _enter_langchain(ctx: TaskContext) -> tuple[Any, Token, Any]:
    """LangChain's child config becomes this task's, as in LangGraph: a Runnable or chat
    model the node invokes without a config inherits the run's configurable, metadata and
    handlers (the messages stream, `configurable_alternatives`). Built on first read."""
    global _LC_CONFIG_VAR
    var = _LC_CONFIG_VAR
    if var is None:
        from langchain_core.runnables.config import var_child_runnable_config

        var = _LC_CONFIG_VAR = var_child_runnable_config
    # built up front when the node read it last time (it calls models or tools)
    config = ctx.config if ctx._config is not None or ctx.task.node.reads_config else lazy_config(ctx)
    tree = enter_run_tree(ctx) if ctx.node_run is not None else None
    return (var, var.set(config), tree)


_LC_CONFIG_VAR: Any = None


def _exit_langchain(lc_token: tuple[Any, Token, Any]) -> None:
    if lc_token[2] is not None:
        exit_run_tree(lc_token[2])
    lc_token[0].reset(lc_token[1])


def _messages_start(ctx: TaskContext) -> Any:
    """Tell the `messages` handlers a node starts: those that stream it (None: none)."""
    if ctx.task.node.hidden:  # (LangGraph's START has no run to see)
        return None
    handlers = ctx.loop.run.node_messages
    if len(handlers) == 1:
        return handlers if handlers[0].node_start(ctx) is not None else None
    wanted = tuple(h for h in handlers if h.node_start(ctx) is not None)
    return wanted or None


def _messages_end(ctx: TaskContext, meta: Any, output: Any) -> None:
    for handler in meta:
        handler.node_end(ctx, output)



def _finish(task: Task, output: Any, is_async: bool = False) -> int | None:
    """Apply the node's writers to its return value (branches read the writes so far).
    In an async run, stops at the first async writer and returns its index: `_afinish`
    goes on from there."""
    node = task.node
    writes = task.writes
    if type(output) is not dict:  # LangGraph's own Command / Send (its ToolNode's) as lgnb's
        output = adopt(output)
    probe = node.async_writers  # usually False: no writer is asked whether it is async
    for writer in node.writers:
        if probe and getattr(writer, "is_async", False):
            if is_async:
                return node.writers.index(writer)
            raise _async_router_error(task, getattr(writer, "route", (None, None))[1])
        produced = writer(task, output)
        if produced:
            writes.extend(produced)
    if node.static_writes:
        writes.extend(node.static_writes)
    return None


def _async_router_error(task: Task, branch: Any) -> TypeError:
    """An async path function met in a sync run: LangGraph's words, then where and what to do."""
    name = getattr(branch, "name", None) or task.name
    return TypeError(
        f'No synchronous function provided to "{name}".\n'
        "Either initialize with a synchronous function or invoke via the async API "
        "(ainvoke, astream, etc.)\n"
        f"The conditional edge `{name}` after node `{task.name}` is async: run the graph "
        "with `ainvoke` / `astream`, or make the path function synchronous."
    )


async def _afinish(task: Task, output: Any, start: int = 0) -> None:
    """`_finish` for async runs (from writer `start` on): path functions may be async."""
    node = task.node
    writes = task.writes
    if type(output) is not dict:
        output = adopt(output)
    for writer in node.writers[start:]:
        produced: Any = writer(task, output)  # an awaitable when the writer is async
        if getattr(writer, "is_async", False):
            produced = await produced
        if produced:
            writes.extend(produced)
    if node.static_writes:
        writes.extend(node.static_writes)


def _routes(node: Any) -> bool:
    """Whether conditional edges leave `node` (a writer of it routes)."""
    return any(getattr(writer, "route", None) is not None for writer in node.writers)


def _traced_finish(ctx: TaskContext, output: Any, is_async: bool) -> Program[None]:
    """`_finish` of a traced task: each conditional edge's path function runs as a chain
    run named after it, a child of the node's run (LangGraph's `seq:step:N`)."""
    task = ctx.task
    node = task.node
    writes = task.writes
    if type(output) is not dict:
        output = adopt(output)
    for writer in node.writers:
        route = getattr(writer, "route", None)
        if route is None:
            if produced := writer(task, output):
                writes.extend(produced)
            continue
        read, branch = route
        if branch.is_async and not is_async:
            raise _async_router_error(task, branch)
        _, value = read(task, output)
        if getattr(branch.path, "trace", True) is False:  # a library's untraced router
            result = (yield (None, branch.call.acall, (value, ctx))) if branch.is_async else (
                branch.call.call(value, ctx))
            writes.extend(branch.writes(result))
            continue
        # after a RunnableSequence node's steps, each its own step of the node's sequence
        step = getattr(writer, "trace_step", 3) + len(getattr(node.bound, "steps", None) or (0,)) - 1
        manager = ctx.node_run.get_child(f"seq:step:{step}")
        if tags := ctx.config.get("tags"):
            # as LangChain's `configure` does with the config's tags for the router's run:
            # they move after the step's own tag (`['seq:step:3', 't1', 't2']`)
            manager.add_tags(tags)
        name = getattr(branch.path, "name", None) or getattr(branch.path, "__name__", branch.name)
        if name == "<lambda>":  # a lambda router has no name in LangGraph: its sync run is
            name = None if is_async else "RunnableCallable"  # named by class, its async "Unnamed"
        run = yield (manager.on_chain_start, manager.on_chain_start, (None, value), {"name": name})
        try:
            if branch.is_async:
                result = yield (None, branch.call.acall, (value, ctx))
            else:
                result = branch.call.call(value, ctx)
        except BaseException as exc:
            yield (run.on_chain_error, run.on_chain_error, (exc,))
            raise
        yield (run.on_chain_end, run.on_chain_end, (result,))
        writes.extend(branch.writes(result))
    if node.static_writes:
        writes.extend(node.static_writes)


def _langgraph_signal(exc: Exception) -> Exception:
    """`exc` from `langgraph.errors`, as lgnb's when it is LangGraph's `GraphInterrupt` or
    `ParentCommand`: a graph LangGraph compiled that the node's own code invokes (an agent
    whose tool asks a human, trustcall's extractor) raises LangGraph's classes when it
    pauses or hands off, and the task handles lgnb's (nodes `from_langgraph` ports convert
    their own, `foreign_node._answering`); any other error stays as it is."""
    from lgnb._internal.foreign_node import as_lgnb_signal

    return cast(Exception, as_lgnb_signal(exc))


def _addressed(exc: ParentCommand, task: Task) -> ParentCommand:
    """`graph=PARENT` becomes the namespace of the graph the command is for."""
    cmd = exc.args[0]
    if cmd.graph == Command.PARENT:
        # numeric segments (`<task ns>|1`: a node's second nested graph) are no level
        parts = task.ns.split(NS_SEP)
        while parts and parts[-1].isdigit():
            parts.pop()
        parts = parts[:-1]
        while parts and parts[-1].isdigit():
            parts.pop()
        return ParentCommand(dataclasses.replace(cmd, graph=NS_SEP.join(parts)))
    return exc


def _as_command(task: Task, exc: ParentCommand) -> Command | ParentCommand:
    """A `ParentCommand` caught in `task`: the command for this task's graph (the task's
    output), or the exception to pass on up, addressed."""
    exc = _addressed(exc, task)
    command = _command_for(task, exc)
    return exc if command is None else command


def _note_no_parent(ctx: TaskContext, exc: ParentCommand, token: Token) -> ParentCommand:
    """`exc`, passed on; when no graph encloses this one (a root run, not called from a
    node) nothing can take it, and it leaves the run as LangGraph's does: a note says why
    and what to do (Python 3.11+ shows notes under the traceback)."""
    if ctx.loop.parent_ctx is not None:
        return exc
    handed = _to_langgraph_task(ctx, exc)  # (a LangGraph task called this run: nearest)
    if handed is not None:
        return handed
    if token.old_value not in (None, Token.MISSING):
        return exc
    if hasattr(exc, "add_note"):
        exc.add_note(
            f"Node `{ctx.task.name}` returned Command(graph=Command.PARENT, ...), but its graph "
            "runs at the top level: there is no parent graph to take the command. To route "
            "within this graph, drop `graph=Command.PARENT`; to hand off to a parent graph, "
            "add this graph as a node of that graph (or invoke it from one of its nodes)."
        )
    return exc


def _to_langgraph_task(ctx: TaskContext, exc: ParentCommand) -> ParentCommand | None:
    """A command for the graph above this root run, when a task LangGraph runs invoked it
    (an lgnb agent as a node of `create_swarm` / `create_supervisor`, compiled by
    LangGraph): addressed to that task's namespace, with LangGraph's `Command`, as a
    LangGraph subgraph's command reaches its parent's task (which applies it: a
    handoff). None when no LangGraph task called this run."""
    from lgnb.pregel.main import langgraph_task_ns

    lg_ns = langgraph_task_ns(ctx.loop.run.address)
    cmd = exc.args[0]
    if lg_ns is None or cmd.graph not in ("", lg_ns):
        return None
    from lgnb._internal.foreign import _to_langgraph

    return ParentCommand(_to_langgraph(dataclasses.replace(cmd, graph=lg_ns)))


def _command_for(task: Task, exc: ParentCommand) -> Command | None:
    """A command a subgraph sent to this task's graph becomes this task's output.
    The subgraph names it by this task's namespace, without task ids when a
    `checkpointer=True` subgraph (whose namespace drops them) addressed it."""
    cmd = exc.args[0]
    if cmd.graph in (task.ns, recast_ns(task.ns), task.name):
        return Command(update=cmd.update, goto=cmd.goto, resume=cmd.resume)
    return None


def _log_retry(task: Task, delay: float, attempt: int, exc: Exception) -> None:
    """LangGraph's INFO record of a retry (its words), for whoever watches the logs."""
    if logger.isEnabledFor(logging.INFO):
        logger.info(f"Retrying task {task.name} after {delay:.2f} seconds (attempt {attempt}) "
                    f"after {exc.__class__.__name__} {exc}", exc_info=exc)


def _retry_delay(policies: Sequence[RetryPolicy], attempt: int, exc: Exception) -> float | None:
    """Seconds to wait before the next attempt, or None when the error is final."""
    if isinstance(exc, (GraphBubbleUp,)):
        return None
    for policy in policies:
        retry_on = policy.retry_on
        if isinstance(retry_on, type) and issubclass(retry_on, BaseException):
            matches = isinstance(exc, retry_on)
        elif isinstance(retry_on, Sequence):
            matches = isinstance(exc, tuple(retry_on))
        elif callable(retry_on):  # a predicate (a class that is no exception lands here too)
            matches = bool(cast("Callable[[Exception], bool]", retry_on)(exc))
        else:
            raise TypeError(
                "retry_on must be an Exception class, a list or tuple of Exception classes, "
                "or a callable"
            )
        if not matches:
            continue
        if attempt >= policy.max_attempts:
            return None
        interval = min(
            policy.max_interval, policy.initial_interval * policy.backoff_factor ** (attempt - 1)
        )
        return interval + random.uniform(0, 1) if policy.jitter else interval
    return None


def task_program(
    ctx: TaskContext, policies: Sequence[RetryPolicy], is_async: bool
) -> Generator[Any, Any, BaseException | None]:
    """A task's life, written once: attempts, retries, tracing, the writes of its output.

    Yields requests `(sync_fn, async_fn, args)`, the driver's kind: its answerer calls
    one (awaiting the async one) and sends back the result; an exception raised meanwhile
    is thrown back in. Returns the task's exception, if any. A driver running one task
    at a time answers them itself (`yield from`); `run_task` / `arun_task` answer them
    for a task run on its own.
    """
    task = ctx.task
    call = task.node.bound.call  # type: ignore[union-attr]
    attempt = 0
    run = ctx.loop.run
    messages = bool(run.node_messages)
    # the input's `__start__` task is LangGraph's bare untraced write: no run of its own,
    # unless conditional edges leave START (LangGraph traces it then, tagged hidden)
    node_run = (yield from node_started(ctx, is_async)) if run.tracing and (
        not task.node.hidden or _routes(task.node)) else None
    # the task is current while it runs (`get_config()`, `interrupt()`, ...)
    token = TASK_CTX.set(ctx)
    lc_token = (
        _enter_langchain(ctx)
        if run.callbacks or ctx.node_run is not None or _langchain_loaded()
        else None
    )
    try:
        while True:
            attempt += 1
            try:
                meta = _messages_start(ctx) if messages else None
                try:
                    if is_async:
                        output = yield (call, _acall, (task.input, ctx))
                    else:  # what any sync answerer does with the request: no round trip
                        output = copy_context().run(call, task.input, ctx)
                except Exception as exc:
                    if type(exc).__module__ != "langgraph.errors":
                        raise
                    raise _langgraph_signal(exc) from None
                # the writers (conditional edges too) run inside the node's run; the
                # messages it returned stream when that run ends, as LangGraph's do
                if node_run is not None:
                    yield from _traced_finish(ctx, output, is_async)
                elif (rest := _finish(task, output, is_async)) is not None:
                    yield (None, _afinish, (task, output, rest))
                if meta is not None:
                    _messages_end(ctx, meta, output)
                if node_run is not None:
                    yield from node_ended(ctx, node_run, output, is_async)
                    node_run = None
                return None
            except ParentCommand as exc:
                if node_run is not None:  # the node's run ends with it, as in LangGraph
                    yield from node_failed(node_run, exc)
                    node_run = None
                if not isinstance(command := _as_command(task, exc), Command):
                    return _note_no_parent(ctx, command, token)
                if (rest := _finish(task, command, is_async)) is not None:
                    yield (None, _afinish, (task, command, rest))
                return None
            except asyncio.CancelledError as exc:
                if is_async and _cancel_requested():
                    raise  # the step or the caller stops this task: not a failure
                # a node raised it itself (no event loop cancels a sync node): a failure
                error = _node_cancelled(task, exc)
                if node_run is not None:
                    yield from node_failed(node_run, error)
                return error
            except Exception as exc:
                delay = _retry_delay(policies, attempt, exc) if policies else None
                if delay is None:
                    if node_run is not None:
                        yield from node_failed(node_run, exc)
                    return exc
                if node_run is not None:  # each attempt is a run of its own, as in LangGraph
                    yield from node_failed(node_run, exc)
                _reset_for_retry(ctx)
                yield (time.sleep, asyncio.sleep, (delay,))
                _log_retry(task, delay, attempt, exc)
                if node_run is not None:
                    if lc_token is not None:
                        _exit_langchain(lc_token)
                        lc_token = None
                    node_run = yield from node_started(ctx, is_async)
                    lc_token = _enter_langchain(ctx)
            except BaseException as exc:  # KeyboardInterrupt: stop now
                if node_run is not None:
                    yield from node_failed(node_run, exc)
                return exc
    finally:
        if lc_token is not None:
            _exit_langchain(lc_token)
        TASK_CTX.reset(token)


def run_task(ctx: TaskContext, policies: Sequence[RetryPolicy]) -> BaseException | None:
    """Run a task to completion in this thread; return its exception, if any.

    Untraced, the task asks for nothing but a retry's sleep: its life runs here as a
    plain function, `task_program`'s sync path without the generator. Why: every frame
    of a generator on the stack is walked by each exception raised under it (LangChain
    raises and catches a few per model call), and the generator costs its creation and a
    `send` per task — ~3% of a ReAct node's engine overhead. A traced task yields its
    trace calls: the program runs, answered here."""
    run = ctx.loop.run
    if run.tracing:
        return answer(task_program(ctx, policies, False))
    task = ctx.task
    call = task.node.bound.call  # type: ignore[union-attr]
    messages = bool(run.node_messages)
    token = TASK_CTX.set(ctx)  # the task is current while it runs
    lc_token = _enter_langchain(ctx) if run.callbacks or _langchain_loaded() else None
    attempt = 0
    try:
        while True:
            attempt += 1
            try:
                meta = _messages_start(ctx) if messages else None
                # in a context of its own, as LangGraph calls every node: a ContextVar
                # the node sets is seen neither by later nodes nor by the caller
                try:
                    output = copy_context().run(call, task.input, ctx)
                except Exception as exc:
                    if type(exc).__module__ != "langgraph.errors":
                        raise
                    raise _langgraph_signal(exc) from None
                _finish(task, output)
                if meta is not None:  # when the node's run ends, after its writers
                    _messages_end(ctx, meta, output)
                return None
            except ParentCommand as exc:
                if not isinstance(command := _as_command(task, exc), Command):
                    return _note_no_parent(ctx, command, token)
                _finish(task, command)
                return None
            except asyncio.CancelledError as exc:  # raised by the node itself: a failure
                return _node_cancelled(task, exc)
            except Exception as exc:
                delay = _retry_delay(policies, attempt, exc) if policies else None
                if delay is None:
                    return exc
                _reset_for_retry(ctx)
                time.sleep(delay)
                _log_retry(task, delay, attempt, exc)
            except BaseException as exc:  # KeyboardInterrupt: stop now
                return exc
    finally:
        if lc_token is not None:
            _exit_langchain(lc_token)
        TASK_CTX.reset(token)


async def arun_task(ctx: TaskContext, policies: Sequence[RetryPolicy]) -> BaseException | None:
    """Run a task to completion as a coroutine; return its exception, if any."""
    return await aanswer(task_program(ctx, policies, True))


async def _acall(value: Any, ctx: TaskContext) -> Any:
    """Call the node once in an async run: under its timeout, awaited, or (a sync node)
    in a thread."""
    task = ctx.task
    bound = task.node.bound
    if (timeout := task.timeout or task.node.timeout) is not None:
        return await _timed(ctx, TimeoutPolicy.coerce(timeout))
    return await _node_call(bound, value, ctx)


def _node_call(bound: Any, value: Any, ctx: TaskContext) -> Coroutine[Any, Any, Any]:
    """The node's call in an async run: a RunnableLambda streamed when a streaming handler
    watches (`lgnb._internal.streamed_node`), an async node awaited, a sync one in a thread."""
    if ctx.node_run is not None and getattr(bound, "lam", None) is not None and streams_nodes(ctx):
        return _in_own_context(astreamed(bound, value, ctx))
    if _awaitable(bound):
        return _in_own_context(bound.acall(value, ctx))
    return _in_thread(bound.call, value, ctx)


def _awaitable(bound: Any) -> bool:
    """Whether an async run awaits the node's async side: an async function, a sync one
    with an async twin (`RunnableLambda(f, afunc=af)`, a LangGraph node), a Runnable or a
    subgraph; else its sync function runs in a thread."""
    return bool(
        bound.is_async or getattr(bound, "afunc", None) is not None or bound.subgraph is not None
        or bound.runnable is not None
    )


async def _in_own_context(call: Coroutine[Any, Any, Any]) -> Any:
    """Await an async node's call as a task with a copy of the current context, as
    LangGraph does (Python 3.11+; before, asyncio takes no context): a ContextVar the
    node sets is seen neither by later nodes nor by the caller."""
    if sys.version_info < (3, 11):
        return await call
    return await asyncio.create_task(call, context=copy_context())


class _AttemptClock:
    """Progress of one timed attempt. Heartbeats (and, with `refresh_on="auto"`, stream
    output and callback events) push the idle deadline; once the attempt timed out, its
    late stream output is dropped."""

    __slots__ = ("last", "closed")

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.closed = False

    def touch(self) -> None:
        self.last = time.monotonic()


async def _timed(ctx: TaskContext, policy: TimeoutPolicy | None) -> Any:
    """Call the node under `policy`: NodeTimeoutError (the attempt cancelled, its writes
    discarded) when it runs past `run_timeout` or makes no progress for `idle_timeout`."""
    task = ctx.task
    call = _node_call(task.node.bound, task.input, ctx)
    if policy is None:
        return await call
    run_s, idle_s = policy.run_timeout, policy.idle_timeout
    clock = _AttemptClock()
    auto = policy.refresh_on == "auto"
    runtime = ctx.runtime
    writer = runtime.stream_writer

    def guarded_writer(value: Any) -> None:
        if clock.closed:
            return
        if auto:
            clock.touch()
        writer(value)

    ctx.runtime = runtime.override(stream_writer=guarded_writer, heartbeat=clock.touch)
    ctx._runtime = None
    lc_token = None
    if auto and idle_s is not None:
        _watch_callbacks(ctx, clock)
        if not ctx.loop.run.callbacks:  # make the node's config the one its runnables inherit
            lc_token = _enter_langchain(ctx)
    start = clock.last
    try:
        child = asyncio.ensure_future(call)  # (the task copies the context here)
    finally:
        if lc_token is not None:
            _exit_langchain(lc_token)
    run_left = idle_left = float("inf")
    try:
        while True:
            now = time.monotonic()
            if run_s is not None:
                run_left = start + run_s - now  # type: ignore[operator]
            if idle_s is not None:
                idle_left = clock.last + idle_s - now  # type: ignore[operator]
            left = min(run_left, idle_left)
            if left <= 0:
                break
            done, _ = await asyncio.wait((child,), timeout=left)
            if done:
                return child.result()
    except asyncio.CancelledError:
        child.cancel()
        raise
    finally:
        ctx.runtime = runtime
        ctx._runtime = None
    clock.closed = True
    child.cancel()
    child.add_done_callback(_retrieved)
    task.writes.clear()
    raise NodeTimeoutError(
        task.name,
        time.monotonic() - start,
        kind="run" if run_left <= 0 else "idle",
        idle_timeout=idle_s,  # type: ignore[arg-type]
        run_timeout=run_s,  # type: ignore[arg-type]
    )


def _retrieved(fut: asyncio.Future) -> None:
    if not fut.cancelled():
        fut.exception()  # an abandoned attempt's error is not reported


def _watch_callbacks(ctx: TaskContext, clock: _AttemptClock) -> None:
    """Any LangChain callback event under the node (a chat model's tokens...) is progress."""
    from langchain_core.callbacks import BaseCallbackHandler

    class _Progress(BaseCallbackHandler):
        run_inline = True

        def __getattribute__(self, name: str) -> Any:
            if name.startswith("on_"):
                clock.touch()
            return object.__getattribute__(self, name)

    config = ctx.config
    callbacks = config.get("callbacks")
    handler = _Progress()
    if callbacks is None:
        config["callbacks"] = [handler]
    elif isinstance(callbacks, list):
        config["callbacks"] = [*callbacks, handler]
    else:
        callbacks = callbacks.copy()
        callbacks.add_handler(handler, inherit=True)
        config["callbacks"] = callbacks


def _node_cancelled(task: Task, exc: BaseException) -> NodeCancelledError:
    """A node that raised `CancelledError` itself failed: the run must not end quietly."""
    error = NodeCancelledError(task.name)
    error.__cause__ = exc
    return error


def _cancel_requested() -> bool:
    """Whether someone cancelled the running asyncio task (vs. a node raising
    `CancelledError` on its own, which leaves the task's cancel count at 0)."""
    current = asyncio.current_task()
    if current is None:
        return True
    cancelling = getattr(current, "cancelling", None)  # Python 3.11+; 3.10 keeps no count
    return cancelling is None or cancelling() > 0


async def _in_thread(fn: Any, value: Any, ctx: TaskContext) -> Any:
    """Run a sync node off the event loop (keeps a notebook kernel responsive)."""
    context = copy_context()
    aio = asyncio.get_running_loop()
    context.run(DRIVER_LOOP.set, aio)
    return await aio.run_in_executor(None, context.run, fn, value, ctx)


def _reset_for_retry(ctx: TaskContext) -> None:
    ctx.attempt += 1
    ctx.task.writes.clear()
    # the answers given so far stay: a retried attempt's `interrupt()` gets the same ones
    # (the resume value was taken from the loop by the first attempt), as in LangGraph
    ctx.interrupt_index = 0


def commit_writes(task: Task, exc: BaseException | None) -> list[tuple[str, Any]] | None:
    """The writes to record for a finished task, LangGraph 1.2's way.

    Success: its writes (plus a NO_WRITES marker when it wrote only control writes);
    an interrupt: the interrupts plus the answers consumed so far; a failure: the writes
    made before the failure, then the error. Returns None for exceptions that must
    propagate without being recorded (bubble-ups other than interrupts).
    """
    if exc is None:
        done = task.writes
        for c, _ in done:  # (a loop, not all(): this runs once per task)
            if c not in CONTROL_WRITES:
                return done
        done.append((NO_WRITES, None))
        return done
    if isinstance(exc, GraphInterrupt):
        # its traceback holds the frames it left (the node's, the runner's, a pool
        # thread's work item holding the future holding it): cycles that would keep the
        # run's state until a full collection of the cyclic GC. Nothing shows an
        # interrupt's traceback; the step raises the task's interrupts anew.
        exc.__traceback__ = None
        interrupts = tuple(exc.args[0]) if exc.args and exc.args[0] else ()
        task.interrupts = interrupts
        if interrupts:
            writes: list[tuple[str, Any]] = [(INTERRUPT, interrupts)]
            writes.extend(w for w in task.writes if w[0] == RESUME)
            return writes
        return None
    if isinstance(exc, GraphBubbleUp):
        return None
    task.error = exc
    task.writes.append((ERROR, exc))
    return task.writes


CONTROL_WRITES = frozenset((ERROR, INTERRUPT, RESUME))

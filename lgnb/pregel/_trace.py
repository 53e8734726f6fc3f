"""LangChain callbacks for graph and node runs (LangSmith tracing, astream_events, handlers).

Only when the caller passes callbacks, or LangSmith tracing is on (`tracing_enabled`):
then the graph run and each node run get `on_chain_start` / `on_chain_end` /
`on_chain_error`, nested as LangGraph nests them, and node code sees a child callback
manager in its config (and, when traced, its run as LangSmith's current run tree).
Otherwise none of this runs — the per-node cost of tracing is paid only by those who trace.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb._internal.context import TaskContext
    from lgnb.pregel._loop import Loop

logger = logging.getLogger(__name__)

__all__ = (
    "tracing_enabled",
    "enter_run_tree",
    "exit_run_tree",
    "start_graph",
    "astart_graph",
    "end_graph",
    "aend_graph",
    "start_node",
    "astart_node",
    "end_node",
    "aend_node",
)


# LangSmith's switches, in the order it reads them (`langsmith.utils.tracing_is_enabled`)
_TRACING_ENV = (
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGSMITH_TRACING",
    "LANGCHAIN_TRACING",
)


def tracing_enabled() -> bool:
    """Whether LangChain traces a run given no callbacks, as it decides for a Runnable:
    LangSmith tracing switched on by the environment, by `langsmith.tracing_context(
    enabled=True)` or `tracing_v2_enabled()`, or a `@traceable` run in progress.

    Checked without importing LangSmith: until something has imported it, only the
    environment can have switched tracing on (a few `os.environ` lookups per run).
    """
    utils = sys.modules.get("langsmith.utils")
    if utils is None:
        for name in _TRACING_ENV:
            value = os.environ.get(name)
            if value is not None and value.strip():
                return value == "true"
        return False
    context = sys.modules.get("langchain_core.tracers.context")
    if context is not None and context.tracing_v2_callback_var.get() is not None:
        return True
    try:
        return bool(utils.tracing_is_enabled())
    except Exception:  # pragma: no cover - a LangSmith without this helper
        return False


def enter_run_tree(ctx: TaskContext) -> Any:
    """Make the node's LangSmith run the current run tree while its code runs (what
    `langsmith.get_current_run_tree()` returns; `@traceable` calls nest under it), as a
    LangChain Runnable does. Returns what `exit_run_tree` restores, or None."""
    node_run = ctx.node_run
    from langchain_core.tracers.langchain import LangChainTracer

    for handler in node_run.handlers:
        if isinstance(handler, LangChainTracer):
            run = handler.run_map.get(str(node_run.run_id))
            if run is None:
                return None
            from langsmith.run_helpers import _set_tracing_context, get_current_run_tree

            previous = get_current_run_tree()
            _set_tracing_context({"parent": run})
            return (_set_tracing_context, previous)
    return None


def exit_run_tree(entered: Any) -> None:
    """Undo `enter_run_tree`."""
    set_context, previous = entered
    set_context({"parent": previous})


def _graph_manager(loop: Loop, *, is_async: bool) -> Any:
    from langchain_core.callbacks.manager import AsyncCallbackManager, CallbackManager

    run = loop.run
    parent = loop.parent_ctx
    cls = AsyncCallbackManager if is_async else CallbackManager
    if parent is not None and parent.node_run is not None:
        return parent.node_run.get_child()
    config = run.user_config
    # as LangGraph's graph runs: the run's address (thread_id, ...) and the integration
    metadata = {**run.address_metadata(), **(config.get("metadata") or {})}
    metadata.setdefault("ls_integration", "langgraph")
    return cls.configure(
        inheritable_callbacks=run.callbacks,
        inheritable_tags=config.get("tags"),
        inheritable_metadata=metadata,
    )


def start_graph(loop: Loop, input: Any) -> None:
    manager = _graph_manager(loop, is_async=False)
    loop.run_manager = manager.on_chain_start(
        None,
        input,
        name=loop.config.get("run_name", loop.graph.name) if loop.is_run_root else loop.graph.name,
        run_id=loop.config.get("run_id") if loop.is_run_root else None,
    )


async def astart_graph(loop: Loop, input: Any) -> None:
    manager = _graph_manager(loop, is_async=True)
    loop.run_manager = await manager.on_chain_start(
        None,
        input,
        name=loop.config.get("run_name", loop.graph.name) if loop.is_run_root else loop.graph.name,
        run_id=loop.config.get("run_id") if loop.is_run_root else None,
    )


def end_graph(loop: Loop, exc: BaseException | None) -> None:
    rm = loop.run_manager
    if rm is None:
        return
    if exc is None:
        rm.on_chain_end(loop.output)
    else:
        rm.on_chain_error(exc)


async def aend_graph(loop: Loop, exc: BaseException | None) -> None:
    rm = loop.run_manager
    if rm is None:
        return
    if exc is None:
        await rm.on_chain_end(loop.output)
    else:
        await rm.on_chain_error(exc)


def _node_manager(ctx: TaskContext) -> Any:
    loop = ctx.loop
    caller = getattr(ctx, "caller", None)
    if caller is not None and caller.node_run is not None:
        # a `@task` call: its run is a child of the calling node's run, with its own
        # metadata (langgraph_node, _path, _triggers, _checkpoint_ns name the task)
        manager = caller.config["callbacks"].copy()
        manager.add_metadata(ctx.config.get("metadata") or {}, inherit=True)
        return manager
    child = loop.run_manager.get_child(f"graph:step:{loop.step}")
    config = ctx.config
    child.add_tags(config.get("tags") or [], inherit=True)
    child.add_metadata(config.get("metadata") or {}, inherit=True)
    return child


def _input(ctx: TaskContext) -> Any:
    """The input a node's run records (a task call's arguments by parameter name)."""
    trace_input = getattr(ctx.task.node.bound, "trace_input", None)
    return ctx.task.input if trace_input is None else trace_input(ctx.task.input)


def _recorded(value: Any, process: Any) -> Any:
    """What tracers record for `value` under a `TracePolicy` processor: its result, or the
    value itself when there is no processor or it raised (a processor never fails a node)."""
    if process is None:
        return value
    try:
        return process(value)
    except Exception:
        logger.exception("TracePolicy processor raised; recording the untransformed payload")
        return value


def _split(manager: Any) -> tuple[Any, Any]:
    """`manager` as two copies: one for tracers (they get a node's recorded payloads under
    a TracePolicy) and one for every other handler (stream handlers and custom callbacks
    keep seeing the real payloads)."""
    import copy

    from langchain_core.tracers.base import BaseTracer

    def is_tracer(h: Any) -> bool:
        return isinstance(h, BaseTracer) and not _is_stream_handler(h)

    real, tracers = copy.copy(manager), copy.copy(manager)
    tracers.handlers = [h for h in manager.handlers if is_tracer(h)]
    real.handlers = [h for h in manager.handlers if not is_tracer(h)]
    return real, tracers


def _policy(ctx: TaskContext, which: str) -> Any:
    policy = getattr(ctx.task.node, "trace_policy", None)
    return getattr(policy, which, None) if policy is not None else None


def start_node(ctx: TaskContext) -> Any:
    """Start the node's run; its child manager becomes the node config's callbacks."""
    manager, payload = _node_manager(ctx), _input(ctx)
    recorded = _recorded(payload, _policy(ctx, "process_inputs"))
    if recorded is payload:
        rm = manager.on_chain_start(None, payload, name=ctx.task.name)
    else:
        real, tracers = _split(manager)
        rm = real.on_chain_start(None, payload, name=ctx.task.name)
        tracers.on_chain_start(None, recorded, name=ctx.task.name, run_id=rm.run_id)
        rm.handlers = manager.handlers
    ctx.node_run = rm
    ctx.config["callbacks"] = rm.get_child("seq:step:1")  # a node runs as step 1 of its sequence
    return rm


async def astart_node(ctx: TaskContext) -> Any:
    manager, payload = _node_manager(ctx), _input(ctx)
    recorded = _recorded(payload, _policy(ctx, "process_inputs"))
    if recorded is payload:
        rm = await manager.on_chain_start(None, payload, name=ctx.task.name)
    else:
        real, tracers = _split(manager)
        rm = await real.on_chain_start(None, payload, name=ctx.task.name)
        # tracers start last: a cancellation before then leaves no tracer run open
        await tracers.on_chain_start(None, recorded, name=ctx.task.name, run_id=rm.run_id)
        rm.handlers = manager.handlers
    ctx.node_run = rm
    ctx.config["callbacks"] = rm.get_child("seq:step:1")  # a node runs as step 1 of its sequence
    return rm


def end_node(ctx: TaskContext, node_run: Any, output: Any) -> None:
    """End the node's run with `output` (tracers get it through the node's TracePolicy)."""
    recorded = _recorded(output, _policy(ctx, "process_outputs"))
    if recorded is output:
        node_run.on_chain_end(output)
    else:
        real, tracers = _split(node_run)
        tracers.on_chain_end(recorded)
        real.on_chain_end(output)


async def aend_node(ctx: TaskContext, node_run: Any, output: Any) -> None:
    recorded = _recorded(output, _policy(ctx, "process_outputs"))
    if recorded is output:
        await node_run.on_chain_end(output)
    else:
        real, tracers = _split(node_run)
        await tracers.on_chain_end(recorded)  # tracers first: their run is never left open
        await real.on_chain_end(output)


def _is_stream_handler(handler: Any) -> bool:
    """Whether `handler` is one of LangChain's streaming handlers (astream_events,
    astream_log): by inheritance, as LangGraph decides; a handler that merely has tap
    methods is a plain callback handler."""
    try:
        from langchain_core.tracers._streaming import _StreamingCallbackHandler
    except ImportError:  # pragma: no cover - older langchain-core
        return False
    return _StreamingCallbackHandler in type(handler).__mro__


def tap_output(node_run: Any, output: Any) -> None:
    """Let streaming handlers (astream_events) see the node's output as a stream chunk."""
    for handler in node_run.handlers:
        if _is_stream_handler(handler) and type(handler).__name__ != "StreamMessagesHandler":
            for _ in handler.tap_output_iter(node_run.run_id, iter((output,))):
                pass


async def atap_output(node_run: Any, output: Any) -> None:
    for handler in node_run.handlers:
        if _is_stream_handler(handler) and type(handler).__name__ != "StreamMessagesHandler":
            async for _ in handler.tap_output_aiter(node_run.run_id, _one(output)):
                pass


async def _one(value: Any) -> Any:
    yield value

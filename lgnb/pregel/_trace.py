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

from lgnb.pregel._program import Program

if TYPE_CHECKING:
    from lgnb._internal.context import TaskContext
    from lgnb.pregel._loop import Loop

logger = logging.getLogger(__name__)

__all__ = (
    "tracing_enabled",
    "enter_run_tree",
    "exit_run_tree",
    "graph_started",
    "graph_ended",
    "node_started",
    "node_ended",
    "node_failed",
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
        # a sync graph invoked in a sync node of an async run (or back): its manager is
        # of this run's kind, its handlers, parent and metadata the node run's child's
        # (tagged `seq:step:1`: the node's code runs as step 1 of its sequence)
        manager = _of_kind(parent.node_run.get_child("seq:step:1"), cls)
        if "checkpoint_ns" not in manager.inheritable_metadata:
            # as LangGraph's config of a subgraph: the outermost task's ns, copied from
            # `configurable` (deeper subgraphs keep it)
            manager.add_metadata({"checkpoint_ns": parent.task.ns})
        # the tags and metadata it was given (`.with_config(tags=...)` on a graph invoked
        # in the node, or on a subgraph node, whose loop shares the parent's run)
        config = run.user_config if loop.is_run_root else (loop.graph.config or {})
        if tags := config.get("tags"):
            manager.add_tags(tags)
        if metadata := config.get("metadata"):
            manager.add_metadata(metadata)
        return _with_own_handlers(_for_own_messages(manager, run), run.callbacks)
    config = run.user_config
    # as LangGraph's graph runs: the run's address (thread_id, ...) and the integration
    metadata = {**run.address_metadata(), **(config.get("metadata") or {})}
    if run.caller_run is not None:  # on a thread of its own, invoked in a traced node
        from lgnb.pregel._messages import without_own_graph_handlers

        manager = _of_kind(without_own_graph_handlers(run.caller_run.get_child("seq:step:1")), cls)
        manager.add_metadata(metadata)
        return _with_own_handlers(_for_own_messages(manager, run), run.callbacks)
    metadata.setdefault("ls_integration", "langgraph")
    return cls.configure(
        inheritable_callbacks=run.callbacks,
        inheritable_tags=config.get("tags"),
        inheritable_metadata=metadata,
    )


def _for_own_messages(manager: Any, run: Any) -> Any:
    """`manager` (a traced node run's child) less the caller's content-block `messages`
    handlers when `Pregel._prepare` dropped them from the callbacks of the graph run
    inside that node (a v1 `sub.stream(..., stream_mode="messages")` in a node of a v3
    run): the model would report content-block events instead of chunks. LangGraph strips
    them from the nested run's callbacks whether the caller is traced or not."""
    handler = run.messages_handler
    if handler is None:
        return manager
    from lgnb.pregel._messages import StreamMessagesHandlerV2, without_v2_handlers

    if isinstance(handler, StreamMessagesHandlerV2) or without_v2_handlers(run.callbacks) is not run.callbacks:
        return manager  # its own are content-block ones, or it kept them (a v2 stream)
    return without_v2_handlers(manager)


def _with_own_handlers(manager: Any, callbacks: Any) -> Any:
    """`manager` (a traced node run's child: the caller's handlers) plus the handlers of
    the graph run inside that node: those it was given and those of its own stream (a
    node's `sub.stream(..., stream_mode="messages")` reads the tokens too), as LangGraph
    adds them to the child graph's run manager. Each handler once."""
    if callbacks:
        inheritable = callbacks if isinstance(callbacks, list) else callbacks.inheritable_handlers
        for handler in callbacks if isinstance(callbacks, list) else callbacks.handlers:
            manager.add_handler(handler, inherit=handler in inheritable)
    return manager


def _of_kind(manager: Any, cls: type) -> Any:
    """`manager` as a `cls` (CallbackManager or AsyncCallbackManager): the same handlers,
    parent run, tags and metadata."""
    if type(manager) is cls:
        return manager
    return cls(
        handlers=manager.handlers,
        inheritable_handlers=manager.inheritable_handlers,
        parent_run_id=manager.parent_run_id,
        tags=manager.tags,
        inheritable_tags=manager.inheritable_tags,
        metadata=manager.metadata,
        inheritable_metadata=manager.inheritable_metadata,
    )


def graph_started(loop: Loop, input: Any, is_async: bool) -> Program[None]:
    """Start the graph's run (`on_chain_start`); its manager is the parent of the nodes'."""
    start = _graph_manager(loop, is_async=is_async).on_chain_start
    root = loop.is_run_root
    kwargs = {
        # a subgraph node's name is its own, or the run name it was given (`with_config`)
        "name": loop.config.get("run_name", loop.graph.name) if root else (
            (loop.graph.config or {}).get("run_name") or loop.graph.name),
        "run_id": loop.config.get("run_id") if root else None,
    }
    loop.run_manager = yield (start, start, (None, input), kwargs)


def graph_ended(loop: Loop, exc: BaseException | None) -> Program[None]:
    """End the graph's run with its output, or with `exc`."""
    rm = loop.run_manager
    if rm is None:
        return
    if exc is None:
        yield (rm.on_chain_end, rm.on_chain_end, (loop.output,))
    else:
        yield (rm.on_chain_error, rm.on_chain_error, (exc,))


def _node_manager(ctx: TaskContext, is_async: bool) -> Any:
    loop = ctx.loop
    caller = getattr(ctx, "caller", None)
    if caller is not None and caller.node_run is not None:
        # a `@task` call: its run is a child of the calling node's run, with its own
        # metadata (langgraph_node, _path, _triggers, _checkpoint_ns name the task); of
        # the task's kind (a sync task called in a sync entrypoint of an async run, or back)
        from langchain_core.callbacks.manager import AsyncCallbackManager, CallbackManager

        manager = caller.config["callbacks"]
        if isinstance(manager, AsyncCallbackManager) != is_async:
            manager = _of_kind(manager, AsyncCallbackManager if is_async else CallbackManager)
        manager = manager.copy()
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


def node_started(ctx: TaskContext, is_async: bool = True) -> Program[Any]:
    """Start the node's run; its child manager becomes the node config's callbacks."""
    manager, payload = _node_manager(ctx, is_async), _input(ctx)
    recorded = _recorded(payload, _policy(ctx, "process_inputs"))
    name = {"name": ctx.task.name}
    if recorded is payload:
        rm = yield (manager.on_chain_start, manager.on_chain_start, (None, payload), name)
    else:
        real, tracers = _split(manager)
        rm = yield (real.on_chain_start, real.on_chain_start, (None, payload), name)
        # tracers start last: a cancellation before then leaves no tracer run open
        start = tracers.on_chain_start
        yield (start, start, (None, recorded), {**name, "run_id": rm.run_id})
        rm.handlers = manager.handlers
    ctx.node_run = rm
    ctx.config["callbacks"] = rm.get_child("seq:step:1")  # a node runs as step 1 of its sequence
    return rm


def node_ended(ctx: TaskContext, node_run: Any, output: Any, is_async: bool = True) -> Program[None]:
    """End the node's run with `output` (tracers get it through the node's TracePolicy);
    in an async run, streaming handlers (astream_events) first see the output as a stream
    chunk. A sync run's nodes are invoked, not streamed: no chunk, as in LangGraph (a sync
    graph invoked inside a node of an `astream_events` run shows its nodes' start and end)."""
    for handler in _stream_handlers(node_run) if is_async else ():
        yield (_tap, _atap, (handler, node_run.run_id, output))
    recorded = _recorded(output, _policy(ctx, "process_outputs"))
    if recorded is output:
        yield (node_run.on_chain_end, node_run.on_chain_end, (output,))
    else:
        real, tracers = _split(node_run)
        yield (tracers.on_chain_end, tracers.on_chain_end, (recorded,))
        yield (real.on_chain_end, real.on_chain_end, (output,))


def node_failed(node_run: Any, exc: BaseException) -> Program[None]:
    """End the node's run with `exc`."""
    yield (node_run.on_chain_error, node_run.on_chain_error, (exc,))


def _is_stream_handler(handler: Any) -> bool:
    """Whether `handler` is one of LangChain's streaming handlers (astream_events,
    astream_log): by inheritance, as LangGraph decides; a handler that merely has tap
    methods is a plain callback handler."""
    try:
        from langchain_core.tracers._streaming import _StreamingCallbackHandler
    except ImportError:  # pragma: no cover - older langchain-core
        return False
    return _StreamingCallbackHandler in type(handler).__mro__


def _stream_handlers(node_run: Any) -> list[Any]:
    """The node run's streaming handlers that see its output as a stream chunk."""
    return [
        h for h in node_run.handlers
        if _is_stream_handler(h) and type(h).__name__ != "StreamMessagesHandler"
    ]


def _tap(handler: Any, run_id: Any, output: Any) -> None:
    for _ in handler.tap_output_iter(run_id, iter((output,))):
        pass


async def _atap(handler: Any, run_id: Any, output: Any) -> None:
    async for _ in handler.tap_output_aiter(run_id, _one(output)):
        pass


async def _one(value: Any) -> Any:
    yield value

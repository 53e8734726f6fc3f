"""LangChain callbacks for graph and node runs (LangSmith tracing, astream_events, handlers).

Only when the caller passes callbacks: then the graph run and each node run get
`on_chain_start` / `on_chain_end` / `on_chain_error`, nested as LangGraph nests them, and
node code sees a child callback manager in its config. Without caller callbacks none of
this runs — the per-node cost of tracing is paid only by those who trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb.pregel._context import TaskContext
    from lgnb.pregel._loop import Loop

__all__ = (
    "start_graph",
    "astart_graph",
    "end_graph",
    "aend_graph",
    "start_node",
    "astart_node",
)


def _graph_manager(loop: Loop, *, is_async: bool) -> Any:
    from langchain_core.callbacks.manager import AsyncCallbackManager, CallbackManager

    run = loop.run
    parent = loop.parent_ctx
    cls = AsyncCallbackManager if is_async else CallbackManager
    if parent is not None and parent.node_run is not None:
        return parent.node_run.get_child()
    config = run.user_config
    return cls.configure(
        inheritable_callbacks=run.callbacks,
        inheritable_tags=config.get("tags"),
        inheritable_metadata=config.get("metadata"),
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
        # a `@task` call: its run is a child of the calling node's run
        return caller.config["callbacks"]
    child = loop.run_manager.get_child(f"graph:step:{loop.step}")
    config = ctx.config
    child.add_tags(config.get("tags") or [], inherit=True)
    child.add_metadata(config.get("metadata") or {}, inherit=True)
    return child


def _input(ctx: TaskContext) -> Any:
    """The input a node's run records (a task call's arguments by parameter name)."""
    trace_input = getattr(ctx.task.node.bound, "trace_input", None)
    return ctx.task.input if trace_input is None else trace_input(ctx.task.input)


def start_node(ctx: TaskContext) -> Any:
    """Start the node's run; its child manager becomes the node config's callbacks."""
    rm = _node_manager(ctx).on_chain_start(None, _input(ctx), name=ctx.task.name)
    ctx.node_run = rm
    ctx.config["callbacks"] = rm.get_child("seq:step:1")  # a node runs as step 1 of its sequence
    return rm


async def astart_node(ctx: TaskContext) -> Any:
    rm = await _node_manager(ctx).on_chain_start(None, _input(ctx), name=ctx.task.name)
    ctx.node_run = rm
    ctx.config["callbacks"] = rm.get_child("seq:step:1")  # a node runs as step 1 of its sequence
    return rm


def tap_output(node_run: Any, output: Any) -> None:
    """Let streaming handlers (astream_events) see the node's output as a stream chunk."""
    for handler in node_run.handlers:
        tap = getattr(handler, "tap_output_iter", None)
        if tap is not None and type(handler).__name__ != "StreamMessagesHandler":
            for _ in tap(node_run.run_id, iter((output,))):
                pass


async def atap_output(node_run: Any, output: Any) -> None:
    for handler in node_run.handlers:
        tap = getattr(handler, "tap_output_aiter", None)
        if tap is not None and type(handler).__name__ != "StreamMessagesHandler":
            async for _ in tap(node_run.run_id, _one(output)):
                pass


async def _one(value: Any) -> Any:
    yield value

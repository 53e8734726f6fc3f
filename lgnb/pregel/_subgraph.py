"""Running a compiled graph as a node of another: namespaces, checkpoints, resumes.

The subgraph gets its own Loop under the parent task's namespace (`node:<task id>`, or
`node` for `checkpointer=True` subgraphs that keep one state per thread), shares the
parent's run context (stream queue, callbacks) and checkpointer, and resumes from its own
saved checkpoint when the parent resumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import CONF
from lgnb.pregel._driver import adrive, drive
from lgnb.pregel._loop import Loop
from lgnb.pregel._options import (
    DEFAULT_RECURSION_LIMIT,
    loop_args,
    recast_ns,
    saver_config,
)

if TYPE_CHECKING:
    from lgnb.pregel._context import TaskContext
    from lgnb.pregel.main import Pregel

__all__ = ("arun_as_subgraph", "run_as_subgraph", "subloop")


def subloop(graph: Pregel, ctx: TaskContext) -> tuple[Loop, bool]:
    """The loop of `graph` run as the node of `ctx`'s task, and whether it resumes."""
    parent = ctx.loop
    run = parent.run
    task = ctx.task
    config = dict(parent.config)
    conf = dict(config.get(CONF) or {})
    # checkpointer=True: the subgraph keeps one state per thread, across parent runs
    ns = recast_ns(task.ns) if graph.checkpointer is True else task.ns
    conf["checkpoint_ns"] = ns
    cmap = dict(conf.get("checkpoint_map") or {})
    cmap[parent.ns] = parent.checkpoint_id
    conf["checkpoint_map"] = cmap
    conf.pop("checkpoint_id", None)
    config[CONF] = conf
    checkpointer = None if graph.checkpointer is False else parent.checkpointer
    loop = Loop(
        graph,
        run,
        config=config,
        saved=None,
        checkpointer=checkpointer,
        durability=parent.durability,
        ns=ns,
        interrupt_before=graph.interrupt_before_nodes,
        interrupt_after=graph.interrupt_after_nodes,
        output_keys=graph.output_channels,
        recursion_limit=config.get("recursion_limit", DEFAULT_RECURSION_LIMIT),
        parent_ctx=ctx,
        is_nested=True,
    )
    return loop, parent.is_resuming


def run_as_subgraph(graph: Pregel, value: Any, ctx: TaskContext) -> Any:
    """Run this graph as a node of a parent graph; return its output state."""
    loop, resuming = subloop(graph, ctx)
    if loop.checkpointer is not None:
        saved = loop.checkpointer.get_tuple(saver_config(loop.config))
        if saved is not None:
            loop = Loop(graph, loop.run, saved=saved, **loop_args(loop))
    for _ in drive(loop, value, resuming=resuming and loop.has_saved):
        pass
    graph._check_exit(loop, loop.config)
    return loop.output


async def arun_as_subgraph(graph: Pregel, value: Any, ctx: TaskContext) -> Any:
    """Async twin of `run_as_subgraph`."""
    loop, resuming = subloop(graph, ctx)
    if loop.checkpointer is not None:
        saved = await loop.checkpointer.aget_tuple(saver_config(loop.config))
        if saved is not None:
            loop = Loop(graph, loop.run, saved=saved, **loop_args(loop))
    async for _ in adrive(loop, value, resuming=resuming and loop.has_saved):
        pass
    graph._check_exit(loop, loop.config)
    return loop.output

"""Running a compiled graph as a node of another: namespaces, checkpoints, resumes.

The subgraph gets its own Loop under the parent task's namespace (`node:<task id>`, or
`node` for `checkpointer=True` subgraphs that keep one state per thread), shares the
parent's run context (stream queue, callbacks) and checkpointer, and resumes from its own
saved checkpoint when the parent resumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import CONF
from lgnb.pregel._delta import hydrating
from lgnb.pregel._driver import adrive, run_to_end
from lgnb.pregel._loop import Loop
from lgnb.pregel._options import (
    DEFAULT_RECURSION_LIMIT,
    loop_args,
    recast_ns,
)
from lgnb.pregel._program import Program, aanswer, answer
from lgnb.pregel._replay import LoadPlan, loading, plan_load

if TYPE_CHECKING:
    from lgnb._internal.context import TaskContext
    from lgnb.pregel.main import Pregel

__all__ = ("arun_as_subgraph", "run_as_subgraph", "subloop")


def subloop(graph: Pregel, ctx: TaskContext) -> tuple[Loop, bool]:
    """The loop of `graph` run as the node of `ctx`'s task, and whether it resumes."""
    parent = ctx.loop
    run = parent.run
    config = dict(parent.config)
    if graph.config:  # `with_config` on the subgraph: under the parent's, as LangGraph merges
        config = graph._merged_config(config)
    conf = dict(config.get(CONF) or {})
    # checkpointer=True: the subgraph keeps one state per thread, across parent runs
    ns = ctx.next_subgraph_ns()
    if graph.checkpointer is True:
        ns = recast_ns(ns)
    conf["checkpoint_ns"] = ns
    cmap = dict(conf.get("checkpoint_map") or {})
    cmap[parent.ns] = parent.checkpoint_id
    conf["checkpoint_map"] = cmap
    conf.pop("checkpoint_id", None)
    config[CONF] = conf
    from lgnb.graph._allowlist import saver_for

    checkpointer = None if graph.checkpointer is False else saver_for(parent.checkpointer, graph)
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


def with_saved(loop: Loop, saved: Any, plan: LoadPlan, resuming: bool) -> tuple[Loop, bool]:
    """`loop` restarted from `saved` (when there is one) as `plan` says, and whether it
    resumes: a subgraph replayed from before the replay point runs its input afresh."""
    if saved is not None:
        loop = Loop(loop.graph, loop.run, saved=saved, **loop_args(loop))
    if plan.how == "before":
        loop.time_travel = True
        return loop, False
    if plan.how == "exact" and saved is not None:
        loop.time_travel = True
    return loop, resuming


def _opening(graph: Pregel, ctx: TaskContext) -> Program[tuple[Loop, bool]]:
    """The subgraph's loop, started from the checkpoint its plan names; resuming?"""
    loop, resuming = subloop(graph, ctx)
    if loop.checkpointer is not None:
        plan = plan_load(loop.config, loop.ns, loop.replay)
        saver = loop.checkpointer
        saved = yield from hydrating(saver, (yield from loading(saver, plan)), graph.channels)
        loop, resuming = with_saved(loop, saved, plan, resuming)
    return loop, resuming


def run_as_subgraph(graph: Pregel, value: Any, ctx: TaskContext) -> Any:
    """Run this graph as a node of a parent graph; return its output state."""
    loop, resuming = answer(_opening(graph, ctx))
    run_to_end(loop, value, resuming=resuming and loop.has_saved)
    graph._check_exit(loop, loop.config)
    return loop.output


async def arun_as_subgraph(graph: Pregel, value: Any, ctx: TaskContext) -> Any:
    """Async twin of `run_as_subgraph`."""
    loop, resuming = await aanswer(_opening(graph, ctx))
    async for _ in adrive(loop, value, resuming=resuming and loop.has_saved):
        pass
    graph._check_exit(loop, loop.config)
    return loop.output

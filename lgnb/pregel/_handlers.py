"""Node-level error handlers (`add_node(..., error_handler=...)`, `set_node_defaults`).

A node that fails for good (its retries spent) and has a handler does not fail the run:
its failure is recorded as usual plus a marker naming the node, and a handler task runs
in the same super-step with the failed task's input and, as `error: NodeError`, the
failure. Its writes (an update, a `Command(goto=...)`) are applied with the step's. On a
resume after a crash, a task whose saved writes carry the marker is not run again: its
handler is scheduled instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import ERROR, NS_END, NS_SEP, PUSH
from lgnb._internal.ids import task_id as make_task_id
from lgnb.errors import GraphBubbleUp, NodeError
from lgnb.pregel._task import Task

if TYPE_CHECKING:
    from lgnb.pregel._loop import Loop

__all__ = ("ERROR_SOURCE_NODE", "handles", "handler_task", "node_error_for", "resume_handled")

ERROR_SOURCE_NODE = "__error_source_node__"
"""Pending-write channel marking a failure routed to the node's error handler."""


def handles(task: Task, exc: BaseException | None) -> bool:
    """Whether `exc` (a final failure of `task`) goes to an error handler."""
    node = task.node
    return (
        exc is not None
        and node.error_handler is not None
        and not node.is_error_handler
        and not isinstance(exc, GraphBubbleUp)
    )


def handler_task(loop: Loop, failed: Task, error: BaseException) -> Task | None:
    """The handler task for `failed`, added to the step (None if the handler is gone)."""
    handler = loop.graph.nodes.get(failed.node.error_handler)
    if handler is None:
        return None
    name = handler.name
    base_ns = f"{loop.ns}{NS_SEP}{name}" if loop.ns else name
    tid = make_task_id(
        loop.checkpoint_id, base_ns, str(loop.step), name, PUSH, "node_error_handler", failed.id
    )
    task = Task(
        id=tid,
        name=name,
        path=(*failed.path[:3], "node_error_handler", False),
        input=failed.input,
        node=handler,
        triggers=(PUSH,),
        ns=f"{base_ns}{NS_END}{tid}",
    )
    loop.tasks[tid] = task
    errors = loop.__dict__.setdefault("node_errors", {})
    errors[tid] = NodeError(node=failed.name, error=error)
    return task


def node_error_for(loop: Loop, task: Task) -> Any:
    """The NodeError a handler task receives (None for other tasks)."""
    errors = loop.__dict__.get("node_errors")
    return errors.get(task.id) if errors else None


def resume_handled(loop: Loop) -> None:
    """Resuming a step: tasks whose failure was routed to a handler stay done; their
    handlers run (again, unless their own writes were saved)."""
    marked = {tid for tid, chan, _ in loop.pending if chan == ERROR_SOURCE_NODE}
    if not marked:
        return
    for tid, chan, value in list(loop.pending):
        if chan != ERROR or tid not in marked:
            continue
        task = loop.tasks.get(tid)
        if task is None or task.node.error_handler is None:
            continue
        error = value if isinstance(value, BaseException) else Exception(str(value))
        task.writes = [(ERROR, error)]
        handler = handler_task(loop, task, error)
        if handler is not None:  # a handler that finished keeps its writes
            from lgnb.pregel._status import read_task_statuses

            mine = (w for w in loop.pending if w[0] == handler.id)
            status = read_task_statuses(mine).get(handler.id)
            if status is not None and status.output:
                handler.writes = list(status.output)

"""The explicit per-task context: what a running node can reach, in one object.

LangGraph threads runtime state through a config dict (`configurable` keys such as
`__pregel_send`); lgnb passes a `TaskContext` instead and keeps a RunnableConfig only as
the public view that `get_config()` and `config`-taking nodes see. The current task's
context lives in a context variable so `get_stream_writer()`, `get_config()` and
`interrupt()` work from anywhere inside a node, in threads and in asyncio tasks.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig

if TYPE_CHECKING:
    from lgnb.pregel._task import Task
    from lgnb.runtime import Runtime

__all__ = ("TaskContext", "current_task", "TASK_CTX")

TASK_CTX: ContextVar[TaskContext | None] = ContextVar("lgnb_task", default=None)


class TaskContext:
    """Everything a node's code can reach while it runs.

    `task` is the task being executed; `loop` the (sub)graph run it belongs to (and
    through it the run-wide context: stream sink, modes, callbacks); `config` the public
    RunnableConfig, built lazily because most nodes never look at it.
    """

    __slots__ = (
        "task",
        "loop",
        "runtime",
        "_config",
        "resume",
        "interrupt_index",
        "call_index",
        "node_run",
    )

    def __init__(self, task: Task, loop: Any, runtime: Runtime) -> None:
        self.task = task
        self.loop = loop
        self.runtime = runtime
        self._config: RunnableConfig | None = None
        self.resume: list[Any] | None = None
        self.interrupt_index = 0
        self.call_index = 0
        self.node_run: Any = None

    @property
    def config(self) -> RunnableConfig:
        """The RunnableConfig a LangGraph node would receive for this task."""
        if self._config is None:
            self._config = self.loop.run.task_config(self.loop, self.task)
        return self._config

    @property
    def stream_writer(self) -> Any:
        return self.runtime.stream_writer


def current_task() -> TaskContext:
    """The context of the node running in this thread / asyncio task."""
    ctx = TASK_CTX.get()
    if ctx is None:
        raise RuntimeError(
            "Called outside of a running graph node. get_config(), get_stream_writer(), "
            "get_runtime() and interrupt() only work inside a node while the graph runs."
        )
    return ctx

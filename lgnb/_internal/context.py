"""The explicit per-task context: what a running node can reach, in one object.

LangGraph threads runtime state through a config dict (`configurable` keys such as
`__pregel_send`); lgnb passes a `TaskContext` instead and keeps a RunnableConfig only as
the public view that `get_config()` and `config`-taking nodes see. The current task's
context lives in a context variable so `get_stream_writer()`, `get_config()` and
`interrupt()` work from anywhere inside a node, in threads and in asyncio tasks.

A leaf module: it imports nothing from lgnb but the leaf `frozen`, so the public modules (`lgnb.config`,
`lgnb.runtime`, `lgnb.types`) and the engine (`lgnb.pregel`) both import it at module
level. `ExecutionInfo`, the record a task's Runtime carries, lives here for that reason
and is re-exported as `lgnb.runtime.ExecutionInfo`.
"""

from __future__ import annotations

import sys
import time
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from lgnb._internal.frozen import slot_builder

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from lgnb.pregel._task import Task
    from lgnb.runtime import Runtime

__all__ = (
    "DRIVER_LOOP", "TASK_CTX", "ExecutionInfo", "LazyConfig", "TaskContext", "current_task", "lazy_config"
)

TASK_CTX: ContextVar[TaskContext | None] = ContextVar("lgnb_task", default=None)
DRIVER_LOOP: ContextVar[Any] = ContextVar("lgnb_driver_loop", default=None)
"""The event loop of the async run whose sync node this thread runs (None elsewhere):
an async `@task` called from that node runs there, as LangGraph's async runner does."""

CONFIG_KEY_RUNTIME = "__pregel_runtime"
"""The `configurable` key holding the task's `Runtime` (LangGraph's name for it)."""
CONFIG_KEY_READ_STATE = "__pregel_read_state"
"""The `configurable` key holding a function that reads the node's input state now."""
CONFIG_KEY_READ = "__pregel_read"
"""The `configurable` key holding `read(select, fresh=False)`: channels of the state now,
with this task's own writes so far applied when `fresh` (LangGraph's name and contract;
deepagents' `StateBackend` reads its files through it)."""
CONFIG_KEY_SEND = "__pregel_send"
"""The `configurable` key holding `send([(channel, value), ...])`: adds writes to this
task's, applied with its return value at the end of the step (LangGraph's name and
contract; deepagents' `StateBackend` writes its files through it)."""


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Where a node execution runs: checkpoint, namespace, task, thread, attempt."""

    checkpoint_id: str
    checkpoint_ns: str
    task_id: str
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None

    def patch(self, **overrides: Any) -> ExecutionInfo:
        """A copy with some fields replaced."""
        return replace(self, **overrides)


ExecutionInfo.__module__ = "lgnb.runtime"  # its public home (repr, pickle, docs)
_execution_info = slot_builder(ExecutionInfo)  # every task's, positionally (frozen.py)


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
        "attempt",
        "first_attempt_time",
        "subgraph_calls",
        "_runtime",
        "node_error",
        "__weakref__",  # LangGraph's scratchpad refers to the context weakly (foreign_node)
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
        self.attempt = 1
        self.first_attempt_time: float | None = time.time()
        self._runtime: Runtime | None = None
        self.subgraph_calls = 0  # graphs this execution ran nested: each gets its own ns
        self.node_error: Any = None  # for an error handler: the NodeError it handles

    @property
    def config(self) -> RunnableConfig:
        """The RunnableConfig a LangGraph node would receive for this task."""
        if self._config is None:
            config = self.loop.run.task_config(self.loop, self.task)
            # LangGraph's prebuilt helpers (ToolNode, ...) read the node's Runtime from
            # here, as `configurable["__pregel_runtime"]`
            config["configurable"][CONFIG_KEY_RUNTIME] = self.task_runtime()
            # ... and the state this node would get from an edge (ToolNode reads it for a
            # Send of bare tool calls: `ToolRuntime.state`, HumanInTheLoopMiddleware's edits)
            # (the hooks hold the loop and the task, not this context: the context holds
            # the config, so a hook holding the context would make every task a reference
            # cycle, freed only by the cyclic GC, with its input state and writes)
            loop, task = self.loop, self.task
            config["configurable"][CONFIG_KEY_READ_STATE] = partial(_read_state, loop, task)
            # ... and LangGraph's channel read and write hooks, which libraries built on
            # it use to reach the state from inside a tool (deepagents' files)
            config["configurable"][CONFIG_KEY_READ] = partial(_read_channels, loop, task)
            config["configurable"][CONFIG_KEY_SEND] = partial(_send, task)
            modules = sys.modules
            if "langgraph.pregel.main" in modules or "langgraph.types" in modules:
                # ... and, LangGraph being loaded, the other keys LangGraph gives every
                # task: a graph LangGraph compiled that this node's code invokes
                # (trustcall's extractor, langmem's memory managers) runs nested in the
                # task as on LangGraph (its events streamed with `subgraphs=True`, its
                # checkpoints on the run's saver); without them it ran as a graph of its own.
                # LangGraph's own `interrupt()` (a half-ported module, a library helper)
                # reads its scratchpad from them too
                keys = _LANGGRAPH_TASK_KEYS
                if keys is None:
                    keys = _langgraph_task_keys()
                keys(self, config["configurable"])
            self._config = config
        return self._config

    @property
    def stream_writer(self) -> Any:
        return self.runtime.stream_writer

    def next_subgraph_ns(self) -> str:
        """The namespace of the next graph this execution runs nested: the task's own
        for the first, then `<task ns>|1`, `|2`, ... (two graphs invoked by one node
        keep apart states)."""
        n = self.subgraph_calls
        self.subgraph_calls = n + 1
        return self.task.ns if n == 0 else f"{self.task.ns}|{n}"

    def task_runtime(self) -> Runtime:
        """The Runtime with this execution's `execution_info` (built on first use)."""
        rt = self._runtime
        if rt is None or (rt.execution_info and rt.execution_info.node_attempt != self.attempt):
            loop = self.loop
            # a subgraph's nodes see none: LangGraph's nested config drops `run_id`
            run_id = None if loop.parent_ctx is not None else loop.run.user_config.get("run_id")
            task = self.task
            rt = self.runtime._with_execution_info(
                _execution_info(
                    loop.checkpoint_id,
                    task.ns,
                    task.id,
                    loop.thread_id,
                    str(run_id) if run_id else None,
                    self.attempt,
                    self.first_attempt_time,
                )
            )
            self._runtime = rt
        return rt


_LANGGRAPH_TASK_KEYS: Any = None


def _langgraph_task_keys() -> Any:
    """`foreign_node.langgraph_task_keys`, imported once (this leaf module cannot import it
    at its top)."""
    global _LANGGRAPH_TASK_KEYS
    from lgnb._internal.foreign_node import langgraph_task_keys

    _LANGGRAPH_TASK_KEYS = langgraph_task_keys
    return langgraph_task_keys


def _read_state(loop: Any, task: Task) -> Any:
    """LangGraph's `__pregel_read_state`: the state `task`'s node would get from an edge now."""
    return loop._read_input(task.node)


def _send(task: Task, writes: Any) -> None:
    """LangGraph's `__pregel_send`: `writes`, (channel, value) pairs, join `task`'s
    (read at call time: a task whose writes are restored gets a new list)."""
    task.writes.extend(writes)


def _read_channels(loop: Any, task: Task, select: str | list[str], fresh: bool = False) -> Any:
    """LangGraph's `__pregel_read`: the value of channel `select` (None when it has
    none), or a dict of the channels listed that have a value, managed values
    included; with `fresh`, as `task`'s writes so far would leave them."""
    channels = loop.channels
    writes = task.writes if fresh else ()
    if isinstance(select, str):
        ch = _with_own_writes(channels[select], select, writes)
        return ch.get() if ch.is_available() else None
    managed = loop.graph.managed_values
    values: dict[str, Any] = {}
    for key in select:
        if key in managed:
            from lgnb.managed.base import Scratchpad  # (a leaf module: imported here)

            values[key] = managed[key].get(Scratchpad(loop.step, loop.stop))
            continue
        ch = _with_own_writes(channels[key], key, writes)
        if ch.is_available():
            values[key] = ch.get()
    return values


def _with_own_writes(channel: Any, key: str, writes: Any) -> Any:
    """`channel`, or a copy of it updated with the values `writes` holds for `key`."""
    values = [v for c, v in writes if c == key]
    if not values:
        return channel
    channel = channel.copy()
    channel.update(values)
    return channel


def current_task() -> TaskContext:
    """The context of the node running in this thread / asyncio task."""
    ctx = TASK_CTX.get()
    if ctx is None:
        raise RuntimeError(
            "Called get_config outside of a runnable context\n"
            "Called outside of a running graph node. get_config(), get_stream_writer(), "
            "get_runtime() and interrupt() only work inside a node while the graph runs."
        )
    return ctx


def nested_langgraph_config(ctx: TaskContext) -> dict[str, Any] | None:
    """The config of a LangGraph task running inside `ctx`'s task — a graph LangGraph
    compiled (unported) that the task's code invokes, now running one of its nodes — or
    None. lgnb's `interrupt()`, `get_config()` and `get_stream_writer()` called there
    answer for that task, as LangGraph's do (its own resume values, namespace and
    stream), not for the lgnb task around it. Only when LangGraph is loaded."""
    if "langgraph.pregel.main" not in sys.modules:
        return None
    lc = sys.modules.get("langchain_core.runnables.config")
    config = lc.var_child_runnable_config.get() if lc is not None else None
    if type(config) is not dict:
        return None
    conf = config.get("configurable")
    if type(conf) is not dict or "__pregel_scratchpad" not in conf:
        return None
    ns = conf.get("checkpoint_ns")
    # (LangGraph's namespace of a task nested in ours extends ours)
    return config if type(ns) is str and ns.startswith(ctx.task.ns + "|") else None


class LazyConfig(dict[str, Any]):
    """The task's RunnableConfig, filled in on first read.

    Set as LangChain's child-config context variable for every task when callbacks are
    active, so a chat model called inside the node finds the run's handlers; most nodes
    never call a model, and then the config is never built.
    """

    __slots__ = ("_ctx",)

    def __init__(self, ctx: TaskContext) -> None:
        super().__init__()
        self._ctx: TaskContext | None = ctx

    def _fill(self) -> None:
        ctx = self._ctx
        if ctx is not None:
            self._ctx = None
            dict.update(self, ctx.config)
            ctx.task.node.reads_config = True  # its next runs skip the laziness


    def __getitem__(self, key: Any) -> Any:
        self._fill()
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._fill()
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        self._fill()
        return dict.__contains__(self, key)

    def __iter__(self) -> Any:
        self._fill()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._fill()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._fill()
        return dict.keys(self)

    def values(self) -> Any:
        self._fill()
        return dict.values(self)

    def items(self) -> Any:
        self._fill()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:
        self._fill()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self._fill()
        return dict.__eq__(self, other)

    __hash__ = None

    def __repr__(self) -> str:
        self._fill()
        return dict.__repr__(self)


_new_dict = dict.__new__
_set_lazy_ctx = LazyConfig.__dict__["_ctx"].__set__


def lazy_config(ctx: TaskContext) -> LazyConfig:
    """`LazyConfig(ctx)` without the Python-level `__init__` (every task, when LangChain
    is loaded)."""
    config = _new_dict(LazyConfig)
    _set_lazy_ctx(config, ctx)
    return config

"""A node function of a LangGraph-built graph, run as an lgnb node.

Library code written for LangGraph (LangChain's agent middleware, `langgraph.prebuilt`)
calls LangGraph's own context functions inside its nodes: `langgraph.types.interrupt()`,
`langgraph.config.get_config()`, `get_stream_writer()`, `get_store()`, `get_runtime()`.
LangGraph answers them from LangChain's config context variable and keys of the task's
`configurable` (`__pregel_runtime`, `__pregel_scratchpad`, `__pregel_send`,
`checkpoint_ns`), and signals with its own exceptions (`GraphInterrupt`, `ParentCommand`).
`bridged` wraps such a node so that, while it runs in an lgnb task, those keys answer
from the task's own context, and LangGraph's exceptions leave it as lgnb's. Only nodes of
graphs rebuilt by `lgnb.graph.from_langgraph` are wrapped: an lgnb node pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from weakref import ref

from lgnb._internal.callable import NodeCallable
from lgnb._internal.constants import NS_SEP
from lgnb._internal.context import current_task
from lgnb._internal.foreign import adopt, hook_tool_node
from lgnb._internal.missing import MISSING

if TYPE_CHECKING:
    from lgnb._internal.context import TaskContext

__all__ = ("as_lgnb_signal", "bridged", "langgraph_task_keys")

_SCRATCHPAD = "__pregel_scratchpad"
_SEND = "__pregel_send"
_RUNTIME = "__pregel_runtime"


class _Scratchpad:
    """What LangGraph's `interrupt()` reads of a task, answered by the lgnb task's context
    (the answers given so far, the pending `Command(resume=...)`, the interrupt index)."""

    __slots__ = ("_ref", "_calls", "_subgraphs")

    def __init__(self, ctx: TaskContext) -> None:
        # weakly: the context holds the config this scratchpad sits in, so a strong
        # reference would make every task a cycle, freed only by the cyclic GC
        self._ref = ref(ctx)
        self._calls = 0
        self._subgraphs = 0

    @property
    def _ctx(self) -> TaskContext:
        ctx = self._ref()
        if ctx is None:
            raise RuntimeError(
                "LangGraph's scratchpad was read after its lgnb task finished: interrupt() "
                "and the task's counters work only while the node that got this config runs."
            )
        return ctx

    @property
    def step(self) -> int:
        return int(self._ctx.loop.step)

    @property
    def stop(self) -> int:
        return int(self._ctx.loop.stop)

    @property
    def resume(self) -> list[Any]:
        ctx = self._ctx
        if ctx.resume is None:
            ctx.resume, _ = ctx.loop.resume_for(ctx.task)
        return ctx.resume

    def interrupt_counter(self) -> int:
        ctx = self._ctx
        index = ctx.interrupt_index
        ctx.interrupt_index = index + 1
        return index

    def get_null_resume(self, consume: bool = False) -> Any:
        loop = self._ctx.loop
        value = loop.peek_null_resume()
        if value is MISSING:
            return None
        if consume:
            loop.take_null_resume()
        return value

    def call_counter(self) -> int:
        self._calls += 1
        return self._calls - 1

    def subgraph_counter(self) -> int:
        self._subgraphs += 1
        return self._subgraphs - 1


def _enter(ctx: TaskContext) -> tuple[Any, Any]:
    """LangChain's config context variable set to the task's config, its `configurable`
    carrying the keys LangGraph's context functions read."""
    from langchain_core.runnables.config import var_child_runnable_config

    config = ctx.config
    conf = config["configurable"]
    if _SCRATCHPAD not in conf:
        langgraph_task_keys(ctx, conf)
    return var_child_runnable_config, var_child_runnable_config.set(config)


_INHERITED = ("__pregel_checkpointer", "__pregel_stream", "__pregel_resume_map")


def langgraph_task_keys(ctx: TaskContext, conf: dict[str, Any]) -> None:
    """Put in `conf` (the task's `configurable`) the keys LangGraph gives every task's
    config, which LangGraph's own code run by the task reads. `TaskContext.config` calls
    this for every task once LangGraph is loaded, so a graph LangGraph compiled that a
    user's own node invokes (trustcall's extractor, langmem's memory managers, an agent)
    runs nested in it as on LangGraph, not only the nodes `from_langgraph` ports.

    A LangGraph graph the node's code invokes (a subagent called by a tool) then runs as
    LangGraph runs one nested in a task: under the task's namespace, on the run's saver,
    resuming when the run resumes, its interrupts raised to the task, its events streamed
    to the streams that asked for subgraphs. What is the same for every task of a step is
    built once per step (`_step_keys`)."""
    loop = ctx.loop
    keys, absent = _step_keys(loop)
    for key in absent:  # set only when they apply: not a caller's, passed on
        conf.pop(key, None)
    conf.update(keys)
    conf[_SCRATCHPAD] = _Scratchpad(ctx)
    conf["__pregel_task_id"] = ctx.task.id
    stream = keys.get("__pregel_stream")
    if stream is not None:
        # ... its custom events labelled with the namespace of the graph that writes
        # them: such a graph writes through its caller's runtime writer, which on
        # LangGraph names the `checkpoint_ns` of the config it is called under (a
        # subagent's tool streaming progress: the subagent's namespace, not the run's)
        runtime = conf.get(_RUNTIME)
        if runtime is not None:
            conf[_RUNTIME] = runtime.override(
                stream_writer=_nested_writer(ctx, runtime.stream_writer))


def _step_keys(loop: Any) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The keys of `langgraph_task_keys` shared by the tasks of `loop`'s current step, and
    the inherited ones that do not apply; kept on the loop until its step changes (the
    run's nested stream, for the loop's life)."""
    marker = loop.checkpoint_id
    resuming = bool(loop.is_resuming)
    cached = loop.langgraph_keys
    if cached is not None:
        if cached[0] is marker and cached[1]["__pregel_resuming"] is resuming:
            return cached[1], cached[2]
        stream = cached[1].get("__pregel_stream")
    else:
        stream = _NestedStream.of(loop.run)
    keys: dict[str, Any] = {"__pregel_resuming": resuming}
    absent: tuple[str, ...] = ()
    if loop.checkpointer is not None:
        keys["__pregel_checkpointer"] = loop.checkpointer
    else:
        absent += ("__pregel_checkpointer",)
    # (its checkpoints name the enclosing graphs' by the task's own `checkpoint_map`,
    # which `task_config` builds: a `@task` call's names its callers' namespaces too)
    if stream is not None:
        keys["__pregel_stream"] = stream
    else:
        absent += ("__pregel_stream",)
    # answering its interrupts from a `Command(resume={interrupt_id: value})` given to
    # the run: LangGraph hands the map down in the config (without it, a subagent's
    # interrupt answered by id, as the run view's forms do, asked again)
    resume_map = loop.effective_resume_map()
    if resume_map:
        keys["__pregel_resume_map"] = resume_map
    else:
        absent += ("__pregel_resume_map",)
    loop.langgraph_keys = (marker, keys, absent)
    return keys, absent


def _nested_writer(ctx: TaskContext, writer: Callable[[Any], None]) -> Callable[[Any], None]:
    """`writer` (the task's custom-event writer) for the task's own code; for the nodes of
    a LangGraph graph it invokes (their config's `checkpoint_ns` extends the task's), a
    writer labelling the events with that graph's namespace, as LangGraph's does."""
    from langchain_core.runnables.config import var_child_runnable_config

    own = ctx.task.ns
    prefix = own + NS_SEP
    loop = ctx.loop  # not `ctx`: the writer sits in the config the context holds (a cycle)

    def write(value: Any) -> None:
        config = var_child_runnable_config.get()
        ns = ((config or {}).get("configurable") or {}).get("checkpoint_ns")
        if not isinstance(ns, str) or not ns.startswith(prefix):
            writer(value)
            return
        loop.run.runtime_for(loop, ns=tuple(ns.split(NS_SEP)[:-1])).stream_writer(value)

    return write


class _NestedStream:
    """LangGraph's stream protocol (`modes`; called with `(namespace, mode, payload)`) over
    the lgnb streams of this run and its callers that asked for subgraphs."""

    __slots__ = ("modes", "_puts")

    def __init__(self, puts: list[tuple[Callable[[Any], None], frozenset[str]]]) -> None:
        self._puts = puts
        self.modes = set().union(*(modes for _, modes in puts))

    @classmethod
    def of(cls, run: Any) -> _NestedStream | None:
        puts = []
        while run is not None:
            if run.subgraphs and run.sink is not None:
                puts.append((run.sink.put, run.modes))
            run = run.parent
        return cls(puts) if puts else None

    def __call__(self, chunk: tuple[tuple[str, ...], str, Any]) -> None:
        for put, modes in self._puts:
            if chunk[1] in modes:
                put(chunk)


@contextmanager
def _answering(ctx: TaskContext) -> Iterator[None]:
    """While the node runs: LangGraph's context functions answered by `ctx`, LangGraph's
    exceptions leaving as lgnb's."""
    var, token = _enter(ctx)
    try:
        yield
    except Exception as exc:
        ours = as_lgnb_signal(exc)
        if ours is exc:
            raise
        raise ours from None
    finally:
        var.reset(token)


def as_lgnb_signal(exc: BaseException) -> BaseException:
    """LangGraph's `GraphInterrupt` / `ParentCommand` as lgnb's; other errors unchanged."""
    name = type(exc).__name__
    if type(exc).__module__ != "langgraph.errors":
        return exc
    from lgnb.errors import GraphInterrupt, ParentCommand
    from lgnb.types import Interrupt

    if name == "ParentCommand":
        return ParentCommand(adopt(exc.args[0]))
    if name in ("GraphInterrupt", "NodeInterrupt"):
        found = exc.args[0] if exc.args else ()
        return GraphInterrupt(tuple(
            Interrupt(value=i.value, id=i.id, response_schema=getattr(i, "response_schema", None))
            for i in found
        ))
    return exc


def bridged(action: Any, *, name: str) -> Callable[..., Any]:
    """`action` (a LangGraph node: its `RunnableCallable`, a `ToolNode`, a function) as an
    lgnb node function that answers LangGraph's context functions while it runs."""
    hook_tool_node(action)  # a ToolNode's tools may return lgnb's Command
    inner = NodeCallable(action, name=name)

    def call(state: Any) -> Any:
        ctx = current_task()
        with _answering(ctx):
            return inner.call(state, ctx)

    async def acall(state: Any) -> Any:
        ctx = current_task()
        with _answering(ctx):
            return await inner.acall(state, ctx)

    wrapper: Any
    for wrapper in (call, acall):
        wrapper._lgnb_wraps = action  # drawings read a wrapped ToolNode's tools
    if inner.is_async:
        acall.__name__ = acall.__qualname__ = name
        return acall
    call.__name__ = call.__qualname__ = name
    if inner.afunc is not None or inner.runnable is not None:
        call.afunc = acall  # type: ignore[attr-defined]  # `ainvoke` runs the async side
    return call

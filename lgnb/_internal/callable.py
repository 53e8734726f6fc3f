"""Adapting user callables (functions, async functions, Runnables) into node calls.

A node function declares what it needs by parameter name, as in LangGraph: `config`,
`writer`, `runtime`, `store`, `previous`. The signature is inspected once, at
`add_node` time; each call then builds only the keyword arguments the function asked
for — no per-call introspection, no callback manager.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import warnings
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Optional, get_args

from lgnb._internal.context import DRIVER_LOOP
from lgnb._internal.streamed_node import astreamed, streams_nodes
from lgnb.errors import NodeError
from lgnb.types import StreamWriter

if TYPE_CHECKING:
    from lgnb._internal.context import TaskContext

__all__ = ("CompiledGraphBase", "NodeCallable", "is_async_callable")


class CompiledGraphBase:
    """The base of lgnb's compiled graphs (`lgnb.pregel.Pregel` derives from it): code
    below the engine tells a subgraph node from a function without importing the engine."""

    __slots__ = ()

_INJECTABLE = ("config", "writer", "runtime", "store", "previous", "error")
_VALID_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def is_async_callable(func: Any) -> bool:
    """True for `async def` functions and objects whose `__call__` is one."""
    while isinstance(func, partial):
        func = func.func
    return asyncio.iscoroutinefunction(func) or asyncio.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - an object's `async def __call__`
    )


def warn_config_annotation(func: Any) -> None:
    """Warn (UserWarning, as LangGraph does) when a node's `config` parameter is annotated
    with something other than `RunnableConfig` / `RunnableConfig | None`."""
    if not callable(func) or isinstance(func, type):
        return
    try:
        param = inspect.signature(func).parameters.get("config")
    except (TypeError, ValueError):
        return
    if param is None or param.kind not in _VALID_KINDS:
        return
    annotation = param.annotation
    if annotation is inspect.Parameter.empty:
        return
    # deferred for import cost: LangChain's runnables load only when a node types `config`
    from langchain_core.runnables import RunnableConfig

    accepted = (RunnableConfig, "RunnableConfig", Optional[RunnableConfig], "Optional[RunnableConfig]",
                "RunnableConfig | None")
    if any(annotation == ok for ok in accepted):
        return
    warnings.warn(
        "The 'config' parameter should be typed as 'RunnableConfig' or "
        f"'RunnableConfig | None', not '{annotation}'. ",
        UserWarning,
        stacklevel=3,
    )


def _injected_params(func: Callable[..., Any]) -> tuple[str, ...]:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return ()
    wanted = []
    for name in _INJECTABLE:
        p = params.get(name)
        if p is None or p.kind not in _VALID_KINDS:
            continue
        if name == "writer" and p.annotation not in (
            inspect.Parameter.empty,
            "StreamWriter",
        ) and getattr(p.annotation, "__name__", None) not in ("StreamWriter", "Callable"):
            # LangGraph injects `writer` only when it is untyped or typed StreamWriter
            if p.annotation != StreamWriter:
                continue
        if name == "error" and not _is_node_error(p.annotation):
            continue  # only an error handler's `error: NodeError` is injected
        if name == "store" and not is_store_annotation(p.annotation):
            continue  # LangGraph injects `store` untyped or typed (Optional) BaseStore only
        wanted.append(name)
    return tuple(wanted)


def is_store_annotation(annotation: Any) -> bool:
    """Whether a `store` parameter so annotated gets the store injected: untyped,
    `BaseStore` or `Optional[BaseStore]` (a subclass such as `InMemoryStore` does not)."""
    if annotation in (inspect.Parameter.empty, "BaseStore", "Optional[BaseStore]"):
        return True
    if getattr(annotation, "__name__", None) == "BaseStore":
        return True
    args = get_args(annotation)
    return len(args) == 2 and type(None) in args and any(
        getattr(a, "__name__", None) == "BaseStore" for a in args
    )


def _is_node_error(annotation: Any) -> bool:
    return annotation is NodeError or annotation == "NodeError"


class NodeCallable:
    """A node's code, called with the task's input and only the extras it declared."""

    __slots__ = ("name", "func", "afunc", "runnable", "steps", "inject", "is_async", "subgraph", "lam")

    def __init__(self, action: Any, *, name: str, own_run: bool = True) -> None:
        """`own_run`: a traced LangGraph `RunnableCallable` runs as a Runnable, a run of
        its own, as LangGraph runs a node's (a router's run is the runner's: False)."""
        self.name = name
        self.func: Callable[..., Any] | None = None
        self.afunc: Callable[..., Any] | None = None
        self.runnable: Any = None  # a LangChain Runnable
        # a RunnableSequence's steps: traced, they run as the node's own steps (`_steps`)
        self.steps: tuple[Any, ...] | None = None
        self.subgraph: Any = None
        self.inject: tuple[str, ...] = ()
        # a RunnableLambda whose function is called directly; an async run that a streaming
        # handler watches streams it instead, as LangGraph does (`lgnb._internal.streamed_node`)
        self.lam: Any = None
        if own_run and _is_generator_function(action):
            # as LangGraph's `coerce_to_runnable`: a generator node is a RunnableLambda (its
            # output: the chunks added up), run as a Runnable
            from langchain_core.runnables import RunnableLambda

            action = RunnableLambda(action, name=name)
        runnable_cls = _loaded_runnable_class()
        if isinstance(action, CompiledGraphBase):
            self.subgraph = action
            self.is_async = False
        elif (
            runnable_cls is not None
            and isinstance(action, runnable_cls)
            and (not _is_plain_lambda_runnable(action)
                 or (own_run and _is_traced_langgraph_callable(action)))
        ):
            self.runnable = action
            # (a traced LangGraph RunnableCallable of an async function only is async only)
            self.is_async = _is_traced_langgraph_callable(action) and action.func is None
            if type(action).__name__ == "RunnableSequence":
                self.steps = tuple(action.steps)
        else:
            func = action
            if _is_plain_lambda_runnable(action):
                func = getattr(action, "func", None) or getattr(action, "afunc", None)
            if not callable(func):
                raise TypeError(
                    f"Node `{name}` must be a function, an async function, a Runnable or a "
                    f"compiled graph; got {type(action).__name__}."
                )
            self.inject = _injected_params(func)
            if func is not action and set(self.inject) <= {"config"}:
                self.lam = action  # (what LangChain's RunnableLambda passes itself)
            if is_async_callable(func):
                self.afunc = func
                self.is_async = True
            else:
                self.func = func
                self.is_async = False
                sibling = getattr(action, "afunc", None)  # RunnableLambda(f, afunc=af)
                if sibling is not None and sibling is not func and is_async_callable(sibling):
                    self.afunc = sibling

    def _kwargs(self, ctx: TaskContext) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for name in self.inject:
            if name == "config":
                kwargs[name] = ctx.config
            elif name == "writer":
                kwargs[name] = ctx.runtime.stream_writer
            elif name == "runtime":
                kwargs[name] = ctx.task_runtime()
            elif name == "store":
                kwargs[name] = ctx.runtime.store
            elif name == "previous":
                kwargs[name] = ctx.runtime.previous
            elif name == "error":
                kwargs[name] = ctx.node_error
        return kwargs

    def call(self, value: Any, ctx: TaskContext) -> Any:
        """Run synchronously (sync functions, Runnables, subgraphs)."""
        if self.func is not None:
            out = self.func(value, **self._kwargs(ctx)) if self.inject else self.func(value)
            if type(out) is dict or (runnable := _returned_runnable(out)) is None:
                return out
            return _run_returned(runnable, value, ctx)
        if self.subgraph is not None:
            return self.subgraph._run_as_subgraph(value, ctx)
        if self.runnable is not None:
            if self.steps is not None and ctx.node_run is not None:
                for i, step in enumerate(self.steps):
                    value = step.invoke(value, _step_config(ctx, i))
                return value
            return self.runnable.invoke(value, ctx.config)
        raise TypeError(
            f'No synchronous function provided to "{self.name}".\n'
            "Either initialize with a synchronous function or invoke via the async API "
            "(ainvoke, astream, etc.)\n"
            f"Node `{self.name}` is an async function: run the graph with `ainvoke` / "
            "`astream`, or make the node synchronous."
        )

    async def acall(self, value: Any, ctx: TaskContext) -> Any:
        """Run asynchronously (async functions, Runnables, subgraphs)."""
        if self.afunc is not None:
            out = await (self.afunc(value, **self._kwargs(ctx)) if self.inject else self.afunc(value))
            if type(out) is dict or (runnable := _returned_runnable(out)) is None:
                return out
            return await runnable.ainvoke(value, ctx.config)
        if self.subgraph is not None:
            return await self.subgraph._arun_as_subgraph(value, ctx)
        if self.runnable is not None:
            if ctx.node_run is not None and streams_nodes(ctx):
                return await astreamed(self, value, ctx)
            if self.steps is not None and ctx.node_run is not None:
                for i, step in enumerate(self.steps):
                    value = await step.ainvoke(value, _step_config(ctx, i))
                return value
            return await self.runnable.ainvoke(value, ctx.config)
        raise TypeError(f"Node `{self.name}` has no async implementation.")


def _step_config(ctx: TaskContext, i: int) -> Any:  # (also `streamed_node`'s)
    """The config of step `i` of a traced RunnableSequence node: LangGraph flattens the
    sequence into the node's own (`seq:step:1`, `seq:step:2`, ... under the node's run),
    so LangSmith shows the steps as the node's children, with no run of the sequence."""
    if i == 0:
        return ctx.config  # its callbacks: the node run's `seq:step:1` child
    return {**ctx.config, "callbacks": ctx.node_run.get_child(f"seq:step:{i + 1}")}


def _is_plain_lambda_runnable(action: Any) -> bool:
    """RunnableLambda/RunnableCallable wrapping a plain function: call the function (not a
    generator: LangChain adds its chunks up)."""
    if type(action).__name__ not in ("RunnableLambda", "RunnableCallable"):
        return False
    funcs = [f for f in (getattr(action, "func", None), getattr(action, "afunc", None)) if f is not None]
    return bool(funcs) and not any(_is_generator_function(f) for f in funcs)


def _is_generator_function(func: Any) -> bool:
    """A (sync or async) generator function, or an object whose `__call__` is one."""
    return callable(func) and any(
        inspect.isgeneratorfunction(f) or inspect.isasyncgenfunction(f)
        for f in (func, getattr(func, "__call__", None))  # noqa: B004
    )


def _is_traced_langgraph_callable(action: Any) -> bool:
    """A LangGraph `RunnableCallable` (or lgnb's, `lgnb.utils.runnable`) made with tracing
    on (its default: a library's node, `create_react_agent`'s `call_model`, bigtool's
    `agent`): as a node, LangGraph runs it as a Runnable, a run of its own under the node's
    (callbacks, `astream_events`, LangSmith), the extras it declared read from the task's
    `__pregel_runtime`."""
    cls = type(action)
    return (cls.__name__ == "RunnableCallable"
            and cls.__module__.startswith(("langgraph.", "lgnb.utils."))
            and getattr(action, "trace", False) is True)


def _run_returned(runnable: Any, value: Any, ctx: TaskContext) -> Any:
    """Run the Runnable a sync node returned on the node's input, as LangGraph does: with
    `invoke` in a sync run; in an async run (the node ran in a worker thread) awaited with
    `ainvoke` on the run's event loop, so an async-only Runnable works there too."""
    driver = DRIVER_LOOP.get() if ctx.loop.driven_async else None
    if driver is None:
        return runnable.invoke(value, ctx.config)
    # (the coroutine runs in a copy of this thread's context: the task's, as the node saw it)
    return asyncio.run_coroutine_threadsafe(runnable.ainvoke(value, ctx.config), driver).result()


def _returned_runnable(out: Any) -> Any:
    """`out` if a node returned a LangChain Runnable (LangGraph then runs it on the node's
    input, as a RunnableLambda does), else None."""
    runnable_cls = _loaded_runnable_class()
    return out if runnable_cls is not None and isinstance(out, runnable_cls) else None


def _loaded_runnable_class() -> Any:
    """LangChain's Runnable, if anything imported it (a Runnable node implies it did)."""
    module = sys.modules.get("langchain_core.runnables.base")
    return getattr(module, "Runnable", None)

"""`langgraph.utils.runnable` under lgnb's name: `RunnableCallable`, a Runnable made of a
sync and/or an async function, which older programs (and copies of LangGraph's prebuilt
`ToolNode` / agent code) build their nodes with.

Called as a node, or on its own: the function gets the run's `config`, `writer`, `store`,
`runtime`, `previous` (and a handler's `error`) when its signature asks for them, as a
plain-function node does; a Runnable it returns is run on the same input.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Union

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    patch_config,
    set_config_context,
)

from lgnb.types import StreamWriter
from lgnb.utils.config import ensure_config

__all__ = ("RunnableCallable", "RunnableLike")

RunnableLike = Union[Runnable, Callable[..., Any], Callable[..., Awaitable[Any]]]
"""What `add_node` takes: a Runnable, or a sync or async function."""

_RUNTIME = "__pregel_runtime"
_NODE_ERROR = "__pregel_node_error"
_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_REQUIRED = inspect.Parameter.empty
_UNTYPED = inspect.Parameter.empty


def _accepts(kw: str, annotation: Any) -> tuple[str, Any] | None:
    """What a parameter named `kw` so annotated is given: (the runtime's attribute, the
    default when there is no run), or None when it is not injected (LangGraph's rules)."""
    name = getattr(annotation, "__name__", annotation)
    if kw == "config":
        if annotation in (_UNTYPED, RunnableConfig, "RunnableConfig", "Optional[RunnableConfig]") \
                or annotation == RunnableConfig | None:
            return ("N/A", _REQUIRED)
        warnings.warn(f"The 'config' parameter should be typed as 'RunnableConfig' or "
                      f"'RunnableConfig | None', not '{annotation}'. ", UserWarning, stacklevel=5)
        return None
    if kw == "writer":
        ok = annotation in (_UNTYPED, StreamWriter, "StreamWriter") or name == "StreamWriter"
        return ("stream_writer", lambda _: None) if ok else None
    if kw == "store":
        from lgnb._internal.callable import is_store_annotation

        if not is_store_annotation(annotation):
            return None
        optional = annotation not in (_UNTYPED, "BaseStore") and getattr(annotation, "__name__", "") != "BaseStore"
        return ("store", None if optional else _REQUIRED)
    if kw in ("previous", "runtime"):
        return (kw, _REQUIRED)
    if kw == "error":
        return ("error", _REQUIRED) if getattr(annotation, "__name__", annotation) == "NodeError" else None
    return None


class RunnableCallable(Runnable):
    """A Runnable made of `func` (sync) and/or `afunc` (async), as LangGraph's.

    `trace=False` runs the function without a run of its own in the callbacks; `recurse`:
    a Runnable the function returns runs on the same input; `explode_args`: the input is an
    `(args, kwargs)` pair; other keyword arguments are passed to the function on each call.
    """

    def __init__(
        self,
        func: Callable[..., Any] | None,
        afunc: Callable[..., Awaitable[Any]] | None = None,
        *,
        name: str | None = None,
        tags: Sequence[str] | None = None,
        trace: bool = True,
        recurse: bool = True,
        explode_args: bool = False,
        **kwargs: Any,
    ) -> None:
        if func is None and afunc is None:
            raise ValueError("At least one of func or afunc must be provided.")
        if name is None:
            named = getattr(func or afunc, "__name__", None)
            name = None if named == "<lambda>" else named
        self.name = name
        self.func, self.afunc = func, afunc
        self.tags, self.kwargs = tags, kwargs
        self.trace, self.recurse, self.explode_args = trace, recurse, explode_args
        self.func_accepts: dict[str, tuple[str, Any]] = {}
        for kw, param in inspect.signature(func or afunc).parameters.items():  # type: ignore[arg-type]
            if param.kind in _KINDS and (accepted := _accepts(kw, param.annotation)) is not None:
                self.func_accepts[kw] = accepted

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.__dict__.items()
                 if k not in {"name", "func", "afunc", "config", "kwargs", "trace"}}
        return f"{self.get_name()}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    def _call_args(self, input: Any, config: RunnableConfig, kwargs: dict[str, Any]) -> tuple[tuple, dict]:
        if self.explode_args:
            args, extra = input
            kwargs = {**self.kwargs, **extra, **kwargs}
        else:
            args, kwargs = (input,), {**self.kwargs, **kwargs}
        configurable = config.get("configurable") or {}
        runtime = configurable.get(_RUNTIME)
        for kw, (attr, default) in self.func_accepts.items():
            if kw in kwargs:
                continue
            value: Any = _MISSING
            if kw == "config":
                value = config
            elif kw == "error":
                value = configurable.get(_NODE_ERROR, _MISSING)
            elif runtime is not None:
                value = runtime if kw == "runtime" else getattr(runtime, attr, _MISSING)
            if value is _MISSING:
                if default is _REQUIRED:
                    raise ValueError(f"Missing required config key '{attr}' for '{self.name}'.")
                value = default
            kwargs[kw] = value
        return args, kwargs

    def _tagged(self, config: RunnableConfig) -> RunnableConfig:
        """`config` with this Runnable's tags added to the run it makes."""
        if not self.tags:
            return config
        return {**config, "tags": [*(config.get("tags") or ()), *self.tags]}

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Call `func` (a TypeError when there is only `afunc`)."""
        if self.func is None:
            raise TypeError(
                f'No synchronous function provided to "{self.name}".'
                "\nEither initialize with a synchronous function or invoke"
                " via the async API (ainvoke, astream, etc.)"
            )
        config = ensure_config(config) if config is None else config
        args, kw = self._call_args(input, config, kwargs)
        if self.trace:
            manager = get_callback_manager_for_config(self._tagged(config))
            run = manager.on_chain_start(None, input, name=config.get("run_name") or self.get_name(),
                                         run_id=config.pop("run_id", None))
            try:
                with set_config_context(patch_config(config, callbacks=run.get_child())) as context:
                    ret = context.run(self.func, *args, **kw)
            except BaseException as e:
                run.on_chain_error(e)
                raise
            run.on_chain_end(ret)
        else:
            ret = self.func(*args, **kw)
        if self.recurse and isinstance(ret, Runnable):
            return ret.invoke(input, config)
        return ret

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Await `afunc`; without one, call `func` (as LangGraph, in this thread)."""
        if self.afunc is None:
            return self.invoke(input, config, **kwargs)
        config = ensure_config(config) if config is None else config
        args, kw = self._call_args(input, config, kwargs)
        if self.trace:
            manager = get_async_callback_manager_for_config(self._tagged(config))
            run = await manager.on_chain_start(None, input, name=config.get("run_name") or self.name,
                                               run_id=config.pop("run_id", None))
            try:
                coro = self.afunc(*args, **kw)
                if sys.version_info >= (3, 11):
                    with set_config_context(patch_config(config, callbacks=run.get_child())) as context:
                        ret = await asyncio.create_task(coro, context=context)  # type: ignore[arg-type]
                else:
                    ret = await coro
            except BaseException as e:
                await run.on_chain_error(e)
                raise
            await run.on_chain_end(ret)
        else:
            ret = await self.afunc(*args, **kw)
        if self.recurse and isinstance(ret, Runnable):
            return await ret.ainvoke(input, config)
        return ret


_MISSING: Any = object()

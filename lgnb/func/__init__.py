"""The functional API: `@entrypoint` turns a function into a graph, `@task` into a
unit of work the entrypoint (or any node) calls and gets a future for.

An entrypoint is a one-node Pregel graph: the function reads the input channel
(`__start__`), its return value goes to `__end__` (the output) and to `__previous__`
(what the next run on the same thread receives as `previous`). `entrypoint.final(value=,
save=)` sets the two apart. Tasks run as PUSH tasks of the caller's step
(see `lgnb.pregel._call`): their results are saved as pending writes, so an entrypoint
that re-runs after an interrupt gets finished tasks' results without running them again.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar, get_args, get_origin, overload

from lgnb._internal.callable import NodeCallable
from lgnb._internal.constants import END, START
from lgnb.channels.ephemeral_value import EphemeralValue
from lgnb.channels.last_value import LastValue
from lgnb.pregel._call import Call, call_node, schedule_call
from lgnb.pregel._node import PregelNode
from lgnb.types import CachePolicy, RetryPolicy, TimeoutPolicy

if TYPE_CHECKING:
    from langgraph.cache.base import BaseCache
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.store.base import BaseStore

    from lgnb.pregel.main import Pregel

__all__ = ("entrypoint", "task")

PREVIOUS = "__previous__"
CACHE_NS_WRITES = "__pregel_ns_writes"

P = TypeVar("P")
T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")


def _identifier(func: Any) -> str | None:
    """`module.qualname` of a function: the cache namespace of a task."""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None)
    module = getattr(func, "__module__", None)
    if name is None or module is None:
        return None
    return f"{module}.{name}"


def _timeout(timeout: Any, func: Any, name: str, kind: str) -> Any:
    """The TimeoutPolicy of a task or entrypoint; only async functions can be timed out."""
    if timeout is None:
        return None
    from lgnb._internal.callable import is_async_callable
    from lgnb.pregel._node import _SYNC_TIMEOUT
    from lgnb.types import TimeoutPolicy

    policy = TimeoutPolicy.coerce(timeout)
    if policy is not None and not is_async_callable(func):
        raise ValueError(f"{_SYNC_TIMEOUT} {kind} {name!r} is sync: make it `async def`.")
    return policy


def _eager_timeout(timeout: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
    """`timeout=` as a TimeoutPolicy, checked when `@task(...)` / `@entrypoint(...)` is
    written (a ValueError for a non-positive value), not when the function first runs."""
    if timeout is None:
        return None
    return TimeoutPolicy.coerce(timeout)


def _policies(retry_policy: RetryPolicy | Sequence[RetryPolicy] | None) -> tuple[RetryPolicy, ...]:
    if retry_policy is None:
        return ()
    if isinstance(retry_policy, RetryPolicy):
        return (retry_policy,)
    return tuple(retry_policy)


class TaskFunction(Generic[T]):
    """A `@task`: calling it inside a running graph starts a task and returns a future."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        retry_policy: Sequence[RetryPolicy] = (),
        cache_policy: CachePolicy | None = None,
        name: str | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
    ) -> None:
        if name is not None:
            if hasattr(func, "__func__"):  # a bound method
                method = functools.partial(func.__func__, func.__self__)  # type: ignore[attr-defined]
                method.__name__ = name  # type: ignore[attr-defined]
                func = method
            else:
                func.__name__ = name
        self.func = func
        self.retry_policy = tuple(retry_policy)
        self.cache_policy = cache_policy
        self.name: str = (
            getattr(func, "__name__", None)
            or getattr(getattr(func, "func", None), "__name__", None)
            or type(func).__name__
        )
        self.timeout = _timeout(timeout, func, self.name, "Task")
        self._node = call_node(func, self.name, self.retry_policy)
        self._node.timeout = self.timeout
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return schedule_call(
            Call(
                self.func,
                args,
                kwargs,
                name=self.name,
                retry_policy=self.retry_policy,
                cache_policy=self.cache_policy,
                node=self._node,
            )
        )

    def _cache_namespace(self) -> tuple[str, str]:
        return (CACHE_NS_WRITES, _identifier(self.func) or "__dynamic__")

    def clear_cache(self, cache: Any) -> None:
        """Drop this task's cached results from `cache`."""
        if self.cache_policy is not None:
            cache.clear((self._cache_namespace(),))

    async def aclear_cache(self, cache: Any) -> None:
        """Async twin of `clear_cache`."""
        if self.cache_policy is not None:
            await cache.aclear((self._cache_namespace(),))


@overload
def task(
    __func_or_none__: None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy | None = None,
    timeout: float | timedelta | TimeoutPolicy | None = None,
    **kwargs: Any,
) -> Callable[[Callable[..., T]], TaskFunction[T]]: ...


@overload
def task(__func_or_none__: Callable[..., T]) -> TaskFunction[T]: ...


def task(
    __func_or_none__: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy | None = None,
    timeout: float | timedelta | TimeoutPolicy | None = None,
    **kwargs: Any,
) -> TaskFunction[Any] | Callable[[Callable[..., Any]], TaskFunction[Any]]:
    """Make a function a task: `@task`, `@task()`, `@task(retry_policy=..., cache_policy=...)`.

    Called inside an entrypoint or a graph node it runs concurrently and returns a
    future (`fut.result()` in sync code, `await fut` in async code).
    """
    if "retry" in kwargs:
        import warnings

        from lgnb.warnings import LangGraphDeprecatedSinceV05

        warnings.warn(
            "`retry` is deprecated and will be removed. Please use `retry_policy` instead.",
            category=LangGraphDeprecatedSinceV05,
            stacklevel=2,
        )
        if retry_policy is None:
            retry_policy = kwargs.pop("retry")
    policies = _policies(retry_policy)
    policy = _eager_timeout(timeout)

    def decorator(func: Callable[..., Any]) -> TaskFunction[Any]:
        return TaskFunction(
            func, retry_policy=policies, cache_policy=cache_policy, name=name, timeout=policy
        )

    if __func_or_none__ is not None:
        return decorator(__func_or_none__)
    return decorator


class _EntrypointCallable(NodeCallable):
    """The entrypoint function as a node: `previous` is the thread's last saved value."""

    __slots__ = ()

    def _with_previous(self, ctx: Any) -> None:
        ch = ctx.loop.channels.get(PREVIOUS)
        prev = ch.get() if ch is not None and ch.is_available() else None
        if ctx.runtime.previous is not prev:
            ctx.runtime = ctx.runtime.override(previous=prev)
            ctx._runtime = None

    def call(self, value: Any, ctx: Any) -> Any:
        self._with_previous(ctx)
        return super().call(value, ctx)

    async def acall(self, value: Any, ctx: Any) -> Any:
        self._with_previous(ctx)
        if self.afunc is None and self.func is not None:
            import asyncio
            import contextvars

            context = contextvars.copy_context()
            return await asyncio.get_running_loop().run_in_executor(
                None, context.run, super().call, value, ctx
            )
        return await super().acall(value, ctx)


class entrypoint(Generic[T]):
    """Make a function a graph: `@entrypoint(checkpointer=..., store=..., cache=...)`.

    The function takes the input as its first parameter and may declare `previous`,
    `config`, `writer`, `store`, `runtime`. It returns the output, or
    `entrypoint.final(value=output, save=what the next run sees as previous)`.
    """

    def __init__(
        self,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        store: BaseStore | None = None,
        cache: BaseCache[Any] | None = None,
        context_schema: type[Any] | None = None,
        cache_policy: CachePolicy | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
        **kwargs: Any,
    ) -> None:
        import warnings

        from lgnb.warnings import LangGraphDeprecatedSinceV05, LangGraphDeprecatedSinceV10

        if (config_schema := kwargs.pop("config_schema", None)) is not None:
            warnings.warn(
                "`config_schema` is deprecated and will be removed. Please use "
                "`context_schema` instead.",
                category=LangGraphDeprecatedSinceV10,
                stacklevel=2,
            )
            if context_schema is None:
                context_schema = config_schema
        if (retry := kwargs.pop("retry", None)) is not None:
            warnings.warn(
                "`retry` is deprecated and will be removed. Please use `retry_policy` instead.",
                category=LangGraphDeprecatedSinceV05,
                stacklevel=2,
            )
            if retry_policy is None:
                retry_policy = retry
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.context_schema = context_schema
        self.cache_policy = cache_policy
        self.retry_policy = _policies(retry_policy)
        self.timeout = _eager_timeout(timeout)

    @dataclass(frozen=True, kw_only=True, slots=True)
    class final(Generic[R, S]):
        """Return `value` to the caller and save `save` as the thread's `previous`."""

        value: R
        save: S

    def __call__(self, func: Callable[..., Any]) -> Pregel:
        from lgnb.pregel.main import Pregel

        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError("Generators are not supported in the Functional API.")
        sig = inspect.signature(func)
        first = next(iter(sig.parameters), None)
        if not first:
            raise ValueError("Entrypoint function must have at least one parameter")
        ann = sig.parameters[first].annotation
        input_type = ann if ann is not inspect.Signature.empty else Any
        output_type: Any = Any
        save_type: Any = Any
        ret = sig.return_annotation
        if ret is not inspect.Signature.empty and ret is not entrypoint.final:
            if get_origin(ret) is entrypoint.final:
                args = get_args(ret)
                if len(args) != 2:
                    raise TypeError(
                        "Please an annotation for both the return_ and the save values."
                        "For example, `-> entrypoint.final[int, str]` would assign a "
                        "return_ a type of `int` and save the type `str`."
                    )
                output_type, save_type = args
            else:
                output_type = save_type = ret

        def write_output(task: Any, value: Any) -> list[tuple[str, Any]]:
            if isinstance(value, entrypoint.final):
                return [(END, value.value), (PREVIOUS, value.save)]
            return [(END, value), (PREVIOUS, value)]

        write_output.channels = (END, PREVIOUS)  # type: ignore[attr-defined]  # drawn as edges

        name = func.__name__
        node = PregelNode(
            name=name,
            triggers=[START],
            channels=START,
            bound=_EntrypointCallable(func, name=name),
            writers=[write_output],
            retry_policy=self.retry_policy,
        )
        node.timeout = _timeout(self.timeout, func, name, "Entrypoint")
        graph = Pregel(
            nodes={name: node},
            channels={
                START: EphemeralValue(input_type),
                END: LastValue(output_type, END),
                PREVIOUS: LastValue(save_type, PREVIOUS),
            },
            input_channels=START,
            output_channels=END,
            stream_channels=END,
            state_keys=(),
            checkpointer=self.checkpointer,
            stream_mode="updates",
            retry_policy=self.retry_policy,
            context_schema=self.context_schema,
            store=self.store,
            cache=self.cache,
            cache_policy=self.cache_policy,
            stream_eager=True,
        )
        from lgnb.graph._allowlist import remember_allowlist

        # its saver also loads the classes of its input, return and saved values
        remember_allowlist(graph, [input_type, output_type, save_type])
        return graph

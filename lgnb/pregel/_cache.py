"""Node and task caching: a task whose node has a `CachePolicy` is looked up in the
graph's cache (`compile(cache=...)`, `@entrypoint(cache=...)`) before it runs.

A hit is not run: its cached writes become its writes, are saved as the step's pending
writes like those of a task that ran, and are streamed as `updates` with
`"__metadata__": {"cached": True}` (no `tasks` result event, as in LangGraph). A task
that ran and finished (no error, no interrupt) has its writes stored under its key.

Keys follow LangGraph's layout, so a cache is shared between the two engines:
namespace `("__pregel_ns_writes", "<module>.<qualname>", "<node>")` for nodes,
`("__pregel_ns_writes", "<module>.<qualname>")` for `@task` functions, and the
XXH3-128 hex digest of `policy.key_func(input)` as the key. The lookup and the store are
I/O: the loop only computes keys and queues `("cache_set", pairs)` in `loop.io`; the
drivers call `read_cache` / `aread_cache` between planning and running a step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from lgnb._internal.constants import ERROR, INTERRUPT

if TYPE_CHECKING:
    from lgnb.pregel._loop import Loop
    from lgnb.pregel._task import Task
    from lgnb.types import CachePolicy

__all__ = (
    "CACHE_NS_WRITES",
    "CacheKey",
    "aread_cache",
    "cache_key",
    "cacheable",
    "identifier",
    "node_namespace",
    "read_cache",
)

CACHE_NS_WRITES = "__pregel_ns_writes"


class CacheKey(NamedTuple):
    """Where a task's writes are cached: namespace, key, lifetime in seconds."""

    ns: tuple[str, ...]
    key: str
    ttl: int | None


def identifier(func: Any) -> str | None:
    """`module.qualname` of the function behind a node or task (None when dynamic)."""
    bound = getattr(func, "bound", None)
    if bound is not None:  # a PregelNode
        func = bound
    inner = getattr(func, "func", None) or getattr(func, "afunc", None)
    if inner is not None and not isinstance(func, type):
        func = inner
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None)
    module = getattr(func, "__module__", None)
    if name is None or module is None:
        return None
    return f"{module}.{name}"


def node_namespace(name: str, node: Any) -> tuple[str, ...]:
    """The cache namespace of graph node `name` (what `clear_cache` clears)."""
    return (CACHE_NS_WRITES, identifier(node) or "__dynamic__", name)


def _digest(args_key: str | bytes) -> str:
    from xxhash import xxh3_128_hexdigest

    return xxh3_128_hexdigest(args_key.encode() if isinstance(args_key, str) else args_key)


def cache_key(policy: CachePolicy, ns: tuple[str, ...], *args: Any, **kwargs: Any) -> CacheKey:
    """The key of one input under `policy`."""
    return CacheKey(ns, _digest(policy.key_func(*args, **kwargs)), policy.ttl)


def cacheable(writes: Sequence[tuple[str, Any]]) -> bool:
    """Only a task that finished is cached: a cached error or interrupt would skip it."""
    return not any(c in (INTERRUPT, ERROR) for c, _ in writes)


def _keys(loop: Loop) -> dict[tuple[tuple[str, ...], str], Task]:
    """Keys of the step's tasks that may be served from the cache."""
    graph = loop.graph
    default = getattr(graph, "cache_policy", None)
    wanted: dict[tuple[tuple[str, ...], str], Task] = {}
    for task in loop.tasks.values():
        if task.writes:
            continue
        key = task.cache_key
        if key is None:
            policy = task.node.cache_policy or default
            if policy is None:
                continue
            key = task.cache_key = cache_key(policy, node_namespace(task.name, task.node), task.input)
        wanted[(key.ns, key.key)] = task
    return wanted


def _apply_hits(loop: Loop, wanted: Mapping[Any, Task], hits: Mapping[Any, Any]) -> None:
    for full_key, writes in hits.items():
        task = wanted.get(full_key)
        if task is None or task.writes:
            continue
        task.writes = [tuple(w) for w in writes]
        loop.put_writes(task, list(task.writes), cached=True)


def read_cache(loop: Loop) -> None:
    """Serve the step's cacheable tasks from the graph's cache (sync cache API)."""
    cache = loop.graph.cache
    if cache is None:
        return
    wanted = _keys(loop)
    if wanted:
        _apply_hits(loop, wanted, cache.get(tuple(wanted)))


async def aread_cache(loop: Loop) -> None:
    """`read_cache` with the cache's async API."""
    cache = loop.graph.cache
    if cache is None:
        return
    wanted = _keys(loop)
    if wanted:
        _apply_hits(loop, wanted, await cache.aget(tuple(wanted)))


def cache_set_op(task: Task, writes: Sequence[tuple[str, Any]]) -> tuple[str, Any] | None:
    """The `loop.io` operation storing a finished task's writes (None: nothing to store)."""
    key = task.cache_key
    if key is None or not writes or not cacheable(writes):
        return None
    return ("cache_set", {(key.ns, key.key): (list(task.writes), key.ttl)})

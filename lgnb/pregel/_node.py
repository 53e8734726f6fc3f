"""The compiled form of a graph node: what triggers it, what it reads, how it writes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb._internal.callable import NodeCallable
    from lgnb.pregel._task import Task
    from lgnb.types import RetryPolicy

__all__ = ("PregelNode", "Writer")

Writer = Callable[["Task", Any], "Sequence[tuple[str, Any]] | None"]
"""Turns a node's return value into channel writes; may read the task's earlier writes."""


class PregelNode:
    """A node of the Pregel graph.

    `triggers`: channels whose update schedules the node; `channels`: the state keys it
    reads (or ROOT for a single-value state); `mapper`: turns the read dict into the
    node's input type; `writers`: applied in order to the node's return value.
    """

    __slots__ = (
        "name",
        "triggers",
        "channels",
        "mapper",
        "bound",
        "writers",
        "static_writes",
        "metadata",
        "tags",
        "retry_policy",
        "hidden",
        "reads_all_state",
        "trace_policy",
        "managed",
        "ends",
        "defer",
        "cache_policy",
        "_subgraphs",
        "timeout",
        "error_handler",
        "is_error_handler",
        "slow",
        "async_writers",
        "reads_config",
    )

    def __init__(
        self,
        *,
        name: str,
        triggers: list[str],
        channels: list[str] | str,
        bound: NodeCallable | None,
        writers: list[Writer],
        mapper: Callable[[Any], Any] | None = None,
        metadata: dict[str, Any] | None = None,
        tags: list[str] | None = None,
        retry_policy: Sequence[RetryPolicy] = (),
        hidden: bool = False,
    ) -> None:
        self.name = name
        self.triggers = triggers
        self.channels = channels
        self.mapper = mapper
        self.bound = bound
        self.writers = writers
        self.static_writes: list[tuple[str, Any]] = []
        self.metadata = metadata
        self.tags = tags or []
        self.retry_policy = retry_policy
        self.hidden = hidden
        self.reads_all_state = False
        self.trace_policy: Any = None  # a TracePolicy: what tracers record of its runs
        self.managed: dict[str, Any] = {}
        self.ends: Any = ()
        self.defer = False
        self.cache_policy: Any = None
        self._subgraphs: list[Any] | None = None
        self.timeout: Any = None  # a TimeoutPolicy for each attempt (async nodes only)
        self.error_handler: str | None = None  # the node that handles this node's failure
        self.is_error_handler = False
        self.slow: bool | None = None  # its last run took lgnb.pregel._inline.HANDOFF or more (None: never ran)
        # a writer has `is_async = True` (an async conditional edge's): set by who adds it
        self.async_writers = False
        # its code read LangChain's config (called a model or a tool) when it last ran:
        # the next run builds that config up front rather than behind a LazyConfig
        self.reads_config = False

    def copy(self, update: dict[str, Any] | None = None) -> PregelNode:
        """A shallow copy of this node with the attributes in `update` replaced
        (e.g. `node.copy({"metadata": {...}})`); unknown names raise AttributeError."""
        clone = object.__new__(PregelNode)
        for slot in self.__slots__:
            setattr(clone, slot, getattr(self, slot))
        for key, value in (update or {}).items():
            if key not in self.__slots__ or key.startswith("_"):
                raise AttributeError(f"PregelNode has no attribute {key!r} to update")
            setattr(clone, key, value)
        if "bound" in (update or {}):
            clone._subgraphs = None
        return clone

    # Called on its own (`graph.nodes["name"].invoke(input)`, LangGraph's way to unit-test
    # a node): the node's code on `input`, its return value as is (`_node_call.py`).
    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Run this node's code once on `input`; returns what it returned (no state, no writes)."""
        from lgnb.pregel._node_call import invoke_node

        return invoke_node(self, input, config, **kwargs)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Async `invoke`."""
        from lgnb.pregel._node_call import ainvoke_node

        return await ainvoke_node(self, input, config, **kwargs)

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        """`invoke` as a stream (a Runnable node's chunks)."""
        from lgnb.pregel._node_call import stream_node

        return stream_node(self, input, config, **kwargs)

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        """Async `stream`."""
        from lgnb.pregel._node_call import astream_node

        return astream_node(self, input, config, **kwargs)

    @property
    def subgraphs(self) -> list[Any]:
        """The compiled graph this node is, or that its code invokes (`[]` if none):
        what `get_subgraphs` and namespaced state reads resolve (see `_detect`)."""
        if self._subgraphs is None:
            from lgnb.pregel._detect import find_subgraph

            bound = self.bound
            found = None
            if bound is not None:
                found = bound.subgraph if find_subgraph(bound.subgraph) is not None else None
                for fn in (bound.func, bound.afunc, bound.runnable):
                    if found is None and fn is not None:
                        found = find_subgraph(fn)
            self._subgraphs = [found] if found is not None else []
        return self._subgraphs

    @subgraphs.setter
    def subgraphs(self, value: list[Any]) -> None:
        self._subgraphs = list(value)


_SYNC_TIMEOUT = (
    "Node timeouts are only supported for async nodes because sync Python execution "
    "cannot be safely cancelled in-process."
)


def check_timeout_supported(node: PregelNode) -> None:
    """A timeout cancels the attempt through asyncio, which cannot stop sync code: a
    node with a timeout must be async (ValueError otherwise, at compile time)."""
    bound = node.bound
    if bound is None or bound.is_async or bound.afunc is not None or bound.subgraph is not None:
        return
    if bound.runnable is not None and _runnable_is_async(bound.runnable):
        return
    raise ValueError(f"{_SYNC_TIMEOUT} Node {node.name!r} is sync.")


def _runnable_is_async(runnable: Any) -> bool:
    """Whether a LangChain Runnable runs natively async (every branch, for compositions)."""
    from lgnb._internal.callable import is_async_callable

    steps = getattr(runnable, "steps__", None)  # RunnableParallel
    if isinstance(steps, dict):
        return all(_runnable_is_async(r) for r in steps.values())
    steps = getattr(runnable, "steps", None)  # RunnableSequence
    if isinstance(steps, list) and steps:
        return all(_runnable_is_async(r) for r in steps)
    if hasattr(runnable, "afunc") or hasattr(runnable, "func"):  # RunnableLambda & co.
        afunc = getattr(runnable, "afunc", None)
        return afunc is not None or is_async_callable(getattr(runnable, "func", None))
    return True

"""The compiled form of a graph node: what triggers it, what it reads, how it writes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
        "managed",
        "ends",
        "defer",
        "cache_policy",
        "_subgraphs",
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
        self.managed: dict[str, Any] = {}
        self.ends: Any = ()
        self.defer = False
        self.cache_policy: Any = None
        self._subgraphs: list[Any] | None = None

    @property
    def subgraphs(self) -> list[Any]:
        """The compiled graph this node is, or that its code invokes (`[]` if none):
        what `get_subgraphs` and namespaced state reads resolve (see `_detect`)."""
        if self._subgraphs is None:
            from lgnb.pregel._detect import find_subgraph

            bound = self.bound
            found = None
            if bound is not None:
                found = bound.subgraph
                for fn in (bound.func, bound.afunc, bound.runnable):
                    if found is None and fn is not None:
                        found = find_subgraph(fn)
            self._subgraphs = [found] if found is not None else []
        return self._subgraphs

    @subgraphs.setter
    def subgraphs(self, value: list[Any]) -> None:
        self._subgraphs = list(value)

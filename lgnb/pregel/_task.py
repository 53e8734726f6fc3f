"""A task: one node execution in one super-step, with the writes it produced."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb.pregel._node import PregelNode

__all__ = ("Task", "WriteBatch")


class Task:
    """One scheduled execution of a node (PULL: triggered by channels; PUSH: a Send)."""

    __slots__ = (
        "id",
        "name",
        "path",
        "input",
        "node",
        "triggers",
        "writes",
        "ns",
        "metadata",
        "error",
        "interrupts",
        "resumed",
        "timeout",
        "cache_key",
    )

    def __init__(  # positional on the hot path (plan_tasks), keywords elsewhere
        self,
        id: str,
        name: str,
        path: tuple,
        input: Any,
        node: PregelNode,
        triggers: tuple[str, ...],
        ns: str,
    ) -> None:
        self.id = id
        self.name = name
        self.path = path
        self.input = input
        self.node = node
        self.triggers = triggers
        self.writes: list[tuple[str, Any]] = []
        self.ns = ns
        # a `@task` call's: the calling task's config metadata when it called (None: the
        # caller never read its config), which the call's config starts from, as LangGraph's
        self.metadata: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.interrupts: tuple = ()
        self.resumed = False
        self.timeout: Any = None  # a Send's TimeoutPolicy, over the node's
        self.cache_key: Any = None  # set when the node or task has a CachePolicy

    def __repr__(self) -> str:
        return f"Task({self.name!r}, id={self.id!r}, path={self.path!r})"


class WriteBatch:
    """Writes not produced by a node (input, update_state, resume): applied like a task's."""

    __slots__ = ("name", "path", "triggers", "writes")

    def __init__(self, name: str, writes: list[tuple[str, Any]], triggers: tuple = ()) -> None:
        self.name = name
        self.path: tuple = ()
        self.triggers = triggers
        self.writes = writes

"""Graph lifecycle callbacks: be told when a run pauses on interrupts and when it resumes.

Subclass `GraphCallbackHandler`, override `on_interrupt` / `on_resume`, and pass an
instance in `config["callbacks"]` like any LangChain handler. Other handlers in the same
list are ignored by these events (they keep getting LangChain's usual callbacks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.callbacks.manager import ahandle_event, handle_event

from lgnb.types import Interrupt

__all__ = (
    "GraphCallbackHandler",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
    "get_async_graph_callback_manager_for_config",
    "get_sync_graph_callback_manager_for_config",
)

GraphLifecycleStatus: TypeAlias = Literal[
    "input", "pending", "done", "interrupt_before", "interrupt_after", "out_of_steps"
]
"""The loop's status when a lifecycle event was captured."""


@dataclass(frozen=True)
class GraphInterruptEvent:
    """The run paused: the interrupts that stopped it, at which checkpoint and namespace."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]
    interrupts: tuple[Interrupt, ...]


@dataclass(frozen=True)
class GraphResumeEvent:
    """The run resumed from a saved checkpoint (of this namespace)."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]


GraphLifecycleEvent: TypeAlias = GraphInterruptEvent | GraphResumeEvent
"""Any graph lifecycle event."""


class GraphCallbackHandler(BaseCallbackHandler):
    """Base of the handlers that receive graph lifecycle events (pass in `callbacks`)."""

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The run paused on one or more interrupts."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """The run resumed from a persisted checkpoint."""


def _graph_handlers(handlers: Sequence[BaseCallbackHandler]) -> list[GraphCallbackHandler]:
    return [h for h in handlers if isinstance(h, GraphCallbackHandler)]


class _GraphCallbackManager(BaseCallbackManager):
    """Dispatches lifecycle events to the `GraphCallbackHandler`s of a run (sync)."""

    run_id: UUID | None

    def __init__(
        self,
        handlers: Sequence[GraphCallbackHandler] | None = None,
        inheritable_handlers: Sequence[GraphCallbackHandler] | None = None,
        parent_run_id: UUID | None = None,
        *,
        tags: list[str] | None = None,
        inheritable_tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inheritable_metadata: dict[str, Any] | None = None,
        run_id: UUID | None = None,
    ) -> None:
        super().__init__(
            handlers=list(handlers or ()),
            inheritable_handlers=list(inheritable_handlers or ()),
            parent_run_id=parent_run_id,
            tags=tags,
            inheritable_tags=inheritable_tags,
            metadata=metadata,
            inheritable_metadata=inheritable_metadata,
        )
        self.run_id = run_id

    def copy(self, *, run_id: Any = ...) -> Any:
        """A copy (graph handlers only), with `run_id` replaced when given."""
        if run_id is ...:
            run_id = self.run_id
        elif run_id is not None and not isinstance(run_id, UUID):
            raise TypeError(f"run_id must be a UUID or None, got {type(run_id).__name__}")
        return self._from_manager(self, run_id)

    @classmethod
    def _from_manager(cls, manager: BaseCallbackManager, run_id: UUID | None) -> Any:
        return cls(
            handlers=_graph_handlers(manager.handlers),
            inheritable_handlers=_graph_handlers(manager.inheritable_handlers),
            parent_run_id=manager.parent_run_id,
            tags=list(manager.tags),
            inheritable_tags=list(manager.inheritable_tags),
            metadata=dict(manager.metadata),
            inheritable_metadata=dict(manager.inheritable_metadata),
            run_id=run_id,
        )

    @classmethod
    def configure(cls, callbacks: object | None = None, *, run_id: UUID | None = None) -> Any:
        """The manager for `callbacks` (a handler, a list, or a LangChain manager), keeping
        only its `GraphCallbackHandler`s."""
        if callbacks is None:
            return cls(run_id=run_id)
        if isinstance(callbacks, BaseCallbackManager):
            return cls._from_manager(callbacks, run_id)
        if isinstance(callbacks, GraphCallbackHandler):
            return cls([callbacks], run_id=run_id)
        if isinstance(callbacks, (str, bytes)) or not isinstance(callbacks, Sequence):
            raise TypeError(
                "callbacks must be a handler, a sequence of handlers or a callback manager, "
                f"got {type(callbacks).__name__}"
            )
        return cls(_graph_handlers(list(callbacks)), run_id=run_id)

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        handle_event(self.handlers, "on_interrupt", None, event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        handle_event(self.handlers, "on_resume", None, event)


class _AsyncGraphCallbackManager(_GraphCallbackManager):
    """Async twin of `_GraphCallbackManager` (async handlers are awaited)."""

    @property
    def is_async(self) -> bool:
        return True

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:  # type: ignore[override]
        await ahandle_event(self.handlers, "on_interrupt", None, event)

    async def on_resume(self, event: GraphResumeEvent) -> None:  # type: ignore[override]
        await ahandle_event(self.handlers, "on_resume", None, event)


def get_sync_graph_callback_manager_for_config(
    config: Any, *, run_id: UUID | None = None
) -> _GraphCallbackManager:
    """The lifecycle-event manager for `config["callbacks"]`, bound to `run_id`."""
    return _GraphCallbackManager.configure(config.get("callbacks"), run_id=run_id)


def get_async_graph_callback_manager_for_config(
    config: Any, *, run_id: UUID | None = None
) -> _AsyncGraphCallbackManager:
    """Async twin of `get_sync_graph_callback_manager_for_config`."""
    return _AsyncGraphCallbackManager.configure(config.get("callbacks"), run_id=run_id)

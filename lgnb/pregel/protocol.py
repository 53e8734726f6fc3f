"""`PregelProtocol`: what any graph offers (lgnb's `Pregel`, a `RemoteGraph`, ...), and
`StreamProtocol`, the callable a run writes its `(namespace, mode, payload)` chunks to.

Code typed against `langgraph.pregel.protocol` ports unchanged: lgnb's `Pregel` counts as
a `PregelProtocol` (`isinstance` holds), through ABC registration.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Generic, Literal, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig

from lgnb.types import All, Command, StateSnapshot, StreamMode

__all__ = ("PregelProtocol", "StreamChunk", "StreamProtocol")

StateT = TypeVar("StateT")
ContextT = TypeVar("ContextT")
InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")


class PregelProtocol(Runnable[InputT, Any], Generic[StateT, ContextT, InputT, OutputT]):
    """The graph API: config, drawing, state and history, state updates, runs."""

    @abstractmethod
    def with_config(self, config: RunnableConfig | None = None, **kwargs: Any) -> Any: ...

    @abstractmethod
    def get_graph(self, config: RunnableConfig | None = None, *, xray: int | bool = False) -> Any: ...

    @abstractmethod
    async def aget_graph(
        self, config: RunnableConfig | None = None, *, xray: int | bool = False
    ) -> Any: ...

    @abstractmethod
    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot: ...

    @abstractmethod
    async def aget_state(
        self, config: RunnableConfig, *, subgraphs: bool = False
    ) -> StateSnapshot: ...

    @abstractmethod
    def get_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]: ...

    @abstractmethod
    def aget_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]: ...

    @abstractmethod
    def bulk_update_state(
        self, config: RunnableConfig, updates: Sequence[Sequence[Any]]
    ) -> RunnableConfig: ...

    @abstractmethod
    async def abulk_update_state(
        self, config: RunnableConfig, updates: Sequence[Sequence[Any]]
    ) -> RunnableConfig: ...

    @abstractmethod
    def update_state(
        self, config: RunnableConfig, values: Any, as_node: str | None = None
    ) -> RunnableConfig: ...

    @abstractmethod
    async def aupdate_state(
        self, config: RunnableConfig, values: Any, as_node: str | None = None
    ) -> RunnableConfig: ...

    @abstractmethod
    def stream(  # type: ignore[override]  # LangGraph's keywords; Runnable's `**kwargs: Any | None` would make each accept None
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        subgraphs: bool = False,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Iterator[Any]: ...

    @abstractmethod
    def astream(  # type: ignore[override]  # LangGraph's keywords; Runnable's `**kwargs: Any | None` would make each accept None
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        subgraphs: bool = False,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> AsyncIterator[Any]: ...

    @abstractmethod
    def invoke(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Any: ...

    @abstractmethod
    async def ainvoke(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Any: ...


StreamChunk = tuple[tuple[str, ...], str, Any]
"""One stream event: (namespace, mode, payload)."""


class StreamProtocol:
    """A stream sink: called with each `StreamChunk`; `modes` are the modes it wants."""

    __slots__ = ("modes", "__call__")

    modes: set[StreamMode]
    __call__: Callable[[StreamChunk], None]

    def __init__(self, __call__: Callable[[StreamChunk], None], modes: set[StreamMode]) -> None:
        self.__call__ = __call__
        self.modes = modes


def _register() -> None:
    from lgnb.pregel.main import Pregel

    PregelProtocol.register(Pregel)


_register()

"""`stream_events(version="v3")` / `astream_events(version="v3")`: a run stream over `stream()`.

The run stream is built on the graph's one stream pipeline: it calls the graph's own
`stream` / `astream` (looked up on the instance, so a wrapper sees the call) with
`version="v2"`, `subgraphs=True` and the union of the stream modes its transformers
require, and feeds each part through a `StreamMux` as a protocol event. The config also
asks the `messages` handler for content-block events (`STREAM_MESSAGES_V2`), which is
what `run.messages` is made of.

Extra keyword arguments go to `stream` unchanged; `stream_mode` and `subgraphs` are the
run stream's own and are refused. `interrupt_before`, `interrupt_after` and `control`
are always passed (None when omitted), as LangGraph does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import CONF, NS_SEP
from lgnb._internal.context import TASK_CTX

if TYPE_CHECKING:
    from lgnb.pregel.main import Pregel
    from lgnb.stream import AsyncGraphRunStream, GraphRunStream
    from lgnb.stream._mux import StreamMux

__all__ = (
    "STREAM_MESSAGES_V2",
    "arun_stream",
    "reject_owned_kwargs",
    "run_stream",
    "transformer_factories",
)

STREAM_MESSAGES_V2 = "__pregel_stream_messages_v2"
"""Configurable key: the `messages` handler reports content-block events (v3 runs)."""

_OWNED = ("stream_mode", "subgraphs")


def reject_owned_kwargs(kwargs: dict[str, Any]) -> None:
    """Refuse the `stream()` options a v3 run sets itself."""
    clashes = [k for k in _OWNED if k in kwargs]
    if clashes:
        raise TypeError(
            "stream_events(version='v3') / astream_events(version='v3') do not accept "
            f"{', '.join(clashes)}; v3 owns these (stream_mode is built from the "
            "transformer mux, subgraphs is forced True so nested namespaces flow through "
            "scoped muxes). Register a transformer to get another stream mode."
        )


def transformer_factories(specs: Sequence[Callable[[tuple[str, ...]], Any]] | None) -> list[Callable[[tuple[str, ...]], Any]]:
    """Transformer classes / `scope -> transformer` factories, checked. Instances are
    refused: every subgraph scope needs a fresh one."""
    from lgnb.stream._transformer import StreamTransformer

    factories = []
    for spec in specs or ():
        if isinstance(spec, StreamTransformer):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, got "
                f"pre-built instance {type(spec).__name__}. Pass the transformer class or a "
                "factory like `lambda scope: MyTransformer(scope, ...)`."
            )
        if not callable(spec):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, "
                f"got {type(spec).__name__}."
            )
        factories.append(spec)
    return factories


def _scope(graph: Pregel, config: Any) -> tuple[str, ...]:
    """The namespace the run's own events carry: the caller's checkpoint namespace (a
    call inside a node), else the root."""
    ns = ((config or {}).get(CONF) or {}).get("checkpoint_ns")
    if ns is None:
        ns = ((graph.config or {}).get(CONF) or {}).get("checkpoint_ns")
    if ns is None:
        parent = TASK_CTX.get()
        ns = parent.task.ns if parent is not None else ""
    return tuple(ns.split(NS_SEP)) if ns else ()


def _mux(graph: Pregel, config: Any, transformers: Any, *, is_async: bool) -> StreamMux:
    from lgnb.stream._mux import StreamMux
    from lgnb.stream.transformers import (
        LifecycleTransformer,
        MessagesTransformer,
        SubgraphTransformer,
        ValuesTransformer,
    )

    return StreamMux(
        factories=[
            ValuesTransformer,
            MessagesTransformer,
            LifecycleTransformer,
            SubgraphTransformer,
            *transformer_factories(getattr(graph, "stream_transformers", None)),
            *transformer_factories(transformers),
        ],
        scope=_scope(graph, config),
        is_async=is_async,
    )


def _stream_call(mux: StreamMux, config: Any, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The config and keyword arguments of the underlying `stream` call."""
    modes: list[str] = []
    for t in mux._transformers:
        for mode in getattr(t, "required_stream_modes", ()):
            if mode not in modes:
                modes.append(mode)
    config = dict(config or {})
    config[CONF] = {**(config.get(CONF) or {}), STREAM_MESSAGES_V2: True}
    return config, {"stream_mode": modes, "subgraphs": True, "version": "v2", **options}


def _start(
    graph: Pregel, input: Any, config: Any, transformers: Any, options: dict[str, Any], is_async: bool
) -> Any:
    """A run stream (not started yet) over `stream` / `astream` with the modes its
    transformers need."""
    from lgnb.stream.run_stream import AsyncGraphRunStream, GraphRunStream

    mux = _mux(graph, config, transformers, is_async=is_async)
    config, options = _stream_call(mux, config, options)
    if is_async:
        return AsyncGraphRunStream(graph.astream(input, config, **options).__aiter__(), mux)
    return GraphRunStream(iter(graph.stream(input, config, **options)), mux)


def run_stream(
    graph: Pregel,
    input: Any,
    config: Any,
    *,
    transformers: Any = None,
    interrupt_before: Any = None,
    interrupt_after: Any = None,
    control: Any = None,
    **kwargs: Any,
) -> GraphRunStream:
    """`stream_events(version="v3")`: a sync run stream, not started yet."""
    options = {"interrupt_before": interrupt_before, "interrupt_after": interrupt_after, "control": control}
    return _start(graph, input, config, transformers, {**options, **kwargs}, is_async=False)


async def arun_stream(
    graph: Pregel,
    input: Any,
    config: Any,
    *,
    transformers: Any = None,
    interrupt_before: Any = None,
    interrupt_after: Any = None,
    control: Any = None,
    **kwargs: Any,
) -> AsyncGraphRunStream:
    """`astream_events(version="v3")`: an async run stream, not started yet."""
    options = {"interrupt_before": interrupt_before, "interrupt_after": interrupt_after, "control": control}
    return _start(graph, input, config, transformers, {**options, **kwargs}, is_async=True)

"""`RemoteGraph`: a graph whose runs live on a LangGraph server, behind the graph protocol.

A team that outgrows one notebook deploys its graph on a LangGraph server (`langgraph dev`,
a LangGraph platform deployment); `RemoteGraph("agent", url=...)` then offers the same
public protocol as a local compiled graph — `invoke`/`stream` with every stream mode,
subgraphs, v1 and v2 output, interrupts and `Command(resume=...)`, `get_state`,
`get_state_history`, `update_state`, `get_graph`, `with_config`, and the v3 run streams
(`stream_events(version="v3")`) — so lgnb's widgets and user code drive it unchanged. It is
also a node: `builder.add_node("remote", RemoteGraph(...))` streams the remote run's events
into the parent's stream (under the node's namespace) and pauses the parent when the remote
graph interrupts.

It is built on the server's own client, `langgraph-sdk` (the `remote` extra), imported when
a RemoteGraph is made, never by `import lgnb`. The wire conversions live in
`_remote_wire.py`, the v3 run stream in `_remote_run_stream.py`; the sync and async methods
here are thin shims over them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs

from lgnb._internal.constants import CONF
from lgnb._internal.context import TASK_CTX
from lgnb.pregel._remote_run_stream import AsyncRemoteRunStream, RemoteRunStream
from lgnb.pregel._remote_wire import (
    ChunkTranslator,
    RemoteException,
    StreamPlan,
    checkpoint_of,
    config_of,
    drawable_graph,
    sanitize_config,
    split_command,
    state_snapshot,
    thread_id_of,
)
from lgnb.pregel.protocol import PregelProtocol
from lgnb.types import GraphOutput

__all__ = ("RemoteException", "RemoteGraph")

logger = logging.getLogger(__name__)

_V3_SUPPORTED_KWARGS = frozenset({"metadata", "headers"})
"""Extra keyword arguments `stream_events(version="v3")` sends to the server."""


def _merge_tracing_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    """`headers` plus the LangSmith distributed-tracing headers of the current run tree
    (if any), so the server's trace nests under the caller's; `baggage` is joined."""
    import langsmith

    run_tree = langsmith.get_current_run_tree()
    if run_tree is None:
        return headers
    tracing = run_tree.to_headers()
    if not headers:
        return tracing
    merged = {**headers, **tracing}
    if "baggage" in headers and "baggage" in tracing:
        merged["baggage"] = f"{headers['baggage']},{tracing['baggage']}"
    return merged


def _caller(config: RunnableConfig | None) -> tuple[tuple[str, ...], frozenset[str], Callable[..., None] | None]:
    """When this RemoteGraph runs as a node of an lgnb graph: the node's namespace (the
    remote run's events are nested under it), the stream modes of the enclosing runs that
    asked for subgraph events, and a function forwarding a remote event to them."""
    ns_text = ((config or {}).get(CONF) or {}).get("checkpoint_ns")
    if not ns_text:
        return (), frozenset(), None
    caller_ns = tuple(ns_text.split("|"))
    ctx = TASK_CTX.get()
    if ctx is None:
        return caller_ns, frozenset(), None
    targets = []
    run = ctx.loop.run
    while run is not None:
        if run.subgraphs and run.sink is not None:
            targets.append((run.sink.put, run.modes))
        run = run.parent
    if not targets:
        return caller_ns, frozenset(), None
    modes = frozenset().union(*(m for _, m in targets))

    def forward(ns: tuple[str, ...], mode: str, data: Any) -> None:
        for put, wanted in targets:
            if mode in wanted:
                put((ns, mode, data))

    return caller_ns, modes, forward


class RemoteGraph(PregelProtocol):
    """A client for a graph deployed on a LangGraph server, with the local graph API.

    Args:
        assistant_id: the assistant id, or the graph name in `langgraph.json`.
        url: the server's URL; makes the default sync and async clients.
        api_key: the API key (else read by the SDK from `LANGGRAPH_API_KEY`, ...).
        headers: extra headers for every request.
        client / sync_client: SDK clients to use instead of the defaults.
        config: a config merged under each call's config.
        name: the node name when added to a graph (default: `assistant_id`).
        distributed_tracing: send LangSmith tracing headers, so the server's trace
            nests under the current one.
    """

    assistant_id: str
    name: str

    def __init__(
        self,
        assistant_id: str,
        /,
        *,
        url: str | None = None,
        api_key: str | None = None,
        headers: dict[str, str] | None = None,
        client: Any = None,
        sync_client: Any = None,
        config: RunnableConfig | None = None,
        name: str | None = None,
        distributed_tracing: bool = False,
    ) -> None:
        self.assistant_id = assistant_id
        self.name = assistant_id if name is None else name
        self.config = config
        self.distributed_tracing = distributed_tracing
        if url is not None and (client is None or sync_client is None):
            try:
                from langgraph_sdk import get_client, get_sync_client
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ImportError(
                    "RemoteGraph needs the LangGraph server client: pip install 'lgnb[remote]' "
                    "(or langgraph-sdk)."
                ) from exc
            if client is None:
                client = get_client(url=url, api_key=api_key, headers=headers)
            if sync_client is None:
                sync_client = get_sync_client(url=url, api_key=api_key, headers=headers)
        self.client = client
        self.sync_client = sync_client

    def __repr__(self) -> str:
        return f"RemoteGraph({self.assistant_id!r}, name={self.name!r})"

    # ---------------------------------------------------------------- clients, config
    def _validate_client(self) -> Any:
        if self.client is None:
            raise ValueError(
                "RemoteGraph has no async client: pass `url=` or `client=` when creating it."
            )
        return self.client

    def _validate_sync_client(self) -> Any:
        if self.sync_client is None:
            raise ValueError(
                "RemoteGraph has no sync client: pass `url=` or `sync_client=` when creating it."
            )
        return self.sync_client

    def _headers(self, headers: dict[str, str] | None) -> dict[str, str] | None:
        # looked up on the module at call time, so it can be replaced (tests, tracing setups)
        return _merge_tracing_headers(headers) if self.distributed_tracing else headers

    def _merged(self, config: RunnableConfig | None) -> RunnableConfig:
        return merge_configs(self.config, config)

    def copy(self, update: dict[str, Any]) -> RemoteGraph:
        """A RemoteGraph like this one with some constructor arguments replaced."""
        attrs = {**self.__dict__, **update}
        return type(self)(attrs.pop("assistant_id"), **attrs)

    def with_config(self, config: RunnableConfig | None = None, **kwargs: Any) -> RemoteGraph:
        """A RemoteGraph whose calls merge `config` (and `kwargs`, as config keys)."""
        return self.copy({"config": merge_configs(self.config, config, kwargs)})  # type: ignore[arg-type]

    # ---------------------------------------------------------------- drawing
    def get_graph(
        self,
        config: RunnableConfig | None = None,
        *,
        xray: int | bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> Any:
        """The remote graph's structure (`GET /assistants/{id}/graph`) as a drawable
        `Graph`; `xray` includes subgraphs (to that depth when an int). `config` is unused."""
        graph = self._validate_sync_client().assistants.get_graph(
            assistant_id=self.assistant_id, xray=xray, headers=headers, params=params
        )
        return drawable_graph(graph)

    async def aget_graph(
        self,
        config: RunnableConfig | None = None,
        *,
        xray: int | bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> Any:
        """Async `get_graph`."""
        graph = await self._validate_client().assistants.get_graph(
            assistant_id=self.assistant_id, xray=xray, headers=headers, params=params
        )
        return drawable_graph(graph)

    # ---------------------------------------------------------------- schemas
    def _schema(self, which: str) -> dict[str, Any]:
        client = self._validate_sync_client()
        assistant = str(self.assistant_id)
        try:
            uuid.UUID(assistant)
        except ValueError:  # a graph id: the server's schemas are asked by assistant id
            found = client.assistants.search(graph_id=assistant, limit=1)
            if not found:
                raise LookupError(f"the LangGraph server has no assistant for graph {assistant!r}") from None
            assistant = str(found[0]["assistant_id"])
        schemas = client.assistants.get_schemas(assistant)
        schema = (schemas or {}).get(which)
        return dict(schema) if isinstance(schema, Mapping) else {}

    def get_input_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The graph's input schema as the server reports it (`GET /assistants/{id}/schemas`),
        as a local graph's `get_input_jsonschema` (an lgnb extra: the views read it to make
        fork forms). `config` is unused."""
        return self._schema("input_schema")

    def get_output_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The graph's output schema as the server reports it (see `get_input_jsonschema`)."""
        return self._schema("output_schema")

    # ---------------------------------------------------------------- state
    def _state_request(self, config: RunnableConfig, method: str) -> tuple[RunnableConfig, str]:
        merged = self._merged(config)
        return merged, thread_id_of(merged, method)

    def get_state(
        self,
        config: RunnableConfig,
        *,
        subgraphs: bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> Any:
        """The thread's state at the config's checkpoint (its latest when none)."""
        merged, thread_id = self._state_request(config, "get_state")
        state = self._validate_sync_client().threads.get_state(
            thread_id=thread_id,
            checkpoint=checkpoint_of(merged),
            subgraphs=subgraphs,
            headers=headers,
            params=params,
        )
        return state_snapshot(state)

    async def aget_state(
        self,
        config: RunnableConfig,
        *,
        subgraphs: bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> Any:
        """Async `get_state`."""
        merged, thread_id = self._state_request(config, "aget_state")
        state = await self._validate_client().threads.get_state(
            thread_id=thread_id,
            checkpoint=checkpoint_of(merged),
            subgraphs=subgraphs,
            headers=headers,
            params=params,
        )
        return state_snapshot(state)

    def _history_request(
        self, config: RunnableConfig, filter: Any, before: Any, limit: int | None, method: str
    ) -> dict[str, Any]:
        merged, thread_id = self._state_request(config, method)
        return {
            "thread_id": thread_id,
            "limit": limit or 10,
            "before": checkpoint_of(before),
            "metadata": filter,
            "checkpoint": checkpoint_of(merged),
        }

    def get_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> Iterator[Any]:
        """The thread's states, newest first (`limit` defaults to the server's 10)."""
        request = self._history_request(config, filter, before, limit, "get_state_history")
        states = self._validate_sync_client().threads.get_history(
            **request, headers=headers, params=params
        )
        for state in states:
            yield state_snapshot(state)

    async def aget_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> AsyncIterator[Any]:
        """Async `get_state_history`."""
        request = self._history_request(config, filter, before, limit, "aget_state_history")
        states = await self._validate_client().threads.get_history(
            **request, headers=headers, params=params
        )
        for state in states:
            yield state_snapshot(state)

    def _update_request(
        self, config: RunnableConfig, values: Any, as_node: str | None, method: str
    ) -> dict[str, Any]:
        merged, thread_id = self._state_request(config, method)
        return {
            "thread_id": thread_id,
            "values": values,
            "as_node": as_node,
            "checkpoint": checkpoint_of(merged),
        }

    def update_state(
        self,
        config: RunnableConfig,
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> RunnableConfig:
        """Write `values` to the thread as if node `as_node` returned them; the config
        of the new checkpoint."""
        request = self._update_request(config, values, as_node, "update_state")
        response = self._validate_sync_client().threads.update_state(
            **request, headers=headers, params=params
        )
        return config_of(response["checkpoint"])

    async def aupdate_state(
        self,
        config: RunnableConfig,
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> RunnableConfig:
        """Async `update_state`."""
        request = self._update_request(config, values, as_node, "aupdate_state")
        response = await self._validate_client().threads.update_state(
            **request, headers=headers, params=params
        )
        return config_of(response["checkpoint"])

    @staticmethod
    def _bulk_steps(updates: Sequence[Sequence[Any]]) -> list[tuple[Any, str | None]]:
        """One `(values, as_node)` per super-step; the server applies one update per call,
        so a super-step of several updates (applied together) cannot be sent."""
        steps = []
        for step in updates:
            if len(step) != 1:
                raise NotImplementedError(
                    "RemoteGraph.bulk_update_state: the server applies one update per "
                    f"checkpoint, got a super-step of {len(step)} updates. Send one update "
                    "per super-step, or call update_state for each."
                )
            values, as_node = step[0][0], step[0][1]
            steps.append((values, as_node))
        if not steps:
            raise ValueError("RemoteGraph.bulk_update_state: no updates given.")
        return steps

    def bulk_update_state(self, config: RunnableConfig, updates: Sequence[Sequence[Any]]) -> RunnableConfig:
        """Apply super-steps of updates in order, each on the checkpoint the previous one
        made; the config of the last."""
        for values, as_node in self._bulk_steps(updates):
            config = self.update_state(config, values, as_node)
        return config

    async def abulk_update_state(
        self, config: RunnableConfig, updates: Sequence[Sequence[Any]]
    ) -> RunnableConfig:
        """Async `bulk_update_state`."""
        for values, as_node in self._bulk_steps(updates):
            config = await self.aupdate_state(config, values, as_node)
        return config

    # ---------------------------------------------------------------- runs
    def _run_request(
        self,
        input: Any,
        config: RunnableConfig | None,
        *,
        context: Any,
        stream_mode: Any,
        interrupt_before: Any,
        interrupt_after: Any,
        subgraphs: bool,
        headers: dict[str, str] | None,
        params: Any,
        version: str,
        kwargs: dict[str, Any],
    ) -> tuple[ChunkTranslator, dict[str, Any]]:
        """The SDK `runs.stream` arguments of a run, and the translator of its chunks."""
        sanitized = sanitize_config(self._merged(config))
        caller_ns, parent_modes, forward = _caller(config)
        plan = StreamPlan(stream_mode, parent_modes=parent_modes)
        translator = ChunkTranslator(
            plan, subgraphs=subgraphs, version=version, caller_ns=caller_ns, forward=forward
        )
        input, command = split_command(input)
        request = {
            "thread_id": sanitized.get(CONF, {}).pop("thread_id", None),
            "assistant_id": self.assistant_id,
            "input": input,
            "command": command,
            "config": sanitized,
            "context": context,
            "stream_mode": plan.wire,
            "interrupt_before": interrupt_before,
            "interrupt_after": interrupt_after,
            "stream_subgraphs": subgraphs or forward is not None,
            "if_not_exists": "create",
            "headers": self._headers(headers),
            "params": params,
            **kwargs,
        }
        return translator, request

    def stream(  # type: ignore[override]  # LangGraph's keywords; Runnable's `**kwargs: Any | None` would make each accept None
        self,
        input: dict[str, Any] | Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        subgraphs: bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Run the graph on the server and stream its output, shaped as a local graph's
        (`stream_mode` default `"updates"`; `subgraphs`, `version` as locally). A thread
        run when the config has a `thread_id`, else a thread-less run; a `Command` input
        resumes or steers the thread. Extra kwargs go to the SDK's `runs.stream`."""
        translator, request = self._run_request(
            input, config, context=context, stream_mode=stream_mode,
            interrupt_before=interrupt_before, interrupt_after=interrupt_after,
            subgraphs=subgraphs, headers=headers, params=params, version=version, kwargs=kwargs,
        )  # fmt: skip
        for chunk in self._validate_sync_client().runs.stream(**request):
            item = translator.feed(chunk.event, chunk.data)
            if item is not translator.SKIP:
                yield item

    async def astream(  # type: ignore[override]  # LangGraph's keywords; Runnable's `**kwargs: Any | None` would make each accept None
        self,
        input: dict[str, Any] | Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        subgraphs: bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async `stream`."""
        translator, request = self._run_request(
            input, config, context=context, stream_mode=stream_mode,
            interrupt_before=interrupt_before, interrupt_after=interrupt_after,
            subgraphs=subgraphs, headers=headers, params=params, version=version, kwargs=kwargs,
        )  # fmt: skip
        async for chunk in self._validate_client().runs.stream(**request):
            item = translator.feed(chunk.event, chunk.data)
            if item is not translator.SKIP:
                yield item

    @staticmethod
    def _final(last: Any, seen: bool, version: str) -> Any:
        """What invoke returns from the last `values` chunk."""
        if not seen:
            logger.warning("RemoteGraph: the remote run sent no values")
            return None
        if version == "v2":
            return GraphOutput(value=last["data"], interrupts=tuple(last.get("interrupts", ())))
        return last

    def invoke(
        self,
        input: dict[str, Any] | Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        headers: dict[str, str] | None = None,
        params: Any = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Any:
        """Run the graph on the server; its final state (v1; with `__interrupt__` when it
        paused) or a `GraphOutput` (v2)."""
        last, seen = None, False
        for last in self.stream(  # noqa: B007 - the last chunk is the result
            input, config, context=context, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, headers=headers, params=params,
            stream_mode="values", version=version, **kwargs,
        ):  # fmt: skip
            seen = True
        return self._final(last, seen, version)

    async def ainvoke(
        self,
        input: dict[str, Any] | Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        headers: dict[str, str] | None = None,
        params: Any = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Any:
        """Async `invoke`."""
        last, seen = None, False
        async for last in self.astream(  # noqa: B007 - the last chunk is the result
            input, config, context=context, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, headers=headers, params=params,
            stream_mode="values", version=version, **kwargs,
        ):  # fmt: skip
            seen = True
        return self._final(last, seen, version)

    # ---------------------------------------------------------------- v3 run streams
    def _reject_v3_unsupported(
        self,
        *,
        control: Any,
        transformers: Any,
        interrupt_before: Any,
        interrupt_after: Any,
        extra_kwargs: dict[str, Any],
    ) -> None:
        """Refuse what a v3 remote run cannot honour: the server owns the transformers
        and the run's control, and its v3 start path takes no interrupt_before/after."""
        for name, value in (
            ("control", control),
            ("transformers", transformers),
            ("interrupt_before", interrupt_before),
            ("interrupt_after", interrupt_after),
        ):
            if value:
                raise NotImplementedError(
                    f"RemoteGraph.stream_events(version='v3') does not support `{name}=`: the "
                    "server runs the graph and owns its stream. Use stream() (v1/v2) for "
                    "interrupt_before/after, or set them in the server's graph."
                )
        unknown = sorted(set(extra_kwargs) - _V3_SUPPORTED_KWARGS)
        if unknown:
            raise NotImplementedError(
                "RemoteGraph.stream_events(version='v3') does not support the keyword "
                f"arguments {unknown!r}; supported: {sorted(_V3_SUPPORTED_KWARGS)!r}."
            )

    def _v3_request(
        self, client: Any, input: Any, config: RunnableConfig | None, headers: Any, options: dict[str, Any]
    ) -> tuple[Any, dict[str, Any]]:
        """The SDK thread stream of a v3 run, and the run stream's other arguments."""
        from lgnb.pregel._remote_run_stream import wire_input

        wire_input(input)  # a Command it cannot send fails before any request
        sanitized = sanitize_config(self._merged(config))
        thread_id = sanitized.get(CONF, {}).pop("thread_id", None)
        sdk_thread = client.threads.stream(
            thread_id=thread_id, assistant_id=self.assistant_id, headers=self._headers(headers)
        )
        return sdk_thread, {"input": input, "config": sanitized, "metadata": options.get("metadata")}

    def stream_events(  # type: ignore[override]  # one signature for every version; Runnable overloads v1/v2 and v3
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        version: Literal["v1", "v2", "v3"] = "v2",
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        control: Any = None,
        transformers: Sequence[Any] | None = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> RemoteRunStream:
        """`version="v3"`: a run stream over a new run on the server (start it with
        `with ... as run:`). Older event versions are LangChain's callback events, which a
        remote run does not produce."""
        if version != "v3":
            raise NotImplementedError(
                f"RemoteGraph.stream_events(version={version!r}) is not implemented: use "
                "version='v3', or stream() for v1/v2 stream parts."
            )
        self._reject_v3_unsupported(
            control=control, transformers=transformers, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, extra_kwargs=kwargs,
        )  # fmt: skip
        client = self._validate_sync_client()
        sdk_thread, args = self._v3_request(client, input, config, headers, kwargs)
        return RemoteRunStream(sync_client=client, sdk_thread=sdk_thread, **args)

    async def astream_events(  # type: ignore[override]
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        version: Literal["v1", "v2", "v3"] = "v2",
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        control: Any = None,
        transformers: Sequence[Any] | None = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> AsyncRemoteRunStream:
        """`version="v3"`: an async run stream over a new run on the server
        (`async with await graph.astream_events(..., version="v3") as run:`)."""
        if version != "v3":
            raise NotImplementedError(
                f"RemoteGraph.astream_events(version={version!r}) is not implemented: use "
                "version='v3', or astream() for v1/v2 stream parts."
            )
        self._reject_v3_unsupported(
            control=control, transformers=transformers, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, extra_kwargs=kwargs,
        )  # fmt: skip
        client = self._validate_client()
        sdk_thread, args = self._v3_request(client, input, config, headers, kwargs)
        return AsyncRemoteRunStream(client=client, sdk_thread=sdk_thread, **args)

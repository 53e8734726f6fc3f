"""The built-in transformers of v3 run streams.

- one projection per stream mode, at the run's own level: `ValuesTransformer`
  (`run.values`), `UpdatesTransformer`, `CustomTransformer`, `CheckpointsTransformer`,
  `DebugTransformer`, `TasksTransformer`;
- `MessagesTransformer` (`run.messages`): one `ChatModelStream` per model call or per
  message a node returns;
- `LifecycleTransformer` (`run.lifecycle`) and `SubgraphTransformer` (`run.subgraphs`):
  subgraphs discovered from `tasks` events — started when a task first runs in a nested
  namespace, ended (completed / failed / interrupted) by the parent task's result.

"Own level" is the transformer's `scope`: `()` at the root, the caller's checkpoint
namespace when `stream_events` is called inside a node, the subgraph's namespace in a
subgraph handle. Values, messages, lifecycle and subgraphs are always registered; the
others on request (`compile(transformers=[...])` / `stream_events(transformers=[...])`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage
from typing_extensions import NotRequired, TypedDict

from lgnb.errors import GraphInterrupt
from lgnb.stream._event import ProtocolEvent
from lgnb.stream._transformer import StreamTransformer
from lgnb.stream.run_stream import AsyncSubgraphRunStream, SubgraphRunStream
from lgnb.stream.stream_channel import StreamChannel

if TYPE_CHECKING:
    from lgnb.stream._mux import StreamMux

__all__ = (
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
)

_log = logging.getLogger("lgnb.stream")

SubgraphStatus = Literal["started", "completed", "failed", "interrupted", "drained"]


class _ModeProjection(StreamTransformer):
    """The data of one stream mode, at the transformer's own level, as `run.<mode>`."""

    _native = True
    mode: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.mode and "required_stream_modes" not in cls.__dict__:
            cls.required_stream_modes = (cls.mode,)  # a projection needs its own mode

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._scope_list = list(scope)

    def init(self) -> dict[str, Any]:
        return {self.mode: self._log}

    def _own(self, event: ProtocolEvent) -> bool:
        return event["method"] == self.mode and event["params"]["namespace"] == self._scope_list

    def process(self, event: ProtocolEvent) -> bool:
        if self._own(event):
            self._log.push(event["params"]["data"])
        return True


class ValuesTransformer(_ModeProjection):
    """`run.values`: the state after each step, at the run's own level."""

    mode = "values"

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._latest: dict[str, Any] | None = None
        self._interrupted = False
        self._interrupts: list[Any] = []

    @property
    def error(self) -> BaseException | None:
        """The error that ended the run, or None."""
        return self._log._error

    def process(self, event: ProtocolEvent) -> bool:
        if self._own(event):
            params = event["params"]
            self._latest = params["data"]
            if interrupts := params.get("interrupts", ()):
                self._interrupted = True
                self._interrupts.extend(interrupts)
            self._log.push(params["data"])
        return True


class UpdatesTransformer(_ModeProjection):
    """`run.updates`: `{node: update}` per finished task, at the run's own level."""

    mode = "updates"


class CustomTransformer(_ModeProjection):
    """`run.custom`: what nodes wrote with `get_stream_writer()`, at the run's own level."""

    mode = "custom"


class CheckpointsTransformer(_ModeProjection):
    """`run.checkpoints`: each checkpoint saved (needs a checkpointer), own level."""

    mode = "checkpoints"


class DebugTransformer(_ModeProjection):
    """`run.debug`: the `debug` stream mode's events, at the run's own level."""

    mode = "debug"


class TasksTransformer(_ModeProjection):
    """`run.tasks`: task starts and results, at the run's own level."""

    mode = "tasks"


# ---------------------------------------------------------------------------- messages
class MessagesTransformer(StreamTransformer):
    """`run.messages`: one `ChatModelStream` per chat-model call at the run's own level.

    Model calls arrive as content-block protocol events (`message-start`, deltas,
    `message-finish`; a v3 run asks the model for those), routed to their stream by the
    call's `run_id`. A finished message a node returns without a streamed call is
    replayed as a complete stream. Tool results (`role == "tool"`, `ToolMessage`) and
    legacy `AIMessageChunk`s are not chat-token streams and are left out.
    """

    _native = True
    required_stream_modes = ("messages",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._by_run: dict[str, Any] = {}
        self._ignored_runs: set[str] = set()
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        self._scope_list = list(scope)

    def init(self) -> dict[str, Any]:
        return {"messages": self._log}

    def _bind_pump(self, fn: Callable[[], bool]) -> None:
        self._pump_fn = fn

    def _bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn = fn

    def _make_stream(self, *, namespace: list[str], node: str | None, message_id: str | None) -> Any:
        """A stream whose cursors drive this run's pump (async if the run is async)."""
        from langchain_core.language_models.chat_model_stream import (
            AsyncChatModelStream,
            ChatModelStream,
        )

        if self._apump_fn is not None:
            astream = AsyncChatModelStream(namespace=namespace, node=node, message_id=message_id)
            astream.set_arequest_more(self._apump_fn)
            return astream
        if self._pump_fn is not None:
            stream = ChatModelStream(namespace=namespace, node=node, message_id=message_id)
            stream.set_request_more(self._pump_fn)
            return stream
        return AsyncChatModelStream(namespace=namespace, node=node, message_id=message_id)

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "messages" or event["params"]["namespace"] != self._scope_list:
            return True
        payload, metadata = event["params"]["data"]
        node = metadata.get("langgraph_node") if metadata else None
        run_id = str(metadata.get("run_id", "")) if metadata else ""
        if isinstance(payload, dict) and "event" in payload:
            self._route_event(payload, run_id=run_id, node=node)
        elif isinstance(payload, BaseMessage) and not isinstance(payload, (AIMessageChunk, ToolMessage)):
            self._replay_message(payload, node=node)
        return True

    def _route_event(self, event: dict[str, Any], *, run_id: str, node: str | None) -> None:
        kind = event.get("event")
        if kind == "message-start":
            if event.get("role") == "tool":
                self._ignored_runs.add(run_id)
                return
            message_id = event.get("message_id")
            stream = self._make_stream(
                namespace=[], node=node, message_id=None if message_id is None else str(message_id)
            )
            self._by_run[run_id] = stream
            self._log.push(stream)
            stream.dispatch(event)
        elif run_id in self._ignored_runs:
            if kind == "message-finish":
                self._ignored_runs.discard(run_id)
        elif (stream := self._by_run.get(run_id)) is not None:
            stream.dispatch(event)
            if kind == "message-finish":
                del self._by_run[run_id]

    def _replay_message(self, message: BaseMessage, *, node: str | None) -> None:
        from langchain_core.language_models._compat_bridge import message_to_events

        stream = self._make_stream(namespace=[], node=node, message_id=message.id)
        for event in message_to_events(message, message_id=message.id):
            stream.dispatch(event)
        self._log.push(stream)

    def finalize(self) -> None:
        self._by_run.clear()
        self._ignored_runs.clear()

    def fail(self, err: BaseException) -> None:
        for stream in list(self._by_run.values()):
            stream.fail(err)
        self._by_run.clear()
        self._ignored_runs.clear()


# ---------------------------------------------------------------------------- subgraphs
class LifecyclePayload(TypedDict, total=False):
    """One `run.lifecycle` item (also logged as a `lifecycle` protocol event)."""

    event: SubgraphStatus
    namespace: list[str]
    graph_name: NotRequired[str]
    trigger_call_id: NotRequired[str]
    cause: NotRequired[dict[str, Any]]
    error: NotRequired[str]


def _split_segment(segment: str) -> tuple[str, str | None]:
    """`"node:task_id"` -> `("node", "task_id")`; a segment without `:` has no task id."""
    name, sep, task_id = segment.partition(":")
    return name, (task_id if sep else None)


def _status_of_error(err: BaseException) -> tuple[SubgraphStatus, str | None]:
    from lgnb import errors

    drained = getattr(errors, "GraphDrained", None)
    if drained is not None and isinstance(err, drained):
        return "drained", None
    if isinstance(err, GraphInterrupt):
        return "interrupted", None
    return "failed", str(err)


def _status_of_result(result: dict[str, Any]) -> tuple[SubgraphStatus, str | None]:
    """A task result's outcome; an interrupt wins over an error."""
    if result.get("interrupts"):
        return "interrupted", None
    if error := result.get("error"):
        return "failed", str(error)
    return "completed", None


def _tool_call_id_of(task_input: Any) -> str | None:
    """The tool call a task runs, from its input: a `tool_call_with_context` dict (one
    push task per call) or a list of tool-call dicts (batched)."""
    if isinstance(task_input, dict) and isinstance(task_input.get("tool_call"), dict):
        found = task_input["tool_call"].get("id")
        return found if isinstance(found, str) else None
    if isinstance(task_input, list):
        for call in task_input:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                return call["id"]
    return None


class _SubgraphDiscovery(StreamTransformer):
    """Finding subgraphs in `tasks` events, shared by the lifecycle and subgraph views.

    A namespace is *started* at its first task event (if `_should_track` says it is in
    this transformer's region) and *ended* by the result of the parent task that ran it
    (the segment's task id), or by the end of the run. A named agent (`lc_agent_name`
    in the task's metadata) is reported under that name, with the tool call that
    started it as its `cause`. `tasks` events are consumed: they are kept out of the
    main log.
    """

    required_stream_modes = ("tasks",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._seen: set[tuple[str, ...]] = set()
        self._open: dict[tuple[str, ...], str] = {}  # namespace -> parent task id
        self._lc_by_ns: dict[tuple[str, ...], str | None] = {}
        self._pending_tool_calls: dict[str, str] = {}  # task id -> tool call id
        self._pending_cause: dict[str, Any] | None = None

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        raise NotImplementedError

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None) -> None:
        raise NotImplementedError

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        raise NotImplementedError

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tasks":
            return True
        ns = tuple(event["params"]["namespace"])
        data = event["params"]["data"]
        if "result" in data:
            for child, status, error in self._pop_terminal_transitions(ns, data):
                self._on_terminal(child, status, error)
        else:
            self._note_task_start(ns, data)
        return False

    def _note_task_start(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        self._record_identity(ns, data)
        self._record_pending_tool_calls(data)
        self._handle_task_start(ns, data)

    def _record_identity(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        if ns not in self._lc_by_ns:
            self._lc_by_ns[ns] = (data.get("metadata") or {}).get("lc_agent_name")

    def _record_pending_tool_calls(self, data: dict[str, Any]) -> None:
        task_id = data.get("id")
        if isinstance(task_id, str) and (call_id := _tool_call_id_of(data.get("input"))):
            self._pending_tool_calls[task_id] = call_id

    def _handle_task_start(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        if ns in self._seen or not self._should_track(ns):
            return
        self._seen.add(ns)
        name, trigger = _split_segment(ns[-1])
        agent = (data.get("metadata") or {}).get("lc_agent_name")
        cause = None
        if agent is not None and trigger is not None:
            if call_id := self._pending_tool_calls.get(trigger):
                cause = {"type": "toolCall", "tool_call_id": str(call_id)}
        self._pending_cause = cause
        self._on_started(ns, agent if agent is not None else (name or None), trigger)
        if trigger is not None:
            self._open[ns] = trigger

    def _pop_terminal_transitions(
        self, ns: tuple[str, ...], result: dict[str, Any]
    ) -> list[tuple[tuple[str, ...], SubgraphStatus, str | None]]:
        """The open children this task result ends (removed from the open set)."""
        task_id = result.get("id")
        if not task_id:
            return []
        ended = []
        for child, parent_task in list(self._open.items()):
            if child[:-1] == ns and parent_task == task_id:
                ended.append((child, *_status_of_result(result)))
                del self._open[child]
        return ended

    def finalize(self) -> None:
        for ns in list(self._open):
            self._on_terminal(ns, "completed", None)
        self._open.clear()

    def fail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        for ns in list(self._open):
            self._on_terminal(ns, status, error)
        self._open.clear()


class LifecycleTransformer(_SubgraphDiscovery):
    """`run.lifecycle`: started / ended events of subgraphs at every depth below the
    run's level, also logged as `lifecycle` protocol events."""

    _native = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._channel: StreamChannel[LifecyclePayload] = StreamChannel("lifecycle")

    def init(self) -> dict[str, Any]:
        return {"lifecycle": self._channel}

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) > depth and ns[:depth] == self.scope

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None) -> None:
        if trigger_call_id is None:
            return  # no parent task to end it: only the end of the run closes it
        payload: LifecyclePayload = {"event": "started", "namespace": list(ns)}
        if graph_name:
            payload["graph_name"] = graph_name
        payload["trigger_call_id"] = trigger_call_id
        if self._pending_cause is not None:
            payload["cause"] = self._pending_cause
        self._channel.push(payload)

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        payload: LifecyclePayload = {"event": status, "namespace": list(ns)}
        if error is not None:
            payload["error"] = error
        self._channel.push(payload)


class SubgraphTransformer(_SubgraphDiscovery):
    """`run.subgraphs`: a `SubgraphRunStream` per direct child subgraph, with its own
    projections (its events are forwarded into a child mux of the same transformers;
    grandchildren appear on the child handle's `subgraphs`)."""

    _native = True
    supports_sync = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._handles: dict[tuple[str, ...], Any] = {}
        self._mux: StreamMux | None = None

    def init(self) -> dict[str, Any]:
        return {"subgraphs": self._log}

    def _on_register(self, mux: Any) -> None:
        self._mux = mux

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) == depth + 1 and ns[:depth] == self.scope

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None) -> None:
        if self._mux is None or self._mux._factories is None:
            return
        child = self._mux._make_child(ns)
        cls = AsyncSubgraphRunStream if child.is_async else SubgraphRunStream
        handle = cls(child, path=ns, graph_name=graph_name, trigger_call_id=trigger_call_id)
        self._handles[ns] = handle
        self._log.push(handle)

    @staticmethod
    def _mark_terminal(handle: Any, status: SubgraphStatus, error: str | None) -> bool:
        """Record how `handle` ended; False if it already had."""
        if handle._seen_terminal:
            return False
        handle.status = status
        if error is not None and handle.error is None:
            handle.error = error
        handle._seen_terminal = True
        return True

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        handle = self._handles.get(ns)
        if handle is None or not self._mark_terminal(handle, status, error):
            return
        if not handle._mux._events._closed:
            if status == "failed":
                handle._mux.fail(RuntimeError(error or "Subgraph failed"))
            else:
                handle._mux.close()

    async def _aon_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        handle = self._handles.get(ns)
        if handle is None or not self._mark_terminal(handle, status, error):
            return
        if not handle._mux._events._closed:
            if status == "failed":
                await handle._mux.afail(RuntimeError(error or "Subgraph failed"))
            else:
                await handle._mux.aclose()

    def _handle_for_event(self, event: ProtocolEvent) -> Any:
        ns = tuple(event["params"]["namespace"])
        depth = len(self.scope)
        if len(ns) <= depth:
            return None
        handle = self._handles.get(ns[: depth + 1])
        if handle is None or handle._mux._events._closed:
            return None
        return handle

    def process(self, event: ProtocolEvent) -> bool:
        keep = super().process(event)  # a started handle exists before forwarding
        if (handle := self._handle_for_event(event)) is not None:
            handle._observe_event(event)
            handle._mux.push(event)
        return keep

    async def aprocess(self, event: ProtocolEvent) -> bool:
        keep = True
        if event["method"] == "tasks":
            keep = False
            ns = tuple(event["params"]["namespace"])
            data = event["params"]["data"]
            if "result" in data:
                for child, status, error in self._pop_terminal_transitions(ns, data):
                    await self._aon_terminal(child, status, error)
            else:
                self._note_task_start(ns, data)
        if (handle := self._handle_for_event(event)) is not None:
            handle._observe_event(event)
            await handle._mux.apush(event)
        return keep

    def finalize(self) -> None:
        first: BaseException | None = None
        for ns in list(self._open):
            try:
                self._on_terminal(ns, "completed", None)
            except BaseException as exc:  # noqa: BLE001 - re-raised after the sweep
                first = first or exc
        self._open.clear()
        for handle in self._handles.values():
            if self._mark_terminal(handle, "completed", None) and not handle._mux._events._closed:
                try:
                    handle._mux.close()
                except BaseException as exc:  # noqa: BLE001 - re-raised after the sweep
                    first = first or exc
        if first is not None:
            raise first

    async def afinalize(self) -> None:
        first: BaseException | None = None
        for ns in list(self._open):
            try:
                await self._aon_terminal(ns, "completed", None)
            except BaseException as exc:  # noqa: BLE001 - re-raised after the sweep
                first = first or exc
        self._open.clear()
        for handle in self._handles.values():
            if self._mark_terminal(handle, "completed", None) and not handle._mux._events._closed:
                try:
                    await handle._mux.aclose()
                except BaseException as exc:  # noqa: BLE001 - re-raised after the sweep
                    first = first or exc
        if first is not None:
            raise first

    def fail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        self._open.clear()
        for handle in self._handles.values():
            self._mark_terminal(handle, status, error)
            if not handle._mux._events._closed:
                try:
                    handle._mux.fail(err)
                except Exception:  # noqa: BLE001 - logged; the run's error is reported
                    _log.warning("could not fail the subgraph stream at %s", handle.path, exc_info=True)

    async def afail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        self._open.clear()
        for handle in self._handles.values():
            self._mark_terminal(handle, status, error)
            if not handle._mux._events._closed:
                try:
                    await handle._mux.afail(err)
                except Exception:  # noqa: BLE001 - logged; the run's error is reported
                    _log.warning("could not fail the subgraph stream at %s", handle.path, exc_info=True)

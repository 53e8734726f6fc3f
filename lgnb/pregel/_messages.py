"""The `messages` stream: chat-model chunks and node-returned messages, as LangGraph emits them.

The engine never calls model services. When `messages` is requested it puts a
`StreamMessagesHandler` in the callbacks of every task's config; a LangChain chat model
called inside a node inherits it through LangChain's context variable (even on
`model.invoke()` without a config), switches to `_stream` because a streaming handler is
present, and every `ChatGenerationChunk` becomes a `(namespace, "messages", (chunk,
metadata))` event. Node start/end are reported by the engine directly (no callback
manager per node): input messages are marked seen, messages a node returns without a
model call are emitted once, and a model's final message is never emitted twice. The
nodes of a LangGraph-built graph that a node's code invokes (LangGraph's own loop runs
those) are reported through the `on_chain_start` / `on_chain_end` callbacks instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, GenerationChunk, LLMResult

from lgnb._internal.constants import NS_SEP, PUSH, TAG_HIDDEN, TAG_NOSTREAM
from lgnb._internal.context import current_task
from lgnb._internal.ids import new_uuid4
from lgnb._internal.pydantic_loaded import is_model
from lgnb.channels.messages import MessagesChannel
from lgnb.types import Command

try:
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError:  # pragma: no cover - older langchain-core
    _StreamingCallbackHandler = object  # type: ignore[assignment,misc]
try:
    from langchain_core.tracers._streaming import _V2StreamingCallbackHandler
except ImportError:  # pragma: no cover - langchain-core without content-block streaming
    _V2StreamingCallbackHandler = object  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from lgnb.pregel._run import StreamSink

__all__ = (
    "StreamMessagesHandler",
    "StreamMessagesHandlerV2",
    "graph_namespace",
    "push_message",
    "without_v2_handlers",
)

Meta = tuple[tuple[str, ...], dict[str, Any]]

_NO_CALL: tuple[Any, Meta] = (None, ((), {}))
"""`StreamMessagesHandler._last` when no call streamed yet: None is no call's run id."""


def graph_namespace(metadata: dict[str, Any]) -> tuple[str, ...]:
    """The namespace of the graph a task runs in: its checkpoint ns minus its own segment,
    and minus one more per enclosing `@task` call (a call runs in its caller's graph but
    nests its segment under the caller's; its path is `(PUSH, caller's path, i, True)`)."""
    ns = tuple(str(metadata["langgraph_checkpoint_ns"]).split(NS_SEP))
    path = metadata.get("langgraph_path", ())
    drop = 1
    while len(path) == 4 and path[0] == PUSH and path[-1] is True:
        drop += 1
        path = path[1]
    return ns[:-drop]


def _unscanned(loop: Any, state: dict[str, Any]) -> Any:
    """The keys of a node's input state whose values may hold messages not marked seen
    yet: all of them for the first node of a (sub)graph run, then only those written since
    a node last read them. Within a step the state does not change, and a key no step
    wrote holds what an earlier node's input already showed: so a wide state is not
    scanned whole before every node, and the marks are the ones LangGraph makes."""
    track = loop.__dict__.get("_messages_track")
    if track is None:  # [step, keys not scanned since they were written (None: all)]
        track = loop._messages_track = [loop.step, None]
    elif track[0] != loop.step:
        track[0] = loop.step
        written = loop.updated_channels
        if written is None:
            track[1] = None
        elif track[1] is not None:
            track[1] |= written
    stale = track[1]
    if stale is None:
        track[1] = set(loop.channels).difference(state)
        return state.keys()
    keys = stale.intersection(state)
    stale.difference_update(keys)
    return keys


def _unmarked(loop: Any, state: dict[str, Any], keys: Any) -> list[Any]:
    """The values under `keys` of a node's input `state` that may hold messages not
    marked yet. An `add_messages` key's list is cut to the messages it gained since a node
    of this loop last had them marked: a step of a long conversation marks its new
    messages, not the whole history again (the ids before them are the ones marked then,
    `MessagesChannel.lineage`). What was marked is kept on the loop, as `_unscanned`'s
    record is: one run, one `messages` handler."""
    marked = loop.__dict__.get("_messages_marked")
    if marked is None:  # key -> (its channel, the channel's lineage, messages marked)
        marked = loop._messages_marked = {}
    channels = loop.channels
    out = []
    for k in keys:
        value = state[k]
        ch = channels.get(k)
        if ch.__class__ is MessagesChannel and value is ch.value and type(value) is list:
            lineage, n = ch.lineage, len(value)
            done = marked.get(k)
            marked[k] = (ch, lineage, n)
            if done is not None and done[0] is ch and done[1] is lineage and done[2] <= n:
                value = value[done[2]:]
        out.append(value)
    return out


def _user_tags(tags: Sequence[str] | None) -> list[str] | None:
    if not tags:
        return None
    kept = [t for t in tags if not t.startswith("seq:step")]
    return kept or None


def _state_values(obj: Any) -> Sequence[Any]:
    if isinstance(obj, dict):
        return list(obj.values())
    if is_model(obj):
        return [getattr(obj, k) for k in type(obj).model_fields]
    if is_dataclass(obj) and not isinstance(obj, type):
        return [getattr(obj, f.name) for f in fields(obj)]
    return ()


_IS_MESSAGE: dict[type, bool] = {}


def _is_message(value: Any) -> bool:
    """isinstance(value, BaseMessage), memoized per type (ABC checks are slow)."""
    t = type(value)
    known = _IS_MESSAGE.get(t)
    if known is None:
        known = _IS_MESSAGE[t] = isinstance(value, BaseMessage)
    return known


def _holds_messages(items: Sequence[Any]) -> bool:
    """Whether any of `items` is a message. Its types are collected in C (`set(map(type,
    ...))`), so a long list of other things (a log, documents, results that a reducer
    appends to every step) costs a few nanoseconds per item, not a Python loop."""
    known = _IS_MESSAGE
    for t in set(map(type, items)):
        kind = known.get(t)
        if kind is None:
            kind = known[t] = issubclass(t, BaseMessage)
        if kind:
            return True
    return False


def _is_command(value: Any) -> bool:
    """An lgnb `Command`, or LangGraph's (a LangGraph-built graph's node returns those)."""
    return isinstance(value, Command) or (
        type(value).__name__ == "Command" and type(value).__module__ == "langgraph.types")


def _collect(response: Any, found: list[BaseMessage]) -> None:
    """The messages a node's update carries: itself, a list of them, or state values."""
    if response is None:
        return
    known = _IS_MESSAGE
    if isinstance(response, dict):
        values: Any = response.values()
    elif isinstance(response, (list, tuple)):
        for v in response:
            if known.get(type(v)) is not False and _is_message(v):
                found.append(v)
        return
    elif _is_message(response):
        found.append(response)
        return
    else:
        values = _state_values(response)
    for value in values:
        kind = known.get(type(value))
        if kind is False and not isinstance(value, (list, tuple)):
            continue
        if kind or _is_message(value):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            for v in value:
                if known.get(type(v)) is not False and _is_message(v):
                    found.append(v)


class StreamMessagesHandler(BaseCallbackHandler, _StreamingCallbackHandler):
    """Turns chat-model callbacks and node outputs into `messages` stream events."""

    run_inline = True
    emits_tool_messages = True

    def __init__(self, sink: StreamSink, *, subgraphs: bool, parent_ns: tuple[str, ...] = ()) -> None:
        self.sink = sink
        self.subgraphs = subgraphs
        self.parent_ns = parent_ns
        self.metadata: dict[UUID, Meta] = {}
        self.seen: set[Any] = set()
        # node runs reported by callbacks only: those of a LangGraph-built graph that a
        # node's code invokes (langgraph-supervisor's `agent.invoke`) -> (meta, input)
        self.chains: dict[UUID, tuple[Meta, Any]] = {}
        # (run_id, meta) of the call that streamed the last token: the next token is
        # almost always from the same call, found by identity (a UUID's hash is a
        # Python-level method, run per token otherwise); one attribute, so threads
        # streaming at once never pair one call's id with another's metadata
        self._last: tuple[Any, Meta] = _NO_CALL

    def _wanted(self, ns: tuple[str, ...]) -> bool:
        return self.subgraphs or not ns or ns == self.parent_ns

    def _emit(self, meta: Meta, message: BaseMessage, *, dedupe: bool = False) -> None:
        if dedupe and message.id in self.seen:
            return
        if message.id is None:
            message.id = new_uuid4()
        self.seen.add(message.id)
        self.sink.put((meta[0], "messages", (message, meta[1])))

    # ---- engine hooks (called by the task runner, once per task)
    def node_start(self, ctx: Any) -> Any:
        """A node starts: None when its namespace is not streamed, else a token for
        `node_end` (metadata is built only if the node returns messages).

        The messages in the node's own input are marked seen, as LangGraph marks them when
        the node's run starts: those directly under a key (a field of a pydantic or
        dataclass state, or an argument of a `@task` call), or in a list there; a node that
        returns one of them does not stream it again. Nothing else is:
        a message a node wrote without streaming it is news to the next node whose input
        does not hold it."""
        if self.chains and ctx.node_run is not None:  # an lgnb node: reported here, not there
            self.chains.pop(ctx.node_run.run_id, None)
        loop = ctx.loop
        if not self._wanted(loop.ns_tuple):
            return None
        value = ctx.task.input
        explode = getattr(ctx.task.node.bound, "bound_arguments", None)
        if explode is not None:  # a `@task` call: its arguments by parameter name
            self._mark(list((explode(value) or {}).values()))
        elif isinstance(value, dict):
            if ctx.task.path[0] == PUSH:  # a Send's argument: not the state
                self._mark(list(value.values()))
            else:
                self._mark(_unmarked(loop, value, _unscanned(loop, value)))
        else:  # a pydantic or dataclass state: its fields
            self._mark(_state_values(value))
        return ctx

    def _mark(self, values: Sequence[Any]) -> None:
        seen = self.seen
        for item in values:
            if isinstance(item, BaseMessage):
                if item.id is not None:
                    seen.add(item.id)
            elif isinstance(item, Sequence) and not isinstance(item, str) and _holds_messages(item):
                seen.update([m.id for m in item if isinstance(m, BaseMessage) and m.id is not None])

    def node_end(self, ctx: Any, output: Any) -> None:
        """A node returned: emit the messages in its update that no model streamed."""
        found = self._returned(output)
        if not found:
            return
        meta = dict(ctx.config["metadata"])
        meta.setdefault("ls_integration", "langgraph")
        pair = (ctx.loop.ns_tuple, meta)
        for message in found:
            self._emit(pair, message, dedupe=True)

    def _returned(self, output: Any) -> list[BaseMessage]:
        """The messages in a node's return value (an update, a `Command` of lgnb's or
        LangGraph's, a list of them)."""
        found: list[BaseMessage] = []
        if isinstance(output, dict):
            _collect(output, found)
        elif _is_command(output):
            _collect(output.update, found)
        elif isinstance(output, (list, tuple)) and any(_is_command(v) for v in output):
            for value in output:
                _collect(value.update if _is_command(value) else value, found)
        else:
            _collect(output, found)
        if not self.emits_tool_messages:
            found = [m for m in found if not isinstance(m, ToolMessage)]
        return found

    # ---- node runs of a LangGraph-built graph invoked in a node: LangGraph's own loop
    # runs them and reports them through callbacks alone (lgnb's nodes were reported by
    # `node_start`, which drops their entry, and `node_end`)
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if (
            metadata
            and "langgraph_checkpoint_ns" in metadata
            and kwargs.get("name") == metadata.get("langgraph_node")
            and (not tags or TAG_HIDDEN not in tags)
        ):
            ns = graph_namespace(metadata)
            if self._wanted(ns):
                self.chains[run_id] = ((ns, metadata), inputs)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        chain = self.chains.pop(run_id, None) if self.chains else None
        if chain is None:
            return
        meta, inputs = chain
        self._mark(_state_values(inputs))  # as LangGraph marks a node's input
        for message in self._returned(outputs):
            self._emit(meta, message, dedupe=True)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        if self.chains:
            self.chains.pop(run_id, None)

    # ---- LangChain callbacks
    def tap_output_iter(self, run_id: UUID, output: Any) -> Any:
        return output

    def tap_output_aiter(self, run_id: UUID, output: Any) -> Any:
        return output

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if metadata and "langgraph_checkpoint_ns" in metadata and (
            not tags or TAG_NOSTREAM not in tags
        ):
            ns = graph_namespace(metadata)
            if not self._wanted(ns):
                return
            if (user_tags := _user_tags(tags)) is not None:
                metadata["tags"] = user_tags
            self.metadata[run_id] = (ns, metadata)

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        **kwargs: Any,
    ) -> Any:
        if not isinstance(chunk, ChatGenerationChunk):
            return
        last = self._last
        if last[0] is run_id:
            meta = last[1]
        else:
            found = self.metadata.get(run_id)
            if found is None:
                return
            self._last = (run_id, found)
            meta = found
        # `_emit` without dedupe, inline: this runs once per token
        message = chunk.message
        mid = message.id
        if mid is None:
            mid = message.id = new_uuid4()
        self.seen.add(mid)
        self.sink.put((meta[0], "messages", (message, meta[1])))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> Any:
        self._forget(run_id)
        meta = self.metadata.pop(run_id, None)
        if meta is not None and response.generations and response.generations[0]:
            gen = response.generations[0][0]
            if isinstance(gen, ChatGeneration):
                self._emit(meta, gen.message, dedupe=True)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        self._forget(run_id)
        self.metadata.pop(run_id, None)

    def _forget(self, run_id: UUID) -> None:
        if self._last[0] is run_id:
            self._last = _NO_CALL


class StreamMessagesHandlerV2(StreamMessagesHandler, _V2StreamingCallbackHandler):
    """The `messages` handler of v3 run streams: content-block events, not chunks.

    Being a `_V2StreamingCallbackHandler` makes a chat model's `invoke` report its
    output as protocol events (`message-start`, `content-block-*`, `message-finish`)
    through `on_stream_event`; each becomes a `messages` event `(event, metadata)` with
    the call's `run_id` in the metadata, which `MessagesTransformer` uses to route it.
    A message a node returns is still emitted whole, unless a model already streamed it;
    tool results are not (they are state and `tools` events, not chat tokens).
    """

    emits_tool_messages = False

    def __init__(self, sink: StreamSink, *, subgraphs: bool, parent_ns: tuple[str, ...] = ()) -> None:
        super().__init__(sink, subgraphs=subgraphs, parent_ns=parent_ns)
        self.streamed: set[UUID] = set()

    def on_llm_new_token(
        self, token: str | list[str | dict[str, Any]], *, chunk: Any = None, run_id: UUID, **kwargs: Any
    ) -> Any:
        """Ignored: a model streamed with `.stream()` still reports v1 chunks, which
        have no place on a content-block stream."""

    def on_stream_event(self, event: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        meta = self.metadata.get(run_id)
        if meta is None:
            return
        if event.get("event") == "message-start":
            self.streamed.add(run_id)
            if message_id := event.get("message_id"):
                self.seen.add(message_id)  # the node returning it is not news
        self.sink.put((meta[0], "messages", (event, {**meta[1], "run_id": str(run_id)})))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> Any:
        if run_id in self.streamed:
            self.streamed.discard(run_id)
            self.metadata.pop(run_id, None)
            if response.generations and response.generations[0]:
                gen = response.generations[0][0]
                if isinstance(gen, ChatGeneration):
                    if gen.message.id is None:
                        gen.message.id = new_uuid4()
                    self.seen.add(gen.message.id)
            return
        super().on_llm_end(response, run_id=run_id, **kwargs)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        self.streamed.discard(run_id)
        super().on_llm_error(error, run_id=run_id, **kwargs)


def without_v2_handlers(callbacks: Any) -> Any:
    """`callbacks` (a list or a CallbackManager) minus content-block messages handlers.

    A v1 `stream(stream_mode="messages")` inside a node of a v3 run must see chunks: an
    inherited `StreamMessagesHandlerV2` would make the model report content-block
    events instead. Other handlers (an outer v1 handler with `subgraphs`) stay.
    """
    return _without(callbacks, lambda h: isinstance(h, StreamMessagesHandlerV2))


def streams_only_its_graph(handler: Any) -> bool:
    """A `messages` / `tools` handler of a stream without `subgraphs`."""
    from lgnb.pregel._tools import StreamToolCallHandler

    return isinstance(handler, (StreamMessagesHandler, StreamToolCallHandler)) and not handler.subgraphs


def without_own_graph_handlers(callbacks: Any) -> Any:
    """`callbacks` minus the handlers of streams without `subgraphs`: what a graph invoked
    in a node on a thread of its own inherits, as LangGraph's does. Its namespace starts
    at the root, so those handlers would take its events for their own graph's."""
    return _without(callbacks, streams_only_its_graph)


def _without(callbacks: Any, drop: Any) -> Any:
    """`callbacks` (a list or a CallbackManager, unchanged when nothing is dropped)
    without the handlers `drop` selects."""
    if callbacks is None:
        return None
    if isinstance(callbacks, list):
        kept = [h for h in callbacks if not drop(h)]
        return kept if len(kept) != len(callbacks) else callbacks
    if not any(drop(h) for h in (*callbacks.handlers, *callbacks.inheritable_handlers)):
        return callbacks
    manager = callbacks.copy()
    manager.handlers = [h for h in manager.handlers if not drop(h)]
    manager.inheritable_handlers = [h for h in manager.inheritable_handlers if not drop(h)]
    return manager


def push_message(message: Any, *, state_key: str | None = "messages") -> BaseMessage:
    """Emit a message on the `messages` stream from inside a node (and write it to state).

    The message needs an id. With `state_key=None` it is only streamed.
    """
    from langchain_core.messages import convert_to_messages

    ctx = current_task()
    msg = next(iter(convert_to_messages([message])))
    if msg.id is None:
        raise ValueError("Message ID is required: push_message(AIMessage(..., id='...'))")
    # every stream that takes it: this run's, and those of the runs whose nodes
    # stream this graph (an outer `stream(..., subgraphs=True)`)
    run: Any = ctx.loop.run
    seen: set[int] = set()
    while run is not None:
        handler = run.messages_handler
        if handler is not None and id(handler) not in seen:
            seen.add(id(handler))
            metadata = ctx.config["metadata"]
            ns = graph_namespace(metadata)
            if handler._wanted(ns):
                handler._emit((ns, metadata), msg, dedupe=False)
        run = getattr(run, "parent", None)
    if state_key:
        ctx.task.writes.append((state_key, msg))
    return msg

"""The one place where a server's JSON shapes become the objects the views read.

A `RemoteGraph` speaks the graph protocol, but its payloads come off the wire: messages
arrive as dicts (``{"type": "AIMessageChunk", "content": ...}``), `__interrupt__` entries
as ``{"value", "id"}`` dicts, snapshot values hold message dicts. The views (run, history,
state panel, forms) read LangChain message objects and `Interrupt`s, as a local graph
yields them. `for_views(graph)` wraps a remote graph in `ViewEdge`, which converts every
stream chunk and snapshot once, here, so no view needs a second code path. A local graph
passes through unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict

from lgnb._internal.constants import INTERRUPT
from lgnb.remote._errors import server_error
from lgnb.types import Interrupt, StateSnapshot

__all__ = ("ViewEdge", "for_views", "is_remote", "objectify", "url_of")

_MESSAGE_TYPES = frozenset({
    "human", "ai", "tool", "system", "function", "chat", "remove",
    "HumanMessageChunk", "AIMessageChunk", "ToolMessageChunk", "SystemMessageChunk",
    "FunctionMessageChunk", "ChatMessageChunk",
})  # fmt: skip


def is_remote(graph: Any) -> bool:
    """A graph whose runs live on a LangGraph server (lgnb's or LangGraph's RemoteGraph,
    told by its `assistant_id`), or one already wrapped by `for_views`."""
    return isinstance(graph, ViewEdge) or getattr(graph, "assistant_id", None) is not None


def url_of(graph: Any) -> str | None:
    """The base URL a RemoteGraph's SDK client talks to (None when it has no client)."""
    for name in ("sync_client", "client"):
        http = getattr(getattr(graph, name, None), "http", None)
        base = getattr(getattr(http, "client", None), "base_url", None)
        if base is not None:
            return str(base).rstrip("/")
    return None


def _message(value: Mapping[str, Any]) -> BaseMessage | None:
    kind = value.get("type")
    if kind not in _MESSAGE_TYPES or "content" not in value:
        return None
    try:
        (msg,) = messages_from_dict([{"type": kind, "data": dict(value)}])
    except Exception:  # noqa: BLE001 - an odd dict stays a dict (shown as data)
        return None
    return msg


def objectify(value: Any) -> Any:
    """`value` with message dicts turned into LangChain messages and `__interrupt__`
    entries into `Interrupt`s, recursively through dicts, lists and tuples."""
    if isinstance(value, Mapping):
        msg = _message(value)
        if msg is not None:
            return msg
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if key == INTERRUPT and isinstance(item, (list, tuple)):
                out[key] = tuple(_interrupt(i) for i in item)
            else:
                out[key] = objectify(item)
        return out
    if isinstance(value, list):
        return [objectify(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(objectify(v) for v in value)
    return value


def _interrupt(item: Any) -> Any:
    if isinstance(item, Mapping) and "value" in item:
        return Interrupt(value=objectify(item["value"]), id=str(item.get("id") or "placeholder-id"))
    return item


def _chunk(chunk: Any) -> Any:
    """One stream chunk (v1 tuple or v2 dict) with its payload objectified."""
    if isinstance(chunk, tuple) and len(chunk) == 3:
        ns, mode, data = chunk
        return ns, mode, _payload(mode, data)
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], str):
        return chunk[0], _payload(chunk[0], chunk[1])
    if isinstance(chunk, dict) and "type" in chunk and "data" in chunk:
        return {**chunk, "data": _payload(chunk["type"], chunk["data"])}
    return chunk


def _payload(mode: str, data: Any) -> Any:
    if mode == "messages" and isinstance(data, (list, tuple)) and len(data) == 2:
        msg, meta = data
        return objectify(msg), meta
    if mode in ("updates", "values", "custom"):
        return objectify(data)
    if mode == "tasks" and isinstance(data, Mapping):
        # task records carry a server-only `metadata` key; results/inputs hold messages
        return {k: objectify(v) for k, v in data.items() if k != "metadata"}
    return data


def _snapshot(snap: Any) -> Any:
    if not isinstance(snap, StateSnapshot):
        return snap
    return snap._replace(values=objectify(snap.values),
                         interrupts=tuple(Interrupt(value=objectify(i.value), id=i.id) for i in snap.interrupts))


def _run_options(multitask: str | None, config: Any, kwargs: dict[str, Any]) -> None:
    """The server-run options the views mean: a busy thread treated as lgnb.run's
    `multitask` says (the server's default would queue the run behind the other one,
    silently), and the checkpoint a run starts from."""
    configurable = (config or {}).get("configurable") or {}
    if multitask is not None and configurable.get("thread_id") and "multitask_strategy" not in kwargs:
        kwargs["multitask_strategy"] = multitask
    # a run from a checkpoint (a replay, a run on a fork): RemoteGraph sends no checkpoint
    # of the caller's config (as LangGraph's), so name it to the server's run explicitly
    if configurable.get("thread_id") and configurable.get("checkpoint_id") and "checkpoint_id" not in kwargs:
        kwargs["checkpoint_id"] = configurable["checkpoint_id"]


class ViewEdge:
    """A remote graph as the views see it: every attribute is the graph's own, but
    `stream`/`astream` chunks and `get_state`/`get_state_history` snapshots come back
    with LangChain messages and `Interrupt`s instead of wire dicts."""

    def __init__(self, graph: Any) -> None:
        self.remote = graph

    def __getattr__(self, name: str) -> Any:
        return getattr(self.remote, name)

    @property
    def url(self) -> str | None:
        """The server's base URL, as the graph's client knows it."""
        return url_of(self.remote)

    def _explained(self, exc: BaseException, config: Any) -> BaseException | None:
        thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
        return server_error(exc, url=self.url, thread_id=thread_id)

    def stream(self, input: Any, config: Any = None, *, multitask: str | None = None,
               **kwargs: Any) -> Iterator[Any]:
        """The remote run's chunks, objectified. `multitask` (lgnb's "reject", "enqueue",
        "interrupt") becomes the server's `multitask_strategy` for a run on a thread."""
        _run_options(multitask, config, kwargs)
        try:
            for chunk in self.remote.stream(input, config, **kwargs):
                yield _chunk(chunk)
        except Exception as exc:
            explained = self._explained(exc, config)
            if explained is None:
                raise
            raise explained from exc

    async def astream(self, input: Any, config: Any = None, *, multitask: str | None = None,
                      **kwargs: Any) -> AsyncIterator[Any]:
        _run_options(multitask, config, kwargs)
        try:
            async for chunk in self.remote.astream(input, config, **kwargs):
                yield _chunk(chunk)
        except Exception as exc:
            explained = self._explained(exc, config)
            if explained is None:
                raise
            raise explained from exc

    def get_state(self, config: Any, **kwargs: Any) -> Any:
        return _snapshot(self.remote.get_state(config, **kwargs))

    def thread_step(self, config: Any, input: Any) -> Iterator[Any]:
        """The chunk that tells a run view where the server thread of `config` stands before
        a run with `input` starts on it (`THREAD_STEP`): a server's stream carries no
        checkpoints to number steps by. Nothing for a thread the server does not have yet
        (it answers 404) or one with no checkpoint: the view then counts from the start."""
        try:
            snapshot = self.remote.get_state(config)
            latest = self.remote.get_state(_unaddressed(config)) if _addressed(config) else snapshot
        except Exception:  # noqa: BLE001 - a thread not made yet; a dead server fails the run itself next
            return
        yield from _thread_step(snapshot, latest, config, input)

    async def athread_step(self, config: Any, input: Any) -> AsyncIterator[Any]:
        """`thread_step` for a view that drives `astream`."""
        try:
            snapshot = await self.remote.aget_state(config)
            latest = await self.remote.aget_state(_unaddressed(config)) if _addressed(config) else snapshot
        except Exception:  # noqa: BLE001 - as in thread_step
            return
        for chunk in _thread_step(snapshot, latest, config, input):
            yield chunk

    def get_state_history(self, config: Any, **kwargs: Any) -> Iterator[Any]:
        for snap in self.remote.get_state_history(config, **kwargs):
            yield _snapshot(snap)

    async def aget_state_history(self, config: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async for snap in self.remote.aget_state_history(config, **kwargs):
            yield _snapshot(snap)

    def __repr__(self) -> str:
        return f"ViewEdge({self.remote!r})"


def _addressed(config: Any) -> bool:
    return bool(((config or {}).get("configurable") or {}).get("checkpoint_id"))


def _unaddressed(config: Any) -> dict[str, Any]:
    configurable = {k: v for k, v in (config.get("configurable") or {}).items() if k != "checkpoint_id"}
    return {**config, "configurable": configurable}


def _checkpoint_id(snapshot: Any) -> Any:
    return ((getattr(snapshot, "config", None) or {}).get("configurable") or {}).get("checkpoint_id")


def _thread_step(snapshot: Any, latest: Any, config: Any, input: Any) -> Iterator[Any]:
    """`THREAD_STEP` for a run with `input` on the checkpoint `snapshot` (the thread's
    `latest`). A run that goes on from an addressed checkpoint without answering a question
    (a replay) first saves a copy of it one step on (source "fork"), as LangGraph 1.2 does,
    unless that checkpoint is itself an edit (an update or fork) the thread has not moved
    past."""
    from lgnb.widgets._stream import THREAD_STEP

    step = (getattr(snapshot, "metadata", None) or {}).get("step")
    if not isinstance(step, int) or isinstance(step, bool):
        return
    command = type(input).__name__ == "Command"
    if input is not None and not command:
        yield (), THREAD_STEP, {"step": step, "input": True}
        return
    answering = command and getattr(input, "resume", None) is not None
    if _addressed(config) and not answering:
        edit = (snapshot.metadata or {}).get("source") in ("update", "fork")
        if not edit or _checkpoint_id(snapshot) != _checkpoint_id(latest):
            step += 1  # the fork checkpoint
    yield (), THREAD_STEP, {"step": step, "input": False}


def for_views(graph: Any) -> Any:
    """`graph` as the views read it: a remote graph wrapped in `ViewEdge`, anything else
    (a local lgnb or LangGraph graph, an already wrapped one) unchanged."""
    if isinstance(graph, ViewEdge) or getattr(graph, "assistant_id", None) is None:
        return graph
    return ViewEdge(graph)

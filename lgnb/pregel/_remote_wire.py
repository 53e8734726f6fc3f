"""What a `RemoteGraph` sends to and reads from a LangGraph server, as pure functions.

The server speaks JSON: configs must be plain data, thread states come back as dicts,
stream chunks as `(event, data)` pairs whose event name carries the namespace
(`updates|inner:<task id>`). Everything here converts between that wire form and the
public graph protocol (`StateSnapshot`, `RunnableConfig`, `(ns, mode, data)` tuples, v2
`StreamPart` dicts), with no I/O, so the sync and async methods of `RemoteGraph` share
one implementation and differ only in how they call the SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any
from uuid import UUID

from langchain_core.runnables import RunnableConfig

from lgnb._internal.constants import CONF, INTERRUPT, NS_SEP
from lgnb.errors import GraphInterrupt, ParentCommand
from lgnb.types import Command, Interrupt, PregelTask, StateSnapshot

__all__ = (
    "CONF_DROPLIST",
    "ChunkTranslator",
    "RemoteException",
    "StreamPlan",
    "checkpoint_of",
    "config_of",
    "drawable_graph",
    "sanitize_config",
    "split_command",
    "state_snapshot",
)

CONF_DROPLIST = frozenset(
    ("checkpoint_map", "checkpoint_id", "checkpoint_ns", "task_id", "__pregel_strict_resume")
)
"""`configurable` keys that belong to the *caller's* checkpoint, never sent to the server:
the remote thread has checkpoints of its own."""


class RemoteException(Exception):
    """The remote graph's run failed on the server (its `error` event, as sent)."""


# --------------------------------------------------------------------------- configs
def _plain(value: Any) -> Any:
    """`value` reduced to JSON-able primitives; None when nothing of it can be sent
    (a callback, a saver, an object): those live in this process only."""
    if isinstance(value, (str, int, float, bool, UUID)):
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, str) and (pv := _plain(v)) is not None:
                out[k] = pv
        return out
    if isinstance(value, (list, tuple)):
        return [pv for item in value if (pv := _plain(item)) is not None]
    return None


def sanitize_config(config: RunnableConfig) -> dict[str, Any]:
    """The part of `config` that can and should travel to the server.

    Kept: `recursion_limit`, string `tags`, `metadata` and `configurable` reduced to
    primitives. Dropped: callbacks and other live objects, and the caller's checkpoint
    keys (`CONF_DROPLIST`), so a RemoteGraph used as a node does not point the remote
    thread at the parent graph's checkpoint.
    """
    out: dict[str, Any] = {}
    if "recursion_limit" in config:
        out["recursion_limit"] = config["recursion_limit"]
    if "tags" in config:
        out["tags"] = [t for t in config["tags"] or () if isinstance(t, str)]
    if "metadata" in config:
        out["metadata"] = _plain(dict(config["metadata"] or {}))
    if CONF in config:
        out[CONF] = {
            k: pv
            for k, v in (config[CONF] or {}).items()
            if isinstance(k, str) and k not in CONF_DROPLIST and (pv := _plain(v)) is not None
        }
    return out


_CHECKPOINT_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")


def checkpoint_of(config: RunnableConfig | None) -> dict[str, Any] | None:
    """The SDK `Checkpoint` a config points at (None: the thread's latest)."""
    if not config:
        return None
    conf = config.get(CONF) or {}
    checkpoint = {k: conf[k] for k in _CHECKPOINT_KEYS if k in conf}
    return checkpoint or None


def config_of(checkpoint: dict[str, Any]) -> RunnableConfig:
    """The RunnableConfig of a checkpoint the server reported."""
    return {
        CONF: {
            "thread_id": checkpoint["thread_id"],
            "checkpoint_ns": checkpoint["checkpoint_ns"],
            "checkpoint_id": checkpoint["checkpoint_id"],
            "checkpoint_map": checkpoint.get("checkpoint_map") or {},
        }
    }


def thread_id_of(config: RunnableConfig, method: str) -> str:
    """The thread a state call targets, or an error that says what to pass."""
    thread_id = (config.get(CONF) or {}).get("thread_id")
    if thread_id is None:
        raise ValueError(
            f"RemoteGraph.{method}() needs a thread: pass "
            "config={'configurable': {'thread_id': ...}} (or set it with with_config)."
        )
    return thread_id


# --------------------------------------------------------------------------- states
def _interrupt(data: Any) -> Interrupt:
    if isinstance(data, Interrupt):
        return data
    if isinstance(data, dict) and "value" in data:
        return Interrupt(value=data["value"], id=data.get("id", "placeholder-id"))
    return Interrupt(value=data)


def state_snapshot(state: dict[str, Any]) -> StateSnapshot:
    """A `ThreadState` from the server as the `StateSnapshot` a local graph returns.

    Task errors come back as text (wrapped in `Exception`), a subgraph task's state as a
    nested snapshot (`subgraphs=True`) or as the config of its checkpoint.
    """
    tasks = []
    for task in state.get("tasks") or ():
        sub = task.get("state")
        if sub:
            task_state: Any = state_snapshot(sub)
        elif task.get("checkpoint"):
            task_state = {CONF: task["checkpoint"]}
        else:
            task_state = None
        tasks.append(
            PregelTask(
                id=task["id"],
                name=task["name"],
                path=(),
                error=Exception(task["error"]) if task.get("error") else None,
                interrupts=tuple(_interrupt(i) for i in task.get("interrupts") or ()),
                state=task_state,
                result=task.get("result"),
            )
        )
    parent = state.get("parent_checkpoint")
    return StateSnapshot(
        values=state["values"],
        next=tuple(state.get("next") or ()),
        config=config_of(state["checkpoint"]),
        metadata=state.get("metadata"),
        created_at=state.get("created_at"),
        parent_config=config_of(parent) if parent else None,
        tasks=tuple(tasks),
        interrupts=tuple(i for t in tasks for i in t.interrupts),
    )


def drawable_graph(graph: dict[str, Any]) -> Any:
    """The server's graph JSON (`GET /assistants/{id}/graph`) as a LangChain drawable
    `Graph`, the type `get_graph()` of a local graph returns."""
    from langchain_core.runnables.graph import Edge, Graph, Node

    nodes = {}
    for node in graph["nodes"]:
        node_id = str(node["id"])
        # the server's JSON node data (a dict), where a local graph's Node holds a schema
        # or Runnable: drawn from, never called
        data: Any = node.get("data") or {}
        name = node.get("name")
        if name is None:
            name = data.get("name", node_id) if isinstance(data, dict) else node_id
        nodes[node_id] = Node(id=node_id, name=name, data=data, metadata=node.get("metadata"))
    edges = [Edge(**edge) for edge in graph["edges"]]
    return Graph(nodes=nodes, edges=edges)


# --------------------------------------------------------------------------- runs
def split_command(input: Any) -> tuple[Any, dict[str, Any] | None]:
    """`(input, command)` for `runs.stream`: a `Command` travels as the SDK's command
    dict, never as input."""
    if isinstance(input, Command):
        return None, asdict(input)
    return input, None


class StreamPlan:
    """Which modes to ask the server for, and how to shape what it sends back.

    `requested` are the caller's modes (`messages-tuple` is the server's name for
    `messages`); the server is also asked for `updates` (interrupts arrive there) and
    for the modes of the enclosing graph runs a RemoteGraph used as a node forwards to.
    """

    def __init__(
        self,
        stream_mode: str | Sequence[str] | None,
        *,
        parent_modes: frozenset[str] = frozenset(),
        default: str = "updates",
    ) -> None:
        if not stream_mode:
            requested, self.single = [default], True
        elif isinstance(stream_mode, str):
            requested, self.single = [stream_mode], True
        else:
            requested, self.single = list(stream_mode), False
        self.requested = ["messages" if m == "messages-tuple" else m for m in requested]
        wire = [*requested, *(m for m in sorted(parent_modes) if m not in requested)]
        wire = ["messages-tuple" if m == "messages" else m for m in wire if m != "events"]
        if "updates" not in wire:
            wire.append("updates")
        self.wire: list[str] = list(dict.fromkeys(wire))


class ChunkTranslator:
    """One remote run's stream chunks -> what `stream()` yields; the core of
    `RemoteGraph.stream` and `astream`.

    `feed(event, data)` returns the item to yield, or `_SKIP`. It forwards chunks to the
    enclosing graph runs (`forward`, when the RemoteGraph runs as a node), raises
    `ParentCommand` for a `Command(graph=PARENT)` the remote graph returned, raises
    `GraphInterrupt` for a remote interrupt when called from a parent graph (so the
    parent pauses too), and `RemoteException` for a remote error.
    """

    SKIP: Any = object()

    def __init__(
        self,
        plan: StreamPlan,
        *,
        subgraphs: bool,
        version: str,
        caller_ns: tuple[str, ...] = (),
        forward: Callable[[tuple[str, ...], str, Any], None] | None = None,
    ) -> None:
        if version not in ("v1", "v2"):
            raise ValueError(f"RemoteGraph.stream(version={version!r}): use 'v1' or 'v2'.")
        self.plan = plan
        self.subgraphs = subgraphs
        self.v2 = version == "v2"
        self.caller_ns = caller_ns
        self.forward = forward

    def feed(self, event: str, data: Any) -> Any:
        mode, _, ns_text = event.partition(NS_SEP)
        ns = self.caller_ns + (tuple(ns_text.split(NS_SEP)) if ns_text else ())
        if mode == "messages-tuple":
            mode = "messages"
        if mode == "command" and isinstance(data, dict) and data.get("graph") == Command.PARENT:
            raise ParentCommand(Command(**data))
        if self.forward is not None:
            self.forward(ns, mode, data)
        if mode == "error":
            raise RemoteException(data)
        if mode == "updates" and self.caller_ns and isinstance(data, dict) and INTERRUPT in data:
            raise GraphInterrupt([_interrupt(i) for i in data[INTERRUPT]])
        if mode not in self.plan.requested:
            return self.SKIP
        # subgraph events the caller did not ask for (the parent's did); messages are
        # exempt: the server sends each message once, under the namespace it came from
        if not self.subgraphs and ns_text and mode != "messages":
            return self.SKIP
        if mode == "messages":
            data = tuple(data)
        if self.v2:
            interrupts: tuple[Interrupt, ...] = ()
            if mode == "values" and isinstance(data, dict) and INTERRUPT in data:
                data = dict(data)
                interrupts = tuple(_interrupt(i) for i in data.pop(INTERRUPT))
            return {"type": mode, "ns": ns, "data": data, "interrupts": interrupts}
        if self.subgraphs:
            return (ns, data) if self.plan.single else (ns, mode, data)
        return data if self.plan.single else (mode, data)

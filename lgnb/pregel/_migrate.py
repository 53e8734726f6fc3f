"""The checkpoint format: the version lgnb writes, and reading older ones.

lgnb writes LangGraph's current checkpoint format (`v: 4`), so a thread saved by
either engine resumes on the other. Threads saved by older LangGraph releases are
migrated when read, in memory (the stored rows are never rewritten):

* `v < 4`: Sends waiting for the next step were kept beside the channels
  (`pending_sends`); they now live in the tasks channel, as any write does.
* `v < 3`: nodes were triggered by channels named `start:<node>`,
  `branch:<source>:<condition>:<node>` or `<node>` (edges out of a node); all are
  `branch:to:<node>` now. Versions merge (the newest wins), and so do the versions
  each node and the interrupt checkpoint had seen of them.

Sends are stored under LangGraph's class name (when LangGraph is installed) and read
back whichever engine's class they come as.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import END, INTERRUPT, START, TASKS
from lgnb._internal.interrupts import call_holding_interrupts, holds_interrupts
from lgnb.pregel._program import Request
from lgnb.types import Interrupt, Send

if TYPE_CHECKING:
    from lgnb.pregel.main import Pregel

__all__ = (
    "CHECKPOINT_VERSION",
    "migrate_checkpoint",
    "own_interrupts",
    "portable_checkpoint",
    "portable_writes",
    "save_request",
    "storable_send",
    "storable_writes",
)

CHECKPOINT_VERSION = 4
"""The `v` of the checkpoints lgnb writes: LangGraph 1.x's current format."""

_MISSING = object()


def migrate_checkpoint(checkpoint: dict[str, Any], graph: Pregel) -> dict[str, Any]:
    """`checkpoint` in the current layout: the same object when it already is one,
    else a migrated copy (the saver's object is left as it was)."""
    version = checkpoint.get("v", 1)
    if version >= CHECKPOINT_VERSION:
        return checkpoint
    checkpoint = {
        **checkpoint,
        "channel_values": dict(checkpoint["channel_values"]),
        "channel_versions": dict(checkpoint["channel_versions"]),
        "versions_seen": {k: dict(v) for k, v in checkpoint["versions_seen"].items()},
    }
    sends = checkpoint.pop("pending_sends", None)
    versions = checkpoint["channel_versions"]
    if sends:
        checkpoint["channel_values"][TASKS] = list(sends)
        checkpoint["channel_versions"][TASKS] = max(versions.values())
    # trigger channels were renamed in StateGraph's lowering only (as LangGraph migrates)
    if version < 3 and versions and vars(graph).get("builder") is not None:
        _rename_trigger_channels(checkpoint, graph)
    return checkpoint


def _rename_trigger_channels(checkpoint: dict[str, Any], graph: Pregel) -> None:
    versions = checkpoint["channel_versions"]
    nodes = graph.nodes
    for old in list(versions):
        parts = old.split(":")
        if parts[0] == "start" and len(parts) >= 2 and parts[1] in nodes:
            _merge_into(checkpoint, old, parts[1])
    for old in list(versions):
        parts = old.split(":")
        if parts[0] == "branch" and len(parts) == 4 and parts[3] in nodes:
            _merge_into(checkpoint, old, parts[3])
    if not any(k in nodes for k in versions):
        return
    # a node's own channel carried its plain edges: one trigger per edge target
    builder = vars(graph)["builder"]
    targets: dict[str, list[str]] = {}
    for start, end in getattr(builder, "edges", ()):
        if start != START and end != END:
            targets.setdefault(start, []).append(end)
    values = checkpoint["channel_values"]
    interrupt_seen = checkpoint["versions_seen"].get(INTERRUPT)
    for old in list(versions):
        if old == START or old not in nodes:
            continue
        version = versions.pop(old)
        value = values.pop(old, _MISSING)
        for end in targets.get(old, ()):
            _merge_channel(checkpoint, old, f"branch:to:{end}", end, version, value)
        if interrupt_seen is not None:
            interrupt_seen.pop(old, None)


def _merge_into(checkpoint: dict[str, Any], old: str, node: str) -> None:
    """Fold trigger channel `old` of `node` into `branch:to:<node>`."""
    version = checkpoint["channel_versions"].pop(old)
    value = checkpoint["channel_values"].pop(old, _MISSING)
    _merge_channel(checkpoint, old, f"branch:to:{node}", node, version, value)


def _merge_channel(
    checkpoint: dict[str, Any], old: str, new: str, seen_by: str, version: Any, value: Any
) -> None:
    """Fold channel `old` (already removed, with `version` and `value`) into `new`."""
    versions = checkpoint["channel_versions"]
    seen = checkpoint["versions_seen"]
    for node_seen in (seen.get(seen_by), seen.get(INTERRUPT)):
        if node_seen and old in node_seen:
            was = node_seen.pop(old)
            node_seen[new] = max(was, node_seen[new]) if new in node_seen else was
    values = checkpoint["channel_values"]
    if new not in values and value is not _MISSING:
        values[new] = value
    versions[new] = max(versions[new], version) if new in versions else version


# ---------------------------------------------------------------------- writing Sends

_portable_send: Any = None


def _portable_send_class() -> Any:
    """The class lgnb stores pending Sends as: named `langgraph.types.Send` when LangGraph
    is installed, so LangGraph reading the thread sees its own Send (it ignores any other
    class in the tasks channel); lgnb's own `Send` otherwise (nothing could read the other
    name back). LangGraph is not imported for this."""
    global _portable_send
    if _portable_send is None:
        try:
            found = importlib.util.find_spec("langgraph.types") is not None
        except (ImportError, ValueError):
            found = False
        if found:

            class PortableSend(Send):
                __slots__ = ()

                def __reduce__(self) -> Any:
                    # pickled (a saver's pickle_fallback) as LangGraph's own Send, whose
                    # name this class borrows; with lgnb's timeout policy, as lgnb's Send
                    if self.timeout is not None:
                        return (Send, (self.node, self.arg, self.timeout))
                    from langgraph.types import Send as LangGraphSend

                    return (LangGraphSend, (self.node, self.arg))

            PortableSend.__module__ = "langgraph.types"
            PortableSend.__name__ = PortableSend.__qualname__ = "Send"
            _portable_send = PortableSend
        else:
            _portable_send = False
    return _portable_send


def _port(value: Any, cls: Any) -> Any:
    if type(value) is Send:
        return cls(value.node, value.arg, timeout=value.timeout)
    return value


def portable_checkpoint(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """`checkpoint` as it is handed to a saver: pending Sends in LangGraph's class."""
    sends = checkpoint["channel_values"].get(TASKS)
    cls = _portable_send_class() if sends else False
    if not cls:
        return checkpoint
    values = {**checkpoint["channel_values"], TASKS: [_port(s, cls) for s in sends]}
    return {**checkpoint, "channel_values": values}


def portable_writes(writes: Sequence[tuple[str, Any]]) -> Sequence[tuple[str, Any]]:
    """Writes as they are handed to a saver: Sends and the interrupts a node raised in
    LangGraph's classes (a LangGraph process resumes the thread: it reads its own
    `Interrupt`, which it needs even without lgnb installed or under strict msgpack)."""
    if not any(c == TASKS or c == INTERRUPT for c, _ in writes):
        return writes
    cls = _portable_send_class()
    if not cls:
        return writes
    return [(c, _port(v, cls)) if c == TASKS else (c, _port_interrupts(v)) if c == INTERRUPT else (c, v)
            for c, v in writes]


_portable_interrupt: Any = None


def _port_interrupts(value: Any) -> Any:
    """A write of interrupts (a sequence of lgnb `Interrupt`) with each as LangGraph's."""
    global _portable_interrupt
    if not isinstance(value, (list, tuple)) or not value:
        return value
    if _portable_interrupt is None:

        class PortableInterrupt(Interrupt):
            __slots__ = ()

            def __reduce__(self) -> Any:  # pickled (a saver's pickle_fallback) as LangGraph's
                from langgraph.types import Interrupt as LangGraphInterrupt

                return (_langgraph_interrupt, (LangGraphInterrupt, self.value, self.id, self.response_schema))

        PortableInterrupt.__module__ = "langgraph.types"
        PortableInterrupt.__name__ = PortableInterrupt.__qualname__ = "Interrupt"
        _portable_interrupt = PortableInterrupt
    cls = _portable_interrupt
    ported = [cls(i.value, i.id, response_schema=i.response_schema) if type(i) is Interrupt else i for i in value]
    return type(value)(ported)


def own_interrupts(value: Any) -> Any:
    """A saved write of interrupts with each as lgnb's `Interrupt` (a saver reading them
    back where LangGraph is importable makes LangGraph's, the class they are stored as)."""
    if not isinstance(value, (list, tuple)) or all(type(i) is Interrupt for i in value):
        return value
    return type(value)(
        Interrupt(i.value, i.id, response_schema=getattr(i, "response_schema", None))
        if type(i) is not Interrupt and type(i).__name__ == "Interrupt" and hasattr(i, "id") else i
        for i in value
    )


def _langgraph_interrupt(cls: Any, value: Any, id: str, response_schema: Any) -> Any:
    return cls(value, id, response_schema=response_schema)


# ---------------------------------------------------------------------- saver calls

_TAKES_TASK_PATH: dict[Any, bool] = {}


def _takes_task_path(put_writes: Any) -> bool:
    """Whether a saver's `put_writes` / `aput_writes` declares `task_path`: as LangGraph
    does, it is passed only then (savers written before it existed take three)."""
    func = getattr(put_writes, "__func__", put_writes)
    known = _TAKES_TASK_PATH.get(func)
    if known is None:
        try:
            known = inspect.signature(put_writes).parameters.get("task_path") is not None
        except (TypeError, ValueError):
            known = True
        _TAKES_TASK_PATH[func] = known
    return known


def save_request(saver: Any, op: tuple) -> Request:
    """The request that carries out a queued `("put", ...)` / `("put_writes", ...)`
    call (answered with the saver's sync or async method); a put answers its config."""
    if op[0] == "put":
        return (_put, _aput, (saver, op))
    return (_put_writes, _aput_writes, (saver, op))


def _put_args(op: tuple) -> tuple[Any, ...]:
    return (op[1], portable_checkpoint(op[2]), op[3], op[4])


def _named(exc: TypeError, saver: Any, op: tuple) -> None:
    """Say in `exc` (raised saving `op`) which value could not be stored and where."""
    from lgnb.checkpoint._unstorable import name_unstorable

    if op[0] == "put":
        values = op[2]["channel_values"]
        writes: Any = [(k, values[k]) for k in op[4] if k in values]
    else:
        writes = op[2]
    name_unstorable(exc, getattr(saver, "serde", None), writes)


def _put(saver: Any, op: tuple) -> Any:
    try:
        if holds_interrupts(saver):  # the stop button lands after the write (interrupts.py)
            return call_holding_interrupts(saver.put, *_put_args(op))
        return saver.put(*_put_args(op))
    except TypeError as exc:
        _named(exc, saver, op)
        raise


async def _aput(saver: Any, op: tuple) -> Any:
    try:
        return await saver.aput(*_put_args(op))
    except TypeError as exc:
        _named(exc, saver, op)
        raise


def _writes_args(method: Any, op: tuple) -> tuple[Any, ...]:
    writes = portable_writes(op[2])
    return (op[1], writes, op[3], op[4]) if _takes_task_path(method) else (op[1], writes, op[3])


def _put_writes(saver: Any, op: tuple) -> None:
    try:
        if holds_interrupts(saver):
            call_holding_interrupts(saver.put_writes, *_writes_args(saver.put_writes, op))
        else:
            saver.put_writes(*_writes_args(saver.put_writes, op))
    except TypeError as exc:
        _named(exc, saver, op)
        raise


async def _aput_writes(saver: Any, op: tuple) -> None:
    try:
        await saver.aput_writes(*_writes_args(saver.aput_writes, op))
    except TypeError as exc:
        _named(exc, saver, op)
        raise


# ---------------------------------------------------------------------- untracked values


def storable_writes(
    writes: Sequence[tuple[str, Any]], untracked: frozenset[str]
) -> Sequence[tuple[str, Any]]:
    """Writes as they are stored: none to untracked channels, and a Send's arg (often
    the whole state) without the untracked keys — as LangGraph stores them."""
    if not untracked:
        return writes
    return [
        (c, storable_send(v, untracked) if c == TASKS else v)
        for c, v in writes
        if c not in untracked
    ]


def storable_send(packet: Any, untracked: frozenset[str]) -> Any:
    """`packet` without the untracked keys of its dict arg."""
    if isinstance(packet, Send) and isinstance(packet.arg, dict) and not untracked.isdisjoint(packet.arg):
        arg = {k: v for k, v in packet.arg.items() if k not in untracked}
        return Send(packet.node, arg, timeout=packet.timeout)
    return packet

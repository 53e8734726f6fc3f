"""DeltaChannel persistence: when to snapshot, and how a loaded checkpoint is rebuilt.

A `DeltaChannel` key saves nothing at most checkpoints (it is absent from
`channel_values`); its value at a checkpoint is the newest stored seed on the parent
chain — a `_DeltaSnapshot`, or a plain value written while the key was a plain reducer —
plus every write saved on the checkpoints in between, replayed through the reducer. The
saver walks the chain (`BaseCheckpointSaver.get_delta_channel_history`), so savers with
direct storage access can do it in one query.

Snapshot cadence, per delta key, kept in checkpoint metadata as
`counters_since_delta_snapshot = {key: (updates, supersteps)}` (zero pairs omitted):
each checkpoint adds a superstep, and an update when the step wrote the key. A key
snapshots when updates reach its `snapshot_frequency` or supersteps reach
`MAX_SUPERSTEPS_SINCE_SNAPSHOT`, which bounds the replay even for a key nobody writes.

Pure functions here; `hydrating` asks for the saver I/O (a `_program` program).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from uuid import uuid4

from langgraph.checkpoint.serde.types import _DeltaSnapshot

from lgnb._internal.constants import NS_END, NS_SEP, NULL_TASK_ID
from lgnb.channels.base import MISSING, BaseChannel
from lgnb.channels.binop import BinaryOperatorAggregate, as_overwrite
from lgnb.channels.delta import DeltaChannel
from lgnb.pregel._program import Program, saver_request

__all__ = (
    "COUNTERS",
    "MAX_SUPERSTEPS_SINCE_SNAPSHOT",
    "advance_counters",
    "due_for_snapshot",
    "overwritten_delta_keys",
    "replay_targets",
    "exit_task_id",
    "exit_late_task_id",
    "ensure_message_ids",
    "SNAPSHOT_BUMPS",
    "mark_bump_seen",
    "seen_without_bumps",
    "replayed",
    "hydrating",
)

#: metadata key of the per-key `(updates, supersteps)` counters
COUNTERS = "counters_since_delta_snapshot"

#: pseudo-node of `versions_seen` recording which entries a snapshot bump advanced
#: (the same key as LangGraph's, so either runtime reads the other's checkpoints)
SNAPSHOT_BUMPS = "__snapshot_bumps__"

#: a delta key snapshots at the latest after this many supersteps (same variable as LangGraph)
MAX_SUPERSTEPS_SINCE_SNAPSHOT = int(
    os.getenv("LANGGRAPH_DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT", "5000")
)


def delta_keys(channels: Mapping[str, Any]) -> list[str]:
    """The DeltaChannel keys of a graph, in declaration order."""
    return [k for k, ch in channels.items() if isinstance(ch, DeltaChannel)]


def advance_counters(
    previous: Mapping[str, Any] | None, keys: Iterable[str], updated: Iterable[str] | None
) -> dict[str, tuple[int, int]]:
    """The counters after one more checkpoint: +1 superstep each, +1 update if written."""
    prev = previous or {}
    written = set(updated or ())
    out: dict[str, tuple[int, int]] = {}
    for k in keys:
        u, s = prev.get(k, (0, 0))
        out[k] = (u + 1 if k in written else u, s + 1)
    return out


def due_for_snapshot(
    channels: Mapping[str, BaseChannel],
    counters: Mapping[str, tuple[int, int]],
    versions: Mapping[str, Any],
) -> set[str]:
    """Delta keys whose counters reached their cadence (only keys with a value and a version)."""
    due: set[str] = set()
    for k, (updates, supersteps) in counters.items():
        ch = channels.get(k)
        if not isinstance(ch, DeltaChannel) or k not in versions or not ch.is_available():
            continue
        if updates >= ch.snapshot_frequency or supersteps >= MAX_SUPERSTEPS_SINCE_SNAPSHOT:
            due.add(k)
    return due


def overwritten_delta_keys(
    channels: Mapping[str, Any], writes: Iterable[tuple[str, Any]]
) -> set[str]:
    """Delta keys that `writes` set with an Overwrite: they snapshot at the next checkpoint,
    or a later read would start from an older seed and replay what the Overwrite dropped."""
    return {
        c
        for c, v in writes
        if isinstance(channels.get(c), DeltaChannel) and as_overwrite(v)[0]
    }


def stored_counters(metadata: Mapping[str, Any] | None) -> dict[str, tuple[int, int]]:
    """The counters saved in checkpoint metadata (lists after a JSON round trip)."""
    raw = (metadata or {}).get(COUNTERS) or {}
    return {k: (int(v[0]), int(v[1])) for k, v in raw.items()}


def nonzero(counters: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    return {k: v for k, v in counters.items() if v != (0, 0)}


def replay_targets(channels: Mapping[str, Any], checkpoint: Mapping[str, Any]) -> list[str]:
    """Keys whose value at `checkpoint` must be rebuilt from the ancestors' writes.

    A delta key with a stored blob (snapshot or plain value) reads it directly, and one
    without a version was never written (empty, nothing to walk). A plain reducer key with
    a version but no blob was written while it was a DeltaChannel: it is rebuilt too.
    """
    values = checkpoint.get("channel_values") or {}
    versions = checkpoint.get("channel_versions") or {}
    return [k for k in _replayable(channels) if k in versions and values.get(k, MISSING) is MISSING]


_REPLAYABLE: dict[int, tuple[Mapping[str, Any], int, list[str]]] = {}


def _replayable(channels: Mapping[str, Any]) -> list[str]:
    """The delta and reducer keys of `channels`, found once per compiled graph's mapping
    (a history view builds a snapshot per checkpoint: the isinstance checks add up)."""
    memo = _REPLAYABLE.get(id(channels))
    if memo is None or memo[0] is not channels or memo[1] != len(channels):
        keys = [k for k, ch in channels.items() if isinstance(ch, (DeltaChannel, BinaryOperatorAggregate))]
        if len(_REPLAYABLE) >= 64:  # graphs compiled over and over: keep the latest
            try:  # (threads may do this at once: the oldest is dropped once)
                _REPLAYABLE.pop(next(iter(_REPLAYABLE)), None)
            except (StopIteration, RuntimeError):
                pass
        memo = _REPLAYABLE[id(channels)] = (channels, len(channels), keys)
    return memo[2]


def replayed(spec: BaseChannel, history: Mapping[str, Any]) -> Any:
    """The value of `spec`'s key from its seed and the writes after it (MISSING: empty)."""
    seed = history.get("seed", MISSING)
    writes: Sequence[Any] = history.get("writes") or ()
    ch: BaseChannel
    if isinstance(spec, DeltaChannel):
        ch = spec.from_checkpoint(seed)
        ch.replay_writes(writes)
    else:
        if isinstance(seed, _DeltaSnapshot):
            seed = seed.value
        ch = spec.from_checkpoint(seed)
        # one update per write: a single call would reject a second Overwrite
        for w in writes:
            ch.update([w[-1]])
    return ch.get() if ch.is_available() else MISSING


def exit_task_id(step: int, task_id: str) -> str:
    """The task id a durability="exit" run stores a delta write of `task_id` under.

    The superstep replaces the first UUID group, so readers that order a checkpoint's
    writes by task id keep them in step order; it stays a valid UUID (Postgres stores
    task ids as `uuid`) and is never the null task's (whose writes readers take as the
    checkpoint's own)."""
    parts = task_id.split("-")
    synthetic = "-".join((f"{step:08d}", *parts[1:]))
    if synthetic == NULL_TASK_ID:
        return f"{step:08d}-0000-0000-0000-000000000001"
    return synthetic


def exit_late_task_id(step: int, task_id: str) -> str:
    """`exit_task_id` for a superstep after the first one of the run: sorts after every
    real task id, in step order."""
    parts = task_id.split("-")
    return f"ffffffff-{step >> 16:04x}-{step & 0xFFFF:04x}-{parts[3]}-{parts[4]}"


def mark_bump_seen(
    seen_all: dict[str, dict[str, Any]],
    key: str,
    old: Any,
    new: Any,
    subscribers: Iterable[str],
) -> set[str]:
    """Advance (in place) whoever had seen `key` at `old` to `new`; the entries changed.

    A version bump that only stores a snapshot is not a write: left unseen, it would rerun
    the key's subscribers and re-fire `interrupt_before`. A key bumped from no version was
    never written, so its `subscribers` that never ran advance too (they would start on
    the bump). `SNAPSHOT_BUMPS` keeps, per advanced entry, the new version and the one the
    node really read, so `seen_without_bumps` can put the read back."""
    if old is None:
        for node in subscribers:
            seen_all.setdefault(node, {})
    marks = dict(seen_all.get(SNAPSHOT_BUMPS) or {})
    changed: set[str] = set()
    for node, seen in list(seen_all.items()):
        if node == SNAPSHOT_BUMPS or seen.get(key) != old:
            continue
        advanced, read = f"{node}{NS_SEP}{key}", f"{node}{NS_END}{key}"
        # an earlier bump that set `old` already recorded the real read
        if old is not None and marks.get(advanced) != old:
            marks[read] = old
        marks[advanced] = new
        seen_all[node] = {**seen, key: new}
        changed.add(node)
    if changed:
        seen_all[SNAPSHOT_BUMPS] = marks
        changed.add(SNAPSHOT_BUMPS)
    return changed


def seen_without_bumps(seen_all: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """`versions_seen` as the nodes read it: an entry a snapshot bump advanced goes back
    to the version the node really read, or away if it never read one."""
    marks = seen_all.get(SNAPSHOT_BUMPS)
    if not marks:
        return {n: dict(s) for n, s in seen_all.items()}
    out: dict[str, dict[str, Any]] = {}
    for node, seen in seen_all.items():
        if node == SNAPSHOT_BUMPS:
            continue
        out[node] = {}
        for k, v in seen.items():
            advanced, read = f"{node}{NS_SEP}{k}", f"{node}{NS_END}{k}"
            if marks.get(advanced) != v:
                out[node][k] = v
            elif read in marks:
                out[node][k] = marks[read]
    return out


def ensure_message_ids(channels: Mapping[str, Any], writes: list[tuple[str, Any]]) -> None:
    """Give the messages written to delta keys ids, before the writes are saved.

    A delta key replays its saved writes on every read, and its reducer need not assign
    missing ids: a message saved without one would come back without one (or with a new
    one per read), and nothing could target it by id (`RemoveMessage`). Message objects
    get an id in place (alone, in a list or in an `Overwrite`); a message dict in a list
    becomes a message with an id, replacing the write in `writes` (the caller's lists
    and dicts are never changed). A dict that is not a valid message raises here.
    """
    for i, (c, value) in enumerate(writes):
        if isinstance(channels.get(c), DeltaChannel):
            new = _with_message_ids(value)
            if new is not value:
                writes[i] = (c, new)


def _with_message_ids(value: Any) -> Any:
    is_overwrite, inner = as_overwrite(value)
    if is_overwrite:
        if isinstance(inner, (list, tuple)):
            for item in inner:
                _stamp_id(item)
        return value
    if isinstance(value, list):
        mapped = [_list_item_with_id(item) for item in value]
        return value if all(a is b for a, b in zip(mapped, value)) else mapped
    if isinstance(value, dict) and _is_message_dict(value) and not value.get("id"):
        return {**value, "id": str(uuid4())}
    _stamp_id(value)
    return value


#: the roles (OpenAI style) and types (LangChain's serialization) that make a dict a message
_MESSAGE_ROLES = frozenset({"user", "human", "assistant", "ai", "tool", "system", "function"})
_MESSAGE_TYPES = frozenset({"human", "ai", "tool", "system", "function", "remove"})


def _is_message_dict(value: dict) -> bool:
    return value.get("role") in _MESSAGE_ROLES or value.get("type") in _MESSAGE_TYPES


def _list_item_with_id(item: Any) -> Any:
    if isinstance(item, dict) and _is_message_dict(item):
        from langchain_core.messages import convert_to_messages

        message = convert_to_messages([item])[0]
        if not message.id:
            message.id = str(uuid4())
        return message
    _stamp_id(item)
    return item


def _stamp_id(item: Any) -> None:
    from langchain_core.messages import BaseMessage

    if isinstance(item, BaseMessage) and item.id is None:
        item.id = str(uuid4())


def _with_values(saved: Any, values: Mapping[str, Any]) -> Any:
    if not values:
        return saved
    checkpoint = dict(saved.checkpoint)
    checkpoint["channel_values"] = {**checkpoint.get("channel_values", {}), **values}
    return saved._replace(checkpoint=checkpoint)


def _rebuilt(channels: Mapping[str, Any], histories: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, history in histories.items():
        value = replayed(channels[k], history)
        if value is not MISSING:
            # a snapshot blob, so the loaded channel knows it is a whole value
            out[k] = _DeltaSnapshot(value) if isinstance(channels[k], DeltaChannel) else value
    return out


def _require_saver(targets: list[str], saver: Any) -> None:
    if targets and saver is None:
        raise ValueError(
            f"DeltaChannel {targets} has history to replay but no checkpointer or config "
            "was passed to read it: load the checkpoint through the graph's checkpointer"
        )


def hydrating(saver: Any, saved: Any, channels: Mapping[str, Any]) -> Program[Any]:
    """`saved` (a CheckpointTuple) with the values of its delta keys rebuilt in place."""
    if saved is None:
        return None
    targets = replay_targets(channels, saved.checkpoint)
    if not targets:
        return saved
    _require_saver(targets, saver)
    histories = yield saver_request(
        saver, "get_delta_channel_history", config=saved.config, channels=targets
    )
    return _with_values(saved, _rebuilt(channels, histories))


def graph_has_delta(graph: Any) -> bool:
    """Whether a graph has a DeltaChannel key (the delta bookkeeping is skipped otherwise)."""
    return any(isinstance(ch, DeltaChannel) for ch in graph.channels.values())

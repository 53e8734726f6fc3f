"""The pure steps of a super-step: apply writes to channels, plan the next tasks.

`apply_writes` is the *update* phase (barrier): all writes of a step reach the channels
at once, in a deterministic order, and channel versions move forward. `plan_tasks` is
the *plan* phase: Sends become PUSH tasks, nodes whose trigger channels have a version
they have not seen become PULL tasks.

Unlike LangGraph, neither walks every channel of the state on every step: only channels
that can change without being written (ephemeral ones, deferred ones) are visited, so a
step costs the same for a 20-key and a 1,000-key state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lgnb._internal.constants import NS_END, NS_SEP, PULL, PUSH, SPECIAL_WRITES, TASKS
from lgnb._internal.ids import task_id as make_task_id
from lgnb._internal.missing import MISSING
from lgnb.channels.base import BaseChannel
from lgnb.channels.ephemeral_value import EphemeralValue
from lgnb.channels.last_value import LastValue
from lgnb.channels.topic import Topic
from lgnb.pregel._node import PregelNode
from lgnb.pregel._task import Task
from lgnb.types import Send

logger = logging.getLogger("lgnb")

__all__ = ("apply_writes", "plan_tasks", "task_sort_key", "PUSH_TRIGGER")

PUSH_TRIGGER = (PUSH,)


def task_sort_key(task: Any) -> tuple:
    """Order in which a step's writes are applied: by task path, PULL before PUSH."""
    path = task.path
    if not path:
        return (-1, ())
    kind, rest = path[0], path[1:]
    return (0 if kind == PULL else 1, tuple(str(p) if not isinstance(p, int) else f"{p:010d}" for p in rest))


class Versions:
    """Channel versions of a run, with the running maximum (no O(width) max per step)."""

    __slots__ = ("versions", "seen", "current", "next_version")

    def __init__(
        self,
        versions: dict[str, Any],
        seen: dict[str, dict[str, Any]],
        next_version: Callable[[Any, None], Any],
    ) -> None:
        self.versions = versions
        self.seen = seen
        self.next_version = next_version
        self.current = max(versions.values()) if versions else None

    def bump(self) -> Any:
        self.current = self.next_version(self.current, None)
        return self.current


def int_next_version(current: Any, _: None) -> int:
    """Channel versions without a checkpointer: 1, 2, 3, ..."""
    return 1 if current is None else current + 1


def apply_writes(
    versions: Versions,
    channels: Mapping[str, BaseChannel],
    tasks: Sequence[Any],
    trigger_to_nodes: Mapping[str, Sequence[str]],
    step_channels: frozenset[str],
    finish_channels: Sequence[str],
    live: set[str],
    changed: set[str],
) -> set[str]:
    """Apply a step's writes; return the available channels that were updated.

    `step_channels` are the channels that may change on a step without writes (they
    empty themselves), `live` the ones of them currently holding a value — only those
    are visited. `finish_channels` change when the run is about to finish. Every channel
    whose version moved is added to `changed` (for the caller's caches), which must be
    empty on entry.
    """
    if len(tasks) > 1:
        tasks = sorted(tasks, key=task_sort_key)
    cv = versions.versions
    seen_all = versions.seen
    bump_step = False
    consumed: list[str] = []
    for task in tasks:
        # every task gets an entry, even one without triggers (input, updates): as LangGraph
        seen = seen_all.get(task.name)
        if seen is None:
            seen = seen_all[task.name] = {}
        triggers = task.triggers
        if triggers:
            bump_step = True
            for chan in triggers:
                if chan in cv:
                    seen[chan] = cv[chan]
                if chan in channels:
                    consumed.append(chan)
    # the version this step's changes get; the running maximum moves only if one is
    # used (as LangGraph, which derives it from the highest version each time)
    current = versions.current
    if versions.next_version is int_next_version:  # no checkpointer: plain counters, inline
        next_version = 1 if current is None else current + 1
    else:
        next_version = versions.next_version(current, None)
    moved = changed  # empty on entry (see above): no set of its own per step
    for chan in consumed:
        trigger = channels[chan]
        if type(trigger) is not EphemeralValue and trigger.consume():  # an edge's trigger never consumes
            cv[chan] = next_version
            moved.add(chan)
    # group writes by channel, keeping task order
    by_channel: dict[str, list[Any]] = {}
    for task in tasks:
        for chan, val in task.writes:
            vals = by_channel.get(chan)
            if vals is not None:
                vals.append(val)
            elif chan in channels:
                by_channel[chan] = [val]
            elif chan not in SPECIAL_WRITES:
                logger.warning(
                    "Task %s with path %s wrote to unknown channel %s, ignoring it.%s",
                    task.name,
                    task.path,
                    chan,
                    _unknown_route_help(task.name, chan, channels),
                )
    updated: set[str] = set()
    for chan, vals in by_channel.items():
        ch: Any = channels[chan]
        kind = type(ch)
        if (kind is LastValue or kind is EphemeralValue) and len(vals) == 1:
            # the common cases, a plain state key or an edge's trigger written once: no
            # method calls (what their `update` does with one value)
            ch.value = vals[0]
            cv[chan] = next_version
            moved.add(chan)
            updated.add(chan)
            if kind is EphemeralValue and chan in step_channels:
                live.add(chan)
            continue
        if ch.update(vals):
            cv[chan] = next_version
            moved.add(chan)
            if ch.is_available():
                updated.add(chan)
                if chan in step_channels:
                    live.add(chan)
    if bump_step:
        if live:
            for chan in list(live):
                if chan in by_channel:
                    continue
                ch = channels[chan]
                if type(ch) is EphemeralValue:  # empties itself: its `update(())`, inline
                    if ch.value is not MISSING:
                        ch.value = MISSING
                        cv[chan] = next_version
                        moved.add(chan)
                    live.discard(chan)
                    continue
                if ch.update(()):
                    cv[chan] = next_version
                    moved.add(chan)
                    if ch.is_available():
                        updated.add(chan)
                if not ch.is_available():
                    live.discard(chan)
        if finish_channels and updated.isdisjoint(trigger_to_nodes):
            for chan in finish_channels:
                ch = channels[chan]
                if ch.finish():
                    cv[chan] = next_version
                    moved.add(chan)
                    if ch.is_available():
                        updated.add(chan)
    if moved:
        versions.current = next_version
    return updated


def _unknown_route_help(name: str, chan: str, channels: Mapping[str, Any]) -> str:
    """For a route to a node the graph does not have: what happened and how to fix it."""
    if not chan.startswith(_BRANCH_TO):
        return ""
    target = chan[len(_BRANCH_TO):]
    nodes = ", ".join(c[len(_BRANCH_TO):] for c in channels if c.startswith(_BRANCH_TO))
    if not nodes:
        return (
            f"\n`{name}` routed to {target!r}, but this graph has no node to route to by name "
            "(an `@entrypoint` runs its function and nothing else): that route does not run."
        )
    return (
        f"\nNode `{name}` routed to {target!r} (a conditional edge's return value or "
        f"`Command(goto=...)`: node names), which is not a node of this graph (nodes: {nodes}): "
        "that route does not run. Fix the name or add the node. A node of the parent graph "
        "is reached with `Command(graph=Command.PARENT, goto=...)`, one level up only."
    )


_BRANCH_TO = "branch:to:"


def plan_tasks(
    *,
    checkpoint_id: str,
    parent_ns: str,
    step: int,
    nodes: Mapping[str, PregelNode],
    channels: Mapping[str, BaseChannel],
    versions: Versions,
    trigger_to_nodes: Mapping[str, Sequence[str]],
    updated_channels: set[str] | None,
    read_input: Callable[[PregelNode], Any],
    missing: Any,
    make_id: Callable[..., str] = make_task_id,
) -> list[Task]:
    """The tasks of the next step: PUSH tasks for pending Sends, then triggered nodes.

    `make_id` makes task ids (`legacy_task_id` for a format-1 checkpoint)."""
    tasks: list[Task] = []
    step_text = str(step)
    topic = channels.get(TASKS)
    if topic is not None and (topic.values if type(topic) is Topic else topic.is_available()):
        for idx, packet in enumerate(topic.get()):
            if not isinstance(packet, Send):
                if type(packet).__name__ != "Send" or not hasattr(packet, "node"):
                    logger.warning("Ignoring invalid packet type %s in pending sends", type(packet))
                    continue
                # LangGraph's Send, from a thread it wrote
                packet = Send(packet.node, packet.arg, timeout=getattr(packet, "timeout", None))
            node = nodes.get(packet.node)
            if node is None or node.bound is None:
                logger.warning(
                    "Ignoring unknown node name %s in pending sends\n%r names no node of this "
                    "graph (nodes: %s), so the packet does not run. A Send saved on a thread "
                    "before its node was removed or renamed is dropped this way; otherwise "
                    "pass a node's name: `Send(\"node_name\", arg)`.",
                    packet.node,
                    packet.node,
                    ", ".join(n for n in nodes if nodes[n].bound is not None and not n.startswith("__")),
                )
                continue
            base_ns = f"{parent_ns}{NS_SEP}{packet.node}" if parent_ns else packet.node
            tid = make_id(checkpoint_id, base_ns, step_text, packet.node, PUSH, str(idx))
            task = Task(tid, packet.node, (PUSH, idx), packet.arg, node, PUSH_TRIGGER, f"{base_ns}{NS_END}{tid}")
            if packet.timeout is not None:
                task.timeout = packet.timeout
            tasks.append(task)
    if updated_channels is not None:
        triggered: set[str] = set()
        for chan in updated_channels:
            names = trigger_to_nodes.get(chan)
            if names:
                triggered.update(names)
        candidates: Iterable[str] = sorted(triggered) if len(triggered) > 1 else triggered
    elif not versions.versions:
        candidates = ()
    else:
        candidates = nodes.keys()
    cv = versions.versions
    for name in candidates:
        node = nodes[name]
        seen = versions.seen.get(name)
        for chan in node.triggers:  # versions first: cheaper than asking the channel
            if seen is None or (chan in cv and (chan not in seen or cv[chan] > seen[chan])):
                ch: Any = channels[chan]
                # an edge's trigger (EphemeralValue) holds a value unless MISSING: inline
                if ch.value is not MISSING if type(ch) is EphemeralValue else ch.is_available():
                    break
        else:
            continue
        trig = node.triggers
        triggers = (trig[0],) if type(trig) is list and len(trig) == 1 else tuple(sorted(trig))
        base_ns = f"{parent_ns}{NS_SEP}{name}" if parent_ns else name
        tid = make_id(checkpoint_id, base_ns, step_text, name, PULL, *triggers)
        value = read_input(node)
        if value is missing:
            continue
        tasks.append(Task(tid, name, (PULL, name), value, node, triggers, f"{base_ns}{NS_END}{tid}"))
    return tasks

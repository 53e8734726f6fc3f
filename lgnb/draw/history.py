"""A thread's checkpoint history → a timeline model and its DOT text (forks as branches).

The input is what ``graph.get_state_history(config)`` returns (StateSnapshots, newest
first) from an lgnb or a LangGraph graph: both have the same shape. Each checkpoint is one
node; an edge goes from a checkpoint's parent (``parent_config``'s checkpoint id) to it, so
a checkpoint with several children (``update_state`` on an old checkpoint, a replay) shows
as a branch point. Everything user-controlled (node names in ``next``, ids) is escaped
plain DOT text; DOT ids are ours (``h0``, ``h1``, ...).

>>> from lgnb.draw import history_to_dot
>>> print(history_to_dot(list(graph.get_state_history(config))))   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lgnb.draw._dot import FONT, _text, visible
from lgnb.draw._jsonable import jsonable
from lgnb.draw.history_runs import Segment

DETAIL_LIMIT = 1500  # characters per string in the per-checkpoint details sent to the view


def _configurable(config: Any) -> Mapping[str, Any]:
    if not isinstance(config, Mapping):
        return {}
    conf = config.get("configurable")
    return conf if isinstance(conf, Mapping) else {}


def checkpoint_id(config: Any) -> str | None:
    """The checkpoint id of a RunnableConfig (None when it has none)."""
    value = _configurable(config).get("checkpoint_id")
    return str(value) if value else None


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint of the timeline."""

    id: str
    dot_id: str
    parent: str | None  # parent checkpoint id (None for the root, or a parent not listed)
    step: int | None
    source: str
    next: tuple[str, ...]
    created_at: str
    interrupts: int
    latest: bool = False
    current: bool = False
    fork: bool = False  # a child of a branch point that is not its parent's first child
    config: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # values/next/metadata..., JSON


@dataclass(frozen=True)
class Link:
    """Parent checkpoint → child checkpoint."""

    source: str
    target: str
    dot_id: str
    fork: bool


@dataclass
class Timeline:
    """The history of one thread as a tree of checkpoints (oldest first).

    `segments`: linear runs drawn as one node each (`lgnb.draw.history_runs.collapse`);
    a link's source or target may then be a segment id."""

    checkpoints: list[Checkpoint]
    links: list[Link]
    latest: str | None
    current: str | None
    branch_points: list[str]  # ids of checkpoints with more than one child
    segments: list[Segment] = field(default_factory=list)
    _index: dict[str, Checkpoint] | None = field(default=None, init=False, repr=False, compare=False)

    def by_id(self, cid: str) -> Checkpoint | None:
        if self._index is None or len(self._index) != len(self.checkpoints):
            self._index = {c.id: c for c in self.checkpoints}
        return self._index.get(cid)

    def segment_of(self, cid: str) -> Segment | None:
        """The segment `cid` is folded into (its id, or the id of a checkpoint in it)."""
        return next((s for s in self.segments if s.id == cid or cid in s.ids), None)

    def to_json(self, *, details: bool = True) -> dict[str, Any]:
        """Plain JSON for the widget's synced trait (`details=False`: without each
        checkpoint's values/metadata, which the view fetches for the clicked one)."""
        def one(c: Checkpoint) -> dict[str, Any]:
            d = jsonable(c.__dict__)
            if not details:
                d.pop("details", None)
            return d

        return {
            "checkpoints": [one(c) for c in self.checkpoints],
            "segments": [s.to_json() for s in self.segments],
            "links": [dict(e.__dict__) for e in self.links],
            "latest": self.latest,
            "current": self.current,
            "branch_points": list(self.branch_points),
        }


def snapshot_details(snap: Any) -> dict[str, Any]:
    """A StateSnapshot's values / next / metadata / tasks / interrupts as bounded JSON
    (strings cut at `DETAIL_LIMIT`): what the history view shows for a checkpoint."""
    tasks = []
    for task in getattr(snap, "tasks", None) or ():
        entry: dict[str, Any] = {"name": str(getattr(task, "name", "?"))}
        if getattr(task, "error", None) is not None:
            # a snapshot's task error is the saved text ("ValueError('...')") on both engines;
            # an exception object (a custom saver, a live task) is shown as its repr
            error = task.error
            entry["error"] = error[:DETAIL_LIMIT] if isinstance(error, str) else repr(error)[:DETAIL_LIMIT]
        if getattr(task, "interrupts", None):
            entry["interrupts"] = jsonable(list(task.interrupts), limit=DETAIL_LIMIT)
        tasks.append(entry)
    return {
        "values": jsonable(getattr(snap, "values", None), limit=DETAIL_LIMIT),
        "next": [str(n) for n in (getattr(snap, "next", None) or ())],
        "metadata": jsonable(dict(getattr(snap, "metadata", None) or {}), limit=DETAIL_LIMIT),
        "created_at": str(getattr(snap, "created_at", "") or ""),
        "tasks": tasks,
        "interrupts": jsonable(list(getattr(snap, "interrupts", None) or ()), limit=DETAIL_LIMIT),
    }


def timeline(snapshots: Iterable[Any], *, current: str | None = None, details: bool = True) -> Timeline:
    """Build the timeline model from StateSnapshots (any order; duplicates ignored).

    `current`: a checkpoint id to highlight (besides the latest checkpoint, which is the
    one with the greatest id: checkpoint ids are time-ordered). `details=False` leaves
    out each checkpoint's values/metadata (`Checkpoint.details`), which the history view
    reads for the clicked checkpoint only.
    """
    snaps: dict[str, Any] = {}
    for snap in snapshots:
        cid = checkpoint_id(getattr(snap, "config", None))
        if cid is None:
            raise ValueError(f"history_to_dot: a snapshot without a checkpoint id in its config: {snap!r:.200}")
        snaps.setdefault(cid, snap)
    order = sorted(snaps, key=lambda c: (str(getattr(snaps[c], "created_at", "") or ""), c))
    latest = max(snaps) if snaps else None
    parents = {c: checkpoint_id(getattr(snaps[c], "parent_config", None)) for c in order}
    children: dict[str, list[str]] = {}
    for cid in order:
        p = parents[cid]
        if p is not None and p in snaps:
            children.setdefault(p, []).append(cid)
    branch_points = [p for p in order if len(children.get(p, [])) > 1]
    forks = {kid for p in branch_points for kid in children[p][1:]}

    checkpoints = []
    for i, cid in enumerate(order):
        snap = snaps[cid]
        meta = dict(getattr(snap, "metadata", None) or {})
        step = meta.get("step")
        parent = parents[cid] if parents[cid] in snaps else None
        n_int = len(getattr(snap, "interrupts", None) or ())
        n_int += sum(len(getattr(t, "interrupts", None) or ()) for t in getattr(snap, "tasks", None) or ()) if not n_int else 0
        checkpoints.append(Checkpoint(
            id=cid, dot_id=f"lgnb-h{i}", parent=parent,
            step=step if isinstance(step, int) else None,
            source=str(meta.get("source", "") or ""),
            next=tuple(str(n) for n in (getattr(snap, "next", None) or ())),
            created_at=str(getattr(snap, "created_at", "") or ""),
            interrupts=n_int, latest=cid == latest, current=cid == current, fork=cid in forks,
            config=jsonable(dict(getattr(snap, "config", None) or {})),
            details=snapshot_details(snap) if details else {}))
    index = {c.id: c.dot_id for c in checkpoints}
    links = [Link(source=c.parent, target=c.id, dot_id=f"lgnb-hl{i}", fork=c.fork)
             for i, c in enumerate(checkpoints) if c.parent is not None and c.parent in index]
    return Timeline(checkpoints=checkpoints, links=links, latest=latest,
                    current=current if current in snaps else None, branch_points=branch_points)


def label_lines(c: Checkpoint) -> list[str]:
    """The lines of a checkpoint's label (plain text, not yet escaped)."""
    step = "?" if c.step is None else str(c.step)
    lines = [f"step {step} · {c.source or '?'}"]
    if c.next:
        shown = ", ".join(c.next[:4]) + (f", +{len(c.next) - 4}" if len(c.next) > 4 else "")
        lines.append(f"next: {shown}")
    else:
        lines.append("end")
    if c.interrupts:
        lines.append(f"⏸ interrupt{'s' if c.interrupts > 1 else ''} ({c.interrupts})")
    flat = [visible(line) for line in lines]  # a tab or NUL in a node name drawn as \t, \x00
    return [line if len(line) <= 60 else line[:59] + "…" for line in flat]


def segment_lines(seg: Segment) -> list[str]:
    """The lines of a segment's label (plain text)."""
    first = "?" if seg.first_step is None else f"{seg.first_step:,}"
    last = "?" if seg.last_step is None else f"{seg.last_step:,}"
    lines = [f"steps {first}–{last}" if first != last else f"step {first}",
             f"{len(seg.ids):,} checkpoints"]
    if seg.interrupts:
        lines.append(f"⏸ {seg.interrupts:,} with interrupts")
    lines.append("⊞ click to expand" if seg.kind == "run" else "older: not drawn (collapse ⊟)")
    return lines


def timeline_to_dot(t: Timeline, *, rankdir: str = "LR", name: str = "history") -> str:
    """DOT text for an already built :class:`Timeline`."""
    import graphviz  # drawing only: not a cost of `import lgnb`

    dot = graphviz.Digraph(name=graphviz.escape(name))
    dot.attr(rankdir=rankdir, bgcolor="transparent", fontname=FONT, nodesep="0.25", ranksep="0.35")
    dot.attr("node", fontname=FONT, fontsize="11", shape="box", style="rounded,filled",
             fillcolor="#f4f6fb", color="#8a94a6", margin="0.12,0.05", height="0.3")
    dot.attr("edge", color="#8a94a6", arrowsize="0.6")
    for c in t.checkpoints:
        attrs: dict[str, str] = {"id": c.dot_id}
        if c.source in ("update", "fork") or c.fork:
            attrs.update(fillcolor="#f3e8ff", color="#7c3aed")
        if c.source == "input":
            attrs.update(fillcolor="#e5e7eb")
        if c.interrupts:
            attrs.update(fillcolor="#dbeafe", color="#1d4ed8", peripheries="2")
        if c.latest:
            attrs.update(penwidth="2.2", color="#047857", fillcolor="#d1fae5")
        if c.current:
            attrs.update(penwidth="2.6", color="#d97706", fillcolor="#fde68a")
        label = "\\n".join(_text(line) for line in label_lines(c))
        dot.node(c.dot_id.replace("-", "_"), label=graphviz.nohtml(label), **attrs)
    for seg in t.segments:
        attrs = {"id": seg.dot_id, "style": "rounded,dashed,filled", "fillcolor": "#ffffff"}
        if seg.interrupts:
            attrs.update(color="#1d4ed8")
        label = "\\n".join(_text(line) for line in segment_lines(seg))
        dot.node(seg.dot_id.replace("-", "_"), label=graphviz.nohtml(label), **attrs)
    ids = {c.id: c.dot_id.replace("-", "_") for c in t.checkpoints}
    ids.update({s.id: s.dot_id.replace("-", "_") for s in t.segments})
    for link in t.links:
        attrs = {"id": link.dot_id}
        if link.fork:
            attrs.update(color="#7c3aed", style="dashed", penwidth="1.4")
        dot.edge(ids[link.source], ids[link.target], **attrs)
    return dot.source


def history_to_dot(snapshots: Iterable[Any], *, current: str | None = None, rankdir: str = "LR") -> str:
    """DOT text of a thread's checkpoint history (``get_state_history``'s snapshots).

    One node per checkpoint (step, source, the `next` nodes, interrupts), edges parent →
    child, so forks appear as branches; the latest checkpoint (green) and `current` (a
    checkpoint id, amber) are highlighted, checkpoints with interrupts are blue with a
    double border, forked checkpoints purple with a dashed edge.
    """
    return timeline_to_dot(timeline(snapshots, current=current), rankdir=rankdir)


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and "type" in value and "content" in value


def _message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_message(v) for v in value)


def _message_key(msg: Mapping[str, Any], index: int) -> str:
    return str(msg.get("id") or f"#{index}:{msg.get('type')}:{msg.get('content')!r}")


def checkpoint_diff(before: Any, after: Any) -> dict[str, Any]:
    """What changed from one checkpoint's values to another's (both as JSON, see `jsonable`).

    ``{"changed": [{"key", "before", "after"}], "added": [{"key", "after"}],
    "removed": [{"key", "before"}], "messages": [{"key", "added": [...], "removed": [...],
    "replaced": [{"before", "after"}]}], "same": [keys]}``. Lists of messages are compared
    by message id (``add_messages`` semantics: append, or replace by id).
    """
    before = before if isinstance(before, Mapping) else {"value": before}
    after = after if isinstance(after, Mapping) else {"value": after}
    out: dict[str, Any] = {"changed": [], "added": [], "removed": [], "messages": [], "same": []}
    for key in [*before, *(k for k in after if k not in before)]:
        if key not in after:
            out["removed"].append({"key": key, "before": before[key]})
        elif key not in before:
            out["added"].append({"key": key, "after": after[key]})
            if _message_list(after[key]):
                out["messages"].append({"key": key, "added": list(after[key]), "removed": [], "replaced": []})
        elif before[key] == after[key]:
            out["same"].append(key)
        elif (_message_list(before[key]) or before[key] in ([], None)) and _message_list(after[key]) \
                or _message_list(before[key]) and after[key] in ([], None):
            old = {_message_key(m, i): m for i, m in enumerate(before[key] or [])}
            new = {_message_key(m, i): m for i, m in enumerate(after[key] or [])}
            out["messages"].append({
                "key": key,
                "added": [m for k, m in new.items() if k not in old],
                "removed": [m for k, m in old.items() if k not in new],
                "replaced": [{"before": old[k], "after": m} for k, m in new.items() if k in old and old[k] != m],
            })
        else:
            out["changed"].append({"key": key, "before": before[key], "after": after[key]})
    return out

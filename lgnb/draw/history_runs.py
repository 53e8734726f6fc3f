"""Linear runs of a checkpoint timeline drawn as one node, so thousands of checkpoints draw fast.

A thread of 5,000 super-steps is a chain of 5,000 checkpoints; Graphviz lays out such a
chain in seconds and nobody reads it. :func:`collapse` keeps every checkpoint someone
looks at — the first one, branch points and their children, the latest, the selected one,
the ones revealed by expanding — and draws the middle of each long linear run between
them as one :class:`Segment` ("steps 12–4,987 · 4,976 checkpoints"). Expanding a segment
(:func:`reveal`) shows all of it when it is short, else a few evenly spaced checkpoints
that split it into shorter segments: any checkpoint of a 5,000-step run is three clicks
away, and no click adds more than `EXPAND_ALL` nodes to the drawing.

If a timeline still has more than `max_drawn` nodes (many branches), its oldest drawn
checkpoints are folded into one "hidden" node that says how many it holds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lgnb.draw.history import Timeline

#: a linear run shorter than this is drawn in full
MIN_RUN = 6
#: checkpoints kept visible at the old and new end of a collapsed run
HEAD, TAIL = 1, 1
#: a segment of at most this many checkpoints expands in full; a longer one into landmarks
EXPAND_ALL = 100
LANDMARKS = 8
#: nodes drawn at most (checkpoints + segments); the oldest beyond are folded
MAX_DRAWN = 400


@dataclass(frozen=True)
class Segment:
    """Checkpoints drawn as one node: a linear run (``kind="run"``, expandable), or the
    oldest checkpoints beyond the drawing's cap (``kind="hidden"``)."""

    id: str  # "run:<first checkpoint id>" / "hidden:<first checkpoint id>"
    dot_id: str
    ids: tuple[str, ...]  # oldest first
    first_step: int | None
    last_step: int | None
    interrupts: int  # checkpoints of the segment with interrupts
    kind: str = "run"

    def to_json(self) -> dict[str, object]:
        """What the page needs (not the ids: a segment may hold thousands)."""
        return {"id": self.id, "dot_id": self.dot_id, "kind": self.kind, "count": len(self.ids),
                "first": self.ids[0], "last": self.ids[-1], "first_step": self.first_step,
                "last_step": self.last_step, "interrupts": self.interrupts}


def _children(t: Timeline) -> dict[str, list[str]]:
    kids: dict[str, list[str]] = {}
    for c in t.checkpoints:
        if c.parent is not None:
            kids.setdefault(c.parent, []).append(c.id)
    return kids


def collapse(t: Timeline, *, keep: Iterable[str] = (), min_run: int = MIN_RUN,
             max_drawn: int = MAX_DRAWN) -> Timeline:
    """The timeline to draw: `t` with the middle of each linear run of at least `min_run`
    checkpoints folded into a :class:`Segment` (checkpoints in `keep` stay drawn)."""
    from lgnb.draw.history import Link, Timeline

    keep = set(keep)
    kids = _children(t)
    by_id = {c.id: c for c in t.checkpoints}

    def collapsible(cid: str) -> bool:
        c = by_id[cid]
        return (c.parent is not None and len(kids.get(c.parent, ())) == 1 and len(kids.get(cid, ())) == 1
                and not c.latest and not c.current and cid not in keep)

    folded: dict[str, str] = {}  # checkpoint id -> segment id
    segments: list[Segment] = []
    numbers = itertools.count()

    def fold(ids: list[str], kind: str) -> None:
        first, last = by_id[ids[0]], by_id[ids[-1]]
        seg = Segment(id=f"{kind}:{ids[0]}", dot_id=f"lgnb-hs{next(numbers)}", ids=tuple(ids),
                      first_step=first.step, last_step=last.step,
                      interrupts=sum(1 for i in ids if by_id[i].interrupts), kind=kind)
        segments.append(seg)
        folded.update(dict.fromkeys(ids, seg.id))

    for c in t.checkpoints:
        if not collapsible(c.id) or collapsible(c.parent):  # type: ignore[arg-type]
            continue  # not the start of a run
        run = [c.id]
        while collapsible(nxt := kids[run[-1]][0]):
            run.append(nxt)
        middle = run[HEAD:len(run) - TAIL] if len(run) >= min_run else []
        if len(middle) >= 2:
            fold(middle, "run")

    drawn = [c for c in t.checkpoints if c.id not in folded]
    excess = len(drawn) + len(segments) - max_drawn
    if excess > 0:  # the oldest nodes (checkpoints or runs) into one
        order = {c.id: i for i, c in enumerate(t.checkpoints)}
        units = [[c.id] for c in drawn if not (c.latest or c.current or c.id in keep)]
        units += [list(s.ids) for s in segments]
        hide = sorted(units, key=lambda ids: order[ids[0]])[: excess + 1]
        gone = {ids[0] for ids in hide}
        segments[:] = [s for s in segments if s.ids[0] not in gone]
        folded = {i: s.id for s in segments for i in s.ids}
        fold(sorted((i for ids in hide for i in ids), key=order.__getitem__), "hidden")
        drawn = [c for c in drawn if c.id not in folded]

    def node(cid: str | None) -> str | None:
        return None if cid is None else folded.get(cid, cid)

    links: list[Link] = []
    pairs: set[tuple[str, str]] = set()
    for c in t.checkpoints:
        src, dst = node(c.parent), node(c.id)
        if src is None or dst is None or src == dst or (src, dst) in pairs:
            continue
        pairs.add((src, dst))
        links.append(Link(source=src, target=dst, dot_id=f"lgnb-hl{len(links)}", fork=c.fork and dst == c.id))
    return Timeline(checkpoints=drawn, links=links, latest=t.latest, current=t.current,
                    branch_points=list(t.branch_points), segments=segments)


def reveal(segment: Segment) -> list[str]:
    """The checkpoints to draw when `segment` is expanded: all of a short one, else
    `LANDMARKS` evenly spaced ones (the rest then collapses between them)."""
    ids = segment.ids
    if len(ids) <= EXPAND_ALL:
        return list(ids)
    step = math.ceil(len(ids) / (LANDMARKS + 1))
    return [ids[i] for i in range(step, len(ids) - 1, step)][:LANDMARKS]

"""The checkpoints a history view has read: newest first, a page at a time, bounded.

A view keeps, per checkpoint, only what the timeline draws (:class:`Slim`: config,
parent, metadata, time, next nodes, how many interrupts) — never the values, which it
reads again, through the reader's cache, for the checkpoint clicked. The first read and
each "load older" read `PAGE` checkpoints; a refresh (a followed run's step, the refresh
button) re-reads the newest `REFRESH_WINDOW` and whatever is newer than what is known
(new checkpoints, forks included, have the greatest ids). At most ``limit`` (the
`history(limit=...)` argument) and never more than `MAX_LOADED` checkpoints are kept:
the oldest go first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lgnb.draw.history import checkpoint_id

#: checkpoints read at first and by each "load older"
PAGE = 500
#: newest checkpoints read again by a refresh (older ones do not change)
REFRESH_WINDOW = 50
#: checkpoints one view keeps at most (limit=None)
MAX_LOADED = 20_000


class Slim:
    """What the timeline needs of a StateSnapshot (attribute names as on the snapshot)."""

    __slots__ = ("config", "parent_config", "metadata", "created_at", "next", "interrupts", "tasks")

    def __init__(self, snap: Any) -> None:
        self.config = _ids_only(getattr(snap, "config", None))
        self.parent_config = _ids_only(getattr(snap, "parent_config", None))
        meta = getattr(snap, "metadata", None) or {}
        self.metadata = {k: meta[k] for k in ("step", "source") if k in meta}  # what is drawn
        self.created_at = getattr(snap, "created_at", None)
        self.next = tuple(str(n) for n in getattr(snap, "next", None) or ())
        n = len(getattr(snap, "interrupts", None) or ())
        if not n:
            n = sum(len(getattr(t, "interrupts", None) or ()) for t in getattr(snap, "tasks", None) or ())
        self.interrupts = (None,) * n  # only the count is drawn
        self.tasks = ()


def _ids_only(config: Any) -> dict[str, Any] | None:
    if not isinstance(config, dict):
        return None
    conf = config.get("configurable") or {}
    return {"configurable": {k: conf[k] for k in ("thread_id", "checkpoint_ns", "checkpoint_id") if k in conf}}


class HistoryPages:
    """The loaded checkpoints of one thread (see the module docstring)."""

    def __init__(self, reader: Any, *, limit: int | None) -> None:
        self.reader = reader
        self.limit = limit
        self.records: dict[str, Slim] = {}
        #: a page came back full, or old checkpoints were dropped: there may be older ones
        self.has_older = False

    @property
    def cap(self) -> int:
        """How many checkpoints this view keeps at most."""
        return MAX_LOADED if self.limit is None else max(0, min(int(self.limit), MAX_LOADED))

    @property
    def at_cap(self) -> bool:
        return len(self.records) >= self.cap

    def oldest(self) -> str | None:
        return min(self.records) if self.records else None

    def _read(self, *, before: str | None, limit: int) -> Iterator[Slim]:
        for snap in self.reader.page(before=before, limit=limit):
            if checkpoint_id(getattr(snap, "config", None)) is None:
                raise ValueError(f"lgnb.history: a snapshot without a checkpoint id in its config: {snap!r:.200}")
            yield Slim(snap)

    def _keep(self, slim: Slim) -> bool:
        """Store `slim`; False when it was already known."""
        cid = checkpoint_id(slim.config)
        known = cid in self.records
        self.records[cid] = slim  # type: ignore[index]
        return not known

    def _trim(self) -> None:
        if len(self.records) > self.cap:
            for cid in sorted(self.records)[: len(self.records) - self.cap]:
                del self.records[cid]
            self.has_older = True

    def load_first(self) -> int:
        """Read the newest page (forgetting what was read before)."""
        self.records.clear()
        want = min(PAGE, self.cap)
        got = sum(self._keep(s) for s in self._read(before=None, limit=want)) if want else 0
        self.has_older = want > 0 and got >= want
        return got

    def load_older(self) -> int:
        """Read the page before the oldest loaded checkpoint; how many were new."""
        room = self.cap - len(self.records)
        if room <= 0 or not self.records:
            return 0
        want = min(PAGE, room)
        read = [self._keep(s) for s in self._read(before=self.oldest(), limit=want)]
        self.has_older = len(read) >= want
        return sum(read)

    def refresh(self) -> int:
        """Read the newest checkpoints again, and all newer than the known ones; how many are new."""
        if not self.records:
            return self.load_first()
        new, before = 0, None
        while True:
            page = list(self._read(before=before, limit=REFRESH_WINDOW))
            fresh = [self._keep(s) for s in page]
            new += sum(fresh)
            if len(page) < REFRESH_WINDOW or not all(fresh) or len(self.records) > 2 * self.cap:
                break
            before = checkpoint_id(page[-1].config)  # all new: there may be more new ones
        self._trim()
        return new

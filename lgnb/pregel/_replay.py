"""Which checkpoint a subgraph starts from: its latest, an addressed one, or (while its
root replays an earlier checkpoint) the one it had before the replayed point.

When a thread is time-travelled (`invoke(None, {"configurable": {"checkpoint_id": ...}})`)
the subgraphs that run again must see the state they had *at that point of the timeline*,
not the state a later run left behind. The root loop records a `ReplayBound` (the replayed
checkpoint's id, or for a fork made by `update_state` the checkpoint it was forked from);
the first run of each subgraph namespace in that replay starts from its newest checkpoint
saved before the bound, and runs its input afresh (answered interrupts ask again). Later
runs of the same namespace (a subgraph called in a loop) load their latest checkpoint,
which this replay just wrote.

A config taken from `get_state(subgraphs=True)` addresses a subgraph's own checkpoint
through `checkpoint_map`: that subgraph starts from exactly that checkpoint, time-travelled.

`plan_load` decides (pure); `loading` asks for the saver I/O (a `_program` program).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from lgnb._internal.constants import CONF
from lgnb.pregel._options import saver_config
from lgnb.pregel._program import Program, saver_request

__all__ = ("ReplayBound", "LoadPlan", "plan_load", "loading", "superseding")


@dataclass
class ReplayBound:
    """A replay in progress: subgraphs load what they saved before `checkpoint_id`."""

    checkpoint_id: str
    visited: set[str] = field(default_factory=set)

    def first_visit(self, ns: str) -> bool:
        """True the first time this replay runs the subgraph at `ns` (task ids ignored,
        so a subgraph run again in a loop counts as the same one)."""
        stable = ns.rsplit(":", 1)[0] if ":" in ns else ns
        if stable in self.visited:
            return False
        self.visited.add(stable)
        return True


@dataclass(frozen=True)
class LoadPlan:
    """How a nested loop finds its saved checkpoint, and whether it time-travels."""

    how: Literal["latest", "exact", "before"]
    config: dict[str, Any]
    before: str | None = None

    @property
    def time_travel(self) -> bool:
        return self.how != "latest"


def plan_load(config: dict[str, Any], ns: str, replay: ReplayBound | None) -> LoadPlan:
    """The checkpoint a nested loop at `ns` with run config `config` starts from."""
    conf = config.get(CONF) or {}
    cmap = conf.get("checkpoint_map") or {}
    base = saver_config(config)
    if ns in cmap and cmap[ns]:
        return LoadPlan("exact", {CONF: {**base[CONF], "checkpoint_id": cmap[ns]}})
    if replay is not None and replay.first_visit(ns):
        return LoadPlan("before", base, replay.checkpoint_id)
    return LoadPlan("latest", base)


def loading(saver: Any, plan: LoadPlan) -> Program[Any]:
    """The CheckpointTuple `plan` names (None: start empty)."""
    if plan.how == "before":
        before = {CONF: {"checkpoint_id": plan.before}}
        found = yield saver_request(saver, "list", plan.config, before=before, limit=1)
        return found[0] if found else None
    return (yield saver_request(saver, "get_tuple", plan.config))


def superseding(saver: Any, config: dict[str, Any], saved: Any) -> Program[bool]:
    """Whether the thread has moved past `saved`, the checkpoint `config` addressed by
    `checkpoint_id` (it may then have children, which read what is stored on it).

    A checkpoint with a child is never the thread's latest, so none is missed; the leaf
    of an abandoned branch counts too (telling it apart would mean listing the thread)."""
    if saved is None or not (config.get(CONF) or {}).get("checkpoint_id"):
        return False
    latest_config = {**config, CONF: {**config[CONF], "checkpoint_id": None}}
    latest = yield saver_request(saver, "get_tuple", latest_config)
    return latest is not None and latest.checkpoint["id"] != saved.checkpoint["id"]

"""Builds the `"pregel"` stream mode's records (see `records.py`) from a Loop.

A `Recorder` exists only on loops whose run asked for the mode (`loop.recorder` is None
otherwise), so the loop's hooks cost one attribute check per step / per task without it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import ERROR, INTERRUPT, NO_WRITES, PUSH, SPECIAL_WRITES
from lgnb.channels.base import MISSING as _MISSING_CHECKPOINT
from lgnb.errors import InvalidUpdateError
from lgnb.pregel._algo import task_sort_key
from lgnb.pregel.records import reducer_name, to_jsonable

if TYPE_CHECKING:
    from lgnb.pregel._loop import Loop
    from lgnb.pregel._task import Task

__all__ = ("Recorder",)


def _jsonable_path(path: Sequence[Any]) -> list[Any]:
    """The task's path as LangGraph shows it (`get_state().tasks[].path`,
    `langgraph_path`): a Send's task ends in False, a `@task` call's already in True."""
    if path and path[0] == PUSH and path[-1] is not True:
        path = (*path, False)
    return [p if isinstance(p, (str, int, bool)) or p is None else to_jsonable(p) for p in path]


class _Update:
    """What `before` captured for one update phase."""

    __slots__ = ("tasks", "writes", "before", "versions")

    def __init__(self) -> None:
        self.tasks: list[Any] = []
        self.writes: dict[str, list[dict[str, Any]]] = {}
        self.before: dict[str, tuple[bool, Any]] = {}
        self.versions: dict[str, Any] = {}


class Recorder:
    """One loop's record builder."""

    __slots__ = ("loop", "started", "done", "order", "planned")

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self.started: dict[str, float] = {}
        self.done: dict[str, dict[str, Any]] = {}
        self.order: dict[str, int] = {}
        self.planned = False

    def _emit(self, record: dict[str, Any]) -> None:
        self.loop.emit("pregel", record)

    # ------------------------------------------------------------------ plan
    def plan(self) -> None:
        """The step's tasks are planned (and restored ones given their saved writes)."""
        loop = self.loop
        cv = loop.versions.versions
        seen_all = loop.versions.seen
        channels = loop.channels
        tasks = []
        self.done = {}
        self.started = {}
        self.order = {}
        for i, task in enumerate(loop.tasks.values()):
            self.order[task.id] = i
            path = task.path
            if path and path[0] == PUSH:
                triggers: list[dict[str, Any]] = []
                send = {"node": task.name, "arg": to_jsonable(task.input)}
            else:
                send = None
                seen = seen_all.get(task.name)
                triggers = [
                    {"channel": c, "version": cv.get(c)}
                    for c in task.node.triggers
                    if c in channels
                    and channels[c].is_available()
                    and (seen is None or (c in cv and (c not in seen or cv[c] > seen[c])))
                ]
            tasks.append(
                {
                    "id": task.id,
                    "node": task.name,
                    "triggers": triggers,
                    "send": send,
                    "path": _jsonable_path(path),
                }
            )
            if task.writes:  # saved before an interrupt: it does not run again
                self.done[task.id] = self._executed(task, task.writes, restored=True)
        self.planned = True
        self._emit({"kind": "plan", "step": loop.step, "ns": loop.ns, "tasks": tasks})

    # ------------------------------------------------------------------ execute
    def start(self, task: Task) -> None:
        self.started[task.id] = time.perf_counter()

    def _executed(
        self, task: Task, writes: Sequence[tuple[str, Any]], *, restored: bool = False, cached: bool = False
    ) -> dict[str, Any]:
        shown: list[list[Any]] = []
        error = None
        interrupts: list[Any] = []
        for c, v in writes:
            if c == ERROR:
                error = f"{type(v).__name__}: {v}" if isinstance(v, BaseException) else str(v)
            elif c == INTERRUPT:
                for i in v if isinstance(v, (tuple, list)) else (v,):
                    interrupts.append(to_jsonable(getattr(i, "value", i)))
            elif c != NO_WRITES:
                shown.append([c, to_jsonable(v)])
        t0 = self.started.pop(task.id, None)
        record: dict[str, Any] = {
            "id": task.id,
            "node": task.name,
            "writes": shown,
            "duration_ms": None if t0 is None else round((time.perf_counter() - t0) * 1000, 3),
            "error": error,
        }
        if interrupts:
            record["interrupts"] = interrupts
        if restored:
            record["restored"] = True
        if cached:
            record["cached"] = True
        return record

    def task_done(self, task: Task, writes: Sequence[tuple[str, Any]], cached: bool) -> None:
        self.done[task.id] = self._executed(task, writes, cached=cached)

    def execute(self) -> None:
        """The step's tasks are done (or the step stopped): emit what ran, in plan order."""
        if not self.planned:
            return
        self.planned = False
        order = self.order
        n = len(order)
        done = sorted(self.done.values(), key=lambda r: order.get(r["id"], n))
        self.done = {}
        loop = self.loop
        self._emit({"kind": "execute", "step": loop.step, "ns": loop.ns, "tasks": done})

    def step_stopped(self) -> None:
        """The step ended without a barrier (an interrupt or an error)."""
        if self.planned and self.done:
            self.execute()
        self.planned = False

    # ------------------------------------------------------------------ update
    def before(self, tasks: Sequence[Any]) -> _Update:
        """Capture, before the barrier, the values and versions of the channels it may
        change: those written, the tasks' triggers (consumed), the live ephemeral ones."""
        loop = self.loop
        channels = loop.channels
        up = _Update()
        up.tasks = sorted(tasks, key=task_sort_key) if len(tasks) > 1 else list(tasks)
        for task in up.tasks:
            tid = getattr(task, "id", None)
            for c, v in task.writes:
                if c in channels:
                    up.writes.setdefault(c, []).append(
                        {"task_id": tid, "node": task.name, "value": to_jsonable(v)}
                    )
        touched = set(up.writes)
        for task in up.tasks:
            touched.update(c for c in task.triggers if c in channels)
        touched |= loop.live_ephemeral
        touched.update(loop.graph.finish_channels)
        cv = loop.versions.versions
        for c in touched:
            ch = channels[c]
            avail = ch.is_available()
            up.before[c] = (avail, to_jsonable(ch.get()) if avail else None)
            up.versions[c] = cv.get(c)
        return up

    def update(self, up: _Update, source: str, error: BaseException | None = None) -> None:
        """Emit the update record (after the barrier, or when it failed with `error`)."""
        loop = self.loop
        if source == "loop":
            self.execute()
        channels = loop.channels
        cv = loop.versions.versions
        state_keys = loop.graph.state_key_set
        rows = []
        if error is None:
            for c, (had, before) in up.before.items():
                written = up.writes.get(c)
                if not written and cv.get(c) == up.versions[c]:
                    continue
                ch = channels[c]
                has = ch.is_available()
                rows.append(
                    {
                        "channel": c,
                        "reducer": reducer_name(ch),
                        "before": before,
                        "had_value": had,
                        "writes": written or [],
                        "after": to_jsonable(ch.get()) if has else None,
                        "has_value": has,
                        "version": cv.get(c),
                        "internal": c not in state_keys,
                    }
                )
            # state keys first, in the graph's order; then internal channels by name
            order = {k: i for i, k in enumerate(loop.graph.state_keys)}
            rows.sort(key=lambda r: (0, order[r["channel"]], "") if r["channel"] in order else (1, 0, r["channel"]))
        err = None if error is None else self._error(up, error)
        if not rows and err is None and source != "loop":
            return  # a resume's answer only: no channel changed
        self._emit(
            {
                "kind": "update",
                "step": loop.step,
                "ns": loop.ns,
                "source": source,
                "channels": rows,
                "error": err,
            }
        )

    def _error(self, up: _Update, error: BaseException) -> dict[str, Any]:
        """Which channel refused its writes: found again on copies of the channels as
        they were (cold path: the run is failing)."""
        loop = self.loop
        channel = None
        writes: list[dict[str, Any]] = []
        if isinstance(error, InvalidUpdateError):
            spec = loop.graph.channels
            raw: dict[str, list[Any]] = {}
            for task in up.tasks:
                for c, v in task.writes:
                    if c in spec and c not in SPECIAL_WRITES:
                        raw.setdefault(c, []).append(v)
            for c, vals in raw.items():
                if len(vals) < 2:
                    continue
                try:
                    fresh = spec[c].from_checkpoint(_MISSING_CHECKPOINT)
                    fresh.update(vals)
                except InvalidUpdateError:
                    channel = c
                    writes = up.writes.get(c, [])
                    break
                except Exception:  # noqa: BLE001 - only the failing channel matters here
                    continue
        return {
            "type": type(error).__name__,
            "message": str(error),
            "channel": channel,
            "writes": writes,
        }

    # ------------------------------------------------------------------ checkpoint
    def checkpoint(self, metadata: dict[str, Any]) -> None:
        loop = self.loop
        self._emit(
            {
                "kind": "checkpoint",
                "step": metadata.get("step"),
                "ns": loop.ns,
                "id": loop.checkpoint_id,
                "source": metadata.get("source"),
            }
        )


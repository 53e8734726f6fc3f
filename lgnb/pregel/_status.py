"""What the saved writes of a step say about each task: finished, interrupted, failed.

A task is finished iff it recorded an output write (a channel write or the NO_WRITES
marker); INTERRUPT, RESUME and ERROR writes only describe what happened to it. The
loop (which tasks keep their writes on resume) and `get_state` (next, interrupts,
results) read task status only through `read_task_statuses`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lgnb._internal.constants import ERROR, INTERRUPT, NULL_TASK_ID, RESUME

__all__ = ("CONTROL_WRITES", "TaskStatus", "read_task_statuses")

CONTROL_WRITES = frozenset((ERROR, INTERRUPT, RESUME, "__error_source_node__"))


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """One task's outcome, read from the writes saved for its step."""

    output: tuple[tuple[str, Any], ...] = ()
    interrupts: tuple[Any, ...] = ()
    error: BaseException | None = None

    @property
    def finished(self) -> bool:
        return bool(self.output)

    @property
    def pending_interrupts(self) -> tuple[Any, ...]:
        """Interrupts still waiting for an answer (none once the task finished)."""
        return () if self.finished else self.interrupts


def read_task_statuses(pending: Iterable[tuple[str, str, Any]]) -> dict[str, TaskStatus]:
    """Status of every task that recorded writes (the null task's input writes excluded)."""
    output: dict[str, list[tuple[str, Any]]] = {}
    interrupts: dict[str, list[Any]] = {}
    errors: dict[str, BaseException] = {}
    for tid, chan, value in pending:
        if tid == NULL_TASK_ID:
            continue
        output.setdefault(tid, [])
        if chan == INTERRUPT:
            interrupts.setdefault(tid, []).extend(
                value if isinstance(value, (list, tuple)) else [value]
            )
        elif chan == ERROR:
            errors.setdefault(tid, value)
        elif chan not in CONTROL_WRITES:
            output[tid].append((chan, value))
    return {
        tid: TaskStatus(tuple(out), tuple(interrupts.get(tid, ())), errors.get(tid))
        for tid, out in output.items()
    }

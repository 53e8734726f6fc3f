"""Payloads of the `tasks` / `debug` stream modes, as `langgraph.pregel.debug` builds them.

`map_debug_tasks` (a task starting), `map_debug_task_results` (a task finished) and
`map_task_result_writes` (writes folded by channel) take anything shaped like a task:
`id`, `name`, `input`, `triggers`, `config`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import EXCLUDED_METADATA_KEYS

from lgnb._internal.constants import TAG_HIDDEN
from lgnb.pregel._io import result_writes, task_result_payload
from lgnb.types import TaskPayload, TaskResultPayload

__all__ = (
    "get_bolded_text",
    "get_colored_text",
    "is_multiple_channel_write",
    "map_debug_task_results",
    "map_debug_tasks",
    "map_task_result_writes",
    "task_metadata",
    "user_tags",
)


def user_tags(tags: Sequence[str] | None) -> list[str] | None:
    """`tags` without LangChain's internal `seq:step:N` markers; None when none remain."""
    if not tags:
        return None
    kept = [t for t in tags if not t.startswith("seq:step")]
    return kept or None


def map_debug_tasks(tasks: Iterable[Any]) -> Iterator[TaskPayload]:
    """One "task started" payload per task not tagged hidden.

    The task config's metadata rides along under `metadata`, minus the engine's own keys
    (`langgraph_*`, `thread_id`, `checkpoint_*`, which repeat the task's fields), with the
    user tags under `metadata["tags"]`; no `metadata` key when nothing is left.
    """
    for task in tasks:
        config = task.config
        if config is not None and TAG_HIDDEN in (config.get("tags") or ()):
            continue
        payload: TaskPayload = {
            "id": task.id,
            "name": task.name,
            "input": task.input,
            "triggers": task.triggers,
        }
        if config is not None and (metadata := task_metadata(config)):
            payload["metadata"] = metadata
        yield payload


def task_metadata(config: Mapping[str, Any]) -> dict[str, Any]:
    """A task config's metadata as a task payload carries it: without the engine's own keys
    (`langgraph_*`, `thread_id`, `checkpoint_*`), with the user tags under `tags`."""
    metadata = {
        k: v for k, v in (config.get("metadata") or {}).items() if k not in EXCLUDED_METADATA_KEYS
    }
    if (tags := user_tags(config.get("tags"))) is not None:
        metadata["tags"] = tags
    return metadata


def is_multiple_channel_write(value: Any) -> bool:
    """Whether `value` is the `{"$writes": [...]}` fold of several writes to one channel."""
    return isinstance(value, dict) and isinstance(value.get("$writes"), list)


def map_task_result_writes(writes: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """`{channel: value}`; a channel written several times becomes `{"$writes": [...]}`."""
    return result_writes(writes)


def map_debug_task_results(
    task_tup: tuple[Any, Sequence[tuple[str, Any]]],
    stream_keys: str | Sequence[str],
) -> Iterator[TaskResultPayload]:
    """The "task finished" payload of `(task, writes)`: error, result (the writes to
    `stream_keys`), interrupts."""
    task, writes = task_tup
    yield task_result_payload(task, writes, stream_keys)  # type: ignore[misc]


_COLORS = {
    "black": "0;30", "red": "0;31", "green": "0;32", "yellow": "0;33",
    "blue": "0;34", "magenta": "0;35", "cyan": "0;36", "white": "0;37", "gray": "1;30",
}


def get_colored_text(text: str, color: str) -> str:
    """`text` in an ANSI bold-italic color (black, red, green, yellow, blue, magenta,
    cyan, white, gray)."""
    if color not in _COLORS:
        raise KeyError(f"get_colored_text: unknown color {color!r}; use one of {sorted(_COLORS)}")
    return f"\033[1;3{_COLORS[color]}m{text}\033[0m"


def get_bolded_text(text: str) -> str:
    """`text` in ANSI bold."""
    return f"\033[1m{text}\033[0m"

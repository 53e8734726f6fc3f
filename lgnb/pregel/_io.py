"""Pure mappings between channels, writes and stream payloads (values, updates, tasks)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from lgnb._internal.constants import ERROR, INTERRUPT, RETURN
from lgnb.channels.base import BaseChannel

__all__ = (
    "read_channels",
    "updates_payload",
    "task_start_payload",
    "task_result_payload",
    "result_writes",
)


def read_channels(channels: Mapping[str, BaseChannel], keys: str | Sequence[str]) -> Any:
    """The value of one channel (`keys` a str) or a dict of the available ones."""
    if isinstance(keys, str):
        ch = channels[keys]
        return ch.get() if ch.is_available() else None
    out: dict[str, Any] = {}
    for k in keys:
        ch = channels[k]
        if ch.is_available():
            out[k] = ch.get()
    return out


def updates_payload(
    name: str, writes: Sequence[tuple[str, Any]], output_keys: str | frozenset[str]
) -> dict[str, Any]:
    """`{node: update}` for the `updates` stream, LangGraph's way.

    A task that wrote nothing to the output keys gives `{node: None}`; several writes to
    one key in a task give a list of single-key dicts.
    """
    if isinstance(output_keys, str):
        for chan, value in writes:
            if chan == RETURN:
                return {name: value}
        vals = [v for c, v in writes if c == output_keys]
        return {name: vals[0] if len(vals) == 1 else (vals or None)}
    update: dict[str, Any] = {}
    count = 0
    for chan, value in writes:
        if chan in output_keys:
            update[chan] = value
            count += 1
        elif chan == RETURN:
            return {name: value}
    if not count:
        return {name: None}
    if len(update) != count:
        return {name: [{c: v} for c, v in writes if c in output_keys]}
    return {name: update}


def task_start_payload(task: Any, config: Mapping[str, Any]) -> dict[str, Any]:
    """The `tasks` stream event when a task starts. `config`: the task's RunnableConfig,
    whose metadata (the run's, a subgraph's `with_config`, the node's; not the engine's
    own keys) and user tags ride along under `metadata`, as in LangGraph."""
    from lgnb.pregel.debug import task_metadata

    payload = {"id": task.id, "name": task.name, "input": task.input, "triggers": task.triggers}
    if metadata := task_metadata(config):
        payload["metadata"] = metadata
    return payload


def result_writes(writes: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Fold writes into `{channel: value}`; repeated channels become `{"$writes": [...]}`."""
    result: dict[str, Any] = {}
    for channel, value in writes:
        existing = result.get(channel)
        if existing is not None:
            if isinstance(existing, dict) and isinstance(existing.get("$writes"), list):
                existing["$writes"].append(value)
            else:
                result[channel] = {"$writes": [existing, value]}
        else:
            result[channel] = value
    return result


def task_result_payload(
    task: Any, writes: Sequence[tuple[str, Any]], stream_keys: str | Sequence[str]
) -> dict[str, Any]:
    """The `tasks` stream event when a task finishes (result, error, interrupts)."""
    keys = [stream_keys] if isinstance(stream_keys, str) else stream_keys
    return {
        "id": task.id,
        "name": task.name,
        "error": next((v for c, v in writes if c == ERROR), None),
        "result": result_writes([(c, v) for c, v in writes if c in keys or c == RETURN]),
        "interrupts": [
            asdict(i)
            for c, v in writes
            if c == INTERRUPT
            for i in (v if isinstance(v, Sequence) else [v])
        ],
    }

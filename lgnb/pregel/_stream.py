"""Shaping queued `(namespace, mode, payload)` events into what `stream()` yields.

v1: the payload alone (one mode), `(mode, payload)` (a list of modes), `(ns, payload)` /
`(ns, mode, payload)` with `subgraphs=True`. v2: `{"type", "ns", "data"}` dicts, with
`values` parts carrying `interrupts` separately and the data coerced to the output type,
the state `values` of `checkpoints` / `debug` checkpoint payloads to the state type
(except the input checkpoint, whose channels are not all set yet).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from lgnb._internal.constants import INTERRUPT

__all__ = ("make_formatter",)


def make_formatter(
    stream_mode: str | Sequence[str],
    *,
    subgraphs: bool,
    version: str,
    print_mode: Sequence[str] = (),
    output_mapper: Callable[[Any], Any] | None = None,
    state_mapper: Callable[[Any], Any] | None = None,
) -> Callable[[tuple[tuple[str, ...], str, Any]], tuple[bool, Any]]:
    """A function from an event to `(wanted, chunk)` for this call's options.

    For the commonest call, one mode as a string, v1, no subgraphs, the function has an
    `only_mode` attribute: the payload of an event of that mode is the chunk, and the
    consumers (`drain`, `stream`) test the mode inline instead of calling the function
    per event (a live `messages` stream has an event per token)."""
    is_list = not isinstance(stream_mode, str)
    modes = set(stream_mode) if is_list else {stream_mode}
    printing = set(print_mode)

    if version != "v2" and not printing:
        # the common shapes, without per-event option checks
        if is_list and not subgraphs:

            def fmt_list(event: tuple[tuple[str, ...], str, Any]) -> tuple[bool, Any]:
                mode = event[1]
                return (True, (mode, event[2])) if mode in modes else (False, None)

            return fmt_list
        if not is_list and not subgraphs:

            def fmt_one(event: tuple[tuple[str, ...], str, Any]) -> tuple[bool, Any]:
                return (True, event[2]) if event[1] in modes else (False, None)

            fmt_one.only_mode = stream_mode  # type: ignore[attr-defined]
            return fmt_one

    def fmt(event: tuple[tuple[str, ...], str, Any]) -> tuple[bool, Any]:
        ns, mode, payload = event
        if mode in printing:
            _print(ns, mode, payload, subgraphs)
        if mode not in modes:
            return False, None
        if version == "v2":
            if mode == "values":
                interrupts: tuple = ()
                if isinstance(payload, dict) and INTERRUPT in payload:
                    payload = dict(payload)
                    interrupts = payload.pop(INTERRUPT)
                if output_mapper is not None and isinstance(payload, dict):
                    payload = output_mapper(payload)
                return True, {"type": mode, "ns": ns, "data": payload, "interrupts": interrupts}
            if state_mapper is not None and mode in ("checkpoints", "debug"):
                _coerce_checkpoint_values(payload, state_mapper)
            return True, {"type": mode, "ns": ns, "data": payload}
        if subgraphs and is_list:
            return True, (ns, mode, payload)
        if is_list:
            return True, (mode, payload)
        if subgraphs:
            return True, (ns, payload)
        return True, payload

    return fmt


def _coerce_checkpoint_values(payload: Any, mapper: Callable[[Any], Any]) -> None:
    """The state `values` of a checkpoint payload (`checkpoints` mode, or a `debug`
    event of type "checkpoint"), as the state type, in place; not the input checkpoint."""
    if not isinstance(payload, dict):
        return
    if payload.get("type") == "checkpoint" and isinstance(payload.get("payload"), dict):
        payload = payload["payload"]
    values = payload.get("values")
    if isinstance(values, dict) and "__start__" not in payload.get("next", ()):
        payload["values"] = mapper(values)


def _print(ns: tuple[str, ...], mode: str, payload: Any, subgraphs: bool) -> None:
    head = f"\033[1m[{mode}]\033[0m"
    if subgraphs and ns:
        head += f" \033[1;30;33m[graph={ns}]\033[0m"  # (LangGraph's colour codes)
    sys.stdout.write(f"{head} {payload!r}\n")

"""`ProtocolEvent`: the envelope a v3 run stream carries, and its construction.

It is lgnb's `(namespace, mode, payload)` stream envelope (the v2 stream part
`{"type", "ns", "data", "interrupts"?}`) in the shape of the LangChain streaming protocol:
`{"type": "event", "method": mode, "params": {"namespace": [...], "timestamp", "data"}}`.
The root mux numbers the events it logs (`seq`); order by `seq`, not by `timestamp`
(wall-clock milliseconds).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

__all__ = ("ProtocolEvent", "ProtocolEventParams", "protocol_event", "from_stream_part")


class ProtocolEventParams(TypedDict):
    """What an event is about: where (`namespace`), when (`timestamp`, ms), what (`data`)."""

    namespace: list[str]
    timestamp: int
    data: Any
    interrupts: NotRequired[tuple[Any, ...]]


class ProtocolEvent(TypedDict):
    """One event of a v3 run: `method` is the stream mode (or a projection's name)."""

    type: Literal["event"]
    event_id: NotRequired[str]
    seq: NotRequired[int]
    method: str
    params: ProtocolEventParams


def protocol_event(
    method: str, namespace: Any, data: Any, *, interrupts: tuple[Any, ...] | None = None
) -> ProtocolEvent:
    """An event for `data` of mode `method` emitted at `namespace` (a tuple or list)."""
    params: ProtocolEventParams = {
        "namespace": list(namespace),
        "timestamp": int(time.time() * 1000),
        "data": data,
    }
    if interrupts is not None:
        params["interrupts"] = interrupts
    return {"type": "event", "method": method, "params": params}


def from_stream_part(part: Mapping[str, Any]) -> ProtocolEvent:
    """The event for a v2 stream part (`stream(..., version="v2")` output)."""
    return protocol_event(
        part["type"], part["ns"], part["data"], interrupts=part.get("interrupts")
    )

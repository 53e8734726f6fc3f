"""Turn arbitrary Python values (state, payloads, messages) into bounded JSON for the views.

Views show values as text; they never need to round-trip. So anything unknown becomes its
`repr`, long strings and collections are cut (with a marker saying how much was cut), and
cycles cannot recurse forever (depth limit).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

MAX_STR = 4000
MAX_ITEMS = 200
MAX_DEPTH = 8


_MARK = re.compile(r"… \(\+(\d+) chars\)\Z")


def _cut(s: str, limit: int) -> str:
    """`s` cut to `limit` characters and a marker saying how many were left out. A string
    cut before (a view cuts the copy it was given) counts the characters of the original."""
    if len(s) <= limit:
        return s
    size = len(s)
    mark = _MARK.search(s, max(0, size - 40))
    if mark is not None:
        size = mark.start() + int(mark.group(1))
    return s[:limit] + f"… (+{size - limit} chars)"


def message_json(msg: Any) -> dict[str, Any]:
    """A LangChain message as {type, content, id, name, tool_calls} JSON."""
    out: dict[str, Any] = {"type": getattr(msg, "type", type(msg).__name__),
                           "content": jsonable(getattr(msg, "content", ""))}
    for attr in ("id", "name", "tool_call_id"):
        value = getattr(msg, attr, None)
        if value:
            out[attr] = str(value)
    calls = getattr(msg, "tool_calls", None)
    if calls:
        out["tool_calls"] = [jsonable(dict(c)) for c in calls]
    return out


def jsonable(value: Any, *, limit: int = MAX_STR, _depth: int = 0) -> Any:
    """Return a JSON-compatible, size-bounded rendering of `value`."""
    if value is None or isinstance(value, (bool, int, float)):
        if isinstance(value, float) and value != value:  # NaN is not JSON
            return "NaN"
        return value
    if isinstance(value, str):
        return _cut(value, limit)
    if _depth >= MAX_DEPTH:
        return _cut(repr(value), 200)
    d = _depth + 1
    if hasattr(value, "content") and hasattr(value, "type") and hasattr(value, "additional_kwargs"):
        return message_json(value)
    if isinstance(value, Mapping):
        items = list(value.items())
        out = {str(k): jsonable(v, limit=limit, _depth=d) for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            out["…"] = f"+{len(items) - MAX_ITEMS} more keys"
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        seq = list(value)
        out_list = [jsonable(v, limit=limit, _depth=d) for v in seq[:MAX_ITEMS]]
        if len(seq) > MAX_ITEMS:
            out_list.append(f"… +{len(seq) - MAX_ITEMS} more items")
        return out_list
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)},
                        limit=limit, _depth=d)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return jsonable(dump(), limit=limit, _depth=d)
        except Exception:
            pass
    if hasattr(value, "value") and type(value).__name__ == "Interrupt":
        return {"value": jsonable(value.value, limit=limit, _depth=d), "id": getattr(value, "id", None)}
    return _cut(repr(value), limit)

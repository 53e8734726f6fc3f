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


def _repr(value: Any) -> str:
    """`repr(value)`, or its type's name when its `__repr__` raises (the view shows the
    rest of the value it is part of)."""
    try:
        return repr(value)
    except Exception as exc:  # noqa: BLE001 - a user's __repr__ may raise anything
        return f"<{type(value).__name__} (its repr raised {type(exc).__name__})>"


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


def jsonable(value: Any, *, limit: int = MAX_STR, items: int = MAX_ITEMS, depth: int = MAX_DEPTH,
             _depth: int = 0) -> Any:
    """Return a JSON-compatible, size-bounded rendering of `value`: strings cut past
    `limit` characters, collections past `items` entries, nesting past `depth` levels
    shown as a repr (which also stops a cycle)."""
    if value is None or isinstance(value, (bool, int, float)):
        if isinstance(value, float) and value != value:  # NaN is not JSON
            return "NaN"
        return value
    if isinstance(value, str):
        return _cut(value, limit)
    if _depth >= depth:
        return _cut(_repr(value), 200)
    d = _depth + 1
    if hasattr(value, "content") and hasattr(value, "type") and hasattr(value, "additional_kwargs"):
        return message_json(value)
    if isinstance(value, Mapping):
        pairs = list(value.items())
        out = {str(k): jsonable(v, limit=limit, items=items, depth=depth, _depth=d) for k, v in pairs[:items]}
        if len(pairs) > items:
            out["…"] = f"+{len(pairs) - items} more keys"
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        seq = list(value)
        out_list = [jsonable(v, limit=limit, items=items, depth=depth, _depth=d) for v in seq[:items]]
        if len(seq) > items:
            out_list.append(f"… +{len(seq) - items} more items")
        return out_list
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)},
                        limit=limit, items=items, depth=depth, _depth=d)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return jsonable(dump(), limit=limit, items=items, depth=depth, _depth=d)
        except Exception:
            pass
    if hasattr(value, "value") and type(value).__name__ == "Interrupt":
        return {"value": jsonable(value.value, limit=limit, items=items, depth=depth, _depth=d),
                "id": getattr(value, "id", None)}
    return _cut(_repr(value), limit)

"""Approval forms for pending `interrupt()` payloads.

The kernel turns each pending interrupt into a small JSON form description (synced as the
run view's `forms` trait), so the browser only draws it and the rules are testable here:

  {"id": interrupt id, "node": node key or "", "fields": [{"key", "text"}] (a dict payload),
   "text": payload as text (any other payload), "actions": [{"label", "value"}],
   "free_text": whether a text answer may be sent,
   "resumable": False when the graph has no checkpointer (no buttons then; added by the run)}

Buttons: one per entry of a dict payload's ``"options"``/``"choices"`` list; else one per
value of the interrupt's JSON-schema ``response_schema`` ``enum`` (``boolean`` → yes/no);
else **Approve** → ``"approve"`` and **Reject** → ``"reject"``. Everything is text: the
browser sets it with ``textContent``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from lgnb.draw import jsonable

OPTION_KEYS = ("options", "choices")
DEFAULT_ACTIONS = [{"label": "Approve", "value": "approve"}, {"label": "Reject", "value": "reject"}]


def as_text(value: Any) -> str:
    """A string as itself; anything else as indented JSON text."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def schema_of(response_schema: Any) -> dict[str, Any] | None:
    """A JSON schema from `interrupt(..., response_schema=...)`: a dict, or a pydantic model."""
    if isinstance(response_schema, Mapping):
        return dict(response_schema)
    to_schema = getattr(response_schema, "model_json_schema", None)
    if callable(to_schema):
        try:
            schema = to_schema()
            return dict(schema) if isinstance(schema, Mapping) else None
        except Exception:  # noqa: BLE001 - a schema we cannot read only costs the buttons
            return None
    return None


def _is_list(value: Any) -> TypeGuard[Sequence[Any]]:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) > 0


def _option(option: Any) -> dict[str, Any]:
    if isinstance(option, Mapping) and "value" in option:
        label = option.get("label", option["value"])
        return {"label": label if isinstance(label, str) else as_text(label), "value": option["value"]}
    return {"label": option if isinstance(option, str) else as_text(option), "value": option}


def actions_for(value: Any, schema: Mapping[str, Any] | None) -> tuple[list[dict[str, Any]], bool]:
    """The buttons for a payload, and whether a free-text answer fits."""
    if isinstance(value, Mapping):
        for key in OPTION_KEYS:
            options = value.get(key)
            if _is_list(options):
                return [_option(o) for o in options], True
    if schema:
        enum = schema.get("enum")
        if _is_list(enum):
            return [_option(v) for v in enum], False
        if schema.get("type") == "boolean":
            return [{"label": "Yes", "value": True}, {"label": "No", "value": False}], False
    return [dict(a) for a in DEFAULT_ACTIONS], True


def form_for(interrupt: Mapping[str, Any]) -> dict[str, Any]:
    """The form of one pending interrupt (``{"id", "value", "node"?, "response_schema"?}``)."""
    value = interrupt.get("value")
    schema = schema_of(interrupt.get("response_schema"))
    actions, free_text = actions_for(value, schema)
    form: dict[str, Any] = {"id": str(interrupt.get("id") or ""), "node": str(interrupt.get("node") or ""),
                            "fields": [], "text": "", "actions": jsonable(actions), "free_text": free_text}
    if isinstance(value, Mapping):
        shown = [k for k in OPTION_KEYS if _is_list(value.get(k))][:1]  # the list that became buttons
        form["fields"] = [{"key": str(k), "text": as_text(v)} for k, v in value.items() if k not in shown]
    else:
        form["text"] = as_text(value)
    return form

"""The fork form of the history view: one field per state key, and the page's edits parsed.

The form is generated from the graph's state schema (a JSON schema per key; what has none
is edited as JSON text) and the checkpoint's values. What the page sends back is text per
field: it is parsed by the field's kind and checked against the schema here, in the kernel,
so every wrong field is named (:class:`ForkError`) and nothing reaches ``update_state``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lgnb.draw import jsonable

SCALAR_KINDS = {"string": str, "integer": int, "number": (int, float), "boolean": bool}
#: a field whose text is longer is shown, not editable in the page (fork from code)
FORM_TEXT_MAX = 100_000


_REDUCER_CHANNELS = frozenset({"BinaryOperatorAggregate", "Topic", "DeltaChannel"})
"""Channels whose updates go through a reducer (lgnb's or LangGraph's classes, and their
subclasses: lgnb's `MessagesChannel` is `add_messages`)."""


def _is_reducer(channel: Any) -> bool:
    return any(klass.__name__ in _REDUCER_CHANNELS for klass in type(channel).__mro__)


def _field_kind(schema: Mapping[str, Any] | None, value: Any) -> str:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, str) and kind in SCALAR_KINDS:
        return kind
    if kind is None and not (isinstance(schema, Mapping) and ("anyOf" in schema or "$ref" in schema)):
        for name, types in (("boolean", bool), ("string", str), ("integer", int), ("number", float)):
            if isinstance(value, types):
                return name
    return "json"


class ForkError(ValueError):
    """Edited values that cannot be sent: ``errors`` maps each field to what is wrong."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


def schema_properties(graph: Any) -> dict[str, Any]:
    """The state keys' JSON schemas (from the output schema, then the input schema)."""
    props: dict[str, Any] = {}
    for getter in ("get_output_jsonschema", "get_input_jsonschema"):
        fn = getattr(graph, getter, None)
        try:
            schema = fn() if callable(fn) else None
        except Exception:  # noqa: BLE001 - a schema we cannot read: the fields fall back to JSON
            schema = None
        if isinstance(schema, Mapping):
            defs = schema.get("$defs")
            for k, v in (schema.get("properties") or {}).items():
                if defs and isinstance(v, Mapping) and "$ref" in json.dumps(v, default=str):
                    # a nested TypedDict or model: its `$ref` points into the root's `$defs`
                    v = {**v, "$defs": defs}
                props.setdefault(str(k), v)
    return props


def fork_form(graph: Any, checkpoint_id: str, values: Any, *, raw: Any = None) -> dict[str, Any]:
    """The fork form of a checkpoint: one field per state key (from the state schema;
    ``json`` text for what has no field), and the nodes the update may be made as.

    ``{"id", "fields": [{"key", "kind", "value", "text", "reducer", "schema"}], "as_node": [...]}``;
    `kind` is string / integer / number / boolean / json. A field whose channel has a
    reducer starts empty: what is sent there goes through the reducer (appended, ...).
    A field whose text is over `FORM_TEXT_MAX` characters has ``too_big`` (its length)
    and no value or text: it is not sent to the page (fork with it from code).
    `values`: the checkpoint's values as JSON; `raw`: the same as stored. A plain field
    whose stored value is no JSON value (a datetime, bytes, a set, a tuple, an enum, a
    model...) has ``locked`` (what it holds) and no value or text: edited as text it
    would come back as a string or a list, another type than the nodes expect.
    """
    values = values if isinstance(values, Mapping) else {}
    props = schema_properties(graph)
    types = _key_types(graph)
    channels = getattr(graph, "channels", None) or {}
    keys = [*props, *(k for k in values if k not in props)]
    fields = []
    for key in keys:
        if key.startswith("__") or key.startswith("branch:"):
            continue
        reducer = _is_reducer(channels.get(key)) if isinstance(channels, Mapping) else False
        value = None if reducer else values.get(key)
        kind = _field_kind(props.get(key), values.get(key))
        if kind == "json":
            text = "" if value is None else json.dumps(value, indent=2, ensure_ascii=False)
        else:
            text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
        field = {"key": key, "kind": kind, "value": value, "text": text, "reducer": reducer,
                 "schema": jsonable(props.get(key)) if key in props else None}
        if len(text) > FORM_TEXT_MAX:
            field.update(value=None, text="", too_big=len(text))
        elif not reducer and isinstance(raw, Mapping) and key in raw and not _json_native(raw[key]):
            field.update(value=None, text="", kind="json", locked=_held(raw[key]))
        elif not reducer and (typed := _not_json_type(types.get(key))):
            # empty now (None, []), but typed so that text would give it another type
            field.update(value=None, text="", kind="json", locked=f"values of type {typed}")
        fields.append(field)
    nodes = [str(n) for n in (getattr(graph, "nodes", None) or {}) if not str(n).startswith("__")]
    return {"id": checkpoint_id, "fields": fields, "as_node": nodes}


def parse_edits(form: Mapping[str, Any], edits: Mapping[str, Any]) -> dict[str, Any] | None:
    """The values to send for the edited fields of `form` (``{key: text}``, booleans as
    true/false), validated: a :class:`ForkError` names every field that is wrong.
    Unchanged fields and empty reducer fields are left out; None when nothing changed."""
    checkpoint_id = form["id"]
    fields = {f["key"]: f for f in form["fields"]}
    errors: dict[str, str] = {}
    values: dict[str, Any] = {}
    for key, raw in edits.items():
        field = fields.get(str(key))
        if field is None:
            errors[str(key)] = "not a key of this graph's state"
            continue
        kind = field["kind"]
        if field.get("too_big"):
            errors[key] = (f"too big to edit in the page ({field['too_big']:,} characters): fork from code, "
                           f"view.fork({checkpoint_id!r}, {{{key!r}: ...}})")
            continue
        if field.get("locked"):
            errors[key] = (f"holds {field['locked']}, which text would turn into another type: fork "
                           f"from code, view.fork({checkpoint_id!r}, {{{key!r}: ...}})")
            continue
        try:
            value = _parse_field(kind, raw)
        except ValueError as exc:
            errors[key] = str(exc)
            continue
        if field["reducer"] and raw in ("", None):
            continue
        if not field["reducer"] and value == field["value"]:
            continue
        problem = _schema_problem(field.get("schema"), value)
        if problem:
            errors[key] = problem
            continue
        values[key] = value
    if errors:
        raise ForkError(errors)
    return values or None


def _json_native(value: Any) -> bool:
    """Whether `value` is JSON as it is (what the page's text gives back, same types)."""
    kind = type(value)
    if value is None or kind in (str, bool, int, float):
        return True
    if kind is list:
        return all(_json_native(v) for v in value)
    if kind is dict:
        return all(type(k) is str and _json_native(v) for k, v in value.items())
    return False


def _key_types(graph: Any) -> dict[str, Any]:
    """The state keys' annotations, from the graph's state schema (empty when unknown)."""
    import typing

    schema = getattr(getattr(graph, "builder", None), "state_schema", None)
    if schema is None:
        return {}
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, Mapping):  # a pydantic model
        return {k: f.annotation for k, f in fields.items()}
    try:
        return dict(typing.get_type_hints(schema, include_extras=True))
    except Exception:  # noqa: BLE001 - unresolvable hints: judged by value only
        return {}


def _not_json_type(tp: Any, depth: int = 0) -> str | None:
    """What in annotation `tp` the page's JSON text cannot give back (a datetime, a model,
    a set, an enum...), named; None when JSON text gives values of this type (and for
    `Any` or no annotation: the value decides)."""
    import types as pytypes
    import typing

    from typing_extensions import is_typeddict

    if tp is None or tp is typing.Any or tp is type(None) or depth > 10:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _not_json_type(args[0], depth + 1)
    if origin is typing.Union or isinstance(tp, pytypes.UnionType):
        return next((n for a in args if (n := _not_json_type(a, depth + 1))), None)
    if origin is typing.Literal:
        return None if all(type(a) in (str, int, bool, float) or a is None for a in args) else "literal value"
    if origin in (list, typing.List) or (origin is not None and getattr(origin, "__name__", "") in ("Sequence", "MutableSequence")):  # noqa: UP006
        inner = _not_json_type(args[0], depth + 1) if args else None
        return f"list of {inner}" if inner else None
    if origin in (dict, typing.Dict) or (origin is not None and getattr(origin, "__name__", "") in ("Mapping", "MutableMapping")):  # noqa: UP006
        if args and args[0] is not str:
            return f"dict keyed by {getattr(args[0], '__name__', args[0])}"
        inner = _not_json_type(args[1], depth + 1) if len(args) > 1 else None
        return f"dict of {inner}" if inner else None
    if origin is not None:
        return getattr(origin, "__name__", str(origin))
    if tp in (str, int, float, bool, list, dict):
        return None
    if is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return next((n for a in hints.values() if (n := _not_json_type(a, depth + 1))), None)
    return getattr(tp, "__name__", str(tp))


def _held(value: Any) -> str:
    """What a locked field holds, for the page: "a datetime value", "a list holding a
    bytes value"."""
    kind = type(value)
    if kind in (list, dict):
        inner = value if kind is list else value.values()
        for v in inner:
            if not _json_native(v):
                return f"a {kind.__name__} holding {_held(v)}"
    return f"a {kind.__name__} value"


def _parse_field(kind: str, raw: Any) -> Any:
    if kind == "string":
        if raw is None or isinstance(raw, str):
            return raw
        raise ValueError(f"expected text, got {type(raw).__name__}")
    if kind == "boolean":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise ValueError("expected true or false")
    if kind in ("integer", "number"):
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            value = raw
        else:
            text = str(raw).strip()
            try:
                value = int(text) if kind == "integer" else float(text)
            except ValueError:
                raise ValueError(f"not {'an integer' if kind == 'integer' else 'a number'}: {text!r}") from None
        if kind == "integer" and (not isinstance(value, int) and not float(value).is_integer()):
            raise ValueError(f"not an integer: {raw!r}")
        return int(value) if kind == "integer" else value
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


def _schema_problem(schema: Any, value: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    try:
        import jsonschema
    except ImportError:  # the form's kinds were checked already
        return None
    try:
        jsonschema.validate(value, dict(schema))
    except jsonschema.ValidationError as exc:
        return f"does not match the state schema: {exc.message}"
    except jsonschema.SchemaError:
        return None
    return None

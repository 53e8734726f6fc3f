"""Approval forms for pending `interrupt()` payloads: renderers chosen by payload shape.

The kernel turns each pending interrupt into a JSON form description (the run view's synced
`forms` trait); the browser only draws it and sends back what was picked. The kernel then
computes the resume value, validates it, and resumes keyed by interrupt id. So every rule
is here and testable without a browser. A form::

  {"id": interrupt id, "node": node key or "", "kind": renderer kind, "title": str,
   "fields": [{"key", "text"}] (a dict payload shown as text), "text": any other payload,
   "parts": [Part], "collect": bool (several parts: each gets a choice, one "Send" sends all),
   "resumable": False when the graph has no checkpointer (added by the run)}
  Part   = {"title", "description", "shown": [{"key", "text"}], "inputs": [Input],
            "choices": [Choice], "inputs_open": inputs shown before any choice}
  Choice = {"key", "label", "inputs": [names shown when chosen], "confirm": label of the
            button that sends after filling them ("" when a click sends at once)}
  Input  = {"name", "label", "type": string|text|number|integer|boolean|enum|lines|json,
            "options": [{"label", "value"}] (enum), "value": initial, "required", "group"
            (the folded nested object it belongs to, "" at top level), "description",
            "readonly": True when the value is cut (past `EDIT_MAX`): the answer keeps it whole}

The browser answers ``{"kind": "answer", "interrupt_id", "picks": [{"part", "choice",
"inputs": {name: raw}}]}``; :func:`answer_for` turns picks into ``(value, summary)`` or raises
:class:`FormInvalid` with errors per input.

Built-in renderers (first match wins; a payload ``{"kind": K, ...}`` whose K is registered
with :func:`register_form` goes to that renderer first):

- ``hitl``: LangChain v1 ``HumanInTheLoopMiddleware`` (``action_requests`` + ``review_configs``):
  one part per action request, the decisions its config allows, answered
  ``{"decisions": [...]}`` in order; edited args validated against the tool's args schema.
- ``tool_approval``: LangChain's per-call ``ToolApprovalRequest`` (``{"type": "tool_approval",
  "name", "args", ...}``): one card, the decisions its ``response_schema`` allows, answered
  with a single decision.
- ``inbox``: agent-inbox ``HumanInterrupt`` (``action_request`` + ``config``), or a list of one.
- ``schema``: a ``response_schema`` of type object (JSON Schema or a pydantic model): one input
  per property, validated with ``jsonschema`` (pydantic models with pydantic).
- ``yes_no``: a boolean schema (answers True/False) or a question that says "yes/no"
  (answers "yes"/"no").
- ``options``: an ``enum`` schema or a payload's ``options``/``choices`` list: one button each.
- ``question``: a string payload, or a dict whose ``question`` has no options: a text box.
- ``value``: anything else: Approve / Reject, or answer in words.

Everything is text: the browser sets it with ``textContent``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, is_dataclass
from typing import Any, Protocol, TypeGuard

from lgnb._internal.pydantic_loaded import is_model
from lgnb.draw import jsonable

OPTION_KEYS = ("options", "choices")
INPUT_TYPES = ("string", "text", "number", "integer", "boolean", "enum", "lines", "json")
_YES_NO = re.compile(r"\b(yes\s*/\s*no|y\s*/\s*n)\b", re.IGNORECASE)

Form = dict[str, Any]
Picks = list[dict[str, Any]]


class FormInvalid(ValueError):
    """An answer that does not fit its form: `errors` maps ``"<part>.<input>"`` to a message."""

    def __init__(self, message: str, errors: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.errors = dict(errors or {})


class BuildForm(Protocol):
    def __call__(self, payload: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any], /) -> Form: ...


class AnswerForm(Protocol):
    def __call__(self, payload: Any, form: Form, picks: Picks, context: Mapping[str, Any], /) -> tuple[Any, str]: ...


@dataclass(frozen=True)
class Renderer:
    """A form kind: `build` makes the form (``parts``, ``title``, ...) of a payload;
    `answer` turns the browser's picks into ``(resume value, summary)``; `matches` tells
    whether a payload is of this kind (besides ``{"kind": kind}``)."""

    kind: str
    build: BuildForm
    answer: AnswerForm | None = None
    matches: Callable[[Any, Mapping[str, Any]], bool] | None = None


_USER: dict[str, Renderer] = {}


def register_form(kind: str, build: BuildForm, answer: AnswerForm | None = None, *,
                  matches: Callable[[Any, Mapping[str, Any]], bool] | None = None) -> Renderer:
    """Add (or replace) a form kind. A payload ``{"kind": kind, ...}`` (or one `matches`
    accepts) is drawn by `build(payload, interrupt, context)`, which returns a form dict with
    ``parts`` (see the module doc). Without `answer`, a click answers the chosen choice's
    ``"value"``, or with inputs the dict ``{input name: parsed value}`` (dotted names nest)."""
    if not isinstance(kind, str) or not kind:
        raise ValueError("register_form: kind must be a non-empty string")
    renderer = Renderer(kind, build, answer, matches)
    _USER[kind] = renderer
    return renderer


def unregister_form(kind: str) -> None:
    """Forget the renderer `register_form` registered for `kind` (nothing if none was):
    payloads of that kind get a built-in form again."""
    _USER.pop(kind, None)


# -- small helpers -------------------------------------------------------------------
def as_text(value: Any) -> str:
    """A string as itself; anything else as indented JSON text."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(jsonable(value), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def schema_of(response_schema: Any) -> dict[str, Any] | None:
    """A JSON schema from `interrupt(..., response_schema=...)`: a dict, or a pydantic model."""
    if isinstance(response_schema, Mapping):
        return dict(response_schema)
    to_schema = getattr(response_schema, "model_json_schema", None)
    if callable(to_schema):
        try:
            schema = to_schema()
            return dict(schema) if isinstance(schema, Mapping) else None
        except Exception:  # noqa: BLE001 - a schema we cannot read only costs the fields
            return None
    return None


def _is_list(value: Any) -> TypeGuard[Sequence[Any]]:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) > 0


def _option(option: Any) -> dict[str, Any]:
    if isinstance(option, Mapping) and "value" in option:
        label = option.get("label", option["value"])
        return {"label": label if isinstance(label, str) else as_text(label), "value": _field_value(option["value"])}
    return {"label": option if isinstance(option, str) else as_text(option), "value": _field_value(option)}


EDIT_MAX = 100_000
"""Characters of a string a form shows whole: what a reviewer approves is read in full
(the other views cut at 4,000). An input's longer value (or a JSON value holding a longer
string) is shown cut and read-only, and the answer keeps it whole."""

_WHOLE = 1 << 62  # a `jsonable` limit that cuts nothing
_NESTING = 64  # how deep an input's value is kept (deeper: a repr; also stops a cycle)


def _field_value(value: Any) -> Any:
    """An input's initial value (or an option's): JSON, whole (the page's copy is cut by
    `_for_page`)."""
    return jsonable(value, limit=_WHOLE, items=_WHOLE, depth=_NESTING)


def _on_page(spec: Mapping[str, Any]) -> tuple[Any, bool]:
    """An input's value as the page gets it, and whether the page shows it cut (then the
    input is read-only, and the answer keeps the value whole, `_parse_one`): strings past
    `EDIT_MAX` characters cut; a value whose JSON is longer than that, its JSON text cut.
    A choice among options is never cut: the kernel maps the pick to its whole option."""
    value = spec.get("value")
    if spec.get("type") == "enum":
        return jsonable(value, limit=EDIT_MAX, items=_WHOLE, depth=_NESTING), False
    shown = jsonable(value, limit=EDIT_MAX, items=_WHOLE, depth=_NESTING)
    if not isinstance(shown, str) and len(json.dumps(shown, ensure_ascii=False)) > EDIT_MAX:
        return _cut_text(_json_text(value), EDIT_MAX), True
    return shown, shown != value


def _cut_text(text: str, limit: int) -> str:
    return jsonable(text, limit=limit)


def _shown(value: Mapping[str, Any], skip: Sequence[str] = ()) -> list[dict[str, str]]:
    return [{"key": str(k), "text": as_text(jsonable(v, limit=EDIT_MAX))} for k, v in value.items() if k not in skip]


def _part(**fields: Any) -> dict[str, Any]:
    part = {"title": "", "description": "", "shown": [], "inputs": [], "choices": [], "inputs_open": False}
    part.update(fields)
    return part


def _choice(key: str, label: str, inputs: Sequence[str] = (), confirm: str = "", **extra: Any) -> dict[str, Any]:
    return {"key": key, "label": label, "inputs": list(inputs), "confirm": confirm, **extra}


# -- JSON schema → inputs ----------------------------------------------------------------
def _resolve(node: Any, root: Mapping[str, Any]) -> dict[str, Any]:
    seen = 0
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and seen < 20:
        ref, seen = node["$ref"], seen + 1
        target: Any = root
        if not ref.startswith("#/"):
            return {}
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    if isinstance(node, Mapping):
        for key in ("anyOf", "oneOf"):  # Optional[X] → X
            branches = [b for b in node.get(key) or () if not (isinstance(b, Mapping) and b.get("type") == "null")]
            if len(branches) == 1 and key in node:
                merged = {**_resolve(branches[0], root), **{k: v for k, v in node.items() if k != key}}
                return merged
    return dict(node) if isinstance(node, Mapping) else {}


def _type_of(schema: Mapping[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    return t if isinstance(t, str) else ""


def schema_inputs(schema: Mapping[str, Any], initial: Mapping[str, Any] | None = None, *,
                  root: Mapping[str, Any] | None = None, prefix: str = "", group: str = "") -> list[dict[str, Any]]:
    """Inputs for an object schema's properties (nested objects flattened with dotted names
    and a `group`, folded in the browser)."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    required = set(schema.get("required") or ())
    initial = initial or {}
    out: list[dict[str, Any]] = []
    for name, raw in (schema.get("properties") or {}).items():
        prop = _resolve(raw, root)
        full = f"{prefix}{name}"
        label = str(prop.get("title") or name)
        value = initial.get(name, prop.get("default"))
        # `given`: the value is the call's own (else the schema's default, or none): an
        # input left as shown is then left out of the answer, as a user typing the call by
        # hand leaves out what they do not change (the tool gets its own default)
        base = {"name": full, "label": label, "required": name in required, "group": group,
                "description": str(prop.get("description") or ""), "given": name in initial}
        t = _type_of(prop)
        if _is_list(prop.get("enum")):
            out.append({**base, "type": "enum", "options": [_option(v) for v in prop["enum"]], "value": _field_value(value)})
        elif t == "object" and prop.get("properties"):
            out += schema_inputs(prop, value if isinstance(value, Mapping) else None, root=root,
                                 prefix=f"{full}.", group=f"{group}.{label}" if group else label)
        elif t in ("string", "number", "integer", "boolean"):
            if t == "string" and isinstance(value, str) and _multiline(value):
                t = "text"  # a one-line box would drop its line breaks
            out.append({**base, "type": t, "value": _field_value(value)})
        elif t == "array":
            items = _resolve(prop.get("items") or {}, root)
            it = _type_of(items)
            if it in ("string", "number", "integer", "boolean") or _is_list(items.get("enum")):
                out.append({**base, "type": "lines", "item_type": it or "string", "value": _field_value(value)})
            else:
                out.append({**base, "type": "json", "value": _field_value(value)})
        else:
            out.append({**base, "type": "json", "value": _field_value(value)})
    return out


def inputs_from_values(values: Mapping[str, Any], prefix: str = "") -> list[dict[str, Any]]:
    """Inputs guessed from example values (a tool without a readable args schema)."""
    out = []
    for name, value in values.items():
        base = {"name": f"{prefix}{name}", "label": str(name), "required": True, "group": "", "description": "",
                "value": _field_value(value)}
        if isinstance(value, bool):
            out.append({**base, "type": "boolean"})
        elif isinstance(value, int):
            out.append({**base, "type": "integer"})
        elif isinstance(value, float):
            out.append({**base, "type": "number"})
        elif isinstance(value, str):
            out.append({**base, "type": "text" if _multiline(value) else "string"})
        else:
            out.append({**base, "type": "json"})
    return out


_EXACT = 2 ** 53
"""The largest integer a browser's number holds exactly."""


def _unchanged(spec: Mapping[str, Any], raw: Any) -> bool:
    """Whether `raw` is what the page shows for the input's initial value (nothing typed)
    where reading it back would not give that value: a JSON input holding a string (shown
    bare), a list with empty lines, an integer past a browser number's precision."""
    value = spec.get("value")
    if value is None or not isinstance(raw, str):
        return False
    t = spec.get("type")
    if t in ("string", "text") and isinstance(value, str) and raw != value:
        return raw == _newlines(value)  # its line breaks made "\n" by the text box
    if t == "json":
        if raw == _json_text(value):
            return True
        try:  # the page's JSON.stringify writes some numbers otherwise (1.0 as 1)
            return isinstance(value, (dict, list)) and json.loads(raw) == value
        except ValueError:
            return False
    if t == "lines" and isinstance(value, list):
        return raw == "\n".join(_js_text(v) for v in value)
    if t in ("integer", "number") and isinstance(value, int) and not isinstance(value, bool) and abs(value) > _EXACT:
        try:
            return float(raw) == float(value)
        except ValueError:
            return False
    return False


def _multiline(text: str) -> bool:
    """Whether a string input needs a text box (a one-line box drops line breaks)."""
    return "\n" in text or "\r" in text or len(text) > 60


def _newlines(text: str) -> str:
    """`text` as a browser's text box holds it: every line break "\n"."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _json_text(value: Any) -> str:
    """How the page shows a JSON input's value: a string bare, anything else indented."""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _js_text(value: Any) -> str:
    """`String(value)` in the page, for a JSON scalar."""
    if value is True or value is False:
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _parse_one(spec: Mapping[str, Any], raw: Any) -> Any:
    """A raw browser value → the typed value; raises ValueError with a message for the field."""
    if "value" in spec and _on_page(spec)[1]:
        return spec["value"]  # read-only on the page (shown cut): sent back whole
    if _unchanged(spec, raw):
        return spec["value"]
    t = spec.get("type")
    empty = raw is None or (isinstance(raw, str) and raw.strip() == "")
    if t in ("string", "text"):  # absent is missing; an empty box is the empty string
        return _MISSING if raw is None else str(raw)
    if t == "boolean":
        return bool(raw)
    if empty:
        return _MISSING
    if t == "integer":
        try:
            return int(str(raw).strip())
        except ValueError:
            raise ValueError("a whole number is needed") from None
    if t == "number":
        try:
            number = float(str(raw).strip())
        except ValueError:
            raise ValueError("a number is needed") from None
        return int(number) if number.is_integer() and "." not in str(raw) else number
    if t == "enum":
        options = spec.get("options") or []
        try:
            return options[int(raw)]["value"]
        except (ValueError, TypeError, IndexError):
            raise ValueError("pick one of the options") from None
    if t == "lines":
        item = {"type": spec.get("item_type", "string")}
        return [_parse_one(item, line.strip()) for line in str(raw).splitlines() if line.strip()]
    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def parse_inputs(specs: Sequence[Mapping[str, Any]], raw: Mapping[str, Any], names: Sequence[str] | None = None,
                 *, where: str = "") -> dict[str, Any]:
    """Raw values of the named inputs → a nested dict (dotted names nest); FormInvalid
    names each input that cannot be read (``"<where><name>"``)."""
    errors: dict[str, str] = {}
    out: dict[str, Any] = {}
    for spec in specs:
        name = str(spec["name"])
        if names is not None and name not in names:
            continue
        try:
            value = _parse_one(spec, raw.get(name))
        except ValueError as exc:
            errors[f"{where}{name}"] = str(exc)
            continue
        if spec.get("given") is False and not spec.get("required") and value is not _MISSING and (
                value == spec.get("value") or (value == "" and spec.get("value") is None)):
            continue  # left as shown, not the call's own: left out (see `schema_inputs`; a
            # required one is sent: a user answering by hand would have to give it)
        if value is _MISSING:
            if spec.get("required"):
                errors[f"{where}{name}"] = "required"
            continue
        target = out
        *head, last = name.split(".")
        for key in head:
            target = target.setdefault(key, {})
        target[last] = value
    if errors:
        raise FormInvalid(_message(errors, where), errors)
    return out


def _message(errors: Mapping[str, str], where: str) -> str:
    """``"copies: a whole number is needed"``: the inputs by name, without the part prefix."""
    return "; ".join(f"{(k[len(where):] if where and k.startswith(where) else k) or 'answer'}: {v}"
                     for k, v in errors.items())


def validate(value: Any, schema: Any, *, where: str = "") -> Any:
    """Check `value` against a JSON schema (``jsonschema``) or a pydantic model (its own
    validation); FormInvalid with the errors per input path. Returns the value to send."""
    errors: dict[str, str] = {}
    model_validate = getattr(schema, "model_validate", None)
    if callable(model_validate):
        try:
            model_validate(value)
        except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError
            for err in getattr(exc, "errors", lambda: [])():
                path = ".".join(str(p) for p in err.get("loc", ()))
                errors.setdefault(f"{where}{path}", str(err.get("msg", "invalid")))
            if not errors:
                errors[where.rstrip(".")] = str(exc)
    elif isinstance(schema, Mapping):
        import jsonschema

        validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        for err in validator_cls(schema).iter_errors(value):
            path = ".".join(str(p) for p in err.absolute_path)
            if err.validator == "required" and isinstance(err.instance, Mapping):
                missing = re.findall(r"'([^']+)' is a required property", err.message)
                path = ".".join(p for p in (path, *missing) if p)
            errors.setdefault(f"{where}{path}", err.message)
    if errors:
        raise FormInvalid(_message(errors, where), errors)
    return value


# -- tools (for HITL args forms) -----------------------------------------------------------
def tools_of(graph: Any) -> dict[str, Any]:
    """Tools a graph's nodes hold (a ToolNode's `tools_by_name`), by name."""
    found: dict[str, Any] = {}
    nodes = getattr(graph, "nodes", None)
    for node in (nodes.values() if isinstance(nodes, Mapping) else ()):
        bound = getattr(node, "bound", None)
        func = getattr(bound, "func", None)
        # an lgnb graph converted from LangGraph runs the ToolNode through a bridge function
        # that names it `_lgnb_wraps`
        for obj in (node, bound, getattr(node, "runnable", None), getattr(bound, "runnable", None), func,
                    getattr(func, "_lgnb_wraps", None), getattr(getattr(bound, "afunc", None), "_lgnb_wraps", None)):
            by_name = getattr(obj, "tools_by_name", None) or getattr(obj, "_tools_by_name", None)
            if isinstance(by_name, Mapping):
                found.update(by_name)
    return found


def tool_args_schema(tool: Any) -> dict[str, Any] | None:
    """The JSON schema of a tool's model-facing arguments, if it can be read."""
    for attr in ("tool_call_schema", "args_schema"):
        schema = getattr(tool, attr, None)
        if schema is None:
            continue
        found = schema_of(schema)
        if found and found.get("properties") is not None:
            return found
    return None


# -- built-in renderers ---------------------------------------------------------------------
_DECISION_LABELS = {"approve": "Approve", "edit": "Edit", "reject": "Reject", "respond": "Respond"}


def _is_hitl(value: Any, _: Mapping[str, Any]) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("action_requests"), list) and "review_configs" in value


def _args_inputs(name: str, args: Any, context: Mapping[str, Any], fallback: Mapping[str, Any] | None = None
                 ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    args = args if isinstance(args, Mapping) else {}
    schema = tool_args_schema((context.get("tools") or {}).get(name)) or (dict(fallback) if fallback else None)
    if schema:
        return schema_inputs(schema, args), schema
    return inputs_from_values(args), None


def _review_part(request: Mapping[str, Any], allowed: Sequence[str], context: Mapping[str, Any],
                 args_schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One tool call's card: its args shown, a choice per allowed decision (edit: the args
    as inputs, typed by the tool's schema; reject / respond: a message)."""
    name = str(request.get("name", ""))
    args = request.get("args") or {}
    inputs, _ = _args_inputs(name, args, context, args_schema)
    names = [i["name"] for i in inputs]
    message = {"name": "__message", "label": "message", "type": "text", "required": False, "group": "",
               "description": "", "value": ""}
    choices = []
    for d in allowed:
        if d == "edit":
            choices.append(_choice("edit", "Edit", names, "Send edited call"))
        elif d in ("reject", "respond"):
            choices.append(_choice(d, _DECISION_LABELS[d], ["__message"],
                                   "Send rejection" if d == "reject" else "Send response"))
        else:
            choices.append(_choice(d, _DECISION_LABELS[d]))
    return _part(title=f"tool call: {name}", description=str(request.get("description") or ""),
                 shown=_shown(args if isinstance(args, Mapping) else {"args": args}),
                 inputs=[*inputs, message], choices=choices)


def _decision(request: Mapping[str, Any], pick: Mapping[str, Any], context: Mapping[str, Any], where: str,
              args_schema: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    """The LangChain `Decision` a pick on a tool call's card makes, and its summary."""
    kind, raw = str(pick["choice"]), pick.get("inputs") or {}
    name = str(request.get("name", ""))
    if kind == "edit":
        inputs, schema = _args_inputs(name, request.get("args"), context, args_schema)
        args = parse_inputs(inputs, raw, where=where)
        if schema:
            validate(args, schema, where=where)
        changed = {k: v for k, v in args.items() if (request.get("args") or {}).get(k) != v}
        return ({"type": "edit", "edited_action": {"name": name, "args": args}},
                f"Edit {name} (edited args {short(changed or args)})")
    if kind in ("reject", "respond"):
        message = str(raw.get("__message") or "")
        if kind == "respond" and not message.strip():
            # (the tool's result would be empty: the model is told nothing)
            raise FormInvalid("a response is needed: it is sent to the model as the tool's result",
                              {f"{where}__message": "a response is needed"})
        decision = {"type": kind}
        if message or kind == "respond":
            decision["message"] = message
        return decision, f"{_DECISION_LABELS[kind]} {name}" + (f": {short(message)}" if message else "")
    return {"type": kind}, f"{_DECISION_LABELS.get(kind, kind)} {name}"


def _build_hitl(value: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any]) -> Form:
    configs = {c.get("action_name"): c for c in value.get("review_configs") or () if isinstance(c, Mapping)}
    parts = []
    for i, request in enumerate(value["action_requests"]):
        request = request if isinstance(request, Mapping) else {}
        name = str(request.get("name", ""))
        config = configs.get(name) or (value["review_configs"][i] if i < len(value["review_configs"]) else {})
        allowed = [d for d in (config.get("allowed_decisions") if isinstance(config, Mapping) else None)
                   or ("approve", "edit", "reject") if d in _DECISION_LABELS]
        parts.append(_review_part(request, allowed, context))
    # the cards show every request and its arguments: no raw dump of the payload above them
    return {"title": "Review tool calls" if len(parts) > 1 else "Review tool call", "parts": parts,
            "collect": len(parts) > 1, "fields": [], "text": ""}


def _answer_hitl(value: Any, form: Form, picks: Picks, context: Mapping[str, Any]) -> tuple[Any, str]:
    decisions: list[dict[str, Any]] = []
    summary: list[str] = []
    by_part = {int(p.get("part", -1)): p for p in picks}
    for i, request in enumerate(value["action_requests"]):
        pick = by_part.get(i)
        part = form["parts"][i]
        if pick is None or pick.get("choice") not in [c["key"] for c in part["choices"]]:
            raise FormInvalid(f"tool call {i + 1} ({request.get('name')}) has no decision yet",
                              {f"{i}.": "choose a decision"})
        decision, said = _decision(request, pick, context, f"{i}.")
        decisions.append(decision)
        summary.append(said)
    return {"decisions": decisions}, "; ".join(summary)


def _is_tool_approval(value: Any, _: Mapping[str, Any]) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "tool_approval" and isinstance(value.get("name"), str)


def _schema_branches(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The object branches of a (possibly discriminated-union) JSON schema, refs resolved."""
    top = _resolve(schema, schema)
    branches = top.get("oneOf") or top.get("anyOf")
    if isinstance(branches, list):
        return [_resolve(b, schema) for b in branches]
    return [top]


def _approval_allowed(interrupt: Mapping[str, Any]) -> tuple[list[str], dict[str, Any] | None]:
    """The decisions a per-call `response_schema` allows (each branch's ``type`` const) and
    the JSON schema of an edit's args (its ``edited_action.args``), if it says."""
    schema = schema_of(interrupt.get("response_schema"))
    if not schema:
        return ["approve", "edit", "reject"], None
    allowed: list[str] = []
    args_schema = None
    for branch in _schema_branches(schema):
        kind = _resolve((branch.get("properties") or {}).get("type") or {}, schema)
        const = kind.get("const", (kind.get("enum") or [None])[0] if _is_list(kind.get("enum")) else None)
        if const in _DECISION_LABELS and const not in allowed:
            allowed.append(const)
        if const == "edit":
            action = _resolve((branch.get("properties") or {}).get("edited_action") or {}, schema)
            found = _resolve((action.get("properties") or {}).get("args") or {}, schema)
            if found.get("properties") is not None:
                args_schema = {**found, "$defs": schema.get("$defs") or {}}
    return allowed, args_schema


def _build_tool_approval(value: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any]) -> Form:
    allowed, args_schema = _approval_allowed(interrupt)
    request = {"name": value["name"], "args": value.get("args") or {}, "description": value.get("description") or ""}
    part = _review_part(request, allowed, context, args_schema)
    return {"title": "Review tool call", "parts": [part], "fields": [], "text": ""}


def _answer_tool_approval(value: Any, form: Form, picks: Picks, context: Mapping[str, Any]) -> tuple[Any, str]:
    pick = _one_pick(form, picks)
    _, args_schema = _approval_allowed(context.get("interrupt") or {})
    request = {"name": value["name"], "args": value.get("args") or {}}
    decision, summary = _decision(request, pick, context, "0.", args_schema)
    schema = schema_of(context.get("response_schema"))
    if schema:  # the whole decision as the program checks it (LangGraph validates the resume)
        validate(decision, schema, where="0.")
    return decision, summary


def _inbox_request(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, Mapping) and isinstance(value.get("action_request"), Mapping) and isinstance(value.get("config"), Mapping):
        return value
    return None


def _build_inbox(value: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any]) -> Form:
    request = _inbox_request(value) or {}
    action = request["action_request"]
    name, args = str(action.get("action", "")), action.get("args") or {}
    config = request["config"]
    inputs, _ = _args_inputs(name, args, context)
    response = {"name": "__response", "label": "response", "type": "text", "required": True, "group": "",
                "description": "", "value": ""}
    choices = []
    if config.get("allow_accept"):
        choices.append(_choice("accept", "Accept"))
    if config.get("allow_edit"):
        choices.append(_choice("edit", "Edit", [i["name"] for i in inputs], "Send edited action"))
    if config.get("allow_respond"):
        choices.append(_choice("response", "Respond", ["__response"], "Send response"))
    if config.get("allow_ignore"):
        choices.append(_choice("ignore", "Ignore"))
    part = _part(title=f"action: {name}", description=str(request.get("description") or ""),
                 shown=_shown(args if isinstance(args, Mapping) else {"args": args}),
                 inputs=[*inputs, response], choices=choices)
    return {"title": "Review action", "parts": [part], "fields": [], "text": ""}


def _answer_inbox(value: Any, form: Form, picks: Picks, context: Mapping[str, Any]) -> tuple[Any, str]:
    request = _inbox_request(value) or {}
    action = request["action_request"]
    name = str(action.get("action", ""))
    pick = _one_pick(form, picks)
    kind, raw = pick["choice"], pick.get("inputs") or {}
    if kind == "edit":
        inputs, schema = _args_inputs(name, action.get("args"), context)
        args = parse_inputs(inputs, raw, where="0.")
        if schema:
            validate(args, schema, where="0.")
        response: dict[str, Any] = {"type": "edit", "args": {"action": name, "args": args}}
        summary = f"Edit {name} (edited args {short(args)})"
    elif kind == "response":
        text = str(raw.get("__response") or "")
        if not text.strip():
            raise FormInvalid("a response is needed", {"0.__response": "required"})
        response, summary = {"type": "response", "args": text}, f"Respond: {short(text)}"
    else:
        response, summary = {"type": kind, "args": None}, f"{kind.capitalize()} {name}"
    return ([response] if isinstance(value, list) else response), summary


def _describe_inbox(value: Any, question: Any) -> str | None:
    """An agent-inbox response given in code (`[{"type": ..., "args": ...}]`), summarized as
    `_answer_inbox` summarizes the click; None when `value` is not one for `question`."""
    request = _inbox_request(question)
    response = value[0] if isinstance(value, list) and len(value) == 1 else value
    if request is None or not isinstance(response, Mapping):
        return None
    kind, args = response.get("type"), response.get("args")
    name = str(request["action_request"].get("action", ""))
    if kind == "edit" and isinstance(args, Mapping):
        return f"Edit {args.get('action', name)} (edited args {short(args.get('args'))})"
    if kind == "response":
        return f"Respond: {short(args)}"
    if kind in ("accept", "ignore"):
        return f"{kind.capitalize()} {name}"
    return None


def _object_schema(interrupt: Mapping[str, Any]) -> dict[str, Any] | None:
    schema = schema_of(interrupt.get("response_schema"))
    if schema and _type_of(_resolve(schema, schema)) == "object" and _resolve(schema, schema).get("properties"):
        return schema
    return None


def _build_schema(value: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any]) -> Form:
    schema = _object_schema(interrupt) or {}
    part = _part(inputs=schema_inputs(schema), choices=[_choice("send", "Send")], inputs_open=True,
                 description=str(schema.get("description") or ""))
    return {"title": str(schema.get("title") or "Answer needed"), "parts": [part], **_payload_shown(value)}


def _answer_schema(value: Any, form: Form, picks: Picks, context: Mapping[str, Any]) -> tuple[Any, str]:
    pick = _one_pick(form, picks)
    answer = parse_inputs(form["parts"][0]["inputs"], pick.get("inputs") or {}, where="0.")
    response_schema = context.get("response_schema")
    validate(answer, response_schema if callable(getattr(response_schema, "model_validate", None))
             else _object_schema(context.get("interrupt") or {}), where="0.")
    return answer, f"Send {short(answer)}"


def _question(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("question"), str) and not any(
            _is_list(value.get(k)) for k in OPTION_KEYS):
        return value["question"]
    return None


def _is_yes_no(value: Any, interrupt: Mapping[str, Any]) -> bool:
    schema = schema_of(interrupt.get("response_schema"))
    if schema and _type_of(schema) == "boolean":
        return True
    question = _question(value)
    return bool(question and _YES_NO.search(question)) and not schema


def _build_yes_no(value: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any]) -> Form:
    schema = schema_of(interrupt.get("response_schema"))
    boolean = bool(schema and _type_of(schema) == "boolean")
    yes, no = (True, False) if boolean else ("yes", "no")
    part = _part(choices=[_choice("yes", "Yes", value=yes), _choice("no", "No", value=no)])
    return {"title": "Answer needed", "parts": [part], **_payload_shown(value)}


def _options_of(value: Any, interrupt: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    if isinstance(value, Mapping):
        for key in OPTION_KEYS:
            if _is_list(value.get(key)):
                return [_option(o) for o in value[key]]
    schema = schema_of(interrupt.get("response_schema"))
    if schema and _is_list(schema.get("enum")):
        return [_option(v) for v in schema["enum"]]
    return None


def _answer_options(value: Any, form: Form, picks: Picks, context: Mapping[str, Any]) -> tuple[Any, str]:
    """The option picked, as the payload holds it (an enum member, a tuple), not its JSON
    copy: what a user resuming by hand passes to `Command(resume=...)`."""
    answer, said = _default_answer(value, form, picks, context)
    if isinstance(value, Mapping):
        for key in OPTION_KEYS:
            if _is_list(value.get(key)):
                option = value[key][int(picks[0]["choice"])]
                return (option["value"] if isinstance(option, Mapping) and "value" in option else option), said
    return answer, said


def _build_options(value: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any]) -> Form:
    options = _options_of(value, interrupt) or []
    part = _part(choices=[_choice(str(i), o["label"], value=o["value"]) for i, o in enumerate(options)])
    skip = [k for k in OPTION_KEYS if isinstance(value, Mapping) and _is_list(value.get(k))][:1]
    return {"title": "Choose", "parts": [part], **_payload_shown(value, skip)}


def _build_question(value: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any]) -> Form:
    answer = {"name": "answer", "label": "answer", "type": "text", "required": False, "group": "",
              "description": "", "value": ""}
    part = _part(inputs=[answer], choices=[_choice("send", "Send", answer_input="answer")], inputs_open=True)
    return {"title": "Question", "parts": [part], **_payload_shown(value)}


def _build_value(value: Any, interrupt: Mapping[str, Any], context: Mapping[str, Any]) -> Form:
    answer = {"name": "answer", "label": "answer", "type": "text", "required": False, "group": "",
              "description": "", "value": ""}
    part = _part(inputs=[answer], choices=[
        _choice("approve", "Approve", value="approve"), _choice("reject", "Reject", value="reject"),
        _choice("answer", "Answer in words…", ["answer"], "Send answer", answer_input="answer")])
    return {"title": "Approval needed", "parts": [part], **_payload_shown(value)}


def _payload_shown(value: Any, skip: Sequence[str] = ()) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return {"fields": _shown(value, skip), "text": ""}
    return {"fields": [], "text": as_text(value)}


def _one_pick(form: Form, picks: Picks) -> dict[str, Any]:
    if len(picks) != 1:
        raise FormInvalid(f"expected one choice, got {len(picks)}")
    pick = picks[0]
    part = form["parts"][int(pick.get("part", 0))] if form["parts"] else {"choices": []}
    if pick.get("choice") not in [c["key"] for c in part["choices"]]:
        raise FormInvalid(f"no such choice: {pick.get('choice')!r}")
    return pick


def _default_answer(value: Any, form: Form, picks: Picks, context: Mapping[str, Any]) -> tuple[Any, str]:
    pick = _one_pick(form, picks)
    part = form["parts"][int(pick.get("part", 0))]
    choice = next(c for c in part["choices"] if c["key"] == pick["choice"])
    names = choice.get("inputs") or ([i["name"] for i in part["inputs"]] if part.get("inputs_open") else [])
    if "answer_input" in choice:
        spec = next(i for i in part["inputs"] if i["name"] == choice["answer_input"])
        try:
            answer = _parse_one(spec, (pick.get("inputs") or {}).get(spec["name"]))
        except ValueError as exc:
            raise FormInvalid(str(exc), {f"0.{spec['name']}": str(exc)}) from None
        answer = "" if answer is _MISSING else answer
        return answer, f"{choice['label'] if choice['label'] not in ('Send', 'Answer in words…') else 'Answer'}: {short(answer)}"
    if names:
        answer = parse_inputs(part["inputs"], pick.get("inputs") or {}, names, where=f"{pick.get('part', 0)}.")
        return answer, f"{choice['label']}: {short(answer)}"
    return choice.get("value"), str(choice["label"])


BUILTINS: list[Renderer] = [
    Renderer("hitl", _build_hitl, _answer_hitl, _is_hitl),
    Renderer("tool_approval", _build_tool_approval, _answer_tool_approval, _is_tool_approval),
    Renderer("inbox", _build_inbox, _answer_inbox, lambda v, i: _inbox_request(v) is not None),
    Renderer("schema", _build_schema, _answer_schema, lambda v, i: _object_schema(i) is not None),
    Renderer("yes_no", _build_yes_no, None, _is_yes_no),
    Renderer("options", _build_options, _answer_options, lambda v, i: _options_of(v, i) is not None),
    Renderer("question", _build_question, None, lambda v, i: _question(v) is not None),
    Renderer("value", _build_value, None, lambda v, i: True),
]


def renderer_for(interrupt: Mapping[str, Any]) -> Renderer:
    value = interrupt.get("value")
    if isinstance(value, Mapping) and isinstance(value.get("kind"), str) and value["kind"] in _USER:
        return _USER[value["kind"]]
    for renderer in [*_USER.values(), *BUILTINS]:
        if renderer.matches is not None and renderer.matches(value, interrupt):
            return renderer
    return BUILTINS[-1]


def _context(interrupt: Mapping[str, Any], context: Mapping[str, Any] | None) -> dict[str, Any]:
    return {**(context or {}), "interrupt": interrupt, "response_schema": interrupt.get("response_schema")}


def form_for(interrupt: Mapping[str, Any], context: Mapping[str, Any] | None = None) -> Form:
    """The form of one pending interrupt (``{"id", "value", "node"?, "response_schema"?}``)
    as the page gets it; `context` may hold ``tools`` (name → tool) for argument forms. A
    payload that is an object (a pydantic model, a dataclass) is read as its JSON form, as
    the views send it. Text shown is cut as every view cuts it; an input's value is cut only
    past `EDIT_MAX` characters, and is then read-only: the answer keeps it whole."""
    return _for_page(_form(interrupt, context))


def _for_page(form: Form) -> Form:
    """`form` with its text cut past `EDIT_MAX` characters; each input's value as
    `_on_page` gives it, marked ``readonly`` when that is cut."""
    page = _json_form(form, lambda v: jsonable(v, limit=EDIT_MAX, items=_WHOLE))
    for part in page["parts"]:
        for spec in part["inputs"]:
            spec["value"], cut = _on_page(spec)
            if cut:
                spec["readonly"] = True
    return page


def _json_form(form: Mapping[str, Any], text: Callable[[Any], Any]) -> Any:
    """`form` as JSON: `text` makes JSON of everything but the inputs' and options' values,
    which are made JSON whole (`_field_value`)."""
    parts = form.get("parts") or []
    out = text({**form, "parts": []})
    out["parts"] = []
    for part in parts:
        inputs = list(part.get("inputs") or ())
        shown = text({**part, "inputs": []})
        shown["inputs"] = []
        for spec in inputs:
            bare = {k: v for k, v in spec.items() if k not in ("value", "options")}
            made = text(bare)
            made["value"] = _field_value(spec.get("value"))
            if "options" in spec:
                made["options"] = [{"label": text(o.get("label")), "value": _field_value(o.get("value"))}
                                   for o in spec["options"] or ()]
            shown["inputs"].append(made)
        out["parts"].append(shown)
    return out


def _form(interrupt: Mapping[str, Any], context: Mapping[str, Any] | None = None) -> Form:
    """The form of one pending interrupt with its inputs' values whole (what answers are
    read against)."""
    interrupt = _as_json_payload(interrupt)
    value = interrupt.get("value")
    renderer = renderer_for(interrupt)
    ctx = _context(interrupt, context)
    try:
        built = renderer.build(value, interrupt, ctx)
    except Exception as exc:  # noqa: BLE001 - a broken renderer must still leave a usable form
        built = {**_build_value(value, interrupt, ctx), "title": f"Approval needed (form {renderer.kind!r} failed: {exc})"}
        renderer = BUILTINS[-1]
    form: Form = {"id": str(interrupt.get("id") or ""), "node": str(interrupt.get("node") or ""),
                  "kind": renderer.kind, "title": "Approval needed", "fields": [], "text": "", "collect": False}
    if "fields" not in built and "text" not in built:
        form.update(_payload_shown(value))
    form.update(built)
    return _json_form(form, lambda v: jsonable(v, limit=_WHOLE, items=_WHOLE))


def _as_json_payload(interrupt: Mapping[str, Any]) -> Mapping[str, Any]:
    """`interrupt` with an object payload (pydantic model, dataclass) as its JSON form, which
    is what the views give `form_for` (so code calling it directly gets the same form)."""
    value = interrupt.get("value")
    if value is None or isinstance(value, (str, int, float, bool, Mapping, list, tuple)):
        return interrupt
    if is_model(value) or (is_dataclass(value) and not isinstance(value, type)):
        return {**interrupt, "value": jsonable(value, limit=_WHOLE)}
    return interrupt


def answer_for(interrupt: Mapping[str, Any], picks: Picks, context: Mapping[str, Any] | None = None) -> tuple[Any, str]:
    """The resume value and its one-line summary for the browser's `picks`; FormInvalid
    when they do not fit (the errors name the inputs)."""
    interrupt = _as_json_payload(interrupt)
    value = interrupt.get("value")
    form = _form(interrupt, context)
    renderer = _USER.get(form["kind"]) or next((r for r in BUILTINS if r.kind == form["kind"]), BUILTINS[-1])
    answer = renderer.answer or _default_answer
    return answer(value, form, list(picks), _context(interrupt, context))


def answered_with(interrupt: Mapping[str, Any], payloads: Mapping[str, Any]) -> Mapping[str, Any]:
    """`interrupt` (a view's JSON copy) with the payload the node passed (`payloads`, by
    interrupt id), to answer with: a pick among its options resumes with the option itself
    (an enum member, a tuple), as a user resuming by hand would pass it."""
    iid = str(interrupt.get("id") or "")
    return {**interrupt, "value": payloads[iid]} if iid in payloads else interrupt


RAISED_ID = "placeholder-id"
"""The id of an interrupt a node raised (`NodeInterrupt`, deprecated) instead of asking
with `interrupt()`: LangGraph and lgnb give such an interrupt no id of its own."""


def raised(interrupt: Mapping[str, Any]) -> bool:
    """Whether a pending interrupt was raised (`NodeInterrupt`) rather than asked: no
    `interrupt()` call waits for an answer, so a form would do nothing — going on runs the
    node again, which stops again unless the state was changed (`update_state`)."""
    return interrupt.get("id") == RAISED_ID


def waits_without_question(interrupts: Sequence[Mapping[str, Any]]) -> bool:
    """A paused run that asks nothing: a static breakpoint (no interrupt) or only raised
    ones. Going on is `None` input from the thread's latest checkpoint."""
    return all(raised(i) for i in interrupts)


def stopped_by(interrupts: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """What the nodes that raised `NodeInterrupt` said, one line each, for the view."""
    return [{"node": str(i.get("node") or ""), "says": short(i.get("value"), 200)}
            for i in interrupts if raised(i)]


def no_answer_for_raised(value: Any) -> None:
    """`resume(value)` on a run paused only by raised interrupts: nothing reads an answer."""
    if value is not None:
        raise ValueError(
            "the run was stopped by NodeInterrupt (raised by the node, not asked with "
            "interrupt()), so nothing reads an answer: the node runs again and stops again "
            "unless its state changes. Change the state with "
            "graph.update_state(config, values), then call resume() with no value.")


def asked(value: Any) -> str:
    """What an interrupt asked, in one line, for the answer record ("" when it asked in no words)."""
    if isinstance(value, str):
        return short(value)
    request = _inbox_request(value)  # agent-inbox requests come as a list of one
    if request is not None:
        return f"action: {request['action_request'].get('action', '')}"
    if not isinstance(value, Mapping):
        return ""
    if _is_hitl(value, {}):
        return "tool calls: " + ", ".join(str(r.get("name", "")) for r in value["action_requests"] if isinstance(r, Mapping))
    if _is_tool_approval(value, {}):
        return f"tool call: {value['name']}"
    return short(value["question"]) if isinstance(value.get("question"), str) else ""


def describe(value: Any, question: Any = None) -> str:
    """A one-line summary of a resume value given in code (``run.resume(...)``), worded as
    the form's click would be (`question`: the interrupt's value, when known)."""
    inbox = _describe_inbox(value, question)
    if inbox is not None:
        return inbox
    if isinstance(value, Mapping) and isinstance(value.get("decisions"), list):
        parts = []
        for d in value["decisions"]:
            if not isinstance(d, Mapping):
                parts.append(short(d))
                continue
            kind = str(d.get("type", "?"))
            label = _DECISION_LABELS.get(kind, kind)
            if kind == "edit" and isinstance(d.get("edited_action"), Mapping):
                action = d["edited_action"]
                parts.append(f"{label} {action.get('name', '')} (edited args {short(action.get('args'))})")
            elif d.get("message"):
                parts.append(f"{label}: {short(d['message'])}")
            else:
                parts.append(label)
        return "; ".join(parts)
    if value is True or value is False:
        return "Yes" if value else "No"
    return short(value)

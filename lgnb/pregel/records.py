"""The `"pregel"` stream mode: a record of the mechanism, per super-step (lgnb only).

`graph.stream(input, stream_mode="pregel")` (or with other modes, v1 or v2, with
`subgraphs=True`) yields, for each super-step of each (sub)graph run, plain JSON-able
dicts — one per phase, in this order:

    PlanRecord        the step's tasks: node, the channels (and versions) that triggered
                      it, or the `Send` that created it with its argument
    ExecuteRecord     each task's writes in order, its duration, its error or interrupts
    UpdateRecord      the barrier: per channel written, the value before, the writes (with
                      the task that made each), the reducer by name, the value after, the
                      new version; for an `InvalidUpdateError`, `error` names the channel
                      and the conflicting writes (and the run then fails)
    CheckpointRecord  the checkpoint saved after the barrier (id, source, step)

The graph's input is an `UpdateRecord` (source "input", step -1) followed by the input
checkpoint; a resume's `Command(update=...)` is an `UpdateRecord` with source "command".
A step stopped by an interrupt or an error has a plan and an execute record, but no
update (no barrier was crossed); after a resume the step is planned again, and tasks
that finished before the interrupt are listed with `"restored": True` (they do not run
again). Steps count as the checkpoints' `metadata["step"]` do.

Values inside records are made JSON-able by `to_jsonable` (documented there), so a record
can be `json.dumps`-ed, sent to a browser or printed; `format_record` renders one as text.
Nothing is recorded — no copy, no timing — unless `"pregel"` is among the requested modes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, Literal, Optional, Union

from typing_extensions import TypedDict

from lgnb._internal.constants import OVERWRITE

__all__ = (
    "PregelRecord",
    "PlanRecord",
    "PlannedTask",
    "Trigger",
    "SendInfo",
    "ExecuteRecord",
    "ExecutedTask",
    "UpdateRecord",
    "ChannelUpdate",
    "ChannelWrite",
    "UpdateError",
    "CheckpointRecord",
    "to_jsonable",
    "format_record",
    "MAX_CHARS",
    "MAX_ITEMS",
)

MAX_CHARS = 2000
"""A string longer than this is cut, with a marker saying how much was left off."""
MAX_ITEMS = 100
"""A list / dict with more items than this is cut, with a marker item."""
MAX_DEPTH = 12


class Trigger(TypedDict):
    """A channel whose new version made a node run: its name and that version."""

    channel: str
    version: Any


class SendInfo(TypedDict):
    """The `Send` that created a PUSH task: its target node and (JSON-able) argument."""

    node: str
    arg: Any


class PlannedTask(TypedDict):
    """One task of a step's plan.

    `triggers`: for a node triggered by channels (PULL), the channels with a version the
    node had not seen, with that version (internal channels included: `branch:to:NODE` is
    an edge, `join:A+B:NODE` a `add_edge([A, B], NODE)` barrier); empty for a `Send`.
    `send`: for a task created by a `Send` (PUSH), the Send; None otherwise.
    `path`: the task's path, as LangGraph's `get_state().tasks[].path` (`["__pregel_pull", node]`,
    `["__pregel_push", i, False]` for a Send's task).
    """

    id: str
    node: str
    triggers: list[Trigger]
    send: Optional[SendInfo]
    path: list[Any]


class PlanRecord(TypedDict):
    """The plan phase of a step: which tasks run (in parallel) in it."""

    kind: Literal["plan"]
    step: int
    ns: str
    tasks: list[PlannedTask]


class ExecutedTask(TypedDict, total=False):
    """One task's execution: its writes `[channel, value]` in the order made.

    `duration_ms`: wall time from its start to its writes being recorded (None for a task
    restored from saved writes or served from the cache). `error`: `"Type: message"` when
    it failed. `interrupts`: the values of the interrupts it raised. `restored`: its
    writes were saved before an interrupt and are reused on resume (it did not run).
    `cached`: served from the node cache."""

    id: str
    node: str
    writes: list[list[Any]]
    duration_ms: Optional[float]
    error: Optional[str]
    interrupts: list[Any]
    restored: bool
    cached: bool


class ExecuteRecord(TypedDict):
    """The execute phase of a step: every task that finished, in plan order."""

    kind: Literal["execute"]
    step: int
    ns: str
    tasks: list[ExecutedTask]


class ChannelWrite(TypedDict):
    """One write to a channel in a step, and the task that made it (None: the input)."""

    task_id: Optional[str]
    node: str
    value: Any


class ChannelUpdate(TypedDict):
    """How a channel's writes became its new value at the barrier.

    `reducer`: `"LastValue"`, `"operator.add"`, `"add_messages"`, a user function's
    qualified name, or the channel class for others (`"Topic"`, `"EphemeralValue"`,
    `"NamedBarrierValue"`, ...). `before` / `after`: None when the channel was empty
    (see `had_value` / `has_value`). `version`: the channel's version after the step.
    `internal`: not a state key (an edge's `branch:to:` channel, a join barrier, Sends)."""

    channel: str
    reducer: str
    before: Any
    had_value: bool
    writes: list[ChannelWrite]
    after: Any
    has_value: bool
    version: Any
    internal: bool


class UpdateError(TypedDict):
    """An `InvalidUpdateError` at the barrier: the channel, the message, the writes."""

    type: str
    message: str
    channel: Optional[str]
    writes: list[ChannelWrite]


class UpdateRecord(TypedDict):
    """The update phase (the barrier): all the step's writes applied at once.

    `source`: "loop" (a step's tasks), "input" (the graph's input, step -1), or
    "command" (a resume's `Command(update=...)` / the null writes it carries)."""

    kind: Literal["update"]
    step: int
    ns: str
    source: str
    channels: list[ChannelUpdate]
    error: Optional[UpdateError]


class CheckpointRecord(TypedDict):
    """A checkpoint saved: its id, `metadata["source"]` and `metadata["step"]`."""

    kind: Literal["checkpoint"]
    step: int
    ns: str
    id: str
    source: str


PregelRecord = Union[PlanRecord, ExecuteRecord, UpdateRecord, CheckpointRecord]


# ---------------------------------------------------------------------- JSON-able values
def to_jsonable(value: Any, *, max_chars: int = MAX_CHARS, max_items: int = MAX_ITEMS) -> Any:
    """`value` as plain JSON data (dict with str keys, list, str, int, float, bool, None).

    - a tuple or set becomes a list; a mapping's keys become strings;
    - a LangChain message becomes `{"type", "content", "id"}` (plus `name`, `tool_calls`,
      `tool_call_id` when set); `Send` → `{"send": node, "arg"}`; `Interrupt` →
      `{"interrupt": value, "id"}`; `Overwrite` → `{"__overwrite__": value}` (the dict form a reducer key takes as an
      `Overwrite`, so a recorded write re-applied — `lgnb.whatif` — overwrites again); an exception →
      `"Type: message"`; a pydantic model or a dataclass → its fields plus `"__type__"`;
    - anything else becomes its `repr()`;
    - a string longer than `max_chars` is cut and ends with `"…[+N chars]"`; a list or
      mapping with more than `max_items` items keeps the first ones and a marker item
      `"…[+N items]"` (a mapping: key `"…"`); NaN / infinities become strings.

    The result is a fresh copy: later changes to `value` do not show in it.
    """
    return _conv(value, max_chars, max_items, 0)


def _cut(s: str, max_chars: int) -> str:
    if len(s) > max_chars:
        return f"{s[:max_chars]}…[+{len(s) - max_chars} chars]"
    return s


def _conv(v: Any, mc: int, mi: int, depth: int) -> Any:
    if v is None or v is True or v is False:
        return v
    t = type(v)
    if t is str:
        return _cut(v, mc)
    if t is int:
        return v
    if t is float:
        return v if math.isfinite(v) else repr(v)
    if depth >= MAX_DEPTH:
        return _cut(repr(v), mc)
    d = depth + 1
    if t in (list, tuple) or isinstance(v, (list, tuple, set, frozenset)) and not hasattr(v, "_fields"):
        items = list(v)
        if isinstance(v, (set, frozenset)):
            try:
                items = sorted(items)
            except TypeError:
                pass
        out = [_conv(x, mc, mi, d) for x in items[:mi]]
        if len(items) > mi:
            out.append(f"…[+{len(items) - mi} items]")
        return out
    if isinstance(v, Mapping):
        out_d: dict[str, Any] = {}
        for i, (k, x) in enumerate(v.items()):
            if i >= mi:
                out_d["…"] = f"…[+{len(v) - mi} items]"
                break
            out_d[k if isinstance(k, str) else repr(k)] = _conv(x, mc, mi, d)
        return out_d
    if isinstance(v, (int, float)):  # bool handled; int/float subclasses (enums...)
        return _cut(repr(v), mc)
    if isinstance(v, BaseException):
        return _cut(f"{type(v).__name__}: {v}", mc)
    name = t.__name__
    if name == "Send" and hasattr(v, "node") and hasattr(v, "arg"):
        return {"send": v.node, "arg": _conv(v.arg, mc, mi, d)}
    if name == "Interrupt" and hasattr(v, "value"):
        return {"interrupt": _conv(v.value, mc, mi, d), "id": getattr(v, "id", None)}
    if name == "Overwrite" and hasattr(v, "value"):
        return {OVERWRITE: _conv(v.value, mc, mi, d)}
    if hasattr(v, "content") and isinstance(getattr(v, "type", None), str) and hasattr(t, "model_fields"):
        msg: dict[str, Any] = {"type": v.type, "content": _conv(v.content, mc, mi, d), "id": v.id}
        for key in ("name", "tool_calls", "tool_call_id"):
            x = getattr(v, key, None)
            if x:
                msg[key] = _conv(x, mc, mi, d)
        return msg
    if isinstance(v, tuple) and hasattr(v, "_fields"):  # namedtuple
        return {"__type__": name, **{f: _conv(getattr(v, f), mc, mi, d) for f in v._fields}}
    if hasattr(type(v), "model_fields"):  # pydantic v2
        try:
            fields = {k: getattr(v, k) for k in type(v).model_fields}
        except Exception:  # noqa: BLE001 - a model that cannot be read is shown as repr
            return _cut(repr(v), mc)
        return {"__type__": name, **_conv(fields, mc, mi, depth)}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        fields = {f.name: getattr(v, f.name, None) for f in dataclasses.fields(v)}
        return {"__type__": name, **_conv(fields, mc, mi, depth)}
    try:
        return _cut(repr(v), mc)
    except Exception:  # noqa: BLE001 - a broken __repr__
        return f"<{name}>"


def reducer_name(channel: Any) -> str:
    """The name a record gives a channel's reducer: `LastValue`, `operator.add`,
    `add_messages`, a user function's qualified name, or the channel class."""
    op = getattr(channel, "operator", None)
    if op is not None and type(channel).__name__ in ("BinaryOperatorAggregate", "MessagesChannel", "DeltaChannel"):
        return callable_name(op)
    reducer = getattr(channel, "reducer", None)
    if reducer is not None and callable(reducer):
        return callable_name(reducer)
    return type(channel).__name__


def callable_name(fn: Any) -> str:
    """`operator.add` for the operator module's functions, else `__qualname__`."""
    fn = getattr(fn, "func", fn) if type(fn).__name__ == "partial" else fn
    module = getattr(fn, "__module__", None)
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if qual is None:
        return type(fn).__name__
    if module in ("_operator", "operator"):
        return f"operator.{qual}"
    return qual


# ---------------------------------------------------------------------- text
def _short(value: Any, width: int = 80) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_record(record: Mapping[str, Any], *, width: int = 80) -> str:
    """A record as readable text (several lines), for terminal users:

        step 1 · plan: 2 tasks
          b  ← branch:to:b@00000000000000000000000000000002.0.0
          c  ← Send(c, arg=3)
    """
    kind = record.get("kind")
    ns = record.get("ns") or ""
    head = f"step {record.get('step')}" + (f" [{ns}]" if ns else "")
    lines: list[str] = []
    if kind == "plan":
        tasks = record.get("tasks") or []
        lines.append(f"{head} · plan: {len(tasks)} task{'s' if len(tasks) != 1 else ''}")
        for t in tasks:
            send = t.get("send")
            if send is not None:
                why = f"Send({send['node']}, arg={_short(send['arg'], width // 2)})"
            else:
                why = ", ".join(f"{tr['channel']}@{tr['version']}" for tr in t.get("triggers") or []) or "-"
            lines.append(f"  {t['node']}  ← {why}")
    elif kind == "execute":
        tasks = record.get("tasks") or []
        lines.append(f"{head} · execute")
        for t in tasks:
            dur = t.get("duration_ms")
            note = (
                " (restored)" if t.get("restored") else " (cached)" if t.get("cached")
                else f" {dur:.1f} ms" if isinstance(dur, (int, float)) else ""
            )
            lines.append(f"  {t['node']}{note}")
            for chan, val in t.get("writes") or []:
                lines.append(f"    {chan} ← {_short(val, width - len(chan) - 8)}")
            if t.get("interrupts"):
                lines.append(f"    interrupt: {_short(t['interrupts'], width - 15)}")
            if t.get("error"):
                lines.append(f"    error: {t['error']}")
    elif kind == "update":
        source = record.get("source")
        what = "input" if source == "input" else "command" if source == "command" else "barrier"
        lines.append(f"{head} · update ({what})")
        for c in record.get("channels") or []:
            before = _short(c["before"], width // 3) if c.get("had_value") else "∅"
            after = _short(c["after"], width // 3) if c.get("has_value") else "∅"
            n = len(c.get("writes") or [])
            lines.append(
                f"  {c['channel']} [{c['reducer']}] {before} + {n} write{'s' if n != 1 else ''}"
                f" → {after}  (v {c['version']})"
            )
            for w in c.get("writes") or []:
                lines.append(f"    {w['node']}: {_short(w['value'], width - len(w['node']) - 6)}")
        err = record.get("error")
        if err:
            lines.append(f"  {err['type']} at {err.get('channel')!s}: {err['message'].splitlines()[0]}")
            for w in err.get("writes") or []:
                lines.append(f"    {w['node']} ({w['task_id']}): {_short(w['value'], width // 2)}")
    elif kind == "checkpoint":
        lines.append(f"{head} · checkpoint {record.get('id')} (source {record.get('source')})")
    else:
        lines.append(f"{head} · {kind}: {_short(dict(record), width)}")
    return "\n".join(lines)

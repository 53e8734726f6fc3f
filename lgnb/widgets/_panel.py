"""The run view's state panel: the state after the latest super-step, folded to a bounded size.

Fed the same chunks as `_stream.StreamReducer` (after it, so its `step` is current), from
the public ``values``, ``updates`` and ``tasks`` modes: it reads LangGraph and lgnb alike.
It keeps references to the latest values only; `render()` folds them into JSON when the
view flushes (at most once per flush interval, and only when something changed), so a fast
graph or a huge value never costs more than one small payload per flush:

- a string longer than `FOLD_CHARS` ships its head and its length;
- a list longer than `FOLD_ITEMS` (a message list longer than `LAST_ITEMS`) ships its
  length and its last `LAST_ITEMS` items;
- a mapping with more than `FOLD_ITEMS` keys ships its first ones and its size;
- a value's text is capped by a budget (`VALUE_BUDGET` characters), the panel shows at
  most `MAX_KEYS` keys and `MAX_UPDATES` task updates per node;
- past `MAX_DEPTH` levels of nesting a container ships whole when its JSON is at most
  `DEEP_SMALL` characters (a tool call's arguments), else as cut.

A folded value is ``{"__fold__": "str" | "list" | "messages" | "dict" | "cut", ...}``.

The step shown is the checkpoint's ``step`` of that state: the reducer numbers super-steps
as the checkpoints do; the first values of a resumed segment are the thread's saved state
(the step before the one re-planned). Per node, the step's task count (a ``Send`` fan-out
of 3 is "×3") and every task's update; LangGraph's ``__metadata__`` marker is no update,
and a finished task's write that a resume re-emits (marked cached) is listed once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lgnb.pregel.records import to_jsonable
from lgnb.widgets._stream import SAVED_STATE, STEP, normalize

FOLD_CHARS = 240
FOLD_ITEMS = 20
LAST_ITEMS = 3
MAX_KEYS = 60
MAX_UPDATES = 20
VALUE_BUDGET = 3000
MAX_DEPTH = 5
DEEP_SMALL = 200  # characters of JSON: a value nested deeper than MAX_DEPTH shown whole up to this


def _is_message(value: Any) -> bool:
    return hasattr(value, "content") and isinstance(getattr(value, "type", None), str) and hasattr(value, "id")


class _Folder:
    def __init__(self, budget: int) -> None:
        self.budget = budget

    def fold(self, v: Any, depth: int = 0) -> Any:
        if v is None or isinstance(v, (bool, int, float)) and not isinstance(v, str):
            return to_jsonable(v)
        if self.budget <= 0:
            return {"__fold__": "cut"}
        if isinstance(v, str):
            if len(v) > FOLD_CHARS:
                self.budget -= FOLD_CHARS
                return {"__fold__": "str", "len": len(v), "head": v[:FOLD_CHARS]}
            self.budget -= len(v) + 2
            return v
        if depth >= MAX_DEPTH:
            return self._leaf(v, depth)
        if _is_message(v):
            out: dict[str, Any] = {"type": v.type, "content": self.fold(getattr(v, "content", ""), depth + 1)}
            for key in ("name", "tool_calls"):
                x = getattr(v, key, None)
                if x:
                    out[key] = self.fold(x, depth + 1)
            return out
        if isinstance(v, Mapping):
            items = []
            for i, (k, x) in enumerate(v.items()):
                if i >= FOLD_ITEMS or self.budget <= 0:
                    break
                self.budget -= len(str(k)) + 4
                items.append((k if isinstance(k, str) else repr(k), self.fold(x, depth + 1)))
            if len(items) < len(v):
                return {"__fold__": "dict", "len": len(v), "items": dict(items)}
            return dict(items)
        if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
            n = len(v)
            messages = n > 0 and _is_message(v[-1])
            if messages and n > LAST_ITEMS or n > FOLD_ITEMS:
                last = [self.fold(x, depth + 1) for x in v[-LAST_ITEMS:]]
                return {"__fold__": "messages" if messages else "list", "len": n, "last": last}
            out_l: list[Any] = []
            for x in v:
                if self.budget <= 0:
                    return {"__fold__": "list", "len": n, "last": out_l[-LAST_ITEMS:]}
                out_l.append(self.fold(x, depth + 1))
            return out_l
        return self._leaf(v, depth)

    def _leaf(self, v: Any, depth: int) -> Any:
        if depth >= MAX_DEPTH and (isinstance(v, (Mapping, list, tuple)) or _is_message(v)):
            # deep down (a tool call's arguments in a message in an update): shown whole
            # when small, as the messages pane shows them; else cut
            small = to_jsonable(v, max_chars=DEEP_SMALL, max_items=FOLD_ITEMS)
            text = json.dumps(small, default=str, ensure_ascii=False)
            size = len(text)
            if size <= DEEP_SMALL and size <= self.budget and "…[+" not in text:  # (not cut by to_jsonable)
                self.budget -= size
                return small
            self.budget -= 12
            return {"__fold__": "cut"}
        j = to_jsonable(v, max_chars=FOLD_CHARS, max_items=FOLD_ITEMS)  # a model, a dataclass, an object
        if isinstance(j, (dict, list)):
            return self.fold(j, depth + 1)
        self.budget -= len(str(j)) + 2
        return j


def fold(value: Any, budget: int = VALUE_BUDGET) -> Any:
    """`value` as bounded JSON (see the module docstring for the folded shapes)."""
    return _Folder(budget).fold(value)


def _differs(a: Any, b: Any) -> bool:
    if a is b:
        return False
    try:
        return bool(a != b)
    except Exception:  # noqa: BLE001 - e.g. an array's elementwise ==: not the same object, say changed
        return True


def changed_keys(before: Any, after: Any) -> list[str]:
    """Keys whose value differs between two raw states (identity first, then ==)."""
    b = before if isinstance(before, Mapping) else {}
    a = after if isinstance(after, Mapping) else {}
    return [str(k) for k in a if k not in b or _differs(b[k], a[k])] + [str(k) for k in b if k not in a]


class StatePanel:
    """Folds root-namespace chunks into the state shown; `render()` gives the panel JSON."""

    def __init__(self) -> None:
        self.values: Any = None  # the latest root values (raw, as streamed)
        self.step: int | None = None  # the checkpoint step of `values`
        self.status = "empty"  # input | step | interrupted | saved (a resume's saved state)
        self.changed: list[str] = []
        self.tasks: list[dict[str, Any]] = []  # the step behind `values`: {"node", "count", "updates"}
        self.dirty = False
        self._fresh = True  # a segment began, no task started yet
        self._seen = False  # any values yet
        self._collect: list[dict[str, Any]] = []  # tasks of the step in progress
        self._collect_step: int | None = None
        self._saved_step: int | None = None  # the step of the saved state announced next

    def begin_segment(self) -> None:
        self._fresh = True

    def _task(self, node: str) -> dict[str, Any]:
        for t in self._collect:
            if t["node"] == node:
                return t
        t = {"node": node, "count": 0, "updates": [], "more": 0}
        self._collect.append(t)
        return t

    def feed(self, chunk: Any, reducer: Any) -> None:
        if type(chunk) is tuple and len(chunk) == 3 and chunk[1] == "messages":
            return  # the bulk of a stream: tokens
        try:
            ns, mode, payload = normalize(chunk)
        except TypeError:
            return
        if mode == SAVED_STATE:  # the values that follow are a thread's saved state
            self._seen, self._fresh = True, True
            step = payload.get("step") if isinstance(payload, Mapping) else None
            self._saved_step = step if isinstance(step, int) else None
            return
        if mode == STEP:  # the state shown is that of this step (a joined run's end)
            if self._seen and not self._fresh and isinstance(payload, Mapping) and isinstance(payload.get("step"), int):
                self.step, self.dirty = payload["step"], True
            return
        if ns or mode not in ("values", "updates", "tasks"):
            return
        if mode == "tasks":
            if isinstance(payload, Mapping) and "name" in payload and "result" not in payload \
                    and "error" not in payload:
                if self._fresh or self._collect_step != reducer.step:
                    self._collect, self._collect_step, self._fresh = [], reducer.step, False
                self._task(str(payload["name"]))["count"] += 1
            return
        if mode == "updates":
            if not isinstance(payload, Mapping):
                return
            cached = isinstance(payload.get("__metadata__"), Mapping) and bool(payload["__metadata__"].get("cached"))
            for node, delta in payload.items():
                if node in ("__metadata__", "__interrupt__"):
                    continue
                task = self._task(str(node))
                # several tasks of one node can come grouped as a list of their updates
                deltas = delta if isinstance(delta, list) and delta and all(
                    d is None or isinstance(d, Mapping) for d in delta) else [delta]
                for d in deltas:
                    if cached and any(u is d or not _differs(u, d) for u in task["updates"]):
                        continue  # a write re-emitted on resume: listed once
                    if len(task["updates"]) < MAX_UPDATES:
                        task["updates"].append(d)
                    else:
                        task["more"] += 1
            return
        # values
        if isinstance(payload, Mapping) and "__interrupt__" in payload:
            payload = {k: v for k, v in payload.items() if k != "__interrupt__"}
        before = self.values
        if not self._seen:
            self.status, self.step, self.tasks = "input", reducer.step, []
            self.changed = changed_keys({}, payload)
        elif self._fresh:  # a resumed (or joined) segment starts from the saved state
            replan = bool(getattr(reducer, "_replan", False))
            step = self._saved_step if self._saved_step is not None else reducer.step - (1 if replan else 0)
            self.status, self.step, self.tasks, self.changed = "saved", step, [], []
            self._saved_step = None
        else:
            self.status = "interrupted" if reducer.paused else "step"
            self.step = reducer.step
            self.tasks = list(self._collect)
            self.changed = changed_keys(before, payload)
        self._seen = True
        self.values = payload
        self.dirty = True

    def render(self) -> dict[str, Any]:
        """The panel as bounded JSON (and not dirty any more)."""
        self.dirty = False
        values = self.values if isinstance(self.values, Mapping) else (
            {} if self.values is None else {"(value)": self.values})
        changed = set(self.changed)
        keys = [{"key": str(k), "value": fold(v), "changed": str(k) in changed}
                for k, v in list(values.items())[:MAX_KEYS]]
        tasks = [{"node": t["node"], "count": t["count"], "more": t["more"],
                  "updates": [fold(u, VALUE_BUDGET // 2) for u in t["updates"]]} for t in self.tasks]
        return {"step": self.step, "status": self.status, "keys": keys, "more_keys": max(0, len(values) - MAX_KEYS),
                "changed": list(self.changed), "tasks": tasks}


__all__ = ["StatePanel", "fold", "changed_keys"]

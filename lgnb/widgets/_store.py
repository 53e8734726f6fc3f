"""The content of a run view (messages, progress, event log, updates, errors) as patches.

The kernel reduces stream chunks into *patches*: small JSON dicts with a `kind`, an `id`
and a sequence number `seq`. The same patches are (1) applied here, so the kernel always
holds a complete snapshot (for views that open later, saved notebooks, and tests), and
(2) sent to the browser, which applies them with the same rules (`js/src/store.js`).
The patch kinds, their fields and the rules both reducers follow (unknown kinds, missing
fields, repeated seq, bounded lists) are written down once, in :mod:`lgnb.widgets.protocol`;
`tests/fixtures/protocol/` holds recorded sequences both reducers replay to one state.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from lgnb.widgets.protocol import PATCH_KINDS

Patch = dict[str, Any]

MAX_LOG = 500
MAX_UPDATES = 500
#: How many rows of each bounded list the kernel and the page keep (the oldest go first).
#: The run view sends these to the page in its `caps` trait: one number, both sides.
CAPS = {"log": MAX_LOG, "updates": MAX_UPDATES}

_log = logging.getLogger("lgnb.widgets")


class ContentStore:
    """Applies patches; `snapshot()` is the JSON the views render from.

    `caps` bounds the event log and the update list (default :data:`CAPS`, the numbers the
    run view sends the page), as the page's store is bounded by the same numbers.
    """

    def __init__(self, *, caps: Mapping[str, int] | None = None) -> None:
        self.caps = dict(CAPS if caps is None else caps)
        for name in ("log", "updates"):
            if not isinstance(self.caps.get(name), int) or self.caps[name] < 1:
                raise ValueError(f"ContentStore caps[{name!r}] must be a positive int, got "
                                 f"{self.caps.get(name)!r}: pass e.g. caps={{'log': 500, 'updates': 500}}")
        self.seq = 0
        self.messages: dict[str, dict[str, Any]] = {}
        self.progress: dict[str, dict[str, Any]] = {}
        self.log: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.dropped = {"log": 0, "updates": 0}

    def apply(self, patch: Patch) -> None:
        """Apply one patch (numbered with `seq`); one already covered (seq not newer) is skipped.

        A patch of a kind this version does not know, or without an `id`, is skipped with a
        warning on the ``lgnb.widgets`` logger (the page does the same): a newer kernel's
        extra patches must not break an older reader.
        """
        seq = patch.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            if seq <= self.seq:
                return
            self.seq = seq
        kind, pid = patch.get("kind"), patch.get("id")
        if kind not in PATCH_KINDS or pid is None:
            _log.warning("lgnb: skipped a patch it cannot apply (kind %r, id %r): the kernel and "
                         "this reader speak different protocol versions?", kind, pid)
            return
        if kind == "msg.new":
            self.messages[pid] = {
                "id": pid, "node": _or(patch.get("node"), ""), "ns": _or(patch.get("ns"), ""),
                "type": _or(patch.get("type"), "ai"), "name": patch.get("name"),
                "content": [_or(patch.get("content"), "")],  # parts: appending stays O(1)
                "tool_calls": copy.deepcopy(_or(patch.get("tool_calls"), [])),
            }
            if patch.get("task"):
                self.messages[pid]["task"] = patch["task"]
        elif kind == "msg.delta":
            msg = self.messages.get(pid)
            if msg is not None:
                msg["content"].append(_or(patch.get("text"), ""))
        elif kind == "tool.delta":
            msg = self.messages.get(pid)
            if msg is not None:
                call = _tool_slot(msg, _or(patch.get("index"), 0))
                if patch.get("name"):
                    call["name"] = patch["name"]
                if patch.get("call_id"):
                    call["id"] = patch["call_id"]
                call["args"] += _or(patch.get("args"), "")
        elif kind == "msg.final":
            msg = self.messages.get(pid)
            if msg is not None:
                if patch.get("content") is not None:
                    msg["content"] = [patch["content"]]
                if patch.get("tool_calls") is not None:
                    msg["tool_calls"] = copy.deepcopy(patch["tool_calls"])
                msg["final"] = True
        elif kind == "progress":
            self.progress[pid] = {k: patch.get(k) for k in ("id", "node", "ns", "stage", "label", "value")}
        elif kind == "log":
            self._bounded(self.log, "log", _row(patch))
        elif kind == "update":
            self._bounded(self.updates, "updates", _row(patch))
        else:  # "error"
            self.errors.append(_row(patch))

    def load(self, snapshot: Mapping[str, Any]) -> None:
        """Replace everything with `snapshot` (another store's `snapshot()`), as the page
        does with the kernel's; rows beyond this store's caps count as dropped."""
        if not isinstance(snapshot, Mapping):
            raise TypeError(f"ContentStore.load takes a snapshot dict (ContentStore.snapshot()), "
                            f"got {type(snapshot).__name__}")
        self.seq = int(snapshot.get("seq") or 0)
        self.messages = {}
        for m in snapshot.get("messages") or []:
            msg = copy.deepcopy(dict(m))
            msg["content"] = [_or(msg.get("content"), "")]
            msg["tool_calls"] = _or(msg.get("tool_calls"), [])
            self.messages[msg["id"]] = msg
        self.progress = {p["id"]: copy.deepcopy(dict(p)) for p in snapshot.get("progress") or []}
        self.errors = copy.deepcopy(list(snapshot.get("errors") or []))
        dropped = snapshot.get("dropped") or {}
        self.dropped = {name: int(dropped.get(name) or 0) for name in ("log", "updates")}
        self.log, self.updates = [], []
        for row in snapshot.get("log") or []:
            self._bounded(self.log, "log", copy.deepcopy(dict(row)))
        for row in snapshot.get("updates") or []:
            self._bounded(self.updates, "updates", copy.deepcopy(dict(row)))

    def _bounded(self, items: list[dict[str, Any]], name: str, item: dict[str, Any]) -> None:
        items.append(item)
        if len(items) > self.caps[name]:
            del items[0]
            self.dropped[name] += 1

    def snapshot(self) -> dict[str, Any]:
        """Complete JSON state: what a freshly opened view needs."""
        return {
            "seq": self.seq,
            "messages": [dict(copy.deepcopy({k: v for k, v in m.items() if k != "content"}),
                              content="".join(m["content"])) for m in self.messages.values()],
            "progress": list(copy.deepcopy(list(self.progress.values()))),
            "log": copy.deepcopy(self.log),
            "updates": copy.deepcopy(self.updates),
            "errors": copy.deepcopy(self.errors),
            "dropped": dict(self.dropped),
        }


def _or(value: Any, default: Any) -> Any:
    """`value`, or `default` when it is missing (None): the protocol's default rule."""
    return default if value is None else value


def _row(patch: Patch) -> dict[str, Any]:
    """A list row: the patch without its `kind`."""
    return {k: v for k, v in patch.items() if k != "kind"}


def _tool_slot(msg: dict[str, Any], index: int) -> dict[str, Any]:
    for call in msg["tool_calls"]:
        if call.get("index") == index:
            return call
    call = {"index": index, "id": None, "name": "", "args": ""}
    msg["tool_calls"].append(call)
    return call


def coalesce(patches: list[Patch]) -> list[Patch]:
    """Merge consecutive text/argument deltas of one message; keep the latest progress value.

    Order is kept and nothing is lost: merged deltas concatenate, and a progress patch only
    replaces the previous one when it is the immediately preceding patch for the same bar.
    """
    out: list[Patch] = []
    parts: list[str] = []  # pending text of out[-1] when it is a merged delta

    def close() -> None:
        if parts:
            key = "text" if out[-1]["kind"] == "msg.delta" else "args"
            out[-1] = dict(out[-1], **{key: "".join(parts)})
            parts.clear()

    for p in patches:
        last = out[-1] if out else None
        if last is not None and last["kind"] == p["kind"] and last.get("id") == p.get("id"):
            if p["kind"] == "msg.delta":
                if not parts:
                    parts.append(last["text"])
                parts.append(p["text"])
                out[-1] = dict(last, seq=p["seq"])
                continue
            if p["kind"] == "tool.delta" and last["index"] == p["index"] and not p.get("name") and not p.get("call_id"):
                if not parts:
                    parts.append(last.get("args", ""))
                parts.append(p.get("args", ""))
                out[-1] = dict(last, seq=p["seq"])
                continue
            if p["kind"] == "progress":
                out[-1] = p
                continue
        close()
        out.append(p)
    close()
    return out

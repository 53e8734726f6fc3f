"""The content of a run view (messages, progress, event log, updates, errors) as patches.

The kernel reduces stream chunks into *patches*: small JSON dicts with a `kind`, an `id`
and a sequence number `seq`. The same patches are (1) applied here, so the kernel always
holds a complete snapshot (for views that open later, saved notebooks, and tests), and
(2) sent to the browser, which applies them with the same rules (`js/src/store.js`).
Keeping the rules this small is what lets the two sides agree.

Patch kinds:
  msg.new   {id, node, ns, type, content, tool_calls, name?}  create (or replace) a bubble
  msg.delta {id, text}                                          append streamed text
  tool.delta{id, index, name?, call_id?, args}                  append tool-call arguments
  msg.final {id, content, tool_calls}                           the finished message
  progress  {id, node, ns, stage, label, value}                 set a progress bar
  log       {id, node, ns, payload}                             a custom event
  update    {id, step, node, ns, delta}                         a node's state delta
  error     {id, node, ns, type, message}                       a node's failure
"""

from __future__ import annotations

import copy
from typing import Any

Patch = dict[str, Any]

MAX_LOG = 500
MAX_UPDATES = 500
#: How many rows of each bounded list the kernel and the page keep (the oldest go first).
#: The run view sends these to the page in its `caps` trait: one number, both sides.
CAPS = {"log": MAX_LOG, "updates": MAX_UPDATES}


class ContentStore:
    """Applies patches; `snapshot()` is the JSON the views render from."""

    def __init__(self) -> None:
        self.seq = 0
        self.messages: dict[str, dict[str, Any]] = {}
        self.progress: dict[str, dict[str, Any]] = {}
        self.log: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.dropped = {"log": 0, "updates": 0}

    def apply(self, patch: Patch) -> None:
        """Apply one patch (already numbered with `seq`)."""
        self.seq = max(self.seq, int(patch.get("seq", self.seq)))
        kind, pid = patch["kind"], patch.get("id")
        if kind == "msg.new":
            self.messages[pid] = {
                "id": pid, "node": patch.get("node", ""), "ns": patch.get("ns", ""),
                "type": patch.get("type", "ai"), "name": patch.get("name"),
                "content": [patch.get("content", "")],  # parts: appending stays O(1)
                "tool_calls": copy.deepcopy(patch.get("tool_calls", [])),
            }
        elif kind == "msg.delta":
            msg = self.messages.get(pid)
            if msg is not None:
                msg["content"].append(patch["text"])
        elif kind == "tool.delta":
            msg = self.messages.get(pid)
            if msg is not None:
                call = _tool_slot(msg, patch["index"])
                if patch.get("name"):
                    call["name"] = patch["name"]
                if patch.get("call_id"):
                    call["id"] = patch["call_id"]
                call["args"] += patch.get("args", "")
        elif kind == "msg.final":
            msg = self.messages.get(pid)
            if msg is not None:
                if "content" in patch:
                    msg["content"] = [patch["content"]]
                msg["tool_calls"] = copy.deepcopy(patch.get("tool_calls", msg["tool_calls"]))
                msg["final"] = True
        elif kind == "progress":
            self.progress[pid] = {k: patch.get(k) for k in ("id", "node", "ns", "stage", "label", "value")}
        elif kind == "log":
            self._bounded(self.log, "log", CAPS["log"], {k: v for k, v in patch.items() if k != "kind"})
        elif kind == "update":
            self._bounded(self.updates, "updates", CAPS["updates"], {k: v for k, v in patch.items() if k != "kind"})
        elif kind == "error":
            self.errors.append({k: v for k, v in patch.items() if k != "kind"})
        else:
            raise ValueError(f"unknown patch kind {kind!r}")

    def _bounded(self, items: list[dict[str, Any]], name: str, limit: int, item: dict[str, Any]) -> None:
        items.append(item)
        if len(items) > limit:
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

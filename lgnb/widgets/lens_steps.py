"""Stream chunks → the lens's super-steps (plan → execute → update → checkpoint).

An lgnb graph streams its own records (stream mode ``"pregel"``, `lgnb.pregel.records`).
Any other graph (LangGraph's) is read through the public ``tasks``, ``updates``,
``checkpoints`` and ``values`` modes, from which records of the same shape are built, with
what those modes cannot tell left empty: no reducer names, no channel versions, no
triggering versions, no task durations. The steps say so (`reduced`).

A step is a dict: ``{"index", "step", "plan", "execute", "update", "checkpoints",
"before", "after", "changed", "counts", "status", "reduced", "subgraphs"}`` (records as in
`lgnb.pregel.records`, values JSON-able). `subgraphs` holds the records a subgraph streamed
while the step ran (lgnb graphs: its own plan/execute/update/checkpoint records), one entry per
namespace: ``{"ns", "name" ("outer" or "outer › inner"), "records", "text"}``, `text` being
the records through `format_record`. It is *complete* once the barrier was crossed
(the ``values`` after it arrived) and, when the graph checkpoints, its checkpoint saved.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from lgnb.pregel.records import format_record, to_jsonable
from lgnb.widgets._forms import RAISED_ID
from lgnb.widgets._stream import RaisedBy, normalize

_SETTLE_S = 1.0
"""How long the lens waits for LangGraph's background thread to save a step's writes."""

PUSH = "__pregel_push"
REDUCED_NOTICE = ("This graph is not an lgnb graph: the lens builds its steps from the public "
                  "tasks, updates and checkpoints stream modes, which do not say channel versions, "
                  "triggering versions or task durations (the reducers are read from the compiled "
                  "graph's channels when it runs here). Those cells are left empty (—), and a "
                  "subgraph's own steps are not shown (build the graph with lgnb's StateGraph to "
                  "see them). With a checkpointer the routes each task took are read from it.")


def reducer_names(graph: Any) -> dict[str, str]:
    """Each state key's reducer, named as lgnb's records name them, read from a compiled
    graph's channels (LangGraph's too); empty when the graph runs elsewhere (remote)."""
    from lgnb.pregel.records import reducer_name

    channels = getattr(graph, "channels", None)
    if not isinstance(channels, Mapping):
        return {}
    add_messages = getattr(sys.modules.get("langgraph.graph.message"), "add_messages", None)
    names = {}
    for key, channel in channels.items():
        if not isinstance(key, str):
            continue
        op = getattr(channel, "operator", None)
        names[key] = "add_messages" if op is not None and op is add_messages else reducer_name(channel)
    return names


def _root(ns: Any) -> bool:
    return not ns


def changed_keys(before: Any, after: Any) -> list[str]:
    """State keys whose value differs (JSON-able values compared)."""
    b = before if isinstance(before, Mapping) else {}
    a = after if isinstance(after, Mapping) else {}
    return [k for k in a if k not in b or a[k] != b[k]] + [k for k in b if k not in a]


class StepBuilder:
    """Folds chunks into records and steps; `feed` says when the open step is complete."""

    def __init__(self, *, native: bool, checkpointed: bool, input: Any = None,
                 reducers: Mapping[str, str] | None = None, initial: Mapping[str, Any] | None = None,
                 saved_writes: Callable[[Mapping[str, Any]], Sequence[Any] | None] | None = None) -> None:
        self.native = native  # records come from the "pregel" stream mode
        self.reducers = dict(reducers or {})  # state key → reducer name (graphs not lgnb's)
        self.checkpointed = checkpointed
        self.input = input
        self.records: list[dict[str, Any]] = []  # root-namespace records so far
        self.sub_records: list[dict[str, Any]] = []  # records under a subgraph's namespace
        self.steps: list[dict[str, Any]] = []
        # the latest state (JSON-able); before the input, the values keys hold with nothing
        # written (a reducer's empty list: LangGraph's step -1 checkpoint has them too)
        self._initial = dict(initial) if initial else None
        # (graphs not lgnb's) the writes the saver keeps for a checkpoint's tasks, hidden
        # channels included: `(task_id, channel, value)`s, or None when it cannot tell
        self._saved_writes = saved_writes
        self._fired: set[str] = set()  # hidden channels the saver says were written, not yet consumed
        self._at: Any = None  # the config of the last checkpoint streamed: the next step runs from it
        self.values: Any = self._initial
        self.raw_values: Any = None
        self.interrupts: list[dict[str, Any]] = []
        self.payloads: dict[str, Any] = {}  # interrupt id → its payload as the node passed it
        self.interrupt_nodes: dict[str, str] = {}
        self._raised = RaisedBy()  # the nodes that raised this segment's NodeInterrupts
        self.paused = False
        self.finished = False  # the last checkpoint said nothing comes next
        self.open: dict[str, Any] | None = None
        self.last_closed: dict[str, Any] | None = None
        self._pending_close = False
        self._seen_values = False
        self._native_seen = False
        self._last_step = 0
        self._checkpoint_ids: set[str] = set()
        self._starting = False  # the next checkpoint streamed is the one a resume starts from
        self._resume_values = False  # the next values streamed are the state a resume starts from
        self._command_update: Any = None
        self._start_values: tuple[int, Any] | None = None  # step 0 to open with the next chunk
        # the tasks the last checkpoint planned (LangGraph's `checkpoints` payload): the
        # plan of a step stopped at a breakpoint, and the writes a resumed step restores
        self._next_tasks: list[Mapping[str, Any]] = []

    # -- steps -------------------------------------------------------------------------
    def _step(self) -> dict[str, Any]:
        if self.open is None:
            self.open = {"index": len(self.steps), "step": None, "plan": None, "execute": None,
                         "update": None, "checkpoints": [], "before": self.values, "after": None,
                         "changed": [], "counts": {}, "status": "running", "reduced": not self.native,
                         "error": None, "interrupts": [], "subgraphs": []}
            self.steps.append(self.open)
        return self.open

    def _close(self, status: str) -> dict[str, Any] | None:
        step, self.open = self.open, None
        if step is None:
            return None
        step["status"] = status
        step["reduced"] = not self._native_seen
        if status == "done":  # the triggers its tasks consumed
            for task in (step["plan"] or {}).get("tasks") or ():
                for trigger in task.get("triggers") or ():
                    self._fired.discard(str(trigger.get("channel")))
        if step["after"] is None:
            step["after"] = self.values
        step["changed"] = changed_keys(step["before"], step["after"]) if step["update"] or status == "done" else []
        return step

    def begin_segment(self, *, resuming: bool = False, update: Any = None) -> None:
        """A new stream on the thread. `resuming`: its input is None or a `Command`, so the
        first values and checkpoint it streams are the state and the checkpoint it starts
        from (not saved by it); `update`: that Command's `update`, applied before it."""
        self.paused = False
        self.interrupts = []
        self.payloads = {}
        self._raised = RaisedBy()
        self._starting = self._resume_values = resuming
        self._command_update = update

    def questions(self) -> tuple[list[dict[str, Any]], dict[str, Any], Any]:
        """The questions the run waits on (to ask them again: `ask_again`)."""
        return list(self.interrupts), dict(self.payloads), self._raised

    def ask_again(self, questions: tuple[list[dict[str, Any]], dict[str, Any], Any]) -> None:
        """The engine refused the answers to `questions` (as `questions()` gave them) and
        saved nothing: the run waits on them again. The step that ran and raised the refusal
        is marked ``"refused"`` (not ``"error"``): the run did not fail, and the good answer
        runs that step number again."""
        interrupts, payloads, self._raised = questions
        self.interrupts, self.payloads, self.paused = list(interrupts), dict(payloads), True
        if self.steps and self.steps[-1]["status"] == "error":
            self.steps[-1]["status"] = "refused"

    def end_segment(self, error: BaseException | None = None) -> dict[str, Any] | None:
        """The stream ended (done, interrupted, or `error`): close the open step."""
        if self._start_values is not None:
            self._start_step()
        if error is not None:
            step = self._step()
            if step["step"] is None and step["plan"] is None and len(self.steps) > 1:
                # raised before the step planned anything (the recursion limit): it is the
                # step after the last one, where no task ran
                numbers = [s["step"] for s in self.steps if isinstance(s["step"], int)]
                step["step"] = max(numbers) + 1 if numbers else None
            self._add_saved_siblings(step)
            step["error"] = {"type": type(error).__name__, "message": str(error).split("\nFor troubleshooting")[0]}
            if step["update"] is None:
                step["update"] = self._error_update(step, error)
            return self._close("error")
        if self.open is None and self.paused and not self.interrupts and not self._native_seen:
            self._breakpoint_step()
        if self.open is None:
            return None
        if self.paused:
            for intr in self.interrupts:
                intr["node"] = intr.get("node") or (
                    self._raised.take(intr["value"]) if intr["id"] == RAISED_ID
                    else self.interrupt_nodes.get(intr["id"], ""))
            self.open["interrupts"] = list(self.interrupts)
            return self._close("interrupted")
        return self._close("done")

    def _breakpoint_step(self) -> None:
        """A static breakpoint (`interrupt_before` / `interrupt_after`) stopped the run: the
        step the last checkpoint planned, shown planned and not run (as lgnb's records do)."""
        if not self._next_tasks:
            return
        step = self._step()
        step["step"] = self._last_step + 1
        tasks: list[dict[str, Any]] = [
            {"id": str(t.get("id")), "node": str(t.get("name")), "send": None, "path": [], "triggers": []}
            for t in self._next_tasks]
        step["plan"] = self._record({"kind": "plan", "step": step["step"], "ns": "", "tasks": tasks})
        step["counts"] = _counts(step["plan"])

    def _restore(self, step: dict[str, Any]) -> None:
        """A resumed step: the tasks that finished before the interrupt (their writes saved
        with the checkpoint, listed with a `result`) do not run again; they are planned and
        executed with their saved writes, marked `restored`, as lgnb's records show them."""
        # as planned when the step first ran (a Send's argument, its place among the Sends:
        # the order its write is applied in), if the lens saw that
        before = next((s for s in reversed(self.steps[:-1]) if s.get("plan")), None)
        planned = {t["id"]: t for t in (before or {}).get("plan", {}).get("tasks") or ()} if before else {}
        for t in self._next_tasks:
            result = t.get("result")
            if not result or t.get("error"):
                continue
            task_id, node = str(t.get("id")), str(t.get("name"))
            prior = planned.get(task_id)
            step["plan"]["tasks"].append(dict(prior) if prior is not None and prior["node"] == node else
                                         {"id": task_id, "node": node, "send": None, "path": [], "triggers": []})
            if step["execute"] is None:
                step["execute"] = self._record({"kind": "execute", "step": step["step"], "ns": "", "tasks": []})
            step["execute"]["tasks"].append({"id": task_id, "node": node, "writes": _writes(result),
                                             "duration_ms": None, "error": None, "interrupts": [],
                                             "restored": True})

    def _error_update(self, step: dict[str, Any], error: BaseException) -> dict[str, Any] | None:
        """An `InvalidUpdateError` at the barrier, told from the exception and the writes."""
        if type(error).__name__ != "InvalidUpdateError":
            return None
        import re

        m = re.search(r"At key '([^']*)'", str(error))
        channel = m.group(1) if m else None
        writes = []
        for task in (step["execute"] or {}).get("tasks", []):
            for chan, value in task.get("writes") or []:
                if chan == channel:
                    writes.append({"task_id": task.get("id"), "node": task.get("node", ""), "value": value})
        return {"kind": "update", "step": step["step"], "ns": "", "source": "loop", "channels": [],
                "error": {"type": type(error).__name__, "message": str(error).split("\nFor troubleshooting")[0],
                          "channel": channel, "writes": writes}}

    # -- feeding -------------------------------------------------------------------------
    def feed(self, chunk: Any) -> bool:
        """Take one chunk; True when a step just became complete (`last_closed`)."""
        if self._start_values is not None:
            self._start_step()
        ns, mode, payload = normalize(chunk)
        if not _root(ns):
            if mode == "pregel" and isinstance(payload, Mapping):
                self._on_sub_record(payload)
            return False
        handler = getattr(self, f"_on_{mode}", None)
        if handler is None or not handler(payload):
            return False
        if self._pending_close:
            self._pending_close = False
            return True
        if self.open is not None:
            self.last_closed = self._close("done")
        return True

    def _complete(self, step: dict[str, Any]) -> bool:
        """Barrier crossed (values seen; for lgnb records, the update too) and, when the
        graph checkpoints, the checkpoint saved after it."""
        if self._native_seen:
            if step["update"] is None or step["update"].get("error"):
                return False  # the run fails now: the error closes the step
            if self.checkpointed:
                return bool(step.get("_ckpt_after_update"))
            return bool(step.get("_values"))  # else the next plan (or the end) closes it
        if not step.get("_values"):
            return False
        return not self.checkpointed or bool(step.get("_ckpt_after_values"))

    def _checkpoint(self, record: dict[str, Any]) -> bool:
        step = self.open
        if step is None and self.steps and not self.paused:
            self.steps[-1]["checkpoints"].append(record)  # saved after the step we showed
            return False
        step = self._step()
        step["checkpoints"].append(record)
        if step["step"] is None:
            step["step"] = record.get("step")
        if step.get("_values"):
            step["_ckpt_after_values"] = True
        if step["update"] is not None:
            step["_ckpt_after_update"] = True
        return self._complete(step)

    def _on_pregel(self, record: Any) -> bool:
        if not isinstance(record, Mapping) or record.get("ns"):
            return False
        record = dict(record)
        self._native_seen = True
        self.records.append(record)
        kind = record.get("kind")
        if kind == "checkpoint":
            return self._checkpoint(record)
        crossed = self._crossed()
        if crossed is not None and kind == "plan":
            # the open step crossed its barrier (no checkpoint or values closed it: a
            # resume's `Command(update=...)`, a graph without a checkpointer whose step
            # changed no output key): it is complete once the next step is planned
            self.last_closed = self._close("done")
        step = self._step()
        step["reduced"] = False
        step["step"] = record.get("step")
        if kind == "plan":
            step["plan"] = record
            step["counts"] = _counts(record)
            if crossed is not None:
                return self._lookahead()
        elif kind == "execute":
            step["execute"] = record
        elif kind == "update":
            step["update"] = record
            state = dict(step["before"]) if isinstance(step["before"], Mapping) else {}
            for chan in record.get("channels") or ():
                if chan.get("internal"):
                    continue
                if chan.get("has_value"):
                    state[chan["channel"]] = chan.get("after")
                else:
                    state.pop(chan["channel"], None)
            step["after"] = self.values = state
        return self._complete(step)

    def _crossed(self) -> dict[str, Any] | None:
        """The open step when its barrier was crossed without an error (lgnb records)."""
        step = self.open
        if step is None or step["update"] is None or step["update"].get("error"):
            return None
        return step

    def _on_sub_record(self, record: Mapping[str, Any]) -> None:
        """A record under a subgraph's namespace: kept with the root step it ran in."""
        record = dict(record)
        self.sub_records.append(record)
        ns = str(record.get("ns") or "")
        subs = self._step()["subgraphs"]
        entry = next((e for e in subs if e["ns"] == ns), None)
        if entry is None:
            name = " › ".join(part.split(":")[0] for part in ns.split("|") if part)
            entry = {"ns": ns, "name": name, "records": [], "text": ""}
            subs.append(entry)
        entry["records"].append(record)
        text = format_record(record)
        entry["text"] = f"{entry['text']}\n{text}" if entry["text"] else text

    def _on_tasks(self, payload: Any) -> bool:
        if not isinstance(payload, Mapping) or "name" not in payload:
            return False
        node = str(payload["name"])
        self._starting = False
        for i in payload.get("interrupts") or ():
            iid = str(i.get("id", "") if isinstance(i, Mapping) else getattr(i, "id", "") or "")
            if iid == RAISED_ID:  # shared by every NodeInterrupt: matched by value
                self._raised.note(node, to_jsonable(i.get("value") if isinstance(i, Mapping) else getattr(i, "value", None)))
            elif iid:
                self.interrupt_nodes.setdefault(iid, node)
        if self._native_seen:
            return False
        step = self._step()
        if "result" not in payload and "error" not in payload:
            done = (step["execute"] or {}).get("tasks") or []
            tid = str(payload.get("id"))
            # (not a restored task listed again, nor, in a resumed step, one the checkpoint it
            # resumes planned beside the restored ones: those count as done before it starts)
            resumed = any(t.get("restored") for t in done)
            if (step["plan"] is not None and len(done) >= len(step["plan"]["tasks"])
                    and all(t["id"] != tid for t in step["plan"]["tasks"])
                    and not (resumed and any(str(t.get("id")) == tid for t in self._next_tasks))):
                # a new step began before the last one showed a barrier (no state change):
                # close it, open the next one (shown on the next click)
                if step["update"] is None:
                    step["update"] = self._update_from_values(step, self.values, False)
                self.last_closed = self._close("done")
                self._on_tasks(payload)
                return False if self.last_closed is None else self._lookahead()
            plan = step["plan"]
            if plan is None:
                self._last_step = self._last_step + 1 if step["step"] is None else step["step"]
                step["step"] = self._last_step
                plan = step["plan"] = self._record({"kind": "plan", "step": step["step"], "ns": "", "tasks": []})
                self._restore(step)
            if any(t["id"] == str(payload.get("id")) for t in plan["tasks"]):
                return False  # a restored task: LangGraph lists it as started, it does not run
            # LangGraph's payload lists every trigger the node has; those the saver says
            # were written (a join's channel, not the plain edge into it) are what fired
            triggers = [str(t) for t in payload.get("triggers") or ()]
            fired = [t for t in triggers if _hidden(t) and t in self._fired]
            if fired:
                triggers = [t for t in triggers if not _hidden(t) or t in fired]
            send = {"node": node, "arg": to_jsonable(payload.get("input"))} if PUSH in triggers else None
            plan["tasks"].append({"id": str(payload.get("id")), "node": node, "send": send, "path": [],
                                  "triggers": [{"channel": t, "version": None} for t in triggers if t != PUSH]})
            order = {str(t.get("id")): i for i, t in enumerate(self._next_tasks)}
            if all(t["id"] in order for t in plan["tasks"]):  # the planned order, restored ones in place
                plan["tasks"].sort(key=lambda t: order[t["id"]])
            step["counts"] = _counts(plan)
            return False
        if step["execute"] is None:
            step["execute"] = self._record({"kind": "execute", "step": step["step"], "ns": "", "tasks": []})
        result, err = payload.get("result"), payload.get("error")
        writes = _writes(result)
        intrs = [to_jsonable(getattr(i, "value", i.get("value") if isinstance(i, Mapping) else i))
                 for i in payload.get("interrupts") or ()]
        step["execute"]["tasks"].append({"id": str(payload.get("id")), "node": node, "writes": writes,
                                         "duration_ms": None,
                                         "error": None if err is None else f"{type(err).__name__}: {err}",
                                         "interrupts": intrs})
        return False

    def _lookahead(self) -> bool:
        self._pending_close = True
        return True

    def _record(self, record: dict[str, Any]) -> dict[str, Any]:
        self.records.append(record)
        return record

    def _on_values(self, payload: Any) -> bool:
        if self.paused or isinstance(payload, Mapping) and "__interrupt__" in payload:
            # the state as the interrupt found it, then (LangGraph) a preview with the
            # finished tasks' writes applied: no barrier was crossed, the state stays as
            # saved (what `get_state` shows); the writes apply when the step completes
            return False
        if self._native_seen:
            self.raw_values, values = payload, to_jsonable(payload)
            step = self._crossed()
            if step is None:  # a resume's first values: the state it starts from
                self.values = values
                return False
            # the whole state after the barrier: the records name the channels it changed,
            # the values also show the keys that hold a value no step wrote (a reducer's
            # initial empty list, ...)
            state = step["after"] if isinstance(step["after"], Mapping) else {}
            step["after"] = self.values = values if not isinstance(values, Mapping) else {
                **values, **{k: v for k, v in state.items() if k not in values}}
            step["_values"] = True
            return self._complete(step)
        first = not self._seen_values
        self._seen_values = True
        resumed, self._resume_values = self._resume_values and self.open is None, False
        if resumed and self._command_update is None:
            # a resume's first values: the state it starts from (the lens may not have seen it)
            self.raw_values, self.values = payload, to_jsonable(payload)
            return False
        if first and not resumed and self._command_update is None:
            return self._input_steps(payload)
        # the step opens (its `before` taken) before the new values land
        step = self._step() if self.open is not None or first or resumed else None
        before, self.raw_values, self.values = self.values, payload, to_jsonable(payload)
        if step is None:
            return False
        step["after"] = self.values
        step["_values"] = True
        if resumed:  # the Command's update landed; no checkpoint is saved for it
            step["_ckpt_after_values"] = True
        if first and step["step"] is None:
            step["step"] = -1
        if not self._native_seen and step["update"] is None:
            step["update"] = self._update_from_values(step, before, first or resumed)
        return self._complete(step)

    def _input_steps(self, payload: Any) -> bool:
        """The input's two steps, as lgnb's records show them: the input lands in
        ``__start__`` (step -1, the "input" checkpoint), then the hidden ``__start__`` task
        maps it to the state keys (step 0, a "loop" checkpoint). LangGraph's streams hide
        that task; its checkpoints and the values after it tell both steps. The first is
        complete now; the second opens with the next chunk (`_start_step`), complete once
        its checkpoint is saved or the next step begins."""
        given = to_jsonable(self.input)
        first = self._step()
        if first["step"] is None:
            first["step"] = -1
        first["update"] = self._record({
            "kind": "update", "step": first["step"], "ns": "", "source": "input",
            "channels": [{"channel": "__start__", "reducer": self.reducers.get("__start__"), "before": None,
                          "had_value": False,
                          "writes": [{"task_id": None, "node": "__input__", "value": given}],
                          "after": given, "has_value": True, "version": None, "internal": True}],
            "error": None})
        first["after"] = self.values = dict(self._initial or {})
        self.last_closed = self._close("done")
        self._start_values = (first["step"] + 1, payload)
        return True

    def _start_step(self) -> None:
        """Step 0 of an input run on a graph that is not lgnb's: the hidden ``__start__``
        task, its writes (the input's state keys) and the values after its barrier."""
        assert self._start_values is not None
        number, payload = self._start_values
        self._start_values = None
        given = to_jsonable(self.input)
        step = self._step()
        step["step"] = number
        planned = next((t for t in self._next_tasks if t.get("name") == "__start__"), {})
        task_id = str(planned.get("id") or "")
        step["plan"] = self._record({"kind": "plan", "step": number, "ns": "", "tasks": [
            {"id": task_id, "node": "__start__", "send": None, "path": [],
             "triggers": [{"channel": "__start__", "version": None}]}]})
        step["counts"] = _counts(step["plan"])
        self.raw_values, self.values = payload, to_jsonable(payload)
        kept = self.values if isinstance(self.values, Mapping) else {}
        writes = [[k, v] for k, v in given.items() if k in kept] if isinstance(given, Mapping) else []
        step["execute"] = self._record({"kind": "execute", "step": number, "ns": "", "tasks": [
            {"id": task_id, "node": "__start__", "writes": writes, "duration_ms": None, "error": None,
             "interrupts": []}]})
        step["after"] = self.values
        step["_values"] = True
        step["update"] = self._update_from_values(step, step["before"], False)
        self._last_step = max(self._last_step, number)

    def _update_from_values(self, step: dict[str, Any], before: Any, first: bool) -> dict[str, Any]:
        b = before if isinstance(before, Mapping) else {}
        a = self.values if isinstance(self.values, Mapping) else {}
        channels = []
        if first or step["plan"] is None:
            source = "input" if self._command_update is None else "command"
            given = self.input if self._command_update is None else self._command_update
            if isinstance(given, Mapping):
                given = list(given.items())
            elif not isinstance(given, (list, tuple)):
                given = []
            for item in given:
                if isinstance(item, (list, tuple)) and len(item) == 2:
                    channels.append(_chan(str(item[0]), b, a, self.reducers, [{"task_id": None, "node": "input",
                                                                "value": to_jsonable(item[1])}]))
        else:
            source = "loop"
            order: dict[str, list[dict[str, Any]]] = {}
            for task in _in_apply_order((step["execute"] or {}).get("tasks", []), step["plan"]):
                for chan, value in task["writes"]:
                    if _hidden(chan):
                        continue  # (a route or a Send the saver told: not a state key)
                    order.setdefault(chan, []).append({"task_id": task["id"], "node": task["node"], "value": value})
            channels = [_chan(k, b, a, self.reducers, w) for k, w in order.items()]
        return self._record({"kind": "update", "step": -1 if first else step["step"], "ns": "", "source": source,
                             "channels": channels, "error": None})

    def _on_checkpoints(self, payload: Any) -> bool:
        if not isinstance(payload, Mapping):
            return False
        meta = payload.get("metadata") or {}
        nxt = payload.get("next")
        self.finished = isinstance(nxt, (list, tuple)) and len(nxt) == 0
        if self._native_seen:
            return False  # the "pregel" checkpoint record tells it
        cfg = (payload.get("config") or {}).get("configurable") or {}
        self._next_tasks = [t for t in payload.get("tasks") or () if isinstance(t, Mapping)]
        if isinstance(meta.get("step"), int):
            self._last_step = meta["step"]
        checkpoint_id = str(cfg.get("checkpoint_id", ""))
        self._at = payload.get("config")
        starting, self._starting = self._starting, False
        if starting or checkpoint_id in self._checkpoint_ids:
            return False  # a resume streams the checkpoint it starts from: not saved again
        self._checkpoint_ids.add(checkpoint_id)
        self._add_hidden_writes(payload.get("parent_config"))
        record = self._record({"kind": "checkpoint", "step": meta.get("step"), "ns": "",
                               "id": checkpoint_id, "source": str(meta.get("source", ""))})
        return self._checkpoint(record)

    def _add_saved_siblings(self, step: dict[str, Any]) -> None:
        """A failed step of a graph not lgnb's: LangGraph raises before it streams the
        tasks that finished beside the failing one, but its saver keeps their writes (they
        do not run again on retry). Shown as executed, from the saver."""
        if self._native_seen or self._saved_writes is None or not step["plan"] or not isinstance(self._at, Mapping):
            return
        shown = {t["id"] for t in (step["execute"] or {}).get("tasks") or ()}
        missing = [t for t in step["plan"]["tasks"] if t["id"] not in shown]
        if not missing:
            return
        try:
            saved = self._saved_writes(self._at) or ()
        except Exception:  # noqa: BLE001 - as in `_add_hidden_writes`
            return
        for task in missing:
            writes = [[str(w[1]), to_jsonable(w[2])] for w in saved  # (not its error, interrupt, ...)
                      if len(w) >= 3 and str(w[0]) == task["id"] and _written(str(w[1]))]
            if not writes:
                continue
            if step["execute"] is None:
                step["execute"] = self._record({"kind": "execute", "step": step["step"], "ns": "", "tasks": []})
            step["execute"]["tasks"].append({"id": task["id"], "node": task["node"], "writes": writes,
                                             "duration_ms": None, "error": None, "interrupts": []})

    def _add_hidden_writes(self, parent: Any) -> None:
        """A step's tasks ran from the checkpoint `parent`: the saver keeps their writes
        there, also to the channels LangGraph's streams never show (`branch:to:x` of an edge
        or a route, a waiting edge's `join:...`, a `Send`). Added to the tasks' writes, they
        tell which route each task took (the edges the next step lights: `lens_edges`) and
        which triggers fired."""
        step = self.open if self.open is not None else (self.steps[-1] if self.steps else None)
        if self._saved_writes is None or not isinstance(parent, Mapping) or step is None or not step["execute"]:
            return
        try:
            saved = self._settled_writes(parent, {str(t["id"]) for t in step["execute"]["tasks"]})
        except Exception:  # noqa: BLE001 - a saver that cannot be read here: the streams' writes stay
            return
        by_task: dict[str, list[list[Any]]] = {}
        for write in saved or ():
            if len(write) >= 3 and _hidden(str(write[1])):
                by_task.setdefault(str(write[0]), []).append([str(write[1]), to_jsonable(write[2])])
        for task in step["execute"]["tasks"]:
            for write in by_task.get(task["id"], ()):
                if write not in task["writes"]:
                    task["writes"].append(write)
                self._fired.add(write[0])

    def _settled_writes(self, parent: Mapping[str, Any], task_ids: set[str]) -> Any:
        """The saved writes of checkpoint `parent` once every task in `task_ids` has some.

        LangGraph saves a task's writes in a background thread, even with
        durability="sync" (which waits for the checkpoint, not the writes), so right after
        a step they may not all be there yet; read too early, a missing route write lit
        the edge the task did not take. Waits at most `_SETTLE_S` (a task that wrote
        nothing at all never shows up)."""
        assert self._saved_writes is not None
        deadline = time.monotonic() + _SETTLE_S
        while True:
            saved = self._saved_writes(parent)
            have = {str(w[0]) for w in saved or () if len(w) >= 3}
            if task_ids <= have or time.monotonic() >= deadline:
                return saved
            time.sleep(0.005)

    def _on_updates(self, payload: Any) -> bool:
        if not isinstance(payload, Mapping) or "__interrupt__" not in payload:
            return False
        self.paused = True
        for intr in payload["__interrupt__"] or ():
            field = intr.get if isinstance(intr, Mapping) else partial(getattr, intr)
            iid = str(field("id", "") or "")
            value = to_jsonable(field("value", intr))
            node = self._raised.take(value) if iid == RAISED_ID else self.interrupt_nodes.get(iid, "")
            entry = {"id": iid, "value": value, "node": node}
            schema = field("response_schema", None)
            if schema is not None:
                entry["response_schema"] = schema
            self.interrupts.append(entry)
            self.payloads[iid] = field("value", intr)  # (the node's own, `answered_with`)
        return False


def _written(channel: str) -> bool:
    """A channel a task writes to (a state key, a route, a `Send`), not one of the engine's
    own records of it (`__error__`, `__interrupt__`, `__resume__`, ...)."""
    return not channel.startswith("__") or channel == "__pregel_tasks"


def _hidden(channel: str) -> bool:
    """A channel of the graph's wiring, not a state key: an edge's or route's `branch:to:x`,
    a waiting edge's `join:...`, the `Send`s of `__pregel_tasks`."""
    return channel.startswith(("branch:", "join:", "__pregel_tasks"))


def _writes(result: Any) -> list[list[Any]]:
    """A task's writes `[channel, value]` from its `result` (LangGraph's tasks payload)."""
    if isinstance(result, Mapping):
        out: list[list[Any]] = []
        for k, v in result.items():
            # LangGraph folds a task's repeated writes to one channel into {"$writes": [...]}
            # (e.g. a ToolNode whose tools each return a Command): each is its own write
            folded = v.get("$writes") if type(v) is dict and len(v) == 1 else None
            for value in folded if isinstance(folded, list) else [v]:
                out.append([str(k), to_jsonable(value)])
        return out
    if isinstance(result, (list, tuple)):
        return [[str(w[0]), to_jsonable(w[1])] for w in result if isinstance(w, (list, tuple)) and len(w) == 2]
    return []


def _chan(key: str, b: Mapping[str, Any], a: Mapping[str, Any], reducers: Mapping[str, str],
          writes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"channel": key, "reducer": reducers.get(key), "before": b.get(key), "had_value": key in b, "writes": writes,
            "after": a.get(key), "has_value": key in a, "version": None, "internal": False}


def _counts(plan: Mapping[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for task in plan.get("tasks") or ():
        counts[task["node"]] = counts.get(task["node"], 0) + 1
    return counts


def public_step(step: Mapping[str, Any]) -> dict[str, Any]:
    """A step without private keys (what `.steps` and the view show)."""
    return {k: v for k, v in step.items() if not k.startswith("_")}


def _in_apply_order(tasks: list[dict[str, Any]], plan: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A step's executed tasks (in the order they ended) in the order LangGraph applies
    their writes: by task path, so the nodes an edge started, by name, then the `Send`s,
    in the order they were sent (the plan lists them so: `_on_tasks`)."""
    if plan is None or len(tasks) < 2:
        return tasks
    keys: dict[str, tuple[int, str, int]] = {}
    sends = 0
    for planned in plan.get("tasks") or ():
        if planned.get("send") is not None:
            keys[planned["id"]] = (1, "", sends)
            sends += 1
        else:
            keys[planned["id"]] = (0, str(planned.get("node")), 0)
    last = (2, "", 0)  # a task the plan does not list: after the others, as it ended
    return sorted(tasks, key=lambda t: keys.get(t["id"], last))

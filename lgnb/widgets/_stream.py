"""Stream chunks → run state and content patches.

Input: what `graph.stream(..., stream_mode=[...], subgraphs=True)` yields, either v1
tuples ``(namespace, mode, payload)`` (or ``(mode, payload)``) or v2 envelopes
``{"type": mode, "ns": namespace, "data": payload}``. Output: patches for
:class:`~lgnb.widgets._store.ContentStore` plus the live graph state (step, nodes running,
visited nodes, taken edges, interrupts, final values) that the view syncs as traits.

Everything here uses only the public stream shapes, so it reads LangGraph and lgnb alike,
plus one lgnb-only mode, `CUSTOM_WITH_TASK`, which names the task of each custom event.

Step numbers are the checkpoints' `metadata["step"]`: a task that starts a root super-step
is at the step after the last root checkpoint the stream showed (`checkpoints` mode, which
`lgnb.run` asks for on a local graph with a saver). Without checkpoints, the count starts
at `first_step`: 1 for a StateGraph (its input is written by a hidden `__start__` step,
checkpoint 0), 0 for a functional-API `@entrypoint` (the input triggers it directly). A
graph the view cannot look into (a remote one) starts at 1 unless its first task says it was
triggered by `__start__` itself, as an `@entrypoint`'s is: then at 0.

Custom events are shown under the node that wrote them when that is known: the payload
names it (`"node"`), lgnb's engine names the task (`CUSTOM_WITH_TASK`), or all tasks running
in the event's namespace are of one node. Otherwise (a LangGraph graph with parallel
branches: a v1 `custom` chunk carries only its namespace) the event is shown under its
namespace and root step ("step 3 · <stage>"), never under a node that may not be the writer.

A node run as several tasks in one step (a `Send` fan-out, or an `@entrypoint` calling one
`@task` several times) gets one progress bar per task when lgnb's engine names the task:
"worker #1", "worker #2", ... in the order the step's tasks started (for `Send`s, their
order in the list), as the lens counts them "worker ×3"; its log rows carry that label as
`task`. A LangGraph `custom` chunk names no task, so there all tasks of the node share the
node's one bar and rows ("worker"): which worker wrote an event is unknowable from it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from lgnb.draw import END, START, jsonable
from lgnb.pregel._run import CUSTOM_WITH_TASK
from lgnb.widgets._forms import RAISED_ID
from lgnb.widgets._store import Patch
from lgnb.widgets.lens_edges import join_sources

_TASK_NOTE = re.compile(r"During task with name '([^']*)'")

SAVED_STATE = "lgnb:saved"
"""A view-only stream mode: a chunk ``((), SAVED_STATE, {"step": n, "running": bool})``
says the values that follow are a thread's saved state at checkpoint step `n`, not a
run's input (what `lgnb.attach` streams for a server thread it shows). With `running`
false the next task starts step n + 1; with it true step n + 1 is under way (its tasks
began before the view joined, or it is paused at a question), and the next task to start
begins step n + 2 (after a resume: step n + 1 again, re-planned)."""

THREAD_STEP = "lgnb:thread-step"
"""A view-only stream mode: ``((), THREAD_STEP, {"step": n, "input": bool})``, sent before a
run's first chunk, says the thread it runs on was saved at checkpoint step `n` (what a view
reads from a server thread, whose stream carries no checkpoints to count by). The first
task then starts step n + 1 when the run resumes or continues the thread (input None or a
`Command`), and after the new input's own checkpoints when `input` is true: step n + 2 for
a task the input triggers itself (an `@entrypoint`), n + 3 behind a StateGraph's hidden
`__start__` step. Ignored once the view has counted a step."""

STEP = "lgnb:step"
"""A view-only stream mode: ``((), STEP, {"step": n})`` says the root graph is at step `n`
now (the one under way, or the last one when the run ended): what `lgnb.attach` streams
for a joined run whose events carry no task starts to count steps by."""

#: chat models (their `ls_provider`) whose `_stream` drops tool calls: LangChain calls it in
#: `messages` mode, so a run shown live behaves differently from `invoke`
TEXT_ONLY_STREAMERS = {"genericfakechatmodel": "GenericFakeChatModel"}


def normalize(chunk: Any) -> tuple[tuple[str, ...], str, Any]:
    """Return ``(namespace, mode, payload)`` for a v1 tuple or a v2 envelope."""
    if isinstance(chunk, Mapping) and "type" in chunk and "data" in chunk:
        return tuple(chunk.get("ns") or ()), str(chunk["type"]), chunk["data"]
    if isinstance(chunk, tuple) and len(chunk) == 3 and isinstance(chunk[0], tuple):
        return chunk[0], chunk[1], chunk[2]
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], str):
        return (), chunk[0], chunk[1]
    raise TypeError(f"unexpected stream chunk shape: {type(chunk).__name__}")


def ns_key(ns: Sequence[str]) -> str:
    """``("sub:<task id>", "inner:<id>")`` → ``"sub:inner"`` (the drawn key prefix)."""
    return ":".join(part.split(":")[0] for part in ns)


def node_key(ns: Sequence[str], name: str) -> str:
    prefix = ns_key(ns)
    return f"{prefix}:{name}" if prefix else name


class RaisedBy:
    """The nodes whose tasks reported a raised `NodeInterrupt` in this stream, matched to
    the pending interrupts by value in report order (they all share `RAISED_ID`, so an
    id → node map would name the first node that ever raised one for all of them)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: list[tuple[Any, str]] = []

    def note(self, node: str, value: Any) -> None:
        # a subgraph's task reports its inner node's interrupt again (`sub` after `sub:inner`)
        if not any(v == value and n.startswith(f"{node}:") for v, n in self._seen):
            self._seen.append((value, node))

    def take(self, value: Any) -> str:
        """The node that raised `value` (first not taken yet), or ""."""
        for i, (v, n) in enumerate(self._seen):
            if v == value:
                del self._seen[i]
                return n
        return ""


def text_of(content: Any) -> str:
    """Text of a message's content: a string, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "".join(parts)
    return "" if content is None else str(content)


def _is_message(value: Any) -> bool:
    return hasattr(value, "content") and hasattr(value, "type") and hasattr(value, "additional_kwargs")


def _is_chunk(msg: Any) -> bool:
    return type(msg).__name__.endswith("Chunk") or hasattr(msg, "tool_call_chunks")


def _end_marker(msg: Any) -> bool:
    """An empty chunk that only says a model's stream ended (`chunk_position="last"`)."""
    return (getattr(msg, "chunk_position", None) == "last" and not text_of(msg.content)
            and not getattr(msg, "tool_call_chunks", None))


def _final_tool_calls(msg: Any) -> list[dict[str, Any]]:
    calls = []
    for i, call in enumerate(getattr(msg, "tool_calls", None) or []):
        args = call.get("args", {})
        calls.append({"index": i, "id": call.get("id"), "name": call.get("name", ""),
                      "args": args if isinstance(args, str) else json.dumps(jsonable(args))})
    return calls


def _messages_in(value: Any) -> list[Any]:
    if _is_message(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if _is_message(v)]
    return []


class StreamReducer:
    """Folds chunks into run state; `feed` returns the content patches they produce."""

    def __init__(self, *, edges: set[tuple[str, str]] | None = None, first_step: int = 1) -> None:
        self.edges = edges or set()  # (source, target) node keys of the full (xray) graph
        self.step = 0
        # the step of a fresh thread's first task when the stream shows no checkpoints
        # (see the module's docstring), whether a step was counted yet, and the step of
        # the latest root checkpoint the stream showed (None: none, or superseded)
        self._first_step = first_step
        self._counted = False
        self._saved: int | None = None
        self._thread: tuple[int, bool] | None = None  # THREAD_STEP's (step, input), until counted
        self.active: dict[str, tuple[str, str]] = {}  # task id → (namespace key, node key)
        self._nth: dict[str, int] = {}  # running task id → its number among its node's tasks of the step
        self.visited: list[str] = []
        self.taken: list[list[str]] = []
        self.values: Any = None
        self.interrupts: list[dict[str, Any]] = []
        # interrupt id → its payload as the node passed it (kept here, in the kernel: an
        # answer picked from its options resumes with the option itself, `answered_with`)
        self.payloads: dict[str, Any] = {}
        self.interrupt_nodes: dict[str, str] = {}  # interrupt id → node key (from the tasks stream)
        self._raised = RaisedBy()  # the nodes that raised this segment's NodeInterrupts
        self.paused = False  # saw "__interrupt__" in this segment
        # the tasks the latest root checkpoint plans next (id, node); of the root tasks begun
        # since, those that ended stopped (an interrupt, an error): a begun task that is not
        # stopped finished, or was replayed by a resume from its saved writes (LangGraph
        # streams its start only), so going on does not run it again
        self._next_tasks: list[tuple[str, str]] = []
        self._begun: set[str] = set()
        self._stopped: set[str] = set()
        self._next_of: Any = None  # the id of that checkpoint
        self.failed_node: str | None = None
        # the last segment stopped inside a step (an interrupt raised in a node, or an
        # error): the resume plans that step again, so its first tasks do not count a new one
        self._replan = False
        self.runs: dict[str, int] = {}  # node key → times it started in this thread (all segments)
        self.reruns: list[str] = []  # nodes of this segment that re-run from their start after a resume
        self._resumed: set[str] = set()  # nodes that were paused at an interrupt when the segment began
        self._seq = 0
        self._msgs: set[str] = set()
        self._n = 0
        self._prev: dict[str, list[str]] = {}  # ns key → nodes of its previous step
        self._cur: dict[str, list[str]] = {}
        self._seen_values = False
        # a copy of the `messages` list of the last root values chunk, all of whose
        # messages are shown: the next chunk's is checked from where it ends (`_unshown`)
        self._values_msgs: list[Any] | None = None
        self._token_types: set[type] = set()  # message chunk classes seen carrying plain text
        #: models seen streaming that drop tool calls when streamed (class names, in order)
        self.text_only_models: list[str] = []
        # updates listed for the latest step (node key → JSON deltas): a finished task's write that
        # a resume re-emits (LangGraph marks it cached) is listed once
        self._listed: tuple[int, dict[str, list[Any]]] = (0, {})

    @property
    def active_keys(self) -> list[str]:
        """Node keys running now (in start order, no duplicates)."""
        return list(dict.fromkeys(k for _, k in self.active.values()))

    def next_seq(self) -> int:
        """A sequence number for a change made to the content outside the patches (a row
        taken back): the content's snapshot then carries it, so the page, whose patches are
        all older, loads that snapshot in place of what they built."""
        self._seq += 1
        return self._seq

    # -- helpers ---------------------------------------------------------------
    def _patch(self, kind: str, pid: Any, **fields: Any) -> Patch:
        self._seq += 1
        return {"kind": kind, "id": pid, "seq": self._seq, **fields}

    def _next_id(self) -> int:
        self._n += 1
        return self._n

    def _visit(self, key: str) -> None:
        if key not in self.visited:
            self.visited.append(key)

    def _take(self, source: str, target: str) -> None:
        if [source, target] not in self.taken:
            self.taken.append([source, target])

    @property
    def counted(self) -> bool:
        """Whether a step was numbered yet (a thread's step read before is then moot)."""
        return self._counted

    def begin_segment(self) -> None:
        """A new stream (first run or a resume) starts."""
        self._resumed = {str(i.get("node")) for i in self.interrupts if i.get("node")}
        self.reruns = []
        self.paused = False
        self.interrupts = []
        self.payloads = {}
        self.failed_node = None
        self._raised = RaisedBy()
        self._prev, self._cur = {}, {}
        self._visit(START)

    def end_segment(self, *, finished: bool) -> None:
        """The stream ended; when it `finished` (not paused/failed) mark the way to END."""
        self.active.clear()
        self._nth.clear()
        self._replan = not finished and bool(self.interrupts or self.failed_node)
        if finished:
            last = self._cur.get("") or self._prev.get("") or []
            declared = [node for node in last if (node, END) in self.edges]
            for node in declared or last:
                self._take(node, END)
            self._visit(END)

    # -- feeding ---------------------------------------------------------------
    def feed(self, chunk: Any) -> list[Patch]:
        # Fast path for the bulk of a stream: a v1 token of a message already started,
        # plain string content, no tool-call pieces. Same patch as `_on_messages` makes.
        if type(chunk) is tuple and len(chunk) == 3 and chunk[1] == "messages":
            payload = chunk[2]
            if type(payload) is tuple and len(payload) == 2:
                msg = payload[0]
                if type(msg) in self._token_types:
                    mid, text = msg.id, msg.content
                    if (type(mid) is str and mid in self._msgs and type(text) is str
                            and not msg.tool_call_chunks):
                        if not text:
                            return []
                        self._seq += 1
                        return [{"kind": "msg.delta", "id": mid, "seq": self._seq, "text": text}]
        ns, mode, payload = normalize(chunk)
        if mode in (SAVED_STATE, STEP):
            step = payload.get("step") if isinstance(payload, Mapping) else None
            if isinstance(step, int):
                self.step, self._replan = step + (1 if payload.get("running") else 0), False
                self._saved, self._counted = None, True
            return []
        if mode == THREAD_STEP:
            step = payload.get("step") if isinstance(payload, Mapping) else None
            if isinstance(step, int) and not isinstance(step, bool) and not self._counted:
                self._thread = (step, bool(payload.get("input")))
            return []
        if mode == CUSTOM_WITH_TASK:
            if isinstance(payload, Mapping) and "value" in payload:
                return self._on_custom(ns, payload["value"], task=payload)
            return []
        handler = getattr(self, f"_on_{mode}", None)
        return handler(ns, payload) if handler else []

    def _on_tasks(self, ns: tuple[str, ...], payload: Any) -> list[Patch]:
        if not isinstance(payload, Mapping) or "name" not in payload:
            return []
        key = node_key(ns, str(payload["name"]))
        tid = str(payload.get("id"))
        scope = ns_key(ns)
        if "result" not in payload and "error" not in payload:  # task start
            if not any(sc == scope for sc, _ in self.active.values()):  # first task of a new super-step in this namespace
                self._prev[scope] = self._cur.get(scope, [])
                self._cur[scope] = []
                if not scope:
                    if self._saved is not None:  # the step after the last checkpoint
                        self.step, self._replan = self._saved + 1, False
                    elif self._replan:  # the step cut short before: same number as its checkpoint
                        self._replan = False
                    elif self._counted:
                        self.step += 1
                    elif self._thread is not None:  # a saved thread the stream shows no checkpoints of
                        saved, given = self._thread
                        self.step = saved + (1 if not given else 2 if START in (payload.get("triggers") or ()) else 3)
                    else:  # an input that triggers the task itself: no hidden `__start__` step came first
                        self.step = 0 if START in (payload.get("triggers") or ()) else self._first_step
                    self._counted = True
            prev = self._prev.get(scope) or []
            if not prev and not scope:
                prev = [START]
            declared = [src for src in prev if (src, key) in self.edges]
            for source in declared or prev:  # undeclared routes (Command, Send) still count
                self._take(source, key)
            for trigger in payload.get("triggers") or ():  # a waiting edge's sources that wrote steps before
                drawn_into = [a for a, b in self.edges if b == key]
                for source in join_sources(str(trigger), str(payload["name"]), [a.rsplit(":", 1)[-1] for a in drawn_into]):
                    for a in drawn_into:
                        if a.rsplit(":", 1)[-1] == source:
                            self._take(a, key)
            self._cur.setdefault(scope, []).append(key)
            self.active[tid] = (scope, key)
            if not scope:
                self._begun.add(tid)
            self._nth[tid] = self._cur[scope].count(key)
            self._visit(key)
            self.runs[key] = self.runs.get(key, 0) + 1
            if key in self._resumed:  # a resumed node runs again from its first line
                self._resumed.discard(key)
                self.reruns.append(key)
                return [self._patch("log", f"rerun-{self._next_id()}", node=key, ns=scope,
                                    payload=f"↻ {key} re-running from its start (resumed after interrupt(); "
                                            f"run {self.runs[key]} of this node in this thread)")]
            return []
        self.active.pop(tid, None)
        self._nth.pop(tid, None)
        if not scope:
            if payload.get("error") is None and not payload.get("interrupts"):
                self._stopped.discard(tid)
            else:
                self._stopped.add(tid)
        for intr in payload.get("interrupts") or ():
            iid = str(intr.get("id", "") if isinstance(intr, Mapping) else getattr(intr, "id", "") or "")
            if iid == RAISED_ID:
                value = jsonable(intr.get("value") if isinstance(intr, Mapping) else getattr(intr, "value", None))
                self._raised.note(key, value)
                for pending in self.interrupts:
                    if pending["id"] == iid and not pending.get("node") and pending.get("value") == value:
                        pending["node"] = self._raised.take(value)
                        break
                continue
            if iid and iid not in self.interrupt_nodes:  # the innermost task reports first
                self.interrupt_nodes[iid] = key
                for pending in self.interrupts:
                    if pending["id"] == iid and not pending.get("node"):
                        pending["node"] = key
        err = payload.get("error")
        if err is not None:
            if self.failed_node is None:  # the innermost task reports first: where it raised
                self.failed_node = key
            return [self._patch("error", f"{tid}", node=key, ns=scope, type=type(err).__name__,
                                message=str(err))]
        return []

    def _on_checkpoints(self, ns: tuple[str, ...], payload: Any) -> list[Patch]:
        meta = payload.get("metadata") if isinstance(payload, Mapping) and not ns else None
        step = meta.get("step") if isinstance(meta, Mapping) else None
        if isinstance(step, int) and not isinstance(step, bool):
            self._saved = step
        if meta is not None:  # the tasks the root thread runs next (shown at a breakpoint)
            tasks = payload.get("tasks") or ()
            self._next_tasks = [(str(t.get("id")), str(t.get("name"))) for t in tasks if isinstance(t, Mapping)]
            if not self._next_tasks:  # a payload without tasks (a RemoteGraph's): the names alone
                self._next_tasks = [("", str(n)) for n in payload.get("next") or ()]
            config = payload.get("config")
            configurable = config.get("configurable") if isinstance(config, Mapping) else None
            checkpoint_id = configurable.get("checkpoint_id") if isinstance(configurable, Mapping) else None
            if checkpoint_id is None or checkpoint_id != self._next_of:
                # (a resume streams the checkpoint it goes on from again: the tasks seen
                # finishing from it stay finished, their writes are not made again)
                self._next_of, self._begun, self._stopped = checkpoint_id, set(), set()
        return []

    @property
    def next_nodes(self) -> list[str]:
        """The nodes the root thread runs when it goes on (as LangGraph's `get_state().next`):
        the latest checkpoint's next tasks, less those begun since that did not stop."""
        return [name for tid, name in self._next_tasks
                if not tid or tid not in self._begun or tid in self._stopped]

    def _on_messages(self, ns: tuple[str, ...], payload: Any) -> list[Patch]:
        if not isinstance(payload, (tuple, list)) or len(payload) != 2:
            return []
        msg, meta = payload
        meta = meta if isinstance(meta, Mapping) else {}
        node = str(meta.get("langgraph_node", ""))
        key = node_key(ns, node) if node else ns_key(ns)
        mid = getattr(msg, "id", None) or f"{meta.get('langgraph_checkpoint_ns', key)}#{meta.get('langgraph_step', '')}"
        mid = str(mid)
        out: list[Patch] = []
        lossy = TEXT_ONLY_STREAMERS.get(str(meta.get("ls_provider", "")))
        if lossy is not None and lossy not in self.text_only_models:
            self.text_only_models.append(lossy)
        if _is_chunk(msg):
            if hasattr(msg, "tool_call_chunks") and hasattr(msg, "id"):
                self._token_types.add(type(msg))
            if mid not in self._msgs and _end_marker(msg):
                # LangChain closes a stream with an empty `chunk_position="last"` chunk
                # under its run id, which is not the id a provider gave the reply's chunks:
                # the end of the reply being shown, not a message of its own
                return out
            if mid not in self._msgs:
                self._msgs.add(mid)
                who = self._in_task(ns, key)
                out.append(self._patch("msg.new", mid, node=key, ns=ns_key(ns), type="ai",
                                       content="", tool_calls=[], **({"task": who} if who else {})))
            text = text_of(msg.content)
            if text:
                out.append(self._patch("msg.delta", mid, text=text))
            for tc in getattr(msg, "tool_call_chunks", None) or []:
                out.append(self._patch("tool.delta", mid, index=int(tc.get("index") or 0),
                                       name=tc.get("name"), call_id=tc.get("id"),
                                       args=tc.get("args") or ""))
            return out
        return self._full_message(msg, mid, key, ns_key(ns), task=self._in_task(ns, key))

    def _full_message(self, msg: Any, mid: str, key: str, scope: str, *, task: str = "") -> list[Patch]:
        content, calls = text_of(msg.content), _final_tool_calls(msg)
        if mid in self._msgs:
            return [self._patch("msg.final", mid, content=content, tool_calls=calls)]
        self._msgs.add(mid)
        extra: dict[str, Any] = {"name": str(getattr(msg, "name", None) or getattr(msg, "tool_call_id", "") or "") or None}
        if task:
            extra["task"] = task
        return [self._patch("msg.new", mid, node=key, ns=scope, type=str(getattr(msg, "type", "ai")),
                            content=content, tool_calls=calls, **extra)]

    def _on_updates(self, ns: tuple[str, ...], payload: Any) -> list[Patch]:
        if not isinstance(payload, Mapping):
            return []
        from lgnb.widgets._panel import fold  # _panel imports this module
        out: list[Patch] = []
        meta = payload.get("__metadata__")
        cached = isinstance(meta, Mapping) and bool(meta.get("cached"))
        if self._listed[0] != self.step:
            self._listed = (self.step, {})
        for node, delta in payload.items():
            if node == "__metadata__":  # LangGraph's marker of a cached write, not a node
                continue
            if node == "__interrupt__":
                if not ns:
                    self.paused = True
                    for intr in delta or ():
                        # an Interrupt, or its JSON form {"value", "id"} (a RemoteGraph's)
                        field = intr.get if isinstance(intr, Mapping) else partial(getattr, intr)
                        iid = str(field("id", "") or "")
                        value = jsonable(field("value", intr))
                        node = self._raised.take(value) if iid == RAISED_ID else self.interrupt_nodes.get(iid, "")
                        entry = {"id": iid, "value": value, "node": node}
                        schema = field("response_schema", None)
                        if schema is not None:
                            entry["response_schema"] = schema
                        self.interrupts.append(entry)
                        self.payloads[iid] = field("value", intr)
                continue
            key = node_key(ns, str(node))
            if cached:
                self._did_not_run(key)
            shown = fold(delta)  # bounded like the state panel's values: a huge write never ships whole
            listed = self._listed[1].setdefault(key, [])
            if cached and shown in listed:
                continue  # listed already (before the interrupt the resume came back from)
            listed.append(shown)
            who = self._in_task(ns, key)
            out.append(self._patch("update", self._next_id(), step=self.step, node=key,
                                   ns=ns_key(ns), delta=shown, **({"task": who} if who else {})))
            values = delta.values() if isinstance(delta, Mapping) else ()
            for value in values:
                for msg in _messages_in(value):
                    mid = getattr(msg, "id", None)
                    if getattr(msg, "type", None) == "remove":
                        continue  # a RemoveMessage names a message to drop: not its new form
                    if mid and str(mid) in self._msgs:
                        out.append(self._patch("msg.final", str(mid), content=text_of(msg.content),
                                               tool_calls=_final_tool_calls(msg)))
        return out

    def _on_values(self, ns: tuple[str, ...], payload: Any) -> list[Patch]:
        if ns:
            return []
        if isinstance(payload, Mapping):
            payload = {k: v for k, v in payload.items() if k != "__interrupt__"}
        self.values = payload
        # the root's barrier: every task of the step is over, also those that send no end
        # (a write restored on resume, a node cache hit), so the next task starts a new step
        self.active.clear()
        self._nth.clear()
        out: list[Patch] = []
        # Messages the stream did not show: the thread's history (first values), and
        # messages a reducer made from plain data (e.g. ("ai", "hi") tuples).
        if not self._seen_values:
            node = "input"
        else:
            last = self._cur.get("") or []
            node = last[0] if len(last) == 1 else ""
        self._seen_values = True
        msgs = payload.get("messages") if isinstance(payload, Mapping) else None
        tail, offset = self._unshown(msgs)
        for at, msg in enumerate(_messages_in(tail), offset):
            mid = getattr(msg, "id", None)
            if mid is None:
                # no id to know it by: by its place in the list and its words, so the same
                # message read again (a resume re-reads the saved state) is not shown twice
                mid = f"anon-{at}-{getattr(msg, 'type', '')}-{hash(text_of(msg.content)) & 0xFFFFFFFF:x}"
            if str(mid) not in self._msgs:
                out += self._full_message(msg, str(mid), node, "")
        return out

    def _unshown(self, msgs: Any) -> tuple[Any, int]:
        """The part of a values chunk's `messages` that may hold messages not shown yet:
        in a long conversation each chunk's list starts with the previous chunk's messages
        (the same objects: `add_messages` keeps them), whose ids are all shown, so only the
        messages after them are looked at, not the whole history at every step. When the
        list does not start that way (a removal, a graph whose chunks are decoded afresh),
        all of it. With the index in the list of the first message returned."""
        prev = self._values_msgs
        if type(msgs) is not list:
            self._values_msgs = None
            return msgs, 0
        self._values_msgs = list(msgs)
        n = 0 if prev is None else len(prev)
        if n and len(msgs) >= n and msgs[0] is prev[0]:  # type: ignore[index]
            try:
                same = msgs[:n] == prev  # identity first; `==` only for items that differ
            except Exception:  # noqa: BLE001 - an item whose `==` fails (an array): look at all
                same = False
            if same:
                return msgs[n:], n
        return msgs, 0

    def writer_of(self, ns: tuple[str, ...], payload: Any, task: Mapping[str, Any] | None = None) -> str:
        """The node key of the task that wrote a custom event, or "" when the stream does not
        tell: the payload's own `"node"`, the task lgnb's engine names (`task`), or the one
        node all running tasks of the event's namespace belong to (a task's events come
        between its start and its end, so then it is certain)."""
        if isinstance(payload, Mapping) and isinstance(payload.get("node"), str):
            return str(payload["node"])
        if task is not None:
            entry = self.active.get(str(task.get("id")))
            if entry is not None:
                return entry[1]
            name = task.get("name")
            if isinstance(name, str) and name:
                return node_key(ns, name)
        scope = ns_key(ns)
        running = {k for sc, k in self.active.values() if sc == scope}
        return running.pop() if len(running) == 1 else ""

    def _did_not_run(self, key: str) -> None:
        """A cached write of `key`: a task whose writes a resume kept (it finished before the
        interrupt) or a node-cache hit. Its task was announced, but its function did not
        run and no result will come: it is no run of the node, and is not running."""
        if self.runs.get(key, 0) > 0:
            self.runs[key] -= 1
        for tid, (_, running) in list(self.active.items()):
            if running == key:
                del self.active[tid]
                break

    def _in_task(self, ns: tuple[str, ...], key: str) -> str:
        """`key` as shown when its namespace runs inside one of several tasks of a root node
        in the step (a subgraph per `Send`: "interview #2:ask"), else "": the rows and
        messages of parallel copies of one subgraph are otherwise indistinguishable."""
        if not ns:
            return ""
        node, _, task_id = ns[0].partition(":")
        nth = self._nth.get(task_id)
        if nth is None or self._cur.get("", []).count(node) < 2:
            return ""
        return f"{node} #{nth}" + key[len(node):]

    def task_of(self, node: str, task: Mapping[str, Any] | None) -> tuple[int, str]:
        """The writing task's number among the tasks of `node` in the step (1: the first or
        only one) and its label when the node runs as several ("worker #2", else "").

        Known only from lgnb's `CUSTOM_WITH_TASK` (`task`): a LangGraph `custom` chunk names
        no task, so its events stay the node's (number 1, no label) whatever task wrote them."""
        entry = self.active.get(str(task.get("id"))) if task is not None else None
        if task is None or entry is None or entry[1] != node:
            return 1, ""
        nth = self._nth.get(str(task.get("id")), 1)
        several = self._cur.get(entry[0], []).count(node) > 1  # the tasks of its step, where it started
        return nth, f"{node} #{nth}" if several else ""

    def _on_custom(self, ns: tuple[str, ...], payload: Any, task: Mapping[str, Any] | None = None) -> list[Patch]:
        scope = ns_key(ns)
        node = self.writer_of(ns, payload, task)
        nth, who = self.task_of(node, task) if node else (1, "")
        # a writer the stream does not name: shown under its namespace and root step
        at: dict[str, Any] = {"step": self.step} if not node else {"task": who} if who else {}
        where = who or node or " · ".join(p for p in (scope, f"step {self.step}") if p)
        value = payload.get("progress") if isinstance(payload, Mapping) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            stage = _text(payload.get("stage", ""))
            own = payload.get("label")
            label = str(" · ".join(p for p in (who, _text(own)) if p) if own else
                        " · ".join(p for p in (where, stage) if p))
            # the first task of a node keeps the node's bar; each further one of the step has its own
            bar = (f"{scope}|{node}|{stage}" + (f"|#{nth}" if nth > 1 else "") if node
                   else f"{scope}||{stage}|step {self.step}")
            return [self._patch("progress", bar, node=node, ns=scope, stage=stage,
                                label=label, value=min(1.0, max(0.0, float(value))))]
        return [self._patch("log", self._next_id(), node=node, ns=scope, payload=jsonable(payload), **at)]

    # -- errors ------------------------------------------------------------------
    def error_patch(self, exc: BaseException) -> tuple[str | None, Patch | None]:
        """Node name and (if not already reported by the tasks stream) an error patch."""
        if self.failed_node is not None:
            return self.failed_node, None
        node = None
        for note in getattr(exc, "__notes__", None) or ():
            m = _TASK_NOTE.search(str(note))
            if m:
                node = m.group(1)
        return node, self._patch("error", f"run-{self._next_id()}", node=node or "", ns="",
                                 type=type(exc).__name__, message=str(exc))


def _text(value: Any) -> str:
    """A progress event's label or stage as text: `str(value)`, or, when that raises, as
    the views show values (`jsonable`: its repr, or its type's name when that raises too)."""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a user's __str__ may raise anything
        return str(jsonable(value))

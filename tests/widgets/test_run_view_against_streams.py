"""The live run view shows exactly what the graph streamed.

Each test is a program users run with `lgnb.run(graph, input, config)`. It is run twice per
engine (`differential`: LangGraph, then lgnb or, with LGNB_DIFF_SELFTEST=1, LangGraph again):

* through the run view, headless: what the kernel sent the page (the patch batches, captured
  at `RunView.send`), the view's own model of the run (its `StreamReducer`: the nodes lit per
  super-step), the synced traits (status, interrupts, forms, error) and `run.result`;
* through the graph's own `stream(..., stream_mode=[...], subgraphs=True)` (plus "debug" for
  the step numbers), projected the way the view promises to show it.

Both projections must agree on the LangGraph-built graph (the view reads LangGraph right),
and `differential` makes lgnb's view and stream agree with LangGraph's. Compared: token text
per node and namespace (each streamed message's deltas, concatenated in order), custom
events (log rows in order, progress bars' last values), the nodes lit per super-step, the
updates per step, interrupts and their forms, the error shown, the final state.
"""

from __future__ import annotations

import asyncio
import json
import operator
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))

import _diff  # noqa: E402
from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage  # noqa: E402
from page_spy import SENT, page_spy, sent_patches  # noqa: E402,F401
from widget_fakes import FakeStreamingChat  # noqa: E402

import lgnb.widgets.run_view as rv  # noqa: E402
from lgnb.widgets._panel import fold  # noqa: E402
from lgnb.widgets._stream import StreamReducer, node_key, ns_key, text_of  # noqa: E402

differential = _diff.differential
TIMEOUT = 60
REF_MODES = ["values", "updates", "messages", "custom", "tasks", "debug"]
EVIL = '<img src=x onerror="alert(1)">'

# --------------------------------------------------------------------------- the view, spied on


class _LitReducer(StreamReducer):
    """The view's own model of the run, noting the nodes it shows running at each step."""

    def feed(self, chunk: Any) -> Any:
        out = super().feed(chunk)
        if self.active:
            self.__dict__.setdefault("lit", {}).setdefault(self.step, set()).update(self.active_keys)
        return out


@pytest.fixture(autouse=True)
def _lit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rv, "StreamReducer", _LitReducer)


def _plain(value: Any) -> Any:
    """Messages as (type, content, tool calls); the rest as it is."""
    if isinstance(value, BaseMessage):
        calls = [(c["name"], c["args"]) for c in getattr(value, "tool_calls", None) or ()]
        return (value.type, value.content, calls)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "__interrupt__"}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _delta_key(delta: Any) -> str:
    return json.dumps(delta, sort_keys=True, default=str)


def _finish(rec: dict[str, Any], *, unordered: bool, steps: bool = True) -> dict[str, Any]:
    """Order-free where LangGraph itself is (parallel sync branches finish in pool order);
    without `steps`, updates and lit nodes as one list each (step numbers dropped)."""
    if unordered:
        # which node wrote a custom event is known only while one task of its namespace runs;
        # with parallel branches that depends on timing, so only the namespace is compared
        rec["logs"] = [(ns, payload) for ns, _, payload in rec["logs"]]
        rec["updates"] = {s: sorted(u, key=_delta_key) for s, u in rec["updates"].items()}
        rec["logs"] = sorted(rec["logs"], key=_delta_key)
    rec["lit"] = {s: sorted(n) for s, n in rec["lit"].items()}
    if not steps:
        rec["updates"] = [u for _, us in sorted(rec["updates"].items()) for u in us]
        rec["lit"] = sorted({n for ns in rec["lit"].values() for n in ns})
    return rec


def view_record(build: Callable[[Any], Any], E: Any, answers: list[str], *, use_async: bool = False,
                unordered: bool = False, steps: bool = True, **options: Any) -> dict[str, Any]:
    """Run the program in `lgnb.run` (display=False), answer each form with `answers`."""
    from lgnb.widgets import run

    graph, inp, cfg = build(E)
    r = run(graph, inp, cfg, display=False, use_async=use_async, **options)
    asked: list[Any] = []
    try:
        r.wait(timeout=TIMEOUT)
    except Exception:  # noqa: BLE001, S110 - the error is part of the record below
        pass
    for n, choice in enumerate(answers):
        assert r.status == "interrupted", (r.status, r.error)
        asked.append([(i["value"], i["node"]) for i in r.interrupts])
        forms = r.view.forms
        assert [f["id"] for f in forms] == [i["id"] for i in r.interrupts]
        asked.append([(f["kind"], f["node"]) for f in forms])
        r.view._dispatch(r.view, {"kind": "answer", "id": n + 1, "interrupt_id": forms[0]["id"],
                                  "picks": [{"part": 0, "choice": choice, "inputs": {}}]}, [])
        try:
            r.wait(timeout=TIMEOUT)
        except Exception:  # noqa: BLE001, S110
            pass
    if r.status == "interrupted":
        asked.append([(i["value"], i["node"]) for i in r.interrupts])
    patches = sent_patches(r)
    msgs: dict[str, dict[str, Any]] = {}
    logs, progress, updates = [], {}, {}
    for p in patches:
        kind = p["kind"]
        if kind == "msg.new":
            msgs[p["id"]] = {"key": f"{p['ns']}|{p['node']}", "parts": [p["content"]], "deltas": 0}
        elif kind == "msg.delta" and p["id"] in msgs:
            msgs[p["id"]]["parts"].append(p["text"])
            msgs[p["id"]]["deltas"] += 1
        elif kind == "log" and isinstance(p["id"], int):
            logs.append((p["ns"], p["node"], p["payload"]))
        elif kind == "progress":
            progress[f"{p['ns']}|{p['node']}|{p['stage']}"] = (p["label"], p["value"])
        elif kind == "update":
            updates.setdefault(p["step"], []).append((p["node"], p["delta"]))
    tokens: dict[str, list[str]] = {}
    for m in msgs.values():
        if m["deltas"]:
            tokens.setdefault(m["key"], []).append("".join(m["parts"]))
    assert r.view.status == r.status and r.view_error is None
    shown = [(m["type"], m["content"]) for m in r.content["messages"]]
    return _finish({
        "status": r.status, "tokens": tokens, "logs": logs, "progress": progress, "updates": updates,
        "lit": dict(getattr(r._reducer, "lit", {})), "asked": asked,
        "error": dict(r.view.error) or None, "final": _plain(r.result),
        "transcript": shown if isinstance(r.result, dict) and "messages" in r.result else None,
    }, unordered=unordered, steps=steps)


def stream_record(build: Callable[[Any], Any], E: Any, answers: list[str], *, use_async: bool = False,
                  unordered: bool = False, steps: bool = True, kinds: dict[str, Any] | None = None,
                  **options: Any) -> dict[str, Any]:
    """Run the program through `graph.stream(..., subgraphs=True)` and project it as the
    view promises to show it; a form's choice resumes with the value the form sends."""
    graph, inp, cfg = build(E)
    rec: dict[str, Any] = {"tokens": {}, "logs": [], "progress": {}, "updates": {}, "lit": {}, "asked": [],
                           "error": None, "final": None}
    msgs: dict[str, dict[str, Any]] = {}
    state = {"step": 0, "running": {}, "node_of": {}, "listed": set(), "failed": None}
    values = {"choices": {"yes": "yes", "no": "no", "approve": "approve", "reject": "reject"}}

    def on(chunk: Any, pending: list[Any]) -> None:
        ns, mode, payload = chunk
        scope = ns_key(ns)
        if mode == "debug" and payload.get("type") == "task":
            if not ns:
                state["step"] = payload["step"]
            rec["lit"].setdefault(state["step"], set()).add(node_key(ns, payload["payload"]["name"]))
        elif mode == "tasks":
            key = node_key(ns, payload["name"])
            if "result" not in payload and "error" not in payload:
                state["running"][payload["id"]] = (scope, key)
                return
            state["running"].pop(payload["id"], None)
            for i in payload.get("interrupts") or ():
                state["node_of"].setdefault(i["id"] if isinstance(i, dict) else i.id, key)  # the innermost task reports first
            if payload.get("error") is not None and state["failed"] is None:
                state["failed"] = key
        elif mode == "messages":
            msg, meta = payload
            if isinstance(msg, AIMessageChunk):
                key = f"{scope}|{node_key(ns, meta['langgraph_node'])}"
                msgs.setdefault(msg.id, {"key": key, "parts": []})["parts"].append(text_of(msg.content))
        elif mode == "custom":
            node = payload.get("node") if isinstance(payload, dict) else None
            if not isinstance(node, str):
                here = [k for sc, k in state["running"].values() if sc == scope]
                node = here[0] if len(here) == 1 else ""
            value = payload.get("progress") if isinstance(payload, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                stage = str(payload.get("stage", ""))
                label = str(payload.get("label") or " · ".join(p for p in (node, stage) if p) or "progress")
                rec["progress"][f"{scope}|{node}|{stage}"] = (label, min(1.0, max(0.0, float(value))))
            else:
                rec["logs"].append((scope, node, payload))
        elif mode == "updates":
            cached = bool((payload.get("__metadata__") or {}).get("cached"))
            for node, delta in payload.items():
                if node == "__metadata__":
                    continue
                if node == "__interrupt__":
                    if not ns:
                        state["paused"] = True
                        pending.extend(delta)
                    continue
                key = node_key(ns, node)
                entry = (state["step"], key, _delta_key(fold(delta)))
                if cached and entry in state["listed"]:
                    continue  # a resume re-emits the finished task's write: listed once
                state["listed"].add(entry)
                rec["updates"].setdefault(state["step"], []).append((key, fold(delta)))
        elif mode == "values" and not ns:
            rec["final"] = _plain(payload)
            state["running"].clear()

    def segment(command: Any) -> list[Any]:
        pending: list[Any] = []
        state["paused"] = False
        kwargs = dict(options, stream_mode=REF_MODES, subgraphs=True)
        try:
            if use_async:
                async def drain() -> None:
                    async for chunk in graph.astream(command, cfg, **kwargs):
                        on(chunk, pending)

                asyncio.run(drain())
            else:
                for chunk in graph.stream(command, cfg, **kwargs):
                    on(chunk, pending)
        except Exception as exc:  # noqa: BLE001 - the error the view must show
            rec["error"] = {"type": type(exc).__name__, "message": str(exc), "node": state["failed"] or ""}
        return pending

    pending = segment(inp)
    for choice in answers:
        rec["asked"].append([(i.value, state["node_of"].get(i.id, "")) for i in pending])
        rec["asked"].append([(kinds_of(kinds, i.value), state["node_of"].get(i.id, "")) for i in pending])
        pending = segment(E.Command(resume={pending[0].id: values["choices"][choice]}))
    if state["paused"]:
        rec["asked"].append([(i.value, state["node_of"].get(i.id, "")) for i in pending])
    rec["status"] = "error" if rec["error"] else "interrupted" if state["paused"] else "done"
    for m in msgs.values():
        text = "".join(m["parts"])
        if text:
            rec["tokens"].setdefault(m["key"], []).append(text)
    final = rec["final"]
    rec["transcript"] = ([(m[0], m[1]) for m in final["messages"]]
                         if isinstance(final, dict) and "messages" in final else None)
    return _finish(rec, unordered=unordered, steps=steps)


def kinds_of(kinds: dict[str, Any] | None, value: Any) -> Any:
    """The form kind a payload is shown as (given per test: the program knows its questions)."""
    return (kinds or {}).get(json.dumps(value, sort_keys=True, default=str), "value")


def check(build: Callable[[Any], Any], *, answers: tuple[str, ...] = (), expect: Callable[[dict], None],
          transcript: bool = True, **options: Any) -> dict[str, Any]:
    """View vs stream on each engine; LangGraph vs lgnb across engines; `expect` guards the
    program (it checks the reference stream's record, so a scenario cannot test nothing)."""

    view_only = options.pop("view_only", {})

    def scenario(E: Any) -> Any:
        view = view_record(build, E, list(answers), **{k: v for k, v in options.items() if k != "kinds"},
                           **view_only)
        stream = stream_record(build, E, list(answers), **options)
        if not transcript:
            view.pop("transcript"), stream.pop("transcript")
        return {"view": view, "stream": stream}

    ref = differential(scenario)
    assert ref["view"] == ref["stream"], _diff.fmt({"view": ref["view"], "stream": ref["stream"]})
    expect(stream_record(build, _diff.reference_engine(), list(answers), **options))  # raw, not normalized
    return ref


# --------------------------------------------------------------------------- programs
class Log(TypedDict):
    log: Annotated[list, operator.add]


def _cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def chat_graph(E: Any, nodes: dict[str, Any], edges: list[tuple[str, str]], *, saver: bool = False,
               state: Any = None, **compile_kw: Any) -> Any:
    g = E.StateGraph(state or E.MessagesState)
    for name, fn in nodes.items():
        if isinstance(fn, tuple):
            g.add_node(name, fn[0], **fn[1])
        else:
            g.add_node(name, fn)
    for a, b in edges:
        g.add_edge(a, b)
    return g.compile(checkpointer=E.InMemorySaver() if saver else None, **compile_kw)


def caller(model: Any, **invoke_kw: Any) -> Any:
    def call(state: Any) -> Any:
        return {"messages": [model.invoke(state["messages"], **invoke_kw)]}

    return call


# --------------------------------------------------------------------------- tokens
def test_a_chatbot_s_tokens_are_shown_under_its_node_in_order() -> None:
    """One model node: the reply streams into the chatbot's bubble, token by token."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["Hello there! How can I help you today?"], chunk_chars=3)
        return chat_graph(E, {"chatbot": caller(model)}, [(E.START, "chatbot")]), {"messages": [("user", "hi")]}, None

    check(build, expect=lambda s: s["tokens"] == {"|chatbot": ["Hello there! How can I help you today?"]})


def test_a_provider_s_message_ids_give_one_bubble_per_reply_not_an_empty_one_more() -> None:
    """Providers put their own id on every chunk of a reply; LangChain then closes the
    stream with an empty `chunk_position="last"` chunk under its run id. That marker is
    not a message: each reply is one bubble, as many as the final state holds (the view
    showed an empty "ai" bubble after each reply)."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["first reply", "second reply"], provider_ids="chatcmpl")

        def twice(state: Any) -> Any:
            return {"messages": [model.invoke(state["messages"]), model.invoke(state["messages"])]}

        return chat_graph(E, {"chatbot": twice}, [(E.START, "chatbot")]), {"messages": [("user", "hi")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|chatbot": ["first reply", "second reply"]}
        assert s["transcript"] == [("human", "hi"), ("ai", "first reply"), ("ai", "second reply")]

    check(build, expect=expect)


def test_an_agent_s_tool_loop_streams_each_reply_and_shows_the_tool_s_progress_and_note() -> None:
    """Agent → tools → agent: two replies under "agent", the tool's bar and note, three steps."""
    from widget_graphs import agent_graph

    replies = [{"content": "let me add", "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}]},
               "2 + 3 = 5"]

    def build(E: Any) -> Any:
        return agent_graph(E, FakeStreamingChat(replies=replies)), {"messages": [("user", "add")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|agent": ["let me add", "2 + 3 = 5"]}
        assert s["lit"] == {1: ["agent"], 2: ["tools"], 3: ["agent"]}
        assert s["progress"] == {"|tools|adding": ("tools · adding", 1.0)}
        assert s["logs"] == [("", "tools", {"note": "added <b>numbers</b>"})]

    check(build, expect=expect)


def test_two_models_called_in_parallel_stream_into_their_own_nodes() -> None:
    """Two branches of one step, each calling its own model: each node's text is its own
    (the branches run in a thread pool, so updates compare as a multiset per step)."""

    def build(E: Any) -> Any:
        poet = FakeStreamingChat(replies=["Roses are red, violets are blue"], chunk_chars=2)
        critic = FakeStreamingChat(replies=["Derivative, but earnest."], chunk_chars=2)
        g = chat_graph(E, {"poet": caller(poet), "critic": caller(critic)},
                       [(E.START, "poet"), (E.START, "critic")])
        return g, {"messages": [("user", "a poem")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|poet": ["Roses are red, violets are blue"], "|critic": ["Derivative, but earnest."]}
        assert s["lit"] == {1: ["critic", "poet"]}

    check(build, expect=expect, unordered=True, transcript=False)


def test_one_node_calling_the_model_twice_shows_two_messages_in_order() -> None:
    """A draft then a rewrite in one node: two bubbles under the node, in call order."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["first draft", "polished final answer"])

        def write(state: Any) -> Any:
            draft = model.invoke(state["messages"])
            return {"messages": [draft, model.invoke([*state["messages"], draft])]}

        return chat_graph(E, {"write": write}, [(E.START, "write")]), {"messages": [("user", "essay")]}, None

    check(build, expect=lambda s: s["tokens"] == {"|write": ["first draft", "polished final answer"]})


def test_tool_call_arguments_streamed_in_pieces_end_as_the_calls_of_the_final_message() -> None:
    """A model streaming two tool calls: the transcript shows the calls the state holds."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=[{"content": "looking up", "tool_calls": [
            {"name": "weather", "args": {"city": "Paris"}, "id": "w1"},
            {"name": "time", "args": {"tz": "Europe/Paris"}, "id": "t1"}]}])
        return chat_graph(E, {"plan": caller(model)}, [(E.START, "plan")]), {"messages": [("user", "?")]}, None

    def expect(s: dict) -> None:
        assert s["final"]["messages"][-1][2] == [("weather", {"city": "Paris"}), ("time", {"tz": "Europe/Paris"})]

    ref = check(build, expect=expect)
    assert ref["view"]["tokens"] == {"|plan": ["looking up"]}


def test_a_model_invoked_with_the_nostream_tag_shows_no_tokens_but_its_message() -> None:
    """`tags=[TAG_NOSTREAM]`: the messages mode skips its tokens; the reply still shows once."""

    def build(E: Any) -> Any:
        quiet = FakeStreamingChat(replies=["internal summary"])
        loud = FakeStreamingChat(replies=["visible answer"])
        tag = E.module("constants").TAG_NOSTREAM
        g = chat_graph(E, {"summarize": caller(quiet, config={"tags": [tag]}), "answer": caller(loud)},
                       [(E.START, "summarize"), ("summarize", "answer")])
        return g, {"messages": [("user", "go")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|answer": ["visible answer"]}
        assert [c for _, c in s["transcript"]] == ["go", "internal summary", "visible answer"]

    check(build, expect=expect)


def test_a_model_with_user_tags_streams_as_usual() -> None:
    """Tags of the user's own (for filtering) do not hide tokens from the view."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["tagged reply"])
        g = chat_graph(E, {"joke": caller(model, config={"tags": ["joke", "fast"]})}, [(E.START, "joke")])
        return g, {"messages": [("user", "joke")]}, None

    check(build, expect=lambda s: s["tokens"] == {"|joke": ["tagged reply"]})


# --------------------------------------------------------------------------- subgraphs
def _sub_with_model(E: Any, reply: str) -> Any:
    model = FakeStreamingChat(replies=[reply], chunk_chars=5)

    def research(state: Any) -> Any:
        writer = E.get_stream_writer()
        for i in range(1, 5):
            writer({"progress": i / 4, "stage": "search"})
        writer({"found": 3})
        return {"messages": [model.invoke(state["messages"])]}

    sub = E.StateGraph(E.MessagesState)
    sub.add_node("research", research)
    sub.add_edge(E.START, "research")
    return sub.compile()


def test_a_subgraph_s_tokens_and_custom_events_are_shown_under_its_namespace() -> None:
    """A compiled subgraph as a node: its model's tokens and progress show under
    "team:research" in namespace "team", lit in the parent's step."""

    def build(E: Any) -> Any:
        g = chat_graph(E, {"team": _sub_with_model(E, "three sources found")}, [(E.START, "team")])
        return g, {"messages": [("user", "research")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"team|team:research": ["three sources found"]}
        assert s["progress"] == {"team|team:research|search": ("team:research · search", 1.0)}
        assert s["logs"] == [("team", "team:research", {"found": 3})]
        assert s["lit"] == {1: ["team", "team:research"]}

    check(build, expect=expect)


def test_a_subgraph_called_inside_a_node_streams_under_that_node() -> None:
    """`sub.invoke` from a plain node (not added as a node) still streams its tokens."""

    def build(E: Any) -> Any:
        sub = _sub_with_model(E, "nested answer")

        def delegate(state: Any) -> Any:
            return {"messages": sub.invoke(state)["messages"][-1:]}

        return chat_graph(E, {"delegate": delegate}, [(E.START, "delegate")]), {"messages": [("user", "q")]}, None

    check(build, expect=lambda s: s["tokens"] == {"delegate|delegate:research": ["nested answer"]})


def test_two_levels_of_subgraphs_stream_tokens_under_the_full_path() -> None:
    """outer → middle → research: the innermost model's text is keyed by the whole path."""

    def build(E: Any) -> Any:
        mid = E.StateGraph(E.MessagesState)
        mid.add_node("middle", _sub_with_model(E, "deep text"))
        mid.add_edge(E.START, "middle")
        g = chat_graph(E, {"outer": mid.compile()}, [(E.START, "outer")])
        return g, {"messages": [("user", "q")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"outer:middle|outer:middle:research": ["deep text"]}
        assert s["lit"] == {1: ["outer", "outer:middle", "outer:middle:research"]}

    check(build, expect=expect)


def test_a_subgraph_and_a_root_node_in_parallel_keep_their_events_apart() -> None:
    """A root node and a subgraph in one step: each event lands in its own namespace."""

    def build(E: Any) -> Any:
        def notes(state: Any) -> Any:
            E.get_stream_writer()({"root": "note"})
            return {}

        g = chat_graph(E, {"team": _sub_with_model(E, "sub text"), "notes": notes},
                       [(E.START, "team"), (E.START, "notes")])
        return g, {"messages": [("user", "q")]}, None

    def expect(s: dict) -> None:
        assert sorted(s["logs"], key=str) == [("", {"root": "note"}), ("team", {"found": 3})]

    check(build, expect=expect, unordered=True)


# --------------------------------------------------------------------------- custom events
def test_progress_fractions_end_at_the_last_value_the_node_wrote() -> None:
    """`writer({"progress": i / n})`: the node's bar ends at the last fraction written."""

    def build(E: Any) -> Any:
        def crunch(state: Any) -> Any:
            writer = E.get_stream_writer()
            for i in range(1, 8):
                writer({"progress": i / 10})
            return {"log": ["done"]}

        return chat_graph(E, {"crunch": crunch}, [(E.START, "crunch")], state=Log), {"log": []}, None

    check(build, expect=lambda s: s["progress"] == {"|crunch|": ("crunch", 0.7)})


def test_progress_bars_per_stage_with_labels_and_an_explicit_node() -> None:
    """Stages are separate bars; `label` names a bar; `node` attributes it; values clamp to 0..1."""

    def build(E: Any) -> Any:
        def pipeline(state: Any) -> Any:
            writer = E.get_stream_writer()
            writer({"progress": 0.25, "stage": "download", "label": "Downloading <data>"})
            writer({"progress": 1, "stage": "download", "label": "Downloading <data>"})
            writer({"progress": 1.5, "stage": "parse"})
            writer({"progress": -2, "stage": "index", "node": "indexer"})
            return {"log": ["ok"]}

        return chat_graph(E, {"pipeline": pipeline}, [(E.START, "pipeline")], state=Log), {"log": []}, None

    def expect(s: dict) -> None:
        assert s["progress"] == {"|pipeline|download": ("Downloading <data>", 1.0),
                                 "|pipeline|parse": ("pipeline · parse", 1.0),
                                 "|indexer|index": ("indexer · index", 0.0)}

    check(build, expect=expect)


def test_custom_events_that_are_not_progress_are_log_rows_in_order() -> None:
    """Dicts, strings, lists, numbers and a `progress` that is not a number: log rows, in order."""

    def build(E: Any) -> Any:
        def chatter(state: Any) -> Any:
            writer = E.get_stream_writer()
            for payload in ({"status": "starting"}, "plain text <b>", [1, 2, 3], 42, {"progress": "half"},
                            {"progress": True}, {"status": "done"}):
                writer(payload)
            return {"log": ["x"]}

        return chat_graph(E, {"chatter": chatter}, [(E.START, "chatter")], state=Log), {"log": []}, None

    def expect(s: dict) -> None:
        assert [p for _, _, p in s["logs"]] == [{"status": "starting"}, "plain text <b>", [1, 2, 3], 42,
                                                {"progress": "half"}, {"progress": True}, {"status": "done"}]

    check(build, expect=expect)


def test_a_stream_writer_parameter_and_get_stream_writer_both_reach_the_view() -> None:
    """A node taking `writer: StreamWriter` and one calling get_stream_writer(): both log rows."""

    def build(E: Any) -> Any:
        def a(state: Any, writer: E.StreamWriter) -> Any:
            writer({"from": "a"})
            return {"log": ["a"]}

        def b(state: Any) -> Any:
            E.get_stream_writer()({"from": "b"})
            return {"log": ["b"]}

        g = chat_graph(E, {"a": a, "b": b}, [(E.START, "a"), ("a", "b")], state=Log)
        return g, {"log": []}, None

    check(build, expect=lambda s: s["logs"] == [("", "a", {"from": "a"}), ("", "b", {"from": "b"})])


# --------------------------------------------------------------------------- steps
class Fan(TypedDict):
    items: list[str]
    results: Annotated[list, operator.add]


def test_send_fan_out_lights_the_worker_once_per_step_and_lists_every_branch_s_update() -> None:
    """Send per item: one step with N worker tasks (unordered: they finish in pool order)."""

    def build(E: Any) -> Any:
        def worker(state: Any) -> Any:
            E.get_stream_writer()({"item": state["item"]})
            return {"results": [state["item"].upper()]}

        g = E.StateGraph(Fan)
        g.add_node("plan", lambda s: {})
        g.add_node("worker", worker)
        g.add_node("merge", lambda s: {"results": ["merged"]})
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", lambda s: [E.Send("worker", {"item": i}) for i in s["items"]], ["worker"])
        g.add_edge("worker", "merge")
        return g.compile(), {"items": list("abcde"), "results": []}, None

    def expect(s: dict) -> None:
        assert s["lit"] == {1: ["plan"], 2: ["worker"], 3: ["merge"]} and len(s["updates"][2]) == 5
        assert len(s["logs"]) == 5

    check(build, expect=expect, unordered=True)


def test_a_loop_of_thirty_steps_numbers_every_step_and_its_update() -> None:
    """A node looping on itself 30 times: steps 1..30, each with its node and its write."""

    class Count(TypedDict):
        n: int

    def build(E: Any) -> Any:
        g = E.StateGraph(Count)
        g.add_node("tick", lambda s: {"n": s["n"] + 1})
        g.add_edge(E.START, "tick")
        g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 30 else E.END)
        return g.compile(), {"n": 0}, {"recursion_limit": 40}

    def expect(s: dict) -> None:
        assert s["lit"] == {i: ["tick"] for i in range(1, 31)}
        assert s["updates"] == {i: [("tick", {"n": i})] for i in range(1, 31)} and s["final"] == {"n": 30}

    check(build, expect=expect)


def test_command_goto_routes_are_lit_in_the_steps_they_ran() -> None:
    """A router returning Command(goto=..., update=...): the chosen node is lit next step."""

    def build(E: Any) -> Any:
        def router(state: Any) -> Any:
            return E.Command(goto="billing", update={"log": ["routed"]})

        g = E.StateGraph(Log)
        g.add_node("router", router, destinations=("billing", "support"))
        g.add_node("billing", lambda s: {"log": ["billing"]})
        g.add_node("support", lambda s: {"log": ["support"]})
        g.add_edge(E.START, "router")
        return g.compile(), {"log": []}, None

    def expect(s: dict) -> None:
        assert s["lit"] == {1: ["router"], 2: ["billing"]}
        assert s["updates"] == {1: [("router", {"log": ["routed"]})], 2: [("billing", {"log": ["billing"]})]}

    check(build, expect=expect)


def test_a_node_that_retries_is_shown_once_with_its_successful_write() -> None:
    """RetryPolicy: two failed attempts then success: one update, no error, done."""

    def build(E: Any) -> Any:
        attempts = {"n": 0}

        def flaky(state: Any) -> Any:
            attempts["n"] += 1
            E.get_stream_writer()({"attempt": attempts["n"]})
            if attempts["n"] < 3:
                raise ConnectionError("upstream hiccup")
            return {"log": [f"ok after {attempts['n']}"]}

        policy = E.RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False,
                               retry_on=ConnectionError)
        g = chat_graph(E, {"flaky": (flaky, {"retry_policy": policy})}, [(E.START, "flaky")], state=Log)
        return g, {"log": []}, None

    def expect(s: dict) -> None:
        assert s["status"] == "done" and s["error"] is None
        assert s["updates"] == {1: [("flaky", {"log": ["ok after 3"]})]}
        assert [p for _, _, p in s["logs"]] == [{"attempt": 1}, {"attempt": 2}, {"attempt": 3}]

    check(build, expect=expect)


# --------------------------------------------------------------------------- errors
def test_an_error_in_a_node_is_shown_with_its_node_and_message() -> None:
    """A node raising: the view says the class, the message and the node, like the raise."""

    def build(E: Any) -> Any:
        def fetch(state: Any) -> Any:
            raise ValueError("bad input <b>x</b>")

        g = chat_graph(E, {"ok": lambda s: {"log": ["ok"]}, "fetch": fetch},
                       [(E.START, "ok"), ("ok", "fetch")], state=Log)
        return g, {"log": []}, None

    def expect(s: dict) -> None:
        assert s["error"] == {"type": "ValueError", "message": "bad input <b>x</b>", "node": "fetch"}
        assert s["updates"] == {1: [("ok", {"log": ["ok"]})]}

    check(build, expect=expect)


def test_tokens_streamed_before_a_node_fails_stay_shown() -> None:
    """The model streamed, then the node raised: the text stays, and the error is the node's."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["partial thoughts before failing"])

        def think(state: Any) -> Any:
            model.invoke(state["messages"])
            raise RuntimeError("parser failed")

        return chat_graph(E, {"think": think}, [(E.START, "think")]), {"messages": [("user", "q")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|think": ["partial thoughts before failing"]}
        assert s["error"] == {"type": "RuntimeError", "message": "parser failed", "node": "think"}

    check(build, expect=expect, transcript=False)


def test_an_error_inside_a_subgraph_names_the_node_that_raised() -> None:
    """A subgraph's node raising: the view names that inner node (`team:step`), where it raised."""

    def build(E: Any) -> Any:
        def step(state: Any) -> Any:
            raise KeyError("missing field")

        sub = E.StateGraph(Log)
        sub.add_node("step", step)
        sub.add_edge(E.START, "step")
        g = chat_graph(E, {"team": sub.compile()}, [(E.START, "team")], state=Log)
        return g, {"log": []}, None

    check(build, expect=lambda s: s["error"] == {"type": "KeyError", "message": "'missing field'",
                                                 "node": "team:step"})


def test_one_failing_branch_of_a_parallel_step_is_the_error_shown() -> None:
    """One branch fails after another succeeded: the view shows the good branch's update and
    the failing branch's error. (`bad` waits for `good`: the two run in threads, and whether
    an update that ends after the error is streamed is thread timing on LangGraph.)"""

    def build(E: Any) -> Any:
        done = threading.Event()

        def good(state: Any) -> Any:
            done.set()
            return {"log": ["good"]}

        def bad(state: Any) -> Any:
            done.wait(5)
            time.sleep(0.05)  # good's writes are in before the error
            raise ZeroDivisionError("division by zero")

        g = chat_graph(E, {"good": good, "bad": bad},
                       [(E.START, "good"), (E.START, "bad")], state=Log)
        return g, {"log": []}, None

    check(build, expect=lambda s: s["error"]["node"] == "bad" and s["status"] == "error", unordered=True)


# --------------------------------------------------------------------------- interrupts
def test_an_interrupt_is_a_yes_no_form_and_the_click_resumes_the_graph() -> None:
    """interrupt("Ship it? (yes/no)"): one form, the click resumes, the reply streams after."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["shipping now"])

        def review(state: Any) -> Any:
            ok = E.interrupt("Ship it? (yes/no)")
            return {"messages": [("ai", f"answer: {ok}")]}

        g = chat_graph(E, {"review": review, "ship": caller(model)},
                       [(E.START, "review"), ("review", "ship")], saver=True)
        return g, {"messages": [("user", "deploy")]}, _cfg()

    def expect(s: dict) -> None:
        assert s["asked"] == [[("Ship it? (yes/no)", "review")], [("yes_no", "review")]]
        assert s["tokens"] == {"|ship": ["shipping now"]} and s["lit"] == {1: ["review"], 2: ["ship"]}
        assert s["updates"] == {1: [("review", {"messages": [["ai", "answer: yes"]]})],
                                2: [("ship", {"messages": [{"type": "ai", "content": "shipping now"}]})]}

    check(build, answers=("yes",), expect=expect, kinds={'"Ship it? (yes/no)"': "yes_no"})


def test_a_dict_payload_is_shown_as_asked_and_approving_resumes() -> None:
    """interrupt({"draft": ..., "to": ...}): the payload is shown as given; Approve resumes."""

    def build(E: Any) -> Any:
        def draft(state: Any) -> Any:
            verdict = E.interrupt({"draft": "Dear team, <ship> it", "to": ["ops@example.com"]})
            return {"log": [verdict]}

        g = chat_graph(E, {"draft": draft}, [(E.START, "draft")], state=Log, saver=True)
        return g, {"log": []}, _cfg()

    payload = {"draft": "Dear team, <ship> it", "to": ["ops@example.com"]}

    def expect(s: dict) -> None:
        assert s["asked"][0] == [(payload, "draft")] and s["final"] == {"log": ["approve"]}

    check(build, answers=("approve",), expect=expect, kinds={json.dumps(payload, sort_keys=True): "value"})


def test_two_interrupts_in_one_node_are_asked_one_after_the_other() -> None:
    """A node asking twice re-runs from its first line after each answer; each is a form."""

    def build(E: Any) -> Any:
        def ask(state: Any) -> Any:
            a = E.interrupt("Proceed? (yes/no)")
            b = E.interrupt("Really proceed? (yes/no)")
            return {"log": [a, b]}

        g = chat_graph(E, {"ask": ask, "after": lambda s: {"log": ["after"]}},
                       [(E.START, "ask"), ("ask", "after")], state=Log, saver=True)
        return g, {"log": []}, _cfg()

    def expect(s: dict) -> None:
        assert [q for q, _ in (a[0] for a in s["asked"][::2])] == ["Proceed? (yes/no)", "Really proceed? (yes/no)"]
        assert s["final"] == {"log": ["yes", "no", "after"]} and s["lit"] == {1: ["ask"], 2: ["after"]}

    check(build, answers=("yes", "no"), expect=expect,
          kinds={'"Proceed? (yes/no)"': "yes_no", '"Really proceed? (yes/no)"': "yes_no"})


def test_an_interrupt_inside_a_subgraph_names_the_inner_node_and_resumes_the_parent() -> None:
    """interrupt() in a subgraph's node: the form names `team:ask`; the click finishes the run."""

    def build(E: Any) -> Any:
        def ask(state: Any) -> Any:
            return {"log": [E.interrupt("Continue? (yes/no)")]}

        sub = E.StateGraph(Log)
        sub.add_node("ask", ask)
        sub.add_edge(E.START, "ask")
        g = chat_graph(E, {"team": sub.compile(), "wrap": lambda s: {"log": ["wrapped"]}},
                       [(E.START, "team"), ("team", "wrap")], state=Log, saver=True)
        return g, {"log": []}, _cfg()

    def expect(s: dict) -> None:
        assert s["asked"][0] == [("Continue? (yes/no)", "team:ask")]
        assert s["status"] == "done" and s["lit"] == {1: ["team", "team:ask"], 2: ["wrap"]}

    check(build, answers=("yes",), expect=expect, kinds={'"Continue? (yes/no)"': "yes_no"})


def test_a_run_left_at_an_interrupt_shows_the_question_and_the_state_so_far() -> None:
    """Not answered: status interrupted, the question pending, the state before the node."""

    def build(E: Any) -> Any:
        def ask(state: Any) -> Any:
            return {"log": [E.interrupt({"question": "Which region?", "options": ["eu", "us"]})]}

        g = chat_graph(E, {"prep": lambda s: {"log": ["prep"]}, "ask": ask},
                       [(E.START, "prep"), ("prep", "ask")], state=Log, saver=True)
        return g, {"log": []}, _cfg()

    def expect(s: dict) -> None:
        assert s["status"] == "interrupted" and s["final"] == {"log": ["prep"]}
        assert s["asked"] == [[({"question": "Which region?", "options": ["eu", "us"]}, "ask")]]

    check(build, expect=expect)


# --------------------------------------------------------------------------- async
def test_async_nodes_run_with_use_async_stream_like_astream() -> None:
    """`use_async=True` on async nodes: tokens (ainvoke) and custom events as astream shows them."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["async reply streamed"], chunk_chars=4)

        async def think(state: Any) -> Any:
            E.get_stream_writer()({"progress": 0.5, "stage": "thinking"})
            msg = await model.ainvoke(state["messages"])
            return {"messages": [msg]}

        return chat_graph(E, {"think": think}, [(E.START, "think")]), {"messages": [("user", "q")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|think": ["async reply streamed"]}
        assert s["progress"] == {"|think|thinking": ("think · thinking", 0.5)}

    check(build, expect=expect, use_async=True)


def test_async_parallel_nodes_with_custom_events_and_a_subgraph() -> None:
    """Async branches (one a subgraph with an async node) stream under their own keys."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["from the sub"])

        async def inner(state: Any) -> Any:
            E.get_stream_writer()({"inner": True})
            return {"messages": [await model.ainvoke(state["messages"])]}

        async def side(state: Any) -> Any:
            E.get_stream_writer()({"side": True})
            return {}

        sub = E.StateGraph(E.MessagesState)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        g = chat_graph(E, {"sub": sub.compile(), "side": side}, [(E.START, "sub"), (E.START, "side")])
        return g, {"messages": [("user", "q")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"sub|sub:inner": ["from the sub"]}
        assert sorted(s["logs"], key=str) == [("", {"side": True}), ("sub", {"inner": True})]

    check(build, expect=expect, use_async=True, unordered=True)


def test_async_interrupt_then_resume_from_the_form() -> None:
    """An async node asking: the form resumes it through astream."""

    def build(E: Any) -> Any:
        async def ask(state: Any) -> Any:
            return {"log": [E.interrupt("Go ahead? (yes/no)")]}

        g = chat_graph(E, {"ask": ask}, [(E.START, "ask")], state=Log, saver=True)
        return g, {"log": []}, _cfg()

    check(build, answers=("no",), expect=lambda s: s["final"] == {"log": ["no"]}, use_async=True,
          kinds={'"Go ahead? (yes/no)"': "yes_no"})


# --------------------------------------------------------------------------- more programs
def test_a_model_that_does_not_stream_shows_its_whole_reply_once() -> None:
    """A model without token streaming: no tokens, the reply appears once in the transcript."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

    def build(E: Any) -> Any:
        model = FakeMessagesListChatModel(responses=[AIMessage("whole reply at once")])
        return chat_graph(E, {"bot": caller(model)}, [(E.START, "bot")]), {"messages": [("user", "hi")]}, None

    def expect(s: dict) -> None:
        assert s["transcript"] == [("human", "hi"), ("ai", "whole reply at once")]

    check(build, expect=expect)


def test_a_message_replaced_by_id_shows_its_new_content() -> None:
    """A node rewriting the model's reply (same id, add_messages replaces): the bubble shows
    the rewrite the state holds, not the streamed draft."""
    from langchain_core.messages import AIMessage

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["draft with a typo"])

        def fix(state: Any) -> Any:
            last = state["messages"][-1]
            return {"messages": [AIMessage(content="fixed reply", id=last.id)]}

        g = chat_graph(E, {"write": caller(model), "fix": fix}, [(E.START, "write"), ("write", "fix")])
        return g, {"messages": [("user", "q")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|write": ["draft with a typo"]}
        assert s["transcript"] == [("human", "q"), ("ai", "fixed reply")]

    check(build, expect=expect)


def test_the_v2_stream_format_shows_the_same_run() -> None:
    """`lgnb.run(..., version="v2")`: the view reads the v2 envelopes to the same record."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["v2 tokens here"])

        def work(state: Any) -> Any:
            E.get_stream_writer()({"progress": 0.5})
            E.get_stream_writer()({"note": "v2"})
            return {"messages": [model.invoke(state["messages"])]}

        return chat_graph(E, {"work": work}, [(E.START, "work")]), {"messages": [("user", "q")]}, None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|work": ["v2 tokens here"]} and s["logs"] == [("", "work", {"note": "v2"})]

    check(build, expect=expect, view_only={"version": "v2"})


def test_a_functional_api_entrypoint_streams_its_tasks_tokens_and_events() -> None:
    """@entrypoint calling @task functions: each task's tokens under the task, the
    entrypoint's events, every task lit and its result listed, all in checkpoint step 0.

    A task's own custom events are left out: both engines stream them under the caller's
    namespace, and only lgnb's says which task wrote them (tests/widgets/test_run_view_attribution.py)."""

    def build(E: Any) -> Any:
        model = FakeStreamingChat(replies=["outline ready", "essay written"])

        @E.func.task
        def outline(topic: str) -> str:
            return model.invoke([("user", topic)]).content

        @E.func.task
        def essay(plan: str) -> str:
            return model.invoke([("user", plan)]).content

        @E.func.entrypoint()
        def writer_flow(topic: str) -> str:
            E.get_stream_writer()({"progress": 0.5, "stage": "writing"})
            return essay(outline(topic).result()).result()

        return writer_flow, "bees", None

    def expect(s: dict) -> None:
        assert s["tokens"] == {"|outline": ["outline ready"], "|essay": ["essay written"]}
        assert s["progress"] == {"|writer_flow|writing": ("writer_flow · writing", 0.5)}
        assert s["updates"] == {0: [("outline", "outline ready"), ("essay", "essay written"),
                                    ("writer_flow", "essay written")]}
        assert s["lit"] == {0: ["essay", "outline", "writer_flow"]}
        assert s["final"] == "essay written"

    check(build, expect=expect, transcript=False)


def test_a_deferred_node_after_a_fan_out_is_lit_after_every_branch() -> None:
    """`defer=True` joins uneven branches: it is lit once, in the last step."""

    def build(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b", lambda s: {"log": ["b"]})
        g.add_node("b2", lambda s: {"log": ["b2"]})
        g.add_node("join", lambda s: {"log": ["join"]}, defer=True)
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge("b", "b2")
        g.add_edge("a", "join")
        g.add_edge("b2", "join")
        return g.compile(), {"log": []}, None

    def expect(s: dict) -> None:
        assert s["lit"] == {1: ["a", "b"], 2: ["b2"], 3: ["join"]}

    check(build, expect=expect, unordered=True)


# --------------------------------------------------------------------------- options, escaping
def test_user_stream_modes_and_a_static_breakpoint_are_honoured() -> None:
    """`interrupt_before=["act"]` and an extra stream mode: the run pauses before act, no question."""

    def build(E: Any) -> Any:
        g = chat_graph(E, {"plan": lambda s: {"log": ["plan"]}, "act": lambda s: {"log": ["act"]}},
                       [(E.START, "plan"), ("plan", "act")], state=Log, saver=True)
        return g, {"log": []}, _cfg()

    def expect(s: dict) -> None:
        assert s["status"] == "interrupted" and s["final"] == {"log": ["plan"]} and s["lit"] == {1: ["plan"]}

    check(build, expect=expect, interrupt_before=["act"], view_only={"stream_mode": ["checkpoints"]})


def test_strings_from_models_states_and_payloads_reach_the_page_as_plain_text() -> None:
    """Markup in tokens, custom events, state, questions and errors is sent verbatim as text
    (never pre-escaped, never flagged as HTML), and the page's code sets text only."""
    from lgnb.checkpoint.memory import InMemorySaver
    from lgnb.graph import START, StateGraph
    from lgnb.types import interrupt
    from lgnb.widgets import run

    class S(TypedDict):
        messages: Annotated[list, __import__("lgnb.graph.message", fromlist=["add_messages"]).add_messages]
        note: str

    model = FakeStreamingChat(replies=[f"reply {EVIL}"])

    def talk(state: Any) -> Any:
        from lgnb.config import get_stream_writer

        get_stream_writer()({"html": EVIL, "progress": 0.5, "label": EVIL})
        get_stream_writer()({"html": EVIL})
        return {"messages": [model.invoke(state["messages"]), ToolMessage(EVIL, tool_call_id="x", name=EVIL)],
                "note": EVIL}

    def ask(state: Any) -> Any:
        interrupt({"question": EVIL})
        raise ValueError(EVIL)

    g = StateGraph(S)
    g.add_node("talk", talk)
    g.add_node("ask", ask)
    g.add_edge(START, "talk")
    g.add_edge("talk", "ask")
    r = run(g.compile(checkpointer=InMemorySaver()), {"messages": [("user", EVIL)], "note": ""}, display=False)
    r.wait(timeout=TIMEOUT)
    assert r.status == "interrupted"
    state = r.view.get_state()
    sent = SENT[id(r.view)]
    strings: list[str] = []

    def walk(v: Any) -> None:  # no field of the protocol says "render me as HTML"
        if isinstance(v, dict):
            for k, x in v.items():
                assert str(k).lower() not in {"is_html", "html_content", "innerhtml", "__html", "markup"}, k
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            strings.append(v)

    walk(state), walk(sent)
    with_evil = [x for x in strings if EVIL in x]
    assert len(with_evil) >= 8  # tokens, tool message, input, custom log and label, state, question
    assert not [x for x in strings if "&lt;img" in x or "&quot;" in x]  # verbatim, never pre-escaped
    texts = [m["content"] for m in r.content["messages"]]
    assert texts == [EVIL, f"reply {EVIL}", EVIL]
    assert r.view.forms[0]["fields"] == [{"key": "question", "text": EVIL}]
    assert EVIL not in r.view._static_html()  # the saved-notebook HTML escapes it
    js = Path(__file__).parents[2] / "js" / "src"
    for source in js.glob("*.js"):
        code = source.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "createContextualFragment"):
            assert sink not in code, f"{source.name} uses {sink}: user text must be set as text"

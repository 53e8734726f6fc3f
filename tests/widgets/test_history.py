"""lgnb.draw.history_to_dot / lgnb.history: the checkpoint timeline of real graphs (LangGraph
and lgnb, InMemorySaver), with forks from update_state and replays. Structure is asserted on
the Timeline model and on nodes/edges parsed back from the DOT, not on string snapshots."""

from __future__ import annotations

import datetime as dt
import itertools
import operator
import re
import shutil
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, Optional

import nbformat
import pytest
from nbclient import NotebookClient
from typing_extensions import TypedDict

from lgnb.draw import history_to_dot, timeline, timeline_to_dot
from lgnb.widgets import HistoryView, history

ROOT = Path(__file__).resolve().parents[2]
CFG = {"configurable": {"thread_id": "t1"}}


class S(TypedDict):
    n: Annotated[list, operator.add]


def two_steps(eng: Any, first: str = "a", second: str = "b") -> Any:
    b = eng.StateGraph(S)
    b.add_node(first, lambda s: {"n": [first]})
    b.add_node(second, lambda s: {"n": [second]})
    b.add_edge(eng.START, first)
    b.add_edge(first, second)
    return b.compile(checkpointer=eng.InMemorySaver())


def cid(config: Any) -> str:
    return config["configurable"]["checkpoint_id"]


def parse_dot(dot: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """{node id: attribute text}, [(src, dst, attribute text)] from our DOT output."""
    nodes = dict(re.findall(r"^\t(lgnb_h\d+) \[(.*)\]$", dot, re.MULTILINE))
    edges = re.findall(r"^\t(lgnb_h\d+) -> (lgnb_h\d+) \[(.*)\]$", dot, re.MULTILINE)
    return nodes, edges


def label_of(attrs: str) -> str:
    m = re.search(r'label="((?:[^"\\]|\\.)*)"', attrs)
    assert m, attrs
    return m.group(1)


def test_linear_history_is_a_chain(eng: Any) -> None:
    g = two_steps(eng)
    g.invoke({"n": ["x"]}, CFG)
    snaps = list(g.get_state_history(CFG))
    t = timeline(snaps)
    assert [(c.step, c.source, c.next) for c in t.checkpoints] == [
        (-1, "input", ("__start__",)), (0, "loop", ("a",)), (1, "loop", ("b",)), (2, "loop", ())]
    assert t.branch_points == [] and t.latest == cid(snaps[0].config)
    nodes, edges = parse_dot(history_to_dot(snaps))
    assert len(nodes) == 4 and len(edges) == 3
    chain = [c.dot_id.replace("-", "_") for c in t.checkpoints]
    assert [(s, d) for s, d, _ in edges] == list(itertools.pairwise(chain))
    assert [label_of(nodes[k]) for k in chain] == [
        "step -1 · input\\nnext: __start__", "step 0 · loop\\nnext: a", "step 1 · loop\\nnext: b", "step 2 · loop\\nend"]
    assert "penwidth=2.2" in nodes[chain[-1]] and all("penwidth" not in nodes[k] for k in chain[:-1])
    # newest-first input (as get_state_history returns it) or any order: same timeline
    assert timeline_to_dot(timeline(reversed(snaps))) == timeline_to_dot(t)


def test_fork_with_update_state_on_an_old_checkpoint_branches(eng: Any) -> None:
    g = two_steps(eng)
    g.invoke({"n": ["x"]}, CFG)
    old = next(s for s in g.get_state_history(CFG) if s.next == ("b",))
    forked = g.update_state(old.config, {"n": ["edit"]})
    g.invoke(None, forked)
    snaps = list(g.get_state_history(CFG))
    t = timeline(snaps)
    assert len(t.checkpoints) == 6
    assert t.branch_points == [cid(old.config)]
    kids = [c for c in t.checkpoints if c.parent == cid(old.config)]
    assert [(c.source, c.fork) for c in kids] == [("loop", False), ("update", True)]
    fork = t.by_id(cid(forked))
    assert fork is not None and fork.fork and fork.details["values"] == {"n": ["x", "a", "edit"]}
    assert t.latest == cid(snaps[0].config) and t.by_id(t.latest).parent == cid(forked)
    nodes, edges = parse_dot(timeline_to_dot(t))
    dashed = [(s, d) for s, d, a in edges if "dashed" in a]
    assert dashed == [(t.by_id(cid(old.config)).dot_id.replace("-", "_"), fork.dot_id.replace("-", "_"))]
    # two leaves: the original end and the forked end
    sources = {s for s, _, _ in edges}
    assert len([k for k in nodes if k not in sources]) == 2


def test_replay_from_an_old_checkpoint_branches(eng: Any) -> None:
    g = two_steps(eng)
    g.invoke({"n": ["x"]}, CFG)
    first = next(s for s in g.get_state_history(CFG) if s.next == ("a",))
    g.invoke(None, first.config)
    t = timeline(g.get_state_history(CFG))
    assert t.branch_points == [cid(first.config)]
    assert len(t.checkpoints) == 7  # 4 + the replay's 3
    replayed = [c for c in t.checkpoints if c.fork]
    assert len(replayed) == 1 and replayed[0].parent == cid(first.config)
    # the replayed branch runs to the end; the latest checkpoint is its leaf
    leaf = t.by_id(t.latest)
    assert leaf is not None and leaf.next == () and leaf.details["values"] == {"n": ["x", "a", "b"]}


def test_current_and_interrupts_are_marked(eng: Any) -> None:
    def ask(state: S) -> dict[str, Any]:
        return {"n": [eng.interrupt({"question": "ok?"})]}

    b = eng.StateGraph(S)
    b.add_node("ask", ask)
    b.add_edge(eng.START, "ask")
    g = b.compile(checkpointer=eng.InMemorySaver())
    g.invoke({"n": []}, CFG)
    snaps = list(g.get_state_history(CFG))
    first = cid(snaps[-1].config)
    t = timeline(snaps, current=first)
    paused = t.by_id(t.latest)
    assert paused is not None and paused.interrupts == 1 and paused.next == ("ask",)
    assert paused.details["interrupts"][0]["value"] == {"question": "ok?"}
    nodes, _ = parse_dot(timeline_to_dot(t))
    attrs = nodes[paused.dot_id.replace("-", "_")]
    assert "peripheries=2" in attrs and "⏸ interrupt (1)" in label_of(attrs)
    assert t.current == first and "penwidth=2.6" in nodes[t.by_id(first).dot_id.replace("-", "_")]
    assert timeline(snaps, current="not-an-id").current is None


def test_user_strings_are_escaped(lg: Any) -> None:
    hostile = 'x" -> evil [label="<b>hi</b>"] \\N &amp;'
    g = two_steps(lg, first=hostile, second="<i>b</i>")
    g.invoke({"n": []}, CFG)
    dot = history_to_dot(g.get_state_history(CFG))
    nodes, edges = parse_dot(dot)
    assert len(nodes) == 4 and len(edges) == 3  # nothing injected
    assert not re.search(r"label=<", dot)
    if shutil.which("dot"):
        from lgnb.draw import to_svg

        svg = to_svg(dot)
        assert "next: x&quot; &#45;&gt; evil [label=&quot;&lt;b&gt;hi&lt;/b&gt;&quot;] \\N &amp;amp;" in svg
        assert "next: &lt;i&gt;b&lt;/i&gt;" in svg and "<b>" not in svg and "<i>" not in svg


def test_snapshot_without_checkpoint_id_is_a_clear_error() -> None:
    snap = SimpleNamespace(config={"configurable": {"thread_id": "1"}})
    with pytest.raises(ValueError, match="without a checkpoint id"):
        timeline([snap])


# -- the widget ------------------------------------------------------------------------

def test_history_view_select_fork_replay_refresh(eng: Any) -> None:
    g = two_steps(eng)
    g.invoke({"n": ["x"]}, CFG)
    view = history(g, CFG)
    assert isinstance(view, HistoryView) and view.thread == "t1" and view._view_kind == "history"
    assert len(view.timeline["checkpoints"]) == 4 and view.dot.startswith("digraph")
    old = next(c for c in view.timeline["checkpoints"] if c["next"] == ["b"])
    assert "details" not in old and view.details == {}  # sent for the clicked checkpoint only
    view._msg_select({"id": old["id"]})
    assert view.selected == old["id"]
    assert view.details["id"] == old["id"] and view.details["values"] == {"n": ["x", "a"]}
    assert view.details["metadata"]["step"] == 1 and view.details["next"] == ["b"]

    view._msg_fork({"kind": "fork", "id": old["id"]})
    assert view.error == "" and "forked from step 1" in view.notice
    t = view.model
    assert t is not None and len(t.checkpoints) == 5 and t.branch_points == [old["id"]]
    assert view.selected == t.latest and t.current == t.latest  # the new checkpoint is selected
    assert view.details["id"] == t.latest and view.details["metadata"]["source"] == "update"

    view._msg_replay({"kind": "replay", "id": old["id"]})
    assert view.error == ""
    view.runs[-1].wait(30)
    deadline = time.monotonic() + 10
    while "done" not in view.notice and time.monotonic() < deadline:
        time.sleep(0.05)
    assert view.notice == "replay from step 1: done", view.notice
    assert len(view.model.checkpoints) == 7  # the replay added a fork and its end

    before = len(view.model.checkpoints)
    g.update_state(CFG, {"n": ["outside"]})  # changes made outside the view show on refresh
    assert len(view.model.checkpoints) == before
    view._msg_refresh({"kind": "refresh"})
    assert view.error == "" and len(view.model.checkpoints) == before + 1


def test_history_limit_draws_the_newest_checkpoints(lg: Any) -> None:
    g = two_steps(lg)
    g.invoke({"n": []}, CFG)
    view = history(g, CFG, limit=2)
    t = view.model
    assert t is not None and [c.step for c in t.checkpoints] == [1, 2]
    assert t.checkpoints[0].parent is None and len(t.links) == 1  # the older parent is not drawn


def test_history_view_reports_errors_as_text(lg: Any) -> None:
    g = two_steps(lg)
    g.invoke({"n": []}, CFG)
    view = history(g, CFG)
    view._msg_fork({"kind": "fork", "id": "<img src=x onerror=alert(1)>"})
    assert view.error.startswith("KeyError") and "no checkpoint" in view.error


def test_history_needs_a_checkpointer_and_a_thread(lg: Any) -> None:
    b = lg.StateGraph(S)
    b.add_node("a", lambda s: {"n": ["a"]})
    b.add_edge(lg.START, "a")
    with pytest.raises(ValueError, match="no checkpointer"):
        history(b.compile(), CFG)
    with pytest.raises(ValueError, match="thread_id"):
        history(two_steps(lg), {})
    with pytest.raises(TypeError, match="compile"):
        history(b, CFG)


def test_time_travel_notebook_runs_headless(tmp_path: Path) -> None:
    nb = nbformat.read(ROOT / "notebooks" / "time_travel.ipynb", as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=120, store_widget_state=True,
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    views = [m["state"] for m in state.values() if m["state"].get("_view_kind") == "history"]
    assert views and max(len(v["timeline"]["branch_points"]) for v in views) >= 1


# -- time travel, complete: fork with edits, replays in their own view, diffs, following --------

class Doc(TypedDict):
    topic: str
    count: int
    draft: bool
    notes: Annotated[list, operator.add]


def doc_graph(eng: Any, *, delay: float = 0.0) -> Any:
    def step(name: str) -> Any:
        def node(state: Doc) -> dict[str, Any]:
            time.sleep(delay)
            return {"notes": [f"{name}: {state['topic']}"], "count": state.get("count", 0) + 1}
        return node

    b = eng.StateGraph(Doc)
    for name in ("plan", "write", "review"):
        b.add_node(name, step(name))
    b.add_edge(eng.START, "plan")
    b.add_edge("plan", "write")
    b.add_edge("write", "review")
    return b.compile(checkpointer=eng.InMemorySaver())


def captured(view: HistoryView) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    view.send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
    return sent


def test_fork_form_is_generated_from_the_state_schema(eng: Any) -> None:
    g = doc_graph(eng)
    g.invoke({"topic": "tea", "count": 0, "draft": True, "notes": []}, CFG)
    view = history(g, CFG)
    write = next(c for c in view.timeline["checkpoints"] if c["next"] == ["write"])
    view._msg_select({"id": write["id"]})
    form = view.details["form"]
    fields = {f["key"]: f for f in form["fields"]}
    assert [(k, f["kind"], f["reducer"]) for k, f in fields.items()] == [
        ("topic", "string", False), ("count", "integer", False), ("draft", "boolean", False), ("notes", "json", True)]
    assert fields["topic"]["text"] == "tea" and fields["count"]["text"] == "1" and fields["draft"]["value"] is True
    assert fields["notes"]["text"] == ""  # a reducer field starts empty: what is typed is added
    assert form["as_node"] == ["plan", "write", "review"]


def test_fork_with_edits_from_the_page(eng: Any) -> None:
    g = doc_graph(eng)
    g.invoke({"topic": "tea", "count": 0, "draft": True, "notes": []}, CFG)
    view = history(g, CFG)
    sent = captured(view)
    write = next(c for c in view.timeline["checkpoints"] if c["next"] == ["write"])
    before = len(view.model.checkpoints)

    # invalid edits: nothing is sent to the graph, each field says what is wrong
    view._msg_fork({"kind": "fork", "request": 1, "id": write["id"], "as_node": "plan",
                    "values": {"count": "three", "notes": "[1,", "draft": "maybe", "nope": "1"}})
    assert sent[-1]["kind"] == "fork-result" and sent[-1]["request"] == 1 and sent[-1]["ok"] is False
    errors = view.fork_errors
    assert errors["count"] == "not an integer: 'three'" and errors["notes"].startswith("not valid JSON")
    assert errors["draft"] == "expected true or false" and errors["nope"] == "not a key of this graph's state"
    view._msg_fork({"kind": "fork", "request": 2, "id": write["id"], "as_node": "plan", "values": {"notes": '{"a": 1}'}})
    assert "does not match the state schema" in view.fork_errors["notes"] and sent[-1]["ok"] is False
    assert len(view.model.checkpoints) == before == len(list(g.get_state_history(CFG)))

    # valid edits: update_state(as_node=...) with the parsed values, a new branch, selected
    edits = {"topic": "coffee", "count": "7", "draft": "false", "notes": '["edited by hand"]'}
    view._msg_fork({"kind": "fork", "request": 3, "id": write["id"], "as_node": "plan", "values": edits})
    assert sent[-1] == {"kind": "fork-result", "request": 3, "ok": True, "checkpoint": view.selected}
    assert view.fork_errors == {} and view.error == ""
    t = view.model
    new = t.by_id(view.selected)
    assert new is not None and new.parent == write["id"] and new.fork and t.branch_points == [write["id"]]
    state = g.get_state(view.checkpoint_config(new.id))
    assert state.values == {"topic": "coffee", "count": 7, "draft": False, "notes": ["plan: tea", "edited by hand"]}
    assert state.next == ("write",) and state.metadata["source"] == "update"
    assert "with topic, count, draft, notes edited" in view.notice

    # the same fork again at once (a double click) is refused; nothing new in the history
    view._msg_fork({"kind": "fork", "request": 4, "id": write["id"], "as_node": "plan", "values": edits})
    assert sent[-1]["ok"] is False and "double click" in sent[-1]["error"]
    assert len(list(g.get_state_history(CFG))) == before + 1
    # unchanged values are not sent: a fork with nothing edited is update_state(config, None)
    view._msg_fork({"kind": "fork", "request": 5, "id": write["id"], "as_node": "plan", "values": {"topic": "tea"}})
    assert sent[-1]["ok"] is True and g.get_state(view.checkpoint_config(view.selected)).values["topic"] == "tea"
    # an as_node the graph refuses: the error is shown, as text
    view._msg_fork({"kind": "fork", "request": 6, "id": write["id"], "as_node": "<b>nope</b>", "values": {}})
    assert sent[-1]["ok"] is False and "nope" in view.fork_errors[""] and view.error == view.fork_errors[""]


class Address(TypedDict):
    city: str
    zip: str


class Kept(TypedDict, total=False):
    n: int
    addr: Address
    when: Any
    tags: Any
    due: Optional[dt.datetime]


def _one_step(eng: Any, schema: Any, update: dict[str, Any]) -> Any:
    b = eng.StateGraph(schema)
    b.add_node("step", lambda s: update)
    b.add_edge(eng.START, "step")
    return b.compile(checkpointer=eng.InMemorySaver())


def _form_at_the_end(view: HistoryView) -> tuple[str, dict[str, Any]]:
    last = next(c["id"] for c in view.timeline["checkpoints"] if c["latest"])
    view._msg_select({"id": last})
    return last, {f["key"]: f for f in view.details["form"]["fields"]}


def test_a_messages_key_of_the_fork_form_goes_through_add_messages(eng: Any) -> None:
    """A `MessagesState` key is a reducer field on either engine's graph: it starts empty
    and what is typed is added by `add_messages` (lgnb's channel for it is its own class)."""
    from langchain_core.messages import AIMessage

    g = _one_step(eng, eng.MessagesState, {"messages": [AIMessage("reply", id="a1")]})
    g.invoke({"messages": [("user", "q1")]}, CFG)
    view = history(g, CFG)
    sent = captured(view)
    cid, fields = _form_at_the_end(view)
    assert fields["messages"]["reducer"] is True and fields["messages"]["text"] == ""
    view._msg_fork({"kind": "fork", "request": 1, "id": cid,
                    "values": {"messages": '[{"type": "human", "content": "q2"}]'}})
    assert sent[-1]["ok"] is True, sent[-1]
    messages = g.get_state(view.checkpoint_config(view.selected)).values["messages"]
    assert [(m.type, m.content) for m in messages] == [("human", "q1"), ("ai", "reply"), ("human", "q2")]


def test_a_nested_typeddict_key_is_checked_against_its_definition_then_forked(eng: Any) -> None:
    g = _one_step(eng, Kept, {"n": 1})
    g.invoke({"n": 0, "addr": {"city": "Lyon", "zip": "69001"}}, CFG)
    view = history(g, CFG)
    sent = captured(view)
    cid, fields = _form_at_the_end(view)
    assert fields["addr"]["kind"] == "json" and "$ref" in str(fields["addr"]["schema"])
    view._msg_fork({"kind": "fork", "request": 1, "id": cid, "values": {"addr": '{"city": "Nice"}'}})
    assert sent[-1]["ok"] is False and "does not match the state schema" in view.fork_errors["addr"]
    view._msg_fork({"kind": "fork", "request": 2, "id": cid, "values": {"addr": '{"city": "Nice", "zip": "06000"}'}})
    assert sent[-1]["ok"] is True, sent[-1]
    assert g.get_state(view.checkpoint_config(view.selected)).values["addr"] == {"city": "Nice", "zip": "06000"}


def test_a_key_holding_no_json_value_is_shown_locked_and_an_edit_is_refused(eng: Any) -> None:
    """A datetime or a set would come back from the page as a string or a list: such a
    field shows what it holds, is not editable there, and an edit sent anyway changes
    nothing."""
    import datetime as dt

    when = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    g = _one_step(eng, Kept, {"n": 1})
    g.invoke({"n": 0, "when": when, "tags": {"x"}}, CFG)
    view = history(g, CFG)
    sent = captured(view)
    cid, fields = _form_at_the_end(view)
    assert fields["when"]["locked"] == "a datetime value" and fields["when"]["text"] == ""
    assert fields["tags"]["locked"] == "a set value" and "locked" not in fields["n"]
    # empty at this checkpoint, but its type is no JSON value either: locked by its type
    assert fields["due"]["locked"] == "values of type datetime" and "locked" not in fields["addr"]
    before = len(list(g.get_state_history(CFG)))
    view._msg_fork({"kind": "fork", "request": 1, "id": cid, "values": {"when": '"2025-01-01"'}})
    assert sent[-1]["ok"] is False and "fork from code" in view.fork_errors["when"]
    assert len(list(g.get_state_history(CFG))) == before
    assert g.get_state(CFG).values["when"] == when


class SubNotes(TypedDict, total=False):
    notes: Annotated[list, operator.add]
    inner: int


class ParentNotes(TypedDict, total=False):
    notes: list
    top: str


def test_a_view_on_a_subgraphs_namespace_forks_with_the_subgraphs_keys_reducers_and_nodes(eng: Any) -> None:
    """The parent's `notes` is a plain list, the subgraph's an `operator.add` list: the fork
    form of the subgraph's history must be the subgraph's (the parent's made a teacher's
    edit of the prefilled list append it all again)."""
    sb = eng.StateGraph(SubNotes)
    sb.add_node("s1", lambda s: {"notes": ["s1"], "inner": 1})
    sb.add_node("s2", lambda s: {"notes": [eng.interrupt("more?")]})
    sb.add_edge(eng.START, "s1")
    sb.add_edge("s1", "s2")
    pb = eng.StateGraph(ParentNotes)
    pb.add_node("child", sb.compile())
    pb.add_edge(eng.START, "child")
    g = pb.compile(checkpointer=eng.InMemorySaver())
    g.invoke({"notes": ["p"], "top": "t"}, CFG)
    ns = g.get_state(CFG, subgraphs=True).tasks[0].state.config["configurable"]["checkpoint_ns"]
    view = history(g, {"configurable": {"thread_id": "t1", "checkpoint_ns": ns}})
    sent = captured(view)
    cid, fields = _form_at_the_end(view)
    assert sorted(fields) == ["inner", "notes"] and fields["notes"]["reducer"] is True
    assert fields["notes"]["text"] == "" and view.details["form"]["as_node"] == ["s1", "s2"]
    view._msg_fork({"kind": "fork", "request": 1, "id": cid, "values": {"notes": '["typed"]'}})
    assert sent[-1]["ok"] is True, sent[-1]
    assert g.get_state(view.checkpoint_config(view.selected)).values["notes"] == ["p", "s1", "typed"]


def test_replay_streams_into_its_own_view_and_a_double_click_starts_one(eng: Any) -> None:
    g = doc_graph(eng, delay=0.3)
    g.invoke({"topic": "tea", "count": 0, "draft": True, "notes": []}, CFG)
    view = history(g, CFG)
    sent = captured(view)
    first = next(c for c in view.timeline["checkpoints"] if c["next"] == ["plan"])
    before = len(view.model.checkpoints)
    view._msg_replay({"kind": "replay", "request": 1, "id": first["id"]})
    view._msg_replay({"kind": "replay", "request": 2, "id": first["id"]})  # the double click
    assert [m["ok"] for m in sent] == [True, False] and "still running" in sent[1]["error"]
    assert len(view.runs) == 1 and view.busy == "replay"
    run = view.runs[0]
    assert view.replays.children == (run.view,) and view.panel.children == (view, view.replays)
    assert run.view.title == "replay from step 0"
    counts = set()
    while run.status in ("running", "pending"):
        counts.add(len(view.model.checkpoints))
        time.sleep(0.02)
    run.wait(30)
    deadline = time.monotonic() + 10
    while view.busy and time.monotonic() < deadline:
        time.sleep(0.02)
    assert view.busy == "" and view.notice == "replay from step 0: done"
    assert len(view.model.checkpoints) == before + 4  # fork + plan, write, review
    assert len(counts - {before, before + 4}) >= 1, counts  # the timeline grew while it ran
    assert run.content["updates"] and run.result["notes"] == ["plan: tea", "write: tea", "review: tea"]
    # once it is over, another replay may start; its view joins the first under the timeline
    view._msg_replay({"kind": "replay", "request": 3, "id": first["id"]})
    assert sent[-1]["ok"] is True and len(view.replays.children) == 2
    view.runs[-1].wait(30)


def test_diff_between_two_checkpoints(eng: Any) -> None:
    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [("ai", f"reply {len(state['messages'])}")]}

    b = eng.StateGraph(eng.MessagesState)
    b.add_node("agent", agent)
    b.add_edge(eng.START, "agent")
    g = b.compile(checkpointer=eng.InMemorySaver())
    g.invoke({"messages": [("user", "hi")]}, CFG)
    g.invoke({"messages": [("user", "again")]}, CFG)
    view = history(g, CFG)
    cps = view.model.checkpoints
    first_end = next(c for c in cps if c.step == 1)
    last = cps[-1]
    view._msg_select({"id": last.id})
    assert view.diff == {}
    view._msg_compare({"id": first_end.id})
    d = view.diff
    assert (d["a"], d["b"], d["a_step"], d["b_step"]) == (first_end.id, last.id, "1", "4")
    [m] = d["messages"]
    assert m["key"] == "messages" and m["removed"] == [] and m["replaced"] == []
    assert [(x["type"], x["content"]) for x in m["added"]] == [("human", "again"), ("ai", "reply 3")]
    assert d["changed"] == [] and d["same"] == []
    # a message replaced by id, a plain key changed, a key added
    from lgnb.draw import checkpoint_diff

    msg = {"type": "ai", "content": "old", "id": "m1"}
    out = checkpoint_diff({"messages": [msg], "n": 1}, {"messages": [dict(msg, content="new")], "n": 2, "x": "<b>"})
    assert out["changed"] == [{"key": "n", "before": 1, "after": 2}] and out["added"] == [{"key": "x", "after": "<b>"}]
    assert out["messages"][0]["replaced"] == [{"before": msg, "after": dict(msg, content="new")}]
    view._msg_compare({"id": ""})
    assert view.diff == {}


def test_timeline_follows_a_run_on_its_thread(eng: Any) -> None:
    from lgnb.widgets import run

    g = doc_graph(eng, delay=0.3)
    r = run(g, {"topic": "tea", "count": 0, "draft": True, "notes": []}, CFG, display=False)
    view = history(g, CFG, follow=r)
    assert view.following
    seen = set()
    while r.status in ("running", "pending"):
        seen.add(len(view.model.checkpoints))
        time.sleep(0.02)
    r.wait(30)
    time.sleep(0.1)
    assert len(view.model.checkpoints) == 5 and len(seen - {5}) >= 2, seen
    view.unfollow()
    assert not view.following

    # follow=True polls: a change made elsewhere shows without refresh()
    polled = history(g, CFG, follow=True)
    g.update_state(CFG, {"topic": "later"})
    deadline = time.monotonic() + 5
    while len(polled.model.checkpoints) == 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(polled.model.checkpoints) == 6
    polled.close()  # a closed view stops polling
    deadline = time.monotonic() + 3
    while polled._poll is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert polled._poll is None and not polled.following


def test_a_closed_view_answers_nobody_and_never_hangs(lg: Any) -> None:
    g = doc_graph(lg)
    g.invoke({"topic": "tea", "count": 0, "draft": True, "notes": []}, CFG)
    view = history(g, CFG)
    first = view.model.checkpoints[0].id
    view.close()  # the page went away (kernel side of a restarted front end)
    view._msg_fork({"kind": "fork", "request": 1, "id": first, "values": {"topic": "x"}})
    assert view.error == "" and view.model.by_id(view.selected).source == "update"
    view._msg_replay({"kind": "replay", "request": 2, "id": first})
    view.runs[-1].wait(30)
    assert view.runs[-1].status == "done"


# -- thread ids of any type ---------------------------------------------------------------

THREAD_IDS = [0, 42, uuid.UUID(int=9), "t-0"]


@pytest.mark.parametrize("thread_id", THREAD_IDS, ids=repr)
@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_run_and_history_take_any_thread_id_langgraph_takes(thread_id: Any, saver: str, tmp_path: Path) -> None:
    """0, an int, a UUID: LangGraph takes any thread id (savers key on str(thread_id)), and
    so do lgnb.run and lgnb.history, on lgnb's in-memory and SQLite savers."""
    from lgnb.checkpoint.memory import InMemorySaver
    from lgnb.checkpoint.sqlite import SqliteSaver
    from lgnb.graph import START, StateGraph
    from lgnb.widgets import run

    b = StateGraph(S)
    b.add_node("a", lambda s: {"n": ["a"]})
    b.add_edge(START, "a")
    with SqliteSaver.from_conn_string(str(tmp_path / "t.db")) as sqlite:
        g = b.compile(checkpointer=InMemorySaver() if saver == "memory" else sqlite)
        cfg = {"configurable": {"thread_id": thread_id}}
        assert run(g, {"n": ["x"]}, cfg).wait(timeout=30) == {"n": ["x", "a"]}
        r2 = run(g, {"n": ["y"]}, cfg)
        assert r2.wait(timeout=30) == {"n": ["x", "a", "y", "a"]}  # the same thread, continued
        assert r2.view.thread == str(thread_id)

        view = history(g, cfg)
        assert view.error == "" and view.thread == str(thread_id)
        assert len(view.timeline["checkpoints"]) == 6
        first_a = next(c for c in view.timeline["checkpoints"] if c["step"] == 1)
        view._msg_fork({"kind": "fork", "id": first_a["id"]})
        assert view.error == "" and len(view.model.checkpoints) == 7
        assert g.get_state({"configurable": {"thread_id": str(thread_id)}}).values == {"n": ["x", "a"]}

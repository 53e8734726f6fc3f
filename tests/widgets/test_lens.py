"""lgnb.lens: stepping super-steps, Send fan-out counts, conflicts, what-if, LangGraph's
reduced view, interrupts answered in the lens (no browser)."""

from __future__ import annotations

import asyncio
import importlib
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

import lens_graphs as L

from lgnb.whatif import reapply, what_if
from lgnb.widgets.lens_steps import REDUCED_NOTICE
from lgnb.widgets.lens_view import Lens


def _send(eng: Any) -> Any:
    return importlib.import_module(f"{eng.name}.types").Send


def test_diamond_steps_one_at_a_time(eng: Any) -> None:
    lens = Lens(L.diamond(eng), {"log": [], "last": ""})
    seen = []
    while (step := lens.step()) is not None:
        seen.append(step)
        assert lens.view.current == step or lens.status == "done"
    assert lens.status == "done"
    loop = [s for s in seen if s["plan"] and s["counts"] != {"__start__": 1}]
    assert [s["counts"] for s in loop] == [{"a": 1}, {"b": 1, "c": 1}, {"d": 1}]
    bc = loop[1]
    assert bc["changed"] == ["log", "last"] and bc["after"]["log"] == ["a", "b", "c"]
    log = next(c for c in bc["update"]["channels"] if c["channel"] == "log")
    assert [w["value"] for w in log["writes"]] == [["b"], ["c"]] and log["before"] == ["a"]
    assert log["reducer"] == "operator.add"  # LangGraph's: read from its compiled channels
    if eng.name == "lgnb":
        assert log["version"] is not None and not bc["reduced"]
        assert all(t["triggers"][0]["version"] is not None for t in bc["plan"]["tasks"])
        assert lens.view.notice == ""
    else:
        assert log["version"] is None and bc["reduced"] and lens.view.notice == REDUCED_NOTICE
    assert lens.trace and {r["kind"] for r in lens.trace} >= {"plan", "execute", "update"}
    assert lens.result["log"] == ["a", "b", "c", "d"]
    lens.reset()
    assert lens.status == "ready" and lens.steps == [] and lens.view.current == {}


def test_send_fan_out_shows_three_tasks(eng: Any) -> None:
    lens = Lens(L.fan_out(eng, _send(eng)), {"items": [1, 2, 3], "done": []})
    lens.run()
    work = next(s for s in lens.steps if "work" in s["counts"])
    assert work["counts"] == {"work": 3}
    assert [t["send"]["arg"] for t in work["plan"]["tasks"]] == [{"item": 1}, {"item": 2}, {"item": 3}]
    assert any(x["nodes"] == ["work ×3"] for x in lens.view.summary)


def test_conflicting_write_shows_the_error_record(eng: Any) -> None:
    lens = Lens(L.conflict(eng), {"value": ""})
    lens.run()
    assert lens.status == "error" and lens.view.error["type"] == "InvalidUpdateError"
    err = lens.steps[-1]["update"]["error"]
    assert err["channel"] == "value" and sorted(w["node"] for w in err["writes"]) == ["left", "right"]
    # what if "value" had operator.add: the two writes concatenate
    result = lens.what_if("operator.add")
    assert result[0]["error"] is None and sorted(result[0]["whatif"]) in (["", "left", "right"], sorted("leftright"))


def test_whatif_pure() -> None:
    assert reapply(["a"], [["b"], ["c"]], "operator.add") == {"value": ["a", "b", "c"], "error": None}
    assert "only one value per step" in reapply("x", ["y", "z"], "last value", channel="k")["error"]
    assert reapply(0, [1, 2], lambda a, b: a * 10 + b)["value"] == 12
    out = reapply([], [[{"type": "human", "content": "hi", "id": "1"}], [{"type": "ai", "content": "yo", "id": "1"}]],
                  "add_messages")
    assert [m.content for m in out["value"]] == ["yo"]  # replaced by id
    rows = what_if([{"channel": "log", "before": ["a"], "writes": [{"value": ["b"]}], "after": ["a", "b"],
                     "reducer": "operator.add"}], "last value")
    assert rows[0]["whatif"] == ["b"] and rows[0]["real"] == ["a", "b"] and not rows[0]["same"]
    assert what_if([{"channel": "n", "before": 1, "writes": [2], "after": 3}], operator.add)[0]["same"]


def test_whatif_in_the_view(eng: Any) -> None:
    lens = Lens(L.diamond(eng), {"log": [], "last": ""})
    while lens.step() and not lens.view.counts.get("b"):
        pass
    rows = lens.what_if("last value", channels=["log"])
    assert rows[0]["error"] and "only one value" in rows[0]["error"]
    assert lens.view.whatif["reducer"] == "last value" and lens.view.whatif["results"][0]["channel"] == "log"


def test_whatif_on_a_channel_empty_before_the_step_gives_what_a_run_with_that_reducer_gives(eng: Any) -> None:
    """A node writes `x: 3` and `tags: ["t"]` into keys that had no value. A run with
    `operator.add` on them starts from the type's empty value (`0`, `[]`) and gives 3 and
    ["t"]; what-if used to add the write to None and show a TypeError instead."""

    class Plain(TypedDict, total=False):
        seed: int
        x: int
        tags: list

    class Added(TypedDict, total=False):
        seed: int
        x: Annotated[int, operator.add]
        tags: Annotated[list, operator.add]

    def build(schema: Any) -> Any:
        g = eng.StateGraph(schema)
        g.add_node("a", lambda s: {"x": 3, "tags": ["t"]})
        g.add_edge(eng.START, "a")
        return g.compile()

    real = build(Added).invoke({"seed": 1})
    lens = Lens(build(Plain), {"seed": 1})
    lens.run()
    step = next(s for s in lens.steps if s["counts"] == {"a": 1})
    rows = {r["channel"]: r for r in lens.what_if("operator.add", step=step["index"])}
    assert (rows["x"]["whatif"], rows["tags"]["whatif"]) == (real["x"], real["tags"]) == (3, ["t"])
    assert rows["x"]["error"] is None and rows["x"]["same"] and rows["tags"]["same"]


def test_whatif_with_the_real_reducer_of_a_messages_channel_is_the_same(eng: Any) -> None:
    """Re-applying `add_messages` to a `messages` channel's recorded writes gives the real
    result: the recorded values are JSON copies, the result is compared as one."""
    from langchain_core.messages import AIMessage, HumanMessage

    g = eng.StateGraph(eng.MessagesState)
    g.add_node("a", lambda s: {"messages": [AIMessage("hi", id="m2")]})
    g.add_edge(eng.START, "a")
    lens = Lens(g.compile(), {"messages": [HumanMessage("q", id="m1")]})
    lens.run()
    step = next(s for s in lens.steps if s["counts"] == {"a": 1})
    row = lens.what_if("add_messages", step=step["index"], channels=["messages"])[0]
    assert row["error"] is None and row["same"]
    assert [m.content for m in row["whatif"]] == ["q", "hi"]


def test_whatif_on_a_set_key_rebuilds_sets_and_refuses_a_value_cut_for_display() -> None:
    """Records are JSON copies: a set is a list there (what-if rebuilds it from the key's
    type, as the run's reducer sees it), and a list past 100 items is cut (what-if says it
    cannot re-apply to a cut value, rather than give a wrong result)."""

    class Tags(TypedDict):
        tags: Annotated[set, operator.or_]
        log: Annotated[list, operator.add]

    g = __import__("lgnb.graph", fromlist=["StateGraph"])
    b = g.StateGraph(Tags)
    b.add_node("a", lambda s: {"tags": {"b"}, "log": ["x"]})
    b.add_edge(g.START, "a")
    lens = Lens(b.compile(), {"tags": {"a"}, "log": list(range(150))})
    lens.run()
    step = next(s for s in lens.steps if s["counts"] == {"a": 1})
    rows = {r["channel"]: r for r in lens.what_if(operator.or_, step=step["index"], channels=["tags"])}
    assert rows["tags"]["whatif"] == {"a", "b"} and rows["tags"]["same"]
    log = lens.what_if("operator.add", step=step["index"], channels=["log"])[0]
    assert "cut for display" in log["error"] and not log["same"]


def test_interrupt_answered_in_the_lens(eng: Any) -> None:
    lens = Lens(L.asking(eng), {"value": ""})
    lens.run()
    assert lens.status == "interrupted" and len(lens.view.forms) == 1
    assert lens.view.forms[0]["node"] == "ask"
    lens._resume_from_view({"id": 1, "interrupt_id": lens.view.forms[0]["id"], "value": "yes"})
    lens.run()
    assert lens.status == "done" and lens.result == {"value": "yes"} and lens.view.forms == []


def _page_sends(lens: Lens, message: dict[str, Any]) -> list[dict[str, Any]]:
    """What the lens's approval form sends on a click, through the view's dispatcher;
    returns the kernel's resume-result replies once the lens's worker handled it."""
    replies: list[dict[str, Any]] = []
    send = lens.view.send
    lens.view.send = lambda msg, buffers=None: (  # type: ignore[method-assign]
        replies.append(msg) if msg.get("kind") == "resume-result" else send(msg, buffers)
    )
    try:
        lens.view._dispatch(lens.view, message, [])
        lens._request(lambda: None).result(10)
    finally:
        del lens.view.send
    return replies


def test_a_form_answer_from_the_page_resumes_the_lens(eng: Any) -> None:
    """The lens shows the run view's forms, so the page sends what they send: an `answer`
    with picks, computed and validated in the kernel."""
    lens = Lens(L.asking(eng), {"value": ""})
    lens.run()
    (form,) = lens.view.forms
    assert form["kind"] == "question"
    picks = [{"part": 0, "choice": "send", "inputs": {"answer": "yes please"}}]
    (reply,) = _page_sends(lens, {"kind": "answer", "id": 7, "interrupt_id": form["id"], "picks": picks})
    assert reply["ok"] and reply["id"] == 7 and reply["interrupt_id"] == form["id"], reply
    lens.run()
    assert lens.status == "done" and lens.result == {"value": "yes please"} and lens.view.forms == []


def test_an_answer_to_a_question_the_lens_no_longer_asks_is_refused_and_sends_nothing(eng: Any) -> None:
    lens = Lens(L.asking(eng), {"value": ""})
    lens.run()
    picks = [{"part": 0, "choice": "send", "inputs": {"answer": "x"}}]
    (reply,) = _page_sends(lens, {"kind": "answer", "id": 1, "interrupt_id": "not-an-id", "picks": picks})
    assert not reply["ok"] and "not pending" in reply["error"]
    assert lens.status == "interrupted" and len(lens.view.forms) == 1


def test_an_answer_the_response_schema_refuses_leaves_the_lens_asking_and_a_good_one_goes_on(eng: Any) -> None:
    """`lens.resume(bad)` where `interrupt(..., response_schema=Review)` refuses the value:
    the engine saves nothing, so the lens still asks (its form back, the reason on it, no
    run error shown) and `resume` raises why; a good answer then runs the node. Before, the
    lens stayed in "error" and refused every later answer while the thread still asked."""
    import pytest
    from pydantic import BaseModel, ValidationError

    class Review(BaseModel):
        approved: bool

    def ask(state: L.Plain) -> dict[str, Any]:
        return {"value": repr(eng.interrupt({"question": "ok?"}, response_schema=Review))}

    g = eng.StateGraph(L.Plain)
    g.add_node("ask", ask)
    g.add_edge(eng.START, "ask")
    lens = Lens(g.compile(checkpointer=eng.InMemorySaver()), {"value": ""})
    lens.run()
    assert lens.status == "interrupted"
    with pytest.raises(ValidationError):
        lens.resume({"approved": "maybe"})
    assert lens.status == "interrupted" and len(lens.view.forms) == 1 and lens.view.error == {}
    assert lens.view.status == "interrupted"
    assert lens.view.form_error.startswith("Could not resume: ValidationError")
    # the trail says the step refused the answer; the run did not fail
    assert [s["status"] for s in lens.view.summary][-1] == "refused"
    lens.resume({"approved": True})
    lens.run()
    assert lens.status == "done" and lens.result == {"value": "Review(approved=True)"}
    assert lens.view.form_error == "" and lens.view.forms == []
    statuses = [(s["step"], s["status"]) for s in lens.view.summary]
    assert "error" not in dict(statuses).values() and (statuses[-2][1], statuses[-1][1]) == ("refused", "done")
    assert statuses[-2][0] == statuses[-1][0]  # the good answer ran that step number again


def test_a_breakpoint_is_stepped_past_from_the_page(eng: Any) -> None:
    """`interrupt_before` asks nothing: the lens says so, shows no form, and the page's
    Step (then Run) continues the run from the breakpoint, on either engine."""
    graph = L.diamond(eng, checkpointer=eng.InMemorySaver())
    lens = Lens(graph, {"log": [], "last": ""}, interrupt_before=["d"])
    lens.run()
    assert lens.status == "interrupted" and lens.view.forms == []
    assert "breakpoint" in lens.view.notice and "Step" in lens.view.notice
    assert lens.result["log"] == ["a", "b", "c"]  # d has not run
    lens.view._dispatch(lens.view, {"kind": "step"}, [])
    lens._request(lambda: None).result(30)
    assert lens.status in ("paused", "done") and "breakpoint" not in lens.view.notice
    lens.view._dispatch(lens.view, {"kind": "run"}, [])
    lens._request(lambda: None).result(30)
    assert lens.status == "done" and lens.result["log"] == ["a", "b", "c", "d"]


def test_run_stops_again_at_a_breakpoint_it_meets_later(eng: Any) -> None:
    """Run from a breakpoint goes on to the next one, not past every breakpoint."""
    graph = L.diamond(eng, checkpointer=eng.InMemorySaver())
    lens = Lens(graph, {"log": [], "last": ""}, interrupt_before=["b", "d"])
    lens.run()
    assert lens.status == "interrupted" and lens.result["log"] == ["a"]
    lens.run()
    assert lens.status == "interrupted" and lens.result["log"] == ["a", "b", "c"]
    lens.run()
    assert lens.status == "done" and lens.result["log"] == ["a", "b", "c", "d"]


def test_clicks_do_not_block(lg: Any) -> None:
    lens = Lens(L.diamond(lg), {"log": [], "last": ""})
    lens.view._msg_step({})  # queued on the lens's worker; returns at once
    lens._request(lambda: None).result(10)
    assert lens.view.current.get("index") == 0


def _subgraph(eng: Any) -> Any:
    class S(TypedDict):
        log: Annotated[list, operator.add]

    sub = eng.StateGraph(S)
    sub.add_node("inner", lambda state: {"log": ["inner"]})
    sub.add_node("inner2", lambda state: {"log": ["inner2"]})
    sub.add_edge(eng.START, "inner")
    sub.add_edge("inner", "inner2")
    g = eng.StateGraph(S)
    g.add_node("outer", sub.compile())
    g.add_node("after", lambda state: {"log": ["after"]})
    g.add_edge(eng.START, "outer")
    g.add_edge("outer", "after")
    return g.compile()


def test_subgraph_records_nested_under_their_step(eng: Any) -> None:
    lens = Lens(_subgraph(eng), {"log": []})
    lens.run()
    assert lens.status == "done" and lens.result == {"log": ["inner", "inner2", "after"]}
    outer = next(s for s in lens.steps if "outer" in s["counts"])
    if eng.name != "lgnb":  # LangGraph streams no records of its own: nothing to nest
        assert outer["subgraphs"] == [] and lens.subgraph_trace == []
        return
    [sub] = outer["subgraphs"]
    assert sub["name"] == "outer" and sub["ns"].startswith("outer:")
    plans = [r for r in sub["records"] if r["kind"] == "plan" and r["tasks"]]
    assert [[t["node"] for t in r["tasks"]] for r in plans] == [["__start__"], ["inner"], ["inner2"]]
    assert {r["ns"] for r in sub["records"]} == {sub["ns"]}, sub["records"]
    assert f"step 1 [{sub['ns']}] · plan: 1 task" in sub["text"]
    assert lens.subgraph_trace == sub["records"]
    assert all(not s["subgraphs"] for s in lens.steps if s["index"] != outer["index"])
    text = lens.text()
    assert "step 1: outer | changed: log" in text
    assert "  └ outer · step 1: inner | log=['inner']" in text
    assert "  └ outer · step 2: inner2 | log=['inner', 'inner2']" in text
    assert lens.view.current["subgraphs"] == [] and any(  # shown with the step it ran in
        s["subgraphs"] for s in lens.steps)


def _async_diamond(eng: Any, *, checkpointer: Any = None) -> Any:
    def node(name: str) -> Any:
        async def run(state: L.Diamond) -> dict[str, Any]:
            await asyncio.sleep(0.01)
            return {"log": [name]}
        return run

    g = eng.StateGraph(L.Diamond)
    for name in "abcd":
        g.add_node(name, node(name))
    g.add_edge(eng.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge(["b", "c"], "d")
    return g.compile(checkpointer=checkpointer)


def test_async_graph_stepped_through_astream(eng: Any) -> None:
    lens = Lens(_async_diamond(eng), {"log": []}, use_async=True)
    counts = []
    while (step := lens.step()) is not None:
        counts.append(step["counts"])
    assert lens.status == "done" and lens.result["log"] == ["a", "b", "c", "d"]
    assert [c for c in counts if c and "__start__" not in c] == [{"a": 1}, {"b": 1, "c": 1}, {"d": 1}]
    assert "step 2: b, c | changed: log | log=['a', 'b', 'c']" in lens.text() or eng.name != "lgnb"
    lens.reset()  # a fresh astream; the old one closed
    lens.run()
    assert lens.status == "done" and lens.result["log"] == ["a", "b", "c", "d"]


def test_async_graph_interrupt_and_resume(eng: Any) -> None:
    types = importlib.import_module(f"{eng.name}.types")

    class P(TypedDict):
        value: str

    async def ask(state: P) -> dict[str, Any]:
        return {"value": types.interrupt("go on?")}

    g = eng.StateGraph(P)
    g.add_node("ask", ask)
    g.add_edge(eng.START, "ask")
    saver = importlib.import_module(f"{eng.name}.checkpoint.memory").InMemorySaver()
    lens = Lens(g.compile(checkpointer=saver), {"value": ""}, use_async=True)
    lens.run()
    assert lens.status == "interrupted" and lens.interrupts[0]["value"] == "go on?"
    lens.resume("yes")
    lens.run()
    assert lens.status == "done" and lens.result == {"value": "yes"}


def test_text_shows_send_count(eng: Any) -> None:
    lens = Lens(L.fan_out(eng, _send(eng)), {"items": [1, 2, 3], "done": []})
    lens.run()
    assert "work ×3" in lens.text()


def test_what_if_forgives_only_the_fresh_ids_of_messages() -> None:
    """A reducer that stamps an `id` on plain event dicts changed the value: what-if with
    `operator.add` is different. Only a message's id a reducer gave it is ignored."""
    from lgnb.whatif import what_if

    events = {"channel": "events", "before": [], "writes": [[{"type": "click", "x": 1}]],
              "after": [{"type": "click", "x": 1, "id": "ev-1"}]}
    (row,) = what_if([events], "operator.add")
    assert row["same"] is False
    reply = {"type": "ai", "content": "hi"}
    messages = {"channel": "messages", "before": [], "writes": [[reply]],
                "after": [{**reply, "id": "run-given"}]}
    (same,) = what_if([messages], "operator.add")
    assert same["same"] is False  # operator.add gives no id: a real difference

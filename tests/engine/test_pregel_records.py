"""The lgnb-only `"pregel"` stream mode: one record per phase per super-step, exact."""

from __future__ import annotations

import asyncio
import json
import operator
from typing import Annotated, TypedDict

import pytest

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.errors import InvalidUpdateError
from lgnb.graph import END, START, StateGraph
from lgnb.graph.message import add_messages
from lgnb.pregel.records import format_record, to_jsonable
from lgnb.types import Command, Send, interrupt


class S(TypedDict):
    log: Annotated[list, operator.add]
    y: int


def _w(name):
    return lambda s: {"log": [name]}


def _records(app, inp, config=None, **kw):
    out = list(app.stream(inp, config, stream_mode="pregel", **kw))
    for r in out:
        json.dumps(r)  # plain data
        assert format_record(r)  # printable
    return out


def _phases(records, ns=""):
    """[(step, kind, summary)] — plan: node names; execute: node names; update: the
    state channels written; checkpoint: source."""
    out = []
    for r in records:
        if r["ns"] != ns:
            continue
        if r["kind"] in ("plan", "execute"):
            out.append((r["step"], r["kind"], [t["node"] for t in r["tasks"]]))
        elif r["kind"] == "update":
            out.append((r["step"], "update", [c["channel"] for c in r["channels"] if not c["internal"]]))
        else:
            out.append((r["step"], "checkpoint", r["source"]))
    return out


def _diamond():
    g = StateGraph(S)
    for n in "abcd":
        g.add_node(n, _w(n))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge(["b", "c"], "d")
    g.add_edge("d", END)
    return g


def test_a_diamond_records_plan_execute_update_per_step_and_the_checkpoints():
    app = _diamond().compile(checkpointer=InMemorySaver())
    recs = _records(app, {"log": [], "y": 0}, {"configurable": {"thread_id": "t"}})
    assert _phases(recs) == [
        (-1, "update", []),  # the input lands in `__start__`
        (-1, "checkpoint", "input"),
        (0, "plan", ["__start__"]),
        (0, "execute", ["__start__"]),
        (0, "update", ["log", "y"]),
        (0, "checkpoint", "loop"),
        (1, "plan", ["a"]),
        (1, "execute", ["a"]),
        (1, "update", ["log"]),
        (1, "checkpoint", "loop"),
        (2, "plan", ["b", "c"]),
        (2, "execute", ["b", "c"]),
        (2, "update", ["log"]),
        (2, "checkpoint", "loop"),
        (3, "plan", ["d"]),
        (3, "execute", ["d"]),
        (3, "update", ["log"]),
        (3, "checkpoint", "loop"),
    ]
    plan2 = next(r for r in recs if r["kind"] == "plan" and r["step"] == 2)
    assert [[tr["channel"] for tr in t["triggers"]] for t in plan2["tasks"]] == [["branch:to:b"], ["branch:to:c"]]
    assert all(t["send"] is None and t["path"] == ["__pregel_pull", t["node"]] for t in plan2["tasks"])
    upd1 = next(r for r in recs if r["kind"] == "update" and r["step"] == 1)
    assert plan2["tasks"][0]["triggers"][0]["version"] == next(
        c["version"] for c in upd1["channels"] if c["channel"] == "branch:to:b"
    )
    exe2 = next(r for r in recs if r["kind"] == "execute" and r["step"] == 2)
    assert [t["writes"] for t in exe2["tasks"]] == [
        [["log", ["b"]], ["join:b+c:d", "b"]],
        [["log", ["c"]], ["join:b+c:d", "c"]],
    ]
    assert all(t["error"] is None and t["duration_ms"] >= 0 for t in exe2["tasks"])
    upd2 = next(r for r in recs if r["kind"] == "update" and r["step"] == 2)
    log = next(c for c in upd2["channels"] if c["channel"] == "log")
    assert log["reducer"] == "operator.add"
    assert log["before"] == ["a"] and log["after"] == ["a", "b", "c"]
    assert [(w["node"], w["value"]) for w in log["writes"]] == [("b", ["b"]), ("c", ["c"])]
    assert upd2["error"] is None
    join = next(c for c in upd2["channels"] if c["channel"] == "join:b+c:d")
    assert join["internal"] and join["reducer"] == "NamedBarrierValue"
    plan3 = next(r for r in recs if r["kind"] == "plan" and r["step"] == 3)
    assert [tr["channel"] for tr in plan3["tasks"][0]["triggers"]] == ["join:b+c:d"]
    # the checkpoint records are the saved checkpoints
    history = {s.config["configurable"]["checkpoint_id"]: s.metadata for s in app.get_state_history({"configurable": {"thread_id": "t"}})}
    for r in recs:
        if r["kind"] == "checkpoint":
            assert history[r["id"]]["step"] == r["step"] and history[r["id"]]["source"] == r["source"]


def test_uneven_paths_plan_a_node_twice_once_per_triggering_step():
    g = StateGraph(S)
    for n in ("a", "b", "b2", "c"):
        g.add_node(n, _w(n))
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge("a", "c")
    g.add_edge("b", "b2")
    g.add_edge("b2", "c")
    recs = _records(g.compile(), {"log": [], "y": 0})
    plans = [(s, nodes) for s, k, nodes in _phases(recs) if k == "plan"]
    assert plans == [(0, ["__start__"]), (1, ["a", "b"]), (2, ["b2", "c"]), (3, ["c"])]
    c_plans = [t for r in recs if r["kind"] == "plan" for t in r["tasks"] if t["node"] == "c"]
    assert [[tr["channel"] for tr in t["triggers"]] for t in c_plans] == [["branch:to:c"], ["branch:to:c"]]
    assert c_plans[0]["triggers"][0]["version"] < c_plans[1]["triggers"][0]["version"]
    last = [r for r in recs if r["kind"] == "update"][-1]
    assert next(c for c in last["channels"] if c["channel"] == "log")["after"] == ["a", "b", "b2", "c", "c"]


def test_a_send_fan_out_of_three_plans_three_tasks_with_their_arguments():
    g = StateGraph(S)
    g.add_node("fan", lambda s: {"y": 1})
    g.add_node("w", lambda s: {"log": [s["y"] * 10]})
    g.add_edge(START, "fan")
    g.add_conditional_edges("fan", lambda s: [Send("w", {"y": i}) for i in range(3)])
    recs = _records(g.compile(), {"log": [], "y": 0})
    plan = next(r for r in recs if r["kind"] == "plan" and r["step"] == 2)
    assert [(t["node"], t["send"], t["triggers"], t["path"]) for t in plan["tasks"]] == [
        ("w", {"node": "w", "arg": {"y": i}}, [], ["__pregel_push", i, False]) for i in range(3)
    ]
    exe = next(r for r in recs if r["kind"] == "execute" and r["step"] == 2)
    assert [t["writes"] for t in exe["tasks"]] == [[["log", [0]]], [["log", [10]]], [["log", [20]]]]
    assert [t["id"] for t in exe["tasks"]] == [t["id"] for t in plan["tasks"]]
    exe1 = next(r for r in recs if r["kind"] == "execute" and r["step"] == 1)
    assert exe1["tasks"][0]["writes"][1:] == [
        ["__pregel_tasks", {"send": "w", "arg": {"y": i}}] for i in range(3)
    ]
    upd = next(r for r in recs if r["kind"] == "update" and r["step"] == 2)
    log = next(c for c in upd["channels"] if c["channel"] == "log")
    assert [w["task_id"] for w in log["writes"]] == [t["id"] for t in plan["tasks"]]
    assert log["after"] == [0, 10, 20]


def test_a_conflicting_write_gives_an_update_record_with_the_error_then_raises():
    g = StateGraph(S)
    g.add_node("a", lambda s: {"y": 1})
    g.add_node("b", lambda s: {"y": 2})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    recs = []
    with pytest.raises(InvalidUpdateError):
        for r in g.compile().stream({"log": [], "y": 0}, stream_mode="pregel"):
            recs.append(r)
    last = recs[-1]
    assert last["kind"] == "update" and last["step"] == 1 and last["channels"] == []
    plan = next(r for r in recs if r["kind"] == "plan" and r["step"] == 1)
    ids = {t["node"]: t["id"] for t in plan["tasks"]}
    err = last["error"]
    assert err["type"] == "InvalidUpdateError" and err["channel"] == "y"
    assert "At key 'y'" in err["message"]
    assert err["writes"] == [
        {"task_id": ids["a"], "node": "a", "value": 1},
        {"task_id": ids["b"], "node": "b", "value": 2},
    ]
    assert "InvalidUpdateError at y" in format_record(last)


def test_a_conflicting_write_error_record_also_reaches_astream():
    g = StateGraph(S)
    g.add_node("a", lambda s: {"y": 1})
    g.add_node("b", lambda s: {"y": 2})
    g.add_edge(START, "a")
    g.add_edge(START, "b")

    async def main():
        recs = []
        with pytest.raises(InvalidUpdateError):
            async for r in g.compile().astream({"log": [], "y": 0}, stream_mode="pregel"):
                recs.append(r)
        return recs

    assert asyncio.run(main())[-1]["error"]["channel"] == "y"


def test_a_deferred_node_is_planned_only_when_nothing_else_is_left():
    g = StateGraph(S)
    g.add_node("a", _w("a"))
    g.add_node("b", _w("b"))
    g.add_node("c", _w("c"))
    g.add_node("z", _w("z"), defer=True)
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge("b", "c")
    g.add_edge("a", "z")
    g.add_edge("c", "z")
    recs = _records(g.compile(), {"log": [], "y": 0})
    plans = [(s, nodes) for s, k, nodes in _phases(recs) if k == "plan"]
    assert plans == [(0, ["__start__"]), (1, ["a", "b"]), (2, ["c"]), (3, ["z"])]
    z = next(r for r in recs if r["kind"] == "plan" and r["step"] == 3)["tasks"][0]
    assert [tr["channel"] for tr in z["triggers"]] == ["branch:to:z"]


def test_a_subgraph_records_under_its_namespace_with_subgraphs_true_v1_and_v2():
    sub = StateGraph(S)
    sub.add_node("inner", _w("inner"))
    sub.add_edge(START, "inner")
    g = StateGraph(S)
    g.add_node("outer", _w("outer"))
    g.add_node("sub", sub.compile())
    g.add_edge(START, "outer")
    g.add_edge("outer", "sub")
    app = g.compile()
    chunks = list(app.stream({"log": [], "y": 0}, stream_mode=["pregel", "updates"], subgraphs=True))
    recs = [(ns, p) for ns, mode, p in chunks if mode == "pregel"]
    sub_ns = {ns for ns, _ in recs if ns}
    assert len(sub_ns) == 1
    (ns,) = sub_ns
    assert ns[0].startswith("sub:")
    inner = [p for n, p in recs if n == ns]
    assert all(p["ns"] == ns[0] for p in inner)
    assert _phases(inner, ns[0]) == [
        (-1, "update", []),
        (0, "plan", ["__start__"]),
        (0, "execute", ["__start__"]),
        (0, "update", ["log", "y"]),
        (1, "plan", ["inner"]),
        (1, "execute", ["inner"]),
        (1, "update", ["log"]),
    ]
    outer = [p for n, p in recs if n == ()]
    assert [nodes for _, k, nodes in _phases(outer) if k == "plan"] == [["__start__"], ["outer"], ["sub"]]
    assert any(mode == "updates" for _, mode, _ in chunks)
    # without subgraphs=True only the root graph's records; v2 parts carry them as data
    v2 = list(app.stream({"log": [], "y": 0}, stream_mode="pregel", version="v2"))
    assert {p["type"] for p in v2} == {"pregel"} and {p["ns"] for p in v2} == {()}
    assert [p["data"] for p in v2] == [
        {**p["data"]} for p in v2
    ] and [p["data"]["kind"] for p in v2][:3] == ["update", "plan", "execute"]


def test_an_interrupt_and_its_resume_replan_the_step_and_restore_the_finished_task():
    def ask(s):
        return {"y": interrupt("how many?")}

    g = StateGraph(S)
    g.add_node("p", _w("p"))
    g.add_node("ask", ask)
    g.add_edge(START, "p")
    g.add_edge(START, "ask")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "i"}}
    first = _records(app, {"log": [], "y": 0}, cfg)
    assert _phases(first)[-2:] == [(1, "plan", ["ask", "p"]), (1, "execute", ["ask", "p"])]
    exe = first[-1]
    assert exe["tasks"][0]["interrupts"] == ["how many?"] and exe["tasks"][0]["writes"] == []
    assert exe["tasks"][1]["writes"] == [["log", ["p"]]]
    second = _records(app, Command(resume=5), cfg)
    assert _phases(second) == [
        (1, "plan", ["ask", "p"]),
        (1, "execute", ["ask", "p"]),
        (1, "update", ["log", "y"]),
        (1, "checkpoint", "loop"),
    ]
    ask_t, p_t = second[1]["tasks"]
    assert p_t.get("restored") is True and p_t["duration_ms"] is None
    assert ["y", 5] in ask_t["writes"] and "restored" not in ask_t
    y = next(c for c in second[2]["channels"] if c["channel"] == "y")
    assert (y["reducer"], y["before"], y["after"]) == ("LastValue", 0, 5)
    steps = sorted(s.metadata["step"] for s in app.get_state_history(cfg))
    assert steps == [-1, 0, 1]
    assert second[-1]["id"] == app.get_state(cfg).config["configurable"]["checkpoint_id"]


def keep_max(a, b):
    return max(a, b)


class M(TypedDict):
    messages: Annotated[list, add_messages]
    top: Annotated[int, keep_max]


def test_add_messages_and_a_user_reducer_are_named():
    g = StateGraph(M)
    g.add_node("n", lambda s: {"messages": [("ai", "hi")], "top": 3})
    g.add_edge(START, "n")
    recs = _records(g.compile(), {"messages": [], "top": 1})
    upd = next(r for r in recs if r["kind"] == "update" and r["step"] == 1)
    names = {c["channel"]: c["reducer"] for c in upd["channels"]}
    assert names["messages"] == "add_messages"
    assert names["top"] == "keep_max"
    msg = next(c for c in upd["channels"] if c["channel"] == "messages")["after"][0]
    assert msg["type"] == "ai" and msg["content"] == "hi"


def test_no_record_work_happens_without_the_mode(monkeypatch):
    from lgnb.pregel import _record

    calls = []
    monkeypatch.setattr(_record.Recorder, "__init__", lambda self, loop: calls.append(loop))
    app = _diamond().compile(checkpointer=InMemorySaver())
    list(app.stream({"log": [], "y": 0}, {"configurable": {"thread_id": "n"}}, stream_mode=["updates", "values", "tasks", "checkpoints", "debug"], subgraphs=True))
    app.invoke({"log": [], "y": 0}, {"configurable": {"thread_id": "n2"}})
    assert calls == []


def test_the_mode_is_listed_in_the_unknown_mode_error():
    with pytest.raises(ValueError, match="'pregel'"):
        list(_diamond().compile().stream({"log": [], "y": 0}, stream_mode="nope"))


def test_to_jsonable_copies_cuts_and_falls_back_to_repr():
    class Odd:
        def __repr__(self):
            return "<odd>"

    value = {"s": "x" * 10, "l": list(range(9)), 3: Odd(), "t": (1, 2), "f": float("nan"), "x": 1}
    out = to_jsonable(value, max_chars=5, max_items=5)
    assert out == {
        "s": "xxxxx…[+5 chars]",
        "l": [0, 1, 2, 3, 4, "…[+4 items]"],
        "3": "<odd>",
        "t": [1, 2],
        "f": "nan",
        "…": "…[+1 items]",
    }
    json.dumps(out)
    inner = [1]
    copy = to_jsonable({"k": inner})
    inner.append(2)
    assert copy == {"k": [1]}

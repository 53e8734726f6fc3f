"""The lens lights the edges whose messages triggered a step's tasks: from the nodes that
wrote each trigger channel, not every drawn edge out of the previous step's nodes (which
showed a conditional edge that routed elsewhere as taken, and the wrong sender of a
join or a deferred node)."""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any

from typing_extensions import TypedDict

from widget_graphs import _engine

from lgnb.widgets.lens_edges import drawn_edges, triggering_edges
from lgnb.widgets.lens_view import Lens


class S(TypedDict):
    log: Annotated[list, operator.add]


def _node(name: str) -> Any:
    def run(state: S) -> dict[str, Any]:
        return {"log": [name]}
    return run


def _lit_per_step(graph: Any, config: Any = None) -> dict[tuple[str, ...], list[list[str]]]:
    """The lit edges of each step, by the nodes the step ran."""
    lens = Lens(graph, {"log": []}, config)
    lit = {}
    while (step := lens.step()) is not None:
        if step.get("counts"):
            lit[tuple(step["counts"])] = list(lens.view.taken)
        if lens.status == "done":
            break
    assert lens.status == "done"
    return lit


def test_a_conditional_edge_that_routed_to_end_is_not_lit(eng: Any) -> None:
    g = eng.StateGraph(S)
    for n in "rbcz":
        g.add_node(n, _node(n))
    g.add_edge(eng.START, "r")
    g.add_conditional_edges("r", lambda s: ["b", "c"], ["b", "c"])
    g.add_conditional_edges("c", lambda s: eng.END, ["z", eng.END])
    g.add_edge("b", "z")
    lit = _lit_per_step(g.compile())
    assert lit[("b", "c")] == [["r", "b"], ["r", "c"]]
    if eng.name == "lgnb":  # (LangGraph's public stream modes do not say who wrote `branch:to:z`)
        assert lit[("z",)] == [["b", "z"]]


def test_a_deferred_node_is_lit_from_the_node_whose_edge_leads_to_it() -> None:
    """a → b → d (deferred), a → c → e: d runs last, in step 4, triggered by what `b` wrote
    in step 2, not by `e` (LangGraph's drawing adds an edge e → d)."""
    eng = _engine("lgnb")
    g = eng.StateGraph(S)
    for n in "abce":
        g.add_node(n, _node(n))
    g.add_node("d", _node("d"), defer=True)
    g.add_edge(eng.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge("c", "e")
    g.add_edge("b", "d")
    lit = _lit_per_step(g.compile())
    assert lit[("d",)][0] == ["b", "d"] and ["e", "d"] not in lit[("d",)]


def test_a_waiting_edge_is_lit_from_every_source_though_they_wrote_in_different_steps(eng: Any) -> None:
    """The pregel lesson's uneven branches: `d` waits on `b` (step 2) and `e` (step 3)."""
    g = eng.StateGraph(S)
    for n in "abced":
        g.add_node(n, _node(n))
    g.add_edge(eng.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge("c", "e")
    g.add_edge(["b", "e"], "d")
    lit = _lit_per_step(g.compile())
    assert sorted(lit[("d",)][:2]) == [["b", "d"], ["e", "d"]]


def test_edges_into_and_out_of_a_subgraph_drawn_expanded_are_lit() -> None:
    eng = _engine("lgnb")
    sub = eng.StateGraph(S)
    sub.add_node("s1", _node("s1"))
    sub.add_node("s2", _node("s2"))
    sub.add_edge(eng.START, "s1")
    sub.add_edge("s1", "s2")
    g = eng.StateGraph(S)
    g.add_node("pre", _node("pre"))
    g.add_node("sub", sub.compile())
    g.add_node("post", _node("post"))
    g.add_edge(eng.START, "pre")
    g.add_edge("pre", "sub")
    g.add_edge("sub", "post")
    lit = _lit_per_step(g.compile())
    assert lit[("sub",)] == [["pre", "sub:s1"]]
    assert lit[("post",)][0] == ["sub:s2", "post"]


def test_drawn_edges_map_a_subgraph_to_its_inner_nodes_but_not_its_inner_edges() -> None:
    edges = {("pre", "sub:s1"), ("sub:s1", "sub:s2"), ("sub:s2", "post"), ("sub:s2", "sub:s1")}
    assert drawn_edges("pre", "sub", edges) == [("pre", "sub:s1")]
    assert drawn_edges("sub", "post", edges) == [("sub:s2", "post")]
    assert drawn_edges("sub", "sub", edges) == []
    assert drawn_edges("pre", "post", edges) == []


def test_reduced_steps_read_a_joins_sources_from_its_channel_name() -> None:
    """A graph read through LangGraph's public modes: no hidden writes are known."""
    steps = [
        {"counts": {"b": 1, "c": 1}, "plan": {"tasks": []}, "execute": {"tasks": []}},
        {"counts": {"e": 1}, "plan": {"tasks": []}, "execute": {"tasks": []}},
        {"counts": {"d": 1}, "plan": {"tasks": [{"node": "d", "triggers": [{"channel": "join:b+e:d"}]}]}},
    ]
    edges = {("b", "d"), ("e", "d"), ("c", "e")}
    assert triggering_edges(steps, 2, edges) == [["b", "d"], ["e", "d"]]


def test_each_send_is_lit_from_the_node_that_sent_it() -> None:
    """`p` sends to `w` and `q` to `v`, both through conditional edges that may reach
    either: `p → w` and `q → v` are lit, not every sender to every target."""
    eng = _engine("lgnb")
    g = eng.StateGraph(S)
    for n in "pqwv":
        g.add_node(n, _node(n))
    g.add_edge(eng.START, "p")
    g.add_edge(eng.START, "q")
    g.add_conditional_edges("p", lambda s: [eng.Send("w", {"log": ["pw"]})], ["w", "v"])
    g.add_conditional_edges("q", lambda s: [eng.Send("v", {"log": ["qv"]})], ["w", "v"])
    lit = _lit_per_step(g.compile())
    assert sorted(lit[("w", "v")]) == [["p", "w"], ["q", "v"]]


def test_a_step_run_again_after_an_interrupt_is_lit_from_the_same_writers() -> None:
    """`p, q` run; then `ask` (which asks) and `z` in one step. The step runs again on
    resume, triggered by what `p` and `q` wrote: not by its own first attempt."""
    eng = _engine("lgnb")

    def ask(state: S) -> dict[str, Any]:
        return {"log": [f"ask:{eng.interrupt('ok?')}"]}

    g = eng.StateGraph(S)
    for n in "pqz":
        g.add_node(n, _node(n))
    g.add_node("ask", ask)
    g.add_edge(eng.START, "p")
    g.add_edge(eng.START, "q")
    g.add_edge("p", "ask")
    g.add_edge("q", "z")
    g.add_edge("ask", "z")
    lens = Lens(g.compile(checkpointer=eng.InMemorySaver()), {"log": []})
    lit, resumed = [], False
    while True:
        step = lens.step()
        if step is None and lens.status == "interrupted" and not resumed:
            step, resumed = lens.resume("yes"), True
        if step is None:
            break
        if step.get("counts", {}).get("ask"):
            lit.append(sorted(lens.view.taken))
        if lens.status == "done":
            break
    assert resumed and lit == [[["p", "ask"], ["q", "z"]]] * 2


def test_join_sources_are_found_in_the_channel_name_though_node_names_hold_a_plus() -> None:
    from lgnb.widgets.lens_edges import join_sources

    assert join_sources("join:a+b+x-y:j", "j", ["a+b", "x-y", "c"]) == ["a+b", "x-y"]
    assert join_sources("branch:to:j", "j", ["a"]) == []


# A checkpointed graph LangGraph built: its streams hide the route writes, its saver keeps
# them (the writes of the tasks run from each checkpoint): the same edges as on lgnb.
_THREAD = {"configurable": {"thread_id": "t"}}


def test_with_a_checkpointer_a_langgraph_conditional_edge_that_routed_elsewhere_is_not_lit(eng: Any) -> None:
    """a routes to d only; b → c is a plain edge; c and d run in one step."""
    g = eng.StateGraph(S)
    for n in "abcd":
        g.add_node(n, _node(n))
    g.add_edge(eng.START, "a")
    g.add_edge(eng.START, "b")
    g.add_conditional_edges("a", lambda s: "d", ["c", "d"])
    g.add_edge("b", "c")
    lit = _lit_per_step(g.compile(checkpointer=eng.InMemorySaver()), _THREAD)
    assert lit[("c", "d")][:2] == [["b", "c"], ["a", "d"]]  # (then, the run done, the edges to END)
    assert ["a", "c"] not in lit[("c", "d")]


def test_with_a_checkpointer_a_deferred_node_is_lit_from_every_node_that_routed_to_it(eng: Any) -> None:
    """x → fin (deferred) and x → y1 → y2 → fin: fin runs once, triggered by x and y2."""
    g = eng.StateGraph(S)
    for n in ("x", "y1", "y2"):
        g.add_node(n, _node(n))
    g.add_node("fin", _node("fin"), defer=True)
    g.add_edge(eng.START, "x")
    g.add_edge("x", "y1")
    g.add_edge("y1", "y2")
    g.add_edge("x", "fin")
    g.add_edge("y2", "fin")
    lit = _lit_per_step(g.compile(checkpointer=eng.InMemorySaver()), _THREAD)
    assert sorted(lit[("fin",)][:2]) == [["x", "fin"], ["y2", "fin"]]


def test_with_a_checkpointer_a_join_is_triggered_by_its_join_channel_alone(eng: Any) -> None:
    """`add_edge(["a", "b"], "c")`: LangGraph lists every trigger `c` has; only the join's fired."""
    g = eng.StateGraph(S)
    for n in "abc":
        g.add_node(n, _node(n))
    g.add_edge(eng.START, "a")
    g.add_edge(eng.START, "b")
    g.add_edge(["a", "b"], "c")
    lens = Lens(g.compile(checkpointer=eng.InMemorySaver()), {"log": []}, _THREAD)
    lens.run()
    (c,) = [t for s in lens.steps for t in (s["plan"] or {}).get("tasks") or () if t["node"] == "c"]
    assert [t["channel"] for t in c["triggers"]] == ["join:a+b:c"]


def test_a_sibling_that_finished_in_a_failed_step_is_shown_with_its_writes(eng: Any) -> None:
    """LangGraph raises before it streams `ok`; its saver keeps `ok`'s write (not run again)."""
    def bad(state: S) -> dict[str, Any]:
        raise RuntimeError("bad node")

    def ok(state: S) -> dict[str, Any]:
        time.sleep(0.05)  # still running when `bad` raises
        return {"log": ["ok"]}

    g = eng.StateGraph(S)
    g.add_node("ok", ok)
    g.add_node("bad", bad)
    g.add_edge(eng.START, "ok")
    g.add_edge(eng.START, "bad")
    lens = Lens(g.compile(checkpointer=eng.InMemorySaver()), {"log": []}, _THREAD)
    lens.run()
    ran = {t["node"]: ([w for w in t["writes"] if w[0] == "log"], t["error"])
           for t in lens.steps[-1]["execute"]["tasks"]}
    assert ran == {"ok": ([["log", ["ok"]]], None), "bad": ([], "RuntimeError: bad node")}

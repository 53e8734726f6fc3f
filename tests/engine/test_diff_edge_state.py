"""What a conditional edge receives when lgnb reuses one dict per edge for a wide state
(`lgnb.pregel._view.EdgeView`): the state as its task left it, under the node output's
keys, in LangGraph's key order, isolated from the edge's own changes, and unchanged
later when the edge kept it.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict


# lgnb reuses an edge's input only from `SHARE_FROM` state keys; these scenarios use small
# states, so sharing is switched on for every size to test it
pytestmark = pytest.mark.usefixtures("share_small_states")


def _loop(E, State, node, route):
    """`step` looping on itself while `route` says so (it returns "step" or END)."""
    g = E.StateGraph(State)
    g.add_node("step", node)
    g.add_edge(E.START, "step")
    g.add_conditional_edges("step", route, ["step", E.END])
    return g.compile()


def _recorded_loop(E, State, node, *, until, input):
    """`_loop` with an edge that records what it sees (`list(state.items())`) and loops
    while `n` < `until`: the run's output and the edge's inputs."""
    seen = []

    def route(s):
        seen.append(list(s.items()))
        return "step" if s["n"] < until else E.END

    return _loop(E, State, node, route).invoke(input), seen


def _State():
    return TypedDict("S", {"a": int, "b": int, "c": int, "n": int})


def test_an_edge_sees_each_step_with_the_nodes_writes_in_langgraphs_key_order(differential):
    def scenario(E):
        def node(s):
            return {"c": s["c"] + 10, "n": s["n"] + 1}  # the same keys every step

        return _recorded_loop(E, _State(), node, until=4, input={"a": 1, "b": 2, "c": 3, "n": 0})

    differential(scenario)


def test_output_keys_that_change_between_steps_change_the_edges_key_order(differential):
    def scenario(E):
        def node(s):
            n = s["n"] + 1
            return {"n": n} if n % 2 else {"b": n, "n": n}  # keys alternate

        return _recorded_loop(E, _State(), node, until=5, input={"a": 0, "b": 0, "c": 0, "n": 0})

    differential(scenario)


def test_a_node_returning_nothing_or_a_non_dict_gives_the_edge_the_bare_state(differential):
    def scenario(E):
        seen = []
        State = TypedDict("S", {"a": int, "n": Annotated[int, operator.add]})

        def node(s):
            return None if s["n"] % 2 else E.Command(update={"n": 1})  # nothing, or no dict

        def bump(s):
            return {"n": 1}

        def route(s):
            seen.append(list(s.items()))
            return "step" if s["n"] < 4 else E.END

        g = E.StateGraph(State)
        g.add_node("step", node)
        g.add_node("bump", bump)
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", route, {"step": "bump", E.END: E.END})
        g.add_edge("bump", "step")
        return g.compile().invoke({"a": 1, "n": 0}), seen

    differential(scenario)


def test_an_edge_changing_its_input_changes_neither_the_state_nor_the_next_edge_input(differential):
    mutations = [
        lambda s: s.__setitem__("a", 100),
        lambda s: s.__delitem__("a"),
        lambda s: s.pop("b"),
        lambda s: s.popitem(),
        lambda s: s.clear(),
        lambda s: s.update(a=100, zzz=1),
        lambda s: s.setdefault("zzz", 1),
        lambda s: s.__ior__({"a": 100}),
    ]

    def scenario(E):
        results = []
        for mutate in mutations:
            seen = []

            def route(s, mutate=mutate, seen=seen):
                seen.append(list(s.items()))
                done = s["n"] >= 3
                mutate(s)
                return E.END if done else "step"

            app = _loop(E, _State(), lambda s: {"n": s["n"] + 1}, route)
            results.append((app.invoke({"a": 1, "b": 2, "c": 3, "n": 0}), seen))
        return results

    differential(scenario)


def test_an_edge_that_keeps_its_input_keeps_the_state_of_its_own_step(differential):
    def scenario(E):
        kept = []

        def route(s):
            kept.append(s)  # stored, not copied: later steps must not change it
            return "step" if s["n"] < 4 else E.END

        app = _loop(E, _State(), lambda s: {"a": s["a"] * 2, "n": s["n"] + 1}, route)
        out = app.invoke({"a": 1, "b": 2, "c": 3, "n": 0})
        return out, [list(s.items()) for s in kept]

    differential(scenario)


def test_output_keys_outside_the_state_reach_the_edge_with_the_outputs_values(differential):
    def scenario(E):
        def node(s):
            return {"n": s["n"] + 1, "note": f"step {s['n']}"}  # "note" is no state key

        return _recorded_loop(E, _State(), node, until=3, input={"a": 0, "b": 0, "c": 0, "n": 0})

    differential(scenario)


def test_keys_set_for_the_first_time_take_their_place_in_later_edge_inputs(differential):
    def scenario(E):
        def node(s):
            n = s.get("n", 0) + 1
            update = {"n": n}
            if n == 2:
                update["a"] = 1  # first set here; "a" comes first in the schema
            if n == 3:
                update["b"] = 2
            return update

        return _recorded_loop(E, _State(), node, until=5, input={"c": 0})

    differential(scenario)


def test_a_key_first_set_by_a_command_takes_its_schema_place_in_later_edge_inputs(differential):
    def scenario(E):
        def node(s):
            n = s["n"] + 1
            update = {"n": n}
            if n == 2:
                update["a"] = 1  # first set here: no output keys put it first
            return E.Command(update=update)

        return _recorded_loop(E, _State(), node, until=5, input={"c": 0, "n": 0})

    differential(scenario)


def test_a_key_first_set_under_an_edge_input_schema_takes_its_place_later(differential):
    def scenario(E):
        seen = []
        Narrow = TypedDict("Narrow", {"a": int, "b": int, "n": int})

        def node(s):
            n = s["n"] + 1
            return {"n": n, "b": n} if n == 2 else {"n": n}

        def route(s: Narrow):
            seen.append(list(s.items()))
            return "step" if s["n"] < 5 else E.END

        return _loop(E, _State(), node, route).invoke({"a": 0, "n": 0}), seen

    differential(scenario)


def test_parallel_tasks_each_give_their_edge_their_own_writes(differential):
    def scenario(E):
        seen = []
        State = TypedDict("S", {"a": int, "got": Annotated[list, operator.add], "n": int})

        def route(s):
            seen.append(sorted(s["got"]))
            return E.END

        g = E.StateGraph(State)
        g.add_node("work", lambda s: {"got": [s["a"]]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("work", {"a": i}) for i in range(4)])
        g.add_conditional_edges("work", route, [E.END])
        out = g.compile().invoke({"a": 0, "got": [], "n": 0})
        return sorted(out["got"]), sorted(seen)

    differential(scenario)


def test_a_key_first_set_by_another_node_takes_its_place_in_the_edge_input(differential):
    def scenario(E):
        seen = []

        def route(s):
            seen.append(list(s.items()))
            return "other" if s["n"] < 4 else E.END

        def other(s):
            return {"b": s["n"]} if s["n"] == 2 else None  # "b" first set here

        g = E.StateGraph(_State())
        g.add_node("step", lambda s: {"n": s["n"] + 1})
        g.add_node("other", other)
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", route, ["other", E.END])
        g.add_edge("other", "step")
        return g.compile().invoke({"c": 0, "a": 0, "n": 0}), seen

    differential(scenario)


def test_a_retried_task_leaves_no_write_of_its_failed_attempt_in_the_edge_input(differential):
    def scenario(E):
        seen = []
        attempts = {"node": 0, "check": 0}

        def node(s):
            attempts["node"] += 1
            update = {"n": s["n"] + 1}
            if attempts["node"] == 3:
                update["a"] = 99  # only the attempt that fails writes "a"
            return E.Command(update=update)

        def route(s):
            seen.append(list(s.items()))
            return "step" if s["n"] < 4 else E.END

        def check(s):  # a second edge, after `route`: it fails the third attempt
            attempts["check"] += 1
            if attempts["check"] == 3:
                raise ValueError("flaky edge")
            return E.END

        g = E.StateGraph(_State())
        retry = E.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False, retry_on=ValueError)
        g.add_node("step", node, retry_policy=retry)
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", route, ["step", E.END])
        g.add_conditional_edges("step", check, [E.END])
        return g.compile().invoke({"a": 1, "b": 2, "c": 3, "n": 0}), seen

    differential(scenario)


def test_reducer_and_message_channels_reach_the_edge_merged(differential):
    def scenario(E):
        from langchain_core.messages import AIMessage, HumanMessage

        seen = []
        State = TypedDict("S", {
            "messages": Annotated[list, E.add_messages],
            "log": Annotated[list, operator.add],
            "n": int,
        })

        def node(s):
            n = s["n"] + 1
            return {"messages": [AIMessage(f"turn {n}", id=f"ai-{n}")], "log": [n], "n": n}

        def route(s):
            seen.append(([m.content for m in s["messages"]], list(s["log"]), list(s)))
            return "step" if s["n"] < 3 else E.END

        app = _loop(E, State, node, route)
        out = app.invoke({"messages": [HumanMessage("hi", id="h")], "log": [], "n": 0})
        return [m.content for m in out["messages"]], out["log"], seen

    differential(scenario)


def test_an_edge_with_its_own_input_schema_reads_only_its_keys(differential):
    def scenario(E):
        seen = []
        Narrow = TypedDict("Narrow", {"b": int, "n": int})

        def route(s: Narrow):
            seen.append(list(s.items()))
            return "step" if s["n"] < 3 else E.END

        app = _loop(E, _State(), lambda s: {"b": s["b"] + 1, "n": s["n"] + 1}, route)
        return app.invoke({"a": 0, "b": 0, "c": 0, "n": 0}), seen

    differential(scenario)


def test_edges_of_two_nodes_each_see_their_own_nodes_writes(differential):
    def scenario(E):
        seen = []

        def route_from(name):
            def route(s):
                seen.append((name, list(s.items())))
                return E.END if s["n"] >= 4 else ("b_node" if name == "a" else "a_node")

            return route

        g = E.StateGraph(_State())
        g.add_node("a_node", lambda s: {"a": s["a"] + 1, "n": s["n"] + 1})
        g.add_node("b_node", lambda s: {"b": s["b"] + 1, "n": s["n"] + 1})
        g.add_edge(E.START, "a_node")
        g.add_conditional_edges("a_node", route_from("a"), ["b_node", E.END])
        g.add_conditional_edges("b_node", route_from("b"), ["a_node", E.END])
        return g.compile().invoke({"a": 0, "b": 0, "c": 0, "n": 0}), seen

    differential(scenario)


def test_a_loop_edge_reuses_one_dict_when_no_one_kept_it():
    """The per-step cost does not grow with the state: the edge's previous input was
    not kept, so it is brought up to date (the written keys) instead of built again."""
    from lgnb.graph import END, START, StateGraph

    ids = []
    state = TypedDict("Wide", {**{f"k{i}": int for i in range(2000)}, "n": int})

    def route(s):
        ids.append(id(s))
        assert s["k0"] == s["n"] * 10 and s["k1999"] == 7
        return "step" if s["n"] < 10 else END

    g = StateGraph(state)
    g.add_node("step", lambda s: {"k0": s["k0"] + 10, "n": s["n"] + 1})
    g.add_edge(START, "step")
    g.add_conditional_edges("step", route, ["step", END])
    out = g.compile().invoke({**{f"k{i}": 7 for i in range(2000)}, "k0": 0, "n": 0})
    assert out["n"] == 10 and out["k0"] == 100
    assert len(ids) == 10 and len(set(ids)) == 1

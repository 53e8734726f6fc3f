"""What nodes and `values` chunks receive when lgnb hands out its state cache cheaply:
key order, isolation from mutation, snapshots that later steps do not change.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import pytest
from _builders import _chain
from _diff import collect
from typing_extensions import TypedDict

# lgnb copies a state of fewer than `SHARE_FROM` keys for each node; these scenarios use
# 4-key states, so sharing is switched on for every size to test it
pytestmark = pytest.mark.usefixtures("share_small_states")


def _state():
    return TypedDict("S", {"a": int, "b": int, "c": int, "d": int})


def test_keys_set_late_keep_the_schemas_order_in_node_input_and_values_chunks(differential):
    def scenario(E):
        seen = []

        def first(s):
            seen.append(list(s))
            return {"a": 1}

        def second(s):
            seen.append(list(s))
            return {"c": 3, "b": 2}

        def third(s):
            seen.append(list(s))
            return {"d": 4}

        app = _chain(E, _state(), first, second, third)
        chunks = collect(lambda: app.stream({"d": 0}, stream_mode="values"))
        return [list(c) for c in chunks], seen, list(app.invoke({"c": 0, "a": 0}))

    differential(scenario)


def test_a_node_mutating_its_input_changes_nothing_for_later_nodes_or_chunks(differential):
    def scenario(E):
        seen = []

        def vandal(s):
            s["a"] = 999
            s.pop("b", None)
            s["zzz"] = "junk"
            return {"c": 1}

        def reader(s):
            seen.append(dict(s))
            return None

        app = _chain(E, _state(), vandal, reader)
        chunks = collect(lambda: app.stream({"a": 1, "b": 2}, stream_mode="values"))
        return chunks, seen

    differential(scenario)


def test_values_chunks_kept_by_the_caller_are_not_changed_by_later_steps(differential):
    def scenario(E):
        app = _chain(E, _state(), lambda s: {"a": s["a"] + 1}, lambda s: {"a": s["a"] + 1, "b": 5})
        chunks = collect(lambda: app.stream({"a": 0, "b": 0, "c": 0, "d": 0}, stream_mode="values"))
        for c in chunks[:1]:
            c["a"] = "caller edits its copy"  # must not leak into later chunks
        return chunks

    differential(scenario)


def test_a_node_that_keeps_its_input_keeps_the_state_of_its_own_step(differential):
    def scenario(E):
        kept = []

        def make(i):
            def node(s):
                kept.append(s)  # stored, not copied: later steps must not change it
                return {"a": s["a"] + 1, "b": i}

            return node

        app = _chain(E, _state(), *[make(i) for i in range(4)])
        out = app.invoke({"a": 0, "b": -1, "c": 0, "d": 0})
        return out, [dict(s) for s in kept]

    differential(scenario)


def test_every_way_of_mutating_node_input_stays_local_to_the_node(differential):
    mutations = [
        lambda s: s.__setitem__("a", 100),
        lambda s: s.__delitem__("a"),
        lambda s: s.pop("a"),
        lambda s: s.popitem(),
        lambda s: s.clear(),
        lambda s: s.update(a=100),
        lambda s: s.setdefault("zzz", 1),
        lambda s: s.__ior__({"a": 100}),
    ]

    def scenario(E):
        results = []
        for mutate in mutations:
            seen = []

            def vandal(s, mutate=mutate):
                mutate(s)
                return {"d": 1}

            def reader(s, seen=seen):
                seen.append(dict(s))
                return {"d": 2}

            app = _chain(E, _state(), vandal, reader, reader)
            results.append((app.invoke({"a": 1, "b": 2, "c": 3}), seen))
        return results

    differential(scenario)


def test_tasks_stream_inputs_kept_by_the_caller_stay_as_they_were(differential):
    def scenario(E):
        app = _chain(E, _state(), *[(lambda s, i=i: {"a": s["a"] + 1, "b": i}) for i in range(3)])
        chunks = collect(lambda: app.stream({"a": 0, "b": 0, "c": 0, "d": 0}, stream_mode="tasks"))
        return [c for c in chunks if "input" in c]

    differential(scenario)


def test_consecutive_nodes_share_one_snapshot_when_no_one_kept_it():
    """The per-step cost does not grow with the state: nobody held the previous step's
    input, so it is brought up to date (only the written key) instead of copied."""
    from lgnb.graph import END, START, StateGraph

    ids = []
    state = TypedDict("Wide", {f"k{i}": int for i in range(2000)})

    def make(i):
        def node(s):
            ids.append(id(s))
            assert isinstance(s, dict) and s[f"k{i}"] == i + 1  # the previous node's write
            return {f"k{i + 1}": i + 2}

        return node

    g = StateGraph(state)
    prev = START
    for i in range(10):
        g.add_node(f"n{i}", make(i))
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, END)
    out = g.compile().invoke({f"k{i}": (1 if i == 0 else 0) for i in range(2000)})
    assert [out[f"k{i}"] for i in range(12)] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0]
    assert len(set(ids)) == 1


def test_a_small_state_is_shared_only_when_sharing_is_on(monkeypatch):
    """Below `SHARE_FROM` keys each node gets its own plain dict (cheaper than the reuse
    checks); the fixture's SHARE_FROM=0 is what makes the scenarios above share."""
    from lgnb.graph import END, START, StateGraph
    from lgnb.pregel import _view

    def run():
        kinds = []
        g = StateGraph(TypedDict("Small", {"a": int}))
        for i in range(3):
            g.add_node(f"n{i}", lambda s: kinds.append(type(s)) or {"a": s["a"] + 1})
            g.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
        g.add_edge("n2", END)
        assert g.compile().invoke({"a": 0}) == {"a": 3}
        return kinds

    assert run() == [_view.StateInput] * 3
    monkeypatch.setattr(_view, "SHARE_FROM", 128)
    assert run() == [dict] * 3


def test_node_input_pickles_as_a_plain_dict():
    import pickle

    from lgnb.pregel._view import StateInput

    s = StateInput({"a": 1})
    back = pickle.loads(pickle.dumps(s))
    assert type(back) is dict and back == {"a": 1}

"""What nodes and `values` chunks receive when lgnb hands out its state cache cheaply:
key order, isolation from mutation, snapshots that later steps do not change.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

from typing_extensions import TypedDict

from _diff import collect


def _chain(E, State, *fns):
    g = E.StateGraph(State)
    prev = E.START
    for i, fn in enumerate(fns):
        g.add_node(f"n{i}", fn)
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, E.END)
    return g.compile()


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

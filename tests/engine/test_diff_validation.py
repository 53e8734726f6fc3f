"""Graph-construction and compile-time validation: error class AND message must match.

LangGraph's messages are the contract here (programs and docs match on them); if lgnb
improves a message, switch that one test to ``exc="class"`` and say why.
"""

import operator
from typing import Annotated

from typing_extensions import TypedDict

from _diff import attempt


class S(TypedDict):
    log: Annotated[list, operator.add]
    x: int


def _noop(s):
    return {}


def _builder(E, *nodes):
    g = E.StateGraph(S)
    for n in nodes:
        g.add_node(n, _noop)
    return g


def test_compile_edge_from_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        return attempt(lambda: (g.add_edge("ghost", "a"), g.compile()))

    differential(scenario)


def test_compile_edge_to_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        return attempt(lambda: (g.add_edge("a", "ghost"), g.compile()))

    differential(scenario)


def test_compile_without_entry_point(differential):
    def scenario(E):
        g = _builder(E, "a")
        return attempt(g.compile)

    differential(scenario)


def test_compile_empty_graph(differential):
    def scenario(E):
        return attempt(E.StateGraph(S).compile)

    differential(scenario)


def test_edge_from_end_is_rejected(differential):
    def scenario(E):
        g = _builder(E, "a")
        return attempt(lambda: g.add_edge(E.END, "a"))

    differential(scenario)


def test_edge_to_start_is_rejected(differential):
    def scenario(E):
        g = _builder(E, "a")
        return attempt(lambda: g.add_edge("a", E.START))

    differential(scenario)


def test_join_edge_with_end_in_starts_is_rejected(differential):
    def scenario(E):
        g = _builder(E, "a", "b")
        return attempt(lambda: g.add_edge(["a", E.END], "b"))

    differential(scenario)


def test_join_edge_from_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a", "b")
        g.add_edge(E.START, "a")
        g.add_edge(["a", "ghost"], "b")
        return attempt(g.compile)

    differential(scenario)


def test_add_node_twice(differential):
    def scenario(E):
        g = _builder(E, "a")
        return attempt(lambda: g.add_node("a", _noop))

    differential(scenario)


def test_node_named_start_or_end_is_reserved(differential):
    def scenario(E):
        return [attempt(lambda n=n: _builder(E).add_node(n, _noop)) for n in (E.START, E.END)]

    differential(scenario)


def test_node_names_with_reserved_characters(differential):
    def scenario(E):
        return [attempt(lambda n=n: _builder(E).add_node(n, _noop)) for n in ("a:b", "a|b", "ok-name", "with space")]

    differential(scenario)


def test_node_named_like_a_state_key(differential):
    def scenario(E):
        return attempt(lambda: _builder(E).add_node("x", _noop))

    differential(scenario)


def test_interrupt_before_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        return attempt(lambda: g.compile(interrupt_before=["ghost"]))

    differential(scenario)


def test_interrupt_after_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        return attempt(lambda: g.compile(interrupt_after=["ghost"]))

    differential(scenario)


def test_conditional_path_map_to_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "go", {"go": "ghost"})
        return attempt(g.compile)

    differential(scenario)


def test_conditional_edges_from_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("ghost", lambda s: "a")
        return attempt(g.compile)

    differential(scenario)


def test_set_entry_point_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.set_entry_point("ghost")
        return attempt(g.compile)

    differential(scenario)


def test_set_finish_point_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.set_entry_point("a")
        g.set_finish_point("ghost")
        return attempt(g.compile)

    differential(scenario)


def test_add_node_after_compile_does_not_change_compiled_graph(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        app = g.compile()
        late = attempt(lambda: g.add_node("late", _noop))
        return late, sorted(app.get_graph().nodes)

    differential(scenario)


def test_unreachable_node_compiles(differential):
    def scenario(E):
        g = _builder(E, "a", "island")
        g.add_edge(E.START, "a")
        app = g.compile()
        return app.invoke({"log": [], "x": 0}), sorted(app.get_graph().nodes)

    differential(scenario)


def test_state_graph_without_schema(differential):
    def scenario(E):
        return attempt(lambda: E.StateGraph())

    differential(scenario, exc="class")


def test_add_node_with_non_callable(differential):
    def scenario(E):
        return attempt(lambda: _builder(E).add_node("a", 42))

    differential(scenario, exc="class")


def test_add_node_without_name_and_without_function_name(differential):
    def scenario(E):
        return attempt(lambda: _builder(E).add_node(42))

    differential(scenario, exc="class")


def test_compiled_graph_name_and_builder_attributes(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        app = g.compile(name="my_graph")
        return app.name, sorted(app.nodes), sorted(app.channels) if hasattr(app, "channels") else None

    differential(scenario)

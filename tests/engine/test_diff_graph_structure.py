"""get_graph() / get_graph(xray=...) structure: node ids, metadata, edges (sorted)."""

import operator
from typing import Annotated, Literal

from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def shape(graph):
    """A drawable graph as comparable plain data (order-insensitive)."""
    nodes = sorted((n.id, n.name, repr(sorted((n.metadata or {}).items()))) for n in graph.nodes.values())
    edges = sorted((e.source, e.target, bool(e.conditional), e.data) for e in graph.edges)
    return {"nodes": nodes, "edges": edges, "first": graph.first_node().id if graph.first_node() else None,
            "last": graph.last_node().id if graph.last_node() else None}


def test_get_graph_linear(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", E.END)
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_implicit_end_for_nodes_without_outgoing_edges(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_conditional_edges_with_dict_map_labels(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "x", "y"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "1", {"1": "x", "2": "y", "end": E.END})
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_conditional_edges_with_list_map(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "x", "y"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "x", ["x", "y"])
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_conditional_edges_without_map_point_everywhere(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "x", "y"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "x")
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_conditional_literal_hint(differential):
    def scenario(E):
        def route(s) -> Literal["x", "__end__"]:
            return "x"

        g = E.StateGraph(S)
        for n in ("a", "x"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route)
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_join_edges(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge(["a", "b"], "c")
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_conditional_entry_point(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("x", "y"):
            g.add_node(n, _logger(n))
        g.add_conditional_edges(E.START, lambda s: "x", {"go x": "x", "go y": "y"})
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_command_destinations(differential):
    def scenario(E):
        def r(s) -> E.Command[Literal["x", "y"]]:
            return E.Command(goto="x")

        g = E.StateGraph(S)
        g.add_node("r", r)
        g.add_node("x", _logger("x"))
        g.add_node("y", _logger("y"))
        g.add_edge(E.START, "r")
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_with_subgraph_no_xray(differential):
    def scenario(E):
        return shape(_with_subgraph(E).get_graph())

    differential(scenario)


def test_get_graph_with_subgraph_xray_true(differential):
    def scenario(E):
        return shape(_with_subgraph(E).get_graph(xray=True))

    differential(scenario)


def test_get_graph_with_nested_subgraphs_xray_levels(differential):
    def scenario(E):
        inner = E.StateGraph(S)
        inner.add_node("leaf", _logger("leaf"))
        inner.add_edge(E.START, "leaf")
        mid = E.StateGraph(S)
        mid.add_node("inner", inner.compile())
        mid.add_node("m2", _logger("m2"))
        mid.add_edge(E.START, "inner")
        mid.add_edge("inner", "m2")
        top = E.StateGraph(S)
        top.add_node("mid", mid.compile())
        top.add_edge(E.START, "mid")
        app = top.compile()
        return [shape(app.get_graph(xray=x)) for x in (False, 1, 2, True)]

    differential(scenario)


def _with_subgraph(E):
    sub = E.StateGraph(S)
    sub.add_node("s1", _logger("s1"))
    sub.add_node("s2", _logger("s2"))
    sub.add_edge(E.START, "s1")
    sub.add_conditional_edges("s1", lambda s: "s2", ["s2", E.END])
    g = E.StateGraph(S)
    g.add_node("pre", _logger("pre"))
    g.add_node("sub", sub.compile())
    g.add_edge(E.START, "pre")
    g.add_edge("pre", "sub")
    g.add_edge("sub", E.END)
    return g.compile()


def test_get_graph_defer_and_metadata_nodes(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"), metadata={"kind": "tool"})
        g.add_node("z", _logger("z"), defer=True)
        g.add_edge(E.START, "a")
        g.add_edge("a", "z")
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_send_only_edges(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("w", _logger("w"))
        g.add_conditional_edges(E.START, lambda s: [E.Send("w", s)], ["w"])
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_draw_mermaid_text(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "x", "y"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "x", {"to x": "x", "to y": "y"})
        g.add_edge("x", E.END)
        g.add_edge("y", E.END)
        return g.compile().get_graph().draw_mermaid()

    differential(scenario)


def test_get_graph_draw_mermaid_text_with_xray_subgraph(differential):
    def scenario(E):
        return _with_subgraph(E).get_graph(xray=True).draw_mermaid()

    differential(scenario)


def test_get_graph_node_ids_after_add_sequence(differential):
    def scenario(E):
        def first(s):
            return {"log": ["1"]}

        def second(s):
            return {"log": ["2"]}

        g = E.StateGraph(S)
        g.add_sequence([first, second])
        g.set_entry_point("first")
        return shape(g.compile().get_graph())

    differential(scenario)


def test_get_graph_of_compiled_graph_name(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        app = g.compile(name="named")
        return app.get_name(), shape(app.get_graph())

    differential(scenario)

"""lgnb.draw: DOT text from graph structure (no rendering), and SVG export via `dot`."""

from __future__ import annotations

import operator
import shutil
from typing import Annotated, Any, Literal, TypedDict

import pytest

from lgnb.draw import GraphvizNotFound, layout, to_dot, to_svg


class S(TypedDict):
    x: Annotated[list, operator.add]


def _node(state: Any) -> dict[str, Any]:
    return {"x": [1]}


def build(eng: Any, *, names: tuple[str, str] = ("a", "b")) -> Any:
    a, b = names
    sub = eng.StateGraph(S)
    sub.add_node("s1", _node)
    sub.add_node("s2", _node)
    sub.add_edge(eng.START, "s1")
    sub.add_edge("s1", "s2")

    def jump(state: Any) -> Any:
        return eng.Command(goto=b)

    g = eng.StateGraph(S)
    g.add_node(a, _node)
    g.add_node(b, _node)
    g.add_node("sub", sub.compile())
    g.add_node("jump", jump, destinations=(b, "sub"))
    g.add_edge(eng.START, a)
    g.add_conditional_edges(a, lambda s: "go", {"go": "jump", "stop": eng.END})
    g.add_edge(b, eng.END)
    g.add_edge("sub", eng.END)
    return g.compile()


def test_start_end_conditional_and_destinations(eng: Any) -> None:
    d = layout(build(eng), expanded=True)
    kinds = {n.key: n.kind for n in d.nodes}
    assert kinds["__start__"] == "start" and kinds["__end__"] == "end"
    edges = {(e.source, e.target): e for e in d.edges}
    assert edges[("a", "jump")].conditional and edges[("a", "jump")].label == "go"
    assert edges[("a", "__end__")].label == "stop"
    assert edges[("jump", "b")].conditional  # a Command destination
    assert ("jump", "sub:s1") in edges  # destination into an expanded subgraph
    dot = to_dot(build(eng))
    assert "shape=circle" in dot and "shape=doublecircle" in dot
    assert 'style=dashed' in dot and "label=go" in dot
    assert "subgraph cluster_" in dot and "label=sub" in dot


def test_collapsed_subgraph_is_one_node(eng: Any) -> None:
    d = layout(build(eng), expanded=False)
    keys = {n.key: n for n in d.nodes}
    assert "sub" in keys and keys["sub"].kind == "subgraph"
    assert not any(k.startswith("sub:") for k in keys)
    assert {("jump", "sub"), ("sub", "__end__")} <= {(e.source, e.target) for e in d.edges}
    assert d.subgraphs == ["sub"] and d.clusters == []


HOSTILE = '<img src=x onerror="alert(1)">&amp;"\\N'


def test_names_are_escaped_not_markup(lg: Any) -> None:
    dot = to_dot(build(lg, names=(HOSTILE, "b")))
    # Never an HTML-like label, never a DOT escape sequence: quoted, backslash doubled.
    assert "label=<" not in dot
    assert '\\\\N' in dot and '\\"alert(1)\\"' in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot (apt-get install graphviz)")
def test_svg_export_keeps_names_as_text(lg: Any) -> None:
    svg = to_svg(build(lg, names=(HOSTILE, "b")))
    assert "<img" not in svg and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;amp;&quot;\\N" in svg


def test_to_svg_without_dot_says_how_to_install(lg: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(GraphvizNotFound, match="apt-get install graphviz"):
        to_svg(build(lg))


def test_not_a_graph() -> None:
    with pytest.raises(TypeError, match="expected a compiled graph"):
        to_dot(42)


def test_routes_drawn_from_type_hints(eng: Any) -> None:
    def route(state: Any) -> Literal["b", "__end__"]:
        return "b"

    g = eng.StateGraph(S)
    g.add_node("a", _node)
    g.add_node("b", _node)
    g.add_edge(eng.START, "a")
    g.add_conditional_edges("a", route)
    d = layout(g.compile())
    assert {("a", "b"), ("a", "__end__")} <= {(e.source, e.target) for e in d.edges if e.conditional}

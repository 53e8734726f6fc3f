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


# -- control characters in names ---------------------------------------------------------

CONTROL_NAMES = ("a\x00b", "tab\tname", "nl\nx", "esc\x1b[31m", "del\x7f")


def control_graph(eng: Any) -> Any:
    """Nodes, an edge label and a subgraph whose names hold control characters."""
    sub = eng.StateGraph(S)
    sub.add_node("in\x01ner", _node)
    sub.add_edge(eng.START, "in\x01ner")
    g = eng.StateGraph(S)
    for name in CONTROL_NAMES:
        g.add_node(name, _node)
    g.add_node("sub\x02g", sub.compile())
    g.add_edge(eng.START, CONTROL_NAMES[0])
    for a, b in zip(CONTROL_NAMES, CONTROL_NAMES[1:]):
        g.add_edge(a, b)
    g.add_conditional_edges(CONTROL_NAMES[-1], lambda s: "go", {"go\x00on": "sub\x02g", "stop": eng.END})
    g.add_edge("sub\x02g", eng.END)
    return g.compile()


def test_visible_writes_control_characters_as_python_escapes() -> None:
    from lgnb.draw._dot import visible

    assert visible("a\x00b") == "a\\x00b"
    assert visible("tab\tname") == "tab\\tname"
    assert visible("nl\nx\r") == "nl\\nx\\r"
    assert visible("\x1b\x7f\x85") == "\\x1b\\x7f\\x85"
    assert visible("line\u2028para\u2029") == "line\\u2028para\\u2029"
    assert visible("lone\ud800") == "lone\\ud800"
    # printable text, however exotic, is drawn as it is
    for s in ("plain", "é ✓ 👍🏽 中文", "a b\u00a0c", "zwj\u200d", "back\\slash"):
        assert visible(s) == s


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot (apt-get install graphviz)")
def test_control_characters_in_names_are_drawn_as_escapes_by_real_graphviz(eng: Any) -> None:
    import xml.etree.ElementTree as ET

    graph = control_graph(eng)
    dot = to_dot(graph, expanded=True)
    assert not any(c in dot for c in "\x00\x01\x02\x1b\x7f")  # the DOT text itself is clean
    svg = to_svg(dot)
    root = ET.fromstring(svg)  # well-formed XML, so no raw control character either
    ns = {"s": "http://www.w3.org/2000/svg"}
    groups = {g.get("class"): [] for g in root.iter("{http://www.w3.org/2000/svg}g")}
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        groups[g.get("class")].append("".join(t.text or "" for t in g.findall("s:text", ns)))
    expected = {"START", "END", "a\\x00b", "tab\\tname", "nl\\nx", "esc\\x1b[31m", "del\\x7f", "in\\x01ner"}
    drawn = layout(graph, expanded=True)
    assert sorted(groups["node"]) == sorted(expected)  # every node, each under its own label
    assert len(drawn.nodes) == len(expected)
    assert "go\\x00on" in groups["edge"]
    assert groups["cluster"] == ["sub\\x02g"]
    # collapsed, the subgraph is one node with its escaped name
    collapsed = ET.fromstring(to_svg(to_dot(graph, expanded=False)))
    labels = {"".join(t.text or "" for t in g.findall("s:text", ns))
              for g in collapsed.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "node"}
    assert "sub\\x02g ⊞" in labels and "a\\x00b" in labels


def test_history_timeline_draws_control_characters_as_escapes(eng: Any) -> None:
    from lgnb.draw import history_to_dot

    b = eng.StateGraph(S)
    b.add_node("a\x00b", _node)
    b.add_node("tab\tname", _node)
    b.add_edge(eng.START, "a\x00b")
    b.add_edge("a\x00b", "tab\tname")
    g = b.compile(checkpointer=eng.InMemorySaver(), interrupt_before=["tab\tname"])
    cfg = {"configurable": {"thread_id": "ctl"}}
    g.invoke({"x": []}, cfg)
    dot = history_to_dot(g.get_state_history(cfg))
    assert "\x00" not in dot and "\t\t" not in dot.replace("\n\t", "\n")
    assert "next: a\\\\x00b" in dot and "next: tab\\\\tname" in dot
    if shutil.which("dot"):
        svg = to_svg(dot)
        assert "next: a\\x00b" in svg and "next: tab\\tname" in svg


def test_a_value_cut_again_still_says_how_much_of_the_original_was_left_out() -> None:
    """Views cut the copies other views already cut (a stream's payload, then a form): the
    marker counts the original's characters, whichever limit cuts last."""
    from lgnb.draw import jsonable

    text = "x" * 5050
    once = jsonable(text)
    assert once.endswith("… (+1050 chars)") and jsonable(once) == once
    assert jsonable({"k": once}, limit=200)["k"] == "x" * 200 + "… (+4850 chars)"
    assert jsonable("ends with … (+3 chars)") == "ends with … (+3 chars)"  # short: left as it is

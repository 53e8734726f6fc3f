"""Drawable model → DOT text (built with the `graphviz` package) and, for export, SVG.

Every user-controlled string (node names, edge labels, subgraph names) goes through
`_text`, so it is a plain DOT string: never an HTML-like label (``<...>``), never an
escape sequence (``\\N``, ``\\l``), never an entity (``&amp;``), and its control characters
are drawn as escapes (`visible`: a NUL would end the DOT text early, a tab or newline would
reshape the label). Graphviz then writes it as escaped XML text in SVG. Node, edge and
cluster DOT ids are ours (``n0``, ``lgnb-e3``...), so no user string ever becomes an id either.
"""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from collections.abc import Iterable
from typing import Any

from lgnb.draw._layout import Drawing, DrawnNode, layout

FONT = "Helvetica,Arial,sans-serif"
_NODE_STYLE = {
    "node": {"shape": "box", "style": "rounded,filled", "fillcolor": "#f4f6fb", "color": "#8a94a6"},
    "subgraph": {"shape": "box3d", "style": "filled", "fillcolor": "#eef3ff", "color": "#6b7fb3"},
    "start": {"shape": "circle", "style": "filled", "fillcolor": "#2d3748", "fontcolor": "white",
              "color": "#2d3748", "width": "0.6", "fixedsize": "true", "fontsize": "10"},
    "end": {"shape": "doublecircle", "style": "filled", "fillcolor": "#2d3748", "fontcolor": "white",
            "color": "#2d3748", "width": "0.5", "fixedsize": "true", "fontsize": "10"},
}


_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
# control characters, lone surrogates (not encodable), line and paragraph separators
_INVISIBLE = frozenset({"Cc", "Cs", "Zl", "Zp"})


def visible(s: str) -> str:
    """`s` with its control characters written as Python-style escapes (``"a\\x00b"``).

    A label shows every character of a name: a NUL, a tab or a newline in a node name is
    drawn as ``\\x00``, ``\\t``, ``\\n`` rather than cutting, blanking or reshaping the
    drawing. The browser views apply the same rule (``visible`` in ``js/src/graph.js``).
    """
    if s.isprintable():
        return s
    out = []
    for ch in s:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif unicodedata.category(ch) in _INVISIBLE:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _text(s: str) -> str:
    """A user string as literal DOT label text: control characters made `visible`, no HTML
    label, no escapes, no entities (Graphviz decodes ``&amp;``-style entities even in plain
    labels)."""
    import graphviz

    return graphviz.escape(visible(s).replace("&", "&amp;"))


def _label(node: DrawnNode) -> str:
    if node.kind == "start":
        return "START"
    if node.kind == "end":
        return "END"
    if node.kind == "subgraph":
        return f"{node.name} ⊞"
    return node.name


def drawing_to_dot(drawing: Drawing, *, rankdir: str = "TB", name: str = "graph") -> str:
    """DOT text for an already computed `Drawing` (the widgets reuse their drawing)."""
    import graphviz  # drawing only: not a cost of `import lgnb`

    dot = graphviz.Digraph(name=graphviz.escape(name))
    dot.attr(rankdir=rankdir, bgcolor="transparent", fontname=FONT, nodesep="0.35", ranksep="0.45")
    dot.attr("node", fontname=FONT, fontsize="12", height="0.35", margin="0.15,0.05")
    dot.attr("edge", fontname=FONT, fontsize="10", color="#8a94a6", arrowsize="0.7")

    bodies: dict[str | None, graphviz.Digraph] = {None: dot}
    children: dict[str | None, list[str]] = {}
    for cluster in drawing.clusters:
        sub = graphviz.Digraph(name=f"cluster_{cluster.dot_id.replace('-', '_')}")
        sub.attr(label=_text(cluster.name), id=cluster.dot_id, style="rounded,dashed",
                 color="#6b7fb3", fontcolor="#3c4a6b", fontsize="11", labeljust="l")
        bodies[cluster.key] = sub
        children.setdefault(cluster.parent, []).append(cluster.key)

    for node in drawing.nodes:
        bodies[node.cluster].node(node.dot_id.replace("-", "_"), label=_text(_label(node)),
                                  id=node.dot_id, **_NODE_STYLE[node.kind])

    def attach(parent: str | None) -> None:
        for key in children.get(parent, []):
            attach(key)
            bodies[parent].subgraph(bodies[key])

    attach(None)
    ids = {n.key: n.dot_id.replace("-", "_") for n in drawing.nodes}
    for edge in drawing.edges:
        attrs: dict[str, Any] = {"id": edge.dot_id}
        if edge.conditional:
            attrs["style"] = "dashed"
        if edge.label is not None:
            attrs["label"] = _text(edge.label)
        dot.edge(ids[edge.source], ids[edge.target], **attrs)
    return dot.source


def to_dot(graph: Any, *, expanded: Iterable[str] | bool = True, rankdir: str = "TB") -> str:
    """DOT text for `graph` (a compiled graph, or a `langchain_core` Graph).

    START and END are drawn distinctly, conditional edges (including `Command`
    destinations declared with ``destinations=``) dashed with their labels, and subgraphs
    as clusters (`expanded=True`, the default) or as single nodes (`expanded=False`, or
    pass the keys of the subgraphs to expand).
    """
    return drawing_to_dot(layout(graph, expanded=expanded), rankdir=rankdir)


class GraphvizNotFound(RuntimeError):
    """The `dot` program is needed for SVG export and is not installed."""


def to_svg(graph_or_dot: Any, *, expanded: Iterable[str] | bool = True, rankdir: str = "TB",
           timeout: float = 30.0) -> str:
    """Render `graph_or_dot` (a graph, or DOT text) to SVG text with the `dot` binary.

    This is for export (files, reports); the notebook views render in the browser with
    Graphviz compiled to WASM and need no system Graphviz.
    """
    source = graph_or_dot if isinstance(graph_or_dot, str) else to_dot(
        graph_or_dot, expanded=expanded, rankdir=rankdir)
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizNotFound(
            "lgnb.draw.to_svg needs Graphviz's `dot` program, which was not found on PATH. "
            "Install Graphviz (Debian/Ubuntu: `apt-get install graphviz`, macOS: `brew install "
            "graphviz`, conda: `conda install graphviz`), or use lgnb.show(graph), which renders "
            "in the browser without it."
        )
    proc = subprocess.run([exe, "-Tsvg"], input=source.encode(), capture_output=True,
                          timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"dot failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode()

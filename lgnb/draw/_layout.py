"""Graph structure → a drawable model (nodes, edges, clusters), with subgraphs collapsible.

The input is anything with LangGraph's public `get_graph(xray=...)` (a compiled lgnb or
langgraph graph) or an already-built `langchain_core.runnables.graph.Graph`. Subgraph nodes
appear in the xray graph with ``parent:child`` ids; a subgraph is drawn either *expanded*
(a cluster holding its nodes) or *collapsed* (one node standing for all of them). Everything
here is pure data: the DOT text is produced by :mod:`lgnb.draw._dot`, the widgets reuse the
same model to map live events (``"sub:child"`` keys) onto drawn elements.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

START = "__start__"
END = "__end__"


@dataclass(frozen=True)
class DrawnNode:
    """One drawn node: `key` is the graph's node id (``"sub:child"`` inside subgraphs)."""

    key: str
    name: str
    kind: str  # "start" | "end" | "node" | "subgraph" (collapsed)
    dot_id: str
    cluster: str | None  # key of the enclosing expanded subgraph, if any
    metadata: dict[str, Any] = field(default_factory=dict)
    data: str = ""  # what the node runs (type name), for the details panel


@dataclass(frozen=True)
class DrawnEdge:
    """One drawn edge between two drawn node keys."""

    source: str
    target: str
    dot_id: str
    conditional: bool
    label: str | None


@dataclass(frozen=True)
class DrawnCluster:
    """An expanded subgraph, drawn as a Graphviz cluster."""

    key: str
    name: str
    dot_id: str
    parent: str | None


@dataclass
class Drawing:
    """The drawable model of a graph for one choice of expanded subgraphs."""

    nodes: list[DrawnNode]
    edges: list[DrawnEdge]
    clusters: list[DrawnCluster]
    subgraphs: list[str]  # keys of every subgraph (expanded or not)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the widgets' synced traits."""
        from lgnb.draw._jsonable import jsonable

        return {
            "nodes": [jsonable(n.__dict__) for n in self.nodes],
            "edges": [dict(e.__dict__) for e in self.edges],
            "clusters": [dict(c.__dict__) for c in self.clusters],
            "subgraphs": list(self.subgraphs),
        }


def get_structure(graph: Any, *, xray: bool | int = False) -> Any:
    """Return the `langchain_core` Graph for `graph` (a compiled graph or a Graph already).

    Raises TypeError naming what is expected when `graph` has no `get_graph`.
    """
    if hasattr(graph, "nodes") and hasattr(graph, "edges") and not hasattr(graph, "get_graph"):
        return graph
    get_graph = getattr(graph, "get_graph", None)
    if not callable(get_graph):
        raise TypeError(
            f"expected a compiled graph (an object with get_graph(), e.g. "
            f"StateGraph(...).compile()), got {type(graph).__name__}"
        )
    return get_graph(xray=xray)


def _prefixes(key: str) -> list[str]:
    parts = key.split(":")
    return [":".join(parts[:i]) for i in range(1, len(parts))]


def _display_key(key: str, expanded: set[str] | bool) -> str:
    """The drawn node that stands for `key`: itself, or its outermost collapsed subgraph."""
    for prefix in _prefixes(key):
        if expanded is True:
            continue
        if expanded is False or prefix not in expanded:
            return prefix
    return key


def _type_name(data: Any) -> str:
    if data is None:
        return ""
    name = getattr(data, "name", None)
    kind = type(data).__name__
    return f"{kind} {name}" if isinstance(name, str) and name and name != kind else kind


def layout(graph: Any, *, expanded: Iterable[str] | bool = False) -> Drawing:
    """Build the drawable model of `graph`.

    `expanded`: True expands every subgraph, False collapses all, or the keys of the
    subgraphs to expand (a nested subgraph shows only when all its parents are expanded).
    """
    exp: set[str] | bool = expanded if isinstance(expanded, bool) else set(expanded)
    flat = get_structure(graph, xray=False)
    try:
        full = get_structure(graph, xray=True) if hasattr(graph, "get_graph") else flat
    except Exception:  # a graph whose xray drawing fails still draws flat
        full = flat
    flat_nodes = dict(flat.nodes)

    subgraphs: list[str] = []
    for key in full.nodes:
        for prefix in _prefixes(key):
            if prefix not in subgraphs:
                subgraphs.append(prefix)

    nodes: dict[str, DrawnNode] = {}
    clusters: dict[str, DrawnCluster] = {}

    def cluster_of(key: str) -> str | None:
        prefixes = _prefixes(key)
        return prefixes[-1] if prefixes else None

    def ensure_cluster(key: str) -> None:
        if key in clusters:
            return
        parent = cluster_of(key)
        if parent is not None:
            ensure_cluster(parent)
        clusters[key] = DrawnCluster(key=key, name=key.split(":")[-1],
                                     dot_id=f"lgnb-c{len(clusters)}", parent=parent)

    for key, node in full.nodes.items():
        shown = _display_key(key, exp)
        if shown in nodes:
            continue
        is_sub = shown != key
        source = flat_nodes.get(shown) if is_sub else node
        if not is_sub and key in flat_nodes:
            source = flat_nodes[key]
        kind = "start" if shown == START else "end" if shown == END else "subgraph" if is_sub else "node"
        parent = cluster_of(shown)
        if parent is not None:
            ensure_cluster(parent)
        metadata = dict(getattr(source, "metadata", None) or {})
        nodes[shown] = DrawnNode(
            key=shown,
            name=shown.split(":")[-1] if is_sub else str(getattr(node, "name", shown)),
            kind=kind,
            dot_id=f"lgnb-n{len(nodes)}",
            cluster=parent,
            metadata=metadata,
            data=_type_name(getattr(source, "data", None)) if source is not None else "subgraph",
        )

    edges: list[DrawnEdge] = []
    seen: set[tuple[str, str, str | None]] = set()
    for edge in full.edges:
        source, target = _display_key(edge.source, exp), _display_key(edge.target, exp)
        if source == target and source != edge.source:
            continue  # an edge inside a collapsed subgraph
        label = None if edge.data is None else str(edge.data)
        ident = (source, target, label)
        if ident in seen or source not in nodes or target not in nodes:
            continue
        seen.add(ident)
        edges.append(DrawnEdge(source=source, target=target, dot_id=f"lgnb-e{len(edges)}",
                               conditional=bool(edge.conditional), label=label))
    return Drawing(nodes=list(nodes.values()), edges=edges,
                   clusters=list(clusters.values()), subgraphs=subgraphs)


def display_key(key: str, drawing: Drawing) -> str:
    """Map a live node key (``"sub:child"``) to the key drawn in `drawing`."""
    drawn = {n.key for n in drawing.nodes}
    if key in drawn:
        return key
    for prefix in _prefixes(key):
        if prefix in drawn:
            return prefix
    return key

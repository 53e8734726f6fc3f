"""`get_graph()`: a compiled graph's structure as a LangChain `Graph`.

Built from what the builder recorded (static edges, joins, conditional edges with their
path maps, `Command` destinations), with LangGraph's conventions: conditional edges are
flagged and labelled by path-map key, nodes nobody leaves get an edge to END, and
`xray` inlines subgraphs as `parent:child` nodes. The result is what `lgnb.draw` and
LangChain's own `draw_*` methods consume, for lgnb and LangGraph graphs alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import Runnable
from langchain_core.runnables.graph import Graph

from lgnb._internal.constants import END, START
from lgnb._internal.node_runnable import FunctionNode, GraphNode

__all__ = ("draw_graph",)


def _data(node: Any) -> Any:
    bound = node.bound
    if bound is None:
        return None
    if bound.subgraph is not None:
        return GraphNode(func=bound.subgraph, name=node.name)
    if bound.runnable is not None:
        return bound.runnable
    func = bound.func or bound.afunc
    if isinstance(func, Runnable):
        return func
    return FunctionNode(func=func, name=node.name)


def _action(bound: Any) -> Any:
    """The Runnable a node runs: its own, or the one a LangGraph-built graph's node wraps."""
    if bound.runnable is not None:
        return bound.runnable
    return getattr(bound.func or bound.afunc, "_lgnb_wraps", None)


_Edge = tuple[str, str, bool, "str | None"]


def draw_graph(graph: Any, *, xray: int | bool = False) -> Graph:
    """The structure of `graph` (a CompiledStateGraph) as a LangChain Graph."""
    builder = getattr(graph, "builder", None)
    if builder is None:
        return _draw_wired(graph)
    builder = vars(graph).get("compiled_structure") or builder  # (the builder may have changed)
    edges: set[_Edge] = set()
    # a plain edge to END writes nothing, so LangGraph does not discover it: END edges of
    # plain nodes are drawn afterwards, for the nodes nothing leaves (the termini below)
    for s, e in builder.edges:
        if e != END:
            edges.add((s, e, False, None))
    for starts, e in builder.waiting_edges:
        for s in starts:
            if e != END:
                edges.add((s, e, False, None))
    for source, branches in builder.branches.items():
        for branch in branches.values():
            if branch.ends:
                for label, dest in branch.ends.items():
                    edges.add((source, dest, True, str(label) if str(label) != dest else None))
    for name, spec in builder.nodes.items():
        ends = spec.ends
        if isinstance(ends, dict):
            for dest, label in ends.items():
                edges.add((name, dest, True, label if label != dest else None))
        else:
            for dest in ends or ():
                edges.add((name, dest, True, None))

    # as LangGraph finds them by running the writers from START: only edges out of nodes a
    # run reaches, into nodes it triggers (a join once all its sources ran)
    reached, last_step, implicit = _reached(builder)
    edges = {e for e in edges if e[0] in reached and (e[1] in reached or e[1] == END)}
    edges |= implicit

    out = Graph()
    for name, node in graph.nodes.items():
        if name == START:
            out.add_node(_data(node), START)
            continue
        metadata = dict(node.metadata or {})
        if node.defer:
            metadata["defer"] = True
        before = _names(graph.interrupt_before_nodes, builder)
        after = _names(graph.interrupt_after_nodes, builder)
        if name in before and name in after:
            metadata["__interrupt"] = "before,after"
        elif name in before:
            metadata["__interrupt"] = "before"
        elif name in after:
            metadata["__interrupt"] = "after"
        # a ToolNode lists its tools (duck-typed: lgnb does not import langgraph.prebuilt)
        tools = getattr(_action(node.bound), "tools_by_name", None) if node.bound else None
        if isinstance(tools, Mapping) and tools:
            metadata["__tools"] = list(tools)
        out.add_node(_data(node), name, metadata=metadata or None)

    for src, dest, cond, label in sorted(edges, key=lambda e: (e[0], e[1], e[2], e[3] or "")):
        _add_edge(out, src, dest, data=label, conditional=cond)
    termini = {d for _, d, _, _ in edges if d != END} - {s for s, _, _, _ in edges}
    for src in sorted(termini):
        _add_edge(out, src, END)
    if not termini and len(last_step) == 1 and not any(d == END for _, d, _, _ in edges):
        # no way out drawn: the one node of the last step may still end the run
        _add_edge(out, next(iter(last_step)), END, conditional=True)

    if xray:
        depth = xray - 1 if isinstance(xray, int) and not isinstance(xray, bool) else xray
        for name, node in graph.nodes.items():
            # the graph this node is, or the one its code invokes (as LangGraph finds it)
            subs = node.subgraphs if hasattr(node, "subgraphs") else []
            sub = subs[0] if subs else None
            if sub is None or not hasattr(sub, "get_graph"):
                continue
            subgraph = sub.get_graph(xray=depth)
            if len(subgraph.nodes) > 1 and name in out.nodes and subgraph.first_node() and subgraph.last_node():
                subgraph.trim_first_node()
                subgraph.trim_last_node()
                out.nodes.pop(name)
                first, last = out.extend(subgraph, prefix=name)
                for idx, edge in enumerate(out.edges):
                    if edge.source == name:
                        edge = edge.copy(source=last.id)  # type: ignore[union-attr]
                    if edge.target == name:
                        edge = edge.copy(target=first.id)  # type: ignore[union-attr]
                    out.edges[idx] = edge
    return out


def _reached(builder: Any, limit: int = 251) -> tuple[set[str], set[str], set[_Edge]]:
    """The nodes a run from START reaches, those of its last step, and the implicit edges
    LangGraph's drawing adds, as it simulates the run (at most `limit` steps).

    Plain edges trigger every time, conditional edges and `destinations` only the first
    time their node runs (declared writes, applied once), a join once all its sources ran.
    A deferred node runs in the first step nothing else is left to run; if none of the
    nodes that triggered it ran in the step before, LangGraph draws a dashed edge to it
    from each node of that step."""
    plain: dict[str, set[str]] = {}
    declared: dict[str, set[str]] = {}
    for s, e in builder.edges:
        plain.setdefault(s, set()).add(e)
    for source, branches in builder.branches.items():
        for branch in branches.values():
            declared.setdefault(source, set()).update((branch.ends or {}).values())
    for name, spec in builder.nodes.items():
        declared.setdefault(name, set()).update(spec.ends or ())
    deferred = {name for name, spec in builder.nodes.items() if spec.defer}
    joins = [(frozenset(starts), end) for starts, end in builder.waiting_edges]
    seen: list[set[str]] = [set() for _ in joins]
    waiting: dict[str, set[str]] = {}  # deferred node -> the nodes that triggered it
    implicit: set[_Edge] = set()
    tasks: dict[str, set[str]] = {START: set()}
    last: set[str] = {START}
    reached: set[str] = set()
    for _ in range(limit):
        if not tasks:
            break
        following: dict[str, set[str]] = {}
        for t in tasks:
            for d in plain.get(t, ()):
                following.setdefault(d, set()).add(t)
            if t not in reached:
                for d in declared.get(t, ()):
                    following.setdefault(d, set()).add(t)
        for i, (starts, end) in enumerate(joins):
            seen[i] |= tasks.keys() & starts
            if seen[i] >= starts:
                following.setdefault(end, set()).update(starts)
                seen[i] = set()
        reached |= tasks.keys()
        last = set(tasks)
        following.pop(END, None)
        for d in deferred & following.keys():
            waiting.setdefault(d, set()).update(following.pop(d))
        if not following and waiting:  # nothing else left: the deferred nodes run
            for d, sources in waiting.items():
                if not sources & last:
                    implicit.update((src, d, True, None) for src in last)
            following, waiting = waiting, {}
        tasks = following
    return reached, last, implicit


def _draw_wired(graph: Any) -> Graph:
    """A graph without a builder (an `@entrypoint`, a `Pregel` wired with `NodeBuilder`):
    `__start__` to the nodes the input triggers, a node to those its declared writes
    trigger, and the nodes nothing leaves to `__end__`, as LangGraph draws it: the nodes
    first, then `__start__`; and a lone node nothing follows (an entrypoint) ends by a
    conditional edge (it may or may not run again)."""
    inputs = graph.input_channels
    inputs = {inputs} if isinstance(inputs, str) else set(inputs)
    starts = [name for name, node in graph.nodes.items() if inputs & set(node.triggers)]
    edges: set[tuple[str, str]] = set()
    for name, node in graph.nodes.items():
        written = {c for w in node.writers for c in getattr(w, "channels", ())}
        edges.update((name, other) for other, o in graph.nodes.items() if written & set(o.triggers))
    out = Graph()
    for name, node in graph.nodes.items():
        out.add_node(_data(node), name, metadata=dict(node.metadata or {}) or None)
    if START not in graph.nodes:
        out.add_node(None, START)
        for name in starts:
            _add_edge(out, START, name)
    for src, dest in sorted(edges):
        _add_edge(out, src, dest)
    termini = {d for _, d in edges} - {s for s, _ in edges}
    for src in sorted(termini):
        _add_edge(out, src, END)
    if not edges and len(starts) == 1:
        _add_edge(out, starts[0], END, conditional=True)
    return out


def _names(spec: Any, builder: Any) -> set[str]:
    # LangGraph tests `name in spec`: for "*" a substring test no node name passes, so
    # breakpoints on every node are not drawn
    if spec == "*":
        return set()
    return set(spec or ())


def _add_edge(graph: Graph, source: str, target: str, *, data: Any = None, conditional: bool = False) -> None:
    for edge in graph.edges:
        if edge.source == source and edge.target == target:
            return
    if target not in graph.nodes and target == END:
        graph.add_node(None, END)
    graph.add_edge(graph.nodes[source], graph.nodes[target], data, conditional)

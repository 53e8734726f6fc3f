"""Which drawn edges triggered a lens step's tasks: read off the messages, not the drawing.

A node runs in a super-step because a channel it is triggered by was written since it last
ran: `branch:to:X` (an edge or a conditional edge into X, or a `Command(goto=X)`), a
waiting edge's `join:a+b:X`, the Send queue `__pregel_tasks`. The edge to light is from
each node that *wrote* that channel — in the step before, or earlier: a waiting edge's
sources write in different steps, and a `defer=True` node's trigger stays written until
nothing else is left to run. Lighting every drawn edge from the previous step's nodes
instead shows a conditional edge that routed elsewhere as taken, and the wrong sender for
a join or a deferred node.

An lgnb graph's records list every write, hidden channels included. A graph read through
LangGraph's public stream modes (`reduced` steps) has no hidden writes: a join's sources
are read from its channel's name, and a `branch:to:X` nobody is known to have written
falls back to the previous step's nodes with a drawn edge into X.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ("drawn_edges", "triggering_edges")

_SENDS = "__pregel_tasks"
_JOIN = "join:"


def drawn_edges(source: str, target: str, edges: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The drawn edges that stand for `source → target`: itself, or, where either is a
    subgraph drawn expanded (its nodes named `name:inner`), the edges between its inner
    nodes and the other end."""
    edges = edges if isinstance(edges, (set, frozenset)) else set(edges)
    if (source, target) in edges:
        return [(source, target)]
    s_in, t_in = f"{source}:", f"{target}:"
    found = []
    for a, b in edges:
        if (a == source or a.startswith(s_in)) and (b == target or b.startswith(t_in)):
            if source == target and a.startswith(s_in) and b.startswith(t_in):
                continue  # (an edge inside the subgraph, not a loop back into it)
            found.append((a, b))
    return found


def _join_sources(channel: str, target: str) -> list[str]:
    """A waiting edge's sources, from its channel's name (`join:a+b:target`)."""
    body = channel[len(_JOIN):]
    suffix = f":{target}"
    if body.endswith(suffix):
        body = body[: -len(suffix)]
    return [s for s in body.split("+") if s]


def _triggers(task: Mapping[str, Any]) -> list[str]:
    if task.get("send"):
        return [_SENDS]
    return [str(t.get("channel")) for t in task.get("triggers") or () if isinstance(t, Mapping)]


def triggering_edges(steps: Sequence[Mapping[str, Any]], index: int,
                     edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The drawn edges `[source, target]` that triggered the tasks of `steps[index]`
    (lens steps: `plan` and `execute` records), in the order of its tasks."""
    edges = set(edges)
    writers: dict[str, list[str]] = {}
    for step in steps[:index]:
        for task in (step.get("plan") or {}).get("tasks") or ():
            for channel in _triggers(task):  # consumed by the node it triggered
                writers.pop(channel, None)
        for task in (step.get("execute") or {}).get("tasks") or ():
            node = str(task.get("node"))
            for write in task.get("writes") or ():
                got = writers.setdefault(str(write[0]), [])
                if node not in got:
                    got.append(node)
    previous = _previous_nodes(steps, index)
    lit: list[list[str]] = []
    for task in (steps[index].get("plan") or {}).get("tasks") or ():
        target = str(task.get("node"))
        for channel in _triggers(task) or [""]:  # ("": a task whose triggers are not known)
            sources = writers.get(channel)
            if not sources and channel.startswith(_JOIN):
                sources = _join_sources(channel, target)
            if not sources:  # (no hidden writes known: a graph read through the public modes)
                sources = [s for s in previous if drawn_edges(s, target, edges)] or previous
            for source in sources:
                for a, b in drawn_edges(source, target, edges):
                    if [a, b] not in lit:
                        lit.append([a, b])
    return lit


def _previous_nodes(steps: Sequence[Mapping[str, Any]], index: int) -> list[str]:
    for step in reversed(steps[:index]):
        if step.get("counts"):
            return list(step["counts"].keys())
    return ["__start__"]

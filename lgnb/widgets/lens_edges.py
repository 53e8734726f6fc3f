"""Which drawn edges triggered a lens step's tasks: read off the messages, not the drawing.

A node runs in a super-step because a channel it is triggered by was written since it last
ran: `branch:to:X` (an edge or a conditional edge into X, or a `Command(goto=X)`), a
waiting edge's `join:a+b:X`, a `Send` to X in `__pregel_tasks`. The edge to light is from
each node that *wrote* that channel — in the step before, or earlier: a waiting edge's
sources write in different steps, and a `defer=True` node's trigger stays written until
nothing else is left to run. Lighting every drawn edge from the previous step's nodes
instead shows a conditional edge that routed elsewhere as taken, and the wrong sender for
a join or a deferred node.

An lgnb graph's records list every write, hidden channels included. A graph read through
LangGraph's public stream modes (`reduced` steps) has no hidden writes: a join's sources
are read from its channel's name, and a trigger nobody is known to have written falls
back to the previous step's nodes with a drawn edge into the task's node.

A step stopped part-way (an interrupt, an error) consumes nothing: the step runs again on
resume, from the same triggers. `EdgeTracer` folds the steps once each, in order, so a
long run costs one pass, not one per step shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ("EdgeTracer", "drawn_edges", "join_sources", "triggering_edges")

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


def join_sources(channel: str, target: str, candidates: Iterable[str]) -> list[str]:
    """A waiting edge's sources among `candidates` (the nodes drawn with an edge into
    `target`), read from its channel's name `join:a+b:target`. Node names may hold `+`,
    so each candidate is looked for between the separators rather than split out."""
    if not channel.startswith(_JOIN) or not channel.endswith(f":{target}"):
        return []
    body = f"+{channel[len(_JOIN):-len(target) - 1]}+"
    return sorted((c for c in candidates if f"+{c}+" in body), key=lambda c: body.index(f"+{c}+"))


def _trigger_keys(task: Mapping[str, Any]) -> list[str]:
    """The channels that triggered a planned task (a Send's: `__pregel_tasks:<node>`)."""
    if task.get("send"):
        return [f"{_SENDS}:{task.get('node')}"]
    return [str(t.get("channel")) for t in task.get("triggers") or () if isinstance(t, Mapping)]


def _write_key(channel: str, value: Any) -> str:
    if channel == _SENDS and isinstance(value, Mapping) and "send" in value:
        return f"{_SENDS}:{value['send']}"  # (each Send is a write for its own node)
    return channel


class EdgeTracer:
    """`triggering_edges` folded incrementally over a growing list of lens steps."""

    __slots__ = ("_edges", "_writers", "_done")

    def __init__(self, edges: Iterable[tuple[str, str]]) -> None:
        self._edges = set(edges)
        self._writers: dict[str, list[str]] = {}
        self._done = 0  # steps folded into `_writers`

    def lit(self, steps: Sequence[Mapping[str, Any]], index: int) -> list[list[str]]:
        """The drawn edges `[source, target]` that triggered the tasks of `steps[index]`,
        in the order of its tasks (the steps before it folded once, in order)."""
        if index < self._done:  # (an earlier step shown again: fold from the start)
            self._writers, self._done = {}, 0
        while self._done < index:
            self._fold(steps[self._done])
            self._done += 1
        return self._lit(steps, index)

    def _fold(self, step: Mapping[str, Any]) -> None:
        if step.get("status") not in (None, "done"):
            return  # stopped part-way: it runs again from the same triggers
        writers = self._writers
        for task in (step.get("plan") or {}).get("tasks") or ():
            for key in _trigger_keys(task):  # consumed by the node it triggered
                writers.pop(key, None)
        for task in (step.get("execute") or {}).get("tasks") or ():
            node = str(task.get("node"))
            for write in task.get("writes") or ():
                got = writers.setdefault(_write_key(str(write[0]), write[1] if len(write) > 1 else None), [])
                if node not in got:
                    got.append(node)

    def _lit(self, steps: Sequence[Mapping[str, Any]], index: int) -> list[list[str]]:
        edges = self._edges
        previous = _previous_nodes(steps, index)
        lit: list[list[str]] = []
        for task in (steps[index].get("plan") or {}).get("tasks") or ():
            target = str(task.get("node"))
            for key in _trigger_keys(task) or [""]:  # ("": a task whose triggers are not known)
                sources = self._writers.get(key)
                if not sources and key.startswith(_JOIN):
                    drawn_into = {a.split(":")[0] for a, b in edges if b == target or b.startswith(f"{target}:")}
                    sources = join_sources(key, target, drawn_into)
                if not sources:  # (no hidden writes known: a graph read through the public modes)
                    sources = [s for s in previous if drawn_edges(s, target, edges)] or previous
                for source in sources:
                    for a, b in drawn_edges(source, target, edges):
                        if [a, b] not in lit:
                            lit.append([a, b])
        return lit


def triggering_edges(steps: Sequence[Mapping[str, Any]], index: int,
                     edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The drawn edges `[source, target]` that triggered the tasks of `steps[index]`
    (lens steps: `plan` and `execute` records, `status`), in the order of its tasks."""
    return EdgeTracer(edges).lit(steps, index)


def _previous_nodes(steps: Sequence[Mapping[str, Any]], index: int) -> list[str]:
    for step in reversed(steps[:index]):
        if step.get("counts") and step.get("status") in (None, "done"):
            return list(step["counts"].keys())
    return ["__start__"]

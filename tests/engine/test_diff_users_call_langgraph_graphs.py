"""A user's node invokes a graph LangGraph compiled (not ported: an agent from a library, a
graph built with `langgraph` imports), whose nodes call the engine's own `interrupt()`,
`get_stream_writer()` and `get_config()`: those answer for the LangGraph node that calls
them, as on LangGraph, not for the lgnb task around it (its resume values, namespace and
stream). The inner graph is LangGraph's on both engines; the outer graph and the functions
its nodes call are the engine's."""

from __future__ import annotations

from typing import Any

import pytest
from _diff import collect
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph as LGStateGraph
from typing_extensions import TypedDict


class S(TypedDict):
    x: str


def _outer(E: Any, inner: Any, *, saver: bool = True) -> Any:
    def outer(s: S) -> Any:
        return inner.invoke(s)

    g = E.StateGraph(S)
    g.add_node("outer", outer)
    g.add_edge(E.START, "outer")
    return g.compile(checkpointer=E.InMemorySaver() if saver else None)


def test_two_interrupts_in_a_langgraph_graph_a_node_invokes_get_their_own_answers(differential):
    # the second question must not get the first answer again: a refused action would run
    def scenario(E):
        def ask(n: int) -> Any:
            return lambda s: {"x": s["x"] + f"|{n}=" + str(E.interrupt(f"question {n}?"))}

        b = LGStateGraph(S)
        b.add_node("ask1", ask(1))
        b.add_node("ask2", ask(2))
        b.add_edge(LG_START, "ask1")
        b.add_edge("ask1", "ask2")
        app = _outer(E, b.compile())
        cfg = {"configurable": {"thread_id": "t"}}
        return [app.invoke({"x": "a"}, cfg), app.invoke(E.Command(resume="yes"), cfg),
                app.invoke(E.Command(resume="no"), cfg), app.get_state(cfg).values]

    differential(scenario)


@pytest.mark.parametrize("subgraphs", [True, False])
def test_custom_events_of_a_langgraph_graph_a_node_invokes_carry_its_namespace(differential, subgraphs):
    def scenario(E):
        def inner_node(s: S) -> S:
            E.get_stream_writer()({"progress": s["x"]})
            return {"x": s["x"] + "!"}

        b = LGStateGraph(S)
        b.add_node("work", inner_node)
        b.add_edge(LG_START, "work")
        app = _outer(E, b.compile(), saver=False)
        return collect(lambda: app.stream({"x": "a"}, stream_mode=["custom", "updates"], subgraphs=subgraphs))

    differential(scenario)


def test_get_config_in_a_langgraph_graph_a_node_invokes_is_that_nodes(differential):
    def scenario(E):
        seen = []

        def inner_node(s: S) -> S:
            config = E.get_config()
            seen.append((config["configurable"]["checkpoint_ns"], config["metadata"]["langgraph_node"],
                         config["metadata"]["langgraph_step"]))
            return {"x": s["x"] + "!"}

        b = LGStateGraph(S)
        b.add_node("work", inner_node)
        b.add_edge(LG_START, "work")
        app = _outer(E, b.compile())
        out = app.invoke({"x": "a"}, {"configurable": {"thread_id": "t"}})
        return out, seen

    differential(scenario)

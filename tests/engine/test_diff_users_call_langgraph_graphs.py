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


_OWN_INTERRUPT_PROGRAM = """
import sys
from typing_extensions import TypedDict
from langgraph.types import interrupt as langgraph_interrupt  # a helper module not ported yet
E = sys.argv[1]
graph = __import__(E + ".graph", fromlist=["x"])
func = __import__(E + ".func", fromlist=["x"])
types = __import__(E + ".types", fromlist=["x"])
InMemorySaver = __import__(E + ".checkpoint.memory", fromlist=["x"]).InMemorySaver
assert E == "langgraph" or "langgraph.pregel.main" not in sys.modules

class S(TypedDict):
    x: str

def ask(s):
    return {"x": s["x"] + "|node=" + str(langgraph_interrupt("node?"))}

g = graph.StateGraph(S)
g.add_node("ask", ask)
g.add_edge(graph.START, "ask")
app = g.compile(checkpointer=InMemorySaver())

@func.task
def confirm(x):
    return x + "|task=" + str(langgraph_interrupt("task?"))

@func.entrypoint(checkpointer=InMemorySaver())
def main(x):
    return confirm(x).result()

cfg = {"configurable": {"thread_id": "t"}}
for out in (app.invoke({"x": "a"}, cfg), app.invoke(types.Command(resume="yes"), cfg),
            main.invoke("b", cfg), main.invoke(types.Command(resume="no"), cfg)):
    print(out["__interrupt__"][0].value if isinstance(out, dict) and "__interrupt__" in out else out)
"""


def test_langgraphs_own_interrupt_called_in_a_node_and_a_task_asks_and_resumes(tmp_path):
    # a half-ported program: the graph is the engine's, a helper module still calls
    # `langgraph.types.interrupt`, which read LangGraph's scratchpad, missing from lgnb's
    # tasks unless LangGraph's engine had been imported. Each engine in a process of its own
    import subprocess
    import sys

    script = tmp_path / "program.py"
    script.write_text(_OWN_INTERRUPT_PROGRAM)
    runs = {e: subprocess.run([sys.executable, str(script), e], capture_output=True, text=True)
            for e in ("langgraph", "lgnb")}
    assert runs["langgraph"].returncode == 0, runs["langgraph"].stderr[-2000:]
    assert runs["lgnb"].returncode == 0, runs["lgnb"].stderr[-2000:]
    assert runs["lgnb"].stdout == runs["langgraph"].stdout == "node?\n{'x': 'a|node=yes'}\ntask?\nb|task=no\n"


def test_get_runtime_in_a_langgraph_graph_a_node_invokes_is_that_nodes(differential):
    def scenario(E):
        seen = []

        def inner_node(s: S) -> S:
            info = E.get_runtime().execution_info
            seen.append((info.checkpoint_ns, info.node_attempt))
            return {"x": s["x"] + "!"}

        b = LGStateGraph(S)
        b.add_node("work", inner_node)
        b.add_edge(LG_START, "work")
        app = _outer(E, b.compile())
        return app.invoke({"x": "a"}, {"configurable": {"thread_id": "t"}}), seen

    differential(scenario)


def _asking_graph(E: Any, *, nested: bool) -> Any:
    """A LangGraph graph whose `ask` node asks a question; `nested`: inside a LangGraph
    subgraph node of it (two levels under the node that invokes it)."""
    def ask(s: S) -> S:
        return {"x": s["x"] + "|ask=" + str(E.interrupt("ok?"))}

    b = LGStateGraph(S)
    b.add_node("ask", ask)
    b.add_edge(LG_START, "ask")
    if not nested:
        return b.compile()
    mid = LGStateGraph(S)
    mid.add_node("inner", b.compile())
    mid.add_edge(LG_START, "inner")
    return mid.compile()


@pytest.mark.parametrize("nested", [False, True])
def test_a_paused_langgraph_graph_a_node_invokes_is_read_and_edited_by_its_config(differential, nested):
    """A human fixes the state of a library's agent paused inside a node (as a review tool
    does): addressed by its namespace, `get_state`, `update_state` and `bulk_update_state`
    reach that graph's own checkpoint, one or two levels down; the resume sees the edit."""
    def scenario(E):
        app = _outer(E, _asking_graph(E, nested=nested))
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"x": "a"}, cfg)
        inner = app.get_state(cfg, subgraphs=True).tasks[0].state
        if nested:
            inner = inner.tasks[0].state
        direct = app.get_state(inner.config)
        names = [n for n, _ in app.get_subgraphs(recurse=True)]
        edited = app.update_state(inner.config, {"x": "edited"})
        again = app.bulk_update_state(edited, [[E.StateUpdate({"x": "edited twice"}, None, None)]])
        after = app.get_state(again)
        return (names, direct.next, [i.value for i in direct.interrupts], after.values, after.next,
                app.invoke(E.Command(resume="yes"), cfg))

    differential(scenario)

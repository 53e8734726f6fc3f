"""The calls users make besides `invoke`, lgnb and LangGraph side by side.

Why: issue 14 asks for a tenth of LangGraph's overhead *everywhere*, and `run.py` /
`bench_instructions.py` time runs of plain graphs with no checkpointer. A notebook also
calls a graph from inside a node, streams subgraphs, runs functional-API tasks, saves
every step, reads the state and its history (the teaching views), pauses and resumes
(human review) and edits the state. Each shape here is one such call with trivial node
work, so its time is the engine's (and each engine's own `InMemorySaver`'s; lgnb's is
LangGraph's class, subclassed) overhead.

Shapes (per run):

- ``nested invoke x20``: one node invokes a compiled 3-node subgraph 20 times;
- ``subgraph nodes, stream(subgraphs=True)``: 10 subgraph nodes in a row (3 nodes each),
  ``updates`` + ``values`` consumed;
- ``entrypoint, 50 tasks``: ``@entrypoint`` calling a ``@task`` 50 times, each awaited at
  once (``task(x).result()``), no checkpointer;
- ``chain of 30, InMemorySaver``: ``invoke`` on a new thread;
- ``get_state x31`` / ``get_state_history (31)``: on that thread;
- ``interrupt + resume x10``: a node asks ten times, each answered with
  ``Command(resume=...)``;
- ``chain of 30 + update_state x10``: the chain, then ten ``update_state`` calls;
- ``create_agent, 10 tool calls, saved``: what users write most, LangChain 1.x's
  ``create_agent`` (a fake tool-calling model, one ``add`` tool, an ``InMemorySaver``)
  on a new thread; on lgnb the agent is rebuilt with ``lgnb.graph.from_langgraph``. Its
  floor (the model and the tool called in a plain loop) is timed too, and the overhead
  ratio over it printed.

Both engines' targets run round-robin, ``gc.collect()`` before each; medians of
``--rounds`` rounds of CPU time (``process_time``: every thread, as the engines run tasks
in pools) and wall time. The ratio is lgnb / LangGraph; the goal of issue 14 is 0.10.

    .venv/bin/python bench/bench_shapes.py [--rounds 15] [--only SUBSTR[,SUBSTR]]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import itertools
import operator
import statistics
import time
from collections.abc import Callable
from typing import Annotated, Any

from typing_extensions import TypedDict

from graphs import FakeToolCallingModel, add


class _BindableModel(FakeToolCallingModel):
    """The benches' fake tool-calling model, as `create_agent` wants it (`bind_tools`)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def _inc(state: State) -> dict[str, Any]:
    return {"x": state["x"] + 1}


def _inc_logged(state: State) -> dict[str, Any]:
    return {"x": state["x"] + 1, "log": [1]}


def _chain(g: Any, nodes: list[tuple[str, Any]]) -> Any:
    """A `StateGraph` over `State` running `nodes` (name, node) one after the other."""
    return g.StateGraph(State).add_sequence(nodes).add_edge(g.START, nodes[0][0])


def shapes(engine: str) -> dict[str, Callable[[], Any]]:
    """Each shape of the module docstring, built on `engine` ("lgnb" or "langgraph")."""
    g = importlib.import_module(f"{engine}.graph")
    t = importlib.import_module(f"{engine}.types")
    f = importlib.import_module(f"{engine}.func")
    memory = importlib.import_module(f"{engine}.checkpoint.memory")
    threads = itertools.count()

    def new_thread() -> dict[str, Any]:
        return {"configurable": {"thread_id": str(next(threads))}}

    out: dict[str, Callable[[], Any]] = {}

    sub = _chain(g, [(name, _inc) for name in "abc"]).compile()

    def caller(state: State) -> dict[str, Any]:
        x = state["x"]
        for _ in range(20):
            x = sub.invoke({"x": x, "log": []})["x"]
        return {"x": x}

    nested = g.StateGraph(State)
    nested.add_node("caller", caller)
    nested.add_edge(g.START, "caller")
    nested_graph = nested.compile()
    out["nested invoke x20"] = lambda: nested_graph.invoke({"x": 0, "log": []})

    parent_graph = _chain(g, [(f"s{i}", sub) for i in range(10)]).compile()
    out["subgraph nodes, stream(subgraphs=True)"] = lambda: list(
        parent_graph.stream({"x": 0, "log": []}, stream_mode=["updates", "values"], subgraphs=True)
    )

    @f.task
    def plus_one(x: int) -> int:
        return x + 1

    @f.entrypoint()
    def tasks(x: int) -> int:
        for _ in range(50):
            x = plus_one(x).result()
        return x

    out["entrypoint, 50 tasks"] = lambda: tasks.invoke(0)

    chain = _chain(g, [(f"n{i}", _inc_logged) for i in range(30)]).compile(
        checkpointer=memory.InMemorySaver()
    )

    def saved_chain() -> dict[str, Any]:
        config = new_thread()
        chain.invoke({"x": 0, "log": []}, config)
        return config

    out["chain of 30, InMemorySaver"] = saved_chain
    done = saved_chain()
    out["get_state x31"] = lambda: [chain.get_state(done) for _ in range(31)]
    out["get_state_history (31)"] = lambda: list(chain.get_state_history(done))

    def ask(state: State) -> dict[str, Any]:
        return {"x": state["x"] + (1 if t.interrupt({"question": state["x"]}) else 0)}

    ib = g.StateGraph(State)
    ib.add_node("ask", ask)
    ib.add_edge(g.START, "ask")
    ib.add_conditional_edges("ask", lambda s: "ask" if s["x"] < 10 else g.END, ["ask", g.END])
    asking = ib.compile(checkpointer=memory.InMemorySaver())

    def interrupt_resume() -> None:
        config = new_thread()
        asking.invoke({"x": 0, "log": []}, config)
        for _ in range(10):
            asking.invoke(t.Command(resume=True), config)

    out["interrupt + resume x10"] = interrupt_resume

    def edits() -> None:
        config = saved_chain()
        for i in range(10):
            config = chain.update_state(config, {"x": i})

    out["chain of 30 + update_state x10"] = edits

    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage

    agent = create_agent(_BindableModel(turns=10), [add], checkpointer=memory.InMemorySaver())
    if engine == "lgnb":
        agent = g.from_langgraph(agent)
    out["create_agent, 10 tool calls, saved"] = lambda: [
        (m.type, m.content) for m in agent.invoke(
            {"messages": [HumanMessage("Add things up.", id="human-0")]}, new_thread())["messages"]
    ]
    return out


def floors() -> dict[str, Callable[[], Any]]:
    """Plain-Python floors of the shapes whose node work is not trivial: the same model and
    tool calls, no engine. The overhead ratio subtracts the floor from both engines."""
    from langchain_core.messages import HumanMessage

    model = _BindableModel(turns=10)

    def agent_floor() -> list[Any]:
        messages: list[Any] = [HumanMessage("Add things up.", id="human-0")]
        while True:
            reply = model.invoke(messages)
            messages = [*messages, reply]
            if not reply.tool_calls:
                return messages
            messages = [*messages, *(add.invoke(call) for call in reply.tool_calls)]

    return {"create_agent, 10 tool calls, saved": agent_floor}


def _check(built: dict[str, dict[str, Callable[[], Any]]]) -> list[str]:
    """Shapes whose results differ between the engines (a faster engine doing less is
    not faster)."""
    wrong = []
    for name, target in built["lgnb"].items():
        ours, theirs = target(), built["langgraph"][name]()
        if name == "subgraph nodes, stream(subgraphs=True)":
            ours, theirs = len(ours), len(theirs)
        if name.startswith("get_state"):
            ours, theirs = [s.values for s in ours], [s.values for s in theirs]
        if ours != theirs:
            wrong.append(name)
    return wrong


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--only", default="", help="comma-separated substrings of shape names")
    args = ap.parse_args()
    engines = ("langgraph", "lgnb")
    built = {e: shapes(e) for e in engines}
    names = [n for n in built["lgnb"] if not args.only or any(o in n for o in args.only.split(","))]
    for e in engines:  # warm up: imports, caches, the pools' threads
        for n in names:
            built[e][n]()
            built[e][n]()
    if wrong := _check(built):
        print(f"Result mismatches: {', '.join(wrong)}")
    built["floor"] = {n: f for n, f in floors().items() if n in names}
    runs = [(e, n) for n in names for e in (*engines, "floor") if n in built[e]]
    cpu: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    wall: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    for _ in range(args.rounds):
        for e, n in runs:
            gc.collect()
            w0, c0 = time.perf_counter(), time.process_time()
            built[e][n]()
            cpu[(e, n)].append(time.process_time() - c0)
            wall[(e, n)].append(time.perf_counter() - w0)
    print(f"# medians of {args.rounds} interleaved rounds, ms per run; ratio = lgnb / LangGraph (goal 0.10)")
    print(f"{'shape':40s} {'CPU LangGraph':>13s} {'CPU lgnb':>9s} {'ratio':>6s}   {'wall LangGraph':>14s} {'wall lgnb':>9s} {'ratio':>6s}")
    for n in names:
        c_lg, c_ours = (statistics.median(cpu[(e, n)]) * 1e3 for e in engines)
        w_lg, w_ours = (statistics.median(wall[(e, n)]) * 1e3 for e in engines)
        print(f"{n:40s} {c_lg:13.2f} {c_ours:9.2f} {c_ours / c_lg:6.3f}   {w_lg:14.2f} {w_ours:9.2f} {w_ours / w_lg:6.3f}")
    for n in built["floor"]:
        c_lg, c_ours, c_floor = (statistics.median(cpu[(e, n)]) * 1e3 for e in (*engines, "floor"))
        print(f"# {n}: plain loop {c_floor:.2f} ms CPU; overhead lgnb / LangGraph "
              f"{(c_ours - c_floor) / (c_lg - c_floor):.3f}")


if __name__ == "__main__":
    main()

"""A finished run leaves nothing for Python's cyclic garbage collector.

Why users care: whatever a run builds per task (its context, config, runtime, the input
state it read, the messages it wrote) is freed by reference counting the moment the run
no longer needs it, not whenever the cyclic GC next runs. Objects caught in a reference
cycle wait for a collection (long states and large tool outputs with them), and a run that
makes a cycle per task makes the collector run every few steps, walking them all: on a
ReAct loop that was ~12k instructions per node (`bench/README.md`, twenty-sixth session).
LangGraph 1.2's runs leave none either.

Each scenario runs twice to warm every cache and lazy import, then once more with the
collector off; the objects a collection then finds are what that run left in cycles.
The scenarios run in this process (LangGraph loaded, so tasks get LangGraph's config keys
too) and the ones whose config differs without LangGraph, by
`test_a_run_without_langgraph_loaded_leaves_no_cycles`, in a fresh interpreter without it.

Interrupts are covered (`interrupt()` and its resume, alone, two in one step, inside a
subgraph, in an `@task`; a static `interrupt_before`), on every run API: the run swallows
them, so a cycle through an interrupt's traceback kept the whole run's state, its
channels and messages, until a full collection (the loop object is old by then). A retry
that then succeeds is covered too. Not covered: a node error that reaches the caller or
an error handler: its traceback, which the handler may format, holds the frames it left,
as any Python exception's does.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import operator
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.checkpoint.postgres import PostgresSaver
from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver
from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.config import get_config, get_stream_writer
from lgnb.func import entrypoint, task
from lgnb.graph import END, START, StateGraph, add_messages
from lgnb.types import Command, RetryPolicy, Send, interrupt


class State(TypedDict):
    messages: Annotated[list, add_messages]
    out: Annotated[list, operator.add]
    n: int


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _model() -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(f"reply {i}") for i in range(10_000)]))


def _agent_graph(checkpointer: Any = None) -> Any:
    """Nodes that read the task's config the ways users' nodes do: a chat model and a
    tool invoked inside the node (LangChain's config inherited), `get_config()`, a
    `config` parameter, a custom event."""
    model = _model()

    def agent(state: State) -> dict:
        get_stream_writer()({"progress": len(state["messages"])})
        return {"messages": [model.invoke(state["messages"])], "n": state["n"] + 1}

    def tools(state: State, config: RunnableConfig) -> dict:
        assert config["metadata"]["langgraph_node"] == "tools"
        assert get_config()["configurable"]["checkpoint_ns"]
        return {"out": [add.invoke({"a": state["n"], "b": 1})]}

    b = StateGraph(State)
    b.add_node("agent", agent)
    b.add_node("tools", tools)
    b.add_edge(START, "agent")
    b.add_conditional_edges("agent", lambda s: "tools" if s["n"] < 3 else END, ["tools", END])
    b.add_edge("tools", "agent")
    return b.compile(checkpointer=checkpointer)


def _fan_out_graph() -> Any:
    def work(arg: dict) -> dict:
        return {"out": [add.invoke({"a": arg["i"], "b": 1})]}

    b = StateGraph(State)
    b.add_node("work", work)
    b.add_conditional_edges(START, lambda s: [Send("work", {"i": i}) for i in range(4)])
    b.add_edge("work", END)
    return b.compile()


def _parent_graph() -> Any:
    b = StateGraph(State)
    b.add_node("inner", _agent_graph())
    b.add_edge(START, "inner")
    return b.compile()


@task
def double(x: int) -> int:
    return 2 * x


@task
async def adouble(x: int) -> int:
    return 2 * x


def _functional() -> tuple[Any, Any]:
    """An `@entrypoint` calling `@task`s (futures resolved in the entrypoint), and its
    async twin, each on an InMemorySaver."""

    @entrypoint(checkpointer=InMemorySaver())
    def flow(n: int) -> list:
        return [f.result() for f in [double(i) for i in range(n)]]

    @entrypoint(checkpointer=InMemorySaver())
    async def aflow(n: int) -> list:
        return list(await asyncio.gather(*[adouble(i) for i in range(n)]))

    return flow, aflow


def _reviewed_flow() -> Any:
    """An `@entrypoint` whose `@task` asks for approval."""

    @task
    def draft(x: int) -> int:
        return interrupt({"approve": x})

    @entrypoint(checkpointer=InMemorySaver())
    def flow(x: int) -> int:
        return draft(x).result()

    return flow


def _review_graphs() -> dict[str, Any]:
    """Graphs that stop for a human: one `interrupt()`, two in one step, one inside a
    subgraph, a static breakpoint; each on an InMemorySaver."""

    def ask(state: State) -> dict:
        return {"n": interrupt({"question": "approve?", "draft": state["messages"][-1].content})}

    def ask_too(state: State) -> dict:
        return {"out": [interrupt("and this?")]}

    def step(state: State) -> dict:
        return {"n": state["n"] + 1}

    one = StateGraph(State)
    one.add_node("ask", ask)
    one.add_edge(START, "ask")
    two = StateGraph(State)
    two.add_node("ask", ask)
    two.add_node("ask_too", ask_too)
    two.add_edge(START, "ask")
    two.add_edge(START, "ask_too")
    parent = StateGraph(State)
    parent.add_node("inner", one.compile())
    parent.add_edge(START, "inner")
    breakpoint = StateGraph(State)
    breakpoint.add_node("first", step)
    breakpoint.add_node("second", step)
    breakpoint.add_edge(START, "first")
    breakpoint.add_edge("first", "second")
    return {
        "one": one.compile(checkpointer=InMemorySaver()),
        "two": two.compile(checkpointer=InMemorySaver()),
        "subgraph": parent.compile(checkpointer=InMemorySaver()),
        "breakpoint": breakpoint.compile(checkpointer=InMemorySaver(), interrupt_before=["second"]),
    }


def _answer(graph: Any, config: dict) -> Command:
    """The resume a reviewer's form sends: one value, or one per pending interrupt."""
    pending = graph.get_state(config).interrupts
    if len(pending) > 1:
        return Command(resume={i.id: 1 for i in pending})
    return Command(resume=1)


def _retrying_graph() -> Any:
    """A node that fails once (a dropped connection), retried, then succeeds."""
    calls = [0]

    def flaky(state: State) -> dict:
        calls[0] += 1
        if calls[0] % 2:
            raise ConnectionError("dropped")
        return {"n": state["n"] + 1}

    b = StateGraph(State)
    b.add_node("flaky", flaky, retry_policy=RetryPolicy(initial_interval=0.0001, jitter=False))
    b.add_edge(START, "flaky")
    return b.compile()


def _input() -> dict:
    return {"messages": [HumanMessage("hi")], "out": [], "n": 0}


def _scenarios(tmp: Path) -> dict[str, Callable[[], Any]]:
    """Name -> a callable doing one run (graphs built once, outside the measured run)."""
    agent, fan, parent = _agent_graph(), _fan_out_graph(), _parent_graph()
    memory = _agent_graph(InMemorySaver())
    sqlite = _agent_graph(SqliteSaver(sqlite3.connect(tmp / "cycles.db", check_same_thread=False)))
    flow, aflow = _functional()
    review, reviews, retrying = _reviewed_flow(), _review_graphs(), _retrying_graph()
    loop = asyncio.new_event_loop()
    opened = AsyncSqliteSaver.from_conn_string(str(tmp / "cycles-async.db"))
    async_sqlite = _agent_graph(loop.run_until_complete(opened.__aenter__()))
    threads = iter(range(1_000_000))

    def thread() -> dict:
        return {"configurable": {"thread_id": f"t{next(threads)}"}}

    async def collect(agen: Any) -> list:
        return [chunk async for chunk in agen]

    modes = ["values", "updates", "custom", "messages", "tasks", "checkpoints", "debug"]
    return {
        "invoke": lambda: agent.invoke(_input()),
        "stream, every mode": lambda: list(agent.stream(_input(), stream_mode=modes)),
        "invoke, Send fan-out": lambda: fan.invoke(_input()),
        "invoke, subgraph": lambda: parent.invoke(_input()),
        "stream, subgraphs": lambda: list(parent.stream(_input(), subgraphs=True, stream_mode=modes)),
        "invoke, InMemorySaver": lambda: memory.invoke(_input(), thread()),
        "invoke, SqliteSaver": lambda: sqlite.invoke(_input(), thread()),
        "state history": lambda: list(memory.get_state_history(_last_thread(memory, thread))),
        "ainvoke": lambda: loop.run_until_complete(agent.ainvoke(_input())),
        "astream, every mode": lambda: loop.run_until_complete(
            collect(agent.astream(_input(), stream_mode=modes))),
        "astream_events": lambda: loop.run_until_complete(
            collect(agent.astream_events(_input(), version="v2"))),
        "astream, AsyncSqliteSaver": lambda: loop.run_until_complete(
            collect(async_sqlite.astream(_input(), thread(), stream_mode=["updates", "messages"]))),
        "functional API": lambda: flow.invoke(3, thread()),
        "functional API, async": lambda: loop.run_until_complete(aflow.ainvoke(3, thread())),
        "invoke, a retry that succeeds": lambda: retrying.invoke(_input()),
        "ainvoke, a retry that succeeds": lambda: loop.run_until_complete(retrying.ainvoke(_input())),
        "functional API, interrupt and resume": lambda: _reviewed(
            lambda i, c: review.invoke(i, c), 3, None, thread()),
        **{
            f"{api}, {name} interrupt and resume": _review_scenario(graph, api, loop, thread, collect)
            for name, graph in reviews.items()
            for api in ("invoke", "stream", "ainvoke", "astream")
        },
        # (`opened` stays referenced by this closure: its connection stays open)
        "_keep": lambda: opened,
    }


def _review_scenario(graph: Any, api: str, loop: Any, thread: Callable[[], dict], collect: Any
                     ) -> Callable[[], Any]:
    """A run up to its interrupts, then the reviewer's resume, through `api`."""
    modes = ["updates", "messages", "custom"]
    run: Callable[[Any, dict], Any] = {
        "invoke": lambda i, c: graph.invoke(i, c),
        "stream": lambda i, c: list(graph.stream(i, c, stream_mode=modes)),
        "ainvoke": lambda i, c: loop.run_until_complete(graph.ainvoke(i, c)),
        "astream": lambda i, c: loop.run_until_complete(collect(graph.astream(i, c, stream_mode=modes))),
    }[api]
    return lambda: _reviewed(run, _input(), graph, thread())


def _reviewed(run: Callable[[Any, dict], Any], first: Any, graph: Any, config: dict) -> None:
    run(first, config)
    run(_answer(graph, config) if graph is not None else Command(resume=1), config)


def _last_thread(graph: Any, thread: Callable[[], dict]) -> dict:
    config = thread()
    graph.invoke(_input(), config)
    return config


def _kind(obj: object) -> str:
    """A garbage object's type; a function's, its qualified name (what made the cycle)."""
    if callable(obj) and hasattr(obj, "__qualname__") and hasattr(obj, "__module__"):
        return f"{type(obj).__qualname__} {obj.__module__}.{obj.__qualname__}"
    return type(obj).__qualname__


def left_in_cycles(run: Callable[[], Any]) -> dict[str, int]:
    """What one call of `run` (warmed up twice first) leaves for the cyclic GC, by type.

    Only objects the call created count: in a shared test process, something an earlier
    test left (a graph a finishing background thread still held) may become garbage
    while `run` runs, and is not `run`'s."""
    run()
    run()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    older = {id(o) for o in gc.get_objects()}
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        found = collections.Counter(_kind(o) for o in gc.garbage if id(o) not in older)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    return dict(found.most_common())


SCENARIOS = [
    "invoke", "stream, every mode", "invoke, Send fan-out", "invoke, subgraph",
    "stream, subgraphs", "invoke, InMemorySaver", "invoke, SqliteSaver", "state history",
    "ainvoke", "astream, every mode", "astream_events", "astream, AsyncSqliteSaver",
    "functional API", "functional API, async",
    "invoke, a retry that succeeds", "ainvoke, a retry that succeeds",
    "functional API, interrupt and resume",
    *(f"{api}, {name} interrupt and resume"
      for name in ("one", "two", "subgraph", "breakpoint")
      for api in ("invoke", "stream", "ainvoke", "astream")),
]


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Callable[[], Any]]:
    import langgraph.pregel.main  # noqa: F401 - tasks then get LangGraph's keys as well

    return _scenarios(tmp_path_factory.mktemp("cycles"))


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_finished_run_leaves_no_reference_cycles(name: str, scenarios: dict) -> None:
    assert sorted(scenarios) == sorted([*SCENARIOS, "_keep"])
    assert left_in_cycles(scenarios[name]) == {}


def test_runs_on_postgres_savers_leave_no_reference_cycles(postgres_url: str) -> None:
    loop = asyncio.new_event_loop()
    threads = iter(range(1_000_000))

    def thread() -> dict:
        return {"configurable": {"thread_id": f"cycles-{uuid.uuid4()}-{next(threads)}"}}

    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        graph = _agent_graph(saver)
        assert left_in_cycles(lambda: graph.invoke(_input(), thread())) == {}
    opened = AsyncPostgresSaver.from_conn_string(postgres_url)
    saver = loop.run_until_complete(opened.__aenter__())
    try:
        loop.run_until_complete(saver.setup())
        graph = _agent_graph(saver)
        assert left_in_cycles(lambda: loop.run_until_complete(graph.ainvoke(_input(), thread()))) == {}
    finally:
        loop.run_until_complete(opened.__aexit__(None, None, None))
        loop.close()


WITHOUT_LANGGRAPH = [
    "invoke", "stream, every mode", "invoke, subgraph", "ainvoke", "astream, every mode",
    "invoke, one interrupt and resume", "astream, subgraph interrupt and resume",
    "functional API, interrupt and resume",
]
"""The shapes run again in a fresh interpreter: the ones whose tasks build a config (what
LangGraph being loaded changes), on each run API, with and without an interrupt."""


def test_a_run_without_langgraph_loaded_leaves_no_cycles(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, __file__, str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report.pop("langgraph loaded") is False
    assert report == {name: {} for name in WITHOUT_LANGGRAPH}


if __name__ == "__main__":  # the fresh interpreter of the test above
    runs = _scenarios(Path(sys.argv[1]))
    found = {name: left_in_cycles(runs[name]) for name in WITHOUT_LANGGRAPH}
    found["langgraph loaded"] = "langgraph.pregel.main" in sys.modules  # type: ignore[assignment]
    print(json.dumps(found))

"""What a user sees in LangSmith: the run tree LangChain's tracers build from a graph's callbacks.

Users trace their LangGraph programs with LangSmith; what they see there is the tree of runs
a LangChain tracer assembles from the callbacks the engine emits (`on_chain_start`, `_end`,
`_error`, and those of the models and tools the nodes call). These scenarios trace a program
with a local tracer (`config={"callbacks": [recorder]}`, no network) and compare the tree
with LangGraph's, projected to what LangSmith shows and what is deterministic:

* each run: name, run type, tags (the volatile ones dropped: none are today), the
  `langgraph_*` metadata (`langgraph_node`, `_step`, `_triggers`, `_path`,
  `_checkpoint_ns` with task ids normalized by the harness), the user's own metadata
  keys, the error class if the run failed, and its inputs and outputs where they are
  stable (state dicts and messages: the harness normalizes message and run ids);
* children in start order, except the tasks of one graph step (the runs tagged
  `graph:step:N`): LangGraph starts the parallel tasks of a sync run in a thread pool, in
  no fixed order, so they compare as a sorted multiset per step (LangSmith sorts them by
  start time anyway). The `@task` calls of an entrypoint start in worker threads too and
  compare the same way (`_group`).

Programs: chains, conditional edges (the router is a run of its own, a child of the node),
parallel branches, `Send` map-reduce, subgraphs (as nodes, invoked in nodes, on their own
thread), a ReAct agent with a fake chat model and `ToolNode`, `create_agent`, the
functional API, failures, retries, interrupts, every way of running (`invoke`, `stream`,
`ainvoke`, `astream`, `astream_events`), run names, tags and metadata from the config and
`.with_config`.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import operator
from typing import Annotated, Any

import pytest
from _diff import Normalizer, acollect, collect
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.tracers.base import BaseTracer
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

# ---------------------------------------------------------------------------------------
# the tracer and the projection
# ---------------------------------------------------------------------------------------


class Recorder(BaseTracer):
    """A local tracer: keeps every root run (with its tree of child runs) it finishes,
    as LangSmith's tracer posts them."""

    def __init__(self) -> None:
        super().__init__()
        self.roots: list = []
        self.errors: dict = {}  # run id -> the class of the exception it ended with

    def _persist_run(self, run: Any) -> None:
        self.roots.append(run)

    def on_chain_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> Any:
        self.errors[run_id] = type(error).__name__
        return super().on_chain_error(error, run_id=run_id, **kwargs)

    def on_tool_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> Any:
        self.errors[run_id] = type(error).__name__
        return super().on_tool_error(error, run_id=run_id, **kwargs)

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> Any:
        self.errors[run_id] = type(error).__name__
        return super().on_llm_error(error, run_id=run_id, **kwargs)


# metadata LangSmith shows that is the same on every run of a program
LANGGRAPH_META = (
    "langgraph_node",
    "langgraph_step",
    "langgraph_triggers",
    "langgraph_path",
    "langgraph_checkpoint_ns",
    "checkpoint_ns",
)
# metadata that is not the engine's: the run's address and what the user gave
PASSED_META = ("thread_id", "ls_integration", "user", "team", "kind")


def _meta(run: Any) -> dict:
    return (run.extra or {}).get("metadata") or {}


def _group(run: Any, parent: Any) -> str | None:
    """Which unordered group a child run belongs to: the tasks of a graph step (tagged
    `graph:step:N`), or the `@task` calls of an entrypoint (runs of another
    `langgraph_node` than their parent's, pushed by it: a sync entrypoint's run in a
    thread pool); None for a run in a sequence (start order)."""
    tag = next((t for t in run.tags or () if t.startswith("graph:step:")), None)
    if tag is not None:
        return tag
    md = _meta(run)
    if md.get("langgraph_triggers") == ("__pregel_push",) and md.get(
            "langgraph_node") != _meta(parent).get("langgraph_node"):
        return "task calls"
    return None


def project(run: Any, n: Normalizer, errors: dict, *, io: bool = True) -> tuple:
    """One run as LangSmith shows it: (name, type, tags, metadata, error, [io], children)."""
    md = _meta(run)
    meta = {k: md[k] for k in (*LANGGRAPH_META, *PASSED_META) if k in md}
    error = errors.get(run.id, "?") if run.error else None
    node: tuple = (run.name, run.run_type, sorted(run.tags or ()), n(meta), error)
    if io:
        node += (n(run.inputs), n(run.outputs))
    return (*node, _children(run, n, errors, io=io))


def _children(run: Any, n: Normalizer, errors: dict, *, io: bool) -> list:
    """Children in start order; the tasks of one graph step as a sorted multiset (sorted
    on their projection with ids normalized per run, then projected in that order so the
    id placeholders do not depend on which thread started first)."""
    kids = sorted(run.child_runs, key=lambda r: r.dotted_order or "")
    out: list = []
    group: list = []
    key: str | None = None

    def flush() -> None:
        if group:
            assert key is not None
            ordered = sorted(group, key=lambda k: repr(project(k, Normalizer(), errors, io=io)))
            out.append((key, [project(k, n, errors, io=io) for k in ordered]))
            group.clear()

    for kid in kids:
        kid_key = _group(kid, run)
        if group and kid_key != key:
            flush()
        if kid_key is None:
            out.append(project(kid, n, errors, io=io))
        else:
            key = kid_key
            group.append(kid)
    flush()
    return out


def tree(recorder: Recorder, *, io: bool = True) -> list:
    """The recorder's root runs, projected (ids normalized across the whole forest)."""
    n = Normalizer()
    return [project(r, n, recorder.errors, io=io) for r in recorder.roots]


def traced(call: Any, *, io: bool = True, **cfg: Any) -> tuple:
    """`call(config)` with a fresh recorder in the config: (result, projected tree)."""
    rec = Recorder()
    config = {**cfg, "callbacks": [rec]}
    try:
        result = call(config)
    except Exception as e:  # the run failed: its tree still records where
        result = ("raises", type(e).__name__)
    return result, tree(rec, io=io)


async def atraced(call: Any, *, io: bool = True, **cfg: Any) -> tuple:
    rec = Recorder()
    config = {**cfg, "callbacks": [rec]}
    try:
        result = await call(config)
    except Exception as e:
        result = ("raises", type(e).__name__)
    return result, tree(rec, io=io)


# ---------------------------------------------------------------------------------------
# programs
# ---------------------------------------------------------------------------------------


class S(TypedDict):
    log: Annotated[list, operator.add]


def _appender(name: str):
    def node(state: S) -> dict:
        return {"log": [name]}

    node.__name__ = name
    return node


def chain3(E: Any, **compile_kw: Any) -> Any:
    g = E.StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, _appender(name))
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile(**compile_kw)


def routed(E: Any) -> Any:
    def route_after_a(state: S) -> str:
        return "b" if len(state["log"]) < 2 else "c"

    g = E.StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, _appender(name))
    g.add_edge(E.START, "a")
    g.add_conditional_edges("a", route_after_a, ["b", "c"])
    g.add_edge("b", "a")
    return g.compile()


def fanout(E: Any) -> Any:
    g = E.StateGraph(S)
    for name in ("a", "b1", "b2", "b3", "c"):
        g.add_node(name, _appender(name))
    g.add_edge(E.START, "a")
    for b in ("b1", "b2", "b3"):
        g.add_edge("a", b)
    g.add_edge(["b1", "b2", "b3"], "c")
    return g.compile()


def map_reduce(E: Any) -> Any:
    class MR(TypedDict):
        topics: list
        jokes: Annotated[list, operator.add]

    def plan(state: MR) -> dict:
        return {}

    def fan(state: MR) -> list:
        return [E.Send("joke", {"topic": t}) for t in state["topics"]]

    def joke(arg: dict) -> dict:
        return {"jokes": [f"joke about {arg['topic']}"]}

    def best(state: MR) -> dict:
        return {"jokes": ["best"]}

    g = E.StateGraph(MR)
    g.add_node("plan", plan)
    g.add_node("joke", joke)
    g.add_node("best", best)
    g.add_edge(E.START, "plan")
    g.add_conditional_edges("plan", fan, ["joke"])
    g.add_edge("joke", "best")
    return g.compile()


def sub_as_node(E: Any, **compile_kw: Any) -> Any:
    sub = E.StateGraph(S)
    sub.add_node("inner1", _appender("inner1"))
    sub.add_node("inner2", _appender("inner2"))
    sub.add_edge(E.START, "inner1")
    sub.add_edge("inner1", "inner2")
    g = E.StateGraph(S)
    g.add_node("before", _appender("before"))
    g.add_node("sub", sub.compile(name="inner_graph"))
    g.add_node("after", _appender("after"))
    g.add_edge(E.START, "before")
    g.add_edge("before", "sub")
    g.add_edge("sub", "after")
    return g.compile(**compile_kw)


def sub_in_node(E: Any, *, is_async: bool = False, own_thread: bool = False) -> Any:
    sub = E.StateGraph(S)
    sub.add_node("inner1", _appender("inner1"))
    sub.add_node("inner2", _appender("inner2"))
    sub.add_edge(E.START, "inner1")
    sub.add_edge("inner1", "inner2")
    helper = sub.compile(
        name="helper", checkpointer=E.InMemorySaver() if own_thread else None)
    helper_cfg = {"configurable": {"thread_id": "helper"}} if own_thread else None

    if is_async:
        async def call_helper(state: S) -> dict:
            out = await helper.ainvoke({"log": ["in"]}, helper_cfg)
            return {"log": out["log"]}
    else:
        def call_helper(state: S) -> dict:  # type: ignore[misc]
            out = helper.invoke({"log": ["in"]}, helper_cfg)
            return {"log": out["log"]}

    g = E.StateGraph(S)
    g.add_node("before", _appender("before"))
    g.add_node("call_helper", call_helper)
    g.add_edge(E.START, "before")
    g.add_edge("before", "call_helper")
    return g.compile(checkpointer=E.InMemorySaver() if own_thread else None)


CFG = {"configurable": {"thread_id": "t1"}}


# ---------------------------------------------------------------------------------------
# graphs
# ---------------------------------------------------------------------------------------


def test_three_node_chain_is_one_graph_run_with_a_run_per_node(differential):
    """A user traces `a -> b -> c`: one `LangGraph` chain run whose children are the three
    node runs, one per step, with their step, node, triggers and path metadata."""

    def scenario(E):
        app = chain3(E)
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_a_graph_a_chain_invokes_without_config_runs_under_the_chains_run(differential):
    """`RunnableLambda(lambda x: app.invoke(...))` called with a tracer, tags, metadata and a
    recursion limit, the graph invoked without a config: LangChain's ambient config carries
    them, so the graph's run nests under the lambda's and its nodes see the limit."""
    from langchain_core.runnables import RunnableLambda

    def scenario(E):
        app = chain3(E)
        seen = []

        def call(x):
            out = app.invoke({"log": []})
            seen.append(len(out["log"]))
            return out

        lam = RunnableLambda(call, name="wrapper")

        def probe(state, config):
            seen.append((config.get("recursion_limit"), sorted(config.get("tags") or []),
                         (config.get("metadata") or {}).get("user")))
            return {}

        g = E.StateGraph(S)
        g.add_node("probe", probe)
        g.add_edge(E.START, "probe")
        probe_app = g.compile()
        probed = RunnableLambda(lambda x: probe_app.invoke({"log": []}), name="prober")
        result = traced(lambda c: lam.invoke(1, c))
        probed.invoke(1, {"tags": ["mine"], "metadata": {"user": "u1"}, "recursion_limit": 7})
        return result, seen

    differential(scenario)


def test_three_node_chain_traced_while_streaming_updates(differential):
    """The same chain run with `stream(stream_mode="updates")`: the same tree."""

    def scenario(E):
        app = chain3(E)
        return traced(lambda c: collect(lambda: app.stream({"log": []}, c, stream_mode="updates")))

    differential(scenario)


def test_three_node_chain_traced_with_ainvoke(differential):
    async def scenario(E):
        app = chain3(E)
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def test_three_node_chain_traced_while_astreaming_values(differential):
    async def scenario(E):
        app = chain3(E)
        return await atraced(lambda c: acollect(lambda: app.astream({"log": []}, c, stream_mode="values")))

    differential(scenario)


def test_three_node_chain_traced_under_astream_events(differential):
    """A user's tracer passed to `astream_events`: the tree LangSmith shows is LangGraph's
    (the events themselves are compared by the stream suites; here only their count)."""

    async def scenario(E):
        return await traced_events(chain3(E), {"log": []})

    ref = differential(scenario)
    assert ref[1][0][0] == "LangGraph"


async def traced_events(app: Any, inp: Any, **cfg: Any) -> tuple:
    """`astream_events(v2)` with a recorder in its config: (number of events, tree)."""
    return await atraced(lambda c: _count(acollect(lambda: app.astream_events(inp, c, version="v2"))), **cfg)


def test_checkpointed_chain_records_the_thread_id_on_every_run(differential):
    """With a checkpointer and a thread, every run carries `thread_id` (LangSmith groups
    the thread's traces by it) and the graph run's `checkpoint_ns` metadata."""

    def scenario(E):
        app = chain3(E, checkpointer=E.InMemorySaver())
        return traced(lambda c: app.invoke({"log": []}, c), **CFG)

    differential(scenario)


def test_conditional_edge_router_is_a_run_under_its_source_node(differential):
    """`add_conditional_edges("a", route_after_a)`: the router shows as a chain run named
    after the function, a child of node `a`'s run, once per time `a` runs."""

    def scenario(E):
        app = routed(E)
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_conditional_edge_router_traced_in_an_async_run(differential):
    async def scenario(E):
        app = routed(E)
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def test_lambda_router_and_async_router_runs(differential):
    """A lambda router and an `async def` router (awaited in an async run): their run
    names are LangChain's (`<lambda>`, the function's name)."""

    async def scenario(E):
        async def pick(state: S) -> str:
            return "c"

        g = E.StateGraph(S)
        for name in ("a", "b", "c"):
            g.add_node(name, _appender(name))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "b", ["b"])
        g.add_conditional_edges("b", pick, ["c"])
        app = g.compile()
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def test_parallel_branches_are_siblings_of_one_step(differential):
    """`a` fans out to `b1`, `b2`, `b3`, which join into `c`: the three branch runs are
    children of the graph run in step 2 (compared as a multiset: LangGraph starts them
    in a thread pool)."""

    def scenario(E):
        app = fanout(E)
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_parallel_branches_traced_in_an_async_run(differential):
    """The parallel step's updates arrive as b1, b2 and b3 finish: in an async run
    LangGraph runs sync nodes in executor threads, so that order is the threads' (it
    varies under load, and on Python 3.13): compared as a set, between `a` and `c`."""

    async def scenario(E):
        app = fanout(E)
        chunks, runs = await atraced(lambda c: acollect(lambda: app.astream({"log": []}, c)))
        return [chunks[0], sorted(chunks[1:4], key=repr), *chunks[4:]], runs

    differential(scenario)


def test_send_map_reduce_one_run_per_send_with_its_own_input(differential):
    """`Send("joke", {"topic": t})` per topic: one `joke` run per Send, its input the
    Send's argument, its path `("__pregel_push", i, ...)`, and the fan-out function a run
    under `plan`."""

    def scenario(E):
        app = map_reduce(E)
        return traced(lambda c: app.invoke({"topics": ["cats", "dogs", "owls"], "jokes": []}, c))

    differential(scenario)


def test_send_map_reduce_traced_with_ainvoke(differential):
    async def scenario(E):
        app = map_reduce(E)
        return await atraced(lambda c: app.ainvoke({"topics": ["cats", "dogs"], "jokes": []}, c))

    differential(scenario)


def test_command_goto_from_a_node(differential):
    """A node returning `Command(update=..., goto="c")`: the node's run records the
    command as its output, `c` runs in the next step."""

    def scenario(E):
        def a(state: S):
            return E.Command(update={"log": ["a"]}, goto="c")

        g = E.StateGraph(S)
        g.add_node("a", a, destinations=("b", "c"))
        g.add_node("b", _appender("b"))
        g.add_node("c", _appender("c"))
        g.add_edge(E.START, "a")
        app = g.compile()
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# subgraphs
# ---------------------------------------------------------------------------------------


def test_subgraph_added_as_a_node_nests_its_graph_run_under_the_node(differential):
    """`g.add_node("sub", compiled_sub)`: the node's run is the subgraph's graph run
    (named `sub`), its nodes' runs are its children, with the subgraph's checkpoint ns."""

    def scenario(E):
        app = sub_as_node(E)
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_subgraph_added_as_a_node_checkpointed(differential):
    def scenario(E):
        app = sub_as_node(E, checkpointer=E.InMemorySaver())
        return traced(lambda c: app.invoke({"log": []}, c), **CFG)

    differential(scenario)


def test_subgraph_added_as_a_node_streamed_with_subgraphs(differential):
    def scenario(E):
        app = sub_as_node(E)
        return traced(lambda c: collect(lambda: app.stream({"log": []}, c, subgraphs=True)))

    differential(scenario)


def test_subgraph_added_as_a_node_astreamed(differential):
    async def scenario(E):
        app = sub_as_node(E)
        return await atraced(lambda c: acollect(
            lambda: app.astream({"log": []}, c, stream_mode=["updates", "values"], subgraphs=True)))

    differential(scenario)


def test_subgraph_invoked_inside_a_sync_node(differential):
    """A node calls `helper.invoke(...)`: the helper's graph run (named after
    `compile(name=)`) is a child of the node's run, its nodes under it."""

    def scenario(E):
        app = sub_in_node(E)
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_subgraph_invoked_inside_an_async_node(differential):
    async def scenario(E):
        app = sub_in_node(E, is_async=True)
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def test_sync_subgraph_invoked_in_a_node_of_an_async_run(differential):
    async def scenario(E):
        app = sub_in_node(E)
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def test_sub_agent_on_its_own_thread_inside_a_node(differential):
    """A sub-agent with its own checkpointer invoked on thread `helper` inside a node:
    its graph run still nests under the calling node, carrying its own thread id."""

    def scenario(E):
        app = sub_in_node(E, own_thread=True)
        return traced(lambda c: app.invoke({"log": []}, c), **CFG)

    differential(scenario)


def test_sub_agent_on_its_own_thread_inside_an_async_node(differential):
    async def scenario(E):
        app = sub_in_node(E, is_async=True, own_thread=True)
        return await atraced(lambda c: app.ainvoke({"log": []}, c), **CFG)

    differential(scenario)


# ---------------------------------------------------------------------------------------
# agents
# ---------------------------------------------------------------------------------------


class ToolModel(FakeMessagesListChatModel):
    """Replies in order; `bind_tools` returns itself (the fake has no tool support)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
def lookup(city: str) -> str:
    """Look up the weather in a city."""
    return f"sunny in {city}"


def _replies() -> list:
    return [
        AIMessage("", id="ai1", tool_calls=[{"name": "lookup", "args": {"city": "Paris"}, "id": "call1"}]),
        AIMessage("It is sunny.", id="ai2"),
    ]


def react(E: Any) -> Any:
    from langgraph.graph.message import add_messages

    class M(TypedDict):
        messages: Annotated[list, add_messages]

    model = ToolModel(responses=_replies()).bind_tools([lookup])

    def agent(state: M) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    g = E.StateGraph(M)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([lookup]))
    g.add_edge(E.START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile()


HI = {"messages": [HumanMessage("weather in Paris?", id="h1")]}


def test_react_agent_model_and_tool_runs_nest_under_their_nodes(differential):
    """A ReAct loop with a fake chat model and `ToolNode`: the `llm` runs under `agent`,
    the `tool` run under `tools`, `tools_condition` as a router run under `agent`."""

    def scenario(E):
        app = react(E)
        return traced(lambda c: app.invoke(HI, c))

    differential(scenario)


def test_react_agent_traced_while_streaming_messages(differential):
    def scenario(E):
        app = react(E)
        return traced(lambda c: len(collect(lambda: app.stream(HI, c, stream_mode="messages"))))

    differential(scenario)


def test_react_agent_traced_while_astreaming(differential):
    async def scenario(E):
        app = react(E)
        return await atraced(lambda c: acollect(lambda: app.astream(HI, c, stream_mode="updates")))

    differential(scenario)


def test_streaming_chat_model_in_a_node(differential):
    """A node streams a `GenericFakeChatModel`: one `llm` run under the node, its output
    the whole message."""

    def scenario(E):
        from langgraph.graph.message import add_messages

        class M(TypedDict):
            messages: Annotated[list, add_messages]

        model = GenericFakeChatModel(messages=iter([AIMessage("hello there friend", id="ai1")]))

        def chat(state: M) -> dict:
            msg = None
            for chunk in model.stream(state["messages"]):
                msg = chunk if msg is None else msg + chunk
            return {"messages": [msg]}

        g = E.StateGraph(M)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile()
        return traced(lambda c: len(collect(lambda: app.stream(HI, c, stream_mode="messages"))))

    differential(scenario)


def _create_agent():
    try:
        from langchain.agents import create_agent
    except ImportError:  # pragma: no cover - langchain not installed
        pytest.skip("langchain.agents.create_agent is not importable")
    return create_agent


def _on(E: Any, graph: Any) -> Any:
    """The library's graph on engine E: itself on LangGraph, rebuilt on lgnb."""
    if E.root == "lgnb":
        from lgnb.graph import from_langgraph

        return from_langgraph(graph)
    return graph


def test_create_agent_trace(differential):
    """`langchain.agents.create_agent(model, tools)`: the agent's `model` and `tools`
    node runs, the model's `llm` run and the tool's `tool` run, as LangGraph shows them."""
    create_agent = _create_agent()

    def scenario(E):
        agent = _on(E, create_agent(ToolModel(responses=_replies()), tools=[lookup]))
        return traced(lambda c: agent.invoke(HI, c))

    differential(scenario)


def test_create_agent_trace_async(differential):
    create_agent = _create_agent()

    async def scenario(E):
        agent = _on(E, create_agent(ToolModel(responses=_replies()), tools=[lookup]))
        return await atraced(lambda c: acollect(lambda: agent.astream(HI, c)))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# functional API
# ---------------------------------------------------------------------------------------


def functional(E: Any, *, is_async: bool = False) -> Any:
    entrypoint, task = E.func.entrypoint, E.func.task

    if is_async:
        @task
        async def double(x: int) -> int:
            return 2 * x

        @task
        async def add(x: int, y: int) -> int:
            return x + y

        @entrypoint()
        async def workflow(n: int) -> int:
            a = await double(n)
            b = await add(a, y=1)
            return b
    else:
        @task
        def double(x: int) -> int:  # type: ignore[misc]
            return 2 * x

        @task
        def add(x: int, y: int) -> int:  # type: ignore[misc]
            return x + y

        @entrypoint()
        def workflow(n: int) -> int:  # type: ignore[misc]
            a = double(n).result()
            b = add(a, y=1).result()
            return b

    return workflow


def test_functional_api_task_runs_nest_under_the_entrypoint(differential):
    """`@entrypoint` calling two `@task`s in turn: each task call is a run under the
    entrypoint's node run, its input the call's arguments by name."""

    def scenario(E):
        wf = functional(E)
        return traced(lambda c: wf.invoke(3, c))

    differential(scenario)


def test_functional_api_async_task_runs(differential):
    async def scenario(E):
        wf = functional(E, is_async=True)
        return await atraced(lambda c: wf.ainvoke(3, c))

    differential(scenario)


def test_functional_api_sync_tasks_in_parallel(differential):
    """Three task calls started before any result is read: three sibling task runs."""

    def scenario(E):
        entrypoint, task = E.func.entrypoint, E.func.task

        @task
        def square(x: int) -> int:
            return x * x

        @entrypoint()
        def wf(xs: list) -> int:
            futs = [square(x) for x in xs]
            return sum(f.result() for f in futs)

        return traced(lambda c: wf.invoke([1, 2, 3], c))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# failures, retries, interrupts
# ---------------------------------------------------------------------------------------


def failing(E: Any, *, is_async: bool = False) -> Any:
    if is_async:
        async def boom(state: S) -> dict:
            raise ValueError("boom")
    else:
        def boom(state: S) -> dict:  # type: ignore[misc]
            raise ValueError("boom")

    g = E.StateGraph(S)
    g.add_node("a", _appender("a"))
    g.add_node("boom", boom)
    g.add_edge(E.START, "a")
    g.add_edge("a", "boom")
    return g.compile()


def test_node_that_raises_records_the_error_on_its_run_and_the_graph_run(differential):
    """The failing node's run and the graph run end with the error; `a`'s run does not."""

    def scenario(E):
        app = failing(E)
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_async_node_that_raises(differential):
    async def scenario(E):
        app = failing(E, is_async=True)
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def test_node_in_a_subgraph_that_raises(differential):
    """The error is on the inner node's run, on the subgraph's run and on the graph run."""

    def scenario(E):
        def boom(state: S) -> dict:
            raise KeyError("missing")

        sub = E.StateGraph(S)
        sub.add_node("boom", boom)
        sub.add_edge(E.START, "boom")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        app = g.compile()
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_one_branch_of_parallel_branches_raises(differential):
    def scenario(E):
        def boom(state: S) -> dict:
            raise ValueError("boom")

        g = E.StateGraph(S)
        g.add_node("a", _appender("a"))
        g.add_node("boom", boom)
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "boom")
        app = g.compile()
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def retrying(E: Any, *, is_async: bool = False) -> Any:
    calls = {"n": 0}

    def flaky_sync(state: S) -> dict:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("flaky")
        return {"log": ["ok"]}

    async def flaky_async(state: S) -> dict:
        return flaky_sync(state)

    g = E.StateGraph(S)
    g.add_node("flaky", flaky_async if is_async else flaky_sync,
               retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False))
    g.add_edge(E.START, "flaky")
    return g.compile()


def test_retried_node_shows_the_failed_attempt_and_the_successful_one(differential):
    """A node with `RetryPolicy` fails once then succeeds: two sibling runs of the node in
    its step, the first with the error."""

    def scenario(E):
        app = retrying(E)
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_retried_async_node(differential):
    async def scenario(E):
        app = retrying(E, is_async=True)
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def interrupting(E: Any) -> Any:
    def ask(state: S) -> dict:
        answer = E.interrupt("name?")
        return {"log": [f"hi {answer}"]}

    g = E.StateGraph(S)
    g.add_node("a", _appender("a"))
    g.add_node("ask", ask)
    g.add_edge(E.START, "a")
    g.add_edge("a", "ask")
    return g.compile(checkpointer=E.InMemorySaver())


def test_interrupt_then_resume_two_traces(differential):
    """An `interrupt()` ends the first trace (the `ask` run records the interrupt as
    LangGraph does); `Command(resume=...)` is a second trace where `ask` runs again."""

    def scenario(E):
        app = interrupting(E)
        first = traced(lambda c: app.invoke({"log": []}, c), **CFG)
        second = traced(lambda c: app.invoke(E.Command(resume="Ann"), c), **CFG)
        return first, second

    differential(scenario)


def test_interrupt_then_resume_async_streams(differential):
    async def scenario(E):
        app = interrupting(E)
        first = await atraced(lambda c: acollect(lambda: app.astream({"log": []}, c)), **CFG)
        second = await atraced(lambda c: acollect(lambda: app.astream(E.Command(resume="Ann"), c)), **CFG)
        return first, second

    differential(scenario)


def test_interrupt_inside_a_subgraph_then_resume(differential):
    def scenario(E):
        sub = interrupting(E).builder.compile()
        g = E.StateGraph(S)
        g.add_node("sub", sub)
        g.add_edge(E.START, "sub")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = traced(lambda c: app.invoke({"log": []}, c), **CFG)
        second = traced(lambda c: app.invoke(E.Command(resume="Bo"), c), **CFG)
        return first, second

    differential(scenario)


# ---------------------------------------------------------------------------------------
# names, tags and metadata
# ---------------------------------------------------------------------------------------


def test_tags_and_metadata_from_the_config_reach_every_run(differential):
    """`config={"tags": [...], "metadata": {...}, "run_name": ...}`: the graph run is
    renamed, the tags and metadata are inherited by every node run."""

    def scenario(E):
        app = chain3(E)
        return traced(lambda c: app.invoke({"log": []}, c), tags=["prod"],
                      metadata={"user": "ann"}, run_name="my-run")

    differential(scenario)


def test_with_config_run_name_and_tags_on_the_compiled_graph(differential):
    """`app.with_config(run_name="pipeline", tags=["v2"])`: LangSmith shows the run as
    `pipeline`, tagged `v2` down the tree."""

    def scenario(E):
        app = chain3(E).with_config(run_name="pipeline", tags=["v2"], metadata={"team": "x"})
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_with_config_async(differential):
    async def scenario(E):
        app = sub_as_node(E).with_config(run_name="pipeline", tags=["v2"])
        return await atraced(lambda c: app.ainvoke({"log": []}, c), tags=["call"])

    differential(scenario)


def test_compile_name_names_the_graph_run(differential):
    def scenario(E):
        g = chain3(E).builder
        app = g.compile(name="my_graph")
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_subgraph_with_config_in_a_node_keeps_its_name(differential):
    """A subgraph given `.with_config(run_name="helper_run", tags=["sub"])` and invoked in
    a node: its run is named and tagged so, under the node."""

    def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", _appender("inner"))
        sub.add_edge(E.START, "inner")
        helper = sub.compile().with_config(run_name="helper_run", tags=["sub"])

        def call(state: S) -> dict:
            return helper.invoke({"log": []})

        g = E.StateGraph(S)
        g.add_node("call", call)
        g.add_edge(E.START, "call")
        app = g.compile()
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_subgraph_with_config_metadata_in_an_async_node(differential):
    """`.with_config(metadata={"team": ...})` on a helper awaited in an async node: its
    run and its nodes' carry the metadata."""

    async def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", _appender("inner"))
        sub.add_edge(E.START, "inner")
        helper = sub.compile().with_config(metadata={"team": "search"}, tags=["sub"])

        async def call(state: S) -> dict:
            return await helper.ainvoke({"log": []})

        g = E.StateGraph(S)
        g.add_node("call", call)
        g.add_edge(E.START, "call")
        app = g.compile()
        return await atraced(lambda c: app.ainvoke({"log": []}, c), metadata={"user": "u"})

    differential(scenario)


def test_given_run_id_is_the_graph_runs_id(differential):
    """`config={"run_id": ...}`: the graph's root run has that id (users look it up in
    LangSmith by it), and only the root run."""

    def scenario(E):
        import uuid

        app = chain3(E)
        rid = uuid.UUID("12345678-1234-5678-1234-567812345678")
        rec = Recorder()
        app.invoke({"log": []}, {"callbacks": [rec], "run_id": rid})
        root = rec.roots[0]
        return root.id == rid, [kid.id == rid for kid in root.child_runs], tree(rec)

    differential(scenario)


# ---------------------------------------------------------------------------------------
# more agents and failures
# ---------------------------------------------------------------------------------------


def test_react_agent_traced_under_astream_events(differential):
    """A ReAct agent run with `astream_events(..., config={"callbacks": [tracer]})`: the
    tracer's tree is the one `invoke` gives."""

    async def scenario(E):
        return await traced_events(react(E), HI)

    differential(scenario)


def test_tool_error_handled_by_tool_node(differential):
    """A tool that raises, inside `ToolNode` (errors handled, the default): the `tool` run
    records the error, the `tools` node run and the graph run do not."""

    @tool
    def broken(city: str) -> str:
        """Always fails."""
        raise ValueError(f"no data for {city}")

    def scenario(E):
        from langgraph.graph.message import add_messages

        class M(TypedDict):
            messages: Annotated[list, add_messages]

        model = ToolModel(responses=[
            AIMessage("", id="ai1", tool_calls=[{"name": "broken", "args": {"city": "Rome"}, "id": "c1"}]),
            AIMessage("sorry", id="ai2"),
        ])

        def agent(state: M) -> dict:
            return {"messages": [model.invoke(state["messages"])]}

        g = E.StateGraph(M)
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([broken], handle_tool_errors=True))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        app = g.compile()
        return traced(lambda c: app.invoke(HI, c), io=False)

    differential(scenario)


def sequence_node(E: Any) -> Any:
    from langchain_core.runnables import RunnableLambda

    def first(state: dict) -> dict:
        return {"log": ["first"]}

    def second(update: dict) -> dict:
        return {"log": [*update["log"], "second"]}

    def route_after_seq(state: S) -> str:
        return "end"

    g = E.StateGraph(S)
    g.add_node("seq", RunnableLambda(first) | RunnableLambda(second))
    g.add_node("end", _appender("end"))
    g.add_edge(E.START, "seq")
    g.add_conditional_edges("seq", route_after_seq, ["end"])
    return g.compile()


def test_node_that_is_a_runnable_sequence(differential):
    """A node given as `RunnableLambda(f) | RunnableLambda(g)`, with a conditional edge:
    LangGraph flattens the sequence into the node's own, so its steps are the node run's
    children (`seq:step:1`, `seq:step:2`, no `RunnableSequence` run between), and the
    router comes after them."""

    def scenario(E):
        app = sequence_node(E)
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_node_that_is_a_runnable_sequence_async(differential):
    async def scenario(E):
        app = sequence_node(E)
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def test_model_called_with_the_nodes_config(differential):
    """A node taking `config` and calling `model.invoke(messages, config)`: the `llm` run
    is a child of the node's run, with the node's metadata."""

    def scenario(E):
        from langchain_core.runnables import RunnableConfig
        from langgraph.graph.message import add_messages

        class M(TypedDict):
            messages: Annotated[list, add_messages]

        model = GenericFakeChatModel(messages=iter([AIMessage("hi", id="ai1")]))

        def chat(state: M, config: RunnableConfig) -> dict:
            return {"messages": [model.invoke(state["messages"], config)]}

        g = E.StateGraph(M)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile()
        return traced(lambda c: app.invoke(HI, c))

    differential(scenario)


def test_recursion_limit_error_is_on_the_graph_run(differential):
    """A loop hitting `recursion_limit`: the graph run ends with `GraphRecursionError`,
    every node run that ran ends normally."""

    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _appender("a"))
        g.add_node("b", _appender("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "a")
        app = g.compile()
        return traced(lambda c: app.invoke({"log": []}, c), recursion_limit=3)

    differential(scenario)


def test_task_that_raises_in_an_entrypoint(differential):
    """A `@task` raising: the task's run, the entrypoint's run and the graph run record
    the error."""

    def scenario(E):
        entrypoint, task = E.func.entrypoint, E.func.task

        @task
        def fetch(url: str) -> str:
            raise TimeoutError(url)

        @entrypoint()
        def wf(url: str) -> str:
            return fetch(url).result()

        return traced(lambda c: wf.invoke("http://x", c))

    differential(scenario)


def test_entrypoint_invoking_a_state_graph(differential):
    """An entrypoint invoking a compiled `StateGraph`: the graph's run nests under the
    entrypoint's node run."""

    def scenario(E):
        app = chain3(E)

        @E.func.entrypoint()
        def wf(x: int) -> list:
            return app.invoke({"log": []})["log"]

        return traced(lambda c: wf.invoke(1, c))

    differential(scenario)


def test_functional_interrupt_then_resume(differential):
    """An entrypoint whose task result is cached across an `interrupt()`: on resume the
    task is not run again, so its run appears in the first trace only."""

    def scenario(E):
        entrypoint, task = E.func.entrypoint, E.func.task

        @task
        def draft(topic: str) -> str:
            return f"essay on {topic}"

        @entrypoint(checkpointer=E.InMemorySaver())
        def wf(topic: str) -> dict:
            essay = draft(topic).result()
            ok = E.interrupt({"review": essay})
            return {"essay": essay, "ok": ok}

        first = traced(lambda c: wf.invoke("cats", c), **CFG)
        second = traced(lambda c: wf.invoke(E.Command(resume=True), c), **CFG)
        return first, second

    differential(scenario)


def test_send_map_reduce_async_nodes(differential):
    async def scenario(E):
        class MR(TypedDict):
            topics: list
            jokes: Annotated[list, operator.add]

        async def joke(arg: dict) -> dict:
            await asyncio.sleep(0)
            return {"jokes": [arg["topic"]]}

        g = E.StateGraph(MR)
        g.add_node("joke", joke)
        g.add_conditional_edges(E.START, lambda s: [E.Send("joke", {"topic": t}) for t in s["topics"]], ["joke"])
        app = g.compile()
        return await atraced(lambda c: app.ainvoke({"topics": ["a", "b", "c"], "jokes": []}, c))

    differential(scenario)


def test_async_error_inside_a_subgraph_invoked_in_a_node(differential):
    """An inner node raising inside a helper awaited in a node: the error is on the inner
    node's run, the helper's run, the calling node's run and the graph run."""

    async def scenario(E):
        async def boom(state: S) -> dict:
            raise RuntimeError("inner")

        sub = E.StateGraph(S)
        sub.add_node("boom", boom)
        sub.add_edge(E.START, "boom")
        helper = sub.compile(name="helper")

        async def call(state: S) -> dict:
            return await helper.ainvoke({"log": []})

        g = E.StateGraph(S)
        g.add_node("call", call)
        g.add_edge(E.START, "call")
        app = g.compile()
        return await atraced(lambda c: app.ainvoke({"log": []}, c))

    differential(scenario)


def test_react_agent_messages_stream_async(differential):
    async def scenario(E):
        app = react(E)
        return await atraced(lambda c: _count(acollect(lambda: app.astream(HI, c, stream_mode="messages"))))

    differential(scenario)


async def _count(aw: Any) -> int:
    return len(await aw)


def test_compiled_subgraph_node_with_config_run_name(differential):
    """A subgraph node given `.with_config(run_name="researcher")`."""

    def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", _appender("inner"))
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile().with_config(run_name="researcher", tags=["r"], metadata={"team": "r"}))
        g.add_edge(E.START, "sub")
        app = g.compile()
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_conditional_edges_from_start_show_a_hidden_start_run(differential):
    """`add_conditional_edges(START, route)` beside a plain `START -> a` edge: LangGraph
    traces the `__start__` task then (tagged `langsmith:hidden`, which LangSmith hides by
    default) with the router under it; with only plain edges it has no run."""

    def scenario(E):
        def route(state: S) -> list:
            return ["b", "c"]

        g = E.StateGraph(S)
        for name in ("a", "b", "c"):
            g.add_node(name, _appender(name))
        g.add_edge(E.START, "a")
        g.add_conditional_edges(E.START, route, ["b", "c"])
        app = g.compile()
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_node_metadata_and_two_levels_of_subgraphs(differential):
    """`add_node(..., metadata={"kind": ...})` and a subgraph inside a subgraph: the
    node's metadata is on its run, each level's checkpoint ns nests."""

    def scenario(E):
        inner = E.StateGraph(S)
        inner.add_node("leaf", _appender("leaf"), metadata={"kind": "leaf"})
        inner.add_edge(E.START, "leaf")
        middle = E.StateGraph(S)
        middle.add_node("inner", inner.compile())
        middle.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("middle", middle.compile(), metadata={"kind": "mid"})
        g.add_edge(E.START, "middle")
        app = g.compile(checkpointer=E.InMemorySaver())
        return traced(lambda c: app.invoke({"log": []}, c), **CFG)

    differential(scenario)


def test_command_to_parent_from_a_subgraph(differential):
    """A subgraph node returning `Command(graph=Command.PARENT, goto="done")`: the hop
    shows on the runs as LangGraph records it (the subgraph's runs end with the
    `ParentCommand` it raises), and `done` runs in the parent."""

    def scenario(E):
        def hop(state: S):
            return E.Command(graph=E.Command.PARENT, goto="done", update={"log": ["hop"]})

        sub = E.StateGraph(S)
        sub.add_node("hop", hop)
        sub.add_edge(E.START, "hop")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_node("done", _appender("done"))
        g.add_edge(E.START, "sub")
        app = g.compile()
        return traced(lambda c: app.invoke({"log": []}, c))

    differential(scenario)


def test_sub_agent_on_its_own_thread_under_astream_events(differential):
    async def scenario(E):
        return await traced_events(sub_in_node(E, is_async=True, own_thread=True), {"log": []}, **CFG)

    differential(scenario)


def test_subgraph_node_under_astream_events(differential):
    async def scenario(E):
        return await traced_events(sub_as_node(E), {"log": []})

    differential(scenario)


def test_create_agent_under_astream_events(differential):
    create_agent = _create_agent()

    async def scenario(E):
        agent = _on(E, create_agent(ToolModel(responses=_replies()), tools=[lookup]))
        return await traced_events(agent, HI)

    differential(scenario)


def test_functional_api_async_under_astream_events(differential):
    async def scenario(E):
        return await traced_events(functional(E, is_async=True), 3)

    differential(scenario)


def test_async_entrypoint_interrupt_then_resume(differential):
    async def scenario(E):
        entrypoint, task = E.func.entrypoint, E.func.task

        @task
        async def draft(topic: str) -> str:
            return f"essay on {topic}"

        @entrypoint(checkpointer=E.InMemorySaver())
        async def wf(topic: str) -> dict:
            essay = await draft(topic)
            ok = E.interrupt({"review": essay})
            return {"essay": essay, "ok": ok}

        first = await atraced(lambda c: wf.ainvoke("cats", c), **CFG)
        second = await atraced(lambda c: wf.ainvoke(E.Command(resume=True), c), **CFG)
        return first, second

    differential(scenario)


def test_retried_send_tasks_in_parallel(differential):
    """Sends to a node with a `RetryPolicy` whose first attempt for one topic fails:
    that task's failed and successful runs are both in the step, beside the others."""

    def scenario(E):
        class MR(TypedDict):
            topics: list
            jokes: Annotated[list, operator.add]

        failed: set = set()

        def joke(arg: dict) -> dict:
            if arg["topic"] == "b" and "b" not in failed:
                failed.add("b")
                raise ConnectionError("flaky")
            return {"jokes": [arg["topic"]]}

        g = E.StateGraph(MR)
        g.add_node("joke", joke, retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False))
        g.add_conditional_edges(E.START, lambda s: [E.Send("joke", {"topic": t}) for t in s["topics"]], ["joke"])
        app = g.compile()
        return traced(lambda c: app.invoke({"topics": ["a", "b", "c"], "jokes": []}, c))

    differential(scenario)


def test_debug_stream_traced(differential):
    def scenario(E):
        app = routed(E)
        return traced(lambda c: len(collect(lambda: app.stream({"log": []}, c, stream_mode="debug"))))

    differential(scenario)

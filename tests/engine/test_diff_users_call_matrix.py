"""What a node calls, crossed with how the graph is run: the combinations users hit.

A node (sync or async) calls one thing users call inside nodes: a compiled subgraph, the
same on a thread of its own (a sub-agent with its own memory), a LangChain chain, a tool,
a streaming chat model. The graph runs through each public API: `invoke`, `stream` with
`subgraphs=True` over updates + messages + custom, `ainvoke`, `astream` likewise, and
`astream_events(version="v2")`. Every cell is compared with LangGraph. Why a matrix: each
suite so far tested the APIs one scenario at a time, and a sync subgraph called from a sync
node under `astream_events` crashed on lgnb until this suite's first run (the node's async
callback manager handed to a sync graph).

An async node runs only under the async APIs (under `invoke` both engines refuse it: see
test_diff_users_mistakes.py).
"""

import asyncio
import operator
from typing import Annotated

import pytest
from _diff import acollect, capture, collect
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from typing_extensions import TypedDict


class Log(TypedDict):
    log: Annotated[list, operator.add]


CALLEES = ("subgraph", "own_thread_subgraph", "subgraph_stream", "chain", "tool", "tool_node",
           "model", "model_stream", "prompt_model")
SYNC_APIS = ("invoke", "stream")
ASYNC_APIS = ("ainvoke", "astream", "astream_events")


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _callee(E, kind):
    """(sync call, async call) of the thing a node calls; each returns a short string."""
    if kind in ("subgraph", "own_thread_subgraph"):
        def inner_node(s):
            E.get_stream_writer()({"inner": len(s["log"])})
            return {"log": ["inner"]}

        b = E.StateGraph(Log)
        b.add_node("inner_node", inner_node)
        b.add_edge(E.START, "inner_node")
        if kind == "subgraph":
            sub = b.compile(name="sub")
            return (lambda: sub.invoke({"log": []})["log"],
                    lambda: sub.ainvoke({"log": []}))
        own = b.compile(name="own", checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "sub-thread"}}
        return (lambda: own.invoke({"log": []}, cfg)["log"],
                lambda: own.ainvoke({"log": []}, cfg))
    if kind == "subgraph_stream":  # a node that forwards a subgraph's progress
        def step(s):
            return {"log": ["step"]}

        b = E.StateGraph(Log)
        b.add_node("step", step)
        b.add_edge(E.START, "step")
        sub = b.compile(name="streamed")

        async def astreamed():
            return [str(c) async for c in sub.astream({"log": []}, stream_mode="updates")]

        return (lambda: [str(c) for c in sub.stream({"log": []}, stream_mode="updates")],
                astreamed)
    if kind == "tool_node":
        from langgraph.prebuilt import ToolNode

        nodes = ToolNode([add])
        call = AIMessage(content="", id="ai-call",
                         tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "call-1"}])

        async def atools():
            return [m.content for m in (await nodes.ainvoke({"messages": [call]}))["messages"]]

        return (lambda: [m.content for m in nodes.invoke({"messages": [call]})["messages"]],
                atools)
    if kind in ("model_stream", "prompt_model"):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="tok en s", id="ai-2")] * 2))
        if kind == "model_stream":
            async def astreamed_tokens():
                return [c.content async for c in model.astream("hi")]

            return (lambda: [c.content for c in model.stream("hi")], astreamed_tokens)
        from langchain_core.prompts import ChatPromptTemplate

        chain = ChatPromptTemplate.from_messages([("human", "say {x}")]) | model

        async def aprompted():
            return (await chain.ainvoke({"x": "it"})).content

        return (lambda: chain.invoke({"x": "it"}).content, aprompted)
    if kind == "chain":
        chain = RunnableLambda(lambda x: x + 1) | RunnableLambda(lambda x: x * 2)
        return (lambda: chain.invoke(1), lambda: chain.ainvoke(1))
    if kind == "tool":
        return (lambda: add.invoke({"a": 1, "b": 2}), lambda: add.ainvoke({"a": 1, "b": 2}))
    model = GenericFakeChatModel(messages=iter([AIMessage(content="hello there", id="ai-1")] * 2))
    return (lambda: model.invoke("hi").content, lambda: model.ainvoke("hi"))


def _app(E, kind, node_kind):
    sync_call, async_call = _callee(E, kind)

    def node(s):
        E.get_stream_writer()({"outer": kind})
        return {"log": [str(sync_call())]}

    async def anode(s):
        E.get_stream_writer()({"outer": kind})
        out = await async_call()
        if isinstance(out, dict):
            out = out["log"]
        elif hasattr(out, "content"):
            out = out.content
        return {"log": [str(out)]}

    b = E.StateGraph(Log)
    b.add_node("caller", node if node_kind == "sync" else anode)
    b.add_edge(E.START, "caller")
    return b.compile(checkpointer=E.InMemorySaver())


MODES = ["updates", "messages", "custom"]
CFG = {"configurable": {"thread_id": "outer"}}


def _event(ev):
    md = ev.get("metadata", {})
    return (ev["event"], ev["name"], len(ev.get("parent_ids", [])), md.get("langgraph_node"),
            md.get("thread_id"), sorted(t for t in ev.get("tags", []) if not t.startswith("seq:")))


def _run(app, api):
    if api == "invoke":
        return capture(lambda: app.invoke({"log": []}, CFG))
    if api == "stream":
        return collect(lambda: app.stream({"log": []}, CFG, stream_mode=MODES, subgraphs=True))
    if api == "ainvoke":
        return asyncio.run(app.ainvoke({"log": []}, CFG))
    if api == "astream":
        return asyncio.run(acollect(lambda: app.astream({"log": []}, CFG, stream_mode=MODES,
                                                         subgraphs=True)))

    async def events():
        return [_event(ev) async for ev in app.astream_events({"log": []}, CFG, version="v2")]

    return asyncio.run(events())


CELLS = [(k, "sync", api) for k in CALLEES for api in SYNC_APIS + ASYNC_APIS] + [
    (k, "async", api) for k in CALLEES for api in ASYNC_APIS
]


@pytest.mark.parametrize(("callee", "node_kind", "api"), CELLS,
                         ids=[f"{k}-{n}-{a}" for k, n, a in CELLS])
def test_a_node_calling_it_runs_the_same_through_every_api(differential, callee, node_kind, api):
    """The caller's result, every stream chunk (namespaces, message chunks and their
    metadata, custom events) and every traced event match LangGraph's, and the state the
    thread saved is the same."""
    def scenario(E):
        app = _app(E, callee, node_kind)
        out = _run(app, api)
        return out, app.get_state(CFG).values

    ref = differential(scenario)
    assert ref[1]["log"], "the caller ran and saved its result"


# --- the same, when what the node calls asks a question --------------------------------


# (a graph on a thread of its own that asks pauses its own thread, not the caller's: its
# `invoke` returns; resuming the caller is then an error on lgnb, by design, and a no-op on
# LangGraph — tests/persistence/test_persist_bad_input.py)
ASKERS = ("subgraph", "tool", "helper")


def _asking_app(E, kind, node_kind):
    """A node whose callee calls `interrupt()`; the answer comes back through the callee."""
    def ask(s):
        return {"log": [f"answer={E.interrupt({'q': 'ok?', 'kind': kind})}"]}

    if kind == "subgraph":
        b = E.StateGraph(Log)
        b.add_node("ask", ask)
        b.add_edge(E.START, "ask")
        sub = b.compile(name="asker")
        call = lambda: sub.invoke({"log": []})["log"]  # noqa: E731
        acall = lambda: sub.ainvoke({"log": []})  # noqa: E731
    elif kind == "tool":
        @tool
        def confirm(what: str) -> str:
            """Ask a human to confirm."""
            return f"{what}:{E.interrupt({'q': 'ok?', 'kind': kind})}"

        call = lambda: confirm.invoke({"what": "ship"})  # noqa: E731
        acall = lambda: confirm.ainvoke({"what": "ship"})  # noqa: E731
    else:  # a plain helper function the node calls
        call = lambda: ask({})["log"]  # noqa: E731

        async def acall():
            return ask({})["log"]

    def node(s):
        return {"log": [str(call())]}

    async def anode(s):
        out = await acall()
        return {"log": [str(out["log"] if isinstance(out, dict) else out)]}

    b = E.StateGraph(Log)
    b.add_node("caller", node if node_kind == "sync" else anode)
    b.add_edge(E.START, "caller")
    return b.compile(checkpointer=E.InMemorySaver())


def _state_view(app):
    st = app.get_state(CFG)
    return st.values, st.next, [i.value for i in st.interrupts], [
        (t.name, [i.value for i in t.interrupts]) for t in st.tasks]


ASK_CELLS = [(k, "sync", api) for k in ASKERS for api in SYNC_APIS + ASYNC_APIS] + [
    (k, "async", api) for k in ASKERS for api in ASYNC_APIS
]


@pytest.mark.parametrize(("callee", "node_kind", "api"), ASK_CELLS,
                         ids=[f"{k}-{n}-{a}" for k, n, a in ASK_CELLS])
def test_a_question_asked_by_what_the_node_calls_pauses_and_resumes_through_every_api(
        differential, callee, node_kind, api):
    """The run pauses with the callee's question on the caller's task, and
    `Command(resume=...)` through the same API answers it inside the callee."""
    def scenario(E):
        app = _asking_app(E, callee, node_kind)
        first = _run_with(app, api, {"log": []})
        paused = _state_view(app)
        second = _run_with(app, api, E.Command(resume="yes"))
        return first, paused, second, _state_view(app)

    ref = differential(scenario)
    assert ref[1][2], "the run paused on the callee's question"
    assert "yes" in str(ref[3][0]), "the answer reached the callee"


def _run_with(app, api, inp):
    if api == "invoke":
        return capture(lambda: app.invoke(inp, CFG))
    if api == "stream":
        return collect(lambda: app.stream(inp, CFG, stream_mode=["updates", "values"],
                                          subgraphs=True))
    if api == "ainvoke":
        return asyncio.run(app.ainvoke(inp, CFG))
    if api == "astream":
        return asyncio.run(acollect(lambda: app.astream(inp, CFG, stream_mode=["updates", "values"],
                                                         subgraphs=True)))

    async def events():
        return [_event(ev) async for ev in app.astream_events(inp, CFG, version="v2")]

    return asyncio.run(events())

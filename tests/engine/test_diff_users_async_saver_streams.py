"""Async programs on a checkpointer whose async methods really suspend the event loop.

`InMemorySaver`'s async methods never suspend, so with it a run's steps, the saving of
checkpoints and writes and what a consumer reads interleave in one fixed way. A real
async saver (`AsyncSqliteSaver` on a SQLite file, `AsyncPostgresSaver` on the server at
``LGNB_TEST_POSTGRES_URL``) awaits I/O in `aput` / `aput_writes` / `aget_tuple`, so the
consumer of a stream can run while the engine waits on the database. Each scenario runs
on LangGraph with its own saver (``langgraph.checkpoint.sqlite.aio`` /
``langgraph.checkpoint.postgres.aio``) and on lgnb with lgnb's (``lgnb.checkpoint.sqlite.aio``
/ ``lgnb.checkpoint.postgres.aio``); "memory" runs too where it is cheap.

Covered, as users write them in async code: `astream` with every stream mode ("updates",
"values", "messages" from LangChain's `GenericFakeChatModel`, "custom", "debug", "tasks",
"checkpoints", lists of modes) with `subgraphs=True` on a graph with a subgraph node;
`astream_events(version="v2")`; a ReAct loop (`ToolNode` + `tools_condition`) whose
ToolMessages, and messages a node builds by hand, have no id until `add_messages` gives
them one; `interrupt()` then `Command(resume=...)` with `aget_state` /
`aget_state_history`; a parallel step, a `Send` fan-out and a node retried under a
`RetryPolicy`; a consumer leaving the stream after the first update, then the thread and
a resume.

Every chunk and event is copied when it ARRIVES (`copy.deepcopy`, or `json.dumps` of an
event's data): `add_messages` gives ids to a node's messages in place, so what a consumer
reads depends on when it reads it. Thread ids are fresh uuids (the PostgreSQL database is
shared); the harness normalizes them with the other ids.

Narrowed where LangGraph itself varies or lgnb differs only cosmetically: the task
results in `aget_state_history` are compared without message ids (LangGraph saves a
step's writes in the background while `add_messages` gives their messages ids in place:
whether the saved copy has them varies from run to run); the ReAct tool is async (a
ToolNode runs a sync tool's calls in threads, which finish in any order); a "messages"
chunk's metadata has its keys sorted (same keys and values, another order).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import contextlib
import copy
import importlib
import json
import operator
import uuid
from typing import Annotated

import pytest
from _agent_scenarios import ahistory as _ahistory
from _agent_scenarios import asaver as _sqlite_or_memory
from _agent_scenarios import calls as _calls
from _agent_scenarios import say as _say
from _diff import acapture, snapshot_summary
from _scripted import Scripted
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from typing_extensions import TypedDict

SAVERS = ["memory", "sqlite", "postgres"]
REAL_SAVERS = ["sqlite", "postgres"]


# --- savers and threads -------------------------------------------------------------------------------


@pytest.fixture
def opener(request, tmp_path):
    """`opener(E)`: an async context manager opening E's own saver of the test's kind."""
    kind = request.node.callspec.params["kind"]
    url = request.getfixturevalue("postgres_url") if kind == "postgres" else None

    @contextlib.asynccontextmanager
    async def open_saver(E):
        if kind != "postgres":
            async with _sqlite_or_memory(E, kind, tmp_path) as saver:
                yield saver
            return
        aio = importlib.import_module(f"{E.root}.checkpoint.postgres.aio")
        async with aio.AsyncPostgresSaver.from_conn_string(url) as saver:
            await saver.setup()
            yield saver

    return open_saver


def _cfg(**extra):
    return {"configurable": {"thread_id": str(uuid.uuid4())}, **extra}


def _arrived(x):
    """A chunk as the consumer holds it when it arrives. The metadata of a "messages"
    chunk `(message, metadata)` has its keys sorted: lgnb builds the same keys and values
    in another order (LangGraph starts with `thread_id`), and the harness numbers ids by
    first appearance."""
    x = copy.deepcopy(x)
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], BaseMessage) and isinstance(x[1], dict):
        return (x[0], dict(sorted(x[1].items())))
    if isinstance(x, tuple):
        return tuple(_arrived(y) for y in x)
    return x


async def _history(app, cfg):
    """`aget_state_history`, each task's result without message ids: LangGraph saves a
    step's writes in the background while `add_messages` gives the messages their ids in
    place, so whether a saved write has them varies from run to run on LangGraph."""
    return await _ahistory(app, cfg)


# --- a graph with a subgraph node, a chat model and custom events -----------------------------------


def _chat_state(E):
    class State(TypedDict, total=False):
        messages: Annotated[list, E.add_messages]
        log: Annotated[list, operator.add]

    return State


def _nested_app(E, saver):
    """START -> prep -> sub (inner1 -> inner2) -> model -> END. Nodes are async and write a
    custom event; `prep` returns a message built by hand without an id; `model` streams
    the reply of LangChain's `GenericFakeChatModel`."""
    State = _chat_state(E)
    llm = GenericFakeChatModel(messages=iter([AIMessage("the answer is forty two")]))

    async def prep(state):
        E.get_stream_writer()({"at": "prep"})
        return {"messages": [AIMessage("prepared")], "log": ["prep"]}

    async def inner1(state):
        E.get_stream_writer()({"at": "inner1", "seen": len(state["messages"])})
        # with an id: a subgraph node's id-less message is `test_subgraph_update_chunks_...`
        return {"messages": [AIMessage("inner one", id="i1")], "log": ["inner1"]}

    async def inner2(state):
        E.get_stream_writer()({"at": "inner2"})
        return {"log": ["inner2"]}

    sg = E.StateGraph(State)
    sg.add_node("inner1", inner1)
    sg.add_node("inner2", inner2)
    sg.add_edge(E.START, "inner1")
    sg.add_edge("inner1", "inner2")

    async def model(state, config):
        reply = await llm.ainvoke(state["messages"], config)
        return {"messages": [reply], "log": ["model"]}

    g = E.StateGraph(State)
    g.add_node("prep", prep)
    g.add_node("sub", sg.compile())
    g.add_node("model", model)
    g.add_edge(E.START, "prep")
    g.add_edge("prep", "sub")
    g.add_edge("sub", "model")
    g.add_edge("model", E.END)
    return g.compile(checkpointer=saver)


MODES = {
    "updates": "updates",
    "values": "values",
    "messages": "messages",
    "custom": "custom",
    "debug": "debug",
    "tasks": "tasks",
    "checkpoints": "checkpoints",
    "updates+messages+custom": ["updates", "messages", "custom"],
    "values+updates+tasks": ["values", "updates", "tasks"],
}


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("mode", list(MODES))
def test_astream_with_subgraphs_reads_each_chunk_as_langgraph_does(differential, opener, kind, mode):
    """`async for chunk in app.astream(inp, cfg, stream_mode=mode, subgraphs=True)`: the
    chunks (namespace, [mode,] payload) as they arrive, then the thread's state and
    history."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _nested_app(E, saver)
            cfg = _cfg()
            got = [_arrived(c) async for c in app.astream(
                {"messages": [HumanMessage("question", id="h1")]}, cfg, stream_mode=MODES[mode],
                subgraphs=True)]
            return {"chunks": got, "state": snapshot_summary(await app.aget_state(cfg)),
                    "history": await _history(app, cfg)}

    ref = differential(scenario)
    assert ref["chunks"] and ref["state"]["values"]["log"][-1] == "model"


def _slowed(saver):
    """`saver` whose `aput` (a checkpoint's save) takes 20 ms more: a database farther away."""
    put = saver.aput

    async def aput(*args, **kwargs):
        await asyncio.sleep(0.02)
        return await put(*args, **kwargs)

    saver.aput = aput
    return saver


@pytest.mark.parametrize("slow", [False, True], ids=["plain", "slow-put"])
@pytest.mark.parametrize("kind", SAVERS)
def test_subgraph_update_chunks_reach_astream_consumers_after_the_subgraph_barrier(
        differential, opener, kind, slow):
    """`astream(..., stream_mode="updates", subgraphs=True)`: a subgraph node returns an
    AIMessage built without an id; when the consumer reads that node's update chunk,
    `add_messages` has given the message its id. `slow-put` makes every checkpoint's save
    take 20 ms more, so the subgraph task's writes are queued while the step's checkpoint
    is still saving in the background (durability "async"): their save waits for it, and
    the barrier must not."""
    async def scenario(E):
        State = _chat_state(E)

        async def inner(state):
            return {"messages": [AIMessage("inner")]}

        sg = E.StateGraph(State)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")
        g = E.StateGraph(State)
        g.add_node("sub", sg.compile())
        g.add_edge(E.START, "sub")
        async with opener(E) as saver:
            app = g.compile(checkpointer=_slowed(saver) if slow else saver)
            return [(ns[0].split(":")[0] if ns else "",
                     {node: [m.id is not None for m in u["messages"]] for node, u in update.items()})
                    async for ns, update in app.astream({"messages": [HumanMessage("go", id="h1")]}, _cfg(),
                                                        stream_mode="updates", subgraphs=True)]

    ref = differential(scenario)
    assert ref == [("sub", {"inner": [True]}), ("", {"sub": [True, True]})]


# --- astream_events -----------------------------------------------------------------------------------


def _event(ev):
    """What an `astream_events` consumer keeps of an event when it arrives."""
    md = ev.get("metadata") or {}
    data = ev.get("data")
    return {"event": ev["event"], "name": ev["name"],
            "node": md.get("langgraph_node"), "step": md.get("langgraph_step"),
            "data": json.dumps(data, default=str, sort_keys=True)}


@pytest.mark.parametrize("kind", SAVERS)
def test_astream_events_v2_of_a_graph_with_a_subgraph_as_they_arrive(differential, opener, kind):
    """`astream_events(version="v2")` on the nested graph: each event's name, kind, node,
    step and data (serialized when it arrives: a message's id there is what it was then)."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _nested_app(E, saver)
            cfg = _cfg()
            got = [_event(ev) async for ev in app.astream_events(
                {"messages": [HumanMessage("question", id="h1")]}, cfg, version="v2")]
            return {"events": got, "state": snapshot_summary(await app.aget_state(cfg))}

    ref = differential(scenario)
    assert any(e["event"] == "on_chat_model_stream" for e in ref["events"])


# --- a ReAct loop -------------------------------------------------------------------------------------


@tool
async def add(a: int, b: int) -> int:
    """Add two integers (async: ToolNode runs a sync tool's calls in threads, which finish
    in any order on LangGraph)."""
    return a + b


def _react(E, saver, *replies):
    from langgraph.prebuilt import ToolNode, tools_condition

    model = Scripted(script=iter(list(replies)), seen=[])

    async def agent(state, config):
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    async def note(state):  # a message built by hand, without an id
        return {"messages": [AIMessage(f"{len(state['messages'])} messages so far")]}

    g = E.StateGraph(E.MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([add]))
    g.add_node("note", note)
    g.add_edge(E.START, "agent")
    g.add_conditional_edges("agent", tools_condition, {"tools": "tools", "__end__": "note"})
    g.add_edge("tools", "agent")
    g.add_edge("note", E.END)
    return g.compile(checkpointer=saver)


def _react_replies():
    return (_calls("m1", ("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2")),
            _say("The sums are 3 and 7.", "m2"))


def _ids(chunk):
    """Whether each message in an updates chunk had an id when it arrived."""
    ns, update = chunk if isinstance(chunk, tuple) else ((), chunk)
    return (ns, {node: [m.id is not None for m in (u or {}).get("messages", [])]
                 for node, u in update.items()})


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("mode", ["updates", "values", "messages", "updates+messages"])
def test_react_loop_streams_tool_messages_as_langgraph_does(differential, opener, kind, mode):
    """A ToolNode's ToolMessages and a hand-built AIMessage have no id until `add_messages`
    gives them one: the chunks as they arrive (ids normalized, so whether an id was there
    is compared), the final state and history."""
    modes = {"updates+messages": ["updates", "messages"]}.get(mode, mode)

    async def scenario(E):
        async with opener(E) as saver:
            app = _react(E, saver, *_react_replies())
            cfg = _cfg()
            got = [_arrived(c) async for c in app.astream(
                {"messages": [HumanMessage("1+2 and 3+4?", id="h1")]}, cfg, stream_mode=modes)]
            return {"chunks": got, "state": snapshot_summary(await app.aget_state(cfg)),
                    "history": await _history(app, cfg)}

    differential(scenario)


@pytest.mark.parametrize("kind", SAVERS)
def test_react_loop_updates_carry_add_messages_ids_when_read(differential, opener, kind):
    """The plain check users rely on when they forward updates to a client: whether each
    streamed message already has its id when the consumer reads the chunk."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _react(E, saver, *_react_replies())
            return [_ids(c) async for c in app.astream(
                {"messages": [HumanMessage("1+2 and 3+4?", id="h1")]}, _cfg(), stream_mode="updates")]

    differential(scenario)


@pytest.mark.parametrize("kind", SAVERS)
def test_react_loop_astream_events_as_they_arrive(differential, opener, kind):
    """`astream_events(version="v2")` of the ReAct loop, each event serialized at arrival."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _react(E, saver, *_react_replies())
            cfg = _cfg()
            got = [_event(ev) async for ev in app.astream_events(
                {"messages": [HumanMessage("1+2 and 3+4?", id="h1")]}, cfg, version="v2")]
            return {"events": got, "state": snapshot_summary(await app.aget_state(cfg))}

    differential(scenario)


# --- interrupt and resume -----------------------------------------------------------------------------


def _approval_app(E, saver):
    """START -> draft -> review (interrupt) -> publish -> END."""
    State = _chat_state(E)

    async def draft(state):
        return {"messages": [AIMessage("draft text")], "log": ["draft"]}

    async def review(state):
        answer = E.interrupt({"question": "approve?", "draft": state["messages"][-1].content})
        return {"messages": [HumanMessage(f"review: {answer}")], "log": [f"review:{answer}"]}

    async def publish(state):
        E.get_stream_writer()({"published": len(state["messages"])})
        return {"log": ["publish"]}

    g = E.StateGraph(State)
    g.add_node("draft", draft)
    g.add_node("review", review)
    g.add_node("publish", publish)
    g.add_edge(E.START, "draft")
    g.add_edge("draft", "review")
    g.add_edge("review", "publish")
    g.add_edge("publish", E.END)
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("mode", ["updates", "values", "debug", "updates+custom+checkpoints"])
def test_interrupt_then_resume_on_the_same_thread(differential, opener, kind, mode):
    """`astream` to the interrupt, `aget_state`, `astream(Command(resume=...))` on the same
    thread, then `aget_state` and `aget_state_history`."""
    modes = {"updates+custom+checkpoints": ["updates", "custom", "checkpoints"]}.get(mode, mode)

    async def scenario(E):
        async with opener(E) as saver:
            app = _approval_app(E, saver)
            cfg = _cfg()
            first = [_arrived(c) async for c in app.astream(
                {"messages": [HumanMessage("write", id="h1")]}, cfg, stream_mode=modes)]
            paused = snapshot_summary(await app.aget_state(cfg))
            second = [_arrived(c) async for c in app.astream(
                E.Command(resume="yes"), cfg, stream_mode=modes)]
            return {"first": first, "paused": paused, "second": second,
                    "state": snapshot_summary(await app.aget_state(cfg)),
                    "history": await _history(app, cfg)}

    ref = differential(scenario)
    assert ref["paused"]["next"] == ("review",) and ref["state"]["values"]["log"][-1] == "publish"


@pytest.mark.parametrize("kind", SAVERS)
def test_interrupt_then_resume_through_astream_events(differential, opener, kind):
    """The same interrupt and resume, both runs read with `astream_events(version="v2")`."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _approval_app(E, saver)
            cfg = _cfg()
            first = [_event(ev) async for ev in app.astream_events(
                {"messages": [HumanMessage("write", id="h1")]}, cfg, version="v2")]
            second = [_event(ev) async for ev in app.astream_events(
                E.Command(resume="ok"), cfg, version="v2")]
            return {"first": first, "second": second,
                    "state": snapshot_summary(await app.aget_state(cfg)),
                    "history": await _history(app, cfg)}

    differential(scenario)


def _nested_approval_app(E, saver):
    """START -> prep -> review (a subgraph: ask (interrupt) -> record) -> END."""
    State = _chat_state(E)

    async def prep(state):
        return {"messages": [AIMessage("to review")], "log": ["prep"]}

    async def ask(state):
        answer = E.interrupt({"question": "ok?", "seen": len(state["messages"])})
        return {"messages": [HumanMessage(f"answer: {answer}")], "log": [f"ask:{answer}"]}

    async def record(state):
        E.get_stream_writer()({"recorded": len(state["messages"])})
        return {"log": ["record"]}

    sg = E.StateGraph(State)
    sg.add_node("ask", ask)
    sg.add_node("record", record)
    sg.add_edge(E.START, "ask")
    sg.add_edge("ask", "record")
    g = E.StateGraph(State)
    g.add_node("prep", prep)
    g.add_node("review", sg.compile())
    g.add_edge(E.START, "prep")
    g.add_edge("prep", "review")
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_interrupt_inside_a_subgraph_then_resume(differential, opener, kind, version):
    """An `interrupt()` in a subgraph node, streamed with `subgraphs=True` (["updates",
    "custom"], `version` v1 or v2), `aget_state(cfg, subgraphs=True)` while paused, the
    resume on the same thread, then the state and history."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _nested_approval_app(E, saver)
            cfg = _cfg()
            kw = {"stream_mode": ["updates", "custom"], "subgraphs": True, "version": version}
            first = [_arrived(c) async for c in app.astream(
                {"messages": [HumanMessage("check", id="h1")]}, cfg, **kw)]
            paused = snapshot_summary(await app.aget_state(cfg, subgraphs=True))
            second = [_arrived(c) async for c in app.astream(E.Command(resume="fine"), cfg, **kw)]
            return {"first": first, "paused": paused, "second": second,
                    "state": snapshot_summary(await app.aget_state(cfg)),
                    "history": await _history(app, cfg)}

    ref = differential(scenario)
    assert ref["paused"]["next"] == ("review",) and ref["state"]["values"]["log"][-1] == "record"


@pytest.mark.parametrize("kind", REAL_SAVERS)
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_react_loop_under_each_durability(differential, opener, kind, durability):
    """`astream(..., stream_mode=["updates", "checkpoints"], durability=...)` of the ReAct
    loop: the chunks as they arrive, then the state and the saved history."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _react(E, saver, *_react_replies())
            cfg = _cfg()
            got = [_arrived(c) async for c in app.astream(
                {"messages": [HumanMessage("1+2 and 3+4?", id="h1")]}, cfg,
                stream_mode=["updates", "checkpoints"], durability=durability)]
            return {"chunks": got, "state": snapshot_summary(await app.aget_state(cfg)),
                    "history": await _history(app, cfg)}

    differential(scenario)


# --- parallel steps, Send, retries --------------------------------------------------------------------


def _parallel_app(E, saver, fails):
    """START -> (left, right) -> fan (Send to `work` per item) -> flaky (fails once under a
    RetryPolicy) -> END. Every node is async and returns without awaiting."""
    State = _chat_state(E)

    class Item(TypedDict):
        item: str

    async def left(state):
        return {"messages": [AIMessage("left")], "log": ["left"]}

    async def right(state):
        return {"messages": [AIMessage("right")], "log": ["right"]}

    async def join(state):
        return {"log": ["join"]}

    def fan(state):
        return [E.Send("work", {"item": x}) for x in ("a", "b", "c")]

    async def work(arg: Item):
        return {"log": [f"work:{arg['item']}"]}

    async def flaky(state):
        fails.append(len(fails))
        if len(fails) == 1:
            raise ValueError("transient")
        return {"messages": [AIMessage("recovered")], "log": ["flaky"]}

    g = E.StateGraph(State)
    g.add_node("left", left)
    g.add_node("right", right)
    g.add_node("join", join)
    g.add_node("work", work)
    g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(initial_interval=0.01, jitter=False,
                                                          retry_on=ValueError))
    g.add_edge(E.START, "left")
    g.add_edge(E.START, "right")
    g.add_edge(["left", "right"], "join")
    g.add_conditional_edges("join", fan, ["work"])
    g.add_edge("work", "flaky")
    g.add_edge("flaky", E.END)
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("mode", ["updates", "values", "tasks", "debug", "updates+tasks"])
def test_parallel_step_send_fan_out_and_a_retried_node(differential, opener, kind, mode):
    """Two nodes in one step, a `Send` fan-out and a node that fails once then succeeds
    under a RetryPolicy: the chunks as they arrive, the final state and history."""
    modes = {"updates+tasks": ["updates", "tasks"]}.get(mode, mode)

    async def scenario(E):
        fails = []
        async with opener(E) as saver:
            app = _parallel_app(E, saver, fails)
            cfg = _cfg()
            got = [_arrived(c) async for c in app.astream(
                {"messages": [HumanMessage("go", id="h1")]}, cfg, stream_mode=modes)]
            return {"chunks": got, "attempts": len(fails),
                    "state": snapshot_summary(await app.aget_state(cfg)),
                    "history": await _history(app, cfg)}

    ref = differential(scenario)
    assert ref["attempts"] == 2


@pytest.mark.parametrize("kind", SAVERS)
def test_parallel_step_astream_events_as_they_arrive(differential, opener, kind):
    """The parallel / Send / retry graph read with `astream_events(version="v2")`."""
    async def scenario(E):
        fails = []
        async with opener(E) as saver:
            app = _parallel_app(E, saver, fails)
            cfg = _cfg()
            got = [_event(ev) async for ev in app.astream_events(
                {"messages": [HumanMessage("go", id="h1")]}, cfg, version="v2")]
            return {"events": got, "state": snapshot_summary(await app.aget_state(cfg))}

    differential(scenario)


@pytest.mark.parametrize("kind", SAVERS)
def test_parallel_step_update_chunks_reach_astream_events_consumers_after_the_barrier(
        differential, opener, kind):
    """`astream_events(version="v2")` on a step of two nodes each returning an AIMessage
    built without an id: when the consumer reads each root update chunk
    (`on_chain_stream` of the graph), `add_messages` has given its messages their ids."""
    async def scenario(E):
        State = _chat_state(E)

        async def left(state):
            return {"messages": [AIMessage("left")]}

        async def right(state):
            return {"messages": [AIMessage("right")]}

        g = E.StateGraph(State)
        g.add_node("left", left)
        g.add_node("right", right)
        g.add_edge(E.START, "left")
        g.add_edge(E.START, "right")
        out = []
        async with opener(E) as saver:
            app = g.compile(checkpointer=saver)
            async for ev in app.astream_events({"messages": [HumanMessage("go", id="h1")]}, _cfg(),
                                               version="v2"):
                if ev["event"] == "on_chain_stream" and not ev.get("parent_ids"):
                    out.append({node: [m.id is not None for m in u["messages"]]
                                for node, u in ev["data"]["chunk"].items()})
        return out

    ref = differential(scenario)
    assert ref == [{"left": [True]}, {"right": [True]}]


# --- leaving the stream early -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("how", ["aclosing", "aclose"])
def test_consumer_leaving_after_the_first_update_then_state_and_resume(differential, opener, kind, how):
    """The consumer stops after the first "updates" chunk (`break` inside
    `contextlib.aclosing(...)`, or `__anext__()` then `aclose()`), then reads the thread
    (`aget_state`, `aget_state_history`) and resumes it with `astream(None, cfg)`."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _nested_app(E, saver)
            cfg = _cfg()
            inp = {"messages": [HumanMessage("question", id="h1")]}
            if how == "aclosing":
                got = []
                async with contextlib.aclosing(app.astream(inp, cfg, stream_mode="updates")) as stream:
                    async for chunk in stream:
                        got.append(_arrived(chunk))
                        break
            else:
                stream = app.astream(inp, cfg, stream_mode="updates")
                got = [_arrived(await stream.__anext__())]
                await stream.aclose()
            left = snapshot_summary(await app.aget_state(cfg))
            history = await _history(app, cfg)
            resumed = await acapture(lambda: _drain(app.astream(None, cfg, stream_mode="updates")))
            return {"got": got, "left": left, "history": history, "resumed": resumed,
                    "state": snapshot_summary(await app.aget_state(cfg))}

    differential(scenario)


async def _closed_by_the_event_loop():
    """Wait until the event loop has closed the dropped stream: its finalizer hook starts
    `aclose()` in a task of its own (from a callback: one pass of the loop later); every
    other task is waited for."""
    await asyncio.sleep(0)
    while others := [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
        await asyncio.wait(others)
        await asyncio.sleep(0)


async def _drain(stream):
    return [_arrived(c) async for c in stream]


@pytest.mark.parametrize("kind", REAL_SAVERS)
def test_consumer_dropping_the_stream_after_the_first_update(differential, opener, kind):
    """`async for ...: break` without `aclosing`: the dropped generator is closed by the event
    loop (in a task its finalizer hook starts); once that task is done the thread is where
    an explicit close leaves it, and a resume finishes it."""
    async def scenario(E):
        async with opener(E) as saver:
            app = _nested_app(E, saver)
            cfg = _cfg()
            got = []
            async for chunk in app.astream({"messages": [HumanMessage("question", id="h1")]}, cfg,
                                           stream_mode="updates"):
                got.append(_arrived(chunk))
                break
            await _closed_by_the_event_loop()
            left = snapshot_summary(await app.aget_state(cfg))
            resumed = await acapture(lambda: _drain(app.astream(None, cfg, stream_mode="updates")))
            return {"got": got, "left": left, "resumed": resumed,
                    "state": snapshot_summary(await app.aget_state(cfg))}

    differential(scenario)

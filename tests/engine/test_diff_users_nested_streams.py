"""A node that streams a compiled graph itself, while the caller streams `messages`.

Users build a chat graph whose node runs a sub-agent with `.stream(...)` / `.astream(...)`
(to watch its progress, log its tokens or forward them with `get_stream_writer()`),
sometimes on a thread of its own (`{"configurable": {"thread_id": "helper"}}`, with its own
checkpointer) so it remembers earlier turns. LangChain callbacks follow the config context
variable, so the caller's `messages` stream sees the sub-agent's model calls too: every
token reaches the node's own loop AND the caller's stream, with the same chunk and
metadata (`langgraph_node`, `langgraph_checkpoint_ns`, the namespace tuple with
`subgraphs=True`), and a message a sub-agent node returns without a model is emitted once
per stream. These scenarios compare both streams (the node's and the caller's) with
LangGraph's, for `stream` and `astream`, sync and async nodes, the sub-agent sharing the
caller's config or running on its own thread, streaming `messages`, `updates` or both.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import operator
from typing import Annotated, Any

import pytest
from _diff import acollect, collect
from _scripted import Echo, Scripted
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

HI = {"messages": [HumanMessage("hi there", id="h1")], "out": []}
CFG = {"configurable": {"thread_id": "chat"}}
HELPER = {"configurable": {"thread_id": "helper"}}


def _state(E):
    class St(TypedDict):
        messages: Annotated[list, E.add_messages]
        out: Annotated[list, operator.add]

    return St


def _helper(E, *, own_thread, model=None):
    """The sub-agent: a node writing a note (a message no model streams), then a model
    node answering; with its own checkpointer when it runs on a thread of its own."""
    model = model or Echo(who="helper")
    g = E.StateGraph(_state(E))
    g.add_node("note", lambda s: {"messages": [AIMessage(f"note {len(s['messages'])}", id=f"note-{len(s['messages'])}")]})
    g.add_node("answer", lambda s: {"messages": [model.invoke(s["messages"])]})
    g.add_edge(E.START, "note")
    g.add_edge("note", "answer")
    return g.compile(checkpointer=E.InMemorySaver() if own_thread else None)


def _caller(E, node, name="ask_helper"):
    g = E.StateGraph(_state(E))
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile(checkpointer=E.InMemorySaver())


def _streaming_node(sub, cfg, call, seen, **stream_kw):
    """The caller's node: streams `sub` itself (`stream` in a sync node, `astream` in an
    async one, or `stream` in a sync node run by `astream`) and keeps what it read."""
    def ask(s):
        for chunk in sub.stream({"messages": s["messages"][-1:]}, cfg, **stream_kw):
            seen.append(chunk)
        return {"out": [len(seen)]}

    async def aask(s):
        async for chunk in sub.astream({"messages": s["messages"][-1:]}, cfg, **stream_kw):
            seen.append(chunk)
        return {"out": [len(seen)]}

    return aask if call == "astream-async-node" else ask


def _outer(app, call, inp=HI, cfg=CFG, **kw):
    if call == "stream":
        return collect(lambda: app.stream(inp, cfg, **kw))
    return asyncio.run(acollect(lambda: app.astream(inp, cfg, **kw)))


CALLS = ("stream", "astream-sync-node", "astream-async-node")
INNER_MODES = {"messages": "messages", "updates": "updates", "both": ["updates", "messages"]}
WHERE = ("shared-config", "own-thread")
MATRIX = [(w, c, m) for w in WHERE for c in CALLS for m in INNER_MODES]


@pytest.mark.parametrize(("where", "call", "inner"), MATRIX, ids=["-".join(x) for x in MATRIX])
def test_tokens_of_a_graph_streamed_in_a_node_reach_the_node_and_the_callers_stream(
        differential, where, call, inner):
    """A node streams a sub-agent (sharing the caller's config, or on a thread of its own)
    for `messages`, `updates` or both; the caller streams `["messages", "updates"]` with
    `subgraphs=True`. What the node reads and what the caller's stream shows (chunks,
    metadata, namespaces, the sub-agent's note emitted once) match LangGraph's."""
    def scenario(E):
        own = where == "own-thread"
        seen: list = []
        node = _streaming_node(_helper(E, own_thread=own), HELPER if own else None, call, seen,
                               stream_mode=INNER_MODES[inner])
        outer = _outer(_caller(E, node), "stream" if call == "stream" else "astream",
                       stream_mode=["messages", "updates"], subgraphs=True)
        return outer, seen

    outer, seen = differential(scenario)
    tokens = [c for c in outer if c[1] == "messages" and c[2][1]["langgraph_node"] == "answer"]
    assert len(tokens) == 5, "the caller's stream got the sub-agent's tokens"
    assert seen, "the node read the sub-agent's stream"


@pytest.mark.parametrize("where", WHERE)
def test_caller_streaming_without_subgraphs_hides_the_tokens_of_a_graph_streamed_in_a_node(
        differential, where):
    """The caller streams `messages` without `subgraphs`: the tokens of the sub-agent its
    node streams stay in the node's loop, as LangGraph's do (its own nodes' tokens only)."""
    def scenario(E):
        seen: list = []
        own = where == "own-thread"
        node = _streaming_node(_helper(E, own_thread=own), HELPER if own else None, "stream", seen,
                               stream_mode="messages")
        return _outer(_caller(E, node), "stream", stream_mode="messages"), seen

    outer, seen = differential(scenario)
    assert outer == [] and len(seen) == 6


@pytest.mark.parametrize("where", WHERE)
def test_caller_sees_the_same_tokens_whether_the_node_invokes_or_streams_the_sub_agent(
        differential, where):
    """Switching the node from `sub.invoke(...)` to looping over `sub.stream(...,
    stream_mode="messages")` does not change the caller's `messages` stream."""
    def scenario(E):
        own = where == "own-thread"
        cfg = HELPER if own else None
        sub_a, sub_b = _helper(E, own_thread=own), _helper(E, own_thread=own)

        def invoking(s):
            return {"out": [sub_a.invoke({"messages": s["messages"][-1:]}, cfg)["messages"][-1].content]}

        streamed = _outer(_caller(E, _streaming_node(sub_b, cfg, "stream", [], stream_mode="messages")),
                          "stream", stream_mode="messages", subgraphs=True)
        invoked = _outer(_caller(E, invoking), "stream", stream_mode="messages", subgraphs=True)
        return streamed, invoked

    streamed, invoked = differential(scenario)

    def shown(chunks):  # what a chat UI renders: namespace depth, text, node
        return [(len(ns), msg["content"], md["langgraph_node"]) for ns, ((_, msg), md) in chunks]

    assert shown(streamed) == shown(invoked) and len(streamed) == 6


@pytest.mark.parametrize("call", CALLS)
def test_node_forwarding_a_sub_agents_tokens_with_the_stream_writer(differential, call):
    """A node streams a sub-agent on its own thread and forwards each token's text with
    `get_stream_writer()`; the caller streams `["messages", "custom"]`: both the tokens and
    the forwarded texts arrive, in LangGraph's order."""
    def scenario(E):
        sub = _helper(E, own_thread=True)

        def relay(s):
            write = E.get_stream_writer()
            for msg, md in sub.stream({"messages": s["messages"][-1:]}, HELPER, stream_mode="messages"):
                write({"from": md["langgraph_node"], "text": msg.content})
            return {"out": ["relayed"]}

        async def arelay(s):
            write = E.get_stream_writer()
            async for msg, md in sub.astream({"messages": s["messages"][-1:]}, HELPER, stream_mode="messages"):
                write({"from": md["langgraph_node"], "text": msg.content})
            return {"out": ["relayed"]}

        app = _caller(E, arelay if call == "astream-async-node" else relay)
        outer = _outer(app, "stream" if call == "stream" else "astream",
                       stream_mode=["messages", "custom"], subgraphs=True)
        # each mode in its order (LangGraph's async queue may interleave the two)
        return {mode: [c for c in outer if c[1] == mode] for mode in ("messages", "custom")}

    outer = differential(scenario)
    assert len(outer["custom"]) == 6 and len(outer["messages"]) == 6


def test_caller_streaming_version_v2_gets_the_sub_agents_tokens(differential):
    """The caller streams with `version="v2"` (typed stream parts) while its node streams a
    sub-agent on its own thread: the parts carry the sub-agent's tokens as LangGraph's."""
    def scenario(E):
        seen: list = []
        node = _streaming_node(_helper(E, own_thread=True), HELPER, "stream", seen, stream_mode="messages")
        return _outer(_caller(E, node), "stream", stream_mode=["messages", "updates"], subgraphs=True,
                      version="v2"), seen

    differential(scenario)


@pytest.mark.parametrize("call", CALLS)
def test_sub_agent_with_a_subgraph_streamed_with_subgraphs_in_a_node(differential, call):
    """The sub-agent has a subgraph of its own, and the node streams it with
    `subgraphs=True`: both streams carry the tokens under the nested namespace."""
    def scenario(E):
        model = Echo(who="deep")
        deep = E.StateGraph(_state(E))
        deep.add_node("deep", lambda s: {"messages": [model.invoke(s["messages"])]})
        deep.add_edge(E.START, "deep")
        mid = E.StateGraph(_state(E))
        mid.add_node("mid", deep.compile())
        mid.add_edge(E.START, "mid")
        sub = mid.compile()
        seen: list = []
        node = _streaming_node(sub, None, call, seen, stream_mode="messages", subgraphs=True)
        return _outer(_caller(E, node), "stream" if call == "stream" else "astream",
                      stream_mode="messages", subgraphs=True), seen

    outer, seen = differential(scenario)
    assert outer == seen and len(outer) == 5


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def _tool_agent(E, model):
    """model -> (tools -> model)*, on a checkpointer of its own."""
    g = E.StateGraph(E.MessagesState)
    g.add_node("model", lambda s: {"messages": [model.invoke(s["messages"])]})
    g.add_node("tools", ToolNode([lookup]))
    g.add_edge(E.START, "model")
    g.add_conditional_edges("model", tools_condition, ["tools", E.END])
    g.add_edge("tools", "model")
    return g.compile(checkpointer=E.InMemorySaver())


@pytest.mark.parametrize("call", CALLS)
def test_tool_calling_sub_agent_on_its_own_thread_streamed_over_two_turns(differential, call):
    """A researcher agent (model, tool, model) on a thread of its own is streamed by the
    caller's node for `messages`; two turns on the caller's thread: each turn's stream
    (tool call chunks, the tool result, the answer; nothing of the first turn again), what
    the node read and the researcher's memory match LangGraph's."""
    def scenario(E):
        model = Scripted(script=iter([
            AIMessage("", id="r1", tool_calls=[{"name": "lookup", "args": {"topic": "tea"}, "id": "c1",
                                                "type": "tool_call"}]),
            AIMessage("tea is a drink", id="r2"),
            AIMessage("you asked about tea", id="r3")]), seen=[])
        agent = _tool_agent(E, model)
        seen: list = []

        def ask(s):
            for msg, md in agent.stream({"messages": [HumanMessage(s["messages"][-1].content, id=f"q{len(s['messages'])}")]},
                                        HELPER, stream_mode="messages"):
                seen.append((msg.type, msg.content, md["langgraph_node"]))
            return {"messages": [AIMessage(f"done {len(seen)}", id=f"done{len(s['messages'])}")]}

        async def aask(s):
            async for msg, md in agent.astream({"messages": [HumanMessage(s["messages"][-1].content,
                                                                           id=f"q{len(s['messages'])}")]},
                                               HELPER, stream_mode="messages"):
                seen.append((msg.type, msg.content, md["langgraph_node"]))
            return {"messages": [AIMessage(f"done {len(seen)}", id=f"done{len(s['messages'])}")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("research", aask if call == "astream-async-node" else ask)
        g.add_edge(E.START, "research")
        app = g.compile(checkpointer=E.InMemorySaver())
        api = "stream" if call == "stream" else "astream"
        kw: dict[str, Any] = {"stream_mode": ["messages", "updates"], "subgraphs": True}
        first = _outer(app, api, {"messages": [HumanMessage("what is tea?", id="h1")]}, **kw)
        second = _outer(app, api, {"messages": [HumanMessage("what did I ask?", id="h2")]}, **kw)
        memory = [(m.type, m.content) for m in agent.get_state(HELPER).values["messages"]]
        return first, second, seen, memory

    first, second, seen, memory = differential(scenario)
    assert len(memory) == 6
    assert any(c[1] == "messages" and c[2][0][0] == "ToolMessage" for c in first)


def test_node_streaming_the_same_sub_agent_twice_on_its_own_thread(differential):
    """One node streams its helper twice on the helper's thread (a question, then a
    follow-up): the caller's stream gets both answers' tokens, and messages already on the
    helper's thread are not streamed again."""
    def scenario(E):
        sub = _helper(E, own_thread=True)
        seen: list = []

        def twice(s):
            for text in ("first", "second"):
                for msg, _md in sub.stream({"messages": [HumanMessage(text, id=f"q-{text}")]}, HELPER,
                                           stream_mode="messages"):
                    seen.append(msg.content)
            return {"out": seen[:]}

        return _outer(_caller(E, twice), "stream", stream_mode="messages", subgraphs=True), seen

    differential(scenario)


class TokenCounter(BaseCallbackHandler):
    """A user's callback handler counting the tokens it sees (a cost meter)."""

    def __init__(self) -> None:
        self.tokens = 0

    def on_llm_new_token(self, token, **kwargs):
        self.tokens += 1


CALLBACK_CASES = [(w, h, t) for w in WHERE for h in ("invoke", "stream") for t in (False, True)]


@pytest.mark.parametrize(("where", "how", "traced"), CALLBACK_CASES,
                         ids=[f"{w}-{h}-{'traced' if t else 'untraced'}" for w, h, t in CALLBACK_CASES])
def test_callbacks_given_to_a_sub_agent_add_to_the_callers_streams(differential, where, how, traced):
    """A node invokes or streams a sub-agent with a token counter in its config's
    `callbacks`; the caller may itself run with a handler of its own (a tracer), which
    traces every node. As in LangGraph the given callbacks add to the inherited ones:
    the counter, the node's loop, the caller's handler and the caller's `messages`
    stream all see the sub-agent's tokens."""
    def scenario(E):
        own = where == "own-thread"
        sub = _helper(E, own_thread=own)
        counter, tracer = TokenCounter(), TokenCounter()
        seen: list = []

        def ask(s):
            cfg = {**(HELPER if own else {}), "callbacks": [counter]}
            if how == "invoke":
                sub.invoke({"messages": s["messages"][-1:]}, cfg)
            else:
                for msg, _md in sub.stream({"messages": s["messages"][-1:]}, cfg, stream_mode="messages"):
                    seen.append(msg.content)
            return {"out": [counter.tokens]}

        cfg = {**CFG, "callbacks": [tracer]} if traced else CFG
        outer = _outer(_caller(E, ask), "stream", cfg=cfg, stream_mode="messages", subgraphs=True)
        return outer, seen, counter.tokens, tracer.tokens

    outer, seen, counted, traced_tokens = differential(scenario)
    assert counted == 5 and len(outer) == 6
    assert traced_tokens == (5 if traced else 0)


@pytest.mark.parametrize("call", CALLS)
def test_traced_caller_streaming_a_sub_agent_in_a_node_gets_every_token(differential, call):
    """The caller runs with a callback handler of its own (so every node is traced, as
    with a tracer) and its node streams a sub-agent (sharing its config, then on its own
    thread) for `messages`: the node's loop reads the tokens, not just the final
    message, and the caller's stream gets them too, as in LangGraph."""
    def scenario(E):
        out = []
        for own in (False, True):
            seen: list = []
            node = _streaming_node(_helper(E, own_thread=own), HELPER if own else None, call, seen,
                                   stream_mode="messages")
            cfg = {**CFG, "callbacks": [TokenCounter()]}
            out.append((_outer(_caller(E, node), "stream" if call == "stream" else "astream", cfg=cfg,
                               stream_mode=["messages", "updates"], subgraphs=True), seen))
        return out

    for outer, seen in differential(scenario):
        assert len(seen) == 6 and len([c for c in outer if c[1] == "messages"]) == 6


def _passing_node_config(E, where, call, traced):
    """One caller run whose node hands its own config to the helper's stream."""
    sub = _helper(E, own_thread=where == "own-thread")
    seen: list = []

    def pick(config):
        return {**config, "configurable": {"thread_id": "helper"}} if where == "own-thread" else config

    def ask(s, config):
        for msg, _md in sub.stream({"messages": s["messages"][-1:]}, pick(config), stream_mode="messages"):
            seen.append(msg.content)
        return {"out": [len(seen)]}

    async def aask(s, config):
        async for msg, _md in sub.astream({"messages": s["messages"][-1:]}, pick(config), stream_mode="messages"):
            seen.append(msg.content)
        return {"out": [len(seen)]}

    tracer = TokenCounter()
    cfg = {**CFG, "callbacks": [tracer]} if traced else CFG
    app = _caller(E, aask if call == "astream-async-node" else ask)
    outer = _outer(app, "stream" if call == "stream" else "astream", cfg=cfg, stream_mode="messages",
                   subgraphs=True)
    return outer, seen, tracer.tokens


@pytest.mark.parametrize("where", WHERE)
def test_node_passing_its_own_config_to_the_sub_agents_stream_gets_each_token_once(differential, where):
    """The node hands its own `config` to `sub.stream(...)` (with the helper's thread id
    for a helper of its own), in a sync and an async node, with and without a handler on
    the caller's run: the caller's handlers come with that config and are not added twice,
    so every token shows once in each stream, as in LangGraph."""
    def scenario(E):
        return [_passing_node_config(E, where, call, traced)
                for call in ("stream", "astream-async-node") for traced in (False, True)]

    for outer, seen, _tokens in differential(scenario):
        assert len(outer) == len(seen) == 6


@pytest.mark.parametrize("call", CALLS)
def test_updates_of_a_sub_agents_subgraphs_streamed_with_subgraphs_in_a_node(differential, call):
    """The node streams a sub-agent that has a subgraph, for `updates` with
    `subgraphs=True`, and the caller streams `updates` and `messages` with subgraphs.
    LangGraph's sync `stream` passes the sub-agent's subgraph updates on to the caller's
    stream as well; its async `astream` keeps them in the node's loop (the sub-agent's own
    updates and the model's tokens still reach the caller): both kept as LangGraph has them."""
    def scenario(E):
        model = Echo(who="deep")
        deep = E.StateGraph(_state(E))
        deep.add_node("deep", lambda s: {"messages": [model.invoke(s["messages"])]})
        deep.add_edge(E.START, "deep")
        mid = E.StateGraph(_state(E))
        mid.add_node("mid", deep.compile())
        mid.add_node("tally", lambda s: {"out": [len(s["messages"])]})
        mid.add_edge(E.START, "mid")
        mid.add_edge("mid", "tally")
        seen: list = []
        node = _streaming_node(mid.compile(), None, call, seen, stream_mode="updates", subgraphs=True)
        return _outer(_caller(E, node), "stream" if call == "stream" else "astream",
                      stream_mode=["updates", "messages"], subgraphs=True), seen

    outer, seen = differential(scenario)
    deep_updates = [c for c in outer if c[1] == "updates" and len(c[0]) == 2]
    assert len(seen) == 3 and len(deep_updates) == (0 if call == "astream-async-node" else 1)

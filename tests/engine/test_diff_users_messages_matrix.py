"""`stream_mode="messages"`: where the model is called, crossed with how the graph is streamed.

A chat UI streams a graph's tokens; where the model sits varies: called directly in a node
(`invoke` / `stream` / `batch` / `ainvoke` / `astream`), inside a tool run by `ToolNode`,
in a subgraph added as a node or invoked from a node, in a graph on a thread of its own,
in a `@task` of an entrypoint, in `prompt | model | StrOutputParser()`, in a
`RunnableParallel` of two models, behind `with_structured_output`, tagged `nostream`, a
model without `_stream`, a node that drops the model's message, two models in parallel
branches. Each site runs under `stream` / `astream` × `"messages"` / `["messages",
"updates"]` × `subgraphs=False/True` × `version="v1"/"v2"`. Every chunk (message content,
id, type, the full metadata dict: langgraph_* keys, checkpoint_ns, thread_id, tags, ls_*)
and the order are compared with LangGraph.

Where LangGraph itself emits in completion order (a sync `batch`, a sync `RunnableParallel`
and sync parallel branches run in a thread pool), the stream is compared as a multiset of
per-message chunk sequences plus the other chunks (each message's own chunks stay ordered).
Async call sites run only under `astream` (a sync `stream` refuses an async node).
"""

import asyncio
import operator
from typing import Annotated, Any

import pytest
from _diff import acollect, collect, normalize
from _scripted import Echo, last_text
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel
from typing_extensions import TypedDict

TAG_NOSTREAM = "nostream"  # langgraph.constants.TAG_NOSTREAM


# --- models -------------------------------------------------------------------------------


class Whole(BaseChatModel):
    """A model with only `_generate`: no tokens, the whole message at the end."""

    @property
    def _llm_type(self) -> str:
        return "whole-chat"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        return ChatResult(generations=[ChatGeneration(
            message=AIMessage(f"whole answer to {last_text(messages)}"))])


class Verdict(BaseModel):
    label: str
    score: int


HI = {"messages": [HumanMessage("hi there", id="h1")], "out": []}
CFG = {"configurable": {"thread_id": "chat"}}


# --- call sites ---------------------------------------------------------------------------


def _state(E):
    class St(TypedDict):
        messages: Annotated[list, E.add_messages]
        out: Annotated[list, operator.add]

    return St


def _one(E, fn, name="chat"):
    g = E.StateGraph(_state(E))
    g.add_node(name, fn)
    g.add_edge(E.START, name)
    return g


def _site(E, site):  # noqa: C901 - one branch per call site
    """The graph builder (uncompiled, or a compiled entrypoint) for one call site."""
    model = Echo(who="bot")
    if site == "invoke":
        return _one(E, lambda s: {"messages": [model.invoke(s["messages"])]})
    if site == "stream":
        def chat(s):
            total = None
            for c in model.stream(s["messages"]):
                total = c if total is None else total + c
            return {"messages": [total]}

        return _one(E, chat)
    if site == "batch":
        def chat(s):
            replies = model.batch([s["messages"], [HumanMessage("second question")]])
            return {"out": [r.content for r in replies]}

        return _one(E, chat)
    if site == "ainvoke":
        async def achat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        return _one(E, achat)
    if site == "astream":
        async def achat(s):
            total = None
            async for c in model.astream(s["messages"]):
                total = c if total is None else total + c
            return {"messages": [total]}

        return _one(E, achat)
    if site == "tool_node":
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode

        @tool
        def ask_expert(question: str) -> str:
            """Ask the expert model."""
            return model.invoke(question).content

        def plan(s):
            return {"messages": [AIMessage("", id="plan-1", tool_calls=[
                {"name": "ask_expert", "args": {"question": "why"}, "id": "call-x", "type": "tool_call"}])]}

        g = E.StateGraph(_state(E))
        g.add_node("plan", plan)
        g.add_node("tools", ToolNode([ask_expert]))
        g.add_edge(E.START, "plan")
        g.add_edge("plan", "tools")
        return g
    if site in ("asubgraph_invoked", "aown_thread"):
        async def ainner(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        inner_graph = _one(E, ainner, name="inner")
        own = site == "aown_thread"
        sub = inner_graph.compile(checkpointer=E.InMemorySaver() if own else None)
        sub_cfg = {"configurable": {"thread_id": "helper"}} if own else None

        async def acall_sub(s):
            res = await sub.ainvoke({"messages": s["messages"]}, sub_cfg)
            return {"out": [res["messages"][-1].content]}

        return _one(E, acall_sub, name="caller")
    if site in ("subgraph_node", "subgraph_invoked", "own_thread"):
        inner = _one(E, lambda s: {"messages": [model.invoke(s["messages"])]}, name="inner")
        if site == "subgraph_node":
            g = E.StateGraph(_state(E))
            g.add_node("sub", inner.compile())
            g.add_edge(E.START, "sub")
            return g
        if site == "subgraph_invoked":
            sub = inner.compile()

            def call_sub(s):
                return {"out": [sub.invoke({"messages": s["messages"]})["messages"][-1].content]}

            return _one(E, call_sub, name="caller")
        helper = inner.compile(checkpointer=E.InMemorySaver())

        def call_helper(s):
            res = helper.invoke({"messages": s["messages"]}, {"configurable": {"thread_id": "helper"}})
            return {"out": [res["messages"][-1].content]}

        return _one(E, call_helper, name="caller")
    if site == "task":
        @E.func.task
        def ask(messages):
            return model.invoke(messages)

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def flow(inp):
            return {"messages": [ask(inp["messages"]).result()]}

        return flow
    if site == "chain":
        from langchain_core.output_parsers import StrOutputParser
        from langchain_core.prompts import ChatPromptTemplate

        chain = ChatPromptTemplate.from_messages([("human", "summarize: {q}")]) | model | StrOutputParser()
        return _one(E, lambda s: {"out": [chain.invoke({"q": s["messages"][-1].content})]})
    if site in ("parallel", "aparallel"):
        from langchain_core.runnables import RunnableParallel

        both = RunnableParallel(pro=Echo(who="pro"), con=Echo(who="con"))
        if site == "parallel":
            return _one(E, lambda s: {"out": [v.content for v in both.invoke(s["messages"]).values()]})

        async def adebate(s):
            return {"out": [v.content for v in (await both.ainvoke(s["messages"])).values()]}

        return _one(E, adebate)
    if site == "structured":
        judge = model.with_structured_output(Verdict)
        return _one(E, lambda s: {"out": [judge.invoke(s["messages"]).model_dump()]})
    if site == "nostream":
        quiet = model.with_config(tags=[TAG_NOSTREAM])
        return _one(E, lambda s: {"messages": [quiet.invoke(s["messages"])]})
    if site == "whole":
        return _one(E, lambda s: {"messages": [Whole().invoke(s["messages"])]})
    if site == "drops":
        return _one(E, lambda s: {"out": [len(model.invoke(s["messages"]).content)]})
    if site in ("branches", "abranches"):
        left, right = Echo(who="left"), Echo(who="right")
        g = E.StateGraph(_state(E))
        if site == "branches":
            g.add_node("left", lambda s: {"messages": [left.invoke(s["messages"])]})
            g.add_node("right", lambda s: {"messages": [right.invoke(s["messages"])]})
        else:
            async def aleft(s):
                return {"messages": [await left.ainvoke(s["messages"])]}

            async def aright(s):
                return {"messages": [await right.ainvoke(s["messages"])]}

            g.add_node("left", aleft)
            g.add_node("right", aright)
        g.add_node("join", lambda s: {"out": [len(s["messages"])]})
        g.add_edge(E.START, "left")
        g.add_edge(E.START, "right")
        g.add_edge(["left", "right"], "join")
        return g
    raise AssertionError(site)


SYNC_SITES = ("invoke", "stream", "batch", "tool_node", "subgraph_node", "subgraph_invoked",
              "own_thread", "task", "chain", "parallel", "structured", "nostream", "whole",
              "drops", "branches")
ASYNC_SITES = ("ainvoke", "astream", "aparallel", "abranches", "asubgraph_invoked", "aown_thread")
# LangGraph emits these in completion order (a thread pool runs the calls / the branches)
UNORDERED = {"batch", "parallel", "branches"}

CALLS = [(api, modes, sg, v) for api in ("stream", "astream") for modes in ("messages", "messages+updates")
         for sg in (False, True) for v in ("v1", "v2")]


def _message_of(chunk: Any) -> Any:
    """The message of a `messages` chunk in any shape (v1/v2, one mode or many, ns or not)."""
    if isinstance(chunk, dict):
        return chunk["data"][0] if chunk.get("type") == "messages" else None
    if isinstance(chunk, tuple):
        if len(chunk) == 2 and isinstance(chunk[0], BaseMessage):
            return chunk[0]
        return _message_of(chunk[-1]) if isinstance(chunk[-1], (tuple, dict)) else None
    return None


def _as_multiset(chunks: list) -> list:
    """Each message's chunks in their order, plus every other chunk; groups sorted."""
    groups: dict[Any, list] = {}
    others = []
    for c in chunks:
        m = _message_of(c)
        if m is None:
            others.append([c])
        else:
            groups.setdefault(m.id, []).append(c)
    return sorted((normalize(g) for g in [*groups.values(), *others]), key=repr)


def _per_namespace(chunks: list) -> list:
    """`(ns, mode, data)` chunks split into one ordered sequence per namespace."""
    out: dict = {}
    for ns, mode, data in chunks:
        out.setdefault(ns, []).append((mode, data))
    return sorted(normalize(list(out.values())), key=repr)


def _stream(app, api, modes, subgraphs, version):
    kw: dict = {"stream_mode": ["messages", "updates"] if modes == "messages+updates" else "messages",
                "subgraphs": subgraphs}
    if version == "v2":
        kw["version"] = "v2"
    if api == "stream":
        return collect(lambda: app.stream(HI, CFG, **kw))
    return asyncio.run(acollect(lambda: app.astream(HI, CFG, **kw)))


def _wrapping(E, name, sub, **node_kwargs):
    """A checkpointed parent whose one node `name` is `sub` (a subgraph or a function)."""
    g = E.StateGraph(_state(E))
    g.add_node(name, sub, **node_kwargs)
    g.add_edge(E.START, name)
    return g.compile(checkpointer=E.InMemorySaver())


CELLS = [(site, *call) for site in SYNC_SITES for call in CALLS] + [
    (site, *call) for site in ASYNC_SITES for call in CALLS if call[0] == "astream"]


@pytest.mark.parametrize(("site", "api", "modes", "subgraphs", "version"), CELLS,
                         ids=[f"{s}-{a}-{m}-{'sub' if g else 'flat'}-{v}" for s, a, m, g, v in CELLS])

def test_tokens_from_every_call_site_stream_like_langgraph(differential, site, api, modes, subgraphs,
                                                           version):
    """The chunks a chat UI renders (content, id, type, full metadata) and their order match
    LangGraph's wherever the model is called and however the graph is streamed."""
    def scenario(E):
        built = _site(E, site)
        app = built if site == "task" else built.compile(checkpointer=E.InMemorySaver())
        chunks = _stream(app, api, modes, subgraphs, version)
        return _as_multiset(chunks) if site in UNORDERED else chunks

    ref = differential(scenario)
    hidden = site in ("subgraph_invoked", "own_thread", "asubgraph_invoked", "aown_thread") and not subgraphs
    if not hidden or modes == "messages+updates":
        assert ref, "the run streamed something"
    else:  # a graph invoked inside a node streams its tokens only with subgraphs=True
        assert ref == []
    assert not any(isinstance(c, tuple) and c and c[0] == "raises" for c in ref), ref


# --- programs beyond the matrix -------------------------------------------------------------


def _both(app, inp=None, cfg=CFG, modes=("messages", "updates")):
    """The stream through `stream` and `astream` with subgraphs, v1 and v2."""
    inp = HI if inp is None else inp
    kw = {"stream_mode": list(modes), "subgraphs": True}
    return (collect(lambda: app.stream(inp, cfg, **kw)),
            asyncio.run(acollect(lambda: app.astream(inp, cfg, **kw, version="v2"))))


def _chat(model):
    return lambda s: {"messages": [model.invoke(s["messages"])]}


def test_a_task_called_from_a_graph_node_streams_under_the_task(differential):
    """A `@task` called inside a StateGraph node streams its model's tokens with the
    task's own node name, push path and checkpoint namespace."""
    def scenario(E):
        model = Echo(who="task")

        @E.func.task
        def draft(messages):
            return model.invoke(messages)

        g = _one(E, lambda s: {"messages": [draft(s["messages"]).result()]}, name="writer")
        return _both(g.compile(checkpointer=E.InMemorySaver()))

    differential(scenario)


def test_two_tasks_in_parallel_in_an_entrypoint_stream_every_token(differential):
    """Two `@task`s started before either result is read both stream (per-message order)."""
    def scenario(E):
        a, b = Echo(who="a"), Echo(who="b")

        @E.func.task
        def ask_a(messages):
            return a.invoke(messages)

        @E.func.task
        def ask_b(messages):
            return b.invoke(messages)

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def flow(inp):
            fa, fb = ask_a(inp["messages"]), ask_b(inp["messages"])
            return {"messages": [fa.result(), fb.result()]}

        return [_as_multiset(x) for x in _both(flow)]

    differential(scenario)


def test_async_tasks_gathered_in_an_async_entrypoint_stream_in_order(differential):
    """Async tasks awaited together stream every token with each task's metadata."""
    async def scenario(E):
        a, b = Echo(who="a"), Echo(who="b")

        @E.func.task
        async def ask_a(messages):
            return await a.ainvoke(messages)

        @E.func.task
        async def ask_b(messages):
            return await b.ainvoke(messages)

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        async def flow(inp):
            ra, rb = await asyncio.gather(ask_a(inp["messages"]), ask_b(inp["messages"]))
            return {"messages": [ra, rb]}

        return await acollect(lambda: flow.astream(HI, CFG, stream_mode=["messages", "updates"],
                                                    subgraphs=True))

    differential(scenario)


def test_entrypoint_calling_another_entrypoint_streams_its_tokens(differential):
    """An entrypoint invoked from an entrypoint streams like a subgraph."""
    def scenario(E):
        model = Echo(who="inner")

        @E.func.entrypoint()
        def inner(inp):
            return {"messages": [model.invoke(inp["messages"])]}

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def outer(inp):
            return {"messages": inner.invoke(inp)["messages"]}

        return _both(outer)

    differential(scenario)


def test_nested_subgraphs_two_levels_with_updates_and_v2(differential):
    """A model two subgraphs deep streams under the nested namespace, with updates of
    each level in between."""
    def scenario(E):
        inner = _one(E, _chat(Echo(who="deep")), name="deep").compile()
        mid = E.StateGraph(_state(E))
        mid.add_node("inner", inner)
        mid.add_edge(E.START, "inner")
        return _both(_wrapping(E, "mid", mid.compile()))

    differential(scenario)


def test_subgraph_with_its_own_checkpointer_true_streams_under_its_namespace(differential):
    """`compile(checkpointer=True)` on a subgraph keeps the same messages metadata."""
    def scenario(E):
        sub = _one(E, _chat(Echo(who="mem")), name="inner").compile(checkpointer=True)
        app = _wrapping(E, "sub", sub)
        return _both(app), _both(app)

    differential(scenario)


def test_subgraph_compiled_with_nostream_tag_hides_its_tokens(differential):
    """A subgraph node configured with the `nostream` tag streams no tokens; the
    messages its nodes return are still emitted."""
    def scenario(E):
        sub = _one(E, _chat(Echo(who="quiet")), name="inner").compile().with_config(tags=[TAG_NOSTREAM])
        return _both(_wrapping(E, "sub", sub))

    differential(scenario)


def test_send_fanout_to_a_subgraph_that_calls_a_model(differential):
    """Each `Send` to a subgraph node streams the model under its own push task namespace."""
    def scenario(E):
        model = Echo(who="worker")
        sub = _one(E, _chat(model), name="inner").compile()
        g = E.StateGraph(_state(E))
        g.add_node("start", lambda s: {"out": ["go"]})
        g.add_node("work", sub)
        g.add_edge(E.START, "start")
        g.add_conditional_edges("start", lambda s: [
            E.Send("work", {"messages": [HumanMessage(q, id=f"q{i}")], "out": []})
            for i, q in enumerate(["one", "two"])])
        app = g.compile(checkpointer=E.InMemorySaver())
        return [_as_multiset(x) for x in _both(app)]

    differential(scenario)


def test_async_send_fanout_to_a_subgraph_streams_in_order(differential):
    """Async workers reached by `Send` stream every token under their push task, each
    worker's chunks in order. How the workers' chunks interleave depends on event-loop
    turns (lgnb saves a subgraph's checkpoints beside a node it measured slow), so only
    per-namespace order is compared."""
    async def scenario(E):
        model = Echo(who="worker")

        async def inner(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        sub = _one(E, inner, name="inner").compile()
        g = E.StateGraph(_state(E))
        g.add_node("work", sub)
        g.add_conditional_edges(E.START, lambda s: [
            E.Send("work", {"messages": [HumanMessage(q, id=f"q{i}")], "out": []})
            for i, q in enumerate(["one", "two"])])
        app = g.compile(checkpointer=E.InMemorySaver())
        return _per_namespace(await acollect(lambda: app.astream(
            HI, CFG, stream_mode=["messages", "updates"], subgraphs=True)))

    ref = differential(scenario)
    assert len(ref) == 3, "both workers and the parent streamed"


def test_model_called_with_the_nodes_config_and_extra_metadata_and_run_name(differential):
    """`model.invoke(msgs, {**config, "metadata": ..., "run_name": ...})` merges the
    user's metadata into every chunk's metadata."""
    def scenario(E):
        model = Echo(who="cfg")

        def chat(s, config):
            return {"messages": [model.invoke(s["messages"], {**config, "run_name": "answer",
                                                               "metadata": {"purpose": "reply"}})]}

        return _both(_one(E, chat).compile(checkpointer=E.InMemorySaver()))

    differential(scenario)


def test_model_with_config_tags_and_metadata_show_in_chunk_metadata(differential):
    """Tags and metadata set with `with_config` on the model reach each chunk."""
    def scenario(E):
        model = Echo(who="tagged").with_config(tags=["answerer"], metadata={"tier": "gold"})
        return _both(_one(E, _chat(model)).compile(checkpointer=E.InMemorySaver()))

    differential(scenario)


def test_model_called_with_callbacks_cleared_streams_only_the_returned_message(differential):
    """A node that calls the model with `callbacks=[]` (detached from the run) streams no
    tokens; the message the node returns is emitted once."""
    def scenario(E):
        model = Echo(who="detached")
        return _both(_one(E, lambda s: {"messages": [model.invoke(s["messages"], {"callbacks": []})]})
                     .compile(checkpointer=E.InMemorySaver()))

    differential(scenario)


def test_node_breaking_out_of_model_stream_keeps_the_tokens_it_read(differential):
    """A node that stops reading `model.stream` after two chunks: those chunks stream,
    the partial reply it returns is a new message emitted at the end of the node."""
    def scenario(E):
        model = Echo(who="early")

        def chat(s):
            got = []
            for c in model.stream(s["messages"]):
                got.append(c.content)
                if len(got) == 2:
                    break
            return {"messages": [AIMessage("".join(got), id="partial")]}

        return _both(_one(E, chat).compile(checkpointer=E.InMemorySaver()))

    differential(scenario)


def test_two_models_called_one_after_the_other_in_a_node_and_both_returned(differential):
    """Two model calls in one node stream one after the other; returning both emits nothing
    more."""
    def scenario(E):
        a, b = Echo(who="first"), Echo(who="second")

        def chat(s):
            ra = a.invoke(s["messages"])
            return {"messages": [ra, b.invoke([*s["messages"], ra])]}

        return _both(_one(E, chat).compile(checkpointer=E.InMemorySaver()))

    differential(scenario)


def test_sync_model_call_inside_an_async_node(differential):
    """An async node calling the sync `model.invoke` still streams under `astream`."""
    async def scenario(E):
        model = Echo(who="syncin")

        async def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        app = _one(E, chat).compile(checkpointer=E.InMemorySaver())
        return await acollect(lambda: app.astream(HI, CFG, stream_mode=["messages", "updates"],
                                                  subgraphs=True))

    differential(scenario)


def test_async_tool_in_tool_node_calling_a_model(differential):
    """An async tool run by `ToolNode` under `astream` streams its model's tokens, then
    the tool's message."""
    async def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode

        model = Echo(who="expert")

        @tool
        async def ask_expert(question: str) -> str:
            """Ask the expert model."""
            return (await model.ainvoke(question)).content

        g = E.StateGraph(_state(E))
        g.add_node("plan", lambda s: {"messages": [AIMessage("", id="plan-1", tool_calls=[
            {"name": "ask_expert", "args": {"question": "why"}, "id": "call-x", "type": "tool_call"}])]})
        g.add_node("tools", ToolNode([ask_expert]))
        g.add_edge(E.START, "plan")
        g.add_edge("plan", "tools")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await acollect(lambda: app.astream(HI, CFG, stream_mode=["messages", "updates"],
                                                  subgraphs=True, version="v2"))

    differential(scenario)


def test_tool_that_asks_a_human_then_calls_a_model_after_resume(differential):
    """A tool pauses with `interrupt`; on resume it calls the model, whose tokens stream
    on the resumed run only."""
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode

        model = Echo(who="after")

        @tool
        def ask_expert(question: str) -> str:
            """Ask the expert model after approval."""
            ok = E.interrupt({"approve": question})
            return model.invoke(f"{question} {ok}").content

        g = E.StateGraph(_state(E))
        g.add_node("plan", lambda s: {"messages": [AIMessage("", id="plan-1", tool_calls=[
            {"name": "ask_expert", "args": {"question": "why"}, "id": "call-x", "type": "tool_call"}])]})
        g.add_node("tools", ToolNode([ask_expert]))
        g.add_edge(E.START, "plan")
        g.add_edge("plan", "tools")
        app = g.compile(checkpointer=E.InMemorySaver())
        kw = {"stream_mode": ["messages", "updates"], "subgraphs": True}
        first = collect(lambda: app.stream(HI, CFG, **kw))
        second = collect(lambda: app.stream(E.Command(resume="yes"), CFG, **kw, version="v2"))
        return first, second

    differential(scenario)


def test_command_with_goto_carrying_the_model_message(differential):
    """A node returning `Command(update={"messages": [reply]}, goto=...)` does not re-emit
    the streamed reply; the next node's tokens follow."""
    def scenario(E):
        a, b = Echo(who="router"), Echo(who="next")
        g = E.StateGraph(_state(E))
        g.add_node("route", lambda s: E.Command(update={"messages": [a.invoke(s["messages"])]},
                                               goto="answer"))
        g.add_node("answer", _chat(b))
        g.add_edge(E.START, "route")
        return _both(g.compile(checkpointer=E.InMemorySaver()))

    differential(scenario)


def test_subgraph_and_plain_node_in_parallel_branches_async(differential):
    """A subgraph branch and a plain-node branch, both async, stream their tokens with
    their own namespaces, each namespace's chunks in order. How the two branches'
    chunks interleave depends on how many event-loop turns each engine takes to start a
    subgraph (with a real model, on network timing), so only per-namespace order is
    compared."""
    async def scenario(E):
        m1, m2 = Echo(who="sub"), Echo(who="plain")

        async def inner(s):
            return {"messages": [await m1.ainvoke(s["messages"])]}

        async def plain(s):
            return {"messages": [await m2.ainvoke(s["messages"])]}

        g = E.StateGraph(_state(E))
        g.add_node("sub", _one(E, inner, name="inner").compile())
        g.add_node("plain", plain)
        g.add_edge(E.START, "sub")
        g.add_edge(E.START, "plain")
        app = g.compile(checkpointer=E.InMemorySaver())
        return _per_namespace(await acollect(lambda: app.astream(
            HI, CFG, stream_mode=["messages", "updates"], subgraphs=True)))

    ref = differential(scenario)
    assert len(ref) == 2, "both namespaces streamed"


def test_subgraph_streamed_for_messages_inside_a_node_with_subgraphs(differential):
    """A node that forwards a subgraph's own `stream(stream_mode="messages")`: what the node
    sees and what the outer stream shows match LangGraph."""
    def scenario(E):
        sub = _one(E, _chat(Echo(who="relay")), name="inner").compile()
        seen = []

        def relay(s):
            for msg, md in sub.stream({"messages": s["messages"], "out": []}, stream_mode="messages"):
                seen.append((msg.content, md["langgraph_node"], md.get("langgraph_checkpoint_ns")))
            return {"out": [len(seen)]}

        app = _one(E, relay, name="relay").compile(checkpointer=E.InMemorySaver())
        return _both(app), seen

    differential(scenario)


def test_graph_without_checkpointer_messages_metadata(differential):
    """Without a checkpointer (no thread) the chunk metadata has no thread id and the
    same langgraph_* keys."""
    def scenario(E):
        sub = _one(E, _chat(Echo(who="nothread")), name="inner").compile()
        g = E.StateGraph(_state(E))
        g.add_node("sub", sub)
        g.add_node("top", _chat(Echo(who="top")))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "top")
        return _both(g.compile(), cfg=None)

    differential(scenario)


def test_graph_with_config_metadata_and_a_subgraph_with_its_own(differential):
    """Metadata given with `with_config` on the outer graph and on a subgraph both reach
    the subgraph's chunks."""
    def scenario(E):
        sub = _one(E, _chat(Echo(who="meta")), name="inner").compile().with_config(
            metadata={"team": "inner"})
        app = _wrapping(E, "sub", sub).with_config(metadata={"app": "chat"}, tags=["prod"])
        return _both(app)

    differential(scenario)


def test_structured_output_with_include_raw_in_a_subgraph(differential):
    """`with_structured_output(include_raw=True)` inside a subgraph streams its tool-call
    chunks under the subgraph's namespace."""
    def scenario(E):
        judge = Echo(who="judge").with_structured_output(Verdict, include_raw=True)

        def grade(s):
            res = judge.invoke(s["messages"])
            return {"messages": [res["raw"]], "out": [res["parsed"].model_dump()]}

        return _both(_wrapping(E, "sub", _one(E, grade, name="grade").compile()))

    differential(scenario)


def test_retried_node_streams_each_attempts_tokens(differential):
    """A node with a retry policy whose model call fails after streaming: both attempts'
    tokens stream, then the successful reply's update."""
    def scenario(E):
        model = Echo(who="retry")
        calls = []

        def chat(s):
            reply = model.invoke(s["messages"])
            calls.append(1)
            if len(calls) == 1:
                raise ValueError("flaky")
            return {"messages": [reply]}

        app = _wrapping(E, "chat", chat, retry_policy=E.RetryPolicy(initial_interval=0, jitter=False))
        return collect(lambda: app.stream(HI, CFG, stream_mode=["messages", "updates"], subgraphs=True))

    differential(scenario)


def test_second_turn_on_the_same_thread_streams_only_the_new_reply(differential):
    """On the second turn of a thread the earlier messages in state are not re-emitted."""
    def scenario(E):
        model = Echo(who="turns")
        sub = _one(E, _chat(model), name="inner").compile()
        app = _wrapping(E, "sub", sub)
        first = _both(app)
        second = _both(app, {"messages": [HumanMessage("again", id="h2")], "out": []})
        return first, second

    differential(scenario)


def test_functional_entrypoint_returning_the_reply_with_final_and_save(differential):
    """`entrypoint.final(value=reply, save=...)` in a streamed entrypoint: tokens once."""
    def scenario(E):
        model = Echo(who="final")

        @E.func.task
        def ask(messages):
            return model.invoke(messages)

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def flow(inp, *, previous=None):
            reply = ask(inp["messages"]).result()
            return E.func.entrypoint.final(value={"messages": [reply]}, save=(previous or 0) + 1)

        return _both(flow), _both(flow)

    differential(scenario)


def test_agent_loop_with_bound_tool_choice_then_tool_node_then_answer(differential):
    """An agent node whose model is forced to call a tool (`tool_choice`), `ToolNode`
    running it, and a final answer node: tool-call chunks, the tool message and the
    answer's tokens stream in order."""
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode

        @tool
        def lookup(label: str, score: int) -> str:
            """Look a label up."""
            return f"{label}:{score}"

        caller = Echo(who="agent").bind_tools([lookup], tool_choice="lookup")
        g = E.StateGraph(_state(E))
        g.add_node("agent", _chat(caller))
        g.add_node("tools", ToolNode([lookup]))
        g.add_node("answer", _chat(Echo(who="answer")))
        g.add_edge(E.START, "agent")
        g.add_edge("agent", "tools")
        g.add_edge("tools", "answer")
        return _both(g.compile(checkpointer=E.InMemorySaver()))

    ref = differential(scenario)
    assert "lookup" in repr(ref[0])


def test_tool_streaming_its_model_inside_tool_node(differential):
    """A tool that reads `model.stream(...)` itself streams those tokens under the tools
    node."""
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode

        model = Echo(who="streamer")

        @tool
        def ask_expert(question: str) -> str:
            """Ask the expert model."""
            return "".join(c.content for c in model.stream(question))

        g = E.StateGraph(_state(E))
        g.add_node("plan", lambda s: {"messages": [AIMessage("", id="plan-1", tool_calls=[
            {"name": "ask_expert", "args": {"question": "how"}, "id": "call-y", "type": "tool_call"}])]})
        g.add_node("tools", ToolNode([ask_expert]))
        g.add_edge(E.START, "plan")
        g.add_edge("plan", "tools")
        return _both(g.compile(checkpointer=E.InMemorySaver()))

    differential(scenario)


def test_subgraph_invoked_inside_a_task_of_an_entrypoint(differential):
    """A compiled graph invoked from a `@task` streams its tokens with subgraphs=True."""
    def scenario(E):
        sub = _one(E, _chat(Echo(who="deep")), name="inner").compile()

        @E.func.task
        def research(messages):
            return sub.invoke({"messages": messages, "out": []})["messages"][-1]

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def flow(inp):
            return {"messages": [research(inp["messages"]).result()]}

        return _both(flow)

    differential(scenario)


def test_entrypoint_returning_the_reply_message_itself(differential):
    """An entrypoint whose return value is the model's message (not a dict) emits it
    once after the task's tokens."""
    def scenario(E):
        model = Echo(who="bare")

        @E.func.task
        def ask(messages):
            return model.invoke(messages)

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def flow(inp):
            reply = ask(inp["messages"]).result()
            return AIMessage(reply.content + "!", id="final-1")

        return _both(flow)

    differential(scenario)


def test_async_node_running_the_sync_model_in_to_thread(differential):
    """`await asyncio.to_thread(model.invoke, msgs)` in an async node (context copied)
    streams the tokens under the node."""
    async def scenario(E):
        model = Echo(who="thread")

        async def chat(s):
            return {"messages": [await asyncio.to_thread(model.invoke, s["messages"])]}

        app = _one(E, chat).compile(checkpointer=E.InMemorySaver())
        return await acollect(lambda: app.astream(HI, CFG, stream_mode=["messages", "updates"],
                                                  subgraphs=True))

    differential(scenario)


@pytest.mark.parametrize("modes", [["messages"], ["values", "messages"], ["messages", "custom", "values"]])
def test_messages_with_values_and_custom_modes_through_a_subgraph(differential, modes):
    """Messages from a subgraph interleave with values and custom chunks of both levels
    exactly as LangGraph emits them."""
    def scenario(E):
        model = Echo(who="mixed")

        def inner(s):
            E.get_stream_writer()({"phase": "thinking"})
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(_state(E))
        g.add_node("sub", _one(E, inner, name="inner").compile())
        g.add_node("after", lambda s: {"out": [len(s["messages"])]})
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "after")
        return _both(g.compile(checkpointer=E.InMemorySaver()), modes=modes)

    differential(scenario)


@pytest.mark.parametrize("subgraphs", [False, True])
def test_node_returning_the_whole_state_of_the_graph_it_invoked(differential, subgraphs):
    """A node that returns everything an invoked graph returned (the input and the reply):
    which of those messages stream, and when, matches LangGraph."""
    def scenario(E):
        sub = _one(E, _chat(Echo(who="whole")), name="inner").compile()

        def call_sub(s):
            return {"messages": sub.invoke({"messages": s["messages"], "out": []})["messages"]}

        app = _one(E, call_sub, name="caller").compile(checkpointer=E.InMemorySaver())
        kw = {"stream_mode": ["messages", "updates"], "subgraphs": subgraphs}
        return (collect(lambda: app.stream(HI, CFG, **kw)),
                collect(lambda: app.stream({"messages": [HumanMessage("more", id="h2")], "out": []},
                                           CFG, **kw)))

    differential(scenario)


@pytest.mark.parametrize("durability", ["exit", "async", "sync"])
def test_tokens_from_a_subgraph_under_each_durability(differential, durability):
    """The durability of the run changes nothing in the messages stream of a subgraph."""
    def scenario(E):
        g = E.StateGraph(_state(E))
        g.add_node("sub", _one(E, _chat(Echo(who="durable")), name="inner").compile())
        g.add_node("after", _chat(Echo(who="after")))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "after")
        app = g.compile(checkpointer=E.InMemorySaver())
        kw = {"stream_mode": ["messages", "updates"], "subgraphs": True, "durability": durability}
        return (collect(lambda: app.stream(HI, CFG, **kw)),
                asyncio.run(acollect(lambda: app.astream(HI, {"configurable": {"thread_id": "a"}}, **kw))))

    differential(scenario)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_invoke_with_messages_stream_mode_returns_what_langgraph_returns(differential, version):
    """`invoke(..., stream_mode=["messages", "updates"])` / `ainvoke` of a graph with a
    subgraph returns the same value (chunks or output) as LangGraph."""
    def scenario(E):
        app = _wrapping(E, "sub", _one(E, _chat(Echo(who="inv")), name="inner").compile())
        kw = {"stream_mode": ["messages", "updates"], "version": version}
        return (app.invoke(HI, CFG, **kw),
                asyncio.run(app.ainvoke(HI, {"configurable": {"thread_id": "b"}}, **kw)),
                app.invoke(HI, {"configurable": {"thread_id": "c"}}, stream_mode="messages",
                           version=version))

    differential(scenario)


def test_model_in_a_conditional_edge_inside_a_subgraph(differential):
    """A router inside a subgraph that asks a model streams its tokens under the
    subgraph's source node and namespace."""
    def scenario(E):
        judge = Echo(who="router")

        def route(s):
            return "yes" if "hi" in judge.invoke(s["messages"]).content else "no"

        sub = E.StateGraph(_state(E))
        sub.add_node("look", lambda s: {"out": ["looked"]})
        sub.add_node("yes", _chat(Echo(who="yes")))
        sub.add_node("no", lambda s: {"out": ["no"]})
        sub.add_edge(E.START, "look")
        sub.add_conditional_edges("look", route, ["yes", "no"])
        return _both(_wrapping(E, "sub", sub.compile()))

    differential(scenario)


def test_graph_invoked_from_a_node_with_the_nostream_tag(differential):
    """`sub.invoke(x, {"tags": ["nostream"]})` from a node: no tokens from that graph even
    with subgraphs=True; its returned messages still stream under its namespace."""
    def scenario(E):
        sub = _one(E, _chat(Echo(who="hushed")), name="inner").compile()

        def call_sub(s):
            res = sub.invoke({"messages": s["messages"], "out": []}, {"tags": [TAG_NOSTREAM]})
            return {"out": [res["messages"][-1].content]}

        return _both(_one(E, call_sub, name="caller").compile(checkpointer=E.InMemorySaver()))

    ref = differential(scenario)
    assert [c[1] for c in ref[0]].count("messages") == 1, "one message, no tokens"

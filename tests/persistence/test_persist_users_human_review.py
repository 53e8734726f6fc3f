"""Human-in-the-loop review programs as users write them, on LangGraph and on lgnb.

The "review tool calls" agent of LangGraph's how-to (a chat model emitting tool calls, a
`human_review` node calling `interrupt()` and routing with `Command(goto=, update=)` on
continue / update / feedback), `interrupt_before` on a prebuilt `ToolNode` (approve with
`invoke(None)`, reject with `update_state(as_node=)`), interrupts in hand-written tool nodes,
Send fan-out branches that each ask a human, validation loops, streams and state reads
around the pause, async twins. Checkpointers: InMemorySaver, and SQLite (LangGraph's
`SqliteSaver` on LangGraph, lgnb's on lgnb) where marked.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import operator
import sqlite3
from typing import Annotated, Literal

import pytest
from _diff import acollect, capture, collect, steps_as_multisets
from _savers import thread
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from typing_extensions import TypedDict

SAVERS = ("memory", "sqlite")


def _saver(E, kind="memory"):
    if not isinstance(kind, str):  # an opened saver
        return kind
    if kind == "memory":
        return E.InMemorySaver()
    if E.root == "lgnb":
        from lgnb.checkpoint.sqlite import SqliteSaver

        return SqliteSaver(":memory:")
    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))


class ToolModel(FakeMessagesListChatModel):
    """A fake chat model that answers with pre-built messages and accepts bind_tools."""

    def bind_tools(self, tools, **kwargs):
        return self


def _tc(name, args, i):
    return {"name": name, "args": args, "id": f"call_{i}", "type": "tool_call"}


@tool
def weather_search(city: str) -> str:
    """Search for the weather."""
    return f"Sunny in {city}!"


@tool
def add(a: int, b: int) -> int:
    """Add two ints."""
    return a + b


def _one_node_app(E, schema, name, node, **compile_kw):
    """START -> name: the one-node graph that wraps a node or subgraph, compiled with compile_kw."""
    g = E.StateGraph(schema)
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile(**compile_kw)


def _msgs(E):
    return TypedDict("State", {"messages": Annotated[list, E.add_messages]})


# --- the "review tool calls" agent of the how-to --------------------------------------------


def _review_agent(E, responses, kind="memory", log=None, **compile_kw):
    log = log if log is not None else []
    model = ToolModel(responses=responses).bind_tools([weather_search])

    def call_llm(state):
        log.append("call_llm")
        return {"messages": [model.invoke(state["messages"])]}

    def run_tool(state):
        log.append("run_tool")
        tools = {"weather_search": weather_search}
        out = []
        for call in state["messages"][-1].tool_calls:
            result = tools[call["name"]].invoke(call["args"])
            out.append({"role": "tool", "name": call["name"], "content": result,
                        "tool_call_id": call["id"], "id": f"tool-{call['id']}"})
        return {"messages": out}

    def human_review_node(state) -> E.Command[Literal["call_llm", "run_tool"]]:
        log.append("human_review:start")
        last = state["messages"][-1]
        tool_call = last.tool_calls[-1]
        review = E.interrupt({"question": "Is this correct?", "tool_call": tool_call})
        log.append(f"human_review:{review['action']}")
        action, data = review["action"], review.get("data")
        if action == "continue":
            return E.Command(goto="run_tool")
        if action == "update":
            updated = {"role": "ai", "content": last.content, "id": last.id,
                       "tool_calls": [{"id": tool_call["id"], "name": tool_call["name"], "args": data}]}
            return E.Command(goto="run_tool", update={"messages": [updated]})
        if action == "feedback":
            tool_message = {"role": "tool", "content": data, "name": tool_call["name"],
                            "tool_call_id": tool_call["id"], "id": f"fb-{tool_call['id']}"}
            return E.Command(goto="call_llm", update={"messages": [tool_message]})
        raise ValueError(f"unknown action {action!r}")

    def route_after_llm(state) -> Literal["__end__", "human_review_node"]:
        if not state["messages"][-1].tool_calls:
            return E.END
        return "human_review_node"

    g = E.StateGraph(_msgs(E))
    g.add_node(call_llm)
    g.add_node(run_tool)
    g.add_node(human_review_node)
    g.add_edge(E.START, "call_llm")
    g.add_conditional_edges("call_llm", route_after_llm)
    g.add_edge("run_tool", "call_llm")
    return g.compile(checkpointer=_saver(E, kind), **compile_kw)


def _weather_responses(*final):
    return [
        AIMessage("", id="ai-1", tool_calls=[_tc("weather_search", {"city": "sf"}, 1)]),
        *(final or [AIMessage("It is sunny in SF.", id="ai-2")]),
    ]


def _q(text="what's the weather in sf?"):
    return {"messages": [HumanMessage(text, id="h-1")]}


@pytest.mark.parametrize("kind", SAVERS)
def test_review_continue_runs_the_tool_call_as_proposed(differential, kind):
    def scenario(E):
        log = []
        app, cfg = _review_agent(E, _weather_responses(), kind, log), thread()
        paused = app.invoke(_q(), cfg)
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume={"action": "continue"}), cfg)
        return paused, st.next, st.interrupts, st.tasks, done, log, app.get_state(cfg).next

    ref = differential(scenario)
    assert "__interrupt__" in ref[0]


@pytest.mark.parametrize("kind", SAVERS)
def test_review_update_replaces_the_ai_message_by_id_with_edited_args(differential, kind):
    def scenario(E):
        log = []
        app, cfg = _review_agent(E, _weather_responses(), kind, log), thread()
        app.invoke(_q(), cfg)
        done = app.invoke(E.Command(resume={"action": "update", "data": {"city": "San Francisco, USA"}}), cfg)
        msgs = done["messages"]
        return done, [m.id for m in msgs], msgs[1].tool_calls, log

    ref = differential(scenario)
    assert ref[1] == ["h-1", "ai-1", "tool-call_1", "ai-2"]


@pytest.mark.parametrize("kind", SAVERS)
def test_review_feedback_goes_back_to_the_model_and_pauses_again(differential, kind):
    def scenario(E):
        log = []
        responses = _weather_responses(
            AIMessage("", id="ai-2", tool_calls=[_tc("weather_search", {"city": "San Francisco"}, 2)]),
            AIMessage("Sunny in San Francisco.", id="ai-3"),
        )
        app, cfg = _review_agent(E, responses, kind, log), thread()
        first = app.invoke(_q(), cfg)
        second = app.invoke(E.Command(resume={"action": "feedback", "data": "use the full city name"}), cfg)
        mid = app.get_state(cfg)
        third = app.invoke(E.Command(resume={"action": "continue"}), cfg)
        return first["__interrupt__"], second, mid.next, mid.interrupts, third, log

    differential(scenario)


def test_no_tool_call_ends_without_asking(differential):
    def scenario(E):
        app, cfg = _review_agent(E, [AIMessage("hi!", id="ai-1")]), thread()
        out = app.invoke(_q("hi"), cfg)
        st = app.get_state(cfg)
        return out, st.next, st.interrupts, st.tasks

    differential(scenario)


def test_review_updates_stream_before_and_after_the_pause(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        a = collect(lambda: app.stream(_q(), cfg, stream_mode="updates"))
        b = collect(lambda: app.stream(E.Command(resume={"action": "update", "data": {"city": "LA"}}),
                                       cfg, stream_mode="updates"))
        return a, b

    ref = differential(scenario)
    assert "__interrupt__" in ref[0][-1]


def test_review_values_stream_before_and_after_the_pause(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        a = collect(lambda: app.stream(_q(), cfg, stream_mode="values"))
        b = collect(lambda: app.stream(E.Command(resume={"action": "continue"}), cfg, stream_mode="values"))
        return a, b

    differential(scenario)


@pytest.mark.parametrize("answer", [
    {"action": "continue"},
    {"action": "update", "data": {"city": "Oakland"}},
    {"action": "feedback", "data": "never mind"},
], ids=["continue", "update", "feedback"])
def test_review_updates_and_messages_streams_around_the_pause(differential, answer):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses(AIMessage("Sunny.", id="ai-2"))), thread()

        def shape(chunks):
            out = []
            for mode, payload in chunks:
                if mode == "messages":
                    m, md = payload
                    out.append((mode, type(m).__name__, m.id, m.content,
                                md.get("langgraph_node"), md.get("langgraph_step")))
                else:
                    out.append((mode, payload))
            return out

        a = shape(collect(lambda: app.stream(_q(), cfg, stream_mode=["updates", "messages"])))
        b = shape(collect(lambda: app.stream(E.Command(resume=answer), cfg,
                                             stream_mode=["updates", "messages"])))
        return a, b

    differential(scenario)


def test_review_stream_v2_values_updates_with_interrupts(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        a = collect(lambda: app.stream(_q(), cfg, stream_mode=["values", "updates"], version="v2"))
        out = app.invoke(E.Command(resume={"action": "continue"}), cfg, version="v2")
        return a, type(out).__name__, out.value, out.interrupts

    differential(scenario)


def test_review_history_after_feedback_and_fork_from_the_pause_with_another_answer(differential):
    def scenario(E):
        responses = _weather_responses(
            AIMessage("", id="ai-2", tool_calls=[_tc("weather_search", {"city": "SF, CA"}, 2)]),
            AIMessage("Sunny.", id="ai-3"),
            AIMessage("Sunny (fork).", id="ai-4"),
        )
        app, cfg = _review_agent(E, responses), thread()
        app.invoke(_q(), cfg)
        app.invoke(E.Command(resume={"action": "feedback", "data": "be precise"}), cfg)
        app.invoke(E.Command(resume={"action": "continue"}), cfg)
        hist = list(app.get_state_history(cfg))
        shape = [(s.metadata["source"], s.metadata["step"], s.next, len(s.values.get("messages", [])),
                  [i.value["tool_call"]["args"] for i in s.interrupts]) for s in hist]
        # time travel: the first pause, answered "continue" this time
        first_pause = [s for s in hist if s.next == ("human_review_node",)][-1]
        forked = app.invoke(E.Command(resume={"action": "continue"}), first_pause.config)
        return shape, forked, app.get_state(cfg).values == forked

    differential(scenario)


def test_review_agent_multi_turn_pauses_on_each_turn(differential):
    def scenario(E):
        responses = [
            AIMessage("", id="ai-1", tool_calls=[_tc("weather_search", {"city": "sf"}, 1)]),
            AIMessage("Sunny in sf.", id="ai-2"),
            AIMessage("", id="ai-3", tool_calls=[_tc("weather_search", {"city": "nyc"}, 2)]),
            AIMessage("Sunny in nyc.", id="ai-4"),
        ]
        app, cfg = _review_agent(E, responses), thread()
        out = [app.invoke(_q(), cfg)]
        out.append(app.invoke(E.Command(resume={"action": "continue"}), cfg))
        out.append(app.invoke({"messages": [HumanMessage("and nyc?", id="h-2")]}, cfg))
        out.append(app.invoke(E.Command(resume={"action": "update", "data": {"city": "New York"}}), cfg))
        return out, [s.metadata["step"] for s in app.get_state_history(cfg)]

    differential(scenario)


def test_review_agent_graph_drawing_uses_the_command_annotation(differential):
    def scenario(E):
        app = _review_agent(E, _weather_responses())
        gr = app.get_graph()
        return sorted(gr.nodes), sorted((e.source, e.target, e.conditional) for e in gr.edges)

    differential(scenario)


def test_unknown_review_action_error_leaves_the_thread_paused(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        app.invoke(_q(), cfg)
        err = capture(lambda: app.invoke(E.Command(resume={"action": "maybe"}), cfg))
        st = app.get_state(cfg)
        # the failed answer was saved: answering again re-runs the node with it
        again = capture(lambda: app.invoke(E.Command(resume={"action": "continue"}), cfg))
        st2 = app.get_state(cfg)
        return err, st.next, st.interrupts, st.tasks, again, st2.next, st2.tasks, len(list(app.get_state_history(cfg)))

    differential(scenario)


async def test_async_review_agent_astream_and_ainvoke(differential):
    async def scenario(E):
        log = []
        responses = _weather_responses(
            AIMessage("", id="ai-2", tool_calls=[_tc("weather_search", {"city": "x"}, 2)]),
            AIMessage("done", id="ai-3"),
        )
        app, cfg = _review_agent(E, responses, log=log), thread()
        a = await acollect(lambda: app.astream(_q(), cfg, stream_mode="updates"))
        st = await app.aget_state(cfg)
        b = await app.ainvoke(E.Command(resume={"action": "feedback", "data": "no"}), cfg)
        c = await acollect(lambda: app.astream(E.Command(resume={"action": "update", "data": {"city": "y"}}),
                                               cfg, stream_mode=["values", "updates"]))
        return a, st, b, c, log

    differential(scenario)


# --- update_state while paused, as_node, Command(resume=, update=) -------------------------


def test_update_state_whose_edges_fail_leaves_the_pause_intact(differential):
    """Without as_node the update counts as `call_llm`'s: its router then reads `.tool_calls`
    of a HumanMessage and fails; the thread is still paused and can be answered."""
    def scenario(E):
        log = []
        app, cfg = _review_agent(E, _weather_responses(), log=log), thread()
        app.invoke(_q(), cfg)
        err = capture(lambda: app.update_state(cfg, {"messages": [HumanMessage("be brief", id="h-x")]}))
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume={"action": "continue"}), cfg)
        return err, st.next, st.interrupts, len(list(app.get_state_history(cfg))), done, log

    ref = differential(scenario)
    assert ref[0][0] == "raises"


def test_update_state_replacing_the_tool_call_while_paused_then_continue(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        app.invoke(_q(), cfg)
        edited = AIMessage("", id="ai-1", tool_calls=[_tc("weather_search", {"city": "Paris"}, 1)])
        app.update_state(cfg, {"messages": [edited]})
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume={"action": "continue"}), cfg)
        return st.next, [i.value for i in st.interrupts], done

    differential(scenario)


def test_update_state_as_the_review_node_skips_the_question(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        app.invoke(_q(), cfg)
        app.update_state(cfg, {"messages": [ToolMessage("cancelled by user", tool_call_id="call_1", id="t-x")]},
                         as_node="human_review_node")
        st = app.get_state(cfg)
        after = app.invoke(None, cfg)
        return st.next, st.interrupts, st.metadata, after

    differential(scenario)


def test_command_resume_with_update_reaches_the_review_node(differential):
    def scenario(E):
        log = []
        app, cfg = _review_agent(E, _weather_responses(), log=log), thread()
        app.invoke(_q(), cfg)
        edited = AIMessage("", id="ai-1", tool_calls=[_tc("weather_search", {"city": "Rome"}, 1)])
        out = collect(lambda: app.stream(
            E.Command(resume={"action": "continue"}, update={"messages": [edited]}), cfg, stream_mode="updates"))
        return out, log, app.get_state(cfg).values

    differential(scenario)


# --- interrupt_before on a prebuilt ToolNode -------------------------------------------------


def _tool_agent(E, responses, kind="memory", **compile_kw):
    from langgraph.prebuilt import ToolNode, tools_condition

    model = ToolModel(responses=responses).bind_tools([weather_search, add])

    def agent(state):
        return {"messages": [model.invoke(state["messages"])]}

    g = E.StateGraph(_msgs(E))
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([weather_search, add]))
    g.add_edge(E.START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=_saver(E, kind), **compile_kw)


def _two_calls():
    return [
        AIMessage("", id="ai-1", tool_calls=[_tc("weather_search", {"city": "sf"}, 1), _tc("add", {"a": 2, "b": 3}, 2)]),
        AIMessage("all done", id="ai-2"),
    ]


@pytest.mark.parametrize("kind", SAVERS)
def test_interrupt_before_tools_approve_with_invoke_none(differential, kind):
    def scenario(E):
        app, cfg = _tool_agent(E, _two_calls(), kind, interrupt_before=["tools"]), thread()
        paused = collect(lambda: app.stream(_q(), cfg, stream_mode="updates"))
        st = app.get_state(cfg)
        resumed = collect(lambda: app.stream(None, cfg, stream_mode="updates"))
        return paused, st.next, st.interrupts, st.tasks, resumed, app.get_state(cfg).values

    differential(scenario)


@pytest.mark.parametrize("kind", SAVERS)
def test_interrupt_before_tools_reject_by_update_state_as_tools(differential, kind):
    def scenario(E):
        app, cfg = _tool_agent(E, _two_calls(), kind, interrupt_before=["tools"]), thread()
        app.invoke(_q(), cfg)
        last = app.get_state(cfg).values["messages"][-1]
        rejections = [ToolMessage("rejected by the user", tool_call_id=c["id"], id=f"rej-{c['id']}")
                      for c in last.tool_calls]
        upd = app.update_state(cfg, {"messages": rejections}, as_node="tools")
        st = app.get_state(cfg)
        done = app.invoke(None, cfg)
        return sorted(upd["configurable"]), st.next, st.metadata, done, [
            (s.metadata["source"], s.next) for s in app.get_state_history(cfg)]

    differential(scenario)


def test_interrupt_before_tools_edit_the_call_then_approve(differential):
    def scenario(E):
        app, cfg = _tool_agent(E, _two_calls(), interrupt_before=["tools"]), thread()
        app.invoke(_q(), cfg)
        last = app.get_state(cfg).values["messages"][-1]
        edited = AIMessage(last.content, id=last.id,
                           tool_calls=[_tc("add", {"a": 40, "b": 2}, 9)])
        app.update_state(cfg, {"messages": [edited]})
        st = app.get_state(cfg)
        done = app.invoke(None, cfg)
        return st.next, st.metadata, done

    differential(scenario)


def test_interrupt_after_agent_then_new_human_message_drops_the_pending_call(differential):
    def scenario(E):
        responses = [
            AIMessage("", id="ai-1", tool_calls=[_tc("add", {"a": 1, "b": 1}, 1)]),
            AIMessage("no tools then", id="ai-2"),
        ]
        app, cfg = _tool_agent(E, responses, interrupt_after=["agent"]), thread()
        first = app.invoke(_q(), cfg)
        st = app.get_state(cfg)
        # answering the pending call with a ToolMessage as "tools" lets the agent continue
        app.update_state(cfg, {"messages": [ToolMessage("skip", tool_call_id="call_1", id="t-skip")]},
                         as_node="tools")
        second = app.invoke(None, cfg)
        return first, st.next, second, app.get_state(cfg).next

    differential(scenario)


async def test_async_interrupt_before_tools_approve_and_reject(differential):
    async def scenario(E):
        responses = [
            AIMessage("", id="ai-1", tool_calls=[_tc("add", {"a": 1, "b": 2}, 1)]),
            AIMessage("", id="ai-2", tool_calls=[_tc("add", {"a": 3, "b": 4}, 2)]),
            AIMessage("end", id="ai-3"),
        ]
        app, cfg = _tool_agent(E, responses, interrupt_before=["tools"]), thread()
        a = await acollect(lambda: app.astream(_q(), cfg, stream_mode="updates"))
        b = await acollect(lambda: app.astream(None, cfg, stream_mode="updates"))
        await app.aupdate_state(cfg, {"messages": [ToolMessage("no", tool_call_id="call_2", id="t-no")]},
                                as_node="tools")
        c = await app.ainvoke(None, cfg)
        return a, b, c, (await app.aget_state(cfg)).next

    differential(scenario)


# --- interrupts inside tools ---------------------------------------------------------------


def test_hand_written_tool_node_asks_once_per_tool_call_in_sequence(differential):
    def scenario(E):
        runs = []

        def tools_node(state):
            runs.append("tools")
            out = []
            for call in state["messages"][-1].tool_calls:
                ok = E.interrupt({"approve": call["name"], "args": call["args"]})
                content = str(add.invoke(call["args"])) if ok == "yes" else "denied"
                out.append(ToolMessage(content, tool_call_id=call["id"], id=f"t-{call['id']}"))
            return {"messages": out}

        responses = [
            AIMessage("", id="ai-1", tool_calls=[_tc("add", {"a": 1, "b": 2}, 1), _tc("add", {"a": 3, "b": 4}, 2),
                                                 _tc("add", {"a": 5, "b": 6}, 3)]),
            AIMessage("ok", id="ai-2"),
        ]
        model = ToolModel(responses=responses)
        g = E.StateGraph(_msgs(E))
        g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
        g.add_node("tools", tools_node)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else E.END)
        g.add_edge("tools", "agent")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        seen = [app.invoke(_q(), cfg)["__interrupt__"]]
        for answer in ("yes", "no"):
            seen.append(app.invoke(E.Command(resume=answer), cfg)["__interrupt__"])
            seen.append([i.id for i in app.get_state(cfg).interrupts])
        seen.append(app.invoke(E.Command(resume="yes"), cfg))
        return seen, runs

    differential(scenario)


def test_toolnode_tool_with_validation_loop_interrupt(differential):
    def scenario(E):
        @tool
        def book(city: str) -> str:
            """Book a trip after the human confirms the date."""
            prompt = f"date for {city}?"
            while True:
                answer = E.interrupt(prompt)
                if isinstance(answer, str) and answer.count("-") == 2:
                    return f"booked {city} on {answer}"
                prompt = f"'{answer}' is not a date (YYYY-MM-DD); date for {city}?"

        from langgraph.prebuilt import ToolNode, tools_condition

        model = ToolModel(responses=[AIMessage("", id="ai-1", tool_calls=[_tc("book", {"city": "Oslo"}, 1)]),
                                     AIMessage("booked", id="ai-2")])
        g = E.StateGraph(_msgs(E))
        g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
        g.add_node("tools", ToolNode([book]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        seen = [app.invoke(_q(), cfg)["__interrupt__"]]
        for answer in ("tomorrow", 42):
            seen.append(app.invoke(E.Command(resume=answer), cfg).get("__interrupt__"))
        seen.append(app.invoke(E.Command(resume="2025-01-31"), cfg))
        return seen

    differential(scenario)


# --- validation loops ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", SAVERS)
def test_validation_loop_asks_until_the_answer_is_valid(differential, kind):
    def scenario(E):
        runs = []

        class S(TypedDict, total=False):
            age: int
            log: Annotated[list, operator.add]

        def get_age(state):
            runs.append("get_age")
            prompt = "What is your age?"
            while True:
                answer = E.interrupt(prompt)
                if isinstance(answer, int) and answer >= 0:
                    break
                prompt = f"'{answer}' is not a valid age. What is your age?"
            return {"age": answer, "log": [f"age={answer}"]}

        g = E.StateGraph(S)
        g.add_node("get_age", get_age)
        g.add_node("done", lambda s: {"log": ["done"]})
        g.add_edge(E.START, "get_age")
        g.add_edge("get_age", "done")
        app, cfg = g.compile(checkpointer=_saver(E, kind)), thread()
        seen = [app.invoke({"log": []}, cfg)]
        for answer in ("forty", -3, "41"):
            seen.append(capture(lambda answer=answer: app.invoke(E.Command(resume=answer), cfg)))
            st = app.get_state(cfg)
            seen.append((st.next, st.interrupts))
        seen.append(app.invoke(E.Command(resume=41), cfg))
        return seen, runs

    differential(scenario)


def test_validation_loop_values_stream_shows_each_new_question(differential):
    def scenario(E):
        class S(TypedDict, total=False):
            name: str

        def ask(state):
            q = "name?"
            while True:
                a = E.interrupt(q)
                if a and a.strip():
                    return {"name": a.strip()}
                q = "name must not be blank. name?"

        app, cfg = _one_node_app(E, S, "ask", ask, checkpointer=E.InMemorySaver()), thread()
        out = [collect(lambda: app.stream({}, cfg, stream_mode="values"))]
        for a in ("  ", "", " ada "):
            out.append(collect(lambda a=a: app.stream(E.Command(resume=a), cfg, stream_mode=["values", "updates"])))
        return out

    differential(scenario)


# --- parallel branches (Send fan-out) each asking -------------------------------------------


def _fanout(E, log, kind="memory"):
    class S(TypedDict, total=False):
        topics: list
        approved: Annotated[list, operator.add]

    def plan(state):
        return {}

    def review(arg):
        log.append(f"review:{arg['topic']}")
        ok = E.interrupt({"approve": arg["topic"]})
        return {"approved": [f"{arg['topic']}={ok}"]}

    def fan(state):
        return [E.Send("review", {"topic": t}) for t in state["topics"]]

    g = E.StateGraph(S)
    g.add_node("plan", plan)
    g.add_node("review", review)
    g.add_node("summary", lambda s: {"approved": [f"summary of {len(s['approved'])}"]})
    g.add_edge(E.START, "plan")
    g.add_conditional_edges("plan", fan, ["review"])
    g.add_edge("review", "summary")
    return g.compile(checkpointer=_saver(E, kind))


def _by_topic(interrupts):
    return {i.value["approve"]: i.id for i in interrupts}


@pytest.mark.parametrize("kind", SAVERS)
def test_send_fanout_interrupts_resumed_all_at_once_by_id(differential, kind):
    def scenario(E):
        log = []
        app, cfg = _fanout(E, log, kind), thread()
        out = app.invoke({"topics": ["a", "b", "c"], "approved": []}, cfg)
        ids = _by_topic(out["__interrupt__"])
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume={ids["a"]: "yes", ids["b"]: "no", ids["c"]: "yes"}), cfg)
        return (sorted(ids), st.next, sorted(i.value["approve"] for i in st.interrupts),
                sorted(t.name for t in st.tasks), done, sorted(log))

    differential(scenario)


def test_send_fanout_interrupts_resumed_one_by_one(differential):
    def scenario(E):
        log = []
        app, cfg = _fanout(E, log), thread()
        ids = _by_topic(app.invoke({"topics": ["a", "b", "c"], "approved": []}, cfg)["__interrupt__"])
        seen = []
        for topic in ("b", "a", "c"):
            out = app.invoke(E.Command(resume={ids[topic]: f"ok-{topic}"}), cfg)
            st = app.get_state(cfg)
            seen.append((out.get("approved"), sorted(i.value["approve"] for i in out.get("__interrupt__", [])),
                         st.next, sorted(i.value["approve"] for i in st.interrupts)))
        return seen, sorted(log), log.count("review:b")

    differential(scenario)


def test_send_fanout_interrupts_updates_stream_on_resume(differential):
    def scenario(E):
        log = []
        app, cfg = _fanout(E, log), thread()
        first = collect(lambda: app.stream({"topics": ["a", "b"], "approved": []}, cfg, stream_mode="updates"))
        ids = {}
        for c in first:
            if "__interrupt__" in c:
                ids = _by_topic(c["__interrupt__"])
        part = collect(lambda: app.stream(E.Command(resume={ids["a"]: 1}), cfg, stream_mode="updates"))
        rest = collect(lambda: app.stream(E.Command(resume={ids["b"]: 2}), cfg, stream_mode="updates"))

        def barrier(c):
            return "summary" in c

        # the review branches run in a thread pool: compare each step as a multiset
        return (steps_as_multisets(first, barrier), steps_as_multisets(part, barrier),
                steps_as_multisets(rest, barrier))

    differential(scenario)


def test_parallel_worker_finishes_while_a_sibling_asks_and_does_not_rerun(differential):
    def scenario(E):
        runs = []

        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        def fetch(state):
            runs.append("fetch")
            return {"log": ["fetched"]}

        def approve(state):
            runs.append("approve")
            return {"log": [f"approved={E.interrupt('ok?')}"]}

        g = E.StateGraph(S)
        g.add_node("fetch", fetch)
        g.add_node("approve", approve)
        g.add_node("join", lambda s: {"log": ["join"]})
        g.add_edge(E.START, "fetch")
        g.add_edge(E.START, "approve")
        g.add_edge(["fetch", "approve"], "join")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        paused = app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume="y"), cfg)
        return (paused, st.values, st.next, sorted([(t.name, t.result) for t in st.tasks], key=repr),
                done, sorted(runs))

    differential(scenario)


async def test_async_send_fanout_interrupts_resumed_by_id(differential):
    async def scenario(E):
        log = []

        class S(TypedDict, total=False):
            topics: list
            approved: Annotated[list, operator.add]

        async def review(arg):
            log.append(arg["topic"])
            return {"approved": [f"{arg['topic']}={E.interrupt({'approve': arg['topic']})}"]}

        g = E.StateGraph(S)
        g.add_node("review", review)
        g.add_conditional_edges(E.START, lambda s: [E.Send("review", {"topic": t}) for t in s["topics"]],
                                ["review"])
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        out = await app.ainvoke({"topics": ["x", "y"], "approved": []}, cfg)
        ids = _by_topic(out["__interrupt__"])
        half = await app.ainvoke(E.Command(resume={ids["y"]: "Y"}), cfg)
        st = await app.aget_state(cfg)
        done = await app.ainvoke(E.Command(resume={ids["x"]: "X"}), cfg)
        return half, [i.value for i in st.interrupts], done, sorted(log)

    differential(scenario)


# --- functional API review -----------------------------------------------------------------


def test_functional_entrypoint_reviews_a_draft_from_a_task(differential):
    def scenario(E):
        runs = []

        @E.func.task
        def write_essay(topic: str) -> str:
            runs.append(f"write:{topic}")
            return f"An essay about {topic}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def workflow(topic: str) -> dict:
            essay = write_essay(topic).result()
            review = E.interrupt({"essay": essay, "action": "Please approve or reject"})
            return {"essay": essay, "review": review}

        cfg = thread()
        a = collect(lambda: workflow.stream("cats", cfg, stream_mode="updates"))
        st = workflow.get_state(cfg)
        b = collect(lambda: workflow.stream(E.Command(resume={"approved": True}), cfg, stream_mode="updates"))
        return a, st.next, st.interrupts, b, runs

    differential(scenario)


# --- more edge cases users hit --------------------------------------------------------------


def test_reject_action_removes_the_tool_call_message_and_ends(differential):
    def scenario(E):
        from langchain_core.messages import RemoveMessage

        model = ToolModel(responses=_weather_responses())

        def agent(state):
            return {"messages": [model.invoke(state["messages"])]}

        def review(state) -> E.Command[Literal["tools", "__end__"]]:
            last = state["messages"][-1]
            decision = E.interrupt({"tool_calls": last.tool_calls})
            if decision == "approve":
                return E.Command(goto="tools")
            return E.Command(goto=E.END, update={"messages": [
                RemoveMessage(id=last.id), AIMessage("Cancelled.", id="ai-cancel")]})

        def tools(state):
            return {"messages": [ToolMessage("Sunny", tool_call_id=c["id"], id=f"t-{c['id']}")
                                 for c in state["messages"][-1].tool_calls]}

        g = E.StateGraph(_msgs(E))
        g.add_node("agent", agent)
        g.add_node("review", review)
        g.add_node("tools", tools)
        g.add_edge(E.START, "agent")
        g.add_edge("agent", "review")
        g.add_edge("tools", "agent")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke(_q(), cfg)
        out = collect(lambda: app.stream(E.Command(resume="reject"), cfg, stream_mode=["updates", "values"]))
        return out, app.get_state(cfg).next

    differential(scenario)


def test_interrupt_inside_a_conditional_edge_router(differential):
    def scenario(E):
        runs = []

        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        def work(state):
            runs.append("work")
            return {"log": ["work"]}

        def route(state):
            runs.append("route")
            return E.interrupt({"choose": ["a", "b"]})

        g = E.StateGraph(S)
        g.add_node("work", work)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b", lambda s: {"log": ["b"]})
        g.add_edge(E.START, "work")
        g.add_conditional_edges("work", route, ["a", "b"])
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume="b"), cfg)
        return first, st.next, st.interrupts, done, runs

    differential(scenario)


def test_interrupt_is_not_retried_by_a_retry_policy(differential):
    def scenario(E):
        runs = []

        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        def ask(state):
            runs.append("ask")
            return {"log": [E.interrupt("go?")]}

        g = E.StateGraph(S)
        g.add_node("ask", ask, retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.0,
                                                           retry_on=Exception))
        g.add_edge(E.START, "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = app.invoke({"log": []}, cfg)
        n = len(runs)
        done = app.invoke(E.Command(resume="went"), cfg)
        return first, n, done, runs

    differential(scenario)


@pytest.mark.parametrize("kind", SAVERS)
def test_interrupt_value_and_resume_value_keep_message_types_through_the_saver(differential, kind):
    def scenario(E):
        got = []

        def review(state):
            last = state["messages"][-1]
            answer = E.interrupt({"message": last, "calls": last.tool_calls})
            got.append((type(answer).__name__, getattr(answer, "content", answer)))
            return {"messages": [answer]}

        g = E.StateGraph(_msgs(E))
        g.add_node("agent", lambda s: {"messages": [AIMessage("", id="ai-1", tool_calls=[
            _tc("weather_search", {"city": "sf"}, 1)])]})
        g.add_node("review", review)
        g.add_edge(E.START, "agent")
        g.add_edge("agent", "review")
        app, cfg = g.compile(checkpointer=_saver(E, kind)), thread()
        app.invoke(_q(), cfg)
        v = app.get_state(cfg).interrupts[0].value
        done = app.invoke(E.Command(resume=HumanMessage("looks fine", id="h-ok")), cfg)
        return type(v["message"]).__name__, v, done, got

    differential(scenario)


def test_durability_exit_review_agent_pauses_and_resumes(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        a = app.invoke(_q(), cfg, durability="exit")
        h1 = [(s.metadata["source"], s.metadata["step"], s.next) for s in app.get_state_history(cfg)]
        st = app.get_state(cfg)
        b = app.invoke(E.Command(resume={"action": "continue"}), cfg, durability="exit")
        h2 = [(s.metadata["source"], s.metadata["step"], s.next) for s in app.get_state_history(cfg)]
        return a, h1, st.next, st.interrupts, b, h2

    differential(scenario)


def test_review_agent_tasks_and_checkpoints_streams_on_resume(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        a = collect(lambda: app.stream(_q(), cfg, stream_mode=["tasks", "checkpoints"]))
        b = collect(lambda: app.stream(E.Command(resume={"action": "continue"}), cfg,
                                       stream_mode=["tasks", "checkpoints"]))
        return a, b

    differential(scenario)


def test_review_agent_as_a_subgraph_streams_interrupt_with_namespaces(differential):
    def scenario(E):
        inner = _review_agent(E, _weather_responses())
        g = E.StateGraph(_msgs(E))
        g.add_node("assistant", inner)
        g.add_node("after", lambda s: {"messages": [AIMessage("bye", id="ai-bye")]})
        g.add_edge(E.START, "assistant")
        g.add_edge("assistant", "after")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        a = collect(lambda: app.stream(_q(), cfg, stream_mode="updates", subgraphs=True))
        st = app.get_state(cfg, subgraphs=True)
        b = collect(lambda: app.stream(E.Command(resume={"action": "update", "data": {"city": "LA"}}), cfg,
                                       stream_mode="updates", subgraphs=True))
        return a, st.next, st.interrupts, st.tasks[0].state.next, b

    differential(scenario)


def test_messages_stream_tokens_of_the_answer_after_resume(differential):
    def scenario(E):
        tool_model = ToolModel(responses=[AIMessage("", id="ai-1", tool_calls=[_tc("weather_search", {"city": "sf"}, 1)])])
        stream_model = GenericFakeChatModel(messages=iter([AIMessage("It is sunny today", id="ai-2")]))

        def call_llm(state):
            model = stream_model if isinstance(state["messages"][-1], ToolMessage) else tool_model
            return {"messages": [model.invoke(state["messages"])]}

        def review(state) -> E.Command[Literal["tools"]]:
            E.interrupt("ok?")
            return E.Command(goto="tools")

        def tools(state):
            return {"messages": [ToolMessage("Sunny", tool_call_id="call_1", id="t-1")]}

        g = E.StateGraph(_msgs(E))
        g.add_node("call_llm", call_llm)
        g.add_node("review", review)
        g.add_node("tools", tools)
        g.add_edge(E.START, "call_llm")
        g.add_conditional_edges("call_llm", lambda s: "review" if s["messages"][-1].tool_calls else E.END)
        g.add_edge("tools", "call_llm")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()

        def shape(chunks):
            out = []
            for c in chunks:
                if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], dict):
                    m, md = c
                    out.append((type(m).__name__, m.id, m.content, md["langgraph_node"], md["langgraph_step"],
                                md.get("langgraph_triggers")))
                else:
                    out.append(c)
            return out

        a = shape(collect(lambda: app.stream(_q(), cfg, stream_mode="messages")))
        b = shape(collect(lambda: app.stream(E.Command(resume=True), cfg, stream_mode="messages")))
        return a, b

    differential(scenario)


def test_command_goto_input_at_a_tools_breakpoint(differential):
    def scenario(E):
        responses = [
            AIMessage("", id="ai-1", tool_calls=[_tc("add", {"a": 1, "b": 2}, 1)]),
            AIMessage("fine, no tools", id="ai-2"),
        ]
        app, cfg = _tool_agent(E, responses, interrupt_before=["tools"]), thread()
        app.invoke(_q(), cfg)

        def updates() -> tuple:
            chunks = collect(lambda: app.stream(
                E.Command(goto="agent", update={"messages": [ToolMessage("denied", tool_call_id="call_1", id="t-d")]}),
                cfg, stream_mode="updates"))
            # `tools` (pending at the breakpoint) and `agent` (the goto) run as one parallel
            # step, and both engines yield its updates as their pool threads finish: that
            # step compares as a multiset
            return steps_as_multisets(chunks[:2], lambda c: False), chunks[2:]

        out = capture(updates)
        st = app.get_state(cfg)
        return out, st.next, st.values

    differential(scenario)


def test_deferred_node_asks_after_the_branches_finish(differential):
    def scenario(E):
        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        def final_review(state):
            return {"log": [f"final={E.interrupt({'seen': sorted(state['log'])})}"]}

        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b1", lambda s: {"log": ["b1"]})
        g.add_node("b2", lambda s: {"log": ["b2"]})
        g.add_node("final", final_review, defer=True)
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b1")
        g.add_edge("b1", "b2")
        g.add_edge("a", "final")
        g.add_edge("b2", "final")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume="ok"), cfg)
        return first, st.next, st.metadata["step"], done

    differential(scenario)


def test_interrupt_in_a_node_reached_by_command_goto_send(differential):
    def scenario(E):
        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        def router(state) -> E.Command[Literal["ask"]]:
            return E.Command(goto=[E.Send("ask", {"who": "x"}), E.Send("ask", {"who": "y"})],
                             update={"log": ["routed"]})

        def ask(arg):
            return {"log": [f"{arg['who']}:{E.interrupt(arg['who'])}"]}

        g = E.StateGraph(S)
        g.add_node("router", router)
        g.add_node("ask", ask)
        g.add_edge(E.START, "router")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        out = app.invoke({"log": []}, cfg)
        ids = {i.value: i.id for i in out["__interrupt__"]}
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume={ids["x"]: 1, ids["y"]: 2}), cfg)
        return sorted(ids), st.next, [t.path[:1] for t in st.tasks], done

    differential(scenario)


async def test_async_review_agent_updates_and_messages_streams(differential):
    async def scenario(E):
        model = ToolModel(responses=_weather_responses())

        async def call_llm(state):
            return {"messages": [await model.ainvoke(state["messages"])]}

        async def review(state) -> E.Command[Literal["tools"]]:
            answer = E.interrupt({"calls": state["messages"][-1].tool_calls})
            return E.Command(goto="tools", update={"messages": [HumanMessage(f"human: {answer}", id="h-ans")]})

        async def tools(state):
            return {"messages": [ToolMessage("Sunny", tool_call_id="call_1", id="t-1")]}

        g = E.StateGraph(_msgs(E))
        g.add_node("call_llm", call_llm)
        g.add_node("review", review)
        g.add_node("tools", tools)
        g.add_edge(E.START, "call_llm")
        g.add_conditional_edges("call_llm", lambda s: "review" if s["messages"][-1].tool_calls else E.END)
        g.add_edge("tools", "call_llm")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()

        def shape(chunks):
            return [(mode, (type(p[0]).__name__, p[0].id, p[1]["langgraph_node"]) if mode == "messages" else p)
                    for mode, p in chunks]

        a = shape(await acollect(lambda: app.astream(_q(), cfg, stream_mode=["updates", "messages"])))
        b = shape(await acollect(lambda: app.astream(E.Command(resume="yes"), cfg,
                                                     stream_mode=["updates", "messages"])))
        return a, b, (await app.aget_state(cfg)).values

    differential(scenario)


def test_send_branches_with_two_questions_each_answered_by_id(differential):
    def scenario(E):
        runs = []

        class S(TypedDict, total=False):
            out: Annotated[list, operator.add]

        def form(arg):
            who = arg["who"]
            runs.append(who)
            name = E.interrupt(f"{who}: name?")
            age = E.interrupt(f"{who}: age of {name}?")
            return {"out": [f"{who}:{name}/{age}"]}

        g = E.StateGraph(S)
        g.add_node("form", form)
        g.add_conditional_edges(E.START, lambda s: [E.Send("form", {"who": w}) for w in ("p", "q")], ["form"])
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        seen = []
        out = app.invoke({"out": []}, cfg)
        answers = {"p: name?": "ann", "q: name?": "bob", "p: age of ann?": 30, "q: age of bob?": 40}
        order = []
        while "__interrupt__" in out:
            pending = sorted(out["__interrupt__"], key=lambda i: i.value)
            seen.append([i.value for i in pending])
            first = pending[0]  # answer one question per call
            order.append(first.value)
            out = app.invoke(E.Command(resume={first.id: answers[first.value]}), cfg)
        seen.append(out)
        return seen, order, sorted(runs)

    differential(scenario)


def test_parallel_subgraphs_from_send_each_ask_and_resume_together(differential):
    def scenario(E):
        class Inner(TypedDict, total=False):
            item: str
            verdict: str

        def check(state):
            return {"verdict": E.interrupt({"check": state["item"]})}

        subgraph = _one_node_app(E, Inner, "check", check)

        class S(TypedDict, total=False):
            items: list
            verdicts: Annotated[list, operator.add]

        def run_item(arg):
            res = subgraph.invoke({"item": arg["item"]})
            return {"verdicts": [f"{res['item']}:{res['verdict']}"]}

        g = E.StateGraph(S)
        g.add_node("run_item", run_item)
        g.add_conditional_edges(E.START, lambda s: [E.Send("run_item", {"item": i}) for i in s["items"]],
                                ["run_item"])
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        out = app.invoke({"items": ["i1", "i2"], "verdicts": []}, cfg)
        ids = {i.value["check"]: i.id for i in out["__interrupt__"]}
        st = app.get_state(cfg, subgraphs=True)
        done = app.invoke(E.Command(resume={ids["i1"]: "ok", ids["i2"]: "bad"}), cfg)
        return sorted(ids), st.next, sorted(i.value["check"] for i in st.interrupts), done

    differential(scenario)


def test_update_state_during_a_fanout_pause_keeps_the_branches_which_ask_again(differential):
    """The update makes a new checkpoint: the Send branches are still next, but their
    interrupts are no longer pending; invoke(None) runs them and they ask again."""
    def scenario(E):
        log = []
        app, cfg = _fanout(E, log), thread()
        out = app.invoke({"topics": ["a", "b"], "approved": []}, cfg)
        old_ids = _by_topic(out["__interrupt__"])
        res = capture(lambda: sorted(app.update_state(cfg, {"approved": ["manual"]})["configurable"]))
        st = app.get_state(cfg)
        again = app.invoke(None, cfg)
        ids = _by_topic(again["__interrupt__"])
        done = app.invoke(E.Command(resume={ids["a"]: "A", ids["b"]: "B"}), cfg)
        return (res, st.next, sorted(i.value["approve"] for i in st.interrupts), st.values, again,
                old_ids == ids, done, sorted(log))

    differential(scenario)


def test_functional_parallel_tasks_each_ask_and_resume_by_id(differential):
    def scenario(E):
        runs = []

        @E.func.task
        def approve(item: str) -> str:
            runs.append(item)
            return f"{item}:{E.interrupt({'approve': item})}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def flow(items: list) -> list:
            futs = [approve(i) for i in items]
            return [f.result() for f in futs]

        cfg = thread()
        out = flow.invoke(["u", "v"], cfg)
        st = flow.get_state(cfg)
        ids = {i.value["approve"]: i.id for i in st.interrupts}
        half = flow.invoke(E.Command(resume={ids["v"]: "no"}), cfg)
        done = flow.invoke(E.Command(resume={ids["u"]: "yes"}), cfg)
        return out, sorted(ids), half, done, sorted(runs)

    differential(scenario)


def test_output_schema_graph_still_returns___interrupt__(differential):
    def scenario(E):
        class In(TypedDict):
            question: str

        class Out(TypedDict):
            answer: str

        class S(In, Out, total=False):
            draft: str

        g = E.StateGraph(S, input_schema=In, output_schema=Out)
        g.add_node("draft", lambda s: {"draft": f"draft for {s['question']}"})
        g.add_node("review", lambda s: {"answer": E.interrupt({"draft": s["draft"]})})
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "review")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        a = app.invoke({"question": "q?"}, cfg)
        v = collect(lambda: app.stream(E.Command(resume="final"), cfg, stream_mode=["values", "updates"]))
        b = app.invoke({"question": "again?"}, thread(), version="v2")
        return a, v, type(b).__name__, b.value, b.interrupts

    differential(scenario)


def test_review_loop_gets_a_fresh_recursion_budget_on_each_resume(differential):
    def scenario(E):
        class S(TypedDict, total=False):
            rounds: Annotated[list, operator.add]
            left: E.RemainingSteps

        def work(state):
            return {"rounds": [f"work(left={state['left']})"]}

        def review(state):
            ans = E.interrupt(len(state["rounds"]))
            return {"rounds": [f"review:{ans}"]}

        g = E.StateGraph(S)
        g.add_node("work", work)
        g.add_node("review", review)
        g.add_edge(E.START, "work")
        g.add_edge("work", "review")
        g.add_conditional_edges("review", lambda s: E.END if s["rounds"][-1] == "review:stop" else "work")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {**thread(), "recursion_limit": 4}
        seen = [app.invoke({"rounds": []}, cfg)]
        for ans in ("again", "again", "again", "stop"):
            seen.append(capture(lambda ans=ans: app.invoke(E.Command(resume=ans), cfg)))
        return seen

    differential(scenario)


def test_pydantic_state_review_with_update_state_and_resume(differential):
    def scenario(E):
        from pydantic import BaseModel

        class Draft(BaseModel):
            text: str = ""
            approved: bool = False
            notes: Annotated[list, operator.add] = []

        def write(state: Draft):
            return {"text": "first draft", "notes": ["written"]}

        def review(state: Draft):
            verdict = E.interrupt({"text": state.text})
            return {"approved": verdict == "ok", "notes": [f"review:{verdict}"]}

        g = E.StateGraph(Draft)
        g.add_node("write", write)
        g.add_node("review", review)
        g.add_edge(E.START, "write")
        g.add_edge("write", "review")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        a = app.invoke(Draft(), cfg)
        app.update_state(cfg, {"text": "edited draft"})
        st = app.get_state(cfg)
        b = app.invoke(E.Command(resume="ok"), cfg)
        return a, st.values, st.next, [i.value for i in st.interrupts], b

    differential(scenario)


def test_review_agent_debug_stream_around_the_pause(differential):
    def scenario(E):
        app, cfg = _review_agent(E, _weather_responses()), thread()
        a = collect(lambda: app.stream(_q(), cfg, stream_mode="debug"))
        b = collect(lambda: app.stream(E.Command(resume={"action": "continue"}), cfg, stream_mode="debug"))
        return a, b

    differential(scenario)


def test_model_called_before_interrupt_in_the_same_node_streams_again_on_resume(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage("draft one", id="ai-d1"),
                                                    AIMessage("draft two", id="ai-d2")]))
        calls = []

        def write_and_ask(state):
            draft = model.invoke(state["messages"])
            calls.append(draft.content)
            verdict = E.interrupt({"draft": draft.content})
            return {"messages": [draft, HumanMessage(f"verdict: {verdict}", id="h-v")]}

        g = E.StateGraph(_msgs(E))
        g.add_node("write_and_ask", write_and_ask)
        g.add_edge(E.START, "write_and_ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()

        def shape(chunks):
            return [(mode, (type(p[0]).__name__, p[0].id, p[0].content, p[1]["langgraph_node"])
                     if mode == "messages" else p) for mode, p in chunks]

        a = shape(collect(lambda: app.stream(_q(), cfg, stream_mode=["messages", "updates"])))
        b = shape(collect(lambda: app.stream(E.Command(resume="ok"), cfg, stream_mode=["messages", "updates"])))
        return a, b, calls

    differential(scenario)


def test_interrupt_inside_a_langchain_runnable_sequence_node(differential):
    def scenario(E):
        from langchain_core.runnables import RunnableLambda

        class S(TypedDict, total=False):
            text: str

        def prepare(state):
            return {"text": state["text"].strip()}

        def confirm(state):
            return {"text": f"{state['text']} [{E.interrupt({'confirm': state['text']})}]"}

        chain = RunnableLambda(prepare) | RunnableLambda(confirm)
        app, cfg = _one_node_app(E, S, "chain", chain, checkpointer=E.InMemorySaver()), thread()
        a = app.invoke({"text": "  hi  "}, cfg)
        b = app.invoke(E.Command(resume="yes"), cfg)
        return a, b

    differential(scenario)


async def test_async_node_awaits_a_sync_tool_that_interrupts(differential):
    async def scenario(E):
        @tool
        def confirm_payment(amount: int) -> str:
            """Ask a human to confirm a payment."""
            ok = E.interrupt({"pay": amount})
            return "paid" if ok else "refused"

        async def pay(state):
            call = state["messages"][-1].tool_calls[0]
            result = await confirm_payment.ainvoke(call["args"])
            return {"messages": [ToolMessage(result, tool_call_id=call["id"], id="t-pay")]}

        g = E.StateGraph(_msgs(E))
        g.add_node("pay", pay)
        g.add_edge(E.START, "pay")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        start = {"messages": [AIMessage("", id="ai-1", tool_calls=[_tc("confirm_payment", {"amount": 5}, 1)])]}
        a = await app.ainvoke(start, cfg)
        b = await app.ainvoke(E.Command(resume=False), cfg)
        return a, b

    differential(scenario)


async def test_async_toolnode_with_sync_and_async_interrupting_tools(differential):
    async def scenario(E):
        from langgraph.prebuilt import ToolNode, tools_condition

        import threading

        # the two tools run concurrently in one task and ask in turn: the interrupt index
        # (so the answer each gets) follows the order they ask in, which a loaded machine
        # would otherwise decide; the async one asks after the sync one
        sync_asked = threading.Event()

        @tool
        def sync_ask(q: str) -> str:
            """Sync ask."""
            sync_asked.set()
            return f"sync:{E.interrupt({'sync': q})}"

        @tool
        async def async_ask(q: str) -> str:
            """Async ask."""
            await asyncio.to_thread(sync_asked.wait, 5)
            return f"async:{E.interrupt({'async': q})}"

        model = ToolModel(responses=[
            AIMessage("", id="ai-1", tool_calls=[_tc("sync_ask", {"q": "a"}, 1), _tc("async_ask", {"q": "b"}, 2)]),
            AIMessage("done", id="ai-2"),
        ])

        async def agent(state):
            return {"messages": [await model.ainvoke(state["messages"])]}

        g = E.StateGraph(_msgs(E))
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([sync_ask, async_ask]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        a = await app.ainvoke(_q(), cfg)
        pending = sorted(a["__interrupt__"], key=lambda i: repr(i.value))
        ids = {next(iter(i.value)): i.id for i in pending}
        b = await app.ainvoke(E.Command(resume={ids["sync"]: "S", ids["async"]: "A"}), cfg)
        return [i.value for i in pending], b

    differential(scenario)


async def test_astream_events_around_an_interrupt(differential):
    async def scenario(E):
        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        g = E.StateGraph(S)
        g.add_node("prep", lambda s: {"log": ["prep"]})
        g.add_node("ask", lambda s: {"log": [E.interrupt("ok?")]})
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()

        def shape(evs):
            return [(e["event"], e["name"], e.get("data", {}).get("chunk")) for e in evs
                    if e["event"] in ("on_chain_start", "on_chain_end", "on_chain_stream")]

        a = shape(await acollect(lambda: app.astream_events({"log": []}, cfg, version="v2")))
        b = shape(await acollect(lambda: app.astream_events(E.Command(resume="yes"), cfg, version="v2")))
        return a, b

    differential(scenario)


def test_callback_handler_sees_the_interrupting_node_and_the_graph_run(differential):
    """A tracing-style callback handler (Langfuse, custom loggers) passed in the config:
    which runs start and how they end when a node pauses, and on resume."""
    def scenario(E):
        from langchain_core.callbacks import BaseCallbackHandler

        class Recorder(BaseCallbackHandler):
            def __init__(self):
                self.events = []

            def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kw):
                self.events.append(("start", kw.get("name"), parent_run_id is None))

            def on_chain_end(self, outputs, *, run_id, **kw):
                self.events.append(("end", outputs if not isinstance(outputs, dict) or "__interrupt__" not in outputs
                                    else sorted(outputs)))

            def on_chain_error(self, error, *, run_id, **kw):
                self.events.append(("error", type(error).__name__))

        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        g = E.StateGraph(S)
        g.add_node("prep", lambda s: {"log": ["prep"]})
        g.add_node("ask", lambda s: {"log": [E.interrupt("ok?")]})
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        rec = Recorder()
        a = app.invoke({"log": []}, {**cfg, "callbacks": [rec]})
        first = list(rec.events)
        rec.events.clear()
        b = app.invoke(E.Command(resume="yes"), {**cfg, "callbacks": [rec]})
        return a, first, b, rec.events

    differential(scenario)


def test_cached_review_node_is_cached_only_once_answered(differential):
    def scenario(E):
        from langgraph.cache.memory import InMemoryCache

        runs = []

        class S(TypedDict, total=False):
            doc: str
            verdict: str

        def review(state):
            runs.append(state["doc"])
            return {"verdict": f"{state['doc']}:{E.interrupt({'doc': state['doc']})}"}

        g = E.StateGraph(S)
        g.add_node("review", review, cache_policy=E.CachePolicy())
        g.add_edge(E.START, "review")
        app = g.compile(checkpointer=E.InMemorySaver(), cache=InMemoryCache())
        t1, t2 = thread(), thread()
        a = app.invoke({"doc": "d"}, t1)
        b = app.invoke(E.Command(resume="ok"), t1)
        c = collect(lambda: app.stream({"doc": "d"}, t2, stream_mode="updates"))  # same input, other thread
        return a, b, c, runs, app.get_state(t2).next

    differential(scenario)


def test_breakpoint_after_the_model_and_an_interrupt_in_review(differential):
    def scenario(E):
        log = []
        app = _review_agent(E, _weather_responses(), log=log, interrupt_after=["call_llm"])
        cfg = thread()
        seen = [app.invoke(_q(), cfg)]
        st = app.get_state(cfg)
        seen.append((st.next, st.interrupts))
        seen.append(app.invoke(None, cfg))
        st = app.get_state(cfg)
        seen.append((st.next, st.interrupts))
        seen.append(app.invoke(E.Command(resume={"action": "continue"}), cfg))
        st = app.get_state(cfg)
        seen.append((st.next, st.interrupts))
        seen.append(app.invoke(None, cfg))
        return seen, log

    differential(scenario)


async def test_async_review_agent_on_async_sqlite_savers(differential, savers):
    """LangGraph on its AsyncSqliteSaver, lgnb on lgnb's: pause, feedback, update, history."""
    async def scenario(E):
        kind = "lgnb_async_sqlite" if E.root == "lgnb" else "langgraph_async_sqlite"
        async with savers.aopen(kind, E) as saver:
            responses = _weather_responses(
                AIMessage("", id="ai-2", tool_calls=[_tc("weather_search", {"city": "SF"}, 2)]),
                AIMessage("done", id="ai-3"),
            )
            app = _review_agent(E, responses, saver)
            cfg = thread()
            a = await app.ainvoke(_q(), cfg)
            b = await app.ainvoke(E.Command(resume={"action": "feedback", "data": "caps"}), cfg)
            st = await app.aget_state(cfg)
            c = await acollect(lambda: app.astream(E.Command(resume={"action": "update", "data": {"city": "S.F."}}),
                                                   cfg, stream_mode="updates"))
            hist = [(s.metadata["source"], s.metadata["step"], s.next, len(s.interrupts))
                    async for s in app.aget_state_history(cfg)]
            return a, b, st.next, st.interrupts, c, hist

    differential(scenario)

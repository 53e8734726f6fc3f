"""Agents that libraries build with LangGraph's own classes, run on lgnb.

`langgraph.prebuilt.create_react_agent` and LangChain 1.x's `create_agent` return graphs
LangGraph compiled. On lgnb they are rebuilt by `lgnb.graph.from_langgraph` (explicitly,
or implicitly when added as a node of an lgnb graph) and must behave as LangGraph runs
them: the same updates, messages and custom events, interrupts from the middleware's and
the tools' own `langgraph.types.interrupt()`, resumes, state and history, and, as a node,
their inner steps streamed as a subgraph.

The reference side runs the library's graph on LangGraph (as a node of a LangGraph
graph, or as it is); the lgnb side runs the same library call's graph on lgnb.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import operator
import warnings
from typing import Annotated

import pytest
from _diff import capture, collect
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from typing_extensions import TypedDict

warnings.filterwarnings("ignore", message=".*create_react_agent.*")


class ToolModel(GenericFakeChatModel):
    """A scripted chat model an agent can bind tools to (`bind_tools` returns itself)."""

    def bind_tools(self, tools, **kwargs):
        return self


def _model(*replies):
    return ToolModel(messages=iter(list(replies)))


def _call(name, args, cid):
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": cid}])


def _cfg(t="t"):
    return {"configurable": {"thread_id": t}}


def _on(E, graph):
    """The library's graph on engine E: itself on LangGraph, rebuilt on lgnb."""
    if E.root == "lgnb":
        from lgnb.graph import from_langgraph

        return from_langgraph(graph)
    return graph


def _msgs(values):
    return [(type(m).__name__, m.content, getattr(m, "tool_calls", None) or None,
             getattr(m, "tool_call_id", None)) for m in values["messages"]]


def _updates(chunks):
    out = []
    for chunk in chunks:
        if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], tuple):
            ns, chunk = chunk
            ns = tuple(s.split(":")[0] for s in ns)
        else:
            ns = ()
        if not isinstance(chunk, dict):
            out.append((ns, chunk))
            continue
        for node, update in chunk.items():
            if node == "__interrupt__":
                out.append((ns, node, [i.value for i in update]))
            elif isinstance(update, dict) and "messages" in update:
                out.append((ns, node, _msgs(update)))
            else:
                out.append((ns, node, update))
    return out


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _react(E, *replies, **kwargs):
    from langgraph.prebuilt import create_react_agent

    return create_react_agent(_model(*replies), [add, mul], **kwargs)


# --- create_react_agent -------------------------------------------------------------


def test_react_agent_runs_its_tool_loop_with_the_same_updates(differential):
    def scenario(E):
        agent = _on(E, _react(E, _call("add", {"a": 2, "b": 3}, "c1"),
                              _call("mul", {"a": 5, "b": 4}, "c2"), AIMessage(content="20")))
        chunks = collect(lambda: agent.stream({"messages": [HumanMessage("go", id="h")]},
                                              stream_mode="updates"))
        return _updates(chunks)

    differential(scenario)


def test_react_agent_answers_parallel_tool_calls_in_one_step(differential):
    def scenario(E):
        both = AIMessage(content="", tool_calls=[
            {"name": "add", "args": {"a": 1, "b": 1}, "id": "p1"},
            {"name": "mul", "args": {"a": 3, "b": 3}, "id": "p2"}])
        agent = _on(E, _react(E, both, AIMessage(content="2 and 9")))
        out = agent.invoke({"messages": [HumanMessage("both", id="h")]})
        steps = [c for c in collect(lambda: _on(E, _react(E, both, AIMessage(content="x"))).stream(
            {"messages": [HumanMessage("both", id="h")]}, stream_mode="debug"))
            if c["type"] == "task"]
        return _msgs(out), sorted((c["step"], c["payload"]["name"]) for c in steps)

    differential(scenario)


def test_react_agent_stops_gracefully_when_remaining_steps_run_out(differential):
    def scenario(E):
        loop = [_call("add", {"a": i, "b": 1}, f"c{i}") for i in range(10)]
        agent = _on(E, _react(E, *loop))
        out = agent.invoke({"messages": [HumanMessage("loop", id="h")]}, {"recursion_limit": 6})
        return _msgs(out)

    differential(scenario)


def test_react_agent_with_checkpointer_keeps_the_conversation_per_thread(differential):
    def scenario(E):
        agent = _on(E, _react(E, AIMessage(content="hello"), AIMessage(content="again"),
                              checkpointer=E.InMemorySaver()))
        agent.invoke({"messages": [HumanMessage("hi", id="h1")]}, _cfg())
        second = agent.invoke({"messages": [HumanMessage("and?", id="h2")]}, _cfg())
        history = [(s.next, s.metadata["source"], s.metadata["step"], len(s.values.get("messages", [])))
                   for s in agent.get_state_history(_cfg())]
        return _msgs(second), history

    differential(scenario)


def test_react_agent_interrupt_before_tools_pauses_and_resumes(differential):
    def scenario(E):
        agent = _on(E, _react(E, _call("add", {"a": 1, "b": 2}, "c1"), AIMessage(content="3"),
                              checkpointer=E.InMemorySaver(), interrupt_before=["tools"]))
        first = _updates(collect(lambda: agent.stream(
            {"messages": [HumanMessage("add", id="h")]}, _cfg(), stream_mode="updates")))
        paused = agent.get_state(_cfg())
        rest = _updates(collect(lambda: agent.stream(None, _cfg(), stream_mode="updates")))
        return first, paused.next, rest

    differential(scenario)


def test_react_agent_tool_that_calls_langgraphs_interrupt_pauses_the_agent(differential):
    def scenario(E):
        from langgraph.types import interrupt

        @tool
        def wire(amount: int) -> str:
            """Wire money after a human approves."""
            answer = interrupt({"approve_wire": amount})
            return f"wired {amount}" if answer == "yes" else "cancelled"

        from langgraph.prebuilt import create_react_agent

        agent = _on(E, create_react_agent(
            _model(_call("wire", {"amount": 50}, "w1"), AIMessage(content="done")), [wire],
            checkpointer=E.InMemorySaver()))
        first = _updates(collect(lambda: agent.stream(
            {"messages": [HumanMessage("pay", id="h")]}, _cfg(), stream_mode="updates")))
        state = agent.get_state(_cfg())
        rest = _updates(collect(lambda: agent.stream(
            E.Command(resume="yes"), _cfg(), stream_mode="updates")))
        return first, state.next, [i.value for i in state.interrupts], rest

    differential(scenario)


def test_the_ported_create_react_agent_deprecation_warning_names_the_callers_line(differential):
    """LangGraph warns that `create_react_agent` moved to `langchain.agents`, naming the
    caller's line; through `lgnb.prebuilt` the warning must name the user's line too (a
    DeprecationWarning is shown by default only when it points at `__main__`)."""
    def scenario(E):
        import importlib
        import os

        prebuilt = importlib.import_module(f"{E.root}.prebuilt")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            prebuilt.create_react_agent(_model(AIMessage(content="hi")), [])
        return [(type(w.message).__name__, os.path.basename(w.filename)) for w in caught]

    ref = differential(scenario)
    assert ref == [("LangGraphDeprecatedSinceV10", "test_diff_langgraph_built_agents.py")]


def test_a_react_agent_ported_by_swapping_the_prebuilt_import_runs_on_the_engine_imported(differential):
    """`from lgnb.prebuilt import create_react_agent, ToolNode, tools_condition,
    InjectedState` where the program had `langgraph.prebuilt`: the agent is an lgnb graph,
    its tool reads the state, asks a human, and resumes as on LangGraph; the tool helpers
    build the same agent by hand."""
    def scenario(E):
        import importlib

        prebuilt = importlib.import_module(f"{E.root}.prebuilt")

        @tool
        def wire(amount: int, state: Annotated[dict, prebuilt.InjectedState]) -> str:
            """Wire money after a human approves."""
            answer = E.interrupt({"approve_wire": amount, "asked_by": state["messages"][0].content})
            return f"wired {amount}" if answer == "yes" else "cancelled"

        agent = prebuilt.create_react_agent(
            _model(_call("wire", {"amount": 50}, "w1"), AIMessage(content="done")), [wire],
            checkpointer=E.InMemorySaver())
        engine = type(agent).__module__.split(".")[0]
        first = _updates(collect(lambda: agent.stream(
            {"messages": [HumanMessage("pay", id="h")]}, _cfg(), stream_mode="updates")))
        state = agent.get_state(_cfg())
        rest = _updates(collect(lambda: agent.stream(E.Command(resume="yes"), _cfg(), stream_mode="updates")))

        class S(TypedDict):
            messages: Annotated[list, E.add_messages]

        model = _model(_call("add", {"a": 2, "b": 3}, "c1"), AIMessage(content="5"))
        g = E.StateGraph(S)
        g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
        g.add_node("tools", prebuilt.ToolNode([add]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", prebuilt.tools_condition)
        g.add_edge("tools", "agent")
        by_hand = _msgs(g.compile().invoke({"messages": [HumanMessage("add", id="h")]}))
        return engine == E.root, first, state.next, [i.value for i in state.interrupts], rest, by_hand

    differential(scenario)


def test_react_agent_tool_writing_custom_events_streams_them(differential):
    def scenario(E):
        from langgraph.config import get_stream_writer
        from langgraph.prebuilt import create_react_agent

        @tool
        def fetch(url: str) -> str:
            """Fetch a page, reporting progress."""
            writer = get_stream_writer()
            for pct in (50, 100):
                writer({"url": url, "progress": pct})
            return "page"

        agent = _on(E, create_react_agent(
            _model(_call("fetch", {"url": "a"}, "f1"), AIMessage(content="ok")), [fetch]))
        return collect(lambda: agent.stream({"messages": [HumanMessage("get", id="h")]},
                                            stream_mode=["custom", "updates"]))[:3]

    differential(scenario)


def test_react_agent_streams_the_models_tokens_with_node_metadata(differential):
    def scenario(E):
        agent = _on(E, _react(E, AIMessage(content="the final answer")))
        out = []
        for chunk, meta in agent.stream({"messages": [HumanMessage("q", id="h")]},
                                        stream_mode="messages"):
            out.append((type(chunk).__name__, chunk.content, meta["langgraph_node"],
                        meta["langgraph_step"], meta["langgraph_triggers"]))
        return out

    differential(scenario)


def test_react_agent_with_pre_and_post_model_hooks(differential):
    def scenario(E):
        def pre(state):
            return {"llm_input_messages": state["messages"][-1:]}

        def post(state):
            return {"messages": [AIMessage(content="checked", id="post")]}

        agent = _on(E, _react(E, _call("add", {"a": 1, "b": 1}, "c1"), AIMessage(content="2"),
                              pre_model_hook=pre, post_model_hook=post))
        return _updates(collect(lambda: agent.stream(
            {"messages": [HumanMessage("q", id="h")]}, stream_mode="updates")))

    differential(scenario)


# --- as a node of a graph ---------------------------------------------------------------


def test_agent_added_as_a_node_streams_its_steps_as_a_subgraph(differential):
    def scenario(E):
        agent = _react(E, _call("add", {"a": 2, "b": 2}, "c1"), AIMessage(content="4"))
        g = E.StateGraph(E.MessagesState)
        g.add_node("prep", lambda s: {"messages": [AIMessage(content="prepared", id="p")]})
        g.add_node("agent", agent)
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "agent")
        app = g.compile()
        return _updates(collect(lambda: app.stream(
            {"messages": [HumanMessage("q", id="h")]}, stream_mode="updates", subgraphs=True)))

    differential(scenario)


def test_agent_node_that_pauses_in_a_tool_pauses_the_parent_and_resumes(differential):
    def scenario(E):
        from langgraph.prebuilt import create_react_agent
        from langgraph.types import interrupt

        @tool
        def book(day: str) -> str:
            """Book a day after confirmation."""
            return f"booked {day}" if interrupt({"confirm": day}) else "not booked"

        agent = create_react_agent(
            _model(_call("book", {"day": "mon"}, "b1"), AIMessage(content="booked")), [book])
        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("after", lambda s: {"messages": [AIMessage(content="after", id="a")]})
        g.add_edge(E.START, "agent")
        g.add_edge("agent", "after")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = _updates(collect(lambda: app.stream(
            {"messages": [HumanMessage("book", id="h")]}, _cfg(), stream_mode="updates",
            subgraphs=True)))
        state = app.get_state(_cfg(), subgraphs=True)
        inner = state.tasks[0].state
        rest = app.invoke(E.Command(resume=True), _cfg())
        return (first, state.next, [i.value for i in state.interrupts], inner.next,
                _msgs(inner.values), _msgs(rest))

    differential(scenario)


def test_handoff_tool_in_an_agent_node_routes_the_parent(differential):
    def scenario(E):
        from langchain_core.messages import ToolMessage
        from langchain_core.tools import InjectedToolCallId
        from langgraph.prebuilt import create_react_agent
        from langgraph.types import Command

        @tool
        def to_billing(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
            """Hand the conversation to billing."""
            msg = ToolMessage(content="to billing", tool_call_id=tool_call_id, id="tm")
            return Command(graph=Command.PARENT, goto="billing", update={"messages": [msg]})

        agent = create_react_agent(_model(_call("to_billing", {}, "t1")), [to_billing])
        g = E.StateGraph(E.MessagesState)
        g.add_node("triage", agent, destinations=("billing",))
        g.add_node("billing", lambda s: {"messages": [AIMessage(content="billing here", id="b")]})
        g.add_edge(E.START, "triage")
        app = g.compile()
        return _msgs(app.invoke({"messages": [HumanMessage("refund", id="h")]}))

    differential(scenario)


# --- LangChain 1.x create_agent -------------------------------------------------------


def _hitl_agent(E, *replies, checkpointer):
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    return create_agent(
        _model(*replies), [add],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"add": True})],
        checkpointer=checkpointer)


@pytest.mark.parametrize("decision", [
    {"type": "approve"},
    {"type": "edit", "edited_action": {"name": "add", "args": {"a": 10, "b": 20}}},
    {"type": "reject", "message": "not now"},
])
def test_create_agent_human_in_the_loop_decisions(differential, decision):
    def scenario(E):
        agent = _on(E, _hitl_agent(E, _call("add", {"a": 1, "b": 2}, "c1"),
                                   AIMessage(content="finished"), checkpointer=E.InMemorySaver()))
        first = _updates(collect(lambda: agent.stream(
            {"messages": [HumanMessage("sum", id="h")]}, _cfg(), stream_mode="updates")))
        paused = agent.get_state(_cfg())
        rest = _updates(collect(lambda: agent.stream(
            E.Command(resume={"decisions": [decision]}), _cfg(), stream_mode="updates")))
        final = agent.get_state(_cfg())
        return (first, paused.next, [t.name for t in paused.tasks], rest, final.next,
                _msgs(final.values))

    differential(scenario)


def test_create_agent_as_a_node_pauses_the_parent_for_review(differential):
    def scenario(E):
        agent = _hitl_agent(E, _call("add", {"a": 4, "b": 4}, "c1"), AIMessage(content="8"),
                            checkpointer=None)
        g = E.StateGraph(E.MessagesState)
        g.add_node("assistant", agent)
        g.add_edge(E.START, "assistant")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = _updates(collect(lambda: app.stream(
            {"messages": [HumanMessage("sum", id="h")]}, _cfg(), stream_mode="updates",
            subgraphs=True)))
        rest = _updates(collect(lambda: app.stream(
            E.Command(resume={"decisions": [{"type": "approve"}]}), _cfg(),
            stream_mode="updates", subgraphs=True)))
        return first, rest

    differential(scenario)


# --- LangGraph's own state annotations in an lgnb schema ------------------------------


def test_state_annotated_with_langgraphs_add_messages_and_managed_values(differential):
    def scenario(E):
        from langgraph.graph.message import add_messages
        from langgraph.managed import IsLastStep, RemainingSteps

        class S(TypedDict):
            messages: Annotated[list, add_messages]
            left: RemainingSteps
            last: IsLastStep
            log: Annotated[list, operator.add]

        def step(s):
            return {"messages": [("ai", f"{s['left']}")], "log": [s["last"]]}

        g = E.StateGraph(S)
        g.add_node("step", step)
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", lambda s: "step" if s["left"] > 2 else E.END)
        out = g.compile().invoke({"messages": [("user", "go")], "log": []}, {"recursion_limit": 5})
        return [m.content for m in out["messages"]], out["log"]

    differential(scenario)


def test_a_ported_schema_with_the_engines_managed_values_builds_langgraph_built_agents(differential):
    """`from lgnb.managed import RemainingSteps` in a state schema handed to a factory that
    builds with LangGraph's own StateGraph (prebuilt agents, langgraph_supervisor): the
    agent builds and reads the managed values, on LangGraph's engine too."""

    def scenario(E):
        from langchain_core.messages import ToolMessage

        class Agent(E.MessagesState):
            remaining_steps: E.RemainingSteps
            is_last_step: E.IsLastStep

        seen = []

        @tool
        def peek(x: int) -> int:
            """Echo x."""
            return x

        def prompt(state):
            seen.append((state["remaining_steps"], state["is_last_step"]))
            return state["messages"]

        prebuilt = E.module("prebuilt")
        agent = prebuilt.create_react_agent(
            _model(_call("peek", {"x": 1}, "c1"), AIMessage("done", id="a2")), [peek],
            state_schema=Agent, prompt=prompt)
        out = agent.invoke({"messages": [HumanMessage("go", id="h")]}, {"recursion_limit": 9})

        # a library graph LangGraph itself runs (built with LangGraph's StateGraph and
        # compiled by it), whose state schema the ported program supplies
        from langgraph.graph import StateGraph as LGStateGraph

        steps = []

        def count(state):
            steps.append((state["remaining_steps"], state["is_last_step"]))
            return {"messages": [ToolMessage("t", tool_call_id=f"t{len(steps)}", id=f"t{len(steps)}")]}

        lib = LGStateGraph(Agent)
        lib.add_node("count", count)
        lib.add_edge("__start__", "count")
        lib.add_conditional_edges("count", lambda s: "__end__" if s["is_last_step"] else "count")
        lib.compile().invoke({"messages": []}, {"recursion_limit": 4})
        return _msgs(out), seen, steps

    differential(scenario)


def test_state_annotated_with_langgraphs_channels(differential):
    def scenario(E):
        from langgraph.channels import EphemeralValue, Topic

        class S(TypedDict):
            events: Annotated[list, Topic(str, accumulate=True)]
            flash: Annotated[str, EphemeralValue(str)]
            count: int

        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"events": ["a"], "flash": "x", "count": s["count"] + 1})
        g.add_node("b", lambda s: {"events": ["b", "c"], "count": s["count"] + 1})
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        return g.compile().invoke({"count": 0})

    differential(scenario)


# --- errors -------------------------------------------------------------------------------


def test_from_langgraph_takes_lgnb_graphs_as_they_are_and_refuses_what_is_no_graph():
    from lgnb.graph import StateGraph, from_langgraph

    class S(TypedDict):
        x: int

    builder = StateGraph(S)  # an lgnb graph is taken as it is (a factory ported by its import)
    builder.add_node("n", lambda s: s)
    builder.add_edge("__start__", "n")
    assert from_langgraph(builder) is builder
    assert from_langgraph(compiled := builder.compile()) is compiled
    with pytest.raises(TypeError, match="from_langgraph"):
        from_langgraph(lambda s: s)


def test_langgraph_state_annotation_without_an_lgnb_equivalent_is_a_clear_error():
    from langgraph.channels import NamedBarrierValue

    from lgnb.graph import StateGraph

    class S(TypedDict):
        gate: Annotated[str, NamedBarrierValue(str, {"a"})]

    with pytest.raises(ValueError, match="'gate'.*lgnb.channels"):
        StateGraph(S)


def test_from_langgraph_keeps_the_compile_options():
    from langgraph.checkpoint.memory import InMemorySaver

    from lgnb.graph import from_langgraph

    saver = InMemorySaver()
    agent = _react(None, AIMessage(content="x"), checkpointer=saver,
                   interrupt_before=["tools"], name="helper")
    ours = from_langgraph(agent)
    assert (ours.checkpointer, ours.interrupt_before_nodes, ours.name) == (saver, ["tools"], "helper")
    assert sorted(ours.builder.nodes) == sorted(agent.builder.nodes)
    assert capture(lambda: ours.get_graph().draw_mermaid()) == agent.get_graph().draw_mermaid()


def test_create_agent_run_async_pauses_and_resumes(differential):
    async def scenario(E):
        agent = _on(E, _hitl_agent(E, _call("add", {"a": 2, "b": 5}, "c1"),
                                   AIMessage(content="seven"), checkpointer=E.InMemorySaver()))
        first = [c async for c in agent.astream(
            {"messages": [HumanMessage("sum", id="h")]}, _cfg(), stream_mode="updates")]
        out = await agent.ainvoke(E.Command(resume={"decisions": [{"type": "approve"}]}), _cfg())
        return _updates(first), _msgs(out)

    differential(scenario)


def test_react_agent_on_lgnbs_sqlite_saver_resumes_in_a_new_graph(tmp_path):
    """A thread an agent paused on lgnb's SQLite file is resumed by a freshly built agent,
    as after a kernel restart."""
    from lgnb.checkpoint.sqlite import SqliteSaver
    from lgnb.graph import from_langgraph
    from lgnb.types import Command

    path = str(tmp_path / "agent.db")

    def build(*replies):
        return from_langgraph(_hitl_agent(None, *replies, checkpointer=SqliteSaver(path)))

    first = build(_call("add", {"a": 3, "b": 4}, "c1"))
    paused = first.invoke({"messages": [HumanMessage("sum", id="h")]}, _cfg())
    assert [i.value["action_requests"][0]["args"] for i in paused["__interrupt__"]] == [{"a": 3, "b": 4}]
    second = build(AIMessage(content="seven"))
    out = second.invoke(Command(resume={"decisions": [{"type": "approve"}]}), _cfg())
    assert [(type(m).__name__, m.content) for m in out["messages"][-2:]] == [
        ("ToolMessage", "7"), ("AIMessage", "seven")]


def test_a_langgraph_builder_keeps_its_node_defaults_when_rebuilt(differential):
    """An uncompiled LangGraph builder's `set_node_defaults` (retry, error handler) apply
    to the rebuilt graph's nodes as LangGraph's compile applies them."""

    def scenario(E):
        from langgraph.graph import START as LG_START
        from langgraph.graph import StateGraph as LgStateGraph
        from langgraph.types import RetryPolicy as LgRetry

        class S(TypedDict):
            log: Annotated[list, operator.add]

        tries = []

        def flaky(s):
            tries.append(1)
            if len(tries) < 3:
                raise ConnectionError("try again")
            return {"log": [f"ok after {len(tries)}"]}

        def broken(s):
            raise ValueError("always")

        def handler(s, error):
            return {"log": [f"handled {type(error.error).__name__}"]}

        b = LgStateGraph(S)
        b.add_node("flaky", flaky)
        b.add_node("broken", broken)
        b.add_edge(LG_START, "flaky")
        b.add_edge("flaky", "broken")
        b.set_node_defaults(retry_policy=LgRetry(max_attempts=3, initial_interval=0.001, jitter=False),
                            error_handler=handler)
        if E.root == "lgnb":
            from lgnb.graph import from_langgraph

            app = from_langgraph(b).compile()
        else:
            app = b.compile()
        return app.invoke({"log": []}), len(tries)

    differential(scenario)

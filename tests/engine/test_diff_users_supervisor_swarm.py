"""Multi-agent programs written with `langgraph-supervisor` and `langgraph-swarm`, run on lgnb.

Both libraries build their graph with LangGraph's own `StateGraph` (`create_supervisor`
and `create_swarm` return a builder). A user compiles it as it is on LangGraph; on lgnb the
same builder goes through `lgnb.graph.from_langgraph` first. The worker agents are
`langgraph.prebuilt.create_react_agent` and LangChain's `create_agent` graphs with scripted
chat models; the supervisor runs them inside its own nodes (`agent.invoke`), the swarm adds
them as subgraph nodes. Observables are the raw streams (`updates` / `values` / `messages`
with `subgraphs=True`), what each model was sent, final states, `get_state(subgraphs=True)`
and histories with an in-memory or SQLite checkpointer; only ids and timestamps are
normalized (by the harness), except where LangGraph itself varies from run to run (the
scenario says how it compares then).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import pprint
import warnings

import pytest
from _agent_scenarios import calls as _calls
from _agent_scenarios import history as _history
from _agent_scenarios import on as _on
from _agent_scenarios import saver as _saver
from _agent_scenarios import say as _say
from _diff import acollect, collect, normalize, snapshot_summary
from _scripted import Scripted
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

warnings.filterwarnings("ignore", message=".*create_react_agent.*")


def _model(*replies):
    return Scripted(script=iter(list(replies)), seen=[])


class Binding(Scripted):
    """A scripted model whose `bind_tools` binds the tools (as real chat models do) and
    takes `parallel_tool_calls` (as OpenAI's and Anthropic's do), so `create_supervisor`
    passes the flag; it records what it was given."""

    def bind_tools(self, tools, *, tool_choice=None, parallel_tool_calls=None, **kwargs):
        self.seen.append(("bind_tools", sorted(t.name for t in tools), parallel_tool_calls))
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools])


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


def _hi(text="hi", mid="h1"):
    return {"messages": [HumanMessage(text, id=mid)]}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return f"headcount results for {query}"


def _stream(app, inp, cfg=None, modes=("updates", "values")):
    return collect(lambda: app.stream(inp, cfg, stream_mode=list(modes), subgraphs=True))


def _workers(math_replies, research_replies, math_tools=(add,)):
    """A math expert built with `create_react_agent`, a research expert with `create_agent`."""
    from langchain.agents import create_agent
    from langgraph.prebuilt import create_react_agent

    math_model, research_model = _model(*math_replies), _model(*research_replies)
    math = create_react_agent(math_model, list(math_tools), name="math_expert",
                              prompt="You are a math expert.")
    research = create_agent(research_model, [web_search], name="research_expert",
                            system_prompt="You are a researcher.")
    return math, research, math_model, research_model


def _supervisor(E, supervisor_model, workers, checkpointer=None, **kwargs):
    from langgraph_supervisor import create_supervisor

    builder = create_supervisor(list(workers), model=supervisor_model,
                                prompt="You manage a research expert and a math expert.", **kwargs)
    return _on(E, builder).compile(checkpointer=checkpointer)


# --- supervisor ---------------------------------------------------------------------------------


@pytest.mark.parametrize("handoff_back", [True, False])
@pytest.mark.parametrize("output_mode", ["full_history", "last_message"])
def test_supervisor_delegates_to_two_react_agents_and_answers(differential, output_mode, handoff_back):
    """The README's FAANG example: research, then math, then the supervisor's answer; the
    output mode and the handoff-back messages decide what the supervisor model sees next."""
    def scenario(E):
        math, research, math_model, research_model = _workers(
            [_calls("m1", ("add", {"a": 1200, "b": 800}, "a1")), _say("The total is 2000.", "m2")],
            [_calls("r1", ("web_search", {"query": "FAANG 2024"}, "w1")), _say("Meta 1200, Apple 800.", "r2")])
        sup_model = _model(_calls("s1", ("transfer_to_research_expert", {}, "t1")),
                           _calls("s2", ("transfer_to_math_expert", {}, "t2")),
                           _say("Combined headcount: 2000.", "s3"))
        app = _supervisor(E, sup_model, [research, math], output_mode=output_mode,
                          add_handoff_back_messages=handoff_back)
        chunks = _stream(app, _hi("combined FAANG headcount?"))
        return chunks, sup_model.seen, math_model.seen, research_model.seen

    ref = differential(scenario)
    assert ref[0][-1][2]["messages"][-1][1]["content"] == "Combined headcount: 2000."


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_supervisor_conversation_continues_on_a_checkpointed_thread(differential, kind, tmp_path):
    """Two turns on one thread: the second question sees the first turn's messages; the
    state, its subgraph view and the history are the same on both engines."""
    def scenario(E):
        math, research, _, _ = _workers(
            [_calls("m1", ("add", {"a": 2, "b": 3}, "a1")), _say("5", "m2"),
             _calls("m3", ("add", {"a": 5, "b": 10}, "a2")), _say("15", "m4")],
            [_say("unused", "r1")])
        sup_model = _model(_calls("s1", ("transfer_to_math_expert", {}, "t1")), _say("2+3 is 5.", "s2"),
                           _calls("s3", ("transfer_to_math_expert", {}, "t2")), _say("Now 15.", "s4"))
        with _saver(E, kind, tmp_path) as saver:
            app = _supervisor(E, sup_model, [math, research], checkpointer=saver)
            first = app.invoke(_hi("2+3?"), _cfg())
            second = _stream(app, _hi("and +10?", "h2"), _cfg())
            state = app.get_state(_cfg(), subgraphs=True)
            return (first, second, snapshot_summary(state), _history(app, _cfg()),
                    [len(m) for m in sup_model.seen])

    ref = differential(scenario)
    # the system prompt and the question; then the worker's answer with both handoffs; the
    # second turn sees the whole first one
    assert ref[-1] == [2, 7, 9, 14]


def test_worker_tool_asks_a_human_and_the_supervisor_resumes(differential):
    """A tool of a worker calls `interrupt()` for approval: the supervisor's run pauses,
    the pending interrupt and the paused state show up, `Command(resume=...)` continues."""
    def scenario(E):
        from langgraph.types import interrupt

        @tool
        def transfer_funds(amount: int) -> str:
            """Transfer money (needs a human's approval)."""
            answer = interrupt({"question": "approve transfer?", "amount": amount})
            return f"transferred {amount}" if answer == "yes" else f"declined: {answer}"

        math, research, math_model, _ = _workers(
            [_calls("m1", ("transfer_funds", {"amount": 50}, "f1")), _say("Done: 50 sent.", "m2")],
            [_say("unused", "r1")], math_tools=(transfer_funds,))
        sup_model = _model(_calls("s1", ("transfer_to_math_expert", {}, "t1")), _say("Transfer complete.", "s2"))
        app = _supervisor(E, sup_model, [math, research], checkpointer=E.InMemorySaver())
        first = _stream(app, _hi("send 50"), _cfg())
        paused = app.get_state(_cfg(), subgraphs=True)
        resumed = _stream(app, E.Command(resume="yes"), _cfg())
        return (first, snapshot_summary(paused), resumed, app.get_state(_cfg()).values,
                _history(app, _cfg()), len(math_model.seen))

    ref = differential(scenario)
    assert ref[-1] == 2  # the worker's model was not asked again on resume


def test_supervisor_streams_tokens_with_the_metadata_users_read(differential):
    """`stream_mode=["messages", "updates"]` with subgraphs: the token chunks of the
    supervisor's and the worker's models, each with its node, step, triggers, path and
    checkpoint namespaces."""
    keys = ("langgraph_node", "langgraph_step", "langgraph_triggers", "langgraph_path",
            "langgraph_checkpoint_ns", "checkpoint_ns", "tags", "thread_id", "ls_model_type")

    def scenario(E):
        math, research, _, _ = _workers([_calls("m1", ("add", {"a": 4, "b": 4}, "a1")), _say("It is 8.", "m2")],
                                        [_say("unused", "r1")])
        sup_model = _model(_calls("s1", ("transfer_to_math_expert", {}, "t1"), content="Asking math."),
                           _say("Four plus four is eight.", "s2"))
        app = _supervisor(E, sup_model, [math, research], checkpointer=E.InMemorySaver())
        out = []
        for ns, mode, chunk in app.stream(_hi("4+4?"), _cfg(), stream_mode=["messages", "updates"],
                                          subgraphs=True):
            if mode == "messages":
                msg, meta = chunk
                out.append((ns, mode, type(msg).__name__, msg.content, msg.id,
                            getattr(msg, "tool_call_chunks", None), {k: meta.get(k) for k in keys}))
            else:
                out.append((ns, mode, chunk))
        return out

    ref = differential(scenario)
    assert {c[-1]["langgraph_node"] for c in ref if c[1] == "messages"} >= {"agent", "tools"}


def test_supervisor_parallel_handoffs_run_one_of_the_agents(differential):
    """`parallel_tool_calls=True` reaches the model's `bind_tools`; the model then hands off
    to two agents in one message. The supervisor runs each tool call as a task of its own,
    each handoff leaves as a `Command.PARENT`, and only one of them reaches the graph: which
    one varies from run to run on LangGraph. So the two agents are alike, the observable
    names them `<winner>` and `<other>` (names of one length: the same layout), and leaves out the supervisor's inner steps (the
    message with both calls). The rest (the winner's handoff conversation, its run, the
    final answer, the history) must match."""
    def scenario(E):
        from langgraph.prebuilt import create_react_agent

        writers = [create_react_agent(_model(_say("Draft ready.", "w1")), [], name=name, prompt="Write a draft.")
                   for name in ("writer", "editor")]
        sup_model = Binding(script=iter([
            _calls("s1", ("transfer_to_writer", {}, "call_writer"), ("transfer_to_editor", {}, "call_editor")),
            _say("Here is the draft.", "s2")]), seen=[])
        app = _supervisor(E, sup_model, writers, checkpointer=E.InMemorySaver(), parallel_tool_calls=True)
        chunks = _stream(app, _hi("a draft or an edit, whichever is ready"), _cfg())
        ran = sorted({ns[0].split(":")[0] for ns, _, _ in chunks if ns} - {"supervisor"})
        kept = [c for c in chunks if not c[0] or not c[0][0].startswith("supervisor:")]
        text = pprint.pformat(normalize((kept, app.get_state(_cfg()).values, _history(app, _cfg()),
                                         sup_model.seen[1:])), width=100, sort_dicts=False)
        if ran:
            other = ({"writer", "editor"} - {ran[0]}).pop()
            text = text.replace(ran[0], "<winner>").replace(other, "<other>")
        return sup_model.seen[0], len(ran), text.splitlines()

    ref = differential(scenario)
    assert ref[:2] == (("bind_tools", ["transfer_to_editor", "transfer_to_writer"], True), 1)
    assert not any("<other>" in line for line in ref[2])


def test_supervisor_forwards_a_worker_message_with_inline_agent_names_async(differential):
    """Async: `astream` runs the workers through `ainvoke`; the supervisor's own tool
    `forward_message` returns the worker's answer verbatim, and `include_agent_name="inline"`
    shows the supervisor model who spoke."""
    async def scenario(E):
        from langgraph_supervisor.handoff import create_forward_message_tool

        math, research, _, _ = _workers([_say("unused", "m1")],
                                        [_calls("r1", ("web_search", {"query": "tallest peak"}, "w1")),
                                         _say("Everest, 8849 m.", "r2")])
        sup_model = Binding(script=iter([
            _calls("s1", ("transfer_to_research_expert", {}, "t1")),
            _calls("s2", ("forward_message", {"from_agent": "research_expert"}, "f1"))]), seen=[])
        app = _supervisor(E, sup_model, [math, research], tools=[create_forward_message_tool("supervisor")],
                          include_agent_name="inline", output_mode="full_history")
        chunks = await acollect(lambda: app.astream(_hi("tallest mountain?"), stream_mode=["updates", "values"],
                                                    subgraphs=True))
        return chunks, sup_model.seen

    ref = differential(scenario)
    assert ref[0][-1][2]["messages"][-1][1]["content"] == "Everest, 8849 m."


def test_supervisor_subgraphs_and_drawing_include_the_workers_it_invokes(differential):
    """The workers a supervisor node invokes are its subgraphs: `get_subgraphs` lists
    them and an xray drawing shows their nodes."""
    def scenario(E):
        math, research, _, _ = _workers([_say("unused", "m1")], [_say("unused", "r1")])
        app = _supervisor(E, _model(_say("unused", "s1")), [math, research])
        return (sorted(name for name, _ in app.get_subgraphs()),
                app.get_graph(xray=True).draw_mermaid(), app.get_graph().draw_mermaid())

    ref = differential(scenario)
    assert ref[0] == ["math_expert", "research_expert", "supervisor"]


# --- swarm --------------------------------------------------------------------------------------


def _swarm(E, alice_replies, bob_replies, checkpointer):
    """The README's swarm: Alice (adds, `create_react_agent`) and Bob (a pirate, `create_agent`)."""
    from langchain.agents import create_agent
    from langgraph.prebuilt import create_react_agent
    from langgraph_swarm import create_handoff_tool, create_swarm

    alice_model, bob_model = _model(*alice_replies), _model(*bob_replies)
    alice = create_react_agent(alice_model, [add, create_handoff_tool(agent_name="Bob", description="Transfer to Bob")],
                               prompt="You are Alice, an addition expert.", name="Alice")
    bob = create_agent(bob_model, [create_handoff_tool(agent_name="Alice", description="Transfer to Alice")],
                       system_prompt="You are Bob, you speak like a pirate.", name="Bob")
    builder = create_swarm([alice, bob], default_active_agent="Alice")
    return _on(E, builder).compile(checkpointer=checkpointer), alice_model, bob_model


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_swarm_remembers_the_active_agent_across_turns(differential, kind, tmp_path):
    """Turn 1: Alice hands off to Bob, who answers. Turn 2 starts at Bob (the saved
    `active_agent`), who hands back to Alice for the sum."""
    def scenario(E):
        with _saver(E, kind, tmp_path) as saver:
            app, alice_model, bob_model = _swarm(
                E, [_calls("a1", ("transfer_to_bob", {}, "t1")), _calls("a2", ("add", {"a": 5, "b": 7}, "c1")),
                    _say("5 + 7 = 12", "a3")],
                [_say("Ahoy, Bob here!", "b1"), _calls("b2", ("transfer_to_alice", {}, "t2"))], saver)
            first = _stream(app, _hi("i'd like to speak to Bob"), _cfg())
            between = app.get_state(_cfg()).values.get("active_agent")
            second = _stream(app, _hi("what's 5 + 7?", "h2"), _cfg())
            state = app.get_state(_cfg(), subgraphs=True)
            return (first, between, second, snapshot_summary(state), _history(app, _cfg()),
                    alice_model.seen, bob_model.seen)

    ref = differential(scenario)
    assert ref[1] == "Bob" and ref[3]["values"]["active_agent"] == "Alice"


def test_swarm_of_the_engines_own_agents_compiled_by_langgraph_hands_off(differential):
    """The literal import swap: the agents come from the engine's `prebuilt` (lgnb graphs on
    lgnb) and the swarm is compiled as `create_swarm` returns it, so LangGraph runs it with
    lgnb agents as its nodes. A handoff tool's `Command(graph=PARENT)` must reach the swarm
    (it raised an unhandled ParentCommand, and the swarm never left Alice)."""
    def scenario(E):
        from langgraph_swarm import create_handoff_tool, create_swarm

        alice_model = _model(_calls("a1", ("transfer_to_bob", {}, "t1")), _say("Alice again.", "a2"))
        bob_model = _model(_say("Ahoy, Bob here!", "b1"), _calls("b2", ("transfer_to_alice", {}, "t2")))
        prebuilt = E.module("prebuilt")
        alice = prebuilt.create_react_agent(alice_model, [create_handoff_tool(agent_name="Bob")], name="Alice")
        bob = prebuilt.create_react_agent(bob_model, [create_handoff_tool(agent_name="Alice")], name="Bob")
        app = create_swarm([alice, bob], default_active_agent="Alice").compile(
            checkpointer=E.InMemorySaver())
        turns = []
        for text, mid in (("i'd like to speak to Bob", "h1"), ("back to Alice", "h2")):
            chunks = collect(lambda inp=_hi(text, mid): app.stream(inp, _cfg(), stream_mode="updates"))
            values = app.get_state(_cfg()).values
            turns.append((chunks, values["active_agent"], [m.content for m in values["messages"]]))
        return turns

    ref = differential(scenario)
    assert [t[1] for t in ref] == ["Bob", "Alice"]


def test_supervisor_of_the_engines_own_agents_compiled_by_langgraph_streams_their_steps(differential):
    """The literal import swap for a supervisor: the worker is the engine's own
    `create_react_agent` and LangGraph compiles and runs `create_supervisor`'s builder. With
    `subgraphs=True` the worker's steps, its tool's custom event and its tokens arrive under
    the worker's namespace (lgnb's went to `()` or were lost)."""
    def scenario(E):
        from langgraph_supervisor import create_supervisor

        @tool
        def add_up(a: int, b: int) -> int:
            """Add two integers."""
            E.get_stream_writer()({"progress": "adding"})
            return a + b

        math_model = _model(_calls("m1", ("add_up", {"a": 2, "b": 3}, "a1")), _say("The sum is 5.", "m2"))
        math = E.module("prebuilt").create_react_agent(math_model, [add_up], name="math_expert")
        sup_model = _model(_calls("s1", ("transfer_to_math_expert", {}, "t1")), _say("It is 5.", "s2"))
        app = create_supervisor([math], model=sup_model).compile(checkpointer=E.InMemorySaver())
        out = []
        for ns, mode, chunk in app.stream(_hi("2+3?"), _cfg(), subgraphs=True,
                                          stream_mode=["updates", "custom", "messages"]):
            if mode == "messages":
                msg, meta = chunk
                chunk = (type(msg).__name__, msg.content, meta["langgraph_node"])
            out.append((tuple(part.split(":")[0] for part in ns), mode, chunk))
        return out

    ref = differential(scenario)
    assert (("math_expert",), "custom", {"progress": "adding"}) in ref


@pytest.mark.parametrize("call", ["config", "no_config", "async_no_config", "stream_no_config"])
def test_a_graph_a_langgraph_node_function_invokes_hands_its_parent_command_to_that_graph(differential, call):
    """A LangGraph-compiled graph whose function node runs the engine's graph, passing its
    `config` or not (LangChain's ambient config carries the task): the inner graph's
    `Command(graph=PARENT)` routes the outer graph, its recursion limit and tags come down."""
    import asyncio
    import operator
    from typing import Annotated

    from langgraph.graph import StateGraph as LangGraphStateGraph
    from typing_extensions import TypedDict

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]

    def scenario(E):
        seen = []

        def hand_off(state, config):
            seen.append((config.get("recursion_limit"), sorted(config.get("tags") or [])))
            return E.Command(graph=E.Command.PARENT, goto="x", update={"log": ["handed"]})

        inner = E.StateGraph(S)
        inner.add_node("a", hand_off)
        inner.add_edge(E.START, "a")
        inner = inner.compile()

        def node(state, config):
            if call == "config":
                return inner.invoke(state, config)
            if call == "no_config":
                return inner.invoke(state)
            if call == "async_no_config":
                raise AssertionError("unused")
            for _ in inner.stream(state):
                pass
            return {}

        async def anode(state):
            return await inner.ainvoke(state)

        outer = LangGraphStateGraph(S)
        outer.add_node("call", anode if call == "async_no_config" else node)
        outer.add_node("x", lambda s: {"log": ["x"]})
        outer.add_edge("__start__", "call")
        app = outer.compile()
        cfg = {"recursion_limit": 7, "tags": ["T"]}
        if call == "async_no_config":
            out = asyncio.run(app.ainvoke({"log": []}, cfg))
        else:
            out = app.invoke({"log": []}, cfg)
        return out, seen

    ref = differential(scenario)
    assert ref[0] == {"log": ["handed", "x"]}


def test_a_ported_graph_running_a_langgraph_compiled_swarm_of_the_engines_agents_hands_off(differential):
    """engine graph -> a swarm LangGraph compiled -> the engine's agents: Alice's handoff
    reaches the swarm in between, not the ported graph around it."""
    def scenario(E):
        from langgraph_swarm import create_handoff_tool, create_swarm

        prebuilt = E.module("prebuilt")
        alice = prebuilt.create_react_agent(_model(_calls("a1", ("transfer_to_bob", {}, "t1"))),
                                            [create_handoff_tool(agent_name="bob")], name="alice")
        bob = prebuilt.create_react_agent(_model(_say("bob here", "b1")), [], name="bob")
        swarm = create_swarm([alice, bob], default_active_agent="alice").compile()

        def team(state, config):
            out = swarm.invoke({"messages": state["messages"]}, config)
            return {"messages": out["messages"][len(state["messages"]):]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("team", team)
        g.add_edge(E.START, "team")
        out = g.compile().invoke(_hi())
        return [(type(m).__name__, m.content) for m in out["messages"]]

    ref = differential(scenario)
    assert ref[-1] == ("AIMessage", "bob here")


def test_swarm_streams_tokens_and_namespaces_of_the_active_agents(differential):
    """`stream_mode=["messages", "updates", "values"]` with subgraphs on a swarm: every
    token chunk carries the inner node and the agent's namespace."""
    def scenario(E):
        app, _, _ = _swarm(E, [_calls("a1", ("transfer_to_bob", {}, "t1"), content="Let me get Bob.")],
                           [_say("Arr, Bob at yer service.", "b1")], E.InMemorySaver())
        out = []
        for ns, mode, chunk in app.stream(_hi("Bob please"), _cfg(), subgraphs=True,
                                          stream_mode=["messages", "updates", "values"]):
            if mode == "messages":
                msg, meta = chunk
                chunk = (msg.content, msg.id, meta["langgraph_node"], meta["langgraph_step"],
                         meta["langgraph_checkpoint_ns"], meta.get("checkpoint_ns"), meta.get("tags"))
            out.append((ns, mode, chunk))
        return out, app.get_state(_cfg()).values["active_agent"]

    ref = differential(scenario)
    assert ref[1] == "Bob"


def test_swarm_started_at_a_given_agent_and_with_a_state_update(differential):
    """A user picks the first agent through the `active_agent` input, then moves the thread
    to Alice with `update_state`: each turn starts at the agent the state names."""
    def scenario(E):
        app, _, bob_model = _swarm(E, [_say("Alice: hello again.", "a1")],
                                   [_say("Bob first.", "b1")], E.InMemorySaver())
        first = app.invoke({**_hi("hello"), "active_agent": "Bob"}, _cfg())
        app.update_state(_cfg(), {"active_agent": "Alice"})
        second = app.invoke(_hi("again", "h2"), _cfg())
        return first, second, _history(app, _cfg()), len(bob_model.seen)

    differential(scenario)


def test_a_mock_added_as_a_node_runs_and_is_no_subgraph(differential):
    """Tests of user graphs often add a `unittest.mock` object as a node. Looking for the
    graphs a node invokes must not follow a mock's made-up attributes (each one a new mock:
    the search never ended and ate memory, found by LangGraph's own suite)."""
    from typing import TypedDict
    from unittest.mock import MagicMock

    class S(TypedDict):
        n: int

    def scenario(E):
        node = MagicMock(return_value={"n": 1})
        b = E.StateGraph(S)
        b.add_node("mocked", node)
        b.add_edge(E.START, "mocked")
        app = b.compile()
        return app.invoke({"n": 0}), node.call_count, list(app.get_subgraphs())

    assert differential(scenario) == ({"n": 1}, 1, [])

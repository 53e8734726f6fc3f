"""Multi-agent programs written with LangGraph's own documentation patterns, run on both engines.

Each worker agent is a compiled `StateGraph` subgraph with its own model loop (a scripted
chat model, `langgraph.prebuilt.ToolNode` and `tools_condition`). On top of those: a
supervisor routing between workers, handoff tools returning `Command(goto=...,
graph=Command.PARENT, update=...)` from inside a worker's tool node (with the `ToolMessage`
bookkeeping of LangGraph's docs), a swarm that routes each new turn to the last active agent
on one checkpointed thread, agents sharing `messages` vs agents with private keys and
input/output schemas, a network bounded by the recursion limit, hierarchical teams,
`interrupt()` in a worker's tool resumed from the top, parallel workers through `Send`,
streams with `subgraphs=True` and retry policies on worker nodes.

The observables are compared raw where possible (the harness normalizes ids, timestamps and
namespaces), so stream chunks, metadata, snapshots and histories must match LangGraph's.
Where LangGraph runs sync parallel tasks in a thread pool, its stream is in completion
order: those scenarios compare per-step multisets (`steps_as_multisets`) and say so.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import operator
from typing import Annotated

from _diff import acollect, capture, collect, snapshot_summary, steps_as_multisets

# --- scripted chat model -------------------------------------------------------------------
from _scripted import Scripted  # noqa: E402 - shared with the tutorials suite
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.prebuilt import InjectedState, ToolNode, tools_condition
from typing_extensions import NotRequired, TypedDict


def _model(*replies):
    return Scripted(script=iter(list(replies)), seen=[])


def _say(text, mid):
    return AIMessage(text, id=mid)


def _calls(mid, *calls, content=""):
    """An AI message with tool calls: each call is (name, args, call_id)."""
    return AIMessage(content, id=mid, tool_calls=[
        {"name": n, "args": a, "id": cid, "type": "tool_call"} for n, a, cid in calls])


def _cfg(tid="t", **extra):
    return {"configurable": {"thread_id": tid}, **extra}


def _hi(text="hi", mid="h1"):
    return {"messages": [HumanMessage(text, id=mid)]}


def _msgs(values, key="messages"):
    return [(m.type, m.content, getattr(m, "name", None), getattr(m, "tool_call_id", None),
             [c["name"] for c in getattr(m, "tool_calls", None) or []]) for m in values[key]]


def _snap(s):
    return snapshot_summary(s, errors=True)


# --- agents and handoff tools, as LangGraph's multi-agent docs write them -----------------------


def _agent(E, model, tools, *, state=None, name=None, checkpointer=None):
    """model -> (tools -> model)* : a worker agent as a compiled StateGraph."""
    State = state or E.MessagesState

    def call_model(s):
        return {"messages": [model.invoke(s["messages"])]}

    g = E.StateGraph(State)
    g.add_node("model", call_model)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(E.START, "model")
    g.add_conditional_edges("model", tools_condition, ["tools", E.END])
    g.add_edge("tools", "model")
    return g.compile(name=name, checkpointer=checkpointer)


def _handoff(E, agent_name, **extra_update):
    """LangGraph docs' handoff tool: the calling agent's messages plus the ToolMessage
    answering the call go to the parent, which then runs `agent_name`."""
    name = f"transfer_to_{agent_name}"

    @tool(name, description=f"Transfer the conversation to {agent_name}.")
    def handoff(state: Annotated[dict, InjectedState],
                tool_call_id: Annotated[str, InjectedToolCallId]):
        tool_message = {"role": "tool", "content": f"Successfully transferred to {agent_name}",
                        "name": name, "tool_call_id": tool_call_id}
        return E.Command(goto=agent_name, graph=E.Command.PARENT,
                         update={"messages": state["messages"] + [tool_message], **extra_update})

    return handoff


def _handoff_with_task(E, agent_name):
    """LangGraph docs' handoff with a task description: the worker gets only the task,
    through a `Send` in the parent."""
    name = f"assign_to_{agent_name}"

    @tool(name, description=f"Assign a task to {agent_name}.")
    def assign(task: str, tool_call_id: Annotated[str, InjectedToolCallId]):
        return E.Command(goto=[E.Send(agent_name, {"messages": [HumanMessage(task, id=f"task-{tool_call_id}")]})],
                         graph=E.Command.PARENT)

    return assign


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def _updates(E, app, inp, cfg=None, **kw):
    return collect(lambda: app.stream(inp, cfg, stream_mode="updates", subgraphs=True, **kw))


def _history(app, cfg):
    return [(s.next, s.metadata.get("step"), s.metadata.get("source"),
             len(s.values.get("messages", [])), [t.name for t in s.tasks])
            for s in app.get_state_history(cfg)]


# --- a supervisor routing between worker subgraphs ------------------------------------------------


def _supervised(E, *, checkpointer=None, sup_replies=None, research=None, math=None):
    class S(E.MessagesState):
        next: str

    supervisor_model = _model(*(sup_replies or [_say("researcher", "s1"), _say("mathematician", "s2"),
                                                _say("FINISH", "s3")]))
    researcher = _agent(E, research or _model(_calls("r1", ("lookup", {"topic": "pi"}, "c-r1")),
                                              _say("pi is about 3.14", "r2")), [lookup],
                        name="researcher")
    mathematician = _agent(E, math or _model(_calls("m1", ("add", {"a": 3, "b": 4}, "c-m1")),
                                             _say("3 + 4 = 7", "m2")), [add], name="mathematician")

    def supervisor(s):
        choice = supervisor_model.invoke(s["messages"]).content
        goto = E.END if choice == "FINISH" else choice
        return E.Command(goto=goto, update={"next": choice})

    g = E.StateGraph(S)
    g.add_node("supervisor", supervisor, destinations=("researcher", "mathematician", E.END))
    g.add_node("researcher", researcher)
    g.add_node("mathematician", mathematician)
    g.add_edge(E.START, "supervisor")
    g.add_edge("researcher", "supervisor")
    g.add_edge("mathematician", "supervisor")
    return g.compile(checkpointer=checkpointer), supervisor_model


def test_supervisor_routes_to_worker_subgraphs_until_it_says_finish(differential):
    """A supervisor node picks the next worker with `Command(goto=...)`; each worker runs its
    own model/tool loop as a subgraph and reports back by an edge."""
    def scenario(E):
        app, sup = _supervised(E)
        chunks = _updates(E, app, _hi("what is pi, and 3 + 4?"))
        app2, _ = _supervised(E)
        out = app2.invoke(_hi("what is pi, and 3 + 4?"))
        return chunks, _msgs(out), out["next"], sup.seen

    differential(scenario)


def test_supervisor_run_history_lists_every_parent_step_and_the_workers_writes(differential):
    """`get_state_history` of a supervised run: one checkpoint per parent super-step, with
    the values each worker returned through its subgraph node."""
    def scenario(E):
        app, _ = _supervised(E, checkpointer=E.InMemorySaver())
        app.invoke(_hi("question"), _cfg())
        return list(app.get_state_history(_cfg()))

    differential(scenario)


def test_supervisor_agent_delegates_with_handoff_tools_and_workers_report_back(differential):
    """The supervisor is itself an agent subgraph whose tools are handoffs
    (`Command.PARENT`); workers come back to it by an edge, until it answers."""
    def scenario(E):
        sup_model = _model(
            _calls("s1", ("transfer_to_researcher", {}, "c-s1")),
            _calls("s2", ("transfer_to_mathematician", {}, "c-s2")),
            _say("pi is 3.14 and 3 + 4 = 7", "s3"))
        supervisor = _agent(E, sup_model, [_handoff(E, "researcher"), _handoff(E, "mathematician")],
                            name="supervisor")
        researcher = _agent(E, _model(_say("pi is 3.14", "r1")), [lookup], name="researcher")
        mathematician = _agent(E, _model(_calls("m1", ("add", {"a": 3, "b": 4}, "c-m1")),
                                         _say("7", "m2")), [add], name="mathematician")
        g = E.StateGraph(E.MessagesState)
        g.add_node("supervisor", supervisor, destinations=("researcher", "mathematician"))
        g.add_node("researcher", researcher)
        g.add_node("mathematician", mathematician)
        g.add_edge(E.START, "supervisor")
        g.add_edge("researcher", "supervisor")
        g.add_edge("mathematician", "supervisor")
        app = g.compile(checkpointer=E.InMemorySaver())
        chunks = _updates(E, app, _hi("pi and 3+4?"), _cfg())
        return chunks, _msgs(app.get_state(_cfg()).values), _history(app, _cfg()), sup_model.seen

    differential(scenario)


# --- handoffs from a worker's tool node --------------------------------------------------------


def _pair(E, alice_model, bob_model, *, alice_tools=(), checkpointer=None):
    """Two agents that can hand the conversation to each other; Alice starts."""
    alice = _agent(E, alice_model, [*alice_tools, _handoff(E, "bob")], name="alice")
    bob = _agent(E, bob_model, [_handoff(E, "alice")], name="bob")
    g = E.StateGraph(E.MessagesState)
    g.add_node("alice", alice, destinations=("bob", E.END))
    g.add_node("bob", bob, destinations=("alice", E.END))
    g.add_edge(E.START, "alice")
    return g.compile(checkpointer=checkpointer)


def test_handoff_tool_hands_the_conversation_with_its_tool_message_to_the_other_agent(differential):
    """Alice's tool node returns `Command(goto="bob", graph=PARENT)`: the parent appends her
    call and the ToolMessage answering it, then runs Bob, who sees both."""
    def scenario(E):
        bob_model = _model(_say("bob here", "b1"))
        app = _pair(E, _model(_calls("a1", ("transfer_to_bob", {}, "c-a1"))), bob_model)
        chunks = _updates(E, app, _hi())
        return chunks, bob_model.seen

    differential(scenario)


def test_handoff_alongside_a_regular_tool_call_in_the_same_message(differential):
    """The model calls a regular tool and the handoff at once: ToolNode runs both, but the
    handoff ends the worker's tools step, so the parent gets the handoff's messages only
    (the regular tool's result is lost, as in LangGraph) and runs Bob."""
    def scenario(E):
        bob_model = _model(_say("bob done", "b1"))
        app = _pair(E, _model(_calls("a1", ("add", {"a": 1, "b": 2}, "c-add"),
                                     ("transfer_to_bob", {}, "c-hand"))), bob_model,
                    alice_tools=[add], checkpointer=E.InMemorySaver())
        chunks = _updates(E, app, _hi(), _cfg())
        return chunks, _msgs(app.get_state(_cfg()).values), bob_model.seen, _history(app, _cfg())

    differential(scenario)


def test_handoff_with_a_task_description_sends_only_the_task_to_the_worker(differential):
    """The docs' handoff with a task description: `Command(graph=PARENT, goto=[Send(...)])`
    runs the worker on the task alone; its reply is appended to the parent's messages."""
    def scenario(E):
        worker_model = _model(_say("task done", "w1"))
        sup_model = _model(_calls("s1", ("assign_to_worker", {"task": "sum 2 and 2"}, "c-s1")),
                           _say("all done", "s2"))
        supervisor = _agent(E, sup_model, [_handoff_with_task(E, "worker")], name="supervisor")
        worker = _agent(E, worker_model, [add], name="worker")
        g = E.StateGraph(E.MessagesState)
        g.add_node("supervisor", supervisor, destinations=("worker",))
        g.add_node("worker", worker)
        g.add_edge(E.START, "supervisor")
        g.add_edge("worker", E.END)
        app = g.compile()
        chunks = _updates(E, app, _hi("please sum"))
        return chunks, worker_model.seen

    differential(scenario)


def test_two_task_handoffs_in_one_message_run_both_workers_in_one_step(differential):
    """ToolNode merges the two parent `Send` handoffs into one parent command: both workers
    run in the same parent step and both replies reach the shared messages. (Sync
    branches run in a thread pool: the stream is compared per step as multisets.)"""
    def scenario(E):
        def worker_model(tag):
            return Scripted(script=lambda ms: AIMessage(f"{tag}: {ms[-1].content}", id=f"{tag}-reply"), seen=[])

        sup_model = _model(_calls("s1", ("assign_to_alpha", {"task": "part one"}, "c-1"),
                                  ("assign_to_beta", {"task": "part two"}, "c-2")))
        supervisor = _agent(E, sup_model, [_handoff_with_task(E, "alpha"), _handoff_with_task(E, "beta")])
        g = E.StateGraph(E.MessagesState)
        g.add_node("supervisor", supervisor, destinations=("alpha", "beta"))
        g.add_node("alpha", _agent(E, worker_model("alpha"), [add]))
        g.add_node("beta", _agent(E, worker_model("beta"), [add]))
        g.add_edge(E.START, "supervisor")
        app = g.compile(checkpointer=E.InMemorySaver())
        chunks = collect(lambda: app.stream(_hi("split it"), _cfg(), stream_mode=["updates", "tasks"],
                                            subgraphs=True))
        steps = steps_as_multisets(chunks, lambda c: c[1] == "tasks" and c[0] == () and "result" not in c[2])
        return steps, _msgs(app.get_state(_cfg()).values), _history(app, _cfg())

    differential(scenario)


def test_agent_with_handoff_tools_run_on_its_own_raises_parent_command(differential):
    """Testing one agent alone: its handoff's `Command.PARENT` has no parent graph to go to,
    and the run fails with LangGraph's `ParentCommand` naming the command; in the pair the
    same agent hands off."""
    def scenario(E):
        alice = _agent(E, _model(_calls("a1", ("transfer_to_bob", {}, "c-a1"))), [_handoff(E, "bob")])
        return capture(lambda: alice.invoke(_hi())), capture(lambda: _pair(
            E, _model(_calls("a1", ("transfer_to_bob", {}, "c-a1"))), _model(_say("b", "b1"))).invoke(_hi()))

    differential(scenario)


# --- a swarm: the next turn goes to the last active agent --------------------------------------


def _swarm(E, alice_model, bob_model, *, sub_checkpointer=None):
    class Swarm(E.MessagesState):
        active_agent: NotRequired[str]

    def route(s):
        return s.get("active_agent", "alice")

    alice = _agent(E, alice_model, [add, _handoff(E, "bob", active_agent="bob")], name="alice",
                   checkpointer=sub_checkpointer)
    bob = _agent(E, bob_model, [lookup, _handoff(E, "alice", active_agent="alice")], name="bob",
                 checkpointer=sub_checkpointer)
    g = E.StateGraph(Swarm)
    g.add_node("alice", alice, destinations=("bob", E.END))
    g.add_node("bob", bob, destinations=("alice", E.END))
    g.add_conditional_edges(E.START, route, ["alice", "bob"])
    return g.compile(checkpointer=E.InMemorySaver())


def _swarm_models():
    alice = _model(_calls("a1", ("transfer_to_bob", {}, "c-a1")),
                   _say("alice again", "a2"))
    bob = _model(_say("bob answers turn one", "b1"),
                 _calls("b2", ("lookup", {"topic": "owls"}, "c-b2")),
                 _say("owls are birds", "b3"),
                 _calls("b4", ("transfer_to_alice", {}, "c-b4")))
    return alice, bob


def test_swarm_routes_each_new_turn_to_the_last_active_agent(differential):
    """A swarm thread: turn one hands off to Bob, turn two starts at Bob (the
    `active_agent` saved by the handoff), turn three hands back to Alice."""
    def scenario(E):
        alice, bob = _swarm_models()
        app = _swarm(E, alice, bob)
        turns = []
        for i, text in enumerate(["hello", "tell me about owls", "back to alice"]):
            out = app.invoke({"messages": [HumanMessage(text, id=f"u{i}")]}, _cfg())
            turns.append((out.get("active_agent"), _msgs(out)[-3:]))
        return turns, alice.seen, bob.seen

    differential(scenario)


def test_swarm_thread_state_and_history_after_several_turns(differential):
    """After three swarm turns, `get_state` and `get_state_history` of the thread: the
    `active_agent`, the messages and one checkpoint per parent step of every turn."""
    def scenario(E):
        app = _swarm(E, *_swarm_models())
        for i, text in enumerate(["hello", "owls?", "back"]):
            app.invoke({"messages": [HumanMessage(text, id=f"u{i}")]}, _cfg())
        return app.get_state(_cfg()), list(app.get_state_history(_cfg()))

    differential(scenario)


def test_swarm_turn_streams_updates_and_tokens_with_namespaces_and_metadata(differential):
    """A swarm turn streamed with `stream_mode=["updates", "messages"]` and
    `subgraphs=True`: every chunk, its namespace and the token metadata
    (`langgraph_node`, `checkpoint_ns`, ...) match LangGraph's."""
    def scenario(E):
        app = _swarm(E, *_swarm_models())
        first = collect(lambda: app.stream({"messages": [HumanMessage("hello", id="u0")]}, _cfg(),
                                           stream_mode=["updates", "messages"], subgraphs=True))
        second = collect(lambda: app.stream({"messages": [HumanMessage("owls?", id="u1")]}, _cfg(),
                                            stream_mode=["updates", "messages"], subgraphs=True))
        return first, second

    differential(scenario)


def test_swarm_with_checkpointer_true_agents_keeps_their_own_threads(differential):
    """Swarm agents compiled with `checkpointer=True` keep their own state per thread
    across turns; the parent reaches it with `get_state` on the agent's namespace."""
    def scenario(E):
        alice, bob = _swarm_models()
        app = _swarm(E, alice, bob, sub_checkpointer=True)
        outs = [_msgs(app.invoke({"messages": [HumanMessage(t, id=f"u{i}")]}, _cfg()))
                for i, t in enumerate(["hello", "owls?", "back"])]
        inner = {ns: capture(lambda ns=ns: _snap(app.get_state(
            {"configurable": {"thread_id": "t", "checkpoint_ns": ns}}))) for ns in ("alice", "bob")}
        return outs, inner, bob.seen

    differential(scenario)


def test_swarm_async_turns_stream_the_same_chunks(differential):
    """The swarm run with `astream` over two turns: same chunks as LangGraph's."""
    async def scenario(E):
        app = _swarm(E, *_swarm_models())
        out = []
        for i, text in enumerate(["hello", "owls?"]):
            out.append(await acollect(lambda text=text, i=i: app.astream(
                {"messages": [HumanMessage(text, id=f"u{i}")]}, _cfg(),
                stream_mode=["updates", "messages"], subgraphs=True)))
        return out

    differential(scenario)


# --- shared messages vs private keys and input/output schemas -----------------------------------


def test_agents_sharing_messages_see_each_others_turns(differential):
    """Agents on the shared `messages` key: the second agent's model is sent the first
    agent's whole exchange (its calls, tool results and answer)."""
    def scenario(E):
        first_model = _model(_calls("f1", ("add", {"a": 2, "b": 2}, "c-f1")), _say("four", "f2"))
        second_model = _model(_say("I saw four", "s1"))
        g = E.StateGraph(E.MessagesState)
        g.add_node("first", _agent(E, first_model, [add]))
        g.add_node("second", _agent(E, second_model, [add]))
        g.add_edge(E.START, "first")
        g.add_edge("first", "second")
        app = g.compile()
        return _msgs(app.invoke(_hi())), second_model.seen

    differential(scenario)


def test_worker_with_private_messages_and_input_output_schemas(differential):
    """A worker with its own `scratch` message key and input/output schemas: the parent
    passes `task`, gets only `result` back; the private scratch stays in the worker and
    shows only in the subgraph's stream."""
    def scenario(E):
        class WorkerIn(TypedDict):
            task: str

        class WorkerOut(TypedDict):
            result: str

        class WorkerState(WorkerIn, WorkerOut):
            scratch: Annotated[list, E.add_messages]

        model = _model(_calls("w1", ("add", {"a": 20, "b": 22}, "c-w1")), _say("42", "w2"))

        def start(s):
            return {"scratch": [HumanMessage(s["task"], id="task")]}

        def think(s):
            return {"scratch": [model.invoke(s["scratch"])]}

        def finish(s):
            return {"result": s["scratch"][-1].content}

        w = E.StateGraph(WorkerState, input_schema=WorkerIn, output_schema=WorkerOut)
        w.add_node("start", start)
        w.add_node("think", think)
        w.add_node("tools", ToolNode([add], messages_key="scratch"))
        w.add_node("finish", finish)
        w.add_edge(E.START, "start")
        w.add_edge("start", "think")
        w.add_conditional_edges("think", lambda s: "tools" if s["scratch"][-1].tool_calls else "finish",
                                ["tools", "finish"])
        w.add_edge("tools", "think")

        class Parent(E.MessagesState):
            task: str
            result: str

        def plan(s):
            return {"task": f"solve: {s['messages'][-1].content}"}

        def report(s):
            return {"messages": [AIMessage(f"result {s['result']}", id="rep")]}

        g = E.StateGraph(Parent)
        g.add_node("plan", plan)
        g.add_node("worker", w.compile())
        g.add_node("report", report)
        g.add_edge(E.START, "plan")
        g.add_edge("plan", "worker")
        g.add_edge("worker", "report")
        app = g.compile(checkpointer=E.InMemorySaver())
        chunks = _updates(E, app, _hi("20 + 22"), _cfg())
        return chunks, app.get_state(_cfg()).values, model.seen

    differential(scenario)


def test_agent_called_inside_a_node_function_returns_only_its_last_message(differential):
    """The docs' wrapper node: it invokes the agent with a fresh conversation and returns only
    its final answer to the shared messages; the agent's steps stream under the wrapper's
    namespace."""
    def scenario(E):
        agent = _agent(E, _model(_calls("r1", ("lookup", {"topic": "tea"}, "c-r1")),
                                 _say("tea is a drink", "r2")), [lookup], name="researcher")

        def call_researcher(s):
            question = s["messages"][-1].content
            out = agent.invoke({"messages": [HumanMessage(question, id="inner-q")]})
            return {"messages": [AIMessage(out["messages"][-1].content, id="answer", name="researcher")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("call_researcher", call_researcher)
        g.add_edge(E.START, "call_researcher")
        app = g.compile(checkpointer=E.InMemorySaver())
        chunks = collect(lambda: app.stream(_hi("what is tea?"), _cfg(), stream_mode=["updates", "messages"],
                                            subgraphs=True))
        return chunks, list(app.get_state_history(_cfg()))

    differential(scenario)


def _wrapped_researcher(E, *, inner_stream=None, is_async=False):
    """A parent whose node runs the researcher agent (a tool call, then an answer)."""
    agent = _agent(E, _model(_calls("r1", ("lookup", {"topic": "tea"}, "c-r1")),
                             _say("tea is a drink", "r2")), [lookup], name="researcher")
    inp = {"messages": [HumanMessage("what is tea?", id="inner-q")]}

    def call_researcher(s):
        if inner_stream is not None:  # the node streams the agent itself (to a UI, say)
            for ns, (msg, md) in agent.stream(inp, stream_mode="messages", subgraphs=True):
                inner_stream.append((ns, msg.type, msg.content, md["langgraph_node"]))
            return {"messages": [AIMessage("streamed", id="answer")]}
        out = agent.invoke(inp)
        return {"messages": [AIMessage(out["messages"][-1].content, id="answer")]}

    async def acall_researcher(s):
        out = await agent.ainvoke(inp)
        return {"messages": [AIMessage(out["messages"][-1].content, id="answer")]}

    g = E.StateGraph(E.MessagesState)
    g.add_node("call_researcher", acall_researcher if is_async else call_researcher)
    g.add_edge(E.START, "call_researcher")
    return g.compile()


def test_agent_called_inside_a_node_streamed_without_subgraphs_shows_the_wrappers_answer(differential):
    """Without `subgraphs=True` the caller's `messages` stream carries only its own graph's
    messages: the wrapper's answer, none of the agent's tokens or tool results."""
    def scenario(E):
        app = _wrapped_researcher(E)
        return collect(lambda: app.stream(_hi(), stream_mode="messages"))

    differential(scenario)


def test_node_streaming_its_agent_and_the_outer_subgraphs_stream_both_get_tool_results(differential):
    """A node streams its agent's `messages` itself while the caller streams with
    `subgraphs=True`: both streams get the tokens and the tool's ToolMessage."""
    def scenario(E):
        inner = []
        app = _wrapped_researcher(E, inner_stream=inner)
        outer = collect(lambda: app.stream(_hi(), stream_mode="messages", subgraphs=True))
        return outer, inner

    differential(scenario)


def test_agent_awaited_inside_an_async_node_streams_its_tool_results(differential):
    """`await agent.ainvoke(...)` in an async node, the caller on `astream` with
    `["updates", "messages"]` and `subgraphs=True`: the agent's tokens, tool results and
    updates under the node's namespace."""
    async def scenario(E):
        app = _wrapped_researcher(E, is_async=True)
        return await acollect(lambda: app.astream(_hi(), stream_mode=["updates", "messages"], subgraphs=True))

    differential(scenario)


def test_handoff_from_an_agent_with_private_keys_updates_only_parent_keys(differential):
    """A worker with a private `notes` key hands off with an update of the shared messages
    and the parent's `handoffs` counter; its private key never reaches the parent."""
    def scenario(E):
        class Worker(E.MessagesState):
            notes: Annotated[list, operator.add]

        class Parent(E.MessagesState):
            handoffs: Annotated[int, operator.add]

        def note_then_model(model):
            def f(s):
                return {"notes": [f"saw {len(s['messages'])}"], "messages": [model.invoke(s["messages"])]}
            return f

        def worker(model, peer):
            g = E.StateGraph(Worker)
            g.add_node("model", note_then_model(model))
            g.add_node("tools", ToolNode([_handoff(E, peer, handoffs=1)]))
            g.add_edge(E.START, "model")
            g.add_conditional_edges("model", tools_condition, ["tools", E.END])
            g.add_edge("tools", "model")
            return g.compile()

        g = E.StateGraph(Parent)
        g.add_node("alice", worker(_model(_calls("a1", ("transfer_to_bob", {}, "c-a1"))), "bob"),
                   destinations=("bob",))
        g.add_node("bob", worker(_model(_say("bob", "b1")), "alice"), destinations=("alice",))
        g.add_edge(E.START, "alice")
        app = g.compile(checkpointer=E.InMemorySaver())
        chunks = _updates(E, app, {**_hi(), "handoffs": 0}, _cfg())
        return chunks, app.get_state(_cfg()).values

    differential(scenario)


# --- a network of agents and the recursion limit ------------------------------------------------


def _network(E, models, *, checkpointer=None):
    """Three agents, each with handoffs to both others."""
    names = list(models)
    g = E.StateGraph(E.MessagesState)
    for name in names:
        peers = [p for p in names if p != name]
        g.add_node(name, _agent(E, models[name], [_handoff(E, p) for p in peers], name=name),
                   destinations=tuple(peers))
    g.add_edge(E.START, names[0])
    return g.compile(checkpointer=checkpointer)


def test_network_agents_hand_off_freely_until_one_answers(differential):
    """A network: travel -> hotel -> flight -> travel, who answers; the conversation holds
    every handoff pair in order."""
    def scenario(E):
        app = _network(E, {
            "travel": _model(_calls("t1", ("transfer_to_hotel", {}, "c-t1")), _say("all booked", "t2")),
            "hotel": _model(_calls("h1", ("transfer_to_flight", {}, "c-h1"))),
            "flight": _model(_calls("f1", ("transfer_to_travel", {}, "c-f1"))),
        }, checkpointer=E.InMemorySaver())
        chunks = _updates(E, app, _hi("book a trip"), _cfg())
        return chunks, _msgs(app.get_state(_cfg()).values), _history(app, _cfg())

    differential(scenario)


def _ping_pong(n=50):
    def ping(peer):
        return Scripted(script=lambda ms: AIMessage(
            "", id=f"{peer}-{len(ms)}",
            tool_calls=[{"name": f"transfer_to_{peer}", "args": {}, "id": f"c-{peer}-{len(ms)}",
                         "type": "tool_call"}]), seen=[])
    return {"a": ping("b"), "b": ping("a")}


def test_network_that_never_answers_hits_the_recursion_limit(differential):
    """Two agents handing off forever stop at the recursion limit with LangGraph's
    `GraphRecursionError`; the thread keeps the last completed step."""
    def scenario(E):
        app = _network(E, _ping_pong(), checkpointer=E.InMemorySaver())
        err = capture(lambda: app.invoke(_hi(), _cfg(recursion_limit=6)))
        st = app.get_state(_cfg())
        return err, st.next, st.metadata["step"], len(st.values["messages"]), len(list(app.get_state_history(_cfg())))

    differential(scenario)


def test_network_recursion_limit_then_continue_the_thread_with_a_higher_limit(differential):
    """After the limit, `invoke(None)` with a higher `recursion_limit` continues the thread
    from its last checkpoint, and stops again at the new limit."""
    def scenario(E):
        app = _network(E, _ping_pong(), checkpointer=E.InMemorySaver())
        first = capture(lambda: app.invoke(_hi(), _cfg(recursion_limit=4)))
        second = capture(lambda: app.invoke(None, _cfg(recursion_limit=7)))
        st = app.get_state(_cfg())
        return first, second, st.next, st.metadata["step"], _msgs(st.values)

    differential(scenario)


def test_recursion_limit_streamed_stops_after_the_same_chunks(differential):
    """Streamed with `subgraphs=True`, the ping-pong network yields the same chunks before
    the `GraphRecursionError` as LangGraph."""
    def scenario(E):
        app = _network(E, _ping_pong())
        return _updates(E, app, _hi(), {"recursion_limit": 5})

    differential(scenario)


# --- hierarchical teams ---------------------------------------------------------------------


def _team(E, name, worker_models, sup_script):
    """A team: its supervisor routes between its workers (agent subgraphs) and ends the team."""
    sup_model = _model(*sup_script)

    def supervisor(s):
        choice = sup_model.invoke(s["messages"]).content
        return E.Command(goto=E.END if choice == "done" else choice)

    g = E.StateGraph(E.MessagesState)
    g.add_node("supervisor", supervisor, destinations=(*worker_models, E.END))
    for w, model in worker_models.items():
        g.add_node(w, _agent(E, model, [add, lookup], name=w))
        g.add_edge(w, "supervisor")
    g.add_edge(E.START, "supervisor")
    return g.compile(name=name)


def _top(E, teams, script, *, checkpointer=None):
    top_model = _model(*script)

    def top(s):
        choice = top_model.invoke(s["messages"]).content
        return E.Command(goto=E.END if choice == "done" else choice)

    g = E.StateGraph(E.MessagesState)
    g.add_node("top", top, destinations=(*teams, E.END))
    for name, team in teams.items():
        g.add_node(name, team)
        g.add_edge(name, "top")
    g.add_edge(E.START, "top")
    return g.compile(checkpointer=checkpointer)


def test_hierarchical_teams_route_through_two_levels_of_supervisors(differential):
    """Hierarchical teams: a top supervisor picks a team; each team's supervisor routes
    between its agents; the stream shows three levels of namespaces."""
    def scenario(E):
        research = _team(E, "research_team", {
            "searcher": _model(_calls("se1", ("lookup", {"topic": "moon"}, "c-se1")), _say("moon facts", "se2")),
            "writer": _model(_say("a moon essay", "wr1")),
        }, [_say("searcher", "rs1"), _say("writer", "rs2"), _say("done", "rs3")])
        maths = _team(E, "math_team", {
            "adder": _model(_calls("ad1", ("add", {"a": 1, "b": 1}, "c-ad1")), _say("2", "ad2")),
        }, [_say("adder", "ms1"), _say("done", "ms2")])
        app = _top(E, {"research_team": research, "math_team": maths},
                   [_say("research_team", "t1"), _say("math_team", "t2"), _say("done", "t3")],
                   checkpointer=E.InMemorySaver())
        chunks = _updates(E, app, _hi("essay and sum"), _cfg())
        return chunks, _msgs(app.get_state(_cfg()).values), _history(app, _cfg())

    differential(scenario)


def test_handoff_from_a_team_worker_reaches_only_its_team_graph(differential):
    """`Command.PARENT` from a worker's tool goes one level up, to its team graph: a handoff
    there to a node that exists only in the top graph goes nowhere in the team, as in
    LangGraph, and the team ends."""
    def build(E):
        searcher = _agent(E, _model(_calls("se1", ("transfer_to_math_team", {}, "c-se1")),
                                    _say("searcher done", "se2")),
                          [_handoff(E, "math_team")], name="searcher")
        sup_model = _model(_say("searcher", "rs1"), _say("done", "rs2"))

        def supervisor(s):
            choice = sup_model.invoke(s["messages"]).content
            return E.Command(goto=E.END if choice == "done" else choice)

        t = E.StateGraph(E.MessagesState)
        t.add_node("supervisor", supervisor, destinations=("searcher", E.END))
        t.add_node("searcher", searcher)
        t.add_edge("searcher", "supervisor")
        t.add_edge(E.START, "supervisor")
        maths = _team(E, "math_team", {"adder": _model(_say("2", "ad1"))},
                      [_say("adder", "ms1"), _say("done", "ms2")])
        return _top(E, {"research_team": t.compile(), "math_team": maths},
                    [_say("research_team", "t1"), _say("done", "t2")])

    def scenario(E):
        return _updates(E, build(E), _hi("sum")), capture(lambda: _msgs(build(E).invoke(_hi("sum"))))

    differential(scenario)


def test_handoff_two_levels_up_by_re_issuing_command_parent_from_the_team(differential):
    """To reach the top graph, the team hands the worker's handoff on: the worker goes to
    the team's `escalate` node, which returns `Command(graph=PARENT)` to the other team."""
    def scenario(E):
        def escalate(s):
            return E.Command(graph=E.Command.PARENT, goto="math_team",
                             update={"messages": [AIMessage("escalating to maths", id="esc")]})

        searcher = _agent(E, _model(_calls("se1", ("transfer_to_escalate", {}, "c-se1"))),
                          [_handoff(E, "escalate")], name="searcher")
        t = E.StateGraph(E.MessagesState)
        t.add_node("searcher", searcher, destinations=("escalate",))
        t.add_node("escalate", escalate)  # (`destinations` name nodes of this graph only)
        t.add_edge(E.START, "searcher")
        maths = _team(E, "math_team", {"adder": _model(_calls("ad1", ("add", {"a": 2, "b": 3}, "c-ad1")),
                                                       _say("5", "ad2"))},
                      [_say("adder", "ms1"), _say("done", "ms2")])
        top_model = _model(_say("research_team", "t1"), _say("done", "t2"))

        def top(s):
            choice = top_model.invoke(s["messages"]).content
            return E.Command(goto=E.END if choice == "done" else choice)

        g = E.StateGraph(E.MessagesState)
        g.add_node("top", top, destinations=("research_team", "math_team", E.END))
        # the research team ends only by escalating: no edge back to `top`
        g.add_node("research_team", t.compile(), destinations=("math_team",))
        g.add_node("math_team", maths)
        g.add_edge("math_team", "top")
        g.add_edge(E.START, "top")
        app = g.compile(checkpointer=E.InMemorySaver())
        chunks = _updates(E, app, _hi("sum"), _cfg())
        return chunks, _msgs(app.get_state(_cfg()).values), _history(app, _cfg())

    differential(scenario)


# --- interrupt() in a worker's tool ---------------------------------------------------------------


def _booking(E, *, then_handoff=False):
    @tool
    def book_hotel(hotel: str) -> str:
        """Book a hotel after a human approves."""
        answer = E.interrupt({"question": f"book {hotel}?"})
        return f"booked {hotel}" if answer == "yes" else f"not booked: {answer}"

    @tool
    def book_and_hand_off(hotel: str, tool_call_id: Annotated[str, InjectedToolCallId]):
        """Book, then hand the conversation to the flight agent."""
        answer = E.interrupt({"question": f"book {hotel} and go on?"})
        return E.Command(graph=E.Command.PARENT, goto="flight", update={"messages": [
            ToolMessage(f"booked {hotel} ({answer}), over to flights", tool_call_id=tool_call_id,
                        id="tm-book")]})

    name = "book_and_hand_off" if then_handoff else "book_hotel"
    hotel = _agent(E, _model(_calls("h1", (name, {"hotel": "Ritz"}, "c-h1")), _say("hotel settled", "h2")),
                   [book_hotel, book_and_hand_off], name="hotel")
    flight = _agent(E, _model(_say("flight booked", "f1")), [add], name="flight")
    g = E.StateGraph(E.MessagesState)
    g.add_node("hotel", hotel, destinations=("flight",))
    g.add_node("flight", flight)
    g.add_edge(E.START, "hotel")
    return g.compile(checkpointer=E.InMemorySaver())


def test_worker_tool_interrupt_pauses_the_top_graph_and_resumes_from_the_top(differential):
    """`interrupt()` in a worker's tool pauses the whole run; `Command(resume=...)` on the
    top graph resumes the tool, which re-runs with the answer."""
    def scenario(E):
        app = _booking(E)
        first = _updates(E, app, _hi("book the Ritz"), _cfg())
        second = _updates(E, app, E.Command(resume="yes"), _cfg())
        return first, second, _msgs(app.get_state(_cfg()).values)

    differential(scenario)


def test_paused_worker_get_state_subgraphs_true_shows_the_worker_state(differential):
    """While paused, `get_state(subgraphs=True)` nests the worker's own snapshot (its next
    node `tools`, its messages, the interrupt) under the parent's task."""
    def scenario(E):
        app = _booking(E)
        app.invoke(_hi("book the Ritz"), _cfg())
        return app.get_state(_cfg(), subgraphs=True), app.get_state(_cfg())

    differential(scenario)


def test_paused_worker_state_and_history_through_the_task_config(differential):
    """The paused worker's thread is reachable through its task's config: its state and
    history, as LangGraph shows them."""
    def scenario(E):
        app = _booking(E)
        app.invoke(_hi("book the Ritz"), _cfg())
        sub_cfg = app.get_state(_cfg(), subgraphs=True).tasks[0].state.config
        return _snap(app.get_state(sub_cfg)), list(app.get_state_history(sub_cfg))

    differential(scenario)


def test_worker_tool_approves_then_hands_off_after_the_resume(differential):
    """A tool that asks a human and then hands off: after the resume the handoff's
    `Command.PARENT` routes the parent to the next agent."""
    def scenario(E):
        app = _booking(E, then_handoff=True)
        first = app.invoke(_hi("book"), _cfg())
        chunks = _updates(E, app, E.Command(resume="approved"), _cfg())
        return first, chunks, _msgs(app.get_state(_cfg()).values), _history(app, _cfg())

    differential(scenario)


def test_worker_tool_interrupt_streamed_with_messages_and_subgraphs(differential):
    """The pause and the resume streamed with `["updates", "messages"]` and
    `subgraphs=True`: the interrupt chunk and the resumed tool's ToolMessage."""
    def scenario(E):
        app = _booking(E)
        modes = ["updates", "messages"]
        first = collect(lambda: app.stream(_hi("book"), _cfg(), stream_mode=modes, subgraphs=True))
        second = collect(lambda: app.stream(E.Command(resume="no thanks"), _cfg(), stream_mode=modes,
                                            subgraphs=True))
        return first, second

    differential(scenario)


def test_interrupts_in_two_parallel_workers_are_resumed_together_by_id(differential):
    """Two workers sent in parallel both pause in a tool; one resume maps each interrupt
    id to its answer and both finish."""
    def scenario(E):
        @tool
        def confirm(item: str) -> str:
            """Confirm an item with a human."""
            return f"{item}: {E.interrupt({'confirm': item})}"

        def worker_model(ms):
            if ms[-1].type == "tool":
                return AIMessage(f"done {ms[-1].content}", id=f"done-{ms[0].content}")
            return AIMessage("", id=f"ask-{ms[0].content}", tool_calls=[
                {"name": "confirm", "args": {"item": ms[0].content}, "id": f"c-{ms[0].content}",
                 "type": "tool_call"}])

        worker = _agent(E, Scripted(script=worker_model, seen=[]), [confirm])

        class P(TypedDict):
            items: list
            messages: Annotated[list, E.add_messages]

        def fan_out(s):
            return [E.Send("worker", {"messages": [HumanMessage(i, id=f"item-{i}")]}) for i in s["items"]]

        g = E.StateGraph(P)
        g.add_node("worker", worker)
        g.add_conditional_edges(E.START, fan_out, ["worker"])
        app = g.compile(checkpointer=E.InMemorySaver())
        first = app.invoke({"items": ["tea", "cake"], "messages": []}, _cfg())
        pending = sorted((i.value["confirm"], i.id) for i in app.get_state(_cfg()).interrupts)
        answers = {iid: f"ok-{item}" for item, iid in pending}
        out = app.invoke(E.Command(resume=answers), _cfg())
        # the interrupts of parallel sync branches come in completion order: sorted
        return (sorted(i.value["confirm"] for i in first["__interrupt__"]), [p[0] for p in pending],
                _msgs(out), _history(app, _cfg()))

    differential(scenario)


# --- parallel workers through Send ------------------------------------------------------------------


def test_parallel_workers_via_send_each_run_a_subgraph_and_results_are_reduced(differential):
    """Map-reduce over worker agents: `Send` runs one worker subgraph per topic, each with
    its private state; their results are reduced into the parent's list. (Parallel sync
    branches stream in completion order: compared per step as multisets.)"""
    def scenario(E):
        class WorkerState(E.MessagesState):
            topic: str
            findings: Annotated[list, operator.add]

        def model_fn(ms):
            if ms[-1].type == "tool":
                return AIMessage(f"summary: {ms[-1].content}", id=f"sum-{ms[0].content}")
            return AIMessage("", id=f"call-{ms[0].content}", tool_calls=[
                {"name": "lookup", "args": {"topic": ms[0].content}, "id": f"c-{ms[0].content}",
                 "type": "tool_call"}])

        agent = _agent(E, Scripted(script=model_fn, seen=[]), [lookup])

        def research(s):
            out = agent.invoke({"messages": [HumanMessage(s["topic"], id=f"q-{s['topic']}")]})
            return {"findings": [out["messages"][-1].content]}

        w = E.StateGraph(WorkerState)
        w.add_node("research", research)
        w.add_edge(E.START, "research")

        class P(TypedDict):
            topics: list
            findings: Annotated[list, operator.add]
            report: str

        g = E.StateGraph(P)
        g.add_node("worker", w.compile())
        g.add_node("write", lambda s: {"report": " | ".join(s["findings"])})
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"topic": t}) for t in s["topics"]],
                                ["worker"])
        g.add_edge("worker", "write")
        app = g.compile(checkpointer=E.InMemorySaver())
        chunks = _updates(E, app, {"topics": ["owls", "bats", "moths"]}, _cfg())
        top = steps_as_multisets([c for c in chunks if c[0] == ()], lambda c: "worker" not in c[1])
        inner = sorted(repr(sorted(c[1])) for c in chunks if c[0] != ())
        return top, inner, app.get_state(_cfg()).values, _history(app, _cfg())

    differential(scenario)


def _fan_out_supervisor(E, goto):
    class P(TypedDict):
        messages: Annotated[list, E.add_messages]
        results: Annotated[list, operator.add]

    def worker_fn(s):
        return {"results": [f"{s['job']}!"], "messages": [AIMessage(f"did {s['job']}", id=f"did-{s['job']}")]}

    class W(TypedDict):
        job: str
        results: Annotated[list, operator.add]
        messages: Annotated[list, E.add_messages]

    w = E.StateGraph(W)
    w.add_node("work", worker_fn)
    w.add_edge(E.START, "work")

    def supervisor(s):
        return E.Command(goto=goto(E), update={"messages": [AIMessage("dispatching", id="disp")]})

    g = E.StateGraph(P)
    g.add_node("supervisor", supervisor, destinations=("worker", "summarize"))
    g.add_node("worker", w.compile())
    g.add_node("summarize", lambda s: {"messages": [AIMessage(f"results: {sorted(s['results'])}", id="sum")]})
    g.add_edge(E.START, "supervisor")
    return g.compile(checkpointer=E.InMemorySaver())


def test_supervisor_command_goto_a_list_of_sends_fans_out_to_workers(differential):
    """A supervisor returns `Command(goto=[Send("worker", ...), ...])`: one worker subgraph
    per job, their writes reduced in the parent."""
    def scenario(E):
        app = _fan_out_supervisor(E, lambda E: [E.Send("worker", {"job": j}) for j in ("a", "b", "c")])
        out = app.invoke({"messages": [HumanMessage("go", id="h")], "results": []}, _cfg())
        return out, list(app.get_state_history(_cfg()))

    differential(scenario)


def test_supervisor_command_goto_mixes_sends_and_a_node_name(differential):
    """`Command(goto=[Send("worker", ...), "summarize"])`: the workers and the summarizer run
    in the same step (the summarizer sees no results yet)."""
    def scenario(E):
        app = _fan_out_supervisor(E, lambda E: [E.Send("worker", {"job": "x"}), "summarize",
                                                E.Send("worker", {"job": "y"})])
        out = app.invoke({"messages": [HumanMessage("go", id="h")], "results": []}, _cfg())
        st = app.get_state(_cfg())
        return out, st.metadata["step"], _history(app, _cfg())

    differential(scenario)


# --- streaming a supervised run ---------------------------------------------------------------------


def test_supervised_run_streams_updates_and_tokens_with_namespaces_and_metadata(differential):
    """The supervised run streamed with `["updates", "messages"]` and `subgraphs=True`:
    namespaces, token chunks and their metadata (`langgraph_node`, `checkpoint_ns`,
    `langgraph_path`, ...) from the supervisor and from inside each worker."""
    def scenario(E):
        app, _ = _supervised(E, checkpointer=E.InMemorySaver())
        return collect(lambda: app.stream(_hi("question"), _cfg(), stream_mode=["updates", "messages"],
                                          subgraphs=True))

    differential(scenario)


def test_supervised_run_messages_metadata_names_each_worker_node_and_namespace(differential):
    """What a UI keys tokens on: per token, the namespace, `langgraph_node`,
    `checkpoint_ns` and `langgraph_checkpoint_ns` root names, and the content."""
    def scenario(E):
        app, _ = _supervised(E)
        out = []
        for ns, (msg, md) in app.stream(_hi("question"), stream_mode="messages", subgraphs=True):
            out.append((tuple(p.split(":")[0] for p in ns), md["langgraph_node"],
                        md["checkpoint_ns"].split(":")[0], md["langgraph_checkpoint_ns"].count("|"),
                        msg.type, msg.content))
        return out

    differential(scenario)


def test_supervised_run_streams_debug_events_of_the_parent_and_workers(differential):
    """`stream_mode="debug"` with `subgraphs=True` over the supervised run (checkpoints and
    tasks of the parent and of each worker)."""
    def scenario(E):
        app, _ = _supervised(E, checkpointer=E.InMemorySaver())
        return collect(lambda: app.stream(_hi("question"), _cfg(), stream_mode="debug", subgraphs=True))

    differential(scenario)


def test_handoff_run_streams_values_and_checkpoints_with_subgraphs(differential):
    """A handoff streamed with `["values", "checkpoints"]` and `subgraphs=True`: the
    interrupted tool node writes nothing inside the worker, and the parent's values show
    the handed-off conversation."""
    def scenario(E):
        app = _pair(E, _model(_calls("a1", ("transfer_to_bob", {}, "c-a1"))), _model(_say("bob", "b1")),
                    checkpointer=E.InMemorySaver())
        return collect(lambda: app.stream(_hi(), _cfg(), stream_mode=["values", "checkpoints"],
                                          subgraphs=True))

    differential(scenario)


# --- a worker that raises, with a retry policy ------------------------------------------------------


def _flaky_tool(E, failures):
    attempts = []

    @tool
    def flaky(x: int) -> int:
        """Doubles x; fails the first times."""
        attempts.append(x)
        if len(attempts) <= failures:
            raise ConnectionError(f"service down (attempt {len(attempts)})")
        return 2 * x

    return flaky, attempts


def _retry_app(E, failures, *, policy, checkpointer=None, on="worker"):
    flaky, attempts = _flaky_tool(E, failures)

    def model_fn(ms):
        if ms[-1].type == "tool":
            return AIMessage(f"result {ms[-1].content}", id=f"res-{len(ms)}")
        return AIMessage("", id="call", tool_calls=[{"name": "flaky", "args": {"x": 21}, "id": "c-1",
                                                     "type": "tool_call"}])

    model = Scripted(script=model_fn, seen=[])

    def call_model(s):
        return {"messages": [model.invoke(s["messages"])]}

    w = E.StateGraph(E.MessagesState)
    w.add_node("model", call_model)
    w.add_node("tools", ToolNode([flaky], handle_tool_errors=False),
               retry_policy=policy if on == "tools" else None)
    w.add_edge(E.START, "model")
    w.add_conditional_edges("model", tools_condition, ["tools", E.END])
    w.add_edge("tools", "model")

    g = E.StateGraph(E.MessagesState)
    g.add_node("worker", w.compile(), retry_policy=policy if on == "worker" else None)
    g.add_node("wrap_up", lambda s: {"messages": [AIMessage("wrapped", id="wrap")]})
    g.add_edge(E.START, "worker")
    g.add_edge("worker", "wrap_up")
    return g.compile(checkpointer=checkpointer), attempts, model


def test_worker_that_raises_is_retried_by_the_retry_policy_on_its_node(differential):
    """A worker subgraph node with `retry_policy`: the tool fails once, the whole worker
    re-runs and succeeds; the stream shows both attempts' inner steps."""
    def scenario(E):
        policy = E.RetryPolicy(max_attempts=3, initial_interval=0, jitter=False, retry_on=ConnectionError)
        app, attempts, model = _retry_app(E, 1, policy=policy)
        chunks = _updates(E, app, _hi())
        return chunks, attempts, len(model.seen)

    differential(scenario)


def test_worker_retry_with_a_checkpointer_then_state_and_history(differential):
    """The retried worker on a checkpointed thread: the final state and the parent's
    history (no checkpoint for the failed attempt)."""
    def scenario(E):
        policy = E.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False, retry_on=ConnectionError)
        app, attempts, model = _retry_app(E, 1, policy=policy, checkpointer=E.InMemorySaver())
        out = app.invoke(_hi(), _cfg())
        return _msgs(out), attempts, len(model.seen), list(app.get_state_history(_cfg()))

    differential(scenario)


def test_worker_retry_gives_up_and_the_error_reaches_the_caller(differential):
    """When every attempt fails, the last error reaches the caller; the thread stays before
    the worker with the error on its task."""
    def scenario(E):
        policy = E.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False, retry_on=ConnectionError)
        app, attempts, _ = _retry_app(E, 5, policy=policy, checkpointer=E.InMemorySaver())
        err = capture(lambda: app.invoke(_hi(), _cfg()))
        return err, attempts, _snap(app.get_state(_cfg()))

    differential(scenario)


def test_retry_policy_on_the_workers_tool_node_retries_only_that_node(differential):
    """A retry policy on the worker's own tool node: only the tools step is retried, the
    model runs once before and once after."""
    def scenario(E):
        policy = E.RetryPolicy(max_attempts=3, initial_interval=0, jitter=False, retry_on=ConnectionError)
        app, attempts, model = _retry_app(E, 2, policy=policy, on="tools")
        chunks = _updates(E, app, _hi())
        return chunks, attempts, len(model.seen)

    differential(scenario)


def test_worker_error_not_matching_retry_on_fails_at_once(differential):
    """`retry_on=ValueError` does not retry the worker's `ConnectionError`: one attempt,
    and the error reaches the caller."""
    def scenario(E):
        policy = E.RetryPolicy(max_attempts=3, initial_interval=0, jitter=False, retry_on=ValueError)
        app, attempts, _ = _retry_app(E, 1, policy=policy)
        return capture(lambda: app.invoke(_hi())), attempts

    differential(scenario)


def test_sub_agent_on_its_own_thread_inside_a_node_streams_to_the_caller(differential):
    """A sub-agent with its own memory: a node invokes it on a thread of its own (one per
    user), it remembers earlier turns there, and the caller's `messages` stream still
    gets its tokens and tool results with the metadata LangGraph gives them."""
    def scenario(E):
        sub_saver = E.InMemorySaver()
        agent = _agent(E, _model(_calls("r1", ("lookup", {"topic": "tea"}, "c-r1")), _say("tea is a drink", "r2"),
                                 _say("you asked about tea", "r3")), [lookup], name="researcher",
                       checkpointer=sub_saver)

        def call_researcher(s):
            out = agent.invoke({"messages": [HumanMessage(s["messages"][-1].content, id=f"q{len(s['messages'])}")]},
                               {"configurable": {"thread_id": "researcher-of-t"}})
            return {"messages": [AIMessage(out["messages"][-1].content, id=f"ans{len(s['messages'])}")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("call_researcher", call_researcher)
        g.add_edge(E.START, "call_researcher")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = collect(lambda: app.stream(_hi("what is tea?"), _cfg(), stream_mode=["updates", "messages"],
                                           subgraphs=True))
        second = collect(lambda: app.stream({"messages": [HumanMessage("what did I ask?", id="h2")]}, _cfg(),
                                            stream_mode="messages"))
        inner = agent.get_state({"configurable": {"thread_id": "researcher-of-t"}})
        return first, second, _msgs(inner.values)

    differential(scenario)

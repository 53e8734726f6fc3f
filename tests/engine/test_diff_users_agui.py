"""Graphs served to a chat front end through AG-UI and CopilotKit, run on LangGraph and on lgnb.

A user prototyping in lgnb puts a CopilotKit / AG-UI chat front end on the same graph: they
give `ag_ui_langgraph.LangGraphAgent` (or CopilotKit's `LangGraphAGUIAgent`, with
`CopilotKitState` and the `copilotkit_*` helpers) an lgnb compiled graph instead of
LangGraph's, and serve it with `add_langgraph_fastapi_endpoint`. The library drives the
graph through the public graph protocol: `astream_events(version="v2", subgraphs=True)`
(probing its signature for `context`), `aget_state`, `aupdate_state` (with `as_node`, and
forks for regenerate / edit), `aget_state_history`, the `get_*_jsonschema` methods,
`graph.nodes[...].bound`, `Command(resume=...)`.

Each scenario builds the same graph with E's `StateGraph` (LangGraph's `ToolNode` /
`tools_condition` where a tool runs; `create_agent` ported with `from_langgraph`), runs
`agent.run(RunAgentInput(...))` (or POSTs to the FastAPI endpoint through httpx's ASGI
transport) and observes the AG-UI events as the client gets them: `model_dump()` of every
event, RAW events (the underlying LangGraph events) and `raw_event` copies included, plus
the thread's state where a later turn depends on it. The harness normalizes ids (LangChain
run ids and `parent_ids` in RAW events, task ids in namespaces, uuid message ids the
libraries make up) and the `timestamp` fields; beyond that only the message ids inside RAW
update chunks are blanked (`_settled` says why). Chat models are scripted.

One divergence is marked xfail (strict on lgnb): the agent recognizes a subgraph node by
`isinstance(node.bound, langgraph...CompiledStateGraph)`, which an lgnb graph is not (users
set `agent.subgraphs` themselves, as several scenarios here do).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import json
import operator
from typing import Annotated

import pytest

pytest.importorskip("ag_ui_langgraph")
pytest.importorskip("copilotkit")

from _agent_scenarios import asaver as _asaver  # noqa: E402
from _agent_scenarios import calls as _calls  # noqa: E402
from _agent_scenarios import on as _on  # noqa: E402
from _agent_scenarios import say as _say  # noqa: E402
from _diff import selftest_enabled  # noqa: E402
from _scripted import Scripted  # noqa: E402
from ag_ui.core import (  # noqa: E402
    AssistantMessage,
    Context,
    FunctionCall,
    ResumeEntry,
    RunAgentInput,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ag_ui_langgraph import LangGraphAgent  # noqa: E402
from langchain_core.callbacks.manager import adispatch_custom_event  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

# --- helpers --------------------------------------------------------------------------------------


def _model(*replies):
    return Scripted(script=iter(list(replies)), seen=[])


def _user(text, mid):
    return UserMessage(id=mid, role="user", content=text)


def _assistant(text, mid, *calls):
    """An assistant message as the client echoes it back; `calls`: (name, args, id)."""
    tool_calls = [ToolCall(id=cid, type="function", function=FunctionCall(name=n, arguments=json.dumps(a)))
                  for n, a, cid in calls] or None
    return AssistantMessage(id=mid, role="assistant", content=text, tool_calls=tool_calls)


def _tool_result(content, mid, call_id):
    return ToolMessage(id=mid, role="tool", content=content, tool_call_id=call_id)


def _input(*messages, thread="t1", run="r1", state=None, tools=(), context=(), forwarded_props=None,
           resume=None):
    return RunAgentInput(thread_id=thread, run_id=run, state=state or {}, messages=list(messages),
                         tools=list(tools), context=list(context), forwarded_props=forwarded_props or {},
                         resume=resume)


async def _events(agent, inp):
    """Every event the client gets, as `model_dump()` (RAW events and `raw_event` included),
    with the one id normalization `_settled` describes."""
    return [_settled(event.model_dump()) async for event in agent.run(inp)]


def _settled(event, keys=("event", "raw_event", "rawEvent")):
    """The ids of the messages in a graph's streamed updates chunks (RAW `on_chain_stream`
    events whose chunk is `(namespace, {node: update})`) become `"<id>"`: `add_messages`
    gives a new message its id in place at the step's barrier, and on lgnb the update
    reaches AG-UI before that barrier where on LangGraph it reaches it after (with a
    checkpointer): a divergence of its own, shown by
    `test_update_chunks_reach_astream_events_consumers_after_the_barrier`. Only these ids
    change; everything else is compared as the client gets it."""
    for key in keys:
        raw = event.get(key)
        if not (isinstance(raw, dict) and raw.get("event") == "on_chain_stream"):
            continue
        chunk = (raw.get("data") or {}).get("chunk")
        if isinstance(chunk, (list, tuple)) and len(chunk) == 2 and isinstance(chunk[1], dict):
            for update in chunk[1].values():
                for message in (update or {}).get("messages", []) if isinstance(update, dict) else []:
                    if isinstance(message, dict) and "id" in message:
                        message["id"] = "<id>"
    return event


def _contents(values):
    return [m.content for m in values["messages"]]


def _types(events):
    return [e["type"] for e in events if e["type"] != "RAW"]


def _text(events):
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def _agui(E, graph, **kwargs):
    return LangGraphAgent(name="agent", graph=graph, **kwargs)


def _copilot(E, graph, **kwargs):
    from copilotkit import LangGraphAGUIAgent

    return LangGraphAGUIAgent(name="agent", graph=graph, **kwargs)


def _chat(E, model, *, state=None, checkpointer=True, name="chat"):
    """START -> chat -> END: the model answers the conversation."""
    async def chat(state, config):
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    g = E.StateGraph(state or E.MessagesState)
    g.add_node(name, chat)
    g.add_edge(E.START, name)
    g.add_edge(name, E.END)
    return g.compile(checkpointer=E.InMemorySaver() if checkpointer else None)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def fail(reason: str) -> str:
    """A tool that fails."""
    raise ValueError(f"tool failed: {reason}")


def _tool_agent(E, model, tools=(add,), *, checkpointer=None):
    """The hand-written ReAct loop: agent -> tools_condition -> ToolNode -> agent (saved in
    memory unless `checkpointer` is given)."""
    from langgraph.prebuilt import ToolNode, tools_condition

    async def agent(state, config):
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    g = E.StateGraph(E.MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(list(tools)))
    g.add_edge(E.START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer or E.InMemorySaver())


# --- 1. plain chat ----------------------------------------------------------------------------------


def test_plain_chat_streams_text_message_events_and_snapshots(differential):
    """The smoke program: one model reply streamed word by word as TEXT_MESSAGE_* between
    STEP_STARTED/FINISHED, then STATE_SNAPSHOT, MESSAGES_SNAPSHOT and RUN_FINISHED."""
    async def scenario(E):
        app = _chat(E, _model(_say("hello there friend", "m1")))
        return await _events(_agui(E, app), _input(_user("hi", "u1")))

    ref = differential(scenario)
    assert _types(ref)[:3] == ["RUN_STARTED", "STEP_STARTED", "TEXT_MESSAGE_START"]
    assert _types(ref)[-3:] == ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert _text(ref) == "hello there friend"
    assert any(e["type"] == "RAW" for e in ref)


def test_raw_events_off_and_sync_node(differential):
    """`emit_raw_events=False` drops RAW events and `raw_event` copies; a sync node calling
    the model with `invoke` streams the same way."""
    async def scenario(E):
        model = _model(_say("sync words here", "m1"))

        def chat(state):
            return {"messages": [model.invoke(state["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_agui(E, app, emit_raw_events=False), _input(_user("hi", "u1")))

    ref = differential(scenario)
    assert not any(e["type"] == "RAW" or e.get("raw_event") for e in ref)
    assert _text(ref) == "sync words here"


def test_copilotkit_agent_puts_actions_and_context_in_state(differential):
    """CopilotKit's `LangGraphAGUIAgent` on a `CopilotKitState` graph: the client's tools
    and context land in `state["copilotkit"]` for the node, and in the state snapshots."""
    async def scenario(E):
        from copilotkit import CopilotKitState

        seen = []

        async def chat(state, config):
            ck = state["copilotkit"]
            seen.append((sorted(a["name"] for a in ck["actions"]), [c["value"] for c in ck["context"]]))
            return {"messages": [AIMessage("ok", id="m1")]}

        g = E.StateGraph(CopilotKitState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        tools = [Tool(name="setTheme", description="Set the theme",
                      parameters={"type": "object", "properties": {"theme": {"type": "string"}}})]
        context = [Context(description="user name", value="Ada")]
        events = await _events(_copilot(E, app), _input(_user("hi", "u1"), tools=tools, context=context))
        state = (await app.aget_state({"configurable": {"thread_id": "t1"}})).values
        return events, seen, state

    ref = differential(scenario)
    assert ref[1] == [(["setTheme"], ["Ada"])]


# --- 2. tools ----------------------------------------------------------------------------------------


def test_tool_calling_loop_streams_tool_call_and_result_events(differential):
    """agent -> ToolNode -> agent: the model's tool call streams as TOOL_CALL_START/ARGS/END,
    the tool's answer as TOOL_CALL_RESULT, then the final text; steps per node."""
    async def scenario(E):
        model = _model(_calls("m1", ("add", {"a": 1, "b": 2}, "c1"), content="Let me add."),
                       _say("The sum is 3.", "m2"))
        app = _tool_agent(E, model)
        return await _events(_agui(E, app), _input(_user("1+2?", "u1")))

    ref = differential(scenario)
    kinds = _types(ref)
    assert "TOOL_CALL_START" in kinds and "TOOL_CALL_RESULT" in kinds
    steps = [e["step_name"] for e in ref if e["type"] == "STEP_STARTED"]
    assert steps == ["agent", "tools", "agent"]


def test_tool_error_handled_by_tool_node_becomes_a_tool_result(differential):
    """`ToolNode(handle_tool_errors=True)`: the tool's error becomes its ToolMessage (in the
    MESSAGES_SNAPSHOT; AG-UI sends no TOOL_CALL_RESULT for an `on_tool_error`) and the run
    goes on."""
    async def scenario(E):
        from langgraph.prebuilt import ToolNode, tools_condition

        model = _model(_calls("m1", ("fail", {"reason": "disk"}, "c1")), _say("It failed.", "m2"))

        async def agent(state, config):
            return {"messages": [await model.ainvoke(state["messages"], config)]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([fail], handle_tool_errors=True))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_agui(E, app), _input(_user("go", "u1")))

    ref = differential(scenario)
    snap = [e for e in ref if e["type"] == "MESSAGES_SNAPSHOT"][-1]
    assert [m["role"] for m in snap["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert "tool failed: disk" in snap["messages"][2]["content"]
    assert ref[-1]["type"] == "RUN_FINISHED"


def test_tool_error_not_handled_is_run_error(differential):
    """The default `ToolNode` re-raises a tool's own error: the run ends with RUN_ERROR
    after the streamed tool call."""
    async def scenario(E):
        model = _model(_calls("m1", ("fail", {"reason": "disk"}, "c1")))
        app = _tool_agent(E, model, tools=(fail,))
        events = await _events(_agui(E, app), _input(_user("go", "u1")))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return events, _contents(state.values), state.next

    ref = differential(scenario)
    assert ref[0][-1]["type"] == "RUN_ERROR" and ref[0][-1]["message"] == "tool failed: disk"
    assert ref[2] == ("tools",)


def test_create_agent_ported_with_from_langgraph(differential):
    """LangChain's `create_agent` ported with `from_langgraph`, served as is."""
    async def scenario(E):
        from langchain.agents import create_agent
        from langgraph.checkpoint.memory import InMemorySaver

        model = _model(_calls("m1", ("add", {"a": 2, "b": 5}, "c1")), _say("Seven.", "m2"))
        app = _on(E, create_agent(model, tools=[add], checkpointer=InMemorySaver()))
        events = await _events(_agui(E, app), _input(_user("2+5?", "u1")))
        return events, model.seen

    ref = differential(scenario)
    assert _text(ref[0]) == "Seven."


def test_frontend_tool_call_ends_the_run_and_the_result_comes_back_next_turn(differential):
    """A frontend action (RunAgentInput.tools, `copilotkit.actions`): the model calls it,
    the graph ends (the client runs it), the client sends the result in the next run and
    the model answers."""
    async def scenario(E):
        from copilotkit import CopilotKitState

        model = _model(_calls("m1", ("setTheme", {"theme": "dark"}, "c1")), _say("Theme set.", "m2"))

        async def chat(state, config):
            return {"messages": [await model.ainvoke(state["messages"], config)]}

        def route(state):
            """Backend tool calls go to the ToolNode; a frontend action ends the run."""
            last = state["messages"][-1]
            actions = {a["name"] for a in state["copilotkit"]["actions"]}
            calls = getattr(last, "tool_calls", None) or []
            return "tools" if any(c["name"] not in actions for c in calls) else E.END

        from langgraph.prebuilt import ToolNode

        g = E.StateGraph(CopilotKitState)
        g.add_node("chat", chat)
        g.add_node("tools", ToolNode([add]))
        g.add_edge(E.START, "chat")
        g.add_conditional_edges("chat", route, ["tools", E.END])
        g.add_edge("tools", "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        tools = [Tool(name="setTheme", description="Set the theme",
                      parameters={"type": "object", "properties": {"theme": {"type": "string"}}})]
        first = await _events(_copilot(E, app), _input(_user("dark mode", "u1"), tools=tools))
        second = await _events(_copilot(E, app), _input(
            _user("dark mode", "u1"), _assistant("", "m1", ("setTheme", {"theme": "dark"}, "c1")),
            _tool_result("done", "tr1", "c1"), tools=tools, run="r2"))
        state = (await app.aget_state({"configurable": {"thread_id": "t1"}})).values
        return first, second, state["messages"], model.seen

    ref = differential(scenario)
    assert [e["tool_call_name"] for e in ref[0] if e["type"] == "TOOL_CALL_START"] == ["setTheme"]
    assert _text(ref[1]) == "Theme set."


def test_tool_returning_command_updates_state_and_streams_its_result(differential):
    """A tool returning E's `Command(update=...)` (state key + its ToolMessage) through
    `ToolNode`: AG-UI reads the `Command` from `on_tool_end` for TOOL_CALL_RESULT, the state
    snapshot shows the key."""
    async def scenario(E):
        from langchain_core.messages import ToolMessage as LCToolMessage
        from langchain_core.tools import InjectedToolCallId

        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            theme: str

        @tool
        def set_theme(theme: str, tool_call_id: Annotated[str, InjectedToolCallId]):
            """Set the theme."""
            return E.Command(update={"theme": theme, "messages": [
                LCToolMessage(f"theme is {theme}", tool_call_id=tool_call_id, id="tm1")]})

        from langgraph.prebuilt import ToolNode, tools_condition

        model = _model(_calls("m1", ("set_theme", {"theme": "dark"}, "c1")), _say("Done.", "m2"))

        async def agent(state, config):
            return {"messages": [await model.ainvoke(state["messages"], config)]}

        g = E.StateGraph(S)
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([set_theme]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_agui(E, app), _input(_user("dark please", "u1")))

    ref = differential(scenario)
    assert [e["content"] for e in ref if e["type"] == "TOOL_CALL_RESULT"] == ["theme is dark"]
    assert ref[-3]["type"] == "STATE_SNAPSHOT" and ref[-3]["snapshot"]["theme"] == "dark"


def test_recursion_limit_from_the_agent_config_is_run_error(differential):
    """`LangGraphAgent(config={"recursion_limit": 4})` on a model that keeps calling its
    tool: the run stops with RUN_ERROR carrying GraphRecursionError's message."""
    async def scenario(E):
        model = Scripted(script=lambda messages: _calls(f"m{len(messages)}", ("add", {"a": 1, "b": 1},
                                                                                f"c{len(messages)}")),
                         seen=[])
        app = _tool_agent(E, model)
        return await _events(_agui(E, app, config={"recursion_limit": 4}), _input(_user("loop", "u1")))

    ref = differential(scenario)
    assert ref[-1]["type"] == "RUN_ERROR" and "Recursion limit of 4" in ref[-1]["message"]


def test_create_agent_with_copilotkit_middleware_and_a_frontend_tool(differential):
    """`create_agent(..., middleware=[CopilotKitMiddleware()])` ported with `from_langgraph`,
    served by CopilotKit's agent: the frontend action reaches the model's tools, the
    middleware intercepts the model's call to it (the ToolNode runs only the backend
    tool) and restores it at the end; the client gets the frontend call as tool-call
    events and answers it in the next run."""
    async def scenario(E):
        from copilotkit import CopilotKitMiddleware
        from langchain.agents import create_agent
        from langgraph.checkpoint.memory import InMemorySaver

        model = _model(_calls("m1", ("add", {"a": 1, "b": 2}, "c1"), ("setTheme", {"theme": "dark"}, "c2")),
                       _say("Sum is 3 and the theme is dark.", "m2"))
        app = _on(E, create_agent(model, tools=[add], middleware=[CopilotKitMiddleware()],
                                  checkpointer=InMemorySaver()))
        tools = [Tool(name="setTheme", description="Set the theme",
                      parameters={"type": "object", "properties": {"theme": {"type": "string"}}})]
        first = await _events(_copilot(E, app), _input(_user("add and go dark", "u1"), tools=tools))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        second = await _events(_copilot(E, app), _input(
            _user("add and go dark", "u1"),
            _assistant("", "m1", ("add", {"a": 1, "b": 2}, "c1"), ("setTheme", {"theme": "dark"}, "c2")),
            _tool_result("3", "tr1", "c1"), _tool_result("dark", "tr2", "c2"), tools=tools, run="r2"))
        final = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return first, second, _contents(state.values), state.values.get("copilotkit"), \
            _contents(final.values), model.seen

    ref = differential(scenario)
    assert [e["tool_call_name"] for e in ref[0] if e["type"] == "TOOL_CALL_START"].count("setTheme") >= 1


def test_create_agent_with_state_streaming_middleware_predicts_state(differential):
    """`StateStreamingMiddleware(StateItem(...))` on a ported `create_agent`: the model's
    streamed tool arguments are announced as PredictState for the front end."""
    async def scenario(E):
        from ag_ui_langgraph import StateItem, StateStreamingMiddleware
        from langchain.agents import AgentState, create_agent
        from langgraph.checkpoint.memory import InMemorySaver

        class DocState(AgentState):
            document: str

        @tool
        def write_document(document: str) -> str:
            """Write the document."""
            return "written"

        model = _model(_calls("m1", ("write_document", {"document": "Hello world"}, "c1")), _say("Written.", "m2"))
        app = _on(E, create_agent(model, tools=[write_document], state_schema=DocState,
                                  middleware=[StateStreamingMiddleware(
                                      StateItem(state_key="document", tool="write_document",
                                                tool_argument="document"))],
                                  checkpointer=InMemorySaver()))
        return await _events(_copilot(E, app), _input(_user("write it", "u1")))

    ref = differential(scenario)
    predicted = [e["value"] for e in ref if e["type"] == "CUSTOM" and e["name"] == "PredictState"]
    assert predicted and predicted[0][0]["state_key"] == "document"


def test_create_agent_with_human_in_the_loop_middleware(differential):
    """A ported `create_agent` with `HumanInTheLoopMiddleware`: the tool call pauses the run
    (its `action_requests` interrupt reaches the client), the client's decision resumes it
    through `forwarded_props.command.resume`, the tool runs."""
    async def scenario(E):
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware
        from langgraph.checkpoint.memory import InMemorySaver

        model = _model(_calls("m1", ("add", {"a": 4, "b": 4}, "c1")), _say("Eight.", "m2"))
        app = _on(E, create_agent(model, tools=[add], checkpointer=InMemorySaver(),
                                  middleware=[HumanInTheLoopMiddleware(interrupt_on={"add": True})]))
        agent = _agui(E, app)
        first = await _events(agent, _input(_user("4+4?", "u1")))
        resumed = await _events(agent, _input(_user("4+4?", "u1"), run="r2", forwarded_props={
            "command": {"resume": json.dumps({"decisions": [{"type": "approve"}]})}}))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return first, resumed, _contents(state.values)

    ref = differential(scenario)
    assert ref[2] == ["4+4?", "", "8", "Eight."]


def test_two_nodes_handing_over_with_command_goto_stream_two_messages(differential):
    """A triage node routes with `Command(goto=...)` to a specialist; each streams its own
    model reply: two text messages, each inside its node's step."""
    async def scenario(E):
        model = _model(_say("Routing to billing.", "m1"), _say("Your invoice is paid.", "m2"))

        async def triage(state, config):
            reply = await model.ainvoke(state["messages"], config)
            return E.Command(goto="billing", update={"messages": [reply]})

        async def billing(state, config):
            return {"messages": [await model.ainvoke(state["messages"], config)]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("triage", triage, destinations=("billing",))
        g.add_node("billing", billing)
        g.add_edge(E.START, "triage")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_agui(E, app), _input(_user("invoice?", "u1")))

    ref = differential(scenario)
    starts = [(e["type"], e.get("step_name") or e.get("message_id")) for e in ref
              if e["type"] in ("STEP_STARTED", "TEXT_MESSAGE_START")]
    assert starts == [("STEP_STARTED", "triage"), ("TEXT_MESSAGE_START", "m1"),
                      ("STEP_STARTED", "billing"), ("TEXT_MESSAGE_START", "m2")]


# --- 3. conversations on a checkpointer ---------------------------------------------------------------


def test_multi_turn_conversation_keeps_the_thread(differential):
    """Two runs on a thread, the client echoing the history: the second run's
    MESSAGES_SNAPSHOT has all four messages, the model saw the whole conversation."""
    async def scenario(E):
        model = _model(_say("Hi Ada.", "m1"), _say("You said your name is Ada.", "m2"))
        app = _chat(E, model)
        agent = _agui(E, app)
        first = await _events(agent, _input(_user("I am Ada", "u1")))
        second = await _events(agent, _input(_user("I am Ada", "u1"), _assistant("Hi Ada.", "m1"),
                                             _user("who am I?", "u2"), run="r2"))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return first, second, state.values, model.seen

    ref = differential(scenario)
    snap = [e for e in ref[1] if e["type"] == "MESSAGES_SNAPSHOT"][-1]
    assert [m["id"] for m in snap["messages"]] == ["u1", "m1", "u2", "m2"]


def test_input_state_from_the_client_is_merged_and_filtered_by_the_schema(differential):
    """RunAgentInput.state carries the shared state the front end edits: keys of the
    input schema reach the node, others do not; STATE_SNAPSHOT shows the output keys."""
    async def scenario(E):
        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            theme: str
            count: Annotated[int, operator.add]

        seen = []

        def chat(state):
            seen.append({k: v for k, v in state.items() if k != "messages"})
            return {"messages": [AIMessage(f"theme {state.get('theme')}", id="m1")], "count": 1}

        g = E.StateGraph(S)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        events = await _events(_agui(E, app), _input(_user("hi", "u1"),
                                                     state={"theme": "dark", "count": 2, "bogus": 1}))
        return events, seen

    ref = differential(scenario)
    assert ref[1] == [{"theme": "dark", "count": 2}]


# --- 4. interrupts --------------------------------------------------------------------------------------


def _approval_graph(E):
    def draft(state):
        return {"messages": [AIMessage("Draft ready.", id="m1")]}

    def review(state):
        answer = E.interrupt({"message": "Send it?", "reason": "approval"})
        return {"messages": [AIMessage(f"answer: {answer}", id="m2")]}

    g = E.StateGraph(E.MessagesState)
    g.add_node("draft", draft)
    g.add_node("review", review)
    g.add_edge(E.START, "draft")
    g.add_edge("draft", "review")
    return g.compile(checkpointer=E.InMemorySaver())


@pytest.mark.parametrize("outcome", [False, True], ids=["legacy-custom-event", "interrupt-outcome"])
def test_interrupt_ends_the_run_and_forwarded_command_resumes(differential, outcome):
    """`interrupt()` in a node: the run ends with the `on_interrupt` CUSTOM event (and, with
    `emit_interrupt_outcome`, RUN_FINISHED's interrupt outcome); a run on the paused thread
    without a resume re-emits it; `forwarded_props={"command": {"resume": ...}}` resumes."""
    async def scenario(E):
        app = _approval_graph(E)
        agent = _agui(E, app, emit_interrupt_outcome=outcome)
        first = await _events(agent, _input(_user("write it", "u1")))
        again = await _events(agent, _input(_user("write it", "u1"), run="r2"))
        resumed = await _events(agent, _input(_user("write it", "u1"), run="r3",
                                              forwarded_props={"command": {"resume": "yes"}}))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return first, again, resumed, state.values, state.next

    ref = differential(scenario)
    assert any(e["type"] == "CUSTOM" and e["name"] == "on_interrupt" for e in ref[0])
    assert ref[4] == ()


def test_interrupt_resumed_with_run_agent_input_resume(differential):
    """The AG-UI resume: the client answers the interrupt id RUN_FINISHED's outcome named
    with `RunAgentInput.resume=[ResumeEntry(...)]`."""
    async def scenario(E):
        app = _approval_graph(E)
        agent = _agui(E, app, emit_interrupt_outcome=True)
        first = await _events(agent, _input(_user("write it", "u1")))
        finished = [e for e in first if e["type"] == "RUN_FINISHED"][-1]
        iid = finished["outcome"]["interrupts"][0]["id"]
        resumed = await _events(agent, _input(
            _user("write it", "u1"), run="r2",
            resume=[ResumeEntry(interrupt_id=iid, status="resolved", payload={"ok": True})]))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return first, resumed, _contents(state.values)

    ref = differential(scenario)
    assert ref[2][-1] == "answer: {'ok': True}"


def test_copilotkit_interrupt_in_a_node(differential):
    """`copilotkit_interrupt(message=...)` (LangGraph's `interrupt()` under the hood, from
    CopilotKit's code): the run pauses; the resume's answer comes back from the call."""
    async def scenario(E):
        from copilotkit import CopilotKitState
        from copilotkit.langgraph import copilotkit_interrupt

        def ask(state):
            answer, response = copilotkit_interrupt(message="Which city?")
            return {"messages": [AIMessage(f"city: {answer}", id="m2")]}

        g = E.StateGraph(CopilotKitState)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app = g.compile(checkpointer=E.InMemorySaver())
        agent = _copilot(E, app)
        first = await _events(agent, _input(_user("plan a trip", "u1")))
        resumed = await _events(agent, _input(_user("plan a trip", "u1"), run="r2",
                                              forwarded_props={"command": {"resume": "Paris"}}))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return first, resumed, _contents(state.values)

    ref = differential(scenario)
    assert ref[2][-1] == "city: Paris"


def test_two_interrupts_in_one_node_resumed_one_after_the_other(differential):
    """A node asking twice: the first resume re-runs the node up to the second question
    (a new interrupt, a new run end), the second resume completes it; RunAgentInput.resume
    with the interrupt ids the outcomes named."""
    async def scenario(E):
        def ask(state):
            name = E.interrupt("Your name?")
            city = E.interrupt({"message": "Your city?", "response_schema": {"type": "string"}})
            return {"messages": [AIMessage(f"{name} from {city}", id="m1")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app = g.compile(checkpointer=E.InMemorySaver())
        agent = _agui(E, app, emit_interrupt_outcome=True, enable_legacy_on_interrupt_event=False)
        runs = [await _events(agent, _input(_user("hi", "u1")))]
        for i, answer in enumerate(["Ada", "Paris"], start=2):
            iid = [e for e in runs[-1] if e["type"] == "RUN_FINISHED"][-1]["outcome"]["interrupts"][0]["id"]
            runs.append(await _events(agent, _input(_user("hi", "u1"), run=f"r{i}", resume=[
                ResumeEntry(interrupt_id=iid, status="resolved", payload=answer)])))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return runs, _contents(state.values)

    ref = differential(scenario)
    assert ref[1][-1] == "Ada from Paris"


def test_cancelled_resume_entry_reaches_the_node_as_the_sentinel(differential):
    """`ResumeEntry(status="cancelled")`: the node's `interrupt()` returns AG-UI's cancel
    sentinel and the node decides what to do."""
    async def scenario(E):
        def review(state):
            answer = E.interrupt({"message": "Send it?"})
            return {"messages": [AIMessage(f"answer: {sorted(answer)}", id="m2")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("review", review)
        g.add_edge(E.START, "review")
        app = g.compile(checkpointer=E.InMemorySaver())
        agent = _agui(E, app, emit_interrupt_outcome=True)
        first = await _events(agent, _input(_user("go", "u1")))
        iid = [e for e in first if e["type"] == "RUN_FINISHED"][-1]["outcome"]["interrupts"][0]["id"]
        second = await _events(agent, _input(_user("go", "u1"), run="r2", resume=[
            ResumeEntry(interrupt_id=iid, status="cancelled")]))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return first, second, _contents(state.values)

    ref = differential(scenario)
    assert ref[2][-1] == "answer: ['__agui_cancelled__', 'interrupt_id']"


def test_interrupt_inside_a_subgraph_node_is_resumed_from_the_parent(differential):
    """`interrupt()` in a subgraph node: the parent run ends on it, the forwarded resume
    goes through the parent to the subgraph (subgraphs declared by hand, as lgnb users do:
    see `test_subgraph_node_is_a_declared_subgraph`)."""
    async def scenario(E):
        def confirm(state):
            ok = E.interrupt({"message": "Book the flight?"})
            return {"messages": [AIMessage(f"booked: {ok}", id="m1")]}

        sub = E.StateGraph(E.MessagesState)
        sub.add_node("confirm", confirm)
        sub.add_edge(E.START, "confirm")
        g = E.StateGraph(E.MessagesState)
        g.add_node("flights", sub.compile())
        g.add_edge(E.START, "flights")
        app = g.compile(checkpointer=E.InMemorySaver())
        agent = _agui(E, app)
        agent.subgraphs = {"flights"}
        first = await _events(agent, _input(_user("fly me", "u1")))
        resumed = await _events(agent, _input(_user("fly me", "u1"), run="r2",
                                              forwarded_props={"command": {"resume": "true"}}))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return first, resumed, _contents(state.values)

    ref = differential(scenario)
    assert ref[2][-1] == "booked: True"


def test_continue_from_a_node_updates_state_as_that_node(differential):
    """`forwarded_props={"node_name": ...}` (the front end continuing from where the graph
    stopped at a breakpoint): the agent writes the client's state with
    `aupdate_state(as_node=node_name)` and runs on from there."""
    async def scenario(E):
        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            approved: bool

        def draft(state):
            return {"messages": [AIMessage("Draft.", id="m1")], "approved": False}

        def publish(state):
            return {"messages": [AIMessage(f"published={state['approved']}", id="m2")]}

        g = E.StateGraph(S)
        g.add_node("draft", draft)
        g.add_node("publish", publish)
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "publish")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_after=["draft"])
        agent = _agui(E, app)
        cfg = {"configurable": {"thread_id": "t1"}}
        first = await _events(agent, _input(_user("write", "u1")))
        paused = await app.aget_state(cfg)
        second = await _events(agent, _input(_user("write", "u1"), _assistant("Draft.", "m1"), run="r2",
                                             state={"approved": True},
                                             forwarded_props={"node_name": "draft"}))
        state = await app.aget_state(cfg)
        history = [(s.next, s.metadata.get("source"), s.metadata.get("step"))
                   async for s in app.aget_state_history(cfg)]
        return first, paused.next, second, _contents(state.values), state.values["approved"], history

    ref = differential(scenario)
    assert ref[1] == ("publish",) and ref[4] is True


# --- 5. state streaming ---------------------------------------------------------------------------------


def test_copilotkit_emit_state_message_tool_call_and_exit(differential):
    """The `copilotkit_emit_*` helpers from a node: intermediate STATE_SNAPSHOTs, a manual
    text message, a manual tool call, the Exit custom event."""
    async def scenario(E):
        from copilotkit import CopilotKitState
        from copilotkit.langgraph import (
            copilotkit_emit_message,
            copilotkit_emit_state,
            copilotkit_emit_tool_call,
            copilotkit_exit,
        )

        class S(CopilotKitState):
            progress: int

        async def work(state, config):
            for i in (1, 2):
                await copilotkit_emit_state(config, {"progress": i})
            await copilotkit_emit_message(config, "Working on it")
            await copilotkit_emit_tool_call(config, name="showCard", args={"n": 1}, tool_call_id="tc1")
            await copilotkit_exit(config)
            return {"progress": 3, "messages": [AIMessage("Done.", id="m1")]}

        g = E.StateGraph(S)
        g.add_node("work", work)
        g.add_edge(E.START, "work")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_copilot(E, app), _input(_user("go", "u1")))

    ref = differential(scenario)
    snaps = [e["snapshot"].get("progress") for e in ref if e["type"] == "STATE_SNAPSHOT"]
    assert snaps[:4] == [1, 1, 2, 2] and snaps[-1] == 3
    assert any(e["type"] == "CUSTOM" and e["name"] == "Exit" for e in ref)


def test_predictive_state_from_a_streamed_tool_call(differential):
    """`copilotkit_customize_config(emit_intermediate_state=[...])`: the model's streamed
    tool call arguments become a PredictState event; `emit_messages=False` on another
    call keeps its text off the wire."""
    async def scenario(E):
        from copilotkit import CopilotKitState
        from copilotkit.langgraph import copilotkit_customize_config

        class S(CopilotKitState):
            draft: str

        model = _model(_say("thinking quietly", "m0"),
                       _calls("m1", ("write_draft", {"text": "Dear Ada"}, "c1")))

        async def quiet(state, config):
            cfg = copilotkit_customize_config(config, emit_messages=False)
            await model.ainvoke(state["messages"], cfg)
            return {}

        async def write(state, config):
            cfg = copilotkit_customize_config(config, emit_intermediate_state=[
                {"state_key": "draft", "tool": "write_draft", "tool_argument": "text"}])
            msg = await model.ainvoke(state["messages"], cfg)
            return {"messages": [msg], "draft": msg.tool_calls[0]["args"]["text"]}

        g = E.StateGraph(S)
        g.add_node("quiet", quiet)
        g.add_node("write", write)
        g.add_edge(E.START, "quiet")
        g.add_edge("quiet", "write")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_copilot(E, app), _input(_user("draft a letter", "u1")))

    ref = differential(scenario)
    assert "thinking" not in _text(ref)
    assert any(e["type"] == "CUSTOM" and e["name"] == "PredictState" for e in ref)


def test_custom_events_from_a_node(differential):
    """`adispatch_custom_event` from a node reaches the client as CUSTOM events in order."""
    async def scenario(E):
        async def work(state, config):
            await adispatch_custom_event("progress", {"pct": 50}, config=config)
            await adispatch_custom_event("progress", {"pct": 100}, config=config)
            return {"messages": [AIMessage("done", id="m1")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("work", work)
        g.add_edge(E.START, "work")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_agui(E, app), _input(_user("go", "u1")))

    ref = differential(scenario)
    assert [e["value"] for e in ref if e["type"] == "CUSTOM"] == [{"pct": 50}, {"pct": 100}]


# --- 6. subgraphs -------------------------------------------------------------------------------------


def _research_graph(E):
    """research (a compiled subgraph node: START -> inner_chat) -> after."""
    model = _model(_say("inner reply here", "m1"))
    inner = _chat(E, model, checkpointer=False, name="inner_chat")

    def after(state):
        return {"messages": [AIMessage("outer done", id="m2")]}

    g = E.StateGraph(E.MessagesState)
    g.add_node("research", inner)
    g.add_node("after", after)
    g.add_edge(E.START, "research")
    g.add_edge("research", "after")
    return g.compile(checkpointer=E.InMemorySaver())


@pytest.mark.xfail(not selftest_enabled(), strict=True, reason=(
    "LangGraphAgent.__init__ collects its declared subgraphs as the nodes whose `bound` is "
    "`isinstance(..., langgraph.graph.state.CompiledStateGraph)`; lgnb's compiled graph is "
    "not LangGraph's class, so `agent.subgraphs` is {} instead of {'research'}, and the "
    "STATE_SNAPSHOT + MESSAGES_SNAPSHOT pair marking the entry into the subgraph comes after "
    "STEP_STARTED 'research' (set off by the first inner event) instead of before it (set off "
    "by the subgraph node's own start). Not fixable in lgnb without making its class a "
    "LangGraph class; users set `agent.subgraphs` themselves (next test)."))
def test_subgraph_node_is_a_declared_subgraph(differential):
    """A compiled subgraph added as a node: the agent declares it a subgraph (nodes whose
    `bound` is a compiled graph) and snapshots the state as the run enters and leaves it;
    the inner model streams through the parent run."""
    async def scenario(E):
        agent = _agui(E, _research_graph(E))
        return sorted(agent.subgraphs), await _events(agent, _input(_user("go", "u1")))

    ref = differential(scenario)
    assert ref[0] == ["research"]


def test_subgraph_node_declared_by_hand_streams_as_on_langgraph(differential):
    """The workaround for the test above: the user declares the subgraph nodes
    (`agent.subgraphs = {name for name, _ in graph.get_subgraphs()}`); the events are then
    LangGraph's."""
    async def scenario(E):
        graph = _research_graph(E)
        agent = _agui(E, graph)
        agent.subgraphs = {name for name, _ in graph.get_subgraphs()}
        return sorted(agent.subgraphs), await _events(agent, _input(_user("go", "u1")))

    ref = differential(scenario)
    assert ref[0] == ["research"]
    assert _text(ref[1]) == "inner reply here"


def test_agent_config_reaches_nodes_as_configurable_and_run_context(differential):
    """`LangGraphAgent(config={"configurable": {...}})`: the agent passes the configurable
    values as the run's `context` too (it probes `astream_events`' signature): a node reads
    both `config["configurable"]` and `runtime.context`."""
    async def scenario(E):
        class Ctx(TypedDict, total=False):
            user: str
            thread_id: str

        seen = []

        def chat(state, config, runtime: E.Runtime[Ctx]):
            seen.append((config["configurable"].get("user"), dict(runtime.context or {})))
            return {"messages": [AIMessage("ok", id="m1")]}

        g = E.StateGraph(E.MessagesState, context_schema=Ctx)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        agent = _agui(E, app, config={"configurable": {"user": "ada"}})
        events = await _events(agent, _input(_user("hi", "u1")))
        return events, seen

    ref = differential(scenario)
    assert ref[1] == [("ada", {"user": "ada", "thread_id": "t1"})]


def test_copilotkit_payload_reaches_a_subgraph_through_the_run(differential):
    """CopilotKit threads the client's actions and context to subgraphs through the run
    (`configurable["copilotkit"]`, since `astream_events` names no `context` parameter);
    a subgraph node that has no `copilotkit` state key reads it from its config."""
    async def scenario(E):
        from copilotkit import CopilotKitState

        seen = []

        def inner(state, config):
            ck = config["configurable"].get("copilotkit") or {}
            seen.append(([a["name"] for a in ck.get("actions", [])], [c["value"] for c in ck.get("context", [])]))
            return {"messages": [AIMessage("inner ok", id="m1")]}

        sub = E.StateGraph(E.MessagesState)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(CopilotKitState)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        app = g.compile(checkpointer=E.InMemorySaver())
        agent = _copilot(E, app)
        agent.subgraphs = {"sub"}
        tools = [Tool(name="setTheme", description="Set the theme", parameters={"type": "object"})]
        events = await _events(agent, _input(_user("hi", "u1"), tools=tools,
                                             context=[Context(description="tz", value="UTC")]))
        return events, seen

    ref = differential(scenario)
    assert ref[1] == [(["setTheme"], ["UTC"])]


def test_stream_subgraphs_off_hides_the_inner_steps(differential):
    """`forwarded_props={"stream_subgraphs": False}`: the run streams without the
    subgraph's own events; the end state is the same."""
    async def scenario(E):
        graph = _research_graph(E)
        agent = _agui(E, graph)
        agent.subgraphs = {"research"}
        events = await _events(agent, _input(_user("go", "u1"), forwarded_props={"stream_subgraphs": False}))
        state = await graph.aget_state({"configurable": {"thread_id": "t1"}})
        return events, _contents(state.values)

    ref = differential(scenario)
    assert ref[1] == ["go", "inner reply here", "outer done"]


# --- 7. regenerate and edit ---------------------------------------------------------------------------


def test_edit_of_an_earlier_message_forks_the_thread(differential):
    """The client edits the second user message (same id, new text): the agent forks the
    thread before it (`aget_state_history` + `aupdate_state`) and the model answers the
    edited conversation; the history keeps the old branch."""
    async def scenario(E):
        model = _model(_say("Hi.", "m1"), _say("Two.", "m2"), _say("Three.", "m3"))
        app = _chat(E, model)
        agent = _agui(E, app)
        cfg = {"configurable": {"thread_id": "t1"}}
        await _events(agent, _input(_user("hello", "u1")))
        await _events(agent, _input(_user("hello", "u1"), _assistant("Hi.", "m1"), _user("1+1?", "u2"),
                                    run="r2"))
        edited = await _events(agent, _input(_user("hello", "u1"), _assistant("Hi.", "m1"),
                                             _user("1+2?", "u2"), run="r3"))
        state = await app.aget_state(cfg)
        history = [(_contents(s.values) if s.values else [], s.next, s.metadata.get("source"),
                    s.metadata.get("step"))
                   async for s in app.aget_state_history(cfg)]
        return edited, _contents(state.values), history, model.seen

    ref = differential(scenario)
    assert ref[1] == ["hello", "Hi.", "1+2?", "Three."]


def test_time_travel_when_the_client_history_has_other_ids(differential):
    """The client's copy of the thread has an assistant message under an id of its own
    and fewer messages than the checkpoint: the agent goes back to the checkpoint before the
    last user message and runs it again from there (a fork), instead of appending."""
    async def scenario(E):
        model = _model(_say("Hi.", "m1"), _say("Two.", "m2"), _say("Two again.", "m3"))
        app = _chat(E, model)
        agent = _agui(E, app)
        cfg = {"configurable": {"thread_id": "t1"}}
        await _events(agent, _input(_user("hello", "u1")))
        await _events(agent, _input(_user("hello", "u1"), _assistant("Hi.", "m1"), _user("1+1?", "u2"),
                                    run="r2"))
        again = await _events(agent, _input(_user("hello", "u1"), _assistant("Hi.", "client-m1"),
                                            _user("1+1?", "u2"), run="r3"))
        state = await app.aget_state(cfg)
        history = [(_contents(s.values) if s.values else [], s.next, s.metadata.get("source"))
                   async for s in app.aget_state_history(cfg)]
        return again, _contents(state.values), history

    ref = differential(scenario)
    assert ref[1] == ["hello", "Hi.", "1+1?", "Two again."]


def test_a_run_sending_part_of_the_thread_continues_it(differential):
    """The client sends fewer messages than the thread holds, all known to it (ids in the
    checkpoint): a continuation, the model answers again after the thread's messages."""
    async def scenario(E):
        model = _model(_say("First answer.", "m1"), _say("Second answer.", "m2"))
        app = _chat(E, model)
        agent = _agui(E, app)
        await _events(agent, _input(_user("question", "u1")))
        again = await _events(agent, _input(_user("question", "u1"), run="r2"))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return again, _contents(state.values)

    ref = differential(scenario)
    assert ref[1] == ["question", "First answer.", "Second answer."]


# --- 8. errors -------------------------------------------------------------------------------------


def test_error_in_a_node_is_run_error(differential):
    """A node raising: RUN_STARTED, its step, then RUN_ERROR with the message."""
    async def scenario(E):
        def boom(state):
            raise ValueError("the database is down")

        g = E.StateGraph(E.MessagesState)
        g.add_node("boom", boom)
        g.add_edge(E.START, "boom")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_agui(E, app), _input(_user("go", "u1")))

    ref = differential(scenario)
    assert ref[-1]["type"] == "RUN_ERROR" and ref[-1]["message"] == "the database is down"


def test_error_after_streaming_text_is_run_error(differential):
    """The model streams, then the node raises: the text streamed, then RUN_ERROR."""
    async def scenario(E):
        model = _model(_say("partial answer", "m1"))

        async def chat(state, config):
            await model.ainvoke(state["messages"], config)
            raise RuntimeError("quota exceeded")

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await _events(_agui(E, app), _input(_user("go", "u1")))

    ref = differential(scenario)
    assert ref[-1]["type"] == "RUN_ERROR" and _text(ref) == "partial answer"


def test_error_inside_a_subgraph_is_run_error(differential):
    """A subgraph node's inner node raising: RUN_ERROR with its message; the thread keeps
    the parent's last checkpoint."""
    async def scenario(E):
        def inner(state):
            raise KeyError("missing booking")

        sub = E.StateGraph(E.MessagesState)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(E.MessagesState)
        g.add_node("booking", sub.compile())
        g.add_edge(E.START, "booking")
        app = g.compile(checkpointer=E.InMemorySaver())
        agent = _agui(E, app)
        agent.subgraphs = {"booking"}
        events = await _events(agent, _input(_user("book", "u1")))
        state = await app.aget_state({"configurable": {"thread_id": "t1"}})
        return events, _contents(state.values), state.next

    ref = differential(scenario)
    assert ref[0][-1] == {"type": "RUN_ERROR", "message": "'missing booking'"}


def test_graph_without_a_checkpointer_is_run_error(differential):
    """The agent reads the thread's state before it streams: on a graph compiled without a
    checkpointer that fails, and the client gets RUN_STARTED then RUN_ERROR with the
    engine's message. lgnb's `ValueError` adds how to fix it after LangGraph's text, so the
    message is compared as the harness compares error messages with `exc="extends"`
    (LangGraph's text kept, help added)."""
    async def scenario(E):
        app = _chat(E, _model(_say("never", "m1")), checkpointer=False)
        events = await _events(_agui(E, app), _input(_user("hi", "u1")))
        return [{**e, "message": ("raises", "RUN_ERROR", e["message"])} if e["type"] == "RUN_ERROR" else e
                for e in events]

    ref = differential(scenario, exc="extends")
    assert ref == [{"type": "RUN_STARTED", "thread_id": "t1", "run_id": "<id1>"},
                   {"type": "RUN_ERROR", "message": ("raises", "RUN_ERROR", "No checkpointer set")}]


# --- 9. schemas -------------------------------------------------------------------------------------


def test_schema_keys_from_input_output_config_and_context_schemas(differential):
    """`get_schema_keys` reads the graph's `get_input_jsonschema` / `get_output_jsonschema`
    / `get_config_jsonschema` / `get_context_jsonschema`; the snapshot shows output keys."""
    async def scenario(E):
        class In(TypedDict):
            messages: Annotated[list, E.add_messages]
            question: str

        class Out(TypedDict):
            messages: Annotated[list, E.add_messages]
            answer: str

        class S(In, Out):
            scratch: str

        class Ctx(TypedDict):
            user: str

        def chat(state):
            return {"answer": state["question"].upper(), "scratch": "x",
                    "messages": [AIMessage("ok", id="m1")]}

        g = E.StateGraph(S, input_schema=In, output_schema=Out, context_schema=Ctx)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        agent = _agui(E, app)
        keys = agent.get_schema_keys({"configurable": {"thread_id": "t1"}})
        schemas = (app.get_input_jsonschema(), app.get_output_jsonschema(), app.get_config_jsonschema(),
                   app.get_context_jsonschema())
        events = await _events(agent, _input(_user("hi", "u1"), state={"question": "why"}))
        return keys, events, schemas

    ref = differential(scenario)
    assert ref[0]["input"][:2] == ["messages", "question"]
    assert ref[0]["context"] == ["user"]


# --- 10. the FastAPI endpoint -----------------------------------------------------------------------


async def _post(app, body, path="/"):
    import httpx

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
        async with client.stream("POST", path, json=body, headers={"accept": "text/event-stream"}) as r:
            lines = [line async for line in r.aiter_lines()]
            status, ctype = r.status_code, r.headers["content-type"]
        health = (await client.get(path.rstrip("/") + "/health")).json()
    events = [_settled(json.loads(line[len("data: "):])) for line in lines if line.startswith("data: ")]
    return status, ctype, events, health


def test_fastapi_endpoint_streams_server_sent_events(differential):
    """`add_langgraph_fastapi_endpoint` served through httpx's ASGI transport: the SSE
    body (camelCase JSON per event) of a tool-calling run, and the health route."""
    async def scenario(E):
        from ag_ui_langgraph import add_langgraph_fastapi_endpoint
        from fastapi import FastAPI

        model = _model(_calls("m1", ("add", {"a": 1, "b": 1}, "c1")), _say("Two.", "m2"))
        graph = _tool_agent(E, model)
        api = FastAPI()
        add_langgraph_fastapi_endpoint(api, _agui(E, graph), path="/agent")
        body = {"threadId": "t1", "runId": "r1", "state": {}, "tools": [], "context": [],
                "forwardedProps": {}, "messages": [{"id": "u1", "role": "user", "content": "1+1?"}]}
        return await _post(api, body, "/agent")

    ref = differential(scenario)
    status, ctype, events, health = ref
    assert status == 200 and ctype.startswith("text/event-stream")
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert health == {"status": "ok", "agent": {"name": "agent"}}


def test_copilotkit_agent_behind_the_fastapi_endpoint(differential):
    """CopilotKit's agent behind the same endpoint (the endpoint clones it per request):
    two requests on a thread."""
    async def scenario(E):
        from ag_ui_langgraph import add_langgraph_fastapi_endpoint
        from copilotkit import CopilotKitState
        from fastapi import FastAPI

        model = _model(_say("Hello Ada.", "m1"), _say("Bye Ada.", "m2"))
        graph = _chat(E, model, state=CopilotKitState)
        api = FastAPI()
        add_langgraph_fastapi_endpoint(api, _copilot(E, graph), path="/")
        body = {"threadId": "t1", "runId": "r1", "state": {}, "tools": [], "context": [],
                "forwardedProps": {}, "messages": [{"id": "u1", "role": "user", "content": "hi"}]}
        first = await _post(api, body)
        body2 = {**body, "runId": "r2", "messages": [
            *body["messages"], {"id": "m1", "role": "assistant", "content": "Hello Ada."},
            {"id": "u2", "role": "user", "content": "bye"}]}
        second = await _post(api, body2)
        return first, second

    ref = differential(scenario)
    assert [m["id"] for m in [e for e in ref[1][2] if e["type"] == "MESSAGES_SNAPSHOT"][-1]["messages"]] == [
        "u1", "m1", "u2", "m2"]


def test_two_chats_at_once_through_the_endpoint(differential):
    """Two clients on two threads at the same time (the endpoint clones the agent per
    request; one graph serves both): each gets its own conversation, whole."""
    async def scenario(E):
        import asyncio

        from ag_ui_langgraph import add_langgraph_fastapi_endpoint
        from fastapi import FastAPI

        def reply(messages):
            text = messages[-1].content
            return _say(f"echo {text} back", f"a-{text}")

        graph = _chat(E, Scripted(script=reply, seen=[]))
        api = FastAPI()
        add_langgraph_fastapi_endpoint(api, _agui(E, graph), path="/")

        def body(thread, text):
            return {"threadId": thread, "runId": f"r-{thread}", "state": {}, "tools": [], "context": [],
                    "forwardedProps": {}, "messages": [{"id": f"u-{text}", "role": "user", "content": text}]}

        one, two = await asyncio.gather(_post(api, body("t1", "alpha")), _post(api, body("t2", "beta")))
        states = [_contents((await graph.aget_state({"configurable": {"thread_id": t}})).values)
                  for t in ("t1", "t2")]
        return one, two, states

    ref = differential(scenario)
    assert ref[2] == [["alpha", "echo alpha back"], ["beta", "echo beta back"]]


# --- 11. when a streamed update is read --------------------------------------------------------------


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_update_chunks_reach_astream_events_consumers_after_the_barrier(differential, saver, tmp_path):
    """The RAW events of the root graph's updates (`on_chain_stream`, chunk
    `(namespace, {node: update})`), as AG-UI serializes them when they arrive: LangGraph's
    consumer reads each after the step's barrier, so messages a node returned without an id
    (a ToolNode's ToolMessage, an AIMessage built by hand) carry the id `add_messages`
    gave them."""
    async def scenario(E):
        model = _model(_calls("m1", ("add", {"a": 1, "b": 2}, "c1")), _say("The sum is 3.", "m2"))
        out = []
        async with _asaver(E, saver, tmp_path) as checkpointer:
            app = _tool_agent(E, model, checkpointer=checkpointer)
            async for event in _agui(E, app).run(_input(_user("1+2?", "u1"))):
                raw = event.model_dump().get("event") if event.type == "RAW" else None
                chunk = (raw or {}).get("data", {}).get("chunk") if raw and raw["event"] == "on_chain_stream" else None
                if isinstance(chunk, (list, tuple)) and len(chunk) == 2 and isinstance(chunk[1], dict):
                    out.append({node: [m["id"] is not None for m in (update or {}).get("messages", [])]
                                for node, update in chunk[1].items()})
        return out

    ref = differential(scenario)
    assert ref == [{"agent": [True]}, {"tools": [True]}, {"agent": [True]}]

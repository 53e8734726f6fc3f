"""`lgnb.testing.ScriptedChatModel` streams like a real provider (text word by word, tool
calls as tool-call chunks), so an agent behaves the same under `invoke` and under
`lgnb.run`, whose messages stream makes LangChain call the model's `_stream`; and a run
view tells the user when a model it streams drops tool calls (langchain-core's
`GenericFakeChatModel`)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

import lgnb
from lgnb.testing import ScriptedChatModel

ADD_THEN_ANSWER = [
    {"content": "Let me add.", "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}]},
    "2 + 3 = 5.",
]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def react(model: Any, engine: str = "lgnb") -> Any:
    """agent <-> tools until the model stops calling tools."""
    if engine == "lgnb":
        from lgnb.graph import END as E, START as S, MessagesState as M, StateGraph as G
    else:
        from langgraph.graph import END as E, START as S, MessagesState as M, StateGraph as G

    def agent(state: dict) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state: dict) -> dict:
        calls = state["messages"][-1].tool_calls
        return {"messages": [ToolMessage(str(add.invoke(c["args"])), tool_call_id=c["id"]) for c in calls]}

    g = G(M).add_node("agent", agent).add_node("tools", tools).add_edge(S, "agent")
    g.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else E, ["tools", E])
    return g.add_edge("tools", "agent").compile()


def test_invoke_and_stream_give_the_same_message_with_its_tool_calls() -> None:
    model = ScriptedChatModel(replies=list(ADD_THEN_ANSWER))
    invoked = model.invoke([HumanMessage("hi")])
    chunks = list(ScriptedChatModel(replies=list(ADD_THEN_ANSWER)).stream([HumanMessage("hi")]))
    streamed = chunks[0]
    for c in chunks[1:]:
        streamed = streamed + c
    assert invoked.content == streamed.content == "Let me add."
    assert invoked.tool_calls == streamed.tool_calls == [
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "c1", "type": "tool_call"}]
    assert [c.content for c in chunks[:3]] == ["Let", " me", " add."]  # word by word
    assert len(chunks) > 4  # and the arguments in pieces
    assert model.invoke([HumanMessage("again")]).content == "2 + 3 = 5." and model.calls == 2
    assert model.bind_tools([add]) is model  # an agent may bind its tools: the script stays


@pytest.mark.parametrize("engine", ["lgnb", "langgraph"])
def test_an_agent_calls_its_tool_in_messages_mode_as_under_invoke(engine: str) -> None:
    invoked = react(ScriptedChatModel(replies=list(ADD_THEN_ANSWER)), engine).invoke({"messages": [("user", "2+3?")]})
    g = react(ScriptedChatModel(replies=list(ADD_THEN_ANSWER)), engine)
    tokens = [m.content for m, _ in g.stream({"messages": [("user", "2+3?")]}, stream_mode="messages")
              if isinstance(m, AIMessage) and m.content]
    final = g.invoke({"messages": [("user", "2+3?")]})  # (the script cycles: the same run again)
    assert [m.type for m in invoked["messages"]] == ["human", "ai", "tool", "ai"]
    assert [m.type for m in final["messages"]] == ["human", "ai", "tool", "ai"]
    assert final["messages"][2].content == "5"
    assert "".join(tokens).startswith("Let me add.")


def test_lgnb_run_of_an_agent_on_the_scripted_model_runs_its_tool_and_notes_nothing() -> None:
    run = lgnb.run(react(ScriptedChatModel(replies=list(ADD_THEN_ANSWER))), {"messages": [("user", "2+3?")]},
                   display=False)
    result = run.wait(30)
    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "ai"]
    shown = [m for m in run.content["messages"] if m["type"] == "ai"]
    assert shown[0]["tool_calls"][0]["name"] == "add" and shown[-1]["content"] == "2 + 3 = 5."
    assert run.view.notice == ""


def test_a_run_view_says_when_a_streamed_fake_model_drops_its_tool_calls() -> None:
    def fake() -> GenericFakeChatModel:
        return GenericFakeChatModel(messages=iter([
            AIMessage("Let me add.", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}]),
            AIMessage("5 it is.")]))

    invoked = react(fake()).invoke({"messages": [("user", "x")]})
    assert invoked["messages"][1].tool_calls and invoked["messages"][2].content == "5"  # invoke keeps them ...
    run = lgnb.run(react(fake()), {"messages": [("user", "x")]}, display=False)
    result = run.wait(30)
    assert result["messages"][-1].tool_calls == []  # ... the messages stream drops them
    assert "GenericFakeChatModel streams text only" in run.view.notice
    assert "lgnb.testing.ScriptedChatModel" in run.view.notice


def test_a_tool_call_without_text_from_the_fake_model_fails_with_the_fix_named() -> None:
    fake = GenericFakeChatModel(messages=iter([AIMessage("", tool_calls=[
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}])]))
    run = lgnb.run(react(fake), {"messages": [("user", "x")]}, display=False)
    with pytest.raises(ValueError, match="No generations found in stream"):
        run.wait(30)
    assert "lgnb.testing.ScriptedChatModel" in run.view.error["message"]


def test_a_bad_script_says_what_to_give() -> None:
    with pytest.raises(ValueError, match="has no replies"):
        ScriptedChatModel(replies=[]).invoke("x")
    with pytest.raises(ValueError, match="needs a 'name'"):
        ScriptedChatModel(replies=[{"content": "x", "tool_calls": [{"args": {}}]}]).invoke("x")
    with pytest.raises(TypeError, match="give a string or"):
        ScriptedChatModel(replies=[42]).invoke("x")


def test_text_only_replies_end_on_a_last_chunk() -> None:
    chunks = list(ScriptedChatModel(replies=["a b"]).stream("x"))
    assert [c.content for c in chunks] == ["a", " b"] and chunks[-1].chunk_position == "last"


@pytest.mark.parametrize("engine", ["lgnb", "langgraph"])
def test_two_scripted_models_in_one_graph_keep_both_replies(engine: str) -> None:
    """Each model numbers its replies from 1: with ids repeated across models, `add_messages`
    replaced one model's reply by the other's, and a multi-agent demo lost messages. The
    same holds when `calls` is reset on a thread that has earlier replies."""
    if engine == "lgnb":
        from lgnb.graph import START, MessagesState, StateGraph
    else:
        from langgraph.graph import START, MessagesState, StateGraph

    left, right = ScriptedChatModel(replies=["left says hi"]), ScriptedChatModel(replies=["right says hi"])
    g = StateGraph(MessagesState)
    g.add_node("left", lambda s: {"messages": [left.invoke(s["messages"])]})
    g.add_node("right", lambda s: {"messages": [right.invoke(s["messages"])]})
    g.add_edge(START, "left")
    g.add_edge("left", "right")
    out = g.compile().invoke({"messages": [HumanMessage("go")]})
    assert [m.content for m in out["messages"]] == ["go", "left says hi", "right says hi"]
    left.calls = 0
    again = g.compile().invoke(out)
    assert len(again["messages"]) == 5

"""An end-to-end agent loop as people write it (model node, tool node, routing on
tool_calls), driven by a scripted chat model, observed through every stream mode."""

from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from _diff import collect


class ScriptedChatModel(BaseChatModel):
    """Returns the scripted messages in turn (no token streaming: one message per call)."""

    script: list
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-test-model"

    def _generate(self, messages: list[BaseMessage], stop: Any = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        msg = self.script[self.calls % len(self.script)]
        self.calls += 1
        return ChatResult(generations=[ChatGeneration(message=msg)])


def _script():
    return [
        AIMessage(content="", id="ai-1", tool_calls=[
            {"name": "lookup", "args": {"q": "weather"}, "id": "call-1", "type": "tool_call"},
            {"name": "lookup", "args": {"q": "time"}, "id": "call-2", "type": "tool_call"},
        ]),
        AIMessage(content="It is sunny at noon.", id="ai-2"),
    ]


def _agent(E, model):
    def call_model(state):
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state, writer: E.StreamWriter):
        last = state["messages"][-1]
        out = []
        for tc in last.tool_calls:
            writer({"tool": tc["name"], "q": tc["args"]["q"]})
            out.append(ToolMessage(content=f"result for {tc['args']['q']}", tool_call_id=tc["id"],
                                   id=f"tool-{tc['id']}"))
        return {"messages": out}

    def route(state):
        return "tools" if state["messages"][-1].tool_calls else E.END

    g = E.StateGraph(E.MessagesState)
    g.add_node("agent", call_model)
    g.add_node("tools", tools)
    g.add_edge(E.START, "agent")
    g.add_conditional_edges("agent", route, ["tools", E.END])
    g.add_edge("tools", "agent")
    return g.compile()


INPUT = {"messages": [HumanMessage("weather and time?", id="h-1")]}


def test_agent_loop_final_state(differential):
    def scenario(E):
        out = _agent(E, ScriptedChatModel(script=_script())).invoke(INPUT)
        return [(m.type, m.content, getattr(m, "tool_call_id", None)) for m in out["messages"]]

    differential(scenario)


def test_agent_loop_updates_and_custom(differential):
    def scenario(E):
        return list(_agent(E, ScriptedChatModel(script=_script())).stream(INPUT, stream_mode=["updates", "custom"]))

    differential(scenario)


def test_agent_loop_messages_mode_with_non_streaming_model(differential):
    def scenario(E):
        out = _agent(E, ScriptedChatModel(script=_script())).stream(INPUT, stream_mode="messages")
        keep = ("langgraph_node", "langgraph_step", "langgraph_triggers")
        return [(m, {k: md.get(k) for k in keep}) for m, md in out]

    differential(scenario)


def test_agent_loop_v2_all_modes(differential):
    def scenario(E):
        parts = _agent(E, ScriptedChatModel(script=_script())).stream(
            INPUT, stream_mode=["values", "updates", "messages", "custom", "tasks"], version="v2"
        )
        out = []
        for p in parts:
            if p["type"] == "messages":
                m, md = p["data"]
                out.append((p["type"], p["ns"], m.type, m.content, md.get("langgraph_node")))
            else:
                out.append(p)
        return out

    differential(scenario)


def test_agent_loop_hits_recursion_limit_when_model_always_calls_tools(differential):
    def scenario(E):
        looping = ScriptedChatModel(script=[_script()[0]])
        return collect(lambda: _agent(E, looping).stream(INPUT, {"recursion_limit": 5}, stream_mode="updates"))

    differential(scenario)


def test_agent_loop_async(differential):
    async def scenario(E):
        app = _agent(E, ScriptedChatModel(script=_script()))
        chunks = [c async for c in app.astream(INPUT, stream_mode=["updates", "messages"])]
        return [(mode, (p[0].type, p[0].content) if mode == "messages" else p) for mode, p in chunks]

    differential(scenario)

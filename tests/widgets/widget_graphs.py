"""Graphs shared by the widget tests (and the notebooks they generate): the same graph
built on LangGraph or on lgnb, since the views read only the public graph protocol."""

from __future__ import annotations

import importlib
from types import SimpleNamespace
from typing import Any, Literal


def _engine(name: str) -> SimpleNamespace:
    graph = importlib.import_module(f"{name}.graph")
    types = importlib.import_module(f"{name}.types")
    config = importlib.import_module(f"{name}.config")
    memory = importlib.import_module(f"{name}.checkpoint.memory")
    return SimpleNamespace(
        name=name, StateGraph=graph.StateGraph, START=graph.START, END=graph.END,
        MessagesState=graph.MessagesState, Command=types.Command, interrupt=types.interrupt, Send=types.Send,
        get_stream_writer=config.get_stream_writer, InMemorySaver=memory.InMemorySaver,
    )



def agent_graph(eng: SimpleNamespace, model: Any, *, checkpointer: Any = None) -> Any:
    """model → tools → model until no tool call; the tool reports progress and a note."""
    from langchain_core.messages import ToolMessage

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state: Any) -> dict[str, Any]:
        writer = eng.get_stream_writer()
        for i in range(1, 4):
            writer({"progress": i / 3, "stage": "adding"})
        writer({"note": "added <b>numbers</b>"})
        calls = state["messages"][-1].tool_calls
        return {"messages": [ToolMessage(content="5", tool_call_id=c["id"], name=c["name"]) for c in calls]}

    def route(state: Any) -> Literal["tools", "__end__"]:
        return "tools" if state["messages"][-1].tool_calls else "__end__"

    builder = eng.StateGraph(eng.MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(eng.START, "agent")
    builder.add_conditional_edges("agent", route)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)

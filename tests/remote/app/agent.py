"""The graph the test server serves: a chat step (a fake model that streams tokens), a
review step that asks a human (`interrupt`), and a step that records the answer.

It is a LangGraph graph: a LangGraph server runs LangGraph's engine; lgnb is the client.
"""

from itertools import cycle
from typing import Annotated

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict

model = GenericFakeChatModel(messages=cycle([AIMessage(content="hello from the server")]))


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    verdict: str


def chat(state: State) -> State:
    return {"messages": [model.invoke(state["messages"])]}


def review(state: State) -> State:
    answer = interrupt({"question": "approve?", "draft": state["messages"][-1].content})
    return {"verdict": answer}


builder = StateGraph(State)
builder.add_node("chat", chat)
builder.add_node("review", review)
builder.add_edge(START, "chat")
builder.add_edge("chat", "review")
builder.add_edge("review", END)
graph = builder.compile()

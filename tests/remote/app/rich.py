"""A graph that uses every view of a run: a chat step whose model streams tokens, a
research step that is a compiled subgraph (two nodes: progress events and a note), and a
review step that asks a human (an interrupt with options).

It is a LangGraph graph: a LangGraph server runs LangGraph's engine; lgnb is the client.
"""

import operator
from itertools import cycle
from typing import Annotated

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict

model = GenericFakeChatModel(messages=cycle([AIMessage(content="I will look into it and report back")]))


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    notes: Annotated[list, operator.add]
    verdict: str


class Research(TypedDict, total=False):
    notes: Annotated[list, operator.add]


def gather(state: Research) -> Research:
    write = get_stream_writer()
    for i in range(1, 4):
        write({"progress": i / 3, "stage": "gathering"})
    return {"notes": ["three sources"]}


def summarize(state: Research) -> Research:
    get_stream_writer()({"note": f"summarized {len(state['notes'])} notes"})
    return {"notes": ["one summary"]}


research = (
    StateGraph(Research)
    .add_node("gather", gather)
    .add_node("summarize", summarize)
    .add_edge(START, "gather")
    .add_edge("gather", "summarize")
    .compile()
)


def chat(state: State) -> State:
    return {"messages": [model.invoke(state["messages"])]}


def review(state: State) -> State:
    return {"verdict": interrupt({"question": "ship the report?", "options": ["ship", "hold"]})}


builder = StateGraph(State)
builder.add_node("chat", chat)
builder.add_node("research", research)
builder.add_node("review", review)
builder.add_edge(START, "chat")
builder.add_edge("chat", "research")
builder.add_edge("research", "review")
builder.add_edge("review", END)
graph = builder.compile()

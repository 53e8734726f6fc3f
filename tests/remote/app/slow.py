"""A slow graph for the tests where another client's run is under way: `work` reports
progress (custom events) every `pause` seconds for `steps` steps, then `review` asks a
human (`interrupt`, with options: one click answers)."""

import time

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    steps: int
    pause: float
    done: int
    verdict: str


def work(state: State) -> State:
    write = get_stream_writer()
    steps = state.get("steps", 10)
    for i in range(steps):
        time.sleep(state.get("pause", 0.2))
        write({"step": i + 1, "of": steps})
    return {"done": steps}


def review(state: State) -> State:
    return {"verdict": interrupt({"question": f"accept {state['done']} steps?", "options": ["accept", "reject"]})}


builder = StateGraph(State)
builder.add_node("work", work)
builder.add_node("review", review)
builder.add_edge(START, "work")
builder.add_edge("work", "review")
builder.add_edge("review", END)
graph = builder.compile()

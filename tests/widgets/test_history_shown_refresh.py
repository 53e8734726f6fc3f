"""A history view that has been displayed still redraws: the snapshot mixin's "shown"
flag and the view's set of revealed checkpoints are two attributes, not one (mypy found
them sharing `_shown`; refresh then failed with `bool | set`)."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver
from typing_extensions import TypedDict

import lgnb
from lgnb.graph import END, START, StateGraph


class State(TypedDict):
    x: int


def test_a_displayed_history_view_refreshes_and_expands_after_new_runs() -> None:
    builder = StateGraph(State)
    builder.add_node("inc", lambda s: {"x": s["x"] + 1})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "shown"}}
    graph.invoke({"x": 1}, config)
    view = lgnb.history(graph, config)
    view._ipython_display_()  # what a notebook cell does with the returned view
    for x in range(2, 6):
        graph.invoke({"x": x}, config)
    view.refresh()  # raised TypeError (bool | set) once the view had been displayed
    latest = graph.get_state(config).config["configurable"]["checkpoint_id"]
    assert latest in {c["id"] for c in view.timeline["checkpoints"]}
    view.collapse_runs()
    assert latest in {c["id"] for c in view.timeline["checkpoints"]}

"""lgnb's SQLite savers as LangGraph's checkpointer: same observable results as LangGraph's own."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as LangGraphAsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    count: int
    notes: Annotated[list[str], operator.add]


def _draft(state: State) -> dict:
    return {"messages": [AIMessage("draft", id="draft")], "count": state["count"] + 1}


def _fan_out(state: State) -> list[Send]:
    return [Send("note", {"topic": t}) for t in ("a", "b")]


def _note(arg: dict) -> dict:
    return {"notes": [f"note {arg['topic']}"]}


def _review(state: State) -> dict:
    answer = interrupt({"question": "approve?", "count": state["count"]})
    return {"messages": [AIMessage(f"reviewed: {answer}", id=f"r-{answer}")], "count": state["count"] + 1}


def build(checkpointer: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("draft", _draft)
    builder.add_node("note", _note)
    builder.add_node("review", _review)
    builder.add_edge(START, "draft")
    builder.add_conditional_edges("draft", _fan_out, ["note"])
    builder.add_edge("note", "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=checkpointer)


def _values(values: dict) -> dict:
    out = dict(values)
    if "messages" in out:
        out["messages"] = [(m.type, m.content, m.id) for m in out["messages"]]
    if "__interrupt__" in out:  # interrupt ids derive from random checkpoint ids
        out["__interrupt__"] = [i.value for i in out["__interrupt__"]]
    return out


def _snapshot(s: Any) -> tuple:
    return (
        _values(s.values),
        s.next,
        s.metadata.get("source"),
        s.metadata.get("step"),
        [tuple(i.value.items()) for t in s.tasks for i in t.interrupts],
        s.parent_config is not None,
    )


def _history(graph: Any, config: dict) -> list[tuple]:
    return [_snapshot(s) for s in graph.get_state_history(config)]


INPUT = {"messages": [HumanMessage("hi", id="h1")], "count": 0}


def scenario(checkpointer: Any) -> dict:
    """Invoke, interrupt, resume, history, time travel (fork), update_state."""
    graph = build(checkpointer)
    config = {"configurable": {"thread_id": "t1"}}
    seen: dict[str, Any] = {}
    first = graph.invoke(INPUT, config)
    seen["interrupted"] = [i.value for i in first["__interrupt__"]]
    seen["paused"] = _snapshot(graph.get_state(config))
    seen["resumed"] = _values(graph.invoke(Command(resume="yes"), config))
    seen["history"] = _history(graph, config)
    before_review = next(s for s in graph.get_state_history(config) if s.next == ("review",))
    fork = graph.invoke(Command(resume="no"), before_review.config)
    seen["fork"] = _values(fork)
    seen["fork_history"] = _history(graph, config)
    updated = graph.update_state(config, {"notes": ["manual"]})
    seen["after_update"] = _snapshot(graph.get_state(updated))
    seen["replay_from_start"] = _values(
        graph.invoke(None, list(graph.get_state_history(config))[-1].config)
    )
    return seen


async def ascenario(checkpointer: Any) -> dict:
    graph = build(checkpointer)
    config = {"configurable": {"thread_id": "t1"}}
    seen: dict[str, Any] = {}
    first = await graph.ainvoke(INPUT, config)
    seen["interrupted"] = [i.value for i in first["__interrupt__"]]
    seen["resumed"] = _values(await graph.ainvoke(Command(resume="yes"), config))
    seen["history"] = [_snapshot(s) async for s in graph.aget_state_history(config)]
    return seen


def test_graph_runs_the_same_on_lgnb_and_langgraph_sqlite_savers(tmp_path: Path) -> None:
    with LangGraphSqliteSaver.from_conn_string(str(tmp_path / "theirs.sqlite")) as theirs:
        expected = scenario(theirs)
    with SqliteSaver.from_conn_string(tmp_path / "ours.sqlite") as ours:
        actual = scenario(ours)
    assert expected["interrupted"] == [{"question": "approve?", "count": 1}]
    assert expected["resumed"]["messages"][-1] == ("ai", "reviewed: yes", "r-yes")
    for key in expected:
        assert actual[key] == expected[key], key


def test_threads_survive_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "t"}}
    with SqliteSaver.from_conn_string(path) as saver:
        build(saver).invoke(INPUT, config)
    with SqliteSaver.from_conn_string(path) as saver:
        graph = build(saver)
        assert graph.get_state(config).next == ("review",)
        result = graph.invoke(Command(resume="later"), config)
    assert result["messages"][-1].content == "reviewed: later"
    assert result["notes"] == ["note a", "note b"]


async def test_async_graph_runs_the_same_on_both_async_savers(tmp_path: Path) -> None:
    async with LangGraphAsyncSqliteSaver.from_conn_string(str(tmp_path / "theirs.sqlite")) as theirs:
        expected = await ascenario(theirs)
    async with AsyncSqliteSaver.from_conn_string(tmp_path / "ours.sqlite") as ours:
        actual = await ascenario(ours)
    assert actual == expected

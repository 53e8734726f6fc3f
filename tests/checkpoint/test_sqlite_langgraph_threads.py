"""A program ported from `langgraph.checkpoint.sqlite` finds its threads in lgnb's saver.

The threads are saved by LangGraph itself (its `StateGraph` and its `SqliteSaver`, in a
real file); the same file is then opened with lgnb's `SqliteSaver`, whose tables are its
own. Each test compares what lgnb shows of the copied thread with what LangGraph shows of
the original, then goes on with the thread on lgnb.
"""

from __future__ import annotations

import asyncio
import operator
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver
from langgraph.graph import END as LG_END
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph as LangGraphStateGraph
from langgraph.graph.message import add_messages as lg_add_messages
from langgraph.types import Command as LangGraphCommand
from langgraph.types import interrupt as lg_interrupt

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.graph import END, START, StateGraph
from lgnb.graph.message import add_messages
from lgnb.types import Command, interrupt


@dataclass
class Ticket:
    title: str
    priority: int


def _chat(sg: Any, start: Any, end: Any, adder: Any) -> Any:
    Chat = TypedDict("Chat", {  # noqa: UP013 (the reducer is this function's argument)
        "messages": Annotated[list[AnyMessage], adder],
        "turns": Annotated[int, operator.add],
        "ticket": Ticket | None,
    })

    def reply(state: dict) -> dict:
        last = state["messages"][-1].content
        return {"messages": [AIMessage(f"echo: {last}")], "turns": 1,
                "ticket": Ticket(title=str(last), priority=len(state["messages"]))}

    b = sg(Chat)
    b.add_node("reply", reply)
    b.add_edge(start, "reply")
    b.add_edge("reply", end)
    return b


def _review(sg: Any, start: Any, end: Any, ask: Any) -> Any:
    """A parent whose subgraph node pauses for a human: checkpoints in two namespaces."""

    class S(TypedDict):
        draft: str
        log: Annotated[list[str], operator.add]

    def write(state: S) -> dict:
        return {"draft": state["draft"] + " (written)", "log": ["write"]}

    def approve(state: S) -> dict:
        verdict = ask({"question": "approve?", "draft": state["draft"]})
        return {"log": [f"verdict: {verdict}"]}

    sub = sg(S)
    sub.add_node("approve", approve)
    sub.add_edge(start, "approve")
    sub.add_edge("approve", end)
    b = sg(S)
    b.add_node("write", write)
    b.add_node("review", sub.compile())
    b.add_edge(start, "write")
    b.add_edge("write", "review")
    b.add_edge("review", end)
    return b


def _lg_chat() -> Any:
    return _chat(LangGraphStateGraph, LG_START, LG_END, lg_add_messages)


def _lgnb_chat() -> Any:
    return _chat(StateGraph, START, END, add_messages)


def _history(graph: Any, config: dict) -> list[tuple]:
    return [(s.config["configurable"]["checkpoint_id"],
             (s.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
             s.metadata.get("step"), s.metadata.get("source"), s.next, s.values)
            for s in graph.get_state_history(config)]


def _saved_by_langgraph(path: Path, thread: str = "chat", turns: int = 2) -> list[tuple]:
    config = {"configurable": {"thread_id": thread}}
    with LangGraphSqliteSaver.from_conn_string(str(path)) as saver:
        graph = _lg_chat().compile(checkpointer=saver)
        for i in range(turns):
            graph.invoke({"messages": [HumanMessage(f"hello {i}", id=f"h{i}")]}, config)
        return _history(graph, config)


def test_a_thread_langgraph_saved_shows_the_same_state_and_history_on_lgnb(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    theirs = _saved_by_langgraph(path)
    config = {"configurable": {"thread_id": "chat"}}
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _lgnb_chat().compile(checkpointer=saver)
        assert _history(graph, config) == theirs
        state = graph.get_state(config)
    assert state.values["turns"] == 2
    assert [m.content for m in state.values["messages"]] == [
        "hello 0", "echo: hello 0", "hello 1", "echo: hello 1"]
    assert state.values["ticket"] == Ticket(title="hello 1", priority=3)


def test_a_ported_program_continues_its_langgraph_thread(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    theirs = _saved_by_langgraph(path)
    config = {"configurable": {"thread_id": "chat"}}
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _lgnb_chat().compile(checkpointer=saver)
        out = graph.invoke({"messages": [HumanMessage("hello 2", id="h2")]}, config)
        history = _history(graph, config)
    assert out["turns"] == 3
    assert [m.content for m in out["messages"]][-2:] == ["hello 2", "echo: hello 2"]
    # the new checkpoints continue LangGraph's chain: parent, step numbers
    assert history[len(history) - len(theirs):] == theirs
    assert history[-len(theirs) - 1][1] == theirs[0][0]
    assert [h[2] for h in history[:3]] == [theirs[0][2] + 3, theirs[0][2] + 2, theirs[0][2] + 1]


def test_an_interrupted_langgraph_thread_resumes_on_lgnb_in_its_subgraph(tmp_path: Path) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "copy.sqlite"
    config = {"configurable": {"thread_id": "review"}}
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        _review(LangGraphStateGraph, LG_START, LG_END, lg_interrupt).compile(
            checkpointer=lg_saver).invoke({"draft": "plan", "log": []}, config)
    shutil.copyfile(path, copy)  # closed: no WAL left beside it
    # the control: LangGraph resumes its own thread
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        lg_graph = _review(LangGraphStateGraph, LG_START, LG_END, lg_interrupt).compile(
            checkpointer=lg_saver)
        paused = lg_graph.get_state(config, subgraphs=True)
        resumed_on_langgraph = lg_graph.invoke(LangGraphCommand(resume="yes"), config)
    with SqliteSaver.from_conn_string(copy) as saver:
        graph = _review(StateGraph, START, END, interrupt).compile(checkpointer=saver)
        mine = graph.get_state(config, subgraphs=True)
        assert mine.config == paused.config
        assert mine.next == paused.next == ("review",)
        assert [(i.value, i.id) for i in mine.interrupts] == [
            (i.value, i.id) for i in paused.interrupts]
        assert mine.tasks[0].state.values == paused.tasks[0].state.values
        assert mine.tasks[0].state.config == paused.tasks[0].state.config
        out = graph.invoke(Command(resume="yes"), config)
    assert out == resumed_on_langgraph == {
        "draft": "plan (written)", "log": ["write", "write", "verdict: yes"]}


def test_stored_classes_are_not_revived_by_the_copy_and_the_allowlist_still_applies(
    tmp_path: Path,
) -> None:
    path = tmp_path / "threads.sqlite"
    _saved_by_langgraph(path)
    config = {"configurable": {"thread_id": "chat"}}
    with SqliteSaver.from_conn_string(path) as saver:
        # no graph, so no schema names `Ticket`: the copy succeeds without loading it ...
        assert saver.import_langgraph_threads() == ["chat"]
        with pytest.raises(Exception, match="Ticket") as refused:
            saver.get_tuple(config)
        assert "allow" in str(refused.value)
    with SqliteSaver.from_conn_string(path, allow=[Ticket]) as saver:
        # ... and loads once it is allowed, as any value lgnb saved itself
        values = saver.get_tuple(config).checkpoint["channel_values"]  # type: ignore[union-attr]
    assert values["ticket"] == Ticket(title="hello 1", priority=3)


def test_each_thread_is_copied_once_and_a_deleted_one_stays_deleted(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    _saved_by_langgraph(path, thread="a", turns=1)
    _saved_by_langgraph(path, thread="b", turns=1)
    with SqliteSaver.from_conn_string(path, allow=[Ticket]) as saver:
        assert sorted({t.config["configurable"]["thread_id"] for t in saver.list(None)}) == ["a", "b"]
        assert saver.import_langgraph_threads() == []
        saver.delete_thread("a")
        assert saver.get_tuple({"configurable": {"thread_id": "a"}}) is None
    with SqliteSaver.from_conn_string(path, allow=[Ticket]) as saver:  # another session
        assert saver.get_tuple({"configurable": {"thread_id": "a"}}) is None
        assert saver.get_tuple({"configurable": {"thread_id": "b"}}) is not None
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:  # left as it was
        assert lg_saver.get_tuple({"configurable": {"thread_id": "a"}}) is not None


def test_threads_langgraph_saves_later_are_taken_in_by_import_langgraph_threads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "threads.sqlite"
    _saved_by_langgraph(path, thread="first", turns=1)
    with SqliteSaver.from_conn_string(path, allow=[Ticket]) as saver:
        assert saver.get_tuple({"configurable": {"thread_id": "first"}}) is not None
        later = _saved_by_langgraph(path, thread="later", turns=2)  # while lgnb has it open
        assert saver.import_langgraph_threads() == ["later"]
        graph = _lgnb_chat().compile(checkpointer=saver)
        assert _history(graph, {"configurable": {"thread_id": "later"}}) == later


def test_a_file_lgnb_made_copies_nothing(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "t"}}
    with SqliteSaver.from_conn_string(path) as saver:
        _lgnb_chat().compile(checkpointer=saver).invoke(
            {"messages": [HumanMessage("hi", id="h")]}, config)
        assert saver.import_langgraph_threads() == []
    tables = {r[0] for r in sqlite3.connect(path).execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "checkpoints" not in tables and "writes" not in tables


def test_the_async_saver_finds_langgraph_threads_too(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    theirs = _saved_by_langgraph(path)
    config = {"configurable": {"thread_id": "chat"}}

    async def main() -> tuple[Any, list[tuple]]:
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            graph = _lgnb_chat().compile(checkpointer=saver)
            state = await graph.aget_state(config)
            history = [(s.config["configurable"]["checkpoint_id"],
                        (s.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                        s.metadata.get("step"), s.metadata.get("source"), s.next, s.values)
                       async for s in graph.aget_state_history(config)]
            return state, history

    state, history = asyncio.run(main())
    assert history == theirs
    assert state.values["turns"] == 2


def _fold(state: list, writes: list) -> list:
    return [*state, *(x for w in writes for x in (w if isinstance(w, list) else [w]))]


def _delta_loop(sg: Any, start: Any, end: Any, delta: Any) -> Any:
    S = TypedDict("S", {"log": Annotated[list, delta(_fold, snapshot_frequency=2)]})  # noqa: UP013

    def step(state: dict) -> dict:
        return {"log": [len(state.get("log", []))]}

    b = sg(S)
    b.add_node("step", step)
    b.add_edge(start, "step")
    b.add_edge("step", end)
    return b


def test_a_delta_channel_thread_reads_back_every_checkpoints_value(tmp_path: Path) -> None:
    from langgraph.channels.delta import DeltaChannel as LangGraphDeltaChannel

    from lgnb.channels.delta import DeltaChannel

    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "delta"}}
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        lg_graph = _delta_loop(LangGraphStateGraph, LG_START, LG_END, LangGraphDeltaChannel).compile(
            checkpointer=lg_saver)
        for _ in range(4):
            lg_graph.invoke({"log": ["in"]}, config)
        theirs = _history(lg_graph, config)
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _delta_loop(StateGraph, START, END, DeltaChannel).compile(checkpointer=saver)
        assert _history(graph, config) == theirs
        out = graph.invoke({"log": ["in"]}, config)
    assert out["log"] == theirs[0][5]["log"] + ["in", len(theirs[0][5]["log"]) + 1]


def test_a_thread_id_lgnb_already_uses_is_never_mixed_with_langgraphs(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "1"}}
    with SqliteSaver.from_conn_string(path) as saver:
        _lgnb_chat().compile(checkpointer=saver).invoke(
            {"messages": [HumanMessage("mine", id="m")]}, config)
    _saved_by_langgraph(path, thread="1", turns=2)  # later, and with more checkpoints
    _saved_by_langgraph(path, thread="2", turns=1)
    with SqliteSaver.from_conn_string(path, allow=[Ticket]) as saver:
        state = _lgnb_chat().compile(checkpointer=saver).get_state(config)
        assert [m.content for m in state.values["messages"]] == ["mine", "echo: mine"]
        assert saver.import_langgraph_threads() == ["2"]


def test_a_copy_cut_short_is_finished_by_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    theirs = _saved_by_langgraph(path, turns=3)
    config = {"configurable": {"thread_id": "chat"}}
    with SqliteSaver.from_conn_string(path, allow=[Ticket]) as saver:
        saver.import_langgraph_threads()
    # as if the process had been killed mid-copy: the mark says "under way", and the
    # newer half of the checkpoints is missing
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE lgnb_imported_threads SET imported_at = NULL")
        newest = [cid for cid, *_ in theirs[: len(theirs) // 2]]
        db.executemany("DELETE FROM lgnb_checkpoints WHERE checkpoint_id = ?",
                       [(c,) for c in newest])
    db.close()
    with SqliteSaver.from_conn_string(path) as saver:
        assert _history(_lgnb_chat().compile(checkpointer=saver), config) == theirs


class Opaque:
    """No dataclass, no pydantic: LangGraph's serializer can only pickle it."""

    def __init__(self, n: int) -> None:
        self.n = n


def test_a_checkpoint_lgnb_cannot_copy_is_refused_by_name_and_nothing_is_copied(
    tmp_path: Path,
) -> None:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "pickled"}}
    S = TypedDict("S", {"box": Any})  # noqa: UP013
    b = LangGraphStateGraph(S)
    b.add_node("put", lambda s: {"box": Opaque(1)})
    b.add_edge(LG_START, "put")
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        lg_saver.serde = JsonPlusSerializer(pickle_fallback=True)
        b.compile(checkpointer=lg_saver).invoke({"box": None}, config)
        assert lg_saver.conn.execute(
            "SELECT count(*) FROM checkpoints WHERE type = 'pickle'").fetchone()[0] > 0
    _saved_by_langgraph(path, thread="fine", turns=1)
    with SqliteSaver.from_conn_string(path, allow=[Ticket]) as saver:
        with pytest.raises(ValueError, match="copy LangGraph's checkpoint .* of thread 'pickled'"):
            saver.get_tuple(config)
        assert saver.conn.execute(
            "SELECT count(*) FROM lgnb_checkpoints WHERE thread_id = 'pickled'").fetchone()[0] == 0
        # copying all of them copies the others, then names the one left and the way out
        with pytest.raises(ValueError, match=r"could not be copied .*'pickled'.*delete_thread"):
            saver.import_langgraph_threads()
        assert saver.get_tuple({"configurable": {"thread_id": "fine"}}) is not None
        saver.delete_thread("pickled")
        assert saver.import_langgraph_threads() == []
        assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {"fine"}

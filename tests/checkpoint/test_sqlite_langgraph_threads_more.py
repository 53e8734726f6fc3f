"""More of what a program ported from LangGraph does with the threads LangGraph saved.

Each thread is saved by real LangGraph (its `StateGraph` or functional API, its
`SqliteSaver` or its aiosqlite `AsyncSqliteSaver`) in a real file; the same file is then
opened with lgnb's saver. What lgnb shows (state, subgraph state, history, pending
interrupts) is compared with what LangGraph shows, and a resume on lgnb with the same
resume run by LangGraph on a copy of the file (the control: copied after both savers
closed, so no WAL is left beside it). See `_langgraph_tables` for the feature.
"""

from __future__ import annotations

import asyncio
import operator
import shutil
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as LangGraphAsyncSqliteSaver
from langgraph.func import entrypoint as lg_entrypoint
from langgraph.func import task as lg_task
from langgraph.graph import END as LG_END
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph as LangGraphStateGraph
from langgraph.types import Command as LangGraphCommand
from langgraph.types import Send as LangGraphSend
from langgraph.types import interrupt as lg_interrupt

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite._langgraph_tables import LangGraphTables
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.func import entrypoint, task
from lgnb.graph import END, START, StateGraph
from lgnb.types import Command, Send, interrupt

LG = {"sg": LangGraphStateGraph, "start": LG_START, "end": LG_END, "send": LangGraphSend,
      "interrupt": lg_interrupt, "command": LangGraphCommand}
NB = {"sg": StateGraph, "start": START, "end": END, "send": Send,
      "interrupt": interrupt, "command": Command}


@pytest.fixture
def feature_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """lgnb's saver as it was before the feature: LangGraph's tables are not looked at."""
    monkeypatch.setattr(LangGraphTables, "find", classmethod(lambda cls, conn: None))


def _ids(config: Any) -> tuple[Any, Any]:
    c = (config or {}).get("configurable", {})
    return c.get("checkpoint_ns"), c.get("checkpoint_id")


def _task(t: Any) -> tuple:
    return (t.id, t.name, tuple(t.path), repr(t.error),
            tuple((i.value, i.id) for i in t.interrupts), t.result)


def _snap(s: Any) -> tuple:
    """What a user reads off a StateSnapshot (the sub-state of a task compared too)."""
    return (_ids(s.config), _ids(s.parent_config), s.metadata, s.next, s.values,
            tuple(_task(t) for t in s.tasks),
            tuple((i.value, i.id) for i in s.interrupts),
            tuple(_sub(t.state) for t in s.tasks))


def _sub(state: Any) -> Any:
    """A task's subgraph: its config (a plain read) or its state (`subgraphs=True`)."""
    return state if state is None or isinstance(state, dict) else _snap(state)


def _out(out: dict) -> dict:
    """A run's output, its interrupts as (value, id): lgnb's `Interrupt` is its own class."""
    return {k: [(i.value, i.id) for i in v] if k == "__interrupt__" else v
            for k, v in out.items()}


def _history(graph: Any, config: dict) -> list[tuple]:
    return [_snap(s) for s in graph.get_state_history(config)]


def _count(conn_path: Path, sql: str, *args: Any) -> int:
    db = sqlite3.connect(conn_path)
    try:
        return db.execute(sql, args).fetchone()[0]
    finally:
        db.close()


# --- graphs, built the same way with LangGraph's classes and with lgnb's ---------------


def _approval(k: dict, calls: Counter) -> Any:
    """draft -> (subgraph: check -> approve, which interrupts) -> publish."""
    S = TypedDict("S", {"text": str, "log": Annotated[list[str], operator.add]})  # noqa: UP013

    def draft(state: dict) -> dict:
        calls["draft"] += 1
        return {"text": state["text"] + "!", "log": ["draft"]}

    def check(state: dict) -> dict:
        calls["check"] += 1
        return {"log": ["check"]}

    def approve(state: dict) -> dict:
        calls["approve"] += 1
        answer = k["interrupt"]({"approve": state["text"]})
        return {"log": [f"approved: {answer}"]}

    def publish(state: dict) -> dict:
        calls["publish"] += 1
        return {"log": ["publish"]}

    sub = k["sg"](S)
    sub.add_node("check", check)
    sub.add_node("approve", approve)
    sub.add_edge(k["start"], "check")
    sub.add_edge("check", "approve")
    b = k["sg"](S)
    b.add_node("draft", draft)
    b.add_node("review", sub.compile())
    b.add_node("publish", publish)
    b.add_edge(k["start"], "draft")
    b.add_edge("draft", "review")
    b.add_edge("review", "publish")
    b.add_edge("publish", k["end"])
    return b


def _fan_out(k: dict, calls: Counter, ask: tuple[str, ...] = ("b",)) -> Any:
    """Send one `work` task per item; the items in `ask` wait for a human."""
    S = TypedDict("S", {"items": list[str], "done": Annotated[list[str], operator.add]})  # noqa: UP013

    def work(arg: dict) -> dict:
        item = arg["item"]
        calls[item] += 1
        if item in ask:
            return {"done": [f"{item}={k['interrupt']({'item': item})}"]}
        return {"done": [item]}

    b = k["sg"](S)
    b.add_node("work", work)
    b.add_conditional_edges(
        k["start"], lambda s: [k["send"]("work", {"item": i}) for i in s["items"]], ["work"])
    b.add_edge("work", k["end"])
    return b


def _two_questions(k: dict, calls: Counter) -> Any:
    """Two nodes of one step, each paused on its own interrupt, then a join."""
    S = TypedDict("S", {"log": Annotated[list[str], operator.add]})  # noqa: UP013

    def ask(name: str) -> Any:
        def node(state: dict) -> dict:
            calls[name] += 1
            return {"log": [f"{name}: {k['interrupt'](f'{name}?')}"]}
        return node

    def join(state: dict) -> dict:
        calls["join"] += 1
        return {"log": ["join"]}

    b = k["sg"](S)
    b.add_node("left", ask("left"))
    b.add_node("right", ask("right"))
    b.add_node("join", join)
    b.add_edge(k["start"], "left")
    b.add_edge(k["start"], "right")
    b.add_edge(["left", "right"], "join")
    b.add_edge("join", k["end"])
    return b


def _steps(k: dict) -> Any:
    S = TypedDict("S", {"n": int, "log": Annotated[list[str], operator.add]})  # noqa: UP013
    b = k["sg"](S)
    b.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
    b.add_node("b", lambda s: {"n": s["n"] * 10, "log": ["b"]})
    b.add_edge(k["start"], "a")
    b.add_edge("a", "b")
    b.add_edge("b", k["end"])
    return b


def _saved_then_copied(path: Path, copy: Path, save: Any) -> None:
    """`save(saver)` with LangGraph's SqliteSaver on `path`, then `path` copied to `copy`."""
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        save(lg_saver)
    shutil.copyfile(path, copy)


# --- the tests ----------------------------------------------------------------------------


def test_a_thread_langgraphs_async_saver_made_reads_and_resumes_on_lgnbs_sync_and_async_savers(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "async"}}
    lg_calls: Counter = Counter()

    async def save_with_aiosqlite() -> list[tuple]:
        async with LangGraphAsyncSqliteSaver.from_conn_string(str(path)) as lg_saver:
            graph = _approval(LG, lg_calls).compile(checkpointer=lg_saver)
            await graph.ainvoke({"text": "hi", "log": []}, config)
            return [_snap(s) async for s in graph.aget_state_history(config)]

    theirs = asyncio.run(save_with_aiosqlite())
    shutil.copyfile(path, copy)

    async def control() -> tuple[Any, Any]:
        async with LangGraphAsyncSqliteSaver.from_conn_string(str(copy)) as lg_saver:
            graph = _approval(LG, lg_calls).compile(checkpointer=lg_saver)
            paused = _snap(await graph.aget_state(config, subgraphs=True))
            return paused, await graph.ainvoke(LangGraphCommand(resume="ok"), config)

    paused, resumed_by_langgraph = asyncio.run(control())

    with SqliteSaver.from_conn_string(path) as saver:  # the sync saver reads it
        graph = _approval(NB, Counter()).compile(checkpointer=saver)
        assert _history(graph, config) == theirs
        assert _snap(graph.get_state(config, subgraphs=True)) == paused

    calls: Counter = Counter()

    async def resume_on_lgnb() -> Any:
        async with AsyncSqliteSaver.from_conn_string(path) as saver:  # and the async one
            graph = _approval(NB, calls).compile(checkpointer=saver)
            assert [_snap(s) async for s in graph.aget_state_history(config)] == theirs
            assert _snap(await graph.aget_state(config, subgraphs=True)) == paused
            return await graph.ainvoke(Command(resume="ok"), config)

    assert asyncio.run(resume_on_lgnb()) == resumed_by_langgraph == {
        # the subgraph's state includes the parent's log, so "draft" comes back with it
        "text": "hi!", "log": ["draft", "draft", "check", "approved: ok", "publish"]}
    assert calls == Counter(approve=1, publish=1)  # draft and check are not run again


def _functional(entry: Any, tsk: Any, ask: Any, saver: Any, calls: Counter) -> Any:
    @tsk
    def outline(topic: str) -> str:
        calls["outline"] += 1
        return f"outline of {topic}"

    @tsk
    def review(text: str) -> str:
        calls["review"] += 1
        return f"{text} / {ask({'review': text})}"

    @entry(checkpointer=saver)
    def essay(topic: str, *, previous: Any = None) -> dict:
        first = outline(topic).result()
        return {"text": review(first).result(), "before": previous}

    return essay


def test_a_functional_api_thread_paused_in_a_task_resumes_on_lgnb_and_keeps_previous(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "essay"}}
    lg_calls: Counter = Counter()

    def save(lg_saver: Any) -> None:
        flow = _functional(lg_entrypoint, lg_task, lg_interrupt, lg_saver, lg_calls)
        flow.invoke("owls", config)
        flow.invoke(LangGraphCommand(resume="fine"), config)
        flow.invoke("bats", config)  # the second run: paused again, with `previous` set

    _saved_then_copied(path, copy, save)
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        flow = _functional(lg_entrypoint, lg_task, lg_interrupt, lg_saver, lg_calls)
        theirs = _history(flow, config)
        paused = _snap(flow.get_state(config))
        lg_calls.clear()
        resumed_by_langgraph = flow.invoke(LangGraphCommand(resume="good"), config)
        langgraph_ran = Counter(lg_calls)

    calls: Counter = Counter()
    with SqliteSaver.from_conn_string(path) as saver:
        flow = _functional(entrypoint, task, interrupt, saver, calls)
        assert _history(flow, config) == theirs
        mine = flow.get_state(config)
        assert _snap(mine) == paused
        assert [i.value for i in mine.interrupts] == [{"review": "outline of bats"}]
        out = flow.invoke(Command(resume="good"), config)
    assert out == resumed_by_langgraph == {
        "text": "outline of bats / good",
        "before": {"text": "outline of owls / fine", "before": None}}
    assert calls == langgraph_ran == Counter(review=1)  # the finished task is not run again


def test_a_send_fan_out_paused_in_one_branch_keeps_the_finished_branches_on_lgnb(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "fan"}}
    items = {"items": ["a", "b", "c", "d"], "done": []}
    saved: Counter = Counter()
    _saved_then_copied(path, copy, lambda s: _fan_out(LG, saved).compile(checkpointer=s).invoke(
        items, config))
    assert saved == Counter(a=1, b=1, c=1, d=1)
    lg_calls: Counter = Counter()
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        graph = _fan_out(LG, lg_calls).compile(checkpointer=lg_saver)
        paused = _snap(graph.get_state(config))
        theirs = _history(graph, config)
        resumed_by_langgraph = graph.invoke(LangGraphCommand(resume="yes"), config)

    calls: Counter = Counter()
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _fan_out(NB, calls).compile(checkpointer=saver)
        assert _snap(graph.get_state(config)) == paused
        assert _history(graph, config) == theirs
        out = graph.invoke(Command(resume="yes"), config)
    assert out == resumed_by_langgraph
    assert sorted(out["done"]) == ["a", "b=yes", "c", "d"]
    assert calls == lg_calls == Counter(b=1)  # a, c and d ran once, under LangGraph


def test_two_interrupts_pending_at_once_resume_on_lgnb_by_their_langgraph_ids(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "two"}}
    _saved_then_copied(path, copy, lambda s: _two_questions(LG, Counter()).compile(
        checkpointer=s).invoke({"log": []}, config))
    lg_calls: Counter = Counter()
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        graph = _two_questions(LG, lg_calls).compile(checkpointer=lg_saver)
        paused = graph.get_state(config)
        ids = {i.value: i.id for i in paused.interrupts}
        # one answered first: the other stays pending
        half = _out(graph.invoke(LangGraphCommand(resume={ids["right?"]: "R"}), config))
        half_state = _snap(graph.get_state(config))
        resumed_by_langgraph = graph.invoke(LangGraphCommand(resume={ids["left?"]: "L"}), config)
    assert set(ids) == {"left?", "right?"}

    calls: Counter = Counter()
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _two_questions(NB, calls).compile(checkpointer=saver)
        mine = graph.get_state(config)
        assert _snap(mine) == _snap(paused)
        assert _out(graph.invoke(Command(resume={ids["right?"]: "R"}), config)) == half
        assert _snap(graph.get_state(config)) == half_state
        out = graph.invoke(Command(resume={ids["left?"]: "L"}), config)
    assert out == resumed_by_langgraph == {"log": ["left: L", "right: R", "join"]}
    assert calls == lg_calls


def test_both_pending_interrupts_answered_in_one_map_on_lgnb(tmp_path: Path) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "two"}}
    _saved_then_copied(path, copy, lambda s: _two_questions(LG, Counter()).compile(
        checkpointer=s).invoke({"log": []}, config))
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        graph = _two_questions(LG, Counter()).compile(checkpointer=lg_saver)
        answers = {i.id: i.value.upper() for i in graph.get_state(config).interrupts}
        resumed_by_langgraph = graph.invoke(LangGraphCommand(resume=answers), config)
    with SqliteSaver.from_conn_string(path) as saver:
        out = _two_questions(NB, Counter()).compile(checkpointer=saver).invoke(
            Command(resume=answers), config)
    assert out == resumed_by_langgraph == {"log": ["left: LEFT?", "right: RIGHT?", "join"]}


def test_forks_langgraph_made_show_as_branches_and_forking_on_lgnb_matches_langgraph(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "forks"}}

    def save(lg_saver: Any) -> None:
        graph = _steps(LG).compile(checkpointer=lg_saver)
        graph.invoke({"n": 1, "log": []}, config)
        after_a = next(s for s in graph.get_state_history(config) if s.next == ("b",))
        fork = graph.update_state(after_a.config, {"n": 100}, as_node="a")  # a branch
        graph.invoke(None, fork)
        graph.update_state(config, {"log": ["note"]})  # and an edit on the latest

    _saved_then_copied(path, copy, save)

    def fork_old(graph: Any) -> tuple[Any, list]:
        first = [s for s in graph.get_state_history(config) if s.next == ("a",)][-1]
        fork = graph.update_state(first.config, {"n": 7, "log": ["edited"]}, as_node="__start__")
        out = graph.invoke(None, fork)
        shape = [(s.metadata["step"], s.metadata["source"], s.next, s.values)
                 for s in graph.get_state_history(config)]
        return out, shape

    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        graph = _steps(LG).compile(checkpointer=lg_saver)
        theirs = _history(graph, config)
        by_langgraph = fork_old(graph)
    parents = [p for (_, p, *_rest) in theirs]
    assert len(parents) != len(set(parents))  # the file has a branch point
    oldest = {"configurable": {"thread_id": "forks", "checkpoint_id": theirs[-1][0][1]}}
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        at_oldest = _snap(_steps(LG).compile(checkpointer=lg_saver).get_state(oldest))
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _steps(NB).compile(checkpointer=saver)
        # the first read names a checkpoint by its LangGraph id (kept by the user's UI)
        # (all but the snapshot's config: LangGraph's savers hand back the caller's
        # config, without checkpoint_ns, where lgnb's gives the stored one, with ns "")
        mine = _snap(graph.get_state(oldest))
        assert mine[0][1] == at_oldest[0][1] and mine[1:] == at_oldest[1:]
        assert _history(graph, config) == theirs
        assert fork_old(graph) == by_langgraph
    assert by_langgraph[0] == {"n": 80, "log": ["edited", "a", "b"]}


def test_a_thread_of_two_thousand_checkpoints_is_copied_whole(
    tmp_path: Path,
) -> None:
    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "long"}, "recursion_limit": 5000}
    steps = 2000
    S = TypedDict("S", {"n": int, "notes": Annotated[list[str], operator.add]})  # noqa: UP013

    def build(k: dict) -> Any:
        b = k["sg"](S)
        b.add_node("tick", lambda s: {"n": s["n"] + 1,
                                      "notes": [f"n={s['n']}"] if s["n"] % 100 == 0 else []})
        b.add_edge(k["start"], "tick")
        b.add_conditional_edges("tick", lambda s: "tick" if s["n"] < steps else k["end"])
        return b

    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        graph = build(LG).compile(checkpointer=lg_saver)
        graph.invoke({"n": 0, "notes": []}, config)
        theirs = _history(graph, config)
    assert len(theirs) == steps + 2
    with SqliteSaver.from_conn_string(path) as saver:
        graph = build(NB).compile(checkpointer=saver)
        state = graph.get_state(config)  # the first read copies the thread, a page at a time
        assert state.values == theirs[0][4] and state.values["n"] == steps
        assert _history(graph, config) == theirs


def _three_threads(lg_saver: Any) -> None:
    graph = _steps(LG).compile(checkpointer=lg_saver)
    for i, thread in enumerate(["a", "b", "c"]):
        graph.invoke({"n": i, "log": []},
                     {"configurable": {"thread_id": thread}, "metadata": {"user": thread}})


def test_copy_prune_and_delete_on_never_read_langgraph_threads(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        _three_threads(lg_saver)
        graph = _steps(LG).compile(checkpointer=lg_saver)
        theirs = {t: _history(graph, {"configurable": {"thread_id": t}}) for t in "abc"}

    def cfg(t: str) -> dict:
        return {"configurable": {"thread_id": t}}

    with SqliteSaver.from_conn_string(path) as saver:
        graph = _steps(NB).compile(checkpointer=saver)
        saver.copy_thread("a", "a2")  # neither thread read before
        saver.prune(["b"], strategy="keep_latest")
        saver.delete_thread("c")
        assert _history(graph, cfg("a")) == theirs["a"]
        copied = _history(graph, cfg("a2"))
        assert [s[1:] for s in copied] == [s[1:] for s in theirs["a"]]  # same ids, other thread
        pruned = _history(graph, cfg("b"))
        assert [s[0] for s in pruned] == [theirs["b"][0][0]] and pruned[0][4] == theirs["b"][0][4]
        assert graph.get_state(cfg("c")).values == {}
        assert list(saver.list(cfg("c"))) == []
    with SqliteSaver.from_conn_string(path) as saver:  # the next session sees the same
        assert saver.get_tuple(cfg("c")) is None
        assert len(list(saver.list(cfg("b")))) == 1
        assert sorted({t.config["configurable"]["thread_id"] for t in saver.list(None)}) == [
            "a", "a2", "b"]
    assert _count(path, "SELECT count(DISTINCT thread_id) FROM checkpoints") == 3  # untouched


def test_list_with_filter_before_and_limit_on_copied_threads_matches_langgraphs_list(
    tmp_path: Path,
) -> None:
    path = tmp_path / "threads.sqlite"

    def rows(tuples: Any) -> list[tuple]:
        return [(t.config["configurable"]["thread_id"], *_ids(t.config), _ids(t.parent_config),
                 t.metadata, t.checkpoint["channel_values"], sorted(t.pending_writes or []))
                for t in tuples]

    def lists(saver: Any) -> dict[str, list]:
        b = {"configurable": {"thread_id": "b"}}
        newest = next(iter(saver.list(b)))
        return {
            "user b": rows(saver.list(None, filter={"user": "b"})),
            "inputs": rows(saver.list(None, filter={"source": "input"})),
            "step 1 of a": rows(saver.list({"configurable": {"thread_id": "a"}},
                                           filter={"step": 1})),
            "b before newest, 2": rows(saver.list(b, before=newest.config, limit=2)),
            "c limit 1": rows(saver.list({"configurable": {"thread_id": "c"}}, limit=1)),
            "all": rows(saver.list(None)),
        }

    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        _three_threads(lg_saver)
        theirs = lists(lg_saver)
    assert len(theirs["user b"]) == 4 and len(theirs["inputs"]) == 3
    with SqliteSaver.from_conn_string(path) as saver:
        mine = lists(saver)
    for key in theirs:
        assert mine[key] == theirs[key], key


def test_two_lgnb_savers_reading_one_langgraph_thread_at_once_copy_it_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "shared"}, "recursion_limit": 500}
    S = TypedDict("S", {"n": int})  # noqa: UP013

    def build(k: dict) -> Any:
        b = k["sg"](S)
        b.add_node("tick", lambda s: {"n": s["n"] + 1})
        b.add_edge(k["start"], "tick")
        b.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 300 else k["end"])
        return b

    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        graph = build(LG).compile(checkpointer=lg_saver)
        graph.invoke({"n": 0}, config)
        theirs = _history(graph, config)
    barrier = threading.Barrier(2)
    seen: dict[int, Any] = {}

    def reader(i: int) -> None:
        try:
            with SqliteSaver.from_conn_string(path) as saver:
                graph = build(NB).compile(checkpointer=saver)
                barrier.wait()
                seen[i] = _history(graph, config)
        except BaseException as exc:  # reported below
            seen[i] = exc

    workers = [threading.Thread(target=reader, args=(i,)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert seen[0] == theirs and seen[1] == theirs
    assert _count(path, "SELECT count(*) FROM lgnb_checkpoints WHERE thread_id = 'shared'") == len(
        theirs)
    with SqliteSaver.from_conn_string(path) as saver:  # and a run continues it
        out = build(NB).compile(checkpointer=saver).invoke({"n": 299}, config)
    assert out == {"n": 300}


def test_concurrent_first_reads_on_one_async_saver_all_see_the_whole_thread(
    tmp_path: Path,
) -> None:
    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "busy"}}
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        graph = _fan_out(LG, Counter()).compile(checkpointer=lg_saver)
        for i in range(3):
            graph.invoke({"items": [f"x{i}", f"y{i}"], "done": []}, config)
        theirs = _history(graph, config)

    async def main() -> list[Any]:
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            graph = _fan_out(NB, Counter()).compile(checkpointer=saver)

            async def read() -> list[tuple]:
                return [_snap(s) async for s in graph.aget_state_history(config)]

            return await asyncio.gather(*(read() for _ in range(6)))

    assert all(seen == theirs for seen in asyncio.run(main()))
    assert _count(path, "SELECT count(*) FROM lgnb_checkpoints WHERE thread_id = 'busy'") == len(
        theirs)


def test_the_history_widget_draws_a_langgraph_thread_and_forks_it(tmp_path: Path) -> None:
    from lgnb import history

    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "widget"}}
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        graph = _approval(LG, Counter()).compile(checkpointer=lg_saver)
        graph.invoke({"text": "hi", "log": []}, config)
        theirs = list(graph.get_state_history(config))
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _approval(NB, Counter()).compile(checkpointer=saver)
        view = history(graph, config)  # the first read of the thread
        assert view.error == ""
        drawn = view.timeline["checkpoints"]
        assert sorted(c["id"] for c in drawn) == sorted(
            s.config["configurable"]["checkpoint_id"] for s in theirs)
        old = next(s for s in theirs if s.next == ("review",))
        view._msg_select({"id": old.config["configurable"]["checkpoint_id"]})
        assert view.details["values"] == old.values
        assert view.details["next"] == ["review"]
        view._msg_fork({"kind": "fork", "id": old.config["configurable"]["checkpoint_id"]})
        assert view.error == "" and len(view.model.checkpoints) == len(theirs) + 1
        view.close()


def _drop_task_path(path: Path) -> None:
    """Make `writes` as LangGraph's saver made it before it had `task_path`."""
    db = sqlite3.connect(path)
    with db:
        db.executescript("""
            CREATE TABLE old_writes (
                thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL,
                channel TEXT NOT NULL, type TEXT, value BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
            INSERT INTO old_writes SELECT thread_id, checkpoint_ns, checkpoint_id, task_id,
                idx, channel, type, value FROM writes;
            DROP TABLE writes;
            ALTER TABLE old_writes RENAME TO writes;
        """)
    db.close()


def test_a_file_from_before_langgraph_stored_task_paths_is_copied_and_resumes(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "old"}}
    items = {"items": ["a", "b", "c"], "done": []}
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        _fan_out(LG, Counter(), ask=("a", "c")).compile(checkpointer=lg_saver).invoke(items, config)
    _drop_task_path(path)
    assert "task_path" not in {r[1] for r in sqlite3.connect(path).execute(
        "PRAGMA table_info(writes)")}
    shutil.copyfile(path, copy)
    lg_calls: Counter = Counter()
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:  # it migrates its copy
        graph = _fan_out(LG, lg_calls, ask=("a", "c")).compile(checkpointer=lg_saver)
        paused = _snap(graph.get_state(config))
        answers = {i.id: i.value["item"].upper() for i in graph.get_state(config).interrupts}
        resumed_by_langgraph = graph.invoke(LangGraphCommand(resume=answers), config)
    calls: Counter = Counter()
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _fan_out(NB, calls, ask=("a", "c")).compile(checkpointer=saver)
        assert _snap(graph.get_state(config)) == paused
        out = graph.invoke(Command(resume=answers), config)
    assert out == resumed_by_langgraph
    assert sorted(out["done"]) == ["a=A", "b", "c=C"]
    assert calls == lg_calls == Counter(a=1, c=1)


def _flaky_pair(k: dict, calls: Counter, fail: list[bool]) -> Any:
    """`ok` and `flaky` run in one step; `flaky` raises while `fail[0]` is True, once `ok`
    has ended and had time to be saved: LangGraph saves a task's writes from its done
    callback, and a sibling ending after the failure ended the run is not saved (its
    callback finds the run's pool shut down), so the saved thread would vary by timing."""
    S = TypedDict("S", {"log": Annotated[list[str], operator.add]})  # noqa: UP013
    ok_ended = threading.Event()

    def ok(state: dict) -> dict:
        calls["ok"] += 1
        ok_ended.set()
        return {"log": ["ok"]}

    def flaky(state: dict) -> dict:
        calls["flaky"] += 1
        if fail[0]:
            ok_ended.wait(5)
            time.sleep(0.2)
            raise RuntimeError("service down")
        return {"log": ["flaky"]}

    b = k["sg"](S)
    b.add_node("ok", ok)
    b.add_node("flaky", flaky)
    b.add_edge(k["start"], "ok")
    b.add_edge(k["start"], "flaky")
    b.add_edge(["ok", "flaky"], k["end"])
    return b


def test_a_run_that_failed_under_langgraph_is_retried_on_lgnb_without_rerunning_the_node_that_finished(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "failed"}}

    def save(lg_saver: Any) -> None:
        with pytest.raises(RuntimeError, match="service down"):
            _flaky_pair(LG, Counter(), [True]).compile(checkpointer=lg_saver).invoke(
                {"log": []}, config)

    _saved_then_copied(path, copy, save)
    lg_calls: Counter = Counter()
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        graph = _flaky_pair(LG, lg_calls, [False]).compile(checkpointer=lg_saver)
        failed = _snap(graph.get_state(config))
        retried_by_langgraph = graph.invoke(None, config)
    calls: Counter = Counter()
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _flaky_pair(NB, calls, [False]).compile(checkpointer=saver)
        assert _snap(graph.get_state(config)) == failed
        out = graph.invoke(None, config)
    assert out == retried_by_langgraph == {"log": ["flaky", "ok"]}
    assert calls == lg_calls == Counter(flaky=1)


@pytest.mark.usefixtures("feature_off")
def test_without_the_copy_a_ported_program_finds_none_of_these_threads(tmp_path: Path) -> None:
    """The check that the tests above test the feature: switched off, the thread is gone."""
    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "fan"}}
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        _fan_out(LG, Counter()).compile(checkpointer=lg_saver).invoke(
            {"items": ["a", "b"], "done": []}, config)
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _fan_out(NB, Counter()).compile(checkpointer=saver)
        assert graph.get_state(config).values == {}
        assert list(saver.list(None)) == []


def test_import_takes_in_a_thread_lgnb_looked_at_before_langgraph_saved_it(tmp_path: Path) -> None:
    """A notebook reads thread "x" (empty), an old LangGraph script then saves "x", and
    `import_langgraph_threads()` is what the README says brings it in."""
    path = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "x"}}
    with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
        lg_saver.setup()  # LangGraph's tables, no thread yet
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _steps(NB).compile(checkpointer=saver)
        assert graph.get_state(config).values == {}
        with LangGraphSqliteSaver.from_conn_string(str(path)) as lg_saver:
            lg_graph = _steps(LG).compile(checkpointer=lg_saver)
            lg_graph.invoke({"n": 1, "log": []}, config)
            theirs = _history(lg_graph, config)
        assert saver.import_langgraph_threads() == ["x"]
        assert _history(graph, config) == theirs


def test_one_interrupt_answered_under_langgraph_and_the_other_on_lgnb(tmp_path: Path) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "two"}}
    ids: dict[str, str] = {}

    def save(lg_saver: Any) -> None:
        graph = _two_questions(LG, Counter()).compile(checkpointer=lg_saver)
        graph.invoke({"log": []}, config)
        ids.update({i.value: i.id for i in graph.get_state(config).interrupts})
        graph.invoke(LangGraphCommand(resume={ids["right?"]: "R"}), config)  # one answered

    _saved_then_copied(path, copy, save)
    lg_calls: Counter = Counter()
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        graph = _two_questions(LG, lg_calls).compile(checkpointer=lg_saver)
        paused = _snap(graph.get_state(config))
        resumed_by_langgraph = graph.invoke(LangGraphCommand(resume={ids["left?"]: "L"}), config)
    calls: Counter = Counter()
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _two_questions(NB, calls).compile(checkpointer=saver)
        mine = graph.get_state(config)
        assert _snap(mine) == paused and [i.value for i in mine.interrupts] == ["left?"]
        out = graph.invoke(Command(resume={ids["left?"]: "L"}), config)
    assert out == resumed_by_langgraph == {"log": ["left: L", "right: R", "join"]}
    assert calls == lg_calls == Counter(left=1, join=1)  # right's answer was not asked again


def _remembering(k: dict) -> Any:
    """A parent whose subgraph keeps its own memory across runs (`checkpointer=True`)."""
    Sub = TypedDict("Sub", {"q": str, "seen": Annotated[list[str], operator.add]})  # noqa: UP013
    S = TypedDict("S", {"q": str, "answers": Annotated[list[str], operator.add]})  # noqa: UP013
    sb = k["sg"](Sub)
    sb.add_node("remember", lambda s: {"seen": [s["q"]]})
    sb.add_edge(k["start"], "remember")
    sub = sb.compile(checkpointer=True)

    def ask(state: dict) -> dict:
        return {"answers": [",".join(sub.invoke({"q": state["q"]})["seen"])]}

    b = k["sg"](S)
    b.add_node("ask", ask)
    b.add_edge(k["start"], "ask")
    return b


def test_a_subgraphs_own_memory_saved_by_langgraph_goes_on_on_lgnb(tmp_path: Path) -> None:
    path, copy = tmp_path / "threads.sqlite", tmp_path / "control.sqlite"
    config = {"configurable": {"thread_id": "memory"}}

    def save(lg_saver: Any) -> None:
        graph = _remembering(LG).compile(checkpointer=lg_saver)
        graph.invoke({"q": "a", "answers": []}, config)
        graph.invoke({"q": "b"}, config)

    _saved_then_copied(path, copy, save)
    assert {ns for (ns,) in sqlite3.connect(path).execute(
        "SELECT DISTINCT checkpoint_ns FROM checkpoints")} == {"", "ask"}
    with LangGraphSqliteSaver.from_conn_string(str(copy)) as lg_saver:
        graph = _remembering(LG).compile(checkpointer=lg_saver)
        theirs = _history(graph, config)
        sub_theirs = _history(graph, {"configurable": {"thread_id": "memory",
                                                       "checkpoint_ns": "ask"}})
        continued_by_langgraph = graph.invoke({"q": "c"}, config)
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _remembering(NB).compile(checkpointer=saver)
        assert _history(graph, {"configurable": {"thread_id": "memory",
                                                 "checkpoint_ns": "ask"}}) == sub_theirs
        assert _history(graph, config) == theirs
        out = graph.invoke({"q": "c"}, config)
    assert out == continued_by_langgraph == {"q": "c", "answers": ["a", "a,b", "a,b,c"]}

"""durability="async": the save of a checkpoint overlaps the next super-step.

LangGraph's default durability writes a step's checkpoint while the next step runs. lgnb
does the same for steps whose nodes are not known to be quick (`lgnb.pregel._background`):
these tests pin what that promises — the overlap itself, the order of saves, at most one
checkpoint in flight, everything saved before the run answers, a failed save reaching the
run — on lgnb's real SQLite saver (sync and async), with `put` instrumented by a subclass.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import operator
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import pytest
from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.graph import START, StateGraph
from lgnb.types import interrupt


class S(TypedDict):
    log: Annotated[list, operator.add]


class Watch:
    """What happened, in order: ("put-start"/"put-end", step) and ("node", name, step)."""

    def __init__(self, *, put_delay: float = 0.0, fail_at_step: int | None = None,
                 put_waits_for_next_node: bool = False) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()
        self.put_started: dict[int, threading.Event] = {}
        self.node_started: dict[int, threading.Event] = {}
        self.put_delay = put_delay
        self.fail_at_step = fail_at_step
        # each put waits (up to 0.5 s) for a node of the next step to start, and notes
        # whether one did: only a save running beside the next step can see it
        self.put_waits_for_next_node = put_waits_for_next_node
        self.saw_next_node: dict[int, bool] = {}

    def add(self, *event: Any) -> None:
        with self.lock:
            self.events.append(event)

    def started(self, step: int) -> threading.Event:
        with self.lock:
            return self.put_started.setdefault(step, threading.Event())

    def node_of_step(self, step: int) -> threading.Event:
        with self.lock:
            return self.node_started.setdefault(step, threading.Event())

    def before_put(self, metadata: dict) -> int:
        step = metadata["step"]
        self.add("put-start", step)
        self.started(step).set()
        if self.put_waits_for_next_node and step >= 0:
            self.saw_next_node[step] = self.node_of_step(step + 1).wait(0.5)
        if self.fail_at_step == step:
            raise OSError(f"disk full while saving step {step}")
        time.sleep(self.put_delay)
        return step


class WatchedSaver(SqliteSaver):
    watch: Watch

    def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[override]
        step = self.watch.before_put(metadata)
        try:
            return super().put(config, checkpoint, metadata, new_versions)
        finally:
            self.watch.add("put-end", step)


class AsyncWatchedSaver(AsyncSqliteSaver):
    watch: Watch

    async def aput(self, config, checkpoint, metadata, new_versions):  # type: ignore[override]
        step = await asyncio.to_thread(self.watch.before_put, metadata)
        try:
            return await super().aput(config, checkpoint, metadata, new_versions)
        finally:
            self.watch.add("put-end", step)


@contextmanager
def _saver(tmp_path, watch: Watch) -> Iterator[WatchedSaver]:
    saver = WatchedSaver(tmp_path / "threads.sqlite")
    saver.watch = watch
    try:
        yield saver
    finally:
        saver.close()


def _chain(saver: Any, watch: Watch, names: list[str]) -> Any:
    """START -> names[0] -> ... ; each node notes its start and logs itself."""
    b = StateGraph(S)

    def make(name: str) -> Any:
        def node(state: S, config: RunnableConfig) -> dict:
            step = config["metadata"]["langgraph_step"]
            watch.add("node", name, step)
            watch.node_of_step(step).set()
            time.sleep(0.002)  # slower than the inline threshold: a real node's pace
            return {"log": [name]}

        return node

    prev = START
    for name in names:
        b.add_node(name, make(name))
        b.add_edge(prev, name)
        prev = name
    return b.compile(checkpointer=saver)


def test_async_durability_writes_a_checkpoint_while_the_next_step_runs(tmp_path):
    watch = Watch(put_waits_for_next_node=True)
    with _saver(tmp_path, watch) as saver:
        graph = _chain(saver, watch, ["a", "b", "c"])
        out = graph.invoke({"log": []}, {"configurable": {"thread_id": "t"}}, durability="async")
    assert out["log"] == ["a", "b", "c"]
    # the saves of the input, a's and b's checkpoints each saw the next step's node start
    assert watch.saw_next_node == {0: True, 1: True, 2: True, 3: False}


def test_sync_durability_saves_each_checkpoint_before_the_next_step(tmp_path):
    watch = Watch(put_waits_for_next_node=True)
    with _saver(tmp_path, watch) as saver:
        graph = _chain(saver, watch, ["a", "b"])
        graph.invoke({"log": []}, {"configurable": {"thread_id": "t"}}, durability="sync")
    assert watch.saw_next_node == {0: False, 1: False, 2: False}
    node_b = watch.events.index(("node", "b", 2))
    assert watch.events.index(("put-end", 1)) < node_b


def test_async_durability_keeps_at_most_one_checkpoint_in_flight(tmp_path):
    watch = Watch(put_delay=0.03)  # a slow disk: saves take longer than the nodes
    with _saver(tmp_path, watch) as saver:
        graph = _chain(saver, watch, ["a", "b", "c", "d", "e"])
        graph.invoke({"log": []}, {"configurable": {"thread_id": "t"}}, durability="async")
    events = watch.events
    # saves never overlap each other, and run in step order
    puts = [e for e in events if e[0].startswith("put")]
    assert puts == [(kind, s) for s in range(-1, 6) for kind in ("put-start", "put-end")]
    # a node of step s starts only once the checkpoint of step s - 2 is on disk: the
    # run is never more than one saved step ahead of its thread
    for event in events:
        if event[0] == "node":
            step = event[2]
            assert events.index(("put-end", step - 2)) < events.index(event), event


def test_async_durability_saves_everything_before_invoke_returns(tmp_path):
    watch = Watch(put_delay=0.02)
    cfg = {"configurable": {"thread_id": "t"}}
    with _saver(tmp_path, watch) as saver:
        graph = _chain(saver, watch, ["a", "b", "c"])
        out = graph.invoke({"log": []}, cfg, durability="async")
        # read at once, from another connection to the same file
        with SqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as other:
            latest = other.get_tuple(cfg)
            steps = [t.metadata["step"] for t in other.list(cfg)]
    assert latest is not None and latest.checkpoint["channel_values"]["log"] == out["log"]
    assert steps == [3, 2, 1, 0, -1]


def test_async_and_sync_durability_store_the_same_history(tmp_path):
    def history(durability: str) -> list[tuple[Any, ...]]:
        watch = Watch()
        with _saver(tmp_path / durability, watch) as saver:
            graph = _chain(saver, watch, ["a", "b", "c"])
            cfg = {"configurable": {"thread_id": "t"}}
            graph.invoke({"log": []}, cfg, durability=durability)
            return [
                (s.metadata["step"], s.metadata["source"], s.next, s.values.get("log"))
                for s in graph.get_state_history(cfg)
            ]

    (tmp_path / "sync").mkdir()
    (tmp_path / "async").mkdir()
    assert history("async") == history("sync")


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_failed_save_fails_the_run_and_keeps_the_steps_before(tmp_path, durability):
    watch = Watch(fail_at_step=1)
    cfg = {"configurable": {"thread_id": "t"}}
    with _saver(tmp_path, watch) as saver:
        graph = _chain(saver, watch, ["a", "b", "c"])
        with pytest.raises(OSError, match="disk full while saving step 1"):
            graph.invoke({"log": []}, cfg, durability=durability)
        stored = list(saver.list(cfg))
    # the input and step 0 were saved; nothing after the failed save was written: no
    # later checkpoint, and no pending write naming the checkpoint that is not there
    assert [t.metadata["step"] for t in stored] == [0, -1]
    assert not any(e[:2] == ("put-start", 2) for e in watch.events)
    ids = {t.config["configurable"]["checkpoint_id"] for t in stored}
    with SqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as other:
        rows = other.conn.execute("SELECT DISTINCT checkpoint_id FROM lgnb_writes").fetchall()
    assert {r[0] for r in rows} <= ids


def test_a_failed_background_save_raises_once_the_running_step_has_finished(tmp_path):
    """The checkpoint of step 1 fails while step 2 runs a slow subgraph beside a node:
    the run raises at the barrier, after the subgraph returned, so nothing of the run
    is still writing to the thread when `invoke` raises (its lease is free)."""
    saved_at: list[tuple[str, int, float]] = []

    class Failing(SqliteSaver):
        def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[override]
            ns = config["configurable"].get("checkpoint_ns", "")
            if ns == "" and metadata["step"] == 1:
                raise OSError("disk full at step 1")
            out = super().put(config, checkpoint, metadata, new_versions)
            saved_at.append((ns.split(":")[0], metadata["step"], time.perf_counter()))
            return out

    def slow(name: str, seconds: float) -> Any:
        def node(state: S) -> dict:
            time.sleep(seconds)
            return {"log": [name]}

        return node

    sub = StateGraph(S)
    for name in ("s1", "s2", "s3"):
        sub.add_node(name, slow(name, 0.03))
    sub.add_edge(START, "s1")
    sub.add_edge("s1", "s2")
    sub.add_edge("s2", "s3")
    outer = StateGraph(S)
    outer.add_node("a", slow("a", 0.005))
    outer.add_node("sub", sub.compile())
    outer.add_node("x", slow("x", 0.02))
    outer.add_edge(START, "a")
    outer.add_edge("a", "sub")
    outer.add_edge("a", "x")
    saver = Failing(tmp_path / "threads.sqlite")
    try:
        graph = outer.compile(checkpointer=saver)
        with pytest.raises(OSError, match="disk full at step 1"):
            graph.invoke({"log": []}, {"configurable": {"thread_id": "t"}}, durability="async")
        raised = time.perf_counter()
        time.sleep(0.2)
    finally:
        saver.close()
    assert [e for e in saved_at if e[2] > raised] == []


def test_a_run_whose_save_blocks_does_not_hold_up_another_runs_saves(tmp_path):
    """Each run has its own writer: a save stuck on a slow database (here: waiting
    for the other run to finish) delays only its own run."""
    other_done = threading.Event()
    stuck = threading.Event()

    class Stuck(SqliteSaver):
        def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[override]
            if metadata["step"] == 1:
                stuck.set()
                other_done.wait(10)
            return super().put(config, checkpoint, metadata, new_versions)

    cfg = {"configurable": {"thread_id": "t"}}
    first = Stuck(tmp_path / "first.sqlite")
    second = SqliteSaver(tmp_path / "second.sqlite")
    try:
        g1 = _chain(first, Watch(), ["a", "b", "c"])
        g2 = _chain(second, Watch(), ["a", "b", "c"])
        results: list[Any] = []
        t = threading.Thread(target=lambda: results.append(g1.invoke({"log": []}, cfg, durability="async")))
        t.start()
        assert stuck.wait(10)
        began = time.perf_counter()
        assert g2.invoke({"log": []}, cfg, durability="async")["log"] == ["a", "b", "c"]
        took = time.perf_counter() - began
        other_done.set()
        t.join(10)
    finally:
        other_done.set()
        first.close()
        second.close()
    assert took < 5, f"the second run waited {took:.1f} s for the first run's save"
    assert results and results[0]["log"] == ["a", "b", "c"]


def _run_chain_in_child(path: str, out: Any) -> None:
    saver = SqliteSaver(path)
    try:
        graph = _chain(saver, Watch(), ["a", "b"])
        out.put(graph.invoke({"log": []}, {"configurable": {"thread_id": "child"}}, durability="async")["log"])
    finally:
        saver.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_saves_in_the_background_too(tmp_path):
    with _saver(tmp_path, Watch()) as saver:  # the parent has used a writer thread
        _chain(saver, Watch(), ["a", "b"]).invoke(
            {"log": []}, {"configurable": {"thread_id": "t"}}, durability="async"
        )
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_run_chain_in_child, args=(str(tmp_path / "child.sqlite"), out))
    child.start()
    child.join(20)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the forked child hung"
    assert out.get(timeout=5) == ["a", "b"]


def test_an_interrupt_under_async_durability_is_saved_when_the_stream_ends(tmp_path):
    watch = Watch(put_delay=0.02)
    b = StateGraph(S)

    def ask(state: S) -> dict:
        time.sleep(0.002)
        return {"log": [interrupt("ok?")]}

    b.add_node("first", lambda s: (time.sleep(0.002), {"log": ["first"]})[1])
    b.add_node("ask", ask)
    b.add_edge(START, "first")
    b.add_edge("first", "ask")
    cfg = {"configurable": {"thread_id": "t"}}
    with _saver(tmp_path, watch) as saver:
        graph = b.compile(checkpointer=saver)
        chunks = list(graph.stream({"log": []}, cfg, durability="async"))
        assert "__interrupt__" in chunks[-1]
        state = graph.get_state(cfg)
        assert state.next == ("ask",) and state.interrupts[0].value == "ok?"
        from lgnb.types import Command

        out = graph.invoke(Command(resume="yes"), cfg, durability="async")
    assert out["log"] == ["first", "yes"]


async def test_async_runs_overlap_saves_with_the_next_step_on_an_async_saver(tmp_path):
    watch = Watch()
    watch.put_waits_for_next_node = True
    async with AsyncWatchedSaver.from_conn_string(tmp_path / "threads.sqlite") as saver:
        saver.watch = watch
        b = StateGraph(S)

        async def a(state: S) -> dict:
            await asyncio.sleep(0.002)
            return {"log": ["a"]}

        async def bnode(state: S) -> dict:
            watch.node_of_step(2).set()
            await asyncio.sleep(0.002)
            return {"log": ["b"]}

        b.add_node("a", a)
        b.add_node("b", bnode)
        b.add_edge(START, "a")
        b.add_edge("a", "b")
        graph = b.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke({"log": []}, cfg, durability="async")
        latest = await saver.aget_tuple(cfg)
    assert out["log"] == ["a", "b"]
    assert watch.saw_next_node[1] is True  # a's checkpoint was saved while b ran
    assert latest is not None and latest.metadata["step"] == 2


def test_writer_threads_are_reused_by_later_runs_and_end_when_unused(tmp_path, monkeypatch):
    import lgnb.pregel._background as background

    monkeypatch.setattr(background, "_IDLE_EXIT", 0.2)

    def writers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "lgnb-saves" and t.is_alive()]

    for idle in list(background._IDLE):  # writers left by earlier tests: wait anew, shorter
        with idle.cv:
            idle.cv.notify_all()
    deadline = time.monotonic() + 5
    while writers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert writers() == []
    with _saver(tmp_path, Watch()) as saver:
        graph = _chain(saver, Watch(), ["a", "b"])
        for i in range(5):  # one after the other: one writer serves them all
            graph.invoke({"log": []}, {"configurable": {"thread_id": f"t{i}"}}, durability="async")
        assert len(writers()) <= 1
        # a run its caller stopped reading but did not close keeps its writer: the
        # thread still ends once unused
        paused = graph.stream({"log": []}, {"configurable": {"thread_id": "paused"}}, durability="async")
        next(paused)
        deadline = time.monotonic() + 5
        while writers() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert writers() == []
        assert [c for c in paused] == [{"b": {"log": ["b"]}}]  # and it goes on when read again


@pytest.mark.parametrize("durability", ["sync", "async"])
async def test_a_sync_entrypoint_run_with_ainvoke_saves_its_tasks_and_resumes(tmp_path, durability):
    """`ainvoke` of a sync entrypoint: its body and its `@task` calls run on worker
    threads, which save the calls' writes themselves while the run's own saves are on
    its asyncio chain (they used to meet in a writer the event loop then waited on)."""
    from lgnb.func import entrypoint, task
    from lgnb.types import Command

    calls: list[int] = []

    @task
    def slow(x: int) -> int:
        calls.append(x)
        time.sleep(0.003)
        return 2 * x

    async with AsyncSqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as saver:

        @entrypoint(checkpointer=saver)
        def main(xs: list[int]) -> list[Any]:
            out: list[Any] = []
            for x in xs:
                out.extend([slow(x).result(), interrupt(f"after {x}?")])
            return out

        for thread in ("a", "b"):  # the second thread's run knows `slow` is slow
            cfg = {"configurable": {"thread_id": thread}}
            await main.ainvoke([1, 2, 3], cfg, durability=durability)
            for answer in ("x", "y"):
                await asyncio.wait_for(main.ainvoke(Command(resume=answer), cfg, durability=durability), 20)
            out = await asyncio.wait_for(main.ainvoke(Command(resume="z"), cfg, durability=durability), 20)
            assert out == [2, "x", 4, "y", 6, "z"]
    assert calls == [1, 2, 3, 1, 2, 3]  # each call ran once per thread: its saved result was found


@pytest.mark.parametrize("durability", ["async", "sync"])
def test_a_cached_task_called_again_in_the_same_run_finds_the_value_even_while_saves_are_in_the_background(
        tmp_path, durability):
    """A cache write is never deferred to the background writer: the third `square(1)`
    of the run is served from the cache its first call filled, as in LangGraph — however
    long the cache takes to store it (here 50 ms, longer than the calls in between)."""
    from langgraph.cache.memory import InMemoryCache

    from lgnb.func import entrypoint, task
    from lgnb.types import CachePolicy

    class SlowCache(InMemoryCache):
        def set(self, pairs: Any) -> None:
            time.sleep(0.05)
            super().set(pairs)

    runs: list[int] = []

    @task(cache_policy=CachePolicy())
    def square(x: int) -> int:
        runs.append(x)
        time.sleep(0.002)  # not known to be quick: the run's saves go to the background
        return x * x

    with SqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as saver:

        @entrypoint(checkpointer=saver, cache=SlowCache())
        def wf(xs: list[int]) -> list[int]:
            time.sleep(0.002)
            return [square(x).result() for x in xs]

        for thread in ("1", "2"):
            out = wf.invoke([1, 2, 1], {"configurable": {"thread_id": thread}}, durability=durability)
            assert out == [1, 4, 1]
    assert runs == [1, 2]  # each value computed once, across both threads

"""Parallel tasks of a super-step run at the same time (as in LangGraph), bounded by
`max_concurrency`. Checked with barriers and counters, not with timings."""

from __future__ import annotations

import operator
import threading
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgnb.graph import START, StateGraph
from lgnb.types import Send


class S(TypedDict):
    items: list
    out: Annotated[list, operator.add]


def _fan_out(work):
    b = StateGraph(S)
    b.add_node("work", work)
    b.add_conditional_edges(START, lambda s: [Send("work", {"i": i}) for i in s["items"]])
    return b.compile()


def test_sync_tasks_of_one_step_run_concurrently():
    barrier = threading.Barrier(4, timeout=10)

    def work(s):
        barrier.wait()  # passes only if all four tasks are running at once
        return {"out": [s["i"]]}

    result = _fan_out(work).invoke({"items": [0, 1, 2, 3]})
    assert sorted(result["out"]) == [0, 1, 2, 3]


def test_max_concurrency_bounds_the_tasks_running_at_once():
    lock = threading.Lock()
    running = 0
    peak = 0
    release = threading.Event()

    def work(s):
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        release.wait(0.05)
        with lock:
            running -= 1
        return {"out": [s["i"]]}

    result = _fan_out(work).invoke({"items": list(range(8))}, {"max_concurrency": 2})
    assert sorted(result["out"]) == list(range(8))
    assert peak == 2


# -- quick tasks one after the other in one pool thread, the rest handed to the pool (lgnb.pregel._inline) --
def _warmed(work, items):
    """The fan-out graph, run once on `items` so the engine knows `work` is quick."""
    graph = _fan_out(work)
    graph.invoke({"items": items})
    return graph


def test_a_nodes_first_run_and_slow_runs_overlap_in_the_pool_and_report_as_they_finish():
    """The map-reduce of the Pregel lesson: the task planned first sleeps longest and
    finishes last, and its update is reported last (as LangGraph does), every run."""
    import time

    def work(s):
        time.sleep(0.03 * (4 - s["i"]))
        return {"out": [s["i"]]}

    graph = _fan_out(work)
    for _ in range(2):
        finished = [next(iter(u.values()))["out"][0]
                    for u in graph.stream({"items": [1, 2, 3]}, stream_mode="updates") if "work" in u]
        assert finished == [3, 2, 1]


def test_quick_tasks_of_a_step_run_one_after_the_other_in_one_thread_in_plan_order():
    """One thread for the step, not one per task, and never the calling thread, which
    LangGraph's pool never uses for a step of several tasks: not from a script (no event
    loop running), nor under a running loop (a notebook cell)."""
    import asyncio

    seen = []

    def work(s):
        seen.append((s["i"], threading.current_thread().name))
        return {"out": [s["i"]]}

    graph = _warmed(work, [0, 1])
    first = list(seen)
    assert all(name.startswith("lgnb-task") for _, name in first)  # its first run: in the pool

    def runs_in_one_engine_thread(call):
        seen.clear()
        assert call()["out"] == list(range(20))  # the barrier applies them in plan order, as always
        assert [i for i, _ in seen] == list(range(20))
        assert len({name for _, name in seen}) == 1
        assert seen[0][1].startswith("lgnb-") and seen[0][1] != threading.current_thread().name

    runs_in_one_engine_thread(lambda: graph.invoke({"items": list(range(20))}))

    async def cell():
        return graph.invoke({"items": list(range(20))})

    runs_in_one_engine_thread(lambda: asyncio.run(cell()))


def test_parallel_nodes_never_share_the_callers_thread_bound_objects_on_any_run():
    """A sqlite3 connection the caller opened, used by two parallel nodes, fails on every
    run on LangGraph (its pool threads are not the caller's): on lgnb too, the first run
    and the runs after it, once the nodes are known to be quick. So does a
    `threading.local` the caller set: the nodes never see it."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    local = threading.local()
    local.value = "caller's"

    def a(s):
        return {"out": [conn.execute("select 1").fetchone()[0]]}

    def b(s):
        return {"out": [getattr(local, "value", None)]}

    builder = StateGraph(S)
    builder.add_node(a)
    builder.add_node(b)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile()
    for _ in range(4):
        with pytest.raises(sqlite3.ProgrammingError, match="same thread"):
            graph.invoke({"items": [], "out": []})
    conn.close()
    builder = StateGraph(S)
    builder.add_node("b1", b)
    builder.add_node("b2", b)
    builder.add_edge(START, "b1")
    builder.add_edge(START, "b2")
    graph = builder.compile()
    assert [graph.invoke({"items": [], "out": []})["out"] for _ in range(4)] == [[None, None]] * 4


def test_parallel_quick_nodes_can_call_asyncio_run_under_a_running_event_loop():
    """A notebook cell runs inside the kernel's event loop, and a sync node that calls
    `asyncio.run(...)` works in a step of several tasks on LangGraph (its pool threads have
    no loop running): on every run, not only the first, before the nodes are known quick."""
    import asyncio

    async def double(i):
        return 2 * i

    graph = _fan_out(lambda s: {"out": [asyncio.run(double(s["i"]))]})

    async def cell():
        return [graph.invoke({"items": [1, 2, 3]})["out"] for _ in range(3)]

    assert asyncio.run(cell()) == [[2, 4, 6]] * 3


def test_a_quick_node_that_waits_hands_its_unstarted_siblings_to_the_pool():
    """The first task blocks until the last one has run: one after the other in one thread
    this would never end; the watchdog starts the siblings in the pool."""
    last_ran = threading.Event()
    threads = {}
    waiting = {"on": False}

    def work(s):
        threads[s["i"]] = threading.current_thread().name
        if s["i"] == 0 and waiting["on"]:
            assert last_ran.wait(10), "the siblings were never started"
        if s["i"] == 5:
            last_ran.set()
        return {"out": [s["i"]]}

    graph = _warmed(work, [0, 1])
    waiting["on"] = True
    result = graph.invoke({"items": list(range(6))})
    assert sorted(result["out"]) == list(range(6))
    assert threads[0].startswith("lgnb-lane-")  # the batch's thread
    assert all(threads[i].startswith("lgnb-task") for i in range(1, 6))


def test_a_node_known_to_be_slow_sends_its_next_steps_to_the_pool_at_once():
    import time

    threads = []
    pause = {"s": 0.0}

    def work(s):
        time.sleep(pause["s"])
        threads.append(threading.current_thread().name)
        return {"out": [s["i"]]}

    graph = _warmed(work, [0, 1])
    pause["s"] = 0.005  # slower than the hand-off: learned as slow in this run ...
    graph.invoke({"items": [0, 1, 2]})
    threads.clear()
    graph.invoke({"items": [0, 1, 2]})  # ... so the next one goes to the pool
    assert len(threads) == 3 and all(name.startswith("lgnb-task") for name in threads)


def test_inline_tasks_do_not_see_each_others_context_variables():
    import contextvars

    var = contextvars.ContextVar("mark", default=None)
    seen = []

    def work(s):
        seen.append(var.get())
        var.set(s["i"])
        return {"out": [s["i"]]}

    graph = _warmed(work, [0, 1])
    seen.clear()
    graph.invoke({"items": [0, 1, 2, 3]})
    assert seen == [None, None, None, None]
    assert var.get() is None  # nor does the caller


def test_a_failing_inline_task_lets_the_siblings_after_it_run_then_raises():
    """LangGraph starts a step's tasks together: a sibling planned after the failing one
    runs too (its side effects happen), then the error is raised."""
    import pytest

    ran = []
    fail = {"on": False}

    def work(s):
        ran.append(s["i"])
        if s["i"] == 1 and fail["on"]:
            raise ValueError("task 1 failed")
        return {"out": [s["i"]]}

    graph = _warmed(work, [0, 1])
    fail["on"] = True
    ran.clear()
    with pytest.raises(ValueError, match="task 1 failed"):
        graph.invoke({"items": [0, 1, 2, 3]})
    assert ran == [0, 1, 2, 3]


def test_a_node_known_to_be_quick_streams_its_custom_events_while_it_runs():
    """A progress report from a node that was quick on its last run: this run it reports,
    then waits for the consumer to have seen the report (a handshake, no timing). LangGraph
    runs every task of a live stream in its pool, so the report arrives while the node
    runs; a node run in the consumer's own thread could only report once it returned."""
    from lgnb.config import get_stream_writer

    class W(TypedDict, total=False):
        wait: bool

    seen = threading.Event()
    waited = []

    def node(s):
        get_stream_writer()({"progress": "started"})
        if s.get("wait"):
            waited.append(seen.wait(10))
        return {}

    b = StateGraph(W)
    b.add_node("node", node)
    b.add_edge(START, "node")
    graph = b.compile()
    graph.invoke({"wait": False})  # quick: the engine learns it
    for mode, _chunk in graph.stream({"wait": True}, stream_mode=["custom", "updates"]):
        if mode == "custom":
            seen.set()
    assert waited == [True]


def test_a_quick_steps_tasks_stream_each_update_right_after_its_own_events(monkeypatch):
    """LangGraph's pool commits each task from its thread as it ends, so a step of quick
    nodes streams `custom q1, updates q1, custom q2, updates q2`; once the nodes are
    known quick (the batch in one pool thread) lgnb streams them in that order too.

    `HANDOFF` is raised to a second: on a loaded machine a 20 µs node preempted for a
    millisecond would be handed off (or learned slow), and the batch is what is tested."""
    from lgnb.config import get_stream_writer
    from lgnb.pregel import _inline

    monkeypatch.setattr(_inline, "HANDOFF", 1.0)

    class Q(TypedDict):
        log: Annotated[list, operator.add]

    def node(name):
        def run(s):
            get_stream_writer()(name)
            return {"log": [name]}
        return run

    b = StateGraph(Q)
    for name in ("q1", "q2", "q3"):
        b.add_node(name, node(name))
        b.add_edge(START, name)
    graph = b.compile()
    graph.invoke({"log": []})  # the nodes are learned quick
    for _ in range(5):
        got = list(graph.stream({"log": []}, stream_mode=["updates", "custom"]))
        assert got == [c for name in ("q1", "q2", "q3")
                       for c in (("custom", name), ("updates", {name: {"log": [name]}}))]


# -- no wait on a full pool: a quick step's batch never holds a thread its siblings need --
def _quick_pair(first, second):
    class P(TypedDict):
        key: int
        out: Annotated[list, operator.add]

    b = StateGraph(P)
    b.add_node("first", first)
    b.add_node("second", second)
    b.add_edge(START, "first")
    b.add_edge(START, "second")
    graph = b.compile()
    # the nodes are learned quick, even on a loaded machine (where a 20 µs node preempted
    # for a millisecond would be learned slow at the real HANDOFF)
    from lgnb.pregel import _inline

    saved, _inline.HANDOFF = _inline.HANDOFF, 1.0
    try:
        for _ in range(3):
            graph.invoke({"key": 0, "out": []})
    finally:
        _inline.HANDOFF = saved
    return graph


def test_a_hundred_callers_of_a_quick_step_whose_node_waits_for_its_sibling_all_finish():
    """More callers than the pool has threads, each running a step of two quick nodes
    where the first waits for the second (the watchdog hands it off): none may wait on a
    sibling queued behind the other callers' batches."""
    events = {k: threading.Event() for k in range(1, 101)}
    lined_up = threading.Barrier(100, timeout=30)

    def first(s):
        if s["key"]:
            lined_up.wait()
            return {"out": ["first" if events[s["key"]].wait(20) else "first gave up"]}
        return {"out": ["first"]}

    def second(s):
        if s["key"]:
            events[s["key"]].set()
        return {"out": ["second"]}

    graph = _quick_pair(first, second)
    results = {}
    callers = [threading.Thread(target=lambda k=k: results.__setitem__(k, graph.invoke({"key": k, "out": []})["out"]))
               for k in events]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(60)
    assert sorted(results) == sorted(events)
    assert all(sorted(out) == ["first", "second"] for out in results.values())


def test_a_hundred_task_calls_each_running_a_quick_step_all_finish():
    """An entrypoint's `@task` calls run in the pool, and each invokes a graph with a quick
    parallel step: the graphs' batches must not queue behind the calls holding the pool."""
    import time

    from lgnb.func import entrypoint, task

    graph = _quick_pair(lambda s: {"out": ["first"]}, lambda s: {"out": ["second"]})

    @task
    def work(i: int) -> int:
        time.sleep(0.05)  # every call taken by a pool thread before any runs its graph
        return len(graph.invoke({"key": 0, "out": []})["out"])

    @entrypoint()
    def main(n: int) -> int:
        return sum(f.result() for f in [work(i) for i in range(n)])

    done = []
    runner = threading.Thread(target=lambda: done.append(main.invoke(100)), daemon=True)
    runner.start()
    runner.join(60)
    assert done == [200]


def test_a_quick_steps_updates_stream_as_each_task_ends_while_a_sibling_runs_long():
    """`updates` alone (no live mode): a node that turns slow waits until the consumer has
    the update of its sibling handed off meanwhile, as on LangGraph, whose runner yields
    each task's update as it ends (a handshake, no timing)."""
    seen = threading.Event()
    waited = []

    def first(s):
        if s["key"]:
            waited.append(seen.wait(10))
        return {"out": ["first"]}

    graph = _quick_pair(first, lambda s: {"out": ["second"]})
    got = []
    for chunk in graph.stream({"key": 1, "out": []}, stream_mode="updates"):
        got.append(next(iter(chunk)))
        if "second" in chunk:
            seen.set()
    assert waited == [True]
    assert got == ["second", "first"]

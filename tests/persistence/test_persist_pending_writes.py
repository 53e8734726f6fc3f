"""Pending writes: when one task of a super-step fails, the writes of its finished siblings are
saved with the checkpoint; resuming with invoke(None, config) does not run them again, and the
error is recorded the way LangGraph records it (get_state().tasks[i].error)."""

from __future__ import annotations

import operator
import threading
from typing import Annotated

import pytest
from typing_extensions import TypedDict

import _diff
from _savers import thread


class S(TypedDict):
    log: Annotated[list, operator.add]


def _failing_step(E, saver, calls, *, fail_times=1):
    """START -> first -> (good, bad) -> join. `bad` fails `fail_times` times, after `good` is done."""
    good_done = threading.Event()

    def first(s):
        calls.append("first")
        return {"log": ["first"]}

    def good(s):
        calls.append("good")
        good_done.set()
        return {"log": ["good"]}

    def bad(s):
        calls.append("bad")
        if calls.count("bad") == 1:
            good_done.wait(2)  # deterministic: the sibling has finished before the first failure
        if calls.count("bad") <= fail_times:
            raise ValueError(f"bad failed (attempt {calls.count('bad')})")
        return {"log": ["bad"]}

    def join(s):
        calls.append("join")
        return {"log": ["join"]}

    g = E.StateGraph(S)
    for name, fn in (("first", first), ("good", good), ("bad", bad), ("join", join)):
        g.add_node(name, fn)
    g.add_edge(E.START, "first")
    g.add_edge("first", "good")
    g.add_edge("first", "bad")
    g.add_edge(["good", "bad"], "join")
    return g.compile(checkpointer=saver)


def _tasks(st):
    return sorted(((t.name, t.error, t.result) for t in st.tasks), key=repr)


def test_finished_sibling_is_not_run_again_on_resume(differential):
    def scenario(E):
        calls = []
        app, cfg = _failing_step(E, E.InMemorySaver(), calls), thread()
        err = _diff.capture(lambda: app.invoke({"log": []}, cfg))
        out = app.invoke(None, cfg)
        return err, out, sorted(calls[:3]) + calls[3:]

    differential(scenario, expect=(
        ("raises", "ValueError", "bad failed (attempt 1)"),
        {"log": ["first", "bad", "good", "join"]},  # writes apply in task-path order
        ["bad", "first", "good", "bad", "join"],
    ))


def test_failed_step_state_records_the_error_and_the_siblings_result(differential):
    def scenario(E):
        calls = []
        app, cfg = _failing_step(E, E.InMemorySaver(), calls), thread()
        _diff.capture(lambda: app.invoke({"log": []}, cfg))
        st = app.get_state(cfg)
        return st.values, st.next, _tasks(st), st.metadata, len(list(app.get_state_history(cfg)))

    ref = differential(scenario)
    assert ref[1] == ("bad",)  # good finished: only bad is left


def test_failed_step_full_snapshot(differential):
    def scenario(E):
        app, cfg = _failing_step(E, E.InMemorySaver(), []), thread()
        _diff.capture(lambda: app.invoke({"log": []}, cfg))
        st = app.get_state(cfg)
        return st._replace(tasks=tuple(sorted(st.tasks, key=lambda t: t.name)))

    differential(scenario)


def test_error_is_replaced_after_a_second_failure_and_cleared_after_success(differential):
    def scenario(E):
        calls = []
        app, cfg = _failing_step(E, E.InMemorySaver(), calls, fail_times=2), thread()
        seen = [_diff.capture(lambda: app.invoke({"log": []}, cfg))]
        seen.append(_tasks(app.get_state(cfg)))
        seen.append(_diff.capture(lambda: app.invoke(None, cfg)))
        seen.append(_tasks(app.get_state(cfg)))
        seen.append(app.invoke(None, cfg))
        seen.append(_tasks(app.get_state(cfg)))
        seen.append(calls.count("good"))
        seen.append(calls.count("bad"))
        return seen

    differential(scenario)


def test_history_after_failure_and_resume(differential):
    def scenario(E):
        app, cfg = _failing_step(E, E.InMemorySaver(), []), thread()
        _diff.capture(lambda: app.invoke({"log": []}, cfg))
        app.invoke(None, cfg)
        return [(s.metadata["source"], s.metadata["step"], s.next, s.values, _tasks(s))
                for s in app.get_state_history(cfg)]

    differential(scenario)


def test_stream_of_the_resumed_run_shows_only_the_retried_task(differential):
    def scenario(E):
        app, cfg = _failing_step(E, E.InMemorySaver(), []), thread()
        _diff.capture(lambda: app.invoke({"log": []}, cfg))
        return _diff.collect(lambda: app.stream(None, cfg, stream_mode=["updates", "values"]))

    differential(scenario)


def test_async_finished_sibling_is_not_run_again(differential):
    async def scenario(E):
        import asyncio

        calls = []
        good_done = asyncio.Event()

        async def good(s):
            calls.append("good")
            good_done.set()
            return {"log": ["good"]}

        async def bad(s):
            calls.append("bad")
            await asyncio.wait_for(good_done.wait(), 2)
            if calls.count("bad") == 1:
                raise ValueError("async bad failed")
            return {"log": ["bad"]}

        g = E.StateGraph(S)
        g.add_node("good", good)
        g.add_node("bad", bad)
        g.add_edge(E.START, "good")
        g.add_edge(E.START, "bad")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        err = await _diff.acapture(lambda: app.ainvoke({"log": []}, cfg))
        st = await app.aget_state(cfg)
        out = await app.ainvoke(None, cfg)
        return err, _tasks(st), out, sorted(calls)

    differential(scenario)


@pytest.mark.parametrize("kind", ["lgnb_sqlite", "langgraph_sqlite"])
def test_pending_writes_survive_reopening_the_saver(differential, savers, kind):
    """The sibling's writes are in the file: a new saver object (as after a restart) resumes."""

    def scenario(E):
        calls = []
        with savers.open(kind, E) as saver:
            # share one file between the two opens
            path = saver.conn.execute("PRAGMA database_list").fetchone()[2]
            cfg = thread()
            err = _diff.capture(lambda: _failing_step(E, saver, calls).invoke({"log": []}, cfg))
        reopened = type(saver).from_conn_string(path)
        with reopened as saver2:
            app = _failing_step(E, saver2, calls, fail_times=0)
            st = app.get_state(cfg)
            out = app.invoke(None, cfg)
        return err, _tasks(st), out, sorted(calls)

    ref = differential(scenario)
    assert ref[2] == {"log": ["first", "bad", "good", "join"]}
    assert ref[3] == ["bad", "bad", "first", "good", "join"]  # good ran once

"""Lanes (`lgnb.pregel._lanes`): the threads a live stream's lone tasks run in."""

from __future__ import annotations

import threading
import time

import pytest

from lgnb.pregel._lanes import IDLE_KEPT, Job, run_in_lane


def test_a_job_runs_off_the_calling_thread_in_a_thread_named_as_the_engines():
    name = run_in_lane(Job(lambda: threading.current_thread().name)).result()
    assert name != threading.current_thread().name and name.startswith("lgnb-lane-")


def test_an_error_is_handed_to_the_waiter_as_a_future_hands_it():
    def boom() -> None:
        raise KeyError("x")

    job = run_in_lane(Job(boom))
    assert isinstance(job.exception(), KeyError)
    with pytest.raises(KeyError):
        job.result()


def test_on_done_is_called_once_the_outcome_is_set():
    seen: list[tuple[bool, object]] = []
    box: list[Job] = []
    gate = threading.Event()

    def done() -> None:
        seen.append((box[0].done(), box[0]._value))
        gate.set()

    box.append(Job(lambda: 42, done))
    run_in_lane(box[0])
    assert gate.wait(5)
    assert seen == [(True, 42)] and box[0].result() == 42


def test_wait_blocks_until_a_slow_job_ends():
    job = run_in_lane(Job(lambda: time.sleep(0.05) or "slept"))
    assert not job.done()
    job.wait()
    assert job.done() and job.result() == "slept"


def test_jobs_one_after_the_other_reuse_a_parked_lane():
    names = {run_in_lane(Job(lambda: threading.current_thread().name)).result() for _ in range(50)}
    assert len(names) <= 2  # (a lane is parked before its waiter is woken)


def test_lanes_are_not_limited_and_at_most_IDLE_KEPT_stay_parked():
    n = IDLE_KEPT + 6
    barrier = threading.Barrier(n + 1)
    jobs = [run_in_lane(Job(lambda: barrier.wait(5))) for _ in range(n)]
    barrier.wait(5)  # all n ran at once: none waited for a free lane
    for job in jobs:
        job.result()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lanes = [t for t in threading.enumerate() if t.name.startswith("lgnb-lane-")]
        if len(lanes) <= IDLE_KEPT:
            break
        time.sleep(0.01)
    assert len(lanes) <= IDLE_KEPT


_PROGRAM = """
import operator, sys, time
from typing import Annotated
from typing_extensions import TypedDict
from lgnb.config import get_stream_writer
from lgnb.graph import START, StateGraph

class S(TypedDict):
    x: Annotated[list, operator.add]

slow = {"on": False}

def node(name):
    def run(s):
        get_stream_writer()(name)
        if slow["on"] and name == "b":
            time.sleep(0.3)
            open(sys.argv[1], "a").write("b ended\\n")
        return {"x": [name]}
    return run

g = StateGraph(S)
for n in "abc":
    g.add_node(n, node(n))
g.add_edge(START, "a")
g.add_edge("a", "b")
g.add_edge("a", "c")
chain = StateGraph(S)
chain.add_node("a", node("a"))
chain.add_node("b", node("b"))
chain.add_edge(START, "a")
chain.add_edge("a", "b")
fan_out, lone = g.compile(), chain.compile()
"""


def test_a_node_still_running_when_the_script_ends_finishes_first(tmp_path):
    """A script abandons a live stream while a node runs in a lane and ends: as a pool's
    worker, the lane finishes the node before the interpreter exits (its side effects are
    not cut off half-way)."""
    import subprocess
    import sys

    side = tmp_path / "side.txt"
    script = _PROGRAM + """
for graph in (lone, fan_out):
    for _ in range(3):  # (known quick: a fan-out's next step runs as a batch)
        list(graph.stream({"x": []}, stream_mode="custom"))
slow["on"] = True
kept = []  # (left open, not closed: the script just ends)
for graph in (lone, fan_out):
    kept.append(graph.stream({"x": []}, stream_mode="custom"))
    for event in kept[-1]:
        if event == "b":
            break
"""
    done = subprocess.run([sys.executable, "-c", script, str(side)], timeout=60)
    assert done.returncode == 0
    assert side.read_text() == "b ended\n" * 2


def test_a_process_forked_after_lanes_and_pools_ran_runs_graphs(tmp_path):
    """The engine's lanes and pools have no threads in a forked child (multiprocessing's
    default start method on Linux, gunicorn's --preload): the child makes new ones,
    where a job handed to the parent's would wait forever."""
    import os
    import subprocess
    import sys

    script = _PROGRAM + """
import os
def runs():
    return ([fan_out.invoke({"x": []})["x"] for _ in range(3)],
            [list(lone.stream({"x": []}, stream_mode="custom")) for _ in range(2)])
before = runs()
pid = os.fork()
if pid == 0:
    os._exit(0 if runs() == before else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "unused")], timeout=60)
    assert done.returncode == 0

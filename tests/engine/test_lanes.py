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

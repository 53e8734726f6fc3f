"""Parallel tasks of a super-step run at the same time (as in LangGraph), bounded by
`max_concurrency`. Checked with barriers and counters, not with timings."""

from __future__ import annotations

import operator
import threading
from typing import Annotated

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

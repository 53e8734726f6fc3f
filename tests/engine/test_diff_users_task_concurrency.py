"""`max_concurrency` and `@task` calls, as users rely on it to stay under a rate limit:
an entrypoint or a node fanning out calls runs at most as many at once as LangGraph's
pool would (the caller counts when LangGraph runs it in its pool: an entrypoint, a live
stream's task), sync and async; lgnb never hangs where LangGraph's pool would.

Each call stays in until one more call than the limit allows is in, or half a second
went by: held back, the calls overlap by exactly the limit; not held back, all are in at
once (and leave at once).

No `from __future__ import annotations`: classes are defined inside scenarios.
"""

import asyncio
import threading

from typing_extensions import TypedDict


class _Peak:
    """Calls entering and leaving; each stays until more than `meet` are in (or 0.5 s)."""

    def __init__(self, meet: int) -> None:
        self.meet, self.now, self.peak = meet, 0, 0
        self.cond = threading.Condition()

    def __enter__(self) -> None:
        with self.cond:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.now > self.meet, timeout=0.5)

    def __exit__(self, *exc: object) -> None:
        with self.cond:
            self.now -= 1


def _call_api(E, peak):
    """A `@task` that holds `peak` while it runs."""
    @E.func.task
    def call_api(i: int) -> int:
        with peak:
            return i

    return call_api


def _graph(E, node):
    class S(TypedDict):
        out: list

    g = E.StateGraph(S)
    g.add_node("fan", node)
    g.add_edge(E.START, "fan")
    return g.compile()


def test_an_entrypoint_fanning_out_calls_runs_max_concurrency_minus_itself_at_once(differential):
    def scenario(E):
        peak = _Peak(2)
        call_api = _call_api(E, peak)

        @E.func.entrypoint()
        def fan_out(n: int) -> list:
            return [f.result() for f in [call_api(i) for i in range(8)]]

        return fan_out.invoke(8, {"max_concurrency": 3}), peak.peak

    differential(scenario, expect=(list(range(8)), 2))


def test_a_node_fanning_out_calls_runs_max_concurrency_at_once_invoked_or_streamed(differential):
    def scenario(E):
        peak = _Peak(3)
        call_api = _call_api(E, peak)
        app = _graph(E, lambda s: {"out": [f.result() for f in [call_api(i) for i in range(8)]]})
        invoked = app.invoke({"out": []}, {"max_concurrency": 3})["out"], peak.peak
        peak.peak, peak.meet = 0, 2
        # a live stream hands the node to the pool: it holds a slot of its own
        list(app.stream({"out": []}, {"max_concurrency": 3}, stream_mode=["updates", "custom"]))
        return invoked, peak.peak

    differential(scenario, expect=((list(range(8)), 3), 2))


def test_async_calls_run_max_concurrency_at_once(differential):
    async def scenario(E):
        seen = {"now": 0, "peak": 0}

        @E.func.task
        async def call_api(i: int) -> int:
            seen["now"] += 1
            seen["peak"] = max(seen["peak"], seen["now"])
            for _ in range(100):  # until more than two are in (or 0.5 s)
                if seen["now"] > 2:
                    break
                await asyncio.sleep(0.005)
            seen["now"] -= 1
            return i

        @E.func.entrypoint()
        async def fan_out(n: int) -> list:
            return list(await asyncio.gather(*[call_api(i) for i in range(n)]))

        return await fan_out.ainvoke(8, {"max_concurrency": 3}), seen["peak"]

    differential(scenario, expect=(list(range(8)), 2))


def test_without_max_concurrency_sync_calls_run_as_many_at_once_as_langgraphs_pool(differential):
    def scenario(E):
        import os

        pool = min(32, (os.cpu_count() or 1) + 4)
        peak = _Peak(pool - 1)
        call_api = _call_api(E, peak)

        @E.func.entrypoint()
        def fan_out(n: int) -> list:
            return [f.result() for f in [call_api(i) for i in range(n)]]

        return fan_out.invoke(pool + 4), peak.peak == pool - 1

    differential(scenario)


def test_max_concurrency_one_still_runs_calls_and_chains_of_calls_where_langgraph_hangs():
    from lgnb.func import entrypoint, task

    @task
    def leaf(i: int) -> int:
        return i * 10

    @task
    def middle(i: int) -> int:
        return leaf(i).result() + 1  # a call waiting on its own call

    @entrypoint()
    def fan_out(n: int) -> list:
        return [f.result() for f in [middle(i) for i in range(n)]]

    assert fan_out.invoke(4, {"max_concurrency": 1}) == [1, 11, 21, 31]
    assert fan_out.invoke(4, {"max_concurrency": 2}) == [1, 11, 21, 31]


def _failing_fan_out(E, started):
    """An entrypoint fanning out 8 calls; call 0 fails at once, the others take 0.2 s."""
    import time

    @E.func.task
    def call_api(i: int) -> int:
        started.append(i)
        if i == 0:
            raise ValueError("boom")
        time.sleep(0.2)
        return i

    @E.func.entrypoint()
    def fan_out(n: int) -> list:
        return [f.result() for f in [call_api(i) for i in range(n)]]

    return fan_out


def test_calls_still_held_back_when_a_call_fails_never_start():
    """As LangGraph's pool cancels the calls it has not started: a paid API call queued
    behind `max_concurrency` does not run after the run has failed (both engines)."""
    from _diff import Engine

    for name in ("langgraph", "lgnb"):
        started: list = []
        fan_out = _failing_fan_out(Engine(name), started)
        try:
            fan_out.invoke(8, {"max_concurrency": 3})
        except ValueError as exc:
            assert str(exc) == "boom"
        else:
            raise AssertionError(f"{name}: the failing call did not fail the run")
        assert 2 <= len(started) <= 4, (name, started)


def test_calls_still_held_back_when_the_step_times_out_never_start():
    from _diff import Engine

    import time

    for name in ("langgraph", "lgnb"):
        E, started = Engine(name), []

        @E.func.task
        def slow(i: int) -> int:
            started.append(i)
            time.sleep(0.3)
            return i

        @E.func.entrypoint()
        def fan_out(n: int) -> list:
            return [f.result() for f in [slow(i) for i in range(n)]]

        fan_out.step_timeout = 0.5
        began = time.monotonic()
        try:
            fan_out.invoke(8, {"max_concurrency": 3})
        except TimeoutError:
            pass
        else:
            raise AssertionError(f"{name}: no TimeoutError")
        assert len(started) <= 5 and time.monotonic() - began < 1.2, (name, started)

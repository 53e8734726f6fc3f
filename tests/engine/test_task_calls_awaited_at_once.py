"""A sync `@task` whose caller waits on it right away (`task(x).result()`) runs in a pool
thread, as on LangGraph, never in its caller's thread (lgnb used to let a waiting caller
run it, which a task could tell by the caller's `threading.local` values and sqlite3
connections, on some runs and not others). What a user relies on: each call runs exactly
once, calls started before the caller waits run concurrently, interrupts, errors, retries
and saved results behave as on LangGraph."""

import threading
import time

import pytest
from _diff import collect


def test_each_call_runs_exactly_once_when_awaited_at_once_or_in_a_batch(differential):
    def scenario(E):
        runs = []
        lock = threading.Lock()

        @E.func.task()
        def double(x: int) -> int:
            with lock:
                runs.append(x)
            return 2 * x

        @E.func.entrypoint()
        def main(n: int) -> list[int]:
            one_by_one = [double(i).result() for i in range(n)]
            batch = [f.result() for f in [double(100 + i) for i in range(n)]]
            return one_by_one + batch

        out = [main.invoke(40) for _ in range(5)]
        return out, sorted(runs), len(runs)

    ref = differential(scenario)
    assert ref[2] == 5 * 80


def test_calls_started_before_the_caller_waits_run_concurrently(differential):
    """Two tasks meet at a barrier: the caller waiting on the first must not hold the
    second back (it runs on the pool meanwhile)."""

    def scenario(E):
        barrier = threading.Barrier(2, timeout=10)

        @E.func.task()
        def meet(name: str) -> str:
            barrier.wait()
            return name

        @E.func.entrypoint()
        def main(_: str) -> list[str]:
            first, second = meet("a"), meet("b")
            return [first.result(), second.result()]

        return main.invoke("go")

    assert differential(scenario) == ["a", "b"]


def test_a_wait_with_a_timeout_gets_the_result_from_the_pool():
    from lgnb.func import entrypoint, task

    @task()
    def slow(x: int) -> tuple[int, str]:
        time.sleep(0.01)
        return x, threading.current_thread().name

    @entrypoint()
    def main(x: int) -> tuple[int, str]:
        return slow(x).result(timeout=30)

    value, thread = main.invoke(7)
    assert value == 7 and thread != threading.current_thread().name


@pytest.mark.parametrize("mode", ["updates", "values"])
def test_an_interrupt_in_a_task_awaited_at_once_pauses_and_resumes(differential, mode):
    def scenario(E):
        runs = []

        @E.func.task()
        def ask(q: str) -> str:
            runs.append(q)
            return E.interrupt(q)

        @E.func.task()
        def shout(s: str) -> str:
            return s.upper()

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def main(q: str) -> str:
            loud = shout(q).result()
            return loud + ":" + ask(loud).result()

        cfg = {"configurable": {"thread_id": "t"}}
        first = collect(lambda: main.stream("hi", cfg, stream_mode=mode))
        second = collect(lambda: main.stream(E.Command(resume="yes"), cfg, stream_mode=mode))
        return first, second, runs, main.get_state(cfg).values

    differential(scenario)


def test_an_error_in_a_task_awaited_at_once_reaches_the_caller_and_retries(differential):
    def scenario(E):
        tries = []

        @E.func.task(retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False, retry_on=ValueError))
        def flaky(x: int) -> int:
            tries.append(x)
            if len(tries) < 3:
                raise ValueError(f"try {len(tries)}")
            return x

        @E.func.task()
        def broken(x: int) -> int:
            raise KeyError(x)

        @E.func.entrypoint()
        def main(x: int) -> str:
            got = flaky(x).result()
            try:
                broken(x).result()
            except KeyError as e:
                return f"{got} then {e!r}"
            return "no error"

        return main.invoke(5), tries

    ref = differential(scenario)
    assert ref[0] == "5 then KeyError(5)"



def test_a_task_awaited_at_once_never_sees_its_callers_thread_bound_objects(differential):
    """The entrypoint sets a `threading.local` value and opens a sqlite3 connection; the
    tasks it waits on at once see neither, on every run: on LangGraph they run in other
    threads of its pool, the local is unset and the connection refuses the other thread."""
    import sqlite3

    def scenario(E):
        local = threading.local()
        box = {}

        @E.func.task()
        def peek(i: int) -> tuple:
            try:
                box["conn"].execute("select 1")
                used = "used the caller's connection"
            except sqlite3.ProgrammingError:
                used = "refused"
            return getattr(local, "user", None), used

        @E.func.entrypoint()
        def main(n: int) -> list:
            local.user = "caller"
            box["conn"] = sqlite3.connect(":memory:")
            try:
                return [peek(i).result() for i in range(n)]
            finally:
                box["conn"].close()

        return [main.invoke(3) for _ in range(5)]

    assert differential(scenario) == [[(None, "refused")] * 3] * 5


def test_a_task_awaited_at_once_can_call_asyncio_run_under_a_running_event_loop(differential):
    """A notebook cell runs inside the kernel's event loop. A sync task that calls
    `asyncio.run(...)` works there on LangGraph, whose tasks run in its pool, never in the
    thread that called the graph: the call is not taken by that waiting thread."""
    import asyncio

    def scenario(E):
        async def double(x: int) -> int:
            return 2 * x

        @E.func.task()
        def fetch(x: int) -> int:
            return asyncio.run(double(x))

        @E.func.entrypoint()
        def main(xs: list[int]) -> list[int]:
            return [fetch(x).result() for x in xs]

        async def cell() -> list[list[int]]:
            return [main.invoke([1, 2, 3]) for _ in range(3)]

        return asyncio.run(cell())

    assert differential(scenario) == [[2, 4, 6]] * 3


def test_an_entrypoint_body_runs_in_a_pool_thread_even_alone(differential):
    """`@entrypoint` graphs stream eagerly on LangGraph, so even `invoke` runs the body in
    the pool, never in the calling thread: a body that calls `asyncio.run` works under a
    running event loop (a notebook cell)."""
    import asyncio

    def scenario(E):
        async def double(x: int) -> int:
            return 2 * x

        @E.func.entrypoint()
        def main(xs: list[int]) -> list:
            here = threading.current_thread() is threading.main_thread()
            return [asyncio.run(double(x)) for x in xs], here

        async def cell() -> list:
            return [main.invoke([1, 2]) for _ in range(2)]

        return asyncio.run(cell())

    assert differential(scenario) == [([2, 4], False)] * 2


def test_callers_waiting_on_calls_that_wait_on_calls_never_wait_on_a_full_pool(monkeypatch):
    """Threads each invoke an entrypoint whose tasks invoke another entrypoint whose tasks
    sleep: every caller waits on calls that wait on calls. LangGraph gives each run an
    executor of its own, so none waits on a full one; on lgnb a call runs in a lane (not
    limited), never queued behind its waiting callers in a shared pool. With the engine's
    pools cut to two threads each, this used to wait forever."""
    from concurrent.futures import ThreadPoolExecutor

    from lgnb.func import entrypoint, task
    from lgnb.pregel import _driver

    for name in ("lgnb-task", "lgnb-nested"):
        monkeypatch.setitem(_driver._POOLS, name, ThreadPoolExecutor(2, thread_name_prefix=f"small-{name}"))

    @task
    def leaf(x: int) -> int:
        time.sleep(0.005)
        return x

    @entrypoint()
    def inner(x: int) -> int:
        return sum(f.result() for f in [leaf(x + i) for i in range(3)])

    @task
    def call(x: int) -> int:
        return inner.invoke(x)

    @entrypoint()
    def outer(x: int) -> int:
        return sum(f.result() for f in [call(x + i) for i in range(3)])

    results = [None] * 6
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, outer.invoke(i)), daemon=True)
               for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a caller waits forever"
    assert results == [sum(3 * (i + j) + 3 for j in range(3)) for i in range(6)]

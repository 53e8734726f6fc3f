"""One run per thread, in one process (issue 11, item 4): `multitask="reject" | "enqueue" |
"interrupt"` on `invoke` / `stream` / `ainvoke`, the lease a root run holds on its
thread, and what never takes it (runs without `multitask`, as LangGraph; subgraphs under
their parent's thread; `get_state` / `update_state`). Real SQLite files and lgnb's
in-memory saver; the lease rows themselves (a dead owner, an expired row, another host)
in lgnb's SQLite table. The cross-process side is in test_persist_lease_processes.py.
"""

from __future__ import annotations

import asyncio
import operator
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.errors import ThreadBusyError
from lgnb.graph import END, START, StateGraph
from lgnb.types import interrupt


class Count(TypedDict):
    count: int


def counter(saver: Any, pause: float = 0.002) -> Any:
    """A read-modify-write counter: two runs at once on a thread lose increments."""

    def inc(s: Count) -> dict:
        seen = s.get("count", 0)
        time.sleep(pause)
        return {"count": seen + 1}

    return StateGraph(Count).add_node("inc", inc).add_edge(START, "inc").compile(checkpointer=saver)


class Slow:
    """A node that holds its run for a while once `go` is set (or `seconds` pass)."""

    def __init__(self, seconds: float = 5.0) -> None:
        self.seconds = seconds
        self.started = threading.Event()
        self.go = threading.Event()

    def __call__(self, s: Count) -> dict:
        self.started.set()
        self.go.wait(self.seconds)
        return {"count": s.get("count", 0) + 1}


def slow_graph(saver: Any, node: Slow) -> Any:
    return StateGraph(Count).add_node("slow", node).add_edge(START, "slow").compile(checkpointer=saver)


def _in_thread(fn: Any) -> tuple[threading.Thread, list]:
    out: list = []

    def go() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            out.append(exc)

    t = threading.Thread(target=go)
    t.start()
    return t, out


@pytest.fixture(params=["lgnb_sqlite", "memory"])
def saver(request, tmp_path):
    if request.param == "memory":
        yield InMemorySaver()
    else:
        with SqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as s:
            yield s


def test_reject_refuses_a_second_run_on_a_busy_thread_naming_the_thread_and_the_options(saver):
    node = Slow()
    g = slow_graph(saver, node)
    cfg = {"configurable": {"thread_id": "busy-1"}}
    first, out = _in_thread(lambda: g.invoke({"count": 0}, cfg, multitask="reject"))
    assert node.started.wait(10)
    with pytest.raises(ThreadBusyError) as refused:
        g.invoke({"count": 100}, cfg, multitask="reject")
    message = str(refused.value)
    assert "Thread 'busy-1' is busy" in message and f"pid {os.getpid()}" in message
    assert "multitask='enqueue'" in message and "multitask='interrupt'" in message
    assert refused.value.thread_id == "busy-1"
    with pytest.raises(ThreadBusyError):  # stream too, at its first next()
        next(iter(g.stream({"count": 100}, cfg, multitask="reject")))
    node.go.set()
    first.join(10)
    assert out == [{"count": 1}]
    assert g.invoke({"count": 5}, cfg, multitask="reject") == {"count": 6}  # free again


def test_enqueue_waits_for_the_running_one_and_loses_no_update(saver):
    g = counter(saver)
    cfg = {"configurable": {"thread_id": "queue-1"}}
    assert g.invoke({"count": 0}, cfg) == {"count": 1}
    runs = [_in_thread(lambda: [g.invoke({}, cfg, multitask="enqueue") for _ in range(5)]) for _ in range(6)]
    for t, out in runs:
        t.join(60)
        assert len(out) == 1 and not isinstance(out[0], BaseException), out
    assert g.get_state(cfg).values["count"] == 31  # 1 + 6 threads x 5 runs


def test_without_multitask_runs_share_the_thread_as_in_langgraph(saver):
    """The engine default (None) takes no lease: a run starts on a busy thread."""
    node = Slow()
    g = slow_graph(saver, node)
    cfg = {"configurable": {"thread_id": "shared-1"}}
    first, out = _in_thread(lambda: g.invoke({"count": 0}, cfg, multitask="reject"))
    assert node.started.wait(10)
    node.go.set()  # the second run's node does not wait
    assert g.invoke({"count": 10}, cfg) == {"count": 11}
    first.join(10)


def test_interrupt_cancels_the_running_one_whose_node_writes_nothing_then_runs(saver):
    node = Slow(seconds=3.0)  # it ignores the cancel and returns after 3 s
    g = slow_graph(saver, node)
    cfg = {"configurable": {"thread_id": "intr-1"}}
    first, out = _in_thread(lambda: g.invoke({"count": 0}, cfg, multitask="reject"))
    assert node.started.wait(10)
    t0 = time.monotonic()
    node_graph_second = counter(saver)
    assert node_graph_second.invoke({"count": 100}, cfg, multitask="interrupt") == {"count": 101}
    assert time.monotonic() - t0 < 2.5  # it did not wait for the first run's node
    first.join(10)
    assert isinstance(out[0], asyncio.CancelledError)
    assert "interrupted by a new run on thread 'intr-1'" in str(out[0])
    time.sleep(0.1)
    assert g.get_state(cfg).values == {"count": 101}
    assert all(s.values.get("count") != 1 for s in g.get_state_history(cfg))


def test_the_lease_is_given_back_on_error_interrupt_and_a_closed_stream(saver):
    class S(TypedDict, total=False):
        mode: str
        out: str

    def node(s: S) -> dict:
        if s["mode"] == "error":
            raise ValueError("boom")
        if s["mode"] == "ask":
            return {"out": interrupt("ok?")}
        return {"out": s["mode"]}

    g = StateGraph(S).add_node("n", node).add_node("m", lambda s: {}).add_edge(START, "n").add_edge("n", "m") \
        .add_edge("m", END).compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "exits-1"}}
    with pytest.raises(ValueError, match="boom"):
        g.invoke({"mode": "error"}, cfg, multitask="reject")
    out = g.invoke({"mode": "ask"}, cfg, multitask="reject")
    assert "__interrupt__" in out
    from lgnb.types import Command

    assert g.invoke(Command(resume="yes"), cfg, multitask="reject")["out"] == "yes"
    stream = g.stream({"mode": "go"}, cfg, multitask="reject", stream_mode="updates")
    assert next(stream) == {"n": {"out": "go"}}
    stream.close()  # GeneratorExit
    assert g.invoke({"mode": "again"}, cfg, multitask="reject")["out"] == "again"


def test_subgraphs_state_reads_and_updates_never_take_the_lease(saver):
    class S(TypedDict):
        count: int

    inner = StateGraph(S).add_node("inner", lambda s: {"count": s["count"] + 1}).add_edge(START, "inner").compile()
    seen: list = []

    def peek(s: S) -> dict:
        # while this run holds the thread: reading and updating it is allowed
        seen.append(outer.get_state(cfg).values)
        return {}

    outer = (
        StateGraph(S).add_node("sub", inner).add_node("peek", peek)
        .add_edge(START, "sub").add_edge("sub", "peek").compile(checkpointer=saver)
    )
    cfg = {"configurable": {"thread_id": "sub-1"}}
    assert outer.invoke({"count": 1}, cfg, multitask="reject") == {"count": 2}
    assert seen == [{"count": 2}]
    outer.update_state(cfg, {"count": 7})
    assert outer.invoke(None, cfg, multitask="reject") == {"count": 7}


def test_a_node_starting_a_root_run_on_its_own_thread_is_told_it_would_wait_for_itself(saver):
    class S(TypedDict):
        count: int

    def reenter(s: S) -> dict:
        other = counter(saver)
        other.invoke({"count": 0}, {"configurable": {"thread_id": "self-1"}}, multitask="enqueue")
        return {}

    g = StateGraph(S).add_node("reenter", reenter).add_edge(START, "reenter").compile(checkpointer=saver)
    with pytest.raises(ThreadBusyError, match="cannot start a root run on its own thread"):
        g.invoke({"count": 0}, {"configurable": {"thread_id": "self-1"}}, multitask="reject")


def test_a_bad_multitask_value_names_the_strategies(saver):
    g = counter(saver)
    with pytest.raises(ValueError, match="'reject'.*'enqueue'.*'interrupt'"):
        g.invoke({"count": 0}, {"configurable": {"thread_id": "x"}}, multitask="queue")


def test_async_enqueue_and_reject_on_lgnb_async_sqlite(tmp_path):
    async def main() -> None:
        async with AsyncSqliteSaver.from_conn_string(tmp_path / "a.sqlite") as s:
            g = counter(s)
            cfg = {"configurable": {"thread_id": "aq-1"}}
            assert await g.ainvoke({"count": 0}, cfg) == {"count": 1}
            await asyncio.gather(*(g.ainvoke({}, cfg, multitask="enqueue") for _ in range(20)))
            assert (await g.aget_state(cfg)).values["count"] == 21
            results = await asyncio.gather(*(g.ainvoke({}, cfg, multitask="reject") for _ in range(5)),
                                           return_exceptions=True)
            refused = [r for r in results if isinstance(r, ThreadBusyError)]
            done = [r for r in results if isinstance(r, dict)]
            assert refused and done and len(refused) + len(done) == 5
            assert (await g.aget_state(cfg)).values["count"] == 21 + len(done)

    asyncio.run(main())


# ---------------------------------------------------------------------- the lease rows
def _row(path: Any, thread_id: str, *, host: str, pid: int, expires_in: float) -> None:
    with SqliteSaver.from_conn_string(path) as s:
        s.conn.execute(
            "INSERT OR REPLACE INTO lgnb_thread_leases VALUES (?, ?, ?, ?, ?, ?, 0)",
            (thread_id, "someone-else", host, pid, time.time() - 1, time.time() + expires_in),
        )


def test_a_lease_row_of_a_dead_process_on_this_host_is_free_at_once(tmp_path):
    path = tmp_path / "threads.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # a pid that no longer runs
    _row(path, "dead-1", host=socket.gethostname(), pid=proc.pid, expires_in=3600)
    with SqliteSaver.from_conn_string(path) as s:
        assert counter(s).invoke({"count": 0}, {"configurable": {"thread_id": "dead-1"}}, multitask="reject") == {"count": 1}
        assert s.conn.execute("SELECT count(*) FROM lgnb_thread_leases").fetchone()[0] == 0


def test_a_live_lease_row_of_another_host_refuses_until_it_expires(tmp_path):
    path = tmp_path / "threads.sqlite"
    _row(path, "far-1", host="another-machine", pid=1, expires_in=3600)
    with SqliteSaver.from_conn_string(path) as s:
        g = counter(s)
        with pytest.raises(ThreadBusyError, match=r"run someone-else \(pid 1 on host another-machine"):
            g.invoke({"count": 0}, {"configurable": {"thread_id": "far-1"}}, multitask="reject")
    _row(path, "far-1", host="another-machine", pid=1, expires_in=-1)  # its heartbeat stopped
    with SqliteSaver.from_conn_string(path) as s:
        assert counter(s).invoke({"count": 0}, {"configurable": {"thread_id": "far-1"}}, multitask="reject") == {"count": 1}


def test_a_running_lease_row_names_its_owner_and_is_renewed_by_the_heartbeat(tmp_path, monkeypatch):
    import lgnb.pregel._lease as lease

    monkeypatch.setattr(lease, "HEARTBEAT", 0.05)
    lease._wake.set()  # a heartbeat thread already asleep picks up the short interval
    node = Slow()
    with SqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as s:
        g = slow_graph(s, node)
        first, _ = _in_thread(lambda: g.invoke({"count": 0}, {"configurable": {"thread_id": "hb-1"}},
                                               multitask="reject"))
        assert node.started.wait(10)
        query = "SELECT host, pid, expires_at FROM lgnb_thread_leases WHERE thread_id = 'hb-1'"
        host, pid, expires = s.conn.execute(query).fetchone()
        assert (host, pid) == (socket.gethostname(), os.getpid())
        deadline = time.monotonic() + 5
        while s.conn.execute(query).fetchone()[2] == expires and time.monotonic() < deadline:
            time.sleep(0.02)
        assert s.conn.execute(query).fetchone()[2] > expires  # renewed
        node.go.set()
        first.join(10)
        assert s.conn.execute(query).fetchone() is None  # released


def test_async_postgres_saver_takes_turns_on_a_thread_and_its_lease_is_renewed(postgres_url, monkeypatch):
    """lgnb's AsyncPostgresSaver: `setup()` creates the lease table; runs enqueue; the
    heartbeat thread renews the row through the saver's event loop while a run holds it."""
    import uuid

    import lgnb.pregel._lease as lease
    from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver

    monkeypatch.setattr(lease, "HEARTBEAT", 0.05)
    lease._wake.set()
    tid = f"apg-{uuid.uuid4().hex}"
    renewed: list[float] = []

    class Watched(TypedDict):
        count: int

    async def main() -> None:
        async with AsyncPostgresSaver.from_conn_string(postgres_url) as s:
            await s.setup()

            async def inc(st: Watched) -> dict:
                await asyncio.sleep(0.01)
                async with s._cursor() as cur:
                    await cur.execute("SELECT extract(epoch FROM expires_at)::float8 AS e FROM lgnb_thread_leases "
                                      "WHERE thread_id = %s", (tid,))
                    row = await cur.fetchone()
                renewed.append(row["e"])
                if len(renewed) == 1:
                    await asyncio.sleep(0.3)  # several heartbeats while this run holds the thread
                    async with s._cursor() as cur:
                        await cur.execute("SELECT extract(epoch FROM expires_at)::float8 AS e "
                                          "FROM lgnb_thread_leases WHERE thread_id = %s", (tid,))
                        renewed.append((await cur.fetchone())["e"])
                return {"count": st.get("count", 0) + 1}

            g = StateGraph(Watched).add_node("inc", inc).add_edge(START, "inc").compile(checkpointer=s)
            cfg = {"configurable": {"thread_id": tid}}
            await asyncio.gather(*(g.ainvoke({}, cfg, multitask="enqueue") for _ in range(8)))
            assert (await g.aget_state(cfg)).values["count"] == 8
            async with s._cursor() as cur:
                await cur.execute("SELECT count(*) AS n FROM lgnb_thread_leases WHERE thread_id = %s", (tid,))
                assert (await cur.fetchone())["n"] == 0

    asyncio.run(main())
    assert renewed[1] > renewed[0]

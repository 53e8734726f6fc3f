"""A notebook's stop button (KeyboardInterrupt) during a run never leaves the saver
unusable, and never loses a step the saver said it saved.

The interrupt is raised between two bytecodes of the main thread, so it can land right
after any SQLite statement the saver runs there: after a BEGIN, between the rows of a
checkpoint, after a COMMIT. A transaction left open by it used to make every later call on
the connection fail ("cannot start a transaction within a transaction") until the kernel
restarted. Here a connection (`sqlite3.connect(..., factory=...)`, a real SQLite file)
raises KeyboardInterrupt after its N-th main-thread statement, for every N a run makes;
each time the same saver must then show the thread, resume it with `invoke(None)` to the
right result, and list a history with no step missing or doubled.

On PostgreSQL the stop lands while psycopg waits for the server (a write blocked by a lock
another connection holds): psycopg would cancel the query and close the connection, so
lgnb holds the signal for the length of the write and raises KeyboardInterrupt after it
(`lgnb._internal.interrupts`). LangGraph's engine writes from a thread of its own, where no
KeyboardInterrupt lands; the stop must not cost a user more on lgnb.
"""

from __future__ import annotations

import _thread
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.graph import END, START, StateGraph

STEPS = 4


class Interrupting(sqlite3.Connection):
    """A connection that raises KeyboardInterrupt after its `after`-th statement run from
    the main thread (`before=True`: instead of running it), as a stop button would."""

    after: int | None = None
    before = False
    count = 0

    def _tick(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.count += 1
            if self.count == self.after:
                raise KeyboardInterrupt

    def execute(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if self.before:
            self._tick()
            return super().execute(*args, **kwargs)
        result = super().execute(*args, **kwargs)
        self._tick()
        return result

    def executemany(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if self.before:
            self._tick()
            return super().executemany(*args, **kwargs)
        result = super().executemany(*args, **kwargs)
        self._tick()
        return result


class Count(TypedDict):
    n: int
    log: list


def _graph(saver: SqliteSaver) -> Any:
    def step(state: Count) -> dict[str, Any]:
        return {"n": state["n"] + 1, "log": [*state["log"], state["n"]]}

    g = StateGraph(Count)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: END if s["n"] >= STEPS else "step")
    return g.compile(checkpointer=saver)


def _connect(path: Path) -> Interrupting:
    return sqlite3.connect(path, factory=Interrupting, check_same_thread=False)  # type: ignore[return-value]


def _run(app: Any, conn: Interrupting, thread: str, *, after: int | None, how: str) -> bool:
    """Start a run on `thread` with the interrupt armed; True if it was interrupted."""
    cfg = {"configurable": {"thread_id": thread}}
    conn.after, conn.count = after, 0
    try:
        if how == "stream":
            for _ in app.stream({"n": 0, "log": []}, cfg, stream_mode="values"):
                pass
        else:
            app.invoke({"n": 0, "log": []}, cfg)
        return False
    except KeyboardInterrupt:
        return True
    finally:
        conn.after = None


def _finish(app: Any, thread: str) -> tuple[Any, list[int]]:
    """What the user does next: look at the thread, resume it if anything is left."""
    cfg = {"configurable": {"thread_id": thread}}
    snap = app.get_state(cfg)
    if snap.next or snap.tasks:
        values = app.invoke(None, cfg)
    elif snap.values:
        values = snap.values
    else:  # interrupted before the input was saved: nothing to resume, run it again
        values = app.invoke({"n": 0, "log": []}, cfg)
    steps = sorted(s.metadata["step"] for s in app.get_state_history(cfg))
    return values, steps


@pytest.mark.parametrize("how", ["invoke", "stream"])
@pytest.mark.parametrize("before", [False, True], ids=["after-a-statement", "before-a-statement"])
def test_a_stop_at_any_statement_leaves_the_saver_usable_and_the_thread_resumable(
        tmp_path: Path, how: str, before: bool) -> None:
    conn = _connect(tmp_path / "runs.db")
    conn.before = before
    saver = SqliteSaver(conn)
    app = _graph(saver)
    assert not _run(app, conn, "count", after=None, how=how)
    total = conn.count
    assert total > 4, "the run made too few statements to interrupt"
    interrupted = 0
    for n in range(1, total + 1):
        thread = f"stop-at-{n}"
        interrupted += _run(app, conn, thread, after=n, how=how)
        values, steps = _finish(app, thread)
        assert values == {"n": STEPS, "log": list(range(STEPS))}, (n, values)
        assert steps == list(range(steps[0], STEPS + 1)) and steps[0] == -1, (n, steps)
    assert interrupted >= total - 1  # every statement of the run but (maybe) the last is reachable
    saver.close() if hasattr(saver, "close") else None
    conn.close()


def test_a_transaction_an_interrupt_left_open_is_rolled_back_by_the_next_call(tmp_path: Path) -> None:
    """The last line of defence: whatever left the connection inside a transaction (an
    interrupt between a BEGIN and the code that rolls back), the next call rolls it back
    and goes on, instead of failing until the kernel restarts."""
    conn = _connect(tmp_path / "runs.db")
    saver = SqliteSaver(conn)
    app = _graph(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"n": 0, "log": []}, cfg) == {"n": STEPS, "log": list(range(STEPS))}
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM lgnb_checkpoints")  # never committed: the interrupted call raised
    assert conn.in_transaction
    assert app.get_state(cfg).values == {"n": STEPS, "log": list(range(STEPS))}
    assert app.invoke({"n": 0, "log": []}, {"configurable": {"thread_id": "u"}})["n"] == STEPS
    assert len(list(app.get_state_history(cfg))) == STEPS + 2
    conn.close()


def test_a_stop_while_a_postgres_write_waits_keeps_the_connection_and_the_write(postgres_url: str) -> None:
    """The run's write of its first checkpoint waits for a lock another session holds (reads
    pass: EXCLUSIVE mode); the
    stop button is pressed meanwhile. The write completes once the lock is released, then
    the run stops with KeyboardInterrupt; the same saver resumes the thread to the end."""
    import psycopg

    from lgnb.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(postgres_url) as saver, \
            psycopg.connect(postgres_url, autocommit=True) as blocker:
        saver.setup()
        app = _graph(saver)
        thread = f"stop-{time.time_ns()}"
        cfg = {"configurable": {"thread_id": thread}}
        blocker.execute("BEGIN")
        blocker.execute("LOCK TABLE checkpoints IN EXCLUSIVE MODE")
        released: list[float] = []

        run_pid = saver.conn.info.backend_pid

        def stop_then_release() -> None:
            # the stop is pressed once the run's own write waits for the lock (not after a
            # fixed delay: a loaded machine may not have reached the write yet; not on another
            # session's wait: other test workers share the database), released 0.5 s later
            with psycopg.connect(postgres_url, autocommit=True) as watcher:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not watcher.execute(
                        "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid = %s "
                        "AND relation = 'checkpoints'::regclass", (run_pid,)
                ).fetchone()[0]:
                    time.sleep(0.01)
            _thread.interrupt_main()
            time.sleep(0.5)
            released.append(time.monotonic())
            blocker.execute("COMMIT")

        presser = threading.Thread(target=stop_then_release)
        presser.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                app.invoke({"n": 0, "log": []}, cfg)
            stopped = time.monotonic()
        finally:
            presser.join()
        assert released and stopped >= released[0], "the stop should wait for the blocked write to finish"
        assert not saver.conn.closed
        snap = app.get_state(cfg)
        assert snap.metadata["step"] == -1 and snap.next == ("__start__",)
        assert app.invoke(None, cfg) == {"n": STEPS, "log": list(range(STEPS))}
        steps = sorted(s.metadata["step"] for s in app.get_state_history(cfg))
        assert steps == list(range(-1, STEPS + 1))

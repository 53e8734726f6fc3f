"""The notebook's stop button pressed while a cell runs a graph, wherever the cell waits.

Jupyter's stop button sends SIGINT to the kernel: Python raises KeyboardInterrupt in the main
thread at its next bytecode boundary (or wakes it from a blocking wait). Each test presses it
for real (`_thread.interrupt_main()` while the main thread runs Python code,
`signal.pthread_kill(main, SIGINT)` while it blocks on a lock), synchronised with events so
the stop lands at one chosen place every time:

* a sync `graph.stream(...)`: in the consumer's loop body between two chunks; inside a sync
  node running in the main thread; and while the main thread waits for a node running in a
  worker thread. Afterwards the user looks at the thread (`get_state`), resumes it
  (`invoke(None)`) and lists its history; nodes that had finished must not run again.
  Compared with LangGraph on InMemorySaver and on each engine's own SQLite saver.
* `asyncio.run(graph.ainvoke(...))` / `astream` (asyncio.run turns SIGINT into cancelling the
  main task, then raises KeyboardInterrupt): same checks, on InMemorySaver and on each
  engine's AsyncSqliteSaver (reopened on the same file, as the next cell would).
* `lgnb.run(...).wait()` (the run view runs the graph on a thread of its own): the stop
  cancels the run the cell waits for and re-raises; the thread is left resumable.
* `lgnb.lens(...).run()`: the stop takes no step after the one in progress.

A stop while the main thread waits for a worker-thread node waits for that node and keeps
its writes, as LangGraph does, so a resume does not run it (its side effects) again.
"""

from __future__ import annotations

import _thread
import asyncio
import operator
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import pytest
from _diff import Engine
from _savers import Savers, thread
from typing_extensions import TypedDict

MAIN = threading.main_thread().ident


class S(TypedDict):
    log: Annotated[list, operator.add]


def _main_runs(code: Any) -> bool:
    """Whether the main thread is running `code` now (or something it called)."""
    frame = sys._current_frames().get(MAIN)  # type: ignore[arg-type]
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


def _press_when(ready: threading.Event, *, real_signal: bool = False,
                inside: Any = None) -> threading.Thread:
    """A thread that presses stop once `ready` is set: `interrupt_main()` for a main thread
    running Python code, a real SIGINT for one blocked on a lock. `inside`: and once the
    main thread runs this function (on a loaded machine, a node in another thread can
    start before the main thread has reached the `wait()` the stop is meant for)."""

    def press() -> None:
        if ready.wait(10):
            deadline = time.monotonic() + 10
            while inside is not None and not _main_runs(inside.__code__) and time.monotonic() < deadline:
                time.sleep(0.002)
            if real_signal:
                signal.pthread_kill(MAIN, signal.SIGINT)  # type: ignore[arg-type]
            else:
                _thread.interrupt_main()

    t = threading.Thread(target=press, daemon=True)
    t.start()
    return t


def _spin_until_stopped() -> None:
    """The main thread busy in Python code until the stop lands (bounded: a test, not a hang)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.005)
    raise AssertionError("the stop button was never pressed")


def _chain(E: Engine, node: Any, *, branch: bool = False) -> Any:
    """a -> b -> c (and a -> x -> c with `branch`): `node(name)` makes each node."""
    g = E.StateGraph(S)
    names = "abcx" if branch else "abc"
    for n in names:
        g.add_node(n, node(n))
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", E.END)
    if branch:
        g.add_edge("a", "x")
        g.add_edge("x", "c")
    return g


def _where(name: str) -> str:
    return name if threading.current_thread() is threading.main_thread() else f"{name}@worker"


def _after(app: Any, cfg: dict, ran: list[str]) -> dict[str, Any]:
    """What the user does after the stop: look, resume, list the history. `ran` is
    compared sorted: parallel nodes start in worker threads, in an order that varies
    (under load, on Python 3.13); the history gives the order of the steps."""
    snap = app.get_state(cfg)
    seen = {"state": (snap.values, snap.next, sorted((t.name, t.result) for t in snap.tasks)),
            "ran_before_resume": sorted(ran)}
    seen["resume"] = app.invoke(None, cfg)
    seen["ran"] = sorted(ran)
    seen["history"] = [(h.metadata["step"], h.next) for h in app.get_state_history(cfg)]
    return seen


def _sync_saver(stack: Any, savers: Savers, kind: str, E: Engine) -> Any:
    if kind == "memory":
        return E.InMemorySaver()
    return stack.enter_context(savers.open(f"{E.root}_sqlite", E))


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("where", ["consumer-loop", "main-thread-node"])
def test_a_stop_in_a_sync_stream_leaves_the_thread_resumable_without_running_finished_nodes_again(
        differential: Any, savers: Savers, kind: str, where: str) -> None:
    def scenario(E: Engine) -> Any:
        from contextlib import ExitStack

        ran: list[str] = []
        ready = threading.Event()

        def node(name: str) -> Any:
            def run(state: S) -> dict[str, Any]:
                ran.append(_where(name))
                if where == "main-thread-node" and name == "b" and ran.count("b") == 1:
                    ready.set()
                    _spin_until_stopped()
                return {"log": [name]}
            return run

        with ExitStack() as stack:
            app = _chain(E, node).compile(checkpointer=_sync_saver(stack, savers, kind, E))
            cfg = thread("stop")
            presser = _press_when(ready)
            chunks = []
            try:
                for chunk in app.stream({"log": []}, cfg, stream_mode="updates"):
                    chunks.append(chunk)
                    if where == "consumer-loop" and len(chunks) == 1:
                        ready.set()
                        _spin_until_stopped()
                stopped = False
            except KeyboardInterrupt:
                stopped = True
            presser.join()
            return {"stopped": stopped, "chunks": chunks, **_after(app, cfg, ran)}

    ref = differential(scenario)
    assert ref["stopped"] and ref["resume"] == {"log": ["a", "b", "c"]}
    assert ref["ran_before_resume"] == (["a"] if where == "consumer-loop" else ["a", "b"])
    assert ref["ran"].count("a") == 1  # the finished node is not run again


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_stop_while_the_main_thread_waits_for_a_worker_node_keeps_that_nodes_writes(
        differential: Any, savers: Savers, kind: str) -> None:
    def scenario(E: Engine) -> Any:
        from contextlib import ExitStack

        ran: list[str] = []
        x_done, ready = threading.Event(), threading.Event()

        def node(name: str) -> Any:
            def run(state: S) -> dict[str, Any]:
                ran.append(_where(name))
                if name == "x":
                    x_done.set()
                if name == "b" and ran.count("b@worker") == 1:
                    x_done.wait(5)
                    time.sleep(0.2)  # x's write is saved
                    ready.set()
                    time.sleep(0.3)  # still running when the stop lands
                return {"log": [name]}
            return run

        with ExitStack() as stack:
            app = _chain(E, node, branch=True).compile(checkpointer=_sync_saver(stack, savers, kind, E))
            cfg = thread("stop")
            presser = _press_when(ready, real_signal=True)
            try:
                for _ in app.stream({"log": []}, cfg, stream_mode="updates"):
                    pass
                stopped = False
            except KeyboardInterrupt:
                stopped = True
            presser.join()
            time.sleep(0.5)  # the abandoned worker (if any) ends
            return {"stopped": stopped, **_after(app, cfg, ran)}

    differential(scenario)


@pytest.mark.parametrize("kind", ["memory", "async_sqlite"])
@pytest.mark.parametrize("how", ["ainvoke", "astream"])
def test_asyncio_run_stopped_inside_a_node_leaves_the_thread_resumable(
        differential: Any, tmp_path: Path, kind: str, how: str) -> None:
    """The stop cancels asyncio.run's main task (the running node `b` with it); `x`, which
    had finished, keeps its write and does not run again. (The error recorded on `b`'s task
    is left out: LangGraph records `CancelledError()` on some savers and not others, lgnb
    records none.)"""
    files = iter(range(1000))

    def scenario(E: Engine) -> Any:
        ran: list[str] = []
        path = str(tmp_path / f"{E.root}-{how}-{next(files)}.sqlite")
        memory = E.InMemorySaver()
        if E.root == "lgnb":
            from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
        else:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        def node(name: str) -> Any:
            async def run(state: S) -> dict[str, Any]:
                ran.append(name)
                if name == "b" and ran.count("b") == 1:
                    await asyncio.sleep(0.2)  # x ends and its write is saved
                    _thread.interrupt_main()
                    await asyncio.sleep(10)
                return {"log": [name]}
            return run

        graph = _chain(E, node, branch=True)
        cfg = thread("stop")

        async def session(first: bool, path: str = path) -> Any:
            async with AsyncSqliteSaver.from_conn_string(path) as saver:
                app = graph.compile(checkpointer=memory if kind == "memory" else saver)
                if first:
                    if how == "ainvoke":
                        return await app.ainvoke({"log": []}, cfg)
                    return [c async for c in app.astream({"log": []}, cfg, stream_mode="updates")]
                snap = await app.aget_state(cfg)
                seen: dict[str, Any] = {
                    "state": (snap.values, snap.next, sorted((t.name, t.result) for t in snap.tasks)),
                    "ran_before_resume": list(ran)}
                seen["resume"] = await app.ainvoke(None, cfg)
                seen["ran"] = list(ran)
                seen["history"] = [(h.metadata["step"], h.next) async for h in app.aget_state_history(cfg)]
                return seen

        began = time.monotonic()
        threads_before = set(threading.enumerate())
        try:
            asyncio.run(session(first=True))
            stopped = False
        except KeyboardInterrupt:
            stopped = True
        assert time.monotonic() - began < 5, "the stop did not stop the run"
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        return {"stopped": stopped,
                **asyncio.run(session(first=False, path=_wait_until_unlocked(path, threads_before)))}

    ref = differential(scenario)
    assert ref["stopped"] and ref["resume"] == {"log": ["a", "b", "x", "c"]}
    assert ref["ran"].count("x") == 1 and ref["ran"].count("b") == 2


def _wait_until_unlocked(path: str, threads_before: set[threading.Thread]) -> str:
    """The file to resume from: `path` once the stopped session's connection let go of it.

    That connection closes in aiosqlite's own thread, which a loaded machine may run a
    little late: wait (up to 10 s) for the threads the session started to end, then until
    the file takes a write lock, as a user re-running the cell would. On a loaded machine LangGraph's abandoned connection has been seen to
    keep its lock longer (the reference then failed with "database is locked"): then what
    is on disk — the file and its write-ahead log, as after a kernel restart — is copied
    beside it and the resume reads that copy."""
    import shutil
    import sqlite3

    deadline = time.monotonic() + 10
    for leftover in set(threading.enumerate()) - threads_before:
        leftover.join(max(0.0, deadline - time.monotonic()))
    if not Path(path).exists():
        return path
    conn = sqlite3.connect(path, timeout=10)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.rollback()
        return path
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc):
            raise
    finally:
        conn.close()
    copy = path + ".resumed.sqlite"
    shutil.copyfile(path, copy)
    if Path(path + "-wal").exists():
        shutil.copyfile(path + "-wal", copy + "-wal")
    return copy


def _stop_while(wait: Any, started: threading.Event, release: threading.Event) -> None:
    """Press stop (a real SIGINT) once the blocking node started, while the main thread is
    in `wait()`: the call re-raises KeyboardInterrupt; then let the node end."""
    presser = _press_when(started, real_signal=True, inside=wait)
    try:
        with pytest.raises(KeyboardInterrupt):
            wait()
    finally:
        presser.join()
        release.set()


def _blocking_graph(release: threading.Event, started: threading.Event, ran: list[str]) -> Any:
    from lgnb.checkpoint.memory import InMemorySaver

    E = Engine("lgnb")

    def node(name: str) -> Any:
        def run(state: S) -> dict[str, Any]:
            ran.append(name)
            if name == "b" and ran.count("b") == 1:
                started.set()
                release.wait(10)
            return {"log": [name]}
        return run

    return _chain(E, node).compile(checkpointer=InMemorySaver())


def test_a_stop_while_run_wait_blocks_cancels_the_run_and_reraises() -> None:
    """The stop button stops what the cell started: `run.wait()` interrupted cancels the run
    through its own cancel path (status and view say "cancelled"), re-raises
    KeyboardInterrupt, and the busy node's late writes are thrown away; the thread resumes
    from its last checkpoint."""
    import lgnb

    ran: list[str] = []
    release, started = threading.Event(), threading.Event()
    app = _blocking_graph(release, started, ran)
    cfg = thread("view")
    run = lgnb.run(app, {"log": []}, cfg, display=False)
    _stop_while(lambda: run.wait(timeout=10), started, release)
    assert run.status == "cancelled" and run.view.status == "cancelled"
    assert run.cancel() is False  # nothing left to cancel
    time.sleep(0.3)  # the busy node ends in its thread, unseen
    snap = app.get_state(cfg)
    assert snap.values == {"log": ["a"]} and snap.next == ("b",)
    assert app.invoke(None, cfg) == {"log": ["a", "b", "c"]}
    assert ran == ["a", "b", "b", "c"]


def test_a_stop_while_lens_run_waits_takes_no_step_after_the_one_in_progress() -> None:
    import lgnb

    ran: list[str] = []
    release, started = threading.Event(), threading.Event()
    app = _blocking_graph(release, started, ran)
    lens = lgnb.lens(app, {"log": []}, thread("lens"), display=False)
    _stop_while(lambda: lens.run(timeout=10), started, release)
    lens._request(lambda: None).result(10)  # the step in progress ends
    assert lens.status == "paused" and ran == ["a", "b"]
    assert lens.run(timeout=10) == {"log": ["a", "b", "c"]}
    assert lens.status == "done" and ran == ["a", "b", "c"]

"""One run per thread across processes (issue 11, item 4): two real processes run a
counter graph on one thread at the same time, 120 runs in all, through lgnb's SQLite
saver (one file) and lgnb's PostgreSQL saver (one database). Without a lease they lose
increments (each reads the count, the later save hides the earlier); with
`multitask="enqueue"` none is lost (the count is 120); with "reject" a run on the busy
thread is refused with `ThreadBusyError` naming the thread and the other process, and
every run that ran counted. "interrupt" from one process cancels the other's run (its
heartbeat learns it); a SIGKILLed holder's thread is free at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from typing import TypedDict
    sys.path.insert(0, {repo!r})
    from lgnb.errors import ThreadBusyError
    from lgnb.graph import START, StateGraph

    kind, target, thread_id, n, multitask, start_at, pause, marker = sys.argv[1:9]
    n, pause, start_at = int(n), float(pause), float(start_at)
    multitask = None if multitask == "none" else multitask

    class S(TypedDict):
        count: int

    def inc(s):
        seen = s.get("count", 0)
        if marker != "-":
            open(marker, "w").write(str(os.getpid()))
        time.sleep(pause)
        return {{"count": seen + 1}}

    def run(saver):
        g = StateGraph(S).add_node("inc", inc).add_edge(START, "inc").compile(checkpointer=saver)
        cfg = {{"configurable": {{"thread_id": thread_id}}}}
        ok, refused, messages, errors = 0, 0, set(), []
        while time.time() < start_at:
            time.sleep(0.001)
        for _ in range(n):
            try:
                g.invoke({{}}, cfg, multitask=multitask)
                ok += 1
            except ThreadBusyError as exc:
                refused += 1
                messages.add(str(exc).split(" (pid ")[1].split(" on host")[0])
                assert "Thread %r is busy" % thread_id in str(exc), str(exc)
                assert "multitask='enqueue'" in str(exc), str(exc)
            except BaseException as exc:
                errors.append(repr(exc))
        return {{"ok": ok, "refused": refused, "refused_by_pids": sorted(messages), "errors": errors,
                 "pid": os.getpid()}}

    if kind == "sqlite":
        from lgnb.checkpoint.sqlite import SqliteSaver
        with SqliteSaver.from_conn_string(target, busy_timeout=60) as saver:
            out = run(saver)
    else:
        from lgnb.checkpoint.postgres import PostgresSaver
        with PostgresSaver.from_conn_string(target) as saver:
            saver.setup()
            out = run(saver)
    print(json.dumps(out))
    """
)


def _target(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return str(tmp_path / "threads.sqlite")
    return request.getfixturevalue("postgres_url")


def _start(script: Path, kind: str, target: str, tid: str, n: int, multitask: str, start_at: float,
           pause: float = 0.005, marker: str = "-") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(script), kind, target, tid, str(n), multitask, str(start_at), str(pause), marker],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _result(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _count(kind: str, target: str, tid: str) -> int:
    cfg = {"configurable": {"thread_id": tid}}
    if kind == "sqlite":
        from lgnb.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(target) as saver:
            return saver.get_tuple(cfg).checkpoint["channel_values"]["count"]
    from lgnb.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(target) as saver:
        return saver.get_tuple(cfg).checkpoint["channel_values"]["count"]


def _two(tmp_path: Path, kind: str, target: str, multitask: str, per_process: int = 60,
         pause: float = 0.005) -> tuple[str, list[dict]]:
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(repo=str(REPO)))
    tid = f"lease-{multitask}-{uuid.uuid4().hex}"
    start_at = time.time() + 4  # both interpreters are up before the first run
    procs = [_start(script, kind, target, tid, per_process, multitask, start_at, pause) for _ in range(2)]
    return tid, [_result(p) for p in procs]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_without_a_lease_two_processes_lose_updates_the_control(tmp_path, request, kind):
    """The control for the tests below: the same two processes with no lease (LangGraph's
    behaviour, and lgnb's `invoke` without `multitask=`) interleave and lose increments,
    so a count of 120 there is the lease's doing."""
    target = _target(kind, tmp_path, request)
    tid, results = _two(tmp_path, kind, target, "none", pause=0.02)
    assert [r["errors"] for r in results] == [[], []]
    assert [r["ok"] for r in results] == [60, 60]
    assert _count(kind, target, tid) < 120


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_two_processes_enqueue_on_one_thread_and_lose_no_update(tmp_path, request, kind):
    target = _target(kind, tmp_path, request)
    tid, results = _two(tmp_path, kind, target, "enqueue")
    assert [r["errors"] for r in results] == [[], []]
    assert [r["ok"] for r in results] == [60, 60]
    assert _count(kind, target, tid) == 120


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_two_processes_with_reject_refuse_each_other_clearly_and_every_run_that_ran_counts(tmp_path, request, kind):
    target = _target(kind, tmp_path, request)
    tid, results = _two(tmp_path, kind, target, "reject")
    assert [r["errors"] for r in results] == [[], []]
    assert sum(r["refused"] for r in results) > 0
    assert sum(r["ok"] + r["refused"] for r in results) == 120
    pids = {str(r["pid"]) for r in results}
    for r in results:  # each was refused because of the other process, never of itself
        assert set(r["refused_by_pids"]) <= pids - {str(r["pid"])}
    assert _count(kind, target, tid) == sum(r["ok"] for r in results)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_interrupt_from_another_process_cancels_the_running_run_which_writes_nothing(tmp_path, request, kind):
    target = _target(kind, tmp_path, request)
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(repo=str(REPO)))
    tid = f"lease-intr-{uuid.uuid4().hex}"
    marker = tmp_path / "started"
    # one long run (its node takes 12 s and ignores the cancel), then an interrupting one
    first = _start(script, kind, target, tid, 1, "reject", 0, pause=12.0, marker=str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()
    t0 = time.monotonic()
    second = _start(script, kind, target, tid, 1, "interrupt", 0, pause=0.0)
    b = _result(second)
    assert time.monotonic() - t0 < 9  # it did not wait out the first run's node
    a = _result(first)
    assert b == {**b, "ok": 1, "errors": []}
    assert a["ok"] == 0 and len(a["errors"]) == 1 and "interrupted by a new run" in a["errors"][0]
    assert _count(kind, target, tid) == 1  # the second's; the first's node saved nothing


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_sigkilled_holder_frees_its_thread_at_once(tmp_path, request, kind):
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(repo=str(REPO)))
    target = _target(kind, tmp_path, request)
    tid = f"lease-kill-{uuid.uuid4().hex}"
    marker = tmp_path / "started"
    holder = _start(script, kind, target, tid, 1, "reject", 0, pause=60.0, marker=str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(30)
    t0 = time.monotonic()
    after = _result(_start(script, kind, target, tid, 1, "reject", 0, pause=0.0))
    assert after["ok"] == 1 and after["refused"] == 0, after
    assert time.monotonic() - t0 < 20  # not the 30 s lease expiry: the owner is dead

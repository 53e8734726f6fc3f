"""A run on lgnb's SQLite saver is killed with SIGKILL in the middle of a super-step; a new
process resumes it with invoke(None, config) and finishes. Side-effect files prove that the
nodes that had finished (including the finished sibling of the killed task) did not run again
and that nothing was lost.

Graph: s1 -> s2 -> (p_fast, p_block in one step) -> s4. In the first process p_block waits for
p_fast to finish, signals through a flag file and blocks; the test then SIGKILLs the process.
The same scenario runs with LangGraph as the engine (the reference) and with lgnb.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import _diff

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import importlib, json, operator, os, sys, time
    from typing import Annotated
    from typing_extensions import TypedDict

    sys.path.insert(0, {repo!r})
    engine, db, work, mode, durability = sys.argv[1:6]
    G = importlib.import_module(engine + ".graph")
    from lgnb.checkpoint.sqlite import SqliteSaver

    work = os.path.abspath(work)
    counter = os.path.join(work, "calls.txt")
    flag = os.path.join(work, "blocked.flag")

    def record(name):
        with open(counter, "a") as f:
            f.write(name + "\\n")
            f.flush()
            os.fsync(f.fileno())

    def calls():
        if not os.path.exists(counter):
            return []
        return open(counter).read().split()

    class S(TypedDict):
        log: Annotated[list, operator.add]

    def plain(name):
        def node(s):
            record(name)
            return {{"log": [name]}}
        return node

    def p_block(s):
        record("p_block")
        if mode == "crash":
            deadline = time.time() + 10
            while "p_fast" not in calls() and time.time() < deadline:
                time.sleep(0.02)
            time.sleep(0.5)  # let the engine store p_fast's writes
            open(flag, "w").write("blocked")
            while True:  # until SIGKILL
                time.sleep(1)
        return {{"log": ["p_block"]}}

    g = G.StateGraph(S)
    g.add_node("s1", plain("s1"))
    g.add_node("s2", plain("s2"))
    g.add_node("p_fast", plain("p_fast"))
    g.add_node("p_block", p_block)
    g.add_node("s4", plain("s4"))
    g.add_edge(G.START, "s1")
    g.add_edge("s1", "s2")
    g.add_edge("s2", "p_fast")
    g.add_edge("s2", "p_block")
    g.add_edge(["p_fast", "p_block"], "s4")

    cfg = {{"configurable": {{"thread_id": "crash-thread"}}}}
    with SqliteSaver.from_conn_string(db) as saver:
        app = g.compile(checkpointer=saver)
        if mode == "crash":
            app.invoke({{"log": []}}, cfg, durability=durability)
            print("NOT KILLED")
        else:
            st = app.get_state(cfg)
            before = {{
                "next": list(st.next),
                "values": st.values,
                "step": st.metadata["step"],
                "tasks": sorted([t.name, t.result] for t in st.tasks),
            }}
            result = app.invoke(None, cfg, durability=durability)
            history = [[s.metadata["source"], s.metadata["step"], list(s.next)]
                       for s in app.get_state_history(cfg)]
            print(json.dumps({{"before": before, "result": result, "history": history, "calls": calls()}}))
    """
)


def _run(engine: str, durability: str, tmp_path: Path) -> dict:
    script = tmp_path / "crash_graph.py"
    script.write_text(SCRIPT.format(repo=str(REPO)))
    work = tmp_path / "work"
    work.mkdir()
    db = tmp_path / "threads.sqlite"
    args = [sys.executable, str(script), engine, str(db), str(work)]

    proc = subprocess.Popen(args + ["crash", durability], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (work / "blocked.flag").exists():
            if proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"first process ended before blocking (rc={proc.returncode}):\n{out}\n{err}")
            if time.monotonic() > deadline:
                pytest.fail("first process never reached the blocking node")
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    calls_at_kill = (work / "calls.txt").read_text().split()

    res = subprocess.run(args + ["resume", durability], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["calls_at_kill"] = calls_at_kill
    return out


EXPECTED_CALLS_AT_KILL = ["s1", "s2", "p_block", "p_fast"]


@pytest.mark.slow
@pytest.mark.parametrize("durability", ["sync", "async"])
@pytest.mark.parametrize("engine", ["langgraph", "lgnb"])
def test_sigkilled_run_resumes_in_a_new_process_without_rerunning_finished_nodes(tmp_path, engine, durability):
    root = _diff.candidate_engine().root if engine == "lgnb" else "langgraph"
    out = _run(root, durability, tmp_path)

    assert sorted(out["calls_at_kill"]) == sorted(EXPECTED_CALLS_AT_KILL)
    # the new process sees the step that was running: p_fast done (its writes kept and shown
    # in the live state, as LangGraph shows them), p_block still to run
    assert out["before"]["next"] == ["p_block"], out
    assert out["before"]["values"] == {"log": ["s1", "s2", "p_fast"]}, out
    assert ["p_fast", {"log": ["p_fast"]}] in out["before"]["tasks"], out
    # the run finishes with everything, in task-path order
    assert out["result"] == {"log": ["s1", "s2", "p_block", "p_fast", "s4"]}, out
    # only the killed node ran again; every finished node ran exactly once
    counts = {n: out["calls"].count(n) for n in ("s1", "s2", "p_fast", "p_block", "s4")}
    assert counts == {"s1": 1, "s2": 1, "p_fast": 1, "p_block": 2, "s4": 1}, out
    # one checkpoint per super-step, the interrupted step included once
    assert out["history"] == [
        ["loop", 4, []],
        ["loop", 3, ["s4"]],
        ["loop", 2, ["p_fast", "p_block"]],
        ["loop", 1, ["s2"]],
        ["loop", 0, ["s1"]],
        ["input", -1, ["__start__"]],
    ], out

"""Several processes opening one new SQLite checkpoint file at the same moment (two
kernels started together on the notebook's default `lgnb.sqlite`) all get a working
saver: SQLite refuses the switch to WAL mode with "database is locked" at once while
another connection holds the file, and the saver waits and retries as for any other
lock, within its `busy_timeout`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

OPENER = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, {repo!r})
    from typing import TypedDict
    from lgnb.checkpoint.sqlite import SqliteSaver
    from lgnb.graph import START, StateGraph

    path, start_at, me = sys.argv[1], float(sys.argv[2]), sys.argv[3]

    class S(TypedDict):
        who: str

    g = StateGraph(S).add_node("n", lambda s: {{"who": s["who"] + "!"}}).add_edge(START, "n")
    while time.time() < start_at:
        pass
    with SqliteSaver.from_conn_string(path, busy_timeout=30) as saver:
        out = g.compile(checkpointer=saver).invoke({{"who": me}}, {{"configurable": {{"thread_id": me}}}})
        mode = saver.conn.execute("PRAGMA journal_mode").fetchone()[0]
    print(json.dumps({{"out": out, "mode": mode}}))
    """
)


@pytest.mark.slow
def test_processes_opening_one_new_file_at_once_all_get_a_wal_saver(tmp_path):
    script = tmp_path / "opener.py"
    script.write_text(OPENER.format(repo=str(REPO)))
    path = tmp_path / "shared.sqlite"
    for attempt in range(3):  # a fresh file each round: the race is on creation
        target = path.with_name(f"shared{attempt}.sqlite")
        start_at = time.time() + 2.0
        procs = [
            subprocess.Popen(
                [sys.executable, str(script), str(target), str(start_at), f"p{i}"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            for i in range(6)
        ]
        for i, proc in enumerate(procs):
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            result = json.loads(out.strip().splitlines()[-1])
            assert result == {"out": {"who": f"p{i}!"}, "mode": "wal"}

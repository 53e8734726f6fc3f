"""Two real processes can write one checkpoint file at the same time."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from lgnb.checkpoint.sqlite import SqliteSaver

REPO = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from langgraph.checkpoint.base import empty_checkpoint
    from lgnb.checkpoint.sqlite import SqliteSaver

    name, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with SqliteSaver.from_conn_string(path, busy_timeout=60) as saver:
        # one thread of our own, and our own namespace in a thread both processes write
        parents = [
            {{"configurable": {{"thread_id": name, "checkpoint_ns": ""}}}},
            {{"configurable": {{"thread_id": "shared", "checkpoint_ns": name}}}},
        ]
        version = None
        for step in range(n):
            version = saver.get_next_version(version)
            for i, parent in enumerate(parents):
                cp = empty_checkpoint()
                cp["channel_values"] = {{"doc": f"{{name}}:{{step}}:" + "x" * 5000}}
                cp["channel_versions"] = {{"doc": version}}
                stored = saver.put(parent, cp, {{"step": step, "writer": name}}, {{"doc": version}})
                saver.put_writes(stored, [("doc", step)], f"task-{{step}}")
                parents[i] = stored
    print("done", name)
    """
)


def test_two_processes_write_one_file_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(repo=str(REPO)))
    n = 150
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), name, str(path), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        assert out.startswith("done")

    with SqliteSaver.from_conn_string(path) as saver:
        for name in ("alpha", "beta"):
            own = list(saver.list({"configurable": {"thread_id": name}}))
            shared = list(
                saver.list({"configurable": {"thread_id": "shared", "checkpoint_ns": name}})
            )
            assert len(own) == len(shared) == n
            latest = own[0]
            assert latest.metadata == {"step": n - 1, "writer": name}
            assert latest.checkpoint["channel_values"]["doc"].startswith(f"{name}:{n - 1}:")
            assert latest.pending_writes == [(f"task-{n - 1}", "doc", n - 1)]
        assert saver.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

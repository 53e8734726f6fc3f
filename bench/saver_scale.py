"""Issue 14's saver figures: per-checkpoint cost, file size, first page of history.

    .venv/bin/python bench/bench_saver.py --scale [--steps 1000] [--history 10000] [--rounds 3]

A graph of 50 keys (49 small strings and one of ~1 KB) whose one node loops on itself,
changing the 1 KB key each step, runs on the lgnb engine with each saver on a fresh file
(`durability="sync"`): both in WAL mode with `synchronous=NORMAL` (LangGraph's
`SqliteSaver` turns WAL on at setup and is switched to NORMAL here; lgnb's default is
NORMAL), so neither fsyncs per commit. Savers are interleaved round by round; the
median round is printed. Measured:

* saver µs per checkpoint: CPU time (user + system, of the calling thread) inside
  `put` + `put_writes` (the loop's calls) — CPU, not wall time: the shared machine is
  loaded, and neither saver fsyncs;
* file size after `--steps` steps (database + WAL, after a checkpoint of the WAL);
* first page: `list(config, limit=10)` and the first 10 of `get_state_history` on a
  thread of `--history` checkpoints (best of 20 reads).

Two more rows, the *floors*, are not savers: one INSERT and COMMIT per step of one row
holding the step's checkpoint, new values and writes (`FloorSaver`), in the same loop;
the *delta floor* row holds only what the step changed (the new channels' versions, not
all 51). They are what issue 14's "≤ 0.20× of LangGraph's per checkpoint" is up against:
no layout that commits each step can cost less. A third bound, *lgnb, no commits*, is
lgnb's saver with every step's transaction left open (one commit when the run is read):
what its rows cost without any commit, the most a write-behind design could save.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

KEYS = [f"k{i:02d}" for i in range(50)]
FLOOR = "floor (one row/step)"
DELTA_FLOOR = "delta floor"
UNCOMMITTED = "lgnb, no commits"
FLOORS = (FLOOR, DELTA_FLOOR)
BOUNDS = (*FLOORS, UNCOMMITTED)
BIG = "k00"


def _value(step: int) -> str:
    return (f"step {step:06d} " * 80)[:1024]


def build(checkpointer: Any, steps: int) -> Any:
    from typing_extensions import TypedDict

    from lgnb.graph import END, START, StateGraph

    State = TypedDict("State", {k: Any for k in KEYS} | {"n": int})  # type: ignore[misc]

    def node(state: dict[str, Any]) -> dict[str, Any]:
        n = state["n"] + 1
        return {BIG: _value(n), "n": n}

    g = StateGraph(State)
    g.add_node("step", node)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < steps else END, ["step", END])
    return g.compile(checkpointer=checkpointer)


def _inputs() -> dict[str, Any]:
    values: dict[str, Any] = {k: f"value of {k}" for k in KEYS}
    values[BIG] = _value(0)
    values["n"] = 0
    return values


@contextmanager
def lgnb_uncommitted(path: Path) -> Iterator[Any]:
    """Not a saver: lgnb's SqliteSaver with the steps' write transactions left open and
    committed once, when something reads. What lgnb's rows cost without a commit per step
    (encoding, hashing, the inserts): the least a design that commits less often (an
    append-only log folded into SQLite later, say) would still pay for them."""
    from lgnb.checkpoint.sqlite._behind import execute

    with lgnb_saver(path) as saver:
        store, conn = saver.store, saver.conn
        store.behind.closed = True  # no flusher: it would roll back the open transaction
        read = store.reading

        @contextmanager
        def writing() -> Iterator[Any]:
            with store.lock:
                if not conn.in_transaction:
                    conn.execute("BEGIN IMMEDIATE")
                batches = store.behind.take()
                if batches:
                    execute(conn, batches)
                yield conn

        def reading() -> Any:
            if conn.in_transaction:
                conn.execute("COMMIT")
            return read()

        store.writing, store.reading = writing, reading  # type: ignore[method-assign]
        try:
            yield saver
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")


@contextmanager
def langgraph_saver(path: Path) -> Iterator[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.setup()
        saver.conn.execute("PRAGMA synchronous = NORMAL")
        yield saver


@contextmanager
def lgnb_saver(path: Path) -> Iterator[Any]:
    from lgnb.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(path, synchronous="NORMAL") as saver:
        yield saver


def _floor_saver_class() -> type:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    class FloorSaver(BaseCheckpointSaver):
        """Not a saver: the least any SQLite layout must do per step. The step's
        checkpoint (without unchanged values), its new values and its writes go into
        one row of one rowid table keyed `(thread, ns, id)`, one INSERT and one COMMIT
        per step, serialized with one `ormsgpack.packb`. Nothing can be read back."""

        def __init__(self, conn: Any, *, delta: bool = False) -> None:
            super().__init__()
            self.conn = conn
            self.delta = delta
            self.writes: list[Any] = []

        def get_tuple(self, config: Any) -> None:
            return None

        def get_next_version(self, current: Any, channel: Any = None) -> int:
            return 1 if current is None else int(current) + 1

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            self.writes.append((task_id, list(writes)))

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            import ormsgpack

            values = checkpoint["channel_values"]
            conf = config["configurable"]
            if self.delta:  # only what the step changed: its versions, not all 51
                versions = checkpoint["channel_versions"]
                row = {"ts": checkpoint["ts"], "versions": {c: versions[c] for c in new_versions},
                       "seen": checkpoint["versions_seen"]}
            else:
                row = {k: v for k, v in checkpoint.items() if k != "channel_values"}
            row["new"] = {c: values[c] for c in new_versions if c in values}
            row["writes"], self.writes = self.writes, []
            row["metadata"] = metadata
            data = ormsgpack.packb(row, option=ormsgpack.OPT_NON_STR_KEYS)
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "INSERT INTO steps VALUES (?, ?, ?, ?, ?)",
                (conf["thread_id"], conf.get("checkpoint_ns", ""), checkpoint["id"],
                 conf.get("checkpoint_id"), data),
            )
            self.conn.execute("COMMIT")
            return {"configurable": {**conf, "checkpoint_id": checkpoint["id"]}}

    return FloorSaver


@contextmanager
def floor_saver(path: Path, *, delta: bool = False) -> Iterator[Any]:
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(
        "CREATE TABLE steps (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
        "parent_id TEXT, data BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))"
    )
    try:
        yield _floor_saver_class()(conn, delta=delta)
    finally:
        conn.close()


SAVERS: dict[str, Callable[[Path], Any]] = {
    "langgraph.SqliteSaver": langgraph_saver,
    "lgnb.SqliteSaver": lgnb_saver,
    FLOOR: floor_saver,
    DELTA_FLOOR: lambda path: floor_saver(path, delta=True),
    UNCOMMITTED: lgnb_uncommitted,
}
"""The savers measured; the floor is measured for per-checkpoint cost and size only."""


class CpuTimer:
    """Adds up the calling thread's CPU time inside a saver's `put` and `put_writes`."""

    def __init__(self, saver: Any) -> None:
        self.seconds = 0.0
        self.puts = 0
        for name in ("put", "put_writes"):
            setattr(saver, name, self._timed(getattr(saver, name), count=name == "put"))

    def _timed(self, fn: Callable[..., Any], *, count: bool) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start
                self.puts += count

        return timed


def _file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def one_round(name: str, *, steps: int) -> tuple[float, int]:
    """µs per checkpoint inside the saver, and the file's bytes after `steps` steps."""
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        path = Path(tmp) / "threads.sqlite"
        with SAVERS[name](path) as saver:
            timer = CpuTimer(saver)
            graph = build(saver, steps)
            cfg = {"configurable": {"thread_id": "t"}, "recursion_limit": steps + 10}
            graph.invoke(_inputs(), cfg, durability="sync")
            per = 1e6 * timer.seconds / timer.puts
            if name not in FLOORS:
                list(saver.list(cfg, limit=1))  # flush anything buffered
            saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return per, _file_bytes(path)


def first_page(name: str, *, history: int) -> tuple[float, float]:
    """ms for `list(limit=10)` and for the first 10 of `get_state_history`."""
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        path = Path(tmp) / "threads.sqlite"
        with SAVERS[name](path) as saver:
            graph = build(saver, history)
            cfg = {"configurable": {"thread_id": "t"}, "recursion_limit": history + 10}
            graph.invoke(_inputs(), cfg, durability="sync")
            thread = {"configurable": {"thread_id": "t"}}

            def best(fn: Callable[[], Any]) -> float:
                times = []
                for _ in range(20):
                    start = time.perf_counter()
                    fn()
                    times.append(time.perf_counter() - start)
                return 1000 * min(times)

            listed = best(lambda: list(saver.list(thread, limit=10)))
            hist = best(lambda: list(itertools.islice(graph.get_state_history(thread), 10)))
        return listed, hist


def main(*, steps: int, history: int, rounds: int) -> None:
    print(f"# {steps} steps, 50 keys (one of 1 KB changing per step), WAL + synchronous=NORMAL"
          f" for both; median of {rounds} interleaved rounds")
    per: dict[str, list[float]] = {n: [] for n in SAVERS}
    size: dict[str, int] = {}
    for _ in range(rounds):
        for name in SAVERS:
            us, nbytes = one_round(name, steps=steps)
            per[name].append(us)
            size[name] = nbytes
    pages = {name: first_page(name, history=history) for name in SAVERS if name not in BOUNDS} if history else {}
    print(f"{'saver':<22} {'µs/ckpt':>8} {'file KB':>8} {'list(10) ms':>12} {'history 10 ms':>14}")
    for name in SAVERS:
        listed, hist = pages.get(name, (float("nan"), float("nan")))
        print(f"{name:<22} {statistics.median(per[name]):8.1f} {size[name] / 1024:8.0f} "
              f"{listed:12.2f} {hist:14.2f}")
    lg, ours = "langgraph.SqliteSaver", "lgnb.SqliteSaver"
    print(f"lgnb/langgraph: {statistics.median(per[ours]) / statistics.median(per[lg]):.2f}x per "
          f"checkpoint; file {size[lg] / size[ours]:.1f}x smaller")
    for name in BOUNDS:
        floor = statistics.median(per[name])
        print(f"{name}/langgraph: {floor / statistics.median(per[lg]):.2f}x (issue 14's goal for "
              f"lgnb: 0.20x = {0.2 * statistics.median(per[lg]):.1f} µs)")

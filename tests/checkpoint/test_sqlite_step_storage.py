"""What one super-step costs lgnb's SqliteSaver on disk (issue 14), on real graphs and real
files: one transaction per step, each value serialized once and stored once, versions
stored once and short, a history's first page read without reading the thread, and
files of the previous schema (2) migrated on open."""

from __future__ import annotations

import itertools
import json
import operator
import sqlite3
import threading
from pathlib import Path
from typing import Annotated, Any

from langgraph.checkpoint.base import empty_checkpoint
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite._schema import SCHEMA_VERSION
from lgnb.graph import END, START, StateGraph

DOC = "a one-kilobyte document " * 43  # ~1 KB, over the inline limit


class State(TypedDict, total=False):
    doc: str
    n: int
    log: Annotated[list, operator.add]


def _loop(saver: Any, steps: int) -> Any:
    """One node looping on itself: each step writes a new ~1 KB `doc` and bumps `n`."""

    def step(state: State) -> State:
        n = state.get("n", 0) + 1
        return {"doc": f"{n:05d} {DOC}", "n": n}

    g = StateGraph(State)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < steps else END, ["step", END])
    return g.compile(checkpointer=saver)


def _cfg(thread: str = "t", **extra: Any) -> dict:
    return {"configurable": {"thread_id": thread}, **extra}


class _Transactions:
    """The write transactions on a connection, as lists of statements (trace callback)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.done: list[list[str]] = []
        self._open: list[str] | None = None
        conn.set_trace_callback(self._trace)

    def _trace(self, sql: str) -> None:
        head = sql.strip().split(None, 1)[0].upper()
        if sql.strip().upper() == "BEGIN IMMEDIATE":
            self._open = []
        elif head in ("COMMIT", "ROLLBACK") and self._open is not None:
            self.done.append(self._open)
            self._open = None
        elif self._open is not None:
            self._open.append(sql)

    def touching(self, table: str) -> list[list[str]]:
        return [t for t in self.done if any(table in s for s in t)]


def test_each_super_step_is_saved_in_one_transaction_with_its_writes(saver: SqliteSaver) -> None:
    trace = _Transactions(saver.conn)
    _loop(saver, steps=5).invoke({"n": 0}, _cfg(), durability="sync")
    saver.conn.set_trace_callback(None)
    checkpoints = saver.conn.execute("SELECT COUNT(*) FROM lgnb_checkpoints").fetchone()[0]
    assert checkpoints == 7  # input, 5 steps... and the loop's first (empty) checkpoint
    saving = trace.touching("lgnb_checkpoints") + [
        t for t in trace.touching("lgnb_writes") if not any("lgnb_checkpoints" in s for s in t)
    ]
    # every transaction that stores writes also stores a checkpoint: one per step
    assert len(saving) == checkpoints
    assert all(any("lgnb_checkpoints" in s for s in t) for t in saving)
    assert len(trace.touching("lgnb_writes")) >= 5


def test_a_finished_steps_writes_are_on_disk_for_another_connection(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path) as saver:
        _loop(saver, steps=3).invoke({"n": 0}, _cfg(), durability="sync")
        other = sqlite3.connect(db_path)
        # the last step's put committed every write of the run (nothing waits in memory)
        (writes,) = other.execute("SELECT COUNT(*) FROM lgnb_writes").fetchone()
        (steps,) = other.execute(
            "SELECT COUNT(*) FROM lgnb_checkpoints WHERE json_extract(metadata, '$.source') = 'loop'"
        ).fetchone()
        other.close()
    assert steps == 4 and writes >= 2 * 3


def test_a_write_without_a_following_put_is_committed_within_the_flush_delay(db_path: Path) -> None:
    import time

    from lgnb.checkpoint.sqlite._behind import FLUSH_DELAY

    with SqliteSaver.from_conn_string(db_path) as saver:
        stored = saver.put(_cfg() | {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
                           _empty(), {}, {})
        saver.put_writes(stored, [("doc", "finished task")], "task-1")
        other = sqlite3.connect(db_path)
        deadline = time.monotonic() + 20 * FLUSH_DELAY + 2
        while other.execute("SELECT COUNT(*) FROM lgnb_writes").fetchone()[0] == 0:
            assert time.monotonic() < deadline, "the buffered write was never committed"
            time.sleep(FLUSH_DELAY / 5)
        other.close()


def _empty() -> Any:
    from langgraph.checkpoint.base import empty_checkpoint

    return empty_checkpoint()


class _CountingSerde:
    """The saver's serializer, counting how often each object is serialized."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dumped: list[Any] = []

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        self.dumped.append(obj)
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_nodes_output_is_serialized_once_and_its_bytes_stored_once(saver: SqliteSaver) -> None:
    counting = _CountingSerde(saver.serde)
    saver.serde = counting
    _loop(saver, steps=3).invoke({"n": 0}, _cfg(), durability="sync")
    docs = [o for o in counting.dumped if isinstance(o, str) and o.endswith(DOC)]
    # each step's doc is both a pending write and the channel's next value
    assert sorted(docs) == [f"{n:05d} {DOC}" for n in (1, 2, 3)]
    marker = DOC[:40].encode()
    inline = saver.conn.execute(
        "SELECT (SELECT COUNT(*) FROM lgnb_blobs WHERE instr(blob, ?) > 0)"
        " + (SELECT COUNT(*) FROM lgnb_writes WHERE instr(blob, ?) > 0)",
        (marker, marker),
    ).fetchone()[0]
    shared = saver.conn.execute(
        "SELECT COUNT(*) FROM lgnb_values WHERE instr(data, ?) > 0", (marker,)
    ).fetchone()[0]
    assert inline == 0 and shared == 3
    assert saver.get_tuple(_cfg()).checkpoint["channel_values"]["doc"] == f"00003 {DOC}"


class _GatedSerde(_CountingSerde):
    """Holds the thread serializing `gate` until `release` is set, once `started` is."""

    def __init__(self, inner: Any, gate: str) -> None:
        super().__init__(inner)
        self.gate, self.started, self.release = gate, threading.Event(), threading.Event()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if obj is self.gate:
            self.started.set()
            assert self.release.wait(10)
        return super().dumps_typed(obj)


def test_a_checkpoint_saved_while_its_write_is_still_encoding_stores_the_value(db_path: Path) -> None:
    """LangGraph's engine saves a step's writes and the next checkpoint from a pool of
    threads. A checkpoint whose value is a write's object, saved while that write's other
    values are still encoding, must store the value itself: another connection (another
    kernel) reads it at once, and a process killed before the write lands keeps it."""
    doc, gate = f"00001 {DOC}", "still encoding"
    with SqliteSaver.from_conn_string(db_path) as saver:
        gated = _GatedSerde(saver.serde, gate)
        saver.serde = gated
        first = saver.put(_cfg(), empty_checkpoint(), {"source": "input", "step": -1}, {})
        writer = threading.Thread(
            target=saver.put_writes, args=(first, [("doc", doc), ("note", gate)], "task-1"))
        writer.start()
        assert gated.started.wait(10)
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"doc": doc}
        checkpoint["channel_versions"] = {"doc": 2}
        saved = saver.put(first, checkpoint, {"source": "loop", "step": 0}, {"doc": 2})
        with SqliteSaver.from_conn_string(db_path) as other:
            got = other.get_tuple(saved)
            assert got is not None and got.checkpoint["channel_values"] == {"doc": doc}
        gated.release.set()
        writer.join(10)
        assert saver.get_tuple(first).pending_writes == [("task-1", "doc", doc), ("task-1", "note", gate)]


def test_versions_are_stored_once_per_checkpoint_and_short(saver: SqliteSaver) -> None:
    _loop(saver, steps=2).invoke({"n": 0, "log": ["x"]}, _cfg(), durability="sync")
    type_, blob, refs = saver.conn.execute(
        "SELECT type, checkpoint, blob_refs FROM lgnb_checkpoints ORDER BY checkpoint_id DESC"
    ).fetchone()
    raw = saver.serde.loads_typed((type_, blob))
    assert "channel_versions" not in raw  # only in blob_refs
    assert "id" not in raw  # only in the checkpoint_id column
    latest = saver.get_tuple(_cfg()).checkpoint
    assert list(latest)[:3] == ["v", "ts", "id"]  # where LangGraph has it (`create_checkpoint`)
    assert latest["channel_versions"] == json.loads(refs)
    assert all(len(v) == 19 for v in latest["channel_versions"].values())


def test_the_first_page_of_a_long_history_reads_one_page_of_rows(saver: SqliteSaver) -> None:
    app = _loop(saver, steps=300)
    app.invoke({"n": 0}, _cfg(recursion_limit=400), durability="sync")
    rows_read: list[str] = []
    saver.conn.set_trace_callback(rows_read.append)
    first = list(itertools.islice(app.get_state_history(_cfg()), 3))
    listed = list(saver.list(_cfg(), limit=10))
    saver.conn.set_trace_callback(None)
    assert [s.values["n"] for s in first] == [300, 299, 298]
    assert [t.checkpoint["channel_values"]["n"] for t in listed] == list(range(300, 290, -1))
    pages = [s for s in rows_read if "FROM lgnb_checkpoints" in s and "ORDER BY checkpoint_id" in s]
    assert pages and all("LIMIT" in s for s in pages)
    assert len(pages) <= 3  # the engine's first page, list()'s one page: not all 303 rows


def test_paging_lists_every_checkpoint_once_in_order_across_copied_threads(
    saver: SqliteSaver,
) -> None:
    _loop(saver, steps=40).invoke({"n": 0}, _cfg(), durability="sync")
    saver.copy_thread("t", "u")  # same checkpoint ids in two threads
    everything = [(t.config["configurable"]["thread_id"], t.checkpoint["id"]) for t in saver.list(None)]
    per_thread = saver.conn.execute(
        "SELECT COUNT(*) FROM lgnb_checkpoints WHERE thread_id = 't'"
    ).fetchone()[0]
    assert per_thread > 40 and len(everything) == len(set(everything)) == 2 * per_thread
    ids = [cid for _, cid in everything]
    assert ids == sorted(ids, reverse=True)
    assert [t.metadata["step"] for t in saver.list(_cfg(), filter={"source": "loop"}, limit=25)] == list(
        range(40, 15, -1)
    )


_V2_DDL = """
CREATE TABLE lgnb_schema (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE lgnb_checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, run_id TEXT, type TEXT NOT NULL,
    checkpoint BLOB NOT NULL, metadata TEXT NOT NULL, blob_refs TEXT NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
CREATE INDEX lgnb_checkpoints_by_run ON lgnb_checkpoints (run_id) WHERE run_id IS NOT NULL;
CREATE TABLE lgnb_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL, version TEXT NOT NULL, type TEXT NOT NULL, blob BLOB, ref BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version));
CREATE INDEX lgnb_blobs_by_ref ON lgnb_blobs (ref) WHERE ref IS NOT NULL;
CREATE TABLE lgnb_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL,
    type TEXT NOT NULL, blob BLOB, ref BLOB, task_path TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
CREATE INDEX lgnb_writes_by_ref ON lgnb_writes (ref) WHERE ref IS NOT NULL;
CREATE TABLE lgnb_values (ref BLOB PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE lgnb_thread_leases (thread_id TEXT PRIMARY KEY, run_id TEXT NOT NULL,
    host TEXT NOT NULL, pid INTEGER NOT NULL, acquired_at REAL NOT NULL, expires_at REAL NOT NULL,
    cancel_requested INTEGER NOT NULL DEFAULT 0);
INSERT INTO lgnb_schema VALUES ('version', '2');
"""


def _old_version(counter: int) -> str:
    return f"{counter:032d}.{counter:016x}"  # schema 2's 49-character versions


def _write_schema_2_thread(path: Path, serde: Any) -> None:
    """A thread as lgnb's schema-2 saver stored it: one step of `_loop` done (n=1), the
    checkpoint's versions both in its blob and in blob_refs, a large value by ref."""
    conn = sqlite3.connect(path)
    conn.executescript(_V2_DDL)
    versions = {"doc": _old_version(2), "n": _old_version(2), "branch:to:step": _old_version(2)}
    checkpoint = {
        "v": 4, "id": "1f0000000000000000000000000000a2", "ts": "2026-11-30T10:00:00+00:00",
        "channel_versions": versions, "versions_seen": {"step": {"branch:to:step": _old_version(1)}},
        "updated_channels": ["doc", "n"],
    }
    ctype, cblob = serde.dumps_typed(checkpoint)
    conn.execute(
        "INSERT INTO lgnb_checkpoints VALUES ('t', '', ?, NULL, 'run-1', ?, ?, ?, ?)",
        (checkpoint["id"], ctype, cblob, json.dumps({"source": "loop", "step": 1, "run_id": "run-1"}),
         json.dumps(versions)),
    )
    doc_type, doc = serde.dumps_typed(f"00001 {DOC}")
    conn.execute("INSERT INTO lgnb_values VALUES (?, ?)", (b"r" * 16, doc))
    for channel, value in (("n", 1), ("branch:to:step", None)):
        vtype, vblob = serde.dumps_typed(value)
        conn.execute("INSERT INTO lgnb_blobs VALUES ('t', '', ?, ?, ?, ?, NULL)",
                     (channel, versions[channel], vtype, vblob))
    conn.execute("INSERT INTO lgnb_blobs VALUES ('t', '', 'doc', ?, ?, NULL, ?)",
                 (versions["doc"], doc_type, b"r" * 16))
    conn.commit()
    conn.close()


def test_a_schema_2_file_is_migrated_on_open_and_its_thread_continues(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(":memory:") as probe:
        serde = probe.serde
    _write_schema_2_thread(db_path, serde)
    with SqliteSaver.from_conn_string(db_path) as saver:
        (version,) = saver.conn.execute("SELECT value FROM lgnb_schema").fetchone()
        assert int(version) == SCHEMA_VERSION == 6
        tables = {r[0] for r in saver.conn.execute("SELECT name FROM sqlite_master")}
        assert not {t for t in tables if t.endswith(("_v2", "_previous"))}
        assert "lgnb_thread_leases" in tables
        old = saver.get_tuple(_cfg())
        assert old.checkpoint["channel_values"] == {"doc": f"00001 {DOC}", "n": 1, "branch:to:step": None}
        assert old.checkpoint["channel_versions"]["doc"] == _old_version(2)
        # the thread continues: new (short) versions sort after the old ones
        result = _loop(saver, steps=3).invoke({"n": 1}, _cfg(), durability="sync")
        assert result["n"] == 3 and result["doc"] == f"00003 {DOC}"
        latest = saver.get_tuple(_cfg()).checkpoint["channel_versions"]
        assert latest["doc"] > _old_version(2) and len(latest["doc"]) == 19
        history = [s.values.get("n") for s in _loop(saver, steps=3).get_state_history(_cfg())]
        assert history[:3] == [3, 2, 1] and history[-1] == 1  # ..., then the old checkpoint


_SCHEMA_4_VALUES = """
ALTER TABLE lgnb_values RENAME TO values_now;
CREATE TABLE lgnb_values (ref BLOB PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
INSERT INTO lgnb_values SELECT ref, data FROM values_now;
DROP TABLE values_now;
UPDATE lgnb_schema SET value = '4' WHERE key = 'version';
"""


def _values_layout(conn: sqlite3.Connection) -> tuple[list[str], list[tuple[str, int]]]:
    """lgnb_values' columns, and its indexes as (origin, unique)."""
    columns = [r[1] for r in conn.execute("PRAGMA table_info(lgnb_values)")]
    indexes = sorted((r[3], r[2]) for r in conn.execute("PRAGMA index_list(lgnb_values)"))
    return columns, indexes


def test_a_schema_4_file_gets_its_values_table_rebuilt_and_keeps_every_value(db_path: Path) -> None:
    """Schema 5 appends large values by rowid (a random hash key split a leaf every other
    step); a schema-4 file's values are copied over on open, each still found by its ref."""
    with SqliteSaver.from_conn_string(db_path) as saver:
        _loop(saver, steps=4).invoke({"n": 0}, _cfg(), durability="sync")
        want = [t.checkpoint["channel_values"] for t in saver.list(_cfg())]
        stored = saver.conn.execute("SELECT COUNT(*) FROM lgnb_values").fetchone()[0]
        saver.conn.executescript(_SCHEMA_4_VALUES)
        assert _values_layout(saver.conn) == (["ref", "data"], [("pk", 1)])
    assert stored == 4  # one per step's doc, shared by its write and its blob
    with SqliteSaver.from_conn_string(db_path) as saver:
        assert saver.conn.execute("SELECT value FROM lgnb_schema").fetchone()[0] == "6"
        assert _values_layout(saver.conn) == (["id", "ref", "data"], [("u", 1)])
        assert saver.conn.execute("SELECT COUNT(*) FROM lgnb_values").fetchone()[0] == stored
        assert not saver.conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE '%_previous' OR name = 'values_now'"
        ).fetchall()
        assert [t.checkpoint["channel_values"] for t in saver.list(_cfg())] == want
        # the thread continues; a value stored again is still stored once
        _loop(saver, steps=7).invoke({"n": 4}, _cfg(), durability="sync")
        assert saver.get_tuple(_cfg()).checkpoint["channel_values"]["doc"] == f"00007 {DOC}"
        assert saver.conn.execute("SELECT COUNT(*) FROM lgnb_values").fetchone()[0] == stored + 3
        ids = [i for (i,) in saver.conn.execute("SELECT id FROM lgnb_values ORDER BY ref")]
        assert len(set(ids)) == len(ids) == stored + 3

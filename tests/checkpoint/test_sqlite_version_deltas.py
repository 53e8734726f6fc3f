"""lgnb's SqliteSaver stores a checkpoint's channel versions as changes to its parent's
(schema 4, `lgnb.checkpoint.sqlite._refs`). Whatever is stored, every checkpoint reads
back with exactly the versions and values it was saved with: after long runs, forks,
prunes, deletes of runs, copies, a checkpoint saved twice, and a channel removed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite._errors import CheckpointDatabaseError
from lgnb.checkpoint.sqlite._refs import MAX_CHAIN
from lgnb.graph import END, START, StateGraph

KEYS = [f"k{i}" for i in range(12)]


class State(TypedDict, total=False):
    n: int
    k0: str
    k1: str
    k2: str
    k3: str
    k4: str
    k5: str
    k6: str
    k7: str
    k8: str
    k9: str
    k10: str
    k11: str


class Recording:
    """Wraps a saver's `put`: what each checkpoint id was saved with (the oracle)."""

    def __init__(self, saver: SqliteSaver) -> None:
        self.saved: dict[tuple[str, str], dict[str, Any]] = {}
        inner = saver.put

        def put(config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            thread = str(config["configurable"]["thread_id"])
            self.saved[(thread, checkpoint["id"])] = {
                "versions": dict(checkpoint["channel_versions"]),
                "values": dict(checkpoint["channel_values"]),
            }
            return inner(config, checkpoint, metadata, new_versions)

        saver.put = put  # type: ignore[method-assign]


def _graph(saver: SqliteSaver, steps: int) -> Any:
    """Step n rewrites key k(n mod 12) and n: a different small delta every step."""

    def step(state: State) -> dict[str, Any]:
        n = state.get("n", 0) + 1
        return {f"k{n % len(KEYS)}": f"value {n}" * (1 + n % 3), "n": n}

    g = StateGraph(State)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < steps else END, ["step", END])
    return g.compile(checkpointer=saver)


def _cfg(thread: str = "t", **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 1000, **extra}


def _inputs() -> dict[str, Any]:
    return {"n": 0, **{k: f"start {k}" for k in KEYS}}


def _run(saver: SqliteSaver, steps: int) -> tuple[Recording, Any]:
    """Record `saver`'s puts, then run `_graph` for `steps` steps on thread "t"."""
    rec = Recording(saver)
    app = _graph(saver, steps=steps)
    app.invoke(_inputs(), _cfg(), durability="sync")
    return rec, app


def _assert_reads_back(saver: SqliteSaver, rec: Recording, thread: str = "t") -> int:
    """Every checkpoint of `thread` (list and get_tuple) has what it was saved with."""
    listed = list(saver.list({"configurable": {"thread_id": thread}}))
    assert listed
    for tup in listed:
        cid = tup.checkpoint["id"]
        want = rec.saved[(thread, cid)]
        assert tup.checkpoint["channel_versions"] == want["versions"]
        assert tup.checkpoint["channel_values"] == want["values"]
        one = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_id": cid}})
        assert one is not None and one.checkpoint["channel_versions"] == want["versions"]
        assert one.checkpoint["channel_values"] == want["values"]
    return len(listed)


def _bases(conn: sqlite3.Connection, thread: str = "t") -> list[str | None]:
    return [b for (b,) in conn.execute(
        "SELECT refs_base FROM lgnb_checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
        (thread,))]


def test_a_long_run_stores_deltas_in_bounded_chains_and_reads_back_exactly(
    saver: SqliteSaver,
) -> None:
    rec, _app = _run(saver, 100)
    assert _assert_reads_back(saver, rec) == 102
    bases = _bases(saver.conn)
    assert sum(b is not None for b in bases) > 90  # nearly every row is a delta
    run = longest = 0
    for b in bases:
        run = run + 1 if b is not None else 0
        longest = max(longest, run)
    assert longest < MAX_CHAIN
    # a delta names only what changed: the written key, n, the loop's trigger
    sizes = [len(r) for (r,) in saver.conn.execute(
        "SELECT blob_refs FROM lgnb_checkpoints WHERE refs_base IS NOT NULL")]
    full = max(len(r) for (r,) in saver.conn.execute(
        "SELECT blob_refs FROM lgnb_checkpoints WHERE refs_base IS NULL"))
    assert max(sizes) * 3 < full


def test_a_fresh_reader_of_the_file_reads_every_checkpoint_back(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path) as saver:
        rec, _app = _run(saver, 150)
    with SqliteSaver.from_conn_string(db_path) as reader:
        assert _assert_reads_back(reader, rec) == 152


def test_a_fork_from_an_old_checkpoint_reads_back_and_so_does_its_source(
    saver: SqliteSaver,
) -> None:
    rec, app = _run(saver, 40)
    old = [s for s in app.get_state_history(_cfg()) if s.values.get("n") == 7][0]
    forked = app.update_state(old.config, {"k3": "forked"})
    app.invoke(None, forked, durability="sync")
    assert _assert_reads_back(saver, rec) > 70
    # two children of the checkpoint forked from: the old run's next step and the fork
    parents = [t.parent_config["configurable"]["checkpoint_id"]
               for t in saver.list(_cfg()) if t.parent_config]
    assert parents.count(old.config["configurable"]["checkpoint_id"]) == 2


def test_prune_keep_latest_keeps_a_readable_latest_and_collects_the_rest(
    saver: SqliteSaver,
) -> None:
    rec, app = _run(saver, 50)
    latest = saver.get_tuple(_cfg())
    assert _bases(saver.conn)[-1] is not None  # the newest is a delta before pruning
    saver.prune(["t"], strategy="keep_latest")
    assert _assert_reads_back(saver, rec) == 1
    assert _bases(saver.conn) == [None]
    kept = saver.get_tuple(_cfg())
    assert kept.checkpoint["channel_values"] == latest.checkpoint["channel_values"]
    # only the latest checkpoint's versions remain as blobs
    (blobs,) = saver.conn.execute("SELECT COUNT(*) FROM lgnb_blobs WHERE thread_id = 't'").fetchone()
    assert blobs == len(latest.checkpoint["channel_versions"])
    # and the thread continues from it
    app.invoke({"n": 50}, _cfg(), durability="sync")


def test_deleting_a_threads_first_run_keeps_the_second_runs_checkpoints_whole(
    saver: SqliteSaver,
) -> None:
    rec = Recording(saver)
    first = _graph(saver, steps=20)
    first.invoke(_inputs(), _cfg(metadata={"run_id": "run-1"}), durability="sync")
    second = _graph(saver, steps=45)
    second.invoke({"n": 20}, _cfg(metadata={"run_id": "run-2"}), durability="sync")
    before = _assert_reads_back(saver, rec)
    # the second run's first checkpoint is a delta on the first run's last
    assert _bases(saver.conn)[22] is not None
    saver.delete_for_runs(["run-1"])
    after = _assert_reads_back(saver, rec)
    assert 0 < after < before
    # what only the deleted run used is gone; nothing a remaining checkpoint uses is
    used = {(c, v) for t in saver.list(_cfg()) for c, v in t.checkpoint["channel_versions"].items()}
    stored = set(saver.conn.execute("SELECT channel, version FROM lgnb_blobs").fetchall())
    assert used <= stored and len(stored) < len(used) + 30


def test_a_copied_thread_reads_back_like_its_source(saver: SqliteSaver) -> None:
    rec, _app = _run(saver, 30)
    saver.copy_thread("t", "u")
    rec.saved.update({("u", cid): v for (t, cid), v in list(rec.saved.items()) if t == "t"})
    saver.delete_thread("t")
    assert _assert_reads_back(saver, rec, thread="u") == 32


def test_a_base_deleted_by_another_connection_is_not_written_against(db_path: Path) -> None:
    base = {f"c{i}": "1.0" for i in range(8)}
    with SqliteSaver.from_conn_string(db_path) as a, SqliteSaver.from_conn_string(db_path) as b:
        _put(a, "a", None, base, {c: "v1" for c in base})
        b.delete_thread("p")  # another process's delete: `a` still remembers "a"
        _put(a, "b", "a", {**base, "c0": "2.0"}, {"c0": "v2"})
        assert _bases(a.conn, "p") == [None]  # a full map, not a delta on a missing row
        assert _read(a, "b")[0] == {**base, "c0": "2.0"}


def test_a_channel_swapped_for_another_is_read_back_without_the_old_one(
    saver: SqliteSaver,
) -> None:
    base = {f"c{i}": "1.0" for i in range(8)}
    _put(saver, "a", None, base, {c: "v1" for c in base})
    swapped = {**{c: v for c, v in base.items() if c != "c7"}, "c8": "1.0"}
    _put(saver, "b", "a", swapped, {"c8": "v1"})
    assert _bases(saver.conn, "p") == [None, "a"]
    assert _read(saver, "b")[0] == swapped


def _put(saver: SqliteSaver, cid: str, parent: str | None, versions: dict[str, str],
         values: dict[str, Any]) -> None:
    checkpoint = {"v": 4, "id": cid, "ts": "2026-12-02T00:00:00+00:00", "channel_values": values,
                  "channel_versions": versions, "versions_seen": {}, "updated_channels": None}
    config = {"configurable": {"thread_id": "p", "checkpoint_ns": "", "checkpoint_id": parent}}
    saver.put(config, checkpoint, {"source": "update", "step": 0}, versions)


def _read(saver: SqliteSaver, cid: str) -> tuple[dict[str, Any], dict[str, Any]]:
    tup = saver.get_tuple({"configurable": {"thread_id": "p", "checkpoint_id": cid}})
    assert tup is not None
    return tup.checkpoint["channel_versions"], tup.checkpoint["channel_values"]


def test_a_checkpoint_saved_again_does_not_change_what_its_children_read(
    saver: SqliteSaver,
) -> None:
    base = {f"c{i}": "1.0" for i in range(8)}
    _put(saver, "a", None, base, {c: "v1" for c in base})
    _put(saver, "b", "a", {**base, "c0": "2.0"}, {"c0": "v2"})
    _put(saver, "c", "b", {**base, "c0": "2.0", "c1": "2.0"}, {"c1": "v2"})
    assert _bases(saver.conn, "p") == [None, "a", "b"]
    _put(saver, "b", "a", {**base, "c5": "3.0"}, {"c5": "v3"})  # b again, other versions
    assert _read(saver, "c")[0] == {**base, "c0": "2.0", "c1": "2.0"}
    assert _read(saver, "b")[0] == {**base, "c5": "3.0"}


def test_a_channel_dropped_from_the_versions_is_gone_when_read_back(saver: SqliteSaver) -> None:
    base = {f"c{i}": "1.0" for i in range(8)}
    _put(saver, "a", None, base, {c: "v1" for c in base})
    smaller = {c: v for c, v in base.items() if c != "c7"}
    _put(saver, "b", "a", smaller, {"c0": "v1"})
    assert _bases(saver.conn, "p") == [None, "a"]
    assert _read(saver, "b")[0] == smaller
    saver.prune(["p"], strategy="keep_latest")  # materialized without c7, and collectable
    assert _read(saver, "b")[0] == smaller


def test_a_missing_base_is_a_clear_error_not_a_wrong_state(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path) as saver:
        _graph(saver, steps=5).invoke(_inputs(), _cfg(), durability="sync")
        first = saver.conn.execute(
            "SELECT checkpoint_id FROM lgnb_checkpoints ORDER BY checkpoint_id LIMIT 1 OFFSET 2"
        ).fetchone()[0]
        saver.conn.execute("DELETE FROM lgnb_checkpoints WHERE checkpoint_id = ?", (first,))
    with SqliteSaver.from_conn_string(db_path) as reader:  # knows nothing of the run
        with pytest.raises(CheckpointDatabaseError, match="missing.*restore it from a backup"):
            reader.get_tuple(_cfg())


_SCHEMA_3_BLOBS = """
ALTER TABLE lgnb_blobs RENAME TO blobs_now;
CREATE TABLE lgnb_blobs (
    thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', channel TEXT NOT NULL,
    version TEXT NOT NULL, type TEXT NOT NULL, blob BLOB, ref BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)) WITHOUT ROWID;
INSERT INTO lgnb_blobs SELECT thread_id, checkpoint_ns, channel, version, type, blob, ref
FROM blobs_now;
DROP TABLE blobs_now;
"""


def _blob_key(conn: sqlite3.Connection) -> list[str]:
    (index,) = [r[1] for r in conn.execute("PRAGMA index_list(lgnb_blobs)") if r[3] == "pk"]
    return [r[2] for r in sorted(conn.execute(f"PRAGMA index_info({index})"))]


def test_a_schema_3_file_gets_refs_base_and_its_rows_read_as_full_maps(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path) as saver:
        _graph(saver, steps=3).invoke(_inputs(), _cfg(), durability="sync")
        want = saver.get_tuple(_cfg()).checkpoint["channel_values"]
        # turn the file back into a schema-3 one: full maps, no refs_base column
        rec_rows = saver.conn.execute(
            "SELECT checkpoint_id FROM lgnb_checkpoints ORDER BY checkpoint_id").fetchall()
        full = {cid: list(saver.list(_cfg(checkpoint_id=cid)))[0].checkpoint["channel_versions"]
                for (cid,) in rec_rows}
    conn = sqlite3.connect(db_path, isolation_level=None)
    for cid, versions in full.items():
        conn.execute("UPDATE lgnb_checkpoints SET blob_refs = ? WHERE checkpoint_id = ?",
                     (json.dumps(versions), cid))
    conn.execute("ALTER TABLE lgnb_checkpoints DROP COLUMN refs_base")
    conn.executescript(_SCHEMA_3_BLOBS)
    conn.execute("UPDATE lgnb_schema SET value = '3' WHERE key = 'version'")
    assert _blob_key(conn) == ["thread_id", "checkpoint_ns", "channel", "version"]
    conn.close()
    with SqliteSaver.from_conn_string(db_path) as saver:
        assert saver.conn.execute("SELECT value FROM lgnb_schema").fetchone()[0] == "6"
        # blobs rebuilt with schema 4's key (a step's blobs side by side), rows kept
        assert _blob_key(saver.conn) == ["thread_id", "checkpoint_ns", "version", "channel"]
        assert {r[0] for r in saver.conn.execute("SELECT name FROM sqlite_master")} >= {"lgnb_blobs"}
        assert not [r for r in saver.conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE '%_previous'")]
        assert saver.get_tuple(_cfg()).checkpoint["channel_values"] == want
        rec = Recording(saver)
        _graph(saver, steps=10).invoke({"n": 3}, _cfg(), durability="sync")
        latest = saver.get_tuple(_cfg())
        assert latest.checkpoint["channel_versions"] == rec.saved[("t", latest.checkpoint["id"])]["versions"]


def test_a_page_of_checkpoints_never_shares_a_value_that_can_change_in_place(
    saver: SqliteSaver,
) -> None:
    """Values are read once per page; a list or dict still comes back as one object per
    checkpoint, so changing one snapshot's value cannot change another's."""

    class Rich(TypedDict, total=False):
        n: int
        notes: list
        label: str

    def step(state: Rich) -> dict[str, Any]:
        return {"n": state["n"] + 1}

    g = StateGraph(Rich)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < 5 else END, ["step", END])
    app = g.compile(checkpointer=saver)
    app.invoke({"n": 0, "notes": ["a"], "label": "x" * 100}, _cfg(), durability="sync")
    listed = list(saver.list(_cfg()))
    notes = [t.checkpoint["channel_values"]["notes"] for t in listed if "notes" in t.checkpoint["channel_values"]]
    assert len(notes) >= 5 and len({id(n) for n in notes}) == len(notes)
    notes[0].append("changed")
    assert all(n == ["a"] for n in notes[1:])
    assert [t.checkpoint["channel_values"].get("n") for t in listed][:6] == [5, 4, 3, 2, 1, 0]


def test_int_and_float_versions_read_back_as_given_with_their_values(saver: SqliteSaver) -> None:
    """Versions need not be lgnb's strings (LangGraph's own tests and savers pass ints
    and floats): a page keyed by the versions as stored still finds every value."""
    from langgraph.checkpoint.base import empty_checkpoint

    config: dict[str, Any] = _cfg()
    for step, versions in enumerate(({"a": 1, "b": 1.5}, {"a": 2, "b": 1.5}, {"a": 2, "b": 2.5})):
        cp = empty_checkpoint()
        cp["id"] = f"1ef0000{step}"
        cp["channel_versions"] = dict(versions)
        cp["channel_values"] = {"a": [versions["a"]], "b": f"b{versions['b']}"}
        new = dict(versions) if step == 0 else {"a": 2} if step == 1 else {"b": 2.5}
        config = saver.put(config, cp, {"step": step}, new)
    listed = list(saver.list(_cfg()))
    assert [t.checkpoint["channel_versions"] for t in listed] == [
        {"a": 2, "b": 2.5}, {"a": 2, "b": 1.5}, {"a": 1, "b": 1.5}
    ]
    assert [t.checkpoint["channel_values"] for t in listed] == [
        {"a": [2], "b": "b2.5"}, {"a": [2], "b": "b1.5"}, {"a": [1], "b": "b1.5"}
    ]
    latest = saver.get_tuple(_cfg())
    assert latest is not None and latest.checkpoint["channel_values"] == {"a": [2], "b": "b2.5"}


def test_a_chain_interleaved_with_another_branch_reads_back_past_the_rows_just_before_it(
    db_path: Path,
) -> None:
    # two writers extend two branches of one thread in turns, so each branch's chain of
    # deltas is spread over twice as many ids: reading one starts from the rows just
    # before it (one range) and must go on past them, link by link
    steps = 40
    base = {f"c{i}": "01.0" for i in range(8)}
    want: dict[str, dict[str, str]] = {}
    with SqliteSaver.from_conn_string(db_path) as a, SqliteSaver.from_conn_string(db_path) as b:
        _put(a, "0000", None, base, {c: "v0" for c in base})
        want["0000"] = base
        for i in range(1, steps + 1):
            for writer, side in ((a, "a"), (b, "b")):
                parent = "0000" if i == 1 else f"{i - 1:04d}{side}"
                versions = {**want[parent], f"c{i % 8}": f"{i + 1:02d}.{side}"}
                _put(writer, f"{i:04d}{side}", parent, versions, {f"c{i % 8}": f"{side}{i}"})
                want[f"{i:04d}{side}"] = versions
        chain_rows = a.conn.execute(
            "SELECT COUNT(*) FROM lgnb_checkpoints WHERE checkpoint_id LIKE '%b' AND refs_base IS NOT NULL"
        ).fetchone()[0]
    assert chain_rows > MAX_CHAIN // 2  # b's chain runs out of the 64 rows before its latest
    with SqliteSaver.from_conn_string(db_path) as reader:  # nothing of either writer's memory
        for cid in (f"{steps:04d}b", f"{steps:04d}a", "0003b", "0000"):
            assert _read(reader, cid)[0] == want[cid], cid

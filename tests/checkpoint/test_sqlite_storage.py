"""How lgnb's SqliteSaver lays checkpoints out on disk, and the protocol details it keeps."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from langgraph.checkpoint.serde.types import ERROR, INTERRUPT

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver

from _ckpt_helpers import checkpoint, config, count

BIG = "x" * 50_000


def _chain(saver: SqliteSaver, thread: str, steps: int, *, keys: int = 15) -> list[dict]:
    """A thread whose first checkpoint sets `keys` channels, then one changes per step."""
    versions = {f"k{i}": saver.get_next_version(None) for i in range(keys)}
    values = {f"k{i}": f"value {i} " * 100 for i in range(keys)}
    stored = [saver.put(config(thread), checkpoint(values, versions), {"step": -1}, dict(versions))]
    for step in range(steps):
        key = f"k{step % keys}"
        versions[key] = saver.get_next_version(versions[key])
        values[key] = f"changed at {step}"
        stored.append(
            saver.put(stored[-1], checkpoint(values, versions), {"step": step}, {key: versions[key]})
        )
    return stored


def test_put_stores_unchanged_channels_once(saver: SqliteSaver) -> None:
    stored = _chain(saver, "t", steps=5)
    assert count(saver, "lgnb_blobs") == 15 + 5
    latest = saver.get_tuple(stored[-1])
    assert latest.checkpoint["channel_values"]["k0"] == "changed at 0"
    assert latest.checkpoint["channel_values"]["k14"] == "value 14 " * 100
    first = saver.get_tuple(stored[0])
    assert first.checkpoint["channel_values"]["k0"] == "value 0 " * 100


def test_checkpoint_row_holds_no_channel_values(saver: SqliteSaver) -> None:
    stored = _chain(saver, "t", steps=1)
    (size,) = saver.conn.execute(
        "SELECT length(checkpoint) FROM lgnb_checkpoints WHERE checkpoint_id = ?",
        (stored[-1]["configurable"]["checkpoint_id"],),
    ).fetchone()
    assert size < 2_000  # versions and ids only; the 15 values live in lgnb_blobs


def test_large_value_written_as_write_and_blob_is_stored_once(saver: SqliteSaver) -> None:
    v1 = saver.get_next_version(None)
    first = saver.put(config("t"), checkpoint({}, {}), {}, {})
    saver.put_writes(first, [("doc", BIG)], "task-1")
    saver.put(first, checkpoint({"doc": BIG}, {"doc": v1}), {}, {"doc": v1})
    assert count(saver, "lgnb_values") == 1
    assert saver.get_tuple(first).pending_writes == [("task-1", "doc", BIG)]
    assert saver.get_tuple(config("t")).checkpoint["channel_values"] == {"doc": BIG}


def test_database_runs_in_wal_mode_with_busy_timeout(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path, busy_timeout=7.5) as saver:
        assert saver.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert saver.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 7500


def test_special_writes_replace_and_regular_writes_are_not_duplicated(saver: SqliteSaver) -> None:
    stored = saver.put(config("t"), checkpoint({}, {}), {}, {})
    saver.put_writes(stored, [("ch", "first"), (ERROR, "boom 1")], "task")
    saver.put_writes(stored, [("ch", "second"), (ERROR, "boom 2")], "task")
    writes = saver.get_tuple(stored).pending_writes
    assert ("task", "ch", "first") in writes and ("task", "ch", "second") not in writes
    assert ("task", ERROR, "boom 2") in writes and ("task", ERROR, "boom 1") not in writes
    saver.put_writes(stored, [(INTERRUPT, {"ask": 1})], "task")
    saver.put_writes(stored, [(INTERRUPT, {"ask": 2})], "task")
    assert [w for w in saver.get_tuple(stored).pending_writes if w[1] == INTERRUPT] == [
        ("task", INTERRUPT, {"ask": 2})
    ]


def test_pending_writes_come_back_in_task_path_order(saver: SqliteSaver) -> None:
    stored = saver.put(config("t"), checkpoint({}, {}), {}, {})
    saver.put_writes(stored, [("ch", "b")], "task-z", task_path="~0:b")
    saver.put_writes(stored, [("ch", "a1"), ("ch", "a2")], "task-y", task_path="~0:a")
    saver.put_writes(stored, [("ch", "input")], "task-x")
    assert [w[2] for w in saver.get_tuple(stored).pending_writes] == ["input", "a1", "a2", "b"]


def test_list_filters_by_metadata_before_and_limit(saver: SqliteSaver) -> None:
    ids = []
    parent = config("t")
    for step, md in enumerate(
        [
            {"source": "input", "flag": True, "parents": {}},
            {"source": "loop", "flag": False, "parents": {"": "x"}, "note": None},
            {"source": "loop", "flag": True, "parents": {"": "y"}, "score": 1.5},
        ]
    ):
        parent = saver.put(parent, checkpoint({}, {}), {"step": step, **md}, {})
        ids.append(parent["configurable"]["checkpoint_id"])

    def listed(**kw) -> list[str]:
        return [t.checkpoint["id"] for t in saver.list(config("t"), **kw)]

    assert listed() == ids[::-1]
    assert listed(filter={"source": "loop"}) == [ids[2], ids[1]]
    assert listed(filter={"flag": True}) == [ids[2], ids[0]]
    # equality, as LangGraph's savers: a key the metadata lacks is None, a dict must be equal
    assert listed(filter={"note": None}) == ids[::-1]
    assert listed(filter={"note": None, "flag": False}) == [ids[1]]
    assert listed(filter={"score": 1.5, "step": 2}) == [ids[2]]
    assert listed(filter={"parents": {"": "x"}}) == [ids[1]]
    assert listed(filter={"source": "loop"}, limit=1) == [ids[2]]
    assert listed(filter={"parents": {}}, limit=2) == [ids[0]]
    assert listed(filter={"flag": 1}) == [ids[2], ids[0]]
    assert listed(before=config("t", ids[2])) == [ids[1], ids[0]]
    assert listed(before=config("t", ids[2]), limit=1) == [ids[1]]
    # as LangGraph's SqliteSaver (SQL's `LIMIT -1`): a negative limit is none; 0 is nothing
    assert listed(limit=-1) == ids[::-1] and listed(filter={"source": "loop"}, limit=-5) == [ids[2], ids[1]]
    assert listed(limit=0) == []
    assert [t.checkpoint["id"] for t in saver.list(None, filter={"step": 0})] == [ids[0]]


def test_prune_keep_latest_drops_values_only_old_checkpoints_used(saver: SqliteSaver) -> None:
    stored = _chain(saver, "t", steps=20, keys=3)
    saver.prune(["t"])
    assert count(saver, "lgnb_checkpoints") == 1
    assert count(saver, "lgnb_blobs") == 3
    latest = saver.get_tuple(config("t"))
    assert latest.config["configurable"]["checkpoint_id"] == stored[-1]["configurable"]["checkpoint_id"]
    assert set(latest.checkpoint["channel_values"]) == {"k0", "k1", "k2"}


def test_copy_thread_makes_an_independent_thread(saver: SqliteSaver) -> None:
    v = saver.get_next_version(None)
    first = saver.put(config("src"), checkpoint({"doc": BIG}, {"doc": v}), {"step": 0}, {"doc": v})
    saver.put_writes(first, [("doc", BIG + "!")], "task")
    saver.copy_thread("src", "dst")
    assert count(saver, "lgnb_values") == 2  # shared, not copied
    saver.delete_thread("src")
    copied = saver.get_tuple(config("dst"))
    assert copied.checkpoint["channel_values"] == {"doc": BIG}
    assert copied.pending_writes == [("task", "doc", BIG + "!")]
    saver.delete_thread("dst")
    assert count(saver, "lgnb_values") == 0


def test_delete_for_runs_keeps_values_other_runs_use(saver: SqliteSaver) -> None:
    v = saver.get_next_version(None)
    first = saver.put(
        config("t"), checkpoint({"doc": BIG}, {"doc": v}), {"run_id": "r1"}, {"doc": v}
    )
    saver.put(first, checkpoint({"doc": BIG}, {"doc": v}), {"run_id": "r2"}, {})
    saver.delete_for_runs(["r1"])
    [remaining] = list(saver.list(config("t")))
    assert remaining.metadata["run_id"] == "r2"
    assert remaining.checkpoint["channel_values"] == {"doc": BIG}


def test_next_versions_are_ordered_and_unique_across_forks(saver: SqliteSaver) -> None:
    base = saver.get_next_version(None)
    fork_a, fork_b = saver.get_next_version(base), saver.get_next_version(base)
    assert base < fork_a and base < fork_b and fork_a != fork_b
    assert saver.get_next_version(3).startswith(f"{4:010d}.")


def test_saver_accepts_an_open_connection(db_path: Path) -> None:
    conn = sqlite3.connect(db_path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.put(config("t"), checkpoint({}, {}), {}, {})
    saver.close()  # not ours: stays open
    assert conn.execute("SELECT COUNT(*) FROM lgnb_checkpoints").fetchone()[0] == 1
    conn.close()


def test_sync_saver_async_methods_run_in_a_thread(saver: SqliteSaver) -> None:
    async def roundtrip() -> list:
        stored = await saver.aput(config("t"), checkpoint({}, {}), {"step": 1}, {})
        await saver.aput_writes(stored, [("ch", 1)], "task")
        return [t async for t in saver.alist(config("t"))]

    [tup] = asyncio.run(roundtrip())
    assert tup.pending_writes == [("task", "ch", 1)]


async def test_async_saver_opens_without_blocking_and_reads_sync_writes(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path) as sync_saver:
        sync_saver.put(config("t"), checkpoint({}, {}), {"step": 7}, {})
    async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
        tup = await saver.aget_tuple(config("t"))
        assert tup.metadata["step"] == 7


def test_prune_collects_large_values_no_checkpoint_uses(saver: SqliteSaver) -> None:
    parent, version = config("t"), None
    for step in range(4):
        version = saver.get_next_version(version)
        value = f"{step}:" + BIG
        parent = saver.put(parent, checkpoint({"doc": value}, {"doc": version}), {}, {"doc": version})
        saver.put_writes(parent, [("doc", value)], f"task-{step}")
    saver.put(config("other"), checkpoint({"doc": "3:" + BIG}, {"doc": "1"}), {}, {"doc": "1"})
    assert count(saver, "lgnb_values") == 4
    saver.prune(["t"])
    assert count(saver, "lgnb_values") == 1  # "3:..." used by t's latest and by "other"
    saver.prune(["t"], strategy="delete")
    assert count(saver, "lgnb_values") == 1
    saver.delete_thread("other")
    assert count(saver, "lgnb_values") == 0


def test_loading_a_checkpoint_reads_its_blobs_by_version_range_never_the_whole_thread(
    saver: SqliteSaver,
) -> None:
    from lgnb.checkpoint.sqlite import _sql

    plan = [
        row[-1]
        for row in saver.conn.execute(
            "EXPLAIN QUERY PLAN " + _sql.SELECT_BLOBS_OF_VERSIONS, ('["1"]', "t", "")
        )
    ]
    assert plan[0].startswith("SCAN r")  # the page's versions drive the loop...
    assert "PRIMARY KEY (thread_id=? AND checkpoint_ns=? AND version=?)" in plan[1]  # ...one run each
    values = [row[-1] for row in saver.conn.execute("EXPLAIN QUERY PLAN " + _sql.select_values(2), (b"a", b"b"))]
    assert any("USING INDEX" in step for step in values), values


def test_a_checkpoint_reads_its_own_values_when_its_versions_were_shared_with_overwritten_channels(
    saver: SqliteSaver, db_path: Path
) -> None:
    # step 1 writes a, b and a large doc at version 1; step 2 overwrites b and doc at
    # version 2: the latest names a@1, b@2, doc@2, and the run at version 1 also holds
    # b@1 and doc@1, which it must not take
    big1, big2 = "1:" + BIG, "2:" + BIG
    first = saver.put(
        config("t"), checkpoint({"a": "A", "b": "B1", "doc": big1}, {"a": "1", "b": "1", "doc": "1"}),
        {}, {"a": "1", "b": "1", "doc": "1"},
    )
    saver.put(
        first, checkpoint({"a": "A", "b": "B2", "doc": big2}, {"a": "1", "b": "2", "doc": "2"}),
        {}, {"b": "2", "doc": "2"},
    )
    with SqliteSaver.from_conn_string(db_path) as fresh:  # nothing of the writer's memory
        latest = fresh.get_tuple(config("t"))
        assert latest is not None
        assert latest.checkpoint["channel_values"] == {"a": "A", "b": "B2", "doc": big2}
        pages = [t.checkpoint["channel_values"] for t in fresh.list(config("t"))]
    assert pages == [{"a": "A", "b": "B2", "doc": big2}, {"a": "A", "b": "B1", "doc": big1}]

"""Bad database files give errors that name the file and the fix."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import CheckpointDatabaseError, SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.graph import START, StateGraph


def test_non_sqlite_file_gives_a_clear_error_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("these are my notes, not a database\n" * 200)
    with pytest.raises(CheckpointDatabaseError) as info:
        with SqliteSaver.from_conn_string(path):
            pass
    message = str(info.value)
    assert str(path) in message
    assert "not a SQLite database" in message and "Move it aside" in message


async def test_async_saver_reports_a_corrupt_file_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "broken.sqlite"
    path.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(CheckpointDatabaseError, match="broken.sqlite"):
        async with AsyncSqliteSaver.from_conn_string(path):
            pass


def test_missing_directory_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "threads.sqlite"
    with pytest.raises(CheckpointDatabaseError, match="directory exists"):
        SqliteSaver(path)


def test_database_from_a_newer_lgnb_is_refused(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path) as saver:
        saver.conn.execute("UPDATE lgnb_schema SET value = '99' WHERE key = 'version'")
    with pytest.raises(CheckpointDatabaseError, match="newer than this lgnb"):
        SqliteSaver(db_path)


def test_file_can_be_shared_with_langgraphs_own_sqlite_saver(db_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver

    with LangGraphSqliteSaver.from_conn_string(str(db_path)) as theirs:
        theirs.setup()
    with SqliteSaver.from_conn_string(db_path) as ours:
        assert ours.get_tuple({"configurable": {"thread_id": "t"}}) is None


def test_unknown_prune_strategy_names_the_valid_ones(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path) as saver:
        with pytest.raises(ValueError, match="keep_latest"):
            saver.prune(["t"], strategy="oldest")


# ------------------------------------------------ failures while the file is in use
#
# Each is a real SQLite condition on a real file: a size limit (PRAGMA max_page_count)
# gives SQLITE_FULL exactly as a full disk does; a `mode=ro` URI or PRAGMA query_only
# makes writes fail even for root (chmod does not); overwritten pages are a damaged file.


class Doc(TypedDict):
    doc: str


def _grow(saver: object, **compile_kw: object) -> object:
    """One node that makes the document 1000 times longer."""
    g = StateGraph(Doc)
    g.add_node("grow", lambda s: {"doc": s["doc"] * 1000})
    g.add_edge(START, "grow")
    return g.compile(checkpointer=saver, **compile_kw)


def _fill_to_the_limit(conn: sqlite3.Connection) -> None:
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def _assert_explained(err: BaseException, path: Path, fix: str, cause: str) -> None:
    assert isinstance(err, CheckpointDatabaseError)
    message = str(err)
    assert str(path) in message and fix in message, message
    assert isinstance(err.__cause__, sqlite3.Error) and cause in str(err.__cause__)


def test_a_full_database_names_the_file_and_says_to_free_space_and_keeps_what_was_saved(
    db_path: Path,
) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    with SqliteSaver.from_conn_string(db_path) as saver:
        app = _grow(saver, interrupt_before=["grow"])
        app.invoke({"doc": "ab" * 50}, cfg)  # saved, paused before `grow`
        _fill_to_the_limit(saver.conn)
        with pytest.raises(sqlite3.OperationalError) as info:  # what callers caught before
            app.invoke(None, cfg)
        _assert_explained(info.value, db_path, "Free disk space", "database or disk is full")
        assert "rolled back" in str(info.value)
        paused = app.get_state(cfg)
        assert paused.values == {"doc": "ab" * 50} and paused.next == ("grow",)
        saver.conn.execute("PRAGMA max_page_count = 1073741823")  # space freed: run it again
        assert app.invoke(None, cfg) == {"doc": "ab" * 50_000}


async def test_a_full_database_is_explained_the_same_way_from_async_code(db_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
        _fill_to_the_limit(saver.conn)
        with pytest.raises(CheckpointDatabaseError) as info:
            await _grow(saver).ainvoke({"doc": "x" * 100}, {"configurable": {"thread_id": "t"}})
    _assert_explained(info.value, db_path, "Free disk space", "database or disk is full")


def test_a_read_only_database_reads_and_explains_why_it_cannot_be_written(db_path: Path) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    with SqliteSaver.from_conn_string(db_path) as saver:
        _grow(saver).invoke({"doc": "a"}, cfg)
    with SqliteSaver.from_conn_string(f"file:{db_path}?mode=ro") as saver:
        app = _grow(saver)
        assert app.get_state(cfg).values == {"doc": "a" * 1000}
        with pytest.raises(sqlite3.OperationalError) as info:
            app.invoke({"doc": "b"}, cfg)
    _assert_explained(info.value, db_path, "may write the file", "readonly database")
    assert "mode=ro" in str(info.value)


async def test_a_read_only_connection_is_explained_from_async_code(db_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
        saver.conn.execute("PRAGMA query_only = 1")
        with pytest.raises(CheckpointDatabaseError) as info:
            await _grow(saver).ainvoke({"doc": "b"}, {"configurable": {"thread_id": "t"}})
    _assert_explained(info.value, db_path, "may write the file", "readonly database")


def _damage_the_second_half(path: Path) -> None:
    """Overwrite the later pages — the stored values — keeping the tables' first pages,
    so the file still opens and the damage is met when a thread is read."""
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.seek(size // 2)
        f.write(b"\xff" * (size - size // 2))


def _fill_and_damage(path: Path) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        app = _grow(saver)
        for i in range(40):
            app.invoke({"doc": f"{i:05d}"}, {"configurable": {"thread_id": f"t{i}"}})
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _damage_the_second_half(path)


def test_a_damaged_file_names_the_file_and_says_to_restore_a_backup(db_path: Path) -> None:
    _fill_and_damage(db_path)
    with SqliteSaver.from_conn_string(db_path) as saver:  # opens: the damage is further in
        with pytest.raises(sqlite3.DatabaseError) as info:
            for i in range(40):
                saver.get_tuple({"configurable": {"thread_id": f"t{i}"}})
    _assert_explained(info.value, db_path, "Restore it from a backup", "malformed")


async def test_a_damaged_file_is_explained_the_same_way_from_async_code(db_path: Path) -> None:
    _fill_and_damage(db_path)
    async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
        with pytest.raises(CheckpointDatabaseError) as info:
            async for _ in saver.alist(None):
                pass
    _assert_explained(info.value, db_path, "Restore it from a backup", "malformed")


def test_a_garbage_file_names_the_file_and_keeps_sqlites_error_as_the_cause(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(CheckpointDatabaseError) as info:
        SqliteSaver(path)
    _assert_explained(info.value, path, "Restore it from a backup", "not a database")


def test_a_busy_lock_is_not_mistaken_for_a_broken_file(db_path: Path) -> None:
    """Only failures with a fix to name are rewritten; another process holding the
    write lock past the timeout stays SQLite's own error."""
    with SqliteSaver.from_conn_string(db_path, busy_timeout=0) as saver:
        other = sqlite3.connect(db_path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(sqlite3.OperationalError, match="locked") as info:
                _grow(saver).invoke({"doc": "a"}, {"configurable": {"thread_id": "t"}})
        finally:
            other.execute("ROLLBACK")
            other.close()
    assert not isinstance(info.value, CheckpointDatabaseError)


def test_an_aiosqlite_connection_is_refused_with_the_fix():
    """LangGraph's AsyncSqliteSaver takes an aiosqlite connection; a ported program that
    passes one gets the way to open lgnb's (a path or `from_conn_string`)."""
    import asyncio

    import aiosqlite

    from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver

    async def attempt(path):
        conn = await aiosqlite.connect(path)
        try:
            with pytest.raises(TypeError, match=r"path or a sqlite3\.Connection.*from_conn_string"):
                AsyncSqliteSaver(conn)
        finally:
            await conn.close()

    asyncio.run(attempt(":memory:"))


def test_a_large_value_missing_from_the_file_names_the_channel_the_thread_and_the_fix(
    db_path: Path,
) -> None:
    """A value stored by reference whose bytes were deleted outside lgnb: reading the
    checkpoint, or its pending write, says which value is gone and what to do, not a
    TypeError from the serializer."""
    doc = "a long document " * 20
    with SqliteSaver.from_conn_string(db_path) as saver:
        g = StateGraph(_Doc)
        g.add_node("write", lambda s: {"doc": doc})
        g.add_edge(START, "write")
        app = g.compile(checkpointer=saver, interrupt_after=["write"])
        cfg = {"configurable": {"thread_id": "essay"}}
        app.invoke({"doc": "draft"}, cfg)
        before = next(h for h in app.get_state_history(cfg) if h.next == ("write",))
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("DELETE FROM lgnb_values").rowcount == 1
    conn.close()
    with SqliteSaver.from_conn_string(db_path) as saver:
        with pytest.raises(CheckpointDatabaseError) as info:
            saver.get_tuple(cfg)
        message = str(info.value)
        assert "channel 'doc'" in message and "'essay'" in message and str(db_path) in message
        assert "delete the thread" in message
        with pytest.raises(CheckpointDatabaseError, match="task .*'s write to 'doc'"):
            saver.get_tuple(before.config)


class _Doc(TypedDict):
    doc: str

"""Bad database files give errors that name the file and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from lgnb.checkpoint.sqlite import CheckpointDatabaseError, SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver


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

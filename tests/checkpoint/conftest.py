"""Shared fixtures for lgnb checkpoint tests: real SQLite files under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lgnb.checkpoint.sqlite import SqliteSaver


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "threads.sqlite"


@pytest.fixture
def saver(db_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(db_path) as s:
        yield s

"""lgnb's SQLite savers pass every capability of langgraph-checkpoint-conformance."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver

_made: list[str] = []


def _fresh_path() -> Path:
    """A new file for each saver the suite opens (its factories take no fixtures); the
    directories go when this module's tests are done."""
    _made.append(tempfile.mkdtemp(prefix="lgnb-conformance-"))
    return Path(_made[-1]) / "threads.sqlite"


@pytest.fixture(autouse=True, scope="module")
def _remove_the_files() -> Iterator[None]:
    yield
    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)


@checkpointer_test(name="lgnb.SqliteSaver")
async def _sync_saver() -> AsyncIterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(_fresh_path()) as saver:
        yield saver


@checkpointer_test(name="lgnb.AsyncSqliteSaver")
async def _async_saver() -> AsyncIterator[AsyncSqliteSaver]:
    async with AsyncSqliteSaver.from_conn_string(_fresh_path()) as saver:
        yield saver


@pytest.mark.parametrize("registered", [_sync_saver, _async_saver], ids=lambda r: r.name)
async def test_saver_passes_every_conformance_capability(registered) -> None:
    report = await validate(registered)
    assert set(report.results) == {c.value for c in ALL_CAPABILITIES}
    failures = {
        cap: result.failures
        for cap, result in report.results.items()
        if not (result.detected and result.passed)
    }
    assert not failures, failures
    assert sum(r.tests_passed for r in report.results.values()) == 81

"""Fixtures of the persistence suite: checkpoints, interrupts, time travel.

Reuses the differential harness of tests/engine (``_diff.py``, imported read-only) and adds
checkpointers: every saver of the matrix can be opened for either engine, so one scenario
can be run as "LangGraph + InMemorySaver" (the reference) and "lgnb + <any saver>".

    .venv/bin/pytest tests/persistence
    LGNB_DIFF_SELFTEST=1 .venv/bin/pytest tests/persistence     # LangGraph on both sides
    LGNB_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test .venv/bin/pytest tests/persistence
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "engine"))

import _diff  # noqa: E402
import _pdiff  # noqa: E402


@pytest.fixture
def differential():
    """``differential(scenario, exc=..., expect=...)`` -> normalized reference (see tests/engine)."""
    return _pdiff.differential


def pytest_report_header(config):
    mode = "SELFTEST (langgraph vs langgraph)" if _diff.selftest_enabled() else "langgraph vs lgnb"
    return f"lgnb persistence suite: {mode}"


@pytest.fixture
def savers(tmp_path):
    """A :class:`_savers.Savers` over tmp_path (PostgreSQL URL filled in by the tests that need it)."""
    from _savers import Savers

    return Savers(tmp_path)


@pytest.fixture
def ref_engine():
    return _diff.reference_engine()

"""Fixtures of the `messages` stream differential suite.

Reuses the engine suite's harness (tests/engine/_diff.py) without modifying it:

    .venv/bin/pytest tests/messages                          # LangGraph vs lgnb
    LGNB_DIFF_SELFTEST=1 .venv/bin/pytest tests/messages     # LangGraph vs LangGraph
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).parent
for p in (_HERE, _HERE.parent / "engine"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import _diff  # noqa: E402


@pytest.fixture
def differential():
    """``differential(scenario, exc=..., expect=...)`` -> normalized reference observable."""
    return _diff.differential


def pytest_report_header(config):
    mode = "SELFTEST (langgraph vs langgraph)" if _diff.selftest_enabled() else "langgraph vs lgnb"
    return f"lgnb messages-stream differential suite: {mode}"

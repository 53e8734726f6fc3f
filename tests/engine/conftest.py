"""Fixtures of the differential engine suite.

Run against lgnb:            .venv/bin/pytest tests/engine
Self-test on the reference:  LGNB_DIFF_SELFTEST=1 .venv/bin/pytest tests/engine
  (LangGraph on both sides: proves every scenario is deterministic and passes today.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import _diff  # noqa: E402


@pytest.fixture
def share_small_states(monkeypatch):
    """Switch lgnb's shared state snapshots (node and conditional-edge inputs) on for
    states of every size: they start at `SHARE_FROM` keys, and scenarios use small ones."""
    from lgnb.pregel import _view

    monkeypatch.setattr(_view, "SHARE_FROM", 0)


@pytest.fixture
def differential():
    """``differential(scenario, exc="full"|"extends"|"class", expect=...)`` -> normalized reference."""
    return _diff.differential


@pytest.fixture
def ref_engine():
    return _diff.reference_engine()


def pytest_report_header(config):
    mode = "SELFTEST (langgraph vs langgraph)" if _diff.selftest_enabled() else "langgraph vs lgnb"
    return f"lgnb differential engine suite: {mode}"


@pytest.fixture(params=["copied", "shared"])
def views(request, monkeypatch):
    """Run a state-view scenario with lgnb's default threshold and with sharing forced."""
    if request.param == "shared":
        from lgnb.pregel import _view

        monkeypatch.setattr(_view, "SHARE_FROM", 0)
    return request.param

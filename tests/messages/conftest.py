"""Fixtures of the `messages` stream differential suite.

Reuses the engine suite's harness (tests/engine/_diff.py) without modifying it:

    .venv/bin/pytest tests/messages                          # LangGraph vs lgnb
    LGNB_DIFF_SELFTEST=1 .venv/bin/pytest tests/messages     # LangGraph vs LangGraph

Triage aid (never for CI): ``LGNB_MSG_TRIAGE_DROP=checkpoint_ns,ls_integration`` drops those
dict keys from both observables before comparing, to see what else differs once a known
divergence is set aside.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).parent
for p in (_HERE, _HERE.parent / "engine"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import _diff  # noqa: E402


def _dropping(keys: set[str]):
    original = _diff.Normalizer.mapping

    def mapping(self, m):
        return {k: v for k, v in original(self, m).items() if k not in keys}

    return mapping


@pytest.fixture
def differential(monkeypatch):
    """``differential(scenario, exc=..., expect=...)`` -> normalized reference observable."""
    drop = {k.strip() for k in os.environ.get("LGNB_MSG_TRIAGE_DROP", "").split(",") if k.strip()}
    if drop:
        monkeypatch.setattr(_diff.Normalizer, "mapping", _dropping(drop))
    return _diff.differential


def pytest_report_header(config):
    mode = "SELFTEST (langgraph vs langgraph)" if _diff.selftest_enabled() else "langgraph vs lgnb"
    return f"lgnb messages-stream differential suite: {mode}"

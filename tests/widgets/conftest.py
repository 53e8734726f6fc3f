"""Fixtures for the widget tests: the same graphs built on LangGraph and (when its engine
is importable) on lgnb, since the views read only the public graph protocol."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from widget_graphs import _engine  # noqa: E402


def _lgnb_ready() -> str | None:
    try:
        _engine("lgnb").StateGraph  # noqa: B018
    except Exception as exc:  # the engine lands later in the session
        return f"lgnb engine not importable yet: {exc!r}"
    return None


@pytest.fixture(params=["langgraph", "lgnb"])
def eng(request: pytest.FixtureRequest) -> SimpleNamespace:
    """Graph-building API of one engine (LangGraph, or lgnb when its engine is ready)."""
    if request.param == "lgnb":
        reason = _lgnb_ready()
        if reason:
            pytest.skip(reason)
    return _engine(request.param)


@pytest.fixture
def lg() -> SimpleNamespace:
    """LangGraph only (for the few tests that are about the view, not the engine)."""
    return _engine("langgraph")

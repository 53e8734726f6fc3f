"""pytest plugin loaded into the rewritten LangGraph suite: records each test's outcome.

Runs in every xdist worker (marking the tests that used a private LangGraph name) and in
the controlling process (writing one JSON line per test report to `LGNB_UPSTREAM_RESULTS`).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

_PRIVATE_KEY = "lgnb_private"


def _touched() -> list[str]:
    try:
        from tests._lgnb_private import TOUCHED
    except ImportError:  # the placeholder module is written by the runner
        return []
    return TOUCHED


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any):  # type: ignore[no-untyped-def]
    if call.when == "setup":
        _touched().clear()
    outcome = yield
    report = outcome.get_result()
    names = sorted(set(_touched()))
    if names and report.failed:
        report.user_properties.append((_PRIVATE_KEY, names))


def _write(record: dict[str, Any]) -> None:
    path = os.environ.get("LGNB_UPSTREAM_RESULTS")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _message(report: Any) -> str:
    longrepr = getattr(report, "longrepr", None)
    if longrepr is None:
        return ""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message)[:500]
    if isinstance(longrepr, tuple):  # skip: (file, line, reason)
        return str(longrepr[-1])[:500]
    return str(longrepr).strip().splitlines()[-1][:500] if str(longrepr).strip() else ""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker: the controlling process writes
    private = dict(report.user_properties).get(_PRIVATE_KEY)
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = report.outcome
        if private:
            outcome = "private"
        elif hasattr(report, "wasxfail"):
            outcome = "xfail" if report.skipped else "xpass"
        _write({"id": report.nodeid, "outcome": outcome, "message": _message(report),
                "private": private or [], "when": report.when, "duration": round(report.duration, 3)})
    elif report.when == "teardown" and report.failed:
        _write({"id": report.nodeid, "outcome": "teardown-error", "message": _message(report),
                "private": private or [], "when": "teardown"})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed and not os.environ.get("PYTEST_XDIST_WORKER"):
        _write({"id": report.nodeid, "outcome": "collect-error", "message": _message(report),
                "private": [], "when": "collect"})

"""Project-wide test fixtures: external resources only (PostgreSQL, Chromium) and markers.

Engine fixtures live next to their tests (tests/engine/conftest.py etc.).

Rules:
- Locally, a test that needs a resource which is not configured is *skipped* with a reason
  that says how to get it (``./dev test`` sets everything up).
- Under ``CI=true`` the same situation is a *failure*: nothing may silently skip in CI.
"""

from __future__ import annotations

import os
import sys
import shutil
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}

# Flags that make Debian's Chromium run headless in containers (see /work/shared/RECIPES.md).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_configure(config: pytest.Config) -> None:
    # Also declared in pyproject.toml; repeated here so the markers exist even when pytest
    # is pointed at tests/ from another rootdir.
    config.addinivalue_line("markers", "browser: drives a real JupyterLab in Debian's Chromium")
    config.addinivalue_line("markers", "postgres: needs a PostgreSQL server (LGNB_TEST_POSTGRES_URL)")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests that use the resource fixtures get the matching marker, so
    # `pytest -m "not browser"` / `-m postgres` work without decorating every test.
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "postgres_url" in names:
            item.add_marker(pytest.mark.postgres)
        if "chromium_path" in names:
            item.add_marker(pytest.mark.browser)
        if sys.version_info < (3, 11) and _compares_async_with_langgraph(item):
            item.add_marker(pytest.mark.skip(reason=_PY310_ASYNC))


_PY310_ASYNC = (
    "LangGraph 1.2, the reference, does not pass its config to async nodes before Python "
    "3.11 (no context argument to create_task), so its async runs differ from lgnb's: run "
    "the comparisons on Python 3.11+"
)


def _compares_async_with_langgraph(item: pytest.Item) -> bool:
    """Async tests that run a LangGraph graph as the reference."""
    import inspect

    fn = getattr(item, "function", None)
    path = str(getattr(item, "path", ""))
    reference_dirs = ("tests/persistence", "tests/messages", "tests/engine", "test_langgraph_integration")
    if not any(d in path for d in reference_dirs):
        return False
    return inspect.iscoroutinefunction(fn) or "async_saver" in getattr(item, "name", "")


def _missing(reason: str) -> None:
    """Skip locally, fail in CI."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: refusing to skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of a PostgreSQL database the tests may freely use (``LGNB_TEST_POSTGRES_URL``).

    ``./dev test`` sets it to ``postgresql://postgres@127.0.0.1:5432/test`` and starts a server
    if none listens. When the variable is set, the server must be reachable: an unreachable
    server is an error, not a skip.
    """
    url = os.environ.get("LGNB_TEST_POSTGRES_URL", "").strip()
    if not url:
        _missing(
            "LGNB_TEST_POSTGRES_URL is not set; run the tests with ./dev test, or export "
            "LGNB_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test"
        )
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is in the test extra
        _missing("psycopg is not installed: pip install -e '.[test]'")
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except Exception as e:  # noqa: BLE001 - report any connection problem the same way
        pytest.fail(f"LGNB_TEST_POSTGRES_URL={url} is set but unreachable: {e}", pytrace=False)
    return url


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of Debian's Chromium (``LGNB_CHROMIUM``, default ``/usr/bin/chromium``).

    Playwright's own browser download does not work on these machines: launch this binary with
    ``executable_path=chromium_path, args=chromium_args``.
    """
    path = os.environ.get("LGNB_CHROMIUM", "").strip() or "/usr/bin/chromium"
    if not Path(path).is_file():
        path = shutil.which("chromium") or path
    if not Path(path).is_file():
        _missing(f"Chromium not found at {path}; apt-get install chromium or set LGNB_CHROMIUM")
    return path


@pytest.fixture(scope="session")
def chromium_args() -> list[str]:
    """Command-line flags for launching ``chromium_path`` headless in a container."""
    return list(CHROMIUM_ARGS)

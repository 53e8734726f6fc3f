"""Browser fixtures: one JupyterLab and one Chromium per session, a fresh page (in a new
browser context) per test.

Needs the built front end (`lgnb/static/lgnb.js`; CI builds it first) and Debian's
Chromium (`chromium_path` from tests/conftest.py: skipped locally, a failure in CI).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from lab import BUNDLE, Lab, chromium_browser, context_page, jupyter_lab  # noqa: E402

ARTIFACTS = Path(os.environ.get("LGNB_BROWSER_ARTIFACTS", "/tmp/lgnb-browser-artifacts"))


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE} is missing: the browser tests need the built front end. "
                    "Run `cd js && npm ci && npm run build` (./dev test does it).", pytrace=False)
    with jupyter_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="session")
def browser(chromium_path: str, chromium_args: list[str]) -> Iterator[Any]:
    """Debian's Chromium, launched once for the session."""
    with chromium_browser(chromium_path, args=chromium_args) as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with context_page(browser) as p:
        p.lgnb_errors = []  # type: ignore[attr-defined]
        p.on("pageerror", lambda e: p.lgnb_errors.append(str(e)))
        # widget message handlers swallow exceptions: lgnb reports them with console.error
        p.on("console", lambda m: p.lgnb_errors.append(m.text) if m.type == "error" and "lgnb" in m.text else None)
        yield p


@pytest.fixture
def artifacts() -> Path:
    """Where screenshots go (LGNB_BROWSER_ARTIFACTS, default /tmp/lgnb-browser-artifacts)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS

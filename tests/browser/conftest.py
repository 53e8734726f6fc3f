"""Browser fixtures: one JupyterLab per session, one Chromium page per test.

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

from lab import BUNDLE, Lab, chromium_page, jupyter_lab  # noqa: E402

ARTIFACTS = Path(os.environ.get("LGNB_BROWSER_ARTIFACTS", "/tmp/lgnb-browser-artifacts"))


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE} is missing: the browser tests need the built front end. "
                    "Run `cd js && npm ci && npm run build` (./dev test does it).", pytrace=False)
    with jupyter_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture
def page(chromium_path: str, chromium_args: list[str]) -> Iterator[Any]:
    with chromium_page(chromium_path, args=chromium_args) as p:
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

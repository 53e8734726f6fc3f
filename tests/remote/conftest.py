"""A real local LangGraph server (`langgraph dev`) for the RemoteGraph tests.

One server per session, started from a temporary copy of `app/` (the server writes its
`.langgraph_api/` state there) on a free port, with analytics, version checks and
LangSmith tracing off, so it runs offline. Tests use fresh thread ids, never shared state.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

APP = Path(__file__).parent / "app"


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of `langgraph dev` serving a copy of `app/`, started by the same helper the
    server notebook uses (`lgnb.server.start_dev_server`)."""
    from lgnb.server import start_dev_server

    cli = Path(sys.executable).parent / "langgraph"
    try:
        import langgraph_api  # noqa: F401
    except ImportError:
        pytest.skip("needs langgraph-cli[inmem] (pip install -e '.[test]')")
    if not cli.exists():
        pytest.skip(f"needs the langgraph CLI at {cli} (pip install -e '.[test]')")
    server = start_dev_server(APP, workdir=tmp_path_factory.mktemp("server"), jobs=4)
    try:
        yield server.url
    finally:
        server.stop()

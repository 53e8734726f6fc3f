"""A real local LangGraph server (`langgraph dev`) for the RemoteGraph tests.

One server per session, started from a temporary copy of `app/` (the server writes its
`.langgraph_api/` state there) on a free port, with analytics, version checks and
LangSmith tracing off, so it runs offline. Tests use fresh thread ids, never shared state.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

APP = Path(__file__).parent / "app"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
    )
    return env


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    cli = Path(sys.executable).parent / "langgraph"
    try:
        import langgraph_api  # noqa: F401
    except ImportError:
        pytest.skip("needs langgraph-cli[inmem] (pip install -e '.[test]')")
    if not cli.exists():
        pytest.skip(f"needs the langgraph CLI at {cli} (pip install -e '.[test]')")
    app = tmp_path_factory.mktemp("server") / "app"
    shutil.copytree(APP, app, ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api"))
    port = _free_port()
    log = open(app / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(cli), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
         "--port", str(port), "--n-jobs-per-worker", "4"],
        cwd=app, env=_server_env(), stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"langgraph dev exited ({proc.returncode}):\n"
                    + (app / "server.log").read_text(errors="replace")[-3000:]
                )
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    "langgraph dev not ready after 90 s:\n"
                    + (app / "server.log").read_text(errors="replace")[-3000:]
                )
            time.sleep(0.3)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()

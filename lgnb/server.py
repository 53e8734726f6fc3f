"""Start a local LangGraph server (`langgraph dev`) from a notebook or a test.

The lgnb engine is a notebook runtime: a LangGraph server runs LangGraph's engine. The path
is to prototype on lgnb, then serve the same graph code (imported from `langgraph`) with
`langgraph dev` locally or LangGraph Platform at scale, and keep watching it from the
notebook with `lgnb.connect(url, graph_id)`. `start_dev_server(path)` does what a person
would do in a terminal, offline and without side effects on the project folder: it copies
the project (the folder holding `langgraph.json`) to a temporary folder (the server writes
its `.langgraph_api/` state into its working directory), picks a free port, turns off
analytics, version checks and LangSmith tracing, and waits until `GET /ok` answers.

Needs `langgraph-cli[inmem]` (`pip install "langgraph-cli[inmem]"`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

__all__ = ("DevServer", "start_dev_server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_env() -> dict[str, str]:
    """The caller's environment without LangSmith/LangChain keys, analytics and checks off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false")
    return env


def _cli() -> Path:
    cli = Path(sys.executable).parent / "langgraph"
    if not cli.exists():
        found = shutil.which("langgraph")
        if found is None:
            raise RuntimeError(
                "start_dev_server: the `langgraph` command was not found next to this Python "
                f"({cli}) nor on PATH; install it with: pip install \"langgraph-cli[inmem]\""
            )
        cli = Path(found)
    return cli


class DevServer:
    """A running `langgraph dev` process: its `url`, the `workdir` it serves from, its
    `log` file, and `stop()` (also on `with ... as server:` exit). Owns its temporary
    folder and removes it on stop."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, workdir: Path, log: Path,
                 tmp: tempfile.TemporaryDirectory[str] | None) -> None:
        self.process = process
        self.url = url
        self.workdir = workdir
        self.log = log
        self._tmp = tmp

    @property
    def running(self) -> bool:
        """True while the server process is alive."""
        return self.process.poll() is None

    def log_tail(self, chars: int = 3000) -> str:
        """The last `chars` characters of the server's output (for error messages)."""
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, *, timeout: float = 15.0) -> None:
        """Stop the server (SIGTERM to its process group, SIGKILL after `timeout` s) and
        remove its temporary folder. Safe to call twice."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            except ProcessLookupError:
                pass
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> DevServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"DevServer(url={self.url!r}, running={self.running})"


def start_dev_server(path: str | os.PathLike[str], *, port: int | None = None, jobs: int = 4,
                     timeout: float = 90.0, workdir: str | os.PathLike[str] | None = None) -> DevServer:
    """Start `langgraph dev` serving the project at `path` (a folder with `langgraph.json`)
    and return a `DevServer` once it answers `GET /ok`.

    `port`: a free one is picked when None (port 2024 may be taken, and `langgraph dev`
    then moves silently). `jobs`: runs the server executes at once (`--n-jobs-per-worker`).
    `workdir`: where the copy of the project goes (a temporary folder, removed on `stop()`,
    when None). Raises RuntimeError with the server's output if it exits or is not ready
    within `timeout` seconds.
    """
    source = Path(path)
    if not (source / "langgraph.json").is_file():
        raise ValueError(
            f"start_dev_server: {source} has no langgraph.json; pass the folder of a LangGraph "
            'project (langgraph.json like {"dependencies": ["."], "graphs": {"agent": "./agent.py:graph"}}).'
        )
    cli = _cli()
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="lgnb-server-")
        workdir = tmp.name
    app = Path(workdir) / source.name
    shutil.copytree(source, app, ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api", ".ipynb_checkpoints"))
    port = _free_port() if port is None else port
    log = app / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(cli), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
             "--port", str(port), "--n-jobs-per-worker", str(jobs)],
            cwd=app, env=_server_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    server = DevServer(process, f"http://127.0.0.1:{port}", app, log, tmp)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            tail = server.log_tail()
            server.stop()
            raise RuntimeError(f"langgraph dev exited ({process.returncode}):\n{tail}")
        try:
            with urllib.request.urlopen(f"{server.url}/ok", timeout=2) as r:
                if r.status == 200:
                    return server
        except OSError:
            pass
        if time.monotonic() > deadline:
            tail = server.log_tail()
            server.stop()
            raise RuntimeError(f"langgraph dev not ready after {timeout:g} s:\n{tail}")
        time.sleep(0.3)

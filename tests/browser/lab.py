"""A throwaway JupyterLab server and a Playwright page driving it (tests and bench_view).

Recipe from /work/shared/RECIPES.md: isolated Jupyter dirs, no news/update checks,
`window.jupyterapp` exposed so the page can wait for an idle kernel.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "lgnb" / "static" / "lgnb.js"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def require_bundle() -> None:
    """Fail with the fix when the front end was not built."""
    if not BUNDLE.is_file():
        raise RuntimeError(f"{BUNDLE} is missing: build the front end first (cd js && npm ci && npm run build); "
                           "./dev test does this before running the tests")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab (or Notebook 7, `app="notebook"`) whose root is `root` (copy notebooks there)."""

    def __init__(self, root: Path, port: int, token: str, proc: subprocess.Popen[bytes], log: Path,
                 app: str = "lab") -> None:
        self.root, self.port, self.token, self.proc, self.log, self.app = root, port, token, proc, log, app

    def url(self, notebook: str) -> str:
        if self.app == "notebook":
            return f"http://127.0.0.1:{self.port}/notebooks/{notebook}?token={self.token}"
        return f"http://127.0.0.1:{self.port}/lab/tree/{notebook}?token={self.token}&reset"


@contextmanager
def jupyter_lab(base: Path, *, python: Path | None = None, path: str | None = None,
                app: str = "lab") -> Iterator[Lab]:
    """Start JupyterLab in `base` (a temp dir); stop it on exit. `app="notebook"`: Jupyter
    Notebook 7 instead (`jupyter notebook`), set up the same way.

    By default the test venv's JupyterLab serves this checkout's lgnb. `python`: another
    environment's interpreter whose JupyterLab (and kernel) to run, on its own installed lgnb
    (no PYTHONPATH to the checkout); `path`: the PATH the server and its kernels get.
    """
    root, cfg = base / "root", base / "cfg"
    settings = cfg / "settings" / "@jupyterlab" / "apputils-extension"
    for d in (root, settings, cfg / "runtime", cfg / "workspaces"):
        d.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    (cfg / "jupyter_server_config.json").write_text(json.dumps({"LabApp": {
        "news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
        "expose_app_in_browser": True}, "JupyterNotebookApp": {"expose_app_in_browser": True}}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(cfg), JUPYTER_RUNTIME_DIR=str(cfg / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(cfg / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(cfg / "workspaces"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    if python is not None:
        env.pop("PYTHONPATH")
    if path is not None:
        env["PATH"] = path
    jupyter = Path(python or sys.executable).with_name("jupyter")
    log = base / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(jupyter) if jupyter.exists() else "jupyter", app, "--no-browser", "--allow-root",
             "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
             f"--ServerApp.root_dir={root}"], env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    lab = Lab(root, port, token, proc, log, app)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.25)
        yield lab
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def copy_notebook(lab: Lab, source: Path, name: str | None = None) -> str:
    target = lab.root / (name or source.name)
    shutil.copyfile(source, target)
    return target.name


WAIT_IDLE = """async () => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  const ctx = w && w.sessionContext;
  return !!(ctx && ctx.session && ctx.session.kernel && ctx.session.kernel.status === 'idle' && !ctx.isRestarting);
}"""


def open_notebook(page: Any, lab: Lab, name: str, *, timeout: float = 60.0) -> None:
    """Open `name` and wait until its kernel is idle."""
    page.goto(lab.url(name))
    page.wait_for_selector(".jp-Notebook", timeout=timeout * 1000)
    deadline = time.monotonic() + timeout
    while not page.evaluate(WAIT_IDLE):
        if time.monotonic() > deadline:
            raise TimeoutError("kernel did not become idle")
        time.sleep(0.2)


def run_all(page: Any) -> None:
    """Run ▸ Run All Cells, via the menu as a user would."""
    page.get_by_role("menuitem", name="Run", exact=True).first.click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()


def wait_kernel_idle(page: Any, *, timeout: float = 60.0) -> None:
    time.sleep(0.3)
    deadline = time.monotonic() + timeout
    while not page.evaluate(WAIT_IDLE):
        if time.monotonic() > deadline:
            raise TimeoutError("kernel still busy")
        time.sleep(0.2)


@contextmanager
def chromium_page(executable: str, *, args: list[str] | None = None,
                  viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A Playwright page in Debian's Chromium (no browser download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=args or CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=viewport or {"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(30_000)
            yield page
        finally:
            browser.close()

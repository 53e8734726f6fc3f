"""The review inbox in a real JupyterLab against a real `langgraph dev`: the server's
interrupted threads listed newest first with their question; one click on a row opens
the thread's form under the list, one click on its option answers it — the server
thread resumes and the thread leaves the list. No cell runs while the page is used."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

APP = Path(__file__).parents[1] / "remote" / "app"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from lgnb.server import start_dev_server

    if not (Path(sys.executable).parent / "langgraph").exists():
        pytest.skip("needs the langgraph CLI (pip install -e '.[test]')")
    handle = start_dev_server(APP, workdir=tmp_path_factory.mktemp("inbox-server"))
    try:
        yield handle
    finally:
        handle.stop()


def test_one_click_in_the_inbox_answers_a_server_thread(lab: Lab, page: Any, artifacts: Path, server: Any) -> None:
    from langgraph_sdk import get_sync_client

    sdk = get_sync_client(url=server.url, api_key=None)
    suite = str(uuid.uuid4())
    tids = []
    for steps in (1, 2):
        tid = sdk.threads.create(metadata={"suite": suite})["thread_id"]
        sdk.runs.wait(tid, "slow", input={"steps": steps, "pause": 0})
        tids.append(tid)
    older, newer = tids

    cells = ["import lgnb",
             f"box = lgnb.inbox({server.url!r}, 'slow', metadata={{'suite': {suite!r}}})\nbox"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "inbox.ipynb")
    open_notebook(page, lab, "inbox.ipynb")
    run_all(page)
    inbox = page.locator(".lgnb-inbox-view").first
    inbox.locator(".lgnb-inbox-row").nth(1).wait_for(timeout=60_000)
    wait_kernel_idle(page)  # no cell runs: the clicks go through the comm handlers alone
    rows = inbox.locator(".lgnb-inbox-row")
    assert rows.evaluate_all("(rs) => rs.map((r) => r.dataset.thread)") == [newer, older]
    assert rows.locator(".lgnb-inbox-question").all_text_contents() == ["accept 2 steps?", "accept 1 steps?"]
    assert all(a.startswith("waiting ") for a in rows.locator(".lgnb-inbox-age").all_text_contents())
    output = page.locator(".jp-OutputArea-output", has=inbox).first
    output.screenshot(path=str(artifacts / "inbox-listed.png"))

    rows.nth(1).click()  # open the older thread: its form shows under the list
    run = page.locator(".lgnb-run").first
    form = run.locator(".lgnb-form", has_text="accept 1 steps?")
    form.wait_for(timeout=30_000)
    run.locator("[data-testid=status]", has_text="interrupted").wait_for()
    assert [b.strip() for b in form.locator(".lgnb-form-actions button").all_text_contents()] == ["accept", "reject"]
    output.screenshot(path=str(artifacts / "inbox-opened.png"))

    form.get_by_role("button", name="accept").click()  # one click answers
    run.locator("[data-testid=status]", has_text="done").wait_for(timeout=60_000)
    inbox.locator(".lgnb-inbox-notice", has_text="left the inbox").wait_for(timeout=30_000)
    assert rows.evaluate_all("(rs) => rs.map((r) => r.dataset.thread)") == [newer]
    state = sdk.threads.get_state(older)
    assert state["values"]["verdict"] == "accept" and state["next"] == []
    assert sdk.threads.get(newer)["status"] == "interrupted"  # the other one still waits
    assert not page.lgnb_errors, page.lgnb_errors
    output.screenshot(path=str(artifacts / "inbox-answered.png"))

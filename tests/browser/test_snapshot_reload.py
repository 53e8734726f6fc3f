"""Notebooks that last (issue 12), in a real JupyterLab: run the tour, save it, shut the
kernel down and reload the page. Every view of the tour then shows its static snapshot
(graph SVG, transcript, status, the recorded answer) instead of "Error displaying widget:
model not found"; while the kernel was live, the widgets showed and the snapshots did not."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from lab import Lab, copy_notebook, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

TOUR = Path(__file__).resolve().parents[2] / "notebooks" / "tour.ipynb"
NAME = "tour_snapshot_reload.ipynb"

#: what each snapshot of the page shows, and whether it is on screen
SNAPSHOTS = """() => Array.from(document.querySelectorAll('[data-lgnb-snapshot]')).map((s) => ({
  kind: s.dataset.lgnbSnapshot,
  visible: s.getClientRects().length > 0,
  nodes: s.querySelectorAll('svg g.node').length,
  status: (s.querySelector('[data-testid=snap-status]') || {}).textContent || '',
  text: s.textContent,
}))"""

#: outputs of the notebook that are on screen and say a widget is missing
WIDGET_ERRORS = """() => Array.from(document.querySelectorAll('.jp-OutputArea-output'))
  .filter((o) => o.getClientRects().length > 0 && /Error displaying widget/.test(o.textContent)).length"""


def saved_outputs(path: Path) -> list[dict[str, Any]]:
    nb = json.loads(path.read_text())
    return [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]


def test_saved_tour_shows_every_view_as_its_snapshot_after_kernel_shutdown_and_reload(
        lab: Lab, page: Any, artifacts: Path) -> None:
    open_notebook(page, lab, copy_notebook(lab, TOUR, NAME))
    run_all(page)
    review = page.locator(".lgnb-run").nth(1)
    review.locator("[data-testid=status]", has_text="done").wait_for(timeout=90_000)
    wait_kernel_idle(page)

    # live: the widgets show, their snapshots are in the page but hidden
    live = page.evaluate(SNAPSHOTS)
    assert sorted(s["kind"] for s in live) == ["graph", "run", "run"], live
    assert not any(s["visible"] for s in live), live
    assert page.locator(".lgnb-run").first.is_visible() and page.locator(".lgnb-graph-view").first.is_visible()

    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    path = lab.root / NAME
    deadline = time.monotonic() + 20
    while "Reviewer said: approved" not in path.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    html_outputs = [o for o in saved_outputs(path) if "text/html" in o.get("data", {})]
    assert len(html_outputs) == 3, html_outputs
    (artifacts / "snapshot-reload-size.txt").write_text(f"{path.stat().st_size}\n")

    kernel = page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id")
    request = urllib.request.Request(f"http://127.0.0.1:{lab.port}/api/kernels/{kernel}?token={lab.token}",
                                     method="DELETE")
    urllib.request.urlopen(request, timeout=20).read()

    page.reload()
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('[data-lgnb-snapshot]').length === 3", timeout=60_000)
    # a stale widget output first says "Loading widget...", then gives up on its model (2 s)
    deadline = time.monotonic() + 30
    while True:
        shown = page.evaluate(SNAPSHOTS)
        if all(s["visible"] for s in shown) or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert all(s["visible"] for s in shown), shown
    page.wait_for_timeout(3000)  # past the widget manager's 2 s wait for a missing model
    assert page.evaluate(WIDGET_ERRORS) == 0
    assert page.locator(".lgnb-run").count() == 0  # no live view: there is no model to draw from

    graph, run, review_snap = shown
    assert graph["kind"] == "graph" and graph["nodes"] == 4, graph
    assert run["status"] == "done" and run["nodes"] == 4, run
    assert "What is 2 + 3?" in run["text"] and "The tool says 2 + 3 = 5" in run["text"], run["text"]
    assert "add" in run["text"] and "adding 100%" in run["text"]
    assert review_snap["status"] == "done"
    assert "Reviewer said: approved" in review_snap["text"]
    assert "“Send this answer?” answered by code at" in review_snap["text"]
    snaps = page.locator("[data-lgnb-snapshot]")
    for i, name in enumerate(["graph", "run", "review"]):
        snaps.nth(i).scroll_into_view_if_needed()
        snaps.nth(i).screenshot(path=str(artifacts / f"snapshot-reload-{name}.png"))
    assert not page.lgnb_errors, page.lgnb_errors


UNWAITED = [
    "import time, lgnb\n"
    "from lgnb.graph import END, START, MessagesState, StateGraph\n"
    "def slow(state):\n"
    "    time.sleep(1.5)\n"
    "    return {'messages': [('ai', 'finished <b>late</b>')]}\n"
    "g = StateGraph(MessagesState).add_node('slow', slow).add_edge(START, 'slow').add_edge('slow', END).compile()\n"
    "run = lgnb.run(g, {'messages': [('user', 'go')]})",
]


def test_a_run_nobody_waits_for_saves_its_final_snapshot(lab: Lab, page: Any, tmp_path: Path) -> None:
    """The cell returns while the run goes on; when it ends (no cell running), the snapshot
    output is replaced through its display id, so the saved notebook says done."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in UNWAITED], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}})
    nbformat.write(nb, lab.root / "snapshot_unwaited.ipynb")
    open_notebook(page, lab, "snapshot_unwaited.ipynb")
    run_all(page)
    page.locator(".lgnb-run [data-testid=status]", has_text="done").wait_for(timeout=60_000)
    wait_kernel_idle(page)
    page.wait_for_timeout(500)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    path = lab.root / "snapshot_unwaited.ipynb"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        snaps = ["".join(o["data"]["text/html"]) for o in saved_outputs(path) if "text/html" in o.get("data", {})]
        if snaps and "finished" in "".join(snaps):
            break
        time.sleep(0.3)
    (snap,) = snaps
    assert 'data-testid="snap-status">done<' in snap, snap[-2000:]
    assert "finished &lt;b&gt;late&lt;/b&gt;" in snap

"""lgnb.history(limit=None) on a thread of 5,000 checkpoints in a real JupyterLab: the
timeline draws fast (time to draw measured in the page with performance.now()), the long
linear run is one collapsed node, "load older" asks the kernel for the next page, a
collapsed run expands on click, and a clicked checkpoint shows its state."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

#: time to draw (DOT in hand → SVG laid out and painted), per draw
DRAW_BOUND_MS = 1000

CELLS = [
    "import pathlib, tempfile\n"
    "from typing_extensions import TypedDict\n"
    "import lgnb\n"
    "from lgnb.graph import StateGraph, START, END\n"
    "from lgnb.checkpoint.sqlite import SqliteSaver\n"
    "class Count(TypedDict):\n    n: int\n"
    "STEPS = 4998  # with the input and START checkpoints: 5,000 checkpoints\n"
    "b = StateGraph(Count)\n"
    "b.add_node('tick', lambda s: {'n': s['n'] + 1})\n"
    "b.add_edge(START, 'tick')\n"
    "b.add_conditional_edges('tick', lambda s: 'tick' if s['n'] < STEPS else END, ['tick', END])\n"
    "saver = SqliteSaver(pathlib.Path(tempfile.mkdtemp()) / 'threads.sqlite')\n"
    "g = b.compile(checkpointer=saver)\n"
    "cfg = {'configurable': {'thread_id': 'long'}}\n"
    "g.invoke({'n': 0}, {**cfg, 'recursion_limit': STEPS + 10})\n"
    "old = next(s for s in g.get_state_history(cfg, limit=20) if s.metadata['step'] == 4990)\n"
    "g.update_state(old.config, {'n': -1})  # a fork near the end: a branch point\n"
    "len(list(saver.list(cfg)))",
    "view = lgnb.history(g, cfg, limit=None)\nview",
]

ROOT_JS = "document.querySelector('.lgnb-history')"


def wait_for(page: Any, script: str, *, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = page.evaluate(script)
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {script}")


def draws(page: Any) -> int:
    return int(page.evaluate(f"() => {ROOT_JS}?.dataset.draws || 0"))


def wait_draw(page: Any, after: int) -> dict[str, float]:
    """Wait for the drawing after draw number `after`; its time to draw and when it was painted."""
    wait_for(page, f"() => Number({ROOT_JS}?.dataset.draws || 0) > {after}")
    return page.evaluate(f"() => ({{ms: Number({ROOT_JS}.dataset.drawMs), at: Number({ROOT_JS}.dataset.drawnAt)}})")


def test_five_thousand_checkpoints_draw_fast_collapsed_and_page_in(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "history_big.ipynb")
    open_notebook(page, lab, "history_big.ipynb")
    run_all(page)
    wait_kernel_idle(page, timeout=240)
    assert "5001" in (page.locator(".jp-OutputArea-output").first.text_content() or "")

    first = wait_draw(page, 0)
    view = page.locator(".lgnb-history").first
    timings = {"first draw": first["ms"]}
    nodes = view.locator("svg g.node")
    # the newest page (500 of 5,001), its long linear run as one node
    meta = view.locator(".lgnb-meta")
    assert re.fullmatch(r"500 checkpoints \(older ones not loaded\) · ([\d,]+) in 2 collapsed runs · 1 branch point",
                        meta.text_content() or ""), meta.text_content()
    # the run before the branch point (steps 4,500 … 4,990) and the one after it
    run = view.locator("svg g.node.lgnb-segment").first
    assert "steps 4,502–4,988" in (run.text_content() or "") and "487 checkpoints" in (run.text_content() or "")
    assert "click to expand" in (run.text_content() or "")
    assert nodes.count() < 30, nodes.count()
    assert first["ms"] < DRAW_BOUND_MS, timings
    view.screenshot(path=str(artifacts / "history-big-collapsed.png"))

    # load older: the kernel reads the next page; the run grows, the drawing does not
    before = draws(page)
    t0 = page.evaluate("() => performance.now()")
    view.get_by_role("button", name="load older").click()
    second = wait_draw(page, before)
    timings.update({"draw after load older": second["ms"], "load older, click to painted": second["at"] - t0})
    wait_for(page, f"() => {ROOT_JS}.querySelector('.lgnb-meta').textContent.startsWith('1,000 checkpoints')")
    assert "loaded 500 older checkpoints" in (view.locator("[data-testid=notice]").text_content() or "")
    assert "steps 4,002–4,988" in (view.locator("svg g.node.lgnb-segment").first.text_content() or "")
    assert view.locator("svg g.node.lgnb-segment").count() == 2 and nodes.count() < 30
    assert second["ms"] < DRAW_BOUND_MS, timings

    # click the collapsed run: it expands into landmarks and shorter runs
    before = draws(page)
    count = nodes.count()
    view.locator("svg g.node.lgnb-segment").first.click()
    third = wait_draw(page, before)
    timings["draw after expanding"] = third["ms"]
    assert nodes.count() > count and view.locator("svg g.node.lgnb-segment").count() >= 8
    assert view.get_by_role("button", name="collapse runs").is_visible()
    assert third["ms"] < DRAW_BOUND_MS, timings

    # click a checkpoint that was inside the run: its state shows
    landmark = view.locator("svg g.node:not(.lgnb-segment)", has_text="· loop").nth(3)
    label = landmark.locator("text").first.text_content() or ""
    step = int(label.split("·")[0].split()[1])
    assert 4000 < step < 4990, label
    landmark.click()
    details = view.locator("[data-testid=checkpoint-details]")
    details.wait_for()
    assert f"step {step} · loop" in (details.locator(".lgnb-details-title").text_content() or "")
    assert f'"n": {step}' in (details.locator(".lgnb-json").first.text_content() or "")
    assert "next: tick" in (details.text_content() or "")
    assert view.locator("svg g.node.lgnb-selected").count() == 1
    view.screenshot(path=str(artifacts / "history-big.png"))
    print("history-big timings (ms):", timings)  # shown with pytest -s
    assert not page.lgnb_errors, page.lgnb_errors

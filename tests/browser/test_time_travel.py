"""The time-travel lesson in a real JupyterLab: the checkpoint timeline is drawn by Graphviz
WASM with its fork branches, a clicked checkpoint shows its details as text, and the
Fork from here button adds a branch."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, copy_notebook, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "time_travel.ipynb"


def wait_for(page: Any, script: str, *, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = page.evaluate(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {script}")


def test_time_travel_timeline(lab: Lab, page: Any, artifacts: Path) -> None:
    open_notebook(page, lab, copy_notebook(lab, LESSON))
    run_all(page)
    wait_kernel_idle(page, timeout=90)
    views = page.locator(".lgnb-history")
    wait_for(page, "() => document.querySelectorAll('.lgnb-history').length === 2")
    first, last = views.nth(0), views.nth(1)
    wait_for(page, "() => document.querySelectorAll('.lgnb-history')[1].querySelectorAll('svg g.node').length >= 12")
    # the first view: one straight run (5 checkpoints, no branch); the last: 12, two branches
    assert first.locator("svg g.node").count() == 5 and first.locator("svg g.edge").count() == 4
    assert last.locator("svg g.node").count() == 12 and last.locator("svg g.edge").count() == 11
    assert "2 branch points" in (last.locator(".lgnb-meta").text_content() or "")
    # forks: dashed purple edges, parents with two children
    assert last.locator("svg g.edge path[stroke-dasharray]").count() == 2
    parents = last.locator("svg g.edge title").evaluate_all(
        "(ts) => ts.map((t) => t.textContent.split('->')[0])")
    assert sorted(parents.count(p) for p in set(parents)) == [1] * 7 + [2, 2]
    labels = last.locator("svg g.node text").all_text_contents()
    assert "step 2 · update" in labels and "step 1 · fork" in labels and labels.count("end") == 3

    # click the update checkpoint: its details appear as text
    last.scroll_into_view_if_needed()
    last.locator("svg g.node", has_text="step 2 · update").click()
    details = last.locator("[data-testid=checkpoint-details]")
    details.wait_for()
    assert "step 2 · update" in (details.locator(".lgnb-details-title").text_content() or "")
    assert "next: write" in (details.text_content() or "")
    values = details.locator(".lgnb-json").first.text_content() or ""
    assert '"topic": "coffee"' in values and "plan: three facts about tea" in values
    assert details.locator("pre.lgnb-json").count() >= 2 and details.locator("b, i, img, script").count() == 0
    assert last.locator("svg g.node.lgnb-selected").count() == 1
    last.screenshot(path=str(artifacts / "history-timeline.png"))

    # Fork from here: the kernel writes a checkpoint and the timeline redraws with 13 nodes
    details.get_by_role("button", name="Fork from here").click()
    wait_for(page, "() => document.querySelectorAll('.lgnb-history')[1].querySelectorAll('svg g.node').length === 13")
    assert "forked from step 2" in (last.locator("[data-testid=notice]").text_content() or "")
    assert "3 branch points" in (last.locator(".lgnb-meta").text_content() or "")
    last.screenshot(path=str(artifacts / "history-forked.png"))

    # Replay from here (the new checkpoint, next: write): write and review run again, 15 nodes
    last.locator("[data-testid=checkpoint-details]").get_by_role("button", name="Replay from here").click()
    last.locator("[data-testid=notice]", has_text="replay from step 3: done").wait_for()
    wait_for(page, "() => document.querySelectorAll('.lgnb-history')[1].querySelectorAll('svg g.node').length === 15")
    # refresh re-reads the history: the first view catches up with everything since
    first.get_by_role("button", name="refresh").click()
    wait_for(page, "() => document.querySelectorAll('.lgnb-history')[0].querySelectorAll('svg g.node').length === 15")
    assert not page.lgnb_errors, page.lgnb_errors


EVIL_NODE = '<img src=x onerror="window.__pwned=1">'
EVIL_TEXT = '<script>window.__pwned=2</script> & &amp; "q" \\N'
HOSTILE = [(
    "import operator\nfrom typing import Annotated\nfrom typing_extensions import TypedDict\n"
    "import lgnb\nfrom lgnb.graph import StateGraph, START\nfrom lgnb.checkpoint.memory import InMemorySaver\n"
    f"EVIL_NODE = {EVIL_NODE!r}\nEVIL_TEXT = {EVIL_TEXT!r}\n"
    "class S(TypedDict):\n    n: Annotated[list, operator.add]\n"
    "b = StateGraph(S)\nb.add_node('first', lambda s: {'n': [EVIL_TEXT]})\n"
    "b.add_node(EVIL_NODE, lambda s: {'n': ['x']})\n"
    "b.add_edge(START, 'first')\nb.add_edge('first', EVIL_NODE)\n"
    "g = b.compile(checkpointer=InMemorySaver())\ncfg = {'configurable': {'thread_id': EVIL_TEXT}}\n"
    "g.invoke({'n': []}, cfg)\nlgnb.history(g, cfg)"),
]


def test_history_shows_hostile_strings_as_text(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in HOSTILE])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "hostile_history.ipynb")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_notebook(page, lab, "hostile_history.ipynb")
    run_all(page)
    wait_kernel_idle(page)
    view = page.locator(".lgnb-history").first
    wait_for(page, "() => document.querySelectorAll('.lgnb-history svg g.node').length === 4")
    assert f"S · thread {EVIL_TEXT}" == view.locator(".lgnb-title").text_content()  # titled by the schema
    assert f"next: {EVIL_NODE}" in view.locator("svg g.node text").all_text_contents()
    view.locator("svg g.node", has_text=f"next: {EVIL_NODE}").click()
    details = view.locator("[data-testid=checkpoint-details]")
    assert f"next: {EVIL_NODE}" in (details.text_content() or "")
    assert json.dumps(EVIL_TEXT) in (details.locator(".lgnb-json").first.text_content() or "")  # values as JSON text
    assert page.evaluate("() => document.querySelectorAll('.lgnb-root img, .lgnb-root script').length") == 0
    assert page.evaluate("() => window.__pwned === undefined")
    assert not dialogs and not page.lgnb_errors, (dialogs, page.lgnb_errors)
    view.screenshot(path=str(artifacts / "history-hostile.png"))

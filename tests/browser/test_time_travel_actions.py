"""Time travel from the page, in a real JupyterLab: a fork with an edited value appears as a
branch (an invalid value is refused on its field, nothing sent), a replay (double-clicked)
streams into its own run view under the timeline while the timeline grows, and a
shift-click shows the diff between two checkpoints."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

CELLS = [
    "import operator, time\nfrom typing import Annotated\nfrom typing_extensions import TypedDict\n"
    "import lgnb\nfrom lgnb.graph import StateGraph, START\nfrom lgnb.checkpoint.memory import InMemorySaver\n"
    "class Doc(TypedDict):\n    topic: str\n    count: int\n    notes: Annotated[list, operator.add]\n"
    "def step(name):\n    def node(state):\n        time.sleep(0.6)\n"
    "        return {'notes': [f\"{name}: {state['topic']}\"], 'count': state['count'] + 1}\n    return node\n"
    "b = StateGraph(Doc)\nfor n in ('plan', 'write', 'review'):\n    b.add_node(n, step(n))\n"
    "b.add_edge(START, 'plan'); b.add_edge('plan', 'write'); b.add_edge('write', 'review')\n"
    "g = b.compile(checkpointer=InMemorySaver())\ncfg = {'configurable': {'thread_id': 'doc'}}\n"
    "g.invoke({'topic': 'tea', 'count': 0, 'notes': []}, cfg)\n",
    "timeline = lgnb.history(g, cfg)\ntimeline",
]


def wait_for(page: Any, script: str, *, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = page.evaluate(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {script}")


NODES = "() => document.querySelectorAll('.lgnb-history svg g.node').length"


def test_fork_with_edits_replay_and_diff(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "time_travel_actions.ipynb")
    open_notebook(page, lab, "time_travel_actions.ipynb")
    run_all(page)
    wait_kernel_idle(page, timeout=90)
    view = page.locator(".lgnb-history").first
    wait_for(page, f"() => ({NODES})() === 5")

    # select the checkpoint before `write`; its fork form has one field per state key
    view.scroll_into_view_if_needed()
    view.locator("svg g.node", has_text="next: write").click()
    details = view.locator("[data-testid=checkpoint-details]")
    details.wait_for()
    form = details.locator("[data-testid=fork-form]")
    form.locator("summary").click()
    assert form.locator("[data-key]").evaluate_all("(xs) => xs.map((x) => x.dataset.key)") == ["topic", "count", "notes"]
    assert form.locator("[data-key=topic]").input_value() == "tea" and form.locator("[data-key=count]").input_value() == "1"

    # an invalid value: refused on its field, nothing forked
    form.locator("[data-key=count]").fill("three")
    details.get_by_role("button", name="Fork from here").click()
    error = view.locator("[data-testid=field-error]", has_text="not an integer")
    error.wait_for()
    assert page.evaluate(NODES) == 5
    view.screenshot(path=str(artifacts / "history-fork-invalid.png"))

    # a valid edit: a new branch, selected, with the edited value
    details = view.locator("[data-testid=checkpoint-details]")
    form = details.locator("[data-testid=fork-form]")
    form.locator("[data-key=count]").fill("1")
    form.locator("[data-key=topic]").fill("coffee")
    details.get_by_role("button", name="Fork from here").click()
    wait_for(page, f"() => ({NODES})() === 6")
    assert "forked from step 1 with topic edited" in (view.locator("[data-testid=notice]").text_content() or "")
    assert view.locator("svg g.edge path[stroke-dasharray]").count() == 1
    assert "1 branch point" in (view.locator(".lgnb-meta").text_content() or "")
    new = view.locator("[data-testid=checkpoint-details]")
    wait_for(page, "() => document.querySelector('[data-testid=checkpoint-details] .lgnb-details-title')?.textContent.startsWith('step 2 · update')")
    assert '"topic": "coffee"' in (new.locator(".lgnb-json").first.text_content() or "")
    view.screenshot(path=str(artifacts / "history-fork-edited.png"))

    # diff: shift-click the original checkpoint before `write`
    view.locator("svg g.node", has_text="step 1 · loop").click(modifiers=["Shift"])
    diff = view.locator("[data-testid=diff]")
    diff.wait_for()
    assert "diff: step 1 → step 2" in (diff.text_content() or "")
    assert diff.locator("[data-testid=diff-changed]").all_text_contents() == ["topic changed"]
    assert view.locator("svg g.node.lgnb-compared").count() == 1
    view.screenshot(path=str(artifacts / "history-diff.png"))
    diff.get_by_role("button", name="clear comparison").click()
    wait_for(page, "() => !document.querySelector('[data-testid=diff]')")

    # replay from the forked checkpoint, double-clicked: one run view streams it under the timeline
    replay = view.locator("[data-testid=checkpoint-details]").get_by_role("button", name="Replay from here")
    replay.dblclick()
    run = page.locator(".lgnb-run")
    run.first.wait_for()
    wait_for(page, "() => document.querySelector('.lgnb-run [data-testid=status]')?.textContent === 'running'")
    # the timeline grows while the replay runs (write's checkpoint before review's)
    wait_for(page, f"() => ({NODES})() === 7 && document.querySelector('.lgnb-run [data-testid=status]')?.textContent === 'running'", timeout=20)
    assert view.get_by_role("button", name="Replaying…").is_disabled()
    wait_for(page, "() => document.querySelector('.lgnb-run [data-testid=status]')?.textContent === 'done'", timeout=30)
    wait_for(page, f"() => ({NODES})() === 8")  # write and review ran again on the branch
    assert run.count() == 1 and "replay from step 2" in (run.locator(".lgnb-title").text_content() or "")
    # the run view sits under the timeline, in the same output
    assert page.evaluate("() => { const h = document.querySelector('.lgnb-history'), r = document.querySelector('.lgnb-run');"
                         " return h.closest('.jp-OutputArea') === r.closest('.jp-OutputArea') &&"
                         " h.compareDocumentPosition(r) === Node.DOCUMENT_POSITION_FOLLOWING; }")
    messages = run.locator(".lgnb-root").first if run.locator(".lgnb-root").count() else run
    assert "review: coffee" in (messages.text_content() or "")
    assert "replay from step 2: done" in (view.locator("[data-testid=notice]").text_content() or "")
    assert view.get_by_role("button", name="Replay from here").is_enabled()
    page.locator(".jp-OutputArea", has=view).first.screenshot(path=str(artifacts / "history-replay.png"))
    assert not page.lgnb_errors, page.lgnb_errors

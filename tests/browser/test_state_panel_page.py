"""The run view's state panel in a real JupyterLab: a graph without messages shows its state
(changed keys marked, a 1 MB string and a 10,000-item list folded, a Send fan-out ×3 with its
three updates), the step number of the checkpoint, and hostile text stays text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

CELLS = [
    "import operator\nfrom typing import Annotated, TypedDict\nimport lgnb\n"
    "from lgnb.graph import StateGraph, START\nfrom lgnb.types import Send",
    "class S(TypedDict, total=False):\n"
    "    items: list\n    out: Annotated[list, operator.add]\n    text: str\n    big: list\n    note: str\n"
    "b = StateGraph(S)\n"
    "b.add_node('fan', lambda s: {'text': 'x' * 1_000_000, 'big': list(range(10_000)), 'note': '<img src=x onerror=window.__pwned=1>'})\n"
    "b.add_node('work', lambda x: {'out': [x * 10]})\n"
    "b.add_edge(START, 'fan')\n"
    "b.add_conditional_edges('fan', lambda s: [Send('work', i) for i in s['items']], ['work'])\n"
    "graph = b.compile()",
    "run = lgnb.run(graph, {'items': [1, 2, 3]})",
]


def test_state_panel_on_the_page(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "state_panel.ipynb")
    open_notebook(page, lab, "state_panel.ipynb")
    run_all(page)
    run = page.locator(".lgnb-run").first
    run.locator("[data-testid=status]", has_text="done").wait_for(timeout=30_000)
    wait_kernel_idle(page)
    panel = run.locator("[data-testid=state]")
    panel.locator("[data-testid=state-step]", has_text="state · step 2").wait_for()
    assert run.locator("[data-testid=messages]").is_hidden()  # no chat: no empty message box
    # the last step: work ran as 3 tasks, each update kept; only `out` changed
    work = panel.locator(".lgnb-state-task[data-node=work]")
    assert "×3" in (work.locator("summary").text_content() or "")
    work.locator("summary").click()
    updates = work.locator(".lgnb-state-update").all_text_contents()
    assert sorted(u.split("task ")[1][1:] for u in updates) == ['{"out":[10]}', '{"out":[20]}', '{"out":[30]}'], updates
    rows = {r.get_attribute("data-key"): r for r in panel.locator("tr[data-key]").all()}
    assert set(rows) == {"items", "out", "text", "big", "note"}
    assert [k for k, r in rows.items() if "lgnb-lens-changed" in (r.get_attribute("class") or "")] == ["out"]
    assert "● out" in (rows["out"].text_content() or "")
    # folded: a 1 MB string and a 10,000-item list show their size and a little
    assert "(1,000,000 chars)" in (rows["text"].text_content() or "")
    assert "list of 10,000 items · last 3" in (rows["big"].text_content() or "")
    assert len(panel.text_content() or "") < 5000
    assert "<img src=x onerror=window.__pwned=1>" in (rows["note"].text_content() or "")
    assert page.evaluate("() => window.__pwned === undefined")
    assert "step 2" in (run.locator("[data-testid=step]").text_content() or "")
    rows["text"].locator("summary").click()
    run.screenshot(path=str(artifacts / "state-panel.png"))
    # the graph's details for `work` list the three updates of its step
    run.locator("g.node", has_text="work").first.click()
    run.locator(".lgnb-details", has_text="last step: 3 updates").wait_for()
    run.screenshot(path=str(artifacts / "state-panel-details.png"))
    assert not page.lgnb_errors, page.lgnb_errors

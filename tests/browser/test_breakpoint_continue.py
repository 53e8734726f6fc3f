"""A static breakpoint in a real JupyterLab: the run view says which node runs next, and its
"continue ▶" button goes on from the page while no cell runs (the human-feedback lessons'
`interrupt_before` loop). A node name with markup in it stays text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

EVIL_NODE = "<b>review</b>"

CELLS = [
    ("import operator\nfrom typing import Annotated, TypedDict\nimport lgnb\n"
     "from lgnb.graph import StateGraph, START\nfrom lgnb.checkpoint.memory import InMemorySaver"),
    ("class S(TypedDict):\n    log: Annotated[list, operator.add]\n"
     "b = StateGraph(S)\n"
     "b.add_node('draft', lambda s: {'log': ['drafted']})\n"
     f"b.add_node({EVIL_NODE!r}, lambda s: None)\n"
     "b.add_node('write', lambda s: {'log': ['written']})\n"
     f"b.add_edge(START, 'draft')\nb.add_edge('draft', {EVIL_NODE!r})\nb.add_edge({EVIL_NODE!r}, 'write')\n"
     f"graph = b.compile(checkpointer=InMemorySaver(), interrupt_before=[{EVIL_NODE!r}])"),
    "run = lgnb.run(graph, {'log': []}, {'configurable': {'thread_id': 'lesson'}})",
]


def test_continue_goes_on_past_the_breakpoint_from_the_page(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "breakpoint.ipynb")
    open_notebook(page, lab, "breakpoint.ipynb")
    run_all(page)
    view = page.locator(".lgnb-run").first
    view.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=30_000)
    wait_kernel_idle(page)  # no cell runs: the click goes through the comm handler alone

    spot = view.locator("[data-testid=breakpoint]")
    spot.wait_for()
    assert (spot.locator(".lgnb-breakpoint-where").text_content() or "") == (
        f"paused at a breakpoint · next: {EVIL_NODE}")
    assert "update_state" in (spot.locator(".lgnb-hint").text_content() or "")
    assert page.evaluate("() => document.querySelectorAll('.lgnb-breakpoint b').length") == 0
    assert view.locator(".lgnb-form").count() == 0
    view.screenshot(path=str(artifacts / "breakpoint-paused.png"))

    button = spot.get_by_test_id("continue")
    assert button.is_enabled()
    button.click()
    view.locator("[data-testid=status]", has_text="done").wait_for(timeout=30_000)
    assert view.locator("[data-testid=breakpoint]").count() == 0
    assert (view.locator("[data-testid=form-error]").text_content() or "") == ""
    assert not page.lgnb_errors, page.lgnb_errors
    view.screenshot(path=str(artifacts / "breakpoint-done.png"))


NODE_INTERRUPT_CELLS = [
    ("import warnings\nfrom typing import TypedDict\nimport lgnb\n"
     "from lgnb.graph import StateGraph, START\nfrom lgnb.checkpoint.memory import InMemorySaver\n"
     "from lgnb.errors import NodeInterrupt\nwarnings.simplefilter('ignore')"),
    ("class S(TypedDict):\n    input: str\n"
     "def step_2(s):\n"
     "    if len(s['input']) > 5:\n"
     "        raise NodeInterrupt(f\"too long: <b>{s['input']}</b>\")\n"
     "    return s\n"
     "b = StateGraph(S)\nb.add_node('step_2', step_2)\nb.add_edge(START, 'step_2')\n"
     "graph = b.compile(checkpointer=InMemorySaver())\ncfg = {'configurable': {'thread_id': 'dynamic'}}"),
    "run = lgnb.run(graph, {'input': 'hello world'}, cfg)",
    "run.wait(timeout=30)\ngraph.update_state(cfg, {'input': 'hi'})",
]


def test_a_node_interrupt_shows_its_words_as_text_and_continue_goes_on(lab: Lab, page: Any, artifacts: Path) -> None:
    """NodeInterrupt (the Academy's dynamic breakpoints): no form, the node's words shown as
    text (its markup stays text), and once a cell changed the state, continue finishes."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NODE_INTERRUPT_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "node_interrupt.ipynb")
    open_notebook(page, lab, "node_interrupt.ipynb")
    run_all(page)
    view = page.locator(".lgnb-run").first
    view.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=30_000)
    wait_kernel_idle(page)

    spot = view.locator("[data-testid=breakpoint]")
    spot.wait_for()
    assert (spot.locator(".lgnb-breakpoint-where").text_content() or "") == "stopped by the node · next: step_2"
    assert (spot.get_by_test_id("stopped-says").text_content() or "") == "step_2: too long: <b>hello world</b>"
    assert page.evaluate("() => document.querySelectorAll('.lgnb-run .lgnb-interrupts b').length") == 0
    assert "NodeInterrupt" in (spot.locator(".lgnb-hint").text_content() or "")
    assert view.locator(".lgnb-form").count() == 0
    view.screenshot(path=str(artifacts / "node-interrupt-stopped.png"))

    spot.get_by_test_id("continue").click()
    view.locator("[data-testid=status]", has_text="done").wait_for(timeout=30_000)
    assert view.locator("[data-testid=breakpoint]").count() == 0
    assert not page.lgnb_errors, page.lgnb_errors

"""Hostile content: HTML from a model, in node names, payloads and errors is shown as text;
no markup is injected and no script runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

WIDGETS = Path(__file__).resolve().parents[1] / "widgets"
EVIL_NODE = '<img src=x onerror="window.__pwned=3">'
EVIL_TEXT = '<img src=x onerror="window.__pwned=1"> & <script>window.__pwned=2</script> &amp; "quoted"'
CONTROL_NODES = ("a\x00b", "tab\tname")  # drawn as the escapes a\x00b, tab\tname

CELLS = [
    f"import sys\nsys.path.insert(0, {str(WIDGETS)!r})\nimport lgnb\n"
    "from widget_fakes import FakeStreamingChat\n"
    "from lgnb.graph import StateGraph, START, END, MessagesState\n"
    "from lgnb.config import get_stream_writer",
    f"EVIL_NODE = {EVIL_NODE!r}\nEVIL_TEXT = {EVIL_TEXT!r}\nCTRL = {CONTROL_NODES!r}\n"
    "model = FakeStreamingChat(replies=[EVIL_TEXT], chunk_chars=5, delay=0.005)\n"
    "def talk(state):\n"
    "    w = get_stream_writer()\n"
    "    w({'progress': 0.5, 'stage': '<b onmouseover=window.__pwned=5>stage</b>'})\n"
    "    w({'html': '<img src=x onerror=window.__pwned=4>'})\n"
    "    return {'messages': [model.invoke(state['messages'])]}\n"
    "def fail(state):\n"
    "    raise ValueError('<img src=x onerror=window.__pwned=6>')\n"
    "b = StateGraph(MessagesState)\n"
    "b.add_node(EVIL_NODE, talk)\nb.add_node('fail', fail)\n"
    "for name in CTRL:\n    b.add_node(name, lambda s: {})\n"
    "b.add_edge(START, EVIL_NODE)\nb.add_edge(EVIL_NODE, CTRL[0])\n"
    "b.add_edge(CTRL[0], CTRL[1])\nb.add_edge(CTRL[1], 'fail')\n"
    "graph = b.compile()\n"
    "lgnb.show(graph)",
    "run = lgnb.run(graph, {'messages': [('user', EVIL_TEXT)]})",
]


def test_hostile_strings_stay_text(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "hostile.ipynb")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_notebook(page, lab, "hostile.ipynb")
    run_all(page)
    run = page.locator(".lgnb-run").first
    run.locator("[data-testid=status]", has_text="error").wait_for(timeout=30_000)
    wait_kernel_idle(page)
    page.wait_for_timeout(500)

    texts = run.locator(".lgnb-bubble .lgnb-text").all_text_contents()
    assert texts == [EVIL_TEXT, EVIL_TEXT]  # the user's message and the model's, verbatim
    # each pane draws its SVG (Graphviz WASM) in its own time, not with the run's status:
    # wait for the drawings (each inserted whole) before reading their labels
    page.locator(".lgnb-graph-view g.node").first.wait_for()
    run.locator("g.node").first.wait_for()
    labels = page.locator(".lgnb-graph-view g.node text").all_text_contents()
    assert EVIL_NODE in labels
    assert EVIL_NODE in run.locator("g.node title").all_text_contents()
    # control characters in node names are drawn as escapes, in both panes, labels and titles
    shown = ["a\\x00b", "tab\\tname"]
    for pane in (page.locator(".lgnb-graph-view").first, run):
        assert set(shown) <= set(pane.locator("g.node text").all_text_contents())
        assert set(shown) <= set(pane.locator("g.node title").all_text_contents())
    assert "<b onmouseover=window.__pwned=5>stage</b>" in (run.locator(".lgnb-bar-label").first.text_content() or "")
    # the failure is shown once, as text: type, node, message
    errors = run.locator(".lgnb-error")
    assert errors.count() == 1, errors.all_text_contents()
    assert errors.first.text_content() == "ValueError in node fail: <img src=x onerror=window.__pwned=6>"
    # nothing became markup, nothing ran
    assert page.evaluate("() => document.querySelectorAll('.lgnb-root img, .lgnb-root script, .lgnb-root b[onmouseover]').length") == 0
    assert page.evaluate("() => window.__pwned === undefined")
    assert page.evaluate("() => Array.from(document.querySelectorAll('.lgnb-root svg *')).some("
                         "(e) => Array.from(e.attributes).some((a) => a.name.startsWith('on')))") is False
    assert not dialogs and not page.lgnb_errors, (dialogs, page.lgnb_errors)
    run.screenshot(path=str(artifacts / "hostile-run.png"))

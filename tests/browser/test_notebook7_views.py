"""lgnb views in Jupyter Notebook 7 (`jupyter notebook`), opened in Debian's Chromium: a
graph view and a run view render styled, and the first run of a fresh kernel shows its
first token soon after the cell is executed (measured in the page)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import BUNDLE, ROOT, Lab, jupyter_lab, open_notebook, wait_kernel_idle

pytestmark = pytest.mark.browser

WIDGETS = ROOT / "tests" / "widgets"

#: The user's own code: the graph and its chat model (imports lgnb's engine, not its views).
SETUP = f"""import sys
sys.path.insert(0, {str(WIDGETS)!r})
import lgnb
from widget_graphs import agent_graph, _engine
from widget_fakes import FakeStreamingChat
eng = _engine("lgnb")
model = FakeStreamingChat(replies=[{{"content": "let me add", "tool_calls": [{{"name": "add", "args": {{"a": 1}}, "id": "c1"}}]}}, "all done"])
graph = agent_graph(eng, model)"""

#: Stamps `window.__firstToken` (performance.now()) when an assistant bubble first shows text.
WATCH_FIRST_TOKEN = """() => {
  window.__firstToken = null;
  const seen = () => Array.from(document.querySelectorAll('.lgnb-bubble:not(.lgnb-human) .lgnb-text'))
    .some((t) => t.textContent.length > 0);
  const obs = new MutationObserver(() => {
    if (window.__firstToken === null && seen()) { window.__firstToken = performance.now(); obs.disconnect(); }
  });
  obs.observe(document.body, { subtree: true, childList: true, characterData: true });
  return performance.now();
}"""


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE} is missing: run ./dev setup (it builds the front end)", pytrace=False)
    with jupyter_lab(tmp_path_factory.mktemp("nb7"), app="notebook") as server:
        yield server


def _write(path: Path, cells: list[str]) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path.name


def _errors(page: Any) -> list[str]:
    """The page's errors, less one Notebook 7.6 raises by itself on opening any notebook
    (a settings read in notebook_core; seen with a notebook holding only `1+1`)."""
    return [e for e in page.lgnb_errors if e != "Cannot read properties of undefined (reading 'schema')"]


def _run_cell(page: Any, index: int) -> None:
    """Select code cell `index` and execute it with Shift+Enter, as a user would."""
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Enter")


def test_notebook7_shows_a_styled_graph_view_and_a_run_view(notebook7: Lab, page: Any, artifacts: Path) -> None:
    name = _write(notebook7.root / "views7.ipynb",
                  [SETUP, "lgnb.show(graph, title='seven')", "r = lgnb.run(graph, {'messages': [('user', 'hi')]})"])
    open_notebook(page, notebook7, name)
    for i in range(3):
        _run_cell(page, i)
        wait_kernel_idle(page)
    graph_view = page.locator(".lgnb-root", has=page.locator(".lgnb-title", has_text="seven"))
    graph_view.locator("g.node").first.wait_for(timeout=30_000)
    run_view = page.locator(".lgnb-root", has=page.locator(".lgnb-status", has_text="done"))
    run_view.wait_for(timeout=30_000)
    page.screenshot(path=str(artifacts / "notebook7-views.png"), full_page=True)
    nodes = sorted(graph_view.locator("g.node title").all_text_contents())
    assert nodes == ["__end__", "__start__", "agent", "tools"]
    css = graph_view.evaluate("(e) => { const s = getComputedStyle(e); return [s.borderTopWidth, s.borderTopStyle, s.borderTopLeftRadius]; }")
    assert css == ["1px", "solid", "8px"]
    assert run_view.locator(".lgnb-status").evaluate("(e) => getComputedStyle(e).backgroundColor") == "rgb(209, 250, 229)"
    assert run_view.locator(".lgnb-bubble .lgnb-text").all_text_contents() == ["hi", "let me add", "5", "all done"]
    assert _errors(page) == []


def test_notebook7_first_run_of_a_fresh_kernel_shows_its_first_token_fast(
        notebook7: Lab, page: Any, artifacts: Path) -> None:
    name = _write(notebook7.root / "first7.ipynb", [SETUP, "r = lgnb.run(graph, {'messages': [('user', 'hi')]})"])
    open_notebook(page, notebook7, name)  # a fresh kernel: nothing of lgnb's views imported yet
    _run_cell(page, 0)
    wait_kernel_idle(page)
    assert page.evaluate("() => !('lgnb.bundles' in globalThis) && !globalThis[Symbol.for('lgnb.bundles')]")
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Escape")
    started = page.evaluate(WATCH_FIRST_TOKEN)
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("() => window.__firstToken !== null", timeout=30_000, polling=20)
    first_token_ms = page.evaluate("() => window.__firstToken") - started
    wait_kernel_idle(page)
    page.screenshot(path=str(artifacts / "notebook7-first-run.png"), full_page=True)
    (artifacts / "notebook7-first-token-ms.txt").write_text(f"{first_token_ms:.0f}\n")
    print(f"first token {first_token_ms:.0f} ms after Shift+Enter (fresh kernel, first run)")
    # the goal is 400 ms on an idle machine; a loaded 2-CPU CI box gets headroom, not a pass for seconds
    assert first_token_ms < 1500, f"first token took {first_token_ms:.0f} ms"
    assert _errors(page) == []

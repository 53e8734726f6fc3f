"""The tour in a real JupyterLab: tokens reach the page while the model streams, the lit
node moves, the run ends done, the graph view draws, the interrupt's form is drawn and then,
answered from code in a later cell, collapses into its recorded answer."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from lab import Lab, copy_notebook, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

TOUR = Path(__file__).resolve().parents[2] / "notebooks" / "tour.ipynb"

SAMPLE = """() => {
  const r = document.querySelector('.lgnb-run');
  if (!r) return null;
  const bubbles = Array.from(r.querySelectorAll('.lgnb-bubble'));
  return {
    status: r.querySelector('[data-testid=status]').textContent,
    active: Array.from(r.querySelectorAll('g.node.lgnb-active title')).map((t) => t.textContent),
    lengths: bubbles.map((b) => b.querySelector('.lgnb-text').textContent.length),
    step: r.querySelector('[data-testid=step]').textContent,
  };
}"""


def sample_until_done(page: Any, *, timeout: float = 40.0, on_sample: Any = None) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = page.evaluate(SAMPLE)
        if s:
            samples.append(s)
            if on_sample:
                on_sample(s)
            if s["status"] not in ("running", "pending"):
                return samples
        time.sleep(0.04)
    raise AssertionError(f"run did not finish in {timeout} s; last samples {samples[-3:]}")


# every approval form the page draws, kept after it collapses (Run All answers it from code)
WATCH_FORMS = """() => {
  window.__lgnbForms = [];
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) {
      const forms = n.nodeType !== 1 ? [] : n.matches('.lgnb-form') ? [n] : Array.from(n.querySelectorAll('.lgnb-form'));
      for (const f of forms) window.__lgnbForms.push({
        text: f.textContent, buttons: Array.from(f.querySelectorAll('button')).map((b) => b.textContent.trim())});
    }
  }).observe(document.body, {childList: true, subtree: true});
}"""


def test_tour_streams_live(lab: Lab, page: Any, artifacts: Path) -> None:
    open_notebook(page, lab, copy_notebook(lab, TOUR))
    page.evaluate(WATCH_FORMS)
    run_all(page)
    shots: list[str] = []

    def shoot(s: dict[str, Any]) -> None:  # one picture while `tools` is lit
        if s["active"] == ["tools"] and not shots:
            shots.append(str(artifacts / "tour-running.png"))
            page.locator(".lgnb-run").first.screenshot(path=shots[0])

    samples = sample_until_done(page, on_sample=shoot)
    assert samples[-1]["status"] == "done", samples[-1]
    assert shots, "never saw the tools node lit"
    running = [s for s in samples if s["status"] == "running"]
    # tokens arrived while the model was streaming: the last bubble grew in many steps
    growth = {s["lengths"][-1] for s in running if s["lengths"]}
    assert len(growth) >= 4, growth
    # the lit node changed: agent, tools, agent again
    lit = [tuple(s["active"]) for s in running if s["active"]]
    changes = [a for i, a in enumerate(lit) if i == 0 or a != lit[i - 1]]
    assert ("tools",) in changes and changes.count(("agent",)) >= 1 and len(changes) >= 2, changes
    run = page.locator(".lgnb-run").first
    run.locator(".lgnb-text", has_text="The tool says 2 + 3 = 5").wait_for()
    # the whole conversation stays on the page once the run is done (no reset to a partial view)
    page.wait_for_timeout(300)
    bubbles = run.locator(".lgnb-bubble")
    assert [c.split()[-1] for c in bubbles.evaluate_all("(els) => els.map((e) => e.className.replace(' lgnb-final', ''))")] == [
        "lgnb-human", "lgnb-ai", "lgnb-tool", "lgnb-ai"]
    assert "add" in (run.locator(".lgnb-tool-name").first.text_content() or "")
    assert '"a": 2' in (run.locator(".lgnb-tool-args").first.text_content() or "")
    assert run.locator("summary", has_text="updates (3)").count() == 1
    assert run.locator(".lgnb-bar-pct").first.text_content() == "100%"
    assert "step 3" in (run.locator("[data-testid=step]").text_content() or "")
    assert run.locator("g.edge.lgnb-taken").count() >= 3
    # the graph view drew the graph in the browser (WASM Graphviz)
    graph = page.locator(".lgnb-graph-view").first
    assert graph.locator("g.node").count() == 4
    graph.locator("g.node", has_text="tools").first.click()
    graph.locator(".lgnb-details", has_text="comes from: agent").wait_for()
    # the interrupt: a form on the page, answered from code in a later cell, on record in the view
    wait_kernel_idle(page)
    review = page.locator(".lgnb-run").nth(1)
    review.locator("[data-testid=status]", has_text="done").wait_for()
    review.locator(".lgnb-text", has_text="Reviewer said: approved").wait_for()
    seen = page.evaluate("() => window.__lgnbForms")
    assert any("Send this answer?" in f["text"] and "in node review" in f["text"]
               and f["buttons"][:2] == ["approved", "needs work"] for f in seen), seen
    assert review.locator(".lgnb-form").count() == 0  # the form collapsed into its record
    (record,) = review.locator(".lgnb-answer").all_text_contents()
    assert record.startswith("“Send this answer?” answered by code at") and record.endswith(" in review: approved"), record
    review.screenshot(path=str(artifacts / "tour-review.png"))
    run.scroll_into_view_if_needed()
    run.screenshot(path=str(artifacts / "tour-run.png"))
    graph.screenshot(path=str(artifacts / "tour-graph.png"))
    assert not page.lgnb_errors, page.lgnb_errors

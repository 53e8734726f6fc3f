"""The lens in a real JupyterLab: three Steps on the diamond light the right nodes and fill
the update table; a Send fan-out shows ×3; a breakpoint is stepped past from the page;
screenshots for a human to look at."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

WIDGETS = Path(__file__).resolve().parents[1] / "widgets"

SETUP = f"""import sys
sys.path.insert(0, {str(WIDGETS)!r})
import lgnb
from widget_graphs import _engine
import lens_graphs as L
from lgnb.types import Send
eng = _engine("lgnb")"""

LIT = """(i) => Array.from(document.querySelectorAll('.lgnb-lens')[i].querySelectorAll('g.node.lgnb-active title')).map((t) => t.textContent).sort()"""


def _notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP),
                nbformat.v4.new_code_cell('diamond = lgnb.lens(L.diamond(eng), {"log": [], "last": ""}, title="diamond")'),
                nbformat.v4.new_code_cell('fan = lgnb.lens(L.fan_out(eng, Send), {"items": [1, 2, 3], "done": []}, title="fan-out")'),
                nbformat.v4.new_code_cell('brk = lgnb.lens(L.diamond(eng, checkpointer=eng.InMemorySaver()), {"log": [], "last": ""}, '
                                          'title="breakpoint", interrupt_before=["d"])')]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _step(page: Any, lens: Any, index: int, want: str) -> None:
    lens.locator("[data-action=step]").click()
    lens.locator("[data-testid=lens-step]", has_text=want).wait_for(timeout=20_000)
    deadline = time.monotonic() + 10
    while lens.locator("[data-testid=status]").text_content() == "working…" and time.monotonic() < deadline:
        time.sleep(0.05)


def test_lens_steps_the_diamond(lab: Lab, page: Any, artifacts: Path) -> None:
    _notebook(lab.root / "lens.ipynb")
    open_notebook(page, lab, "lens.ipynb")
    run_all(page)
    wait_kernel_idle(page)
    diamond = page.locator(".lgnb-lens").nth(0)
    diamond.locator("g.node").first.wait_for(timeout=30_000)
    _step(page, diamond, 0, "super-step -1 (input)")
    assert page.evaluate(LIT, 0) == []
    _step(page, diamond, 0, "super-step 0")
    assert page.evaluate(LIT, 0) == ["__start__"]
    diamond.focus()
    page.keyboard.press("ArrowRight")  # the third step, from the keyboard
    diamond.locator("[data-testid=lens-step]", has_text="super-step 1").wait_for(timeout=20_000)
    page.wait_for_timeout(300)
    assert page.evaluate(LIT, 0) == ["a"]
    diamond.screenshot(path=str(artifacts / "lens-diamond-step-a.png"))
    _step(page, diamond, 0, "super-step 2")
    page.wait_for_timeout(300)
    assert page.evaluate(LIT, 0) == ["b", "c"]
    table = diamond.locator("[data-testid=lens-table]")
    log = table.locator(".lgnb-lens-update tr[data-channel=log]")
    assert "operator.add" in log.text_content()
    assert log.locator(".lgnb-lens-write").count() == 2  # b's and c's writes
    assert table.locator("tr.lgnb-lens-changed[data-key=log]").count() == 1
    assert table.locator("[data-phase=plan] tr[data-node=b]").count() == 1
    assert "branch:to:b @" in table.locator("[data-phase=plan] tr[data-node=b]").text_content()
    diamond.locator(".lgnb-lens-reducer").select_option("last value")
    diamond.locator("button", has_text="what if").click()
    diamond.locator(".lgnb-lens-whatif-out", has_text="only one value per step").wait_for(timeout=10_000)
    diamond.screenshot(path=str(artifacts / "lens-diamond-step-bc.png"))

    fan = page.locator(".lgnb-lens").nth(1)
    for want in ("super-step -1", "super-step 0", "super-step 1", "super-step 2"):
        _step(page, fan, 1, want)
    page.wait_for_timeout(300)
    assert page.evaluate(LIT, 1) == ["work"]
    assert fan.locator("text.lgnb-badge").text_content() == "×3"
    assert fan.locator("[data-phase=plan] tr[data-node=work]").count() == 3
    fan.screenshot(path=str(artifacts / "lens-fanout.png"))
    fan.locator("[data-action=run]").click()
    fan.locator("[data-testid=status]", has_text="done").wait_for(timeout=20_000)

    # a breakpoint asks nothing: no form, a notice, and Step / Run go on past it
    brk = page.locator(".lgnb-lens").nth(2)
    brk.locator("[data-action=run]").click()
    brk.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=20_000)
    brk.locator("[data-testid=notice]", has_text="breakpoint").wait_for(timeout=10_000)
    assert brk.locator("form, .lgnb-form").count() == 0
    assert brk.locator("[data-action=step]").is_enabled()
    brk.screenshot(path=str(artifacts / "lens-breakpoint.png"))
    brk.locator("[data-action=run]").click()
    brk.locator("[data-testid=status]", has_text="done").wait_for(timeout=20_000)
    assert not brk.locator("[data-testid=notice]").is_visible()
    assert not page.lgnb_errors, page.lgnb_errors

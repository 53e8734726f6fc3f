"""A view whose kernel speaks another protocol version than the page's bundle shows the
mismatch and how to fix it, in a real JupyterLab; a view of the same version beside it draws."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

from lgnb.widgets.protocol import PROTOCOL_VERSION

pytestmark = pytest.mark.browser

WIDGETS = Path(__file__).resolve().parents[1] / "widgets"

SETUP = f"""import sys
sys.path.insert(0, {str(WIDGETS)!r})
import lgnb
from make_protocol_fixtures import one_node"""

# the same graph twice; the second view claims a kernel of the next protocol version
CELLS = [SETUP,
         'ok = lgnb.run(one_node(lambda s: {"messages": [("ai", "same version")]}), {"messages": []}, title="same")',
         'other = lgnb.run(one_node(lambda s: {"messages": [("ai", "x")]}), {"messages": []}, display=False)\n'
         f'other.view._protocol = {PROTOCOL_VERSION + 1}\n'
         'display(other.view)']


def test_a_kernel_of_another_protocol_version_gets_the_mismatch_message(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "mismatch.ipynb")
    open_notebook(page, lab, "mismatch.ipynb")
    run_all(page)
    wait_kernel_idle(page)
    want = f"lgnb front end v{PROTOCOL_VERSION}, kernel v{PROTOCOL_VERSION + 1}: restart the kernel / rebuild"
    page.get_by_text(want, exact=True).wait_for(timeout=30_000)
    same = page.locator(".lgnb-run")
    same.locator("[data-testid=status]", has_text="done").wait_for(timeout=30_000)
    assert same.count() == 1  # only the view of the same version drew itself
    assert "same version" in same.text_content()
    page.screenshot(path=str(artifacts / "protocol_mismatch.png"), full_page=True)
    assert page.lgnb_errors == []

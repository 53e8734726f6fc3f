"""In a Jupyter kernel, the view modules and the packed bundle are loaded in the idle time
after the cell that imported lgnb, so the first `lgnb.run` does not pay for them; outside a
kernel `import lgnb` loads nothing of the views (tests/engine/test_import_cost.py)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]

CHECK = ("import sys\n"
         "from lgnb.widgets import _assets\n"
         "print(sorted(m for m in ('anywidget', 'lgnb.widgets.run_view') if m in sys.modules), _assets._cache is not None)")


def _outputs(cells: list[str]) -> list[str]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(ROOT)}}).execute()
    return ["".join(o.get("text", "") for o in c.outputs if o.output_type == "stream").strip() for c in nb.cells]


def test_the_views_are_ready_once_the_kernel_is_idle_after_import_lgnb() -> None:
    # the second cell yields to the kernel's event loop (idle time, as between a user's
    # cells: the warm-up starts then), and waits for it however loaded the machine is
    out = _outputs(["import lgnb",
                    "import asyncio\nawait asyncio.sleep(0.2)\nfrom lgnb._warm import WARMED\nprint(WARMED.wait(60))",
                    CHECK])
    assert out[1] == "True"
    out = out[:1] + out[2:]
    assert out[1] == "['anywidget', 'lgnb.widgets.run_view'] True"


def test_the_cell_that_imports_lgnb_does_not_load_the_views_itself() -> None:
    out = _outputs(["import lgnb\n" + CHECK])
    assert out[0] == "[] False"

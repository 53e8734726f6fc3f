"""The tour executed headless (nbclient, as `jupyter nbconvert --execute` does): each view's
output is the widget followed by its static snapshot, the saved snapshots are the final ones
(status done, the whole transcript, the answer on record) and small."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from test_snapshot import assert_inert

ROOT = Path(__file__).resolve().parents[2]
WIDGET = "application/vnd.jupyter.widget-view+json"
#: the issue's budget for the snapshots of the tour
BUDGET = 100_000


def test_tour_saves_every_view_with_its_final_small_snapshot(tmp_path: Path) -> None:
    nb = nbformat.read(ROOT / "notebooks" / "tour.ipynb", as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=120, store_widget_state=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    path = tmp_path / "tour.ipynb"
    nbformat.write(nb, path)
    snapshots: list[str] = []
    for cell in nb.cells:
        outs: list[Any] = [o for o in cell.get("outputs", []) if o.output_type == "display_data"]
        for i, out in enumerate(outs):
            if WIDGET in out.data:
                assert out.data["text/plain"] == "", out.data  # no "<RunView object at 0x…>" anywhere
                snapshot = outs[i + 1].data  # the widget's snapshot comes right after it
                assert list(snapshot) == ["text/html"], list(snapshot)
                snapshots.append(snapshot["text/html"])
    kinds = [s.split('data-lgnb-snapshot="', 1)[1].split('"', 1)[0] for s in snapshots]
    assert kinds == ["graph", "run", "run"], kinds
    for s in snapshots:
        assert_inert(s)
        assert "<svg" in s
    graph, run, review = snapshots
    assert 'data-testid="snap-status">done<' in run and "The tool says 2 + 3 = 5" in run and "What is 2 + 3?" in run
    assert 'data-testid="snap-status">done<' in review and "Reviewer said: approved" in review
    assert "answered by code at" in review and "Send this answer?" in review
    total = sum(len(s.encode()) for s in snapshots)
    assert total < BUDGET, total
    # what the notebook weighs without the snapshots: recorded for the report, not a bound here
    (tmp_path / "sizes.json").write_text(json.dumps({"notebook": path.stat().st_size, "snapshots": total}))

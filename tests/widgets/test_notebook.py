"""Views in a real kernel, executed headless with nbclient (no browser)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from lgnb.widgets._assets import bundle_built

HERE = Path(__file__).parent
ROOT = HERE.parents[1]

SETUP = f"""
import sys, time
sys.path.insert(0, {str(HERE)!r})
import lgnb.widgets as lw
from widget_graphs import agent_graph, _engine
from widget_fakes import FakeStreamingChat
lg = _engine("langgraph")
def model():
    return FakeStreamingChat(replies=[{{"content": "let me add", "tool_calls": [{{"name": "add", "args": {{"a": 1}}, "id": "c1"}}]}}, "done"])
"""


def execute(cells: list[str], tmp_path: Path) -> tuple[Any, Path]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in [SETUP, *cells]])
    NotebookClient(nb, kernel_name="python3", timeout=120, store_widget_state=True,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    path = tmp_path / "out.ipynb"
    nbformat.write(nb, path)
    return nb, path


def outputs(cell: Any, kind: str) -> list[Any]:
    return [o for o in cell.outputs if o.output_type == kind]


@pytest.mark.skipif(not bundle_built(), reason="measures the real bundle: build it (cd js && npm ci && npm run build)")
def test_three_views_saved_notebook_under_2mb(tmp_path: Path) -> None:
    nb, path = execute([
        "g = agent_graph(lg, model()); lw.show(g)",
        "r1 = lw.run(agent_graph(lg, model()), {'messages': [('user', 'a')]}); r1.wait(30)",
        "r2 = lw.run(agent_graph(lg, model()), {'messages': [('user', 'b')]}); r2.wait(30)",
    ], tmp_path)
    size = path.stat().st_size
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    sizes = sorted((len(json.dumps(m)), m["state"].get("_view_kind", "")) for m in state.values())
    assert size < 2_000_000, (size, sizes)
    carriers = [m for m in state.values() if len(json.dumps(m)) > 100_000]
    assert len(carriers) == 1, sizes  # the first view alone carries the bundle
    assert carriers[0]["state"]["_view_kind"] == "graph" and carriers[0]["state"]["_bundle"]
    views = [m for m in state.values() if m["state"].get("_view_kind") in ("graph", "run")]
    assert len(views) == 3 and all(len(m["state"]["_esm"]) < 4000 for m in views)
    assert len({m["state"]["_lgnb_bundle"] for m in views}) == 1  # one bundle hash: the page loads it once


def test_kernel_stays_responsive_while_a_sync_node_is_busy(tmp_path: Path) -> None:
    nb, _ = execute([
        "def slow(state):\n    time.sleep(2)\n    return {'messages': [('ai', 'slept')]}\n"
        "b = lg.StateGraph(lg.MessagesState); b.add_node('slow', slow); b.add_edge(lg.START, 'slow')\n"
        "t0 = time.monotonic(); r = lw.run(b.compile(), {'messages': []})",
        "print('next cell after', round(time.monotonic() - t0, 2), 's, run is', r.status)",
        "r.wait(30); print(r.status, r.view.status, r.view.snapshot['messages'][-1]['content'])",
    ], tmp_path)
    text = outputs(nb.cells[2], "stream")[0].text
    assert "run is running" in text and float(text.split()[3]) < 1.5
    assert outputs(nb.cells[3], "stream")[0].text.strip() == "done done slept"


def test_run_is_displayed_once(tmp_path: Path) -> None:
    nb, _ = execute(["lw.run(agent_graph(lg, model()), {'messages': [('user', 'hi')]})",
                     "r = lw.run(agent_graph(lg, model()), {'messages': [('user', 'hi')]}); r.wait(30); r.status"],
                    tmp_path)
    first, second = nb.cells[1], nb.cells[2]
    # once: one widget output, then its static snapshot (text/html only)
    for cell in (first, second):
        shown = outputs(cell, "display_data")
        assert len(shown) == 2, [list(o.data) for o in shown]
        assert "application/vnd.jupyter.widget-view+json" in shown[0].data and list(shown[1].data) == ["text/html"]
    assert not outputs(first, "execute_result")
    assert outputs(second, "execute_result")[0].data["text/plain"] == "'done'"


def test_errors_in_a_kernel_reraise_from_wait(tmp_path: Path) -> None:
    nb, _ = execute([
        "def boom(state):\n    raise RuntimeError('node failed')\n"
        "b = lg.StateGraph(lg.MessagesState); b.add_node('boom', boom); b.add_edge(lg.START, 'boom')\n"
        "r = lw.run(b.compile(), {'messages': []})\n"
        "try:\n    r.wait(30)\nexcept RuntimeError as e:\n    print('raised:', e, '|', r.view.error['node'])",
    ], tmp_path)
    assert outputs(nb.cells[1], "stream")[0].text.strip() == "raised: node failed | boom"


def test_tour_shows_a_form_then_its_answer_from_code(tmp_path: Path) -> None:
    """Run top to bottom, the tour pauses at a form in one cell and answers it from code in the
    next: the saved view holds no open form and the answer on record, with what was asked."""
    nb = nbformat.read(ROOT / "notebooks" / "tour.ipynb", as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=120, store_widget_state=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    asks = [c for c in nb.cells if c.cell_type == "code" and "review_run = lgnb.run" in c.source]
    answers = [c for c in nb.cells if c.cell_type == "code" and "review_run.resume(" in c.source]
    assert len(asks) == 1 and len(answers) == 1
    assert nb.cells.index(answers[0]) > nb.cells.index(asks[0]) + 1  # a text cell between: the form is explained
    paused = outputs(asks[0], "execute_result")[0].data["text/plain"]
    assert paused.startswith("('interrupted',") and "Send this answer?" in paused
    printed = "".join(o.text for o in outputs(answers[0], "stream"))
    assert "the form asks: Send this answer?" in printed and "done · Reviewer said: approved" in printed
    record = outputs(answers[0], "execute_result")[0].data["text/plain"]
    assert record == "[('code', 'Send this answer?', 'approved')]", record
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    runs = [m["state"] for m in state.values() if m["state"].get("_view_kind") == "run"]
    review = [s for s in runs if s.get("answers")]
    assert len(review) == 1 and review[0]["forms"] == [] and review[0]["status"] == "done"
    (answer,) = review[0]["answers"]
    assert answer["by"] == "code" and answer["asked"] == "Send this answer?" and answer["summary"] == "approved"
    assert answer["node"] == "review"

"""notebooks/human_review.ipynb, executed headless with nbclient: the seed's translation
review (one node that drafts and asks re-drafts on resume; two nodes draft once), each pause
shown as a form and answered from code, a static breakpoint passed after an `update_state`
edit, and a LangChain `create_agent` + `HumanInTheLoopMiddleware` agent whose proposed tool
call is edited before it runs."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]


def test_human_review_notebook_runs_headless() -> None:
    nb = nbformat.read(ROOT / "notebooks" / "human_review.ipynb", as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=120, store_widget_state=True,
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    text = ["".join(o.get("text", "") for o in c.outputs if o.output_type == "stream") for c in code]
    # one node: the form asked about draft #1, the resume drafted again, draft #2 was stored
    assert "interrupted | forms: 1 | the reviewer sees: draft #1" in text[1]
    assert "draft calls: 2" in text[2] and "the state stores:      draft #2" in text[2]
    # two nodes: one draft, the approved one is stored
    assert "interrupted | forms: 1 | the reviewer sees: draft #1" in text[3]
    assert "draft calls: 1" in text[4] and "the state stores:      draft #1 of the translation of 'A' | approved: True" in text[4]
    # a static breakpoint: paused before publish with no form; the state edited as
    # `translate` is what publish reads, and translate did not run again
    assert ("interrupted | forms: 0 | next: ('publish',) | draft: draft #1 of the translation of 'B'"
            in text[6])
    assert ("done | draft calls: 1 | published: a corrected translation of 'B' | approved: True"
            in text[7])
    # the agent: proposed bob, the edit sent it to alice, once
    assert "interrupted | forms: 1 | proposed: send_email {'to': 'bob@example.com'" in text[8]
    assert "done | outbox: [{'to': 'alice@example.com'" in text[9] and text[9].count("'to':") == 1
    # the deep agent: its write_file waits for a decision and nothing is written meanwhile;
    # approved, /report.md is in the state and the agent finishes
    assert "interrupted | forms: 1 | proposed: write_file /report.md" in text[10]
    assert "files while paused: []" in text[10]
    assert "done | files: ['/report.md'] | first line: # Review decisions" in text[11]
    assert "agent: The report is in /report.md." in text[11]
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    kinds = [m["state"].get("_view_kind") for m in state.values()]
    assert kinds.count("run") >= 5 and kinds.count("history") == 1
    runs = [m["state"] for m in state.values() if m["state"].get("_view_kind") == "run"]
    assert sorted(r["status"] for r in runs) == ["done"] * 5
    assert all(r["breakpoint"] == {} for r in runs)  # continued: no breakpoint left shown

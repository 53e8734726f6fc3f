"""Cancel and one run per thread in a real JupyterLab (issue 11, items 3 and 4): a cell
that starts a second run on a busy thread shows `ThreadBusyError`; the run view's cancel
button cancels the first run while its node is still busy; a new run on the thread then
finishes, the old node returns afterwards, and the thread's latest state is still the new
run's — nothing of the cancelled run was written after the click."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

CELLS = [
    "import operator, threading, time\nfrom typing import Annotated, TypedDict\nimport lgnb\n"
    "from lgnb.graph import StateGraph, START\nfrom lgnb.checkpoint.sqlite import SqliteSaver\n"
    "from lgnb.runtime import Runtime",
    "class S(TypedDict):\n    who: str\n    log: Annotated[list, operator.add]\n"
    "started, go, returned, saw = threading.Event(), threading.Event(), threading.Event(), []\n"
    "def work(s, runtime: Runtime):\n"
    "    if s['who'] == 'old':\n"
    "        started.set(); go.wait(60); saw.append(runtime.cancel_requested); returned.set()\n"
    "    return {'log': [f\"work:{s['who']}\"]}\n"
    "saver = SqliteSaver('threads.sqlite')\n"
    "graph = (StateGraph(S).add_node('work', work).add_node('after', lambda s: {'log': [f\"after:{s['who']}\"]})\n"
    "         .add_edge(START, 'work').add_edge('work', 'after').compile(checkpointer=saver))\n"
    "cfg = {'configurable': {'thread_id': 'cell'}}",
    "old = lgnb.run(graph, {'who': 'old', 'log': ['in:old']}, cfg, title='old run')",
    "started.wait(30)\nlgnb.run(graph, {'who': 'again', 'log': []}, cfg, title='same cell again')",
]

EXEC = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const out = [];
  const future = kernel.requestExecute({ code });
  future.onIOPub = (msg) => {
    if (msg.header.msg_type === 'stream') out.push(msg.content.text);
    if (msg.header.msg_type === 'error') out.push('ERROR ' + msg.content.ename + ': ' + msg.content.evalue);
  };
  await future.done;
  return out.join('');
}"""


def test_cancel_button_then_a_new_run_and_a_busy_thread_refused(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "cancel_thread.ipynb")
    open_notebook(page, lab, "cancel_thread.ipynb")
    run_all(page)
    view = page.locator(".lgnb-run").first
    view.locator("[data-testid=status]", has_text="running").wait_for(timeout=30_000)
    # the cell that starts a second run on the busy thread shows the refusal
    page.locator(".jp-OutputArea-output", has_text="ThreadBusyError").wait_for(timeout=30_000)
    refusal = page.locator(".jp-OutputArea-output", has_text="ThreadBusyError").first.text_content() or ""
    assert "Thread 'cell' is busy" in refusal and "multitask='enqueue'" in refusal, refusal
    assert page.locator(".lgnb-run").count() == 1  # no second view was made
    wait_kernel_idle(page)

    view.get_by_role("button", name="cancel").click()
    view.locator("[data-testid=status]", has_text="cancelled").wait_for(timeout=10_000)
    assert view.get_by_role("button", name="cancel").is_hidden()
    view.screenshot(path=str(artifacts / "run-cancelled.png"))

    out = page.evaluate(EXEC, (
        "new = lgnb.run(graph, {'who': 'new', 'log': ['in:new']}, cfg, display=False)\n"
        "print('new:', new.wait(30)['log'])\n"
        "go.set(); assert returned.wait(30); time.sleep(0.5)\n"
        "print('old:', old.status, saw)\n"
        "print('latest:', graph.get_state(cfg).values['log'])\n"
        "print('old work stored:', any('work:old' in (s.values.get('log') or []) for s in graph.get_state_history(cfg)))"
    ))
    assert "ERROR" not in out, out
    assert "new: ['in:old', 'in:new', 'work:new', 'after:new']" in out, out
    assert "old: cancelled [True]" in out, out
    assert "latest: ['in:old', 'in:new', 'work:new', 'after:new']" in out, out
    assert "old work stored: False" in out, out
    assert (view.locator("[data-testid=status]").text_content() or "").strip() == "cancelled"
    assert not page.lgnb_errors, page.lgnb_errors

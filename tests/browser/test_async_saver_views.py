"""The views over LangGraph's AsyncSqliteSaver made in a cell, in a real JupyterLab.

A user opens an ``aiosqlite`` connection with top-level ``await``, wraps it in
``langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver`` (a saver bound to the kernel's event
loop, which takes no synchronous call on it), compiles a LangGraph ``StateGraph`` with it
and runs it with ``await app.ainvoke``. The timeline then shows every checkpoint, a click
shows a checkpoint's values, a fork with an edited field from the page is saved; the
lens's Step button walks the graph to its end and ``lgnb.run`` in a cell finishes, with
sync nodes and with async ones.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

SETUP = (
    "import operator\nfrom typing import Annotated\nfrom typing_extensions import TypedDict\n"
    "import aiosqlite\nfrom langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver\n"
    "from langgraph.graph import StateGraph, START\nimport lgnb\n"
    "conn = await aiosqlite.connect(DB)\nsaver = AsyncSqliteSaver(conn)\n"
    "class Doc(TypedDict):\n    topic: str\n    count: int\n    notes: Annotated[list, operator.add]\n"
    "def plan(state):\n    return {'notes': [f\"plan: {state['topic']}\"], 'count': state['count'] + 1}\n"
    "def write(state):\n    return {'notes': [f\"write: {state['topic']}\"], 'count': state['count'] + 1}\n"
    "async def write_async(state):\n    return write(state)\n"
    "def build(write_node):\n    b = StateGraph(Doc)\n    b.add_node('plan', plan)\n    b.add_node('write', write_node)\n"
    "    b.add_edge(START, 'plan'); b.add_edge('plan', 'write')\n    return b.compile(checkpointer=saver)\n"
    "app, app_async = build(write), build(write_async)\n"
    "doc = {'topic': 'tea', 'count': 0, 'notes': []}\n"
    "def thread(tid):\n    return {'configurable': {'thread_id': tid}}\n"
    "async def history_len(graph, cfg):\n    return len([s async for s in graph.aget_state_history(cfg)])\n"
)

# a cell the test runs later in the same kernel (top-level await works there too); prints and errors returned
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

NODES = "() => document.querySelectorAll('.lgnb-history svg g.node').length"


def wait_for(page: Any, script: str, *, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = page.evaluate(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {script}")


def _open(lab: Lab, page: Any, name: str, cells: list[str]) -> None:
    """Write a notebook of `cells`, open it and Run All, as a user would."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / f"{name}.ipynb")
    open_notebook(page, lab, f"{name}.ipynb")
    run_all(page)
    wait_kernel_idle(page, timeout=90)


def _errors(page: Any) -> list[str]:
    """Tracebacks the cells printed (JupyterLab shows a cell's error as stderr output)."""
    return [t for t in page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            .all_text_contents() if "Error" in t]


def _step(lens: Any, *, timeout: float = 20.0) -> tuple[str, str]:
    """Click the lens's Step and wait until it shows a new super-step or is done; return
    (super-step shown, status)."""
    where, status = lens.locator("[data-testid=lens-step]"), lens.locator("[data-testid=status]")
    before = where.text_content()
    lens.locator("[data-action=step]").click()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now, state = where.text_content() or "", status.text_content() or ""
        # every click shows a new super-step: the status may land before the step's label
        if state in ("paused", "done", "interrupted", "error") and now != before:
            return now, state
        time.sleep(0.05)
    raise AssertionError(f"the lens did not advance past {before!r}: {status.text_content()!r}")


def test_timeline_over_an_async_sqlite_saver_shows_clicks_and_forks(lab: Lab, page: Any, artifacts: Path) -> None:
    """`await app.ainvoke(...)` on a thread, then `lgnb.history(app, cfg)` in a cell: the
    four checkpoints are drawn, a click shows one's values, and Fork from here with an
    edited topic writes a checkpoint a later cell reads with `await app.aget_state(cfg)`."""
    _open(lab, page, "async_history", [
        "DB = 'async_history.sqlite'\n" + SETUP,
        "cfg = thread('doc')\nawait app.ainvoke(doc, cfg)",
        "timeline = lgnb.history(app, cfg)\ntimeline",
    ])
    assert _errors(page) == []
    view = page.locator(".lgnb-history").first
    wait_for(page, f"() => ({NODES})() === 4")  # input, START's step, plan, write
    assert page.evaluate(EXEC, "print(await history_len(app, cfg))").strip() == "4"
    assert view.locator("svg g.edge").count() == 3
    labels = view.locator("svg g.node text").all_text_contents()
    assert "next: write" in labels and "end" in labels, labels
    wait_for(page, "() => !document.querySelector('.lgnb-history [data-testid=notice]')?.textContent.includes('reading')")

    # click the checkpoint before `write`: its values, read on the view's thread
    view.scroll_into_view_if_needed()
    view.locator("svg g.node", has_text="next: write").click()
    details = view.locator("[data-testid=checkpoint-details]")
    details.wait_for()
    assert "next: write" in (details.text_content() or "")
    values = details.locator(".lgnb-json").first.text_content() or ""
    assert '"topic": "tea"' in values and '"count": 1' in values and "plan: tea" in values, values
    assert "write: tea" not in values
    view.screenshot(path=str(artifacts / "async-saver-history-details.png"))

    # fork with an edited topic: a new checkpoint on a branch, selected
    form = details.locator("[data-testid=fork-form]")
    form.locator("summary").click()
    form.locator("[data-key=topic]").fill("coffee")
    details.get_by_role("button", name="Fork from here").click()
    wait_for(page, f"() => ({NODES})() === 5")
    assert "forked from step 1 with topic edited" in (view.locator("[data-testid=notice]").text_content() or "")
    assert view.locator("svg g.edge path[stroke-dasharray]").count() == 1
    view.screenshot(path=str(artifacts / "async-saver-history-forked.png"))

    # a later cell sees the fork through the same saver
    out = page.evaluate(EXEC, "s = await app.aget_state(cfg)\nprint(s.values, s.next)\nprint(await history_len(app, cfg))")
    assert out.splitlines() == ["{'topic': 'coffee', 'count': 1, 'notes': ['plan: tea']} ('write',)", "5"], out
    assert not view.locator("[data-testid=error]").text_content()
    assert not page.lgnb_errors, page.lgnb_errors


def test_lens_steps_and_runs_finish_over_an_async_sqlite_saver(lab: Lab, page: Any, artifacts: Path) -> None:
    """`lgnb.run(...)` in a cell, over a graph with sync nodes and one with an async node
    at the same time: both show done and `await run` gives the result. `lgnb.lens(app,
    doc, cfg)` in a cell, over either graph: Step in the page advances from the input
    (super-step -1) to the last step (2) and the lens is done, every step saved."""
    _open(lab, page, "async_lens_run", [
        "DB = 'async_lens_run.sqlite'\n" + SETUP,
        "lens = lgnb.lens(app, doc, thread('lens-sync'), title='lens sync nodes')",
        "lens_async = lgnb.lens(app_async, doc, thread('lens-async'), title='lens async nodes')",
        "r_sync = lgnb.run(app, doc, thread('run-sync'), title='run sync nodes')",
        "r_async = lgnb.run(app_async, doc, thread('run-async'), title='run async nodes')",
    ])
    assert _errors(page) == []

    # the two runs: done in the page
    for title in ("run sync nodes", "run async nodes"):
        run = page.locator(".lgnb-run", has=page.locator(".lgnb-title", has_text=title))
        run.locator("[data-testid=status]", has_text="done").wait_for(timeout=30_000)
        assert run.locator("[data-testid=error]").count() == 0
    out = page.evaluate(EXEC, "print(await r_sync)\nprint(await r_async)\n"
                              "print(await history_len(app, thread('run-sync')), await history_len(app, thread('run-async')))")
    final = "{'topic': 'tea', 'count': 2, 'notes': ['plan: tea', 'write: tea']}"
    assert out.splitlines() == [final, final, "4 4"], out

    # the lenses: Step from the page, one super-step at a time, to done
    for title in ("lens sync nodes", "lens async nodes"):
        lens = page.locator(".lgnb-lens", has=page.locator(".lgnb-title", has_text=title))
        lens.locator("g.node").first.wait_for(timeout=30_000)
        lens.scroll_into_view_if_needed()
        seen: list[tuple[str, str]] = []
        while not seen or seen[-1][1] != "done":
            assert len(seen) < 6 and (not seen or seen[-1][1] == "paused"), seen
            seen.append(_step(lens))
        assert seen[0][0] == "super-step -1 (input)" and seen[-1] == ("super-step 2", "done"), seen
        numbers = [int(where.split()[1]) for where, _ in seen]
        assert numbers == sorted(set(numbers)), seen  # every click advanced
        assert lens.locator("[data-testid=lens-error] .lgnb-error").count() == 0
        lens.screenshot(path=str(artifacts / f"async-saver-{title.replace(' ', '-')}.png"))
    for name, tid in (("lens", "lens-sync"), ("lens_async", "lens-async")):
        out = page.evaluate(EXEC, f"print({name}.status, {name}.result)\nprint((await app.aget_state(thread({tid!r}))).values)\n"
                                  f"print(await history_len(app, thread({tid!r})))")
        assert out.splitlines() == [f"done {final}", final, "4"], (name, out)
    assert not page.lgnb_errors, page.lgnb_errors

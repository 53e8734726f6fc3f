"""Approval forms in a real JupyterLab: an interrupt's payload (with HTML in it) is shown
as text; clicking Approve, and then typing an answer and clicking Send, resume the run from
the page while no cell is executing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

EVIL = '<img src=x onerror="window.__pwned=1">'

CELLS = [
    ("import lgnb\n"
     "from lgnb.graph import StateGraph, START, END, MessagesState\n"
     "from lgnb.checkpoint.memory import InMemorySaver\n"
     "from lgnb.types import interrupt"),
    (f"EVIL = {EVIL!r}\n"
     "def review(state):\n"
     "    answer = interrupt({'question': 'Send this? ' + EVIL, 'draft': 'Dear <b>team</b>', 'meta': {'n': 2, 'html': EVIL}, 'options': ['approve', 'reject']})\n"
     "    return {'messages': [('ai', f'review said: {answer}')]}\n"
     "def comment(state):\n"
     "    note = interrupt('Any comment?')\n"
     "    return {'messages': [('ai', f'comment: {note}')]}\n"
     "b = StateGraph(MessagesState)\n"
     "b.add_node('review', review)\nb.add_node('comment', comment)\n"
     "b.add_edge(START, 'review')\nb.add_edge('review', 'comment')\nb.add_edge('comment', END)\n"
     "graph = b.compile(checkpointer=InMemorySaver())"),
    "run = lgnb.run(graph, {'messages': [('user', 'draft please')]})",
    "unsaved = lgnb.run(b.compile(), {'messages': []}, title='no checkpointer')",
]

# the payloads' and typed answers' markup stayed text (the views' own <b> labels aside)
NO_MARKUP = """() => document.querySelectorAll('.lgnb-root img').length + Array.from(
  document.querySelectorAll('.lgnb-root i, .lgnb-root b')).filter((e) => ['team', 'it'].includes(e.textContent)).length"""

CLICK_AND_READ = """(form) => {
  form.querySelector('.lgnb-form-actions button').click();
  return Array.from(form.querySelectorAll('button, input')).map((c) => c.disabled);
}"""


def test_approve_and_send_resume_from_the_page(lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "forms.ipynb")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_notebook(page, lab, "forms.ipynb")
    run_all(page)
    run = page.locator(".lgnb-run").first
    run.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=30_000)
    wait_kernel_idle(page)  # no cell runs: the click goes through the comm handler alone

    form = run.locator(".lgnb-form")
    form.wait_for()
    assert form.count() == 1
    assert "in node review" in (form.locator(".lgnb-form-node").text_content() or "")
    assert form.locator("dt").all_text_contents() == ["question", "draft", "meta"]
    values = form.locator("dd").all_text_contents()
    assert values[0] == "Send this? " + EVIL and values[1] == "Dear <b>team</b>"
    assert '"html": "<img src=x onerror=\\"window.__pwned=1\\">"' in values[2]
    assert [b.strip() for b in form.locator(".lgnb-form-actions button").all_text_contents()] == ["approve", "reject"]
    assert page.evaluate(NO_MARKUP) == 0
    run.screenshot(path=str(artifacts / "form-interrupted.png"))

    # a click disables the form at once (until the kernel answers and the run pauses again)
    assert all(form.evaluate(CLICK_AND_READ))
    # the next interrupt (a plain string payload): answer in words
    form = run.locator(".lgnb-form", has_text="Any comment?")
    form.wait_for(timeout=30_000)
    assert "in node comment" in (form.locator(".lgnb-form-node").text_content() or "")
    assert run.locator(".lgnb-form").count() == 1  # the answered form is gone
    assert form.get_by_role("button").all_text_contents() == ["Send"]  # a question: a text box only
    form.locator(".lgnb-form-input").fill("ship <i>it</i>")
    form.get_by_role("button", name="Send").click()

    run.locator("[data-testid=status]", has_text="done").wait_for(timeout=30_000)
    run.locator(".lgnb-text", has_text="review said: approve").wait_for()
    run.locator(".lgnb-text", has_text="comment: ship <i>it</i>").wait_for()
    assert run.locator(".lgnb-form").count() == 0
    record = run.locator(".lgnb-answer").all_text_contents()  # answered forms stay on record
    assert len(record) == 2 and "answered by the page at" in record[0] and record[0].endswith(": approve")
    assert record[1].endswith(": Answer: ship <i>it</i>"), record
    assert (run.locator("[data-testid=form-error]").text_content() or "") == ""
    assert page.evaluate("() => window.__pwned === undefined")
    assert page.evaluate(NO_MARKUP) == 0
    assert not dialogs and not page.lgnb_errors, (dialogs, page.lgnb_errors)
    run.screenshot(path=str(artifacts / "form-done.png"))

    # a run that cannot be resumed (no checkpointer) shows the payload, says why, offers no buttons
    other = page.locator(".lgnb-run").nth(1)
    other.locator("[data-testid=status]", has_text="interrupted").wait_for()
    other.locator(".lgnb-form", has_text="Dear <b>team</b>").wait_for()
    assert other.locator(".lgnb-form button").count() == 0
    assert "no checkpointer" in (other.locator(".lgnb-form .lgnb-hint").text_content() or "")
    assert "checkpointer=InMemorySaver()" in (other.locator("[data-testid=notice]").text_content() or "")
    other.screenshot(path=str(artifacts / "form-no-checkpointer.png"))

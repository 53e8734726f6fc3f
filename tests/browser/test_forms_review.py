"""Review forms in a real JupyterLab: LangChain's `create_agent` + `HumanInTheLoopMiddleware`
running on lgnb (edit a tool argument on the page, the tool runs with it), a `response_schema`
form whose errors come back from the kernel onto the field, a stale form that sends nothing
and says why, and a click after the kernel went away."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

WIDGET_TESTS = Path(__file__).resolve().parents[1] / "widgets"


def write(lab: Lab, name: str, cells: list[str]) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / name)
    return name


def field(form: Any, part: int, name: str) -> Any:
    return form.locator(f"[data-part='{part}'] [data-field='{name}']")


HITL = [
    (f"import sys\nsys.path.insert(0, {str(WIDGET_TESTS)!r})\n"
     "import langgraph_on_lgnb  # `langgraph.*` engine imports resolve to lgnb: create_agent runs on lgnb\n"
     "import lgnb\n"
     "from langchain.agents import create_agent\n"
     "from langchain.agents.middleware import HumanInTheLoopMiddleware\n"
     "from langchain_core.tools import tool\n"
     "from lgnb.checkpoint.memory import InMemorySaver\n"
     "from widget_fakes import FakeStreamingChat"),
    ("sent = []\n"
     "@tool\n"
     "def send_email(to: str, subject: str, urgent: bool = False, copies: int = 1) -> str:\n"
     "    \"\"\"Send an email.\"\"\"\n"
     "    sent.append(f'{to}|{subject}|{urgent}|{copies}')\n"
     "    return f'sent to {to} (urgent={urgent}, copies={copies})'\n"
     "@tool\n"
     "def delete_file(path: str) -> str:\n"
     "    \"\"\"Delete a file.\"\"\"\n"
     "    sent.append(f'deleted {path}')\n"
     "    return 'deleted'\n"
     "model = FakeStreamingChat(replies=[\n"
     "    {'content': '', 'tool_calls': [{'name': 'send_email', 'args': {'to': 'bob', 'subject': '<b>hi</b>'}, 'id': 'c1'},\n"
     "                                   {'name': 'delete_file', 'args': {'path': '/'}, 'id': 'c2'}]},\n"
     "    'done'])\n"
     "hitl = HumanInTheLoopMiddleware(interrupt_on={'send_email': True,\n"
     "                                              'delete_file': {'allowed_decisions': ['approve', 'reject']}})\n"
     "agent = create_agent(model, [send_email, delete_file], middleware=[hitl], checkpointer=InMemorySaver())\n"
     "assert type(agent).__module__.startswith('lgnb'), type(agent)\n"
     "run = lgnb.run(agent, {'messages': [('user', 'mail bob')]})"),
]


def test_hitl_agent_edit_a_tool_argument_on_the_page(lab: Lab, page: Any, artifacts: Path) -> None:
    open_notebook(page, lab, write(lab, "hitl.ipynb", HITL))
    run_all(page)
    run = page.locator(".lgnb-run").first
    run.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=60_000)
    wait_kernel_idle(page)
    form = run.locator(".lgnb-form[data-kind=hitl]")
    form.wait_for()
    assert form.locator(".lgnb-form-part-title").all_text_contents() == ["tool call: send_email", "tool call: delete_file"]
    assert [b.strip() for b in form.locator("[data-part='0'] .lgnb-form-actions button").all_text_contents()][:3] == [
        "Approve", "Edit", "Reject"]  # (+ "Respond" where the middleware allows it)
    assert [b.strip() for b in form.locator("[data-part='1'] .lgnb-form-actions button").all_text_contents()] == [
        "Approve", "Reject"]
    assert "<b>hi</b>" in (form.locator("[data-part='0'] .lgnb-form-fields").text_content() or "")
    assert form.locator(":scope > .lgnb-form-fields").count() == 0  # the cards, no raw dump of the payload
    send_all = form.locator(".lgnb-form-send-all")
    assert send_all.is_disabled()  # two tool calls: both need a decision first
    run.screenshot(path=str(artifacts / "hitl-cards.png"))

    # Edit send_email: the arguments become typed fields (from the tool's schema)
    form.locator("[data-part='0'] .lgnb-form-actions button", has_text="Edit").click()
    to = field(form, 0, "to").locator(".lgnb-form-input")
    assert to.input_value() == "bob"
    assert field(form, 0, "urgent").locator("input[type=checkbox]").count() == 1
    to.fill("carol")
    field(form, 0, "urgent").locator("input").check()
    field(form, 0, "copies").locator(".lgnb-form-input").fill("two")  # not a whole number
    form.locator("[data-part='0'] .lgnb-form-confirm", has_text="Send edited call").click()
    # Reject delete_file with a message
    form.locator("[data-part='1'] .lgnb-form-actions button", has_text="Reject").click()
    field(form, 1, "__message").locator(".lgnb-form-input").fill("never <i>ever</i>")
    form.locator("[data-part='1'] .lgnb-form-confirm", has_text="Send rejection").click()
    assert send_all.is_enabled()
    send_all.click()
    # the kernel validates the edited arguments: the error lands on the field, nothing ran
    bad = field(form, 0, "copies")
    bad.locator(".lgnb-field-error", has_text="a whole number is needed").wait_for()
    assert "lgnb-field-bad" in (bad.get_attribute("class") or "")
    assert (form.locator("[data-testid=form-note]").text_content() or "") == "Not sent: copies: a whole number is needed"
    assert (run.locator("[data-testid=status]").text_content() or "") == "interrupted"
    run.screenshot(path=str(artifacts / "hitl-edit-error.png"))

    field(form, 0, "copies").locator(".lgnb-form-input").fill("3")
    form.locator("[data-part='0'] .lgnb-form-confirm", has_text="Send edited call").click()
    send_all.click()
    run.locator("[data-testid=status]", has_text="done").wait_for(timeout=60_000)
    # the tool ran with the edited arguments; the rejected call did not run
    run.locator(".lgnb-text", has_text="sent to carol (urgent=True, copies=3)").wait_for()
    assert run.locator(".lgnb-text", has_text="deleted").count() == 0
    assert run.locator(".lgnb-form").count() == 0
    (record,) = run.locator(".lgnb-answer").all_text_contents()
    assert "answered by the page at" in record
    assert record.endswith(': Edit send_email (edited args {"to": "carol", "urgent": true, "copies": 3}); '
                           "Reject delete_file: never <i>ever</i>"), record
    # the payload's and the typed text's markup stayed text (the views' own <b> labels aside)
    assert page.evaluate("() => Array.from(document.querySelectorAll('.lgnb-root i, .lgnb-root b'))"
                         ".filter((e) => ['hi', 'ever'].includes(e.textContent)).length") == 0
    assert not page.lgnb_errors, page.lgnb_errors
    run.screenshot(path=str(artifacts / "hitl-done.png"))


STALE = [
    ("import lgnb\n"
     "from lgnb.graph import StateGraph, START, END, MessagesState\n"
     "from lgnb.checkpoint.memory import InMemorySaver\n"
     "from lgnb.types import interrupt, Command"),
    ("def first(state):\n"
     "    return {'messages': [('ai', 'email: ' + interrupt({'question': 'send email to bob?', 'options': ['yes', 'no']}))]}\n"
     "def second(state):\n"
     "    return {'messages': [('ai', 'delete: ' + interrupt({'question': 'delete all files?', 'options': ['yes', 'no']}))]}\n"
     "g = StateGraph(MessagesState)\n"
     "g.add_node('first', first)\ng.add_node('second', second)\n"
     "g.add_edge(START, 'first')\ng.add_edge('first', 'second')\ng.add_edge('second', END)\n"
     "graph = g.compile(checkpointer=InMemorySaver())\n"
     "run = lgnb.run(graph, {'messages': []})\n"
     "run.wait(timeout=30)"),
    # code answers the first question on the same thread: the thread now asks "delete all files?"
    ("graph.invoke(Command(resume='yes'), run.config)\n"
     "graph.get_state(run.config).interrupts[0].value['question']"),
    ("schema = {'type': 'object', 'required': ['title', 'count'], 'properties': {\n"
     "    'title': {'type': 'string', 'minLength': 3, 'description': 'a short title'},\n"
     "    'count': {'type': 'integer', 'minimum': 1}, 'urgent': {'type': 'boolean'},\n"
     "    'color': {'enum': ['red', 'green']}, 'tags': {'type': 'array', 'items': {'type': 'string'}},\n"
     "    'address': {'type': 'object', 'properties': {'city': {'type': 'string'}}}}}\n"
     "def ticket(state):\n"
     "    return {'messages': [('ai', repr(interrupt('Fill the ticket', response_schema=schema)))]}\n"
     "t = StateGraph(MessagesState)\nt.add_node('ticket', ticket)\nt.add_edge(START, 'ticket')\n"
     "ticket_run = lgnb.run(t.compile(checkpointer=InMemorySaver()), {'messages': []})"),
]


def test_stale_form_sends_nothing_and_says_why(lab: Lab, page: Any, artifacts: Path) -> None:
    open_notebook(page, lab, write(lab, "stale.ipynb", STALE))
    run_all(page)
    wait_kernel_idle(page)
    run = page.locator(".lgnb-run").first
    run.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=30_000)
    form = run.locator(".lgnb-form", has_text="send email to bob?")
    form.wait_for()
    page.wait_for_timeout(500)
    form.get_by_role("button", name="yes").click()  # approves nothing: the question is no longer pending
    note = form.locator("[data-testid=form-note]")
    note.filter(has_text="no longer pending").wait_for(timeout=15_000)
    text = note.text_content() or ""
    assert "nothing was sent" in text, text
    assert all(b.is_disabled() for b in form.get_by_role("button").all())  # the stale form stays off
    assert run.locator(".lgnb-answer").count() == 0
    assert (run.locator("[data-testid=status]").text_content() or "") == "interrupted"
    run.screenshot(path=str(artifacts / "form-stale.png"))

    # the schema form: typed fields, errors from the kernel's jsonschema validation on the fields
    ticket = page.locator(".lgnb-run").nth(1)
    ticket.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=30_000)
    sform = ticket.locator(".lgnb-form[data-kind=schema]")
    sform.wait_for()
    labels = [t.strip() for t in sform.locator(".lgnb-field-label").all_text_contents()]
    assert labels[:5] == ["title *", "count *", "urgent", "color", "tags (one per line)"], labels
    field(sform, 0, "title").locator(".lgnb-form-input").fill("ab")
    field(sform, 0, "count").locator(".lgnb-form-input").fill("0")
    sform.get_by_role("button", name="Send").click()
    field(sform, 0, "count").locator(".lgnb-field-error").filter(has_text="1").wait_for()
    assert (field(sform, 0, "title").locator(".lgnb-field-error").text_content() or "") != ""
    ticket.screenshot(path=str(artifacts / "form-schema-errors.png"))
    field(sform, 0, "title").locator(".lgnb-form-input").fill("disk")
    field(sform, 0, "count").locator(".lgnb-form-input").fill("2")
    field(sform, 0, "color").locator("select").select_option(label="green")
    field(sform, 0, "tags").locator("textarea").fill("a\nb")
    sform.get_by_role("button", name="Send").click()
    ticket.locator("[data-testid=status]", has_text="done").wait_for(timeout=30_000)
    ticket.locator(".lgnb-text", has_text="'tags': ['a', 'b']").wait_for()
    assert "'color': 'green'" in (ticket.locator(".lgnb-text").last.text_content() or "")
    assert not page.lgnb_errors, page.lgnb_errors


RESTART = [
    ("import lgnb\n"
     "from lgnb.graph import StateGraph, START, MessagesState\n"
     "from lgnb.checkpoint.memory import InMemorySaver\n"
     "from lgnb.types import interrupt\n"
     "def ask(state):\n"
     "    return {'messages': [('ai', interrupt({'question': 'go on?', 'options': ['go', 'stop']}))]}\n"
     "g = StateGraph(MessagesState)\ng.add_node('ask', ask)\ng.add_edge(START, 'ask')\n"
     "run = lgnb.run(g.compile(checkpointer=InMemorySaver()), {'messages': []})"),
]

SHUTDOWN = """async () => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  await kernel.shutdown();
  return kernel.isDisposed || kernel.status;
}"""


def test_click_after_the_kernel_went_away_says_rerun(lab: Lab, page: Any, artifacts: Path) -> None:
    open_notebook(page, lab, write(lab, "restart.ipynb", RESTART))
    run_all(page)
    run = page.locator(".lgnb-run").first
    run.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=30_000)
    wait_kernel_idle(page)
    form = run.locator(".lgnb-form", has_text="go on?")
    form.wait_for()
    page.evaluate(SHUTDOWN)
    deadline = time.monotonic() + 20
    message = "kernel restarted: re-run the cell"
    while time.monotonic() < deadline:
        buttons = form.get_by_role("button")
        if buttons.count() and not buttons.first.is_disabled():
            buttons.first.click()
        if message in (run.locator("[data-testid=interrupts]").text_content() or ""):
            break
        page.wait_for_timeout(300)
    assert message in (form.locator("[data-testid=form-note]").text_content() or ""), \
        run.locator("[data-testid=interrupts]").text_content()
    assert all(b.is_disabled() for b in form.get_by_role("button").all())
    run.screenshot(path=str(artifacts / "form-kernel-gone.png"))


LONG = [
    ("import lgnb\n"
     "from lgnb.graph import StateGraph, START, MessagesState\n"
     "from lgnb.checkpoint.memory import InMemorySaver\n"
     "from lgnb.types import interrupt\n"
     "from lgnb.widgets._forms import EDIT_MAX"),
    ("BODY = 'Dear customer,\\r\\n' + 'lorem ipsum ' * 400 + '\\r\\nP.S. past the 4,000th character'\n"
     "LOG = 'x' * (EDIT_MAX + 10) + ' the end'\n"
     "def review(state):\n"
     "    response = interrupt({'action_request': {'action': 'send_email',\n"
     "                                             'args': {'to': 'bob', 'body': BODY, 'log': LOG}},\n"
     "                          'config': {'allow_accept': True, 'allow_edit': True, 'allow_respond': False,\n"
     "                                     'allow_ignore': False}, 'description': 'review'})\n"
     "    a = response['args']['args']\n"
     "    return {'messages': [('ai', f\"CHECK to={a['to']} body={a['body'] == BODY} log={a['log'] == LOG}\")]}\n"
     "g = StateGraph(MessagesState)\ng.add_node('review', review)\ng.add_edge(START, 'review')\n"
     "run = lgnb.run(g.compile(checkpointer=InMemorySaver()), {'messages': []})"),
]


def test_an_edit_on_the_page_sends_long_arguments_back_whole(lab: Lab, page: Any, artifacts: Path) -> None:
    """A 4,900-character body is in its text box whole; a value past `EDIT_MAX` is shown cut,
    read-only, with a hint saying why. Editing `to` on the page and sending: the node gets
    the new `to` and both long arguments exactly as the call had them."""
    open_notebook(page, lab, write(lab, "long.ipynb", LONG))
    run_all(page)
    run = page.locator(".lgnb-run").first
    run.locator("[data-testid=status]", has_text="interrupted").wait_for(timeout=60_000)
    wait_kernel_idle(page)
    form = run.locator(".lgnb-form[data-kind=inbox]")
    form.locator("[data-part='0'] .lgnb-form-actions button", has_text="Edit").click()
    body = field(form, 0, "body").locator(".lgnb-form-input")
    assert body.input_value().endswith("P.S. past the 4,000th character") and not body.evaluate("e => e.readOnly")
    log = field(form, 0, "log")
    assert log.locator(".lgnb-form-input").evaluate("e => e.readOnly")
    assert "too long to edit here" in (log.locator("[data-testid=readonly-hint]").text_content() or "")
    field(form, 0, "to").locator(".lgnb-form-input").fill("carol")
    form.locator("[data-part='0'] .lgnb-form-confirm", has_text="Send edited action").click()
    run.locator("[data-testid=status]", has_text="done").wait_for(timeout=60_000)
    run.locator(".lgnb-text", has_text="CHECK to=carol body=True log=True").wait_for()
    assert not page.lgnb_errors, page.lgnb_errors
    run.screenshot(path=str(artifacts / "long-edit.png"))

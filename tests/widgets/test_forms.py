"""Approval forms: pending interrupts become forms in the synced view state, and a form's
"resume" message (what a button click sends) resumes the run from the comm handler."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from lgnb.widgets import run
from lgnb.widgets._forms import form_for

EVIL = '<img src=x onerror="window.__pwned=1">'


def one_node(eng: Any, node: Any, name: str = "review") -> Any:
    g = eng.StateGraph(eng.MessagesState)
    g.add_node(name, node)
    g.add_edge(eng.START, name)
    g.add_edge(name, eng.END)
    return g.compile(checkpointer=eng.InMemorySaver())


def click(r: Any, interrupt_id: str, value: Any, request: int = 1) -> dict[str, Any]:
    """Send what the browser sends on a click; return the kernel's answer."""
    replies: list[dict[str, Any]] = []
    send = r.view.send
    r.view.send = lambda msg, buffers=None: replies.append(msg) if msg.get("kind") == "resume-result" else send(msg, buffers)
    try:
        r.view._dispatch(r.view, {"kind": "resume", "id": request, "interrupt_id": interrupt_id, "value": value}, [])
    finally:
        del r.view.send
    assert len(replies) == 1, replies
    assert replies[0]["id"] == request
    return replies[0]


def test_pending_interrupt_is_a_form_and_a_click_resumes(eng: Any) -> None:
    def review(state: Any) -> Any:
        answer = eng.interrupt({"question": EVIL, "draft": "hello", "meta": {"n": 1, "tags": ["a"]}})
        return {"messages": [("ai", f"resumed with: {answer}")]}

    r = run(one_node(eng, review), {"messages": []}, display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted"
    (form,) = r.view.forms
    iid = r.interrupts[0]["id"]
    assert form["id"] == iid and form["node"] == "review" and r.interrupts[0]["node"] == "review"
    assert form["fields"] == [{"key": "question", "text": EVIL}, {"key": "draft", "text": "hello"},
                              {"key": "meta", "text": '{\n  "n": 1,\n  "tags": [\n    "a"\n  ]\n}'}]
    assert form["actions"] == [{"label": "Approve", "value": "approve"}, {"label": "Reject", "value": "reject"}]
    assert form["free_text"] is True and form["resumable"] is True and r.view.form_error == ""

    assert click(r, iid, "approve") == {"kind": "resume-result", "id": 1, "ok": True}
    result = r.wait(timeout=30)
    assert r.status == "done" and result["messages"][-1].content == "resumed with: approve"
    assert r.view.status == "done" and r.view.forms == [] and r.view.interrupts == []
    # the form is gone: a late click is refused with a clear message in the view
    reply = click(r, iid, "approve", request=2)
    assert reply["ok"] is False and "already ended" in reply["error"]
    assert r.view.form_error == reply["error"]


def test_two_parallel_interrupts_resume_by_id(eng: Any) -> None:
    def ask(name: str) -> Any:
        def node(state: Any) -> Any:
            return {"messages": [("ai", f"{name}: {eng.interrupt({'question': f'{name}?'})}")]}
        return node

    g = eng.StateGraph(eng.MessagesState)
    g.add_node("a", ask("a"))
    g.add_node("b", ask("b"))
    g.add_edge(eng.START, "a")
    g.add_edge(eng.START, "b")
    r = run(g.compile(checkpointer=eng.InMemorySaver()), {"messages": []}, display=False)
    r.wait(timeout=30)
    forms = {f["node"]: f for f in r.view.forms}
    assert set(forms) == {"a", "b"} and all(f["id"] for f in forms.values())
    calls: list[Any] = []
    resume = r.resume
    r.resume = lambda value=None: (calls.append(value), resume(value))[1]  # type: ignore[method-assign]
    assert click(r, forms["b"]["id"], "yes b")["ok"]
    r.wait(timeout=30)
    assert calls == [{forms["b"]["id"]: "yes b"}]  # several pending: the id map
    assert r.status == "interrupted" and [f["node"] for f in r.view.forms] == ["a"]
    assert click(r, forms["a"]["id"], "yes a", request=2)["ok"]
    result = r.wait(timeout=30)
    assert calls[1] == "yes a"  # one pending: the plain value
    assert r.status == "done"
    assert sorted(m.content for m in result["messages"]) == ["a: yes a", "b: yes b"]


def test_resume_while_running_is_shown(lg: Any) -> None:
    gate = threading.Event()

    def slow(state: Any) -> Any:
        gate.wait(10)
        return {"messages": [("ai", "done")]}

    r = run(one_node(lg, slow), {"messages": []}, display=False)
    reply = click(r, "nope", "approve")
    assert reply["ok"] is False and "still running" in reply["error"]
    assert r.view.form_error == reply["error"]
    gate.set()
    r.wait(timeout=30)
    assert r.status == "done"


def test_options_and_schema_become_buttons() -> None:
    form = form_for({"id": "i1", "value": {"question": "ship?", "options": ["ship", "hold", {"label": "Later", "value": 3}]}})
    assert form["actions"] == [{"label": "ship", "value": "ship"}, {"label": "hold", "value": "hold"},
                               {"label": "Later", "value": 3}]
    assert form["fields"] == [{"key": "question", "text": "ship?"}] and form["free_text"]
    form = form_for({"id": "i2", "value": {"choices": [1, 2]}})
    assert [a["value"] for a in form["actions"]] == [1, 2] and [a["label"] for a in form["actions"]] == ["1", "2"]
    form = form_for({"id": "i3", "value": "Proceed?", "response_schema": {"type": "string", "enum": ["go", "stop"]}})
    assert form["text"] == "Proceed?" and form["fields"] == []
    assert [a["value"] for a in form["actions"]] == ["go", "stop"] and form["free_text"] is False
    form = form_for({"id": "i4", "value": ["x"], "response_schema": {"type": "boolean"}})
    assert form["actions"] == [{"label": "Yes", "value": True}, {"label": "No", "value": False}]
    assert form["text"] == '[\n  "x"\n]'


def test_response_schema_reaches_the_form(eng: Any) -> None:
    try:
        def review(state: Any) -> Any:
            answer = eng.interrupt("Proceed?", response_schema={"type": "string", "enum": ["go", "stop"]})
            return {"messages": [("ai", f"got {answer}")]}
        r = run(one_node(eng, review), {"messages": []}, display=False)
        r.wait(timeout=30)
    except TypeError as exc:  # an engine without response_schema
        pytest.skip(f"{eng.name}: interrupt() has no response_schema ({exc})")
    (form,) = r.view.forms
    assert [a["label"] for a in form["actions"]] == ["go", "stop"] and form["text"] == "Proceed?"
    assert click(r, form["id"], "stop")["ok"]
    assert r.wait(timeout=30)["messages"][-1].content == "got stop"


def test_without_checkpointer_the_form_has_no_way_to_resume(eng: Any) -> None:
    def review(state: Any) -> Any:
        return {"messages": [("ai", str(eng.interrupt({"q": "ok?"})))]}

    g = eng.StateGraph(eng.MessagesState)
    g.add_node("review", review)
    g.add_edge(eng.START, "review")
    r = run(g.compile(), {"messages": []}, display=False)
    r.wait(timeout=30)
    (form,) = r.view.forms
    assert form["resumable"] is False and form["fields"] == [{"key": "q", "text": "ok?"}]
    reply = click(r, form["id"], "approve")  # a stale page may still send: refused, with the fix
    assert reply["ok"] is False and "no checkpointer" in reply["error"] and r.status == "interrupted"

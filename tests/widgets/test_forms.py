"""Approval forms: pending interrupts become forms in the synced view state, and a form's
"resume" message (what a button click sends) resumes the run from the comm handler."""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

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


def answer(r: Any, interrupt_id: str, picks: list[dict[str, Any]], request: int = 1, hold: bool = False,
           kind: str = "answer") -> dict[str, Any]:
    """Send what a form sends when a choice is made; return the kernel's answer."""
    replies: list[dict[str, Any]] = []
    send = r.view.send
    r.view.send = lambda msg, buffers=None: replies.append(msg) if msg.get("kind") == "resume-result" else send(msg, buffers)
    try:
        r.view._dispatch(r.view, {"kind": kind, "id": request, "interrupt_id": interrupt_id, "picks": picks,
                                  "hold": hold}, [])
    finally:
        del r.view.send
    assert len(replies) == 1, replies
    return replies[0]


def test_pending_interrupt_is_a_form_and_a_click_resumes(eng: Any) -> None:
    def review(state: Any) -> Any:
        answer = eng.interrupt({"draft": EVIL, "meta": {"n": 1, "tags": ["a"]}})
        return {"messages": [("ai", f"resumed with: {answer}")]}

    r = run(one_node(eng, review), {"messages": []}, display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted"
    (form,) = r.view.forms
    iid = r.interrupts[0]["id"]
    assert form["id"] == iid and form["node"] == "review" and form["kind"] == "value"
    assert form["fields"] == [{"key": "draft", "text": EVIL},
                              {"key": "meta", "text": '{\n  "n": 1,\n  "tags": [\n    "a"\n  ]\n}'}]
    labels = [c["label"] for c in form["parts"][0]["choices"]]
    assert labels == ["Approve", "Reject", "Answer in words…"] and form["resumable"] is True

    calls: list[Any] = []
    resume = r._resume
    r._resume = lambda value, **kw: (calls.append(value), resume(value, **kw))[1]  # type: ignore[method-assign]
    assert answer(r, iid, [{"part": 0, "choice": "approve", "inputs": {}}])["ok"]
    assert calls == [{iid: "approve"}]  # keyed by interrupt id, even with one pending
    result = r.wait(timeout=30)
    assert r.status == "done" and result["messages"][-1].content == "resumed with: approve"
    assert r.view.forms == [] and [(a["by"], a["summary"]) for a in r.view.answers] == [("page", "Approve")]
    assert r.answers[0]["value"] == "approve" and r.answers[0]["interrupt_id"] == iid
    # the form is gone: a late click is refused, the same request id is not handled twice
    reply = answer(r, iid, [{"part": 0, "choice": "approve", "inputs": {}}], request=2)
    assert reply["ok"] is False and "already ended" in reply["error"]
    reply = answer(r, iid, [{"part": 0, "choice": "approve", "inputs": {}}], request=2)
    assert reply["ok"] is False and "handled already" in reply["error"]


def test_double_click_sends_once(eng: Any) -> None:
    def review(state: Any) -> Any:
        return {"messages": [("ai", f"got {eng.interrupt('Ship it? (yes/no)')}")]}

    r = run(one_node(eng, review), {"messages": []}, display=False)
    r.wait(timeout=30)
    (form,) = r.view.forms
    assert form["kind"] == "yes_no" and [c["label"] for c in form["parts"][0]["choices"]] == ["Yes", "No"]
    first = answer(r, form["id"], [{"part": 0, "choice": "yes", "inputs": {}}], request=1)
    second = answer(r, form["id"], [{"part": 0, "choice": "no", "inputs": {}}], request=2)
    assert first["ok"] and second["ok"] is False
    assert r.wait(timeout=30)["messages"][-1].content == "got yes" and len(r.answers) == 1


def test_none_and_any_json_are_answers(eng: Any) -> None:
    def review(state: Any) -> Any:
        got = eng.interrupt({"question": "pick", "options": [None, {"label": "obj", "value": {"a": [1, None]}}]})
        return {"messages": [("ai", repr(got))]}

    for choice, expected in (("0", "None"), ("1", "{'a': [1, None]}")):
        r = run(one_node(eng, review), {"messages": []}, display=False)
        r.wait(timeout=30)
        (form,) = r.view.forms
        assert form["kind"] == "options" and [c["label"] for c in form["parts"][0]["choices"]] == ["null", "obj"]
        assert answer(r, form["id"], [{"part": 0, "choice": choice, "inputs": {}}])["ok"]
        assert r.wait(timeout=30)["messages"][-1].content == expected and r.status == "done"
    r = run(one_node(eng, review), {"messages": []}, display=False)
    r.wait(timeout=30)
    r.resume(None)  # from code: None is an answer too
    assert r.wait(timeout=30)["messages"][-1].content == "None"
    assert [(a["by"], a["summary"]) for a in r.view.answers] == [("code", "null")]


def test_stale_form_sends_nothing(eng: Any) -> None:
    """Run A asks "send email?"; code answers it on the thread and the thread now asks
    "delete all files?": a click on A's old form must not approve the delete."""
    def first(state: Any) -> Any:
        return {"messages": [("ai", f"email: {eng.interrupt({'question': 'send email to bob?', 'options': ['yes', 'no']})}")]}

    def second(state: Any) -> Any:
        return {"messages": [("ai", f"delete: {eng.interrupt({'question': 'delete all files?', 'options': ['yes', 'no']})}")]}

    g = eng.StateGraph(eng.MessagesState)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_edge(eng.START, "first")
    g.add_edge("first", "second")
    graph = g.compile(checkpointer=eng.InMemorySaver())
    r = run(graph, {"messages": []}, display=False)
    r.wait(timeout=30)
    (form,) = r.view.forms
    graph.invoke(eng.Command(resume="yes"), r.config)  # code answers on the same thread
    assert graph.get_state(r.config).interrupts[0].value["question"] == "delete all files?"
    reply = answer(r, form["id"], [{"part": 0, "choice": "0", "inputs": {}}])
    assert reply["ok"] is False and reply["stale"] is True and "no longer pending" in reply["error"]
    assert "nothing was sent" in reply["error"]
    assert graph.get_state(r.config).interrupts[0].value["question"] == "delete all files?"  # not approved
    assert r.answers == []


def test_a_second_click_refused_while_the_run_resumes_leaves_no_error_once_it_is_done(eng: Any) -> None:
    """The same answer sent twice with two request ids (the output open in two views, or a
    click and a cell): the second is refused while the run runs, and its red error must not
    outlive the run it was about."""
    import time

    def review(state: Any) -> Any:
        name = eng.interrupt("Name?")
        time.sleep(0.3)
        return {"messages": [("ai", f"hello {name}")]}

    r = run(one_node(eng, review), {"messages": []}, display=False)
    r.wait(timeout=30)
    (form,) = r.view.forms
    picks = [{"part": 0, "choice": "send", "inputs": {"answer": "Ada"}}]
    assert answer(r, form["id"], picks, request=1)["ok"] is True
    second = answer(r, form["id"], picks, request=2)
    assert second["ok"] is False and "still running" in second["error"]
    r.wait(timeout=30)
    assert r.status == "done" and r.view.form_error == ""
    assert len(r.answers) == 1  # the refused click is not on record


class Logged(TypedDict, total=False):
    log: Annotated[list, operator.add]


def test_a_parallel_node_kept_by_the_resume_is_not_counted_as_run_again(eng: Any) -> None:
    """`fetch` and `ask` run in one step, `ask` pauses. On the answer the engine keeps
    `fetch`'s writes (its task is announced, its function does not run): the view's
    runs count says fetch ran once and ask twice, as the functions were called."""
    calls: list[str] = []

    def fetch(state: Any) -> Any:
        calls.append("fetch")
        return {"log": ["fetched"]}

    def ask(state: Any) -> Any:
        calls.append("ask")
        return {"log": [eng.interrupt("Go?")]}

    g = eng.StateGraph(Logged)
    g.add_node("fetch", fetch)
    g.add_node("ask", ask)
    g.add_edge(eng.START, "fetch")
    g.add_edge(eng.START, "ask")
    r = run(g.compile(checkpointer=eng.InMemorySaver()), {"log": []}, display=False)
    r.wait(timeout=30)
    (form,) = r.view.forms
    assert answer(r, form["id"], [{"part": 0, "choice": "send", "inputs": {"answer": "yes"}}])["ok"] is True
    r.wait(timeout=30)
    assert r.status == "done" and sorted(calls) == ["ask", "ask", "fetch"]
    assert r.view.runs == {"ask": 2, "fetch": 1} and r.view.reruns == ["ask"]


def test_schema_form_validates_in_the_kernel(eng: Any) -> None:
    schema = {"type": "object", "required": ["title", "count"], "properties": {
        "title": {"type": "string", "minLength": 3}, "count": {"type": "integer", "minimum": 1},
        "ratio": {"type": "number"}, "urgent": {"type": "boolean"},
        "color": {"enum": ["red", "green"]}, "tags": {"type": "array", "items": {"type": "string"}},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}}}}

    def review(state: Any) -> Any:
        return {"messages": [("ai", repr(eng.interrupt("Fill the ticket", response_schema=schema)))]}

    try:
        r = run(one_node(eng, review), {"messages": []}, display=False)
        r.wait(timeout=30)
    except TypeError as exc:
        pytest.skip(f"{eng.name}: interrupt() has no response_schema ({exc})")
    (form,) = r.view.forms
    assert form["kind"] == "schema" and form["text"] == "Fill the ticket"
    inputs = {i["name"]: i for i in form["parts"][0]["inputs"]}
    assert {n: i["type"] for n, i in inputs.items()} == {
        "title": "string", "count": "integer", "ratio": "number", "urgent": "boolean", "color": "enum",
        "tags": "lines", "address.city": "string"}
    assert inputs["address.city"]["group"] == "address"
    bad = answer(r, form["id"], [{"part": 0, "choice": "send", "inputs": {"title": "ab", "count": "x"}}])
    assert bad["ok"] is False and bad["errors"] == {"0.count": "a whole number is needed"}
    bad = answer(r, form["id"], [{"part": 0, "choice": "send", "inputs": {"title": "ab", "count": "0"}}], request=2)
    assert set(bad["errors"]) == {"0.title", "0.count"} and r.status == "interrupted"
    ok = answer(r, form["id"], [{"part": 0, "choice": "send", "inputs": {
        "title": "disk", "count": "2", "ratio": "0.5", "urgent": True, "color": "1", "tags": "a\nb\n",
        "address.city": "Oslo"}}], request=3)
    assert ok["ok"], ok
    got = r.wait(timeout=30)["messages"][-1].content
    assert got == repr({"title": "disk", "count": 2, "ratio": 0.5, "urgent": True, "color": "green",
                        "tags": ["a", "b"], "address": {"city": "Oslo"}})


def test_pydantic_schema_validates_with_pydantic(lg: Any) -> None:
    from pydantic import BaseModel, Field

    class Ticket(BaseModel):
        title: str = Field(min_length=3)
        count: int = 1

    def review(state: Any) -> Any:
        return {"messages": [("ai", repr(lg.interrupt("ticket?", response_schema=Ticket)))]}

    r = run(one_node(lg, review), {"messages": []}, display=False)
    r.wait(timeout=30)
    (form,) = r.view.forms
    assert form["kind"] == "schema"
    bad = answer(r, form["id"], [{"part": 0, "choice": "send", "inputs": {"title": "ab", "count": "2"}}])
    assert bad["ok"] is False and "0.title" in bad["errors"]
    assert answer(r, form["id"], [{"part": 0, "choice": "send", "inputs": {"title": "abc", "count": "2"}}], request=2)["ok"]
    got = r.wait(timeout=30)["messages"][-1].content  # LangGraph hands the node the model itself
    assert got in (repr({"title": "abc", "count": 2}), "Ticket(title='abc', count=2)")


def test_question_is_a_text_box_only() -> None:
    form = form_for({"id": "q", "value": "Any comment?"})
    (part,) = form["parts"]
    assert form["kind"] == "question" and [c["label"] for c in part["choices"]] == ["Send"]
    assert [i["name"] for i in part["inputs"]] == ["answer"] and part["inputs_open"]
    form = form_for({"id": "q", "value": {"question": "Why?", "context": "x"}})
    assert form["kind"] == "question" and form["fields"] == [{"key": "question", "text": "Why?"}, {"key": "context", "text": "x"}]


def test_registry_extends_forms_per_kind() -> None:
    from lgnb.widgets import _forms

    def build(payload: Any, interrupt: Any, context: Any) -> dict[str, Any]:
        return {"title": "Pick a color", "parts": [{"title": "", "description": "", "shown": [], "inputs": [],
                                                    "inputs_open": False, "choices": [
                                                        {"key": "r", "label": "Red", "inputs": [], "confirm": "", "value": "#f00"}]}]}

    _forms.register_form("color", build)
    try:
        interrupt = {"id": "c", "value": {"kind": "color"}}
        form = form_for(interrupt)
        assert form["kind"] == "color" and form["title"] == "Pick a color"
        assert _forms.answer_for(interrupt, [{"part": 0, "choice": "r", "inputs": {}}]) == ("#f00", "Red")
    finally:
        _forms.unregister_form("color")


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


def test_held_answers_go_as_one_keyed_resume(eng: Any) -> None:
    def ask(name: str) -> Any:
        def node(state: Any) -> Any:
            return {"messages": [("ai", f"{name}: {eng.interrupt({'question': f'{name}?', 'options': ['ok', 'no']})}")]}
        return node

    g = eng.StateGraph(eng.MessagesState)
    for n in ("a", "b"):
        g.add_node(n, ask(n))
        g.add_edge(eng.START, n)
    r = run(g.compile(checkpointer=eng.InMemorySaver()), {"messages": []}, display=False)
    r.wait(timeout=30)
    forms = {f["node"]: f for f in r.view.forms}
    held = answer(r, forms["a"]["id"], [{"part": 0, "choice": "0", "inputs": {}}], hold=True)
    assert held["ok"] and held["held"] and r.status == "interrupted" and r.view.held == {forms["a"]["id"]: "ok"}
    assert answer(r, forms["b"]["id"], [{"part": 0, "choice": "1", "inputs": {}}], request=2, hold=True)["held"]
    calls: list[Any] = []
    resume = r._resume
    r._resume = lambda value, **kw: (calls.append(value), resume(value, **kw))[1]  # type: ignore[method-assign]
    replies: list[Any] = []
    send = r.view.send
    r.view.send = lambda msg, buffers=None: replies.append(msg) if msg.get("kind") == "resume-result" else send(msg, buffers)
    r.view._dispatch(r.view, {"kind": "send_held", "id": 3}, [])
    del r.view.send
    assert replies[0]["ok"] and calls == [{forms["a"]["id"]: "ok", forms["b"]["id"]: "no"}]
    result = r.wait(timeout=30)
    assert sorted(m.content for m in result["messages"]) == ["a: ok", "b: no"]
    assert sorted(a["summary"] for a in r.answers) == ["no", "ok"]


def test_options_and_schema_become_buttons() -> None:
    form = form_for({"id": "i1", "value": {"question": "ship?", "options": ["ship", "hold", {"label": "Later", "value": 3}]}})
    assert [(c["label"], c["value"]) for c in form["parts"][0]["choices"]] == [("ship", "ship"), ("hold", "hold"), ("Later", 3)]
    assert form["fields"] == [{"key": "question", "text": "ship?"}] and form["parts"][0]["inputs"] == []
    form = form_for({"id": "i3", "value": "Proceed?", "response_schema": {"type": "string", "enum": ["go", "stop"]}})
    assert form["text"] == "Proceed?" and [c["value"] for c in form["parts"][0]["choices"]] == ["go", "stop"]
    form = form_for({"id": "i4", "value": ["x"], "response_schema": {"type": "boolean"}})
    assert [(c["label"], c["value"]) for c in form["parts"][0]["choices"]] == [("Yes", True), ("No", False)]


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
    assert [c["label"] for c in form["parts"][0]["choices"]] == ["go", "stop"] and form["text"] == "Proceed?"
    assert answer(r, form["id"], [{"part": 0, "choice": "1", "inputs": {}}])["ok"]
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

"""A run paused at a static breakpoint (`interrupt_before` / `interrupt_after`: no question)
says in its view which nodes run next, and its "continue ▶" button goes on from the
thread's latest checkpoint, a state changed meanwhile with `update_state` included — the
human-feedback lessons' loop (pause before a no-op node, edit the state as that node, go
on), done from the view. What the button sends is what the page sends
(`{"kind": "continue", id}`), dispatched as the comm does, on both engines."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from lgnb.widgets import run


class S(TypedDict):
    log: Annotated[list, operator.add]
    topic: str


def _graph(eng: Any, **compile_kw: Any) -> Any:
    """draft -> human_feedback (a no-op the user acts as) -> write."""
    g = eng.StateGraph(S)
    g.add_node("draft", lambda s: {"log": [f"draft on {s['topic']}"]})
    g.add_node("human_feedback", lambda s: None)
    g.add_node("write", lambda s: {"log": [f"written on {s['topic']}"]})
    g.add_edge(eng.START, "draft")
    g.add_edge("draft", "human_feedback")
    g.add_edge("human_feedback", "write")
    return g.compile(checkpointer=eng.InMemorySaver(), **compile_kw)


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": "lesson"}}


def press(r: Any, kind: str = "continue", request: int = 1) -> dict[str, Any]:
    """Send what the button sends; return the kernel's answer."""
    replies: list[dict[str, Any]] = []
    send = r.view.send
    r.view.send = lambda msg, buffers=None: replies.append(msg) if msg.get("kind") == "resume-result" else send(msg, buffers)
    try:
        r.view._dispatch(r.view, {"kind": kind, "id": request}, [])
    finally:
        del r.view.send
    assert len(replies) == 1, replies
    assert replies[0]["id"] == request
    return replies[0]


def test_paused_before_a_node_the_view_names_it_and_continue_runs_it(eng: Any) -> None:
    r = run(_graph(eng, interrupt_before=["human_feedback"]), {"log": [], "topic": "cats"}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert r.view.breakpoint == {"next": ["human_feedback"]}
    assert r.view.forms == [] and r.view.interrupts == []

    assert press(r) == {"kind": "resume-result", "id": 1, "interrupt_id": "", "ok": True}
    r.wait(timeout=30)
    assert r.status == "done"
    assert r.view.breakpoint == {}
    assert r.result["log"] == ["draft on cats", "written on cats"]
    assert [a["by"] for a in r.answers] == []  # going on answers no question


def test_a_state_edited_as_the_paused_node_is_what_the_run_goes_on_with(eng: Any) -> None:
    """The lesson's way: `update_state(config, values, as_node="human_feedback")` in a cell,
    then continue: the node counts as run, the next one reads the edit."""
    graph = _graph(eng, interrupt_before=["human_feedback"])
    r = run(graph, {"log": [], "topic": "cats"}, _cfg(), display=False)
    r.wait(timeout=30)
    graph.update_state(_cfg(), {"topic": "dogs"}, as_node="human_feedback")

    assert press(r)["ok"] is True
    r.wait(timeout=30)
    assert r.status == "done"
    assert r.result == {"log": ["draft on cats", "written on dogs"], "topic": "dogs"}


def test_paused_after_a_node_the_view_names_the_node_that_runs_next(eng: Any) -> None:
    r = run(_graph(eng, interrupt_after=["draft"]), {"log": [], "topic": "cats"}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert r.view.breakpoint == {"next": ["human_feedback"]}
    press(r)
    r.wait(timeout=30)
    assert r.status == "done" and r.view.breakpoint == {}


def test_a_pending_question_is_not_skipped_by_continue(eng: Any) -> None:
    """A run that asked a question (`interrupt()`) waits for its answer: continue is
    refused, says why, and the run stays paused with its form."""
    g = eng.StateGraph(S)
    g.add_node("ask", lambda s: {"log": [eng.interrupt("which topic?")]})
    g.add_edge(eng.START, "ask")
    r = run(g.compile(checkpointer=eng.InMemorySaver()), {"log": [], "topic": ""}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.view.breakpoint == {} and len(r.view.forms) == 1

    reply = press(r)
    assert reply["ok"] is False and "answer its form" in reply["error"]
    assert r.status == "interrupted" and len(r.view.forms) == 1
    assert r.view.form_error.startswith("Could not continue")


def test_a_second_press_of_the_same_click_is_not_sent_again(eng: Any) -> None:
    graph = _graph(eng, interrupt_before=["human_feedback", "write"])
    r = run(graph, {"log": [], "topic": "cats"}, _cfg(), display=False)
    r.wait(timeout=30)
    assert press(r, request=7)["ok"] is True
    r.wait(timeout=30)
    assert r.view.breakpoint == {"next": ["write"]}
    again = press(r, request=7)  # the page's retry of a click the kernel already took
    assert again["ok"] is False and "handled already" in again["error"]
    assert r.status == "interrupted"
    press(r, request=8)
    r.wait(timeout=30)
    assert r.result["log"] == ["draft on cats", "written on cats"]


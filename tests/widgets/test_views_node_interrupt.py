"""A node that raises `NodeInterrupt` (deprecated, still in lessons: the LangChain Academy's
"dynamic breakpoints") asks nothing: no `interrupt()` call waits for an answer, and
answering it would only run the node again, which stops again. So the run view and the
lens offer no form for it: they show what the node said, and going on ("continue ▶" in the
run view, Step / Run in the lens, `resume()` with no value) runs from the thread's latest
checkpoint — after the user changed the state with `update_state`, the lesson's way out.
On both engines, driven by what the page sends."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import pytest
from test_run_view_breakpoints import press
from typing_extensions import TypedDict

from lgnb.widgets import run
from lgnb.widgets.lens_view import Lens


class S(TypedDict):
    input: str


def _graph(eng: Any) -> Any:
    """step_1 -> step_2 (stops the run while the input is longer than 5 characters) -> step_3."""
    NodeInterrupt = importlib.import_module(f"{eng.name}.errors").NodeInterrupt
    seen: list[str] = []

    def step_2(state: S) -> S:
        seen.append(state["input"])
        if len(state["input"]) > 5:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated: what the lesson runs anyway
                raise NodeInterrupt(f"Received input that is longer than 5 characters: <b>{state['input']}</b>")
        return state

    g = eng.StateGraph(S)
    g.add_node("step_1", lambda s: s)
    g.add_node("step_2", step_2)
    g.add_node("step_3", lambda s: {"input": s["input"] + "!"})
    g.add_edge(eng.START, "step_1")
    g.add_edge("step_1", "step_2")
    g.add_edge("step_2", "step_3")
    graph = g.compile(checkpointer=eng.InMemorySaver())
    graph.seen = seen  # type: ignore[attr-defined]
    return graph


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": "dynamic-breakpoints"}}


SAID = "Received input that is longer than 5 characters: <b>hello world</b>"


def test_the_run_view_shows_what_the_node_said_and_offers_no_form(eng: Any) -> None:
    r = run(_graph(eng), {"input": "hello world"}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert r.view.forms == []  # nothing to answer
    assert r.view.breakpoint == {"next": ["step_2"], "stopped": [{"node": "step_2", "says": SAID}]}
    assert [i["value"] for i in r.view.interrupts] == [SAID]  # still listed as the thread's interrupt


def test_continue_after_update_state_runs_the_node_again_on_the_new_state(eng: Any) -> None:
    """The lesson: shorten the input with `update_state`, then go on; step_2 passes now."""
    graph = _graph(eng)
    r = run(graph, {"input": "hello world"}, _cfg(), display=False)
    r.wait(timeout=30)
    graph.update_state(_cfg(), {"input": "hi"})

    assert press(r) == {"kind": "resume-result", "id": 1, "interrupt_id": "", "ok": True}
    r.wait(timeout=30)
    assert r.status == "done" and r.view.breakpoint == {}
    assert r.result == {"input": "hi!"}
    assert graph.seen == ["hello world", "hi"]
    assert r.answers == []  # going on answered no question


def test_continue_without_a_change_stops_again_where_it_was(eng: Any) -> None:
    graph = _graph(eng)
    r = run(graph, {"input": "hello world"}, _cfg(), display=False)
    r.wait(timeout=30)
    assert press(r)["ok"] is True
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert r.view.breakpoint["stopped"] == [{"node": "step_2", "says": SAID}]
    assert graph.seen == ["hello world", "hello world"]


def test_resume_with_a_value_is_refused_and_says_what_to_do(eng: Any) -> None:
    r = run(_graph(eng), {"input": "hello world"}, _cfg(), display=False)
    r.wait(timeout=30)
    with pytest.raises(ValueError, match=r"NodeInterrupt.*update_state"):
        r.resume("shorter please")
    assert r.status == "interrupted"  # nothing was sent
    r.resume()  # no value: goes on (and stops again, the state being unchanged)
    r.wait(timeout=30)
    assert r.status == "interrupted"


def test_a_question_asked_with_interrupt_still_gets_its_form_beside_a_node_interrupt(eng: Any) -> None:
    """Only raised interrupts lose their form: an `interrupt()` question in a parallel
    branch keeps its form, and continue is refused until it is answered."""
    NodeInterrupt = importlib.import_module(f"{eng.name}.errors").NodeInterrupt

    def stop(state: S) -> S:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raise NodeInterrupt("stop here")

    g = eng.StateGraph(S)
    g.add_node("ask", lambda s: {"input": eng.interrupt("new input?")})
    g.add_node("stop", stop)
    g.add_edge(eng.START, "ask")
    g.add_edge(eng.START, "stop")
    r = run(g.compile(checkpointer=eng.InMemorySaver()), {"input": "x"}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert [f.get("node") for f in r.view.forms] == ["ask"]
    assert r.view.breakpoint == {}
    reply = press(r)
    assert reply["ok"] is False and "answer its form" in reply["error"]


def test_the_lens_names_the_stop_and_step_goes_on_after_update_state(eng: Any) -> None:
    graph = _graph(eng)
    lens = Lens(graph, {"input": "hello world"}, _cfg())
    lens.run()
    assert lens.status == "interrupted" and lens.view.forms == []
    assert "NodeInterrupt" in lens.view.notice and SAID in lens.view.notice
    with pytest.raises(ValueError, match="update_state"):
        lens.resume("shorter")
    graph.update_state(_cfg(), {"input": "hi"})
    lens.view._dispatch(lens.view, {"kind": "run"}, [])
    lens._request(lambda: None).result(30)
    assert lens.status == "done" and lens.result == {"input": "hi!"}
    assert graph.seen == ["hello world", "hi"]

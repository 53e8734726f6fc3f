"""Second review of `NodeInterrupt` in the run view and the lens: every raised interrupt
shares one placeholder id, so the views must tell by other means which node said what —
several nodes stopping in one step, a later node stopping after an earlier one was let
through, a node inside a subgraph. A question asked with `interrupt()` beside a raised one
is answered from code with a plain value (the raised one takes none); an `interrupt_before`
breakpoint that leads into a stopping node; the lens's Step at such a stop; and the saved
HTML, which must not say the run waits for an answer. On both engines, driven by what the
page sends (`press`) and by the public methods."""

from __future__ import annotations

import importlib
import operator
import warnings
from pathlib import Path
from typing import Annotated, Any

import pytest
from test_run_view_breakpoints import press
from typing_extensions import TypedDict

from lgnb.widgets import run
from lgnb.widgets.lens_view import Lens


class S(TypedDict):
    input: str
    log: Annotated[list, operator.add]


def _stopper(eng: Any, says: Any, *, unless: str | None = None) -> Any:
    """A node that raises NodeInterrupt(`says`) (unless the input is `unless`)."""
    NodeInterrupt = importlib.import_module(f"{eng.name}.errors").NodeInterrupt

    def node(state: S) -> dict[str, Any]:
        if state["input"] != unless:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated, still in lessons
                raise NodeInterrupt(says)
        return {"log": [f"passed {unless}"]}

    return node


def _cfg(thread: str = "review") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _parallel(eng: Any) -> Any:
    """START -> a (stops) and b (stops with a dict that carries markup)."""
    g = eng.StateGraph(S)
    g.add_node("a", _stopper(eng, "a says <i>wait</i>"))
    g.add_node("b", _stopper(eng, {"reason": "too long", "html": "<script>x</script>"}))
    g.add_edge(eng.START, "a")
    g.add_edge(eng.START, "b")
    return g.compile(checkpointer=eng.InMemorySaver())


def _chain(eng: Any) -> Any:
    """first (stops unless the input is "ok-1") -> later (stops unless "ok-2")."""
    g = eng.StateGraph(S)
    g.add_node("first", _stopper(eng, "first stops", unless="ok-1"))
    g.add_node("later", _stopper(eng, "later stops", unless="ok-2"))
    g.add_edge(eng.START, "first")
    g.add_edge("first", "later")
    return g.compile(checkpointer=eng.InMemorySaver())


def _lens_run(lens: Lens) -> None:
    lens.view._dispatch(lens.view, {"kind": "run"}, [])
    lens._request(lambda: None).result(30)


def test_two_nodes_stopping_in_one_step_are_each_named_with_their_words(eng: Any) -> None:
    r = run(_parallel(eng), {"input": "x", "log": []}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted" and r.view.forms == []
    assert sorted(map(tuple, (d.values() for d in r.view.breakpoint["stopped"]))) == [
        ("a", "a says <i>wait</i>"),
        ("b", '{"reason": "too long", "html": "<script>x</script>"}'),
    ]
    assert sorted(i["node"] for i in r.view.interrupts) == ["a", "b"]


def test_the_lens_names_each_node_that_stopped_in_one_step(eng: Any) -> None:
    lens = Lens(_parallel(eng), {"input": "x", "log": []}, _cfg())
    lens.run()
    assert lens.status == "interrupted"
    assert "a: a says <i>wait</i>" in lens.view.notice
    assert 'b: {"reason": "too long"' in lens.view.notice


def test_a_later_node_stopping_after_an_earlier_one_was_let_through_is_named(eng: Any) -> None:
    """The lesson's loop twice: `first` stops, the state is changed, continue; now `later`
    stops — the view names `later`, not the node that stopped before."""
    graph = _chain(eng)
    r = run(graph, {"input": "x", "log": []}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.view.breakpoint["stopped"] == [{"node": "first", "says": "first stops"}]
    graph.update_state(_cfg(), {"input": "ok-1"})
    assert press(r)["ok"] is True
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert r.view.breakpoint == {"next": ["later"], "stopped": [{"node": "later", "says": "later stops"}]}
    assert [i["node"] for i in r.view.interrupts] == ["later"]
    graph.update_state(_cfg(), {"input": "ok-2"})
    r.resume()
    r.wait(timeout=30)
    assert r.status == "done" and r.result["log"] == ["passed ok-1", "passed ok-2"]


def test_the_lens_names_the_later_node_too(eng: Any) -> None:
    graph = _chain(eng)
    lens = Lens(graph, {"input": "x", "log": []}, _cfg())
    lens.run()
    assert "(first: first stops)" in lens.view.notice
    graph.update_state(_cfg(), {"input": "ok-1"})
    _lens_run(lens)
    assert lens.status == "interrupted"
    assert "(later: later stops)" in lens.view.notice
    assert [i["node"] for i in lens.steps[-1]["interrupts"]] == ["later"]


def test_a_node_stopping_inside_a_subgraph_is_named_by_its_path(eng: Any) -> None:
    sg = eng.StateGraph(S)
    sg.add_node("inner", _stopper(eng, "inner stops"))
    sg.add_edge(eng.START, "inner")
    g = eng.StateGraph(S)
    g.add_node("sub", sg.compile())
    g.add_edge(eng.START, "sub")
    r = run(g.compile(checkpointer=eng.InMemorySaver()), {"input": "x", "log": []}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.view.breakpoint == {"next": ["sub"], "stopped": [{"node": "sub:inner", "says": "inner stops"}]}
    assert press(r)["ok"] is True  # goes on: the inner node runs again and stops again
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert r.view.breakpoint["stopped"] == [{"node": "sub:inner", "says": "inner stops"}]


def test_a_question_beside_a_raised_interrupt_takes_a_plain_value_from_code(eng: Any) -> None:
    """Only the question needs an answer: `resume(value)` answers it (no map keyed by
    interrupt id needed, the raised one's placeholder id is not a question); the raised
    node runs again and stops again, now the only thing pending: continue is offered."""
    g = eng.StateGraph(S)
    g.add_node("ask", lambda s: {"log": [eng.interrupt("new input?")]})
    g.add_node("stop", _stopper(eng, "stop here"))
    g.add_edge(eng.START, "ask")
    g.add_edge(eng.START, "stop")
    graph = g.compile(checkpointer=eng.InMemorySaver())
    r = run(graph, {"input": "x", "log": []}, _cfg(), display=False)
    r.wait(timeout=30)
    assert [f.get("node") for f in r.view.forms] == ["ask"]
    r.resume("hello")
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert graph.get_state(_cfg()).values["log"] == ["hello"]
    assert [a["summary"] for a in r.answers] and r.answers[0]["node"] == "ask"
    assert r.view.forms == []
    assert r.view.breakpoint["stopped"] == [{"node": "stop", "says": "stop here"}]


def test_after_the_question_is_answered_next_names_only_the_node_that_stopped(eng: Any) -> None:
    g = eng.StateGraph(S)
    g.add_node("ask", lambda s: {"log": [eng.interrupt("new input?")]})
    g.add_node("stop", _stopper(eng, "stop here"))
    g.add_edge(eng.START, "ask")
    g.add_edge(eng.START, "stop")
    graph = g.compile(checkpointer=eng.InMemorySaver())
    r = run(graph, {"input": "x", "log": []}, _cfg(), display=False)
    r.wait(timeout=30)
    r.resume("hello")
    r.wait(timeout=30)
    assert graph.get_state(_cfg()).next == ("stop",)
    assert r.view.breakpoint["next"] == ["stop"]


def test_a_sibling_that_finished_beside_the_stop_is_not_listed_as_next(eng: Any) -> None:
    """`done` finishes in the step where `stop` raises: its write is saved, so going on runs
    only `stop` (LangGraph's `get_state().next`), and the breakpoint says so — also after
    going on unchanged (the resume replays `done`'s saved write) and in a new view of the
    thread; after the state is changed and the run goes on, `done` does not run again."""
    g = eng.StateGraph(S)
    g.add_node("done", lambda s: {"log": ["done ran"]})
    g.add_node("stop", _stopper(eng, "stop here", unless="ok"))
    g.add_edge(eng.START, "done")
    g.add_edge(eng.START, "stop")
    graph = g.compile(checkpointer=eng.InMemorySaver())
    r = run(graph, {"input": "x", "log": []}, _cfg("sibling"), display=False)
    r.wait(timeout=30)
    assert graph.get_state(_cfg("sibling")).next == ("stop",)
    assert r.view.breakpoint["next"] == ["stop"]
    r.resume()  # nothing changed: `stop` stops again; the resume replays `done` from its write
    r.wait(timeout=30)
    assert r.view.breakpoint["next"] == ["stop"]
    fresh = run(graph, None, _cfg("sibling"), display=False)  # a new view going on from there
    fresh.wait(timeout=30)
    assert fresh.view.breakpoint["next"] == ["stop"]
    graph.update_state(_cfg("sibling"), {"input": "ok"})
    r.resume()
    r.wait(timeout=30)
    assert r.status == "done"
    assert graph.get_state(_cfg("sibling")).values["log"] == ["done ran", "passed ok"]


def test_the_lens_answers_the_question_beside_a_raised_interrupt_with_a_plain_value(eng: Any) -> None:
    g = eng.StateGraph(S)
    g.add_node("ask", lambda s: {"log": [eng.interrupt("new input?")]})
    g.add_node("stop", _stopper(eng, "stop here"))
    g.add_edge(eng.START, "ask")
    g.add_edge(eng.START, "stop")
    graph = g.compile(checkpointer=eng.InMemorySaver())
    lens = Lens(graph, {"input": "x", "log": []}, _cfg())
    lens.run()
    assert [f.get("node") for f in lens.view.forms] == ["ask"]
    lens.resume("hello")
    lens.run()
    assert lens.status == "interrupted"
    assert graph.get_state(_cfg()).values["log"] == ["hello"]
    assert lens.view.forms == [] and "(stop: stop here)" in lens.view.notice


def test_a_breakpoint_before_a_node_that_then_stops(eng: Any) -> None:
    """`interrupt_before=["check"]` pauses first (a plain breakpoint: nothing said); going on
    runs `check`, which raises: now the view says it stopped and what it said."""
    g = eng.StateGraph(S)
    g.add_node("draft", lambda s: {"log": ["draft"]})
    g.add_node("check", _stopper(eng, "check stops", unless="ok"))
    g.add_edge(eng.START, "draft")
    g.add_edge("draft", "check")
    graph = g.compile(checkpointer=eng.InMemorySaver(), interrupt_before=["check"])
    r = run(graph, {"input": "x", "log": []}, _cfg(), display=False)
    r.wait(timeout=30)
    assert r.view.breakpoint == {"next": ["check"]}
    assert press(r)["ok"] is True
    r.wait(timeout=30)
    assert r.status == "interrupted"
    assert r.view.breakpoint == {"next": ["check"], "stopped": [{"node": "check", "says": "check stops"}]}
    graph.update_state(_cfg(), {"input": "ok"})
    assert press(r, request=2)["ok"] is True
    r.wait(timeout=30)
    assert r.status == "done" and r.result["log"] == ["draft", "passed ok"]


def test_the_lens_step_at_a_stop_runs_the_node_again(eng: Any) -> None:
    graph = _chain(eng)
    lens = Lens(graph, {"input": "x", "log": []}, _cfg())
    lens.run()
    lens.step()  # unchanged state: the node stops again
    assert lens.status == "interrupted" and "(first: first stops)" in lens.view.notice
    with pytest.raises(ValueError, match="NodeInterrupt"):
        lens.resume("an answer")
    graph.update_state(_cfg(), {"input": "ok-1"})
    lens.step()
    assert lens.status != "interrupted" or "(later: later stops)" in lens.view.notice
    lens.run()
    assert lens.status == "interrupted" and "(later: later stops)" in lens.view.notice


def test_the_saved_html_says_the_node_stopped_not_that_it_waits_for_an_answer(eng: Any, tmp_path: Path) -> None:
    r = run(_parallel(eng), {"input": "x", "log": []}, _cfg(), display=False)
    r.wait(timeout=30)
    text = r.to_html(tmp_path / "run.html").read_text(encoding="utf-8")
    assert "waiting for an answer" not in text
    assert "stopped by NodeInterrupt (no answer to give) in a" in text
    assert "stopped by NodeInterrupt (no answer to give) in b" in text
    assert "<script>x</script>" not in text and "&lt;i&gt;wait&lt;/i&gt;" in text
    lens = Lens(_parallel(eng), {"input": "x", "log": []}, _cfg("lens-html"))
    lens.run()
    text = lens.to_html(tmp_path / "lens.html").read_text(encoding="utf-8")
    assert "waiting for an answer" not in text and "stopped by NodeInterrupt (no answer to give) in b" in text

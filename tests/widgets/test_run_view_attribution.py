"""The live run view numbers steps as the checkpoints do, and shows each custom event
under the node that wrote it, or, when the stream cannot say, under its step.

Steps: each program runs in `lgnb.run(graph, input, config)` (display=False); the step
numbers the view shows (the `step` trait, each update row's step) are compared with the
saved checkpoints' `metadata["step"]` (`get_state_history`), on LangGraph and on lgnb
(`differential`; with LGNB_DIFF_SELFTEST=1, LangGraph on both sides).

Attribution: two parallel branches of one super-step take turns writing progress and a
note (`threading.Event` hand-offs, so the interleaving is fixed). A v1 `custom` chunk
carries only its namespace, so for a LangGraph graph the view cannot know which branch
wrote an event while both run: it shows it under the step ("step 1 · work"), never under
the other branch. lgnb's engine names the writing task, so every event lands on its own
branch's bar. The patches the kernel sends the page are captured at `RunView.send`.
"""

from __future__ import annotations

import operator
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))

import _diff  # noqa: E402
from page_spy import SENT, page_spy, sent_patches  # noqa: E402,F401
from widget_graphs import _engine  # noqa: E402

from lgnb.widgets import run  # noqa: E402

differential = _diff.differential
TIMEOUT = 30


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# --------------------------------------------------------------------------- steps
def shown_and_saved(graph: Any, runs: list[tuple[Any, dict[str, Any] | None]]) -> dict[str, Any]:
    """Run each (input, config) in `lgnb.run` in turn; per run, the step the view ends at and
    the (node, step) of each update row it shows; and the thread's checkpoint steps."""
    shown = []
    for inp, cfg in runs:
        r = run(graph, inp, cfg, display=False)
        r.wait(timeout=TIMEOUT)
        shown.append({"status": r.status, "step": r.view.step, "panel": r.view.panel.get("step"),
                      "updates": [(u["node"], u["step"]) for u in r.content["updates"]]})
    cfg = runs[-1][1]
    saved = ([(s.metadata["source"], s.metadata["step"]) for s in graph.get_state_history(cfg)][::-1]
             if cfg is not None else None)
    return {"shown": shown, "saved": saved}


def assert_steps_are_checkpoint_steps(obs: dict[str, Any]) -> None:
    """Each shown update's step is a loop checkpoint's (the one holding that write), and a
    run that finished ends at the thread's latest step."""
    loop_steps = {step for source, step in obs["saved"] if source == "loop"}
    for segment in obs["shown"]:
        assert {step for _, step in segment["updates"]} <= loop_steps, obs
    last = obs["shown"][-1]
    if last["status"] == "done":
        assert last["step"] == last["panel"] == obs["saved"][-1][1], obs


def writer_flow(E: Any, saver: bool) -> Any:
    """An essay entrypoint calling two @task functions (outline, then essay)."""

    @E.func.task
    def outline(topic: str) -> str:
        return f"outline of {topic}"

    @E.func.task
    def essay(plan: str) -> str:
        return f"essay from {plan}"

    @E.func.entrypoint(checkpointer=E.InMemorySaver() if saver else None)
    def write(topic: str) -> str:
        return essay(outline(topic).result()).result()

    return write


def test_an_entrypoint_s_steps_in_the_run_view_are_its_checkpoints_steps() -> None:
    """A user runs an @entrypoint on a thread twice: the view shows its tasks and its own
    result in step 0, then in step 2, as `get_state_history` lists them (not one higher)."""

    def scenario(E: Any) -> Any:
        graph = writer_flow(E, saver=True)
        obs = shown_and_saved(graph, [("bees", _cfg("ep")), ("ants", _cfg("ep"))])
        assert_steps_are_checkpoint_steps(obs)
        return obs

    differential(scenario, expect={
        "shown": [{"status": "done", "step": 0, "panel": 0,
                   "updates": [("outline", 0), ("essay", 0), ("write", 0)]},
                  {"status": "done", "step": 2, "panel": 2,
                   "updates": [("outline", 2), ("essay", 2), ("write", 2)]}],
        "saved": [("input", -1), ("loop", 0), ("input", 1), ("loop", 2)],
    })


def test_an_entrypoint_paused_at_a_question_keeps_its_step_when_resumed() -> None:
    """An @entrypoint asks with `interrupt()` and the user resumes it: before and after the
    answer the view shows step 0, the step of the checkpoint that saves its result."""

    def scenario(E: Any) -> Any:
        @E.func.task
        def draft(topic: str) -> str:
            return f"draft on {topic}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def review(topic: str) -> str:
            text = draft(topic).result()
            return f"{text}: {E.interrupt('approve?')}"

        cfg = _cfg("ask")
        r = run(review, "bees", cfg, display=False)
        r.wait(timeout=TIMEOUT)
        asked = (r.status, r.view.step, [(u["node"], u["step"]) for u in r.content["updates"]])
        r.resume("yes").wait(timeout=TIMEOUT)
        answered = (r.status, r.view.step, [(u["node"], u["step"]) for u in r.content["updates"]], r.result)
        saved = [(s.metadata["source"], s.metadata["step"]) for s in review.get_state_history(cfg)][::-1]
        assert answered[1] == saved[-1][1]
        return {"asked": asked, "answered": answered, "saved": saved}

    differential(scenario, expect={
        "asked": ("interrupted", 0, [("draft", 0)]),
        "answered": ("done", 0, [("draft", 0), ("review", 0)], "draft on bees: yes"),
        "saved": [("input", -1), ("loop", 0)],
    })


def test_an_entrypoint_without_a_saver_is_numbered_as_its_checkpoints_would_be() -> None:
    """No checkpointer, so no checkpoints in the stream: the view still shows the entrypoint's
    step as 0, the step the same program saves when it has a saver."""

    def scenario(E: Any) -> Any:
        unsaved = shown_and_saved(writer_flow(E, saver=False), [("bees", None)])
        saved = shown_and_saved(writer_flow(E, saver=True), [("bees", _cfg("cmp"))])
        assert unsaved["shown"] == saved["shown"]
        assert_steps_are_checkpoint_steps(saved)
        return unsaved["shown"]

    differential(scenario, expect=[{"status": "done", "step": 0, "panel": 0,
                                    "updates": [("outline", 0), ("essay", 0), ("write", 0)]}])


def test_a_state_graph_run_again_on_its_thread_continues_the_checkpoint_steps() -> None:
    """A StateGraph run twice on one thread: the second run's nodes are shown at steps 5 and
    6 (its input is checkpoint 3, its __start__ step 4), as the history lists them."""

    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("plan", lambda s: {"log": ["plan"]})
        g.add_node("act", lambda s: {"log": ["act"]})
        g.add_edge(E.START, "plan")
        g.add_edge("plan", "act")
        graph = g.compile(checkpointer=E.InMemorySaver())
        obs = shown_and_saved(graph, [({"log": []}, _cfg("sg")), ({"log": []}, _cfg("sg"))])
        assert_steps_are_checkpoint_steps(obs)
        return obs

    differential(scenario, expect={
        "shown": [{"status": "done", "step": 2, "panel": 2, "updates": [("plan", 1), ("act", 2)]},
                  {"status": "done", "step": 6, "panel": 6, "updates": [("plan", 5), ("act", 6)]}],
        "saved": [("input", -1), ("loop", 0), ("loop", 1), ("loop", 2),
                  ("input", 3), ("loop", 4), ("loop", 5), ("loop", 6)],
    })


# --------------------------------------------------------------------------- attribution
A_VALUES = (0.1, 0.2, 0.3)
B_VALUES = (0.5, 0.6, 0.7)
A_TAIL = 0.9


def take_turns(eng: Any, *, tail: Callable[[], None] | None = None) -> tuple[Any, dict[str, threading.Event]]:
    """Branches `a` and `b` of one step: a writes, hands to b, b writes, hands back, three
    times each; each write is a progress value and a note naming its writer. Neither ends
    before the other wrote its last, so every write happens while both run. With `tail`,
    `a` then waits for it and writes `A_TAIL` alone."""
    turn = {"a": threading.Event(), "b": threading.Event()}

    def branch(me: str, other: str, values: tuple[float, ...], ends_last: bool) -> Any:
        def node(state: Any) -> Any:
            write = eng.get_stream_writer()
            for value in values:
                assert turn[me].wait(TIMEOUT), f"{me} never got its turn"
                turn[me].clear()
                write({"progress": value, "stage": "work"})
                write({"wrote": me})
                turn[other].set()
            if not ends_last:
                assert turn[me].wait(TIMEOUT), f"{other} never wrote its last"
                if tail is not None:
                    tail()
                    write({"progress": A_TAIL, "stage": "work"})
                    write({"wrote": me})
            return {"log": [me]}

        return node

    g = eng.StateGraph(Log)
    g.add_node("a", branch("a", "b", A_VALUES, ends_last=False))
    g.add_node("b", branch("b", "a", B_VALUES, ends_last=True))
    g.add_edge(eng.START, "a")
    g.add_edge(eng.START, "b")
    return g.compile(), turn


def bars_and_notes(r: Any) -> tuple[dict[tuple[str, str], list[float]], list[tuple[str, Any, str]]]:
    """The values each progress bar was sent, in order, keyed by (node, label); and each note
    row as (node, step or None, writer)."""
    bars: dict[tuple[str, str], list[float]] = {}
    notes = []
    for p in sent_patches(r):
        if p["kind"] == "progress":
            bars.setdefault((p["node"], p["label"]), []).append(p["value"])
        elif p["kind"] == "log" and isinstance(p["payload"], dict) and "wrote" in p["payload"]:
            notes.append((p["node"], p.get("step"), p["payload"]["wrote"]))
    return bars, notes


def test_on_an_lgnb_graph_each_parallel_branch_s_bar_gets_exactly_its_own_events() -> None:
    """lgnb's engine names the task of each custom event: a's bar shows 0.1, 0.2, 0.3 and b's
    0.5, 0.6, 0.7, and every note is under its writer, whatever the interleaving."""
    lgnb = _engine("lgnb")
    graph, turn = take_turns(lgnb)
    turn["a"].set()
    r = run(graph, {"log": []}, display=False)
    r.wait(timeout=TIMEOUT)
    bars, notes = bars_and_notes(r)
    assert r.status == "done"
    assert bars == {("a", "a · work"): list(A_VALUES), ("b", "b · work"): list(B_VALUES)}
    assert notes == [(w, None, w) for w in ("a", "b") * 3]


def test_on_a_langgraph_graph_events_of_overlapping_branches_are_shown_under_their_step() -> None:
    """A LangGraph `custom` chunk does not say which branch wrote it: while a and b both run,
    their events go to the step's bar ("step 1 · work") and notes tagged step 1, never to the
    other branch; once b has ended, a's event is certainly a's and lands on a's own bar."""
    lg = _engine("langgraph")
    holder: dict[str, Any] = {}

    def after_b_ended() -> None:  # the view saw b's end: a is the only task of the step left
        deadline = time.monotonic() + TIMEOUT
        while "b" in holder["run"].view.active or "b" not in holder["run"].view.visited:
            assert time.monotonic() < deadline, "the view never saw b end"
            time.sleep(0.01)

    graph, turn = take_turns(lg, tail=after_b_ended)
    holder["run"] = r = run(graph, {"log": []}, display=False)
    turn["a"].set()
    r.wait(timeout=TIMEOUT)
    bars, notes = bars_and_notes(r)
    assert r.status == "done"
    assert bars == {("", "step 1 · work"): [v for pair in zip(A_VALUES, B_VALUES) for v in pair],
                    ("a", "a · work"): [A_TAIL]}
    assert notes == [("", 1, w) for w in ("a", "b") * 3] + [("a", None, "a")]
    progress = {p["id"]: (p["node"], p["label"], p["value"]) for p in r.content["progress"]}
    assert progress == {"||work|step 1": ("", "step 1 · work", 0.7), "|a|work": ("a", "a · work", A_TAIL)}


def test_a_subgraph_s_events_are_its_inner_node_s_while_a_sibling_branch_runs() -> None:
    """On either engine: a root branch and a subgraph branch take turns; the subgraph's
    events carry its namespace, where only its inner node runs, so they are that node's
    ("team:search"), and no root-level bar gets them."""

    def scenario(E: Any) -> Any:
        turn = {"side": threading.Event(), "search": threading.Event()}

        def taker(me: str, other: str, values: tuple[float, ...], ends_last: bool) -> Any:
            def node(state: Any) -> Any:
                write = E.get_stream_writer()
                for value in values:
                    assert turn[me].wait(TIMEOUT)
                    turn[me].clear()
                    write({"progress": value, "stage": "work"})
                    turn[other].set()
                if not ends_last:
                    assert turn[me].wait(TIMEOUT)
                return {"log": [me]}

            return node

        sub = E.StateGraph(Log)
        sub.add_node("search", taker("search", "side", B_VALUES, ends_last=True))
        sub.add_edge(E.START, "search")
        g = E.StateGraph(Log)
        g.add_node("team", sub.compile())
        g.add_node("side", taker("side", "search", A_VALUES, ends_last=False))
        g.add_edge(E.START, "team")
        g.add_edge(E.START, "side")
        turn["side"].set()
        r = run(g.compile(), {"log": []}, display=False)
        r.wait(timeout=TIMEOUT)
        bars: dict[tuple[str, str, str], list[float]] = {}
        for p in sent_patches(r):
            if p["kind"] == "progress":
                bars.setdefault((p["ns"], p["node"], p["label"]), []).append(p["value"])
        assert bars.get(("team", "team:search", "team:search · work")) == list(B_VALUES)
        return {"status": r.status, "team": bars.pop(("team", "team:search", "team:search · work"), None),
                "root_bars_with_team_values": [k for k, v in bars.items() if set(v) & set(B_VALUES)]}

    differential(scenario, expect={"status": "done", "team": list(B_VALUES), "root_bars_with_team_values": []})


def test_a_graph_the_view_cannot_look_into_numbers_an_entrypoint_from_its_first_task() -> None:
    """A remote graph: the view sees neither its nodes nor (without the full state over the
    wire) its checkpoints, so it cannot tell an @entrypoint from a StateGraph up front. The
    entrypoint's first task is triggered by the input itself (`__start__`), so it is shown at
    step 0, as its checkpoint is numbered; a StateGraph's first node, behind the hidden
    `__start__` step, at 1."""
    from lgnb.widgets._stream import StreamReducer
    from lgnb.widgets.run_view import VIEW_MODES

    def steps_seen(graph: Any, inp: Any) -> list[int]:
        reducer, seen = StreamReducer(first_step=1), []  # what a remote graph gets
        for chunk in graph.stream(inp, stream_mode=list(VIEW_MODES), subgraphs=True):
            reducer.feed(chunk)
            seen.append(reducer.step)
        return sorted(set(seen))

    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b", lambda s: {"log": ["b"]})
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        return {"entrypoint": steps_seen(writer_flow(E, saver=False), "bees"),
                "state graph": steps_seen(g.compile(), {"log": []})}

    differential(scenario, expect={"entrypoint": [0], "state graph": [0, 1, 2]})

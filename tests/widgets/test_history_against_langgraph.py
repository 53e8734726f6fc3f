"""The time-travel timeline against LangGraph: the same thread, drawn the same on both engines.

Each test is a thread history a notebook user makes (runs, interrupts and resumes, forks with
``update_state``, replays, ``as_node``, ``Command(goto=)``, Send fan-outs, parallel branches,
a failed step and its retry, subgraphs with their own checkpoints, ``durability="exit"``,
``bulk_update_state``, hundreds of steps). The program runs once on LangGraph and once on lgnb
(the `tests/engine` harness: ``differential(scenario)``), on each engine's InMemorySaver and on
its SQLite saver on a file (LangGraph's ``langgraph.checkpoint.sqlite``, lgnb's
``lgnb.checkpoint.sqlite``); some also on lgnb's SQLite saver under LangGraph's engine.

For every thread, :func:`drawing` builds what the history view draws — the pure model
(`lgnb.draw.history.timeline`), its DOT, the collapsed model (`history_runs.collapse`) — and
asserts, on each engine, that it agrees with ``get_state_history``: one node per checkpoint,
edges exactly the ``parent_config`` chain, branch points where checkpoints share a parent, the
later children marked as forks, each node's step / source / next / interrupt count / details
as the snapshot says, the latest checkpoint the one ``get_state`` returns. It also opens
``lgnb.history`` on the thread (its own light read path) and asserts the view draws exactly
that. The differential then compares the drawings of the two engines, ids and times normalized.

The view's actions (inspect, fork with edits, replay) are driven headlessly as the page does
(``_msg_select`` / ``_msg_fork`` / ``_msg_replay``), and the thread they leave is compared with
the same program done by hand (``graph.update_state`` / ``graph.invoke(None, config)``).
"""

from __future__ import annotations

import html
import importlib
import operator
import re
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))

import _diff  # noqa: E402

from lgnb.draw import timeline, timeline_to_dot  # noqa: E402
from lgnb.draw.history import snapshot_details  # noqa: E402
from lgnb.draw.history_runs import collapse  # noqa: E402
from lgnb.widgets import HistoryView, history  # noqa: E402

differential = _diff.differential
CFG = {"configurable": {"thread_id": "t1"}}
#: each engine's InMemorySaver and its own SQLite saver on a file
KINDS = ("memory", "sqlite")


# ------------------------------------------------------------------------------- savers
@contextmanager
def open_saver(E: Any, kind: str, tmp: Path) -> Any:
    """`memory`: E's InMemorySaver; `sqlite`: E's own SQLite saver on a new file;
    `lgnb_sqlite`: lgnb's SQLite saver whatever the engine."""
    if kind == "memory":
        with nullcontext(E.InMemorySaver()) as saver:
            yield saver
        return
    root = "lgnb" if kind == "lgnb_sqlite" else E.root
    module = importlib.import_module(f"{root}.checkpoint.sqlite")
    path = tmp / f"{E.label}-{kind}-{time.monotonic_ns()}.sqlite"
    with module.SqliteSaver.from_conn_string(str(path)) as saver:
        yield saver


def cid(config: Any) -> str | None:
    return ((config or {}).get("configurable") or {}).get("checkpoint_id")


# ------------------------------------------------------------------------------- the drawing
def agrees_with_history(t: Any, snaps: list[Any], graph: Any, cfg: dict[str, Any]) -> None:
    """The timeline model says what get_state_history says (asserted on each engine)."""
    ids = [cid(s.config) for s in snaps]
    assert len(set(ids)) == len(ids) == len(t.checkpoints), "one node per checkpoint"
    assert {c.id for c in t.checkpoints} == set(ids)
    listed = set(ids)
    parent_of = {cid(s.config): cid(s.parent_config) for s in snaps}
    assert {(e.source, e.target) for e in t.links} == {
        (p, c) for c, p in parent_of.items() if p is not None and p in listed}, "edges = the parent chain"
    assert len(t.links) == len({(e.source, e.target) for e in t.links})
    kids: dict[str, list[str]] = {}
    order = {c.id: i for i, c in enumerate(t.checkpoints)}
    for c, p in parent_of.items():
        if p in listed:
            kids.setdefault(p, []).append(c)
    assert sorted(t.branch_points) == sorted(p for p, k in kids.items() if len(k) > 1), "forks where parents are shared"
    forks = {k for p, ks in kids.items() if len(ks) > 1 for k in sorted(ks, key=order.__getitem__)[1:]}
    assert {c.id for c in t.checkpoints if c.fork} == forks
    # oldest first: a parent is drawn before its children
    assert all(order[e.source] < order[e.target] for e in t.links)
    for snap in snaps:
        c = t.by_id(cid(snap.config))
        assert c is not None
        assert c.step == snap.metadata.get("step") and c.source == snap.metadata.get("source")
        assert c.next == tuple(snap.next)
        n = len(snap.interrupts) or sum(len(task.interrupts) for task in snap.tasks)
        assert c.interrupts == n
        assert c.details == snapshot_details(snap)
        assert c.parent == (parent_of[c.id] if parent_of[c.id] in listed else None)
    latest = graph.get_state(cfg)
    if snaps:
        assert t.latest == cid(latest.config), "the latest node is the thread's current state"
        assert sum(c.latest for c in t.checkpoints) == 1


def dot_agrees(dot: str, t: Any) -> None:
    """The DOT draws the model: one DOT node per drawn checkpoint or segment, one edge per link."""
    nodes = re.findall(r"^\t(lgnb_h\w+) \[", dot, re.MULTILINE)
    edges = re.findall(r"^\t(lgnb_h\w+) -> (lgnb_h\w+) \[", dot, re.MULTILINE)
    assert len(nodes) == len(t.checkpoints) + len(t.segments)
    assert len(edges) == len(t.links)
    dot_ids = {c.id: c.dot_id.replace("-", "_") for c in t.checkpoints}
    dot_ids.update({s.id: s.dot_id.replace("-", "_") for s in t.segments})
    assert sorted(edges) == sorted((dot_ids[e.source], dot_ids[e.target]) for e in t.links)


def _ids_only(config: dict[str, Any]) -> dict[str, Any]:
    conf = config["configurable"]
    return {"configurable": {k: conf[k] for k in ("thread_id", "checkpoint_ns", "checkpoint_id") if k in conf}}


def _slim(t: Any) -> list[Any]:
    return [(c.id, c.parent, c.step, c.source, c.next, c.interrupts, c.latest, c.fork) for c in t.checkpoints]


def drawing(graph: Any, cfg: dict[str, Any], *, view: bool = True) -> dict[str, Any]:
    """What the history view draws for the thread, checked against get_state_history."""
    snaps = list(graph.get_state_history(cfg))
    t = timeline(snaps)
    agrees_with_history(t, snaps, graph, cfg)
    dot = timeline_to_dot(t)
    dot_agrees(dot, t)
    drawn = collapse(t)
    drawn_dot = timeline_to_dot(drawn)
    dot_agrees(drawn_dot, drawn)
    out = {"timeline": t.to_json(), "dot": dot, "drawn": drawn.to_json(details=False), "drawn_dot": drawn_dot}
    if view:
        v = history(graph, cfg, limit=None)
        try:
            assert v.error == ""
            assert v.model is not None and _slim(v.model) == _slim(timeline(snaps, details=False))
            assert v.dot == drawn_dot, "the view draws what the pure functions draw"
            # the view keeps only the ids of each checkpoint's config (not a subgraph's checkpoint_map)
            assert v.timeline["checkpoints"] == [{**c, "config": _ids_only(c["config"])}
                                                 for c in drawn.to_json(details=False)["checkpoints"]]
            assert v.timeline["links"] == drawn.to_json(details=False)["links"]
        finally:
            v.close()
    return out


def same_drawing(program: Callable[[Any, Any], tuple[Any, dict[str, Any]]], tmp: Path, *,
                 kinds: tuple[str, ...] = KINDS) -> list[Any]:
    """Run `program(E, saver)` (it returns the graph and the thread's config) on both
    engines for each saver kind; the drawings must be equal. Returns the reference
    drawings (normalized), one per kind."""
    out = []
    for kind in kinds:
        def scenario(E: Any, kind: str = kind) -> Any:
            with open_saver(E, kind, tmp) as saver:
                graph, cfg = program(E, saver)
                return drawing(graph, cfg)
        out.append(differential(scenario))
    return out


def shape(ref: Any) -> list[tuple[Any, ...]]:
    """(step, source, next, interrupts, fork) per checkpoint of a normalized drawing."""
    return [(c["step"], c["source"], tuple(c["next"]), c["interrupts"], c["fork"]) for c in ref["timeline"]["checkpoints"]]


# ------------------------------------------------------------------------------- programs
class Log(TypedDict, total=False):
    log: Annotated[list, operator.add]
    count: int
    note: str


def chain(E: Any, saver: Any, names: tuple[str, ...] = ("plan", "write", "review"), **compile_kw: Any) -> Any:
    b = E.StateGraph(Log)
    for name in names:
        b.add_node(name, lambda s, name=name: {"log": [name], "count": s.get("count", 0) + 1})
    b.add_edge(E.START, names[0])
    for a, z in zip(names, names[1:]):
        b.add_edge(a, z)
    return b.compile(checkpointer=saver, **compile_kw)


def loop(E: Any, saver: Any, limit: int = 3) -> Any:
    def step(s: Log) -> dict[str, Any]:
        return {"count": s.get("count", 0) + 1, "log": [f"step{s.get('count', 0)}"]}

    b = E.StateGraph(Log)
    b.add_node("step", step)
    b.add_node("finish", lambda s: {"log": ["finish"]})
    b.add_edge(E.START, "step")
    b.add_conditional_edges("step", lambda s: "step" if s["count"] < limit else "finish", ["step", "finish"])
    return b.compile(checkpointer=saver)


def asking(E: Any, saver: Any) -> Any:
    def draft(s: Log) -> dict[str, Any]:
        return {"log": ["draft"]}

    def review(s: Log) -> dict[str, Any]:
        answer = E.interrupt({"question": "publish?", "draft": s["log"][-1]})
        return {"log": [f"review:{answer}"], "note": answer}

    b = E.StateGraph(Log)
    b.add_node("draft", draft)
    b.add_node("review", review)
    b.add_node("publish", lambda s: {"log": ["publish"]})
    b.add_edge(E.START, "draft")
    b.add_edge("draft", "review")
    b.add_edge("review", "publish")
    return b.compile(checkpointer=saver)


def at(graph: Any, cfg: dict[str, Any], pred: Callable[[Any], bool]) -> Any:
    return next(s for s in graph.get_state_history(cfg) if pred(s))


# ------------------------------------------------------------------------------- the drawings
def test_a_plain_run_draws_a_chain_like_langgraph(tmp_path: Path) -> None:
    """One invoke: a chain input → each step → end, drawn the same on both engines."""
    def program(E: Any, saver: Any) -> Any:
        g = chain(E, saver)
        g.invoke({"log": ["start"]}, CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert shape(ref) == [(-1, "input", ("__start__",), 0, False), (0, "loop", ("plan",), 0, False),
                              (1, "loop", ("write",), 0, False), (2, "loop", ("review",), 0, False),
                              (3, "loop", (), 0, False)]


def test_several_runs_on_one_thread_continue_one_chain(tmp_path: Path) -> None:
    """Three invokes on one thread: one chain, each run's input checkpoint after the last end."""
    def program(E: Any, saver: Any) -> Any:
        g = chain(E, saver, ("a", "b"))
        for word in ("one", "two", "three"):
            g.invoke({"log": [word]}, CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["checkpoints"]) == 12 and ref["timeline"]["branch_points"] == []
        assert [c["step"] for c in ref["timeline"]["checkpoints"] if c["source"] == "input"] == [-1, 3, 7]


def test_an_interrupt_then_a_resume_marks_the_paused_checkpoint(tmp_path: Path) -> None:
    """interrupt() in a node: the paused checkpoint carries the interrupt; the resume goes on from it."""
    def program(E: Any, saver: Any) -> Any:
        g = asking(E, saver)
        g.invoke({"log": []}, CFG)
        g.invoke(E.Command(resume="yes"), CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        paused = [c for c in ref["timeline"]["checkpoints"] if c["interrupts"]]
        assert len(paused) == 1 and paused[0]["next"] == ["review"]
        assert paused[0]["details"]["interrupts"][0]["value"] == {"question": "publish?", "draft": "draft"}
        assert ref["timeline"]["checkpoints"][-1]["details"]["values"]["note"] == "yes"


def test_a_breakpoint_then_invoke_none_continues_the_chain(tmp_path: Path) -> None:
    """interrupt_before a node, then invoke(None): one chain through the breakpoint."""
    def program(E: Any, saver: Any) -> Any:
        g = chain(E, saver, interrupt_before=["write"])
        g.invoke({"log": []}, CFG)
        g.invoke(None, CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert ref["timeline"]["branch_points"] == [] and len(ref["timeline"]["checkpoints"]) == 5


def test_fork_from_an_old_checkpoint_then_run_the_fork(tmp_path: Path) -> None:
    """update_state on an old checkpoint, then invoke(None, fork_config): a branch that runs to its end."""
    def program(E: Any, saver: Any) -> Any:
        g = chain(E, saver)
        g.invoke({"log": []}, CFG)
        old = at(g, CFG, lambda s: s.next == ("write",))
        fork = g.update_state(old.config, {"note": "edited"})
        g.invoke(None, fork)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        t = ref["timeline"]
        assert len(t["branch_points"]) == 1 and len(t["checkpoints"]) == 8
        forked = [c for c in t["checkpoints"] if c["fork"]]
        assert [(c["source"], c["next"]) for c in forked] == [("update", ["write"])]
        assert t["checkpoints"][-1]["details"]["values"]["note"] == "edited"
        assert "style=dashed" in ref["dot"]


def test_three_forks_from_one_checkpoint_make_a_fan(tmp_path: Path) -> None:
    """Three edits of one checkpoint: one branch point with four children, three of them forks."""
    def program(E: Any, saver: Any) -> Any:
        g = chain(E, saver)
        g.invoke({"log": []}, CFG)
        old = at(g, CFG, lambda s: s.next == ("write",))
        for note in ("a", "b", "c"):
            g.invoke(None, g.update_state(old.config, {"note": note}))
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        t = ref["timeline"]
        assert len(t["branch_points"]) == 1 and sum(c["fork"] for c in t["checkpoints"]) == 3
        assert sum(1 for c in t["checkpoints"] if c["next"] == []) == 4  # four leaves


def test_replay_from_an_old_checkpoint_branches(tmp_path: Path) -> None:
    """invoke(None, old_config): the replay's first checkpoint is a child of the old one (a fork)."""
    def program(E: Any, saver: Any) -> Any:
        g = loop(E, saver, limit=3)
        g.invoke({"log": []}, CFG)
        old = at(g, CFG, lambda s: s.metadata["step"] == 1)
        g.invoke(None, old.config)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        t = ref["timeline"]
        assert len(t["branch_points"]) == 1
        assert [(c["step"], c["source"]) for c in t["checkpoints"] if c["fork"]] == [(2, "fork")]
        assert len(t["checkpoints"]) == 10 and t["checkpoints"][-1]["latest"]


def test_a_fork_of_a_replayed_branch_nests(tmp_path: Path) -> None:
    """Replay from step 0, then fork the replay's middle: two branch points, drawn alike."""
    def program(E: Any, saver: Any) -> Any:
        g = loop(E, saver, limit=4)
        g.invoke({"log": []}, CFG)
        first = at(g, CFG, lambda s: s.metadata["step"] == 0)
        g.invoke(None, first.config)
        newest_mid = next(s for s in g.get_state_history(CFG) if s.metadata["step"] == 2)
        g.invoke(None, g.update_state(newest_mid.config, {"count": 10}, as_node="step"))
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["branch_points"]) == 2


def test_update_state_as_a_node_routes_through_its_conditional_edge(tmp_path: Path) -> None:
    """update_state(as_node="step") on an old checkpoint: next follows step's route on the new state."""
    def program(E: Any, saver: Any) -> Any:
        g = loop(E, saver, limit=5)
        g.invoke({"log": []}, CFG)
        old = at(g, CFG, lambda s: s.metadata["step"] == 2)
        fork = g.update_state(old.config, {"count": 9}, as_node="step")
        g.invoke(None, fork)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        fork = next(c for c in ref["timeline"]["checkpoints"] if c["fork"])
        assert fork["source"] == "update" and fork["next"] == ["finish"]


def test_update_state_on_the_latest_checkpoint_is_not_a_fork(tmp_path: Path) -> None:
    """update_state on the thread (its latest checkpoint): the chain grows, no branch."""
    def program(E: Any, saver: Any) -> Any:
        g = chain(E, saver)
        g.invoke({"log": []}, CFG)
        g.update_state(CFG, {"note": "after"}, as_node="review")
        g.update_state(CFG, {"log": ["by hand"]})
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        t = ref["timeline"]
        assert t["branch_points"] == [] and [c["source"] for c in t["checkpoints"][-2:]] == ["update", "update"]


def test_command_goto_from_a_node_draws_the_jump(tmp_path: Path) -> None:
    """A node returning Command(goto=...): next of each checkpoint names the node jumped to."""
    def program(E: Any, saver: Any) -> Any:
        def triage(s: Log) -> Any:
            return E.Command(update={"log": ["triage"]}, goto="urgent" if s.get("note") == "fire" else "later")

        b = E.StateGraph(Log)
        b.add_node("triage", triage, destinations=("urgent", "later"))
        b.add_node("urgent", lambda s: {"log": ["urgent"]})
        b.add_node("later", lambda s: {"log": ["later"]})
        b.add_edge(E.START, "triage")
        g = b.compile(checkpointer=saver)
        g.invoke({"note": "fire"}, CFG)
        g.invoke({"note": "calm"}, CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert [tuple(c["next"]) for c in ref["timeline"]["checkpoints"]].count(("urgent",)) == 1
        assert [tuple(c["next"]) for c in ref["timeline"]["checkpoints"]].count(("later",)) == 1


def test_command_update_and_goto_as_input_then_replay_it(tmp_path: Path) -> None:
    """invoke(Command(update=, goto=)) on a finished thread, then a replay of that checkpoint."""
    def program(E: Any, saver: Any) -> Any:
        g = chain(E, saver)
        g.invoke({"log": []}, CFG)
        g.invoke(E.Command(update={"note": "again"}, goto="review"), CFG)
        jumped = at(g, CFG, lambda s: s.metadata["step"] == 3)  # the Command's checkpoint
        g.invoke(None, jumped.config)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["branch_points"]) == 1


def fanout(E: Any, saver: Any) -> Any:
    class Fan(TypedDict, total=False):
        topics: list
        results: Annotated[list, operator.add]
        summary: str

    b = E.StateGraph(Fan)
    b.add_node("plan", lambda s: {"topics": ["cats", "<dogs>", "owls"]})
    b.add_node("work", lambda a: {"results": [a["topic"].upper()]})
    b.add_node("summarize", lambda s: {"summary": "+".join(sorted(s["results"]))})
    b.add_edge(E.START, "plan")
    b.add_conditional_edges("plan", lambda s: [E.Send("work", {"topic": t}) for t in s["topics"]], ["work"])
    b.add_edge("work", "summarize")
    return b.compile(checkpointer=saver)


def test_a_send_fan_out_shows_every_send_in_next(tmp_path: Path) -> None:
    """Map-reduce with Send: the step that fans out lists work three times in next."""
    def program(E: Any, saver: Any) -> Any:
        g = fanout(E, saver)
        g.invoke({"topics": []}, CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert ("work", "work", "work") in [tuple(c["next"]) for c in ref["timeline"]["checkpoints"]]
        assert "next: work, work, work" in ref["dot"]


def test_replay_and_fork_of_a_send_step(tmp_path: Path) -> None:
    """Replay the checkpoint with pending Sends, and fork it: both branches keep the Sends."""
    def program(E: Any, saver: Any) -> Any:
        g = fanout(E, saver)
        g.invoke({"topics": []}, CFG)
        sends = at(g, CFG, lambda s: s.next == ("work", "work", "work"))
        g.invoke(None, sends.config)
        g.update_state(sends.config, {"summary": "by hand"})
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["branch_points"]) == 1
        assert sum(1 for c in ref["timeline"]["checkpoints"] if c["next"] == ["work", "work", "work"]) == 3


def diamond(E: Any, saver: Any, fail: dict[str, bool] | None = None) -> Any:
    """a → (b1 → b2, c) → d. Run with durability="sync": with LangGraph's default "async" its
    saved checkpoint of step 2 may hold the join barrier's later state (a shared set saved
    after step 3 changed it) and list a phantom `d` in next (tests/persistence,
    test_full_history_of_branches_of_different_length_joined); lgnb saves what step 2 had."""
    b1_done = threading.Event()

    def mk(name: str) -> Any:
        def node(s: Log) -> dict[str, Any]:
            if fail is not None and name == "c" and fail.get("c"):
                # after b1 is done: a sibling still running when c fails is cancelled, and
                # LangGraph then saves a CancelledError for it (thread timing, not the program)
                b1_done.wait(5)
                time.sleep(0.05)
                raise ValueError("c is down <b>now</b>")
            if name == "b1":
                b1_done.set()
            return {"log": [name]}
        return node

    b = E.StateGraph(Log)
    for n in ("a", "b1", "b2", "c", "d"):
        b.add_node(n, mk(n))
    b.add_edge(E.START, "a")
    b.add_edge("a", "b1")
    b.add_edge("a", "c")
    b.add_edge("b1", "b2")
    b.add_edge(["b2", "c"], "d")
    return b.compile(checkpointer=saver)


def test_parallel_branches_joined_draw_one_chain(tmp_path: Path) -> None:
    """a → (b1 → b2, c) → d: parallel steps are one checkpoint each, next lists both branches."""
    def program(E: Any, saver: Any) -> Any:
        g = diamond(E, saver)
        g.invoke({"log": []}, CFG, durability="sync")
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert ("b1", "c") in [tuple(c["next"]) for c in ref["timeline"]["checkpoints"]]


def _failed_then_retried(E: Any, saver: Any) -> Any:
    """The diamond on `CFG`: branch c raises, then (fixed) the thread is run on with None."""
    fail = {"c": True}
    g = diamond(E, saver, fail)
    try:
        g.invoke({"log": []}, CFG, durability="sync")
    except ValueError:
        pass
    fail["c"] = False
    g.invoke(None, CFG, durability="sync")
    return g


def test_a_failed_step_then_a_retry_run(tmp_path: Path) -> None:
    """A branch raises: its checkpoint shows the error in its task; the retry after the fix finishes."""
    def program(E: Any, saver: Any) -> Any:
        return _failed_then_retried(E, saver), CFG

    for ref in same_drawing(program, tmp_path):
        tasks = [c["details"]["tasks"] for c in ref["timeline"]["checkpoints"]]
        assert tasks[2] == [{"name": "b1"}, {"name": "c", "error": "ValueError('c is down <b>now</b>')"}]
        assert ref["timeline"]["branch_points"] == [] and ref["timeline"]["checkpoints"][-1]["next"] == []


def test_a_thread_left_failed_shows_the_error_on_its_latest_checkpoint(tmp_path: Path) -> None:
    """A run that raised and was not retried: the latest checkpoint's task carries the error."""
    def program(E: Any, saver: Any) -> Any:
        g = diamond(E, saver, {"c": True})
        try:
            g.invoke({"log": []}, CFG, durability="sync")
        except ValueError:
            pass
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        last = ref["timeline"]["checkpoints"][-1]
        assert [t for t in last["details"]["tasks"] if "error" in t][0]["error"] == "ValueError('c is down <b>now</b>')"


def two_questions(E: Any, saver: Any) -> Any:
    def ask(name: str) -> Any:
        def node(s: Log) -> dict[str, Any]:
            return {"log": [f"{name}:{E.interrupt(f'{name}?')}"]}
        return node

    b = E.StateGraph(Log)
    b.add_node("left", ask("left"))
    b.add_node("right", ask("right"))
    b.add_edge(E.START, "left")
    b.add_edge(E.START, "right")
    return b.compile(checkpointer=saver)


def test_two_parallel_interrupts_count_two_on_the_paused_checkpoint(tmp_path: Path) -> None:
    """Two branches ask at once: the paused node says two interrupts; answered by id, the thread ends."""
    def program(E: Any, saver: Any) -> Any:
        g = two_questions(E, saver)
        g.invoke({"log": []}, CFG)
        state = g.get_state(CFG)
        g.invoke(E.Command(resume={i.id: f"ok-{i.value}" for i in state.interrupts}), CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert [c["interrupts"] for c in ref["timeline"]["checkpoints"]].count(2) == 1
        assert "⏸ interrupts (2)" in ref["dot"]


def child_graph(E: Any, **compile_kw: Any) -> Any:
    def ask(s: Log) -> dict[str, Any]:
        return {"log": [f"child:{E.interrupt('go on?')}"]}

    b = E.StateGraph(Log)
    b.add_node("prep", lambda s: {"log": ["prep"]})
    b.add_node("ask", ask)
    b.add_edge(E.START, "prep")
    b.add_edge("prep", "ask")
    return b.compile(**compile_kw)


def parent_of(E: Any, saver: Any, child: Any) -> Any:
    b = E.StateGraph(Log)
    b.add_node("intro", lambda s: {"log": ["intro"]})
    b.add_node("child", child)
    b.add_node("outro", lambda s: {"log": ["outro"]})
    b.add_edge(E.START, "intro")
    b.add_edge("intro", "child")
    b.add_edge("child", "outro")
    return b.compile(checkpointer=saver)


def test_an_interrupt_inside_a_subgraph_draws_the_parent_thread(tmp_path: Path) -> None:
    """A subgraph asks: the parent's timeline marks the paused step; its resume ends the thread."""
    def program(E: Any, saver: Any) -> Any:
        g = parent_of(E, saver, child_graph(E))
        g.invoke({"log": []}, CFG)
        g.invoke(E.Command(resume="yes"), CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert [c["next"] for c in ref["timeline"]["checkpoints"] if c["interrupts"]] == [["child"]]


def test_the_history_of_a_paused_subgraph_namespace(tmp_path: Path) -> None:
    """The subgraph's own checkpoints (config from get_state(subgraphs=True)) drawn as their own timeline."""
    def program(E: Any, saver: Any) -> Any:
        g = parent_of(E, saver, child_graph(E))
        g.invoke({"log": []}, CFG)
        sub = g.get_state(CFG, subgraphs=True).tasks[0].state.config
        conf = {k: v for k, v in sub["configurable"].items() if k != "checkpoint_id"}
        return g, {"configurable": conf}

    for ref in same_drawing(program, tmp_path):
        t = ref["timeline"]
        assert [c["source"] for c in t["checkpoints"]][0] == "input" and t["checkpoints"][-1]["interrupts"] == 1


def test_a_subgraph_with_its_own_checkpointer_keeps_its_thread_across_runs(tmp_path: Path) -> None:
    """checkpointer=True: the subgraph's namespace keeps one timeline across two parent runs."""
    def program(E: Any, saver: Any) -> Any:
        b = E.StateGraph(Log)
        b.add_node("count", lambda s: {"count": s.get("count", 0) + 1, "log": ["counted"]})
        b.add_edge(E.START, "count")
        child = b.compile(checkpointer=True)

        def call(s: Log) -> dict[str, Any]:
            out = child.invoke({"log": ["in"]})
            return {"note": f"child count {out['count']}"}

        p = E.StateGraph(Log)
        p.add_node("call", call)
        p.add_edge(E.START, "call")
        g = p.compile(checkpointer=saver)
        g.invoke({"log": []}, CFG)
        g.invoke({"log": []}, CFG)
        assert g.get_state(CFG).values["note"] == "child count 2"
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["checkpoints"]) == 6


def test_the_own_timeline_of_a_subgraph_with_its_own_checkpointer(tmp_path: Path) -> None:
    """checkpointer=True: the subgraph's namespace ("call") is one chain across both parent runs."""
    def program(E: Any, saver: Any) -> Any:
        b = E.StateGraph(Log)
        b.add_node("count", lambda s: {"count": s.get("count", 0) + 1, "log": ["counted"]})
        b.add_edge(E.START, "count")
        child = b.compile(checkpointer=True)

        p = E.StateGraph(Log)
        p.add_node("call", lambda s: {"note": str(child.invoke({"log": ["in"]})["count"])})
        p.add_edge(E.START, "call")
        g = p.compile(checkpointer=saver)
        g.invoke({"log": []}, CFG)
        g.invoke({"log": []}, CFG)
        return g, {"configurable": {"thread_id": "t1", "checkpoint_ns": "call"}}

    for ref in same_drawing(program, tmp_path):
        assert [(c["step"], c["source"]) for c in ref["timeline"]["checkpoints"]] == [
            (-1, "input"), (0, "loop"), (1, "loop"), (2, "input"), (3, "loop"), (4, "loop")]
        assert ref["timeline"]["checkpoints"][-1]["details"]["values"]["count"] == 2


def test_a_functional_workflow_with_an_interrupt_and_a_replay(tmp_path: Path) -> None:
    """@entrypoint with @task calls that asks, is answered, then is replayed from the question."""
    def program(E: Any, saver: Any) -> Any:
        func = E.func

        @func.task
        def draft(topic: str) -> str:
            return f"a text about {topic}"

        @func.entrypoint(checkpointer=saver)
        def flow(topic: str) -> dict[str, Any]:
            text = draft(topic).result()
            answer = E.interrupt({"review": text})
            return {"text": text, "answer": answer}

        flow.invoke("<tea>", CFG)
        flow.invoke(E.Command(resume="fine"), CFG)
        flow.invoke(None, at(flow, CFG, lambda s: bool(s.interrupts)).config)
        return flow, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["branch_points"]) == 1
        assert sum(c["interrupts"] for c in ref["timeline"]["checkpoints"]) >= 2


def test_nested_subgraphs_interrupt_and_resume(tmp_path: Path) -> None:
    """parent → middle → child that asks: the parent's timeline through the pause and the resume."""
    def program(E: Any, saver: Any) -> Any:
        m = E.StateGraph(Log)
        m.add_node("inner", child_graph(E))
        m.add_edge(E.START, "inner")
        g = parent_of(E, saver, m.compile())
        g.invoke({"log": []}, CFG)
        g.invoke(E.Command(resume="deep"), CFG)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert ref["timeline"]["checkpoints"][-1]["details"]["values"]["log"][-2:] == ["child:deep", "outro"]


def test_durability_exit_draws_only_what_was_saved(tmp_path: Path) -> None:
    """durability="exit": only the run's last checkpoint is saved; its parent link follows what is listed."""
    def program(E: Any, saver: Any) -> Any:
        g = chain(E, saver)
        g.invoke({"log": []}, CFG, durability="exit")
        g.invoke({"log": ["again"]}, CFG, durability="exit")
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert shape(ref) == [(3, "loop", (), 0, False), (8, "loop", (), 0, False)]
        assert len(ref["timeline"]["links"]) == 1  # the second run's end follows the first's


def test_durability_exit_then_fork_and_replay(tmp_path: Path) -> None:
    """A thread saved with durability="exit", forked and replayed from what it kept."""
    def program(E: Any, saver: Any) -> Any:
        g = asking(E, saver)
        g.invoke({"log": []}, CFG, durability="exit")
        paused = g.get_state(CFG)
        g.update_state(paused.config, {"note": "skip"}, as_node="review")
        g.invoke(None, paused.config, durability="exit")
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert shape(ref) == [(1, "loop", ("review",), 1, False), (2, "update", ("publish",), 0, False),
                              (2, "fork", ("review",), 1, True)]


def test_bulk_update_state_draws_one_checkpoint_per_super_step(tmp_path: Path) -> None:
    """bulk_update_state with two super-steps of updates: two update checkpoints in one chain."""
    def program(E: Any, saver: Any) -> Any:
        g = diamond(E, saver)
        g.invoke({"log": []}, CFG, durability="sync")
        start = at(g, CFG, lambda s: s.next == ("a",))
        g.bulk_update_state(start.config, [
            [_state_update(E)({"log": ["A by hand"]}, "a")],
            [_state_update(E)({"log": ["b1"]}, "b1"), _state_update(E)({"log": ["c"]}, "c")],
        ])
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        t = ref["timeline"]
        assert len(t["branch_points"]) == 1 and [c["source"] for c in t["checkpoints"][-2:]] == ["update", "update"]


def _state_update(E: Any) -> Any:
    return importlib.import_module(f"{E.root}.types").StateUpdate


def test_hundreds_of_steps_collapse_to_one_segment_drawn_alike(tmp_path: Path) -> None:
    """A 300-step loop: 303 checkpoints drawn as first, one segment, the last ones."""
    def program(E: Any, saver: Any) -> Any:
        g = loop(E, saver, limit=300)
        g.invoke({"log": []}, {**CFG, "recursion_limit": 1000})
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["checkpoints"]) == 303
        [seg] = ref["drawn"]["segments"]
        assert seg["count"] > 290 and len(ref["drawn"]["checkpoints"]) < 10


def test_hundreds_of_steps_with_forks_in_the_middle(tmp_path: Path) -> None:
    """A 200-step loop forked at step 100 and replayed at step 50: runs fold around the branch points."""
    def program(E: Any, saver: Any) -> Any:
        g = loop(E, saver, limit=200)
        g.invoke({"log": []}, {**CFG, "recursion_limit": 1000})
        mid = at(g, CFG, lambda s: s.metadata["step"] == 100)
        g.invoke(None, g.update_state(mid.config, {"count": 198}, as_node="step"))
        early = at(g, CFG, lambda s: s.metadata["step"] == 50 and s.next == ("step",))
        g.update_state(early.config, {"note": "look here"})
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["branch_points"]) == 2 and len(ref["drawn"]["segments"]) >= 2


def test_threads_run_by_langgraph_on_lgnbs_sqlite_saver_draw_alike(tmp_path: Path) -> None:
    """lgnb's SQLite saver under both engines (the view's lazy read path): forks, interrupts, replays."""
    def program(E: Any, saver: Any) -> Any:
        g = asking(E, saver)
        g.invoke({"log": []}, CFG)
        g.invoke(E.Command(resume="no"), CFG)
        first = at(g, CFG, lambda s: s.next == ("review",))
        g.invoke(None, first.config)
        g.update_state(first.config, {"note": "skip"}, as_node="review")
        return g, CFG

    refs = same_drawing(program, tmp_path, kinds=("lgnb_sqlite",))
    assert len(refs[0]["timeline"]["branch_points"]) == 1


def test_messages_edited_by_id_and_forked(tmp_path: Path) -> None:
    """A chat thread: a message replaced by id on an old checkpoint, the fork run on."""
    def program(E: Any, saver: Any) -> Any:
        from langchain_core.messages import AIMessage

        b = E.StateGraph(E.MessagesState)
        b.add_node("bot", lambda s: {"messages": [AIMessage(f"reply {len(s['messages'])}", id=f"ai-{len(s['messages'])}")]})
        b.add_edge(E.START, "bot")
        g = b.compile(checkpointer=saver)
        g.invoke({"messages": [("user", "hi")]}, CFG)
        g.invoke({"messages": [("user", "again")]}, CFG)
        first_end = at(g, CFG, lambda s: s.metadata["step"] == 1)
        fork = g.update_state(first_end.config, {"messages": [AIMessage("edited <i>reply</i>", id="ai-1")]})
        g.invoke({"messages": [("user", "after the edit")]}, fork)
        return g, CFG

    for ref in same_drawing(program, tmp_path):
        assert len(ref["timeline"]["branch_points"]) == 1


# ------------------------------------------------------------------------------- the view's actions
def _wait_replay(view: HistoryView) -> None:
    run = view.runs[-1]
    run.wait(30)
    deadline = time.monotonic() + 10
    while view.busy and time.monotonic() < deadline:
        time.sleep(0.02)
    assert view.busy == "" and view.error == "", (view.busy, view.error)


def by_view_and_by_hand(tmp: Path, build: Callable[[Any, Any], Any], prepare: Callable[[Any, Any], None],
                        act_in_view: Callable[[Any, Any, HistoryView], None],
                        act_by_hand: Callable[[Any, Any], None], *, kinds: tuple[str, ...] = KINDS,
                        **view_kw: Any) -> list[Any]:
    """The thread after the view's actions equals the thread after the same actions done by
    hand (on each engine), and both engines leave the same thread. Returns the references."""
    refs = []
    for kind in kinds:
        def scenario(E: Any, kind: str = kind) -> Any:
            drawn = []
            for how in ("view", "hand"):
                with open_saver(E, kind, tmp) as saver:
                    g = build(E, saver)
                    prepare(E, g)
                    if how == "view":
                        view = history(g, CFG, limit=None, **view_kw)
                        try:
                            act_in_view(E, g, view)
                        finally:
                            view.close()
                    else:
                        act_by_hand(E, g)
                    drawn.append(drawing(g, CFG))
            assert _diff.normalize(drawn[0]) == _diff.normalize(drawn[1]), "the view did not do what the user asked"
            return drawn[0]
        refs.append(differential(scenario))
    return refs


def _find(view: HistoryView, pred: Callable[[Any], bool]) -> str:
    return next(c.id for c in view.model.checkpoints if pred(c))


def test_fork_with_edits_from_the_view_is_update_state_by_hand(tmp_path: Path) -> None:
    """Fork button with edited fields and as_node: the same checkpoint update_state writes by hand."""
    def view_fork(E: Any, g: Any, view: HistoryView) -> None:
        target = _find(view, lambda c: c.next == ("write",))
        view._msg_fork({"kind": "fork", "id": target, "as_node": "plan",
                        "values": {"note": "<b>edited</b>", "count": "7", "log": '["by hand"]'}})
        assert view.error == "" and view.fork_errors == {}
        assert view.model.by_id(view.selected).fork

    def hand_fork(E: Any, g: Any) -> None:
        target = at(g, CFG, lambda s: s.next == ("write",))
        g.update_state(target.config, {"note": "<b>edited</b>", "count": 7, "log": ["by hand"]}, as_node="plan")

    refs = by_view_and_by_hand(tmp_path, chain, lambda E, g: g.invoke({"log": []}, CFG), view_fork, hand_fork)
    assert len(refs[0]["timeline"]["branch_points"]) == 1


def test_fork_then_replay_the_fork_from_the_view(tmp_path: Path) -> None:
    """Fork from the view, then Replay from the new checkpoint: = update_state + invoke(None, fork) by hand."""
    def in_view(E: Any, g: Any, view: HistoryView) -> None:
        target = _find(view, lambda c: c.step == 1)
        view._msg_fork({"kind": "fork", "id": target, "values": {"count": "100"}, "as_node": "step"})
        assert view.error == ""
        view._msg_replay({"kind": "replay", "id": view.selected})
        _wait_replay(view)

    def by_hand(E: Any, g: Any) -> None:
        target = at(g, CFG, lambda s: s.metadata["step"] == 1)
        g.invoke(None, g.update_state(target.config, {"count": 100}, as_node="step"))

    refs = by_view_and_by_hand(tmp_path, lambda E, s: loop(E, s, limit=4),
                               lambda E, g: g.invoke({"log": []}, CFG), in_view, by_hand)
    assert refs[0]["timeline"]["checkpoints"][-1]["details"]["values"]["log"][-1] == "finish"


def test_replay_from_the_view_is_invoke_none_on_that_checkpoint(tmp_path: Path) -> None:
    """Replay button on an old checkpoint: the thread holds what invoke(None, old_config) leaves."""
    def in_view(E: Any, g: Any, view: HistoryView) -> None:
        view._msg_replay({"kind": "replay", "id": _find(view, lambda c: c.step == 1)})
        _wait_replay(view)

    def by_hand(E: Any, g: Any) -> None:
        g.invoke(None, at(g, CFG, lambda s: s.metadata["step"] == 1).config)

    by_view_and_by_hand(tmp_path, lambda E, s: loop(E, s, limit=3),
                        lambda E, g: g.invoke({"log": []}, CFG), in_view, by_hand)


def test_replay_of_a_send_step_from_the_view(tmp_path: Path) -> None:
    """Replay the checkpoint with three pending Sends from the view: every Send runs again."""
    def in_view(E: Any, g: Any, view: HistoryView) -> None:
        view._msg_replay({"kind": "replay", "id": _find(view, lambda c: c.next == ("work", "work", "work"))})
        _wait_replay(view)

    def by_hand(E: Any, g: Any) -> None:
        g.invoke(None, at(g, CFG, lambda s: s.next == ("work", "work", "work")).config)

    by_view_and_by_hand(tmp_path, fanout, lambda E, g: g.invoke({"topics": []}, CFG), in_view, by_hand)


def test_replay_of_a_paused_checkpoint_from_the_view_asks_again(tmp_path: Path) -> None:
    """Replay the checkpoint that asked (after it was answered): the replay pauses at the question again."""
    def prepare(E: Any, g: Any) -> None:
        g.invoke({"log": []}, CFG)
        g.invoke(E.Command(resume="yes"), CFG)

    def in_view(E: Any, g: Any, view: HistoryView) -> None:
        view._msg_replay({"kind": "replay", "id": _find(view, lambda c: c.interrupts == 1)})
        _wait_replay(view)
        assert view.runs[-1].status in ("interrupted", "paused", "waiting"), view.runs[-1].status

    def by_hand(E: Any, g: Any) -> None:
        g.invoke(None, at(g, CFG, lambda s: bool(s.interrupts)).config)

    refs = by_view_and_by_hand(tmp_path, asking, prepare, in_view, by_hand)
    assert refs[0]["timeline"]["checkpoints"][-1]["interrupts"] == 1


def test_replay_of_a_graph_with_async_nodes_from_the_view(tmp_path: Path) -> None:
    """async def nodes: history(..., use_async=True) replays with astream = await ainvoke(None, old) by hand."""
    import asyncio

    def build(E: Any, saver: Any) -> Any:
        async def think(s: Log) -> dict[str, Any]:
            await asyncio.sleep(0)
            return {"log": ["think"], "count": s.get("count", 0) + 1}

        async def answer(s: Log) -> dict[str, Any]:
            return {"log": [f"answer after {s['count']}"]}

        b = E.StateGraph(Log)
        b.add_node("think", think)
        b.add_node("answer", answer)
        b.add_edge(E.START, "think")
        b.add_edge("think", "answer")
        return b.compile(checkpointer=saver)

    def in_view(E: Any, g: Any, view: HistoryView) -> None:
        view._msg_replay({"kind": "replay", "id": _find(view, lambda c: c.next == ("think",))})
        _wait_replay(view)
        assert view.runs[-1].status == "done", view.runs[-1].status

    def by_hand(E: Any, g: Any) -> None:
        asyncio.run(g.ainvoke(None, at(g, CFG, lambda s: s.next == ("think",)).config))

    refs = by_view_and_by_hand(tmp_path, build, lambda E, g: asyncio.run(g.ainvoke({"log": []}, CFG)),
                               in_view, by_hand, kinds=("memory",), use_async=True)
    assert len(refs[0]["timeline"]["branch_points"]) == 1


def test_retry_a_failed_step_from_the_view_after_the_fix(tmp_path: Path) -> None:
    """Replay the failed checkpoint from the view (still failing, then fixed) = invoke(None, failed) by hand."""
    fail = {"c": True}

    def build(E: Any, saver: Any) -> Any:  # no join barrier: replays run with the default durability
        fail["c"] = True
        b1_done = threading.Event()

        def b1(s: Log) -> dict[str, Any]:
            b1_done.set()
            return {"log": ["b1"]}

        def c(s: Log) -> dict[str, Any]:
            if fail["c"]:
                b1_done.wait(5)  # as in `diamond`: no sibling left running to be cancelled
                time.sleep(0.05)
                raise ValueError("c is down")
            return {"log": ["c"]}

        b = E.StateGraph(Log)
        b.add_node("a", lambda s: {"log": ["a"]})
        b.add_node("b1", b1)
        b.add_node("c", c)
        b.add_node("d", lambda s: {"log": ["d"]})
        b.add_edge(E.START, "a")
        b.add_edge("a", "b1")
        b.add_edge("a", "c")
        b.add_edge("b1", "d")
        b.add_edge("c", "d")
        return b.compile(checkpointer=saver)

    def prepare(E: Any, g: Any) -> None:
        try:
            g.invoke({"log": []}, CFG)
        except ValueError:
            pass

    def in_view(E: Any, g: Any, view: HistoryView) -> None:
        failed = _find(view, lambda c: c.next == ("b1", "c"))
        view._msg_replay({"kind": "replay", "id": failed})
        _settle(view)
        assert view.runs[-1].status == "error" and "replay from step 1: error" == view.notice
        fail["c"] = False
        view._msg_replay({"kind": "replay", "id": failed})
        _wait_replay(view)
        assert view.runs[-1].status == "done"

    def by_hand(E: Any, g: Any) -> None:
        failed = at(g, CFG, lambda s: s.next == ("b1", "c"))
        try:
            g.invoke(None, failed.config)
        except ValueError:
            pass
        fail["c"] = False
        g.invoke(None, failed.config)

    refs = by_view_and_by_hand(tmp_path, build, prepare, in_view, by_hand)
    assert len(refs[0]["timeline"]["branch_points"]) == 1


def _settle(view: HistoryView) -> None:
    run = view.runs[-1]
    deadline = time.monotonic() + 30
    while (run.status in ("running", "pending") or view.busy) and time.monotonic() < deadline:
        time.sleep(0.02)


def test_fork_as_the_asking_node_skips_the_question(tmp_path: Path) -> None:
    """On a paused thread, fork the paused checkpoint as the asking node: its answer given by hand."""
    def in_view(E: Any, g: Any, view: HistoryView) -> None:
        paused = _find(view, lambda c: c.interrupts == 1)
        view._msg_fork({"kind": "fork", "id": paused, "as_node": "review", "values": {"note": "approved"}})
        assert view.error == ""
        view._msg_replay({"kind": "replay", "id": view.selected})
        _wait_replay(view)

    def by_hand(E: Any, g: Any) -> None:
        paused = g.get_state(CFG)
        g.invoke(None, g.update_state(paused.config, {"note": "approved"}, as_node="review"))

    refs = by_view_and_by_hand(tmp_path, asking, lambda E, g: g.invoke({"log": []}, CFG), in_view, by_hand)
    assert refs[0]["timeline"]["checkpoints"][-1]["details"]["values"]["log"][-1] == "publish"


def test_fork_inside_a_subgraph_namespace_from_its_view(tmp_path: Path) -> None:
    """A view on a paused subgraph's namespace: its fork is update_state on the subgraph's checkpoint."""
    def sub_config(g: Any) -> dict[str, Any]:
        sub = g.get_state(CFG, subgraphs=True).tasks[0].state.config
        return {"configurable": {k: v for k, v in sub["configurable"].items() if k != "checkpoint_id"}}

    def scenario(E: Any) -> Any:
        out = []
        for how in ("view", "hand"):
            with open_saver(E, "memory", tmp_path) as saver:
                g = parent_of(E, saver, child_graph(E))
                g.invoke({"log": []}, CFG)
                sub = sub_config(g)
                if how == "view":
                    view = history(g, sub)
                    first = _find(view, lambda c: c.step == 0)
                    view._msg_fork({"kind": "fork", "id": first, "as_node": "prep", "values": {"note": "sub"}})
                    assert view.error == "", view.error
                    view.close()
                else:
                    first = at(g, sub, lambda s: s.metadata["step"] == 0)
                    g.update_state(first.config, {"note": "sub"}, as_node="prep")
                out.append([drawing(g, sub, view=False), drawing(g, CFG)])
        assert _diff.normalize(out[0]) == _diff.normalize(out[1])
        return out[0]

    ref = differential(scenario)
    assert len(ref[0]["timeline"]["branch_points"]) == 1


def test_fork_of_a_pydantic_state_from_the_view_is_update_state_by_hand(tmp_path: Path) -> None:
    """A pydantic state: the form's fields follow its schema; the view's fork = update_state by hand."""
    from pydantic import BaseModel, Field

    class Article(BaseModel):
        topic: str
        words: int = 0
        tags: Annotated[list[str], operator.add] = Field(default_factory=list)

    def build(E: Any, saver: Any) -> Any:
        b = E.StateGraph(Article)
        b.add_node("outline", lambda s: {"words": 10, "tags": ["outlined"]})
        b.add_node("write", lambda s: {"words": s.words * 10, "tags": ["written"]})
        b.add_edge(E.START, "outline")
        b.add_edge("outline", "write")
        return b.compile(checkpointer=saver)

    def in_view(E: Any, g: Any, view: HistoryView) -> None:
        target = _find(view, lambda c: c.next == ("write",))
        view._msg_select({"id": target})
        fields = {f["key"]: (f["kind"], f["reducer"]) for f in view.details["form"]["fields"]}
        assert fields == {"topic": ("string", False), "words": ("integer", False), "tags": ("json", True)}
        view._msg_fork({"kind": "fork", "id": target, "values": {"words": "3", "tags": '["edited"]'}})
        assert view.error == "" and view.fork_errors == {}
        view._msg_replay({"kind": "replay", "id": view.selected})
        _wait_replay(view)

    def by_hand(E: Any, g: Any) -> None:
        target = at(g, CFG, lambda s: s.next == ("write",))
        g.invoke(None, g.update_state(target.config, {"words": 3, "tags": ["edited"]}))

    refs = by_view_and_by_hand(tmp_path, build, lambda E, g: g.invoke({"topic": "<tea>"}, CFG), in_view, by_hand)
    assert refs[0]["timeline"]["checkpoints"][-1]["details"]["values"]["words"] == 30


def test_inspecting_every_checkpoint_shows_what_get_state_says(tmp_path: Path) -> None:
    """Clicking each checkpoint of a thread with forks, interrupts and an error shows its snapshot."""
    def scenario(E: Any) -> Any:
        with open_saver(E, "sqlite", tmp_path) as saver:
            g = _failed_then_retried(E, saver)
            g.update_state(at(g, CFG, lambda s: s.next == ("a",)).config, {"note": "<script>x</script>"})
            view = history(g, CFG)
            shown = []
            try:
                for c in view.model.checkpoints:
                    view._msg_select({"id": c.id})
                    snap = g.get_state(view.checkpoint_config(c.id))
                    details = {k: v for k, v in view.details.items() if k not in ("id", "form")}
                    assert details == snapshot_details(snap)
                    assert view.details["form"]["as_node"] == ["a", "b1", "b2", "c", "d"]
                    shown.append({**details, "form": view.details["form"]})
                page = view._static_html()
            finally:
                view.close()
            assert "<script>" not in page
            return shown

    differential(scenario)


def test_the_diff_between_a_fork_and_its_original_from_the_view(tmp_path: Path) -> None:
    """Shift-click a fork's end and the original end: the diff names what the fork changed."""
    def scenario(E: Any) -> Any:
        with open_saver(E, "memory", tmp_path) as saver:
            g = chain(E, saver)
            g.invoke({"log": []}, CFG)
            g.invoke(None, g.update_state(at(g, CFG, lambda s: s.next == ("write",)).config, {"note": "fork"}))
            view = history(g, CFG)
            ends = [c.id for c in view.model.checkpoints if c.next == ()]
            view._msg_select({"id": ends[1]})
            view._msg_compare({"id": ends[0]})
            diff = dict(view.diff)
            view.close()
            assert diff["added"] == [{"key": "note", "after": "fork"}]
            return diff

    differential(scenario)


def test_state_text_is_escaped_in_the_drawing_and_the_snapshot(tmp_path: Path) -> None:
    """Node names and values with HTML: the DOT and the saved-notebook HTML carry them as text only."""
    hostile = '<img src=x onerror="alert(1)">'

    def scenario(E: Any) -> Any:
        with open_saver(E, "memory", tmp_path) as saver:
            b = E.StateGraph(Log)
            b.add_node(hostile, lambda s: {"note": hostile, "log": ["</pre><script>alert(2)</script>"]})
            b.add_node("after", lambda s: {"log": ["after"]})
            b.add_edge(E.START, hostile)
            b.add_edge(hostile, "after")
            g = b.compile(checkpointer=saver, interrupt_before=["after"])
            g.invoke({"log": []}, CFG)
            view = history(g, CFG)
            view._msg_select({"id": view.model.latest})
            page = view._static_html()
            view.close()
            assert "<img" not in page and "<script" not in page and "onerror=\"" not in page
            assert html.escape(hostile) in page or "&lt;img" in page
            out = drawing(g, CFG)
            assert "label=<" not in out["dot"]
            return out

    differential(scenario)


def test_a_view_following_a_run_on_the_thread_ends_with_the_run_s_drawing(tmp_path: Path) -> None:
    """follow(run): once the run ends the view draws exactly the thread's final history."""
    from lgnb.widgets import run

    def scenario(E: Any) -> Any:
        with open_saver(E, "memory", tmp_path) as saver:
            g = loop(E, saver, limit=5)
            g.invoke({"log": []}, CFG)
            view = history(g, CFG)
            r = run(g, None, at(g, CFG, lambda s: s.metadata["step"] == 2).config, display=False)
            view.follow(r)
            r.wait(30)
            deadline = time.monotonic() + 5
            while len(view.model.checkpoints) != len(list(g.get_state_history(CFG))) and time.monotonic() < deadline:
                time.sleep(0.02)
            out = drawing(g, CFG)
            assert view.dot == out["drawn_dot"]
            view.close()
            return out

    differential(scenario)


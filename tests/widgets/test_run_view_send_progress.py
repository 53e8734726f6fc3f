"""A map-reduce shown live: each `Send` worker's progress has its own bar.

A user fans out three `Send("worker", {"i": i})` tasks in one step; each worker reports its
own progress (`get_stream_writer()({"progress": ..., "stage": "work"})`) and a note, and
the three take turns (`threading.Event` hand-offs: Send tasks run in a thread pool, so the
interleaving is fixed by the test, not by the scheduler). The program runs in
`lgnb.run(graph, input, config)` (display=False); the patches the kernel sends the page are
captured at `RunView.send`.

lgnb's engine names the task of each custom event, so the view gives each worker its own
bar, labelled "worker #1", "worker #2", "worker #3" in the order of the Sends (the lens
counts the step's tasks "worker ×3"), and tags each note with its worker. A LangGraph
`custom` chunk names no task, so there all three workers' events stay on the node's one
bar ("worker · work") and rows: the view does not guess which worker wrote them.
"""

from __future__ import annotations

import importlib
import operator
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))

import _diff  # noqa: E402
from page_spy import SENT, page_spy, sent_patches  # noqa: E402,F401
from widget_graphs import _engine  # noqa: E402

from lgnb.widgets import run  # noqa: E402
from lgnb.widgets._snapshot import run_html  # noqa: E402

differential = _diff.differential
TIMEOUT = 30
WORKERS = 3
#: worker i reports these values, in turn with the others (0, 1, 2, 0, 1, 2, ...)
VALUES = {0: (0.1, 0.2, 0.3), 1: (0.4, 0.5, 0.6), 2: (0.7, 0.8, 1.0)}


class Job(TypedDict):
    done: Annotated[list, operator.add]


def map_reduce(name: str) -> Any:
    """plan → three `Send("worker", {"i": i})` → reduce. The workers take turns: worker i
    waits for its turn, reports its next value and a note {"wrote": i}, hands the turn to
    worker i + 1 (the last hands it back to the first), three rounds."""
    E = _engine(name)
    Send = importlib.import_module(f"{name}.types").Send
    turn = [threading.Event() for _ in range(WORKERS)]

    def worker(arg: dict[str, int]) -> dict[str, list[int]]:
        i = arg["i"]
        write = E.get_stream_writer()
        for value in VALUES[i]:
            assert turn[i].wait(TIMEOUT), f"worker {i} never got its turn"
            turn[i].clear()
            write({"progress": value, "stage": "work"})
            write({"wrote": i})
            turn[(i + 1) % WORKERS].set()
        return {"done": [i]}

    g = E.StateGraph(Job)
    g.add_node("plan", lambda s: {"done": []})
    g.add_node("worker", worker)
    g.add_node("reduce", lambda s: {"done": [sum(s["done"])]})
    g.add_edge(E.START, "plan")
    g.add_conditional_edges("plan", lambda s: [Send("worker", {"i": i}) for i in range(WORKERS)], ["worker"])
    g.add_edge("worker", "reduce")
    turn[0].set()
    return g.compile()


def bars_and_notes(r: Any) -> tuple[dict[tuple[str, str, str], list[float]], list[tuple[str, str | None, int]]]:
    """The values each progress bar was sent, in order, keyed by (bar id, node, label); and
    each note row as (node, its task label or None, the worker that wrote it)."""
    bars: dict[tuple[str, str, str], list[float]] = {}
    notes = []
    for p in sent_patches(r):
        if p["kind"] == "progress":
            bars.setdefault((p["id"], p["node"], p["label"]), []).append(p["value"])
        elif p["kind"] == "log" and isinstance(p["payload"], dict) and "wrote" in p["payload"]:
            notes.append((p["node"], p.get("task"), p["payload"]["wrote"]))
    return bars, notes


def test_on_an_lgnb_graph_each_send_worker_has_its_own_progress_bar() -> None:
    """Three Send workers take turns reporting progress: worker #1's bar shows exactly
    0.1, 0.2, 0.3, #2's 0.4, 0.5, 0.6 and #3's 0.7, 0.8, 1.0 (numbered in the order of the
    Sends), each ends at its own worker's last value, and every note names its worker."""
    r = run(map_reduce("lgnb"), {"done": []}, display=False)
    r.wait(timeout=TIMEOUT)
    assert r.status == "done", r.error
    assert r.result == {"done": [0, 1, 2, 3]}
    bars, notes = bars_and_notes(r)
    assert bars == {
        ("|worker|work", "worker", "worker #1 · work"): list(VALUES[0]),
        ("|worker|work|#2", "worker", "worker #2 · work"): list(VALUES[1]),
        ("|worker|work|#3", "worker", "worker #3 · work"): list(VALUES[2]),
    }
    assert notes == [("worker", f"worker #{i + 1}", i) for _ in range(3) for i in range(WORKERS)]
    final = {p["id"]: (p["label"], p["value"]) for p in r.content["progress"]}
    assert final == {"|worker|work": ("worker #1 · work", 0.3), "|worker|work|#2": ("worker #2 · work", 0.6),
                     "|worker|work|#3": ("worker #3 · work", 1.0)}
    # the saved-notebook snapshot tags the notes the same way (as text)
    html = run_html({}, r.content, svg="")
    assert all(f"worker #{i + 1}: " in html for i in range(WORKERS))


def test_on_a_langgraph_graph_send_workers_share_their_node_s_bar() -> None:
    """The same map-reduce on LangGraph: its `custom` chunks do not say which worker wrote
    them, so the view keeps all events on the node's one bar ("worker · work", values in
    the order written) and tags notes "worker", with no worker number it could not know."""
    r = run(map_reduce("langgraph"), {"done": []}, display=False)
    r.wait(timeout=TIMEOUT)
    assert r.status == "done", r.error
    bars, notes = bars_and_notes(r)
    in_turn = [VALUES[i][k] for k in range(3) for i in range(WORKERS)]
    assert bars == {("|worker|work", "worker", "worker · work"): in_turn}
    assert notes == [("worker", None, i) for _ in range(3) for i in range(WORKERS)]
    final = {p["id"]: (p["label"], p["value"]) for p in r.content["progress"]}
    assert final == {"|worker|work": ("worker · work", 1.0)}


def test_a_node_run_as_one_task_keeps_one_unnumbered_bar() -> None:
    """On either engine: a node that runs once per step reports progress in two steps; it
    has the one bar "fetch · work" it always had, no "#1", and its notes carry no number."""

    def scenario(E: Any) -> Any:
        def fetch(state: Any) -> dict[str, list[int]]:
            write = E.get_stream_writer()
            for value in (0.25, 0.5, 1.0):
                write({"progress": value, "stage": "work"})
                write({"wrote": 0})  # (a row between two values: the page is sent each value)
            return {"done": [len(state["done"])]}

        g = E.StateGraph(Job)
        g.add_node("fetch", fetch)
        g.add_node("again", fetch)
        g.add_edge(E.START, "fetch")
        g.add_edge("fetch", "again")
        r = run(g.compile(), {"done": []}, display=False)
        r.wait(timeout=TIMEOUT)
        bars, notes = bars_and_notes(r)
        return {"status": r.status, "bars": bars, "notes": notes,
                "final": [(p["id"], p["label"], p["value"]) for p in r.content["progress"]]}

    differential(scenario, expect={
        "status": "done",
        "bars": {("|fetch|work", "fetch", "fetch · work"): [0.25, 0.5, 1.0],
                 ("|again|work", "again", "again · work"): [0.25, 0.5, 1.0]},
        "notes": [("fetch", None, 0)] * 3 + [("again", None, 0)] * 3,
        "final": [("|fetch|work", "fetch · work", 1.0), ("|again|work", "again · work", 1.0)],
    })


def test_an_entrypoint_s_task_called_three_times_has_a_bar_per_call() -> None:
    """lgnb: an `@entrypoint` starts `worker(i)` for i = 0, 1, 2 (three tasks of one step),
    then lets them take turns: each call has its own bar, "worker #1" to "worker #3" in
    call order, and its own notes."""
    from lgnb.config import get_stream_writer
    from lgnb.func import entrypoint, task

    turn = [threading.Event() for _ in range(WORKERS)]

    @task
    def worker(i: int) -> int:
        write = get_stream_writer()
        for value in VALUES[i]:
            assert turn[i].wait(TIMEOUT), f"worker {i} never got its turn"
            turn[i].clear()
            write({"progress": value, "stage": "work"})
            write({"wrote": i})
            turn[(i + 1) % WORKERS].set()
        return i

    @entrypoint()
    def fan_out(n: int) -> int:
        calls = [worker(i) for i in range(n)]
        turn[0].set()  # every call has started: the first takes its turn
        return sum(c.result() for c in calls)

    r = run(fan_out, WORKERS, display=False)
    r.wait(timeout=TIMEOUT)
    assert r.status == "done", r.error
    assert r.result == 3
    bars, notes = bars_and_notes(r)
    assert {label: values for (_, _, label), values in bars.items()} == {
        f"worker #{i + 1} · work": list(VALUES[i]) for i in range(WORKERS)}
    assert notes == [("worker", f"worker #{i + 1}", i) for _ in range(3) for i in range(WORKERS)]

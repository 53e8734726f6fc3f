"""Every notebook in notebooks/ runs headless top to bottom (nbclient, no network), and the
lesson notebooks print what their text claims."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).parents[2]
NOTEBOOKS = ROOT / "notebooks"
LESSON_SECONDS = 20


_RUNS: dict[str, tuple[Any, float]] = {}


def execute(name: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, float]:
    """Run notebooks/<name> once per session in a fresh kernel, in a temporary working directory."""
    if name not in _RUNS:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        cwd = tmp_path_factory.mktemp(name.split(".")[0])
        t0 = time.monotonic()
        NotebookClient(nb, kernel_name="python3", timeout=120,
                       resources={"metadata": {"path": str(cwd)}}).execute()
        _RUNS[name] = nb, time.monotonic() - t0
    return _RUNS[name]


def text(nb: Any) -> list[str]:
    """Each code cell's printed text (stream and plain-text results), in cell order."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        parts = []
        for o in cell.outputs:
            if o.output_type == "stream" and o.name == "stdout":
                parts.append(o.text)
            elif o.output_type == "execute_result":
                parts.append(o.data.get("text/plain", ""))
        out.append("".join(parts))
    return out


def printed(nb: Any) -> str:
    return "".join(text(nb))


def cell_with(nb: Any, marker: str) -> str:
    found = [t for t in text(nb) if marker in t]
    assert found, f"no cell printed {marker!r}"
    return found[0]


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_runs_top_to_bottom(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    nb, seconds = execute(name, tmp_path_factory)  # raises CellExecutionError on any cell error
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    if name in ("pregel.ipynb", "reducers.ipynb", "persistence.ipynb"):
        assert seconds < LESSON_SECONDS, seconds
        sources = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert sources.count("<summary>Answer</summary>") >= 3  # exercises with hidden answers


def steps_of(printed: str, node: str) -> list[int]:
    return [int(m) for m in re.findall(rf"^step (\d+): plan    {node}\b", printed, re.M)]


def test_pregel_lesson_claims(tmp_path_factory: pytest.TempPathFactory) -> None:
    nb, _ = execute("pregel.ipynb", tmp_path_factory)
    diamond = cell_with(nb, "join:b+c:d")
    assert (steps_of(diamond, "a"), steps_of(diamond, "b"), steps_of(diamond, "c"), steps_of(diamond, "d")) == (
        [1], [2], [2], [3])
    assert diamond.count("input {'log': ['a']}") == 2  # b and c read the same snapshot
    assert "state: {'log': ['a', 'b', 'c']}" in diamond
    assert "b and c overlapped: True" in cell_with(nb, "overlapped")
    records = cell_with(nb, "step 2 · plan: 2 tasks")  # lgnb's "pregel" stream mode, format_record
    assert '[operator.add] ["a"] + 2 writes → ["a", "b", "c"]' in records

    uneven = [t for t in text(nb) if "step 4: plan    d" in t]
    twice, fixes = uneven[0], uneven[1]
    assert steps_of(twice, "d") == [3, 4] and "'d', 'e', 'd']" in twice
    join, defer = fixes.split("defer=True:")
    assert steps_of(join, "d") == [4] and steps_of(defer, "d") == [4]

    send = cell_with(nb, "__pregel_push")
    assert steps_of(send, "square") == [1, 1, 1] and steps_of(send, "add_up") == [2]
    finished = re.findall(r"wrote   square  \{'squares': \[(\d+)\]\}", send)
    assert finished == ["9", "4", "1"] and "'squares': [1, 4, 9]" in send

    assert steps_of(cell_with(nb, "{'n': 5}"), "count") == [1, 2, 3, 4, 5]
    limit = cell_with(nb, "GraphRecursionError")
    assert limit.startswith("GraphRecursionError: Recursion limit of 3 reached")
    assert "last checkpoint: step 3 | n = 3 | next: ('count',)" in limit
    assert "1000 super-steps later: {'n': 5}" in cell_with(nb, "1000 super-steps")

    lens = cell_with(nb, "step 2 barrier:")  # lgnb.lens on the diamond, run from code
    assert "step 1: a | changed: log" in lens and "step 2: b, c | changed: log | log=['a', 'b', 'c']" in lens
    assert "step 3: d | changed: log | log=['a', 'b', 'c', 'd']" in lens
    assert "step 2 barrier: log [operator.add] ['a'] + ['b', 'c'] → ['a', 'b', 'c']" in lens
    fan = cell_with(nb, "square ×3")  # the Send fan-out in the lens: one node, three tasks
    assert "step 1: square ×3 | changed: squares | squares=[1, 4, 9]" in fan and "step 2: add_up" in fan
    assert fan.count("square  ← Send(square, arg=") == 3 and "squares: [[1], [4], [9]] → [1, 4, 9]" in fan


def test_reducers_lesson_claims(tmp_path_factory: pytest.TempPathFactory) -> None:
    nb, _ = execute("reducers.ipynb", tmp_path_factory)
    assert cell_with(nb, "InvalidUpdateError:").startswith(
        "InvalidUpdateError: At key 'winner': Can receive only one value per step.")
    assert "{'winner': 'hare'}" in printed(nb)
    order = cell_with(nb, "finished: zeta")
    assert re.findall(r"finished: (\w+)", order) == ["zeta", "mid", "alpha"]
    assert "{'log': ['alpha', 'mid', 'zeta']}" in order
    assert re.findall(r"merge\((.*)\)", cell_with(nb, "merge(")) == [
        "[], ['start']", "['start'], ['alpha']", "['start', 'alpha'], ['zeta']"]
    assert "{'best': 9}" in printed(nb)
    chat = cell_with(nb, "ai-1").splitlines()
    assert chat[1] == "1 [('human', 'user-1', 'hi'), ('ai', 'ai-1', 'Helo, how can I help?')]"
    assert chat[2] == "2 [('human', 'user-1', 'hi'), ('ai', 'ai-1', 'Hello, how can I help?')]"
    assert chat[3] == "3 [('ai', 'ai-1', 'Hello, how can I help?')]"
    what_if = cell_with(nb, "writes of step 1")  # lgnb.whatif on the lens's recorded writes
    assert "writes of step 1: [('alpha', ['alpha']), ('mid', ['mid']), ('zeta', ['zeta'])]" in what_if
    assert "operator.add (the real one): ['alpha', 'mid', 'zeta']" in what_if
    assert "last value:    At key 'log': Can receive only one value per step." in what_if
    assert "newest_first:  ['zeta', 'mid', 'alpha']" in what_if
    assert "add_messages:  [('human', 'alpha'), ('human', 'mid'), ('human', 'zeta')]" in what_if
    assert "shown in the lens: newest_first → ['zeta', 'mid', 'alpha'] | same as the real one: False" in printed(nb)


def test_persistence_lesson_claims(tmp_path_factory: pytest.TempPathFactory) -> None:
    nb, _ = execute("persistence.ipynb", tmp_path_factory)
    killed = cell_with(nb, "child killed")
    assert "child killed, return code -9" in killed and "slow starts" in killed
    assert "slow ends" not in killed and "finished" not in killed
    after_kill = [t for t in text(nb) if t.startswith("step  1 loop")]
    assert "saved writes={'quick': {'notes': ['quick: done']}}" in after_kill[0]
    assert "step  2" not in after_kill[0]
    resumed = cell_with(nb, "report: 3 notes']\n")
    ran = re.findall(r"\] (\w+) (?:runs|starts)", resumed)
    assert ran == ["slow", "report"]  # fetch and quick did not run again
    assert "['fetched: tea', 'quick: done', 'slow: done', 'report: 3 notes']" in resumed
    resumed_timeline = cell_with(nb, "step 2's parent")
    assert resumed_timeline.startswith("step  3 loop   next=()")
    assert "step 2's parent is the checkpoint the child wrote: True" in resumed_timeline
    assert "[-1, 0, 1, 2, 3]" in printed(nb)
    assert "fetch runs" in cell_with(nb, "['fetched: coffee',")
    branches = cell_with(nb, "branch point")
    assert "branch point at step 0: children ['loop', 'update']" in branches
    assert "branch point at step 1: children ['fork', 'loop']" in branches


def test_server_notebook_claims(tmp_path_factory: pytest.TempPathFactory) -> None:
    """notebooks/server.ipynb: a local LangGraph server started from the notebook, an agent
    run there to its question, answered from the inbox (the thread leaves it), a fork and a
    replay on the server's timeline, attach, and the server stopped."""
    nb, _ = execute("server.ipynb", tmp_path_factory)
    out = printed(nb)
    assert "server ready: True" in out
    assert "Its graphs: 'agent'" in cell_with(nb, "unknown graph:")
    assert "run: interrupted | asks: Send this draft?" in out
    assert "waiting: ['Send this draft?']" in out
    assert "answered: done | verdict: approve" in out and "still waiting: []" in out
    assert "forked: reject" in out
    replayed = cell_with(nb, "replayed:")
    assert "replayed: interrupted" in replayed and int(replayed.rsplit(": ", 1)[1]) > 4
    assert "attached: interrupted | pending: ['Send this draft?']" in out
    assert "server stopped: True" in out
    widgets = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if "application/vnd.jupyter.widget-view+json" in getattr(o, "data", {})]
    assert len(widgets) >= 5  # graph, run, inbox, timeline, attached run


"""Notebooks that last (issue 12) outside Jupyter: `jupyter nbconvert --execute --to html`
of the tour, opened from file:// in Chromium with the network cut, shows every view's
snapshot (graph, transcript, status); a run full of hostile payloads, converted the same
way and written with `run.to_html`, runs none of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
JUPYTER = Path(sys.executable).with_name("jupyter")

#: each payload sets window.__pwned if the page ever runs it
PAYLOADS = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "<svg onload=\"window.__pwned = 'svg'\"><circle r=5 /></svg>",
    "[click](javascript:window.__pwned='link')",
    "<a href=\"javascript:window.__pwned='href'\">click</a>",
    "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
]

HOSTILE = f"""
import lgnb
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from lgnb.checkpoint.memory import InMemorySaver
from lgnb.config import get_stream_writer
from lgnb.graph import END, START, MessagesState, StateGraph
from lgnb.types import interrupt

PAYLOADS = {PAYLOADS!r}
model = GenericFakeChatModel(messages=iter([AIMessage(content=" ".join(PAYLOADS))]))

def talk(state):
    get_stream_writer()({{"note": PAYLOADS[0], "progress": 0.5, "stage": PAYLOADS[1]}})
    return {{"messages": [model.invoke(state["messages"])]}}

def ask(state):
    return {{"messages": [("ai", "got " + interrupt({{"question": PAYLOADS[2], "url": PAYLOADS[3]}}))]}}

b = StateGraph(MessagesState)
b.add_node("<img src=x onerror=\\"window.__pwned='node'\\">", talk)
b.add_node("<svg onload=\\"window.__pwned='svgnode'\\">", ask)
b.add_edge(START, "<img src=x onerror=\\"window.__pwned='node'\\">")
b.add_edge("<img src=x onerror=\\"window.__pwned='node'\\">", "<svg onload=\\"window.__pwned='svgnode'\\">")
b.add_edge("<svg onload=\\"window.__pwned='svgnode'\\">", END)
graph = b.compile(checkpointer=InMemorySaver())
"""


def convert(source: Path, workdir: Path) -> Path:
    """`jupyter nbconvert --execute --to html`, as a user runs it (this checkout's lgnb)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    subprocess.run([str(JUPYTER), "nbconvert", "--execute", "--to", "html", "--output-dir", str(workdir),
                    str(source)], check=True, cwd=workdir, env=env, capture_output=True, timeout=240)
    return workdir / (source.stem + ".html")


def offline(page: Any) -> list[str]:
    """Cut the network (file:// only) and collect what the console says."""
    said: list[str] = []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.on("console", lambda m: said.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: said.append(f"pageerror: {e}"))
    return said


SNAPSHOTS = """() => Array.from(document.querySelectorAll('[data-lgnb-snapshot]')).map((s) => ({
  kind: s.dataset.lgnbSnapshot, visible: s.getClientRects().length > 0 && s.offsetHeight > 40,
  nodes: s.querySelectorAll('svg g.node').length,
  status: (s.querySelector('[data-testid=snap-status]') || {}).textContent || '', text: s.innerText,
}))"""


def test_nbconvert_html_of_the_tour_shows_graph_transcript_and_status_offline(
        page: Any, tmp_path: Path, artifacts: Path) -> None:
    source = tmp_path / "tour.ipynb"
    source.write_bytes((ROOT / "notebooks" / "tour.ipynb").read_bytes())
    out = convert(source, tmp_path)
    offline(page)
    page.goto(out.as_uri())
    shown = page.evaluate(SNAPSHOTS)
    assert [s["kind"] for s in shown] == ["graph", "run", "run"], shown
    assert all(s["visible"] for s in shown), shown
    graph, run, review = shown
    assert graph["nodes"] == 4 and run["nodes"] == 4 and review["nodes"] == 4
    assert run["status"] == "done" and review["status"] == "done"
    assert "What is 2 + 3?" in run["text"] and "The tool says 2 + 3 = 5" in run["text"]
    assert "Reviewer said: approved" in review["text"] and "“Send this answer?” answered by code" in review["text"]
    assert "RunView" not in page.inner_text("body") and "object at 0x" not in page.inner_text("body")
    page.locator("[data-lgnb-snapshot=run]").first.screenshot(path=str(artifacts / "snapshot-nbconvert-run.png"))
    page.locator("[data-lgnb-snapshot=graph]").first.screenshot(path=str(artifacts / "snapshot-nbconvert-graph.png"))


def test_hostile_run_converted_by_nbconvert_and_to_html_runs_no_payload(
        page: Any, tmp_path: Path, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in [
        HOSTILE,
        "lgnb.show(graph)",
        "run = lgnb.run(graph, {'messages': [('user', PAYLOADS[4])]}, title=PAYLOADS[5])",
        "run.wait(timeout=60); run.resume(PAYLOADS[0]).wait(timeout=60); print(run.status)",
        "run.to_html('run.html'); lgnb.history(graph, run.config)",
    ]])
    source = tmp_path / "hostile.ipynb"
    nbformat.write(nb, source)
    out = convert(source, tmp_path)
    for name, target in (("nbconvert", out), ("to_html", tmp_path / "run.html")):
        said = offline(page)
        page.goto(target.as_uri())
        page.wait_for_timeout(1000)  # give any handler time to fire
        assert page.evaluate("() => window.__pwned") is None, name
        assert page.evaluate("() => document.querySelectorAll('iframe').length") == 0, name
        assert not [m for m in said if "pwned" in m], said
        shown = page.evaluate(SNAPSHOTS)
        runs = [s for s in shown if s["kind"] == "run"]
        assert runs and runs[-1]["status"] == "done", shown
        text = runs[-1]["text"]
        for payload in PAYLOADS:
            assert payload in text, (name, payload)  # shown as text, whole
        assert f"got {PAYLOADS[0]}" in text
        if name == "nbconvert":
            assert sorted(s["kind"] for s in shown) == ["graph", "history", "run"], shown
            assert "checkpoints" in json.dumps(shown)
        page.locator("[data-lgnb-snapshot=run]").first.screenshot(path=str(artifacts / f"snapshot-hostile-{name}.png"))
        page.unroute("**/*")

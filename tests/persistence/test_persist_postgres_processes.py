"""PostgreSQL shared by processes: one process runs a thread to an interrupt and exits; another
process (a fresh interpreter) resumes it with Command(resume=...) and finishes. Also across
engines (paused by lgnb, resumed by LangGraph and the other way round) and with the async saver."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import _diff

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import asyncio, importlib, json, operator, os, sys
    from typing import Annotated
    from typing_extensions import TypedDict

    sys.path.insert(0, {repo!r})
    engine, url, thread_id, work, mode, flavor = sys.argv[1:7]
    G = importlib.import_module(engine + ".graph")
    T = importlib.import_module(engine + ".types")
    counter = os.path.join(work, "calls.txt")

    def record(name):
        with open(counter, "a") as f:
            f.write(name + "\\n")

    class S(TypedDict):
        log: Annotated[list, operator.add]

    def draft(s):
        record("draft")
        return {{"log": ["draft"]}}

    def review(s):
        record("review")
        answer = T.interrupt({{"question": "publish?", "draft": s["log"][-1], "pid": "ignored"}})
        record("review:answered")
        return {{"log": [f"review:{{answer}}"]}}

    def publish(s):
        record("publish")
        return {{"log": ["publish"]}}

    g = G.StateGraph(S)
    g.add_node("draft", draft)
    g.add_node("review", review)
    g.add_node("publish", publish)
    g.add_edge(G.START, "draft")
    g.add_edge("draft", "review")
    g.add_edge("review", "publish")
    cfg = {{"configurable": {{"thread_id": thread_id}}}}

    def summary(app, out, st):
        return {{
            "out_log": out.get("log"),
            "interrupts": [i.value for i in out.get("__interrupt__", [])],
            "next": list(st.next),
            "state_interrupts": [i.value for i in st.interrupts],
            "pid": os.getpid(),
        }}

    if flavor == "sync":
        from langgraph.checkpoint.postgres import PostgresSaver
        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            app = g.compile(checkpointer=saver)
            if mode == "start":
                out = app.invoke({{"log": []}}, cfg)
                res = summary(app, out, app.get_state(cfg))
            else:
                paused = app.get_state(cfg)
                out = app.invoke(T.Command(resume="yes, from " + engine), cfg)
                res = summary(app, out, app.get_state(cfg))
                res["paused_next"] = list(paused.next)
                res["paused_interrupts"] = [i.value for i in paused.interrupts]
                res["history"] = [[s.metadata["source"], s.metadata["step"], list(s.next)]
                                  for s in app.get_state_history(cfg)]
    else:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        async def main():
            async with AsyncPostgresSaver.from_conn_string(url) as saver:
                await saver.setup()
                app = g.compile(checkpointer=saver)
                if mode == "start":
                    out = await app.ainvoke({{"log": []}}, cfg)
                    return summary(app, out, await app.aget_state(cfg))
                paused = await app.aget_state(cfg)
                out = await app.ainvoke(T.Command(resume="yes, from " + engine), cfg)
                res = summary(app, out, await app.aget_state(cfg))
                res["paused_next"] = list(paused.next)
                res["paused_interrupts"] = [i.value for i in paused.interrupts]
                res["history"] = [[s.metadata["source"], s.metadata["step"], list(s.next)]
                                  async for s in app.aget_state_history(cfg)]
                return res
        res = asyncio.run(main())
    print(json.dumps(res))
    """
)


def _proc(script: Path, engine: str, url: str, tid: str, work: Path, mode: str, flavor: str) -> dict:
    res = subprocess.run(
        [sys.executable, str(script), engine, url, tid, str(work), mode, flavor],
        capture_output=True, text=True, timeout=120,
    )
    assert res.returncode == 0, f"{mode} process failed:\n{res.stdout}\n{res.stderr}"
    return json.loads(res.stdout.strip().splitlines()[-1])


def _cand() -> str:
    return _diff.candidate_engine().root


@pytest.mark.slow
@pytest.mark.parametrize("first,second,flavor", [
    ("langgraph", "langgraph", "sync"),
    ("lgnb", "lgnb", "sync"),
    ("lgnb", "lgnb", "async"),
    ("lgnb", "langgraph", "sync"),
    ("langgraph", "lgnb", "sync"),
])
def test_interrupt_in_one_process_resumed_by_another(postgres_url, tmp_path, first, second, flavor):
    first = _cand() if first == "lgnb" else first
    second = _cand() if second == "lgnb" else second
    script = tmp_path / "pg_graph.py"
    script.write_text(SCRIPT.format(repo=str(REPO)))
    tid = f"pg-two-procs-{uuid.uuid4().hex}"

    a = _proc(script, first, postgres_url, tid, tmp_path, "start", flavor)
    assert a["interrupts"] == [{"question": "publish?", "draft": "draft", "pid": "ignored"}], a
    assert a["out_log"] == ["draft"] and a["next"] == ["review"], a

    b = _proc(script, second, postgres_url, tid, tmp_path, "resume", flavor)
    assert b["pid"] != a["pid"]
    assert b["paused_next"] == ["review"], b
    assert b["paused_interrupts"] == a["interrupts"], b
    assert b["out_log"] == ["draft", f"review:yes, from {second}", "publish"], b
    assert b["interrupts"] == [] and b["next"] == [], b
    assert b["history"] == [
        ["loop", 3, []],
        ["loop", 2, ["publish"]],
        ["loop", 1, ["review"]],
        ["loop", 0, ["draft"]],
        ["input", -1, ["__start__"]],
    ], b
    calls = (tmp_path / "calls.txt").read_text().split()
    # draft ran once (in the first process); review re-ran from its first line after resume
    assert calls == ["draft", "review", "review", "review:answered", "publish"], calls

"""LangChain v1 `create_agent` + `HumanInTheLoopMiddleware` answered through the form's
handlers, on LangGraph (in process) and on lgnb (a subprocess where `langgraph.*` engine
imports resolve to lgnb, `langgraph_on_lgnb`): edit a tool argument, the tool runs with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

HERE = Path(__file__).parent


def scenario() -> dict[str, Any]:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from widget_fakes import FakeStreamingChat

    from lgnb.widgets import run

    sent: list[str] = []

    @tool
    def send_email(to: str, subject: str, urgent: bool = False, copies: int = 1) -> str:
        """Send an email."""
        sent.append(f"{to}|{subject}|{urgent}|{copies}")
        return f"sent to {to}"

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        sent.append(f"deleted {path}")
        return "deleted"

    model = FakeStreamingChat(replies=[
        {"content": "", "tool_calls": [{"name": "send_email", "args": {"to": "bob", "subject": "<b>hi</b>"}, "id": "c1"},
                                       {"name": "delete_file", "args": {"path": "/"}, "id": "c2"}]},
        "done"])
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send_email": True,
                                                  "delete_file": {"allowed_decisions": ["approve", "reject"]}})
    agent = create_agent(model, [send_email, delete_file], middleware=[hitl], checkpointer=InMemorySaver())
    r = run(agent, {"messages": [("user", "mail bob")]}, display=False)
    r.wait(timeout=60)
    (form,) = r.view.forms
    replies: list[dict[str, Any]] = []
    r.view.send = lambda msg, buffers=None: replies.append(msg)

    def click(picks: list[dict[str, Any]], request: int) -> dict[str, Any]:
        r.view._dispatch(r.view, {"kind": "answer", "id": request, "interrupt_id": form["id"], "picks": picks}, [])
        return [m for m in replies if m.get("kind") == "resume-result"][-1]

    bad = click([{"part": 0, "choice": "edit", "inputs": {"to": "x", "subject": "x", "urgent": True, "copies": "two"}},
                 {"part": 1, "choice": "reject", "inputs": {"__message": "never"}}], 1)
    missing = click([{"part": 0, "choice": "approve", "inputs": {}}], 2)
    ok = click([{"part": 0, "choice": "edit", "inputs": {"to": "carol", "subject": "<b>hi</b>", "urgent": True, "copies": "1"}},
                {"part": 1, "choice": "reject", "inputs": {"__message": "never"}}], 3)
    r.wait(timeout=60)
    return {"kind": form["kind"], "collect": form["collect"], "fields": form["fields"], "text": form["text"],
            "titles": [p["title"] for p in form["parts"]],
            "choices": [[c["key"] for c in p["choices"]] for p in form["parts"]],
            "inputs": [{i["name"]: i["type"] for i in p["inputs"]} for p in form["parts"]],
            "bad": bad, "missing": missing, "ok": ok, "status": r.status, "sent": sent,
            "answers": [(a["by"], a["summary"]) for a in r.answers],
            "runs": r.view.runs}


def check(out: dict[str, Any]) -> None:
    assert out["kind"] == "hitl" and out["collect"] is True
    assert out["fields"] == [] and out["text"] == ""  # the cards show the requests: no raw payload dump
    assert out["titles"] == ["tool call: send_email", "tool call: delete_file"]
    assert out["choices"][1] == ["approve", "reject"] and out["choices"][0][:3] == ["approve", "edit", "reject"]
    assert out["inputs"][0] == {"to": "string", "subject": "string", "urgent": "boolean", "copies": "integer",
                                "__message": "text"}
    assert out["bad"]["ok"] is False and out["bad"]["errors"] == {"0.copies": "a whole number is needed"}
    assert out["missing"]["ok"] is False and "no decision" in out["missing"]["error"]
    assert out["ok"]["ok"] is True, out["ok"]
    assert out["status"] == "done" and out["sent"] == ["carol|<b>hi</b>|True|1"]  # edited; delete rejected
    assert [tuple(a) for a in out["answers"]] == [("page", "Edit send_email (edited args {\"to\": \"carol\", \"urgent\": true}); "
                                       "Reject delete_file: never")]


def test_hitl_agent_on_langgraph() -> None:
    sys.path.insert(0, str(HERE))
    out = scenario()
    check(out)


def test_hitl_agent_on_lgnb() -> None:
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import langgraph_on_lgnb\n"
            "import test_forms_hitl as t\n"
            "out = t.scenario()\n"
            "import langgraph.graph.state as s; out['engine'] = s.__name__ if False else type(s.StateGraph).__module__\n"
            "print('OUT' + json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, cwd=str(HERE))
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("OUT")), None)
    assert line, proc.stderr[-3000:]
    out = json.loads(line[3:])
    check(out)

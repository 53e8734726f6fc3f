"""`lgnb.attach(url, thread_id)` against a real `langgraph dev`: another client starts a
run, the notebook joins it mid-way and shows it live to its end and its question; the
form's answer resumes the server thread; a thread at rest shows its state and question."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

import lgnb

pytestmark = [pytest.mark.remote, pytest.mark.timeout(120)]


def _wait_for(predicate: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_attach_joins_a_run_another_client_started_and_shows_it_live_from_where_it_is(server_url: str) -> None:
    server = get_sync_client(url=server_url, api_key=None)
    tid = server.threads.create()["thread_id"]
    steps = 30
    # another client (a web app, say) starts a run on the thread and streams its progress
    other: dict[str, Any] = {"steps": [], "run_id": None}

    def web_app() -> None:
        own = get_sync_client(url=server_url, api_key=None)
        for part in own.runs.stream(tid, "slow", input={"steps": steps, "pause": 0.1},
                                       stream_mode=["values", "updates", "custom"]):
            if part.event == "metadata":
                other["run_id"] = part.data["run_id"]
            elif part.event == "custom":
                other["steps"].append(part.data["step"])

    client = threading.Thread(target=web_app, daemon=True)
    client.start()
    # mid-way: the other client has seen 3 steps
    _wait_for(lambda: len(other["steps"]) >= 3, "the other client's run to report 3 steps")
    started = {"run_id": other["run_id"]}
    run = lgnb.attach(server_url, tid, display=False)
    assert run.graph.joined == started["run_id"]
    run.wait(60)
    assert run.status == "interrupted", run.error
    seen = [e["payload"]["step"] for e in run.content["log"] if isinstance(e["payload"], dict)]
    # live from where it was: the steps after the join arrived, in order; the first ones did not
    assert seen == list(range(seen[0], steps + 1)) and 3 < seen[0] < steps, seen
    client.join(30)
    assert other["steps"] == list(range(1, steps + 1))  # the other client saw the whole run
    assert [u["node"] for u in run.content["updates"]] == ["work"]
    (pending,) = run.interrupts
    assert pending["node"] == "review" and pending["value"] == {"question": f"accept {steps} steps?", "options": ["accept", "reject"]}
    # the panel numbers the joined run's steps as the server's checkpoints do
    assert run._panel.render()["step"] == server.threads.get_state(tid)["metadata"]["step"] + 1  # asking, in step 2

    resumed = run.resume({pending["id"]: "accepted"})
    resumed.wait(60)
    assert resumed.status == "done", resumed.error
    state = server.threads.get_state(tid)
    assert state["values"]["verdict"] == "accepted" and state["next"] == []


def test_attach_to_a_thread_at_rest_shows_its_state_and_its_question(server_url: str) -> None:
    server = get_sync_client(url=server_url, api_key=None)
    tid = server.threads.create()["thread_id"]
    server.runs.wait(tid, "agent", input={"messages": [{"role": "user", "content": "hi"}]})
    run = lgnb.attach(server_url, tid, display=False)
    assert run.graph.joined is None
    run.wait(30)
    assert run.status == "interrupted"
    assert [(m["type"], m["content"]) for m in run.content["messages"]] == [("human", "hi"), ("ai", "hello from the server")]
    (pending,) = run.interrupts
    assert pending["node"] == "review" and pending["value"]["question"] == "approve?"
    assert run.forms and run.forms[0]["id"] == pending["id"]
    # the state panel: the thread's saved state at its checkpoint's step, nothing "changed"
    panel = run._panel.render()
    saved_step = server.threads.get_state(tid)["metadata"]["step"]
    assert (panel["status"], panel["step"], panel["changed"]) == ("saved", saved_step, [])
    resumed = run.resume({pending["id"]: "yes"})
    resumed.wait(60)
    after = resumed._panel.render()
    assert after["step"] == server.threads.get_state(tid)["metadata"]["step"] == saved_step + 1
    assert after["changed"] == ["verdict"]
    assert server.threads.get_state(tid)["values"]["verdict"] == "yes"


def test_attach_to_an_unknown_thread_says_so(server_url: str) -> None:
    with pytest.raises(LookupError, match="no thread 'no-such-thread'.*422"):
        lgnb.attach(server_url, "no-such-thread", display=False)
    missing = str(uuid.uuid4())
    with pytest.raises(LookupError, match=f"no thread '{missing}'.*404"):
        lgnb.attach(server_url, missing, display=False)

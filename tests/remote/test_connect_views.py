"""`lgnb.connect` and the notebook views on a LangGraph server (a real `langgraph dev`
serving `app/agent.py`): the run view of a remote run shows what it shows for a local run
of the same graph, its form's answer resumes the server's thread, the timeline reads the
server's checkpoints and its fork and replay land there; the errors a user meets say
what to do."""

from __future__ import annotations

import importlib.util
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_sdk import get_sync_client

import lgnb
from lgnb.errors import ThreadBusyError
from lgnb.pregel.remote import RemoteGraph
from lgnb.remote import ServerUnreachableError, UnknownGraphError

pytestmark = [pytest.mark.remote, pytest.mark.timeout(120)]

HUMAN = {"messages": [{"role": "user", "content": "hi"}]}
APP = Path(__file__).parent / "app" / "agent.py"
RICH = Path(__file__).parent / "app" / "rich.py"


def _thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def _local_graph(path: Path = APP) -> Any:
    """The server's graph module, compiled here with a saver: the same code, run locally."""
    spec = importlib.util.spec_from_file_location(f"lgnb_test_server_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.builder.compile(checkpointer=InMemorySaver())


def _shown(content: dict[str, Any]) -> dict[str, Any]:
    """What the run view shows, without ids and sequence numbers (fresh per run)."""
    return {
        "messages": [{k: v for k, v in m.items() if k != "id"} for m in content["messages"]],
        "updates": [{k: v for k, v in u.items() if k not in ("id", "seq")} for u in content["updates"]],
        "progress": content["progress"],
        "log": content["log"],
        "errors": content["errors"],
    }


def test_connect_returns_a_remote_graph_for_the_servers_graph(server_url: str) -> None:
    graph = lgnb.connect(server_url, "agent")
    assert isinstance(graph, RemoteGraph) and graph.assistant_id == "agent"
    assert set(graph.get_graph().nodes) == {"__start__", "chat", "review", "__end__"}


def test_connect_to_an_unknown_graph_lists_the_servers_graphs(server_url: str) -> None:
    with pytest.raises(UnknownGraphError) as info:
        lgnb.connect(server_url, "agnet")
    assert info.value.available == ("agent", "flow", "rich", "slow")
    assert "'agnet'" in str(info.value) and "'agent'" in str(info.value)


def test_connect_to_no_server_names_the_url_and_how_to_start_one() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"  # nothing listens: the socket is closed
    with pytest.raises(ServerUnreachableError) as info:
        lgnb.connect(url, "agent")
    message = str(info.value)
    assert url in message and "langgraph dev" in message and "start_dev_server" in message


def test_connect_rejects_a_url_that_is_not_http() -> None:
    with pytest.raises(ValueError, match="http"):
        lgnb.connect("127.0.0.1:2024", "agent")


def test_remote_run_view_shows_what_a_local_run_of_the_same_graph_shows(server_url: str) -> None:
    remote = lgnb.run(lgnb.connect(server_url, "agent"), HUMAN, _thread(), display=False)
    local = lgnb.run(_local_graph(), HUMAN, _thread(), display=False)
    remote.wait(60)
    local.wait(60)
    assert remote.status == local.status == "interrupted"
    assert _shown(remote.content) == _shown(local.content)
    # tokens per message: the chat node's reply, streamed, as one final message
    ai = [m for m in remote.content["messages"] if m["type"] == "ai"]
    assert [m["content"] for m in ai] == ["hello from the server"] and ai[0]["node"] == "chat"
    # the form: the same question, keyed by the server's interrupt id, at the same node
    assert [(i["node"], i["value"]) for i in remote.interrupts] == [(i["node"], i["value"]) for i in local.interrupts]
    assert remote.forms and [f.get("kind") for f in remote.forms] == [f.get("kind") for f in local.forms]
    # the lit graph: the same nodes visited
    assert remote.view.visited == local.view.visited


def test_remote_run_of_a_graph_with_a_subgraph_and_events_shows_what_the_local_run_shows(
        server_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens (each delta, in order), progress bars and events from inside a subgraph, its
    nodes' updates under their namespace, the state panel, the lit graph and the form: the
    same for the server's run as for the same graph run here."""
    from lgnb.widgets._stream import StreamReducer

    feed = StreamReducer.feed
    deltas: list[str] = []  # each token as the run view reads it (the page gets them coalesced)

    def reading(self: Any, chunk: Any) -> Any:
        patches = feed(self, chunk)
        deltas.extend(p["text"] for p in patches if p["kind"] == "msg.delta")
        return patches

    monkeypatch.setattr(StreamReducer, "feed", reading)
    shown: dict[str, Any] = {}
    for where, graph in (("remote", lgnb.connect(server_url, "rich")), ("local", _local_graph(RICH))):
        deltas.clear()
        run = lgnb.run(graph, HUMAN, _thread(), display=False)
        run.wait(60)
        assert run.status == "interrupted", run.error
        panel = run._panel.render()
        shown[where] = {
            **_shown(run.content),
            "deltas": list(deltas),
            "interrupts": [(i["node"], i["value"]) for i in run.interrupts],
            "forms": [(f.get("kind"), [c.get("label") for c in f.get("choices", [])]) for f in run.forms],
            "visited": run.view.visited,
            "panel": {k: panel[k] for k in ("step", "status", "changed", "keys")},
        }
    remote, local = shown["remote"], shown["local"]
    assert remote == local
    # and it is all there: tokens one word at a time, the subgraph's progress and note
    assert "".join(remote["deltas"]) == "I will look into it and report back" and len(remote["deltas"]) > 5
    assert [u["node"] for u in remote["updates"]] == ["chat", "research:gather", "research:summarize", "research"]
    assert [(p["node"], p["value"]) for p in remote["progress"]] == [("research:gather", 1.0)]
    assert [e["payload"] for e in remote["log"]] == [{"note": "summarized 1 notes"}]
    assert remote["interrupts"] == [("review", {"question": "ship the report?", "options": ["ship", "hold"]})]
    assert {k["key"] for k in remote["panel"]["keys"]} == {"messages", "notes"}


def test_a_remote_entrypoint_s_steps_are_its_checkpoints_steps(server_url: str) -> None:
    """An `@entrypoint` on the server: the view gets neither its nodes nor its checkpoints,
    yet shows its tasks at step 0, the step of the checkpoint the server saved for them."""
    graph = lgnb.connect(server_url, "flow")
    config = _thread()
    run = lgnb.run(graph, "bees", config, display=False)
    assert run.wait(60) == "essay from outline of bees"
    saved = [(s.metadata["source"], s.metadata["step"]) for s in graph.get_state_history(config)][::-1]
    assert saved == [("input", -1), ("loop", 0)]
    assert run.view.step == 0
    assert {u["step"] for u in run.content["updates"]} == {0}


def test_a_form_answer_resumes_the_servers_thread(server_url: str) -> None:
    graph = lgnb.connect(server_url, "agent")
    config = _thread()
    run = lgnb.run(graph, HUMAN, config, display=False)
    run.wait(60)
    (pending,) = run.interrupts
    resumed = run.resume({pending["id"]: "ship it"})
    resumed.wait(60)
    assert resumed.status == "done", resumed.error
    server = get_sync_client(url=server_url, api_key=None)
    state = server.threads.get_state(config["configurable"]["thread_id"])
    assert state["values"]["verdict"] == "ship it" and state["next"] == []


def test_a_second_run_on_a_busy_server_thread_shows_the_servers_multitask_answer(server_url: str) -> None:
    server = get_sync_client(url=server_url, api_key=None)
    thread = server.threads.create()
    tid = thread["thread_id"]
    # another client starts a slow run (3 s); wait until the server runs it
    server.runs.create(tid, "slow", input={"steps": 15, "pause": 0.2})
    deadline = time.monotonic() + 20
    while server.threads.get(tid)["status"] != "busy":
        assert time.monotonic() < deadline, "the other client's run never started"
        time.sleep(0.05)
    run = lgnb.run(lgnb.connect(server_url, "slow"), {"steps": 1}, {"configurable": {"thread_id": tid}}, display=False)
    with pytest.raises(ThreadBusyError) as info:
        run.wait(60)
    assert run.status == "error" and run.error is info.value
    message = str(info.value)
    assert tid in message and "409" in message and "lgnb.attach" in message


def test_history_of_a_server_thread_is_its_checkpoints_and_fork_and_replay_land_there(server_url: str) -> None:
    graph = lgnb.connect(server_url, "agent")
    config = _thread()
    tid = config["configurable"]["thread_id"]
    first = lgnb.run(graph, HUMAN, config, display=False)
    first.wait(60)
    first.resume({first.interrupts[0]["id"]: "no"}).wait(60)

    view = lgnb.history(graph, config)
    server = get_sync_client(url=server_url, api_key=None)
    on_server = server.threads.get_history(tid, limit=100)
    timeline = view.model
    assert timeline is not None
    assert [c.id for c in reversed(timeline.checkpoints)] == [h["checkpoint"]["checkpoint_id"] for h in on_server]
    by_next = {c.next: c for c in timeline.checkpoints}
    before_review = by_next[("review",)]
    assert before_review.interrupts == 1
    # inspect: the clicked checkpoint's values (as JSON for the page), messages read as messages
    values = view.values_at(before_review.id)
    assert [(m["type"], m["content"]) for m in values["messages"]] == [("human", "hi"), ("ai", "hello from the server")]

    fork = view.fork(before_review.id, {"verdict": "edited"}, as_node="review")
    fork_id = fork["configurable"]["checkpoint_id"]
    after_fork = server.threads.get_history(tid, limit=100)
    assert fork_id in [h["checkpoint"]["checkpoint_id"] for h in after_fork]
    assert fork_id in [c.id for c in view.model.checkpoints]
    assert server.threads.get_state(tid, checkpoint_id=fork_id)["values"]["verdict"] == "edited"

    # the page's Fork button: the form from the server's schema, the edit parsed, sent there
    form = view.fork_form(before_review.id)
    assert {"messages", "verdict"} <= {f["key"] for f in form["fields"]}
    view._msg_fork({"id": before_review.id, "values": {"verdict": "edited on the page"}, "as_node": "review"})
    assert view.error == "" and view.fork_errors == {}
    forks = [h for h in server.threads.get_history(tid, limit=100)
             if (h.get("parent_checkpoint") or {}).get("checkpoint_id") == before_review.id]
    assert "edited on the page" in [h["values"].get("verdict") for h in forks]
    view._msg_fork({"id": before_review.id, "values": {"nope": "x"}})  # a key the state has not
    assert set(view.fork_errors) == {"nope"}

    before_chat = by_next[("chat",)]
    replay = view.replay(before_chat.id)
    replay.wait(60)
    assert replay.status == "interrupted"  # chat streams again, the review asks again, on a new branch
    again = server.threads.get_history(tid, limit=100)
    replayed = [h for h in again if (h.get("parent_checkpoint") or {}).get("checkpoint_id") == before_chat.id]
    assert len(replayed) == 2  # the first run's step and the replay's
    view.refresh()
    assert len(view.model.checkpoints) == len(again)


def test_a_remote_run_without_a_thread_gets_a_uuid_thread_the_server_accepts(server_url: str) -> None:
    run = lgnb.run(lgnb.connect(server_url, "agent"), HUMAN, display=False)
    run.wait(60)
    assert run.status == "interrupted", run.error
    tid = run.config["configurable"]["thread_id"]
    assert str(uuid.UUID(tid)) == tid
    server = get_sync_client(url=server_url, api_key=None)
    assert server.threads.get(tid)["status"] == "interrupted"


def test_show_draws_the_servers_graph(server_url: str) -> None:
    view = lgnb.show(lgnb.connect(server_url, "slow"))
    local = lgnb.show(_local_graph())  # the agent, local: same drawing machinery
    assert "work" in view.dot and "review" in view.dot and "chat" not in view.dot
    assert view.title and "chat" in local.dot


def test_an_async_remote_run_shows_what_the_sync_one_shows(server_url: str) -> None:
    graph = lgnb.connect(server_url, "agent")
    sync = lgnb.run(graph, HUMAN, _thread(), display=False)
    later = lgnb.run(graph, HUMAN, _thread(), display=False, use_async=True)
    sync.wait(60)
    later.wait(60)
    assert later.status == sync.status == "interrupted", later.error
    assert _shown(later.content) == _shown(sync.content)
    resumed = later.resume({later.interrupts[0]["id"]: "async ok"})
    resumed.wait(60)
    assert resumed.status == "done" and resumed.result["verdict"] == "async ok"


def _server_steps(graph: Any, config: dict[str, Any]) -> dict[str, list[int]]:
    """node -> the steps the server ran (or will run) it at, oldest first: the step after
    each checkpoint that names it next."""
    steps: dict[str, list[int]] = {}
    for snap in reversed(list(graph.get_state_history(config))):
        for node in snap.next:
            steps.setdefault(node, []).append(snap.metadata["step"] + 1)
    return steps


def test_runs_on_a_saved_server_thread_number_their_steps_as_the_server_saves_them(server_url: str) -> None:
    """A server streams no checkpoints, so a view reads the thread's step before it runs:
    a second input, a resume and a replay show the steps the server saves (not 1, 2, ...)."""
    graph = lgnb.connect(server_url, "agent")
    config = _thread()
    lgnb.run(graph, HUMAN, config, display=False).wait(60)  # chat at 1, review asks at 2
    again = lgnb.run(graph, {"messages": [{"role": "user", "content": "again"}]}, config, display=False)
    again.wait(60)  # the answer is pending: the new input waits behind no one (a new run)
    assert again.status == "interrupted"
    saved = _server_steps(graph, config)
    assert [u["step"] for u in again.content["updates"] if u["node"] == "chat"] == [saved["chat"][-1]] != [1]
    assert again.view.step == saved["chat"][-1] + 1  # review, asking

    answered = lgnb.run(graph, lgnb.types.Command(resume="yes"), config, display=False)
    answered.wait(60)
    assert answered.status == "done", answered.error
    saved = _server_steps(graph, config)
    assert [u["step"] for u in answered.content["updates"] if u["node"] == "review"] == [saved["review"][-1]]

    view = lgnb.history(graph, config)
    before_chat = next(c for c in reversed(view.model.checkpoints) if c.next == ("chat",))  # the second input's
    replay = view.replay(before_chat.id)
    replay.wait(60)
    assert replay.status == "interrupted"
    at = graph.get_state(config).metadata["step"]  # the replay's chat step, saved on a new branch
    # LangGraph saves a copy of the replayed checkpoint one step on (source "fork") first
    assert [u["step"] for u in replay.content["updates"] if u["node"] == "chat"] == [at] == [before_chat.step + 2]
    assert replay.view.step == at + 1  # review, asking again

    # an edit (update_state) the thread has not moved past is run from as it is: no copy
    edited = view.fork(view.model.checkpoints[-1].id, {"messages": [{"role": "user", "content": "edited"}]},
                       as_node="chat")
    edit_step = graph.get_state(edited).metadata["step"]
    from_edit = view.replay(edited["configurable"]["checkpoint_id"])
    from_edit.wait(60)
    assert from_edit.status == "interrupted", from_edit.error
    assert from_edit.view.step == edit_step + 1  # review asks right after the edit


def test_a_second_input_to_a_server_entrypoint_is_shown_at_the_step_the_server_saves(server_url: str) -> None:
    graph = lgnb.connect(server_url, "flow")
    config = _thread()
    lgnb.run(graph, "bees", config, display=False).wait(60)
    run = lgnb.run(graph, "ants", config, display=False)
    assert run.wait(60) == "essay from outline of ants"
    latest = graph.get_state(config).metadata["step"]
    assert latest == 2 and run.view.step == latest
    assert {u["step"] for u in run.content["updates"]} == {latest}

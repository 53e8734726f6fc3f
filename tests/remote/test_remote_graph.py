"""RemoteGraph end to end, against a real local `langgraph dev` serving `app/agent.py`:
chat (streams tokens) -> review (interrupts) -> END."""

from __future__ import annotations

import uuid
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.graph import StateGraph
from lgnb.graph.message import add_messages
from lgnb.pregel.remote import RemoteGraph
from lgnb.types import Command, GraphOutput, StateSnapshot

pytestmark = [pytest.mark.remote, pytest.mark.timeout(120)]

HUMAN = {"messages": [{"role": "user", "content": "hi"}]}


class ParentState(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    verdict: str


def _thread() -> dict:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


@pytest.fixture
def remote(server_url: str) -> RemoteGraph:
    return RemoteGraph("agent", url=server_url)


def test_stream_updates_and_messages_then_interrupt(remote: RemoteGraph) -> None:
    parts = list(remote.stream(HUMAN, _thread(), stream_mode=["updates", "messages"]))
    modes = [mode for mode, _ in parts]
    assert set(modes) == {"updates", "messages"}
    updates = [data for mode, data in parts if mode == "updates"]
    assert updates[0]["chat"]["messages"][0]["content"] == "hello from the server"
    # the interrupt surfaces in `updates`, as locally (its payload arrives as a dict)
    (pending,) = updates[-1]["__interrupt__"]
    assert pending["value"] == {"question": "approve?", "draft": "hello from the server"}
    # messages mode: (message chunk, metadata) tuples of the chat node, tokens in order
    tokens = [data for mode, data in parts if mode == "messages"]
    assert tokens and all(meta["langgraph_node"] == "chat" for _, meta in tokens)
    assert "".join(msg["content"] for msg, _ in tokens) == "hello from the server"


def test_interrupt_and_resume(remote: RemoteGraph) -> None:
    config = _thread()
    first = remote.invoke(HUMAN, config)
    (pending,) = first["__interrupt__"]
    assert pending["value"]["question"] == "approve?"
    state = remote.get_state(config)
    assert isinstance(state, StateSnapshot)
    assert state.next == ("review",)
    assert state.interrupts[0].value["question"] == "approve?"
    assert state.interrupts[0].id == pending["id"]

    out = remote.invoke(Command(resume="yes"), config, version="v2")
    assert isinstance(out, GraphOutput)
    assert out.value["verdict"] == "yes" and out.interrupts == ()
    assert remote.get_state(config).next == ()


def test_v2_stream_parts_carry_interrupts(remote: RemoteGraph) -> None:
    parts = list(remote.stream(HUMAN, _thread(), stream_mode="values", version="v2"))
    assert all(p["type"] == "values" and p["ns"] == () for p in parts)
    assert parts[-1]["interrupts"][0].value["question"] == "approve?"
    assert "__interrupt__" not in parts[-1]["data"]


def test_get_state_history_and_update_state(remote: RemoteGraph) -> None:
    config = _thread()
    remote.invoke(HUMAN, config)
    remote.invoke(Command(resume="no"), config)
    history = list(remote.get_state_history(config))
    assert [s.next for s in history[:3]] == [(), ("review",), ("chat",)]
    assert history[0].values["verdict"] == "no"
    assert history[0].parent_config == history[1].config
    assert all(s.config["configurable"]["thread_id"] == config["configurable"]["thread_id"] for s in history)
    assert len(list(remote.get_state_history(config, limit=2))) == 2

    # fork the thread before the review and answer differently
    before_review = history[1].config
    fork = remote.update_state(before_review, {"verdict": "edited"}, as_node="review")
    assert remote.get_state(fork).values["verdict"] == "edited"


def test_get_graph_draws_the_remote_graph(remote: RemoteGraph) -> None:
    graph = remote.get_graph()
    assert set(graph.nodes) == {"__start__", "chat", "review", "__end__"}
    assert {(e.source, e.target) for e in graph.edges} == {
        ("__start__", "chat"), ("chat", "review"), ("review", "__end__")
    }


def test_remote_graph_as_a_node_streams_into_the_parent(remote: RemoteGraph) -> None:
    builder = StateGraph(ParentState)
    builder.add_node("remote", remote)
    builder.set_entry_point("remote")
    parent = builder.compile(checkpointer=InMemorySaver())
    config = _thread()
    parts = list(parent.stream(HUMAN, config, stream_mode="updates", subgraphs=True))
    nested = [(ns, data) for ns, data in parts if ns]
    assert nested and all(ns[0].startswith("remote:") for ns, _ in nested)
    assert any("chat" in data for _, data in nested)
    # the remote interrupt pauses the parent too
    assert parts[-1] == ((), {"__interrupt__": parts[-1][1]["__interrupt__"]})
    assert parent.get_state(config).next == ("remote",)


async def test_async_stream_and_state(remote: RemoteGraph) -> None:
    config = _thread()
    chunks = [c async for c in remote.astream(HUMAN, config, stream_mode="values")]
    assert chunks[-1]["__interrupt__"][0]["value"]["question"] == "approve?"
    state = await remote.aget_state(config)
    assert state.next == ("review",)
    out = await remote.ainvoke(Command(resume="ok"), config)
    assert out["verdict"] == "ok"
    history = [s async for s in remote.aget_state_history(config)]
    assert history[0].values["verdict"] == "ok"
    graph = await remote.aget_graph()
    assert "review" in graph.nodes


def test_v3_run_stream_interrupt_and_resume(remote: RemoteGraph) -> None:
    config = _thread()
    with remote.stream_events(HUMAN, config, version="v3") as run:
        snapshots = list(run.values)
        assert snapshots and all(isinstance(s, dict) for s in snapshots)
        assert run.interrupted is True
        (pending,) = run.interrupts
        # the question itself, not None (the server sends it as `payload`, the SDK reads `value`)
        (asked,) = remote.get_state(config).interrupts
        assert pending["value"]["question"] == "approve?" and pending["value"] == asked.value
        assert pending["interrupt_id"] == asked.id
    assert remote.get_state(config).values["messages"][-1]["type"] == "ai"
    with remote.stream_events(Command(resume="v3-yes"), config, version="v3") as run:
        assert run.output["verdict"] == "v3-yes"
    assert remote.get_state(config).next == ()


def test_run_view_drives_a_remote_graph(remote: RemoteGraph) -> None:
    """The notebook view consumes only the public protocol: a remote run pauses with its
    interrupt keyed by id and node (the approval form), and resumes from it."""
    import lgnb

    run = lgnb.run(remote, HUMAN, _thread(), display=False)
    run.wait()
    assert run.status == "interrupted"
    (pending,) = run.interrupts
    assert pending["node"] == "review" and pending["id"]
    assert pending["value"] == {"question": "approve?", "draft": "hello from the server"}
    resumed = run.resume({pending["id"]: "approved"})
    resumed.wait()
    assert resumed.status == "done", resumed.error
    assert resumed.result["verdict"] == "approved"

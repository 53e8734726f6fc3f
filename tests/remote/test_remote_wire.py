"""RemoteGraph's wire conversions, offline: config sanitizing, stream-mode planning, chunk
shaping (v1/v2, subgraphs, interrupts, errors), thread states, tracing headers."""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest

from lgnb.errors import GraphInterrupt, ParentCommand
from lgnb.pregel import remote as remote_mod
from lgnb.pregel._remote_wire import (
    ChunkTranslator,
    RemoteException,
    StreamPlan,
    sanitize_config,
    state_snapshot,
)
from lgnb.pregel.remote import RemoteGraph
from lgnb.types import Command, Interrupt

SKIP = ChunkTranslator.SKIP


def test_sanitize_config_keeps_plain_data_and_drops_the_callers_checkpoint() -> None:
    config = {
        "recursion_limit": 7,
        "tags": ["a", object()],
        "callbacks": [object()],
        "metadata": {"user": "u", "obj": object(), "nested": {"ok": [1, object()]}},
        "configurable": {
            "thread_id": "t",
            "checkpoint_id": "c",
            "checkpoint_ns": "ns",
            "checkpoint_map": {},
            "task_id": "x",
            "model": "m",
            "saver": object(),
        },
    }
    assert sanitize_config(config) == {
        "recursion_limit": 7,
        "tags": ["a"],
        "metadata": {"user": "u", "nested": {"ok": [1]}},
        "configurable": {"thread_id": "t", "model": "m"},
    }


def test_stream_plan_maps_messages_and_always_asks_for_updates() -> None:
    plan = StreamPlan(["values", "messages"])
    assert plan.wire == ["values", "messages-tuple", "updates"]
    assert plan.requested == ["values", "messages"] and not plan.single
    plan = StreamPlan(None, parent_modes=frozenset({"custom"}))
    assert plan.wire == ["updates", "custom"] and plan.single


def test_translator_shapes_v1_and_v2() -> None:
    t = ChunkTranslator(StreamPlan("updates"), subgraphs=False, version="v1")
    assert t.feed("updates", {"a": 1}) == {"a": 1}
    assert t.feed("updates|inner:1", {"b": 1}) is SKIP  # subgraph events not asked for
    assert t.feed("metadata", {"run_id": "r"}) is SKIP
    t = ChunkTranslator(StreamPlan(["updates", "messages"]), subgraphs=True, version="v1")
    assert t.feed("updates|inner:1", {"b": 1}) == (("inner:1",), "updates", {"b": 1})
    assert t.feed("messages", [{"content": "x"}, {}]) == ((), "messages", ({"content": "x"}, {}))
    t = ChunkTranslator(StreamPlan("values"), subgraphs=False, version="v2")
    part = t.feed("values", {"x": 1, "__interrupt__": [{"value": "q", "id": "i1"}]})
    assert part == {"type": "values", "ns": (), "data": {"x": 1}, "interrupts": (Interrupt("q", id="i1"),)}
    with pytest.raises(ValueError, match="v1"):
        ChunkTranslator(StreamPlan("values"), subgraphs=False, version="v3")


def test_translator_raises_remote_errors_interrupts_and_parent_commands() -> None:
    t = ChunkTranslator(StreamPlan("values"), subgraphs=False, version="v1")
    with pytest.raises(RemoteException):
        t.feed("error", {"error": "ValueError", "message": "boom"})
    # a top-level call reports the interrupt as data; inside a parent graph it raises
    assert t.feed("updates", {"__interrupt__": [{"value": "q", "id": "i"}]}) is SKIP
    nested = ChunkTranslator(StreamPlan("values"), subgraphs=False, version="v1", caller_ns=("remote:1",))
    with pytest.raises(GraphInterrupt) as info:
        nested.feed("updates", {"__interrupt__": [{"value": "q", "id": "i"}]})
    assert info.value.args[0] == [Interrupt("q", id="i")]
    with pytest.raises(ParentCommand):
        t.feed("command", {"graph": Command.PARENT, "goto": "x"})


def test_translator_forwards_under_the_callers_namespace() -> None:
    seen = []
    t = ChunkTranslator(
        StreamPlan("values"), subgraphs=False, version="v1", caller_ns=("remote:1",),
        forward=lambda ns, mode, data: seen.append((ns, mode, data)),
    )  # fmt: skip
    t.feed("updates|inner:2", {"n": {}})
    assert seen == [(("remote:1", "inner:2"), "updates", {"n": {}})]


def test_state_snapshot_from_thread_state() -> None:
    ckpt = {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c2"}
    snap = state_snapshot(
        {
            "values": {"x": 1},
            "next": ["review"],
            "checkpoint": ckpt,
            "parent_checkpoint": {**ckpt, "checkpoint_id": "c1"},
            "metadata": {"step": 1},
            "created_at": "now",
            "tasks": [
                {"id": "k", "name": "review", "error": "boom", "result": None, "state": None,
                 "checkpoint": None, "interrupts": [{"value": "q", "id": "i"}]},
            ],
        }  # fmt: skip
    )
    assert snap.next == ("review",)
    assert snap.config["configurable"]["checkpoint_id"] == "c2"
    assert snap.parent_config["configurable"]["checkpoint_id"] == "c1"
    assert str(snap.tasks[0].error) == "boom"
    assert snap.interrupts == (Interrupt("q", id="i"),)


def test_state_calls_without_a_thread_say_what_to_pass() -> None:
    rg = RemoteGraph("agent", client=MagicMock(), sync_client=MagicMock())
    with pytest.raises(ValueError, match="thread_id"):
        rg.get_state({"configurable": {}})


def test_with_config_merges_and_keeps_the_clients() -> None:
    sync = MagicMock()
    rg = RemoteGraph("agent", sync_client=sync, name="r").with_config(
        {"configurable": {"thread_id": "t"}}, tags=["x"]
    )
    assert rg.sync_client is sync and rg.name == "r"
    assert rg.config["configurable"] == {"thread_id": "t"} and rg.config["tags"] == ["x"]


def test_missing_client_errors_name_the_fix() -> None:
    with pytest.raises(ValueError, match="url="):
        RemoteGraph("agent").get_graph()


def test_distributed_tracing_headers_join_baggage(monkeypatch: pytest.MonkeyPatch) -> None:
    import langsmith

    tree = MagicMock()
    tree.to_headers.return_value = {"langsmith-trace": "1", "baggage": "b=2"}
    monkeypatch.setattr(langsmith, "get_current_run_tree", lambda: tree)
    merged = remote_mod._merge_tracing_headers({"baggage": "a=1", "X": "y"})
    assert merged == {"X": "y", "langsmith-trace": "1", "baggage": "a=1,b=2"}
    monkeypatch.setattr(langsmith, "get_current_run_tree", lambda: None)
    assert remote_mod._merge_tracing_headers({"X": "y"}) == {"X": "y"}

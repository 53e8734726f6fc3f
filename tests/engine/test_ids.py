"""Ids lgnb makes: message ids (uuid4, as LangGraph's `add_messages`), task ids.

With a checkpointer a task id is LangGraph's hash of the checkpoint (so a thread
resumes on either engine); with none it is UUID-shaped and unique, from a counter.
"""

from __future__ import annotations

import operator
import os
import random
import uuid
from binascii import unhexlify
from typing import Annotated

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.pregel._algo import _xxhash_str
from typing_extensions import TypedDict

from lgnb._internal.ids import new_uuid4
from lgnb.checkpoint.memory import InMemorySaver
from lgnb.graph import START, StateGraph
from lgnb.graph.message import add_messages
from lgnb.types import Send


def _is_uuid4(text: str) -> bool:
    u = uuid.UUID(text)
    return u.version == 4 and u.variant == uuid.RFC_4122 and str(u) == text


def test_new_message_ids_are_uuid4_strings_and_distinct():
    ids = [new_uuid4() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    assert all(_is_uuid4(i) for i in ids[:500])


def test_seeding_pythons_random_does_not_make_message_ids_repeat():
    """A notebook that calls `random.seed(0)` before each run must not get the ids of
    the previous run: they would replace its messages in a saved thread."""

    def ids_after_seed() -> list[str]:
        random.seed(0)
        merged = add_messages([HumanMessage("a")], [AIMessage("b"), AIMessage("c")])
        return [m.id for m in merged]

    first, second = ids_after_seed(), ids_after_seed()
    assert not set(first) & set(second)
    assert all(_is_uuid4(i) for i in first + second)


def test_a_patched_uuid4_pins_message_ids_as_in_langgraphs_own_tests(monkeypatch):
    """Snapshot tests pin ids with `mocker.patch("uuid.uuid4", ...)` (LangGraph's suite
    does): the reducer must call the patched function, not a private copy."""
    pinned = iter(uuid.UUID(f"00000000-0000-4000-8000-{i:012}") for i in range(10))
    monkeypatch.setattr(uuid, "uuid4", lambda: next(pinned))
    merged = add_messages([HumanMessage("a", id="h")], [AIMessage("b"), AIMessage("c")])
    assert [m.id for m in merged] == [
        "h", "00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000001"
    ]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_makes_other_message_ids_than_its_parent():
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: send its next ids and leave at once
        os.close(read_end)
        os.write(write_end, ",".join(new_uuid4() for _ in range(5)).encode())
        os._exit(0)
    os.close(write_end)
    parent = {new_uuid4() for _ in range(5)}
    with os.fdopen(read_end) as f:
        child = set(f.read().split(","))
    os.waitpid(pid, 0)
    assert len(child) == 5 and not parent & child


class _Fan(TypedDict):
    out: Annotated[list, operator.add]


def _fan_graph(checkpointer=None):
    g = StateGraph(_Fan)
    g.add_node("work", lambda s: {"out": [s["i"]]})
    g.add_conditional_edges(START, lambda s: [Send("work", {"i": i}) for i in range(3)])
    return g.compile(checkpointer=checkpointer)


def _task_ids(graph, config=None) -> list[str]:
    events = graph.stream({"out": []}, config, stream_mode="tasks")
    return [e["id"] for e in events if "input" in e]  # task starts


def test_task_ids_without_a_checkpointer_are_uuid_shaped_and_unique_across_runs():
    graph = _fan_graph()
    ids = _task_ids(graph) + _task_ids(graph)
    assert len(ids) == 6 and len(set(ids)) == 6
    assert all(str(uuid.UUID(i)) == i for i in ids)


def test_task_ids_with_a_checkpointer_are_langgraphs_hash_of_the_checkpoint():
    """The ids a paused thread's pending writes are stored under: LangGraph computes
    the same ones, so either engine resumes the other's thread."""
    graph = _fan_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    ids = _task_ids(graph, config)
    # the Sends (written by START's edge, which runs in step 0) were planned for step 1
    # from the checkpoint step 0 left, as LangGraph does
    before = next(s for s in graph.get_state_history(config) if s.metadata["step"] == 0)
    cid = unhexlify(before.config["configurable"]["checkpoint_id"].replace("-", ""))
    expected = [_xxhash_str(cid, "work", "1", "work", "__pregel_push", str(i)) for i in range(3)]
    assert ids == expected
    assert [t.id for t in before.tasks] == expected

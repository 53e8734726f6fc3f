"""lgnb-only: what `interrupt(response_schema=...)` means for lgnb's strict serializer and for
the other tasks of a step, plus the deprecated `checkpoint_during=` keyword.

The validated resume value (a pydantic model, a dataclass) is what the node gets back, so
it may land in state even when the state schema says `Any`: the classes the schema names
are accepted by the run's saver from then on; no other class is.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict

from lgnb.checkpoint.serde import UnsafeCheckpointTypeError
from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.errors import is_invalid_resume
from lgnb.graph import START, StateGraph
from lgnb.types import Command, interrupt


class Decision(BaseModel):
    approved: bool


@dataclasses.dataclass
class Unnamed:
    value: int


class State(TypedDict, total=False):
    answer: Any
    log: Annotated[list, operator.add]


def _graph(saver: Any, node: Any) -> Any:
    return StateGraph(State).add_node("node", node).add_edge(START, "node").compile(checkpointer=saver)


def test_a_response_schema_class_round_trips_on_lgnb_sqlite(tmp_path):
    def node(state):
        return {"answer": interrupt("approve?", response_schema=Decision)}

    with SqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as saver:
        graph, cfg = _graph(saver, node), {"configurable": {"thread_id": "1"}}
        graph.invoke({"answer": None}, cfg)
        with pytest.raises(ValidationError) as info:
            graph.invoke(Command(resume={"approved": "nope"}), cfg)
        assert is_invalid_resume(info.value)
        assert graph.invoke(Command(resume={"approved": True}), cfg)["answer"] == Decision(approved=True)
        assert graph.get_state(cfg).values["answer"] == Decision(approved=True)


def test_a_class_no_schema_names_is_still_refused(tmp_path):
    def node(state):
        interrupt("approve?", response_schema=Decision)
        return {"answer": Unnamed(1)}

    with SqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as saver:
        graph, cfg = _graph(saver, node), {"configurable": {"thread_id": "1"}}
        graph.invoke({"answer": None}, cfg)
        with pytest.raises(UnsafeCheckpointTypeError, match="Unnamed"):
            graph.invoke(Command(resume={"approved": True}), cfg)


def test_an_invalid_answer_lets_the_other_answered_task_finish():
    from lgnb.checkpoint.memory import InMemorySaver

    sent: list[str] = []

    def send(state):
        interrupt("send?", response_schema=Decision)
        sent.append("email")
        return {"log": ["sent"]}

    def check(state):
        interrupt("check?", response_schema=Decision)
        return {"log": ["checked"]}

    g = StateGraph(State)
    g.add_node("check", check)
    g.add_node("send", send)
    g.add_edge(START, "check")
    g.add_edge(START, "send")
    graph, cfg = g.compile(checkpointer=InMemorySaver()), {"configurable": {"thread_id": "1"}}
    graph.invoke({"log": []}, cfg)
    ids = {i.value: i.id for i in graph.get_state(cfg).interrupts}
    with pytest.raises(ValidationError):
        graph.invoke(
            Command(resume={ids["send?"]: {"approved": True}, ids["check?"]: {"approved": "x"}}), cfg
        )
    assert ([i.value for i in graph.get_state(cfg).interrupts], sent) == (["check?"], ["email"])
    out = graph.invoke(Command(resume={ids["check?"]: {"approved": True}}), cfg)
    assert (sorted(out["log"]), sent) == (["checked", "sent"], ["email"])


def test_checkpoint_during_maps_to_durability_and_nodes_see_it():
    from lgnb.warnings import LangGraphDeprecatedSinceV10

    def node(state, config):
        return {"answer": config["configurable"].get("__pregel_durability")}

    graph = StateGraph(State).add_node("node", node).add_edge(START, "node").compile()
    assert graph.invoke({})["answer"] is None
    for flag, mode in ((True, "async"), (False, "exit")):
        with pytest.warns(LangGraphDeprecatedSinceV10, match="checkpoint_during"):
            assert graph.invoke({}, checkpoint_during=flag)["answer"] == mode
    with pytest.raises(ValueError, match="Cannot use both"), pytest.warns(LangGraphDeprecatedSinceV10):
        graph.invoke({}, checkpoint_during=True, durability="sync")
    with pytest.raises(TypeError, match="unexpected keyword"):
        list(graph.stream({}, no_such_option=1))

"""The Runtime and ExecutionInfo a node receives are ordinary frozen dataclasses.

The engine builds them through `lgnb._internal.frozen.slot_builder` (no `__init__`), so
these tests pin that what a node gets equals, compares, copies and refuses assignment
exactly like an instance built the public way.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import TypedDict

import pytest

from lgnb._internal.frozen import slot_builder
from lgnb.graph import END, START, StateGraph
from lgnb.runtime import ExecutionInfo, Runtime


class _S(TypedDict):
    x: int


def _seen_runtime() -> Runtime:
    seen: list[Runtime] = []

    def node(state: _S, runtime: Runtime) -> _S:
        seen.append(runtime)
        return {"x": state["x"] + 1}

    b = StateGraph(_S)
    b.add_node("n", node)
    b.add_edge(START, "n")
    b.add_edge("n", END)
    b.compile().invoke({"x": 0}, {"configurable": {"thread_id": "t"}})
    return seen[0]


def test_a_nodes_runtime_refuses_assignment_like_any_frozen_dataclass() -> None:
    rt = _seen_runtime()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rt.context = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rt.execution_info.task_id = "x"  # type: ignore[misc, union-attr]


def test_a_nodes_runtime_equals_one_rebuilt_through_init() -> None:
    rt = _seen_runtime()
    info = rt.execution_info
    assert info is not None
    assert info.thread_id == "t"
    assert info.node_attempt == 1
    rebuilt = Runtime(**{f.name: getattr(rt, f.name) for f in dataclasses.fields(Runtime)})
    assert rebuilt == rt
    assert ExecutionInfo(**dataclasses.asdict(info)) == info
    assert dataclasses.replace(rt, context="c").execution_info == info
    assert copy.copy(info) == info
    assert pickle.loads(pickle.dumps(info)) == info


def test_slot_builder_sets_every_field_in_declaration_order() -> None:
    build = slot_builder(ExecutionInfo)
    values = ("cp", "ns", "task", "thread", "run", 3, 1.5)
    built = build(*values)
    assert built == ExecutionInfo(*values)
    assert repr(built) == repr(ExecutionInfo(*values))


def test_slot_builder_refuses_classes_it_would_build_wrong() -> None:
    @dataclasses.dataclass(slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            raise AssertionError

    @dataclasses.dataclass(slots=True)
    class Derived:
        a: int
        b: int = dataclasses.field(init=False, default=0)

    @dataclasses.dataclass
    class Unslotted:
        a: int

    for cls, message in ((Checked, "__post_init__"), (Derived, "init=False"),
                         (Unslotted, "slotted dataclass")):
        with pytest.raises(TypeError, match=message):
            slot_builder(cls)

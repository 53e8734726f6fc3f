"""`update_state(..., as_node=X)` runs X's routers with the graph's store, as a run does
(README: a deliberate difference; LangGraph 1.2.24 runs them without it and raises), however
the router reaches it: a `store` parameter, `get_store()` or `runtime.store`."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.config import get_store
from lgnb.graph import START, StateGraph
from lgnb.runtime import Runtime


class S(TypedDict):
    log: Annotated[list, operator.add]


def _by_parameter(state, *, store):
    return "seen" if store is not None and store.get(("k",), "v") is not None else "missed"


def _by_get_store(state):
    store = get_store()
    return "seen" if store is not None and store.get(("k",), "v") is not None else "missed"


def _by_runtime(state, runtime: Runtime):
    return "seen" if runtime.store is not None and runtime.store.get(("k",), "v") is not None else "missed"


@pytest.mark.parametrize("router", [_by_parameter, _by_get_store, _by_runtime], ids=["parameter", "get_store", "runtime"])
def test_a_router_run_by_update_state_as_node_takes_the_same_branch_as_a_run(router):
    store = InMemoryStore()
    store.put(("k",), "v", {"x": 1})
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("seen", lambda s: {"log": ["seen"]})
    g.add_node("missed", lambda s: {"log": ["missed"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("b", router, ["seen", "missed"])
    run = g.compile(checkpointer=InMemorySaver(), store=store)
    assert run.invoke({"log": []}, {"configurable": {"thread_id": "run"}})["log"] == ["a", "b", "seen"]

    paused = g.compile(checkpointer=InMemorySaver(), store=store, interrupt_before=["b"])
    cfg = {"configurable": {"thread_id": "edited"}}
    paused.invoke({"log": []}, cfg)
    paused.update_state(cfg, {"log": ["b by hand"]}, as_node="b")
    assert paused.get_state(cfg).next == ("seen",)

"""A node whose own code raises `asyncio.CancelledError` fails the run as
`NodeCancelledError` (lgnb's; LangGraph lets a sync node's `CancelledError` escape as
it is), whichever way the graph runs: `invoke` (whose steps run as plain calls),
`stream`, `ainvoke` with a sync or an async node. The step before it stays checkpointed,
so the thread resumes at the failed node."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.errors import NodeCancelledError
from lgnb.graph import END, START, StateGraph


class S(TypedDict):
    log: Annotated[list, operator.add]


def _graph(kind: str) -> Any:
    def first(s: S) -> dict:
        return {"log": ["first"]}

    def gives_up(s: S) -> dict:
        raise asyncio.CancelledError("the client went away")

    async def agives_up(s: S) -> dict:
        raise asyncio.CancelledError("the client went away")

    b = StateGraph(S)
    b.add_node("first", first)
    b.add_node("gives_up", agives_up if kind == "async" else gives_up)
    b.add_edge(START, "first")
    b.add_edge("first", "gives_up")
    b.add_edge("gives_up", END)
    return b.compile(checkpointer=InMemorySaver())


def _run(graph: Any, how: str, config: dict) -> None:
    if how == "invoke":
        graph.invoke({"log": []}, config)
    elif how == "stream":
        list(graph.stream({"log": []}, config))
    else:
        asyncio.run(graph.ainvoke({"log": []}, config))


@pytest.mark.parametrize(
    ("how", "kind"), [("invoke", "sync"), ("stream", "sync"), ("ainvoke", "sync"), ("ainvoke", "async")]
)
def test_a_node_raising_cancelled_error_fails_the_run_as_node_cancelled_error(how: str, kind: str) -> None:
    graph = _graph(kind)
    config = {"configurable": {"thread_id": f"{how}-{kind}"}}
    with pytest.raises(NodeCancelledError) as caught:
        _run(graph, how, config)
    assert caught.value.node == "gives_up"
    assert "gives_up" in str(caught.value)
    assert isinstance(caught.value.__cause__, asyncio.CancelledError)
    assert str(caught.value.__cause__) == "the client went away"
    state = graph.get_state(config)  # the finished step is kept; the thread stops at the failure
    assert state.values == {"log": ["first"]}
    assert state.next == ("gives_up",)

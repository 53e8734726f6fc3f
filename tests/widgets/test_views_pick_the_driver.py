"""The views pick `stream` or `astream` from the graph: an `async def` node, conditional
edge or subgraph node needs `astream`, and a notebook user should not have to say so.

`lgnb.run`, `lgnb.lens` and a history view's replays default to `use_async=None`: decided
by `lgnb.widgets._async_nodes.needs_async`, which reads both engines' compiled graphs.
"""

from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from lgnb.widgets._async_nodes import needs_async
from lgnb.widgets.history_view import HistoryView
from lgnb.widgets.lens_view import Lens
from lgnb.widgets.run_view import Run


class Log(TypedDict):
    log: Annotated[list, operator.add]


async def _aspeak(state: Log) -> dict[str, Any]:
    return {"log": ["async"]}


def _speak(state: Log) -> dict[str, Any]:
    return {"log": ["sync"]}


def _graph(eng: SimpleNamespace, kind: str, **compile_kwargs: Any) -> Any:
    b = eng.StateGraph(Log)
    if kind == "sync":
        b.add_node("speak", _speak)
        b.add_edge(eng.START, "speak")
    elif kind == "async_node":
        b.add_node("speak", _aspeak)
        b.add_edge(eng.START, "speak")
    elif kind == "async_edge":
        async def route(state: Log) -> str:
            return "speak"

        b.add_node("first", _speak)
        b.add_node("speak", _speak)
        b.add_edge(eng.START, "first")
        b.add_conditional_edges("first", route, ["speak"])
    else:  # "async_in_subgraph": a subgraph node whose own node is async
        inner = eng.StateGraph(Log)
        inner.add_node("speak", _aspeak)
        inner.add_edge(eng.START, "speak")
        b.add_node("team", inner.compile())
        b.add_edge(eng.START, "team")
    return b.compile(**compile_kwargs)


KINDS = ("sync", "async_node", "async_edge", "async_in_subgraph")


@pytest.mark.parametrize("kind", KINDS)
def test_needs_async_reads_nodes_edges_and_subgraphs_of_either_engine(eng: SimpleNamespace, kind: str) -> None:
    assert needs_async(_graph(eng, kind)) is (kind != "sync")


def test_needs_async_is_false_for_what_it_cannot_read() -> None:
    assert needs_async(object()) is False
    assert needs_async(SimpleNamespace(nodes={"n": SimpleNamespace(bound=None)})) is False


@pytest.mark.parametrize("kind", ("sync", "async_node", "async_in_subgraph"))
def test_run_view_runs_any_graph_without_being_told_its_driver(eng: SimpleNamespace, kind: str) -> None:
    run = Run(_graph(eng, kind), {"log": []})
    run.view._controller  # noqa: B018 - the view exists, nothing displayed
    run.wait(30)
    assert run.status == "done", run.status
    assert run.result["log"] == (["sync"] if kind == "sync" else ["async"])


@pytest.mark.parametrize("kind", ("sync", "async_edge"))
def test_lens_steps_any_graph_without_being_told_its_driver(eng: SimpleNamespace, kind: str) -> None:
    lens = Lens(_graph(eng, kind), {"log": []})
    assert lens.use_async is (kind != "sync")
    lens.run()
    assert lens.status == "done" and lens.result["log"][-1] == "sync"


def test_history_replays_an_async_graph_through_astream(eng: SimpleNamespace) -> None:
    graph = _graph(eng, "async_node", checkpointer=eng.InMemorySaver())
    config = {"configurable": {"thread_id": "replayed"}}
    Run(graph, {"log": []}, config).wait(30)
    view = HistoryView(graph, config)
    view.refresh()
    assert view.use_async is True
    first = list(graph.get_state_history(config))[-1].config["configurable"]["checkpoint_id"]
    replay = view.replay(first)
    replay.wait(30)
    assert replay.status == "done" and graph.get_state(config).values["log"] == ["async"]


def test_an_explicit_driver_still_wins(eng: SimpleNamespace) -> None:
    assert Lens(_graph(eng, "sync"), {"log": []}, use_async=True).use_async is True

"""A node that raises a BaseException (`SystemExit`, `KeyboardInterrupt`, a subclass of
BaseException) ends the run with it, and loses no finished step, as on LangGraph.

Under durability "async" an async run writes its saves in asyncio tasks. asyncio lets a
`SystemExit` or `KeyboardInterrupt` raised in a task escape its event loop, and
`asyncio.run` then cancels every task: the checkpoint of the step before, whose save had
not run yet, was lost (the thread resumed from the step before that). The run now writes
what a cancel left unwritten as it ends."""

from __future__ import annotations

import asyncio
import operator
import uuid
from typing import Annotated

import pytest
from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]


class Halt(BaseException):
    """A BaseException of the user's own (not an Exception)."""


def _graph(E, b):
    g = E.StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", b)
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=E.InMemorySaver())


def _history(app, cfg):
    return [(s.next, s.values, [(t.name, repr(t.error)) for t in s.tasks]) for s in app.get_state_history(cfg)]


@pytest.mark.parametrize("durability", ["async", "sync", "exit"])
@pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt("k"), Halt("h")], ids=repr)
def test_an_async_node_raising_a_base_exception_keeps_the_finished_steps(differential, durability, error):
    def scenario(E):
        async def b(s):
            raise error

        app = _graph(E, b)
        cfg = {"configurable": {"thread_id": str(uuid.uuid4())}}

        async def main():
            async for _ in app.astream({"log": []}, cfg, durability=durability):
                pass

        try:
            asyncio.run(main())
            raised = None
        except BaseException as e:  # noqa: BLE001 - the BaseException is the point
            raised = type(e).__name__
        return raised, _history(app, cfg)

    ref = differential(scenario)
    assert ref[1][0][1] == {"log": ["a"]}  # the step of `a` is saved


@pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt("k"), Halt("h")], ids=repr)
def test_a_live_streams_lone_task_raising_a_base_exception_records_it(differential, error):
    """A live stream (`custom`) runs the task in a thread, as LangGraph's pool does, whose
    future records any error as the task's: `get_state().tasks` shows it. Not live, the
    task runs in the calling thread on LangGraph, which records only an `Exception`."""

    def scenario(E):
        def b(s):
            raise error

        out = []
        for modes in (["custom", "updates"], ["updates"]):
            app = _graph(E, b)
            cfg = {"configurable": {"thread_id": str(uuid.uuid4())}}
            try:
                for _ in app.stream({"log": []}, cfg, stream_mode=modes):
                    pass
            except BaseException as e:  # noqa: BLE001 - the BaseException is the point
                out.append((modes, type(e).__name__, _history(app, cfg)[0]))
        return out

    differential(scenario)

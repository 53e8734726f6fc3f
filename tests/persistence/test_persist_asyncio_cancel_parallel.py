"""An async run cancelled by asyncio (`task.cancel()`, `asyncio.wait_for` running out)
while a step of several tasks runs: as on LangGraph, the branch that finished keeps its
writes, the one still running is recorded as cancelled (its `CancelledError` saved as its
error, shown in `get_state().tasks`), and a resume runs only that one."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]


def _scenario(durability: str, how: str) -> Any:
    def scenario(E: Any) -> Any:
        ran: list[str] = []

        async def fast(s: S) -> dict:
            ran.append("fast")
            return {"log": ["fast"]}

        async def slow(s: S) -> dict:
            ran.append("slow")
            await asyncio.sleep(0 if ran.count("slow") > 1 else 30)
            return {"log": ["slow"]}

        b = E.StateGraph(S)
        b.add_node("fast", fast)
        b.add_node("slow", slow)
        b.add_edge(E.START, "fast")
        b.add_edge(E.START, "slow")
        saver = E.InMemorySaver()
        graph = b.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t"}}

        async def run() -> Any:
            call = graph.ainvoke({"log": []}, cfg, durability=durability)
            if how == "wait_for":
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(call, 0.3)
            else:
                task = asyncio.ensure_future(call)
                while ran.count("slow") < 1 or "fast" not in ran:
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.05)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            state = await graph.aget_state(cfg)
            pending = sorted((channel, repr(value)) for _, channel, value in saver.get_tuple(cfg).pending_writes)
            saved = (state.next, [(t.name, repr(t.error)) for t in state.tasks], pending)
            resumed = await graph.ainvoke(None, cfg, durability=durability)
            return saved, sorted(resumed["log"]), sorted(ran)

        return asyncio.run(run())

    return scenario


@pytest.mark.parametrize("how", ["wait_for", "task.cancel"])
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_a_cancelled_parallel_steps_running_branch_is_recorded_cancelled_and_resumed_alone(
    differential: Any, durability: str, how: str
) -> None:
    ref = differential(_scenario(durability, how))
    (next_, tasks, _pending), log, ran = ref
    assert next_ == ("slow",) and log == ["fast", "slow"] and ran == ["fast", "slow", "slow"]
    if durability != "exit":  # LangGraph saves the thread as the run stops, before the cancel
        assert tasks == [("fast", "None"), ("slow", "'CancelledError()'")]

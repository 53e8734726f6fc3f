"""An async saver that fails to save a finished task's writes, after suspending (as a real
database call does): the run fails with the saver's error before the next node runs, and
nothing finished is lost: once the saver works again, resuming the thread ends where an
unbroken run ends, with every node's work applied once.

lgnb starts saving a root task's writes at once and finishes the save before anything
else is asked of the saver (`lgnb/pregel/_driver.py`, `astart_flush`); these tests hold
that deferral to the same guarantees the immediate save gave, and a failed save never
lets a checkpoint built on it be saved (a `DeltaChannel` checkpoint would lose the writes).
A parallel step's writes are saved one behind the other (`_then_flush`): a failed first
save drops what was chained behind it. A real SQLite file through lgnb's
`AsyncSqliteSaver`; the sync node and the async one; `ainvoke`, `astream` and
`astream_events`.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from lgnb.channels.delta import DeltaChannel
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.graph import START, StateGraph


class S(TypedDict):
    log: Annotated[list, operator.add]


class DiskFullOnce(AsyncSqliteSaver):
    """Fails saving the writes of the task that wrote `["a"]`, once, after a real
    suspension of the event loop."""

    failed = False

    async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        await asyncio.sleep(0)
        if not self.failed and any(value == ["a"] for _, value in writes):
            self.failed = True
            raise OSError("disk full")
        await super().aput_writes(config, writes, task_id, task_path)


def _graph(saver: Any, ran: list[str], *, is_async: bool) -> Any:
    def node(name: str) -> Any:
        if is_async:
            async def anode(s: S) -> dict:
                ran.append(name)
                return {"log": [name]}

            return anode

        def snode(s: S) -> dict:
            ran.append(name)
            return {"log": [name]}

        return snode

    return (
        StateGraph(S)
        .add_node("a", node("a"))
        .add_node("b", node("b"))
        .add_node("c", node("c"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .compile(checkpointer=saver)
    )


@pytest.mark.parametrize("is_async", [False, True], ids=["sync-node", "async-node"])
@pytest.mark.parametrize("how", ["ainvoke", "astream-updates", "astream-messages"])
def test_a_failed_save_of_a_tasks_writes_fails_the_run_and_a_resume_loses_nothing(tmp_path, how, is_async):
    async def scenario() -> None:
        ran: list[str] = []
        cfg = {"configurable": {"thread_id": "t"}}
        async with DiskFullOnce.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
            app = _graph(saver, ran, is_async=is_async)
            with pytest.raises(OSError, match="disk full"):
                if how == "ainvoke":
                    await app.ainvoke({"log": []}, cfg)
                else:
                    async for _ in app.astream({"log": []}, cfg, stream_mode=how.split("-")[1]):
                        pass
            assert saver.failed
            assert ran == ["a"], "the run went on past a task whose writes were not saved"

            final = await app.ainvoke(None, cfg)
            assert final == {"log": ["a", "b", "c"]}
            assert ran.count("b") == 1 and ran.count("c") == 1
            state = await app.aget_state(cfg)
            assert state.next == () and state.values == {"log": ["a", "b", "c"]}

    asyncio.run(scenario())


def _append(current: list, writes: list) -> list:
    return [*current, *(item for write in writes for item in write)]


class D(TypedDict):
    log: Annotated[list, DeltaChannel(_append)]
    plain: Annotated[list, operator.add]


class FailsBsWritesOnce(AsyncSqliteSaver):
    """Fails saving the writes of `b`, once, after a real suspension; every checkpoint's
    save suspends too, so under durability "async" one may still be under way when `b`'s
    writes are saved."""

    failed = False

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        await asyncio.sleep(0.002)
        return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        await asyncio.sleep(0)
        if not self.failed and ("log", ["b"]) in writes:
            self.failed = True
            raise ConnectionError("b's writes were not saved")
        await super().aput_writes(config, writes, task_id, task_path)


@pytest.mark.parametrize("durability", ["sync", "async"])
@pytest.mark.parametrize("how", ["ainvoke", "astream-updates", "astream-custom"])
def test_no_checkpoint_is_saved_on_a_tasks_writes_that_failed_to_save(tmp_path, how, durability):
    """A `DeltaChannel` checkpoint holds no values, only the writes it reads: a checkpoint
    saved after its step's writes failed to save would lose them. Every saved state has
    the delta key equal to its plain twin, and a resume ends as an unbroken run does."""
    async def scenario() -> None:
        cfg = {"configurable": {"thread_id": "t"}}
        async with FailsBsWritesOnce.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
            builder = StateGraph(D)
            for name in "abc":
                async def node(s: D, name: str = name) -> dict:
                    await asyncio.sleep(0)
                    return {"log": [name], "plain": [name]}

                builder.add_node(name, node)
            builder.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c")
            app = builder.compile(checkpointer=saver)
            with pytest.raises(ConnectionError):
                if how == "ainvoke":
                    await app.ainvoke({"log": [], "plain": []}, cfg, durability=durability)
                else:
                    async for _ in app.astream({"log": [], "plain": []}, cfg, durability=durability,
                                               stream_mode=how.split("-")[1]):
                        pass
            async for state in app.aget_state_history(cfg):
                assert state.values.get("log", []) == state.values.get("plain", []), state
            await app.ainvoke(None, cfg, durability=durability)
            assert (await app.aget_state(cfg)).values == {"log": ["a", "b", "c"], "plain": ["a", "b", "c"]}

    asyncio.run(scenario())


class FailsLeftsWritesOnce(FailsBsWritesOnce):
    """Fails saving the writes of `left` (a parallel step's first task), once, after a
    real suspension: the writes of `right`, finished in the same pass, are saved behind
    it (`_then_flush`)."""

    async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        await asyncio.sleep(0)
        if not self.failed and ("log", ["left"]) in writes:
            self.failed = True
            raise ConnectionError("left's writes were not saved")
        await AsyncSqliteSaver.aput_writes(self, config, writes, task_id, task_path)


@pytest.mark.parametrize("durability", ["sync", "async"])
@pytest.mark.parametrize("how", ["ainvoke", "astream-updates", "astream_events"])
def test_a_parallel_steps_failed_save_stops_the_run_and_no_checkpoint_is_built_on_it(tmp_path, how, durability):
    """START -> left, right (both finish in one pass of the event loop) -> join. The save of
    `left`'s writes fails: the run fails with that error, `join` has not run, every saved
    state has the delta key equal to its plain twin, and a resume ends as an unbroken run."""
    async def scenario() -> None:
        ran: list[str] = []
        async with FailsLeftsWritesOnce.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
            builder = StateGraph(D)
            for name in ("left", "right", "join"):
                async def node(s: D, name: str = name) -> dict:
                    ran.append(name)
                    return {"log": [name], "plain": [name]}

                builder.add_node(name, node)
            builder.add_edge(START, "left").add_edge(START, "right")
            builder.add_edge(["left", "right"], "join")
            app = builder.compile(checkpointer=saver)
            cfg = {"configurable": {"thread_id": "t"}}
            inp = {"log": [], "plain": []}
            with pytest.raises(ConnectionError):
                if how == "ainvoke":
                    await app.ainvoke(inp, cfg, durability=durability)
                elif how == "astream_events":
                    async for _ in app.astream_events(inp, cfg, version="v2", durability=durability):
                        pass
                else:
                    async for _ in app.astream(inp, cfg, durability=durability, stream_mode="updates"):
                        pass
            assert "join" not in ran, "the run went on past a step whose writes were not saved"
            async for state in app.aget_state_history(cfg):
                assert state.values.get("log", []) == state.values.get("plain", []), state
            final = await app.ainvoke(None, cfg, durability=durability)
            unbroken = await app.ainvoke(inp, {"configurable": {"thread_id": "unbroken"}}, durability=durability)
            assert final == unbroken == {"log": ["left", "right", "join"], "plain": ["left", "right", "join"]}

    asyncio.run(scenario())

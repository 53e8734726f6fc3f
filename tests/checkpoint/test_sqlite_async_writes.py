"""`AsyncSqliteSaver.aput_writes` (issue 14): a task's regular writes are encoded and
buffered on the event loop, with no hop to a worker thread (they are committed with the
step's checkpoint, as `SqliteSaver.put_writes` does); a write that must reach the disk at
once (an error, an interrupt) or that would wait for another thread still goes to a
worker, so the event loop is never blocked on the connection. Real files, real graphs."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.graph import START, StateGraph
from lgnb.types import Command, interrupt


def _cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _rows(db_path: Path, sql: str) -> list[tuple]:
    """What another connection (another process resuming the thread) reads now."""
    other = sqlite3.connect(db_path)
    try:
        return other.execute(sql).fetchall()
    finally:
        other.close()


def test_a_tasks_regular_writes_are_saved_without_suspending_the_caller(db_path: Path) -> None:
    async def scenario() -> None:
        async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
            stored = await saver.aput(_cfg(), empty_checkpoint(), {}, {})
            coro = saver.aput_writes(stored, [("doc", "finished"), ("n", 1)], "task-1")
            with pytest.raises(StopIteration):  # done at the first step: no thread hop
                coro.send(None)
            got = await saver.aget_tuple(stored)
            assert got is not None
            assert [(t, c, v) for t, c, v in got.pending_writes] == [
                ("task-1", "doc", "finished"), ("task-1", "n", 1)]

    _run(scenario())


def test_an_error_write_is_on_disk_for_another_connection_when_aput_writes_returns(db_path: Path) -> None:
    async def scenario() -> None:
        async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
            stored = await saver.aput(_cfg(), empty_checkpoint(), {}, {})
            await saver.aput_writes(stored, [("__error__", ValueError("boom"))], "task-1")
            assert _rows(db_path, "SELECT channel FROM lgnb_writes") == [("__error__",)]

    _run(scenario())


def test_aput_writes_does_not_block_the_event_loop_while_another_thread_holds_the_connection(
        db_path: Path) -> None:
    async def scenario() -> None:
        async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
            stored = await saver.aput(_cfg(), empty_checkpoint(), {}, {})
            lock = saver.store.lock
            lock.acquire()  # as a checkpoint committing in a worker thread holds it
            released = threading.Event()

            def release() -> None:
                if not released.is_set():
                    released.set()
                    lock.release()

            safety = threading.Timer(10, release)  # a blocked event loop fails, not hangs
            safety.start()
            order: list[str] = []

            async def meanwhile() -> None:
                order.append("the event loop ran")
                release()

            other = asyncio.ensure_future(meanwhile())
            await saver.aput_writes(stored, [("doc", "finished")], "task-1")
            order.append("saved")
            safety.cancel()
            await other
            assert order == ["the event loop ran", "saved"]
            got = await saver.aget_tuple(stored)
            assert got is not None and [v for _, _, v in got.pending_writes] == ["finished"]

    _run(scenario())


class _State(TypedDict, total=False):
    doc: str
    answer: str


def test_an_async_run_that_pauses_and_resumes_keeps_every_write_on_a_fresh_connection(db_path: Path) -> None:
    """A two-node graph: `write` then `ask` (interrupts). Its thread, read back from a new
    saver on the same file, holds `write`'s output and the interrupt; the resume ends it."""
    def write(state: _State) -> _State:
        return {"doc": "drafted"}

    def ask(state: _State) -> _State:
        return {"answer": interrupt({"question": "ok?", "doc": state["doc"]})}

    g = StateGraph(_State)
    g.add_node("write", write)
    g.add_node("ask", ask)
    g.add_edge(START, "write")
    g.add_edge("write", "ask")
    cfg = {"configurable": {"thread_id": "t"}}

    async def first() -> None:
        async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
            out = await g.compile(checkpointer=saver).ainvoke({}, cfg)
            assert out["__interrupt__"][0].value == {"question": "ok?", "doc": "drafted"}

    async def second() -> dict[str, Any]:
        async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
            app = g.compile(checkpointer=saver)
            state = await app.aget_state(cfg)
            assert state.next == ("ask",) and state.values == {"doc": "drafted"}
            return await app.ainvoke(Command(resume="yes"), cfg)

    _run(first())
    assert _run(second()) == {"doc": "drafted", "answer": "yes"}

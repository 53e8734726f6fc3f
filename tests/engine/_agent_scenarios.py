"""Helpers of the differential scenarios of agent libraries (langgraph-supervisor and
-swarm, deepagents, langmem, trustcall): scripted replies, the library's graph on each
engine, each engine's own checkpointer, histories compared without message ids."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from _diff import Engine, snapshot_summary
from langchain_core.messages import AIMessage

__all__ = ("ahistory", "asaver", "calls", "history", "on", "replies", "saver", "say", "without_ids")


def calls(mid: str, *tool_calls: tuple[str, dict, str], content: str = "") -> AIMessage:
    """A scripted model's reply `mid` calling tools: `(name, args, call id)` each."""
    return AIMessage(content, id=mid, tool_calls=[
        {"name": n, "args": a, "id": cid, "type": "tool_call"} for n, a, cid in tool_calls])


def replies(*steps: Any) -> Any:
    """A scripted model's `script`: the steps in order, each a reply, or a function that
    answers from the messages the model is sent (as a model would, say, repeat an id)."""
    it = iter(steps)

    def reply(messages: Any) -> Any:
        step = next(it)
        return step(messages) if callable(step) else step

    return reply


def say(text: str, mid: str) -> AIMessage:
    """A scripted model's plain reply."""
    return AIMessage(text, id=mid)


def on(E: Engine, graph: Any) -> Any:
    """The library's graph on engine E: itself on LangGraph, rebuilt on lgnb (what a user
    porting a program writes)."""
    if E.root == "lgnb":
        from lgnb.graph import from_langgraph

        return from_langgraph(graph)
    return graph


@contextmanager
def saver(E: Engine, kind: str, tmp_path: Path, *, name: str | None = None,
          allow: Sequence[Any] = ()) -> Iterator[Any]:
    """The engine's own checkpointer: in memory, or SQLite in a file of its own (`name`,
    by default the engine's label); lgnb's also loads the classes in `allow`."""
    if kind == "memory":
        yield E.InMemorySaver()
        return
    path = str(tmp_path / f"{name or E.label}.db")
    if E.root == "lgnb":
        from lgnb.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(path, allow=list(allow)) as lgnb_saver:
            yield lgnb_saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSaver

    with LangGraphSaver.from_conn_string(path) as langgraph_saver:
        yield langgraph_saver


@asynccontextmanager
async def asaver(E: Engine, kind: str, tmp_path: Path, *, allow: Sequence[Any] = ()) -> AsyncIterator[Any]:
    """`saver` for async runs: in memory, or the engine's `AsyncSqliteSaver` in a file of its
    own (lgnb's also loads the classes in `allow`)."""
    if kind == "memory":
        yield E.InMemorySaver()
        return
    aio = importlib.import_module(f"{E.root}.checkpoint.sqlite.aio")
    path = str(tmp_path / f"{E.label}.db")
    opened = (aio.AsyncSqliteSaver.from_conn_string(path, allow=list(allow)) if E.root == "lgnb"
              else aio.AsyncSqliteSaver.from_conn_string(path))
    async with opened as saver:
        yield saver


def history(app: Any, cfg: dict) -> list:
    """The thread's history. Task results show their messages without ids: LangGraph saves
    a task's writes in the background while `add_messages` gives new messages their ids
    in place, so whether a saved write has them varies from run to run on LangGraph."""
    out = []
    for s in app.get_state_history(cfg):
        summary = snapshot_summary(s)
        summary["tasks"] = [(name, path, interrupts, without_ids(result), state)
                            for name, path, interrupts, result, state in summary["tasks"]]
        out.append(summary)
    return out


async def ahistory(app: Any, cfg: dict) -> list:
    """`history`, read with `aget_state_history` (an async saver)."""
    out = []
    async for s in app.aget_state_history(cfg):
        summary = snapshot_summary(s)
        summary["tasks"] = [(name, path, interrupts, without_ids(result), state)
                            for name, path, interrupts, result, state in summary["tasks"]]
        out.append(summary)
    return out


def without_ids(result: Any) -> Any:
    """A task result's messages as (type, content, name, tool_call_id); an input written
    as a message-like (`("user", text)`, a dict) stays as written."""
    if isinstance(result, dict) and isinstance(result.get("messages"), list):
        return {**result, "messages": [(m.type, m.content, m.name, getattr(m, "tool_call_id", None))
                                       if hasattr(m, "type") and hasattr(m, "content") else m
                                       for m in result["messages"]]}
    return result

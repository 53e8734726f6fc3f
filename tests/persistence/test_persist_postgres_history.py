"""get_state_history on PostgreSQL with a DeltaChannel: the history is read without deadlocking.

`PostgresSaver.list()` / `AsyncPostgresSaver.alist()` yield while they hold the saver's
connection lock (and cursor). Rebuilding a DeltaChannel value calls the same saver again
(`get_delta_channel_history`), so lgnb must take the listing in full before it hydrates a
snapshot; iterating it lazily waits forever on the lock. The reads run under a deadline so a
regression fails here instead of hanging the session."""

import asyncio
import threading
import uuid
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgnb.channels.delta import DeltaChannel
from lgnb.graph import START, StateGraph

_DEADLINE = 30


def _fold(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


def _builder() -> StateGraph:
    class S(TypedDict, total=False):
        log: Annotated[list, DeltaChannel(_fold)]

    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g


_EXPECTED = [["a", "b"], ["a"], [], []]  # newest first: b, a, the input, the empty start


def _cfg() -> dict:
    return {"configurable": {"thread_id": f"pg-history-{uuid.uuid4().hex}"}}


@pytest.mark.timeout(_DEADLINE * 3)
def test_sync_history_with_a_delta_channel_on_postgres(postgres_url):
    from lgnb.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        app, cfg = _builder().compile(checkpointer=saver), _cfg()
        app.invoke({"log": []}, cfg)
        out: dict = {}

        def read() -> None:
            try:
                snaps = list(app.get_state_history(cfg))
                out["values"] = [s.values.get("log", []) for s in snaps]
                # a live iteration that calls the saver between items
                out["states"] = [app.get_state(s.config).values.get("log", []) for s in app.get_state_history(cfg)]
            except BaseException as e:  # noqa: BLE001 - reported by the test thread
                out["error"] = e

        worker = threading.Thread(target=read, daemon=True)
        worker.start()
        worker.join(_DEADLINE)
        assert not worker.is_alive(), "get_state_history deadlocked on PostgresSaver"
        if "error" in out:
            raise out["error"]
        assert out["values"] == _EXPECTED
        assert out["states"] == _EXPECTED


@pytest.mark.timeout(_DEADLINE * 3)
async def test_async_history_with_a_delta_channel_on_postgres(postgres_url):
    from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(postgres_url) as saver:
        await saver.setup()
        app, cfg = _builder().compile(checkpointer=saver), _cfg()
        await app.ainvoke({"log": []}, cfg)

        async def read() -> tuple[list, list]:
            values = [s.values.get("log", []) async for s in app.aget_state_history(cfg)]
            states = [(await app.aget_state(s.config)).values.get("log", []) async for s in app.aget_state_history(cfg)]
            return values, states

        try:
            values, states = await asyncio.wait_for(read(), _DEADLINE)
        except asyncio.TimeoutError:
            pytest.fail("aget_state_history deadlocked on AsyncPostgresSaver")
        assert values == _EXPECTED
        assert states == _EXPECTED

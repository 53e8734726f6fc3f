"""Checkpoint metadata and `list(filter=...)` on lgnb's SQLite saver, side by side with
`langgraph.checkpoint.sqlite` (the module it replaces): the metadata comes back whole,
and a filter selects the same checkpoints, dotted keys reaching into nested metadata."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as LangGraphAsyncSqliteSaver

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver

METADATA: list[dict[str, Any]] = [
    {"source": "input", "step": 1, "writes": {"foo": "bar"}, "score": 1,
     "user": {"access-level": "nested", "123abc": "ok2", "tags": ["a", "b"]}},
    {"source": "loop", "step": 2, "access-level": "public", "123abc": "ok", "score": None},
    {"source": "loop", "step": 3, "flag": True, "user": {"access-level": "other"}},
]
FILTERS: list[dict[str, Any]] = [
    {"source": "loop"}, {"step": 2}, {"writes": {"foo": "bar"}}, {"writes.foo": "bar"},
    {"access-level": "public"}, {"123abc": "ok"}, {"user.access-level": "nested"},
    {"user.123abc": "ok2"}, {"user.tags": ["a", "b"]}, {"user.missing": None},
    {"score": None}, {"flag": True}, {"source": "loop", "user.access-level": "other"},
    {"nope": "x"},
]


def _fill(saver: Any) -> None:
    for i, md in enumerate(METADATA):
        cfg = {"configurable": {"thread_id": f"t{i}", "checkpoint_ns": ""}}
        saver.put(cfg, empty_checkpoint(), md, {})


def _observe(saver: Any) -> list[Any]:
    _fill(saver)
    out: list[Any] = [sorted((t.config["configurable"]["thread_id"], sorted(t.metadata.items()))
                             for t in saver.list(None))]
    for f in FILTERS:
        out.append((f, sorted(t.config["configurable"]["thread_id"] for t in saver.list(None, filter=f))))
    return out


def test_metadata_and_filters_match_langgraphs_sqlite_saver() -> None:
    with LangGraphSqliteSaver.from_conn_string(":memory:") as theirs, \
            SqliteSaver.from_conn_string(":memory:") as ours:
        reference = _observe(theirs)
        assert _observe(ours) == reference
    assert reference[1 + FILTERS.index({"user.access-level": "nested"})][1] == ["t0"]
    assert reference[1 + FILTERS.index({"writes.foo": "bar"})][1] == ["t0"]


@pytest.mark.parametrize("key", ["writes.foo", "user.access-level"])
def test_the_async_saver_filters_dotted_keys_the_same_way(key: str) -> None:
    async def observe(cls: Any) -> list[str]:
        async with cls.from_conn_string(":memory:") as saver:
            for i, md in enumerate(METADATA):
                await saver.aput({"configurable": {"thread_id": f"t{i}", "checkpoint_ns": ""}},
                                 empty_checkpoint(), md, {})
            value = {"writes.foo": "bar", "user.access-level": "nested"}[key]
            return sorted([t.config["configurable"]["thread_id"]
                           async for t in saver.alist(None, filter={key: value})])

    assert asyncio.run(observe(AsyncSqliteSaver)) == asyncio.run(observe(LangGraphAsyncSqliteSaver)) == ["t0"]

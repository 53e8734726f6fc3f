"""Open any checkpointer of the matrix, sync or async, for a scenario.

Kinds:
  memory                  E.InMemorySaver() (LangGraph's, re-exported by lgnb)
  langgraph_sqlite        langgraph.checkpoint.sqlite.SqliteSaver   (langgraph-checkpoint-sqlite)
  langgraph_async_sqlite  langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver
  lgnb_sqlite             lgnb.checkpoint.sqlite.SqliteSaver
  lgnb_async_sqlite       lgnb.checkpoint.sqlite.aio.AsyncSqliteSaver
  postgres                langgraph.checkpoint.postgres.PostgresSaver (langgraph-checkpoint-postgres)
  async_postgres          langgraph.checkpoint.postgres.aio.AsyncPostgresSaver

Thread ids are made unique (``name-<32 hex>``) so runs never share a thread in a shared
PostgreSQL database; the harness normalizes the hex part, so "same thread" is still compared.
"""

from __future__ import annotations

import itertools
import uuid
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

SYNC_KINDS = ("memory", "langgraph_sqlite", "lgnb_sqlite", "postgres")
ASYNC_KINDS = ("memory", "langgraph_async_sqlite", "lgnb_async_sqlite", "async_postgres", "lgnb_sqlite")
POSTGRES_KINDS = {"postgres", "async_postgres"}

_counter = itertools.count()


def thread(name: str = "t") -> dict:
    return {"configurable": {"thread_id": f"{name}-{uuid.uuid4().hex}"}}


class Savers:
    def __init__(self, tmp_path: Path, pg_url: str | None = None) -> None:
        self.tmp_path = tmp_path
        self.pg_url = pg_url

    def _file(self, kind: str) -> str:
        return str(self.tmp_path / f"{kind}-{next(_counter)}.sqlite")

    @contextmanager
    def open(self, kind: str, E: Any):
        if kind == "memory":
            yield E.InMemorySaver()
        elif kind == "langgraph_sqlite":
            from langgraph.checkpoint.sqlite import SqliteSaver

            with SqliteSaver.from_conn_string(self._file(kind)) as s:
                yield s
        elif kind == "lgnb_sqlite":
            from lgnb.checkpoint.sqlite import SqliteSaver

            with SqliteSaver.from_conn_string(self._file(kind)) as s:
                yield s
        elif kind == "postgres":
            from langgraph.checkpoint.postgres import PostgresSaver

            assert self.pg_url, "postgres saver needs the postgres_url fixture"
            with PostgresSaver.from_conn_string(self.pg_url) as s:
                s.setup()
                yield s
        else:
            raise ValueError(f"{kind!r} is not a sync saver kind")

    @asynccontextmanager
    async def aopen(self, kind: str, E: Any):
        if kind == "memory":
            yield E.InMemorySaver()
        elif kind == "langgraph_async_sqlite":
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            async with AsyncSqliteSaver.from_conn_string(self._file(kind)) as s:
                yield s
        elif kind == "lgnb_async_sqlite":
            from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver

            async with AsyncSqliteSaver.from_conn_string(self._file(kind)) as s:
                yield s
        elif kind == "lgnb_sqlite":  # the sync saver's async methods run in a thread
            with self.open("lgnb_sqlite", E) as s:
                yield s
        elif kind == "async_postgres":
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            assert self.pg_url, "postgres saver needs the postgres_url fixture"
            async with AsyncPostgresSaver.from_conn_string(self.pg_url) as s:
                await s.setup()
                yield s
        else:
            raise ValueError(f"{kind!r} is not an async saver kind")


def big_value_app(E: Any, saver: Any, big: str) -> Any:
    """A graph that holds one large value (`big`, over 2 KB) in three channels, in pending
    writes of a parallel step and in an interrupt payload, compiled on `saver`: what the
    savers' large-value storage and `delete_thread` are checked with."""
    from typing_extensions import TypedDict

    class S(TypedDict, total=False):
        v: Any
        w: Any
        x: Any

    def c(s: Any) -> dict[str, Any]:
        return {"v": E.interrupt(big)}

    g = E.StateGraph(S)
    g.add_node("a", lambda s: {"w": big})
    g.add_node("b", lambda s: {"x": big + "!"})
    g.add_node("c", c)
    g.add_edge(E.START, "a")
    g.add_edge(E.START, "b")
    g.add_edge("a", "c")
    return g.compile(checkpointer=saver)

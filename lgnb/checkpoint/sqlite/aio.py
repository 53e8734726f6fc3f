"""`AsyncSqliteSaver`: lgnb's SQLite saver opened from async code.

    from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string("threads.sqlite") as saver:
        graph = builder.compile(checkpointer=saver)
        await graph.ainvoke(inputs, config)

It shares every query with `SqliteSaver` (one core, `SqliteStore`); its `a*` methods
run that core in a worker thread, so no extra dependency (no `aiosqlite`) is needed.
Unlike LangGraph's `AsyncSqliteSaver`, its constructor takes a stdlib
`sqlite3.Connection` (or a path), and its sync methods also work, from any thread.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from langgraph.checkpoint.serde.base import SerializerProtocol

from lgnb.checkpoint.serde import AllowEntry
from lgnb.checkpoint.sqlite._errors import (
    CheckpointDatabaseError,
    CheckpointDatabaseOperationalError,
)
from lgnb.checkpoint.sqlite._saver import SqliteSaverBase
from lgnb.checkpoint.sqlite._schema import Synchronous

__all__ = [
    "AsyncSqliteSaver",
    "CheckpointDatabaseError",
    "CheckpointDatabaseOperationalError",
]


class AsyncSqliteSaver(SqliteSaverBase):
    __doc__ = SqliteSaverBase.__doc__

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str | os.PathLike[str],
        *,
        serde: SerializerProtocol | None = None,
        allow: Iterable[AllowEntry] = (),
        allow_unsafe_deserialization: bool = False,
        busy_timeout: float = 30.0,
        synchronous: Synchronous = "NORMAL",
    ) -> AsyncIterator[AsyncSqliteSaver]:
        """Open (creating if needed) the database at `conn_string` without blocking
        the event loop, and close it on exit."""
        allow = tuple(allow)
        saver = await asyncio.to_thread(
            cls,
            conn_string,
            serde=serde,
            allow=allow,
            allow_unsafe_deserialization=allow_unsafe_deserialization,
            busy_timeout=busy_timeout,
            synchronous=synchronous,
        )
        try:
            yield saver
        finally:
            await asyncio.to_thread(saver.close)

    async def setup(self) -> None:
        """No-op kept for LangGraph API parity: tables are created on open."""

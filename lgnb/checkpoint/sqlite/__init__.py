"""lgnb's SQLite checkpoint saver — the embedded default persistence.

    from lgnb.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string("threads.sqlite") as saver:
        graph = builder.compile(checkpointer=saver)

Unlike LangGraph's `SqliteSaver`, which re-serializes the whole state at every
checkpoint, this saver stores each channel value once per version (only the channels
a step changed are written), keeps the file in WAL mode with a busy timeout so two
processes can share it, loads values through a strict allowlist (no pickle, no
imports named by data), and implements `copy_thread`, `prune` and `delete_for_runs`.
Its async methods work too (they run in a worker thread); `AsyncSqliteSaver` in
`lgnb.checkpoint.sqlite.aio` is the same saver with an async `from_conn_string`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from langgraph.checkpoint.serde.base import SerializerProtocol

from lgnb.checkpoint.serde import AllowEntry
from lgnb.checkpoint.sqlite._errors import (
    CheckpointDatabaseError,
    CheckpointDatabaseOperationalError,
)
from lgnb.checkpoint.sqlite._langgraph_tables import CopyRefused
from lgnb.checkpoint.sqlite._saver import SqliteSaverBase
from lgnb.checkpoint.sqlite._schema import Synchronous

__all__ = ["CheckpointDatabaseError", "CheckpointDatabaseOperationalError", "CopyRefused", "SqliteSaver"]


class SqliteSaver(SqliteSaverBase):
    __doc__ = SqliteSaverBase.__doc__

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str | os.PathLike[str],
        *,
        serde: SerializerProtocol | None = None,
        allow: Iterable[AllowEntry] = (),
        allow_unsafe_deserialization: bool = False,
        busy_timeout: float = 30.0,
        synchronous: Synchronous = "NORMAL",
    ) -> Iterator[SqliteSaver]:
        """Open (creating if needed) the database at `conn_string` — a file path,
        `":memory:"` or a `file:` URI — and close it on exit."""
        saver = cls(
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
            saver.close()

    def setup(self) -> None:
        """No-op kept for LangGraph API parity: tables are created on open."""

"""Async PostgreSQL checkpointing: LangGraph's `AsyncPostgresSaver`, loading strictly.

Same savers as `lgnb.checkpoint.postgres`, for async code: LangGraph's tables and SQL,
lgnb's strict serializer by default, and the lease table (`setup()`). Requires `pip install 'lgnb[postgres]'`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple

from lgnb.checkpoint.postgres._require import require

if TYPE_CHECKING:
    import langgraph.checkpoint.postgres.aio as _pg_aio
else:  # an ImportError that names the extra to install when it is missing
    _pg_aio = require("langgraph.checkpoint.postgres.aio")

from lgnb.checkpoint.postgres._lease import AsyncLeaseSetup  # noqa: E402
from lgnb.checkpoint.postgres._stored import PgStoredValue, async_fetch, list_stored  # noqa: E402
from lgnb.checkpoint.postgres._strict import OPTIONS_DOC, AsyncStrictDefault  # noqa: E402

__all__ = ["AsyncPostgresSaver", "AsyncShallowPostgresSaver"]


class AsyncPostgresSaver(AsyncLeaseSetup, AsyncStrictDefault, _pg_aio.AsyncPostgresSaver):
    __doc__ = (
        "Checkpoints in a PostgreSQL database, from async code (LangGraph's "
        "`AsyncPostgresSaver`).\n" + OPTIONS_DOC
    )

    def list_stored(
        self,
        config: RunnableConfig | None,
        *,
        load: Callable[[PgStoredValue], Any],
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        inline_max: int = 65536,
    ) -> Iterator[CheckpointTuple]:
        """`PostgresSaver.list_stored`, from a thread other than the saver's event loop
        (as this saver's other synchronous methods)."""
        return list_stored(self, async_fetch(self), config, load=load, filter=filter, before=before,
                           limit=limit, inline_max=inline_max)


class AsyncShallowPostgresSaver(AsyncLeaseSetup, AsyncStrictDefault, _pg_aio.AsyncShallowPostgresSaver):
    __doc__ = (
        "Only the latest checkpoint of each thread, in PostgreSQL, from async code "
        "(LangGraph's deprecated `AsyncShallowPostgresSaver`).\n" + OPTIONS_DOC
    )

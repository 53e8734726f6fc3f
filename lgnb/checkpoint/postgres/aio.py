"""Async PostgreSQL checkpointing: LangGraph's `AsyncPostgresSaver`, loading strictly.

Same savers as `lgnb.checkpoint.postgres`, for async code: LangGraph's tables and SQL,
lgnb's strict serializer by default, and the lease table (`setup()`). Requires `pip install 'lgnb[postgres]'`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgnb.checkpoint.postgres._require import require

if TYPE_CHECKING:
    import langgraph.checkpoint.postgres.aio as _pg_aio
else:  # an ImportError that names the extra to install when it is missing
    _pg_aio = require("langgraph.checkpoint.postgres.aio")

from lgnb.checkpoint.postgres._joined import JoinedLists  # noqa: E402
from lgnb.checkpoint.postgres._lease import AsyncLeaseSetup  # noqa: E402
from lgnb.checkpoint.postgres._stored import ListStored, async_fetch  # noqa: E402
from lgnb.checkpoint.postgres._strict import OPTIONS_DOC, AsyncStrictDefault  # noqa: E402

__all__ = ["AsyncPostgresSaver", "AsyncShallowPostgresSaver"]


class AsyncPostgresSaver(JoinedLists, ListStored, AsyncLeaseSetup, AsyncStrictDefault, _pg_aio.AsyncPostgresSaver):
    __doc__ = (
        "Checkpoints in a PostgreSQL database, from async code (LangGraph's "
        "`AsyncPostgresSaver`).\n" + OPTIONS_DOC
    )

    _fetcher = staticmethod(async_fetch)


class AsyncShallowPostgresSaver(AsyncLeaseSetup, AsyncStrictDefault, _pg_aio.AsyncShallowPostgresSaver):
    __doc__ = (
        "Only the latest checkpoint of each thread, in PostgreSQL, from async code "
        "(LangGraph's deprecated `AsyncShallowPostgresSaver`).\n" + OPTIONS_DOC
    )

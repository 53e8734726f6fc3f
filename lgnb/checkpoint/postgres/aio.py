"""Async PostgreSQL checkpointing: `AsyncPostgresSaver` from `langgraph-checkpoint-postgres`.

Requires `pip install 'lgnb[postgres]'`.
"""

from lgnb.checkpoint.postgres._require import require

_pg_aio = require("langgraph.checkpoint.postgres.aio")
AsyncPostgresSaver = _pg_aio.AsyncPostgresSaver

__all__ = ["AsyncPostgresSaver"]

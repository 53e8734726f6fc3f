"""PostgreSQL checkpointing: `PostgresSaver` from `langgraph-checkpoint-postgres`.

The path for teams that outgrow one machine: many kernels and workers share one
database of threads. Re-exported so imports mirror LangGraph's
(`from lgnb.checkpoint.postgres import PostgresSaver`); requires
`pip install 'lgnb[postgres]'`.
"""

from lgnb.checkpoint.postgres._require import require

_pg = require("langgraph.checkpoint.postgres")
PostgresSaver = _pg.PostgresSaver
ShallowPostgresSaver = _pg.ShallowPostgresSaver

__all__ = ["PostgresSaver", "ShallowPostgresSaver"]

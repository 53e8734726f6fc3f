"""Persistence for lgnb graphs: the `langgraph-checkpoint` saver protocol and savers.

Import paths mirror LangGraph's:

* `lgnb.checkpoint.sqlite.SqliteSaver` / `lgnb.checkpoint.sqlite.aio.AsyncSqliteSaver`
  — lgnb's own embedded saver (values stored once per version, strict loading);
* `lgnb.checkpoint.memory.InMemorySaver` — `langgraph-checkpoint`'s, subclassed: same
  storage, a conversation serialized in O(new messages) per step (`_grown`);
* `lgnb.checkpoint.postgres.PostgresSaver` / `.aio.AsyncPostgresSaver` — the savers of
  `langgraph-checkpoint-postgres` (`pip install 'lgnb[postgres]'`), loading with lgnb's
  strict serializer like the SQLite saver, a conversation serialized the same way.

Every saver lgnb hands out refuses a stored value naming a type off its allowlist (a
crafted row never runs code); `allow_unsafe_deserialization=True` is the named opt-out.

Any `BaseCheckpointSaver` works with lgnb, and lgnb's savers work with LangGraph.
"""

from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

__all__ = ["BaseCheckpointSaver", "Checkpoint", "CheckpointMetadata", "CheckpointTuple"]

"""In-memory checkpointing: `InMemorySaver` (alias `MemorySaver`) from `langgraph-checkpoint`.

Re-exported so `from lgnb.checkpoint.memory import InMemorySaver` mirrors LangGraph.
Nothing persists past the process; use `lgnb.checkpoint.sqlite.SqliteSaver` for that.
"""

from langgraph.checkpoint.memory import InMemorySaver, MemorySaver, PersistentDict

__all__ = ["InMemorySaver", "MemorySaver", "PersistentDict"]

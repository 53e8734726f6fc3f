"""`langgraph.store.memory` under lgnb's name, for a program ported by swapping its imports.

The in-memory store (`InMemoryStore`). lgnb's engine takes LangGraph's own classes here (lgnb builds on the
`langgraph-checkpoint` package that holds them): these are the same objects, so a value of
either import works with either engine and pickles under LangGraph's module path.
"""

from typing import Any

import langgraph.store.memory as _langgraph
from langgraph.store.memory import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.store.memory` (its module `__all__` lists fewer)."""
    return getattr(_langgraph, name)

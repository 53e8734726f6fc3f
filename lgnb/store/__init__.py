"""`langgraph.store` under lgnb's name, for a program ported by swapping its imports.

The long-term memory store (`BaseStore`, `InMemoryStore` in `.memory`). lgnb's engine takes LangGraph's own classes here (lgnb builds on the
`langgraph-checkpoint` package that holds them): these are the same objects, so a value of
either import works with either engine and pickles under LangGraph's module path.
"""

from typing import Any

import langgraph.store as _langgraph
from langgraph.store import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.store` (its module `__all__` lists fewer)."""
    return getattr(_langgraph, name)

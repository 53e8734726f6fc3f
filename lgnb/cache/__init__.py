"""`langgraph.cache` under lgnb's name, for a program ported by swapping its imports.

The node cache (`InMemoryCache` in `.memory`), used with `CachePolicy`. lgnb's engine takes LangGraph's own classes here (lgnb builds on the
`langgraph-checkpoint` package that holds them): these are the same objects, so a value of
either import works with either engine and pickles under LangGraph's module path.
"""

from typing import Any

import langgraph.cache as _langgraph
from langgraph.cache import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.cache` (its module `__all__` lists fewer)."""
    return getattr(_langgraph, name)

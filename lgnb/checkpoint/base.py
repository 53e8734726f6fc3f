"""`langgraph.checkpoint.base` under lgnb's name, for a program ported by swapping its imports.

The saver protocol (`BaseCheckpointSaver`, `Checkpoint`, `CheckpointTuple`, ...). lgnb's engine takes LangGraph's own classes here (lgnb builds on the
`langgraph-checkpoint` package that holds them): these are the same objects, so a value of
either import works with either engine and pickles under LangGraph's module path.
"""

from typing import Any

import langgraph.checkpoint.base as _langgraph
from langgraph.checkpoint.base import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.checkpoint.base` (its module `__all__` lists fewer)."""
    return getattr(_langgraph, name)

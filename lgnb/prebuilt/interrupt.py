"""`langgraph.prebuilt.interrupt` under lgnb's name: the agent-inbox `HumanInterrupt` types
(`HumanInterrupt`, `ActionRequest`, `HumanInterruptConfig`, `HumanResponse`), whose payloads
a run view draws as an `inbox` form."""

from typing import Any

import langgraph.prebuilt.interrupt as _langgraph
from langgraph.prebuilt.interrupt import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Every other name of `langgraph.prebuilt.interrupt` (its module `__all__` lists fewer)."""
    return getattr(_langgraph, name)

"""Import helper giving a clear install hint when the postgres extra is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

INSTALL_HINT = (
    "PostgreSQL checkpointing needs the 'postgres' extra: "
    "pip install 'lgnb[postgres]' (langgraph-checkpoint-postgres and psycopg)."
)


def require(module: str) -> ModuleType:
    """Import `module` from langgraph-checkpoint-postgres, or explain how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from exc

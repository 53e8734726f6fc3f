"""The engines under test, loaded by module root ("langgraph" or "lgnb").

lgnb's module paths mirror LangGraph's, so one loader serves both: an ``Engine`` is just the
namespace the graph builders in ``graphs.py`` need.
"""

from __future__ import annotations

import importlib
import traceback
from dataclasses import dataclass
from typing import Any, Callable

ENGINE_ROOTS = ("langgraph", "lgnb")


@dataclass(frozen=True)
class Engine:
    name: str
    StateGraph: Any
    START: str
    END: str
    Send: Any
    add_messages: Callable
    get_stream_writer: Callable
    version: str


class EngineUnavailable(Exception):
    """The engine cannot be imported (yet); the message says why."""


def load(root: str) -> Engine:
    try:
        graph = importlib.import_module(f"{root}.graph")
        types = importlib.import_module(f"{root}.types")
        config = importlib.import_module(f"{root}.config")
        message = importlib.import_module(f"{root}.graph.message")
        engine = Engine(
            name=root,
            StateGraph=graph.StateGraph,
            START=graph.START,
            END=graph.END,
            Send=types.Send,
            add_messages=message.add_messages,
            get_stream_writer=config.get_stream_writer,
            version=_version(root),
        )
    except Exception as e:  # noqa: BLE001 - any import problem means "not available"
        last = traceback.extract_tb(e.__traceback__)[-1]
        where = f" at {last.filename}:{last.lineno}" if last else ""
        raise EngineUnavailable(f"{type(e).__name__}: {e}{where}") from e
    return engine


def _version(root: str) -> str:
    try:
        from importlib.metadata import version

        return version(root)
    except Exception:  # noqa: BLE001
        return "?"

"""Functions a node calls to reach its run: `get_config()`, `get_stream_writer()`, `get_store()`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
from lgnb._internal.context import TASK_CTX, current_task
from lgnb.types import StreamWriter

__all__ = ("get_config", "get_store", "get_stream_writer")


def get_config() -> RunnableConfig:
    """The RunnableConfig of the running node (metadata `langgraph_node`, `thread_id`, ...)."""
    return current_task().config


def get_stream_writer() -> StreamWriter:
    """A function that emits `custom` stream events from inside a node.

    When the caller did not ask for `custom` events the writer drops its input. Outside
    a running graph it raises, as LangGraph does.
    """
    ctx = TASK_CTX.get()  # `current_task()` inline: nodes call this on every run
    return (ctx if ctx is not None else current_task()).runtime.stream_writer


def get_store() -> Any:
    """The store the graph was compiled with (None when there is none)."""
    return current_task().runtime.store


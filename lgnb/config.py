"""Functions a node calls to reach its run: `get_config()`, `get_stream_writer()`, `get_store()`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
from lgnb._internal.context import CONFIG_KEY_SEND, TASK_CTX, current_task, nested_langgraph_config
from lgnb.types import StreamWriter

__all__ = ("get_config", "get_store", "get_stream_writer")


def get_config() -> RunnableConfig:
    """The RunnableConfig of the running node (metadata `langgraph_node`, `thread_id`, ...).

    Inside a LangChain run the node started (a tool `ToolNode` runs, a Runnable it invokes)
    it is that run's config, derived from the node's, as LangGraph's `get_config()` returns
    LangChain's innermost child config there."""
    ctx = current_task()
    nested = nested_langgraph_config(ctx)
    if nested is not None:  # in a LangGraph graph this task invoked: that node's config
        return nested  # type: ignore[return-value]
    config = ctx.config
    lc = sys.modules.get("langchain_core.runnables.config")
    inner = lc.var_child_runnable_config.get() if lc is not None else None
    if inner is not None and type(inner) is dict and isinstance(inner.get("configurable"), dict):
        # derived from this task's config: LangChain copies `configurable` with its values
        send = config["configurable"].get(CONFIG_KEY_SEND)
        if send is not None and inner["configurable"].get(CONFIG_KEY_SEND) is send:
            return inner  # type: ignore[return-value]  # a RunnableConfig LangChain built
    return config


def get_stream_writer() -> StreamWriter:
    """A function that emits `custom` stream events from inside a node.

    When the caller did not ask for `custom` events the writer drops its input. Outside
    a running graph it raises, as LangGraph does.
    """
    ctx = TASK_CTX.get()  # `current_task()` inline: nodes call this on every run
    if ctx is None:
        ctx = current_task()
    if "langgraph.pregel.main" in sys.modules and nested_langgraph_config(ctx) is not None:
        # in a LangGraph graph this task invoked: that node's writer (its namespace)
        from langgraph.config import get_stream_writer as langgraph_writer

        return langgraph_writer()
    return ctx.runtime.stream_writer


def get_store() -> Any:
    """The store the graph was compiled with (None when there is none)."""
    return current_task().runtime.store


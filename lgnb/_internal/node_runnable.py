"""Runnable views of node code, for the places LangGraph hands out a Runnable per node.

LangGraph wraps a plain-function node in its `RunnableCallable`; `get_graph()` puts that
object in the drawn node (its id is what `Graph.to_json()` reports, and tools such as
LangGraph Studio read it) and `StateGraph.nodes[name].runnable` returns it. lgnb runs
functions directly, so these small Runnables stand in where such an object is observable.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable, RunnableSerializable
from pydantic import ConfigDict

from lgnb._internal.callable import CompiledGraphBase

__all__ = ("FunctionNode", "GraphNode", "as_runnable")


class FunctionNode(RunnableSerializable[Any, Any]):
    """What `get_graph()` shows as the data of a node whose code is a plain function.

    LangGraph wraps such functions in its `RunnableCallable`, and that class's id is
    what `Graph.to_json()` reports for the node (tools such as LangGraph Studio read it);
    this stand-in reports the same id so the drawing of an lgnb graph serializes like
    LangGraph's. Invoking it calls the function with the input alone.
    """

    func: Any = None
    model_config = ConfigDict(arbitrary_types_allowed=True)

    @classmethod
    def lc_id(cls) -> list[str]:
        return ["langgraph", "_internal", "_runnable", "RunnableCallable"]

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return self.func(input)


class GraphNode(FunctionNode):
    """The data of a node that is a compiled graph: reported as LangGraph's
    `CompiledStateGraph`, as a LangGraph subgraph node is."""

    @classmethod
    def lc_id(cls) -> list[str]:
        return ["langgraph", "graph", "state", "CompiledStateGraph"]

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return self.func.invoke(input, config, **kwargs)


def as_runnable(action: Any, name: str) -> Any:
    """`action` as LangGraph's node spec exposes it: a Runnable as is, a compiled graph
    as a `GraphNode`, a function as a `FunctionNode` (its `.func` is the function)."""
    if isinstance(action, CompiledGraphBase):
        return GraphNode(func=action, name=name)
    if isinstance(action, Runnable):
        return action
    return FunctionNode(func=action, name=name)

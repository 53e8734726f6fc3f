"""The type parameters of lgnb's public generics, as LangGraph's `langgraph.typing` names
them, so annotated user code (`StateGraph[State, Context]`, a node typed with
`Runtime[ContextT]`) ports by renaming the package.

- `StateT`: the graph's state schema.
- `ContextT`: the run's context schema (`context=` of `invoke`), None by default.
- `InputT` / `OutputT`: the input and output schemas, the state's by default.
- `NodeInputT`: what one node reads (its `input_schema`, or the state).
"""

from __future__ import annotations

from typing_extensions import TypeVar

__all__ = (
    "StateT",
    "StateT_co",
    "StateT_contra",
    "InputT",
    "OutputT",
    "ContextT",
    "ContextT_contra",
    "NodeInputT",
    "NodeInputT_contra",
)

StateT = TypeVar("StateT")
StateT_co = TypeVar("StateT_co", covariant=True)
StateT_contra = TypeVar("StateT_contra", contravariant=True)
ContextT = TypeVar("ContextT", default=None)
ContextT_contra = TypeVar("ContextT_contra", contravariant=True, default=None)
InputT = TypeVar("InputT", default=StateT)
OutputT = TypeVar("OutputT", default=StateT)
NodeInputT = TypeVar("NodeInputT")
NodeInputT_contra = TypeVar("NodeInputT_contra", contravariant=True)

"""The managed-value contract, as LangGraph's `langgraph.managed.base`: a class whose static
`get(scratchpad)` computes a state key's value for a task from the run's position
(`scratchpad.step`, `scratchpad.stop`); `lgnb.managed.is_last_step` holds the two LangGraph
ships, and a user's own (`class Steps(ManagedValue[int])`) ports by renaming the package."""

from __future__ import annotations

from abc import ABC, abstractmethod
from inspect import isclass
from typing import Any, Generic, TypeGuard, TypeVar

__all__ = ("ManagedValueSpec", "ManagedValueMapping", "ManagedValue", "Scratchpad", "is_managed_value")

V = TypeVar("V")


class Scratchpad:
    """What a managed value's `get` reads: the task's super-step and the run's `stop`
    (the step the recursion limit ends at), the fields of LangGraph's scratchpad it uses."""

    __slots__ = ("step", "stop")

    def __init__(self, step: int, stop: int) -> None:
        self.step = step
        self.stop = stop


class ManagedValue(ABC, Generic[V]):
    """Base of managed values: `get(scratchpad)` computes the value for a task."""

    @staticmethod
    @abstractmethod
    def get(scratchpad: Any) -> V: ...


ManagedValueSpec = type[ManagedValue]
ManagedValueMapping = dict[str, ManagedValueSpec]


def is_managed_value(value: Any) -> TypeGuard[ManagedValueSpec]:
    return isclass(value) and issubclass(value, ManagedValue)


def _share_with_langgraph() -> None:
    """lgnb's managed values are LangGraph's too: a ported state schema using
    `lgnb.managed.RemainingSteps` may reach LangGraph's own `StateGraph` (a prebuilt
    factory such as `create_react_agent` or `create_supervisor` builds with it), which
    reads a class it does not know as a reducer and fails. The contract is the same
    (`get(scratchpad)` reading `step` and `stop`), so lgnb's base becomes a virtual
    subclass of LangGraph's once that module loads; lgnb never imports it itself."""
    from lgnb._internal.runnable_compat import register_when_loaded

    register_when_loaded(ManagedValue, module="langgraph.managed.base", base="ManagedValue")


_share_with_langgraph()

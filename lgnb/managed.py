"""Managed values: state keys computed by the runtime, not written by nodes.

`remaining_steps: RemainingSteps` gives a node the number of super-steps left before
the recursion limit, so an agent can stop gracefully instead of raising
GraphRecursionError; `is_last_step: IsLastStep` is True on the last allowed step.
"""

from __future__ import annotations

from typing import Annotated, Any

__all__ = ("IsLastStep", "ManagedValue", "RemainingSteps", "is_managed_value")


class ManagedValue:
    """Base of managed values: `get(step, stop)` computes the value for a task."""

    @staticmethod
    def get(step: int, stop: int) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class RemainingStepsManager(ManagedValue):
    @staticmethod
    def get(step: int, stop: int) -> int:
        return stop - step


class IsLastStepManager(ManagedValue):
    @staticmethod
    def get(step: int, stop: int) -> bool:
        return step == stop - 1


RemainingSteps = Annotated[int, RemainingStepsManager]
IsLastStep = Annotated[bool, IsLastStepManager]


def is_managed_value(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, ManagedValue)

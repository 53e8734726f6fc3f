"""The two managed values LangGraph ships: how many super-steps are left before the
recursion limit, and whether this is the last one."""

from __future__ import annotations

from typing import Annotated, Any

from lgnb.managed.base import ManagedValue

__all__ = ("IsLastStep", "IsLastStepManager", "RemainingSteps", "RemainingStepsManager")


class RemainingStepsManager(ManagedValue[int]):
    @staticmethod
    def get(scratchpad: Any) -> int:
        return scratchpad.stop - scratchpad.step


class IsLastStepManager(ManagedValue[bool]):
    @staticmethod
    def get(scratchpad: Any) -> bool:
        return scratchpad.step == scratchpad.stop - 1


RemainingSteps = Annotated[int, RemainingStepsManager]
IsLastStep = Annotated[bool, IsLastStepManager]

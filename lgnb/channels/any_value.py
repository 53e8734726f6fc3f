"""AnyValue: like LastValue, but many writes in one step are fine (they are assumed equal)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import Self

from lgnb.channels.base import MISSING, ValueChannel

Value = TypeVar("Value")

__all__ = ("AnyValue",)


class AnyValue(ValueChannel[Value, Value, Value], Generic[Value]):
    """Stores the last value written in the previous step; empties on a step with none."""

    __slots__ = ()
    clears_each_step = True

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyValue)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = self.__class__(self.typ, self.key)
        new.value = checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = values[-1]
        return True


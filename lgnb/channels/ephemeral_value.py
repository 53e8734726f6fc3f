"""EphemeralValue: a value visible for exactly one step after it is written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import Self

from lgnb.channels.base import MISSING, ValueChannel
from lgnb.errors import InvalidUpdateError

Value = TypeVar("Value")

__all__ = ("EphemeralValue",)


class EphemeralValue(ValueChannel[Value, Value, Value], Generic[Value]):
    """Holds the value written in the previous step, then clears itself.

    With `guard=True` (default) two writes in one step are an error; with `guard=False`
    the last one wins (used for the runtime's `branch:to:<node>` triggers).
    """

    __slots__ = ("guard",)
    clears_each_step = True

    def __init__(self, typ: Any, guard: bool = True, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EphemeralValue) and other.guard == self.guard

    def copy(self) -> Self:
        new = self.__class__(self.typ, self.guard, self.key)
        new.value = self.value
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = object.__new__(self.__class__)
        new.typ, new.key, new.guard, new.value = self.typ, self.key, self.guard, checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        if len(values) != 1 and self.guard:
            raise InvalidUpdateError(
                f"At key '{self.key}': EphemeralValue(guard=True) can receive only one value "
                "per step. Use guard=False if you want to store any one of multiple values."
            )
        self.value = values[-1]
        return True


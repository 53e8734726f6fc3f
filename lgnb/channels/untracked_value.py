"""UntrackedValue: a value that lives only in memory and is never checkpointed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import Self

from lgnb.channels.base import MISSING, ValueChannel
from lgnb.errors import InvalidUpdateError

Value = TypeVar("Value")

__all__ = ("UntrackedValue",)


class UntrackedValue(ValueChannel[Value, Value, Value], Generic[Value]):
    """Keeps the last value for the rest of the run; checkpoints store nothing for it."""

    __slots__ = ("guard",)

    def __init__(self, typ: Any, guard: bool = True, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UntrackedValue) and other.guard == self.guard

    def copy(self) -> Self:
        new = self.__class__(self.typ, self.guard, self.key)
        new.value = self.value
        return new

    def checkpoint(self) -> Any:
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        return self.__class__(self.typ, self.guard, self.key)

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            return False
        if len(values) != 1 and self.guard:
            raise InvalidUpdateError(
                f"At key '{self.key}': UntrackedValue(guard=True) can receive only one value "
                "per step. Use guard=False if you want to store any one of multiple values."
            )
        self.value = values[-1]
        return True


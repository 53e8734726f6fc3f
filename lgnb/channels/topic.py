"""Topic: a pub/sub channel collecting every write of a step (or of the whole run)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import Self

from lgnb.channels.base import MISSING, BaseChannel
from lgnb.errors import EmptyChannelError

Value = TypeVar("Value")

__all__ = ("Topic",)


class Topic(BaseChannel[Sequence[Value], Any, list], Generic[Value]):
    """Collects writes (lists are flattened); emptied each step unless `accumulate=True`."""

    __slots__ = ("values", "accumulate", "clears_each_step")

    def __init__(self, typ: Any, accumulate: bool = False, key: str = "") -> None:
        super().__init__(typ, key)
        self.accumulate = accumulate
        self.clears_each_step = not accumulate
        self.values: list[Any] = []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Topic) and other.accumulate == self.accumulate

    @property
    def ValueType(self) -> Any:  # noqa: N802
        return Sequence[self.typ]  # type: ignore[name-defined]

    @property
    def UpdateType(self) -> Any:  # noqa: N802
        return self.typ | list[self.typ]  # type: ignore[name-defined]

    def copy(self) -> Self:
        new = self.__class__(self.typ, self.accumulate, self.key)
        new.values = self.values.copy()
        return new

    def checkpoint(self) -> Any:
        return self.values

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = self.__class__(self.typ, self.accumulate, self.key)
        if checkpoint is not MISSING:
            new.values = list(checkpoint[1] if isinstance(checkpoint, tuple) else checkpoint)
        return new

    def update(self, values: Sequence[Any]) -> bool:
        updated = False
        if not self.accumulate:
            updated = bool(self.values)
            self.values = []
        for value in values:
            if isinstance(value, list):
                if value:
                    self.values.extend(value)
                    updated = True
            else:
                self.values.append(value)
                updated = True
        return updated

    def get(self) -> Sequence[Value]:
        if self.values:
            return list(self.values)
        raise EmptyChannelError()

    def is_available(self) -> bool:
        return bool(self.values)

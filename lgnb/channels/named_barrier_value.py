"""NamedBarrierValue: a join — available once every named writer has written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import Self

from lgnb.channels.base import MISSING, BaseChannel
from lgnb.errors import EmptyChannelError, InvalidUpdateError

Value = TypeVar("Value")

__all__ = ("NamedBarrierValue", "NamedBarrierValueAfterFinish")


class NamedBarrierValue(BaseChannel[None, Value, set], Generic[Value]):
    """Becomes available when all of `names` have written (in any steps); reset on consume."""

    __slots__ = ("names", "seen")

    def __init__(self, typ: Any, names: set[Value], key: str = "") -> None:
        super().__init__(typ, key)
        self.names = set(names)
        self.seen: set[Value] = set()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and other.names == self.names

    def copy(self) -> Self:
        new = self.__class__(self.typ, self.names, self.key)
        new.seen = set(self.seen)
        return new

    def checkpoint(self) -> Any:
        return self.seen

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = self.__class__(self.typ, self.names, self.key)
        if checkpoint is not MISSING:
            new.seen = set(checkpoint)
        return new

    def _record(self, values: Sequence[Value]) -> bool:
        updated = False
        for value in values:
            if value not in self.names:
                raise InvalidUpdateError(
                    f"At key '{self.key}': Value {value} not in {self.names}"
                )
            if value not in self.seen:
                self.seen.add(value)
                updated = True
        return updated

    def update(self, values: Sequence[Value]) -> bool:
        return self._record(values)

    def get(self) -> None:
        if self.seen != self.names:
            raise EmptyChannelError()
        return None

    def is_available(self) -> bool:
        return self.seen == self.names

    def consume(self) -> bool:
        if self.seen == self.names:
            self.seen = set()
            return True
        return False


class NamedBarrierValueAfterFinish(NamedBarrierValue[Value]):
    """A join for a deferred node: available once all have written and the run is finishing."""

    __slots__ = ("finished",)
    waits_for_finish = True

    def __init__(self, typ: Any, names: set[Value], key: str = "") -> None:
        super().__init__(typ, names, key)
        self.finished = False

    def copy(self) -> Self:
        new = super().copy()
        new.finished = self.finished
        return new

    def checkpoint(self) -> Any:
        return (self.seen, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = self.__class__(self.typ, self.names, self.key)
        if checkpoint is not MISSING:
            seen, new.finished = checkpoint
            new.seen = set(seen)
        return new

    def get(self) -> None:
        if not self.finished or self.seen != self.names:
            raise EmptyChannelError()
        return None

    def is_available(self) -> bool:
        return self.finished and self.seen == self.names

    def consume(self) -> bool:
        if self.finished and self.seen == self.names:
            self.finished = False
            self.seen = set()
            return True
        return False

    def finish(self) -> bool:
        if not self.finished and self.seen == self.names:
            self.finished = True
            return True
        return False

"""LastValue: a plain state key — at most one write per step, keeps the last value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import Self

from lgnb.channels.base import MISSING, BaseChannel, ValueChannel
from lgnb.errors import (
    EmptyChannelError,
    ErrorCode,
    InvalidUpdateError,
    create_error_message,
)

Value = TypeVar("Value")

__all__ = ("LastValue", "LastValueAfterFinish")


class LastValue(ValueChannel[Value, Value, Value], Generic[Value]):
    """Stores the last value written; two writes in one step are an error."""

    __slots__ = ()

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastValue)

    def copy(self) -> Self:
        return self.from_checkpoint(self.value)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        # built without __init__: a run makes one per state key, so this is hot
        new = object.__new__(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.value = checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            return False
        if len(values) != 1:
            raise InvalidUpdateError(
                create_error_message(
                    message=(
                        f"At key '{self.key}': Can receive only one value per step. "
                        "Use an Annotated key to handle multiple values."
                    ),
                    error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
                )
            )
        self.value = values[-1]
        return True



class LastValueAfterFinish(BaseChannel[Value, Value, tuple], Generic[Value]):
    """Like LastValue, but readable only once the run is about to finish (deferred nodes)."""

    __slots__ = ("value", "finished")
    waits_for_finish = True

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value: Any = MISSING
        self.finished = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastValueAfterFinish)

    def checkpoint(self) -> Any:
        if self.value is MISSING:
            return MISSING
        return (self.value, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = self.__class__(self.typ, self.key)
        if checkpoint is not MISSING:
            new.value, new.finished = checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            return False
        self.finished = False
        self.value = values[-1]
        return True

    def consume(self) -> bool:
        if self.finished:
            self.finished = False
            self.value = MISSING
            return True
        return False

    def finish(self) -> bool:
        if not self.finished and self.value is not MISSING:
            self.finished = True
            return True
        return False

    def get(self) -> Value:
        if self.value is MISSING or not self.finished:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING and self.finished

"""The channel contract: one small class per file behind `update`/`get`/`checkpoint`.

A channel holds one state key (or one piece of the runtime's plumbing). In each
super-step the loop hands it all writes of that step at once (`update`), reads it
(`get`), and saves it (`checkpoint` / `from_checkpoint`). Two class flags tell the loop
which channels need a call it would otherwise skip, which keeps a step's cost
independent of the width of the state:

- `clears_each_step`: `update([])` may change the value (ephemeral channels), so the
  loop calls it on steps where the channel received nothing;
- `waits_for_finish`: `finish()` may change the value (deferred channels).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from typing_extensions import Self

from lgnb._internal.missing import MISSING
from lgnb.errors import EmptyChannelError

__all__ = ("BaseChannel", "ValueChannel", "MISSING", "EmptyChannelError")

Value = TypeVar("Value")
Update = TypeVar("Update")
C = TypeVar("C")


class BaseChannel(Generic[Value, Update, C], ABC):
    """Base class of all channels."""

    __slots__ = ("key", "typ")

    clears_each_step: bool = False  # a class default; Topic sets it per instance
    waits_for_finish: ClassVar[bool] = False

    def __init__(self, typ: Any, key: str = "") -> None:
        self.typ = typ
        self.key = key

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph's public name
        """The type of the value the channel holds."""
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph's public name
        """The type of one write to the channel."""
        return self.typ

    def copy(self) -> Self:
        """An independent channel with the same value."""
        return self.from_checkpoint(self.checkpoint())

    def checkpoint(self) -> C | Any:
        """The serializable form of the value, or MISSING when empty."""
        try:
            return self.get()
        except EmptyChannelError:
            return MISSING

    @abstractmethod
    def from_checkpoint(self, checkpoint: C | Any) -> Self:
        """A new channel of the same kind holding `checkpoint` (MISSING: empty)."""

    @abstractmethod
    def update(self, values: Sequence[Update]) -> bool:
        """Apply all writes of one step; return whether the value changed."""

    @abstractmethod
    def get(self) -> Value:
        """The current value; raises EmptyChannelError when there is none."""

    def is_available(self) -> bool:
        """Whether `get()` would return a value."""
        try:
            self.get()
            return True
        except EmptyChannelError:
            return False

    def consume(self) -> bool:
        """Called after a node triggered by this channel ran; return whether it changed."""
        return False

    def finish(self) -> bool:
        """Called when the run is about to end; return whether it changed."""
        return False


class ValueChannel(BaseChannel[Value, Update, C]):
    """A channel holding at most one value (`value`, MISSING when empty)."""

    __slots__ = ("value",)
    value: Any

    def get(self) -> Value:
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        return self.value

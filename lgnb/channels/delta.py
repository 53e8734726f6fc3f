"""DeltaChannel: a reducer key whose checkpoints store writes, not the accumulated value.

`Annotated[list, DeltaChannel(reducer)]` folds each step's writes with one batched call,
`reducer(state, [w1, w2, ...]) -> new_state`. A plain reducer key saves its whole value at
every checkpoint, so a long chat history costs O(steps²) bytes; a delta key saves nothing
at most checkpoints (the blob is a sentinel) and the loader rebuilds the value by replaying
the ancestors' writes through the reducer, oldest first, starting from the newest full
snapshot (`_DeltaSnapshot`). A snapshot is written every `snapshot_frequency` updates of
the key, and at the latest when the supersteps since the last one reach the run-wide bound,
so a replay is always short.

Replays batch writes of many steps into one reducer call, so the reducer must be
batching-invariant: `reducer(reducer(s, xs), ys) == reducer(s, xs + ys)`.
"""

from __future__ import annotations

import collections.abc
import copy as _copy
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from langgraph.checkpoint.serde.types import _DeltaSnapshot
from typing_extensions import Self

from lgnb.channels.base import MISSING, BaseChannel
from lgnb.channels.binop import _strip_extras, as_overwrite, second_overwrite
from lgnb.errors import EmptyChannelError

__all__ = ("DeltaChannel", "DeltaSnapshot")

Value = TypeVar("Value")

#: The blob a snapshot checkpoint stores for a delta key (langgraph-checkpoint's type, so
#: checkpoints stay readable by LangGraph and every saver's serializer knows it).
DeltaSnapshot = _DeltaSnapshot

_CONCRETE = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def _same_reducer(a: Callable[..., Any], b: Callable[..., Any]) -> bool:
    """Reducers match when identical; lambdas cannot be told apart, so any lambda matches."""
    if getattr(a, "__name__", None) == "<lambda>" or getattr(b, "__name__", None) == "<lambda>":
        return True
    return a is b


class DeltaChannel(BaseChannel[Any, Any, Any], Generic[Value]):
    """Reducer key that checkpoints a sentinel and is rebuilt by replaying ancestor writes.

    Parameters:
        reducer: `(state, list_of_writes) -> new_state`; deterministic and
            batching-invariant (see the module docstring).
        typ: the value type (`list`, `dict`, ...); taken from the annotation when the
            channel sits in `Annotated[T, DeltaChannel(...)]`.
        snapshot_frequency: write a full snapshot every N updates of this key (> 0).

    `Overwrite(v)` (or `{"__overwrite__": v}`) replaces the value and discards the step's
    other writes; two in one step are an error. `Overwrite(None)` resets to `typ()`.
    """

    __slots__ = ("value", "reducer", "snapshot_frequency")

    def __init__(
        self,
        reducer: Callable[[Any, Sequence[Any]], Any],
        typ: Any = None,
        *,
        snapshot_frequency: int = 100,
        key: str = "",
    ) -> None:
        if (
            isinstance(snapshot_frequency, bool)
            or not isinstance(snapshot_frequency, int)
            or snapshot_frequency <= 0
        ):
            raise ValueError(
                f"snapshot_frequency must be a positive int, got {snapshot_frequency!r}: "
                "pass how many updates of the key may pass between full snapshots"
            )
        base = _strip_extras(list if typ is None else typ)
        super().__init__(_CONCRETE.get(base, base), key)
        self.reducer = reducer
        self.snapshot_frequency = snapshot_frequency
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeltaChannel)
            and self.snapshot_frequency == other.snapshot_frequency
            and _same_reducer(self.reducer, other.reducer)
        )

    __hash__ = BaseChannel.__hash__

    def retyped(self, typ: Any) -> Self:
        """The same channel declared for value type `typ` (from a schema annotation)."""
        return self.__class__(
            self.reducer, typ, snapshot_frequency=self.snapshot_frequency, key=self.key
        )

    def _empty(self) -> Any:
        """The type's empty value (`list()`, `dict()`, ...), the base of a fresh fold."""
        try:
            return self.typ()
        except Exception:
            return MISSING

    def _blank(self) -> Self:
        new = object.__new__(self.__class__)
        new.typ, new.key, new.reducer = self.typ, self.key, self.reducer
        new.snapshot_frequency = self.snapshot_frequency
        new.value = MISSING
        return new

    def copy(self) -> Self:
        new = self._blank()
        new.value = self.value if self.value is MISSING else _copy.copy(self.value)
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """A channel from a stored blob.

        MISSING (the sentinel) or None (a thread whose first checkpoint never gave the key
        a value, as LangGraph 1.2.24 reads it): the empty value, to which the loader replays
        writes; `_DeltaSnapshot(v)`: `v`; anything else is a plain value (a key that used to
        be a `BinaryOperatorAggregate`), taken as is.
        """
        new = self._blank()
        if checkpoint is MISSING or checkpoint is None:
            new.value = self._empty()
        elif isinstance(checkpoint, _DeltaSnapshot):
            new.value = checkpoint.value
        else:
            new.value = checkpoint
        return new

    def checkpoint(self) -> Any:
        """Always MISSING: the loop decides when to store a `_DeltaSnapshot` instead."""
        return MISSING

    def snapshot(self) -> Any:
        """The full-value blob for a snapshot checkpoint (MISSING when empty)."""
        if self.value is MISSING:
            return MISSING
        return _DeltaSnapshot(self.value)

    def _overwritten(self, value: Any) -> Any:
        return _copy.copy(value) if value is not None else self._empty()

    def replay_writes(self, writes: Sequence[tuple[str, str, Any]]) -> None:
        """Fold ancestor writes `(task_id, channel, value)`, oldest first, in one call.

        The last Overwrite among them is the new base; only the writes after it reach
        the reducer.
        """
        values = [w[-1] for w in writes]
        if not values:
            return
        base = self.value if self.value is not MISSING else self._empty()
        start = 0
        for i, value in enumerate(values):
            is_overwrite, new_value = as_overwrite(value)
            if is_overwrite:
                base, start = self._overwritten(new_value), i + 1
        rest = values[start:]
        self.value = self.reducer(base, rest) if rest else base

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        overwrite: tuple[bool, Any] | None = None
        for value in values:
            found = as_overwrite(value)
            if found[0]:
                if overwrite is not None:
                    raise second_overwrite(self.key)
                overwrite = found
        if overwrite is not None:
            self.value = self._overwritten(overwrite[1])
            return True
        base = self.value if self.value is not MISSING else self._empty()
        self.value = self.reducer(base, list(values))
        return True

    def get(self) -> Any:
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

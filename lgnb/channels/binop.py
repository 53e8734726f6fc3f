"""BinaryOperatorAggregate: a reducer key — `Annotated[list, operator.add]` folds writes."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import NotRequired, Required, Self

from lgnb.channels.base import MISSING, ValueChannel
from lgnb.errors import ErrorCode, InvalidUpdateError, create_error_message
from lgnb.types import Overwrite

Value = TypeVar("Value")

__all__ = ("BinaryOperatorAggregate",)

OVERWRITE = "__overwrite__"


def second_overwrite(key: str) -> InvalidUpdateError:
    """The error for a second `Overwrite` of one key in one super-step."""
    return InvalidUpdateError(
        create_error_message(
            message=(
                f"At key '{key}': Can receive only one Overwrite value per super-step. Let "
                "one node overwrite the key, or drop Overwrite so the reducer combines the writes."
            ),
            error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
        )
    )


def _strip_extras(t: Any) -> Any:
    """`Annotated[list[int], op]` / `Required[...]` -> the bare origin class (`list`)."""
    origin = getattr(t, "__origin__", None)
    if origin is None:
        return t
    if origin in (Required, NotRequired):
        return _strip_extras(t.__args__[0])
    return _strip_extras(origin)


_ABSTRACT_TO_CONCRETE = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def as_overwrite(value: Any) -> tuple[bool, Any]:
    """Recognise `Overwrite(v)`, `{"__overwrite__": v}` and its JSON-erased dataclass form."""
    if isinstance(value, Overwrite):
        return True, value.value
    if isinstance(value, dict):
        if len(value) == 1 and OVERWRITE in value:
            return True, value[OVERWRITE]
        if value.get("type") == OVERWRITE and "value" in value:
            return True, value["value"]
    return False, None


class BinaryOperatorAggregate(ValueChannel[Value, Value, Value], Generic[Value]):
    """Folds every write into the value with `operator(current, write)`.

    Starts from the type's empty value (`list()`, `int()`, ...) when it has one.
    `Overwrite(v)` replaces the value instead; two Overwrites in one step are an error.
    """

    __slots__ = ("operator",)

    def __init__(self, typ: Any, operator: Callable[[Value, Value], Value], key: str = "") -> None:
        super().__init__(typ, key)
        self.operator = operator
        base = _strip_extras(typ)
        base = _ABSTRACT_TO_CONCRETE.get(base, base)
        try:
            self.value: Any = base()
        except Exception:
            self.value = MISSING

    def __eq__(self, other: object) -> bool:
        # as LangGraph: the same reducer object, or a lambda on either side (lambdas cannot
        # be told apart by name); two different functions that share a name differ
        if not isinstance(other, BinaryOperatorAggregate):
            return False
        a, b = self.operator, other.operator
        return a is b or "<lambda>" in (getattr(a, "__name__", None), getattr(b, "__name__", None))

    def copy(self) -> Self:
        new = self.__class__.__new__(self.__class__)
        new.typ, new.key, new.operator, new.value = self.typ, self.key, self.operator, self.value
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        if checkpoint is MISSING:
            return self.__class__(self.typ, self.operator, self.key)
        new = object.__new__(self.__class__)
        new.typ, new.key, new.operator, new.value = self.typ, self.key, self.operator, checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        if not values:
            return False
        if self.value is MISSING:
            self.value = values[0]
            values = values[1:]
        seen_overwrite = False
        for value in values:
            is_overwrite, new_value = as_overwrite(value)
            if is_overwrite:
                if seen_overwrite:
                    raise second_overwrite(self.key)
                self.value = new_value
                seen_overwrite = True
            elif not seen_overwrite:
                self.value = self.operator(self.value, value)
        return True


"""Reading state updates out of dataclass and pydantic objects a node returns."""

from __future__ import annotations

import types
import weakref
from collections.abc import Sequence
from typing import Any

from lgnb._internal.pydantic_loaded import is_model

__all__ = ("annotated_keys", "update_as_tuples", "fields_as_tuples")

_MISSING = object()
_KEYS: weakref.WeakKeyDictionary[type, tuple[str, ...]] = weakref.WeakKeyDictionary()


def annotated_keys(cls: type) -> tuple[str, ...]:
    """The annotated attribute names of a class and its bases, cached."""
    try:
        return _KEYS[cls]
    except (KeyError, TypeError):
        pass
    keys: list[str] = []
    for base in reversed(cls.__mro__):
        ann = base.__dict__.get("__annotations__")
        if ann is None:
            ann = getattr(base, "__annotations__", None)
        if ann is None or isinstance(ann, types.GetSetDescriptorType):
            continue
        keys.extend(k for k in ann if k not in keys)
    result = tuple(keys)
    try:
        _KEYS[cls] = result
    except TypeError:
        pass
    return result


def fields_as_tuples(obj: Any, keys: Sequence[str]) -> list[tuple[str, Any]]:
    """(key, value) pairs of an object's fields, LangGraph's way.

    For pydantic models a field left at a None default is not an update unless it
    was set explicitly, so returning a partial model does not wipe other keys.
    """
    if is_model(obj):
        keep = obj.model_fields_set
        defaults = {k: v.default for k, v in type(obj).model_fields.items()}
    else:
        keep = None
        defaults = {}
    out = []
    for k in keys:
        value = getattr(obj, k, _MISSING)
        if value is _MISSING:
            continue
        if value is not None or defaults.get(k, _MISSING) is not None or (
            keep is not None and k in keep
        ):
            out.append((k, value))
    return out


def update_as_tuples(obj: Any) -> list[tuple[str, Any]] | None:
    """An object's fields as updates, or None when it is not a class with annotations."""
    if obj is None or type(obj) in (str, bytes, int, float, bool, list, tuple, dict):
        return None
    keys = annotated_keys(type(obj))
    if not keys:
        return None
    return fields_as_tuples(obj, keys)

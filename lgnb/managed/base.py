"""The managed-value contract: a class whose `get(step, stop)` computes a state key's value
for a task (`lgnb.managed.is_last_step` holds the two LangGraph ships)."""

from __future__ import annotations

from typing import Any

__all__ = ("ManagedValue", "is_managed_value")


class ManagedValue:
    """Base of managed values: `get(step, stop)` computes the value for a task."""

    @staticmethod
    def get(step: int, stop: int) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


def is_managed_value(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, ManagedValue)

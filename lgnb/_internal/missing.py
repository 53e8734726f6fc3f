"""`MISSING`: the engine's "no value" sentinel, in a leaf module.

Channels, the loop and the public `interrupt()` all tell "empty" from `None` with it;
living here, below every layer, it lets `lgnb.types` use it without importing channels.
"""

from __future__ import annotations

from typing import Any

__all__ = ("MISSING",)


class _Missing:
    """Sentinel for 'no value'; distinct from None, which is a legal value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

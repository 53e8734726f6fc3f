"""Placeholders for LangGraph's private names in the rewritten suite.

The rewrite binds each private import (`from langgraph.pregel._checkpoint import
copy_checkpoint`) to a `PrivateName`. Importing still works, so a file whose tests mostly use
the public API is collected; a test that *uses* the placeholder (calls it, reads an
attribute, compares it...) records the name in `TOUCHED` and fails with `PrivateAPIUsed`,
and the runner reports that test as private rather than as an lgnb failure.
"""

from __future__ import annotations

from typing import Any

TOUCHED: list[str] = []


class PrivateAPIUsed(Exception):
    """A test used one of LangGraph's private names: it tests LangGraph's internals."""


class PrivateName:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def _touch(self, *_: Any, **__: Any) -> Any:
        name = object.__getattribute__(self, "_name")
        TOUCHED.append(name)
        raise PrivateAPIUsed(f"uses LangGraph's private {name}")

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)  # introspection by pytest and plugins: not a use
        return self._touch()

    def __repr__(self) -> str:
        return f"<private {object.__getattribute__(self, '_name')}>"

    __call__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _touch
    __iter__ = __len__ = __contains__ = __getitem__ = __bool__ = _touch
    __enter__ = __aenter__ = __await__ = __add__ = __radd__ = __or__ = __ror__ = _touch
    __hash__ = _touch  # type: ignore[assignment]
    __str__ = _touch  # type: ignore[assignment]
    __instancecheck__ = __subclasscheck__ = _touch
    __mro_entries__ = _touch  # `class X(PrivateBase):` is a use too
    __int__ = __float__ = __index__ = __format__ = _touch

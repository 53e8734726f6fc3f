"""Checkpoint values LangGraph stored as JSON (its format before msgpack, up to 2024).

Why: a thread saved by an older LangGraph (the LangChain Academy's course database is
one) holds its checkpoints and writes as `("json", ...)` rows. LangGraph still reads them,
reviving LangChain objects (`{"lc": 1, "type": "constructor", ...}`: messages, documents)
and its own constructor records (`{"lc": 2, ...}`) from a fixed safe list. lgnb reads them
with the same rule as its msgpack values: a class is rebuilt only when it is on the
saver's allowlist (`StrictSerializer.allowed`: the defaults, the state schema's classes and
`allow=[...]`); anything else is refused by name (`UnsafeCheckpointTypeError`), before
anything is imported or called.
"""

from __future__ import annotations

import importlib
import inspect
import json
from typing import Any

__all__ = ("loads_json_value",)


def loads_json_value(payload: bytes, allowed: frozenset[tuple[str, str]]) -> Any:
    """The value a `("json", payload)` row holds, classes rebuilt only from `allowed`."""
    from lgnb.checkpoint.serde import CheckpointDecodeError

    reviver = _Reviver(allowed)
    try:
        return json.loads(payload, object_hook=reviver)
    except ValueError as exc:  # json's own errors are ValueErrors
        if reviver.error is not None:
            raise reviver.error from None
        raise CheckpointDecodeError(
            f"Checkpoint value stored as 'json' is not valid JSON ({exc}); the database "
            "row is damaged or was written by an incompatible tool."
        ) from exc


class _Reviver:
    """`json.loads`'s object hook: LangChain (`lc: 1`) and LangGraph (`lc: 2`) records."""

    def __init__(self, allowed: frozenset[tuple[str, str]]) -> None:
        self.allowed = allowed
        self.error: Exception | None = None
        self._langchain: Any = None

    def __call__(self, value: dict[str, Any]) -> Any:
        lc = value.get("lc")
        if lc not in (1, 2) or not isinstance(value.get("id"), list):
            return value
        try:
            if lc == 2 and value.get("type") == "constructor":
                return self._constructor(value)
            if lc == 1:
                return self._langchain_object(value)
        except Exception as exc:
            # (json.loads would report a failure of the hook as its own; keep ours)
            self.error = exc
            raise ValueError(str(exc)) from exc
        return value

    def _constructor(self, value: dict[str, Any]) -> Any:
        """LangGraph's `lc: 2` record: a class called with its stored arguments."""
        from lgnb.checkpoint.serde import UnsafeCheckpointTypeError

        *parts, name = (str(p) for p in value["id"])
        module = ".".join(parts)
        if (module, name) not in self.allowed:
            raise UnsafeCheckpointTypeError(module, name, writing=False)
        target = getattr(importlib.import_module(module), name)
        if inspect.isclass(target) and issubclass(target, BaseException):
            return None  # as LangGraph: an exception is not rebuilt
        args = value.get("args") or ()
        kwargs = value.get("kwargs") or {}
        return target(*args, **kwargs)

    def _langchain_object(self, value: dict[str, Any]) -> Any:
        """LangChain's `lc: 1` record (a message, a document...), by LangChain's own
        reviver; a class not on the allowlist is refused by its stored path."""
        from lgnb.checkpoint.serde import UnsafeCheckpointTypeError

        reviver = self._langchain_reviver()
        path = tuple(str(p) for p in value["id"])
        if value.get("type") == "constructor" and path not in reviver.allowed_class_paths:
            raise UnsafeCheckpointTypeError(".".join(path[:-1]), path[-1], writing=False)
        return reviver(value)

    def _langchain_reviver(self) -> Any:
        """LangChain's own reviver for `lc: 1` records, allowed exactly the LangChain
        classes on the allowlist (a class LangChain stores under a legacy path, such as
        `langchain.schema.messages.HumanMessage`, included)."""
        if self._langchain is None:
            from langchain_core.load import Serializable
            from langchain_core.load.load import Reviver

            classes = []
            for module, name in sorted(self.allowed):
                if not module.startswith("langchain"):
                    continue
                try:
                    cls = getattr(importlib.import_module(module), name)
                except (ImportError, AttributeError):
                    continue
                if inspect.isclass(cls) and issubclass(cls, Serializable):
                    classes.append(cls)
            self._langchain = Reviver(allowed_objects=classes)
        return self._langchain

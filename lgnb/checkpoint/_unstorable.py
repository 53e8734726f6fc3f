"""Saying which value of a failed save could not be stored, where it is, and how to store it.

A save fails with the serializer's `TypeError` (msgpack's "Type is not msgpack
serializable: DataFrame", or lgnb's allowlist refusal), which names neither the state key
nor the place in the value. The engine calls `name_unstorable` with the writes it was
saving; the exception keeps its class (callers may catch it) and gains a first line such
as "Cannot save state key 'frame' in a checkpoint: it holds a pandas.DataFrame at
['raw'], which cannot be stored." and a fix for the types notebooks hold most. Only the
failure path runs this: nothing is added to a save that succeeds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any

from lgnb.checkpoint.serde import UnsafeCheckpointTypeError

__all__ = ["name_unstorable"]


# where a write to one of the engine's own channels comes from, as users know it
_PLACES = {
    "__start__": "the graph input",
    "__input__": "the graph input",
    "__interrupt__": "an interrupt() payload",
    "__resume__": "a Command(resume=...) value",
    "__pregel_tasks": "a Send(...) argument",
}
_PICKLE_FIX = (
    "Or, for checkpoints only you write and read, let the saver pickle what msgpack "
    "cannot encode: serde=JsonPlusSerializer(pickle_fallback=True) (from "
    "langgraph.checkpoint.serde.jsonplus; loading a pickle runs code, so never for a "
    "database others can write)."
)


def name_unstorable(
    exc: BaseException, serde: Any, writes: Iterable[tuple[str, Any]]
) -> None:
    """Say in `exc`, a `TypeError` raised saving `writes` (`(channel, value)` pairs) with
    `serde`, which value could not be stored, where it is (state key, graph input,
    Send, interrupt, resume) and how to store it.

    The exception is changed in place (its class, which callers may catch, is kept) and
    its original text stays a line of the new one."""
    if not isinstance(exc, TypeError) or getattr(exc, "_lgnb_named", False) or serde is None:
        return
    for channel, value in writes:
        if not _refused(serde, value):
            continue
        path, leaf = _find_leaf(serde, value, "", 0)
        if channel == "__interrupt__":
            path = re.sub(r"^\[\d+\]\.value", "", path)
        elif channel == "__pregel_tasks":
            path = path.removeprefix(".arg")
        where = _PLACES.get(channel) or f"state key {channel!r}"
        what = f"it holds a {_kind(leaf)} at {path}" if path else f"it is a {_kind(leaf)}"
        lines = [f"Cannot save {where} in a checkpoint: {what}, which cannot be stored.", str(exc)]
        fix = _fix_for(leaf)
        if fix:
            lines.append(fix)
        if not isinstance(exc, UnsafeCheckpointTypeError) and not _object_array(leaf):
            if not fix:
                lines.append("Store JSON-like data, LangChain messages, or dataclasses / "
                             "pydantic models (registered with allow=[...]).")
            lines.append(_PICKLE_FIX)
        exc.args = ("\n".join(lines),)
        try:
            exc._lgnb_named = True  # type: ignore[attr-defined]
        except AttributeError:  # pragma: no cover - an exception class with slots
            pass
        return


def _refused(serde: Any, value: Any) -> bool:
    try:
        serde.dumps_typed(value)
    except TypeError:
        return True
    except Exception:  # noqa: BLE001 - another failure is not this value's type
        return False
    return False


def _parts(value: Any) -> list[tuple[str, Any]]:
    """The parts a value is stored as, with the path to each."""
    if isinstance(value, dict):
        return [(f"[{k!r}]", v) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        return [("{...}", v) for v in value]
    cls = type(value).__name__
    if cls == "Send" and hasattr(value, "arg"):
        return [(".arg", value.arg)]
    if cls == "Interrupt" and hasattr(value, "value"):
        return [(".value", value.value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(f".{f.name}", getattr(value, f.name, None)) for f in dataclasses.fields(value)]
    fields = getattr(type(value), "model_fields", None)
    if isinstance(fields, dict) and hasattr(value, "model_dump"):
        return [(f".{k}", getattr(value, k, None)) for k in fields]
    return []


def _find_leaf(serde: Any, value: Any, path: str, depth: int) -> tuple[str, Any]:
    """The innermost part of `value` (which `serde` refuses) that `serde` refuses."""
    if depth < 40:
        for step, part in _parts(value)[:10_000]:
            if _refused(serde, part):
                return _find_leaf(serde, part, path + step, depth + 1)
    return path, value


def _kind(value: Any) -> str:
    cls = type(value)
    root = cls.__module__.split(".")[0]
    name = cls.__qualname__ if root == "builtins" else f"{root}.{cls.__qualname__}"
    dtype = getattr(value, "dtype", None)
    if root == "numpy" and cls.__name__ == "ndarray" and dtype is not None:
        return f"{name} of dtype {dtype}"
    return name


def _object_array(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    return type(value).__name__ == "ndarray" and bool(getattr(dtype, "hasobject", False))


def _fix_for(value: Any) -> str:
    """How to store a value of this type, for the types notebooks hold most."""
    cls = type(value)
    root, name = cls.__module__.split(".")[0], cls.__name__
    if root == "pandas":
        if name == "DataFrame":
            return ("Store plain data instead, e.g. df.to_dict('list') or "
                    "df.to_dict('records'), and rebuild the frame with pd.DataFrame(...).")
        if name == "Series":
            return "Store plain data instead, e.g. s.to_dict() or s.tolist()."
    if root == "numpy":
        if name == "ndarray":
            if _object_array(value):
                return ("Store arr.tolist() instead, or an array of a numeric or string "
                        "dtype.")
            return ("Arrays of numeric, bool, string and complex dtypes can be stored, not "
                    f"{value.dtype}: store arr.astype(str) or arr.astype('int64') instead.")
        if hasattr(value, "item"):
            return "Store a Python value instead: x.item() (or int(x), float(x), bool(x))."
    if cls is complex:
        return "Store [z.real, z.imag] or str(z) instead."
    return ""

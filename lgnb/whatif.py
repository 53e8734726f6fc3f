"""What if a channel had another reducer? Re-apply a recorded step's writes, nodes not re-run.

A super-step's update phase hands each channel the writes its tasks made, in order; the
channel's reducer turns (value before, writes) into the value after. Given what a step
recorded (the lens's ``updates``: ``{"channel", "before", "writes", "after", ...}``), this
module applies the same writes with another reducer, using the engine's own channels
(`LastValue`, `BinaryOperatorAggregate`), so the result — or the `InvalidUpdateError` — is
exactly what the engine would have produced. Pure: nothing runs but the reducer.

>>> reapply([1], [[2], [3]], "operator.add")["value"]
[1, 2, 3]
>>> reapply("a", ["b", "c"], "last value")["error"]            # doctest: +ELLIPSIS
"At key '': Can receive only one value per step..."
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lgnb.channels.base import MISSING
from lgnb.channels.binop import BinaryOperatorAggregate
from lgnb.channels.last_value import LastValue
from lgnb.errors import InvalidUpdateError

__all__ = ["REDUCERS", "reapply", "reducer_name", "resolve_reducer", "what_if"]

#: The reducers offered by name (the lens's "what if" menu).
REDUCERS = ("last value", "operator.add", "add_messages")
_LAST = {"last value", "last_value", "lastvalue", "last", None}


def _add_messages() -> Callable[[Any, Any], Any]:
    from lgnb.graph.message import add_messages

    return add_messages


def resolve_reducer(reducer: str | Callable[[Any, Any], Any] | None) -> Callable[[Any, Any], Any] | None:
    """A reducer function for `reducer` (a name of :data:`REDUCERS` or a function);
    None means last value. Unknown names raise ValueError listing the known ones."""
    if callable(reducer):
        return reducer
    name = reducer.strip().lower() if isinstance(reducer, str) else reducer
    if name in _LAST:
        return None
    if name in ("operator.add", "add", "+"):
        return operator.add
    if name in ("add_messages", "messages"):
        return _add_messages()
    raise ValueError(f"unknown reducer {reducer!r}: use one of {', '.join(REDUCERS)}, or pass a function "
                     "(current, write) -> new value")


def reducer_name(reducer: str | Callable[[Any, Any], Any] | None) -> str:
    """How a reducer is shown: ``"last value"``, ``"operator.add"``, a function's qualified name."""
    fn = resolve_reducer(reducer)
    if fn is None:
        return "last value"
    if fn is operator.add:
        return "operator.add"
    module = getattr(fn, "__module__", "") or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    if name == "add_messages":
        return "add_messages"
    return f"{module}.{name}" if module and module not in ("builtins", "__main__") else str(name)


def reapply(before: Any, writes: Sequence[Any], reducer: str | Callable[[Any, Any], Any] | None, *,
            channel: str = "", has_before: bool = True, typ: Any = Any) -> dict[str, Any]:
    """Apply `writes` (in order) to `before` under `reducer`.

    Returns ``{"value", "error"}``: `error` is the engine's message (e.g. the last-value
    conflict, or a reducer that raised) and `value` then stays `before`. `has_before=False`
    says the channel was empty: a binary reducer then starts, as the engine's channel does,
    from the empty value of the key's type `typ` (`int()`, `list()`, ...), or from the
    first write when the type has none (`Any`).

    >>> reapply(None, [3], "operator.add", has_before=False, typ=int)["value"]
    3
    """
    fn = resolve_reducer(reducer)
    chan: Any = LastValue(typ, channel) if fn is None else BinaryOperatorAggregate(typ, fn, channel)
    chan = chan.from_checkpoint(before if has_before else MISSING)
    try:
        chan.update(list(writes))
    except InvalidUpdateError as exc:
        return {"value": before, "error": str(exc).split("\nFor troubleshooting")[0]}
    except Exception as exc:  # noqa: BLE001 - a user reducer that fails is a result to show
        return {"value": before, "error": f"{type(exc).__name__}: {exc}".split("\nFor troubleshooting")[0].strip()}
    value = chan.value
    return {"value": None if value is MISSING else value, "error": None}


def _write_values(update: Mapping[str, Any]) -> list[Any]:
    out = []
    for w in update.get("writes") or ():
        out.append(w.get("value") if isinstance(w, Mapping) and "value" in w else w)
    return out


def what_if(updates: Iterable[Mapping[str, Any]], reducer: str | Callable[[Any, Any], Any] | None, *,
            channels: Iterable[str] | None = None, types: Mapping[str, Any] | None = None
            ) -> list[dict[str, Any]]:
    """Re-apply each recorded channel update under `reducer`, beside the real result.

    `updates`: a step's recorded updates, each ``{"channel", "before", "had_value"?,
    "writes" (values, or ``{"value", ...}`` records), "after", "reducer"?}``; `channels`
    limits which ones; `types`: each state key's type (a channel empty before the step
    starts from its type's empty value, as in a run). Recorded values are JSON copies
    (a message is a dict, `lgnb.pregel.records.to_jsonable`): a result is the same as the
    real one when it is equal to it, or its JSON copy is.
    Returns one ``{"channel", "reducer", "real_reducer", "before", "writes", "real",
    "real_error", "whatif", "error", "same"}`` per channel.
    """
    wanted = None if channels is None else set(channels)
    name = reducer_name(reducer)
    out: list[dict[str, Any]] = []
    for update in updates:
        channel = str(update.get("channel", ""))
        if wanted is not None and channel not in wanted:
            continue
        writes = _write_values(update)
        has_before = "before" in update and bool(update.get("had_value", True))
        before = update.get("before")
        typ = (types or {}).get(channel, Any)
        if _was_cut(before) or any(_was_cut(w) for w in writes):
            # a record's copy keeps the first items and characters of a big value: a
            # reducer given it would give a wrong result, not the run's
            result = {"value": None, "error": (
                f"Cannot re-apply the writes to {channel!r}: its recorded value was cut for display "
                "(a list past 100 items, a string past 2000 characters: lgnb.pregel.records.to_jsonable); "
                "what-if needs the whole value. Try it on a smaller state.")}
        else:
            container = _container(typ)
            if container is not None:  # (a set or tuple key: recorded as a JSON list)
                before = container(before) if has_before and isinstance(before, list) else before
                writes = [container(w) if isinstance(w, list) else w for w in writes]
            result = reapply(before, writes, reducer, channel=channel, has_before=has_before, typ=typ)
        real, real_error = update.get("after"), update.get("error")
        same = result["error"] is None and real_error is None and (
            _equal(result["value"], real) or _equal(_jsonable(result["value"]), real)
            or _same_but_new_ids(result["value"], real, before, writes))
        out.append({"channel": channel, "reducer": name, "real_reducer": update.get("reducer"),
                    "before": before, "writes": writes, "real": real, "real_error": real_error,
                    "whatif": result["value"], "error": result["error"], "same": same})
    return out


_CUT_MARK = re.compile(r"…\[\+\d+ (chars|items)\]$")


def _was_cut(value: Any, depth: int = 0) -> bool:
    """Whether a recorded (JSON) value holds `to_jsonable`'s marks of a cut value."""
    if isinstance(value, str):
        return bool(_CUT_MARK.search(value))
    if depth > 20:
        return False
    if isinstance(value, list):
        return any(_was_cut(v, depth + 1) for v in value)
    if isinstance(value, Mapping):
        return "…" in value or any(_was_cut(v, depth + 1) for v in value.values())
    return False


def _container(typ: Any) -> Callable[[Any], Any] | None:
    """`set`, `frozenset` or `tuple` when a key's type is one (JSON records them as lists)."""
    origin = getattr(typ, "__origin__", None) or typ
    return origin if origin in (set, frozenset, tuple) else None


def _jsonable(value: Any) -> Any:
    from lgnb.pregel.records import to_jsonable

    return to_jsonable(value)


def _same_but_new_ids(whatif: Any, real: Any, before: Any, writes: Sequence[Any]) -> bool:
    """Equal but for the ids a reducer gave messages written without one (`add_messages`
    assigns a fresh uuid each time it runs: the run's and the re-application's differ)."""
    known: set[str] = set()
    _ids(before, known)
    for w in writes:
        _ids(w, known)
    return _equal(_without_new_ids(_jsonable(whatif), known), _without_new_ids(real, known))


def _ids(value: Any, out: set[str], depth: int = 0) -> None:
    if depth > 20:
        return
    if isinstance(value, Mapping):
        if isinstance(value.get("id"), str):
            out.add(value["id"])
        for v in value.values():
            _ids(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _ids(v, out, depth + 1)
    elif isinstance(getattr(value, "id", None), str):  # a message object
        out.add(value.id)


_MESSAGE_TYPES = frozenset({"human", "ai", "tool", "system", "function", "chat", "remove"})


def _without_new_ids(value: Any, known: set[str]) -> Any:
    """`value` (JSON) with the `id` of each message that is not in `known` (one a reducer
    gave it) replaced by one placeholder: a message without an id still differs."""
    if isinstance(value, list):
        return [_without_new_ids(v, known) for v in value]
    if (isinstance(value, Mapping) and value.get("type") in _MESSAGE_TYPES and "content" in value
            and isinstance(value.get("id"), str) and value["id"] not in known):
        return {**value, "id": "<new>"}
    return value


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values that cannot compare are shown as different
        return False

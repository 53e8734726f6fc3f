"""`InMemorySaver.blobs` that keep a grown list as what it appended, read back whole.

LangGraph's in-memory saver keeps every version of a channel as its whole serialized
bytes: a conversation of 10,000 messages saved at every step holds a copy of it per step,
so its memory grows with the square of the conversation (~290 MB after 200 steps).
`JoinedBlobs` keeps a list that only grew (`lgnb.checkpoint._grown`) as a `Link`: the
stored value it extends (bytes, or another link) and the serialized items it appended.
Every read — ``blobs[key]``, ``.get``, ``.items()``, ``.values()``, ``dict(blobs)``,
copying, pickling — gives LangGraph's ``("msgpack", bytes)`` of the whole list, composed
from the chain, so LangGraph's own methods read it unchanged. A chain is at most
`_grown.depth_limit(size)` links: the next version is stored whole, which bounds both the
cost of a read and what a long-gone version keeps alive.

Deleting a key never breaks a chain: a link holds the value it extends, not its key.
One read is not served: a mapping of another class compared *from its side*
(``OrderedDict(...) == saver.blobs``; a plain `dict` or LangGraph's `defaultdict` is
fine) compares the stored values; compare from this side, or with ``dict(blobs.items())``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, ItemsView, Iterator, ValuesView
from types import MappingProxyType
from typing import Any

from lgnb.checkpoint import _grown

__all__ = ["JoinedBlobs", "Link", "stored"]

_ABSENT = object()


class Link:
    """A list's serialized value kept as the value it extends (`base`: bytes or a `Link`)
    and the serialized list of the items appended (`tail`, a msgpack array)."""

    __slots__ = ("base", "depth", "size", "tail")

    def __init__(self, base: bytes | Link, tail: bytes, depth: int, size: int) -> None:
        self.base = base
        self.tail = tail
        self.depth = depth
        self.size = size  # the whole value's serialized length

    def whole(self) -> bytes:
        """The bytes of the whole list (what serializing it gives)."""
        parts: list[bytes] = []
        node: bytes | Link = self
        while type(node) is Link:
            parts.append(node.tail)
            node = node.base
        parts.append(node)  # type: ignore[arg-type]
        parts.reverse()
        return _grown.compose(parts)


def _read(value: Any) -> Any:
    return (_grown.ROOT_TYPE, value.whole()) if type(value) is Link else value


def _pairs(blobs: dict[Any, Any], keys: list[Any]) -> Iterator[tuple[Any, Any]]:
    for key in keys:
        value = dict.get(blobs, key, _ABSENT)
        if value is not _ABSENT:
            yield key, _read(value)


class _Items(ItemsView[Any, Any]):
    """`items()`: each whole value made as it is reached (not all at once), over the keys
    as they were when iteration began (a save in another thread may add some); reversed,
    and with the `mapping` a dict's view has."""

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        blobs: dict[Any, Any] = self._mapping  # type: ignore[attr-defined]
        return _pairs(blobs, list(dict.keys(blobs)))

    def __reversed__(self) -> Iterator[tuple[Any, Any]]:
        blobs: dict[Any, Any] = self._mapping  # type: ignore[attr-defined]
        return _pairs(blobs, list(reversed(dict.keys(blobs))))

    @property
    def mapping(self) -> MappingProxyType[Any, Any]:
        return MappingProxyType(self._mapping)  # type: ignore[attr-defined]


class _Values(ValuesView[Any]):
    """`values()`: as `_Items`."""

    def __iter__(self) -> Iterator[Any]:
        for _key, value in _Items(self._mapping):  # type: ignore[attr-defined]
            yield value

    def __reversed__(self) -> Iterator[Any]:
        for _key, value in reversed(_Items(self._mapping)):  # type: ignore[attr-defined]
            yield value

    @property
    def mapping(self) -> MappingProxyType[Any, Any]:
        return MappingProxyType(self._mapping)  # type: ignore[attr-defined]


class JoinedBlobs(defaultdict[Any, Any]):
    """LangGraph's in-memory blobs (a `defaultdict` with no default, as LangGraph makes
    them) whose values may be stored as `Link`s; every read gives the whole value."""

    def __getitem__(self, key: Any) -> Any:
        return _read(dict.__getitem__(self, key))

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _ABSENT)
        return default if value is _ABSENT else _read(value)

    def raw(self, key: Any) -> Any:
        """The stored value (a `Link` for a joined list), or None."""
        return dict.get(self, key)

    def __iter__(self) -> Iterator[Any]:  # overridden so `dict(blobs)` reads through `__getitem__`
        return dict.__iter__(self)

    def values(self) -> _Values:  # type: ignore[override]
        return _Values(self)

    def items(self) -> _Items:  # type: ignore[override]
        return _Items(self)

    def pop(self, key: Any, *default: Any) -> Any:
        return _read(dict.pop(self, key, *default))

    def popitem(self) -> tuple[Any, Any]:
        key, value = dict.popitem(self)
        return key, _read(value)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return _read(dict.setdefault(self, key, default))

    def copy(self) -> JoinedBlobs:
        return JoinedBlobs(None, dict.items(self))  # links shared: they never change

    __copy__ = copy

    def __eq__(self, other: object) -> bool:
        if isinstance(other, dict):
            return len(self) == len(other) and all(
                key in other and other[key] == value for key, value in self.items())
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"JoinedBlobs({dict(self.items())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # copies and pickles keep the links (their shared bases once each), not whole values
        return JoinedBlobs, (None, list(dict.items(self)))


def stored(memo: _grown.GrownLists[bytes | Link], key: _grown.Key, value: Any, serde: Any) -> Any:
    """What `JoinedBlobs` stores for a channel's new `value`: a `Link` to the value
    remembered for `key` when `value` only grew from it, unchanged (`_grown`), else
    ``serde.dumps_typed(value)``."""
    if value.__class__ is not list or not _grown.joinable(serde):
        return serde.dumps_typed(value)
    items = list(value)  # one copy, taken first: what is serialized is what is remembered
    plan = memo.decide(key, items)
    if isinstance(plan, _grown.Join):
        ttype, tdata = serde.dumps_typed(plan.tail)
        if ttype == _grown.ROOT_TYPE and _grown.lists_of(tdata, len(plan.tail)):
            saved = plan.saved
            base: bytes | Link = saved.info  # type: ignore[assignment]
            size = _grown.grown_size(saved.size, len(saved.items), tdata)
            depth = (base.depth if type(base) is Link else 0) + 1
            kept: bytes | Link
            if not plan.tail:  # the same list again: its stored value serves
                kept = base
            else:
                link = Link(base, tdata, depth, size)
                kept = link if depth <= _grown.depth_limit(size) else link.whole()
            snap = _grown.checked(plan, (ttype, tdata), serde)
            memo.remember(key, items, snap, kept if snap is not None else None, size=size)
            return kept if type(kept) is Link else (_grown.ROOT_TYPE, kept)
        plan = _grown.Whole(None)
    typed = serde.dumps_typed(items)
    memo.settle(key, items, typed, plan, typed[1], serde)
    return typed


def remember_read(memo: _grown.GrownLists[bytes | Link], key: _grown.Key, items: list[Any], raw: Any,
                  serde: Any, data: Callable[[], bytes | None]) -> None:
    """Remember a list read back (`items`, a copy, decoded by `serde`) with what
    `JoinedBlobs` stores for it (`raw`): the next version links to it without copying its
    bytes. `data` gives those bytes, for a list whose items must be serialized again to
    be known to give them (`_grown.read_snapshot`)."""
    if type(raw) is Link:
        if raw.size >= _grown.MIN_BYTES and (snap := _grown.read_snapshot(items, serde, data)) is not None:
            memo.remember(key, items, snap, raw, size=raw.size)
        else:
            memo.drop(key)
        return
    _grown.remember_read(memo, key, items, raw, raw[1] if isinstance(raw, tuple) else raw, serde)

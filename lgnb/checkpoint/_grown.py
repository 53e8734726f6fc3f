"""Lists that only grew: serialized by joining bytes instead of serializing every item again.

A conversation is a list of messages that grows by one or two at each step, and every
saver stores the new version of a changed channel. Serialized whole, a step at 10,000
messages costs ~30 ms (langchain-core's `model_dump` per message) on any saver, and most
of it re-serializes items that were serialized a step before.

msgpack writes a list as a header (the item count) and then each item on its own, so the
bytes of ``old + tail`` are a new header, the items of ``old``'s bytes and those of
``tail``'s (`compose`). A saver that remembers the list it serialized last for a channel
(`GrownLists`, keyed by thread, namespace and channel) can therefore serialize only what
was appended when the new value's first items are *the same objects* as the list it
remembers. Two ways use it:

* the SQLite saver stores only the appended items, as a link of a chain
  (`lgnb.checkpoint.sqlite._appends`);
* the in-memory and PostgreSQL savers store the whole value's bytes, joined (`dumps`):
  exactly the bytes serializing the list gives, in a fraction of the time.

The conditions, shared by both:

* only serializers known to write a list as a plain msgpack array of its items, each on
  its own (`joinable`: lgnb's `StrictSerializer` and LangGraph's `JsonPlusSerializer`,
  not subclasses, which may wrap what they store), and only values they wrote as a
  ``msgpack`` array of the list's own item count (`lists_of`);
* the framework changes one thing in place: `add_messages` gives a message without an id
  its id at the next merge, after the list was saved (a list set with `Overwrite` skipped
  the reducer). So the positions of messages serialized without an id are remembered
  (`idless`), and a list in which one of them has one now is serialized whole;
* a node may change a message in place and return it: `add_messages` then puts the same
  object back in its place, and the merges note it (`lgnb._internal.returned`); a list
  holding a message noted since it was serialized is serialized whole.

What it does not see: an item changed in place and *not* returned through
`add_messages` (a node that mutates ``state["messages"][0].content`` and returns nothing
for it, or sets the list with `Overwrite`, or a plain list channel) is the same object,
so until the list is next serialized whole the saved value keeps the item as it was
saved. Return the changed message instead.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Generic, TypeVar

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from lgnb._internal import returned
from lgnb.checkpoint.serde import StrictSerializer

ROOT_TYPE = "msgpack"
"""The only serialization whose lists are joined."""

MIN_BYTES = 2048
"""A list smaller than this (serialized) is not remembered: serializing it costs little."""

MAX_DEPTH = 32
"""Links of a chain (appends in a row) before a value is stored whole again, for values up to
`MAX_DEPTH * BYTES_PER_LINK` bytes; a larger value allows one append per `BYTES_PER_LINK`
bytes, up to `MAX_CHAIN` (`depth_limit`)."""

BYTES_PER_LINK = 4096
"""How much of a value one more link of its chain may stand for: a link costs ~14 µs
when read (its lookup, its tail's bytes, composing), while decoding 4 KB of messages
costs ~200 µs. At 10,000 messages (2.4 MB) a chain of ~480 links reads in 7 ms, the
messages decode in ~80 ms."""

MAX_CHAIN = 1024
"""Appends in a row, however large the value."""


def depth_limit(size: int) -> int:
    """The longest chain of appends a value of `size` bytes (serialized) may end."""
    return min(MAX_CHAIN, max(MAX_DEPTH, size // BYTES_PER_LINK))


KEYS = 128
"""(thread, namespace, channel) keys whose last list a memo remembers."""

MEMO_BYTES = 16 << 20
"""How much serialized data a memo stands for at most (its lists' sizes). The remembered
items (Python objects, ~5× their serialized size for messages) and, for the in-memory
and PostgreSQL savers, the bytes themselves are kept alive by it: a 10,000-message
conversation is 2.4 MB, so six of those fit."""

_JOINABLE = (StrictSerializer, JsonPlusSerializer)
_NO_ID = object()
_PLAIN = frozenset((int, float, str, bytes, bool, type(None), dict, list, tuple))
"""Types whose instances have no ``id`` attribute to be set later."""

Key = tuple[str, str, str]
"""(thread id, checkpoint namespace, channel)."""

T = TypeVar("T")


def joinable(serde: Any) -> bool:
    """Whether `serde` serializes a list as a msgpack array of its items, each serialized on
    its own (exactly these classes: a subclass may wrap what it stores)."""
    return type(serde) in _JOINABLE


def idless(items: Sequence[Any], start: int = 0) -> list[int] | None:
    """Positions (from `start`) of the items that are messages (anything with an ``id``
    attribute) whose id is None: `add_messages` may set it in place later. None when an
    item's ``id`` cannot be read (a `__getattr__` raising other than AttributeError, as
    a dict with attribute access does): such a list is not joined."""
    if _PLAIN.issuperset(map(type, items)):  # no messages at all (C speed)
        return []
    try:
        ids = map(getattr, items, repeat("id"), repeat(_NO_ID))
        if not any(map(operator.is_, ids, repeat(None))):  # every message named (C speed)
            return []
        return [start + i for i, item in enumerate(items) if getattr(item, "id", _NO_ID) is None]
    except Exception:  # noqa: BLE001 - any failure to read an id: do not join
        return None


def header(count: int) -> bytes:
    """The msgpack header of an array of `count` items."""
    if count <= 15:
        return bytes((0x90 + count,))
    if count <= 0xFFFF:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


def is_array(data: bytes | None) -> bool:
    """Whether `data` starts a msgpack array (what `compose` can join)."""
    if not data:
        return False
    first = data[0]
    return 0x90 <= first <= 0x9F or first in (0xDC, 0xDD)


def count_of(data: bytes) -> tuple[int, int]:
    """`(items, header length)` of a msgpack array's bytes."""
    first = data[0]
    if 0x90 <= first <= 0x9F:
        return first - 0x90, 1
    if first == 0xDC:
        return int.from_bytes(data[1:3], "big"), 3
    if first == 0xDD:
        return int.from_bytes(data[1:5], "big"), 5
    raise ValueError(f"not a msgpack array (first byte 0x{first:02x})")


def lists_of(data: bytes | None, count: int) -> bool:
    """Whether `data` is a msgpack array of `count` items (what `compose` can join)."""
    return is_array(data) and count_of(data)[0] == count  # type: ignore[arg-type]


def compose(parts: Sequence[bytes]) -> bytes:
    """The bytes of the list whose items are those of each serialized list in `parts`."""
    if len(parts) == 1:
        return parts[0]
    total = 0
    pieces: list[bytes | memoryview] = [b""]  # the header, once the count is known
    for part in parts:
        count, skip = count_of(part)
        total += count
        pieces.append(memoryview(part)[skip:])
    pieces[0] = header(total)
    return b"".join(pieces)  # one copy of the bytes


def grown_size(base_size: int, base_items: int, tail: bytes) -> int:
    """The serialized size of a list of `base_items` items (`base_size` bytes) with the
    items of the serialized list `tail` appended."""
    tail_items, tail_header = count_of(tail)
    return (base_size - len(header(base_items)) + len(tail) - tail_header
            + len(header(base_items + tail_items)))


@dataclass(slots=True)
class Remembered(Generic[T]):
    """A list as a saver serialized it: a copy of its items (kept as they were), the
    positions of its messages that had no id, and what the saver keeps beside (`info`)."""

    items: list[Any]
    idless: list[int]
    info: T
    size: int
    noted: int
    """`returned.last()` when the items were taken, before serializing them."""


class GrownLists(Generic[T]):
    """The list a saver serialized last per (thread, namespace, channel), to tell whether a
    new value only grew from it (`grown`). Saves of several threads may run at once
    (background saves, async savers), so every access takes a lock; at most `keys` lists
    and `max_bytes` of their serialized sizes are remembered, the oldest dropped first."""

    def __init__(self, *, keys: int = KEYS, max_bytes: int = MEMO_BYTES) -> None:
        self._saved: dict[Key, Remembered[T]] = {}
        self._lock = threading.Lock()
        self._keys = keys
        self._max_bytes = max_bytes
        self._bytes = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> GrownLists[T]:
        """A copied saver starts with an empty memo (a lock cannot be copied, and a memo
        only saves time)."""
        return type(self)(keys=self._keys, max_bytes=self._max_bytes)

    def __reduce__(self) -> tuple[Any, ...]:
        return _empty_memo, (type(self), self._keys, self._max_bytes)

    def usable(self, saved: Remembered[T]) -> bool:
        """Whether a new value may extend `saved` (a subclass bounds its chains)."""
        return saved.size >= MIN_BYTES

    def grown(self, key: Key, items: list[Any]) -> tuple[Remembered[T], list[Any]] | None:
        """`(remembered, appended items)` when `items` extends the list remembered for `key`."""
        saved = self._saved.get(key)  # one dict read: atomic, entries are replaced, not changed
        if saved is None or not self.usable(saved):
            return None
        known = saved.items
        n = len(known)
        if len(items) < n or not all(map(operator.is_, items, known)):
            return None
        for i in saved.idless:  # given an id in place since: the saved bytes lack it
            if getattr(known[i], "id", None) is not None:
                return None
        if returned.last() > saved.noted:  # messages put back in place since, maybe edited
            again = returned.since(saved.noted)
            # ids stand for identity here: both sides are alive (held by the notes, the memo)
            if again is None or not {id(m) for m in again}.isdisjoint(map(id, known)):
                return None
        return saved, items[n:]

    def remember(self, key: Key, items: list[Any], idless: list[int], info: T, *, size: int,
                 noted: int) -> None:
        """Remember `items` (a copy of the list, kept as it is) as serialized last for `key`;
        `noted`: `returned.last()` taken before serializing them."""
        with self._lock:
            old = self._saved.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            self._saved[key] = Remembered(items, idless, info, size, noted)
            self._bytes += size
            while len(self._saved) > self._keys or (self._bytes > self._max_bytes and len(self._saved) > 1):
                self._bytes -= self._saved.pop(next(iter(self._saved))).size

    def drop(self, key: Key) -> None:
        if key not in self._saved:  # the usual case for a small list: no lock
            return
        with self._lock:
            old = self._saved.pop(key, None)
            if old is not None:
                self._bytes -= old.size

    def forget(self, thread_id: str | None = None) -> None:
        """Forget every list, or those of one thread (deleted: nothing keeps it alive)."""
        with self._lock:
            if thread_id is None:
                self._saved.clear()
                self._bytes = 0
                return
            for key in [k for k in self._saved if k[0] == thread_id]:
                self._bytes -= self._saved.pop(key).size


def _empty_memo(cls: type[GrownLists[Any]], keys: int, max_bytes: int) -> GrownLists[Any]:
    return cls(keys=keys, max_bytes=max_bytes)


def new_memo() -> GrownLists[bytes]:
    """A memo for `dumps`: the bytes of each remembered list."""
    return GrownLists()


def reads_exactly(cls: type, own: dict[str, Any]) -> bool:
    """Whether `cls` reads values exactly as stored: none of the methods in `own` (name ->
    the function the saver's read memo relies on) is overridden by a subclass, which
    may change values as it reads them (redact, migrate). Only then may a list read back
    be remembered with the bytes it was read from."""
    return all(getattr(cls, name, None) is fn for name, fn in own.items())


def dumps(memo: GrownLists[bytes], key: Key, value: Any, serde: Any) -> tuple[str, bytes]:
    """`serde.dumps_typed(value)` — for a list that extends the one remembered for `key`,
    the remembered bytes joined with those of the appended items (the same bytes).

    The messages without an id are found *before* serializing: another thread (the
    messages stream, at a node's end) may give one its id meanwhile, and a position found
    after would miss that the saved bytes lack it."""
    if value.__class__ is not list or not joinable(serde):
        return serde.dumps_typed(value)
    noted = returned.last()
    items = list(value)  # one copy, taken first: what is serialized is what is remembered
    grown = memo.grown(key, items)
    if grown is not None:
        saved, tail = grown
        tail_idless = idless(tail, len(saved.items))
        ttype, tdata = serde.dumps_typed(tail)
        if tail_idless is not None and ttype == ROOT_TYPE and lists_of(tdata, len(tail)):
            data = compose((saved.info, tdata)) if tail else saved.info
            memo.remember(key, items, saved.idless + tail_idless, data, size=len(data), noted=noted)
            return ROOT_TYPE, data
    without_ids = idless(items)
    typed = serde.dumps_typed(items)
    remember(memo, key, items, typed, without_ids, noted=noted)
    return typed


def remember(memo: GrownLists[bytes], key: Key, items: list[Any], typed: tuple[str, Any],
             without_ids: list[int] | None | bool = True, *, noted: int | None = None) -> None:
    """Remember `items` (a list the memo may keep: pass a copy) as serialized to `typed`
    for `key` — a list just serialized whole, or one a run starts from, read back — if
    later versions may be joined to it. `without_ids`: `idless(items)` as found before
    serializing (True: find it now); `noted`: `returned.last()` then (None: now)."""
    kind, data = typed
    if without_ids is True:
        without_ids = idless(items)
    if (without_ids is not None and without_ids is not False and kind == ROOT_TYPE
            and isinstance(data, bytes) and len(data) >= MIN_BYTES and lists_of(data, len(items))):
        memo.remember(key, items, without_ids, data, size=len(data),
                      noted=returned.last() if noted is None else noted)
    else:
        memo.drop(key)

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
* items changed in place are caught: before a list is serialized, a snapshot of its items
  is taken (`Snapshot`: each message's ``__dict__``, each dict or dataclass item itself,
  packed by ormsgpack in C; an immutable scalar needs none), and a list whose remembered
  items no longer pack to those bytes (a message edited in place, returned or not, an id
  `add_messages` gave a message in place, a field or an extra attribute set, an entry of
  a dict item changed) is serialized whole, as LangGraph serializes it. Checking costs
  ~0.3 µs a message, a tenth of serializing it. A list holding an item ormsgpack cannot
  pack by itself (an object of another class, a model with a field holding one) is
  always serialized whole: its changes could not be seen.

A list is snapshotted only once it is worth it: the first time a list of at least
`MIN_BYTES` is serialized (whole) only its size is remembered; its next version is
serialized whole after a snapshot, and the versions after that are joined. A list found
changed in place is serialized whole, and after changes found in a row the next snapshot
waits longer (`_missed`), so a program that edits its conversation in place at every
step pays about what LangGraph pays, not more.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import operator
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Generic, TypeVar, cast

import ormsgpack
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

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
items (Python objects, ~5× their serialized size for messages), their snapshots (about
their serialized size) and, for the in-memory and PostgreSQL savers, the bytes
themselves are kept alive by it: a 10,000-message conversation is 2.4 MB, so six of
those fit."""

_JOINABLE = (StrictSerializer, JsonPlusSerializer)
_IMMUTABLE = frozenset((int, float, str, bytes, bool, type(None)))
"""Item types that cannot change in place: the same object is the same value."""
_DICT = operator.attrgetter("__dict__")
_EXTRA = operator.attrgetter("__pydantic_extra__")
_PRIVATE = operator.attrgetter("__pydantic_private__")

Key = tuple[str, str, str]
"""(thread id, checkpoint namespace, channel)."""

T = TypeVar("T")


def joinable(serde: Any) -> bool:
    """Whether `serde` serializes a list as a msgpack array of its items, each serialized on
    its own (exactly these classes: a subclass may wrap what it stores)."""
    return type(serde) in _JOINABLE


@dataclass(slots=True)
class Snapshot:
    """What the items of a list held when it was serialized: the items that could change
    in place (`checked`: pydantic models, containers, dataclasses; the rest are immutable
    scalars), their classes, and `fields`: one msgpack array of each one's data (a model's
    ``__dict__``, anything else itself), packed by ormsgpack in C. `holds` packs them again
    and compares the bytes: any change in place, however deep, changes them."""

    checked: list[Any]
    classes: list[type]
    fields: bytes
    models_only: bool

    def __add__(self, other: Snapshot) -> Snapshot:
        return Snapshot(self.checked + other.checked, self.classes + other.classes,
                        compose((self.fields, other.fields)), self.models_only and other.models_only)

    def holds(self) -> bool:
        """Whether no item changed in place since (its class, its data, no extra field set
        on a model): ~0.3 µs a message, a tenth of serializing it."""
        checked = self.checked
        if list(map(type, checked)) != self.classes:
            return False
        try:
            return _fields(checked, self.models_only) == self.fields
        except Exception:  # noqa: BLE001 - a value that no longer packs: changed
            return False


_OPTIONS = (ormsgpack.OPT_NON_STR_KEYS | ormsgpack.OPT_PASSTHROUGH_DATACLASS
            | ormsgpack.OPT_PASSTHROUGH_DATETIME | ormsgpack.OPT_PASSTHROUGH_ENUM
            | ormsgpack.OPT_PASSTHROUGH_UUID | ormsgpack.OPT_REPLACE_SURROGATES)
"""LangGraph's serializer's options: what it packs itself, the snapshot packs itself; what
it hands to its own code (dataclasses, dates and times, enums, UUIDs) goes to `_tagged`."""


def _tagged(obj: Any) -> Any:
    """What a snapshot packs for an object ormsgpack hands back: its class and its data, so
    a value swapped for an equal one of another type (an enum member for its value, a
    datetime for its ISO string) changes the bytes, as it changes LangGraph's. Raises for
    any other object: a list holding one is not joined."""
    cls = obj.__class__
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        # every field, those named `_...` too (ormsgpack's own packing leaves those out)
        return (cls.__module__, cls.__qualname__, [getattr(obj, f.name) for f in dataclasses.fields(obj)])
    if isinstance(obj, (datetime.date, datetime.time)):  # (a datetime is a date)
        return (cls.__module__, cls.__qualname__, obj.isoformat(), getattr(obj, "fold", 0),
                repr(getattr(obj, "tzinfo", None)))
    if isinstance(obj, enum.Enum):
        return (cls.__module__, cls.__qualname__, obj.value)
    if isinstance(obj, uuid.UUID):
        return (cls.__module__, cls.__qualname__, obj.hex)
    raise TypeError(f"{cls.__qualname__} is not plain data")


def _pack(views: list[Any], default: Callable[[Any], Any] = _tagged) -> bytes:
    return ormsgpack.packb(views, default=default, option=_OPTIONS)


_NOTHING_CHECKED = ormsgpack.packb([])


def _fields(checked: list[Any], models_only: bool, default: Callable[[Any], Any] = _tagged) -> bytes | None:
    """The bytes `Snapshot.fields` holds for `checked`; None if a model has extra fields or
    private attributes (kept outside its ``__dict__``, which a serializer may read). Raises if a value is not plain data ormsgpack packs
    itself (an object of another class: its changes could not be seen)."""
    if models_only:  # the usual list, messages: every step in C
        if any(map(_EXTRA, checked)) or any(map(_PRIVATE, checked)):
            return None
        return _pack(list(map(_DICT, checked)), default)
    views = []
    for item in checked:
        if isinstance(item, BaseModel):
            if item.__pydantic_extra__ or item.__pydantic_private__:
                return None
            views.append(item.__dict__)
        else:
            views.append(item)
    return _pack(views, default)


def snapshot(items: Sequence[Any], *, default: Callable[[Any], Any] = _tagged) -> Snapshot | None:
    """A `Snapshot` of `items`, or None if one of them could change in place unseen (an
    object of a class ormsgpack does not pack by itself, a model with an extra field or
    a field holding such an object). Taken *before* the items are serialized: whatever
    changes after is then seen by the next `holds`."""
    if _IMMUTABLE.issuperset(map(type, items)):  # nothing can change in place (C speed)
        return Snapshot([], [], _NOTHING_CHECKED, True)
    checked = [item for item in items if item.__class__ not in _IMMUTABLE]
    models_only = all(map(isinstance, checked, repeat(BaseModel)))
    try:
        fields = _fields(checked, models_only, default)
    except Exception:  # noqa: BLE001 - not plain data: not joined
        return None
    if fields is None:
        return None
    return Snapshot(checked, list(map(type, checked)), fields, models_only)


def _not_rebuilt(obj: Any) -> Any:
    """`_tagged`, refusing dataclasses: decoding one calls its ``__init__`` (and
    ``__post_init__``), which may change the data it is given."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        raise TypeError(f"{obj.__class__.__qualname__} is rebuilt when read")
    return _tagged(obj)


_ROUND_TRIPS: dict[type, bool] = {dict: True, list: True, tuple: True}


def _round_trips(cls: type) -> bool:
    """Whether an item of `cls`, decoded, always serializes again to the bytes it was
    decoded from: plain containers, and LangChain's own message classes (their
    validators only fill in what is missing; every kind was checked). A model of another
    class may have a validator that changes what it loads (escapes, stamps, counts)."""
    known = _ROUND_TRIPS.get(cls)
    if known is None:
        from langchain_core.messages import BaseMessage

        known = _ROUND_TRIPS[cls] = (issubclass(cls, BaseMessage)
                                     and cls.__module__.startswith("langchain_core.messages."))
    return known


def read_snapshot(items: list[Any], serde: Any, stored: bytes | Callable[[], bytes | None] | None
                  ) -> Snapshot | None:
    """The `Snapshot` of `items`, a list just decoded by `serde` from `stored` (its bytes,
    or a function giving them), if serializing the items again gives exactly those bytes,
    else None (the list is then serialized whole at its next version, as LangGraph does).

    LangGraph serializes what it decoded, so a model whose validator changes data each
    time it is loaded stores the changed value at every turn; joining the next version to
    the stored bytes would keep the old data instead. Lists of messages, plain containers
    and stdlib values are known to round-trip (one snapshot, no serialization); any other
    item makes the list serialized again and compared, once per read."""
    if all(_round_trips(cls) for cls in {item.__class__ for item in items} - _IMMUTABLE):
        snap = snapshot(items, default=_not_rebuilt)
        if snap is not None:
            return snap
    snap = snapshot(items)
    if snap is None:
        return None
    data = stored() if callable(stored) else stored
    if data is None:
        return None
    try:
        again = serde.dumps_typed(items)
    except Exception:  # noqa: BLE001 - what cannot be serialized again is not joined to
        return None
    return snap if again[0] == ROOT_TYPE and again[1] == data else None


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
    """A list as a saver serialized it: a copy of its items (kept as they were), their
    `Snapshot` and what the saver keeps beside (`info`). Without a snapshot (`snap`
    None, `items` empty) it only says that the key's last list was large: the next one is
    snapshotted (after `wait` more versions, when changes in place were found in a row:
    `misses`)."""

    items: list[Any]
    snap: Snapshot | None
    info: T | None
    size: int
    misses: int = 0
    wait: int = 0


@dataclass(slots=True)
class Join(Generic[T]):
    """`GrownLists.decide`: serialize only `tail`, appended to `saved`; `snap` is the whole
    new list's snapshot, `tail_snap` the tail's."""

    saved: Remembered[T]
    tail: list[Any]
    snap: Snapshot
    tail_snap: Snapshot


@dataclass(slots=True)
class Whole:
    """`GrownLists.decide`: serialize the whole list; `snap` (taken before serializing) is
    remembered with it, if it turns out large enough to join to next time."""

    snap: Snapshot | None
    misses: int = 0
    wait: int = 0


def _missed(misses: int) -> Whole:
    """A list that could not be joined (changed in place, not grown from the one
    remembered, or holding an item that cannot be snapshotted), after `misses` such in a
    row: serialized whole, and the next snapshot waits for 0, 1, 3, 7... more versions
    (at most 63). A snapshot costs about half a serialization, wasted when the list is
    not joinable again by the time it could be joined, so a program that changes its
    conversation in place at every step pays about what LangGraph pays, not more; one
    that does it once is joined again two versions later."""
    misses += 1
    return Whole(None, misses, min((1 << (misses - 1)) - 1, 63))


def checked(plan: Join[Any] | Whole, typed: tuple[str, Any], serde: Any) -> Snapshot | None:
    """The snapshot to remember once `plan`'s items were serialized to `typed` (a join's
    tail, or the whole list): None unless the bytes decode to items whose data is what the
    snapshot took before serializing. Another thread (a node beside a background save)
    may change an item while it is serialized, and change it back before any later check:
    only the bytes themselves tell, so they are decoded (~7 µs a message: a join's new
    items, or a list serialized whole after a snapshot, which is rare). Bytes that do not
    decode to the same data (a validator that changes what it loads) are not joined to."""
    snap = plan.tail_snap if isinstance(plan, Join) else plan.snap
    if snap is None:
        return None
    try:
        decoded = serde.loads_typed(typed)
    except Exception:  # noqa: BLE001 - what cannot be read back is not joined to
        return None
    again = snapshot(decoded) if decoded.__class__ is list else None
    if again is None or again.classes != snap.classes or again.fields != snap.fields:
        return None
    return plan.snap


def _afresh(items: list[Any], misses: int) -> Whole:
    """Serialize whole after a snapshot, to join the next version to (or `_missed`)."""
    snap = snapshot(items)
    return Whole(snap, misses) if snap is not None else _missed(misses)


class GrownLists(Generic[T]):
    """The list a saver serialized last per (thread, namespace, channel), to tell whether a
    new value only grew from it, unchanged (`decide`). Saves of several threads may run
    at once (background saves, async savers), so every change takes a lock (a read is one
    dict lookup: entries are replaced, not changed); at most `keys` lists and `max_bytes`
    of their serialized sizes are remembered, the oldest dropped first."""

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
        """Whether a new value may be joined to `saved` (a subclass bounds its chains)."""
        return True

    def decide(self, key: Key, items: list[Any]) -> Join[T] | Whole:
        """How to serialize `items` (a copy of the channel's new value) for `key`."""
        saved = self._saved.get(key)
        if saved is None:
            return Whole(None)  # remembered only by size, if large (`settle`)
        snap = saved.snap
        if snap is None:  # a large list: snapshot this one, unless misses make it wait
            if saved.wait > 0:
                return Whole(None, saved.misses, saved.wait - 1)
            return _afresh(items, saved.misses)
        known = saved.items
        n = len(known)
        if len(items) < n or not all(map(operator.is_, items, known)):
            return _missed(saved.misses)  # not grown (a removal, a fork)
        if not snap.holds():  # changed in place since it was serialized
            return _missed(saved.misses)
        tail = items[n:]
        tail_snap = snapshot(tail)
        if tail_snap is None:
            return _missed(saved.misses)
        if not self.usable(saved):  # (a chain at its longest) whole, already snapshotted
            return Whole(snap + tail_snap)
        return Join(saved, tail, snap + tail_snap, tail_snap)

    def remember(self, key: Key, items: list[Any], snap: Snapshot | None, info: T | None, *,
                 size: int, misses: int = 0, wait: int = 0) -> None:
        """Remember `items` (a copy of the list, kept as it is) with its snapshot as
        serialized last for `key` (without a snapshot: only that it was large)."""
        entry = Remembered(items if snap is not None else [], snap, info, size, misses, wait)
        with self._lock:
            old = self._saved.pop(key, None)
            if old is not None:
                self._bytes -= _held(old)
            self._saved[key] = entry
            self._bytes += _held(entry)
            while len(self._saved) > self._keys or (self._bytes > self._max_bytes and len(self._saved) > 1):
                self._bytes -= _held(self._saved.pop(next(iter(self._saved))))

    def settle(self, key: Key, items: list[Any], typed: tuple[str, Any], plan: Whole,
               info: T | None, serde: Any) -> None:
        """After `items` was serialized whole to `typed` as `plan` said: remember it, if
        large enough and joinable (bytes of a msgpack array of its items), else forget.
        `serde`: the bytes are `checked` with it; None for items just decoded from them
        (a read), which hold what the bytes hold."""
        kind, data = typed
        if (kind == ROOT_TYPE and isinstance(data, bytes) and len(data) >= MIN_BYTES
                and lists_of(data, len(items))):
            snap = checked(plan, typed, serde) if serde is not None else plan.snap
            self.remember(key, items, snap, info if snap is not None else None,
                          size=len(data), misses=plan.misses, wait=plan.wait)
        else:
            self.drop(key)

    def drop(self, key: Key) -> None:
        if key not in self._saved:  # the usual case for a small list: no lock
            return
        with self._lock:
            old = self._saved.pop(key, None)
            if old is not None:
                self._bytes -= _held(old)

    def forget(self, thread_id: str | None = None, ns: str | None = None) -> None:
        """Forget every list, those of one thread (deleted: nothing keeps it alive), or of
        one of its namespaces (read back empty: cleared by someone else)."""
        with self._lock:
            if thread_id is None:
                self._saved.clear()
                self._bytes = 0
                return
            for key in [k for k in self._saved if k[0] == thread_id and ns in (None, k[1])]:
                self._bytes -= _held(self._saved.pop(key))


def _held(entry: Remembered[Any]) -> int:
    """What an entry counts against a memo's byte budget: a size-only entry holds nothing."""
    return entry.size if entry.snap is not None else 0


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
    """`serde.dumps_typed(value)` — for a list that extends, unchanged, the one remembered
    for `key`, the remembered bytes joined with those of the appended items (the same
    bytes)."""
    if value.__class__ is not list or not joinable(serde):
        return serde.dumps_typed(value)
    items = list(value)  # one copy, taken first: what is serialized is what is remembered
    plan = memo.decide(key, items)
    if isinstance(plan, Join):
        ttype, tdata = serde.dumps_typed(plan.tail)
        if ttype == ROOT_TYPE and lists_of(tdata, len(plan.tail)):
            base = cast(bytes, plan.saved.info)  # (a joined entry always holds its bytes)
            data = compose((base, tdata)) if plan.tail else base
            snap = checked(plan, (ttype, tdata), serde)
            memo.remember(key, items, snap, data if snap is not None else None, size=len(data))
            return ROOT_TYPE, data
        plan = Whole(None)
    typed = serde.dumps_typed(items)
    memo.settle(key, items, typed, plan, typed[1], serde)
    return typed


def remember_read(memo: GrownLists[T], key: Key, items: list[Any], typed: tuple[str, Any],
                  info: T, serde: Any) -> None:
    """Remember a list read back (`items`, a copy, decoded by `serde` from `typed` just
    now: nobody else holds its items yet), so the run that starts from it joins what it
    appends — if its items serialize again to those bytes (`read_snapshot`)."""
    memo.settle(key, items, typed, Whole(read_snapshot(items, serde, typed[1])), info, None)

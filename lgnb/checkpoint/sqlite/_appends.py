"""Lists that only grew, stored as what they appended (schema 6).

A saved conversation is a list of messages that grows by one or two at each step. Stored
whole at every version, a step costs O(history): at 10,000 messages serializing, hashing
and writing the 2.4 MB list is ~38 ms a step on both engines, and the file grows as the
square of the conversation. So when a channel's new value is a `list` whose first items
are *the same objects* as the value this store saved last for that channel (thread,
namespace), the blob of the new version holds only the new items, and names the version
it extends:

* its `type` is ``lgnb-append:<size>:<base version>`` — `size` the length in bytes of the
  whole value, serialized (what `list_stored` reports without reading the chain);
* its bytes (inline or a `ref` to `lgnb_values`, as any blob) are the serialized list of
  the appended items.

This works on bytes, not objects, because msgpack serializes a list as a header (the item
count) followed by each item on its own: the whole value's bytes are a new header and the
items of the base's bytes, then the tail's (`compose`). So only serializers known to write
a list that way join lists (`joinable`: lgnb's `StrictSerializer` and LangGraph's
`JsonPlusSerializer`, not subclasses, which may wrap values), and only values they wrote as
a plain ``msgpack`` array of the list's items (not pickled ones).

The framework changes one thing in place: `add_messages` gives a message without an id
its id at the next merge, after the list was saved (a list set with `Overwrite` skipped the
reducer; an `operator.add` list of messages never gets ids). So the store remembers which
saved items had no id (`idless`), and a list in which one of them has one now is stored
whole: the id reaches the file.

Invariants:

* A chain is at most `depth_limit(size)` appends long (32 for a value under 128 KB, one
  per 4 KB above, at most 1,024): the next version is stored whole. So reading a value
  costs that many primary-key lookups (one statement) — little beside decoding it — and
  a step's amortized cost is a fraction of a whole write that shrinks as the value grows
  (at 10,000 messages, 2.4 MB: one whole write per ~600 steps).
* The base is checked to exist inside the transaction that writes the append (a prune
  from another process may have deleted it); if it is gone, the value is stored whole.
* Collecting unreferenced blobs keeps the bases of the blobs it keeps
  (`_sql.COLLECT_BLOBS`), so a chain never runs through a deleted row.

What it does not see: an item of the saved prefix changed *in place* (a node that mutates
``state["messages"][0].content`` instead of returning a message) is the same object, so
until the next whole write the stored value keeps the item as it was saved. LangGraph
stores such an edit only when the channel is written in the same step; return an updated
message (same id) instead, which `add_messages` puts in its place — that changes the list,
and the value is stored whole.
"""

from __future__ import annotations

import operator
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from lgnb.checkpoint.serde import StrictSerializer
from lgnb.checkpoint.sqlite._errors import CheckpointDatabaseError

PREFIX = "lgnb-append:"
"""The `lgnb_blobs.type` of a stored append: ``lgnb-append:<size>:<base version>``."""

ROOT_TYPE = "msgpack"
"""The only serialization whose values are stored as appends (and what they decode as)."""

MAX_DEPTH = 32
"""Appends in a row before a value is stored whole again, for values up to
`MAX_DEPTH * BYTES_PER_LINK` bytes; a larger value allows one append per `BYTES_PER_LINK`
bytes, up to `MAX_CHAIN` (`depth_limit`)."""

BYTES_PER_LINK = 4096
"""How much of a value one more link of its chain may stand for: a link costs ~14 µs
when read (its lookup, its tail's bytes, composing), while decoding 4 KB of messages
costs ~200 µs. At 10,000 messages (2.4 MB) a chain of ~480 links reads in 7 ms, the
messages decode in ~80 ms."""

MAX_CHAIN = 1024
"""Appends in a row, however large the value."""

MIN_BYTES = 2048
"""A list smaller than this (serialized) is stored whole: rewriting it costs little."""

_REMEMBERED = 256
"""(thread, namespace, channel) keys whose last saved list a store remembers."""

# The base chain of one blob, from the version named to its whole value, in one
# statement: each link a primary-key lookup; `n` stops a damaged (cyclic) chain.
SELECT_CHAIN = f"""
WITH RECURSIVE chain(type, blob, ref, n) AS (
    SELECT type, blob, ref, 0 FROM lgnb_blobs
    WHERE thread_id = :t AND checkpoint_ns = :ns AND version = :v AND channel = :c
    UNION ALL
    SELECT b.type, b.blob, b.ref, chain.n + 1
    FROM chain JOIN lgnb_blobs AS b
      ON b.thread_id = :t AND b.checkpoint_ns = :ns AND b.channel = :c
     AND b.version = substr(substr(chain.type, {len(PREFIX) + 1}),
                            instr(substr(chain.type, {len(PREFIX) + 1}), ':') + 1)
    WHERE chain.type LIKE '{PREFIX}%' AND chain.n <= {MAX_CHAIN + 1}
)
SELECT chain.type, COALESCE(chain.blob, v.data) FROM chain
LEFT JOIN lgnb_values AS v ON v.ref = chain.ref
ORDER BY chain.n
"""

BASE_EXISTS = (
    "SELECT 1 FROM lgnb_blobs WHERE thread_id = ? AND checkpoint_ns = ? AND version = ? "
    "AND channel = ?"
)


def depth_limit(size: int) -> int:
    """The longest chain of appends a value of `size` bytes (serialized) may end."""
    return min(MAX_CHAIN, max(MAX_DEPTH, size // BYTES_PER_LINK))


_JOINABLE = (StrictSerializer, JsonPlusSerializer)


def joinable(serde: Any) -> bool:
    """Whether `serde` serializes a list as a msgpack array of its items, each serialized on
    its own (exactly these classes: a subclass may wrap what it stores)."""
    return type(serde) in _JOINABLE


_NO_ID = object()


def idless(items: Sequence[Any], start: int = 0) -> list[int]:
    """Positions (from `start`) of the items that are messages (anything with an ``id``
    attribute) whose id is None: `add_messages` may set it in place later."""
    return [start + i for i, item in enumerate(items) if getattr(item, "id", _NO_ID) is None]


def lists_of(data: bytes | None, count: int) -> bool:
    """Whether `data` is a msgpack array of `count` items (what `compose` can join)."""
    return is_array(data) and _count(data)[0] == count  # type: ignore[arg-type]


def stored_type(size: int, base_version: str) -> str:
    """The `lgnb_blobs.type` of an append to `base_version`, the whole value `size` bytes."""
    return f"{PREFIX}{size}:{base_version}"


def parse(btype: str) -> tuple[int, str]:
    """`(size, base version)` of an append's stored type."""
    size, _, base = btype[len(PREFIX):].partition(":")
    return int(size), base


def _header(count: int) -> bytes:
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


def _count(data: bytes) -> tuple[int, int]:
    """`(items, header length)` of a msgpack array's bytes."""
    first = data[0]
    if 0x90 <= first <= 0x9F:
        return first - 0x90, 1
    if first == 0xDC:
        return int.from_bytes(data[1:3], "big"), 3
    if first == 0xDD:
        return int.from_bytes(data[1:5], "big"), 5
    raise ValueError(f"not a msgpack array (first byte 0x{first:02x})")


def compose(parts: Sequence[bytes]) -> bytes:
    """The bytes of the list whose items are those of each serialized list in `parts`."""
    if len(parts) == 1:
        return parts[0]
    total = 0
    bodies = []
    for part in parts:
        count, skip = _count(part)
        total += count
        bodies.append(memoryview(part)[skip:])
    return _header(total) + b"".join(bodies)


def grown_size(base_size: int, base_items: int, tail: bytes) -> int:
    """The serialized size of a list of `base_items` items (`base_size` bytes) with the
    items of the serialized list `tail` appended."""
    tail_items, tail_header = _count(tail)
    return (base_size - len(_header(base_items)) + len(tail) - tail_header
            + len(_header(base_items + tail_items)))


def parts_of(conn: sqlite3.Connection, label: str, thread_id: str, ns: str, channel: str,
             btype: str, data: bytes | None) -> list[bytes]:
    """The serialized lists (whole value first, then each append) that make up a stored
    append of `channel`, whose own type and bytes are `btype` and `data`."""
    _size, base = parse(btype)
    rows = conn.execute(SELECT_CHAIN, {"t": thread_id, "ns": ns, "v": base, "c": channel}).fetchall()
    if not rows or rows[-1][0] != ROOT_TYPE or data is None or any(row[1] is None for row in rows):
        raise CheckpointDatabaseError(
            f"The saved value of channel {channel!r} (thread {thread_id!r}, namespace {ns!r}) "
            f"is stored as an append to its version {base!r}, which is missing or damaged in "
            f"{label!r}. The file was changed outside lgnb or is damaged: restore it from a "
            "backup, or delete the thread (saver.delete_thread)."
        )
    parts = [row[1] for row in reversed(rows)]
    parts.append(data)
    return parts


@dataclass
class _Saved:
    version: str
    items: list[Any]
    depth: int
    size: int
    idless: list[int]


class Appends:
    """What a store saved last per (thread, namespace, channel) list: the base of the
    next version's append. Forgotten when rows may have been deleted (`forget`)."""

    def __init__(self) -> None:
        self._saved: dict[tuple[str, str, str], _Saved] = {}
        # saves of different threads may run at once (async savers, background saves)
        self._lock = threading.Lock()

    def forget(self) -> None:
        with self._lock:
            self._saved.clear()

    def grown(self, key: tuple[str, str, str], value: list[Any]) -> tuple[_Saved, list[Any]] | None:
        """`(base, appended items)` when `value` extends the list saved last for `key`."""
        with self._lock:
            saved = self._saved.get(key)
        if saved is None or saved.size < MIN_BYTES or saved.depth >= depth_limit(saved.size):
            return None
        items = saved.items
        n = len(items)
        if len(value) < n or not all(map(operator.is_, value, items)):
            return None
        for i in saved.idless:  # given an id in place since: the stored bytes lack it
            if getattr(items[i], "id", None) is not None:
                return None
        return saved, value[n:]

    def saved(self, key: tuple[str, str, str], version: str, items: list[Any], *, depth: int,
              size: int, idless: list[int]) -> None:
        """Remember `items` (a copy of the list, kept as it is) as saved for `key` at
        `version`; `idless`: the positions of its messages stored without an id."""
        with self._lock:
            self._saved.pop(key, None)
            if len(self._saved) >= _REMEMBERED:
                del self._saved[next(iter(self._saved))]
            self._saved[key] = _Saved(version, items, depth, size, idless)

    def drop(self, key: tuple[str, str, str]) -> None:
        with self._lock:
            self._saved.pop(key, None)

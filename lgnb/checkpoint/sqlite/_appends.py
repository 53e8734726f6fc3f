"""Lists that only grew, stored as what they appended (schema 6).

A saved conversation is a list of messages that grows by one or two at each step. Stored
whole at every version, a step costs O(history): at 10,000 messages serializing, hashing
and writing the 2.4 MB list is ~38 ms a step on both engines, and the file grows as the
square of the conversation. So when a channel's new value is a `list` that extends the
value this store saved last for that channel (thread, namespace) — its first items *the
same objects*, under the conditions of `lgnb.checkpoint._grown` — the blob of the new
version holds only the new items, and names the version it extends:

* its `type` is ``lgnb-append:<size>:<base version>`` — `size` the length in bytes of the
  whole value, serialized (what `list_stored` reports without reading the chain);
* its bytes (inline or a `ref` to `lgnb_values`, as any blob) are the serialized list of
  the appended items.

Reads join the bytes of the chain's links (`_grown.compose`) and decode once. The store
remembers the lists a run starts from (`get_tuple`), so a turn (one `invoke` per cell)
appends too.

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

A list whose earlier items changed in place since they were stored (a message edited in
place, returned or not) is stored whole, as LangGraph stores it (`_grown.Snapshot`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from lgnb.checkpoint._grown import (
    MAX_CHAIN,
    MAX_DEPTH,
    MIN_BYTES,
    ROOT_TYPE,
    GrownLists,
    Join,
    Remembered,
    Snapshot,
    Whole,
    checked,
    compose,
    depth_limit,
    grown_size,
    joinable,
    lists_of,
    read_snapshot,
    snapshot,
)
from lgnb.checkpoint.sqlite._errors import CheckpointDatabaseError

__all__ = [
    "MAX_CHAIN", "MAX_DEPTH", "MIN_BYTES", "PREFIX", "ROOT_TYPE", "Appends", "Join", "Snapshot", "Whole",
    "checked", "compose", "depth_limit", "grown_size", "joinable", "lists_of", "parse", "parts_of", "read_snapshot", "snapshot",
    "stored_type",
]

PREFIX = "lgnb-append:"
"""The `lgnb_blobs.type` of a stored append: ``lgnb-append:<size>:<base version>``."""

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


def stored_type(size: int, base_version: str) -> str:
    """The `lgnb_blobs.type` of an append to `base_version`, the whole value `size` bytes."""
    return f"{PREFIX}{size}:{base_version}"


def parse(btype: str) -> tuple[int, str]:
    """`(size, base version)` of an append's stored type."""
    size, _, base = btype[len(PREFIX):].partition(":")
    return int(size), base


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


@dataclass(slots=True)
class Link:
    """What a store keeps beside a remembered list: the version it saved it as, the appends
    since the value was stored whole, and the whole value's serialized size."""

    version: str
    depth: int


class Appends(GrownLists[Link]):
    """What a store saved last per (thread, namespace, channel) list: the base of the
    next version's append. Forgotten when rows may have been deleted (`forget`)."""

    def usable(self, saved: Remembered[Link]) -> bool:
        return saved.info is not None and saved.info.depth < depth_limit(saved.size)

"""A checkpoint's channel versions, stored as a delta on an earlier checkpoint's.

A checkpoint names the version of every channel it reads (`blob_refs`, channel ->
version: 50 channels are ~1.5 KB), but a step changes only the few channels its tasks
wrote. So since schema 4 a row may store only what differs from another checkpoint of
the same thread and namespace — its base, normally its parent — and name that base in
`refs_base`; a row with `refs_base` NULL holds the full map. A removed channel is a
JSON `null` in the delta (LangGraph never removes one; a direct `put` may).

Invariants the rest of the saver relies on:

* A chain of deltas is at most `MAX_CHAIN` rows long before a full map, so reading
  a checkpoint costs at most that many primary-key lookups (one recursive statement),
  none for the checkpoint this store saved last (its map is kept: `known`).
* Every (channel, version) in a checkpoint's full map appears literally in the
  `blob_refs` of a row of its chain. So "is this blob referenced?" is still answered by
  the `blob_refs` of the rows that exist (`COLLECT_BLOBS`) — as long as no row's chain
  runs through a deleted row. Hence every delete of checkpoints first *materializes*
  (rewrites as full maps) the surviving rows whose base it deletes, and an overwritten
  checkpoint first materializes the rows based on it (`materialize`).
* A delta is only written against the checkpoint this store itself saved last (its
  full map kept in memory): a fork, another writer's parent, or a store that was just
  opened writes a full map instead of reading one back.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lgnb.checkpoint.sqlite._errors import CheckpointDatabaseError

MAX_CHAIN = 64
"""Rows per chain: a full map at least every this many checkpoints."""

# A chain, from a row to its full map, followed in one statement (each link a
# primary-key lookup; `n` stops a corrupt cycle).
_SELECT_CHAIN = """
WITH RECURSIVE chain(checkpoint_id, blob_refs, refs_base, n) AS (
    SELECT checkpoint_id, blob_refs, refs_base, 0 FROM lgnb_checkpoints
    WHERE thread_id = :t AND checkpoint_ns = :ns AND checkpoint_id = :id
    UNION ALL
    SELECT c.checkpoint_id, c.blob_refs, c.refs_base, chain.n + 1
    FROM chain JOIN lgnb_checkpoints AS c
      ON c.thread_id = :t AND c.checkpoint_ns = :ns AND c.checkpoint_id = chain.refs_base
    WHERE chain.n < :most
)
SELECT checkpoint_id, blob_refs, refs_base FROM chain
"""
# The rows just before a checkpoint (ids sort by time): in a thread without forks, its
# whole chain in one range scan, cheaper than the recursive walk (20 rows: 16 against
# 36 µs). A chain that leaves the range (a fork's base further back) goes on with the walk.
_SELECT_BEFORE = """
SELECT checkpoint_id, blob_refs, refs_base FROM lgnb_checkpoints
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id <= ?
ORDER BY checkpoint_id DESC LIMIT ?
"""
_BASE_EXISTS = (
    "SELECT 1 FROM lgnb_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
_MATERIALIZE = (
    "UPDATE lgnb_checkpoints SET blob_refs = ?, refs_base = NULL "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
_BASED_ON = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, blob_refs, refs_base FROM lgnb_checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND refs_base = ?"
)

Versions = dict[str, Any]
Key = tuple[str, str, str]  # thread_id, checkpoint_ns, checkpoint_id


compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`, the text version maps
and metadata are stored as, without building a `JSONEncoder` per call as `json.dumps`
does for any non-default option (two per checkpoint)."""


def _dumps(versions: Mapping[str, Any]) -> str:
    return compact_json(versions)


class RefsEncoder:
    """Turns a checkpoint's `channel_versions` into the `(blob_refs, refs_base)` it is
    stored as: a delta on the last checkpoint this store saved when that is its parent."""

    def __init__(self) -> None:
        # the last saved checkpoint: its key, full map and place in its chain
        self._last: tuple[Key, Versions, int] | None = None

    def encode(
        self,
        key: Key,
        parent_id: str | None,
        versions: Mapping[str, Any],
        changed: Mapping[str, Any] = {},  # noqa: B006 (read only)
    ) -> tuple[str, str | None, tuple[Key, Versions, int]]:
        """`(blob_refs, refs_base, memo)`; pass `memo` to `saved` once the row is committed.

        `changed` is `put`'s `new_versions`: when the parent's map updated with it is
        exactly `versions` (two C-level passes, however wide the state), the delta is
        read off it instead of comparing every channel in Python."""
        last = self._last
        if (
            last is not None
            and parent_id is not None
            and parent_id != key[2]
            and last[0] == (key[0], key[1], parent_id)
            and last[2] + 1 < MAX_CHAIN
        ):
            before = last[1]
            now = before.copy()
            now.update(changed)
            if now == versions:
                delta: dict[str, Any] = {c: v for c, v in changed.items() if before.get(c) != v}
            else:  # `changed` is not the difference (a direct put): compare them all
                now = dict(versions)
                delta = {c: v for c, v in now.items() if before.get(c) != v}
                for channel in before.keys() - now.keys():
                    delta[channel] = None  # removed (a direct put; LangGraph never does)
            if 2 * len(delta) <= len(now):
                return _dumps(delta), parent_id, (key, now, last[2] + 1)
        return full(key, versions)

    def saved(self, memo: tuple[Key, Versions, int]) -> None:
        self._last = memo

    def known(self) -> dict[Key, Versions]:
        """The last saved checkpoint's full map, to start reads from: the checkpoint
        read most (the thread's latest, by the next run and by `get_state`) then
        costs no walk of its chain."""
        last = self._last
        return {} if last is None else {last[0]: last[1]}

    def forget(self) -> None:
        """Drop the memory of the last checkpoint (after deletes: it may be gone)."""
        self._last = None


def full(key: Key, versions: Mapping[str, Any]) -> tuple[str, None, tuple[Key, Versions, int]]:
    """`RefsEncoder.encode`'s answer for a full map."""
    copied = dict(versions)
    return _dumps(copied), None, (key, copied, 0)


def base_exists(conn: sqlite3.Connection, key: Key, base: str) -> bool:
    """Whether the base a delta was computed on is still stored (checked in the write
    transaction that stores the delta: nothing can delete it after that)."""
    return conn.execute(_BASE_EXISTS, (key[0], key[1], base)).fetchone() is not None


def full_maps(
    conn: sqlite3.Connection,
    rows: Iterable[tuple[str, str, str, str, str | None]],
    known: Mapping[Key, Versions] | None = None,
) -> dict[Key, Versions]:
    """The full version maps of `(thread, ns, id, blob_refs, refs_base)` rows.

    Rows are resolved oldest first (ids sort by time), so a page of consecutive
    checkpoints walks the database for its oldest row's chain only."""
    maps: dict[Key, Versions] = dict(known or {})
    for thread_id, ns, checkpoint_id, refs, base in sorted(rows, key=lambda r: r[2]):
        key = (thread_id, ns, checkpoint_id)
        hit = maps.get(key)
        maps[key] = dict(hit) if hit is not None else _resolve(conn, thread_id, ns, refs, base, maps)
    return maps


def _resolve(
    conn: sqlite3.Connection,
    thread_id: str,
    ns: str,
    refs: str,
    base: str | None,
    known: Mapping[Key, Versions],
) -> Versions:
    deltas = []
    start: Versions | None = None
    seen = 0
    fetched: dict[str, tuple[str, str | None]] = {}
    while base is not None:
        hit = known.get((thread_id, ns, base))
        if hit is not None:
            start = dict(hit)
            break
        deltas.append(refs)
        row = fetched.get(base)
        if row is None:
            if not fetched:
                fetched = _chain_before(conn, thread_id, ns, base)
            else:  # the chain left the rows just before it (a fork's, interleaved)
                fetched = {
                    cid: (r, b)
                    for cid, r, b in conn.execute(
                        _SELECT_CHAIN, {"t": thread_id, "ns": ns, "id": base, "most": 2 * MAX_CHAIN}
                    )
                }
            row = fetched.get(base)
        seen += 1
        if row is None or seen > 4 * MAX_CHAIN:
            raise CheckpointDatabaseError(
                f"Checkpoint {base!r} of thread {thread_id!r} (namespace {ns!r}) is missing: "
                "a checkpoint stores its channel versions as changes to it. The file was "
                "edited outside lgnb, or a delete did not finish; restore it from a backup."
            )
        refs, base = row
    if start is None:
        start = json.loads(refs)
    else:
        deltas.append(refs)
    for delta in reversed(deltas):
        for channel, version in json.loads(delta).items():
            if version is None:
                start.pop(channel, None)
            else:
                start[channel] = version
    return start


def _chain_before(
    conn: sqlite3.Connection, thread_id: str, ns: str, base: str
) -> dict[str, tuple[str, str | None]]:
    """The rows from `base` back, read newest first and only as far as the chain that
    starts at `base` needs: up to its full map, or `MAX_CHAIN` rows."""
    fetched: dict[str, tuple[str, str | None]] = {}
    want: str | None = base
    for cid, refs, refs_base in conn.execute(_SELECT_BEFORE, (thread_id, ns, base, MAX_CHAIN)):
        fetched[cid] = (refs, refs_base)
        if cid == want:
            want = refs_base
            if want is None:  # the chain's full map: nothing older is needed
                break
    return fetched


def resolve_rows(
    conn: sqlite3.Connection,
    rows: Sequence[Sequence[Any]],
    known: Mapping[Key, Versions] | None = None,
) -> list[tuple[Any, ...]]:
    """Checkpoint rows (`SELECT_CHECKPOINT_COLUMNS`: ..., blob_refs, refs_base) with
    `blob_refs` as the full map (a new dict per row, the caller's) and `refs_base`
    dropped. `known`: full maps already at hand (`RefsEncoder.known`)."""
    if all(row[8] is None for row in rows):
        return [(*row[:7], json.loads(row[7])) for row in rows]
    maps = full_maps(
        conn, [(r[0], r[1], r[2], r[7], r[8]) for r in rows if r[8] is not None], known
    )
    return [
        (*row[:7], json.loads(row[7]) if row[8] is None else maps[(row[0], row[1], row[2])])
        for row in rows
    ]


def materialize(
    conn: sqlite3.Connection, rows: Iterable[tuple[str, str, str, str, str | None]]
) -> None:
    """Rewrite these rows with full maps (before the rows their chains run through are
    deleted or replaced)."""
    pending = [r for r in rows if r[4] is not None]
    if not pending:
        return
    maps = full_maps(conn, pending)
    conn.executemany(
        _MATERIALIZE, [(_dumps(m), *key) for key, m in maps.items()]
    )


def materialize_based_on(conn: sqlite3.Connection, key: Key) -> None:
    """Materialize the rows whose deltas apply to checkpoint `key` (about to change)."""
    materialize(conn, conn.execute(_BASED_ON, key).fetchall())

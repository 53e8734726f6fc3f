"""`list_stored`: the checkpoints of `list()`, with their values handed over undecoded.

A history view draws a timeline from each checkpoint's metadata, parent and next tasks;
it needs the full values of one checkpoint only, the one clicked. `list()` decodes every
channel value of every checkpoint (a 5 MB value referred to by 200 checkpoints is decoded
200 times). `list_stored` reads the same rows but gives each channel value and pending
write to a caller's `load` function as a :class:`StoredValue` (type, serialized size,
its bytes when small, and a way to read them when large), and puts what `load` returns in
the tuple: the caller decides what to decode, can decode a stored version once, and
never reads a large value it does not show.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple

from lgnb.checkpoint.sqlite import _appends
from lgnb.checkpoint.sqlite._refs import compact_json, resolve_rows
from lgnb.checkpoint.sqlite._store import SqliteStore, _config, load_checkpoint
from lgnb.checkpoint.stored import StoredValue as BaseStoredValue

# Sizes without reading the bytes (length() of a BLOB column reads only the record
# header); the bytes themselves only when they are at most `?` long.
_BLOBS = """
SELECT b.channel, b.version, b.type,
       CASE WHEN b.ref IS NULL THEN length(b.blob) ELSE length(v.data) END AS size,
       CASE WHEN b.ref IS NULL THEN b.blob
            WHEN length(v.data) <= ? THEN v.data END
FROM json_each(?) AS r
CROSS JOIN lgnb_blobs AS b
  ON b.thread_id = ? AND b.checkpoint_ns = ? AND b.channel = r.key
 AND b.version = CAST(r.value AS TEXT)
LEFT JOIN lgnb_values AS v ON v.ref = b.ref
"""

_WRITES = """
SELECT w.task_id, w.idx, w.channel, w.type,
       CASE WHEN w.ref IS NULL THEN length(w.blob) ELSE length(v.data) END AS size,
       CASE WHEN w.ref IS NULL THEN w.blob
            WHEN length(v.data) <= ? THEN v.data END
FROM lgnb_writes AS w
LEFT JOIN lgnb_values AS v ON v.ref = w.ref
WHERE w.thread_id = ? AND w.checkpoint_ns = ? AND w.checkpoint_id = ?
ORDER BY w.task_path, w.task_id, w.idx
"""

_ONE_BLOB = """
SELECT COALESCE(b.blob, v.data) FROM lgnb_blobs AS b
LEFT JOIN lgnb_values AS v ON v.ref = b.ref
WHERE b.thread_id = ? AND b.checkpoint_ns = ? AND b.channel = ? AND b.version = ?
"""

_ONE_WRITE = """
SELECT COALESCE(w.blob, v.data) FROM lgnb_writes AS w
LEFT JOIN lgnb_values AS v ON v.ref = w.ref
WHERE w.thread_id = ? AND w.checkpoint_ns = ? AND w.checkpoint_id = ? AND w.task_id = ?
  AND w.idx = ?
"""


@dataclass(frozen=True)
class StoredValue(BaseStoredValue):
    """A value of lgnb's SQLite saver, as stored (see `lgnb.checkpoint.stored`)."""

    _store: Any = field(default=None, repr=False, compare=False)
    # the stored type of a list saved as an append (`_appends`): read() composes it
    _append: str | None = field(default=None, repr=False, compare=False)

    def read(self) -> bytes:
        """The serialized bytes (from `data`, or read from the file now)."""
        if self.data is not None or self.size == 0:
            return self.data or b""
        if self._append is not None:
            return self._composed()
        params: tuple[Any, ...]
        if self.version is not None:
            sql, params = _ONE_BLOB, (self.thread_id, self.checkpoint_ns, self.channel, self.version)
        else:
            sql, params = _ONE_WRITE, (self.thread_id, self.checkpoint_ns, self.checkpoint_id,
                                       self.task_id, self.idx)
        with self._store.reading() as conn:
            row = conn.execute(sql, params).fetchone()
        if row is None:
            raise LookupError(f"the stored value of {self.channel!r} is gone from the database "
                              "(deleted or pruned since it was listed): list the thread again")
        return row[0]

    def _composed(self) -> bytes:
        """The whole value of a list stored as an append, from its chain."""
        store = self._store
        with store.reading() as conn:
            row = conn.execute(_ONE_BLOB, (self.thread_id, self.checkpoint_ns, self.channel,
                                           self.version)).fetchone()
            if row is None:
                raise LookupError(f"the stored value of {self.channel!r} is gone from the database "
                                  "(deleted or pruned since it was listed): list the thread again")
            parts = _appends.parts_of(conn, store.label, self.thread_id, self.checkpoint_ns,
                                      self.channel, cast(str, self._append), row[0])
        return _appends.compose(parts)



def list_stored(
    store: SqliteStore,
    config: RunnableConfig | None,
    *,
    load: Callable[[StoredValue], Any],
    filter: dict[str, Any] | None = None,
    before: RunnableConfig | None = None,
    limit: int | None = None,
    inline_max: int = 65536,
) -> Iterator[CheckpointTuple]:
    """`store.list(...)` with each value given to `load` instead of being decoded."""
    for page in store.checkpoint_rows(config, filter=filter, before=before, limit=limit):
        with store.reading() as conn:
            rows = resolve_rows(conn, page, store.refs.known())
        for row in rows:
            with store.reading() as conn:
                stored, writes = _read_row(store, conn, row, inline_max)
            yield _tuple(store, row, stored, writes, load)


def _read_row(store: SqliteStore, conn: Any, row: Sequence[Any], inline_max: int
              ) -> tuple[list[StoredValue], list[StoredValue]]:
    thread_id, ns, checkpoint_id, _parent, _type, _blob, _meta, versions = row
    refs = compact_json(versions)
    values = [
        _appended(thread_id, ns, channel, version, btype, store)
        if btype.startswith(_appends.PREFIX)
        else StoredValue(thread_id, ns, channel, btype, size or 0, data, version=version, _store=store)
        for channel, version, btype, size, data in conn.execute(_BLOBS, (inline_max, refs, thread_id, ns))
        if btype != "empty"
    ]
    writes = [
        StoredValue(thread_id, ns, channel, wtype, size or 0, data, checkpoint_id=checkpoint_id,
                    task_id=task_id, idx=idx, _store=store)
        for task_id, idx, channel, wtype, size, data in conn.execute(
            _WRITES, (inline_max, thread_id, ns, checkpoint_id))
    ]
    return values, writes


def _appended(thread_id: str, ns: str, channel: str, version: str, btype: str, store: SqliteStore
              ) -> StoredValue:
    """The value of a list stored as an append: its whole size, its bytes composed on `read()`."""
    size, _base = _appends.parse(btype)
    return StoredValue(thread_id, ns, channel, _appends.ROOT_TYPE, size, None, version=version,
                       _store=store, _append=btype)


def _tuple(store: SqliteStore, row: Sequence[Any], values: list[StoredValue], writes: list[StoredValue],
           load: Callable[[StoredValue], Any]) -> CheckpointTuple:
    thread_id, ns, checkpoint_id, parent_id, type_, blob, metadata, versions = row
    checkpoint = load_checkpoint(store.serde, type_, blob, versions, checkpoint_id)
    checkpoint["channel_values"] = {v.channel: load(v) for v in values}
    return CheckpointTuple(
        config=_config(thread_id, ns, checkpoint_id),
        checkpoint=checkpoint,
        metadata=json.loads(metadata),
        parent_config=_config(thread_id, ns, parent_id) if parent_id else None,
        pending_writes=[(cast(str, w.task_id), w.channel, load(w)) for w in writes],  # a write has its task's id
    )


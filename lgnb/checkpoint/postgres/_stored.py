"""`list_stored` on lgnb's PostgreSQL savers: `list()` with values handed over undecoded.

The same lgnb extra as the SQLite saver's (`lgnb.checkpoint.sqlite._stored`), over
LangGraph's PostgreSQL tables: a history view draws a timeline from each checkpoint's
metadata, parent and next tasks and decodes the values of the one checkpoint clicked.
LangGraph's `list()` fetches every row of the thread with every value's bytes and decodes
them all; on a thread whose 5 MB value is referred to by 200 checkpoints that is a
gigabyte. Here each page of checkpoints is read with, per value, its type, its size and
its bytes only when small (`inline_max`); a larger one is read when `read()` is called.

LangGraph's layout stores a channel's value in one of two places:

* primitive values (str, int, float, bool, None) inline in the checkpoint's JSONB
  (`checkpoint -> 'channel_values'`), a copy in every checkpoint: their size is the
  server's size of the JSONB value (`pg_column_size`, no text made of it);
* anything else in `checkpoint_blobs`, once per (channel, version).

Rows are read a page at a time (`PAGE`, newest first, keyset on `checkpoint_id`), and
the connection is given back between pages, so a caller may use the saver while it
iterates. A checkpoint of an older format (`v` < 4, whose pending sends LangGraph
migrates when it loads them) is read through the saver's own `get_tuple`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple, writes_sort_key

from lgnb.checkpoint.stored import StoredValue

__all__ = ("PAGE", "ListStored", "PgStoredValue", "async_fetch", "sync_fetch")

PAGE = 32
"""Checkpoints read per query."""

Fetch = Callable[[str, Sequence[Any]], list[dict[str, Any]]]
"""`fetch(sql, params)` -> rows, on the saver's connection (given back after each call)."""

INLINE = "json"
"""The `type` of a value stored inline in the checkpoint's JSONB (its JSON text)."""

# Sizes are computed by the server; bytes travel only when at most %s (three times).
_SELECT = """
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata,
       checkpoint - 'channel_values' AS checkpoint,
       (SELECT array_agg(array[e.key, pg_column_size(e.value)::text,
                               CASE WHEN pg_column_size(e.value) <= %s THEN e.value::text END])
          FROM jsonb_each(checkpoint -> 'channel_values') AS e) AS inline_values,
       (SELECT array_agg(array[bl.channel::bytea, bl.version::bytea, bl.type::bytea,
                               coalesce(octet_length(bl.blob), 0)::text::bytea,
                               CASE WHEN octet_length(bl.blob) <= %s THEN bl.blob END])
          FROM jsonb_each_text(checkpoint -> 'channel_versions') AS v
          JOIN checkpoint_blobs AS bl
            ON bl.thread_id = checkpoints.thread_id AND bl.checkpoint_ns = checkpoints.checkpoint_ns
           AND bl.channel = v.key AND bl.version = v.value) AS blobs,
       (SELECT array_agg(array[cw.task_id::bytea, cw.channel::bytea, cw.type::bytea,
                               octet_length(cw.blob)::text::bytea,
                               CASE WHEN octet_length(cw.blob) <= %s THEN cw.blob END,
                               convert_to(coalesce(cw.task_path, ''), 'UTF8'), cw.idx::text::bytea])
          FROM checkpoint_writes AS cw
         WHERE cw.thread_id = checkpoints.thread_id AND cw.checkpoint_ns = checkpoints.checkpoint_ns
           AND cw.checkpoint_id = checkpoints.checkpoint_id) AS writes
FROM checkpoints
"""

_ONE_INLINE = """
SELECT (checkpoint -> 'channel_values' -> %s)::text FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
"""

_ONE_BLOB = """
SELECT blob FROM checkpoint_blobs
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s
"""

_ONE_WRITE = """
SELECT blob FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s AND task_id = %s AND idx = %s
"""


@dataclass(frozen=True)
class PgStoredValue(StoredValue):
    """A value of LangGraph's PostgreSQL tables, as stored (see `lgnb.checkpoint.stored`):
    JSON text for an inline value (`type` "json"), the serializer's typed bytes otherwise."""

    _fetch: Fetch | None = field(default=None, repr=False, compare=False)

    def read(self) -> bytes:
        """The stored bytes (from `data`, or read from the database now)."""
        if self.data is not None:
            return self.data
        params: tuple[Any, ...]
        if self.type == INLINE:
            sql, params = _ONE_INLINE, (self.channel, self.thread_id, self.checkpoint_ns, self.checkpoint_id)
        elif self.task_id is None:
            sql, params = _ONE_BLOB, (self.thread_id, self.checkpoint_ns, self.channel, self.version)
        else:
            sql, params = _ONE_WRITE, (self.thread_id, self.checkpoint_ns, self.checkpoint_id, self.task_id, self.idx)
        assert self._fetch is not None, "a stored value made outside list_stored has its data"
        rows = self._fetch(sql, params)
        if not rows or next(iter(rows[0].values())) is None:
            raise LookupError(f"the stored value of {self.channel!r} is gone from the database "
                              "(deleted or pruned since it was listed): list the thread again")
        value = next(iter(rows[0].values()))
        return value.encode() if isinstance(value, str) else bytes(value)

    def decode(self, serde: Any) -> Any:
        """The value, decoded (with `serde` unless it is inline JSON)."""
        if self.type == INLINE:
            return json.loads(self.read())
        return super().decode(serde)


def sync_fetch(saver: Any) -> Fetch:
    """A fetch over a `PostgresSaver`'s connection (or pool)."""

    def fetch(sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        with saver._cursor() as cur:
            cur.execute(sql, list(params))
            return list(cur.fetchall())

    return fetch


def async_fetch(saver: Any) -> Fetch:
    """A blocking fetch over an `AsyncPostgresSaver`'s connection, run on its event loop
    (as LangGraph's sync methods of that saver do: from another thread only)."""

    async def afetch(sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        async with saver._cursor() as cur:
            await cur.execute(sql, list(params))
            return list(await cur.fetchall())

    def fetch(sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is saver.loop:
            raise asyncio.InvalidStateError(
                "Synchronous calls to AsyncPostgresSaver are only allowed from a different thread than "
                "its event loop's: read the history from a worker thread, or use PostgresSaver."
            )
        return asyncio.run_coroutine_threadsafe(afetch(sql, params), saver.loop).result()

    return fetch


class ListStored:
    """Mixin for lgnb's PostgreSQL savers: `list_stored`, over the fetch `_fetcher` gives
    (`sync_fetch` for `PostgresSaver`, `async_fetch` for `AsyncPostgresSaver`)."""

    _fetcher: Callable[[Any], Fetch] = staticmethod(sync_fetch)

    def list_stored(
        self,
        config: RunnableConfig | None,
        *,
        load: Callable[[PgStoredValue], Any],
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        inline_max: int = 65536,
    ) -> Iterator[CheckpointTuple]:
        """`list()` with each channel value and pending write handed to `load` undecoded
        (its type, size, and bytes when at most `inline_max`; `read()` fetches larger
        ones): an lgnb extra for `lgnb.history`, which decodes only what it shows. Reads
        a page of checkpoints at a time and gives the connection back between pages (an
        async saver: from a thread other than its event loop's)."""
        fetch = self._fetcher(self)
        saver: Any = self
        where, args = saver._search_where(config, filter, before)
        last: str | None = None
        left = limit
        while left is None or left > 0:
            sql, params = _SELECT + where, [inline_max, inline_max, inline_max, *args]
            if last is not None:
                sql += (" AND " if where else " WHERE ") + "checkpoint_id < %s"
                params.append(last)
            size = PAGE if left is None else min(PAGE, left)
            rows = fetch(sql + " ORDER BY checkpoint_id DESC LIMIT %s", [*params, size])
            for row in rows:
                yield _tuple(saver, row, load, inline_max, fetch)
            if len(rows) < size:
                return
            last = rows[-1]["checkpoint_id"]
            left = None if left is None else left - len(rows)


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}


def _tuple(saver: Any, row: dict[str, Any], load: Callable[[PgStoredValue], Any], inline_max: int,
           fetch: Callable[[str, Sequence[Any]], Any]) -> CheckpointTuple:
    tid, ns, cid, parent = row["thread_id"], row["checkpoint_ns"], row["checkpoint_id"], row["parent_checkpoint_id"]
    checkpoint = dict(row["checkpoint"])
    if checkpoint.get("v", 4) < 4 and parent:  # LangGraph migrates its pending sends when it loads it
        migrated = saver.get_tuple(_config(tid, ns, cid))
        assert migrated is not None, f"checkpoint {cid} vanished while listing"
        return migrated
    versions = checkpoint.get("channel_versions") or {}
    values: dict[str, Any] = {}
    for key, size, text in row["inline_values"] or ():
        data = None if text is None else text.encode()
        version = versions.get(key)
        values[key] = load(PgStoredValue(tid, ns, key, INLINE, int(size), data,
                                         version=None if version is None else str(version),
                                         checkpoint_id=cid, _fetch=fetch))
    for channel, version, btype, size, blob in row["blobs"] or ():
        if btype.decode() == "empty":
            continue
        values[channel.decode()] = load(PgStoredValue(tid, ns, channel.decode(), btype.decode(), int(size.decode()),
                                                      None if blob is None else bytes(blob),
                                                      version=version.decode(), _fetch=fetch))
    checkpoint["channel_values"] = values
    writes = []
    order = sorted(row["writes"] or (), key=lambda w: writes_sort_key(w[5].decode(), w[0].decode(), int(w[6])))
    for task_id, channel, wtype, size, blob, _path, idx in order:
        stored = PgStoredValue(tid, ns, channel.decode(), wtype.decode(), int(size.decode()),
                               None if blob is None else bytes(blob), checkpoint_id=cid,
                               task_id=task_id.decode(), idx=int(idx.decode()), _fetch=fetch)
        writes.append((task_id.decode(), stored.channel, load(stored)))
    return CheckpointTuple(
        config=_config(tid, ns, cid),
        checkpoint=checkpoint,  # type: ignore[arg-type]
        metadata=row["metadata"],
        parent_config=_config(tid, ns, parent) if parent else None,
        pending_writes=writes,
    )

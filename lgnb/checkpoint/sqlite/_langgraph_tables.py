"""Threads that LangGraph's own `SqliteSaver` saved in the file, copied into lgnb's tables.

Why: a LangGraph program ports to lgnb by replacing `langgraph` with `lgnb` in its
imports. One that saved its conversations with `langgraph.checkpoint.sqlite.SqliteSaver`
then opens the same file with lgnb's saver, whose tables are its own (`lgnb_*`, see
`_schema`): without this, every thread it had would look gone and its next run would
start the conversation over.

What: when the file has LangGraph's `checkpoints` table, the first read of a thread
(`get_tuple`, `list` naming it; `copy_thread`, `prune`) copies that thread — every
namespace, every checkpoint, the pending writes of each — into lgnb's tables, once:
`lgnb_imported_threads` records it, so a thread deleted or pruned in lgnb afterwards
is not brought back (`delete_thread` records a never-copied thread the same way). A
thread id lgnb's tables already hold is lgnb's own thread: it is never mixed with
LangGraph's thread of the same id, which stays in LangGraph's tables. A copy cut short
(a killed process) is finished by the next read.
`list(None)` and `SqliteSaver.import_langgraph_threads()` copy every thread not yet
copied. LangGraph's tables are only read, never changed: a LangGraph process can go on
using them, and checkpoints it saves to a thread after the copy stay in its tables.
Threads LangGraph creates while this saver is open are seen by the next open (or an
explicit `import_langgraph_threads()`).

How: a value is copied as the bytes LangGraph stored, never decoded, so no class is
revived at import; the allowlist applies when a graph reads the copy, as for any lgnb
row. A msgpack checkpoint is split at its top level only (its extension types — the
stored classes — kept as opaque bytes) and each channel value packed again on its own;
a checkpoint in another format (older LangGraph: JSON) is decoded with the saver's
serializer and stored as a new checkpoint would be. Checkpoints are copied in id order
(a parent before its children), a page at a time, each with `put` and then its pending
writes with their original task, index and path.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import ormsgpack
from langgraph.checkpoint.base import CheckpointMetadata
from langgraph.checkpoint.serde.base import SerializerProtocol

if TYPE_CHECKING:
    from lgnb.checkpoint.sqlite._store import SqliteStore

_NEEDED = {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type",
           "checkpoint", "metadata"}
_THREADS = "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
_HAS_THREAD = "SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1"
_PAGE_SIZE = 32
_PAGE = """
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
FROM checkpoints WHERE thread_id = ? AND (checkpoint_ns, checkpoint_id) > (?, ?)
ORDER BY checkpoint_ns, checkpoint_id LIMIT ?
"""
_NOT_MSGPACK = """
SELECT checkpoint_id, type, checkpoint FROM checkpoints
WHERE thread_id = ? AND type IS NOT 'msgpack'
"""
_WRITES = """
SELECT task_id, {path}, idx, channel, type, value FROM writes
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_id, idx
"""
_MINE = "SELECT checkpoint_ns, checkpoint_id FROM lgnb_checkpoints WHERE thread_id = ?"
_MARK = "SELECT imported_at FROM lgnb_imported_threads WHERE thread_id = ?"
_ALL_DONE = "SELECT thread_id FROM lgnb_imported_threads WHERE imported_at IS NOT NULL"
_LGNB_HAS = "SELECT 1 FROM lgnb_checkpoints WHERE thread_id = ? LIMIT 1"
# imported_at NULL: being copied (a copy cut short is finished by the next read)
_RECORD = "INSERT OR REPLACE INTO lgnb_imported_threads (thread_id, imported_at) VALUES (?, ?)"
_EXT_OPTIONS = ormsgpack.OPT_NON_STR_KEYS


class CopyRefused(ValueError):
    """A thread LangGraph saved in the file cannot be copied into lgnb's tables."""


@dataclass(frozen=True, slots=True)
class Stored:
    """A value as LangGraph's saver serialized it: stored again as these bytes."""

    type: str
    data: bytes | None


class _AsStored:
    """The saver's serializer, except that a `Stored` value is its own serialization."""

    def __init__(self, inner: SerializerProtocol) -> None:
        self.inner = inner

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if type(obj) is Stored:
            return obj.type, obj.data  # type: ignore[return-value]
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)


class LangGraphTables:
    """LangGraph's tables in one file, and which of their threads lgnb has taken in."""

    def __init__(self, has_task_path: bool) -> None:
        self.has_task_path = has_task_path
        self.settled: set[str] = set()  # threads looked at by this saver: copied or not there
        self.all_settled = False
        # one copy at a time in this process: concurrent first reads of a thread wait
        # for the copy instead of each making it again
        self.copying = threading.Lock()

    @classmethod
    def find(cls, conn: sqlite3.Connection) -> LangGraphTables | None:
        """The file's LangGraph tables, or None when it has none (the usual case)."""
        columns = {row[1] for row in conn.execute("PRAGMA table_info(checkpoints)")}
        if not _NEEDED <= columns:
            return None
        writes = {row[1] for row in conn.execute("PRAGMA table_info(writes)")}
        return cls(has_task_path="task_path" in writes)

    def ensure(self, store: SqliteStore, thread_id: str) -> bool:
        """Copy `thread_id` from LangGraph's tables unless it was looked at already;
        True if it was copied now."""
        if thread_id in self.settled:
            return False
        with self.copying:
            if thread_id in self.settled:  # copied while this call waited
                return False
            return self._settle(store, thread_id)

    def _settle(self, store: SqliteStore, thread_id: str) -> bool:
        with store.reading() as conn:
            mark = conn.execute(_MARK, (thread_id,)).fetchone()
            if mark is None:
                theirs = conn.execute(_HAS_THREAD, (thread_id,)).fetchone() is not None
                mine = theirs and conn.execute(_LGNB_HAS, (thread_id,)).fetchone() is not None
        copy = (mark is not None and mark[0] is None) or (mark is None and theirs and not mine)
        if copy:
            self._copy(store, thread_id)
        elif mark is None and theirs:
            # an id lgnb already uses for a thread of its own: never mixed with LangGraph's
            self.forget(store, [thread_id])
        self.settled.add(thread_id)
        return copy

    def ensure_all(self, store: SqliteStore) -> list[str]:
        """Copy every thread not copied yet; return the ones copied now. A thread that
        cannot be copied does not stop the others: once they are copied, the error
        names every such thread and what to do."""
        if self.all_settled:
            return []
        with store.reading() as conn:
            done = {t for (t,) in conn.execute(_ALL_DONE)}
            threads = [t for (t,) in conn.execute(_THREADS) if t not in done]
        copied: list[str] = []
        refused: list[tuple[str, ValueError]] = []
        for thread_id in threads:
            try:
                if self.ensure(store, thread_id):
                    copied.append(thread_id)
            except CopyRefused as exc:
                refused.append((thread_id, exc))
        if refused:
            names = ", ".join(repr(t) for t, _ in refused)
            raise CopyRefused(
                f"{len(refused)} of the threads LangGraph's SqliteSaver saved in this file "
                f"could not be copied into lgnb's tables: {names} ({len(copied)} others were). "
                f"The first: {refused[0][1]} To go on without them, "
                "saver.delete_thread(thread_id) each: lgnb then leaves them in LangGraph's "
                "tables, unchanged."
            ) from refused[0][1]
        self.all_settled = True
        return copied

    def forget(self, store: SqliteStore, thread_ids: Iterable[str]) -> None:
        """Record threads as taken in without copying them (deleted in lgnb first)."""
        threads = [str(t) for t in thread_ids]
        with store.writing() as conn:
            conn.executemany(_RECORD, [(t, time.time()) for t in threads])
        self.settled.update(threads)

    def _copy(self, store: SqliteStore, thread_id: str) -> None:
        copier = store.with_serde(_AsStored(store.serde))
        with store.writing() as conn:
            conn.execute(_RECORD, (thread_id, None))
        with store.reading() as conn:
            have = set(conn.execute(_MINE, (thread_id,)).fetchall())
            odd = conn.execute(_NOT_MSGPACK, (thread_id,)).fetchall()
        # a row that cannot be copied is found before anything is written (only rows
        # not in msgpack are decoded), so the thread is left as it was and the error
        # names the row
        for checkpoint_id, type_, blob in odd:
            _checkpoint(store.serde, type_, blob, _where(thread_id, checkpoint_id))
        versions: dict[tuple[str, str], dict[str, Any]] = {}
        after = ("", "")
        writes_sql = _WRITES.format(path="task_path" if self.has_task_path else "''")
        while True:  # a page at a time: a long thread's rows never all in memory
            with store.reading() as conn:
                rows = conn.execute(_PAGE, (thread_id, *after, _PAGE_SIZE)).fetchall()
                writes = [conn.execute(writes_sql, (thread_id, row[0], row[1])).fetchall()
                          for row in rows]
            if not rows:
                break
            for (ns, checkpoint_id, parent_id, type_, blob, metadata), pending in zip(rows, writes):
                where = _where(thread_id, checkpoint_id)
                checkpoint = _checkpoint(store.serde, type_, blob, where)
                checkpoint["id"] = checkpoint_id
                mine = checkpoint.get("channel_versions") or {}
                before = versions.get((ns, parent_id)) if parent_id else None
                versions[(ns, checkpoint_id)] = mine
                if (ns, checkpoint_id) not in have:
                    configurable = {"thread_id": thread_id, "checkpoint_ns": ns}
                    if parent_id:
                        configurable["checkpoint_id"] = parent_id
                    copier.put({"configurable": configurable}, checkpoint, _metadata(metadata, where),
                               dict(mine) if before is None
                               else {c: v for c, v in mine.items() if before.get(c) != v})
                if pending:
                    copier.put_indexed_writes(thread_id, ns, checkpoint_id, [
                        (task_id, path, idx, channel, Stored(wtype, value))
                        for task_id, path, idx, channel, wtype, value in pending
                    ])
            after = (rows[-1][0], rows[-1][1])
        with store.writing() as conn:
            conn.execute(_RECORD, (thread_id, time.time()))


def _where(thread_id: str, checkpoint_id: str) -> str:
    return f"checkpoint {checkpoint_id!r} of thread {thread_id!r}"


def _checkpoint(serde: SerializerProtocol, type_: str | None, blob: bytes, where: str) -> Any:
    """A LangGraph checkpoint row's dict, channel values left as their stored bytes."""
    if type_ != "msgpack":
        if type_ is None:
            raise CopyRefused(
                f"LangGraph's {where} has no serialization type, so lgnb cannot copy it; "
                "open the file with langgraph.checkpoint.sqlite.SqliteSaver to read it."
            )
        try:
            return serde.loads_typed((type_, blob))
        except Exception as exc:
            raise CopyRefused(
                f"lgnb could not copy LangGraph's {where}, stored as {type_!r}: {exc} "
                "Nothing was copied from that thread. If the message names a class, pass "
                "allow=[...] to lgnb's saver; a pickled value loads only with "
                "allow_unsafe_deserialization=True, for a file no one else can "
                "write to; or read the thread with langgraph.checkpoint.sqlite.SqliteSaver."
            ) from exc
    try:
        top = ormsgpack.unpackb(blob, ext_hook=ormsgpack.Ext, option=_EXT_OPTIONS)
    except ormsgpack.MsgpackDecodeError as exc:
        raise CopyRefused(f"LangGraph's {where} is not valid msgpack: {exc}") from exc
    if not isinstance(top, dict):
        raise CopyRefused(f"LangGraph's {where} is not a checkpoint (a {type(top).__name__}).")
    values = top.get("channel_values") or {}
    top["channel_values"] = {
        channel: Stored("msgpack", ormsgpack.packb(value, option=_EXT_OPTIONS))
        for channel, value in values.items()
    }
    return top


def _metadata(text: bytes | str | None, where: str) -> CheckpointMetadata:
    if text is None:
        return {}
    try:
        loaded = json.loads(text)
    except ValueError as exc:
        raise CopyRefused(f"LangGraph's {where} has metadata that is not JSON: {exc}") from exc
    return cast(CheckpointMetadata, loaded if isinstance(loaded, dict) else {})


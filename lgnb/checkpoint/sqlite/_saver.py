"""`BaseCheckpointSaver` methods, sync and async, over one `SqliteStore`.

Both public savers inherit everything from `SqliteSaverBase`; they differ only in how
`from_conn_string` opens the file (a sync or an async context manager). Async methods
run the store's calls in a worker thread (`asyncio.to_thread`), so the event loop —
a notebook kernel's, typically — never blocks on disk; sync methods call the store
directly and are safe from any thread (the store serializes access with a lock).
"""

from __future__ import annotations

import asyncio
import builtins
import os
import random
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from lgnb.checkpoint.serde import AllowEntry, saver_serializer
from lgnb.checkpoint.sqlite import _schema
from lgnb.checkpoint.sqlite._errors import cannot_open, explain
from lgnb.checkpoint.sqlite._langgraph_tables import LangGraphTables
from lgnb.checkpoint.sqlite._schema import Synchronous
from lgnb.checkpoint.sqlite._store import SqliteStore
from lgnb.checkpoint.sqlite._stored import StoredValue, list_stored

_DONE = object()
# Version suffixes only need to be unique, not secret (os.urandom can be slow).
_random = random.Random()


def open_connection(
    path: str | os.PathLike[str], *, busy_timeout: float
) -> sqlite3.Connection:
    """`sqlite3.connect` with the saver's settings and a clear error on failure."""
    try:
        return _schema.connect(path, busy_timeout=busy_timeout)
    except sqlite3.Error as exc:
        label = os.fspath(path)
        explained = explain(label, exc)
        raise (cannot_open(label, exc) if explained is exc else explained) from exc


class SqliteSaverBase(BaseCheckpointSaver[str]):
    """Checkpoints in a SQLite file, each channel value stored once per version.

    Args:
        conn: an open `sqlite3.Connection`, or a path to open (the saver then owns
            the connection; call `close()` or use `from_conn_string`). A given
            connection is switched to explicit transactions (`isolation_level=None`)
            and WAL mode; open it with `check_same_thread=False` if several threads
            use the saver.
        serde: serializer; defaults to `StrictSerializer` (allowlist, no pickle).
        allow: extra types the default serializer may store and load (your pydantic
            models, dataclasses, enums that the graph's state schema does not name;
            the ones it names are allowed when the graph compiles). Cannot be
            combined with `serde`; use `StrictSerializer(allow=...)` then.
        allow_unsafe_deserialization: `True` loads with LangGraph's
            `JsonPlusSerializer()` instead, which imports and calls whatever a
            stored value names: a crafted file runs code in this process. Only for
            files no one else can write.
        busy_timeout: seconds to wait for another process's write lock.
        synchronous: SQLite `synchronous` level. `"NORMAL"` (default) is durable
            across process crashes (a kernel dying loses nothing committed) and
            avoids an fsync per checkpoint; `"FULL"` also survives power loss.
    """

    lists_lazily = True
    """`list()` releases the connection between the pages it yields, so callers (the
    engine's `get_state_history`) may read it lazily and call the saver meanwhile."""

    interrupt_safe = True
    """A KeyboardInterrupt (a notebook's stop button) in a write rolls it back and leaves
    the connection usable, so the engine need not hold the signal back around writes
    (`lgnb._internal.interrupts`)."""

    def __init__(
        self,
        conn: sqlite3.Connection | str | os.PathLike[str],
        *,
        serde: SerializerProtocol | None = None,
        allow: Iterable[AllowEntry] = (),
        allow_unsafe_deserialization: bool = False,
        busy_timeout: float = 30.0,
        synchronous: Synchronous = "NORMAL",
    ) -> None:
        super().__init__(
            serde=saver_serializer(
                serde=serde,
                allow=allow,
                allow_unsafe_deserialization=allow_unsafe_deserialization,
            )
        )
        self._owns_conn = not isinstance(conn, sqlite3.Connection)
        if self._owns_conn and not isinstance(conn, (str, os.PathLike)):
            raise TypeError(
                f"{type(self).__name__} takes a path or a sqlite3.Connection; got "
                f"{type(conn).__module__}.{type(conn).__name__}. lgnb runs SQLite in a worker "
                "thread itself, so no aiosqlite connection is needed: use "
                f"{type(self).__name__}.from_conn_string(path), or pass the path."
            )
        if self._owns_conn:
            conn = open_connection(conn, busy_timeout=busy_timeout)  # type: ignore[arg-type]
        assert isinstance(conn, sqlite3.Connection)
        try:
            _schema.prepare(conn, busy_timeout=busy_timeout, synchronous=synchronous)
        except BaseException:
            if self._owns_conn:
                conn.close()
            raise
        self.conn = conn
        self.store = SqliteStore(conn, self.serde)
        self.store.langgraph = LangGraphTables.find(conn)

    @property
    def serde(self) -> SerializerProtocol:
        """The serializer. Assigning one takes effect at once (LangGraph's savers allow
        it); `with_allowlist` clones get their own, sharing the connection."""
        return self._serde

    @serde.setter
    def serde(self, value: SerializerProtocol) -> None:
        self._serde = value
        store = self.__dict__.get("store")
        if store is not None and store.serde is not value:
            # a new store object: a shallow clone of this saver keeps the old one
            self.store = store.with_serde(value)

    def close(self) -> None:
        """Commit buffered pending writes; close the connection if this saver opened it."""
        behind = self.store.behind
        try:
            if behind.batches:
                self.store.flush()
        except sqlite3.Error:
            if not behind.failed:  # already reported by the put that could not save
                raise
        finally:
            behind.closed = self._owns_conn
            if self._owns_conn:  # closed even when the last writes could not be saved
                with self.store.lock:
                    self.conn.close()

    # --- versions ---

    def get_next_version(self, current: str | int | float | None, channel: None = None) -> str:
        """`<counter, 10 digits>.<8 random hex>`: ordered by the counter, and unique
        even when two forks of a thread bump the same channel from the same version
        (the blob table is keyed by version, so a collision would share one value).
        Older files hold `<32 digits>.<16 hex>`: those sort below every new version
        (their leading zeros), so a thread continued from one stays ordered."""
        if current is None:
            counter = 0
        elif isinstance(current, str):
            counter = int(current.split(".", 1)[0])
        else:
            counter = int(current)
        return f"{counter + 1:010d}.{_random.getrandbits(32):08x}"

    # --- sync protocol ---

    def thread_leases(self) -> Any:
        """The file's lease table (`SqliteThreadLeases`): which run holds which thread,
        so two runs (in any process sharing the file) never run one thread at once
        (`multitask=`; see `lgnb.pregel._lease`)."""
        from lgnb.checkpoint.sqlite._lease import SqliteThreadLeases

        return SqliteThreadLeases(self.store)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.store.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self.store.list(config, filter=filter, before=before, limit=limit)

    def list_stored(
        self,
        config: RunnableConfig | None,
        *,
        load: Callable[[StoredValue], Any],
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        inline_max: int = 65536,
    ) -> Iterator[CheckpointTuple]:
        """An lgnb extra: `list()` without decoding values. Each channel value and
        pending write is passed to `load` as a `StoredValue` (channel, version or task,
        type, serialized size; its bytes when at most `inline_max`, else `read()` them)
        and what `load` returns stands in the tuple. `lgnb.history` uses it to draw a
        timeline without decoding values it does not show, and to decode each stored
        version once; other savers fall back to `list()`."""
        return list_stored(self.store, config, load=load, filter=filter, before=before,
                           limit=limit, inline_max=inline_max)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.store.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.store.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self.store.delete_thread(thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.store.delete_for_runs(run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.store.copy_thread(source_thread_id, target_thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`"keep_latest"`: keep the newest checkpoint of each namespace (and its
        writes), drop the rest and the values only they used. `"delete"`: drop all."""
        self.store.prune(thread_ids, strategy=strategy)

    def import_langgraph_threads(self) -> builtins.list[str]:
        """Copy every thread that LangGraph's own `SqliteSaver` saved in this file (its
        `checkpoints`/`writes` tables) into lgnb's tables; return the ids copied now.

        Reads do this by themselves, one thread at a time (`get_tuple` on a thread,
        `list()`): a program ported from `langgraph.checkpoint.sqlite` finds its threads
        where they were. Call it to copy them all up front, or to take in threads a
        LangGraph process saved after this saver opened the file. Each thread is copied
        once (a thread deleted in lgnb is not copied back); LangGraph's tables are only
        read. A file without LangGraph's tables copies nothing."""
        store = self.store
        if store.langgraph is None:
            with store.lock:
                store.langgraph = LangGraphTables.find(store.conn)
            if store.langgraph is None:
                return []
        store.langgraph.all_settled = False
        # a thread read while LangGraph had none of that id is settled, unrecorded: look
        # again (the recorded ones are skipped by ensure_all)
        store.langgraph.settled.clear()
        return store.langgraph.ensure_all(store)

    # --- async protocol: the same calls, in a worker thread ---

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.store.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = self.store.list(config, filter=filter, before=before, limit=limit)
        while (item := await asyncio.to_thread(next, items, _DONE)) is not _DONE:
            yield item  # type: ignore[misc]

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(
            self.store.put, config, checkpoint, metadata, new_versions
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        # encoding and buffering (`WriteBehind`) need no I/O: done here unless they must
        # wait (another thread on the connection) or commit (errors, interrupts)
        if (rest := self.store.put_writes_unblocked(config, writes, task_id, task_path)) is not None:
            await asyncio.to_thread(rest)

    async def aimport_langgraph_threads(self) -> builtins.list[str]:
        """`import_langgraph_threads`, in a worker thread."""
        return await asyncio.to_thread(self.import_langgraph_threads)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.store.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.store.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.store.copy_thread, source_thread_id, target_thread_id)

    async def aprune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> None:
        await asyncio.to_thread(self.store.prune, thread_ids, strategy=strategy)

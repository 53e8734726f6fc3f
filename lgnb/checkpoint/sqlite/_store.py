"""The one SQLite core behind `SqliteSaver` and `AsyncSqliteSaver`.

`SqliteStore` owns a `sqlite3.Connection` and a lock and implements every saver
operation synchronously: SQL plus the mapping between rows and `CheckpointTuple`s.
The sync saver calls it directly; the async saver runs the same calls in a worker
thread. There is no second copy of any query.

Concurrency: every operation is one transaction (`put_writes` rows wait for the next
write transaction, normally the step's `put`: see `_behind`). Writes use `BEGIN IMMEDIATE`, so two
processes sharing a file queue on SQLite's busy timeout instead of failing on a lock
upgrade; reads use a deferred transaction, so a checkpoint, its blobs and its writes
are read from one consistent snapshot (WAL mode lets readers and a writer overlap).
"""

from __future__ import annotations

import builtins
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from lgnb.checkpoint.sqlite import _appends, _refs, _sql
from lgnb.checkpoint.sqlite._behind import Batch, WriteBehind, execute
from lgnb.checkpoint.sqlite._errors import CheckpointDatabaseError, abandoned, explain, rollback_quietly
from lgnb.checkpoint.sqlite._langgraph_tables import LangGraphTables  # noqa: TC001
from lgnb.checkpoint.sqlite._schema import INLINE_MAX, database_label

PRUNE_STRATEGIES = ("keep_latest", "delete")

# Values that cannot change in place: one decoded object may stand in several checkpoints.
_SHAREABLE = frozenset({str, int, float, bool, type(None), bytes})

class _Slot:
    """A marker in `_load_page`'s decoded values: no value, or a mutable one handed out."""


_EMPTY = _Slot()
_TAKEN = _Slot()

# How many checkpoints `list()` loads per read transaction: a small first page (the
# first screen of a history), then larger ones.
_FIRST_PAGE = 10
_MAX_PAGE = 64


def _read_values(
    conn: sqlite3.Connection,
    by_ref: Mapping[bytes, Sequence[tuple[tuple[str, Any], str]]],
    group: dict[tuple[str, Any], tuple[str, Any] | None],
    where: tuple[str, str, str],
) -> None:
    """Fill `group` with the large values of `by_ref` (ref -> the pairs holding it).
    A ref with no row (a damaged file) raises, naming the channel (`where`: the file,
    thread and namespace), instead of the channel silently going missing."""
    refs = builtins.list(by_ref)
    found: dict[bytes, bytes] = {}
    for start in range(0, len(refs), _REFS_PER_STATEMENT):
        chunk = refs[start : start + _REFS_PER_STATEMENT]
        found.update(conn.execute(_sql.select_values(len(chunk)), chunk).fetchall())
    for ref, holders in by_ref.items():
        data = found.get(ref)
        for pair, btype in holders:
            if data is None:
                raise _missing_value(*where, f"channel {pair[0]!r} at version {pair[1]!r}")
            group[pair] = (btype, data)


def _missing_value(label: str, thread_id: str, ns: str, what: str) -> CheckpointDatabaseError:
    """The error for a stored value whose bytes are not in the file."""
    return CheckpointDatabaseError(
        f"The saved value of {what} (thread {thread_id!r}, namespace {ns!r}) is missing "
        f"from {label!r}: the file was changed outside lgnb or is damaged. Restore it from "
        "a backup, or delete the thread (saver.delete_thread)."
    )


_REFS_PER_STATEMENT = 500
"""Refs per `IN (...)` list: far below SQLite's limit on bound parameters."""


def version_key(version: str | int | float) -> str:
    """The text a channel version is stored under in `lgnb_blobs.version`."""
    return version if isinstance(version, str) else json.dumps(version)


def _configurable(config: RunnableConfig) -> Mapping[str, Any]:
    configurable = config.get("configurable") or {}
    if configurable.get("thread_id") is None:
        raise ValueError(
            "A checkpoint config needs configurable.thread_id, e.g. "
            '{"configurable": {"thread_id": "1"}}.'
        )
    return configurable


def _metadata_json(metadata: Mapping[str, Any]) -> str:
    try:
        return _refs.compact_json(metadata)
    except (TypeError, ValueError) as exc:
        bad = [
            k for k, v in metadata.items() if not _json_ok(v)
        ] or list(metadata)
        raise TypeError(
            f"Checkpoint metadata must be JSON data; key(s) {bad} are not ({exc}). "
            "Put plain str/int/float/bool/list/dict values in config['metadata']."
        ) from exc


def _json_ok(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


_UNCHANGING = frozenset({str, bytes, int, float, bool, complex, type(None)})

_Encodings = dict[int, tuple[Any, str, "bytes | None", "bytes | None", "bytes | None"]]
"""id(value) -> (value, type, inline bytes, ref, serialized bytes) of written values."""
"""Types whose values cannot change after `put_writes` encoded them."""


def _place(type_: str, data: bytes | None, large: list[tuple[bytes, bytes]], *,
           serialized_as: str | None = None) -> tuple[str, bytes | None, bytes | None]:
    """`(type, inline bytes, ref)`: bytes over `INLINE_MAX` go to `large`, keyed by their
    hash and their serialization (`serialized_as`, when `type_` is not it): the tail of an
    append is stored once with the pending write that returned the same list."""
    if data is None or len(data) <= INLINE_MAX:
        return type_, data, None
    person = (serialized_as or type_).encode()[:16]
    ref = hashlib.blake2b(data, digest_size=16, person=person).digest()
    large.append((ref, data))
    return type_, None, ref


@dataclass(slots=True)
class _EncodedWrites:
    """Pending writes as rows to store: `batches`; `special` if they hold errors or
    interrupts (committed at once); `remember`, the encodings a `put` may reuse."""

    batches: list[Batch]
    special: bool
    remember: _Encodings


@dataclass
class _ListSaved:
    """A list channel's value as `put` stores it: appended to `base` (depth appends
    since it was stored whole) or whole (`base` None); `size` its whole serialized size."""

    value: list[Any]
    depth: int
    size: int
    base: str | None
    snap: _appends.Snapshot | None
    """Its items as they were serialized (`_grown.Snapshot`); None: only its size is
    remembered (the next version is snapshotted, after `wait` more)."""
    misses: int = 0
    wait: int = 0


class SqliteStore:
    """All checkpoint operations over one SQLite connection (see module doc)."""

    def __init__(
        self, conn: sqlite3.Connection, serde: SerializerProtocol, *, label: str | None = None
    ) -> None:
        self.conn = conn
        self.serde = serde
        self.lock = threading.Lock()
        self.behind = WriteBehind(conn, self.lock)
        # id(value) -> (value, type, inline bytes, ref, data) of the immutable values
        # put_writes encoded since the last put: a node's output is usually the
        # channel's next value, serialized and hashed once for both. A mutable one (a
        # list, a message) may change between the two — a reducer gives a message its
        # id in place, a sibling appends to a list — so the checkpoint encodes it again.
        # Published only once their rows are buffered (`_buffer`): a checkpoint that
        # reuses a large value's ref must commit with or after the row that stores it.
        self._encoded: _Encodings = {}
        # channel versions are stored as deltas on the checkpoint saved last (_refs)
        self.refs = _refs.RefsEncoder()
        # lists that only grew are stored as what they appended (_appends)
        self.appends = _appends.Appends()
        # the file, named by errors (a failing connection may not say it any more)
        self.label = database_label(conn) if label is None else label
        # threads LangGraph's own SqliteSaver saved in this file, copied in on first
        # read; set by the saver that opens the file (`LangGraphTables.find`)
        self.langgraph: LangGraphTables | None = None

    def with_serde(self, serde: SerializerProtocol) -> SqliteStore:
        """A store on the same connection (and lock) with another serializer."""
        clone = SqliteStore(self.conn, serde, label=self.label)
        clone.lock = self.lock
        clone.behind = self.behind
        clone.refs = self.refs
        clone.appends = self.appends
        clone.langgraph = self.langgraph
        return clone

    # --- transactions ---

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        """One transaction under the lock: the choke point every operation goes
        through, where SQLite's errors become ones naming the file and the fix."""
        writing = begin != "BEGIN"
        with self.lock:
            try:
                abandoned(self.conn)
                buffered: list[Any] = []
                try:
                    self.conn.execute(begin)  # in the try: an interrupt right after it rolls back
                    buffered = self.behind.take() if writing else []
                    if buffered:
                        execute(self.conn, buffered)
                    yield self.conn
                    self.conn.execute("COMMIT")
                except BaseException:
                    rollback_quietly(self.conn)
                    self.behind.restore(buffered)
                    raise
            except sqlite3.Error as exc:
                explained = explain(self.label, exc)
                if explained is exc:
                    raise
                raise explained from exc

    def reading(self) -> Any:
        if self.behind.batches:  # readers see every write that can be saved
            try:
                self.flush()
            except sqlite3.Error:  # (disk full, ...) raised by the write that needs it
                pass
        return self._transaction("BEGIN")

    def flush(self) -> None:
        """Commit buffered pending writes now."""
        with self._transaction("BEGIN IMMEDIATE"):
            pass

    def writing(self) -> Any:
        return self._transaction("BEGIN IMMEDIATE")

    # --- rows <-> tuples ---

    def _encode(
        self, value: Any, large: list[tuple[bytes, bytes]], *, remember: _Encodings | None = None
    ) -> tuple[str, bytes | None, bytes | None]:
        """`(type, inline bytes, ref)` for a value; large bytes go to `large` by hash.

        `remember` (put_writes) gets the encoding of an immutable value; published to
        `_encoded` with the rows that store it (`_buffer`), the next `put` reuses it when
        the same object is a channel's new value."""
        type_, data = self.serde.dumps_typed(value)
        placed = _place(type_, data, large)
        if remember is not None and type(value) in _UNCHANGING:
            remember[id(value)] = (value, *placed, data)
        return placed

    def _encode_list(
        self, key: tuple[str, str, str], value: builtins.list[Any], large: builtins.list[tuple[bytes, bytes]]
    ) -> tuple[tuple[str, bytes | None, bytes | None], _ListSaved | None]:
        """A list channel's blob: what it appended to the list saved last for `key` when
        it only grew (`_appends`), else the whole list; and what to remember of it.

        Everything comes from one copy of the list taken first, so the bytes stored and
        the items remembered agree even if the list changes while a save is under way."""
        items = builtins.list(value)
        if not _appends.joinable(self.serde):
            return _place(*self.serde.dumps_typed(items), large), None
        plan = self.appends.decide(key, items)
        if isinstance(plan, _appends.Join):
            base = plan.saved
            ttype, tdata = self.serde.dumps_typed(plan.tail)
            if ttype == _appends.ROOT_TYPE and _appends.lists_of(tdata, len(plan.tail)):
                size = _appends.grown_size(base.size, len(base.items), tdata)
                placed = _place(_appends.stored_type(size, base.info.version), tdata, large,  # type: ignore[union-attr]
                                serialized_as=ttype)
                return placed, _ListSaved(items, base.info.depth + 1, size, base.info.version,  # type: ignore[union-attr]
                                          _appends.checked(plan, (ttype, tdata), self.serde))
            plan = _appends.Whole(None)
        type_, data = self.serde.dumps_typed(items)
        if type_ != _appends.ROOT_TYPE or len(data) < _appends.MIN_BYTES or not _appends.lists_of(data, len(items)):
            return _place(type_, data, large), None
        saved = _ListSaved(items, 0, len(data), None, _appends.checked(plan, (type_, data), self.serde),
                           plan.misses, plan.wait)
        return _place(type_, data, large), saved

    def _decode_group(self, group: dict[tuple[str, Any], tuple[str, Any] | None]) -> dict[tuple[str, Any], Any]:
        loads = self.serde.loads_typed
        return {
            pair: _EMPTY if hit is None or hit[0] == "empty" else loads(hit)
            for pair, hit in group.items()
        }

    def _compose_appends(self, conn: sqlite3.Connection, thread_id: str, ns: str,
                         group: dict[tuple[str, Any], tuple[str, Any] | None],
                         lists: dict[tuple[str, Any], tuple[int, int, bytes]] | None) -> None:
        """Replace each stored append in `group` by the whole value's bytes (`_appends`);
        `lists` (if given) gets each msgpack value's (appends since stored whole, size, bytes)."""
        prefix = _appends.PREFIX
        for pair, hit in group.items():
            if hit is None:
                continue
            if hit[0].startswith(prefix):
                parts = _appends.parts_of(conn, self.label, thread_id, ns, pair[0], hit[0], hit[1])
                group[pair] = hit = (_appends.ROOT_TYPE, _appends.compose(parts))
                depth = len(parts) - 1
            else:
                depth = 0
            if lists is not None and hit[0] == _appends.ROOT_TYPE and hit[1]:
                lists[pair] = (depth, len(hit[1]), hit[1])

    def _remember_lists(self, found: CheckpointTuple, lists: dict[tuple[str, Any], tuple[int, int, bytes]]) -> None:
        """Remember the lists a run starts from (`get_tuple`): the run's first checkpoint
        then stores what it appended to them, not the whole conversation again."""
        if not _appends.joinable(self.serde):
            return
        configurable = found.config["configurable"]
        versions = found.checkpoint["channel_versions"]
        for channel, value in found.checkpoint["channel_values"].items():
            if (value.__class__ is list and (known := lists.get((channel, versions.get(channel))))
                    and known[1] >= _appends.MIN_BYTES and _appends.lists_of(known[2], len(value))
                    and (snap := _appends.read_snapshot(value, self.serde, known[2])) is not None):
                # decoded just now: nobody else holds its items yet (`read_snapshot`: and
                # they serialize again to the bytes they were read from)
                self.appends.remember(
                    (configurable["thread_id"], configurable["checkpoint_ns"], channel),
                    builtins.list(value), snap, _appends.Link(version_key(versions[channel]), known[0]),
                    size=known[1],
                )

    def _load_page(
        self, conn: sqlite3.Connection, rows: Sequence[Sequence[Any]],
        lists: dict[tuple[str, Any], tuple[int, int, bytes]] | None = None,
    ) -> builtins.list[CheckpointTuple]:
        """The tuples of resolved checkpoint rows (`_refs.resolve_rows`).

        Consecutive checkpoints share most channel versions, so a page's blobs are
        read in one statement for the distinct versions of all its rows (a range of
        rows each: `_sql.SELECT_BLOBS_OF_VERSIONS`), its large values in one more, and
        an immutable value (str, number, bool, None, bytes) is decoded once
        and shared by the checkpoints that hold it; any other value is decoded once per
        checkpoint, so no two tuples share an object that could be changed in place."""
        # per (thread, ns): the blobs of the distinct (channel, version) pairs, keyed by
        # the pair as the map holds it (a version need not be a str)
        stored: dict[tuple[str, str], dict[tuple[str, Any], tuple[str, Any] | None]] = {}
        for row in rows:
            stored.setdefault((row[0], row[1]), {}).update(dict.fromkeys(row[7].items()))
        for (thread_id, ns), group in stored.items():
            texts = {(c, v if v.__class__ is str else version_key(v)): (c, v) for c, v in group}
            by_ref: dict[bytes, builtins.list[tuple[tuple[str, Any], str]]] = {}
            versions = json.dumps(builtins.list({text for _, text in texts}))
            for channel, version, btype, bblob, bref in conn.execute(
                _sql.SELECT_BLOBS_OF_VERSIONS, (versions, thread_id, ns)
            ):
                pair = texts.get((channel, version))
                if pair is None:  # written in the same step, not named by this page
                    continue
                if bblob is None and bref is not None:
                    by_ref.setdefault(bref, []).append((pair, btype))
                else:
                    group[pair] = (btype, bblob)
            if by_ref:
                _read_values(conn, by_ref, group, (self.label, thread_id, ns))
            self._compose_appends(conn, thread_id, ns, group, lists)
        # each pair's value decoded once; a mutable one is given to the first checkpoint
        # that holds it and decoded again for any other (its slot then says so)
        decoded = {key: self._decode_group(group) for key, group in stored.items()}
        loads = self.serde.loads_typed
        page = []
        for row in rows:
            thread_id, ns, checkpoint_id, parent_id, type_, blob, metadata, versions = row
            checkpoint: Checkpoint = load_checkpoint(self.serde, type_, blob, versions, checkpoint_id)
            group = stored[(thread_id, ns)]
            slots = decoded[(thread_id, ns)]
            values: dict[str, Any] = {}
            for pair in versions.items():
                value = slots[pair]
                if value.__class__ is _Slot:
                    if value is _EMPTY:
                        continue
                    value = loads(cast("tuple[str, bytes]", group[pair]))  # mutable, taken: a copy
                elif value.__class__ not in _SHAREABLE:
                    slots[pair] = _TAKEN
                values[pair[0]] = value
            checkpoint["channel_values"] = values
            writes = []
            for task_id, channel, wtype, wblob in conn.execute(
                _sql.SELECT_WRITES, (thread_id, ns, checkpoint_id)
            ):
                if wblob is None and wtype != "null":
                    raise _missing_value(self.label, thread_id, ns,
                                         f"task {task_id!r}'s write to {channel!r}")
                writes.append((task_id, channel, loads((wtype, wblob))))
            page.append(CheckpointTuple(
                config=_config(thread_id, ns, checkpoint_id),
                checkpoint=checkpoint,
                metadata=json.loads(metadata),
                parent_config=_config(thread_id, ns, parent_id) if parent_id else None,
                pending_writes=writes,
            ))
        return page

    # --- reads ---

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = _configurable(config)
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "") or ""
        checkpoint_id = get_checkpoint_id(config)
        if self.langgraph is not None:
            self.langgraph.ensure(self, thread_id)
        with self.reading() as conn:
            if checkpoint_id:
                row = conn.execute(_sql.SELECT_ONE, (thread_id, ns, checkpoint_id)).fetchone()
            else:
                row = conn.execute(_sql.SELECT_LATEST, (thread_id, ns)).fetchone()
            if row is None:
                return None
            lists: dict[tuple[str, Any], tuple[int, int, bytes]] = {}
            found = self._load_page(conn, _refs.resolve_rows(conn, [row], self.refs.known()), lists)[0]
        if lists:
            self._remember_lists(found, lists)
        # asked for a checkpoint id, LangGraph's savers (SQLite's, in-memory) return the
        # config they were asked with: `get_state(old_config).config` keeps its other keys
        return found._replace(config=config) if checkpoint_id else found

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoints, newest first; read a page at a time (the first one
        small, so a history's first screen costs the same at any length), the lock
        released between pages so the caller may write while iterating."""
        for rows in self.checkpoint_rows(config, filter=filter, before=before, limit=limit):
            with self.reading() as conn:
                page = self._load_page(conn, _refs.resolve_rows(conn, rows, self.refs.known()))
            yield from page

    def checkpoint_rows(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[builtins.list[Sequence[Any]]]:  # `list` here is the method
        """The `lgnb_checkpoints` rows of `list()`, in pages: each page one indexed
        query that resumes after the last row of the previous one (never all rows)."""
        if self.langgraph is not None:
            thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
            if thread_id is None:
                self.langgraph.ensure_all(self)
            else:
                self.langgraph.ensure(self, str(thread_id))
        before_id = get_checkpoint_id(before) if before else None
        config = self._with_only_namespace(config)
        # a negative limit is none, as in SQL (`LIMIT -1`) and LangGraph's SqliteSaver
        left = None if limit is None or int(limit) < 0 else int(limit)
        size = _FIRST_PAGE if left is None else min(_FIRST_PAGE, left)
        after: tuple[str, str, str] | None = None
        while left is None or left > 0:
            sql, params, leftover = _sql.build_list_query(
                config, filter=filter, before_id=before_id, limit=max(size, 1), after=after
            )
            with self.reading() as conn:
                rows = conn.execute(sql, params).fetchall()
            if not rows:
                return
            last = rows[-1]
            after = (last[2], last[0], last[1])
            if leftover:
                rows = [r for r in rows if _sql.metadata_matches(json.loads(r[6]), leftover)]
            if left is not None:
                rows = rows[:left]
                left -= len(rows)
            if rows:
                yield rows
            if len(rows) < size and not leftover:
                return
            size = min(size * 2, _MAX_PAGE)

    def _with_only_namespace(self, config: RunnableConfig | None) -> RunnableConfig | None:
        """`config` with `checkpoint_ns` set when it names a thread but no namespace and
        the thread has one namespace: then list()'s order is the primary key's and no
        page sorts the whole thread."""
        configurable = (config or {}).get("configurable") or {}
        if configurable.get("thread_id") is None or configurable.get("checkpoint_ns") is not None:
            return config
        thread_id = str(configurable["thread_id"])
        with self.reading() as conn:
            first = conn.execute(_sql.FIRST_NAMESPACE, (thread_id,)).fetchone()
            if first is None or conn.execute(
                _sql.NEXT_NAMESPACE, (thread_id, first[0])
            ).fetchone() is not None:
                return config
        narrowed: dict[str, Any] = dict(config or {})
        narrowed["configurable"] = {**configurable, "checkpoint_ns": first[0]}
        return cast(RunnableConfig, narrowed)

    # --- writes ---

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = _configurable(config)
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "") or ""
        parent_id = configurable.get("checkpoint_id")
        # channel_versions are stored once, as blob_refs, and the id once, as the
        # row's key (see load_checkpoint)
        stored = {
            k: v
            for k, v in checkpoint.items()
            if k not in ("channel_values", "channel_versions", "id")
        }
        values = checkpoint["channel_values"]
        blobs: builtins.list[tuple[Any, ...]] = []
        large: list[tuple[bytes, bytes]] = []
        lists: list[tuple[int, tuple[str, str, str], str, _ListSaved | None]] = []
        encoded, self._encoded = self._encoded, {}
        for channel, version in new_versions.items():
            text = version_key(version)
            if channel not in values:
                btype, bblob, bref = "empty", None, None
            elif (hit := encoded.get(id(values[channel]))) and hit[0] is values[channel]:
                # a pending write's value: its bytes are queued (or stored) with the write,
                # committed before or with this checkpoint
                _value, btype, bblob, bref, _data = hit
            elif values[channel].__class__ is list:
                list_key = (thread_id, ns, channel)
                (btype, bblob, bref), saved = self._encode_list(list_key, values[channel], large)
                lists.append((len(blobs), list_key, text, saved))
            else:
                btype, bblob, bref = self._encode(values[channel], large)
            blobs.append((thread_id, ns, channel, text, btype, bblob, bref))
        key = (thread_id, ns, checkpoint["id"])
        refs, refs_base, memo = self.refs.encode(
            key, parent_id, checkpoint["channel_versions"], new_versions
        )
        ctype, cblob = self.serde.dumps_typed(stored)
        # all of it, a `writes` key too, as langgraph.checkpoint.sqlite keeps it
        meta = get_checkpoint_metadata(config, metadata)
        run_id = meta.get("run_id")
        row = (
            thread_id,
            ns,
            checkpoint["id"],
            parent_id,
            ctype,
            cblob,
            _metadata_json(meta),
            refs,
            refs_base,
            None if run_id is None else str(run_id),
        )
        with self.writing() as conn:
            if refs_base is not None and not _refs.base_exists(conn, key, refs_base):
                # deleted since it was saved (a prune from another process): full map
                refs, refs_base, memo = _refs.full(key, checkpoint["channel_versions"])
                row = (*row[:7], refs, None, row[9])
            lists = self._bases_checked(conn, lists, blobs, values, large)
            if large:
                conn.executemany(_sql.INSERT_VALUE, large)
            if blobs:
                conn.executemany(_sql.INSERT_BLOB, blobs)
            if conn.execute(_sql.INSERT_CHECKPOINT, row).rowcount == 0:
                # saved before: the rows based on it keep their versions, then it changes
                _refs.materialize_based_on(conn, key)
                conn.execute(_sql.UPSERT_CHECKPOINT, row)
        self.refs.saved(memo)
        for _at, list_key, text, saved in lists:
            if saved is None:
                self.appends.drop(list_key)
            else:
                self.appends.remember(list_key, saved.value, saved.snap,
                                      _appends.Link(text, saved.depth) if saved.snap is not None else None,
                                      size=saved.size, misses=saved.misses, wait=saved.wait)
        return _config(thread_id, ns, checkpoint["id"])

    def _bases_checked(
        self, conn: sqlite3.Connection, lists: builtins.list[tuple[int, tuple[str, str, str], str, _ListSaved | None]],
        blobs: builtins.list[tuple[Any, ...]], values: Mapping[str, Any], large: builtins.list[tuple[bytes, bytes]],
    ) -> builtins.list[tuple[int, tuple[str, str, str], str, _ListSaved | None]]:
        """`lists` after checking (in the write transaction) that each append's base is
        still stored: one deleted since (a prune from another process) is stored whole."""
        checked = []
        for at, list_key, text, saved in lists:
            if saved is not None and saved.base is not None and conn.execute(
                _appends.BASE_EXISTS, (list_key[0], list_key[1], saved.base, list_key[2])
            ).fetchone() is None:
                self.appends.drop(list_key)
                (btype, bblob, bref), saved = self._encode_list(list_key, values[list_key[2]], large)
                blobs[at] = (*blobs[at][:4], btype, bblob, bref)
            checked.append((at, list_key, text, saved))
        return checked

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        configurable = _configurable(config)
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "") or ""
        checkpoint_id = configurable.get("checkpoint_id")
        if not checkpoint_id:
            raise ValueError(
                "put_writes needs configurable.checkpoint_id: pass the config "
                "returned by put()."
            )
        self.put_indexed_writes(thread_id, ns, checkpoint_id, [
            (task_id, task_path, WRITES_IDX_MAP.get(channel, i), channel, value)
            for i, (channel, value) in enumerate(writes)
        ])

    def put_indexed_writes(
        self,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        writes: Sequence[tuple[str, str, int, str, Any]],
    ) -> None:
        """`put_writes` of `(task_id, task_path, idx, channel, value)` rows, each at its
        own index (copied threads keep LangGraph's, `_langgraph_tables`)."""
        self.buffer_writes(self.encode_writes(thread_id, ns, checkpoint_id, writes))

    def put_writes_unblocked(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                             task_id: str, task_path: str = "") -> Any:
        """`put_writes` as far as it goes without waiting: the rows are encoded here and,
        when they are regular writes (buffered, not committed now) and no other thread
        holds the connection, buffered too; returns None then. Otherwise returns what is
        left, a call (no arguments) that buffers and commits them, for a worker thread:
        `AsyncSqliteSaver.aput_writes` saves a task's writes without a thread hop."""
        configurable = _configurable(config)
        checkpoint_id = configurable.get("checkpoint_id")
        if not checkpoint_id:
            return lambda: self.put_writes(config, writes, task_id, task_path)
        encoded = self.encode_writes(
            str(configurable["thread_id"]), configurable.get("checkpoint_ns", "") or "", checkpoint_id,
            [(task_id, task_path, WRITES_IDX_MAP.get(channel, i), channel, value)
             for i, (channel, value) in enumerate(writes)])
        if not encoded.batches:
            return None
        if not encoded.special and self.lock.acquire(blocking=False):
            try:
                self._buffer(encoded)
            finally:
                self.lock.release()
            return None
        return lambda: self.buffer_writes(encoded)

    def encode_writes(self, thread_id: str, ns: str, checkpoint_id: str,
                      writes: Sequence[tuple[str, str, int, str, Any]]) -> _EncodedWrites:
        """The statement batches that store `writes` (`put_indexed_writes`)."""
        special: list[tuple[Any, ...]] = []
        regular: list[tuple[Any, ...]] = []
        large: list[tuple[bytes, bytes]] = []
        remember: _Encodings = {}
        for task_id, task_path, idx, channel, value in writes:
            is_special = channel in WRITES_IDX_MAP
            wtype, wblob, wref = self._encode(value, large, remember=None if is_special else remember)
            row = (thread_id, ns, checkpoint_id, task_id, idx, channel, wtype, wblob, wref, task_path)
            (special if is_special else regular).append(row)
        batches: list[tuple[str, list[tuple[Any, ...]]]] = []
        if large:
            batches.append((_sql.INSERT_VALUE, large))
        if special:
            batches.append((_sql.REPLACE_WRITE, special))
        if regular:
            batches.append((_sql.INSERT_WRITE, regular))
        return _EncodedWrites(batches, bool(special), remember)

    def buffer_writes(self, encoded: _EncodedWrites) -> None:
        """Leave encoded writes to the next write transaction (`WriteBehind`), or commit
        them now when they hold special writes."""
        if not encoded.batches:
            return
        with self.lock:
            self._buffer(encoded)
        if encoded.special:  # errors and interrupts: on disk now, for whoever resumes
            self.flush()

    def _buffer(self, encoded: _EncodedWrites) -> None:
        """(locked) Buffer the rows, then offer their encodings to the next `put`: a
        checkpoint reusing a large value's ref then commits with or after the row that
        stores the value. Offered before, a `put` on another thread (LangGraph's engine
        saves in a pool) could commit the ref alone, and readers of the file, or a
        process killed then, saw a value that was not there."""
        self.behind.add(encoded.batches)
        self._encoded.update(encoded.remember)

    # --- maintenance ---

    def delete_thread(self, thread_id: str) -> None:
        if self.langgraph is not None:  # not brought back from LangGraph's tables later
            self.langgraph.forget(self, [str(thread_id)])
        self.refs.forget()
        self.appends.forget()
        with self.writing() as conn:
            candidates = _refs_of(conn, [str(thread_id)])
            for statement in _sql.DELETE_THREAD:
                conn.execute(statement, (str(thread_id),))
            _collect_values(conn, candidates)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        ids = [str(r) for r in run_ids]
        if not ids:
            return
        marks = _sql.placeholders(len(ids))
        self.refs.forget()
        self.appends.forget()
        with self.writing() as conn:
            threads = [
                t for (t,) in conn.execute(_sql.THREADS_OF_RUNS.format(marks), ids)
            ]
            _refs.materialize(conn, conn.execute(_sql.ORPHANED_BY_RUNS.format(marks), ids + ids))
            candidates = _refs_of(conn, threads)
            for statement in _sql.DELETE_RUNS:
                conn.execute(statement.format(marks), ids)
            for thread_id in threads:
                conn.execute(_sql.COLLECT_BLOBS, (thread_id, thread_id))
            _collect_values(conn, candidates)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        if self.langgraph is not None:
            self.langgraph.ensure(self, str(source_thread_id))
            self.langgraph.ensure(self, str(target_thread_id))
        self.refs.forget()  # the target's rows may have been replaced
        self.appends.forget()
        with self.writing() as conn:
            for statement in _sql.COPY_THREAD:
                conn.execute(statement, (str(target_thread_id), str(source_thread_id)))

    def prune(self, thread_ids: Sequence[str], *, strategy: str) -> None:
        if strategy not in PRUNE_STRATEGIES:
            raise ValueError(
                f"Unknown prune strategy {strategy!r}; use one of {PRUNE_STRATEGIES}."
            )
        threads = [str(t) for t in thread_ids]
        if self.langgraph is not None:
            for thread_id in threads:
                self.langgraph.ensure(self, thread_id)
        self.refs.forget()
        self.appends.forget()
        with self.writing() as conn:
            if strategy == "keep_latest" and threads:
                marks = ", ".join("?" * len(threads))
                if delta := [r[0] for r in conn.execute(_sql.DELTA_THREADS.format(marks), threads)]:
                    raise NotImplementedError(
                        f"keep_latest can't prune threads that use a DeltaChannel: {', '.join(delta)} "
                        "(their latest state is rebuilt from the writes of earlier checkpoints, "
                        "which keep_latest deletes). Nothing was pruned: prune the other threads, "
                        "or delete these with strategy='delete'."
                    )
            candidates = _refs_of(conn, threads)
            for thread_id in threads:
                if strategy == "delete":
                    for statement in _sql.DELETE_THREAD:
                        conn.execute(statement, (thread_id,))
                    continue
                _refs.materialize(conn, conn.execute(_sql.LATEST_DELTAS, (thread_id,)).fetchall())
                for statement in _sql.PRUNE_KEEP_LATEST:
                    conn.execute(statement, (thread_id, thread_id))
                conn.execute(_sql.UNLINK_DELETED_PARENTS, (thread_id,))
                conn.execute(_sql.COLLECT_BLOBS, (thread_id, thread_id))
            _collect_values(conn, candidates)


def load_checkpoint(
    serde: SerializerProtocol, type_: str, blob: bytes, versions: dict[str, Any], checkpoint_id: str
) -> Checkpoint:
    """The checkpoint of a row, without channel values. Since schema 3 its
    `channel_versions` are only in `blob_refs`, since schema 4 its `id` only in the
    `checkpoint_id` column; rows of older files still carry them."""
    stored: dict[str, Any] = serde.loads_typed((type_, blob))
    # keys in the order LangGraph's savers give them (`create_checkpoint`'s), as users
    # print them: v, ts, id, channel_values (filled by the caller), channel_versions,
    # versions_seen, then the rest
    checkpoint: Any = {"v": stored.get("v"), "ts": stored.get("ts"), "id": stored.get("id", checkpoint_id),
                       "channel_values": {},
                       "channel_versions": stored.get("channel_versions", None) or dict(versions)}
    if "versions_seen" in stored:
        checkpoint["versions_seen"] = stored["versions_seen"]
    for key, value in stored.items():
        if key not in checkpoint:
            checkpoint[key] = value
    return checkpoint


def _collect_values(conn: sqlite3.Connection, candidates: list[tuple[bytes]]) -> None:
    """Delete the candidate large values nothing refers to any more."""
    if not candidates:
        return
    for statement in _sql.CANDIDATES:
        conn.execute(statement)
    conn.executemany(_sql.INSERT_CANDIDATE, candidates)
    conn.execute(_sql.COLLECT_VALUES)
    conn.execute(_sql.CANDIDATES[1])


def _refs_of(conn: sqlite3.Connection, threads: Sequence[str]) -> list[tuple[bytes]]:
    """Large-value refs used by these threads (checked for collection after deletes)."""
    refs: set[bytes] = set()
    for thread_id in threads:
        refs.update(r for (r,) in conn.execute(_sql.REFS_OF_THREAD, (thread_id, thread_id)))
    return [(r,) for r in refs]


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }

"""Opening a checkpoint database: connection settings, tables, clear open errors.

The tables are prefixed `lgnb_` so a file can be shared with LangGraph's own
`SqliteSaver` (whose tables are `checkpoints`/`writes`) without either confusing
the other.

* `lgnb_checkpoints` — one row per checkpoint, *without* channel values. It keeps
  metadata as JSON (so `list(filter=...)` runs in SQL), the run id (for
  `delete_for_runs`) and `blob_refs`, the JSON map channel -> version the checkpoint
  reads its values from (so unreferenced blobs can be collected in SQL). Since schema 3
  `blob_refs` is also where the checkpoint's `channel_versions` live: the serialized
  `checkpoint` omits them, so each version is stored once per checkpoint (and versions
  are 19 characters, `<counter, 10 digits>.<8 hex>`, not 49). Since schema 4 a row's
  `blob_refs` may hold only what changed since the checkpoint named in `refs_base`
  (its parent), at most 64 rows to a full map (`_refs`), and the serialized
  `checkpoint` omits its `id` (the row's key).
* `lgnb_blobs` — each channel value once per (thread, namespace, channel, version).
  Since schema 6 a list that only grew may be stored as what it appended to an earlier
  version of the same channel (`type` `lgnb-append:<size>:<base version>`, `_appends`).
* `lgnb_writes` — pending writes of tasks, per checkpoint.
* `lgnb_values` — serialized values over `INLINE_MAX` bytes, stored once by content
  hash and referenced (`ref`) from blobs and writes. A node's output is both a
  pending write and, at the next checkpoint, a channel blob: with this table its bytes
  hit the disk once. Tiny values stay inline (`blob`): a 16-byte ref would not save.
* `lgnb_thread_leases` (schema 2) — one row per thread a run is running on: the owner
  (`run_id`, `host`, `pid`), `acquired_at` and `expires_at` (epoch seconds; the run's
  heartbeat renews it), and `cancel_requested` (set by a run of another process that
  interrupts it). One run per thread, across processes: see `lgnb.pregel._lease`.
* `lgnb_imported_threads` — the threads of LangGraph's own tables in the same file
  (`checkpoints`/`writes`) that were copied into these, or never will be (deleted
  here first, or an id lgnb already used), so each is copied once; `imported_at` is
  NULL while a copy is under way. See `_langgraph_tables`. Added without a schema
  version: an older lgnb ignores it.

Layout for speed (schema 3): a step's commit writes every B-tree page it touched, so
blobs and writes are `WITHOUT ROWID` (the primary key *is* the table: one
tree, not a table plus its key index) and there are no secondary indexes; the
maintenance queries that used them (`delete_for_runs`, collecting unused values) scan
instead. `lgnb_checkpoints` stays a rowid table: its 1-2 KB rows (schema 3) spilled into
half-empty overflow pages in a `WITHOUT ROWID` tree (2.3× the pages); with schema 4's
deltas (~420 B rows) the pages are the same, but a step still cost more (147–153 against
133–147 µs, `bench/saver_scale.py`, 2026-12-03).
Schema 4 keys blobs by `(thread, namespace, version, channel)`: the channels a step
writes share its version, so a step's new blobs are one run of rows in one leaf (keyed
channel first they were one leaf per channel; per checkpoint, COMMIT went 170 → 141 µs).
Schema 5 makes `lgnb_values` a rowid table with a `UNIQUE` index on `ref`: keyed by
content hash, each new value landed on a random leaf of a tree of ~1 KB rows, three to a
page, and split it (a three-sibling rebalance) every other step — 3.7 of a step's ~10 WAL
pages. A rowid table appends (SQLite's quick balance: one new page) and the hash lands in
an index of 20-byte rows that rarely splits: a step's statements replayed in SQL alone
went 101–136 → 80–83 µs, and the file after 1,000 steps of one 1 KB value 2,344 →
2,184 KB (`bench/saver_scale.py`).

Migrations: the tables are created with `IF NOT EXISTS` at every open, so a file of an
older schema gets the new ones, then its `lgnb_schema` version is raised.
1 → 2 adds `lgnb_thread_leases`. 2 → 3 rebuilds the four data tables (rows
copied as they are, into the layout above; the old secondary indexes dropped) and changes what new rows
hold (checkpoints without
`channel_versions`, whose `blob_refs` values are the versions themselves; values over
64 bytes in `lgnb_values`); rows of older files are read as they are, nothing is
rewritten, and an lgnb of schema 2 refuses a file of schema 3 instead of misreading
it. 3 → 4 adds the `refs_base` column (NULL on every old row: their maps are full;
new rows may be deltas, so an lgnb of schema 3 refuses the file) and rebuilds
`lgnb_blobs` with its new key (rows copied as they are). 4 → 5 rebuilds
`lgnb_values` as a rowid table (rows copied, each given an id). 5 → 6 changes no
table: a blob may now be an append to an earlier version of its list (`_appends`), which
an lgnb of schema 5 would misread, so it refuses the file. A file of a newer
schema than this lgnb's is refused.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Literal

from lgnb.checkpoint.sqlite._errors import (
    CheckpointDatabaseError,
    explain,
    rollback_quietly,
)

SCHEMA_VERSION = 6

INLINE_MAX = 64
"""Serialized values up to this many bytes are stored inline, larger ones in lgnb_values."""

Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]

_DDL = """
CREATE TABLE IF NOT EXISTS lgnb_schema (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lgnb_checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    run_id TEXT,
    type TEXT NOT NULL,
    checkpoint BLOB NOT NULL,
    metadata TEXT NOT NULL,
    blob_refs TEXT NOT NULL,
    refs_base TEXT,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS lgnb_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BLOB,
    ref BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, version, channel)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lgnb_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BLOB,
    ref BLOB,
    task_path TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lgnb_values (
    id INTEGER PRIMARY KEY,
    ref BLOB NOT NULL UNIQUE,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS lgnb_imported_threads (
    thread_id TEXT PRIMARY KEY,
    imported_at REAL
);
CREATE TABLE IF NOT EXISTS lgnb_thread_leases (
    thread_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    acquired_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
"""


_REBUILT = ("lgnb_checkpoints", "lgnb_blobs", "lgnb_writes", "lgnb_values")


def _add_refs_base(conn: sqlite3.Connection) -> None:
    """Migration 3 → 4: the `refs_base` column (NULL: the row's map is full, as every
    row of an older file is)."""
    columns = {name for _cid, name, *_ in conn.execute("PRAGMA table_info(lgnb_checkpoints)")}
    if "refs_base" not in columns:
        conn.execute("ALTER TABLE lgnb_checkpoints ADD COLUMN refs_base TEXT")


def _version(conn: sqlite3.Connection) -> int | None:
    """The file's lgnb schema version, None for a new file."""
    if conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lgnb_schema'"
    ).fetchone() is None:
        return None
    row = conn.execute("SELECT value FROM lgnb_schema WHERE key = 'version'").fetchone()
    return None if row is None else int(row[0])


def _rebuilt(old: int | None) -> tuple[str, ...]:
    """The tables a file of schema `old` gets rebuilt (a new key or table kind)."""
    if old is None:
        return ()
    if old < 3:
        return _REBUILT
    if old < 4:
        return ("lgnb_blobs", "lgnb_values")
    return ("lgnb_values",) if old < 5 else ()


def _set_aside(conn: sqlite3.Connection, tables: tuple[str, ...]) -> None:
    """A rebuild's first half: rename the old tables out of the way (the DDL then
    creates the new ones)."""
    for table in tables:
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone():
            conn.execute(f"ALTER TABLE {table} RENAME TO {table}_previous")


def _copy_back(conn: sqlite3.Connection, tables: tuple[str, ...]) -> None:
    """A rebuild's second half: copy the rows into the new tables (their columns
    a superset of the old ones), then drop the old tables and their indexes."""
    for table in tables:
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
            (f"{table}_previous",),
        ).fetchone():
            columns = ", ".join(
                name for _cid, name, *_ in conn.execute(f"PRAGMA table_info({table}_previous)")
            )
            conn.execute(
                f"INSERT OR IGNORE INTO {table} ({columns}) SELECT {columns} FROM {table}_previous"
            )
            conn.execute(f"DROP TABLE {table}_previous")


def connect(
    path: str | os.PathLike[str], *, busy_timeout: float
) -> sqlite3.Connection:
    """Open `path` (a file path, `:memory:` or a `file:` URI) for a saver."""
    target = os.fspath(path)
    return sqlite3.connect(
        target,
        timeout=busy_timeout,
        check_same_thread=False,
        isolation_level=None,
        uri=target.startswith("file:"),
    )


def database_label(conn: sqlite3.Connection) -> str:
    """The file behind `conn`, for error messages (`:memory:` if none)."""
    try:
        for _seq, name, file in conn.execute("PRAGMA database_list"):
            if name == "main":
                return file or ":memory:"
    except sqlite3.Error:
        pass
    return "<sqlite connection>"


def _use_wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """Switch the file to WAL mode (kept in the file: a no-op once done).

    SQLite answers `PRAGMA journal_mode = WAL` with "database is locked" at once,
    without waiting on the busy timeout, while another connection holds a lock on a file
    still in rollback mode — e.g. two processes (two kernels) opening one new file at the
    same moment. So the switch is retried until `busy_timeout` runs out, as any other
    statement would wait.
    """
    deadline = time.monotonic() + busy_timeout
    delay = 0.001
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL").fetchone()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def prepare(
    conn: sqlite3.Connection, *, busy_timeout: float, synchronous: Synchronous
) -> None:
    """Configure `conn` (WAL, busy timeout, explicit transactions) and create tables.

    Raises `CheckpointDatabaseError` naming the file when it is not a SQLite
    database, is damaged, or was created by a newer lgnb.
    """
    if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ValueError(
            f"synchronous={synchronous!r} is not a SQLite synchronous level; "
            "use 'NORMAL' (default) or 'FULL'."
        )
    conn.isolation_level = None  # transactions are explicit: BEGIN / COMMIT
    label = database_label(conn)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        _use_wal(conn, busy_timeout)
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("BEGIN IMMEDIATE")
        old = _version(conn)
        rebuilt = _rebuilt(old)
        _set_aside(conn, rebuilt)
        for statement in _DDL.split(";"):
            if statement.strip():
                conn.execute(statement)
        _copy_back(conn, rebuilt)
        if old is not None and old < 4:
            _add_refs_base(conn)
        row = conn.execute(
            "SELECT value FROM lgnb_schema WHERE key = 'version'"
        ).fetchone()
        if row is None:
            conn.execute(
                "INSERT INTO lgnb_schema (key, value) VALUES ('version', ?)",
                (str(SCHEMA_VERSION),),
            )
        elif int(row[0]) < SCHEMA_VERSION:  # its missing tables were just created
            conn.execute(
                "UPDATE lgnb_schema SET value = ? WHERE key = 'version'",
                (str(SCHEMA_VERSION),),
            )
        elif int(row[0]) > SCHEMA_VERSION:
            conn.execute("ROLLBACK")
            raise CheckpointDatabaseError(
                f"Checkpoint database {label!r} uses lgnb schema version {row[0]}, "
                f"newer than this lgnb understands ({SCHEMA_VERSION}). Upgrade lgnb, "
                "or use a different file."
            )
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        rollback_quietly(conn)
        explained = explain(label, exc)
        if explained is exc:
            raise
        raise explained from exc

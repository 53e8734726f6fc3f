"""Write-behind for pending writes: one transaction per super-step.

The loop saves a step as `put_writes` (once per finished task) then `put` (the new
checkpoint). Committing each call costs a transaction (and, at `synchronous=FULL`, an
fsync) per task plus one per checkpoint. Instead `put_writes` encodes its rows and
leaves them here; the next write transaction on the connection — normally the `put`
that follows — inserts them first and commits them together with its own rows.

What this keeps:

* A finished super-step is never lost: `put` commits the step's writes and its
  checkpoint before it returns.
* A finished task of an unfinished step (its sibling still running, then the process
  is killed) is on disk within `FLUSH_DELAY` seconds: a flusher thread commits rows
  that waited that long.
* Errors and interrupts (special writes) are committed at once: another process
  resuming the thread must see them.
* Readers see every write: `get_tuple`/`list` flush before reading; `close()` and
  process exit flush too.
"""

from __future__ import annotations

import atexit
import sqlite3
import threading
import time
import weakref
from typing import Any

from lgnb.checkpoint.sqlite._errors import abandoned, rollback_quietly

FLUSH_DELAY = 0.05
"""Seconds buffered writes may wait for a `put` before the flusher commits them."""

_IDLE_EXIT = 2.0
"""The flusher thread ends after this many seconds without buffered writes."""

Batch = tuple[str, list[tuple[Any, ...]]]

_all: weakref.WeakSet[WriteBehind] = weakref.WeakSet()


class WriteBehind:
    """Statement batches waiting for the next write transaction on one connection.

    Guarded by the store's lock (the same one that guards the connection); the
    methods marked "locked" must be called with it held.
    """

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock) -> None:
        self.conn = conn
        self.lock = lock
        self.batches: list[Batch] = []
        self.since = 0.0
        self.closed = False
        # the buffered rows were part of a transaction that failed (its caller got
        # the error); close() then does not raise it a second time
        self.failed = False
        self._flusher: threading.Thread | None = None
        _all.add(self)

    def add(self, batches: list[Batch]) -> None:
        """Buffer `batches` (locked) and make sure the flusher will commit them."""
        if not self.batches:
            self.since = time.monotonic()
        self.batches.extend(batches)
        if self._flusher is None:
            self._flusher = threading.Thread(
                target=_flush_loop, args=(weakref.ref(self),), name="lgnb-sqlite-flush",
                daemon=True,
            )
            self._flusher.start()

    def take(self) -> list[Batch]:
        """Remove and return the buffered batches (locked)."""
        batches, self.batches = self.batches, []
        self.failed = False
        return batches

    def restore(self, batches: list[Batch]) -> None:
        """Put back batches a failed transaction did not commit (locked)."""
        if batches:
            self.batches[:0] = batches
            self.failed = True

    def flush(self) -> None:
        """Commit the buffered batches now (in their own transaction)."""
        with self.lock:
            if not self.batches or self.closed:
                return
            abandoned(self.conn)
            batches = self.take()
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                execute(self.conn, batches)
                self.conn.execute("COMMIT")
            except BaseException:
                rollback_quietly(self.conn)
                self.restore(batches)
                raise


def execute(conn: sqlite3.Connection, batches: list[Batch]) -> None:
    """Run the buffered statement batches on `conn` (inside a transaction)."""
    for sql, rows in batches:
        conn.executemany(sql, rows)


def _flush_loop(ref: weakref.ref[WriteBehind]) -> None:
    idle = 0.0
    while True:
        time.sleep(FLUSH_DELAY / 2)
        behind = ref()
        if behind is None or behind.closed:
            return
        if behind.batches and time.monotonic() - behind.since >= FLUSH_DELAY:
            try:
                behind.flush()
            except Exception:  # noqa: BLE001 - kept buffered; the next put retries
                pass
        if behind.batches:
            idle = 0.0
            continue
        idle += FLUSH_DELAY / 2
        if idle >= _IDLE_EXIT:
            with behind.lock:
                if not behind.batches:
                    behind._flusher = None
                    return
            idle = 0.0
        del behind


@atexit.register
def _flush_at_exit() -> None:
    for behind in list(_all):
        try:
            behind.flush()
        except Exception:  # noqa: BLE001 - the connection may be gone already
            pass

"""The SQLite saver's lease table: which run holds which thread (`lgnb_thread_leases`).

One row per busy thread: the owner (host, pid, run id), when it took the thread and
until when the row is valid (epoch seconds; the run's heartbeat pushes it forward), and
whether another run asked it to stop (`multitask="interrupt"` from another process).
Every call is one `BEGIN IMMEDIATE` transaction of the saver's store, so two processes
sharing the file claim a thread one after the other. The rules — when a row is free,
what `multitask` does — are the engine's (`lgnb.pregel._lease`); this is storage.
"""

from __future__ import annotations

import asyncio
import time

from lgnb.checkpoint.sqlite._store import SqliteStore

__all__ = ("SqliteThreadLeases",)

_HOLDER = (
    "SELECT run_id, host, pid, acquired_at, expires_at FROM lgnb_thread_leases "
    "WHERE thread_id = ?"
)
_CLAIM = (
    "INSERT OR REPLACE INTO lgnb_thread_leases "
    "(thread_id, run_id, host, pid, acquired_at, expires_at, cancel_requested) "
    "VALUES (?, ?, ?, ?, ?, ?, 0)"
)


class SqliteThreadLeases:
    """`ThreadLeases` (see `lgnb.pregel._lease`) over a saver's SQLite store."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.identity = id(store.conn)  # the clones of a saver share the connection

    def claim(self, thread_id: str, owner: object, ttl: float, replacing: str | None) -> object:
        from lgnb.pregel._lease import LeaseHolder

        now = time.time()
        with self.store._transaction("BEGIN IMMEDIATE") as conn:
            row = conn.execute(_HOLDER, (thread_id,)).fetchone()
            if row is not None and row[4] > now and row[0] != replacing:
                return LeaseHolder(row[0], row[1], int(row[2]), float(row[3]), float(row[4]) - now)
            conn.execute(
                _CLAIM,
                (thread_id, owner.run_id, owner.host, owner.pid, now, now + ttl),  # type: ignore[attr-defined]
            )
        return None

    def renew(self, thread_id: str, run_id: str, ttl: float) -> str:
        with self.store._transaction("BEGIN IMMEDIATE") as conn:
            conn.execute(
                "UPDATE lgnb_thread_leases SET expires_at = ? WHERE thread_id = ? AND run_id = ?",
                (time.time() + ttl, thread_id, run_id),
            )
            row = conn.execute(
                "SELECT cancel_requested FROM lgnb_thread_leases WHERE thread_id = ? AND run_id = ?",
                (thread_id, run_id),
            ).fetchone()
        if row is None:
            return "lost"
        return "cancel" if row[0] else "held"

    def release(self, thread_id: str, run_id: str) -> None:
        with self.store._transaction("BEGIN IMMEDIATE") as conn:
            conn.execute(
                "DELETE FROM lgnb_thread_leases WHERE thread_id = ? AND run_id = ?",
                (thread_id, run_id),
            )

    def request_cancel(self, thread_id: str, run_id: str) -> None:
        with self.store._transaction("BEGIN IMMEDIATE") as conn:
            conn.execute(
                "UPDATE lgnb_thread_leases SET cancel_requested = 1 "
                "WHERE thread_id = ? AND run_id = ?",
                (thread_id, run_id),
            )

    # the async saver runs the same calls in a worker thread, as its other methods
    async def aclaim(self, thread_id: str, owner: object, ttl: float, replacing: str | None) -> object:
        return await asyncio.to_thread(self.claim, thread_id, owner, ttl, replacing)

    async def arenew(self, thread_id: str, run_id: str, ttl: float) -> str:
        return await asyncio.to_thread(self.renew, thread_id, run_id, ttl)

    async def arelease(self, thread_id: str, run_id: str) -> None:
        await asyncio.to_thread(self.release, thread_id, run_id)

    async def arequest_cancel(self, thread_id: str, run_id: str) -> None:
        await asyncio.to_thread(self.request_cancel, thread_id, run_id)

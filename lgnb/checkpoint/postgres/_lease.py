"""The PostgreSQL savers' lease table: which run holds which thread.

LangGraph's tables stay as they are; lgnb adds one, `lgnb_thread_leases`, created by
`setup()` (and, for a database set up by LangGraph or an older lgnb, on first use):

    thread_id        TEXT PRIMARY KEY  the busy thread
    run_id, host, pid                  who runs it (lgnb's lease owner)
    acquired_at      TIMESTAMPTZ       when it took the thread
    expires_at       TIMESTAMPTZ       valid until (the run's heartbeat renews it)
    cancel_requested BOOLEAN           another run asked it to stop (multitask="interrupt")

Times are the server's clock (`clock_timestamp()`), so machines with skewed clocks
agree on expiry. Each operation is one statement (claiming a free or expired row is
one `INSERT ... ON CONFLICT DO UPDATE ... WHERE`), atomic under autocommit as LangGraph's
savers run. The rules — when a row is free, what `multitask` does — are the engine's
(`lgnb.pregel._lease`); this is storage.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ("AsyncLeaseSetup", "AsyncPostgresThreadLeases", "LeaseSetup", "PostgresThreadLeases")

DDL = """
CREATE TABLE IF NOT EXISTS lgnb_thread_leases (
    thread_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    acquired_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE
)"""

_CLAIM = """
INSERT INTO lgnb_thread_leases AS l
    (thread_id, run_id, host, pid, acquired_at, expires_at, cancel_requested)
VALUES (%(thread_id)s, %(run_id)s, %(host)s, %(pid)s, clock_timestamp(),
        clock_timestamp() + make_interval(secs => %(ttl)s), FALSE)
ON CONFLICT (thread_id) DO UPDATE SET
    run_id = EXCLUDED.run_id, host = EXCLUDED.host, pid = EXCLUDED.pid,
    acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at,
    cancel_requested = FALSE
WHERE l.expires_at < clock_timestamp() OR l.run_id = %(replacing)s
RETURNING run_id"""

_HOLDER = """
SELECT run_id, host, pid, extract(epoch FROM acquired_at)::float8 AS since,
       extract(epoch FROM expires_at - clock_timestamp())::float8 AS expires_in
FROM lgnb_thread_leases WHERE thread_id = %s"""

_RENEW = """
UPDATE lgnb_thread_leases SET expires_at = clock_timestamp() + make_interval(secs => %s)
WHERE thread_id = %s AND run_id = %s RETURNING cancel_requested"""

_RELEASE = "DELETE FROM lgnb_thread_leases WHERE thread_id = %s AND run_id = %s"

_CANCEL = "UPDATE lgnb_thread_leases SET cancel_requested = TRUE WHERE thread_id = %s AND run_id = %s"


def _claim_params(thread_id: str, owner: Any, ttl: float, replacing: str | None) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "run_id": owner.run_id,
        "host": owner.host,
        "pid": owner.pid,
        "ttl": float(ttl),
        "replacing": replacing,
    }


def _holder(row: dict[str, Any]) -> Any:
    from lgnb.pregel._lease import LeaseHolder

    return LeaseHolder(row["run_id"], row["host"], int(row["pid"]), row["since"], row["expires_in"])


def _renewed(row: dict[str, Any] | None) -> str:
    if row is None:
        return "lost"
    return "cancel" if row["cancel_requested"] else "held"


class PostgresThreadLeases:
    """`ThreadLeases` (see `lgnb.pregel._lease`) over a sync `PostgresSaver`'s connection
    (its lock and cursor); the async methods run them in a worker thread."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.identity = id(saver.conn)  # the clones of a saver share the connection
        self._ready = False

    def _cursor(self) -> Any:
        return self.saver._cursor()

    def _ensure(self, cur: Any) -> None:
        if not self._ready:
            cur.execute(DDL)
            self._ready = True

    def claim(self, thread_id: str, owner: Any, ttl: float, replacing: str | None) -> Any:
        params = _claim_params(thread_id, owner, ttl, replacing)
        with self._cursor() as cur:
            self._ensure(cur)
            while True:
                if cur.execute(_CLAIM, params).fetchone() is not None:
                    return None
                row = cur.execute(_HOLDER, (thread_id,)).fetchone()
                if row is not None:
                    return _holder(row)
                # released between the two statements: claim again

    def renew(self, thread_id: str, run_id: str, ttl: float) -> str:
        with self._cursor() as cur:
            self._ensure(cur)
            return _renewed(cur.execute(_RENEW, (float(ttl), thread_id, run_id)).fetchone())

    def release(self, thread_id: str, run_id: str) -> None:
        with self._cursor() as cur:
            self._ensure(cur)
            cur.execute(_RELEASE, (thread_id, run_id))

    def request_cancel(self, thread_id: str, run_id: str) -> None:
        with self._cursor() as cur:
            self._ensure(cur)
            cur.execute(_CANCEL, (thread_id, run_id))

    async def aclaim(self, thread_id: str, owner: Any, ttl: float, replacing: str | None) -> Any:
        return await asyncio.to_thread(self.claim, thread_id, owner, ttl, replacing)

    async def arenew(self, thread_id: str, run_id: str, ttl: float) -> str:
        return await asyncio.to_thread(self.renew, thread_id, run_id, ttl)

    async def arelease(self, thread_id: str, run_id: str) -> None:
        await asyncio.to_thread(self.release, thread_id, run_id)

    async def arequest_cancel(self, thread_id: str, run_id: str) -> None:
        await asyncio.to_thread(self.request_cancel, thread_id, run_id)


class AsyncPostgresThreadLeases:
    """`ThreadLeases` over an `AsyncPostgresSaver`'s connection; the sync methods (the
    heartbeat thread's, a sync `stream()`'s) run the async ones on the saver's event
    loop, as the saver's own sync methods do — so not from that loop's thread."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.identity = id(saver.conn)
        self._ready = False

    async def _ensure(self, cur: Any) -> None:
        if not self._ready:
            await cur.execute(DDL)
            self._ready = True

    async def aclaim(self, thread_id: str, owner: Any, ttl: float, replacing: str | None) -> Any:
        params = _claim_params(thread_id, owner, ttl, replacing)
        async with self.saver._cursor() as cur:
            await self._ensure(cur)
            while True:
                if await (await cur.execute(_CLAIM, params)).fetchone() is not None:
                    return None
                row = await (await cur.execute(_HOLDER, (thread_id,))).fetchone()
                if row is not None:
                    return _holder(row)

    async def arenew(self, thread_id: str, run_id: str, ttl: float) -> str:
        async with self.saver._cursor() as cur:
            await self._ensure(cur)
            return _renewed(await (await cur.execute(_RENEW, (float(ttl), thread_id, run_id))).fetchone())

    async def arelease(self, thread_id: str, run_id: str) -> None:
        async with self.saver._cursor() as cur:
            await self._ensure(cur)
            await cur.execute(_RELEASE, (thread_id, run_id))

    async def arequest_cancel(self, thread_id: str, run_id: str) -> None:
        async with self.saver._cursor() as cur:
            await self._ensure(cur)
            await cur.execute(_CANCEL, (thread_id, run_id))

    def _on_loop(self, coro: Any) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.saver.loop:
            coro.close()
            raise asyncio.InvalidStateError(
                "AsyncPostgresSaver's lease table cannot be used synchronously from its "
                "own event loop: run the graph with astream()/ainvoke() there."
            )
        return asyncio.run_coroutine_threadsafe(coro, self.saver.loop).result()

    def claim(self, thread_id: str, owner: Any, ttl: float, replacing: str | None) -> Any:
        return self._on_loop(self.aclaim(thread_id, owner, ttl, replacing))

    def renew(self, thread_id: str, run_id: str, ttl: float) -> str:
        return self._on_loop(self.arenew(thread_id, run_id, ttl))

    def release(self, thread_id: str, run_id: str) -> None:
        self._on_loop(self.arelease(thread_id, run_id))

    def request_cancel(self, thread_id: str, run_id: str) -> None:
        self._on_loop(self.arequest_cancel(thread_id, run_id))


class LeaseSetup:
    """Mixin for lgnb's sync PostgreSQL savers: `setup()` also creates the lease table,
    and `thread_leases()` hands it to the engine (one run per thread, `multitask=`)."""

    def setup(self) -> None:
        """LangGraph's tables and migrations, then lgnb's `lgnb_thread_leases`."""
        super().setup()  # type: ignore[misc]
        with self._cursor() as cur:  # type: ignore[attr-defined]
            cur.execute(DDL)

    def thread_leases(self) -> PostgresThreadLeases:
        """The database's lease table: which run holds which thread."""
        leases = self.__dict__.get("_lgnb_leases")
        if leases is None or leases.saver.conn is not self.conn:  # type: ignore[attr-defined]
            leases = self.__dict__["_lgnb_leases"] = PostgresThreadLeases(self)
        return leases


class AsyncLeaseSetup:
    """`LeaseSetup` for the async savers."""

    async def setup(self) -> None:
        """LangGraph's tables and migrations, then lgnb's `lgnb_thread_leases`."""
        await super().setup()  # type: ignore[misc]
        async with self._cursor() as cur:  # type: ignore[attr-defined]
            await cur.execute(DDL)

    def thread_leases(self) -> AsyncPostgresThreadLeases:
        """The database's lease table: which run holds which thread."""
        leases = self.__dict__.get("_lgnb_leases")
        if leases is None or leases.saver.conn is not self.conn:  # type: ignore[attr-defined]
            leases = self.__dict__["_lgnb_leases"] = AsyncPostgresThreadLeases(self)
        return leases

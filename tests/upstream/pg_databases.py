"""Each PostgreSQL test of the upstream suite gets its own empty database, without a
`CREATE DATABASE` and a `DROP DATABASE` per test.

LangGraph's fixtures create a database for every test that takes a PostgreSQL saver or
store and drop it after: about 2,000 tests, each paying for two statements that copy or
delete a whole database and wait for the disk (0.3 s on a 2-core machine, serialized by
the server: most of the suite's time). The runner copies this module into the rewritten
suite as `tests/_lgnb_pg.py` and points those fixtures at it (`runner._postgres_fixtures`):

- `lease(server)` gives a database of this process's pool, created once (with
  `synchronous_commit = off`: the tests never crash the server, so they need not wait
  for the disk at every commit);
- `release(server, name)` empties it: its `public` schema (the savers' and stores' tables,
  indexes and sequences) is dropped and made again, and it goes back to the pool. A
  database that cannot be emptied (a connection left open holds a lock) is dropped
  instead, as the fixture did.

So each test still starts on a database nothing has touched; the databases left in the
pool are dropped when the process exits.
"""

from __future__ import annotations

import atexit
from uuid import uuid4

import psycopg

_free: list[tuple[str, str]] = []  # (server, database) ready for a test


def lease(server: str) -> str:
    """An empty database on `server` (a URI ending in `/`) for one test: its name."""
    for i, (srv, name) in enumerate(_free):
        if srv == server:
            del _free[i]
            return name
    name = f"test_{uuid4().hex[:16]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
        conn.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
    return name


def release(server: str, name: str) -> None:
    """Empty the test's database and keep it for the next test (or drop it)."""
    try:
        with psycopg.connect(server + name, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '5s'")
            conn.execute("DROP SCHEMA public CASCADE")
            conn.execute("CREATE SCHEMA public")
    except psycopg.Error:
        _drop(server, name)
        return
    _free.append((server, name))


def _drop(server: str, name: str) -> None:
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@atexit.register
def _drop_pool() -> None:
    while _free:
        server, name = _free.pop()
        try:
            _drop(server, name)
        except psycopg.Error:
            pass  # the server went away first: nothing to clean

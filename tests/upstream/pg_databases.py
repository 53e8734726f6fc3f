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
pool are dropped when the process exits. A database is named after the process that made
it (`test_lgnb_<pid>_<hex>`): one a process could not drop (killed, or ended while a test
held it) is dropped by the next process that leases one on the same server, once that pid
no longer runs here.
"""

from __future__ import annotations

import atexit
import os
import re
from uuid import uuid4

import psycopg

from lgnb.pregel._lease import _pid_alive  # (a zombie counts as gone, as for thread leases)

_free: list[tuple[str, str]] = []  # (server, database) ready for a test
_swept: set[str] = set()  # servers whose leftovers this process has dropped
_OURS = re.compile(r"test_lgnb_(\d+)_[0-9a-f]+")


def lease(server: str) -> str:
    """An empty database on `server` (a URI ending in `/`) for one test: its name."""
    for i, (srv, name) in enumerate(_free):
        if srv == server:
            del _free[i]
            return name
    if server not in _swept:
        _swept.add(server)
        _drop_leftovers(server)
    name = f"test_lgnb_{os.getpid()}_{uuid4().hex[:8]}"
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


def _drop_leftovers(server: str) -> None:
    """Drop the pool databases of processes that no longer run (they could not)."""
    with psycopg.connect(server, autocommit=True) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'test\\_lgnb\\_%'")]
    for name in names:
        found = _OURS.fullmatch(name)
        if found and not _pid_alive(int(found.group(1))):
            try:
                _drop(server, name)
            except psycopg.Error:
                pass  # another process dropped it first


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

"""SQLite failures explained: which database file, what went wrong, what to do.

`sqlite3` reports a full disk, a read-only file or a damaged one as a bare
`OperationalError("database or disk is full")` — no file name, no fix. The saver's
connection choke points (opening the file, and every transaction of `SqliteStore`)
pass such errors through `explain`, which turns the ones a user can act on into a
`CheckpointDatabaseError` naming the file and the fix, with the original as
`__cause__`. The new error is still a `sqlite3.DatabaseError` (and a
`sqlite3.OperationalError` when the original was one), so existing
`except sqlite3.Error` clauses keep working; `sqlite_errorcode` / `sqlite_errorname`
are copied over.
"""

from __future__ import annotations

import sqlite3

__all__ = [
    "CheckpointDatabaseError",
    "CheckpointDatabaseOperationalError",
    "cannot_open",
    "explain",
    "rollback_quietly",
]

# primary SQLite result codes (the low byte of an extended code)
_PERM = 3
_READONLY = 8
_CORRUPT = 11
_FULL = 13
_CANTOPEN = 14
_NOTADB = 26

# Python < 3.11 has no sqlite_errorcode: the (stable) messages of the same codes.
_BY_MESSAGE = (
    ("database or disk is full", _FULL),
    ("attempt to write a readonly database", _READONLY),
    ("unable to open database file", _CANTOPEN),
    ("file is not a database", _NOTADB),
    ("database disk image is malformed", _CORRUPT),
    ("access permission denied", _PERM),
)


class CheckpointDatabaseError(RuntimeError, sqlite3.DatabaseError):
    """The checkpoint database file cannot be used; the message says why and what to do.

    Also a `sqlite3.DatabaseError`, so `except sqlite3.Error` still catches it; when
    it wraps an error from SQLite, that error is `__cause__`.
    """


class CheckpointDatabaseOperationalError(CheckpointDatabaseError, sqlite3.OperationalError):
    """A `CheckpointDatabaseError` for a full disk, a read-only or unopenable file
    (still a `sqlite3.OperationalError`, as SQLite's own error was)."""


def _code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return int(code)
    text = str(exc)
    return next((c for marker, c in _BY_MESSAGE if marker in text), None)


def cannot_open(label: str, exc: sqlite3.Error) -> CheckpointDatabaseError:
    """The error for a file SQLite could not open (also used when `connect` fails)."""
    return _wrap(
        CheckpointDatabaseOperationalError,
        exc,
        f"Cannot open checkpoint database {label!r}: {exc}. Check that the directory "
        "exists and that this process may read and write in it (SQLite creates -wal "
        "and -shm files next to the database), or pass a different path.",
    )


def explain(label: str, exc: sqlite3.Error) -> sqlite3.Error:
    """`exc` as a `CheckpointDatabaseError` naming the file `label` and the fix, or
    `exc` itself when it is not a failure lgnb can explain (a busy lock, a bug).

    Raise the result `from exc` when it is not `exc`.
    """
    if isinstance(exc, CheckpointDatabaseError):
        return exc
    code = _code(exc)
    if code is None:
        return exc
    primary = code & 0xFF
    if primary == _FULL:
        return _wrap(
            CheckpointDatabaseOperationalError,
            exc,
            f"Checkpoint database {label!r} is full: {exc}. This write was rolled back; "
            "what was saved before it is intact. Free disk space on the drive that "
            "holds the file (SQLite also needs room for the -wal file next to it), or "
            "raise its size limit if one was set (PRAGMA max_page_count); then run "
            "the step again.",
        )
    if primary in (_READONLY, _PERM):
        return _wrap(
            CheckpointDatabaseOperationalError,
            exc,
            f"Cannot write checkpoint database {label!r}: {exc}. Check that this "
            "process may write the file, its -wal and -shm files and their directory "
            "(permissions, a read-only mount), and that the connection is not "
            "read-only ('file:...?mode=ro', PRAGMA query_only); or pass a different "
            "path.",
        )
    if primary == _CANTOPEN:
        return cannot_open(label, exc)
    if primary in (_NOTADB, _CORRUPT):
        return _wrap(
            CheckpointDatabaseError,
            exc,
            f"Cannot use {label!r} as a checkpoint database: {exc}. The file is not a "
            "SQLite database, or it is damaged. Restore it from a backup if you have "
            "one (the sqlite3 shell's .recover command salvages what is readable). "
            "Move it aside (or delete it if you do not need its threads) and lgnb will "
            "create a fresh database at that path; or pass a different path.",
        )
    return exc


def _wrap(
    cls: type[CheckpointDatabaseError], exc: sqlite3.Error, message: str
) -> CheckpointDatabaseError:
    err = cls(message)
    for attr in ("sqlite_errorcode", "sqlite_errorname"):
        if hasattr(exc, attr):
            setattr(err, attr, getattr(exc, attr))
    return err


def abandoned(conn: sqlite3.Connection) -> None:
    """Roll back a transaction an interrupted operation left open (call with the
    connection's lock held, before a BEGIN).

    A KeyboardInterrupt (a notebook's stop button) is raised between two bytecodes of the
    main thread, so it can land after a BEGIN and before the code that would roll back on
    failure. The operation that opened the transaction raised, so its caller never took
    what it wrote as saved; left open, the transaction would make every later BEGIN on
    this connection fail ("cannot start a transaction within a transaction")."""
    if conn.in_transaction:
        rollback_quietly(conn)


def rollback_quietly(conn: sqlite3.Connection) -> None:
    """Roll back an open transaction after a failure, keeping that failure the one
    raised (on a damaged or vanished file the ROLLBACK may fail too)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

"""SQL text for the SQLite savers, and the `list()` query builder.

Kept apart from the row mapping so the statements can be read in one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

SELECT_CHECKPOINT_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
    "type, checkpoint, metadata, blob_refs, refs_base"
)

SELECT_LATEST = (
    f"SELECT {SELECT_CHECKPOINT_COLUMNS} FROM lgnb_checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1"
)

SELECT_ONE = (
    f"SELECT {SELECT_CHECKPOINT_COLUMNS} FROM lgnb_checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)

# The blobs of a page of checkpoints, read by version. Blobs are keyed (thread, ns,
# version, channel), so the channels one step wrote are one run of rows: a page naming
# 50 channels at 2-3 distinct versions costs 2-3 range scans instead of 50 point lookups
# (one checkpoint of 53 channels: 97 -> 65 µs with the values below). A run may hold
# channels the page does not name (written in the same step, overwritten since): the
# caller skips them, and their large values are never read, because those come by `ref`
# in a second statement (`select_values`). CROSS JOIN pins json_each (a JSON array of
# versions) as the outer loop; left to itself the planner may scan every blob of the
# thread instead.
SELECT_BLOBS_OF_VERSIONS = """
SELECT b.channel, b.version, b.type, b.blob, b.ref
FROM json_each(?) AS r
CROSS JOIN lgnb_blobs AS b
  ON b.thread_id = ? AND b.checkpoint_ns = ? AND b.version = r.value
"""


def select_values(count: int) -> str:
    """The large values with `count` given refs (`lgnb_values`, by its unique index)."""
    return f"SELECT ref, data FROM lgnb_values WHERE ref IN ({placeholders(count)})"

SELECT_WRITES = """
SELECT w.task_id, w.channel, w.type, COALESCE(w.blob, v.data) FROM lgnb_writes AS w
LEFT JOIN lgnb_values AS v ON v.ref = w.ref
WHERE w.thread_id = ? AND w.checkpoint_ns = ? AND w.checkpoint_id = ?
ORDER BY w.task_path, w.task_id, w.idx
"""

INSERT_VALUE = "INSERT OR IGNORE INTO lgnb_values (ref, data) VALUES (?, ?)"

INSERT_BLOB = """
INSERT OR IGNORE INTO lgnb_blobs
(thread_id, checkpoint_ns, channel, version, type, blob, ref)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""

UPSERT_CHECKPOINT = f"""
INSERT OR REPLACE INTO lgnb_checkpoints ({SELECT_CHECKPOINT_COLUMNS}, run_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
# A new checkpoint; when its id exists already (a direct `put` of the same checkpoint
# again), nothing is inserted and the saver first materializes the rows based on it.
INSERT_CHECKPOINT = f"""
INSERT OR IGNORE INTO lgnb_checkpoints ({SELECT_CHECKPOINT_COLUMNS}, run_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

_WRITE_COLUMNS = (
    "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, "
    "ref, task_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# Special writes (errors, interrupts, ...) replace; regular writes are idempotent.
REPLACE_WRITE = f"INSERT OR REPLACE INTO lgnb_writes {_WRITE_COLUMNS}"
INSERT_WRITE = f"INSERT OR IGNORE INTO lgnb_writes {_WRITE_COLUMNS}"

DELETE_THREAD = (
    "DELETE FROM lgnb_checkpoints WHERE thread_id = ?",
    "DELETE FROM lgnb_blobs WHERE thread_id = ?",
    "DELETE FROM lgnb_writes WHERE thread_id = ?",
)

COPY_THREAD = (
    f"""INSERT OR REPLACE INTO lgnb_checkpoints ({SELECT_CHECKPOINT_COLUMNS}, run_id)
    SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
           metadata, blob_refs, refs_base, run_id
    FROM lgnb_checkpoints WHERE thread_id = ?""",
    """INSERT OR IGNORE INTO lgnb_blobs
    (thread_id, checkpoint_ns, channel, version, type, blob, ref)
    SELECT ?, checkpoint_ns, channel, version, type, blob, ref
    FROM lgnb_blobs WHERE thread_id = ?""",
    """INSERT OR REPLACE INTO lgnb_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, ref,
     task_path)
    SELECT ?, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, ref,
           task_path
    FROM lgnb_writes WHERE thread_id = ?""",
)

# Checkpoints of a thread that are not the newest of their namespace.
_NOT_LATEST = """
SELECT checkpoint_ns, checkpoint_id FROM lgnb_checkpoints AS c
WHERE c.thread_id = ? AND c.checkpoint_id < (
    SELECT MAX(l.checkpoint_id) FROM lgnb_checkpoints AS l
    WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)
"""
# The newest checkpoint of each namespace of a thread, if stored as a delta: what
# "keep_latest" keeps, materialized first (its base goes).
LATEST_DELTAS = """
SELECT thread_id, checkpoint_ns, checkpoint_id, blob_refs, refs_base FROM lgnb_checkpoints AS c
WHERE c.thread_id = ? AND c.refs_base IS NOT NULL AND c.checkpoint_id = (
    SELECT MAX(l.checkpoint_id) FROM lgnb_checkpoints AS l
    WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)
"""
PRUNE_KEEP_LATEST = (
    "DELETE FROM lgnb_writes WHERE thread_id = ? AND (checkpoint_ns, checkpoint_id) "
    f"IN ({_NOT_LATEST})",
    "DELETE FROM lgnb_checkpoints WHERE thread_id = ? "
    f"AND (checkpoint_ns, checkpoint_id) IN ({_NOT_LATEST})",
)

# After keep_latest: a kept checkpoint whose parent was deleted has none (as LangGraph's
# PostgresSaver.prune), rather than a parent_config naming nothing.
UNLINK_DELETED_PARENTS = """
UPDATE lgnb_checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = ? AND parent_checkpoint_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM lgnb_checkpoints AS p
                  WHERE p.thread_id = lgnb_checkpoints.thread_id
                    AND p.checkpoint_ns = lgnb_checkpoints.checkpoint_ns
                    AND p.checkpoint_id = lgnb_checkpoints.parent_checkpoint_id)
"""
# Threads with a DeltaChannel: their latest checkpoint's value is rebuilt from the writes
# of the checkpoints before it, which keep_latest would delete.
DELTA_THREADS = """
SELECT DISTINCT thread_id FROM lgnb_checkpoints
WHERE thread_id IN ({}) AND (json_type(metadata, '$.counters_since_delta_snapshot') IS NOT NULL
                             OR json_type(metadata, '$.delta_writes_versioned') IS NOT NULL)
ORDER BY thread_id
"""

THREADS_OF_RUNS = "SELECT DISTINCT thread_id FROM lgnb_checkpoints WHERE run_id IN ({})"
# Checkpoints that stay while their base goes with the runs: materialized first.
ORPHANED_BY_RUNS = """
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.blob_refs, c.refs_base
FROM lgnb_checkpoints AS c
WHERE c.refs_base IS NOT NULL AND (c.run_id IS NULL OR c.run_id NOT IN ({0}))
  AND EXISTS (SELECT 1 FROM lgnb_checkpoints AS b
              WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
                AND b.checkpoint_id = c.refs_base AND b.run_id IN ({0}))
"""
DELETE_RUNS = (
    """DELETE FROM lgnb_writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (
        SELECT thread_id, checkpoint_ns, checkpoint_id FROM lgnb_checkpoints
        WHERE run_id IN ({}))""",
    "DELETE FROM lgnb_checkpoints WHERE run_id IN ({})",
)

# Blobs of a thread that no remaining checkpoint refers to, nor is the base of a kept
# append (`_appends`: its type `lgnb-append:<size>:<base version>`); `?1` and `?2` are
# both the thread.
COLLECT_BLOBS = """
WITH RECURSIVE kept(ns, channel, version) AS (
    SELECT c.checkpoint_ns, r.key, CAST(r.value AS TEXT)
    FROM lgnb_checkpoints AS c, json_each(c.blob_refs) AS r
    WHERE c.thread_id = ?2 AND r.type != 'null'
    UNION
    SELECT b.checkpoint_ns, b.channel,
           substr(substr(b.type, 13), instr(substr(b.type, 13), ':') + 1)
    FROM kept JOIN lgnb_blobs AS b
      ON b.thread_id = ?1 AND b.checkpoint_ns = kept.ns AND b.version = kept.version
     AND b.channel = kept.channel
    WHERE substr(b.type, 1, 12) = 'lgnb-append:'
)
DELETE FROM lgnb_blobs WHERE thread_id = ?1 AND (checkpoint_ns, channel, version) NOT IN (
    SELECT ns, channel, version FROM kept)
"""


# Large values a thread refers to: the candidates to collect after deleting from it.
REFS_OF_THREAD = """
SELECT ref FROM lgnb_blobs WHERE thread_id = ? AND ref IS NOT NULL
UNION
SELECT ref FROM lgnb_writes WHERE thread_id = ? AND ref IS NOT NULL
"""

# Delete the candidate values (in temp.lgnb_candidates) no blob or write refers to any
# more: one scan of each table (there is no index on `ref`; a step would pay for it).
CANDIDATES = (
    "CREATE TEMP TABLE IF NOT EXISTS lgnb_candidates (ref BLOB PRIMARY KEY) WITHOUT ROWID",
    "DELETE FROM temp.lgnb_candidates",
)
INSERT_CANDIDATE = "INSERT OR IGNORE INTO temp.lgnb_candidates (ref) VALUES (?)"
COLLECT_VALUES = """
DELETE FROM lgnb_values WHERE ref IN (SELECT ref FROM temp.lgnb_candidates)
  AND ref NOT IN (SELECT ref FROM lgnb_blobs WHERE ref IS NOT NULL
                  UNION SELECT ref FROM lgnb_writes WHERE ref IS NOT NULL)
"""


# Skip-scan of a thread's namespaces: each an index seek, however long the history.
NEXT_NAMESPACE = (
    "SELECT checkpoint_ns FROM lgnb_checkpoints WHERE thread_id = ? AND checkpoint_ns > ? "
    "ORDER BY checkpoint_ns LIMIT 1"
)
FIRST_NAMESPACE = (
    "SELECT checkpoint_ns FROM lgnb_checkpoints WHERE thread_id = ? "
    "ORDER BY checkpoint_ns LIMIT 1"
)


def placeholders(n: int) -> str:
    """`?, ?, ...` for an IN list of `n` values."""
    return ", ".join("?" * n)


def _json_path(key: str) -> str | None:
    """A SQLite JSON path for a metadata filter key, or None if it needs quoting SQLite
    cannot express (then the key is matched in Python). A dotted key is a path into
    nested metadata (`"user.access-level"`), as langgraph.checkpoint.sqlite reads it."""
    if '"' in key or "\\" in key:
        return None
    return "$" + "".join(f'."{part}"' for part in key.split("."))


def build_list_query(
    config: Mapping[str, Any] | None,
    *,
    filter: Mapping[str, Any] | None,
    before_id: str | None,
    limit: int | None,
    after: tuple[str, str, str] | None = None,
) -> tuple[str, list[Any], dict[str, Any]]:
    """SQL + params for `list()`, newest first, and the filter keys left for Python.

    Rows are ordered by (checkpoint_id, thread_id, checkpoint_ns), descending; `after`
    is the last such key of the previous page, to resume after it (keyset paging:
    each page is one index range, however deep). LIMIT always applies: the caller
    pages and filters the leftover keys.

    A metadata filter matches by equality, as LangGraph's savers: a missing key equals
    None, `True` equals 1, a dict equals only an equal dict. Scalar values (str, int,
    float, bool, None) are SQL `json_extract` comparisons; nested values (dicts, lists)
    and odd keys are returned to be checked in Python, in which case LIMIT is applied by
    the caller.
    """
    where: list[str] = []
    params: list[Any] = []
    configurable = (config or {}).get("configurable", {}) if config else {}
    if configurable.get("thread_id") is not None:
        where.append("thread_id = ?")
        params.append(str(configurable["thread_id"]))
    if configurable.get("checkpoint_ns") is not None:
        where.append("checkpoint_ns = ?")
        params.append(configurable["checkpoint_ns"])
    if configurable.get("checkpoint_id"):
        where.append("checkpoint_id = ?")
        params.append(configurable["checkpoint_id"])
    leftover: dict[str, Any] = {}
    for key, value in (filter or {}).items():
        path = _json_path(key)
        if path is None or isinstance(value, (dict, list, tuple)):
            leftover[key] = value
        elif value is None:  # JSON null, or no such key
            where.append("json_extract(metadata, ?) IS NULL")
            params.append(path)
        elif isinstance(value, (int, float)):  # JSON true/false extract as 1/0
            where.append("json_extract(metadata, ?) = ?")
            params += [path, int(value) if isinstance(value, bool) else value]
        elif isinstance(value, str):
            where.append(
                "json_type(metadata, ?) = 'text' AND json_extract(metadata, ?) = ?"
            )
            params += [path, path, value]
        else:
            leftover[key] = json.loads(json.dumps(value, default=str))  # as stored
    if before_id is not None:
        where.append("checkpoint_id < ?")
        params.append(before_id)
    if after is not None:
        # the first term lets SQLite seek the index; the second breaks ties (a copied
        # thread shares checkpoint ids with its source)
        where.append("checkpoint_id <= ? AND (checkpoint_id, thread_id, checkpoint_ns) < (?, ?, ?)")
        params += [after[0], *after]
    sql = f"SELECT {SELECT_CHECKPOINT_COLUMNS} FROM lgnb_checkpoints"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    return sql, params, leftover


def metadata_matches(metadata: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """The filter keys SQL did not handle, by equality (a missing key is None; tuples
    compare as the lists JSON stored; a dotted key is a path into nested metadata)."""
    return all(_at_path(metadata, k) == _as_json(v) for k, v in wanted.items())


def _at_path(metadata: Mapping[str, Any], key: str) -> Any:
    value: Any = metadata
    for part in key.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str)) if isinstance(value, (dict, list, tuple)) else value

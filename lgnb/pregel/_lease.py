"""One run per thread: the lease a root run takes on its thread, and `multitask`.

Two runs on one thread at once interleave their checkpoints and lose updates silently
(each reads the state, the later save hides the earlier one). A root run started with
`multitask=` first takes its thread's lease, and gives it back when it ends however it
ends (done, error, interrupt, cancel, the stream closed). When the thread is taken,
`multitask` says what to do — the names LangGraph's server uses:

* `"reject"`: raise `ThreadBusyError`, naming the thread, the run holding it and the
  options.
* `"enqueue"`: wait until the holder ends, then run on the thread's latest state.
* `"interrupt"`: cancel the holder (`RunControl.request_cancel`: from then on it writes
  nothing to the thread), then run.

Without `multitask` (the default of `invoke`/`stream`) no lease is taken: LangGraph's
own engine lets runs share a thread, and lgnb's engine path behaves the same way.
`lgnb.run` takes the lease by default (`multitask="reject"`). Subgraphs, which run under
their parent's thread in their own checkpoint namespace, never take it, nor do
`get_state` / `update_state`.

Where the lease lives:

* In this process, a registry keyed by (saver storage, thread id): runs of one kernel
  see each other at once, whatever saver.
* In the saver's database, when the saver keeps a lease table (`thread_leases()`:
  lgnb's SQLite and PostgreSQL savers): one row per busy thread with its owner
  (host, pid, run id) and an expiry, renewed by a heartbeat thread every `HEARTBEAT`
  seconds while the run lives. Runs in other processes and on other machines see it.
  A row whose expiry passed is free, and so is one whose owner process is gone
  (same host, pid dead or a zombie): a SIGKILLed run's thread resumes at once. A
  holder asked to stop by another process (`multitask="interrupt"`) learns it at its
  next heartbeat.

The acquisition is written once, as a program of requests (`leasing`), answered by the
blocking or the awaiting driver (`lgnb.pregel._program`), as the run itself is.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Protocol

from lgnb._internal.constants import CONF
from lgnb._internal.context import TASK_CTX
from lgnb.errors import ThreadBusyError

__all__ = (
    "HEARTBEAT",
    "LEASE_TTL",
    "MULTITASK",
    "LeaseHolder",
    "LeaseOwner",
    "ThreadLeases",
    "arelease_lease",
    "check_multitask",
    "leased",
    "leasing",
    "release_lease",
    "thread_busy",
)

MULTITASK = ("reject", "enqueue", "interrupt")

LEASE_TTL = 30.0
"""Seconds a lease row stays valid without a heartbeat (a run on another host that died
frees its thread after this long; one on this host as soon as its process is gone)."""

HEARTBEAT = 1.0
"""Seconds between renewals of a live run's lease row (and checks for an interrupt
asked by another process)."""

_WAIT_LOCAL = 0.02  # longest sleep between looks at a holder in this process
_WAIT_REMOTE = 0.1  # ... at a holder in another process (one database query each)


@dataclass(frozen=True)
class LeaseOwner:
    """Who holds a lease: the machine, the process and the run."""

    host: str
    pid: int
    run_id: str


@dataclass(frozen=True)
class LeaseHolder:
    """A lease as a saver's table reports it: the owner, since when (epoch seconds) and
    how long it stays valid without renewal (seconds, may be negative: expired)."""

    run_id: str
    host: str
    pid: int
    since: float
    expires_in: float

    def describe(self) -> str:
        held = max(0.0, time.time() - self.since)
        return f"run {self.run_id} (pid {self.pid} on host {self.host}, for {held:.1f} s)"


class ThreadLeases(Protocol):
    """What a saver's `thread_leases()` returns: its database's lease table.

    `claim` takes the lease of `thread_id` for `owner` for `ttl` seconds when it is free
    (no row, or the row expired) or held by run `replacing` (one the caller found gone),
    and returns None; otherwise it returns the holder. `renew` extends a held lease and
    answers "held", "cancel" (another run asked this one to stop) or "lost" (the row is
    no longer this run's). `release` deletes the row if it is still this run's;
    `request_cancel` marks the holder's row. The `a*` twins do the same from async code.
    """

    identity: int

    def claim(self, thread_id: str, owner: LeaseOwner, ttl: float, replacing: str | None) -> LeaseHolder | None: ...
    def renew(self, thread_id: str, run_id: str, ttl: float) -> str: ...
    def release(self, thread_id: str, run_id: str) -> None: ...
    def request_cancel(self, thread_id: str, run_id: str) -> None: ...
    async def aclaim(self, thread_id: str, owner: LeaseOwner, ttl: float, replacing: str | None) -> LeaseHolder | None: ...
    async def arenew(self, thread_id: str, run_id: str, ttl: float) -> str: ...
    async def arelease(self, thread_id: str, run_id: str) -> None: ...
    async def arequest_cancel(self, thread_id: str, run_id: str) -> None: ...


def check_multitask(multitask: Any) -> str | None:
    """`multitask` checked: None or one of `MULTITASK`."""
    if multitask is None or multitask in MULTITASK:
        return multitask
    raise ValueError(
        f"multitask={multitask!r} is not a strategy: use 'reject' (refuse a second run on "
        "a busy thread), 'enqueue' (wait for the running one, then run) or 'interrupt' "
        "(cancel the running one, then run); or leave it None for no lease."
    )


# ---------------------------------------------------------------------- the registry
class _Lease:
    """A root run's hold (or claim) on one thread."""

    __slots__ = (
        "key", "thread_id", "owner", "control", "table", "since", "outer", "run", "held", "done", "__weakref__",
    )

    def __init__(self, key: tuple[int, str], thread_id: str, control: Any, table: Any, run: Any) -> None:
        self.key = key
        self.thread_id = thread_id
        self.owner = LeaseOwner(_HOST, os.getpid(), uuid.uuid4().hex)
        self.control = control
        self.table = table
        self.since = time.time()
        self.outer = TASK_CTX.get()  # the node this run was started from, if any
        self.run = weakref.ref(run)
        self.held = False  # claimed in the database too (before that, nothing to renew)
        self.done = False

    def holder(self) -> LeaseHolder:
        return LeaseHolder(self.owner.run_id, self.owner.host, self.owner.pid, self.since, LEASE_TTL)


_HOST = socket.gethostname()
_lock = threading.Lock()
_local: dict[tuple[int, str], _Lease] = {}  # thread key -> the lease holding it here
_by_run: dict[str, _Lease] = {}  # run id -> lease, for every lease live in this process
_releases: list[_Lease] = []  # database rows to delete from the heartbeat thread
_heart: threading.Thread | None = None
_wake = threading.Event()


def _reset_after_fork() -> None:
    """A forked child owns none of its parent's leases (and has no heartbeat thread)."""
    global _lock, _heart, _wake
    _lock = threading.Lock()
    _local.clear()
    _by_run.clear()
    _releases.clear()
    _heart = None
    _wake = threading.Event()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _claim_local(lease: _Lease) -> _Lease | None:
    """Take the thread's slot in this process: None, or the lease holding it."""
    with _lock:
        held = _local.get(lease.key)
        if held is not None:
            return held
        _local[lease.key] = lease
        _by_run[lease.owner.run_id] = lease
        return None


def _drop_local(lease: _Lease) -> None:
    with _lock:
        if _local.get(lease.key) is lease:
            del _local[lease.key]
        _by_run.pop(lease.owner.run_id, None)


def _gone(holder: LeaseHolder) -> bool:
    """Whether the holder of a row can no longer be running: a run of this process that
    ended, or a process of this host that died."""
    if holder.host != _HOST:
        return False
    if holder.pid == os.getpid():
        with _lock:
            return holder.run_id not in _by_run
    return not _pid_alive(holder.pid)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:  # a SIGKILLed child its parent has not reaped yet is a zombie: dead
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _key(saver: Any, table: Any) -> int:
    """What identifies the saver's storage: shared by the clones compile makes of it."""
    if table is not None:
        return table.identity
    return id(getattr(saver, "storage", saver))


def _table(saver: Any) -> Any:
    leases = getattr(saver, "thread_leases", None)
    return leases() if callable(leases) else None


def _enclosing(key: tuple[int, str]) -> bool:
    """Whether a run this call is nested in (through nodes) holds the thread `key`."""
    ctx = TASK_CTX.get()
    while ctx is not None:
        loop = ctx.loop
        held = getattr(loop.run, "lease", None)
        if held is not None and held.key == key:
            return True
        ctx = loop.parent_ctx if loop.parent_ctx is not None else getattr(held, "outer", None)
    return False


def thread_busy(saver: Any, thread_id: Any) -> LeaseHolder | None:
    """The run of this process holding `thread_id` on `saver`, or None (no database
    query: what `lgnb.run` checks before it starts)."""
    if saver is None or thread_id is None:
        return None
    key = (_key(saver, _table(saver)), str(thread_id))
    with _lock:
        held = _local.get(key)
    return held.holder() if held is not None else None


# ---------------------------------------------------------------------- acquiring
def _new_lease(run: Any, config: dict[str, Any]) -> _Lease | None:
    saver = run.checkpointer
    thread_id = (config.get(CONF) or {}).get("thread_id")
    if saver is None or thread_id is None:
        return None  # no thread: nothing to share
    table = _table(saver)
    lease = _Lease((_key(saver, table), str(thread_id)), str(thread_id), run.control, table, run)
    if _enclosing(lease.key):
        raise ThreadBusyError(
            str(thread_id),
            "the run this node belongs to",
            note=(
                "A node cannot start a root run on its own thread with multitask= (it would "
                "wait for, or cancel, itself). Call the graph with the node's config (it "
                "then runs as a subgraph), or give it another thread_id."
            ),
        )
    return lease


def leasing(run: Any, config: dict[str, Any]) -> Generator[Any, Any, None]:
    """Take the thread of a root run as `run.multitask` says: a program of
    `(sync_fn, async_fn, args)` requests (`lgnb.pregel._program`), so `stream` and
    `astream` share it. On return `run.lease` holds the thread (or is None: the run has
    no thread); it raises `ThreadBusyError` (reject), or `asyncio.CancelledError` when the
    waiting run itself is cancelled."""
    lease = _new_lease(run, config)
    if lease is None:
        return
    multitask = run.multitask
    table = lease.table
    delay = 0.002
    asked: str | None = None
    deadline: float | None = None
    while True:
        if getattr(lease.control, "cancel_requested", False):
            raise asyncio.CancelledError(
                f"the run was cancelled while waiting for thread {lease.thread_id!r}"
            )
        here = _claim_local(lease)
        local: _Lease | None = None
        if here is None:
            if table is None:
                break
            try:
                holder = yield (table.claim, table.aclaim, (lease.thread_id, lease.owner, LEASE_TTL, None))
                if holder is not None and _gone(holder):
                    holder = yield (
                        table.claim, table.aclaim, (lease.thread_id, lease.owner, LEASE_TTL, holder.run_id)
                    )
            except BaseException:
                _drop_local(lease)
                raise
            if holder is None:
                break
            _drop_local(lease)
            with _lock:
                local = _by_run.get(holder.run_id) if holder.pid == os.getpid() and holder.host == _HOST else None
        else:
            local, holder = here, here.holder()
        if multitask == "reject":
            raise ThreadBusyError(lease.thread_id, holder.describe())
        if multitask == "interrupt" and asked != holder.run_id:
            asked = holder.run_id
            deadline = time.monotonic() + LEASE_TTL + 5.0
            reason = f"interrupted by a new run on thread {lease.thread_id!r} (multitask='interrupt')"
            if local is not None:  # may wait for the holder's saves in other threads
                yield (_cancel, _acancel, (local.control, reason))
            else:
                yield (table.request_cancel, table.arequest_cancel, (lease.thread_id, holder.run_id))
        if deadline is not None and time.monotonic() > deadline:
            raise ThreadBusyError(
                lease.thread_id,
                holder.describe(),
                note="It was asked to stop (multitask='interrupt') but still holds the thread.",
            )
        yield (time.sleep, asyncio.sleep, (delay,))
        delay = min(delay * 2, _WAIT_LOCAL if local is not None else _WAIT_REMOTE)
    lease.held = True
    run.lease = lease
    if table is not None:
        _ensure_heartbeat()
    when = getattr(lease.control, "_when_cancelled", None)
    if when is not None:
        when(lambda: _release_soon(lease))


def leased(opening: Generator[Any, Any, Any], run: Any, config: dict[str, Any]) -> Generator[Any, Any, Any]:
    """`opening` (the program that loads a root run's loop) behind the thread's lease:
    the lease first, so the checkpoint loaded is the latest; given back if opening fails."""
    yield from leasing(run, config)
    try:
        return (yield from opening)
    except BaseException:
        yield (release_lease, arelease_lease, (run,))
        raise


def _cancel(control: Any, reason: str) -> None:
    cancel = getattr(control, "request_cancel", None)
    if cancel is not None:
        cancel(reason)
    else:  # a LangGraph RunControl: the closest it offers
        control.request_drain(reason)


async def _acancel(control: Any, reason: str) -> None:
    await asyncio.to_thread(_cancel, control, reason)


# ---------------------------------------------------------------------- releasing
def _ending(run: Any) -> _Lease | None:
    lease = run.lease
    if lease is None or lease.done:
        return None
    lease.done = True
    _drop_local(lease)
    return lease if lease.table is not None else None


def release_lease(run: Any) -> None:
    """The run ended: its thread is free (idempotent; a database that fails now has the
    row deleted by the heartbeat thread, or let expire)."""
    lease = _ending(run)
    if lease is None:
        return
    try:
        lease.table.release(lease.thread_id, lease.owner.run_id)
    except Exception:  # noqa: BLE001 - retried from the heartbeat thread
        _queue_release(lease)


async def arelease_lease(run: Any) -> None:
    """`release_lease` with the table's async methods."""
    lease = _ending(run)
    if lease is None:
        return
    try:
        await lease.table.arelease(lease.thread_id, lease.owner.run_id)
    except Exception:  # noqa: BLE001
        _queue_release(lease)


def _release_soon(lease: _Lease) -> None:
    """The run was cancelled and saves nothing more: free the thread in this process
    now; the row goes from the heartbeat thread (the caller may be an event loop whose
    saver cannot be called synchronously). Until then a run of this process that finds
    the row sees its owner gone and takes it over."""
    if lease.done:
        return
    lease.done = True
    _drop_local(lease)
    if lease.table is not None:
        _queue_release(lease)


def _queue_release(lease: _Lease) -> None:
    with _lock:
        _releases.append(lease)
    _ensure_heartbeat()
    _wake.set()


# ---------------------------------------------------------------------- heartbeat
def _ensure_heartbeat() -> None:
    global _heart
    with _lock:
        if _heart is not None and _heart.is_alive():
            return
        _heart = threading.Thread(target=_beat, name="lgnb-lease-heartbeat", daemon=True)
        _heart.start()


def _beat() -> None:
    """Renew the lease rows of this process's live runs; act on what the rows say."""
    while True:
        _wake.wait(HEARTBEAT)
        _wake.clear()
        with _lock:
            live = [
                lease for lease in _by_run.values()
                if lease.table is not None and lease.held and not lease.done and _local.get(lease.key) is lease
            ]
            pending, _releases[:] = list(_releases), []
        for lease in live:
            if lease.run() is None:  # the run object is gone without ending: free it
                _release_soon(lease)
                continue
            try:
                state = lease.table.renew(lease.thread_id, lease.owner.run_id, LEASE_TTL)
            except Exception:  # noqa: BLE001 - the database is away: try again next beat
                continue
            if lease.done:  # ended meanwhile: what the row says no longer matters
                continue
            if state == "cancel":
                _cancel(lease.control, f"interrupted by a new run on thread {lease.thread_id!r} (multitask='interrupt')")
            elif state == "lost":
                _cancel(lease.control, f"its lease on thread {lease.thread_id!r} expired and another run took it")
        with _lock:
            pending += _releases
            _releases[:] = []
        for lease in pending:
            try:
                lease.table.release(lease.thread_id, lease.owner.run_id)
            except Exception:  # noqa: BLE001 - the row expires by itself
                pass

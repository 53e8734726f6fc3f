"""Deterministic ids: task ids and interrupt ids derived from where they occur.

A task's id is a hash of (checkpoint id, namespace, step, node, triggers): the same
task gets the same id when a run resumes from that checkpoint, which is how its saved
pending writes and resume values find it again.
"""

from __future__ import annotations

import itertools
import os
import random
import struct
import threading
import time
import uuid
from binascii import hexlify, unhexlify
from collections.abc import Callable
from hashlib import sha1

from xxhash import xxh3_128_digest, xxh3_128_hexdigest

__all__ = ("task_id", "unsaved_task_ids", "new_uuid4", "legacy_task_id", "interrupt_id", "new_checkpoint_id", "is_interrupt_id")


_UUID_GROUPS = struct.Struct("8s4s4s4s12s").unpack


def task_id(checkpoint_id: str, *parts: str) -> str:
    """A UUID-shaped id, stable for the same checkpoint and parts.

    The same XXH3-128 construction as LangGraph's, so a thread paused by one engine is
    resumed by the other: its pending writes and interrupt ids still match.
    """
    digest = xxh3_128_digest(unhexlify(checkpoint_id.replace("-", "")) + "".join(parts).encode())
    # 8-4-4-4-12 hex digits: one C call cuts the hex into the five groups (this runs once
    # per task; slicing a str five times costs a third more)
    return b"-".join(_UUID_GROUPS(hexlify(digest))).decode()


def unsaved_task_ids() -> Callable[..., str]:
    """A `task_id` replacement for a run that saves nothing: UUID-shaped ids from a
    random 80-bit prefix and a counter, unique per process.

    Why: with no checkpointer nothing can be resumed, so no saved write or interrupt
    needs an id derived from the checkpoint (the run's checkpoint ids are not even
    UUIDs then); hashing and formatting one per task is ~4% of a trivial node's cost.
    Takes (and ignores) `task_id`'s arguments, so `plan_tasks` calls either one.
    """
    h = f"{random.getrandbits(80):020x}"
    prefix = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:]}-"
    counter = itertools.count(1 << 48)  # `hex(n)[3:]`: 12 digits, no format-spec parsing

    def make(_checkpoint_id: str, *_parts: str) -> str:
        return prefix + hex(next(counter))[3:]

    return make


def new_uuid4() -> str:
    """`str(uuid.uuid4())` at a third of its cost: a message id is made for every message
    a node returns without one (tool results, usually), as LangGraph's `add_messages`
    does; `uuid.UUID`'s constructor and `__str__` are Python code. A `uuid.uuid4` that
    was patched (`mocker.patch("uuid.uuid4", ...)`, how tests pin message ids in
    LangGraph's suite and in users' own) is called instead."""
    if uuid.uuid4 is not _UUID4:  # patched (a test's deterministic ids): honour it
        return str(uuid.uuid4())
    bits = _id_random(128) & _UUID4_CLEAR | _UUID4_SET
    return b"-".join(_UUID_GROUPS(hexlify(bits.to_bytes(16, "big")))).decode()


# `new_uuid4`'s random bits: a generator of its own, seeded from os.urandom (so a
# `random.seed(...)` in user code cannot make ids repeat across runs of a thread) and
# reseeded in a forked child; no system call per id
_UUID4 = uuid.uuid4
_id_rng = random.Random()
_id_random = _id_rng.getrandbits
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_id_rng.seed)
_UUID4_CLEAR = ~((0xF << 76) | (0x3 << 62)) & ((1 << 128) - 1)
_UUID4_SET = (0x4 << 76) | (0x2 << 62)  # version 4, RFC 4122 variant


def legacy_task_id(checkpoint_id: str, *parts: str) -> str:
    """`task_id` as LangGraph made it for format-1 checkpoints (SHA-1 based), so a
    thread saved then still finds its pending writes."""
    h = sha1(unhexlify(checkpoint_id.replace("-", "")), usedforsecurity=False)
    h.update("".join(parts).encode())
    d = h.hexdigest()
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:32]}"


def interrupt_id(task_ns: str, answered: int) -> str:
    """The id of the interrupt a task raises after `answered` earlier answers."""
    return xxh3_128_hexdigest((f"{task_ns}|{answered}" if answered else task_ns).encode())


def is_interrupt_id(value: object) -> bool:
    """Whether a resume-map key looks like an interrupt id (32 lowercase hex digits)."""
    return (
        isinstance(value, str)
        and len(value) == 32
        and all(c in "0123456789abcdef" for c in value)
    )


_GREGORIAN_OFFSET = 0x01B21DD213814000  # 100-ns intervals from 1582-10-15 to 1970-01-01
_last_ts = 0
_ts_lock = threading.Lock()


def new_checkpoint_id(step: int) -> str:
    """A time-ordered UUIDv6 (RFC 9562), as checkpoint savers expect: ids sort by creation.

    Strictly increasing within the process, even for ids made in the same 100 ns.
    """
    global _last_ts
    with _ts_lock:
        ts = time.time_ns() // 100 + _GREGORIAN_OFFSET
        if ts <= _last_ts:
            ts = _last_ts + 1
        _last_ts = ts
    seq = step & 0x3FFF
    value = (
        (ts >> 28) << 96
        | ((ts >> 12) & 0xFFFF) << 80
        | 0x6 << 76
        | (ts & 0x0FFF) << 64
        | 0b10 << 62
        | seq << 48
        | random.getrandbits(48)
    )
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

"""Deterministic ids: task ids and interrupt ids derived from where they occur.

A task's id is a hash of (checkpoint id, namespace, step, node, triggers): the same
task gets the same id when a run resumes from that checkpoint, which is how its saved
pending writes and resume values find it again.
"""

from __future__ import annotations

from hashlib import blake2b

from langgraph.checkpoint.base.id import uuid6

__all__ = ("task_id", "interrupt_id", "new_checkpoint_id", "is_interrupt_id")


def _hex(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def task_id(checkpoint_id: str, *parts: str) -> str:
    """A UUID-shaped id, stable for the same checkpoint and parts."""
    h = _hex(checkpoint_id.encode() + b"\x00" + "\x00".join(parts).encode())
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def interrupt_id(task_ns: str, answered: int) -> str:
    """The id of the interrupt a task raises after `answered` earlier answers."""
    return _hex((f"{task_ns}|{answered}" if answered else task_ns).encode())


def is_interrupt_id(value: object) -> bool:
    """Whether a resume-map key looks like an interrupt id (32 lowercase hex digits)."""
    return (
        isinstance(value, str)
        and len(value) == 32
        and all(c in "0123456789abcdef" for c in value)
    )


def new_checkpoint_id(step: int) -> str:
    """A time-ordered (uuid6) checkpoint id, as LangGraph's savers expect."""
    return str(uuid6(clock_seq=step))

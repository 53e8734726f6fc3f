"""Messages a reducer put back in their own place: the same object, maybe changed in place.

A node that edits a message in place and returns it (``last.content = ...; return
{"messages": [last]}``, the human-review "edit" pattern) gives `add_messages` the very
object already at that id's position: the list afterwards holds the same objects as
before, so nothing *looks* changed, yet the message's content is new. Savers that
serialize a grown list by joining the bytes of its unchanged prefix
(`lgnb.checkpoint._grown`) must serialize such a list whole. So the merges note each
such message here (`returned`), each with a number from one counter, and a saver asks
which were noted since it serialized a list (`since`).

Messages are pydantic models, which take no weak references, so the last `KEEP` are held;
a saver whose list is older than the oldest one held is told it cannot know (`since`
gives None) and serializes whole.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import Any

KEEP = 256
"""Returned messages held (the oldest dropped first)."""

_numbers = itertools.count(1)
_last = 0
_held: deque[tuple[int, Any]] = deque(maxlen=KEEP)


def returned(message: Any) -> None:
    """Note that `message` was put back in its own place by a merge."""
    global _last
    number = next(_numbers)  # atomic: several threads merge at once
    _held.append((number, message))
    _last = number


def last() -> int:
    """The number of the latest note (0: none yet): what a saver keeps with a list it
    serializes, taken before serializing it."""
    return _last


def since(number: int) -> list[Any] | None:
    """The messages noted after `number`; None when some of them are no longer held."""
    if _last <= number:
        return []
    held = list(_held)
    if not held or held[0][0] > number + 1:
        return None  # dropped: any of them may be in the caller's list
    return [message for n, message in held if n > number]

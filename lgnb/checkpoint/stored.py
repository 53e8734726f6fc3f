"""What `list_stored` hands over: a saved value, undecoded (an lgnb extra of its savers).

lgnb's SQLite and PostgreSQL savers offer `list_stored(config, *, load, ...)`: `list()`
whose channel values and pending writes are given to `load` as a :class:`StoredValue`
instead of being decoded, so a reader (`lgnb.history`) decodes only what it shows and
each stored version once. Each saver subclasses it with the way to fetch large bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["StoredValue"]


@dataclass(frozen=True)
class StoredValue:
    """One channel value (`version` set) or pending write (`task_id` set), as stored.

    `size`: stored bytes; `data`: those bytes when at most the `inline_max` asked of
    `list_stored`, else None (`read()` fetches them). `decode(serde)` gives the value.
    """

    thread_id: str
    checkpoint_ns: str
    channel: str
    type: str
    size: int
    data: bytes | None
    version: str | None = None
    checkpoint_id: str | None = None
    task_id: str | None = None
    idx: int | None = None

    def read(self) -> bytes:
        """The stored bytes (from `data`, or read from the database now)."""
        raise NotImplementedError

    def decode(self, serde: Any) -> Any:
        """The value, decoded with the saver's serializer."""
        return serde.loads_typed((self.type, self.read()))

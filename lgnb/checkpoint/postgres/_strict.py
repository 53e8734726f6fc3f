"""What lgnb adds to LangGraph's PostgreSQL savers: strict loading by default.

LangGraph's `PostgresSaver` family loads rows with `JsonPlusSerializer()`, which
(unless `LANGGRAPH_STRICT_MSGPACK` is set) imports and calls whatever module and name
a stored value names — a row crafted by anyone who can write to the database runs
code in every kernel that reads the thread. lgnb's subclasses change one thing: the
default serializer is lgnb's `StrictSerializer` (the one the SQLite saver uses), chosen
by `saver_serializer`. SQL, tables and wire format stay LangGraph's, so a database is
shared freely with LangGraph processes.

A graph compiled with one of these savers tells it the classes its schemas name
through `BaseCheckpointSaver.with_allowlist` (lgnb's compile does this for every
saver), so a graph's own pydantic models, dataclasses and enums round-trip with no
configuration.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol, maybe_add_typed_methods

from lgnb.checkpoint.serde import AllowEntry, saver_serializer

__all__ = ["OPTIONS_DOC", "AsyncStrictDefault", "StrictDefault"]

OPTIONS_DOC = """
    lgnb loads rows with its strict serializer (`lgnb.checkpoint.serde`): only the
    types on its allowlist are rebuilt — LangChain messages, common stdlib values, the
    classes the compiled graph's schemas name, and `allow` — and a row naming anything
    else raises `UnsafeCheckpointTypeError` before any code runs.

    Options of `__init__` and `from_conn_string` (besides LangGraph's `conn`, `pipe`,
    `conn_string` and `pipeline`):
        serde: a serializer to use instead, as given.
        allow: extra types to store and load (classes, or `(module, name)` tuples):
            classes your state holds that its schema does not name (a field typed
            `Any`). Cannot be combined with `serde`; keyword-only.
        allow_unsafe_deserialization: `True` restores LangGraph's behaviour,
            `JsonPlusSerializer()`, which imports and calls whatever a stored row
            names: a crafted row runs code in this process. Only for a database
            no one else can write to. Keyword-only.
"""


class _StrictInit:
    """Mixin for a LangGraph PostgreSQL saver: `serde` defaults to lgnb's strict one."""

    def __init__(
        self,
        conn: Any,
        pipe: Any = None,
        serde: SerializerProtocol | None = None,
        *,
        allow: Iterable[AllowEntry] = (),
        allow_unsafe_deserialization: bool = False,
    ) -> None:
        super().__init__(  # type: ignore[call-arg]
            conn,
            pipe,
            serde=saver_serializer(
                serde=serde,
                allow=allow,
                allow_unsafe_deserialization=allow_unsafe_deserialization,
            ),
        )


class StrictDefault(_StrictInit):
    """`_StrictInit` for the sync savers, with their `from_conn_string`."""

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        serde: SerializerProtocol | None = None,
        allow: Iterable[AllowEntry] = (),
        allow_unsafe_deserialization: bool = False,
    ) -> Iterator[Any]:
        """Connect to `conn_string` (LangGraph's connection settings) and close on exit."""
        chosen = saver_serializer(
            serde=serde,
            allow=allow,
            allow_unsafe_deserialization=allow_unsafe_deserialization,
        )
        with super().from_conn_string(conn_string, pipeline=pipeline) as saver:  # type: ignore[misc]
            saver.serde = maybe_add_typed_methods(chosen)
            yield saver


class AsyncStrictDefault(_StrictInit):
    """`_StrictInit` for the async savers, with their async `from_conn_string`."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        serde: SerializerProtocol | None = None,
        allow: Iterable[AllowEntry] = (),
        allow_unsafe_deserialization: bool = False,
    ) -> AsyncIterator[Any]:
        """Connect to `conn_string` (LangGraph's connection settings) and close on exit."""
        chosen = saver_serializer(
            serde=serde,
            allow=allow,
            allow_unsafe_deserialization=allow_unsafe_deserialization,
        )
        async with super().from_conn_string(  # type: ignore[misc]
            conn_string, pipeline=pipeline, serde=chosen
        ) as saver:
            yield saver

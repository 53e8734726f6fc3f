"""Conversations serialized by joining bytes on lgnb's PostgreSQL savers.

LangGraph's PostgreSQL saver stores a changed channel's value whole at each version
(`checkpoint_blobs`, one row per channel and version), serializing it again: at 10,000
messages that is ~30 ms of a step's CPU. `JoinedLists` serializes a list that only grew
since this saver serialized it by joining the bytes it made then with those of the
appended items (`lgnb.checkpoint._grown`): the same bytes, the same rows, read by
LangGraph's code and by LangGraph's own saver alike. The lists `get_tuple` reads are
remembered with the bytes they were read from, so a run that starts from them (a chat
turn) joins what it appends too. What still grows with the conversation is sending and
storing those bytes (the table's layout is LangGraph's).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, CheckpointTuple

from lgnb.checkpoint import _grown

__all__ = ["JoinedLists"]

# The blob rows `_load_blobs` decoded during the `get_tuple` under way in this thread or
# task (None outside one: `list()` collects nothing).
_read: ContextVar[list[tuple[bytes, bytes, bytes]] | None] = ContextVar("lgnb_pg_read", default=None)


class JoinedLists:
    """Mixin over LangGraph's `BasePostgresSaver`: `_dump_blobs` joins grown lists."""

    serde: Any
    _grown_memo: _grown.GrownLists[bytes] | None = None

    def _memo(self) -> _grown.GrownLists[bytes]:
        memo = self._grown_memo
        if memo is None:  # made on first use: the savers' own __init__ is LangGraph's
            memo = self._grown_memo = _grown.new_memo()
        return memo

    def _load_blobs(self, blob_values: list[tuple[bytes, bytes, bytes]]) -> dict[str, Any]:
        read = _read.get()
        if read is not None and blob_values:
            read.extend(blob_values)
        return super()._load_blobs(blob_values)  # type: ignore[misc]

    def _remember_read(self, config: RunnableConfig, found: CheckpointTuple | None,
                       rows: list[tuple[bytes, bytes, bytes]]) -> None:
        if not _grown.joinable(self.serde) or not _reads_exactly(type(self)):
            return
        if found is None:  # deleted by another saver, maybe: what was remembered is stale
            configurable = config.get("configurable") or {}
            if "thread_id" in configurable and not configurable.get("checkpoint_id"):
                self._memo().forget(str(configurable["thread_id"]), configurable.get("checkpoint_ns", ""))
            return
        if not rows:
            return
        typed = {channel.decode(): (kind.decode(), data) for channel, kind, data in rows}
        configurable = found.config["configurable"]
        thread_id, ns = configurable["thread_id"], configurable["checkpoint_ns"]
        for channel, value in found.checkpoint["channel_values"].items():
            if value.__class__ is list and channel in typed:
                stored = typed[channel]
                _grown.remember_read(self._memo(), (thread_id, ns, channel), list(value), stored, stored[1],
                                     self.serde)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        rows: list[tuple[bytes, bytes, bytes]] = []
        token = _read.set(rows)
        try:
            found = super().get_tuple(config)  # type: ignore[misc]
        finally:
            _read.reset(token)
        self._remember_read(config, found, rows)
        return found

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        rows: list[tuple[bytes, bytes, bytes]] = []
        token = _read.set(rows)
        try:
            found = await super().aget_tuple(config)  # type: ignore[misc]
        finally:
            _read.reset(token)
        self._remember_read(config, found, rows)
        return found

    def delete_thread(self, thread_id: str) -> None:
        super().delete_thread(thread_id)  # type: ignore[misc]
        self._memo().forget(str(thread_id))

    async def adelete_thread(self, thread_id: str) -> None:
        await super().adelete_thread(thread_id)  # type: ignore[misc]
        self._memo().forget(str(thread_id))

    def _dump_blobs(
        self,
        thread_id: str,
        checkpoint_ns: str,
        values: dict[str, Any],
        versions: ChannelVersions,
    ) -> list[tuple[str, str, str, str, str, bytes | None]]:
        memo, serde = self._memo(), self.serde
        return [
            (
                thread_id,
                checkpoint_ns,
                k,
                cast(str, ver),
                *(_grown.dumps(memo, (thread_id, checkpoint_ns, k), values[k], serde)
                  if k in values else ("empty", None)),
            )
            for k, ver in versions.items()
        ]


_EXACT: dict[type, bool] = {}


def _reads_exactly(cls: type) -> bool:
    """Whether `cls` reads values as they are stored: no subclass of lgnb's saver changes
    them on the way (`_grown.reads_exactly`)."""
    exact = _EXACT.get(cls)
    if exact is None:
        own = {name: getattr(JoinedLists, name) for name in ("get_tuple", "aget_tuple", "_load_blobs")}
        for base in cls.__mro__:  # LangGraph's own row-to-tuple method, whichever the saver has
            if "_load_checkpoint_tuple" in vars(base) and base.__module__.startswith("langgraph."):
                own["_load_checkpoint_tuple"] = vars(base)["_load_checkpoint_tuple"]
                break
        exact = _EXACT[cls] = _grown.reads_exactly(cls, own)
    return exact

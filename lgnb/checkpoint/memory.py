"""In-memory checkpointing: LangGraph's `InMemorySaver` (alias `MemorySaver`), conversations joined.

`from lgnb.checkpoint.memory import InMemorySaver` mirrors LangGraph's import. The class
is a subclass of LangGraph's (`isinstance` checks against LangGraph's class hold) with
the same storage: the same `storage`, `writes` and `blobs` dictionaries holding the same
bytes, read by LangGraph's own methods. One thing differs, how a conversation is
serialized: LangGraph's saver serializes a changed channel's whole value at every step,
so a step of a 10,000-message conversation costs ~30 ms. This one joins the bytes it
serialized a step before with those of the appended messages (`lgnb.checkpoint._grown`),
the same bytes in a fraction of the time, once it has checked that none of the earlier
messages changed in place since (a list that did is serialized whole, as LangGraph
does). And it keeps such a version as what it appended to the one before
(`lgnb.checkpoint._memory_blobs`): every read of `blobs` gives the whole value's bytes,
but a conversation's memory grows with its length, not with its square.

Nothing persists past the process; use `lgnb.checkpoint.sqlite.SqliteSaver` for that.
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.memory import InMemorySaver as _LangGraphInMemorySaver
from langgraph.checkpoint.memory import PersistentDict

from lgnb.checkpoint import _grown, _memory_blobs
from lgnb.checkpoint._memory_blobs import JoinedBlobs

__all__ = ["InMemorySaver", "MemorySaver", "PersistentDict"]


class InMemorySaver(_LangGraphInMemorySaver):
    """Checkpoints in this process's memory (LangGraph's `InMemorySaver`), for notebooks and
    tests: `builder.compile(checkpointer=InMemorySaver())`.

    LangGraph's class with its storage and methods; a list that only grew since this saver
    serialized it (a conversation) is serialized by joining bytes, in O(new items).
    """

    def __init__(
        self,
        *,
        serde: SerializerProtocol | None = None,
        factory: type[defaultdict] = defaultdict,
    ) -> None:
        super().__init__(serde=serde, factory=factory)
        if factory is defaultdict:  # a user's factory (PersistentDict) keeps whole bytes
            self.blobs = JoinedBlobs()
        self._grown: _grown.GrownLists[Any] = _grown.new_memo()
        self._memo_blobs: Any = self.blobs  # the `blobs` whose values the memo refers to

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint: LangGraph's `put`, with each changed channel's value serialized
        by `_grown.dumps` (the same bytes; a grown list joined, not serialized again)."""
        c = checkpoint.copy()
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        checkpoint_ns = configurable["checkpoint_ns"]
        values: dict[str, Any] = c.pop("channel_values")  # type: ignore[misc]
        serde, blobs = self.serde, self.blobs
        memo = self._memo_for(blobs)
        dumps = _memory_blobs.stored if type(blobs) is JoinedBlobs else _grown.dumps
        for k, v in new_versions.items():
            blobs[(thread_id, checkpoint_ns, k, v)] = (
                dumps(memo, (thread_id, checkpoint_ns, k), values[k], serde)
                if k in values else ("empty", b"")
            )
        self.storage[thread_id][checkpoint_ns].update({
            checkpoint["id"]: (
                serde.dumps_typed(c),
                serde.dumps_typed(get_checkpoint_metadata(config, metadata)),
                configurable.get("checkpoint_id"),  # parent
            )
        })
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """LangGraph's `get_tuple`; the lists read are remembered with their bytes, so the
        run that starts from them (a chat turn) joins what it appends."""
        found = super().get_tuple(config)
        if not (_grown.joinable(self.serde) and _reads_exactly(type(self))):
            return found
        blobs = self.blobs
        memo = self._memo_for(blobs)
        if found is None:  # cleared by someone else, maybe: what was remembered is stale
            configurable = config.get("configurable") or {}
            if "thread_id" in configurable and not configurable.get("checkpoint_id"):
                memo.forget(str(configurable["thread_id"]), configurable.get("checkpoint_ns", ""))
            return found
        configurable = found.config["configurable"]
        thread_id, ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
        versions = found.checkpoint["channel_versions"]
        joined = type(blobs) is JoinedBlobs
        for channel, value in found.checkpoint["channel_values"].items():
            if value.__class__ is list and channel in versions:
                at = (thread_id, ns, channel, versions[channel])
                stored = blobs.raw(at) if isinstance(blobs, JoinedBlobs) else blobs.get(at)
                if stored is None:
                    continue
                if joined:  # the next version links to what is stored, no copy
                    _memory_blobs.remember_read(memo, (thread_id, ns, channel), list(value), stored,
                                                self.serde, partial(_bytes_at, blobs, at))
                else:
                    _grown.remember_read(memo, (thread_id, ns, channel), list(value), stored, stored[1],
                                         self.serde)
        return found

    def _load_blobs(self, thread_id: str, checkpoint_ns: str, versions: ChannelVersions) -> dict[str, Any]:
        """LangGraph's `_load_blobs` (what `get_tuple` and `list` decode a checkpoint's
        values with): with `JoinedBlobs`, each stored value read at C speed, a link made
        whole, instead of through `JoinedBlobs.__getitem__` once per channel."""
        blobs = self.blobs
        if type(blobs) is not JoinedBlobs:
            return super()._load_blobs(thread_id, checkpoint_ns, versions)
        get, loads, link = dict.get, self.serde.loads_typed, _memory_blobs.Link
        result: dict[str, Any] = {}
        for k, ver in versions.items():
            stored = get(blobs, (thread_id, checkpoint_ns, k, ver))
            if stored is None:
                continue
            if type(stored) is link:
                result[k] = loads((_grown.ROOT_TYPE, stored.whole()))
            elif stored[0] != "empty":
                result[k] = loads(stored)
        return result

    def _memo_for(self, blobs: Any) -> _grown.GrownLists[Any]:
        """The memo, emptied if `blobs` was replaced since it was filled (a server's
        in-memory runtime swaps in a shared dict): what it remembers is stored there."""
        if blobs is not self._memo_blobs:
            self._grown.forget()
            self._memo_blobs = blobs
        return self._grown

    def delete_thread(self, thread_id: str) -> None:
        """LangGraph's `delete_thread`; the thread's remembered lists are let go too."""
        super().delete_thread(thread_id)
        self._grown.forget(str(thread_id))


_EXACT: dict[type, bool] = {}


def _bytes_at(blobs: Any, at: tuple[str, str, str, Any]) -> bytes | None:
    """The bytes stored at `at` (a joined list's composed), for `_grown.read_snapshot`."""
    stored = blobs.get(at)
    return stored[1] if isinstance(stored, tuple) else None


def _reads_exactly(cls: type) -> bool:
    """Whether `cls` reads values as LangGraph's class stores them (no subclass changes
    them on the way: see `_grown.reads_exactly`)."""
    exact = _EXACT.get(cls)
    if exact is None:
        exact = _EXACT[cls] = _grown.reads_exactly(cls, {
            "get_tuple": InMemorySaver.get_tuple,
            "_load_blobs": InMemorySaver._load_blobs,
        })
    return exact


MemorySaver = InMemorySaver

"""Reading a thread's history for `lgnb.history` without decoding what is not shown.

The timeline needs, per checkpoint, its metadata, parent, next nodes and interrupts —
which only the graph's own planner knows (``get_state_history``) — but never the values
themselves; the details panel needs the full values of the one checkpoint clicked.

So the view reads through two copies of the graph (``graph.copy(update={"checkpointer":
...})``, public on lgnb and LangGraph graphs) whose checkpointer is a :class:`ReadSaver`
over the real one:

* *light* (the timeline): a value larger than `PREVIEW_MAX` serialized bytes is not read
  nor decoded; a :class:`NotLoaded` stands in its place (the planner never looks inside a
  state value; when it must, e.g. a big `Send` payload, it fails on the stand-in and the
  page is read again in full);
* *full* (the clicked checkpoint, diffs, the fork form): every value, each stored
  ``(channel, version)`` decoded once for the view's lifetime (:class:`DecodedCache`,
  bounded; a checkpoint sees its own copy of a cached value, so nothing it does to it
  reaches another one).

Both need the saver's lgnb extra ``list_stored`` (lgnb's SQLite and PostgreSQL savers),
which hands over each value undecoded (``stored.decode(serde)`` decodes it). Other savers
(LangGraph's own) decode everything in their ``list()``: then the light copy only drops
big values after the fact (so a page of snapshots never holds them) and the full copy
reads as usual.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from lgnb.widgets._loops import loop_bound_error, refuses_sync_here

#: serialized bytes above which the timeline does not decode a value
PREVIEW_MAX = 64 * 1024
#: the decoded-value cache of one view: serialized bytes and entries kept
CACHE_BYTES = 64 * 2**20
CACHE_ENTRIES = 2048

_ATOMS = (str, bytes, int, float, bool, type(None))
#: the channel of pending Sends (the planner reads it: never left out)
TASKS = "__pregel_tasks"


class NotLoaded:
    """A value the timeline did not decode (it is large); never shown, never saved."""

    __slots__ = ("channel", "size")

    def __init__(self, channel: str, size: int | None) -> None:
        self.channel = channel
        self.size = size  # serialized bytes (None: not known)

    def __repr__(self) -> str:
        size = "large" if self.size is None else f"{self.size:,} bytes"
        return f"<{self.channel}: {size}, not loaded>"

    def __bool__(self) -> bool:
        return True

    def _refuse(self, *_args: Any, **_kwargs: Any) -> Any:
        raise TypeError(f"{self!r} is a stand-in for a value the timeline did not load")

    __iter__ = __len__ = __getitem__ = __add__ = __radd__ = __contains__ = _refuse


def _private(value: Any) -> Any:
    """A copy a caller may change without changing the cached value."""
    if isinstance(value, _ATOMS):
        return value
    return copy.deepcopy(value)


def _big(value: Any, budget: int = PREVIEW_MAX) -> bool:
    """Whether `value` is roughly over `budget` bytes (strings and bytes counted; at most
    10,000 containers walked, so a huge structure is cut short, not walked in full)."""
    stack, seen = [value], 0
    while stack and seen < 10_000:
        item = stack.pop()
        seen += 1
        if isinstance(item, (str, bytes, bytearray)):
            budget -= len(item)
        elif isinstance(item, Mapping):
            budget -= 8 * len(item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            budget -= 8 * len(item)
            stack.extend(item)
        else:
            content = getattr(item, "content", None)  # a message
            budget -= 16
            if content is not None:
                stack.append(content)
        if budget < 0:
            return True
    return bool(stack)


class DecodedCache:
    """Decoded channel values by ``(namespace, channel, version)``: least recently used
    first out, at most `max_bytes` serialized bytes and `max_entries` values. A value
    larger than `max_bytes` is decoded each time it is asked for (never kept)."""

    def __init__(self, *, max_bytes: int = CACHE_BYTES, max_entries: int = CACHE_ENTRIES) -> None:
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.bytes = 0
        self._items: OrderedDict[tuple[str, str, str], tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()  # a followed run refreshes from another thread than a click
        #: values decoded through this cache (a version decoded twice counts twice)
        self.decodes = 0

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def value(self, key: tuple[str, str, str], size: int, decode: Any) -> Any:
        """A private copy of the value under `key`, decoded with ``decode()`` if not kept."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
        if hit is not None:
            return _private(hit[0])
        value = decode()
        with self._lock:
            self.decodes += 1
            if size > self.max_bytes:
                return value
            if key not in self._items:
                self.bytes += size
            self._items[key] = (value, size)
            while self._items and (self.bytes > self.max_bytes or len(self._items) > self.max_entries):
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped
        return _private(value)


class ReadSaver(BaseCheckpointSaver):
    """A read-only view of `inner` for the history view (see the module docstring).

    `light`: big values become :class:`NotLoaded`. Writing through it raises: the view
    forks and replays on the real graph, never through this saver.
    """

    def __init__(self, inner: Any, cache: DecodedCache, *, light: bool, listed: list[str] | None = None) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.cache = cache
        self.light = light
        #: ids of the checkpoints `list()` handed out, in order (shared with allowlist clones)
        self.listed: list[str] = [] if listed is None else listed

    @property
    def lazy(self) -> bool:
        """Whether `inner` hands values over undecoded (lgnb's ``list_stored``)."""
        return callable(getattr(self.inner, "list_stored", None))

    # -- reading ---------------------------------------------------------------------
    def _load(self, stored: Any) -> Any:
        serde = self.inner.serde
        if stored.version is None:  # a pending write: errors, interrupts, resumes are always read
            if self.light and not stored.channel.startswith("__") and stored.size > PREVIEW_MAX:
                return NotLoaded(stored.channel, stored.size)
            self.cache.decodes += 1
            return stored.decode(serde)
        key = (stored.checkpoint_ns, stored.channel, stored.version)
        if self.light and stored.channel != TASKS and stored.size > PREVIEW_MAX and key not in self.cache:
            return NotLoaded(stored.channel, stored.size)  # the planner reads only the Send queue
        return self.cache.value(key, stored.size, lambda: stored.decode(serde))

    def _dropped(self, saved: CheckpointTuple) -> CheckpointTuple:
        """A tuple from a saver without ``list_stored``: big values dropped (light)."""
        if not self.light:
            return saved
        values = saved.checkpoint.get("channel_values") or {}
        big = {k for k, v in values.items() if k != TASKS and _big(v)}
        if not big:
            return saved
        checkpoint = dict(saved.checkpoint)
        checkpoint["channel_values"] = {k: NotLoaded(k, None) if k in big else v for k, v in values.items()}
        return saved._replace(checkpoint=checkpoint)  # type: ignore[arg-type]

    def list(self, config: Any, *, filter: dict[str, Any] | None = None, before: Any = None,
             limit: int | None = None) -> Iterator[CheckpointTuple]:
        if refuses_sync_here(self.inner):
            raise loop_bound_error(self.inner, "HistoryView.refresh")
        if self.lazy:
            listed = self.inner.list_stored(config, load=self._load, filter=filter, before=before,
                                            limit=limit, inline_max=PREVIEW_MAX)
        else:
            listed = (self._dropped(saved) for saved in self.inner.list(config, filter=filter, before=before,
                                                                        limit=limit))
        for saved in listed:
            self.listed.append(str(saved.config["configurable"]["checkpoint_id"]))
            yield saved

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        if refuses_sync_here(self.inner):
            raise loop_bound_error(self.inner, "HistoryView.values_at")
        if not self.lazy:
            saved = self.inner.get_tuple(config)
            return None if saved is None else self._dropped(saved)
        conf = dict(config.get("configurable") or {})
        conf.setdefault("checkpoint_ns", "")
        return next(iter(self.inner.list_stored({"configurable": conf}, load=self._load, limit=1,
                                                inline_max=PREVIEW_MAX)), None)

    async def alist(self, config: Any, *, filter: dict[str, Any] | None = None, before: Any = None,
                    limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        for saved in self.list(config, filter=filter, before=before, limit=limit):
            yield saved

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return self.get_tuple(config)

    def get_delta_channel_history(self, *, config: Any, channels: Sequence[str]) -> Any:
        return self.inner.get_delta_channel_history(config=config, channels=channels)

    async def aget_delta_channel_history(self, *, config: Any, channels: Sequence[str]) -> Any:
        return await self.inner.aget_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: Any, channel: Any = None) -> Any:
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Any) -> ReadSaver:
        inner = self.inner.with_allowlist(extra_allowlist)
        return self if inner is self.inner else ReadSaver(inner, self.cache, light=self.light, listed=self.listed)

    # -- no writing ------------------------------------------------------------------
    def _read_only(self, *_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the history view reads through a read-only saver: write through the graph's own")

    put = put_writes = delete_thread = copy_thread = prune = delete_for_runs = _read_only
    aput = aput_writes = adelete_thread = acopy_thread = aprune = adelete_for_runs = _read_only


class HistoryReader:
    """One thread's history as the view reads it: :meth:`page` (light snapshots for the
    timeline) and :meth:`state` (a checkpoint's full snapshot)."""

    def __init__(self, graph: Any, config: Mapping[str, Any], *, cache: DecodedCache | None = None) -> None:
        self.graph = graph
        self.config = dict(config)
        self.cache = cache or DecodedCache()
        self.light: Any = None
        self.full: Any = None
        saver = getattr(graph, "checkpointer", None)
        if isinstance(saver, BaseCheckpointSaver) and callable(getattr(graph, "copy", None)):
            try:
                self.light = graph.copy(update={"checkpointer": ReadSaver(saver, self.cache, light=True)})
                self.full = graph.copy(update={"checkpointer": ReadSaver(saver, self.cache, light=False)})
            except Exception:  # noqa: BLE001 - a graph that cannot be copied is read as it is
                self.light = self.full = None

    def page(self, *, before: str | None = None, limit: int | None = None) -> Iterator[Any]:
        """Snapshots newest first (``get_state_history``), big values not loaded.

        A checkpoint the planner cannot snapshot without a value left out (a big update
        sent with a resume, say) is read in full on its own, and the light read goes on
        after it."""
        if self.light is None:
            yield from self.graph.get_state_history(self.config, **self._window(before, limit))
            return
        listed = self.light.checkpointer.listed
        while limit is None or limit > 0:
            listed.clear()
            done = 0
            try:
                for snap in self.light.get_state_history(self.config, **self._window(before, limit)):
                    before = _checkpoint_id(snap)
                    limit = None if limit is None else limit - 1
                    done += 1
                    yield snap
                return
            except Exception:  # noqa: BLE001 - a stand-in reached the planner: that checkpoint in full
                if len(listed) <= done:
                    raise  # not a checkpoint's snapshot that failed
                conf = {**(self.config.get("configurable") or {}), "checkpoint_id": listed[done]}
                snap = self.state({**self.config, "configurable": conf})
                before = _checkpoint_id(snap)
                limit = None if limit is None else limit - 1
                yield snap

    def _window(self, before: str | None, limit: int | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {} if limit is None else {"limit": limit}
        if before is not None:
            kwargs["before"] = {"configurable": {**(self.config.get("configurable") or {}), "checkpoint_id": before}}
        return kwargs

    def state(self, config: Mapping[str, Any]) -> Any:
        """The full snapshot at `config` (a checkpoint's config)."""
        return (self.full or self.graph).get_state(dict(config))


def _checkpoint_id(snap: Any) -> str:
    return str(((getattr(snap, "config", None) or {}).get("configurable") or {}).get("checkpoint_id"))

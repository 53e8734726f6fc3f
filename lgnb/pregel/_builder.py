"""`NodeBuilder`: assemble a Pregel node by hand (the low-level API under StateGraph).

    NodeBuilder().subscribe_only("input").do(add_one).write_to("output")

A node is triggered by channel updates (`subscribe_only` / `subscribe_to`), reads some
channels (`read_from`), runs one or more steps (`do`, chained left to right) and writes
its result to channels (`write_to`). `build()` gives the `PregelNode` the loop runs;
`Pregel(nodes={"name": builder, ...})` calls it for you.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from typing_extensions import Self

from lgnb._internal.callable import NodeCallable
from lgnb._internal.context import current_task
from lgnb.pregel._node import PregelNode
from lgnb.types import CachePolicy, RetryPolicy, TimeoutPolicy

if TYPE_CHECKING:
    from lgnb.pregel._task import Task

__all__ = ("NodeBuilder", "ChannelWriteEntry", "PASSTHROUGH")


class _Passthrough:
    """Marker: write the node's return value (after the entry's `mapper`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PASSTHROUGH"


PASSTHROUGH: Any = _Passthrough()


class ChannelWriteEntry(NamedTuple):
    """One write a node makes when it finishes: `value` to `channel`.

    `value` is the node's return value unless given; `mapper` transforms it first;
    `skip_none` drops the write when the value is None.
    """

    channel: str
    value: Any = PASSTHROUGH
    skip_none: bool = False
    mapper: Callable[[Any], Any] | None = None


def _identity(value: Any) -> Any:
    return value


def channel_writer(entries: Sequence[ChannelWriteEntry]) -> Callable[[Task, Any], list[tuple[str, Any]]]:
    """The node writer for `entries`: the (channel, value) pairs for a return value."""
    entries = tuple(entries)

    def write(task: Task, output: Any) -> list[tuple[str, Any]]:
        writes: list[tuple[str, Any]] = []
        for entry in entries:
            value = output if entry.value is PASSTHROUGH else entry.value
            if entry.mapper is not None:
                value = entry.mapper(value)
            if value is None and entry.skip_none:
                continue
            writes.append((entry.channel, value))
        return writes

    write.channels = tuple(e.channel for e in entries)  # type: ignore[attr-defined]  # drawn as edges
    return write


class NodeBuilder:
    """Builds a `PregelNode` step by step; every method returns the builder."""

    __slots__ = (
        "_channels",
        "_triggers",
        "_tags",
        "_metadata",
        "_writes",
        "_steps",
        "_retry_policy",
        "_cache_policy",
        "_timeout",
    )

    def __init__(self) -> None:
        self._channels: str | list[str] = []
        self._triggers: list[str] = []
        self._tags: list[str] = []
        self._metadata: dict[str, Any] = {}
        self._writes: list[ChannelWriteEntry] = []
        self._steps: list[Any] = []
        self._retry_policy: list[RetryPolicy] = []
        self._cache_policy: CachePolicy | None = None
        self._timeout: TimeoutPolicy | None = None

    def subscribe_only(self, channel: str) -> Self:
        """Run when `channel` is updated, with that channel's value (not a dict) as input."""
        if self._channels:
            raise ValueError(
                f"NodeBuilder.subscribe_only({channel!r}): the node already reads "
                f"{self._channels!r}; a node reading one bare channel reads nothing else. "
                "Use subscribe_to(...) for a dict input."
            )
        self._channels = channel
        self._triggers.append(channel)
        return self

    def subscribe_to(self, *channels: str, read: bool = True) -> Self:
        """Run when any of `channels` is updated; the input is a dict of channel values
        (the channels are left out of it with `read=False`)."""
        if isinstance(self._channels, str):
            raise ValueError(
                f"NodeBuilder.subscribe_to{channels!r}: the node already subscribed to the "
                f"single channel {self._channels!r} (subscribe_only); use subscribe_to for all."
            )
        if read:
            self._channels.extend(channels)
        self._triggers.extend(channels)
        return self

    def read_from(self, *channels: str) -> Self:
        """Also read `channels` into the input dict, without being triggered by them."""
        if isinstance(self._channels, str):
            raise ValueError(
                f"NodeBuilder.read_from{channels!r}: a node subscribed with subscribe_only "
                "gets one bare value and cannot read more channels; use subscribe_to."
            )
        self._channels.extend(channels)
        return self

    def do(self, node: Any) -> Self:
        """Add a step: a function, async function, Runnable or compiled graph. Steps run
        in order, each receiving the previous step's result."""
        self._steps.append(node)
        return self

    def write_to(self, *channels: str | ChannelWriteEntry, **kwargs: Any) -> Self:
        """Write the result to `channels`; `name=value` writes a constant, `name=func`
        writes `func(result)`."""
        for c in channels:
            self._writes.append(ChannelWriteEntry(c) if isinstance(c, str) else c)
        for name, value in kwargs.items():
            if callable(value):
                self._writes.append(ChannelWriteEntry(name, mapper=value))
            else:
                self._writes.append(ChannelWriteEntry(name, value=value))
        return self

    def meta(self, *tags: str, **metadata: Any) -> Self:
        """Add tags and metadata (seen by callbacks and in stream metadata)."""
        self._tags.extend(tags)
        self._metadata.update(metadata)
        return self

    def add_retry_policies(self, *policies: RetryPolicy) -> Self:
        """Retry the node on failure by these policies (the first that matches wins)."""
        self._retry_policy.extend(policies)
        return self

    def add_cache_policy(self, policy: CachePolicy) -> Self:
        """Cache the node's writes by input (needs `Pregel(cache=...)`)."""
        self._cache_policy = policy
        return self

    def set_timeout(self, timeout: float | timedelta | TimeoutPolicy | None) -> Self:
        """Limit each attempt's time (seconds, a timedelta, or a `TimeoutPolicy`)."""
        self._timeout = TimeoutPolicy.coerce(timeout)
        return self

    def build(self, name: str = "") -> PregelNode:
        """The node. `name` is normally filled in by `Pregel(nodes={name: builder})`."""
        node = PregelNode(
            name=name,
            triggers=list(self._triggers),
            channels=self._channels if isinstance(self._channels, str) else list(self._channels),
            bound=bound_for(self._steps, name),
            writers=[channel_writer(self._writes)] if self._writes else [],
            metadata=dict(self._metadata) or None,
            tags=list(self._tags),
            retry_policy=tuple(self._retry_policy),
        )
        node.cache_policy = self._cache_policy
        if self._timeout is not None and "timeout" in PregelNode.__slots__:
            node.timeout = self._timeout
        return node


def bound_for(steps: Sequence[Any], name: str) -> NodeCallable:
    """One callable for a node's `do()` steps (identity when there are none)."""
    if not steps:
        return NodeCallable(_identity, name=name)
    if len(steps) == 1:
        return NodeCallable(steps[0], name=name)
    parts = [NodeCallable(s, name=name) for s in steps]
    if any(p.is_async for p in parts):

        async def run_steps_async(value: Any) -> Any:
            ctx = current_task()
            for part in parts:
                if part.is_async or part.func is None:
                    value = await part.acall(value, ctx)
                else:
                    value = part.call(value, ctx)
            return value

        return NodeCallable(run_steps_async, name=name)

    def run_steps(value: Any) -> Any:
        ctx = current_task()
        for part in parts:
            value = part.call(value, ctx)
        return value

    return NodeCallable(run_steps, name=name)

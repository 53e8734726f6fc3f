"""What `Pregel(...)` does with its arguments before the first run.

`NodeBuilder`s are built and named, the reserved `__pregel_tasks` channel (the `Send`
queue) is added, channels learn their key, and the whole is validated: every channel a
node reads or is triggered by exists, the input channels trigger some node, the output
channels exist, interrupt names are nodes. Errors name the node or channel and the fix.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import RESERVED, TASKS
from lgnb.channels.base import BaseChannel
from lgnb.channels.topic import Topic
from lgnb.managed import is_managed_value
from lgnb.pregel._builder import NodeBuilder
from lgnb.pregel._node import PregelNode, check_timeout_supported
from lgnb.types import RetryPolicy, Send

if TYPE_CHECKING:
    from lgnb.pregel.main import Pregel

__all__ = ("Assembled", "assemble", "validate_graph")

# the help line under LangGraph's "... is reserved" message (its first line, kept verbatim)
_RENAME = "Rename this {what}: LangGraph and lgnb use that name for themselves."


@dataclass
class Assembled:
    nodes: dict[str, PregelNode]
    channels: dict[str, BaseChannel]
    stream_channels: str | list[str]
    state_keys: list[str]
    retry_policy: tuple[RetryPolicy, ...]
    context_schema: Any
    managed: dict[str, Any]


def assemble(
    *,
    nodes: Mapping[str, PregelNode | NodeBuilder],
    channels: Mapping[str, Any] | None,
    input_channels: str | Sequence[str],
    output_channels: str | Sequence[str],
    stream_channels: str | Sequence[str] | None,
    state_keys: Sequence[str] | None,
    interrupt_before_nodes: Any,
    interrupt_after_nodes: Any,
    context_schema: Any,
    retry_policy: Any,
    checkpointer: Any,
    validate: bool,
    deprecated_kwargs: dict[str, Any],
) -> Assembled:
    """Normalize `Pregel.__init__`'s arguments (see the module docstring)."""
    if "config_type" in deprecated_kwargs:
        from lgnb.warnings import LangGraphDeprecatedSinceV10

        warnings.warn(
            "`config_type` is deprecated and will be removed. Please use `context_schema` instead.",
            category=LangGraphDeprecatedSinceV10,
            stacklevel=4,
        )
        if context_schema is None:
            context_schema = deprecated_kwargs.pop("config_type")
    _check_checkpointer(checkpointer)
    built: dict[str, PregelNode] = {}
    for name, node in nodes.items():
        if isinstance(node, NodeBuilder):
            node = node.build(name)
        elif not isinstance(node, PregelNode):
            raise TypeError(
                f"Pregel node {name!r} is a {type(node).__name__}: pass a PregelNode or a "
                "NodeBuilder (e.g. NodeBuilder().subscribe_only('in').do(fn).write_to('out'))."
            )
        if not node.name:
            node.name = name
            if node.bound is not None and not getattr(node.bound, "name", None):
                node.bound.name = name
        built[name] = node
    channels = channels or {}
    if TASKS in channels and not isinstance(channels[TASKS], Topic):
        raise ValueError(
            f"Channel '{TASKS}' is reserved and cannot be used in the graph.\n"
            "It is the queue of Send packets: rename your state key or channel."
        )
    chans: dict[str, BaseChannel] = {}
    managed: dict[str, Any] = {}
    for key, channel in channels.items():
        if is_managed_value(channel):
            managed[key] = channel
            continue
        if not getattr(channel, "key", ""):
            channel.key = key
        chans[key] = channel
    if TASKS not in chans:
        chans[TASKS] = Topic(Send, accumulate=False, key=TASKS)
    if managed:
        for node in built.values():
            if isinstance(node.channels, list):
                node.managed = {**node.managed, **{k: managed[k] for k in node.channels if k in managed}}
                node.channels = [k for k in node.channels if k not in managed]
    if stream_channels is None:
        stream_channels = [k for k in chans]
    elif not isinstance(stream_channels, str):
        stream_channels = list(stream_channels)
    if state_keys is None:
        state_keys = [k for k in chans if k != TASKS]
    policies = (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy or ())
    parts = Assembled(
        nodes=built,
        channels=chans,
        stream_channels=stream_channels,
        state_keys=list(state_keys),
        retry_policy=policies,
        context_schema=context_schema,
        managed=managed,
    )
    if validate:
        _validate(
            parts.nodes,
            parts.channels,
            managed,
            input_channels,
            output_channels,
            parts.stream_channels,
            interrupt_before_nodes,
            interrupt_after_nodes,
        )
    return parts


def _check_checkpointer(checkpointer: Any) -> None:
    if checkpointer in (None, True, False):
        return
    from langgraph.checkpoint.base import BaseCheckpointSaver

    if not isinstance(checkpointer, BaseCheckpointSaver):
        hint = ""
        if isinstance(checkpointer, type) and issubclass(checkpointer, BaseCheckpointSaver):
            hint = (
                f"\n`{checkpointer.__name__}` is the saver class: pass an instance, "
                f"`compile(checkpointer={checkpointer.__name__}())`."
            )
        raise TypeError(
            "Invalid checkpointer provided. Expected an instance of `BaseCheckpointSaver`, "
            f"`True`, `False`, or `None`. Received {type(checkpointer).__name__}. "
            "Pass a proper saver (e.g., InMemorySaver, AsyncPostgresSaver)." + hint
        )


def validate_graph(graph: Pregel) -> None:
    """`Pregel.validate()`: the checks of `assemble` on an existing graph."""
    _validate(
        graph.nodes,
        graph.channels,
        {},
        graph.input_channels,
        graph.output_channels,
        graph.stream_channels,
        graph.interrupt_before_nodes,
        graph.interrupt_after_nodes,
    )


def _known(channels: Mapping[str, Any]) -> str:
    return repr(sorted(channels))[:100]


def _validate(
    nodes: Mapping[str, PregelNode],
    channels: Mapping[str, BaseChannel],
    managed: Mapping[str, Any],
    input_channels: str | Sequence[str],
    output_channels: str | Sequence[str],
    stream_channels: str | Sequence[str] | None,
    interrupt_before: Any,
    interrupt_after: Any,
) -> None:
    for chan in channels:
        if chan in RESERVED:
            raise ValueError(f"Channel name '{chan}' is reserved\n{_RENAME.format(what='state key or channel')}")
    for name in managed:
        if name in RESERVED:
            raise ValueError(f"Managed name '{name}' is reserved\n{_RENAME.format(what='managed value')}")
    subscribed: set[str] = set()
    # nodes of one schema share one read list (graph/_compile.py): check each list once,
    # not once per node, or compiling n nodes over k keys is O(n·k). Only lists the nodes
    # hold are remembered (by id: they stay alive, so no id is reused meanwhile)
    checked: set[int] = set()
    for name, node in nodes.items():
        if name in RESERVED:
            raise ValueError(f"Node name '{name}' is reserved\n{_RENAME.format(what='node')}")
        if node.timeout is not None:
            check_timeout_supported(node)
        subscribed.update(node.triggers)
        reads = [node.channels] if isinstance(node.channels, str) else node.channels
        shared = not node.managed and reads is node.channels
        if shared and id(reads) in checked:
            continue
        for chan in reads:
            if chan not in channels and chan not in managed and chan not in node.managed:
                raise ValueError(
                    f"Node {name} reads channel '{chan}' not in known channels: '{_known(channels)}'"
                )
        if shared:
            checked.add(id(reads))
    for chan in subscribed:
        if chan not in channels:
            raise ValueError(
                f"Subscribed channel '{chan}' not in known channels: '{_known(channels)}'"
            )
    if isinstance(input_channels, str):
        if input_channels not in channels:
            raise ValueError(
                f"Input channel '{input_channels}' not in known channels: '{_known(channels)}'"
            )
        if input_channels not in subscribed:
            raise ValueError(
                f"Input channel {input_channels} is not subscribed to by any node"
            )
    else:
        for chan in input_channels:
            if chan not in channels:
                raise ValueError(f"Input channel '{chan}' not in '{_known(channels)}'")
        if all(chan not in subscribed for chan in input_channels):
            raise ValueError(
                f"None of the input channels {input_channels} are subscribed to by any node"
            )
    outputs: set[str] = set()
    for group in (output_channels, stream_channels):
        if isinstance(group, str):
            outputs.add(group)
        elif group is not None:
            outputs.update(group)
    for chan in outputs:
        if chan not in channels:
            raise ValueError(
                f"Output channel '{chan}' not in known channels: '{_known(channels)}'"
            )
    for names in (interrupt_after, interrupt_before):
        if names == "*":
            continue
        for n in [names] if isinstance(names, str) else names:
            if n not in nodes:
                raise ValueError(f"Node {n} not in nodes")

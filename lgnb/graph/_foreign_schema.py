"""LangGraph's own state annotations met in a schema lgnb compiles.

A state class written for LangGraph, or one that half of a port still imports from it,
annotates keys with LangGraph's objects: `Annotated[list, langgraph.graph.message.add_messages]`,
`remaining_steps: langgraph.managed.RemainingSteps`, `Annotated[list, langgraph.channels.Topic(str)]`.
Graphs that libraries build (`create_react_agent`'s `AgentState`) do too. Each is taken as
lgnb's equivalent, which behaves the same: LangGraph's default `add_messages` as lgnb's
messages channel, its managed values as lgnb's, its channel classes as lgnb's. A LangGraph
object with no lgnb equivalent is a clear error rather than a silent last-value key.

Detection is by module and class name, so nothing here imports `langgraph`.
"""

from __future__ import annotations

from typing import Any

__all__ = ("is_langgraph_add_messages", "translate")

_MANAGED = {"RemainingStepsManager", "IsLastStepManager"}
_LG_MESSAGE = "langgraph.graph.message"


def is_langgraph_add_messages(reducer: Any) -> bool:
    """True for LangGraph's `add_messages` with its default format (the decorated
    function itself, or `add_messages()` / `add_messages(format=None)`)."""
    if getattr(reducer, "__module__", None) == _LG_MESSAGE:
        return getattr(reducer, "__qualname__", "").startswith("_add_messages_wrapper.")
    func = getattr(reducer, "func", None)
    return (
        getattr(func, "__module__", None) == _LG_MESSAGE
        and getattr(func, "__name__", None) == "add_messages"
        and not getattr(reducer, "args", ())
        and not (getattr(reducer, "keywords", None) or {}).get("format")
    )


def translate(item: Any, *, key: str) -> Any:
    """lgnb's counterpart of a LangGraph channel (class or instance) or managed value
    class found in `key`'s annotation; None when `item` is not LangGraph's."""
    module = getattr(item if isinstance(item, type) else type(item), "__module__", "") or ""
    if module.startswith("langgraph.managed"):
        name = item.__name__ if isinstance(item, type) else type(item).__name__
        if name in _MANAGED:
            from lgnb.managed import is_last_step

            return getattr(is_last_step, name)
        raise _unknown(item, key)
    if not module.startswith("langgraph.channels"):
        return None
    from lgnb import channels

    if isinstance(item, type):
        ours = getattr(channels, item.__name__, None)
        if ours is None:
            raise _unknown(item, key)
        return ours
    name = type(item).__name__
    made: Any
    if name in ("LastValue", "AnyValue", "LastValueAfterFinish"):
        made = getattr(channels, name)(item.typ)
    elif name in ("EphemeralValue", "UntrackedValue"):
        made = getattr(channels, name)(item.typ, item.guard)
    elif name == "Topic":
        made = channels.Topic(item.typ, item.accumulate)
    elif name == "BinaryOperatorAggregate":
        made = channels.BinaryOperatorAggregate(item.typ, item.operator)
    elif name == "DeltaChannel":
        made = channels.DeltaChannel(
            item.reducer, item.typ, snapshot_frequency=item.snapshot_frequency
        )
    else:
        raise _unknown(item, key)
    return made


def _unknown(item: Any, key: str) -> ValueError:
    return ValueError(
        f"State key {key!r} is annotated with LangGraph's {item!r}, which lgnb has no "
        "equivalent of: annotate it with lgnb's channels or managed values "
        "(lgnb.channels, lgnb.managed) instead."
    )

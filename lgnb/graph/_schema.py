"""From a state schema (TypedDict, dataclass, pydantic model) to channels.

`Annotated[T, reducer]` fields become BinaryOperatorAggregate channels, fields annotated
with a channel become that channel, managed values (RemainingSteps) are computed by the
runtime, and every other field is a LastValue.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from inspect import isclass, signature
from typing import Any, get_args, get_origin, get_type_hints

from typing_extensions import NotRequired, Required

from lgnb._internal.constants import ROOT
from lgnb._internal.pydantic_loaded import is_model_class
from lgnb.channels.base import BaseChannel
from lgnb.channels.binop import BinaryOperatorAggregate
from lgnb.channels.delta import DeltaChannel
from lgnb.channels.last_value import LastValue
from lgnb.channels.messages import MessagesChannel, is_plain_add_messages
from lgnb.graph._foreign_schema import is_langgraph_add_messages, translate
from lgnb.managed import ManagedValue, is_managed_value

__all__ = ("schema_channels", "schema_mapper")


def schema_channels(
    schema: Any,
) -> tuple[dict[str, BaseChannel], dict[str, type[ManagedValue]], dict[str, Any]]:
    """Channels, managed values and type hints declared by `schema`."""
    if not hasattr(schema, "__annotations__") or schema in (dict, Any):
        return {ROOT: _channel(ROOT, schema, allow_managed=False)}, {}, {}
    hints = get_type_hints(schema, include_extras=True)
    channels: dict[str, BaseChannel] = {}
    managed: dict[str, type[ManagedValue]] = {}
    for name, typ in hints.items():
        if name == "__slots__":
            continue
        found = _channel(name, typ)
        if isinstance(found, BaseChannel):
            channels[name] = found
        else:
            managed[name] = found
    return channels, managed, hints


def _unwrap_required(annotation: Any) -> Any:
    if get_origin(annotation) in (Required, NotRequired):
        return annotation.__args__[0]
    return annotation


def _managed_in(name: str, annotation: Any) -> Any:
    """The managed value `annotation` declares, looked for as LangGraph does: the last
    `Annotated` item, else inside the first argument of a generic (`Optional[RemainingSteps]`,
    `NotRequired[IsLastStep | None]`)."""
    meta = getattr(annotation, "__metadata__", None)
    if meta:
        decoration = _ours(get_origin(meta[-1]) or meta[-1], name)
        if is_managed_value(decoration):
            return decoration
    args = get_args(annotation) if get_origin(annotation) is not None else ()
    return _managed_in(name, args[0]) if args else None


def _channel(name: str, annotation: Any, *, allow_managed: bool = True) -> Any:
    managed = _managed_in(name, annotation)
    if managed is not None:
        if not allow_managed:
            raise ValueError(f"{annotation} is not allowed here: it is a managed value")
        return managed
    annotation = _unwrap_required(annotation)
    meta = getattr(annotation, "__metadata__", None)
    if meta:
        meta = tuple(_ours(item, name) for item in meta)
        for item in meta:
            if isinstance(item, DeltaChannel):
                # one DeltaChannel instance may annotate several keys: give each its own,
                # typed by the annotation (`Annotated[dict, DeltaChannel(r)]` folds into dict)
                channel = item.retyped(_unwrap_required(getattr(annotation, "__origin__", list)))
                channel.key = name
                return channel
            if isinstance(item, BaseChannel):
                item.key = name
                return item
            if isclass(item) and issubclass(item, BaseChannel):
                made = item(getattr(annotation, "__origin__", annotation))
                made.key = name
                return made
        reducer = meta[-1]
        if callable(reducer):
            try:
                params = list(signature(reducer).parameters.values())
            except (TypeError, ValueError):
                params = []
            positional = sum(
                p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params
            )
            if positional != 2:
                raise ValueError(
                    f"Invalid reducer signature for state key '{name}'. Expected (a, b) -> c. "
                    f"Got {signature(reducer)}"
                )
            if is_plain_add_messages(reducer):
                return MessagesChannel(annotation, reducer, key=name)
            if is_langgraph_add_messages(reducer):  # the same rules: lgnb's channel
                from lgnb.graph.message import add_messages

                return MessagesChannel(annotation, add_messages, key=name)
            return BinaryOperatorAggregate(annotation, reducer, key=name)
    return LastValue(annotation, key=name)


def _ours(item: Any, key: str) -> Any:
    """`item`, or lgnb's counterpart of it when it is LangGraph's channel or managed value."""
    found = translate(item, key=key)
    return item if found is None else found


def schema_mapper(schema: Any, keys: list[str]) -> Callable[[dict], Any] | None:
    """How to turn the dict a node reads into its declared input type (pydantic/dataclass)."""
    if keys == [ROOT]:
        return None
    if isclass(schema) and (is_model_class(schema) or dataclasses.is_dataclass(schema)):
        return partial(_coerce, schema)
    return None


def _coerce(schema: type, values: dict[str, Any]) -> Any:
    return schema(**values)

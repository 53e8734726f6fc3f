"""JSON schemas of a graph's input and output, as LangGraph computes them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter, create_model
from typing_extensions import is_typeddict

from lgnb._internal.constants import ROOT
from lgnb.channels.base import BaseChannel

__all__ = ("graph_json_schema",)


def graph_json_schema(graph: Any, which: str) -> dict[str, Any]:
    builder = getattr(graph, "builder", None)
    if builder is None:
        return {"title": graph.get_name(which.capitalize()), "type": "object"}
    typ = builder.input_schema if which == "input" else builder.output_schema
    name = graph.get_name("Input" if which == "input" else "Output")
    if isinstance(typ, type) and issubclass(typ, BaseModel):
        return typ.model_json_schema()
    if is_typeddict(typ):
        return TypeAdapter(typ).json_schema()
    keys = list(builder.schemas[typ])
    channels = builder.channels
    if keys == [ROOT]:
        return create_model(name, root=(channels[ROOT].UpdateType, None)).model_json_schema()
    fields = {
        k: (channels[k].UpdateType, None)
        for k in keys
        if k in channels and isinstance(channels[k], BaseChannel)
    }
    return create_model(name, **fields).model_json_schema()  # type: ignore[call-overload]

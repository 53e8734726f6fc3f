"""JSON schemas of a graph's input and output, as LangGraph computes them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, create_model
from typing_extensions import is_typeddict

from lgnb._internal.constants import ROOT
from lgnb.channels.base import BaseChannel

__all__ = ("graph_json_schema",)


def graph_json_schema(graph: Any, which: str) -> dict[str, Any]:
    builder = getattr(graph, "builder", None)
    if builder is None:
        return _channels_json_schema(graph, which)
    typ = builder.input_schema if which == "input" else builder.output_schema
    name = graph.get_name("Input" if which == "input" else "Output")
    if isinstance(typ, type) and issubclass(typ, BaseModel):
        return typ.model_json_schema()
    if is_typeddict(typ):
        return TypeAdapter(typ).json_schema()
    keys = list(builder.schemas[typ])
    channels = builder.channels
    if keys == [ROOT]:
        from pydantic import RootModel

        root_type = channels[ROOT].UpdateType
        root: type[BaseModel] = type(  # a RootModel over a type known only at run time
            name, (RootModel[root_type],), {"__annotations__": {"root": root_type}, "root": None})  # type: ignore[valid-type]
        return root.model_json_schema()
    fields = {
        k: (channels[k].UpdateType, _field_default(k, channels[k].UpdateType, typ))
        for k in keys
        if k in channels and isinstance(channels[k], BaseChannel)
    }
    return create_model(name, **fields).model_json_schema()  # type: ignore[call-overload]


def _field_default(name: str, typ: Any, schema: Any) -> Any:
    """A state key's default in the schema: `...` (required) or a value, as LangGraph
    decides it: Required/NotRequired and `total=False` first, then a dataclass field's
    default, then Optional types default to None, others are required."""
    import dataclasses

    optional_keys: frozenset[str] = getattr(schema, "__optional_keys__", frozenset())
    marked = _required_marker(typ)
    if name in optional_keys:
        return ... if marked else None
    if marked is not None:
        return ... if marked else None
    if dataclasses.is_dataclass(schema):
        for f in dataclasses.fields(schema):
            if f.name == name:
                if f.default is not dataclasses.MISSING and f.default is not ...:
                    return f.default
                if f.default_factory is not dataclasses.MISSING:
                    return f.default_factory()
    return None if _is_optional(typ) else ...


def _required_marker(typ: Any) -> bool | None:
    """True for Required[...], False for NotRequired[...], None when unmarked."""
    from typing import get_origin

    from typing_extensions import NotRequired, Required

    origin = get_origin(typ)
    if origin is Required:
        return True
    if origin is NotRequired:
        return False
    if getattr(origin, "__args__", None) or origin is Annotated:
        return _required_marker(typ.__args__[0])
    return None


def _is_optional(typ: Any) -> bool:
    """Whether `typ` admits None (Optional, a Union with None, PEP 604 `X | None`)."""
    import types
    from typing import Union, get_origin

    if isinstance(typ, types.UnionType):
        return any(a is type(None) or _is_optional(a) for a in typ.__args__)
    origin = get_origin(typ)
    if origin is Union:
        return any(a is type(None) or _is_optional(a) for a in typ.__args__)
    if origin is Annotated:
        return _is_optional(typ.__args__[0])
    if getattr(typ, "__bound__", None) is not None:  # a TypeVar bound to an Optional
        return _is_optional(typ.__bound__)
    return typ is None


def _channels_json_schema(graph: Any, which: str) -> dict[str, Any]:
    """A graph without a builder (an entrypoint, a low-level Pregel): the schema of its
    input or output channel(s), titled `<name>Input` / `<name>Output`."""
    keys = graph.input_channels if which == "input" else graph.output_channels
    name = graph.get_name(which.capitalize())
    channels = graph.channels
    if isinstance(keys, str):
        from pydantic import RootModel

        typ = getattr(channels.get(keys), "UpdateType", Any)
        model: type[BaseModel] = type(name, (RootModel[typ],), {})  # type: ignore[valid-type]
        return model.model_json_schema()
    fields = {k: (getattr(channels[k], "UpdateType", Any), None) for k in keys if k in channels}
    return create_model(name, **fields).model_json_schema()  # type: ignore[call-overload]


def context_json_schema(graph: Any) -> dict[str, Any] | None:
    """JSON schema of the graph's `context_schema` (None when it has none)."""
    import dataclasses

    schema = graph.context_schema
    if schema is None:
        return None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if is_typeddict(schema) or dataclasses.is_dataclass(schema):
        return TypeAdapter(schema).json_schema()
    raise ValueError(
        f"Invalid context schema type: {schema}. Must be a BaseModel, TypedDict or dataclass."
    )

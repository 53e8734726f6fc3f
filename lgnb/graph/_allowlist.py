"""The types a graph may store in checkpoints, for strict (allowlist) deserialization.

At compile time the graph tells its saver which classes its state can hold — the
pydantic models, dataclasses, enums and named tuples its schemas name, plus lgnb's own
value types — so a checkpoint can be loaded without importing anything else.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections import deque
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from typing_extensions import NotRequired, Required, is_typeddict

from lgnb._internal.pydantic_loaded import is_model_class
from lgnb.types import PLAIN_DATA_TYPES, _register_plain_data

__all__ = (
    "allow_response_schema",
    "graph_allowlist",
    "remember_allowlist",
    "saver_for",
    "with_allowlist",
)

_LGNB_TYPES = {("lgnb.types", name) for name in PLAIN_DATA_TYPES}


def _hints(typ: Any) -> dict[str, Any]:
    try:
        return get_type_hints(typ, include_extras=True)
    except Exception:
        return {}


def _collect(typ: Any, out: set[tuple[str, ...]], seen: set[int]) -> None:
    if id(typ) in seen or typ is Any or typ is None or typ is Literal:
        return
    seen.add(id(typ))
    if isinstance(typ, types.UnionType):
        for arg in typ.__args__:
            _collect(arg, out, seen)
        return
    origin = get_origin(typ)
    if origin in (Union, Annotated, Required, NotRequired, list, set, tuple, dict, deque, frozenset):
        args = get_args(typ)
        for arg in args[:1] if origin in (Annotated, Required, NotRequired) else args:
            _collect(arg, out, seen)
        return
    if origin is Literal:
        return
    if getattr(origin, "__module__", None) in ("collections.abc", "collections", "typing"):
        # Sequence[Point], Mapping[str, Profile], OrderedDict[...]: the classes inside
        for arg in get_args(typ):
            _collect(arg, out, seen)
        return
    if hasattr(typ, "__supertype__"):
        _collect(typ.__supertype__, out, seen)
        return
    if is_typeddict(typ):
        for field in _hints(typ).values():
            _collect(field, out, seen)
        return
    if is_model_class(typ):
        out.add((typ.__module__, typ.__name__))
        # the annotations pydantic resolved (string ones naming local classes included)
        fields = getattr(typ, "model_fields", None)
        hints = [f.annotation for f in fields.values()] if fields else list(_hints(typ).values())
        for field in hints:
            _collect(field, out, seen)
        return
    if isinstance(typ, type) and dataclasses.is_dataclass(typ):
        out.add((typ.__module__, typ.__name__))
        for field in _hints(typ).values():
            _collect(field, out, seen)
        return
    if isinstance(typ, type) and issubclass(typ, Enum):
        out.add((typ.__module__, typ.__name__))
        return
    if isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields"):
        # a NamedTuple (typing's or collections'): stored by name, as LangGraph's serializer does
        out.add((typ.__module__, typ.__name__))
        for field in _hints(typ).values():
            _collect(field, out, seen)


def graph_allowlist(schemas: list[Any]) -> set[tuple[str, ...]]:
    """Module/class pairs the graph's state may contain."""
    out: set[tuple[str, ...]] = set(_LGNB_TYPES)
    seen: set[int] = set()
    for schema in schemas:
        if schema is not None:
            _collect(schema, out, seen)
    return out


def register_safe_types() -> None:
    """Tell langgraph-checkpoint that lgnb's value types are plain data, like LangGraph's
    (done when `lgnb.types` is imported; again here in case the list was replaced)."""
    _register_plain_data()


def with_allowlist(checkpointer: Any, schemas: list[Any]) -> Any:
    """The saver, told which classes to accept when loading (if it supports allowlists)."""
    if checkpointer in (None, True, False):
        return checkpointer
    register_safe_types()
    if not hasattr(checkpointer, "with_allowlist"):
        return checkpointer
    clone = checkpointer.with_allowlist(graph_allowlist(schemas))
    if clone is not checkpointer and _is_strict(getattr(checkpointer, "serde", None)):
        # lgnb's savers refuse what they were not told of: the saver the user holds
        # learns the classes too, so reading it directly (`saver.get_tuple(config)`,
        # `saver.list(config)`, as LangGraph's docs do) loads what its graphs store
        checkpointer.serde = clone.serde
        return checkpointer
    return clone


def _is_strict(serde: Any) -> bool:
    from lgnb.checkpoint.serde import StrictSerializer

    inner = getattr(serde, "serde", serde)  # (an EncryptedSerializer around it)
    return isinstance(serde, StrictSerializer) or isinstance(inner, StrictSerializer)


def remember_allowlist(graph: Any, schemas: list[Any]) -> None:
    """Record on a compiled graph the classes its schemas name, for `saver_for`."""
    graph.serde_allowlist = frozenset(graph_allowlist(schemas))


@functools.lru_cache(maxsize=256)
def _schema_types(schema: Any) -> frozenset[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    _collect(schema, out, set())
    return frozenset(out)


def allow_response_schema(loop: Any, schema: Any) -> None:
    """Let the running graphs store the classes an `interrupt(response_schema=...)` names.

    The validated resume value (a pydantic model, a dataclass...) is what the node gets
    back, and so what it may write to state; a schema that says `Any` cannot name it at
    compile time. `interrupt()` is running code, so its schema is as trusted as the
    graph's own: the run's graph and the graphs enclosing it (whose state may receive
    the value) accept its classes from now on, for this run's saves and later loads.
    A stored row still cannot name anything else.
    """
    try:
        extra = _schema_types(schema)
    except TypeError:  # an unhashable schema object: no cache
        found: set[tuple[str, ...]] = set()
        _collect(schema, found, set())
        extra = frozenset(found)
    if not extra:
        return
    while loop is not None:
        graph = loop.graph
        allow = vars(graph).get("serde_allowlist")
        if allow is None or not extra <= allow:
            graph.serde_allowlist = frozenset(allow or _LGNB_TYPES) | extra
        saver = loop.checkpointer
        if saver is not None and hasattr(saver, "with_allowlist"):
            loop.checkpointer = saver.with_allowlist(extra)  # itself when nothing is new
        loop = loop.parent_ctx.loop if loop.parent_ctx is not None else None


def saver_for(checkpointer: Any, graph: Any) -> Any:
    """`checkpointer` as `graph` uses it: also accepting the classes of `graph`'s schemas.

    A graph compiled with its own saver got them at compile time; a subgraph (a node,
    or a graph invoked inside a node) runs on its parent's saver, which was told only
    the parent's classes. The clone is kept on the graph while the saver is the same.
    """
    allow = vars(graph).get("serde_allowlist")
    if not allow or checkpointer in (None, True, False) or not hasattr(checkpointer, "with_allowlist"):
        return checkpointer
    cached = vars(graph).get("_saver_for")
    if cached is not None and cached[0] is checkpointer and cached[2] is allow:
        return cached[1]
    register_safe_types()
    clone = checkpointer.with_allowlist(allow)
    graph._saver_for = (checkpointer, clone, allow)  # the allowlist grows at run time
    return clone

"""Fast positional construction of frozen, slotted dataclasses on the engine's hot path.

Why: a frozen dataclass's generated `__init__` sets each field through
`object.__setattr__` (the class's own `__setattr__` refuses), ~80 ns a field. Every task
that hands LangChain its config builds a `Runtime` and an `ExecutionInfo` (15 fields),
which cost ~1.3 µs of a ReAct node's engine overhead that way. Setting the slots through
their member descriptors directly keeps the classes frozen to users and costs a third.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

__all__ = ("slot_builder",)


def slot_builder(cls: type) -> Callable[..., Any]:
    """A function `build(*fields)` returning an instance of `cls` with every field given
    positionally, in declaration order, without running `__init__`.

    `cls` must be a slotted dataclass whose fields all take part in `__init__` and that
    has no `__post_init__`: the builder would skip them, so such a class is refused.
    """
    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
        raise TypeError(f"slot_builder needs a slotted dataclass, got {cls!r}")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"slot_builder cannot build {cls.__name__}: it has __post_init__")
    fields = dataclasses.fields(cls)
    if any(not f.init for f in fields):
        raise TypeError(f"slot_builder cannot build {cls.__name__}: a field has init=False")
    names = [f.name for f in fields]
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body = [f"def build({', '.join(names)}):", "    obj = _new(_cls)"]
    for i, name in enumerate(names):
        namespace[f"_set{i}"] = cls.__dict__[name].__set__
        body.append(f"    _set{i}(obj, {name})")
    body.append("    return obj")
    exec("\n".join(body), namespace)  # names are the dataclass's own identifiers
    build: Callable[..., Any] = namespace["build"]
    build.__qualname__ = f"{cls.__name__}.<slot_builder>"
    return build

"""lgnb's control-flow exceptions, caught by code written against LangGraph's classes.

Library code built on LangGraph (LangChain 1.x's agent middleware: `ToolRetryMiddleware`,
`ModelRetryMiddleware`, `ModelFallbackMiddleware`, `ToolErrorMiddleware`; `langgraph.prebuilt`)
lets the engine's signals through with `except langgraph.errors.GraphBubbleUp: raise` ahead
of an `except Exception` that retries, falls back or turns the error into a message. An
lgnb `GraphInterrupt` (the user's `interrupt()` in a tool, an interrupted subgraph called
inside a node) is not that class, so such code swallowed it: a tool that asked a human was
retried and its question became an error message.

So, once `langgraph.errors` is loaded (the only case in which any code can catch its
classes), each lgnb `GraphBubbleUp` is created as its *twin*: a subclass of the lgnb class
and of LangGraph's class of the same role (`GraphInterrupt`, `ParentCommand`, else
`GraphBubbleUp`). The twin is the lgnb class in every respect (name, `isinstance`, the
engine's handling, pickling, which yields the lgnb class); it only also matches LangGraph's
`except` clauses. Without LangGraph loaded nothing changes and nothing is imported.

The engine's errors a user catches are twinned the same way (`GraphRecursionError`,
`InvalidUpdateError`, `EmptyInputError`, `NodeTimeoutError`, ...): a program that ported
its graphs but kept `except langgraph.errors.GraphRecursionError` around a call, as agent
code written against LangGraph does, still catches them.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ("twin_of",)

_TWINS: dict[type, type] = {}


def twin_of(cls: type[BaseException]) -> type[BaseException]:
    """The class to instantiate for lgnb's `cls`: its LangGraph twin when `langgraph.errors`
    is loaded, else `cls` itself. Its role: the LangGraph class named as the nearest class of
    `lgnb.errors` in its MRO (a user's subclass of `GraphInterrupt` plays `GraphInterrupt`)."""
    twin = _TWINS.get(cls)
    if twin is not None:
        return twin
    errors = sys.modules.get("langgraph.errors")
    if errors is None or getattr(errors, "UnknownInterruptError", None) is None:
        return cls  # not loaded (or still loading)
    base: Any = None
    for klass in cls.__mro__:
        if klass.__module__ == "lgnb.errors":
            base = getattr(errors, klass.__name__, None)
            if isinstance(base, type) and issubclass(base, BaseException):
                break
            base = None
    if base is None or issubclass(cls, base):  # no such role; or a twin already
        return cls
    twin = type(cls.__name__, (cls, _shim(base)), {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "__reduce__": _reducer(cls),
    })
    # two threads creating the first one at once: both get the one stored first
    return _TWINS.setdefault(cls, twin)


_SHIMS: dict[type, type] = {}


def _shim(base: type[BaseException]) -> type[BaseException]:
    """LangGraph's `base` behind an `__init__` that passes over LangGraph's classes: in a
    twin they come after lgnb's in the MRO, and their `__init__` takes other arguments than
    lgnb's (and a user's cooperative mixin's) pass up; the chain goes on past them."""
    shim = _SHIMS.get(base)
    if shim is not None:
        return shim

    def __init__(self: BaseException, *args: Any, **kwargs: Any) -> None:
        mro = type(self).__mro__
        last = mro.index(shim)
        while mro[last + 1].__module__.startswith("langgraph."):
            last += 1
        super(mro[last], self).__init__(*args, **kwargs)  # type: ignore[arg-type]

    shim = type(base.__name__, (base,), {"__module__": __name__, "__init__": __init__})
    return _SHIMS.setdefault(base, shim)


def _reducer(cls: type[BaseException]) -> Any:
    def __reduce__(self: BaseException) -> Any:  # pickled as the lgnb class it twins,
        # by that class's own `__reduce__` (a user's subclass may define one)
        reduced = cls.__reduce__(self)
        if isinstance(reduced, tuple) and reduced and reduced[0] is type(self):
            reduced = (cls, *reduced[1:])
        return reduced

    return __reduce__

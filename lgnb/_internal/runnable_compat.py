"""Compiled graphs are LangChain Runnables — without importing LangChain's Runnable early.

`langchain_core.runnables.base` pulls in its tracers and LangSmith (about a second in
a fresh interpreter). lgnb graphs behave as Runnables (`isinstance`, `|`, `batch`,
`astream_events`) from the moment that module is loaded by anyone, and `import lgnb`
does not load it:

- `Pregel` is registered as a virtual subclass of `Runnable` right after the module is
  imported (or at once, when it already is); `register_when_loaded` does the same for
  any ABC of a module lgnb must not import early (LangGraph's `ManagedValue`);
- Runnable methods that `Pregel` does not define are looked up on `Runnable` on first
  use and bound to the graph (`runnable_attribute`).
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

__all__ = ("register_when_loaded", "runnable_attribute")

_MODULE = "langchain_core.runnables.base"
_pending: dict[str, list[tuple[str, type]]] = {}
"""Module name -> (base class attribute, class to register under it), not yet done."""
_MISSING = object()


def _register(module: Any) -> None:
    for base_name, cls in _pending.pop(module.__name__, ()):
        getattr(module, base_name).register(cls)


class _Loader(importlib.abc.Loader):
    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        _register(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in _pending:
            return None
        sys.meta_path.remove(self)  # find the module's real spec without coming back here
        try:
            from importlib.util import find_spec

            spec = find_spec(name)
        finally:
            if _pending:
                sys.meta_path.insert(0, self)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def register_when_loaded(cls: type, *, module: str = _MODULE, base: str = "Runnable") -> None:
    """Make `cls` a virtual subclass of `module.base` (an ABC) as soon as `module` loads,
    or at once when it is loaded already, without importing it."""
    loaded = sys.modules.get(module)
    if loaded is not None and hasattr(loaded, base):
        getattr(loaded, base).register(cls)
        return
    _pending.setdefault(module, []).append((base, cls))
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def runnable_attribute(obj: Any, name: str) -> Any:
    """`Runnable.<name>` bound to `obj` (imports LangChain's Runnable on first use)."""
    import inspect

    from langchain_core.runnables.base import Runnable

    attr = inspect.getattr_static(Runnable, name, _MISSING)
    if attr is _MISSING:
        raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")
    if hasattr(attr, "__get__"):
        return attr.__get__(obj, type(obj))
    return attr

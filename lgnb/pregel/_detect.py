"""Finding the compiled graph a node's function invokes, so introspection sees it.

A graph called from inside a node (`def node(s): return sub.invoke(s)`) runs as a
nested subgraph either way; detecting it lets `get_subgraphs`, `get_state(subgraphs=True)`
and the state methods of a namespaced config reach it. Detection reads the function's
bytecode, never its source, and follows only *reference chains*: a closure variable or a
global the function names, then the attributes its code loads on it
(`holder.payload.invoke` -> `holder.payload`). Subscripts, `self` attributes and
globals named only in nested functions are out of reach; a chain the compiler removed
(dead code) is not followed, though a captured graph itself is still found.
"""

from __future__ import annotations

import dis
import functools
import types
from typing import Any

__all__ = ("find_subgraph",)

_LOAD_ROOT = {"LOAD_GLOBAL": "global", "LOAD_NAME": "global", "LOAD_DEREF": "free", "LOAD_CLASSDEREF": "free"}
_LOAD_ATTR = {"LOAD_ATTR", "LOAD_METHOD"}
_LEAF = (str, bytes, int, float, bool, type(None), types.ModuleType, type)


def _is_graph(value: Any) -> bool:
    """A compiled graph that keeps state: one compiled with `checkpointer=False` is not a
    subgraph to LangGraph's introspection (`get_subgraphs`, xray drawings, state reads)."""
    from lgnb.pregel.main import Pregel

    if isinstance(value, Pregel):
        return value.checkpointer is not False
    # a graph LangGraph compiled, invoked by a library's node (langgraph-supervisor's
    # `agent.invoke`): it runs nested in the task on the run's saver, so it is one too
    return _is_langgraph_pregel(value) and getattr(value, "checkpointer", None) is not False


def _is_langgraph_pregel(value: Any) -> bool:
    return any(k.__module__ == "langgraph.pregel.main" and k.__name__ == "Pregel" for k in type(value).__mro__)


def find_subgraph(fn: Any) -> Any:
    """The compiled graph `fn` invokes (or is), or None. Runnables are searched as
    LangGraph searches them: the steps of a sequence (`prep | subgraph`), the functions a
    `RunnableLambda` depends on."""
    candidates, seen = [fn], set()
    for candidate in candidates:
        if candidate is None or id(candidate) in seen:
            continue
        seen.add(id(candidate))
        if _is_graph(candidate):
            return candidate
        steps = getattr(candidate, "steps", None)  # RunnableSequence
        if type(candidate).__name__ in ("RunnableSequence", "RunnableSeq") and steps:
            candidates.extend(steps)
            continue
        if type(candidate).__name__ == "RunnableLambda":
            candidates.extend(getattr(candidate, "deps", ()) or ())
            candidates.append(getattr(candidate, "func", None) or getattr(candidate, "afunc", None))
            continue
        if type(candidate).__name__ == "RunnableCallable":  # a LangGraph-built graph's node
            candidates.append(getattr(candidate, "func", None) or getattr(candidate, "afunc", None))
            continue
        # `from_langgraph`'s bridged node, a function: read from its own attributes only
        # (a mock or proxy would answer any name with a new object, without end)
        own = getattr(candidate, "__dict__", None)
        wrapped = own.get("_lgnb_wraps") if isinstance(own, dict) else None
        if wrapped is not None:
            candidates.append(wrapped)
            continue
        found = _in_callable(candidate)
        if found is not None:
            return found
    return None


def _in_callable(fn: Any) -> Any:
    """The graph a function (through partials and `__wrapped__`) invokes, or None."""
    seen: set[int] = set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        if isinstance(fn, functools.partial):
            fn = fn.func
            continue
        found = _in_function(getattr(fn, "__func__", fn))
        if found is not None:
            return found
        fn = getattr(fn, "__wrapped__", None)
    return None


def _closure(func: Any, code: types.CodeType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, getattr(func, "__closure__", None) or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # a variable never assigned leaves an empty cell
            continue
    return out


def _chains(code: types.CodeType, *, top: bool) -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, root name, attribute names) for each reference chain the code loads;
    globals only in the function's own code, closure variables in nested code too."""
    out: list[tuple[str, str, tuple[str, ...]]] = []
    root: tuple[str, str] | None = None
    attrs: list[str] = []
    for ins in dis.get_instructions(code):
        kind = _LOAD_ROOT.get(ins.opname)
        if ins.opname in _LOAD_ATTR and root is not None:
            attrs.append(ins.argval)
            continue
        if root is not None:
            out.append((root[0], root[1], tuple(attrs)))
            root, attrs = None, []
        if kind is not None and (top or kind == "free"):
            root = (kind, ins.argval)
    if root is not None:
        out.append((root[0], root[1], tuple(attrs)))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out.extend(_chains(const, top=False))
    return out


def _in_function(func: Any) -> Any:
    code = getattr(func, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    free = _closure(func, code)
    for value in free.values():
        if _is_graph(value):
            return value
    glb = getattr(func, "__globals__", None) or {}
    names = set(code.co_names)
    if not any(not isinstance(v, _LEAF) for v in free.values()) and not any(
        n in glb and not isinstance(glb[n], _LEAF) for n in names
    ):
        return None  # nothing but leaf values in reach
    for kind, name, attrs in _chains(code, top=True):
        scope = free if kind == "free" else glb
        if name not in scope:
            continue
        value = scope[name]
        if _is_graph(value):
            return value
        for attr in attrs:
            try:
                value = getattr(value, attr)
            except Exception:  # noqa: BLE001 - a chain that does not resolve finds nothing
                break
            if _is_graph(value):
                return value
    return None

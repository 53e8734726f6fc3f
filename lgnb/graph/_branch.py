"""Conditional edges: a path function run after its node, routing by return value."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal, get_args, get_origin, get_type_hints

from lgnb._internal.callable import NodeCallable
from lgnb._internal.constants import END, START, TASKS
from lgnb._internal.foreign import adopt
from lgnb.errors import InvalidUpdateError
from lgnb.types import Send

__all__ = ("Branch",)


class Branch:
    """`add_conditional_edges(source, path, path_map)` compiled for the runtime."""

    __slots__ = ("path", "call", "ends", "input_schema", "name", "_routes")

    def __init__(
        self,
        path: Callable[..., Any],
        path_map: dict[Hashable, str] | list[str] | None,
        *,
        name: str,
    ) -> None:
        self.path = path
        self.name = name
        self.call = NodeCallable(path, name=name, own_run=False)  # the runner traces routers
        if isinstance(path_map, dict):
            self.ends: dict[Hashable, str] | None = dict(path_map)
        elif isinstance(path_map, list):
            self.ends = {p: p for p in path_map}
        else:
            self.ends = _ends_from_return_hint(path)
        self.input_schema = _first_param_schema(path)
        self._routes: dict[Any, tuple[tuple[str, Any], ...]] | None = None

    def destinations(self, result: Any) -> list[Send | str]:
        """Map the path function's return value to node names / Sends."""
        result = adopt(result)  # LangGraph's `Send`s (a library's routing function)
        results = result if isinstance(result, (list, tuple)) else [result]
        if self.ends:
            try:
                dests = [r if isinstance(r, Send) else self.ends[r] for r in results]
            except KeyError as exc:
                raise KeyError(
                    f"Conditional edge `{self.name}` returned {exc.args[0]!r}, which is not in "
                    f"its path_map {sorted(map(str, self.ends))}: add it to the path_map or "
                    "return one of its keys."
                ) from None
        else:
            dests = list(results)
        if any(d is None or d == START for d in dests):
            raise ValueError("Branch did not return a valid destination")
        if any(isinstance(d, Send) and d.node == END for d in dests):
            raise InvalidUpdateError("Cannot send a packet to the END node")
        return dests

    def writes(self, result: Any) -> Sequence[tuple[str, Any]]:
        """The scheduling writes of the path function's return value (read-only)."""
        if type(result) is str or type(result) is bool:  # one path_map key: the usual
            routes = self._routes
            if routes is None:
                routes = self._routes = self._route_table()
            found = routes.get(result)
            if found is not None:
                return found
        out: list[tuple[str, Any]] = []
        for dest in self.destinations(result):
            if isinstance(dest, Send):
                out.append((TASKS, dest))
            elif dest != END:
                out.append((f"branch:to:{dest}", None))
        return out

    def _route_table(self) -> dict[Any, tuple[tuple[str, Any], ...]]:
        """`writes` of each path_map key that names a valid destination, made once
        (the others take the general path, which raises its error)."""
        table: dict[Any, tuple[tuple[str, Any], ...]] = {}
        for key, dest in (self.ends or {}).items():
            if isinstance(dest, str) and dest and dest != START:
                table[key] = () if dest == END else ((f"branch:to:{dest}", None),)
        return table

    @property
    def is_async(self) -> bool:
        return self.call.is_async


def _ends_from_return_hint(path: Any) -> dict[Hashable, str] | None:
    func = getattr(path, "func", None) or getattr(path, "afunc", None) or path
    if not callable(func):
        return None
    call = getattr(func, "__call__", None)  # noqa: B004 - an object's bound __call__, for its hints
    if inspect.ismethod(call) and not inspect.isfunction(func):
        func = call
    try:
        rtn = get_type_hints(func).get("return")
    except Exception:
        return None
    if rtn is not None and get_origin(rtn) is Literal:
        return {name: name for name in get_args(rtn)}
    return None


def _first_param_schema(path: Any) -> Any:
    func = getattr(path, "func", None) or getattr(path, "afunc", None) or path
    try:
        hints = get_type_hints(func)
        first = next(iter(inspect.signature(func).parameters))
    except (TypeError, ValueError, StopIteration, NameError):
        return None
    hint = hints.get(first)
    if isinstance(hint, type):
        try:
            if get_type_hints(hint):
                return hint
        except Exception:
            return None
    return None


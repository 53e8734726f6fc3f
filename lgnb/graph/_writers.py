"""Writers: how a node's return value becomes channel writes.

`updates_writer` maps a returned dict / Command / pydantic or dataclass object to state-key
writes (and rejects anything else, naming the node); `control_writer` turns `Send` and
`Command(goto=...)` into scheduling writes, and `Command(graph=PARENT)` into a
ParentCommand for the enclosing graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lgnb._internal.constants import END, ROOT, TASKS
from lgnb._internal.fields import annotated_keys, fields_as_tuples
from lgnb.errors import (
    ErrorCode,
    InvalidUpdateError,
    ParentCommand,
    create_error_message,
)
from lgnb.pregel._task import Task
from lgnb.types import Command, Send

__all__ = ("control_writer", "updates_writer")

_PLAIN = frozenset((str, bytes, int, float, bool, list, tuple, set, frozenset, type(None)))


def updates_writer(
    output_keys: list[str],
    *,
    root: bool,
    node_name: str,
    control: bool = False,
    key_set: frozenset[str] | None = None,
) -> Callable[[Task, Any], Any]:
    """The writer turning a node's return value into state-key writes; with `control`,
    followed by `control_writer`'s scheduling writes (one call per task, not two: a
    returned dict, the usual, schedules nothing). `key_set`: `frozenset(output_keys)`,
    when the caller shares one between nodes."""
    if key_set is None:
        key_set = frozenset(output_keys)

    def from_value(value: Any) -> list[tuple[str, Any]] | None:
        if value is None:
            return None
        if isinstance(value, dict):
            return [(k, v) for k, v in value.items() if k in key_set]
        if isinstance(value, Command):
            if value.graph == Command.PARENT:
                return None
            return [(k, v) for k, v in value._update_as_tuples() if k in key_set]
        if isinstance(value, (list, tuple)) and value and any(isinstance(i, Command) for i in value):
            out: list[tuple[str, Any]] = []
            for item in value:
                if isinstance(item, Command):
                    if item.graph != Command.PARENT:
                        out.extend((k, v) for k, v in item._update_as_tuples() if k in key_set)
                else:
                    out.extend(from_value(item) or ())
            return out
        if isinstance(value, Send):  # a bare Send: scheduled by the control writer; as
            # LangGraph (whose Send declares `node`, `arg`, `timeout`) its fields are the update
            return [(k, getattr(value, k)) for k in ("node", "arg", "timeout") if k in key_set]
        # any class with annotated fields (a NamedTuple too), as LangGraph reads updates
        keys = annotated_keys(type(value)) if type(value) not in _PLAIN else ()
        if keys:
            return [(k, v) for k, v in fields_as_tuples(value, output_keys) if k in key_set]
        raise InvalidUpdateError(
            create_error_message(
                message=(
                    f"Expected dict, got {value}. Node `{node_name}` must return a dict of "
                    "state keys to update (or a Command, or None for no update)."
                ),
                error_code=ErrorCode.INVALID_GRAPH_NODE_RETURN_VALUE,
            )
        )

    def from_root(value: Any) -> list[tuple[str, Any]] | None:
        if isinstance(value, Command):
            return [] if value.graph == Command.PARENT else list(value._update_as_tuples())
        if isinstance(value, (list, tuple)) and value and any(isinstance(i, Command) for i in value):
            out: list[tuple[str, Any]] = []
            for item in value:
                if isinstance(item, Command):
                    if item.graph != Command.PARENT:
                        out.extend(item._update_as_tuples())
                else:
                    out.append((ROOT, item))
            return out
        if value is not None:
            return [(ROOT, value)]
        return None

    if root:
        if control:
            return lambda task, output: _and_control(from_root(output), task, output)
        return lambda task, output: from_root(output)

    def writer(task: Task, value: Any) -> Any:
        # a returned dict, the common case, without a second call
        if type(value) is dict:
            if key_set.issuperset(value):  # only state keys (the usual): no comprehension
                return list(value.items())
            return [(k, v) for k, v in value.items() if k in key_set]
        produced = from_value(value)
        return _and_control(produced, task, value) if control else produced

    return writer


def _and_control(produced: list[tuple[str, Any]] | None, task: Task, output: Any) -> Any:
    """`produced` followed by `control_writer`'s writes for `output`."""
    scheduled = control_writer(task, output)
    if not scheduled:
        return produced
    return [*produced, *scheduled] if produced else scheduled


def control_writer(task: Task, output: Any) -> list[tuple[str, Any]] | None:
    """`Send` and `Command(goto=...)` in a node's return value become scheduling writes."""
    if type(output) is dict:  # the common case: a plain update schedules nothing
        return None
    if isinstance(output, Send):
        return [(TASKS, output)]
    if isinstance(output, Command):
        commands = [output]
    elif isinstance(output, (list, tuple)) and output and any(isinstance(c, Command) for c in output):
        commands = [c for c in output if isinstance(c, Command)]
    else:
        return None
    out: list[tuple[str, Any]] = []
    for command in commands:
        if command.graph == Command.PARENT:
            raise ParentCommand(command)
        # as LangGraph: one name or Send, else an iterable of them (`goto=123` is a TypeError)
        gotos = [command.goto] if isinstance(command.goto, (Send, str)) else command.goto
        for go in gotos:
            if isinstance(go, Send):
                out.append((TASKS, go))
            elif isinstance(go, str) and go and go != END:
                out.append((f"branch:to:{go}", None))
    return out


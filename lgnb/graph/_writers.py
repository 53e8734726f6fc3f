"""Writers: how a node's return value becomes channel writes.

`updates_writer` maps a returned dict / Command / pydantic or dataclass object to state-key
writes (and rejects anything else, naming the node); `control_writer` turns `Send` and
`Command(goto=...)` into scheduling writes, and `Command(graph=PARENT)` into a
ParentCommand for the enclosing graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lgnb._internal.constants import END, INTERRUPT, ROOT, START, TASKS
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

    def from_value(value: Any, task: Task | None = None) -> list[tuple[str, Any]] | None:
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
                    out.extend(from_value(item, task) or ())
            return out
        if isinstance(value, Send):  # a bare Send: scheduled by the control writer; as
            # LangGraph (whose Send declares `node`, `arg`, `timeout`) its fields are the update
            return [(k, getattr(value, k)) for k in ("node", "arg", "timeout") if k in key_set]
        # any class with annotated fields (a NamedTuple too), as LangGraph reads updates
        keys = annotated_keys(type(value)) if type(value) not in _PLAIN else ()
        if keys and not key_set.isdisjoint(keys):
            return [(k, v) for k, v in fields_as_tuples(value, output_keys) if k in key_set]
        if keys:  # LangGraph reads it as an update of no key: silently, the value is lost
            raise InvalidUpdateError(
                create_error_message(
                    message=f"Expected dict, got {value!r}. {_no_state_field(value, keys, node_name, task, output_keys)}",
                    error_code=ErrorCode.INVALID_GRAPH_NODE_RETURN_VALUE,
                )
            )
        raise InvalidUpdateError(
            create_error_message(
                message=f"Expected dict, got {value}. {_who_gave(value, node_name, task, output_keys)}",
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
        produced = from_value(value, task)
        return _and_control(produced, task, value) if control else produced

    return writer


def _who_gave(value: Any, node_name: str, task: Task | None, keys: list[str]) -> str:
    """What should have been a dict: the graph input, an `update_state` value, or a
    node's return value; and what to give instead."""
    example = f"{{{keys[0]!r}: ...}}" if keys else "{key: value}"
    if node_name == START:
        return (
            f"The graph input must be a dict of state keys, e.g. `invoke({example})`, not a "
            f"value of type {type(value).__name__}."
        )
    if task is not None and task.triggers == (INTERRUPT,):  # update_state(..., as_node=)
        return (
            f"`update_state(config, values, as_node={node_name!r})`: values must be a dict "
            f"of state keys, e.g. {example} (or a Command, or None), not a value of type "
            f"{type(value).__name__}."
        )
    return (
        f"Node `{node_name}` must return a dict of state keys to update, e.g. "
        f"`return {example}` (or a Command, or None for no update)."
    )


def _no_state_field(value: Any, fields: tuple[str, ...], node_name: str, task: Task | None, keys: list[str]) -> str:
    """A returned object (a message, a structured-output model) none of whose fields is
    a state key: it would update nothing."""
    kind = type(value).__name__
    where = (
        f"`update_state(..., as_node={node_name!r})` got"
        if task is not None and task.triggers == (INTERRUPT,)
        else f"Node `{node_name}` returned"
    )
    if _is_message(value):
        key = next((k for k in keys if "message" in k), keys[0] if keys else "messages")
        return (
            f"{where} {_an(kind)}, not a dict of state keys: the message would be lost. Put it "
            f"under its state key, e.g. `return {{{key!r}: [message]}}`."
        )
    return (
        f"{where} {_an(kind)} object whose fields ({_few(fields)}) are none of the state keys "
        f"({_few(keys)}), so it would update nothing. Return a dict of state keys, "
        f"e.g. `return {{{(keys[0] if keys else 'key')!r}: <the {kind}>}}`."
    )


def _bad_goto(exc: TypeError, task: Task, goto: Any) -> TypeError:
    """`Command(goto=<a function, a number, ...>)`: LangGraph's TypeError, and what goto takes."""
    name = getattr(goto, "__name__", None)
    named = callable(goto) and isinstance(name, str)
    example = repr(name) if named else '"node_name"'
    shown = f"<function {name}>" if named else repr(goto)
    return TypeError(
        f"{exc}\nNode `{task.name}` returned `Command(goto={shown})`: goto takes a node's "
        f"name, a Send, or a list of them, e.g. `Command(goto={example})`."
    )


def _few(names: Any, most: int = 8) -> str:
    names = list(names)
    return ", ".join(names[:most]) + (", ..." if len(names) > most else "")


def _an(word: str) -> str:
    return f"an {word}" if word[:1] in "AEIOUaeiou" else f"a {word}"


def _is_message(value: Any) -> bool:
    try:
        from langchain_core.messages import BaseMessage
    except ImportError:  # pragma: no cover - langchain-core is a dependency
        return False
    return isinstance(value, BaseMessage)


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
        try:
            iter(gotos)
        except TypeError as exc:
            raise _bad_goto(exc, task, command.goto) from None
        for go in gotos:
            if isinstance(go, Send):
                out.append((TASKS, go))
            elif isinstance(go, str) and go and go != END:
                out.append((f"branch:to:{go}", None))
    return out


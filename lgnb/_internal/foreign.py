"""LangGraph's own `Command` and `Send` met inside an lgnb graph, and lgnb's met by LangGraph code.

lgnb keeps LangGraph's prebuilt helpers (`langgraph.prebuilt.ToolNode`, handoff tools of
libraries built on LangGraph), which make and check `langgraph.types.Command` objects. Two
crossings follow, both handled here so neither engine's class leaks into the other:

* a node returns LangGraph's `Command` / `Send` (ToolNode returns the `Command`s its
  tools made): `adopt` turns them into lgnb's before the node's writers read the output;
* a tool run by LangGraph's ToolNode returns lgnb's `Command` (the import a ported
  program has): LangChain and ToolNode would not recognize it and would send its repr to
  the model as text. `hook_tool_node` makes such a ToolNode's tools translate it to
  LangGraph's first.

Detection is by module and class name, so nothing here imports `langgraph` (a second
engine, ~0.4 s): a LangGraph object can only exist once its program imported it.
"""

from __future__ import annotations

from typing import Any

__all__ = ("adopt", "hook_tool_node")

_LG_TYPES = "langgraph.types"


def _is_lg(value: Any, name: str) -> bool:
    cls = type(value)
    return cls.__name__ == name and cls.__module__ == _LG_TYPES


def adopt(output: Any) -> Any:
    """`output` with LangGraph's `Command` / `Send` objects (itself, or items of a returned
    list or tuple) replaced by lgnb's; anything else is returned as it is."""
    cls = type(output)
    if cls is dict or output is None:  # what nodes return almost always
        return output
    if cls.__module__ == _LG_TYPES:
        if cls.__name__ == "Command":
            return _command(output)
        if cls.__name__ == "Send":
            return _send(output)
        return output
    if (cls is list or cls is tuple) and any(type(i).__module__ == _LG_TYPES for i in output):
        return cls(adopt(i) for i in output)
    return output


def _send(send: Any) -> Any:
    from lgnb.types import Send

    return Send(send.node, send.arg, getattr(send, "timeout", None))


def _goto(goto: Any) -> Any:
    if _is_lg(goto, "Send"):
        return _send(goto)
    if isinstance(goto, (list, tuple)):
        return type(goto)(_send(g) if _is_lg(g, "Send") else g for g in goto)
    return goto


def _command(command: Any) -> Any:
    from lgnb.types import Command

    return Command(graph=command.graph, update=command.update, resume=command.resume,
                   goto=_goto(command.goto))


def _to_langgraph(value: Any) -> Any:
    """lgnb's `Command` (itself, or in a list a tool returned) as LangGraph's."""
    from lgnb.types import Command, Send

    if isinstance(value, list) and any(isinstance(v, Command) for v in value):
        return [_to_langgraph(v) for v in value]
    if not isinstance(value, Command):
        return value
    from langgraph.types import Command as LgCommand
    from langgraph.types import Send as LgSend

    def send(s: Any) -> Any:
        return LgSend(s.node, s.arg) if isinstance(s, Send) else s

    goto = value.goto
    goto = send(goto) if isinstance(goto, Send) else (
        type(goto)(send(g) for g in goto) if isinstance(goto, (list, tuple)) else goto)
    return LgCommand(graph=value.graph, update=value.update, resume=value.resume, goto=goto)


def hook_tool_node(action: Any) -> None:
    """Let a `langgraph.prebuilt.ToolNode` added to an lgnb graph run tools that return
    lgnb's `Command`.

    LangChain passes a tool's result through only when it is a `ToolOutputMixin`
    (LangGraph's `Command` is one); anything else becomes the text of a `ToolMessage`.
    lgnb's `Command` cannot be one without importing langchain-core's messages with
    `lgnb.types` (~0.15 s on every import). So this ToolNode gets copies of its function
    tools (`@tool`, `StructuredTool`, `Tool`) whose function hands LangGraph's `Command`
    to LangChain; the node's output comes back through `adopt`. The user's tool objects
    are not changed; a class-based tool (its own `_run`) is left as it is."""
    cls = type(action)
    if not cls.__module__.startswith("langgraph.prebuilt") or "_lgnb_hooked" in vars(action):
        return
    tools = getattr(action, "_tools_by_name", None)
    if not isinstance(tools, dict):  # another langgraph-prebuilt release: leave it
        return
    for name, tool in list(tools.items()):
        update = {}
        for field in ("func", "coroutine"):
            fn = getattr(tool, field, None)
            if callable(fn):
                update[field] = _translating(fn, is_async=field == "coroutine")
        if update and hasattr(tool, "model_copy"):
            tools[name] = tool.model_copy(update=update)
    action._lgnb_hooked = True


def _translating(fn: Any, *, is_async: bool) -> Any:
    """`fn` returning LangGraph's `Command` where it returns lgnb's; its signature (which
    LangChain reads for injected arguments) is `fn`'s."""
    import functools

    if is_async:
        @functools.wraps(fn)
        async def acall(*args: Any, **kwargs: Any) -> Any:
            return _to_langgraph(await fn(*args, **kwargs))

        return acall

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return _to_langgraph(fn(*args, **kwargs))

    return call

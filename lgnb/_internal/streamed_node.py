"""Nodes streamed, not invoked, in an async run that a streaming handler watches.

Why: LangGraph runs every node of an async run with `astream` when one of the run's
handlers is LangChain's streaming kind (`astream_events`, `astream_log`; not the handlers
of the `messages` and `tools` stream modes). A node that is a Runnable then streams: a
`prompt | model | StrOutputParser() | ...` chain's steps pass their chunks along
(`atransform`), so the parser reports each token (`on_parser_stream`), and a
`RunnableLambda` node is a run of its own with its output as a stream chunk
(`on_chain_start` / `on_chain_stream` / `on_chain_end` under the function's name). lgnb
invokes such nodes otherwise (cheaper, and nothing watches); here it streams them as
LangGraph does, so `astream_events` consumers see the same events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb._internal.callable import NodeCallable
    from lgnb._internal.context import TaskContext

__all__ = ("astreamed", "streams_nodes")

# the handlers of lgnb's own stream modes, which LangGraph leaves out of that decision
_MODE_HANDLERS = frozenset({"StreamMessagesHandler", "StreamToolCallHandler"})


def streams_nodes(ctx: TaskContext) -> bool:
    """Whether the task's node is streamed: an async run with a traced node whose run a
    LangChain streaming handler watches."""
    if not ctx.loop.driven_async:
        return False
    try:
        from langchain_core.tracers._streaming import _StreamingCallbackHandler
    except ImportError:  # pragma: no cover - older langchain-core
        return False
    return any(_StreamingCallbackHandler in type(h).__mro__ and type(h).__name__ not in _MODE_HANDLERS
               for h in ctx.node_run.handlers)


async def astreamed(node: NodeCallable, value: Any, ctx: TaskContext) -> Any:
    """Run `node`'s Runnable with `astream` (a RunnableSequence's steps chained with
    `atransform`, each its own step of the node's run) and return its output as the
    node's writers get it: the chunks added up (`+`), or the last one where they do not
    add — as the `atransform` of LangGraph's writer buffers them."""
    from lgnb._internal.callable import _step_config

    if node.steps is not None:
        stream: AsyncIterator[Any] = node.steps[0].astream(value, _step_config(ctx, 0))
        for i, step in enumerate(node.steps[1:], 1):
            stream = step.atransform(stream, _step_config(ctx, i))
    else:
        stream = (node.runnable if node.runnable is not None else node.lam).astream(value, ctx.config)
    output: Any = None
    first = True
    async for chunk in stream:
        if first:
            output, first = chunk, False
            continue
        try:
            output = output + chunk
        except TypeError:
            output = chunk
    return output

"""The `tools` stream mode: tool-call lifecycle events from LangChain tool callbacks.

With `"tools"` in `stream_mode`, a `StreamToolCallHandler` is added to the callbacks of
every task (as the `messages` handler is); a LangChain tool run inside a node reports

- `{"event": "tool-started", "tool_call_id", "tool_name", "input"?}`,
- `{"event": "tool-output-delta", "tool_call_id", "delta"}` for each partial output the
  tool emits (`ToolRuntime.emit_output_delta`, via `tool_call_writer`),
- `{"event": "tool-finished", "tool_call_id", "output"}` or
  `{"event": "tool-error", "tool_call_id", "message"}`,

at the namespace of the graph the tool runs in. An interrupted or drained tool is
paused, not failed: it reports nothing on the way out and starts again on resume.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from lgnb._internal.constants import TAG_NOSTREAM
from lgnb.errors import GraphDrained, GraphInterrupt
from lgnb.pregel._messages import graph_namespace

try:
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError:  # pragma: no cover - older langchain-core
    _StreamingCallbackHandler = object  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from lgnb.pregel._run import StreamSink

__all__ = ("StreamToolCallHandler", "ToolCallWriter", "tool_call_writer")

ToolCallWriter = Callable[[Any], None]

tool_call_writer: ContextVar[ToolCallWriter | None] = ContextVar("lgnb_tool_call_writer", default=None)
"""The `tool-output-delta` writer of the tool call running in this context (else None)."""


def _writer_vars() -> list[ContextVar[Any]]:
    """lgnb's writer variable, and LangGraph's when installed: `langgraph.prebuilt`'s
    `ToolRuntime.emit_output_delta` (lgnb uses the prebuilt ToolNode) reads that one."""
    found: list[ContextVar[Any]] = [tool_call_writer]
    try:
        from langgraph.pregel._tools import _tool_call_writer
    except ImportError:
        return found
    found.append(_tool_call_writer)
    return found


class StreamToolCallHandler(BaseCallbackHandler, _StreamingCallbackHandler):
    """Turns `on_tool_*` callbacks into `tools` stream events."""

    run_inline = True

    def __init__(self, sink: StreamSink, *, subgraphs: bool, parent_ns: tuple[str, ...] = ()) -> None:
        self.sink = sink
        self.subgraphs = subgraphs
        self.parent_ns = parent_ns
        self._vars = _writer_vars()
        # run id -> (namespace, tool call id, tokens to reset the writer variables)
        self._calls: dict[UUID, tuple[tuple[str, ...], str, list[Token[Any]]]] = {}

    def _namespace(self, metadata: dict[str, Any] | None, tags: list[str] | None) -> tuple[str, ...] | None:
        """Where this tool call reports, or None when it does not (no graph metadata,
        `nostream` tag, or a subgraph this stream did not ask for)."""
        if not metadata or (tags and TAG_NOSTREAM in tags):
            return None
        ns = graph_namespace(metadata) if metadata.get("langgraph_checkpoint_ns") else ()
        if ns and not self.subgraphs and ns != self.parent_ns:
            return None
        return ns

    def _put(self, ns: tuple[str, ...], payload: dict[str, Any]) -> None:
        self.sink.put((ns, "tools", payload))

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        ns = self._namespace(metadata, tags)
        if ns is None:
            return
        call_id = kwargs.get("tool_call_id") or str(run_id)
        name = (serialized or {}).get("name") or kwargs.get("name") or ""

        def writer(delta: Any) -> None:
            self._put(ns, {"event": "tool-output-delta", "tool_call_id": call_id, "delta": delta})

        tokens = [var.set(writer) for var in self._vars]
        self._calls[run_id] = (ns, call_id, tokens)
        payload: dict[str, Any] = {"event": "tool-started", "tool_call_id": call_id, "tool_name": name}
        if inputs is not None:
            payload["input"] = inputs
        self._put(ns, payload)

    def _ended(self, run_id: UUID) -> tuple[tuple[str, ...], str] | None:
        call = self._calls.pop(run_id, None)
        if call is None:
            return None
        ns, call_id, tokens = call
        for var, token in zip(self._vars, tokens):
            try:
                var.reset(token)
            except ValueError:  # ended in another context than it started in
                pass
        return ns, call_id

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        if (ended := self._ended(run_id)) is not None:
            ns, call_id = ended
            self._put(ns, {"event": "tool-finished", "tool_call_id": call_id, "output": output})

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        ended = self._ended(run_id)
        if ended is None or isinstance(error, (GraphInterrupt, GraphDrained)):
            return  # interrupted or drained: paused, it runs again on resume
        ns, call_id = ended
        self._put(ns, {"event": "tool-error", "tool_call_id": call_id, "message": str(error)})

    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        return output

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
        return output

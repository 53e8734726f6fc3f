"""Fake chat models shared by the messages-stream scenarios (no network, deterministic).

* ``fake(*texts)`` — langchain-core's ``GenericFakeChatModel``: streams a text reply split
  on whitespace (one chunk per word and per space); ids are LangChain run ids
  (``lc_run--…``), normalized by the harness.
* ``ScriptedStreamingModel`` — a small ``BaseChatModel`` subclass whose ``_stream`` /
  ``_astream`` yield the ``AIMessageChunk``s of a script verbatim (tool-call chunks
  included), with extra ``ls_*`` params and an optional failure after k chunks.
* ``NonStreamingModel`` — only ``_generate``: the final message arrives in ``on_llm_end``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LangSmithParams
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

HI = {"messages": [HumanMessage("hi", id="h1")]}


def fake(*texts: str | AIMessage) -> GenericFakeChatModel:
    return GenericFakeChatModel(
        messages=iter([AIMessage(content=t) if isinstance(t, str) else t for t in texts])
    )


class ScriptedStreamingModel(BaseChatModel):
    """Each call consumes one turn of ``script``: a list of ``AIMessageChunk`` kwargs."""

    script: list[list[dict]]
    turn: int = 0
    fail_after: int | None = None  # raise RuntimeError after this many chunks of a turn

    @property
    def _llm_type(self) -> str:
        return "scripted-streaming"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_model_name"] = "scripted-1"
        params["ls_temperature"] = 0.0
        return params

    def _next_turn(self) -> list[dict]:
        chunks = self.script[self.turn % len(self.script)]
        self.turn += 1
        return chunks

    def _chunks(self) -> Iterator[ChatGenerationChunk]:
        for i, kw in enumerate(self._next_turn()):
            if self.fail_after is not None and i >= self.fail_after:
                raise RuntimeError(f"model failed after {i} chunks")
            yield ChatGenerationChunk(message=AIMessageChunk(**kw))

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any
                ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks():
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any
                       ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks():
            if run_manager:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        total: AIMessageChunk | None = None
        for chunk in self._chunks():
            total = chunk.message if total is None else total + chunk.message
        msg = AIMessage(content=total.content, tool_calls=total.tool_calls) if total else AIMessage("")
        return ChatResult(generations=[ChatGeneration(message=msg)])


# a reply that calls a tool: text, then the tool call's arguments in three pieces
TOOL_CALL_TURN = [
    {"content": "Let me "},
    {"content": "check."},
    {"content": "", "tool_call_chunks": [
        {"name": "get_weather", "args": "", "id": "call_1", "index": 0, "type": "tool_call_chunk"}]},
    {"content": "", "tool_call_chunks": [
        {"name": None, "args": '{"city": ', "id": None, "index": 0, "type": "tool_call_chunk"}]},
    {"content": "", "tool_call_chunks": [
        {"name": None, "args": '"Paris"}', "id": None, "index": 0, "type": "tool_call_chunk"}]},
]
# two parallel tool calls interleaved by index
TWO_TOOL_CALLS_TURN = [
    {"content": "", "tool_call_chunks": [
        {"name": "a", "args": '{"x"', "id": "call_a", "index": 0, "type": "tool_call_chunk"}]},
    {"content": "", "tool_call_chunks": [
        {"name": "b", "args": '{"y"', "id": "call_b", "index": 1, "type": "tool_call_chunk"}]},
    {"content": "", "tool_call_chunks": [
        {"name": None, "args": ": 1}", "id": None, "index": 0, "type": "tool_call_chunk"}]},
    {"content": "", "tool_call_chunks": [
        {"name": None, "args": ": 2}", "id": None, "index": 1, "type": "tool_call_chunk"}]},
]
TEXT_TURN = [{"content": "It is "}, {"content": "sunny."}]


class NonStreamingModel(BaseChatModel):
    """No ``_stream``: LangChain calls ``_generate``; the message arrives in ``on_llm_end``."""

    reply: str = "done"

    @property
    def _llm_type(self) -> str:
        return "non-streaming"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply))])


def one_node(E, node, *, state=None, name="chat", **compile_kw):
    """START -> node -> END on ``MessagesState`` (or ``state``)."""
    g = E.StateGraph(state or E.MessagesState)
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile(**compile_kw)


def chain(E, *nodes, state=None, **compile_kw):
    """START -> n1 -> n2 -> ... -> END; ``nodes`` are (name, fn) pairs."""
    g = E.StateGraph(state or E.MessagesState)
    prev = E.START
    for name, fn in nodes:
        g.add_node(name, fn)
        g.add_edge(prev, name)
        prev = name
    return g.compile(**compile_kw)

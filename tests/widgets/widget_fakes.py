"""Fake chat models and small graphs shared by the widget tests and the benchmark.

`FakeStreamingChat` streams each scripted reply token by token through `_stream`, so
LangGraph's `messages` stream mode sees real `AIMessageChunk`s (with tool-call chunks
whose arguments arrive in pieces), exactly like a provider's streaming model.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult


class FakeStreamingChat(BaseChatModel):
    """Replays `replies` in order, one per call, streaming `chunk_chars`-sized tokens.

    A reply is a string (plain text) or a dict ``{"content": str, "tool_calls": [...]}``
    where each tool call is ``{"name", "args", "id"}``; its JSON arguments stream in pieces.
    """

    replies: list[Any]
    delay: float = 0.0
    chunk_chars: int = 4
    calls: int = 0
    #: as providers do (OpenAI's "chatcmpl-...", Anthropic's "msg_..."): every chunk of a
    #: reply carries the reply's own id, f"{provider_ids}-{n}"; then LangChain closes the
    #: stream with an empty `chunk_position="last"` chunk under its run id instead
    provider_ids: str | None = None

    @property
    def _llm_type(self) -> str:
        return "fake-streaming-chat"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "FakeStreamingChat":
        return self

    def _next_reply(self) -> dict[str, Any]:
        reply = self.replies[self.calls % len(self.replies)]
        self.calls += 1
        if isinstance(reply, str):
            return {"content": reply, "tool_calls": []}
        return {"content": reply.get("content", ""), "tool_calls": reply.get("tool_calls", [])}

    def _generate(self, messages: list[BaseMessage], stop: Any = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        chunks = list(self._stream(messages, stop, run_manager, **kwargs))
        merged = chunks[0].message
        for c in chunks[1:]:
            merged = merged + c.message
        msg = AIMessage(content=merged.content, tool_calls=merged.tool_calls, id=merged.id)
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _stream(self, messages: list[BaseMessage], stop: Any = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        reply = self._next_reply()
        mid = f"{self.provider_ids}-{self.calls}" if self.provider_ids else None
        text: str = reply["content"]
        n = max(1, self.chunk_chars)
        pieces = [text[i:i + n] for i in range(0, len(text), n)] or [""]
        for piece in pieces:
            if self.delay:
                time.sleep(self.delay)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece, id=mid))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        for index, call in enumerate(reply["tool_calls"]):
            args = json.dumps(call.get("args", {}))
            parts = [args[i:i + n] for i in range(0, len(args), n)]
            for j, part in enumerate(parts):
                if self.delay:
                    time.sleep(self.delay)
                tc = tool_call_chunk(name=call["name"] if j == 0 else None, args=part,
                                     id=call.get("id") if j == 0 else None, index=index)
                chunk = ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[tc], id=mid))
                if run_manager:
                    run_manager.on_llm_new_token("", chunk=chunk)
                yield chunk

"""Helpers for testing your own graphs: a scripted chat model that streams like a real one.

LangChain's fake chat models are fine for text, but `GenericFakeChatModel` streams only a
message's text: run in `stream_mode="messages"` (which `lgnb.run` always uses, to show
tokens, and which makes LangChain call the model's `_stream`), the tool calls of the
messages it was given are dropped, and a message with tool calls and no text fails with
"No generations found in stream". An agent tested with it calls its tools under
`graph.invoke` and never under `lgnb.run`.

:class:`ScriptedChatModel` is a real `BaseChatModel` that behaves the same both ways: it
replies from a script, streams each reply word by word and its tool calls as tool-call
chunks (as providers do), and `invoke` returns the same message the stream adds up to.

    from lgnb.testing import ScriptedChatModel

    model = ScriptedChatModel(replies=[
        {"content": "Let me add.", "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]},
        "2 + 3 = 5.",
    ])
    agent = create_agent(model, tools=[add])     # bind_tools returns the model itself
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

__all__ = ["ScriptedChatModel"]

Reply = str | Mapping[str, Any]
"""A scripted reply: its text, or ``{"content": str, "tool_calls": [{"name", "args", "id"?}]}``."""


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from `replies`, in order (cycling when it runs out).

    Streams a reply's text a word at a time and each tool call as tool-call chunks of
    `args_chunk` characters of its JSON arguments, waiting `delay` seconds before each
    chunk; `invoke` gives the message the chunks add up to. `calls` counts the replies
    given so far. Each reply's message id (``scripted-<n>-<random>``) and the id of a tool
    call given without one (``call-<n>-<i>-<random>``) are unique, as a real model's are:
    `add_messages` replaces a message with the same id, so several models in one graph (or
    `calls` reset on a thread that has their earlier replies) must not repeat them.
    """

    replies: list[Any]
    delay: float = 0.0
    args_chunk: int = 8
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "lgnb-scripted-chat"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """The model itself: its replies are scripted, whatever tools it is given."""
        return self

    def _next_reply(self) -> dict[str, Any]:
        if not self.replies:
            raise ValueError("ScriptedChatModel has no replies: give it replies=[...] (texts or "
                             "{'content': ..., 'tool_calls': [...]} dicts)")
        reply = self.replies[self.calls % len(self.replies)]
        self.calls += 1
        token = uuid.uuid4().hex[:8]
        if isinstance(reply, str):
            return {"content": reply, "tool_calls": [], "id": f"scripted-{self.calls}-{token}"}
        if not isinstance(reply, Mapping):
            raise TypeError(f"ScriptedChatModel reply {self.calls} is a {type(reply).__name__}: give a "
                            "string or a {'content': ..., 'tool_calls': [...]} dict")
        calls = []
        for i, call in enumerate(reply.get("tool_calls") or ()):
            if not isinstance(call, Mapping) or "name" not in call:
                raise ValueError(f"ScriptedChatModel reply {self.calls}: tool call {i} needs a 'name' "
                                 "(and 'args', a dict)")
            calls.append({"name": call["name"], "args": dict(call.get("args") or {}),
                          "id": call.get("id") or f"call-{self.calls}-{i}-{token}"})
        return {"content": str(reply.get("content") or ""), "tool_calls": calls,
                "id": f"scripted-{self.calls}-{token}"}

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        reply = self._next_reply()
        mid = reply["id"]
        words = reply["content"].split(" ") if reply["content"] else []
        pieces: list[AIMessageChunk] = [
            AIMessageChunk(content=word if i == 0 else " " + word, id=mid) for i, word in enumerate(words)
        ]
        for index, call in enumerate(reply["tool_calls"]):
            args = json.dumps(call["args"])
            step = max(1, self.args_chunk)
            for j in range(0, max(len(args), 1), step):
                first = j == 0
                pieces.append(AIMessageChunk(content="", id=mid, tool_call_chunks=[tool_call_chunk(
                    name=call["name"] if first else None, args=args[j:j + step],
                    id=call["id"] if first else None, index=index)]))
        if not pieces:
            pieces.append(AIMessageChunk(content="", id=mid))
        pieces[-1].chunk_position = "last"
        for piece in pieces:
            if self.delay:
                time.sleep(self.delay)
            chunk = ChatGenerationChunk(message=piece)
            if run_manager is not None:
                run_manager.on_llm_new_token(piece.text, chunk=chunk)
            yield chunk

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        merged: AIMessageChunk | None = None
        for chunk in self._stream(messages, stop, None, **kwargs):
            merged = chunk.message if merged is None else merged + chunk.message  # type: ignore[assignment]
        assert merged is not None
        message = AIMessage(content=merged.content, tool_calls=merged.tool_calls, id=merged.id)
        return ChatResult(generations=[ChatGeneration(message=message)])

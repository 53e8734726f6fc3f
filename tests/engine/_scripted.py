"""A scripted chat model for the differential suites: what a real tool-calling model
looks like to LangGraph and lgnb (streams its words, then its tool calls as chunks;
`bind_tools`, `with_structured_output`), answering from a script so both engines see the
same replies."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableLambda

__all__ = ("Scripted",)


class Scripted(BaseChatModel):
    """A chat model answering from a script (an iterator of `AIMessage`s, or a function of
    the messages it is sent); `with_structured_output` answers from `structured` (an
    iterator of pydantic objects, or a function of the input). Streams its content word by
    word, then its tool calls as one chunk; `bind_tools` returns itself."""

    script: Any = None
    structured: Any = None
    seen: list = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        return self

    def with_structured_output(self, schema, **kwargs):
        def answer(inp):
            self.seen.append(("structured", schema.__name__))
            return self.structured(inp) if callable(self.structured) else next(self.structured)

        return RunnableLambda(answer, name=schema.__name__)

    def _reply(self, messages):
        self.seen.append([(m.type, m.content) for m in messages])
        msg = self.script(messages) if callable(self.script) else next(self.script)
        return msg.model_copy()

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        msg = self._reply(messages)
        words = msg.content.split(" ") if msg.content else []
        for i, word in enumerate(words):
            chunk = ChatGenerationChunk(message=AIMessageChunk(
                content=word if i == 0 else " " + word, id=msg.id))
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk
        if msg.tool_calls:
            yield ChatGenerationChunk(message=AIMessageChunk(content="", id=msg.id, tool_call_chunks=[
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                for i, c in enumerate(msg.tool_calls)]))

"""A scripted chat model for the differential suites: what a real tool-calling model
looks like to LangGraph and lgnb (streams its words, then its tool calls as chunks;
`bind_tools`, `with_structured_output`), answering from a script so both engines see the
same replies."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool

__all__ = ("Echo", "Scripted", "last_text")


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


def last_text(messages) -> str:
    last = messages[-1]
    return last.content if isinstance(last, BaseMessage) else str(last)


class Echo(BaseChatModel):
    """A user's chat model: answers `<who> heard <last message>` word by word, then a last
    chunk with finish reason and position; bound to tools with a `tool_choice` it calls the
    first one with scripted arguments (so `with_structured_output` works through
    `bind_tools`)."""

    who: str = "bot"

    @property
    def _llm_type(self) -> str:
        return "echo-chat"

    @property
    def _identifying_params(self) -> dict:
        return {"model_name": f"echo-{self.who}"}

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self.bind(tools=names, tool_choice=tool_choice, **kwargs)

    def _chunks(self, messages, tools, tool_choice=None):
        if tools and tool_choice:
            args = json.dumps({"label": self.who, "score": len(last_text(messages))})
            yield AIMessageChunk(content="", tool_call_chunks=[
                {"name": tools[0], "args": "", "id": f"call_{self.who}", "index": 0,
                 "type": "tool_call_chunk"}])
            for piece in (args[:10], args[10:]):
                yield AIMessageChunk(content="", tool_call_chunks=[
                    {"name": None, "args": piece, "id": None, "index": 0, "type": "tool_call_chunk"}])
        else:
            words = f"{self.who} heard {last_text(messages)}".split(" ")
            for i, w in enumerate(words):
                yield AIMessageChunk(content=w if i == 0 else " " + w)
        yield AIMessageChunk(content="", response_metadata={"finish_reason": "stop"},
                             chunk_position="last")

    def _stream(self, messages, stop=None, run_manager=None, tools=None, tool_choice=None, **kwargs):
        for c in self._chunks(messages, tools, tool_choice):
            chunk = ChatGenerationChunk(message=c)
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(self, messages, stop=None, run_manager=None, tools=None, tool_choice=None, **kwargs):
        for c in self._chunks(messages, tools, tool_choice):
            chunk = ChatGenerationChunk(message=c)
            if run_manager:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            await asyncio.sleep(0)
            yield chunk

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        total = None
        for c in self._stream(messages, stop, run_manager, **kwargs):
            total = c if total is None else total + c
        return ChatResult(generations=[ChatGeneration(message=total.message)])

"""LangChain's LangGraph project templates (what `langgraph new` gives users), on both engines.

Condensed ports of five official templates, each graph written once and built by each
engine from its own names (`E.StateGraph`, `E.Runtime`, `E.get_runtime`, `E.IsLastStep`, ...);
LangGraph's prebuilt `ToolNode` / `InjectedState` (langgraph-prebuilt, used by both engines)
run the tools, as in the templates:

* react-agent (src/react_agent): dataclass `InputState`/`State` with an `IsLastStep` field,
  `context_schema=Context` (kw-only dataclass reading env vars in `__post_init__`), async
  `call_model(state, runtime: Runtime[Context])` giving the "Sorry, I could not find an
  answer..." reply on the last step, a `search` tool reading `get_runtime(Context)`, the
  hand-written loop `call_model` <-> `ToolNode`, `compile(name="ReAct Agent")`.
* memory-agent (src/memory_agent): `runtime.store.asearch` of the user's memories into the
  system prompt, `store_memory` running every `upsert_memory` call with `asyncio.gather`
  (the tool hides `user_id`/`store` from the model with `InjectedToolArg`).
* data-enrichment (src/enrichment_agent): an extraction JSON schema given at input bound
  as the `Info` tool (`tool_choice="any"`), `search` / `scrape_website` tools with
  `InjectedState` and an injected `RunnableConfig`, a `reflect` checker using
  `with_structured_output(InfoIsSatisfactory)`, `max_loops` from `configurable`,
  `StateGraph(State, input=, output=, config_schema=)` as the template writes it.
* retrieval-agent (src/retrieval_graph): the index graph (`reduce_docs`, `{"docs":
  "delete"}`) and the retrieval graph (`generate_query` with `ChatPromptTemplate` and
  structured output, `retrieve`, `respond`); the vector store is langchain-core's
  `InMemoryVectorStore` with `DeterministicFakeEmbedding`, filtered by the configured user.
* local-deep-researcher (src/ollama_deep_researcher): sync nodes, the research loop bounded
  by `max_web_research_loops`, a pydantic `Configuration.from_runnable_config`, input and
  output dataclass schemas, JSON mode and tool-calling mode (`@tool` on a pydantic class).

Models are scripted (`Model` below): a "brain" answers each call from what it is sent; the
model streams words and tool-call chunks like a provider, binds tools as OpenAI specs, and
`with_structured_output` is LangChain's own (a forced tool call parsed into the pydantic
object). Web search and page fetches are deterministic local stand-ins; prompts are short
placeholders and the templates' `datetime.now()` is a fixed time.

Observables are raw: outputs, what each model was sent, `astream`/`stream` chunks of
`["updates", "values", "custom", "messages"]` (messages with their token metadata),
states and histories with an in-memory and a SQLite checkpointer, stores and vector stores,
`draw_mermaid()`, input/output/context JSON schemas, the deprecation warnings of the
templates' `input=`/`output=`/`config_schema=`, and the errors users hit.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import json
import operator
import os
import uuid
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Literal, Optional, Union, cast

import pytest
from _agent_scenarios import ahistory as _ahistory
from _agent_scenarios import asaver as _asaver
from _agent_scenarios import calls as _calls
from _agent_scenarios import history as _history
from _agent_scenarios import saver as _saver
from _agent_scenarios import say as _say
from _diff import (
    acapture,
    acollect,
    candidate_engine,
    capture,
    collect,
    reference_engine,
    run_scenario,
    selftest_enabled,
    snapshot_summary,
)
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_chunk_to_message,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig, ensure_config
from langchain_core.tools import InjectedToolArg, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.prebuilt import InjectedState, ToolNode
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel, Field

SYSTEM_TIME = "2025-01-01T00:00:00+00:00"
SORRY = "Sorry, I could not find an answer to your question in the specified number of steps."


# ==================================================================================================
# the scripted provider model
# ==================================================================================================


class Model(BaseChatModel):
    """A provider chat model answering from `brain(messages, tools, tool_choice)` (tools as
    names); it streams its words, then its tool calls as chunks, then a last chunk with the
    finish reason. `bind_tools` binds OpenAI tool specs (so LangChain's own
    `with_structured_output` forces a tool call and parses it); `calls` records each call:
    the tools bound, the tool choice, other bound kwargs and the messages sent."""

    brain: Any
    model_name: str = "scripted"
    calls: list = Field(default_factory=list)
    specs: dict = Field(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "scripted-provider"

    @property
    def _identifying_params(self) -> dict:
        return {"model_name": self.model_name}

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        specs = [convert_to_openai_tool(t)["function"] for t in tools]
        return self.bind(tools=specs, tool_choice=tool_choice, **kwargs)

    def _reply(self, messages, tools=None, tool_choice=None, **kwargs):
        names = [t["name"] for t in tools or []]
        for t in tools or []:
            self.specs[t["name"]] = t
        extra = {k: v for k, v in sorted(kwargs.items()) if k != "ls_structured_output_format"}
        self.calls.append({"tools": names, "tool_choice": tool_choice, **extra,
                           "messages": [(m.type, m.content) for m in messages]})
        return self.brain(messages, names, tool_choice)

    def _chunks(self, msg):
        words = msg.content.split(" ") if msg.content else []
        for i, word in enumerate(words):
            yield AIMessageChunk(content=word if i == 0 else " " + word, id=msg.id)
        if msg.tool_calls:
            yield AIMessageChunk(content="", id=msg.id, tool_call_chunks=[
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i,
                 "type": "tool_call_chunk"} for i, c in enumerate(msg.tool_calls)])
        yield AIMessageChunk(content="", id=msg.id, chunk_position="last", response_metadata={
            "finish_reason": "tool_calls" if msg.tool_calls else "stop", "model_name": self.model_name})

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        for c in self._chunks(self._reply(messages, **kwargs)):
            chunk = ChatGenerationChunk(message=c)
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):
        for c in self._chunks(self._reply(messages, **kwargs)):
            chunk = ChatGenerationChunk(message=c)
            if run_manager:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            await asyncio.sleep(0)
            yield chunk

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        total = None
        for c in self._stream(messages, stop, run_manager, **kwargs):
            total = c if total is None else total + c
        return ChatResult(generations=[ChatGeneration(message=message_chunk_to_message(total.message))])


def script(*steps):
    """A brain answering with the steps in order; a callable step answers from the call."""
    it = iter(steps)

    def brain(messages, tools, tool_choice):
        step = next(it)
        return step(messages, tools, tool_choice) if callable(step) else step

    return brain


def _models(brains):
    """The scenario's models by fully specified name ("provider/model" -> Model)."""
    return {name: Model(brain=b, model_name=name.split("/")[-1]) for name, b in brains.items()}


def _loader(models):
    """The templates' `load_chat_model("provider/model")`, resolved to the scripted models."""
    def load_chat_model(fully_specified_name: str) -> BaseChatModel:
        if "/" not in fully_specified_name:
            raise ValueError(f"Unable to infer model provider for {fully_specified_name!r}")
        return models[fully_specified_name]

    return load_chat_model


def _text(msg: BaseMessage) -> str:
    """The templates' `get_message_text`."""
    content = msg.content
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content.get("text", "")
    return "".join(c if isinstance(c, str) else (c.get("text") or "") for c in content).strip()


def _msgs(messages):
    """A conversation as users print it: type, name, content, tool calls, tool call id."""
    return [(m.type, m.name, m.content, [(c["name"], c["args"], c["id"]) for c in getattr(m, "tool_calls", [])],
             getattr(m, "tool_call_id", None)) for m in messages]


def _cfg(tid="t1", **configurable):
    return {"configurable": {"thread_id": tid, **configurable}}


def _warnings_of(build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = build()
    return result, sorted({(w.category.__name__, str(w.message)) for w in caught})


def _surface(graph):
    """What users look at of a compiled template: its name, drawing and JSON schemas."""
    return {"name": graph.get_name(), "mermaid": graph.get_graph().draw_mermaid(),
            "input": graph.get_input_jsonschema(), "output": graph.get_output_jsonschema(),
            "context": capture(graph.get_context_jsonschema)}


_MODES = ["updates", "values", "custom", "messages"]






# ==================================================================================================
# react-agent
# ==================================================================================================

REACT_PROMPT = "You are a helpful AI assistant.\n\nSystem time: {system_time}"


async def _tavily(query: str, max_results: int, writer) -> dict:
    """The stand-in for `TavilySearch(max_results=...)`: deterministic results, and a
    progress note on the stream writer."""
    writer({"tavily": query, "max_results": max_results})
    return {"query": query, "results": [{"url": f"https://example.com/{query.replace(' ', '-')}/{i}",
                                         "content": f"result {i} about {query}"} for i in range(min(2, max_results))]}


def build_react(E, models):
    """react_agent/{context,state,tools,graph}.py, condensed: returns the builder and `Context`."""
    load_chat_model = _loader(models)

    @dataclass(kw_only=True)
    class Context:
        """The context for the agent."""

        system_prompt: str = field(default=REACT_PROMPT, metadata={
            "description": "The system prompt to use for the agent's interactions."})
        model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
            default="anthropic/claude-sonnet-4-5-20250929",
            metadata={"description": "The name of the language model to use. provider/model-name."})
        max_search_results: int = field(default=10, metadata={
            "description": "The maximum number of search results to return for each search query."})

        def __post_init__(self) -> None:
            for f in fields(self):
                if f.init and getattr(self, f.name) == f.default:
                    setattr(self, f.name, os.environ.get(f.name.upper(), f.default))

    @dataclass
    class InputState:
        messages: Annotated[Sequence[AnyMessage], E.add_messages] = field(default_factory=list)

    @dataclass
    class State(InputState):
        is_last_step: E.IsLastStep = field(default=False)

    async def search(query: str) -> Optional[dict[str, Any]]:
        """Search for general web results."""
        runtime = E.get_runtime(Context)
        return await _tavily(query, runtime.context.max_search_results, runtime.stream_writer)

    TOOLS = [search]

    async def call_model(state: State, runtime: E.Runtime[Context]) -> dict[str, list[AIMessage]]:
        model = load_chat_model(runtime.context.model).bind_tools(TOOLS)
        system_message = runtime.context.system_prompt.format(system_time=SYSTEM_TIME)
        response = cast(AIMessage, await model.ainvoke([{"role": "system", "content": system_message}, *state.messages]))
        if state.is_last_step and response.tool_calls:
            return {"messages": [AIMessage(id=response.id, content=SORRY)]}
        return {"messages": [response]}

    def route_model_output(state: State) -> Literal["__end__", "tools"]:
        last_message = state.messages[-1]
        if not isinstance(last_message, AIMessage):
            raise ValueError(f"Expected AIMessage in output edges, but got {type(last_message).__name__}")
        if not last_message.tool_calls:
            return "__end__"
        return "tools"

    builder = E.StateGraph(State, input_schema=InputState, context_schema=Context)
    builder.add_node(call_model)
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_edge("__start__", "call_model")
    builder.add_conditional_edges("call_model", route_model_output)
    builder.add_edge("tools", "call_model")
    return builder, Context


def _react(E, *steps, **compile_kw):
    """The compiled template with a model answering `steps` in order (or, given one
    function, always answering from it)."""
    brain = steps[0] if len(steps) == 1 and callable(steps[0]) else script(*steps)
    models = _models({"anthropic/claude-sonnet-4-5-20250929": brain})
    builder, Context = build_react(E, models)
    return builder.compile(name="ReAct Agent", **compile_kw), Context, models["anthropic/claude-sonnet-4-5-20250929"]


def _ask(text="What is LangGraph?", mid="h1"):
    return {"messages": [HumanMessage(text, id=mid)]}


def _searching(messages, tools, tool_choice):
    """A model that keeps searching: one call per turn, numbered by the conversation."""
    n = len(messages)
    return _calls(f"ai{n}", ("search", {"query": f"q{n}"}, f"c{n}"))


def test_react_template_structure_and_schemas(differential):
    """The compiled template's name, mermaid drawing (conditional edges from the router's
    `Literal` hint), input schema (InputState: messages only), output schema (State without
    the managed `is_last_step`) and context schema (the Context dataclass and its field
    metadata)."""
    def scenario(E):
        graph, _, _ = _react(E)
        return _surface(graph)

    ref = differential(scenario)
    assert ref["name"] == "ReAct Agent"
    assert "is_last_step" not in ref["output"]["properties"]
    assert set(ref["context"]["properties"]) == {"system_prompt", "model", "max_search_results"}


def test_react_parallel_searches_read_the_context(differential):
    """Two searches in one turn (ToolNode runs both), each reading
    `get_runtime(Context).context.max_search_results`, then the answer; the system prompt
    from the context; what the model was sent and the tool spec it was bound."""
    async def scenario(E):
        graph, Context, model = _react(
            E, _calls("ai1", ("search", {"query": "langgraph"}, "c1"), ("search", {"query": "pregel"}, "c2")),
            _say("LangGraph is a graph runtime.", "ai2"))
        out = await graph.ainvoke(_ask(), context=Context(max_search_results=1, system_prompt="Be brief. {system_time}"))
        return _msgs(out["messages"]), list(out), model.calls, model.specs

    ref = differential(scenario)
    msgs, keys, calls, _ = ref
    assert keys == ["messages"]
    assert [m[0] for m in msgs] == ["human", "ai", "tool", "tool", "ai"]
    assert calls[0]["messages"][0] == ("system", "Be brief. <ts>")  # the fixed time, normalized


def test_react_context_given_as_dict_default_and_instance(differential):
    """`context=` as a dict (coerced into the dataclass), as `Context()` (defaults) and as an
    instance: the tool sees each run's own `max_search_results`."""
    async def scenario(E):
        out = []
        for ctx in ({"max_search_results": 1}, "default", {}):
            graph, Context, model = _react(E, _calls("ai1", ("search", {"query": "x"}, "c1")), _say("done", "ai2"))
            context = Context() if ctx == "default" else ctx
            res = await graph.ainvoke(_ask(), context=context)
            out.append((_msgs(res["messages"]), model.calls[0]["messages"][0]))
        return out

    ref = differential(scenario)
    assert '"result 1 about x"' in ref[1][0][2][2]  # the default: 10 results wanted, 2 found
    assert '"result 1 about x"' not in ref[0][0][2][2]


def test_react_astream_updates_values_custom_messages(differential):
    """`astream(stream_mode=["updates", "values", "custom", "messages"])` of a turn with a
    search: the model's tokens and tool-call chunks with their metadata (node, step, path,
    triggers, provider params), the tool's progress note, the ToolMessage in messages mode,
    each step's update and values."""
    async def scenario(E):
        graph, Context, _ = _react(E, _calls("ai1", ("search", {"query": "langgraph"}, "c1"), content="Let me look."),
                                   _say("LangGraph is a graph runtime.", "ai2"))
        return await acollect(lambda: graph.astream(_ask(), context=Context(max_search_results=2), stream_mode=_MODES))

    ref = differential(scenario)
    assert [c[0] for c in ref].count("custom") == 1
    assert any(c[0] == "messages" and c[1][1]["langgraph_node"] == "tools" for c in ref)


def test_react_is_last_step_sorry_answer_or_recursion_error_by_limit(differential):
    """A model that never stops searching, run with recursion limits 1..8: where the model's
    turn is the last step, the template answers "Sorry, I could not find an answer..." (with
    the model's message id); otherwise the model's last tool call has no step left to run
    and the run fails with `GraphRecursionError`."""
    async def scenario(E):
        out = {}
        for limit in range(1, 9):
            graph, Context, model = _react(E, _searching)
            res = await acapture(lambda g=graph, c=Context, n=limit: g.ainvoke(_ask(), {"recursion_limit": n}, context=c()))
            out[limit] = (res if isinstance(res, tuple) else _msgs(res["messages"]), len(model.calls))
        return out

    ref = differential(scenario)
    outcomes = {limit: (v[0][0] if isinstance(v[0], tuple) else v[0][-1][2]) for limit, v in ref.items()}
    assert SORRY in outcomes.values() and "raises" in outcomes.values()


def test_react_recursion_error_stream_and_saved_state(differential, tmp_path):
    """The recursion error mid-`astream` with a checkpointer: the chunks before it, then the
    error; `aget_state` shows the thread stopped before the tool call it had no step left
    for; the history of the thread."""
    async def scenario(E):
        graph, Context, _ = _react(E, _searching, checkpointer=E.InMemorySaver())
        chunks = await acollect(lambda: graph.astream(_ask(), {**_cfg(), "recursion_limit": 5}, context=Context(),
                                                      stream_mode=["updates", "custom"]))
        state = snapshot_summary(await graph.aget_state(_cfg()))
        return chunks, state, await _ahistory(graph, _cfg())

    ref = differential(scenario)
    assert ref[0][-1][:2] == ("raises", "GraphRecursionError")
    assert ref[1]["next"] == ("tools",)


def test_react_missing_or_wrong_context(differential):
    """Errors users hit: no `context=` at all (the node reads `runtime.context.model` off
    None), a misspelt field in a context dict (the dataclass refuses it when the run
    starts), and a context naming a model the loader does not have (its `KeyError` raised
    from the node)."""
    async def scenario(E):
        graph, Context, _ = _react(E, _say("hi", "ai1"), _say("hi", "ai2"))
        return (await acapture(lambda: graph.ainvoke(_ask())),
                await acapture(lambda: graph.ainvoke(_ask(), context={"modle": "openai/gpt-4o"})),
                await acapture(lambda: graph.ainvoke(_ask(), context={"model": "openai/gpt-4o"})))

    ref = differential(scenario)
    assert ref[0][:2] == ("raises", "AttributeError")
    assert ref[1][:2] == ("raises", "TypeError")
    assert ref[2][:2] == ("raises", "KeyError")


def test_react_sync_invoke_and_stream_of_the_async_template(differential):
    """The template's nodes and tool are async: a sync `invoke` / `stream` fails on the first
    node, as users find out running it from a script (lgnb adds a line of help below
    LangGraph's message)."""
    def scenario(E):
        graph, Context, _ = _react(E, _say("hi", "ai1"), _say("hi", "ai2"))
        return (capture(lambda: graph.invoke(_ask(), context=Context())),
                collect(lambda: graph.stream(_ask(), context=Context(), stream_mode=_MODES)))

    ref = differential(scenario, exc="extends")
    assert ref[0][:2] == ("raises", "TypeError")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_react_two_turns_on_a_thread_state_and_history(differential, tmp_path, kind):
    """Two turns on one thread with a checkpointer (in memory / `AsyncSqliteSaver`): the
    second turn's model sees the whole conversation; `aget_state` and the history."""
    async def scenario(E):
        async with _asaver(E, kind, tmp_path) as saver:
            graph, Context, model = _react(
                E, _calls("ai1", ("search", {"query": "langgraph"}, "c1")), _say("A graph runtime.", "ai2"),
                _say("You asked about LangGraph.", "ai3"), checkpointer=saver)
            await graph.ainvoke(_ask(), _cfg(), context=Context())
            out = await graph.ainvoke(_ask("What did I ask?", "h2"), _cfg(), context=Context())
            return (_msgs(out["messages"]), snapshot_summary(await graph.aget_state(_cfg())),
                    await _ahistory(graph, _cfg()), model.calls[-1]["messages"])

    ref = differential(scenario)
    assert len(ref[2]) == 8  # 5 checkpoints of the first turn, 3 of the second


@pytest.mark.skipif(selftest_enabled(), reason="a deliberate difference: lgnb's side is asserted")
def test_react_sync_sqlite_saver_with_async_run(tmp_path):
    """The sync `SqliteSaver` handed to the async template. A deliberate difference (lgnb's
    sync saver implements the async methods in a worker thread, documented in
    `lgnb/checkpoint/sqlite/__init__.py`): LangGraph's refuses `ainvoke` with
    `NotImplementedError` (use `AsyncSqliteSaver`); lgnb's runs it and saves the thread."""
    async def scenario(E):
        with _saver(E, "sqlite", tmp_path) as saver:
            graph, Context, _ = _react(E, _say("hi", "ai1"), checkpointer=saver)
            out = await acapture(lambda: graph.ainvoke(_ask(), _cfg(), context=Context()))
            saved = await acapture(lambda: graph.aget_state(_cfg()))
            return out, saved

    theirs = run_scenario(scenario, reference_engine())
    assert theirs[0][:2] == ("raises", "NotImplementedError")
    ours, saved = run_scenario(scenario, candidate_engine())
    assert [m.content for m in ours["messages"]][-1] == "hi"
    assert saved.next == () and [m.content for m in saved.values["messages"]] == [
        m.content for m in ours["messages"]]


# ==================================================================================================
# memory-agent
# ==================================================================================================

MEMORY_PROMPT = "You are a helpful and friendly chatbot. Get to know the user!\n{user_info}\n\nSystem Time: {time}"


def build_memory(E, models):
    """memory_agent/{context,state,tools,graph}.py, condensed: returns the builder and `Context`."""
    load_chat_model = _loader(models)

    @dataclass(kw_only=True)
    class Context:
        """Main context class for the memory graph system."""

        user_id: str = "default"
        model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
            default="anthropic/claude-sonnet-4-5-20250929",
            metadata={"description": "The name of the language model to use for the agent."})
        system_prompt: str = MEMORY_PROMPT

        def __post_init__(self):
            for f in fields(self):
                if f.init and getattr(self, f.name) == f.default:
                    setattr(self, f.name, os.environ.get(f.name.upper(), f.default))

    @dataclass(kw_only=True)
    class State:
        """Main graph state."""

        messages: Annotated[list[AnyMessage], E.add_messages]

    async def upsert_memory(content: str, context: str, *, memory_id: Optional[uuid.UUID] = None,
                            user_id: Annotated[str, InjectedToolArg], store: Annotated[BaseStore, InjectedToolArg]):
        """Upsert a memory in the database.

        Args:
            content: The main content of the memory.
            context: Additional context for the memory.
            memory_id: ONLY PROVIDE IF UPDATING AN EXISTING MEMORY.
        """
        mem_id = memory_id or uuid.uuid4()
        await store.aput(("memories", user_id), key=str(mem_id), value={"content": content, "context": context})
        return f"Stored memory {mem_id}"

    async def call_model(state: State, runtime: E.Runtime[Context]) -> dict:
        user_id = runtime.context.user_id
        memories = await cast(BaseStore, runtime.store).asearch(
            ("memories", user_id), query=str([m.content for m in state.messages[-3:]]), limit=10)
        formatted = "\n".join(f"[{mem.key}]: {mem.value} (similarity: {mem.score})" for mem in memories)
        if formatted:
            formatted = f"\n<memories>\n{formatted}\n</memories>"
        sys = runtime.context.system_prompt.format(user_info=formatted, time=SYSTEM_TIME)
        llm = load_chat_model(runtime.context.model)
        msg = await llm.bind_tools([upsert_memory]).ainvoke([{"role": "system", "content": sys}, *state.messages])
        return {"messages": [msg]}

    async def store_memory(state: State, runtime: E.Runtime[Context]):
        tool_calls = getattr(state.messages[-1], "tool_calls", [])
        saved_memories = await asyncio.gather(*(
            upsert_memory(**tc["args"], user_id=runtime.context.user_id, store=cast(BaseStore, runtime.store))
            for tc in tool_calls))
        return {"messages": [{"role": "tool", "content": mem, "tool_call_id": tc["id"]}
                             for tc, mem in zip(tool_calls, saved_memories)]}

    def route_message(state: State):
        msg = state.messages[-1]
        if getattr(msg, "tool_calls", None):
            return "store_memory"
        return E.END

    builder = E.StateGraph(State, context_schema=Context)
    builder.add_node(call_model)
    builder.add_edge("__start__", "call_model")
    builder.add_node(store_memory)
    builder.add_conditional_edges("call_model", route_message, ["store_memory", E.END])
    builder.add_edge("store_memory", "call_model")
    return builder, Context


def _memory(E, brain, **compile_kw):
    model = Model(brain=brain, model_name="claude-sonnet-4-5")
    builder, Context = build_memory(E, {"anthropic/claude-sonnet-4-5-20250929": model})
    graph = builder.compile(**compile_kw)
    graph.name = "MemoryAgent"
    return graph, Context, model


def _memory_brain(messages, tools, tool_choice):
    """Remembers what the user says ("I like X and Y": one memory each, in parallel; "call
    me X": updates the memory about names it finds in its prompt); after storing, or when
    asked, answers from the memories in its system prompt."""
    system, last = messages[0].content, messages[-1]
    n = len(messages)
    if last.type == "human" and last.content.startswith("I like "):
        likes = last.content[len("I like "):].split(" and ")
        return _calls(f"ai{n}", *[("upsert_memory", {"content": f"User likes {x}", "context": "hobbies"}, f"c{n}-{i}")
                                  for i, x in enumerate(likes)])
    if last.type == "human" and last.content.startswith("Call me "):
        known = [line for line in system.splitlines() if "name" in line]
        args = {"content": f"User is called {last.content[8:]}", "context": "names"}
        if known:
            args["memory_id"] = known[0][1:].split("]")[0]
        return _calls(f"ai{n}", ("upsert_memory", args, f"c{n}"))
    memories = [line for line in system.splitlines() if line.startswith("[")]
    return _say(f"I remember {len(memories)} things.", f"ai{n}")


def _dump(store):
    """The store's content: (namespace, key, value), ordered by value (keys are uuid4s)."""
    out = []
    for ns in store.list_namespaces():
        for item in store.search(ns, limit=100):
            out.append((tuple(item.namespace), item.key, item.value))
    return sorted(out, key=lambda x: (x[0], json.dumps(x[2], sort_keys=True)))


def test_memory_template_structure_and_schemas(differential):
    """The memory graph's name set after compiling, drawing (router with a path map), input,
    output and context schemas."""
    def scenario(E):
        graph, _, _ = _memory(E, _memory_brain, store=InMemoryStore())
        return _surface(graph)

    ref = differential(scenario)
    assert ref["name"] == "MemoryAgent"
    assert "user_id" in ref["context"]["properties"]


def test_memory_parallel_upserts_then_recall_on_another_thread(differential):
    """One turn stores two memories at once (`asyncio.gather` of `upsert_memory`), the model
    then answers seeing them in its prompt; a second thread of the same user recalls them,
    another user's does not. The store's items, every prompt, and the tool spec the model
    was bound (the `InjectedToolArg`s hidden)."""
    async def scenario(E):
        store = InMemoryStore()
        graph, Context, model = _memory(E, _memory_brain, store=store, checkpointer=E.InMemorySaver())
        a = await graph.ainvoke({"messages": [("user", "I like tea and chess")]}, _cfg("1"), context=Context(user_id="u1"))
        b = await graph.ainvoke({"messages": [("user", "What do you know?")]}, _cfg("2"), context=Context(user_id="u1"))
        c = await graph.ainvoke({"messages": [("user", "What do you know?")]}, _cfg("3"), context=Context(user_id="u2"))
        return (_msgs(a["messages"]), _msgs(b["messages"]), _msgs(c["messages"]), _dump(store),
                [call["messages"][0] for call in model.calls], model.specs)

    ref = differential(scenario)
    assert [m[2] for m in ref[1]][-1] == "I remember 2 things."
    assert [m[2] for m in ref[2]][-1] == "I remember 0 things."
    assert set(ref[5]["upsert_memory"]["parameters"]["properties"]) == {"content", "context", "memory_id"}


def test_memory_update_of_an_existing_memory_by_id(differential):
    """"Call me X" twice: the second time the model passes the `memory_id` it finds in its
    prompt, and the memory is overwritten (one item, the new content)."""
    async def scenario(E):
        store = InMemoryStore()
        graph, Context, model = _memory(E, _memory_brain, store=store)
        ctx = Context(user_id="u1")
        first = await graph.ainvoke({"messages": [HumanMessage("Call me Al", id="h1")]}, context=ctx)
        second = await graph.ainvoke({"messages": [HumanMessage("Call me Alan", id="h2")]}, context=ctx)
        return _msgs(first["messages"]), _msgs(second["messages"]), _dump(store)

    ref = differential(scenario)
    assert [v for _, _, v in ref[2]] == [{"content": "User is called Alan", "context": "names"}]


def test_memory_astream_updates_values_custom_messages(differential):
    """`astream` of a storing turn in all four modes: the tool calls streamed as chunks, the
    `store_memory` update (dict tool messages coerced by `add_messages`), the final answer's
    tokens with their metadata."""
    async def scenario(E):
        store = InMemoryStore()
        graph, Context, _ = _memory(E, _memory_brain, store=store)
        return await acollect(lambda: graph.astream({"messages": [HumanMessage("I like tea", id="h1")]},
                                                    context=Context(user_id="u1"), stream_mode=_MODES))

    ref = differential(scenario)
    assert any(c[0] == "updates" and "store_memory" in c[1] for c in ref)


def test_memory_without_store_or_context(differential):
    """Errors users hit: the graph compiled without a store (`runtime.store` is None) and a
    run without `context=` (`runtime.context` is None)."""
    async def scenario(E):
        no_store, Context, _ = _memory(E, _memory_brain)
        with_store, _, _ = _memory(E, _memory_brain, store=InMemoryStore())
        return (await acapture(lambda: no_store.ainvoke({"messages": [HumanMessage("hi", id="h1")]},
                                                        context=Context(user_id="u1"))),
                await acapture(lambda: with_store.ainvoke({"messages": [HumanMessage("hi", id="h1")]})))

    ref = differential(scenario)
    assert ref[0][:2] == ("raises", "AttributeError") and ref[1][:2] == ("raises", "AttributeError")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_memory_thread_state_and_history(differential, tmp_path, kind):
    """A storing turn and a recall turn on one thread with a checkpointer: state, history."""
    async def scenario(E):
        store = InMemoryStore()
        async with _asaver(E, kind, tmp_path) as saver:
            graph, Context, _ = _memory(E, _memory_brain, store=store, checkpointer=saver)
            ctx = Context(user_id="u1")
            await graph.ainvoke({"messages": [HumanMessage("I like tea", id="h1")]}, _cfg(), context=ctx)
            await graph.ainvoke({"messages": [HumanMessage("And you?", id="h2")]}, _cfg(), context=ctx)
            return snapshot_summary(await graph.aget_state(_cfg())), await _ahistory(graph, _cfg()), _dump(store)

    differential(scenario)


# ==================================================================================================
# data-enrichment
# ==================================================================================================

ENRICH_PROMPT = "Research this topic: {topic}\nFill in this schema:\n{info}"
INFO_PROMPT = "Research for: {info}\nYou scraped {url}:\n{content}"
CHECKER_PROMPT = "I am thinking of calling the info tool with the info below. Is this good?\n\n{presumed_info}"
PAGES = {"https://langchain.com/team": "LangChain was founded by Harrison Chase in 2022.",
         "https://langchain.com/about": "LangChain is based in San Francisco."}


class InfoIsSatisfactory(BaseModel):
    """Validate whether the current extracted info is satisfactory and complete."""

    reason: list[str] = Field(description="First, provide reasoning. Must include at least 3 reasons.")
    is_satisfactory: bool = Field(description="Whether the result is satisfactory.")
    improvement_instructions: Optional[str] = Field(default=None, description="What needs to be improved.")


def build_enrichment(E, models):
    """enrichment_agent/{configuration,state,tools,graph}.py, condensed: returns the builder
    (built as the template does, with `input=`, `output=`, `config_schema=`)."""

    @dataclass(kw_only=True)
    class Configuration:
        """The configuration for the agent."""

        model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
            default="anthropic/claude-3-5-sonnet-20240620", metadata={"description": "provider/model-name."})
        prompt: str = field(default=ENRICH_PROMPT, metadata={"description": "The main prompt template."})
        max_search_results: int = field(default=10, metadata={"description": "Results per search."})
        max_info_tool_calls: int = field(default=3, metadata={"description": "Info tool calls allowed."})
        max_loops: int = field(default=6, metadata={"description": "Interaction loops allowed."})

        @classmethod
        def from_runnable_config(cls, config: Optional[RunnableConfig] = None) -> "Configuration":
            config = ensure_config(config)
            configurable = config.get("configurable") or {}
            _fields = {f.name for f in fields(cls) if f.init}
            return cls(**{k: v for k, v in configurable.items() if k in _fields})

    @dataclass(kw_only=True)
    class InputState:
        topic: str
        extraction_schema: dict[str, Any]
        info: Optional[dict[str, Any]] = field(default=None)

    @dataclass(kw_only=True)
    class State(InputState):
        messages: Annotated[list[BaseMessage], E.add_messages] = field(default_factory=list)
        loop_step: Annotated[int, operator.add] = field(default=0)

    @dataclass(kw_only=True)
    class OutputState:
        info: dict[str, Any]

    def init_model(config: Optional[RunnableConfig] = None) -> BaseChatModel:
        return _loader(models)(Configuration.from_runnable_config(config).model)

    async def search(query: str, *, config: Annotated[RunnableConfig, InjectedToolArg]) -> Optional[list[dict[str, Any]]]:
        """Query a search engine."""
        configuration = Configuration.from_runnable_config(config)
        hits = [{"url": url, "content": text} for url, text in PAGES.items() if any(w in text for w in query.split())]
        return hits[:configuration.max_search_results]

    async def scrape_website(url: str, *, state: Annotated[State, InjectedState],
                             config: Annotated[RunnableConfig, InjectedToolArg]) -> str:
        """Scrape and summarize content from a given URL."""
        content = PAGES.get(url, "404 Not Found")
        p = INFO_PROMPT.format(info=json.dumps(state.extraction_schema, indent=2), url=url, content=content[:40_000])
        result = await init_model(config).ainvoke(p)
        return str(result.content)

    async def call_agent_model(state: State, *, config: Optional[RunnableConfig] = None) -> dict[str, Any]:
        configuration = Configuration.from_runnable_config(config)
        info_tool = {"name": "Info", "description": "Call this when you have gathered all the relevant info",
                     "parameters": state.extraction_schema}
        p = configuration.prompt.format(info=json.dumps(state.extraction_schema, indent=2), topic=state.topic)
        messages = [HumanMessage(content=p)] + state.messages
        model = init_model(config).bind_tools([scrape_website, search, info_tool], tool_choice="any")
        response = cast(AIMessage, await model.ainvoke(messages))
        info = None
        if response.tool_calls:
            for tool_call in response.tool_calls:
                if tool_call["name"] == "Info":
                    info = tool_call["args"]
                    break
        if info is not None:
            response.tool_calls = [next(tc for tc in response.tool_calls if tc["name"] == "Info")]
        response_messages: list[BaseMessage] = [response]
        if not response.tool_calls:
            response_messages.append(HumanMessage(content="Please respond by calling one of the provided tools."))
        return {"messages": response_messages, "info": info, "loop_step": 1}

    async def reflect(state: State, *, config: Optional[RunnableConfig] = None) -> dict[str, Any]:
        p = ENRICH_PROMPT.format(info=json.dumps(state.extraction_schema, indent=2), topic=state.topic)
        last_message = state.messages[-1]
        if not isinstance(last_message, AIMessage):
            raise ValueError(f"reflect expects the last message in the state to be an AI message with tool calls."
                             f" Got: {type(last_message)}")
        messages = [HumanMessage(content=p)] + state.messages[:-1]
        presumed_info = state.info
        messages.append(HumanMessage(content=CHECKER_PROMPT.format(presumed_info=json.dumps(presumed_info or {}, indent=2))))
        bound_model = init_model(config).with_structured_output(InfoIsSatisfactory)
        response = cast(InfoIsSatisfactory, await bound_model.ainvoke(messages))
        if response.is_satisfactory and presumed_info:
            return {"info": presumed_info, "messages": [ToolMessage(
                tool_call_id=last_message.tool_calls[0]["id"], content="\n".join(response.reason), name="Info",
                additional_kwargs={"artifact": response.model_dump()}, status="success")]}
        return {"messages": [ToolMessage(
            tool_call_id=last_message.tool_calls[0]["id"],
            content=f"Unsatisfactory response:\n{response.improvement_instructions}", name="Info",
            additional_kwargs={"artifact": response.model_dump()}, status="error")]}

    def route_after_agent(state: State) -> Literal["reflect", "tools", "call_agent_model", "__end__"]:
        last_message = state.messages[-1]
        if not isinstance(last_message, AIMessage):
            return "call_agent_model"
        if last_message.tool_calls and last_message.tool_calls[0]["name"] == "Info":
            return "reflect"
        return "tools"

    def route_after_checker(state: State, config: RunnableConfig) -> Literal["__end__", "call_agent_model"]:
        configurable = Configuration.from_runnable_config(config)
        last_message = state.messages[-1]
        if state.loop_step < configurable.max_loops:
            if not state.info:
                return "call_agent_model"
            if not isinstance(last_message, ToolMessage):
                raise ValueError(f"route_after_checker expected a tool messages. Received: {type(last_message)}.")
            if last_message.status == "error":
                return "call_agent_model"
            return "__end__"
        return "__end__"

    workflow = E.StateGraph(State, input=InputState, output=OutputState, config_schema=Configuration)
    workflow.add_node(call_agent_model)
    workflow.add_node(reflect)
    workflow.add_node("tools", ToolNode([search, scrape_website]))
    workflow.add_edge("__start__", "call_agent_model")
    workflow.add_conditional_edges("call_agent_model", route_after_agent)
    workflow.add_edge("tools", "call_agent_model")
    workflow.add_conditional_edges("reflect", route_after_checker)
    return workflow


FOUNDERS_SCHEMA = {"type": "object", "properties": {
    "founder": {"type": "string", "description": "Who founded it"},
    "year": {"type": "integer", "description": "Year founded"},
    "city": {"type": "string", "description": "Where it is based"}}, "required": ["founder", "year"]}


def _enrichment_brain(*, satisfied_after=2, ignore_tools_once=False):
    """Searches, scrapes what it found, then submits `Info` (without the city the first
    time); the checker asks for more until the `satisfied_after`-th check; a scrape call
    summarizes the page. With `ignore_tools_once`, the first answer is plain text."""
    state = {"checks": 0, "ignored": not ignore_tools_once}

    def brain(messages, tools, tool_choice):
        n = len(messages)
        if tools == ["InfoIsSatisfactory"]:
            state["checks"] += 1
            ok = state["checks"] >= satisfied_after
            args = {"reason": ["has founder", "has year", "city" if ok else "no city"], "is_satisfactory": ok,
                    "improvement_instructions": None if ok else "Find the city."}
            return _calls(f"check{state['checks']}", ("InfoIsSatisfactory", args, f"k{state['checks']}"))
        if not tools:  # scrape_website summarizing a page
            return _say(f"Notes: {messages[-1].content.splitlines()[-1]}", f"notes{n}")
        if not state["ignored"]:
            state["ignored"] = True
            return _say("I think I know already.", f"ai{n}")
        done = {m.tool_call_id for m in messages if m.type == "tool"}
        if "s1" not in done:
            return _calls(f"ai{n}", ("search", {"query": "founded"}, "s1"))
        if "w1" not in done:
            return _calls(f"ai{n}", ("scrape_website", {"url": "https://langchain.com/team"}, "w1"))
        unsatisfied = [m for m in messages if m.type == "tool" and m.content.startswith("Unsatisfactory")]
        if unsatisfied and "w2" not in done:
            return _calls(f"ai{n}", ("scrape_website", {"url": "https://langchain.com/about"}, "w2"))
        info = {"founder": "Harrison Chase", "year": 2022}
        if "w2" in done:
            info["city"] = "San Francisco"
        return _calls(f"ai{n}", ("Info", info, f"info{n}"), ("search", {"query": "more"}, f"extra{n}"))

    return brain


def _enrichment(E, brain, **compile_kw):
    model = Model(brain=brain, model_name="claude-3-5-sonnet")
    graph = build_enrichment(E, {"anthropic/claude-3-5-sonnet-20240620": model}).compile(**compile_kw)
    graph.name = "ResearchTopic"
    return graph, model


_TOPIC = {"topic": "LangChain", "extraction_schema": FOUNDERS_SCHEMA}


def test_enrichment_template_structure_schemas_and_deprecations(differential):
    """The deprecation warnings of `StateGraph(State, input=, output=, config_schema=)`, the
    drawing (routers' `Literal` hints), input schema (required topic and schema), output
    schema (info only) and the context schema the `config_schema` became."""
    def scenario(E):
        graph, caught = _warnings_of(lambda: _enrichment(E, _enrichment_brain())[0])
        return caught, _surface(graph)

    ref = differential(scenario)
    assert len(ref[0]) == 3
    assert list(ref[1]["output"]["properties"]) == ["info"]


def test_enrichment_research_reflect_and_retry_until_satisfied(differential):
    """The full loop: search, scrape (the tool reads the injected dataclass state and
    config, and calls the model), `Info` submitted alongside another call (kept alone), the
    checker unsatisfied (error ToolMessage with the artifact), more research, `Info` again,
    satisfied: the output is `{"info": ...}` only; what the model was sent each time."""
    async def scenario(E):
        graph, model = _enrichment(E, _enrichment_brain())
        out = await graph.ainvoke(_TOPIC)
        return out, [(c["tools"], c["tool_choice"], c["messages"][-1]) for c in model.calls]

    ref = differential(scenario)
    assert ref[0] == {"info": {"founder": "Harrison Chase", "year": 2022, "city": "San Francisco"}}


def test_enrichment_max_loops_from_configurable_ends_unsatisfied(differential):
    """`configurable={"max_loops": 1}`: the first check is unsatisfied but the loop budget is
    spent, so the run ends with the presumed info; the values show the checker's verdict."""
    async def scenario(E):
        graph, model = _enrichment(E, _enrichment_brain(), checkpointer=E.InMemorySaver())
        out = await graph.ainvoke(_TOPIC, _cfg(max_loops=1))
        state = (await graph.aget_state(_cfg())).values
        return out, state["loop_step"], _msgs(state["messages"]), len(model.calls)

    ref = differential(scenario)
    assert ref[0] == {"info": {"founder": "Harrison Chase", "year": 2022}}


def test_enrichment_model_ignoring_tool_choice_is_reprompted(differential):
    """The model answers in plain text once: the template appends "Please respond by calling
    one of the provided tools." and routes back to the model."""
    async def scenario(E):
        graph, _ = _enrichment(E, _enrichment_brain(satisfied_after=1, ignore_tools_once=True))
        return await acollect(lambda: graph.astream(_TOPIC, stream_mode="updates"))

    ref = differential(scenario)
    first = ref[0]["call_agent_model"]["messages"]
    assert first[-1][1]["content"] == "Please respond by calling one of the provided tools."


def test_enrichment_astream_updates_values_custom_messages(differential):
    """All four modes: the agent's tool-call chunks, the scraping tool's own model tokens
    (streamed from inside the `tools` node), the checker's structured-output call chunks,
    the reflect node's ToolMessage, the values (dataclass state as dicts)."""
    async def scenario(E):
        graph, _ = _enrichment(E, _enrichment_brain(satisfied_after=1))
        return await acollect(lambda: graph.astream(_TOPIC, stream_mode=_MODES))

    ref = differential(scenario)
    nodes = {c[1][1]["langgraph_node"] for c in ref if c[0] == "messages"}
    assert {"call_agent_model", "tools", "reflect"} <= nodes


def test_enrichment_input_errors(differential):
    """Errors users hit: the input without the required `extraction_schema` (the dataclass
    state cannot be built for the node), and a topic only in `configurable`."""
    async def scenario(E):
        graph, _ = _enrichment(E, _enrichment_brain())
        return (await acapture(lambda: graph.ainvoke({"topic": "LangChain"})),
                await acapture(lambda: graph.ainvoke({}, {"configurable": {"topic": "LangChain"}})))

    ref = differential(scenario)
    assert ref[0][:2] == ("raises", "TypeError")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_enrichment_state_and_history(differential, tmp_path, kind):
    """A satisfied-at-once run with a checkpointer: the final state and the history."""
    async def scenario(E):
        async with _asaver(E, kind, tmp_path) as saver:
            graph, _ = _enrichment(E, _enrichment_brain(satisfied_after=1), checkpointer=saver)
            await graph.ainvoke(_TOPIC, _cfg())
            return snapshot_summary(await graph.aget_state(_cfg())), await _ahistory(graph, _cfg())

    differential(scenario)


# ==================================================================================================
# retrieval-agent
# ==================================================================================================

RESPONSE_PROMPT = "Answer using the documents.\n\n{retrieved_docs}\n\nSystem time: {system_time}"
QUERY_PROMPT = "Write a search query. Previous queries:\n- {queries}\n\nSystem time: {system_time}"


def reduce_docs(existing: Optional[Sequence[Document]],
                new: Union[Sequence[Document], Sequence[dict[str, Any]], Sequence[str], str, Literal["delete"]]) -> Sequence[Document]:
    if new == "delete":
        return []
    if isinstance(new, str):
        return [Document(page_content=new, metadata={"id": str(uuid.uuid4())})]
    if isinstance(new, list):
        coerced = []
        for item in new:
            if isinstance(item, str):
                coerced.append(Document(page_content=item, metadata={"id": str(uuid.uuid4())}))
            elif isinstance(item, dict):
                coerced.append(Document(**item))
            else:
                coerced.append(item)
        return coerced
    return existing or []


def add_queries(existing: Sequence[str], new: Sequence[str]) -> Sequence[str]:
    return list(existing) + list(new)


class SearchQuery(BaseModel):
    """Search the indexed documents for a query."""

    query: str


def _format_docs(docs: Optional[list[Document]]) -> str:
    if not docs:
        return "<documents></documents>"
    body = "\n".join(f"<document{' ' + ''.join(f' {k}={v!r}' for k, v in (d.metadata or {}).items()) if d.metadata else ''}>"
                     f"\n{d.page_content}\n</document>" for d in docs)
    return f"<documents>\n{body}\n</documents>"


def build_retrieval(E, models, vstores):
    """retrieval_graph/{configuration,state,retrieval,index_graph,graph}.py, condensed:
    returns the index builder and the retrieval builder. `vstores` is the scenario's
    persistent index (one `InMemoryVectorStore` per embedding model)."""
    load_chat_model = _loader(models)

    @dataclass(kw_only=True)
    class IndexConfiguration:
        """Configuration class for indexing and retrieval operations."""

        user_id: str = field(metadata={"description": "Unique identifier for the user."})
        embedding_model: Annotated[str, {"__template_metadata__": {"kind": "embeddings"}}] = field(
            default="fake/deterministic-16", metadata={"description": "Name of the embedding model to use."})
        retriever_provider: Annotated[Literal["in-memory", "elastic"], {"__template_metadata__": {"kind": "retriever"}}] = field(
            default="in-memory", metadata={"description": "The vector store provider to use for retrieval."})
        search_kwargs: dict[str, Any] = field(default_factory=dict, metadata={
            "description": "Additional keyword arguments to pass to the search function of the retriever."})

        @classmethod
        def from_runnable_config(cls, config: Optional[RunnableConfig] = None):
            config = ensure_config(config)
            configurable = config.get("configurable") or {}
            _fields = {f.name for f in fields(cls) if f.init}
            return cls(**{k: v for k, v in configurable.items() if k in _fields})

    @dataclass(kw_only=True)
    class Configuration(IndexConfiguration):
        """The configuration for the agent."""

        response_system_prompt: str = field(default=RESPONSE_PROMPT, metadata={"description": "Response prompt."})
        response_model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
            default="anthropic/claude-3-5-sonnet-20240620", metadata={"description": "Response model."})
        query_system_prompt: str = field(default=QUERY_PROMPT, metadata={"description": "Query prompt."})
        query_model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
            default="anthropic/claude-3-haiku-20240307", metadata={"description": "Query model."})

    def make_text_encoder(model: str) -> Embeddings:
        provider, model = model.split("/", maxsplit=1)
        if provider == "fake":
            return DeterministicFakeEmbedding(size=int(model.rsplit("-", 1)[1]))
        raise ValueError(f"Unsupported embedding provider: {provider}")

    @contextmanager
    def make_in_memory_retriever(configuration, embedding_model):
        vstore = vstores.setdefault(configuration.embedding_model, InMemoryVectorStore(embedding_model))
        search_kwargs = dict(configuration.search_kwargs)
        user_id = configuration.user_id
        search_kwargs["filter"] = lambda doc: doc.metadata.get("user_id") == user_id
        yield vstore.as_retriever(search_kwargs=search_kwargs)

    @contextmanager
    def make_retriever(config: RunnableConfig):
        configuration = IndexConfiguration.from_runnable_config(config)
        embedding_model = make_text_encoder(configuration.embedding_model)
        if not configuration.user_id:
            raise ValueError("Please provide a valid user_id in the configuration.")
        if configuration.retriever_provider == "in-memory":
            with make_in_memory_retriever(configuration, embedding_model) as retriever:
                yield retriever
        else:
            raise ValueError("Unrecognized retriever_provider in configuration. Expected one of: in-memory\n"
                             f"Got: {configuration.retriever_provider}")

    @dataclass(kw_only=True)
    class IndexState:
        docs: Annotated[Sequence[Document], reduce_docs]

    @dataclass(kw_only=True)
    class InputState:
        messages: Annotated[Sequence[AnyMessage], E.add_messages]

    @dataclass(kw_only=True)
    class State(InputState):
        queries: Annotated[list[str], add_queries] = field(default_factory=list)
        retrieved_docs: list[Document] = field(default_factory=list)

    async def index_docs(state: IndexState, *, config: Optional[RunnableConfig] = None) -> dict[str, str]:
        if not config:
            raise ValueError("Configuration required to run index_docs.")
        with make_retriever(config) as retriever:
            user_id = config["configurable"]["user_id"]
            stamped = [Document(page_content=d.page_content, metadata={**d.metadata, "user_id": user_id})
                       for d in state.docs]
            await retriever.aadd_documents(stamped)
        return {"docs": "delete"}

    index_builder = E.StateGraph(IndexState, config_schema=IndexConfiguration)
    index_builder.add_node(index_docs)
    index_builder.add_edge("__start__", "index_docs")

    async def generate_query(state: State, *, config: RunnableConfig) -> dict[str, list[str]]:
        messages = state.messages
        if len(messages) == 1:
            return {"queries": [_text(messages[-1])]}
        configuration = Configuration.from_runnable_config(config)
        prompt = ChatPromptTemplate.from_messages([("system", configuration.query_system_prompt),
                                                   ("placeholder", "{messages}")])
        model = load_chat_model(configuration.query_model).with_structured_output(SearchQuery)
        message_value = await prompt.ainvoke({"messages": state.messages, "queries": "\n- ".join(state.queries),
                                              "system_time": SYSTEM_TIME}, config)
        generated = cast(SearchQuery, await model.ainvoke(message_value, config))
        return {"queries": [generated.query]}

    async def retrieve(state: State, *, config: RunnableConfig) -> dict[str, list[Document]]:
        with make_retriever(config) as retriever:
            response = await retriever.ainvoke(state.queries[-1], config)
            return {"retrieved_docs": response}

    async def respond(state: State, *, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        configuration = Configuration.from_runnable_config(config)
        prompt = ChatPromptTemplate.from_messages([("system", configuration.response_system_prompt),
                                                   ("placeholder", "{messages}")])
        model = load_chat_model(configuration.response_model)
        message_value = await prompt.ainvoke({"messages": state.messages, "retrieved_docs": _format_docs(state.retrieved_docs),
                                              "system_time": SYSTEM_TIME}, config)
        response = await model.ainvoke(message_value, config)
        return {"messages": [response]}

    builder = E.StateGraph(State, input=InputState, config_schema=Configuration)
    builder.add_node(generate_query)
    builder.add_node(retrieve)
    builder.add_node(respond)
    builder.add_edge("__start__", "generate_query")
    builder.add_edge("generate_query", "retrieve")
    builder.add_edge("retrieve", "respond")
    return index_builder, builder


def _retrieval_brains():
    def query_brain(messages, tools, tool_choice):
        last = messages[-1].content
        return _calls(f"q{len(messages)}", ("SearchQuery", {"query": f"search: {last}"}, f"sq{len(messages)}"))

    def respond_brain(messages, tools, tool_choice):
        docs = [line for line in messages[0].content.splitlines() if line and not line.startswith("<")
                and not line.startswith(("Answer", "System"))]
        return _say(f"From {len(docs)} documents: {' | '.join(sorted(docs))}", f"r{len(messages)}")

    return _models({"anthropic/claude-3-haiku-20240307": query_brain,
                    "anthropic/claude-3-5-sonnet-20240620": respond_brain})


def _retrieval(E, **compile_kw):
    vstores: dict = {}
    models = _retrieval_brains()
    index_builder, builder = build_retrieval(E, models, vstores)
    index_graph = index_builder.compile()
    index_graph.name = "IndexGraph"
    graph = builder.compile(interrupt_before=[], interrupt_after=[], **compile_kw)
    graph.name = "RetrievalGraph"
    return index_graph, graph, vstores, models


def _vstore_dump(vstores):
    return {name: sorted(((d["text"], d["metadata"]) for d in vs.store.values()), key=repr)
            for name, vs in vstores.items()}


_DOCS_U1 = ["LangGraph checkpoints every step.", {"page_content": "Pregel runs supersteps.", "metadata": {"src": "paper"}}]
_DOCS_U2 = "Bob's private note."


def test_retrieval_templates_structure_schemas_and_deprecations(differential):
    """Both graphs of the template: the warnings of `input=`/`config_schema=`, their
    drawings, input/output schemas (Documents in the state) and context schemas (the
    configuration dataclasses, `user_id` required)."""
    def scenario(E):
        (index_graph, graph, _, _), caught = _warnings_of(lambda: _retrieval(E))
        return caught, _surface(index_graph), _surface(graph)

    ref = differential(scenario)
    assert ref[1]["context"]["required"] == ["user_id"]


def test_retrieval_index_then_answer_only_from_the_users_documents(differential):
    """Index documents for two users (strings get uuid ids, dicts become Documents, the
    node stamps the user id and answers `{"docs": "delete"}`), then ask as the first user:
    the retriever's filter keeps the other user's note out; the answer, the vector store."""
    async def scenario(E):
        index_graph, graph, vstores, models = _retrieval(E)
        i1 = await index_graph.ainvoke({"docs": _DOCS_U1}, {"configurable": {"user_id": "u1"}})
        i2 = await index_graph.ainvoke({"docs": _DOCS_U2}, {"configurable": {"user_id": "u2"}})
        out = await graph.ainvoke({"messages": [("user", "How does LangGraph run?")]}, {"configurable": {"user_id": "u1"}})
        return (i1, i2, _msgs(out["messages"]), out["queries"], sorted(d.page_content for d in out["retrieved_docs"]),
                _vstore_dump(vstores), [c["messages"] for c in models["anthropic/claude-3-5-sonnet-20240620"].calls])

    ref = differential(scenario)
    assert ref[0] == {"docs": []}
    assert ref[4] == ["LangGraph checkpoints every step.", "Pregel runs supersteps."]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_retrieval_follow_up_turn_uses_structured_query(differential, tmp_path, kind):
    """A second turn on the thread: `generate_query` asks the query model for a
    `SearchQuery` (LangChain's `with_structured_output`, the prompt listing earlier
    queries); state (Documents included) and history with a checkpointer."""
    async def scenario(E):
        async with _asaver(E, kind, tmp_path, allow=[Document]) as saver:
            index_graph, graph, _, models = _retrieval(E, checkpointer=saver)
            await index_graph.ainvoke({"docs": _DOCS_U1}, {"configurable": {"user_id": "u1"}})
            cfg = _cfg(user_id="u1")
            await graph.ainvoke({"messages": [HumanMessage("What are checkpoints?", id="h1")]}, cfg)
            out = await graph.ainvoke({"messages": [HumanMessage("And supersteps?", id="h2")]}, cfg)
            return (out["queries"], models["anthropic/claude-3-haiku-20240307"].calls,
                    snapshot_summary(await graph.aget_state(cfg)), await _ahistory(graph, cfg))

    ref = differential(scenario)
    assert ref[0] == ["What are checkpoints?", "search: And supersteps?"]


def test_retrieval_configuration_errors(differential):
    """Errors users hit: no `user_id` in `configurable` (the dataclass requires it), an
    unknown retriever provider, an unsupported embedding provider, and running the index
    graph without any config."""
    async def scenario(E):
        index_graph, graph, _, _ = _retrieval(E)
        return (await acapture(lambda: index_graph.ainvoke({"docs": "x"})),
                await acapture(lambda: graph.ainvoke({"messages": [("user", "hi")]},
                                                     {"configurable": {"user_id": "u", "retriever_provider": "pinecone"}})),
                await acapture(lambda: graph.ainvoke({"messages": [("user", "hi")]},
                                                     {"configurable": {"user_id": "u", "embedding_model": "openai/x"}})),
                await acapture(lambda: index_graph.ainvoke({"docs": ["x"]}, {"configurable": {"user_id": ""}})))

    ref = differential(scenario)
    assert ref[0][:2] == ("raises", "TypeError")
    assert ref[1][:2] == ("raises", "ValueError")


def test_retrieval_astream_updates_values_custom_messages(differential):
    """All four modes of a two-turn conversation's second turn (no checkpointer: the
    history is in the input): the structured query call's chunks, retrieved Documents in
    the update, the answer's tokens with metadata."""
    async def scenario(E):
        index_graph, graph, _, _ = _retrieval(E)
        await index_graph.ainvoke({"docs": _DOCS_U1}, {"configurable": {"user_id": "u1"}})
        inp = {"messages": [HumanMessage("What are checkpoints?", id="h1"), AIMessage("Saved steps.", id="a1"),
                            HumanMessage("And supersteps?", id="h2")]}
        return await acollect(lambda: graph.astream(inp, {"configurable": {"user_id": "u1"}}, stream_mode=_MODES))

    ref = differential(scenario)
    assert {c[1][1]["langgraph_node"] for c in ref if c[0] == "messages"} == {"generate_query", "respond"}


# ==================================================================================================
# local-deep-researcher
# ==================================================================================================


class ResearchConfiguration(BaseModel):
    """The configurable fields for the research assistant."""

    max_web_research_loops: int = Field(default=3, title="Research Depth", description="Number of research iterations to perform")
    local_llm: str = Field(default="llama3.2", title="LLM Model Name", description="Name of the LLM model to use")
    llm_provider: Literal["ollama", "lmstudio"] = Field(default="ollama", title="LLM Provider", description="Provider for the LLM")
    search_api: Literal["perplexity", "tavily", "duckduckgo", "searxng"] = Field(default="duckduckgo", title="Search API")
    fetch_full_page: bool = Field(default=True, title="Fetch Full Page")
    strip_thinking_tokens: bool = Field(default=True, title="Strip Thinking Tokens")
    use_tool_calling: bool = Field(default=False, title="Use Tool Calling")

    @classmethod
    def from_runnable_config(cls, config: Optional[RunnableConfig] = None) -> "ResearchConfiguration":
        configurable = config["configurable"] if config and "configurable" in config else {}
        raw_values: dict[str, Any] = {name: os.environ.get(name.upper(), configurable.get(name)) for name in cls.model_fields}
        return cls(**{k: v for k, v in raw_values.items() if v is not None})


def _strip_thinking_tokens(text: str) -> str:
    while "<think>" in text and "</think>" in text:
        start, end = text.find("<think>"), text.find("</think>") + len("</think>")
        text = text[:start] + text[end:]
    return text


def _ddg(query: str, max_results: int, fetch_full_page: bool) -> dict:
    """The stand-in for `duckduckgo_search`: two deterministic results per query, one of
    them shared by every query (so sources deduplicate)."""
    slug = query.lower().replace(" ", "-")
    hits = [{"title": "Overview", "url": "https://example.com/overview", "content": "General overview."},
            {"title": f"On {query}", "url": f"https://example.com/{slug}", "content": f"Details about {query}."}]
    for h in hits:
        h["raw_content"] = h["content"] * 2 if fetch_full_page else h["content"]
    return {"results": hits[:max_results]}


def _dedupe_and_format(search_response: dict, max_tokens_per_source: int, fetch_full_page: bool) -> str:
    unique = {}
    for source in search_response["results"]:
        unique.setdefault(source["url"], source)
    text = "Sources:\n\n"
    for source in unique.values():
        text += f"Source: {source['title']}\n===\nURL: {source['url']}\n===\nMost relevant content from source: {source['content']}\n===\n"
        if fetch_full_page:
            text += f"Full source content limited to {max_tokens_per_source} tokens: {(source.get('raw_content') or '')[:max_tokens_per_source * 4]}\n\n"
    return text.strip()


def build_researcher(E, models):
    """ollama_deep_researcher/{configuration,state,graph}.py, condensed: returns the builder
    (built as the template does, with `input=`, `output=`, `config_schema=`)."""

    @dataclass(kw_only=True)
    class SummaryState:
        research_topic: str = field(default=None)
        search_query: str = field(default=None)
        web_research_results: Annotated[list, operator.add] = field(default_factory=list)
        sources_gathered: Annotated[list, operator.add] = field(default_factory=list)
        research_loop_count: int = field(default=0)
        running_summary: str = field(default=None)

    @dataclass(kw_only=True)
    class SummaryStateInput:
        research_topic: str = field(default=None)

    @dataclass(kw_only=True)
    class SummaryStateOutput:
        running_summary: str = field(default=None)

    def get_llm(configurable: ResearchConfiguration):
        llm = models[f"{configurable.llm_provider}/{configurable.local_llm}"]
        return llm if configurable.use_tool_calling else llm.bind(format="json")

    def generate_search_query_with_structured_output(configurable, messages, tool_class, fallback_query,
                                                     tool_query_field, json_query_field):
        if configurable.use_tool_calling:
            result = get_llm(configurable).bind_tools([tool_class]).invoke(messages)
            if not result.tool_calls:
                return {"search_query": fallback_query}
            try:
                return {"search_query": result.tool_calls[0]["args"].get(tool_query_field)}
            except (IndexError, KeyError):
                return {"search_query": fallback_query}
        content = get_llm(configurable).invoke(messages).content
        try:
            search_query = json.loads(content).get(json_query_field)
            return {"search_query": search_query or fallback_query}
        except (json.JSONDecodeError, KeyError):
            return {"search_query": fallback_query}

    def generate_query(state: SummaryState, config: RunnableConfig):
        configurable = ResearchConfiguration.from_runnable_config(config)

        @tool
        class Query(BaseModel):
            """This tool is used to generate a query for web search."""

            query: str = Field(description="The actual search query string")
            rationale: str = Field(description="Brief explanation of why this query is relevant")

        mode = "Call the Query tool." if configurable.use_tool_calling else "Answer in JSON with a query key."
        messages = [SystemMessage(content=f"Write a search query about {state.research_topic}. {mode}"),
                    HumanMessage(content="Generate a query for web search:")]
        return generate_search_query_with_structured_output(
            configurable, messages, Query, f"Tell me more about {state.research_topic}", "query", "query")

    def web_research(state: SummaryState, config: RunnableConfig):
        configurable = ResearchConfiguration.from_runnable_config(config)
        if configurable.search_api != "duckduckgo":
            raise ValueError(f"Unsupported search API: {configurable.search_api}")
        results = _ddg(state.search_query, max_results=3, fetch_full_page=configurable.fetch_full_page)
        search_str = _dedupe_and_format(results, 1000, configurable.fetch_full_page)
        return {"sources_gathered": ["\n".join(f"* {s['title']} : {s['url']}" for s in results["results"])],
                "research_loop_count": state.research_loop_count + 1,
                "web_research_results": [search_str]}

    def summarize_sources(state: SummaryState, config: RunnableConfig):
        existing_summary = state.running_summary
        recent = state.web_research_results[-1]
        if existing_summary:
            content = f"<Existing Summary> {existing_summary} <New Context> {recent} Update it on: {state.research_topic}"
        else:
            content = f"<Context> {recent} Create a Summary on: {state.research_topic}"
        configurable = ResearchConfiguration.from_runnable_config(config)
        llm = models[f"{configurable.llm_provider}/{configurable.local_llm}"]
        result = llm.invoke([SystemMessage(content="Summarize."), HumanMessage(content=content)])
        running_summary = result.content
        if configurable.strip_thinking_tokens:
            running_summary = _strip_thinking_tokens(running_summary)
        return {"running_summary": running_summary}

    def reflect_on_summary(state: SummaryState, config: RunnableConfig):
        configurable = ResearchConfiguration.from_runnable_config(config)

        @tool
        class FollowUpQuery(BaseModel):
            """This tool is used to generate a follow-up query to address a knowledge gap."""

            follow_up_query: str = Field(description="Write a specific question to address this gap")
            knowledge_gap: str = Field(description="Describe what information is missing")

        mode = "Call the FollowUpQuery tool." if configurable.use_tool_calling else "Answer in JSON with a follow_up_query key."
        messages = [SystemMessage(content=f"Find a knowledge gap about {state.research_topic}. {mode}"),
                    HumanMessage(content=f"Reflect on our existing knowledge: === {state.running_summary} ===")]
        return generate_search_query_with_structured_output(
            configurable, messages, FollowUpQuery, f"Tell me more about {state.research_topic}",
            "follow_up_query", "follow_up_query")

    def finalize_summary(state: SummaryState):
        seen, unique = set(), []
        for source in state.sources_gathered:
            for line in source.split("\n"):
                if line.strip() and line not in seen:
                    seen.add(line)
                    unique.append(line)
        state.running_summary = f"## Summary\n{state.running_summary}\n\n ### Sources:\n" + "\n".join(unique)
        return {"running_summary": state.running_summary}

    def route_research(state: SummaryState, config: RunnableConfig) -> Literal["finalize_summary", "web_research"]:
        configurable = ResearchConfiguration.from_runnable_config(config)
        if state.research_loop_count <= configurable.max_web_research_loops:
            return "web_research"
        return "finalize_summary"

    builder = E.StateGraph(SummaryState, input=SummaryStateInput, output=SummaryStateOutput,
                           config_schema=ResearchConfiguration)
    builder.add_node("generate_query", generate_query)
    builder.add_node("web_research", web_research)
    builder.add_node("summarize_sources", summarize_sources)
    builder.add_node("reflect_on_summary", reflect_on_summary)
    builder.add_node("finalize_summary", finalize_summary)
    builder.add_edge(E.START, "generate_query")
    builder.add_edge("generate_query", "web_research")
    builder.add_edge("web_research", "summarize_sources")
    builder.add_edge("summarize_sources", "reflect_on_summary")
    builder.add_conditional_edges("reflect_on_summary", route_research)
    builder.add_edge("finalize_summary", E.END)
    return builder


def _researcher_brain(*, bad_json_at=None, no_tool_call_at=None):
    """JSON mode: `{"query": ...}` / `{"follow_up_query": ...}` from the topic or the gap;
    tool-calling mode: a `Query` / `FollowUpQuery` tool call. The summarizer thinks aloud
    (`<think>...</think>`) and counts the sources it was given. `bad_json_at` /
    `no_tool_call_at`: the n-th query call answers badly (the template falls back)."""
    count = {"n": 0}

    def brain(messages, tools, tool_choice):
        system, human = messages[0].content, messages[-1].content
        if system == "Summarize.":
            return _say(f"<think>hmm</think>Summary of {human.count('Source:')} sources; "
                        f"{'updated' if human.startswith('<Existing') else 'new'}.", None)
        count["n"] += 1
        gap = f"gap {count['n']}"
        if tools:
            if count["n"] == no_tool_call_at:
                return _say("I would search for something.", None)
            name = tools[0]
            args = {"query": "research topic", "rationale": "r"} if name == "Query" else \
                {"follow_up_query": gap, "knowledge_gap": "g"}
            return _calls(None, (name, args, f"call{count['n']}"))
        if count["n"] == bad_json_at:
            return _say("not json", None)
        key = "query" if "query key" in system else "follow_up_query"
        return _say(json.dumps({key: "research topic" if key == "query" else gap}), None)

    return brain


def _researcher(E, brain=None, **compile_kw):
    models = {"ollama/llama3.2": Model(brain=brain or _researcher_brain(), model_name="llama3.2")}
    return build_researcher(E, models).compile(**compile_kw), models["ollama/llama3.2"]


def test_researcher_template_structure_schemas_and_deprecations(differential):
    """The researcher's deprecation warnings (`input=`, `output=`, pydantic
    `config_schema=`), its drawing, input schema (the topic), output schema (the summary)
    and context schema (the pydantic Configuration with titles)."""
    def scenario(E):
        (graph, _), caught = _warnings_of(lambda: _researcher(E))
        return caught, _surface(graph)

    ref = differential(scenario)
    assert list(ref[1]["input"]["properties"]) == ["research_topic"]
    assert ref[1]["context"]["properties"]["max_web_research_loops"]["title"] == "Research Depth"


def test_researcher_json_mode_loops_then_finalizes_sync_and_async(differential):
    """JSON mode with `max_web_research_loops=2` in `configurable`: three searches (the
    loop runs while the count is <= the limit), summaries stripped of thinking tokens,
    sources deduplicated in the final summary; the output is the summary only. `invoke`
    and `ainvoke` (sync nodes in the executor) give the same."""
    def scenario(E):
        graph, model = _researcher(E)
        out = graph.invoke({"research_topic": "solar power"}, {"configurable": {"max_web_research_loops": 2}})
        agraph, _ = _researcher(E)
        aout = asyncio.run(agraph.ainvoke({"research_topic": "solar power"}, {"configurable": {"max_web_research_loops": 2}}))
        return out, aout, [(c.get("format"), c["messages"]) for c in model.calls]

    ref = differential(scenario)
    assert ref[0] == ref[1] and list(ref[0]) == ["running_summary"]
    assert "<think>" not in ref[0]["running_summary"]


def test_researcher_tool_calling_mode_and_fallback_queries(differential):
    """`use_tool_calling=True`: queries come from the `Query` / `FollowUpQuery` tool calls
    (`@tool` on a pydantic class); a reply without a tool call falls back to "Tell me more
    about ..."; in JSON mode an answer that is not JSON falls back too."""
    def scenario(E):
        tools_graph, tools_model = _researcher(E, _researcher_brain(no_tool_call_at=2))
        a = tools_graph.invoke({"research_topic": "wind"}, {"configurable": {"use_tool_calling": True, "max_web_research_loops": 1}})
        json_graph, _ = _researcher(E, _researcher_brain(bad_json_at=1))
        b = json_graph.invoke({"research_topic": "wind"}, {"configurable": {"max_web_research_loops": 0}})
        return a, b, [(c["tools"], c.get("format")) for c in tools_model.calls], tools_model.specs

    ref = differential(scenario)
    assert "Tell me more about wind" in ref[0]["running_summary"]
    assert "Tell me more about wind" in ref[1]["running_summary"]


def test_researcher_sync_stream_updates_values_custom_messages(differential):
    """A sync `stream` of one loop in all four modes: JSON-mode query tokens, the
    summarizer's tokens (thinking included: the template strips the state value, not the
    stream), the updates, the values (dataclass state as dicts)."""
    def scenario(E):
        graph, _ = _researcher(E)
        return collect(lambda: graph.stream({"research_topic": "tides"}, {"configurable": {"max_web_research_loops": 0}},
                                            stream_mode=_MODES))

    ref = differential(scenario)
    assert any(c[0] == "messages" and c[1][0][1]["content"] == "<think>hmm</think>Summary" for c in ref)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_researcher_state_and_history_with_sqlite_saver(differential, tmp_path, kind):
    """One loop with a checkpointer (in memory / the sync `SqliteSaver`): state and history;
    then a second run on the thread with another topic (input merged into the saved state,
    the loop count carried over, so the loop ends at once)."""
    def scenario(E):
        with _saver(E, kind, tmp_path) as saver:
            graph, _ = _researcher(E, checkpointer=saver)
            cfg = _cfg(max_web_research_loops=0)
            first = graph.invoke({"research_topic": "tides"}, cfg)
            second = graph.invoke({"research_topic": "waves"}, cfg)
            return first, second, snapshot_summary(graph.get_state(cfg)), _history(graph, cfg)

    differential(scenario)


def test_researcher_unsupported_search_api(differential):
    """An unsupported `search_api` in `configurable`: pydantic refuses it when the node builds
    the configuration; a supported but unimplemented one fails in `web_research`."""
    def scenario(E):
        graph, _ = _researcher(E)
        return (capture(lambda: graph.invoke({"research_topic": "x"}, {"configurable": {"search_api": "bing"}})),
                capture(lambda: graph.invoke({"research_topic": "x"}, {"configurable": {"search_api": "tavily"}})))

    ref = differential(scenario)
    assert ref[0][:2] == ("raises", "ValidationError")
    assert ref[1] == ("raises", "ValueError", "Unsupported search API: tavily")

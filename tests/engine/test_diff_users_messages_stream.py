"""The `messages` stream as chat UIs consume it: user-written chat models, many ways of calling
them inside nodes, edges and tools, and what LangGraph emits from node outputs.

Every scenario runs on LangGraph and on lgnb; the observable is the whole stream (each chunk
with its full metadata dict, ids normalized) unless a test says otherwise.  The chat model is
a `BaseChatModel` subclass of the kind users write for an in-house API: `_stream` yields
`ChatGenerationChunk`s (text pieces, tool-call chunks split across chunks, usage and response
metadata on the last chunk) and `_generate` aggregates the stream.
"""

import asyncio
import operator
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.chat_models import agenerate_from_stream, generate_from_stream
from langchain_core.messages import (AIMessage, AIMessageChunk, BaseMessage, HumanMessage,
                                     RemoveMessage, SystemMessage, ToolMessage)
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableLambda
from typing_extensions import TypedDict

from _diff import acollect, collect, steps_as_multisets

HI = {"messages": [HumanMessage("hi", id="h1")]}


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


# --------------------------------------------------------------------------------------
# a chat model as users write one
# --------------------------------------------------------------------------------------


def text_turn(*pieces, finish="stop", usage=(3, 2), last_position=True, chunk_id=None):
    """Chunks of a text reply; the last one carries usage, finish reason and position."""
    out = [{"content": p} for p in pieces]
    out.append({"content": "", "response_metadata": {"finish_reason": finish, "model_name": "inhouse-1"},
                "usage_metadata": {"input_tokens": usage[0], "output_tokens": usage[1],
                                   "total_tokens": usage[0] + usage[1]},
                **({"chunk_position": "last"} if last_position else {})})
    if chunk_id is not None:
        for kw in out:
            kw["id"] = chunk_id
    return out


def tool_turn(name, args_json, call_id, *, text=""):
    """Chunks of a reply calling one tool; the arguments arrive in three pieces."""
    third = max(1, len(args_json) // 3)
    pieces = [args_json[:third], args_json[third:2 * third], args_json[2 * third:]]
    out = [{"content": text}] if text else []
    out.append({"content": "", "tool_call_chunks": [
        {"name": name, "args": "", "id": call_id, "index": 0, "type": "tool_call_chunk"}]})
    for p in pieces:
        out.append({"content": "", "tool_call_chunks": [
            {"name": None, "args": p, "id": None, "index": 0, "type": "tool_call_chunk"}]})
    out.append({"content": "", "response_metadata": {"finish_reason": "tool_calls"},
                "chunk_position": "last"})
    return out


class InHouseChat(BaseChatModel):
    """Each call plays the next turn (a list of AIMessageChunk kwargs) of its script."""

    script: list
    turn: int = 0
    fail_after: Any = None  # raise after this many chunks of the first turn

    @property
    def _llm_type(self) -> str:
        return "inhouse-chat"

    @property
    def _identifying_params(self) -> dict:
        return {"model_name": "inhouse-1"}

    def bind_tools(self, tools, **kwargs):
        return self.bind(tools=[getattr(t, "name", str(t)) for t in tools], **kwargs)

    def _next(self) -> list:
        t = self.turn
        self.turn += 1
        return t, self.script[t % len(self.script)]

    def _chunks(self) -> Iterator[ChatGenerationChunk]:
        t, turn = self._next()
        for i, kw in enumerate(turn):
            if t == 0 and self.fail_after is not None and i >= self.fail_after:
                raise ConnectionError(f"stream dropped after {i} chunks")
            yield ChatGenerationChunk(message=AIMessageChunk(**kw))

    def _stream(self, messages, stop=None, run_manager=None, **kwargs) -> Iterator[ChatGenerationChunk]:
        yield from self._chunks()

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks():
            await asyncio.sleep(0)
            yield chunk

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return generate_from_stream(self._stream(messages, stop, run_manager, **kwargs))

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))


def chat_graph(E, model, *, node="chat", checkpointer=None, call=None):
    def chat(s):
        return {"messages": [call(s) if call else model.invoke(s["messages"])]}

    g = E.StateGraph(E.MessagesState)
    g.add_node(node, chat)
    g.add_edge(E.START, node)
    return g.compile(checkpointer=checkpointer)


# --------------------------------------------------------------------------------------
# the chunks of a user's model
# --------------------------------------------------------------------------------------


def test_chunks_carry_usage_response_metadata_and_last_position_then_state_has_the_aggregate(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("Hel", "lo ", "there")])
        app = chat_graph(E, model, checkpointer=E.InMemorySaver())
        chunks = list(app.stream(HI, _cfg(), stream_mode="messages"))
        return chunks, app.get_state(_cfg()).values["messages"]

    ref = differential(scenario)
    chunks, final = ref
    assert len(chunks) == 4 and chunks[-1][0][1]["usage_metadata"]["total_tokens"] == 5
    assert final[-1][1]["content"] == "Hello there"


def test_explicit_provider_chunk_ids_are_kept_and_the_final_message_is_not_reemitted(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("a", "b", chunk_id="msg_provider_42")])
        app = chat_graph(E, model)
        return list(app.stream(HI, stream_mode="messages")), app.invoke(HI)["messages"][-1].id

    ref = differential(scenario)
    assert {c[0][1]["id"] for c in ref[0]} == {"msg_provider_42"}


def test_model_without_chunk_position_gets_no_synthetic_last_chunk_on_invoke(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("x", "y", last_position=False)])
        return list(chat_graph(E, model).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_model_stream_called_in_node_adds_the_synthetic_last_chunk(differential):
    def scenario(E):
        model = InHouseChat(script=[[{"content": "one "}, {"content": "two"}]])

        def call(s):
            total = None
            for c in model.stream(s["messages"]):
                total = c if total is None else total + c
            return total

        return list(chat_graph(E, model, call=call).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert ref[-1][0][1]["chunk_position"] == "last"


def test_stop_and_kwargs_bound_to_the_model_show_in_ls_metadata(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("ok")]).bind(stop=["END"])
        return list(chat_graph(E, model).stream(HI, _cfg(), stream_mode="messages"))

    ref = differential(scenario)
    assert ref[0][1]["ls_stop"] == ["END"]


def test_split_tool_call_chunks_then_tool_node_then_answer_in_messages_and_updates(differential):
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode, tools_condition

        @tool
        def weather(city: str) -> str:
            """Weather for a city."""
            return f"sunny in {city}"

        model = InHouseChat(script=[tool_turn("weather", '{"city": "Paris"}', "call_w", text="Checking"),
                                    text_turn("It is ", "sunny.")]).bind_tools([weather])

        def agent(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([weather]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = list(app.stream({"messages": [HumanMessage("weather?", id="h")]}, _cfg(),
                              stream_mode=["messages", "updates"]))
        return out, app.get_state(_cfg()).values["messages"]

    ref = differential(scenario)
    modes = [m for m, _ in ref[0]]
    assert modes.count("updates") == 3


def test_astream_of_an_async_node_with_the_users_astream(differential):
    async def scenario(E):
        model = InHouseChat(script=[text_turn("as", "ync")])

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        return await acollect(lambda: app.astream(HI, _cfg(), stream_mode=["messages", "values"]))

    differential(scenario)


# --------------------------------------------------------------------------------------
# how the model is called inside a node
# --------------------------------------------------------------------------------------


def test_model_batch_with_max_concurrency_one_streams_each_call_in_turn(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("first"), text_turn("second")])

        def chat(s):
            replies = model.batch([s["messages"], s["messages"]], config={"max_concurrency": 1})
            return {"messages": replies}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def _one(E, fn, name="chat", checkpointer=None, state=None):
    g = E.StateGraph(state or E.MessagesState)
    g.add_node(name, fn)
    g.add_edge(E.START, name)
    return g.compile(checkpointer=checkpointer)


def test_model_batch_in_parallel_streams_every_call_with_the_node_metadata(differential):
    # the calls run in LangChain's thread pool: their chunks interleave in thread order, so
    # the chunks are compared as a multiset (each call's own chunks are one id's)
    def scenario(E):
        models = [InHouseChat(script=[text_turn(f"r{i}a", f"r{i}b")]) for i in range(3)]

        def chat(s):
            from langchain_core.runnables import RunnableParallel
            par = RunnableParallel({f"m{i}": m for i, m in enumerate(models)})
            out = par.invoke(s["messages"])
            return {"messages": [out[f"m{i}"] for i in range(3)]}

        out = list(_one(E, chat).stream(HI, stream_mode="messages"))
        return steps_as_multisets(out, lambda c: False)

    differential(scenario)


def test_async_node_gathering_two_ainvoke_calls_streams_both(differential):
    async def scenario(E):
        a = InHouseChat(script=[text_turn("alpha", "beta")])
        b = InHouseChat(script=[text_turn("gamma", "delta")])

        async def chat(s):
            ra, rb = await asyncio.gather(a.ainvoke(s["messages"]), b.ainvoke(s["messages"]))
            return {"messages": [ra, rb]}

        return await acollect(lambda: _one(E, chat).astream(HI, stream_mode="messages"))

    differential(scenario)


def test_abatch_in_an_async_node_streams_every_call(differential):
    async def scenario(E):
        model = InHouseChat(script=[text_turn("one"), text_turn("two")])

        async def chat(s):
            return {"messages": await model.abatch([s["messages"], s["messages"]])}

        out = await acollect(lambda: _one(E, chat).astream(HI, stream_mode="messages"))
        return steps_as_multisets(out, lambda c: False)

    differential(scenario)


def test_model_with_disable_streaming_emits_only_its_final_message(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("whole", " reply")], disable_streaming=True)

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 1


def test_old_langsmith_nostream_tag_does_not_stop_streaming(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("still", " streamed")]).with_config(tags=["langsmith:nostream"])
        return list(chat_graph(E, model).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert ref[0][1]["tags"] == ["langsmith:nostream"]


def test_nostream_tag_passed_at_invoke_time_hides_the_tokens_but_not_the_returned_message(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("hidden", " tokens")])

        def chat(s, config):
            return {"messages": [model.invoke(s["messages"], {**config, "tags": ["nostream"]})]}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 1


def test_completion_llm_in_a_node_streams_nothing_and_the_node_message_is_emitted(differential):
    def scenario(E):
        from langchain_core.language_models.fake import FakeStreamingListLLM

        llm = FakeStreamingListLLM(responses=["plain completion"])

        def chat(s):
            return {"messages": [AIMessage(llm.invoke("prompt"), id="llm-out")]}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 1


def test_model_called_in_a_plain_thread_loses_streaming_and_comes_once_from_the_node(differential):
    def scenario(E):
        from concurrent.futures import ThreadPoolExecutor

        model = InHouseChat(script=[text_turn("from", " thread")])

        def chat(s):
            with ThreadPoolExecutor(1) as ex:
                msg = ex.submit(model.invoke, s["messages"]).result()
            return {"messages": [msg]}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 1


def test_model_called_in_a_context_thread_pool_streams(differential):
    def scenario(E):
        from langchain_core.runnables.config import ContextThreadPoolExecutor

        model = InHouseChat(script=[text_turn("ctx", " thread")])

        def chat(s):
            with ContextThreadPoolExecutor(1) as ex:
                msg = ex.submit(model.invoke, s["messages"]).result()
            return {"messages": [msg]}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 3


def test_model_with_retry_streams_the_failed_attempt_then_the_retry(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("part", "ial", "x"), text_turn("retried")], fail_after=2)
        runnable = model.with_retry(stop_after_attempt=2, wait_exponential_jitter=False,
                                    retry_if_exception_type=(ConnectionError,))

        def chat(s):
            return {"messages": [runnable.invoke(s["messages"])]}

        return list(_one(E, chat).stream(HI, stream_mode=["messages", "updates"]))

    differential(scenario)


def test_model_with_fallbacks_streams_the_fallback_after_the_primary_fails(differential):
    def scenario(E):
        primary = InHouseChat(script=[text_turn("pri", "mary")], fail_after=1)
        backup = InHouseChat(script=[text_turn("back", "up")])
        runnable = primary.with_fallbacks([backup])

        def chat(s):
            return {"messages": [runnable.invoke(s["messages"])]}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_chain_with_str_output_parser_streams_tokens_and_the_new_message_once(differential):
    def scenario(E):
        from langchain_core.output_parsers import StrOutputParser
        from langchain_core.prompts import ChatPromptTemplate

        prompt = ChatPromptTemplate.from_messages([("system", "be brief"), ("placeholder", "{messages}")])
        chain = prompt | InHouseChat(script=[text_turn("short", " answer")]) | StrOutputParser()

        def chat(s):
            text = chain.invoke({"messages": s["messages"]})
            return {"messages": [AIMessage(text, id="parsed")]}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


# --------------------------------------------------------------------------------------
# models outside plain node bodies
# --------------------------------------------------------------------------------------


def test_model_called_in_a_conditional_edge_router_streams_under_the_source_node(differential):
    def scenario(E):
        router_model = InHouseChat(script=[text_turn("tech")])

        def classify(s):
            return {"messages": [AIMessage("classifying", id="c1")]}

        def route(s) -> str:
            label = router_model.invoke(s["messages"]).content
            return "tech" if label == "tech" else "other"

        g = E.StateGraph(E.MessagesState)
        g.add_node("classify", classify)
        g.add_node("tech", lambda s: {"messages": [AIMessage("tech answer", id="t1")]})
        g.add_node("other", lambda s: {"messages": [AIMessage("other answer", id="o1")]})
        g.add_edge(E.START, "classify")
        g.add_conditional_edges("classify", route, ["tech", "other"])
        return list(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_model_called_in_a_router_from_start_streams_under_the_start_task(differential):
    def scenario(E):
        router_model = InHouseChat(script=[text_turn("billing")])

        def route(s) -> str:
            return router_model.invoke(s["messages"]).content

        g = E.StateGraph(E.MessagesState)
        g.add_node("billing", lambda s: {"messages": [AIMessage("billing here", id="b1")]})
        g.add_node("support", lambda s: {"messages": [AIMessage("support here", id="s1")]})
        g.add_conditional_edges(E.START, route, ["billing", "support"])
        return list(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_model_inside_a_tool_run_by_tool_node_with_subgraphs_and_updates(differential):
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode

        inner = InHouseChat(script=[text_turn("summary", " text")])

        @tool
        def summarize(topic: str) -> str:
            """Summarize a topic with a helper model."""
            return inner.invoke([HumanMessage(topic)]).content

        def agent(s):
            if isinstance(s["messages"][-1], ToolMessage):
                return {"messages": [AIMessage("done", id="done")]}
            return {"messages": [AIMessage("", id="ai1", tool_calls=[
                {"name": "summarize", "args": {"topic": "x"}, "id": "call_s", "type": "tool_call"}])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([summarize]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else E.END,
                                ["tools", E.END])
        g.add_edge("tools", "agent")
        return list(g.compile().stream(HI, stream_mode=["messages", "updates"], subgraphs=True))

    differential(scenario)

def test_prompt_model_chain_as_the_node_itself(differential):
    def scenario(E):
        from langchain_core.prompts import ChatPromptTemplate

        prompt = ChatPromptTemplate.from_messages([("system", "you help"), ("placeholder", "{messages}")])
        model = InHouseChat(script=[text_turn("chained", " node")])
        node = prompt | model | (lambda m: {"messages": [m]})
        app = _one(E, node, name="assistant", checkpointer=E.InMemorySaver())
        return list(app.stream(HI, _cfg(), stream_mode="messages")), app.get_state(_cfg()).values

    differential(scenario)


# --------------------------------------------------------------------------------------
# messages returned by nodes
# --------------------------------------------------------------------------------------


def test_human_tool_and_system_messages_returned_by_nodes_are_emitted_with_node_metadata(differential):
    def scenario(E):
        def ask(s):
            return {"messages": [SystemMessage("rules", id="sys"), HumanMessage("follow-up", id="fu")]}

        def tool_result(s):
            return {"messages": ToolMessage("42", tool_call_id="c1", id="tm")}

        g = E.StateGraph(E.MessagesState)
        g.add_node("ask", ask)
        g.add_node("tool_result", tool_result)
        g.add_edge(E.START, "ask")
        g.add_edge("ask", "tool_result")
        return list(g.compile(checkpointer=E.InMemorySaver()).stream(HI, _cfg(), stream_mode="messages"))

    differential(scenario)


def test_messages_wrapped_in_overwrite_are_not_emitted(differential):
    def scenario(E):
        def reset(s):
            return {"messages": E.Overwrite([AIMessage("fresh start", id="fresh")])}

        def after(s):
            return {"messages": [AIMessage(f"after {len(s['messages'])}", id="after")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("reset", reset)
        g.add_node("after", after)
        g.add_edge(E.START, "reset")
        g.add_edge("reset", "after")
        app = g.compile()
        return list(app.stream(HI, stream_mode="messages")), app.invoke(HI)

    differential(scenario)


def test_remove_all_marker_in_a_node_output_is_streamed_like_langgraph(differential):
    def scenario(E):
        def clear(s):
            return {"messages": [RemoveMessage(id=E.REMOVE_ALL_MESSAGES),
                                 AIMessage("summary of before", id="sum")]}

        return list(_one(E, clear).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_remove_message_for_a_message_added_in_the_same_run_is_not_emitted(differential):
    def scenario(E):
        def draft(s):
            return {"messages": [AIMessage("draft", id="d1")]}

        def prune(s):
            return {"messages": [RemoveMessage(id="d1"), AIMessage("final", id="f1")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("draft", draft)
        g.add_node("prune", prune)
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "prune")
        return list(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_message_published_from_a_nested_dict_of_the_input_is_emitted(differential):
    # per-agent private histories kept in a dict; a node copies one agent's last message
    # into the shared history. LangGraph marks as seen only the messages directly in a
    # node's input values (or lists of them), so this message is new to the stream.
    def scenario(E):
        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            private: dict

        def publish(s):
            return {"messages": [s["private"]["researcher"][-1]]}

        inp = {"messages": [HumanMessage("q", id="q")],
               "private": {"researcher": [AIMessage("found it", id="r-last")]}}
        return list(_one(E, publish, state=S).stream(inp, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 1


def test_messages_returned_in_a_tuple_and_from_a_second_key_are_emitted(differential):
    def scenario(E):
        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            notes: Annotated[list, operator.add]

        def node(s):
            return {"messages": (AIMessage("in tuple", id="tup"),),
                    "notes": [AIMessage("note", id="note"), "plain string"]}

        return list(_one(E, node, state=S).stream({"messages": [], "notes": []}, stream_mode="messages"))

    differential(scenario)


def test_pydantic_state_node_returning_messages(differential):
    def scenario(E):
        from pydantic import BaseModel

        class S(BaseModel):
            messages: Annotated[list, E.add_messages]
            turns: int = 0

        model = InHouseChat(script=[text_turn("pyd")])

        def chat(s: S):
            return {"messages": [model.invoke(s.messages), AIMessage("note", id="n")], "turns": s.turns + 1}

        app = _one(E, chat, state=S)
        return list(app.stream({"messages": [HumanMessage("hi", id="h")]}, stream_mode=["messages", "updates"]))

    differential(scenario)


def test_node_streaming_then_returning_an_edited_copy_with_a_new_id_emits_the_copy(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("draft ", "text")])

        def chat(s):
            msg = model.invoke(s["messages"])
            return {"messages": [AIMessage(msg.content.upper(), id="edited")]}

        return list(_one(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_node_streaming_then_returning_an_edited_copy_with_the_same_id_emits_nothing_more(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("draft ", "text")])

        def chat(s):
            msg = model.invoke(s["messages"])
            return {"messages": [msg.model_copy(update={"content": msg.content.upper()})]}

        app = _one(E, chat)
        return list(app.stream(HI, stream_mode="messages")), app.invoke(HI)["messages"][-1].content

    differential(scenario)


# --------------------------------------------------------------------------------------
# ordering across modes
# --------------------------------------------------------------------------------------


def test_custom_events_tokens_and_update_of_a_node_come_in_call_order(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("tok1", "tok2")])

        def chat(s):
            writer = E.get_stream_writer()
            writer({"status": "thinking"})
            msg = model.invoke(s["messages"])
            writer({"status": "done"})
            return {"messages": [msg]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_node("log", lambda s: {"messages": [AIMessage("logged", id="log")]})
        g.add_edge(E.START, "chat")
        g.add_edge("chat", "log")
        return list(g.compile().stream(HI, stream_mode=["updates", "custom", "messages", "values"]))

    differential(scenario)


def test_v2_parts_of_a_chat_turn_with_messages_updates_and_custom(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("v2", " parts")])

        def chat(s):
            E.get_stream_writer()("progress")
            return {"messages": [model.invoke(s["messages"])]}

        app = _one(E, chat, checkpointer=E.InMemorySaver())
        return list(app.stream(HI, _cfg(), stream_mode=["messages", "updates", "custom"], version="v2"))

    differential(scenario)


def test_model_failing_mid_stream_with_updates_mode_gives_chunks_and_no_update(differential):
    async def scenario(E):
        model = InHouseChat(script=[text_turn("a", "b", "c")], fail_after=2)

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        app = _one(E, chat, checkpointer=E.InMemorySaver())
        out = await acollect(lambda: app.astream(HI, _cfg(), stream_mode=["messages", "updates"]))
        st = await app.aget_state(_cfg())
        return out, st.next, [t.error for t in st.tasks]

    differential(scenario)


# --------------------------------------------------------------------------------------
# runs that continue a thread
# --------------------------------------------------------------------------------------


def test_resuming_after_a_failed_parallel_step_does_not_restream_the_successful_sibling(differential):
    async def scenario(E):
        model = InHouseChat(script=[text_turn("sibling", " answer")])
        done = asyncio.Event()
        state = {"fail": True}

        async def writer(s):
            msg = await model.ainvoke(s["messages"])
            done.set()
            return {"messages": [msg]}

        async def flaky(s):
            await done.wait()
            if state["fail"]:
                raise ValueError("flaky failed")
            return {"messages": [AIMessage("flaky ok", id="fok")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("writer", writer)
        g.add_node("flaky", flaky)
        g.add_edge(E.START, "writer")
        g.add_edge(E.START, "flaky")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = await acollect(lambda: app.astream(HI, _cfg(), stream_mode="messages"))
        state["fail"] = False
        second = await acollect(lambda: app.astream(None, _cfg(), stream_mode=["messages", "updates"]))
        return first, second

    differential(scenario)


def test_static_interrupt_before_then_resume_streams_the_paused_nodes_model(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("after", " approval")])

        def plan(s):
            return {"messages": [AIMessage("plan", id="plan")]}

        def act(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("plan", plan)
        g.add_node("act", act)
        g.add_edge(E.START, "plan")
        g.add_edge("plan", "act")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["act"])
        a = list(app.stream(HI, _cfg(), stream_mode=["messages", "updates"]))
        b = list(app.stream(None, _cfg(), stream_mode=["messages", "updates"]))
        return a, b

    differential(scenario)


def test_replay_from_an_earlier_checkpoint_streams_the_rerun_nodes(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("first", " run"), text_turn("replayed")])

        def prep(s):
            return {"messages": [AIMessage("prepped", id="prep")]}

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("prep", prep)
        g.add_node("chat", chat)
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = list(app.stream(HI, _cfg(), stream_mode="messages"))
        before_chat = next(h for h in app.get_state_history(_cfg()) if h.next == ("chat",))
        replay = list(app.stream(None, before_chat.config, stream_mode="messages"))
        # metadata keys sorted: ids are numbered by first appearance, not by dict key order
        return (before_chat.config["configurable"]["checkpoint_id"],
                [(m, dict(sorted(md.items()))) for m, md in first + replay])

    differential(scenario)


def test_fork_with_update_state_then_stream_emits_only_the_new_turn(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("answer one"), text_turn("answer two")])
        app = chat_graph(E, model, checkpointer=E.InMemorySaver())
        list(app.stream(HI, _cfg(), stream_mode="messages"))
        app.update_state(_cfg(), {"messages": [HumanMessage("rephrased", id="h2")]})
        again = list(app.stream({"messages": [HumanMessage("and?", id="h3")]}, _cfg(), stream_mode="messages"))
        return again

    differential(scenario)


def test_dynamic_interrupt_in_a_later_node_keeps_the_streamed_tokens_and_resume_adds_new(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("drafted")])

        def draft(s):
            return {"messages": [model.invoke(s["messages"])]}

        def review(s):
            verdict = E.interrupt({"draft": s["messages"][-1].content})
            return {"messages": [HumanMessage(verdict, id="verdict")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("draft", draft)
        g.add_node("review", review)
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "review")
        app = g.compile(checkpointer=E.InMemorySaver())
        a = list(app.stream(HI, _cfg(), stream_mode=["messages", "updates"]))
        b = list(app.stream(E.Command(resume="approved"), _cfg(), stream_mode=["messages", "updates"]))
        return a, b

    differential(scenario)


def test_cached_node_hit_emits_no_messages_on_the_second_run(differential):
    def scenario(E):
        from langgraph.cache.memory import InMemoryCache

        model = InHouseChat(script=[text_turn("cached", " reply"), text_turn("fresh")])

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat, cache_policy=E.CachePolicy())
        g.add_edge(E.START, "chat")
        app = g.compile(cache=InMemoryCache())
        a = list(app.stream(HI, stream_mode=["messages", "updates"]))
        b = list(app.stream(HI, stream_mode=["messages", "updates"]))
        return a, b, model.turn

    differential(scenario)


# --------------------------------------------------------------------------------------
# subgraphs and parallel nodes
# --------------------------------------------------------------------------------------


def test_parallel_model_nodes_with_checkpointer_and_user_metadata_per_node(differential):
    # sync parallel nodes: chunks of the two nodes interleave in thread order; each node's
    # own sequence is deterministic
    def scenario(E):
        ma = InHouseChat(script=[text_turn("a1", "a2")])
        mb = InHouseChat(script=[text_turn("b1", "b2")])

        g = E.StateGraph(E.MessagesState)
        g.add_node("a", lambda s: {"messages": [ma.invoke(s["messages"])]}, metadata={"role": "pro"})
        g.add_node("b", lambda s: {"messages": [mb.invoke(s["messages"])]}, metadata={"role": "con"})
        g.add_node("judge", lambda s: {"messages": [AIMessage(f"judged {len(s['messages'])}", id="j")]})
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge(["a", "b"], "judge")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t", "user_id": "u1"}, "metadata": {"session": "s9"},
               "tags": ["debate"]}
        out = list(app.stream(HI, cfg, stream_mode="messages"))
        return {n: [(m, md) for m, md in out if md["langgraph_node"] == n] for n in ("a", "b", "judge")}

    differential(scenario)


def test_subgraph_with_a_user_model_and_a_tool_node_without_and_with_subgraphs(differential):
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode, tools_condition

        @tool
        def lookup(q: str) -> str:
            """Look something up."""
            return f"result for {q}"

        def build():
            model = InHouseChat(script=[tool_turn("lookup", '{"q": "lg"}', "call_l"), text_turn("found")])

            def agent(s):
                return {"messages": [model.invoke(s["messages"])]}

            sub = E.StateGraph(E.MessagesState)
            sub.add_node("agent", agent)
            sub.add_node("tools", ToolNode([lookup]))
            sub.add_edge(E.START, "agent")
            sub.add_conditional_edges("agent", tools_condition)
            sub.add_edge("tools", "agent")
            g = E.StateGraph(E.MessagesState)
            g.add_node("research", sub.compile())
            g.add_node("wrap", lambda s: {"messages": [AIMessage("wrapped", id="w")]})
            g.add_edge(E.START, "research")
            g.add_edge("research", "wrap")
            return g.compile(checkpointer=E.InMemorySaver())

        flat = list(build().stream(HI, _cfg("a"), stream_mode="messages"))
        nested = list(build().stream(HI, _cfg("b"), stream_mode="messages", subgraphs=True))
        return flat, nested

    differential(scenario)


def test_send_fanout_where_each_worker_calls_its_own_model_async(differential):
    async def scenario(E):
        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            topics: list

        models = {t: InHouseChat(script=[text_turn(f"on {t}")]) for t in ("x", "y")}

        def fan(s):
            return [E.Send("write", {"topic": t, "messages": [HumanMessage(t, id=f"h-{t}")]})
                    for t in s["topics"]]

        async def write(arg):
            await asyncio.sleep(0.01 if arg["topic"] == "x" else 0)
            return {"messages": [await models[arg["topic"]].ainvoke(arg["messages"])]}

        g = E.StateGraph(S)
        g.add_node("write", write)
        g.add_conditional_edges(E.START, fan, ["write"])
        return await acollect(lambda: g.compile().astream({"messages": [], "topics": ["x", "y"]},
                                                          stream_mode="messages"))

    differential(scenario)


# --------------------------------------------------------------------------------------
# more: ordering of router tokens, seen-rules, config surfaces, functional API
# --------------------------------------------------------------------------------------


def test_async_router_model_tokens_come_before_the_nodes_returned_message(differential):
    async def scenario(E):
        router_model = InHouseChat(script=[text_turn("done")])

        async def agent(s):
            E.get_stream_writer()("agent ran")
            return {"messages": [AIMessage("agent says", id="a1")]}

        async def should_continue(s) -> str:
            verdict = (await router_model.ainvoke(s["messages"])).content
            return E.END if verdict == "done" else "agent"

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", should_continue, ["agent", E.END])
        return await acollect(lambda: g.compile().astream(HI, stream_mode=["custom", "messages", "updates"]))

    differential(scenario)


def test_node_with_a_narrow_input_schema_returning_a_fixed_id_banner_on_the_next_turn(differential):
    # the banner node reads only `user`, so on the second turn the banner in the thread's
    # messages is not part of its input: LangGraph marks seen only a node's input messages
    def scenario(E):
        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            user: str

        class BannerIn(TypedDict):
            user: str

        def banner(s: BannerIn):
            return {"messages": [AIMessage(f"Welcome {s['user']}", id="banner")]}

        g = E.StateGraph(S)
        g.add_node("banner", banner, input_schema=BannerIn)
        g.add_edge(E.START, "banner")
        app = g.compile(checkpointer=E.InMemorySaver())
        a = list(app.stream({"messages": [HumanMessage("hi", id="h1")], "user": "ann"}, _cfg(),
                            stream_mode="messages"))
        b = list(app.stream({"messages": [HumanMessage("again", id="h2")], "user": "ann"}, _cfg(),
                            stream_mode="messages"))
        return a, b

    differential(scenario)


def test_graph_with_config_metadata_and_tags_reach_chunks_and_node_messages(differential):
    def scenario(E):
        model = InHouseChat(script=[text_turn("cfg")])

        def chat(s):
            return {"messages": [model.invoke(s["messages"]), AIMessage("tail", id="tail")]}

        app = _one(E, chat, checkpointer=E.InMemorySaver()).with_config(
            {"metadata": {"app": "support-bot"}, "tags": ["prod"], "configurable": {"tenant": "acme"}})
        return list(app.stream(HI, _cfg(), stream_mode="messages"))

    differential(scenario)


def test_run_config_extras_and_context_do_not_leak_into_metadata(differential):
    def scenario(E):
        from dataclasses import dataclass

        @dataclass
        class Ctx:
            user_id: str

        model = InHouseChat(script=[text_turn("ctx")])

        def chat(s, runtime: E.Runtime[Ctx]):
            return {"messages": [model.invoke(s["messages"]),
                                 AIMessage(f"for {runtime.context.user_id}", id="ctxmsg")]}

        g = E.StateGraph(E.MessagesState, context_schema=Ctx)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile()
        cfg = {"run_name": "my-run", "recursion_limit": 7, "max_concurrency": 2,
               "configurable": {"model_name": "big", "temperature": 0.5, "opts": {"a": 1}}}
        return list(app.stream(HI, cfg, context=Ctx("u7"), stream_mode="messages"))

    differential(scenario)


def test_per_call_metadata_given_by_the_node_merges_into_chunk_metadata(differential):
    def scenario(E):
        drafter = InHouseChat(script=[text_turn("draft")])
        critic = InHouseChat(script=[text_turn("critique")])

        def chat(s, config):
            d = drafter.invoke(s["messages"], {**config, "metadata": {**config["metadata"], "purpose": "draft"}})
            c = critic.invoke(s["messages"], {"metadata": {"purpose": "critic"}, "run_name": "critic"})
            return {"messages": [d, c]}

        app = _one(E, chat, checkpointer=E.InMemorySaver())
        return list(app.stream(HI, _cfg(), stream_mode="messages"))

    differential(scenario)


def test_functional_tasks_returning_messages_without_a_model_are_emitted(differential):
    def scenario(E):
        @E.func.task
        def greet(name: str) -> AIMessage:
            return AIMessage(f"hello {name}", id=f"greet-{name}")

        @E.func.task
        def tool_step(x: int) -> ToolMessage:
            return ToolMessage(str(x * 2), tool_call_id="c1", id="tool-step")

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(name: str) -> dict:
            g = greet(name).result()
            t = tool_step(21).result()
            return {"messages": [g, t, AIMessage("final", id="final")]}

        return collect(lambda: wf.stream("bo", _cfg(), stream_mode=["messages", "updates"]))

    differential(scenario)


def test_functional_parallel_tasks_each_streaming_a_model(differential):
    # the tasks run in the thread pool: compare the chunks as one multiset
    def scenario(E):
        models = {t: InHouseChat(script=[text_turn(f"{t}-1", f"{t}-2")]) for t in ("x", "y")}

        @E.func.task
        def write(topic: str) -> str:
            return models[topic].invoke([HumanMessage(topic)]).content

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(topics: list) -> list:
            futures = [write(t) for t in topics]
            return [f.result() for f in futures]

        out = collect(lambda: wf.stream(["x", "y"], _cfg(), stream_mode="messages"))
        return steps_as_multisets(out, lambda c: False)

    differential(scenario)


def test_summary_written_with_overwrite_is_not_streamed_by_a_later_node_returning_its_state(differential):
    # `summarize` replaces the history with Overwrite (not streamed); `respond` is beginner
    # style, appending to its state and returning all of it: its input messages (the summary
    # included) are seen, so only its new reply is streamed
    def scenario(E):
        def summarize(s):
            return {"messages": E.Overwrite([SystemMessage("summary: greeted", id="sum"), s["messages"][-1]])}

        def respond(s):
            s["messages"].append(AIMessage("reply after summary", id="r1"))
            return s

        g = E.StateGraph(E.MessagesState)
        g.add_node("summarize", summarize)
        g.add_node("respond", respond)
        g.add_edge(E.START, "summarize")
        g.add_edge("summarize", "respond")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = list(app.stream({"messages": [HumanMessage("a", id="a"), HumanMessage("b", id="b")]}, _cfg(),
                              stream_mode="messages"))
        return [(m.id, md["langgraph_node"]) for m, md in out], app.get_state(_cfg()).values["messages"]

    differential(scenario)


def test_a_message_returned_by_a_runnable_named_like_its_node_carries_that_runnables_metadata(
        differential):
    """`add_node("chat", RunnableLambda(chat).with_config(metadata=...))`: the runnable's
    run shares the node's name, and LangGraph's handler reports the message it returns with
    that run's metadata (its own keys, and the `checkpoint_ns`/`thread_id` LangChain copies
    in), as lgnb's now does."""
    def scenario(E):
        S = TypedDict("S", {"messages": Annotated[list, E.add_messages]})  # noqa: UP013

        def chat(s):
            return {"messages": [AIMessage("hi", id="a1")]}

        b = E.StateGraph(S)
        b.add_node("chat", RunnableLambda(chat).with_config(metadata={"team": "blue"}))
        b.add_edge(E.START, "chat")
        app = b.compile()
        return [(m.content, {k: v for k, v in meta.items() if not k.startswith("ls_")})
                for m, meta in app.stream({"messages": []}, _cfg(), stream_mode="messages")]

    out = differential(scenario)
    assert out[0][1]["team"] == "blue"

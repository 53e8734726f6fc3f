"""Where `messages` chunks come from: a chat model called inside a node, however it is called.

The engine never passes the model a config; LangChain's context variable carries the graph's
callbacks to `model.invoke(...)` / `model.stream(...)` / `await model.ainvoke(...)` /
`model.astream(...)`, and the streaming handler makes `invoke` go through `_stream`.
Every observable is the full stream: (chunk, full metadata) with ids normalized.
"""

import asyncio

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from _diff import acollect, collect, steps_as_multisets
from _models import (HI, TEXT_TURN, TOOL_CALL_TURN, TWO_TOOL_CALLS_TURN, NonStreamingModel,
                     ScriptedStreamingModel, chain, fake, one_node)


# --- sync nodes ----------------------------------------------------------------------------


def test_invoke_without_config_in_a_node_streams_every_chunk(differential):
    def scenario(E):
        model = fake("hello big world")

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        return list(one_node(E, chat).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert [m[1]["content"] for m, _ in ref] == ["hello", " ", "big", " ", "world"]


def test_invoke_with_the_node_config_streams_the_same_chunks(differential):
    def scenario(E):
        model = fake("with config")

        def chat(s, config):
            return {"messages": [model.invoke(s["messages"], config)]}

        return list(one_node(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_model_stream_in_a_node_streams_chunks_and_the_aggregate_is_not_reemitted(differential):
    def scenario(E):
        model = fake("one two three")

        def chat(s):
            total = None
            for c in model.stream(s["messages"]):
                total = c if total is None else total + c
            return {"messages": [total]}

        app = one_node(E, chat)
        return list(app.stream(HI, stream_mode="messages")), app.invoke(HI)

    differential(scenario)


def test_two_model_calls_in_one_node_stream_one_after_the_other(differential):
    def scenario(E):
        first, second = fake("first answer"), fake("second answer")

        def chat(s):
            a = first.invoke(s["messages"])
            b = second.invoke(s["messages"] + [a])
            return {"messages": [a, b]}

        return list(one_node(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_model_inside_a_runnable_chain_in_a_node_streams(differential):
    def scenario(E):
        model = fake("chained reply")
        pipeline = RunnableLambda(lambda msgs: msgs + [HumanMessage("again", id="h2")]) | model

        def chat(s):
            return {"messages": [pipeline.invoke(s["messages"])]}

        return list(one_node(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_tool_call_chunks_pass_through_intact(differential):
    def scenario(E):
        model = ScriptedStreamingModel(script=[TOOL_CALL_TURN])

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        app = one_node(E, chat)
        return list(app.stream(HI, stream_mode="messages")), app.invoke(HI)["messages"][-1]

    ref = differential(scenario)
    chunks = [m for m, _ in ref[0]]
    assert [c[1]["tool_call_chunks"] for c in chunks][2:5] == [
        [{"name": "get_weather", "args": "", "id": "call_1", "index": 0, "type": "tool_call_chunk"}],
        [{"name": None, "args": '{"city": ', "id": None, "index": 0, "type": "tool_call_chunk"}],
        [{"name": None, "args": '"Paris"}', "id": None, "index": 0, "type": "tool_call_chunk"}],
    ]


def test_interleaved_parallel_tool_call_chunks_pass_through_intact(differential):
    def scenario(E):
        model = ScriptedStreamingModel(script=[TWO_TOOL_CALLS_TURN])

        def chat(s):
            total = None
            for c in model.stream(s["messages"]):
                total = c if total is None else total + c
            return {"messages": [total]}

        app = one_node(E, chat)
        return list(app.stream(HI, stream_mode="messages"))

    differential(scenario)


def test_non_streaming_model_emits_its_final_message_once(differential):
    def scenario(E):
        model = NonStreamingModel(reply="whole reply")

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        return list(one_node(E, chat).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 1


def test_chunks_before_a_model_error_are_streamed_then_the_error_raises(differential):
    def scenario(E):
        model = ScriptedStreamingModel(script=[TEXT_TURN + TEXT_TURN], fail_after=3)

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        return collect(lambda: one_node(E, chat).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert ref[-1][0] == "raises" and len(ref) == 4


def test_model_error_caught_by_the_node_then_a_second_call_streams(differential):
    def scenario(E):
        bad = ScriptedStreamingModel(script=[TEXT_TURN], fail_after=1)
        good = fake("recovered")

        def chat(s):
            try:
                bad.invoke(s["messages"])
            except RuntimeError:
                pass
            return {"messages": [good.invoke(s["messages"])]}

        return list(one_node(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_node_error_after_streaming_keeps_the_chunks_and_drops_the_node_output(differential):
    def scenario(E):
        model = fake("partial words")

        def chat(s):
            model.invoke(s["messages"])
            raise ValueError("node failed after the model")

        return collect(lambda: one_node(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_retried_node_streams_the_chunks_of_every_attempt(differential):
    def scenario(E):
        model = fake("try one", "try two")
        attempts = []

        def chat(s):
            msg = model.invoke(s["messages"])
            attempts.append(msg.content)
            if len(attempts) == 1:
                raise ValueError("transient")
            return {"messages": [msg]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat, retry_policy=E.RetryPolicy(initial_interval=0.0, jitter=False,
                                                            retry_on=ValueError))
        g.add_edge(E.START, "chat")
        return list(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_models_in_two_sequential_nodes_stream_in_order(differential):
    def scenario(E):
        m1, m2 = fake("from a"), fake("from b")

        def a(s):
            return {"messages": [m1.invoke(s["messages"])]}

        def b(s):
            return {"messages": [m2.invoke(s["messages"])]}

        return list(chain(E, ("a", a), ("b", b)).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_models_in_parallel_sync_nodes_stream_each_node_in_order(differential):
    # sync parallel nodes run in a thread pool: chunks of the two nodes interleave in
    # completion order, so compare each node's own sequence (which is deterministic)
    def scenario(E):
        ma, mb = fake("alpha one two"), fake("beta three four")

        def a(s):
            return {"messages": [ma.invoke(s["messages"])]}

        def b(s):
            return {"messages": [mb.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        out = list(g.compile().stream(HI, stream_mode="messages"))
        return {n: [(m, md) for m, md in out if md["langgraph_node"] == n] for n in ("a", "b")}

    differential(scenario)


def test_models_in_send_fanout_stream_under_each_push_task(differential):
    def scenario(E):
        from typing import Annotated
        import operator
        from typing_extensions import TypedDict

        class S(TypedDict):
            topics: list
            messages: Annotated[list, E.add_messages]

        def fan(s):
            return [E.Send("write", {"topic": t, "messages": []}) for t in s["topics"]]

        def write(arg):
            return {"messages": [fake(f"about {arg['topic']}").invoke(arg["topic"])]}

        g = E.StateGraph(S)
        g.add_node("write", write)
        g.add_conditional_edges(E.START, fan, ["write"])
        out = list(g.compile().stream({"topics": ["x", "y"], "messages": []}, stream_mode="messages"))
        return steps_as_multisets(out, lambda c: False)

    differential(scenario)


# --- async ---------------------------------------------------------------------------------


def test_ainvoke_without_config_in_an_async_node_streams_every_chunk(differential):
    async def scenario(E):
        model = fake("async hello world")

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        return await acollect(lambda: one_node(E, chat).astream(HI, stream_mode="messages"))

    differential(scenario)


def test_model_astream_in_an_async_node_streams_every_chunk(differential):
    async def scenario(E):
        model = fake("async stream of words")

        async def chat(s):
            total = None
            async for c in model.astream(s["messages"]):
                total = c if total is None else total + c
            return {"messages": [total]}

        return await acollect(lambda: one_node(E, chat).astream(HI, stream_mode="messages"))

    differential(scenario)


def test_sync_node_under_astream_streams_every_chunk(differential):
    async def scenario(E):
        model = fake("sync node async graph")

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        return await acollect(lambda: one_node(E, chat).astream(HI, stream_mode="messages"))

    differential(scenario)


def test_tool_call_chunks_pass_through_intact_with_ainvoke(differential):
    async def scenario(E):
        model = ScriptedStreamingModel(script=[TOOL_CALL_TURN])

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        return await acollect(lambda: one_node(E, chat).astream(HI, stream_mode="messages"))

    differential(scenario)


def test_async_model_error_mid_stream_keeps_earlier_chunks(differential):
    async def scenario(E):
        model = ScriptedStreamingModel(script=[TEXT_TURN + TEXT_TURN], fail_after=2)

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        return await acollect(lambda: one_node(E, chat).astream(HI, stream_mode="messages"))

    differential(scenario)


def test_models_in_parallel_async_nodes_stream_each_node_in_order(differential):
    async def scenario(E):
        ma, mb = fake("alpha one two"), fake("beta three four")

        async def a(s):
            return {"messages": [await ma.ainvoke(s["messages"])]}

        async def b(s):
            await asyncio.sleep(0)
            return {"messages": [await mb.ainvoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        out = [c async for c in g.compile().astream(HI, stream_mode="messages")]
        return {n: [(m, md) for m, md in out if md["langgraph_node"] == n] for n in ("a", "b")}

    differential(scenario)


def test_invoke_with_messages_stream_mode_returns_the_chunks(differential):
    def scenario(E):
        model = fake("as a list")

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        return one_node(E, chat).invoke(HI, stream_mode="messages")

    differential(scenario)


def test_two_models_streaming_token_by_token_in_lockstep_keep_their_own_metadata():
    """Two parallel nodes whose models alternate token for token (each waits for the
    other's token): every chunk carries the metadata of the node whose model made it."""
    import threading

    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk, ChatResult

    from lgnb.graph import START, MessagesState, StateGraph

    turns = {"a": threading.Semaphore(1), "b": threading.Semaphore(0)}
    other = {"a": "b", "b": "a"}

    class Lockstep(BaseChatModel):
        name_: str

        @property
        def _llm_type(self) -> str:
            return "lockstep"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
            raise NotImplementedError  # streamed only: the messages stream is on

        def _stream(self, messages, stop=None, run_manager: CallbackManagerForLLMRun | None = None, **kwargs):
            me = self.name_
            for i in range(40):
                assert turns[me].acquire(timeout=10), "the other model stopped streaming"
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=f"{me}{i} "))
                if run_manager:
                    run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                yield chunk
                turns[other[me]].release()

    def node(name):
        model = Lockstep(name_=name)
        return lambda s: {"messages": [model.invoke(s["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("a", node("a"))
    g.add_node("b", node("b"))
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    out = list(g.compile().stream(HI, stream_mode="messages"))
    chunks = [(m.content, md["langgraph_node"]) for m, md in out if m.content]
    assert len(chunks) == 80
    assert all(content[0] == node for content, node in chunks), chunks
    switches = sum(1 for x, y in zip(chunks, chunks[1:]) if x[1] != y[1])
    assert switches >= 40  # the two calls really did interleave

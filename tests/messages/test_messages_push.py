"""`push_message` (langgraph.graph.message / lgnb.graph.message): emit a message on the
`messages` stream from inside a node and (unless `state_key=None`) write it to state."""

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage

from _diff import acollect, capture, collect
from _models import HI, chain, fake, one_node


def test_push_message_streams_each_message_and_writes_it_to_state(differential):
    def scenario(E):
        def chat(s):
            E.message.push_message(AIMessage("First", id="1"))
            E.message.push_message(HumanMessage("Second", id="2"))
            E.message.push_message(AIMessage("Third", id="3"))
            return None

        return list(one_node(E, chat).stream({"messages": []}, stream_mode=["messages", "values"]))

    ref = differential(scenario)
    assert [p[0][1]["id"] for mode, p in ref if mode == "messages"] == ["1", "2", "3"]
    assert [m[1]["id"] for m in ref[-1][1]["messages"]] == ["1", "2", "3"]


def test_push_message_without_id_raises_value_error(differential):
    def scenario(E):
        errors = []

        def chat(s):
            errors.append(capture(lambda: E.message.push_message(AIMessage("x"))))
            return {}

        return list(one_node(E, chat).stream({"messages": []}, stream_mode="messages")), errors

    # lgnb adds how to fix it to LangGraph's "Message ID is required"
    differential(scenario, exc="extends")


def test_push_message_with_state_key_none_only_streams(differential):
    def scenario(E):
        def chat(s):
            E.message.push_message(AIMessage("stream only", id="so"), state_key=None)
            return {}

        return list(one_node(E, chat).stream(HI, stream_mode=["messages", "values"]))

    differential(scenario)


def test_push_message_of_dict_and_chunk_forms(differential):
    def scenario(E):
        def chat(s):
            E.message.push_message({"role": "assistant", "content": "from dict", "id": "d1"})
            E.message.push_message(AIMessageChunk(content="a chunk", id="c1"))
            return {}

        return list(one_node(E, chat).stream(HI, stream_mode=["messages", "values"]))

    differential(scenario)


def test_pushed_message_also_returned_by_the_node_is_emitted_once(differential):
    def scenario(E):
        def chat(s):
            m = E.message.push_message(AIMessage("pushed and returned", id="pr"))
            return {"messages": [m]}

        return list(one_node(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_push_message_twice_with_the_same_id_streams_twice(differential):
    def scenario(E):
        def chat(s):
            E.message.push_message(AIMessage("v1", id="same"))
            E.message.push_message(AIMessage("v2", id="same"))
            return {}

        return list(one_node(E, chat).stream(HI, stream_mode=["messages", "values"]))

    differential(scenario)


def test_push_message_next_to_a_streamed_model(differential):
    def scenario(E):
        model = fake("model words")

        def chat(s):
            E.message.push_message(AIMessage("status: thinking", id="st"))
            return {"messages": [model.invoke(s["messages"])]}

        return list(one_node(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_push_message_without_messages_mode_only_writes_state(differential):
    def scenario(E):
        def chat(s):
            E.message.push_message(AIMessage("quiet", id="q"))
            return {}

        app = one_node(E, chat)
        return (capture(lambda: app.invoke(HI)),
                collect(lambda: app.stream(HI, stream_mode="updates")))

    differential(scenario)


def test_push_message_metadata_with_checkpointer_and_config(differential):
    def scenario(E):
        def chat(s):
            E.message.push_message(AIMessage("meta", id="m"))
            return {}

        app = one_node(E, chat, checkpointer=E.InMemorySaver())
        return list(app.stream(HI, {"configurable": {"thread_id": "pm"}, "tags": ["t"],
                                    "metadata": {"k": 1}}, stream_mode="messages"))

    differential(scenario)


def test_push_message_to_another_state_key(differential):
    def scenario(E):
        from typing import Annotated
        from typing_extensions import TypedDict

        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            notes: Annotated[list, E.add_messages]

        def chat(s):
            E.message.push_message(AIMessage("a note", id="n1"), state_key="notes")
            return {}

        g = E.StateGraph(S)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        return list(g.compile().stream({"messages": [], "notes": []}, stream_mode=["messages", "values"]))

    differential(scenario)


def test_push_message_in_a_subgraph_with_and_without_subgraphs(differential):
    def scenario(E):
        def build():
            def chat(s):
                E.message.push_message(AIMessage("from child", id="fc"))
                return {}

            child = one_node(E, chat)
            return one_node(E, child, name="child")

        return (list(build().stream(HI, stream_mode="messages")),
                list(build().stream(HI, stream_mode="messages", subgraphs=True)))

    differential(scenario)


def test_push_message_in_an_async_node(differential):
    async def scenario(E):
        async def chat(s):
            E.message.push_message(AIMessage("async push", id="ap"))
            return {}

        return await acollect(lambda: one_node(E, chat).astream(HI, stream_mode=["messages", "values"]))

    differential(scenario)


def test_push_message_in_a_later_step_and_in_parallel_nodes(differential):
    def scenario(E):
        g = E.StateGraph(E.MessagesState)

        def a(s):
            E.message.push_message(AIMessage("from a", id="pa"))
            return {}

        def b(s):
            E.message.push_message(AIMessage("from b", id="pb"))
            return {}

        g.add_node("first", lambda s: {})
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "first")
        g.add_edge("first", "a")
        g.add_edge("first", "b")
        out = list(g.compile().stream(HI, stream_mode="messages"))
        return sorted(out, key=lambda c: c[0].id)

    differential(scenario)

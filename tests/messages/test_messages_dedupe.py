"""Every message appears once on the `messages` stream.

* a streamed model call's final AIMessage is not emitted again (by `on_llm_end` or when the
  node returns it);
* messages a node returns without a model call are emitted once, at node end;
* messages of the node's input (already in state) are never re-emitted;
* models tagged `nostream` are not streamed (their message comes once, from the node output);
* messages inside `Command(update=...)` (and lists of Commands) are found.
"""

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage

from _diff import collect
from _models import HI, chain, fake, one_node


def _msgs(out):
    return [m for m, _ in out]


def test_final_message_of_a_streamed_call_is_not_emitted_again(differential):
    def scenario(E):
        model = fake("only chunks")
        app = one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
        return list(app.stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert all(m[0] == "AIMessageChunk" for m, _ in ref)


def test_messages_returned_without_a_model_call_are_emitted_once(differential):
    def scenario(E):
        def node(s):
            return {"messages": [AIMessage("plain", id="a1"), ToolMessage("tool out", tool_call_id="c1", id="t1"),
                                 HumanMessage("echo", id="h-new")]}

        return list(one_node(E, node).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 3


def test_a_single_message_not_in_a_list_is_emitted_once(differential):
    def scenario(E):
        return list(one_node(E, lambda s: {"messages": AIMessage("solo", id="s1")})
                    .stream(HI, stream_mode="messages"))

    differential(scenario)


def test_message_without_id_gets_one_id_shared_by_stream_and_state(differential):
    def scenario(E):
        app = one_node(E, lambda s: {"messages": [AIMessage("no id yet")]})
        return list(app.stream(HI, stream_mode=["messages", "values"]))

    ref = differential(scenario)
    streamed = next(payload[0] for mode, payload in ref if mode == "messages")
    final = ref[-1][1]["messages"][-1]
    assert streamed[1]["id"] == final[1]["id"]


def test_input_messages_are_not_reemitted(differential):
    def scenario(E):
        app = one_node(E, lambda s: {"messages": s["messages"]})
        return list(app.stream({"messages": [HumanMessage("a", id="x1"), AIMessage("b", id="x2")]},
                               stream_mode="messages"))

    differential(scenario, expect=[])


def test_node_returning_its_whole_state_emits_nothing(differential):
    def scenario(E):
        return list(one_node(E, lambda s: s).stream(HI, stream_mode="messages"))

    differential(scenario, expect=[])


def test_edited_message_with_an_existing_id_is_not_reemitted(differential):
    def scenario(E):
        app = one_node(E, lambda s: {"messages": [HumanMessage("edited", id="h1")]})
        return list(app.stream(HI, stream_mode=["messages", "values"]))

    differential(scenario)


def test_remove_message_is_not_emitted(differential):
    def scenario(E):
        app = one_node(E, lambda s: {"messages": [RemoveMessage(id="h1"), AIMessage("new", id="n1")]})
        return list(app.stream(HI, stream_mode=["messages", "values"]))

    differential(scenario)


def test_messages_of_earlier_steps_are_not_reemitted_by_later_nodes(differential):
    def scenario(E):
        model = fake("step one")
        app = chain(E, ("a", lambda s: {"messages": [model.invoke(s["messages"])]}),
                    ("b", lambda s: {"messages": s["messages"][-1:] + [AIMessage("b says", id="b1")]}))
        return list(app.stream(HI, stream_mode="messages"))

    differential(scenario)


def test_message_returned_by_two_parallel_nodes_is_emitted_once(differential):
    def scenario(E):
        shared = AIMessage("same", id="shared")
        g = E.StateGraph(E.MessagesState)
        g.add_node("a", lambda s: {"messages": [shared]})
        g.add_node("b", lambda s: {"messages": [shared]})
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        return [m for m, _ in g.compile().stream(HI, stream_mode="messages")]

    differential(scenario)


def test_nostream_model_is_not_streamed_and_its_message_comes_once_from_the_node(differential):
    def scenario(E):
        model = fake("hidden tokens").with_config(tags=["nostream"])
        return list(one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
                    .stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert len(ref) == 1 and ref[0][0][0] == "AIMessage"


def test_nostream_model_next_to_a_streaming_model(differential):
    def scenario(E):
        quiet = fake("quiet words").with_config(tags=["nostream"])
        loud = fake("loud words")

        def node(s):
            q = quiet.invoke(s["messages"])
            return {"messages": [q, loud.invoke(s["messages"] + [q])]}

        return list(one_node(E, node).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_nostream_model_whose_message_is_not_returned_emits_nothing(differential):
    def scenario(E):
        quiet = fake("quiet words").with_config(tags=["nostream"])

        def node(s):
            quiet.invoke(s["messages"])
            return {}

        return list(one_node(E, node).stream(HI, stream_mode="messages"))

    differential(scenario, expect=[])


def test_nostream_tag_on_the_whole_run_config(differential):
    def scenario(E):
        model = fake("run level nostream")
        return list(one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
                    .stream(HI, {"tags": ["nostream"]}, stream_mode="messages"))

    differential(scenario)


def test_nostream_model_in_an_async_node(differential):
    async def scenario(E):
        model = fake("hidden async").with_config(tags=["nostream"])

        async def node(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        return [c async for c in one_node(E, node).astream(HI, stream_mode="messages")]

    differential(scenario)


def test_message_returned_inside_a_command_update_is_emitted_once(differential):
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("a", lambda s: E.Command(update={"messages": [AIMessage("via command", id="c1")]},
                                            goto="b"))
        g.add_node("b", lambda s: {})
        g.add_edge(E.START, "a")
        return list(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_streamed_message_returned_inside_a_command_is_not_emitted_again(differential):
    def scenario(E):
        model = fake("streamed then commanded")
        g = E.StateGraph(E.MessagesState)
        g.add_node("a", lambda s: E.Command(update={"messages": [model.invoke(s["messages"])]},
                                            goto="b"))
        g.add_node("b", lambda s: {})
        g.add_edge(E.START, "a")
        return list(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_messages_in_a_list_of_commands_are_emitted_once_each(differential):
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("a", lambda s: [E.Command(update={"messages": [AIMessage("one", id="c1")]}),
                                   E.Command(update={"messages": [AIMessage("two", id="c2")]}, goto="b")])
        g.add_node("b", lambda s: {})
        g.add_edge(E.START, "a")
        return collect(lambda: g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_command_update_as_a_list_of_tuples(differential):
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("a", lambda s: E.Command(update=[("messages", AIMessage("tuple form", id="tf"))]))
        g.add_edge(E.START, "a")
        return collect(lambda: g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_messages_in_a_non_messages_key_are_emitted(differential):
    def scenario(E):
        from typing import Annotated
        import operator
        from typing_extensions import TypedDict

        class S(TypedDict):
            history: Annotated[list, operator.add]
            summary: object

        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"history": [AIMessage("in history", id="hh")],
                                   "summary": AIMessage("single", id="ss")})
        g.add_edge(E.START, "a")
        return list(g.compile().stream({"history": [], "summary": None}, stream_mode="messages"))

    differential(scenario)


def test_second_run_on_a_thread_does_not_reemit_earlier_messages(differential):
    def scenario(E):
        to_emit = [AIMessage("bye", id="1"), AIMessage("bye again", id="2")]
        app = one_node(E, lambda s: {"messages": [to_emit.pop(0)]}, checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "dedupe"}}
        return (list(app.stream({"messages": "hi"}, cfg, stream_mode="messages")),
                list(app.stream({"messages": "hi again"}, cfg, stream_mode="messages")))

    differential(scenario)


def test_resumed_node_reruns_and_streams_its_model_again(differential):
    def scenario(E):
        model = fake("first pass", "second pass")

        def node(s):
            msg = model.invoke(s["messages"])
            ok = E.interrupt("approve?")
            return {"messages": [msg, HumanMessage(str(ok), id="ok")]}

        app = one_node(E, node, checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "resume"}}
        a = list(app.stream(HI, cfg, stream_mode="messages"))
        b = list(app.stream(E.Command(resume=True), cfg, stream_mode="messages"))
        return a, b

    differential(scenario)

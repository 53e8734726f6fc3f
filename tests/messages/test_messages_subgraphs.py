"""Subgraphs on the `messages` stream.

* `subgraphs=False`: tokens of models inside a subgraph are suppressed; the subgraph node's
  output (the subgraph's final state) is emitted by the parent node, once per new message;
* `subgraphs=True`: they stream under the subgraph's namespace, metadata included;
* a graph invoked or streamed inside a node's code behaves the same as a subgraph node;
  a graph explicitly streamed with `stream_mode="messages"` inside a node yields its own
  messages to that node.
"""

from langchain_core.messages import AIMessage, HumanMessage

from _diff import acollect, collect
from _models import HI, TOOL_CALL_TURN, ScriptedStreamingModel, chain, fake, one_node


def _child(E, model, *, extra=None):
    g = E.StateGraph(E.MessagesState)
    g.add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]})
    g.add_edge(E.START, "chat")
    if extra:
        g.add_node("extra", extra)
        g.add_edge("chat", "extra")
    return g.compile()


def _parent_with_child_node(E, child, **compile_kw):
    g = E.StateGraph(E.MessagesState)
    g.add_node("child", child)
    g.add_edge(E.START, "child")
    return g.compile(**compile_kw)


def test_subgraph_tokens_are_suppressed_without_subgraphs_and_its_final_messages_emitted(differential):
    def scenario(E):
        child = _child(E, fake("inner words"), extra=lambda s: {"messages": [AIMessage("extra", id="x1")]})
        return list(_parent_with_child_node(E, child).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert [m[0] for m, _ in ref] == ["AIMessage", "AIMessage"]
    assert {md["langgraph_node"] for _, md in ref} == {"child"}


def test_subgraph_tokens_stream_under_its_namespace_with_subgraphs(differential):
    def scenario(E):
        child = _child(E, fake("inner words"), extra=lambda s: {"messages": [AIMessage("extra", id="x1")]})
        return list(_parent_with_child_node(E, child).stream(HI, stream_mode="messages", subgraphs=True))

    ref = differential(scenario)
    assert all(ns and ns[0].startswith("child:") for ns, _ in ref)


def test_subgraph_stream_with_a_checkpointer_has_thread_id_and_nested_checkpoint_ns(differential):
    def scenario(E):
        child = _child(E, fake("inner words"))
        app = _parent_with_child_node(E, child, checkpointer=E.InMemorySaver())
        return list(app.stream(HI, {"configurable": {"thread_id": "sub"}}, stream_mode="messages",
                               subgraphs=True))

    differential(scenario)


def test_tool_call_chunks_from_a_subgraph_pass_through_intact(differential):
    def scenario(E):
        child = _child(E, ScriptedStreamingModel(script=[TOOL_CALL_TURN]))
        return list(_parent_with_child_node(E, child).stream(HI, stream_mode="messages", subgraphs=True))

    differential(scenario)


def test_parent_and_subgraph_models_both_stream_with_subgraphs(differential):
    def scenario(E):
        outer = fake("outer reply")
        child = _child(E, fake("inner reply"))
        g = E.StateGraph(E.MessagesState)
        g.add_node("before", lambda s: {"messages": [outer.invoke(s["messages"])]})
        g.add_node("child", child)
        g.add_edge(E.START, "before")
        g.add_edge("before", "child")
        app = g.compile()
        return (list(app.stream(HI, stream_mode="messages", subgraphs=True)),
                list(g.compile().stream(HI, stream_mode="messages")))

    # two fresh graphs share one model per engine, so build per call
    def scenario2(E):
        def build():
            outer = fake("outer reply")
            child = _child(E, fake("inner reply"))
            g = E.StateGraph(E.MessagesState)
            g.add_node("before", lambda s: {"messages": [outer.invoke(s["messages"])]})
            g.add_node("child", child)
            g.add_edge(E.START, "before")
            g.add_edge("before", "child")
            return g.compile()

        return (list(build().stream(HI, stream_mode="messages", subgraphs=True)),
                list(build().stream(HI, stream_mode="messages")))

    differential(scenario2)


def test_two_levels_of_subgraphs_stream_under_nested_namespaces(differential):
    def scenario(E):
        def build():
            grandchild = _child(E, fake("deep words"))
            mid = E.StateGraph(E.MessagesState)
            mid.add_node("grand", grandchild)
            mid.add_edge(E.START, "grand")
            return _parent_with_child_node(E, mid.compile())

        return (list(build().stream(HI, stream_mode="messages", subgraphs=True)),
                list(build().stream(HI, stream_mode="messages")))

    differential(scenario)


def test_subgraph_with_different_state_schema_called_from_a_node(differential):
    # the parent node translates state: its returned messages are emitted once at the parent
    def scenario(E):
        from typing_extensions import TypedDict

        class Parent(TypedDict):
            question: str
            answer: object

        def build():
            child = _child(E, fake("translated answer"))

            def ask(s):
                out = child.invoke({"messages": [HumanMessage(s["question"], id="q")]})
                return {"answer": out["messages"][-1]}

            g = E.StateGraph(Parent)
            g.add_node("ask", ask)
            g.add_edge(E.START, "ask")
            return g.compile()

        inp = {"question": "why?", "answer": None}
        return (list(build().stream(inp, stream_mode="messages")),
                list(build().stream(inp, stream_mode="messages", subgraphs=True)))

    differential(scenario)


def test_graph_invoked_inside_a_node_streams_like_a_subgraph(differential):
    def scenario(E):
        def build():
            child = _child(E, fake("called from code"))

            def call(s):
                return {"messages": child.invoke(s)["messages"]}

            return one_node(E, call, name="caller")

        return (list(build().stream(HI, stream_mode="messages")),
                list(build().stream(HI, stream_mode="messages", subgraphs=True)))

    differential(scenario)


def test_graph_streamed_with_messages_inside_a_node_yields_to_that_node(differential):
    def scenario(E):
        seen = []

        def build():
            child = _child(E, fake("inner stream here"))

            def call(s, config):
                for msg, md in child.stream(s, config, stream_mode="messages"):
                    seen.append((msg, md))
                return {}

            return one_node(E, call, name="caller")

        plain = build().invoke(HI)
        inner_when_plain = list(seen)
        seen.clear()
        outer = list(build().stream(HI, stream_mode="messages"))
        return plain, inner_when_plain, outer, list(seen)

    differential(scenario)


def test_graph_streamed_with_messages_inside_a_node_without_config(differential):
    def scenario(E):
        seen = []
        child = _child(E, fake("no config inner"))

        def call(s):
            seen.extend(child.stream(s, stream_mode="messages"))
            return {}

        outer = list(one_node(E, call, name="caller").stream(HI, stream_mode="messages"))
        return outer, seen

    differential(scenario)


def test_node_output_messages_of_a_graph_streamed_inside_a_node(differential):
    def scenario(E):
        child = one_node(E, lambda s: {"messages": [AIMessage("hi there", id="ai1")]}, name="respond")
        msgs = {"messages": [("user", "hello")]}
        top = [m for m, _ in child.stream(msgs, stream_mode="messages")]
        inside = []

        def parent(s, config):
            inside.extend(m for m, _ in child.stream(msgs, config, stream_mode="messages"))
            return {}

        one_node(E, parent, name="parent").invoke(msgs)
        return top, inside

    differential(scenario)


def test_subgraph_reached_by_send_streams_per_push_task(differential):
    def scenario(E):
        def build():
            child = _child(E, fake("sent sub"))
            g = E.StateGraph(E.MessagesState)
            g.add_node("child", child)
            g.add_conditional_edges(E.START, lambda s: [E.Send("child", {"messages": [HumanMessage("q", id="q")]})],
                                    ["child"])
            return g.compile()

        return (list(build().stream(HI, stream_mode="messages", subgraphs=True)),
                list(build().stream(HI, stream_mode="messages")))

    differential(scenario)


def test_subgraph_command_parent_does_not_duplicate_messages(differential):
    def scenario(E):
        sub = E.StateGraph(E.MessagesState)
        sub.add_node("call_model", lambda s: {"messages": AIMessage("hi", id="1")})
        sub.add_node("route", lambda s: E.Command(goto="node_2", graph=E.Command.PARENT))
        sub.add_edge(E.START, "call_model")
        sub.add_edge("call_model", "route")
        g = E.StateGraph(E.MessagesState)
        g.add_node("node_1", sub.compile())
        g.add_node("node_2", lambda s: s)
        g.add_edge(E.START, "node_1")
        return collect(lambda: g.compile().stream({"messages": "hi"}, stream_mode="messages", subgraphs=True))

    differential(scenario)


def test_subgraph_interrupt_and_resume_do_not_duplicate_messages(differential):
    def scenario(E):
        def proposal(s):
            return E.Command(goto="approval", update={"messages": [AIMessage("Proposal", id="p")]})

        def approval(s):
            v = E.interrupt({"message": "approve?"})
            return {"messages": [HumanMessage(v, id="yes")]}

        sub = E.StateGraph(E.MessagesState)
        sub.add_node("proposal", proposal, destinations=("approval",))
        sub.add_node("approval", approval)
        sub.add_edge(E.START, "proposal")
        g = E.StateGraph(E.MessagesState)
        g.add_node("sub", sub.compile())
        g.add_node("finalize", lambda s: {"messages": [AIMessage("Final", id="f")]})
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "finalize")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "si"}}
        a = collect(lambda: app.stream(HI, cfg, stream_mode="messages", subgraphs=True))
        b = collect(lambda: app.stream(E.Command(resume="ok"), cfg, stream_mode="messages", subgraphs=True))
        return a, b

    differential(scenario)


def test_async_subgraph_streams_under_its_namespace(differential):
    async def scenario(E):
        def build():
            model = fake("async inner")

            async def chat(s):
                return {"messages": [await model.ainvoke(s["messages"])]}

            child = one_node(E, chat)
            return _parent_with_child_node(E, child)

        a = await acollect(lambda: build().astream(HI, stream_mode="messages", subgraphs=True))
        b = await acollect(lambda: build().astream(HI, stream_mode="messages"))
        return a, b

    differential(scenario)


def test_async_graph_astreamed_inside_an_async_node(differential):
    async def scenario(E):
        seen = []
        model = fake("nested async")

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        child = one_node(E, chat)

        async def call(s):
            async for msg, md in child.astream(s, stream_mode="messages"):
                seen.append((msg, md))
            return {}

        outer = await acollect(lambda: one_node(E, call, name="caller").astream(HI, stream_mode="messages"))
        return outer, seen

    differential(scenario)

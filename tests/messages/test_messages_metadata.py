"""The metadata dict of each `messages` chunk, compared whole (ids normalized).

LangGraph's per-chunk metadata is the chat model run's metadata: the config's user
metadata, `thread_id` and other configurable scalars when present, `langgraph_step`,
`langgraph_node`, `langgraph_triggers`, `langgraph_path`, `langgraph_checkpoint_ns`,
`checkpoint_ns`, the model's `ls_*` keys, `lc_versions`, and `tags` (user tags only).
"""

from langchain_core.messages import AIMessage, HumanMessage

from _diff import collect
from _models import HI, TEXT_TURN, ScriptedStreamingModel, chain, fake, one_node


def _md(out):
    return [md for _, md in out]


def test_metadata_without_checkpointer_or_config(differential):
    def scenario(E):
        model = fake("a b")
        return _md(one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
                   .stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert {"langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path",
            "langgraph_checkpoint_ns", "checkpoint_ns", "ls_provider"} <= set(ref[0])


def test_metadata_with_checkpointer_has_thread_id_and_checkpoint_ns(differential):
    def scenario(E):
        model = fake("a b")
        app = one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]},
                       checkpointer=E.InMemorySaver())
        return list(app.stream(HI, {"configurable": {"thread_id": "t-1"}}, stream_mode="messages"))

    ref = differential(scenario)
    assert ref[0][1]["thread_id"] == "t-1"


def test_metadata_carries_user_config_metadata_tags_and_configurable_scalars(differential):
    def scenario(E):
        model = fake("a b")
        app = one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]},
                       checkpointer=E.InMemorySaver())
        config = {
            "configurable": {"thread_id": "t-2", "user_id": "u-7", "limit": 3, "obj": object()},
            "metadata": {"purpose": "demo", "n": 1},
            "tags": ["outer", "demo"],
            "run_name": "my-run",
        }
        return _md(app.stream(HI, config, stream_mode="messages"))

    differential(scenario)


def test_metadata_tags_include_the_models_own_tags_and_metadata(differential):
    def scenario(E):
        model = fake("a b").with_config(tags=["joke"], metadata={"model_role": "writer"},
                                        run_name="writer-model")
        return _md(one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
                   .stream(HI, {"tags": ["graph-tag"]}, stream_mode="messages"))

    ref = differential(scenario)
    assert ref[0]["tags"] == ["graph-tag", "joke"] or set(ref[0]["tags"]) == {"graph-tag", "joke"}


def test_metadata_tags_passed_to_invoke_in_the_node(differential):
    def scenario(E):
        model = fake("a b")

        def chat(s):
            return {"messages": [model.invoke(s["messages"], {"tags": ["inline"],
                                                               "metadata": {"k": "v"}})]}

        return _md(one_node(E, chat).stream(HI, stream_mode="messages"))

    differential(scenario)


def test_metadata_has_the_models_ls_params(differential):
    def scenario(E):
        model = ScriptedStreamingModel(script=[TEXT_TURN])
        return _md(one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
                   .stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert ref[0]["ls_model_name"] == "scripted-1" and ref[0]["ls_temperature"] == 0.0


def test_metadata_step_node_triggers_path_across_a_chain_of_nodes(differential):
    def scenario(E):
        m1, m2, m3 = fake("one"), fake("two"), fake("three")
        app = chain(E, ("a", lambda s: {"messages": [m1.invoke(s["messages"])]}),
                    ("b", lambda s: {"messages": [m2.invoke(s["messages"])]}),
                    ("c", lambda s: {"messages": [m3.invoke(s["messages"])]}))
        return _md(app.stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert [md["langgraph_step"] for md in ref] == [1, 2, 3]


def test_metadata_of_a_node_reached_by_a_conditional_edge(differential):
    def scenario(E):
        model = fake("routed")
        g = E.StateGraph(E.MessagesState)
        g.add_node("router", lambda s: {})
        g.add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]})
        g.add_edge(E.START, "router")
        g.add_conditional_edges("router", lambda s: "chat", ["chat"])
        return _md(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_metadata_of_a_send_task(differential):
    def scenario(E):
        def write(arg):
            return {"messages": [fake("sent reply").invoke(arg["q"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("write", write)
        g.add_conditional_edges(E.START, lambda s: [E.Send("write", {"q": "question"})], ["write"])
        return _md(g.compile().stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert ref[0]["langgraph_triggers"] == ("__pregel_push",)


def test_metadata_of_a_command_goto_target(differential):
    def scenario(E):
        model = fake("after goto")
        g = E.StateGraph(E.MessagesState)
        g.add_node("start", lambda s: E.Command(goto="chat"))
        g.add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]})
        g.add_edge(E.START, "start")
        return _md(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_metadata_includes_node_metadata_given_to_add_node(differential):
    def scenario(E):
        model = fake("a b")
        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]},
                   metadata={"team": "search", "version": 2})
        g.add_edge(E.START, "chat")
        return _md(g.compile().stream(HI, stream_mode="messages"))

    differential(scenario)


def test_metadata_of_messages_a_node_returns_without_a_model(differential):
    def scenario(E):
        app = one_node(E, lambda s: {"messages": [AIMessage("plain", id="p1")]},
                       checkpointer=E.InMemorySaver())
        return list(app.stream(HI, {"configurable": {"thread_id": "t"}, "tags": ["x"],
                                    "metadata": {"m": 1}}, stream_mode="messages"))

    differential(scenario)


def test_metadata_step_after_resume_from_an_interrupt(differential):
    def scenario(E):
        model = fake("before", "after")

        def ask(s):
            answer = E.interrupt("continue?")
            return {"messages": [HumanMessage(answer, id="ans")]}

        app = chain(E, ("chat1", lambda s: {"messages": [model.invoke(s["messages"])]}),
                    ("ask", ask),
                    ("chat2", lambda s: {"messages": [model.invoke(s["messages"])]}),
                    checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t-int"}}
        first = collect(lambda: app.stream(HI, cfg, stream_mode="messages"))
        second = collect(lambda: app.stream(E.Command(resume="yes"), cfg, stream_mode="messages"))
        return first, second

    differential(scenario)


def test_metadata_of_a_second_run_on_the_same_thread(differential):
    def scenario(E):
        model = fake("first run", "second run")
        app = one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]},
                       checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t-again"}}
        a = list(app.stream(HI, cfg, stream_mode="messages"))
        b = list(app.stream({"messages": [HumanMessage("more", id="h2")]}, cfg, stream_mode="messages"))
        return a, b

    differential(scenario)


def test_metadata_with_a_checkpoint_ns_given_in_config_is_ignored_like_langgraph(differential):
    def scenario(E):
        model = fake("a")
        app = one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]},
                       checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t-ns", "checkpoint_ns": ""}}
        return list(app.stream(HI, cfg, stream_mode="messages"))

    differential(scenario)


def test_metadata_tags_of_a_model_with_config_tags_only(differential):
    def scenario(E):
        model = fake("a b").with_config(tags=["joke"])
        return _md(one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
                   .stream(HI, {"tags": ["graph-tag"]}, stream_mode="messages"))

    differential(scenario)


def test_metadata_of_a_model_with_config_metadata_only(differential):
    def scenario(E):
        model = fake("a b").with_config(metadata={"model_role": "writer"})
        return list(one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
                    .stream(HI, stream_mode="messages"))

    differential(scenario)


def test_metadata_of_a_model_with_bound_tools(differential):
    def scenario(E):
        model = fake("a b").bind(stop=["x"])
        return list(one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
                    .stream(HI, stream_mode="messages"))

    differential(scenario)

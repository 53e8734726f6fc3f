"""invoke / stream / ainvoke / astream: every stream mode, v1 and v2, mode lists, errors.

No checkpointer anywhere in this file (persistence is another suite).  Task ids and
timestamps in `tasks` / `debug` payloads are normalized by the harness.
"""

import asyncio
import operator
from typing import Annotated

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from typing_extensions import TypedDict

from _diff import acapture, acollect, capture, collect


class S(TypedDict):
    log: Annotated[list, operator.add]
    last: str


def _two_step(E, **compile_kw):
    def a(s):
        return {"log": ["a"], "last": "a"}

    def b(s):
        return {"log": ["b"], "last": "b"}

    g = E.StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", E.END)
    return g.compile(**compile_kw)


INPUT = {"log": ["in"], "last": ""}

# --- single modes ------------------------------------------------------------------------


def test_stream_default_mode_is_updates(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT))

    differential(scenario)


def test_stream_values(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode="values"))

    differential(scenario)


def test_stream_updates(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode="updates"))

    differential(scenario)


def test_stream_custom_via_get_stream_writer(differential):
    def scenario(E):
        def a(s):
            w = E.get_stream_writer()
            w({"step": "a", "n": 1})
            w(["list", "payload"])
            return {"log": ["a"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_edge(E.START, "a")
        app = g.compile()
        return list(app.stream(INPUT, stream_mode="custom")), app.invoke(INPUT)

    differential(scenario)


def test_stream_tasks(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode="tasks"))

    differential(scenario)


def test_stream_debug_without_checkpointer(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode="debug"))

    differential(scenario)


def test_stream_checkpoints_mode_without_checkpointer(differential):
    def scenario(E):
        return collect(lambda: _two_step(E).stream(INPUT, stream_mode="checkpoints"))

    differential(scenario)


def test_stream_tasks_with_node_error(differential):
    def scenario(E):
        def boom(s):
            raise ValueError("kaput")

        g = E.StateGraph(S)
        g.add_node("boom", boom)
        g.add_edge(E.START, "boom")
        return collect(lambda: g.compile().stream(INPUT, stream_mode=["tasks", "updates", "values"]))

    differential(scenario)


def test_stream_debug_with_node_error(differential):
    def scenario(E):
        def boom(s):
            raise ValueError("kaput")

        g = E.StateGraph(S)
        g.add_node("boom", boom)
        g.add_edge(E.START, "boom")
        return collect(lambda: g.compile().stream(INPUT, stream_mode="debug"))

    differential(scenario)


def test_stream_messages_mode_from_chat_model_in_node(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="hello big world")]))

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        out = list(g.compile().stream({"messages": [HumanMessage("hi", id="h")]}, stream_mode="messages"))
        keep = ("langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns")
        return [(msg, {k: md.get(k) for k in keep}) for msg, md in out]

    differential(scenario)


def test_stream_messages_full_metadata(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="a b")]))

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        return list(g.compile().stream({"messages": [HumanMessage("hi", id="h")]}, stream_mode="messages"))

    differential(scenario)


# --- lists of modes / subgraphs ----------------------------------------------------------


def test_stream_list_of_modes_yields_mode_tuples(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode=["values", "updates", "tasks", "debug"]))

    differential(scenario)


def test_stream_list_with_single_mode_still_yields_tuples(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode=["updates"]))

    differential(scenario)


def test_stream_duplicate_modes_in_list(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode=["updates", "updates"]))

    differential(scenario)


def test_stream_subgraphs_true_without_subgraphs_yields_root_namespace(differential):
    def scenario(E):
        return (
            list(_two_step(E).stream(INPUT, stream_mode="updates", subgraphs=True)),
            list(_two_step(E).stream(INPUT, stream_mode=["values", "custom"], subgraphs=True)),
        )

    differential(scenario)


def test_stream_custom_and_updates_interleave_in_execution_order(differential):
    def scenario(E):
        def a(s, writer: E.StreamWriter):
            writer("a:start")
            writer("a:end")
            return {"log": ["a"]}

        def b(s):
            E.get_stream_writer()("b:only")
            return {"log": ["b"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        return list(g.compile().stream(INPUT, stream_mode=["custom", "updates", "values"]))

    differential(scenario)


# --- version="v2" ------------------------------------------------------------------------


def test_stream_v2_yields_typed_dict_parts(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode=["values", "updates"], version="v2"))

    differential(scenario)


def test_stream_v2_single_mode(differential):
    def scenario(E):
        return list(_two_step(E).stream(INPUT, stream_mode="updates", version="v2"))

    differential(scenario)


def test_stream_v2_tasks_debug_custom(differential):
    def scenario(E):
        def a(s):
            E.get_stream_writer()({"hi": 1})
            return {"log": ["a"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_edge(E.START, "a")
        return list(g.compile().stream(INPUT, stream_mode=["tasks", "debug", "custom"], version="v2"))

    differential(scenario)


def test_stream_v2_with_subgraphs(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", lambda s: {"log": ["inner"]})
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        return list(g.compile().stream(INPUT, stream_mode=["updates", "values"], subgraphs=True, version="v2"))

    differential(scenario)


def test_invoke_v2_returns_graph_output(differential):
    def scenario(E):
        out = _two_step(E).invoke(INPUT, version="v2")
        return type(out).__name__, out.value, out.interrupts, isinstance(out, E.GraphOutput)

    differential(scenario, expect=("GraphOutput", {"log": ["in", "a", "b"], "last": "b"}, (), True))


def test_invoke_v1_returns_plain_dict(differential):
    def scenario(E):
        out = _two_step(E).invoke(INPUT, version="v1")
        return type(out).__name__, out

    differential(scenario)


def test_invoke_v2_with_output_schema_pydantic_value(differential):
    import pydantic

    def scenario(E):
        class St(pydantic.BaseModel):
            n: int = 0

        g = E.StateGraph(St)
        g.add_node("inc", lambda s: {"n": s.n + 1})
        g.add_edge(E.START, "inc")
        app = g.compile()
        return app.invoke({"n": 1}, version="v2"), app.invoke({"n": 1})

    differential(scenario)


def test_invoke_v2_with_stream_mode_updates(differential):
    def scenario(E):
        return _two_step(E).invoke(INPUT, stream_mode="updates", version="v2")

    differential(scenario)


# --- invoke with stream_mode ---------------------------------------------------------------


def test_invoke_with_stream_mode_updates_returns_list_of_chunks(differential):
    def scenario(E):
        return _two_step(E).invoke(INPUT, stream_mode="updates")

    differential(scenario)


def test_invoke_with_stream_mode_list(differential):
    def scenario(E):
        return capture(lambda: _two_step(E).invoke(INPUT, stream_mode=["values", "updates"]))

    differential(scenario)


def test_invoke_output_keys(differential):
    def scenario(E):
        app = _two_step(E)
        return app.invoke(INPUT, output_keys="last"), app.invoke(INPUT, output_keys=["log"])

    differential(scenario)


def test_stream_output_keys_filters_values_and_updates(differential):
    def scenario(E):
        app = _two_step(E)
        return (
            list(app.stream(INPUT, stream_mode="values", output_keys=["last"])),
            list(app.stream(INPUT, stream_mode="updates", output_keys=["last"])),
            list(app.stream(INPUT, stream_mode="values", output_keys="last")),
        )

    differential(scenario)


def test_stream_error_mid_run_yields_earlier_chunks_then_raises(differential):
    def scenario(E):
        def a(s):
            return {"log": ["a"]}

        def b(s):
            raise ZeroDivisionError("in b")

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        return collect(lambda: g.compile().stream(INPUT, stream_mode=["values", "updates"]))

    differential(scenario)


# --- get_config / get_stream_writer --------------------------------------------------------


def test_get_config_inside_node(differential):
    def scenario(E):
        seen = []

        def a(s):
            cfg = E.get_config()
            md = cfg["metadata"]
            seen.append(
                (
                    cfg["configurable"].get("thread_id"),
                    cfg["configurable"].get("k"),
                    md.get("langgraph_node"),
                    md.get("langgraph_step"),
                    md.get("langgraph_triggers"),
                    md.get("langgraph_path"),
                    md.get("langgraph_checkpoint_ns"),
                    cfg.get("recursion_limit"),
                    cfg.get("run_name"),
                )
            )
            return {"log": ["a"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", a)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.compile().invoke(INPUT, {"configurable": {"k": "v", "thread_id": "t-1"}})
        return seen

    differential(scenario)


def test_get_config_outside_a_run_raises(differential):
    def scenario(E):
        return capture(E.get_config)

    # lgnb rewords ("Called outside of a running graph node ..."): class only
    differential(scenario, exc="class")


def test_get_stream_writer_outside_a_run(differential):
    def scenario(E):
        return capture(lambda: E.get_stream_writer()("x"))

    differential(scenario, exc="class")


def test_get_config_inside_subgraph_node_has_nested_checkpoint_ns(differential):
    def scenario(E):
        seen = []

        def inner(s):
            md = E.get_config()["metadata"]
            seen.append((md.get("langgraph_node"), md.get("langgraph_checkpoint_ns"), md.get("langgraph_path")))
            return {"log": ["inner"]}

        sub = E.StateGraph(S)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        g.compile().invoke(INPUT)
        return seen

    differential(scenario)


# --- empty input / interrupts without checkpointer ----------------------------------------


def test_invoke_with_none_input_and_no_checkpointer(differential):
    def scenario(E):
        return capture(lambda: _two_step(E).invoke(None)), collect(lambda: _two_step(E).stream(None))

    # lgnb adds help to LangGraph's message and keeps its text: compare with exc="extends"
    differential(scenario, exc="extends")


def test_invoke_with_empty_dict_input(differential):
    def scenario(E):
        return capture(lambda: _two_step(E).invoke({}))

    differential(scenario)


def test_empty_input_error_class_exists_and_is_exception(differential):
    def scenario(E):
        return issubclass(E.errors.EmptyInputError, Exception), E.errors.EmptyInputError.__name__

    differential(scenario)


def test_interrupt_without_checkpointer(differential):
    def scenario(E):
        def ask(s):
            answer = E.interrupt({"question": "ok?"})
            return {"last": str(answer)}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app = g.compile()
        return (
            capture(lambda: app.invoke(INPUT)),
            collect(lambda: app.stream(INPUT, stream_mode=["updates", "values"])),
        )

    differential(scenario)


# --- async -------------------------------------------------------------------------------


def test_ainvoke_with_async_nodes(differential):
    async def scenario(E):
        async def a(s):
            await asyncio.sleep(0.001)
            return {"log": ["a"]}

        async def b(s):
            return {"log": ["b"], "last": "b"}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        return await g.compile().ainvoke(INPUT)

    differential(scenario)


def test_astream_modes_with_mixed_sync_and_async_nodes(differential):
    async def scenario(E):
        async def a(s, writer: E.StreamWriter):
            writer("async-a")
            return {"log": ["a"]}

        def b(s):
            E.get_stream_writer()("sync-b")
            return {"log": ["b"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile()
        return [c async for c in app.astream(INPUT, stream_mode=["values", "updates", "custom", "tasks"])]

    differential(scenario)


def test_astream_v2_and_ainvoke_v2(differential):
    async def scenario(E):
        app = _two_step(E)
        parts = [c async for c in app.astream(INPUT, stream_mode=["updates"], version="v2")]
        out = await app.ainvoke(INPUT, version="v2")
        return parts, out

    differential(scenario)


def test_async_node_exception_propagates(differential):
    async def scenario(E):
        class MyErr(Exception):
            pass

        async def bad(s):
            raise MyErr("async boom", 42)

        g = E.StateGraph(S)
        g.add_node("bad", bad)
        g.add_edge(E.START, "bad")
        app = g.compile()
        return await acapture(lambda: app.ainvoke(INPUT)), await acollect(lambda: app.astream(INPUT))

    differential(scenario)


def test_async_conditional_edge_and_async_send(differential):
    async def scenario(E):
        async def route(s):
            return [E.Send("w", {"log": [i]}) for i in range(3)]

        async def w(s):
            return {"log": [f"w{s['log'][0]}"]}

        g = E.StateGraph(S)
        g.add_node("w", w)
        g.add_conditional_edges(E.START, route)
        return await g.compile().ainvoke({"log": [], "last": ""})

    differential(scenario)


def test_sync_invoke_of_graph_with_async_node_raises(differential):
    def scenario(E):
        async def a(s):
            return {"log": ["a"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke(INPUT))

    differential(scenario, exc="class")


def test_astream_messages_mode_with_async_chat_model(differential):
    async def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="one two")]))

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        app = g.compile()
        out = [c async for c in app.astream({"messages": [HumanMessage("hi", id="h")]}, stream_mode="messages")]
        return [(m.content, type(m).__name__, md["langgraph_node"]) for m, md in out]

    differential(scenario)


def test_astream_error_mid_run(differential):
    async def scenario(E):
        async def a(s):
            return {"log": ["a"]}

        async def b(s):
            raise KeyError("missing")

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile()
        return await acollect(lambda: app.astream(INPUT, stream_mode=["updates", "values"]))

    differential(scenario)

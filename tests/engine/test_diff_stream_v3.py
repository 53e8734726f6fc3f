"""The v3 streaming API (`stream_events(version="v3")`, `lgnb.stream`): run streams,
their projections and raw protocol events, and the `tools` stream mode, against LangGraph."""

import operator
from typing import Annotated

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from typing_extensions import TypedDict

from _diff import acollect, collect  # noqa: F401 - harness helpers


class S(TypedDict):
    log: Annotated[list, operator.add]


def _nested(E):
    """root: a -> sub (a subgraph: x -> y, x writes custom data) -> b."""

    def x(s):
        E.get_stream_writer()({"progress": "x"})
        return {"log": ["x"]}

    sub = E.StateGraph(S)
    sub.add_node("x", x)
    sub.add_node("y", lambda s: {"log": ["y"]})
    sub.add_edge(E.START, "x")
    sub.add_edge("x", "y")
    g = E.StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("sub", sub.compile())
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(E.START, "a")
    g.add_edge("a", "sub")
    g.add_edge("sub", "b")
    return g


def _event(e):
    params = e["params"]
    return (e.get("seq"), e["method"], tuple(params["namespace"]), params["data"], params.get("interrupts"))


def test_v3_raw_events_values_and_output(differential):
    def scenario(E):
        run = _nested(E).compile().stream_events({"log": []}, version="v3")
        events = [_event(e) for e in run]
        return events, run.output, run.interrupted

    differential(scenario)


def test_v3_projections_with_extra_transformers(differential):
    def scenario(E):
        st = E.module("stream")
        run = _nested(E).compile(transformers=[st.UpdatesTransformer]).stream_events(
            {"log": []}, version="v3", transformers=[st.CustomTransformer]
        )
        return list(run.interleave("values", "updates", "custom", "lifecycle")), sorted(run.extensions)

    differential(scenario)


def test_v3_subgraph_handles(differential):
    def scenario(E):
        run = _nested(E).compile().stream_events({"log": []}, version="v3")
        seen = []
        for handle in run.subgraphs:
            values = list(handle.values)
            seen.append((handle.graph_name, handle.status, values))
        return seen, run.output

    differential(scenario)


def test_v3_async_run_stream(differential):
    async def scenario(E):
        run = await _nested(E).compile().astream_events({"log": []}, version="v3")
        values = [v async for v in run.values]
        return values, await run.output(), await run.interrupted()

    differential(scenario)


def test_v3_interrupt_and_errors(differential):
    def scenario(E):
        def ask(s):
            return {"log": [E.interrupt("ok?")]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        graph = g.compile(checkpointer=E.InMemorySaver())
        run = graph.stream_events({"log": []}, {"configurable": {"thread_id": "1"}}, version="v3")
        first = (run.interrupted, [i.value for i in run.interrupts])
        resumed = graph.stream_events(
            E.Command(resume="yes"), {"configurable": {"thread_id": "1"}}, version="v3"
        )

        def boom(s):
            raise ValueError("boom")

        bad = E.StateGraph(S)
        bad.add_node("boom", boom)
        bad.add_edge(E.START, "boom")
        failing = bad.compile().stream_events({"log": []}, version="v3")
        try:
            list(failing.values)
            error = None
        except ValueError as exc:
            error = str(exc)
        return first, resumed.output, error

    differential(scenario)


def test_v3_refuses_owned_kwargs_and_instances(differential):
    def scenario(E):
        st = E.module("stream")
        graph = _nested(E).compile()
        out = []
        for kwargs in ({"stream_mode": "values"}, {"subgraphs": True}):
            try:
                graph.stream_events({"log": []}, version="v3", **kwargs)
            except TypeError as exc:
                out.append(str(exc).split(";")[0])  # lgnb adds a hint after LangGraph's text
        try:
            graph.stream_events({"log": []}, version="v3", transformers=[st.UpdatesTransformer(())])
        except TypeError as exc:
            out.append(str(exc))
        return out

    differential(scenario)


def test_v3_messages_projection(differential):
    def scenario(E):
        class M(TypedDict):
            messages: Annotated[list, E.add_messages]

        model = GenericFakeChatModel(messages=iter([AIMessage(content="hello there", id="m1")]))

        def call(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(M)
        g.add_node("call", call)
        g.add_edge(E.START, "call")
        run = g.compile().stream_events({"messages": [("user", "hi")]}, version="v3")
        texts = []
        for stream in run.messages:
            texts.append((stream.node, "".join(stream.text)))
        return texts

    differential(scenario)


def test_tools_stream_mode(differential):
    def scenario(E):
        from langgraph.prebuilt import ToolNode

        class M(TypedDict):
            messages: Annotated[list, E.add_messages]

        @tool
        def echo(text: str) -> str:
            """echo."""
            return f"echoed:{text}"

        @tool
        def boom() -> str:
            """raises."""
            raise ValueError("nope")

        def caller(s):
            calls = [{"name": "echo", "args": {"text": "hi"}, "id": "tc1"}]
            return {"messages": [AIMessage(content="", tool_calls=calls)]}

        g = E.StateGraph(M)
        g.add_node("caller", caller)
        g.add_node("tools", ToolNode([echo, boom]))
        g.add_edge(E.START, "caller")
        g.add_edge("caller", "tools")
        events = [
            (ns, mode, {k: v for k, v in payload.items() if k != "output"})
            for ns, mode, payload in g.compile().stream(
                {"messages": []}, stream_mode=["tools", "updates"], subgraphs=True
            )
            if mode == "tools"
        ]
        return events

    differential(scenario)

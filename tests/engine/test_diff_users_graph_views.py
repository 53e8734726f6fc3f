"""What notebook users and teachers see of a graph: `get_graph()` and its drawings.

Programs from LangGraph's docs and tutorials display their graph with
`display(Image(app.get_graph().draw_mermaid_png()))`, print `draw_mermaid()`, walk
`get_graph().nodes` / `.edges`, or save `to_json()`; schema views read
`get_input_jsonschema()` and friends. Here the order of nodes and edges matters (it is the
order of lines in the Mermaid text), so the observables keep it, unlike
`test_diff_graph_structure.py` which compares sorted shapes of simpler graphs.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import dataclasses
import operator
import warnings
from typing import Annotated, Literal, Optional

import pydantic
from _diff import capture
from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def view(graph):
    """A drawable graph as a user sees it: nodes and edges in order, and the Mermaid text."""
    nodes = [(k, n.id, n.name, n.metadata) for k, n in graph.nodes.items()]
    edges = [(e.source, e.target, e.conditional, e.data) for e in graph.edges]
    return {"nodes": nodes, "edges": edges, "mermaid": graph.draw_mermaid()}


def _nodes(E, g, *names):
    for n in names:
        g.add_node(n, _logger(n))
    return g


# --- tutorial-shaped graphs ----------------------------------------------------------


def test_chatbot_with_tools_loop_draws_like_the_quickstart(differential):
    """The LangGraph quickstart: chatbot -> tools_condition -> tools -> chatbot."""

    def scenario(E):
        def tools_condition(s) -> Literal["tools", "__end__"]:
            return "__end__"

        g = _nodes(E, E.StateGraph(S), "chatbot", "tools")
        g.add_edge(E.START, "chatbot")
        g.add_conditional_edges("chatbot", tools_condition)
        g.add_edge("tools", "chatbot")
        return view(g.compile().get_graph())

    differential(scenario)


def test_prebuilt_tools_condition_and_tool_node_draw_tools_metadata(differential):
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode, tools_condition

        @tool
        def search(q: str) -> str:
            """Search the web."""
            return q

        @tool
        def calc(x: int) -> int:
            """Compute."""
            return x

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", lambda s: {"messages": []})
        g.add_node("tools", ToolNode([search, calc]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        return view(g.compile().get_graph())

    differential(scenario)


def test_router_with_path_map_dict_labels_edges_by_key(differential):
    def scenario(E):
        def route(s):
            return "joke"

        g = _nodes(E, E.StateGraph(S), "router", "write_joke", "write_story", "write_poem")
        g.add_edge(E.START, "router")
        g.add_conditional_edges("router", route,
                                {"joke": "write_joke", "story": "write_story", "poem": "write_poem"})
        for n in ("write_joke", "write_story", "write_poem"):
            g.add_edge(n, E.END)
        return view(g.compile().get_graph())

    differential(scenario)


def test_router_path_map_with_end_value_draws_conditional_end_edge(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "llm", "tool")
        g.add_edge(E.START, "llm")
        g.add_conditional_edges("llm", lambda s: "done", {"continue": "tool", "done": E.END})
        g.add_edge("tool", "llm")
        return view(g.compile().get_graph())

    differential(scenario)


def test_evaluator_optimizer_loop_with_literal_labels(differential):
    def scenario(E):
        def route(s) -> Literal["Accepted", "Rejected + Feedback"]:
            return "Accepted"

        g = _nodes(E, E.StateGraph(S), "llm_call_generator", "llm_call_evaluator")
        g.add_edge(E.START, "llm_call_generator")
        g.add_edge("llm_call_generator", "llm_call_evaluator")
        g.add_conditional_edges("llm_call_evaluator", route,
                                {"Accepted": E.END, "Rejected + Feedback": "llm_call_generator"})
        return view(g.compile().get_graph())

    differential(scenario)


def test_parallelization_fan_out_and_aggregator_join(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "call_llm_1", "call_llm_2", "call_llm_3", "aggregator")
        for n in ("call_llm_1", "call_llm_2", "call_llm_3"):
            g.add_edge(E.START, n)
            g.add_edge(n, "aggregator")
        g.add_edge("aggregator", E.END)
        return view(g.compile().get_graph())

    differential(scenario)


def test_waiting_edge_join_draws_each_source_to_the_target(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b", "c", "d")
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        g.add_edge(["b", "c"], "d")
        g.add_edge("d", E.END)
        return view(g.compile().get_graph())

    differential(scenario)


def test_orchestrator_worker_send_fan_out_with_list_map(differential):
    def scenario(E):
        def assign(s):
            return [E.Send("llm_call", {"log": [i]}) for i in range(2)]

        g = _nodes(E, E.StateGraph(S), "orchestrator", "llm_call", "synthesizer")
        g.add_edge(E.START, "orchestrator")
        g.add_conditional_edges("orchestrator", assign, ["llm_call"])
        g.add_edge("llm_call", "synthesizer")
        g.add_edge("synthesizer", E.END)
        return view(g.compile().get_graph())

    differential(scenario)


def test_send_fan_out_without_path_map_draws_no_edges_past_the_router(differential):
    def scenario(E):
        def assign(s):
            return [E.Send("worker", s)]

        g = _nodes(E, E.StateGraph(S), "plan", "worker", "reduce")
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", assign)
        g.add_edge("worker", "reduce")
        return view(g.compile().get_graph())

    differential(scenario)


def test_command_literal_destinations_draw_dashed_edges(differential):
    def scenario(E):
        def supervisor(s) -> E.Command[Literal["researcher", "coder", "__end__"]]:
            return E.Command(goto=E.END)

        def worker(s) -> E.Command[Literal["supervisor"]]:
            return E.Command(goto="supervisor")

        g = E.StateGraph(S)
        g.add_node("supervisor", supervisor)
        g.add_node("researcher", worker)
        g.add_node("coder", worker)
        g.add_edge(E.START, "supervisor")
        return view(g.compile().get_graph())

    differential(scenario)


def test_add_node_destinations_tuple_and_dict_labels(differential):
    def scenario(E):
        def a(s):
            return E.Command(goto="b")

        def b(s):
            return E.Command(goto="c")

        g = E.StateGraph(S)
        g.add_node("a", a, destinations=("b", "c"))
        g.add_node("b", b, destinations={"c": "to c", E.END: "stop"})
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "a")
        return view(g.compile().get_graph())

    differential(scenario)


def test_command_destinations_mixed_with_a_static_edge(differential):
    def scenario(E):
        def a(s) -> E.Command[Literal["b"]]:
            return E.Command(goto="b")

        g = E.StateGraph(S)
        g.add_node("a", a)
        _nodes(E, g, "b", "c")
        g.add_edge(E.START, "a")
        g.add_edge("a", "c")
        g.add_edge("b", E.END)
        g.add_edge("c", E.END)
        return view(g.compile().get_graph())

    differential(scenario)


def test_conditional_entry_point_with_literal_hint(differential):
    def scenario(E):
        def route(s) -> Literal["weather", "news"]:
            return "news"

        g = _nodes(E, E.StateGraph(S), "weather", "news")
        g.set_conditional_entry_point(route)
        g.set_finish_point("weather")
        g.set_finish_point("news")
        return view(g.compile().get_graph())

    differential(scenario)


def test_set_entry_and_finish_point_draw_start_and_end_edges(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "only")
        g.set_entry_point("only")
        g.set_finish_point("only")
        return view(g.compile().get_graph())

    differential(scenario)


def test_deferred_aggregator_is_marked_defer(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b", "b2")
        g.add_node("agg", _logger("agg"), defer=True)
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge("b", "b2")
        g.add_edge("a", "agg")
        g.add_edge("b2", "agg")
        g.add_edge("agg", E.END)
        return view(g.compile().get_graph())

    differential(scenario)


def test_interrupt_before_and_after_are_shown_in_node_metadata(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "draft", "review", "send")
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "review")
        g.add_edge("review", "send")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["review", "send"],
                        interrupt_after=["review"])
        return view(app.get_graph())

    differential(scenario)


def test_interrupt_before_star_adds_no_interrupt_metadata(differential):
    """LangGraph tests `name in interrupt_before_nodes`; with "*" that is a substring test,
    so no node is marked (the run still pauses before every node)."""

    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b")
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before="*")
        return view(app.get_graph())

    differential(scenario)


def test_node_metadata_given_to_add_node_is_kept(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"), metadata={"owner": "team-a", "tags": ["x"]})
        g.add_edge(E.START, "a")
        return view(g.compile().get_graph())

    differential(scenario)


def test_unreachable_node_is_drawn_without_its_outgoing_edges(differential):
    """A node nothing routes to (a leftover while editing a notebook) is drawn alone:
    LangGraph finds edges by running the writers of the nodes START reaches."""

    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "orphan", "b")
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("orphan", "b")
        return view(g.compile().get_graph())

    differential(scenario)


def test_node_reached_only_after_a_conditional_edge_chain(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b", "c", "d")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "b", ["b", "c"])
        g.add_edge("b", "d")
        g.add_edge("c", "d")
        return view(g.compile().get_graph())

    differential(scenario)


def test_two_conditional_edges_from_one_node(differential):
    def scenario(E):
        def r1(s) -> Literal["x"]:
            return "x"

        def r2(s) -> Literal["y", "__end__"]:
            return "y"

        g = _nodes(E, E.StateGraph(S), "a", "x", "y")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", r1)
        g.add_conditional_edges("a", r2)
        return view(g.compile().get_graph())

    differential(scenario)


def test_add_sequence_with_named_tuples_draws_a_chain(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_sequence([("fetch", _logger("fetch")), ("parse", _logger("parse")),
                        ("store", _logger("store"))])
        g.add_edge(E.START, "fetch")
        return view(g.compile().get_graph())

    differential(scenario)


def test_runnable_lambda_node_and_named_function_node(differential):
    def scenario(E):
        from langchain_core.runnables import RunnableLambda

        def my_step(s):
            return {"log": ["f"]}

        g = E.StateGraph(S)
        g.add_node(my_step)
        g.add_node("rl", RunnableLambda(lambda s: {"log": ["r"]}))
        g.add_edge(E.START, "my_step")
        g.add_edge("my_step", "rl")
        return view(g.compile().get_graph())

    differential(scenario)


# --- subgraphs --------------------------------------------------------------------


def _sub(E):
    sub = E.StateGraph(S)
    _nodes(E, sub, "plan", "act")
    sub.add_edge(E.START, "plan")
    sub.add_conditional_edges("plan", lambda s: "act", {"go": "act", "stop": E.END})
    sub.add_edge("act", E.END)
    return sub.compile()


def _single_node_app(E, name, node):
    """START -> name, compiled."""
    g = E.StateGraph(S)
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile()


def _found_by_xray(app):
    """The subgraphs LangGraph finds and the expanded drawing."""
    return sorted(n for n, _ in app.get_subgraphs()), view(app.get_graph(xray=True))


def test_subgraph_as_node_drawn_collapsed_and_expanded(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "pre", "post")
        g.add_node("team", _sub(E))
        g.add_edge(E.START, "pre")
        g.add_edge("pre", "team")
        g.add_edge("team", "post")
        app = g.compile()
        return view(app.get_graph()), view(app.get_graph(xray=True))

    differential(scenario)


def test_subgraph_invoked_inside_a_node_function_is_found_by_xray(differential):
    """The docs' 'invoke a graph from a node' pattern (different state schemas)."""

    def scenario(E):
        subgraph = _sub(E)

        def call_subgraph(s):
            out = subgraph.invoke({"log": []})
            return {"log": out["log"]}

        app = _single_node_app(E, "call_subgraph", call_subgraph)
        return (sorted(n for n, _ in app.get_subgraphs()), view(app.get_graph()),
                view(app.get_graph(xray=True)))

    differential(scenario)


def test_subgraph_routed_by_conditional_edges_expanded_with_xray(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "router", "other")
        g.add_node("team", _sub(E))
        g.add_edge(E.START, "router")
        g.add_conditional_edges("router", lambda s: "team", ["team", "other"])
        g.add_edge("team", E.END)
        app = g.compile()
        return view(app.get_graph(xray=True))

    differential(scenario)


def test_two_levels_of_subgraphs_with_xray_depths(differential):
    def scenario(E):
        mid = E.StateGraph(S)
        mid.add_node("inner", _sub(E))
        _nodes(E, mid, "m")
        mid.add_edge(E.START, "m")
        mid.add_edge("m", "inner")
        top = E.StateGraph(S)
        top.add_node("outer", mid.compile())
        _nodes(E, top, "t")
        top.add_edge(E.START, "t")
        top.add_edge("t", "outer")
        app = top.compile()
        return [view(app.get_graph(xray=x)) for x in (1, 2)]

    differential(scenario)


def test_subgraph_with_command_parent_destinations(differential):
    def scenario(E):
        def hop(s) -> E.Command[Literal["inner2"]]:
            return E.Command(goto="inner2")

        sub = E.StateGraph(S)
        sub.add_node("inner1", hop)
        _nodes(E, sub, "inner2")
        sub.add_edge(E.START, "inner1")
        g = _nodes(E, E.StateGraph(S), "end_node")
        g.add_node("child", sub.compile(), destinations=("end_node",))
        g.add_edge(E.START, "child")
        app = g.compile()
        return view(app.get_graph()), view(app.get_graph(xray=True))

    differential(scenario)


def test_aget_graph_matches_get_graph(differential):
    async def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a")
        g.add_node("team", _sub(E))
        g.add_edge(E.START, "a")
        g.add_edge("a", "team")
        app = g.compile()
        return view(await app.aget_graph(xray=True))

    differential(scenario)


# --- drawing text -----------------------------------------------------------------


def test_draw_mermaid_options(differential):
    def scenario(E):
        from langchain_core.runnables.graph import CurveStyle, NodeStyles

        g = _nodes(E, E.StateGraph(S), "a", "b")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "b", {"yes": "b", "no": E.END})
        gr = g.compile().get_graph()
        return (gr.draw_mermaid(with_styles=False), gr.draw_mermaid(curve_style=CurveStyle.LINEAR),
                gr.draw_mermaid(node_colors=NodeStyles(default="fill:#fff")),
                gr.draw_mermaid(wrap_label_n_words=2))

    differential(scenario)


def test_to_json_of_a_drawn_graph(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b")
        g.add_node("team", _sub(E))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "b", ["b", "team"])
        return g.compile().get_graph().to_json()

    differential(scenario)


def test_first_and_last_node_and_reid(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b")
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        gr = g.compile().get_graph()
        re = gr.reid()
        return (gr.first_node().id, gr.last_node().id, sorted(re.nodes),
                [(e.source, e.target) for e in re.edges])

    differential(scenario)


def test_draw_ascii_needs_grandalf(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a")
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().get_graph().draw_ascii())

    differential(scenario)


# --- schemas ------------------------------------------------------------------------


def test_messages_state_json_schemas(differential):
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", lambda s: {"messages": []})
        g.add_edge(E.START, "chat")
        app = g.compile()
        return app.get_input_jsonschema(), app.get_output_jsonschema()

    differential(scenario)


def test_pydantic_state_json_schemas_with_defaults_and_descriptions(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            question: str = pydantic.Field(description="what the user asked")
            answer: Optional[str] = None
            attempts: Annotated[int, operator.add] = 0

        g = E.StateGraph(St)
        g.add_node("a", lambda s: {"answer": "x"})
        g.add_edge(E.START, "a")
        app = g.compile()
        return app.get_input_jsonschema(), app.get_output_jsonschema()

    differential(scenario)


def test_dataclass_state_json_schemas(differential):
    def scenario(E):
        @dataclasses.dataclass
        class St:
            topic: str
            notes: Annotated[list, operator.add] = dataclasses.field(default_factory=list)
            score: float = 0.5

        g = E.StateGraph(St)
        g.add_node("a", lambda s: {"score": 1.0})
        g.add_edge(E.START, "a")
        app = g.compile()
        return app.get_input_jsonschema(), app.get_output_jsonschema()

    differential(scenario)


def test_input_output_schemas_differ_from_state(differential):
    def scenario(E):
        class InputState(TypedDict):
            user_input: str

        class OutputState(TypedDict):
            graph_output: str

        class OverallState(TypedDict):
            foo: str
            user_input: str
            graph_output: str

        g = E.StateGraph(OverallState, input_schema=InputState, output_schema=OutputState)
        g.add_node("n", lambda s: {"graph_output": s["user_input"]})
        g.add_edge(E.START, "n")
        app = g.compile(name="io_graph")
        return (app.get_input_jsonschema(), app.get_output_jsonschema(),
                app.invoke({"user_input": "hi"}))

    differential(scenario)


def test_context_jsonschema_for_dataclass_typeddict_and_none(differential):
    def scenario(E):
        @dataclasses.dataclass
        class Ctx:
            user_id: str
            model: str = "gpt"

        class TCtx(TypedDict):
            tenant: str

        out = []
        for ctx in (Ctx, TCtx, None):
            g = E.StateGraph(S, context_schema=ctx)
            g.add_node("a", _logger("a"))
            g.add_edge(E.START, "a")
            out.append(g.compile().get_context_jsonschema())
        return out

    differential(scenario)


def test_deprecated_get_input_and_output_schema_models(differential):
    def scenario(E):
        class In(TypedDict):
            q: str

        class St(TypedDict):
            q: str
            a: str

        g = E.StateGraph(St, input_schema=In)
        g.add_node("x", lambda s: {"a": s["q"]})
        g.add_edge(E.START, "x")
        app = g.compile()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            i, o = app.get_input_schema(), app.get_output_schema()
        return i.__name__, i.model_json_schema(), o.__name__, o.model_json_schema()

    differential(scenario)


def test_schemas_of_a_graph_renamed_by_with_config(differential):
    def scenario(E):
        class St(TypedDict, total=False):
            q: str
            a: int

        g = E.StateGraph(St)
        g.add_node("x", lambda s: {"a": 1})
        g.add_edge(E.START, "x")
        app = g.compile().with_config(run_name="Renamed")
        return app.get_name(), app.name, app.get_input_jsonschema(), app.get_output_jsonschema()

    differential(scenario)


# --- builder introspection ----------------------------------------------------------


def test_builder_nodes_edges_and_branches_as_users_read_them(differential):
    def scenario(E):
        def route(s) -> Literal["b", "c"]:
            return "b"

        g = _nodes(E, E.StateGraph(S), "a", "b", "c", "d")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route)
        g.add_edge(["b", "c"], "d")
        app = g.compile()
        b = app.builder
        return (list(b.nodes), sorted(b.edges), sorted(b.waiting_edges) if hasattr(b, "waiting_edges") else None,
                {k: sorted(v) for k, v in b.branches.items()},
                {k: {n: br.ends for n, br in v.items()} for k, v in b.branches.items()})

    differential(scenario)


def test_compiled_graph_nodes_keys_include_start(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b")
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile()
        return list(app.nodes), list(app.get_graph().nodes)

    differential(scenario)


# --- more reachability and subgraph discovery -----------------------------------------


def test_join_with_an_unreachable_source_is_not_drawn_past_the_join(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b", "c", "d")
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge(["b", "c"], "d")
        return view(g.compile().get_graph())

    differential(scenario)


def test_subgraph_compiled_without_checkpointing_is_not_a_subgraph_for_xray(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        _nodes(E, sub, "inner")
        sub.add_edge(E.START, "inner")
        return _found_by_xray(_single_node_app(E, "team", sub.compile(checkpointer=False)))

    differential(scenario)


def test_subgraph_without_checkpointing_invoked_in_a_node_is_not_found(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        _nodes(E, sub, "inner")
        sub.add_edge(E.START, "inner")
        subgraph = sub.compile(checkpointer=False)

        def call(s):
            return subgraph.invoke(s)

        return _found_by_xray(_single_node_app(E, "call", call))

    differential(scenario)


def test_runnable_lambda_node_invoking_a_subgraph_is_found_by_xray(differential):
    def scenario(E):
        from langchain_core.runnables import RunnableLambda

        subgraph = _sub(E)

        def call(s):
            return subgraph.invoke(s)

        return _found_by_xray(_single_node_app(E, "call", RunnableLambda(call)))

    differential(scenario)


def test_runnable_sequence_ending_in_a_subgraph_is_found_by_xray(differential):
    def scenario(E):
        from langchain_core.runnables import RunnableLambda

        pipeline = RunnableLambda(lambda s: {"log": ["prep"]}) | _sub(E)
        return _found_by_xray(_single_node_app(E, "pipeline", pipeline))

    differential(scenario)


def test_async_node_awaiting_a_subgraph_is_found_by_xray(differential):
    def scenario(E):
        subgraph = _sub(E)

        async def call(s):
            return await subgraph.ainvoke(s)

        return _found_by_xray(_single_node_app(E, "call", call))

    differential(scenario)


def test_tool_node_inside_a_subgraph_keeps_its_tools_metadata_under_xray(differential):
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode, tools_condition

        @tool
        def lookup(q: str) -> str:
            """Look up."""
            return q

        sub = E.StateGraph(E.MessagesState)
        sub.add_node("agent", lambda s: {"messages": []})
        sub.add_node("tools", ToolNode([lookup]))
        sub.add_edge(E.START, "agent")
        sub.add_conditional_edges("agent", tools_condition)
        sub.add_edge("tools", "agent")
        g = E.StateGraph(E.MessagesState)
        g.add_node("research", sub.compile())
        g.add_edge(E.START, "research")
        return view(g.compile().get_graph(xray=True))

    differential(scenario)


# --- multi-step structures ------------------------------------------------------------


def test_join_of_branches_of_different_lengths(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "long1", "long2", "short", "join")
        g.add_edge(E.START, "a")
        g.add_edge("a", "long1")
        g.add_edge("long1", "long2")
        g.add_edge("a", "short")
        g.add_edge(["long2", "short"], "join")
        g.add_edge("join", E.END)
        return view(g.compile().get_graph())

    differential(scenario)


def test_plan_and_execute_loop_with_replanner(differential):
    def scenario(E):
        def should_end(s) -> Literal["agent", "__end__"]:
            return "__end__"

        g = _nodes(E, E.StateGraph(S), "planner", "agent", "replan")
        g.add_edge(E.START, "planner")
        g.add_edge("planner", "agent")
        g.add_edge("agent", "replan")
        g.add_conditional_edges("replan", should_end, ["agent", E.END])
        return view(g.compile().get_graph())

    differential(scenario)


def test_multi_agent_network_of_command_nodes(differential):
    def scenario(E):
        def agent_1(s) -> E.Command[Literal["agent_2", "agent_3", "__end__"]]:
            return E.Command(goto=E.END)

        def agent_2(s) -> E.Command[Literal["agent_1", "agent_3", "__end__"]]:
            return E.Command(goto=E.END)

        def agent_3(s) -> E.Command[Literal["agent_1", "agent_2", "__end__"]]:
            return E.Command(goto=E.END)

        g = E.StateGraph(S)
        g.add_node(agent_1)
        g.add_node(agent_2)
        g.add_node(agent_3)
        g.add_edge(E.START, "agent_1")
        return view(g.compile().get_graph())

    differential(scenario)


def test_supervisor_with_workers_returning_by_static_edges(differential):
    def scenario(E):
        def supervisor(s) -> E.Command[Literal["math", "research", "__end__"]]:
            return E.Command(goto=E.END)

        g = E.StateGraph(S)
        g.add_node(supervisor)
        _nodes(E, g, "math", "research")
        g.add_edge(E.START, "supervisor")
        g.add_edge("math", "supervisor")
        g.add_edge("research", "supervisor")
        return view(g.compile().get_graph())

    differential(scenario)


def test_loop_with_no_drawn_exit(differential):
    def scenario(E):
        def again(s) -> Literal["a", "b"]:
            return "a"

        g = _nodes(E, E.StateGraph(S), "a", "b")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", again)
        g.add_edge("b", "a")
        return view(g.compile().get_graph())

    differential(scenario)


def test_start_fans_out_to_a_node_and_a_router(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a", "b", "c")
        g.add_edge(E.START, "a")
        g.add_conditional_edges(E.START, lambda s: "b", {"left": "b", "right": "c"})
        g.add_edge("b", "a")
        return view(g.compile().get_graph())

    differential(scenario)


def test_pydantic_state_graph_draws_like_a_typeddict_graph(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            n: int = 0

        def route(s) -> Literal["b", "__end__"]:
            return "__end__"

        g = E.StateGraph(St)
        g.add_node("a", lambda s: {"n": s.n + 1})
        g.add_node("b", lambda s: {"n": s.n + 1})
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route)
        return view(g.compile().get_graph()), g.compile().get_graph().to_json()

    differential(scenario)


# --- agents LangGraph's prebuilt helpers build -------------------------------------------


def _react_agent(**kwargs):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    class ToolModel(GenericFakeChatModel):
        def bind_tools(self, tools, **kw):
            return self

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(ToolModel(messages=iter([])), [add], **kwargs)


def _on(E, graph):
    if E.root == "lgnb":
        from lgnb.graph import from_langgraph

        return from_langgraph(graph)
    return graph


def test_react_agent_rebuilt_by_lgnb_draws_the_same_graph(differential):
    def scenario(E):
        return view(_on(E, _react_agent()).get_graph())

    differential(scenario)


def test_react_agent_with_hooks_draws_the_same_graph(differential):
    def scenario(E):
        agent = _react_agent(pre_model_hook=lambda s: {"llm_input_messages": s["messages"]},
                             post_model_hook=lambda s: {})
        return view(_on(E, agent).get_graph())

    differential(scenario)


def test_react_agent_as_a_node_expanded_by_xray(differential):
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("prep", lambda s: {"messages": []})
        g.add_node("agent", _react_agent())
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "agent")
        app = g.compile()
        return view(app.get_graph()), view(app.get_graph(xray=True))

    differential(scenario)


# --- more schema views ---------------------------------------------------------------


def test_messages_state_subclass_json_schemas(differential):
    def scenario(E):
        class State(E.MessagesState):
            summary: str

        g = E.StateGraph(State)
        g.add_node("chat", lambda s: {"messages": []})
        g.add_edge(E.START, "chat")
        app = g.compile()
        schema = app.get_input_jsonschema()
        return list(schema["properties"]), schema.get("required"), schema.get("description")

    differential(scenario)


def test_pydantic_context_schema_and_deprecated_config_schema(differential):
    def scenario(E):
        class Ctx(pydantic.BaseModel):
            llm: str = "small"
            temperature: float = 0.0

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        app = g.compile()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            legacy = app.config_schema()
            legacy_json = app.get_config_jsonschema()
        return app.get_context_jsonschema(), legacy.__name__, legacy_json

    differential(scenario)


def test_pydantic_input_schema_to_json_of_the_drawing(differential):
    def scenario(E):
        class In(pydantic.BaseModel):
            q: str

        class St(pydantic.BaseModel):
            q: str
            a: str = ""

        g = E.StateGraph(St, input_schema=In)
        g.add_node("x", lambda s: {"a": s.q})
        g.add_edge(E.START, "x")
        app = g.compile()
        return app.get_graph().to_json(), app.get_input_jsonschema()

    differential(scenario)


def test_map_reduce_from_start_without_path_map(differential):
    def scenario(E):
        def fan_out(s):
            return [E.Send("generate", {"log": [t]}) for t in ("a", "b")]

        g = _nodes(E, E.StateGraph(S), "generate", "best")
        g.add_conditional_edges(E.START, fan_out)
        g.add_edge("generate", "best")
        g.add_edge("best", E.END)
        return view(g.compile().get_graph())

    differential(scenario)


def test_unreachable_subgraph_node_expanded_by_xray(differential):
    def scenario(E):
        g = _nodes(E, E.StateGraph(S), "a")
        g.add_node("team", _sub(E))
        g.add_edge(E.START, "a")
        g.add_edge("team", "a")
        return view(g.compile().get_graph(xray=True))

    differential(scenario)

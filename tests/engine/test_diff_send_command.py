"""Send fan-out, Command routing/updates, subgraphs as nodes, Command.PARENT."""

import operator
from typing import Annotated, Literal

from typing_extensions import NotRequired, TypedDict

from _diff import attempt, capture, collect


class MapState(TypedDict):
    subjects: list
    jokes: Annotated[list, operator.add]


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


# --- Send --------------------------------------------------------------------------------


def test_send_map_reduce_fan_out_from_start(differential):
    def scenario(E):
        def fan(s):
            return [E.Send("joke", {"subject": sub}) for sub in s["subjects"]]

        g = E.StateGraph(MapState)
        g.add_node("joke", lambda s: {"jokes": [f"joke about {s['subject']}"]})
        g.add_conditional_edges(E.START, fan)
        g.add_edge("joke", E.END)
        app = g.compile()
        return app.invoke({"subjects": ["cats", "dogs", "owls"], "jokes": []})

    differential(scenario)


def test_send_results_are_reduced_in_send_order(differential):
    # push tasks are ordered by their index in the Send list, not by completion
    def scenario(E):
        def fan(s):
            return [E.Send("w", {"i": i}) for i in (3, 1, 2, 0)]

        class W(TypedDict):
            out: Annotated[list, operator.add]

        g = E.StateGraph(W)
        g.add_node("w", lambda s: {"out": [s["i"]]})
        g.add_conditional_edges(E.START, fan)
        return g.compile().invoke({"out": []})

    differential(scenario, expect={"out": [3, 1, 2, 0]})


def test_send_from_node_then_reduce_in_join_node(differential):
    def scenario(E):
        class St(TypedDict):
            topic: str
            parts: Annotated[list, operator.add]
            summary: NotRequired[str]

        def plan(s):
            return {}

        def route(s):
            return [E.Send("section", {"name": f"{s['topic']}-{i}"}) for i in range(3)]

        g = E.StateGraph(St)
        g.add_node("plan", plan)
        g.add_node("section", lambda s: {"parts": [s["name"].upper()]})
        g.add_node("summarize", lambda s: {"summary": "|".join(s["parts"])})
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", route, ["section"])
        g.add_edge("section", "summarize")
        app = g.compile()
        return app.invoke({"topic": "t", "parts": []}), list(
            app.stream({"topic": "u", "parts": []}, stream_mode="updates")
        )

    differential(scenario)


def test_send_to_unknown_node_is_silently_dropped(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", _logger("a"))
        g.add_conditional_edges(E.START, lambda s: [E.Send("ghost", {})])
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_send_with_empty_list_runs_nothing(differential):
    def scenario(E):
        g = E.StateGraph(MapState)
        g.add_node("joke", lambda s: {"jokes": ["never"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("joke", x) for x in s["subjects"]])
        return g.compile().invoke({"subjects": [], "jokes": []})

    differential(scenario, expect={"subjects": [], "jokes": []})


def test_send_object_equality_and_repr(differential):
    def scenario(E):
        a = E.Send("n", {"k": 1})
        return a == E.Send("n", {"k": 1}), a == E.Send("n", {"k": 2}), repr(a)

    differential(scenario)


def test_send_tasks_stream_shows_push_inputs(differential):
    def scenario(E):
        g = E.StateGraph(MapState)
        g.add_node("joke", lambda s: {"jokes": [s["subject"]]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("joke", {"subject": x}) for x in s["subjects"]])
        chunks = list(g.compile().stream({"subjects": ["a", "b"], "jokes": []}, stream_mode="tasks"))
        # parallel push tasks: start events come in order; results in completion order
        starts = [c for c in chunks if "input" in c]
        results = sorted((c for c in chunks if "result" in c), key=lambda c: repr(c["result"]))  # completion order
        return starts, results

    differential(scenario)


def test_send_nested_fan_out_two_levels(differential):
    def scenario(E):
        class St(TypedDict):
            out: Annotated[list, operator.add]

        g = E.StateGraph(St)
        g.add_node("level1", lambda s: {"out": [f"l1-{s['i']}"]})
        g.add_node("level2", lambda s: {"out": [f"l2-{s['j']}"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("level1", {"i": i}) for i in range(2)])
        g.add_conditional_edges("level1", lambda s: [E.Send("level2", {"j": j}) for j in range(2)])
        return g.compile().invoke({"out": []})

    differential(scenario)


# --- Command -----------------------------------------------------------------------------


def test_command_goto_and_update_from_node(differential):
    def scenario(E):
        def decide(s) -> E.Command[Literal["yes", "no"]]:
            return E.Command(goto="yes" if not s["log"] else "no", update={"log": ["decided"]})

        g = E.StateGraph(Log)
        g.add_node("decide", decide)
        g.add_node("yes", _logger("yes"))
        g.add_node("no", _logger("no"))
        g.add_edge(E.START, "decide")
        app = g.compile()
        return (
            app.invoke({"log": []}),
            app.invoke({"log": ["x"]}),
            list(app.stream({"log": []}, stream_mode="updates")),
        )

    differential(scenario)


def test_command_goto_list_of_nodes(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("decide", lambda s: E.Command(goto=["b", "a"]))
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "decide")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_command_goto_send(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        g = E.StateGraph(St)
        g.add_node("decide", lambda s: E.Command(goto=[E.Send("w", {"log": ["p1"]}), E.Send("w", {"log": ["p2"]})]))
        g.add_node("w", lambda s: {"log": [f"w saw {s['log']}"]})
        g.add_edge(E.START, "decide")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_command_update_only_follows_static_edges(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(update={"log": ["a-cmd"]}))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["a-cmd", "b"]})


def test_command_goto_end(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto=E.END, update={"log": ["a"]}))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_command_goto_plus_static_edge_runs_both(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto="c"))
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_command_update_as_list_of_tuples(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(update=[("log", "t1"), ("log", "t2")]))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_node_returning_list_of_commands(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: [E.Command(update={"log": ["one"]}, goto="b"), E.Command(update={"log": ["two"]})])
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_command_goto_unknown_node_is_silently_dropped(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto="ghost"))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_command_repr_and_fields(differential):
    def scenario(E):
        c = E.Command(goto="x", update={"a": 1})
        return repr(c), c.goto, c.update, c.graph, c.resume, E.Command.PARENT

    differential(scenario)


def test_command_parent_from_subgraph_node_routes_in_parent(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        def inner(s):
            return E.Command(graph=E.Command.PARENT, goto="after", update={"log": ["from-sub"]})

        sub = E.StateGraph(St)
        sub.add_node("inner", inner)
        sub.add_node("never", _logger("never"))
        sub.add_edge(E.START, "inner")
        sub.add_edge("inner", "never")
        subapp = sub.compile()

        g = E.StateGraph(St)
        g.add_node("sub", subapp, destinations=("after",))
        g.add_node("after", _logger("after"))
        g.add_edge(E.START, "sub")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates", subgraphs=True))

    differential(scenario)


def test_command_parent_without_parent_graph_raises(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(graph=E.Command.PARENT, goto="b"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_command_parent_update_of_shared_last_value_key(differential):
    def scenario(E):
        class St(TypedDict):
            status: str

        sub = E.StateGraph(St)
        sub.add_node("inner", lambda s: E.Command(graph=E.Command.PARENT, update={"status": "done-in-sub"}, goto="fin"))
        sub.add_edge(E.START, "inner")

        g = E.StateGraph(St)
        g.add_node("sub", sub.compile())
        g.add_node("fin", lambda s: {"status": s["status"] + "+fin"})
        g.add_edge(E.START, "sub")
        return g.compile().invoke({"status": "new"})

    differential(scenario)


# --- subgraphs ---------------------------------------------------------------------------


def _sub_with_shared_keys(E):
    class Sub(TypedDict):
        log: Annotated[list, operator.add]
        sub_only: NotRequired[str]

    sg = E.StateGraph(Sub)
    sg.add_node("s1", lambda s: {"log": ["s1"], "sub_only": "hidden"})
    sg.add_node("s2", lambda s: {"log": [f"s2 saw {s.get('sub_only')}"]})
    sg.add_edge(E.START, "s1")
    sg.add_edge("s1", "s2")
    return sg.compile()


def test_compiled_subgraph_as_node_shares_keys_with_parent(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("pre", _logger("pre"))
        g.add_node("sub", _sub_with_shared_keys(E))
        g.add_node("post", _logger("post"))
        g.add_edge(E.START, "pre")
        g.add_edge("pre", "sub")
        g.add_edge("sub", "post")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_subgraph_stream_with_subgraphs_true_has_namespaces(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("sub", _sub_with_shared_keys(E))
        g.add_edge(E.START, "sub")
        app = g.compile()
        return (
            list(app.stream({"log": []}, stream_mode="updates", subgraphs=True)),
            list(app.stream({"log": []}, stream_mode="values", subgraphs=True)),
        )

    differential(scenario)


def test_subgraph_stream_modes_list_with_subgraphs_true(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("sub", _sub_with_shared_keys(E))
        g.add_node("after", _logger("after"))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "after")
        return list(g.compile().stream({"log": []}, stream_mode=["updates", "values"], subgraphs=True))

    differential(scenario)


def test_subgraph_invoked_inside_a_node_function_with_different_schema(differential):
    def scenario(E):
        class Inner(TypedDict):
            text: str

        ig = E.StateGraph(Inner)
        ig.add_node("shout", lambda s: {"text": s["text"].upper()})
        ig.add_edge(E.START, "shout")
        inner = ig.compile()

        def call(s):
            res = inner.invoke({"text": "hi " + str(len(s["log"]))})
            return {"log": [res["text"]]}

        g = E.StateGraph(Log)
        g.add_node("call", call)
        g.add_edge(E.START, "call")
        app = g.compile()
        return (
            app.invoke({"log": []}),
            list(app.stream({"log": []}, stream_mode="updates", subgraphs=True)),
        )

    differential(scenario)


def test_nested_subgraphs_two_levels_namespaces(differential):
    def scenario(E):
        leaf = E.StateGraph(Log)
        leaf.add_node("leaf_node", _logger("leaf"))
        leaf.add_edge(E.START, "leaf_node")

        mid = E.StateGraph(Log)
        mid.add_node("leaf_graph", leaf.compile())
        mid.add_edge(E.START, "leaf_graph")

        top = E.StateGraph(Log)
        top.add_node("mid_graph", mid.compile())
        top.add_edge(E.START, "mid_graph")
        app = top.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates", subgraphs=True))

    differential(scenario)


def test_subgraph_custom_events_carry_subgraph_namespace(differential):
    def scenario(E):
        def inner(s):
            E.get_stream_writer()({"from": "inner"})
            return {"log": ["inner"]}

        sub = E.StateGraph(Log)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")

        g = E.StateGraph(Log)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        app = g.compile()
        return (
            list(app.stream({"log": []}, stream_mode="custom", subgraphs=True)),
            list(app.stream({"log": []}, stream_mode="custom")),
        )

    differential(scenario)


def test_subgraph_error_propagates_to_parent(differential):
    def scenario(E):
        def bad(s):
            raise LookupError("inner failure")

        sub = E.StateGraph(Log)
        sub.add_node("bad", bad)
        sub.add_edge(E.START, "bad")
        g = E.StateGraph(Log)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        app = g.compile()
        return capture(lambda: app.invoke({"log": []})), collect(
            lambda: app.stream({"log": []}, stream_mode="updates", subgraphs=True)
        )

    differential(scenario)


def test_subgraph_with_different_input_schema_is_rejected_or_mapped(differential):
    # subgraph-as-node with no shared keys: what LangGraph passes in/out
    def scenario(E):
        class Other(TypedDict):
            other: NotRequired[str]

        sub = E.StateGraph(Other)
        sub.add_node("o", lambda s: {"other": "set"})
        sub.add_edge(E.START, "o")
        g = E.StateGraph(Log)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        return capture(lambda: g.compile().invoke({"log": ["x"]}))

    differential(scenario)


def test_add_node_destinations_dict_labels(differential):
    def scenario(E):
        def router(s):
            return E.Command(goto="b")

        g = E.StateGraph(Log)
        g.add_node("router", router, destinations={"b": "to b", "c": "to c"})
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "router")
        app = g.compile()
        edges = sorted((e.source, e.target, e.conditional, e.data) for e in app.get_graph().edges)
        return app.invoke({"log": []}), edges

    differential(scenario)


def test_add_node_destinations_via_command_literal_hint(differential):
    def scenario(E):
        def router(s) -> E.Command[Literal["b", "c"]]:
            return E.Command(goto="c")

        g = E.StateGraph(Log)
        g.add_node("router", router)
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "router")
        app = g.compile()
        edges = sorted((e.source, e.target, e.conditional, e.data) for e in app.get_graph().edges)
        return app.invoke({"log": []}), edges

    differential(scenario)


def test_add_node_subgraph_attempt_ok(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        return attempt(lambda: g.add_node("sub", _sub_with_shared_keys(E)))

    differential(scenario, expect="ok")

"""add_node options, node signatures, edges, conditional edges, sequences, entry/finish points."""

import operator
import time
from typing import Annotated, Literal

from langchain_core.runnables import RunnableLambda
from typing_extensions import NotRequired, TypedDict

from _diff import attempt, capture, collect


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


# --- node signatures ---------------------------------------------------------------------


def test_node_with_config_parameter_sees_configurable_tags_and_metadata(differential):
    def scenario(E):
        seen = {}

        def node(state, config):
            md = config["metadata"]
            seen["configurable_user"] = config["configurable"].get("user_id")
            seen["tags"] = config.get("tags")
            seen["recursion_limit"] = config.get("recursion_limit")
            seen["metadata"] = {
                k: md.get(k)
                for k in ("langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path", "custom")
            }
            return {"log": ["n"]}

        g = E.StateGraph(S)
        g.add_node("n", node)
        g.add_edge(E.START, "n")
        out = g.compile().invoke(
            {"log": []},
            {"configurable": {"user_id": "u1"}, "tags": ["t1"], "metadata": {"custom": 1}, "recursion_limit": 7},
        )
        return out, seen

    differential(scenario)


def test_node_with_writer_parameter_streams_custom_events(differential):
    def scenario(E):
        def node(state, writer: E.StreamWriter):
            writer({"progress": 0.5})
            writer("done")
            return {"log": ["n"]}

        g = E.StateGraph(S)
        g.add_node("n", node)
        g.add_edge(E.START, "n")
        app = g.compile()
        return list(app.stream({"log": []}, stream_mode=["custom", "updates"])), app.invoke({"log": []})

    differential(scenario)


def test_node_writer_is_noop_when_custom_mode_not_requested(differential):
    def scenario(E):
        def node(state, writer: E.StreamWriter):
            writer({"ignored": True})
            return {"log": ["n"]}

        g = E.StateGraph(S)
        g.add_node("n", node)
        g.add_edge(E.START, "n")
        return list(g.compile().stream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_node_with_runtime_parameter_and_config_parameter_together(differential):
    def scenario(E):
        def node(state, config, runtime: E.Runtime):
            return {"log": [config["metadata"]["langgraph_node"], type(runtime).__name__]}

        g = E.StateGraph(S)
        g.add_node("n", node)
        g.add_edge(E.START, "n")
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["n", "Runtime"]})


def test_runnable_lambda_as_node(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("r", RunnableLambda(lambda s: {"log": ["runnable"]}))
        g.add_edge(E.START, "r")
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["runnable"]})


def test_add_node_infers_name_from_function(differential):
    def scenario(E):
        def fetch_data(s):
            return {"log": ["fetched"]}

        g = E.StateGraph(S)
        g.add_node(fetch_data)
        g.add_edge(E.START, "fetch_data")
        app = g.compile()
        return list(app.stream({"log": []}, stream_mode="updates")), sorted(app.get_graph().nodes)

    differential(scenario)


def test_callable_class_instance_as_node(differential):
    def scenario(E):
        class Tool:
            def __call__(self, s):
                return {"log": ["called"]}

        g = E.StateGraph(S)
        g.add_node("tool", Tool())
        g.add_edge(E.START, "tool")
        return g.compile().invoke({"log": []})

    differential(scenario)


# --- add_node options --------------------------------------------------------------------


def test_defer_node_runs_once_after_all_branches_finish(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("fan", _logger("fan"))
        g.add_node("short", _logger("short"))
        g.add_node("long1", _logger("long1"))
        g.add_node("long2", _logger("long2"))
        g.add_node("final", _logger("final"), defer=True)
        g.add_edge(E.START, "fan")
        g.add_edge("fan", "short")
        g.add_edge("fan", "long1")
        g.add_edge("long1", "long2")
        g.add_edge("short", "final")
        g.add_edge("long2", "final")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="values"))

    differential(scenario)


def test_without_defer_the_join_node_runs_twice(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("fan", _logger("fan"))
        g.add_node("short", _logger("short"))
        g.add_node("long1", _logger("long1"))
        g.add_node("long2", _logger("long2"))
        g.add_node("final", _logger("final"))
        g.add_edge(E.START, "fan")
        g.add_edge("fan", "short")
        g.add_edge("fan", "long1")
        g.add_edge("long1", "long2")
        g.add_edge("short", "final")
        g.add_edge("long2", "final")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_retry_policy_retries_until_success(differential):
    def scenario(E):
        attempts = []

        def flaky(s):
            attempts.append(len(attempts) + 1)
            if len(attempts) < 3:
                raise ConnectionError(f"fail #{len(attempts)}")
            return {"log": [f"ok after {len(attempts)}"]}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False, max_attempts=5))
        g.add_edge(E.START, "flaky")
        app = g.compile()
        out = app.invoke({"log": []})
        return out, attempts

    differential(scenario)


def test_retry_policy_gives_up_after_max_attempts_and_raises_last_error(differential):
    def scenario(E):
        attempts = []

        def always(s):
            attempts.append(1)
            raise ConnectionError(f"boom {len(attempts)}")

        g = E.StateGraph(S)
        g.add_node("always", always, retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False, max_attempts=3))
        g.add_edge(E.START, "always")
        return capture(lambda: g.compile().invoke({"log": []})), len(attempts)

    differential(scenario, expect=(("raises", "ConnectionError", "boom 3"), 3))


def test_default_retry_on_does_not_retry_value_error(differential):
    def scenario(E):
        attempts = []

        def n(s):
            attempts.append(1)
            raise ValueError("app bug")

        g = E.StateGraph(S)
        g.add_node("n", n, retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False))
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({"log": []})), len(attempts)

    differential(scenario, expect=(("raises", "ValueError", "app bug"), 1))


def test_retry_on_filters_exception_types(differential):
    def scenario(E):
        attempts = []

        def wrong_kind(s):
            attempts.append(1)
            raise TypeError("not retried")

        g = E.StateGraph(S)
        g.add_node(
            "n",
            wrong_kind,
            retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False, max_attempts=4, retry_on=ValueError),
        )
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({"log": []})), len(attempts)

    differential(scenario, expect=(("raises", "TypeError", "not retried"), 1))


def test_retry_on_callable_predicate(differential):
    def scenario(E):
        attempts = []

        def n(s):
            attempts.append(1)
            if len(attempts) < 2:
                raise KeyError("transient")
            return {"log": ["ok"]}

        g = E.StateGraph(S)
        g.add_node(
            "n",
            n,
            retry_policy=E.RetryPolicy(
                initial_interval=0.001, jitter=False, retry_on=lambda e: isinstance(e, KeyError)
            ),
        )
        g.add_edge(E.START, "n")
        return g.compile().invoke({"log": []}), len(attempts)

    differential(scenario)


def test_list_of_retry_policies_first_matching_applies(differential):
    def scenario(E):
        attempts = []

        def n(s):
            attempts.append(1)
            raise RuntimeError("rt")

        g = E.StateGraph(S)
        g.add_node(
            "n",
            n,
            retry_policy=[
                E.RetryPolicy(initial_interval=0.001, jitter=False, max_attempts=2, retry_on=ValueError),
                E.RetryPolicy(initial_interval=0.001, jitter=False, max_attempts=3, retry_on=RuntimeError),
            ],
        )
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({"log": []})), len(attempts)

    differential(scenario, expect=(("raises", "RuntimeError", "rt"), 3))


def test_retry_policy_default_values(differential):
    def scenario(E):
        return E.RetryPolicy()

    differential(scenario)


def test_retry_stream_shows_single_successful_update(differential):
    def scenario(E):
        attempts = []

        def flaky(s, writer: E.StreamWriter):
            attempts.append(1)
            writer(f"attempt {len(attempts)}")
            if len(attempts) < 2:
                raise ConnectionError("x")
            return {"log": ["ok"]}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False))
        g.add_edge(E.START, "flaky")
        return list(g.compile().stream({"log": []}, stream_mode=["updates", "custom", "tasks"]))

    differential(scenario)


def test_node_metadata_is_visible_in_config_and_graph(differential):
    def scenario(E):
        seen = []

        def n(s, config):
            seen.append(config["metadata"].get("owner"))
            return {"log": ["n"]}

        g = E.StateGraph(S)
        g.add_node("n", n, metadata={"owner": "team-a"})
        g.add_edge(E.START, "n")
        app = g.compile()
        app.invoke({"log": []})
        return seen, app.get_graph().nodes["n"].metadata

    differential(scenario)


# --- edges -------------------------------------------------------------------------------


def test_add_edge_with_list_of_starts_waits_for_all(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "b", "b2", "join"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge("b", "b2")
        g.add_edge(["a", "b2"], "join")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="values"))

    differential(scenario)


def test_two_plain_edges_into_one_node_trigger_it_in_each_step(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "b", "b2", "c"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge("b", "b2")
        g.add_edge("a", "c")
        g.add_edge("b2", "c")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_set_entry_point_and_set_finish_point(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.set_entry_point("a")
        g.add_edge("a", "b")
        g.set_finish_point("b")
        app = g.compile()
        return app.invoke({"log": []}), sorted((e.source, e.target) for e in app.get_graph().edges)

    differential(scenario)


def test_set_conditional_entry_point(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("left", _logger("left"))
        g.add_node("right", _logger("right"))
        g.set_conditional_entry_point(lambda s: "right" if s["log"] else "left")
        return g.compile().invoke({"log": []}), g.compile().invoke({"log": ["x"]})

    differential(scenario)


def test_add_sequence_of_functions_and_named_pairs(differential):
    def scenario(E):
        def one(s):
            return {"log": ["one"]}

        def two(s):
            return {"log": ["two"]}

        g = E.StateGraph(S)
        g.add_sequence([one, ("second", two), ("third", _logger("third"))])
        g.add_edge(E.START, "one")
        app = g.compile()
        return list(app.stream({"log": []}, stream_mode="updates")), sorted(
            (e.source, e.target) for e in app.get_graph().edges
        )

    differential(scenario)


def test_add_sequence_empty_raises(differential):
    def scenario(E):
        return attempt(lambda: E.StateGraph(S).add_sequence([]))

    differential(scenario)


# --- conditional edges -------------------------------------------------------------------


def _router_graph(E, path, path_map=None):
    g = E.StateGraph(S)
    g.add_node("decide", _logger("decide"))
    for n in ("x", "y", "z"):
        g.add_node(n, _logger(n))
    g.add_edge(E.START, "decide")
    if path_map is None:
        g.add_conditional_edges("decide", path)
    else:
        g.add_conditional_edges("decide", path, path_map)
    return g.compile()


def test_conditional_edges_with_dict_path_map(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: "go_y" if len(s["log"]) == 1 else "go_z", {"go_y": "y", "go_z": "z"})
        return app.invoke({"log": []}), app.invoke({"log": ["pre"]})

    differential(scenario)


def test_conditional_edges_with_list_path_map(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: "x", ["x", "y"])
        return app.invoke({"log": []})

    differential(scenario)


def test_conditional_edges_without_path_map(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: "z")
        return app.invoke({"log": []})

    differential(scenario)


def test_conditional_edges_returning_a_list_runs_nodes_in_parallel(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: ["x", "z"])
        return app.invoke({"log": []})

    differential(scenario)


def test_conditional_edges_returning_end(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: E.END)
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_conditional_edges_path_map_to_end(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: "stop", {"stop": E.END, "more": "x"})
        return app.invoke({"log": []})

    differential(scenario)


def test_conditional_edges_returning_unknown_key_of_path_map(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: "nope", {"go": "x"})
        return capture(lambda: app.invoke({"log": []}))

    differential(scenario, exc="class")


def test_conditional_edges_returning_unknown_node_without_map(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: "nowhere")
        return capture(lambda: app.invoke({"log": []}))

    differential(scenario)


def test_conditional_edges_returning_none_raises(differential):
    def scenario(E):
        app = _router_graph(E, lambda s: None)
        return capture(lambda: app.invoke({"log": []}))

    differential(scenario, exc="class")


def test_conditional_edge_path_with_config_parameter(differential):
    def scenario(E):
        def route(s, config):
            return config["configurable"]["target"]

        app = _router_graph(E, route)
        return app.invoke({"log": []}, {"configurable": {"target": "y"}})

    differential(scenario)


def test_conditional_edge_path_as_runnable(differential):
    def scenario(E):
        def route(s):
            return "x"

        app = _router_graph(E, RunnableLambda(route), ["x", "y"])
        return app.invoke({"log": []})

    differential(scenario)


def test_conditional_edge_literal_return_hint_used_for_graph(differential):
    def scenario(E):
        def route(s) -> Literal["x", "y"]:
            return "y"

        app = _router_graph(E, route)
        edges = sorted((e.source, e.target, e.conditional, e.data) for e in app.get_graph().edges)
        return app.invoke({"log": []}), edges

    differential(scenario)


def test_conditional_routing_loop_until_condition(differential):
    def scenario(E):
        class C(TypedDict):
            n: int
            trail: Annotated[list, operator.add]

        g = E.StateGraph(C)
        g.add_node("inc", lambda s: {"n": s["n"] + 1, "trail": [s["n"]]})
        g.add_edge(E.START, "inc")
        g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 5 else E.END)
        app = g.compile()
        return app.invoke({"n": 0, "trail": []}), list(app.stream({"n": 3, "trail": []}, stream_mode="updates"))

    differential(scenario)


def test_recursion_limit_raises_graph_recursion_error(differential):
    def scenario(E):
        class C(TypedDict):
            n: int

        g = E.StateGraph(C)
        g.add_node("spin", lambda s: {"n": s["n"] + 1})
        g.add_edge(E.START, "spin")
        g.add_conditional_edges("spin", lambda s: "spin")
        app = g.compile()
        return (
            capture(lambda: app.invoke({"n": 0}, {"recursion_limit": 4})),
            collect(lambda: app.stream({"n": 0}, {"recursion_limit": 3}, stream_mode="values")),
        )

    differential(scenario)


def test_recursion_limit_exactly_enough_steps_succeeds(differential):
    def scenario(E):
        app = None
        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        app = g.compile()
        return [capture(lambda lim=lim: app.invoke({"log": []}, {"recursion_limit": lim})) for lim in (2, 3, 4)]

    differential(scenario)


def test_graph_recursion_error_is_a_recursion_error(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "a")
        try:
            g.compile().invoke({"log": []}, {"recursion_limit": 2})
        except RecursionError as e:
            return type(e).__name__, isinstance(e, E.errors.GraphRecursionError)
        return "no error"

    differential(scenario, expect=("GraphRecursionError", True))


def test_conditional_edges_from_start_with_send_and_names_mixed(differential):
    def scenario(E):
        class M(TypedDict):
            log: Annotated[list, operator.add]
            item: NotRequired[str]

        g = E.StateGraph(M)
        g.add_node("work", lambda s: {"log": [f"work:{s.get('item')}"]})
        g.add_node("side", lambda s: {"log": ["side"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("work", {"item": "p"}), "side"])
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_multiple_conditional_edges_from_one_node(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "a")

        def to_b(s):
            return "b"

        def to_c(s):
            return "c"

        g.add_conditional_edges("a", to_b)
        g.add_conditional_edges("a", to_c)
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_two_conditional_edges_with_same_path_name_raise(differential):
    def scenario(E):
        def route(s):
            return "b"

        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route)
        return attempt(lambda: g.add_conditional_edges("a", route))

    differential(scenario)


def test_conditional_edges_and_plain_edge_from_same_node(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_conditional_edges("a", lambda s: "c")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_node_with_no_outgoing_edge_just_stops(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["a"]})


def test_branches_do_not_sleep_long(differential):
    # sanity: a tiny sleep in a node does not change output ordering of a linear graph
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", lambda s: time.sleep(0.005) or {"log": ["a"]})
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        return list(g.compile().stream({"log": []}, stream_mode=["updates", "values"]))

    differential(scenario)

"""Further program-level semantics: input coercion, node signatures, Command corner
cases, defer + map-reduce, retries inside parallel steps, errors inside subgraphs."""

import operator
from dataclasses import dataclass
from typing import Annotated, Any

import pydantic
from langchain_core.runnables import RunnableConfig
from typing_extensions import NotRequired, TypedDict

from _diff import attempt, capture, collect, steps_as_multisets


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


# --- input coercion ----------------------------------------------------------------------


def test_pydantic_model_instance_as_input(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            n: int
            tag: str = "t"

        g = E.StateGraph(St)
        g.add_node("inc", lambda s: {"n": s.n + 1})
        g.add_edge(E.START, "inc")
        return g.compile().invoke(St(n=4, tag="given"))

    differential(scenario)


def test_dataclass_instance_as_input(differential):
    def scenario(E):
        @dataclass
        class St:
            n: int
            tag: str = "t"

        g = E.StateGraph(St)
        g.add_node("inc", lambda s: {"n": s.n + 1})
        g.add_edge(E.START, "inc")
        return g.compile().invoke(St(n=4))

    differential(scenario)


def test_non_dict_input_to_typeddict_graph(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        app = g.compile()
        return [capture(lambda v=v: app.invoke(v)) for v in (["x"], "text", 5)]

    differential(scenario, exc="class")


def test_pydantic_state_node_update_with_wrong_type_is_validated_on_next_read(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            count: int = 0

        g = E.StateGraph(St)
        g.add_node("bad", lambda s: {"count": "not an int"})
        g.add_node("next", lambda s: {"count": s.count + 1})
        g.add_edge(E.START, "bad")
        g.add_edge("bad", "next")
        return capture(lambda: g.compile().invoke({"count": 1}))

    differential(scenario)


def test_pydantic_state_with_nested_model_field(differential):
    def scenario(E):
        class Inner(pydantic.BaseModel):
            x: int

        class St(pydantic.BaseModel):
            inner: Inner
            items: Annotated[list[Inner], operator.add] = []

        seen = []

        def node(s):
            seen.append((type(s.inner).__name__, s.inner.x))
            return {"items": [Inner(x=s.inner.x * 2)]}

        g = E.StateGraph(St)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return g.compile().invoke({"inner": {"x": 3}}), seen

    differential(scenario)


# --- node signatures ---------------------------------------------------------------------


def test_node_with_keyword_only_config(differential):
    def scenario(E):
        def n(state, *, config: RunnableConfig):
            return {"log": [config["metadata"]["langgraph_node"]]}

        g = E.StateGraph(S)
        g.add_node("n", n)
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_node_with_optional_config_default_none(differential):
    def scenario(E):
        def n(state, config=None):
            return {"log": [config is not None and "langgraph_node" in config.get("metadata", {})]}

        g = E.StateGraph(S)
        g.add_node("n", n)
        g.add_edge(E.START, "n")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_node_with_store_parameter_and_no_store(differential):
    def scenario(E):
        def n(state, store):
            return {"log": [repr(store)]}

        g = E.StateGraph(S)
        g.add_node("n", n)
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_node_with_writer_and_config_and_runtime_keyword_names(differential):
    def scenario(E):
        def n(state, config, writer, runtime):
            writer({"node": config["metadata"]["langgraph_node"]})
            return {"log": [type(runtime).__name__]}

        g = E.StateGraph(S)
        g.add_node("n", n)
        g.add_edge(E.START, "n")
        return list(g.compile().stream({"log": []}, stream_mode=["custom", "updates"]))

    differential(scenario)


def test_bound_method_as_node(differential):
    def scenario(E):
        class Agent:
            prefix = "agent"

            def act(self, s):
                return {"log": [self.prefix]}

        g = E.StateGraph(S)
        g.add_node(Agent().act)
        g.add_edge(E.START, "act")
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["agent"]})


def test_functools_partial_as_node_requires_name(differential):
    import functools

    def scenario(E):
        def base(s, suffix):
            return {"log": [suffix]}

        g = E.StateGraph(S)
        named = attempt(lambda: g.add_node("p", functools.partial(base, suffix="ok")))
        g.add_edge(E.START, "p")
        return named, g.compile().invoke({"log": []})

    differential(scenario)


# --- Command corner cases ----------------------------------------------------------------


def test_command_update_with_key_not_in_schema(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", lambda s: E.Command(update={"log": ["a"], "ghost": 1}))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_command_goto_only_shows_none_update(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", lambda s: E.Command(goto="b"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return list(g.compile().stream({"log": []}, stream_mode=["updates", "tasks"]))

    differential(scenario)


def test_command_as_graph_input_without_checkpointer(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        app = g.compile()
        return (
            capture(lambda: app.invoke(E.Command(goto="b"))),
            capture(lambda: app.invoke(E.Command(update={"log": ["u"]}))),
        )

    differential(scenario)


def test_command_goto_combined_with_conditional_edge(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("b", "c"):
            g.add_node(n, _logger(n))
        g.add_node("a", lambda s: E.Command(goto="b", update={"log": ["a"]}))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "c")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_command_goto_same_node_twice_runs_once(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", lambda s: E.Command(goto=["b", "b"]))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_command_parent_with_send_goto(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", lambda s: E.Command(graph=E.Command.PARENT, goto=[E.Send("w", {"log": ["sent"]})]))
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_node("w", lambda s: {"log": [f"w got {s['log']}"]})
        g.add_edge(E.START, "sub")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_command_parent_from_nested_subgraph_goes_one_level_up(differential):
    def scenario(E):
        leaf = E.StateGraph(S)
        leaf.add_node("jump", lambda s: E.Command(graph=E.Command.PARENT, goto="mid_after", update={"log": ["jump"]}))
        leaf.add_edge(E.START, "jump")
        mid = E.StateGraph(S)
        mid.add_node("leaf", leaf.compile())
        mid.add_node("mid_after", _logger("mid_after"))
        mid.add_edge(E.START, "leaf")
        top = E.StateGraph(S)
        top.add_node("mid", mid.compile())
        top.add_node("top_after", _logger("top_after"))
        top.add_edge(E.START, "mid")
        top.add_edge("mid", "top_after")
        return top.compile().invoke({"log": []})

    differential(scenario)


# --- defer + map-reduce, retries in parallel -------------------------------------------------


def test_deferred_aggregator_after_send_fan_out_of_uneven_depth(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            n: NotRequired[int]

        g = E.StateGraph(St)
        g.add_node("deep1", lambda s: {"log": ["deep1"]})
        g.add_node("deep2", lambda s: {"log": ["deep2"]})
        g.add_node("shallow", lambda s: {"log": [f"shallow{s['n']}"]})
        g.add_node("agg", lambda s: {"log": [f"agg saw {len(s['log'])}"]}, defer=True)
        g.add_conditional_edges(E.START, lambda s: [E.Send("shallow", {"n": i}) for i in range(2)] + ["deep1"])
        g.add_edge("deep1", "deep2")
        g.add_edge("deep2", "agg")
        g.add_edge("shallow", "agg")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="values"))

    differential(scenario)


def test_retry_in_one_branch_while_other_succeeds(differential):
    def scenario(E):
        attempts = []

        def flaky(s):
            attempts.append(1)
            if len(attempts) < 3:
                raise ConnectionError("flaky")
            return {"log": ["flaky"]}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False))
        g.add_node("steady", _logger("steady"))
        g.add_node("join", _logger("join"))
        g.add_edge(E.START, "flaky")
        g.add_edge(E.START, "steady")
        g.add_edge(["flaky", "steady"], "join")
        app = g.compile()
        chunks = list(app.stream({"log": []}, stream_mode=["values", "updates"]))
        return steps_as_multisets(chunks, lambda c: c[0] == "values"), len(attempts)

    differential(scenario)


def test_retry_policy_on_subgraph_node(differential):
    def scenario(E):
        attempts = []

        def inner(s):
            attempts.append(1)
            if len(attempts) < 2:
                raise ConnectionError("inner flaky")
            return {"log": ["inner ok"]}

        sub = E.StateGraph(S)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile(), retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False))
        g.add_edge(E.START, "sub")
        return g.compile().invoke({"log": []}), len(attempts)

    differential(scenario)


def test_error_inside_subgraph_in_tasks_stream_with_subgraphs(differential):
    def scenario(E):
        def bad(s):
            raise ValueError("deep")

        sub = E.StateGraph(S)
        sub.add_node("bad", bad)
        sub.add_edge(E.START, "bad")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        return collect(lambda: g.compile().stream({"log": []}, stream_mode="tasks", subgraphs=True))

    differential(scenario)


def test_long_loop_with_high_recursion_limit(differential):
    def scenario(E):
        class C(TypedDict):
            n: int

        g = E.StateGraph(C)
        g.add_node("inc", lambda s: {"n": s["n"] + 1})
        g.add_edge(E.START, "inc")
        g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 150 else E.END)
        return g.compile().invoke({"n": 0}, {"recursion_limit": 1000})

    differential(scenario, expect={"n": 150})


def test_duplicate_static_edge_is_idempotent(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "b")
        app = g.compile()
        return app.invoke({"log": []}), sorted((e.source, e.target) for e in app.get_graph().edges)

    differential(scenario)


def test_topic_channel_collects_send_results(differential):
    def scenario(E):
        class St(TypedDict):
            results: Annotated[list, E.channels.Topic(Any, accumulate=True)]

        g = E.StateGraph(St)
        g.add_node("w", lambda s: {"results": s["i"] * 10})
        g.add_conditional_edges(E.START, lambda s: [E.Send("w", {"i": i}) for i in (1, 2, 3)])
        return g.compile().invoke({"results": []})

    differential(scenario)


def test_state_keys_starting_with_underscore_and_unicode(differential):
    def scenario(E):
        class St(TypedDict):
            _private: NotRequired[str]
            名前: str

        g = E.StateGraph(St)
        g.add_node("n", lambda s: {"_private": "p", "名前": s["名前"] + "!"})
        g.add_edge(E.START, "n")
        return g.compile().invoke({"名前": "太郎"})

    differential(scenario)

"""More program-level behaviour: managed values, Runnable surface of a compiled graph,
pydantic/dataclass updates, call-time options that work without a checkpointer."""

import operator
from dataclasses import dataclass, field
from typing import Annotated

import pydantic
from typing_extensions import NotRequired, TypedDict

from _diff import acapture, attempt, capture, collect


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def _chain(E, *names, **compile_kw):
    g = E.StateGraph(S)
    prev = E.START
    for n in names:
        g.add_node(n, _logger(n))
        g.add_edge(prev, n)
        prev = n
    return g.compile(**compile_kw)


# --- managed values ----------------------------------------------------------------------


def test_remaining_steps_managed_value(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            remaining: E.RemainingSteps

        def step(s):
            return {"log": [s["remaining"]]}

        g = E.StateGraph(St)
        g.add_node("step", step)
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", lambda s: E.END if s["remaining"] <= 2 else "step")
        app = g.compile()
        return app.invoke({"log": []}, {"recursion_limit": 6}), list(
            app.stream({"log": []}, {"recursion_limit": 4}, stream_mode="values")
        )

    differential(scenario)


def test_is_last_step_managed_value(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            last: E.IsLastStep

        g = E.StateGraph(St)
        g.add_node("step", lambda s: {"log": [s["last"]]})
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", lambda s: E.END if s["last"] else "step")
        return g.compile().invoke({"log": []}, {"recursion_limit": 4})

    differential(scenario)


# --- Runnable surface ------------------------------------------------------------------


def test_default_recursion_limit_is_far_above_25(differential):
    # LangGraph 1.2's default is 10007 (LANGGRAPH_DEFAULT_RECURSION_LIMIT), not the old 25
    def scenario(E):
        class C(TypedDict):
            n: int

        g = E.StateGraph(C)
        g.add_node("inc", lambda s: {"n": s["n"] + 1})
        g.add_edge(E.START, "inc")
        g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 100 else E.END)
        return collect(lambda: g.compile().stream({"n": 0}, stream_mode="values"))[-2:]

    differential(scenario)


def test_with_config_recursion_limit(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "a")
        app = g.compile().with_config(recursion_limit=3)
        return capture(lambda: app.invoke({"log": []}))

    differential(scenario)


def _limit_probe(E):
    """A one-step graph whose node reports the limit it runs under (RemainingSteps on its
    first step is the limit minus one)."""

    class St(TypedDict):
        log: Annotated[list, operator.add]
        remaining: E.RemainingSteps

    def step(s):
        return {"log": [s["remaining"]]}

    g = E.StateGraph(St)
    g.add_node("step", step)
    g.add_edge(E.START, "step")
    return g.compile()


def test_recursion_limit_none_means_the_default_limit(differential):
    # LangGraph's ensure_config drops None values: the default (10007) applies
    async def scenario(E):
        app = _limit_probe(E)
        none = {"recursion_limit": None}
        return (
            app.invoke({"log": []}),
            app.invoke({"log": []}, none),
            collect(lambda: app.stream({"log": []}, none, stream_mode="updates")),
            await app.ainvoke({"log": []}, none),
            app.with_config(recursion_limit=None).invoke({"log": []}),
            app.with_config(none).invoke({"log": []}, none),
            app.invoke({"log": []}, {"recursion_limit": 50}),  # the probe does see a limit
        )

    obs = differential(scenario)
    assert obs[1] == {"log": [10006]} and obs[-1] == {"log": [49]}  # not a TypeError, not "no limit"


def test_recursion_limit_none_at_call_keeps_the_with_config_limit(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "a")
        app = g.compile().with_config(recursion_limit=3)
        return capture(lambda: app.invoke({"log": []}, {"recursion_limit": None})), \
            _limit_probe(E).with_config(recursion_limit=7).invoke({"log": []}, {"recursion_limit": None})

    obs = differential(scenario)
    assert obs[0][1] == "GraphRecursionError" and obs[1] == {"log": [6]}


def test_none_config_values_are_not_given(differential):
    def scenario(E):
        app = _limit_probe(E)
        return app.invoke({"log": []}, {"tags": None, "metadata": None, "configurable": None,
                                        "callbacks": None, "run_name": None, "max_concurrency": None})

    differential(scenario)


def test_batch_and_abatch(differential):
    async def scenario(E):
        app = _chain(E, "a", "b")
        return app.batch([{"log": [1]}, {"log": [2]}]), await app.abatch([{"log": [3]}])

    differential(scenario)


def test_input_and_output_json_schema(differential):
    def scenario(E):
        class In(TypedDict):
            q: str

        class Out(TypedDict):
            a: str

        class St(In, Out):
            n: int

        g = E.StateGraph(St, input_schema=In, output_schema=Out)
        g.add_node("x", lambda s: {"a": s["q"]})
        g.add_edge(E.START, "x")
        app = g.compile()
        return app.get_input_jsonschema(), app.get_output_jsonschema()

    differential(scenario)


def test_state_json_schema_of_typeddict_with_reducers(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list[str], operator.add]
            name: str
            opt: NotRequired[int]

        g = E.StateGraph(St)
        g.add_node("x", lambda s: {})
        g.add_edge(E.START, "x")
        app = g.compile()
        return app.get_input_jsonschema(), app.get_output_jsonschema()

    differential(scenario)


def test_compiled_graph_default_stream_mode_and_name(differential):
    def scenario(E):
        app = _chain(E, "a")
        return app.stream_mode, app.get_name(), _chain(E, "a", name="custom").get_name()

    differential(scenario)


def test_compiled_graph_invoked_as_runnable_in_a_chain(differential):
    from langchain_core.runnables import RunnableLambda

    def scenario(E):
        chain = RunnableLambda(lambda x: {"log": [x]}) | _chain(E, "a") | RunnableLambda(lambda out: out["log"])
        return chain.invoke("start")

    differential(scenario, expect=["start", "a"])


# --- compile-time interrupt_* without a checkpointer ----------------------------------------


def test_interrupt_before_without_checkpointer(differential):
    def scenario(E):
        app = _chain(E, "a", "b", interrupt_before=["b"])
        return capture(lambda: app.invoke({"log": []})), collect(
            lambda: app.stream({"log": []}, stream_mode=["updates", "values"])
        )

    differential(scenario)


def test_interrupt_after_without_checkpointer(differential):
    def scenario(E):
        app = _chain(E, "a", "b")
        return collect(lambda: app.stream({"log": []}, stream_mode="updates", interrupt_after=["a"]))

    differential(scenario)


# --- updates in user classes ---------------------------------------------------------------


def test_pydantic_node_returning_model_instance(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            a: int = 0
            b: str = "x"

        g = E.StateGraph(St)
        g.add_node("n", lambda s: St(a=s.a + 1))
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({"a": 1, "b": "keep?"}))

    differential(scenario)


def test_dataclass_node_returning_dataclass_instance(differential):
    def scenario(E):
        @dataclass
        class St:
            a: int = 0
            log: Annotated[list, operator.add] = field(default_factory=list)

        g = E.StateGraph(St)
        g.add_node("n", lambda s: St(a=s.a + 1, log=["n"]))
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({"a": 1, "log": ["in"]}))

    differential(scenario)


def test_pydantic_state_stream_values_v1_and_v2(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            n: int = 0

        g = E.StateGraph(St)
        g.add_node("inc", lambda s: {"n": s.n + 1})
        g.add_edge(E.START, "inc")
        app = g.compile()
        return (
            list(app.stream({"n": 1}, stream_mode=["values", "updates"])),
            list(app.stream({"n": 1}, stream_mode=["values", "updates"], version="v2")),
        )

    differential(scenario)


def test_dataclass_state_stream_values_v2(differential):
    def scenario(E):
        @dataclass
        class St:
            n: int = 0

        g = E.StateGraph(St)
        g.add_node("inc", lambda s: {"n": s.n + 1})
        g.add_edge(E.START, "inc")
        app = g.compile()
        return list(app.stream({"n": 1}, stream_mode="values", version="v2")), app.invoke({"n": 5}, version="v2")

    differential(scenario)


def test_command_update_with_pydantic_state(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            n: int = 0
            path: list[str] = []

        g = E.StateGraph(St)
        g.add_node("a", lambda s: E.Command(update={"n": s.n + 10, "path": ["a"]}, goto="b"))
        g.add_node("b", lambda s: {"path": s.path + ["b"]})
        g.add_edge(E.START, "a")
        return g.compile().invoke({"n": 1})

    differential(scenario)


def test_send_with_pydantic_arg_to_node_with_input_schema(differential):
    def scenario(E):
        class Item(pydantic.BaseModel):
            name: str

        class St(TypedDict):
            out: Annotated[list, operator.add]

        def work(item: Item):
            return {"out": [f"{type(item).__name__}:{item.name}"]}

        g = E.StateGraph(St)
        g.add_node("work", work, input_schema=Item)
        g.add_conditional_edges(E.START, lambda s: [E.Send("work", Item(name=n)) for n in ("p", "q")])
        return g.compile().invoke({"out": []})

    differential(scenario)


# --- runtime -----------------------------------------------------------------------------


def test_runtime_fields_without_checkpointer_or_store(differential):
    def scenario(E):
        seen = []

        def n(s, runtime: E.Runtime):
            seen.append((runtime.context, runtime.store, runtime.previous))
            return {"log": ["n"]}

        g = E.StateGraph(S)
        g.add_node("n", n)
        g.add_edge(E.START, "n")
        g.compile().invoke({"log": []})
        return seen

    differential(scenario, expect=[(None, None, None)])


def test_get_runtime_inside_node(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            who: str

        seen = []

        def n(s):
            rt = E.get_runtime(Ctx)
            seen.append(rt.context)
            return {"log": ["n"]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("n", n)
        g.add_edge(E.START, "n")
        g.compile().invoke({"log": []}, context=Ctx(who="me"))
        return seen

    differential(scenario)


def test_context_passed_to_subgraph_nodes(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            tag: str

        def inner(s, runtime: E.Runtime[Ctx]):
            return {"log": [f"inner:{runtime.context.tag}"]}

        sub = E.StateGraph(S, context_schema=Ctx)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        return g.compile().invoke({"log": []}, context=Ctx(tag="T"))

    differential(scenario, expect={"log": ["inner:T"]})


def test_context_in_conditional_edge_via_runtime(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            target: str

        def route(s, runtime: E.Runtime[Ctx]):
            return runtime.context.target

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("a", _logger("a"))
        g.add_node("x", _logger("x"))
        g.add_node("y", _logger("y"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route, ["x", "y"])
        return g.compile().invoke({"log": []}, context=Ctx(target="y"))

    differential(scenario)


def test_async_context_and_runtime(differential):
    async def scenario(E):
        @dataclass
        class Ctx:
            n: int

        async def node(s, runtime: E.Runtime[Ctx]):
            return {"log": [runtime.context.n * 2]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return await acapture(lambda: g.compile().ainvoke({"log": []}, context=Ctx(n=21)))

    differential(scenario, expect={"log": [42]})


# --- misc graph shapes ---------------------------------------------------------------------


def test_edge_from_start_to_end_only(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_edge(E.START, E.END)
        return attempt(g.compile), capture(lambda: g.compile().invoke({"log": ["x"]}))

    differential(scenario)


def test_conditional_path_map_with_bool_keys(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("check", "yes", "no"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "check")
        g.add_conditional_edges("check", lambda s: len(s["log"]) > 1, {True: "yes", False: "no"})
        app = g.compile()
        return app.invoke({"log": []}), app.invoke({"log": ["pre"]})

    differential(scenario)


def test_conditional_returning_list_including_end(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "x"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: ["x", E.END])
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_recursion_limit_counts_subgraph_steps_separately(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        for n in ("s1", "s2", "s3"):
            sub.add_node(n, _logger(n))
        sub.add_edge(E.START, "s1")
        sub.add_edge("s1", "s2")
        sub.add_edge("s2", "s3")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        app = g.compile()
        return [capture(lambda lim=lim: app.invoke({"log": []}, {"recursion_limit": lim})) for lim in (1, 2, 3, 4)]

    differential(scenario)


def test_debug_mode_with_subgraphs(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", _logger("inner"))
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        return list(g.compile().stream({"log": []}, stream_mode=["debug", "tasks"], subgraphs=True))

    differential(scenario)


def test_values_emitted_even_when_node_writes_nothing(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("quiet", lambda s: None)
        g.add_node("loud", _logger("loud"))
        g.add_edge(E.START, "quiet")
        g.add_edge("quiet", "loud")
        return list(g.compile().stream({"log": []}, stream_mode=["values", "updates"]))

    differential(scenario)


def test_subgraph_with_output_schema_as_node(differential):
    def scenario(E):
        class Out(TypedDict):
            log: Annotated[list, operator.add]

        class Inner(TypedDict):
            log: Annotated[list, operator.add]
            scratch: NotRequired[str]

        sub = E.StateGraph(Inner, output_schema=Out)
        sub.add_node("w", lambda s: {"log": ["w"], "scratch": "tmp"})
        sub.add_edge(E.START, "w")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates", subgraphs=True))

    differential(scenario)


def test_interrupt_and_graph_output_objects(differential):
    def scenario(E):
        i = E.Interrupt(value={"q": 1}, id="abc")
        o = E.GraphOutput(value={"x": 1}, interrupts=(i,))
        return i.value, i.id, o.value, o.interrupts, i == E.Interrupt(value={"q": 1}, id="abc")

    differential(scenario)

"""Graph-construction and compile-time validation: error class AND message must match.

LangGraph's messages are the contract here (programs and docs match on them); if lgnb
improves a message, switch that one test to ``exc="class"`` and say why.
"""

import operator
from typing import Annotated

import langgraph._internal._constants as _lg_constants
import langgraph.constants as _lg_public_constants
import pytest
from typing_extensions import TypedDict

from _diff import attempt, exc_obs


class S(TypedDict):
    log: Annotated[list, operator.add]
    x: int


def _noop(s):
    return {}


def _builder(E, *nodes):
    g = E.StateGraph(S)
    for n in nodes:
        g.add_node(n, _noop)
    return g


def test_compile_edge_from_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        return attempt(lambda: (g.add_edge("ghost", "a"), g.compile()))

    differential(scenario)


def test_compile_edge_to_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        return attempt(lambda: (g.add_edge("a", "ghost"), g.compile()))

    differential(scenario)


def test_compile_without_entry_point(differential):
    def scenario(E):
        g = _builder(E, "a")
        return attempt(g.compile)

    differential(scenario)


def test_compile_empty_graph(differential):
    def scenario(E):
        return attempt(E.StateGraph(S).compile)

    differential(scenario)


def test_edge_from_end_is_rejected(differential):
    def scenario(E):
        g = _builder(E, "a")
        return attempt(lambda: g.add_edge(E.END, "a"))

    differential(scenario)


def test_edge_to_start_is_rejected(differential):
    def scenario(E):
        g = _builder(E, "a")
        return attempt(lambda: g.add_edge("a", E.START))

    differential(scenario)


def test_join_edge_with_end_in_starts_is_rejected(differential):
    def scenario(E):
        g = _builder(E, "a", "b")
        return attempt(lambda: g.add_edge(["a", E.END], "b"))

    differential(scenario)


def test_join_edge_from_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a", "b")
        g.add_edge(E.START, "a")
        g.add_edge(["a", "ghost"], "b")
        return attempt(g.compile)

    differential(scenario)


def test_add_node_twice(differential):
    def scenario(E):
        g = _builder(E, "a")
        return attempt(lambda: g.add_node("a", _noop))

    differential(scenario)


def test_node_named_start_or_end_is_reserved(differential):
    def scenario(E):
        return [attempt(lambda n=n: _builder(E).add_node(n, _noop)) for n in (E.START, E.END)]

    differential(scenario)


def test_node_names_with_reserved_characters(differential):
    def scenario(E):
        return [attempt(lambda n=n: _builder(E).add_node(n, _noop)) for n in ("a:b", "a|b", "ok-name", "with space")]

    differential(scenario)


def test_node_named_like_a_state_key(differential):
    def scenario(E):
        return attempt(lambda: _builder(E).add_node("x", _noop))

    differential(scenario)


def test_interrupt_before_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        return attempt(lambda: g.compile(interrupt_before=["ghost"]))

    differential(scenario)


def test_interrupt_after_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        return attempt(lambda: g.compile(interrupt_after=["ghost"]))

    differential(scenario)


def test_conditional_path_map_to_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "go", {"go": "ghost"})
        return attempt(g.compile)

    differential(scenario)


def test_conditional_edges_from_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        g.add_conditional_edges("ghost", lambda s: "a")
        return attempt(g.compile)

    differential(scenario)


def test_set_entry_point_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.set_entry_point("ghost")
        return attempt(g.compile)

    differential(scenario)


def test_set_finish_point_unknown_node(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.set_entry_point("a")
        g.set_finish_point("ghost")
        return attempt(g.compile)

    differential(scenario)


def test_add_node_after_compile_does_not_change_compiled_graph(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        app = g.compile()
        late = attempt(lambda: g.add_node("late", _noop))
        return late, sorted(app.get_graph().nodes)

    differential(scenario)


def test_unreachable_node_compiles(differential):
    def scenario(E):
        g = _builder(E, "a", "island")
        g.add_edge(E.START, "a")
        app = g.compile()
        return app.invoke({"log": [], "x": 0}), sorted(app.get_graph().nodes)

    differential(scenario)


def test_state_graph_without_schema(differential):
    def scenario(E):
        return attempt(lambda: E.StateGraph())

    differential(scenario, exc="class")


def test_add_node_with_non_callable(differential):
    def scenario(E):
        return attempt(lambda: _builder(E).add_node("a", 42))

    differential(scenario, exc="class")


def test_add_node_without_name_and_without_function_name(differential):
    def scenario(E):
        return attempt(lambda: _builder(E).add_node(42))

    differential(scenario, exc="class")


def test_compiled_graph_name_and_builder_attributes(differential):
    def scenario(E):
        g = _builder(E, "a")
        g.add_edge(E.START, "a")
        app = g.compile(name="my_graph")
        return app.name, sorted(app.nodes), sorted(app.channels) if hasattr(app, "channels") else None

    differential(scenario)


# ---------------------------------------------------------------------------------------
# reserved names: every name LangGraph gives a meaning to, as a node, a state key and a
# managed value. LangGraph's own constants are the list (so a name it adds is tried too);
# names it does NOT reserve are in the list on purpose: both engines must accept them.
# ---------------------------------------------------------------------------------------

_NAMES = sorted(
    {v for mod in (_lg_constants, _lg_public_constants) for k, v in vars(mod).items()
     if isinstance(v, str) and not k.startswith("__") and v != _lg_constants.NULL_TASK_ID}
    | set(_lg_constants.RESERVED)
    | {"branch:to:a", "__root__", "__error_handler__a", "messages"}
)


def test_lgnb_reserves_exactly_the_names_langgraph_reserves():
    from lgnb._internal.constants import RESERVED

    assert set(RESERVED) == set(_lg_constants.RESERVED)
    assert len(RESERVED) == 27  # LangGraph 1.2.24's set


def _run(E, build):
    """Build (add_node / schema) → compile → invoke, reporting the first stage that raises."""
    for stage in ("build", "compile", "invoke"):
        try:
            result = build(stage)
        except Exception as e:  # the observable: which stage, which class, which message
            return stage, exc_obs(e)
        if stage == "invoke":
            return stage, result


@pytest.mark.parametrize("name", _NAMES)
def test_reserved_name_as_node(differential, name):
    def scenario(E):
        g = E.StateGraph(S)
        app = None

        def build(stage):
            nonlocal app
            if stage == "build":
                g.add_node(name, lambda s: {"x": 1})
                g.add_edge(E.START, name)
            elif stage == "compile":
                app = g.compile()
            else:
                return app.invoke({"log": [], "x": 0})

        return _run(E, build)

    obs = differential(scenario, exc="extends")  # lgnb adds a line saying to rename it
    refused = name in _lg_constants.RESERVED or name in ("__start__", "__end__") or ":" in name or "|" in name
    assert (obs[0] != "invoke") == refused, obs  # the scenario really tells the two apart


def _keyed_state(E, name, managed):
    # the functional TypedDict form takes any string as a key ("|", "langsmith:hidden", ...)
    return TypedDict("KeyedState", {"x": int, name: E.RemainingSteps if managed else int})


@pytest.mark.parametrize("managed", [False, True], ids=["channel", "managed"])
@pytest.mark.parametrize("name", _NAMES)
def test_reserved_name_as_state_key(differential, name, managed):
    def scenario(E):
        app = None
        g = None

        def build(stage):
            nonlocal app, g
            if stage == "build":
                g = E.StateGraph(_keyed_state(E, name, managed))
                g.add_node("a", lambda s: {"x": 1})
                g.add_edge(E.START, "a")
            elif stage == "compile":
                app = g.compile()
            else:
                return app.invoke({"x": 0})

        return _run(E, build)

    obs = differential(scenario, exc="extends")
    refused = name in _lg_constants.RESERVED or name == _lg_constants.TASKS
    assert (obs[0] == "compile") == refused and obs[0] != "build", obs


def test_node_named_interrupt_is_refused_so_no_finished_run_looks_interrupted(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("__interrupt__", lambda s: {"x": 1})
        g.add_edge(E.START, "__interrupt__")
        return attempt(lambda: g.compile(checkpointer=E.InMemorySaver()))

    obs = differential(scenario, exc="extends")
    assert obs[0] == "raises"


def test_functional_entrypoint_named_like_a_reserved_key(differential):
    def scenario(E):
        def configurable(x):
            return x

        return attempt(lambda: E.func.entrypoint()(configurable).invoke(1))

    obs = differential(scenario, exc="extends")
    assert obs[0] == "raises"


def test_state_key_pregel_tasks_is_the_send_queue(differential):
    def scenario(E):
        g = E.StateGraph(_keyed_state(E, "__pregel_tasks", False))
        g.add_node("a", _noop)
        g.add_edge(E.START, "a")
        return attempt(g.compile)

    obs = differential(scenario, exc="extends")
    assert obs == ("raises", "ValueError", "Channel '__pregel_tasks' is reserved and cannot be used in the graph.")

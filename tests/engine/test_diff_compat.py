"""Compatibility surface of older LangGraph programs: deprecated keyword arguments still work
(and warn the same way), warnings on misuse, debug printing, call-time options that are
accepted without a checkpointer."""

import contextlib
import io
import logging
import operator
import warnings
from dataclasses import dataclass
from typing import Annotated

from typing_extensions import TypedDict

from _diff import attempt, capture


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(("log", record.levelname, record.getMessage()))


def _warned(fn):
    """Run fn; return (result-or-exception, warnings and WARNING+ log records it produced).

    Warnings as (category name, message); log records as ("log", level, message) -- the
    logger name is engine-specific and not compared.
    """
    handler = _Records()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            res = capture(fn)
    finally:
        root.removeHandler(handler)
    return res, [(w.category.__name__, str(w.message)) for w in ws
                 if not issubclass(w.category, (ResourceWarning,))] + handler.records


def test_deprecated_config_schema_kwarg_still_sets_context(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            who: str

        def node(s, runtime: E.Runtime[Ctx]):
            return {"log": [runtime.context.who]}

        def build():
            g = E.StateGraph(S, config_schema=Ctx)
            g.add_node("node", node)
            g.add_edge(E.START, "node")
            return g.compile().invoke({"log": []}, context=Ctx(who="old-style"))

        return _warned(build)

    differential(scenario)


def test_deprecated_input_output_kwargs_of_state_graph(differential):
    def scenario(E):
        class In(TypedDict):
            q: str

        class Out(TypedDict):
            a: str

        class St(In, Out):
            pass

        def build():
            g = E.StateGraph(St, input=In, output=Out)
            g.add_node("x", lambda s: {"a": s["q"] + "!"})
            g.add_edge(E.START, "x")
            return g.compile().invoke({"q": "hi", "a": "ignored"})

        return _warned(build)

    differential(scenario)


def test_deprecated_retry_kwarg_of_add_node(differential):
    def scenario(E):
        attempts = []

        def flaky(s):
            attempts.append(1)
            if len(attempts) < 2:
                raise ConnectionError("x")
            return {"log": ["ok"]}

        def build():
            g = E.StateGraph(S)
            g.add_node("flaky", flaky, retry=E.RetryPolicy(initial_interval=0.001, jitter=False))
            g.add_edge(E.START, "flaky")
            return g.compile().invoke({"log": []})

        return _warned(build), len(attempts)

    differential(scenario)


def test_warning_when_adding_node_or_edge_after_compile(differential):
    # LangGraph logs these (logger.warning), it does not raise a Python warning
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        g.compile()
        return (
            _warned(lambda: attempt(lambda: g.add_node("late", _logger("late")))),
            _warned(lambda: attempt(lambda: g.add_edge("a", "late"))),
            _warned(lambda: attempt(lambda: g.add_conditional_edges("late", lambda s: "a"))),
        )

    differential(scenario)


def test_warning_for_invalid_state_schema_instance(differential):
    def scenario(E):
        return _warned(lambda: attempt(lambda: E.StateGraph({"foo": "bar"})))

    differential(scenario, exc="class")


def test_no_warnings_on_ordinary_graph(differential):
    def scenario(E):
        def run():
            g = E.StateGraph(S)
            g.add_node("a", _logger("a"))
            g.add_edge(E.START, "a")
            app = g.compile()
            app.invoke({"log": []})
            list(app.stream({"log": []}, stream_mode=["values", "updates", "custom", "tasks", "debug"]))
            return "ran"

        return _warned(run)

    differential(scenario, expect=("ran", []))


def test_compile_debug_true_prints_values_and_updates(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            out = g.compile(debug=True).invoke({"log": []})
        return out, buf.getvalue()

    differential(scenario)


def test_stream_print_mode(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            chunks = capture(lambda: list(g.compile().stream({"log": []}, stream_mode="values", print_mode="updates")))
        return chunks, buf.getvalue()

    differential(scenario)


def test_durability_argument_accepted_without_checkpointer(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        app = g.compile()
        # ("sync" without a checkpointer trips an AttributeError inside LangGraph 1.2.24 itself:
        # a reference bug, not part of the contract, so it is left out)
        return [_warned(lambda d=d: app.invoke({"log": []}, durability=d)) for d in ("async", "exit")]

    differential(scenario)


def test_unknown_stream_mode_is_a_clear_error_in_lgnb_where_langgraph_yields_nothing():
    """Deliberate difference: LangGraph 1.2 silently streams nothing for a misspelt mode
    (`stream_mode="update"`); lgnb names the bad mode and the valid ones."""
    import pytest

    from lgnb.graph import START, StateGraph

    g = StateGraph(S)
    g.add_node("a", _logger("a"))
    g.add_edge(START, "a")
    with pytest.raises(ValueError, match=r"Unknown stream_mode \['nonsense'\].*'updates'"):
        list(g.compile().stream({"log": []}, stream_mode="nonsense"))

    import langgraph.graph as lg

    ref = lg.StateGraph(S)
    ref.add_node("a", _logger("a"))
    ref.add_edge(lg.START, "a")
    assert list(ref.compile().stream({"log": []}, stream_mode="nonsense")) == []


def test_unknown_version_value_behaves_like_v1(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        return capture(lambda: list(g.compile().stream({"log": []}, version="v9")))

    differential(scenario)


def test_node_interrupt_deprecated_error_without_checkpointer(differential):
    def scenario(E):
        def n(s):
            raise E.errors.NodeInterrupt("legacy stop")

        g = E.StateGraph(S)
        g.add_node("n", n)
        g.add_edge(E.START, "n")
        return _warned(lambda: g.compile().invoke({"log": []}))

    differential(scenario)

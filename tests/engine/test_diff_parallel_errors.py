"""Parallel branches (BSP super-steps) and error propagation.

Ordering note: LangGraph runs the tasks of one super-step concurrently (sync nodes in a
thread pool), and `updates`/`tasks` results are emitted in *completion* order, so within a
step only the multiset of those events is deterministic: those scenarios group events
between `values` barriers with `steps_as_multisets`.  `values` snapshots, reducer order
(writes applied sorted by task path) and task *start* order are deterministic and are
compared exactly.
"""

import operator
import threading
from typing import Annotated

from typing_extensions import NotRequired, TypedDict

from _diff import acollect, capture, collect, steps_as_multisets


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def _fan(E, branches=("b", "c"), join="d"):
    g = E.StateGraph(S)
    g.add_node("a", _logger("a"))
    for b in branches:
        g.add_node(b, _logger(b))
        g.add_edge("a", b)
    g.add_node(join, _logger(join))
    g.add_edge(list(branches), join)
    g.add_edge(E.START, "a")
    return g.compile()


def _is_values(c):
    return isinstance(c, tuple) and c[0] == "values"


def test_fan_out_fan_in_final_state_and_values_are_deterministic(differential):
    def scenario(E):
        app = _fan(E, branches=("c", "b", "e"))
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="values"))

    differential(scenario, expect=({"log": ["a", "b", "c", "e", "d"]}, [
        {"log": []}, {"log": ["a"]}, {"log": ["a", "b", "c", "e"]}, {"log": ["a", "b", "c", "e", "d"]}]))


def test_fan_out_updates_per_step_as_multisets(differential):
    def scenario(E):
        app = _fan(E, branches=("c", "b", "e"))
        chunks = list(app.stream({"log": []}, stream_mode=["values", "updates"]))
        return steps_as_multisets(chunks, _is_values)

    differential(scenario)


def test_fan_out_task_starts_are_ordered_results_per_step_multisets(differential):
    def scenario(E):
        app = _fan(E, branches=("c", "b"))
        chunks = list(app.stream({"log": []}, stream_mode=["values", "tasks"]))
        starts = [c for c in chunks if c[0] == "tasks" and "input" in c[1]]
        grouped = steps_as_multisets(
            [c for c in chunks if not (c[0] == "tasks" and "input" in c[1])], _is_values
        )
        return starts, grouped

    differential(scenario)


def test_parallel_nodes_really_run_in_the_same_super_step(differential):
    # b and c both read the state as of the end of step 1: neither sees the other's write
    def scenario(E):
        seen = {}

        def mk(name):
            def f(s):
                seen[name] = list(s["log"])
                return {"log": [name]}

            return f

        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", mk("b"))
        g.add_node("c", mk("c"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        g.compile().invoke({"log": []})
        return dict(sorted(seen.items()))

    differential(scenario, expect={"b": ["a"], "c": ["a"]})


def test_parallel_sync_nodes_run_concurrently(differential):
    # two nodes that rendezvous on a barrier can only finish if run concurrently
    def scenario(E):
        barrier = threading.Barrier(2, timeout=2)

        def mk(name):
            def f(s):
                barrier.wait()
                return {"log": [name]}

            return f

        g = E.StateGraph(S)
        g.add_node("x", mk("x"))
        g.add_node("y", mk("y"))
        g.add_edge(E.START, "x")
        g.add_edge(E.START, "y")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario, expect={"log": ["x", "y"]})


def test_parallel_async_nodes_run_concurrently(differential):
    import asyncio

    async def scenario(E):
        ev = {"x": asyncio.Event(), "y": asyncio.Event()}

        def mk(me, other):
            async def f(s):
                ev[me].set()
                await asyncio.wait_for(ev[other].wait(), 2)
                return {"log": [me]}

            return f

        g = E.StateGraph(S)
        g.add_node("x", mk("x", "y"))
        g.add_node("y", mk("y", "x"))
        g.add_edge(E.START, "x")
        g.add_edge(E.START, "y")
        return await g.compile().ainvoke({"log": []})

    differential(scenario, expect={"log": ["x", "y"]})


def test_branches_of_unequal_length_without_join(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "b1", "b2", "c"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b1")
        g.add_edge("b1", "b2")
        g.add_edge("a", "c")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="values"))

    differential(scenario)


def test_same_node_triggered_by_two_edges_in_one_step_runs_once(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge("a", "c")
        g.add_edge("b", "c")
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["a", "b", "c"]})


def test_conditional_fan_out_and_static_join(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("r", "x", "y", "j"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "r")
        g.add_conditional_edges("r", lambda s: ["y", "x"])
        g.add_edge(["x", "y"], "j")
        return g.compile().invoke({"log": []})

    differential(scenario)


# --- errors ------------------------------------------------------------------------------


class Boom(Exception):
    def __init__(self, msg, code):
        super().__init__(msg, code)
        self.code = code


def test_exception_from_node_propagates_unchanged(differential):
    def scenario(E):
        def bad(s):
            raise Boom("node failed", 7)

        g = E.StateGraph(S)
        g.add_node("bad", bad)
        g.add_edge(E.START, "bad")
        try:
            g.compile().invoke({"log": []})
        except Boom as e:
            return type(e).__name__, e.args, e.code
        return "no error"

    differential(scenario, expect=("Boom", ("node failed", 7), 7))


def test_exception_object_identity_is_preserved(differential):
    def scenario(E):
        err = Boom("same object", 1)

        def bad(s):
            raise err

        g = E.StateGraph(S)
        g.add_node("bad", bad)
        g.add_edge(E.START, "bad")
        try:
            g.compile().invoke({"log": []})
        except Exception as e:
            return e is err, type(e.__cause__).__name__ if e.__cause__ else None
        return "no error"

    differential(scenario, expect=(True, None))


def test_exception_in_one_parallel_branch_fails_the_run(differential):
    def scenario(E):
        def bad(s):
            raise Boom("branch failed", 2)

        g = E.StateGraph(S)
        g.add_node("ok", _logger("ok"))
        g.add_node("bad", bad)
        g.add_node("after", _logger("after"))
        g.add_edge(E.START, "ok")
        g.add_edge(E.START, "bad")
        g.add_edge("ok", "after")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_exception_in_conditional_edge_function(differential):
    def scenario(E):
        def route(s):
            raise Boom("router failed", 3)

        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route)
        app = g.compile()
        return capture(lambda: app.invoke({"log": []})), collect(
            lambda: app.stream({"log": []}, stream_mode=["updates", "values"])
        )

    differential(scenario)


def test_exception_in_reducer(differential):
    def scenario(E):
        def bad_reducer(a, b):
            raise Boom("reducer failed", 4)

        class R(TypedDict):
            x: Annotated[list, bad_reducer]

        g = E.StateGraph(R)
        g.add_node("a", lambda s: {"x": [1]})
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"x": []}))

    differential(scenario)


def test_invalid_update_error_class_hierarchy(differential):
    def scenario(E):
        errs = E.errors
        return (
            issubclass(errs.InvalidUpdateError, Exception),
            issubclass(errs.GraphRecursionError, RecursionError),
            issubclass(errs.GraphInterrupt, errs.GraphBubbleUp),
            issubclass(errs.ParentCommand, errs.GraphBubbleUp),
            issubclass(errs.EmptyInputError, Exception),
        )

    differential(scenario, expect=(True, True, True, True, True))


def test_invalid_update_error_in_stream_after_earlier_steps(differential):
    def scenario(E):
        class St(TypedDict):
            x: str
            log: Annotated[list, operator.add]

        g = E.StateGraph(St)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b", lambda s: {"x": "b"})
        g.add_node("c", lambda s: {"x": "c"})
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        return collect(lambda: g.compile().stream({"x": "", "log": []}, stream_mode="values"))

    differential(scenario)


def test_two_parallel_writes_to_same_last_value_and_stream_updates(differential):
    def scenario(E):
        class St(TypedDict):
            x: str

        g = E.StateGraph(St)
        g.add_node("a", lambda s: {"x": "a"})
        g.add_node("b", lambda s: {"x": "b"})
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        out = collect(lambda: g.compile().stream({"x": ""}, stream_mode="updates"))
        # updates of the two tasks arrive in completion order before the error
        return sorted(out[:-1], key=repr), out[-1]

    differential(scenario)


def test_same_node_writing_same_last_value_key_twice_via_command_list(differential):
    def scenario(E):
        class St(TypedDict):
            x: str

        g = E.StateGraph(St)
        g.add_node("a", lambda s: [E.Command(update={"x": "1"}), E.Command(update={"x": "2"})])
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"x": ""}))

    differential(scenario)


def test_graph_recursion_error_with_fan_out_counts_super_steps(differential):
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, _logger(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        g.add_edge("b", "a")
        app = g.compile()
        return capture(lambda: app.invoke({"log": []}, {"recursion_limit": 5}))

    differential(scenario)


def test_astream_parallel_error(differential):
    async def scenario(E):
        async def bad(s):
            raise Boom("async branch", 5)

        async def ok(s):
            return {"log": ["ok"]}

        g = E.StateGraph(S)
        g.add_node("bad", bad)
        g.add_node("ok", ok)
        g.add_edge(E.START, "bad")
        g.add_edge(E.START, "ok")
        app = g.compile()
        out = await acollect(lambda: app.astream({"log": []}, stream_mode="values"))
        return out

    differential(scenario)


def test_node_input_key_missing_raises_key_error_from_user_code(differential):
    def scenario(E):
        class St(TypedDict):
            a: NotRequired[str]

        g = E.StateGraph(St)
        g.add_node("n", lambda s: {"a": s["a"] + "!"})
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({}))

    differential(scenario)

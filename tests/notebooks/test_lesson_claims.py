"""Fact-check of the lesson notebooks against LangGraph 1.2.24, the reference.

notebooks/*.ipynb teach LangGraph's mechanism (super-steps, the barrier, reducers,
checkpoints, time travel, interrupts, stream modes). tests/notebooks/test_lessons.py checks
that each lesson runs on lgnb and prints what its text says; this suite checks that what the
text says is *true of LangGraph*. Each test copies one lesson's graph into a scenario over the
engine namespace `E` of tests/engine/_diff.py, runs it on LangGraph and on lgnb through the
`differential` fixture (the two observables must match), and asserts the claim on the
reference observable. A test fails if lgnb diverges from LangGraph, or if the lesson's claim
is false of LangGraph: then the lesson, not the assertion, is what to fix.

Each test is named after the claim; its docstring names the notebook and quotes the claim.

Two deliberate stand-ins, each said where used: timing (sleeps that make parallel nodes
finish in some order) is replaced by events that force the order, and the persistence
lesson's SIGKILL of a child process by a run whose `slow` node never returns while the
thread is inspected and resumed (the killed process never writes again; neither does it).
Savers are `InMemorySaver` (the lessons' SQLite file holds the same checkpoints).

No `from __future__ import annotations`: some state classes are defined inside scenarios.

    .venv/bin/python -m pytest -q -p no:cacheprovider tests/notebooks/test_lesson_claims.py
    LGNB_DIFF_SELFTEST=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/notebooks/test_lesson_claims.py
"""

import operator
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

import _diff  # noqa: E402
from _diff import capture  # noqa: E402

WAIT = 10.0  # seconds a forced-order task waits for its predecessor before giving up


@pytest.fixture
def differential():
    """``differential(scenario, exc=..., expect=...)`` -> normalized reference (see tests/engine)."""
    return _diff.differential


def _cfg(thread: str = "lesson") -> dict:
    return {"configurable": {"thread_id": thread}}


class FinishOrder:
    """Parallel tasks finish in `order` without sleeps: each waits (at most `WAIT` s) until
    the one before it finished. `finished` is the order their functions returned; `waited`
    is False for a task that timed out (its predecessor never ran beside it)."""

    def __init__(self, *order: str) -> None:
        self.order = list(order)
        self.done = {k: threading.Event() for k in order}
        self.finished: list[str] = []
        self.waited: dict[str, bool] = {}
        self.lock = threading.Lock()

    def finish(self, key: str) -> None:
        i = self.order.index(key)
        ok = True if i == 0 else self.done[self.order[i - 1]].wait(WAIT)
        with self.lock:
            self.waited[key] = ok
            self.finished.append(key)
        self.done[key].set()


def show_steps(graph: Any, inputs: Any, config: dict | None = None) -> list:
    """The pregel lesson's `show_steps` as data: per super-step the planned tasks
    (`plan`, step, node, triggers, input) in plan order, then what they wrote
    (`wrote`, step, node, result) as a sorted multiset (sync parallel tasks report in
    completion order), then the state after the barrier (`barrier`, state)."""
    rows: list = []
    wrote: list = []

    def flush() -> None:
        rows.extend(sorted(wrote, key=repr))
        wrote.clear()

    for mode, event in graph.stream(inputs, config, stream_mode=["debug", "values"]):
        if mode == "values":
            flush()
            rows.append(("barrier", event))
        elif event["type"] == "task":
            flush()
            task = event["payload"]
            rows.append(("plan", event["step"], task["name"], tuple(task["triggers"]), task["input"]))
        elif event["type"] == "task_result":
            task = event["payload"]
            wrote.append(("wrote", event["step"], task["name"], task["result"]))
    flush()
    return rows


def planned(rows: list) -> list[tuple[int, str]]:
    """(step, node) of every planned task, in order."""
    return [(r[1], r[2]) for r in rows if r[0] == "plan"]


def timeline(graph: Any, config: dict) -> list[tuple]:
    """The persistence lesson's `timeline`: newest first, (step, source, next, notes, saved writes)."""
    out = []
    for snap in graph.get_state_history(config):
        done = {t.name: t.result for t in snap.tasks if t.result}
        out.append((snap.metadata["step"], snap.metadata["source"], snap.next,
                    snap.values.get("notes"), done))
    return out


def checkpoint_id(cfg: dict | None) -> str | None:
    return (cfg or {}).get("configurable", {}).get("checkpoint_id")


def branch_points(graph: Any, config: dict) -> list[tuple[int, list[str]]]:
    """(step, sorted sources of its children) of every checkpoint with several children."""
    snaps = list(graph.get_state_history(config))
    step_of = {checkpoint_id(s.config): s.metadata["step"] for s in snaps}
    children: dict[str, list[str]] = {}
    for s in snaps:
        if s.parent_config:
            children.setdefault(checkpoint_id(s.parent_config), []).append(s.metadata["source"])
    return sorted((step_of[p], sorted(c)) for p, c in children.items() if len(c) > 1)


# ==========================================================================================
# notebooks/pregel.ipynb
# ==========================================================================================


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def _node(name: str, before: Callable[[], None] | None = None):
    def run(state: Log):
        if before:
            before()
        return {"log": [name]}

    return run


def _diamond(E, b_before=None, c_before=None, **compile_kw):
    """The lesson's diamond: a -> b, a -> c, join [b, c] -> d."""
    builder = E.StateGraph(Log)
    builder.add_node("a", _node("a"))
    builder.add_node("b", _node("b", b_before))
    builder.add_node("c", _node("c", c_before))
    builder.add_node("d", _node("d"))
    builder.add_edge(E.START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "d")
    return builder.compile(**compile_kw)


def _uneven(E, join=False, defer=False, third_branch=False):
    """The lesson's `uneven`: a -> b -> d and a -> c -> e -> d (exercise 2: + a -> f -> g -> h -> d)."""
    b = E.StateGraph(Log)
    for name in "abce" + ("fgh" if third_branch else ""):
        b.add_node(name, _node(name))
    b.add_node("d", _node("d"), defer=defer)
    b.add_edge(E.START, "a")
    b.add_edge("a", "b")
    b.add_edge("a", "c")
    b.add_edge("c", "e")
    if third_branch:
        b.add_edge("a", "f")
        b.add_edge("f", "g")
        b.add_edge("g", "h")
        b.add_edge("h", "d")
    if join:
        b.add_edge(["b", "e"], "d")
    else:
        b.add_edge("b", "d")
        b.add_edge("e", "d")
    return b.compile()


def test_pregel_claim_parallel_branches_share_one_superstep_and_read_the_same_snapshot(differential):
    """pregel.ipynb: "`b` and `c` are planned in the **same** step (2) ... Both got the same
    input, `{'log': ['a']}` ... the state after step 2 has both `'b'` and `'c'`" and "`d` ...
    runs in step 3"."""
    ref = differential(lambda E: show_steps(_diamond(E), {"log": []}))
    assert planned(ref) == [(1, "a"), (2, "b"), (2, "c"), (3, "d")]
    inputs = {r[2]: r[4] for r in ref if r[0] == "plan"}
    assert inputs["b"] == inputs["c"] == {"log": ["a"]}
    barriers = [r[1] for r in ref if r[0] == "barrier"]
    assert barriers == [{"log": []}, {"log": ["a"]}, {"log": ["a", "b", "c"]}, {"log": ["a", "b", "c", "d"]}]


def test_pregel_claim_an_edge_is_a_branch_to_channel_read_in_the_next_step(differential):
    """pregel.ipynb: "An edge `x → y` is a message: `x` writes to a channel (`branch:to:y`) in
    step N, and `y` is triggered by it in step N+1"; the `triggers` are "every channel that
    *can* trigger the node": "`d` also lists `branch:to:d` because it subscribes to it"."""
    ref = differential(lambda E: show_steps(_diamond(E), {"log": []}))
    triggers = {r[2]: r[3] for r in ref if r[0] == "plan"}
    assert triggers == {"a": ("branch:to:a",), "b": ("branch:to:b",), "c": ("branch:to:c",),
                        "d": ("branch:to:d", "join:b+c:d")}


def test_pregel_claim_parallel_nodes_really_run_at_the_same_time(differential):
    """pregel.ipynb: "'Parallel' is literal: `b` and `c` each sleep 0.5 s, yet step 2 takes
    about 0.5 s, not 1 s." Here `b` and `c` meet at a two-party barrier: only tasks that run
    at the same time can pass it."""
    def scenario(E):
        meet = threading.Barrier(2, timeout=WAIT)
        met: list[str] = []

        def rendezvous(name):
            def wait():
                try:
                    meet.wait()
                    met.append(name)
                except threading.BrokenBarrierError:
                    met.append(f"{name} waited alone")
            return wait

        app = _diamond(E, b_before=rendezvous("b"), c_before=rendezvous("c"))
        return app.invoke({"log": []}), sorted(met)

    ref = differential(scenario)
    assert ref == ({"log": ["a", "b", "c", "d"]}, ["b", "c"])


def test_pregel_claim_barrier_folds_writes_in_task_order_not_finish_order(differential):
    """pregel.ipynb: "their two writes folded by `operator.add` in task order at the barrier"
    (here `c` is made to finish before `b`)."""
    def scenario(E):
        order = FinishOrder("c", "b")
        app = _diamond(E, b_before=lambda: order.finish("b"), c_before=lambda: order.finish("c"))
        return app.invoke({"log": []}), order.finished, order.waited

    ref = differential(scenario)
    assert ref == ({"log": ["a", "b", "c", "d"]}, ["c", "b"], {"c": True, "b": True})


def test_pregel_claim_input_is_step_minus_1_and_start_node_is_step_0(differential):
    """pregel.ipynb: "Step -1 is the input being written, step 0 the `__start__` node copying
    it into the state; then the three super-steps of the diamond, `b` and `c` together in
    step 2" (and "with a checkpointer, save a checkpoint here", at each barrier)."""
    def scenario(E):
        app = _diamond(E, checkpointer=E.InMemorySaver())
        app.invoke({"log": []}, _cfg())
        return [(s.metadata["step"], s.metadata["source"], s.next, s.values)
                for s in reversed(list(app.get_state_history(_cfg())))]

    ref = differential(scenario)
    assert ref == [
        (-1, "input", ("__start__",), {"log": []}),  # a reducer key starts as its type's default
        (0, "loop", ("a",), {"log": []}),
        (1, "loop", ("b", "c"), {"log": ["a"]}),
        (2, "loop", ("d",), {"log": ["a", "b", "c"]}),
        (3, "loop", (), {"log": ["a", "b", "c", "d"]}),
    ]


def test_pregel_claim_uneven_branches_run_d_once_per_arriving_edge(differential):
    """pregel.ipynb: "`d` runs in step 3 (triggered by `b`, while `e` runs beside it) and
    **again** in step 4 (triggered by `e`): the log ends with `'d'` twice"."""
    ref = differential(lambda E: show_steps(_uneven(E), {"log": []}))
    assert [s for s, n in planned(ref) if n == "d"] == [3, 4]
    assert (3, "e") in planned(ref)
    assert ref[-1] == ("barrier", {"log": ["a", "b", "c", "d", "e", "d"]})


def test_pregel_claim_join_edge_and_defer_each_run_d_once_in_step_4(differential):
    """pregel.ipynb: "With either fix `d` runs once, in step 4" (a join edge
    `add_edge(["b", "e"], "d")`, or `defer=True`: "a deferred node is held back until no
    other node is left to run")."""
    def scenario(E):
        return show_steps(_uneven(E, join=True), {"log": []}), show_steps(_uneven(E, defer=True), {"log": []})

    join, defer = differential(scenario)
    for rows in (join, defer):
        assert [s for s, n in planned(rows) if n == "d"] == [4]
        assert rows[-1] == ("barrier", {"log": ["a", "b", "c", "e", "d"]})


def test_pregel_claim_exercise_third_branch_runs_d_three_times(differential):
    """pregel.ipynb, exercise 2: with a third branch `a → f → g → h → d`, `d` runs "Three
    times: in step 3 (from `b`), step 4 (from `e`) and step 5 (from `h`)"."""
    ref = differential(lambda E: show_steps(_uneven(E, third_branch=True), {"log": []}))
    assert [s for s, n in planned(ref) if n == "d"] == [3, 4, 5]


def test_pregel_claim_exercise_returning_the_whole_list_duplicates_it(differential):
    """pregel.ipynb, exercise 1: if `c` returns `{"log": state["log"] + ["c"]}` the final log is
    "`['a', 'b', 'a', 'c', 'd']`"."""
    def scenario(E):
        builder = E.StateGraph(Log)
        builder.add_node("a", _node("a"))
        builder.add_node("b", _node("b"))
        builder.add_node("c", lambda state: {"log": state["log"] + ["c"]})
        builder.add_node("d", _node("d"))
        builder.add_edge(E.START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("a", "c")
        builder.add_edge(["b", "c"], "d")
        return builder.compile().invoke({"log": []})

    assert differential(scenario) == {"log": ["a", "b", "a", "c", "d"]}


class MapReduce(TypedDict):
    numbers: list[int]
    squares: Annotated[list[int], operator.add]
    total: int


def _map_reduce(E, square_before=None, **compile_kw):
    """The lesson's map-reduce: START -Send-> square (one task per number) -> add_up."""
    def fan_out(state: MapReduce):
        return [E.Send("square", {"x": n}) for n in state["numbers"]]

    def square(arg: dict):
        if square_before:
            square_before(arg["x"])
        return {"squares": [arg["x"] ** 2]}

    def add_up(state: MapReduce):
        return {"total": sum(state["squares"])}

    b = E.StateGraph(MapReduce)
    b.add_node("square", square)
    b.add_node("add_up", add_up)
    b.add_conditional_edges(E.START, fan_out, ["square"])
    b.add_edge("square", "add_up")
    return b.compile(**compile_kw)


def test_pregel_claim_send_makes_one_task_per_send_triggered_by_pregel_push(differential):
    """pregel.ipynb: "Step 1 has three `square` tasks, triggered by `__pregel_push` ... each
    with its own argument as input" and "`add_up` runs once, in step 2, after all three"."""
    ref = differential(lambda E: show_steps(_map_reduce(E), {"numbers": [1, 2, 3]}))
    plans = [r[1:] for r in ref if r[0] == "plan"]
    assert plans == [
        (1, "square", ("__pregel_push",), {"x": 1}),
        (1, "square", ("__pregel_push",), {"x": 2}),
        (1, "square", ("__pregel_push",), {"x": 3}),
        (2, "add_up", ("branch:to:add_up",), {"numbers": [1, 2, 3], "squares": [1, 4, 9]}),
    ]


def test_pregel_claim_sends_travel_on_the_pregel_tasks_channel(differential):
    """pregel.ipynb: "the `Send`s themselves travel on the channel `__pregel_tasks`": the
    checkpoint taken before the `square` tasks holds them there."""
    def scenario(E):
        saver = E.InMemorySaver()
        app = _map_reduce(E, checkpointer=saver, interrupt_before=["square"])
        app.invoke({"numbers": [1, 2, 3]}, _cfg())
        saved = saver.get_tuple(_cfg())
        return saved.metadata["step"], saved.checkpoint["channel_values"].get("__pregel_tasks")

    ref = differential(scenario)
    assert ref == (0, [("Send", "square", {"x": n}) for n in (1, 2, 3)])


def test_pregel_claim_send_writes_apply_in_send_order_not_finish_order(differential):
    """pregel.ipynb: "They **finish** in the order 9, 4, 1, yet the state holds `[1, 4, 9]`:
    at the barrier the writes are applied in the order the tasks were *planned* (the order of
    the `Send`s), not the order they finished." (The finish order is forced with events.)"""
    def scenario(E):
        order = FinishOrder("3", "2", "1")
        app = _map_reduce(E, square_before=lambda x: order.finish(str(x)))
        return app.invoke({"numbers": [1, 2, 3]}), order.finished, order.waited

    ref = differential(scenario)
    assert ref == ({"numbers": [1, 2, 3], "squares": [1, 4, 9], "total": 14},
                   ["3", "2", "1"], {"3": True, "2": True, "1": True})


def test_pregel_claim_exercise_five_sends_still_take_two_supersteps(differential):
    """pregel.ipynb, exercise 4: squaring `[1, 2, 3, 4, 5]` takes "Still two super-steps:
    step 1 has five `square` tasks (one per `Send`), step 2 runs `add_up` once"."""
    ref = differential(lambda E: show_steps(_map_reduce(E), {"numbers": [1, 2, 3, 4, 5]}))
    assert planned(ref) == [(1, "square")] * 5 + [(2, "add_up")]


class Counter(TypedDict):
    n: int


def _loop(E, **compile_kw):
    """The lesson's loop: `count` adds 1 until n reaches 5."""
    def count(state: Counter):
        return {"n": state["n"] + 1}

    def again(state: Counter):
        return "count" if state["n"] < 5 else E.END

    b = E.StateGraph(Counter)
    b.add_node("count", count)
    b.add_edge(E.START, "count")
    b.add_conditional_edges("count", again, ["count", E.END])
    return b.compile(**compile_kw)


def test_pregel_claim_a_loop_is_one_superstep_per_iteration(differential):
    """pregel.ipynb: "A back edge is just a message to the next super-step ... Five
    super-steps" (`count` in steps 1 to 5)."""
    ref = differential(lambda E: show_steps(_loop(E), {"n": 0}))
    assert planned(ref) == [(s, "count") for s in range(1, 6)]
    assert ref[-1] == ("barrier", {"n": 5})


def test_pregel_claim_recursion_limit_stops_before_the_next_step_and_keeps_the_last_checkpoint(differential):
    """pregel.ipynb: "With `recursion_limit=3`, steps 1–3 run; when the engine reaches step 4
    it raises `GraphRecursionError` instead of planning it. ... the checkpoint of the last
    completed step (3) is saved, with `count` still next"."""
    def scenario(E):
        limited = _loop(E, checkpointer=E.InMemorySaver())
        config = {**_cfg("loop"), "recursion_limit": 3}
        try:
            limited.invoke({"n": 0}, config)
            error = None
        except E.errors.GraphRecursionError as e:
            error = type(e).__name__ + ": " + str(e).splitlines()[0]
        saved = limited.get_state(config)
        return error, saved.metadata["step"], saved.values["n"], saved.next

    ref = differential(scenario)
    assert ref == ("GraphRecursionError: Recursion limit of 3 reached without hitting a stop condition. "
                   "You can increase the limit by setting the `recursion_limit` config key.",
                   3, 3, ("count",))


def test_pregel_claim_exercise_k_supersteps_need_a_limit_of_k_plus_1(differential):
    """pregel.ipynb, exercise 3: "A run of k super-steps needs `recursion_limit >= k + 1`
    (LangGraph counts the same way) ... `{"recursion_limit": 5}` raises, `{"recursion_limit": 6}`
    returns `{'n': 5}`"."""
    def scenario(E):
        loop = _loop(E)
        five = capture(lambda: loop.invoke({"n": 0}, {"recursion_limit": 5}))
        six = capture(lambda: loop.invoke({"n": 0}, {"recursion_limit": 6}))
        return five[:2] if isinstance(five, tuple) else five, six

    assert differential(scenario) == (("raises", "GraphRecursionError"), {"n": 5})


def test_pregel_claim_recursion_limit_caps_supersteps_not_node_calls(differential):
    """pregel.ipynb: the recursion limit "caps the number of super-steps of one run — not the
    number of node calls": the map-reduce of five numbers makes six node calls in two
    super-steps, and a limit of 3 (two steps + 1) is enough."""
    ref = differential(lambda E: _map_reduce(E).invoke({"numbers": [1, 2, 3, 4, 5]}, {"recursion_limit": 3}))
    assert ref["total"] == 55


def test_pregel_claim_default_recursion_limit_is_10007(differential):
    """pregel.ipynb: "The **recursion limit** (config key `recursion_limit`; LangGraph 1.2's
    default is 10007, older releases used 25)": what a node sees of it, `RemainingSteps`,
    with no limit given and with 10007 given explicitly."""
    def scenario(E):
        class Left(TypedDict):
            left: E.RemainingSteps

        seen = []
        b = E.StateGraph(Left)
        b.add_node("look", lambda s: seen.append(s["left"]) or {})
        b.add_edge(E.START, "look")
        app = b.compile()
        app.invoke({})
        app.invoke({}, {"recursion_limit": 10007})
        app.invoke({}, {"recursion_limit": 25})
        return seen

    ref = differential(scenario)
    assert ref[0] == ref[1] != ref[2]


def test_pregel_claim_the_default_limit_lets_a_run_finish_up_to_10006_supersteps(differential):
    """pregel.ipynb: "the default lets a run finish up to 10006 super-steps (exercise 3 says
    why not 10007)": the lesson's loop of 10006 super-steps finishes with no limit given, one
    of 10007 raises. (The text said "allows 10007 super-steps", which contradicted its own
    exercise 3.)"""
    def scenario(E):
        loop = _loop(E)
        finishes = capture(lambda: loop.invoke({"n": 5 - 10006}))
        raises = capture(lambda: loop.invoke({"n": 5 - 10007}))
        return finishes, raises[:2] if isinstance(raises, tuple) else raises

    assert differential(scenario) == ({"n": 5}, ("raises", "GraphRecursionError"))


def test_pregel_claim_a_thousand_supersteps_cost_no_stack(differential):
    """pregel.ipynb: "a long loop costs no stack": `loop.invoke({"n": -995},
    {"recursion_limit": 1100})` prints "1000 super-steps later: {'n': 5}"."""
    ref = differential(lambda E: _loop(E).invoke({"n": -995}, {"recursion_limit": 1100}))
    assert ref == {"n": 5}


# ==========================================================================================
# notebooks/reducers.ipynb
# ==========================================================================================


def _fan_out(E, state_type, nodes: dict):
    """The lesson's `fan_out`: START -> every node in parallel (one super-step)."""
    builder = E.StateGraph(state_type)
    for name, fn in nodes.items():
        builder.add_node(name, fn)
        builder.add_edge(E.START, name)
    return builder.compile()


def _writes(key: str, value: Any, before: Callable[[], None] | None = None):
    def run(state):
        if before:
            before()
        return {key: value}

    return run


class Race(TypedDict):
    winner: str


def test_reducers_claim_last_value_key_refuses_two_writes_in_one_step(differential):
    """reducers.ipynb: "a key with no reducer ... accepts **one** write per super-step" ... "it
    refuses rather than guess": `InvalidUpdateError: At key 'winner': Can receive only one
    value per step.`"""
    def scenario(E):
        race = _fan_out(E, Race, {"tortoise": _writes("winner", "tortoise"), "hare": _writes("winner", "hare")})
        try:
            race.invoke({"winner": ""})
        except E.errors.InvalidUpdateError as e:
            return type(e).__name__, str(e).splitlines()[0]

    ref = differential(scenario)
    assert ref == ("InvalidUpdateError", "At key 'winner': Can receive only one value per step. "
                   "Use an Annotated key to handle multiple values.")


def test_reducers_claim_last_value_in_a_later_step_replaces_the_earlier(differential):
    """reducers.ipynb: "In *different* super-steps there is no conflict — the later step's
    value simply replaces the earlier one" (prints `{'winner': 'hare'}`)."""
    def scenario(E):
        builder = E.StateGraph(Race)
        builder.add_node("tortoise", _writes("winner", "tortoise"))
        builder.add_node("hare", _writes("winner", "hare"))
        builder.add_edge(E.START, "tortoise")
        builder.add_edge("tortoise", "hare")
        return builder.compile().invoke({"winner": ""})

    assert differential(scenario) == {"winner": "hare"}


def _three(E, names=("zeta", "alpha", "mid"), finish=("zeta", "mid", "alpha"), state_type=Log, key="log"):
    """The lesson's `three`: parallel nodes (added in `names` order) that finish in `finish` order."""
    order = FinishOrder(*finish)
    graph = _fan_out(E, state_type, {n: _writes(key, [n], lambda n=n: order.finish(n)) for n in names})
    return graph, order


def test_reducers_claim_parallel_writes_merge_in_task_order(differential):
    """reducers.ipynb: "The state reads `['alpha', 'mid', 'zeta']`: neither the order in which
    the nodes finished nor the order in which they were added to the graph, but the order of
    the **tasks** — for nodes triggered by edges, sorted by node name ... LangGraph uses the
    same order"."""
    def scenario(E):
        three, order = _three(E)
        return three.invoke({"log": []}), order.finished

    assert differential(scenario) == ({"log": ["alpha", "mid", "zeta"]}, ["zeta", "mid", "alpha"])


def test_reducers_claim_exercise_renamed_node_moves_to_its_name_order(differential):
    """reducers.ipynb, exercise 1: rename `alpha` to `omega`: "`{'log': ['mid', 'omega',
    'zeta']}`: task order is node-name order, whatever the timing"."""
    def scenario(E):
        three, _ = _three(E, names=("zeta", "omega", "mid"), finish=("zeta", "mid", "omega"))
        return three.invoke({"log": []})

    assert differential(scenario) == {"log": ["mid", "omega", "zeta"]}


def test_reducers_claim_reducer_folds_the_input_then_each_write_in_task_order(differential):
    """reducers.ipynb: "Three calls: the **input** is a write like any other (folded into the
    empty starting value `[]`, the type's default), then one call per node's write, `alpha`
    before `zeta`"."""
    def scenario(E):
        calls = []

        def merge(old, write):
            calls.append((list(old), list(write)))
            return old + write

        class Traced(TypedDict):
            log: Annotated[list[str], merge]

        traced = _fan_out(E, Traced, {"zeta": _writes("log", ["zeta"]), "alpha": _writes("log", ["alpha"])})
        return traced.invoke({"log": ["start"]}), calls

    assert differential(scenario) == (
        {"log": ["start", "alpha", "zeta"]},
        [([], ["start"]), (["start"], ["alpha"]), (["start", "alpha"], ["zeta"])])


def test_reducers_claim_exercise_int_reducer_starts_from_zero_and_is_called_three_times(differential):
    """reducers.ipynb, exercise 2: two parallel `{"count": 1}` writes, input `{"count": 10}`:
    "12. `operator.add` is called three times: `0 + 10` for the input (the starting value of
    an `int` key is `int()`, i.e. 0), then `10 + 1` and `11 + 1`"."""
    def scenario(E):
        calls = []

        def add(old, write):
            calls.append((old, write))
            return old + write

        class Count(TypedDict):
            count: Annotated[int, add]

        graph = _fan_out(E, Count, {"one": _writes("count", 1), "two": _writes("count", 1)})
        return graph.invoke({"count": 10}), calls

    assert differential(scenario) == ({"count": 12}, [(0, 10), (10, 1), (11, 1)])


def test_reducers_claim_custom_reducer_can_keep_the_best(differential):
    """reducers.ipynb: "`keep_best` keeps the highest score and ignores the rest" (prints
    `{'best': 9}`)."""
    def scenario(E):
        def keep_best(old: int, write: int) -> int:
            return max(old, write)

        class Contest(TypedDict):
            best: Annotated[int, keep_best]

        contest = _fan_out(E, Contest, {f"judge_{i}": _writes("best", s) for i, s in enumerate([7, 9, 4])})
        return contest.invoke({"best": 0})

    assert differential(scenario) == {"best": 9}


def test_reducers_claim_exercise_collecting_reducer_records_both_runners(differential):
    """reducers.ipynb, exercise 3: with `winner: Annotated[list, collect]`, "`race.invoke({})`
    then returns `{'winner': ['hare', 'tortoise']}` (node-name order)"."""
    def scenario(E):
        def collect_(old: list, write: str) -> list:
            return old + [write]

        class Collected(TypedDict):
            winner: Annotated[list, collect_]

        race = _fan_out(E, Collected, {"tortoise": _writes("winner", "tortoise"), "hare": _writes("winner", "hare")})
        return race.invoke({})

    assert differential(scenario) == {"winner": ["hare", "tortoise"]}


def _chat_rows(E, nodes: list, first: Any):
    """The lesson's chat graph (nodes in sequence): the messages after every super-step."""
    class Chat(TypedDict):
        messages: Annotated[list, E.add_messages]

    builder = E.StateGraph(Chat)
    prev = E.START
    for fn in nodes:
        builder.add_node(fn.__name__, fn)
        builder.add_edge(prev, fn.__name__)
        prev = fn.__name__
    chat = builder.compile()
    return [[(m.type, m.id, m.content) for m in state["messages"]]
            for state in chat.stream({"messages": [first]}, stream_mode="values")]


def test_reducers_claim_add_messages_appends_replaces_by_id_in_place_and_removes(differential):
    """reducers.ipynb: "`reply` appended `ai-1`, `fix_typo` replaced it in place (still one AI
    message, still at index 1), `forget_question` removed the user's message"."""
    def scenario(E):
        from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

        def reply(state):
            return {"messages": [AIMessage("Helo, how can I help?", id="ai-1")]}

        def fix_typo(state):
            return {"messages": [AIMessage("Hello, how can I help?", id="ai-1")]}

        def forget_question(state):
            return {"messages": [RemoveMessage(id="user-1")]}

        return _chat_rows(E, [reply, fix_typo, forget_question], HumanMessage("hi", id="user-1"))

    assert differential(scenario) == [
        [("human", "user-1", "hi")],
        [("human", "user-1", "hi"), ("ai", "ai-1", "Helo, how can I help?")],
        [("human", "user-1", "hi"), ("ai", "ai-1", "Hello, how can I help?")],
        [("ai", "ai-1", "Hello, how can I help?")],
    ]


def test_reducers_claim_messages_without_an_id_get_a_fresh_one_and_are_appended(differential):
    """reducers.ipynb: "Messages that arrive without an id get a fresh one when they are added,
    so they are always appended." (the same message, without id, sent twice)."""
    def scenario(E):
        from langchain_core.messages import AIMessage, HumanMessage

        def say(state):
            return {"messages": [AIMessage("same words")]}

        def again(state):
            return {"messages": [AIMessage("same words")]}

        rows = _chat_rows(E, [say, again], HumanMessage("hi"))
        ids = [m[1] for m in rows[-1]]
        return [[(t, c) for t, _, c in row] for row in rows], all(ids), len(set(ids))

    assert differential(scenario) == (
        [[("human", "hi")], [("human", "hi"), ("ai", "same words")],
         [("human", "hi"), ("ai", "same words"), ("ai", "same words")]], True, 3)


def test_reducers_claim_exercise_add_messages_replaces_by_id_whatever_the_type(differential):
    """reducers.ipynb, exercise 4: an `AIMessage("bye", id="user-1")` sent to a state holding
    `HumanMessage("hi", id="user-1")`: "replaced in place: the list still has one message, now
    the AI's `"bye"`. `add_messages` matches ids only, not message types"."""
    def scenario(E):
        from langchain_core.messages import AIMessage, HumanMessage

        def bye(state):
            return {"messages": [AIMessage("bye", id="user-1")]}

        return _chat_rows(E, [bye], HumanMessage("hi", id="user-1"))[-1]

    assert differential(scenario) == [("ai", "user-1", "bye")]


def test_reducers_claim_what_if_rows_are_what_a_real_run_with_that_reducer_gives(differential):
    """reducers.ipynb, section 5: `lgnb.whatif` "folds the writes with the engine's own
    channels, so a result — or an error — is exactly what a run with that reducer would
    give": "last value:    At key 'log': Can receive only one value per step.",
    "newest_first:  ['zeta', 'mid', 'alpha']", "add_messages:  [('human', 'alpha'),
    ('human', 'mid'), ('human', 'zeta')]". Here: real runs of `three` under each reducer."""
    def scenario(E):
        def newest_first(old, write):
            return write + old

        class LastValue(TypedDict):
            log: list[str]

        class Newest(TypedDict):
            log: Annotated[list[str], newest_first]

        class Messages(TypedDict):
            log: Annotated[list, E.add_messages]

        out = {}
        try:
            _three(E, state_type=LastValue)[0].invoke({"log": []})
        except E.errors.InvalidUpdateError as e:
            out["last value"] = str(e).splitlines()[0]
        out["newest_first"] = _three(E, state_type=Newest)[0].invoke({"log": []})["log"]
        msgs = _three(E, state_type=Messages)[0].invoke({"log": []})["log"]
        out["add_messages"] = [(m.type, m.content) for m in msgs]
        return out

    ref = differential(scenario)
    assert ref == {
        "last value": "At key 'log': Can receive only one value per step. "
                      "Use an Annotated key to handle multiple values.",
        "newest_first": ["zeta", "mid", "alpha"],
        "add_messages": [("human", "alpha"), ("human", "mid"), ("human", "zeta")],
    }


# ==========================================================================================
# notebooks/persistence.ipynb
# ==========================================================================================


class Job(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]


class Pipeline:
    """The lesson's `pipeline.py` graph: fetch, then quick and slow in parallel, then report.

    `ran` lists the node calls. Nodes named in `hang` block on their first call until
    `release()` (then raise: the run they belonged to is dead); this stands in for the
    lesson's child process killed by SIGKILL while they were still running."""

    def __init__(self, E, hang: tuple[str, ...] = ()) -> None:
        self.ran: list[str] = []
        self.hang = set(hang)
        self.started = {n: threading.Event() for n in hang}
        self.gate = threading.Event()

        def node(name: str, note: Callable[[Job], str]):
            def run(state: Job):
                self.ran.append(name)
                if name in self.hang:
                    self.hang.discard(name)
                    self.started[name].set()
                    self.gate.wait(WAIT)
                    raise RuntimeError(f"{name}: the process was killed")
                return {"notes": [note(state)]}
            return run

        b = E.StateGraph(Job)
        b.add_node("fetch", node("fetch", lambda s: f"fetched: {s['topic']}"))
        b.add_node("quick", node("quick", lambda s: "quick: done"))
        b.add_node("slow", node("slow", lambda s: "slow: done"))
        b.add_node("report", node("report", lambda s: f"report: {len(s['notes'])} notes"))
        b.add_edge(E.START, "fetch")
        b.add_edge("fetch", "quick")
        b.add_edge("fetch", "slow")
        b.add_edge(["quick", "slow"], "report")
        self.graph = b.compile(checkpointer=E.InMemorySaver())
        self.config = _cfg("job-1")
        self.thread: threading.Thread | None = None

    def start_and_kill(self, saved: Callable[[Any], bool]) -> list[tuple]:
        """Run in a thread until the hanging nodes started and `saved(get_state())` holds;
        return the timeline then (the run is dead from here on: it never writes again
        before `release`)."""
        self.thread = threading.Thread(target=lambda: capture(
            lambda: self.graph.invoke({"topic": "tea", "notes": []}, self.config)), daemon=True)
        self.thread.start()
        for event in self.started.values():
            assert event.wait(WAIT), "the hanging node never started"
        deadline = time.monotonic() + WAIT
        while not saved(self.graph.get_state(self.config)) and time.monotonic() < deadline:
            time.sleep(0.01)
        return timeline(self.graph, self.config)

    def release(self) -> None:
        self.gate.set()
        if self.thread:
            self.thread.join(WAIT)


def _quick_is_saved(snapshot: Any) -> bool:
    return any(t.name == "quick" and t.result for t in snapshot.tasks)


def _kill_during_step_2(E):
    """Sections 1-2: kill while `slow` sleeps (after `quick`'s write is saved), then resume."""
    job = Pipeline(E, hang=("slow",))
    try:
        after_kill = job.start_and_kill(_quick_is_saved)
        killed_at = checkpoint_id(job.graph.get_state(job.config).config)
        ran_before = list(job.ran)
        result = job.graph.invoke(None, job.config)
        resumed = timeline(job.graph, job.config)
        step2 = next(s for s in job.graph.get_state_history(job.config) if s.metadata["step"] == 2)
        return {
            "after kill": after_kill,
            "ran before kill": sorted(ran_before),
            "ran on resume": job.ran[len(ran_before):],
            "result": result["notes"],
            "resumed timeline": resumed,
            "step 2's parent is the killed run's checkpoint": checkpoint_id(step2.parent_config) == killed_at,
        }
    finally:
        job.release()


TEA = ["fetched: tea", "quick: done", "slow: done", "report: 3 notes"]


def test_persistence_claim_finished_task_writes_are_saved_before_the_step_ends(differential):
    """persistence.ipynb: "with the default durability, as soon as each task finishes, its
    **pending writes**" are saved; after the kill "Step 2 never reached its barrier, so there
    is no step-2 checkpoint. But `quick` finished before the kill, and its write is stored as
    a **pending write** of the step-1 checkpoint. `slow` has none"; "Step 0's checkpoint was
    taken before `fetch` ran; step 1's at the barrier after it, with `next=('quick', 'slow')`"
    (exercise 2: "Steps -1 (input), 0 and 1")."""
    ref = differential(_kill_during_step_2)
    assert ref["after kill"] == [
        (1, "loop", ("quick", "slow"), ["fetched: tea"], {"quick": {"notes": ["quick: done"]}}),
        (0, "loop", ("fetch",), [], {"fetch": {"notes": ["fetched: tea"]}}),
        (-1, "input", ("__start__",), [], {"__start__": {"topic": "tea", "notes": []}}),
    ]


def test_persistence_claim_resume_runs_only_what_is_missing(differential):
    """persistence.ipynb: "The engine loads the latest checkpoint, re-applies `quick`'s saved
    write, and runs only what is missing" ... "Only `slow` and `report` ran here; `fetch` and
    `quick` did not run again, and their notes are in the result" and "step 2's parent is
    the checkpoint the child wrote: True"; the step-1 checkpoint now has "`slow`'s write
    beside `quick`'s" (exercise 2: "the next checkpoint it writes is step 2")."""
    ref = differential(_kill_during_step_2)
    assert ref["ran before kill"] == ["fetch", "quick", "slow"]
    assert ref["ran on resume"] == ["slow", "report"]
    assert ref["result"] == TEA
    assert ref["step 2's parent is the killed run's checkpoint"] is True
    assert ref["resumed timeline"][:3] == [
        (3, "loop", (), TEA, {}),
        (2, "loop", ("report",), TEA[:3], {"report": {"notes": ["report: 3 notes"]}}),
        (1, "loop", ("quick", "slow"), ["fetched: tea"],
         {"quick": {"notes": ["quick: done"]}, "slow": {"notes": ["slow: done"]}}),
    ]


def test_persistence_claim_exercise_a_task_killed_before_it_finished_runs_again(differential):
    """persistence.ipynb, exercise 1: "Killed before `quick` finished, the step-1 checkpoint
    would hold no pending write, and the resume would run `quick` again as well (the final
    notes would be the same)"."""
    def scenario(E):
        job = Pipeline(E, hang=("quick", "slow"))
        try:
            # the step-1 checkpoint is saved while quick and slow run (durability "async"):
            # the claim is about that checkpoint, so wait for it, as the lesson's kill does
            after_kill = job.start_and_kill(lambda snapshot: (snapshot.metadata or {}).get("step") == 1)
            ran_before = list(job.ran)
            result = job.graph.invoke(None, job.config)
            return after_kill[0], sorted(job.ran[len(ran_before):]), result["notes"]
        finally:
            job.release()

    ref = differential(scenario)
    assert ref == ((1, "loop", ("quick", "slow"), ["fetched: tea"], {}),
                   ["quick", "report", "slow"], TEA)


def _replay_and_fork(E):
    """Section 4: a finished run, a replay from the step-1 checkpoint, a fork before `fetch`."""
    job = Pipeline(E)
    job.graph.invoke({"topic": "tea", "notes": []}, job.config)
    graph, config = job.graph, job.config
    after_fetch = next(s for s in graph.get_state_history(config) if s.metadata["step"] == 1)
    n = len(job.ran)
    replayed = graph.invoke(None, after_fetch.config)["notes"]
    replay_ran, n = job.ran[n:], len(job.ran)
    replay_start = [s for s in graph.get_state_history(config)
                    if checkpoint_id(s.parent_config) == checkpoint_id(after_fetch.config)
                    and s.metadata["source"] != "loop"]
    before_fetch = next(s for s in graph.get_state_history(config) if s.next == ("fetch",))
    forked = graph.update_state(before_fetch.config, {"topic": "coffee"})
    fork_snapshot = graph.get_state(forked)
    forked_notes = graph.invoke(None, forked)["notes"]
    latest = graph.get_state(config)
    return {
        "replayed": replayed,
        "replay ran": sorted(replay_ran),  # quick and slow run in parallel
        "replay starts with": [(s.metadata["source"], s.metadata["step"], s.next) for s in replay_start],
        "fork": (fork_snapshot.metadata["source"], fork_snapshot.metadata["step"], fork_snapshot.next,
                 checkpoint_id(fork_snapshot.parent_config) == checkpoint_id(before_fetch.config)),
        "forked": forked_notes,
        "fork ran": (job.ran[n], sorted(job.ran[n + 1:])),
        "latest": (latest.metadata["step"], latest.values["notes"]),
        "checkpoints": len(list(graph.get_state_history(config))),
        "branch points": branch_points(graph, config),
    }


def test_persistence_claim_replay_from_step_1_reruns_quick_slow_and_report_not_fetch(differential):
    """persistence.ipynb: "invoke with `None` and the config of an old checkpoint: the steps
    after it run again. Replaying from the step-1 checkpoint re-runs `quick`, `slow` and
    `report`, not `fetch`" and "the replay started a `fork` checkpoint from it"."""
    ref = differential(_replay_and_fork)
    assert ref["replay ran"] == ["quick", "report", "slow"]
    assert ref["replayed"] == TEA
    assert [src for src, _, _ in ref["replay starts with"]] == ["fork"]


def test_persistence_claim_update_state_on_an_old_checkpoint_forks_the_timeline(differential):
    """persistence.ipynb: "`update_state` on an old checkpoint writes a new checkpoint (source
    `update`) whose parent is that one (the timeline branches), with the values changed;
    running from it continues on the branch" (prints "['fetched: coffee', ...]", "fetch runs");
    "The thread's latest checkpoint is now the end of the `coffee` branch. The timeline has two
    branch points: the step-1 checkpoint ... and the step-0 checkpoint (the original run, and
    the `update` checkpoint of the edit)"."""
    ref = differential(_replay_and_fork)
    assert ref["fork"] == ("update", 1, ("fetch",), True)
    assert ref["forked"] == ["fetched: coffee", "quick: done", "slow: done", "report: 3 notes"]
    assert ref["fork ran"] == ("fetch", ["quick", "report", "slow"])
    assert ref["latest"] == (4, ref["forked"])
    assert ref["checkpoints"] == 12
    assert ref["branch points"] == [(0, ["loop", "update"]), (1, ["fork", "loop"])]


# ==========================================================================================
# notebooks/time_travel.ipynb
# ==========================================================================================


def _time_travel(E):
    """The lesson's plan -> write -> review, a fork before `write`, a replay before `plan`."""
    def plan(state: Job):
        return {"notes": [f"plan: three facts about {state['topic']}"]}

    def write(state: Job):
        return {"notes": [f"draft: a short text about {state['topic']}"]}

    def review(state: Job):
        return {"notes": [f"review: the {state['topic']} draft looks good"]}

    builder = E.StateGraph(Job)
    builder.add_node("plan", plan)
    builder.add_node("write", write)
    builder.add_node("review", review)
    builder.add_edge(E.START, "plan")
    builder.add_edge("plan", "write")
    builder.add_edge("write", "review")
    graph = builder.compile(checkpointer=E.InMemorySaver())
    config = _cfg()
    graph.invoke({"topic": "tea", "notes": []}, config)
    first = [(s.metadata["step"], s.metadata["source"], s.next, s.values["notes"])
             for s in graph.get_state_history(config)]
    first_ids = [checkpoint_id(s.config) for s in graph.get_state_history(config)]

    before_write = next(s for s in graph.get_state_history(config) if s.next == ("write",))
    forked = graph.update_state(before_write.config, {"topic": "coffee"})
    fork = graph.get_state(forked)
    forked_notes = graph.invoke(None, forked)["notes"]

    before_plan = next(s for s in graph.get_state_history(config) if s.next == ("plan",))
    replayed = graph.invoke(None, before_plan.config)["notes"]
    history = list(graph.get_state_history(config))
    replay_start = [(s.metadata["source"], s.metadata["step"], s.next, s.values["notes"]) for s in history
                    if checkpoint_id(s.parent_config) == checkpoint_id(before_plan.config)
                    and s.metadata["source"] != "loop"]
    return {
        "first run": first,
        "fork": (fork.metadata["source"], fork.metadata["step"], fork.next, fork.values["topic"],
                 checkpoint_id(fork.parent_config) == checkpoint_id(before_write.config)),
        "forked": forked_notes,
        "original kept": all(i in {checkpoint_id(s.config) for s in history} for i in first_ids),
        "replayed": replayed,
        "replay starts with": replay_start,
        "checkpoints": len(history),
        "branch points": branch_points(graph, config),
    }


def test_time_travel_claim_a_checkpoint_per_superstep_with_step_and_source(differential):
    """time_travel.ipynb: "a graph saves a checkpoint after every super-step ... metadata
    (`source`: `input`, `loop`, `update` or `fork`; `step`)"; "Each super-step leaves a
    checkpoint" (the history, newest first)."""
    ref = differential(_time_travel)
    tea = ["plan: three facts about tea", "draft: a short text about tea", "review: the tea draft looks good"]
    assert ref["first run"] == [
        (3, "loop", (), tea),
        (2, "loop", ("review",), tea[:2]),
        (1, "loop", ("write",), tea[:1]),
        (0, "loop", ("plan",), []),
        (-1, "input", ("__start__",), []),
    ]


def test_time_travel_claim_update_state_writes_a_new_checkpoint_and_keeps_the_original(differential):
    """time_travel.ipynb: "`update_state` writes a **new** checkpoint whose parent is the old
    one; the original timeline is untouched. Running from the new checkpoint (input `None`)
    continues on the branch"."""
    ref = differential(_time_travel)
    assert ref["fork"] == ("update", 2, ("write",), "coffee", True)
    assert ref["original kept"] is True
    assert ref["forked"] == ["plan: three facts about tea", "draft: a short text about coffee",
                             "review: the coffee draft looks good"]


def test_time_travel_claim_replay_records_its_start_as_a_fork_checkpoint(differential):
    """time_travel.ipynb: "Invoking with `None` and a checkpoint's config re-runs the steps
    after it. LangGraph records the starting point as a `fork` checkpoint, so the replay is a
    second branch"; the timeline then has 12 checkpoints and "2 branch points at steps
    [0, 1]"."""
    ref = differential(_time_travel)
    assert ref["replay starts with"] == [("fork", 1, ("plan",), [])]
    assert ref["replayed"] == ["plan: three facts about tea", "draft: a short text about tea",
                               "review: the tea draft looks good"]
    assert ref["checkpoints"] == 12
    assert ref["branch points"] == [(0, ["fork", "loop"]), (1, ["loop", "update"])]


# ==========================================================================================
# notebooks/human_review.ipynb
# ==========================================================================================


class Translator:
    """The lesson's stand-in LLM: each call drafts a *new* version, and counts the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def draft(self, source: str) -> str:
        self.calls += 1
        return f"draft #{self.calls} of the translation of {source!r}"


class Translation(TypedDict, total=False):
    source: str
    translation: str
    approved: bool


REVIEW = {"question": "Accept this translation?", "options": ["accept", "reject"]}


def _one_node(E, llm: Translator):
    def translate_and_review(state: Translation):
        translation = llm.draft(state["source"])
        verdict = E.interrupt({"kind": "translation_review", "source": state["source"],
                               "translation": translation, **REVIEW})
        return {"translation": translation, "approved": verdict == "accept"}

    builder = E.StateGraph(Translation)
    builder.add_node("translate_and_review", translate_and_review)
    builder.add_edge(E.START, "translate_and_review")
    builder.add_edge("translate_and_review", E.END)
    return builder.compile(checkpointer=E.InMemorySaver())


def _two_nodes(E, llm: Translator):
    def translate(state: Translation):
        return {"translation": llm.draft(state["source"])}

    def review(state: Translation):
        verdict = E.interrupt({"kind": "translation_review", "source": state["source"],
                               "translation": state["translation"], **REVIEW})
        return {"approved": verdict == "accept"}

    builder = E.StateGraph(Translation)
    builder.add_node("translate", translate)
    builder.add_node("review", review)
    builder.add_edge(E.START, "translate")
    builder.add_edge("translate", "review")
    builder.add_edge("review", E.END)
    return builder.compile(checkpointer=E.InMemorySaver())


def _pause_and_resume(E, build):
    llm = Translator()
    graph = build(E, llm)
    config = _cfg("review")
    first = graph.invoke({"source": "A"}, config)
    paused = graph.get_state(config)
    history = [(s.metadata["step"], s.metadata["source"], s.next) for s in graph.get_state_history(config)]
    shown = first["__interrupt__"][0].value["translation"]
    calls_paused = llm.calls
    result = graph.invoke(E.Command(resume="accept"), config)
    return {
        "paused history": history,
        "paused at": (paused.metadata["step"], paused.next,
                      [(t.name, [i.value["translation"] for i in t.interrupts]) for t in paused.tasks]),
        "shown": shown,
        "calls when paused": calls_paused,
        "calls": llm.calls,
        "result": result,
    }


def test_human_review_claim_interrupt_commits_no_step_and_writes_no_checkpoint(differential):
    """human_review.ipynb: "the first time, `interrupt()` **raises**: the step is not committed
    and no new checkpoint is written: the checkpoint taken before the step (whose `next` is
    this node) stores the interrupt as a pending write, and the run ends 'paused'"."""
    ref = differential(lambda E: _pause_and_resume(E, _one_node))
    assert ref["paused history"] == [(0, "loop", ("translate_and_review",)), (-1, "input", ("__start__",))]
    assert ref["paused at"] == (0, ("translate_and_review",),
                                [("translate_and_review", ["draft #1 of the translation of 'A'"])])


def test_human_review_claim_resume_reruns_the_node_from_its_first_line(differential):
    """human_review.ipynb: "on resume the interrupted node **re-runs from its first line**, and
    this time `interrupt()` returns the answer" ... "Two draft calls ... the approved text is
    not the stored one"."""
    ref = differential(lambda E: _pause_and_resume(E, _one_node))
    assert (ref["calls when paused"], ref["calls"]) == (1, 2)
    assert ref["shown"] == "draft #1 of the translation of 'A'"
    assert ref["result"] == {"source": "A", "translation": "draft #2 of the translation of 'A'", "approved": True}


def test_human_review_claim_a_separate_draft_node_is_checkpointed_and_runs_once(differential):
    """human_review.ipynb: "`translate` finishes, so its draft is committed to the state and
    checkpointed; `review` only reads it" ... "One draft call, and the stored translation is
    the approved one"; the pause is at "`next: review`"."""
    ref = differential(lambda E: _pause_and_resume(E, _two_nodes))
    assert ref["paused at"][:2] == (1, ("review",))
    assert (ref["calls when paused"], ref["calls"]) == (1, 1)
    assert ref["result"] == {"source": "A", "translation": ref["shown"], "approved": True}


def test_human_review_claim_replay_from_the_paused_checkpoint_asks_again(differential):
    """human_review.ipynb: "The thread's checkpoints show where the pause was (... `next:
    review`). Click it, then *Replay from here*: the replay ... asks again" (the answer given
    before is not reused; `translate`, before the checkpoint, does not run again)."""
    def scenario(E):
        llm = Translator()
        graph = _two_nodes(E, llm)
        config = _cfg("review")
        graph.invoke({"source": "A"}, config)
        graph.invoke(E.Command(resume="accept"), config)
        paused = next(s for s in graph.get_state_history(config) if s.next == ("review",))
        replay = graph.invoke(None, paused.config)
        return ([i.value["translation"] for i in replay.get("__interrupt__", [])], llm.calls,
                graph.get_state(config).next)

    ref = differential(scenario)
    assert ref == (["draft #1 of the translation of 'A'"], 1, ("review",))


def test_human_review_claim_a_breakpoint_edit_as_a_node_is_what_the_run_goes_on_with(differential):
    """human_review.ipynb, the breakpoint section: `compile(interrupt_before=["publish"])`
    pauses before `publish` with no question; `update_state(..., as_node="translate")` writes
    the corrected text "as if that node had returned it"; continuing (`invoke(None)`, what the
    button sends) runs only `publish`, on the edit ("One draft call ... `publish` read the
    corrected text"); continuing without the edit publishes the draft as it was ("the
    breakpoint is only a pause")."""
    def scenario(E):
        out = []
        for edit in (True, False):
            llm = Translator()

            def translate(state: Translation):
                return {"translation": llm.draft(state["source"])}

            builder = E.StateGraph(Translation)
            builder.add_node("translate", translate)
            builder.add_node("publish", lambda state: {"approved": True})
            builder.add_edge(E.START, "translate")
            builder.add_edge("translate", "publish")
            builder.add_edge("publish", E.END)
            graph = builder.compile(checkpointer=E.InMemorySaver(), interrupt_before=["publish"])
            config = _cfg("breakpoint")
            first = graph.invoke({"source": "B"}, config)
            paused = graph.get_state(config)
            if edit:
                graph.update_state(config, {"translation": "a corrected translation of 'B'"}, as_node="translate")
            after = graph.get_state(config).next
            out.append((first, paused.next, paused.interrupts, after, graph.invoke(None, config), llm.calls))
        return out

    ref = differential(scenario)
    assert ref[0][1:4] == (("publish",), (), ("publish",))
    assert ref[0][4:] == ({"source": "B", "translation": "a corrected translation of 'B'", "approved": True}, 1)
    assert ref[1][4:] == ({"source": "B", "translation": "draft #1 of the translation of 'B'", "approved": True}, 1)


def _human_review_chat() -> type:
    """The lesson's stand-in chat model: answers with its scripted replies in order (tool
    calls included), counting its calls and noting the tool results it was sent."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChat(BaseChatModel):
        replies: list
        calls: int = 0
        seen: list = []

        @property
        def _llm_type(self) -> str:
            return "scripted-chat"

        def bind_tools(self, tools, **kwargs):
            return self

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            self.seen.append([m.content for m in messages if m.type == "tool"])
            reply = self.replies[min(self.calls, len(self.replies) - 1)]
            self.calls += 1
            return ChatResult(generations=[ChatGeneration(message=AIMessage(**reply))])

    return ScriptedChat


def test_human_review_claim_hitl_middleware_edit_runs_the_tool_once_with_edited_args(differential):
    """human_review.ipynb: LangChain's `create_agent` with `HumanInTheLoopMiddleware` "pauses
    before the tools you name and asks for a decision per proposed call" ... "Its
    interrupt payload is `{"action_requests": [...], "review_configs": [...]}` and it expects
    `{"decisions": [...]}` back" ... "The tool ran once, with the edited arguments"."""
    def scenario(E):
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware
        from langchain_core.tools import tool

        outbox = []

        @tool
        def send_email(to: str, subject: str, body: str) -> str:
            """Send an email."""
            outbox.append({"to": to, "subject": subject, "body": body})
            return f"sent to {to}"

        model = _human_review_chat()(replies=[
            {"content": "", "tool_calls": [{"name": "send_email", "id": "call_1", "args": {
                "to": "bob@example.com", "subject": "Translation", "body": "text"}}]},
            {"content": "Done: the translation is on its way."},
        ])
        agent = create_agent(model, tools=[send_email], middleware=[HumanInTheLoopMiddleware(
            interrupt_on={"send_email": {"allowed_decisions": ["approve", "edit", "reject"]}})],
            checkpointer=E.InMemorySaver())
        if E.root == "lgnb":  # as the lesson does: LangGraph's graph rebuilt on lgnb
            from lgnb.graph import from_langgraph

            agent = from_langgraph(agent)
        config = _cfg("agent")
        first = agent.invoke({"messages": [("user", "Email the approved translation to the client.")]}, config)
        payload = first["__interrupt__"][0].value
        request = payload["action_requests"][0]
        sent_before_decision = list(outbox)
        edited = dict(request["args"], to="alice@example.com")
        done = agent.invoke(E.Command(resume={"decisions": [
            {"type": "edit", "edited_action": {"name": "send_email", "args": edited}}]}), config)
        return (sorted(payload), request["name"], sent_before_decision, list(outbox), model.calls,
                done["messages"][-1].content)

    ref = differential(scenario)
    assert ref == (["action_requests", "review_configs"], "send_email", [],
                   [{"to": "alice@example.com", "subject": "Translation", "body": "text"}], 2,
                   "Done: the translation is on its way.")


# ==========================================================================================
# notebooks/tour.ipynb
# ==========================================================================================


def _tour_agent(E, checkpointer=None):
    """The tour's agent (model node, tool node, conditional edge) with its streaming fake model
    (no delay) and its progress-reporting `add` tool."""
    import json

    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
    from langchain_core.messages.tool import tool_call_chunk
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langchain_core.tools import tool

    class ScriptedChat(BaseChatModel):
        replies: list
        calls: int = 0

        @property
        def _llm_type(self) -> str:
            return "scripted-chat"

        def bind_tools(self, tools, **kwargs):
            return self

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            chunks = [c.message for c in self._stream(messages, stop, run_manager, **kwargs)]
            merged = chunks[0]
            for c in chunks[1:]:
                merged = merged + c
            msg = AIMessage(content=merged.content, tool_calls=merged.tool_calls, id=merged.id)
            return ChatResult(generations=[ChatGeneration(message=msg)])

        def _stream(self, messages, stop=None, run_manager=None, **kwargs):
            reply = self.replies[self.calls % len(self.replies)]
            self.calls += 1
            reply = {"content": reply} if isinstance(reply, str) else reply
            for i, word in enumerate(reply.get("content", "").split(" ")):
                piece = word if i == 0 else " " + word
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
                if run_manager:
                    run_manager.on_llm_new_token(piece, chunk=chunk)
                yield chunk
            for index, call in enumerate(reply.get("tool_calls", [])):
                args = json.dumps(call["args"])
                for j in range(0, len(args), 6):
                    tc = tool_call_chunk(name=call["name"] if j == 0 else None, args=args[j:j + 6],
                                         id=call["id"] if j == 0 else None, index=index)
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[tc]))
                    if run_manager:
                        run_manager.on_llm_new_token("", chunk=chunk)
                    yield chunk

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        writer = E.get_stream_writer()
        for i in range(1, 6):
            writer({"progress": i / 5, "stage": "adding"})
        writer({"note": f"added {a} and {b}"})
        return a + b

    model = ScriptedChat(replies=[
        {"content": "Let me work that out with the add tool.",
         "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}, "id": "call-1"}]},
        "The tool says 2 + 3 = 5.",
    ])
    tools_by_name = {"add": add}

    def agent(state):
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state):
        results = []
        for call in state["messages"][-1].tool_calls:
            output = tools_by_name[call["name"]].invoke(call["args"])
            results.append(ToolMessage(content=str(output), tool_call_id=call["id"], name=call["name"]))
        return {"messages": results}

    def route(state) -> Literal["tools", "__end__"]:
        return "tools" if state["messages"][-1].tool_calls else E.END

    builder = E.StateGraph(E.MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(E.START, "agent")
    builder.add_conditional_edges("agent", route)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def test_tour_claim_messages_mode_streams_the_models_tokens_per_node(differential):
    """tour.ipynb: "`_stream` yields `AIMessageChunk`s — text first, then a tool call whose JSON
    arguments arrive in pieces ... The graph's `messages` stream mode picks them up through
    LangChain's callbacks"; "tokens stream into message bubbles per node"."""
    def scenario(E):
        graph = _tour_agent(E)
        out = []
        for chunk, meta in graph.stream({"messages": [("user", "What is 2 + 3?")]}, stream_mode="messages"):
            out.append((meta["langgraph_node"], meta["langgraph_step"], type(chunk).__name__, chunk.content,
                        [(c["name"], c["args"]) for c in getattr(chunk, "tool_call_chunks", [])]))
        return out

    ref = differential(scenario)
    agent_tokens = [(step, content) for node, step, cls, content, _ in ref if node == "agent" and content]
    assert agent_tokens[:3] == [(1, "Let"), (1, " me"), (1, " work")]
    assert "".join(c for s, c in agent_tokens if s == 3) == "The tool says 2 + 3 = 5."
    args = "".join(a for node, _, _, _, calls in ref for _, a in calls if node == "agent")
    assert args == '{"a": 2, "b": 3}'
    assert ("tools", 2, "ToolMessage", "5", []) in ref


def test_tour_claim_tool_progress_arrives_through_the_stream_writer(differential):
    """tour.ipynb: "The tool reports progress with the graph's stream writer" (the `custom`
    stream mode carries its payloads while the tool runs)."""
    def scenario(E):
        graph = _tour_agent(E)
        return [c for c in graph.stream({"messages": [("user", "What is 2 + 3?")]}, stream_mode="custom")]

    ref = differential(scenario)
    assert ref == [{"progress": i / 5, "stage": "adding"} for i in range(1, 6)] + [{"note": "added 2 and 3"}]


def test_tour_claim_the_agent_run_takes_three_supersteps(differential):
    """tour.ipynb: the run lights "the nodes of the current super-step" from `agent` to `tools`
    and back, and prints "done after 3 steps": LangGraph's checkpoints agree (agent, tools,
    agent in steps 1, 2, 3)."""
    def scenario(E):
        graph = _tour_agent(E, checkpointer=E.InMemorySaver())
        graph.invoke({"messages": [("user", "What is 2 + 3?")]}, _cfg("tour"))
        return [(s.metadata["step"], s.next) for s in reversed(list(graph.get_state_history(_cfg("tour"))))]

    assert differential(scenario) == [(-1, ("__start__",)), (0, ("agent",)), (1, ("tools",)),
                                      (2, ("agent",)), (3, ())]


def test_tour_claim_a_form_resumes_with_command_keyed_by_the_interrupt_id(differential):
    """tour.ipynb: the form's buttons "resume the graph with `Command(resume=...)` on the same
    thread, keyed by the interrupt's id (the graph needs a checkpointer for that)"; the
    review graph ends with "Reviewer said: approved"."""
    def scenario(E):
        def agent(state):
            return {"messages": [("ai", "Here is a short draft answer for the reviewer.")]}

        def review(state):
            answer = E.interrupt({"question": "Send this answer?", "draft": state["messages"][-1].content,
                                  "options": ["approved", "needs work"]})
            return {"messages": [("ai", f"Reviewer said: {answer}")]}

        reviewed = E.StateGraph(E.MessagesState)
        reviewed.add_node("agent", agent)
        reviewed.add_node("review", review)
        reviewed.add_edge(E.START, "agent")
        reviewed.add_edge("agent", "review")
        reviewed.add_edge("review", E.END)
        config = _cfg("review")
        graph = reviewed.compile(checkpointer=E.InMemorySaver())
        first = graph.invoke({"messages": [("user", "Draft something")]}, config)
        pending = first["__interrupt__"][0]
        done = graph.invoke(E.Command(resume={pending.id: "approved"}), config)
        without_saver = capture(lambda: reviewed.compile().invoke(
            E.Command(resume={pending.id: "approved"}), config))
        return pending.value["question"], done["messages"][-1].content, without_saver

    ref = differential(scenario, exc="extends")  # lgnb adds how to fix it to the message
    assert ref[:2] == ("Send this answer?", "Reviewer said: approved")
    assert ref[2] == ("raises", "RuntimeError", "Cannot use Command(resume=...) without checkpointer")


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_human_review_claim_a_deep_agents_write_waits_for_the_decision(differential, decision):
    """human_review.ipynb, its deep agent: "Nothing is written while the call waits: the file
    system *is* the state, and the write is a tool call of the paused step"; approving ran
    `write_file`, whose update went into `files`; *Reject* answers "with a message the model
    reads" (and nothing is written)."""
    pytest.importorskip("deepagents")

    def scenario(E):
        from deepagents import create_deep_agent

        lead = _human_review_chat()(replies=[
            {"content": "", "tool_calls": [{"name": "write_file", "id": "call_w", "args": {
                "file_path": "/report.md", "content": "# Review decisions\n"}}]},
            {"content": "Done."},
        ])
        agent = create_deep_agent(model=lead, interrupt_on={"write_file": True},
                                  checkpointer=E.InMemorySaver())
        if E.root == "lgnb":
            from lgnb.graph import from_langgraph

            agent = from_langgraph(agent)
        config = _cfg("deep")
        paused = agent.invoke({"messages": [("user", "Write the report.")]}, config)
        files_while_paused = sorted(agent.get_state(config).values.get("files") or {})
        answer = {"type": "approve"} if decision == "approve" else {
            "type": "reject", "message": "Not now."}
        done = agent.invoke(E.Command(resume={"decisions": [answer]}), config)
        return ([r["name"] for r in paused["__interrupt__"][0].value["action_requests"]],
                files_while_paused, sorted(done.get("files") or {}), lead.seen[-1])

    ref = differential(scenario)
    assert ref[0] == ["write_file"] and ref[1] == []
    if decision == "approve":
        assert ref[2] == ["/report.md"]
    else:
        assert ref[2] == [] and any("Not now." in text for text in ref[3])

"""Notebook re-runs: the same builder, saver and thread used across cells run again.

In a notebook people re-run cells. They compile one builder twice (with and without a
checkpointer, with other interrupts), keep an old compiled graph next to a new one, reuse
one `InMemorySaver` for two compiled graphs, change the builder after compiling and
compile again, fix a node's code and resume the thread that failed, redefine the state
class and recompile, `importlib.reload` the module that builds the graph, and compile
again while a run of the first graph is still going in another thread. Each test is such
a sequence of "cells"; what the user sees (results, errors, the thread's state and
history, stream chunks, warnings) is compared with LangGraph's.

lgnb keeps per-node facts on compiled nodes (what a node reads, whether it ran quick),
and caches per compiled graph; these tests check none of it leaks from one compiled
graph, or one cell, to the next.
"""

from __future__ import annotations

import importlib
import operator
import re
import sys
import threading
from typing import Annotated, Any

import _diff
from _diff import attempt, capture, collect, normalize, snapshot_summary
from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]
    x: int


def _cfg(thread: str = "nb") -> dict:
    return {"configurable": {"thread_id": thread}}


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _logged():
    return _diff.logged_warnings(first_lines=True)


def _step(name: str):
    """A node appending its name to the log and bumping x."""
    def node(s: dict) -> dict:
        return {"log": [name], "x": s["x"] + 1}

    node.__name__ = name
    return node


def _chain(E, *names: str, state: Any = S):
    """START -> names[0] -> ... -> names[-1] -> END (the builder, not compiled)."""
    g = E.StateGraph(state)
    prev = E.START
    for n in names:
        g.add_node(n, _step(n))
        g.add_edge(prev, n)
        prev = n
    g.add_edge(prev, E.END)
    return g


def _history(app, cfg) -> list:
    """Every checkpoint of the thread, newest first: step, source, next, values, writes."""
    return [
        (s.metadata["step"], s.metadata["source"], s.next, s.values, s.metadata.get("writes"))
        for s in app.get_state_history(cfg)
    ]


def _structure(app) -> tuple:
    """The drawn graph: node ids and (source, target, conditional) edges."""
    g = app.get_graph()
    return sorted(g.nodes), sorted((e.source, e.target, e.conditional) for e in g.edges)


INP = {"log": [], "x": 0}


# =========================================================================================
# one builder, compiled more than once
# =========================================================================================


def test_one_builder_compiled_with_and_without_a_checkpointer_runs_the_same(differential):
    """Cell 1 compiles for a quick try; cell 2 compiles the same builder with a saver.
    Both graphs run; only the second keeps a thread."""
    def scenario(E):
        g = _chain(E, "a", "b")
        quick = g.compile()
        saved = g.compile(checkpointer=E.InMemorySaver())
        return (
            quick.invoke(INP),
            saved.invoke(INP, _cfg()),
            capture(lambda: quick.get_state(_cfg())),
            snapshot_summary(saved.get_state(_cfg())),
            quick.invoke(INP),
        )

    differential(scenario, exc="extends")


def test_one_builder_compiled_with_two_interrupt_settings_keeps_each(differential):
    """`compile(interrupt_before=["b"])` then `compile()` again: the first graph still
    pauses before b, the second runs through; the first's pause survives the second."""
    def scenario(E):
        g = _chain(E, "a", "b")
        saver = E.InMemorySaver()
        paused = g.compile(checkpointer=saver, interrupt_before=["b"])
        through = g.compile(checkpointer=saver)
        r1 = paused.invoke(INP, _cfg("p"))
        r2 = through.invoke(INP, _cfg("t"))
        r3 = paused.invoke(INP, _cfg("p2"))
        return r1, r2, r3, paused.get_state(_cfg("p")).next, through.get_state(_cfg("t")).next

    differential(scenario, expect=(
        {"log": ["a"], "x": 1}, {"log": ["a", "b"], "x": 2}, {"log": ["a"], "x": 1}, ("b",), ()))


def test_interrupt_after_star_and_a_plain_compile_of_one_builder(differential):
    """`interrupt_after="*"` on one compile, nothing on the next: the stream of each."""
    def scenario(E):
        g = _chain(E, "a", "b")
        saver = E.InMemorySaver()
        stepwise = g.compile(checkpointer=saver, interrupt_after="*")
        plain = g.compile(checkpointer=saver)
        return (
            collect(lambda: stepwise.stream(INP, _cfg("s"), stream_mode="updates")),
            collect(lambda: stepwise.stream(None, _cfg("s"), stream_mode="updates")),
            collect(lambda: plain.stream(INP, _cfg("p"), stream_mode="updates")),
        )

    differential(scenario)


def test_compiling_twice_with_names_keeps_each_graph_name(differential):
    """`compile(name="v1")` then `compile(name="v2")`: each graph keeps its own name."""
    def scenario(E):
        g = _chain(E, "a")
        v1 = g.compile(name="v1")
        v2 = g.compile(name="v2")
        return v1.name, v2.name, v1.invoke(INP), v2.invoke(INP)

    differential(scenario)


def test_set_node_defaults_after_a_first_compile_applies_to_the_second(differential):
    """Cell 1 compiles; cell 2 adds `set_node_defaults(retry_policy=...)` and compiles
    again: the new graph retries a flaky node, the old one does not."""
    def scenario(E):
        calls = {"n": 0}

        def flaky(s):
            calls["n"] += 1
            if calls["n"] % 2:
                raise ValueError(f"flake {calls['n']}")
            return {"log": ["flaky"]}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky)
        g.add_edge(E.START, "flaky")
        first = g.compile()
        g.set_node_defaults(retry_policy=E.RetryPolicy(initial_interval=0, jitter=False))
        second = g.compile()
        return capture(lambda: first.invoke(INP)), capture(lambda: second.invoke(INP)), calls["n"]

    differential(scenario)


# =========================================================================================
# changing the builder after compiling
# =========================================================================================


def test_adding_a_node_and_edge_after_compile_warns_and_only_the_new_compile_has_it(differential):
    """Cell 1 compiles a -> END; cell 2 adds b and a -> b and compiles again. Both adds
    log LangGraph's warning; the old graph keeps its structure and result."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _step("a"))
        g.add_edge(E.START, "a")
        old = g.compile()
        with _logged() as lines:
            g.add_node("b", _step("b"))
            g.add_edge("a", "b")
        new = g.compile()
        return lines, old.invoke(INP), new.invoke(INP), _structure(new), sorted(old.nodes)

    differential(scenario, expect=(
        ["Adding a node to a graph that has already been compiled. This will not be reflected in "
         "the compiled graph.",
         "Adding an edge to a graph that has already been compiled. This will not be reflected in "
         "the compiled graph."],
        {"log": ["a"], "x": 1},
        {"log": ["a", "b"], "x": 2},
        (["__end__", "__start__", "a", "b"],
         [("__start__", "a", False), ("a", "b", False), ("b", "__end__", False)]),
        ["__start__", "a"],
    ))


def test_adding_a_conditional_edge_after_compile_leaves_the_old_graph_running_as_before(differential):
    """A router added to the builder after compiling: the old graph still ends after a,
    the recompiled one routes to b."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _step("a"))
        g.add_node("b", _step("b"))
        g.add_edge(E.START, "a")
        old = g.compile()
        with _logged() as lines:
            g.add_conditional_edges("a", lambda s: "b" if s["x"] < 2 else E.END, ["b", E.END])
        new = g.compile()
        return lines, old.invoke(INP), new.invoke(INP), _structure(new)

    differential(scenario)


def test_rerunning_the_add_node_cell_says_the_node_is_already_present(differential):
    """The user fixes a node's code and re-runs only `builder.add_node("a", a)`: the
    builder already has `a`, LangGraph's ValueError (no warning before compile)."""
    def scenario(E):
        g = _chain(E, "a")
        with _logged() as lines:
            err = attempt(lambda: g.add_node("a", _step("a2")))
        return err, lines, g.compile().invoke(INP)

    differential(scenario, exc="extends")


def test_rerunning_add_node_after_compile_warns_then_raises(differential):
    """The same re-run after a compile: the "already compiled" warning, then the error."""
    def scenario(E):
        g = _chain(E, "a")
        g.compile()
        with _logged() as lines:
            err = attempt(lambda: g.add_node("a", _step("a2")))
        return err, lines

    differential(scenario, exc="extends")


def test_rerunning_the_add_edge_cell_adds_nothing_twice(differential):
    """`add_edge("a", "b")` run twice (and `set_entry_point` twice): edges are a set, no
    error, and b still runs once."""
    def scenario(E):
        g = _chain(E, "a", "b")
        with _logged() as lines:
            g.add_edge("a", "b")
            g.set_entry_point("a")
            g.add_edge(["a"], "b")
            g.add_edge(["a"], "b")
        app = g.compile()
        return lines, app.invoke(INP), collect(lambda: app.stream(INP, stream_mode="updates"))

    differential(scenario)


def test_rerunning_the_add_conditional_edges_cell_names_the_existing_branch(differential):
    """`add_conditional_edges("a", route)` run twice: LangGraph's ValueError naming the
    branch, and the graph still routes once."""
    def scenario(E):
        g = _chain(E, "a", "b")

        def route(s):
            return E.END

        g.add_conditional_edges("a", route)
        err = attempt(lambda: g.add_conditional_edges("a", route))
        lam = attempt(lambda: g.add_conditional_edges("b", lambda s: E.END))
        lam2 = attempt(lambda: g.add_conditional_edges("b", lambda s: E.END))
        return err, lam, lam2, g.compile().invoke(INP)

    differential(scenario, exc="extends")


def test_rerunning_add_sequence_names_the_duplicate(differential):
    """`add_sequence([a, b])` re-run: the duplicate-name ValueError of LangGraph."""
    def scenario(E):
        g = E.StateGraph(S)
        seq = [("a", _step("a")), ("b", _step("b"))]
        g.add_sequence(seq)
        return attempt(lambda: g.add_sequence(seq)), attempt(lambda: g.add_sequence([_step("c"), _step("c")]))

    differential(scenario, exc="extends")


def test_an_unconnected_node_added_after_compile_is_allowed_in_the_next_compile(differential):
    """A node added after compile but never wired: the new compile accepts it (LangGraph
    does not check reachability) and it never runs."""
    def scenario(E):
        g = _chain(E, "a")
        g.compile()
        g.add_node("orphan", _step("orphan"))
        app = capture(lambda: g.compile())
        return app.invoke(INP) if not isinstance(app, tuple) else app, _structure(app)

    differential(scenario)


# =========================================================================================
# the old compiled graph next to the new one
# =========================================================================================


def test_old_and_new_compiled_graphs_share_a_saver_and_a_thread(differential):
    """Cell 1: graph v1 (a) runs on thread t. Cell 2: a is extended with b, compiled as
    v2 with the same saver, and run on t again: the thread continues; v1 still reads it."""
    def scenario(E):
        saver = E.InMemorySaver()
        g = _chain(E, "a")
        v1 = g.compile(checkpointer=saver)
        v1.invoke(INP, _cfg())
        g2 = _chain(E, "a", "b")
        v2 = g2.compile(checkpointer=saver)
        r = v2.invoke({"log": ["again"], "x": 10}, _cfg())
        return r, _history(v2, _cfg()), snapshot_summary(v1.get_state(_cfg()))

    differential(scenario)


def test_a_thread_paused_by_the_old_graph_resumes_in_the_new_one(differential):
    """v1 paused before b (interrupt_before); the user recompiles without the interrupt,
    same saver, and resumes with `invoke(None, cfg)`: b runs."""
    def scenario(E):
        saver = E.InMemorySaver()
        g = _chain(E, "a", "b", "c")
        v1 = g.compile(checkpointer=saver, interrupt_before=["b"])
        v1.invoke(INP, _cfg())
        v2 = g.compile(checkpointer=saver)
        return (
            collect(lambda: v2.stream(None, _cfg(), stream_mode="updates")),
            _history(v2, _cfg()),
        )

    differential(scenario)


def test_a_node_interrupt_resumed_by_a_recompiled_graph(differential):
    """A node calls `interrupt()`; the user re-runs the compile cell (new graph, same
    saver) and resumes with `Command(resume=...)`: the answer reaches the node."""
    def scenario(E):
        saver = E.InMemorySaver()

        def build():
            def ask(s):
                answer = E.interrupt({"q": "name?"})
                return {"log": [f"hi {answer}"]}

            g = E.StateGraph(S)
            g.add_node("ask", ask)
            g.add_edge(E.START, "ask")
            return g.compile(checkpointer=saver)

        first = build()
        out1 = first.invoke(INP, _cfg())
        second = build()
        out2 = second.invoke(E.Command(resume="ada"), _cfg())
        return out1, out2, snapshot_summary(first.get_state(_cfg())), _history(second, _cfg())

    differential(scenario)


def test_fixing_a_failed_nodes_code_and_resuming_runs_the_new_code(differential):
    """The classic notebook loop: node b raises, the user fixes b's cell, recompiles with
    the same saver and resumes with `invoke(None, cfg)`: a is not re-run, the fixed b is."""
    def scenario(E):
        saver = E.InMemorySaver()
        runs: list[str] = []

        def a(s):
            runs.append("a")
            return {"log": ["a"]}

        def b_buggy(s):
            runs.append("b_buggy")
            return {"log": ["b"], "x": s["missing"]}

        def b_fixed(s):
            runs.append("b_fixed")
            return {"log": ["b"], "x": 1}

        def build(b):
            g = E.StateGraph(S)
            g.add_node("a", a)
            g.add_node("b", b)
            g.add_edge(E.START, "a")
            g.add_edge("a", "b")
            return g.compile(checkpointer=saver)

        err = capture(lambda: build(b_buggy).invoke(INP, _cfg()))
        app = build(b_fixed)
        failed = snapshot_summary(app.get_state(_cfg()), errors=True)
        return err, failed, app.invoke(None, _cfg()), runs, _history(app, _cfg())

    differential(scenario)


def test_a_thread_waiting_on_a_node_the_new_graph_renamed(differential):
    """v1 paused before `review`; the user renames the node to `check` and recompiles:
    the thread's next is still `review`, and resuming runs nothing the new graph lacks."""
    def scenario(E):
        saver = E.InMemorySaver()
        v1 = _chain(E, "a", "review").compile(checkpointer=saver, interrupt_before=["review"])
        v1.invoke(INP, _cfg())
        v2 = _chain(E, "a", "check").compile(checkpointer=saver)
        return (
            snapshot_summary(v2.get_state(_cfg())),
            capture(lambda: collect(lambda: v2.stream(None, _cfg(), stream_mode="updates"))),
            snapshot_summary(v2.get_state(_cfg())),
        )

    differential(scenario, exc="extends")


def test_a_subgraph_recompiled_without_recompiling_the_parent_keeps_the_old_one(differential):
    """Cell 1 compiles a subgraph; cell 2 builds the parent with it; cell 1 is re-run
    with a change but cell 2 is not: the parent still runs the old subgraph."""
    def scenario(E):
        sub_v1 = _chain(E, "inner").compile()
        parent = E.StateGraph(S)
        parent.add_node("sub", sub_v1)
        parent.add_edge(E.START, "sub")
        app = parent.compile()
        sub_v2 = _chain(E, "inner", "inner2").compile()  # re-run of cell 1
        return app.invoke(INP), sub_v2.invoke(INP), app.invoke(INP)

    differential(scenario)


def test_two_graphs_on_one_saver_keep_their_threads_apart(differential):
    """Two different graphs compiled with one saver (re-used variable), each on its own
    thread: each history holds its own runs only."""
    def scenario(E):
        saver = E.InMemorySaver()
        g1 = _chain(E, "a").compile(checkpointer=saver)
        g2 = _chain(E, "b", "c").compile(checkpointer=saver)
        g1.invoke(INP, _cfg("one"))
        g2.invoke(INP, _cfg("two"))
        g1.invoke(INP, _cfg("one"))
        return _history(g1, _cfg("one")), _history(g2, _cfg("two")), sorted(
            {c.config["configurable"]["thread_id"] for c in saver.list(None)})

    differential(scenario)


# =========================================================================================
# re-running the invoke cell on the same thread
# =========================================================================================


def test_rerunning_the_invoke_cell_continues_the_thread(differential):
    """`app.invoke({"log": ["hi"], "x": 0}, cfg)` run three times: the reducer key grows,
    the plain key is reset by the input, and the history has every run."""
    def scenario(E):
        app = _chain(E, "a", "b").compile(checkpointer=E.InMemorySaver())
        outs = [app.invoke({"log": ["hi"], "x": 0}, _cfg()) for _ in range(3)]
        return outs, _history(app, _cfg())

    differential(scenario)


def test_rerunning_invoke_with_none_on_a_finished_thread(differential):
    """`app.invoke(None, cfg)` after the thread finished: nothing runs, the state is
    returned, no checkpoint is added; the stream is empty."""
    def scenario(E):
        app = _chain(E, "a").compile(checkpointer=E.InMemorySaver())
        app.invoke(INP, _cfg())
        return (
            app.invoke(None, _cfg()),
            collect(lambda: app.stream(None, _cfg(), stream_mode="updates")),
            len(_history(app, _cfg())),
        )

    differential(scenario)


def test_new_input_on_a_thread_paused_before_a_node_starts_over(differential):
    """The thread is paused before b; the user re-runs the invoke cell with input instead
    of None: a runs again and the thread pauses before b again."""
    def scenario(E):
        app = _chain(E, "a", "b").compile(checkpointer=E.InMemorySaver(), interrupt_before=["b"])
        r1 = app.invoke(INP, _cfg())
        r2 = app.invoke({"log": ["again"], "x": 5}, _cfg())
        return r1, r2, _history(app, _cfg())

    differential(scenario)


def test_new_input_on_a_thread_paused_in_interrupt(differential):
    """A node paused in `interrupt()`; the user re-runs the first invoke cell (input, not
    a resume): the run starts over and pauses again at a new interrupt."""
    def scenario(E):
        def ask(s):
            return {"log": [E.interrupt("ok?")]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app = g.compile(checkpointer=E.InMemorySaver())
        r1 = app.invoke(INP, _cfg())
        r2 = app.invoke(INP, _cfg())
        r3 = app.invoke(E.Command(resume="yes"), _cfg())
        return r1, r2, r3, [snapshot_summary(s) for s in app.get_state_history(_cfg())]

    differential(scenario)


def test_rerunning_update_state_twice_adds_two_checkpoints(differential):
    """`app.update_state(cfg, {"log": ["note"]})` re-run: the reducer applies twice and
    each call is its own checkpoint."""
    def scenario(E):
        app = _chain(E, "a").compile(checkpointer=E.InMemorySaver())
        app.invoke(INP, _cfg())
        app.update_state(_cfg(), {"log": ["note"]})
        app.update_state(_cfg(), {"log": ["note"]})
        return _history(app, _cfg())

    differential(scenario)


# =========================================================================================
# with_config and copy
# =========================================================================================


def test_with_config_thread_id_then_invoke_without_config(differential):
    """`app = app.with_config(configurable={"thread_id": "t"})` so later cells can call
    `app.invoke(x)`: every call continues thread t."""
    def scenario(E):
        app = _chain(E, "a").compile(checkpointer=E.InMemorySaver())
        bound = app.with_config(configurable={"thread_id": "t"})
        bound.invoke(INP)
        r = bound.invoke({"log": ["more"], "x": 0})
        return r, _history(app, _cfg("t")), snapshot_summary(bound.get_state(_cfg("t")))

    differential(scenario)


def test_with_config_chained_keeps_both_configurables(differential):
    """`app.with_config(configurable={"thread_id": "t"})` and, in a later cell,
    `.with_config(configurable={"user": "u"})`: the node sees both keys, and the thread is
    still t."""
    def scenario(E):
        def who(s, config):
            c = config["configurable"]
            return {"log": [(c.get("thread_id"), c.get("user"))]}

        g = E.StateGraph(S)
        g.add_node("who", who)
        g.add_edge(E.START, "who")
        app = g.compile(checkpointer=E.InMemorySaver())
        bound = app.with_config(configurable={"thread_id": "t"}).with_config(configurable={"user": "u"})
        return capture(lambda: bound.invoke(INP)), capture(lambda: app.get_state(_cfg("t")).values)

    differential(scenario)


def test_with_config_recursion_limit_applies_only_to_the_copy(differential):
    """`limited = app.with_config(recursion_limit=2)`: the copy stops with
    GraphRecursionError, the original graph still runs the loop to the end."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _step("a"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "a" if s["x"] < 4 else E.END)
        app = g.compile()
        limited = app.with_config(recursion_limit=2)
        return capture(lambda: limited.invoke(INP)), app.invoke(INP), capture(lambda: limited.invoke(INP))

    differential(scenario, exc="extends")


def test_with_config_copies_do_not_share_what_nodes_learn(differential):
    """A node that reads its config runs first in a `with_config` copy, then in the
    original: each run sees its own config (tags, configurable)."""
    def scenario(E):
        def seen(s):
            c = E.get_config()
            return {"log": [(sorted(c.get("tags", [])), c["configurable"].get("who"))]}

        g = E.StateGraph(S)
        g.add_node("seen", seen)
        g.add_edge(E.START, "seen")
        app = g.compile()
        tagged = app.with_config(tags=["t1"], configurable={"who": "copy"})
        return tagged.invoke(INP), app.invoke(INP), tagged.invoke(INP, {"configurable": {"who": "call"}})

    differential(scenario)


def test_copy_with_a_new_name_runs_and_streams_as_the_original(differential):
    """`app.copy(update={"name": "renamed"})`: the name changes, results and stream do not."""
    def scenario(E):
        app = _chain(E, "a", "b").compile()
        other = app.copy(update={"name": "renamed"})
        return (
            app.name, other.name, other.invoke(INP),
            collect(lambda: other.stream(INP, stream_mode="updates")), app.invoke(INP),
        )

    differential(scenario)


def test_copy_with_interrupt_before_pauses_only_the_copy(differential):
    """`app.copy(update={"interrupt_before_nodes": ["b"]})` on a graph with a saver: the
    copy pauses before b, the original does not."""
    def scenario(E):
        app = _chain(E, "a", "b").compile(checkpointer=E.InMemorySaver())
        paused = app.copy(update={"interrupt_before_nodes": ["b"]})
        return (
            paused.invoke(INP, _cfg("p")), app.invoke(INP, _cfg("o")),
            paused.get_state(_cfg("p")).next, app.get_state(_cfg("o")).next,
        )

    differential(scenario)


def test_copy_with_a_checkpointer_adds_persistence(differential):
    """`app.copy(update={"checkpointer": saver})` on a graph compiled without one: the copy
    keeps threads, the original still has none."""
    def scenario(E):
        app = _chain(E, "a").compile()
        saved = app.copy(update={"checkpointer": E.InMemorySaver()})
        saved.invoke(INP, _cfg())
        return snapshot_summary(saved.get_state(_cfg())), capture(lambda: app.get_state(_cfg()))

    differential(scenario, exc="extends")


# =========================================================================================
# redefining the state class
# =========================================================================================


def test_state_class_redefined_with_the_same_fields_continues_the_thread(differential):
    """The state cell is re-run (a new class `S` with the same fields) and the graph is
    recompiled with the same saver: the thread saved under the old class continues."""
    def scenario(E):
        saver = E.InMemorySaver()

        def define():
            class S(TypedDict):
                log: Annotated[list, operator.add]
                x: int

            return S

        _chain(E, "a", state=define()).compile(checkpointer=saver).invoke(INP, _cfg())
        app = _chain(E, "a", "b", state=define()).compile(checkpointer=saver)
        return app.invoke({"log": ["2"], "x": 0}, _cfg()), _history(app, _cfg())

    differential(scenario)


def test_state_class_redefined_with_a_new_field_reads_the_old_thread(differential):
    """The user adds a field `note: str` to the state and recompiles: the old thread has
    no `note`; a node reading it with `.get` sees None, then writes it."""
    def scenario(E):
        saver = E.InMemorySaver()
        _chain(E, "a").compile(checkpointer=saver).invoke(INP, _cfg())

        class S2(TypedDict):
            log: Annotated[list, operator.add]
            x: int
            note: str

        def noter(s):
            return {"log": [("note", s.get("note"))], "note": "set"}

        g = E.StateGraph(S2)
        g.add_node("noter", noter)
        g.add_edge(E.START, "noter")
        app = g.compile(checkpointer=saver)
        before = snapshot_summary(app.get_state(_cfg()))
        return before, app.invoke(None, _cfg()), app.invoke({"x": 1}, _cfg()), _history(app, _cfg())

    differential(scenario)


def test_state_class_redefined_with_a_reducer_on_an_old_plain_key(differential):
    """`x: int` becomes `x: Annotated[int, operator.add]` in the re-run state cell: the
    saved x is the start value the new reducer adds to."""
    def scenario(E):
        saver = E.InMemorySaver()
        _chain(E, "a").compile(checkpointer=saver).invoke({"log": [], "x": 5}, _cfg())

        class S2(TypedDict):
            log: Annotated[list, operator.add]
            x: Annotated[int, operator.add]

        g = E.StateGraph(S2)
        g.add_node("inc", lambda s: {"x": 10})
        g.add_edge(E.START, "inc")
        app = g.compile(checkpointer=saver)
        return app.invoke({"x": 1}, _cfg()), _history(app, _cfg())

    differential(scenario)


def test_state_key_dropped_from_the_redefined_class(differential):
    """The re-run state cell drops `x`: the new graph's state and output leave the old
    thread's x out, and the node cannot write it."""
    def scenario(E):
        saver = E.InMemorySaver()
        _chain(E, "a").compile(checkpointer=saver).invoke({"log": [], "x": 5}, _cfg())

        class Slim(TypedDict):
            log: Annotated[list, operator.add]

        g = E.StateGraph(Slim)
        g.add_node("b", lambda s: {"log": [sorted(s)]})
        g.add_edge(E.START, "b")
        app = g.compile(checkpointer=saver)
        return app.invoke({"log": ["2"]}, _cfg()), snapshot_summary(app.get_state(_cfg()))

    differential(scenario)


# =========================================================================================
# importlib.reload of the module that builds the graph
# =========================================================================================


_MODULE = '''
import operator
from typing import Annotated
from typing_extensions import TypedDict
from {root}.graph import StateGraph, START, END


class State(TypedDict):
    log: Annotated[list, operator.add]


def {node}(state):
    return {{"log": ["{node}"]}}


def build(checkpointer=None):
    g = StateGraph(State)
    g.add_node("{node}", {node})
    g.add_edge(START, "{node}")
    g.add_edge("{node}", END)
    return g.compile(checkpointer=checkpointer)
'''


def test_reloaded_graph_module_continues_a_thread_with_the_new_code(differential, tmp_path):
    """`import agent; app = agent.build(saver)`; the user edits agent.py (renames the
    node) and runs `importlib.reload(agent)`; the rebuilt graph continues the thread;
    the graph built before the reload still runs the old code."""
    def scenario(E):
        d = tmp_path / E.label.replace("(", "_").replace(")", "")
        d.mkdir()
        path = d / f"nb_agent_{E.label.replace('(', '_').replace(')', '')}.py"
        modname = path.stem
        path.write_text(_MODULE.format(root=E.root, node="first"))
        sys.path.insert(0, str(d))
        try:
            mod = importlib.import_module(modname)
            saver = E.InMemorySaver()
            old = mod.build(saver)
            r1 = old.invoke({"log": []}, _cfg())
            path.write_text(_MODULE.format(root=E.root, node="second") + "\n# edited\n")
            importlib.invalidate_caches()
            mod = importlib.reload(mod)
            new = mod.build(saver)
            r2 = new.invoke({"log": ["again"]}, _cfg())
            r3 = old.invoke({"log": ["old"]}, _cfg("other"))
            return r1, r2, r3, _history(new, _cfg())
        finally:
            sys.path.remove(str(d))
            sys.modules.pop(modname, None)

    differential(scenario)


# =========================================================================================
# compiling again while a run is going
# =========================================================================================


def test_compiling_and_running_again_while_the_first_graph_runs_in_a_thread(differential):
    """A run of graph v1 is blocked in node a (another thread); meanwhile the user
    compiles the same builder again, with a saver, and runs it to the end; then v1's run
    finishes with its own result."""
    def scenario(E):
        started, release = threading.Event(), threading.Event()

        def a(s):
            if s["x"] == 0:
                started.set()
                release.wait(5)
            return {"log": ["a"], "x": s["x"] + 1}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", _step("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        v1 = g.compile()
        box: dict[str, Any] = {}
        t = threading.Thread(target=lambda: box.update(r=v1.invoke(INP)))
        t.start()
        started.wait(5)
        v2 = g.compile(checkpointer=E.InMemorySaver())
        r2 = v2.invoke({"log": [], "x": 10}, _cfg())
        release.set()
        t.join(5)
        return box.get("r"), r2, _history(v2, _cfg())

    differential(scenario)


def test_the_same_node_function_in_two_graphs_sees_each_graphs_config(differential):
    """One node function (reading its config on one graph, not on the other) added to
    two builders in two cells: each graph runs it with its own config and state."""
    def scenario(E):
        def node(s, config=None):
            tid = (config or {}).get("configurable", {}).get("thread_id")
            return {"log": [tid], "x": s["x"] + 1}

        def build(saver):
            g = E.StateGraph(S)
            g.add_node("n", node)
            g.add_edge(E.START, "n")
            return g.compile(checkpointer=saver)

        one = build(E.InMemorySaver())
        two = build(None)
        out = []
        for _ in range(3):  # re-run the cell: the nodes' learned facts must not matter
            out.append((one.invoke(INP, _cfg("t1")), two.invoke(INP)))
        return out

    differential(scenario)


# =========================================================================================
# more cells re-run: caches, messages, the functional API, concurrent graphs
# =========================================================================================


def test_a_node_cache_shared_by_two_compiles_serves_the_redefined_node(differential):
    """One `InMemoryCache` passed to two compiles; between them the node's cell is re-run
    with new code (same function name): the cache key is the node's name and input, so
    the second graph gets the old node's cached result, as in LangGraph, until cleared."""
    from langgraph.cache.memory import InMemoryCache

    def scenario(E):
        cache = InMemoryCache()

        def build(version: str):
            def work(s):
                return {"log": [version]}

            g = E.StateGraph(S)
            g.add_node("work", work, cache_policy=E.CachePolicy())
            g.add_edge(E.START, "work")
            return g.compile(cache=cache)

        first = build("v1")
        r1 = first.invoke(INP)
        second = build("v2")
        r2 = second.invoke(INP)
        second.clear_cache()
        r3 = second.invoke(INP)
        return r1, r2, r3, first.invoke(INP)

    differential(scenario, expect=({"log": ["v1"], "x": 0}, {"log": ["v1"], "x": 0},
                                   {"log": ["v2"], "x": 0}, {"log": ["v2"], "x": 0}))


def test_rerunning_a_cell_that_sends_a_message_with_a_fixed_id_replaces_it(differential):
    """`app.invoke({"messages": [HumanMessage("hi", id="q1")]}, cfg)` run twice: the
    message with the same id is replaced, not appended; the reply ids differ so both
    replies stay."""
    from langchain_core.messages import AIMessage, HumanMessage

    def scenario(E):
        turn = {"n": 0}

        def bot(s):
            turn["n"] += 1
            return {"messages": [AIMessage(f"reply {turn['n']}", id=f"r{turn['n']}")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("bot", bot)
        g.add_edge(E.START, "bot")
        app = g.compile(checkpointer=E.InMemorySaver())
        for _ in range(2):
            app.invoke({"messages": [HumanMessage("hi", id="q1")]}, _cfg())
        return [(m.type, m.content, m.id) for m in app.get_state(_cfg()).values["messages"]]

    differential(scenario, expect=[("human", "hi", "q1"), ("ai", "reply 1", "r1"), ("ai", "reply 2", "r2")])


def test_an_entrypoint_redefined_with_the_same_saver_sees_previous(differential):
    """The `@entrypoint(checkpointer=saver)` cell is re-run with new code: on the same
    thread, `previous` is what the old version returned."""
    def scenario(E):
        saver = E.InMemorySaver()

        @E.func.entrypoint(checkpointer=saver)
        def counter(n: int, *, previous: Any = None) -> int:
            return (previous or 0) + n

        a = counter.invoke(1, _cfg())

        @E.func.entrypoint(checkpointer=saver)
        def counter(n: int, *, previous: Any = None) -> int:  # noqa: F811 - the re-run cell
            return (previous or 0) * 10 + n

        b = counter.invoke(2, _cfg())
        return a, b, counter.get_state(_cfg()).values

    differential(scenario, expect=(1, 12, 12))


def test_a_task_fixed_between_cells_reruns_on_resume(differential):
    """A `@task` fails inside an entrypoint; the user fixes the task and the entrypoint
    cells and resumes the thread with `invoke(None, cfg)`: the finished task is not re-run,
    the fixed one is."""
    def scenario(E):
        saver = E.InMemorySaver()
        runs: list[str] = []

        def define(fixed: bool):
            @E.func.task
            def fetch(x: int) -> int:
                runs.append("fetch")
                return x + 1

            @E.func.task
            def parse(x: int) -> int:
                runs.append(f"parse fixed={fixed}")
                if not fixed:
                    raise ValueError("parse bug")
                return x * 2

            @E.func.entrypoint(checkpointer=saver)
            def pipeline(x: int) -> int:
                return parse(fetch(x).result()).result()

            return pipeline

        err = capture(lambda: define(False).invoke(1, _cfg()))
        fixed = define(True)
        return err, fixed.invoke(None, _cfg()), runs

    differential(scenario)


def test_update_state_as_a_node_the_new_graph_no_longer_has(differential):
    """The thread was run by v1 (node `review`); v2 renamed it to `check`. A cell still
    says `update_state(cfg, ..., as_node="review")`: LangGraph's InvalidUpdateError."""
    def scenario(E):
        saver = E.InMemorySaver()
        _chain(E, "a", "review").compile(checkpointer=saver).invoke(INP, _cfg())
        v2 = _chain(E, "a", "check").compile(checkpointer=saver)
        return (
            attempt(lambda: v2.update_state(_cfg(), {"x": 9}, as_node="review")),
            attempt(lambda: v2.update_state(_cfg(), {"x": 9}, as_node="check")),
            snapshot_summary(v2.get_state(_cfg())),
        )

    differential(scenario, exc="extends")


def test_two_compiles_of_one_fan_out_builder_run_at_once_in_two_threads(differential):
    """Cell A runs graph v1 in a background thread while cell B runs v2 (the same
    builder compiled again) in the foreground, several times over: each run's result is
    its own (parallel branches join before the end)."""
    def scenario(E):
        g = E.StateGraph(S)
        for n in ("left", "right"):
            g.add_node(n, lambda s, n=n: {"log": [n]})
            g.add_edge(E.START, n)
        g.add_node("join", lambda s: {"x": len(s["log"])})
        g.add_edge(["left", "right"], "join")
        v1, v2 = g.compile(), g.compile(checkpointer=E.InMemorySaver())
        box: dict[str, list] = {"bg": []}

        def background():
            for _ in range(20):
                box["bg"].append(v1.invoke({"log": ["bg"], "x": 0}))

        t = threading.Thread(target=background)
        t.start()
        fg = [v2.invoke({"log": ["fg"], "x": 0}, _cfg(f"t{i}")) for i in range(20)]
        t.join(10)

        def canon(r):
            return sorted(r["log"]), r["x"]

        return sorted({repr(canon(r)) for r in box["bg"]}), sorted({repr(canon(r)) for r in fg})

    differential(scenario)


def test_a_subgraph_compiled_once_and_used_by_two_parent_versions(differential):
    """The subgraph (with an interrupt) is compiled in one cell; the parent cell is run
    twice (two parent graphs, one saver): a pause under parent v1 resumes under v2."""
    def scenario(E):
        def approve(s):
            return {"log": [f"approved={E.interrupt('approve?')}"]}

        sg = E.StateGraph(S)
        sg.add_node("approve", approve)
        sg.add_edge(E.START, "approve")
        sub = sg.compile()
        saver = E.InMemorySaver()

        def parent():
            p = E.StateGraph(S)
            p.add_node("sub", sub)
            p.add_edge(E.START, "sub")
            return p.compile(checkpointer=saver)

        v1 = parent()
        r1 = v1.invoke(INP, _cfg())
        v2 = parent()
        r2 = v2.invoke(E.Command(resume="yes"), _cfg())
        return r1, r2, snapshot_summary(v1.get_state(_cfg(), subgraphs=True))

    differential(scenario)


def test_pydantic_state_redefined_with_a_defaulted_field_reads_the_old_thread(differential):
    """A pydantic state cell is re-run with a new field that has a default: the node of
    the recompiled graph sees the default on the thread saved without it."""
    from pydantic import BaseModel

    def scenario(E):
        saver = E.InMemorySaver()

        class PS(BaseModel):
            log: Annotated[list, operator.add] = []

        g = E.StateGraph(PS)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_edge(E.START, "a")
        g.compile(checkpointer=saver).invoke({"log": []}, _cfg())

        class PS(BaseModel):  # type: ignore[no-redef]  # noqa: F811 - the re-run cell
            log: Annotated[list, operator.add] = []
            mood: str = "calm"

        g2 = E.StateGraph(PS)
        g2.add_node("b", lambda s: {"log": [f"b {s.mood}"]})
        g2.add_edge(E.START, "b")
        app = g2.compile(checkpointer=saver)
        return app.invoke({"log": []}, _cfg()), app.get_state(_cfg()).values

    differential(scenario)


async def test_rerunning_the_ainvoke_cell_continues_the_thread(differential):
    """`await app.ainvoke(x, cfg)` run twice, then `astream` once more: one thread."""
    async def scenario(E):
        app = _chain(E, "a", "b").compile(checkpointer=E.InMemorySaver())
        r1 = await app.ainvoke({"log": ["1"], "x": 0}, _cfg())
        r2 = await app.ainvoke({"log": ["2"], "x": 0}, _cfg())
        chunks = [c async for c in app.astream({"log": ["3"], "x": 0}, _cfg(), stream_mode="values")]
        return r1, r2, chunks, [s.metadata["step"] async for s in app.aget_state_history(_cfg())]

    differential(scenario)


def test_the_old_graph_is_drawn_and_described_as_compiled_after_builder_edits(differential):
    """After compiling, the user adds a node that reads a private key (its own input
    schema), edges and a router to the builder: the old graph's drawing, schemas, and
    `values` stream are those it was compiled with; the new graph shows the additions."""
    def scenario(E):
        class Private(TypedDict):
            x: int
            scratch: str

        g = _chain(E, "a")
        old = g.compile()
        g.add_node("peek", lambda s: {"log": [s.get("scratch")]}, input_schema=Private)
        g.add_edge("a", "peek")
        g.add_conditional_edges("peek", lambda s: E.END, [E.END])
        new = g.compile()
        return (
            _structure(old), _structure(new),
            sorted(old.get_input_jsonschema()["properties"]),
            sorted(old.get_output_jsonschema()["properties"]),
            sorted(new.get_output_jsonschema()["properties"]),
            collect(lambda: old.stream(INP, stream_mode="values")),
            collect(lambda: new.stream(INP, stream_mode="values")),
        )

    differential(scenario)


def test_a_failed_compile_fixed_by_adding_the_missing_node(differential):
    """Compile fails on an edge to a node not added yet; the user adds it in the next
    cell (no "already compiled" warning: nothing compiled) and compiles again."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _step("a"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        err = attempt(lambda: g.compile())
        with _logged() as lines:
            g.add_node("b", _step("b"))
        return err, lines, g.compile().invoke(INP)

    differential(scenario, exc="extends")


def test_a_compile_with_an_unknown_interrupt_node_then_fixed(differential):
    """`compile(interrupt_before=["reveiw"])` (typo) fails; the corrected compile of the
    same builder works and pauses there."""
    def scenario(E):
        g = _chain(E, "a", "review")
        saver = E.InMemorySaver()
        err = attempt(lambda: g.compile(checkpointer=saver, interrupt_before=["reveiw"]))
        with _logged() as lines:
            g.add_edge("review", E.END)
        app = g.compile(checkpointer=saver, interrupt_before=["review"])
        return err, lines, app.invoke(INP, _cfg()), app.get_state(_cfg()).next

    differential(scenario, exc="extends")


def test_default_error_handler_builder_compiles_again_in_lgnb():
    """Deliberate difference: `set_node_defaults(error_handler=...)`, compile, then (a
    later cell) add another failing node and compile again. LangGraph 1.2's second
    compile raises "Auto-generated default error handler node ... already exists": its
    first compile added that node to the builder, so a builder with a default handler
    compiles once only, and re-running a compile cell breaks. lgnb recognises its own
    handler node and compiles again: both graphs route failures to the handler, each
    with its own nodes. (A user node of that name is still an error on both.)"""
    def scenario(E):
        def handler(s, error):
            return {"log": [f"handled {error.node}"]}

        # (the file's annotations are strings, unresolvable here: set the real one)
        handler.__annotations__["error"] = E.errors.NodeError

        def boom(s):
            raise ValueError("boom")

        g = E.StateGraph(S)
        g.add_node("a", boom)
        g.add_edge(E.START, "a")
        g.set_node_defaults(error_handler=handler)
        first = g.compile()
        g.add_node("b", boom)
        g.add_edge(E.START, "b")
        second = capture(lambda: g.compile())
        if isinstance(second, tuple):
            return first.invoke(INP), second
        return first.invoke(INP), second.invoke(INP), sorted(first.nodes), sorted(second.nodes)

    ref = scenario(_diff.reference_engine())
    assert ref == ({"log": ["handled a"], "x": 0}, (
        "raises", "ValueError",
        "Auto-generated default error handler node `__default_error_handler__` already exists."))
    E = _diff.candidate_engine()
    got = scenario(E)
    if E.root == "langgraph":
        assert got == ref
    else:
        assert got == (
            {"log": ["handled a"], "x": 0}, {"log": ["handled a", "handled b"], "x": 0},
            ["__default_error_handler__", "__start__", "a"],
            ["__default_error_handler__", "__start__", "a", "b"],
        )


def test_parallel_nodes_quick_on_the_first_run_wait_for_each_other_on_the_next(differential):
    """Cell re-run with a flag flipped: two parallel nodes that returned at once on the
    first run now wait for each other (a barrier) on the second; the run still finishes,
    as in LangGraph where parallel nodes overlap."""
    def scenario(E):
        flags = {"wait": False}
        barrier = threading.Barrier(2, timeout=5)

        def side(name):
            def node(s):
                if flags["wait"]:
                    barrier.wait()
                return {"log": [name]}
            return node

        g = E.StateGraph(S)
        for n in ("left", "right"):
            g.add_node(n, side(n))
            g.add_edge(E.START, n)
        app = g.compile()
        first = sorted(app.invoke(INP)["log"])
        flags["wait"] = True
        second = capture(lambda: sorted(app.invoke(INP)["log"]))
        third = capture(lambda: sorted(app.invoke(INP)["log"]))
        return first, second, third

    differential(scenario, expect=(["left", "right"], ["left", "right"], ["left", "right"]))


_DATA_MODULE = '''
import dataclasses
import operator
from typing import Annotated
from typing_extensions import TypedDict
from {root}.graph import StateGraph, START, END


@dataclasses.dataclass
class Note:
    text: str


class State(TypedDict):
    notes: Annotated[list[Note], operator.add]


def build(checkpointer=None):
    g = StateGraph(State)
    g.add_node("write", lambda s: {{"notes": [Note("{text}")]}})
    g.add_edge(START, "write")
    g.add_edge("write", END)
    return g.compile(checkpointer=checkpointer)
'''


def test_reloaded_module_reads_saved_dataclass_values_as_the_new_class(differential, tmp_path):
    """The state holds a module-level dataclass `Note`; after `importlib.reload` the
    module's `Note` is a new class: the thread's saved notes load as instances of the
    class the module defines now (found by module and name), old and new alike."""
    def scenario(E):
        tag = E.label.replace("(", "_").replace(")", "")
        d = tmp_path / f"data_{tag}"
        d.mkdir()
        path = d / f"nb_notes_{tag}.py"
        modname = path.stem
        path.write_text(_DATA_MODULE.format(root=E.root, text="one"))
        sys.path.insert(0, str(d))
        try:
            mod = importlib.import_module(modname)
            saver = E.InMemorySaver()
            mod.build(saver).invoke({"notes": []}, _cfg())
            old_class = mod.Note
            path.write_text(_DATA_MODULE.format(root=E.root, text="two") + "\n# edited\n")
            importlib.invalidate_caches()
            mod = importlib.reload(mod)
            app = mod.build(saver)
            out = app.invoke({"notes": []}, _cfg())
            notes = app.get_state(_cfg()).values["notes"]
            return (
                [n.text for n in out["notes"]],
                [(n.text, type(n) is mod.Note, type(n) is old_class) for n in notes],
                mod.Note is not old_class,
            )
        finally:
            sys.path.remove(str(d))
            sys.modules.pop(modname, None)

    differential(scenario)


def test_with_config_chained_tags_and_metadata_accumulate(differential):
    """`app.with_config(tags=["a"], metadata={"m": 1})` then, in a later cell,
    `.with_config(tags=["b"], metadata={"n": 2})`: the node's config has both tags and
    both metadata keys, as after one call with all of them."""
    def scenario(E):
        def seen(s):
            c = E.get_config()
            md = c.get("metadata", {})
            return {"log": [(list(c.get("tags", [])), md.get("m"), md.get("n"))]}

        g = E.StateGraph(S)
        g.add_node("seen", seen)
        g.add_edge(E.START, "seen")
        app = g.compile()
        chained = app.with_config(tags=["a"], metadata={"m": 1}).with_config(tags=["b"], metadata={"n": 2})
        both = app.with_config({"tags": ["x"], "configurable": {"k": 1}}, configurable={"j": 2})
        return chained.invoke(INP), sorted(both.config["configurable"].items()), both.config["tags"]

    differential(scenario)


def test_going_back_to_the_old_graph_variable_after_the_new_one_added_a_key(differential):
    """v2 (a state with one more key) ran on the thread; a later cell still uses the old
    variable v1: it reads and continues the thread, leaving the key it does not know out
    of its state, while v2 still sees it."""
    def scenario(E):
        saver = E.InMemorySaver()
        v1 = _chain(E, "a").compile(checkpointer=saver)
        v1.invoke(INP, _cfg())

        class S2(TypedDict):
            log: Annotated[list, operator.add]
            x: int
            note: str

        g = E.StateGraph(S2)
        g.add_node("noter", lambda s: {"note": "kept", "log": ["noter"]})
        g.add_edge(E.START, "noter")
        v2 = g.compile(checkpointer=saver)
        v2.invoke({"x": 3}, _cfg())
        return (
            snapshot_summary(v1.get_state(_cfg())),
            v1.invoke({"log": ["old"], "x": 0}, _cfg()),
            v2.get_state(_cfg()).values,
            _history(v1, _cfg())[:2],
        )

    differential(scenario)


def test_resuming_an_interrupt_whose_node_the_new_graph_renamed():
    """Deliberate difference: v1 paused inside node `ask` (interrupt); the user renames
    it `ask2`, recompiles with the same saver and runs the resume cell. LangGraph runs
    nothing and returns the state: the answer is silently lost. lgnb raises
    UnknownInterruptError naming the node and the ways out, and writes nothing, so the
    thread (before and after) reads the same as on LangGraph (see also
    `persistence/test_persist_users_graph_changes.py`)."""
    def scenario(E):
        saver = E.InMemorySaver()

        def build(name):
            g = E.StateGraph(S)
            g.add_node(name, lambda s: {"log": [E.interrupt("q")]})
            g.add_edge(E.START, name)
            return g.compile(checkpointer=saver)

        build("ask").invoke(INP, _cfg())
        v2 = build("ask2")
        before = snapshot_summary(v2.get_state(_cfg()))
        out = capture(lambda: v2.invoke(E.Command(resume="yes"), _cfg()))
        return before, out, snapshot_summary(v2.get_state(_cfg())), len(_history(v2, _cfg()))

    ref = normalize(scenario(_diff.reference_engine()))
    assert ref[1] == {"log": [], "x": 0}
    E = _diff.candidate_engine()
    got = normalize(scenario(E))
    if E.root == "lgnb":
        assert got[1][:2] == ("raises", "UnknownInterruptError")
        assert "'ask'" in got[1][2] and "no longer has" in got[1][2]
        got = (got[0], ref[1], *got[2:])
    assert got == ref


def test_resumed_by_a_recompiled_graph_streams_the_same_tasks(differential):
    """v1 paused before b; the recompiled v2 (same saver) resumes with
    `stream(None, cfg, stream_mode=["updates", "tasks"])`: the same chunks as LangGraph."""
    def scenario(E):
        saver = E.InMemorySaver()
        g = _chain(E, "a", "b")
        g.compile(checkpointer=saver, interrupt_before=["b"]).invoke(INP, _cfg())
        v2 = g.compile(checkpointer=saver)
        return collect(lambda: v2.stream(None, _cfg(), stream_mode=["updates", "tasks"]))

    differential(scenario)


# =========================================================================================
# one compiled graph, its run cells re-run with other arguments
# =========================================================================================


def test_run_time_interrupts_of_one_call_do_not_stick_to_the_graph(differential):
    """`app.invoke(x, cfg, interrupt_before=["b"])` pauses; the next cell resumes with a
    plain `invoke(None, cfg)` and b runs; a later run on a new thread does not pause."""
    def scenario(E):
        app = _chain(E, "a", "b").compile(checkpointer=E.InMemorySaver())
        r1 = app.invoke(INP, _cfg("1"), interrupt_before=["b"])
        n1 = app.get_state(_cfg("1")).next
        r2 = app.invoke(None, _cfg("1"))
        r3 = app.invoke(INP, _cfg("2"))
        r4 = collect(lambda: app.stream(INP, _cfg("3"), interrupt_after=["a"], stream_mode="updates"))
        return r1, n1, r2, r3, r4, app.invoke(INP, _cfg("4"))

    differential(scenario)


def test_rerunning_the_stream_cell_with_other_modes(differential):
    """The stream cell re-run with `values`, then `updates`, then both, then `values`
    again: each run streams what its own modes ask for."""
    def scenario(E):
        app = _chain(E, "a", "b").compile()
        return [
            collect(lambda m=m: app.stream(INP, stream_mode=m))
            for m in ("values", "updates", ["values", "updates"], "values", None)
        ]

    differential(scenario)


def test_rerunning_with_another_context_and_recursion_limit(differential):
    """One compiled graph with a `context_schema`, its invoke cell re-run with another
    `context=` and another `recursion_limit` each time: each run sees its own."""
    from dataclasses import dataclass

    def scenario(E):
        @dataclass
        class Ctx:
            user: str

        def who(s, runtime: Any):
            return {"log": [runtime.context.user], "x": s["x"] + 1}

        who.__annotations__["runtime"] = E.Runtime[Ctx]
        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("who", who)
        g.add_edge(E.START, "who")
        g.add_conditional_edges("who", lambda s: "who" if s["x"] < 3 else E.END)
        app = g.compile()
        return [
            capture(lambda u=u, lim=lim: app.invoke(INP, {"recursion_limit": lim}, context=Ctx(u)))
            for u, lim in (("ada", 10), ("bob", 2), ("cy", 10))
        ]

    differential(scenario, exc="extends")

"""Static breakpoints (interrupt_before / interrupt_after at compile time and at call time,
including "*"), resuming them with invoke(None, config), and interrupts inside subgraphs:
the subgraph resumes where it stopped and get_state(subgraphs=True) shows its state."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from _diff import acollect, capture, collect
from _savers import thread


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


def _chain(E, calls=None, **compile_kw):
    calls = calls if calls is not None else []

    def mk(n):
        def f(s):
            calls.append(n)
            return {"log": [n]}

        return f

    g = E.StateGraph(S)
    for n in ("a", "b", "c"):
        g.add_node(n, mk(n))
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile(checkpointer=E.InMemorySaver(), **compile_kw)


def _drive(app, cfg, first_input, *, max_resumes=6, **call_kw):
    """Run, then resume with invoke(None) until done; record each stop."""
    out = [app.invoke(first_input, cfg, **call_kw)]
    for _ in range(max_resumes):
        st = app.get_state(cfg)
        out.append((st.next, st.interrupts, [t.name for t in st.tasks]))
        if not st.next:
            break
        out.append(app.invoke(None, cfg, **call_kw))
    return out


# --- static breakpoints ---------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["compile", "call"])
@pytest.mark.parametrize("kind,nodes", [
    ("before", ["b"]), ("after", ["b"]), ("before", ["a", "c"]), ("after", ["a", "c"]),
    ("before", "*"), ("after", "*"),
])
def test_static_breakpoints_stop_and_resume_with_invoke_none(differential, where, kind, nodes):
    def scenario(E):
        calls = []
        kw = {f"interrupt_{kind}": nodes}
        if where == "compile":
            app = _chain(E, calls, **kw)
            result = _drive(app, thread(), {"log": []})
        else:
            app = _chain(E, calls)
            result = _drive(app, thread(), {"log": []}, **kw)
        return result, calls

    ref = differential(scenario)
    assert ref[1] == ["a", "b", "c"]  # every node ran exactly once


def test_breakpoint_stream_updates_show_empty___interrupt__(differential):
    def scenario(E):
        app, cfg = _chain(E, interrupt_before=["b"]), thread()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="updates"))
        second = collect(lambda: app.stream(None, cfg, stream_mode="updates"))
        return first, second

    differential(scenario)


def test_breakpoint_stream_values_and_v2(differential):
    def scenario(E):
        app, cfg = _chain(E, interrupt_after=["a"]), thread()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode=["values", "updates"], version="v2"))
        out = app.invoke(None, cfg, version="v2")
        return first, type(out).__name__, out.value, out.interrupts

    differential(scenario)


def test_breakpoint_snapshot_and_history(differential):
    def scenario(E):
        app, cfg = _chain(E, interrupt_before=["b"]), thread()
        app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        app.invoke(None, cfg)
        return st, [(s.metadata["source"], s.metadata["step"], s.next) for s in app.get_state_history(cfg)]

    differential(scenario)


def test_call_time_breakpoints_override_compile_time(differential):
    def scenario(E):
        app, cfg = _chain(E, interrupt_before=["b"]), thread()
        first = app.invoke({"log": []}, cfg, interrupt_before=["c"])
        return first, app.get_state(cfg).next

    differential(scenario)


def test_update_state_at_a_breakpoint_then_continue(differential):
    def scenario(E):
        app, cfg = _chain(E, interrupt_before=["b"]), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": ["human"]})
        st = app.get_state(cfg)
        return st.next, st.values, app.invoke(None, cfg)

    differential(scenario)


def test_new_input_at_a_breakpoint_starts_over(differential):
    def scenario(E):
        calls = []
        app, cfg = _chain(E, calls, interrupt_before=["b"]), thread()
        app.invoke({"log": []}, cfg)
        second = app.invoke({"log": ["new"]}, cfg)
        return second, calls, app.get_state(cfg).next

    differential(scenario)


def test_breakpoint_on_a_node_that_calls_interrupt(differential):
    def scenario(E):
        def ask(s):
            return {"log": [E.interrupt("q")]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["ask"]), thread()
        seen = [app.invoke({"log": []}, cfg)]
        seen.append(app.invoke(None, cfg))
        seen.append(app.invoke(E.Command(resume="A"), cfg))
        return seen

    differential(scenario)


async def test_async_breakpoints(differential):
    async def scenario(E):
        app, cfg = _chain(E, interrupt_after=["a", "b"]), thread()
        seen = [await acollect(lambda: app.astream({"log": []}, cfg, stream_mode="updates"))]
        seen.append(await app.ainvoke(None, cfg))
        seen.append((await app.aget_state(cfg)).next)
        seen.append(await app.ainvoke(None, cfg))
        return seen

    differential(scenario)


# --- subgraphs ---------------------------------------------------------------------------------


def _with_subgraph(E, calls, *, sub_checkpointer=None):
    def mk(n):
        def f(s):
            calls.append(n)
            return {"log": [n]}

        return f

    def inner_ask(s):
        calls.append("inner_ask")
        return {"log": [f"inner:{E.interrupt({'inner': list(s['log'])})}"]}

    sub = E.StateGraph(S)
    sub.add_node("inner_before", mk("inner_before"))
    sub.add_node("inner_ask", inner_ask)
    sub.add_node("inner_after", mk("inner_after"))
    sub.add_edge(E.START, "inner_before")
    sub.add_edge("inner_before", "inner_ask")
    sub.add_edge("inner_ask", "inner_after")
    kw = {} if sub_checkpointer is None else {"checkpointer": sub_checkpointer}
    g = E.StateGraph(S)
    g.add_node("outer_before", mk("outer_before"))
    g.add_node("sub", sub.compile(**kw))
    g.add_node("outer_after", mk("outer_after"))
    g.add_edge(E.START, "outer_before")
    g.add_edge("outer_before", "sub")
    g.add_edge("sub", "outer_after")
    return g.compile(checkpointer=E.InMemorySaver())


def test_subgraph_interrupt_resumes_the_subgraph_where_it_stopped(differential):
    def scenario(E):
        calls = []
        app, cfg = _with_subgraph(E, calls), thread()
        first = app.invoke({"log": []}, cfg)
        done = app.invoke(E.Command(resume="yes"), cfg)
        return first, done, calls

    ref = differential(scenario)
    assert ref[2] == ["outer_before", "inner_before", "inner_ask", "inner_ask", "inner_after", "outer_after"]


def test_subgraph_interrupt_node_counters(differential):
    def scenario(E):
        calls = []
        app, cfg = _with_subgraph(E, calls), thread()
        app.invoke({"log": []}, cfg)
        app.invoke(E.Command(resume="yes"), cfg)
        return {n: calls.count(n) for n in dict.fromkeys(calls)}

    differential(scenario, expect={"outer_before": 1, "inner_before": 1, "inner_ask": 2,
                                   "inner_after": 1, "outer_after": 1})


def test_get_state_with_subgraphs_shows_the_paused_subgraph_state(differential):
    def scenario(E):
        app, cfg = _with_subgraph(E, []), thread()
        app.invoke({"log": []}, cfg)
        outer = app.get_state(cfg, subgraphs=True)
        plain = app.get_state(cfg)
        return outer, [t.state for t in plain.tasks]

    ref = differential(scenario)
    assert ref[0][7][0][6][0] == "StateSnapshot"  # tasks[0].state is the subgraph's snapshot


def test_subgraph_state_from_the_task_config(differential):
    def scenario(E):
        app, cfg = _with_subgraph(E, []), thread()
        app.invoke({"log": []}, cfg)
        task = app.get_state(cfg).tasks[0]
        inner = app.get_state(task.state)  # the StateSnapshot's config of the subgraph
        return task.state, inner.values, inner.next, inner.interrupts, inner.metadata

    differential(scenario)


def test_subgraph_interrupt_streams_with_subgraphs_true(differential):
    def scenario(E):
        app, cfg = _with_subgraph(E, []), thread()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="updates", subgraphs=True))
        second = collect(lambda: app.stream(E.Command(resume="ok"), cfg, stream_mode="updates", subgraphs=True))
        return first, second

    differential(scenario)


def test_subgraph_history_by_namespace(differential):
    def scenario(E):
        app, cfg = _with_subgraph(E, []), thread()
        app.invoke({"log": []}, cfg)
        task = app.get_state(cfg).tasks[0]
        sub_hist = [(s.metadata, s.next, s.values) for s in app.get_state_history(task.state)]
        app.invoke(E.Command(resume="ok"), cfg)
        return sub_hist, [(s.metadata, s.next) for s in app.get_state_history(cfg)]

    differential(scenario)


def test_resume_map_reaches_an_interrupt_inside_a_subgraph(differential):
    def scenario(E):
        app, cfg = _with_subgraph(E, []), thread()
        iid = app.invoke({"log": []}, cfg)["__interrupt__"][0].id
        return app.invoke(E.Command(resume={iid: "by-id"}), cfg)

    differential(scenario)


def test_subgraph_with_its_own_checkpointer_true(differential):
    def scenario(E):
        calls = []
        app, cfg = _with_subgraph(E, calls, sub_checkpointer=True), thread()
        first = app.invoke({"log": []}, cfg)
        done = app.invoke(E.Command(resume="yes"), cfg)
        second_run = app.invoke({"log": []}, cfg)
        return first, done, second_run, calls, app.get_state(cfg, subgraphs=True)

    differential(scenario)


def test_update_state_of_the_paused_subgraph_then_resume(differential):
    def scenario(E):
        app, cfg = _with_subgraph(E, []), thread()
        app.invoke({"log": []}, cfg)
        sub_cfg = app.get_state(cfg).tasks[0].state
        capture(lambda: app.update_state(sub_cfg, {"log": ["edited-inside"]}))
        inner = app.get_state(app.get_state(cfg).tasks[0].state)
        return inner.values, inner.next, app.invoke(E.Command(resume="after-edit"), cfg)

    differential(scenario)


async def test_async_subgraph_interrupt_and_get_state(differential):
    async def scenario(E):
        calls = []
        app, cfg = _with_subgraph(E, calls), thread()
        await app.ainvoke({"log": []}, cfg)
        st = await app.aget_state(cfg, subgraphs=True)
        done = await app.ainvoke(E.Command(resume="y"), cfg)
        return st, done, calls

    differential(scenario)

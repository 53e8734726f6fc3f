"""One checkpoint per super-step: what get_state_history shows (metadata source/step/parents,
next, values, tasks, interrupts, created_at, parent_config chain), the `checkpoints` stream
mode, debug checkpoint events, and how durability (sync / async / exit) changes history."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

from _diff import collect, steps_as_multisets
from _savers import thread


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def _diamond(E, **compile_kw):
    """a -> (b, c in one step) -> d."""
    g = E.StateGraph(S)
    for n in "abcd":
        g.add_node(n, _logger(n))
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge(["b", "c"], "d")
    return g.compile(checkpointer=E.InMemorySaver(), **compile_kw)


def _linear(E, n=3, **compile_kw):
    g = E.StateGraph(S)
    names = [f"n{i}" for i in range(n)]
    for name in names:
        g.add_node(name, _logger(name))
    g.add_edge(E.START, names[0])
    for x, y in zip(names, names[1:]):
        g.add_edge(x, y)
    return g.compile(checkpointer=E.InMemorySaver(), **compile_kw)


def _asking(E, **compile_kw):
    def ask(s):
        return {"log": [f"answer:{E.interrupt({'question': 'ok?', 'seen': list(s['log'])})}"]}

    g = E.StateGraph(S)
    g.add_node("prep", _logger("prep"))
    g.add_node("ask", ask)
    g.add_node("after", _logger("after"))
    g.add_edge(E.START, "prep")
    g.add_edge("prep", "ask")
    g.add_edge("ask", "after")
    return g.compile(checkpointer=E.InMemorySaver(), **compile_kw)


# --- history shape ---------------------------------------------------------------------------


def test_history_has_one_checkpoint_per_super_step_newest_first(differential):
    def scenario(E):
        app, cfg = _diamond(E), thread()
        app.invoke({"log": []}, cfg)
        return list(app.get_state_history(cfg))

    ref = differential(scenario)
    # input (-1), a (0), b+c (1), d (2), done (3)
    assert [s[4]["step"] for s in ref] == [3, 2, 1, 0, -1]


def test_history_steps_sources_and_next_per_checkpoint(differential):
    def scenario(E):
        app, cfg = _diamond(E), thread()
        app.invoke({"log": []}, cfg)
        return [(s.metadata["source"], s.metadata["step"], s.metadata["parents"], s.next, s.values)
                for s in app.get_state_history(cfg)]

    differential(scenario, expect=[
        ("loop", 3, {}, (), {"log": ["a", "b", "c", "d"]}),
        ("loop", 2, {}, ("d",), {"log": ["a", "b", "c"]}),
        ("loop", 1, {}, ("b", "c"), {"log": ["a"]}),
        ("loop", 0, {}, ("a",), {"log": []}),
        ("input", -1, {}, ("__start__",), {"log": []}),
    ])


def test_parent_config_chain_links_each_checkpoint_to_the_one_before(differential):
    def scenario(E):
        app, cfg = _diamond(E), thread()
        app.invoke({"log": []}, cfg)
        hist = list(app.get_state_history(cfg))
        links = [h.parent_config["configurable"]["checkpoint_id"] == p.config["configurable"]["checkpoint_id"]
                 for h, p in zip(hist, hist[1:])]
        return links, hist[-1].parent_config, [h.config["configurable"].get("checkpoint_ns") for h in hist]

    differential(scenario, expect=([True] * 4, None, [""] * 5))


def test_created_at_is_present_and_does_not_decrease(differential):
    def scenario(E):
        app, cfg = _linear(E, 3), thread()
        app.invoke({"log": []}, cfg)
        stamps = [s.created_at for s in app.get_state_history(cfg)]
        return [isinstance(t, str) and "T" in t for t in stamps], stamps == sorted(stamps, reverse=True)

    differential(scenario, expect=([True] * 5, True))


def test_snapshot_tasks_carry_results_of_the_step_that_ran(differential):
    def scenario(E):
        app, cfg = _diamond(E), thread()
        app.invoke({"log": []}, cfg)
        return [[(t.name, t.path, t.error, t.interrupts, t.result) for t in s.tasks]
                for s in app.get_state_history(cfg)]

    differential(scenario)


def test_interrupted_checkpoint_shows_task_interrupts_and_snapshot_interrupts(differential):
    def scenario(E):
        app, cfg = _asking(E), thread()
        app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        return st, [s.interrupts for s in app.get_state_history(cfg)]

    ref = differential(scenario)
    assert ref[0][2] == ("ask",)


def test_history_after_resume_keeps_the_interrupted_checkpoint(differential):
    def scenario(E):
        app, cfg = _asking(E), thread()
        app.invoke({"log": []}, cfg)
        app.invoke(E.Command(resume="yes"), cfg)
        return list(app.get_state_history(cfg))

    differential(scenario)


def test_metadata_sources_input_loop_update_and_fork(differential):
    """update_state writes source=update (also on an old checkpoint); replaying from an old
    checkpoint first writes a source=fork checkpoint."""

    def scenario(E):
        app, cfg = _linear(E, 2), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": ["manual"]})
        first_loop = [s for s in app.get_state_history(cfg) if s.metadata["step"] == 0][0]
        app.invoke(None, first_loop.config)  # replay -> fork checkpoint, then loop
        upd_cfg = app.update_state(first_loop.config, {"log": ["edited-old"]})
        app.invoke(None, upd_cfg)
        return [(s.metadata["source"], s.metadata["step"], s.next, s.values)
                for s in app.get_state_history(cfg)]

    ref = differential(scenario)
    assert {r[0] for r in ref} == {"input", "loop", "update", "fork"}


def test_update_state_as_node_copy_writes_a_fork_checkpoint(differential):
    def scenario(E):
        app, cfg = _linear(E, 2), thread()
        app.invoke({"log": []}, cfg)
        first_loop = [s for s in app.get_state_history(cfg) if s.metadata["step"] == 0][0]
        copied = app.update_state(first_loop.config, None, as_node="__copy__")
        st = app.get_state(copied)
        return st.metadata, st.next, st.values, app.invoke(None, copied)

    differential(scenario)


def test_second_invoke_on_a_thread_starts_with_an_input_checkpoint(differential):
    def scenario(E):
        app, cfg = _linear(E, 2), thread()
        app.invoke({"log": ["first"]}, cfg)
        app.invoke({"log": ["second"]}, cfg)
        return [(s.metadata["source"], s.metadata["step"], s.next, s.values) for s in app.get_state_history(cfg)]

    differential(scenario)


# --- checkpoints / debug streams ---------------------------------------------------------------


def test_stream_mode_checkpoints_emits_one_event_per_checkpoint(differential):
    def scenario(E):
        app, cfg = _linear(E, 3), thread()
        events = collect(lambda: app.stream({"log": []}, cfg, stream_mode="checkpoints"))
        hist = list(app.get_state_history(cfg))
        ids = [e["config"]["configurable"]["checkpoint_id"] for e in events]
        return events, ids == [h.config["configurable"]["checkpoint_id"] for h in reversed(hist)]

    ref = differential(scenario)
    assert ref[1] is True and len(ref[0]) == 5


def test_stream_mode_checkpoints_with_interrupt_and_resume(differential):
    def scenario(E):
        app, cfg = _asking(E), thread()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="checkpoints"))
        second = collect(lambda: app.stream(E.Command(resume="r"), cfg, stream_mode="checkpoints"))
        return first, second

    differential(scenario)


def test_stream_mode_checkpoints_v2_and_with_updates(differential):
    def scenario(E):
        app, cfg = _linear(E, 2), thread()
        return collect(lambda: app.stream({"log": []}, cfg, stream_mode=["checkpoints", "updates"], version="v2"))

    differential(scenario)


def test_stream_mode_checkpoints_includes_subgraph_checkpoints_with_namespaces(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", _logger("inner"))
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("outer", _logger("outer"))
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "outer")
        g.add_edge("outer", "sub")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        return collect(lambda: app.stream({"log": []}, cfg, stream_mode="checkpoints", subgraphs=True))

    differential(scenario)


def test_debug_stream_checkpoint_and_task_events(differential):
    def scenario(E):
        app, cfg = _linear(E, 2), thread()
        return collect(lambda: app.stream({"log": []}, cfg, stream_mode="debug"))

    ref = differential(scenario)
    assert [e["type"] for e in ref][:2] == ["checkpoint", "checkpoint"]


def test_debug_stream_parallel_step_as_multisets(differential):
    def scenario(E):
        app, cfg = _diamond(E), thread()
        chunks = collect(lambda: app.stream({"log": []}, cfg, stream_mode="debug"))
        return steps_as_multisets(chunks, lambda c: isinstance(c, dict) and c.get("type") == "checkpoint")

    differential(scenario)


def test_debug_stream_of_an_interrupt(differential):
    def scenario(E):
        app, cfg = _asking(E), thread()
        return collect(lambda: app.stream({"log": []}, cfg, stream_mode="debug"))

    differential(scenario)


# --- durability ------------------------------------------------------------------------------


def _history_digest(app, cfg):
    return [(s.metadata["source"], s.metadata["step"], s.next, s.values, [(t.name, t.result) for t in s.tasks])
            for s in app.get_state_history(cfg)]


def test_durability_sync_async_exit_change_history_length(differential):
    def scenario(E):
        out = {}
        for d in ("sync", "async", "exit"):
            app, cfg = _linear(E, 3), thread()
            result = app.invoke({"log": []}, cfg, durability=d)
            out[d] = (result, _history_digest(app, cfg))
        return out

    ref = differential(scenario)
    assert len(ref["sync"][1]) == len(ref["async"][1]) == 5
    assert len(ref["exit"][1]) < len(ref["sync"][1])


def test_durability_exit_still_saves_the_interrupted_state_and_resumes(differential):
    def scenario(E):
        app, cfg = _asking(E), thread()
        first = app.invoke({"log": []}, cfg, durability="exit")
        paused = _history_digest(app, cfg)
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume="fine"), cfg, durability="exit")
        return first, paused, st.next, st.interrupts, done, _history_digest(app, cfg)

    differential(scenario)


def test_durability_exit_with_a_failing_node_keeps_what_was_saved(differential):
    def scenario(E):
        def boom(s):
            raise ValueError("boom")

        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("boom", boom)
        g.add_edge(E.START, "a")
        g.add_edge("a", "boom")
        out = {}
        for d in ("sync", "exit"):
            app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
            try:
                app.invoke({"log": []}, cfg, durability=d)
            except ValueError as e:
                err = str(e)
            st = app.get_state(cfg)
            out[d] = (err, st.values, st.next, [(t.name, t.error) for t in st.tasks], _history_digest(app, cfg))
        return out

    differential(scenario)


def test_durability_streams_the_same_checkpoints_events(differential):
    def scenario(E):
        out = {}
        for d in ("sync", "async", "exit"):
            app, cfg = _linear(E, 2), thread()
            out[d] = collect(lambda: app.stream({"log": []}, cfg, stream_mode="checkpoints", durability=d))
        return out

    differential(scenario)


def test_durability_set_on_the_compiled_graph_via_with_config(differential):
    def scenario(E):
        app, cfg = _linear(E, 3), thread()
        app.with_config(durability="exit").invoke({"log": []}, cfg)
        return _history_digest(app, cfg)

    differential(scenario)


async def test_async_durability_and_history(differential):
    async def scenario(E):
        out = {}
        for d in ("sync", "async", "exit"):
            app, cfg = _linear(E, 3), thread()
            await app.ainvoke({"log": []}, cfg, durability=d)
            out[d] = [(s.metadata["source"], s.metadata["step"], s.next, s.values)
                      async for s in app.aget_state_history(cfg)]
        return out

    differential(scenario)


def test_snapshot_task_path_of_send_tasks(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("w", lambda arg: {"log": [arg]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("w", i) for i in range(2)], ["w"])
        app, cfg = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["w"]), thread()
        app.invoke({"log": []}, cfg)
        return [(t.name, t.path) for t in app.get_state(cfg).tasks]

    differential(scenario, expect=[("w", ("__pregel_push", 0, False)), ("w", ("__pregel_push", 1, False))])


def test_snapshot_next_lists_parallel_nodes_in_declaration_order(differential):
    """get_state plans without the run's updated-channels shortcut: LangGraph lists pull tasks
    in the order nodes were added (not sorted by name)."""

    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("first", _logger("first"))
        g.add_node("zeta", _logger("zeta"))
        g.add_node("alpha", _logger("alpha"))
        g.add_edge(E.START, "first")
        g.add_edge("first", "zeta")
        g.add_edge("first", "alpha")
        app, cfg = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["zeta", "alpha"]), thread()
        app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        return st.next, [t.name for t in st.tasks]

    differential(scenario, expect=(("zeta", "alpha"), ["zeta", "alpha"]))

"""get_state, get_state_history(filter=, before=, limit=), update_state(as_node=...) and time
travel: replay from a checkpoint_id, fork by updating an old checkpoint, async twins."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from _diff import capture
from _savers import thread


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    note: str


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


def _fanout(E):
    g = E.StateGraph(S)
    for n in ("a", "b", "c"):
        g.add_node(n, (lambda n: lambda s: {"log": [n]})(n))
    g.add_edge(E.START, "a")
    g.add_edge(E.START, "b")
    g.add_edge(["a", "b"], "c")
    return g.compile(checkpointer=E.InMemorySaver())


def _digest(app, cfg, **kw):
    return [(s.metadata["source"], s.metadata["step"], s.next, s.values) for s in app.get_state_history(cfg, **kw)]


def _at_step(app, cfg, step):
    return next(s for s in app.get_state_history(cfg) if s.metadata["step"] == step)


# --- get_state --------------------------------------------------------------------------------


def test_get_state_latest_and_by_checkpoint_id(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        old = _at_step(app, cfg, 1)
        by_id = app.get_state(old.config)
        return app.get_state(cfg), by_id, by_id == old

    differential(scenario)


def test_get_state_by_checkpoint_id_of_another_thread_finds_nothing(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        cid = app.get_state(cfg).config["configurable"]["checkpoint_id"]
        other = {"configurable": {"thread_id": "other", "checkpoint_id": cid}}
        return app.get_state(other)

    differential(scenario)


# --- history filters ----------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [
    {"limit": 1}, {"limit": 3}, {"limit": 0}, {"filter": {"source": "loop"}}, {"filter": {"step": 1}},
    {"filter": {"source": "input"}}, {"filter": {"source": "nope"}},
    {"filter": {"source": "loop"}, "limit": 2},
])
def test_get_state_history_filter_and_limit(differential, kw):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"note": "x"})
        return _digest(app, cfg, **kw)

    differential(scenario)


def test_get_state_history_before_a_checkpoint(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        mid = _at_step(app, cfg, 1)
        return _digest(app, cfg, before=mid.config), _digest(app, cfg, before=mid.config, limit=1)

    differential(scenario)


def test_get_state_history_from_an_old_checkpoint_config_lists_the_whole_thread(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        return _digest(app, _at_step(app, cfg, 0).config)

    differential(scenario)


# --- update_state -------------------------------------------------------------------------------


def test_update_state_infers_as_node_from_the_last_writer(differential):
    def scenario(E):
        app, cfg = _chain(E, interrupt_after=["a"]), thread()
        app.invoke({"log": []}, cfg)
        new_cfg = app.update_state(cfg, {"log": ["human"]})
        st = app.get_state(cfg)
        return new_cfg == st.config, st.metadata, st.next, st.values, app.invoke(None, cfg)

    differential(scenario)


def test_update_state_as_node_decides_what_runs_next(differential):
    def scenario(E):
        out = {}
        for as_node in ("a", "b", "c"):
            app, cfg = _chain(E, interrupt_before=["a"]), thread()
            app.invoke({"log": []}, cfg)
            app.update_state(cfg, {"log": [f"as-{as_node}"]}, as_node=as_node)
            st = app.get_state(cfg)
            out[as_node] = (st.next, st.metadata, app.invoke(None, cfg))
        return out

    differential(scenario)


def test_update_state_ambiguous_as_node_is_an_error(differential):
    def scenario(E):
        app, cfg = _fanout(E), thread()
        app.invoke({"log": []}, cfg, interrupt_before=["c"])
        err = capture(lambda: app.update_state(cfg, {"log": ["?"]}))
        return err, _digest(app, cfg)

    ref = differential(scenario, exc="extends")
    assert ref[0][:2] == ("raises", "InvalidUpdateError")


def test_update_state_unknown_node_is_an_error(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        return capture(lambda: app.update_state(cfg, {"log": ["x"]}, as_node="nope")), len(_digest(app, cfg))

    differential(scenario, exc="extends")


def test_update_state_on_a_fresh_thread(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        up = capture(lambda: app.update_state(cfg, {"log": ["seed"]}))
        st = app.get_state(cfg)
        return up if isinstance(up, tuple) else "ok", st.values, st.next, st.metadata, capture(lambda: app.invoke(None, cfg))

    differential(scenario)


def test_update_state_as_end_with_none_cancels_the_pending_step(differential):
    def scenario(E):
        calls = []
        app, cfg = _chain(E, calls, interrupt_before=["b"]), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, None, as_node=E.END)
        st = app.get_state(cfg)
        return st.next, st.values, st.metadata, st.tasks, app.invoke(None, cfg), calls

    differential(scenario)


def test_update_state_as_input_starts_a_new_run(differential):
    def scenario(E):
        calls = []
        app, cfg = _chain(E, calls), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": ["new input"]}, as_node="__input__")
        st = app.get_state(cfg)
        out = app.invoke(None, cfg)
        return st.next, st.values, st.metadata, out, calls, _digest(app, cfg)

    differential(scenario)


def test_update_state_as_start_node(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": ["restart"]}, as_node=E.START)
        st = app.get_state(cfg)
        return st.next, st.metadata, app.invoke(None, cfg)

    differential(scenario)


def test_update_state_applies_reducers_and_plain_overwrites(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": [], "note": "old"}, cfg)
        app.update_state(cfg, {"log": ["more"], "note": "new"})
        return app.get_state(cfg).values

    differential(scenario, expect={"log": ["a", "b", "c", "more"], "note": "new"})


def test_update_state_with_a_command_goto(differential):
    def scenario(E):
        app, cfg = _chain(E, interrupt_before=["b"]), thread()
        app.invoke({"log": []}, cfg)
        res = capture(lambda: app.update_state(cfg, E.Command(update={"note": "cmd"}, goto="c")))
        st = app.get_state(cfg)
        return res if isinstance(res, tuple) else "ok", st.next, st.values

    differential(scenario)


def test_bulk_update_state_writes_one_checkpoint_per_superstep(differential):
    def scenario(E):
        app, cfg = _chain(E, interrupt_before=["a"]), thread()
        app.invoke({"log": []}, cfg)
        from importlib import import_module

        StateUpdate = import_module(f"{E.root}.types").StateUpdate
        app.bulk_update_state(cfg, [
            [StateUpdate({"log": ["one"]}, "a")],
            [StateUpdate({"log": ["two"]}, "b")],
        ])
        return _digest(app, cfg), app.invoke(None, cfg)

    differential(scenario)


# --- replay and fork ------------------------------------------------------------------------------


def test_replay_from_a_checkpoint_id_reruns_only_later_nodes(differential):
    def scenario(E):
        calls = []
        app, cfg = _chain(E, calls), thread()
        app.invoke({"log": []}, cfg)
        calls.clear()
        old = _at_step(app, cfg, 1)  # after a, before b
        out = app.invoke(None, old.config)
        return out, calls, _digest(app, cfg)

    differential(scenario, expect=...)


def test_replay_stream_shows_only_the_replayed_steps(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        old = _at_step(app, cfg, 1)
        return list(app.stream(None, old.config, stream_mode="updates"))

    differential(scenario, expect=[{"b": {"log": ["b"]}}, {"c": {"log": ["c"]}}])


def test_replay_of_an_interrupted_checkpoint_asks_again(differential):
    def scenario(E):
        def ask(s):
            return {"log": [E.interrupt("again?")]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_node("end", lambda s: {"log": ["end"]})
        g.add_edge(E.START, "ask")
        g.add_edge("ask", "end")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        app.invoke(E.Command(resume="first"), cfg)
        paused = next(s for s in app.get_state_history(cfg) if s.next == ("ask",))
        replay = app.invoke(None, paused.config)
        second = app.invoke(E.Command(resume="second"), cfg)
        return replay, second, _digest(app, cfg)

    differential(scenario)


def test_fork_by_updating_an_old_checkpoint_then_running_it(differential):
    def scenario(E):
        calls = []
        app, cfg = _chain(E, calls), thread()
        app.invoke({"log": []}, cfg)
        old = _at_step(app, cfg, 1)
        fork_cfg = app.update_state(old.config, {"note": "forked"})
        calls.clear()
        out = app.invoke(None, fork_cfg)
        latest = app.get_state(cfg)
        fork_snap = app.get_state(fork_cfg)
        return (out, calls, latest.values, fork_snap.parent_config == old.config,
                fork_snap.metadata, _digest(app, cfg))

    differential(scenario)


def test_fork_keeps_the_original_branch_reachable(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        original_final = app.get_state(cfg)
        old = _at_step(app, cfg, 0)
        app.invoke(None, app.update_state(old.config, {"log": ["alt"]}))
        again = app.get_state(original_final.config)
        return again.values, again.next, app.get_state(cfg).values

    differential(scenario)


def test_fork_with_as_node(differential):
    def scenario(E):
        app, cfg = _chain(E), thread()
        app.invoke({"log": []}, cfg)
        old = _at_step(app, cfg, 1)
        fork_cfg = app.update_state(old.config, {"log": ["skip-b"]}, as_node="b")
        st = app.get_state(fork_cfg)
        return st.next, st.values, app.invoke(None, fork_cfg)

    differential(scenario)


# --- async twins ---------------------------------------------------------------------------------


async def test_async_get_state_history_update_and_fork(differential):
    async def scenario(E):
        app, cfg = _chain(E), thread()
        await app.ainvoke({"log": []}, cfg)
        st = await app.aget_state(cfg)
        hist = [(s.metadata, s.next, s.values) async for s in app.aget_state_history(cfg)]
        limited = [s.metadata["step"] async for s in app.aget_state_history(cfg, limit=2)]
        filtered = [s.metadata["step"] async for s in app.aget_state_history(cfg, filter={"source": "loop"})]
        old = [s async for s in app.aget_state_history(cfg) if s.metadata["step"] == 1][0]
        before = [s.metadata["step"] async for s in app.aget_state_history(cfg, before=old.config)]
        fork_cfg = await app.aupdate_state(old.config, {"note": "async fork"})
        out = await app.ainvoke(None, fork_cfg)
        err = None
        try:
            await app.aupdate_state(cfg, {"log": ["x"]}, as_node="nope")
        except Exception as e:  # noqa: BLE001
            err = (type(e).__name__, str(e).splitlines()[0])  # lgnb adds a line: the node names
        return st, hist, limited, filtered, before, out, err

    differential(scenario)


async def test_async_replay_from_checkpoint(differential):
    async def scenario(E):
        calls = []
        app, cfg = _chain(E, calls), thread()
        await app.ainvoke({"log": []}, cfg)
        calls.clear()
        old = [s async for s in app.aget_state_history(cfg) if s.metadata["step"] == 0][0]
        return await app.ainvoke(None, old.config), calls

    differential(scenario)

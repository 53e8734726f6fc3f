"""DeltaChannel persistence, compared with LangGraph: a delta key saves a sentinel at most
checkpoints and a `_DeltaSnapshot` at its cadence, and every read (a resumed run,
get_state, get_state_history, update_state, a fork) rebuilds the value by replaying the
ancestors' writes. The stored layout (which checkpoints hold a snapshot) and the
`counters_since_delta_snapshot` metadata are part of the comparison: they are what another
saver or LangGraph itself reads back from the same thread."""

from typing import Annotated

from typing_extensions import TypedDict

from _savers import thread


def _fold(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


def _graph(E, *, every: int = 100, ask: bool = False):
    DeltaChannel = E.module("channels.delta").DeltaChannel

    class S(TypedDict, total=False):
        log: Annotated[list, DeltaChannel(_fold, snapshot_frequency=every)]
        other: Annotated[list, DeltaChannel(_fold)]

    def b(s):
        if ask:
            return {"log": [f"b:{E.interrupt('q')}"]}
        return {"log": ["b"]}

    g = E.StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", b)
    g.add_node("c", lambda s: {"log": ["c"], "other": ["c"]})
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile(checkpointer=E.InMemorySaver())


def _layout(app, cfg):
    """Per checkpoint, newest first: step, values, counters, and which keys store a blob."""
    out = []
    for snap in app.get_state_history(cfg):
        stored = app.checkpointer.get_tuple(snap.config).checkpoint["channel_values"]
        out.append((
            snap.metadata["step"],
            snap.values,
            {k: list(v) for k, v in (snap.metadata.get("counters_since_delta_snapshot") or {}).items()},
            sorted((k, type(v).__name__) for k, v in stored.items() if k in ("log", "other")),
        ))
    return out


def test_every_checkpoint_reads_the_value_its_step_left(differential):
    def scenario(E):
        app, cfg = _graph(E), thread()
        app.invoke({"log": ["in"]}, cfg)
        app.invoke({"log": ["in-2"]}, cfg)
        return _layout(app, cfg)

    ref = differential(scenario)
    assert ref[0][1] == {"log": ["in", "a", "b", "c", "in-2", "a", "b", "c"], "other": ["c", "c"]}


def test_a_snapshot_is_stored_every_snapshot_frequency_updates(differential):
    def scenario(E):
        app, cfg = _graph(E, every=2), thread()
        app.invoke({"log": ["in"]}, cfg)
        app.invoke({"log": ["in-2"]}, cfg)
        return _layout(app, cfg)

    ref = differential(scenario)
    assert any(stored for *_, stored in ref), "some checkpoint stores a _DeltaSnapshot"


def test_a_resumed_run_continues_from_the_rebuilt_value(differential):
    def scenario(E):
        app, cfg = _graph(E, ask=True), thread()
        app.invoke({"log": ["in"]}, cfg)
        out = app.invoke(E.Command(resume="yes"), cfg)
        return out, _layout(app, cfg)

    assert differential(scenario)[0] == {"log": ["in", "a", "b:yes", "c"], "other": ["c"]}


def test_update_state_on_the_latest_checkpoint_and_on_an_old_one(differential):
    def scenario(E):
        app, cfg = _graph(E), thread()
        app.invoke({"log": ["in"]}, cfg)
        latest = app.update_state(cfg, {"log": ["edit"]}, as_node="c")
        old = [s for s in app.get_state_history(cfg) if s.metadata["step"] == 1][0]
        fork = app.update_state(old.config, {"log": ["fork"]}, as_node="a")
        return (
            app.get_state(latest).values,
            app.get_state(fork).values,
            app.invoke(None, fork),
            _layout(app, cfg),
        )

    ref = differential(scenario)
    assert ref[0]["log"] == ["in", "a", "b", "c", "edit"]
    assert ref[1]["log"] == ["in", "a", "fork"]


def test_an_overwrite_replaces_the_value_and_is_snapshotted(differential):
    def scenario(E):
        DeltaChannel = E.module("channels.delta").DeltaChannel

        class S(TypedDict, total=False):
            log: Annotated[list, DeltaChannel(_fold)]

        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("reset", lambda s: {"log": E.Overwrite(["fresh"])})
        g.add_node("c", lambda s: {"log": ["c"]})
        g.add_edge(E.START, "a")
        g.add_edge("a", "reset")
        g.add_edge("reset", "c")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": ["in"]}, cfg)
        return _layout(app, cfg)

    ref = differential(scenario)
    assert ref[0][1] == {"log": ["fresh", "c"]}


def test_two_overwrites_in_one_step_are_an_error(differential):
    def scenario(E):
        DeltaChannel = E.module("channels.delta").DeltaChannel

        class S(TypedDict, total=False):
            log: Annotated[list, DeltaChannel(_fold)]

        g = E.StateGraph(S)
        g.add_node("x", lambda s: {"log": E.Overwrite(["x"])})
        g.add_node("y", lambda s: {"log": E.Overwrite(["y"])})
        g.add_edge(E.START, "x")
        g.add_edge(E.START, "y")
        return g.compile().invoke({"log": []})

    differential(scenario, exc="extends")


def test_a_key_read_back_from_none_starts_empty_and_replays_its_writes(differential):
    """A stored `None` (a thread whose first checkpoint gave the key no value) is read as
    the empty value, to which the saved writes are replayed, not as the value `None`."""
    def scenario(E):
        DeltaChannel = E.module("channels.delta").DeltaChannel
        ch = DeltaChannel(_fold, list).from_checkpoint(None)
        empty = ch.get() if ch.is_available() else "unavailable"
        ch.replay_writes([("t0", "log", ["a"]), ("t1", "log", ["b", "c"])])
        return empty, ch.get()

    assert differential(scenario)[1] == ["a", "b", "c"]

"""The checkpoint format is LangGraph's: lgnb writes LangGraph 1.x's current format (`v: 4`),
reads the older ones as LangGraph does, and a thread written by either engine resumes on the
other — on lgnb's and LangGraph's SQLite savers and on PostgreSQL, sync and async. The strict
serializer round-trips the classes a graph's own schemas name, subgraphs included, and
refuses any other class with an error that names it and the fix.

Real savers, both real engines (`langgraph` and `lgnb` imported side by side), no mocks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
import re
from types import SimpleNamespace
from typing import Annotated, Any

import pydantic
import pytest
from typing_extensions import TypedDict

from _savers import POSTGRES_KINDS, thread

SYNC = ["lgnb_sqlite", "langgraph_sqlite", "postgres"]
ASYNC = ["lgnb_async_sqlite", "langgraph_async_sqlite", "async_postgres"]
BOTH_WAYS = [("lgnb", "langgraph"), ("langgraph", "lgnb")]


def _engine(name: str) -> SimpleNamespace:
    if name == "lgnb":
        from lgnb.graph import END, START, StateGraph
        from lgnb.types import Command, Send, interrupt
    else:
        from langgraph.graph import END, START, StateGraph
        from langgraph.types import Command, Send, interrupt
    return SimpleNamespace(
        name=name, StateGraph=StateGraph, START=START, END=END, Send=Send, Command=Command,
        interrupt=interrupt,
    )


@pytest.fixture
def pg(request, savers):
    """Fill in the PostgreSQL URL for the kinds that need it."""

    def need(kind: str) -> None:
        if kind in POSTGRES_KINDS:
            savers.pg_url = request.getfixturevalue("postgres_url")

    return need


class FanOut(TypedDict, total=False):
    log: Annotated[list, operator.add]


def _fan_out(E: SimpleNamespace, saver: Any, calls: list[str], **compile_kw: Any) -> Any:
    """plan -> three Sends to `work`; work 2 asks a question while 1 and 3 finish."""

    def plan(state: FanOut) -> FanOut:
        calls.append("plan")
        return {"log": ["plan"]}

    def work(arg: dict) -> FanOut:
        calls.append(f"work{arg['n']}")
        if arg["n"] == 2:
            return {"log": [f"work2:{E.interrupt({'ask': 'ok?'})}"]}
        return {"log": [f"work{arg['n']}"]}

    g = E.StateGraph(FanOut)
    g.add_node("plan", plan)
    g.add_node("work", work)
    g.add_edge(E.START, "plan")
    g.add_conditional_edges("plan", lambda s: [E.Send("work", {"n": n}) for n in (1, 2, 3)], ["work"])
    g.add_edge("work", E.END)
    return g.compile(checkpointer=saver, **compile_kw)


def _version(v: Any) -> int:
    return int(str(v).split(".")[0])


def _shape(tup: Any) -> dict[str, Any]:
    """A saved checkpoint with what legitimately differs (ids, times, version suffixes) removed."""
    c = tup.checkpoint
    return {
        "v": c["v"],
        "keys": list(c),  # (in order: users print checkpoints)
        # (sorted, so that the repr of a shape is the same for equal shapes)
        "channel_values": {k: repr(v) for k, v in sorted(c["channel_values"].items())},
        "channel_versions": {k: _version(v) for k, v in sorted(c["channel_versions"].items())},
        "versions_seen": {
            n: {k: _version(v) for k, v in sorted(seen.items())}
            for n, seen in sorted(c["versions_seen"].items())
        },
        "updated_channels": c.get("updated_channels"),
        "metadata": {k: v for k, v in tup.metadata.items() if k != "run_id"},
        # interrupt ids derive from the (random) checkpoint id
        "pending_writes": sorted(re.sub(r"id='[0-9a-f]{32}'", "id=…", repr(w[1:])) for w in tup.pending_writes or ()),
    }


# ------------------------------------------------------------------------------ format


@pytest.mark.parametrize("kind", SYNC)
def test_lgnb_writes_the_same_checkpoints_as_langgraph_in_format_4(savers, pg, kind):
    pg(kind)
    history = {}
    for name in ("langgraph", "lgnb"):
        E = _engine(name)
        with savers.open(kind, E) as saver:
            cfg = thread()
            app = _fan_out(E, saver, [])
            app.invoke({"log": []}, cfg)
            app.invoke(E.Command(resume="yes"), cfg)  # versions move on from the paused step
            history[name] = [_shape(t) for t in saver.list(cfg)]
    assert [h["v"] for h in history["lgnb"]] == [4] * len(history["lgnb"])
    assert history["lgnb"] == history["langgraph"]


def test_lgnbs_sqlite_saver_gives_a_checkpoints_keys_in_langgraphs_sqlite_savers_order(savers):
    """Users print checkpoints (`saver.get_tuple(cfg).checkpoint`): the same program, read
    back from lgnb's SQLite saver and from LangGraph's, lists its keys in the same order."""
    keys = {}
    for kind in ("lgnb_sqlite", "langgraph_sqlite"):
        E = _engine("langgraph")
        with savers.open(kind, E) as saver:
            cfg = thread()
            _fan_out(E, saver, []).invoke({"log": []}, cfg)
            keys[kind] = [list(t.checkpoint) for t in saver.list(cfg)]
    assert keys["lgnb_sqlite"] == keys["langgraph_sqlite"]
    assert keys["lgnb_sqlite"][0][:3] == ["v", "ts", "id"]


@pytest.mark.parametrize("kind", SYNC)
def test_replays_forks_and_updates_are_saved_as_langgraph_saves_them(savers, pg, kind):
    pg(kind)
    history = {}
    for name in ("langgraph", "lgnb"):
        E = _engine(name)
        with savers.open(kind, E) as saver:
            cfg = thread()
            g = E.StateGraph(FanOut)
            g.add_node("x", lambda s: {"log": ["x"]})
            g.add_node("y", lambda s: {"log": ["y"]})
            g.add_edge(E.START, "x")
            g.add_edge("x", "y")
            app = g.compile(checkpointer=saver)
            app.invoke({"log": []}, cfg)
            past = list(app.get_state_history(cfg))
            app.invoke(None, past[1].config)  # replay: a fork of the thread
            app.invoke(None, app.update_state(past[2].config, {"log": ["edit"]}))
            history[name] = sorted(
                (t.metadata["step"], t.metadata["source"], repr(_shape(t))) for t in saver.list(cfg)
            )
    assert history["lgnb"] == history["langgraph"]


# ------------------------------------------------------------------ across engines


@pytest.mark.parametrize("kind", SYNC)
@pytest.mark.parametrize("first,second", BOTH_WAYS)
def test_a_thread_paused_mid_step_by_one_engine_is_resumed_by_the_other(savers, pg, kind, first, second):
    """The finished siblings' writes are pending writes of the paused step: the other engine
    finds them by task id, so only the task that asked runs again."""
    pg(kind)
    E1, E2 = _engine(first), _engine(second)
    with savers.open(kind, E1) as saver:
        cfg = thread()
        calls: list[str] = []
        paused = _fan_out(E1, saver, calls).invoke({"log": []}, cfg)
        assert [i.value for i in paused["__interrupt__"]] == [{"ask": "ok?"}]
        assert sorted(calls) == ["plan", "work1", "work2", "work3"]

        calls.clear()
        app2 = _fan_out(E2, saver, calls)
        state = app2.get_state(cfg)
        assert state.next == ("work",)
        assert [i.value for i in state.interrupts] == [{"ask": "ok?"}]
        out = app2.invoke(E2.Command(resume=f"yes from {second}"), cfg)
        assert out == {"log": ["plan", "work1", f"work2:yes from {second}", "work3"]}
        assert calls == ["work2"]
        assert saver.get_tuple(cfg).checkpoint["v"] == 4


@pytest.mark.parametrize("kind", ASYNC)
@pytest.mark.parametrize("first,second", BOTH_WAYS)
def test_a_thread_paused_by_one_engine_is_resumed_by_the_other_async(savers, pg, kind, first, second):
    pg(kind)
    E1, E2 = _engine(first), _engine(second)

    async def scenario() -> None:
        async with savers.aopen(kind, E1) as saver:
            cfg = thread()
            calls: list[str] = []
            await _fan_out(E1, saver, calls).ainvoke({"log": []}, cfg)
            calls.clear()
            app2 = _fan_out(E2, saver, calls)
            out = await app2.ainvoke(E2.Command(resume="yes"), cfg)
            assert out == {"log": ["plan", "work1", "work2:yes", "work3"]}
            assert calls == ["work2"]
            history = [s async for s in app2.aget_state_history(cfg)]
            assert [(s.metadata["source"], s.metadata["step"]) for s in history] == [
                ("loop", 2), ("loop", 1), ("loop", 0), ("input", -1),
            ]

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", SYNC)
@pytest.mark.parametrize("first,second", BOTH_WAYS)
def test_pending_sends_saved_at_a_breakpoint_run_on_the_other_engine(savers, pg, kind, first, second):
    """Sends waiting for the next step live in the tasks channel of the checkpoint."""
    pg(kind)
    E1, E2 = _engine(first), _engine(second)
    with savers.open(kind, E1) as saver:
        cfg = thread()
        _fan_out(E1, saver, [], interrupt_before=["work"]).invoke({"log": []}, cfg)
        calls: list[str] = []
        app2 = _fan_out(E2, saver, calls, interrupt_before=["work"])
        assert app2.get_state(cfg).next == ("work", "work", "work")
        app2.invoke(None, cfg)
        assert sorted(calls) == ["work1", "work2", "work3"]


# ------------------------------------------------------------------ older formats


def _downgrade(checkpoint: dict[str, Any], version: int) -> dict[str, Any]:
    """`checkpoint` as an older LangGraph release saved it."""
    c = {
        **checkpoint,
        "v": version,
        "channel_values": dict(checkpoint["channel_values"]),
        "channel_versions": dict(checkpoint["channel_versions"]),
        "versions_seen": {k: dict(v) for k, v in checkpoint["versions_seen"].items()},
    }
    c.pop("updated_channels", None)
    # before v4, pending Sends were kept beside the channels
    c["pending_sends"] = list(c["channel_values"].pop("__pregel_tasks", []))
    c["channel_versions"].pop("__pregel_tasks", None)
    for seen in c["versions_seen"].values():
        seen.pop("__pregel_tasks", None)
    if version < 3:  # the edge out of START triggered `start:<node>`
        for mapping in (c["channel_values"], c["channel_versions"], *c["versions_seen"].values()):
            if "branch:to:plan" in mapping:
                mapping["start:plan"] = mapping.pop("branch:to:plan")
    return c


def _copy_thread(source: Any, target: Any, cfg: dict, version: int) -> dict:
    """Write every checkpoint (and its pending writes) of a thread into another saver,
    in an older format."""
    new_cfg = thread("old")
    parent: dict[str, Any] = {"configurable": {**new_cfg["configurable"], "checkpoint_ns": ""}}
    for tup in reversed(list(source.list(cfg))):
        old = _downgrade(tup.checkpoint, version)
        saved = target.put(parent, old, tup.metadata, dict(old["channel_versions"]))
        by_task: dict[str, list] = {}
        for task_id, channel, value in tup.pending_writes or ():
            by_task.setdefault(task_id, []).append((channel, value))
        for task_id, writes in by_task.items():
            target.put_writes(saved, writes, task_id)
        parent = saved
    return new_cfg


# PostgresSaver keeps the checkpoint as JSON, so a v3 one with its Sends inside cannot be
# written to it (its own old rows kept them elsewhere): the SQLite savers store any shape
@pytest.mark.parametrize("kind", ["lgnb_sqlite", "langgraph_sqlite"])
@pytest.mark.parametrize("version", [2, 3])
def test_threads_saved_in_an_older_format_resume_as_on_langgraph(savers, pg, kind, version):
    """An older thread (pending Sends beside the channels; for v2, `start:<node>` triggers)
    is migrated when read, and continues exactly as LangGraph continues it."""
    pg(kind)
    results = {}
    for name in ("langgraph", "lgnb"):
        E = _engine(name)
        with savers.open("lgnb_sqlite", E) as source, savers.open(kind, E) as target:
            cfg = thread()
            _fan_out(_engine("langgraph"), source, [], interrupt_before=["work"]).invoke({"log": []}, cfg)
            old_cfg = _copy_thread(source, target, cfg, version)
            assert target.get_tuple(old_cfg).checkpoint["v"] == version
            calls: list[str] = []
            app = _fan_out(E, target, calls, interrupt_before=["work"])
            before = app.get_state(old_cfg)
            paused = app.invoke(None, old_cfg)
            out = app.invoke(E.Command(resume="yes"), old_cfg)
            results[name] = (before.next, before.values, sorted(calls), paused["log"], out)
    assert results["lgnb"] == results["langgraph"]
    assert results["lgnb"][4] == {"log": ["plan", "work1", "work2:yes", "work3"]}


# ------------------------------------------------------------------ strict serde


class Ticket(pydantic.BaseModel):
    title: str
    votes: int = 0


@dataclasses.dataclass
class Note:
    text: str


class Outer(TypedDict, total=False):
    log: Annotated[list, operator.add]


class Inner(TypedDict, total=False):
    log: Annotated[list, operator.add]
    ticket: Ticket


def _with_subgraph(saver: Any) -> Any:
    from lgnb.graph import START, StateGraph
    from lgnb.types import interrupt

    def open_ticket(state: Inner) -> Inner:
        return {"ticket": Ticket(title="bug")}

    def vote(state: Inner) -> Inner:
        answer = interrupt({"ticket": state["ticket"].title})
        return {"log": [f"{state['ticket'].title}:{answer}:{type(state['ticket']).__name__}"]}

    inner = StateGraph(Inner)
    inner.add_node("open_ticket", open_ticket)
    inner.add_node("vote", vote)
    inner.add_edge(START, "open_ticket")
    inner.add_edge("open_ticket", "vote")
    outer = StateGraph(Outer)
    outer.add_node("triage", inner.compile())
    outer.add_edge(START, "triage")
    return outer.compile(checkpointer=saver)


def test_a_subgraphs_own_classes_round_trip_on_its_parents_sqlite_saver(tmp_path):
    """The parent's schema never names `Ticket`; the subgraph's does, and the subgraph's
    state is saved (and read back on resume) through the parent's saver."""
    from lgnb.checkpoint.sqlite import SqliteSaver
    from lgnb.types import Command

    with SqliteSaver.from_conn_string(str(tmp_path / "t.sqlite")) as saver:
        app = _with_subgraph(saver)
        cfg = thread()
        app.invoke({"log": []}, cfg)
        sub = app.get_state(cfg, subgraphs=True).tasks[0].state
        assert sub.values["ticket"] == Ticket(title="bug")
    with SqliteSaver.from_conn_string(str(tmp_path / "t.sqlite")) as saver:  # a new process, as it were
        out = _with_subgraph(saver).invoke(Command(resume="+1"), cfg)
    assert out == {"log": ["bug:+1:Ticket"]}


class Loose(TypedDict, total=False):
    data: Any


def _loose(saver: Any) -> Any:
    from lgnb.graph import START, StateGraph

    g = StateGraph(Loose)
    g.add_node("put", lambda s: {"data": Note("hi")})
    g.add_edge(START, "put")
    return g.compile(checkpointer=saver)


def test_a_class_no_schema_names_is_refused_naming_it_and_the_fix(tmp_path):
    from lgnb.checkpoint.serde import UnsafeCheckpointTypeError
    from lgnb.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(tmp_path / "t.sqlite")) as saver:
        with pytest.raises(UnsafeCheckpointTypeError) as err:
            _loose(saver).invoke({"data": None}, thread())
    message = str(err.value)
    assert f"{__name__}.Note" in message
    assert "allow=[Note]" in message

    with SqliteSaver.from_conn_string(str(tmp_path / "t.sqlite"), allow=[Note]) as saver:
        cfg = thread()
        assert _loose(saver).invoke({"data": None}, cfg) == {"data": Note("hi")}
        assert _loose(saver).get_state(cfg).values == {"data": Note("hi")}


def test_a_thread_langgraph_wrote_with_user_classes_loads_on_lgnb(tmp_path):
    """LangGraph on lgnb's saver stores a pydantic model its schema names (given with
    `allow=`, as LangGraph does not tell a saver its classes unless strict); lgnb reads it
    back as that model, and resumes the thread."""
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph as LGStateGraph
    from langgraph.types import interrupt as lg_interrupt

    from lgnb.checkpoint.sqlite import SqliteSaver
    from lgnb.graph import START, StateGraph
    from lgnb.types import Command, interrupt

    def build(StateGraph: Any, START: Any, interrupt: Any, saver: Any) -> Any:
        def ask(state: Inner) -> Inner:
            return {"log": [f"{interrupt('vote?')}:{state['ticket'].votes}"]}

        g = StateGraph(Inner)
        g.add_node("ask", ask)
        g.add_edge(START, "ask")
        return g.compile(checkpointer=saver)

    path = str(tmp_path / "t.sqlite")
    cfg = thread()
    with SqliteSaver.from_conn_string(path, allow=[Ticket]) as saver:
        build(LGStateGraph, LG_START, lg_interrupt, saver).invoke({"ticket": Ticket(title="x", votes=2)}, cfg)
    with SqliteSaver.from_conn_string(path) as saver:
        app = build(StateGraph, START, interrupt, saver)
        assert app.get_state(cfg).values["ticket"] == Ticket(title="x", votes=2)
        assert app.invoke(Command(resume="up"), cfg)["log"] == ["up:2"]


def test_a_model_defined_inside_a_function_comes_back_to_the_node_that_reads_it(tmp_path):
    """Its class cannot be found by name when the thread is read back: the saver loads its
    data (as LangGraph's serializer does) and the pydantic state makes the model again."""
    from lgnb.checkpoint.sqlite import SqliteSaver
    from lgnb.graph import START, StateGraph
    from lgnb.types import Command, interrupt

    class Inner(pydantic.BaseModel):
        yo: int

    class State(pydantic.BaseModel):
        inner: Inner
        log: Annotated[list, operator.add] = []

    def ask(state: State) -> dict:
        answer = interrupt("go?")
        return {"log": [f"{answer}:{type(state.inner).__name__}:{state.inner.yo}"]}

    def build(saver: Any) -> Any:
        g = StateGraph(State)
        g.add_node("ask", ask)
        g.add_edge(START, "ask")
        return g.compile(checkpointer=saver)

    path, cfg = str(tmp_path / "t.sqlite"), thread()
    with SqliteSaver.from_conn_string(path) as saver:
        build(saver).invoke(State(inner=Inner(yo=7)), cfg)
    with SqliteSaver.from_conn_string(path) as saver:
        out = build(saver).invoke(Command(resume="go"), cfg)
    assert out["log"] == ["go:Inner:7"]


@pytest.mark.parametrize("kind", ["lgnb_sqlite", "postgres"])
@pytest.mark.parametrize("first,second", BOTH_WAYS)
def test_a_send_carrying_the_state_is_stored_without_its_untracked_values(savers, pg, kind, first, second):
    """An untracked value (a lock, a client) travels with a Send in memory but is never
    stored; the other engine resumes the pending Send without it."""
    import threading

    pg(kind)

    def build(E: SimpleNamespace, saver: Any) -> Any:
        if E.name == "lgnb":
            from lgnb.channels import UntrackedValue
        else:
            from langgraph.channels import UntrackedValue

        State = TypedDict(  # noqa: UP013 - the class form would need the names at module level
            "State", {"log": Annotated[list, operator.add], "lock": Annotated[Any, UntrackedValue]}, total=False
        )
        g = E.StateGraph(State)
        g.add_node("setup", lambda s: {"log": ["setup"], "lock": threading.Lock()})
        g.add_node("use", lambda s: {"log": [f"use:{'lock' in s}"]})
        g.add_edge(E.START, "setup")
        g.add_conditional_edges("setup", lambda s: [E.Send("use", s)], ["use"])
        return g.compile(checkpointer=saver, interrupt_before=["use"])

    E1, E2 = _engine(first), _engine(second)
    with savers.open(kind, E1) as saver:
        cfg = thread()
        build(E1, saver).invoke({"log": []}, cfg)
        sends = saver.get_tuple(cfg).checkpoint["channel_values"]["__pregel_tasks"]
        assert [sorted(s.arg) for s in sends] == [["log"]]
        assert build(E2, saver).invoke(None, cfg) == {"log": ["setup", "use:False"]}


def test_checkpoint_events_order_their_config_keys_as_langgraph_does() -> None:
    """A `checkpoints` (and `debug`) event printed or dumped to JSON reads as LangGraph's:
    the namespace first in `configurable`; `get_state().config` keeps the caller's order."""
    from _diff import Engine

    def keys(E: Any) -> Any:
        g = E.StateGraph(_LogState)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "1"}}
        events = [list(c["config"]["configurable"]) for c in app.stream({"log": []}, cfg, stream_mode="checkpoints")]
        debug = [list(c["payload"]["config"]["configurable"])
                 for c in app.stream({"log": []}, {"configurable": {"thread_id": "2"}}, stream_mode="debug")
                 if c["type"] == "checkpoint"]
        return events, debug, list(app.get_state(cfg).config["configurable"])

    ours, theirs = keys(Engine("lgnb")), keys(Engine("langgraph"))
    assert ours == theirs
    assert theirs[0][0] == ["checkpoint_ns", "thread_id", "checkpoint_id"]


class _LogState(TypedDict):
    log: Annotated[list, operator.add]


_LANGGRAPH_ALONE_RESUMES = """
import operator, sys
sys.modules["lgnb"] = None  # a LangGraph process: lgnb not importable
from typing import Annotated
from typing_extensions import TypedDict
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Interrupt, interrupt

class S(TypedDict):
    log: Annotated[list, operator.add]

def ask(s):
    return {"log": ["ask:" + interrupt("ok?")]}

g = StateGraph(S)
g.add_node("ask", ask)
g.add_edge(START, "ask")
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t"}}
    pending = app.get_state(cfg).interrupts
    assert [type(i) for i in pending] == [Interrupt], pending
    print(app.invoke(Command(resume="yes"), cfg))
"""


def test_an_interrupt_lgnb_saved_is_resumed_by_a_langgraph_process_without_lgnb_under_strict_msgpack(tmp_path):
    """The interrupt is stored as LangGraph's `Interrupt`: a LangGraph process that cannot
    import lgnb (a LangGraph server), with `LANGGRAPH_STRICT_MSGPACK`, reads it as its own."""
    import os
    import subprocess
    import sys

    from langgraph.checkpoint.sqlite import SqliteSaver
    from lgnb.graph import START, StateGraph
    from lgnb.types import interrupt

    class S(TypedDict):
        log: Annotated[list, operator.add]

    def ask(s: S) -> dict[str, Any]:
        return {"log": ["ask:" + interrupt("ok?")]}

    db = tmp_path / "shared.sqlite"
    g = StateGraph(S)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    with SqliteSaver.from_conn_string(str(db)) as saver:
        paused = g.compile(checkpointer=saver).invoke({"log": []}, {"configurable": {"thread_id": "t"}})
    assert [i.value for i in paused["__interrupt__"]] == ["ok?"]
    script = tmp_path / "resume.py"
    script.write_text(_LANGGRAPH_ALONE_RESUMES)
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true"}
    done = subprocess.run([sys.executable, str(script), str(db)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "{'log': ['ask:yes']}"


@pytest.mark.parametrize("kind", ["memory", "lgnb_sqlite", "langgraph_sqlite"])
def test_an_interrupt_read_back_from_a_saver_is_lgnbs_interrupt(kind, tmp_path):
    """Stored under LangGraph's class name, it comes back to lgnb programs as lgnb's class
    (`isinstance(i, lgnb.types.Interrupt)`, equality with one they made)."""
    from contextlib import nullcontext

    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver
    from lgnb.checkpoint.memory import InMemorySaver
    from lgnb.checkpoint.sqlite import SqliteSaver
    from lgnb.graph import START, StateGraph
    from lgnb.types import Interrupt, interrupt

    class S(TypedDict):
        log: Annotated[list, operator.add]

    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": [interrupt("q")]})
    g.add_edge(START, "a")
    opened = {"memory": lambda: nullcontext(InMemorySaver()),
              "lgnb_sqlite": lambda: SqliteSaver.from_conn_string(str(tmp_path / "l.sqlite")),
              "langgraph_sqlite": lambda: LangGraphSqliteSaver.from_conn_string(str(tmp_path / "g.sqlite"))}[kind]
    with opened() as saver:
        app = g.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": []}, cfg)
        state = app.get_state(cfg)
        seen = [*state.interrupts, *(i for t in state.tasks for i in t.interrupts),
                *(i for s in app.get_state_history(cfg) for i in s.interrupts)]
        assert seen and all(type(i) is Interrupt for i in seen)
        assert state.interrupts[0] == Interrupt("q", state.interrupts[0].id)

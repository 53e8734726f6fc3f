"""lgnb's PostgresSaver / AsyncPostgresSaver against LangGraph's InMemorySaver, on what
users do with saved threads.

Each scenario runs as

* the reference: LangGraph + ``InMemorySaver``;
* LangGraph's engine + lgnb's PostgreSQL saver (so a difference is the saver's alone);
* lgnb's engine + lgnb's PostgreSQL saver.

Under ``LGNB_DIFF_SELFTEST=1`` the candidate saver is LangGraph's own
``langgraph.checkpoint.postgres`` saver on LangGraph's engine: each scenario is
saver-transparent in LangGraph. Needs ``LGNB_TEST_POSTGRES_URL`` (skipped otherwise).
Every thread id is ``name-<32 hex>``, unique per run (the database is shared), and the
harness normalizes the hex, so "the same thread" is still compared; ``list(None, ...)``
is always narrowed by a per-run metadata tag.
"""

import asyncio
import datetime
import decimal
import enum
import operator
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Optional

import _diff
import _pdiff
import pytest
from _savers import big_value_app
from pydantic import BaseModel
from typing_extensions import TypedDict

R = {"recursion_limit": 1000}


# --------------------------------------------------------------------------------------
# harness: one scenario, the reference and two candidates
# --------------------------------------------------------------------------------------


class _Threads:
    def __init__(self) -> None:
        self.tids: dict[str, str] = {}
        self.tag = uuid.uuid4().hex

    def tid(self, name: str) -> str:
        return self.tids.setdefault(name, f"{name}-{uuid.uuid4().hex}")

    def cfg(self, name: str, **extra) -> dict:
        return {"configurable": {"thread_id": self.tid(name)}, **extra}


class PG(_Threads):
    """Opens candidate savers on the test database (one new connection per open)."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url

    @contextmanager
    def open(self):
        if _diff.selftest_enabled():
            from langgraph.checkpoint.postgres import PostgresSaver
        else:
            from lgnb.checkpoint.postgres import PostgresSaver
        with PostgresSaver.from_conn_string(self.url) as s:
            s.setup()
            yield s

    @asynccontextmanager
    async def aopen(self):
        if _diff.selftest_enabled():
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        else:
            from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver
        async with AsyncPostgresSaver.from_conn_string(self.url) as s:
            await s.setup()
            yield s


class Memory(_Threads):
    """The reference: every open gives the same InMemorySaver (one "database")."""

    def __init__(self, E: Any) -> None:
        super().__init__()
        self.saver = E.InMemorySaver()

    @contextmanager
    def open(self):
        yield self.saver

    @asynccontextmanager
    async def aopen(self):
        yield self.saver


@pytest.fixture
def pg(postgres_url):
    return postgres_url


def check(scenario, url: str, *, engines=("langgraph", "candidate")) -> Any:
    """Run ``scenario(E, savers)`` on the reference and the candidates; assert equal."""
    ref_e = _diff.reference_engine()
    ref = _diff.run_scenario(lambda E: scenario(E, Memory(E)), ref_e)
    assert not (isinstance(ref, tuple) and ref[:1] == ("raises",)), f"reference raised: {ref}"
    for which in engines:
        cand_e = ref_e if which == "langgraph" else _diff.candidate_engine()
        label = f"{cand_e.label}+postgres"
        cand = _diff.run_scenario(lambda E: scenario(E, PG(url)), cand_e)
        _pdiff.compare(ref, cand, ref_label="langgraph+memory", cand_label=label)
    return _diff.normalize(ref)


def snap(s) -> tuple:
    return (s.values, s.next, s.metadata, s.tasks, s.interrupts, s.config, s.parent_config)


def _history(app, cfg, **kw):
    return [(h.values, h.next, h.metadata, h.config, h.parent_config)
            for h in app.get_state_history(cfg, **kw)]


async def _ahistory(app, cfg, **kw):
    return [(h.values, h.next, h.metadata, h.config, h.parent_config)
            async for h in app.aget_state_history(cfg, **kw)]


# --------------------------------------------------------------------------------------
# long threads, forks, second instance, delete_thread
# --------------------------------------------------------------------------------------


class Wide(TypedDict, total=False):
    i: int
    c0: int
    c1: int
    c2: int
    c3: int
    log: Annotated[list, operator.add]
    big: str
    limit: int


def _wide_graph(E, saver):
    def step(s):
        i = s.get("i", 0) + 1
        out = {"i": i, f"c{i % 4}": i}
        if i % 10 == 0:
            out["log"] = [i]
        if i % 33 == 0:
            out["big"] = ("x" * 3000) + str(i)
        return out

    g = E.StateGraph(Wide)
    g.add_node("step", step)
    g.add_edge(E.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["i"] < s.get("limit", 100) else E.END)
    return g.compile(checkpointer=saver)


def test_long_thread_with_forks_and_a_second_thread_reads_back_every_checkpoint(pg):
    """100 steps, forks at steps 20 and 70 each continued, a second thread interleaved,
    then every checkpoint read back (history, get_state by id, before/limit/filter) and
    again through a second connection."""

    def scenario(E, savers):
        out = {}
        cfg, cfg2 = savers.cfg("long"), savers.cfg("other")
        with savers.open() as saver:
            app = _wide_graph(E, saver)
            app.invoke({"i": 0, "limit": 100, "log": []}, {**cfg, **R})
            hist = list(app.get_state_history(cfg))
            for k in (20, 70):
                old = next(h for h in hist if h.values.get("i") == k)
                nc = app.update_state(old.config, {"c1": -k, "limit": k + 40, "log": [f"fork{k}"]})
                app.invoke(None, {**nc, **R})
                app.invoke({"i": 0, "limit": 3, "log": []}, {**cfg2, **R})
            hist = list(app.get_state_history(cfg))
            out["history"] = _history(app, cfg)
            out["by_id"] = [snap(app.get_state(h.config)) == snap(h) for h in hist]
            mid = hist[len(hist) // 2].config
            out["before"] = _history(app, cfg, before=mid, limit=30)
            out["filter"] = _history(app, cfg, filter={"source": "update"})
            out["limit"] = _history(app, cfg, limit=3)
            out["other"] = _history(app, cfg2)
        with savers.open() as saver:  # another connection (another kernel, later)
            app = _wide_graph(E, saver)
            out["reopened"] = _history(app, cfg) == out["history"]
            app.update_state(cfg, {"limit": 115})
            app.invoke(None, {**cfg, **R})
            out["after_reopen"] = _history(app, cfg, limit=4)
        return out

    ref = check(scenario, pg)
    assert len(ref["history"]) > 180 and all(ref["by_id"]) and ref["reopened"] is True


def test_two_saver_instances_fork_continue_and_delete_thread(pg):
    """Two savers on one database (two kernels): A runs 40 steps, B forks at step 15 and
    runs on, A continues the latest (the fork), A forks its own branch; B deletes the
    thread, A reads nothing and starts it again, B reads A's new run."""

    def scenario(E, savers):
        out = []
        cfg = savers.cfg("shared")
        with savers.open() as sa, savers.open() as sb:
            A, B = _wide_graph(E, sa), _wide_graph(E, sb)
            A.invoke({"i": 0, "limit": 40, "log": []}, {**cfg, **R})
            old = next(h for h in B.get_state_history(cfg) if h.values.get("i") == 15)
            B.invoke(None, {**B.update_state(old.config, {"limit": 55, "c0": -1}), **R})
            A.update_state(cfg, {"limit": 70})
            A.invoke(None, {**cfg, **R})
            old = next(h for h in A.get_state_history(cfg)
                       if h.values.get("i") == 30 and h.values.get("c0") != -1)
            A.invoke(None, {**A.update_state(old.config, {"limit": 33}), **R})
            out.append(_history(A, cfg))
            out.append(_history(B, cfg) == out[0])
            out.append(snap(B.get_state(cfg)))
            sb.delete_thread(savers.tid("shared"))
            out.append(_history(A, cfg))
            out.append(A.get_state(cfg).values)
            A.invoke({"i": 0, "limit": 5, "log": []}, {**cfg, **R})
            out.append(_history(B, cfg))
        return out

    ref = check(scenario, pg)
    assert ref[1] is True and len(ref[0]) > 100 and ref[3] == [] and ref[4] == {}


def test_delete_thread_leaves_other_threads_and_their_subgraph_namespaces(pg):
    """Three threads of a graph with a checkpointer=True subgraph, one interrupted inside
    the subgraph; delete_thread of one: the others (and their subgraph checkpoints) still
    read and resume, the deleted one starts from scratch."""

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]

    def scenario(E, savers):
        def inner(s):
            return {"log": [f"inner:{E.interrupt('sub?')}"]}

        sb = E.StateGraph(S)
        sb.add_node("inner", inner)
        sb.add_edge(E.START, "inner")
        out = []
        with savers.open() as saver:
            g = E.StateGraph(S)
            g.add_node("pre", lambda s: {"log": ["pre"]})
            g.add_node("sub", sb.compile(checkpointer=True))
            g.add_edge(E.START, "pre")
            g.add_edge("pre", "sub")
            app = g.compile(checkpointer=saver)
            names = ("d0", "d1", "d2")
            for n in names:
                app.invoke({"log": [n]}, savers.cfg(n))
            saver.delete_thread(savers.tid("d1"))
            for n in names:
                st = app.get_state(savers.cfg(n), subgraphs=True)
                out.append((snap(st), [t.state.values if t.state is not None and hasattr(t.state, "values")
                                       else None for t in st.tasks]))
            out.append(_diff.capture(lambda: app.invoke(E.Command(resume="ok"), savers.cfg("d0"))))
            out.append(_diff.capture(lambda: app.invoke({"log": ["again"]}, savers.cfg("d1"))))
            out.append(_diff.capture(lambda: app.invoke(E.Command(resume="two"), savers.cfg("d2"))))
            out.append(sorted((t.config["configurable"]["checkpoint_ns"].split(":")[0], t.metadata["step"])
                              for t in saver.list(savers.cfg("d2"))))
        return out

    check(scenario, pg)


# --------------------------------------------------------------------------------------
# list(): before, limit, metadata filters (equality of scalar values)
# --------------------------------------------------------------------------------------


class Count(TypedDict, total=False):
    n: int


def _count_graph(E, saver):
    g = E.StateGraph(Count)
    g.add_node("a", lambda s: {"n": s["n"] + 1})
    g.add_node("b", lambda s: {"n": s["n"] * 2})
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=saver)


def test_list_before_limit_and_metadata_filters(pg):
    """Runs tagged with config metadata (user, run number, a per-run tag) on two threads;
    saver.list and get_state_history with filter (one key, several keys, a step, the
    source, a custom key), before and limit, and list(None, filter=) across threads."""

    def scenario(E, savers):
        out = {}
        with savers.open() as saver:
            app = _count_graph(E, saver)
            c1, c2 = savers.cfg("f1"), savers.cfg("f2")
            tag = savers.tag
            for i, (c, user) in enumerate([(c1, "ann"), (c2, "bob"), (c1, "bob"), (c2, "ann")]):
                app.invoke({"n": i}, {**c, "metadata": {"user": user, "run": i, "tag": tag}})
            app.update_state(c1, {"n": 100}, as_node="a")

            def ls(config, **kw):
                return [(t.checkpoint["channel_values"], t.metadata, t.config, t.parent_config)
                        for t in saver.list(config, **kw)]

            out["all"] = ls(c1)
            out["user"] = ls(c1, filter={"user": "bob"})
            out["two_keys"] = ls(c1, filter={"user": "ann", "source": "loop"})
            out["step"] = ls(c1, filter={"step": 2})
            out["run_int"] = ls(c2, filter={"run": 3})
            out["update"] = ls(c1, filter={"source": "update"})
            out["missing"] = ls(c1, filter={"user": "zed"})
            hist = list(saver.list(c1))
            out["before"] = ls(c1, before=hist[3].config)
            out["before_limit"] = ls(c1, before=hist[2].config, limit=2)
            out["limit1"] = ls(c1, limit=1)
            out["before_filter"] = ls(c1, before=hist[1].config, filter={"user": "ann"})
            out["across"] = sorted((t.config["configurable"]["thread_id"], t.metadata["step"], t.metadata["user"])
                                   for t in saver.list(None, filter={"tag": tag, "source": "input"}))
            out["hist_filter"] = _history(app, c2, filter={"user": "ann", "step": 1})
            out["hist_before"] = _history(app, c2, before=hist[0].config)  # another thread's checkpoint
        return out

    ref = check(scenario, pg)
    assert len(ref["across"]) == 4 and len(ref["user"]) == 4


def test_get_state_and_replay_from_a_checkpoint_id(pg):
    """get_state of an older checkpoint by id, replay from it (invoke(None, that config)),
    and a checkpoint id from another thread or unknown: as InMemorySaver reads them."""

    def scenario(E, savers):
        out = []
        with savers.open() as saver:
            app = _count_graph(E, saver)
            cfg = savers.cfg("replay")
            app.invoke({"n": 1}, cfg)
            hist = list(app.get_state_history(cfg))
            after_a = next(h for h in hist if h.next == ("b",))
            out.append(snap(app.get_state(after_a.config)))
            out.append(app.invoke(None, after_a.config))
            out.append(_history(app, cfg))
            unknown = {"configurable": {"thread_id": savers.tid("replay"), "checkpoint_id": str(uuid.UUID(int=7))}}
            out.append(_diff.capture(lambda: snap(app.get_state(unknown))))
            other = {"configurable": {"thread_id": savers.tid("nobody"),
                                      "checkpoint_id": after_a.config["configurable"]["checkpoint_id"]}}
            out.append(_diff.capture(lambda: snap(app.get_state(other))))
        return out

    check(scenario, pg)


# --------------------------------------------------------------------------------------
# failures, pending writes, interrupts across instances
# --------------------------------------------------------------------------------------


class Log(TypedDict, total=False):
    log: Annotated[list, operator.add]
    n: int


def test_pending_writes_after_a_failure_are_kept_and_read_by_a_second_instance(pg):
    """A parallel step where `ok` succeeds and `bad` raises: the error surfaces, the
    checkpoint's pending writes hold ok's write and bad's error, a second saver instance
    sees the same tasks, and the resume (after update_state) does not re-run `ok`."""

    def scenario(E, savers):
        calls = []

        def ok(s):
            calls.append("ok")
            return {"log": ["ok" + "x" * 3000]}

        def bad(s):
            calls.append("bad")
            if s.get("n", 0) == 0:
                time.sleep(0.2)  # `ok` has finished: LangGraph does not wait for it
                raise ValueError("boom")
            return {"log": ["bad fixed"]}

        out = []
        cfg = savers.cfg("fail")
        g = E.StateGraph(Log)
        g.add_node("ok", ok)
        g.add_node("bad", bad)
        g.add_node("join", lambda s: {"log": ["join"]})
        g.add_edge(E.START, "ok")
        g.add_edge(E.START, "bad")
        g.add_edge(["ok", "bad"], "join")
        with savers.open() as saver:
            app = g.compile(checkpointer=saver)
            out.append(_diff.capture(lambda: app.invoke({"log": [], "n": 0}, cfg)))
            out.append(snap(app.get_state(cfg)))
        with savers.open() as saver:
            app = g.compile(checkpointer=saver)
            out.append(snap(app.get_state(cfg)))
            tup = saver.get_tuple(cfg)
            out.append(sorted((w[1], repr(w[2])[:40]) for w in tup.pending_writes))
            app.update_state(cfg, {"n": 1})
            out.append(_diff.capture(lambda: app.invoke(None, cfg)))
            out.append([snap(s) for s in app.get_state_history(cfg)])
            out.append(sorted(calls))
        return out

    check(scenario, pg)


def test_parallel_interrupts_with_sends_resumed_by_id_from_another_instance(pg):
    """Send fans out three tasks that each interrupt; instance A starts the run, instance
    B resumes two interrupts by id, then the last; finished tasks never re-run."""

    class MR(TypedDict, total=False):
        items: list
        done: Annotated[list, operator.add]

    def scenario(E, savers):
        calls = []

        def work(s):
            calls.append(s["item"])
            ans = E.interrupt({"item": s["item"]})
            return {"done": [f"{s['item']}={ans}"]}

        g = E.StateGraph(MR)
        g.add_node("work", work)
        g.add_node("total", lambda s: {"done": [f"total:{len(s['done'])}"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("work", {"item": i}) for i in s["items"]], ["work"])
        g.add_edge("work", "total")
        out = []
        cfg = savers.cfg("sends")
        with savers.open() as sa, savers.open() as sb:
            A, B = g.compile(checkpointer=sa), g.compile(checkpointer=sb)
            r = A.invoke({"items": ["x", "y", "z"], "done": []}, cfg)
            ints = sorted(r["__interrupt__"], key=lambda i: i.value["item"])
            out.append([i.value for i in ints])
            st = B.get_state(cfg)
            out.append((st.next, sorted(t.interrupts[0].value["item"] for t in st.tasks)))
            r2 = B.invoke(E.Command(resume={ints[0].id: "X", ints[2].id: "Z"}), cfg)
            out.append(sorted(i.value["item"] for i in r2["__interrupt__"]))
            out.append(A.invoke(E.Command(resume={ints[1].id: "Y"}), cfg))
            out.append(sorted(calls))
            out.append([(h.values, h.next, h.metadata["source"]) for h in B.get_state_history(cfg)])
        return out

    check(scenario, pg)


def test_durability_modes_save_what_each_mode_promises(pg):
    """The same 4-step run under durability "sync", "async" and "exit": the history each
    leaves (exit: only the last checkpoint), and an interrupt under "exit" resumes."""

    def scenario(E, savers):
        def ask(s):
            return {"log": [E.interrupt("go?")]}

        out = {}
        with savers.open() as saver:
            g = E.StateGraph(Log)
            for n in ("a", "b", "c"):
                g.add_node(n, (lambda n: lambda s: {"log": [n]})(n))
            g.add_node("ask", ask)
            g.add_edge(E.START, "a")
            g.add_edge("a", "b")
            g.add_edge("b", "ask")
            g.add_edge("ask", "c")
            app = g.compile(checkpointer=saver)
            for mode in ("sync", "async", "exit"):
                cfg = savers.cfg(mode)
                r1 = app.invoke({"log": []}, cfg, durability=mode)
                r2 = app.invoke(E.Command(resume=mode), cfg, durability=mode)
                out[mode] = (r1, r2, [(h.values, h.next, h.metadata["step"], h.metadata["source"])
                                      for h in app.get_state_history(cfg)])
        return out

    check(scenario, pg)


# --------------------------------------------------------------------------------------
# values: odd stdlib types, messages, user classes named by the schema
# --------------------------------------------------------------------------------------


ODD = {
    "bytes": b"\x00\xff" * 2000,
    "dt": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
    "naive_dt": datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
    "date": datetime.date(2024, 1, 2),
    "time": datetime.time(12, 30),
    "td": datetime.timedelta(seconds=5),
    "set": {1, 2, 3},
    "fset": frozenset({"a"}),
    "tuple": (1, (2, 3), [4]),
    "nan": [float("nan"), float("-inf")],
    "int64": [2**63 - 1, -(2**63)],
    "none": None,
    "intkeys": {1: "a", (1, 2): "b"},
    "nested": {"a": [{"b": {1, 2}}]},
    "unicode": "héllo ✓ \U0001f600",
    "empty": [],
    "emptydict": {},
    "floatint": 1.0,
    "decimal": decimal.Decimal("1.10"),
    "uuid": uuid.UUID(int=5),
    "bool": True,
}


def test_odd_value_types_round_trip_through_every_checkpoint(pg):
    """bytes, datetimes, sets, tuples, NaN, 64-bit edge ints, Decimal, UUID, None, int/tuple dict
    keys, unicode: equal (same types) in every checkpoint, also read by a second
    connection. (No NUL in a string: PostgreSQL's JSONB cannot hold one.)"""

    class S(TypedDict, total=False):
        v: Any
        w: Any

    def scenario(E, savers):
        out = {}
        for name in ("first", "again"):
            with savers.open() as saver:
                g = E.StateGraph(S)
                g.add_node("a", lambda s: {"w": s["v"]})
                g.add_edge(E.START, "a")
                app = g.compile(checkpointer=saver)
                for k, v in ODD.items():
                    if name == "first":
                        app.invoke({"v": v}, savers.cfg(k))
                    out[(name, k)] = [(repr(h.values), {x: type(y).__name__ for x, y in h.values.items()})
                                      for h in app.get_state_history(savers.cfg(k))]
        return out

    check(scenario, pg)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Point:
    x: int
    y: int


class Profile(BaseModel):
    name: str
    tags: list[str] = []
    home: Optional[Point] = None


class Typed(TypedDict, total=False):
    color: Color
    point: Point
    profile: Profile
    points: Annotated[list[Point], operator.add]


def test_schema_named_enum_dataclass_and_pydantic_values_round_trip(pg):
    """A state whose schema names an Enum, a dataclass and a pydantic model (module-level
    classes, as users define them, one nested in another): every checkpoint reads them
    back as those classes, and an interrupted run resumes from a second connection."""

    def scenario(E, savers):
        def move(s):
            p = s["point"]
            return {"point": Point(p.x + 1, p.y), "points": [p], "color": Color.BLUE}

        def ask(s):
            who = E.interrupt(s["profile"])
            return {"profile": Profile(name=who, tags=["x"], home=s["point"])}

        def build(saver):
            g = E.StateGraph(Typed)
            g.add_node("move", move)
            g.add_node("ask", ask)
            g.add_edge(E.START, "move")
            g.add_edge("move", "ask")
            return g.compile(checkpointer=saver)

        cfg = savers.cfg("typed")
        out = []
        with savers.open() as saver:
            app = build(saver)
            r = app.invoke({"color": Color.RED, "point": Point(1, 2), "points": [],
                            "profile": Profile(name="ann")}, cfg)
            out.append(r)
        with savers.open() as saver:
            app = build(saver)
            out.append(app.invoke(E.Command(resume="bob"), cfg))
            out.append([(h.values, {k: type(v).__name__ for k, v in h.values.items()})
                        for h in app.get_state_history(cfg)])
        return out

    # lgnb's engine only: lgnb's strict saver learns a graph's classes from lgnb's
    # compile (`with_allowlist`); LangGraph's compile calls it only under
    # LANGGRAPH_STRICT_MSGPACK, so on LangGraph's engine the saver refuses them, by design.
    check(scenario, pg, engines=("candidate",))


def test_agent_messages_thread_with_tool_calls_edits_and_removals(pg):
    """A chat thread on add_messages: an AI message with tool calls, tool results, a
    human edit by id through update_state, RemoveMessage, and a later turn; every
    checkpoint's messages (types, ids, tool_calls) read back as InMemorySaver's."""

    def scenario(E, savers):
        from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage

        turn = {"i": 0}

        def agent(s):
            turn["i"] += 1
            if not isinstance(s["messages"][-1], ToolMessage) and turn["i"] == 1:
                return {"messages": [AIMessage("", id=f"ai{turn['i']}", tool_calls=[
                    {"name": "lookup", "args": {"q": "x", "n": 1}, "id": "call1"},
                    {"name": "lookup", "args": {"q": "y"}, "id": "call2"}])]}
            return {"messages": [AIMessage(f"answer {turn['i']}", id=f"ai{turn['i']}",
                                           response_metadata={"finish_reason": "stop"},
                                           usage_metadata={"input_tokens": 3, "output_tokens": 2,
                                                           "total_tokens": 5})]}

        def tools(s):
            last = s["messages"][-1]
            return {"messages": [ToolMessage(f"result {c['args']['q']}", tool_call_id=c["id"], id=f"t{c['id']}",
                                             artifact={"raw": [1, 2]})
                                 for c in last.tool_calls]}

        def route(s):
            last = s["messages"][-1]
            return "tools" if getattr(last, "tool_calls", None) else E.END

        with savers.open() as saver:
            g = E.StateGraph(E.MessagesState)
            g.add_node("agent", agent)
            g.add_node("tools", tools)
            g.add_edge(E.START, "agent")
            g.add_conditional_edges("agent", route, ["tools", E.END])
            g.add_edge("tools", "agent")
            app = g.compile(checkpointer=saver)
            cfg = savers.cfg("chat")
            app.invoke({"messages": [HumanMessage("hi", id="h1")]}, cfg)
            app.update_state(cfg, {"messages": [HumanMessage("hi (edited)", id="h1"),
                                                RemoveMessage(id="tcall2")]})
            app.invoke({"messages": [HumanMessage("more", id="h2")]}, cfg)
            app.update_state(cfg, {"messages": [RemoveMessage(id=E.REMOVE_ALL_MESSAGES),
                                                HumanMessage("fresh", id="h3")]})
            return [(h.values, h.next, h.metadata["source"]) for h in app.get_state_history(cfg)]

    check(scenario, pg)


BIG = "B" * 6000


def test_one_large_value_in_several_threads_survives_deleting_threads(pg):
    """The same >2 KB value in channels, pending writes and an interrupt of three threads;
    delete_thread of one, then of another: the remaining thread still reads and resumes."""

    def scenario(E, savers):
        with savers.open() as saver:
            app = big_value_app(E, saver, BIG)
            for i in range(3):
                app.invoke({"v": BIG}, savers.cfg(f"big{i}"))
            out = []
            saver.delete_thread(savers.tid("big0"))
            out.append([snap(s) for s in app.get_state_history(savers.cfg("big1"))])
            saver.delete_thread(savers.tid("big2"))
            out.append(app.invoke(E.Command(resume=BIG), savers.cfg("big1")))
            out.append([s.values for s in app.get_state_history(savers.cfg("big0"))])
            out.append([(t.checkpoint["channel_values"], sorted(t.pending_writes, key=lambda w: (w[1], repr(w[2]))))
                        for t in saver.list(savers.cfg("big1"))])
        return out

    check(scenario, pg)


def test_delta_channel_on_a_long_forked_thread(pg):
    """A DeltaChannel (snapshot every 8 updates) over 60 steps, forked at 20 and 45 and
    continued, read through a second connection: every checkpoint rebuilds the same value."""

    def _fold(state, writes):
        out = list(state)
        for w in writes:
            out.extend(w if isinstance(w, list) else [w])
        return out

    def scenario(E, savers):
        DC = E.module("channels.delta").DeltaChannel

        class S(TypedDict, total=False):
            log: Annotated[list, DC(_fold, snapshot_frequency=8)]
            i: int
            limit: int

        def build(saver):
            g = E.StateGraph(S)
            g.add_node("step", lambda s: {"log": [s["i"]], "i": s["i"] + 1})
            g.add_edge(E.START, "step")
            g.add_conditional_edges("step", lambda s: "step" if s["i"] < s["limit"] else E.END)
            return g.compile(checkpointer=saver)

        cfg = savers.cfg("dlong")
        with savers.open() as saver:
            app = build(saver)
            app.invoke({"i": 0, "limit": 60}, {**cfg, **R})
            hist = list(app.get_state_history(cfg))
            for k in (20, 45):
                old = next(h for h in hist if h.values.get("i") == k)
                app.invoke(None, {**app.update_state(old.config, {"log": [f"f{k}"], "limit": k + 10}), **R})
        with savers.open() as saver:
            app = build(saver)
            return [(h.values, h.metadata) for h in app.get_state_history(cfg)]

    check(scenario, pg)


# --------------------------------------------------------------------------------------
# async: AsyncPostgresSaver
# --------------------------------------------------------------------------------------


def test_async_saver_concurrent_threads_fork_and_history(pg):
    """AsyncPostgresSaver: three threads of 40 steps run concurrently (asyncio.gather),
    one forked and continued while another continues, every history read back."""

    def scenario(E, savers):
        async def body():
            async with savers.aopen() as saver:
                app = _wide_graph(E, saver)
                cfgs = [savers.cfg(f"a{i}") for i in range(3)]
                await asyncio.gather(*(app.ainvoke({"i": 0, "limit": 40 + i, "log": []}, {**c, **R})
                                       for i, c in enumerate(cfgs)))
                old = [h async for h in app.aget_state_history(cfgs[0]) if h.values.get("i") == 30][0]
                nc = await app.aupdate_state(old.config, {"limit": 60, "c2": -2})
                await app.aupdate_state(cfgs[1], {"limit": 50})
                await asyncio.gather(app.ainvoke(None, {**nc, **R}),
                                     app.ainvoke(None, {**cfgs[1], **R}))
                return [await _ahistory(app, c) for c in cfgs]

        return asyncio.run(body())

    check(scenario, pg)


def test_async_saver_interrupt_resume_before_limit_filter_and_adelete_thread(pg):
    """Async nodes on AsyncPostgresSaver: an interrupt, resume from a second saver
    instance, aget_state_history with before/limit/filter, alist across threads by tag,
    adelete_thread."""

    def scenario(E, savers):
        async def body():
            async def a(s):
                await asyncio.sleep(0)
                return {"log": ["a"], "n": s.get("n", 0) + 1}

            async def ask(s):
                return {"log": [E.interrupt({"n": s["n"]})]}

            g = E.StateGraph(Log)
            g.add_node("a", a)
            g.add_node("ask", ask)
            g.add_edge(E.START, "a")
            g.add_edge("a", "ask")
            out = []
            c1, c2 = savers.cfg("x1"), savers.cfg("x2")
            md = {"metadata": {"tag": savers.tag}}
            async with savers.aopen() as s1, savers.aopen() as s2:
                A, B = g.compile(checkpointer=s1), g.compile(checkpointer=s2)
                out.append(await A.ainvoke({"log": [], "n": 0}, {**c1, **md}))
                out.append(await A.ainvoke({"log": [], "n": 5}, {**c2, **md}))
                out.append(await B.ainvoke(E.Command(resume="yes"), {**c1, **md}))
                st = await B.aget_state(c2)
                out.append(snap(st))
                hist = [h async for h in B.aget_state_history(c1)]
                out.append(await _ahistory(B, c1, before=hist[1].config, limit=2))
                out.append(await _ahistory(A, c1, filter={"source": "input"}))
                out.append(sorted([(t.config["configurable"]["thread_id"], t.metadata["step"])
                                   async for t in s1.alist(None, filter={"tag": savers.tag, "step": 1})]))
                await s2.adelete_thread(savers.tid("x1"))
                out.append(await _ahistory(A, c1))
                out.append(await A.ainvoke(E.Command(resume="late"), c2))
            return out

        return asyncio.run(body())

    check(scenario, pg)


def test_async_saver_failure_in_async_fan_out_keeps_the_sibling_writes(pg):
    """Async fan-out on AsyncPostgresSaver: `b` fails while `c` is still awaiting and is
    cancelled; `a2` finished first. The saved tasks (error / result) and the resume,
    which re-runs only what did not finish, are InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            calls = []

            def mk(n, delay, fail=False):
                async def f(s):
                    calls.append(n)
                    await asyncio.sleep(delay)
                    if fail and calls.count(n) == 1:
                        raise ValueError(f"{n} broke")
                    return {"log": [n]}

                return f

            g = E.StateGraph(Log)
            g.add_node("start", mk("start", 0))
            g.add_node("a2", mk("a2", 0))
            g.add_node("b", mk("b", 0.1, fail=True))
            g.add_node("c", mk("c", 1.0))
            g.add_edge(E.START, "start")
            for n in ("a2", "b", "c"):
                g.add_edge("start", n)
            cfg = savers.cfg("afail")
            out = []
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                out.append(await _diff.acapture(lambda: app.ainvoke({"log": []}, cfg)))
                st = await app.aget_state(cfg)
                # c's CancelledError is saved in the background as the run ends: whether it
                # lands varies on LangGraph itself (memory and PostgreSQL disagree under load)
                out.append((st.next, sorted((t.name, "<cancelled or not saved>" if t.error is None or isinstance(
                    t.error, asyncio.CancelledError) else repr(t.error), t.result) for t in st.tasks)))
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                out.append(await app.ainvoke(None, cfg))
                out.append(sorted(calls))
                out.append(await _ahistory(app, cfg))
            return out

        return asyncio.run(body())

    check(scenario, pg)


class Shelf(TypedDict, total=False):
    points: Sequence[Point]
    by_name: Mapping[str, Profile]
    colors: Annotated[list[Color], operator.add]


def test_classes_named_inside_sequence_and_mapping_annotations_round_trip(pg):
    """`Sequence[Point]` and `Mapping[str, Profile]` (collections.abc generics, as type
    checkers recommend for state fields) name their classes as much as `list[Point]`
    does: the run saves them and every checkpoint reads them back."""

    def scenario(E, savers):
        def fill(s):
            return {"points": [Point(1, 2), Point(3, 4)],
                    "by_name": {"ann": Profile(name="ann", home=Point(0, 0))},
                    "colors": [Color.RED]}

        with savers.open() as saver:
            g = E.StateGraph(Shelf)
            g.add_node("fill", fill)
            g.add_edge(E.START, "fill")
            app = g.compile(checkpointer=saver)
            cfg = savers.cfg("shelf")
            out = [_diff.capture(lambda: app.invoke({"points": [], "colors": []}, cfg))]
            out.append([h.values for h in app.get_state_history(cfg)])
        return out

    # lgnb's engine only (see the test above)
    check(scenario, pg, engines=("candidate",))


class Task(BaseModel):
    topic: str
    color: Color = Color.RED


class Board(BaseModel):
    topics: list[str] = []
    done: Annotated[list[Point], operator.add] = []
    last: Optional[Task] = None


def test_async_pydantic_state_with_send_payloads_and_interrupt_on_async_saver(pg):
    """A pydantic state (the docs' BaseModel graphs) on AsyncPostgresSaver: Send carries a
    pydantic payload to an async node that interrupts; resumed from a second saver; the
    history holds the models."""

    def scenario(E, savers):
        async def body():
            async def work(t: Task):
                ok = E.interrupt({"topic": t.topic})
                return {"done": [Point(len(t.topic), 1 if ok else 0)]}

            g = E.StateGraph(Board)
            g.add_node("work", work)
            g.add_node("close", lambda s: {"last": Task(topic="+".join(s.topics))})
            g.add_edge("work", "close")
            g.add_conditional_edges(E.START, lambda s: [E.Send("work", Task(topic=x, color=Color.BLUE))
                                                       for x in s.topics], ["work"])
            cfg = savers.cfg("board")
            out = []
            async with savers.aopen() as s1:
                app = g.compile(checkpointer=s1)
                r = await app.ainvoke(Board(topics=["ab", "abc"]), cfg)
                out.append(sorted(i.value["topic"] for i in r["__interrupt__"]))
                ids = {i.value["topic"]: i.id for i in r["__interrupt__"]}
            async with savers.aopen() as s2:
                app = g.compile(checkpointer=s2)
                out.append(await app.ainvoke(E.Command(resume={ids["ab"]: True, ids["abc"]: False}), cfg))
                out.append([(h.values, h.next) async for h in app.aget_state_history(cfg)])
            return out

        return asyncio.run(body())

    check(scenario, pg, engines=("candidate",))

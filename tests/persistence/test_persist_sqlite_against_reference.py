"""lgnb's SqliteSaver (deltas, deduplicated values, one transaction a step) against
LangGraph's InMemorySaver, on what users do with saved threads.

Each scenario runs as

* the reference: LangGraph + ``InMemorySaver``;
* LangGraph's engine + the candidate saver (so a difference is the saver's alone);
* the candidate engine + the candidate saver.

The candidate saver is lgnb's ``SqliteSaver`` (``AsyncSqliteSaver`` for async scenarios);
under ``LGNB_DIFF_SELFTEST=1`` it is LangGraph's own ``SqliteSaver`` and the candidate
engine is LangGraph, which checks that each scenario is saver-transparent in LangGraph.
Observables are compared with the persistence suite's harness (ids/timestamps normalized).
"""



import asyncio
import datetime
import operator
import sqlite3
import threading
import time
import uuid
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Annotated, Any

import _diff
import _pdiff
import pytest
from _savers import big_value_app
from typing_extensions import TypedDict

R = {"recursion_limit": 2000}


# --------------------------------------------------------------------------------------
# harness: one scenario, the reference and two candidates
# --------------------------------------------------------------------------------------


class Files:
    """Opens candidate savers on files under tmp_path (one file per name per run)."""

    def __init__(self, tmp_path: Path, tag: str) -> None:
        self.tmp_path = tmp_path
        self.tag = tag

    def path(self, name: str = "db") -> str:
        return str(self.tmp_path / f"{self.tag}-{name}.sqlite")

    @contextmanager
    def open(self, name: str = "db"):
        if _diff.selftest_enabled():
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(self.path(name), check_same_thread=False)
            try:
                yield SqliteSaver(conn)
            finally:
                conn.close()
        else:
            from lgnb.checkpoint.sqlite import SqliteSaver

            with SqliteSaver.from_conn_string(self.path(name)) as s:
                yield s

    @asynccontextmanager
    async def aopen(self, name: str = "db"):
        if _diff.selftest_enabled():
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
        else:
            from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
        async with AsyncSqliteSaver.from_conn_string(self.path(name)) as s:
            yield s


class Memory:
    """The reference: every name opens the same InMemorySaver (one "file")."""

    def __init__(self, E: Any) -> None:
        self.saver = E.InMemorySaver()

    @contextmanager
    def open(self, name: str = "db"):
        yield self.saver

    @asynccontextmanager
    async def aopen(self, name: str = "db"):
        yield self.saver


def check(scenario, tmp_path: Path, *, engines=("langgraph", "candidate")) -> Any:
    """Run ``scenario(E, savers)`` on the reference and the candidates; assert equal."""
    ref_e = _diff.reference_engine()
    ref = _diff.run_scenario(lambda E: scenario(E, Memory(E)), ref_e)
    assert not (isinstance(ref, tuple) and ref[:1] == ("raises",)), f"reference raised: {ref}"
    for which in engines:
        cand_e = ref_e if which == "langgraph" else _diff.candidate_engine()
        label = f"{cand_e.label}+sqlite"
        cand = _diff.run_scenario(lambda E: scenario(E, Files(tmp_path, f"{which}-{uuid.uuid4().hex[:6]}")), cand_e)
        _pdiff.compare(ref, cand, ref_label="langgraph+memory", cand_label=label)
    return _diff.normalize(ref)


def cfg_of(tid: str) -> dict:
    return {"configurable": {"thread_id": tid}}


def snap(s) -> tuple:
    """A whole StateSnapshot minus created_at (normalized anyway)."""
    return (s.values, s.next, s.metadata, s.tasks, s.interrupts, s.config, s.parent_config)


def snap_nostate(s) -> tuple:
    """`snap` with each task's `state` left out (see the subgraph tests)."""
    tasks = tuple((t.id, t.name, t.path, t.error, t.interrupts, t.result) for t in s.tasks)
    return (s.values, s.next, s.metadata, tasks, s.interrupts, s.config, s.parent_config)


# --------------------------------------------------------------------------------------
# long threads, forks, interleaved threads, reopened file, second instance
# --------------------------------------------------------------------------------------


class Wide(TypedDict, total=False):
    i: int
    c0: int
    c1: int
    c2: int
    c3: int
    c4: int
    c5: int
    c6: int
    c7: int
    log: Annotated[list, operator.add]
    big: str
    limit: int


def _wide_graph(E, saver):
    def step(s):
        i = s.get("i", 0) + 1
        out = {"i": i, f"c{i % 8}": i}
        if i % 10 == 0:
            out["log"] = [i]
        if i % 33 == 0:
            out["big"] = ("x" * 3000) + str(i)
        return out

    g = E.StateGraph(Wide)
    g.add_node("step", step)
    g.add_edge(E.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["i"] < s.get("limit", 150) else E.END)
    return g.compile(checkpointer=saver)


def _history(app, cfg, **kw):
    return [(h.values, h.next, h.metadata, h.config, h.parent_config)
            for h in app.get_state_history(cfg, **kw)]


def test_long_thread_with_forks_and_a_second_thread_reads_back_every_checkpoint(tmp_path):
    """150 steps (chains cross two full maps), forks at steps 20/70/130 each continued,
    a second thread interleaved, then every checkpoint of every branch read back (history,
    get_state by id, before/limit/filter) and again from a reopened file."""

    def scenario(E, savers):
        out = {}
        with savers.open() as saver:
            app = _wide_graph(E, saver)
            cfg, cfg2 = cfg_of("long"), cfg_of("other")
            app.invoke({"i": 0, "limit": 150, "log": []}, {**cfg, **R})
            hist = list(app.get_state_history(cfg))
            for k in (20, 70, 130):
                old = next(h for h in hist if h.values.get("i") == k)
                nc = app.update_state(old.config, {"c1": -k, "limit": k + 80, "log": [f"fork{k}"]})
                app.invoke(None, {**nc, **R})
                app.invoke({"i": 0, "limit": 3, "log": []}, {**cfg2, **R})
            app.invoke(None, {**cfg, **R})
            hist = list(app.get_state_history(cfg))
            out["history"] = _history(app, cfg)
            out["by_id"] = [snap(app.get_state(h.config)) == snap(h) for h in hist]
            mid = hist[len(hist) // 2].config
            out["before"] = _history(app, cfg, before=mid, limit=70)
            out["filter"] = _history(app, cfg, filter={"source": "update"})
            out["limit"] = _history(app, cfg, limit=3)
            out["other"] = _history(app, cfg2)
        with savers.open() as saver:  # reopened (another kernel, later)
            app = _wide_graph(E, saver)
            out["reopened"] = _history(app, cfg_of("long")) == out["history"]
            app.invoke(None, {**cfg_of("long"), **R})
            out["after_reopen"] = _history(app, cfg_of("long"), limit=3)
        return out

    ref = check(scenario, tmp_path)
    assert len(ref["history"]) > 390 and all(ref["by_id"]) and ref["reopened"] is True


def test_two_saver_instances_on_one_file_fork_and_continue(tmp_path):
    """Two savers on one file (two kernels): A runs 70 steps, B forks at step 30 and
    runs on, A continues the (now latest) fork, A forks its own branch; B then deletes
    the thread and A starts it again. Both read the same history as one InMemorySaver."""

    def scenario(E, savers):
        out = []
        with savers.open() as sa, savers.open() as sb:
            A, B = _wide_graph(E, sa), _wide_graph(E, sb)
            cfg = cfg_of("shared")
            A.invoke({"i": 0, "limit": 70, "log": []}, {**cfg, **R})
            old = next(h for h in B.get_state_history(cfg) if h.values.get("i") == 30)
            B.invoke(None, {**B.update_state(old.config, {"limit": 100, "c0": -1}), **R})
            A.update_state(cfg, {"limit": 140})
            A.invoke(None, {**cfg, **R})
            old = next(h for h in A.get_state_history(cfg)
                       if h.values.get("i") == 50 and h.values.get("c0") != -1)
            A.invoke(None, {**A.update_state(old.config, {"limit": 60}), **R})
            out.append(_history(A, cfg))
            out.append(_history(B, cfg) == out[0])
            sb.delete_thread("shared")
            out.append(_history(A, cfg))
            A.invoke({"i": 0, "limit": 5, "log": []}, {**cfg, **R})
            out.append(_history(B, cfg))
        return out

    ref = check(scenario, tmp_path)
    assert ref[1] is True and len(ref[0]) > 190 and ref[2] == []


def test_a_reader_instance_sees_consistent_checkpoints_while_another_writes(tmp_path):
    """A second saver reads get_state/get_state_history while the first runs 150 steps
    in another thread: every snapshot it sees is one the writer saved (c_k channels agree
    with i), never a mix of two checkpoints' versions."""
    if _diff.selftest_enabled():
        pytest.skip("lgnb only")
    import lgnb.graph as G
    from lgnb.checkpoint.sqlite import SqliteSaver

    class E:
        StateGraph, START, END = G.StateGraph, G.START, G.END

    path = str(tmp_path / "rw.sqlite")
    bad: list = []
    with SqliteSaver.from_conn_string(path) as w, SqliteSaver.from_conn_string(path) as r:
        writer, reader = _wide_graph(E, w), _wide_graph(E, r)
        cfg = cfg_of("rw")
        t = threading.Thread(target=lambda: writer.invoke({"i": 0, "limit": 150, "log": []}, {**cfg, **R}))
        t.start()
        seen = 0
        while t.is_alive() or seen == 0:
            for s in [reader.get_state(cfg), *list(reader.get_state_history(cfg, limit=5))]:
                v = s.values
                i = v.get("i", 0)
                for k in range(8):
                    # c_k was last set at the largest j <= i with j % 8 == k
                    j = i - ((i - k) % 8)
                    want = j if j >= 1 else None
                    if v.get(f"c{k}") != want:
                        bad.append((i, k, v.get(f"c{k}")))
                if v.get("log", []) != [x for x in range(10, i + 1, 10)] and "i" in v:
                    bad.append((i, "log", v.get("log")))
                seen += 1
        t.join()
    assert not bad, bad[:5]


# --------------------------------------------------------------------------------------
# values: in-place mutation by a sibling task, caller mutation, odd types, shared values
# --------------------------------------------------------------------------------------


class Items(TypedDict, total=False):
    items: list
    other: int


def test_checkpoint_holds_the_value_the_step_ended_with_when_a_sibling_mutates_it(tmp_path):
    """Node `a` passes `items` through; its slower sibling `b` appends to the same list
    in place (common in notebooks). The run's result and InMemorySaver's / LangGraph's
    SqliteSaver's checkpoint hold [1, 'b']: the channel's value when the step ended.
    (lgnb's SqliteSaver once reused the bytes `put_writes` encoded when `a` finished,
    matched by object identity, and saved [1].)"""

    def scenario(E, savers):
        def a(s):
            return {"items": s["items"]}

        def b(s):
            time.sleep(0.3)
            s["items"].append("b")
            return {"other": 1}

        with savers.open() as saver:
            g = E.StateGraph(Items)
            g.add_node("a", a)
            g.add_node("b", b)
            g.add_edge(E.START, "a")
            g.add_edge(E.START, "b")
            app = g.compile(checkpointer=saver)
            cfg = cfg_of("mut")
            final = app.invoke({"items": [1]}, cfg)
            return final, [h.values for h in app.get_state_history(cfg)]

    ref = check(scenario, tmp_path)
    assert ref[0] == {"items": [1, "b"], "other": 1} and ref[1][0] == ref[0]


def test_a_message_kept_in_a_second_channel_keeps_the_id_add_messages_gave_it(tmp_path):
    """No threads, no sleeps: a node returns one AIMessage (no id) as a new message and as
    `last`. add_messages gives the message object its id in place when the step's writes
    are applied, after `put_writes` encoded `last`. InMemorySaver and LangGraph's
    SqliteSaver store `last` with that id, as the run's result has it. (lgnb's
    SqliteSaver once stored the bytes encoded before: id None.)"""

    def scenario(E, savers):
        class S(TypedDict, total=False):
            messages: Annotated[list, E.add_messages]
            last: Any

        def bot(s):
            from langchain_core.messages import AIMessage

            m = AIMessage("hello")
            return {"messages": [m], "last": m}

        with savers.open() as saver:
            g = E.StateGraph(S)
            g.add_node("bot", bot)
            g.add_edge(E.START, "bot")
            app = g.compile(checkpointer=saver)
            cfg = cfg_of("msgid")
            from langchain_core.messages import HumanMessage

            out = app.invoke({"messages": [HumanMessage("hi", id="h")]}, cfg)
            st = app.get_state(cfg).values
            return {
                "result_ids_match": out["messages"][-1].id == out["last"].id,
                "saved_ids_match": st["messages"][-1].id == st["last"].id,
                "saved_last_id_is_none": st["last"].id is None,
            }

    ref = check(scenario, tmp_path)
    assert ref == {"result_ids_match": True, "saved_ids_match": True, "saved_last_id_is_none": False}


class Mixed(TypedDict, total=False):
    items: list
    d: dict
    log: Annotated[list, operator.add]


def test_values_mutated_by_the_caller_after_reading_are_not_saved(tmp_path):
    """The input object mutated after the run, snapshots from get_state/history mutated by
    the caller: none of it reaches later reads, the resume, or the history."""

    def scenario(E, savers):
        out = []
        data, dd = [1, 2], {"k": [1]}

        def a(s):
            return {"items": s["items"], "d": s["d"], "log": ["a"]}

        def b(s):
            x = E.interrupt("stop")
            return {"log": [x, list(s["items"]), dict(s["d"])]}

        with savers.open() as saver:
            g = E.StateGraph(Mixed)
            g.add_node("a", a)
            g.add_node("b", b)
            g.add_edge(E.START, "a")
            g.add_edge("a", "b")
            app = g.compile(checkpointer=saver)
            cfg = cfg_of("callermut")
            app.invoke({"items": data, "d": dd, "log": []}, cfg)
            data.append(3)
            dd["k"].append(2)
            st = app.get_state(cfg)
            out.append(st.values)
            st.values["items"].append(99)
            st.values["d"]["z"] = 0
            st.values["log"].append("mut")
            out.append(app.get_state(cfg).values)
            for s in app.get_state_history(cfg):
                for v in s.values.values():
                    if isinstance(v, list):
                        v.append("h")
            out.append([s.values for s in app.get_state_history(cfg)])
            out.append(app.invoke(E.Command(resume="r"), cfg))
            out.append([s.values for s in app.get_state_history(cfg)])
        return out

    check(scenario, tmp_path)


ODD = {
    "bytes": b"\x00\xff" * 2000,
    "dt": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
    "date": datetime.date(2024, 1, 2),
    "td": datetime.timedelta(seconds=5),
    "set": {1, 2, 3},
    "fset": frozenset({"a"}),
    "tuple": (1, (2, 3), [4]),
    "nan": [float("nan"), float("-inf")],
    "int64": [2**63 - 1, -(2**63)],
    "none": None,
    "intkeys": {1: "a", (1, 2): "b"},
    "nested": {"a": [{"b": {1, 2}}]},
    "str0": "a\x00b",
    "empty": [],
    "floatint": 1.0,
}


def test_odd_value_types_round_trip_through_every_checkpoint(tmp_path):
    """bytes, datetimes, sets, tuples, NaN, 64-bit edge ints, None, int/tuple dict keys,
    NUL in strings, messages: equal (same types) in every checkpoint and after a reopen."""

    class S(TypedDict, total=False):
        v: Any
        w: Any

    def scenario(E, savers):
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        values = dict(ODD)
        values["msgs"] = [HumanMessage("hi", id="1"),
                          AIMessage("yo", id="2", tool_calls=[{"name": "f", "args": {"x": (1,)}, "id": "c"}]),
                          ToolMessage("r", tool_call_id="c", id="3")]
        out = {}
        for name in ("first", "again"):
            with savers.open() as saver:
                g = E.StateGraph(S)
                g.add_node("a", lambda s: {"w": s["v"]})
                g.add_edge(E.START, "a")
                app = g.compile(checkpointer=saver)
                for k, v in values.items():
                    if name == "first":
                        app.invoke({"v": v}, cfg_of(k))
                    out[(name, k)] = [(repr(h.values), {x: type(y).__name__ for x, y in h.values.items()})
                                      for h in app.get_state_history(cfg_of(k))]
        return out

    check(scenario, tmp_path)


BIG = "B" * 5000


def test_one_large_value_in_several_threads_survives_deleting_and_copying_threads(tmp_path):
    """The same >2 KB value in channels, pending writes and an interrupt of three threads;
    delete_thread of one, then of another: the remaining thread still reads and resumes."""

    def scenario(E, savers):
        with savers.open() as saver:
            app = big_value_app(E, saver, BIG)
            for i in range(3):
                app.invoke({"v": BIG}, cfg_of(f"big{i}"))
            out = []
            saver.delete_thread("big0")
            out.append([snap(s) for s in app.get_state_history(cfg_of("big1"))])
            saver.delete_thread("big2")
            out.append([snap(s) for s in app.get_state_history(cfg_of("big1"))])
            out.append(app.invoke(E.Command(resume=BIG), cfg_of("big1")))
            out.append([s.values for s in app.get_state_history(cfg_of("big0"))])
        with savers.open() as saver:
            # sorted: LangGraph writes the two `branch:to:` triggers in set order (string
            # hashes, so it changes with PYTHONHASHSEED)
            out.append([(t.checkpoint["channel_values"], sorted(t.pending_writes, key=lambda w: w[1]))
                        for t in saver.list(cfg_of("big1"))])
        return out

    check(scenario, tmp_path)


def test_forking_while_iterating_the_history_lazily(tmp_path):
    """get_state_history is consumed lazily while the loop body forks every 7th
    checkpoint and runs the fork (writes between the saver's pages)."""

    def scenario(E, savers):
        with savers.open() as saver:
            app = _wide_graph(E, saver)
            cfg = cfg_of("lazy")
            app.invoke({"i": 0, "limit": 60, "log": []}, {**cfg, **R})
            seen = []
            for h in app.get_state_history(cfg):
                seen.append((h.values.get("i"), h.next))
                if h.values.get("i", 0) % 7 == 3 and h.metadata["source"] == "loop":
                    nc = app.update_state(h.config, {"limit": h.values["i"] + 2, "c5": -h.values["i"]})
                    app.invoke(None, {**nc, **R})
            return seen, _history(app, cfg)

    check(scenario, tmp_path)


def test_delta_channel_on_a_long_forked_thread(tmp_path):
    """A DeltaChannel (snapshot every 16 updates) over 140 steps, forked at 50 and 100 and
    continued, read from a reopened file: every checkpoint rebuilds the same value."""

    def scenario(E, savers):
        DC = E.module("channels.delta").DeltaChannel

        class S(TypedDict, total=False):
            log: Annotated[list, DC(_fold, snapshot_frequency=16)]
            i: int
            limit: int

        def build(saver):
            g = E.StateGraph(S)
            g.add_node("step", lambda s: {"log": [s["i"]], "i": s["i"] + 1})
            g.add_edge(E.START, "step")
            g.add_conditional_edges("step", lambda s: "step" if s["i"] < s["limit"] else E.END)
            return g.compile(checkpointer=saver)

        cfg = cfg_of("dlong")
        with savers.open() as saver:
            app = build(saver)
            app.invoke({"i": 0, "limit": 140}, {**cfg, **R})
            hist = list(app.get_state_history(cfg))
            for k in (50, 100):
                old = next(h for h in hist if h.values.get("i") == k)
                app.invoke(None, {**app.update_state(old.config, {"log": [f"f{k}"], "limit": k + 20}), **R})
        with savers.open() as saver:
            app = build(saver)
            return [(h.values, h.metadata) for h in app.get_state_history(cfg)]

    check(scenario, tmp_path)


# --------------------------------------------------------------------------------------
# channels that appear late or are cleared; pending writes of failed / interrupted steps
# --------------------------------------------------------------------------------------


def test_ephemeral_topic_and_late_channels_in_history(tmp_path):
    """An EphemeralValue (cleared the next step), a Topic and a channel first written at
    step 5, over 80 steps and a fork: every checkpoint reads back like InMemorySaver's.
    (No accumulating Topic: LangGraph's engine extends its checkpointed list in place, so
    its history differs by saver and by timing even on LangGraph's own savers.)"""

    def scenario(E, savers):
        ch = E.channels

        class S(TypedDict, total=False):
            i: int
            eph: Annotated[int, ch.EphemeralValue(int)]
            topic: Annotated[list, ch.Topic(str)]
            late: str

        def step(s):
            i = s.get("i", 0) + 1
            out = {"i": i, "topic": [f"t{i}"] if i % 2 else []}
            if i % 3 == 0:
                out["eph"] = i
            if i == 5:
                out["late"] = "here"
            return out

        with savers.open() as saver:
            g = E.StateGraph(S)
            g.add_node("step", step)
            g.add_edge(E.START, "step")
            g.add_conditional_edges("step", lambda s: "step" if s["i"] < 80 else E.END)
            app = g.compile(checkpointer=saver)
            cfg = cfg_of("chan")
            app.invoke({"i": 0}, {**cfg, **R})
            old = next(h for h in app.get_state_history(cfg) if h.values.get("i") == 4)
            app.invoke(None, {**app.update_state(old.config, {"eph": 99, "topic": ["u"]}), **R})
            return [(h.values, h.next) for h in app.get_state_history(cfg)]

    check(scenario, tmp_path)


def test_failed_and_interrupted_steps_show_the_same_tasks_and_writes(tmp_path):
    """A parallel step where one task succeeds, one raises and (next run) one interrupts:
    get_state's tasks (error, result, interrupts), next, and each checkpoint's pending
    writes as the saver returns them, on a reopened saver too."""

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]
        n: int

    def scenario(E, savers):
        calls = []
        ok_done = threading.Event()

        def ok(s):
            calls.append("ok")
            ok_done.set()
            return {"log": ["ok" + "x" * 3000]}

        def bad(s):
            calls.append("bad")
            if s.get("n", 0) == 0:
                # LangGraph drops a sibling its pool has not started when a task fails,
                # and saves a finished one's writes as it completes: fail only once `ok`
                # has run and had time to be saved, so both engines see the same step
                ok_done.wait(5)
                time.sleep(0.05)
                raise ValueError("boom")
            return {"log": [E.interrupt({"q": s["n"]})]}

        out = []
        with savers.open() as saver:
            g = E.StateGraph(S)
            g.add_node("ok", ok)
            g.add_node("bad", bad)
            g.add_edge(E.START, "ok")
            g.add_edge(E.START, "bad")
            app = g.compile(checkpointer=saver)
            cfg = cfg_of("fail")
            out.append(_diff.capture(lambda: app.invoke({"log": [], "n": 0}, cfg)))
            out.append(snap(app.get_state(cfg)))
        with savers.open() as saver:
            app = g.compile(checkpointer=saver)
            out.append(snap(app.get_state(cfg)))
            out.append(sorted((t.pending_writes[i][1], repr(t.pending_writes[i][2])[:40])
                              for t in saver.list(cfg) for i in range(len(t.pending_writes))))
            app.update_state(cfg, {"n": 1})
            out.append(_diff.capture(lambda: app.invoke(None, cfg)))
            out.append(snap(app.get_state(cfg)))
            out.append(_diff.capture(lambda: app.invoke(E.Command(resume="yes"), cfg)))
            out.append([snap(s) for s in app.get_state_history(cfg)])
            out.append(sorted(calls))
        return out

    check(scenario, tmp_path)


def test_subgraph_namespaces_and_two_threads_interleaved(tmp_path):
    """A parent with a checkpointer=True subgraph and a per-call subgraph, both
    interrupting, on two threads run alternately; get_state(subgraphs=True), history of
    every namespace and list() over the whole file agree with InMemorySaver."""

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]

    def scenario(E, savers):
        def inner(s):
            return {"log": [f"inner:{E.interrupt('sub?')}"]}

        sb = E.StateGraph(S)
        sb.add_node("inner", inner)
        sb.add_node("after", lambda s: {"log": ["after"]})
        sb.add_edge(E.START, "inner")
        sb.add_edge("inner", "after")
        out = []
        with savers.open() as saver:
            g = E.StateGraph(S)
            g.add_node("pre", lambda s: {"log": ["pre"]})
            g.add_node("persist", sb.compile(checkpointer=True))
            g.add_node("call", sb.compile())
            g.add_edge(E.START, "pre")
            g.add_edge("pre", "persist")
            g.add_edge("persist", "call")
            app = g.compile(checkpointer=saver)
            c1, c2 = cfg_of("ns1"), cfg_of("ns2")
            for rnd in range(3):
                for c in (c1, c2):
                    inp = {"log": [f"go{rnd}"]} if rnd == 0 else E.Command(resume=f"r{rnd}{c['configurable']['thread_id']}")
                    out.append(_diff.capture(lambda: app.invoke(inp, c)))
                    st = app.get_state(c, subgraphs=True)
                    out.append(snap(st))
                    out.append([snap(t.state) if t.state is not None and hasattr(t.state, "values") else t.state
                                for t in st.tasks])
            out.append(app.invoke({"log": ["again"]}, c1))
            out.append(app.get_state(c1, subgraphs=True).tasks)
            for c in (c1, c2):
                # (a history snapshot's task.state for the checkpointer=True subgraph is a
                # config whose namespace is an engine matter: see the test after this one)
                out.append([snap_nostate(s) for s in app.get_state_history(c)])
                out.append(sorted(
                    (t.config["configurable"]["checkpoint_ns"].split(":")[0], t.metadata["step"],
                     repr(sorted(t.checkpoint["channel_values"].items())))
                    for t in saver.list(c)))
        return out

    check(scenario, tmp_path)


def test_engine_history_task_state_of_a_checkpointer_true_subgraph_names_its_namespace(tmp_path):
    """Engine-level (same with InMemorySaver): a snapshot's task.state for a
    checkpointer=True subgraph names the task's namespace, {"checkpoint_ns":
    "persist:<task id>"}, though its state is kept under "persist"."""

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]

    def scenario(E, savers):
        sb = E.StateGraph(S)
        sb.add_node("inner", lambda s: {"log": [E.interrupt("q")]})
        sb.add_edge(E.START, "inner")
        with savers.open() as saver:
            g = E.StateGraph(S)
            g.add_node("persist", sb.compile(checkpointer=True))
            g.add_edge(E.START, "persist")
            app = g.compile(checkpointer=saver)
            app.invoke({"log": []}, cfg_of("sub"))
            return [t.state for t in app.get_state(cfg_of("sub")).tasks]

    check(scenario, tmp_path)


# --------------------------------------------------------------------------------------
# list(filter=): the metadata filter means equality, as in InMemorySaver
# --------------------------------------------------------------------------------------


class Count(TypedDict, total=False):
    n: int


def _count_graph(E, saver, sub=False):
    g = E.StateGraph(Count)
    if sub:
        sb = E.StateGraph(Count)
        sb.add_node("s", lambda s: {"n": s["n"] + 10})
        sb.add_edge(E.START, "s")
        g.add_node("sub", sb.compile(checkpointer=True))
        g.add_edge("a", "sub")
    g.add_node("a", lambda s: {"n": s["n"] + 1})
    g.add_edge(E.START, "a")
    return g.compile(checkpointer=saver)


def test_filter_on_a_metadata_key_set_to_none_matches_checkpoints_without_it(tmp_path):
    """`config["metadata"]` keys are copied into checkpoint metadata. One run tagged
    user="bob", one untagged; filter={"user": None} finds the untagged run's checkpoints
    with InMemorySaver (`metadata.get(key) == None`) and LangGraph's SqliteSaver
    (`json_extract(...) IS NULL`): a missing key is None."""

    def scenario(E, savers):
        with savers.open() as saver:
            app = _count_graph(E, saver)
            cfg = cfg_of("tagged")
            app.invoke({"n": 0}, {**cfg, "metadata": {"user": "bob"}})
            app.invoke({"n": 5}, cfg)
            return {
                "none": [h.values for h in app.get_state_history(cfg, filter={"user": None})],
                "bob": [h.values for h in app.get_state_history(cfg, filter={"user": "bob"})],
                "list": [t.metadata["step"] for t in saver.list(cfg, filter={"user": None})],
            }

    ref = check(scenario, tmp_path)
    assert len(ref["none"]) == 3 and len(ref["bob"]) == 3


def test_filter_with_a_dict_value_is_equality_not_containment(tmp_path):
    """`list(None, filter={"parents": {}})`: the root graph's checkpoints (a subgraph's
    have parents {"": <id>}). InMemorySaver compares with ==, LangGraph's SqliteSaver
    compares the JSON text: equality, not containment ({} does not match every dict)."""

    def scenario(E, savers):
        with savers.open() as saver:
            app = _count_graph(E, saver, sub=True)
            app.invoke({"n": 0}, cfg_of("parents"))
            return sorted((t.config["configurable"]["checkpoint_ns"], t.metadata["step"])
                          for t in saver.list(None, filter={"parents": {}}))

    ref = check(scenario, tmp_path)
    assert ref == [("", -1), ("", 0), ("", 1), ("", 2)]


def test_filter_with_true_matches_a_step_of_one(tmp_path):
    """filter={"step": True}: Python's `1 == True` (InMemorySaver) and SQLite's `1 = 1`
    (LangGraph's SqliteSaver) both match step 1."""

    def scenario(E, savers):
        with savers.open() as saver:
            app = _count_graph(E, saver)
            app.invoke({"n": 0}, cfg_of("bool"))
            return [h.values for h in app.get_state_history(cfg_of("bool"), filter={"step": True})]

    ref = check(scenario, tmp_path)
    assert ref == [{"n": 1}]


# --------------------------------------------------------------------------------------
# prune / delete_for_runs / copy_thread (lgnb extras; no InMemorySaver reference)
# --------------------------------------------------------------------------------------


def _fold(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


def _lgnb_saver(tmp_path, name="p"):
    if _diff.selftest_enabled():
        pytest.skip("lgnb's saver only: LangGraph's SqliteSaver has no prune")
    from lgnb.checkpoint.sqlite import SqliteSaver

    return SqliteSaver.from_conn_string(str(tmp_path / f"{name}.sqlite"))


@pytest.mark.parametrize("engine", ["langgraph", "lgnb"])
def test_prune_keep_latest_keeps_the_latest_state_of_a_delta_channel(tmp_path, engine):
    """prune(keep_latest) promises the latest checkpoint of each namespace stays. With a
    DeltaChannel (LangGraph 1.2) that checkpoint stores no value, only a sentinel: the
    value is rebuilt from the ancestors' writes, which keep_latest deletes. So, as
    LangGraph's PostgresSaver.prune, the saver refuses such threads (NotImplementedError,
    "keep_latest can't prune threads that use a DeltaChannel") and prunes nothing: the
    state reads the same after."""
    E = _diff.Engine(engine)
    DC = E.module("channels.delta").DeltaChannel

    class S(TypedDict, total=False):
        log: Annotated[list, DC(_fold, snapshot_frequency=5)]
        i: int

    with _lgnb_saver(tmp_path) as saver:
        g = E.StateGraph(S)
        g.add_node("step", lambda s: {"log": [s.get("i", 0)], "i": s.get("i", 0) + 1})
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", lambda s: "step" if s["i"] < 13 else E.END)
        app = g.compile(checkpointer=saver)
        cfg = cfg_of("delta")
        app.invoke({"i": 0}, cfg)
        before = app.get_state(cfg).values
        assert before == {"log": list(range(13)), "i": 13}
        try:
            saver.prune(["delta"])
        except NotImplementedError:
            pass  # refusing is what LangGraph's PostgresSaver does
        assert app.get_state(cfg).values == before


def test_prune_keep_latest_leaves_no_parent_pointing_at_a_deleted_checkpoint(tmp_path):
    """After prune(keep_latest) the kept checkpoint has no parent_config naming a deleted
    checkpoint: its parent is NULL, as LangGraph's PostgresSaver.prune leaves it."""
    import langgraph.graph as G

    with _lgnb_saver(tmp_path) as saver:
        g = G.StateGraph(Count)
        g.add_node("a", lambda s: {"n": s["n"] + 1})
        g.add_edge(G.START, "a")
        app = g.compile(checkpointer=saver)
        cfg = cfg_of("dangling")
        app.invoke({"n": 0}, cfg)
        saver.prune(["dangling"])
        st = app.get_state(cfg)
        assert st.values == {"n": 1}
        assert len(list(app.get_state_history(cfg))) == 1
        assert st.parent_config is None, (
            f"parent_config names a pruned checkpoint: {st.parent_config}; "
            f"reading it gives {app.get_state(st.parent_config)}")


@pytest.mark.parametrize("engine", ["langgraph", "lgnb"])
def test_copy_prune_and_delete_for_runs_keep_every_remaining_checkpoint_readable(tmp_path, engine):
    """A 150-step thread, forked twice and run again (runs tagged with metadata run_id;
    the forks' update checkpoints have none); copy_thread twice, then
    delete_for_runs(first run) and prune(keep_latest) on a copy: every remaining
    checkpoint reads the values, next and metadata it read before."""
    E = _diff.Engine(engine)
    with _lgnb_saver(tmp_path) as saver:
        app = _wide_graph(E, saver)
        cfg = cfg_of("src")
        def run_id():
            return {"metadata": {"run_id": str(uuid.uuid4())}}

        app.invoke({"i": 0, "limit": 150, "log": []}, {**cfg, **R, **run_id()})
        hist = list(app.get_state_history(cfg))
        for k in (40, 100):
            old = next(h for h in hist if h.values.get("i") == k)
            app.invoke(None, {**app.update_state(old.config, {"limit": k + 70}), **R, **run_id()})
        app.invoke({"i": 0, "limit": 90, "log": []}, {**cfg, **R, **run_id()})
        before = {h.config["configurable"]["checkpoint_id"]: (h.values, h.next, h.metadata)
                  for h in app.get_state_history(cfg)}
        runs = sorted({m["run_id"] for _, _, m in before.values() if m.get("run_id")},
                      key=lambda r: min(cid for cid, v in before.items() if v[2].get("run_id") == r))
        assert len(runs) >= 3
        saver.copy_thread("src", "copy")
        saver.copy_thread("src", "copy2")
        saver.delete_for_runs([runs[0]])
        for tid in ("src", "copy"):
            after = {h.config["configurable"]["checkpoint_id"]: (h.values, h.next, h.metadata)
                     for h in app.get_state_history(cfg_of(tid))}
            # delete_for_runs goes by run id in every thread: the copy loses them too
            assert after == {c: v for c, v in before.items() if v[2].get("run_id") != runs[0]}
        saver.prune(["copy2"])
        (latest,) = list(app.get_state_history(cfg_of("copy2")))
        assert (latest.values, latest.next) == next(iter(sorted(before.items(), reverse=True)))[1][:2]
        app.invoke({"i": 0, "limit": 3, "log": []}, cfg_of("copy2"))
        now = app.get_state(cfg_of("copy2")).values
        assert (now["i"], now["log"], now["big"]) == (3, latest.values["log"], latest.values["big"])


# --------------------------------------------------------------------------------------
# async
# --------------------------------------------------------------------------------------


def test_async_saver_long_thread_fork_and_concurrent_threads(tmp_path):
    """AsyncSqliteSaver: three threads of 90 steps run concurrently (asyncio.gather), one
    forked and continued, every history read back."""

    def scenario(E, savers):
        async def body():
            async with savers.aopen() as saver:
                app = _wide_graph(E, saver)
                cfgs = [cfg_of(f"a{i}") for i in range(3)]
                await asyncio.gather(*(app.ainvoke({"i": 0, "limit": 90 + i, "log": []}, {**c, **R})
                                       for i, c in enumerate(cfgs)))
                old = [h async for h in app.aget_state_history(cfgs[0]) if h.values.get("i") == 70][0]
                nc = await app.aupdate_state(old.config, {"limit": 140, "c2": -2})
                await asyncio.gather(app.ainvoke(None, {**nc, **R}),
                                     app.ainvoke(None, {**cfgs[1], **R}))
                out = []
                for c in cfgs:
                    out.append([(h.values, h.next, h.metadata) async for h in app.aget_state_history(c)])
                return out

        return asyncio.run(body())

    check(scenario, tmp_path)

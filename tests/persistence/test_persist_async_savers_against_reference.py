"""lgnb's async savers (``AsyncSqliteSaver``, ``AsyncPostgresSaver``) against LangGraph's
InMemorySaver, on what users do with ``ainvoke``/``astream`` and saved threads.

Each scenario runs as

* the reference: LangGraph's engine + ``InMemorySaver``;
* LangGraph's engine + lgnb's async saver (a difference is the saver's alone);
* lgnb's engine + lgnb's async saver.

Every test runs on both backends (``sqlite`` on a file under tmp_path, ``postgres`` on
``LGNB_TEST_POSTGRES_URL``, skipped when unset). Under ``LGNB_DIFF_SELFTEST=1`` the
candidate savers are LangGraph's own async savers on LangGraph's engine. Thread ids are
``name-<32 hex>`` (unique per run; the harness normalizes the hex). "A new kernel" is a
new saver instance opened in a new ``asyncio.run``.
"""

import asyncio
import operator
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import _diff
import _pdiff
import pytest
import test_persist_postgres_against_reference as pgref
from typing_extensions import TypedDict

R = {"recursion_limit": 1000}
snap = pgref.snap


# --------------------------------------------------------------------------------------
# harness
# --------------------------------------------------------------------------------------


class SqliteFile(pgref._Threads):
    """Opens async SQLite savers on one file (every open is a new connection)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    @asynccontextmanager
    async def aopen(self):
        if _diff.selftest_enabled():
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
        else:
            from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
        async with AsyncSqliteSaver.from_conn_string(self.path) as s:
            yield s


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    """A factory of fresh candidate saver sets for one backend."""
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_url")
        return lambda: pgref.PG(url)
    return lambda: SqliteFile(str(tmp_path / f"{uuid.uuid4().hex[:8]}.sqlite"))


def check(scenario, backend, *, engines=("langgraph", "candidate")) -> Any:
    """Run ``scenario(E, savers)`` on the reference and the candidates; assert equal."""
    ref_e = _diff.reference_engine()
    ref = _diff.run_scenario(lambda E: scenario(E, pgref.Memory(E)), ref_e)
    assert not (isinstance(ref, tuple) and ref[:1] == ("raises",)), f"reference raised: {ref}"
    for which in engines:
        cand_e = ref_e if which == "langgraph" else _diff.candidate_engine()
        cand = _diff.run_scenario(lambda E: scenario(E, backend()), cand_e)
        _pdiff.compare(ref, cand, ref_label="langgraph+memory", cand_label=f"{cand_e.label}+async-saver")
    return _diff.normalize(ref)


async def ahist(app, cfg, **kw):
    return [(h.values, h.next, h.metadata, h.config, h.parent_config)
            async for h in app.aget_state_history(cfg, **kw)]


async def asnaps(app, cfg, **kw):
    return [snap(h) async for h in app.aget_state_history(cfg, **kw)]


async def alist(saver, cfg, **kw):
    return [(t.checkpoint["channel_values"], t.metadata, t.config, t.parent_config,
             sorted((w[1], repr(w[2])) for w in t.pending_writes))
            async for t in saver.alist(cfg, **kw)]


async def drain(agen) -> list:
    out = []
    try:
        async for c in agen:
            out.append(c)
    except Exception as e:  # noqa: BLE001
        out.append(_diff.exc_obs(e))
    return out


class Wide(TypedDict, total=False):
    i: int
    c0: int
    c1: int
    c2: int
    c3: int
    log: Annotated[list, operator.add]
    limit: int


def wide_graph(E, saver, *, async_node=True):
    async def astep(s):
        await asyncio.sleep(0)
        return _step(s)

    def _step(s):
        i = s.get("i", 0) + 1
        out = {"i": i, f"c{i % 4}": i}
        if i % 10 == 0:
            out["log"] = [i]
        return out

    g = E.StateGraph(Wide)
    g.add_node("step", astep if async_node else _step)
    g.add_edge(E.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["i"] < s.get("limit", 60) else E.END)
    return g.compile(checkpointer=saver)


class Count(TypedDict, total=False):
    i: int
    limit: int
    fail_at: int
    slow: bool


def counting_graph(E, step, *, until=None):
    """A builder whose one node `step` loops on itself while `i` is under `until` (or the
    state's `limit`)."""
    g = E.StateGraph(Count)
    g.add_node("step", step)
    g.add_edge(E.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["i"] < (until or s["limit"]) else E.END)
    return g


class Log(TypedDict, total=False):
    log: Annotated[list, operator.add]
    n: int


def chain_with_question(E, saver, **compile_kw):
    """a -> ask (interrupts) -> done."""

    async def a(s):
        return {"log": ["a"], "n": s.get("n", 0) + 1}

    async def ask(s):
        ans = E.interrupt({"question": "ok?", "n": s["n"]})
        return {"log": [f"ask:{ans}"]}

    async def done(s):
        return {"log": ["done"]}

    g = E.StateGraph(Log)
    g.add_node("a", a)
    g.add_node("ask", ask)
    g.add_node("done", done)
    g.add_edge(E.START, "a")
    g.add_edge("a", "ask")
    g.add_edge("ask", "done")
    return g.compile(checkpointer=saver, **compile_kw)


# --------------------------------------------------------------------------------------
# long threads: ainvoke, astream, aget_state, aget_state_history(filter/before/limit)
# --------------------------------------------------------------------------------------


def test_ainvoke_long_thread_reads_back_every_checkpoint_by_id_and_by_history(backend):
    """120 async steps then 30 more: aget_state of every history entry's config is that
    entry; before/limit/filter select the same checkpoints as InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("long")
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                out = {"r1": await app.ainvoke({"i": 0, "limit": 120, "log": []}, {**cfg, **R})}
                await app.aupdate_state(cfg, {"limit": 150})
                out["r2"] = await app.ainvoke(None, {**cfg, **R})
                hist = [h async for h in app.aget_state_history(cfg)]
                out["by_id"] = [snap(await app.aget_state(h.config)) == snap(h) for h in hist]
                out["history"] = await ahist(app, cfg)
                out["before"] = await ahist(app, cfg, before=hist[40].config, limit=7)
                out["limit"] = await ahist(app, cfg, limit=4)
                out["filter_update"] = await ahist(app, cfg, filter={"source": "update"})
                out["filter_step"] = await ahist(app, cfg, filter={"step": 100})
                out["filter_before"] = await ahist(app, cfg, filter={"source": "input"}, before=hist[5].config)
            return out

        return body()

    ref = check(scenario, backend)
    assert len(ref["history"]) == 153 and all(ref["by_id"])


def test_astream_updates_values_and_checkpoints_over_a_long_thread(backend):
    """astream with stream_mode=["updates", "values", "checkpoints"] over 40 steps, then
    continued with more input: every chunk (incl. each checkpoint's config and
    parent_config) as on InMemorySaver."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("stream")
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                first = await drain(app.astream({"i": 0, "limit": 40, "log": []}, {**cfg, **R},
                                                stream_mode=["updates", "values", "checkpoints"]))
                second = await drain(app.astream({"limit": 45}, {**cfg, **R},
                                                 stream_mode=["updates", "checkpoints"]))
                return first, second, await ahist(app, cfg, limit=8)

        return body()

    check(scenario, backend)


def test_astream_sync_nodes_on_an_async_saver(backend):
    """Sync nodes (run in executor threads) with astream(stream_mode="values") on an async
    saver: the same values and history as InMemorySaver."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("syncnodes")
            async with savers.aopen() as saver:
                app = wide_graph(E, saver, async_node=False)
                chunks = await drain(app.astream({"i": 0, "limit": 25, "log": []}, cfg, stream_mode="values"))
                return chunks, await ahist(app, cfg)

        return body()

    check(scenario, backend)


# --------------------------------------------------------------------------------------
# aupdate_state and forks
# --------------------------------------------------------------------------------------


def test_forks_from_old_checkpoints_are_continued_and_the_latest_is_the_last_fork(backend):
    """Forks at steps 10, 25 and 40 of a 50-step thread (aupdate_state on an old config,
    then ainvoke(None, fork config)); aget_state(thread) is the last fork's end; every
    branch's checkpoints are in the history with the right parents."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("fork")
            out = []
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                await app.ainvoke({"i": 0, "limit": 50, "log": []}, {**cfg, **R})
                hist = [h async for h in app.aget_state_history(cfg)]
                for k in (10, 25, 40):
                    old = next(h for h in hist if h.values.get("i") == k)
                    nc = await app.aupdate_state(old.config, {"c1": -k, "limit": k + 5, "log": [f"fork{k}"]})
                    out.append(nc)
                    out.append(await app.ainvoke(None, {**nc, **R}))
                out.append(snap(await app.aget_state(cfg)))
                out.append(await ahist(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_aupdate_state_as_node_routes_the_next_step(backend):
    """aupdate_state(as_node="a") on a paused thread moves it to after `a` again, so `ask`
    runs (and interrupts) anew; as_node="ask" moves it on to `done`. Snapshots and the
    resumed runs as on InMemorySaver."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("asnode")
            out = []
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                out.append(await app.ainvoke({"log": [], "n": 0}, cfg))
                out.append(await app.aupdate_state(cfg, {"log": ["edit"]}, as_node="a"))
                out.append(snap(await app.aget_state(cfg)))
                out.append(await app.ainvoke(None, cfg))
                out.append(await app.aupdate_state(cfg, {"log": ["skip"]}, as_node="ask"))
                out.append(snap(await app.aget_state(cfg)))
                out.append(await app.ainvoke(None, cfg))
                out.append(await asnaps(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_aupdate_state_on_a_thread_that_never_ran_then_ainvoke(backend):
    """aupdate_state on an empty thread (as_node given) creates its first checkpoints;
    ainvoke(None) then continues from there."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("fresh")
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                out = [await app.aupdate_state(cfg, {"log": ["seed"], "n": 41}, as_node="a")]
                out.append(snap(await app.aget_state(cfg)))
                out.append(await app.ainvoke(None, cfg))
                out.append(await asnaps(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_abulk_update_state_applies_supersteps_in_order(backend):
    """abulk_update_state with two super-steps (two updates in the first) on an empty
    thread: one checkpoint per super-step, values as InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("bulk")
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                SU = E.module("types").StateUpdate
                r = await app.abulk_update_state(cfg, [
                    [SU({"log": ["x"], "n": 1}, "a")],
                    [SU({"log": ["y"]}, "ask"), SU({"log": ["z"]}, "ask")],
                ])
                return r, await asnaps(app, cfg), await app.ainvoke(None, cfg)

        return body()

    check(scenario, backend)


# --------------------------------------------------------------------------------------
# interrupts and Command resume
# --------------------------------------------------------------------------------------


def test_interrupt_then_command_resume_through_astream(backend):
    """astream until the interrupt (updates mode shows __interrupt__), aget_state shows
    the task's interrupt, astream(Command(resume=)) finishes; history as InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("astream-int")
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                out = [await drain(app.astream({"log": [], "n": 1}, cfg, stream_mode="updates"))]
                out.append(snap(await app.aget_state(cfg)))
                out.append(await drain(app.astream(E.Command(resume="yes"), cfg,
                                                   stream_mode=["updates", "values"])))
                out.append(await asnaps(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_parallel_interrupts_resumed_by_id_one_at_a_time(backend):
    """Two Send branches interrupt in one step; resume one by its interrupt id (the other
    stays pending), then the other; as InMemorySaver."""

    class S(TypedDict, total=False):
        topics: list
        done: Annotated[list, operator.add]

    def scenario(E, savers):
        async def work(arg):
            ans = E.interrupt({"topic": arg["t"]})
            return {"done": [f"{arg['t']}={ans}"]}

        g = E.StateGraph(S)
        g.add_node("work", work)
        g.add_conditional_edges(E.START, lambda s: [E.Send("work", {"t": t}) for t in s["topics"]], ["work"])

        async def body():
            cfg = savers.cfg("par-int")
            out = []
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                r = await app.ainvoke({"topics": ["x", "y"], "done": []}, cfg)
                out.append(sorted(i.value["topic"] for i in r["__interrupt__"]))
                ids = {i.value["topic"]: i.id for i in r["__interrupt__"]}
                r = await app.ainvoke(E.Command(resume={ids["x"]: "X"}), cfg)
                out.append(r)
                st = await app.aget_state(cfg)
                out.append((st.values, st.next, sorted(i.value["topic"] for i in st.interrupts)))
                out.append(await app.ainvoke(E.Command(resume={ids["y"]: "Y"}), cfg))
                out.append([(h.values, h.next, h.metadata) async for h in app.aget_state_history(cfg)])
            return out

        return body()

    check(scenario, backend)


def test_interrupt_resumed_by_a_new_saver_instance_in_a_new_event_loop(backend):
    """A kernel restart: the thread is paused in one asyncio.run with one saver instance;
    a new asyncio.run opens a new saver, reads the pending interrupt and resumes it."""

    def scenario(E, savers):
        cfg = savers.cfg("restart")

        async def first():
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                return await app.ainvoke({"log": [], "n": 3}, cfg)

        async def second():
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                st = await app.aget_state(cfg)
                r = await app.ainvoke(E.Command(resume="after-restart"), cfg)
                return snap(st), r, await asnaps(app, cfg)

        return asyncio.run(first()), asyncio.run(second())

    check(scenario, backend)


def test_interrupt_before_at_compile_resumed_with_ainvoke_none(backend):
    """interrupt_before=["done"]: ainvoke stops before `done` (after answering `ask`),
    ainvoke(None) finishes; snapshots as InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("ibefore")
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver, interrupt_before=["done"])
                out = [await app.ainvoke({"log": [], "n": 0}, cfg)]
                out.append(await app.ainvoke(E.Command(resume="go"), cfg))
                out.append(snap(await app.aget_state(cfg)))
                out.append(await app.ainvoke(None, cfg))
                out.append(await asnaps(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_interrupt_inside_a_persistent_subgraph_resumed_from_a_new_instance(backend):
    """A checkpointer=True subgraph interrupts; aget_state(subgraphs=True) shows the
    subgraph's state; a new saver instance resumes; the subgraph keeps its state for the
    next run on the thread."""

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]

    def scenario(E, savers):
        async def inner(s):
            return {"log": [f"inner:{E.interrupt('sub?')}"]}

        sb = E.StateGraph(S)
        sb.add_node("inner", inner)
        sb.add_edge(E.START, "inner")

        def build(saver):
            g = E.StateGraph(S)
            g.add_node("pre", lambda s: {"log": ["pre"]})
            g.add_node("sub", sb.compile(checkpointer=True))
            g.add_edge(E.START, "pre")
            g.add_edge("pre", "sub")
            return g.compile(checkpointer=saver)

        cfg = savers.cfg("subint")

        async def first():
            async with savers.aopen() as saver:
                app = build(saver)
                r = await app.ainvoke({"log": ["go"]}, cfg)
                st = await app.aget_state(cfg, subgraphs=True)
                return r, snap(st), [snap(t.state) if t.state is not None and hasattr(t.state, "values")
                                     else t.state for t in st.tasks]

        async def second():
            async with savers.aopen() as saver:
                app = build(saver)
                r = await app.ainvoke(E.Command(resume="yes"), cfg)
                r2 = await app.ainvoke({"log": ["again"]}, cfg)
                st = await app.aget_state(cfg, subgraphs=True)
                return r, r2, snap(st), [h.values async for h in app.aget_state_history(cfg)]

        return asyncio.run(first()), asyncio.run(second())

    check(scenario, backend)


def test_functional_api_entrypoint_with_tasks_and_interrupt(backend):
    """@entrypoint(checkpointer=async saver) with @task calls and an interrupt: the
    finished tasks are not re-run on resume (their results are saved), from a new saver
    instance in a new event loop."""

    def scenario(E, savers):
        calls = []

        @E.func.task
        async def double(x: int) -> int:
            calls.append(("double", x))
            return x * 2

        def build(saver):
            @E.func.entrypoint(checkpointer=saver)
            async def wf(n: int) -> dict:
                a, b = await asyncio.gather(double(n), double(n + 1))
                ok = E.interrupt({"a": a, "b": b})
                c = await double(a + b) if ok else 0
                return {"a": a, "b": b, "c": c}

            return wf

        cfg = savers.cfg("func")

        async def first():
            async with savers.aopen() as saver:
                wf = build(saver)
                return await drain(wf.astream(3, cfg, stream_mode="updates"))

        async def second():
            async with savers.aopen() as saver:
                wf = build(saver)
                r = await wf.ainvoke(E.Command(resume=True), cfg)
                st = await wf.aget_state(cfg)
                return r, (st.values, st.next), sorted(calls)

        return asyncio.run(first()), asyncio.run(second())

    check(scenario, backend)


# --------------------------------------------------------------------------------------
# failures and pending writes
# --------------------------------------------------------------------------------------


def test_failing_parallel_step_keeps_the_finished_siblings_writes(backend):
    """`ok` finishes, `bad` raises in the same step: the error reaches the caller; the
    checkpoint's pending writes (alist) hold ok's write and bad's error; aget_state shows
    the task error; a new instance (new loop) fixes the input and resumes: only `bad`
    runs again."""

    def scenario(E, savers):
        calls = []

        async def ok(s):
            calls.append("ok")
            return {"log": ["ok"]}

        async def bad(s):
            calls.append("bad")
            await asyncio.sleep(0.05)
            if s.get("n", 0) == 0:
                raise ValueError("boom")
            return {"log": [f"bad{s['n']}"]}

        g = E.StateGraph(Log)
        g.add_node("ok", ok)
        g.add_node("bad", bad)
        g.add_node("join", lambda s: {"log": ["join"]})
        g.add_edge(E.START, "ok")
        g.add_edge(E.START, "bad")
        g.add_edge(["ok", "bad"], "join")
        cfg = savers.cfg("fail")

        async def first():
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                r = await _diff.acapture(lambda: app.ainvoke({"log": [], "n": 0}, cfg))
                st = await app.aget_state(cfg)
                return r, (st.values, st.next, sorted((t.name, repr(t.error), t.result) for t in st.tasks)), \
                    await alist(saver, cfg)

        async def second():
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                await app.aupdate_state(cfg, {"n": 1})
                r = await app.ainvoke(None, cfg)
                return r, sorted(calls), await asnaps(app, cfg)

        return asyncio.run(first()), asyncio.run(second())

    check(scenario, backend)


def test_retry_after_a_failure_without_changes_reruns_only_the_failed_node(backend):
    """The same failing step resumed with ainvoke(None) twice: the first retry fails
    again (one attempt of bad, ok not re-run), the second succeeds (bad fails only on its
    first two calls)."""

    def scenario(E, savers):
        calls = []

        async def ok(s):
            calls.append("ok")
            return {"log": ["ok"]}

        async def bad(s):
            calls.append("bad")
            if calls.count("bad") <= 2:
                raise RuntimeError(f"try {calls.count('bad')}")
            return {"log": ["bad"]}

        g = E.StateGraph(Log)
        g.add_node("ok", ok)
        g.add_node("bad", bad)
        g.add_edge(E.START, "ok")
        g.add_edge(E.START, "bad")

        async def body():
            cfg = savers.cfg("retry")
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                out = [await _diff.acapture(lambda: app.ainvoke({"log": []}, cfg))]
                out.append(await _diff.acapture(lambda: app.ainvoke(None, cfg)))
                out.append(await _diff.acapture(lambda: app.ainvoke(None, cfg)))
                out.append(sorted(calls))
                out.append(await asnaps(app, cfg))
            return out

        return body()

    check(scenario, backend)


# --------------------------------------------------------------------------------------
# durability
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_durability_modes_save_the_history_inmemory_saves(backend, durability):
    """ainvoke(durability=...) on a 15-step run, a run paused by an interrupt and resumed,
    and a run that fails midway: the saved history (how many checkpoints, which) and the
    state after each as InMemorySaver's."""

    def scenario(E, savers):
        async def step(s):
            i = s.get("i", 0) + 1
            if i == s.get("fail_at"):
                raise ValueError(f"fail at {i}")
            return {"i": i}

        g = counting_graph(E, step)

        async def body():
            out = []
            c1, c2, c3 = savers.cfg("d-run"), savers.cfg("d-int"), savers.cfg("d-fail")
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                out.append(await app.ainvoke({"i": 0, "limit": 15}, c1, durability=durability))
                out.append(await asnaps(app, c1))
                ch = chain_with_question(E, saver)
                out.append(await ch.ainvoke({"log": [], "n": 0}, c2, durability=durability))
                out.append(snap(await ch.aget_state(c2)))
                out.append(await ch.ainvoke(E.Command(resume="r"), c2, durability=durability))
                out.append(await asnaps(ch, c2))
                out.append(await _diff.acapture(
                    lambda: app.ainvoke({"i": 0, "limit": 15, "fail_at": 6}, c3, durability=durability)))
                out.append(await asnaps(app, c3))
            return out

        return body()

    check(scenario, backend)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_durability_modes_with_astream_checkpoints_and_a_new_instance(backend, durability):
    """astream(stream_mode="checkpoints", durability=...) then a new saver instance reads
    the history: what was streamed and what was saved as on InMemorySaver."""

    def scenario(E, savers):
        cfg = savers.cfg("d-stream")

        async def first():
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                return await drain(app.astream({"i": 0, "limit": 12, "log": []}, cfg,
                                                stream_mode="checkpoints", durability=durability))

        async def second():
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                return await ahist(app, cfg)

        return asyncio.run(first()), asyncio.run(second())

    check(scenario, backend)


# --------------------------------------------------------------------------------------
# adelete_thread, alist with metadata filters
# --------------------------------------------------------------------------------------


def test_adelete_thread_removes_one_thread_with_its_subgraphs_and_keeps_others(backend):
    """Three threads paused inside a checkpointer=True subgraph; adelete_thread of one:
    it reads empty (aget_state, history, alist) and starts afresh; the others resume."""

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]

    def scenario(E, savers):
        async def inner(s):
            return {"log": [f"inner:{E.interrupt('q')}"]}

        sb = E.StateGraph(S)
        sb.add_node("inner", inner)
        sb.add_edge(E.START, "inner")

        async def body():
            out = []
            async with savers.aopen() as saver:
                g = E.StateGraph(S)
                g.add_node("pre", lambda s: {"log": ["pre"]})
                g.add_node("sub", sb.compile(checkpointer=True))
                g.add_edge(E.START, "pre")
                g.add_edge("pre", "sub")
                app = g.compile(checkpointer=saver)
                for n in ("t0", "t1", "t2"):
                    await app.ainvoke({"log": [n]}, savers.cfg(n))
                await saver.adelete_thread(savers.tid("t1"))
                st = await app.aget_state(savers.cfg("t1"))
                out.append((st.values, st.next, st.tasks))
                out.append(await ahist(app, savers.cfg("t1")))
                out.append(await alist(saver, savers.cfg("t1")))
                out.append(await app.ainvoke(E.Command(resume="a"), savers.cfg("t0")))
                out.append(await app.ainvoke({"log": ["new"]}, savers.cfg("t1")))
                out.append(await app.ainvoke(E.Command(resume="c"), savers.cfg("t2")))
                out.append(sorted([(t.config["configurable"]["checkpoint_ns"].split(":")[0], t.metadata["step"])
                                   async for t in saver.alist(savers.cfg("t2"))]))
            return out

        return body()

    check(scenario, backend)


def test_adelete_thread_of_an_unknown_thread_is_a_no_op(backend):
    """adelete_thread of a thread that never existed raises nothing and deletes nothing."""

    def scenario(E, savers):
        async def body():
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                await app.ainvoke({"log": []}, savers.cfg("keep"))
                r = await _diff.acapture(lambda: saver.adelete_thread(savers.tid("ghost")))
                return r, await asnaps(app, savers.cfg("keep"))

        return body()

    check(scenario, backend)


def test_alist_with_metadata_filters_before_and_limit(backend):
    """Runs tagged through config["metadata"] on two threads: alist with one and several
    keys, a step, the source, a missing value, before, limit, and alist(None) across
    threads narrowed by a per-run tag."""

    def scenario(E, savers):
        async def body():
            out = {}
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                c1, c2 = savers.cfg("m1"), savers.cfg("m2")
                tag = savers.tag
                for i, (c, user) in enumerate([(c1, "ann"), (c2, "bob"), (c1, "bob"), (c2, "ann")]):
                    await app.ainvoke({"i": 0, "limit": 3, "log": []},
                                      {**c, "metadata": {"user": user, "run": i, "tag": tag}})
                await app.aupdate_state(c1, {"limit": 9})
                hist = [t async for t in saver.alist(c1)]
                out["all"] = await alist(saver, c1)
                out["user"] = await alist(saver, c1, filter={"user": "bob"})
                out["two_keys"] = await alist(saver, c1, filter={"user": "ann", "source": "loop"})
                out["step"] = await alist(saver, c1, filter={"step": 2})
                out["run"] = await alist(saver, c2, filter={"run": 3})
                out["missing"] = await alist(saver, c1, filter={"user": "zed"})
                out["update"] = await alist(saver, c1, filter={"source": "update"})
                out["before"] = await alist(saver, c1, before=hist[3].config)
                out["before_limit"] = await alist(saver, c1, before=hist[2].config, limit=2)
                out["limit"] = await alist(saver, c1, limit=1)
                out["across"] = sorted([(t.config["configurable"]["thread_id"], t.metadata["step"], t.metadata["user"])
                                        async for t in saver.alist(None, filter={"tag": tag, "source": "input"})])
                out["across_limit"] = len([t async for t in saver.alist(None, filter={"tag": tag}, limit=5)])
                out["hist_filter"] = await ahist(app, c2, filter={"user": "ann", "step": 1})
            return out

        return body()

    ref = check(scenario, backend)
    assert len(ref["across"]) == 4 and ref["across_limit"] == 5


def test_aget_tuple_of_latest_and_of_a_given_checkpoint(backend):
    """saver.aget_tuple of the thread (latest) and of an older checkpoint id: checkpoint
    values, metadata, parent config and pending writes as InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("tuple")
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                await app.ainvoke({"log": []}, cfg)
                out = []
                latest = await saver.aget_tuple(cfg)
                hist = [h async for h in app.aget_state_history(cfg)]
                older = await saver.aget_tuple(hist[-2].config)
                for t in (latest, older):
                    out.append((t.checkpoint["channel_values"], t.metadata, t.config, t.parent_config,
                                sorted((w[1], repr(w[2])) for w in t.pending_writes)))
                out.append(await saver.aget_tuple(savers.cfg("nothing")))
            return out

        return body()

    check(scenario, backend)


# --------------------------------------------------------------------------------------
# several instances, concurrency, restarts
# --------------------------------------------------------------------------------------


def test_two_saver_instances_on_one_store_take_turns_on_one_thread(backend):
    """Two async savers on one file/database: A runs and pauses, B resumes, A forks from
    an old checkpoint, B continues the latest; both read one history, equal to one
    InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("shared")
            out = []
            async with savers.aopen() as sa, savers.aopen() as sb:
                A, B = chain_with_question(E, sa), chain_with_question(E, sb)
                WA, WB = wide_graph(E, sa), wide_graph(E, sb)
                out.append(await A.ainvoke({"log": [], "n": 0}, cfg))
                out.append(snap(await B.aget_state(cfg)))
                out.append(await B.ainvoke(E.Command(resume="from-B"), cfg))
                old = [h async for h in A.aget_state_history(cfg) if h.next == ("ask",)][0]
                out.append(await A.ainvoke(None, old.config))
                out.append(await B.ainvoke(E.Command(resume="again-B"), cfg))
                out.append(await ahist(A, cfg))
                out.append(await ahist(B, cfg) == out[-1])
                w = savers.cfg("shared-wide")
                await WA.ainvoke({"i": 0, "limit": 30, "log": []}, {**w, **R})
                await WB.aupdate_state(w, {"limit": 45})
                await WA.ainvoke(None, {**w, **R})
                out.append(await ahist(WB, w, limit=5))
            return out

        return body()

    ref = check(scenario, backend)
    assert ref[6] is True


def test_concurrent_runs_on_different_threads_of_one_saver(backend):
    """asyncio.gather of eight runs (different threads, different lengths, half of them
    pausing at an interrupt) on one saver, then gather of the resumes: every thread's
    history as InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            async with savers.aopen() as saver:
                W = wide_graph(E, saver)
                Q = chain_with_question(E, saver)
                wides = [savers.cfg(f"w{i}") for i in range(4)]
                qs = [savers.cfg(f"q{i}") for i in range(4)]
                res = await asyncio.gather(
                    *(W.ainvoke({"i": 0, "limit": 20 + 7 * i, "log": []}, {**c, **R}) for i, c in enumerate(wides)),
                    *(Q.ainvoke({"log": [], "n": 10 * i}, c) for i, c in enumerate(qs)))
                res2 = await asyncio.gather(
                    *(Q.ainvoke(E.Command(resume=f"r{i}"), c) for i, c in enumerate(qs)),
                    *(W.ainvoke({"limit": 40 + i}, {**c, **R}) for i, c in enumerate(wides)))
                hists = [await ahist(W, c) for c in wides] + [await asnaps(Q, c) for c in qs]
                return list(res), list(res2), hists

        return body()

    check(scenario, backend)


def test_concurrent_astreams_on_different_threads_of_one_saver(backend):
    """Three astream runs consumed concurrently (gather over drains) on one saver: each
    stream's chunks and each thread's history as InMemorySaver's."""

    def scenario(E, savers):
        async def body():
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                cfgs = [savers.cfg(f"s{i}") for i in range(3)]
                streams = await asyncio.gather(*(
                    drain(app.astream({"i": 0, "limit": 15 + i, "log": []}, c, stream_mode=["updates", "values"]))
                    for i, c in enumerate(cfgs)))
                return streams, [await ahist(app, c) for c in cfgs]

        return body()

    check(scenario, backend)


def test_concurrent_forks_of_one_thread_from_two_old_checkpoints(backend):
    """Two forks of one thread created and run concurrently (asyncio.gather) from
    checkpoints at steps 5 and 12: both branches are saved; the latest checkpoint is
    whichever finished last, so only the set of checkpoints is compared. A run from a
    checkpoint the thread has moved past first saves a `fork` checkpoint (both engines'
    rule); whether the second branch's start already sees the first branch's checkpoints
    depends on the saver's timing, so `fork` checkpoints, and the step numbers they shift,
    are left out of the comparison (each branch saves at most one)."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("cfork")
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                await app.ainvoke({"i": 0, "limit": 20, "log": []}, {**cfg, **R})
                hist = [h async for h in app.aget_state_history(cfg)]
                olds = [next(h for h in hist if h.values.get("i") == k) for k in (5, 12)]
                forks = [await app.aupdate_state(o.config, {"limit": o.values["i"] + 4, "c3": -1}) for o in olds]
                res = await asyncio.gather(*(app.ainvoke(None, {**f, **R}) for f in forks))
                h = [(x.values, x.next, x.metadata["source"]) async for x in app.aget_state_history(cfg)]
                forks_saved = sum(1 for *_, source in h if source == "fork")
                assert forks_saved <= 2, h
                return list(res), sorted((x for x in h if x[2] != "fork"), key=repr)

        return body()

    check(scenario, backend)


def test_long_thread_resumed_in_a_new_saver_instance_after_a_restart(backend):
    """A kernel restart mid-conversation: 40 steps in one asyncio.run, then a new saver
    in a new asyncio.run reads the history, forks from step 20 and continues the thread
    to 70; a third restart reads everything back."""

    def scenario(E, savers):
        cfg = savers.cfg("restart-long")

        async def first():
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                return await app.ainvoke({"i": 0, "limit": 40, "log": []}, {**cfg, **R})

        async def second():
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                out = [snap(await app.aget_state(cfg))]
                old = [h async for h in app.aget_state_history(cfg) if h.values.get("i") == 20][0]
                nc = await app.aupdate_state(old.config, {"log": ["fork"], "limit": 30})
                out.append(await app.ainvoke(None, {**nc, **R}))
                await app.aupdate_state(cfg, {"limit": 70})
                out.append(await app.ainvoke(None, {**cfg, **R}))
                return out

        async def third():
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                return await ahist(app, cfg)

        return asyncio.run(first()), asyncio.run(second()), asyncio.run(third())

    check(scenario, backend)


def test_sync_api_of_an_async_saver_outside_its_loop_reads_like_the_async_api(backend):
    """Users in notebooks call app.get_state / get_state_history (sync) on a graph built
    with an async saver, from a worker thread while the saver's loop runs: same snapshots
    as aget_state / aget_state_history."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("syncread")
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                await app.ainvoke({"log": [], "n": 2}, cfg)
                sync_st = await asyncio.to_thread(lambda: snap(app.get_state(cfg)))
                sync_h = await asyncio.to_thread(lambda: [snap(h) for h in app.get_state_history(cfg)])
                return sync_st == snap(await app.aget_state(cfg)), sync_h == await asnaps(app, cfg), sync_h

        return body()

    ref = check(scenario, backend)
    assert ref[0] is True and ref[1] is True


def test_chat_thread_with_messages_over_several_turns_and_an_edit(backend):
    """A MessagesState chat over four ainvoke turns with an aupdate_state edit by id and a
    RemoveMessage in between; every checkpoint's messages as InMemorySaver's."""

    def scenario(E, savers):
        from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

        async def bot(s):
            n = len(s["messages"])
            return {"messages": [AIMessage(f"reply {n}", id=f"ai{n}")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("bot", bot)
        g.add_edge(E.START, "bot")

        async def body():
            cfg = savers.cfg("chat")
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                out = []
                for k in range(4):
                    out.append(await app.ainvoke({"messages": [HumanMessage(f"q{k}", id=f"h{k}")]}, cfg))
                    if k == 1:
                        await app.aupdate_state(cfg, {"messages": [HumanMessage("q0 edited", id="h0"),
                                                                   RemoveMessage(id="ai3")]})
                out.append([(h.values, h.next, h.metadata["source"]) async for h in app.aget_state_history(cfg)])
            return out

        return body()

    check(scenario, backend)


def test_breaking_out_of_aget_state_history_then_forking_from_the_found_checkpoint(backend):
    """The docs' time travel loop: `async for s in aget_state_history(cfg): if ...: break`,
    then ainvoke(None, s.config) from the checkpoint found, while the history iterator
    was left unfinished; a second search finds the new branch."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("break")
            out = []
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                await app.ainvoke({"i": 0, "limit": 30, "log": []}, {**cfg, **R})
                found = None
                async for s in app.aget_state_history(cfg):
                    if s.values.get("i") == 12:
                        found = s
                        break
                out.append(snap(found))
                out.append(await app.ainvoke({"limit": 15}, {**found.config, **R}))
                async for s in app.aget_state_history(cfg, limit=50):
                    if s.metadata["source"] == "input" and s.metadata["step"] > 0:
                        out.append(snap(s))
                        break
                out.append(await ahist(app, cfg, limit=6))
            return out

        return body()

    check(scenario, backend)


def test_a_cancelled_ainvoke_keeps_the_steps_before_and_resumes(backend):
    """A user cancels a running ainvoke (asyncio task.cancel()) while step 4's node
    awaits: the caller gets CancelledError; the steps before are saved; ainvoke(None)
    re-runs step 4 and finishes, as on InMemorySaver."""

    def scenario(E, savers):
        started = {}

        async def step(s):
            i = s.get("i", 0) + 1
            if i == 4 and s.get("slow", True):
                started["ev"].set()
                await asyncio.sleep(30)
            return {"i": i}

        g = counting_graph(E, step, until=6)

        async def body():
            cfg = savers.cfg("cancel")
            started["ev"] = asyncio.Event()
            out = []
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                t = asyncio.create_task(app.ainvoke({"i": 0}, cfg, durability="sync"))
                await started["ev"].wait()
                t.cancel()
                try:
                    await t
                    out.append("finished")
                except asyncio.CancelledError:
                    out.append("cancelled")
                out.append(snap(await app.aget_state(cfg)))
                await app.aupdate_state(cfg, {"slow": False})
                out.append(await app.ainvoke(None, cfg))
                out.append(await asnaps(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_closing_an_astream_early_keeps_the_saved_steps(backend):
    """A consumer stops reading an astream after the third update and closes it
    (contextlib.aclosing): the saved state is the one InMemorySaver has, and the thread
    continues with ainvoke(None)."""
    import contextlib

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("aclose")
            out = []
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                seen = []
                async with contextlib.aclosing(app.astream({"i": 0, "limit": 10, "log": []}, cfg,
                                                           stream_mode="updates", durability="sync")) as st:
                    async for c in st:
                        seen.append(c)
                        if len(seen) == 3:
                            break
                out.append(seen)
                out.append(snap(await app.aget_state(cfg)))
                out.append(await app.ainvoke(None, cfg))
                out.append(await ahist(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_concurrent_runs_through_two_saver_instances_on_one_store(backend):
    """Two saver instances on one file/database (two workers), twelve threads split
    between them, all run concurrently with asyncio.gather, then each thread read back
    through the other instance."""
    if _diff.selftest_enabled() and backend().__class__ is SqliteFile:
        pytest.skip("LangGraph's AsyncSqliteSaver: two connections writing at once fail at "
                    "random with 'database is locked' (aiosqlite, deferred transactions)")

    def scenario(E, savers):
        async def body():
            async with savers.aopen() as sa, savers.aopen() as sb:
                apps = [wide_graph(E, sa), wide_graph(E, sb)]
                cfgs = [savers.cfg(f"two{i}") for i in range(12)]
                res = await asyncio.gather(*(apps[i % 2].ainvoke({"i": 0, "limit": 10 + i, "log": []}, {**c, **R})
                                             for i, c in enumerate(cfgs)))
                hists = [await ahist(apps[(i + 1) % 2], c) for i, c in enumerate(cfgs)]
                return list(res), hists

        return body()

    check(scenario, backend)


def test_command_resume_with_update_and_goto_on_an_async_saver(backend):
    """Command(resume=..., update=...) and a node returning Command(goto=...) after the
    interrupt, with a new saver instance per call: snapshots and history as on
    InMemorySaver."""

    def scenario(E, savers):
        async def review(s):
            ans = E.interrupt({"draft": s["log"][-1]})
            return E.Command(update={"log": [f"review:{ans}"]}, goto="publish" if ans == "ok" else "redo")

        async def redo(s):
            return {"log": ["redo"], "n": s.get("n", 0) + 1}

        g = E.StateGraph(Log)
        g.add_node("draft", lambda s: {"log": ["draft"]})
        g.add_node("review", review, destinations=("publish", "redo"))
        g.add_node("redo", redo)
        g.add_node("publish", lambda s: {"log": ["published"]})
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "review")
        g.add_edge("redo", "review")
        cfg = savers.cfg("cmd")

        def call(inp):
            async def one():
                async with savers.aopen() as saver:
                    app = g.compile(checkpointer=saver)
                    r = await app.ainvoke(inp, cfg)
                    return r, snap(await app.aget_state(cfg))
            return asyncio.run(one())

        out = [call({"log": [], "n": 0}),
               call(E.Command(resume="no", update={"n": 10})),
               call(E.Command(resume="ok"))]

        async def hist():
            async with savers.aopen() as saver:
                return await asnaps(g.compile(checkpointer=saver), cfg)

        out.append(asyncio.run(hist()))
        return out

    check(scenario, backend)


def test_closing_an_astream_after_one_of_two_parallel_updates(backend):
    """A step with a fast and a slow parallel node: the consumer closes the astream after
    the fast node's update (the slow one still running): the fast node's write is kept,
    the resumed run re-runs only `slow`, as on InMemorySaver. (Whether the cancelled task's
    `CancelledError` is recorded as its error is left out: LangGraph saves that write in
    the background and, on a real saver, sometimes not before the stream closes.)"""

    def noerr(s):
        return (s.values, s.next, s.metadata, tuple((t.name, t.result) for t in s.tasks), s.config)
    import contextlib

    def scenario(E, savers):
        calls = []

        async def fast(s):
            calls.append("fast")
            return {"log": ["fast"]}

        async def slow(s):
            calls.append("slow")
            await asyncio.sleep(0.3)
            return {"log": ["slow"]}

        g = E.StateGraph(Log)
        g.add_node("start", lambda s: {"log": ["start"]})
        g.add_node("fast", fast)
        g.add_node("slow", slow)
        g.add_edge(E.START, "start")
        g.add_edge("start", "fast")
        g.add_edge("start", "slow")

        async def body():
            cfg = savers.cfg("aclose2")
            out = []
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                seen = []
                async with contextlib.aclosing(app.astream({"log": []}, cfg, stream_mode="updates",
                                                           durability="sync")) as st:
                    async for c in st:
                        seen.append(c)
                        if "fast" in c:
                            break
                out.append(seen)
                out.append(noerr(await app.aget_state(cfg)))
                out.append(await app.ainvoke(None, cfg))
                out.append(sorted(calls))
                out.append([noerr(h) async for h in app.aget_state_history(cfg)])
            return out

        return body()

    check(scenario, backend)


def test_breaking_out_of_astream_at_the_interrupt_then_resuming(backend):
    """The human-in-the-loop loop: `async for chunk in astream(...): if "__interrupt__" in
    chunk: break`, then astream(Command(resume=)) on the same thread."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("brk-int")
            out = []
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                agen = app.astream({"log": [], "n": 1}, cfg, stream_mode="updates")
                async for c in agen:
                    out.append(c)
                    if "__interrupt__" in c:
                        break
                await agen.aclose()
                out.append(snap(await app.aget_state(cfg)))
                out.append(await drain(app.astream(E.Command(resume="y"), cfg, stream_mode="updates")))
                out.append(await asnaps(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_recursion_limit_error_keeps_the_thread_resumable_with_a_higher_limit(backend):
    """ainvoke with recursion_limit=8 on a 20-step thread raises GraphRecursionError; the
    saved state and its `next`, then ainvoke(None, recursion_limit=100) finishing it."""

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("reclimit")
            out = []
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                out.append(await _diff.acapture(
                    lambda: app.ainvoke({"i": 0, "limit": 20, "log": []}, {**cfg, "recursion_limit": 8})))
                out.append(snap(await app.aget_state(cfg)))
                out.append(await app.ainvoke(None, {**cfg, "recursion_limit": 100}))
                out.append(await ahist(app, cfg))
            return out

        return body()

    check(scenario, backend)


@pytest.mark.parametrize("durability", ["async", "exit"])
def test_a_cancelled_ainvoke_under_async_and_exit_durability(backend, durability):
    """task.cancel() while step 4's node awaits, with durability async/exit: what is saved
    (exit: nothing of the run? as InMemorySaver) and the thread after a fresh ainvoke."""

    def scenario(E, savers):
        started = {}

        async def step(s):
            i = s.get("i", 0) + 1
            if i == 4 and "ev" in started:
                ev = started.pop("ev")
                ev.set()
                await asyncio.sleep(30)
            return {"i": i}

        g = counting_graph(E, step, until=6)

        async def body():
            cfg = savers.cfg("cancel-d")
            ev = started["ev"] = asyncio.Event()
            out = []
            async with savers.aopen() as saver:
                app = g.compile(checkpointer=saver)
                t = asyncio.create_task(app.ainvoke({"i": 0}, cfg, durability=durability))
                await ev.wait()
                t.cancel()
                try:
                    await t
                    out.append("finished")
                except asyncio.CancelledError:
                    out.append("cancelled")
                out.append(snap(await app.aget_state(cfg)))
                out.append(await ahist(app, cfg))
                out.append(await app.ainvoke(None if out[1][1] else {"i": 0}, cfg))
            return out

        return body()

    check(scenario, backend)


def test_in_memory_sqlite_from_conn_string_as_in_the_docs():
    """`async with AsyncSqliteSaver.from_conn_string(":memory:") as saver` (the docs'
    example): a run, an interrupt, a resume and the history, as on InMemorySaver."""

    class Mem(pgref._Threads):
        @asynccontextmanager
        async def aopen(self):
            if _diff.selftest_enabled():
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
            else:
                from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
            async with AsyncSqliteSaver.from_conn_string(":memory:") as s:
                yield s

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("mem")
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                out = [await app.ainvoke({"log": [], "n": 0}, cfg)]
                out.append(await app.ainvoke(E.Command(resume="m"), cfg))
                out.append(await asnaps(app, cfg))
                out.append(await alist(saver, None, limit=3))
            return out

        return body()

    check(scenario, Mem)


def test_postgres_saver_on_a_connection_pool_with_concurrent_threads(postgres_url):
    """The docs' production setup: AsyncPostgresSaver(AsyncConnectionPool(...,
    kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row})), ten
    threads run concurrently, with interrupts resumed concurrently."""
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    class Pool(pgref._Threads):
        @asynccontextmanager
        async def aopen(self):
            if _diff.selftest_enabled():
                from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
            else:
                from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver
            async with AsyncConnectionPool(postgres_url, max_size=4, open=False, kwargs={
                    "autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}) as pool:
                s = AsyncPostgresSaver(pool)
                await s.setup()
                yield s

    def scenario(E, savers):
        async def body():
            async with savers.aopen() as saver:
                app = chain_with_question(E, saver)
                cfgs = [savers.cfg(f"pool{i}") for i in range(10)]
                r1 = await asyncio.gather(*(app.ainvoke({"log": [], "n": i}, c) for i, c in enumerate(cfgs)))
                r2 = await asyncio.gather(*(app.ainvoke(E.Command(resume=i), c) for i, c in enumerate(cfgs)))
                return list(r1), list(r2), [await asnaps(app, c) for c in cfgs]

        return body()

    check(scenario, lambda: Pool())


def test_subgraph_state_read_and_edited_through_the_task_config(backend):
    """The docs' subgraph pattern: a paused parent's task.state is the subgraph's config;
    aget_state / aget_state_history of it, aupdate_state of it (editing the subgraph's
    state), then resume: the edit reaches the subgraph's node."""

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]
        note: str

    def scenario(E, savers):
        async def inner(s):
            ans = E.interrupt("sub?")
            return {"log": [f"inner:{ans}:{s.get('note')}"]}

        sb = E.StateGraph(S)
        sb.add_node("prep", lambda s: {"log": ["prep"]})
        sb.add_node("inner", inner)
        sb.add_edge(E.START, "prep")
        sb.add_edge("prep", "inner")

        async def body():
            cfg = savers.cfg("subedit")
            out = []
            async with savers.aopen() as saver:
                g = E.StateGraph(S)
                g.add_node("pre", lambda s: {"log": ["pre"]})
                g.add_node("sub", sb.compile())
                g.add_edge(E.START, "pre")
                g.add_edge("pre", "sub")
                app = g.compile(checkpointer=saver)
                await app.ainvoke({"log": []}, cfg)
                st = await app.aget_state(cfg)
                sub_cfg = st.tasks[0].state
                out.append(sub_cfg)
                out.append(snap(await app.aget_state(sub_cfg)))
                out.append(await asnaps(app, sub_cfg))
                out.append(await app.aupdate_state(sub_cfg, {"note": "edited"}))
                out.append(await app.ainvoke(E.Command(resume="ok"), cfg))
                out.append(await asnaps(app, cfg))
            return out

        return body()

    check(scenario, backend)


def test_closing_an_astream_early_under_default_durability(backend):
    """As the sync-durability test above, with the default durability ("async"): after the
    consumer closes the stream following the third update, the thread's saved state and
    its continuation."""
    import contextlib

    def scenario(E, savers):
        async def body():
            cfg = savers.cfg("aclose-def")
            out = []
            async with savers.aopen() as saver:
                app = wide_graph(E, saver)
                seen = []
                async with contextlib.aclosing(app.astream({"i": 0, "limit": 10, "log": []}, cfg,
                                                           stream_mode="updates")) as st:
                    async for c in st:
                        seen.append(c)
                        if len(seen) == 3:
                            break
                out.append(seen)
                st = await app.aget_state(cfg)
                out.append((st.values, st.next, st.metadata["step"]))
                out.append(await app.ainvoke(None, cfg))
            return out

        return body()

    check(scenario, backend)

"""The same graph gives the same observable output on every checkpointer.

Reference: LangGraph + InMemorySaver. Candidates: {LangGraph, lgnb} x {InMemorySaver,
LangGraph's SqliteSaver / AsyncSqliteSaver, lgnb's SqliteSaver / AsyncSqliteSaver,
PostgresSaver / AsyncPostgresSaver}. The LangGraph rows prove the saver itself is
transparent; the lgnb rows prove lgnb speaks the saver protocol the way LangGraph does.
"""

from __future__ import annotations

import operator
import random
import uuid
from typing import Annotated

import pytest
from typing_extensions import TypedDict

import _diff
import _pdiff
from _savers import ASYNC_KINDS, POSTGRES_KINDS, SYNC_KINDS, thread


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    count: int


def _build(E, saver, **kw):
    def draft(s):
        return {"log": ["draft"], "count": s.get("count", 0) + 1}

    def note(arg):
        return {"log": [f"note:{arg['topic']}"]}

    def review(s):
        answer = E.interrupt({"question": "approve?", "count": s["count"]})
        return {"log": [f"review:{answer}"], "count": s["count"] + 1}

    g = E.StateGraph(S)
    g.add_node("draft", draft)
    g.add_node("note", note)
    g.add_node("review", review)
    g.add_edge(E.START, "draft")
    g.add_conditional_edges("draft", lambda s: [E.Send("note", {"topic": t}) for t in ("a", "b")], ["note"])
    g.add_edge("note", "review")
    g.add_edge("review", E.END)
    return g.compile(checkpointer=saver, **kw)


def _steps(chunks):
    # the two `note` tasks run in one step and LangGraph emits their updates in completion order
    return _diff.steps_as_multisets(chunks, lambda c: isinstance(c, tuple) and c[0] == "checkpoints")


def _body(E, app):
    cfg = thread()
    seen = {}
    seen["updates"] = _steps(_diff.collect(lambda: app.stream({"log": [], "count": 0}, cfg, stream_mode=["updates", "checkpoints"])))
    seen["paused"] = app.get_state(cfg)
    seen["resumed"] = app.invoke(E.Command(resume="yes"), cfg)
    seen["history"] = list(app.get_state_history(cfg))
    before_review = next(s for s in app.get_state_history(cfg) if s.next == ("review",))
    seen["fork"] = app.invoke(E.Command(resume="no"), before_review.config)
    upd = app.update_state(cfg, {"log": ["manual"]})
    seen["after_update"] = app.get_state(upd)
    seen["filtered"] = [s.metadata for s in app.get_state_history(cfg, filter={"source": "update"})]
    seen["limited"] = [s.values for s in app.get_state_history(cfg, limit=2)]
    seen["before"] = [s.metadata["step"] for s in app.get_state_history(cfg, before=before_review.config)]
    seen["replay"] = app.invoke(None, list(app.get_state_history(cfg))[-1].config)
    seen["final_history"] = [(s.metadata, s.next, s.values) for s in app.get_state_history(cfg)]
    return seen


async def _abody(E, app):
    cfg = thread()
    seen = {}
    seen["updates"] = _steps(await _diff.acollect(lambda: app.astream({"log": [], "count": 0}, cfg, stream_mode=["updates", "checkpoints"])))
    seen["paused"] = await app.aget_state(cfg)
    seen["resumed"] = await app.ainvoke(E.Command(resume="yes"), cfg)
    seen["history"] = [s async for s in app.aget_state_history(cfg)]
    before_review = [s async for s in app.aget_state_history(cfg) if s.next == ("review",)][0]
    seen["fork"] = await app.ainvoke(E.Command(resume="no"), before_review.config)
    upd = await app.aupdate_state(cfg, {"log": ["manual"]})
    seen["after_update"] = await app.aget_state(upd)
    seen["filtered"] = [s.metadata async for s in app.aget_state_history(cfg, filter={"source": "update"})]
    seen["limited"] = [s.values async for s in app.aget_state_history(cfg, limit=2)]
    seen["before"] = [s.metadata["step"] async for s in app.aget_state_history(cfg, before=before_review.config)]
    hist = [s async for s in app.aget_state_history(cfg)]
    seen["replay"] = await app.ainvoke(None, hist[-1].config)
    seen["final_history"] = [(s.metadata, s.next, s.values) async for s in app.aget_state_history(cfg)]
    return seen


def _engines():
    return {"langgraph": _diff.reference_engine(), "lgnb": _diff.candidate_engine()}


def _pg(request, savers, kind):
    if kind in POSTGRES_KINDS:
        savers.pg_url = request.getfixturevalue("postgres_url")


@pytest.mark.parametrize("kind", SYNC_KINDS)
@pytest.mark.parametrize("engine", ["langgraph", "lgnb"])
def test_same_observables_on_every_sync_saver(request, savers, engine, kind):
    _pg(request, savers, kind)

    def scenario(E, kind):
        with savers.open(kind, E) as saver:
            return _body(E, _build(E, saver))

    ref_e, cand_e = _diff.reference_engine(), _engines()[engine]
    ref = _diff.run_scenario(lambda E: scenario(E, "memory"), ref_e)
    assert ref["resumed"]["log"][-1] == "review:yes", ref
    cand = _diff.run_scenario(lambda E: scenario(E, kind), cand_e)
    _pdiff.compare(ref, cand, ref_label="langgraph+memory", cand_label=f"{cand_e.label}+{kind}")


@pytest.mark.parametrize("kind", ASYNC_KINDS)
@pytest.mark.parametrize("engine", ["langgraph", "lgnb"])
def test_same_observables_on_every_async_saver(request, savers, engine, kind):
    _pg(request, savers, kind)

    async def scenario(E, kind):
        async with savers.aopen(kind, E) as saver:
            return await _abody(E, _build(E, saver))

    ref_e, cand_e = _diff.reference_engine(), _engines()[engine]
    ref = _diff.run_scenario(lambda E: scenario(E, "memory"), ref_e)
    assert ref["resumed"]["log"][-1] == "review:yes", ref
    cand = _diff.run_scenario(lambda E: scenario(E, kind), cand_e)
    _pdiff.compare(ref, cand, ref_label="langgraph+memory(async)", cand_label=f"{cand_e.label}+{kind}")


@pytest.mark.parametrize("kind", ["lgnb_sqlite", "langgraph_sqlite", "postgres"])
def test_thread_written_by_one_engine_is_resumed_by_the_other(request, savers, kind):
    """lgnb's checkpoints are LangGraph's checkpoints: pause on lgnb, resume on LangGraph
    (and the other way round) through the same saver."""
    _pg(request, savers, kind)
    engines = _engines()
    results = {}
    for first, second in (("lgnb", "langgraph"), ("langgraph", "lgnb")):
        E1, E2 = engines[first], engines[second]
        with savers.open(kind, E1) as saver:
            cfg = thread()
            _build(E1, saver).invoke({"log": [], "count": 0}, cfg)
            app2 = _build(E2, saver)
            out = app2.invoke(E2.Command(resume=f"{second} resumed"), cfg)
            results[(first, second)] = (out, [(s.metadata["source"], s.metadata["step"], s.next)
                                              for s in app2.get_state_history(cfg)])
    a, b = (_diff.normalize(v) for v in results.values())
    assert a[0]["log"] == ["draft", "note:a", "note:b", "review:langgraph resumed"]
    assert b[0]["log"] == ["draft", "note:a", "note:b", "review:lgnb resumed"]
    assert a[1] == b[1]


def test_other_engine_sees_the_same_tasks_and_interrupts_of_a_paused_thread(savers):
    """Task and interrupt ids derive from the checkpoint the same way on both engines, so a
    thread paused by one engine shows its pending interrupt, with the same ids, to the other."""
    engines = _engines()
    seen = {}
    for first, second in (("lgnb", "langgraph"), ("langgraph", "lgnb")):
        E1, E2 = engines[first], engines[second]
        with savers.open("lgnb_sqlite", E1) as saver:
            cfg = thread()
            _build(E1, saver).invoke({"log": [], "count": 0}, cfg)
            own = _build(E1, saver).get_state(cfg)
            other = _build(E2, saver).get_state(cfg)
            seen[first] = (
                [(t.name, t.id, [i.id for i in t.interrupts]) for t in own.tasks],
                [(t.name, t.id, [i.id for i in t.interrupts]) for t in other.tasks],
                [i.value for i in other.interrupts],
            )
    for first, (own, other, values) in seen.items():
        assert other == own, f"paused by {first}: ids differ on the other engine"
        assert values == [{"question": "approve?", "count": 1}], first


# -- thread ids of any type ----------------------------------------------------------------

# a thread id need not be a string: savers key on str(thread_id), LangGraph's get_state too
_THREAD_IDS = {"zero": lambda: 0, "int": lambda: random.getrandbits(48) + 1, "uuid": uuid.uuid4}


def _thread_id_body(E, app, thread_id):
    cfg = {"configurable": {"thread_id": thread_id}}
    if hasattr(app.checkpointer, "delete_thread"):
        app.checkpointer.delete_thread(str(thread_id))  # 0 is one thread in a shared database
    seen = {}
    seen["paused"] = app.invoke({"log": [], "count": 0}, cfg)
    seen["resumed"] = app.invoke(E.Command(resume="yes"), cfg)
    state = app.get_state(cfg)
    seen["state"] = (state.values, state.next, state.config["configurable"]["thread_id"] == str(thread_id))
    seen["history"] = [(s.metadata["source"], s.metadata["step"], s.next) for s in app.get_state_history(cfg)]
    upd = app.update_state(cfg, {"log": ["manual"]})
    seen["updated"] = (app.get_state(upd).values, upd["configurable"]["thread_id"] == str(thread_id))
    seen["by_str"] = app.get_state({"configurable": {"thread_id": str(thread_id)}}).values
    return seen


@pytest.mark.parametrize("tid", _THREAD_IDS)
@pytest.mark.parametrize("kind", SYNC_KINDS)
def test_any_thread_id_type_works_on_every_saver(request, savers, kind, tid):
    """0, an int, a UUID: the same observables on LangGraph and lgnb, on every saver.

    One deliberate difference: LangGraph's loop converts a thread id to str only when it is
    truthy (`if thread_id := ...`), so thread 0 reaches the saver as the int 0: InMemorySaver
    keys its checkpoints by 0 while get_state looks up "0" and finds nothing, and
    PostgresSaver fails (`operator does not exist: text = smallint`). lgnb passes every
    thread id as str(thread_id), on every saver; for those two cells LangGraph on a SQLite
    saver is the reference."""
    _pg(request, savers, kind)
    thread_id = _THREAD_IDS[tid]()

    def scenario(E, kind):
        with savers.open(kind, E) as saver:
            return _thread_id_body(E, _build(E, saver), thread_id)

    ref_e, cand_e = _diff.reference_engine(), _diff.candidate_engine()
    langgraph_breaks = tid == "zero" and kind in ("memory", "postgres")
    # (under selftest, LangGraph on both sides: the same saver, broken alike)
    ref_kind = "lgnb_sqlite" if langgraph_breaks and cand_e.root == "lgnb" else kind
    ref = _diff.run_scenario(lambda E: scenario(E, ref_kind), ref_e)
    if ref_kind != kind or not langgraph_breaks:
        assert ref["resumed"]["log"][-1] == "review:yes" and ref["state"][2] and ref["by_str"]["log"][-1] == "manual", ref
    cand = _diff.run_scenario(lambda E: scenario(E, kind), cand_e)
    _pdiff.compare(ref, cand, ref_label=f"langgraph+{ref_kind}", cand_label=f"lgnb+{kind}")


def test_langgraph_in_memory_loses_thread_zero_and_lgnb_does_not(savers):
    """The LangGraph behaviour the test above works around, pinned so a LangGraph upgrade
    that fixes it shows up here (then drop the special case)."""
    seen = {}
    for name, E in _engines().items():
        with savers.open("memory", E) as saver:
            app = _build(E, saver)
            app.invoke({"log": [], "count": 0}, {"configurable": {"thread_id": 0}})
            seen[name] = app.get_state({"configurable": {"thread_id": 0}}).next
    fixed = ("review",) if _engines()["lgnb"].root == "lgnb" else ()  # () under selftest
    assert seen == {"langgraph": (), "lgnb": fixed}


def test_lgnb_sqlite_stores_thread_ids_as_text(tmp_path):
    """As LangGraph's SqliteSaver does (str(thread_id)): thread 7 and thread "7" are one thread."""
    import sqlite3

    from lgnb.checkpoint.sqlite import SqliteSaver

    E = _diff.candidate_engine()
    path = tmp_path / "ids.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        app = _build(E, saver)
        for tid in (0, 7, uuid.UUID(int=5)):
            app.invoke({"log": [], "count": 0}, {"configurable": {"thread_id": tid}})
        assert app.invoke(E.Command(resume="yes"), {"configurable": {"thread_id": "7"}})["log"][-1] == "review:yes"
        assert [t.config["configurable"]["thread_id"] for t in saver.list({"configurable": {"thread_id": 7}})][0] == "7"
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT DISTINCT thread_id, typeof(thread_id) FROM lgnb_checkpoints ORDER BY 1").fetchall()
    assert rows == [("0", "text"), ("00000000-0000-0000-0000-000000000005", "text"), ("7", "text")]

"""The same graph gives the same observable output on every checkpointer.

Reference: LangGraph + InMemorySaver. Candidates: {LangGraph, lgnb} x {InMemorySaver,
LangGraph's SqliteSaver / AsyncSqliteSaver, lgnb's SqliteSaver / AsyncSqliteSaver,
PostgresSaver / AsyncPostgresSaver}. The LangGraph rows prove the saver itself is
transparent; the lgnb rows prove lgnb speaks the saver protocol the way LangGraph does.
"""

from __future__ import annotations

import operator
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

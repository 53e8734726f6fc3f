"""interrupt(value) with a checkpointer: what streams and invoke return, Command(resume=...),
several interrupts in one node, parallel interrupts resumed by id, the ambiguous-resume error,
Command(resume=, update=), response_schema."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

from _diff import acollect, capture, collect
from _savers import thread


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    note: str


def _logger(name):
    return lambda s: {"log": [name]}


def _asking(E, runs=None, **compile_kw):
    runs = runs if runs is not None else []

    def ask(s):
        runs.append("ask:start")  # the node re-runs from its first line on resume
        answer = E.interrupt({"question": "approve?", "seen": list(s["log"])})
        runs.append(f"ask:got:{answer}")
        return {"log": [f"answer:{answer}"]}

    g = E.StateGraph(S)
    g.add_node("prep", _logger("prep"))
    g.add_node("ask", ask)
    g.add_node("after", _logger("after"))
    g.add_edge(E.START, "prep")
    g.add_edge("prep", "ask")
    g.add_edge("ask", "after")
    return g.compile(checkpointer=E.InMemorySaver(), **compile_kw)


def _two_parallel(E):
    def mk(n):
        def f(s):
            return {"log": [f"{n}={E.interrupt(f'q-{n}')}"]}

        return f

    g = E.StateGraph(S)
    g.add_node("x", mk("x"))
    g.add_node("y", mk("y"))
    g.add_node("join", _logger("join"))
    g.add_edge(E.START, "x")
    g.add_edge(E.START, "y")
    g.add_edge(["x", "y"], "join")
    return g.compile(checkpointer=E.InMemorySaver())


def _by_value(interrupts):
    return {i.value: i.id for i in interrupts}


# --- shapes ---------------------------------------------------------------------------------


def test_invoke_v1_returns_values_with___interrupt___list(differential):
    def scenario(E):
        out = _asking(E).invoke({"log": []}, thread())
        return out, type(out["__interrupt__"]).__name__

    ref = differential(scenario)
    assert ref[1] == "list"


def test_invoke_v2_returns_graph_output_with_interrupts(differential):
    def scenario(E):
        out = _asking(E).invoke({"log": []}, thread(), version="v2")
        return type(out).__name__, out.value, out.interrupts

    differential(scenario)


def test_updates_stream_carries___interrupt__(differential):
    def scenario(E):
        return collect(lambda: _asking(E).stream({"log": []}, thread(), stream_mode="updates"))

    ref = differential(scenario)
    assert "__interrupt__" in ref[-1]


def test_values_stream_carries___interrupt__(differential):
    def scenario(E):
        return collect(lambda: _asking(E).stream({"log": []}, thread(), stream_mode="values"))

    differential(scenario)


def test_stream_v2_values_and_updates_with_interrupt(differential):
    def scenario(E):
        return collect(lambda: _asking(E).stream({"log": []}, thread(), stream_mode=["values", "updates"], version="v2"))

    differential(scenario)


def test_get_state_of_a_paused_thread(differential):
    def scenario(E):
        app, cfg = _asking(E), thread()
        app.invoke({"log": []}, cfg)
        return app.get_state(cfg)

    differential(scenario)


# --- resume ---------------------------------------------------------------------------------


def test_command_resume_returns_the_value_from_interrupt_and_reruns_the_node(differential):
    def scenario(E):
        runs = []
        app, cfg = _asking(E, runs), thread()
        app.invoke({"log": []}, cfg)
        out = app.invoke(E.Command(resume="yes"), cfg)
        return out, runs, app.get_state(cfg).next

    differential(scenario, expect=(
        {"log": ["prep", "answer:yes", "after"]},
        ["ask:start", "ask:start", "ask:got:yes"],
        (),
    ))


def test_resume_streams_updates_of_the_rest_of_the_run(differential):
    def scenario(E):
        app, cfg = _asking(E), thread()
        app.invoke({"log": []}, cfg)
        return collect(lambda: app.stream(E.Command(resume={"ok": True}), cfg, stream_mode=["updates", "values"]))

    differential(scenario)


def test_resume_value_can_be_any_serializable_value(differential):
    def scenario(E):
        out = []
        for value in (0, "", [1, 2], {"nested": {"a": [1]}}, False):
            app, cfg = _asking(E), thread()
            app.invoke({"log": []}, cfg)
            out.append(capture(lambda: app.invoke(E.Command(resume=value), cfg)))
        return out

    differential(scenario)


def test_resume_none_is_rejected_clearly_and_the_thread_stays_paused(ref_engine):
    """Command(resume=None): LangGraph 1.2.24 crashes with UnboundLocalError (resume_is_map);
    lgnb deliberately answers with a clear error instead. Either way nothing is lost."""
    import _diff

    for E in (ref_engine, _diff.candidate_engine()):
        app, cfg = _asking(E), thread()
        app.invoke({"log": []}, cfg)
        err = capture(lambda: app.invoke(E.Command(resume=None), cfg))
        assert err[0] == "raises", (E, err)
        st = app.get_state(cfg)
        assert st.next == ("ask",) and len(st.interrupts) == 1, (E, st)
        if E.root == "lgnb":
            assert err[1] != "UnboundLocalError" and "Command" in err[2], err
        assert app.invoke(E.Command(resume="later"), cfg) == {"log": ["prep", "answer:later", "after"]}


def test_several_interrupts_in_one_node_are_answered_in_order(differential):
    def scenario(E):
        runs = []

        def form(s):
            runs.append("form")
            name = E.interrupt("name?")
            age = E.interrupt({"ask": "age?", "name": name})
            city = E.interrupt("city?")
            return {"log": [f"{name}/{age}/{city}"]}

        g = E.StateGraph(S)
        g.add_node("form", form)
        g.add_edge(E.START, "form")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        seen = [app.invoke({"log": []}, cfg)]
        for answer in ("ada", 36, "london"):
            seen.append(app.invoke(E.Command(resume=answer), cfg))
            st = app.get_state(cfg)
            seen.append((st.next, st.interrupts))
        seen.append(runs)
        return seen

    differential(scenario)


def test_interrupt_ids_differ_per_call_in_one_node(differential):
    def scenario(E):
        def form(s):
            a = E.interrupt("one")
            b = E.interrupt("two")
            return {"log": [a, b]}

        g = E.StateGraph(S)
        g.add_node("form", form)
        g.add_edge(E.START, "form")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = app.invoke({"log": []}, cfg)["__interrupt__"][0]
        second = app.invoke(E.Command(resume="A"), cfg)["__interrupt__"][0]
        # resuming the second by its id works too
        done = app.invoke(E.Command(resume={second.id: "B"}), cfg)
        return first.id != second.id, first.value, second.value, done

    differential(scenario, expect=(True, "one", "two", {"log": ["A", "B"]}))


def test_parallel_interrupts_answered_together_by_id(differential):
    def scenario(E):
        app, cfg = _two_parallel(E), thread()
        out = app.invoke({"log": []}, cfg)
        ids = _by_value(out["__interrupt__"])
        st = app.get_state(cfg)
        done = app.invoke(E.Command(resume={ids["q-x"]: "X", ids["q-y"]: "Y"}), cfg)
        return sorted(ids), st.next, len(st.interrupts), done

    differential(scenario, expect=(["q-x", "q-y"], ("x", "y"), 2, {"log": ["x=X", "y=Y", "join"]}))


def test_parallel_interrupts_answered_one_at_a_time(differential):
    def scenario(E):
        app, cfg = _two_parallel(E), thread()
        ids = _by_value(app.invoke({"log": []}, cfg)["__interrupt__"])
        partial = app.invoke(E.Command(resume={ids["q-x"]: "X"}), cfg)
        st = app.get_state(cfg)
        left = [(i.value, i.id == ids["q-y"]) for i in st.interrupts]
        done = app.invoke(E.Command(resume={ids["q-y"]: "Y"}), cfg)
        return partial, st.next, left, sorted((t.name, t.result is not None) for t in st.tasks), done

    differential(scenario)


def test_ambiguous_resume_with_several_pending_interrupts_is_an_error(differential):
    def scenario(E):
        app, cfg = _two_parallel(E), thread()
        app.invoke({"log": []}, cfg)
        err = capture(lambda: app.invoke(E.Command(resume="which one?"), cfg))
        st = app.get_state(cfg)  # nothing was lost: still paused on both
        return err, st.next, len(st.interrupts)

    ref = differential(scenario, exc="extends")
    assert ref[0][0] == "raises"


def test_resume_with_update_applies_the_update_before_the_node_reruns(differential):
    def scenario(E):
        seen = []

        def ask(s):
            seen.append(s.get("note"))
            answer = E.interrupt("q")
            return {"log": [f"{answer}:{s.get('note')}"]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        out = app.invoke(E.Command(resume="r", update={"note": "edited"}), cfg)
        hist = [(s.metadata["source"], s.metadata["step"], s.next, s.values) for s in app.get_state_history(cfg)]
        return out, seen, hist

    differential(scenario)


def test_resume_with_goto_after_interrupt(differential):
    def scenario(E):
        app, cfg = _asking(E), thread()
        app.invoke({"log": []}, cfg)
        out = app.invoke(E.Command(resume="r", goto="after"), cfg)
        return out, [(s.metadata["step"], s.next) for s in app.get_state_history(cfg)]

    differential(scenario)


def test_new_input_on_a_paused_thread_discards_the_interrupt(differential):
    def scenario(E):
        runs = []
        app, cfg = _asking(E, runs), thread()
        app.invoke({"log": []}, cfg)
        second = app.invoke({"log": ["fresh"]}, cfg)
        return second, runs, app.get_state(cfg).next

    differential(scenario)


def test_interrupt_payload_keeps_its_exact_value(differential):
    def scenario(E):
        payload = {"a": [1, 2, {"b": None}], "t": (1, 2), "s": "x" * 50}

        def ask(s):
            return {"log": [E.interrupt(payload)]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        live = app.invoke({"log": []}, cfg)["__interrupt__"][0].value
        stored = app.get_state(cfg).interrupts[0].value
        return live, stored

    differential(scenario)


def _no_msg(obs):
    return obs[:2] if isinstance(obs, tuple) and obs and obs[0] == "raises" else obs


# --- response_schema --------------------------------------------------------------------------


def test_response_schema_dict_is_surfaced_and_not_validated(differential):
    def scenario(E):
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

        def ask(s):
            return {"log": [E.interrupt("approve?", response_schema=schema)]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        i = app.invoke({"log": []}, cfg)["__interrupt__"][0]
        stored = app.get_state(cfg).interrupts[0]
        return i.response_schema, stored.response_schema, app.invoke(E.Command(resume="not a dict"), cfg)

    differential(scenario)


def test_response_schema_model_validates_the_resume_value(differential):
    def scenario(E):
        from pydantic import BaseModel

        class Decision(BaseModel):
            approve: bool
            reason: str = ""

        got = []

        def ask(s):
            d = E.interrupt("decide", response_schema=Decision)
            got.append((type(d).__name__, d.approve, d.reason))
            return {"log": [f"approve={d.approve}"]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        i = app.invoke({"log": []}, cfg)["__interrupt__"][0]
        bad = capture(lambda: app.invoke(E.Command(resume={"approve": "maybe?"}), cfg))
        still = app.get_state(cfg)  # nothing was saved: the interrupt can be answered again
        good = capture(lambda: app.invoke(E.Command(resume={"approve": True, "reason": "fine"}), cfg))
        return i.response_schema, bad[:2], still.next, len(still.interrupts), _no_msg(good), got

    differential(scenario)


# --- async ------------------------------------------------------------------------------------


async def test_async_interrupt_and_resume(differential):
    async def scenario(E):
        async def ask(s):
            return {"log": [E.interrupt("async?")]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_node("after", _logger("after"))
        g.add_edge(E.START, "ask")
        g.add_edge("ask", "after")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = await acollect(lambda: app.astream({"log": []}, cfg, stream_mode=["updates", "values"]))
        st = await app.aget_state(cfg)
        done = await app.ainvoke(E.Command(resume="yes"), cfg)
        return first, st, done

    differential(scenario)

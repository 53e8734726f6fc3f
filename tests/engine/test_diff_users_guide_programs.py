"""Whole programs as users write them from LangGraph's how-to guides, run on both engines:
a subgraph invoked inside a node with an interrupt, a multi-agent handoff to the parent,
the functional API with tasks and an interrupt, a map-reduce, node caching, and a review
loop with `update_state`.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import operator
from typing import Annotated

from _diff import attempt, collect
from typing_extensions import TypedDict


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


def _snap(s):
    return (s.values, s.next, [(t.name, t.interrupts, t.result) for t in s.tasks],
            s.metadata.get("step") if s.metadata else None)


def test_subgraph_invoked_inside_a_node_pauses_and_resumes_with_its_state(differential):
    def scenario(E):
        class Sub(TypedDict):
            draft: str
            log: Annotated[list, operator.add]

        def write(s):
            return {"draft": s["draft"] + " written", "log": ["write"]}

        def review(s):
            ok = E.interrupt({"question": "approve?", "draft": s["draft"]})
            return {"draft": s["draft"] + (" approved" if ok else " rejected"), "log": ["review"]}

        sg = E.StateGraph(Sub)
        sg.add_node("write", write)
        sg.add_node("review", review)
        sg.add_edge(E.START, "write")
        sg.add_edge("write", "review")
        sub = sg.compile()

        class Parent(TypedDict):
            topic: str
            result: str
            calls: Annotated[list, operator.add]

        def call_sub(s):
            out = sub.invoke({"draft": s["topic"], "log": []})
            return {"result": out["draft"] + "|" + ",".join(out["log"]), "calls": ["sub"]}

        g = E.StateGraph(Parent)
        g.add_node("prep", lambda s: {"calls": ["prep"]})
        g.add_node("call_sub", call_sub)
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "call_sub")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = collect(lambda: app.stream({"topic": "essay"}, cfg, subgraphs=True))
        paused = app.get_state(cfg, subgraphs=True)
        sub_state = paused.tasks[0].state
        second = collect(lambda: app.stream(E.Command(resume=True), cfg, subgraphs=True))
        hist = [_snap(s) for s in app.get_state_history(cfg)]
        return (first, _snap(paused), sub_state and _snap(sub_state), second,
                _snap(app.get_state(cfg)), hist)

    differential(scenario)


def test_agent_in_a_subgraph_hands_off_to_a_sibling_agent_through_the_parent(differential):
    def scenario(E):
        class S(TypedDict):
            trail: Annotated[list, operator.add]
            hops: int

        def agent_node(name, other):
            def inner(s):
                if s["hops"] >= 3:
                    return {"trail": [f"{name}:done"]}
                return E.Command(goto=other, graph=E.Command.PARENT,
                                 update={"trail": [f"{name}->{other}"], "hops": s["hops"] + 1})
            sg = E.StateGraph(S)
            sg.add_node("think", inner)
            sg.add_edge(E.START, "think")
            return sg.compile()

        g = E.StateGraph(S)
        g.add_node("alice", agent_node("alice", "bob"), destinations=("bob",))
        g.add_node("bob", agent_node("bob", "alice"), destinations=("alice",))
        g.add_edge(E.START, "alice")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        chunks = collect(lambda: app.stream({"trail": [], "hops": 0}, cfg,
                                            stream_mode=["updates", "values"], subgraphs=True))
        hist = [_snap(s) for s in app.get_state_history(cfg)]
        return chunks, hist

    differential(scenario)


def test_functional_api_tasks_in_parallel_an_interrupt_and_entrypoint_final(differential):
    def scenario(E):
        calls = []

        @E.func.task
        def square(x: int) -> int:
            calls.append(("square", x))
            return x * x

        @E.func.task
        def label(total: int) -> str:
            calls.append(("label", total))
            return f"total={total}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def flow(nums: list, *, previous=None):
            futures = [square(n) for n in nums]
            total = sum(f.result() for f in futures)
            answer = E.interrupt({"total": total, "previous": previous})
            text = label(total).result()
            return E.func.entrypoint.final(value=f"{text} {answer}", save=total)

        cfg = _cfg()
        # the three squares run in parallel: their updates come in completion order
        first = sorted(map(repr, collect(lambda: flow.stream([1, 2, 3], cfg,
                                                            stream_mode=["updates", "custom"]))))
        resumed = flow.invoke(E.Command(resume="ok"), cfg)
        again = collect(lambda: flow.stream([4], cfg))
        final = flow.invoke(E.Command(resume="fine"), cfg)
        return first, resumed, again, final, sorted(calls), _snap(flow.get_state(cfg))

    differential(scenario)


def test_map_reduce_with_send_then_a_summary_keeps_every_branch_result(differential):
    def scenario(E):
        class S(TypedDict):
            subjects: list
            jokes: Annotated[list, operator.add]
            best: str

        def fan(s):
            return [E.Send("joke", {"subject": x}) for x in s["subjects"]]

        def joke(s):
            return {"jokes": [f"a joke about {s['subject']}"]}

        def pick(s):
            return {"best": max(s["jokes"], key=len)}

        g = E.StateGraph(S)
        g.add_node("start", lambda s: {})
        g.add_node("joke", joke)
        g.add_node("pick", pick)
        g.add_edge(E.START, "start")
        g.add_conditional_edges("start", fan, ["joke"])
        g.add_edge("joke", "pick")
        g.add_edge("pick", E.END)
        app = g.compile(checkpointer=E.InMemorySaver())
        out = app.invoke({"subjects": ["cats", "dogs", "elephants"], "jokes": []}, _cfg())
        hist = [(s.values.get("jokes"), s.next, s.metadata["step"])
                for s in app.get_state_history(_cfg())]
        return sorted(out["jokes"]), out["best"], hist

    differential(scenario)


def test_a_cached_node_runs_once_for_equal_input_and_again_after_clearing(differential):
    def scenario(E):
        from langgraph.cache.memory import InMemoryCache

        runs = []

        class S(TypedDict):
            x: int
            y: int

        def slow(s):
            runs.append(s["x"])
            return {"y": s["x"] * 10}

        g = E.StateGraph(S)
        g.add_node("slow", slow, cache_policy=E.CachePolicy())
        g.add_edge(E.START, "slow")
        cache = InMemoryCache()
        app = g.compile(cache=cache)
        a = collect(lambda: app.stream({"x": 1}, stream_mode="updates"))
        b = collect(lambda: app.stream({"x": 1}, stream_mode="updates"))
        c = app.invoke({"x": 2})
        app.clear_cache()
        d = app.invoke({"x": 1})
        return a, b, c, d, runs

    differential(scenario)


def test_review_loop_edits_the_state_as_a_node_and_resumes(differential):
    def scenario(E):
        class S(TypedDict):
            text: str
            notes: Annotated[list, operator.add]

        g = E.StateGraph(S)
        g.add_node("draft", lambda s: {"text": s["text"].upper(), "notes": ["drafted"]})
        g.add_node("publish", lambda s: {"notes": [f"published {s['text']}"]})
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "publish")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["publish"])
        cfg = _cfg()
        first = app.invoke({"text": "hello", "notes": []}, cfg)
        before = _snap(app.get_state(cfg))
        new_cfg = app.update_state(cfg, {"text": "HELLO, EDITED", "notes": ["edited"]},
                                   as_node="draft")
        after_edit = _snap(app.get_state(cfg))
        resumed = app.invoke(None, cfg)
        # fork from the checkpoint before the edit and publish the unedited draft
        hist = list(app.get_state_history(cfg))
        pre_edit = next(s for s in hist if s.next == ("publish",)
                        and s.values["text"] == "HELLO")
        forked = app.invoke(None, pre_edit.config)
        bad = attempt(lambda: app.update_state(cfg, {"text": "x"}, as_node="nope"))
        return (first, before, sorted(new_cfg["configurable"]), after_edit, resumed, forked,
                bad, [_snap(s) for s in app.get_state_history(cfg)])

    differential(scenario, exc="extends")

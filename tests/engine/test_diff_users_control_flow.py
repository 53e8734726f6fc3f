"""Control flow as users write it in multi-agent graphs: Command and Send combined.

Routers that return Command with goto lists mixing names and Sends, Send workers that
route on with Command, Send chains that recurse, human-in-the-loop routing with Command,
Command.PARENT three levels up, conditional entry points fanning out, add_sequence with
routing nodes, a network of agents over a shared messages state, and the runtime effect
(none) of Command[Literal[...]] / destinations= next to what get_graph draws.
"""

import dataclasses
import operator
import threading
import time
from typing import Annotated, Literal

import pydantic
from langchain_core.messages import AIMessage, HumanMessage
from typing_extensions import NotRequired, TypedDict

from _diff import acapture, acollect, attempt, capture, collect, steps_as_multisets


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def _edges(app):
    return sorted((e.source, e.target, e.conditional, e.data) for e in app.get_graph().edges)


# --- goto shapes ---------------------------------------------------------------------------


def test_goto_list_mixing_node_names_and_sends_runs_all_in_one_step(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            item: NotRequired[str]

        def router(s):
            return E.Command(
                update={"log": ["router"]},
                goto=["review", E.Send("work", {"item": "x"}), E.Send("work", {"item": "y"})],
            )

        g = E.StateGraph(St)
        g.add_node("router", router)
        g.add_node("work", lambda s: {"log": [f"work:{s['item']}"]})
        g.add_node("review", lambda s: {"log": ["review"]})
        g.add_edge(E.START, "router")
        app = g.compile()
        # the three tasks of step 2 run in a thread pool: compare their updates as a set
        return app.invoke({"log": []}), sorted(map(repr, app.stream({"log": []}, stream_mode="updates")))

    differential(scenario)


def test_command_goto_send_to_end_is_dropped(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto=[E.Send(E.END, {"log": ["x"]})]))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_send_to_end_from_a_conditional_edge_raises(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: [E.Send(E.END, {"log": ["x"]})])
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_goto_start_from_a_node_does_not_restart_the_graph(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto=E.START, update={"log": ["a"]}))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}, {"recursion_limit": 5}))

    differential(scenario)


def test_goto_with_an_invalid_type_raises(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto=123))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    # lgnb keeps LangGraph's TypeError text and adds what goto takes
    differential(scenario, exc="extends")


def test_empty_goto_list_with_no_edges_ends_the_run(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto=[], update={"log": ["a"]}))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates"))

    differential(scenario, expect=({"log": ["a"]}, [{"a": {"log": ["a"]}}]))


def test_goto_outside_the_literal_hint_still_runs(differential):
    # Command[Literal[...]] only draws edges; the runtime does not validate goto against it
    def scenario(E):
        def router(s) -> E.Command[Literal["b"]]:
            return E.Command(goto="c", update={"log": ["router"]})

        g = E.StateGraph(Log)
        g.add_node("router", router)
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "router")
        app = g.compile()
        return app.invoke({"log": []}), _edges(app)

    differential(scenario)


def test_goto_outside_destinations_still_runs_and_drawing_uses_destinations(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("router", lambda s: E.Command(goto=["c", "b"]), destinations=("b",))
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "router")
        app = g.compile()
        return app.invoke({"log": []}), _edges(app)

    differential(scenario)


def test_node_returning_a_bare_send_schedules_it(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Send("b", {"log": ["x"]}))
        g.add_node("b", lambda s: {"log": [f"b saw {s['log']}"]})
        g.add_edge(E.START, "a")
        app = g.compile()
        return capture(lambda: app.invoke({"log": []})), collect(lambda: app.stream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_router_function_returning_a_command_routes_nowhere(differential):
    # path functions return names/Sends; a Command from one is not a destination
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: E.Command(goto="b"))
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_command_with_a_graph_name_other_than_parent_acts_locally(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(graph="elsewhere", goto="b"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


# --- Command with edges of the same node ------------------------------------------------------


def test_command_goto_with_a_conditional_edge_returning_sends(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            n: NotRequired[int]

        g = E.StateGraph(St)
        g.add_node("a", lambda s: E.Command(goto="b", update={"log": ["a"]}))
        g.add_node("b", _logger("b"))
        g.add_node("w", lambda s: {"log": [f"w{s['n']}"]})
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: [E.Send("w", {"n": i}) for i in range(2)], ["w"])
        app = g.compile()
        return app.invoke({"log": []}), _edges(app)

    differential(scenario)


def test_conditional_edge_router_sees_the_command_update_of_its_node(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            mode: NotRequired[str]

        g = E.StateGraph(St)
        g.add_node("a", lambda s: E.Command(update={"mode": "fast"}))
        g.add_node("fast", _logger("fast"))
        g.add_node("slow", _logger("slow"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: s.get("mode", "slow"))
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["fast"], "mode": "fast"})


def test_list_of_commands_with_gotos_and_a_static_edge(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: [E.Command(goto="b", update={"log": ["a1"]}),
                                   E.Command(goto=[E.Send("c", {"log": ["payload"]})], update={"log": ["a2"]})])
        g.add_node("b", _logger("b"))
        g.add_node("c", lambda s: {"log": [f"c got {s['log']}"]})
        g.add_node("d", _logger("d"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "d")
        return g.compile().invoke({"log": []})

    differential(scenario)


# --- Send targets and payloads -----------------------------------------------------------------


def test_send_worker_returns_command_goto_to_a_next_node(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            item: NotRequired[int]

        def worker(s):
            nxt = "even" if s["item"] % 2 == 0 else "odd"
            return E.Command(goto=nxt, update={"log": [f"w{s['item']}"]})

        g = E.StateGraph(St)
        g.add_node("worker", worker)
        g.add_node("even", _logger("even"))
        g.add_node("odd", _logger("odd"))
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i}) for i in range(3)])
        app = g.compile()
        # parallel sync tasks report in completion order: compare the updates as a set
        return app.invoke({"log": []}), sorted(map(repr, app.stream({"log": []}, stream_mode="updates")))

    differential(scenario)


def test_send_worker_returns_command_goto_send_chains_payloads(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        def stage1(s):
            return E.Command(goto=E.Send("stage2", {"v": s["v"] * 10}), update={"log": [f"s1:{s['v']}"]})

        g = E.StateGraph(St)
        g.add_node("stage1", stage1)
        g.add_node("stage2", lambda s: {"log": [f"s2:{s['v']}"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("stage1", {"v": v}) for v in (1, 2)])
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["s1:1", "s1:2", "s2:10", "s2:20"]})


def test_node_that_sends_to_itself_until_a_condition(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        def countdown(s):
            n = s["n"]
            if n == 0:
                return E.Command(goto="done", update={"log": ["zero"]})
            return E.Command(goto=E.Send("countdown", {"n": n - 1}), update={"log": [f"n{n}"]})

        g = E.StateGraph(St)
        g.add_node("countdown", countdown)
        g.add_node("done", _logger("done"))
        g.add_conditional_edges(E.START, lambda s: E.Send("countdown", {"n": 3}))
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_self_send_chain_hits_the_recursion_limit(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("loop", lambda s: E.Command(goto=E.Send("loop", {"log": []}), update={"log": ["x"]}))
        g.add_conditional_edges(E.START, lambda s: E.Send("loop", {}))
        try:
            g.compile().invoke({"log": []}, {"recursion_limit": 4})
        except Exception as e:
            return type(e).__name__, str(e).splitlines()[0], isinstance(e, E.errors.GraphRecursionError)
        return "no error"

    differential(scenario)


def test_send_dataclass_payload_to_a_node_of_a_dataclass_state_graph(differential):
    def scenario(E):
        @dataclasses.dataclass
        class St:
            items: list
            results: Annotated[list, operator.add] = dataclasses.field(default_factory=list)

        seen = []

        def worker(s):
            seen.append((type(s).__name__, s.items))
            return {"results": [len(s.items)]}

        g = E.StateGraph(St)
        g.add_node("worker", worker)
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", St(items=s.items[:i])) for i in (1, 2)])
        # the two workers run in parallel (threads on LangGraph): which starts first varies
        return g.compile().invoke(St(items=["a", "b"])), sorted(seen)

    differential(scenario)


def test_send_pydantic_payload_to_a_node_with_a_typed_dict_state(differential):
    def scenario(E):
        class Job(pydantic.BaseModel):
            name: str
            size: int = 1

        class St(TypedDict):
            log: Annotated[list, operator.add]

        seen = []

        def worker(job):
            seen.append(type(job).__name__)
            return {"log": [f"{job.name}:{job.size}"]}

        g = E.StateGraph(St)
        g.add_node("worker", worker)
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", Job(name="a")), E.Send("worker", Job(name="b", size=3))])
        return g.compile().invoke({"log": []}), seen

    differential(scenario)


def test_send_to_a_subgraph_node_with_its_own_input_schema(differential):
    def scenario(E):
        class Parent(TypedDict):
            docs: list
            summaries: Annotated[list, operator.add]

        class Sub(TypedDict):
            doc: str
            summaries: Annotated[list, operator.add]
            tmp: NotRequired[str]

        sub = E.StateGraph(Sub)
        sub.add_node("clean", lambda s: {"tmp": s["doc"].strip()})
        sub.add_node("summ", lambda s: {"summaries": [s["tmp"].upper()]})
        sub.add_edge(E.START, "clean")
        sub.add_edge("clean", "summ")

        g = E.StateGraph(Parent)
        g.add_node("summarize", sub.compile())
        g.add_conditional_edges(E.START, lambda s: [E.Send("summarize", {"doc": d}) for d in s["docs"]])
        app = g.compile()
        return app.invoke({"docs": [" a ", "b "], "summaries": []})

    differential(scenario, expect={"docs": [" a ", "b "], "summaries": ["A", "B"]})


def test_send_with_empty_list_from_a_node_then_a_static_join_still_runs(differential):
    def scenario(E):
        class St(TypedDict):
            items: list
            out: Annotated[list, operator.add]

        g = E.StateGraph(St)
        g.add_node("plan", lambda s: {"out": ["plan"]})
        g.add_node("work", lambda s: {"out": [s["x"]]})
        g.add_node("join", lambda s: {"out": [f"join saw {len(s['out'])}"]})
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", lambda s: [E.Send("work", {"x": x}) for x in s["items"]], ["work"])
        g.add_edge("work", "join")
        g.add_edge("plan", "join")
        app = g.compile()
        return app.invoke({"items": [], "out": []}), app.invoke({"items": ["p"], "out": []})

    differential(scenario)


def test_send_with_empty_list_into_a_deferred_join(differential):
    def scenario(E):
        class St(TypedDict):
            items: list
            out: Annotated[list, operator.add]

        g = E.StateGraph(St)
        g.add_node("work", lambda s: {"out": [s["x"]]})
        g.add_node("join", lambda s: {"out": [f"join saw {len(s['out'])}"]}, defer=True)
        g.add_conditional_edges(E.START, lambda s: [E.Send("work", {"x": x}) for x in s["items"]], ["work"])
        g.add_edge("work", "join")
        app = g.compile()
        return app.invoke({"items": [], "out": []}), app.invoke({"items": [1, 2], "out": []})

    differential(scenario)


def test_dynamic_map_reduce_with_command_sends_and_a_deferred_reducer(differential):
    def scenario(E):
        class St(TypedDict):
            topics: list
            drafts: Annotated[list, operator.add]
            final: NotRequired[str]

        def orchestrate(s):
            return E.Command(goto=[E.Send("draft", {"topic": t, "depth": i}) for i, t in enumerate(s["topics"])])

        def draft(s):
            if s["depth"] > 0:
                return E.Command(goto=E.Send("draft", {"topic": s["topic"] + "'", "depth": s["depth"] - 1}))
            return E.Command(goto="reduce", update={"drafts": [s["topic"]]})

        g = E.StateGraph(St)
        g.add_node("orchestrate", orchestrate)
        g.add_node("draft", draft)
        g.add_node("reduce", lambda s: {"final": ",".join(sorted(s["drafts"]))}, defer=True)
        g.add_edge(E.START, "orchestrate")
        app = g.compile()
        chunks = list(app.stream({"topics": ["a", "b", "c"], "drafts": []}, stream_mode=["values", "updates"]))
        # parallel sync tasks report in completion order: compare each step's updates as a set
        steps = steps_as_multisets(chunks, lambda c: c[0] == "values")
        return app.invoke({"topics": ["a", "b", "c"], "drafts": []}), steps

    differential(scenario)


def test_conditional_entry_point_returning_sends(differential):
    def scenario(E):
        class St(TypedDict):
            queries: list
            hits: Annotated[list, operator.add]

        g = E.StateGraph(St)
        g.add_node("search", lambda s: {"hits": [f"hit:{s['q']}"]})
        g.add_node("rank", lambda s: {"hits": ["ranked"]})
        g.set_conditional_entry_point(lambda s: [E.Send("search", {"q": q}) for q in s["queries"]], ["search"])
        g.add_edge("search", "rank")
        app = g.compile()
        return app.invoke({"queries": ["x", "y"], "hits": []}), _edges(app)

    differential(scenario)


def test_conditional_entry_point_with_a_path_map_dict(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("left", _logger("left"))
        g.add_node("right", _logger("right"))
        g.set_conditional_entry_point(lambda s: "R" if s["log"] else "L", {"L": "left", "R": "right"})
        app = g.compile()
        return app.invoke({"log": []}), app.invoke({"log": ["x"]}), _edges(app)

    differential(scenario)


# --- add_sequence with routing -----------------------------------------------------------------


def test_add_sequence_with_a_command_node_in_the_middle_runs_both_paths(differential):
    def scenario(E):
        def check(s):
            return E.Command(goto="escalate", update={"log": ["check"]})

        g = E.StateGraph(Log)
        g.add_sequence([("intake", _logger("intake")), ("check", check), ("reply", _logger("reply"))])
        g.add_node("escalate", _logger("escalate"))
        g.add_edge(E.START, "intake")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_add_sequence_of_named_functions_ending_in_a_send_router(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        def load(s):
            return {"log": ["load"]}

        def split(s):
            return {"log": ["split"]}

        g = E.StateGraph(St)
        g.add_sequence([load, split])
        g.add_node("chunk", lambda s: {"log": [f"chunk{s['i']}"]})
        g.add_edge(E.START, "load")
        g.add_conditional_edges("split", lambda s: [E.Send("chunk", {"i": i}) for i in range(3)], ["chunk"])
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_add_sequence_with_a_duplicate_node_name_raises(differential):
    def scenario(E):
        def step(s):
            return {"log": ["step"]}

        g = E.StateGraph(Log)
        return attempt(lambda: g.add_sequence([step, step]))

    differential(scenario)


# --- human in the loop routing with Command --------------------------------------------------


def _review_graph(E):
    class St(TypedDict):
        log: Annotated[list, operator.add]
        draft: NotRequired[str]

    def write(s):
        return {"draft": "v1", "log": ["write"]}

    def review(s) -> E.Command[Literal["publish", "write"]]:
        answer = E.interrupt({"draft": s["draft"], "question": "approve?"})
        if answer == "yes":
            return E.Command(goto="publish", update={"log": ["approved"]})
        return E.Command(goto="write", update={"log": [f"rejected:{answer}"]})

    g = E.StateGraph(St)
    g.add_node("write", write)
    g.add_node("review", review)
    g.add_node("publish", _logger("publish"))
    g.add_edge(E.START, "write")
    g.add_edge("write", "review")
    return g.compile(checkpointer=E.InMemorySaver())


def test_review_node_interrupts_then_routes_with_command_on_resume(differential):
    def scenario(E):
        app = _review_graph(E)
        cfg = {"configurable": {"thread_id": "t"}}
        first = app.invoke({"log": []}, cfg)
        second = app.invoke(E.Command(resume="no, shorter"), cfg)
        third = app.invoke(E.Command(resume="yes"), cfg)
        state = app.get_state(cfg)
        return first, second, third, state.next, state.values

    differential(scenario)


def test_review_resume_stream_updates_show_the_command_update(differential):
    def scenario(E):
        app = _review_graph(E)
        cfg = {"configurable": {"thread_id": "t"}}
        a = list(app.stream({"log": []}, cfg, stream_mode="updates"))
        b = list(app.stream(E.Command(resume="yes"), cfg, stream_mode="updates"))
        return a, b

    differential(scenario)


def test_command_goto_to_a_node_with_interrupt_before_pauses_and_resumes(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto="b", update={"log": ["a"]}))
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["b"])
        cfg = {"configurable": {"thread_id": "t"}}
        first = app.invoke({"log": []}, cfg)
        snap = app.get_state(cfg)
        second = app.invoke(None, cfg)
        return first, snap.next, [t.name for t in snap.tasks], second

    differential(scenario)


def test_send_target_with_interrupt_before_keeps_payloads_across_resume(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        g = E.StateGraph(St)
        g.add_node("w", lambda s: {"log": [f"w:{s['p']}"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("w", {"p": p}) for p in ("x", "y")])
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["w"])
        cfg = {"configurable": {"thread_id": "t"}}
        first = app.invoke({"log": []}, cfg)
        snap = app.get_state(cfg)
        second = app.invoke(None, cfg)
        return first, snap.next, [t.name for t in snap.tasks], second

    differential(scenario)


def test_update_state_as_a_command_node_then_resume_follows_its_goto(differential):
    # update_state(as_node=...) writes the node's edges; a Command node has none but its goto
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto="b", update={"log": ["a"]}))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["a"])
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": ["manual"]}, as_node="a")
        snap = app.get_state(cfg)
        return snap.next, app.invoke(None, cfg)

    differential(scenario)


def test_update_state_with_a_command_value_routes_the_next_step(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_after=["a"])
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": []}, cfg)
        r = capture(lambda: app.update_state(cfg, E.Command(goto="c", update={"log": ["cmd"]}), as_node="a"))
        snap = app.get_state(cfg)
        return r is not None, snap.next, snap.values, capture(lambda: app.invoke(None, cfg))

    differential(scenario)


def test_command_with_goto_as_graph_input_with_checkpointer_on_a_new_thread(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        return (
            capture(lambda: app.invoke(E.Command(update={"log": ["u"]}, goto="b"), cfg)),
            capture(lambda: app.get_state(cfg).values),
        )

    differential(scenario)


def test_command_with_goto_as_graph_input_on_a_finished_thread(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        first = app.invoke({"log": []}, cfg)
        second = capture(lambda: app.invoke(E.Command(goto="b", update={"log": ["again"]}), cfg))
        # a and b run in parallel (thread pool): compare their updates as a set
        third = sorted(map(repr, app.stream(E.Command(goto=["a", "b"]), cfg, stream_mode="updates")))
        return first, second, third, app.get_state(cfg).values

    differential(scenario)


# --- Command.PARENT --------------------------------------------------------------------------


def test_command_parent_from_three_levels_deep_routes_in_the_middle_graph(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        leaf = E.StateGraph(St)
        leaf.add_node("leaf_node", lambda s: E.Command(graph=E.Command.PARENT, goto="l2_after", update={"log": ["leaf"]}))
        leaf.add_edge(E.START, "leaf_node")

        l2 = E.StateGraph(St)
        l2.add_node("leaf", leaf.compile())
        l2.add_node("l2_after", lambda s: E.Command(graph=E.Command.PARENT, goto="l1_after", update={"log": ["l2_after"]}))
        l2.add_edge(E.START, "leaf")

        l1 = E.StateGraph(St)
        l1.add_node("l2", l2.compile())
        l1.add_node("l1_after", _logger("l1_after"))
        l1.add_edge(E.START, "l2")

        top = E.StateGraph(St)
        top.add_node("l1", l1.compile())
        top.add_node("top_after", _logger("top_after"))
        top.add_edge(E.START, "l1")
        top.add_edge("l1", "top_after")
        app = top.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates", subgraphs=True))

    differential(scenario)


def test_command_parent_from_a_subgraph_called_inside_a_send_worker(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        inner = E.StateGraph(St)
        inner.add_node("decide", lambda s: E.Command(graph=E.Command.PARENT, goto="collect", update={"log": ["inner"]}))
        inner.add_edge(E.START, "decide")
        inner_app = inner.compile()

        def worker(s):
            return inner_app.invoke({"log": [f"p{s['p']}"]})

        g = E.StateGraph(St)
        g.add_node("worker", worker)
        g.add_node("collect", _logger("collect"))
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"p": 1})])
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_command_parent_goto_a_parent_node_without_destinations_declared(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        sub = E.StateGraph(St)
        sub.add_node("s", lambda s: E.Command(graph=E.Command.PARENT, goto=["x", "y"], update={"log": ["s"]}))
        sub.add_edge(E.START, "s")
        g = E.StateGraph(St)
        g.add_node("sub", sub.compile())
        g.add_node("x", _logger("x"))
        g.add_node("y", _logger("y"))
        g.add_edge(E.START, "sub")
        app = g.compile()
        return app.invoke({"log": []}), _edges(app)

    differential(scenario)


def test_command_parent_goto_an_unknown_parent_node_keeps_the_update(differential):
    def scenario(E):
        sub = E.StateGraph(Log)
        sub.add_node("s", lambda s: E.Command(graph=E.Command.PARENT, goto="nowhere", update={"log": ["s"]}))
        sub.add_edge(E.START, "s")
        g = E.StateGraph(Log)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_command_parent_raised_by_a_subgraph_in_a_node_with_a_static_edge(differential):
    # the parent node failed with ParentCommand: its static edge is not followed
    def scenario(E):
        sub = E.StateGraph(Log)
        sub.add_node("s", lambda s: E.Command(graph=E.Command.PARENT, goto="b", update={"log": ["s"]}))
        sub.add_edge(E.START, "s")
        g = E.StateGraph(Log)
        g.add_node("sub", sub.compile())
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "c")
        return g.compile().invoke({"log": []})

    differential(scenario)


# --- network of agents --------------------------------------------------------------------------


def _network(E, is_async=False):
    # every agent can hand off to every other agent, state is a shared messages list
    plan = {"researcher": "coder", "coder": "reviewer", "reviewer": "researcher"}
    turns = {"n": 0}

    def make(name):
        def agent(state: E.MessagesState) -> E.Command[Literal["researcher", "coder", "reviewer", "__end__"]]:
            turns["n"] += 1
            msg = AIMessage(content=f"{name} turn {turns['n']}", name=name, id=f"m{turns['n']}")
            if turns["n"] >= 5:
                return E.Command(goto=E.END, update={"messages": [msg]})
            return E.Command(goto=plan[name], update={"messages": [msg]})

        async def aagent(state: E.MessagesState) -> E.Command[Literal["researcher", "coder", "reviewer", "__end__"]]:
            return agent(state)

        return aagent if is_async else agent

    g = E.StateGraph(E.MessagesState)
    for name in plan:
        g.add_node(name, make(name))
    g.add_edge(E.START, "researcher")
    return g.compile()


def test_network_of_agents_hands_off_with_command_over_shared_messages(differential):
    def scenario(E):
        app = _network(E)
        out = app.invoke({"messages": [HumanMessage(content="build it", id="h")]})
        return [(m.type, m.name, m.content) for m in out["messages"]], _edges(app)

    differential(scenario)


def test_network_of_agents_stream_updates(differential):
    def scenario(E):
        app = _network(E)
        return list(app.stream({"messages": [HumanMessage(content="go", id="h")]}, stream_mode="updates"))

    differential(scenario)


def test_async_network_of_agents_astream_updates(differential):
    async def scenario(E):
        app = _network(E, is_async=True)
        return await acollect(lambda: app.astream({"messages": [HumanMessage(content="go", id="h")]},
                                                  stream_mode="updates"))

    differential(scenario)


def test_supervisor_routes_with_command_and_workers_return_with_static_edges(differential):
    def scenario(E):
        order = iter(["math", "search", "FINISH"])

        def supervisor(state: E.MessagesState) -> E.Command[Literal["math", "search", "__end__"]]:
            nxt = next(order)
            return E.Command(goto=E.END if nxt == "FINISH" else nxt)

        def worker(name):
            def fn(state: E.MessagesState):
                return {"messages": [AIMessage(content=f"{name} done after {len(state['messages'])}", name=name, id=name)]}
            return fn

        g = E.StateGraph(E.MessagesState)
        g.add_node("supervisor", supervisor)
        g.add_node("math", worker("math"))
        g.add_node("search", worker("search"))
        g.add_edge(E.START, "supervisor")
        g.add_edge("math", "supervisor")
        g.add_edge("search", "supervisor")
        app = g.compile()
        out = list(app.stream({"messages": [HumanMessage(content="q", id="h")]}, stream_mode="updates"))
        return out, _edges(app)

    differential(scenario)


# --- async twins ------------------------------------------------------------------------------


def test_async_goto_list_mixing_names_and_sends(differential):
    async def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            item: NotRequired[str]

        async def router(s):
            return E.Command(update={"log": ["router"]}, goto=["review", E.Send("work", {"item": "x"})])

        async def work(s):
            return {"log": [f"work:{s['item']}"]}

        async def review(s):
            return {"log": ["review"]}

        g = E.StateGraph(St)
        g.add_node("router", router)
        g.add_node("work", work)
        g.add_node("review", review)
        g.add_edge(E.START, "router")
        return await g.compile().ainvoke({"log": []})

    differential(scenario)


def test_async_send_worker_recursing_with_command_send(differential):
    async def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        async def countdown(s):
            n = s["n"]
            if n == 0:
                return E.Command(goto="done", update={"log": [f"zero:{s['tag']}"]})
            return E.Command(goto=E.Send("countdown", {"n": n - 1, "tag": s["tag"]}), update={"log": [f"{s['tag']}{n}"]})

        async def done(s):
            return {"log": ["done"]}

        g = E.StateGraph(St)
        g.add_node("countdown", countdown)
        g.add_node("done", done)
        g.add_conditional_edges(E.START, lambda s: [E.Send("countdown", {"n": 2, "tag": t}) for t in "ab"])
        app = g.compile()
        return await app.ainvoke({"log": []}), await acollect(lambda: app.astream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_async_command_parent_from_three_levels_deep(differential):
    async def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        async def jump(s):
            return E.Command(graph=E.Command.PARENT, goto="mid_after", update={"log": ["jump"]})

        leaf = E.StateGraph(St)
        leaf.add_node("jump", jump)
        leaf.add_edge(E.START, "jump")
        mid = E.StateGraph(St)
        mid.add_node("leaf", leaf.compile())
        mid.add_node("mid_after", _logger("mid_after"))
        mid.add_edge(E.START, "leaf")
        top = E.StateGraph(St)
        top.add_node("mid", mid.compile())
        top.add_node("top_after", _logger("top_after"))
        top.add_edge(E.START, "mid")
        top.add_edge("mid", "top_after")
        outer = E.StateGraph(St)
        outer.add_node("top", top.compile())
        outer.add_edge(E.START, "top")
        app = outer.compile()
        return await app.ainvoke({"log": []}), await acollect(
            lambda: app.astream({"log": []}, stream_mode="updates", subgraphs=True))

    differential(scenario)


def test_async_review_interrupt_routes_with_command(differential):
    async def scenario(E):
        app = _review_graph(E)
        cfg = {"configurable": {"thread_id": "t"}}
        a = await app.ainvoke({"log": []}, cfg)
        b = await acollect(lambda: app.astream(E.Command(resume="redo"), cfg, stream_mode="updates"))
        c = await app.ainvoke(E.Command(resume="yes"), cfg)
        return a, b, c

    differential(scenario)


def test_async_command_parent_without_parent_graph_raises(differential):
    async def scenario(E):
        async def a(s):
            return E.Command(graph=E.Command.PARENT, goto="b")

        g = E.StateGraph(Log)
        g.add_node("a", a)
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return await acapture(lambda: g.compile().ainvoke({"log": []}))

    differential(scenario)


# --- more combinations users hit --------------------------------------------------------------


def test_node_returning_a_list_of_sends_is_rejected(differential):
    # only a bare Send (or Commands) schedules; a list of Sends is not a state update
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: [E.Send("b", {"log": ["x"]})])
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario, exc="extends")


def test_async_node_returning_a_bare_send_schedules_it(differential):
    async def scenario(E):
        async def a(s):
            return E.Send("b", {"log": ["x"]})

        g = E.StateGraph(Log)
        g.add_node("a", a)
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return await acapture(lambda: g.compile().ainvoke({"log": []}))

    differential(scenario)


def test_goto_a_name_and_end_runs_the_name(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto=["b", E.END], update={"log": ["a"]}))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return g.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["a", "b"]})


def test_command_goto_into_a_multi_source_join_triggers_it_early(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto="c", update={"log": ["a"]}))
        g.add_node("b", _logger("b"))
        g.add_node("b2", _logger("b2"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge("b", "b2")
        g.add_edge(["a", "b2"], "c")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_self_loop_with_command_stops_on_remaining_steps(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            remaining_steps: E.RemainingSteps

        def loop(s):
            if s["remaining_steps"] <= 2:
                return E.Command(goto=E.END, update={"log": [f"stop{s['remaining_steps']}"]})
            return E.Command(goto="loop", update={"log": [s["remaining_steps"]]})

        g = E.StateGraph(St)
        g.add_node("loop", loop)
        g.add_edge(E.START, "loop")
        return g.compile().invoke({"log": []}, {"recursion_limit": 6})

    differential(scenario, expect={"log": [5, 4, 3, "stop2"]})


def test_human_picks_the_fan_out_and_the_node_sends_to_each_choice(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        def pick(s):
            chosen = E.interrupt({"options": ["x", "y", "z"]})
            return E.Command(goto=[E.Send("work", {"opt": o}) for o in chosen], update={"log": ["picked"]})

        g = E.StateGraph(St)
        g.add_node("pick", pick)
        g.add_node("work", lambda s: {"log": [f"work:{s['opt']}"]})
        g.add_node("after", _logger("after"))
        g.add_edge(E.START, "pick")
        g.add_edge("work", "after")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        return app.invoke({"log": []}, cfg), app.invoke(E.Command(resume=["z", "x"]), cfg)

    differential(scenario)


def test_send_workers_interrupt_then_route_with_command_resumed_one_by_one(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        def w(s):
            ans = E.interrupt(f"ok {s['p']}?")
            return E.Command(goto="fin", update={"log": [f"{s['p']}={ans}"]})

        g = E.StateGraph(St)
        g.add_node("w", w)
        g.add_node("fin", _logger("fin"))
        g.add_conditional_edges(E.START, lambda s: [E.Send("w", {"p": p}) for p in ("x", "y")])
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        r1 = app.invoke({"log": []}, cfg)
        # LangGraph lists the two workers' interrupts in the order their threads finished
        # (y first on a loaded machine): compared as a set, by value
        r1["__interrupt__"] = sorted(r1["__interrupt__"], key=lambda i: i.value)
        ids = {i.value: i.id for i in app.get_state(cfg).interrupts}
        r2 = app.invoke(E.Command(resume={ids["ok x?"]: "yes"}), cfg)
        r3 = app.invoke(E.Command(resume={ids["ok y?"]: "no"}), cfg)
        return r1, r2, r3, app.get_state(cfg).next

    differential(scenario)


def test_state_history_of_a_command_routed_run(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto="b", update={"log": ["a"]}))
        g.add_node("b", lambda s: E.Command(goto=[E.Send("c", {"log": ["p"]})], update={"log": ["b"]}))
        g.add_node("c", lambda s: {"log": [f"c{s['log']}"]})
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": []}, cfg)
        return [(h.next, h.values, h.metadata.get("step"), [(t.name, t.path, t.result) for t in h.tasks])
                for h in app.get_state_history(cfg)]

    differential(scenario)


def test_update_state_on_a_checkpoint_before_a_goto_target_loses_the_goto(differential):
    # a fork written "as" the last node (a Command node without edges) schedules nothing
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto="b", update={"log": ["a"]}))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": []}, cfg)
        before_b = next(h for h in app.get_state_history(cfg) if h.next == ("b",))
        forked = app.update_state(before_b.config, {"log": ["fork"]})
        replay = app.invoke(None, before_b.config)
        return app.get_state(forked).next, app.invoke(None, forked), replay

    differential(scenario)


def test_command_goto_a_subgraph_node(differential):
    def scenario(E):
        sub = E.StateGraph(Log)
        sub.add_node("x", _logger("x"))
        sub.add_edge(E.START, "x")
        g = E.StateGraph(Log)
        g.add_node("router", lambda s: E.Command(goto="sub", update={"log": ["r"]}))
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "router")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates", subgraphs=True))

    differential(scenario)


def test_local_and_parent_commands_returned_together_from_a_subgraph_node(differential):
    # the PARENT command escapes the subgraph: the sibling local Command is not applied
    def scenario(E):
        sub = E.StateGraph(Log)
        sub.add_node("s", lambda s: [E.Command(update={"log": ["local"]}, goto="s2"),
                                     E.Command(graph=E.Command.PARENT, goto="b", update={"log": ["up"]})])
        sub.add_node("s2", _logger("s2"))
        sub.add_edge(E.START, "s")
        g = E.StateGraph(Log)
        g.add_node("sub", sub.compile())
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "sub")
        app = g.compile()
        return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates", subgraphs=True))

    differential(scenario)


def test_command_parent_from_a_subgraph_node_with_a_retry_policy_is_not_retried(differential):
    def scenario(E):
        calls = []

        def jump(s):
            calls.append("jump")
            return E.Command(graph=E.Command.PARENT, goto="b", update={"log": ["jump"]})

        sub = E.StateGraph(Log)
        sub.add_node("jump", jump)
        sub.add_edge(E.START, "jump")
        g = E.StateGraph(Log)
        policy = E.RetryPolicy(max_attempts=3, initial_interval=0.001, retry_on=Exception)
        g.add_node("sub", sub.compile(), retry_policy=policy)
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "sub")
        return g.compile().invoke({"log": []}), calls

    differential(scenario, expect=({"log": ["jump", "b"]}, ["jump"]))


def test_called_subgraph_interrupts_then_routes_the_parent_with_command_parent(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        def asker(s):
            ans = E.interrupt("where?")
            return E.Command(graph=E.Command.PARENT, goto=ans, update={"log": [f"sub->{ans}"]})

        sub = E.StateGraph(St)
        sub.add_node("asker", asker)
        sub.add_edge(E.START, "asker")
        subapp = sub.compile()

        g = E.StateGraph(St)
        g.add_node("caller", lambda s: subapp.invoke(s), destinations=("x", "y"))
        g.add_node("x", _logger("x"))
        g.add_node("y", _logger("y"))
        g.add_edge(E.START, "caller")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        return app.invoke({"log": []}, cfg), app.invoke(E.Command(resume="y"), cfg)

    differential(scenario)


def test_async_two_subgraphs_both_route_the_parent_with_command_parent(differential):
    async def scenario(E):
        import asyncio

        class St(TypedDict):
            log: Annotated[list, operator.add]

        async def j1(s):
            return E.Command(graph=E.Command.PARENT, goto="b", update={"log": ["j1"]})

        async def j2(s):
            await asyncio.sleep(0.01)
            return E.Command(graph=E.Command.PARENT, goto="c", update={"log": ["j2"]})

        s1 = E.StateGraph(St)
        s1.add_node("j", j1)
        s1.add_edge(E.START, "j")
        s2 = E.StateGraph(St)
        s2.add_node("j", j2)
        s2.add_edge(E.START, "j")
        g = E.StateGraph(St)
        g.add_node("s1", s1.compile())
        g.add_node("s2", s2.compile())
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "s1")
        g.add_edge(E.START, "s2")
        return await g.compile().ainvoke({"log": []})

    differential(scenario, expect={"log": ["j1", "j2", "b", "c"]})


def test_async_send_workers_route_into_a_deferred_join(differential):
    async def scenario(E):
        import asyncio

        class St(TypedDict):
            log: Annotated[list, operator.add]

        async def router(s):
            return E.Command(goto=[E.Send("w", {"i": i}) for i in range(3)])

        async def w(s):
            await asyncio.sleep(0.1 * (3 - s["i"]))  # 0.1 s apart: the order holds on a loaded machine
            return E.Command(goto="join", update={"log": [s["i"]]})

        async def join(s):
            return {"log": [f"join{len(s['log'])}"]}

        g = E.StateGraph(St)
        g.add_node("router", router)
        g.add_node("w", w)
        g.add_node("join", join, defer=True)
        g.add_edge(E.START, "router")
        app = g.compile()
        return await app.ainvoke({"log": []}), await acollect(lambda: app.astream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_send_worker_failure_keeps_sibling_results_in_the_checkpoint(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        done = {0: threading.Event(), 2: threading.Event()}

        def w(s):
            if s["i"] == 1:
                # after its siblings: one still running when it fails is cancelled, and
                # LangGraph saves a CancelledError for it or its result by thread timing
                for ev in done.values():
                    ev.wait(5)
                time.sleep(0.05)
                raise ValueError("bad item 1")
            done[s["i"]].set()
            return {"log": [s["i"]]}

        g = E.StateGraph(St)
        g.add_node("router", lambda s: E.Command(goto=[E.Send("w", {"i": i}) for i in range(3)]))
        g.add_node("w", w)
        g.add_edge(E.START, "router")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        r = capture(lambda: app.invoke({"log": []}, cfg))
        st = app.get_state(cfg)
        return r, st.next, sorted((t.name, t.error is not None, repr(t.result)) for t in st.tasks), st.values

    differential(scenario)


def test_command_goto_as_input_while_paused_before_a_goto_target(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: E.Command(goto="b"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["b"])
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": []}, cfg)
        r = app.invoke(E.Command(goto="a", update={"log": ["redo"]}), cfg)
        return r, app.get_state(cfg).next

    differential(scenario)


def test_router_returning_sends_and_end_with_a_path_map(differential):
    def scenario(E):
        g = E.StateGraph(Log)
        g.add_node("a", _logger("a"))
        g.add_node("w", lambda s: {"log": [f"w{s['log']}"]})
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: [E.Send("w", {"log": ["p"]}), E.END], ["w", E.END])
        app = g.compile()
        return app.invoke({"log": []}), _edges(app)

    differential(scenario)


_FUTURE_ANNOTATED_ROUTERS = '''
from __future__ import annotations
from typing import Literal, Union

def router(state) -> Command[Literal["b", "c"]]:
    return Command(goto="c", update={"log": ["router"]})

def union_router(state) -> Union[Command[Literal["b"]], Command[Literal["c"]]]:
    return Command(goto="c", update={"log": ["union_router"]})

def optional_router(state) -> Command[Literal["b", "__end__"]] | None:
    return None
'''


def test_command_hints_as_strings_under_future_annotations_draw_and_run(differential):
    # a module with `from __future__ import annotations` gives string return hints
    def scenario(E):
        ns = {"Command": E.Command}
        exec(_FUTURE_ANNOTATED_ROUTERS, ns)
        out = []
        for name in ("router", "union_router", "optional_router"):
            g = E.StateGraph(Log)
            g.add_node("r", ns[name])
            g.add_node("b", _logger("b"))
            g.add_node("c", _logger("c"))
            g.add_edge(E.START, "r")
            app = g.compile()
            out.append((name, _edges(app), app.invoke({"log": []})))
        return out

    differential(scenario)

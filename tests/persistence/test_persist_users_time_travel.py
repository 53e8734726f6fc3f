"""Time travel as notebook users and teachers do it: the whole StateSnapshot at every checkpoint
of graphs with loops, conditional edges, parallel branches and Send fan-out; replaying from a
checkpoint in the middle (what re-runs, what streams); replaying a checkpoint paused at an
interrupt; forks with update_state(past, values, as_node=...) and the history tree afterwards;
update_state with reducers, Overwrite, Command and as_node at branch points; history filters;
`checkpoints`/`tasks`/`debug` streams across parallel steps, errors and retries; stepping one
super-step at a time with interrupt_before/after="*"; async twins; the SQLite savers."""

import operator
import threading
from typing import Annotated

import pytest
from _diff import Engine, acollect, attempt, capture, collect, steps_as_multisets
from _savers import thread
from typing_extensions import TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    count: int
    note: str


# --- graph builders used by several tests --------------------------------------------------------


def _loop(E, calls=None, limit=3, **compile_kw):
    """START -> step -(count < limit)-> step ... -> finish."""
    calls = calls if calls is not None else []

    def step(s):
        calls.append(("step", s.get("count", 0)))
        return {"count": s.get("count", 0) + 1, "log": [f"step{s.get('count', 0)}"]}

    def finish(s):
        calls.append(("finish", s.get("count", 0)))
        return {"log": ["finish"]}

    def route(s):
        return "step" if s["count"] < limit else "finish"

    g = E.StateGraph(S)
    g.add_node("step", step)
    g.add_node("finish", finish)
    g.add_edge(E.START, "step")
    g.add_conditional_edges("step", route, ["step", "finish"])
    g.add_edge("finish", E.END)
    return g.compile(checkpointer=compile_kw.pop("checkpointer", None) or E.InMemorySaver(), **compile_kw)


def _diamond(E, calls=None, **compile_kw):
    """a -> (b1 -> b2, c) -> d: the join waits for both branches (b2 one step later than c)."""
    calls = calls if calls is not None else []

    def mk(n):
        def f(s):
            calls.append(n)
            return {"log": [n]}

        return f

    g = E.StateGraph(S)
    for n in ("a", "b1", "b2", "c", "d"):
        g.add_node(n, mk(n))
    g.add_edge(E.START, "a")
    g.add_edge("a", "b1")
    g.add_edge("a", "c")
    g.add_edge("b1", "b2")
    g.add_edge(["b2", "c"], "d")
    return g.compile(checkpointer=compile_kw.pop("checkpointer", None) or E.InMemorySaver(), **compile_kw)


class FanState(TypedDict, total=False):
    topics: list
    results: Annotated[list, operator.add]
    summary: str


def _fanout(E, calls=None, **compile_kw):
    """plan -> Send("work", topic) per topic -> summarize (map-reduce how-to)."""
    calls = calls if calls is not None else []

    def plan(s):
        calls.append("plan")
        return {"topics": ["cats", "dogs", "owls"]}

    def work(arg):
        calls.append(("work", arg["topic"]))
        return {"results": [arg["topic"].upper()]}

    def summarize(s):
        calls.append("summarize")
        return {"summary": "+".join(sorted(s["results"]))}

    g = E.StateGraph(FanState)
    g.add_node("plan", plan)
    g.add_node("work", work)
    g.add_node("summarize", summarize)
    g.add_edge(E.START, "plan")
    g.add_conditional_edges("plan", lambda s: [E.Send("work", {"topic": t}) for t in s["topics"]], ["work"])
    g.add_edge("work", "summarize")
    return g.compile(checkpointer=compile_kw.pop("checkpointer", None) or E.InMemorySaver(), **compile_kw)


class JokeState(TypedDict, total=False):
    topic: str
    joke: str


def _joke(E, calls=None, **compile_kw):
    """The time-travel tutorial: generate_topic -> write_joke (LLMs replaced by functions)."""
    calls = calls if calls is not None else []

    def generate_topic(s):
        calls.append("generate_topic")
        return {"topic": "socks"}

    def write_joke(s):
        calls.append(("write_joke", s["topic"]))
        return {"joke": f"Why did the {s['topic']} cross the road?"}

    g = E.StateGraph(JokeState)
    g.add_node("generate_topic", generate_topic)
    g.add_node("write_joke", write_joke)
    g.add_edge(E.START, "generate_topic")
    g.add_edge("generate_topic", "write_joke")
    g.add_edge("write_joke", E.END)
    return g.compile(checkpointer=compile_kw.pop("checkpointer", None) or E.InMemorySaver(), **compile_kw)


def _good_and_late(calls, name, fails, message, logs=None):
    """Two parallel nodes: `good` logs and finishes first; `name` waits for it, then raises
    ValueError(message) while fails(state), else logs logs(state) (default: its name)."""
    done = threading.Event()

    def good(s):
        calls.append("good")
        done.set()
        return {"log": ["good"]}

    def late(s):
        calls.append(name)
        done.wait(2)
        if fails(s):
            raise ValueError(message)
        return {"log": [logs(s) if logs else name]}

    return good, late


def _one_node_app(E, schema, name, node, **compile_kw):
    """START -> name: the one-node graph that wraps a node or subgraph, compiled with compile_kw."""
    g = E.StateGraph(schema)
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile(**compile_kw)


def _digest(app, cfg, **kw):
    return [(s.metadata["source"], s.metadata["step"], s.next, s.values) for s in app.get_state_history(cfg, **kw)]


def _tree(app, cfg):
    """The history as (source, step, next, values, index of the parent in this list)."""
    hist = list(app.get_state_history(cfg))
    index = {s.config["configurable"]["checkpoint_id"]: i for i, s in enumerate(hist)}
    return [(s.metadata["source"], s.metadata["step"], s.next, s.values,
             index.get((s.parent_config or {}).get("configurable", {}).get("checkpoint_id")))
            for s in hist]


def _at(app, cfg, pred):
    return next(s for s in app.get_state_history(cfg) if pred(s))


def _is_checkpoint_event(c):
    return isinstance(c, dict) and c.get("type") == "checkpoint"


# --- the whole StateSnapshot at each checkpoint ------------------------------------------------


def test_full_history_of_a_loop_with_a_conditional_edge(differential):
    def scenario(E):
        app, cfg = _loop(E), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        return list(app.get_state_history(cfg))

    ref = differential(scenario)
    assert len(ref) == 6


def test_full_history_of_a_send_fan_out(differential):
    def scenario(E):
        app, cfg = _fanout(E), thread()
        app.invoke({"topics": []}, cfg)
        return list(app.get_state_history(cfg))

    differential(scenario)


def test_full_history_of_branches_of_different_length_joined(differential):
    """durability="sync": with the default "async", LangGraph's saved checkpoint of step 2
    already holds the join barrier's later state (the set is shared, saved after step 3
    mutated it), so its snapshot lists a phantom `d` and replaying it never runs `d`."""

    def scenario(E):
        app, cfg = _diamond(E), thread()
        app.invoke({"log": []}, cfg, durability="sync")
        return list(app.get_state_history(cfg))

    differential(scenario)


def test_full_history_of_a_conditional_edge_to_two_nodes_at_once(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("classify", lambda s: {"note": "both"})
        g.add_node("math", lambda s: {"log": ["math"]})
        g.add_node("chat", lambda s: {"log": ["chat"]})
        g.add_edge(E.START, "classify")
        g.add_conditional_edges("classify", lambda s: ["math", "chat"] if s["note"] == "both" else "chat",
                                ["math", "chat"])
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        return list(app.get_state_history(cfg))

    ref = differential(scenario)
    assert ref[1][2] == ("math", "chat")


def test_snapshot_config_and_parent_config_shapes_and_created_at_matching_the_checkpoint(differential):
    def scenario(E):
        app, cfg = _joke(E), thread()
        app.invoke({}, cfg)
        out = []
        for s in app.get_state_history(cfg):
            tup = app.checkpointer.get_tuple(s.config)
            out.append((sorted(s.config["configurable"]), s.parent_config and sorted(s.parent_config["configurable"]),
                        s.created_at == tup.checkpoint["ts"], s.metadata, type(s.next).__name__,
                        type(s.tasks).__name__))
        return out

    differential(scenario)


# --- replay from a checkpoint in the middle ------------------------------------------------------


def test_replay_from_the_middle_of_a_loop_reruns_only_the_remaining_iterations(differential):
    def scenario(E):
        calls = []
        app, cfg = _loop(E, calls), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        calls.clear()
        mid = _at(app, cfg, lambda s: s.metadata["step"] == 2)
        updates = list(app.stream(None, mid.config, stream_mode="updates"))
        return mid.values, updates, calls, _tree(app, cfg)

    ref = differential(scenario)
    assert ref[2] == [("step", 2), ("finish", 3)]


def test_replay_debug_stream_from_a_middle_checkpoint(differential):
    def scenario(E):
        app, cfg = _loop(E), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        mid = _at(app, cfg, lambda s: s.metadata["step"] == 3)
        return collect(lambda: app.stream(None, mid.config, stream_mode="debug"))

    differential(scenario)


def test_replay_values_stream_from_a_middle_checkpoint(differential):
    def scenario(E):
        app, cfg = _joke(E), thread()
        app.invoke({}, cfg)
        before_joke = _at(app, cfg, lambda s: s.next == ("write_joke",))
        return list(app.stream(None, before_joke.config, stream_mode="values"))

    differential(scenario)


def test_replay_of_a_send_step_runs_every_send_again(differential):
    def scenario(E):
        calls = []
        app, cfg = _fanout(E, calls), thread()
        app.invoke({"topics": []}, cfg)
        calls.clear()
        at_send = _at(app, cfg, lambda s: s.next == ("work", "work", "work"))
        out = app.invoke(None, at_send.config)
        return out, sorted(calls, key=repr), [t.path for t in at_send.tasks]

    ref = differential(scenario)
    assert ref[0]["summary"] == "CATS+DOGS+OWLS"


def test_replay_of_a_parallel_step_streams_both_branches(differential):
    """Sync parallel nodes report in completion order: compared per step as multisets."""

    def scenario(E):
        calls = []
        app, cfg = _diamond(E, calls), thread()
        app.invoke({"log": []}, cfg)
        calls.clear()
        par = _at(app, cfg, lambda s: s.next == ("b1", "c"))
        chunks = list(app.stream(None, par.config, stream_mode=["updates", "checkpoints"]))
        return (steps_as_multisets(chunks, lambda c: c[0] == "checkpoints"), sorted(calls),
                app.get_state(cfg).values)

    differential(scenario)


def test_replay_from_the_final_checkpoint_runs_nothing(differential):
    def scenario(E):
        calls = []
        app, cfg = _joke(E, calls), thread()
        app.invoke({}, cfg)
        calls.clear()
        final = app.get_state(cfg)
        out = app.invoke(None, final.config)
        chunks = list(app.stream(None, final.config, stream_mode=["updates", "values", "checkpoints"]))
        return out, chunks, calls, len(list(app.get_state_history(cfg)))

    differential(scenario)


def test_new_input_on_an_old_checkpoint_config_continues_from_that_checkpoint(differential):
    def scenario(E):
        calls = []
        app, cfg = _loop(E, calls), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        calls.clear()
        mid = _at(app, cfg, lambda s: s.metadata["step"] == 1)
        out = app.invoke({"count": 1, "log": ["again"]}, mid.config)
        return out, calls, _tree(app, cfg)

    differential(scenario)


def test_replay_of_a_checkpoint_paused_at_parallel_interrupts_asks_both_again(differential):
    def scenario(E):
        def mk(n):
            def f(s):
                return {"log": [f"{n}:{E.interrupt(f'{n}?')}"]}

            return f

        g = E.StateGraph(S)
        g.add_node("start", lambda s: {"log": ["start"]})
        g.add_node("x", mk("x"))
        g.add_node("y", mk("y"))
        g.add_edge(E.START, "start")
        g.add_edge("start", "x")
        g.add_edge("start", "y")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        paused = app.get_state(cfg)
        ids = {i.value: i.id for i in paused.interrupts}
        done = app.invoke(E.Command(resume={ids["x?"]: "X", ids["y?"]: "Y"}), cfg)
        replay = app.invoke(None, paused.config)
        again = app.get_state(cfg)
        return (sorted(done["log"]), sorted(i.value for i in replay["__interrupt__"]), again.next,
                sorted(i.value for i in again.interrupts), _digest(app, cfg))

    differential(scenario)


def test_replay_of_a_node_with_two_interrupts_after_the_first_answer(differential):
    def scenario(E):
        def form(s):
            name = E.interrupt("name?")
            age = E.interrupt("age?")
            return {"log": [f"{name}/{age}"]}

        app, cfg = _one_node_app(E, S, "form", form, checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        app.invoke(E.Command(resume="Ann"), cfg)
        after_first = app.get_state(cfg)
        app.invoke(E.Command(resume=33), cfg)
        replay = app.invoke(None, after_first.config)
        return after_first, replay, app.get_state(cfg).next, _digest(app, cfg)

    differential(scenario)


def test_replay_of_a_checkpoint_with_a_failed_task(differential):
    def scenario(E):
        calls, fail = [], {"on": True}
        good, bad = _good_and_late(calls, "bad", lambda s: fail["on"], "bad input")

        g = E.StateGraph(S)
        g.add_node("good", good)
        g.add_node("bad", bad)
        g.add_node("join", lambda s: {"log": ["join"]})
        g.add_edge(E.START, "good")
        g.add_edge(E.START, "bad")
        g.add_edge(["good", "bad"], "join")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        err = capture(lambda: app.invoke({"log": []}, cfg))
        failed = app.get_state(cfg)
        fail["on"] = False
        calls.clear()
        out = app.invoke(None, failed.config)
        # both nodes start at once (threads): the order of their `calls` varies
        return err, sorted((t.name, t.error, t.result) for t in failed.tasks), out, sorted(calls), _digest(app, cfg)

    differential(scenario)


# --- forks and the history tree ------------------------------------------------------------------


def test_fork_the_time_travel_tutorial_with_a_new_topic(differential):
    def scenario(E):
        calls = []
        app, cfg = _joke(E, calls), thread()
        app.invoke({}, cfg)
        selected = _at(app, cfg, lambda s: s.next == ("write_joke",))
        new_config = app.update_state(selected.config, values={"topic": "chickens"})
        calls.clear()
        out = app.invoke(None, new_config)
        return new_config == app.get_state(new_config).config, out, calls, _tree(app, cfg)

    ref = differential(scenario)
    assert ref[1]["joke"] == "Why did the chickens cross the road?"


def test_two_forks_from_one_checkpoint_make_a_tree(differential):
    def scenario(E):
        app, cfg = _loop(E), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        base = _at(app, cfg, lambda s: s.metadata["step"] == 1)
        f1 = app.update_state(base.config, {"count": 2, "log": ["fork1"]})
        app.invoke(None, f1)
        f2 = app.update_state(base.config, {"count": 5, "log": ["fork2"]})
        app.invoke(None, f2)
        return _tree(app, cfg), app.get_state(cfg).values, app.get_state(f1).next

    differential(scenario)


def test_fork_with_as_node_at_a_branch_point_triggers_both_branches(differential):
    def scenario(E):
        calls = []
        app, cfg = _diamond(E, calls), thread()
        app.invoke({"log": []}, cfg)
        first = _at(app, cfg, lambda s: s.next == ("a",))
        fork = app.update_state(first.config, {"log": ["human-a"]}, as_node="a")
        st = app.get_state(fork)
        calls.clear()
        out = app.invoke(None, fork)
        return st.next, st.metadata, st.values, [t.name for t in st.tasks], out, sorted(calls)

    differential(scenario)


def test_update_state_as_a_node_with_conditional_edges_routes_on_the_updated_state(differential):
    def scenario(E):
        out = {}
        for count in (0, 3):
            calls = []
            app, cfg = _loop(E, calls, interrupt_before=["finish"]), thread()
            app.invoke({"count": 0, "log": []}, cfg)
            app.update_state(cfg, {"count": count, "log": [f"set{count}"]}, as_node="step")
            st = app.get_state(cfg)
            calls.clear()
            res = app.invoke(None, cfg)
            out[count] = (st.next, st.metadata, res, calls)
        return out

    ref = differential(scenario)
    assert ref[0][0] == ("step",) and ref[3][0] == ("finish",)


def test_update_state_as_one_branch_of_a_join_lets_the_join_run(differential):
    def scenario(E):
        calls = []
        app, cfg = _diamond(E, calls, interrupt_before=["b2"]), thread()
        app.invoke({"log": []}, cfg)
        paused = app.get_state(cfg)
        app.update_state(cfg, {"log": ["manual-b2"]}, as_node="b2")
        st = app.get_state(cfg)
        calls.clear()
        return paused.next, st.next, st.values, app.invoke(None, cfg), calls

    differential(scenario)


def test_update_state_as_node_inferred_after_a_parallel_step_is_ambiguous(differential):
    def scenario(E):
        app, cfg = _diamond(E, interrupt_after=["c"]), thread()
        app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        return st.next, capture(lambda: app.update_state(cfg, {"log": ["?"]}))

    differential(scenario, exc="extends")


def test_update_state_with_overwrite_replaces_a_reducer_field(differential):
    def scenario(E):
        app, cfg = _diamond(E, interrupt_before=["d"]), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": E.Overwrite(["reset"])})
        st = app.get_state(cfg)
        return st.values, st.next, st.metadata, app.invoke(None, cfg)

    ref = differential(scenario)
    assert ref[0]["log"] == ["reset"]


def test_update_state_twice_accumulates_through_the_reducer_and_keeps_next(differential):
    def scenario(E):
        app, cfg = _diamond(E, interrupt_before=["d"]), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": ["u1"]}, as_node="c")
        app.update_state(cfg, {"log": ["u2"]}, as_node="b2")
        return _tree(app, cfg)[:3], app.invoke(None, cfg)

    differential(scenario)


def test_update_state_with_a_command_sending_to_a_node(differential):
    def scenario(E):
        calls = []
        app, cfg = _fanout(E, calls, interrupt_before=["summarize"]), thread()
        app.invoke({"topics": []}, cfg)
        res = attempt(lambda: app.update_state(
            cfg, E.Command(update={"results": ["MANUAL"]}, goto=[E.Send("work", {"topic": "bees"})]),
            as_node="work"))
        st = app.get_state(cfg)
        calls.clear()
        out = capture(lambda: app.invoke(None, cfg))
        # `work` (the Send) and `summarize` run in one step: calls in completion order
        return (res, st.next, st.values, [t.path for t in st.tasks], out,
                sorted(calls, key=repr))

    differential(scenario)


def test_update_state_with_a_command_from_a_past_checkpoint(differential):
    def scenario(E):
        calls = []
        app, cfg = _loop(E, calls), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        first = _at(app, cfg, lambda s: s.metadata["step"] == 1)
        fork = app.update_state(first.config, E.Command(update={"count": 3, "log": ["jump"]}, goto="finish"),
                                as_node="step")
        st = app.get_state(fork)
        calls.clear()
        return st.next, st.values, st.metadata, app.invoke(None, fork), calls

    differential(scenario)


def test_edit_a_tool_call_message_by_id_then_resume(differential):
    """The 'review tool calls' how-to: pause before tools, replace the AI message (same id)."""

    def scenario(E):
        from langchain_core.messages import AIMessage, ToolMessage

        def agent(s):
            if isinstance(s["messages"][-1], ToolMessage):
                return {"messages": [AIMessage("done: " + s["messages"][-1].content, id="ai-2")]}
            return {"messages": [AIMessage("", id="ai-1", tool_calls=[
                {"name": "search", "args": {"q": "sf"}, "id": "call-1"}])]}

        def tools(s):
            call = s["messages"][-1].tool_calls[0]
            return {"messages": [ToolMessage(f"weather in {call['args']['q']}", tool_call_id=call["id"], id="tm-1")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", tools)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else E.END,
                                ["tools", E.END])
        g.add_edge("tools", "agent")
        app, cfg = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["tools"]), thread()
        app.invoke({"messages": [("user", "weather?")]}, cfg)
        last = app.get_state(cfg).values["messages"][-1]
        edited = AIMessage("", id=last.id, tool_calls=[{"name": "search", "args": {"q": "nyc"}, "id": "call-1"}])
        app.update_state(cfg, {"messages": [edited]})
        st = app.get_state(cfg)
        out = app.invoke(None, cfg)
        return st.next, st.metadata, len(st.values["messages"]), [m.content for m in out["messages"]]

    ref = differential(scenario)
    assert ref[3][-1] == "done: weather in nyc"


# --- history filters --------------------------------------------------------------------------------


def test_history_filter_before_and_limit_combined_across_forks(differential):
    def scenario(E):
        app, cfg = _loop(E), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        base = _at(app, cfg, lambda s: s.metadata["step"] == 1)
        f1 = app.update_state(base.config, {"log": ["f1"]})
        app.invoke(None, f1)
        marker = app.get_state(cfg)
        app.update_state(cfg, {"log": ["late"]})

        def steps(**kw):
            return [(s.metadata["source"], s.metadata["step"]) for s in app.get_state_history(cfg, **kw)]

        return {
            "update": steps(filter={"source": "update"}),
            "update_before": steps(filter={"source": "update"}, before=marker.config),
            "loop_before_limit": steps(filter={"source": "loop"}, before=marker.config, limit=2),
            "step_and_source": steps(filter={"source": "loop", "step": 2}),
            "before_base": steps(before=base.config),
            "limit_none": len(steps(limit=None)),
        }

    differential(scenario)


def test_run_metadata_lands_in_checkpoint_metadata_and_can_be_filtered(differential):
    def scenario(E):
        app, cfg = _joke(E), thread()
        app.invoke({}, {**cfg, "metadata": {"user": "alice", "lesson": 3}})
        app.update_state(cfg, {"topic": "x"})
        app.invoke(None, {**cfg, "metadata": {"user": "bob"}})
        return ([s.metadata for s in app.get_state_history(cfg)],
                [s.metadata["step"] for s in app.get_state_history(cfg, filter={"user": "alice"})],
                [s.metadata["step"] for s in app.get_state_history(cfg, filter={"user": "bob", "lesson": 3})])

    differential(scenario)


def test_history_of_an_unknown_thread_is_empty_and_get_state_is_blank(differential):
    def scenario(E):
        app = _joke(E)
        cfg = thread("never")
        st = app.get_state(cfg)
        return list(app.get_state_history(cfg)), st.values, st.next, st.config, st.metadata, st.tasks

    differential(scenario)


# --- checkpoints / tasks / debug streams ------------------------------------------------------------


def test_checkpoints_and_tasks_streams_across_a_parallel_step_with_a_retry(differential):
    """c fails once and is retried by its RetryPolicy; sync parallel tasks report in completion
    order, so each step is compared as a multiset."""

    def scenario(E):
        tries = []

        def flaky(s):
            tries.append(1)
            if len(tries) == 1:
                raise ConnectionError("flaky")
            return {"log": ["c"]}

        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b", lambda s: {"log": ["b"]})
        g.add_node("c", flaky, retry_policy=E.RetryPolicy(initial_interval=0.01, jitter=False))
        g.add_node("d", lambda s: {"log": ["d"]})
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        g.add_edge(["b", "c"], "d")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        chunks = collect(lambda: app.stream({"log": []}, cfg, stream_mode=["checkpoints", "tasks"]))
        return steps_as_multisets(chunks, lambda c: c[0] == "checkpoints"), len(tries), app.get_state(cfg).values

    differential(scenario)


def test_debug_stream_of_a_failing_task_and_the_resume_after_the_fix(differential):
    def scenario(E):
        fail = {"on": True}

        def check(s):
            if fail["on"]:
                raise ValueError("count too small")
            return {"log": ["checked"]}

        g = E.StateGraph(S)
        g.add_node("prep", lambda s: {"log": ["prep"]})
        g.add_node("check", check)
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "check")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="debug"))
        st = app.get_state(cfg)
        fail["on"] = False
        second = collect(lambda: app.stream(None, cfg, stream_mode="debug"))
        return first, st, second, app.get_state(cfg)

    differential(scenario)


def test_tasks_stream_of_a_send_fan_out(differential):
    def scenario(E):
        app, cfg = _fanout(E), thread()
        chunks = collect(lambda: app.stream({"topics": []}, cfg, stream_mode=["tasks", "checkpoints"], version="v2"))
        return steps_as_multisets(chunks, lambda c: c["type"] == "checkpoints")

    differential(scenario)


def test_get_state_of_a_failed_send_task_then_fix_and_resume(differential):
    def scenario(E):
        bad = {"topic": "dogs"}
        calls = []

        def plan(s):
            return {"topics": ["cats", "dogs"]}

        def work(arg):
            calls.append(arg["topic"])
            if arg["topic"] == bad["topic"]:
                raise RuntimeError(f"cannot handle {arg['topic']}")
            return {"results": [arg["topic"]]}

        g = E.StateGraph(FanState)
        g.add_node("plan", plan)
        g.add_node("work", work)
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", lambda s: [E.Send("work", {"topic": t}) for t in s["topics"]], ["work"])
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        err = capture(lambda: app.invoke({}, cfg))
        st = app.get_state(cfg)
        bad["topic"] = None
        calls.clear()
        out = app.invoke(None, cfg)
        return err, st.next, sorted(((t.path, t.error, t.result) for t in st.tasks), key=repr), out, calls

    differential(scenario)


# --- stepping one super-step at a time (teaching views) ----------------------------------------------


def test_stepping_with_interrupt_before_star_shows_each_super_step(differential):
    def scenario(E):
        app, cfg = _diamond(E, interrupt_before="*"), thread()
        frames = [app.invoke({"log": []}, cfg)]
        for _ in range(10):
            st = app.get_state(cfg)
            frames.append((st.next, st.values, st.metadata["step"], [t.name for t in st.tasks]))
            if not st.next:
                break
            frames.append(app.invoke(None, cfg))
        return frames

    differential(scenario)


def test_stepping_with_interrupt_after_star_through_a_loop(differential):
    def scenario(E):
        app, cfg = _loop(E, interrupt_after="*"), thread()
        frames = [app.invoke({"count": 0, "log": []}, cfg)]
        for _ in range(10):
            st = app.get_state(cfg)
            frames.append((st.next, st.values, st.metadata, [(t.name, t.result) for t in st.tasks]))
            if not st.next:
                break
            frames.append(app.invoke(None, cfg))
        return frames, _digest(app, cfg)

    differential(scenario)


def test_stepping_a_send_fan_out_with_streamed_updates(differential):
    def scenario(E):
        app, cfg = _fanout(E), thread()
        frames = [list(app.stream({"topics": []}, cfg, stream_mode="updates", interrupt_before="*"))]
        for _ in range(6):
            st = app.get_state(cfg)
            frames.append((st.next, st.values))
            if not st.next:
                break
            chunks = list(app.stream(None, cfg, stream_mode="updates", interrupt_before="*"))
            frames.append(sorted(chunks, key=repr))
        return frames

    differential(scenario)


def test_stepping_then_going_back_one_step_and_stepping_again(differential):
    def scenario(E):
        calls = []
        app, cfg = _loop(E, calls, interrupt_after="*"), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        app.invoke(None, cfg)
        app.invoke(None, cfg)
        now = app.get_state(cfg)
        back = app.get_state(now.parent_config)
        calls.clear()
        replay = app.invoke(None, back.config)
        return back.next, back.values, replay, calls, app.get_state(cfg).next, _tree(app, cfg)

    differential(scenario)


# --- async twins ------------------------------------------------------------------------------------


async def test_async_fork_at_a_branch_point_and_history_queries(differential):
    async def scenario(E):
        app, cfg = _diamond(E), thread()
        await app.ainvoke({"log": []}, cfg)
        first = [s async for s in app.aget_state_history(cfg) if s.next == ("a",)][0]
        fork = await app.aupdate_state(first.config, {"log": ["human-a"]}, as_node="a")
        st = await app.aget_state(fork)
        upd = [s.metadata async for s in app.aget_state_history(cfg, filter={"source": "update"})]
        out = await app.ainvoke(None, fork)
        before = [(s.metadata["source"], s.metadata["step"]) async for s in app.aget_state_history(cfg, before=fork, limit=3)]
        ow = await app.aupdate_state(cfg, {"log": E.Overwrite(["only"])})
        return st.next, upd, out, before, (await app.aget_state(ow)).values

    differential(scenario)


async def test_async_stepping_with_interrupt_before_star(differential):
    async def scenario(E):
        app, cfg = _loop(E, interrupt_before="*"), thread()
        frames = [await app.ainvoke({"count": 0, "log": []}, cfg)]
        for _ in range(10):
            st = await app.aget_state(cfg)
            frames.append((st.next, st.values, st.metadata["step"]))
            if not st.next:
                break
            frames.append(await app.ainvoke(None, cfg))
        return frames

    differential(scenario)


async def test_async_replay_debug_stream_from_a_middle_checkpoint(differential):
    async def scenario(E):
        app, cfg = _loop(E), thread()
        await app.ainvoke({"count": 0, "log": []}, cfg)
        mid = [s async for s in app.aget_state_history(cfg) if s.metadata["step"] == 2][0]
        chunks = await acollect(lambda: app.astream(None, mid.config, stream_mode="debug"))
        return chunks, [s.metadata async for s in app.aget_state_history(cfg)]

    differential(scenario)


async def test_async_update_state_with_a_command_and_replay_an_interrupt(differential):
    async def scenario(E):
        def review(s):
            return {"note": E.interrupt({"draft": s["log"]})}

        g = E.StateGraph(S)
        g.add_node("draft", lambda s: {"log": ["draft"]})
        g.add_node("review", review)
        g.add_node("publish", lambda s: {"log": [f"published:{s['note']}"]})
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "review")
        g.add_edge("review", "publish")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = await app.ainvoke({"log": []}, cfg)
        paused = await app.aget_state(cfg)
        done = await app.ainvoke(E.Command(resume="ok"), cfg)
        replay = await app.ainvoke(None, paused.config)
        skip = await app.aupdate_state(cfg, E.Command(update={"note": "skipped"}, goto="publish"), as_node="review")
        st = await app.aget_state(skip)
        rest = await app.ainvoke(None, skip)
        return first, done, replay, st.next, st.values, rest

    differential(scenario)


# --- SQLite savers (LangGraph's SqliteSaver for LangGraph, lgnb's for lgnb) ---------------------------


def _sqlite(E, tmp_path, name):
    path = str(tmp_path / f"{E.root}-{name}.sqlite")
    if E.root == "lgnb":
        from lgnb.checkpoint.sqlite import SqliteSaver
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver
    return SqliteSaver.from_conn_string(path)


def _asqlite(E, tmp_path, name):
    path = str(tmp_path / f"{E.root}-{name}.sqlite")
    if E.root == "lgnb":
        from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    return AsyncSqliteSaver.from_conn_string(path)


def test_sqlite_fork_replay_and_history_tree(differential, tmp_path):
    def scenario(E):
        with _sqlite(E, tmp_path, "fork") as saver:
            calls = []
            app, cfg = _loop(E, calls, checkpointer=saver), thread()
            app.invoke({"count": 0, "log": []}, cfg)
            base = _at(app, cfg, lambda s: s.metadata["step"] == 1)
            fork = app.update_state(base.config, {"count": 2, "log": ["fork"]}, as_node="step")
            calls.clear()
            out = app.invoke(None, fork)
            replay = app.invoke(None, base.config)
            return (out, replay, calls, _tree(app, cfg), list(app.get_state_history(cfg, limit=2)),
                    [s.metadata["step"] for s in app.get_state_history(cfg, filter={"source": "update"})])

    differential(scenario)


def test_sqlite_stepping_through_a_send_fan_out_and_a_failed_task(differential, tmp_path):
    def scenario(E):
        with _sqlite(E, tmp_path, "step") as saver:
            app, cfg = _fanout(E, checkpointer=saver, interrupt_after="*"), thread()
            frames = [app.invoke({"topics": []}, cfg)]
            for _ in range(6):
                st = app.get_state(cfg)
                frames.append(st)
                if not st.next:
                    break
                frames.append(app.invoke(None, cfg))
            return frames, list(app.get_state_history(cfg))

    differential(scenario)


async def test_async_sqlite_fork_at_a_branch_point(differential, tmp_path):
    async def scenario(E):
        async with _asqlite(E, tmp_path, "afork") as saver:
            app, cfg = _diamond(E, checkpointer=saver), thread()
            await app.ainvoke({"log": []}, cfg, durability="sync")
            first = [s async for s in app.aget_state_history(cfg) if s.next == ("a",)][0]
            fork = await app.aupdate_state(first.config, {"log": ["human-a"]}, as_node="a")
            # durability="sync": see test_full_history_of_branches_of_different_length_joined
            out = await app.ainvoke(None, fork, durability="sync")
            hist = [s async for s in app.aget_state_history(cfg)]
            return out, hist

    differential(scenario)


# --- more edges users hit ------------------------------------------------------------------------------


def test_fix_the_state_of_a_failed_step_with_update_state_then_resume(differential):
    """A node fails on bad state; the user patches the state and continues the thread."""

    def scenario(E):
        calls = []
        good, check = _good_and_late(calls, "check", lambda s: s.get("count", 0) < 1, "count must be positive",
                                     logs=lambda s: f"check:{s['count']}")

        g = E.StateGraph(S)
        g.add_node("good", good)
        g.add_node("check", check)
        g.add_node("join", lambda s: {"log": ["join"]})
        g.add_edge(E.START, "good")
        g.add_edge(E.START, "check")
        g.add_edge(["good", "check"], "join")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        err = capture(lambda: app.invoke({"log": [], "count": 0}, cfg))
        upd = attempt(lambda: app.update_state(cfg, {"count": 5}))
        st = app.get_state(cfg)
        calls.clear()
        out = capture(lambda: app.invoke(None, cfg))
        return (err, upd, st.next, st.values, st.metadata,
                sorted((t.name, t.error, t.result) for t in st.tasks), out, sorted(calls))

    differential(scenario)


def test_update_state_as_the_interrupted_node_skips_the_question(differential):
    def scenario(E):
        calls = []

        def ask(s):
            calls.append("ask")
            return {"note": E.interrupt("approve?")}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_node("act", lambda s: {"log": [f"act:{s['note']}"]})
        g.add_edge(E.START, "ask")
        g.add_edge("ask", "act")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"note": "pre-approved"}, as_node="ask")
        st = app.get_state(cfg)
        out = app.invoke(None, cfg)
        return st.next, st.interrupts, st.metadata, out, calls

    differential(scenario)


def test_replay_has_a_fresh_recursion_budget_counted_from_the_checkpoint(differential):
    def scenario(E):
        class L(TypedDict):
            count: int
            left: E.RemainingSteps

        def step(s):
            return {"count": s["count"] + 1}

        g = E.StateGraph(L)
        g.add_node("step", step)
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", lambda s: "step" if s["count"] < 6 else E.END, ["step", E.END])
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"count": 0}, {**cfg, "recursion_limit": 10})
        mid = next(s for s in app.get_state_history(cfg) if s.metadata["step"] == 4)
        ok = capture(lambda: app.invoke(None, {**mid.config, "recursion_limit": 3}))
        too_few = capture(lambda: app.invoke(None, {**mid.config, "recursion_limit": 1}))
        return ok, too_few, _digest(app, cfg)[:3]

    differential(scenario, exc="extends")


def test_remaining_steps_seen_by_a_node_on_replay(differential):
    def scenario(E):
        class L(TypedDict, total=False):
            seen: Annotated[list, operator.add]
            left: E.RemainingSteps

        g = E.StateGraph(L)
        g.add_node("a", lambda s: {"seen": [("a", s["left"])]})
        g.add_node("b", lambda s: {"seen": [("b", s["left"])]})
        g.add_node("c", lambda s: {"seen": [("c", s["left"])]})
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = app.invoke({"seen": []}, {**cfg, "recursion_limit": 10})
        mid = next(s for s in app.get_state_history(cfg) if s.next == ("b",))
        replay = app.invoke(None, {**mid.config, "recursion_limit": 10})
        return first, replay

    differential(scenario)


def test_replay_with_a_call_time_breakpoint_stops_in_the_replay(differential):
    def scenario(E):
        calls = []
        app, cfg = _loop(E, calls), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        calls.clear()
        mid = _at(app, cfg, lambda s: s.metadata["step"] == 1)
        out = app.invoke(None, mid.config, interrupt_before=["finish"])
        st = app.get_state(cfg)
        rest = app.invoke(None, cfg)
        return out, st.next, st.values, rest, calls

    differential(scenario)


def test_replay_an_older_failed_checkpoint_after_the_thread_recovered(differential):
    def scenario(E):
        calls, fail = [], {"on": True}
        good, bad = _good_and_late(calls, "bad", lambda s: fail["on"], "boom")

        g = E.StateGraph(S)
        g.add_node("prep", lambda s: {"log": ["prep"]})
        g.add_node("good", good)
        g.add_node("bad", bad)
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "good")
        g.add_edge("prep", "bad")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        capture(lambda: app.invoke({"log": []}, cfg))
        failed = app.get_state(cfg)
        fail["on"] = False
        app.invoke(None, cfg)
        calls.clear()
        replay = app.invoke(None, failed.config)
        return replay, sorted(calls), app.get_state(failed.config).tasks, _tree(app, cfg)

    differential(scenario)


def test_replay_a_checkpoint_where_one_parallel_sibling_finished_and_one_asked(differential):
    def scenario(E):
        calls = []

        def quick(s):
            calls.append("quick")
            return {"log": ["quick"]}

        def ask(s):
            calls.append("ask")
            return {"log": [f"ask:{E.interrupt('ok?')}"]}

        g = E.StateGraph(S)
        g.add_node("quick", quick)
        g.add_node("ask", ask)
        g.add_edge(E.START, "quick")
        g.add_edge(E.START, "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        paused = app.get_state(cfg)
        app.invoke(E.Command(resume="yes"), cfg)
        calls.clear()
        replay = app.invoke(None, paused.config)
        calls_replay = sorted(calls)
        calls.clear()
        fork_resume = app.invoke(E.Command(resume="no"), paused.config)
        return (sorted((t.name, t.result, len(t.interrupts)) for t in paused.tasks), replay, calls_replay,
                fork_resume, sorted(calls), _digest(app, cfg))

    differential(scenario)


def test_subgraph_tasks_in_history_and_replay_of_the_parent(differential):
    def scenario(E):
        calls = []

        def inner(s):
            calls.append("inner")
            return {"log": ["inner"]}

        sub = E.StateGraph(S)
        sub.add_node("inner", inner)
        sub.add_node("inner2", lambda s: {"log": ["inner2"]})
        sub.add_edge(E.START, "inner")
        sub.add_edge("inner", "inner2")
        g = E.StateGraph(S)
        g.add_node("pre", lambda s: {"log": ["pre"]})
        g.add_node("sub", sub.compile())
        g.add_node("post", lambda s: {"log": ["post"]})
        g.add_edge(E.START, "pre")
        g.add_edge("pre", "sub")
        g.add_edge("sub", "post")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        hist = list(app.get_state_history(cfg))
        at_sub = next(s for s in hist if s.next == ("sub",))
        with_sub = app.get_state(at_sub.config, subgraphs=True)
        calls.clear()
        replay = list(app.stream(None, at_sub.config, stream_mode="updates", subgraphs=True))
        return hist, with_sub, replay, calls

    differential(scenario)


def test_call_time_interrupt_before_star_does_not_stop_inside_a_subgraph(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner1", lambda s: {"log": ["inner1"]})
        sub.add_node("inner2", lambda s: {"log": ["inner2"]})
        sub.add_edge(E.START, "inner1")
        sub.add_edge("inner1", "inner2")
        g = E.StateGraph(S)
        g.add_node("pre", lambda s: {"log": ["pre"]})
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "pre")
        g.add_edge("pre", "sub")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        frames = [app.invoke({"log": []}, cfg, interrupt_before="*")]
        for _ in range(6):
            st = app.get_state(cfg, subgraphs=True)
            frames.append((st.next, st.values, [(t.name, t.state.values, t.state.next, t.state.config["configurable"]["checkpoint_ns"])
                                                for t in st.tasks]))
            if not st.next:
                break
            frames.append(app.invoke(None, cfg, interrupt_before="*"))
        return frames

    differential(scenario)


def test_update_state_on_a_checkpoint_with_pending_sends_keeps_them(differential):
    def scenario(E):
        calls = []
        app, cfg = _fanout(E, calls, interrupt_before=["work"]), thread()
        app.invoke({"topics": []}, cfg)
        before = app.get_state(cfg)
        app.update_state(cfg, {"results": ["EXTRA"]})
        st = app.get_state(cfg)
        calls.clear()
        out = app.invoke(None, cfg)
        return ([t.path for t in before.tasks], st.next, [t.path for t in st.tasks], st.metadata, out,
                sorted(calls, key=repr))

    differential(scenario)


def test_update_state_with_values_none_as_a_node_only_moves_the_graph(differential):
    def scenario(E):
        calls = []
        app, cfg = _joke(E, calls, interrupt_before=["generate_topic"]), thread()
        app.invoke({}, cfg)
        app.update_state(cfg, None, as_node="generate_topic")
        st = app.get_state(cfg)
        return st.next, st.values, st.metadata, [t.name for t in st.tasks], capture(lambda: app.invoke(None, cfg)), calls

    differential(scenario)


def test_update_state_with_a_key_outside_the_schema(differential):
    def scenario(E):
        app, cfg = _joke(E), thread()
        app.invoke({}, cfg)
        res = attempt(lambda: app.update_state(cfg, {"not_a_key": 1}))
        return res, app.get_state(cfg).values, len(_digest(app, cfg))

    differential(scenario, exc="extends")


def test_update_state_with_task_id_attributes_writes_to_a_pending_task(differential):
    def scenario(E):
        app, cfg = _diamond(E, interrupt_before=["b1", "c"]), thread()
        app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        c_task = next(t for t in st.tasks if t.name == "c")
        res = attempt(lambda: app.update_state(cfg, {"log": ["c-by-hand"]}, as_node="c", task_id=c_task.id))
        after = app.get_state(cfg)
        out = capture(lambda: app.invoke(None, cfg))
        return (res, after.next, after.values, after.metadata,
                [(t.name, t.result) for t in after.tasks], out)

    differential(scenario)


def test_pydantic_state_history_and_fork(differential):
    """Deliberate, after an `update_state` that stores a value the model rejects (accepted by
    both engines): LangGraph's get_state_history then raises the validation error (it builds
    each checkpoint's next node input); lgnb's state reads build no node input, so the whole
    history, the bad fork included, is still listed."""

    def scenario(E, bad_update=False):
        from pydantic import BaseModel

        class P(BaseModel):
            topic: str = ""
            n: int = 0

        g = E.StateGraph(P)
        g.add_node("pick", lambda s: {"topic": "tea", "n": s.n + 1})
        g.add_node("count", lambda s: {"n": s.n + 10})
        g.add_edge(E.START, "pick")
        g.add_edge("pick", "count")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = app.invoke({"topic": "x"}, cfg)
        mid = next(s for s in app.get_state_history(cfg) if s.next == ("count",))
        fork = app.update_state(mid.config, {"topic": "coffee"})
        if bad_update:
            bad = attempt(lambda: app.update_state(mid.config, {"n": "not a number"}))
            return bad, [s.values for s in app.get_state_history(cfg)]
        return first, [s.values for s in app.get_state_history(cfg)], app.invoke(None, fork)

    differential(scenario, exc="extends")
    bad, values = scenario(Engine("lgnb"), bad_update=True)
    assert bad == "ok" and values[0] == {"topic": "tea", "n": "not a number"}, values
    assert len(values) == 6


async def test_async_checkpoints_stream_of_a_fork_and_a_replay(differential):
    async def scenario(E):
        app, cfg = _joke(E), thread()
        await app.ainvoke({}, cfg)
        sel = [s async for s in app.aget_state_history(cfg) if s.next == ("write_joke",)][0]
        fork = await app.aupdate_state(sel.config, {"topic": "ducks"}, as_node="generate_topic")
        forked = await acollect(lambda: app.astream(None, fork, stream_mode=["checkpoints", "values"]))
        replay = await acollect(lambda: app.astream(None, sel.config, stream_mode="tasks"))
        return forked, replay, [(s.metadata, s.next) async for s in app.aget_state_history(cfg)]

    differential(scenario)


async def test_async_interrupt_before_star_with_parallel_branches(differential):
    async def scenario(E):
        app, cfg = _diamond(E, interrupt_before="*"), thread()
        frames = [await app.ainvoke({"log": []}, cfg, durability="sync")]
        for _ in range(10):
            st = await app.aget_state(cfg)
            frames.append((st.next, st.values))
            if not st.next:
                break
            frames.append(await app.ainvoke(None, cfg, durability="sync"))
        return frames, [s.next async for s in app.aget_state_history(cfg)]

    differential(scenario)


def _command_router(E, calls):
    """Nodes route with Command(goto=...) (no static edges out of `triage`)."""

    def triage(s):
        calls.append("triage")
        return E.Command(update={"note": "triaged"}, goto="billing" if s.get("count", 0) > 0 else "support")

    g = E.StateGraph(S)
    g.add_node("triage", triage, destinations=("billing", "support"))
    g.add_node("billing", lambda s: calls.append("billing") or {"log": ["billing"]})
    g.add_node("support", lambda s: calls.append("support") or {"log": ["support"]})
    g.add_edge(E.START, "triage")
    return g


def test_update_state_as_a_node_that_routes_with_command(differential):
    def scenario(E):
        calls = []
        app, cfg = _command_router(E, calls).compile(checkpointer=E.InMemorySaver(),
                                                     interrupt_before=["triage"]), thread()
        app.invoke({"log": [], "count": 0}, cfg)
        app.update_state(cfg, {"note": "by hand"}, as_node="triage")
        st = app.get_state(cfg)
        out = app.invoke(None, cfg)
        return st.next, st.values, out, calls

    differential(scenario)


def test_history_and_replay_of_command_routing(differential):
    def scenario(E):
        calls = []
        app, cfg = _command_router(E, calls).compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": [], "count": 0}, cfg)
        hist = list(app.get_state_history(cfg))
        at_triage = next(s for s in hist if s.next == ("triage",))
        fork = app.update_state(at_triage.config, {"count": 1})
        calls.clear()
        out = app.invoke(None, fork)
        return hist, out, calls

    differential(scenario)


def test_update_state_command_goto_without_as_node(differential):
    def scenario(E):
        calls = []
        app, cfg = _command_router(E, calls).compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": [], "count": 0}, cfg)
        res = attempt(lambda: app.update_state(cfg, E.Command(update={"count": 9}, goto="billing")))
        st = app.get_state(cfg)
        out = capture(lambda: app.invoke(None, cfg))
        return res, st.next, st.values, st.metadata, out, calls

    differential(scenario, exc="extends")


def test_update_state_command_with_overwrite_inside(differential):
    def scenario(E):
        app, cfg = _loop(E, interrupt_before=["finish"]), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        app.update_state(cfg, E.Command(update={"log": E.Overwrite(["clean"]), "count": 0}, goto="step"),
                         as_node="step")
        st = app.get_state(cfg)
        return st.values, st.next, app.invoke(None, cfg)

    differential(scenario)


def test_bulk_update_state_two_branches_in_one_super_step(differential):
    def scenario(E):
        from importlib import import_module

        StateUpdate = import_module(f"{E.root}.types").StateUpdate
        calls = []
        app, cfg = _diamond(E, calls, interrupt_before=["b1", "c"]), thread()
        app.invoke({"log": []}, cfg)
        res = attempt(lambda: app.bulk_update_state(cfg, [[StateUpdate({"log": ["B1"]}, "b1"),
                                                          StateUpdate({"log": ["C"]}, "c")]]))
        st = app.get_state(cfg)
        calls.clear()
        out = app.invoke(None, cfg)
        return res, st.next, st.values, st.metadata, out, calls

    differential(scenario)


def test_messages_time_travel_remove_and_edit_then_fork(differential):
    def scenario(E):
        from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

        def bot(s):
            return {"messages": [AIMessage(f"echo {len(s['messages'])}: {s['messages'][-1].content}",
                                           id=f"ai-{len(s['messages'])}")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("bot", bot)
        g.add_edge(E.START, "bot")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"messages": [HumanMessage("hi", id="h1")]}, cfg)
        app.invoke({"messages": [HumanMessage("how are you", id="h2")]}, cfg)
        app.update_state(cfg, {"messages": [RemoveMessage(id="h1")]})
        after_remove = [m.id for m in app.get_state(cfg).values["messages"]]
        first_turn = next(s for s in app.get_state_history(cfg)
                          if s.next == ("bot",) and len(s.values["messages"]) == 1)
        fork = app.update_state(first_turn.config, {"messages": [HumanMessage("hello!", id="h1")]})
        out = app.invoke(None, fork)
        return after_remove, [(m.id, m.content) for m in out["messages"]], _digest(app, cfg)

    differential(scenario)


def test_private_and_output_schema_keys_in_snapshots(differential):
    def scenario(E):
        class In(TypedDict):
            question: str

        class Out(TypedDict):
            answer: str

        class Full(TypedDict, total=False):
            question: str
            scratch: str
            answer: str

        g = E.StateGraph(Full, input_schema=In, output_schema=Out)
        g.add_node("think", lambda s: {"scratch": s["question"] + "?"})
        g.add_node("answer", lambda s: {"answer": s["scratch"] + "!"})
        g.add_edge(E.START, "think")
        g.add_edge("think", "answer")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        out = app.invoke({"question": "why"}, cfg)
        mid = next(s for s in app.get_state_history(cfg) if s.next == ("answer",))
        fork = app.update_state(mid.config, {"scratch": "because"})
        return out, [s.values for s in app.get_state_history(cfg)], app.invoke(None, fork)

    differential(scenario)


def test_defer_node_in_history_and_fork(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("fan", lambda s: {"log": ["fan"]})
        g.add_node("long1", lambda s: {"log": ["long1"]})
        g.add_node("long2", lambda s: {"log": ["long2"]})
        g.add_node("short", lambda s: {"log": ["short"]})
        g.add_node("final", lambda s: {"log": ["final"]}, defer=True)
        g.add_edge(E.START, "fan")
        g.add_edge("fan", "long1")
        g.add_edge("long1", "long2")
        g.add_edge("fan", "short")
        g.add_edge("long2", "final")
        g.add_edge("short", "final")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg, durability="sync")
        hist = [(s.metadata["step"], s.next, s.values) for s in app.get_state_history(cfg)]
        at_par = next(s for s in app.get_state_history(cfg) if s.next == ("long1", "short"))
        fork = app.update_state(at_par.config, {"log": ["human-short"]}, as_node="short")
        st = app.get_state(fork)
        return hist, st.next, app.invoke(None, fork, durability="sync")

    differential(scenario)


def test_interrupt_after_a_node_that_also_calls_interrupt(differential):
    def scenario(E):
        def ask(s):
            return {"log": [f"ans:{E.interrupt('q')}"]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_node("next", lambda s: {"log": ["next"]})
        g.add_edge(E.START, "ask")
        g.add_edge("ask", "next")
        app, cfg = g.compile(checkpointer=E.InMemorySaver(), interrupt_after=["ask"]), thread()
        frames = [app.invoke({"log": []}, cfg)]
        st1 = app.get_state(cfg)
        frames.append(app.invoke(E.Command(resume="A"), cfg))
        st2 = app.get_state(cfg)
        frames.append(app.invoke(None, cfg))
        return frames, (st1.next, st1.interrupts), (st2.next, st2.interrupts, st2.values), _digest(app, cfg)

    differential(scenario)


def test_debug_stream_of_a_replay_from_an_interrupted_checkpoint(differential):
    def scenario(E):
        def ask(s):
            return {"log": [f"ans:{E.interrupt({'q': 'name?'})}"]}

        g = E.StateGraph(S)
        g.add_node("prep", lambda s: {"log": ["prep"]})
        g.add_node("ask", ask)
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        app.invoke({"log": []}, cfg)
        paused = app.get_state(cfg)
        app.invoke(E.Command(resume="Bo"), cfg)
        return (collect(lambda: app.stream(None, paused.config, stream_mode="debug")),
                collect(lambda: app.stream(E.Command(resume="Al"), cfg, stream_mode=["tasks", "updates"])))

    differential(scenario)


def test_durability_exit_history_then_fork_and_replay(differential):
    def scenario(E):
        calls = []
        app, cfg = _loop(E, calls), thread()
        app.invoke({"count": 0, "log": []}, cfg, durability="exit")
        hist1 = _digest(app, cfg)
        last = app.get_state(cfg)
        fork = app.update_state(last.config, {"count": 1}, as_node="step")
        calls.clear()
        out = app.invoke(None, fork, durability="exit")
        return hist1, out, calls, _tree(app, cfg)

    differential(scenario)


# --- the "live" view (get_state(thread)) against the record view (get_state(checkpoint config)) -------


def _par_ask(E, calls, checkpointer=None):
    def quick(s):
        calls.append("quick")
        return {"log": ["quick"]}

    def mk(n):
        def ask(s):
            calls.append(n)
            return {"log": [f"{n}:{E.interrupt(f'{n}?')}"]}

        return ask

    g = E.StateGraph(S)
    g.add_node("quick", quick)
    g.add_node("x", mk("x"))
    g.add_node("y", mk("y"))
    g.add_node("after", lambda s: {"log": ["after"]})
    for n in ("quick", "x", "y"):
        g.add_edge(E.START, n)
    g.add_edge(["quick", "x", "y"], "after")
    return g.compile(checkpointer=checkpointer or E.InMemorySaver())


def _view(st):
    return (st.values, st.next, sorted(i.value for i in st.interrupts),
            sorted((t.name, t.error, t.result, tuple(i.value for i in t.interrupts)) for t in st.tasks))


def test_live_view_and_record_view_of_a_thread_paused_with_answered_and_open_questions(differential):
    def scenario(E):
        calls = []
        app, cfg = _par_ask(E, calls), thread()
        app.invoke({"log": []}, cfg)
        live1 = app.get_state(cfg)
        record1 = app.get_state(live1.config)
        x_id = next(i.id for i in live1.interrupts if i.value == "x?")
        app.invoke(E.Command(resume={x_id: "X"}), cfg)
        live2 = app.get_state(cfg)
        record2 = app.get_state(live2.config)
        hist0 = next(iter(app.get_state_history(cfg)))
        return (_view(live1), _view(record1), _view(live2), _view(record2), _view(hist0),
                live1.config == record1.config, sorted(calls))

    differential(scenario)


def test_live_view_and_record_view_of_a_failed_parallel_step(differential):
    def scenario(E):
        done = threading.Event()

        def good(s):
            done.set()
            return {"log": ["good"]}

        def bad(s):
            done.wait(2)
            raise KeyError("missing")

        g = E.StateGraph(S)
        g.add_node("good", good)
        g.add_node("bad", bad)
        g.add_edge(E.START, "good")
        g.add_edge(E.START, "bad")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        err = capture(lambda: app.invoke({"log": []}, cfg))
        live = app.get_state(cfg)
        record = app.get_state(live.config)
        hist0 = next(iter(app.get_state_history(cfg)))
        return err, _view(live), _view(record), _view(hist0)

    differential(scenario)


async def test_async_live_view_and_record_view(differential):
    async def scenario(E):
        calls = []
        app, cfg = _par_ask(E, calls), thread()
        await app.ainvoke({"log": []}, cfg)
        live1 = await app.aget_state(cfg)
        y_id = next(i.id for i in live1.interrupts if i.value == "y?")
        await app.ainvoke(E.Command(resume={y_id: "Y"}), cfg)
        live2 = await app.aget_state(cfg)
        record2 = await app.aget_state(live2.config)
        hist0 = [s async for s in app.aget_state_history(cfg, limit=1)][0]
        x_id = next(i.id for i in live2.interrupts if i.value == "x?")
        out = await app.ainvoke(E.Command(resume={x_id: "X"}), cfg)
        return _view(live2), _view(record2), _view(hist0), out

    differential(scenario)


def test_update_state_on_a_thread_paused_with_one_question_answered(differential):
    def scenario(E):
        calls = []
        app, cfg = _par_ask(E, calls), thread()
        app.invoke({"log": []}, cfg)
        x_id = next(i.id for i in app.get_state(cfg).interrupts if i.value == "x?")
        app.invoke(E.Command(resume={x_id: "X"}), cfg)
        res = attempt(lambda: app.update_state(cfg, {"log": ["human"]}, as_node="y"))
        st = app.get_state(cfg)
        calls.clear()
        out = capture(lambda: app.invoke(None, cfg))
        return res, _view(st), st.metadata, out, sorted(calls)

    differential(scenario)


# --- functional API ---------------------------------------------------------------------------------


def test_functional_workflow_replay_and_update_state_with_previous(differential):
    def scenario(E):
        calls = []

        @E.func.task
        def double(x):
            calls.append(("double", x))
            return x * 2

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(n, *, previous=None):
            calls.append(("wf", n, previous))
            total = double(n).result() + (previous or 0)
            return total

        cfg = thread()
        runs = [wf.invoke(1, cfg), wf.invoke(2, cfg)]
        hist = list(wf.get_state_history(cfg))
        second_input = next(s for s in hist if s.metadata["source"] == "input" and s.metadata["step"] > 0)
        calls.clear()
        replay = wf.invoke(None, second_input.config)
        replay_calls = list(calls)
        upd = attempt(lambda: wf.update_state(cfg, 100))
        st = wf.get_state(cfg)
        calls.clear()
        after = wf.invoke(5, cfg)
        return runs, hist, replay, replay_calls, upd, st.values, st.metadata, after, calls

    differential(scenario)


def test_functional_workflow_replay_of_an_interrupted_checkpoint_reuses_finished_tasks(differential):
    def scenario(E):
        calls = []

        @E.func.task
        def draft(topic):
            calls.append(("draft", topic))
            return f"essay about {topic}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(topic):
            text = draft(topic).result()
            verdict = E.interrupt({"review": text})
            return {"text": text, "verdict": verdict}

        cfg = thread()
        first = wf.invoke("cats", cfg)
        paused = wf.get_state(cfg)
        done = wf.invoke(E.Command(resume="ok"), cfg)
        calls.clear()
        replay = wf.invoke(None, paused.config)
        replay_calls = list(calls)
        fork = wf.invoke(E.Command(resume="no"), paused.config)
        return first, paused, done, replay, replay_calls, fork, calls, [s.metadata for s in wf.get_state_history(cfg)]

    differential(scenario)


# --- subgraphs and time travel ---------------------------------------------------------------------------


def _parent_with_asking_sub(E, calls):
    def inner1(s):
        calls.append("inner1")
        return {"log": ["inner1"]}

    def ask(s):
        calls.append("ask")
        return {"log": [f"ask:{E.interrupt('sub?')}"]}

    def inner2(s):
        calls.append("inner2")
        return {"log": ["inner2"]}

    class SubS(TypedDict, total=False):
        log: Annotated[list, operator.add]

    sub = E.StateGraph(SubS)
    sub.add_node("inner1", inner1)
    sub.add_node("ask", ask)
    sub.add_node("inner2", inner2)
    sub.add_edge(E.START, "inner1")
    sub.add_edge("inner1", "ask")
    sub.add_edge("ask", "inner2")

    def call_sub(s):
        calls.append("call_sub")
        out = sub_app.invoke({"log": []})
        return {"note": "+".join(out["log"])}

    sub_app = sub.compile()
    g = E.StateGraph(S)
    g.add_node("pre", lambda s: calls.append("pre") or {"log": ["pre"]})
    g.add_node("sub", sub_app)
    g.add_node("call_sub", call_sub)
    g.add_node("post", lambda s: calls.append("post") or {"log": ["post"]})
    g.add_edge(E.START, "pre")
    return g, sub_app


def _app_with_asking_sub(E, calls, via="sub", checkpointer=None):
    """pre -> via -> post compiled on a fresh thread; via is "sub" (the subgraph as a node) or
    "call_sub" (a node invoking it)."""
    g, _ = _parent_with_asking_sub(E, calls)
    g.add_edge("pre", via)
    g.add_edge(via, "post")
    return g.compile(checkpointer=E.InMemorySaver() if checkpointer is None else checkpointer), thread()


def test_replay_the_parent_checkpoint_of_a_paused_subgraph(differential):
    def scenario(E):
        calls = []
        app, cfg = _app_with_asking_sub(E, calls)
        app.invoke({"log": []}, cfg)
        paused = app.get_state(cfg, subgraphs=True)
        done = app.invoke(E.Command(resume="yes"), cfg)
        calls.clear()
        replay = app.invoke(None, paused.config)
        replay_calls = list(calls)
        now = app.get_state(cfg, subgraphs=True)
        calls.clear()
        again = app.invoke(E.Command(resume="again"), cfg)
        return paused, done, replay, replay_calls, now, again, calls

    differential(scenario)


def test_fork_the_parent_before_a_subgraph_node_runs_it_fresh(differential):
    def scenario(E):
        calls = []
        app, cfg = _app_with_asking_sub(E, calls)
        app.invoke({"log": []}, cfg)
        app.invoke(E.Command(resume="yes"), cfg)
        before_sub = next(s for s in app.get_state_history(cfg) if s.next == ("sub",)
                          and s.metadata["source"] == "loop")
        fork = app.update_state(before_sub.config, {"log": ["edited"]}, as_node="pre")
        calls.clear()
        first = app.invoke(None, fork)
        st = app.get_state(cfg, subgraphs=True)
        second = app.invoke(E.Command(resume="fork-answer"), cfg)
        return first, calls, [(t.name, t.state.values if t.state else None, t.state.next if t.state else None)
                              for t in st.tasks], second

    differential(scenario)


def test_update_state_as_a_subgraph_node_skips_the_subgraph(differential):
    def scenario(E):
        calls = []
        app, cfg = _app_with_asking_sub(E, calls)
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": ["sub-by-hand"]}, as_node="sub")
        st = app.get_state(cfg, subgraphs=True)
        calls.clear()
        out = app.invoke(None, cfg)
        return st.next, st.values, st.interrupts, st.tasks, out, calls

    differential(scenario)


def test_history_of_the_subgraph_namespace_and_a_fork_inside_the_subgraph(differential):
    def scenario(E):
        calls = []
        app, cfg = _app_with_asking_sub(E, calls)
        app.invoke({"log": []}, cfg)
        st = app.get_state(cfg, subgraphs=True)
        sub_cfg = st.tasks[0].state.config
        sub_hist = [(s.metadata["source"], s.metadata["step"], s.next, s.values) for s in app.get_state_history(sub_cfg)]
        upd = attempt(lambda: app.update_state(sub_cfg, {"log": ["patched-in-sub"]}))
        sub_now = app.get_state(sub_cfg)
        calls.clear()
        out = app.invoke(E.Command(resume="yes"), cfg)
        return sub_hist, upd, sub_now.values, sub_now.next, out, calls

    differential(scenario)


def test_subgraph_invoked_inside_a_node_replays_with_the_node(differential):
    def scenario(E):
        calls = []
        app, cfg = _app_with_asking_sub(E, calls, via="call_sub")
        first = app.invoke({"log": []}, cfg)
        paused = app.get_state(cfg, subgraphs=True)
        done = app.invoke(E.Command(resume="yes"), cfg)
        calls.clear()
        replay = app.invoke(None, paused.config)
        return first, paused, done, replay, calls

    differential(scenario)


# --- the same teaching sessions on the SQLite savers ----------------------------------------------------


def _session_parallel_questions(E, saver):
    calls = []
    app, cfg = _par_ask(E, calls, checkpointer=saver), thread()
    app.invoke({"log": []}, cfg)
    live1 = app.get_state(cfg)
    x_id = next(i.id for i in live1.interrupts if i.value == "x?")
    app.invoke(E.Command(resume={x_id: "X"}), cfg)
    live2 = app.get_state(cfg)
    record2 = app.get_state(live2.config)
    y_id = next(i.id for i in live2.interrupts if i.value == "y?")
    out = app.invoke(E.Command(resume={y_id: "Y"}), cfg)
    calls.clear()
    replay = app.invoke(None, live1.config)
    # parallel interrupts reach the output in completion order
    replay["__interrupt__"] = sorted(replay["__interrupt__"], key=lambda i: i.value)
    return live1, live2, record2, out, replay, sorted(calls), list(app.get_state_history(cfg))


def _session_subgraph(E, saver):
    calls = []
    app, cfg = _app_with_asking_sub(E, calls, checkpointer=saver)
    app.invoke({"log": []}, cfg)
    paused = app.get_state(cfg, subgraphs=True)
    done = app.invoke(E.Command(resume="yes"), cfg)
    before_sub = next(s for s in app.get_state_history(cfg) if s.next == ("sub",))
    fork = app.update_state(before_sub.config, {"log": ["edited"]}, as_node="pre")
    forked = app.invoke(None, fork)
    return paused, done, forked, app.get_state(cfg, subgraphs=True), list(app.get_state_history(cfg))


def _session_failed_send(E, saver):
    bad = {"topic": "dogs"}

    def work(arg):
        if arg["topic"] == bad["topic"]:
            raise RuntimeError(f"cannot handle {arg['topic']}")
        return {"results": [arg["topic"]]}

    g = E.StateGraph(FanState)
    g.add_node("plan", lambda s: {"topics": ["cats", "dogs", "owls"]})
    g.add_node("work", work)
    g.add_edge(E.START, "plan")
    g.add_conditional_edges("plan", lambda s: [E.Send("work", {"topic": t}) for t in s["topics"]], ["work"])
    app, cfg = g.compile(checkpointer=saver), thread()
    err = capture(lambda: app.invoke({}, cfg))
    live = app.get_state(cfg)
    bad["topic"] = None
    out = app.invoke(None, cfg)
    return err, _view(live), out, [_view(s) for s in app.get_state_history(cfg)]


def _session_stepping(E, saver):
    app, cfg = _loop(E, checkpointer=saver, interrupt_after="*"), thread()
    frames = [app.invoke({"count": 0, "log": []}, cfg)]
    for _ in range(10):
        st = app.get_state(cfg)
        frames.append(st)
        if not st.next:
            break
        frames.append(app.invoke(None, cfg))
    back = _at(app, cfg, lambda s: s.metadata["step"] == 2)
    fork = app.update_state(back.config, {"count": 2}, as_node="step")
    frames.append(app.invoke(None, fork))
    return frames, _tree(app, cfg), _digest(app, cfg, filter={"source": "update"}, limit=1)


SESSIONS = {
    "parallel_questions": _session_parallel_questions,
    "subgraph": _session_subgraph,
    "failed_send": _session_failed_send,
    "stepping": _session_stepping,
}


@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_teaching_session_on_the_sqlite_saver(differential, tmp_path, session):
    """LangGraph on its SqliteSaver against lgnb on lgnb's SqliteSaver."""

    def scenario(E):
        with _sqlite(E, tmp_path, session) as saver:
            return SESSIONS[session](E, saver)

    differential(scenario)


@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_teaching_session_lgnb_sqlite_against_langgraph_in_memory(differential, tmp_path, session):
    """The reference on InMemorySaver; lgnb on its own SqliteSaver (the saver it uses by default)."""

    def scenario(E):
        if E.root == "lgnb":
            with _sqlite(E, tmp_path, session) as saver:
                return SESSIONS[session](E, saver)
        return SESSIONS[session](E, E.InMemorySaver())

    differential(scenario)


def test_configurable_keys_and_run_metadata_land_in_metadata_and_snapshot_config_is_trimmed(differential):
    def scenario(E):
        app, cfg = _joke(E), thread()
        run_cfg = {"configurable": {**cfg["configurable"], "user_id": "u1", "n": 3, "flag": True,
                                    "model": {"a": 1}, "__private": "x"},
                   "metadata": {"m": 1}, "tags": ["lesson"], "run_name": "demo"}
        app.invoke({}, run_cfg)
        st = app.get_state(run_cfg)
        upd = app.update_state({**run_cfg, "metadata": {"who": "teacher"}}, {"topic": "y"})
        return (st.config, st.metadata, upd, app.get_state(upd).metadata,
                [s.metadata["step"] for s in app.get_state_history(cfg, filter={"user_id": "u1"})],
                [s.metadata["step"] for s in app.get_state_history(cfg, filter={"who": "teacher"})])

    differential(scenario)


def test_command_input_with_update_and_goto_then_replay_that_checkpoint(differential):
    """A Command(update=, goto=) sent to a finished thread; then the checkpoint it started
    from is replayed and inspected."""

    def scenario(E):
        calls = []
        app, cfg = _loop(E, calls), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        final = app.get_state(cfg)
        calls.clear()
        out = app.invoke(E.Command(update={"count": 1, "log": ["cmd"]}, goto="step"), cfg)
        cmd_calls = list(calls)
        hist = _digest(app, cfg)
        again = app.get_state(final.config)
        calls.clear()
        replay = app.invoke(None, final.config)
        return out, cmd_calls, hist, (again.values, again.next, again.tasks), replay, calls

    differential(scenario)


def test_command_update_sent_to_a_breakpoint_then_replay_the_breakpoint(differential):
    def scenario(E):
        calls = []
        app, cfg = _joke(E, calls, interrupt_before=["write_joke"]), thread()
        app.invoke({}, cfg)
        paused = app.get_state(cfg)
        out = app.invoke(E.Command(update={"topic": "geese"}), cfg)
        live = app.get_state(cfg)
        record = app.get_state(paused.config)
        calls.clear()
        replay = app.invoke(None, paused.config)
        return out, (live.values, live.next), (record.values, record.next), replay, calls, _digest(app, cfg)

    differential(scenario)


def test_update_state_as_a_node_whose_conditional_edge_sends(differential):
    def scenario(E):
        calls = []
        app, cfg = _fanout(E, calls), thread()
        app.invoke({"topics": []}, cfg)
        first = _at(app, cfg, lambda s: s.next == ("plan",))
        fork = app.update_state(first.config, {"topics": ["ants", "bats"]}, as_node="plan")
        st = app.get_state(fork)
        calls.clear()
        out = app.invoke(None, fork)
        return st.next, [t.path for t in st.tasks], st.values, out, sorted(calls, key=repr)

    differential(scenario)


def test_update_state_as_a_node_whose_conditional_edge_ends_the_run(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("agent", lambda s: {"count": s.get("count", 0) + 1})
        g.add_node("tool", lambda s: {"log": ["tool"]})
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda s: E.END if s["count"] >= 2 else "tool", {"tool": "tool", E.END: E.END})
        g.add_edge("tool", "agent")
        app, cfg = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["tool"]), thread()
        app.invoke({"count": 0, "log": []}, cfg)
        app.update_state(cfg, {"count": 5}, as_node="agent")
        st = app.get_state(cfg)
        return st.next, st.values, st.tasks, app.invoke(None, cfg), _digest(app, cfg)

    differential(scenario)


async def _asession_parallel_questions(E, saver):
    calls = []
    app, cfg = _par_ask(E, calls, checkpointer=saver), thread()
    await app.ainvoke({"log": []}, cfg)
    live1 = await app.aget_state(cfg)
    x_id = next(i.id for i in live1.interrupts if i.value == "x?")
    await app.ainvoke(E.Command(resume={x_id: "X"}), cfg)
    live2 = await app.aget_state(cfg)
    record2 = await app.aget_state(live2.config)
    y_id = next(i.id for i in live2.interrupts if i.value == "y?")
    out = await app.ainvoke(E.Command(resume={y_id: "Y"}), cfg)
    calls.clear()
    replay = await app.ainvoke(None, live1.config)
    replay["__interrupt__"] = sorted(replay["__interrupt__"], key=lambda i: i.value)
    hist = [s async for s in app.aget_state_history(cfg)]
    return live1, live2, record2, out, replay, sorted(calls), hist


async def _asession_subgraph(E, saver):
    calls = []
    app, cfg = _app_with_asking_sub(E, calls, checkpointer=saver)
    await app.ainvoke({"log": []}, cfg)
    paused = await app.aget_state(cfg, subgraphs=True)
    sub_cfg = paused.tasks[0].state.config
    sub_hist = [(s.metadata, s.next, s.values) async for s in app.aget_state_history(sub_cfg)]
    done = await app.ainvoke(E.Command(resume="yes"), cfg)
    before_sub = [s async for s in app.aget_state_history(cfg) if s.next == ("sub",)][0]
    fork = await app.aupdate_state(before_sub.config, {"log": ["edited"]}, as_node="pre")
    forked = await app.ainvoke(None, fork)
    now = await app.aget_state(cfg, subgraphs=True)
    return paused, sub_hist, done, forked, now, [s async for s in app.aget_state_history(cfg)]


ASESSIONS = {"parallel_questions": _asession_parallel_questions, "subgraph": _asession_subgraph}


@pytest.mark.parametrize("kind", ["memory", "async_sqlite"])
@pytest.mark.parametrize("session", sorted(ASESSIONS))
async def test_async_teaching_session(differential, tmp_path, session, kind):
    """Async twins: InMemorySaver on both; or each engine's own AsyncSqliteSaver."""

    async def scenario(E):
        if kind == "memory":
            return await ASESSIONS[session](E, E.InMemorySaver())
        async with _asqlite(E, tmp_path, f"a-{session}") as saver:
            return await ASESSIONS[session](E, saver)

    differential(scenario)


def test_debug_and_checkpoints_streams_with_subgraphs_on_a_replay(differential):
    def scenario(E):
        calls = []
        app, cfg = _app_with_asking_sub(E, calls)
        app.invoke({"log": []}, cfg)
        paused = app.get_state(cfg)
        app.invoke(E.Command(resume="yes"), cfg)
        debug = collect(lambda: app.stream(None, paused.config, stream_mode="debug", subgraphs=True))
        resumed = collect(lambda: app.stream(E.Command(resume="again"), cfg,
                                             stream_mode=["checkpoints", "tasks"], subgraphs=True, version="v2"))
        return debug, resumed

    differential(scenario)


def test_tasks_stream_shows_interrupts_and_errors_across_a_retry_and_a_replay(differential):
    def scenario(E):
        tries = []

        def flaky(s):
            tries.append(1)
            if len(tries) == 1:
                raise TimeoutError("slow backend")
            return {"log": ["flaky"]}

        def ask(s):
            return {"log": [f"ask:{E.interrupt({'q': 'sure?'})}"]}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(initial_interval=0.01, jitter=False,
                                                              retry_on=TimeoutError))
        g.add_node("ask", ask)
        g.add_edge(E.START, "flaky")
        g.add_edge("flaky", "ask")
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="tasks"))
        second = collect(lambda: app.stream(E.Command(resume="yes"), cfg, stream_mode="tasks"))
        start = _at(app, cfg, lambda s: s.next == ("flaky",))
        replay = collect(lambda: app.stream(None, start.config, stream_mode="tasks"))
        return first, second, replay, len(tries)

    differential(scenario)


def test_persistent_subgraph_called_in_a_loop_on_replay(differential):
    """A checkpointer=True subgraph invoked from a looping node and added as a node: its own
    memory accumulates across calls; replaying the parent from the middle."""

    def scenario(E):
        class Sub(TypedDict, total=False):
            seen: Annotated[list, operator.add]
            n: int

        class P(TypedDict, total=False):
            n: int
            out: Annotated[list, operator.add]

        sub = E.StateGraph(Sub)
        sub.add_node("rec", lambda s: {"seen": [s["n"]]})
        sub.add_edge(E.START, "rec")
        subapp = sub.compile(checkpointer=True)

        def call(s):
            r = subapp.invoke({"n": s["n"]})
            return {"out": [list(r["seen"])], "n": s["n"] + 1}

        g = E.StateGraph(P)
        g.add_node("call", call)
        g.add_edge(E.START, "call")
        g.add_conditional_edges("call", lambda s: "call" if s["n"] < 3 else E.END, ["call", E.END])
        app, cfg = g.compile(checkpointer=E.InMemorySaver()), thread()
        first = app.invoke({"n": 0, "out": []}, cfg)
        mid = _at(app, cfg, lambda s: s.metadata["step"] == 2)
        replay = app.invoke(None, mid.config)
        again = app.invoke({"n": 0}, cfg)

        g2 = E.StateGraph(Sub)
        g2.add_node("pre", lambda s: {"n": s.get("n", 0) + 1})
        g2.add_node("sub", subapp)
        g2.add_edge(E.START, "pre")
        g2.add_edge("pre", "sub")
        g2.add_conditional_edges("sub", lambda s: "pre" if s["n"] < 3 else E.END, ["pre", E.END])
        app2, cfg2 = g2.compile(checkpointer=E.InMemorySaver()), thread()
        first2 = app2.invoke({"n": 0}, cfg2)
        mid2 = [s for s in app2.get_state_history(cfg2) if s.next == ("sub",)][1]
        return first, mid.values, replay, again, first2, mid2.values, app2.invoke(None, mid2.config)

    differential(scenario)


def test_configs_from_stream_events_address_checkpoints_for_time_travel(differential):
    def scenario(E):
        app, cfg = _joke(E), thread()
        run_cfg = {"configurable": {**cfg["configurable"], "user_id": "u1"}}
        events = list(app.stream({}, run_cfg, stream_mode=["checkpoints", "debug"]))
        ck = [p for mode, p in events if mode == "checkpoints"]
        dbg = [p["payload"] for mode, p in events if mode == "debug" and p["type"] == "checkpoint"]
        second = ck[2]
        st = app.get_state(second["config"])
        return ([e["config"] for e in ck], [d["config"] for d in dbg], [e["parent_config"] for e in ck],
                st.values, st.next, app.invoke(None, dbg[2]["config"]), app.invoke(None, second["parent_config"]))

    differential(scenario)

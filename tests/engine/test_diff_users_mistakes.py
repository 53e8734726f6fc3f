"""The mistakes people make while prototyping an agent in a notebook, and the errors they get.

Each test is a program with one realistic mistake. Where LangGraph raises, lgnb raises the
same class at the same point and keeps LangGraph's text (``exc="extends"``: lgnb may add a
line naming the node and the fix). Where LangGraph gives no error, or a bare one, the test
asserts lgnb's clear error on lgnb only and its docstring says how LangGraph differs.

"Bad input loses nothing": when the mistake happens mid-run with a checkpointer, every
super-step that finished is in the history, compared with LangGraph's (`_history`).

Already covered elsewhere, so not repeated here: compile-time validation of edges, entry
points, duplicate and reserved node names (`test_diff_validation.py`); resuming what is not
paused, state methods without a checkpointer or a thread_id (`persistence/
test_persist_bad_input.py`); a single misspelt `stream_mode` (`test_diff_compat.py`).
"""

from __future__ import annotations

import ast
import asyncio
import operator
import re
from typing import Annotated, Any, Optional

import _diff
from _diff import acapture, attempt, capture, collect, exc_obs, normalize
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel
from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]
    x: int


CFG = {"configurable": {"thread_id": "notebook"}}
START_STATE = {"log": [], "x": 0}


def _task_error(error: Any) -> Any:
    """A task's saved error (the exception's repr once read back from a checkpoint) as
    ("raises", class, message), so `exc="extends"` compares its message like a raised one."""
    if isinstance(error, BaseException):
        return exc_obs(error)
    m = re.fullmatch(r"(\w+)\((.*)\)", error or "", re.S)
    if m:
        try:
            return ("raises", m.group(1), str(ast.literal_eval(m.group(2) or "''")))
        except (ValueError, SyntaxError):
            pass
    return error


def _history(app, cfg=CFG) -> list:
    """Every checkpoint of the thread: step, source, next, values, and each task's error."""
    return [
        (s.metadata["step"], s.metadata["source"], s.next, s.values,
         [(t.name, _task_error(t.error)) for t in s.tasks])
        for s in app.get_state_history(cfg)
    ]


def _outcome(app, inp, cfg=CFG) -> tuple:
    """What a run with a mistake leaves: its result or error, the thread's history, and
    what would run next (each captured: reading the state may fail too)."""
    return (
        capture(lambda: app.invoke(inp, cfg)),
        capture(lambda: _history(app, cfg)),
        capture(lambda: app.get_state(cfg).next),
    )


def _raw_history(app, cfg=CFG) -> list:
    """The saved checkpoints as the saver lists them (when a state cannot be read back)."""
    return [(c.metadata["step"], c.metadata["source"]) for c in app.checkpointer.list(cfg)]


def _pipeline(E, bad, *, checkpointer=False, schema=S):
    """START -> prep -> bad: the mistake is in the second super-step's node."""
    g = E.StateGraph(schema)
    g.add_node("prep", lambda s: {"log": ["prep"]})
    g.add_node("bad", bad)
    g.add_edge(E.START, "prep")
    g.add_edge("prep", "bad")
    return g.compile(checkpointer=E.InMemorySaver() if checkpointer else None)




def _logged():
    return _diff.logged_warnings(first_lines=False)


def _first_lines(lines: list[str]) -> list[str]:
    """LangGraph's one-line warnings: lgnb logs the same first line and adds help below."""
    return [line.splitlines()[0] for line in lines]


def _lgnb_only(scenario, check_reference, check_lgnb) -> None:
    """Run `scenario` on LangGraph (its documented behaviour, checked by `check_reference`)
    and on the candidate: lgnb's clear error is checked by `check_lgnb`; in the self-test
    (LangGraph on both sides) the candidate must match the reference."""
    ref = scenario(_diff.reference_engine())
    check_reference(ref)
    E = _diff.candidate_engine()
    got = scenario(E)
    if E.root == "langgraph":
        assert normalize(got) == normalize(ref)
    else:
        check_lgnb(got)


def _is_lgnb() -> bool:
    return _diff.candidate_engine().root == "lgnb"


# =========================================================================================
# what a node returns
# =========================================================================================


def test_node_returning_a_string_fails_with_the_node_named_and_the_first_step_kept(differential):
    """A node that returns its answer as a bare string: InvalidUpdateError, and the step
    that ran before it is still in the thread's history."""
    def scenario(E):
        app = _pipeline(E, lambda s: "done", checkpointer=True)
        return _outcome(app, START_STATE)

    obs = differential(scenario, exc="extends")
    assert obs[0][:2] == ("raises", "InvalidUpdateError") and obs[2] == ("bad",)
    if _is_lgnb():
        err = capture(lambda: _pipeline(_diff.candidate_engine(), lambda s: "done").invoke(START_STATE))
        assert "Node `bad` must return a dict of state keys" in err[2] and "{'log': ...}" in err[2]


def test_node_returning_its_messages_as_a_list_instead_of_a_dict(differential):
    """`return [ai_message]` from a chat node: InvalidUpdateError that says which node and
    shows the state key to put the list under."""
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", lambda s: [AIMessage("hello", id="a1")])
        g.add_edge(E.START, "chat")
        return capture(lambda: g.compile().invoke({"messages": [HumanMessage("hi", id="h1")]}))

    obs = differential(scenario, exc="extends")
    assert obs[:2] == ("raises", "InvalidUpdateError")
    if _is_lgnb():
        assert "`return {'messages': ...}`" in scenario(_diff.candidate_engine())[2]


def test_node_returning_none_because_it_forgot_return_updates_nothing(differential):
    """A node that mutates nothing and forgets `return`: no update, the run goes on, the
    `updates` stream shows `None` for it."""
    def scenario(E):
        def forgot(s):
            s["log"] + ["forgot"]  # noqa: B018 - the mistake: the result is dropped

        app = _pipeline(E, forgot)
        return app.invoke(START_STATE), collect(lambda: app.stream(START_STATE, stream_mode="updates"))

    differential(scenario, expect=({"log": ["prep"], "x": 0}, [{"prep": {"log": ["prep"]}}, {"bad": None}]))


def test_node_returning_a_misspelt_state_key_updates_nothing(differential):
    """`{"mesages": [...]}` (typo) on a MessagesState: LangGraph keeps only state keys, so
    the update is dropped; the stream shows what was kept."""
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", lambda s: {"mesages": [AIMessage("hello", id="a1")]})
        g.add_edge(E.START, "chat")
        app = g.compile()
        inp = {"messages": [HumanMessage("hi", id="h1")]}
        return app.invoke(inp), collect(lambda: app.stream(inp, stream_mode="updates"))

    differential(scenario)


def test_node_returning_a_message_object_is_an_error_in_lgnb():
    """Deliberate difference: `return AIMessage(...)` instead of `{"messages": [...]}`.
    LangGraph reads any annotated object as an update of its matching fields, finds none,
    and silently loses the message. lgnb raises InvalidUpdateError naming the node and the
    fix; the step before it stays in the history."""
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("prep", lambda s: {"messages": [HumanMessage("context", id="c1")]})
        g.add_node("chat", lambda s: AIMessage("the answer", id="a1"))
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        res = capture(lambda: app.invoke({"messages": [HumanMessage("q", id="h1")]}, CFG))
        return res, [m.content for m in app.get_state(CFG).values["messages"]], app.get_state(CFG).next

    def check_reference(ref):
        res, contents, nxt = ref
        assert not (isinstance(res, tuple) and res[0] == "raises")
        assert contents == ["q", "context"] and nxt == ()  # the answer is gone, silently

    def check_lgnb(got):
        res, contents, nxt = got
        assert res[:2] == ("raises", "InvalidUpdateError"), res
        assert res[2].startswith("Expected dict, got AIMessage(")
        assert "Node `chat` returned an AIMessage" in res[2]
        assert "`return {'messages': [message]}`" in res[2]
        assert contents == ["q", "context"] and nxt == ("chat",)  # prep's step kept; chat to retry

    _lgnb_only(scenario, check_reference, check_lgnb)


class Plan(BaseModel):
    steps: list[str]


class PlanState(TypedDict, total=False):
    question: str
    plan: Plan


def test_node_returning_its_structured_output_object_is_an_error_in_lgnb():
    """Deliberate difference: a planner node returns the `Plan` a structured-output model
    gave it instead of `{"plan": plan}`. LangGraph matches the object's fields (`steps`)
    against the state keys, finds none, and drops the plan; lgnb raises InvalidUpdateError
    listing both and showing the dict to return."""
    def scenario(E):
        g = E.StateGraph(PlanState)
        g.add_node("planner", lambda s: Plan(steps=["search", "answer"]))
        g.add_edge(E.START, "planner")
        return capture(lambda: g.compile().invoke({"question": "why?"}))

    def check_reference(ref):
        assert ref == {"question": "why?"}

    def check_lgnb(got):
        assert got[:2] == ("raises", "InvalidUpdateError"), got
        assert "Node `planner` returned a Plan object whose fields (steps)" in got[2]
        assert "(question, plan)" in got[2] and "`return {'question': <the Plan>}`" in got[2]

    _lgnb_only(scenario, check_reference, check_lgnb)


def test_returned_object_sharing_a_field_with_the_state_is_still_an_update(differential):
    """The rule above only refuses objects that would update nothing: a model sharing a
    field with the state updates that key, as in LangGraph."""
    class Answer(BaseModel):
        x: int
        reasoning: str = ""

    def scenario(E):
        return _pipeline(E, lambda s: Answer(x=7, reasoning="because")).invoke(START_STATE)

    differential(scenario, expect={"log": ["prep"], "x": 7})


def test_node_with_an_extra_required_parameter(differential):
    """`def node(state, llm)`: the engine passes only the state (or config/runtime/...
    by name), so Python's TypeError names the missing argument."""
    def scenario(E):
        def node(state, llm):
            return {"x": 1}

        return capture(lambda: _pipeline(E, node).invoke(START_STATE))

    differential(scenario)


# =========================================================================================
# routing: conditional edges, Send, Command
# =========================================================================================


def _routed(E, router, path_map=None, *, checkpointer=False):
    g = E.StateGraph(S)
    g.add_node("draft", lambda s: {"log": ["draft"]})
    g.add_node("review", lambda s: {"log": ["review"]})
    g.add_node("publish", lambda s: {"log": ["publish"]})
    g.add_edge(E.START, "draft")
    g.add_edge("draft", "review")
    if path_map is None:
        g.add_conditional_edges("review", router)
    else:
        g.add_conditional_edges("review", router, path_map)
    return g.compile(checkpointer=E.InMemorySaver() if checkpointer else None)


def test_router_returning_a_name_missing_from_its_path_map_keeps_the_history(differential):
    """The router returns "approve" but the path map says "approved": a KeyError naming the
    value; both finished steps are saved, the last one with `review` to run again."""
    def scenario(E):
        app = _routed(E, lambda s: "approve", {"approved": "publish", "rejected": E.END}, checkpointer=True)
        return _outcome(app, START_STATE)

    obs = differential(scenario, exc="extends")
    assert obs[0] == ("raises", "KeyError", "'approve'") and obs[1][0][2] == ("review",)
    if _is_lgnb():
        err = scenario(_diff.candidate_engine())[0][2]
        assert "not in its path_map ['approved', 'rejected']" in err


def test_router_that_falls_through_its_ifs_returns_none(differential):
    """An if/elif router without an else returns None for an unexpected state: ValueError,
    finished steps kept."""
    def scenario(E):
        def route(s):
            if s["x"] > 10:
                return "publish"
            elif s["x"] < 0:
                return E.END

        app = _routed(E, route, checkpointer=True)
        return _outcome(app, START_STATE)

    obs = differential(scenario, exc="extends")
    assert obs[0] == ("raises", "ValueError", "Branch did not return a valid destination")


def test_router_returning_a_misspelt_node_name_ends_the_run_with_a_warning(differential):
    """No path map and a typo ("publsh"): LangGraph logs that the write to an unknown
    channel is ignored and the run ends there. lgnb does the same, and its warning says
    which node routed where and lists the graph's nodes."""
    def scenario(E):
        app = _routed(E, lambda s: "publsh")
        with _logged() as lines:
            out = app.invoke(START_STATE)
        return out, _first_lines(lines)

    differential(scenario, expect=(
        {"log": ["draft", "review"], "x": 0},
        ["Task review with path ('__pregel_pull', 'review') wrote to unknown channel branch:to:publsh, ignoring it."],
    ))
    if _is_lgnb():
        with _logged() as lines:
            _routed(_diff.candidate_engine(), lambda s: "publsh").invoke(START_STATE)
        assert "Node `review` routed to 'publsh'" in lines[0], lines
        assert "(nodes: draft, review, publish)" in lines[0], lines


def test_router_returning_a_bool_without_a_path_map_goes_nowhere(differential):
    """`return state["x"] > 0` with no path map: a bool is not a node name; the run ends
    after the router's node, with the warning."""
    def scenario(E):
        app = _routed(E, lambda s: s["x"] > 0)
        with _logged() as lines:
            out = app.invoke({"log": [], "x": 1})
        return out, _first_lines(lines)

    differential(scenario, expect=(
        {"log": ["draft", "review"], "x": 1},
        ["Task review with path ('__pregel_pull', 'review') wrote to unknown channel branch:to:True, ignoring it."],
    ))


def test_send_to_a_misspelt_worker_is_dropped_with_a_warning(differential):
    """A map step sends to "sumarize" (typo): LangGraph drops each packet with a warning.
    lgnb's warning adds the graph's node names and how to write a Send."""
    def build(E):
        g = E.StateGraph(S)
        g.add_node("split", lambda s: {"log": ["split"]})
        g.add_node("summarize", lambda s: {"log": [f"sum{s['x']}"]})
        g.add_edge(E.START, "split")
        g.add_conditional_edges("split", lambda s: [E.Send("sumarize", {"x": i}) for i in range(2)])
        return g.compile()

    def scenario(E):
        with _logged() as lines:
            out = build(E).invoke(START_STATE)
        return out, _first_lines(lines)

    differential(scenario, expect=(
        {"log": ["split"], "x": 0},
        ["Ignoring unknown node name sumarize in pending sends"] * 2,
    ))
    if _is_lgnb():
        with _logged() as lines:
            build(_diff.candidate_engine()).invoke(START_STATE)
        assert "'sumarize' names no node of this graph (nodes: split, summarize)" in lines[0], lines


def test_send_given_the_node_function_instead_of_its_name(differential):
    """`Send(summarize, ...)` with the function object: not a node name, so the packet is
    dropped (with the warning) and the worker never runs."""
    def scenario(E):
        def summarize(s):
            return {"log": ["summarized"]}

        g = E.StateGraph(S)
        g.add_node("summarize", summarize)
        g.add_conditional_edges(E.START, lambda s: [E.Send(summarize, {"x": 1})])
        with _logged() as lines:
            out = g.compile().invoke(START_STATE)
        return out, _first_lines(lines)

    obs = differential(scenario)
    assert obs[0] == START_STATE and "Ignoring unknown node name <function" in obs[1][0]


def test_command_goto_a_node_that_does_not_exist_ends_with_a_warning(differential):
    """`Command(goto="respond")` where the node is called "responder": the update is kept,
    the route is ignored with a warning, and the run ends; the history shows it."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("triage", lambda s: E.Command(update={"log": ["triage"]}, goto="respond"))
        g.add_node("responder", lambda s: {"log": ["responder"]})
        g.add_edge(E.START, "triage")
        app = g.compile(checkpointer=E.InMemorySaver())
        with _logged() as lines:
            out = app.invoke(START_STATE, CFG)
        return out, _first_lines(lines), capture(lambda: _history(app))

    obs = differential(scenario)
    assert obs[0] == {"log": ["triage"], "x": 0}
    if _is_lgnb():
        E = _diff.candidate_engine()
        g = E.StateGraph(S)
        g.add_node("triage", lambda s: E.Command(goto="respond"))
        g.add_node("responder", lambda s: {})
        g.add_edge(E.START, "triage")
        with _logged() as lines:
            g.compile().invoke(START_STATE)
        assert "Node `triage` routed to 'respond'" in lines[0] and "responder" in lines[0], lines
        assert "Command(graph=Command.PARENT, goto=...)" in lines[0], lines


def test_command_goto_given_the_node_function(differential):
    """`Command(goto=responder)` with the function: LangGraph's TypeError ("'function'
    object is not iterable"); lgnb adds the node and `goto='responder'`."""
    def scenario(E):
        def responder(s):
            return {"log": ["responder"]}

        g = E.StateGraph(S)
        g.add_node("triage", lambda s: E.Command(goto=responder))
        g.add_node("responder", responder)
        g.add_edge(E.START, "triage")
        app = g.compile(checkpointer=E.InMemorySaver())
        return _outcome(app, START_STATE)

    obs = differential(scenario, exc="extends")
    assert obs[0] == ("raises", "TypeError", "'function' object is not iterable")
    if _is_lgnb():
        err = scenario(_diff.candidate_engine())[0][2]
        assert "Node `triage` returned `Command(goto=<function responder>)`" in err
        assert "`Command(goto='responder')`" in err


def test_command_goto_without_declared_destinations_runs_but_is_not_drawn(differential):
    """A node routing with `Command(goto=...)` but added without `destinations=` (or a
    `Command[Literal[...]]` hint): the run follows the goto, but the drawing cannot know
    the edge: it shows `triage` going to END and `responder` unreachable, without edges."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("triage", lambda s: E.Command(update={"log": ["triage"]}, goto="responder"))
        g.add_node("responder", lambda s: {"log": ["responder"]})
        g.add_edge(E.START, "triage")
        app = g.compile()
        edges = sorted((e.source, e.target, e.conditional) for e in app.get_graph().edges)
        return app.invoke(START_STATE), edges

    differential(scenario, expect=(
        {"log": ["triage", "responder"], "x": 0},
        [("__start__", "triage", False), ("triage", "__end__", False)],
    ))


def test_two_parallel_nodes_writing_one_plain_key_keep_the_earlier_step(differential):
    """Two branches both set `x` (no reducer) in the same super-step: InvalidUpdateError.
    Both branches finished, so their writes are saved with the step before the fan-out
    (reading the state applies them again, and raises again)."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("prep", lambda s: {"log": ["prep"]})
        g.add_node("left", lambda s: {"x": 1})
        g.add_node("right", lambda s: {"x": 2})
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "left")
        g.add_edge("prep", "right")
        app = g.compile(checkpointer=E.InMemorySaver())
        return _outcome(app, START_STATE)

    obs = differential(scenario, exc="extends")
    assert obs[0][:2] == ("raises", "InvalidUpdateError") and "At key 'x'" in obs[0][2]
    assert obs[1][0][2] == ("left", "right") and obs[2] == obs[0]


# =========================================================================================
# config, checkpointer, thread
# =========================================================================================


def test_thread_id_at_the_top_level_of_the_config_is_read_as_configurable(differential):
    """`invoke(x, {"thread_id": "1"})` (no "configurable"): LangGraph's ensure_config moves
    unknown top-level keys into `configurable`, so the run is checkpointed on thread "1"
    and nodes see the thread id."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("who", lambda s: {"log": [E.get_config()["configurable"].get("thread_id")]})
        g.add_edge(E.START, "who")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = app.invoke(START_STATE, {"thread_id": "1"})
        streamed = collect(lambda: app.stream({"log": ["again"]}, {"thread_id": "1", "user": "ann"},
                                              stream_mode="updates"))
        return first, streamed, app.get_state({"configurable": {"thread_id": "1"}}).values

    differential(scenario, expect=(
        {"log": ["1"], "x": 0},
        [{"who": {"log": ["1"]}}],
        {"log": ["1", "again", "1"], "x": 0},
    ))


def test_state_methods_given_a_top_level_thread_id_say_where_it_goes():
    """Deliberate difference: LangGraph's get_state and update_state do not move a
    top-level `thread_id` (invoke and get_state_history do) and fail with a bare KeyError
    ('configurable'); lgnb raises ValueError showing `{'configurable': {'thread_id': ...}}`.
    The history is listed on both."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver())
        app.invoke(START_STATE, {"thread_id": "1"})
        top = {"thread_id": "1"}
        return (
            capture(lambda: app.get_state(top)),
            capture(lambda: [s.values for s in app.get_state_history(top)]),
            capture(lambda: app.update_state(top, {"x": 5}, as_node="a")),
            app.get_state({"configurable": {"thread_id": "1"}}).values,
        )

    history = [{"log": ["a"], "x": 0}, {"log": [], "x": 0}, {"log": []}]

    def check_reference(ref):
        assert ref[0] == ref[2] == ("raises", "KeyError", "'configurable'")
        assert ref[1] == history and ref[3] == {"log": ["a"], "x": 0}

    def check_lgnb(got):
        assert got[1] == history
        for err in (got[0], got[2]):
            assert err[:2] == ("raises", "ValueError"), err
            assert "`thread_id` is at the top level of the config" in err[2]
            assert "{'configurable': {'thread_id': '1'}}" in err[2]
        assert got[3] == {"log": ["a"], "x": 0}  # nothing written by the failed update

    _lgnb_only(scenario, check_reference, check_lgnb)


def test_compiling_with_the_saver_class_instead_of_an_instance(differential):
    """`compile(checkpointer=InMemorySaver)` (no parentheses): LangGraph's TypeError at
    compile time; lgnb adds that it is the class and shows `InMemorySaver()`."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", lambda s: {})
        g.add_edge(E.START, "a")
        return attempt(lambda: g.compile(checkpointer=E.InMemorySaver))

    obs = differential(scenario, exc="extends")
    assert obs[:2] == ("raises", "TypeError") and "Received ABCMeta" in obs[2]
    if _is_lgnb():
        assert "`compile(checkpointer=InMemorySaver())`" in scenario(_diff.candidate_engine())[2]


def test_config_keys_passed_as_keyword_arguments_are_refused_in_lgnb():
    """Deliberate difference: `invoke(x, recursion_limit=3)` and `stream(x, thread_id=...)`.
    LangGraph ignores unknown keywords, so the limit silently does not apply; lgnb raises
    TypeError saying where each key goes in the config."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("loop", lambda s: {"x": s["x"] + 1})
        g.add_edge(E.START, "loop")
        g.add_conditional_edges("loop", lambda s: E.END if s["x"] >= 5 else "loop")
        app = g.compile()
        return (
            capture(lambda: app.invoke(START_STATE, recursion_limit=3)),
            capture(lambda: list(app.stream(START_STATE, thread_id="t1"))),
        )

    def check_reference(ref):
        assert ref[0] == {"log": [], "x": 5}  # 5 steps ran: the limit of 3 was ignored
        assert len(ref[1]) == 5

    def check_lgnb(got):
        limit, thread = got
        assert limit[:2] == ("raises", "TypeError"), limit
        assert "recursion_limit is a config key: `invoke(input, {'recursion_limit': ...})`" in limit[2]
        assert thread[:2] == ("raises", "TypeError"), thread
        assert "`stream(input, {'configurable': {'thread_id': ...}})`" in thread[2]

    _lgnb_only(scenario, check_reference, check_lgnb)


def test_misspelt_mode_in_a_stream_mode_list_is_refused_before_anything_is_saved():
    """Deliberate difference: `stream_mode=["updates", "message"]` (missing s). LangGraph
    streams the valid modes and silently drops the typo; lgnb raises ValueError naming it
    before the run starts, so the thread stays empty."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = collect(lambda: app.stream(START_STATE, CFG, stream_mode=["updates", "message"]))
        return out, len(list(app.get_state_history(CFG)))

    def check_reference(ref):
        assert ref == ([("updates", {"a": {"log": ["a"]}})], 3)

    def check_lgnb(got):
        out, saved = got
        assert out[0][:2] == ("raises", "ValueError") and "Unknown stream_mode ['message']" in out[0][2]
        assert "'messages'" in out[0][2] and saved == 0

    _lgnb_only(scenario, check_reference, check_lgnb)


def test_interrupt_without_a_checkpointer_streams_the_question_but_cannot_resume(differential):
    """A review node calls `interrupt()` in a graph compiled without a checkpointer: the
    stream ends with the `__interrupt__` update, and resuming raises RuntimeError."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("draft", lambda s: {"log": ["draft"]})
        g.add_node("review", lambda s: {"log": [E.interrupt({"question": "ship it?"})]})
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "review")
        app = g.compile()
        first = collect(lambda: app.stream(START_STATE, stream_mode="updates"))
        return first, collect(lambda: app.stream(E.Command(resume="yes"), stream_mode="updates"))

    obs = differential(scenario, exc="extends")
    assert obs[1] == [("raises", "RuntimeError", "Cannot use Command(resume=...) without checkpointer")]


def test_update_state_as_a_node_that_does_not_exist(differential):
    """`update_state(..., as_node="reviewer")` where the node is "review": LangGraph's
    InvalidUpdateError; lgnb lists the nodes. Nothing is written."""
    def scenario(E):
        app = _routed(E, lambda s: E.END, checkpointer=True)
        app.invoke(START_STATE, CFG)
        res = capture(lambda: app.update_state(CFG, {"x": 1}, as_node="reviewer"))
        return res, len(list(app.get_state_history(CFG)))

    obs = differential(scenario, exc="extends")
    assert obs[0] == ("raises", "InvalidUpdateError", "Node reviewer does not exist")
    if _is_lgnb():
        assert "one of 'draft', 'review', 'publish'" in scenario(_diff.candidate_engine())[0][2]


def test_update_state_without_as_node_after_a_parallel_step(differential):
    """The last step ran two nodes, so which one the update stands for is ambiguous."""
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("left", lambda s: {"log": ["left"]})
        g.add_node("right", lambda s: {"log": ["right"]})
        g.add_edge(E.START, "left")
        g.add_edge(E.START, "right")
        app = g.compile(checkpointer=E.InMemorySaver())
        app.invoke(START_STATE, CFG)
        return capture(lambda: app.update_state(CFG, {"x": 3})), app.get_state(CFG).values

    obs = differential(scenario, exc="extends")
    assert obs[0] == ("raises", "InvalidUpdateError", "Ambiguous update, specify as_node")


def test_update_state_with_a_pair_instead_of_a_dict(differential):
    """`update_state(cfg, ("x", 3), as_node="a")`: InvalidUpdateError; lgnb says it is the
    update_state values (not a node's return) and shows a dict."""
    def scenario(E):
        app = _pipeline(E, lambda s: {"x": 1}, checkpointer=True)
        app.invoke(START_STATE, CFG)
        return capture(lambda: app.update_state(CFG, ("x", 3), as_node="bad")), app.get_state(CFG).values

    obs = differential(scenario, exc="extends")
    assert obs[0][:2] == ("raises", "InvalidUpdateError")
    if _is_lgnb():
        err = scenario(_diff.candidate_engine())[0][2]
        assert "`update_state(config, values, as_node='bad')`: values must be a dict" in err


# =========================================================================================
# input and state schema
# =========================================================================================


def test_invoking_a_messages_graph_with_a_bare_list_of_messages(differential):
    """`app.invoke([HumanMessage(...)])` instead of `{"messages": [...]}`: InvalidUpdateError
    before any node runs; lgnb says it is the graph input and shows `invoke({'messages': ...})`."""
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", lambda s: {"messages": [AIMessage("hello", id="a1")]})
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        return _outcome(app, [HumanMessage("hi", id="h1")])

    obs = differential(scenario, exc="extends")
    assert obs[0][:2] == ("raises", "InvalidUpdateError")
    if _is_lgnb():
        err = scenario(_diff.candidate_engine())[0][2]
        assert "The graph input must be a dict of state keys, e.g. `invoke({'messages': ...})`" in err
        assert "Node `__start__`" not in err


def test_pydantic_state_input_missing_a_required_field(differential):
    """A pydantic state with a required `question`, invoked without it: pydantic's
    ValidationError, before any step."""
    def scenario(E):
        class Q(BaseModel):
            question: str
            answer: Optional[str] = None

        g = E.StateGraph(Q)
        g.add_node("answer", lambda s: {"answer": s.question.upper()})
        g.add_edge(E.START, "answer")
        app = g.compile(checkpointer=E.InMemorySaver())
        return capture(lambda: app.invoke({"answer": "draft"}, CFG)), _raw_history(app)

    obs = differential(scenario)
    assert obs[0][1] == "ValidationError" and "question\n  Field required" in obs[0][2]


def test_pydantic_node_writing_a_wrong_type_fails_the_next_node_and_keeps_its_checkpoints(differential):
    """A node writes `{"count": "three"}` to an `int` field: the write is not validated; the
    next node's input is, and fails. The finished steps are saved, the bad value with them."""
    def scenario(E):
        class Counter(BaseModel):
            count: int = 0
            note: str = ""

        g = E.StateGraph(Counter)
        g.add_node("parse", lambda s: {"count": "three"})
        g.add_node("report", lambda s: {"note": f"{s.count} items"})
        g.add_edge(E.START, "parse")
        g.add_edge("parse", "report")
        app = g.compile(checkpointer=E.InMemorySaver())
        return capture(lambda: app.invoke({"count": 1}, CFG)), _raw_history(app)

    obs = differential(scenario)
    assert obs[0][1] == "ValidationError" and obs[1] == [(1, "loop"), (0, "loop"), (-1, "input")]


def merge(a: dict, b: dict) -> dict:
    return {**a, **b}


class Notes(TypedDict):
    notes: Annotated[dict, merge]


def test_reducer_that_raises_mid_run_keeps_the_earlier_steps(differential):
    """A dict-merge reducer given a list by the second node: the reducer's TypeError. The
    first node's step is saved with `second` next; the write that broke the reducer is
    kept as a pending write, so reading the state raises the same error."""
    def scenario(E):
        g = E.StateGraph(Notes)
        g.add_node("first", lambda s: {"notes": {"k": 1}})
        g.add_node("second", lambda s: {"notes": ["oops"]})
        g.add_edge(E.START, "first")
        g.add_edge("first", "second")
        app = g.compile(checkpointer=E.InMemorySaver())
        return _outcome(app, {"notes": {}})

    obs = differential(scenario)
    assert obs[0] == ("raises", "TypeError", "'list' object is not a mapping")
    assert obs[1][0][2] == ("second",) and obs[2] == obs[0]


def test_agent_loop_that_never_stops_hits_the_recursion_limit_with_every_step_saved(differential):
    """A model that always asks for a tool: agent and tools alternate until the limit;
    GraphRecursionError names the limit, and every step that ran is in the history."""
    def scenario(E):
        calls = iter(range(100))

        def agent(s):
            i = next(calls)
            return {"messages": [AIMessage("", id=f"ai{i}", tool_calls=[{"name": "search", "args": {}, "id": f"c{i}"}])]}

        def tools(s):
            call = s["messages"][-1].tool_calls[0]
            return {"messages": [ToolMessage("nothing found", tool_call_id=call["id"], id=f"t{call['id']}")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", tools)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else E.END)
        g.add_edge("tools", "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        res = capture(lambda: app.invoke({"messages": [HumanMessage("find it", id="h")]}, {**CFG, "recursion_limit": 6}))
        steps = [(s.metadata["step"], s.next, len(s.values["messages"])) for s in app.get_state_history(CFG)]
        return res, steps

    obs = differential(scenario)
    assert obs[0][:2] == ("raises", "GraphRecursionError") and "Recursion limit of 6 reached" in obs[0][2]
    assert [s[0] for s in obs[1]] == [6, 5, 4, 3, 2, 1, 0, -1]


# =========================================================================================
# sync and async
# =========================================================================================


def test_async_node_run_with_invoke_keeps_the_finished_steps(differential):
    """An `async def` node run with `invoke`: LangGraph's TypeError (no synchronous
    function); lgnb adds the node and the fix. The step before it is saved."""
    def scenario(E):
        async def fetch_weather(s):
            return {"log": ["sunny"]}

        app = _pipeline(E, fetch_weather, checkpointer=True)
        return _outcome(app, START_STATE)

    obs = differential(scenario, exc="extends")
    assert obs[0][:2] == ("raises", "TypeError") and 'No synchronous function provided to "bad"' in obs[0][2]
    if _is_lgnb():
        err = scenario(_diff.candidate_engine())[0][2]
        assert "Node `bad` is an async function: run the graph with `ainvoke`" in err


def test_async_router_run_with_invoke(differential):
    """An `async def` path function (it awaits a classifier) run with `invoke`: TypeError
    naming the function; lgnb adds the node it follows."""
    def scenario(E):
        async def classify(s):
            return "publish"

        return capture(lambda: _routed(E, classify).invoke(START_STATE))

    obs = differential(scenario, exc="extends")
    assert 'No synchronous function provided to "classify"' in obs[2]
    if _is_lgnb():
        err = scenario(_diff.candidate_engine())[2]
        assert "The conditional edge `classify` after node `review` is async" in err


def test_async_task_called_from_a_sync_entrypoint_with_invoke(differential):
    """Functional API: a sync `@entrypoint` calls an `async def` `@task` and is run with
    `invoke`: RuntimeError where the call is made (the entrypoint's task holds the error)."""
    def scenario(E):
        @E.func.task
        async def fetch(x):
            return x * 2

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def workflow(x):
            return fetch(x).result()

        res = capture(lambda: workflow.invoke(3, CFG))
        return res, [(s.metadata["step"], [(t.name, _task_error(t.error)) for t in s.tasks])
                for s in workflow.get_state_history(CFG)]

    obs = differential(scenario, exc="extends")
    assert obs[0] == ("raises", "RuntimeError", "In an sync context async tasks cannot be called")
    if _is_lgnb():
        assert "Task `fetch` is an async function" in scenario(_diff.candidate_engine())[0][2]


def test_async_task_called_from_a_sync_entrypoint_under_ainvoke_runs(differential):
    """The same sync entrypoint run with `ainvoke`/`astream`: the async task runs on the
    run's event loop and its result comes back to the sync caller."""
    async def scenario(E):
        @E.func.task
        async def fetch(x):
            await asyncio.sleep(0)
            return x * 2

        @E.func.entrypoint()
        def workflow(xs):
            futures = [fetch(x) for x in xs]
            return [f.result() for f in futures]

        out = await acapture(lambda: workflow.ainvoke([1, 2]))
        chunks = [c async for c in workflow.astream([3], stream_mode="updates")]
        return out, chunks

    differential(scenario, expect=([2, 4], [{"fetch": 6}, {"workflow": [6]}]))


def test_calling_a_node_function_directly_in_a_cell_to_try_it(differential):
    """Trying a review node on its own in a cell: `interrupt()` and `get_stream_writer()`
    only work inside a running graph; LangGraph's RuntimeError, lgnb says which calls and
    where they work."""
    def scenario(E):
        def review(state):
            answer = E.interrupt({"draft": state["draft"]})
            return {"approved": answer == "yes"}

        def progress(state):
            E.get_stream_writer()({"step": "working"})
            return {}

        return capture(lambda: review({"draft": "hello"})), capture(lambda: progress({}))

    obs = differential(scenario, exc="extends")
    assert obs[0] == ("raises", "RuntimeError", "Called get_config outside of a runnable context")
    if _is_lgnb():
        assert "only work inside a node while the graph runs" in scenario(_diff.candidate_engine())[0][2]


# =========================================================================================
# messages and tools
# =========================================================================================


def test_messages_input_with_a_dict_message_of_an_unknown_role(differential):
    """`{"role": "bot", ...}` in the input messages: LangChain's ValueError listing the
    roles, raised on the input, before any node."""
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", lambda s: {"messages": [AIMessage("hello", id="a1")]})
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        res = capture(lambda: app.invoke({"messages": [{"role": "bot", "content": "hi"}]}, CFG))
        return res, capture(lambda: _history(app))

    obs = differential(scenario)
    assert obs[0][:2] == ("raises", "ValueError") and "Unexpected message type: 'bot'" in obs[0][2]


def test_node_appending_a_dict_message_with_a_bad_role_keeps_the_input_step(differential):
    """A node returns `{"messages": [{"role": "model", ...}]}`: the reducer's ValueError;
    the input step is kept with `chat` next (reading the state re-applies the write)."""
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", lambda s: {"messages": [{"role": "model", "content": "hello"}]})
        g.add_edge(E.START, "chat")
        app = g.compile(checkpointer=E.InMemorySaver())
        res = capture(lambda: app.invoke({"messages": [{"role": "user", "content": "hi", "id": "h1"}]}, CFG))
        return res, capture(lambda: _history(app)), capture(lambda: app.get_state(CFG).next)

    obs = differential(scenario)
    assert "Unexpected message type: 'model'" in obs[0][2] and obs[1][0][2] == ("chat",)


def test_add_messages_given_a_message_dict_without_content(differential):
    """`{"role": "assistant"}` with no content, to the reducer directly and from a node."""
    def scenario(E):
        direct = capture(lambda: E.add_messages([HumanMessage("hi", id="h1")], [{"role": "assistant"}]))
        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", lambda s: {"messages": [{"role": "assistant", "tool_calls": []}]})
        g.add_edge(E.START, "chat")
        return direct, capture(lambda: g.compile().invoke({"messages": [HumanMessage("hi", id="h1")]}))

    obs = differential(scenario)
    assert all("must contain 'role' and 'content' keys" in r[2] for r in obs)


def _tool_graph(E):
    from langgraph.prebuilt import ToolNode

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    g = E.StateGraph(E.MessagesState)
    g.add_node("tools", ToolNode([add]))
    g.add_edge(E.START, "tools")
    return g.compile(checkpointer=E.InMemorySaver())


def test_tool_node_run_on_a_human_message(differential):
    """A ToolNode wired straight after START gets the user's message: ValueError ("No
    AIMessage found in input"); the input step is saved."""
    def scenario(E):
        app = _tool_graph(E)
        res = capture(lambda: app.invoke({"messages": [HumanMessage("add 1 and 2", id="h1")]}, CFG))
        return res, capture(lambda: _history(app))

    obs = differential(scenario)
    assert obs[0] == ("raises", "ValueError", "No AIMessage found in input")


def test_tool_node_run_on_an_ai_message_without_tool_calls_adds_nothing(differential):
    """The model answered in text (no tool calls) but the graph always goes to the tools:
    the ToolNode adds no message."""
    def scenario(E):
        app = _tool_graph(E)
        inp = {"messages": [HumanMessage("hi", id="h1"), AIMessage("hello!", id="a1")]}
        return [m.id for m in app.invoke(inp, CFG)["messages"]], collect(
            lambda: app.stream(inp, {"configurable": {"thread_id": "other"}}, stream_mode="updates"))

    differential(scenario)


def test_structured_output_parse_error_surfaces_from_the_node_with_its_note(differential):
    """A planner's structured-output call fails to parse (OutputParserException caused by
    pydantic's ValidationError): the exception reaches the caller unchanged, with the
    "During task with name ..." note, and the earlier step is saved."""
    from langchain_core.exceptions import OutputParserException

    def planner(s):
        try:
            Plan.model_validate({"steps": "search the web"})
        except Exception as e:
            raise OutputParserException(f"Failed to parse Plan from completion: {e}") from e

    def scenario(E):
        app = _pipeline(E, planner, checkpointer=True)
        try:
            app.invoke(START_STATE, CFG)
        except Exception as e:
            raised: Any = (type(e).__name__, str(e), getattr(e, "__notes__", None), type(e.__cause__).__name__)
        else:
            raised = "no error"
        return raised, capture(lambda: _history(app))

    obs = differential(scenario)
    assert obs[0][0] == "OutputParserException" and obs[0][3] == "ValidationError"
    assert obs[0][2][0].startswith("During task with name 'bad'")



def _top_level_handoff(E):
    class S(TypedDict):
        x: int

    def hand_off(s):
        return E.Command(graph=E.Command.PARENT, goto="other_agent", update={"x": 1})

    g = E.StateGraph(S)
    g.add_node("hand_off", hand_off)
    g.add_edge(E.START, "hand_off")
    return g.compile()


def test_command_to_the_parent_from_a_top_level_graph(differential):
    """A handoff tool's `Command(graph=Command.PARENT, ...)` returned by a graph run on
    its own (an agent tried before it joins a supervisor): ParentCommand with LangGraph's
    text on both engines; lgnb's traceback adds a note that there is no parent graph and
    what to do (notes: Python 3.11+)."""
    differential(lambda E: capture(lambda: _top_level_handoff(E).invoke({"x": 0})),
                 expect=("raises", "ParentCommand", "Command(update={'x': 1}, goto='other_agent')"))
    if not hasattr(BaseException, "add_note"):
        return
    try:
        _top_level_handoff(_diff.candidate_engine()).invoke({"x": 0})
    except Exception as exc:  # noqa: BLE001 - either engine's ParentCommand
        notes = getattr(exc, "__notes__", [])
    else:
        raise AssertionError("the handoff should have raised")
    if not _diff.candidate_engine().label.startswith("langgraph"):
        assert any("no parent graph" in n and "drop `graph=Command.PARENT`" in n for n in notes), notes


def _goto_on_a_functional_thread(E):
    @E.func.entrypoint(checkpointer=E.InMemorySaver())
    def main(x):
        return E.interrupt("q")

    cfg = {"configurable": {"thread_id": "t"}}
    main.invoke(1, cfg)
    with _logged() as lines:
        out = main.invoke(E.Command(goto="main"), cfg)
    return [i.value for i in out["__interrupt__"]], lines


def test_goto_on_a_functional_thread_routes_nowhere_and_says_an_entrypoint_has_no_nodes_to_route_to(differential):
    """`Command(goto=<the entrypoint's name>)` resuming a functional thread: LangGraph logs
    that the write is ignored; lgnb's warning must not list "(nodes: )" nor suggest
    `Command.PARENT`: an entrypoint has no node to route to."""
    def scenario(E):
        asked, lines = _goto_on_a_functional_thread(E)
        return asked, _first_lines(lines)

    differential(scenario)
    if _is_lgnb():
        _, lines = _goto_on_a_functional_thread(_diff.candidate_engine())
        assert "no node to route to by name" in lines[0] and "(nodes: )" not in lines[0], lines

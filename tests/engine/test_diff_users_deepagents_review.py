"""The human-review side of deep agents (`deepagents.create_deep_agent`), run on lgnb.

A user ports a deep agent with `lgnb.graph.from_langgraph(create_deep_agent(...,
checkpointer=<lgnb saver>))`. Review is where lgnb is used most after plain runs: every
`interrupt()` becomes an approval form whose buttons resume the thread with
`Command(resume=...)`. The scenarios pause a deep agent the ways its users do:
`interrupt_on` for the built-in file tools (LangChain's `HumanInTheLoopMiddleware`,
answered with `{"decisions": [...]}`), `interrupt_on` of a subagent (the pause surfaces
from inside the `task` tool and is answered from the parent thread), a user's own tool
calling `interrupt()`; on a SQLite saver across a "restart", through the history (replay,
fork), and async. Observables are the raw streams (`subgraphs=True`), `__interrupt__`
payloads, `get_state` (next, tasks, interrupts), histories, final states with the agent's
`files` and what each scripted model was sent; only ids and timestamps are normalized
(by the harness). The last tests are lgnb-only: the run view's approval form for a paused
deep agent, answered without a browser, reaches the final state LangGraph reaches for the
same decision.

No `from __future__ import annotations`: tools are defined inside scenarios.
"""


import pytest

pytest.importorskip("deepagents")

from _agent_scenarios import calls as _calls  # noqa: E402
from _agent_scenarios import history as _history
from _agent_scenarios import on as _on
from _agent_scenarios import saver as _saver
from _agent_scenarios import say as _say
from _diff import acollect, collect, compare, snapshot_summary, steps_as_multisets  # noqa: E402
from _scripted import Scripted  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

# the decisions `HumanInTheLoopMiddleware` (batched mode, deepagents' default) takes, one
# per paused tool call, in the order of the request's `action_requests`
APPROVE = {"type": "approve"}
REJECT = {"type": "reject", "message": "not that file"}
RESPOND = {"type": "respond", "message": "I wrote it myself."}


def _edit(name, **args):
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


DECISIONS = {
    "approve": APPROVE,
    "edit": _edit("write_file", file_path="/notes.md", content="edited by a human"),
    "reject": REJECT,
    "respond": RESPOND,
}
# write_file: every decision; edit_file: only these two (a user's per-tool config)
INTERRUPT_ON = {"write_file": True, "edit_file": {"allowed_decisions": ["approve", "reject"]}}
T0 = "2024-01-01T00:00:00+00:00"


def _model(*replies):
    return Scripted(script=iter(list(replies)), seen=[])


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


def _hi(text="take notes", mid="h1", files=None):
    out = {"messages": [HumanMessage(text, id=mid)]}
    if files:
        out["files"] = {path: {"content": content, "encoding": "utf-8", "created_at": T0, "modified_at": T0}
                        for path, content in files.items()}
    return out


def _agent(E, model, *, checkpointer, tools=(), interrupt_on=INTERRUPT_ON, **kwargs):
    """What a user writes: a deep agent with review of its file writes, on engine E."""
    from deepagents import create_deep_agent

    return _on(E, create_deep_agent(model, list(tools), system_prompt="You keep notes.",
                                    interrupt_on=interrupt_on, checkpointer=checkpointer, **kwargs))


def _stream(app, inp, cfg, modes=("updates", "values")):
    return collect(lambda: app.stream(inp, cfg, stream_mode=list(modes), subgraphs=True))


def _by_step(chunks):
    """A stream whose steps run several tool calls at once (`create_agent` sends each call
    as a task of its own): LangGraph runs them in a thread pool and streams their updates
    in the order they finish, so each step's chunks compare as a multiset between the
    top-level `values` chunks (which are deterministic)."""
    return steps_as_multisets(chunks, lambda c: isinstance(c, tuple) and len(c) == 3
                              and c[0] == () and c[1] == "values")


async def _astream(app, inp, cfg, modes=("updates", "values")):
    return await acollect(lambda: app.astream(inp, cfg, stream_mode=list(modes), subgraphs=True))


def _sent(model):
    """What a scripted model was sent, each call's system prompt (deepagents' long one,
    the same on both engines) reduced to its length and first line."""
    return [[(t, (len(c), c.splitlines()[0])) if t == "system" else (t, c) for t, c in call]
            if isinstance(call, list) else call for call in model.seen]


# Reading the reference observable `differential` returns (normalized by the harness:
# engine objects and messages are tagged tuples, e.g. `("Interrupt", value, id)`).


def _ival(i):
    """An interrupt's value (an `Interrupt`, or its normalized tuple)."""
    return i[1] if isinstance(i, tuple) else i.value


def _snap(s):
    """A normalized `StateSnapshot` as a dict of its fields."""
    fields = ("values", "next", "config", "metadata", "created_at", "parent_config", "tasks", "interrupts")
    assert s[0] == "StateSnapshot", s[:1]
    return dict(zip(fields, s[1:]))


def _files(values):
    return {path: f["content"] for path, f in (values.get("files") or {}).items()}


def _tool_texts(values):
    msgs = [m[1] if isinstance(m, tuple) else m.model_dump() for m in values["messages"]]
    return [m["content"] for m in msgs if m["type"] == "tool"]


def _interrupt_values(chunks):
    """The `__interrupt__` payloads of an `updates` stream (namespace, values); the
    stream as it is, or grouped by `_by_step`."""
    flat = [c for item in chunks for c in (item[1] if item[0] == "unordered" else [item])]
    return [(ns, [_ival(i) for i in chunk["__interrupt__"]]) for ns, mode, chunk in flat
            if mode == "updates" and isinstance(chunk, dict) and "__interrupt__" in chunk]


# --- interrupt_on on the main agent's tools ------------------------------------------------------


@pytest.mark.parametrize("decision", ["approve", "edit", "reject", "respond"])
def test_write_file_pauses_with_its_request_and_each_decision_resumes(differential, decision):
    """The agent wants to write a file: the run pauses before the tool with one request
    (the call, its description, the decisions its config allows); the state shows the
    pending interrupt, the paused node and no file; `Command(resume={"decisions": [d]})`
    runs the call as asked, with the reviewer's arguments, or not at all."""
    def scenario(E):
        model = _model(_calls("m1", ("write_file", {"file_path": "/notes.md", "content": "draft"}, "w1")),
                       _say("Notes saved.", "m2"))
        app = _agent(E, model, checkpointer=E.InMemorySaver())
        first = _stream(app, _hi(), _cfg())
        paused = app.get_state(_cfg())
        resumed = _stream(app, E.Command(resume={"decisions": [DECISIONS[decision]]}), _cfg())
        final = app.get_state(_cfg())
        return first, paused, resumed, final, _sent(model)

    ref = differential(scenario)
    (request,) = _interrupt_values(ref[0])[0][1]
    assert request["action_requests"][0]["name"] == "write_file"
    assert request["review_configs"] == [{"action_name": "write_file",
                                          "allowed_decisions": ["approve", "edit", "reject", "respond"]}]
    paused, final = _snap(ref[1]), _snap(ref[3])
    assert paused["next"] == ("HumanInTheLoopMiddleware.after_model",) and paused["values"]["files"] == {}
    assert final["next"] == () and final["interrupts"] == ()
    assert _files(final["values"]) == {"approve": {"/notes.md": "draft"}, "edit": {"/notes.md": "edited by a human"},
                     "reject": {}, "respond": {}}[decision]
    assert len(ref[-1]) == 2  # the model was asked once more, after the decision


def test_several_calls_of_one_turn_are_one_request_answered_in_one_resume(differential):
    """One model turn writes two files, edits a third and lists the directory: the three
    reviewed calls are one request (in call order, each with its own allowed decisions),
    `ls` is not reviewed; one resume answers them in order (edit, reject, approve) and the
    unreviewed call runs with them."""
    def scenario(E):
        model = _model(
            _calls("m1", ("write_file", {"file_path": "/a.md", "content": "A"}, "w1"),
                   ("edit_file", {"file_path": "/notes.md", "old_string": "old", "new_string": "new"}, "e1"),
                   ("ls", {"path": "/"}, "l1"),
                   ("write_file", {"file_path": "/b.md", "content": "B"}, "w2")),
            _say("Tidied up.", "m2"))
        app = _agent(E, model, checkpointer=E.InMemorySaver())
        first = _stream(app, _hi(files={"/notes.md": "the old notes"}), _cfg())
        paused = app.get_state(_cfg())
        answer = {"decisions": [_edit("write_file", file_path="/a2.md", content="A, reviewed"),
                                {"type": "reject", "message": "keep the old notes"}, APPROVE]}
        resumed = _by_step(_stream(app, E.Command(resume=answer), _cfg()))
        final = app.get_state(_cfg()).values
        return first, snapshot_summary(paused), paused.interrupts, resumed, final, _history(app, _cfg()), _sent(model)

    ref = differential(scenario)
    (request,) = map(_ival, ref[2])
    assert [a["name"] for a in request["action_requests"]] == ["write_file", "edit_file", "write_file"]
    assert [c["allowed_decisions"] for c in request["review_configs"]][1] == ["approve", "reject"]
    assert _files(ref[4]) == {"/notes.md": "the old notes", "/a2.md": "A, reviewed", "/b.md": "B"}
    texts = _tool_texts(ref[4])
    assert len(texts) == 4 and any("keep the old notes" in t for t in texts)


def test_tools_not_under_review_run_without_a_pause(differential):
    """Reading and listing are not in `interrupt_on`: the first turn runs to the end, no
    interrupt anywhere; on the same thread the next turn's write pauses."""
    def scenario(E):
        model = _model(_calls("m1", ("read_file", {"file_path": "/notes.md"}, "r1"), ("ls", {"path": "/"}, "l1")),
                       _say("The notes say hello.", "m2"),
                       _calls("m3", ("write_file", {"file_path": "/todo.md", "content": "x"}, "w1")))
        app = _agent(E, model, checkpointer=E.InMemorySaver())
        first = _by_step(_stream(app, _hi("read my notes", files={"/notes.md": "hello"}), _cfg()))
        after_first = app.get_state(_cfg())
        second = app.invoke(_hi("now a todo", "h2"), _cfg(), version="v2")
        return first, after_first, second, app.get_state(_cfg()).next, _sent(model)

    ref = differential(scenario)
    assert _interrupt_values(ref[0]) == [] and _snap(ref[1])["next"] == () and _snap(ref[1])["interrupts"] == ()
    output = ref[2]  # ("GraphOutput", value, interrupts)
    assert _ival(output[2][0])["action_requests"][0]["name"] == "write_file"
    assert ref[3] == ("HumanInTheLoopMiddleware.after_model",)


def test_a_wrong_answer_fails_the_resume_and_is_kept_until_a_fork(differential):
    """Too few decisions: the resume raises LangChain's `ValueError`; the pending task
    shows the error and the same request. LangGraph keeps the answer it was given (the
    task's resume write is saved with its error), so even a right answer then fails the
    same way; `update_state(..., as_node="model")` forks the thread, the review asks
    again and the right answer goes through. A decision the tool's config does not allow
    (an edit of `edit_file`) fails the same way on another thread."""
    def scenario(E):
        replies = [_calls("m1", ("edit_file", {"file_path": "/notes.md", "old_string": "a", "new_string": "b"}, "e1"),
                          ("write_file", {"file_path": "/x.md", "content": "x"}, "w1")),
                   _say("Done.", "m2")]
        model = _model(*replies, replies[0])  # the last one for the second thread
        app = _agent(E, model, checkpointer=E.InMemorySaver())
        app.invoke(_hi(files={"/notes.md": "a"}), _cfg())
        too_few = _stream(app, E.Command(resume={"decisions": [APPROVE]}), _cfg())
        failed = app.get_state(_cfg())
        right_too_late = _stream(app, E.Command(resume={"decisions": [APPROVE, REJECT]}), _cfg())
        fork_cfg = app.update_state(_cfg(), None, as_node="model")
        forked = app.get_state(_cfg())
        asked_again = _stream(app, None, _cfg())
        ok = app.invoke(E.Command(resume={"decisions": [APPROVE, REJECT]}), _cfg())
        app.invoke(_hi(files={"/notes.md": "a"}), _cfg("t2"))
        not_allowed = _stream(app, E.Command(resume={"decisions": [_edit("edit_file", file_path="/notes.md"),
                                                                    APPROVE]}), _cfg("t2"))
        return (too_few, failed, right_too_late, fork_cfg, forked, asked_again, ok, not_allowed,
                _history(app, _cfg()), _sent(model))

    ref = differential(scenario)
    too_few, failed, right_too_late = ref[0], _snap(ref[1]), ref[2]
    assert too_few[-1][:2] == ("raises", "ValueError") and right_too_late[-1] == too_few[-1]
    assert failed["next"] == ("HumanInTheLoopMiddleware.after_model",) and failed["interrupts"] != ()
    assert "ValueError" in failed["tasks"][0][4]  # PregelTask.error
    assert _snap(ref[4])["metadata"]["source"] == "update"
    assert _interrupt_values(ref[5])
    assert _files(ref[6]) == {"/notes.md": "b"}
    assert ref[7][-1][:2] == ("raises", "ValueError") and "not allowed" in ref[7][-1][2]


def test_a_conditional_review_with_a_description_function(differential):
    """`interrupt_on` with a `when` predicate (LangChain builds it a `ToolRuntime` from the
    node's config and runtime) and a description function (given the node's `Runtime`):
    of two writes in one turn only the protected one pauses, described by the function;
    the other runs with it after the approval."""
    def scenario(E):
        asked = []

        def protected(request):
            rt = request.runtime
            asked.append((request.tool_call["id"], rt.tool_call_id, rt.config["configurable"]["thread_id"],
                          sorted(rt.state)))
            return request.tool_call["args"]["file_path"].startswith("/protected/")

        def describe(tool_call, state, runtime):
            return (f"{tool_call['name']} to {tool_call['args']['file_path']} after "
                    f"{len(state['messages'])} messages on thread {runtime.execution_info.thread_id}")

        model = _model(_calls("m1", ("write_file", {"file_path": "/protected/keys", "content": "k"}, "w1"),
                              ("write_file", {"file_path": "/scratch.md", "content": "s"}, "w2")),
                       _say("Both written.", "m2"))
        review = {"write_file": {"allowed_decisions": ["approve", "reject"], "when": protected,
                                 "description": describe}}
        app = _agent(E, model, checkpointer=E.InMemorySaver(), interrupt_on=review)
        first = app.invoke(_hi("write both"), _cfg(), version="v2")
        resumed = _by_step(_stream(app, E.Command(resume={"decisions": [APPROVE]}), _cfg()))
        return first, resumed, app.get_state(_cfg()).values, asked, _sent(model)

    ref = differential(scenario)
    (request,) = map(_ival, ref[0][2])
    assert [a["args"]["file_path"] for a in request["action_requests"]] == ["/protected/keys"]
    assert request["action_requests"][0]["description"] == "write_file to /protected/keys after 2 messages on thread t"
    assert _files(ref[2]) == {"/protected/keys": "k", "/scratch.md": "s"}
    assert len(ref[3]) == 4  # asked for both calls, and again for both on resume


# --- a subagent's own interrupt_on ---------------------------------------------------------------


def _with_writer(E, checkpointer):
    main = _model(_calls("m1", ("task", {"description": "write the report", "subagent_type": "writer"}, "k1")),
                  _say("The writer finished.", "m2"))
    sub = _model(_calls("s1", ("write_file", {"file_path": "/report.md", "content": "numbers"}, "w1")),
                 _say("Report written.", "s2"))
    spec = {"name": "writer", "description": "Writes reports.", "system_prompt": "You write reports.",
            "model": sub, "interrupt_on": {"write_file": {"allowed_decisions": ["approve", "reject"]}}}
    # the main agent reviews nothing: every pause comes from the subagent
    app = _agent(E, main, checkpointer=checkpointer, interrupt_on=None, subagents=[spec])
    return app, main, sub


@pytest.mark.parametrize(("decision", "by_id"), [("approve", False), ("reject", False), ("approve", True)])
def test_subagent_review_surfaces_from_the_task_tool_and_resumes_from_the_parent(differential, decision, by_id):
    """The subagent (run by the parent's `task` tool) wants to write: the pause streams
    under the tool's namespace and at the top, the parent's state shows the `tools` task
    holding the request; resuming the parent thread resumes the subagent where it paused
    (its model is not asked again for the reviewed call) and its files reach the parent.
    `by_id`: the answer keyed by the interrupt's id (`Command(resume={id: value})`, what
    the run view's forms send) reaches the subagent too."""
    def scenario(E):
        app, main, sub = _with_writer(E, E.InMemorySaver())
        first = _stream(app, _hi("write the report"), _cfg())
        paused = app.get_state(_cfg(), subgraphs=True)
        answer = {"decisions": [DECISIONS[decision]]}
        if by_id:
            answer = {paused.interrupts[0].id: answer}
        resumed = _stream(app, E.Command(resume=answer), _cfg())
        final = app.get_state(_cfg())
        return (first, snapshot_summary(paused), paused.interrupts, resumed, final.values,
                _history(app, _cfg()), _sent(main), _sent(sub))

    ref = differential(scenario)
    found = _interrupt_values(ref[0])
    assert [len(ns) for ns, _ in found] == [1, 0] and ref[1]["next"] == ("tools",)
    assert _files(ref[4]) == ({"/report.md": "numbers"} if decision == "approve" else {})
    assert len(ref[-1]) == 2 and len(ref[-2]) == 2


# --- a user's tool calling interrupt() itself ----------------------------------------------------


def _deploy_tool():
    from langgraph.types import interrupt

    @tool
    def deploy(service: str) -> str:
        """Deploy a service (asks a human twice: go ahead? which region?)."""
        go = interrupt({"question": f"deploy {service}?", "service": service})
        if go != "yes":
            return f"deploy of {service} cancelled: {go}"
        region = interrupt({"question": "which region?", "choices": ["eu", "us"]})
        return f"{service} deployed to {region}"

    return deploy


@pytest.mark.parametrize("command", ["engine", "langgraph"])
def test_a_tool_that_interrupts_itself_is_resumed_with_command(differential, command):
    """A tool written with LangGraph's `interrupt()` asks twice; each answer is a
    `Command(resume=...)`: the engine's own, or (`langgraph`) LangGraph's class, which a
    ported notebook may still import; both resume the lgnb thread alike."""
    def scenario(E):
        if command == "langgraph":
            from langgraph.types import Command
        else:
            Command = E.Command
        model = _model(_calls("m1", ("deploy", {"service": "api"}, "d1")), _say("api is live in eu.", "m2"))
        app = _agent(E, model, checkpointer=E.InMemorySaver(), tools=[_deploy_tool()], interrupt_on=None)
        first = _stream(app, _hi("deploy the api"), _cfg())
        asked = app.get_state(_cfg())
        second = _stream(app, Command(resume="yes"), _cfg())
        asked_again = app.get_state(_cfg()).interrupts
        third = _stream(app, Command(resume="eu"), _cfg())
        return first, asked, second, asked_again, third, app.get_state(_cfg()).values, _sent(model)

    ref = differential(scenario)
    assert [v for _, v in _interrupt_values(ref[0])] == [[{"question": "deploy api?", "service": "api"}]]
    assert _ival(ref[3][0])["question"] == "which region?"
    assert _tool_texts(ref[5]) == ["api deployed to eu"]


def test_a_reviewed_tool_that_also_interrupts_pauses_twice(differential):
    """`interrupt_on` reviews the call first (after the model), then the tool's own
    `interrupt()` pauses again inside the tool node; a rejection at the first would have
    kept the tool from running (checked by the second thread)."""
    def scenario(E):
        replies = [_calls("m1", ("deploy", {"service": "db"}, "d1")), _say("ok", "m2")]
        model = _model(*replies, *replies)
        app = _agent(E, model, checkpointer=E.InMemorySaver(), tools=[_deploy_tool()],
                     interrupt_on={"deploy": {"allowed_decisions": ["approve", "reject"]}})
        out = [app.invoke(_hi("deploy the db"), _cfg(), version="v2")]
        out.append(app.invoke(E.Command(resume={"decisions": [APPROVE]}), _cfg(), version="v2"))
        out.append(app.get_state(_cfg()))
        out.append(app.invoke(E.Command(resume="no, wait"), _cfg(), version="v2"))
        out.append(app.invoke(_hi("deploy the db"), _cfg("t2"), version="v2"))
        out.append(app.invoke(E.Command(resume={"decisions": [REJECT]}), _cfg("t2"), version="v2"))
        return out, _sent(model)

    ref = differential(scenario)
    outputs = ref[0]
    assert "action_requests" in _ival(outputs[0][2][0]) and _ival(outputs[1][2][0])["service"] == "db"
    assert _snap(outputs[2])["next"] == ("tools",)
    assert _tool_texts(outputs[3][1]) == ["deploy of db cancelled: no, wait"]
    assert outputs[5][2] == () and "not that file" in _tool_texts(outputs[5][1])[0]


def test_a_subagents_own_interrupting_tool_is_answered_from_the_parent(differential):
    """The subagent has the user's `deploy` tool: its two questions surface through the
    `task` tool; the parent thread answers both."""
    def scenario(E):
        main = _model(_calls("m1", ("task", {"description": "deploy web", "subagent_type": "ops"}, "k1")),
                      _say("Ops deployed web.", "m2"))
        sub = _model(_calls("s1", ("deploy", {"service": "web"}, "d1")), _say("web is in us.", "s2"))
        spec = {"name": "ops", "description": "Deploys.", "system_prompt": "You deploy.", "model": sub,
                "tools": [_deploy_tool()]}
        app = _agent(E, main, checkpointer=E.InMemorySaver(), interrupt_on=None, subagents=[spec])
        first = _stream(app, _hi("deploy web"), _cfg())
        second = _stream(app, E.Command(resume="yes"), _cfg())
        between = snapshot_summary(app.get_state(_cfg(), subgraphs=True))
        third = _stream(app, E.Command(resume="us"), _cfg())
        return first, second, between, third, app.get_state(_cfg()).values, _sent(main), _sent(sub)

    ref = differential(scenario)
    assert ref[2]["interrupts"][0]["question"] == "which region?"
    assert _tool_texts(ref[4]) == ["web is in us."]
    assert len(ref[-1]) == 2


# --- persistence: a restart, the history, replay and fork ----------------------------------------


def test_a_paused_thread_survives_a_restart_on_sqlite(differential, tmp_path):
    """Paused on a SQLite file; the process "restarts" (the saver closed, a new agent and
    a new model object on the same file); the new agent sees the pending request and the
    reviewer's edit resumes it; the history holds both runs."""
    def scenario(E):
        with _saver(E, "sqlite", tmp_path) as saver:
            model = _model(_calls("m1", ("write_file", {"file_path": "/notes.md", "content": "v1"}, "w1")))
            app = _agent(E, model, checkpointer=saver)
            first = _stream(app, _hi(), _cfg())
            sent_before = _sent(model)
        with _saver(E, "sqlite", tmp_path) as saver:
            model = _model(_say("Saved the edited notes.", "m2"))
            app = _agent(E, model, checkpointer=saver)
            paused = app.get_state(_cfg())
            resumed = _stream(app, E.Command(resume={"decisions": [DECISIONS["edit"]]}), _cfg())
            return (first, paused, resumed, app.get_state(_cfg()).values, _history(app, _cfg()),
                    sent_before, _sent(model))

    ref = differential(scenario)
    assert _snap(ref[1])["next"] == ("HumanInTheLoopMiddleware.after_model",)
    assert _files(ref[3]) == {"/notes.md": "edited by a human"}
    assert len(ref[-1]) == 1  # the new model object was asked once, after the decision


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_replay_from_before_the_pause_asks_again(differential, kind, tmp_path):
    """After an approved write, the user replays the thread from the checkpoint before
    the model's call (`invoke(None, config_of_that_checkpoint)`): the model runs again,
    the new call pauses again on a new branch; approving it ends the replay there."""
    def scenario(E):
        with _saver(E, kind, tmp_path) as saver:
            model = _model(_calls("m1", ("write_file", {"file_path": "/a.md", "content": "first"}, "w1")),
                           _say("First done.", "m2"),
                           _calls("m3", ("write_file", {"file_path": "/a.md", "content": "second"}, "w2")),
                           _say("Second done.", "m4"))
            app = _agent(E, model, checkpointer=saver)
            app.invoke(_hi(), _cfg())
            app.invoke(E.Command(resume={"decisions": [APPROVE]}), _cfg())
            before_model = next(s for s in app.get_state_history(_cfg()) if s.next == ("model",))
            replayed = _stream(app, None, before_model.config)
            paused = app.get_state(_cfg())
            resumed = app.invoke(E.Command(resume={"decisions": [APPROVE]}), _cfg())
            return (snapshot_summary(before_model), replayed, paused, resumed, _history(app, _cfg()),
                    _sent(model))

    ref = differential(scenario)
    assert _snap(ref[2])["next"] == ("HumanInTheLoopMiddleware.after_model",)
    assert _files(ref[3]) == {"/a.md": "second"}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_fork_with_update_state_before_the_pause(differential, kind, tmp_path):
    """At the pause the user forks from the checkpoint before the model ran, rewriting the
    question (`update_state` on that checkpoint, same message id); the fork runs from
    there: the model sees the new question, its new call pauses on the fork, and the
    original pending request is left on the old branch."""
    def scenario(E):
        with _saver(E, kind, tmp_path) as saver:
            model = _model(_calls("m1", ("write_file", {"file_path": "/a.md", "content": "cats"}, "w1")),
                           _calls("m2", ("write_file", {"file_path": "/a.md", "content": "dogs"}, "w2")),
                           _say("Dogs noted.", "m3"))
            app = _agent(E, model, checkpointer=saver)
            first = app.invoke(_hi("note cats"), _cfg(), version="v2")
            before_model = next(s for s in app.get_state_history(_cfg()) if s.next == ("model",))
            fork_cfg = app.update_state(before_model.config, {"messages": [HumanMessage("note dogs", id="h1")]})
            fork = app.get_state(fork_cfg)  # its metadata: source "update" and the agent's own keys
            forked = _stream(app, None, fork_cfg)
            paused = app.get_state(_cfg())
            resumed = _stream(app, E.Command(resume={"decisions": [APPROVE]}), _cfg())
            return (first, fork_cfg, fork, forked, paused, resumed, app.get_state(_cfg()).values,
                    _history(app, _cfg()), _sent(model))

    ref = differential(scenario)
    assert _snap(ref[2])["metadata"]["source"] == "update" and _snap(ref[2])["next"] == ("model",)
    assert _ival(_snap(ref[4])["interrupts"][0])["action_requests"][0]["args"]["content"] == "dogs"
    assert _files(ref[6]) == {"/a.md": "dogs"}
    assert ref[-1][1][-1] == ("human", "note dogs")


# --- async ---------------------------------------------------------------------------------------


def test_async_pause_and_resume_with_an_edit(differential):
    """`astream` pauses at the review; `aget_state` shows it; `ainvoke` with the edit
    resumes; the async history matches."""
    async def scenario(E):
        model = _model(_calls("m1", ("write_file", {"file_path": "/notes.md", "content": "draft"}, "w1")),
                       _say("Saved.", "m2"))
        app = _agent(E, model, checkpointer=E.InMemorySaver())
        first = await _astream(app, _hi(), _cfg())
        paused = await app.aget_state(_cfg())
        final = await app.ainvoke(E.Command(resume={"decisions": [DECISIONS["edit"]]}), _cfg())
        history = [snapshot_summary(s) async for s in app.aget_state_history(_cfg())]
        return first, paused, final, [(h["next"], h["step"], h["interrupts"]) for h in history], _sent(model)

    ref = differential(scenario)
    assert _files(ref[2]) == {"/notes.md": "edited by a human"}


def test_async_subagent_review_resumed_from_the_parent(differential):
    """The `task` tool runs the subagent with `ainvoke` under `astream`; its review
    pauses and `astream(Command(resume=...))` continues it."""
    async def scenario(E):
        app, main, sub = _with_writer(E, E.InMemorySaver())
        first = await _astream(app, _hi("write the report"), _cfg())
        paused = await app.aget_state(_cfg())
        resumed = await _astream(app, E.Command(resume={"decisions": [APPROVE]}), _cfg())
        return first, snapshot_summary(paused), resumed, (await app.aget_state(_cfg())).values, _sent(main), _sent(sub)

    ref = differential(scenario)
    assert _files(ref[3]) == {"/report.md": "numbers"}


def test_async_tool_that_interrupts_itself(differential):
    """An async tool calling `interrupt()`, run with `astream`, answered twice."""
    async def scenario(E):
        from langgraph.types import interrupt

        @tool
        async def publish(post: str) -> str:
            """Publish a post after a human approves it."""
            ok = interrupt({"publish": post})
            return f"published {post}" if ok else "held back"

        model = _model(_calls("m1", ("publish", {"post": "hello"}, "p1")), _say("Posted.", "m2"))
        app = _agent(E, model, checkpointer=E.InMemorySaver(), tools=[publish], interrupt_on=None)
        first = await _astream(app, _hi("post hello"), _cfg())
        resumed = await _astream(app, E.Command(resume=True), _cfg())
        return first, resumed, _sent(model)

    ref = differential(scenario)
    assert _interrupt_values(ref[0])[0][1] == [{"publish": "hello"}]


# --- lgnb only: the run view's approval form -----------------------------------------------------


def _reference_final(decision, build):
    """The final state LangGraph reaches when the same paused agent gets `decision`."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    app, inp = build("langgraph", InMemorySaver())
    app.invoke(inp, _cfg())
    app.invoke(Command(resume={"decisions": [decision]}), _cfg())
    return app.get_state(_cfg()).values


def _build_main(root, saver):
    from _diff import Engine

    model = _model(_calls("m1", ("write_file", {"file_path": "/notes.md", "content": "draft"}, "w1")),
                   _say("Notes saved.", "m2"))
    return _agent(Engine(root), model, checkpointer=saver), _hi()


def _build_sub(root, saver):
    from _diff import Engine

    app, _, _ = _with_writer(Engine(root), saver)
    return app, _hi("write the report")


def _answer_form(build, picks):
    """Run the deep agent on lgnb in a headless run view, answer its one form as the page
    would (`_dispatch` of the page's message), wait for the run to end."""
    import lgnb
    from lgnb.checkpoint.memory import InMemorySaver

    app, inp = build("lgnb", InMemorySaver())
    r = lgnb.run(app, inp, _cfg(), display=False)
    r.wait(timeout=60)
    assert r.status == "interrupted", (r.status, r.error)
    (form,) = r.forms
    sent = []
    r.view.send = lambda msg, buffers=None: sent.append(msg)
    r.view._dispatch(r.view, {"kind": "answer", "id": 1, "interrupt_id": form["id"], "picks": picks}, [])
    (result,) = [m for m in sent if m.get("kind") == "resume-result"]
    r.wait(timeout=60)
    return form, result, r, app.get_state(_cfg()).values


FORM_PICKS = {
    "approve": {"part": 0, "choice": "approve", "inputs": {}},
    "edit": {"part": 0, "choice": "edit", "inputs": {"file_path": "/notes.md", "content": "edited by a human"}},
    "reject": {"part": 0, "choice": "reject", "inputs": {"__message": "not that file"}},
}


@pytest.mark.parametrize("decision", ["approve", "edit", "reject"])
def test_run_view_form_of_the_deep_agents_request_resumes_like_langgraph(decision):
    """lgnb only: `lgnb.run` on the paused deep agent shows one approval form with a card
    for the `write_file` call (its decisions, its arguments as inputs); the page's answer
    resumes the thread with the decision LangGraph's users send, and the final state
    (messages, files) is the one LangGraph reaches for that decision."""
    form, result, r, final = _answer_form(_build_main, [FORM_PICKS[decision]])
    assert form["kind"] == "hitl" and form["resumable"] is True
    (part,) = form["parts"]
    assert part["title"] == "tool call: write_file"
    assert [c["key"] for c in part["choices"]] == ["approve", "edit", "reject", "respond"]
    assert {i["name"]: i["value"] for i in part["inputs"] if not i["name"].startswith("__")} == {
        "file_path": "/notes.md", "content": "draft"}
    assert result["ok"] is True, result
    assert r.status == "done" and r.forms == []
    (answer,) = r.answers
    assert answer["by"] == "page" and answer["value"] == {"decisions": [DECISIONS[decision]]}
    compare(_reference_final(DECISIONS[decision], _build_main), final)


def test_run_view_form_of_a_subagents_request_resumes_like_langgraph():
    """lgnb only: the subagent's review, surfacing from the `task` tool, is a form too;
    rejecting it from the page gives the final state LangGraph gives."""
    form, result, r, final = _answer_form(_build_sub, [FORM_PICKS["reject"]])
    (part,) = form["parts"]
    assert part["title"] == "tool call: write_file"
    assert [c["key"] for c in part["choices"]] == ["approve", "reject"]
    assert result["ok"] is True, result
    assert r.status == "done" and r.answers[0]["value"] == {"decisions": [REJECT]}
    ref = _reference_final(REJECT, _build_sub)
    assert _files(ref) == {} and _tool_texts(ref) == ["Report written."]  # the subagent's last words
    compare(ref, final)

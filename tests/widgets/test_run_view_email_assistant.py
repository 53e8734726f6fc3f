"""Human review of LangChain's "agents-from-scratch" e-mail assistant in the run view.

The assistant (ported in `tests/engine/test_diff_users_email_assistant.py`, the memory
variant here) pauses with Agent Inbox requests, `interrupt([request])[0]`: a list of one
`{"action_request": {"action", "args"}, "config": {"allow_accept", "allow_edit",
"allow_respond", "allow_ignore"}, "description": <markdown>}`, answered with a list of one
`HumanResponse` (`{"type": "accept" | "edit" | "response" | "ignore", "args": ...}`).
Under `lgnb.run` each pause is an "inbox" form: the choices its config allows, the call's
args shown and offered for editing, the e-mail and draft as the request's description
(plain text, markup verbatim). Each form is answered as a click answers it (the page's
"answer" message through `RunView._dispatch`), on LangGraph and on lgnb (`differential`),
and the thread's outcome (final messages, store, what the tools sent) is compared with the
same program on LangGraph resumed by hand with the course's `Command(resume=[...])`.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))

import _diff  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402
from test_diff_users_email_assistant import (  # noqa: E402
    ACCEPT,
    API_QUESTION,
    EDITED_EMAIL,
    EDITED_MEETING,
    EMAIL_ARGS,
    IGNORE,
    MEETING,
    MEETING_ARGS,
    NOTICE,
    REVIEW_CONFIG,
    _calls,
    _dump,
    agent,
    calendar,
    done,
    edit,
    format_email_markdown,
    format_for_display,
    hitl_assistant,
    meeting,
    memory_model,
    question,
    respond,
    router,
    write,
)

from lgnb.widgets import run  # noqa: E402

warnings.filterwarnings("ignore", message=".*`input` is deprecated.*")
differential = _diff.differential
TIMEOUT = 60
CFG = {"configurable": {"thread_id": "inbox"}}


# --- what the page sends ------------------------------------------------------------------


def send(r: Any, form: dict[str, Any], choice: str, inputs: dict[str, Any] | None = None,
         request: int = 1) -> dict[str, Any]:
    """A click on `choice` (with the inputs the page reads): the kernel's reply."""
    replies: list[dict[str, Any]] = []
    r.view.send = lambda msg, buffers=None: replies.append(msg)
    try:
        r.view._dispatch(r.view, {"kind": "answer", "id": request, "interrupt_id": form["id"],
                                  "picks": [{"part": 0, "choice": choice, "inputs": inputs or {}}]}, [])
    finally:
        del r.view.send
    (reply,) = [m for m in replies if m.get("kind") == "resume-result"]
    return reply


def typed_inputs(form: dict[str, Any], **changed: str) -> dict[str, str]:
    """What the page reads from the edit inputs: each box's text (JSON for a json box),
    the given ones changed."""
    import json

    out = {}
    for i in form["parts"][0]["inputs"]:
        if i["name"] != "__response":
            out[i["name"]] = i["value"] if isinstance(i["value"], str) else json.dumps(i["value"])
    return {**out, **changed}


def shape(form: dict[str, Any]) -> dict[str, Any]:
    """What the page draws, without the interrupt id."""
    (part,) = form["parts"]
    return {"kind": form["kind"], "node": form["node"], "title": form["title"], "part": part["title"],
            "description": part["description"], "shown": part["shown"],
            "choices": [(c["key"], c["label"], c["inputs"], c["confirm"]) for c in part["choices"]],
            "inputs": [(i["name"], i["type"], i["value"]) for i in part["inputs"]]}


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """State values without message ids (the two runs' ids differ)."""
    def msg(m: BaseMessage) -> Any:
        return (m.type, m.content, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", None) or ()],
                getattr(m, "tool_call_id", None))
    return {**values, "messages": [msg(m) for m in values.get("messages", [])]}


# --- the course's threads: (e-mail, classification, model replies, answers) --------------------
# an answer: (choice clicked, what is typed, the value the course resumes with by hand)

EDIT_MEETING_TYPED = {"attendees": '["pm@client.com", "lance@company.com"]', "subject": "Tax Planning Discussion",
                      "duration_minutes": "30", "preferred_day": "2025-04-22", "start_time": "14"}
EDIT_EMAIL_TYPED = {"content": EDITED_EMAIL["content"]}
OK = ("accept", {}, ACCEPT)

FLOWS = {
    "write_email-accept": (MEETING, "respond", [write("m1"), done("m2")], [OK]),
    "write_email-edit": (MEETING, "respond", [write("m1"), done("m2")],
                         [("edit", EDIT_EMAIL_TYPED, edit(EDITED_EMAIL))]),
    "write_email-response": (MEETING, "respond", [write("m1"), write("m2", content="Tue 2pm?"), done("m3")],
                             [("response", {"__response": "Shorter, and **less** formal <please>."},
                               respond("Shorter, and **less** formal <please>.")), OK]),
    "write_email-ignore": (MEETING, "respond", [write("m1")], [("ignore", {}, IGNORE)]),
    "schedule_meeting-accept": (MEETING, "respond", [calendar("m0"), meeting("m1"), write("m2"), done("m3")],
                                [OK, OK]),
    "schedule_meeting-edit": (MEETING, "respond", [calendar("m0"), meeting("m1"), write("m2"), done("m3")],
                              [("edit", EDIT_MEETING_TYPED, edit(EDITED_MEETING)), OK]),
    "schedule_meeting-response": (MEETING, "respond", [meeting("m1"), meeting("m2", duration_minutes=30), write("m3"),
                                                       done("m4")],
                                  [("response", {"__response": "30 minutes, after 2pm."},
                                    respond("30 minutes, after 2pm.")), OK, OK]),
    "schedule_meeting-ignore": (MEETING, "respond", [meeting("m1")], [("ignore", {}, IGNORE)]),
    "Question-response": (API_QUESTION, "respond", [question("m1"), write("m2", to="alice.smith@company.com"),
                                                    done("m3")],
                          [("response", {"__response": "Yes, document both."}, respond("Yes, document both.")), OK]),
    "Question-ignore": (API_QUESTION, "respond", [question("m1")], [("ignore", {}, IGNORE)]),
    "notify-response": (NOTICE, "notify", [write("m1", to="it@company.com"), done("m2")],
                        [("response", {"__response": "Thank IT."}, respond("Thank IT.")), OK]),
    "notify-ignore": (NOTICE, "notify", [], [("ignore", {}, IGNORE)]),
}


def _program(E: Any, flow: str, saver: Any = None) -> tuple[Any, list, InMemoryStore]:
    email, label, replies, _ = FLOWS[flow]
    outbox: list = []
    store = InMemoryStore()
    app = hitl_assistant(E, router(label), agent(*replies), outbox, memory=memory_model()).compile(
        checkpointer=saver if saver is not None else E.InMemorySaver(), store=store)
    return app, outbox, store


def through_view(E: Any, flow: str, saver: Any = None, **run_kw: Any) -> dict[str, Any]:
    """Run the thread under `lgnb.run`, answer each form as the page does."""
    email, _, _, answers = FLOWS[flow]
    app, outbox, store = _program(E, flow, saver)
    r = run(app, {"email_input": email}, CFG, display=False, **run_kw)
    r.wait(timeout=TIMEOUT)
    forms, replies = [], []
    for click, (choice, inputs, _) in enumerate(answers, 1):
        assert r.status == "interrupted", (r.status, r.error)
        (form,) = r.forms
        forms.append(shape(form))
        typed = typed_inputs(form, **inputs) if choice == "edit" else inputs
        reply = send(r, form, choice, typed, request=click)  # the page numbers its requests
        replies.append({k: v for k, v in reply.items() if k != "interrupt_id"})
        r.wait(timeout=TIMEOUT)
    return {"forms": forms, "replies": replies, "status": r.status, "forms_left": r.forms,
            "answers": [{k: a[k] for k in ("node", "by", "asked", "summary", "value")} for a in r.answers],
            "values": _plain(app.get_state(CFG).values), "store": _dump(store), "outbox": outbox}


def by_hand(flow: str) -> dict[str, Any]:
    """The notebook's cells on LangGraph: stream, then `Command(resume=[answer])` each time."""
    E = _diff.reference_engine()
    email, _, _, answers = FLOWS[flow]
    app, outbox, store = _program(E, flow)
    for inp in ({"email_input": email}, *(E.Command(resume=[typed]) for _, _, typed in answers)):
        for _ in app.stream(inp, CFG, stream_mode="updates"):
            pass
    return {"values": _plain(app.get_state(CFG).values), "store": _dump(store), "outbox": outbox,
            "next": app.get_state(CFG).next}


def _request(flow: str, step: int = 0) -> dict[str, Any]:
    """The request the program makes at `step` (as the ported code builds it)."""
    email, label, replies, _ = FLOWS[flow]
    author, to, subject, thread = email["author"], email["to"], email["subject"], email["email_thread"]
    markdown = format_email_markdown(subject, author, to, thread)
    if label == "notify" and step == 0:
        return {"action_request": {"action": "Email Assistant: notify", "args": {}},
                "config": {"allow_ignore": True, "allow_respond": True, "allow_edit": False, "allow_accept": False},
                "description": markdown}
    calls = [c for m in replies for c in m.tool_calls if c["name"] in REVIEW_CONFIG]
    call = calls[step - (label == "notify")]
    return {"action_request": {"action": call["name"], "args": call["args"]}, "config": REVIEW_CONFIG[call["name"]],
            "description": markdown + format_for_display(call)}


# --- the forms ------------------------------------------------------------------------------


@pytest.mark.parametrize("flow", ["write_email-accept", "schedule_meeting-accept", "Question-ignore", "notify-ignore"])
def test_each_request_is_an_inbox_form_with_the_choices_its_config_allows(flow: str) -> None:
    """The form of each kind of request: its `allow_*` flags are the buttons (Accept, Edit
    with the call's args as typed boxes, Respond with a text box, Ignore), the call's args
    shown, the e-mail and the draft (markdown, `<addresses>`) as the description, verbatim;
    it names the node that asked (inside the response agent, or the triage handler)."""
    ref = differential(lambda E: through_view(E, flow))
    form = ref["forms"][0]
    request = _request(flow)
    name, args, config = request["action_request"]["action"], request["action_request"]["args"], request["config"]
    assert form["kind"] == "inbox" and form["part"] == f"action: {name}"
    assert form["description"] == request["description"] and "<" in form["description"]
    assert form["node"] == ("triage_interrupt_handler" if flow.startswith("notify") else "response_agent:interrupt_handler")
    allowed = [k for k, flag in (("accept", "allow_accept"), ("edit", "allow_edit"), ("response", "allow_respond"),
                                 ("ignore", "allow_ignore")) if config[flag]]
    assert [c[0] for c in form["choices"]] == allowed
    assert [s["key"] for s in form["shown"]] == list(args)
    edit_inputs = [(n, t, v) for n, t, v in form["inputs"] if n != "__response"]
    assert [(n, v) for n, _, v in edit_inputs] == list(args.items())
    if "edit" in allowed:
        assert dict(c[:3:2] for c in form["choices"])["edit"] == list(args)
    if name == "schedule_meeting":
        assert [t for _, t, _ in edit_inputs] == ["json", "string", "integer", "string", "integer"]
    if name == "write_email":
        assert [t for _, t, _ in edit_inputs] == ["string", "string", "text"]


@pytest.mark.parametrize("flow", list(FLOWS))
def test_each_answer_clicked_resumes_the_thread_as_the_course_does(flow: str) -> None:
    """Every answer the course gives, clicked in the view, for every reviewed tool and the
    triage notification: the view sends the list of one `HumanResponse` the handler
    indexes with `[0]`, the run pauses again on the next request (a new form) or ends, and
    the thread ends exactly as when the notebook resumes it by hand: the same messages
    (edited calls replaced in place), the same learned preferences, the same e-mails sent."""
    ref = differential(lambda E: through_view(E, flow))
    assert ref["status"] == "done" and ref["forms_left"] == []
    assert all(reply["ok"] for reply in ref["replies"]), ref["replies"]
    assert [a["by"] for a in ref["answers"]] == ["page"] * len(FLOWS[flow][3])
    for answer, (choice, _, typed) in zip(ref["answers"], FLOWS[flow][3]):
        # Agent Inbox's HumanResponse: `args` always set, an edit's names its action too
        sent = {"args": None, **typed}
        if choice == "edit":
            sent["args"] = {"action": answer["asked"].removeprefix("action: "), **typed["args"]}
        assert answer["value"] == [sent]
    hand = _diff.normalize(by_hand(flow))
    assert hand.pop("next") == ()
    assert {k: ref[k] for k in hand} == hand


FLOWS["notebook-thread-5"] = (
    MEETING, "respond",
    [calendar("m0"), meeting("m1"), meeting("m2", duration_minutes=30), write("m3"),
     write("m4", content="Short and sweet. Looking forward to it!"), done("m5")],
    [("response", {"__response": "Please schedule this for 30 minutes instead of 45 minutes."},
      respond("Please schedule this for 30 minutes instead of 45 minutes.")), OK,
     ("response", {"__response": "Shorter and less formal."}, respond("Shorter and less formal.")), OK])


@pytest.mark.parametrize("saver,use_async", [("memory", False), ("sqlite", False), ("memory", True)],
                         ids=["memory", "sqlite", "memory-async"])
def test_the_notebooks_thread_answered_in_the_view_on_each_saver(tmp_path: Path, saver: str, use_async: bool) -> None:
    """hitl.ipynb / memory.ipynb thread 5 answered form by form (feedback on the meeting,
    accept the revision, feedback on the e-mail, accept the revision): on InMemorySaver, on
    each engine's SQLite saver, and driven with `astream` (`use_async=True`); the thread
    ends as the notebook's cells end it, with both preferences learned."""
    from _agent_scenarios import saver as engine_saver

    def scenario(E: Any) -> Any:
        with engine_saver(E, saver, tmp_path) as checkpointer:
            return through_view(E, "notebook-thread-5", checkpointer, use_async=use_async)

    ref = differential(scenario)
    assert ref["status"] == "done" and all(reply["ok"] for reply in ref["replies"])
    assert [f["part"] for f in ref["forms"]] == ["action: schedule_meeting"] * 2 + ["action: write_email"] * 2
    hand = _diff.normalize(by_hand("notebook-thread-5"))
    assert hand.pop("next") == ()
    assert {k: ref[k] for k in hand} == hand
    learned = {ns[1]: value["content"].count("\n") for ns, _, value in ref["store"]}
    assert learned == {"cal_preferences": 1, "response_preferences": 1, "triage_preferences": 0}


def test_the_two_requests_of_one_message_are_answered_one_after_the_other() -> None:
    """The model proposes a meeting and an e-mail in one message: the handler asks for the
    meeting, then (re-run from its start with the first answer) for the e-mail; the view's
    second form is the second interrupt of the same task and its answer, keyed by that
    interrupt's id, reaches it."""
    both = _calls("m1", ("schedule_meeting", MEETING_ARGS, "s1"), ("write_email", EMAIL_ARGS, "w1"))
    FLOWS["both"] = (MEETING, "respond", [both, done("m2")], [OK, ("edit", EDIT_EMAIL_TYPED, edit(EDITED_EMAIL))])
    try:
        ref = differential(lambda E: through_view(E, "both"))
        hand = _diff.normalize(by_hand("both"))
    finally:
        del FLOWS["both"]
    assert [f["part"] for f in ref["forms"]] == ["action: schedule_meeting", "action: write_email"]
    assert ref["status"] == "done" and hand.pop("next") == ()
    assert {k: ref[k] for k in hand} == hand
    assert [name for name, _ in ref["outbox"]] == ["schedule_meeting", "schedule_meeting", "write_email"]


def test_an_edit_the_page_cannot_read_is_refused_and_the_run_stays_paused() -> None:
    """A meeting length that is no number, or attendees that are no JSON: the kernel names
    the boxes, resumes nothing, and the form stays; the corrected edit then goes through."""
    def scenario(E: Any) -> Any:
        app, outbox, store = _program(E, "schedule_meeting-edit")
        r = run(app, {"email_input": MEETING}, CFG, display=False)
        r.wait(timeout=TIMEOUT)
        (form,) = r.forms
        bad = send(r, form, "edit", typed_inputs(form, duration_minutes="half an hour", attendees="pm@client.com"))
        still = (r.status, len(r.forms), r.answers)
        good = send(r, form, "edit", typed_inputs(form, **EDIT_MEETING_TYPED), request=2)
        r.wait(timeout=TIMEOUT)
        return {"bad": (bad["ok"], sorted(bad["errors"])), "still": still, "good": good["ok"],
                "next": [f["parts"][0]["title"] for f in r.forms], "outbox": outbox}

    differential(scenario, expect={
        "bad": (False, ["0.attendees", "0.duration_minutes"]), "still": ("interrupted", 1, []), "good": True,
        "next": ["action: write_email"],
        "outbox": [("schedule_meeting", {"attendees": ["pm@client.com", "lance@company.com"],
                                         "subject": "Tax Planning Discussion", "minutes": 30, "day": "2025-04-22"})]})


def test_the_saved_page_shows_the_request_as_escaped_text() -> None:
    """The paused run saved as HTML (no script): the request's e-mail (`<pm@client.com>`)
    and the draft's `<Looking forward>` are escaped text, never markup; the answer record
    says what was asked and answered."""
    def scenario(E: Any) -> Any:
        app, _, _ = _program(E, "write_email-response")
        r = run(app, {"email_input": MEETING}, CFG, display=False)
        r.wait(timeout=TIMEOUT)
        paused = r.view._static_html()
        send(r, r.forms[0], "response", {"__response": "No <b>bold</b> please."})
        r.wait(timeout=TIMEOUT)
        answered = r.view._static_html()
        return {"raw": ["<pm@client.com>" in paused, "<Looking forward>" in paused, "<b>bold</b>" in answered],
                "escaped": ["&lt;pm@client.com&gt;" in paused, "&lt;b&gt;bold&lt;/b&gt;" in answered],
                "answers": [(a["asked"], a["summary"]) for a in r.answers]}

    differential(scenario, expect={"raw": [False, False, False], "escaped": [True, True],
                                   "answers": [("action: write_email", "Respond: No <b>bold</b> please.")]})


def test_answering_in_code_with_the_courses_value_is_recorded_beside_the_clicks() -> None:
    """A cell answers the first request as the notebook does (`run.resume([{"type":
    "accept"}])`), a click answers the next: both reach the handler, both are on record,
    worded alike ("Accept <action>")."""
    def scenario(E: Any) -> Any:
        app, outbox, _ = _program(E, "schedule_meeting-accept")
        r = run(app, {"email_input": MEETING}, CFG, display=False)
        r.wait(timeout=TIMEOUT)
        r.resume([ACCEPT])
        r.wait(timeout=TIMEOUT)
        (form,) = r.forms
        send(r, form, "accept")
        r.wait(timeout=TIMEOUT)
        return {"status": r.status, "outbox": [name for name, _ in outbox],
                "answers": [(a["by"], a["asked"], a["summary"], a["value"]) for a in r.answers]}

    differential(scenario, expect={
        "status": "done", "outbox": ["schedule_meeting", "write_email"],
        "answers": [("code", "action: schedule_meeting", "Accept schedule_meeting", [{"type": "accept"}]),
                    ("page", "action: write_email", "Accept write_email", [{"type": "accept", "args": None}])]})

"""Approval forms for the `interrupt()` payloads people actually write, answered through the
run view's form handler (what a click sends), on LangGraph and on lgnb (`differential`).

Each test is a program: it pauses on `interrupt(payload)`, the kernel turns the payload into
a form, every choice the form offers is answered through `RunView._dispatch` (the page's
"answer" message), and the program's outcome is compared across engines and with the same
program on LangGraph resumed by hand with the value a user would have typed
(`Command(resume=...)`): the form must send exactly what the program expects.
"""

from __future__ import annotations

import json
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langchain.agents")

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))

import _diff  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from lgnb.widgets import run  # noqa: E402
from lgnb.widgets._forms import answer_for, asked, form_for  # noqa: E402

differential = _diff.differential
EVIL = '<img src=x onerror="alert(1)">'
TIMEOUT = 60


# ------------------------------------------------------------------------------ helpers
class Log(TypedDict):
    log: Annotated[list, operator.add]


def _cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _plain(value: Any) -> Any:
    """Messages as (type, content, tool calls); the rest as it is."""
    if isinstance(value, BaseMessage):
        calls = [(c["name"], c["args"]) for c in getattr(value, "tool_calls", None) or ()]
        return (value.type, value.content, calls)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "__interrupt__"}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def one_node(E: Any, node: Callable[[Any], Any]) -> Any:
    g = E.StateGraph(Log)
    g.add_node("ask", node)
    g.add_edge(E.START, "ask")
    g.add_edge("ask", E.END)
    return g.compile(checkpointer=E.InMemorySaver())


def paused(graph: Any, inp: Any, thread: str = "t") -> Any:
    r = run(graph, inp, _cfg(thread), display=False)
    r.wait(timeout=TIMEOUT)
    assert r.status == "interrupted", (r.status, r.error)
    return r


def send(r: Any, form: dict[str, Any], picks: list[dict[str, Any]], request: int = 1, hold: bool = False) -> dict[str, Any]:
    """What the page sends when a choice is made; the kernel's reply."""
    replies: list[dict[str, Any]] = []
    r.view.send = lambda msg, buffers=None: replies.append(msg)
    try:
        r.view._dispatch(r.view, {"kind": "answer", "id": request, "interrupt_id": form["id"], "picks": picks,
                                  "hold": hold}, [])
    finally:
        del r.view.send
    (reply,) = [m for m in replies if m.get("kind") == "resume-result"]
    return reply


def send_held(r: Any) -> None:
    r.view.send = lambda msg, buffers=None: None
    try:
        r.view._dispatch(r.view, {"kind": "send_held", "id": 999}, [])
    finally:
        del r.view.send


def settle(r: Any) -> Any:
    out = r.wait(timeout=TIMEOUT)
    assert r.status in ("done", "interrupted"), (r.status, r.error)
    return out


def pick(choice: str, **inputs: Any) -> list[dict[str, Any]]:
    return [{"part": 0, "choice": choice, "inputs": inputs}]


def shape(form: dict[str, Any]) -> dict[str, Any]:
    """What the page draws, without ids."""
    return {"kind": form["kind"], "title": form["title"], "fields": form["fields"], "text": form["text"],
            "parts": [{"title": p["title"], "description": p["description"], "shown": p["shown"],
                       "choices": [(c["key"], c["label"], c.get("value")) for c in p["choices"]],
                       "inputs": [(i["name"], i["type"], i.get("value")) for i in p["inputs"]]}
                      for p in form["parts"]]}


def through_form(E: Any, build: Callable[[Any], Any], inp: Any, picks: list[dict[str, Any]]) -> dict[str, Any]:
    """Pause, draw the one form, answer it with `picks`, return what the program did."""
    graph = build(E)
    r = paused(graph, inp)
    (form,) = r.forms
    reply = send(r, form, picks)
    assert reply["ok"], reply
    result = settle(r)
    return {"form": shape(form), "sent": r.answers[0]["value"], "summary": r.answers[0]["summary"],
            "status": r.status, "result": _plain(result)}


def by_hand(build: Callable[[Any], Any], inp: Any, value: Any) -> Any:
    """The same program on LangGraph, resumed with what a user would type in code."""
    E = _diff.reference_engine()
    graph = build(E)
    graph.invoke(inp, _cfg("hand"))
    return _plain(graph.invoke(E.Command(resume=value), _cfg("hand")))


def check_form_path(build: Callable[[Any], Any], inp: Any, picks: list[dict[str, Any]], typed: Any) -> dict[str, Any]:
    """Differential over the form path, and the form sent what the user would have typed."""
    ref = differential(lambda E: through_form(E, build, inp, picks))
    assert ref["sent"] == _diff.normalize(typed)
    assert ref["result"] == _diff.normalize(by_hand(build, inp, typed))
    return ref


def echo(E: Any, payload: Any, **kw: Any) -> Callable[[Any], Any]:
    def build(E: Any) -> Any:
        def ask(state: Any) -> Any:
            got = E.interrupt(payload, **kw)
            return {"log": [repr(got)]}
        return one_node(E, ask)
    return build


# ------------------------------------------------------------------ questions and options
@pytest.mark.parametrize("typed", ["Tea time", EVIL, ""])
def test_a_string_question_sends_the_typed_text(typed: str) -> None:
    """`interrupt("What title?")` is a text box; the node gets exactly the text typed."""
    ref = check_form_path(lambda E: echo(E, "What should the title be?")(E), {"log": []},
                          pick("send", answer=typed), typed)
    assert ref["form"]["kind"] == "question" and ref["result"] == {"log": [repr(typed)]}


@pytest.mark.parametrize("choice", ["yes", "no"])
def test_a_yes_no_question_has_two_buttons_that_send_yes_or_no(choice: str) -> None:
    """A question saying "(yes/no)" gets Yes / No buttons sending "yes" / "no"."""
    def build(E: Any) -> Any:
        def ask(state: Any) -> Any:
            ok = E.interrupt("Deploy to prod? (yes/no)")
            return {"log": ["deployed" if ok == "yes" else "held"]}
        return one_node(E, ask)
    ref = check_form_path(build, {"log": []}, pick(choice), choice)
    assert [c[1] for c in ref["form"]["parts"][0]["choices"]] == ["Yes", "No"]
    assert ref["result"]["log"] == ["deployed" if choice == "yes" else "held"]


@pytest.mark.parametrize("index,value", [("0", "staging"), ("1", "prod")])
def test_question_with_string_options_sends_the_option(index: str, value: str) -> None:
    """`{"question", "options": [...]}`: one button per option, the option is the answer."""
    payload = {"question": "Which environment?", "options": ["staging", "prod"]}
    ref = check_form_path(lambda E: echo(E, payload)(E), {"log": []}, pick(index), value)
    assert ref["form"]["fields"] == [{"key": "question", "text": "Which environment?"}]
    assert [c[1] for c in ref["form"]["parts"][0]["choices"]] == ["staging", "prod"]


@pytest.mark.parametrize("index,value", [("0", 1), ("1", {"level": "low", "days": 3})])
def test_labelled_options_send_their_value_not_their_label(index: str, value: Any) -> None:
    """Options `{"label", "value"}` show the label and send the value (any JSON)."""
    payload = {"question": "Priority?", "choices": [{"label": "High", "value": 1},
                                                   {"label": "Low", "value": {"level": "low", "days": 3}}]}
    ref = check_form_path(lambda E: echo(E, payload)(E), {"log": []}, pick(index), value)
    assert [c[1] for c in ref["form"]["parts"][0]["choices"]] == ["High", "Low"]


def test_question_dict_with_context_is_a_text_box_showing_every_field() -> None:
    """`{"question", "draft"}` without options: a text box; the draft is shown as text."""
    payload = {"question": "Any edits to the draft?", "draft": f"Dear {EVIL},\nhello"}
    ref = check_form_path(lambda E: echo(E, payload)(E), {"log": []}, pick("send", answer="Sign it"), "Sign it")
    assert ref["form"]["kind"] == "question"
    assert ref["form"]["fields"][1] == {"key": "draft", "text": f"Dear {EVIL},\nhello"}


@pytest.mark.parametrize("payload", [42, None, 3.5, ["a", "b"], {"plan": {"steps": [1, 2], "owner": EVIL}}],
                         ids=["int", "none", "float", "list", "nested"])
@pytest.mark.parametrize("choice,typed", [("approve", "approve"), ("reject", "reject"),
                                          ("answer", "change step 2")])
def test_any_other_payload_is_approve_reject_or_words(payload: Any, choice: str, typed: str) -> None:
    """Numbers, None, lists, nested JSON: Approve / Reject / answer in words, each sent as text."""
    inputs = {"answer": typed} if choice == "answer" else {}
    ref = check_form_path(lambda E: echo(E, payload)(E), {"log": []}, pick(choice, **inputs), typed)
    assert ref["form"]["kind"] == "value"
    if isinstance(payload, dict):
        assert ref["form"]["fields"] == [{"key": "plan", "text": '{\n  "steps": [\n    1,\n    2\n  ],\n  "owner": '
                                          + '"<img src=x onerror=\\"alert(1)\\">"\n}'}]


# --------------------------------------------------------------- pydantic / dataclass payloads
class Question(BaseModel):
    question: str
    options: list[str] = Field(default_factory=list)


@dataclass
class Draft:
    question: str
    body: str


def test_a_pydantic_payload_is_drawn_like_its_fields() -> None:
    """`interrupt(Question(question=..., options=[...]))`: the model's fields make the form."""
    ref = check_form_path(lambda E: echo(E, Question(question="Which plan?", options=["basic", "pro"]))(E),
                          {"log": []}, pick("1"), "pro")
    assert ref["form"]["kind"] == "options"
    assert [c[1] for c in ref["form"]["parts"][0]["choices"]] == ["basic", "pro"]


def test_a_dataclass_payload_is_drawn_like_its_fields() -> None:
    """`interrupt(Draft(question=..., body=...))`: a question box with the body shown."""
    ref = check_form_path(lambda E: echo(E, Draft("Edit the reply?", EVIL))(E),
                          {"log": []}, pick("send", answer="ok as is"), "ok as is")
    assert ref["form"]["kind"] == "question"
    assert {"key": "body", "text": EVIL} in ref["form"]["fields"]


@pytest.mark.parametrize("payload", [Question(question="Which plan?", options=["basic", "pro"]),
                                     Draft("Edit the reply?", EVIL)], ids=["pydantic", "dataclass"])
def test_form_for_called_on_an_object_payload_draws_what_the_view_draws(payload: Any) -> None:
    """A user's own renderer or test calling `form_for` on the raw `Interrupt` value (an
    object, not its JSON) gets the form the view draws, and `answer_for` the same answer."""
    from lgnb.draw import jsonable

    raw = form_for({"id": "i", "value": payload})
    assert shape(raw) == shape(form_for({"id": "i", "value": jsonable(payload)}))
    choice = pick("1") if isinstance(payload, Question) else pick("send", answer="ok as is")
    assert answer_for({"id": "i", "value": payload}, choice) == \
        answer_for({"id": "i", "value": jsonable(payload)}, choice)


# ---------------------------------------------------------------------------- response_schema
TICKET = {"type": "object", "title": "Ticket", "required": ["title", "copies"], "properties": {
    "title": {"type": "string", "description": "short"}, "copies": {"type": "integer", "minimum": 1},
    "urgent": {"type": "boolean"}}}


def test_a_response_schema_form_sends_a_typed_object() -> None:
    """`interrupt(..., response_schema={object})`: one input per property, typed values sent."""
    ref = check_form_path(lambda E: echo(E, "File a ticket", response_schema=TICKET)(E), {"log": []},
                          pick("send", title="disk full", copies="2", urgent=True),
                          {"title": "disk full", "copies": 2, "urgent": True})
    assert ref["form"]["kind"] == "schema" and ref["form"]["text"] == "File a ticket"


def test_a_response_schema_answer_missing_a_required_field_resumes_nothing() -> None:
    """A required field left empty, or a value below `minimum`: refused naming the field."""
    def scenario(E: Any) -> Any:
        graph = echo(E, "File a ticket", response_schema=TICKET)(E)
        r = paused(graph, {"log": []})
        (form,) = r.forms
        missing = send(r, form, pick("send", title="x", copies=""), 1)
        low = send(r, form, pick("send", title="x", copies="0"), 2)
        state = graph.get_state(_cfg())
        return {"missing": (missing["ok"], missing["errors"]), "low": (low["ok"], sorted(low["errors"])),
                "status": r.status, "answers": r.answers, "next": state.next}
    differential(scenario, expect={"missing": (False, {"0.copies": "required"}), "low": (False, ["0.copies"]),
                                   "status": "interrupted", "answers": [], "next": ("ask",)})


class Review(BaseModel):
    approved: bool
    score: int


def test_an_answer_from_code_the_response_schema_refuses_leaves_the_run_waiting() -> None:
    """`run.resume(bad)` where `interrupt(..., response_schema=Review)` refuses the value: the
    engine saves nothing and the thread still asks, so the view keeps its form, the refused
    answer is not on record, `wait()` raises why once, and a good answer then resumes. The
    refusal is said on the form, not listed among the run's errors (before, the finished run
    still showed the ValidationError under `ask`), on the page too: its content is reloaded."""
    def scenario(E: Any) -> Any:
        graph = echo(E, {"question": "Review"}, response_schema=Review)(E)
        r = paused(graph, {"log": []})
        page, patched = [], [0]  # the content snapshots the page is sent; its patches' last seq
        r.view.observe(lambda change: page.append(change["new"]), names="snapshot")
        send = r.view.send

        def sent(msg: Any, buffers: Any = None) -> None:
            if msg.get("kind") == "patches":
                patched[0] = max([patched[0], *(p["seq"] for p in msg["patches"])])
            send(msg, buffers)

        r.view.send = sent
        r.resume({"approved": "maybe", "score": "x"})
        refused = _diff.capture(lambda: r.wait(timeout=TIMEOUT))
        del r.view.send
        # the page loads a snapshot newer than the patches it applied (the error row's among them)
        after = (r.status, len(r.forms), r.answers, r.view.form_error.startswith("Could not resume"),
                 [i.value for i in graph.get_state(_cfg()).interrupts], r.content["errors"],
                 page[-1]["errors"], page[-1]["seq"] > patched[0] > 0)
        r.resume({"approved": True, "score": 3})
        out = settle(r)
        return {"refused": refused[:2], "after": after,
                "then": (r.status, out["log"], len(r.answers), r.content["errors"], page[-1]["errors"])}

    ref = differential(scenario)
    assert ref["refused"] == ("raises", "ValidationError")
    assert ref["after"] == ("interrupted", 1, [], True, [{"question": "Review"}], [], [], True)
    assert ref["then"] == ("done", ["Review(approved=True, score=3)"], 1, [], [])


class Scored(BaseModel):
    score: int = Field(le=10)


def test_two_answers_sent_at_once_one_refused_leave_only_the_refused_question_open() -> None:
    """`a` and `b` ask in parallel; both answers go out together and `b`'s is refused by its
    schema. The engine keeps `a`'s (its node ran) and asks `b` again: the view shows `b`
    only, `a`'s answer stays on record, and answering `b` finishes the run."""
    def scenario(E: Any) -> Any:
        class Two(TypedDict):
            log: Annotated[list, operator.add]

        def asker(name: str) -> Any:
            def node(state: Any) -> Any:
                return {"log": [f"{name}:{E.interrupt(name, response_schema=Scored).score}"]}
            return node

        g = E.StateGraph(Two)
        g.add_node("a", asker("a"))
        g.add_node("b", asker("b"))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        graph = g.compile(checkpointer=E.InMemorySaver())
        r = paused(graph, {"log": []})
        ids = {i["value"]: i["id"] for i in r.interrupts}
        r.resume({ids["a"]: {"score": 1}, ids["b"]: {"score": 99}})
        refused = _diff.capture(lambda: r.wait(timeout=TIMEOUT))
        after = (r.status, [i["value"] for i in r.interrupts], [a["node"] for a in r.answers],
                 [i.value for i in graph.get_state(_cfg()).interrupts])
        r.resume({"score": 2})
        out = settle(r)
        return {"refused": refused[:2], "after": after, "then": (r.status, sorted(out["log"]), len(r.answers))}

    ref = differential(scenario)
    assert ref["refused"] == ("raises", "ValidationError")
    assert ref["after"] == ("interrupted", ["b"], ["a"], ["b"])
    assert ref["then"] == ("done", ["a:1", "b:2"], 2)


# ------------------------------------------------------------ LangChain HumanInTheLoopMiddleware
class ToolChat(FakeMessagesListChatModel):
    """Scripted replies an agent can bind tools to."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolChat:
        return self


def _calls(*calls: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


class EmailArgs(BaseModel):
    to: str
    subject: str
    copies: int = Field(default=1, ge=1)


def agent_builder(mode: str = "batched", delete: list[str] | None = None, extra_tool: Any = None,
                  replies: list[AIMessage] | None = None) -> Callable[[Any], Any]:
    """`create_agent` + `HumanInTheLoopMiddleware` over two tools that record what ran."""
    def build(E: Any) -> Any:
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware
        from langchain_core.tools import tool

        ran: list[str] = []

        @tool(args_schema=EmailArgs)
        def send_email(to: str, subject: str, copies: int = 1) -> str:
            """Send an email."""
            ran.append(f"email {to}|{subject}|{copies}")
            return f"sent to {to} x{copies}"

        @tool
        def delete_file(path: str) -> str:
            """Delete a file."""
            ran.append(f"delete {path}")
            return f"deleted {path}"

        script = replies or [_calls(("send_email", {"to": "bob", "subject": EVIL}, "c1"),
                                    ("delete_file", {"path": "/tmp/x"}, "c2")), AIMessage(content="all done")]
        hitl = HumanInTheLoopMiddleware(interrupt_on={
            "send_email": True, "delete_file": {"allowed_decisions": delete or ["approve", "reject"]}},
            interrupt_mode=mode)
        tools = [send_email, delete_file] + ([extra_tool(E, ran)] if extra_tool else [])
        agent = create_agent(ToolChat(responses=list(script)), tools, middleware=[hitl],
                             checkpointer=E.InMemorySaver())
        if E.root == "lgnb":
            from lgnb.graph import from_langgraph
            agent = from_langgraph(agent)
        agent.ran = ran
        return agent
    return build


def agent_outcome(r: Any, result: Any) -> dict[str, Any]:
    msgs = _plain(result)["messages"]
    return {"status": r.status, "ran": sorted(r.graph.ran), "tool_messages": sorted(m[1] for m in msgs if m[0] == "tool"),
            "last": msgs[-1], "sent": [a["value"] for a in r.answers]}


HITL_PICKS = {
    "approve": ({"choice": "approve", "inputs": {}}, {"type": "approve"}),
    "edit": ({"choice": "edit", "inputs": {"to": "carol", "subject": "hi", "copies": "2"}},
             {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "carol", "subject": "hi",
                                                                                "copies": 2}}}),
    "reject": ({"choice": "reject", "inputs": {"__message": "not to bob"}}, {"type": "reject", "message": "not to bob"}),
    "respond": ({"choice": "respond", "inputs": {"__message": "Bob is on leave"}},
                {"type": "respond", "message": "Bob is on leave"}),
}


@pytest.mark.parametrize("decision", ["approve", "edit", "reject", "respond"])
def test_batched_hitl_two_tool_calls_each_decision_does_what_it_says(decision: str) -> None:
    """One form for the model's two calls; the decisions go in order and the tools obey."""
    build = agent_builder()
    first, typed = HITL_PICKS[decision]
    second = "approve" if decision in ("approve", "edit") else "reject"
    picks = [{"part": 0, **first}, {"part": 1, "choice": second, "inputs": {}}]

    def scenario(E: Any) -> Any:
        r = paused(build(E), {"messages": [("user", "mail bob, clean up")]})
        (form,) = r.forms
        out = agent_outcome(r, settle(r) if send(r, form, picks)["ok"] else None)
        return {"form": shape(form), **out}

    ref = differential(scenario)
    hand = {"decisions": [typed, {"type": second}]}
    assert ref["sent"] == [hand]
    E = _diff.reference_engine()
    agent = build(E)
    agent.invoke({"messages": [("user", "mail bob, clean up")]}, _cfg("hand"))
    done = agent.invoke(E.Command(resume=hand), _cfg("hand"))
    assert ref["tool_messages"] == sorted(m.content for m in done["messages"] if m.type == "tool")
    assert ref["ran"] == sorted(agent.ran)
    assert [c[0] for c in ref["form"]["parts"][0]["choices"]] == ["approve", "edit", "reject", "respond"]
    assert [c[0] for c in ref["form"]["parts"][1]["choices"]] == ["approve", "reject"]
    assert ref["form"]["parts"][0]["shown"] == [{"key": "to", "text": "bob"}, {"key": "subject", "text": EVIL}]


def test_batched_hitl_edit_that_breaks_the_tool_schema_resumes_nothing() -> None:
    """Edited args that fail the tool's schema (not a number; below `ge=1`; a required
    argument missing) are refused naming the field; the agent stays paused, no tool runs."""
    build = agent_builder()

    def scenario(E: Any) -> Any:
        r = paused(build(E), {"messages": [("user", "mail bob")]})
        (form,) = r.forms
        out = {}
        for n, edit in enumerate([{"to": "c", "subject": "s", "copies": "two"}, {"to": "c", "subject": "s", "copies": "0"},
                                  {"subject": "s", "copies": "1"}]):
            reply = send(r, form, [{"part": 0, "choice": "edit", "inputs": edit},
                                   {"part": 1, "choice": "approve", "inputs": {}}], n + 1)
            out[n] = (reply["ok"], sorted(reply["errors"]), reply["error"].startswith("Not sent:"))
        return {**out, "status": r.status, "ran": r.graph.ran, "answers": r.answers}

    differential(scenario, expect={0: (False, ["0.copies"], True), 1: (False, ["0.copies"], True),
                                   2: (False, ["0.to"], True), "status": "interrupted", "ran": [], "answers": []})


@pytest.mark.parametrize("decision", ["approve", "edit", "reject", "respond"])
def test_per_call_hitl_each_tool_call_is_its_own_form_answered_together(decision: str) -> None:
    """`interrupt_mode="per_call"`: one `ToolApprovalRequest` per call, two forms pending;
    each sends one `Decision` (LangGraph checks it against the `response_schema`), held and
    sent together."""
    build = agent_builder("per_call", delete=["reject"])
    first, typed = HITL_PICKS[decision]

    def scenario(E: Any) -> Any:
        r = paused(build(E), {"messages": [("user", "mail bob, clean up")]})
        forms = {f["parts"][0]["title"]: f for f in r.forms}
        email, delete = forms["tool call: send_email"], forms["tool call: delete_file"]
        a = send(r, email, [{"part": 0, **first}], 1, hold=True)
        b = send(r, delete, [{"part": 0, "choice": "reject", "inputs": {}}], 2, hold=True)
        assert a["ok"] and a["held"] and b["ok"] and b["held"], (a, b)
        send_held(r)
        out = agent_outcome(r, settle(r))
        return {"email": shape(email), "delete": shape(delete), **out,
                "sent": sorted(repr(a["value"]) for a in r.answers)}

    ref = differential(scenario)
    assert ref["sent"] == sorted([repr(typed), repr({"type": "reject"})])
    assert [c[0] for c in ref["email"]["parts"][0]["choices"]] == ["approve", "edit", "reject", "respond"]
    assert [c[0] for c in ref["delete"]["parts"][0]["choices"]] == ["reject"]
    assert ref["email"]["kind"] == "tool_approval"
    E = _diff.reference_engine()
    agent = build(E)
    out = agent.invoke({"messages": [("user", "mail bob, clean up")]}, _cfg("hand"))
    ids = {i.value["name"]: i.id for i in out["__interrupt__"]}
    done = agent.invoke(E.Command(resume={ids["send_email"]: typed, ids["delete_file"]: {"type": "reject"}}),
                        _cfg("hand"))
    assert ref["tool_messages"] == sorted(m.content for m in done["messages"] if m.type == "tool")
    assert ref["ran"] == sorted(agent.ran) and ref["status"] == "done"


def test_per_call_hitl_bad_edit_is_refused_before_langgraph_would_raise() -> None:
    """An edit that fails the tool's schema is refused in the kernel (naming the field),
    instead of resuming and failing the run on the `response_schema` check."""
    build = agent_builder("per_call", delete=["reject"])

    def scenario(E: Any) -> Any:
        r = paused(build(E), {"messages": [("user", "mail bob")]})
        email = next(f for f in r.forms if f["parts"][0]["title"] == "tool call: send_email")
        bad = send(r, email, pick("edit", to="c", subject="s", copies="0"))
        return {"ok": bad["ok"], "errors": sorted(bad["errors"]), "status": r.status, "ran": r.graph.ran}

    differential(scenario, expect={"ok": False, "errors": ["0.copies"], "status": "interrupted", "ran": []})


def test_an_interrupt_inside_a_tool_is_a_question_whose_answer_the_tool_gets() -> None:
    """A tool that asks (`interrupt("Confirm ...? (yes/no)")`) pauses the agent; "no" reaches it."""
    def confirm_tool(E: Any, ran: list[str]) -> Any:
        from langchain_core.tools import tool

        @tool
        def transfer(amount: int) -> str:
            """Transfer money."""
            ok = E.interrupt(f"Transfer ${amount}? (yes/no)")
            ran.append(f"transfer {amount} {ok}")
            return "transferred" if ok == "yes" else "cancelled by the user"
        return transfer

    build = agent_builder(extra_tool=confirm_tool,
                          replies=[_calls(("transfer", {"amount": 50}, "t1")), AIMessage(content="ok")])

    def scenario(E: Any) -> Any:
        r = paused(build(E), {"messages": [("user", "pay")]})
        (form,) = r.forms
        assert send(r, form, pick("no"))["ok"]
        return {"form": shape(form), **agent_outcome(r, settle(r))}

    ref = differential(scenario)
    assert ref["form"]["text"] == "Transfer $50? (yes/no)" and ref["ran"] == ["transfer 50 no"]
    assert ref["tool_messages"] == ["cancelled by the user"] and ref["sent"] == ["no"]


# ---------------------------------------------------------------- agent-inbox HumanInterrupt
def inbox_builder(as_list: bool = True, **config: bool) -> Callable[[Any], Any]:
    """The LangGraph prebuilt docs' program: `interrupt([HumanInterrupt])[0]`, then branch
    on the `HumanResponse` type."""
    def build(E: Any) -> Any:
        def review(state: Any) -> Any:
            request = {"action_request": {"action": "send_email", "args": {"to": "bob", "body": EVIL}},
                       "config": {"allow_accept": False, "allow_edit": False, "allow_respond": False,
                                  "allow_ignore": False, **config},
                       "description": f"Please review the email to **bob**: {EVIL}"}
            got = E.interrupt([request]) if as_list else E.interrupt(request)
            response = got[0] if as_list else got
            kind = response["type"]
            if kind == "accept":
                return {"log": ["sent to bob"]}
            if kind == "edit":
                return {"log": [f"sent to {response['args']['args']['to']} via {response['args']['action']}"]}
            if kind == "response":
                return {"log": [f"feedback: {response['args']}"]}
            return {"log": [f"ignored ({response['args']})"]}
        return one_node(E, review)
    return build


ALL = {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": True}


@pytest.mark.parametrize("as_list", [True, False], ids=["list_of_one", "bare"])
@pytest.mark.parametrize("choice,inputs,typed,log", [
    ("accept", {}, {"type": "accept", "args": None}, "sent to bob"),
    ("edit", {"to": "carol", "body": "hi"}, {"type": "edit", "args": {"action": "send_email",
                                                                      "args": {"to": "carol", "body": "hi"}}},
     "sent to carol via send_email"),
    ("response", {"__response": "say it nicer"}, {"type": "response", "args": "say it nicer"}, "feedback: say it nicer"),
    ("ignore", {}, {"type": "ignore", "args": None}, "ignored (None)"),
])
def test_agent_inbox_request_each_choice_sends_a_human_response(as_list: bool, choice: str, inputs: dict[str, Any],
                                                                  typed: Any, log: str) -> None:
    """Accept / Edit / Respond / Ignore send the `HumanResponse` the program branches on."""
    build = inbox_builder(as_list, **ALL)
    ref = check_form_path(build, {"log": []}, pick(choice, **inputs), [typed] if as_list else typed)
    assert ref["result"] == {"log": [log]} and ref["form"]["kind"] == "inbox"
    assert ref["form"]["parts"][0]["description"] == f"Please review the email to **bob**: {EVIL}"
    assert [c[0] for c in ref["form"]["parts"][0]["choices"]] == ["accept", "edit", "response", "ignore"]


def test_agent_inbox_config_limits_the_choices_and_an_empty_response_is_refused() -> None:
    """Only the `allow_*` choices appear; Respond with no text resumes nothing."""
    def scenario(E: Any) -> Any:
        r = paused(inbox_builder(True, allow_respond=True, allow_ignore=True)(E), {"log": []})
        (form,) = r.forms
        empty = send(r, form, pick("response", __response="  "), 1)
        accept = send(r, form, pick("accept"), 2)
        return {"choices": [c["key"] for c in form["parts"][0]["choices"]], "empty": (empty["ok"], empty["errors"]),
                "accept": accept["ok"], "status": r.status, "answers": r.answers}
    differential(scenario, expect={"choices": ["response", "ignore"], "empty": (False, {"0.__response": "required"}),
                                   "accept": False, "status": "interrupted", "answers": []})


# ---------------------------------------------------------- parallel nodes, subgraphs, inbox
def test_two_parallel_nodes_asking_are_answered_together() -> None:
    """Two branches pause at once (a question and options): both answers held, sent as one
    keyed resume; each node gets its own answer."""
    def build(E: Any) -> Any:
        def name(state: Any) -> Any:
            return {"log": [f"name={E.interrupt('Name the release?')}"]}

        def env(state: Any) -> Any:
            return {"log": [f"env={E.interrupt({'question': 'Where?', 'options': ['staging', 'prod']})}"]}

        g = E.StateGraph(Log)
        g.add_node("name", name)
        g.add_node("env", env)
        g.add_edge(E.START, "name")
        g.add_edge(E.START, "env")
        return g.compile(checkpointer=E.InMemorySaver())

    def scenario(E: Any) -> Any:
        r = paused(build(E), {"log": []})
        forms = {f["node"]: f for f in r.forms}
        a = send(r, forms["name"], pick("send", answer="v2 <beta>"), 1, hold=True)
        b = send(r, forms["env"], pick("1"), 2, hold=True)
        status_while_held = r.status
        send_held(r)
        result = settle(r)
        return {"held": (a["held"], b["held"]), "while": status_while_held, "log": sorted(result["log"]),
                "kinds": sorted(f["kind"] for f in forms.values()), "answers": sorted(a["value"] for a in r.answers)}

    differential(scenario, expect={"held": (True, True), "while": "interrupted",
                                   "log": ["env=prod", "name=v2 <beta>"], "kinds": ["options", "question"],
                                   "answers": ["prod", "v2 <beta>"]})


def test_an_interrupt_inside_a_subgraph_is_answered_from_the_parent_run() -> None:
    """A subgraph node asks; the parent run's form resumes it and the parent carries on."""
    def build(E: Any) -> Any:
        sub = E.StateGraph(Log)
        sub.add_node("approve", lambda s: {"log": [f"sub got {E.interrupt({'question': 'Merge?', 'options': ['merge', 'wait']})}"]})
        sub.add_edge(E.START, "approve")
        g = E.StateGraph(Log)
        g.add_node("prep", lambda s: {"log": ["prep"]})
        g.add_node("review", sub.compile())
        g.add_node("after", lambda s: {"log": ["after"]})
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "review")
        g.add_edge("review", "after")
        return g.compile(checkpointer=E.InMemorySaver())

    ref = check_form_path(build, {"log": []}, pick("0"), "merge")
    assert ref["result"]["log"][-2:] == ["sub got merge", "after"]


@pytest.mark.parametrize("payload,question", [
    ("Ship it?", "Ship it?"),
    ({"question": "Which env?", "options": ["a"]}, "Which env?"),
    ({"action_requests": [{"name": "send_email", "args": {}}, {"name": "rm", "args": {}}], "review_configs": []},
     "tool calls: send_email, rm"),
    ([{"action_request": {"action": "publish", "args": {}}, "config": {}}], "action: publish"),
    ({"type": "tool_approval", "tool_call_id": "c1", "name": "send_email", "args": {}, "description": "d"},
     "tool call: send_email"),
])
def test_the_inbox_row_says_what_each_payload_asks(payload: Any, question: str) -> None:
    """The inbox lists each waiting thread by its question, for every shape (a server
    thread's `interrupts` map task ids to lists of `{"value", "id"}`)."""
    from lgnb.widgets.inbox_view import _question

    assert asked(payload) == question
    thread = {"interrupts": {"task-1": [{"value": payload, "id": "i1"}], "task-2": [{"value": "x", "id": "i2"}]}}
    assert _question(thread) == (f"{question} (+1 more)", "i1")


# ------------------------------------------------------------------------ plain text only
def test_every_payload_string_in_a_form_is_plain_text_and_never_html() -> None:
    """User and model strings land verbatim in text fields (the browser sets textContent);
    no field of a form carries markup made from them, and the static HTML escapes them."""
    payloads = [EVIL, {"question": EVIL, "options": [EVIL, {"label": EVIL, "value": 1}]},
                {"question": "q", "note": EVIL},
                {"action_requests": [{"name": EVIL, "args": {EVIL: EVIL}, "description": EVIL}],
                 "review_configs": [{"action_name": EVIL, "allowed_decisions": ["approve", "edit"]}]},
                [{"action_request": {"action": EVIL, "args": {"x": EVIL}}, "config": {"allow_edit": True},
                  "description": EVIL}],
                {"type": "tool_approval", "tool_call_id": "c", "name": EVIL, "args": {"a": EVIL}, "description": EVIL}]
    for payload in payloads:
        form = form_for({"id": "i", "value": payload})
        texts: list[str] = []

        def walk(v: Any, texts: list[str] = texts) -> None:
            if isinstance(v, str):
                texts.append(v)
            elif isinstance(v, dict):
                assert not any("html" in str(k).lower() for k in v), v
                for x in v.values():
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)
        walk(form)
        assert any(EVIL in t for t in texts), form  # verbatim: shown as text, not dropped or escaped
        assert not any("&lt;" in t for t in texts)

    def scenario(E: Any) -> Any:
        r = paused(echo(E, {"question": EVIL, "options": [EVIL]})(E), {"log": []})
        html = r.view._static_html()
        return {"raw": EVIL in html, "escaped": "&lt;img" in html}
    differential(scenario, expect={"raw": False, "escaped": True})


def test_a_custom_reviewer_payload_with_html_keys_is_still_text() -> None:
    """A payload with keys named like markup (`html`, `body_html`) is shown as text fields."""
    form = form_for({"id": "i", "value": {"html": "<b>x</b>", "body_html": "<i>y</i>"}})
    assert form["fields"] == [{"key": "html", "text": "<b>x</b>"}, {"key": "body_html", "text": "<i>y</i>"}]
    value, summary = answer_for({"id": "i", "value": {"html": "<b>x</b>"}}, pick("answer", answer="<u>ok</u>"))
    assert value == "<u>ok</u>" and summary == "Answer: <u>ok</u>"


def test_the_lens_draws_the_same_inbox_form_and_its_edit_resumes_the_program() -> None:
    """Stepping the agent-inbox program in the lens: the same form, the edit sends the
    `HumanResponse` and the program uses the edited args."""
    from lgnb.widgets.lens_view import Lens

    def scenario(E: Any) -> Any:
        lens = Lens(inbox_builder(True, allow_edit=True, allow_accept=True)(E), {"log": []})
        lens.run()
        (form,) = lens.view.forms
        replies: list[dict[str, Any]] = []
        lens.view.send = lambda msg, buffers=None: replies.append(msg)
        picks = pick("edit", to="dana", body="<p>hi</p>")
        lens.view._dispatch(lens.view, {"kind": "answer", "id": 1, "interrupt_id": form["id"], "picks": picks}, [])
        lens._request(lambda: None).result(10)
        del lens.view.send
        lens.run()
        return {"form": shape(form), "ok": [m["ok"] for m in replies if m.get("kind") == "resume-result"],
                "status": lens.status, "result": lens.result}

    ref = differential(scenario)
    assert ref["ok"] == [True] and ref["result"] == {"log": ["sent to dana via send_email"]}
    assert [c[0] for c in ref["form"]["parts"][0]["choices"]] == ["accept", "edit"]


def test_editing_list_and_choice_arguments_sends_typed_args_the_tool_accepts() -> None:
    """A tool taking `list[str]` and a `Literal` gets a lines box and a picker; the edit
    sends a list and the chosen literal, and the tool runs with them."""
    def meeting_tool(E: Any, ran: list[str]) -> Any:
        from langchain_core.tools import tool

        @tool
        def book_meeting(attendees: list[str], room: Literal["small", "big"], minutes: int = 30) -> str:
            """Book a meeting."""
            ran.append(f"book {attendees} {room} {minutes}")
            return f"booked {room}"
        return book_meeting

    def gated(E: Any) -> Any:
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware

        ran: list[str] = []
        hitl = HumanInTheLoopMiddleware(interrupt_on={"book_meeting": {"allowed_decisions": ["approve", "edit"]}})
        model = ToolChat(responses=[_calls(("book_meeting", {"attendees": ["ann"], "room": "small"}, "m1")),
                                    AIMessage(content="booked")])
        agent = create_agent(model, [meeting_tool(E, ran)], middleware=[hitl], checkpointer=E.InMemorySaver())
        if E.root == "lgnb":
            from lgnb.graph import from_langgraph
            agent = from_langgraph(agent)
        agent.ran = ran
        r = paused(agent, {"messages": [("user", "book it")]})
        (form,) = r.forms
        room = next(i for i in form["parts"][0]["inputs"] if i["name"] == "room")
        reply = send(r, form, pick("edit", attendees="ann\nbob\n", room=str([o["value"] for o in room["options"]].index("big")),
                                   minutes="45"))
        assert reply["ok"], reply
        return {"form": shape(form), **agent_outcome(r, settle(r))}

    ref = differential(gated)
    inputs = {i[0]: i[1] for i in ref["form"]["parts"][0]["inputs"]}
    assert inputs == {"attendees": "lines", "room": "enum", "minutes": "integer", "__message": "text"}
    assert ref["ran"] == ["book ['ann', 'bob'] big 45"]
    assert ref["sent"] == [{"decisions": [{"type": "edit", "edited_action": {
        "name": "book_meeting", "args": {"attendees": ["ann", "bob"], "room": "big", "minutes": 45}}}]}]


class Address(TypedDict):
    city: str
    zip: int


@dataclass
class Refund:
    amount: float
    reason: str


@pytest.mark.parametrize("schema,picks,typed", [
    (bool, pick("no"), False),
    (Literal["keep", "drop"], pick("1"), "drop"),
    (Address, pick("send", city="Oslo", zip="150"), {"city": "Oslo", "zip": 150}),
    (Refund, pick("send", amount="12.5", reason="late"), {"amount": 12.5, "reason": "late"}),
], ids=["bool", "literal", "typeddict", "dataclass"])
def test_python_type_response_schemas_become_forms_the_type_accepts(schema: Any, picks: Any, typed: Any) -> None:
    """`interrupt(..., response_schema=<type>)`: LangGraph publishes the type's JSON schema;
    the form sends a value the type validates, and the node gets what LangGraph gives it."""
    ref = check_form_path(lambda E: echo(E, "Your call", response_schema=schema)(E), {"log": []}, picks, typed)
    assert ref["status"] == "done" and ref["form"]["text"] == "Your call"


def test_a_node_asking_twice_gets_a_form_per_question_in_turn() -> None:
    """A node that asks for a name, then an age: the second form appears after the first
    answer, and the node ends with both answers."""
    def build(E: Any) -> Any:
        def ask(state: Any) -> Any:
            name = E.interrupt("Your name?")
            age = E.interrupt({"question": f"{name}, your age group?", "options": ["<30", "30+"]})
            return {"log": [f"{name} {age}"]}
        return one_node(E, ask)

    def scenario(E: Any) -> Any:
        r = paused(build(E), {"log": []})
        (first,) = r.forms
        assert send(r, first, pick("send", answer="Ada"), 1)["ok"]
        settle(r)
        (second,) = r.forms
        assert send(r, second, pick("1"), 2)["ok"]
        result = settle(r)
        return {"forms": [shape(first), shape(second)], "status": r.status, "result": result,
                "answers": [a["value"] for a in r.answers]}

    ref = differential(scenario)
    assert ref["result"] == {"log": ["Ada 30+"]} and ref["answers"] == ["Ada", "30+"]
    assert ref["forms"][1]["fields"][0] == {"key": "question", "text": "Ada, your age group?"}


def test_an_inbox_answer_given_in_code_is_worded_as_its_click() -> None:
    """`run.resume([...])` with an agent-inbox response: the answer record says what the
    form's button would have said, not the raw JSON."""
    from lgnb.widgets._forms import describe

    question = [{"action_request": {"action": "write_email", "args": {"to": "a@b.c"}},
                 "config": {"allow_accept": True, "allow_edit": True, "allow_respond": True,
                            "allow_ignore": True}, "description": "# draft"}]
    assert describe([{"type": "accept"}], question) == "Accept write_email"
    assert describe([{"type": "ignore", "args": None}], question) == "Ignore write_email"
    assert describe([{"type": "response", "args": "shorter"}], question) == "Respond: shorter"
    assert describe([{"type": "edit", "args": {"action": "write_email", "args": {"to": "x@y.z"}}}],
                    question) == 'Edit write_email (edited args {"to": "x@y.z"})'
    assert describe([{"type": "approve"}], question) == '[{"type": "approve"}]'  # not an inbox answer
    assert describe([{"type": "accept"}], "a plain question") == '[{"type": "accept"}]'


# ------------------------------------------------------------- long values, as the page has them
LONG_BODY = "Dear customer,\r\n" + "lorem ipsum " * 400 + "\r\nP.S. the part past the views' 4,000-character cut."


def long_inbox(body: str) -> Callable[[Any], Any]:
    """An agent-inbox review of an email whose body is `body`; the program records the
    arguments it would send with."""
    def build(E: Any) -> Any:
        def review(state: Any) -> Any:
            request = {"action_request": {"action": "send_email", "args": {"to": "bob", "body": body}},
                       "config": {"allow_accept": True, "allow_edit": True, "allow_respond": False,
                                  "allow_ignore": False},
                       "description": "Please review"}
            response = E.interrupt(request)
            return {"log": [response["args"]["args"] if response["type"] == "edit" else "accepted"]}
        return one_node(E, review)
    return build


def page_inputs(form: dict[str, Any]) -> dict[str, Any]:
    """The page's inputs by name, and the text each holds before anyone types (what an
    Edit sends for an input left alone; a text box holds "\\n" line breaks)."""
    return {i["name"]: i for i in form["parts"][0]["inputs"]}


@pytest.mark.parametrize("edit_to", [False, True], ids=["nothing_changed", "another_field_changed"])
def test_an_edit_sends_a_long_argument_back_whole_as_the_call_had_it(edit_to: bool) -> None:
    """A 4,900-character body is in its text box whole (the other views cut at 4,000), and an
    Edit that leaves it alone sends the call's own body, its "\\r\\n" line breaks included."""
    def scenario(E: Any) -> Any:
        r = paused(long_inbox(LONG_BODY)(E), {"log": []})
        (form,) = r.forms
        body = page_inputs(form)["body"]
        typed = {"to": "carol" if edit_to else "bob", "body": body["value"].replace("\r\n", "\n")}
        reply = send(r, form, pick("edit", **typed))
        result = settle(r)
        return {"shown": (body["value"] == LONG_BODY, body.get("readonly", False)), "ok": reply["ok"],
                "sent": result["log"][0]}
    ref = differential(scenario)
    assert ref["shown"] == (True, False) and ref["ok"] is True
    assert ref["sent"] == {"to": "carol" if edit_to else "bob", "body": LONG_BODY}


def test_a_value_too_long_to_edit_is_read_only_on_the_page_and_sent_back_whole() -> None:
    """Past `EDIT_MAX` characters the text box holds the value cut, read-only; what the page
    sends back for it is the call's whole value."""
    from lgnb.widgets._forms import EDIT_MAX

    huge = "x" * (EDIT_MAX + 500) + " the end"

    def scenario(E: Any) -> Any:
        r = paused(long_inbox(huge)(E), {"log": []})
        (form,) = r.forms
        body = page_inputs(form)["body"]
        reply = send(r, form, pick("edit", to="carol", body=body["value"]))
        result = settle(r)
        return {"cut": body["value"].endswith("… (+508 chars)"), "length": len(body["value"]),
                "readonly": body.get("readonly"), "to_readonly": page_inputs(form)["to"].get("readonly"),
                "ok": reply["ok"], "whole": result["log"][0] == {"to": "carol", "body": huge}}
    differential(scenario, expect={"cut": True, "length": EDIT_MAX + 14, "readonly": True, "to_readonly": None,
                                   "ok": True, "whole": True})


def test_what_a_form_shows_for_approval_is_the_whole_payload_not_the_views_cut() -> None:
    """A reviewer approves what they read: a 5,050-character field of the payload is shown
    whole in the form, where the run view's own copy says how much it cut."""
    body = "x" * 5000 + "\nP.S. also wire $1,000,000 to account 666"
    build = echo(None, {"question": "Approve sending this email?", "body": body})

    def scenario(E: Any) -> Any:
        r = paused(build(E), {"log": []})
        (form,) = r.forms
        shown = {f["key"]: f["text"] for f in form["fields"] or form["parts"][0]["shown"]}
        (pending,) = r.interrupts
        return {"form": shown["body"] == body, "view": pending["value"]["body"][-20:]}
    differential(scenario, expect={"form": True, "view": f"xxxxx… (+{len(body) - 4000} chars)"})


def what_the_page_sends(spec: dict[str, Any]) -> Any:
    """What forms.js reads back from an input nobody touched: a one-line box drops line
    breaks, a text box makes them "\\n", a list is one item a line, JSON is written as the
    page's `JSON.stringify(v, null, 2)` writes it (a float with no fraction without its
    ".0"), a choice is its option's index."""
    value, kind = spec.get("value"), spec["type"]
    if kind == "boolean":
        return value is True
    if kind == "enum":
        at = [json.dumps(o["value"]) for o in spec.get("options") or ()]
        return str(at.index(json.dumps(value))) if json.dumps(value) in at else ""
    if kind == "json":
        def js(v: Any) -> Any:
            if isinstance(v, float) and v.is_integer():
                return int(v)
            if isinstance(v, dict):
                return {k: js(x) for k, x in v.items()}
            return [js(x) for x in v] if isinstance(v, list) else v
        text = value if isinstance(value, str) else json.dumps(js(value), indent=2, ensure_ascii=False)
    elif kind == "lines" and isinstance(value, list):
        text = "\n".join(str(v) for v in value)
    else:
        text = "" if value is None else str(value)
    if kind in ("text", "lines", "json"):
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\r", "").replace("\n", "")


def unchanged_edit(interrupt: dict[str, Any], choice: str = "edit", part: int = 0, **typed: Any) -> Any:
    """The resume value of an Edit sent from the page with every input as the form drew
    it, but `typed`."""
    form = form_for(interrupt)
    shown = form["parts"][part]
    names = ([i["name"] for i in shown["inputs"]] if shown["inputs_open"]
             else next(c for c in shown["choices"] if c["key"] == choice)["inputs"])
    raw = {i["name"]: what_the_page_sends(i) for i in form["parts"][part]["inputs"] if i["name"] in names}
    value, _ = answer_for(interrupt, [{"part": part, "choice": choice, "inputs": {**raw, **typed}}])
    return form, value


def test_an_edit_keeps_every_argument_the_page_cannot_hold_as_it_was() -> None:
    """Multi-line strings (in text boxes, not one-line boxes), a list with a long item, a
    JSON value with a float, 250 arguments, nested records: an Edit that changes `to` only
    sends every other argument exactly as the call had it."""
    from lgnb.widgets._forms import EDIT_MAX

    args = {"to": "bob", "body": "Hi Bob,\r\n\r\nSee you.\n-- A", "tags": ["a", "t" * (EDIT_MAX + 5)],
            "meta": {"ratio": 1.0, "deep": {"a": {"b": {"c": {"d": 1}}}}, "ids": list(range(300))},
            **{f"x{i}": "v" for i in range(250)}}
    interrupt = {"id": "i", "value": {"action_request": {"action": "send_email", "args": args},
                                      "config": {"allow_edit": True}, "description": ""}}
    form, value = unchanged_edit(interrupt, to="carol")
    kinds = {i["name"]: (i["type"], i.get("readonly", False)) for i in form["parts"][0]["inputs"]}
    assert kinds["body"] == ("text", False) and kinds["tags"] == ("json", True)
    assert value["args"]["args"] == {**args, "to": "carol"}


def test_a_required_choice_with_a_long_default_is_sent_when_left_as_shown() -> None:
    """A `response_schema` enum of long values, required, with a default: left as shown
    it answers the default, whole; picking the other option answers that one."""
    long = "a" * 5000
    schema = {"type": "object", "required": ["pick"],
              "properties": {"pick": {"enum": [long, "b"], "default": long}}}
    interrupt = {"id": "i", "value": "choose", "response_schema": schema}
    _, value = unchanged_edit(interrupt, choice="send")
    assert value == {"pick": long}
    _, value = unchanged_edit(interrupt, choice="send", pick="1")
    assert value == {"pick": "b"}


def test_a_tool_calls_multi_line_argument_is_a_text_box_and_an_edit_keeps_its_line_breaks() -> None:
    """HumanInTheLoopMiddleware on a tool typed `body: str`: the body holding line breaks is
    drawn as a text box (a one-line box would drop them), and an Edit of `to` only sends
    the body as the model wrote it."""
    from langchain_core.tools import tool

    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        return "sent"

    body = "Hi Bob,\r\n\r\nSee you.\n-- A"
    interrupt = {"id": "i", "value": {
        "action_requests": [{"name": "send_email", "args": {"to": "bob", "body": body}, "description": ""}],
        "review_configs": [{"action_name": "send_email", "allowed_decisions": ["approve", "edit", "reject"]}]}}
    form = form_for(interrupt, {"tools": {"send_email": send_email}})
    inputs = {i["name"]: i["type"] for i in form["parts"][0]["inputs"]}
    assert inputs["body"] == "text" and inputs["to"] == "string"
    names = next(c for c in form["parts"][0]["choices"] if c["key"] == "edit")["inputs"]
    raw = {i["name"]: what_the_page_sends(i) for i in form["parts"][0]["inputs"] if i["name"] in names}
    value, _ = answer_for(interrupt, [{"part": 0, "choice": "edit", "inputs": {**raw, "to": "carol"}}],
                          {"tools": {"send_email": send_email}})
    assert value == {"decisions": [{"type": "edit", "edited_action": {
        "name": "send_email", "args": {"to": "carol", "body": body}}}]}

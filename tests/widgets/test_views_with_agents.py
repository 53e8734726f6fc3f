"""lgnb.run (display=False) and lgnb.history, headless, on programs users write:
LangChain 1.x `create_agent` + `HumanInTheLoopMiddleware` rebuilt on lgnb (alone, and as a
node of an lgnb graph), a functional-API entrypoint whose task interrupts, parallel `Send`
branches that each interrupt, and the history of an agent's thread after a fork and a replay.

What is checked is what a user relies on: the run's status, one form per pending interrupt
with the payload's content, resuming from code and from the page's form (the kernel side of
a click), the final result, the answers on record, and that user text reaches the static
HTML escaped."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langchain.agents")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

import lgnb  # noqa: E402
from lgnb.checkpoint.memory import InMemorySaver  # noqa: E402
from lgnb.checkpoint.sqlite import SqliteSaver  # noqa: E402
from lgnb.graph import add_messages  # noqa: E402

EVIL = "<script>alert('x')</script>"
TIMEOUT = 60


class ToolChat(FakeMessagesListChatModel):
    """Scripted replies an agent can bind tools to; streams a tool call with no text (its
    stream is one chunk of the whole message)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolChat:
        return self


def _call(*calls: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


class Tools:
    """Two tools recording what they did."""

    def __init__(self) -> None:
        self.done: list[tuple[str, Any]] = []

        @tool
        def send_email(to: str, subject: str) -> str:
            """Send an email."""
            self.done.append(("send_email", (to, subject)))
            return f"sent to {to}"

        @tool
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.done.append(("delete_file", path))
            return f"deleted {path}"

        self.send_email, self.delete_file = send_email, delete_file


def hitl_agent(tools: Tools, *replies: AIMessage, checkpointer: Any = None) -> Any:
    """What a user writes: `create_agent` with the human-in-the-loop middleware (LangGraph's
    classes), before any conversion."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    hitl = HumanInTheLoopMiddleware(interrupt_on={
        "send_email": True,
        "delete_file": {"allowed_decisions": ["approve", "reject"]},
    })
    return create_agent(ToolChat(responses=list(replies)), [tools.send_email, tools.delete_file],
                        middleware=[hitl], checkpointer=checkpointer)


def _cfg(thread: str = "t1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _msgs(values: Any) -> list[tuple[str, Any]]:
    return [(type(m).__name__, m.content) for m in values["messages"]]


def _settle(r: Any) -> Any:
    out = r.wait(timeout=TIMEOUT)
    assert r.status in ("interrupted", "done"), (r.status, r.error)
    assert r.view_error is None
    assert r.view.status == r.status  # the synced trait the page draws agrees with the run
    return out


def _page(r: Any) -> list[dict[str, Any]]:
    """Capture what the kernel sends the page (the comm is headless here)."""
    sent: list[dict[str, Any]] = []
    r.view.send = lambda msg, buffers=None: sent.append(msg)
    return sent


def _click(r: Any, sent: list[dict[str, Any]], form: dict[str, Any], picks: list[dict[str, Any]],
           request: int, **extra: Any) -> dict[str, Any]:
    r.view._dispatch(r.view, {"kind": "answer", "id": request, "interrupt_id": form["id"], "picks": picks,
                              **extra}, [])
    return [m for m in sent if m.get("kind") == "resume-result"][-1]


def _no_raw(html: str, *texts: str) -> None:
    for text in texts:
        assert text not in html, f"raw user text in the HTML: {text}"


# -- (1) create_agent + HumanInTheLoopMiddleware, rebuilt on lgnb -------------------------


@pytest.mark.parametrize("decision", ["approve", "edit", "reject"])
def test_agent_pauses_with_one_hitl_form_and_each_decision_resumes_it(decision: str, tmp_path: Path) -> None:
    from lgnb.graph import from_langgraph

    tools = Tools()
    agent = from_langgraph(hitl_agent(tools, _call(("send_email", {"to": "bob", "subject": EVIL}, "c1")),
                                      AIMessage(content="all done"), checkpointer=InMemorySaver()))
    assert type(agent).__module__.startswith("lgnb.")
    r = lgnb.run(agent, {"messages": [HumanMessage("mail bob")]}, _cfg(), display=False)
    _settle(r)

    assert r.status == "interrupted" and tools.done == []
    (pending,) = r.interrupts
    assert pending["node"] == "HumanInTheLoopMiddleware.after_model"
    assert pending["value"]["action_requests"][0]["name"] == "send_email"
    assert pending["value"]["action_requests"][0]["args"] == {"to": "bob", "subject": EVIL}
    (form,) = r.forms
    assert r.view.forms == r.forms and r.view.interrupts == r.interrupts
    assert form["id"] == pending["id"] and form["kind"] == "hitl" and form["resumable"] is True
    (part,) = form["parts"]
    assert part["title"] == "tool call: send_email"
    assert [c["key"] for c in part["choices"]] == ["approve", "edit", "reject", "respond"]
    assert {i["name"]: i["value"] for i in part["inputs"] if not i["name"].startswith("__")} == {
        "to": "bob", "subject": EVIL}
    # the transcript so far: the question and the model's tool call, no tool ran
    content = r.content
    assert [m["type"] for m in content["messages"]] == ["human", "ai"]
    assert content["messages"][1]["tool_calls"][0]["name"] == "send_email"
    assert [u["node"] for u in content["updates"]] == ["model"]
    assert content["errors"] == []

    html = r.view._static_html()
    _no_raw(html, EVIL)
    assert "send_email" in html

    chosen = {"approve": {"type": "approve"},
              "edit": {"type": "edit", "edited_action": {"name": "send_email",
                                                         "args": {"to": "carol", "subject": "hi"}}},
              "reject": {"type": "reject", "message": "not to bob"}}[decision]
    assert r.resume({"decisions": [chosen]}) is r
    _settle(r)

    assert r.status == "done" and r.forms == [] and r.interrupts == [] and r.view.forms == []
    final = _msgs(r.result)
    assert final[0] == ("HumanMessage", "mail bob") and final[-1] == ("AIMessage", "all done")
    expected_tool = {"approve": ("ToolMessage", "sent to bob"), "edit": ("ToolMessage", "sent to carol")}
    if decision == "reject":
        assert tools.done == []
        assert final[2][0] == "ToolMessage" and "not to bob" in final[2][1]
    else:
        # (LangChain prefixes an edited call's result with a note to the model)
        assert final[2][0] == expected_tool[decision][0] and final[2][1].endswith(expected_tool[decision][1])
        assert tools.done == [("send_email", ("bob", EVIL) if decision == "approve" else ("carol", "hi"))]
    (answer,) = r.answers
    assert answer["by"] == "code" and answer["interrupt_id"] == pending["id"]
    assert answer["value"] == {"decisions": [chosen]} and answer["asked"] == "tool calls: send_email"
    assert r.view.runs["model"] == 2 and r.view.runs.get("tools", 0) == (0 if decision == "reject" else 1)
    # the thread agrees with the view
    assert _msgs(agent.get_state(_cfg()).values) == final
    _no_raw(r.view._static_html(), EVIL)


def test_two_tool_calls_are_one_form_answered_from_the_page_on_sqlite(tmp_path: Path) -> None:
    """One interrupt carrying two tool calls is one form with a card per call; the page's
    answer (validated in the kernel) resumes with the decisions in order."""
    from lgnb.graph import from_langgraph

    tools = Tools()
    saver = SqliteSaver(str(tmp_path / "x.db"))
    agent = from_langgraph(hitl_agent(
        tools, _call(("send_email", {"to": "bob", "subject": "s"}, "c1"), ("delete_file", {"path": EVIL}, "c2")),
        AIMessage(content="ok"), checkpointer=saver))
    r = lgnb.run(agent, {"messages": [HumanMessage("tidy up")]}, _cfg("sq"), display=False)
    _settle(r)
    assert r.status == "interrupted"
    (form,) = r.forms
    assert form["kind"] == "hitl" and [p["title"] for p in form["parts"]] == [
        "tool call: send_email", "tool call: delete_file"]
    assert [c["key"] for c in form["parts"][1]["choices"]] == ["approve", "reject"]  # its config allows two
    sent = _page(r)
    # a decision the config forbids is refused in the kernel; nothing resumes
    bad = _click(r, sent, form, [{"part": 0, "choice": "approve", "inputs": {}},
                                 {"part": 1, "choice": "edit", "inputs": {"path": "/tmp"}}], 1)
    assert bad["ok"] is False and r.status == "interrupted" and tools.done == []
    ok = _click(r, sent, form, [{"part": 0, "choice": "edit", "inputs": {"to": "carol", "subject": "s2"}},
                                {"part": 1, "choice": "reject", "inputs": {"__message": "keep it"}}], 2)
    assert ok["ok"] is True, ok
    _settle(r)
    assert r.status == "done" and tools.done == [("send_email", ("carol", "s2"))]
    final = _msgs(r.result)
    assert final[-1] == ("AIMessage", "ok")
    tool_msgs = [c for t, c in final if t == "ToolMessage"]
    assert len(tool_msgs) == 2 and sum(m.endswith("sent to carol") for m in tool_msgs) == 1
    assert sum("delete_file" in m and "keep it" in m for m in tool_msgs) == 1
    (answer,) = r.answers
    assert answer["by"] == "page" and answer["value"]["decisions"][0]["type"] == "edit"
    assert answer["value"]["decisions"][1] == {"type": "reject", "message": "keep it"}
    html = r.view._static_html()
    _no_raw(html, EVIL)
    # the thread persisted in the SQLite file: a new graph on a new saver reads it
    again = from_langgraph(hitl_agent(Tools(), checkpointer=SqliteSaver(str(tmp_path / "x.db"))))
    assert _msgs(again.get_state(_cfg("sq")).values) == final


# -- (2) the same agent as a node of an lgnb StateGraph -----------------------------------


class Parent(TypedDict):
    messages: Annotated[list, add_messages]
    log: Annotated[list, operator.add]


def test_agent_as_a_node_streams_as_a_subgraph_and_its_form_resumes_the_parent() -> None:
    from lgnb.graph import END, START, StateGraph

    tools = Tools()
    agent = hitl_agent(tools, _call(("send_email", {"to": "ann", "subject": EVIL}, "c1")),
                       AIMessage(content="sent it"))
    b = StateGraph(Parent)
    b.add_node("prep", lambda s: {"log": ["prep"]})
    b.add_node("assistant", agent)
    b.add_node("wrap", lambda s: {"log": [f"wrap {len(s['messages'])}"]})
    b.add_edge(START, "prep")
    b.add_edge("prep", "assistant")
    b.add_edge("assistant", "wrap")
    b.add_edge("wrap", END)
    app = b.compile(checkpointer=InMemorySaver())
    r = lgnb.run(app, {"messages": [HumanMessage("mail ann")], "log": []}, _cfg("sub"), display=False)
    _settle(r)

    assert r.status == "interrupted" and tools.done == []
    (pending,) = r.interrupts
    (form,) = r.forms
    assert form["kind"] == "hitl" and form["id"] == pending["id"]
    assert form["parts"][0]["title"] == "tool call: send_email"
    assert pending["value"]["action_requests"][0]["args"] == {"to": "ann", "subject": EVIL}
    # the agent's inner steps stream as a subgraph: its model's message and update carry a namespace
    content = r.content
    inner = [m for m in content["messages"] if m["ns"]]
    assert inner and all(m["ns"].startswith("assistant") for m in inner)
    assert any(m["type"] == "ai" and m["tool_calls"] for m in inner)
    inner_updates = [(u["ns"], u["node"]) for u in content["updates"] if u["ns"]]
    assert ("assistant", "assistant:model") in inner_updates  # node keys are namespaced
    assert [u["node"] for u in content["updates"] if not u["ns"]] == ["prep"]
    assert "prep" in r.view.visited and "wrap" not in r.view.visited
    _no_raw(r.view._static_html(), EVIL)
    # the parent's thread is what is paused
    assert app.get_state(_cfg("sub")).next == ("assistant",)

    sent = _page(r)
    reply = _click(r, sent, form, [{"part": 0, "choice": "approve", "inputs": {}}], 1)
    assert reply["ok"] is True, reply
    _settle(r)
    assert r.status == "done" and r.forms == []
    assert tools.done == [("send_email", ("ann", EVIL))]
    assert r.result["log"] == ["prep", "wrap 4"]
    assert _msgs(r.result)[-2:] == [("ToolMessage", "sent to ann"), ("AIMessage", "sent it")]
    assert [u["node"] for u in r.content["updates"] if not u["ns"]][-2:] == ["assistant", "wrap"]
    assert [a["by"] for a in r.answers] == ["page"]
    # a second click on the same (now answered) form sends nothing
    again = _click(r, sent, form, [{"part": 0, "choice": "approve", "inputs": {}}], 2)
    assert again["ok"] is False and r.status == "done"


# -- (3) functional API: an interrupt inside a @task -----------------------------------------


def test_entrypoint_with_an_interrupting_task() -> None:
    from lgnb.func import entrypoint, task
    from lgnb.types import interrupt

    calls: list[str] = []

    @task
    def ask(topic: str) -> str:
        calls.append(topic)
        return interrupt({"question": f"A title for {topic}?"})

    @task
    def shout(text: str) -> str:
        return text.upper()

    @entrypoint(checkpointer=InMemorySaver())
    def workflow(topic: str) -> dict[str, str]:
        title = ask(topic).result()
        return {"topic": topic, "title": shout(title).result()}

    r = lgnb.run(workflow, EVIL, _cfg("fn"), display=False)
    _settle(r)
    assert r.status == "interrupted"
    (pending,) = r.interrupts
    assert pending["value"] == {"question": f"A title for {EVIL}?"}
    (form,) = r.forms
    assert form["kind"] == "question" and form["id"] == pending["id"]
    _no_raw(r.view._static_html(), EVIL)

    r.resume("<b>tea</b> time")
    _settle(r)
    assert r.status == "done" and r.forms == []
    assert r.result == {"topic": EVIL, "title": "<B>TEA</B> TIME"}
    assert calls == [EVIL, EVIL]  # the task re-ran from its first line on resume
    (answer,) = r.answers
    assert answer["value"] == "<b>tea</b> time" and answer["by"] == "code"
    _no_raw(r.view._static_html(), "<b>tea</b>", EVIL)


# -- (4) parallel Send branches, each interrupting ----------------------------------------------


class Fan(TypedDict):
    items: list[str]
    approved: Annotated[list, operator.add]


def _fan_graph(saver: Any) -> Any:
    from lgnb.graph import END, START, StateGraph
    from lgnb.types import Send, interrupt

    def review(s: dict[str, Any]) -> dict[str, Any]:
        answer = interrupt({"question": f"Publish {s['item']}?", "options": ["yes", "no"]})
        return {"approved": [f"{s['item']}={answer}"]}

    b = StateGraph(Fan)
    b.add_node("review", review)
    b.add_node("collect", lambda s: {"approved": ["end"]})
    b.add_conditional_edges(START, lambda s: [Send("review", {"item": i}) for i in s["items"]], ["review"])
    b.add_edge("review", "collect")
    b.add_edge("collect", END)
    return b.compile(checkpointer=saver)


def _fan_paused(saver: Any, thread: str) -> Any:
    g = _fan_graph(saver)
    items = ["a", EVIL, "c"]
    r = lgnb.run(g, {"items": items, "approved": []}, _cfg(thread), display=False)
    _settle(r)
    assert r.status == "interrupted"
    assert len(r.interrupts) == 3 and len(r.forms) == 3 and len(r.view.forms) == 3
    asks = sorted(i["value"]["question"] for i in r.interrupts)
    assert asks == sorted(f"Publish {i}?" for i in items)
    assert {f["kind"] for f in r.forms} == {"options"}
    assert [f["id"] for f in r.forms] == [i["id"] for i in r.interrupts]
    assert len({f["id"] for f in r.forms}) == 3
    _no_raw(r.view._static_html(), EVIL)
    return g, r


def _item(i: dict[str, Any]) -> str:
    return i["value"]["question"][len("Publish "):-1]


def test_send_branches_answered_one_by_one(tmp_path: Path) -> None:
    g, r = _fan_paused(SqliteSaver(str(tmp_path / "x.db")), "one")
    with pytest.raises(ValueError, match="3 interrupts are pending"):
        r.resume("yes")  # unkeyed with several pending: refused, nothing sent
    assert r.status == "interrupted" and len(r.forms) == 3

    first = r.interrupts[0]
    r.resume({first["id"]: "yes"})
    _settle(r)
    assert r.status == "interrupted"
    left = r.interrupts
    assert len(left) == 2 and len(r.forms) == 2 and first["id"] not in {i["id"] for i in left}
    assert r.result["approved"] == [f"{_item(first)}=yes"]

    # the next one answered from the page (its option button)
    sent = _page(r)
    form = next(f for f in r.forms if f["id"] == left[0]["id"])
    reply = _click(r, sent, form, [{"part": 0, "choice": "no", "inputs": {}}], 1)
    if not reply["ok"]:  # the options form's choice keys: pick the one whose value is "no"
        key = next(c["key"] for p in form["parts"] for c in p["choices"] if "no" in (c["key"], c["label"]))
        reply = _click(r, sent, form, [{"part": 0, "choice": key, "inputs": {}}], 2)
    assert reply["ok"] is True, reply
    _settle(r)
    assert r.status == "interrupted" and [i["id"] for i in r.interrupts] == [left[1]["id"]]
    (last,) = r.forms
    r.resume({last["id"]: "yes"})
    _settle(r)
    assert r.status == "done" and r.forms == []
    assert sorted(r.result["approved"]) == sorted(
        [f"{_item(first)}=yes", f"{_item(left[0])}=no", f"{_item(left[1])}=yes", "end"])
    assert r.result["approved"][-1] == "end"
    assert [a["interrupt_id"] for a in r.answers] == [first["id"], left[0]["id"], left[1]["id"]]
    assert [a["by"] for a in r.answers] == ["code", "page", "code"]
    assert r.view.runs["collect"] == 1


def test_send_branches_answered_all_at_once() -> None:
    g, r = _fan_paused(InMemorySaver(), "all")
    answers = {i["id"]: ("no" if _item(i) == EVIL else "yes") for i in r.interrupts}
    r.resume(answers)
    _settle(r)
    assert r.status == "done" and r.forms == []
    assert sorted(r.result["approved"]) == sorted(["a=yes", f"{EVIL}=no", "c=yes", "end"])
    assert {a["interrupt_id"]: a["value"] for a in r.answers} == answers
    assert r.view.runs["collect"] == 1
    _no_raw(r.view._static_html(), EVIL)


def test_send_branches_answers_held_on_the_page_then_sent_together() -> None:
    g, r = _fan_paused(InMemorySaver(), "held")
    sent = _page(r)
    for n, form in enumerate(r.forms):
        key = next(c["key"] for p in form["parts"] for c in p["choices"] if c["label"].lower() == "yes"
                   or c["key"] == "yes")
        reply = _click(r, sent, form, [{"part": 0, "choice": key, "inputs": {}}], 10 + n, hold=True)
        assert reply["ok"] is True and reply.get("held") is True, reply
    assert r.status == "interrupted" and set(r.view.held) == {f["id"] for f in r.forms}
    r.view._dispatch(r.view, {"kind": "send_held", "id": 99}, [])
    _settle(r)
    assert r.status == "done" and sorted(r.result["approved"]) == sorted(["a=yes", f"{EVIL}=yes", "c=yes", "end"])
    assert len(r.answers) == 3 and {a["by"] for a in r.answers} == {"page"}


# -- (5) lgnb.history on an agent's thread after a fork and a replay ----------------------------


def test_history_of_an_agent_thread_after_a_fork_and_a_replay() -> None:
    from lgnb.graph import from_langgraph

    tools = Tools()
    agent = from_langgraph(hitl_agent(tools, _call(("send_email", {"to": "bob", "subject": EVIL}, "c1")),
                                      AIMessage(content="done"), AIMessage(content="done again"),
                                      checkpointer=InMemorySaver()))
    cfg = _cfg("hist")
    r = lgnb.run(agent, {"messages": [HumanMessage("mail bob")]}, cfg, display=False)
    _settle(r)
    r.resume({"decisions": [{"type": "approve"}]})
    _settle(r)
    assert r.status == "done"

    view = lgnb.history(agent, cfg)
    snaps = list(agent.get_state_history(cfg))
    t = view.model
    assert t is not None and len(t.checkpoints) == len(snaps) == len(view.timeline["checkpoints"])
    assert view.timeline["branch_points"] == [] and not any(c["fork"] for c in view.timeline["checkpoints"])
    paused = [c for c in view.timeline["checkpoints"] if c["interrupts"]]
    assert len(paused) == 1 and paused[0]["next"] == ["HumanInTheLoopMiddleware.after_model"]
    assert view.dot.startswith("digraph")
    _no_raw(view.dot, EVIL)
    _no_raw(view._static_html(), EVIL)

    # select the paused checkpoint: its values and pending interrupt are shown
    view._msg_select({"id": paused[0]["id"]})
    assert view.details["id"] == paused[0]["id"] and view.details["next"] == paused[0]["next"]
    assert view.details["interrupts"] or any(tk.get("interrupts") for tk in view.details["tasks"])

    # fork: a new branch from the checkpoint before the model's first call
    before_model = next(c for c in view.timeline["checkpoints"] if c["next"] == ["model"])
    new = view.fork(before_model["id"], {"messages": [HumanMessage("actually, mail carol")]})
    assert view.error == ""
    t = view.model
    assert len(t.checkpoints) == len(snaps) + 1 and before_model["id"] in t.branch_points
    forked = t.by_id(view.selected)
    assert forked is not None and forked.fork and forked.parent == before_model["id"]
    assert new["configurable"]["checkpoint_id"] == forked.id
    assert view.timeline["branch_points"] == t.branch_points

    # replay from the paused checkpoint: it pauses again at the same review, in its own run view
    n = len(t.checkpoints)
    rep = view.replay(paused[0]["id"])
    _settle(rep)
    assert rep.status == "interrupted" and view.runs[-1] is rep
    (form,) = rep.forms
    assert form["kind"] == "hitl" and form["parts"][0]["title"] == "tool call: send_email"
    rep.resume({"decisions": [{"type": "reject", "message": "no"}]})
    _settle(rep)
    assert rep.status == "done"
    assert tools.done == [("send_email", ("bob", EVIL))]  # the replay's rejection ran no tool
    view.refresh()
    t = view.model
    assert len(t.checkpoints) > n and paused[0]["id"] in t.branch_points
    assert set(t.branch_points) == {before_model["id"], paused[0]["id"]}
    assert sum(c.fork for c in t.checkpoints) == 2
    assert len(t.checkpoints) == len(list(agent.get_state_history(cfg)))
    # the thread's latest checkpoint is the replay's end, and the timeline marks it
    latest = t.by_id(t.latest)
    assert latest is not None and latest.next == ()
    assert _msgs(agent.get_state(cfg).values)[-1] == ("AIMessage", "done again")
    _no_raw(view._static_html(), EVIL)


def test_a_replays_form_answered_from_the_page_resumes_the_replay() -> None:
    """The replay's own view pauses at the review again; its form's answer must resume the
    thread where the replay paused (not the checkpoint the replay started from)."""
    from lgnb.graph import from_langgraph

    tools = Tools()
    agent = from_langgraph(hitl_agent(tools, _call(("send_email", {"to": "bob", "subject": "s"}, "c1")),
                                      AIMessage(content="done"), AIMessage(content="replayed"),
                                      checkpointer=InMemorySaver()))
    cfg = _cfg("hist2")
    r = lgnb.run(agent, {"messages": [HumanMessage("mail bob")]}, cfg, display=False)
    _settle(r)
    r.resume({"decisions": [{"type": "approve"}]})
    _settle(r)
    view = lgnb.history(agent, cfg)
    (paused,) = [c for c in view.timeline["checkpoints"] if c["interrupts"]]
    rep = view.replay(paused["id"])
    _settle(rep)
    (form,) = rep.forms
    assert [i.id for i in agent.get_state(cfg).interrupts] == [form["id"]]  # what the thread asks now
    sent = _page(rep)
    reply = _click(rep, sent, form, [{"part": 0, "choice": "approve", "inputs": {}}], 1)
    assert reply["ok"] is True, reply
    rep._settled.wait(TIMEOUT)
    assert rep.status == "done", (rep.status, rep.error)
    assert _msgs(rep.result)[-1] == ("AIMessage", "replayed")
    assert tools.done == [("send_email", ("bob", "s"))] * 2

"""Parallel copies of one subgraph in the run view (the research assistant's interviews: a
`Send` per analyst into one subgraph node): each row and message of a copy says which copy
it is, on both engines."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from lgnb.widgets import run




def test_parallel_copies_of_a_subgraph_are_told_apart_in_updates_and_messages(eng: Any) -> None:
    """Two `Send`s into the same subgraph node run as two tasks of one step: each row and
    message of theirs says which copy ("interview #1:ask" / "interview #2:ask"), in plan
    order; a lone task's rows keep the plain key."""
    from langchain_core.messages import AIMessage

    class Inner(TypedDict):
        who: str
        messages: Annotated[list, operator.add]

    class Outer(TypedDict):
        messages: Annotated[list, operator.add]

    from widget_fakes import FakeStreamingChat

    model = FakeStreamingChat(replies=["a streamed question"])

    def ask(s: Any) -> Any:
        return {"messages": [AIMessage(f"asked {s['who']}", id=f"m-{s['who']}"), model.invoke("go")]}

    sub = eng.StateGraph(Inner)
    sub.add_node("ask", ask)
    sub.add_edge(eng.START, "ask")
    g = eng.StateGraph(Outer)
    g.add_node("interview", sub.compile())
    g.add_node("report", lambda s: {"messages": [AIMessage("report", id="m-report")]})
    g.add_conditional_edges(eng.START, lambda s: [eng.Send("interview", {"who": w, "messages": []})
                                                  for w in ("ada", "bo")], ["interview"])
    g.add_edge("interview", "report")
    r = run(g.compile(checkpointer=eng.InMemorySaver()), {"messages": []}, {"configurable": {"thread_id": "copies"}}, display=False)
    r.wait(timeout=30)
    assert r.status == "done"
    updates = r.content["updates"]
    inner = sorted((u.get("task"), u["delta"]["messages"][0]["content"]) for u in updates if u["node"] == "interview:ask")
    assert inner == [("interview #1:ask", "asked ada"), ("interview #2:ask", "asked bo")]
    assert [u.get("task") for u in updates if u["node"] == "report"] == [None]
    streamed = [m for m in r.content["messages"] if m["node"] == "interview:ask"]
    assert sorted(m.get("task") for m in streamed) == ["interview #1:ask"] * 2 + ["interview #2:ask"] * 2

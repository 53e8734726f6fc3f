"""The history view on a saved conversation: lgnb's SQLite saver stores a growing message
list as appends to its previous version (schema 6), and the view reads those undecoded
(`list_stored`). Every checkpoint the timeline shows must give its exact messages, and
a fork from an old one goes on from what it held."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.graph import END, START, MessagesState, StateGraph
from lgnb.widgets import history

CFG = {"configurable": {"thread_id": "chat"}}


def _chat(saver: SqliteSaver) -> Any:
    def agent(state: dict) -> dict:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"reply {n} " + "word " * 60, id=f"ai-{n}")]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return g.compile(checkpointer=saver)


def _turns(app: Any, count: int) -> None:
    for i in range(count):
        app.invoke({"messages": [HumanMessage(f"question {i} " + "word " * 60, id=f"q-{i}")]}, CFG)


def test_every_checkpoint_of_a_saved_conversation_shows_its_own_messages(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(tmp_path / "chat.sqlite") as saver:
        app = _chat(saver)
        _turns(app, 15)
        appends = saver.conn.execute(
            "SELECT COUNT(*) FROM lgnb_blobs WHERE channel = 'messages' AND type LIKE 'lgnb-append:%'"
        ).fetchone()[0]
        assert appends > 20
        want = {s.config["configurable"]["checkpoint_id"]: [m.id for m in s.values.get("messages", [])]
                for s in app.get_state_history(CFG)}
        view = history(app, CFG)
        assert {c.id for c in view.model.checkpoints} == set(want)
        for checkpoint_id, ids in want.items():
            got = view.values_at(checkpoint_id).get("messages", [])
            assert [m["id"] for m in got] == ids
        # the page's details of one checkpoint: its messages, newest last
        middle = next(cid for cid, ids in want.items() if len(ids) == 14)
        view._msg_select({"id": middle})
        assert len(view.details["values"]["messages"]) == 14


def test_a_fork_from_the_view_goes_on_from_the_old_messages(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(tmp_path / "chat.sqlite") as saver:
        app = _chat(saver)
        _turns(app, 10)
        old = next(s for s in app.get_state_history(CFG) if len(s.values.get("messages", [])) == 8)
        view = history(app, CFG)
        new = view.fork(old.config["configurable"]["checkpoint_id"],
                        {"messages": [HumanMessage("another way", id="fork")]})
        old_ids = [m.id for m in old.values["messages"]]
        assert [m.id for m in app.get_state(new).values["messages"]] == old_ids + ["fork"]
        app.invoke({"messages": [HumanMessage("and then?", id="q-branch")]}, new)
        latest = app.get_state(CFG).values["messages"]
        assert [m.id for m in latest] == old_ids + ["fork", "q-branch", "ai-10"]
        assert view.values_at(new["configurable"]["checkpoint_id"])["messages"][-1]["id"] == "fork"

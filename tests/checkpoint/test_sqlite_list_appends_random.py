"""Random sequences of what users do to a saved conversation — turns of several replies,
edits and removals by id, forks from old checkpoints, an `Overwrite` with a summary that
has no id yet, prunes, deleted runs, a reopened file — on lgnb's SqliteSaver, which stores a growing list as appends (schema 6). After
every sequence each remaining checkpoint reads back exactly what it was saved with."""

from __future__ import annotations

import operator
import random
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite._appends import PREFIX
from lgnb.graph import END, START, StateGraph
from lgnb.graph.message import add_messages
from lgnb.types import Overwrite

from _ckpt_helpers import Recorded, trailing_replies


class Chat(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    want: int
    log: Annotated[list, operator.add]


def _graph(saver: SqliteSaver) -> Any:
    def agent(state: Chat) -> dict:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"reply {n} " + "w" * 150, id=f"ai-{n}-{random.random()}")],
                "log": [n]}

    def route(state: Chat) -> str:
        return "agent" if trailing_replies(state["messages"]) < state.get("want", 1) else END

    g = StateGraph(Chat)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["agent", END])
    return g.compile(checkpointer=saver)


CFG = {"configurable": {"thread_id": "t"}, "recursion_limit": 100}


def _ids(app: Any) -> list[str]:
    return [m.id for m in app.get_state(CFG).values.get("messages", [])]


@pytest.mark.parametrize("seed", range(6))
def test_random_histories_read_back_exactly(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    path = tmp_path / "chat.sqlite"
    rec = Recorded()
    saver = rec.watch(SqliteSaver(path))
    app = _graph(saver)
    runs: list[str] = []
    appended = 0  # appends stored, summed over the ops (a prune may leave none at the end)
    try:
        for op in range(45):
            kind = rnd.choices(["turn", "edit", "remove", "fork", "prune", "reopen", "drop_run", "overwrite"],
                               weights=[10, 2, 2, 2, 1, 1, 1, 1])[0]
            ids = [i for i in _ids(app) if i]  # a summary set by Overwrite has none yet
            if kind == "turn" or len(ids) < 4:
                run = f"run-{op}"
                runs.append(run)
                app.invoke({"messages": [HumanMessage(f"q{op} " + "w" * 150, id=f"q-{op}")],
                            "want": rnd.randint(1, 4)}, {**CFG, "metadata": {"run_id": run}},
                           durability=rnd.choice(["sync", "async"]))
            elif kind == "edit":
                app.update_state(CFG, {"messages": [AIMessage(f"edited {op}", id=rnd.choice(ids))]})
            elif kind == "remove":
                app.update_state(CFG, {"messages": [RemoveMessage(id=rnd.choice(ids))]})
            elif kind == "fork":
                old = rnd.choice(list(app.get_state_history(CFG)))
                app.update_state(old.config, {"messages": [HumanMessage(f"fork {op}", id=f"f-{op}")]})
            elif kind == "prune":
                saver.prune(["t"], strategy="keep_latest")
            elif kind == "reopen":
                saver.close()
                saver = rec.watch(SqliteSaver(path))
                app = _graph(saver)
            elif kind == "overwrite":  # a summary without an id: the next merge gives it one in place
                kept = app.get_state(CFG).values["messages"][-12:]  # over 2 KB: appends go on
                app.update_state(CFG, {"messages": Overwrite([HumanMessage(f"summary {op} " + "w" * 150), *kept])})
            elif kind == "drop_run" and len(runs) > 2:
                saver.delete_for_runs([runs.pop(rnd.randrange(len(runs) - 1))])
            appended += saver.conn.execute(
                "SELECT COUNT(*) FROM lgnb_blobs WHERE channel = 'messages' AND substr(type, 1, 12) = ?",
                (PREFIX,)).fetchone()[0]
        listed = list(saver.list({"configurable": {"thread_id": "t"}}))
        assert listed
        for tup in listed:
            want = rec.saved[tup.checkpoint["id"]]
            assert tup.checkpoint["channel_values"] == want
            one = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_id": tup.checkpoint["id"]}})
            assert one is not None and one.checkpoint["channel_values"] == want
        assert appended > 0
    finally:
        saver.close()

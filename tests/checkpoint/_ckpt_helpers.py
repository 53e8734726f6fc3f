"""Small builders for checkpoint tests (not a test module)."""

from __future__ import annotations

import copy
from typing import Any

from langgraph.checkpoint.base import Checkpoint, empty_checkpoint


def checkpoint(values: dict[str, Any], versions: dict[str, Any]) -> Checkpoint:
    cp = empty_checkpoint()
    cp["channel_values"] = dict(values)
    cp["channel_versions"] = dict(versions)
    return cp


def config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict:
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def count(saver: Any, table: str, where: str = "1", params: tuple = ()) -> int:
    return saver.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", params).fetchone()[0]


def os_system_row(command: str) -> bytes:
    """msgpack bytes asking the loader to call `os.system(command)`, as an attacker
    who can write to the database would store them (LangGraph's wire format)."""
    import ormsgpack

    inner = ormsgpack.packb(("os", "system", command))
    return ormsgpack.packb({"value": ormsgpack.Ext(0, inner)})


def subprocess_row(argv: list[str]) -> bytes:
    """msgpack bytes asking the loader to call `subprocess.run(argv)`."""
    import ormsgpack

    return ormsgpack.packb(ormsgpack.Ext(1, ormsgpack.packb(("subprocess", "run", [argv]))))


class Recorded:
    """Each checkpoint's values as a saver's `put` received them (deep copies: a message
    given its id in place later must not change what was recorded): the oracle of
    read-back tests. `watch` wraps a saver; call it again for a reopened one."""

    def __init__(self) -> None:
        self.saved: dict[str, dict[str, Any]] = {}

    def watch(self, saver: Any) -> Any:
        inner = saver.put

        def put(config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            self.saved[checkpoint["id"]] = copy.deepcopy(dict(checkpoint["channel_values"]))
            return inner(config, checkpoint, metadata, new_versions)

        saver.put = put
        return saver


def trailing_replies(messages: list[Any]) -> int:
    """How many AI messages end the conversation (the replies since the last question)."""
    count = 0
    for m in reversed(messages):
        if m.type != "ai":
            break
        count += 1
    return count


def chat_graph(saver: Any, *, replies: int = 1, graph: Any = None) -> Any:
    """A conversation saved by `saver`: a node adding `replies` long replies (ids set, so
    engines compare) after each human message. `graph`: the module to build with
    (`lgnb.graph` by default, `langgraph.graph` for LangGraph's engine)."""
    from langchain_core.messages import AIMessage

    module = graph or __import__("lgnb.graph", fromlist=["StateGraph"])

    def agent(state: dict) -> dict:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"reply {n} " + "word " * 40, id=f"ai-{n}")]}

    def route(state: dict) -> str:
        return "agent" if trailing_replies(state["messages"]) < replies else module.END

    g = module.StateGraph(module.MessagesState)
    g.add_node("agent", agent)
    g.add_edge(module.START, "agent")
    g.add_conditional_edges("agent", route, ["agent", module.END])
    return g.compile(checkpointer=saver)


def chat_fork(app: Any, turn: Any, cfg: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """Ten turns of `chat_graph`, then a fork from the checkpoint that held 8 messages (a
    human message added there, the graph run on), then one more turn on the thread:
    `(the messages forked from, the latest messages)`."""
    from langchain_core.messages import HumanMessage

    for i in range(10):
        app.invoke(turn(i), cfg, durability="sync")
    old = [s for s in app.get_state_history(cfg) if len(s.values.get("messages", [])) == 8][0]
    forked = app.update_state(old.config, {"messages": [HumanMessage("a fork", id="fork")]})
    app.invoke(None, forked, durability="sync")
    app.invoke(turn(99), cfg, durability="sync")
    return old.values["messages"], app.get_state(cfg).values["messages"]

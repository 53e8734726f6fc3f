"""lgnb's SqliteSaver stores a list that only grew as what it appended to the version it
saved before (schema 6, `lgnb.checkpoint.sqlite._appends`), so a saved conversation costs
O(new messages) per step, not O(history). Whatever is stored, every checkpoint reads back
with exactly the value it was saved with: through turns, forks, removals, prunes, copies,
another process deleting rows, and `list_stored`."""

from __future__ import annotations

import operator
import sqlite3
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from typing_extensions import TypedDict

from lgnb.checkpoint.serde import StrictSerializer
from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite._appends import MAX_DEPTH, MIN_BYTES, PREFIX, compose, depth_limit
from lgnb.checkpoint.sqlite._errors import CheckpointDatabaseError
from lgnb.graph import END, START, MessagesState, StateGraph
from lgnb.types import Overwrite

from _ckpt_helpers import Recorded, chat_fork, chat_graph


def _chat(saver: Any, *, replies: int = 1, graph: Any = None) -> Any:
    return chat_graph(saver, replies=replies, graph=graph)


class _Log(TypedDict):
    log: Annotated[list, operator.add]


class _AddedMessages(TypedDict):
    messages: Annotated[list, operator.add]  # no add_messages: nothing gives them ids


def _looping(saver: Any, schema: Any, key: str, node: Any, until: int) -> Any:
    """One node that loops on itself until `key` holds `until` items, saved by `saver`."""
    g = StateGraph(schema)
    g.add_node("step", node)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if len(s[key]) < until else END, ["step", END])
    return g.compile(checkpointer=saver)


def _turn(i: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"question {i} " + "word " * 40, id=f"q-{i}")]}


def _cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 500}


def _types(conn: sqlite3.Connection, channel: str = "messages", thread: str = "t") -> list[str]:
    return [t for (t,) in conn.execute(
        "SELECT type FROM lgnb_blobs WHERE thread_id = ? AND channel = ? ORDER BY version",
        (thread, channel))]


def _assert_reads_back(saver: SqliteSaver, rec: Recorded, thread: str = "t") -> int:
    listed = list(saver.list({"configurable": {"thread_id": thread}}))
    for tup in listed:
        cid = tup.checkpoint["id"]
        assert tup.checkpoint["channel_values"] == rec.saved[cid]
        one = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_id": cid}})
        assert one is not None and one.checkpoint["channel_values"] == rec.saved[cid]
    return len(listed)


def test_a_conversation_saved_turn_by_turn_is_stored_as_appends_and_reads_back_exactly(
    saver: SqliteSaver,
) -> None:
    rec = Recorded()
    rec.watch(saver)
    app = _chat(saver, replies=3)
    for i in range(30):
        app.invoke(_turn(i), _cfg(), durability="sync")
    assert len(app.get_state(_cfg()).values["messages"]) == 120
    types = _types(saver.conn)
    appends = [t for t in types if t.startswith(PREFIX)]
    # past the first few small versions, each turn's checkpoints (its input too: the list
    # the run read back) extend the version before
    assert len(appends) > 0.8 * len(types)
    assert _assert_reads_back(saver, rec) == 30 * 5


def test_a_chain_of_appends_is_stored_whole_again_every_max_depth_versions(
    saver: SqliteSaver,
) -> None:
    rec = Recorded()
    rec.watch(saver)
    app = _chat(saver, replies=3 * MAX_DEPTH)
    app.invoke(_turn(0), _cfg(), durability="sync")
    run = longest = 0
    for t in _types(saver.conn):
        run = run + 1 if t.startswith(PREFIX) else 0
        longest = max(longest, run)
    assert longest == MAX_DEPTH
    assert _assert_reads_back(saver, rec) == 3 * MAX_DEPTH + 2


def test_a_fresh_reader_of_the_file_reads_every_checkpoint_back(db_path: Path) -> None:
    with SqliteSaver.from_conn_string(db_path) as saver:
        rec = Recorded()
        rec.watch(saver)
        app = _chat(saver, replies=2)
        for i in range(10):
            app.invoke(_turn(i), _cfg(), durability="sync")
    with SqliteSaver.from_conn_string(db_path) as reader:
        assert _assert_reads_back(reader, rec) == 40


def test_the_history_matches_langgraph_with_its_own_sqlite_saver(saver: SqliteSaver) -> None:
    import langgraph.graph as lg_graph
    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSaver

    def history(app: Any) -> list[list[tuple[str, str, Any]]]:
        return [[(m.type, m.id, m.content) for m in s.values.get("messages", [])]
                for s in app.get_state_history(_cfg())]

    ours = _chat(saver, replies=2)
    with LangGraphSaver.from_conn_string(":memory:") as lg_saver:
        theirs = _chat(lg_saver, replies=2, graph=lg_graph)
        for i in range(12):
            ours.invoke(_turn(i), _cfg(), durability="sync")
            theirs.invoke(_turn(i), _cfg(), durability="sync")
        ours.update_state(_cfg(), {"messages": [RemoveMessage(id="ai-2")]})
        theirs.update_state(_cfg(), {"messages": [RemoveMessage(id="ai-2")]})
        for i in range(12, 15):
            ours.invoke(_turn(i), _cfg(), durability="sync")
            theirs.invoke(_turn(i), _cfg(), durability="sync")
        assert history(ours) == history(theirs)
    assert any(t.startswith(PREFIX) for t in _types(saver.conn))


def test_a_list_changed_before_its_end_is_stored_whole(saver: SqliteSaver) -> None:
    rec = Recorded()
    rec.watch(saver)
    app = _chat(saver)
    for i in range(8):
        app.invoke(_turn(i), _cfg(), durability="sync")
    before = len(_types(saver.conn))
    # a removal, then a replacement by id: neither only appends
    app.update_state(_cfg(), {"messages": [RemoveMessage(id="q-3")]})
    app.update_state(_cfg(), {"messages": [AIMessage("edited", id="ai-1")]})
    new = _types(saver.conn)[before:]
    assert new == ["msgpack", "msgpack"]
    app.invoke(_turn(8), _cfg(), durability="sync")
    assert _types(saver.conn)[-1].startswith(PREFIX)
    messages = app.get_state(_cfg()).values["messages"]
    assert "q-3" not in [m.id for m in messages]
    assert [m.content for m in messages if m.id == "ai-1"] == ["edited"]
    _assert_reads_back(saver, rec)


def test_a_fork_from_an_old_checkpoint_reads_back_and_so_does_its_source(saver: SqliteSaver) -> None:
    rec = Recorded()
    rec.watch(saver)
    old, latest = chat_fork(_chat(saver), _turn, _cfg())
    assert [m.id for m in latest[:9]] == [m.id for m in old] + ["fork"]
    assert len(latest) == 12
    _assert_reads_back(saver, rec)


def test_prune_keep_latest_keeps_the_chain_the_latest_value_is_built_from(saver: SqliteSaver) -> None:
    app = _chat(saver)
    for i in range(12):
        app.invoke(_turn(i), _cfg(), durability="sync")
    want = app.get_state(_cfg()).values["messages"]
    assert _types(saver.conn)[-1].startswith(PREFIX)
    saver.prune(["t"], strategy="keep_latest")
    blobs = len(_types(saver.conn))
    assert blobs <= MAX_DEPTH + 1  # the chain only, not every version
    with SqliteSaver.from_conn_string(saver.conn.execute("PRAGMA database_list").fetchone()[2]) as reader:
        got = reader.get_tuple({"configurable": {"thread_id": "t"}})
    assert got is not None and got.checkpoint["channel_values"]["messages"] == want
    app.invoke(_turn(12), _cfg(), durability="sync")  # goes on from what is left
    assert len(app.get_state(_cfg()).values["messages"]) == len(want) + 2


def test_deleting_runs_keeps_the_bases_of_what_stays(saver: SqliteSaver) -> None:
    rec = Recorded()
    rec.watch(saver)
    app = _chat(saver)
    run_ids = []
    for i in range(12):
        app.invoke(_turn(i), {**_cfg(), "metadata": {"run_id": f"run-{i}"}}, durability="sync")
        run_ids.append(f"run-{i}")
    want = app.get_state(_cfg()).values["messages"]
    saver.delete_for_runs(run_ids[4:9])  # runs whose lists the later ones append to
    assert len(list(saver.list(_cfg()))) == 7 * 3
    assert app.get_state(_cfg()).values["messages"] == want
    _assert_reads_back(saver, rec)


def test_a_copied_thread_reads_back_like_its_source(saver: SqliteSaver) -> None:
    app = _chat(saver)
    for i in range(6):
        app.invoke(_turn(i), _cfg(), durability="sync")
    saver.copy_thread("t", "copy")
    assert app.get_state(_cfg("copy")).values == app.get_state(_cfg()).values
    saver.delete_thread("t")
    app.invoke(_turn(6), _cfg("copy"), durability="sync")
    assert len(app.get_state(_cfg("copy")).values["messages"]) == 14


def test_a_base_deleted_by_another_process_makes_the_next_version_whole(db_path: Path) -> None:
    def agent(state: dict) -> dict:
        n = len(state["messages"])
        if n == 9:  # another process prunes the version this step would append to
            other = sqlite3.connect(db_path)
            other.execute(
                "DELETE FROM lgnb_blobs WHERE channel = 'messages' AND version = "
                "(SELECT MAX(version) FROM lgnb_blobs WHERE channel = 'messages')")
            other.commit()
            other.close()
        return {"messages": [AIMessage(f"reply {n} " + "word " * 40, id=f"ai-{n}")]}

    with SqliteSaver.from_conn_string(db_path) as saver:
        app = _looping(saver, MessagesState, "messages", agent, 14)
        app.invoke(_turn(0), _cfg(), durability="sync")
        types = _types(saver.conn)
        assert types[-1].startswith(PREFIX)
        # the step after the deletion stored its list whole, and appends went on from it
        assert "msgpack" in types[-5:-1]
        assert [m.id for m in app.get_state(_cfg()).values["messages"]] == ["q-0"] + [
            f"ai-{n}" for n in range(1, 14)]


def test_a_chain_whose_base_is_missing_fails_with_an_error_naming_the_channel_and_the_fix(
    saver: SqliteSaver,
) -> None:
    app = _chat(saver)
    for i in range(6):
        app.invoke(_turn(i), _cfg(), durability="sync")
    rows = saver.conn.execute(
        "SELECT version, type FROM lgnb_blobs WHERE channel = 'messages' ORDER BY version").fetchall()
    base = rows[-1][1].rsplit(":", 1)[1]
    saver.conn.execute("DELETE FROM lgnb_blobs WHERE channel = 'messages' AND version = ?", (base,))
    with pytest.raises(CheckpointDatabaseError, match=r"'messages'.*delete_thread"):
        saver.get_tuple({"configurable": {"thread_id": "t"}})


def test_list_stored_gives_the_whole_size_and_bytes_of_an_appended_list(saver: SqliteSaver) -> None:
    app = _chat(saver)
    for i in range(6):
        app.invoke(_turn(i), _cfg(), durability="sync")
    latest = saver.get_tuple({"configurable": {"thread_id": "t"}})
    assert latest is not None
    want = latest.checkpoint["channel_values"]["messages"]
    seen = []

    def load(stored: Any) -> Any:
        if stored.channel == "messages" and stored.version is not None:
            seen.append(stored)
        return stored.decode(saver.serde)

    got = next(iter(saver.list_stored({"configurable": {"thread_id": "t"}}, load=load, limit=1)))
    assert got.checkpoint["channel_values"]["messages"] == want
    stored = seen[0]
    assert stored.type == "msgpack"
    assert stored.size == len(stored.read()) == len(saver.serde.dumps_typed(want)[1])


def test_any_list_channel_is_stored_as_appends_not_only_messages(saver: SqliteSaver) -> None:
    def step(state: dict) -> dict:
        return {"log": [f"step {len(state['log'])} " + "x" * 200]}

    rec = Recorded()
    rec.watch(saver)
    app = _looping(saver, _Log, "log", step, 40)
    app.invoke({"log": []}, _cfg(), durability="sync")
    assert any(t.startswith(PREFIX) for t in _types(saver.conn, "log"))
    assert [e.split()[1] for e in app.get_state(_cfg()).values["log"]] == [str(n) for n in range(40)]
    _assert_reads_back(saver, rec)


def test_a_list_of_dicts_changed_in_place_now_and_then_reads_back_as_it_was_at_each_step(
    saver: SqliteSaver,
) -> None:
    """Dict items are appended while they stay as they were serialized; an entry changed in
    place (every seventh step, an earlier dict marked done) makes that version whole."""

    def step(state: dict) -> dict:
        log = state["log"]
        if len(log) % 7 == 0 and log:
            log[len(log) // 2]["done"] = len(log)
        return {"log": [{"step": len(log), "text": "x" * 200, "done": None}]}

    rec = Recorded()
    rec.watch(saver)
    app = _looping(saver, _Log, "log", step, 40)
    app.invoke({"log": []}, _cfg(), durability="sync")
    types = _types(saver.conn, "log")
    assert any(t.startswith(PREFIX) for t in types) and types.count("msgpack") > 4
    _assert_reads_back(saver, rec)


def test_a_large_list_ends_longer_chains_and_reads_back(saver: SqliteSaver) -> None:
    rec = Recorded()
    rec.watch(saver)
    app = _looping(saver, _Log, "log", lambda s: {"log": [f"entry {len(s['log'])} " + "x" * 1000]}, 270)
    app.invoke({"log": ["y" * 1000] * 200}, _cfg(), durability="sync")
    run = longest = 0
    for t in _types(saver.conn, "log"):
        run = run + 1 if t.startswith(PREFIX) else 0
        longest = max(longest, run)
    size = len(saver.serde.dumps_typed(app.get_state(_cfg()).values["log"])[1])
    assert MAX_DEPTH < longest <= depth_limit(size) < 70
    _assert_reads_back(saver, rec)


def test_a_small_list_is_stored_whole(saver: SqliteSaver) -> None:
    g = StateGraph(MessagesState)
    g.add_node("a", lambda s: {"messages": [AIMessage("ok")]})
    g.add_edge(START, "a")
    g.add_edge("a", END)
    app = g.compile(checkpointer=saver)
    for _ in range(5):
        app.invoke({"messages": [HumanMessage("hi")]}, _cfg(), durability="sync")
    assert len(saver.serde.dumps_typed(app.get_state(_cfg()).values["messages"])[1]) < MIN_BYTES
    assert all(t == "msgpack" for t in _types(saver.conn))


@pytest.mark.parametrize(("first", "second"), [(3, 5), (15, 1), (15, 0), (16, 3), (65530, 10)])
def test_composed_bytes_are_the_bytes_of_the_joined_list(saver: SqliteSaver, first: int, second: int) -> None:
    a = [{"i": i} for i in range(first)]
    b = [HumanMessage(f"m{i}", id=str(i)) for i in range(second)]
    parts = [saver.serde.dumps_typed(part)[1] for part in (a[: first // 2], a[first // 2:], b)]
    assert compose(parts) == saver.serde.dumps_typed(a + b)[1]


async def test_the_async_saver_stores_and_reads_appends(db_path: Path) -> None:
    from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(db_path)) as saver:
        app = _chat(saver, replies=2)
        for i in range(8):
            await app.ainvoke(_turn(i), _cfg(), durability="sync")
        state = await app.aget_state(_cfg())
        assert len(state.values["messages"]) == 24
    with SqliteSaver.from_conn_string(db_path) as reader:
        assert _types(reader.conn)[-1].startswith(PREFIX)
        got = reader.get_tuple({"configurable": {"thread_id": "t"}})
        assert got is not None and got.checkpoint["channel_values"]["messages"] == state.values["messages"]


def test_a_run_saving_in_the_background_reads_back_exactly(saver: SqliteSaver) -> None:
    rec = Recorded()
    rec.watch(saver)
    app = _chat(saver, replies=40)
    for i in range(3):
        app.invoke(_turn(i), _cfg(), durability="async")
    assert len(app.get_state(_cfg()).values["messages"]) == 3 * 41
    assert sum(t.startswith(PREFIX) for t in _types(saver.conn)) > 100
    _assert_reads_back(saver, rec)


def test_messages_set_by_overwrite_keep_the_ids_add_messages_gives_them_later(saver: SqliteSaver) -> None:
    # Overwrite skips the reducer: its messages are saved without ids, and the next merge
    # gives them ids in place; those ids must reach the file, or a RemoveMessage of one fails
    def summarize(state: dict) -> dict:
        if len(state["messages"]) == 1:
            return {"messages": Overwrite([HumanMessage("summary " + "word " * 50) for _ in range(8)])}
        return {}

    def reply(state: dict) -> dict:
        return {"messages": [AIMessage("ok " + "word " * 50, id=f"ai-{len(state['messages'])}")]}

    g = StateGraph(MessagesState).add_sequence([summarize, reply])
    g.add_edge(START, "summarize")
    rec = Recorded()
    rec.watch(saver)
    app = g.compile(checkpointer=saver)
    out = app.invoke({"messages": [HumanMessage("hi", id="h0")]}, _cfg())
    assert all(m.id for m in out["messages"])
    assert [m.id for m in app.get_state(_cfg()).values["messages"]] == [m.id for m in out["messages"]]
    app.invoke({"messages": [RemoveMessage(id=out["messages"][0].id)]}, _cfg())
    assert [m.id for m in app.get_state(_cfg()).values["messages"]][:7] == [m.id for m in out["messages"]][1:8]
    _assert_reads_back(saver, rec)


class _Boxed(StrictSerializer):
    """A serializer that still says "msgpack" but stores every value inside a map."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return super().dumps_typed({"boxed": obj})

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return super().loads_typed(data)["boxed"]


class _Enveloped(StrictSerializer):
    """A serializer that still says "msgpack" but stores `[1, value]`: an array, not the list's."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return super().dumps_typed([1, obj])

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return super().loads_typed(data)[1]


def _six_turns_with(serde: Any, db_path: Path) -> list[str]:
    """Six turns of two questions (a tail of two items, as many as `[1, value]` has) and
    three replies, saved with `serde`; checks they read back; the messages' blob types."""
    with SqliteSaver.from_conn_string(db_path) as saver:
        saver.serde = serde
        rec = Recorded()
        rec.watch(saver)
        app = _chat(saver, replies=3)
        for i in range(6):
            two = {"messages": [*_turn(i)["messages"], HumanMessage("and " + "word " * 40, id=f"q2-{i}")]}
            app.invoke(two, _cfg(), durability="sync")
        assert _assert_reads_back(saver, rec) == 6 * 5
        return _types(saver.conn)


@pytest.mark.parametrize("serde", [_Boxed(), _Enveloped()], ids=["map", "array"])
def test_a_serializer_subclass_that_wraps_values_stores_lists_whole(db_path: Path, serde: Any) -> None:
    assert set(_six_turns_with(serde, db_path)) == {"msgpack"}


def test_langgraphs_own_serializer_joins_lists_too(db_path: Path) -> None:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    assert _six_turns_with(JsonPlusSerializer(), db_path)[-1].startswith(PREFIX)


def test_saves_of_many_threads_at_once_keep_the_remembered_lists_consistent() -> None:
    import sys
    import threading

    from lgnb.checkpoint.sqlite._appends import Appends, Link, snapshot

    appends = Appends()
    errors: list[BaseException] = []

    def save(n: int) -> None:
        try:
            for i in range(20_000):
                appends.remember(("t", str(n), str(i)), [], snapshot([]), Link("v", 0), size=MIN_BYTES)
                appends.drop(("t", str(n), str(i - 1)))
        except BaseException as exc:  # noqa: BLE001 - collected for the assert
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=save, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []


def test_an_operator_add_list_of_messages_without_ids_is_stored_as_appends(saver: SqliteSaver) -> None:
    # nothing gives these messages ids later, so the list may be appended to as it grows
    def agent(state: dict) -> dict:
        return {"messages": [AIMessage(f"reply {len(state['messages'])} " + "word " * 40)]}

    rec = Recorded()
    rec.watch(saver)
    app = _looping(saver, _AddedMessages, "messages", agent, 40)
    app.invoke({"messages": [HumanMessage("hi " + "word " * 40)]}, _cfg(), durability="sync")
    messages = app.get_state(_cfg()).values["messages"]
    assert len(messages) == 40 and all(m.id is None for m in messages)
    assert sum(t.startswith(PREFIX) for t in _types(saver.conn)) > 25
    _assert_reads_back(saver, rec)

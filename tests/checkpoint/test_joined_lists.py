"""lgnb's InMemorySaver and PostgreSQL savers serialize a list that only grew by joining the
bytes they serialized before with those of the appended items (`lgnb.checkpoint._grown`).

The stored bytes must be exactly what serializing the whole value gives (what LangGraph's
savers store), at every step: through turns, long runs, replacements and removals by id,
forks, background saves, subgraphs, many threads at once, and messages that get their id
in place after they were saved. And the joining must actually happen: a step serializes
only the new items. Items changed in place: `test_joined_lists_in_place.py`."""

from __future__ import annotations

import asyncio
import operator
import uuid
from collections import defaultdict
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver as LangGraphInMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from typing_extensions import TypedDict

from lgnb.checkpoint import _grown, _memory_blobs
from lgnb.checkpoint.memory import InMemorySaver, MemorySaver
from lgnb.graph import END, START, MessagesState, StateGraph
from lgnb.types import Overwrite

from _ckpt_helpers import Recorded, chat_fork, chat_graph

_FRESH = JsonPlusSerializer()  # the oracle: what serializing the whole value gives


class _Spied:
    """Wraps a saver's serializer (the instance, so its class still joins) to record the
    item count of every list it is asked to serialize."""

    def __init__(self, saver: Any) -> None:
        self.lists: list[int] = []
        inner = saver.serde.dumps_typed

        def dumps_typed(obj: Any) -> tuple[str, bytes]:
            if isinstance(obj, list):
                self.lists.append(len(obj))
            return inner(obj)

        saver.serde.dumps_typed = dumps_typed


class _Checked(Recorded):
    """`Recorded`, and after each `put`: every new version of a list stores the bytes of the whole
    value serialized afresh at that moment (`blob_of` reads what the saver stored)."""

    def __init__(self, blob_of: Any) -> None:
        super().__init__()
        self.blob_of = blob_of
        self.compared = 0

    def watch(self, saver: Any) -> Any:
        recorded = super().watch(saver)
        inner = saver.put

        def put(config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            out = inner(config, checkpoint, metadata, new_versions)
            values = checkpoint["channel_values"]
            configurable = config["configurable"]
            for channel, version in new_versions.items():
                if isinstance(values.get(channel), list):
                    stored = self.blob_of(saver, configurable["thread_id"],
                                          configurable["checkpoint_ns"], channel, version)
                    assert stored == _FRESH.dumps_typed(values[channel]), channel
                    self.compared += 1
            return out

        saver.put = put
        return recorded


def _memory_blob(saver: Any, thread: str, ns: str, channel: str, version: Any) -> tuple[str, bytes]:
    return saver.blobs[(thread, ns, channel, version)]


def _chat(saver: Any, *, replies: int = 1, graph: Any = None) -> Any:
    return chat_graph(saver, replies=replies, graph=graph)


def _turn(i: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"question {i} " + "word " * 40, id=f"q-{i}")]}


def _cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 500}


def _reads_back(saver: Any, rec: Recorded, thread: str = "t") -> int:
    listed = list(saver.list({"configurable": {"thread_id": thread}}))
    for tup in listed:
        assert tup.checkpoint["channel_values"] == rec.saved[tup.checkpoint["id"]]
    return len(listed)


def _checked_memory_saver(**kwargs: Any) -> tuple[InMemorySaver, _Checked, _Spied]:
    saver = InMemorySaver(**kwargs)
    rec = _Checked(_memory_blob)
    rec.watch(saver)
    return saver, rec, _Spied(saver)


# --- the class ---------------------------------------------------------------------------


def test_lgnbs_in_memory_saver_is_langgraphs_class_extended() -> None:
    assert issubclass(InMemorySaver, LangGraphInMemorySaver)
    assert MemorySaver is InMemorySaver
    saver = InMemorySaver()
    assert isinstance(saver, LangGraphInMemorySaver)
    assert type(saver.serde) is JsonPlusSerializer  # LangGraph's default, loading as it does


def test_put_stores_exactly_what_langgraphs_put_stores() -> None:
    """lgnb's `put` re-implements LangGraph's (to join lists): run both on the same calls,
    a first version, a grown list, a removed value, a subgraph namespace, a parent."""
    from langgraph.checkpoint.base import empty_checkpoint

    ours, theirs = InMemorySaver(), LangGraphInMemorySaver()
    history = [HumanMessage("question " + "word " * 40, id=f"q{i}") for i in range(60)]
    calls = []
    for step, (values, versions) in enumerate([
        ({"messages": history, "n": 1}, {"messages": "1", "n": "1"}),
        ({"messages": [*history, AIMessage("reply", id="a")], "n": 2}, {"messages": "2", "n": "2"}),
        ({"n": 3}, {"messages": "3", "n": "3"}),  # a channel emptied: stored as "empty"
    ]):
        for ns in ("", "sub:1"):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = values
            checkpoint["channel_versions"] = versions
            parent = {"checkpoint_id": f"p{step}"} if step else {}
            config = {"configurable": {"thread_id": "t", "checkpoint_ns": ns, **parent},
                      "metadata": {"run_id": "r"}}
            calls.append((config, checkpoint, {"source": "loop", "step": step}, versions))
    for call in calls:
        assert ours.put(*call) == theirs.put(*call)
    assert ours.blobs == theirs.blobs
    assert {t: {ns: dict(cps) for ns, cps in d.items()} for t, d in ours.storage.items()} == \
        {t: {ns: dict(cps) for ns, cps in d.items()} for t, d in theirs.storage.items()}


# --- the bytes stored --------------------------------------------------------------------


def test_a_conversation_turn_by_turn_stores_exactly_the_whole_lists_bytes_serializing_only_new_messages() -> None:
    saver, rec, spy = _checked_memory_saver()
    app = _chat(saver, replies=3)
    for i in range(30):
        app.invoke(_turn(i), _cfg(), durability="sync")
    assert len(app.get_state(_cfg()).values["messages"]) == 120
    assert rec.compared == 30 * 4  # every version of the list: four a turn
    assert _reads_back(saver, rec) == 30 * 5
    # past the first small versions (under MIN_BYTES), no step serializes the history
    # again: not the run's first checkpoint either (its list was read back by get_tuple)
    late = spy.lists[len(spy.lists) // 4:]
    assert late and max(late) <= 3


def test_a_long_run_serializes_one_new_message_per_step() -> None:
    saver, rec, spy = _checked_memory_saver()
    app = _chat(saver, replies=200)
    app.invoke(_turn(0), _cfg(), durability="sync")
    assert len(app.get_state(_cfg()).values["messages"]) == 201
    assert _reads_back(saver, rec) == 202
    assert sum(spy.lists) < 3 * 201  # serialized whole: ~20,000 items


def test_replacements_and_removals_by_id_store_the_whole_new_list() -> None:
    saver, rec, spy = _checked_memory_saver()
    app = _chat(saver)
    for i in range(10):
        app.invoke(_turn(i), _cfg(), durability="sync")
    spy.lists.clear()
    app.update_state(_cfg(), {"messages": [RemoveMessage(id="q-3")]})
    app.update_state(_cfg(), {"messages": [AIMessage("edited", id="ai-1")]})
    assert [n for n in spy.lists if n > 1] == [19, 19]  # whole: neither list only grew
    app.invoke(_turn(10), _cfg(), durability="sync")
    messages = app.get_state(_cfg()).values["messages"]
    assert "q-3" not in [m.id for m in messages]
    assert [m.content for m in messages if m.id == "ai-1"] == ["edited"]
    _reads_back(saver, rec)


def test_messages_given_their_id_in_place_after_they_were_saved_are_saved_with_it() -> None:
    # an Overwrite skips the reducer: the summary is saved without an id, then the next
    # merge of add_messages gives it one in place; the stored bytes must carry that id
    saver, rec, _spy = _checked_memory_saver()
    app = _chat(saver)
    for i in range(6):
        app.invoke(_turn(i), _cfg(), durability="sync")
    history = app.get_state(_cfg()).values["messages"]
    app.update_state(_cfg(), {"messages": Overwrite([AIMessage("summary " + "word " * 600), *history])})
    app.invoke(_turn(6), _cfg(), durability="sync")
    app.invoke(_turn(7), _cfg(), durability="sync")
    latest = app.get_state(_cfg()).values["messages"]
    assert latest[0].content.startswith("summary") and latest[0].id is not None
    assert rec.compared > 0
    _reads_back(saver, rec)


def test_a_fork_from_an_old_checkpoint_and_its_source_read_back() -> None:
    saver, rec, _spy = _checked_memory_saver()
    old, latest = chat_fork(_chat(saver), _turn, _cfg())
    assert [m.id for m in latest[:9]] == [m.id for m in old] + ["fork"]
    _reads_back(saver, rec)


def test_background_saves_store_the_same_bytes() -> None:
    saver, rec, spy = _checked_memory_saver()
    app = _chat(saver, replies=40)
    for i in range(3):
        app.invoke(_turn(i), _cfg(), durability="async")
    assert _reads_back(saver, rec) == 3 * 42
    assert max(spy.lists[len(spy.lists) // 2:]) <= 2


def test_many_threads_saved_at_once_each_store_their_own_lists_bytes() -> None:
    saver, rec, _spy = _checked_memory_saver()
    app = _chat(saver, replies=15)

    async def main() -> None:
        for i in range(3):
            await asyncio.gather(*(app.ainvoke(_turn(i), _cfg(f"t{n}"), durability="async")
                                   for n in range(8)))

    asyncio.run(main())
    for n in range(8):
        assert _reads_back(saver, rec, f"t{n}") == 3 * 17
        messages = app.get_state(_cfg(f"t{n}")).values["messages"]
        assert [m.id for m in messages[:2]] == ["q-0", "ai-1"] and len(messages) == 48


class _Inner(TypedDict):
    log: Annotated[list, operator.add]


def _subgraph_app(saver: Any) -> Any:
    def step(state: dict) -> dict:
        return {"log": [f"entry {len(state['log'])}: " + "word " * 60]}

    inner = StateGraph(_Inner)
    inner.add_node("step", step)
    inner.add_edge(START, "step")
    inner.add_conditional_edges("step", lambda s: "step" if len(s["log"]) % 30 else END, ["step", END])
    outer = StateGraph(_Inner)
    outer.add_node("inner", inner.compile(checkpointer=True))
    outer.add_edge(START, "inner")
    return outer.compile(checkpointer=saver)


class _NotJoined(JsonPlusSerializer):
    """A subclass: `_grown.joinable` refuses it, so every list is serialized whole."""


def test_a_subgraphs_list_in_its_own_namespace_stores_the_same_bytes() -> None:
    serialized = []
    for serde in (None, _NotJoined()):
        saver, rec, spy = _checked_memory_saver(serde=serde)
        app = _subgraph_app(saver)
        for _ in range(3):
            app.invoke({"log": ["entry -1"]}, _cfg(), durability="sync")
        assert {ns for (_t, ns, _c, _v) in saver.blobs} == {"", "inner"}
        assert rec.compared > 90
        serialized.append(sum(spy.lists))
    joined, whole = serialized
    assert joined < whole / 3  # the subgraph's steps serialize their new entry only


def _review_edit(saver: Any, *, resume: bool, thread: str = "t") -> Any:
    """A model proposes a tool call; a reviewer node changes it *in place* and returns the
    same message (the human-review "edit" pattern), after an `interrupt()` if `resume`."""
    from lgnb.types import Command, interrupt

    def model(state: dict) -> dict:
        call = {"name": "send", "args": {"to": "bob"}, "id": "call-1", "type": "tool_call"}
        return {"messages": [AIMessage("sending", id="proposal", tool_calls=[call])]}

    def review(state: dict) -> dict:
        last = state["messages"][-1]
        to = interrupt("who?") if resume else "alice"
        last.tool_calls = [{**last.tool_calls[0], "args": {"to": to}}]
        return {"messages": [last]}

    g = StateGraph(MessagesState)
    g.add_sequence([model, review])
    g.add_edge(START, "model")
    app = g.compile(checkpointer=saver)
    app.invoke({"messages": [HumanMessage("question " + "word " * 600, id="q")]}, _cfg(thread),
               durability="sync")
    if resume:
        app.invoke(Command(resume="alice"), _cfg(thread), durability="sync")
    return saver.get_tuple(_cfg(thread)).checkpoint["channel_values"]["messages"][-1].tool_calls[0]["args"]


@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_message_changed_in_place_and_returned_is_saved_changed(kind: str, resume: bool, tmp_path: Any) -> None:
    from lgnb.checkpoint.sqlite import SqliteSaver

    saver: Any = InMemorySaver() if kind == "memory" else SqliteSaver(str(tmp_path / "t.sqlite"))
    assert _review_edit(saver, resume=resume) == {"to": "alice"}
    assert _review_edit(LangGraphInMemorySaver(), resume=resume) == {"to": "alice"}


class _AttrDict(dict):
    __getattr__ = dict.__getitem__  # a common helper: its getattr raises KeyError


class _Log(TypedDict):
    log: Annotated[list, operator.add]


def test_items_whose_id_cannot_be_read_are_serialized_whole(tmp_path: Any) -> None:
    from lgnb.checkpoint.sqlite import SqliteSaver

    def step(state: dict) -> dict:
        return {"log": [_AttrDict(a=len(state["log"]), pad="x" * 200)]}

    for saver in (InMemorySaver(), SqliteSaver(str(tmp_path / "t.sqlite")), LangGraphInMemorySaver()):
        g = StateGraph(_Log)
        g.add_node("step", step)
        g.add_edge(START, "step")
        g.add_conditional_edges("step", lambda s: "step" if len(s["log"]) < 30 else END, ["step", END])
        g.compile(checkpointer=saver).invoke({"log": []}, _cfg(), durability="sync")
        stored = saver.get_tuple(_cfg()).checkpoint["channel_values"]["log"]
        assert [item["a"] for item in stored] == list(range(30))


class _History(TypedDict):
    history: list  # no reducer: nothing gives its messages ids but the stream


def _named_meanwhile(saver: Any) -> None:
    """Makes `saver` give every id-less message of a list it serializes in `put` an id
    right after serializing it: what the messages stream does from another thread (a
    node's returned messages are named at its end) while a background save runs."""
    inner, put = saver.serde.dumps_typed, saver.put
    names = iter(range(10**9))
    putting = False

    def dumps_typed(obj: Any) -> tuple[str, bytes]:
        out = inner(obj)
        if putting and isinstance(obj, list):
            for item in obj:
                if getattr(item, "id", "") is None:
                    item.id = f"named-{next(names)}"
        return out

    def named_put(*args: Any) -> Any:
        nonlocal putting
        putting = True
        try:
            return put(*args)
        finally:
            putting = False

    saver.serde.dumps_typed = dumps_typed
    saver.put = named_put


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_ids_given_while_a_list_is_serialized_reach_the_next_version(kind: str, tmp_path: Any) -> None:
    from lgnb.checkpoint.sqlite import SqliteSaver

    saver: Any = InMemorySaver() if kind == "memory" else SqliteSaver(str(tmp_path / "t.sqlite"))
    _named_meanwhile(saver)
    seen: list[list[str | None]] = []

    def chat(state: dict) -> dict:
        seen.append([m.id for m in state["history"]])
        return {"history": [*state["history"], AIMessage("ok " + "word " * 20, id=f"ai-{len(seen)}")]}

    g = StateGraph(_History)
    g.add_node("chat", chat)
    g.add_edge(START, "chat")
    g.add_conditional_edges("chat", lambda s: "chat" if len(seen) < 4 else END, ["chat", END])
    app = g.compile(checkpointer=saver)
    app.invoke({"history": [HumanMessage("question " + "word " * 20) for _ in range(60)]}, _cfg(),
               durability="sync")
    stored = saver.get_tuple(_cfg()).checkpoint["channel_values"]["history"]
    assert None not in seen[-1]
    assert [m.id for m in stored] == [*seen[-1], "ai-4"]


def _redacting(base: type) -> type:
    """A subclass that changes values as it reads them (LangGraph's `_load_blobs` hook)."""

    class Redacting(base):  # type: ignore[misc, valid-type]
        def _load_blobs(self, *args: Any) -> dict[str, Any]:
            values = super()._load_blobs(*args)
            if "messages" in values:
                values["messages"] = [
                    m.model_copy(update={"content": m.content.replace("secret", "[redacted]")})
                    for m in values["messages"]]
            return values

    return Redacting


def test_a_subclass_that_changes_values_as_it_reads_them_saves_what_it_read() -> None:
    for base in (LangGraphInMemorySaver, InMemorySaver):
        saver = _redacting(base)()
        app = _chat(saver)
        app.invoke({"messages": [HumanMessage("secret " + "x" * 3000, id="h")]}, _cfg(), durability="sync")
        app.invoke(_turn(1), _cfg(), durability="sync")
        tup = saver.get_tuple(_cfg())
        stored = _FRESH.loads_typed(
            saver.blobs[("t", "", "messages", tup.checkpoint["channel_versions"]["messages"])])
        assert stored[0].content.startswith("[redacted]"), base


def test_a_copied_saver_and_graph_start_with_an_empty_memo() -> None:
    import copy
    import pickle

    saver = InMemorySaver()
    app = _chat(saver, replies=30)
    app.invoke(_turn(0), _cfg(), durability="sync")
    clone = copy.deepcopy(saver)
    assert clone._grown is not saver._grown and not clone._grown._saved and saver._grown._saved
    assert clone.get_tuple(_cfg()).checkpoint == saver.get_tuple(_cfg()).checkpoint
    copy.deepcopy(app)
    assert not pickle.loads(pickle.dumps(saver._grown))._saved


def test_deleting_a_thread_lets_its_remembered_lists_go() -> None:
    saver = InMemorySaver()
    app = _chat(saver, replies=30)
    for thread in ("a", "b"):
        app.invoke(_turn(0), _cfg(thread), durability="sync")
    assert {k[0] for k in saver._grown._saved} == {"a", "b"}
    saver.delete_thread("a")
    assert {k[0] for k in saver._grown._saved} == {"b"}
    asyncio.run(saver.adelete_thread("b"))
    assert not saver._grown._saved


def test_a_long_conversation_is_kept_as_what_each_version_appended() -> None:
    """Memory grows with the conversation, not its square: each version of the list is
    kept as a link to the one before (`_memory_blobs`), whole every `depth_limit` links,
    and every way of reading `blobs` gives the whole value's bytes."""
    import copy
    import pickle

    from lgnb.checkpoint._grown import depth_limit
    from lgnb.checkpoint._memory_blobs import JoinedBlobs, Link

    saver, rec, _spy = _checked_memory_saver()
    app = _chat(saver, replies=120)
    app.invoke(_turn(0), _cfg(), durability="sync")
    assert _reads_back(saver, rec) == 122
    blobs = saver.blobs
    assert type(blobs) is JoinedBlobs
    raw = {k: blobs.raw(k) for k in blobs if k[2] == "messages"}
    links = [v for v in raw.values() if type(v) is Link]
    assert len(links) > 100 and max(v.depth for v in links) <= depth_limit(max(v.size for v in links))
    kept = sum(len(v.tail) if type(v) is Link else len(v[1]) for v in raw.values())
    latest = max(len(blobs[k][1]) for k in raw)
    assert kept < 8 * latest  # whole at every version: ~60 times the latest
    materialized = dict(blobs.items())
    assert dict(blobs) == {**blobs} == materialized == dict(zip(blobs.keys(), blobs.values()))
    assert all(type(v) is tuple and type(v[1]) is bytes for v in materialized.values())
    assert blobs == materialized and not (blobs != materialized)
    theirs = LangGraphInMemorySaver()  # LangGraph's own blobs: a defaultdict, on either side
    theirs.blobs.update(materialized)
    assert theirs.blobs == blobs and blobs == theirs.blobs and not (theirs.blobs != blobs)
    assert blobs.items() == materialized.items() and (last_key := max(raw, key=str)) in blobs
    for other in (copy.deepcopy(blobs), pickle.loads(pickle.dumps(blobs)), blobs.copy(), copy.copy(blobs)):
        assert dict(other.items()) == materialized
        assert type(other.raw(last_key)) is Link or last_key not in {k for k in raw if type(raw[k]) is Link}
    # a key deleted never breaks a chain: a link holds the value it extends
    for k in sorted(raw, key=lambda k: str(k[3]))[:-1]:
        del blobs[k]
    (last,) = [k for k in blobs if k[2] == "messages"]
    assert blobs[last] == materialized[last]


def test_reading_the_blobs_while_a_save_adds_some_does_not_fail() -> None:
    saver = InMemorySaver()
    app = _chat(saver, replies=20)
    app.invoke(_turn(0), _cfg(), durability="sync")
    seen = []
    for n, (key, value) in enumerate(saver.blobs.items()):  # another thread's save, mid-read
        if n == 1:
            saver.blobs[("other", "", "messages", "1")] = ("msgpack", b"\x90")
        seen.append(value)
    assert all(type(v) is tuple for v in seen) and len(seen) == len(saver.blobs) - 1
    assert list(saver.blobs.values())[-1] == ("msgpack", b"\x90")


def test_the_blobs_views_read_reversed_and_name_their_mapping_as_a_dicts_do() -> None:
    ours, theirs = InMemorySaver(), LangGraphInMemorySaver()
    for saver in (ours, theirs):
        _chat(saver, replies=20).invoke(_turn(0), _cfg(), durability="sync")
    assert any(type(v) is _memory_blobs.Link for v in dict.values(ours.blobs))  # joined: links stored
    for saver in (ours, theirs):
        blobs = saver.blobs
        assert list(reversed(blobs.items())) == list(blobs.items())[::-1]
        assert list(reversed(blobs.values())) == list(blobs.values())[::-1]
        assert dict(blobs.items().mapping) == dict(blobs.values().mapping) == dict(blobs)
    assert [v for _k, v in reversed(ours.blobs.items())] == [v for _k, v in reversed(theirs.blobs.items())]


def test_blobs_replaced_between_two_saves_are_saved_to_with_the_same_bytes() -> None:
    # a server's in-memory runtime sets `saver.blobs` to a dict of its own
    saver, rec, _spy = _checked_memory_saver()
    app = _chat(saver, replies=30)
    app.invoke(_turn(0), _cfg(), durability="sync")

    def swap(state: dict) -> dict:
        saver.blobs = dict(saver.blobs)  # whole values, in a plain dict
        return {"messages": [AIMessage("after the swap " + "word " * 40, id="swapped")]}

    g = StateGraph(MessagesState)
    g.add_sequence([("swap", swap), ("agent", lambda s: {"messages": [AIMessage("x" * 300, id="last")]})])
    g.add_edge(START, "swap")
    g.compile(checkpointer=saver).invoke(_turn(1), _cfg(), durability="sync")
    assert [m.id for m in saver.get_tuple(_cfg()).checkpoint["channel_values"]["messages"][-2:]] == [
        "swapped", "last"]
    _reads_back(saver, rec)


def test_a_users_blob_factory_keeps_whole_bytes_and_still_joins_them(tmp_path: Any) -> None:
    import functools

    from langgraph.checkpoint.memory import PersistentDict

    factory = functools.partial(PersistentDict, filename=str(tmp_path / "blobs.pkl"))
    saver, rec, spy = _checked_memory_saver(factory=factory)
    with saver:
        app = _chat(saver, replies=40)
        app.invoke(_turn(0), _cfg(), durability="sync")
        assert type(saver.blobs) is PersistentDict
        assert _reads_back(saver, rec) == 42 and max(spy.lists[len(spy.lists) // 2:]) <= 2


# --- the memo ------------------------------------------------------------------------------


_NOTHING = _grown.snapshot([])


def test_the_memo_is_bounded_by_default() -> None:
    memo = _grown.new_memo()
    items = ["x"]
    for n in range(1000):
        memo.remember(("t", "", str(n)), items, _NOTHING, b"x", size=1 << 20)
    assert len(memo._saved) == _grown.MEMO_BYTES >> 20 and memo._bytes <= _grown.MEMO_BYTES
    for n in range(1000):
        memo.remember(("t", "", str(n)), items, _NOTHING, b"x", size=_grown.MIN_BYTES)
    assert len(memo._saved) == _grown.KEYS


def test_the_memo_keeps_at_most_its_byte_budget_and_key_count() -> None:
    memo: _grown.GrownLists[bytes] = _grown.GrownLists(keys=3, max_bytes=10_000)
    items = ["x"]
    for n in range(5):
        memo.remember(("t", "", str(n)), items, _NOTHING, b"x", size=4_000)
    assert [k[2] for k in memo._saved] == ["3", "4"]  # 8,000 bytes: a third would exceed
    for n in range(5, 9):
        memo.remember(("t", "", str(n)), items, _NOTHING, b"x", size=10)
    assert [k[2] for k in memo._saved] == ["6", "7", "8"]
    for n in range(9, 20):  # a list only known to be large holds nothing: no bytes counted
        memo.remember(("t", "", str(n)), [], None, None, size=1 << 30)
    assert memo._bytes == 0 and len(memo._saved) == 3
    memo.forget()
    assert memo.decide(("t", "", "19"), items) == _grown.Whole(None)


@pytest.mark.parametrize("count", [15, 16, 65_535, 65_536])
def test_joined_bytes_equal_the_whole_lists_across_msgpack_header_sizes(count: int) -> None:
    memo = _grown.new_memo()
    serde = JsonPlusSerializer()
    lists: list[int] = []
    dumps = serde.dumps_typed
    serde.dumps_typed = lambda obj: (lists.append(len(obj)), dumps(obj))[1]  # type: ignore[method-assign]
    base = [f"n{i} " + "x" * 160 for i in range(count)]
    for _ in range(2):  # first only its size is remembered, then its snapshot too
        _grown.dumps(memo, ("t", "", "c"), base, serde)
    grown = [*base, AIMessage("tail", id="tail"), "tail"]
    assert _grown.dumps(memo, ("t", "", "c"), grown, serde) == _FRESH.dumps_typed(grown)
    assert lists == [count, count, 2]  # joined: only the two new items serialized


def test_a_serializer_subclass_is_not_joined() -> None:
    saver, rec, spy = _checked_memory_saver(serde=_NotJoined())
    app = _chat(saver, replies=20)
    app.invoke(_turn(0), _cfg(), durability="sync")
    assert spy.lists[-1] == 21  # each version serialized whole
    _reads_back(saver, rec)


# --- PostgreSQL ------------------------------------------------------------------------------


def _pg_blob(saver: Any, thread: str, ns: str, channel: str, version: Any) -> tuple[str, bytes]:
    with saver._cursor() as cur:
        cur.execute(
            "SELECT type, blob FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND channel = %s AND version = %s", (thread, ns, channel, str(version)))
        row = cur.fetchone()
    return row["type"], bytes(row["blob"])


@pytest.mark.postgres
def test_postgres_stores_the_whole_lists_bytes_that_langgraphs_saver_reads_back(postgres_url: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver as LangGraphPostgresSaver

    from lgnb.checkpoint.postgres import PostgresSaver

    thread = f"joined-{uuid.uuid4()}"
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        rec = _Checked(_pg_blob)
        rec.watch(saver)
        spy = _Spied(saver)
        app = _chat(saver, replies=3)
        for i in range(12):
            app.invoke(_turn(i), _cfg(thread), durability="sync")
        app.update_state(_cfg(thread), {"messages": [RemoveMessage(id="q-3")]})
        history = app.get_state(_cfg(thread)).values["messages"]
        app.update_state(_cfg(thread), {"messages": Overwrite([AIMessage("summary " + "word " * 600), *history])})
        for i in range(12, 16):
            app.invoke(_turn(i), _cfg(thread), durability="sync")
        assert rec.compared >= 16 * 4
        assert _reads_back(saver, rec, thread) == 16 * 5 + 2
        assert max(spy.lists[-12:]) < 20  # the last turns joined their replies
        with LangGraphPostgresSaver.from_conn_string(postgres_url) as theirs:
            for tup in theirs.list(_cfg(thread)):
                assert tup.checkpoint["channel_values"] == rec.saved[tup.checkpoint["id"]]
        saver.delete_thread(thread)


@pytest.mark.postgres
def test_postgres_subclass_that_changes_values_as_it_reads_them_saves_what_it_read(postgres_url: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver as LangGraphPostgresSaver

    from lgnb.checkpoint.postgres import PostgresSaver

    for base in (LangGraphPostgresSaver, PostgresSaver):
        thread = f"redacted-{uuid.uuid4()}"
        with _redacting(base).from_conn_string(postgres_url) as saver:
            saver.setup()
            app = _chat(saver)
            app.invoke({"messages": [HumanMessage("secret " + "x" * 3000, id="h")]}, _cfg(thread),
                       durability="sync")
            app.invoke(_turn(1), _cfg(thread), durability="sync")
            tup = saver.get_tuple(_cfg(thread))
            typed = _pg_blob(saver, thread, "", "messages", tup.checkpoint["channel_versions"]["messages"])
            assert _FRESH.loads_typed(typed)[0].content.startswith("[redacted]"), base
            saver.delete_thread(thread)


@pytest.mark.postgres
@pytest.mark.parametrize("resume", [False, True])
def test_postgres_saves_a_message_changed_in_place_and_returned(postgres_url: str, resume: bool) -> None:
    from lgnb.checkpoint.postgres import PostgresSaver

    thread = f"edited-{uuid.uuid4()}"
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        assert _review_edit(saver, resume=resume, thread=thread) == {"to": "alice"}
        saver.delete_thread(thread)


@pytest.mark.postgres
def test_async_postgres_saves_of_many_threads_store_each_lists_bytes(postgres_url: str) -> None:
    from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver

    threads = [f"joined-async-{uuid.uuid4()}" for _ in range(4)]
    stored: dict[tuple[str, str], list[tuple[str, bytes, Any]]] = defaultdict(list)

    async def main() -> None:
        async with AsyncPostgresSaver.from_conn_string(postgres_url) as saver:
            await saver.setup()
            inner = saver.aput

            async def aput(config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
                if "messages" in new_versions and "messages" in checkpoint["channel_values"]:
                    value = checkpoint["channel_values"]["messages"]
                    stored[(config["configurable"]["thread_id"], str(new_versions["messages"]))].append(
                        _FRESH.dumps_typed(value))
                return await inner(config, checkpoint, metadata, new_versions)

            saver.aput = aput  # type: ignore[method-assign]
            app = _chat(saver, replies=12)
            for i in range(2):
                await asyncio.gather(*(app.ainvoke(_turn(i), _cfg(t), durability="sync") for t in threads))
            async with saver._cursor() as cur:
                for thread in threads:
                    await cur.execute(
                        "SELECT version, type, blob FROM checkpoint_blobs WHERE thread_id = %s "
                        "AND channel = 'messages'", (thread,))
                    rows = await cur.fetchall()
                    assert len(rows) == 2 * 13
                    for row in rows:
                        assert [(row["type"], bytes(row["blob"]))] == stored[(thread, row["version"])]
            for thread in threads:  # after the cursor is given back: one connection
                await saver.adelete_thread(thread)

    asyncio.run(main())

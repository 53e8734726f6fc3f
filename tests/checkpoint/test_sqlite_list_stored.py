"""SqliteSaver.list_stored (an lgnb extra for lgnb.history): the checkpoints of list(),
each value handed over undecoded — same tuples once decoded, large values not read."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.graph import START, StateGraph
from lgnb.types import interrupt

CFG = {"configurable": {"thread_id": "t"}}
BIG = "b" * 300_000  # over the default inline_max (64 KB)


class S(TypedDict):
    big: str
    log: Annotated[list, operator.add]


def thread(saver: SqliteSaver) -> Any:
    def write(state: S) -> dict[str, Any]:
        return {"log": ["w"]}

    def ask(state: S) -> dict[str, Any]:
        return {"log": [interrupt("ok?")]}

    b = StateGraph(S)
    b.add_node("write", write)
    b.add_node("ask", ask)
    b.add_edge(START, "write")
    b.add_edge("write", "ask")
    g = b.compile(checkpointer=saver)
    g.invoke({"big": BIG, "log": []}, CFG)  # pauses in ask
    return g


def decoding(saver: SqliteSaver, seen: list[Any]) -> Any:
    def load(stored: Any) -> Any:
        seen.append(stored)
        return saver.serde.loads_typed((stored.type, stored.read()))
    return load


def test_list_stored_decoded_gives_the_same_tuples_as_list(saver: SqliteSaver) -> None:
    thread(saver)
    seen: list[Any] = []
    listed = list(saver.list(CFG))
    stored = list(saver.list_stored(CFG, load=decoding(saver, seen)))
    assert len(listed) == len(stored) == 3
    for a, b in zip(listed, stored):
        assert (a.config, a.metadata, a.parent_config) == (b.config, b.metadata, b.parent_config)
        assert a.checkpoint == b.checkpoint
        assert a.pending_writes == b.pending_writes
    assert any(w[1] == "__interrupt__" for w in stored[0].pending_writes)
    # filter, before and limit mean what they mean for list()
    before = listed[1].config
    assert [t.config for t in saver.list_stored(CFG, load=decoding(saver, []), before=before, limit=1)] == \
        [t.config for t in saver.list(CFG, before=before, limit=1)]
    assert [t.config for t in saver.list_stored(CFG, load=decoding(saver, []), filter={"source": "input"})] == \
        [t.config for t in saver.list(CFG, filter={"source": "input"})]


def test_a_large_value_is_not_read_until_asked_for(saver: SqliteSaver) -> None:
    thread(saver)
    handed: list[Any] = []
    tuples = list(saver.list_stored(CFG, load=lambda s: handed.append(s) or s))
    assert all(s.data is None and s.size > 300_000 for s in handed if s.channel == "big")
    bigs = [s for s in handed if s.channel == "big" and s.version is not None]  # values, not writes
    assert len({s.version for s in bigs}) == 1  # one stored version, referred to by every checkpoint
    assert saver.serde.loads_typed((bigs[0].type, bigs[0].read())) == BIG
    small = [s for s in handed if s.channel == "log"]
    assert small and all(s.data is not None and len(s.data) == s.size for s in small)
    # what `load` returns stands in the tuple, values and writes alike
    assert all(t.checkpoint["channel_values"]["big"].version == bigs[0].version for t in tuples[:-1])
    assert all(w[2].task_id == w[0] for t in tuples for w in t.pending_writes)


def test_a_value_deleted_since_it_was_listed_says_so(saver: SqliteSaver) -> None:
    thread(saver)
    handed: list[Any] = []
    list(saver.list_stored(CFG, load=lambda s: handed.append(s) or s))
    big = next(s for s in handed if s.data is None)
    saver.delete_thread("t")
    try:
        big.read()
    except LookupError as exc:
        assert "list the thread again" in str(exc)
    else:  # pragma: no cover - the assertion names what went wrong
        raise AssertionError("reading a deleted value should fail with LookupError")

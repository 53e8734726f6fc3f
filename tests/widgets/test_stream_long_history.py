"""A run view over a long conversation shows each message once, in order, however the
history changes: the reducer looks at the part of each `values` chunk's `messages` that
follows the previous chunk's (`StreamReducer._unshown`), and at all of it when the list no
longer starts with the previous chunk's messages."""

from __future__ import annotations

import copy
from typing import Any

from langchain_core.messages import HumanMessage, RemoveMessage

from lgnb.widgets._store import ContentStore
from lgnb.widgets._stream import StreamReducer

MODES = ["values", "updates", "messages", "custom", "tasks"]
HISTORY = 300


def _graph(eng: Any, steps: int) -> Any:
    """One node looping `steps` times. Its replies are ("ai", text) tuples, which the
    reducer turns into messages: no `messages` event shows them, only the next `values`
    chunk. At its 4th step it removes an input message and appends one in the same write
    (the list keeps its length)."""

    def talk(state: Any) -> dict[str, Any]:
        n = sum(m.type == "ai" for m in state["messages"])
        if n == 3:
            return {"messages": [RemoveMessage(id="h3"), ("ai", "after removal")]}
        return {"messages": [("ai", f"reply {n}")]}

    g = eng.StateGraph(eng.MessagesState)
    g.add_node("talk", talk)
    g.add_edge(eng.START, "talk")
    g.add_conditional_edges(
        "talk", lambda s: "talk" if sum(m.type == "ai" for m in s["messages"]) < steps else eng.END,
        ["talk", eng.END],
    )
    return g.compile()


def _shown(chunks: Any, *, fresh_objects: bool = False) -> list[tuple[str, str]]:
    reducer, store = StreamReducer(), ContentStore()
    reducer.begin_segment()
    for chunk in chunks:
        if fresh_objects and chunk[1] == "values":  # as a remote graph's decoded chunks are
            chunk = (chunk[0], chunk[1], copy.deepcopy(chunk[2]))
        for patch in reducer.feed(chunk):
            store.apply(patch)
    reducer.end_segment(finished=True)
    return [(m["type"], m["content"]) for m in store.snapshot()["messages"]]


def _start() -> dict[str, Any]:
    return {"messages": [HumanMessage(f"m{i}", id=f"h{i}") for i in range(HISTORY)]}


def test_each_message_of_a_long_conversation_is_shown_once_in_order(eng: Any) -> None:
    chunks = _graph(eng, 8).stream(_start(), stream_mode=MODES, subgraphs=True)
    shown = _shown(chunks)
    replies = [f"reply {n}" for n in range(8) if n != 3]
    replies.insert(3, "after removal")
    # the removed message keeps the bubble it had (its RemoveMessage is not its new form)
    assert shown == [("human", f"m{i}") for i in range(HISTORY)] + [("ai", r) for r in replies]


def test_chunks_decoded_afresh_show_the_same_messages(eng: Any) -> None:
    graph = _graph(eng, 6)
    same = _shown(graph.stream(_start(), stream_mode=MODES, subgraphs=True))
    fresh = _shown(graph.stream(_start(), stream_mode=MODES, subgraphs=True), fresh_objects=True)
    assert fresh == same and len(same) == HISTORY + 6


class _NoEquality:
    """An item whose `==` raises, as a numpy array's truth value does."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("the truth value of this item is ambiguous")

    __hash__ = object.__hash__


def test_a_messages_list_with_items_that_cannot_be_compared_is_still_shown(eng: Any) -> None:
    """A `messages` key that is a plain list (no reducer) holding an item whose `==` fails,
    replaced at each step: the view compares the new list with the last one, falls back to
    looking at all of it, and shows each message once."""
    from typing import TypedDict

    from langchain_core.messages import AIMessage

    class State(TypedDict):
        messages: list

    odd = _NoEquality()

    def talk(state: Any) -> dict[str, Any]:
        msgs = state["messages"]
        n = sum(isinstance(m, AIMessage) for m in msgs)
        # a new list whose second item is a new odd object: comparing it with the last
        # chunk's calls its `==`
        return {"messages": [msgs[0], _NoEquality(), *msgs[2:], AIMessage(f"reply {n}", id=f"a{n}")]}

    g = eng.StateGraph(State)
    g.add_node("talk", talk)
    g.add_edge(eng.START, "talk")
    g.add_conditional_edges("talk", lambda s: "talk" if len(s["messages"]) < 6 else eng.END, ["talk", eng.END])
    chunks = g.compile().stream({"messages": [HumanMessage("hi", id="h"), odd]}, stream_mode=MODES, subgraphs=True)
    assert _shown(chunks) == [("human", "hi")] + [("ai", f"reply {n}") for n in range(4)]

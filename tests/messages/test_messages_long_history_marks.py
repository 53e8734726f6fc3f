"""In a long conversation each node marks only the messages its input gained.

LangGraph marks every message of a node's input seen when the node starts, so a node that
returns one of them does not stream it again. lgnb marks an `add_messages` key's new
messages only (`MessagesChannel.lineage`): a step of a 10,000-message conversation costs
what a step of a 100-message one does. These scenarios make the marks visible (a later
node returns messages that no node streamed: the graph's input, a list user code changed
in place, an `Overwrite`, a removal) over histories long enough (300 messages and more)
for the channel to grow its lists in place, and compare the stream with LangGraph's.
"""

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

HISTORY = 300


def _history(n: int = HISTORY) -> list:
    return [HumanMessage(f"m{i}", id=f"h{i}") for i in range(n)]


def _replies(messages: list) -> int:
    """How many replies (AI messages) a conversation holds: the scenarios' step counter."""
    return sum(isinstance(m, AIMessage) for m in messages)


def _looping(E, node, steps: int):
    g = E.StateGraph(E.MessagesState)
    g.add_node("talk", node)
    g.add_edge(E.START, "talk")
    g.add_conditional_edges(
        "talk", lambda s: "talk" if _replies(s["messages"]) < steps else E.END,
        ["talk", E.END],
    )
    return g.compile()


def _stream(app, messages) -> list:
    return [(m.id, m.content) for m, _ in app.stream({"messages": messages}, stream_mode="messages",
                                                    config={"recursion_limit": 200})]


def test_old_messages_a_node_returns_again_are_not_streamed_again(differential):
    def scenario(E):
        def node(s):
            msgs = s["messages"]
            n = len(msgs)
            new = AIMessage(f"reply {n}", id=f"a{n}")
            # every third step also hands back an input message: from the graph's input,
            # and the reply of two steps ago
            return {"messages": [msgs[n // 2], msgs[-1], new] if n % 3 == 0 else [new]}

        return _stream(_looping(E, node, 40), _history())

    ref = differential(scenario)
    assert len(ref) == 40


def test_a_message_user_code_appended_in_place_is_marked_when_the_next_node_starts(differential):
    def scenario(E):
        def node(s):
            msgs = s["messages"]
            n = _replies(msgs)
            if n == 5:  # changes its input list in place, then writes as usual
                msgs.append(HumanMessage("sneaked in", id="sneaky"))
            if n == 6:  # the same, keeping the list's length
                msgs[7] = HumanMessage("swapped in", id="swapped")
            back = [m for m in msgs if m.id in ("sneaky", "swapped")] if n == 8 else []
            return {"messages": [*back, AIMessage(f"reply {n}", id=f"a{n}")]}

        return _stream(_looping(E, node, 12), _history())

    ref = differential(scenario)
    assert not {"sneaky", "swapped"} & {mid for mid, _ in ref}


def test_messages_an_overwrite_put_in_are_marked_when_the_next_node_starts(differential):
    def scenario(E):
        def node(s):
            msgs = s["messages"]
            n = _replies(msgs)
            reset = any(m.id == "reset" for m in msgs)
            if n == 3 and not reset:
                fresh = [HumanMessage(f"o{i}", id=f"o{i}") for i in range(HISTORY + 20)]
                return {"messages": E.Overwrite([*fresh, AIMessage("reset", id="reset")])}
            back = [m for m in msgs if m.id in ("o7", "o300")] if reset and n == 4 else []
            return {"messages": [*back, AIMessage(f"reply {n}", id=f"a{n}")]}

        return _stream(_looping(E, node, 9), _history())

    ref = differential(scenario)
    assert not {"o7", "o300"} & {mid for mid, _ in ref}


def test_after_a_removal_the_history_is_marked_afresh(differential):
    def scenario(E):
        def node(s):
            msgs = s["messages"]
            n = _replies(msgs)
            if n == 4:  # a removal and an append in one write: the list keeps its length;
                # the appended message is a tuple the reducer turns into a message, which
                # no node streams (it is not a message in the node's output)
                return {"messages": [RemoveMessage(id="h3"), ("ai", "after removal")]}
            back = [msgs[10], msgs[-2]] if n in (6, 7) else []
            back += [m for m in msgs if m.content == "after removal"] if n == 6 else []
            return {"messages": [*back, AIMessage(f"reply {n}", id=f"a{n}")]}

        return _stream(_looping(E, node, 10), _history())

    ref = differential(scenario)
    assert "after removal" not in [content for _, content in ref]


def test_remove_all_then_a_new_history_from_a_node_that_is_not_streamed(differential):
    """The graph's input fills the history; `REMOVE_ALL_MESSAGES` replaces it with
    messages that a node returns inside a `Command` goto'd by name: the next node hands
    some of them back."""

    def scenario(E):
        def node(s):
            msgs = s["messages"]
            n = _replies(msgs)
            if n == 2:
                return {"messages": [RemoveMessage(id=E.REMOVE_ALL_MESSAGES), *_history(HISTORY + 5),
                                     AIMessage("restart", id="restart")]}
            back = msgs[:2] if n == 4 else []
            return {"messages": [*back, AIMessage(f"reply {n}", id=f"a{n}")]}

        return _stream(_looping(E, node, 6), _history())

    differential(scenario)


def test_a_replaced_message_keeps_its_id_marked(differential):
    def scenario(E):
        def node(s):
            msgs = s["messages"]
            n = _replies(msgs)
            if n == 2:  # an edit of an input message: same id, new content
                return {"messages": [HumanMessage("m5, edited", id="h5"), AIMessage("edit", id="e2")]}
            back = [m for m in msgs if m.id == "h5"] if n == 5 else []
            return {"messages": [*back, AIMessage(f"reply {n}", id=f"a{n}")]}

        return _stream(_looping(E, node, 7), _history())

    ref = differential(scenario)
    assert "h5" not in [mid for mid, _ in ref]  # the edit keeps an id the input had


def test_a_message_among_other_items_of_a_long_list_is_marked(differential):
    """A key other than `messages` holds a long list (a log a reducer appends to): the
    message the graph's input put among its items is marked, so handing it back later
    streams nothing; the log's other items are not messages and mark nothing."""
    import operator
    from typing import Annotated

    from typing_extensions import TypedDict

    def scenario(E):
        class State(TypedDict):
            messages: Annotated[list, E.add_messages]
            log: Annotated[list, operator.add]

        def node(s):
            n = len(s["log"])
            back = [m for m in s["log"] if isinstance(m, HumanMessage)] if n == HISTORY + 5 else []
            return {"messages": [*back, AIMessage(f"reply {n}", id=f"a{n}")], "log": [n, f"entry {n}"]}

        g = E.StateGraph(State)
        g.add_node("talk", node)
        g.add_edge(E.START, "talk")
        g.add_conditional_edges("talk", lambda s: "talk" if len(s["log"]) < HISTORY + 12 else E.END,
                                ["talk", E.END])
        start = {"messages": [], "log": [*range(HISTORY), HumanMessage("in the log", id="logged")]}
        return [(m.id, m.content) for m, _ in g.compile().stream(start, stream_mode="messages",
                                                                 config={"recursion_limit": 50})]

    ref = differential(scenario)
    assert "logged" not in [mid for mid, _ in ref] and len(ref) == 6

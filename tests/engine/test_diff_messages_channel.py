"""`add_messages` keys across many steps: lgnb keeps the id index between steps
(lgnb.channels.messages.MessagesChannel); every value must still be LangGraph's.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import random
from functools import partial
from typing import Annotated

import pytest
from _diff import capture, collect
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from typing_extensions import TypedDict


def _loop(E, State, script, *, checkpointer=None):
    """agent -> (conditional edge on the fresh state) -> agent ... ; `script[i]` is the
    update of step i; the edge records the ids it saw, so the fresh read is observed."""
    seen = []

    def agent(s):
        return {"messages": script[s["turn"]], "turn": s["turn"] + 1}

    def route(s):
        seen.append([(m.id, m.content) for m in s["messages"]])
        return "agent" if s["turn"] < len(script) else E.END

    g = E.StateGraph(State)
    g.add_node("agent", agent)
    g.add_edge(E.START, "agent")
    g.add_conditional_edges("agent", route, ["agent", E.END])
    return g.compile(checkpointer=checkpointer), seen


def _state(E):
    return TypedDict("S", {"messages": Annotated[list, E.add_messages], "turn": int})


def _script(E):
    return [
        [AIMessage("a1", id="a1")],
        [AIMessage("a1 edited", id="a1"), HumanMessage("h2", id="h2")],
        [RemoveMessage(id="h0"), AIMessage("a3", id="a3")],
        [AIMessage("a4", id="a4"), RemoveMessage(id="a4"), AIMessage("a4 back", id="a4")],
        [RemoveMessage(id="a1"), AIMessage("a1 again", id="a1")],
        [("ai", "tuple, no id"), {"role": "user", "content": "dict, no id"}],
        [RemoveMessage(id=E.REMOVE_ALL_MESSAGES), AIMessage("fresh", id="f")],
        [AIMessage("fresh 2", id="f"), AIMessage("g", id="g")],
        [HumanMessage("h2 again", id="h2")],
    ]


def test_every_merge_rule_over_many_steps_matches_langgraph_in_state_and_fresh_reads(differential):
    def scenario(E):
        app, seen = _loop(E, _state(E), _script(E))
        history = [HumanMessage("h0", id="h0"), HumanMessage("h1", id="h1")]
        out = app.invoke({"messages": history, "turn": 0})
        return out, seen

    differential(scenario)


def test_values_chunks_are_snapshots_that_later_steps_do_not_change(differential):
    def scenario(E):
        app, _ = _loop(E, _state(E), _script(E))
        chunks = collect(
            lambda: app.stream({"messages": [HumanMessage("h0", id="h0")], "turn": 0}, stream_mode="values")
        )
        return [[(m.id, m.content) for m in c["messages"]] for c in chunks]

    differential(scenario)


def test_parallel_writers_and_their_conditional_edges_each_see_their_own_writes(differential):
    def scenario(E):
        State = _state(E)
        seen = []

        def left(s):
            return {"messages": [AIMessage("L", id="L"), RemoveMessage(id="x")]}

        def right(s):
            return {"messages": [AIMessage("R", id="R"), AIMessage("x replaced", id="x")]}

        def route_for(name):
            def route(s):
                seen.append((name, [(m.id, m.content) for m in s["messages"]]))
                return E.END

            return route

        g = E.StateGraph(State)
        g.add_node("left", left)
        g.add_node("right", right)
        g.add_edge(E.START, "left")
        g.add_edge(E.START, "right")
        g.add_conditional_edges("left", route_for("left"), [E.END])
        g.add_conditional_edges("right", route_for("right"), [E.END])
        out = capture(lambda: g.compile().invoke({"messages": [HumanMessage("x", id="x")], "turn": 0}))
        return out, sorted(seen)

    differential(scenario)


def test_a_conditional_edge_changing_its_list_does_not_change_the_state(differential):
    """The edge's list is its own in LangGraph: whatever it does to it (append, pop,
    replace an item, reorder, clear) never reaches the state or later steps; a list it
    keeps is never changed by later steps either."""

    def scenario(E):
        State = _state(E)
        kept = []
        seen = []

        def agent(s):
            t = s["turn"]
            seen.append(_snapshot(s["messages"]))
            return {"messages": AIMessage(f"a{t}", id=f"a{t}"), "turn": t + 1}

        def route(s):
            msgs, t = s["messages"], s["turn"]
            kept.append(msgs)
            mutate = [
                lambda: msgs.append(HumanMessage("sneaked", id="x")),
                lambda: msgs.pop(),
                lambda: msgs.__setitem__(0, HumanMessage("swapped", id="h0")),
                lambda: msgs.reverse(),
                lambda: msgs.clear(),
                lambda: msgs.insert(1, AIMessage("inserted", id="i")),
                lambda: msgs.__setitem__(slice(0, 2), [msgs[1], msgs[0]]),
                lambda: None,
            ][t % 8]
            mutate()
            return "agent" if t < 9 else E.END

        g = E.StateGraph(State)
        g.add_node("agent", agent)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", route, ["agent", E.END])
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        # long enough for lgnb to adopt the edge's list (REUSE_FROM messages and more)
        history = [HumanMessage(f"h{i}", id=f"h{i}") for i in range(300)]
        out = app.invoke({"messages": history, "turn": 0}, cfg)
        # a list an edge kept still holds what the edge left in it, nothing later
        kept_now = [_snapshot(msgs) for msgs in kept]
        return _snapshot(out["messages"]), seen, kept_now, _snapshot(app.get_state(cfg).values["messages"])

    differential(scenario)


def test_a_list_a_node_kept_never_changes_and_changing_it_later_does_not_reach_the_state(differential):
    """Nodes keep the list they read (some steps), and change a list kept earlier once
    the state has moved on, then let it go: kept lists stay as they were read, and the
    state is LangGraph's whatever is done to the old lists."""

    def scenario(E):
        State = _state(E)
        kept = {}
        seen = []

        def agent(s):
            t = s["turn"]
            msgs = s["messages"]
            seen.append(_snapshot(msgs))
            if t % 3 == 0:
                kept[t] = msgs  # kept for good: must not change
            if t % 3 == 1:
                kept[f"mutate {t}"] = msgs
            old = kept.pop(f"mutate {t - 2}", None)  # a list of two steps ago
            if old is not None:
                [old.reverse, old.pop, lambda: old.__setitem__(0, HumanMessage("x", id="h0"))][t % 3]()
                del old
            return {"messages": AIMessage(f"a{t}", id=f"a{t}"), "turn": t + 1}

        def route(s):
            return "agent" if s["turn"] < 12 else E.END

        g = E.StateGraph(State)
        g.add_node("agent", agent)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", route, ["agent", E.END])
        # long enough for lgnb to reuse retired lists (REUSE_FROM messages and more)
        history = [HumanMessage(f"h{i}", id=f"h{i}") for i in range(300)]
        out = g.compile().invoke({"messages": history, "turn": 0})
        return _snapshot(out["messages"]), seen, {k: _snapshot(v) for k, v in kept.items() if isinstance(k, int)}

    differential(scenario)


def test_a_single_message_update_and_a_list_update_give_the_same_state(differential):
    def scenario(E):
        script = [AIMessage("one", id="a"), [AIMessage("two", id="b")], AIMessage("one edited", id="a"), AIMessage("no id")]
        app, seen = _loop(E, _state(E), script)
        out = app.invoke({"messages": [HumanMessage("h", id="h")], "turn": 0})
        return [(m.content, m.id == "a" or m.id == "b" or m.id == "h" or bool(m.id)) for m in out["messages"]], [
            [c for _, c in step] for step in seen
        ]

    differential(scenario)


def test_thread_resumed_from_a_checkpoint_replaces_and_removes_old_messages(differential):
    def scenario(E):
        State = _state(E)

        def agent(s):
            t = s["turn"]
            if t == 0:
                return {"messages": [AIMessage("first", id="a")], "turn": 1}
            return {
                "messages": [AIMessage("first, edited", id="a"), RemoveMessage(id="q"), AIMessage(f"t{t}")],
                "turn": t + 1,
            }

        g = E.StateGraph(State)
        g.add_node("agent", agent)
        g.add_edge(E.START, "agent")
        g.add_edge("agent", E.END)
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        first = app.invoke({"messages": [HumanMessage("q", id="q")], "turn": 0}, cfg)
        second = app.invoke({"messages": [HumanMessage("q2", id="q2")]}, cfg)
        third = capture(lambda: app.invoke({"messages": [RemoveMessage(id="q")]}, cfg))
        return first, second, third, app.get_state(cfg).values

    differential(scenario, exc="extends")


def test_removing_an_unknown_id_late_in_a_long_conversation_raises(differential):
    def scenario(E):
        script = [[AIMessage(f"a{i}", id=f"a{i}")] for i in range(5)] + [[RemoveMessage(id="a99")]]
        app, _ = _loop(E, _state(E), script)
        return capture(lambda: app.invoke({"messages": [], "turn": 0}))

    differential(scenario, exc="extends")


def test_overwrite_then_merges_in_later_steps(differential):
    def scenario(E):
        script = [
            [AIMessage("a", id="a")],
            E.Overwrite([HumanMessage("only", id="o"), HumanMessage("dup", id="o")]),
            [AIMessage("o replaced", id="o"), AIMessage("b", id="b")],
            [RemoveMessage(id="o")],
        ]
        app, seen = _loop(E, _state(E), script)
        return app.invoke({"messages": [HumanMessage("h", id="h")], "turn": 0}), seen

    differential(scenario)


def test_format_langchain_openai_keeps_langgraphs_behaviour(differential):
    def scenario(E):
        State = TypedDict(  # noqa: UP013 - the annotation uses the engine under test
            "S", {"messages": Annotated[list, E.add_messages(format="langchain-openai")], "turn": int}
        )
        script = [
            [AIMessage([{"type": "text", "text": "hi"}], id="a")],
            [ToolMessage("done", tool_call_id="c1", id="t"), AIMessage("a2", id="a")],
        ]
        app, seen = _loop(E, State, script)
        return app.invoke({"messages": [HumanMessage("q", id="q")], "turn": 0}), seen

    differential(scenario)


# --- the channel alone against LangGraph's reducer, many random histories -------------


def _random_update(rng: random.Random, ids: list[str], step: int) -> list:
    update = []
    for k in range(rng.randint(0, 4)):
        roll = rng.random()
        if roll < 0.45 or not ids:
            mid = f"m{step}-{k}" if rng.random() < 0.8 else None
            update.append(AIMessage(f"s{step}k{k}", id=mid))
        elif roll < 0.7:
            update.append(HumanMessage(f"edit s{step}k{k}", id=rng.choice(ids)))
        elif roll < 0.9:
            update.append(RemoveMessage(id=rng.choice(ids)))
        elif roll < 0.97:
            update.append(RemoveMessage(id="missing"))
        else:
            update.append(RemoveMessage(id="__remove_all__"))
    return update


def _apply(channel, update):
    """The channel's value after one write of `update`, or ("raises", cls, msg)."""
    return capture(lambda: channel.update([update]) and channel.get())


def _ids_of(value: list) -> list[str]:
    return [m.id for m in value]


def _snapshot(value):
    return [(m.id, type(m).__name__, m.content) for m in value]


@pytest.mark.parametrize("seed", range(12))
def test_channel_and_its_copies_match_langgraph_add_messages_on_random_histories(seed, monkeypatch):
    """The loop's channel, its `value_after` (a fresh read without a copy) and
    fresh-read copies (which borrow its index) give what
    LangGraph's reducer gives through appends, replacements, removals (also of an id
    added earlier in the same update), unknown-id errors, REMOVE_ALL_MESSAGES and a
    history restored from a checkpoint with a duplicate id."""
    from langgraph.graph.message import add_messages as ref_add

    from lgnb.channels import messages
    from lgnb.channels.messages import MessagesChannel
    from lgnb.graph.message import add_messages

    monkeypatch.setattr(messages, "REUSE_FROM", 0)  # retired lists reused at any length
    rng = random.Random(seed)
    spec = MessagesChannel(list, add_messages, "messages")
    ch = spec.from_checkpoint([HumanMessage("h", id="h"), AIMessage("h dup", id="h")])
    ref = list(ch.get())
    copies: list = []  # (a copy of the channel made at some step, LangGraph's value for it)
    errors = peeked = 0
    for step in range(80):
        if rng.random() < 0.5:
            copies.append((ch.copy(), list(ref)))
        update = _random_update(rng, _ids_of(ref), step)
        before = _snapshot(ch.get())
        peek = ch.value_after(update)  # a fresh read's value; assigns missing ids in place
        assert _snapshot(ch.get()) == before, (seed, step)  # the channel is left as it was
        peeked_as = None if peek is None else _snapshot(peek)
        if peek is not None and rng.random() < 0.3:
            change = rng.choice(["reverse", "append", "swap"])
            if change == "reverse":
                peek.reverse()
            elif change == "append":
                peek.append(AIMessage("edge's own", id="own"))
            elif len(peek) > 1:
                peek[0], peek[1] = peek[1], peek[0]
        got = _apply(ch, update)
        expected = capture(partial(ref_add, ref, update))
        if peek is not None:
            peeked += 1
            assert peeked_as == _snapshot(expected), (seed, step)
        if isinstance(expected, tuple):
            errors += 1
            assert got[0] == "raises" and "doesn't exist" in got[2], (seed, step, got)
            assert _snapshot(ch.get()) == _snapshot(ref), (seed, step)
        else:
            assert _snapshot(got) == _snapshot(expected), (seed, step)
            ref = expected
        for copy, base in copies[-3:]:
            expected = capture(partial(ref_add, base, update))
            got = _apply(copy, update)
            if isinstance(expected, tuple):
                assert got[0] == "raises", (seed, step)
            else:
                assert _snapshot(got) == _snapshot(expected), (seed, step)
                base[:] = expected
    assert len(ref) > 3 or errors  # the walk did something
    assert peeked  # ... and took value_after's path (updates without a RemoveMessage)


def test_the_write_takes_the_fresh_reads_list_only_while_the_edge_left_it_alone(monkeypatch):
    """One copy of the history per step, not two: the step's write adopts the list a
    conditional edge read, when that list is untouched, the write only appends and the
    edge let go of it (a list someone still holds could change under the state)."""
    from lgnb.channels import messages
    from lgnb.channels.messages import MessagesChannel
    from lgnb.graph.message import add_messages

    monkeypatch.setattr(messages, "REUSE_FROM", 0)  # at any length, not only long ones

    ch = MessagesChannel(list, add_messages, "messages").from_checkpoint([HumanMessage(f"h{i}", id=f"h{i}") for i in range(5)])
    ch.update([[AIMessage("index built", id="a0")]])
    update = AIMessage("appended", id="a1")
    peek = ch.value_after(update)
    read = id(peek)
    del peek  # the edge returned: its list is the channel's only (the record holds it alive)
    ch.update([update])
    assert id(ch.get()) == read and [m.id for m in ch.get()][-2:] == ["a0", "a1"]

    update = AIMessage("kept by the edge", id="a1b")
    kept = ch.value_after(update)  # a router that keeps the list it read
    ch.update([update])
    assert ch.get() is not kept and ch.get() == kept
    ch.update([[AIMessage("later", id="a1c")]])
    assert [m.id for m in kept][-1] == "a1b"  # what it kept never changes

    update = AIMessage("appended too", id="a2")
    peek = ch.value_after(update)
    peek[0], peek[1] = peek[1], peek[0]  # the edge reorders its own list, then lets go
    del peek
    ch.update([update])
    assert [m.id for m in ch.get()][:2] == ["h0", "h1"]

    update = HumanMessage("h0 replaced", id="h0")  # a replacement is not adopted, still right
    peek = ch.value_after(update)
    ch.update([update])
    assert ch.get() is not peek and ch.get()[0].content == "h0 replaced" and len(ch.get()) == 10

"""State, reducers and streams in ordinary StateGraph programs, on both engines.

In-place mutation of channel values (not just of the node's input dict), consumers that
mutate stream chunks, wide states on both sides of `lgnb.pregel._view.SHARE_FROM`, reducers
and the messages channel's id index after in-place changes.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import operator
import time
from typing import Annotated

import pytest
from _builders import _chain
from _diff import acollect, capture, collect
from typing_extensions import TypedDict

WIDE = 300  # keys: above lgnb's SHARE_FROM (128), so node inputs are shared snapshots
NARROW = 5


def _wide(n, extra=None):
    fields = {f"k{i}": int for i in range(n)}
    fields.update(extra or {})
    return TypedDict(f"W{n}", fields)


def _zeros(n):
    """An input setting every key of `_wide(n)` to 0."""
    return {f"k{i}": 0 for i in range(n)}


def _messages_after(E, *fns):
    """Run `fns` in a chain over `MessagesState` from one human message: the final
    messages as (id, content), or what the run raised."""
    from langchain_core.messages import HumanMessage

    app = _chain(E, E.MessagesState, *fns)
    out = capture(lambda: app.invoke({"messages": [HumanMessage("hi", id="h1")]}))
    return [(m.id, m.content) for m in out["messages"]] if isinstance(out, dict) else out


def _small(d, n):
    """Only the interesting keys of a wide state (keeps observables short)."""
    if not isinstance(d, dict):
        return d
    return {k: v for k, v in d.items() if not (k.startswith("k") and k[1:].isdigit() and int(k[1:]) >= 3)}


SIZES = pytest.mark.parametrize("n", [NARROW, WIDE], ids=["narrow", "wide"])


# --- in-place mutation of channel values -------------------------------------------------


@SIZES
def test_in_place_append_to_last_value_list_is_seen_by_later_nodes(differential, n):
    def scenario(E):
        State = _wide(n, {"xs": list})
        seen = []

        def a(s):
            s["xs"].append("a")  # mutates the channel's value in LangGraph
            return None

        def b(s):
            seen.append(list(s["xs"]))
            return {"k0": 1}

        def c(s):
            seen.append(list(s["xs"]))
            s["xs"].append("c")
            return {"k1": 1}

        app = _chain(E, State, a, b, c)
        inp = _zeros(n)
        chunks = collect(lambda: app.stream({**inp, "xs": []}, stream_mode="values"))
        out = app.invoke({**inp, "xs": ["i"]})
        return [_small(c, n) for c in chunks], _small(out, n), seen

    differential(scenario)


@SIZES
def test_in_place_append_to_reducer_list_then_reducer_write(differential, n):
    def scenario(E):
        State = _wide(n, {"xs": Annotated[list, operator.add]})
        seen = []

        def a(s):
            s["xs"].append("sneaky")
            return {"xs": ["a"]}

        def b(s):
            seen.append(list(s["xs"]))
            s["xs"].append("sneaky-b")
            return None

        def c(s):
            seen.append(list(s["xs"]))
            return {"xs": ["c"]}

        app = _chain(E, State, a, b, c)
        inp = _zeros(n)
        chunks = collect(lambda: app.stream({**inp, "xs": ["i"]}, stream_mode=["values", "updates"]))
        return [(m, _small(c, n)) for m, c in chunks]

    differential(scenario)


@SIZES
def test_in_place_change_of_nested_dict_value(differential, n):
    def scenario(E):
        State = _wide(n, {"cfg": dict})
        seen = []

        def a(s):
            s["cfg"]["a"] = 1
            s["cfg"].pop("drop", None)
            return {"k0": 5}

        def b(s):
            seen.append(dict(s["cfg"]))
            return {"cfg": {**s["cfg"], "b": 2}}

        def c(s):
            seen.append(dict(s["cfg"]))
            s["cfg"]["c"] = 3
            return None

        app = _chain(E, State, a, b, c)
        inp = _zeros(n)
        out = app.invoke({**inp, "cfg": {"drop": True}})
        return _small(out, n), seen

    differential(scenario)


# --- messages channel: its id index after in-place changes -------------------------------


def test_message_appended_in_place_is_replaced_by_a_later_write_with_its_id(differential):
    from langchain_core.messages import AIMessage

    def scenario(E):
        def sneak(s):
            s["messages"].append(AIMessage("draft", id="d1"))  # bypasses the reducer
            return {"messages": [AIMessage("other", id="o1")]}

        def revise(s):
            return {"messages": [AIMessage("final", id="d1")]}

        return _messages_after(E, sneak, revise)

    differential(scenario)


def test_message_appended_in_place_without_a_write_then_replaced(differential):
    from langchain_core.messages import AIMessage

    def scenario(E):
        def sneak(s):
            s["messages"].append(AIMessage("draft", id="d1"))
            return None

        def revise(s):
            return {"messages": [AIMessage("final", id="d1"), AIMessage("new", id="n1")]}

        def again(s):
            return {"messages": [AIMessage("final2", id="d1")]}

        return _messages_after(E, sneak, revise, again)

    differential(scenario)


def test_message_removed_in_place_then_a_write_with_a_later_id(differential):
    from langchain_core.messages import AIMessage

    def scenario(E):
        def first(s):
            return {"messages": [AIMessage("a", id="a1"), AIMessage("b", id="b1")]}

        def pop_first(s):
            s["messages"].pop(0)  # positions shift under the index
            return None

        def revise(s):
            return {"messages": [AIMessage("b2", id="b1")]}

        return _messages_after(E, first, pop_first, revise)

    differential(scenario)


# --- consumers mutating stream chunks ----------------------------------------------------


@SIZES
def test_node_returning_its_own_input_and_later_steps(differential, n):
    def scenario(E):
        State = _wide(n)

        def a(s):
            s["k0"] = s["k0"] + 1
            return s  # the common "mutate and return the state" style

        def b(s):
            return s  # unchanged: every key written again

        def c(s):
            return {"k1": s["k0"] * 10}

        app = _chain(E, State, a, b, c)
        inp = _zeros(n)
        chunks = collect(lambda: app.stream(inp, stream_mode=["updates", "values"]))
        kept = [(m, {k: _small(v, n) for k, v in c.items()} if m == "updates" else _small(c, n)) for m, c in chunks]
        return kept

    differential(scenario)


@SIZES
def test_updates_chunk_holding_returned_input_is_not_changed_by_later_steps(differential, n):
    def scenario(E):
        State = _wide(n)

        def a(s):
            return s

        def b(s):
            return {"k0": 99}

        def c(s):
            return {"k1": 98}

        app = _chain(E, State, a, b, c)
        inp = _zeros(n)
        chunks = list(app.stream(inp, stream_mode="updates"))
        return [{k: _small(v, n) for k, v in c.items()} for c in chunks]

    differential(scenario)


@SIZES
def test_tasks_and_debug_chunks_mutated_by_consumer(differential, n):
    def scenario(E):
        State = _wide(n, {"xs": Annotated[list, operator.add]})
        seen = []

        def a(s):
            return {"xs": ["a"], "k0": 1}

        def b(s):
            seen.append((s["k0"], list(s["xs"])))
            return {"xs": ["b"]}

        app = _chain(E, State, a, b)
        inp = _zeros(n)
        for mode in ("tasks", "debug"):
            for chunk in app.stream({**inp, "xs": []}, stream_mode=mode):
                payload = chunk if mode == "tasks" else chunk["payload"]
                if isinstance(payload.get("input"), dict):
                    payload["input"]["k0"] = -5
                    payload["input"]["xs"].append("consumer")
                if isinstance(payload.get("values"), dict):
                    payload["values"]["k0"] = -6
                    payload["values"]["xs"].append("consumer-v")
        out = app.invoke({**inp, "xs": []})
        return seen, _small(out, n)

    differential(scenario)


# --- siblings in one step ----------------------------------------------------------------


@SIZES
def test_parallel_siblings_mutating_their_input_do_not_see_each_other(differential, n):
    def scenario(E):
        State = _wide(n, {"log": Annotated[list, operator.add]})

        def make(name):
            def node(s):
                before = (s["k0"], s.get("k1"), len(s))
                s["k0"] = name
                del s["k1"]
                return {"log": [(name, before)]}

            return node

        def join(s):
            return {"log": [("join", s["k0"], s["k1"], len(s))]}

        g = E.StateGraph(State)
        for name in ("x", "y", "z"):
            g.add_node(name, make(name))
            g.add_edge(E.START, name)
        g.add_node("join", join)
        g.add_edge(["x", "y", "z"], "join")
        app = g.compile()
        inp = _zeros(n)
        return [app.invoke({**inp, "log": []})["log"] for _ in range(3)]

    differential(scenario)


@SIZES
def test_node_input_is_a_dict_whose_copy_is_a_plain_dict(differential, n):
    """What code relies on. (From `SHARE_FROM` keys on, lgnb hands a node a read-only
    shared snapshot, a `dict` subclass, instead of a copy: deliberate, lgnb/pregel/_view.py;
    `type(s) is dict` is the one check that tells.)"""
    def scenario(E):
        State = _wide(n)
        kinds = []

        def a(s):
            kinds.append((isinstance(s, dict), s.copy().__class__.__name__, dict(s) == s,
                          sorted(s)[:3]))
            return {"k0": 1}

        app = _chain(E, State, a, a)
        app.invoke(_zeros(n))
        return kinds

    differential(scenario)


# --- when the sync stream hands chunks over, relative to the nodes it runs ---------------


def _abc(E, log, checkpointer=None):
    class S(TypedDict):
        k0: int

    def mk(n):
        def f(s):
            log.append(f"run {n}")
            return {"k0": s["k0"] + 1}

        return f

    g = E.StateGraph(S)
    for n in "abc":
        g.add_node(n, mk(n))
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", E.END)
    return g.compile(checkpointer=checkpointer)


@pytest.mark.parametrize("modes", [("updates", "custom"), ("values", "messages"), ("updates",)],
                         ids=["custom", "messages", "plain"])
def test_breaking_out_of_a_live_stream_runs_no_further_node_and_saves_no_further_step(differential, modes):
    """`custom`/`messages` streams deliver events while nodes run; a consumer that stops at
    the first chunk of node `a` stops the run there: `b` never runs, the thread's state
    is what `a` left (with a checkpointer), as in LangGraph, which drives the run from
    the consumer's thread."""

    def scenario(E):
        log = []
        app = _abc(E, log, checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        for chunk in app.stream({"k0": 0}, cfg, stream_mode=list(modes)):
            log.append(("got", chunk))
            if chunk[0] != "values" or chunk[1]["k0"] == 1:
                break
        st = app.get_state(cfg)
        return log, st.values, st.next, [(t.name, t.result) for t in st.tasks]

    differential(scenario)


def test_a_slow_node_streams_custom_events_while_it_runs(differential):
    """A node that writes custom events then waits on the consumer (an event the consumer
    sets on receipt): the events reach the consumer while the node still runs."""
    import threading

    def scenario(E):
        class S(TypedDict):
            k0: int

        got = threading.Event()
        seen = []

        def slow(s):
            time.sleep(0.01)  # not known to be quick: it runs in a worker thread
            E.get_stream_writer()({"progress": 1})
            seen.append(("delivered while running", got.wait(5)))
            return {"k0": 1}

        g = E.StateGraph(S)
        g.add_node("slow", slow)
        g.add_edge(E.START, "slow")
        app = g.compile()
        out = []
        for ns_chunk in app.stream({"k0": 0}, stream_mode=["custom", "updates"]):
            out.append(ns_chunk)
            if ns_chunk[0] == "custom":
                got.set()
        return out, seen

    differential(scenario)


@pytest.mark.parametrize("mode", ["values", "tasks", "debug", "checkpoints", ("values", "updates")])
def test_sync_stream_delivers_start_of_step_chunks_before_the_step_runs(differential, mode):
    """LangGraph yields the `values` chunk of step N (and step N+1's task-start events)
    before step N+1's nodes run; a consumer printing chunks sees them interleaved with the
    nodes' own prints in that order."""

    def scenario(E):
        log = []
        app = _abc(E, log, checkpointer=E.InMemorySaver() if mode == "checkpoints" else None)
        cfg = {"configurable": {"thread_id": "t"}}
        m = list(mode) if isinstance(mode, tuple) else mode
        for chunk in app.stream({"k0": 0}, cfg, stream_mode=m):
            c = chunk[1] if isinstance(chunk, tuple) else chunk
            c = c.get("payload", c) if mode == "debug" else c
            c = c.get("values", c) if mode == "checkpoints" else c
            log.append(("got", chunk[0] if isinstance(chunk, tuple) else mode,
                        c.get("name", c.get("k0")) if isinstance(c, dict) else None))
        return log

    differential(scenario)


def test_breaking_after_the_input_values_chunk_runs_no_node(differential):
    def scenario(E):
        log = []
        app = _abc(E, log)
        gen = app.stream({"k0": 0}, stream_mode="values")
        first = next(gen)
        gen.close()
        return first, log

    differential(scenario, expect=({"k0": 0}, []))


def test_breaking_on_a_values_chunk_mid_run_runs_no_further_node(differential):
    """"Stream until the state says stop": LangGraph runs no node after the one whose
    result the consumer stopped on (side effects of the next node never happen)."""

    def scenario(E):
        log = []
        app = _abc(E, log, checkpointer=E.InMemorySaver())
        for chunk in app.stream({"k0": 0}, {"configurable": {"thread_id": "t"}}, stream_mode="values"):
            if chunk["k0"] == 1:
                break
        return log

    differential(scenario, expect=["run a"])


def test_consumer_changing_a_list_in_an_updates_chunk(differential):
    """The list a node returned, seen in its `updates` chunk: LangGraph has already folded
    it into the state (a new list), so the consumer's change reaches nothing."""

    def scenario(E):
        class S(TypedDict):
            tags: Annotated[list, operator.add]

        seen = []

        def a(s):
            return {"tags": ["a"]}

        def b(s):
            seen.append(list(s["tags"]))
            return {"tags": ["b"]}

        app = _chain(E, S, a, b)
        for chunk in app.stream({"tags": []}, stream_mode="updates"):
            for upd in chunk.values():
                upd["tags"].append("consumer")
        return seen, app.invoke({"tags": []})

    differential(scenario, expect=([["a"], ["a"]], {"tags": ["a", "b"]}))


@pytest.mark.parametrize("style", ["return_state", "return_list", "return_none"])
def test_beginner_style_append_to_messages_then_return(differential, style):
    """`state["messages"].append(reply); return state` — common in tutorials' comments
    and beginners' code; the reply has no id."""
    from langchain_core.messages import AIMessage

    def scenario(E):
        def chat(s):
            s["messages"].append(AIMessage(f"reply {len(s['messages'])}"))
            if style == "return_state":
                return s
            if style == "return_list":
                return {"messages": s["messages"]}
            return None

        def tool(s):
            return {"messages": [AIMessage("tool said", id="t1")]}

        out = _messages_after(E, chat, tool, chat)
        ids = [i for i, _ in out]  # ids the reducer gave: compared by count only
        return [c for _, c in out], len(set(ids)) == len(ids)

    differential(scenario)


def test_long_history_in_place_append_then_replace_by_id(differential):
    """Above the messages channel's list-reuse threshold (256 messages)."""
    from langchain_core.messages import AIMessage

    def scenario(E):
        def grow(s):
            return {"messages": [AIMessage(f"m{i}", id=f"m{i}") for i in range(300)]}

        def sneak(s):
            s["messages"].append(AIMessage("draft", id="d1"))
            return {"messages": [AIMessage("x", id="x1")]}

        def revise(s):
            return {"messages": [AIMessage("final", id="d1"), AIMessage("m5b", id="m5")]}

        msgs = _messages_after(E, grow, sneak, revise)
        return len(msgs), msgs[:2] + msgs[5:7] + msgs[-4:]

    differential(scenario)


# --- checkpoints and in-place changes ----------------------------------------------------


@SIZES
def test_history_is_not_rewritten_by_a_later_in_place_change(differential, n):
    def scenario(E):
        State = _wide(n, {"xs": list, "d": dict, "tags": Annotated[list, operator.add]})

        def a(s):
            return {"xs": ["a"], "d": {"a": 1}, "tags": ["a"]}

        def b(s):
            s["xs"].append("b")
            s["d"]["b"] = 2
            s["tags"].append("b")
            return {"k0": 1}

        def c(s):
            s["xs"].append("c")
            return None

        app = _chain(E, State, a, b, c, checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        inp = _zeros(n)
        chunks = list(app.stream({**inp, "xs": [], "d": {}, "tags": []}, cfg, stream_mode="values",
                                 durability="sync"))  # "async" races in LangGraph too
        hist = [(h.metadata["step"], _small(h.values, n)) for h in app.get_state_history(cfg)]
        return [_small(c, n) for c in chunks], hist, _small(app.get_state(cfg).values, n)

    differential(scenario)


@SIZES
def test_state_mutated_in_place_then_resumed_after_interrupt(differential, n):
    def scenario(E):
        State = _wide(n, {"xs": list})

        def a(s):
            s["xs"].append("a")  # in place, never returned
            return {"k0": 1}

        def b(s):
            answer = E.interrupt("ok?")
            return {"xs": s["xs"] + [answer]}

        app = _chain(E, State, a, b, checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        inp = _zeros(n)
        out = []
        for durability in ("sync", "exit"):
            cfg = {"configurable": {"thread_id": durability}}
            first = app.invoke({**inp, "xs": []}, cfg, durability=durability)
            second = app.invoke(E.Command(resume="yes"), cfg, durability=durability)
            out.append((_small(first, n), _small(second, n), _small(app.get_state(cfg).values, n)))
        return out

    differential(scenario)


# --- wide and tiny states through the other paths ----------------------------------------


# (a state of zero keys is left out: LangGraph then leaks its internal `branch:` channel
# into `values` and `updates` chunks, which lgnb does not copy)
@pytest.mark.parametrize("fields", [{"only": int}], ids=["one_key"])
def test_state_of_one_key(differential, fields):
    def scenario(E):
        State = TypedDict("T", fields)
        seen = []

        def a(s):
            seen.append(dict(s))
            return {"only": 1} if fields else None

        def b(s):
            seen.append(dict(s))
            return {}

        app = _chain(E, State, a, b)
        return (
            capture(lambda: app.invoke({})),
            capture(lambda: app.invoke({"only": 0})),
            collect(lambda: app.stream({"only": 5}, stream_mode=["values", "updates", "tasks"])),
            seen,
        )

    differential(scenario)


@SIZES
def test_reducer_raising_mid_run(differential, n):
    def scenario(E):
        def picky(cur, new):
            if new == ["bad"]:
                raise ValueError(f"refused {new!r} after {cur!r}")
            return cur + new

        State = _wide(n, {"xs": Annotated[list, picky]})

        def a(s):
            return {"xs": ["ok"], "k0": 1}

        def b(s):
            return {"xs": ["bad"], "k1": 1}

        def c(s):
            return {"k2": 1}

        app = _chain(E, State, a, b, c)
        inp = _zeros(n)
        chunks = collect(lambda: app.stream({**inp, "xs": []}, stream_mode=["values", "updates"]))
        return [(c[0], _small(c[1], n)) if len(c) == 2 else c for c in chunks], capture(
            lambda: app.invoke({**inp, "xs": ["bad"]})
        )

    differential(scenario)


@SIZES
def test_parallel_writers_to_a_last_value_key_in_a_wide_state(differential, n):
    def scenario(E):
        State = _wide(n, {"x": str})
        g = E.StateGraph(State)
        g.add_node("p", lambda s: {"x": "p", "k0": 1})
        g.add_node("q", lambda s: {"x": "q"})
        g.add_edge(E.START, "p")
        g.add_edge(E.START, "q")
        app = g.compile()
        inp = _zeros(n)
        return capture(lambda: app.invoke({**inp, "x": ""}))

    differential(scenario)


@SIZES
def test_wide_state_invoke_stream_ainvoke_astream_agree(differential, n):
    async def scenario(E):
        State = _wide(n, {"log": Annotated[list, operator.add]})

        def a(s):
            s["k0"] = 100
            s.pop("k1")
            return {"log": ["a"], "k2": s["k2"] + 1}

        def b(s):
            return {"log": [("b", s["k0"], s.get("k1"), s["k2"], len(s))]}

        def route(s):
            return ["c", "d"] if s["k2"] < 3 else E.END

        def c(s):
            return {"log": [("c", s["k2"])], "k2": s["k2"] + 1}

        def d(s):
            return {"log": [("d", s["k2"])]}

        g = E.StateGraph(State)
        for name, fn in (("a", a), ("b", b), ("c", c), ("d", d)):
            g.add_node(name, fn)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_conditional_edges("b", route)
        g.add_edge("c", "b")
        app = g.compile()
        inp = _zeros(n)
        r1 = _small(app.invoke(dict(inp, log=[])), n)
        r2 = [_small(c, n) for c in app.stream(dict(inp, log=[]), stream_mode="values")][-1]
        r3 = _small(await app.ainvoke(dict(inp, log=[])), n)
        r4 = [_small(c, n) for c in await acollect(lambda: app.astream(dict(inp, log=[]), stream_mode="values"))][-1]
        return r1, r2, r3, r4

    differential(scenario)


@SIZES
def test_wide_state_subgraph_stream_v2_and_subgraphs(differential, n):
    def scenario(E):
        State = _wide(n, {"log": Annotated[list, operator.add]})

        def inner_a(s):
            s["k0"] = "mutated-in-subgraph"
            return {"log": ["inner_a"], "k1": s["k1"] + 1}

        def inner_b(s):
            return {"log": [("inner_b", s["k0"], s["k1"])]}

        sub = _chain(E, State, inner_a, inner_b)

        def outer(s):
            return {"log": [("outer", s["k0"], s["k1"])]}

        g = E.StateGraph(State)
        g.add_node("sub", sub)
        g.add_node("outer", outer)
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "outer")
        app = g.compile()
        inp = _zeros(n)
        out = []
        for kw in ({"subgraphs": True}, {"subgraphs": True, "version": "v2"}):
            chunks = collect(lambda: app.stream(dict(inp, log=[]), stream_mode=["values", "updates"], **kw))
            norm = []
            for c in chunks:
                if isinstance(c, dict):
                    c = {k: (_small(v, n) if k == "data" else v) for k, v in c.items()}
                    if isinstance(c.get("data"), dict):
                        c["data"] = {k: _small(v, n) for k, v in c["data"].items()} if c.get("type") == "updates" else c["data"]
                elif isinstance(c, tuple) and len(c) == 3:
                    data = c[2]
                    data = {k: _small(v, n) for k, v in data.items()} if c[1] == "updates" else _small(data, n)
                    c = (c[0], c[1], data)
                norm.append(c)
            out.append(norm)
        return out

    differential(scenario)


@SIZES
def test_wide_state_deferred_node_and_command(differential, n):
    def scenario(E):
        State = _wide(n, {"log": Annotated[list, operator.add]})

        def start(s):
            return E.Command(update={"k0": 7, "log": ["start"]}, goto=["x", "y"])

        def x(s):
            s["k0"] = -1
            return {"log": [("x", s["k0"])]}

        def y(s):
            return E.Command(update={"log": [("y", s["k0"])], "k1": 9}, goto="z")

        def z(s):
            return {"log": [("z", s["k0"], s["k1"])]}

        def final(s):
            return {"log": [("final", s["k0"], s["k1"], len(s["log"]))]}

        g = E.StateGraph(State)
        g.add_node("start", start)
        g.add_node("x", x)
        g.add_node("y", y)
        g.add_node("z", z)
        g.add_node("final", final, defer=True)
        g.add_edge(E.START, "start")
        g.add_edge("x", "final")
        g.add_edge("z", "final")
        app = g.compile()
        inp = _zeros(n)
        # x and y run in one step, on LangGraph in a thread pool: their updates arrive in
        # completion order, so the chunks compare as a set (the log's order is checked
        # through invoke's result, where writes apply in task order)
        return _small(app.invoke(dict(inp, log=[])), n), sorted(
            repr(list(c)) for c in app.stream(dict(inp, log=[]), stream_mode="updates")
        )

    differential(scenario)


@SIZES
def test_wide_state_recursion_limit(differential, n):
    def scenario(E):
        State = _wide(n)

        def loop(s):
            s["k1"] = "junk"
            return {"k0": s["k0"] + 1}

        g = E.StateGraph(State)
        g.add_node("loop", loop)
        g.add_edge(E.START, "loop")
        g.add_conditional_edges("loop", lambda s: "loop" if s["k0"] < 100 else E.END)
        app = g.compile()
        inp = _zeros(n)
        chunks = collect(lambda: app.stream(inp, {"recursion_limit": 7}, stream_mode="updates"))
        return chunks, capture(lambda: app.invoke(inp, {"recursion_limit": 3}))

    differential(scenario)


# --- dataclass / pydantic states and private inputs with in-place changes ----------------


def test_dataclass_and_pydantic_default_factory_lists_mutated_in_place(differential):
    import dataclasses

    import pydantic

    def scenario(E):
        @dataclasses.dataclass
        class D:
            n: int = 0
            xs: list = dataclasses.field(default_factory=list)
            tags: Annotated[list, operator.add] = dataclasses.field(default_factory=list)

        class P(pydantic.BaseModel):
            n: int = 0
            xs: list = pydantic.Field(default_factory=list)
            tags: Annotated[list, operator.add] = pydantic.Field(default_factory=list)

            @pydantic.field_validator("n")
            @classmethod
            def _cap(cls, v):
                return min(v, 10)

        out = []
        for State in (D, P):
            seen = []

            def a(s):
                s.xs.append("a")
                s.tags.append("a")
                return {"n": 50}

            def b(s):
                seen.append((s.n, list(s.xs), list(s.tags)))
                s.xs.append("b")
                return {"tags": ["b"]}

            def c(s):
                seen.append((s.n, list(s.xs), list(s.tags)))
                return None

            app = _chain(E, State, a, b, c)
            out.append((app.invoke({}), app.invoke({"xs": ["i"], "n": 1}), seen,
                        collect(lambda: app.stream({}, stream_mode="values"))))
        return out

    differential(scenario)


@SIZES
def test_private_channel_through_node_input_schemas_mutated_in_place(differential, n):
    def scenario(E):
        State = _wide(n)
        Private = TypedDict("Private", {"scratch": list, "k0": int})
        ReadsPrivate = TypedDict("ReadsPrivate", {"scratch": list})

        def a(s) -> Private:
            return {"scratch": ["a"], "k0": 1}

        def b(s: ReadsPrivate):
            s["scratch"].append("b-in-place")
            return {"scratch": s["scratch"] + ["b"]}

        def c(s: ReadsPrivate):
            return {"k1": len(s["scratch"]), "k2": sorted(s)[0] == "scratch"}

        g = E.StateGraph(State)
        g.add_node("a", a)
        g.add_node("b", b, input_schema=ReadsPrivate)
        g.add_node("c", c, input_schema=ReadsPrivate)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        app = g.compile()
        inp = _zeros(n)
        return _small(app.invoke(inp), n), [
            {k: _small(v, n) for k, v in c.items()} for c in app.stream(inp, stream_mode="updates")
        ]

    differential(scenario)


@SIZES
def test_conditional_edge_after_in_place_nested_change(differential, n):
    def scenario(E):
        State = _wide(n, {"xs": list})
        seen = []

        def a(s):
            s["xs"].append("a")
            s["k0"] = 99  # local only
            return {"k1": 1}

        def route(s):
            seen.append((list(s["xs"]), s["k0"], s["k1"]))
            s["xs"].append("route")
            return "b" if len(s["xs"]) < 4 else E.END

        def b(s):
            seen.append((list(s["xs"]), s["k0"], s["k1"]))
            return None

        g = E.StateGraph(State)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route)
        g.add_edge("b", "a")
        app = g.compile()
        inp = _zeros(n)
        return _small(app.invoke(dict(inp, xs=[])), n), seen

    differential(scenario)

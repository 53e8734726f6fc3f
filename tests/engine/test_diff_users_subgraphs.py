"""Subgraphs as users write them (LangGraph's "use subgraphs" how-to, multi-agent handoffs,
human-in-the-loop inside nested graphs), run on both engines: three levels of nesting with
interrupts, get_state(subgraphs=True) / update_state on a nested subgraph's config, every
stream mode with subgraphs=True, Command.PARENT handoffs with reducers and with a
checkpointer=True subgraph, subgraph persistence (checkpointer=True / False), Send into
subgraphs, errors, recursion limits, input/output schemas and async twins.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import operator
from typing import Annotated

from _diff import acollect, capture, collect, snapshot_summary
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from typing_extensions import NotRequired, TypedDict


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


def _snap(s):
    return snapshot_summary(s)


def _logger(name):
    return lambda s: {"log": [name]}


def _one_node_app(E, schema, name, node, **compile_kw):
    """START -> name: the one-node graph that wraps a node or subgraph, compiled with compile_kw."""
    g = E.StateGraph(schema)
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile(**compile_kw)


def _three_levels(E, calls, *, ask=True, checkpointer=True):
    """top -> mid (subgraph node) -> leaf (subgraph node) with an interrupt in the leaf."""

    def mk(n):
        def f(s):
            calls.append(n)
            return {"log": [n]}
        return f

    def ask_node(s):
        calls.append("leaf_ask")
        answer = E.interrupt({"q": "ok?", "seen": list(s["log"])}) if ask else "no-ask"
        return {"log": [f"answer:{answer}"]}

    leaf = E.StateGraph(Log)
    leaf.add_node("leaf_before", mk("leaf_before"))
    leaf.add_node("leaf_ask", ask_node)
    leaf.add_node("leaf_after", mk("leaf_after"))
    leaf.add_edge(E.START, "leaf_before")
    leaf.add_edge("leaf_before", "leaf_ask")
    leaf.add_edge("leaf_ask", "leaf_after")

    mid = E.StateGraph(Log)
    mid.add_node("mid_before", mk("mid_before"))
    mid.add_node("leaf", leaf.compile())
    mid.add_node("mid_after", mk("mid_after"))
    mid.add_edge(E.START, "mid_before")
    mid.add_edge("mid_before", "leaf")
    mid.add_edge("leaf", "mid_after")

    top = E.StateGraph(Log)
    top.add_node("top_before", mk("top_before"))
    top.add_node("mid", mid.compile())
    top.add_node("top_after", mk("top_after"))
    top.add_edge(E.START, "top_before")
    top.add_edge("top_before", "mid")
    top.add_edge("mid", "top_after")
    return top.compile(checkpointer=E.InMemorySaver() if checkpointer else None)


# --- three levels of nesting, interrupts, state inspection -----------------------------------


def test_interrupt_two_levels_deep_pauses_the_top_graph_and_resumes_in_the_leaf(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        first = app.invoke({"log": []}, cfg)
        paused = app.get_state(cfg)
        done = app.invoke(E.Command(resume="yes"), cfg)
        return first, _snap(paused), done, calls, _snap(app.get_state(cfg))

    ref = differential(scenario)
    assert ref[3].count("leaf_ask") == 2 and ref[3].count("mid_before") == 1


def test_get_state_subgraphs_true_nests_task_states_two_levels(differential):
    def scenario(E):
        app, cfg = _three_levels(E, []), _cfg()
        app.invoke({"log": []}, cfg)
        nested = app.get_state(cfg, subgraphs=True)
        mid_state = nested.tasks[0].state
        leaf_state = mid_state.tasks[0].state
        return (_snap(nested), mid_state.config, leaf_state.config,
                leaf_state.parent_config, leaf_state.metadata)

    ref = differential(scenario)
    assert ref[0]["tasks"][0][4]["tasks"][0][4]["next"] == ("leaf_ask",)


def test_get_state_of_the_leaf_through_the_task_config_chain(differential):
    def scenario(E):
        app, cfg = _three_levels(E, []), _cfg()
        app.invoke({"log": []}, cfg)
        mid_cfg = app.get_state(cfg).tasks[0].state
        mid = app.get_state(mid_cfg)
        leaf_cfg = mid.tasks[0].state
        leaf = app.get_state(leaf_cfg)
        leaf_sub = app.get_state(leaf_cfg, subgraphs=True)
        return mid_cfg, _snap(mid), leaf_cfg, _snap(leaf), _snap(leaf_sub)

    differential(scenario)


def test_update_state_on_the_leaf_config_then_resume(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        app.invoke({"log": []}, cfg)
        leaf_cfg = app.get_state(cfg, subgraphs=True).tasks[0].state.tasks[0].state.config
        upd = capture(lambda: app.update_state(leaf_cfg, {"log": ["edited-in-leaf"]}))
        after_edit = app.get_state(cfg, subgraphs=True)
        done = app.invoke(E.Command(resume="after-edit"), cfg)
        return upd, _snap(after_edit), done, calls

    differential(scenario)


def test_update_state_on_the_leaf_with_as_node_skips_the_interrupt(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        app.invoke({"log": []}, cfg)
        leaf_cfg = app.get_state(cfg, subgraphs=True).tasks[0].state.tasks[0].state.config
        upd = capture(lambda: app.update_state(leaf_cfg, {"log": ["manual"]}, as_node="leaf_ask"))
        mid_view = app.get_state(cfg, subgraphs=True)
        done = app.invoke(None, cfg)
        return upd, _snap(mid_view), done, calls

    differential(scenario)


def test_three_levels_stream_updates_subgraphs_true_namespaces_then_resume(differential):
    def scenario(E):
        app, cfg = _three_levels(E, []), _cfg()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="updates", subgraphs=True))
        second = collect(lambda: app.stream(E.Command(resume="go"), cfg,
                                            stream_mode="updates", subgraphs=True))
        return first, second

    ref = differential(scenario)
    # the interrupt shows at the leaf's two-part namespace
    assert any(len(ns) == 2 for ns, _ in ref[0])


def test_three_levels_stream_values_subgraphs_true(differential):
    def scenario(E):
        app = _three_levels(E, [], ask=False, checkpointer=False)
        return collect(lambda: app.stream({"log": ["in"]}, stream_mode="values", subgraphs=True))

    differential(scenario)


def test_three_levels_stream_debug_subgraphs_true_with_checkpointer(differential):
    def scenario(E):
        app, cfg = _three_levels(E, [], ask=False), _cfg()
        return collect(lambda: app.stream({"log": []}, cfg, stream_mode="debug", subgraphs=True))

    differential(scenario)


def test_three_levels_stream_tasks_and_checkpoints_subgraphs_true(differential):
    def scenario(E):
        app, cfg = _three_levels(E, []), _cfg()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode=["tasks", "checkpoints"],
                                           subgraphs=True))
        second = collect(lambda: app.stream(E.Command(resume=1), cfg,
                                            stream_mode=["tasks", "checkpoints"], subgraphs=True))
        return first, second

    differential(scenario)


def test_three_levels_get_state_history_of_top_and_of_leaf(differential):
    def scenario(E):
        app, cfg = _three_levels(E, []), _cfg()
        app.invoke({"log": []}, cfg)
        leaf_cfg = app.get_state(cfg, subgraphs=True).tasks[0].state.tasks[0].state.config
        leaf_hist = [(s.values, s.next, s.metadata, s.config["configurable"].get("checkpoint_ns"))
                     for s in app.get_state_history(leaf_cfg)]
        app.invoke(E.Command(resume="y"), cfg)
        top_hist = [(s.values, s.next, s.metadata) for s in app.get_state_history(cfg)]
        return leaf_hist, top_hist

    differential(scenario)


def test_three_levels_async_astream_subgraphs_and_resume(differential):
    async def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        first = await acollect(lambda: app.astream({"log": []}, cfg, stream_mode=["updates", "values"],
                                                   subgraphs=True))
        st = await app.aget_state(cfg, subgraphs=True)
        second = await acollect(lambda: app.astream(E.Command(resume="a"), cfg,
                                                    stream_mode=["updates", "values"], subgraphs=True))
        return first, _snap(st), second, calls

    differential(scenario)


# --- stream modes from inside subgraphs ------------------------------------------------------


def test_custom_stream_writer_in_a_nested_subgraph_and_in_a_called_subgraph(differential):
    def scenario(E):
        def leaf_node(s):
            w = E.get_stream_writer()
            w({"progress": "leaf 50%"})
            w("leaf done")
            return {"log": ["leaf"]}

        leaf = E.StateGraph(Log)
        leaf.add_node("work", leaf_node)
        leaf.add_edge(E.START, "work")
        leaf_app = leaf.compile()

        def caller(s):
            E.get_stream_writer()({"caller": "before"})
            out = leaf_app.invoke({"log": []})
            return {"log": out["log"]}

        mid = E.StateGraph(Log)
        mid.add_node("leaf", leaf_app)
        mid.add_node("caller", caller)
        mid.add_edge(E.START, "leaf")
        mid.add_edge("leaf", "caller")

        app = _one_node_app(E, Log, "mid", mid.compile())
        return (collect(lambda: app.stream({"log": []}, stream_mode="custom", subgraphs=True)),
                collect(lambda: app.stream({"log": []}, stream_mode=["custom", "updates"],
                                           subgraphs=True)),
                collect(lambda: app.stream({"log": []}, stream_mode="custom")))

    differential(scenario)


def test_messages_mode_metadata_from_a_model_two_levels_deep(differential):
    def scenario(E):
        def build():
            model = GenericFakeChatModel(messages=iter([AIMessage(content="deep answer here")]))

            def chat(s):
                return {"messages": [model.invoke(s["messages"])]}

            leaf = E.StateGraph(E.MessagesState)
            leaf.add_node("chat", chat)
            leaf.add_edge(E.START, "chat")
            mid = E.StateGraph(E.MessagesState)
            mid.add_node("agent", leaf.compile())
            mid.add_edge(E.START, "agent")
            top = E.StateGraph(E.MessagesState)
            top.add_node("team", mid.compile())
            top.add_edge(E.START, "team")
            return top.compile(checkpointer=E.InMemorySaver())

        keys = ("langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path",
                "langgraph_checkpoint_ns", "checkpoint_ns", "thread_id", "ls_provider")
        inp = {"messages": [HumanMessage("hi", id="h")]}
        out = []
        for ns, (msg, md) in build().stream(inp, _cfg("m"), stream_mode="messages", subgraphs=True):
            out.append((ns, type(msg).__name__, msg.content, {k: md.get(k) for k in keys}))
        plain = [(m.content, md.get("langgraph_node"), md.get("checkpoint_ns"))
                 for m, md in build().stream(inp, _cfg("p"), stream_mode="messages")]
        return out, plain

    differential(scenario)


def test_messages_mode_from_a_subgraph_invoked_inside_a_node_function(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="inner words")]))

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        inner = E.StateGraph(E.MessagesState)
        inner.add_node("chat", chat)
        inner.add_edge(E.START, "chat")
        inner_app = inner.compile()

        class P(TypedDict):
            question: str
            answer: str

        def ask(s):
            out = inner_app.invoke({"messages": [HumanMessage(s["question"], id="q")]})
            return {"answer": out["messages"][-1].content}

        app = _one_node_app(E, P, "ask", ask)
        out = []
        for ns, mode, payload in app.stream({"question": "why"}, stream_mode=["messages", "updates"],
                                            subgraphs=True):
            if mode == "messages":
                msg, md = payload
                out.append((ns, mode, msg.content, md.get("langgraph_node"),
                            md.get("langgraph_checkpoint_ns"), md.get("langgraph_path")))
            else:
                out.append((ns, mode, payload))
        return out

    differential(scenario)


def test_combined_stream_modes_list_with_subgraphs_over_a_send_fan_out(differential):
    # async nodes: branches complete in a deterministic order in LangGraph itself
    async def scenario(E):
        class W(TypedDict):
            item: str
            log: Annotated[list, operator.add]

        async def work(s):
            E.get_stream_writer()({"working": s["item"]})
            return {"log": [f"done:{s['item']}"]}

        sg = E.StateGraph(W)
        sg.add_node("work", work)
        sg.add_edge(E.START, "work")

        class P(TypedDict):
            items: list
            log: Annotated[list, operator.add]

        g = E.StateGraph(P)
        g.add_node("worker", sg.compile())
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i, "log": []})
                                                   for i in s["items"]])
        app = g.compile()
        chunks = await acollect(lambda: app.astream({"items": ["x", "y"], "log": []},
                                                    stream_mode=["updates", "custom", "values"],
                                                    subgraphs=True))
        # each branch's events in order; how the two branches interleave is the event
        # loop's (it moved on a loaded machine in LangGraph's order as in lgnb's)
        item_of = {c[0]: c[2]["item"] for c in chunks if c[0] and c[1] == "values"}
        branches = {}
        for ns, mode, data in chunks:
            branches.setdefault(item_of.get(ns, "parent"), []).append((mode, data))
        return sorted(branches.items())

    differential(scenario)


# --- Command.PARENT handoffs -------------------------------------------------------------------


def test_handoff_with_command_parent_appends_through_the_parent_reducer(differential):
    def scenario(E):
        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            active: str

        def make_agent(name, peer):
            def act(s):
                n = len([m for m in s["messages"] if m.type == "ai"])
                if n >= 3:
                    return {"messages": [AIMessage(f"{name}: final", id=f"{name}-final")]}
                return E.Command(graph=E.Command.PARENT, goto=peer,
                                 update={"messages": [AIMessage(f"{name} -> {peer}", id=f"{name}-{n}")],
                                         "active": peer})
            return _one_node_app(E, S, "act", act)

        g = E.StateGraph(S)
        g.add_node("alice", make_agent("alice", "bob"), destinations=("bob",))
        g.add_node("bob", make_agent("bob", "alice"), destinations=("alice",))
        g.add_edge(E.START, "alice")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        chunks = collect(lambda: app.stream({"messages": [HumanMessage("go", id="h")], "active": ""},
                                            cfg, stream_mode="updates", subgraphs=True))
        st = app.get_state(cfg)
        return chunks, [(m.type, m.content, m.id) for m in st.values["messages"]], st.values["active"]

    differential(scenario)


def test_command_parent_from_a_subgraph_with_its_own_checkpointer(differential):
    def scenario(E):
        class S(TypedDict):
            log: Annotated[list, operator.add]
            turns: int

        def inner(s):
            turns = s.get("turns", 0)
            if turns % 2 == 0:
                return E.Command(graph=E.Command.PARENT, goto="other",
                                 update={"log": [f"handoff@{turns}"], "turns": turns + 1})
            return {"log": [f"stay@{turns}"], "turns": turns + 1}

        sg = E.StateGraph(S)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")

        g = E.StateGraph(S)
        g.add_node("agent", sg.compile(checkpointer=True), destinations=("other",))
        g.add_node("other", lambda s: {"log": ["other"]})
        g.add_edge(E.START, "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        runs = [app.invoke({"log": [], "turns": t}, cfg) for t in (0, 1, 2)]
        return runs, _snap(app.get_state(cfg, subgraphs=True))

    differential(scenario)


def test_command_parent_from_a_subgraph_invoked_inside_a_node_function(differential):
    def scenario(E):
        class S(TypedDict):
            log: Annotated[list, operator.add]

        def inner(s):
            return E.Command(graph=E.Command.PARENT, goto="finish", update={"log": ["from-inner"]})

        sub = _one_node_app(E, S, "inner", inner)

        def router(s):
            out = sub.invoke({"log": []})
            return {"log": ["router-returned", *out["log"]]}

        g = E.StateGraph(S)
        g.add_node("router", router)
        g.add_node("finish", _logger("finish"))
        g.add_node("normal", _logger("normal"))
        g.add_edge(E.START, "router")
        g.add_edge("router", "normal")
        app = g.compile()
        streamed = collect(lambda: app.stream({"log": []}, stream_mode="updates", subgraphs=True))
        # `finish` and `normal` run in one step: LangGraph streams their updates in the
        # order its pool threads end (either, on a loaded machine), so as a set
        return capture(lambda: app.invoke({"log": []})), streamed[:1] + sorted(streamed[1:], key=repr)

    differential(scenario)


def test_command_parent_with_an_update_to_a_key_the_parent_lacks(differential):
    def scenario(E):
        class Sub(TypedDict):
            log: Annotated[list, operator.add]
            secret: str

        def inner(s):
            return E.Command(graph=E.Command.PARENT, goto="done",
                             update={"log": ["x"], "secret": "leaked"})

        sg = E.StateGraph(Sub)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")

        g = E.StateGraph(Log)
        g.add_node("sub", sg.compile(), destinations=("done",))
        g.add_node("done", _logger("done"))
        g.add_edge(E.START, "sub")
        app = g.compile()
        return capture(lambda: app.invoke({"log": []}))

    differential(scenario)


def test_command_parent_and_a_sibling_subgraph_node_in_the_same_step(differential):
    def scenario(E):
        class S(TypedDict):
            log: Annotated[list, operator.add]

        def jump(s):
            return E.Command(graph=E.Command.PARENT, goto="target", update={"log": ["jump"]})

        a = E.StateGraph(S)
        a.add_node("jump", jump)
        a.add_edge(E.START, "jump")

        b = E.StateGraph(S)
        b.add_node("b1", _logger("b1"))
        b.add_node("b2", _logger("b2"))
        b.add_edge(E.START, "b1")
        b.add_edge("b1", "b2")

        g = E.StateGraph(S)
        g.add_node("a", a.compile(), destinations=("target",))
        g.add_node("b", b.compile())
        g.add_node("target", _logger("target"))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        out = app.invoke({"log": []}, cfg)
        return sorted(out["log"]), [(s.next, s.metadata.get("step")) for s in app.get_state_history(cfg)]

    differential(scenario)


# --- subgraph persistence: checkpointer=True / False -------------------------------------------


def _memory_sub(E, sub_checkpointer):
    class S(TypedDict):
        question: str
        seen: Annotated[list, operator.add]

    def remember(s):
        return {"seen": [s["question"]]}

    sub = _one_node_app(E, S, "remember", remember, checkpointer=sub_checkpointer)

    class P(TypedDict):
        question: str
        answers: Annotated[list, operator.add]

    def call(s):
        # a subgraph called inside a node: same sub every time
        out = sub.invoke({"question": s["question"]})
        return {"answers": [list(out["seen"])]}

    return S, P, sub, call


def test_subgraph_checkpointer_true_remembers_across_parent_invocations(differential):
    def scenario(E):
        _, P, sub, call = _memory_sub(E, True)
        app = _one_node_app(E, P, "call", call, checkpointer=E.InMemorySaver())
        outs = [app.invoke({"question": q}, _cfg("one")) for q in ("a", "b")]
        other = app.invoke({"question": "z"}, _cfg("two"))
        return outs, other, _snap(app.get_state(_cfg("one"), subgraphs=True))

    differential(scenario)


def test_subgraph_checkpointer_true_as_a_node_remembers_its_private_keys(differential):
    def scenario(E):
        class Sub(TypedDict):
            log: Annotated[list, operator.add]
            count: int

        def tick(s):
            return {"count": s.get("count", 0) + 1, "log": [f"tick{s.get('count', 0) + 1}"]}

        sg = E.StateGraph(Sub)
        sg.add_node("tick", tick)
        sg.add_edge(E.START, "tick")

        def build(cp):
            return _one_node_app(E, Log, "counter", sg.compile(checkpointer=cp), checkpointer=E.InMemorySaver())

        out = {}
        for cp in (True, None, False):
            app = build(cp)
            cfg = _cfg()
            out[str(cp)] = ([app.invoke({"log": []}, cfg) for _ in range(3)],
                            _snap(app.get_state(cfg, subgraphs=True)))
        return out

    differential(scenario)


def test_subgraph_checkpointer_false_interrupt_inside_it(differential):
    def scenario(E):
        class S(TypedDict):
            log: Annotated[list, operator.add]

        def ask(s):
            return {"log": [f"got:{E.interrupt('need input')}"]}

        sg = E.StateGraph(S)
        sg.add_node("ask", ask)
        sg.add_edge(E.START, "ask")
        app = _one_node_app(E, S, "sub", sg.compile(checkpointer=False), checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = capture(lambda: app.invoke({"log": []}, cfg))
        second = capture(lambda: app.invoke(E.Command(resume="v"), cfg))
        return first, second

    differential(scenario)


def test_subgraph_checkpointer_true_interrupt_then_second_run_keeps_inner_state(differential):
    def scenario(E):
        class S(TypedDict):
            log: Annotated[list, operator.add]

        def ask(s):
            return {"log": [f"got:{E.interrupt({'history': list(s['log'])})}"]}

        sg = E.StateGraph(S)
        sg.add_node("ask", ask)
        sg.add_edge(E.START, "ask")
        app = _one_node_app(E, S, "sub", sg.compile(checkpointer=True), checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = app.invoke({"log": ["one"]}, cfg)
        r2 = app.invoke(E.Command(resume="A"), cfg)
        r3 = app.invoke({"log": ["two"]}, cfg)
        st = app.get_state(cfg, subgraphs=True)
        r4 = app.invoke(E.Command(resume="B"), cfg)
        return r1, r2, r3, _snap(st), r4

    differential(scenario)


# --- Send into subgraphs, parallel subgraphs ----------------------------------------------------


def _review_sub(E, calls):
    class Doc(TypedDict):
        doc: str
        notes: Annotated[list, operator.add]

    def draft(s):
        calls.append(("draft", s["doc"]))
        return {"notes": [f"drafted {s['doc']}"]}

    def review(s):
        calls.append(("review", s["doc"]))
        verdict = E.interrupt({"doc": s["doc"], "notes": list(s["notes"])})
        return {"notes": [f"{s['doc']}:{verdict}"]}

    sg = E.StateGraph(Doc)
    sg.add_node("draft", draft)
    sg.add_node("review", review)
    sg.add_edge(E.START, "draft")
    sg.add_edge("draft", "review")
    return sg.compile()


def test_send_into_an_interrupting_subgraph_each_branch_pauses_with_its_own_state(differential):
    def scenario(E):
        calls = []

        class P(TypedDict):
            docs: list
            notes: Annotated[list, operator.add]

        g = E.StateGraph(P)
        g.add_node("review_doc", _review_sub(E, calls))
        g.add_conditional_edges(E.START, lambda s: [E.Send("review_doc", {"doc": d, "notes": []})
                                                   for d in s["docs"]])
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = app.invoke({"docs": ["d1", "d2"], "notes": []}, cfg)
        st = app.get_state(cfg, subgraphs=True)
        per_task = sorted((repr(t.path), [i.value for i in t.interrupts], t.state.values, t.state.next)
                          for t in st.tasks)
        resume = {i.id: f"ok-{i.value['doc']}" for i in st.interrupts}
        done = app.invoke(E.Command(resume=resume), cfg)
        return (sorted(i.value["doc"] for i in first["__interrupt__"]), first["notes"], per_task,
                sorted(done["notes"]), sorted(calls))

    ref = differential(scenario)
    assert ref[4].count(("review", "d1")) == 2


def test_send_into_an_interrupting_subgraph_resume_one_branch_at_a_time(differential):
    def scenario(E):
        calls = []

        class P(TypedDict):
            docs: list
            notes: Annotated[list, operator.add]

        g = E.StateGraph(P)
        g.add_node("review_doc", _review_sub(E, calls))
        g.add_node("collect", lambda s: {"notes": [f"collected {len(s['notes'])}"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("review_doc", {"doc": d, "notes": []})
                                                   for d in s["docs"]])
        g.add_edge("review_doc", "collect")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        app.invoke({"docs": ["d1", "d2"], "notes": []}, cfg)
        pending = {i.value["doc"]: i.id for i in app.get_state(cfg).interrupts}
        mid = app.invoke(E.Command(resume={pending["d2"]: "yes"}), cfg)
        st = app.get_state(cfg, subgraphs=True)
        left = sorted((t.name, [i.value["doc"] for i in t.interrupts], t.state.next if t.state else None)
                      for t in st.tasks)
        done = app.invoke(E.Command(resume={pending["d1"]: "no"}), cfg)
        return ([i.value["doc"] for i in mid["__interrupt__"]], sorted(mid["notes"]), left,
                sorted(done["notes"][:-1]), done["notes"][-1], sorted(calls))

    differential(scenario)


def test_two_different_subgraphs_in_parallel_branches_both_interrupt(differential):
    def scenario(E):
        def branch(tag):
            def ask(s):
                return {"log": [f"{tag}:{E.interrupt(tag)}"]}
            sg = E.StateGraph(Log)
            sg.add_node(f"{tag}_prep", _logger(f"{tag}_prep"))
            sg.add_node(f"{tag}_ask", ask)
            sg.add_edge(E.START, f"{tag}_prep")
            sg.add_edge(f"{tag}_prep", f"{tag}_ask")
            return sg.compile()

        g = E.StateGraph(Log)
        g.add_node("left", branch("L"))
        g.add_node("right", branch("R"))
        g.add_node("join", _logger("join"))
        g.add_edge(E.START, "left")
        g.add_edge(E.START, "right")
        g.add_edge(["left", "right"], "join")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = app.invoke({"log": []}, cfg)
        st = app.get_state(cfg, subgraphs=True)
        tasks = sorted((t.name, [i.value for i in t.interrupts], sorted(t.state.values["log"]),
                        t.state.next) for t in st.tasks)
        ids = {i.value: i.id for i in st.interrupts}
        done = app.invoke(E.Command(resume={ids["L"]: 1, ids["R"]: 2}), cfg)
        return (sorted(i.value for i in first["__interrupt__"]), tasks, sorted(done["log"][:-1]),
                done["log"][-1])

    differential(scenario)


def test_same_compiled_subgraph_added_twice_with_checkpointer_true_keeps_separate_memory(differential):
    def scenario(E):
        class S(TypedDict):
            log: Annotated[list, operator.add]
            runs: NotRequired[int]

        def count(s):
            n = s.get("runs", 0) + 1
            return {"runs": n, "log": [f"run{n}"]}

        sub = _one_node_app(E, S, "count", count, checkpointer=True)

        g = E.StateGraph(Log)
        g.add_node("first", sub)
        g.add_node("second", sub)
        g.add_edge(E.START, "first")
        g.add_edge("first", "second")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        outs = [app.invoke({"log": []}, cfg)["log"] for _ in range(2)]
        return outs

    differential(scenario)


# --- errors -----------------------------------------------------------------------------------


def test_error_in_a_subgraph_then_rerun_resumes_inside_the_subgraph(differential):
    def scenario(E):
        calls = []
        state = {"fail": True}

        def mk(n):
            def f(s):
                calls.append(n)
                return {"log": [n]}
            return f

        def flaky(s):
            calls.append("flaky")
            if state["fail"]:
                raise RuntimeError("inner boom")
            return {"log": ["flaky"]}

        sg = E.StateGraph(Log)
        sg.add_node("s1", mk("s1"))
        sg.add_node("flaky", flaky)
        sg.add_edge(E.START, "s1")
        sg.add_edge("s1", "flaky")

        g = E.StateGraph(Log)
        g.add_node("sub", sg.compile())
        g.add_node("sibling", mk("sibling"))
        g.add_node("after", mk("after"))
        g.add_edge(E.START, "sub")
        g.add_edge(E.START, "sibling")
        g.add_edge(["sub", "sibling"], "after")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        err = capture(lambda: app.invoke({"log": []}, cfg))
        st = app.get_state(cfg, subgraphs=True)
        failed = (st.next, sorted((t.name, repr(t.error), t.result) for t in st.tasks))
        sub_state = _snap([t for t in st.tasks if t.name == "sub"][0].state)
        state["fail"] = False
        done = app.invoke(None, cfg)
        return err, failed, sub_state, sorted(done["log"]), sorted(calls)

    ref = differential(scenario)
    assert ref[4].count("sibling") == 1


def test_error_inside_a_nested_subgraph_reaches_the_caller_with_its_class(differential):
    def scenario(E):
        class MyError(Exception):
            pass

        def bad(s):
            raise MyError("leaf failed: " + ",".join(s["log"]))

        leaf = E.StateGraph(Log)
        leaf.add_node("bad", bad)
        leaf.add_edge(E.START, "bad")
        mid = E.StateGraph(Log)
        mid.add_node("leaf", leaf.compile())
        mid.add_edge(E.START, "leaf")
        app = _one_node_app(E, Log, "mid", mid.compile())
        try:
            app.invoke({"log": ["x"]})
        except MyError as e:
            caught = ("caught", str(e), list(getattr(e, "__notes__", [])))
        return (caught,
                collect(lambda: app.stream({"log": ["y"]}, stream_mode="updates", subgraphs=True)))

    differential(scenario)


def test_async_error_in_one_of_two_parallel_subgraphs(differential):
    async def scenario(E):
        async def ok(s):
            await asyncio.sleep(0)
            return {"log": ["ok"]}

        async def bad(s):
            await asyncio.sleep(0.2)  # after `ok`'s subgraph finished, even on a loaded machine
            raise ValueError("bad branch")

        def sub(fn, name):
            sg = E.StateGraph(Log)
            sg.add_node(name, fn)
            sg.add_edge(E.START, name)
            return sg.compile()

        g = E.StateGraph(Log)
        g.add_node("good", sub(ok, "ok"))
        g.add_node("broken", sub(bad, "bad"))
        g.add_edge(E.START, "good")
        g.add_edge(E.START, "broken")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        chunks = await acollect(lambda: app.astream({"log": []}, cfg, stream_mode="updates",
                                                    subgraphs=True))
        st = await app.aget_state(cfg)
        return chunks, st.next, sorted((t.name, repr(t.error), t.result) for t in st.tasks)

    differential(scenario)


# --- recursion limit, schemas ---------------------------------------------------------------------


def test_recursion_limit_from_the_parent_config_stops_a_looping_subgraph(differential):
    def scenario(E):
        class S(TypedDict):
            n: int

        sg = E.StateGraph(S)
        sg.add_node("inc", lambda s: {"n": s["n"] + 1})
        sg.add_edge(E.START, "inc")
        sg.add_conditional_edges("inc", lambda s: E.END if s["n"] >= 6 else "inc")

        app = _one_node_app(E, S, "loop", sg.compile())
        return [capture(lambda lim=lim: app.invoke({"n": 0}, {"recursion_limit": lim}))
                for lim in (4, 6, 7, 25)]

    differential(scenario)


def test_remaining_steps_and_recursion_limit_seen_inside_a_subgraph(differential):
    def scenario(E):
        class S(TypedDict):
            log: Annotated[list, operator.add]
            remaining_steps: E.RemainingSteps

        def look(s):
            return {"log": [(s["remaining_steps"], E.get_config().get("recursion_limit"))]}

        sg = E.StateGraph(S)
        sg.add_node("look1", look)
        sg.add_node("look2", look)
        sg.add_edge(E.START, "look1")
        sg.add_edge("look1", "look2")

        g = E.StateGraph(S)
        g.add_node("pre", look)
        g.add_node("sub", sg.compile())
        g.add_edge(E.START, "pre")
        g.add_edge("pre", "sub")
        app = g.compile()
        return app.invoke({"log": []}, {"recursion_limit": 10}), app.invoke({"log": []})

    differential(scenario)


def test_subgraph_with_input_and_output_schemas_as_a_node(differential):
    def scenario(E):
        class In(TypedDict):
            query: str

        class Out(TypedDict):
            answer: str

        class Inner(TypedDict):
            query: str
            scratch: str
            answer: str

        sg = E.StateGraph(Inner, input_schema=In, output_schema=Out)
        sg.add_node("think", lambda s: {"scratch": f"thinking about {s['query']}"})
        sg.add_node("say", lambda s: {"answer": s["scratch"].upper()})
        sg.add_edge(E.START, "think")
        sg.add_edge("think", "say")

        class P(TypedDict):
            query: str
            answer: str
            other: str

        app = _one_node_app(E, P, "agent", sg.compile())
        return (app.invoke({"query": "q", "other": "keep"}),
                collect(lambda: app.stream({"query": "q", "other": "o"}, stream_mode=["values", "updates"],
                                           subgraphs=True)))

    differential(scenario)


def test_subgraph_with_pydantic_state_inside_a_typeddict_parent(differential):
    def scenario(E):
        from pydantic import BaseModel

        class Inner(BaseModel):
            text: str
            count: int = 0

        sg = E.StateGraph(Inner)
        sg.add_node("bump", lambda s: {"count": s.count + len(s.text)})
        sg.add_edge(E.START, "bump")

        class P(TypedDict):
            text: str
            count: int

        app = _one_node_app(E, P, "sub", sg.compile())
        return (app.invoke({"text": "hello", "count": 1}),
                collect(lambda: app.stream({"text": "ab"}, stream_mode="values", subgraphs=True)),
                capture(lambda: app.invoke({"text": 5})))

    differential(scenario)


# --- human in the loop around subgraphs --------------------------------------------------------


def test_two_sequential_interrupts_in_one_subgraph_node(differential):
    def scenario(E):
        calls = []

        def form(s):
            calls.append("form")
            name = E.interrupt("name?")
            age = E.interrupt(f"age of {name}?")
            return {"log": [f"{name}/{age}"]}

        sg = E.StateGraph(Log)
        sg.add_node("form", form)
        sg.add_edge(E.START, "form")
        app = _one_node_app(E, Log, "sub", sg.compile(), checkpointer=E.InMemorySaver())
        cfg = _cfg()
        a = app.invoke({"log": []}, cfg)
        b = app.invoke(E.Command(resume="ann"), cfg)
        st = app.get_state(cfg, subgraphs=True)
        c = app.invoke(E.Command(resume=33), cfg)
        return a, b, _snap(st), c, calls

    differential(scenario)


def test_parent_update_state_while_a_subgraph_is_paused_then_resume(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        app.invoke({"log": []}, cfg)
        capture(lambda: app.update_state(cfg, {"log": ["parent-edit"]}))
        st = app.get_state(cfg, subgraphs=True)
        done = capture(lambda: app.invoke(E.Command(resume="r"), cfg))
        return _snap(st), done, calls

    differential(scenario)


def test_parent_update_state_as_the_subgraph_node_skips_it(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        app.invoke({"log": []}, cfg)
        capture(lambda: app.update_state(cfg, {"log": ["instead-of-mid"]}, as_node="mid"))
        st = app.get_state(cfg, subgraphs=True)
        done = app.invoke(None, cfg)
        return _snap(st), done, calls

    differential(scenario)


def test_static_breakpoint_compiled_into_a_subgraph(differential):
    def scenario(E):
        calls = []

        def mk(n):
            def f(s):
                calls.append(n)
                return {"log": [n]}
            return f

        sg = E.StateGraph(Log)
        sg.add_node("plan", mk("plan"))
        sg.add_node("act", mk("act"))
        sg.add_edge(E.START, "plan")
        sg.add_edge("plan", "act")
        g = E.StateGraph(Log)
        g.add_node("sub", sg.compile(interrupt_before=["act"]))
        g.add_node("end", mk("end"))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "end")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="updates", subgraphs=True))
        st = app.get_state(cfg, subgraphs=True)
        second = collect(lambda: app.stream(None, cfg, stream_mode="updates", subgraphs=True))
        return first, _snap(st), second, calls

    differential(scenario)


def test_call_time_interrupt_before_names_a_subgraph_node(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls, ask=False), _cfg()
        first = app.invoke({"log": []}, cfg, interrupt_before=["mid", "leaf_after"])
        st1 = _snap(app.get_state(cfg, subgraphs=True))
        second = app.invoke(None, cfg, interrupt_before=["mid", "leaf_after"])
        st2 = _snap(app.get_state(cfg, subgraphs=True))
        return first, st1, second, st2, calls

    differential(scenario)


def test_fork_from_a_checkpoint_before_the_subgraph_ran(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        app.invoke({"log": []}, cfg)
        app.invoke(E.Command(resume="first"), cfg)
        before_mid = [s for s in app.get_state_history(cfg) if s.next == ("mid",)][0]
        forked = app.update_state(before_mid.config, {"log": ["forked"]})
        again = app.invoke(None, forked)
        st = app.get_state(cfg, subgraphs=True)
        done = app.invoke(E.Command(resume="second"), cfg)
        return again, _snap(st), done, calls

    differential(scenario)


def test_subgraph_invoked_in_a_node_with_the_parent_config_passed_explicitly(differential):
    def scenario(E):
        calls = []

        def ask(s):
            calls.append("ask")
            return {"log": [f"said:{E.interrupt('say something')}"]}

        sub = _one_node_app(E, Log, "ask", ask)

        def node(state, config):
            calls.append("node")
            out = sub.invoke({"log": ["in"]}, config)
            return {"log": out["log"]}

        app = _one_node_app(E, Log, "node", node, checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="updates", subgraphs=True))
        st = app.get_state(cfg, subgraphs=True)
        done = app.invoke(E.Command(resume="hi"), cfg)
        return first, _snap(st), done, calls

    differential(scenario)


def test_async_subgraph_ainvoke_inside_an_async_node_pauses_and_resumes(differential):
    async def scenario(E):
        calls = []

        async def ask(s):
            calls.append("ask")
            return {"log": [f"said:{E.interrupt({'log': list(s['log'])})}"]}

        sub = _one_node_app(E, Log, "ask", ask)

        async def node(s):
            calls.append("node")
            out = await sub.ainvoke({"log": ["x"]})
            return {"log": out["log"]}

        app = _one_node_app(E, Log, "node", node, checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = await acollect(lambda: app.astream({"log": []}, cfg, stream_mode=["updates", "values"],
                                                   subgraphs=True))
        st = await app.aget_state(cfg, subgraphs=True)
        second = await acollect(lambda: app.astream(E.Command(resume="yo"), cfg,
                                                    stream_mode=["updates", "values"], subgraphs=True))
        return first, _snap(st), second, calls

    differential(scenario)


def test_subgraph_interrupt_with_durability_exit(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        first = app.invoke({"log": []}, cfg, durability="exit")
        st = _snap(app.get_state(cfg, subgraphs=True))
        done = app.invoke(E.Command(resume="z"), cfg, durability="exit")
        hist = [(s.next, s.metadata.get("step")) for s in app.get_state_history(cfg)]
        return first, st, done, hist, calls

    differential(scenario)


def test_debug_stream_of_a_subgraph_interrupt(differential):
    def scenario(E):
        app, cfg = _three_levels(E, []), _cfg()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="debug", subgraphs=True))
        return [c for c in first if c[1]["type"] != "checkpoint"], [c for c in first if c[1]["type"] == "checkpoint"]

    differential(scenario)


# --- state mapping between parent and subgraph ---------------------------------------------------


def test_parent_reducer_vs_subgraph_last_value_on_the_same_key(differential):
    def scenario(E):
        class Sub(TypedDict):
            total: int
            items: list

        sg = E.StateGraph(Sub)
        sg.add_node("add", lambda s: {"total": s["total"] + 10, "items": s["items"] + ["sub"]})
        sg.add_edge(E.START, "add")

        class P(TypedDict):
            total: Annotated[int, operator.add]
            items: Annotated[list, operator.add]

        app = _one_node_app(E, P, "sub", sg.compile())
        return (app.invoke({"total": 1, "items": ["p"]}),
                collect(lambda: app.stream({"total": 1, "items": ["p"]}, stream_mode="updates",
                                           subgraphs=True)))

    differential(scenario)


def test_subgraph_node_that_writes_nothing_returns_its_input_keys(differential):
    def scenario(E):
        class Sub(TypedDict):
            log: Annotated[list, operator.add]
            flag: NotRequired[bool]

        sg = E.StateGraph(Sub)
        sg.add_node("noop", lambda s: None)
        sg.add_edge(E.START, "noop")
        g = E.StateGraph(Log)
        g.add_node("sub", sg.compile())
        g.add_node("after", _logger("after"))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "after")
        app = g.compile()
        return app.invoke({"log": ["a"]}), collect(lambda: app.stream({"log": ["a"]},
                                                                     stream_mode="updates"))

    differential(scenario)


def test_subgraph_messages_with_add_messages_dedupes_on_return(differential):
    def scenario(E):
        def chat(s):
            return {"messages": [AIMessage(f"reply to {s['messages'][-1].content}", id="r1")]}

        sg = E.StateGraph(E.MessagesState)
        sg.add_node("chat", chat)
        sg.add_edge(E.START, "chat")

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", sg.compile())
        g.add_node("agent2", sg.compile())
        g.add_edge(E.START, "agent")
        g.add_edge("agent", "agent2")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = app.invoke({"messages": [HumanMessage("hi", id="h1")]}, _cfg())
        again = app.invoke({"messages": [HumanMessage("again", id="h2")]}, _cfg())
        return ([(m.type, m.content, m.id) for m in out["messages"]],
                [(m.type, m.content, m.id) for m in again["messages"]])

    differential(scenario)


def test_subgraph_node_returning_command_goto_inside_the_subgraph(differential):
    def scenario(E):
        def route(s):
            return E.Command(goto="right" if len(s["log"]) % 2 else "left", update={"log": ["route"]})

        sg = E.StateGraph(Log)
        sg.add_node("route", route, destinations=("left", "right"))
        sg.add_node("left", _logger("left"))
        sg.add_node("right", _logger("right"))
        sg.add_edge(E.START, "route")
        app = _one_node_app(E, Log, "sub", sg.compile())
        return (collect(lambda: app.stream({"log": []}, stream_mode="updates", subgraphs=True)),
                app.invoke({"log": ["x"]}))

    differential(scenario)


# --- more shapes users build --------------------------------------------------------------------


def test_astream_events_v2_over_nested_subgraphs(differential):
    async def scenario(E):
        async def leaf_node(s):
            return {"log": ["leaf"]}

        leaf = E.StateGraph(Log)
        leaf.add_node("leaf_node", leaf_node)
        leaf.add_edge(E.START, "leaf_node")
        mid = E.StateGraph(Log)
        mid.add_node("leaf", leaf.compile())
        mid.add_edge(E.START, "leaf")
        app = _one_node_app(E, Log, "mid", mid.compile())
        out = []
        async for ev in app.astream_events({"log": []}, version="v2"):
            if ev["name"] == "__start__":
                continue  # hidden START runs: compared in test_diff_users_async.py
            md = ev.get("metadata", {})
            out.append((ev["event"], ev["name"], sorted(t for t in ev.get("tags", [])
                                                          if not t.startswith("seq:")),
                        md.get("langgraph_node"), md.get("langgraph_checkpoint_ns"),
                        md.get("checkpoint_ns"), len(ev.get("parent_ids", []))))
        return out

    differential(scenario)


def test_send_fan_out_into_a_subgraph_that_hands_off_with_command_parent(differential):
    def scenario(E):
        class W(TypedDict):
            item: int
            results: Annotated[list, operator.add]

        def check(s):
            if s["item"] % 2:
                return E.Command(graph=E.Command.PARENT, goto="odd_handler",
                                 update={"results": [f"odd {s['item']}"]})
            return {"results": [f"even {s['item']}"]}

        sg = E.StateGraph(W)
        sg.add_node("check", check)
        sg.add_edge(E.START, "check")

        class P(TypedDict):
            items: list
            results: Annotated[list, operator.add]

        g = E.StateGraph(P)
        g.add_node("worker", sg.compile(), destinations=("odd_handler",))
        g.add_node("odd_handler", lambda s: {"results": [f"handled {len(s['results'])}"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i, "results": []})
                                                   for i in s["items"]])
        app = g.compile()
        out = app.invoke({"items": [1, 2, 3], "results": []})
        return sorted(out["results"])

    differential(scenario)


def test_fan_out_inside_a_subgraph_with_an_interrupt_in_each_branch(differential):
    def scenario(E):
        class Inner(TypedDict):
            topics: list
            picks: Annotated[list, operator.add]

        class One(TypedDict):
            topic: str

        def pick(s):
            return {"picks": [f"{s['topic']}={E.interrupt(s['topic'])}"]}

        sg = E.StateGraph(Inner)
        sg.add_node("pick", pick)
        sg.add_node("summarize", lambda s: {"picks": [f"summary of {len(s['picks'])}"]})
        sg.add_conditional_edges(E.START, lambda s: [E.Send("pick", {"topic": t}) for t in s["topics"]])
        sg.add_edge("pick", "summarize")

        app = _one_node_app(E, Inner, "team", sg.compile(), checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = app.invoke({"topics": ["a", "b"], "picks": []}, cfg)
        st = app.get_state(cfg, subgraphs=True)
        inner = st.tasks[0].state
        inner_tasks = sorted((t.name, [i.value for i in t.interrupts]) for t in inner.tasks)
        resume = {i.id: i.value.upper() for i in st.interrupts}
        done = app.invoke(E.Command(resume=resume), cfg)
        return (sorted(i.value for i in first["__interrupt__"]), inner_tasks, inner.next,
                sorted(done["picks"][:-1]), done["picks"][-1])

    differential(scenario)


def test_entrypoint_used_as_a_node_of_a_state_graph(differential):
    def scenario(E):
        @E.func.task
        def double(x):
            return x * 2

        @E.func.entrypoint()
        def workflow(state: dict):
            return {"log": [f"doubled {double(len(state['log'])).result()}"]}

        g = E.StateGraph(Log)
        g.add_node("pre", _logger("pre"))
        g.add_node("flow", workflow)
        g.add_edge(E.START, "pre")
        g.add_edge("pre", "flow")
        app = g.compile()
        return (app.invoke({"log": ["a"]}),
                collect(lambda: app.stream({"log": []}, stream_mode="updates", subgraphs=True)))

    differential(scenario)


def test_state_graph_invoked_inside_a_functional_task_with_an_interrupt(differential):
    def scenario(E):
        calls = []

        def approve(s):
            calls.append("approve")
            return {"log": [f"approved:{E.interrupt({'log': list(s['log'])})}"]}

        sub = _one_node_app(E, Log, "approve", approve)

        @E.func.task
        def review(text):
            calls.append("review")
            return sub.invoke({"log": [text]})["log"]

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def flow(text):
            return review(text).result()

        cfg = _cfg()
        first = collect(lambda: flow.stream("draft", cfg, stream_mode="updates", subgraphs=True))
        done = flow.invoke(E.Command(resume="yes"), cfg)
        return first, done, calls

    differential(scenario)


def test_subgraph_with_config_run_name_and_tags_as_a_node(differential):
    def scenario(E):
        def inner(s, config):
            return {"log": [(sorted(t for t in config.get("tags", []) if not t.startswith("seq:")),
                             config.get("metadata", {}).get("team"))]}

        sub = _one_node_app(E, Log, "inner", inner).with_config(tags=["team-tag"], metadata={"team": "blue"}, run_name="blue_team")

        app = _one_node_app(E, Log, "team", sub)
        return (app.invoke({"log": []}),
                collect(lambda: app.stream({"log": []}, stream_mode="updates", subgraphs=True)))

    differential(scenario)


def test_batch_over_a_graph_with_a_subgraph(differential):
    def scenario(E):
        class S(TypedDict):
            n: int
            out: str

        sg = E.StateGraph(S)
        sg.add_node("fmt", lambda s: {"out": f"n={s['n']}"})
        sg.add_edge(E.START, "fmt")
        app = _one_node_app(E, S, "sub", sg.compile())
        return app.batch([{"n": 1}, {"n": 2}, {"n": 3}])

    differential(scenario)


def test_get_state_subgraphs_on_a_finished_thread_and_on_a_past_paused_checkpoint(differential):
    def scenario(E):
        app, cfg = _three_levels(E, []), _cfg()
        app.invoke({"log": []}, cfg)
        app.invoke(E.Command(resume="ok"), cfg)
        finished = _snap(app.get_state(cfg, subgraphs=True))
        paused_cp = [s for s in app.get_state_history(cfg) if s.next == ("mid",)][0]
        past = _snap(app.get_state(paused_cp.config, subgraphs=True))
        return finished, past

    differential(scenario)


def test_resume_with_command_update_and_resume_together_for_a_subgraph(differential):
    def scenario(E):
        calls = []
        app, cfg = _three_levels(E, calls), _cfg()
        app.invoke({"log": []}, cfg)
        done = capture(lambda: app.invoke(E.Command(resume="both", update={"log": ["from-command"]}), cfg))
        return done, calls

    differential(scenario)


def test_subgraph_with_config_recursion_limit_and_configurable_as_a_node(differential):
    def scenario(E):
        class S(TypedDict):
            n: int
            seen: Annotated[list, operator.add]

        def inc(s, config):
            return {"n": s["n"] + 1,
                    "seen": [(config["configurable"].get("model"), config.get("recursion_limit"))]}

        sg = E.StateGraph(S)
        sg.add_node("inc", inc)
        sg.add_edge(E.START, "inc")
        sg.add_conditional_edges("inc", lambda s: E.END if s["n"] >= 5 else "inc")
        sub = sg.compile().with_config(recursion_limit=3, configurable={"model": "m1"})

        app = _one_node_app(E, S, "team", sub)
        return (capture(lambda: app.invoke({"n": 0, "seen": []})),
                capture(lambda: app.invoke({"n": 0, "seen": []},
                                           {"recursion_limit": 50, "configurable": {"model": "m2"}})))

    differential(scenario)


def test_two_subgraphs_invoked_in_one_node_the_second_interrupts(differential):
    def scenario(E):
        calls = []

        def mk_sub(tag, ask):
            def work(s):
                calls.append(tag)
                answer = E.interrupt(f"{tag}?") if ask else "auto"
                return {"log": [f"{tag}:{answer}"]}
            return _one_node_app(E, Log, "work", work)

        first_sub, second_sub = mk_sub("first", False), mk_sub("second", True)

        def node(s):
            calls.append("node")
            a = first_sub.invoke({"log": []})
            b = second_sub.invoke({"log": a["log"]})
            return {"log": b["log"]}

        app = _one_node_app(E, Log, "node", node, checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = collect(lambda: app.stream({"log": []}, cfg, stream_mode="updates", subgraphs=True))
        st = app.get_state(cfg, subgraphs=True)
        second = collect(lambda: app.stream(E.Command(resume="yes"), cfg, stream_mode="updates",
                                            subgraphs=True))
        return first, _snap(st), second, calls

    differential(scenario)


def test_subgraph_invoked_in_a_node_on_its_own_thread_keeps_its_own_memory(differential):
    def scenario(E):
        class Mem(TypedDict):
            notes: Annotated[list, operator.add]

        sg = E.StateGraph(Mem)
        sg.add_node("note", lambda s: {"notes": [f"note{len(s['notes'])}"]})
        sg.add_edge(E.START, "note")
        memory = E.InMemorySaver()
        sub = sg.compile(checkpointer=memory)

        def node(s):
            out = sub.invoke({"notes": []}, {"configurable": {"thread_id": "memory-thread"}})
            return {"log": [list(out["notes"])]}

        app = _one_node_app(E, Log, "node", node, checkpointer=E.InMemorySaver())
        outs = [app.invoke({"log": []}, _cfg(t)) for t in ("p1", "p2")]
        mem = sub.get_state({"configurable": {"thread_id": "memory-thread"}})
        return outs, mem.values, mem.metadata.get("step"), len(list(sub.get_state_history(
            {"configurable": {"thread_id": "memory-thread"}})))

    differential(scenario)


def test_runtime_context_reaches_a_subgraph_invoked_inside_a_node(differential):
    def scenario(E):
        from dataclasses import dataclass

        @dataclass
        class Ctx:
            user: str

        def inner(s, runtime: E.Runtime[Ctx]):
            return {"log": [f"inner sees {runtime.context.user if runtime.context else None}"]}

        sg = E.StateGraph(Log, context_schema=Ctx)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")
        sub = sg.compile()

        def node(s):
            return {"log": sub.invoke({"log": []})["log"]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("node", node)
        g.add_node("as_node", sub)
        g.add_edge(E.START, "node")
        g.add_edge("node", "as_node")
        return g.compile().invoke({"log": []}, context=Ctx(user="ann"))

    differential(scenario)


def test_messages_mode_from_a_checkpointer_true_subgraph(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="one two"),
                                                    AIMessage(content="three")]))

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        sg = E.StateGraph(E.MessagesState)
        sg.add_node("chat", chat)
        sg.add_edge(E.START, "chat")
        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", sg.compile(checkpointer=True))
        g.add_edge(E.START, "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = []
        for q in ("a", "b"):
            for ns, (msg, md) in app.stream({"messages": [HumanMessage(q, id=q)]}, _cfg(),
                                            stream_mode="messages", subgraphs=True):
                out.append((ns, msg.content, md.get("langgraph_checkpoint_ns"), md.get("checkpoint_ns"),
                            md.get("langgraph_node")))
        return out, [m.content for m in app.get_state(_cfg()).values["messages"]]

    differential(scenario)


def test_named_subgraph_run_names_in_astream_events(differential):
    async def scenario(E):
        async def work(s):
            return {"log": ["w"]}

        sg = E.StateGraph(Log)
        sg.add_node("work", work)
        sg.add_edge(E.START, "work")
        app = _one_node_app(E, Log, "researcher_node", sg.compile(name="researcher"), name="supervisor")
        out = []
        async for ev in app.astream_events({"log": []}, version="v2"):
            if ev["event"] == "on_chain_start" and ev["name"] != "__start__":
                out.append((ev["name"], ev["metadata"].get("langgraph_node")))
        return out

    differential(scenario)


def test_invoke_config_and_store_reach_nodes_of_called_and_node_subgraphs(differential):
    def scenario(E):
        from langgraph.store.memory import InMemoryStore

        def inner(s, config):
            rt = E.get_runtime()
            item = rt.store.get(("users",), "u1") if rt.store is not None else None
            conf = config["configurable"]
            return {"log": [(sorted(t for t in config.get("tags", []) if not t.startswith(("seq:", "graph:"))),
                             config["metadata"].get("request"), conf.get("user_id"), conf.get("thread_id"),
                             item.value if item else None)]}

        sub = _one_node_app(E, Log, "inner", inner)

        def node(s):
            return {"log": sub.invoke({"log": []})["log"]}

        g = E.StateGraph(Log)
        g.add_node("node", node)
        g.add_node("as_node", sub)
        g.add_edge(E.START, "node")
        g.add_edge("node", "as_node")
        store = InMemoryStore()
        store.put(("users",), "u1", {"name": "ann"})
        app = g.compile(checkpointer=E.InMemorySaver(), store=store)
        return app.invoke({"log": []}, {"configurable": {"thread_id": "t", "user_id": "u1"},
                                        "tags": ["req-tag"], "metadata": {"request": "r1"}})

    differential(scenario)


def test_subgraph_streamed_inside_a_node_and_re_emitted_with_the_stream_writer(differential):
    """A node streams a subgraph's custom events and re-emits them with its own writer:
    with stream_mode "custom" on the inner stream, the inner events go to that inner
    stream only, so the outer stream sees each once (the re-emitted copy)."""
    def scenario(E):
        def inner(s):
            E.get_stream_writer()({"token": "tok"})
            return {"log": ["inner"]}

        sub = _one_node_app(E, Log, "inner", inner)

        def node(s):
            writer = E.get_stream_writer()
            for chunk in sub.stream({"log": []}, stream_mode="custom"):
                writer({"relayed": chunk})
            return {"log": ["node"]}

        app = _one_node_app(E, Log, "node", node)
        return (collect(lambda: app.stream({"log": []}, stream_mode=["custom", "updates"],
                                           subgraphs=True)),
                collect(lambda: app.stream({"log": []}, stream_mode="custom")))

    differential(scenario)


def test_command_parent_after_an_interrupt_routes_where_the_human_said(differential):
    def scenario(E):
        def inner(s):
            where = E.interrupt("where to?")
            return E.Command(graph=E.Command.PARENT, goto=where, update={"log": [f"to {where}"]})

        sg = E.StateGraph(Log)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")
        g = E.StateGraph(Log)
        g.add_node("sub", sg.compile(), destinations=("x", "y"))
        g.add_node("x", _logger("x"))
        g.add_node("y", _logger("y"))
        g.add_edge(E.START, "sub")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = app.invoke({"log": []}, cfg)
        second = collect(lambda: app.stream(E.Command(resume="y"), cfg, stream_mode=["updates", "values"],
                                            subgraphs=True))
        return first, second, [(s.next, s.metadata["step"], s.values) for s in app.get_state_history(cfg)]

    differential(scenario)


def test_command_parent_with_overwrite_resets_a_reducer_key(differential):
    def scenario(E):
        def inner(s):
            return E.Command(graph=E.Command.PARENT, goto="x", update={"log": E.Overwrite(["reset"])})

        sg = E.StateGraph(Log)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")
        g = E.StateGraph(Log)
        g.add_node("sub", sg.compile(), destinations=("x",))
        g.add_node("x", _logger("x"))
        g.add_edge(E.START, "sub")
        return capture(lambda: g.compile().invoke({"log": ["a", "b"]}))

    differential(scenario)


def test_interrupt_after_a_subgraph_node_and_inside_a_subgraph_with_star(differential):
    def scenario(E):
        sg = E.StateGraph(Log)
        sg.add_node("a", _logger("a"))
        sg.add_node("b", _logger("b"))
        sg.add_edge(E.START, "a")
        sg.add_edge("a", "b")

        g = E.StateGraph(Log)
        g.add_node("sub", sg.compile(interrupt_after="*"))
        g.add_node("z", _logger("z"))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "z")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_after=["sub"])
        cfg = _cfg()
        out = [collect(lambda: app.stream({"log": []}, cfg, stream_mode="updates", subgraphs=True))]
        for _ in range(4):
            out.append(_snap(app.get_state(cfg, subgraphs=True)))
            out.append(collect(lambda: app.stream(None, cfg, stream_mode="updates", subgraphs=True)))
        return out

    differential(scenario)


# --- a subgraph invoked by a sync node, watched with astream_events; its own saver ---------


def _inner_adder(E, **compile_kwargs):
    def inner_node(s):
        return {"log": ["inner"]}

    b = E.StateGraph(Log)
    b.add_node("inner_node", inner_node)
    b.add_edge(E.START, "inner_node")
    return b.compile(name="inner", **compile_kwargs)


def _events_of(app, inp):
    async def run():
        out = []
        async for ev in app.astream_events(inp, version="v2"):
            if ev["name"] == "__start__":
                continue
            md = ev.get("metadata", {})
            out.append((ev["event"], ev["name"], len(ev.get("parent_ids", [])),
                        md.get("thread_id"), md.get("langgraph_node")))
        return out

    return asyncio.run(run())


def test_astream_events_see_a_sync_subgraph_invoked_in_a_sync_node(differential):
    """The how-to's "call a subgraph inside a node" under astream_events: the subgraph's
    run and its nodes nest under the calling node (no chunk events for nodes a sync
    graph invokes), and the run does not fail on the async run's callback manager."""
    def scenario(E):
        inner = _inner_adder(E)

        def outer_node(s):
            return {"log": inner.invoke({"log": []})["log"]}

        return _events_of(_one_node_app(E, Log, "outer_node", outer_node), {"log": []})

    ref = differential(scenario)
    assert ("on_chain_start", "inner_node", 3, None, "inner_node") in ref


def test_astream_events_nest_a_subagent_run_on_a_thread_of_its_own(differential):
    """A sub-agent with its own memory (`invoke(..., {"configurable": {"thread_id": ...}})`
    inside a node): its graph run is traced under the calling node, with its thread_id."""
    def scenario(E):
        inner = _inner_adder(E, checkpointer=E.InMemorySaver())

        def outer_node(s):
            return {"log": inner.invoke({"log": []}, _cfg("sub"))["log"]}

        return _events_of(_one_node_app(E, Log, "outer_node", outer_node), {"log": []})

    ref = differential(scenario)
    assert ("on_chain_start", "inner", 2, "sub", "outer_node") in ref


def test_a_subgraph_compiled_with_its_own_saver_keeps_its_state_in_the_callers(differential):
    """Compiling every graph with a saver is common in notebooks. Invoked in a node (not
    on a thread of its own), the subgraph runs on the caller's saver, as LangGraph's does:
    without one it saves nothing (and does not fail for want of a thread_id); with one its
    checkpoints land there, under the node's namespace, and its own saver stays empty."""
    def scenario(E):
        own = E.InMemorySaver()
        inner = _inner_adder(E, checkpointer=own)

        def outer_node(s):
            return {"log": inner.invoke({"log": []})["log"]}

        out = []
        for outer_saver in (None, E.InMemorySaver()):
            app = _one_node_app(E, Log, "outer_node", outer_node, checkpointer=outer_saver)
            cfg = _cfg("outer") if outer_saver else None
            out.append(app.invoke({"log": []}, cfg))
            out.append(len(list(own.list(None))))
            if outer_saver is not None:
                out.append(sorted({c.config["configurable"]["checkpoint_ns"].split(":")[0]
                                   for c in outer_saver.list(None)}))
        return out

    differential(scenario, expect=[{"log": ["inner"]}, 0, {"log": ["inner"]}, 0, ["", "outer_node"]])


def _config_seen(E, sink):
    """A one-node graph that records what its node sees of its config."""
    def node(s):
        c = E.get_config()
        md = c["metadata"]
        sink.append({"k": md.get("k"), "only_outer": md.get("only_outer"), "only_inner": md.get("only_inner"),
                     "recursion_limit": c.get("recursion_limit"), "tags": sorted(c.get("tags") or ()),
                     "user": c["configurable"].get("user"), "ik": c["configurable"].get("ik")})
        return {"log": ["seen"]}

    return _one_node_app(E, Log, "inner_node", node)


def _configured_inner(E, sink):
    return _config_seen(E, sink).with_config(
        metadata={"k": "inner", "only_inner": 2}, recursion_limit=7, tags=["t_inner"],
        configurable={"user": "inner", "ik": 1})


def _configured_outer(E, node):
    return _one_node_app(E, Log, "outer_node", node).with_config(
        metadata={"k": "outer", "only_outer": 1}, tags=["t_outer"], configurable={"user": "outer"})


def test_a_graph_invoked_in_a_node_keeps_its_own_with_config_over_the_callers(differential):
    """LangChain's `create_agent` names its agent with `with_config(metadata=...)`; a
    sub-agent called from a tool must show its own name, not its caller's. The invoked
    graph's `with_config` (metadata, recursion limit, configurable) layers over the
    caller's, and a config given to the call over both; tags add up."""
    def scenario(E):
        seen = []
        inner = _configured_inner(E, seen)
        given = [None, {"metadata": {"k": "given"}, "tags": ["t_given"], "recursion_limit": 9}]
        for cfg in given:
            def outer_node(s, cfg=cfg):
                return {"log": inner.invoke({"log": []}, cfg)["log"]}

            _configured_outer(E, outer_node).invoke({"log": []}, {"recursion_limit": 50})
        return seen

    ref = differential(scenario)
    assert [s["k"] for s in ref] == ["inner", "given"] and [s["recursion_limit"] for s in ref] == [7, 9]


def test_a_subgraph_node_keeps_the_callers_config_over_its_own_with_config(differential):
    """The other way round for a subgraph added as a node: the caller's config wins (as
    LangGraph merges a node's config), and the subgraph's own keys fill in."""
    def scenario(E):
        seen = []
        outer = _configured_outer(E, _configured_inner(E, seen))
        outer.invoke({"log": []}, {"recursion_limit": 50})
        return seen

    ref = differential(scenario)
    assert ref[0]["k"] == "outer" and ref[0]["only_inner"] == 2


def test_the_task_events_of_a_graph_invoked_in_a_node_carry_its_own_metadata(differential):
    """`stream_mode="debug"` task events (what LangChain's v3 `subagents` projection
    reads the agent name from) carry the invoked graph's own metadata."""
    def scenario(E):
        inner = _configured_inner(E, [])

        def outer_node(s):
            return {"log": inner.invoke({"log": []})["log"]}

        chunks = _configured_outer(E, outer_node).stream({"log": []}, stream_mode="debug", subgraphs=True)
        return [(len(ns), c["payload"]["name"], c["payload"].get("metadata"))
                for ns, c in chunks if c["type"] == "task"]

    ref = differential(scenario)
    assert ref[-1][2]["k"] == "inner"


def test_a_graph_given_its_own_thread_by_with_config_runs_as_a_root_inside_a_node(differential):
    """`inner.with_config(configurable={"thread_id": ...})` invoked in a node addresses its
    own thread, as a thread given to the call does: it does not run in the caller's
    namespace, nor see the caller's configurable keys."""
    def scenario(E):
        seen = []

        def inner_node(s):
            conf = E.get_config()["configurable"]
            seen.append({k: conf.get(k) for k in ("thread_id", "user")})
            return {"log": ["inner"]}

        inner = _one_node_app(E, Log, "inner_node", inner_node).with_config(
            configurable={"thread_id": "inner-thread"})

        def outer_node(s):
            return {"log": inner.invoke({"log": []})["log"]}

        saver = E.InMemorySaver()
        app = _one_node_app(E, Log, "outer_node", outer_node, checkpointer=saver)
        out = app.invoke({"log": []}, {"configurable": {"thread_id": "outer", "user": "u"}})
        threads = sorted({(c.config["configurable"]["thread_id"], c.config["configurable"]["checkpoint_ns"].split(":")[0])
                          for c in saver.list(None)})
        return out, seen, threads

    ref = differential(scenario)
    assert ref[1] == [{"thread_id": "inner-thread", "user": None}]


def test_a_graph_keeps_its_with_config_callbacks_when_a_call_gives_others(differential):
    """`graph.with_config(callbacks=[h])` then `invoke(..., {"callbacks": [g]})`: both
    handlers see the run (LangGraph merges callbacks), at the top level, inside a node
    and inside a node on a thread of its own."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Seen(BaseCallbackHandler):
        def __init__(self, label, sink):
            self.label, self.sink = label, sink

        def on_chain_start(self, serialized, inputs, *, name=None, **kw):
            self.sink.append((self.label, kw.get("name") or name))

    def scenario(E):
        out = []
        for where in ("top", "in a node", "own thread"):
            sink = []
            inner = _one_node_app(E, Log, "inner_node", _logger("inner")).with_config(
                callbacks=[Seen("own", sink)])
            call = {"callbacks": [Seen("call", sink)]}
            if where == "top":
                inner.invoke({"log": []}, call)
            else:
                if where == "own thread":
                    call["configurable"] = {"thread_id": "other"}

                def outer_node(s, call=call, inner=inner):
                    return inner.invoke({"log": []}, call)

                _one_node_app(E, Log, "outer_node", outer_node).invoke({"log": []})
            out.append((where, sorted(set(sink))))
        return out

    ref = differential(scenario)
    assert ("own", "inner_node") in ref[1][1] and ("call", "inner_node") in ref[1][1]

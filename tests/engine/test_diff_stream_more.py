"""Streaming semantics beyond shapes: incremental delivery, early exit, completion order,
messages mode details, callbacks/events surface, Send into subgraphs."""

import asyncio
import operator
from typing import Annotated

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from typing_extensions import NotRequired, TypedDict

from _diff import acollect, capture, collect


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def test_stream_is_incremental_consumer_sees_step_before_next_step_runs(differential):
    def scenario(E):
        received = []
        observed_in_b = []

        def b(s):
            observed_in_b.append(list(received))
            return {"log": ["b"]}

        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        for chunk in g.compile().stream({"log": []}, stream_mode="updates"):
            received.append(chunk)
        return observed_in_b

    differential(scenario, expect=[[{"a": {"log": ["a"]}}]])


def test_astream_custom_event_delivered_while_node_still_running(differential):
    async def scenario(E):
        acked = asyncio.Event()

        async def a(s, writer: E.StreamWriter):
            writer("ping")
            try:
                await asyncio.wait_for(acked.wait(), 0.5)
                return {"log": ["acked"]}
            except asyncio.TimeoutError:
                return {"log": ["not acked"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_edge(E.START, "a")
        out = []
        async for mode, chunk in g.compile().astream({"log": []}, stream_mode=["custom", "updates"]):
            out.append((mode, chunk))
            if chunk == "ping":
                acked.set()
        return out

    differential(scenario)


def test_stream_custom_events_each_delivered_while_the_sync_node_waits_for_them(differential):
    """A sync node emits an event and waits until the consumer has it, 50 times over:
    each event wakes the consumer blocked in `stream()` (none waits for the node to end)."""

    def scenario(E):
        import threading

        acked = threading.Semaphore(0)

        def a(s, writer: E.StreamWriter):
            late = 0
            for i in range(50):
                writer(i)
                if not acked.acquire(timeout=2):
                    late += 1
            return {"log": [f"late {late}"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_edge(E.START, "a")
        out = []
        for mode, chunk in g.compile().stream({"log": []}, stream_mode=["custom", "updates"]):
            out.append((mode, chunk))
            if mode == "custom":
                acked.release()
        return out

    differential(scenario)


def test_breaking_out_of_stream_stops_later_steps(differential):
    def scenario(E):
        ran = []

        def mk(n):
            def f(s):
                ran.append(n)
                return {"log": [n]}

            return f

        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, mk(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        gen = g.compile().stream({"log": []}, stream_mode="updates")
        first = next(gen)
        gen.close()
        return first, ran

    differential(scenario)


def test_abreaking_out_of_astream_stops_later_steps(differential):
    async def scenario(E):
        ran = []

        def mk(n):
            async def f(s):
                ran.append(n)
                return {"log": [n]}

            return f

        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, mk(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        first = None
        gen = g.compile().astream({"log": []}, stream_mode="updates")
        async for chunk in gen:
            first = chunk
            break
        await gen.aclose()
        return first, ran

    differential(scenario)


def test_parallel_async_updates_follow_completion_order(differential):
    # a 40 ms margin between branches makes completion order deterministic
    async def scenario(E):
        def mk(n, delay):
            async def f(s):
                await asyncio.sleep(delay)
                return {"log": [n]}

            return f

        g = E.StateGraph(S)
        g.add_node("a_slow", mk("a_slow", 0.045))
        g.add_node("b_fast", mk("b_fast", 0.0))
        g.add_edge(E.START, "a_slow")
        g.add_edge(E.START, "b_fast")
        app = g.compile()
        chunks = [c async for c in app.astream({"log": []}, stream_mode=["updates", "values"])]
        return chunks

    # updates in completion order (b_fast first); the values snapshot in task-path order
    differential(scenario)


def test_send_into_subgraph_node_gives_distinct_namespaces(differential):
    def scenario(E):
        class Item(TypedDict):
            log: Annotated[list, operator.add]
            item: NotRequired[str]

        sub = E.StateGraph(Item)
        sub.add_node("work", lambda s: {"log": [f"work:{s.get('item')}"]})
        sub.add_edge(E.START, "work")
        g = E.StateGraph(S)  # parent has no "item" channel: each subgraph's item stays inside
        g.add_node("sub", sub.compile())
        g.add_conditional_edges(E.START, lambda s: [E.Send("sub", {"item": i, "log": []}) for i in ("x", "y")])
        app = g.compile()
        chunks = list(app.stream({"log": []}, stream_mode="updates", subgraphs=True))
        # two pushed subgraph tasks run concurrently: compare their events as a multiset
        inner = sorted((c for c in chunks if c[0]), key=lambda c: repr(c[1]))
        outer = sorted((c for c in chunks if not c[0]), key=lambda c: repr(c[1]))
        distinct_ns = len({c[0] for c in inner})
        return app.invoke({"log": []}), distinct_ns, [c[1] for c in inner], outer

    differential(scenario)


# --- messages mode -----------------------------------------------------------------------


def test_messages_mode_emits_messages_returned_by_nodes_without_a_model(differential):
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("say", lambda s: {"messages": [AIMessage(content="from node", id="m1")]})
        g.add_edge(E.START, "say")
        out = list(g.compile().stream({"messages": [HumanMessage("hi", id="h")]}, stream_mode="messages"))
        return [(m, md.get("langgraph_node")) for m, md in out]

    differential(scenario)


def test_messages_mode_model_message_is_not_emitted_twice(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="x y")]))

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        out = list(g.compile().stream({"messages": [HumanMessage("hi", id="h")]}, stream_mode="messages"))
        return [(type(m).__name__, m.content) for m, _ in out]

    differential(scenario)


def test_messages_mode_respects_nostream_tag(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="secret words")])).with_config(
            tags=["nostream"]
        )

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        out = list(g.compile().stream({"messages": [HumanMessage("hi", id="h")]}, stream_mode="messages"))
        return [(type(m).__name__, m.content) for m, _ in out]

    differential(scenario)


def test_messages_mode_from_subgraph_with_and_without_subgraphs(differential):
    def scenario(E):
        def make_model():
            return GenericFakeChatModel(messages=iter([AIMessage(content="deep reply")]))

        def build():
            model = make_model()

            def chat(s):
                return {"messages": [model.invoke(s["messages"])]}

            sub = E.StateGraph(E.MessagesState)
            sub.add_node("chat", chat)
            sub.add_edge(E.START, "chat")
            g = E.StateGraph(E.MessagesState)
            g.add_node("sub", sub.compile())
            g.add_edge(E.START, "sub")
            return g.compile()

        inp = {"messages": [HumanMessage("hi", id="h")]}
        plain = [(m.content, md.get("langgraph_node"), md.get("langgraph_checkpoint_ns"))
                 for m, md in build().stream(inp, stream_mode="messages")]
        nested = [(ns, m.content, md.get("langgraph_node"))
                  for ns, (m, md) in build().stream(inp, stream_mode="messages", subgraphs=True)]
        return plain, nested

    differential(scenario)


def test_messages_and_updates_interleaving(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage(content="p q")]))

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_node("after", lambda s: {"messages": [AIMessage(content="after", id="after")]})
        g.add_edge(E.START, "chat")
        g.add_edge("chat", "after")
        out = list(g.compile().stream({"messages": [HumanMessage("hi", id="h")]}, stream_mode=["messages", "updates"]))
        return [(mode, (type(p[0]).__name__, p[0].content) if mode == "messages" else list(p)) for mode, p in out]

    differential(scenario)


# --- callbacks / events (the LangSmith-visible surface) -----------------------------------


class _Recorder(BaseCallbackHandler):
    def __init__(self):
        self.events = []

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None, **kw):
        self.events.append(("start", kw.get("name"), sorted(t for t in (tags or []) if not t.startswith("seq:"))))

    def on_chain_end(self, outputs, *, run_id, **kw):
        self.events.append(("end",))

    def on_chain_error(self, error, *, run_id, **kw):
        self.events.append(("error", type(error).__name__))


def test_callbacks_see_graph_and_node_runs(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        rec = _Recorder()
        g.compile().invoke({"log": []}, {"callbacks": [rec]})
        starts = [e for e in rec.events if e[0] == "start"]
        # only the graph run and the node runs (writers/branches are internal details)
        return [e for e in starts if e[1] in ("LangGraph", "a", "b")]

    differential(scenario)


def test_callbacks_on_node_error(differential):
    def scenario(E):
        def bad(s):
            raise ValueError("cb")

        g = E.StateGraph(S)
        g.add_node("bad", bad)
        g.add_edge(E.START, "bad")
        rec = _Recorder()
        capture(lambda: g.compile().invoke({"log": []}, {"callbacks": [rec]}))
        return [e for e in rec.events if e[0] == "error"][-1:]

    differential(scenario)


def test_astream_events_v2_chain_events_for_graph_and_nodes(differential):
    async def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        events = [(ev["event"], ev["name"]) async for ev in g.compile().astream_events({"log": []}, version="v2")]
        return [e for e in events if e[1] in ("LangGraph", "a")]

    differential(scenario)


def test_run_name_and_tags_from_config_reach_nodes(differential):
    def scenario(E):
        seen = []

        def a(s, config):
            seen.append((sorted(config.get("tags", [])), config["metadata"].get("user_md")))
            return {"log": ["a"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_edge(E.START, "a")
        g.compile().invoke({"log": []}, {"tags": ["t-run"], "metadata": {"user_md": 1}, "run_name": "custom"})
        return seen

    differential(scenario)


# --- async with sync nodes ----------------------------------------------------------------


def test_ainvoke_runs_sync_nodes_with_context_available(differential):
    async def scenario(E):
        seen = []

        def a(s):
            seen.append(E.get_config()["metadata"]["langgraph_node"])
            E.get_stream_writer()("sync in async")
            return {"log": ["a"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_edge(E.START, "a")
        app = g.compile()
        chunks = [c async for c in app.astream({"log": []}, stream_mode=["custom", "updates"])]
        return seen, chunks, await app.ainvoke({"log": []})

    differential(scenario)


def test_stream_error_in_parallel_sync_branch_keeps_values_of_earlier_steps(differential):
    def scenario(E):
        def bad(s):
            raise RuntimeError("late failure")

        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("bad", bad)
        g.add_edge(E.START, "a")
        g.add_edge("a", "bad")
        return collect(lambda: g.compile().stream({"log": []}, stream_mode="values"))

    differential(scenario)


def test_astream_v2_values_interrupts_field_and_custom_ns(differential):
    async def scenario(E):
        async def a(s):
            E.get_stream_writer()({"k": "v"})
            return {"log": ["a"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_edge(E.START, "a")
        return await acollect(
            lambda: g.compile().astream({"log": []}, stream_mode=["values", "custom"], version="v2")
        )

    differential(scenario)

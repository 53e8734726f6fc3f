"""Async programs as users write them: ainvoke / astream / astream_events on async nodes.

Token streaming from a chat model inside an async node (`model.astream`, stream_mode
"messages", `astream_events(version="v2")` filtered on `langgraph_node`), several stream
modes with `subgraphs=True`, leaving an `async for` early, `asyncio.gather` of runs on one
compiled graph, cancellation (`wait_for`, `task.cancel()`, a failing sibling), `step_timeout`,
`RetryPolicy`, async routers, sync and async nodes in one run, the functional API.

Parallel async branches finish in a fixed order here (sleeps 30 ms+ apart), so LangGraph's
completion order is deterministic; run ids of events are normalized by the harness.
"""

import asyncio
import operator
import uuid
from typing import Annotated

from _diff import acapture, acollect
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from typing_extensions import TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    n: int


def _cfg(name="t"):
    return {"configurable": {"thread_id": f"{name}-{uuid.uuid4().hex}"}}


def _one_node_app(E, schema, name, node, **compile_kw):
    """START -> name: the one-node graph that wraps a node or subgraph, compiled with compile_kw."""
    g = E.StateGraph(schema)
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile(**compile_kw)


def _model(*texts):
    return GenericFakeChatModel(messages=iter([AIMessage(t) for t in texts]))


def _summing_agent_app(E, model):
    """START -> agent, an async node summing the chunks of `model.astream(messages)`."""

    async def agent(s):
        full = None
        async for ch in model.astream(s["messages"]):
            full = ch if full is None else full + ch
        return {"messages": [full]}

    return _one_node_app(E, E.MessagesState, "agent", agent)


def _hist(app_hist):
    return [(s.values, s.next, s.metadata.get("source"), s.metadata.get("step"),
             [(t.name, repr(t.error), t.interrupts) for t in s.tasks])
            for s in app_hist]


async def _ahist(app, cfg):
    return _hist([s async for s in app.aget_state_history(cfg)])


def _chunk_view(chunk):
    """A `messages`-mode item: the chunk and the metadata keys a UI reads."""
    msg, md = chunk
    return (type(msg).__name__, msg.content, md.get("langgraph_node"), md.get("langgraph_step"),
            md.get("langgraph_triggers"), md.get("langgraph_path"), md.get("langgraph_checkpoint_ns"),
            md.get("tags"), md.get("ls_provider"), md.get("ls_model_type"))


# ============================================================================================
# token streaming from chat models in async nodes
# ============================================================================================


def test_async_node_iterating_model_astream_streams_each_token_in_messages_mode(differential):
    """The common agent node: `async for chunk in model.astream(...)`, chunks summed and
    returned. stream_mode="messages" yields each token chunk with its node metadata; the
    final state holds the summed message."""

    async def scenario(E):
        app = _summing_agent_app(E, _model("the quick brown fox"))
        items = [c async for c in app.astream({"messages": [HumanMessage("hi", id="h")]},
                                             stream_mode="messages")]
        final = await _summing_agent_app(E, _model("again here")).ainvoke({"messages": [HumanMessage("hi", id="h")]})
        return [_chunk_view(c) for c in items], [(type(m).__name__, m.content) for m in final["messages"]]

    differential(scenario)


def test_messages_updates_and_custom_modes_with_subgraphs_from_async_nodes(differential):
    """stream_mode=["updates", "messages", "custom"], subgraphs=True: an async node in a
    subgraph writes custom events around a model call; the parent's async node too. Each
    item is (namespace, mode, payload) with the subgraph's namespace on its events."""

    async def scenario(E):
        model = _model("inner answer", "outer answer")

        async def inner(s):
            w = E.get_stream_writer()
            w({"stage": "inner-start"})
            r = await model.ainvoke(s["messages"])
            w({"stage": "inner-done"})
            return {"messages": [r]}

        sb = E.StateGraph(E.MessagesState)
        sb.add_node("inner", inner)
        sb.add_edge(E.START, "inner")

        async def outer(s, writer: E.StreamWriter):
            writer("outer-start")
            full = None
            async for ch in model.astream(s["messages"]):
                full = ch if full is None else full + ch
            return {"messages": [full]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("sub", sb.compile())
        g.add_node("outer", outer)
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "outer")
        app = g.compile()
        out = []
        async for ns, mode, payload in app.astream({"messages": [HumanMessage("q", id="h")]},
                                                    stream_mode=["updates", "messages", "custom"],
                                                    subgraphs=True):
            if mode == "messages":
                payload = _chunk_view(payload)
            out.append((ns, mode, payload))
        return out

    differential(scenario)


def test_nostream_tagged_model_is_left_out_of_messages_mode(differential):
    """A model bound with tags=["nostream"] (a classifier call) inside an async node is
    not streamed in "messages" mode; the untagged model's tokens are."""

    async def scenario(E):
        hidden = _model("classified as positive").with_config(tags=["nostream"])
        shown = _model("visible reply")

        async def node(s):
            label = await hidden.ainvoke(s["messages"])
            reply = await shown.ainvoke(s["messages"])
            return {"messages": [AIMessage(label.content, id="label"), reply]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        items = [c async for c in g.compile().astream({"messages": [HumanMessage("x", id="h")]},
                                                       stream_mode="messages")]
        return [_chunk_view(c) for c in items]

    differential(scenario)


def test_astream_events_v2_token_streaming_filtered_on_the_node(differential):
    """The docs' token-streaming loop: astream_events(version="v2"), keep
    on_chat_model_stream events whose metadata["langgraph_node"] is the agent node; a
    second model call in another node is filtered out."""

    async def scenario(E):
        model = _model("streamed token text here", "summary not shown")

        async def agent(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        async def summarize(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("summarize", summarize)
        g.add_edge(E.START, "agent")
        g.add_edge("agent", "summarize")
        app = g.compile()
        tokens, seen_nodes = [], []
        async for ev in app.astream_events({"messages": [HumanMessage("hi", id="h")]}, version="v2"):
            if ev["event"] == "on_chat_model_stream":
                seen_nodes.append(ev["metadata"]["langgraph_node"])
                if ev["metadata"]["langgraph_node"] == "agent":
                    tokens.append(ev["data"]["chunk"].content)
        return tokens, seen_nodes

    differential(scenario)


def test_astream_events_v2_sequence_of_events_names_and_nodes(differential):
    """Every event of astream_events(version="v2") over a graph with an async model node,
    a sync node and a conditional edge: the sequence of (event, name, langgraph_node,
    tags), and chunk contents; run ids and parent ids are normalized."""

    async def scenario(E):
        model = _model("a b c")

        async def agent(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        def post(s):
            return {"messages": [AIMessage("done", id="done")]}

        def route(s):
            return "post" if len(s["messages"]) < 3 else E.END

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("post", post)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", route)
        app = g.compile()
        out = []
        async for ev in app.astream_events({"messages": [HumanMessage("hi", id="h")]}, version="v2"):
            chunk = ev["data"].get("chunk")
            content = getattr(chunk, "content", None) if ev["event"] == "on_chat_model_stream" else None
            out.append((ev["event"], ev["name"], ev["metadata"].get("langgraph_node"),
                        sorted(t for t in ev.get("tags", []) if not t.startswith("graph:step")),
                        content, len(ev.get("parent_ids", []))))
        return out

    differential(scenario)


def test_astream_events_v2_custom_events_and_subgraph_model_tokens(differential):
    """adispatch_custom_event from an async node and model tokens from inside a subgraph,
    seen through astream_events(version="v2"): names, data, node and checkpoint_ns prefix."""

    async def scenario(E):
        from langchain_core.callbacks.manager import adispatch_custom_event

        model = _model("sub tokens")

        async def inner(s):
            await adispatch_custom_event("progress", {"pct": 50})
            return {"messages": [await model.ainvoke(s["messages"])]}

        sb = E.StateGraph(E.MessagesState)
        sb.add_node("inner", inner)
        sb.add_edge(E.START, "inner")
        g = E.StateGraph(E.MessagesState)
        g.add_node("sub", sb.compile())
        g.add_edge(E.START, "sub")
        out = []
        async for ev in g.compile().astream_events({"messages": [HumanMessage("q", id="h")]}, version="v2"):
            if ev["event"] in ("on_custom_event", "on_chat_model_stream", "on_chat_model_end"):
                data = ev["data"]
                if "chunk" in data:
                    data = data["chunk"].content
                elif "output" in data:
                    data = data["output"].content
                out.append((ev["event"], ev["name"], ev["metadata"].get("langgraph_node"),
                            ev["metadata"].get("langgraph_checkpoint_ns", "").split(":")[0], data))
        return out

    differential(scenario)


# ============================================================================================
# leaving a stream early, concurrent runs, cancellation
# ============================================================================================


def _abc(E, ran, checkpointer=None, delays=None):
    delays = delays or {}

    def mk(n):
        async def f(s):
            ran.append(n)
            await asyncio.sleep(delays.get(n, 0))
            return {"log": [n]}

        return f

    g = E.StateGraph(S)
    for n in ("a", "b", "c"):
        g.add_node(n, mk(n))
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile(checkpointer=checkpointer)


def test_breaking_out_of_astream_keeps_the_finished_steps_checkpointed_and_resumes(differential):
    """`async for` broken after the first update on a thread with a checkpointer: `a` ran
    and is saved, `b` never started; `ainvoke(None)` runs b and c from there."""

    async def scenario(E):
        ran = []
        app = _abc(E, ran, E.InMemorySaver())
        cfg = _cfg()
        first = None
        async for chunk in app.astream({"log": []}, cfg, stream_mode="updates"):
            first = chunk
            break
        await asyncio.sleep(0.05)
        st = await app.aget_state(cfg)
        ran_before = list(ran)
        final = await app.ainvoke(None, cfg)
        return first, ran_before, st.values, st.next, final, ran, await _ahist(app, cfg)

    differential(scenario)


def test_breaking_out_of_astream_with_subgraphs_true_mid_subgraph(differential):
    """subgraphs=True, the consumer leaves after the subgraph's first update: the parent's
    saved state still has the subgraph's node to run; resuming finishes the subgraph."""

    async def scenario(E):
        ran = []

        def mk(n):
            async def f(s):
                ran.append(n)
                return {"log": [n]}

            return f

        sb = E.StateGraph(S)
        sb.add_node("s1", mk("s1"))
        sb.add_node("s2", mk("s2"))
        sb.add_edge(E.START, "s1")
        sb.add_edge("s1", "s2")
        g = E.StateGraph(S)
        g.add_node("sub", sb.compile())
        g.add_node("after", mk("after"))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "after")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        seen = []
        async for ns, chunk in app.astream({"log": []}, cfg, subgraphs=True):
            seen.append((ns, chunk))
            if ns:
                break
        await asyncio.sleep(0.05)
        st = await app.aget_state(cfg)
        final = await app.ainvoke(None, cfg)
        return seen, list(ran), st.values, st.next, final

    differential(scenario)


def test_gather_of_ainvoke_on_several_threads_of_one_graph(differential):
    """One compiled graph with a checkpointer, five threads run by asyncio.gather (each
    pausing at an interrupt), then resumed by another gather with per-thread answers: no
    thread sees another's state."""

    async def scenario(E):
        async def work(s):
            await asyncio.sleep(0.01 * (5 - s["n"]))
            return {"log": [f"work{s['n']}"]}

        async def ask(s):
            answer = E.interrupt({"n": s["n"]})
            return {"log": [f"ans:{answer}"]}

        g = E.StateGraph(S)
        g.add_node("work", work)
        g.add_node("ask", ask)
        g.add_edge(E.START, "work")
        g.add_edge("work", "ask")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfgs = [_cfg(f"g{i}") for i in range(5)]
        first = await asyncio.gather(*(app.ainvoke({"log": [], "n": i}, c) for i, c in enumerate(cfgs)))
        second = await asyncio.gather(*(app.ainvoke(E.Command(resume=f"r{i}"), c)
                                        for i, c in enumerate(cfgs)))
        states = [(await app.aget_state(c)).values for c in cfgs]
        return first, second, states

    differential(scenario)


def test_gather_of_astream_consumers_on_two_threads_each_get_their_own_run(differential):
    """Two `astream` consumers of one graph gathered together, each on its own thread:
    each collects only its own run's updates, in order."""

    async def scenario(E):
        ran = []
        app = _abc(E, ran, E.InMemorySaver(), delays={"a": 0.01, "b": 0.02})

        async def consume(i):
            return [c async for c in app.astream({"log": [i]}, _cfg(f"s{i}"), stream_mode="values")]

        return await asyncio.gather(consume(0), consume(1))

    differential(scenario)


def test_failing_async_node_cancels_the_slow_sibling_which_sees_cancelled_error(differential):
    """Async fan-out: `bad` raises while `slow` is awaiting. `slow` gets CancelledError at
    its await (its except/finally runs), the stream ends with the error after the earlier
    updates, and the error is what `astream` raises."""

    async def scenario(E):
        seen = []

        async def a(s):
            return {"log": ["a"]}

        async def bad(s):
            await asyncio.sleep(0.02)
            raise ConnectionError("upstream down")

        async def slow(s):
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                seen.append("slow cancelled")
                raise
            finally:
                seen.append("slow finally")
            return {"log": ["slow"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("bad", bad)
        g.add_node("slow", slow)
        g.add_edge(E.START, "a")
        g.add_edge("a", "bad")
        g.add_edge("a", "slow")
        app = g.compile()
        items = await acollect(lambda: app.astream({"log": []}, stream_mode=["updates", "values"]))
        return items, seen

    differential(scenario)


def test_wait_for_timeout_around_ainvoke_then_resume_the_thread(differential):
    """asyncio.wait_for(app.ainvoke(...), 0.15) while step 2's node sleeps 1 s: TimeoutError
    for the caller, the node was cancelled, step 1 is saved; ainvoke(None) re-runs only
    the cancelled node."""

    async def scenario(E):
        calls = []

        async def fetch(s):
            calls.append("fetch")
            return {"log": ["fetch"]}

        async def slow(s):
            calls.append("slow")
            if calls.count("slow") == 1:
                try:
                    await asyncio.sleep(1)
                except asyncio.CancelledError:
                    calls.append("slow cancelled")
                    raise
            return {"log": ["slow"]}

        g = E.StateGraph(S)
        g.add_node("fetch", fetch)
        g.add_node("slow", slow)
        g.add_edge(E.START, "fetch")
        g.add_edge("fetch", "slow")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r = await acapture(lambda: asyncio.wait_for(app.ainvoke({"log": []}, cfg, durability="sync"), 0.15))
        st = await app.aget_state(cfg)
        final = await app.ainvoke(None, cfg)
        return r, list(calls), st.values, st.next, final, calls

    differential(scenario, exc="class")


def test_cancelling_the_task_running_ainvoke_then_resuming(differential):
    """A run started with asyncio.create_task and cancelled mid-node: awaiting the task
    raises CancelledError; the thread resumes from the last finished step."""

    async def scenario(E):
        calls = []
        started = asyncio.Event()

        async def one(s):
            calls.append("one")
            return {"log": ["one"]}

        async def two(s):
            calls.append("two")
            started.set()
            if calls.count("two") == 1:
                await asyncio.sleep(1)
            return {"log": ["two"]}

        g = E.StateGraph(S)
        g.add_node("one", one)
        g.add_node("two", two)
        g.add_edge(E.START, "one")
        g.add_edge("one", "two")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        task = asyncio.create_task(app.ainvoke({"log": []}, cfg, durability="sync"))
        await started.wait()
        task.cancel()
        try:
            await task
            outcome = "finished"
        except asyncio.CancelledError:
            outcome = "cancelled"
        st = await app.aget_state(cfg)
        final = await app.ainvoke(None, cfg)
        return outcome, st.values, st.next, final, calls

    differential(scenario)


# ============================================================================================
# step_timeout, RetryPolicy
# ============================================================================================


def test_step_timeout_on_async_nodes_keeps_the_fast_sibling_and_resumes(differential):
    """step_timeout=0.1 with two async branches: `fast` finishes, `slow` (0.5 s) is
    cancelled and the run raises TimeoutError. The thread keeps `fast`'s writes; with the
    timeout lifted, ainvoke(None) runs only `slow`."""

    async def scenario(E):
        calls = []

        async def a(s):
            return {"log": ["a"]}

        async def fast(s):
            calls.append("fast")
            return {"log": ["fast"]}

        async def slow(s):
            calls.append("slow")
            await asyncio.sleep(0.5)
            return {"log": ["slow"]}

        g = E.StateGraph(S)
        for n, f in (("a", a), ("fast", fast), ("slow", slow)):
            g.add_node(n, f)
        g.add_edge(E.START, "a")
        g.add_edge("a", "fast")
        g.add_edge("a", "slow")
        app = g.compile(checkpointer=E.InMemorySaver())
        app.step_timeout = 0.1
        cfg = _cfg()
        r = await acapture(lambda: app.ainvoke({"log": []}, cfg))
        st = await app.aget_state(cfg)
        tasks = sorted((t.name, t.result) for t in st.tasks)
        app.step_timeout = None
        final = await app.ainvoke(None, cfg)
        return r, st.next, tasks, final, sorted(calls)

    differential(scenario)


def test_async_node_with_retry_policy_retries_until_success_and_streams_once(differential):
    """An async node failing twice with ConnectionError under RetryPolicy(max_attempts=3):
    the third attempt succeeds, the stream shows one update, attempts are counted."""

    async def scenario(E):
        attempts = []

        async def flaky(s):
            attempts.append(len(attempts) + 1)
            await asyncio.sleep(0)
            if len(attempts) < 3:
                raise ConnectionError(f"try {len(attempts)}")
            return {"log": [f"ok after {len(attempts)}"]}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.001,
                                                              jitter=False))
        g.add_edge(E.START, "flaky")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        items = await acollect(lambda: app.astream({"log": []}, cfg, stream_mode=["updates", "values"]))
        return items, attempts, await _ahist(app, cfg)

    differential(scenario)


def test_async_retry_policy_gives_up_and_only_retries_matching_errors(differential):
    """retry_on a predicate: a ValueError is retried up to max_attempts and then raised;
    a TypeError is raised at once; a list of policies picks the first that matches."""

    async def scenario(E):
        attempts = {"v": 0, "t": 0, "k": 0}

        async def always_value(s):
            attempts["v"] += 1
            raise ValueError("bad value")

        async def type_err(s):
            attempts["t"] += 1
            raise TypeError("bad type")

        async def key_err(s):
            attempts["k"] += 1
            if attempts["k"] < 4:
                raise KeyError("k")
            return {"log": ["k ok"]}

        def run(fn, policy):
            g = E.StateGraph(S)
            g.add_node("n", fn, retry_policy=policy)
            g.add_edge(E.START, "n")
            return g.compile().ainvoke({"log": []})

        pol = E.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False,
                            retry_on=lambda e: isinstance(e, ValueError))
        policies = [E.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False,
                                  retry_on=ValueError),
                    E.RetryPolicy(max_attempts=5, initial_interval=0.001, jitter=False,
                                  retry_on=KeyError)]
        return (await acapture(lambda: run(always_value, pol)),
                await acapture(lambda: run(type_err, pol)),
                await acapture(lambda: run(key_err, policies)),
                attempts)

    differential(scenario)


# ============================================================================================
# async routers, sync + async nodes, interrupts, Send, abatch, functional API
# ============================================================================================


def test_async_conditional_edges_with_path_map_lists_and_end(differential):
    """Async routing functions: one with a path_map returning a label, one returning a
    list of nodes (fan-out), one awaiting before returning END; values streamed."""

    async def scenario(E):
        async def classify(s):
            await asyncio.sleep(0)
            return "big" if s["n"] > 5 else "small"

        async def fan(s):
            return ["x", "y"]

        async def stop(s, config):
            await asyncio.sleep(0)
            return E.END if config["configurable"].get("stop") else "again"

        g = E.StateGraph(S)
        g.add_node("start", lambda s: {"log": ["start"]})
        g.add_node("big_node", lambda s: {"log": ["big"]})
        g.add_node("small_node", lambda s: {"log": ["small"]})
        g.add_node("x", lambda s: {"log": ["x"]})
        g.add_node("y", lambda s: {"log": ["y"]})
        g.add_node("again", lambda s: {"log": ["again"]})
        g.add_edge(E.START, "start")
        g.add_conditional_edges("start", classify, {"big": "big_node", "small": "small_node"})
        g.add_conditional_edges("big_node", fan)
        g.add_conditional_edges("small_node", stop)
        app = g.compile()
        return ([c async for c in app.astream({"log": [], "n": 9}, stream_mode="values")],
                await app.ainvoke({"log": [], "n": 1}, {"configurable": {"stop": True}}),
                await app.ainvoke({"log": [], "n": 1}, {"configurable": {"stop": False}}))

    differential(scenario)


def test_sync_and_async_nodes_in_one_parallel_step_via_ainvoke(differential):
    """ainvoke over a graph whose parallel step has a sync node (run in a thread) and two
    async nodes: updates arrive as each finishes (timed 40 ms apart), the reducer sees
    the writes in node order, and sync nodes read the config through get_config()."""

    async def scenario(E):
        import time

        def sync_node(s):
            time.sleep(0.04)
            return {"log": [("sync", E.get_config()["metadata"]["langgraph_node"])]}

        async def quick(s):
            return {"log": ["quick"]}

        async def late(s):
            await asyncio.sleep(0.08)
            return {"log": ["late"]}

        g = E.StateGraph(S)
        g.add_node("start", lambda s: {"log": ["start"]})
        g.add_node("sync_node", sync_node)
        g.add_node("quick", quick)
        g.add_node("late", late)
        g.add_node("join", lambda s: {"log": ["join"]})
        g.add_edge(E.START, "start")
        for n in ("late", "sync_node", "quick"):
            g.add_edge("start", n)
        g.add_edge(["late", "sync_node", "quick"], "join")
        app = g.compile()
        updates = [c async for c in app.astream({"log": []}, stream_mode="updates")]
        return updates, await app.ainvoke({"log": []})

    differential(scenario)


def test_async_human_in_the_loop_via_astream_and_command_resume(differential):
    """The HITL loop with astream: an async node calls interrupt() with a draft, the
    stream shows `__interrupt__`; astream(Command(resume=...)) continues; a second
    interrupt is answered with Command(resume=, update=)."""

    async def scenario(E):
        async def draft(s):
            return {"log": ["draft v1"]}

        async def review(s):
            verdict = E.interrupt({"draft": s["log"][-1], "question": "ok?"})
            if verdict == "edit":
                again = E.interrupt("what edit?")
                return {"log": [f"edited:{again}"]}
            return {"log": [f"verdict:{verdict}"]}

        g = E.StateGraph(S)
        g.add_node("draft", draft)
        g.add_node("review", review)
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "review")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        out = [[c async for c in app.astream({"log": []}, cfg, stream_mode="updates")]]
        out.append([c async for c in app.astream(E.Command(resume="edit"), cfg, stream_mode="updates")])
        out.append([c async for c in app.astream(E.Command(resume="shorter", update={"n": 1}), cfg,
                                                 stream_mode=["updates", "values"])])
        st = await app.aget_state(cfg)
        out.append((st.values, st.next, st.interrupts))
        return out

    differential(scenario)


def test_interrupt_in_an_async_subgraph_node_streamed_with_subgraphs_true(differential):
    """An interrupt raised in an async node of a subgraph, streamed with subgraphs=True
    and stream_mode=["values", "updates"]; resumed the same way; get_state(subgraphs=True)
    in between shows the subgraph's task and its interrupt."""

    async def scenario(E):
        async def ask(s):
            return {"log": [E.interrupt("sub question")]}

        sb = E.StateGraph(S)
        sb.add_node("prep", lambda s: {"log": ["prep"]})
        sb.add_node("ask", ask)
        sb.add_edge(E.START, "prep")
        sb.add_edge("prep", "ask")
        g = E.StateGraph(S)
        g.add_node("sub", sb.compile())
        g.add_node("end", lambda s: {"log": ["end"]})
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "end")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        one = [c async for c in app.astream({"log": []}, cfg, stream_mode=["values", "updates"], subgraphs=True)]
        st = await app.aget_state(cfg, subgraphs=True)
        sub_state = st.tasks[0].state
        mid = (st.next, [(t.name, t.interrupts) for t in st.tasks],
               (sub_state.values, sub_state.next) if sub_state is not None else None)
        two = [c async for c in app.astream(E.Command(resume="answer"), cfg,
                                            stream_mode=["values", "updates"], subgraphs=True)]
        return one, mid, two

    differential(scenario)


def test_async_map_reduce_with_send_and_model_calls(differential):
    """Send fans out to an async node calling a model per topic (answers staggered 100 ms
    apart); the reduce step sees every answer in Send order; messages-mode items come in
    completion order with each node's metadata."""

    async def scenario(E):
        class MR(TypedDict, total=False):
            topics: list
            answers: Annotated[list, operator.add]
            summary: str

        async def write(s):
            m = _model(f"about {s['topic']}")
            await asyncio.sleep(0.1 * s["delay"])
            r = await m.ainvoke([HumanMessage(s["topic"])])
            return {"answers": [r.content]}

        def fan(s):
            return [E.Send("write", {"topic": t, "delay": len(s["topics"]) - i})
                    for i, t in enumerate(s["topics"])]

        async def reduce(s):
            return {"summary": " | ".join(s["answers"])}

        g = E.StateGraph(MR)
        g.add_node("write", write)
        g.add_node("reduce", reduce)
        g.add_conditional_edges(E.START, fan, ["write"])
        g.add_edge("write", "reduce")
        app = g.compile()
        items = []
        async for mode, payload in app.astream({"topics": ["cats", "dogs", "owls"], "answers": []},
                                               stream_mode=["messages", "updates"]):
            if mode == "messages":
                payload = _chunk_view(payload)
            items.append((mode, payload))
        return items

    differential(scenario)


def test_abatch_of_async_runs_with_return_exceptions(differential):
    """app.abatch over three inputs, one of which makes an async node raise;
    return_exceptions=True returns the error in its place; without it, abatch raises."""

    async def scenario(E):
        async def check(s):
            if s["n"] < 0:
                raise ValueError(f"negative {s['n']}")
            await asyncio.sleep(0.01 * s["n"])
            return {"log": [s["n"] * 2]}

        app = _one_node_app(E, S, "check", check)
        inputs = [{"log": [], "n": 3}, {"log": [], "n": -1}, {"log": [], "n": 1}]
        res = await app.abatch(inputs, return_exceptions=True)
        res = [r if not isinstance(r, Exception) else ("exc", type(r).__name__, str(r)) for r in res]
        return res, await acapture(lambda: app.abatch(inputs))

    differential(scenario)


def test_async_functional_api_tasks_gathered_with_interrupt_and_resume(differential):
    """@entrypoint async function with @task async calls gathered concurrently, an
    interrupt after them, and a resume: finished tasks are not re-run on resume; the
    stream shows each task's update."""

    async def scenario(E):
        calls = []

        @E.func.task
        async def square(x: int) -> int:
            calls.append(x)
            await asyncio.sleep(0.01 * (4 - x))
            return x * x

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        async def flow(nums: list) -> dict:
            squares = await asyncio.gather(*(square(n) for n in nums))
            ok = E.interrupt({"squares": list(squares)})
            return {"squares": list(squares), "ok": ok}

        cfg = _cfg()
        one = [c async for c in flow.astream([1, 2, 3], cfg, stream_mode="updates")]
        two = [c async for c in flow.astream(E.Command(resume="yes"), cfg, stream_mode="updates")]
        return one, two, sorted(calls), (await flow.aget_state(cfg)).values

    differential(scenario)


def test_async_node_model_chunk_state_and_checkpoints_stream(differential):
    """An async node returns a raw AIMessageChunk built from model.astream; with a
    checkpointer, stream_mode=["checkpoints", "tasks"] shows the saved message; the
    history holds the merged message as LangGraph stores it."""

    async def scenario(E):
        model = _model("chunky reply text")

        async def agent(s):
            chunks = [c async for c in model.astream(s["messages"])]
            merged = chunks[0]
            for c in chunks[1:]:
                merged = merged + c
            assert isinstance(merged, AIMessageChunk)
            return {"messages": [merged]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_edge(E.START, "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        items = [c async for c in app.astream({"messages": [HumanMessage("hi", id="h")]}, cfg,
                                             stream_mode=["checkpoints", "tasks"])]
        hist = [s.values for s in [h async for h in app.aget_state_history(cfg)]]
        return items, hist

    differential(scenario)


def test_async_runtime_context_reaches_async_nodes_and_routers(differential):
    """context_schema + ainvoke(context=...): async nodes read runtime.context, an async
    router reads get_runtime().context; the stream_mode="custom" writer of the runtime
    emits too."""

    async def scenario(E):
        class Ctx(TypedDict):
            user: str
            limit: int

        async def node(s, runtime: E.Runtime[Ctx]):
            runtime.stream_writer({"user": runtime.context["user"]})
            return {"log": [runtime.context["user"]], "n": s.get("n", 0) + 1}

        async def route(s):
            ctx = E.get_runtime().context
            return "node" if s["n"] < ctx["limit"] else E.END

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        g.add_conditional_edges("node", route)
        app = g.compile()
        items = [c async for c in app.astream({"log": [], "n": 0}, context={"user": "ann", "limit": 3},
                                             stream_mode=["custom", "updates"])]
        return items, await app.ainvoke({"log": [], "n": 0}, context={"user": "bo", "limit": 1})

    differential(scenario)


# ============================================================================================
# what counts as an async node; events at an interrupt; max_concurrency
# ============================================================================================


def test_async_callable_objects_partials_and_runnable_lambdas_run_as_async_nodes(differential):
    """Nodes given as an instance with `async def __call__`, a functools.partial of an
    async function, and a RunnableLambda over an async function: each is awaited (not
    returned as a coroutine) under ainvoke, and sync invoke says it cannot run them."""

    async def scenario(E):
        import functools

        from langchain_core.runnables import RunnableLambda

        class Tool:
            def __init__(self, tag):
                self.tag = tag

            async def __call__(self, s):
                await asyncio.sleep(0)
                return {"log": [self.tag]}

        async def tagged(s, tag):
            return {"log": [tag]}

        async def lam(s):
            return {"log": ["lambda"]}

        g = E.StateGraph(S)
        g.add_node("obj", Tool("obj"))
        g.add_node("part", functools.partial(tagged, tag="partial"))
        g.add_node("lam", RunnableLambda(lam))
        g.add_edge(E.START, "obj")
        g.add_edge("obj", "part")
        g.add_edge("part", "lam")
        app = g.compile()
        res = await app.ainvoke({"log": []})
        chunks = [c async for c in app.astream({"log": []}, stream_mode="updates")]
        return res, chunks

    differential(scenario)


def test_sync_node_calling_model_invoke_streams_tokens_under_astream(differential):
    """Under astream(stream_mode="messages"), a sync node calling model.invoke (run in a
    worker thread) streams its tokens like an async node calling model.ainvoke."""

    async def scenario(E):
        model = _model("sync side tokens", "async side tokens")

        def sync_agent(s):
            return {"messages": [model.invoke(s["messages"])]}

        async def async_agent(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("sync_agent", sync_agent)
        g.add_node("async_agent", async_agent)
        g.add_edge(E.START, "sync_agent")
        g.add_edge("sync_agent", "async_agent")
        items = [c async for c in g.compile().astream({"messages": [HumanMessage("q", id="h")]},
                                                       stream_mode="messages")]
        return [_chunk_view(c) for c in items]

    differential(scenario)


def test_astream_events_v2_around_an_interrupt_and_its_resume(differential):
    """astream_events(version="v2") on a run that stops at interrupt() in an async node
    and on the Command(resume=) run: the chain events (names, nodes) and what the graph's
    stream chunks carry."""

    async def scenario(E):
        async def prep(s):
            return {"log": ["prep"]}

        async def ask(s):
            return {"log": [E.interrupt("approve?")]}

        g = E.StateGraph(S)
        g.add_node("prep", prep)
        g.add_node("ask", ask)
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "ask")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        out = []
        for inp in ({"log": []}, E.Command(resume="yes")):
            evs = []
            async for ev in app.astream_events(inp, cfg, version="v2"):
                if ev["event"].startswith("on_chain"):
                    data = ev["data"].get("chunk", ev["data"].get("output")) if ev["name"] == "LangGraph" else None
                    evs.append((ev["event"], ev["name"], ev["metadata"].get("langgraph_node"), data))
            out.append(evs)
        return out

    differential(scenario)


def test_max_concurrency_limits_how_many_async_nodes_run_at_once(differential):
    """config max_concurrency=2 over five Send tasks of an async node: at most two run at
    once, they start in Send order, and the reducer sees results in Send order."""

    async def scenario(E):
        running, peak, starts = [0], [0], []

        async def work(s):
            starts.append(s["i"])
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            await asyncio.sleep(0.02)
            running[0] -= 1
            return {"log": [s["i"]]}

        g = E.StateGraph(S)
        g.add_node("work", work)
        g.add_conditional_edges(E.START, lambda s: [E.Send("work", {"i": i}) for i in range(5)], ["work"])
        res = await g.compile().ainvoke({"log": []}, {"max_concurrency": 2})
        return res, peak[0], starts

    differential(scenario)


def _whole_events(events):
    """Every event as (event, name, langgraph_node, tags, data, parent depth)."""
    return [(ev["event"], ev["name"], ev["metadata"].get("langgraph_node"),
             sorted(t for t in ev.get("tags", []) if not t.startswith("graph:step")),
             ev["data"], len(ev.get("parent_ids", []))) for ev in events]


def test_astream_events_v2_stream_a_chain_node_through_its_steps(differential):
    """A node that is an LCEL chain (`prompt | model | StrOutputParser() | to_state`):
    under `astream_events` LangGraph streams the node, so the parser reports every token
    (`on_parser_stream`) and the last step runs once on the whole text; the state gets the
    same joke. lgnb invoked the steps one by one: no parser stream, events in another order."""
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    class J(TypedDict):
        topic: str
        joke: str

    async def scenario(E):
        chain = (ChatPromptTemplate.from_template("a joke about {topic}") | _model(*["why did the chicken"] * 2)
                 | StrOutputParser() | RunnableLambda(lambda text: {"joke": text.upper()}))
        g = E.StateGraph(J)
        g.add_node("joke", chain)
        g.add_edge(E.START, "joke")
        app = g.compile()
        events = _whole_events(await acollect(lambda: app.astream_events({"topic": "hens"}, version="v2")))
        return events, await app.ainvoke({"topic": "hens"})

    ref = differential(scenario)
    assert sum(e[0] == "on_parser_stream" for e in ref[0]) == 7
    assert ref[1]["joke"] == "WHY DID THE CHICKEN"


def test_astream_events_v2_show_a_runnable_lambda_node_as_a_run_of_its_own(differential):
    """`add_node("n", RunnableLambda(f))` (sync and async functions, and one renamed with
    `with_config(run_name=...)`): under `astream_events` each is a run of its own below the
    node's, named after the function, with its output as a stream chunk, as on LangGraph;
    `ainvoke` gives the same state."""
    from langchain_core.runnables import RunnableLambda

    class C(TypedDict):
        x: int

    def bump(s):
        return {"x": s["x"] + 1}

    async def abump(s):
        return {"x": s["x"] * 10}

    async def scenario(E):
        g = E.StateGraph(C)
        g.add_node("n", RunnableLambda(bump))
        g.add_node("a", RunnableLambda(abump))
        g.add_node("m", RunnableLambda(bump).with_config(run_name="renamed"))
        g.add_edge(E.START, "n")
        g.add_edge("n", "a")
        g.add_edge("a", "m")
        app = g.compile()
        events = _whole_events(await acollect(lambda: app.astream_events({"x": 1}, version="v2")))
        return events, await app.ainvoke({"x": 1})

    ref = differential(scenario)
    names = [e[1] for e in ref[0] if e[0] == "on_chain_stream" and e[5] == 2]
    assert names == ["bump", "abump", "renamed"] and ref[1] == {"x": 21}

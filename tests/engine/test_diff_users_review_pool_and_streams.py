"""Steps wider than their threads, and Runnable nodes streamed under `astream_events`.

What users write: a fan-out of `Send`s (or many parallel branches) under
`max_concurrency=N`, with a node `error_handler=`, a `RetryPolicy`, an `interrupt()` in one
branch, a failing subgraph, `step_timeout`, `stream_mode="messages"` / `"custom"` while a
sibling fails; and LCEL nodes (`prompt | model | parser`, `RunnableParallel`,
`RunnableBranch`, `.with_fallbacks`, `.with_retry()`, a `RunnableLambda` returning a
Runnable, a generator function) watched by `astream_events(version="v2")` / `astream_log`.

What is observed: which tasks ran and in what order (max_concurrency=1 makes LangGraph's
pool order deterministic), the stream up to the error, the error, the checkpoint history
(pending writes: errors, `CancelledError`s, interrupts), what a resume runs and its result;
for streamed nodes the events (name, node, data, depth) and the state the node wrote.

Timing: a failure happens at least 0.1 s after the step starts (LangGraph 1.2.24 forgets a
failure raised while it still hands the step's tasks to its pool), and tasks that must not
free a thread before it is seen sleep 0.3 s.

Left alone on purpose: with `stream_mode` "custom" or "messages" (or `subgraphs=True`), a
sync LangGraph 1.2.24 run submits its stream waiter to the same pool as the tasks, so
`max_concurrency=2` runs one task at a time and `max_concurrency=1` never starts a task
(the run hangs). lgnb runs `max_concurrency` tasks at once there; no scenario here mixes
those modes with `max_concurrency`.

A sync node that returns an async-only Runnable works in an async run: LangGraph awaits
its `ainvoke`, and so does lgnb (on the run's event loop, from the node's thread).
"""

import asyncio
import operator
import threading
import time
from typing import Annotated

import pytest
from _diff import acapture, acollect, capture, collect
from test_diff_users_parallel_and_errors import S, _cfg, _hist  # noqa: E402 - shared scenario helpers
from typing_extensions import TypedDict


def _fan_out(E, w, n, *, checkpointer=None, **node_kw):
    """START -> `n` Sends to `w` (its argument: the index)."""
    g = E.StateGraph(S)
    g.add_node("w", w, **node_kw)
    g.add_conditional_edges(E.START, lambda s: [E.Send("w", i) for i in range(n)], ["w"])
    return g.compile(checkpointer=checkpointer)


# ============================================================================================
# a node error handler in a step wider than its threads
# ============================================================================================


def test_an_error_handler_runs_after_the_tasks_already_waiting_for_the_one_thread(differential):
    """`max_concurrency=1` over four Sends; `w(0)` fails and `w`'s `error_handler` takes
    over. LangGraph's pool of one thread was handed the four tasks first, so the handler
    it submits on seeing the failure runs after `w(1)`, `w(2)`, `w(3)`; the step's stream
    shows it last. Nothing is cancelled (a handled failure stops no sibling)."""

    def scenario(E):
        def run(cp):
            calls = []

            def w(i):
                calls.append(f"w{i}")
                if i == 0:
                    raise ValueError("w0 failed")
                return {"log": [f"w{i}"]}

            def handler(s, error: E.errors.NodeError):
                calls.append("h")
                return {"log": [f"handled {error.node}"]}

            app = _fan_out(E, w, 4, checkpointer=E.InMemorySaver() if cp else None,
                           error_handler=handler)
            cfg = _cfg(max_concurrency=1)
            chunks = collect(lambda: app.stream({"log": []}, cfg, stream_mode=["updates", "tasks"]))
            return chunks, calls, _hist(app, cfg) if cp else None

        return [run(False), run(True)]

    ref = differential(scenario)
    assert ref[0][1] == ["w0", "w1", "w2", "w3", "h"]


def test_async_an_error_handler_waits_behind_the_tasks_max_concurrency_holds_back(differential):
    """The async twin: LangGraph made every task an asyncio task waiting on the semaphore
    of `max_concurrency=1`; the handler's task waits behind them, so it runs last."""

    async def scenario(E):
        calls = []

        async def w(i):
            calls.append(f"w{i}")
            await asyncio.sleep(0.01)
            if i == 0:
                raise ValueError("w0 failed")
            return {"log": [f"w{i}"]}

        async def handler(s, error: E.errors.NodeError):
            calls.append("h")
            return {"log": [f"handled {error.node}"]}

        app = _fan_out(E, w, 4, checkpointer=E.InMemorySaver(), error_handler=handler)
        cfg = _cfg(max_concurrency=1)
        chunks = await acollect(lambda: app.astream({"log": []}, cfg, stream_mode="updates"))
        return chunks, calls, _hist(app, cfg)

    ref = differential(scenario)
    assert ref[1] == ["w0", "w1", "w2", "w3", "h"]


# ============================================================================================
# what is not a failure: an interrupt, a retried attempt
# ============================================================================================


def test_an_interrupt_in_a_wide_step_lets_the_held_back_tasks_run(differential):
    """`max_concurrency=2` over five Sends; `w(0)` calls `interrupt()` 0.1 s in. An
    interrupt stops no sibling: every task runs, the run pauses with w0's question, and
    the resume runs only `w(0)`."""

    def scenario(E):
        calls = []

        def w(i):
            calls.append(i)
            if i == 0:
                time.sleep(0.1)
                return {"log": [f"w0:{E.interrupt('ok?')}"]}
            time.sleep(0.3)
            return {"log": [f"w{i}"]}

        app = _fan_out(E, w, 5, checkpointer=E.InMemorySaver())
        cfg = _cfg(max_concurrency=2)
        first = capture(lambda: app.invoke({"log": []}, cfg))
        ran = sorted(calls)
        calls.clear()
        resumed = capture(lambda: app.invoke(E.Command(resume="yes"), cfg))
        return first, ran, resumed, sorted(calls), _hist(app, cfg)

    ref = differential(scenario)
    assert ref[1] == [0, 0, 1, 2, 3, 4][1:] and ref[3] == [0]


def test_a_retried_task_keeps_its_thread_and_its_final_failure_cancels_the_queued(differential):
    """`w` has `RetryPolicy(max_attempts=2)`; `max_concurrency=2` over five Sends. `w(0)`
    fails twice (0.1 s each), while `w(1)` still holds the other thread: the retry does
    not give its thread away; on the final failure the freed thread takes `w(2)` and
    `w(3)`, `w(4)` are cancelled (saved with a `CancelledError`); the resume runs `w(0)`
    and the two cancelled."""

    def scenario(E):
        calls = []
        fail = {"on": True}

        def w(i):
            calls.append(i)
            if i == 0 and fail["on"]:
                time.sleep(0.1)
                raise ValueError("w0 failed")
            time.sleep(0.3)
            return {"log": [f"w{i}"]}

        policy = E.RetryPolicy(max_attempts=2, initial_interval=0.01, jitter=False,
                               retry_on=ValueError)
        app = _fan_out(E, w, 5, checkpointer=E.InMemorySaver(), retry_policy=policy)
        cfg = _cfg(max_concurrency=2)
        r = capture(lambda: app.invoke({"log": []}, cfg))
        time.sleep(0.4)
        ran = sorted(calls)
        calls.clear()
        fail["on"] = False
        resumed = capture(lambda: app.invoke(None, cfg))
        return r, ran, _hist(app, cfg), resumed, sorted(calls)

    ref = differential(scenario)
    assert ref[1] == [0, 0, 1, 2] and ref[4] == [0, 3, 4]


# ============================================================================================
# after the failure: siblings still running fail, interrupt, stream
# ============================================================================================


@pytest.mark.parametrize("then", ["fails", "interrupts", "handled"])
def test_a_sibling_still_running_when_the_step_failed_is_saved_as_it_ends(differential, then):
    """`max_concurrency=2` over five Sends (`Send("v", 1)`, the others to `w`): `w(0)`
    fails 0.1 s in, `v` runs on and then fails too / calls `interrupt()` / fails with
    `v`'s error handler attached (which nobody runs any more). The run raises w0's error;
    the history keeps what `v` left; the resume runs what LangGraph runs."""

    def scenario(E):
        calls = []
        fail = {"on": True}

        def w(i):
            calls.append(f"w{i}")
            if fail["on"] and i == 0:
                time.sleep(0.1)
                raise ValueError("w0 failed")
            time.sleep(0.3)
            return {"log": [f"w{i}"]}

        def v(i):
            calls.append("v")
            time.sleep(0.3)
            if fail["on"]:
                if then == "interrupts":
                    return {"log": [f"v:{E.interrupt('v asks')}"]}
                raise KeyError("v failed late")
            return {"log": ["v"]}

        def handler(s, error: E.errors.NodeError):
            calls.append("h")
            return {"log": ["handled"]}

        g = E.StateGraph(S)
        g.add_node("w", w)
        g.add_node("v", v, **({"error_handler": handler} if then == "handled" else {}))
        g.add_conditional_edges(
            E.START, lambda s: [E.Send("v" if i == 1 else "w", i) for i in range(5)], ["w", "v"])
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg(max_concurrency=2)
        chunks = collect(lambda: app.stream({"log": []}, cfg, stream_mode="updates"))
        time.sleep(0.5)
        ran = sorted(calls)
        calls.clear()
        fail["on"] = False
        hist = _hist(app, cfg)
        resumed = capture(lambda: app.invoke(E.Command(resume="yes") if then == "interrupts" else None, cfg))
        return chunks, ran, hist, resumed, sorted(calls)

    ref = differential(scenario)
    assert ref[1] == ["v", "w0", "w2"]


def test_custom_and_messages_a_sibling_streams_after_the_failure_are_not_shown(differential):
    """`stream_mode=["custom", "messages", "updates"]` over two Sends: `w(1)` writes a
    custom event and streams a model's tokens at once, then again 0.1 s after `w(0)`
    failed. The stream ends at the failure: only what came before it shows; `w(1)`'s
    writes are saved as it ends. (Without `max_concurrency`: see the module's notes.)"""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    def scenario(E):
        failed = threading.Event()

        def w(i):
            writer = E.get_stream_writer()
            if i == 0:
                time.sleep(0.15)
                failed.set()
                raise ValueError("w0 failed")
            writer({"w1": "early"})
            model = GenericFakeChatModel(messages=iter([AIMessage("early words"), AIMessage("late words")]))
            model.invoke("x")
            failed.wait(2)
            time.sleep(0.1)
            writer({"w1": "late"})
            model.invoke("y")
            return {"log": [f"w{i}"]}

        app = _fan_out(E, w, 2, checkpointer=E.InMemorySaver())
        cfg = _cfg()
        chunks = collect(lambda: app.stream({"log": []}, cfg, stream_mode=["custom", "messages", "updates"]))
        time.sleep(0.3)
        view = [(c[0], c[1] if c[0] != "messages" else (c[1][0].content, c[1][1]["langgraph_node"]))
                if isinstance(c, tuple) and len(c) == 2 else c for c in chunks]
        return view, _hist(app, cfg)

    ref = differential(scenario)
    assert ("custom", {"w1": "early"}) in ref[0] and ("custom", {"w1": "late"}) not in ref[0]


# ============================================================================================
# a failing subgraph, step_timeout
# ============================================================================================


def test_a_subgraph_failing_in_a_wide_step_cancels_the_queued_copies(differential):
    """Five Sends to a subgraph node under `max_concurrency=2`; copy 0 fails inside the
    subgraph 0.1 s in. As with a plain node: the freed thread takes copy 2, copies 3 and 4
    are cancelled, and the resume runs copies 0, 3 and 4 (each subgraph from its start)."""

    class Sub(TypedDict):
        i: int
        log: Annotated[list, operator.add]

    def scenario(E):
        calls = []
        fail = {"on": True}

        def inner(s):
            calls.append(s["i"])
            if s["i"] == 0 and fail["on"]:
                time.sleep(0.1)
                raise ValueError("copy 0 failed")
            time.sleep(0.3)
            return {"log": [f"sub{s['i']}"]}

        sub = E.StateGraph(Sub)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(Sub)
        g.add_node("sub", sub.compile())
        g.add_conditional_edges(E.START, lambda s: [E.Send("sub", {"i": i, "log": []}) for i in range(5)],
                                ["sub"])
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg(max_concurrency=2)
        r = capture(lambda: app.invoke({"i": -1, "log": []}, cfg))
        time.sleep(0.4)
        ran = sorted(calls)
        calls.clear()
        fail["on"] = False
        hist = _hist(app, cfg)
        resumed = capture(lambda: app.invoke(None, cfg))
        return r, ran, hist, resumed, sorted(calls)

    ref = differential(scenario)
    assert ref[1] == [0, 1, 2] and ref[4] == [0, 3, 4]


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_step_timeout_in_a_wide_step_records_the_queued_tasks_as_cancelled(differential, durability):
    """`step_timeout=0.15` with `max_concurrency=2` over five Sends that sleep 0.3 s: the
    step times out with `w(0)`, `w(1)` running; LangGraph cancels the three its pool had
    not started, saving a `CancelledError` for each, and keeps the two that end late."""

    def scenario(E):
        calls = []

        def w(i):
            calls.append(i)
            time.sleep(0.3)
            return {"log": [f"w{i}"]}

        app = _fan_out(E, w, 5, checkpointer=E.InMemorySaver())
        app.step_timeout = 0.15
        cfg = _cfg(max_concurrency=2)
        r = capture(lambda: app.invoke({"log": []}, cfg, durability=durability))
        time.sleep(0.4)
        ran = sorted(calls)
        calls.clear()
        app.step_timeout = None
        hist = _hist(app, cfg)
        resumed = capture(lambda: app.invoke(None, cfg))
        return r, ran, hist, resumed, sorted(calls)

    ref = differential(scenario)
    assert ref[1] == [0, 1]


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
@pytest.mark.parametrize("max_concurrency", [None, 2])
def test_async_step_timeout_records_every_task_it_stopped_as_cancelled(differential, durability, max_concurrency):
    """The async twin: five async Sends that sleep 0.3 s, `step_timeout=0.15`, with and
    without `max_concurrency=2`. LangGraph raises a bare `TimeoutError` and cancels every
    task, the running and the held-back ones, each saved with a `CancelledError` (not
    under durability "exit"); the resume runs all five."""

    async def scenario(E):
        calls = []

        async def w(i):
            calls.append(i)
            await asyncio.sleep(0.3)
            return {"log": [f"w{i}"]}

        app = _fan_out(E, w, 5, checkpointer=E.InMemorySaver())
        app.step_timeout = 0.15
        cfg = _cfg(max_concurrency=max_concurrency)
        r = await acapture(lambda: app.ainvoke({"log": []}, cfg, durability=durability))
        ran = sorted(calls)
        calls.clear()
        app.step_timeout = None
        hist = _hist(app, cfg)
        resumed = await acapture(lambda: app.ainvoke(None, cfg))
        return r, ran, hist, resumed, sorted(calls)

    ref = differential(scenario)
    assert ref[1] == ([0, 1] if max_concurrency else [0, 1, 2, 3, 4]) and ref[4] == [0, 1, 2, 3, 4]


# ============================================================================================
# Runnable nodes under astream_events / astream_log
# ============================================================================================


class M(TypedDict):
    messages: Annotated[list, operator.add]


class C(TypedDict, total=False):
    x: int
    out: Annotated[list, operator.add]


def _events(events):
    """Every event as (event, name, langgraph_node, tags, data, parent depth)."""
    return [(ev["event"], ev["name"], ev["metadata"].get("langgraph_node"),
             sorted(t for t in ev.get("tags", []) if not t.startswith("graph:step")),
             ev["data"], len(ev.get("parent_ids", []))) if isinstance(ev, dict) else ev
            for ev in events]


def _one_node(E, schema, node, **compile_kw):
    g = E.StateGraph(schema)
    g.add_node("n", node)
    g.add_edge(E.START, "n")
    return g.compile(**compile_kw)


async def _events_and_state(E, app, inp, *, cp=False):
    """The events of `astream_events(v2)`, the state that run left (with a checkpointer)
    and what `ainvoke` returns for the same input."""
    cfg = _cfg()
    events = _events(await acollect(lambda: app.astream_events(inp, cfg, version="v2")))
    left = (await app.aget_state(cfg)).values if cp else None
    return events, left, await acapture(lambda: app.ainvoke(inp, _cfg()))


def test_astream_events_a_chain_ending_in_a_model_hands_the_next_step_a_chunk(differential):
    """`prompt | model | RunnableLambda(lambda m: {"messages": [m]})`, a plain list
    channel: under `astream_events` the last step gets the model's chunks added up (an
    `AIMessageChunk`), under `ainvoke` an `AIMessage`; each is what the state keeps."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    async def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage("one two three", id="m1")] * 3))
        chain = (ChatPromptTemplate.from_messages([("human", "say {x}")]) | model
                 | RunnableLambda(lambda m: {"messages": [m]}))
        g = E.StateGraph(M)
        g.add_node("n", lambda s: {"messages": []})
        g.add_node("chain", (lambda s: {"x": "it"}) | chain)
        g.add_edge(E.START, "chain")
        app = g.compile(checkpointer=E.InMemorySaver())
        events, left, invoked = await _events_and_state(E, app, {"messages": []}, cp=True)
        # stream_mode="messages" streams the model's tokens, not the node: an AIMessage
        cfg = _cfg()
        tokens = [(m.content, md["langgraph_node"]) async for m, md in
                  app.astream({"messages": []}, cfg, stream_mode="messages")]
        kept = [type(m).__name__ for m in (await app.aget_state(cfg)).values["messages"]]
        return events, [type(m).__name__ for m in left["messages"]], left, invoked, tokens, kept

    ref = differential(scenario)
    assert ref[1] == ["AIMessageChunk"] and ref[5] == ["AIMessage"]


def test_astream_events_a_chain_with_a_tool_calling_model(differential):
    """`prompt | model.bind_tools([...]) | to_state`: the model streams its words and then
    its tool call as chunks; the node's state update carries the assembled tool call, the
    events show the model's stream under the node."""
    from _scripted import Scripted
    from langchain_core.messages import AIMessage
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    async def scenario(E):
        reply = AIMessage("let me look", id="r1",
                          tool_calls=[{"name": "lookup", "args": {"q": "hens"}, "id": "call_1"}])
        model = Scripted(script=iter([reply, reply]))
        chain = (ChatPromptTemplate.from_messages([("placeholder", "{messages}")])
                 | model.bind_tools([lookup])
                 | RunnableLambda(lambda m: {"messages": [m]}))
        app = _one_node(E, E.MessagesState, chain, checkpointer=E.InMemorySaver())
        events, left, invoked = await _events_and_state(E, app, {"messages": [("human", "hi")]}, cp=True)
        calls = [(type(m).__name__, m.content, getattr(m, "tool_calls", None)) for m in left["messages"]]
        return events, calls, invoked

    differential(scenario)


@pytest.mark.parametrize("kind", ["parallel", "branch", "fallbacks", "lambda_returning_chain",
                                  "binding", "generator_lambda"])
def test_astream_events_nodes_of_each_runnable_kind(differential, kind):
    """A node that is a `RunnableParallel` (dict of steps), a `RunnableBranch`, a
    `.with_fallbacks` whose primary fails, a `RunnableLambda` returning a chain, a
    `.with_config(...)` binding of a chain, a `RunnableLambda` over a generator: the
    events of `astream_events` and the state each leaves, as on LangGraph; `ainvoke`
    agrees on the state."""
    from langchain_core.runnables import RunnableBranch, RunnableLambda, RunnableParallel

    def to_out(v):
        return {"out": [v]}

    async def scenario(E):
        double = RunnableLambda(lambda s: s["x"] * 2, name="double")
        if kind == "parallel":  # (async steps 40 ms apart: they end in a fixed order)
            async def inc(s):
                await asyncio.sleep(0.01)
                return [s["x"] + 1]

            async def tenfold(s):
                await asyncio.sleep(0.05)
                return s["x"] * 10

            node = RunnableParallel(out=RunnableLambda(inc), x=RunnableLambda(tenfold))
        elif kind == "branch":
            node = RunnableBranch((lambda s: s["x"] > 5, double | to_out),
                                  RunnableLambda(lambda s: {"out": ["small"]}, name="small"))
        elif kind == "fallbacks":
            def broken(s):
                raise ValueError("primary down")
            node = RunnableLambda(broken).with_fallbacks([double | to_out])
        elif kind == "lambda_returning_chain":
            node = RunnableLambda(lambda s: double | to_out, name="pick")
        elif kind == "binding":
            node = (double | to_out).with_config(run_name="bound", tags=["mine"])
        else:
            def gen(s):
                yield {"out": [s["x"]]}
                yield {"out": [s["x"] + 1]}
            node = RunnableLambda(gen)
        app = _one_node(E, C, node, checkpointer=E.InMemorySaver())
        return await _events_and_state(E, app, {"x": 7}, cp=True)

    differential(scenario)


def test_astream_events_a_with_retry_node_is_streamed_so_not_retried(differential):
    """`add_node("n", flaky.with_retry(stop_after_attempt=2))`: LangChain's `RunnableRetry`
    retries `invoke`, not a stream. Under `astream_events` LangGraph streams the node, so
    its first failure fails the run; under `ainvoke` the retry succeeds."""
    from langchain_core.runnables import RunnableLambda

    async def scenario(E):
        async def run(how):
            attempts = []

            def flaky(s):
                attempts.append(1)
                if len(attempts) == 1:
                    raise ConnectionError("flaky")
                return {"out": ["ok"]}

            app = _one_node(E, C, RunnableLambda(flaky).with_retry(stop_after_attempt=2,
                                                                 wait_exponential_jitter=False))
            if how == "events":
                got = [e[:2] for e in _events(await acollect(lambda: app.astream_events({"x": 1}, version="v2")))]
            else:
                got = await acapture(lambda: app.ainvoke({"x": 1}))
            return got, len(attempts)

        return [await run("events"), await run("ainvoke")]

    differential(scenario)


def test_astream_events_a_streamed_node_with_a_retry_policy_shows_each_attempt(differential):
    """A `RunnableLambda` node with `retry_policy=RetryPolicy(max_attempts=3)` failing
    twice: under `astream_events` every attempt is a run of its own (start, error; then
    start, stream, end), in LangGraph's order, and the state gets the last attempt's."""
    from langchain_core.runnables import RunnableLambda

    async def scenario(E):
        attempts = []

        def flaky(s):
            attempts.append(1)
            if len(attempts) < 3:
                raise ConnectionError(f"attempt {len(attempts)}")
            return {"out": [f"ok after {len(attempts)}"]}

        g = E.StateGraph(C)
        g.add_node("n", RunnableLambda(flaky),
                   retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False))
        g.add_edge(E.START, "n")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        events = _events(await acollect(lambda: app.astream_events({"x": 1}, cfg, version="v2")))
        return events, (await app.aget_state(cfg)).values, len(attempts)

    differential(scenario)


@pytest.mark.parametrize("as_node", [True, False])
def test_astream_events_chain_nodes_inside_a_subgraph(differential, as_node):
    """A subgraph whose node is `prompt | model | StrOutputParser() | to_state`, a node
    of the parent or run by an async node's `await sub.ainvoke(state)`: under
    `astream_events` the subgraph's chain streams too (the parser's tokens), with the
    subgraph's namespace in each event's metadata."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    class J(TypedDict, total=False):
        topic: str
        joke: str

    async def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage("why did it cross")] * 2))
        chain = (ChatPromptTemplate.from_template("joke on {topic}") | model | StrOutputParser()
                 | RunnableLambda(lambda t: {"joke": t.upper()}))
        sub = E.StateGraph(J)
        sub.add_node("joke", chain)
        sub.add_edge(E.START, "joke")
        sub_app = sub.compile()

        async def calls_sub(s):  # a subgraph run from inside a node
            return await sub_app.ainvoke(s)

        g = E.StateGraph(J)
        g.add_node("sub", sub_app if as_node else calls_sub)
        g.add_edge(E.START, "sub")
        app = g.compile()
        raw = await acollect(lambda: app.astream_events({"topic": "hens"}, version="v2"))
        events = _events(raw)
        parsers = [(ev["data"], ev["metadata"].get("langgraph_checkpoint_ns", "").split(":")[0])
                   for ev in raw if ev["event"] == "on_parser_stream"]
        return events, parsers, await app.ainvoke({"topic": "hens"})

    ref = differential(scenario)
    assert len(ref[1]) == 7


def test_astream_events_an_interrupt_in_a_streamed_lambda_node_and_the_resume(differential):
    """A `RunnableLambda` node calls `interrupt()`: under `astream_events` the run pauses
    (the events end with the graph's stream of the interrupt), and the resume, also under
    `astream_events`, runs the node again with the answer."""
    from langchain_core.runnables import RunnableLambda

    async def scenario(E):
        def ask(s):
            answer = E.interrupt({"q": "go?"})
            return {"out": [f"answer {answer}"]}

        app = _one_node(E, C, RunnableLambda(ask), checkpointer=E.InMemorySaver())
        cfg = _cfg()
        first = _events(await acollect(lambda: app.astream_events({"x": 1}, cfg, version="v2")))
        st = await app.aget_state(cfg)
        second = _events(await acollect(lambda: app.astream_events(E.Command(resume="yes"), cfg, version="v2")))
        return first, [i.value for i in st.interrupts], second, (await app.aget_state(cfg)).values

    differential(scenario)


def test_astream_log_a_chain_node_streams_its_parser_output(differential):
    """`astream_log` over a graph whose node is `prompt | model | StrOutputParser() |
    to_state`: the patches (op, path, value) name the same runs and streamed outputs as
    LangGraph's, ids and times aside."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    class J(TypedDict, total=False):
        topic: str
        joke: str

    async def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage("why did it cross")]))
        chain = (ChatPromptTemplate.from_template("joke on {topic}") | model | StrOutputParser()
                 | RunnableLambda(lambda t: {"joke": t.upper()}))
        app = _one_node(E, J, chain)
        ops = []
        async for patch in app.astream_log({"topic": "hens"}, include_names=["StrOutputParser"]):
            for op in patch.ops:
                if op["path"].endswith(("/start_time", "/end_time")):
                    continue
                value = op.get("value")
                if isinstance(value, dict):
                    value = {k: v for k, v in value.items() if k not in ("start_time", "end_time")}
                ops.append((op["op"], op["path"], value))
        return ops

    differential(scenario)


def test_astream_events_closed_mid_chain_node(differential):
    """The consumer leaves `astream_events` at the first parser token of a chain node
    (`aclose`): the run stops there; the thread keeps nothing of the node and a resume
    streams the whole chain again."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    class J(TypedDict, total=False):
        topic: str
        joke: str

    async def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage("why did it cross")] * 2))
        chain = (ChatPromptTemplate.from_template("joke on {topic}") | model | StrOutputParser()
                 | RunnableLambda(lambda t: {"joke": t.upper()}))
        app = _one_node(E, J, chain, checkpointer=E.InMemorySaver())
        cfg = _cfg()
        seen = []
        it = app.astream_events({"topic": "hens"}, cfg, version="v2")
        async for ev in it:
            seen.append((ev["event"], ev["name"]))
            if ev["event"] == "on_parser_stream":
                break
        await it.aclose()
        st = await app.aget_state(cfg)
        hist = [(s.next, s.values, [(t.name, repr(t.error)) for t in s.tasks])
                async for s in app.aget_state_history(cfg)]
        resumed = await acapture(lambda: app.ainvoke(None, cfg))
        return seen, st.values, st.next, hist, resumed

    differential(scenario)


def test_astream_events_a_lambda_node_with_a_timeout_is_streamed_too(differential):
    """`add_node("n", RunnableLambda(async_fn), timeout=5)`: a node timeout does not change
    how LangGraph runs the node under `astream_events`: the lambda is a run of its own
    with its output as a stream chunk, as without the timeout."""
    from langchain_core.runnables import RunnableLambda

    async def scenario(E):
        async def bump(s):
            return {"out": [s["x"] + 1]}

        async def run(**kw):
            g = E.StateGraph(C)
            g.add_node("n", RunnableLambda(bump), **kw)
            g.add_edge(E.START, "n")
            app = g.compile()
            return _events(await acollect(lambda: app.astream_events({"x": 1}, version="v2")))

        return [await run(timeout=5), await run()]

    ref = differential(scenario)
    assert ref[0] == ref[1]


@pytest.mark.parametrize("kind", ["generator", "async_generator", "lambda_of_generator",
                                  "lambda_of_async_generator", "runnable_generator"])
def test_generator_nodes_run_as_langchain_runs_them(differential, kind):
    """A node written as a generator (`def n(s): yield {...}`), an async generator, either
    wrapped in `RunnableLambda`, or a `RunnableGenerator`: LangGraph makes a bare generator
    function a `RunnableLambda`, whose output is its chunks added up (dicts do not add: the
    last one). What each way of running gives: `invoke`, `stream`, `ainvoke`, and the
    events of `astream_events` (a sync generator cannot be streamed asynchronously)."""
    from langchain_core.runnables import RunnableGenerator, RunnableLambda

    def gen(s):
        yield {"out": [s["x"]]}
        yield {"out": [s["x"] + 1]}

    async def agen(s):
        yield {"out": [s["x"]]}
        yield {"out": [s["x"] + 1]}

    def transform(chunks):
        for s in chunks:
            yield {"out": [s["x"] * 3]}

    async def atransform(chunks):
        async for s in chunks:
            yield {"out": [s["x"] * 3]}

    async def scenario(E):
        node = {"generator": gen, "async_generator": agen,
                "lambda_of_generator": RunnableLambda(gen),
                "lambda_of_async_generator": RunnableLambda(agen),
                "runnable_generator": RunnableGenerator(transform, atransform)}[kind]
        app = _one_node(E, C, node)
        return (capture(lambda: app.invoke({"x": 1})),
                capture(lambda: list(app.stream({"x": 1}, stream_mode="updates"))),
                await acapture(lambda: app.ainvoke({"x": 1})),
                _events(await acollect(lambda: app.astream_events({"x": 1}, version="v2"))))

    differential(scenario)


def test_a_sync_node_returning_an_async_only_runnable_in_an_async_run(differential):
    """`def n(s): return RunnableLambda(async_fn)`: LangGraph runs the returned Runnable
    on the node's input, with `ainvoke` in an async run (plain, and under
    `astream_events`)."""
    from langchain_core.runnables import RunnableLambda

    async def scenario(E):
        async def bump(s):
            return {"out": [s["x"] + 1]}

        app = _one_node(E, C, lambda s: RunnableLambda(bump))
        return (await acapture(lambda: app.ainvoke({"x": 1})),
                _events(await acollect(lambda: app.astream_events({"x": 1}, version="v2"))))

    differential(scenario)


def test_a_sync_node_returning_a_runnable_with_both_sides_runs_its_async_side_in_an_async_run(differential):
    """`RunnableLambda(f, afunc=af)` returned by a sync node: `invoke` in a sync run (`f`),
    awaited `ainvoke` in an async run (`af`), each saved as the step's write."""
    from langchain_core.runnables import RunnableLambda

    async def scenario(E):
        def sync_side(s):
            return {"out": [f"sync {s['x']}"]}

        async def async_side(s):
            return {"out": [f"async {s['x']}"]}

        app = _one_node(E, C, lambda s: RunnableLambda(sync_side, afunc=async_side),
                        checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "both"}}
        return (capture(lambda: app.invoke({"x": 1}, {"configurable": {"thread_id": "sync"}})),
                await acapture(lambda: app.ainvoke({"x": 2}, cfg)),
                (await app.aget_state(cfg)).values)

    differential(scenario)


def test_an_async_only_runnable_returned_inside_a_subgraph_streams_and_its_failure_is_retried(differential):
    """The returned async-only Runnable inside a subgraph's sync node, streamed with
    `subgraphs=True`; when it raises, the node's retry policy runs the node again and the
    run ends with the second attempt's write."""
    from langchain_core.runnables import RunnableLambda

    async def scenario(E):
        attempts = []

        async def flaky(s):
            attempts.append(s["x"])
            if len(attempts) == 1:
                raise ValueError("first attempt fails")
            return {"out": [s["x"] * 10]}

        sub = E.StateGraph(C)
        sub.add_node("inner", lambda s: RunnableLambda(flaky),
                     retry_policy=E.RetryPolicy(initial_interval=0, jitter=False,
                                                retry_on=ValueError))
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(C)
        g.add_node("outer", sub.compile())
        g.add_edge(E.START, "outer")
        app = g.compile()
        chunks = await acollect(lambda: app.astream({"x": 3}, stream_mode="updates", subgraphs=True))
        return chunks, attempts

    differential(scenario)

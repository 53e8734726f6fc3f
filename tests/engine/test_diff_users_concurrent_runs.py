"""One compiled graph serving many runs at once, as apps use it: each run's outcome is the
one it gives alone.

A web app serving several users from threads, `asyncio.gather` of `ainvoke`/`astream`
runs on one app, a notebook advancing two `app.stream` generators by hand, runs in a
`ThreadPoolExecutor`: every run sees only its own input, writes only its own thread and
streams only its own events. lgnb learns facts per compiled graph and per node (a node's
last run was quick, so it runs inline; it read the config, so it is built eagerly; the
messages channel's id index): those must never change what another run computes.

Nodes are fast for some inputs and slow (`time.sleep(0.002)`) for others, so lgnb's
learned flags flip from run to run while runs overlap. Observables are per run (final
state, the run's own stream chunks, its interrupts, `get_state` of its thread), never the
global interleaving; where LangGraph emits a step's parallel updates in completion order
they compare as per-step multisets. Checkpointed cases run on a shared `InMemorySaver` and
on a shared SQLite file: lgnb's own `SqliteSaver` on lgnb, LangGraph's `InMemorySaver` as
the reference (the outcome a run gives alone on LangGraph does not depend on its saver).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import operator
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import pytest
from _diff import Engine, acollect, capture, collect, snapshot_summary, steps_as_multisets
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from typing_extensions import TypedDict

SLOW = 0.002
"""A node's sleep in its slow runs: above lgnb's 1 ms "quick" threshold."""


class S(TypedDict, total=False):
    n: int
    log: Annotated[list, operator.add]


def _cfg(i: int, prefix: str = "u") -> dict:
    return {"configurable": {"thread_id": f"{prefix}{i}"}}


def _in_threads(fn: Callable[[int], Any], count: int) -> list:
    """`fn(i)` for i in range(count) on `count` threads started together; results in i order."""
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda i: capture(lambda: fn(i)), range(count)))



def _sequence(E, *nodes):
    """A StateGraph over `S` running `nodes` ((name, fn) pairs) one after the other."""
    g = E.StateGraph(S)
    prev = E.START
    for name, fn in nodes:
        g.add_node(name, fn)
        g.add_edge(prev, name)
        prev = name
    return g

def _nap(slow: bool) -> None:
    if slow:
        time.sleep(SLOW)


@contextlib.contextmanager
def _saver(E: Engine, kind: str, tmp_path: Path) -> Iterator[Any]:
    """The checkpointer every run shares: an `InMemorySaver`, or for "sqlite" lgnb's
    `SqliteSaver` on a file on lgnb (LangGraph's `InMemorySaver` as the reference)."""
    if kind == "sqlite" and E.root == "lgnb":
        sqlite = importlib.import_module("lgnb.checkpoint.sqlite")
        with sqlite.SqliteSaver.from_conn_string(str(tmp_path / f"{E.label}.sqlite")) as saver:
            yield saver
    else:
        yield E.InMemorySaver()


SAVERS = pytest.mark.parametrize("saver_kind", ["memory", "sqlite"])


def _diamond(E: Engine, **compile_kw: Any) -> Any:
    """prep -> (left, right) -> join; each node is slow or fast depending on the run's n."""

    def prep(s: S) -> dict:
        _nap(s["n"] % 2 == 1)
        return {"log": [f"prep{s['n']}"]}

    def left(s: S) -> dict:
        _nap(s["n"] % 3 == 0)
        return {"log": [f"left{s['n']}"]}

    def right(s: S) -> dict:
        _nap(s["n"] % 4 == 1)
        return {"log": [f"right{s['n']}"]}

    def join(s: S) -> dict:
        return {"log": [f"join{len(s['log'])}"]}

    g = E.StateGraph(S)
    g.add_node("prep", prep)
    g.add_node("left", left)
    g.add_node("right", right)
    g.add_node("join", join)
    g.add_edge(E.START, "prep")
    g.add_edge("prep", "left")
    g.add_edge("prep", "right")
    g.add_edge(["left", "right"], "join")
    return g.compile(**compile_kw)


def _updates_by_step(chunks: list) -> list:
    """`updates` chunks of a run with a parallel step: that step's updates as a multiset
    (LangGraph reports parallel sync nodes as they finish)."""
    return steps_as_multisets(chunks, lambda c: isinstance(c, dict) and ("prep" in c or "join" in c))


# ============================================================================================
# threads on one compiled graph
# ============================================================================================


@pytest.mark.parametrize("threads", [8, 32])
def test_threads_invoking_one_graph_get_their_own_results_while_nodes_flip_fast_and_slow(
        differential, threads):
    """A server thread per request invokes the same app; a node's speed depends on the
    request, so every round some runs are slow where the previous ones were quick. Each
    run's result, `values` stream and `updates` stream are those it gives alone."""

    def scenario(E):
        app = _diamond(E)

        def run(i: int, round_no: int) -> tuple:
            n = i + round_no
            return (app.invoke({"n": n}),
                    list(app.stream({"n": n}, stream_mode="values")),
                    _updates_by_step(list(app.stream({"n": n}))))

        out = []
        for round_no in range(3):
            out.append(_in_threads(lambda i, r=round_no: run(i, r), threads))
        return out

    differential(scenario)


@SAVERS
def test_threads_on_a_shared_checkpointer_each_see_only_their_own_thread(
        differential, tmp_path, saver_kind):
    """Sixteen users, each on their own thread_id, invoke a checkpointed app twice at
    once; the second turn continues the user's own state and `get_state` shows only it."""

    def scenario(E):
        with _saver(E, saver_kind, tmp_path) as saver:
            app = _diamond(E, checkpointer=saver)

            def run(i: int) -> tuple:
                first = app.invoke({"n": i}, _cfg(i))
                second = app.invoke({"n": i + 1}, _cfg(i))
                return first, second, snapshot_summary(app.get_state(_cfg(i)))

            return _in_threads(run, 16)

    differential(scenario)


def _chat_state(E: Engine) -> type:
    return TypedDict("Chat", {"messages": Annotated[list, E.add_messages], "n": int})


def test_node_calling_a_chat_model_only_for_some_inputs_streams_tokens_of_those_runs_only(differential):
    """A router-like node calls a chat model only for some requests (others answer from a
    rule). Runs in threads, in three rounds where the inputs that call the model swap:
    each run streams the model's tokens (`messages` mode, with its own node metadata)
    exactly when it called the model, and its final state holds its own answer."""

    def scenario(E):
        def answer(s):
            n = s["n"]
            if n % 2 == 0:
                model = GenericFakeChatModel(messages=iter([AIMessage(f"model answer {n}", id=f"ai{n}")]))
                return {"messages": [model.invoke(s["messages"])]}
            _nap(n % 3 == 0)
            return {"messages": [AIMessage(f"rule answer {n}", id=f"ai{n}")]}

        g = E.StateGraph(_chat_state(E))
        g.add_node("answer", answer)
        g.add_edge(E.START, "answer")
        app = g.compile()

        def view(item):
            mode, payload = item
            if mode == "messages":
                msg, md = payload
                return (mode, type(msg).__name__, msg.content, msg.id, md.get("langgraph_node"),
                        md.get("langgraph_step"), md.get("thread_id"))
            return (mode, [(type(m).__name__, m.content, m.id) for m in payload["messages"]])

        def run(i: int, round_no: int) -> tuple:
            inp = {"messages": [HumanMessage(f"q{i}", id=f"h{i}")], "n": i + round_no}
            cfg = {"configurable": {"thread_id": f"t{i}"}}
            items = [view(c) for c in app.stream(inp, cfg, stream_mode=["messages", "values"])]
            final = app.invoke(inp, cfg)
            return items, [(type(m).__name__, m.content, m.id) for m in final["messages"]]

        out = []
        for round_no in range(3):
            out.append(_in_threads(lambda i, r=round_no: run(i, r), 16))
        return out

    differential(scenario)


@SAVERS
def test_messages_state_conversations_on_separate_threads_keep_their_own_message_ids(
        differential, tmp_path, saver_kind):
    """Sixteen conversations at once on one `MessagesState` app; every conversation uses
    the same message ids ("h1", "ai-1", ...) with its own contents, replaces a message by
    id and removes one. Some histories are long (300 messages). Each thread's messages
    are those of that conversation alone."""

    def scenario(E):
        def bot(s):
            msgs = s["messages"]
            _nap(len(msgs) % 2 == 0)
            return {"messages": [AIMessage(f"echo {msgs[-1].content} ({len(msgs)})", id=f"ai-{len(msgs) % 7}")]}

        def route(s):
            return E.END if "stop" in s["messages"][-1].content else "tidy"

        def tidy(s):
            return {"messages": [AIMessage(f"tidy {len(s['messages'])}", id="tidy")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("bot", bot)
        g.add_node("tidy", tidy)
        g.add_edge(E.START, "bot")
        g.add_conditional_edges("bot", route, ["tidy", E.END])
        g.add_edge("tidy", E.END)

        with _saver(E, saver_kind, tmp_path) as saver:
            app = g.compile(checkpointer=saver)

            def run(i: int) -> tuple:
                c = _cfg(i)
                long = [HumanMessage(f"old {i}.{k}", id=f"old{k}") for k in range(300 if i % 4 == 0 else 3)]
                r1 = app.invoke({"messages": [*long, HumanMessage(f"hello from {i}", id="h1")]}, c)
                r2 = app.invoke({"messages": [HumanMessage(f"edited by {i}", id="h1"),
                                              HumanMessage(f"more {i}", id="h2")]}, c)
                r3 = app.invoke({"messages": [RemoveMessage(id="old1"), HumanMessage(f"stop {i}", id="h3")]}, c)
                snap = app.get_state(c)
                return [[(type(m).__name__, m.id, m.content) for m in r["messages"][-6:]] + [len(r["messages"])]
                        for r in (r1, r2, r3, snap.values)]

            return _in_threads(run, 16)

    differential(scenario)


@SAVERS
def test_send_fan_out_in_concurrent_runs_collects_each_runs_own_workers(differential, tmp_path, saver_kind):
    """Each request fans out to its own number of workers with `Send` (some slow); sixteen
    requests at once, on a shared checkpointer: each result collects its own workers' writes
    in `Send` order."""

    class F(TypedDict, total=False):
        n: int
        results: Annotated[list, operator.add]

    def scenario(E):
        def work(arg):
            _nap(arg["x"] % 2 == 1)
            return {"results": [f"{arg['n']}:{arg['x']}"]}

        def fan(s):
            return [E.Send("work", {"n": s["n"], "x": x}) for x in range(s["n"] % 5 + 1)]

        g = E.StateGraph(F)
        g.add_node("work", work)
        g.add_node("done", lambda s: {"results": [f"done{len(s['results'])}"]})
        g.add_conditional_edges(E.START, fan, ["work"])
        g.add_edge("work", "done")
        with _saver(E, saver_kind, tmp_path) as saver:
            app = g.compile(checkpointer=saver)

            def run(i: int) -> tuple:
                return (app.invoke({"n": i}, _cfg(i)),
                        list(app.stream({"n": i + 1}, _cfg(i, "s"), stream_mode="values")),
                        snapshot_summary(app.get_state(_cfg(i))))

            return _in_threads(run, 16)

    differential(scenario)


@SAVERS
def test_interrupted_threads_resume_while_other_threads_run(differential, tmp_path, saver_kind):
    """Half the users hit an `interrupt` (an approval) and resume it with `Command(resume=)`
    while the other users' runs are still going; each gets its own interrupt, resumes
    with its own answer, and its thread's state is its own."""

    def scenario(E):
        def draft(s):
            _nap(s["n"] % 3 == 0)
            return {"log": [f"draft{s['n']}"]}

        def approve(s):
            if s["n"] % 2 == 0:
                answer = E.interrupt({"approve": s["n"]})
                return {"log": [f"approved:{answer}"]}
            return {"log": ["auto"]}

        def send(s):
            _nap(s["n"] % 4 == 1)
            return {"log": [f"sent{len(s['log'])}"]}

        g = _sequence(E, ("draft", draft), ("approve", approve), ("send", send))
        with _saver(E, saver_kind, tmp_path) as saver:
            app = g.compile(checkpointer=saver)

            def run(i: int) -> tuple:
                c = _cfg(i)
                first = app.invoke({"n": i}, c)
                paused = snapshot_summary(app.get_state(c))
                resumed = None
                if "__interrupt__" in first:
                    time.sleep(SLOW * (i % 3))  # others keep running meanwhile
                    resumed = list(app.stream(E.Command(resume=f"yes{i}"), c, stream_mode="updates"))
                return first, paused, resumed, snapshot_summary(app.get_state(c))

            return _in_threads(run, 16)

    differential(scenario)


# ============================================================================================
# asyncio
# ============================================================================================


@SAVERS
def test_asyncio_gather_of_ainvoke_and_astream_runs_on_one_app(differential, tmp_path, saver_kind):
    """`asyncio.gather` of 12 `ainvoke` and 12 `astream` runs of one app (async nodes that
    await for some inputs, a sync node in the middle), each on its own thread_id of a
    shared checkpointer: each result and each stream is the run's own."""

    async def scenario(E):
        async def a(s):
            if s["n"] % 2:
                await asyncio.sleep(SLOW)
            return {"log": [f"a{s['n']}"]}

        def b(s):
            _nap(s["n"] % 3 == 0)
            return {"log": [f"b{len(s['log'])}"]}

        async def c(s):
            if s["n"] % 4 == 1:
                await asyncio.sleep(SLOW)
            return {"log": [f"c{s['n']}"]}

        g = _sequence(E, ("a", a), ("b", b), ("c", c))
        with _saver(E, saver_kind, tmp_path) as saver:
            app = g.compile(checkpointer=saver)

            async def streamed(i):
                return await acollect(lambda: app.astream({"n": i}, _cfg(i, "s"), stream_mode=["updates", "values"]))

            invoked = asyncio.gather(*(app.ainvoke({"n": i}, _cfg(i)) for i in range(12)))
            streams = asyncio.gather(*(streamed(i) for i in range(12)))
            results, chunks = await asyncio.gather(invoked, streams)
            states = [snapshot_summary(await app.aget_state(_cfg(i))) for i in range(12)]
            return results, chunks, states

    differential(scenario)


def test_functional_api_entrypoints_under_gather_return_their_own_tasks_results(differential):
    """`asyncio.gather` of 16 runs of one `@entrypoint` whose `@task`s are slow for some
    inputs, on a shared `InMemorySaver`: each run returns its own tasks' results, streams
    its own task updates, and its thread stores its own value."""

    async def scenario(E):
        @E.func.task
        async def square(x: int) -> int:
            if x % 2:
                await asyncio.sleep(SLOW)
            return x * x

        @E.func.task
        def label(n: int, total: int) -> str:
            _nap(n % 3 == 0)
            return f"{n}:{total}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        async def main(n: int) -> str:
            squares = await asyncio.gather(*(square(x) for x in range(n % 4 + 1)))
            return await label(n, sum(squares))

        results = await asyncio.gather(*(main.ainvoke(i, _cfg(i)) for i in range(16)))
        streams = await asyncio.gather(*(
            acollect(lambda i=i: main.astream(i, _cfg(i, "s"), stream_mode="values")) for i in range(16)))
        states = [(await main.aget_state(_cfg(i))).values for i in range(16)]
        return results, streams, states

    differential(scenario)


# ============================================================================================
# generators advanced by hand (a notebook)
# ============================================================================================


def _chain(E: Engine, **compile_kw: Any) -> Any:
    """a -> b -> c -> d, nodes slow for some inputs."""
    def node(name: str, k: int) -> Any:
        def run(s):
            _nap((s["n"] + k) % 2 == 0)
            return {"log": [f"{name}{s['n']}"]}
        return run

    return _sequence(E, *((name, node(name, k)) for k, name in enumerate("abcd"))).compile(**compile_kw)


@pytest.mark.parametrize("checkpointed", [True, False], ids=["own-threads", "no-checkpointer"])
def test_two_stream_generators_advanced_alternately_by_hand_each_stream_their_own_run(
        differential, checkpointed):
    """A notebook calls `next()` on one `app.stream(...)`, then on another of the same app
    (own thread_ids, or no checkpointer at all), alternately until both end: each yields
    exactly the chunks it yields alone."""

    def scenario(E):
        app = _chain(E, checkpointer=E.InMemorySaver()) if checkpointed else _chain(E)
        cfgs = [_cfg(0), _cfg(1)] if checkpointed else [None, None]
        gens = [app.stream({"n": 1}, cfgs[0], stream_mode=["values", "updates"]),
                app.stream({"n": 2}, cfgs[1], stream_mode=["values", "updates"])]
        got: list[list] = [[], []]
        live = [True, True]
        while any(live):
            for k, gen in enumerate(gens):
                if live[k]:
                    try:
                        got[k].append(next(gen))
                    except StopIteration:
                        live[k] = False
        states = [snapshot_summary(app.get_state(c)) for c in cfgs] if checkpointed else None
        return got, states

    differential(scenario)


@pytest.mark.parametrize("checkpointed", [True, False], ids=["own-threads", "no-checkpointer"])
def test_stream_generator_closed_midway_leaves_the_other_to_complete(differential, checkpointed):
    """Two streams of one app advanced alternately; the first is abandoned after two chunks
    (`close()`), the other runs to its end with the chunks it yields alone; a new run on
    the app afterwards is unaffected."""

    def scenario(E):
        app = _chain(E, checkpointer=E.InMemorySaver()) if checkpointed else _chain(E)
        cfgs = [_cfg(0), _cfg(1), _cfg(2)] if checkpointed else [None, None, None]
        first = app.stream({"n": 1}, cfgs[0], stream_mode="updates")
        second = app.stream({"n": 2}, cfgs[1], stream_mode="updates")
        got: list[list] = [[], []]
        for _ in range(2):
            got[0].append(next(first))
            got[1].append(next(second))
        first.close()
        got[1].extend(second)
        after = collect(lambda: app.stream({"n": 3}, cfgs[2], stream_mode="updates"))
        return got, after, (snapshot_summary(app.get_state(cfgs[1])) if checkpointed else None)

    differential(scenario)


# ============================================================================================
# subgraphs
# ============================================================================================


@SAVERS
def test_nested_subgraphs_invoked_in_nodes_by_concurrent_runs(differential, tmp_path, saver_kind):
    """An outer node calls `middle.invoke(...)`, whose node calls `inner.invoke(...)`; the
    middle graph is also a node of the outer graph. Sixteen runs at once on a shared
    checkpointer: each run's result, its `updates` stream with subgraphs and its state
    are its own."""

    def scenario(E):
        def inner_node(s):
            _nap(s["n"] % 2 == 0)
            return {"log": [f"inner{s['n']}"]}

        inner = _sequence(E, ("inner_node", inner_node)).compile()

        def call_inner(s):
            out = inner.invoke({"n": s["n"] + 100})
            return {"log": [f"via-inner:{out['log']}"]}

        middle = _sequence(E, ("call_inner", call_inner),
                        ("tail", lambda s: {"log": [f"tail{len(s['log'])}"]})).compile()

        def call_middle(s):
            _nap(s["n"] % 3 == 0)
            out = middle.invoke({"n": s["n"]})
            return {"log": [f"via-middle:{len(out['log'])}"]}

        g = _sequence(E, ("call_middle", call_middle), ("middle", middle))
        with _saver(E, saver_kind, tmp_path) as saver:
            app = g.compile(checkpointer=saver)

            def run(i: int) -> tuple:
                return (app.invoke({"n": i}, _cfg(i)),
                        list(app.stream({"n": i}, _cfg(i, "s"), stream_mode="updates", subgraphs=True)),
                        snapshot_summary(app.get_state(_cfg(i))))

            return _in_threads(run, 16)

    differential(scenario)


@SAVERS
def test_interrupt_inside_a_subgraph_called_from_a_node_resumes_per_thread_under_concurrency(
        differential, tmp_path, saver_kind):
    """A node calls a review subgraph (`review.invoke(...)`) that interrupts for some
    users; sixteen users at once, on a shared checkpointer. Each paused thread shows its
    own interrupt in `get_state(subgraphs=True)`, and resuming it finishes only that run."""

    def scenario(E):
        def check(s):
            _nap(s["n"] % 2 == 1)
            if s["n"] % 3 == 0:
                return {"log": [f"ok:{E.interrupt({'review': s['n']})}"]}
            return {"log": ["auto-ok"]}

        review = _sequence(E, ("check", check)).compile()

        def call_review(s):
            out = review.invoke({"n": s["n"], "log": []})
            return {"log": [f"reviewed:{out['log']}"]}

        g = _sequence(E, ("start", lambda s: {"log": [f"start{s['n']}"]}), ("call_review", call_review))
        with _saver(E, saver_kind, tmp_path) as saver:
            app = g.compile(checkpointer=saver)

            def run(i: int) -> tuple:
                c = _cfg(i)
                first = app.invoke({"n": i}, c)
                paused = snapshot_summary(app.get_state(c, subgraphs=True))
                resumed = app.invoke(E.Command(resume=f"fine{i}"), c) if "__interrupt__" in first else None
                return first, paused, resumed, snapshot_summary(app.get_state(c))

            return _in_threads(run, 16)

    differential(scenario)


def test_batch_and_abatch_runs_keep_their_own_config_context_and_errors(differential):
    """`app.batch(inputs, configs, return_exceptions=True)` (and `abatch`) run the inputs
    at once: each run has its own recursion limit, `configurable` value and runtime
    context; some fail; each result (or error) is the one that run gives alone."""

    from dataclasses import dataclass

    @dataclass
    class Ctx:
        user: str

    def build(E):
        def prep(s, runtime: E.Runtime[Ctx]):
            n = s["n"]
            if n % 5 == 4:
                raise ValueError(f"bad input {n}")
            _nap(n % 2 == 1)
            tag = [E.get_config()["configurable"]["tag"]] if n % 3 == 0 else []
            return {"log": [f"prep{n}:{runtime.context.user}", *tag]}

        def again(s):
            _nap(s["n"] % 2 == 0)
            return {"log": ["again"]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("prep", prep)
        g.add_node("again", again)
        g.add_node("side", lambda s: {"log": [f"side{s['n']}"]})
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "again")
        g.add_edge("prep", "side")
        g.add_conditional_edges("again", lambda s: "again" if len(s["log"]) < 3 + s["n"] % 7 else E.END,
                                ["again", E.END])
        return g.compile()

    def as_obs(results):
        return [("error", type(r).__name__, str(r)) if isinstance(r, Exception) else r for r in results]

    def configs(offset):
        return [{"configurable": {"tag": f"tag{i}"}, "recursion_limit": 4 + i % 6} for i in range(offset, offset + 12)]

    def scenario(E):
        app = build(E)
        inputs = [{"n": i} for i in range(12)]
        sync = app.batch(inputs, configs(0), return_exceptions=True, context=Ctx("ann"))
        aio = asyncio.run(app.abatch(inputs, configs(3), return_exceptions=True, context=Ctx("bob")))
        return as_obs(sync), as_obs(aio)

    differential(scenario)


@pytest.mark.parametrize("size", [5, 300])
def test_concurrent_runs_started_from_one_shared_history_list_leave_it_unchanged(differential, size):
    """Sixteen runs start at once from the same `history` list (a conversation loaded
    once), some adding a user message; nodes replace a message by id and remove one.
    Each run's `values` stream is its own and the shared list is left as it was."""

    def scenario(E):
        history = [HumanMessage(f"h{k}", id=f"h{k}") for k in range(size)]

        def replies(s) -> int:
            return sum(1 for m in s["messages"] if m.content.startswith("re "))

        def bot(s):
            msgs = s["messages"]
            k = replies(s)
            _nap(len(msgs) % 2 == 1)
            out = [AIMessage(f"re {msgs[-1].content} ({len(msgs)})", id=f"a{k}")]
            if (len(msgs) + k) % 2 == 0:
                out.append(HumanMessage(f"replaced at {len(msgs)}", id="h1"))
            if k == 2:
                out.append(RemoveMessage(id="h2"))
            return {"messages": out}

        def side(s):
            return {"messages": [AIMessage(f"side {len(s['messages'])}", id="side")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("bot", bot)
        g.add_node("side", side)
        g.add_edge(E.START, "bot")
        g.add_edge(E.START, "side")
        g.add_conditional_edges("bot", lambda s: "bot" if replies(s) < 4 else E.END,
                                ["bot", E.END])
        app = g.compile()

        def view(msgs):
            return [len(msgs)] + [(type(m).__name__, m.id, m.content) for m in msgs[:3] + msgs[-5:]]

        def run(i: int) -> list:
            inp = {"messages": [*history, HumanMessage(f"user {i}", id=f"u{i}")]} if i % 2 else {"messages": history}
            return [view(chunk["messages"]) for chunk in app.stream(inp, stream_mode="values")]

        return _in_threads(run, 16), view(history)

    differential(scenario)


def test_sync_entrypoint_with_tasks_invoked_from_threads(differential):
    """A sync `@entrypoint` fanning out to `@task`s (`.result()` on their futures), some
    slow, invoked from sixteen threads on a shared `InMemorySaver`: each run returns and
    stores its own value, and streams its own tasks' updates."""

    def scenario(E):
        @E.func.task
        def square(x: int) -> int:
            _nap(x % 2 == 1)
            return x * x

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def main(n: int) -> list:
            futures = [square(x) for x in range(n % 4 + 1)]
            return [n, *[f.result() for f in futures]]

        def run(i: int) -> tuple:
            updates = list(main.stream(i + 1, _cfg(i, "s"), stream_mode="updates"))
            # tasks report as they finish (in LangGraph too): their updates as a multiset
            return (main.invoke(i, _cfg(i)), sorted(updates[:-1], key=lambda u: u["square"]), updates[-1],
                    main.get_state(_cfg(i)).values)

        return _in_threads(run, 16)

    differential(scenario)


@pytest.mark.parametrize("checkpointed", [True, False], ids=["own-threads", "no-checkpointer"])
def test_two_streams_with_a_parallel_step_advanced_alternately_by_hand(differential, checkpointed):
    """Two `app.stream(...)` generators of a graph with a parallel step (and `custom`
    events written by its nodes), advanced alternately with `next()` in one thread: each
    stream's steps hold the events it yields alone (per step as a multiset: LangGraph
    reports parallel nodes as they finish)."""

    def scenario(E):
        def mk(name, slow_mod):
            def node(s):
                writer = E.get_stream_writer()
                writer({"start": name, "n": s["n"]})
                _nap(s["n"] % slow_mod == 0)
                return {"log": [f"{name}{s['n']}"]}
            return node

        g = E.StateGraph(S)
        for name, mod in (("prep", 2), ("left", 3), ("right", 2), ("join", 5)):
            g.add_node(name, mk(name, mod))
        g.add_edge(E.START, "prep")
        g.add_edge("prep", "left")
        g.add_edge("prep", "right")
        g.add_edge(["left", "right"], "join")
        app = g.compile(checkpointer=E.InMemorySaver() if checkpointed else None)
        cfgs = [_cfg(k) if checkpointed else None for k in range(3)]
        gens = [app.stream({"n": k}, cfgs[k], stream_mode=["values", "updates", "custom"]) for k in range(3)]
        got: list[list] = [[], [], []]
        live = [True, True, True]
        while any(live):
            for k, gen in enumerate(gens):
                if live[k]:
                    try:
                        got[k].append(next(gen))
                    except StopIteration:
                        live[k] = False
        return [steps_as_multisets(chunks, lambda c: c[0] == "values") for chunks in got]

    differential(scenario)


def _closing_app(E: Engine, ran: list, checkpointed: bool) -> Any:
    """prep -> (left: 50 ms, right, extra) -> join, each node noting its run in `ran` and
    writing a `custom` event first; left is the node still running when a stream stops."""

    def mk(name, delay):
        def node(s):
            E.get_stream_writer()({"in": name, "n": s["n"]})
            time.sleep(delay)
            ran.append(f"{name}{s['n']}")
            return {"log": [f"{name}{s['n']}"]}
        return node

    g = E.StateGraph(S)
    for name, delay in (("prep", 0), ("left", 0.05), ("right", 0), ("extra", 0), ("join", 0)):
        g.add_node(name, mk(name, delay))
    g.add_edge(E.START, "prep")
    for name in ("left", "right", "extra"):
        g.add_edge("prep", name)
    g.add_edge(["left", "right", "extra"], "join")
    return g.compile(checkpointer=E.InMemorySaver() if checkpointed else None)


@pytest.mark.parametrize("cut", [1, 2, 3, 4])
@pytest.mark.parametrize("checkpointed", [True, False], ids=["own-threads", "no-checkpointer"])
def test_closing_one_of_two_alternated_streams_mid_step_keeps_the_work_its_nodes_did(
        differential, checkpointed, cut):
    """Two `app.stream(...)` generators advanced alternately (after a warm-up run, so
    lgnb knows which nodes are quick); the first is closed after `cut` chunks, possibly
    while its parallel step runs. As in LangGraph, the nodes of that step already started
    finish (their side effects happen once), a checkpointed thread keeps their writes and
    resuming it does not run them again; the other stream yields what it yields alone."""

    def scenario(E):
        ran: list = []
        app = _closing_app(E, ran, checkpointed)
        cfgs = [_cfg(k) if checkpointed else None for k in range(3)]
        app.invoke({"n": 0}, cfgs[2])  # a warm-up run: the quick nodes are known
        ran.clear()
        first = app.stream({"n": 1}, cfgs[0], stream_mode=["updates", "custom"])
        second = app.stream({"n": 2}, cfgs[1], stream_mode=["updates", "custom"])
        got: list[list] = [[], []]
        for _ in range(cut):
            got[0].append(next(first))
            got[1].append(next(second))
        first.close()
        got[1].extend(second)
        ran_at_close = sorted(ran)
        if not checkpointed:
            return len(got[0]), sorted(map(repr, got[1])), ran_at_close
        paused = snapshot_summary(app.get_state(cfgs[0]))
        resumed = app.invoke(None, cfgs[0])
        return len(got[0]), sorted(map(repr, got[1])), ran_at_close, paused, resumed, sorted(ran)

    differential(scenario)


@pytest.mark.parametrize("checkpointed", [True, False], ids=["own-threads", "no-checkpointer"])
def test_closing_a_stream_while_its_lone_slow_node_runs_keeps_that_nodes_writes(differential, checkpointed):
    """A stream of `custom` events is closed right after a slow node's first event, while
    that node still runs in a thread: it finishes, its writes are kept on its thread, and
    resuming runs only the next node."""

    def scenario(E):
        ran: list = []

        def slow(s):
            E.get_stream_writer()("starting")
            time.sleep(0.05)
            ran.append("slow")
            return {"log": ["slow"]}

        def after(s):
            ran.append("after")
            return {"log": ["after"]}

        g = E.StateGraph(S)
        g.add_node("slow", slow)
        g.add_node("after", after)
        g.add_edge(E.START, "slow")
        g.add_edge("slow", "after")
        app = g.compile(checkpointer=E.InMemorySaver() if checkpointed else None)
        c = _cfg(0) if checkpointed else None
        gen = app.stream({"n": 1}, c, stream_mode="custom")
        first = next(gen)
        gen.close()
        at_close = list(ran)
        if not checkpointed:
            return first, at_close
        return first, at_close, snapshot_summary(app.get_state(c)), app.invoke(None, c), ran

    differential(scenario)

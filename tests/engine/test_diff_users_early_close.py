"""Users closing a stream early, on a checkpointed thread: what the thread holds then, and
what a resume does.

A consumer stops reading `app.stream(...)` / `app.astream(...)` at the first chunk of a
super-step (step 1, step 2, the last step): `for ... break` (the generator closed as the
loop drops it), `next()` then `close()`, `async with aclosing(...)` with `break`,
`__anext__()` then `aclose()`, or holding the chunk over an `await` before `aclose()` (a
server forwarding chunks to a socket). Graphs have one node per step (a -> b -> c) or a
parallel step (a -> (fast, slow) -> c); every node writes a `custom` event, works a little
and calls a streaming chat model (`_scripted.Echo`), so every stream mode has chunks in
every step: "updates", "values", ["updates", "custom"], "messages".

Observed after the close: the chunks the consumer got, which nodes' side effects happened
by then, `get_state` (values, next, each task's error / result: a finished node's writes
kept as pending writes, a cancelled one's `CancelledError`), the steps of
`get_state_history`, the result of resuming with `invoke(None, cfg)` (`ainvoke`) and how
often each node ran in all. Savers: `InMemorySaver`, and lgnb's SQLite savers against LangGraph's
(`langgraph-checkpoint-sqlite`).

Timing: nodes work 20 ms after their first event; the slow parallel node starts 30 ms after
the fast one ended and works 60 ms, so "the node is still running when the consumer closes"
holds on both engines (a parallel step's chunks compare as a sorted group: under load the
slow node's first event may overtake the fast node's update). Async scenarios use async
nodes (one event loop: deterministic). Sync nodes under `astream` run in threads that a
close cannot stop; their scenario compares only the modes whose events do not come from
those threads ("updates", "values").
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import operator
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from _diff import Engine, snapshot_summary
from _scripted import Echo
from langchain_core.messages import BaseMessage, HumanMessage
from typing_extensions import TypedDict

WORK = 0.02
"""How long a node works after its first event (a lone node is still running then)."""
SLOW_START = 0.3
"""The slow parallel node writes its first event this late after the fast one finished
(the fast one's update reaches the consumer first, with room for a loaded machine)."""
SLOW_WORK = 0.06
HOLD = 0.1
"""How long a "hold" consumer awaits before closing: the node whose chunk it stopped at
(WORK after its first event) ends meanwhile, the slow parallel node (SLOW_START after the
fast one ended) has not started its work, on both engines, with room for a loaded machine."""


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    said: Annotated[list, operator.add]


SHAPES: dict[str, tuple[tuple[str, ...], ...]] = {
    "chain": (("a",), ("b",), ("c",)),
    "parallel": (("a",), ("fast", "slow"), ("c",)),
}
WHERE = {"step1": 0, "step2": 1, "last": 2}
MODES: dict[str, Any] = {
    "updates": "updates",
    "values": "values",
    "updates+custom": ["updates", "custom"],
    "messages": "messages",
}
CFG = {"configurable": {"thread_id": "t"}}


def _delays(name: str) -> tuple[float, float]:
    """(before the first event, after it) for a node."""
    if name == "slow":
        return SLOW_START, SLOW_WORK
    return 0.0, WORK


def _graph(E: Engine, shape: str, ran: list, saver: Any, *, is_async: bool) -> Any:
    """The graph of `shape`; each node notes its run in `ran` (its side effect). The slow
    parallel node starts its work only once the fast one has ended."""
    fast_done_sync = threading.Event()
    fast_done_async = asyncio.Event() if is_async else None

    def mk(name: str) -> Callable:
        before, after = _delays(name)

        def node(s: S) -> dict:
            if name == "slow":
                fast_done_sync.wait(1.0)
            time.sleep(before)
            E.get_stream_writer()({"in": name})
            time.sleep(after)
            reply = Echo(who=name).invoke([HumanMessage(f"step {len(s['log'])}")])
            ran.append(name)
            if name == "fast":
                fast_done_sync.set()
            return {"log": [name], "said": [reply.content]}

        async def anode(s: S) -> dict:
            if name == "slow":
                await asyncio.wait_for(fast_done_async.wait(), 1.0)
            await asyncio.sleep(before)
            E.get_stream_writer()({"in": name})
            await asyncio.sleep(after)
            reply = await Echo(who=name).ainvoke([HumanMessage(f"step {len(s['log'])}")])
            ran.append(name)
            if name == "fast":
                fast_done_async.set()
            return {"log": [name], "said": [reply.content]}

        return anode if is_async else node

    g = E.StateGraph(S)
    steps = SHAPES[shape]
    for names in steps:
        for name in names:
            g.add_node(name, mk(name))
    for name in steps[0]:
        g.add_edge(E.START, name)
    for prev, nxt in zip(steps, steps[1:]):
        for name in nxt:
            g.add_edge(list(prev) if len(prev) > 1 else prev[0], name)
    return g.compile(checkpointer=saver)


def _node_of(chunk: Any) -> str | None:
    """The node a chunk comes from (a `values` chunk: the last node in the log)."""
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], str):
        chunk = chunk[1]  # (mode, payload)
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], BaseMessage):
        return chunk[1].get("langgraph_node")
    if isinstance(chunk, dict):
        if "in" in chunk:
            return chunk["in"]
        if "log" in chunk:
            return chunk["log"][-1] if chunk["log"] else None
        if len(chunk) == 1:
            return next(iter(chunk))
    return None


def _stop_at(shape: str, where: str) -> Callable[[Any], bool]:
    """Whether a chunk is the first one of the step the consumer stops at."""
    nodes = SHAPES[shape][WHERE[where]]
    return lambda chunk: _node_of(chunk) in nodes


def _view(chunk: Any) -> Any:
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], str):
        return (chunk[0], _view(chunk[1]))
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], BaseMessage):
        msg, md = chunk
        return (type(msg).__name__, msg.content, md.get("langgraph_node"), md.get("langgraph_step"))
    return chunk


def _chunks(shape: str, got: list) -> list:
    """What the consumer got, viewed; the chunks of a parallel step as a sorted group (both
    engines report parallel nodes as they finish; under load the slow node's first event
    may come before the fast node's update is reported)."""
    out: list = []
    group: list = []
    for chunk in got:
        node = _node_of(chunk)
        if any(node in names and len(names) > 1 for names in SHAPES[shape]):
            group.append(_view(chunk))
            continue
        if group:
            out.append(("parallel step", sorted(group, key=repr)))
            group = []
        out.append(_view(chunk))
    if group:
        out.append(("parallel step", sorted(group, key=repr)))
    return out


def _history(snapshots: list) -> list:
    return [(h.metadata["step"], h.metadata["source"], h.next) for h in snapshots]


@contextlib.contextmanager
def _saver(E: Engine, kind: str, tmp_path: Path) -> Iterator[Any]:
    if kind == "memory":
        yield E.InMemorySaver()
        return
    sqlite = importlib.import_module(f"{E.root}.checkpoint.sqlite")
    with sqlite.SqliteSaver.from_conn_string(str(tmp_path / f"{E.label}.sqlite")) as saver:
        yield saver


@contextlib.asynccontextmanager
async def _asaver(E: Engine, kind: str, tmp_path: Path) -> AsyncIterator[Any]:
    if kind == "memory":
        yield E.InMemorySaver()
        return
    aio = importlib.import_module(f"{E.root}.checkpoint.sqlite.aio")
    async with aio.AsyncSqliteSaver.from_conn_string(str(tmp_path / f"{E.label}.sqlite")) as saver:
        yield saver


# ============================================================================================
# the consumers
# ============================================================================================


def _consume(app: Any, how: str, mode: Any, stop: Callable[[Any], bool], **kw: Any) -> list:
    """A sync consumer reading until `stop(chunk)`, then closing the stream."""
    got: list = []
    if how == "break":  # the loop drops the generator: CPython closes it at once
        for chunk in app.stream({"log": []}, CFG, stream_mode=mode, **kw):
            got.append(chunk)
            if stop(chunk):
                break
        return got
    gen = app.stream({"log": []}, CFG, stream_mode=mode, **kw)
    for chunk in gen:
        got.append(chunk)
        if stop(chunk):
            gen.close()
            break
    return got


async def _aconsume(app: Any, how: str, mode: Any, stop: Callable[[Any], bool], **kw: Any) -> list:
    """An async consumer reading until `stop(chunk)`, then closing the stream: `break` in
    `async with aclosing(...)`, `__anext__()` then `aclose()`, or "hold": the chunk is
    forwarded over an `await` (a socket) before `aclose()`."""
    got: list = []
    if how == "break":
        async with contextlib.aclosing(app.astream({"log": []}, CFG, stream_mode=mode, **kw)) as stream:
            async for chunk in stream:
                got.append(chunk)
                if stop(chunk):
                    break
        return got
    agen = app.astream({"log": []}, CFG, stream_mode=mode, **kw)
    while True:
        try:
            chunk = await agen.__anext__()
        except StopAsyncIteration:
            return got
        got.append(chunk)
        if stop(chunk):
            if how == "hold":
                await asyncio.sleep(HOLD)
            await agen.aclose()
            return got


def _observe(app: Any, shape: str, got: list, ran: list, ran_at_close: list) -> dict:
    return {
        "chunks": _chunks(shape, got),
        "ran_at_close": ran_at_close,
        "state": snapshot_summary(app.get_state(CFG), errors=True),
        "history": _history(list(app.get_state_history(CFG))),
        "resumed": app.invoke(None, CFG),
        "ran": sorted(ran),
    }


async def _aobserve(app: Any, shape: str, got: list, ran: list, ran_at_close: list) -> dict:
    return {
        "chunks": _chunks(shape, got),
        "ran_at_close": ran_at_close,
        "state": snapshot_summary(await app.aget_state(CFG), errors=True),
        "history": _history([h async for h in app.aget_state_history(CFG)]),
        "resumed": await app.ainvoke(None, CFG),
        "ran": sorted(ran),
    }


def _sync_scenario(shape: str, mode: str, where: str, how: str, saver: str, tmp_path: Path,
                   **kw: Any) -> Callable[[Engine], dict]:
    def scenario(E: Engine) -> dict:
        ran: list = []
        with _saver(E, saver, tmp_path) as checkpointer:
            app = _graph(E, shape, ran, checkpointer, is_async=False)
            got = _consume(app, how, MODES[mode], _stop_at(shape, where), **kw)
            return _observe(app, shape, got, ran, sorted(ran))

    return scenario


def _async_scenario(shape: str, mode: str, where: str, how: str, saver: str, tmp_path: Path,
                    **kw: Any) -> Callable[[Engine], Any]:
    async def scenario(E: Engine) -> dict:
        ran: list = []
        async with _asaver(E, saver, tmp_path) as checkpointer:
            app = _graph(E, shape, ran, checkpointer, is_async=True)
            got = await _aconsume(app, how, MODES[mode], _stop_at(shape, where), **kw)
            return await _aobserve(app, shape, got, ran, sorted(ran))

    return scenario


SHAPE = pytest.mark.parametrize("shape", list(SHAPES))
MODE = pytest.mark.parametrize("mode", list(MODES))
AT = pytest.mark.parametrize("where", list(WHERE))


# ============================================================================================
# sync stream()
# ============================================================================================


@pytest.mark.parametrize("how", ["break", "close"])
@AT
@MODE
@SHAPE
def test_sync_stream_closed_at_the_first_chunk_of_a_step(differential, tmp_path, shape, mode, where, how):
    """`for chunk in app.stream(...): ... break` (or `next()` then `close()`) at the first
    chunk of step 1 / 2 / the last: a node still running in a thread finishes and its
    writes are kept as pending writes; the thread's `next` and history are LangGraph's, and
    a resume runs only what had not finished."""
    differential(_sync_scenario(shape, mode, where, how, "memory", tmp_path))


@AT
@MODE
@SHAPE
def test_sync_stream_closed_early_on_a_sqlite_thread(differential, tmp_path, shape, mode, where):
    """The same with lgnb's `SqliteSaver` against LangGraph's: what the closed run saved
    reads back the same from the database."""
    differential(_sync_scenario(shape, mode, where, "break", "sqlite", tmp_path))


@pytest.mark.parametrize("mode", ["updates", "updates+custom"])
@AT
def test_sync_stream_closed_during_a_parallel_step_with_durability_exit(differential, tmp_path, mode, where):
    """`durability="exit"`: LangGraph saves the thread when the stream closes, before the
    node still running in a thread ends, so that node's writes are not kept and a resume
    runs it again (its side effect happens twice)."""
    differential(_sync_scenario("parallel", mode, where, "close", "memory", tmp_path, durability="exit"))


# ============================================================================================
# async astream()
# ============================================================================================


@pytest.mark.parametrize("how", ["break", "close", "hold"])
@AT
@MODE
@SHAPE
def test_async_stream_closed_at_the_first_chunk_of_a_step(differential, tmp_path, shape, mode, where, how):
    """`astream` closed at the first chunk of step 1 / 2 / the last (async nodes): the
    thread stays at the checkpoint LangGraph leaves it at, with the writes of the nodes
    that finished kept and a `CancelledError` recorded for each node the close cancelled;
    a consumer that awaits something before closing ("hold") finds the same, as the run
    does not go past the step it stopped in."""
    differential(_async_scenario(shape, mode, where, how, "memory", tmp_path))


@pytest.mark.parametrize("how", ["close", "hold"])
@pytest.mark.parametrize("mode", [["updates", "custom"], ["updates", "messages"]], ids=["custom", "messages"])
@AT
@SHAPE
def test_async_live_stream_closed_at_the_first_update_of_a_step(differential, shape, mode, where, how):
    """A live `astream` (custom events or tokens too) closed at a step's first *update*,
    the consumer holding it over an `await` first or not: the thread stays at the
    checkpoint before that step with the finished node's writes kept as pending writes
    (`next` still lists the step's nodes not finished); a resume does not run the
    finished node again. The run does not pass the step's barrier while the consumer
    holds the chunk."""
    nodes = SHAPES[shape][WHERE[where]]

    def stop(chunk: Any) -> bool:
        return chunk[0] == "updates" and _node_of(chunk) in nodes

    async def scenario(E: Engine) -> dict:
        ran: list = []
        app = _graph(E, shape, ran, E.InMemorySaver(), is_async=True)
        got = await _aconsume(app, how, mode, stop)
        return await _aobserve(app, shape, got, ran, sorted(ran))

    differential(scenario)


@AT
@MODE
@SHAPE
def test_async_stream_closed_early_on_an_async_sqlite_thread(differential, tmp_path, shape, mode, where):
    """The same with lgnb's `AsyncSqliteSaver` against LangGraph's."""
    differential(_async_scenario(shape, mode, where, "close", "sqlite", tmp_path))


@pytest.mark.parametrize("mode", ["updates", "values"])
@AT
@SHAPE
def test_async_stream_of_sync_nodes_closed_at_the_first_chunk_of_a_step(differential, shape, mode, where):
    """Sync nodes under `astream` run in threads: a close cannot stop them. The thread
    state, history, resume and side effects are LangGraph's (modes whose events do not
    come from the node threads; the nodes' own events race the close on LangGraph)."""

    async def scenario(E: Engine) -> dict:
        ran: list = []
        app = _graph(E, shape, ran, E.InMemorySaver(), is_async=False)
        got = await _aconsume(app, "close", MODES[mode], _stop_at(shape, where))
        ran_at_close = sorted(ran)
        await asyncio.sleep(SLOW_START + SLOW_WORK + 0.05)  # the threads the close left end
        return await _aobserve(app, shape, got, ran, ran_at_close)

    differential(scenario)


@pytest.mark.parametrize("mode", ["updates", "updates+custom"])
def test_async_stream_dropped_after_break_is_closed_by_the_event_loop(differential, mode):
    """`async for chunk in app.astream(...): ... break` without `aclosing`: the generator
    is closed by the event loop's finalizer once dropped; after the consumer yields to the
    loop, the thread is where an explicit close leaves it."""

    async def scenario(E: Engine) -> dict:
        ran: list = []
        app = _graph(E, "parallel", ran, E.InMemorySaver(), is_async=True)
        stop = _stop_at("parallel", "step2")
        got = []
        async for chunk in app.astream({"log": []}, CFG, stream_mode=MODES[mode]):
            got.append(chunk)
            if stop(chunk):
                break
        await asyncio.sleep(0.05)
        return await _aobserve(app, "parallel", got, ran, sorted(ran))

    differential(scenario)


@MODE
@SHAPE
def test_async_consumer_task_cancelled_while_it_handles_a_chunk(differential, shape, mode):
    """A server's handler task reading `astream` is cancelled (its client went away) while
    it handles the first chunk of step 2: the dropped stream is closed by the event loop
    and the thread is left as an explicit close leaves it."""

    async def scenario(E: Engine) -> dict:
        ran: list = []
        app = _graph(E, shape, ran, E.InMemorySaver(), is_async=True)
        stop = _stop_at(shape, "step2")
        got: list = []
        handling = asyncio.Event()

        async def handler() -> None:
            async for chunk in app.astream({"log": []}, CFG, stream_mode=MODES[mode]):
                got.append(chunk)
                if stop(chunk):
                    handling.set()
                    await asyncio.sleep(10)  # forwarding the chunk: cancelled meanwhile

        task = asyncio.ensure_future(handler())
        await handling.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)
        return await _aobserve(app, shape, got, ran, sorted(ran))

    differential(scenario)


@contextlib.contextmanager
def _one_thread_pool() -> Iterator[None]:
    """lgnb's parallel tasks in a pool of one thread: a task waits in the pool's queue
    while another runs, as on a machine too loaded for a thread to pick it up at once."""
    from concurrent.futures import ThreadPoolExecutor

    from lgnb.pregel import _driver

    saved, pool = _driver._pool(), ThreadPoolExecutor(max_workers=1)  # (put back afterwards)
    _driver._POOLS["lgnb-task"] = pool
    try:
        yield
    finally:
        _driver._POOLS["lgnb-task"] = saved
        pool.shutdown(wait=True)


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_sync_stream_closed_before_the_pool_started_a_task_still_runs_it(differential, saver, tmp_path):
    """The consumer closes the stream at the fast node's first event while the slow node of
    the same step waits for a pool thread. LangGraph's sync runner gives its pool every task
    of a step without cancel-on-exit and waits for the pool as the stream closes, so the
    waiting task still runs: its side effect happens and its writes are kept (CI saw lgnb
    drop it once on a loaded machine). On lgnb a one-thread pool makes that wait certain."""
    def scenario(E: Engine) -> dict:
        ran: list = []
        with contextlib.ExitStack() as stack:
            if E.root == "lgnb":
                stack.enter_context(_one_thread_pool())
            checkpointer = stack.enter_context(_saver(E, saver, tmp_path))
            app = _graph(E, "parallel", ran, checkpointer, is_async=False)
            got = _consume(app, "close", MODES["updates+custom"], _stop_at("parallel", "step2"))
            return _observe(app, "parallel", got, ran, sorted(ran))

    ref = differential(scenario)
    assert ref["ran_at_close"] == ["a", "fast", "slow"]


# ============================================================================================
# the consumer keeps the stream: `it = app.stream(...)`, a `break`, the iterator still held
# ============================================================================================

SETTLE = SLOW_START + SLOW_WORK + 0.3
"""Long enough for the nodes running when the consumer stopped to end (both engines)."""


def _read_until(it: Iterator[Any], stop: Callable[[Any], bool]) -> list:
    """`for chunk in it: ... if stop(chunk): break`, the iterator kept by the caller."""
    got = []
    for chunk in it:
        got.append(chunk)
        if stop(chunk):
            break
    return got


@pytest.mark.parametrize("where", ["step1", "step2"])
@MODE
@SHAPE
def test_sync_stream_kept_after_a_break_saves_the_nodes_that_end_meanwhile(differential, shape, mode, where):
    """`it = app.stream(...)`, `for chunk in it: ... break`, the iterator still referenced
    (a notebook keeps it, and IPython's `_`): the nodes still running end in their
    threads, and their writes are saved then, as LangGraph's pool commits each as it ends.
    The thread shows them (`get_state`), and a resume does not run them again."""

    def scenario(E: Engine) -> dict:
        ran: list = []
        app = _graph(E, shape, ran, E.InMemorySaver(), is_async=False)
        it = app.stream({"log": []}, CFG, stream_mode=MODES[mode])
        got = _read_until(it, _stop_at(shape, where))
        time.sleep(SETTLE)  # (what has run at the break itself is timing on both engines)
        seen = _observe(app, shape, got, ran, [])
        it.close()
        return {**seen, "ran_in_all": sorted(ran)}

    differential(scenario)


@pytest.mark.parametrize("where", ["step1", "step2"])
@pytest.mark.parametrize("mode", ["updates", "updates+custom"])
@SHAPE
def test_async_stream_kept_after_a_break_saves_the_nodes_that_end_meanwhile(differential, shape, mode, where):
    """The same with `agen = app.astream(...)` and async nodes: the event loop runs the
    nodes still running to their end while the consumer holds the generator, and their
    writes are saved then."""

    async def scenario(E: Engine) -> dict:
        ran: list = []
        app = _graph(E, shape, ran, E.InMemorySaver(), is_async=True)
        stop = _stop_at(shape, where)
        agen = app.astream({"log": []}, CFG, stream_mode=MODES[mode])
        got = []
        async for chunk in agen:
            got.append(chunk)
            if stop(chunk):
                break
        await asyncio.sleep(SETTLE)  # (what has run at the break itself is timing on both engines)
        seen = await _aobserve(app, shape, got, ran, [])
        await agen.aclose()
        return {**seen, "ran_in_all": sorted(ran)}

    differential(scenario)


@pytest.mark.parametrize("mode", ["updates", "updates+custom", "messages"])
@SHAPE
def test_a_kept_stream_read_on_after_its_nodes_ended_gives_each_update_once(differential, shape, mode):
    """The consumer stops at step 2's first chunk, waits while the step's nodes end (and
    save), then reads the same iterator to the end: every chunk comes once, and the run
    ends as one read straight through."""

    def scenario(E: Engine) -> dict:
        ran: list = []
        app = _graph(E, shape, ran, E.InMemorySaver(), is_async=False)
        it = app.stream({"log": []}, CFG, stream_mode=MODES[mode])
        got = _read_until(it, _stop_at(shape, "step2"))
        time.sleep(SETTLE)
        got.extend(it)
        return {"chunks": _chunks(shape, got), "ran": sorted(ran),
                "state": snapshot_summary(app.get_state(CFG), errors=True),
                "history": _history(list(app.get_state_history(CFG)))}

    differential(scenario)


@pytest.mark.parametrize("is_async", [False, True], ids=["stream", "astream"])
def test_a_kept_stream_starts_the_tasks_max_concurrency_held_back(differential, is_async):
    """`max_concurrency=1`, three parallel nodes, the consumer stops at the first one's
    update and keeps the stream: the other two start and are saved as the first ends, as
    in LangGraph's pool; a resume runs none of them again."""

    def build(E: Engine, ran: list) -> Any:
        def node(name: str) -> Callable:
            def sync(s: S) -> dict:
                time.sleep(0.1)
                ran.append(name)
                return {"log": [name]}

            async def anode(s: S) -> dict:
                await asyncio.sleep(0.1)
                ran.append(name)
                return {"log": [name]}

            return anode if is_async else sync

        g = E.StateGraph(S)
        for name in ("p1", "p2", "p3"):
            g.add_node(name, node(name))
            g.add_edge(E.START, name)
        return g.compile(checkpointer=E.InMemorySaver())

    cfg = {**CFG, "max_concurrency": 1}

    def scenario(E: Engine) -> dict:
        ran: list = []
        app = build(E, ran)
        it = app.stream({"log": []}, cfg, stream_mode="updates")
        _read_until(it, lambda c: "p1" in c)
        time.sleep(0.6)
        held = snapshot_summary(app.get_state(cfg))
        out = app.invoke(None, cfg)
        it.close()
        return {"held": held, "resumed": out, "ran": sorted(ran)}

    async def ascenario(E: Engine) -> dict:
        ran: list = []
        app = build(E, ran)
        agen = app.astream({"log": []}, cfg, stream_mode="updates")
        async for chunk in agen:
            if "p1" in chunk:
                break
        await asyncio.sleep(0.6)
        held = snapshot_summary(await app.aget_state(cfg))
        out = await app.ainvoke(None, cfg)
        await agen.aclose()
        return {"held": held, "resumed": out, "ran": sorted(ran)}

    ref = differential(ascenario if is_async else scenario)
    assert ref["ran"] == ["p1", "p2", "p3"]

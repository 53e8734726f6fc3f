"""A root task's writes saved while the async run goes on: stopping, cancelling and failing
while that save is in flight loses nothing and lets nothing run past it.

lgnb starts saving the writes of a step's lone task as soon as the task ends and finishes
the save before the driver's next request, or when the driver ends
(`lgnb/pregel/_driver.py`: `astart_flush`, `adrive`'s `saving`). These tests hold such a
save in flight with a real SQLite file, through subclasses of lgnb's `AsyncSqliteSaver`
whose `aput_writes` waits (for a gate the test opens, or for a cancellation to land) or
fails once, and then:

* stop the stream at its first chunk (`updates`, and the live `custom` / `messages`
  modes) by `aclosing`, `aclose()` or a bare `break`: the finished node is not pending
  any more, and a resume does not run it again;
* cancel the consumer (`task.cancel()`, `asyncio.wait_for`'s task cancelled or timing
  out, `asyncio.timeout`, an anyio cancel scope, which cancels again at every pass of the
  event loop) around `ainvoke` and `astream`, also while a subgraph node's writes are
  saved: the save still completes, nothing after it ran;
* fail the save (alone, with a failing node, with an error handler that retries, with a
  thread lease `multitask="reject"`, with an `interrupt()`): the run raises the saver's
  error, nothing runs after the task, the thread stays usable;
* `ainvoke` / `astream` with durability "sync", "async" and "exit" on a slow saver, a
  subgraph node on the same slow saver, and an `interrupt()` right after a slow save,
  compared with LangGraph on its own `AsyncSqliteSaver` (same slow subclass).

Every run checks that asyncio reported nothing ("Task was destroyed but it is pending",
"never awaited", exceptions nobody retrieved) after a `gc.collect()`.
"""

import asyncio
import contextlib
import gc
import importlib
import operator
import warnings
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from _diff import snapshot_summary
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.graph import START, StateGraph
from lgnb.graph.message import add_messages
from lgnb.types import Command, RetryPolicy, interrupt

# ---------------------------------------------------------------------- helpers


class S(TypedDict):
    log: Annotated[list, operator.add]
    messages: Annotated[list, add_messages]


class L(TypedDict):
    """The state of the scenarios run on both engines."""

    log: Annotated[list, operator.add]


class DiskFull(Exception):
    """The saver's failure (a plain `Exception`: a default `RetryPolicy` retries it)."""


def _writes_of(name: str) -> Callable[[Any], bool]:
    """Selects the writes of the task of node `name` (it writes `log=[name]`)."""
    return lambda writes: any(c == "log" and v == [name] for c, v in writes)


def _error_writes(writes: Any) -> bool:
    return any(c in ("__error__", "__interrupt__") for c, _ in writes)


def held_saver_class(base: type) -> type:
    """A subclass of `base` (an AsyncSqliteSaver) whose `aput_writes` of the selected
    writes waits until `release()` is true (a real suspension), then fails once if asked,
    then saves. `in_flight`: such saves started and not ended."""

    class HeldSaver(base):  # type: ignore[misc, valid-type]
        hold: Callable[[Any], bool] = staticmethod(lambda writes: False)
        fail: Callable[[Any], bool] = staticmethod(lambda writes: False)
        delay = 0.0  # every aput_writes / aput also sleeps this long

        def arm(self) -> None:
            self.release: Callable[[], bool] = lambda: True
            self.started = asyncio.Event()
            self.in_flight = 0
            self.held_saved = 0
            self.failed = False
            self.on_start: Callable[[], None] = lambda: None

        async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            held = self.hold(writes)
            if held:
                self.in_flight += 1
                self.started.set()
                self.on_start()
            try:
                await asyncio.sleep(self.delay)
                if held:
                    for _ in range(2000):  # 10 s at most: a broken test must not hang
                        if self.release():
                            break
                        await asyncio.sleep(0.005)
                if not self.failed and self.fail(writes):
                    self.failed = True
                    raise DiskFull("disk full")
                await super().aput_writes(config, writes, task_id, task_path)
                if held:
                    self.held_saved += 1
            finally:
                if held:
                    self.in_flight -= 1

        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            await asyncio.sleep(self.delay)
            return await super().aput(config, checkpoint, metadata, new_versions)

    return HeldSaver


LgnbHeld = held_saver_class(AsyncSqliteSaver)


@contextlib.asynccontextmanager
async def held_saver(path: Any, *, hold: Any = None, fail: Any = None, delay: float = 0.0, cls: Any = LgnbHeld):
    async with cls.from_conn_string(str(path)) as saver:
        saver.arm()
        if hold is not None:
            saver.hold = hold
        if fail is not None:
            saver.fail = fail
        saver.delay = delay
        yield saver


def run_clean(coro_fn: Callable[[], Any]) -> Any:
    """`asyncio.run(coro_fn())`, asserting asyncio reported nothing: no pending task
    destroyed, no coroutine never awaited, no exception nobody retrieved."""
    reported: list[str] = []

    async def main() -> Any:
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: reported.append(ctx["message"]))
        return await coro_fn()

    # what earlier tests left in cycles (an async generator whose loop has closed warns
    # when collected) is collected before this run, so it is not reported as this run's
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return asyncio.run(main())
        finally:
            gc.collect()
            bad = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
            assert not bad, bad
            assert not reported, reported


def _graph(saver: Any, ran: list[str], *, is_async: bool = True, b_node: Any = None) -> Any:
    """a -> b -> c; each appends its name to `ran` and `log`; `a` also writes a custom
    event and returns a message (a `messages` chunk when it ends)."""
    from langchain_core.messages import AIMessage

    from lgnb.config import get_stream_writer

    def body(name: str) -> dict:
        ran.append(name)
        if name == "a":
            get_stream_writer()({"from": "a"})
            return {"log": ["a"], "messages": [AIMessage("from a", id="m-a")]}
        return {"log": [name]}

    def node(name: str) -> Any:
        if is_async:
            async def anode(s: S) -> dict:
                return body(name)

            return anode
        return lambda s: body(name)

    return (
        StateGraph(S)
        .add_node("a", node("a"))
        .add_node("b", b_node or node("b"))
        .add_node("c", node("c"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .compile(checkpointer=saver)
    )


def _cfg(name: str = "t") -> dict:
    return {"configurable": {"thread_id": name}}


async def _a_is_done(app: Any, cfg: dict) -> None:
    """The thread shows `a` finished: not pending, its write applied or kept as a
    pending write of its task."""
    state = await app.aget_state(cfg)
    assert "a" not in state.next, state
    kept = [t for t in state.tasks if t.name == "a"]
    assert "a" in state.values.get("log", []) or (kept and kept[0].result is not None), state


async def _resume_runs_a_once(app: Any, cfg: dict, ran: list[str]) -> None:
    final = await app.ainvoke(None, cfg)
    assert final["log"] == ["a", "b", "c"], final
    assert ran.count("a") == 1, ran
    assert ran.count("b") == 1 and ran.count("c") == 1, ran


# ---------------------------------------------------------------------- stopping the stream


async def _when_a_is_saving(saver: Any, mode: str) -> int:
    """Holding the first chunk: in a live mode, wait until `a` has ended and its writes
    are being saved (a custom event comes while `a` runs, its message when it ends);
    the number of such saves in flight."""
    if mode != "updates":
        await asyncio.wait_for(saver.started.wait(), 10)
    return saver.in_flight


@pytest.mark.parametrize("how", ["aclosing", "aclose", "break"])
@pytest.mark.parametrize("mode", ["updates", "custom", "messages"])
@pytest.mark.parametrize("is_async", [True, False], ids=["async-node", "sync-node"])
def test_stopping_the_stream_at_its_first_chunk_keeps_the_finished_nodes_writes(tmp_path, mode, how, is_async):
    """The consumer stops while `a`'s writes are being saved (live modes: the chunk comes
    right after `a` ends); once the stream is closed (`aclosing`, `aclose()`, or the
    finalizer after a bare `break`), `a` is saved and a resume does not run it again."""

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()
        gate = asyncio.Event()
        async with held_saver(tmp_path / "t.sqlite", hold=_writes_of("a"), delay=0.05) as saver:
            if mode != "updates":  # (its first chunk comes once `a` is saved: not held)
                saver.release = gate.is_set
            app = _graph(saver, ran, is_async=is_async)
            stream = app.astream({"log": []}, cfg, stream_mode=mode)
            if how == "aclosing":
                async with contextlib.aclosing(stream) as chunks:
                    async for _ in chunks:
                        in_flight = await _when_a_is_saving(saver, mode)
                        gate.set()
                        break
            else:
                async for _ in stream:
                    in_flight = await _when_a_is_saving(saver, mode)
                    gate.set()
                    break
                if how == "aclose":
                    await stream.aclose()
                else:
                    del stream  # the event loop's finalizer closes it
                    gc.collect()
                    for _ in range(2000):
                        if saver.held_saved:
                            break
                        await asyncio.sleep(0.005)
            if mode != "updates":
                assert in_flight == 1, "the consumer did not stop while a's writes were being saved"
            assert ran == ["a"]
            assert saver.held_saved == 1
            await _a_is_done(app, cfg)
            await _resume_runs_a_once(app, cfg, ran)

    run_clean(scenario)


# ---------------------------------------------------------------------- cancelling the consumer


async def _consume(app: Any, cfg: dict, call: str) -> None:
    if call == "ainvoke":
        await app.ainvoke({"log": []}, cfg)
    else:
        async for _ in app.astream({"log": []}, cfg, stream_mode=call.split("-", 1)[1]):
            pass


@pytest.mark.parametrize("how", ["task.cancel", "wait_for-inner-cancelled", "asyncio.timeout"])
@pytest.mark.parametrize("call", ["ainvoke", "astream-updates", "astream-custom"])
def test_cancelling_the_consumer_while_a_save_is_in_flight_finishes_the_save_and_runs_nothing_more(
    tmp_path, call, how
):
    """The consumer's task is cancelled while `a`'s writes are being saved (the save goes
    on until the cancellation has landed): the cancellation wins, `a`'s writes are saved,
    `b` did not run, and a resume runs `b` and `c` once and not `a`."""

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()
        victim: list[asyncio.Task] = []
        async with held_saver(tmp_path / "t.sqlite", hold=_writes_of("a")) as saver:
            saver.release = lambda: bool(victim) and victim[0].cancelling() > 0
            app = _graph(saver, ran)

            async def consumer() -> None:
                victim.append(asyncio.current_task())  # type: ignore[arg-type]
                if how == "asyncio.timeout":
                    async with asyncio.timeout(None) as cm:
                        saver.on_start = lambda: cm.reschedule(asyncio.get_running_loop().time())
                        await _consume(app, cfg, call)
                else:
                    await _consume(app, cfg, call)

            if how == "task.cancel":
                task = asyncio.ensure_future(consumer())
                await saver.started.wait()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            elif how == "wait_for-inner-cancelled":
                saver.on_start = lambda: victim[0].cancel()  # what a timeout then does
                with pytest.raises(asyncio.CancelledError):
                    await asyncio.wait_for(consumer(), timeout=60)
            else:
                with pytest.raises(TimeoutError):
                    await consumer()
            assert saver.held_saved == 1
            assert ran == ["a"], "a node ran after the run was cancelled"
            await _a_is_done(app, cfg)
            await _resume_runs_a_once(app, cfg, ran)

    run_clean(scenario)


@pytest.mark.parametrize("call", ["ainvoke", "astream-custom"])
def test_a_wait_for_timeout_during_a_slow_save_keeps_every_finished_nodes_writes(tmp_path, call):
    """`asyncio.wait_for(..., timeout)` elapsing while saves are slow (each `aput_writes`
    and `aput` sleeps): whatever node had finished is saved, a resume finishes the run
    and runs each node once in all."""

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()
        async with held_saver(tmp_path / "t.sqlite", delay=0.05) as saver:
            app = _graph(saver, ran)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(_consume(app, cfg, call), timeout=0.12)
            before = list(ran)
            final = await app.ainvoke(None, cfg)
            assert final["log"] == ["a", "b", "c"]
            assert sorted(ran) == ["a", "b", "c"], (before, ran)

    run_clean(scenario)


# ---------------------------------------------------------------------- failing saves


@pytest.mark.parametrize("durability", ["sync", "async"])
@pytest.mark.parametrize("call", ["ainvoke", "astream-updates", "astream-custom", "astream-messages"])
def test_a_failed_save_of_a_failing_nodes_error_fails_the_run_with_the_savers_error(tmp_path, call, durability):
    """`a` raises and saving its error fails: the run raises the saver's error (not
    swallowed, not replaced by `a`'s), nothing ran after `a`, and a later run works."""

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()

        async def a(s: S) -> dict:
            ran.append("a")
            raise ValueError("boom")

        async with held_saver(tmp_path / "t.sqlite", fail=_error_writes) as saver:
            app = (
                StateGraph(S).add_node("a", a).add_node("b", lambda s: ran.append("b") or {})
                .add_edge(START, "a").add_edge("a", "b").compile(checkpointer=saver)
            )
            with pytest.raises(DiskFull):
                if call == "ainvoke":
                    await app.ainvoke({"log": []}, cfg, durability=durability)
                else:
                    async for _ in app.astream({"log": []}, cfg, stream_mode=call.split("-")[1],
                                               durability=durability):
                        pass
            assert saver.failed and ran == ["a"]
            with pytest.raises(ValueError, match="boom"):
                await app.ainvoke(None, cfg, durability=durability)
            assert ran == ["a", "a"]

    run_clean(scenario)


def test_a_failed_save_before_an_error_handler_stops_the_run_even_when_the_handler_retries(tmp_path):
    """`a` fails, its error handler `h` would run next, and saving `a`'s error fails: the
    saver's error fails the run before `h` runs, even when a retry policy (for every
    node, handlers included) retries that error class: it is not `h`'s failure."""

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()

        async def a(s: S) -> dict:
            ran.append("a")
            raise ValueError("boom")

        async def h(s: S) -> dict:
            ran.append("h")
            return {"log": ["h"]}

        async with held_saver(tmp_path / "t.sqlite", fail=_error_writes, delay=0.01) as saver:
            builder = StateGraph(S)
            builder.set_node_defaults(retry_policy=RetryPolicy(initial_interval=0.01, max_attempts=2,
                                                               retry_on=DiskFull))
            app = builder.add_node("a", a, error_handler=h).add_edge(START, "a").compile(checkpointer=saver)
            with pytest.raises(DiskFull):
                await app.ainvoke({"log": []}, cfg, durability="sync")
            assert saver.failed
            assert ran == ["a"], "the error handler ran after the failing task's save failed"

    run_clean(scenario)


@pytest.mark.parametrize("node", ["raises", "interrupts"])
def test_a_failed_save_of_a_lone_tasks_last_writes_gives_the_threads_lease_back(tmp_path, node):
    """With `multitask="reject"` and durability "sync", the run's last task fails (or
    interrupts) and saving that fails: the run raises the saver's error and frees its
    thread, so the next run on it is not refused as busy."""

    async def scenario() -> None:
        cfg = _cfg()

        async def a(s: S) -> dict:
            if node == "raises":
                raise ValueError("boom")
            interrupt("question")
            return {"log": ["a"]}

        async with held_saver(tmp_path / "t.sqlite", fail=_error_writes, delay=0.01) as saver:
            app = StateGraph(S).add_node("a", a).add_edge(START, "a").compile(checkpointer=saver)
            with pytest.raises(DiskFull):
                await app.ainvoke({"log": []}, cfg, multitask="reject", durability="sync")
            assert saver.failed
            if node == "raises":
                with pytest.raises(ValueError, match="boom"):
                    await app.ainvoke({"log": []}, cfg, multitask="reject", durability="sync")
            else:
                out = await app.ainvoke({"log": []}, cfg, multitask="reject", durability="sync")
                assert [i.value for i in out["__interrupt__"]] == ["question"]

    run_clean(scenario)


@pytest.mark.parametrize("mode", ["custom", "messages"])
def test_a_save_that_fails_after_the_consumer_stopped_does_not_mark_the_node_done(tmp_path, mode):
    """The consumer stops at `a`'s live chunk and closes the stream; saving `a`'s writes
    then fails: `aclose()` raises the saver's error, `a` is still pending, and a resume
    runs it (once more) and finishes the run."""

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()
        gate = asyncio.Event()
        async with held_saver(tmp_path / "t.sqlite", hold=_writes_of("a"), fail=_writes_of("a")) as saver:
            saver.release = gate.is_set
            app = _graph(saver, ran)
            stream = app.astream({"log": []}, cfg, stream_mode=mode)
            async for _ in stream:
                assert await _when_a_is_saving(saver, mode) == 1
                gate.set()
                break
            with pytest.raises(DiskFull):
                await stream.aclose()
            assert saver.failed and ran == ["a"]
            state = await app.aget_state(cfg)
            assert state.next == ("a",) and not [t for t in state.tasks if t.result]
            final = await app.ainvoke(None, cfg)
            assert final["log"] == ["a", "b", "c"] and ran == ["a", "a", "b", "c"]

    run_clean(scenario)


# ---------------------------------------------------------------------- against LangGraph


def _saver_base(E: Any) -> type:
    return importlib.import_module(f"{E.root}.checkpoint.sqlite.aio").AsyncSqliteSaver


def _history(snapshots: list) -> list:
    return [(s.metadata["step"], s.metadata["source"], s.next, s.values) for s in snapshots]


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
@pytest.mark.parametrize("call", ["ainvoke", "astream-updates", "astream-custom"])
def test_a_slow_saver_saves_every_step_as_langgraph_does(differential, tmp_path, call, durability):
    """Every `aput_writes` and `aput` sleeps: the output, the saved history (steps,
    sources, next, values) and the thread's state after the run are LangGraph's."""
    counter = iter(range(100))

    async def scenario(E: Any) -> Any:
        cls = held_saver_class(_saver_base(E))
        async with held_saver(tmp_path / f"{E.root}-{next(counter)}.sqlite", delay=0.02, cls=cls) as saver:
            def node(name: str) -> Any:
                async def anode(s: dict) -> dict:
                    await asyncio.sleep(0)
                    return {"log": [name]}

                return anode

            app = (
                E.StateGraph(L).add_node("a", node("a")).add_node("b", node("b"))
                .add_edge(E.START, "a").add_edge("a", "b").compile(checkpointer=saver)
            )
            cfg = _cfg()
            if call == "ainvoke":
                out: Any = await app.ainvoke({"log": []}, cfg, durability=durability)
            else:
                out = [c async for c in app.astream({"log": []}, cfg, stream_mode=call.split("-")[1],
                                                    durability=durability)]
            history = _history([s async for s in app.aget_state_history(cfg)])
            return out, history, snapshot_summary(await app.aget_state(cfg))

    differential(scenario)


def test_an_interrupt_right_after_a_slow_save_pauses_and_resumes_as_langgraph_does(differential, tmp_path):
    """`a`'s writes are saved slowly and `b` interrupts at once: the pause, the saved
    state and the resume (`a` not run again) are LangGraph's."""
    counter = iter(range(100))

    async def scenario(E: Any) -> Any:
        cls = held_saver_class(_saver_base(E))
        ran: list[str] = []
        async with held_saver(tmp_path / f"{E.root}-{next(counter)}.sqlite", delay=0.03, cls=cls) as saver:
            async def a(s: dict) -> dict:
                ran.append("a")
                return {"log": ["a"]}

            async def b(s: dict) -> dict:
                ran.append("b")
                answer = E.interrupt("ok?")
                return {"log": [answer]}

            app = (
                E.StateGraph(L).add_node("a", a).add_node("b", b)
                .add_edge(E.START, "a").add_edge("a", "b").compile(checkpointer=saver)
            )
            cfg = _cfg()
            chunks = [c async for c in app.astream({"log": []}, cfg, stream_mode="updates")]
            paused = snapshot_summary(await app.aget_state(cfg))
            final = await app.ainvoke(E.Command(resume="yes"), cfg)
            return chunks, paused, final, list(ran)

    differential(scenario)


def _nested_app(E: Any, saver: Any, ran: list[str]) -> Any:
    def node(name: str) -> Any:
        async def anode(s: dict) -> dict:
            ran.append(name)
            return {"log": [name]}

        return anode

    child = (
        E.StateGraph(L).add_node("c1", node("c1")).add_node("c2", node("c2"))
        .add_edge(E.START, "c1").add_edge("c1", "c2").compile()
    )
    return (
        E.StateGraph(L).add_node("p", node("p")).add_node("sub", child).add_node("q", node("q"))
        .add_edge(E.START, "p").add_edge("p", "sub").add_edge("sub", "q").compile(checkpointer=saver)
    )


@pytest.mark.parametrize("call", ["ainvoke", "astream-updates-subgraphs"])
def test_a_subgraph_node_on_a_slow_saver_saves_and_streams_as_langgraph_does(differential, tmp_path, call):
    """A subgraph node whose graph shares the parent's slow saver: chunks, history and the
    final state are LangGraph's, each node run once."""
    counter = iter(range(100))

    async def scenario(E: Any) -> Any:
        cls = held_saver_class(_saver_base(E))
        ran: list[str] = []
        async with held_saver(tmp_path / f"{E.root}-{next(counter)}.sqlite", delay=0.02, cls=cls) as saver:
            app = _nested_app(E, saver, ran)
            cfg = _cfg()
            if call == "ainvoke":
                out: Any = await app.ainvoke({"log": []}, cfg, durability="sync")
            else:
                out = [c async for c in app.astream({"log": []}, cfg, stream_mode="updates",
                                                    subgraphs=True, durability="sync")]
            history = _history([s async for s in app.aget_state_history(cfg)])
            return out, history, list(ran)

    differential(scenario)


@pytest.mark.parametrize("mode", ["updates", "custom"])
def test_stopping_a_stream_inside_a_subgraph_during_a_slow_save_keeps_what_finished(tmp_path, mode):
    """The consumer closes a `subgraphs=True` stream at the child's first node's chunk
    while saves are slow: a resume finishes the run as an unbroken run does, with `p`,
    `c2` and `q` run once."""

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()

        class E:  # the lgnb names `_nested_app` needs
            StateGraph = StateGraph
            START = START

        async with held_saver(tmp_path / "t.sqlite", delay=0.03) as saver:
            app = _nested_app(E, saver, ran)
            async with contextlib.aclosing(
                app.astream({"log": []}, cfg, stream_mode=mode, subgraphs=True)
            ) as chunks:
                async for ns, _ in chunks:
                    if ns:
                        break
            final = await app.ainvoke(None, cfg)
            assert ran.count("p") == 1 and ran.count("q") == 1 and ran.count("c2") == 1, ran
            unbroken = await app.ainvoke({"log": []}, _cfg("unbroken"))
            assert final == unbroken

    run_clean(scenario)


def test_an_interrupt_right_after_a_slow_save_resumes_without_rerunning_the_saved_node(tmp_path):
    """`a`'s writes are held in flight when `b` (next step) would run: `b` does not run
    before they are saved; its interrupt pauses the run and the resume runs `a` no more."""

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()

        async def b(s: S) -> dict:
            ran.append("b")
            return {"log": [interrupt("ok?")]}

        async with held_saver(tmp_path / "t.sqlite", hold=_writes_of("a")) as saver:
            gate = asyncio.Event()
            saver.release = gate.is_set

            async def open_gate() -> None:
                await saver.started.wait()
                for _ in range(3):
                    await asyncio.sleep(0)
                assert ran == ["a"], "b ran before a's writes were saved"
                gate.set()

            opener = asyncio.ensure_future(open_gate())
            app = _graph(saver, ran, b_node=b)
            out = await app.ainvoke({"log": []}, cfg, durability="sync")
            await opener
            assert [i.value for i in out["__interrupt__"]] == ["ok?"]
            assert (await app.aget_state(cfg)).next == ("b",)
            final = await app.ainvoke(Command(resume="yes"), cfg)
            assert final["log"] == ["a", "yes", "c"]
            assert ran == ["a", "b", "b", "c"]

    run_clean(scenario)


# ---------------------------------------------------------------------- level-triggered cancellation


@pytest.mark.parametrize("call", ["ainvoke", "astream-custom"])
def test_an_anyio_cancel_scope_around_the_run_does_not_cancel_a_save_in_flight(tmp_path, call):
    """The run is inside an anyio `CancelScope` cancelled while `a`'s writes are being
    saved (anyio cancels the task again at every loop iteration until it leaves the
    scope): the save completes, `b` does not run, a resume does not run `a` again."""
    import anyio

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()
        async with held_saver(tmp_path / "t.sqlite", hold=_writes_of("a")) as saver:
            scope = anyio.CancelScope()
            polls = iter(range(1000))
            # held for 20 more polls (loop iterations) once the scope is cancelled
            saver.release = lambda: scope.cancel_called and next(polls) >= 20
            saver.on_start = scope.cancel
            app = _graph(saver, ran)
            with scope:
                await _consume(app, cfg, call)
            assert scope.cancelled_caught
            assert ran == ["a"]
            assert saver.held_saved == 1, "the save of a's writes was cancelled"
            await _a_is_done(app, cfg)
            await _resume_runs_a_once(app, cfg, ran)

    run_clean(scenario)


# ---------------------------------------------------------------------- a subgraph node's writes


@pytest.mark.parametrize("call", ["ainvoke", "astream-updates", "astream-custom"])
def test_cancelling_while_a_subgraph_nodes_writes_are_saved_keeps_them_and_runs_nothing_more(tmp_path, call):
    """The parent's task running a subgraph ended and its writes (the subgraph's output)
    are being saved when the consumer is cancelled: they are saved, the next node did not
    run, and a resume runs only that node (the subgraph's nodes not again)."""

    def subgraph_output(writes: Any) -> bool:
        return any(c == "log" and len(v) > 1 and v[-1] == "c2" for c, v in writes)

    async def scenario() -> None:
        ran: list[str] = []
        cfg = _cfg()

        class E:  # the lgnb names `_nested_app` needs
            StateGraph = StateGraph
            START = START

        async with held_saver(tmp_path / "t.sqlite", hold=subgraph_output) as saver:
            victim: list[asyncio.Task] = []
            saver.release = lambda: bool(victim) and victim[0].cancelling() > 0
            app = _nested_app(E, saver, ran)
            task = asyncio.ensure_future(_consume(app, cfg, call))
            victim.append(task)
            await saver.started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert saver.held_saved == 1
            assert ran == ["p", "c1", "c2"]
            assert "sub" not in (await app.aget_state(cfg)).next
            final = await app.ainvoke(None, cfg)
            assert ran == ["p", "c1", "c2", "q"]
            assert final == await app.ainvoke({"log": []}, _cfg("unbroken"))

    run_clean(scenario)

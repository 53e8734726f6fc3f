"""Cancel means cancelled (issue 11, item 3): once `RunControl.request_cancel()` returns,
nothing of that run is written to its thread, ever.

The bug: a run cancelled while its node ran still saved the node's checkpoint when the
node returned, after a new run on the same thread had saved its own — the cancelled
run's state became the thread's latest, hiding the new run's result. Here a node that
ignores the cancel keeps running after `request_cancel()`; a new run starts on the thread
at once; both end; the thread's latest state is the new run's, and nothing the old run
did after the cancel is in the saver (no checkpoint, no pending write). Real SQLite files
(lgnb's sync and async savers); the sync engine path and the async one.
"""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgnb.graph import START, StateGraph
from lgnb.runtime import RunControl, Runtime


class S(TypedDict):
    who: str
    log: Annotated[list, operator.add]


def _graph(saver: Any, work: Any) -> Any:
    """START -> work -> after: `work` is the node cancelled while it runs."""

    def after(s: S) -> dict:
        return {"log": [f"after:{s['who']}"]}

    return (
        StateGraph(S)
        .add_node("work", work)
        .add_node("after", after)
        .add_edge(START, "work")
        .add_edge("work", "after")
        .compile(checkpointer=saver)
    )


class SlowWork:
    """A node that, for the run named "old", announces it started, then keeps running for
    `seconds` whatever happens (it ignores the cancel), and notes what
    `runtime.cancel_requested` said when it ended."""

    def __init__(self, seconds: float = 0.6) -> None:
        self.seconds = seconds
        self.started = threading.Event()
        self.finished = threading.Event()
        self.saw_cancel: dict[str, bool] = {}

    def __call__(self, s: S, runtime: Runtime) -> dict:
        if s["who"] == "old":
            self.started.set()
            time.sleep(self.seconds)
        self.saw_cancel[s["who"]] = runtime.cancel_requested
        if s["who"] == "old":
            self.finished.set()
        return {"log": [f"work:{s['who']}"]}


class AsyncSlowWork(SlowWork):
    async def __call__(self, s: S, runtime: Runtime) -> dict:  # type: ignore[override]
        if s["who"] == "old":
            self.started.set()
            await asyncio.sleep(self.seconds)
        self.saw_cancel[s["who"]] = runtime.cancel_requested
        if s["who"] == "old":
            self.finished.set()
        return {"log": [f"work:{s['who']}"]}


def _everything_stored(saver: Any, cfg: dict) -> tuple[set[str], list[Any], list[Any]]:
    """Checkpoint ids, channel values, and pending writes the saver holds for the thread."""
    tuples = list(saver.list(cfg))
    ids = {t.config["configurable"]["checkpoint_id"] for t in tuples}
    values = [t.checkpoint["channel_values"] for t in tuples]
    writes = [w for t in tuples for w in (t.pending_writes or [])]
    return ids, values, writes


def _assert_old_wrote_nothing_after(saver: Any, cfg: dict, before_ids: set[str]) -> None:
    ids, values, writes = _everything_stored(saver, cfg)
    assert not any("work:old" in (v.get("log") or []) for v in values), values
    assert not any(w[2] == ["work:old"] for w in writes), writes
    for t in saver.list(cfg):  # every checkpoint saved after the cancel is the new run's
        if t.config["configurable"]["checkpoint_id"] not in before_ids:
            values = t.checkpoint["channel_values"]  # its input checkpoint, or a later one
            assert (values.get("__start__") or values)["who"] == "new", values


@pytest.mark.parametrize("how", ["stream", "invoke"])  # `invoke` runs its steps as plain calls
@pytest.mark.parametrize("multitask", [None, "reject"])
def test_a_run_cancelled_mid_node_writes_nothing_after_cancel_and_the_new_run_is_the_latest(
    tmp_path, multitask, how
):
    work = SlowWork()
    with SqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as saver:
        g = _graph(saver, work)
        cfg = {"configurable": {"thread_id": "t"}}
        control = RunControl()
        outcome: list[BaseException | list] = []

        def old_run() -> None:
            run = g.stream if how == "stream" else g.invoke
            try:
                result = run({"who": "old", "log": ["in:old"]}, cfg, control=control, multitask=multitask)
                outcome.append(list(result))
            except BaseException as exc:  # noqa: BLE001 - the test looks at it
                outcome.append(exc)

        old = threading.Thread(target=old_run)
        old.start()
        assert work.started.wait(10)
        control.request_cancel("the user pressed cancel")
        before_ids, _, _ = _everything_stored(saver, cfg)

        # a new run on the same thread at once (with multitask="reject": not refused, the
        # cancelled run gave the thread back)
        result = g.invoke({"who": "new", "log": ["in:new"]}, cfg, multitask=multitask)
        assert result["log"] == ["in:old", "in:new", "work:new", "after:new"]
        old.join(10)
        assert work.finished.is_set() and not old.is_alive()
        time.sleep(0.2)  # whatever the old run would still do after its node returned

        assert isinstance(outcome[0], asyncio.CancelledError)
        assert "the user pressed cancel" in str(outcome[0])
        assert work.saw_cancel == {"new": False, "old": True}
        state = g.get_state(cfg)
        assert state.values["log"] == ["in:old", "in:new", "work:new", "after:new"]
        assert state.next == ()
        _assert_old_wrote_nothing_after(saver, cfg, before_ids)
        history = [s.values.get("log") for s in g.get_state_history(cfg)]
        assert history[0] == ["in:old", "in:new", "work:new", "after:new"]
        assert not any("work:old" in (h or []) for h in history)


@pytest.mark.parametrize("node", ["async", "sync"])
def test_async_a_run_cancelled_mid_node_writes_nothing_after_cancel_and_the_new_run_is_the_latest(tmp_path, node):
    work = AsyncSlowWork() if node == "async" else SlowWork()

    async def main() -> None:
        async with AsyncSqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as saver:
            g = _graph(saver, work)
            cfg = {"configurable": {"thread_id": "t"}}
            control = RunControl()

            async def old_run() -> list:
                return [c async for c in g.astream({"who": "old", "log": ["in:old"]}, cfg, control=control,
                                                   multitask="reject")]

            old = asyncio.create_task(old_run())
            while not work.started.is_set():
                await asyncio.sleep(0.01)
            control.request_cancel()  # from the event loop the run lives on
            before_ids, _, _ = await asyncio.to_thread(_everything_stored, saver, cfg)
            result = await g.ainvoke({"who": "new", "log": ["in:new"]}, cfg, multitask="reject")
            assert result["log"] == ["in:old", "in:new", "work:new", "after:new"]
            with pytest.raises(asyncio.CancelledError):
                await old
            while not work.finished.is_set():
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)

            assert work.saw_cancel == {"new": False, "old": True}
            state = await g.aget_state(cfg)
            assert state.values["log"] == ["in:old", "in:new", "work:new", "after:new"]
            await asyncio.to_thread(_assert_old_wrote_nothing_after, saver, cfg, before_ids)

    asyncio.run(main())


def test_async_cancelling_the_task_leaves_a_sync_node_still_running_unsaved_and_told(tmp_path):
    """Cancelling the asyncio task of `ainvoke` (LangGraph's way to stop a run): what
    LangGraph saves while the task unwinds is saved, then the run is cancelled — the
    sync node still running in its thread reads `cancel_requested` and its writes go
    nowhere, even though it returns after a new run finished."""
    work = SlowWork()

    async def main() -> None:
        async with AsyncSqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as saver:
            g = _graph(saver, work)
            cfg = {"configurable": {"thread_id": "t"}}
            old = asyncio.create_task(g.ainvoke({"who": "old", "log": ["in:old"]}, cfg))
            while not work.started.is_set():
                await asyncio.sleep(0.01)
            old.cancel()
            with pytest.raises(asyncio.CancelledError):
                await old
            before_ids, _, _ = await asyncio.to_thread(_everything_stored, saver, cfg)
            await g.ainvoke({"who": "new", "log": ["in:new"]}, cfg)
            while not work.finished.is_set():
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
            assert work.saw_cancel == {"new": False, "old": True}
            state = await g.aget_state(cfg)
            assert state.values["log"] == ["in:old", "in:new", "work:new", "after:new"]
            await asyncio.to_thread(_assert_old_wrote_nothing_after, saver, cfg, before_ids)

    asyncio.run(main())


def test_a_node_can_stop_early_when_it_reads_cancel_requested(tmp_path):
    polls: list[int] = []
    started = threading.Event()

    def patient(s: S, runtime: Runtime) -> dict:
        started.set()
        for i in range(1000):  # would take 10 s
            if runtime.cancel_requested:
                polls.append(i)
                break
            time.sleep(0.01)
        return {"log": ["work"]}

    with SqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as saver:
        g = _graph(saver, patient)
        cfg = {"configurable": {"thread_id": "t"}}
        control = RunControl()
        done: list[BaseException] = []

        def go() -> None:
            try:
                g.invoke({"who": "old", "log": []}, cfg, control=control)
            except BaseException as exc:  # noqa: BLE001
                done.append(exc)

        t0 = time.monotonic()
        runner = threading.Thread(target=go)
        runner.start()
        assert started.wait(10)
        control.request_cancel()
        runner.join(10)
        assert time.monotonic() - t0 < 3
        assert polls and isinstance(done[0], asyncio.CancelledError)
        assert control.cancel_requested and control.cancel_reason == "request_cancel() was called"
        assert g.get_state(cfg).values["log"] == []  # the input only: "work" was not saved


class _SlowPutSaver(SqliteSaver):
    """lgnb's SQLite saver whose checkpoint saves after the first step take a while, to
    catch `request_cancel()` while one is being written."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.put_started = threading.Event()
        self.puts_done: list[int] = []

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        step = metadata.get("step", -1)
        if step >= 1:
            self.put_started.set()
            time.sleep(0.5)
        out = super().put(config, checkpoint, metadata, new_versions)
        self.puts_done.append(step)
        return out


def test_request_cancel_returns_after_a_save_already_under_way_and_nothing_is_saved_after_it(tmp_path):
    saver = _SlowPutSaver(tmp_path / "threads.sqlite")
    try:
        g = _graph(saver, lambda s: {"log": ["work"]})
        cfg = {"configurable": {"thread_id": "t"}}
        control = RunControl()
        runner = threading.Thread(target=lambda: _swallow(lambda: g.invoke({"who": "x", "log": []}, cfg,
                                                                           control=control)))
        runner.start()
        assert saver.put_started.wait(10)  # the checkpoint after step 1 ("work") is being written
        control.request_cancel()
        done_at_return = list(saver.puts_done)
        runner.join(10)
        time.sleep(0.2)
        assert done_at_return[-1] == 1  # the save under way finished before request_cancel returned
        assert saver.puts_done == done_at_return  # and nothing was saved after ("after" not stored)
        assert g.get_state(cfg).values["log"] == ["work"]
    finally:
        saver.close()


def _swallow(fn: Any) -> None:
    try:
        fn()
    except BaseException:  # noqa: BLE001 - the run's cancellation, looked at elsewhere
        pass


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_run_cancelled_while_its_subgraph_node_runs_writes_nothing_after_cancel(tmp_path, request, kind):
    """The cancel reaches a subgraph's loop (its own namespace, the parent's saver): neither
    the subgraph's checkpoints nor the parent's are saved after it. lgnb's SQLite file and
    lgnb's PostgresSaver."""
    import uuid
    from contextlib import ExitStack

    work = SlowWork()
    inner = StateGraph(S).add_node("work", work).add_edge(START, "work").compile()
    with ExitStack() as stack:
        if kind == "sqlite":
            saver = stack.enter_context(SqliteSaver.from_conn_string(tmp_path / "threads.sqlite"))
        else:
            from lgnb.checkpoint.postgres import PostgresSaver

            saver = stack.enter_context(PostgresSaver.from_conn_string(request.getfixturevalue("postgres_url")))
            saver.setup()
        g = (
            StateGraph(S)
            .add_node("inner", inner)
            .add_node("after", lambda s: {"log": [f"after:{s['who']}"]})
            .add_edge(START, "inner")
            .add_edge("inner", "after")
            .compile(checkpointer=saver)
        )
        cfg = {"configurable": {"thread_id": f"sub-{uuid.uuid4()}"}}
        control = RunControl()
        outcome: list[Any] = []
        old = threading.Thread(target=lambda: outcome.append(_consume(g, cfg, control)))
        old.start()
        assert work.started.wait(10)
        control.request_cancel("stop")
        # this thread's checkpoints in every namespace (the database is shared with other tests)
        before = {t.config["configurable"]["checkpoint_id"] for t in saver.list(cfg)}
        result = g.invoke({"who": "new", "log": ["in:new"]}, cfg)
        old.join(10)
        time.sleep(0.2)
        assert isinstance(outcome[0], asyncio.CancelledError) and work.saw_cancel["old"] is True
        assert result["log"] == g.get_state(cfg).values["log"]
        assert "work:old" not in result["log"] and result["log"][-1] == "after:new"
        # every checkpoint of the thread, the subgraph's namespaces included
        later = [t for t in saver.list(cfg) if t.config["configurable"]["checkpoint_id"] not in before]
        assert later, "the new run saved its checkpoints"
        for t in later:
            assert "work:old" not in (t.checkpoint["channel_values"].get("log") or [])
            assert not any(w[2] == ["work:old"] for w in t.pending_writes or [])
        if kind == "postgres":
            saver.delete_thread(cfg["configurable"]["thread_id"])


def _consume(g: Any, cfg: dict, control: RunControl) -> Any:
    try:
        return list(g.stream({"who": "old", "log": ["in:old"]}, cfg, control=control, subgraphs=True))
    except BaseException as exc:  # noqa: BLE001 - the test looks at it
        return exc

"""The views over an async saver, called where a notebook calls them: on the event loop.

In JupyterLab every cell and every widget message runs on the kernel's event loop.
LangGraph's ``AsyncSqliteSaver`` and ``AsyncPostgresSaver`` made in a cell take no sync
call on that loop's thread (``InvalidStateError``), so a timeline read the usual way
failed before it showed anything. The view now reads on a thread of its own: the first
page, a click's details, a fork from the page and a replay all work; the direct API
called from the loop says how to call it instead. lgnb's own async saver reads from any
thread, so with it nothing changes. The same holds for `lgnb.run` and `lgnb.lens`, whose
runs save through that loop: their buttons work, and a call that would block the loop
until the run saves (`run.wait()`, `lens.step()`) says what to call instead.

Each test runs its scenario in ``asyncio.run`` and calls the view's API from inside the
coroutine, as a cell with top-level ``await`` does, then yields to the loop while the
view works (as the kernel does between cells). Real SQLite files; PostgreSQL where the
server is configured (``LGNB_TEST_POSTGRES_URL``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

import lgnb

sys.path.insert(0, str(Path(__file__).parents[1] / "persistence"))
from _savers import Savers, thread  # noqa: E402

LOOP_BOUND = ["langgraph_async_sqlite", "async_postgres"]


class S(TypedDict):
    x: int
    log: list


def _app(eng: Any, saver: Any) -> Any:
    """START → double → add_one: two steps after the input."""
    g = eng.StateGraph(S)
    g.add_node("double", lambda s: {"x": s["x"] * 2, "log": s["log"] + ["double"]})
    g.add_node("add_one", lambda s: {"x": s["x"] + 1, "log": s["log"] + ["add_one"]})
    g.add_edge(eng.START, "double")
    g.add_edge("double", "add_one")
    return g.compile(checkpointer=saver)


async def _until(what: str, ready: Callable[[], bool], timeout: float = 20.0) -> None:
    """Yield to the loop (as the kernel does between cells) until `ready()`."""
    end = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def _ids(app: Any, cfg: dict) -> list[str]:
    return [s.config["configurable"]["checkpoint_id"] async for s in app.aget_state_history(cfg)]


def _shown(view: Any) -> set[str]:
    return {c.id for c in view.model.checkpoints} if view.model is not None else set()


def _savers(tmp_path: Path, kind: str, request: pytest.FixtureRequest) -> Savers:
    url = request.getfixturevalue("postgres_url") if kind == "async_postgres" else None
    return Savers(tmp_path, url)


@asynccontextmanager
async def _timeline(eng: Any, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    """A cell's work: the saver opened on this loop, a run on a thread, `lgnb.history` on
    it, and its first page read (the view's thread, the loop free meanwhile)."""
    async with _savers(tmp_path, kind, request).aopen(kind, eng) as saver:
        app = _app(eng, saver)
        cfg = thread("h")
        await app.ainvoke({"x": 3, "log": []}, cfg)
        view = lgnb.history(app, cfg)
        await _until("the first page", lambda: bool(_shown(view)))
        yield app, cfg, view


@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_timeline_called_from_a_cell_shows_every_checkpoint(eng, kind, tmp_path, request):
    """`lgnb.history(app, cfg)` in a cell returns at once, without an error, and the
    timeline fills in with exactly the thread's checkpoints once the loop is free."""
    async def cell() -> None:
        async with _savers(tmp_path, kind, request).aopen(kind, eng) as saver:
            app = _app(eng, saver)
            cfg = thread("h")
            await app.ainvoke({"x": 3, "log": []}, cfg)
            view = lgnb.history(app, cfg)
            assert view.error == ""
            await _until("the first page", lambda: bool(_shown(view)))
            assert _shown(view) == set(await _ids(app, cfg))
            assert view.notice == ""
            assert view.timeline["loaded"] == 4  # input, START's step, double, add_one
            view.close()

    asyncio.run(cell())


@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_clicking_a_checkpoint_shows_its_values_and_fork_form(eng, kind, tmp_path, request):
    """Selecting a checkpoint on the page (the synced `selected` trait) fills in its
    values, next node and fork form, read on the view's thread."""
    async def cell() -> None:
        async with _timeline(eng, kind, tmp_path, request) as (app, cfg, view):
            newest, after_double = (await _ids(app, cfg))[:2]
            view.selected = after_double
            await _until("the details", lambda: view.details.get("id") == after_double)
            assert view.details["values"] == {"x": 6, "log": ["double"]}
            assert view.details["next"] == ["add_one"]
            assert {f["key"] for f in view.details["form"]["fields"]} >= {"x", "log"}
            view.compare = newest
            await _until("the diff", lambda: view.diff.get("a") == newest)
            assert "error" not in view.diff
            assert view.error == ""
            view.close()

    asyncio.run(cell())


@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_fork_from_the_page_writes_a_new_branch(eng, kind, tmp_path, request):
    """The page's Fork button with an edited field: the saver gets a new checkpoint with
    the edit, the view selects it and answers the page with ok."""
    async def cell() -> None:
        async with _timeline(eng, kind, tmp_path, request) as (app, cfg, view):
            before = await _ids(app, cfg)
            replies: list[dict] = []
            view.send = lambda content, buffers=None: replies.append(content)  # the page's side
            view._dispatch(view, {"kind": "fork", "id": before[1], "values": {"x": "41"}, "request": 7}, [])
            await _until("the fork's answer", lambda: any(r.get("kind") == "fork-result" for r in replies))
            answer = next(r for r in replies if r.get("kind") == "fork-result")
            assert answer["ok"] is True, answer
            after = await _ids(app, cfg)
            assert len(after) == len(before) + 1
            state = await app.aget_state(cfg)
            assert state.values["x"] == 41 and state.next == ("add_one",)
            assert answer["checkpoint"] == after[0] == view.selected
            await _until("the new checkpoint drawn", lambda: after[0] in _shown(view))
            view.close()

    asyncio.run(cell())


@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_replay_from_the_page_runs_and_the_timeline_grows(eng, kind, tmp_path, request):
    """Replay from the checkpoint after `double`: the run re-executes `add_one`, and the
    timeline it follows shows the replay's new checkpoint."""
    async def cell() -> None:
        async with _timeline(eng, kind, tmp_path, request) as (app, cfg, view):
            before = await _ids(app, cfg)
            view._dispatch(view, {"kind": "replay", "id": before[1], "request": 1}, [])
            await _until("the replay", lambda: bool(view.runs) and view.runs[-1].status not in ("running", "pending"))
            assert view.runs[-1].status == "done", view.runs[-1].view.error
            assert view.runs[-1].result == {"x": 7, "log": ["double", "add_one"]}
            after = await _ids(app, cfg)
            assert set(before) < set(after)  # the replay's checkpoints on a new branch
            assert (await app.aget_state(cfg)).values == {"x": 7, "log": ["double", "add_one"]}
            await _until("the replay's checkpoint drawn", lambda: after[0] in _shown(view))
            assert view.error == ""
            view.close()

    asyncio.run(cell())


@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_direct_reads_on_the_loop_say_how_to_call_them(eng, kind, tmp_path, request):
    """`view.refresh()` called in a cell cannot run there: the error names the way that
    works, `await asyncio.to_thread(view.refresh)`, and that way works."""
    async def cell() -> None:
        async with _timeline(eng, kind, tmp_path, request) as (app, cfg, view):
            await app.ainvoke({"x": 5, "log": []}, cfg)  # a second run: new checkpoints
            with pytest.raises(RuntimeError, match=r"asyncio\.to_thread\(view\.refresh\)"):
                view.refresh()
            await asyncio.to_thread(view.refresh)
            assert _shown(view) == set(await _ids(app, cfg))
            view.close()

    asyncio.run(cell())


def test_lgnbs_async_saver_is_read_in_the_cell_itself(eng, tmp_path):
    """lgnb's own async saver reads from any thread: the timeline is there when
    `lgnb.history` returns, and the direct API works in the cell."""
    async def cell() -> None:
        async with Savers(tmp_path).aopen("lgnb_async_sqlite", eng) as saver:
            app = _app(eng, saver)
            cfg = thread("h")
            await app.ainvoke({"x": 3, "log": []}, cfg)
            view = lgnb.history(app, cfg)
            assert _shown(view) == set(await _ids(app, cfg))
            assert view.notice == ""
            ids = await _ids(app, cfg)
            assert view.values_at(ids[1]) == {"x": 6, "log": ["double"]}
            view.close()

    asyncio.run(cell())


async def _a(s: dict) -> dict:
    """An async node: the views drive such a graph with `astream`."""
    await asyncio.sleep(0)
    return {"x": s["x"] * 2, "log": s["log"] + ["double"]}


def _app_async(eng: Any, saver: Any) -> Any:
    g = eng.StateGraph(S)
    g.add_node("double", _a)
    g.add_node("add_one", lambda s: {"x": s["x"] + 1, "log": s["log"] + ["add_one"]})
    g.add_edge(eng.START, "double")
    g.add_edge("double", "add_one")
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("nodes", ["sync", "async"])
@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_run_view_saves_and_await_run_returns_the_result(eng, kind, nodes, tmp_path, request):
    """`lgnb.run` from a cell: the run saves every step through the loop-bound saver,
    `await run` gives the result, and `run.wait()` (which would block the loop the run
    saves on) raises at once, naming `await run`."""
    async def cell() -> None:
        async with _savers(tmp_path, kind, request).aopen(kind, eng) as saver:
            app = (_app if nodes == "sync" else _app_async)(eng, saver)
            cfg = thread("r")
            run = lgnb.run(app, {"x": 3, "log": []}, cfg, display=False)
            with pytest.raises(RuntimeError, match=r"`await run`"):
                run.wait()
            assert await run == {"x": 7, "log": ["double", "add_one"]}
            assert run.status == "done"
            assert len(await _ids(app, cfg)) == 4
            assert run.wait() == {"x": 7, "log": ["double", "add_one"]}  # settled: nothing to wait for

    asyncio.run(cell())


@pytest.mark.parametrize("nodes", ["sync", "async"])
@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_lens_steps_from_the_page_and_refuses_to_block_the_loop(eng, kind, nodes, tmp_path, request):
    """`lgnb.lens` from a cell: the page's Step button advances one super-step at a time
    and each is saved; `lens.step()` in the cell raises, naming
    `await asyncio.to_thread(lens.step)`, and that call works."""
    async def cell() -> None:
        async with _savers(tmp_path, kind, request).aopen(kind, eng) as saver:
            app = (_app if nodes == "sync" else _app_async)(eng, saver)
            cfg = thread("l")
            lens = lgnb.lens(app, {"x": 3, "log": []}, cfg, display=False)
            with pytest.raises(RuntimeError, match=r"asyncio\.to_thread\(lens\.step\)"):
                lens.step()
            lens.view._dispatch(lens.view, {"kind": "step"}, [])
            await _until("the first step", lambda: not lens.view.busy and len(lens.steps) >= 1)
            first = len(lens.steps)
            await asyncio.to_thread(lens.step)
            assert len(lens.steps) == first + 1
            while lens.status not in ("done", "error"):
                lens.view._dispatch(lens.view, {"kind": "step"}, [])
                await _until("a step", lambda: not lens.view.busy)
            assert lens.status == "done", lens.view.error
            assert lens.result == {"x": 7, "log": ["double", "add_one"]}
            assert (await app.aget_state(cfg)).values == lens.result
            lens.view.close()

    asyncio.run(cell())


@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_a_question_answered_on_the_page_resumes_the_run(eng, kind, tmp_path, request):
    """A node asks `interrupt({"question", "options"})`; the run view draws its form, the
    page's answer (a click on "pro") resumes the run through the loop-bound saver, and the
    node gets the option."""
    def ask(s: dict) -> dict:
        plan = eng.interrupt({"question": "Which plan?", "options": ["basic", "pro"]})
        return {"log": s["log"] + [plan]}

    async def cell() -> None:
        async with _savers(tmp_path, kind, request).aopen(kind, eng) as saver:
            g = eng.StateGraph(S)
            g.add_node("ask", ask)
            g.add_edge(eng.START, "ask")
            app = g.compile(checkpointer=saver)
            cfg = thread("q")
            run = lgnb.run(app, {"x": 0, "log": []}, cfg, display=False)
            await run
            assert run.status == "interrupted"
            (form,) = run.forms
            replies: list[dict] = []
            run.view.send = lambda content, buffers=None: replies.append(content)
            run.view._dispatch(run.view, {"kind": "answer", "id": 1, "interrupt_id": form["id"],
                                          "picks": [{"part": 0, "choice": "1", "inputs": {}}]}, [])
            assert replies and replies[-1]["ok"] is True, replies
            assert await run == {"x": 0, "log": ["pro"]}
            assert (await app.aget_state(cfg)).values["log"] == ["pro"]

    asyncio.run(cell())


@pytest.mark.parametrize("kind", LOOP_BOUND)
def test_a_sync_run_and_an_async_run_share_the_saver_at_once(eng, kind, tmp_path, request):
    """Two `lgnb.run` cells on one loop-bound saver, one graph of sync nodes (driven by
    `stream` in a thread, saving through the loop) and one with an async node (driven by
    `astream`): both save on the saver's own loop, so they finish side by side. (`astream`
    on another loop took the saver's lock from two loops: "bound to a different event loop".)"""
    async def cell() -> None:
        async with _savers(tmp_path, kind, request).aopen(kind, eng) as saver:
            runs = [lgnb.run(build(eng, saver), {"x": 3, "log": []}, cfg, display=False)
                    for build, cfg in ((_app, thread("s")), (_app_async, thread("a")), (_app, thread("s2")))]
            results = [await run for run in runs]
            assert [run.status for run in runs] == ["done"] * 3, [run.view.error for run in runs]
            assert results == [{"x": 7, "log": ["double", "add_one"]}] * 3
            for run in runs:
                assert len(await _ids(run.graph, run.config)) == 4

    asyncio.run(cell())

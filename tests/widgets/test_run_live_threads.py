"""Issue 12: a run is live while the kernel is busy.

A cell that blocks the kernel's loop (`time.sleep(3)`, a long computation, a loop that
polls `run.status`) must neither freeze the run's view nor its state: the run hands its
chunks over in its own thread and sends from there (or from lgnb's timer thread), so
`run.status`, `run.result` and `run.interrupts` are current from any thread, and the view's
messages leave the kernel while the other cell runs — one sender at a time, in order.

The first test drives a real ipykernel over ZMQ (jupyter_client): the IOPub stream shows
which messages left the kernel while the sleeping cell was busy.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import comm as comm_package
import pytest
from _kernels import running_kernel
from comm.base_comm import BaseComm
from widget_fakes import FakeStreamingChat
from widget_graphs import _engine

from lgnb.widgets import run

ROOT = Path(__file__).resolve().parents[2]

SETUP = """\
import sys, time
sys.path.insert(0, 'TESTS')
import lgnb
from widget_fakes import FakeStreamingChat
from lgnb.graph import StateGraph, START, MessagesState
model = FakeStreamingChat(replies=[' '.join(f'tok{i:02d}' for i in range(30))], chunk_chars=6, delay=0.1)
talker = (StateGraph(MessagesState).add_node('talk', lambda s: {'messages': [model.invoke(s['messages'])]})
          .add_edge(START, 'talk').compile())
failed_at = []
def fail(s):
    time.sleep(0.5)
    failed_at.append(time.monotonic())
    raise ValueError('failed on purpose')
failing = StateGraph(MessagesState).add_node('fail', fail).add_edge(START, 'fail').compile()
"""

POLL = """\
seen_at, start = None, time.monotonic()
while time.monotonic() - start < 2.0:
    if seen_at is None and failing_run.status == 'error':
        seen_at = time.monotonic()
print(round((seen_at - failed_at[0]) * 1000) if seen_at and failed_at else f'never ({failing_run.status})')
"""


def _execute(kc: Any, code: str, timeout: float = 60) -> tuple[str, list[dict[str, Any]]]:
    """Run `code`; return its msg id and every IOPub message until the kernel is idle for it."""
    msg_id = kc.execute(code)
    seen: list[dict[str, Any]] = []
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        seen.append(msg)
        if (msg["msg_type"] == "status" and msg["parent_header"].get("msg_id") == msg_id
                and msg["content"]["execution_state"] == "idle"):
            return msg_id, seen


def _patch_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The streamed token text in each patch batch, in arrival order."""
    texts = []
    for m in messages:
        data = m["content"].get("data") or {} if m["msg_type"] == "comm_msg" else {}
        content = data.get("content") or {} if data.get("method") == "custom" else {}
        if content.get("kind") == "patches":
            texts.append("".join(p.get("text", "") for p in content["patches"] if p["kind"] == "msg.delta"))
    return texts


@pytest.fixture
def kernel() -> Iterator[Any]:
    with running_kernel() as (_, kc):
        yield kc


def test_in_a_real_kernel_the_view_streams_while_another_cell_sleeps_and_a_busy_cell_reads_status_at_once(
        kernel: Any) -> None:
    _, setup = _execute(kernel, SETUP.replace("TESTS", str(Path(__file__).parent)))
    assert not [m for m in setup if m["msg_type"] == "error"], [m["content"] for m in setup if m["msg_type"] == "error"]
    _execute(kernel, "talking = lgnb.run(talker, {'messages': [('user', 'go')]})")
    sleep_id, during = _execute(kernel, "time.sleep(2); print(talking.status)")
    busy = next(i for i, m in enumerate(during) if m["msg_type"] == "status"
                and m["parent_header"].get("msg_id") == sleep_id and m["content"]["execution_state"] == "busy")
    streamed = [t for t in _patch_texts(during[busy:-1]) if t]
    # ~20 tokens of 0.1 s reached IOPub while the cell slept, batch after batch, in order
    assert len(streamed) >= 8, streamed
    joined = "".join(streamed)
    assert len(joined) >= 60 and joined in " ".join(f"tok{i:02d}" for i in range(30)), joined
    printed = "".join(m["content"].get("text", "") for m in during if m["msg_type"] == "stream")
    assert printed.strip() == "running"  # the model still streams: the sleep was the busy cell
    _, rest = _execute(kernel, "talking.wait(30); print(talking.status, talking.result['messages'][-1].content[-5:])")
    assert "done tok29" in "".join(m["content"].get("text", "") for m in rest if m["msg_type"] == "stream")

    _execute(kernel, "failing_run = lgnb.run(failing, {'messages': []})")
    _, polled = _execute(kernel, POLL)
    printed = "".join(m["content"].get("text", "") for m in polled if m["msg_type"] == "stream").strip()
    assert printed.isdigit() and int(printed) <= 300, printed  # ms from the raise to status "error"
    # the view's status went out while the polling cell was still busy
    statuses = [m["content"]["data"]["state"]["status"] for m in polled[:-1] if m["msg_type"] == "comm_msg"
                and "status" in ((m["content"].get("data") or {}).get("state") or {})]
    assert "error" in statuses, statuses


# -- in-process: the run's loop blocked by the very code that reads the run ----------------
def one_node(eng: Any, fn: Any, *, checkpointer: Any = None) -> Any:
    g = eng.StateGraph(eng.MessagesState)
    g.add_node("work", fn)
    g.add_edge(eng.START, "work")
    g.add_edge("work", eng.END)
    return g.compile(checkpointer=checkpointer)


def _block_until(predicate: Any, seconds: float) -> float:
    """Busy-wait on this thread (the loop cannot run meanwhile); the seconds it took."""
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > seconds:
            break
        time.sleep(0.002)
    return time.monotonic() - t0


async def test_status_result_and_view_are_current_while_the_runs_own_loop_is_blocked(eng: Any) -> None:
    r = run(one_node(eng, lambda s: {"messages": [("ai", "finished")]}), {"messages": []}, display=False)
    assert r._loop is asyncio.get_running_loop()  # the loop a kernel cell would block
    took = _block_until(lambda: r.status == "done", 10)
    assert r.status == "done", f"still {r.status} after {took:.1f} s"
    assert r.result["messages"][-1].content == "finished"
    assert r.view.status == "done" and r.view.snapshot["messages"][-1]["content"] == "finished"


async def test_interrupts_are_current_while_the_loop_is_blocked(eng: Any) -> None:
    def ask(state: Any) -> Any:
        return {"messages": [("ai", str(eng.interrupt("proceed?")))]}

    r = run(one_node(eng, ask, checkpointer=eng.InMemorySaver()), {"messages": []}, display=False)
    _block_until(lambda: r.status == "interrupted", 10)
    assert r.status == "interrupted"
    assert [i["value"] for i in r.interrupts] == ["proceed?"]
    assert r.view.interrupts and r.view.interrupts[0]["value"] == "proceed?"


def test_status_reads_error_within_300_ms_of_the_failure_from_another_thread(eng: Any) -> None:
    failed_at: list[float] = []

    def fail(state: Any) -> Any:
        time.sleep(0.3)
        failed_at.append(time.monotonic())
        raise ValueError("failed on purpose")

    r = run(one_node(eng, fail), {"messages": []}, display=False)
    seen: list[float] = []

    def watch() -> None:
        _block_until(lambda: r.status == "error", 10)
        seen.append(time.monotonic())

    watcher = threading.Thread(target=watch)
    watcher.start()
    watcher.join(15)
    assert r.status == "error" and isinstance(r.error, ValueError)
    assert 0 <= seen[0] - failed_at[0] <= 0.3, seen[0] - failed_at[0]


class _Recorder(BaseComm):
    """A widget comm that records each message, the thread that sent it, and whether two
    sends ever overlapped (it holds each send a moment to give an overlap a chance)."""

    log: list[tuple[str, float, Any]]
    inside = 0
    overlaps = 0
    guard = threading.Lock()

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None,
                    buffers: Any = None, **keys: Any) -> None:
        cls = type(self)
        with cls.guard:
            cls.inside += 1
            cls.overlaps += cls.inside > 1
        time.sleep(0.0005)
        cls.log.append((threading.current_thread().name, time.monotonic(), data))
        with cls.guard:
            cls.inside -= 1


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Recorder]]:
    _Recorder.log, _Recorder.inside, _Recorder.overlaps = [], 0, 0
    monkeypatch.setattr(comm_package, "create_comm", lambda *a, **k: _Recorder(*a, **k))
    yield _Recorder


async def test_the_view_streams_in_order_from_the_runs_thread_one_sender_at_a_time_while_the_loop_is_blocked(
        recorder: type[_Recorder]) -> None:
    lg = _engine("langgraph")
    text = " ".join(f"w{i:03d}" for i in range(120))
    model = FakeStreamingChat(replies=[text], chunk_chars=5, delay=0.01)
    r = run(one_node(lg, lambda s: {"messages": [model.invoke(s["messages"])]}), {"messages": []}, display=False)
    loop_thread = threading.current_thread().name
    started = time.monotonic()
    # the page clicks/asks for a snapshot from this thread while the run sends from its own;
    # 5 a second: each snapshot spends the view's message budget (25/s), and asked every
    # 50 ms they would leave the run's thread none, so every batch would go out from here
    while r.status == "running" and time.monotonic() - started < 20:
        r._send_snapshot()
        time.sleep(0.2)
    assert r.status == "done"
    batches = [(name, at, d["content"]) for name, at, d in recorder.log
               if isinstance(d, dict) and d.get("method") == "custom" and d["content"].get("kind") == "patches"]
    streamed = "".join(p["text"] for _, _, c in batches for p in c["patches"] if p["kind"] == "msg.delta")
    assert streamed == text  # nothing dropped, order kept
    ids = [c["id"] for _, _, c in batches]
    assert ids == sorted(ids)
    seqs = [p["seq"] for _, _, c in batches for p in c["patches"]]
    assert seqs == sorted(seqs)
    senders = {name for name, _, _ in batches}
    assert senders - {loop_thread}, senders  # sent from the run's (or the timer's) thread, not the loop
    assert len(batches) >= 5  # a stream of batches while this "cell" held the loop
    assert recorder.overlaps == 0


# -- the history view follows while the loop is blocked ----------------------------------
def three_steps(eng: Any, delay: float = 0.0) -> Any:
    def step(name: str) -> Any:
        def node(state: Any) -> Any:
            time.sleep(delay)
            return {"messages": [("ai", name)]}
        return node

    g = eng.StateGraph(eng.MessagesState)
    for name in ("a", "b", "c"):
        g.add_node(name, step(name))
    g.add_edge(eng.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", eng.END)
    return g.compile(checkpointer=eng.InMemorySaver())


async def test_a_history_view_following_a_run_redraws_and_stops_following_while_the_loop_is_blocked(
        eng: Any) -> None:
    from lgnb.widgets import history

    g = three_steps(eng, delay=0.1)
    cfg = {"configurable": {"thread_id": "live"}}
    r = run(g, {"messages": []}, cfg, display=False)
    view = history(g, cfg, follow=r)
    assert view.following
    counts: set[int] = set()
    _block_until(lambda: counts.add(len(view.model.checkpoints)) or not view.following, 10)
    assert r.status == "done" and not view.following
    stored = len(list(g.get_state_history(cfg)))
    assert len(view.model.checkpoints) == stored == 5
    assert len(counts - {stored}) >= 1, counts  # it redrew while the run went on, not only at the end


async def test_a_polling_history_view_sees_a_new_checkpoint_while_the_loop_is_blocked(eng: Any) -> None:
    from lgnb.widgets import history

    g = three_steps(eng)
    cfg = {"configurable": {"thread_id": "polled"}}
    g.invoke({"messages": []}, cfg)
    view = history(g, cfg, follow=True)
    view.follow(True, interval=0.05)  # already polling: a second call changes nothing
    g.update_state(cfg, {"messages": [("user", "later")]})
    _block_until(lambda: len(view.model.checkpoints) == 6, 5)
    assert len(view.model.checkpoints) == 6
    view.close()
    assert not view.following


@pytest.mark.parametrize("interval", [0, -1, "fast", True])
def test_follow_true_with_a_bad_interval_says_what_to_give(lg: Any, interval: Any) -> None:
    from lgnb.widgets import history

    g = three_steps(lg)
    cfg = {"configurable": {"thread_id": "bad"}}
    g.invoke({"messages": []}, cfg)
    with pytest.raises(ValueError, match=r"interval=0\.5"):
        history(g, cfg).follow(True, interval=interval)


async def test_a_token_followed_by_a_quiet_node_reaches_the_page_within_the_flush_budget(
        recorder: type[_Recorder]) -> None:
    """No next chunk pushes it out: lgnb's timer thread flushes it while the loop is blocked."""
    lg = _engine("langgraph")
    model = FakeStreamingChat(replies=["first"], chunk_chars=10)
    finished: list[float] = []

    def node(state: Any) -> Any:
        reply = model.invoke(state["messages"])
        time.sleep(1.0)  # quiet: no chunk for a second
        finished.append(time.monotonic())
        return {"messages": [reply]}

    r = run(one_node(lg, node), {"messages": []}, display=False)
    _block_until(lambda: r.status != "running", 15)
    assert r.status == "done"
    sent_at = [at for _, at, d in recorder.log if isinstance(d, dict) and d.get("method") == "custom"
               and d["content"].get("kind") == "patches"
               and any(p.get("text") == "first" for p in d["content"]["patches"])]
    assert len(sent_at) == 1 and sent_at[0] < finished[0] - 0.7, (sent_at, finished)


async def test_status_reads_done_only_once_the_view_was_sent_everything(
        recorder: type[_Recorder], monkeypatch: pytest.MonkeyPatch) -> None:
    """The last batch and snapshot leave while the run settles, after its outcome is decided;
    a cell polling `status` from another thread must not see "done" before they are out
    (here the final flush is held 300 ms to open that window wide)."""
    from lgnb.widgets.run_view import Run

    real_flush = Run._flush

    def slow_final_flush(self: Run, snapshot: bool = False) -> None:
        if snapshot and self._status == "done":
            time.sleep(0.3)
        real_flush(self, snapshot)

    monkeypatch.setattr(Run, "_flush", slow_final_flush)
    lg = _engine("langgraph")
    text = " ".join(f"w{i:03d}" for i in range(40))
    model = FakeStreamingChat(replies=[text], chunk_chars=5, delay=0.002)
    r = run(one_node(lg, lambda s: {"messages": [model.invoke(s["messages"])]}), {"messages": []}, display=False)
    started = time.monotonic()
    while r.status != "done" and time.monotonic() - started < 20:
        time.sleep(0.005)
    assert r.status == "done"
    batches = [d["content"] for _, _, d in recorder.log
               if isinstance(d, dict) and d.get("method") == "custom" and d["content"].get("kind") == "patches"]
    streamed = "".join(p["text"] for c in batches for p in c["patches"] if p["kind"] == "msg.delta")
    assert streamed == text

"""lgnb.run / lgnb.show: the Run API and the widget state it syncs (no browser, no Node)."""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from typing import Annotated, Any

import pytest
from widget_graphs import agent_graph
from widget_fakes import FakeStreamingChat

from langchain_core.messages import AIMessage, HumanMessage
from typing_extensions import TypedDict

from lgnb.widgets import Run, run, show
from lgnb.widgets.run_view import MESSAGE_RATE

REPLIES = [{"content": "let me add", "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}, "id": "call-1"}]},
           "2 + 3 = 5"]


def simple(eng: Any, node: Any, *, checkpointer: Any = None, name: str = "work") -> Any:
    g = eng.StateGraph(eng.MessagesState)
    g.add_node(name, node)
    g.add_edge(eng.START, name)
    g.add_edge(name, eng.END)
    return g.compile(checkpointer=checkpointer)


def test_run_to_done_syncs_view_state(eng: Any) -> None:
    r = run(agent_graph(eng, FakeStreamingChat(replies=REPLIES)), {"messages": [("user", "hi")]}, display=False)
    result = r.wait(timeout=30)
    assert r.status == "done" and result["messages"][-1].content == "2 + 3 = 5"
    v = r.view
    assert (v.status, v.step, v.active) == ("done", 3, [])
    assert v.visited == ["__start__", "agent", "tools", "__end__"]
    assert ["tools", "agent"] in v.taken
    assert [m["type"] for m in v.snapshot["messages"]] == ["human", "ai", "tool", "ai"]
    assert v.snapshot == r.content
    assert v.dot.startswith("digraph") and {n["key"] for n in v.drawing["nodes"]} >= {"agent", "tools"}
    assert v.elapsed > 0


def test_node_error_shows_node_and_reraises(eng: Any) -> None:
    def boom(state: Any) -> Any:
        raise ValueError("kaboom <b>bold</b>")

    r = run(simple(eng, boom, name="explode"), {"messages": []}, display=False)
    with pytest.raises(ValueError, match="kaboom"):
        r.wait(timeout=30)
    assert r.status == "error" and isinstance(r.error, ValueError)
    assert r.view.error == {"type": "ValueError", "message": "kaboom <b>bold</b>", "node": "explode"}
    errors = r.content["errors"]  # once: the tasks stream's report, not again from the raise
    assert [(e["node"], e["type"], e["message"]) for e in errors] == [("explode", "ValueError", "kaboom <b>bold</b>")]
    with pytest.raises(RuntimeError, match="already ended"):
        r.resume("x")


def test_interrupt_without_checkpointer_says_how(eng: Any) -> None:
    def ask(state: Any) -> Any:
        return {"messages": [("ai", str(eng.interrupt({"q": "ok?"})))]}

    r = run(simple(eng, ask), {"messages": []}, display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted" and r.interrupts[0]["value"] == {"q": "ok?"}
    assert "checkpointer=InMemorySaver()" in r.view.notice and "thread_id" in r.view.notice
    with pytest.raises(RuntimeError, match="no checkpointer"):
        r.resume("yes")


def test_interrupt_resume_same_thread(eng: Any) -> None:
    def ask(state: Any) -> Any:
        return {"messages": [("ai", f"answer: {eng.interrupt({'q': 'ok?'})}")]}

    r = run(simple(eng, ask, checkpointer=eng.InMemorySaver()), {"messages": []}, display=False)
    r.wait(timeout=30)
    assert r.status == "interrupted" and r.view.status == "interrupted"
    assert r.view.thread.startswith("lgnb-") and r.view.interrupts == r.interrupts
    iid = r.interrupts[0]["id"]
    assert r.resume({iid: "yes"}) is r
    assert r.wait(timeout=30)["messages"][-1].content == "answer: yes"
    assert r.status == "done" and r.interrupts == [] and r.view.interrupts == []
    with pytest.raises(RuntimeError, match="already ended"):
        r.resume("again")


def test_resume_while_running_is_refused(lg: Any) -> None:
    gate = threading.Event()

    def slow(state: Any) -> Any:
        gate.wait(10)
        return {"messages": [("ai", "done")]}

    r = run(simple(lg, slow, checkpointer=lg.InMemorySaver()), {"messages": []}, display=False)
    with pytest.raises(RuntimeError, match="still running"):
        r.resume("x")
    gate.set()
    r.wait(timeout=30)


def test_cancel(lg: Any) -> None:
    gate = threading.Event()

    def slow(state: Any) -> Any:
        gate.wait(10)
        return {"messages": [("ai", "late")]}

    r = run(simple(lg, slow), {"messages": []}, display=False)
    time.sleep(0.1)
    assert r.cancel() is True
    r.wait(timeout=5)
    assert r.status == "cancelled" and r.view.status == "cancelled"
    gate.set()


def test_not_a_graph_says_what_is_expected(lg: Any) -> None:
    with pytest.raises(TypeError, match=r"expects a compiled graph .*got builtins\.dict"):
        run({"not": "a graph"}, {})
    builder = lg.StateGraph(lg.MessagesState)
    with pytest.raises(TypeError, match=r"call \.compile\(\) first"):
        run(builder, {})
    with pytest.raises(TypeError, match="lgnb.show expects a compiled graph"):
        show(42)


def test_traffic_is_coalesced_and_complete(lg: Any) -> None:
    """Thousands of token chunks reach the page whole and in order, in a few batches that keep
    the view's message budget: after a flush, the next unforced one waits 1 / MESSAGE_RATE per
    message it sent, so any window holds at most MESSAGE_RATE per second plus the flushes that
    may skip the wait (start, end, a hello) and the one that opens the window."""
    text = "".join(f"w{i} " for i in range(3000))
    model = FakeStreamingChat(replies=[text], chunk_chars=3)
    sent: list[tuple[float, dict[str, Any]]] = []
    r = Run(agent_graph(lg, model), {"messages": [("user", "go")]})
    r.view.send = lambda content, buffers=None: sent.append((time.monotonic(), content))  # type: ignore[method-assign]
    r.wait(timeout=60)
    patches = [p for _, m in sent if m["kind"] == "patches" for p in m["patches"]]
    streamed = "".join(p["text"] for p in patches if p["kind"] == "msg.delta")
    assert streamed == text  # nothing dropped, order kept
    seqs = [p["seq"] for p in patches]
    assert seqs == sorted(seqs)
    assert r.stats["chunks"] >= 5000 and len(sent) <= r.stats["chunks"] / 50  # coalesced
    times = [t for t, _ in sent]
    for i in range(len(times)):
        for j in range(i + 1, len(times)):
            window = times[j] - times[i]
            assert j - i + 1 <= MESSAGE_RATE * window + 4 + 1e-6, (j - i + 1, window)


async def test_await_run_in_a_running_loop(lg: Any) -> None:
    r = run(agent_graph(lg, FakeStreamingChat(replies=REPLIES)), {"messages": [("user", "hi")]}, display=False)
    result = await r
    assert r.status == "done" and result["messages"][-1].content == "2 + 3 = 5"


async def test_wait_inside_the_runs_own_loop_pumps(lg: Any) -> None:
    # Like a kernel cell: the loop is blocked by this very call, wait() must not deadlock.
    r = run(agent_graph(lg, FakeStreamingChat(replies=REPLIES, delay=0.001)), {"messages": [("user", "hi")]},
            display=False)
    assert r._loop is asyncio.get_running_loop()
    assert r.wait(timeout=30)["messages"][-1].content == "2 + 3 = 5"
    assert r.view.status == "done" and r.view.snapshot["messages"][-1]["content"] == "2 + 3 = 5"


def test_async_graph(eng: Any) -> None:
    async def node(state: Any) -> Any:
        await asyncio.sleep(0.01)
        eng.get_stream_writer()({"progress": 1.0, "stage": "async"})
        return {"messages": [("ai", "from async")]}

    r = run(simple(eng, node), {"messages": []}, use_async=True, display=False)
    assert r.wait(timeout=30)["messages"][-1].content == "from async"
    assert r.content["progress"][0]["stage"] == "async"


def test_repr_and_title(lg: Any) -> None:
    r = run(simple(lg, lambda s: {"messages": []}), {"messages": []}, display=False, title="mine")
    r.wait(timeout=30)
    assert r.view.title == "mine" and "done" in repr(r)


def test_a_custom_event_holding_an_object_whose_repr_raises_is_still_shown(eng: Any) -> None:
    """A node writes events holding an object whose `__repr__` raises (a progress label, a
    field beside readable ones): each event is shown, the object as its type's name."""

    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("repr boom")

    def work(state: Any) -> Any:
        write = eng.get_stream_writer()
        write({"step": "fetched 10 rows", "row": Hostile()})
        write({"progress": 0.5, "label": Hostile()})
        return {"messages": [("ai", "done")]}

    r = run(simple(eng, work), {"messages": []}, display=False)
    r.wait(timeout=30)
    assert r.status == "done"
    (row,) = r.content["log"]
    assert row["payload"] == {"step": "fetched 10 rows", "row": "<Hostile (its repr raised RuntimeError)>"}
    (bar,) = r.content["progress"]
    assert (bar["label"], bar["value"]) == ("<Hostile (its repr raised RuntimeError)>", 0.5)


def test_a_message_without_an_id_is_shown_once_after_a_resume(eng: Any) -> None:
    """A state whose messages are a plain list (no `add_messages`, so no ids given): the
    resume re-reads the saved state, and the user's message is not shown a second time."""
    def ask(state: Any) -> Any:
        answer = eng.interrupt("ok?")
        return {"messages": [AIMessage(f"done {answer}", id="ai-1")]}

    g = eng.StateGraph(_PlainChat)
    g.add_node("ask", ask)
    g.add_edge(eng.START, "ask")
    r = run(g.compile(checkpointer=eng.InMemorySaver()), {"messages": [HumanMessage("hello")]},
            {"configurable": {"thread_id": "anon"}}, display=False)
    r.wait(timeout=30)
    r.resume("yes")
    r.wait(timeout=30)
    assert [(m["type"], m["content"]) for m in r.content["messages"]] == [("human", "hello"), ("ai", "done yes")]


class _PlainChat(TypedDict):
    messages: Annotated[list, operator.add]  # (no `add_messages`: no ids given)

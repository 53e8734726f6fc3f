"""No string can hang a run (issue 11.1) and the page keeps the kernel's caps (11.7).

A lone UTF-16 surrogate — half an emoji, as providers emit when a token boundary splits
one — cannot be encoded as UTF-8, which is what every Jupyter message is. The views'
comms here pack each message with the kernel's own serializer (jupyter_client's
`Session.pack`, what ipykernel sends with) and unpack it as the server does, so a
message that could not leave a real kernel fails here the same way.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from page_double import SESSION, Page, install
from widget_graphs import _engine

from lgnb.widgets import run
from lgnb.widgets._store import CAPS
from lgnb.widgets._wire import REPLACEMENT, wire_safe, wire_text

HIGH, LOW = "\ud83d", "\ude00"  # the two halves of U+1F600 (grinning face)


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> Iterator[Page]:
    yield install(monkeypatch)


def one_node(eng: Any, fn: Any, *, checkpointer: Any = None) -> Any:
    g = eng.StateGraph(eng.MessagesState)
    g.add_node("work", fn)
    g.add_edge(eng.START, "work")
    g.add_edge("work", eng.END)
    return g.compile(checkpointer=checkpointer)


def settled_within(r: Any, seconds: float = 15) -> Any:
    t0 = time.monotonic()
    result = r.wait(timeout=seconds)
    assert time.monotonic() - t0 < seconds
    return result


# -- the function ------------------------------------------------------------------
def test_wire_text_replaces_lone_surrogates_visibly_and_joins_split_pairs() -> None:
    assert wire_text(f"a{HIGH}b") == f"a{REPLACEMENT}b"
    assert wire_text(f"{LOW}x") == f"{REPLACEMENT}x"
    assert wire_text("\udcff") == REPLACEMENT  # would pass the packer as a raw, undecodable byte
    assert wire_text(f"{HIGH}{LOW}!") == "\U0001f600!"  # a pair that arrived as two code points
    assert wire_text(f"{LOW}{HIGH}") == REPLACEMENT * 2  # reversed halves are no pair
    for text in ("plain", "émoji \U0001f600 kept", ""):
        assert wire_text(text) is text
    for bad in (f"a{HIGH}", {"k": [f"x{LOW}"]}, {f"key{HIGH}": 1}):
        SESSION.pack(wire_safe(bad))  # encodable now


def test_wire_safe_walks_containers_and_keeps_clean_ones_as_they_are() -> None:
    clean = {"a": [1, "two", {"three": (3.0, None, True)}]}
    assert wire_safe(clean) is clean
    dirty = {"ok": [1, 2], f"k{HIGH}": ("x", f"y{LOW}"), "n": 1.5}
    safe = wire_safe(dirty)
    assert safe == {"ok": [1, 2], f"k{REPLACEMENT}": ("x", f"y{REPLACEMENT}"), "n": 1.5}
    assert safe["ok"] is dirty["ok"] and f"k{HIGH}" in dirty  # the input is not modified


# -- a run with a lone surrogate settles and the page sees U+FFFD ------------------------
def test_lone_surrogate_in_a_streamed_token_settles_and_reaches_the_page_replaced(eng: Any, page: Page) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(content=f"smile {HIGH} please", id="m1")]))
    r = run(one_node(eng, lambda s: {"messages": [model.invoke(s["messages"])]}), {"messages": [("user", "hi")]},
            display=False)
    result = settled_within(r)
    assert r.status == "done" and r.view_error is None
    assert result["messages"][-1].content == f"smile {HIGH} please"  # the kernel keeps the data as it was
    tokens = "".join(p["text"] for p in page.patches("msg.delta"))
    assert REPLACEMENT in tokens and HIGH not in tokens
    assert page.synced("status")[-1] == "done"
    assert any(f"smile {REPLACEMENT} please" in s for s in page.strings())  # the final message


def test_lone_surrogate_in_a_custom_event_settles_and_reaches_the_page_replaced(eng: Any, page: Page) -> None:
    def work(state: Any) -> Any:
        eng.get_stream_writer()({"note": f"half an emoji: {HIGH}", f"key{LOW}": 1})
        return {"messages": [("ai", "ok")]}

    r = run(one_node(eng, work), {"messages": []}, display=False)
    settled_within(r)
    assert r.status == "done" and r.view_error is None
    logs = page.patches("log")
    assert [p["payload"] for p in logs] == [{"note": f"half an emoji: {REPLACEMENT}", f"key{REPLACEMENT}": 1}]
    assert r.content["log"][0]["payload"]["note"] == f"half an emoji: {HIGH}"


def test_lone_surrogate_in_a_state_value_settles_and_reaches_the_page_replaced(eng: Any, page: Page) -> None:
    r = run(one_node(eng, lambda s: {"messages": [("ai", f"state {LOW} value")]}), {"messages": []}, display=False)
    result = settled_within(r)
    assert r.status == "done" and r.view_error is None
    assert result["messages"][-1].content == f"state {LOW} value"
    updates = [p["delta"] for p in page.patches("update")]
    assert updates and f"state {REPLACEMENT} value" in str(updates)
    panels = page.synced("panel")
    assert panels and f"state {REPLACEMENT} value" in str(panels[-1])
    assert page.synced("status")[-1] == "done"


def test_lone_surrogate_in_an_interrupt_question_settles_and_the_form_shows_it_replaced(eng: Any, page: Page) -> None:
    def ask(state: Any) -> Any:
        answer = eng.interrupt({"question": f"ship it? {HIGH}", "options": ["yes", f"no {LOW}"]})
        return {"messages": [("ai", f"answer: {answer}")]}

    r = run(one_node(eng, ask, checkpointer=eng.InMemorySaver()), {"messages": []}, display=False)
    settled_within(r)
    assert r.status == "interrupted" and r.view_error is None
    assert r.interrupts[0]["value"]["question"] == f"ship it? {HIGH}"
    shown = page.synced("interrupts")[-1]
    assert shown[0]["value"] == {"question": f"ship it? {REPLACEMENT}", "options": ["yes", f"no {REPLACEMENT}"]}
    assert f"ship it? {REPLACEMENT}" in str(page.synced("forms")[-1])
    r.resume("yes")
    assert settled_within(r)["messages"][-1].content == "answer: yes"
    assert page.synced("status")[-1] == "done"


def test_lone_surrogate_in_a_title_reaches_the_page_replaced(eng: Any, page: Page) -> None:
    r = run(one_node(eng, lambda s: {"messages": [("ai", "ok")]}), {"messages": []}, display=False,
            title=f"title {LOW}")
    settled_within(r)
    assert r.status == "done" and r.view_error is None
    assert page.synced("title")[-1] == f"title {REPLACEMENT}"


KERNEL_CELLS = [
    "import lgnb\n"
    "from lgnb.graph import StateGraph, START, END, MessagesState\n"
    "from lgnb.config import get_stream_writer\n"
    "from lgnb.types import interrupt\n"
    "from lgnb.checkpoint.memory import InMemorySaver\n"
    "from langchain_core.language_models.fake_chat_models import GenericFakeChatModel\n"
    "from langchain_core.messages import AIMessage\n"
    "model = GenericFakeChatModel(messages=iter([AIMessage(content='tok \\ud83d en', id='m1')]))\n"
    "def talk(state):\n"
    "    get_stream_writer()({'note': 'event \\ude00'})\n"
    "    return {'messages': [model.invoke(state['messages'])]}\n"
    "def ask(state):\n"
    "    return {'messages': [('ai', str(interrupt('question \\ud800?')))]}\n"
    "b = StateGraph(MessagesState)\n"
    "b.add_node('talk', talk); b.add_node('ask', ask)\n"
    "b.add_edge(START, 'talk'); b.add_edge('talk', 'ask'); b.add_edge('ask', END)\n"
    "r = lgnb.run(b.compile(checkpointer=InMemorySaver()), {'messages': [('user', 'state \\udfff')]})\n"
    "r.wait(30); print(r.status, r.view_error)",
    "import os\n"
    "display(r)\n"
    "display(lgnb.show(b.compile(), title='drawn \\ud800'))\n"
    "print(os.path.getsize(r.to_html('run.html')) > 0)",
]


def test_wait_in_a_kernel_cell_returns_with_surrogates_everywhere_and_the_saved_view_shows_them_replaced(
        tmp_path: Path) -> None:
    """The reported hang: in a real kernel, `wait()` in a cell pumps the run and sends from the
    cell itself. It returns, and the widget state the kernel sent holds U+FFFD."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in KERNEL_CELLS])
    NotebookClient(nb, kernel_name="python3", timeout=60, store_widget_state=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream")
    assert printed.strip() == "interrupted None"
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    (view,) = [m["state"] for m in state.values() if m["state"].get("_view_kind") == "run"]
    assert view["status"] == "interrupted"
    assert view["interrupts"][0]["value"] == f"question {REPLACEMENT}?"
    snapshot = view["snapshot"]
    texts = {m["content"] for m in snapshot["messages"]}
    assert f"tok {REPLACEMENT} en" in texts and f"state {REPLACEMENT}" in texts
    assert snapshot["log"][0]["payload"] == {"note": f"event {REPLACEMENT}"}
    # the static snapshots: the first display's was updated to the paused run, the second
    # display, the graph view's and the standalone file were written, all replaced
    htmls = [o["data"]["text/html"] for cell in nb.cells for o in cell.outputs
             if o.output_type == "display_data" and "text/html" in o.get("data", {})]
    assert len(htmls) == 3, [o.output_type for cell in nb.cells for o in cell.outputs]
    for fragment in htmls[:2]:
        assert "interrupted" in fragment and f"tok {REPLACEMENT} en" in fragment
    assert f"drawn {REPLACEMENT}" in htmls[2]
    assert not any(o.output_type == "error" for cell in nb.cells for o in cell.outputs)
    assert "".join(o.get("text", "") for o in nb.cells[1].outputs if o.output_type == "stream").strip() == "True"
    page_file = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert f"question {REPLACEMENT}?" in page_file and "interrupted" in page_file


def test_every_view_sends_lone_surrogates_replaced_graph_history_and_lens(page: Page) -> None:
    """The guard sits where every view's traffic leaves the kernel, not in the run view."""
    from lgnb.widgets import history, lens, show

    lg = _engine("lgnb")
    g = one_node(lg, lambda s: {"messages": [("ai", f"saved {HIGH}")]}, checkpointer=lg.InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    g.invoke({"messages": [("user", f"asked {LOW}")]}, config)
    show(g, title=f"graph {HIGH}")
    history(g, config, title=f"history {LOW}")  # its values: msgpack saved the surrogate as "?"
    seen = lens(g, {"messages": [("user", f"lens {LOW}")]}, {"configurable": {"thread_id": "t2"}}, display=False)
    seen.step()
    strings = page.strings()
    assert f"graph {REPLACEMENT}" in strings
    assert f"history {REPLACEMENT}" in strings
    assert any(f"lens {REPLACEMENT}" in text for text in strings)  # the lens's step
    assert not any(HIGH in text or LOW in text for text in strings)


# -- a send that raises never keeps a run from settling ------------------------------
def test_a_run_whose_every_send_raises_still_settles_and_releases_every_waiter(page: Page) -> None:
    lg = _engine("langgraph")
    gate = threading.Event()

    def work(state: Any) -> Any:
        lg.get_stream_writer()({"step": "working"})
        gate.wait(10)
        return {"messages": [("ai", "finished")]}

    r = run(one_node(lg, work), {"messages": []}, display=False)
    seen: list[str] = []
    r.view.observe(lambda change: seen.append(change["new"]), names="status")
    page.fail = lambda msg_type, data: msg_type == "comm_msg"  # the page is gone from here on

    async def awaited() -> Any:
        return await asyncio.wait_for(asyncio.ensure_future(_await(r)), 15)

    box: dict[str, Any] = {}
    waiter = threading.Thread(target=lambda: box.update(awaited=asyncio.run(awaited())))
    waiter.start()
    gate.set()
    result = settled_within(r)
    waiter.join(15)
    assert result["messages"][-1].content == "finished"
    assert box["awaited"] is result  # `await run` released too
    assert r.status == "done" and seen[-1] == "done"  # observers of the view's status ran
    assert isinstance(r.view_error, OSError) and "gone" in str(r.view_error)
    assert "view_error=OSError" in repr(r)
    assert r.content["log"][0]["payload"] == {"step": "working"}  # the kernel's record is whole


async def _await(r: Any) -> Any:
    return await r


def test_a_failed_patch_batch_is_recorded_and_the_page_still_sees_the_end_and_why(page: Page) -> None:
    lg = _engine("langgraph")

    def work(state: Any) -> Any:
        for i in range(5):
            lg.get_stream_writer()({"i": i})
        return {"messages": [("ai", "done")]}

    def patches_fail(msg_type: str, data: Any) -> bool:
        return data.get("method") == "custom" and data["content"].get("kind") == "patches"

    page.fail = patches_fail
    r = run(one_node(lg, work), {"messages": []}, display=False)
    settled_within(r)
    assert r.status == "done"
    assert isinstance(r.view_error, OSError)
    assert page.synced("status")[-1] == "done"
    notice = page.synced("notice")[-1]
    assert "could not be updated" in notice and "OSError" in notice and "run.view_error" in notice
    # what the failed batches carried reaches the page with the final snapshot
    assert [row["payload"] for row in page.synced("snapshot")[-1]["log"]] == [{"i": i} for i in range(5)]


def test_a_node_error_with_a_lone_surrogate_settles_as_error_and_shows_it_replaced(eng: Any, page: Page) -> None:
    def boom(state: Any) -> Any:
        raise ValueError(f"bad token {HIGH}")

    r = run(one_node(eng, boom), {"messages": []}, display=False)
    with pytest.raises(ValueError, match="bad token"):
        settled_within(r)
    assert r.status == "error" and r.view_error is None
    assert page.synced("error")[-1]["message"] == f"bad token {REPLACEMENT}"
    assert page.synced("status")[-1] == "error"


# -- bounded lists: one set of caps for the kernel and the page ----------------------
def test_the_view_sends_the_kernels_caps_and_the_kernel_keeps_only_that_many_rows(page: Page) -> None:
    lg = _engine("langgraph")
    n = CAPS["log"] * 3 + 7

    def chatty(state: Any) -> Any:
        writer = lg.get_stream_writer()
        for i in range(n):
            writer({"i": i})
        return {"messages": [("ai", "done")]}

    r = run(one_node(lg, chatty), {"messages": []}, display=False)
    settled_within(r, 60)
    assert page.synced("caps")[0] == CAPS == {"log": 500, "updates": 500}
    snap = page.synced("snapshot")[-1]
    assert len(snap["log"]) == CAPS["log"] and snap["dropped"]["log"] == n - CAPS["log"]
    assert [row["payload"]["i"] for row in snap["log"]] == list(range(n - CAPS["log"], n))  # the latest kept
    assert len(page.patches("log")) == n  # nothing dropped on the way: the page bounds what it keeps

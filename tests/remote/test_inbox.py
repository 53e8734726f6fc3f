"""`lgnb.inbox(url)` against a real `langgraph dev`: the server's interrupted threads,
newest first, a page at a time, with their question and age; opening one shows its form,
whose answer resumes the server thread, which then leaves the inbox."""

from __future__ import annotations

import uuid

import pytest
from langgraph_sdk import get_sync_client

import lgnb
from lgnb.remote import UnknownGraphError

pytestmark = [pytest.mark.remote, pytest.mark.timeout(120)]

HUMAN = {"messages": [{"role": "user", "content": "hi"}]}


def _interrupted_threads(server_url: str, n: int, suite: str) -> list[str]:
    """`n` threads of the agent paused at its review question, oldest first."""
    server = get_sync_client(url=server_url, api_key=None)
    tids = []
    for _ in range(n):
        tid = server.threads.create(metadata={"suite": suite})["thread_id"]
        server.runs.wait(tid, "agent", input=HUMAN)
        tids.append(tid)
    return tids


def test_inbox_lists_interrupted_threads_newest_first_a_page_at_a_time(server_url: str) -> None:
    suite = str(uuid.uuid4())
    tids = _interrupted_threads(server_url, 5, suite)
    view = lgnb.inbox(server_url, "agent", metadata={"suite": suite}, page_size=2)
    assert [r["thread_id"] for r in view.rows] == tids[::-1][:2]
    assert all(r["question"] == "approve?" and r["graph_id"] == "agent" for r in view.rows)
    assert all(0 <= r["age_s"] < 120 for r in view.rows) and view.rows[0]["age_s"] <= view.rows[1]["age_s"]
    assert view.has_more
    pages = [r["thread_id"] for r in view.rows]
    while view.has_more:
        pages += [r["thread_id"] for r in view.next_page()]
    assert pages == tids[::-1] and view.page == 2
    assert [r["thread_id"] for r in view.previous_page()] == tids[::-1][2:4]


def test_an_answer_from_the_inbox_resumes_the_thread_and_it_leaves_the_list(server_url: str) -> None:
    suite = str(uuid.uuid4())
    first, second = _interrupted_threads(server_url, 2, suite)
    view = lgnb.inbox(server_url, metadata={"suite": suite})
    assert [r["thread_id"] for r in view.rows] == [second, first]
    view._msg_open({"kind": "open", "thread_id": first})  # what a click on the row sends
    assert view.error == "" and view.opened == first
    run = view.run
    assert view.panes.children == (run.view,)
    run.wait(30)
    (form,) = run.forms
    assert form["id"] == view.rows[1]["interrupt_id"]
    run.resume({form["id"]: "looks good"}).wait(60)
    assert run.status == "done", run.error
    server = get_sync_client(url=server_url, api_key=None)
    assert server.threads.get_state(first)["values"]["verdict"] == "looks good"
    assert [r["thread_id"] for r in view.rows] == [second]  # refreshed when the run ended
    assert "left the inbox" in view.notice


def test_inbox_of_an_unknown_graph_lists_the_servers_graphs(server_url: str) -> None:
    with pytest.raises(UnknownGraphError, match="'agent'"):
        lgnb.inbox(server_url, "agnet")


def test_inbox_rejects_a_page_size_that_is_not_a_count(server_url: str) -> None:
    with pytest.raises(ValueError, match="page_size"):
        lgnb.inbox(server_url, page_size=0)

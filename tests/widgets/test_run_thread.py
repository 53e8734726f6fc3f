"""`lgnb.run` and its thread (issue 11, items 3 and 4): `run.cancel()` means cancelled
(nothing of the run is written afterwards, a new run on the thread is the latest), and
one run per thread — the same cell run twice is refused, queued or interrupts the
first, per `multitask=`. lgnb graphs on lgnb's SQLite saver (a real file)."""

from __future__ import annotations

import operator
import threading
import time
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

import lgnb
from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.errors import ThreadBusyError
from lgnb.graph import START, StateGraph
from lgnb.runtime import Runtime


class S(TypedDict):
    who: str
    log: Annotated[list, operator.add]


class Work:
    """The node of the run named "old" blocks until `go` (or `patience` seconds) and ignores
    the cancel."""

    def __init__(self, *, patience: float = 60) -> None:
        self.patience = patience
        self.started = threading.Event()
        self.go = threading.Event()
        self.returned = threading.Event()
        self.saw_cancel: list[bool] = []

    def __call__(self, s: S, runtime: Runtime) -> dict:
        if s["who"] == "old":
            self.started.set()
            self.go.wait(self.patience)
            self.saw_cancel.append(runtime.cancel_requested)
            self.returned.set()
        return {"log": [f"work:{s['who']}"]}


@pytest.fixture
def saver(tmp_path):
    with SqliteSaver.from_conn_string(tmp_path / "threads.sqlite") as s:
        yield s


def graph(saver: Any, work: Work) -> Any:
    return (
        StateGraph(S)
        .add_node("work", work)
        .add_node("after", lambda s: {"log": [f"after:{s['who']}"]})
        .add_edge(START, "work")
        .add_edge("work", "after")
        .compile(checkpointer=saver)
    )


CFG = {"configurable": {"thread_id": "cell"}}


def _stored_logs(g: Any) -> list:
    return [s.values.get("log") for s in g.get_state_history(CFG)]


@pytest.mark.parametrize("use_async", [False, True])
def test_cancel_then_a_new_run_on_the_thread_is_the_latest_and_the_old_node_wrote_nothing(saver, use_async):
    work = Work()
    g = graph(saver, work)
    old = lgnb.run(g, {"who": "old", "log": ["in:old"]}, CFG, display=False, use_async=use_async)
    assert work.started.wait(10)
    assert old.cancel() is True
    new = lgnb.run(g, {"who": "new", "log": ["in:new"]}, CFG, display=False, use_async=use_async)
    assert new.wait(10)["log"] == ["in:old", "in:new", "work:new", "after:new"]
    work.go.set()  # the old node returns now, after the new run ended
    assert work.returned.wait(10)
    old.wait(10)
    time.sleep(0.2)
    assert old.status == "cancelled" and new.status == "done"
    assert work.saw_cancel == [True]
    assert g.get_state(CFG).values["log"] == ["in:old", "in:new", "work:new", "after:new"]
    assert not any("work:old" in (log or []) for log in _stored_logs(g))


def test_the_same_cell_run_twice_is_refused_at_once_naming_the_thread(saver):
    work = Work()
    g = graph(saver, work)
    first = lgnb.run(g, {"who": "old", "log": []}, CFG, display=False)
    assert work.started.wait(10)
    with pytest.raises(ThreadBusyError, match=r"Thread 'cell' is busy.*multitask='enqueue'"):
        lgnb.run(g, {"who": "again", "log": []}, CFG, display=False)
    work.go.set()
    assert first.wait(10)["log"] == ["work:old", "after:old"]
    again = lgnb.run(g, {"who": "again", "log": []}, CFG, display=False)  # free once it ended
    assert again.wait(10)["log"][-1] == "after:again"


def test_enqueue_runs_the_second_after_the_first_on_the_thread_s_latest_state(saver):
    work = Work()
    g = graph(saver, work)
    first = lgnb.run(g, {"who": "old", "log": ["in:1"]}, CFG, display=False)
    assert work.started.wait(10)
    second = lgnb.run(g, {"who": "next", "log": ["in:2"]}, CFG, display=False, multitask="enqueue")
    time.sleep(0.3)
    assert second.status == "running" and not any("in:2" in (log or []) for log in _stored_logs(g))
    work.go.set()
    assert first.wait(10)["log"] == ["in:1", "work:old", "after:old"]
    assert second.wait(10)["log"] == ["in:1", "work:old", "after:old", "in:2", "work:next", "after:next"]


def test_interrupt_cancels_the_first_run_which_says_why(saver):
    work = Work()
    g = graph(saver, work)
    first = lgnb.run(g, {"who": "old", "log": ["in:old"]}, CFG, display=False)
    assert work.started.wait(10)
    second = lgnb.run(g, {"who": "new", "log": ["in:new"]}, CFG, display=False, multitask="interrupt")
    assert second.wait(10)["log"] == ["in:old", "in:new", "work:new", "after:new"]
    work.go.set()
    first.wait(10)
    assert first.status == "cancelled"
    assert "interrupted by a new run on thread 'cell'" in first.view.notice
    time.sleep(0.2)
    assert g.get_state(CFG).values["log"] == ["in:old", "in:new", "work:new", "after:new"]


def test_a_bad_multitask_is_refused_before_anything_runs(saver):
    with pytest.raises(ValueError, match="multitask='later' is not a strategy"):
        lgnb.run(graph(saver, Work()), {"who": "x", "log": []}, CFG, display=False, multitask="later")


# -- a LangGraph graph: its engine takes no lease, the view takes it for it ------------
def langgraph_graph(saver: Any, work: Work) -> Any:
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph as LGStateGraph

    def node(s: S) -> dict:  # LangGraph's Runtime has no cancel flag: a plain node
        if s["who"] == "old":
            work.started.set()
            work.go.wait(5)
            work.returned.set()
        return {"log": [f"work:{s['who']}"]}

    return (
        LGStateGraph(S)
        .add_node("work", node)
        .add_node("after", lambda s: {"log": [f"after:{s['who']}"]})
        .add_edge(LG_START, "work")
        .add_edge("work", "after")
        .compile(checkpointer=saver)
    )


@pytest.mark.parametrize("use_async", [False, True])
def test_a_langgraph_graph_run_twice_is_refused_and_enqueue_takes_turns(use_async):
    from langgraph.checkpoint.memory import InMemorySaver

    work = Work()
    g = langgraph_graph(InMemorySaver(), work)
    first = lgnb.run(g, {"who": "old", "log": ["in:1"]}, CFG, display=False, use_async=use_async)
    assert work.started.wait(10)
    with pytest.raises(ThreadBusyError, match=r"Thread 'cell' is busy"):
        lgnb.run(g, {"who": "again", "log": []}, CFG, display=False, use_async=use_async)
    second = lgnb.run(g, {"who": "next", "log": ["in:2"]}, CFG, display=False, multitask="enqueue",
                      use_async=use_async)
    time.sleep(0.3)
    assert second.status == "running" and "in:2" not in g.get_state(CFG).values["log"]
    work.go.set()
    assert first.wait(10)["log"] == ["in:1", "work:old", "after:old"]
    assert second.wait(10)["log"] == ["in:1", "work:old", "after:old", "in:2", "work:next", "after:next"]
    again = lgnb.run(g, {"who": "last", "log": []}, CFG, display=False, use_async=use_async)  # free again
    assert again.wait(10)["log"][-1] == "after:last"


def test_a_langgraph_graph_on_lgnb_sqlite_holds_the_thread_for_other_processes(saver, tmp_path):
    """The lease row is in the saver's file: another process's run on the thread is refused
    while the LangGraph run holds it, and runs once it ended."""
    import subprocess
    import sys
    import textwrap

    work = Work(patience=120)  # held until the other process answered (it starts slowly under load)
    g = langgraph_graph(saver, work)
    first = lgnb.run(g, {"who": "old", "log": []}, CFG, display=False)
    assert work.started.wait(10)
    script = tmp_path / "other.py"
    script.write_text(textwrap.dedent(f"""
        import operator, sys
        from typing import Annotated
        from typing_extensions import TypedDict
        from lgnb.checkpoint.sqlite import SqliteSaver
        from lgnb.errors import ThreadBusyError
        from lgnb.graph import START, StateGraph
        class S(TypedDict):
            who: str
            log: Annotated[list, operator.add]
        with SqliteSaver.from_conn_string({str(tmp_path / "threads.sqlite")!r}) as s:
            g = StateGraph(S).add_node("work", lambda s: {{"log": ["other"]}}).add_edge(START, "work").compile(checkpointer=s)
            try:
                g.invoke({{"who": "other", "log": []}}, {{"configurable": {{"thread_id": "cell"}}}}, multitask="reject")
                print("ran")
            except ThreadBusyError as exc:
                print("refused", "pid" in str(exc))
    """))

    def other() -> str:
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert other() == "refused True"
    work.go.set()
    assert first.wait(10)["log"] == ["work:old", "after:old"]
    assert other() == "ran"
    assert g.get_state(CFG).values["log"] == ["work:old", "after:old", "other"]

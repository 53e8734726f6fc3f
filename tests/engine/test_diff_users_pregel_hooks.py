"""Libraries that reach the state from inside a node through LangGraph's config hooks.

LangGraph puts two functions in every task's `configurable`: `__pregel_read(select,
fresh=False)` reads channels (with `fresh`, as the task's own writes so far leave them) and
`__pregel_send([(channel, value), ...])` adds writes to the task's. They are private, but
libraries built on LangGraph use them: deepagents' `StateBackend` keeps an agent's files in
the state that way, reading and writing from inside its tools. These scenarios call them
as such a library does (through `get_config()` or the node's `config`) and compare what
the graph does with them on LangGraph and lgnb.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import operator
from typing import Annotated, TypedDict

import pytest
from _diff import collect, snapshot_summary


def _merge(left: dict | None, right: dict | None) -> dict:
    return {**(left or {}), **(right or {})}


def _hooks(config):
    conf = config["configurable"]
    return conf["__pregel_read"], conf["__pregel_send"]


def test_a_node_writes_through_send_and_reads_its_writes_back_fresh(differential):
    """Sent writes go through the key's reducer with the node's return value; a fresh read
    sees them at once, a plain read sees the state as the step began."""
    def scenario(E):
        class S(TypedDict, total=False):
            files: Annotated[dict, _merge]
            log: Annotated[list, operator.add]
            n: int

        seen = []

        def work(state, config):
            read, send = _hooks(config)
            send([("files", {"a.txt": "one"})])
            seen.append(("fresh str", read("files", True)))
            seen.append(("plain str", read("files")))
            send([("files", {"b.txt": "two"}), ("log", ["wrote b"])])
            seen.append(("fresh list", read(["files", "log", "n"], True)))
            seen.append(("plain list", read(["files", "log", "n"])))
            return {"log": ["returned"], "n": state["n"] + 1}

        b = E.StateGraph(S)
        b.add_node("work", work)
        b.add_edge(E.START, "work")
        b.add_edge("work", E.END)
        app = b.compile()
        chunks = collect(lambda: app.stream({"files": {"old": "x"}, "log": [], "n": 0},
                                            stream_mode=["updates", "values"]))
        return chunks, seen

    ref = differential(scenario)
    assert ref[0][-1][1] == {"files": {"old": "x", "a.txt": "one", "b.txt": "two"},
                             "log": ["wrote b", "returned"], "n": 1}


def test_reads_of_empty_channels_managed_values_and_unknown_keys(differential):
    """A channel without a value reads as None alone and is left out of a dict; a managed
    value (`RemainingSteps`) is answered; a key the graph does not have is a KeyError."""
    def scenario(E):
        class S(TypedDict, total=False):
            maybe: str
            n: int
            remaining_steps: E.RemainingSteps

        seen = []

        def work(state, config):
            read, _ = _hooks(E.get_config())
            seen.append(read("maybe"))
            seen.append(read(["maybe", "n", "remaining_steps"]))
            seen.append(read(["n", "remaining_steps"], True))
            try:
                read("nope")
            except KeyError as e:
                seen.append(("KeyError", str(e)))
            return {"n": 2}

        b = E.StateGraph(S)
        b.add_node("work", work)
        b.add_edge(E.START, "work")
        b.add_edge("work", E.END)
        out = b.compile().invoke({"n": 1}, {"recursion_limit": 7})
        return out, seen

    ref = differential(scenario)
    assert ref[1][0] is None and ref[1][1] == {"n": 1, "remaining_steps": 6}


def test_parallel_send_tasks_each_write_their_own_share(differential):
    """Each task of a `Send` fan-out writes through its own hook; the reducer gathers all,
    and a fresh read in one task sees its own writes only."""
    def scenario(E):
        class S(TypedDict, total=False):
            items: list
            out: Annotated[list, operator.add]

        seen = []

        def work(arg, config):
            read, send = _hooks(config)
            send([("out", [arg["i"] * 10])])
            seen.append((arg["i"], read("out", True)))
            return {"out": [arg["i"]]}

        b = E.StateGraph(S)
        b.add_node("work", work)
        b.add_conditional_edges(E.START, lambda s: [E.Send("work", {"i": i}) for i in s["items"]])
        b.add_edge("work", E.END)
        out = b.compile().invoke({"items": [1, 2, 3], "out": []})
        return sorted(out["out"]), sorted(seen)

    ref = differential(scenario)
    assert ref[0] == [1, 2, 3, 10, 20, 30]


def test_writes_sent_before_an_interrupt_are_dropped_and_sent_again_on_resume(differential):
    """A node that sends, then pauses: nothing it sent lands while it waits; resumed, it
    runs again from the top, and what it sends then lands once. The history shows each
    step's writes."""
    def scenario(E):
        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        def work(state, config):
            _, send = _hooks(config)
            send([("log", ["before"])])
            answer = E.interrupt("ok?")
            send([("log", [f"after {answer}"])])
            return {}

        b = E.StateGraph(S)
        b.add_node("work", work)
        b.add_edge(E.START, "work")
        b.add_edge("work", E.END)
        app = b.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        first = app.invoke({"log": []}, cfg)
        paused = snapshot_summary(app.get_state(cfg))
        second = app.invoke(E.Command(resume="yes"), cfg)
        history = [snapshot_summary(s) for s in app.get_state_history(cfg)]
        return first, paused, second, history

    ref = differential(scenario)
    assert ref[2] == {"log": ["before", "after yes"]}


def test_a_retried_node_keeps_only_the_writes_of_its_last_attempt(differential):
    """A node that sends and then fails is retried by its RetryPolicy: the failed
    attempt's writes are discarded, the successful one's land."""
    def scenario(E):
        class S(TypedDict, total=False):
            log: Annotated[list, operator.add]

        attempts = []

        def work(state, config):
            _, send = _hooks(config)
            attempts.append(1)
            send([("log", [f"attempt {len(attempts)}"])])
            if len(attempts) < 3:
                raise ValueError("flaky")
            return {}

        b = E.StateGraph(S)
        b.add_node("work", work, retry_policy=E.RetryPolicy(initial_interval=0, jitter=False,
                                                               retry_on=ValueError))
        b.add_edge(E.START, "work")
        b.add_edge("work", E.END)
        return b.compile().invoke({"log": []})

    differential(scenario, expect={"log": ["attempt 3"]})


@pytest.mark.parametrize("durability", ["sync", "exit"])
def test_sent_writes_are_saved_with_the_step(differential, durability):
    """With a checkpointer, what a node sent is part of its step's checkpoint: the next
    step's state and the thread's history hold it."""
    def scenario(E):
        class S(TypedDict, total=False):
            files: Annotated[dict, _merge]
            done: bool

        def write(state, config):
            _, send = _hooks(config)
            send([("files", {"notes.md": "hello"})])
            return {}

        def check(state):
            return {"done": state["files"] == {"notes.md": "hello"}}

        b = E.StateGraph(S)
        b.add_node("write", write)
        b.add_node("check", check)
        b.add_edge(E.START, "write")
        b.add_edge("write", "check")
        b.add_edge("check", E.END)
        app = b.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        out = app.invoke({}, cfg, durability=durability)
        return out, [snapshot_summary(s) for s in app.get_state_history(cfg)]

    ref = differential(scenario)
    assert ref[0] == {"files": {"notes.md": "hello"}, "done": True}

"""The lens against LangGraph: what a lesson shows, step by step, is what LangGraph does.

Each test is a graph a teacher or a student writes. It is built with LangGraph and with
lgnb (the `tests/engine` harness: `differential(scenario)` runs ``scenario(E)`` once per
engine) and stepped through `Lens` to the end. On lgnb the lens reads lgnb's own "pregel"
records; on LangGraph it reads the public ``tasks`` / ``updates`` / ``checkpoints`` /
``values`` stream modes (the reduced lens). Two observables are compared:

* `shown` — everything LangGraph's streams can tell, as the lens shows it: the super-steps,
  each step's planned tasks (node, the `Send` argument), each task's writes, error and
  interrupt values, the barrier (per state key: before, the writes by node, after), the
  state before / after and the keys changed, the interrupts, the checkpoints (step, source)
  saved after each step, the error that ended the run, the final status and values.
  Both show the input in two steps (step -1: the input lands in ``__start__``; step 0: the
  hidden ``__start__`` task maps it to the state keys; LangGraph's streams hide that task, the
  reduced lens tells it from the checkpoints and the values); `shown` folds them into one
  "input" entry, `test_the_input_takes_two_steps_*` compares them one by one.
  Tasks, writes and interrupts of one step are compared
  as multisets: LangGraph runs parallel sync nodes in a thread pool and streams them in
  completion order.
* `mechanism` (checkpointed graphs) — what only lgnb's records say, against LangGraph's
  saved checkpoints (`checkpointer.get_tuple`, `get_state`) of the same run: per saved
  checkpoint, the channels whose version the barrier bumped and their version; per step,
  each planned task's path and the channels that triggered it with their versions
  (LangGraph: the node's triggers that are available and newer than its `versions_seen`,
  exactly LangGraph's own trigger rule); per state key written, the reducer the lens names
  (LangGraph: the compiled graph's channel for that key); each checkpoint's `next`.
"""

import asyncio
import operator
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from pydantic import BaseModel
from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))

import _diff  # noqa: E402

from lgnb.pregel.records import callable_name, to_jsonable  # noqa: E402
from lgnb.widgets.lens_view import Lens  # noqa: E402

differential = _diff.differential


# ------------------------------------------------------------------------------- helpers
def _plain(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _ver(v: Any) -> Any:
    """A channel version's counter: LangGraph's savers append a random fraction."""
    if isinstance(v, str) and "." in v:
        return int(v.split(".")[0])
    return v


def _key(v: Any) -> str:
    return repr(_diff.normalize(v))


def _internal(channel: str) -> bool:
    return channel.startswith(("branch:", "join:", "__"))


def _user_tasks(step: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [t for t in (step.get("plan") or {}).get("tasks") or () if t["node"] != "__start__"]


def _execute(step: Mapping[str, Any]) -> list[Any]:
    out = []
    for t in (step.get("execute") or {}).get("tasks") or ():
        if t["node"] == "__start__":
            continue
        writes = [[c, v] for c, v in t.get("writes") or () if not _internal(str(c))]
        out.append({"node": t["node"], "writes": writes, "error": t.get("error"),
                    "interrupts": list(t.get("interrupts") or []), "restored": bool(t.get("restored"))})
    return sorted(out, key=_key)


def _barrier(step: Mapping[str, Any]) -> Any:
    update = step.get("update")
    if update is None:
        return None
    chans = []
    for c in update.get("channels") or ():
        if c.get("internal"):
            continue
        writes = sorted(([w["node"], w["value"]] for w in c.get("writes") or ()), key=_key)
        chans.append({"channel": c["channel"], "before": c["before"], "had_value": c["had_value"],
                      "writes": writes, "after": c["after"], "has_value": c["has_value"]})
    err = update.get("error")
    if err:
        err = {"type": err["type"], "channel": err["channel"],
               "writes": sorted(([w["node"], w["value"]] for w in err.get("writes") or ()), key=_key)}
    return {"channels": sorted(chans, key=lambda c: c["channel"]), "error": err}


def shown(lens: Lens) -> dict[str, Any]:
    """What the lens shows that LangGraph's public streams can tell too."""
    entries: list[dict[str, Any]] = []
    for s in lens.steps:
        ckpts = [[c["step"], c["source"]] for c in s["checkpoints"]]
        if not _user_tasks(s) and not s["error"] and not s["interrupts"] and s["status"] == "done":
            if entries and entries[-1]["kind"] == "input":
                prev = entries[-1]
                prev["after"] = s["after"]
                prev["changed"] = sorted({*prev["changed"], *s["changed"]})
                prev["checkpoints"] += ckpts
            else:
                entries.append({"kind": "input", "before": s["before"], "after": s["after"],
                                "changed": sorted(s["changed"]), "checkpoints": ckpts})
            continue
        entries.append({
            "kind": "step", "step": s["step"], "status": s["status"],
            "plan": [[t["node"], t["send"]["arg"] if t["send"] else None] for t in _user_tasks(s)],
            "execute": _execute(s), "barrier": _barrier(s),
            "before": s["before"], "after": s["after"], "changed": sorted(s["changed"]),
            "interrupts": sorted(([i["value"], i["node"]] for i in s["interrupts"]), key=_key),
            "error": s["error"], "checkpoints": ckpts,
        })
    return {"status": lens.status, "steps": entries,
            "interrupts": sorted(([i["value"], i["node"]] for i in lens.interrupts), key=_key),
            "result": to_jsonable(lens.result)}


def _checkpoint_ids(lens: Lens) -> list[str]:
    ids: list[str] = []
    for r in lens.trace:
        if r["kind"] == "checkpoint" and r["id"] not in ids:
            ids.append(r["id"])
    return ids


def _config(lens: Lens, checkpoint_id: str) -> dict[str, Any]:
    return {"configurable": {**lens.config["configurable"], "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}


def _reducer(channel: Any) -> str:
    """The reducer of a compiled LangGraph channel, named as the lens names reducers."""
    from langgraph.graph.message import add_messages

    op = getattr(channel, "operator", None)
    if op is add_messages:  # LangGraph's is a wrapped function: named as the schema names it
        return "add_messages"
    if op is not None:
        return callable_name(op)
    return type(channel).__name__


def mechanism(lens: Lens, graph: Any) -> dict[str, Any]:
    """lgnb: what its records say. LangGraph: the same facts from its saved checkpoints."""
    if lens.native:
        return _from_records(lens)
    return _from_checkpoints(lens, graph)


def _from_records(lens: Lens) -> dict[str, Any]:
    versions: list[Any] = []
    plans: dict[int, Any] = {}
    reducers: dict[str, str] = {}
    bumped: dict[str, Any] = {}
    for r in lens.trace:
        if r["kind"] == "plan":
            plans[r["step"]] = sorted([[t["node"], _plain(t["path"]),
                                        sorted([tr["channel"], _ver(tr["version"])] for tr in t["triggers"])]
                                       for t in r["tasks"]], key=_key)
        elif r["kind"] == "update" and not r.get("error"):
            for c in r["channels"]:
                bumped[c["channel"]] = _ver(c["version"])
                if not c["internal"]:
                    reducers[c["channel"]] = c["reducer"]
        elif r["kind"] == "checkpoint":
            if any(v[0] == r["id"] for v in versions):
                continue
            versions.append([r["id"], r["step"], sorted(bumped.items())])
            bumped = {}
    return {"versions": [v[1:] for v in versions], "plans": sorted(plans.items()),
            "reducers": dict(sorted(reducers.items())), "next": _nexts(lens)}


def _nexts(lens: Lens) -> list[Any]:
    """Each checkpoint the lens shows saved: its step and `next` (the graph's `get_state`)."""
    snaps = [lens.graph.get_state(_config(lens, cid)) for cid in _checkpoint_ids(lens)]
    return [[snap.metadata["step"], sorted(snap.next)] for snap in snaps]


def _from_checkpoints(lens: Lens, graph: Any) -> dict[str, Any]:
    saver = graph.checkpointer
    versions: list[Any] = []
    plans: dict[int, Any] = {}
    reducers: dict[str, str] = {}
    for cid in _checkpoint_ids(lens):
        tup = saver.get_tuple(_config(lens, cid))
        parent = saver.get_tuple(tup.parent_config) if tup.parent_config else None
        cv, before = tup.checkpoint["channel_versions"], parent.checkpoint["channel_versions"] if parent else {}
        bumped = [(c, _ver(v)) for c, v in sorted(cv.items()) if before.get(c) != v]
        versions.append([tup.metadata["step"], bumped])
        reducers.update((c, _reducer(graph.channels[c])) for c, _ in bumped if not _internal(c))
        for planned_from in (parent, tup):  # the step this checkpoint closed, the one it plans
            if planned_from is not None:
                plans[planned_from.metadata["step"] + 1] = _planned(graph, planned_from)
    # the steps LangGraph planned while running (its streams hide the `__start__` task of
    # step 0); a checkpoint's `next` after the last one (recursion limit) was never planned
    planned = {s["step"] for s in lens.steps if s["plan"]} | {0}
    plans = {step: tasks for step, tasks in plans.items() if step in planned and tasks}
    return {"versions": versions, "plans": sorted(plans.items()),
            "reducers": dict(sorted(reducers.items())), "next": _nexts(lens)}


def _planned(graph: Any, tup: Any) -> list[Any]:
    """The tasks LangGraph plans from a saved checkpoint, each with its path and the
    channels that trigger it: its node's triggers that are available and have a version
    the node has not seen (LangGraph's `_triggers` rule), with that version."""
    from langgraph._internal._typing import MISSING

    ckpt = tup.checkpoint
    cv, seen = ckpt["channel_versions"], ckpt["versions_seen"]
    tasks = []
    for t in graph.get_state(tup.config).tasks:
        fired = []
        if t.path[0] == "__pregel_pull":
            node_seen = seen.get(t.name, {})
            for chan in graph.nodes[t.name].triggers:
                ch = graph.channels[chan].from_checkpoint(ckpt["channel_values"].get(chan, MISSING))
                if ch.is_available() and chan in cv and (chan not in node_seen or cv[chan] > node_seen[chan]):
                    fired.append([chan, _ver(cv[chan])])
        tasks.append([t.name, _plain(t.path), sorted(fired)])
    return sorted(tasks, key=_key)


def watch(graph: Any, input: Any, *, resumes: tuple[Any, ...] = (), config: Mapping[str, Any] | None = None,
          use_async: bool = False) -> dict[str, Any]:
    """Step `graph` through the lens to the end (answering interrupts with `resumes`)."""
    lens = Lens(graph, input, config, use_async=use_async)
    lens.run()
    for value in resumes:
        assert lens.status == "interrupted", (lens.status, lens.steps[-1])
        lens.resume(value)
        lens.run()
    out = {"shown": shown(lens)}
    if lens.checkpointed:
        out["mechanism"] = mechanism(lens, graph)
    return out


def saver(E: Any) -> Any:
    return E.InMemorySaver()


# ------------------------------------------------------------------------------- states
class Log(TypedDict):
    log: Annotated[list, operator.add]
    last: str


def _node(name: str, *, last: bool = True) -> Any:
    def run(state: Any) -> dict[str, Any]:
        return {"log": [name], "last": name} if last else {"log": [name]}
    run.__name__ = name
    return run


# ------------------------------------------------------------------------------- tests
def test_a_sequence_shows_one_task_per_step_and_last_value_overwrites() -> None:
    """A first lesson: a → b → c, each step one task, `last` overwritten each time."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        for n in "abc":
            g.add_node(n, _node(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        g.add_edge("c", E.END)
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""})

    ref = differential(scenario)
    assert [s.get("plan") for s in ref["shown"]["steps"]] == [None, [["a", None]], [["b", None]], [["c", None]]]


def _numbered(lens: Lens) -> list[Any]:
    """Each step as a lesson lists it: number, tasks, keys changed, checkpoints saved."""
    out = []
    for s in lens.steps:
        execute = [[t["node"], [[c, v] for c, v in t["writes"] if not _internal(str(c))]]
                   for t in (s["execute"] or {}).get("tasks") or ()]
        out.append([s["step"], s["counts"], execute, sorted(s["changed"]), s["before"], s["after"],
                    [[c["step"], c["source"]] for c in s["checkpoints"]], s["status"]])
    return out


@pytest.mark.parametrize("checkpointed", [True, False], ids=["saver", "no-saver"])
def test_the_input_takes_two_steps_the_input_then_the_hidden_start_task(checkpointed: bool) -> None:
    """Step -1: the input lands in ``__start__`` (the "input" checkpoint); step 0: the hidden
    ``__start__`` task writes the input's state keys (a "loop" checkpoint); then the nodes
    from step 1. On LangGraph too, whose streams never show the ``__start__`` task: its
    checkpoints and values tell it. Each `step()` returns one of them."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("a", _node("a"))
        g.add_edge(E.START, "a")
        g.add_edge("a", E.END)
        lens = Lens(g.compile(checkpointer=saver(E) if checkpointed else None), {"log": ["in"], "last": ""})
        returned = []
        while (step := lens.step()) is not None:
            returned.append(step["step"])
        return {"returned": returned, "steps": _numbered(lens), "text": lens.text()}

    ref = differential(scenario)
    assert ref["returned"] == [-1, 0, 1]
    assert [s[1] for s in ref["steps"]] == [{}, {"__start__": 1}, {"a": 1}]
    assert ref["steps"][1][2] == [["__start__", [["log", ["in"]], ["last", ""]]]]
    if checkpointed:
        assert [s[6] for s in ref["steps"]] == [[[-1, "input"]], [[0, "loop"]], [[1, "loop"]]]


def test_a_reducer_key_holds_its_empty_value_from_the_input_step_and_is_not_changed_by_it() -> None:
    """`log` (operator.add on a list) holds [] before anything writes it: LangGraph's step -1
    checkpoint has it. The lens starts from it, so step 0 changes only the keys the input
    wrote, and each step's state is the checkpoint's."""
    class S(TypedDict):
        log: Annotated[list, operator.add]
        x: int

    def scenario(E: Any) -> Any:
        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"x": s["x"] + 1})
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=saver(E))
        cfg = {"configurable": {"thread_id": "t"}}
        lens = Lens(app, {"x": 0}, cfg)
        lens.run()
        saved = [[s.metadata["step"], s.values] for s in reversed(list(app.get_state_history(cfg)))]
        return {"steps": [[s["step"], s["before"], s["after"], s["changed"]] for s in lens.steps], "saved": saved}

    ref = differential(scenario)
    assert ref["steps"] == [[-1, {"log": []}, {"log": []}, []], [0, {"log": []}, {"log": [], "x": 0}, ["x"]],
                            [1, {"log": [], "x": 0}, {"log": [], "x": 1}, ["x"]]]
    assert [[s[0], s[2]] for s in ref["steps"]] == ref["saved"]


def test_the_input_on_a_thread_with_history_takes_the_next_two_step_numbers() -> None:
    """A second input on a thread: its input step and its ``__start__`` step are numbered
    after the thread's last checkpoint, as `get_state_history` numbers them."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("a", _node("a"))
        g.add_edge(E.START, "a")
        g.add_edge("a", E.END)
        app = g.compile(checkpointer=saver(E))
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": ["first"], "last": ""}, cfg)
        lens = Lens(app, {"log": ["second"]}, cfg)
        lens.run()
        history = [[s.metadata["step"], s.metadata["source"]] for s in app.get_state_history(cfg)]
        return {"steps": _numbered(lens), "text": lens.text(), "history": history}

    ref = differential(scenario)
    assert [s[0] for s in ref["steps"]] == [2, 3, 4]
    assert [s[6] for s in ref["steps"]] == [[[2, "input"]], [[3, "loop"]], [[4, "loop"]]]
    assert ref["history"][:3] == [[4, "loop"], [3, "loop"], [2, "input"]]


def test_a_sequence_without_a_checkpointer_shows_the_same_steps() -> None:
    """Without a checkpointer there are no checkpoints, but the steps and state are the same."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        for n in "abc":
            g.add_node(n, _node(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        return watch(g.compile(), {"log": ["start"], "last": ""})

    ref = differential(scenario)
    first = ref["shown"]["steps"][0]
    # before the input: the reducer key's empty list, as LangGraph's step -1 checkpoint holds
    assert first["kind"] == "input" and first["changed"] == ["last", "log"] and first["before"] == {"log": []}


def test_a_diamond_runs_b_and_c_in_one_step_and_the_join_waits_for_both() -> None:
    """a → (b, c) → d: one step for b and c, operator.add concatenates both writes."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        for n in "abcd":
            g.add_node(n, _node(n, last=n != "c"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        g.add_edge(["b", "c"], "d")
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""})

    ref = differential(scenario)
    bc = ref["shown"]["steps"][2]
    assert bc["plan"] == [["b", None], ["c", None]] and bc["after"]["log"] == ["a", "b", "c"]


def _uneven(E: Any, join: str, *, defer: bool = False) -> Any:
    """a → b → c → `join` and a → d → `join`: branches of two lengths meeting."""
    g = E.StateGraph(Log)
    for n in "abcd":
        g.add_node(n, _node(n, last=False))
    g.add_node(join, _node(join, last=False), defer=defer)
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("a", "d")
    g.add_edge("c", join)
    g.add_edge("d", join)
    return g


def test_uneven_branches_run_the_shared_successor_once_per_arriving_branch() -> None:
    """a → b → c → e and a → d → e (plain edges): e runs in step 3 (from d) and again in 4 (from c)."""
    def scenario(E: Any) -> Any:
        return watch(_uneven(E, "e").compile(checkpointer=saver(E)), {"log": []})

    ref = differential(scenario)
    assert [s["plan"] for s in ref["shown"]["steps"][1:]] == [
        [["a", None]], [["b", None], ["d", None]], [["c", None], ["e", None]], [["e", None]]]


def test_a_deferred_join_waits_until_the_longer_branch_is_done() -> None:
    """`defer=True`: the join node runs once, after every other branch finished."""
    def scenario(E: Any) -> Any:
        return watch(_uneven(E, "join", defer=True).compile(checkpointer=saver(E)), {"log": []})

    ref = differential(scenario)
    assert [s["plan"] for s in ref["shown"]["steps"][1:]] == [
        [["a", None]], [["b", None], ["d", None]], [["c", None]], [["join", None]]]


def test_add_messages_appends_parallel_replies_in_task_order() -> None:
    """Two parallel nodes reply; add_messages appends both, ids kept, order by task."""
    def scenario(E: Any) -> Any:
        class State(TypedDict):
            messages: Annotated[list, E.add_messages]

        g = E.StateGraph(State)
        g.add_node("alice", lambda s: {"messages": [AIMessage("hi from alice", id="m-alice")]})
        g.add_node("bob", lambda s: {"messages": [AIMessage("hi from bob", id="m-bob")]})
        g.add_edge(E.START, "alice")
        g.add_edge(E.START, "bob")
        return watch(g.compile(checkpointer=saver(E)), {"messages": [HumanMessage("hello", id="m-user")]})

    ref = differential(scenario)
    assert [m["id"] for m in ref["shown"]["result"]["messages"]] == ["m-user", "m-alice", "m-bob"]
    assert ref["mechanism"]["reducers"] == {"messages": "add_messages"}


def test_add_messages_replaces_a_message_with_the_same_id() -> None:
    """A node that rewrites a message by id: the lens shows it replaced, not appended."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(E.MessagesState)
        g.add_node("draft", lambda s: {"messages": [AIMessage("draft", id="reply")]})
        g.add_node("edit", lambda s: {"messages": [AIMessage("final answer", id="reply")]})
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "edit")
        return watch(g.compile(checkpointer=saver(E)), {"messages": [HumanMessage("q", id="q")]})

    ref = differential(scenario)
    edit = ref["shown"]["steps"][-1]
    assert [m["content"] for m in edit["after"]["messages"]] == ["q", "final answer"]


def test_messages_state_remove_message_drops_it_at_the_barrier() -> None:
    """MessagesState with RemoveMessage: the lens shows the message gone after the step."""
    def scenario(E: Any) -> Any:
        def trim(state: Any) -> dict[str, Any]:
            return {"messages": [RemoveMessage(id=m.id) for m in state["messages"][:-1]]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("reply", lambda s: {"messages": [AIMessage("answer", id="a1")]})
        g.add_node("trim", trim)
        g.add_edge(E.START, "reply")
        g.add_edge("reply", "trim")
        return watch(g.compile(checkpointer=saver(E)),
                     {"messages": [HumanMessage("one", id="h1"), HumanMessage("two", id="h2")]})

    ref = differential(scenario)
    assert [m["id"] for m in ref["shown"]["result"]["messages"]] == ["a1"]


def test_remove_all_messages_then_a_fresh_summary() -> None:
    """RemoveMessage(REMOVE_ALL_MESSAGES) then a summary message, in one write."""
    def scenario(E: Any) -> Any:
        def summarize(state: Any) -> dict[str, Any]:
            return {"messages": [RemoveMessage(id=E.REMOVE_ALL_MESSAGES), AIMessage("summary", id="s")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("summarize", summarize)
        g.add_edge(E.START, "summarize")
        return watch(g.compile(checkpointer=saver(E)),
                     {"messages": [HumanMessage("a", id="1"), AIMessage("b", id="2")]})

    ref = differential(scenario)
    assert [m["content"] for m in ref["shown"]["result"]["messages"]] == ["summary"]


def _keep_max(current: int, new: int) -> int:
    return max(current, new)


def _merge(current: dict, new: dict) -> dict:
    return {**current, **new}


def test_custom_reducers_fold_parallel_writes() -> None:
    """User reducers (max, dict merge): the lens names them and shows the folded value."""
    def scenario(E: Any) -> Any:
        class Scores(TypedDict):
            best: Annotated[int, _keep_max]
            votes: Annotated[dict, _merge]

        g = E.StateGraph(Scores)
        g.add_node("judge_a", lambda s: {"best": 7, "votes": {"a": 7}})
        g.add_node("judge_b", lambda s: {"best": 9, "votes": {"b": 9}})
        g.add_node("judge_c", lambda s: {"best": 3, "votes": {"c": 3}})
        for n in ("judge_a", "judge_b", "judge_c"):
            g.add_edge(E.START, n)
        return watch(g.compile(checkpointer=saver(E)), {"best": 0, "votes": {}})

    ref = differential(scenario)
    assert ref["shown"]["result"] == {"best": 9, "votes": {"a": 7, "b": 9, "c": 3}}
    assert ref["mechanism"]["reducers"] == {"best": "_keep_max", "votes": "_merge"}


def test_each_written_key_shows_its_reducer_on_both_engines() -> None:
    """A reducers lesson on a graph built with LangGraph: the lens names each key's reducer
    in every step's barrier (`add_messages`, `operator.add`, the user's function, LastValue),
    read from the compiled graph's channels, as it does for an lgnb graph from its records."""
    def scenario(E: Any) -> Any:
        class Chat(TypedDict):
            messages: Annotated[list, E.add_messages]
            log: Annotated[list, operator.add]
            best: Annotated[int, _keep_max]
            last: str

        g = E.StateGraph(Chat)
        g.add_node("a", lambda s: {"messages": [AIMessage("a", id="m-a")], "log": ["a"], "best": 3, "last": "a"})
        g.add_node("b", lambda s: {"log": ["b"], "best": 2, "last": "b"})
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        lens = Lens(g.compile(), {"messages": [HumanMessage("hi", id="m-h")], "log": [], "best": 0, "last": ""})
        lens.run()
        return [[s["step"], sorted((c["channel"], c["reducer"]) for c in s["update"]["channels"]
                                   if not c["internal"])] for s in lens.steps]

    differential(scenario, expect=[
        [-1, []],
        [0, [("best", "_keep_max"), ("last", "LastValue"), ("log", "operator.add"), ("messages", "add_messages")]],
        [1, [("best", "_keep_max"), ("last", "LastValue"), ("log", "operator.add"), ("messages", "add_messages")]],
        [2, [("best", "_keep_max"), ("last", "LastValue"), ("log", "operator.add")]],
    ])


class Batch(TypedDict):
    items: list
    results: Annotated[list, operator.add]
    summary: str


def test_send_map_reduce_plans_one_task_per_item_with_its_argument() -> None:
    """plan → Send("work", item) ×3 → reduce: three tasks of one node in one step."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Batch)
        g.add_node("plan", lambda s: {})
        g.add_node("work", lambda item: {"results": [item["n"] * 10]})
        g.add_node("reduce", lambda s: {"summary": f"sum={sum(s['results'])}"})
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", lambda s: [E.Send("work", {"n": n}) for n in s["items"]], ["work"])
        g.add_edge("work", "reduce")
        return watch(g.compile(checkpointer=saver(E)), {"items": [1, 2, 3], "results": []})

    ref = differential(scenario)
    work = ref["shown"]["steps"][2]
    assert work["plan"] == [["work", {"n": 1}], ["work", {"n": 2}], ["work", {"n": 3}]]
    assert ref["shown"]["result"]["summary"] == "sum=60"


def test_sends_and_an_edge_in_the_same_step() -> None:
    """A conditional edge sends two tasks while a plain edge also fires: three tasks, one step."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Batch)
        g.add_node("split", lambda s: {})
        g.add_node("work", lambda item: {"results": [item]})
        g.add_node("audit", lambda s: {"summary": "audited"})
        g.add_edge(E.START, "split")
        g.add_conditional_edges("split", lambda s: [E.Send("work", x) for x in s["items"]], ["work"])
        g.add_edge("split", "audit")
        return watch(g.compile(checkpointer=saver(E)), {"items": ["x", "y"], "results": []})

    ref = differential(scenario)
    assert sorted(map(str, ref["shown"]["steps"][2]["plan"])) == sorted(
        map(str, [["audit", None], ["work", "x"], ["work", "y"]]))


def test_a_steps_writes_are_listed_in_the_order_the_reducer_applies_them() -> None:
    """A slow node named first, a quick one, and two `Send`s in one step: whatever order they
    end in, the barrier lists the writes as the reducer applies them (the edge's nodes by
    name, then the Sends in the order sent), and `what_if` with the key's own reducer gives
    the state the step left."""
    def scenario(E: Any) -> Any:
        def slow(s: Any) -> Any:
            time.sleep(0.2)
            return {"results": ["a_slow"]}

        g = E.StateGraph(Batch)
        g.add_node("split", lambda s: {})
        g.add_node("a_slow", slow)
        g.add_node("b_quick", lambda s: {"results": ["b_quick"]})
        g.add_node("work", lambda item: {"results": [f"work {item}"]})
        g.add_edge(E.START, "split")
        g.add_edge("split", "a_slow")
        g.add_edge("split", "b_quick")
        g.add_conditional_edges("split", lambda s: [E.Send("work", x) for x in s["items"]], ["work"])
        lens = Lens(g.compile(checkpointer=saver(E)), {"items": ["x", "y"], "results": []})
        lens.run()
        step = next(s for s in lens.steps if s["step"] == 2)
        (barrier,) = [c for c in step["update"]["channels"] if c["channel"] == "results"]
        (row,) = lens.what_if("operator.add", step=step["index"], channels=["results"])
        return {"writes": [w["value"] for w in barrier["writes"]], "after": barrier["after"], "same": row["same"]}

    differential(scenario, expect={"writes": [["a_slow"], ["b_quick"], ["work x"], ["work y"]],
                                   "after": ["a_slow", "b_quick", "work x", "work y"], "same": True})


class Route(TypedDict):
    topic: str
    log: Annotated[list, operator.add]


def test_a_conditional_edge_to_several_nodes_runs_them_together() -> None:
    """A router returning a list of nodes: all of them run in the next step."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Route)
        g.add_node("router", lambda s: {"log": ["router"]})
        for n in ("weather", "news", "sports"):
            g.add_node(n, _node(n, last=False))
        g.add_edge(E.START, "router")
        g.add_conditional_edges("router", lambda s: ["weather", "news"] if s["topic"] == "both" else ["sports"],
                                ["weather", "news", "sports"])
        return watch(g.compile(checkpointer=saver(E)), {"topic": "both", "log": []})

    ref = differential(scenario)
    assert sorted(p[0] for p in ref["shown"]["steps"][2]["plan"]) == ["news", "weather"]


def test_a_conditional_edge_with_a_path_map_picks_one_branch() -> None:
    """`path_map` from labels to nodes: only the chosen node is planned."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Route)
        g.add_node("classify", lambda s: {"log": ["classify"]})
        g.add_node("refund", _node("refund", last=False))
        g.add_node("tech", _node("tech", last=False))
        g.add_edge(E.START, "classify")
        g.add_conditional_edges("classify", lambda s: "money" if "refund" in s["topic"] else "other",
                                {"money": "refund", "other": "tech"})
        g.add_edge("refund", E.END)
        g.add_edge("tech", E.END)
        return watch(g.compile(checkpointer=saver(E)), {"topic": "refund please", "log": []})

    ref = differential(scenario)
    assert ref["shown"]["steps"][-1]["plan"] == [["refund", None]]


class Counter(TypedDict):
    count: int
    log: Annotated[list, operator.add]


def test_a_loop_with_a_counter_runs_until_the_condition_stops_it() -> None:
    """think → (count < 3 ? think : done): the same node in successive steps, count rising."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Counter)
        g.add_node("think", lambda s: {"count": s["count"] + 1, "log": [f"think {s['count'] + 1}"]})
        g.add_node("done", lambda s: {"log": ["done"]})
        g.add_edge(E.START, "think")
        g.add_conditional_edges("think", lambda s: "think" if s["count"] < 3 else "done", ["think", "done"])
        return watch(g.compile(checkpointer=saver(E)), {"count": 0, "log": []})

    ref = differential(scenario)
    assert [s["after"]["count"] for s in ref["shown"]["steps"][1:]] == [1, 2, 3, 3]


def _spin(E: Any) -> Any:
    """A node that loops on itself forever (until the recursion limit)."""
    g = E.StateGraph(Counter)
    g.add_node("spin", lambda s: {"count": s["count"] + 1})
    g.add_edge(E.START, "spin")
    g.add_edge("spin", "spin")
    return g.compile(checkpointer=saver(E))


def test_a_loop_that_never_stops_ends_with_the_recursion_limit() -> None:
    """recursion_limit=4: the lens shows four steps, then GraphRecursionError."""
    def scenario(E: Any) -> Any:
        return watch(_spin(E), {"count": 0, "log": []}, config={"recursion_limit": 4})

    ref = differential(scenario, exc="extends")
    assert ref["shown"]["status"] == "error"
    last = ref["shown"]["steps"][-1]
    # the step after the last one, where no task ran, is where the limit stops the run
    assert (last["step"], last["plan"], last["error"]["type"]) == (5, [], "GraphRecursionError")


def test_the_text_of_a_run_stopped_by_the_recursion_limit_names_the_step_no_task_ran() -> None:
    """What a lesson prints: the last line is the step after the last one, where no task ran."""
    def scenario(E: Any) -> Any:
        lens = Lens(_spin(E), {"count": 0, "log": []}, {"recursion_limit": 3})
        lens.run()
        return lens.text().splitlines()[-2:]

    ref = differential(scenario)
    assert ref[0].startswith("step 3: spin") and ref[1].startswith("step 4: (no task ran) | GraphRecursionError")


def test_command_goto_and_update_from_a_node() -> None:
    """A node returning Command(goto=..., update=...): the update lands, the target runs next."""
    def scenario(E: Any) -> Any:
        def triage(state: Route) -> Any:
            return E.Command(goto="urgent" if "!" in state["topic"] else "later", update={"log": ["triaged"]})

        g = E.StateGraph(Route)
        g.add_node("triage", triage, destinations=("urgent", "later"))
        g.add_node("urgent", _node("urgent", last=False))
        g.add_node("later", _node("later", last=False))
        g.add_edge(E.START, "triage")
        return watch(g.compile(checkpointer=saver(E)), {"topic": "fire!", "log": []})

    ref = differential(scenario)
    assert ref["shown"]["steps"][-1]["plan"] == [["urgent", None]]


def test_command_goto_a_list_of_sends() -> None:
    """Command(goto=[Send(...), Send(...)]): two pushed tasks with their arguments."""
    def scenario(E: Any) -> Any:
        def fan(state: Batch) -> Any:
            return E.Command(goto=[E.Send("work", i) for i in state["items"]], update={"summary": "fanned"})

        g = E.StateGraph(Batch)
        g.add_node("fan", fan, destinations=("work",))
        g.add_node("work", lambda i: {"results": [i * 2]})
        g.add_edge(E.START, "fan")
        return watch(g.compile(checkpointer=saver(E)), {"items": [4, 5], "results": []})

    ref = differential(scenario)
    assert ref["shown"]["steps"][-1]["plan"] == [["work", 4], ["work", 5]]


def test_parallel_writes_to_a_last_value_key_raise_invalid_update_error() -> None:
    """Two parallel nodes write one plain key: the barrier shows the conflict, the run fails."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("left", lambda s: {"last": "left"})
        g.add_node("right", lambda s: {"last": "right"})
        g.add_edge(E.START, "left")
        g.add_edge(E.START, "right")
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""})

    ref = differential(scenario)
    step = ref["shown"]["steps"][-1]
    assert step["status"] == "error" and step["error"]["type"] == "InvalidUpdateError"
    assert step["barrier"]["error"]["writes"] == [["left", "left"], ["right", "right"]]


def test_a_node_that_raises_ends_the_run_with_its_error() -> None:
    """A failing node beside a finished sibling: the step shows the error, nothing is applied."""
    def scenario(E: Any) -> Any:
        def flaky(state: Log) -> dict[str, Any]:
            time.sleep(0.2)  # the sibling has finished (and streamed its result) by now
            raise ValueError("the API is down")

        g = E.StateGraph(Log)
        g.add_node("ok", _node("ok"))
        g.add_node("flaky", flaky)
        g.add_edge(E.START, "ok")
        g.add_edge(E.START, "flaky")
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""})

    ref = differential(scenario)
    step = ref["shown"]["steps"][-1]
    assert step["status"] == "error" and step["error"] == {"type": "ValueError", "message": "the API is down"}


class Review(TypedDict):
    draft: str
    verdict: str
    log: Annotated[list, operator.add]


def test_an_interrupt_pauses_the_step_and_the_resume_replays_it() -> None:
    """interrupt() asks; the step shows the question; the resume re-runs the node with the answer."""
    def scenario(E: Any) -> Any:
        def review(state: Review) -> dict[str, Any]:
            verdict = E.interrupt({"question": "approve?", "draft": state["draft"]})
            return {"verdict": verdict, "log": ["reviewed"]}

        g = E.StateGraph(Review)
        g.add_node("write", lambda s: {"draft": "hello world", "log": ["written"]})
        g.add_node("review", review)
        g.add_node("publish", lambda s: {"log": [f"published ({s['verdict']})"]})
        g.add_edge(E.START, "write")
        g.add_edge("write", "review")
        g.add_edge("review", "publish")
        return watch(g.compile(checkpointer=saver(E)), {"draft": "", "log": []}, resumes=("yes",))

    ref = differential(scenario)
    paused, resumed = ref["shown"]["steps"][2:4]
    assert paused["status"] == "interrupted" and paused["interrupts"] == [
        [{"question": "approve?", "draft": "hello world"}, "review"]]
    assert resumed["step"] == paused["step"] and resumed["after"]["verdict"] == "yes"


def test_resume_with_none_answers_the_interrupt_with_none() -> None:
    """`lens.resume(None)` answers the question with None (the node sees None), as
    `Command(resume={id: None})` does; it does not fail."""
    def scenario(E: Any) -> Any:
        def ask(state: Review) -> dict[str, Any]:
            answer = E.interrupt("anything to add?")
            return {"verdict": "nothing" if answer is None else str(answer)}

        g = E.StateGraph(Review)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        return watch(g.compile(checkpointer=saver(E)), {"draft": "", "log": []}, resumes=(None,))

    ref = differential(scenario)
    assert ref["shown"]["status"] == "done" and ref["shown"]["result"]["verdict"] == "nothing"


def test_a_finished_sibling_is_not_re_run_after_the_resume() -> None:
    """Two tasks in one step, one interrupts: the other's writes are kept and applied at the
    barrier after the resume, and the step's state shows both."""
    def scenario(E: Any) -> Any:
        def approve(state: Review) -> dict[str, Any]:
            return {"verdict": E.interrupt("ok?"), "log": ["approved"]}

        g = E.StateGraph(Review)
        g.add_node("approve", approve)
        g.add_node("index", lambda s: {"log": ["indexed"]})
        g.add_edge(E.START, "approve")
        g.add_edge(E.START, "index")
        return watch(g.compile(checkpointer=saver(E)), {"draft": "", "log": []}, resumes=("fine",))

    ref = differential(scenario)
    assert ref["shown"]["result"]["log"] == ["approved", "indexed"]
    resumed = ref["shown"]["steps"][-1]
    assert [(t["node"], t["restored"]) for t in resumed["execute"]] == [("approve", False), ("index", True)]


def test_two_parallel_interrupts_are_answered_by_id() -> None:
    """Two nodes ask at once: two interrupts in one step; one resume map answers both."""
    def scenario(E: Any) -> Any:
        def ask(topic: str) -> Any:
            def run(state: Review) -> dict[str, Any]:
                return {"log": [f"{topic}={E.interrupt(f'{topic}?')}"]}
            return run

        g = E.StateGraph(Review)
        g.add_node("ask_legal", ask("legal"))
        g.add_node("ask_tone", ask("tone"))
        g.add_edge(E.START, "ask_legal")
        g.add_edge(E.START, "ask_tone")
        graph = g.compile(checkpointer=saver(E))
        lens = Lens(graph, {"draft": "", "log": []})
        lens.run()
        asked = sorted([i["value"], i["node"]] for i in lens.interrupts)
        lens.resume({i["id"]: f"ok-{i['node']}" for i in lens.interrupts})
        lens.run()
        return {"asked": asked, "shown": shown(lens), "mechanism": mechanism(lens, graph)}

    ref = differential(scenario)
    assert ref["asked"] == [["legal?", "ask_legal"], ["tone?", "ask_tone"]]
    assert sorted(ref["shown"]["result"]["log"]) == ["legal=ok-ask_legal", "tone=ok-ask_tone"]


def _write_then_publish(E: Any) -> Any:
    g = E.StateGraph(Review)
    g.add_node("write", lambda s: {"draft": "text", "log": ["written"]})
    g.add_node("publish", lambda s: {"log": ["published"]})
    g.add_edge(E.START, "write")
    g.add_edge("write", "publish")
    return g


def test_interrupt_before_shows_the_planned_step_and_continues_on_resume() -> None:
    """interrupt_before=["publish"]: the run stops before publish runs; resuming continues it."""
    def scenario(E: Any) -> Any:
        g = _write_then_publish(E)
        return watch(g.compile(checkpointer=saver(E), interrupt_before=["publish"]),
                     {"draft": "", "log": []}, resumes=(None,))

    ref = differential(scenario)
    assert ref["shown"]["status"] == "done" and ref["shown"]["result"]["log"] == ["written", "published"]


def test_interrupt_after_stops_once_the_node_ran() -> None:
    """interrupt_after=["write"]: write's step completes (checkpoint saved), then the run pauses."""
    def scenario(E: Any) -> Any:
        g = _write_then_publish(E)
        return watch(g.compile(checkpointer=saver(E), interrupt_after=["write"]),
                     {"draft": "", "log": []}, resumes=(None,))

    ref = differential(scenario)
    assert ref["shown"]["result"]["log"] == ["written", "published"]


def test_a_resume_command_with_an_update_lands_before_the_node_re_runs() -> None:
    """Command(resume=..., update=...) given as the lens input on a paused thread."""
    def scenario(E: Any) -> Any:
        def review(state: Review) -> dict[str, Any]:
            return {"verdict": f"{E.interrupt('ok?')} ({state['draft']})"}

        g = E.StateGraph(Review)
        g.add_node("review", review)
        g.add_edge(E.START, "review")
        graph = g.compile(checkpointer=saver(E))
        config = {"configurable": {"thread_id": "review-1"}}
        graph.invoke({"draft": "v1", "log": []}, config)
        return watch(graph, E.Command(resume="approved", update={"draft": "v2", "log": ["edited"]}), config=config)

    ref = differential(scenario)
    assert ref["shown"]["result"] == {"draft": "v2", "verdict": "approved (v2)", "log": ["edited"]}


def _research_subgraph(E: Any) -> Any:
    sub = E.StateGraph(Log)
    sub.add_node("search", _node("search"))
    sub.add_node("summarize", _node("summarize"))
    sub.add_edge(E.START, "search")
    sub.add_edge("search", "summarize")
    return sub.compile()


def test_a_subgraph_node_is_one_task_of_the_parent_step() -> None:
    """A compiled subgraph as a node: in the parent it is one task whose writes are the
    subgraph's final state; its inner steps do not add parent steps."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("plan", _node("plan"))
        g.add_node("research", _research_subgraph(E))
        g.add_node("write", _node("write"))
        g.add_edge(E.START, "plan")
        g.add_edge("plan", "research")
        g.add_edge("research", "write")
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""})

    ref = differential(scenario)
    research = ref["shown"]["steps"][2]
    assert research["plan"] == [["research", None]]
    assert research["after"] == {"log": ["plan", "plan", "search", "summarize"], "last": "summarize"}


def test_a_subgraph_called_inside_a_node_with_its_own_state() -> None:
    """A node that invokes a subgraph with a different state and maps the result back."""
    def scenario(E: Any) -> Any:
        class Inner(TypedDict):
            text: str
            words: int

        inner = E.StateGraph(Inner)
        inner.add_node("count", lambda s: {"words": len(s["text"].split())})
        inner.add_edge(E.START, "count")
        counter = inner.compile()

        g = E.StateGraph(Review)
        g.add_node("draft", lambda s: {"draft": "three little words"})
        g.add_node("measure", lambda s: {"log": [f"words={counter.invoke({'text': s['draft']})['words']}"]})
        g.add_edge(E.START, "draft")
        g.add_edge("draft", "measure")
        return watch(g.compile(checkpointer=saver(E)), {"draft": "", "log": []})

    ref = differential(scenario)
    assert ref["shown"]["result"]["log"] == ["words=3"]


def test_an_interrupt_inside_a_subgraph_pauses_the_parent_step() -> None:
    """The subgraph's node asks: the parent step is interrupted; the resume finishes both."""
    def scenario(E: Any) -> Any:
        def confirm(state: Log) -> dict[str, Any]:
            return {"log": [f"confirmed={E.interrupt('confirm the search?')}"]}

        sub = E.StateGraph(Log)
        sub.add_node("search", _node("search", last=False))
        sub.add_node("confirm", confirm)
        sub.add_edge(E.START, "search")
        sub.add_edge("search", "confirm")
        g = E.StateGraph(Log)
        g.add_node("research", sub.compile())
        g.add_node("report", _node("report", last=False))
        g.add_edge(E.START, "research")
        g.add_edge("research", "report")
        return watch(g.compile(checkpointer=saver(E)), {"log": []}, resumes=("yes",))

    ref = differential(scenario)
    paused = ref["shown"]["steps"][1]
    assert paused["status"] == "interrupted" and paused["interrupts"] == [["confirm the search?", "research"]]
    assert ref["shown"]["result"]["log"] == ["search", "confirmed=yes", "report"]


def test_overwrite_replaces_an_accumulated_list() -> None:
    """Overwrite on an operator.add key: the barrier replaces the list instead of appending."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("collect", lambda s: {"log": ["x", "y"]})
        g.add_node("reset", lambda s: {"log": E.Overwrite(["fresh"])})
        g.add_edge(E.START, "collect")
        g.add_edge("collect", "reset")
        return watch(g.compile(checkpointer=saver(E)), {"log": ["old"], "last": ""})

    ref = differential(scenario)
    reset = ref["shown"]["steps"][-1]
    assert reset["before"]["log"] == ["old", "x", "y"] and reset["after"]["log"] == ["fresh"]


class Order(BaseModel):
    item: str
    qty: int = 1
    notes: Annotated[list, operator.add] = []


def test_a_pydantic_state_shows_its_fields_step_by_step() -> None:
    """A pydantic model as the state: nodes read attributes, the lens shows the fields."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Order)
        g.add_node("price", lambda s: {"notes": [f"{s.qty} x {s.item}"]})
        g.add_node("double", lambda s: {"qty": s.qty * 2, "notes": ["doubled"]})
        g.add_edge(E.START, "price")
        g.add_edge("price", "double")
        return watch(g.compile(checkpointer=saver(E)), Order(item="tea", qty=2))

    ref = differential(scenario)
    assert ref["shown"]["result"] == {"item": "tea", "qty": 4, "notes": ["2 x tea", "doubled"]}


@dataclass
class Trip:
    city: str
    stops: Annotated[list, operator.add] = field(default_factory=list)
    budget: int = 100


def test_a_dataclass_state_with_defaults() -> None:
    """A dataclass as the state: defaults fill the input, reducers still apply."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Trip)
        g.add_node("museum", lambda s: {"stops": ["museum"], "budget": s.budget - 20})
        g.add_node("cafe", lambda s: {"stops": ["cafe"]})
        g.add_edge(E.START, "museum")
        g.add_edge(E.START, "cafe")
        return watch(g.compile(checkpointer=saver(E)), {"city": "Lyon"})

    ref = differential(scenario)
    assert ref["shown"]["result"] == {"city": "Lyon", "stops": ["cafe", "museum"], "budget": 80}


class Question(TypedDict):
    question: str


class Answer(TypedDict):
    answer: str


class Overall(Question, Answer):
    notes: Annotated[list, operator.add]


def test_input_and_output_schemas_still_show_every_state_key() -> None:
    """input_schema/output_schema: the steps show every state key (LangGraph's `values`
    stream does), including the notes the caller never sees in `invoke`'s result."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Overall, input_schema=Question, output_schema=Answer)
        g.add_node("think", lambda s: {"notes": [f"about {s['question']}"]})
        g.add_node("reply", lambda s: {"answer": f"{s['notes'][-1]}: 42"})
        g.add_edge(E.START, "think")
        g.add_edge("think", "reply")
        return watch(g.compile(checkpointer=saver(E)), {"question": "life"})

    ref = differential(scenario)
    assert ref["shown"]["result"] == {"question": "life", "notes": ["about life"], "answer": "about life: 42"}
    assert ref["shown"]["steps"][0]["after"] == {"question": "life", "notes": []}


def test_a_node_that_returns_nothing_changes_no_key() -> None:
    """A logging node returning None: its step shows no writes and no changed key."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("a", _node("a"))
        g.add_node("audit", lambda s: None)
        g.add_node("b", _node("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "audit")
        g.add_edge("audit", "b")
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""})

    ref = differential(scenario)
    audit = ref["shown"]["steps"][2]
    assert audit["plan"] == [["audit", None]] and audit["changed"] == [] and audit["before"] == audit["after"]


def test_an_async_graph_stepped_through_astream() -> None:
    """Async nodes (use_async=True): the same steps as the sync lens shows."""
    def scenario(E: Any) -> Any:
        def node(name: str, delay: float) -> Any:
            async def run(state: Log) -> dict[str, Any]:
                await asyncio.sleep(delay)
                return {"log": [name]}
            return run

        g = E.StateGraph(Log)
        g.add_node("fetch_a", node("fetch_a", 0.02))
        g.add_node("fetch_b", node("fetch_b", 0.0))
        g.add_node("merge", node("merge", 0.0))
        g.add_edge(E.START, "fetch_a")
        g.add_edge(E.START, "fetch_b")
        g.add_edge(["fetch_a", "fetch_b"], "merge")
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""}, use_async=True)

    ref = differential(scenario)
    assert ref["shown"]["result"]["log"] == ["fetch_a", "fetch_b", "merge"]


def test_a_lens_started_on_a_thread_paused_at_a_breakpoint() -> None:
    """The run paused at interrupt_before in code; a lens on the thread with None input continues it."""
    def scenario(E: Any) -> Any:
        graph = _write_then_publish(E).compile(checkpointer=saver(E), interrupt_before=["publish"])
        config = {"configurable": {"thread_id": "paused-1"}}
        graph.invoke({"draft": "", "log": []}, config)
        return watch(graph, None, config=config)

    ref = differential(scenario)
    [step] = ref["shown"]["steps"]
    assert step["plan"] == [["publish", None]] and step["before"] == {"draft": "text", "log": ["written"]}


def test_a_node_retried_by_its_retry_policy_shows_one_task() -> None:
    """RetryPolicy: the first attempt fails, the second succeeds; the lens shows one task."""
    def scenario(E: Any) -> Any:
        calls = {"n": 0}

        def flaky(state: Log) -> dict[str, Any]:
            calls["n"] += 1
            if calls["n"] == 1:
                raise ConnectionError("try again")
            return {"log": [f"attempt {calls['n']}"]}

        g = E.StateGraph(Log)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(initial_interval=0.0, jitter=False))
        g.add_edge(E.START, "flaky")
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""})

    ref = differential(scenario)
    assert ref["shown"]["steps"][-1]["execute"] == [
        {"node": "flaky", "writes": [["log", ["attempt 2"]]], "error": None, "interrupts": [], "restored": False}]


def test_two_interrupts_in_one_node_ask_one_after_the_other() -> None:
    """A node asking twice: two interrupted steps (same step number), then the answers land."""
    def scenario(E: Any) -> Any:
        def form(state: Review) -> dict[str, Any]:
            name = E.interrupt("name?")
            age = E.interrupt("age?")
            return {"log": [f"{name}/{age}"]}

        g = E.StateGraph(Review)
        g.add_node("form", form)
        g.add_edge(E.START, "form")
        return watch(g.compile(checkpointer=saver(E)), {"draft": "", "log": []}, resumes=("ada", 36))

    ref = differential(scenario)
    steps = ref["shown"]["steps"][1:]
    assert [s["status"] for s in steps] == ["interrupted", "interrupted", "done"]
    assert [s["interrupts"] for s in steps] == [[["name?", "form"]], [["age?", "form"]], []]


def _one_click_at_a_time(lens: Lens) -> list[Any]:
    """What each click (`.step()`) shows, projected as `shown` projects the steps."""
    clicks = []
    while (step := lens.step()) is not None:
        clicks.append({"index": step["index"], "step": step["step"], "status": step["status"],
                       "nodes": [t["node"] for t in _user_tasks(step)], "after": step["after"],
                       "changed": sorted(step["changed"])})
    return clicks


@pytest.mark.parametrize("checkpointed", [False, True])
def test_each_click_shows_a_finished_step_that_does_not_change_later(checkpointed: bool) -> None:
    """Stepping one click at a time: each click returns a step that is complete (its barrier
    crossed, its state final), the same as `.steps` holds at the end."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        for n in "abcd":
            g.add_node(n, _node(n, last=n != "c"))
        g.add_node("quiet", lambda s: None)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        g.add_edge(["b", "c"], "quiet")
        g.add_edge("quiet", "d")
        lens = Lens(g.compile(checkpointer=saver(E) if checkpointed else None), {"log": [], "last": ""})
        clicks = _one_click_at_a_time(lens)
        final = [{"index": s["index"], "step": s["step"], "status": s["status"],
                  "nodes": [t["node"] for t in _user_tasks(s)], "after": s["after"],
                  "changed": sorted(s["changed"])} for s in lens.steps]
        # each click returns one step, once, in order, already as it ends up
        assert [c["index"] for c in clicks] == list(range(len(final))) and clicks == final, (clicks, final)
        return [{k: v for k, v in c.items() if k != "index"} for c in clicks if c["nodes"]]  # lgnb: + step 0

    ref = differential(scenario)
    assert [c["nodes"] for c in ref] == [["a"], ["b", "c"], ["quiet"], ["d"]]


def test_an_agent_loop_with_tool_calls_in_messages_state() -> None:
    """agent → tools → agent → end: AI tool calls and tool results appended step by step."""
    from langchain_core.messages import ToolMessage

    def scenario(E: Any) -> Any:
        def agent(state: Any) -> dict[str, Any]:
            if any(m.type == "tool" for m in state["messages"]):
                return {"messages": [AIMessage("It is 21°C in Paris.", id="ai-2")]}
            call = {"name": "weather", "args": {"city": "Paris"}, "id": "call-1", "type": "tool_call"}
            return {"messages": [AIMessage("", tool_calls=[call], id="ai-1")]}

        def tools(state: Any) -> dict[str, Any]:
            calls = state["messages"][-1].tool_calls
            return {"messages": [ToolMessage("21°C", tool_call_id=c["id"], id=f"tool-{c['id']}") for c in calls]}

        def route(state: Any) -> Literal["tools", "__end__"]:
            return "tools" if state["messages"][-1].tool_calls else "__end__"

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", tools)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", route)
        g.add_edge("tools", "agent")
        return watch(g.compile(checkpointer=saver(E)), {"messages": [HumanMessage("weather in Paris?", id="h")]})

    ref = differential(scenario)
    assert [s["plan"][0][0] for s in ref["shown"]["steps"][1:]] == ["agent", "tools", "agent"]
    assert [m["id"] for m in ref["shown"]["result"]["messages"]] == ["h", "ai-1", "tool-call-1", "ai-2"]


def test_a_subgraph_node_hands_off_to_a_parent_node_with_command_parent() -> None:
    """Command(graph=Command.PARENT, goto=..., update=...) from inside a subgraph: the parent
    step shows the update and the handoff target runs next."""
    def scenario(E: Any) -> Any:
        def escalate(state: Log) -> Any:
            return E.Command(graph=E.Command.PARENT, goto="human", update={"log": ["escalated"], "last": "bot"})

        sub = E.StateGraph(Log)
        sub.add_node("escalate", escalate)
        sub.add_edge(E.START, "escalate")
        g = E.StateGraph(Log)
        g.add_node("bot", sub.compile(), destinations=("human",))
        g.add_node("human", _node("human", last=False))
        g.add_edge(E.START, "bot")
        return watch(g.compile(checkpointer=saver(E)), {"log": [], "last": ""})

    ref = differential(scenario)
    assert [s["plan"] for s in ref["shown"]["steps"][1:]] == [[["bot", None]], [["human", None]]]
    assert ref["shown"]["result"] == {"log": ["escalated", "human"], "last": "bot"}


def test_sends_that_each_ask_a_human_are_answered_by_id() -> None:
    """Map step with a question per item: two Send tasks interrupt in one step, one keyed
    resume answers both, and the reduce step sees both answers."""
    def scenario(E: Any) -> Any:
        def check(item: str) -> dict[str, Any]:
            return {"results": [f"{item}:{E.interrupt(f'keep {item}?')}"]}

        g = E.StateGraph(Batch)
        g.add_node("check", check)
        g.add_node("reduce", lambda s: {"summary": ",".join(sorted(s["results"]))})
        g.add_conditional_edges(E.START, lambda s: [E.Send("check", i) for i in s["items"]], ["check"])
        g.add_edge("check", "reduce")
        graph = g.compile(checkpointer=saver(E))
        lens = Lens(graph, {"items": ["apple", "pear"], "results": []})
        lens.run()
        asked = sorted(i["value"] for i in lens.interrupts)
        lens.resume({i["id"]: "yes" if "apple" in i["value"] else "no" for i in lens.interrupts})
        lens.run()
        return {"asked": asked, "shown": shown(lens), "mechanism": mechanism(lens, graph)}

    ref = differential(scenario)
    assert ref["asked"] == ["keep apple?", "keep pear?"]
    assert ref["shown"]["result"]["summary"] == "apple:yes,pear:no"


def test_what_if_re_applies_an_overwrite_as_an_overwrite() -> None:
    """A branch writes `Overwrite(["fresh"])` beside another's `["a"]`: the real reducer
    re-applied gives the real result, and last value refuses two writes, as LangGraph would."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b", lambda s: {"log": E.Overwrite(["fresh"])})
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        lens = Lens(g.compile(), {"log": ["i"], "last": ""})
        lens.run()
        step = lens.steps[-1]
        same = lens.what_if("operator.add", step=step["index"])[0]
        last = lens.what_if("last value", step=step["index"])[0]
        return same["whatif"], same["same"], last["same"], last["error"] is not None

    assert differential(scenario) == (["fresh"], True, False, True)


def test_what_if_with_add_messages_on_a_reply_written_without_an_id_is_the_same() -> None:
    """A node returns `("ai", "hi")`: `add_messages` gives it a fresh id in the run and
    another when re-applied; the teacher's "same reducer" check must still say same."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(E.MessagesState)
        g.add_node("reply", lambda s: {"messages": [("ai", "hi")]})
        g.add_edge(E.START, "reply")
        lens = Lens(g.compile(), {"messages": [HumanMessage("q", id="q")]})
        lens.run()
        step = lens.steps[-1]
        (row,) = lens.what_if("add_messages", step=step["index"], channels=["messages"])
        (other,) = lens.what_if("operator.add", step=step["index"], channels=["messages"])
        return row["same"], [m["content"] for m in row["real"]], other["same"]

    assert differential(scenario) == (True, ["q", "hi"], False)


def test_a_task_writing_one_key_twice_shows_two_writes_and_what_if_re_applies_both() -> None:
    """A node returning two `Command(update=...)`s (as a ToolNode whose tools each return one):
    two writes to `log`, not LangGraph's folded `{"$writes": [...]}`; last value refuses them."""
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("tools", lambda s: [E.Command(update={"log": ["tool1"]}), E.Command(update={"log": ["tool2"]})])
        g.add_edge(E.START, "tools")
        lens = Lens(g.compile(), {"log": [], "last": ""})
        lens.run()
        step = lens.steps[-1]
        writes = [w for t in step["execute"]["tasks"] for w in t["writes"] if w[0] == "log"]
        same = lens.what_if("operator.add", step=step["index"])[0]
        last = lens.what_if("last value", step=step["index"])[0]
        return writes, same["whatif"], same["same"], last["error"] is not None

    assert differential(scenario) == ([["log", ["tool1"]], ["log", ["tool2"]]], ["tool1", "tool2"], True, True)


@pytest.mark.parametrize("where", ["interrupt_before", "interrupt_after"])
def test_text_says_a_step_stopped_at_a_breakpoint_did_not_run(where: str) -> None:
    def scenario(E: Any) -> Any:
        g = E.StateGraph(Log)
        g.add_node("a", _node("a"))
        g.add_node("b", _node("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile(checkpointer=saver(E), **{where: ["b" if where == "interrupt_before" else "a"]})
        lens = Lens(app, {"log": [], "last": ""}, {"configurable": {"thread_id": "t"}})
        lens.run()
        return lens.status, lens.text().splitlines()[-1]

    assert differential(scenario) == ("interrupted", "step 2: b | breakpoint: planned, stopped before it runs")


class _SendLog(TypedDict):
    log: Annotated[list, operator.add]


def _asking_sends(E: Any, asking: set[int]) -> Lens:
    """`pre` sends `ask` 0, 1 and 2; the ones in `asking` ask a question, the others finish.
    Stepped through the lens to the interrupt (checkpointed, thread "t")."""
    def ask(i: int) -> Any:
        if i not in asking:
            return {"log": [f"t{i}"]}
        return {"log": [f"t{i}:{E.interrupt(f'q{i}')}"]}

    g = E.StateGraph(_SendLog)
    g.add_node("ask", ask)
    g.add_node("pre", lambda s: {})
    g.add_edge(E.START, "pre")
    g.add_conditional_edges("pre", lambda s: [E.Send("ask", i) for i in range(3)], ["ask"])
    lens = Lens(g.compile(checkpointer=saver(E)), {"log": []}, {"configurable": {"thread_id": "t"}})
    lens.run()
    return lens


def test_a_resumed_send_step_applies_the_restored_task_in_its_send_order() -> None:
    """Sends 0, 1, 2; 0 and 2 ask, 1 finishes first. On resume 1 is restored (not run
    again): it keeps its place among the Sends (its argument too), so the barrier lists the
    writes in the order the reducer applied them and what-if with the same reducer agrees."""
    def scenario(E: Any) -> Any:
        lens = _asking_sends(E, {0, 2})
        lens.resume({i["id"]: {"q0": "A", "q2": "B"}[i["value"]] for i in lens.interrupts})
        lens.run()
        step = lens.steps[-1]
        (log,) = [c for c in step["update"]["channels"] if c["channel"] == "log"]
        again = lens.what_if("operator.add", step=step["index"])[0]
        return ([t["send"] and t["send"]["arg"] for t in step["plan"]["tasks"]],
                [w["value"] for w in log["writes"]], log["after"], again["same"])

    assert differential(scenario) == ([0, 1, 2], [["t0:A"], ["t1"], ["t2:B"]], ["t0:A", "t1", "t2:B"], True)


def test_a_second_input_on_a_thread_starts_from_the_threads_saved_state() -> None:
    """A conversation's second turn: the input's steps start from what the thread holds
    (not an empty state), so only what the input changes is marked changed."""
    class S(TypedDict):
        lst: Annotated[list, operator.add]
        plain: int

    def scenario(E: Any) -> Any:
        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"plain": 7})
        g.add_edge(E.START, "a")
        app = g.compile(checkpointer=saver(E))
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"lst": ["first"]}, cfg)
        lens = Lens(app, {"lst": ["second"]}, cfg)
        lens.run()
        return [[s["step"], s["before"], s["changed"]] for s in lens.steps[:2]]

    assert differential(scenario) == [[2, {"lst": ["first"], "plain": 7}, []],
                                      [3, {"lst": ["first"], "plain": 7}, ["lst"]]]


def test_a_resumed_step_whose_first_sends_finished_is_one_step() -> None:
    """Sends 0, 1, 2; only 2 asks. On resume LangGraph lists the finished (restored) tasks as
    started again before the one that runs: the lens shows one step 2, as the checkpoints."""
    def scenario(E: Any) -> Any:
        lens = _asking_sends(E, {2})
        lens.resume("yes")
        lens.run()
        return lens.text().splitlines()[3:]

    assert differential(scenario) == ["step 2: ask ×3 | interrupted: 'q2'",
                                      "step 2: ask ×3 | changed: log | log=['t0', 't1', 't2:yes']"]

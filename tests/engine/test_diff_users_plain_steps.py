"""Lone-task steps run as plain calls in the calling thread (`_driver._step_here`,
`_plain_steps`) and quick fan-out steps in one lane (`_inline`), on both engines: what a
node can observe of that (ContextVars, threads, thread-locals, errors, `max_concurrency`,
mixed sync/async steps, nested graph runs, its config) and what a consumer that edits,
keeps or stops between chunks sees.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import contextvars
import dataclasses
import threading
import time
from typing import Annotated

import pytest
from _diff import acollect, capture, collect, steps_as_multisets
from _builders import S, _cfg, _chain, _ids
from typing_extensions import TypedDict

_VAR = contextvars.ContextVar("fast_paths_var", default="unset")


async def _agather(aiter):
    return [c async for c in aiter]


def _config_editing_scenario(edit_tags):
    def scenario(E):
        seen = []

        def a(s, config):
            seen.append(("a", config["configurable"].get("user"), config.get("metadata", {}).get("k")))
            config["configurable"]["user"] = "changed-by-a"
            config.setdefault("metadata", {})["k"] = "a"
            config["configurable"]["new_key"] = 1
            if edit_tags:
                config.setdefault("tags", []).append("tag-a")
            return {"log": ["a"]}

        def probe(name):
            def fn(s, config):
                seen.append((name, config["configurable"].get("user"), config["configurable"].get("new_key"),
                             config.get("metadata", {}).get("k"), "tag-a" in config.get("tags", [])))
                return {"log": [name]}
            return fn

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", probe("b"))
        g.add_node("x", probe("x"))
        g.add_node("y", probe("y"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "x")
        g.add_edge("b", "y")
        app = g.compile()
        out = []
        for how in ("invoke", "values", "invoke"):
            seen.clear()
            cfg = {"configurable": {"user": "u1"}, "metadata": {"m": 1}, "tags": ["t"]}
            if how == "invoke":
                app.invoke({"log": []}, cfg)
            else:
                list(app.stream({"log": []}, cfg, stream_mode=how))
            out.append((how, sorted(seen, key=repr), cfg))
        return out

    return scenario


def test_a_context_var_set_by_a_node_is_seen_by_later_nodes_and_by_the_caller(differential):
    """A node sets a module-level ContextVar (request id, tenant): do later nodes see it?
    does the caller after `invoke` / after draining `stream`?"""

    def scenario(E):
        out = []

        def a(s):
            out.append(("a", _VAR.get()))
            _VAR.set("set-by-a")
            return {"log": ["a"]}

        def b(s):
            out.append(("b", _VAR.get()))
            _VAR.set("set-by-b")
            return {"log": ["b"]}

        app = _chain(E, S, a, b)
        for how in ("invoke", "values", "updates", "debug"):
            token = _VAR.set(f"caller-{how}")
            try:
                if how == "invoke":
                    app.invoke({"log": []})
                else:
                    list(app.stream({"log": []}, stream_mode=how))
                out.append(("caller", how, _VAR.get()))
            finally:
                _VAR.reset(token)
        return out

    differential(scenario)


def test_a_context_var_set_by_a_node_under_a_checkpointer_and_in_fan_outs(differential):
    """The same ContextVar, with a checkpointer, and in a two-branch step (each branch sets
    it; the join reads it)."""

    def scenario(E):
        out = []

        def setter(name):
            def node(s):
                before = _VAR.get()
                _VAR.set(f"set-by-{name}")
                return {"log": [(name, before)]}
            return node

        def join(s):
            return {"log": [("join", _VAR.get())]}

        g = E.StateGraph(S)
        g.add_node("x", setter("x"))
        g.add_node("y", setter("y"))
        g.add_node("join", join)
        g.add_node("after", setter("after"))
        g.add_node("last", join)
        g.add_edge(E.START, "x")
        g.add_edge(E.START, "y")
        g.add_edge(["x", "y"], "join")
        g.add_edge("join", "after")
        g.add_edge("after", "last")
        for cp in (None, E.InMemorySaver()):
            app = g.compile(checkpointer=cp)
            for _ in range(2):
                token = _VAR.set("caller")
                try:
                    res = app.invoke({"log": []}, _cfg())
                    out.append((sorted(res["log"][:2]), res["log"][2:], _VAR.get()))
                finally:
                    _VAR.reset(token)
        return out

    differential(scenario)


def test_async_nodes_and_context_vars(differential):
    """`ainvoke` / `astream`: an async node sets a ContextVar; a sync node after it and an
    async node after that read it; the caller reads it afterwards."""

    async def scenario(E):
        out = []

        async def a(s):
            out.append(("a", _VAR.get()))
            _VAR.set("set-by-a")
            return {"log": ["a"]}

        def b(s):
            out.append(("b", _VAR.get()))
            _VAR.set("set-by-b")
            return {"log": ["b"]}

        async def c(s):
            out.append(("c", _VAR.get()))
            return {"log": ["c"]}

        app = _chain(E, S, a, b, c)
        token = _VAR.set("caller")
        try:
            await app.ainvoke({"log": []})
            out.append(("caller-ainvoke", _VAR.get()))
            [x async for x in app.astream({"log": []})]
            out.append(("caller-astream", _VAR.get()))
        finally:
            _VAR.reset(token)
        return out

    differential(scenario)


def test_which_thread_runs_a_node(differential):
    """Nodes that check `threading.current_thread() is threading.main_thread()` (GUI and
    signal code does) or read a `threading.local` the caller set: lone nodes, a two-way
    fan-out, on first and repeated runs, with invoke and stream."""

    def scenario(E):
        local = threading.local()
        local.who = "caller"
        out = []

        def probe(name):
            def node(s):
                out.append((name, threading.current_thread() is threading.main_thread(),
                            getattr(local, "who", None)))
                return {"log": [name]}
            return node

        g = E.StateGraph(S)
        g.add_node("a", probe("a"))
        g.add_node("x", probe("x"))
        g.add_node("y", probe("y"))
        g.add_node("z", probe("z"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "x")
        g.add_edge("a", "y")
        g.add_edge(["x", "y"], "z")
        app = g.compile()
        runs = []
        for how in ("invoke", "invoke", "values", "updates"):
            out.clear()
            if how == "invoke":
                app.invoke({"log": []})
            else:
                list(app.stream({"log": []}, stream_mode=how))
            runs.append((how, sorted(out)))
        return runs

    differential(scenario)


def test_a_node_that_raises_surfaces_the_same_exception_object(differential):
    """`except ValueError as e` around `invoke`/`stream`: is it the object the node raised,
    with its args, notes and the node's frame in the traceback?"""

    def scenario(E):
        raised = []

        def bad(s):
            e = ValueError("bad input", 42)
            e.add_note("user note")
            raised.append(e)
            raise e

        app = _chain(E, S, lambda s: {"log": ["a"]}, bad)
        out = []
        for how in ("invoke", "values", "updates"):
            raised.clear()
            try:
                if how == "invoke":
                    app.invoke({"log": []})
                else:
                    list(app.stream({"log": []}, stream_mode=how))
            except ValueError as e:
                tb = e.__traceback__
                names = []
                while tb is not None:
                    names.append(tb.tb_frame.f_code.co_name)
                    tb = tb.tb_next
                out.append((how, e is raised[0], e.args, getattr(e, "__notes__", None),
                            names[-1], "bad" in names))
        return out

    differential(scenario)


def test_a_stream_consumer_that_breaks_after_the_first_update(differential):
    """`for chunk in app.stream(...): ...; break` on a linear graph: which nodes ran by the
    time the loop stopped, and after the generator is closed."""

    def scenario(E):
        ran = []

        def node(name):
            def fn(s):
                ran.append(name)
                return {"log": [name]}
            return fn

        app = _chain(E, S, node("a"), node("b"), node("c"))
        out = []
        for mode in ("updates", "values", ["updates", "values"]):
            ran.clear()
            stream = app.stream({"log": []}, stream_mode=mode)
            got = []
            for chunk in stream:
                got.append(chunk)
                if len(got) == 2:
                    break
            at_break = list(ran)
            stream.close()
            out.append((mode, got, at_break, list(ran)))
        return out

    differential(scenario)


def test_a_consumer_that_does_work_between_chunks_sees_node_side_effects_in_order(differential):
    """The consumer records an event for each chunk; nodes record theirs: the interleaving
    tells whether a node runs before the previous chunk was handed over."""

    def scenario(E):
        events = []

        def node(name):
            def fn(s):
                events.append(("node", name))
                return {"log": [name]}
            return fn

        app = _chain(E, S, node("a"), node("b"), node("c"))
        out = []
        for mode in ("updates", "values"):
            events.clear()
            for chunk in app.stream({"log": []}, stream_mode=mode):
                events.append(("chunk", chunk))
            out.append(list(events))
        return out

    differential(scenario)


def test_send_fan_out_of_one_with_a_failing_worker(differential):
    """`Send` to one worker that raises: invoke's error, the stream before it, and the
    checkpointed task error."""

    def scenario(E):
        def plan(s):
            return [E.Send("worker", {"log": ["job-0"]})]

        def worker(arg):
            raise RuntimeError(f"worker failed on {arg['log']}")

        g = E.StateGraph(S)
        g.add_node("start", lambda s: {"log": ["start"]})
        g.add_node("worker", worker)
        g.add_edge(E.START, "start")
        g.add_conditional_edges("start", plan, ["worker"])
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r = capture(lambda: app.invoke({"log": []}, cfg))
        st = app.get_state(cfg)
        chunks = collect(lambda: app.stream({"log": []}, _cfg(), stream_mode="updates"))
        return r, st.next, [(t.name, repr(t.error)) for t in st.tasks], chunks

    differential(scenario)


def test_send_fan_out_of_a_hundred_with_one_failing_worker(differential):
    """100 `Send`s, worker 37 raises: the error surfaces; a second run without the failure
    gives every result (the workers are now known to be quick)."""

    def scenario(E):
        fail = {"on": True}

        def plan(s):
            return [E.Send("worker", {"log": [i]}) for i in range(100)]

        def worker(arg):
            i = arg["log"][0]
            if fail["on"] and i == 37:
                raise KeyError(f"job {i}")
            return {"log": [i * 2]}

        g = E.StateGraph(S)
        g.add_node("start", lambda s: {})
        g.add_node("worker", worker)
        g.add_edge(E.START, "start")
        g.add_conditional_edges("start", plan, ["worker"])
        app = g.compile()
        out = []
        out.append(capture(lambda: app.invoke({"log": []})))
        fail["on"] = False
        res = app.invoke({"log": []})
        out.append(res["log"])
        fail["on"] = True
        out.append(capture(lambda: app.invoke({"log": []})))
        return out

    differential(scenario)


def test_max_concurrency_over_a_send_fan_out(differential):
    """`max_concurrency=2` over 6 sends of a slow-ish worker: the peak number of workers
    running at once, and the results."""

    def scenario(E):
        lock = threading.Lock()
        state = {"now": 0, "peak": 0}

        def worker(arg):
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            time.sleep(0.02)
            with lock:
                state["now"] -= 1
            return {"log": arg["log"]}

        g = E.StateGraph(S)
        g.add_node("start", lambda s: {})
        g.add_node("worker", worker)
        g.add_edge(E.START, "start")
        g.add_conditional_edges("start", lambda s: [E.Send("worker", {"log": [i]}) for i in range(6)],
                                ["worker"])
        app = g.compile()
        res = app.invoke({"log": []}, {"max_concurrency": 2})
        return sorted(res["log"]), state["peak"]

    differential(scenario)


def test_a_step_with_one_sync_and_one_async_node(differential):
    """A sync and an async branch in one step under `ainvoke` and `astream`; each reports
    whether it ran on the event-loop thread and sees the caller's ContextVar."""

    async def scenario(E):
        out = []
        loop_thread = threading.current_thread()

        def sync_node(s):
            out.append(("sync", threading.current_thread() is loop_thread, _VAR.get()))
            _VAR.set("sync-set")
            return {"log": ["sync"]}

        async def async_node(s):
            await asyncio.sleep(0)
            out.append(("async", threading.current_thread() is loop_thread, _VAR.get()))
            _VAR.set("async-set")
            return {"log": ["async"]}

        async def join(s):
            out.append(("join", _VAR.get()))
            return {"log": ["join"]}

        g = E.StateGraph(S)
        g.add_node("s", sync_node)
        g.add_node("a", async_node)
        g.add_node("join", join)
        g.add_edge(E.START, "s")
        g.add_edge(E.START, "a")
        g.add_edge(["s", "a"], "join")
        app = g.compile()
        token = _VAR.set("caller")
        try:
            res = await app.ainvoke({"log": []})
            chunks = await acollect(lambda: app.astream({"log": []}, stream_mode="updates"))
        finally:
            _VAR.reset(token)
        return sorted(res["log"]), sorted(out), steps_as_multisets(chunks, lambda c: "join" in c)

    differential(scenario)


def test_a_fan_out_where_one_branch_raises_after_its_sibling_finished(differential):
    """Two quick branches (run a few times so they are known quick), one raises: the error,
    and the updates streamed before it."""

    def scenario(E):
        fail = {"on": False}

        def ok(s):
            return {"log": ["ok"]}

        def flaky(s):
            if fail["on"]:
                raise ValueError("flaky failed")
            return {"log": ["flaky"]}

        g = E.StateGraph(S)
        g.add_node("ok", ok)
        g.add_node("flaky", flaky)
        g.add_edge(E.START, "ok")
        g.add_edge(E.START, "flaky")
        app = g.compile()
        for _ in range(3):
            app.invoke({"log": []})
        fail["on"] = True
        r = capture(lambda: app.invoke({"log": []}))
        chunks = collect(lambda: app.stream({"log": []}, stream_mode="updates"))
        return r, sorted(chunks, key=repr)

    differential(scenario)


def test_a_consumer_that_edits_values_chunks(differential, views):
    """`for chunk in app.stream(..., stream_mode="values")`: the consumer rebinds keys of
    the chunk, deletes one and appends to a list in it; later chunks, nodes and the
    checkpointed state show what LangGraph shows."""

    def scenario(E):
        seen = []

        def node(name):
            def fn(s):
                seen.append((name, dict(s), list(s.get("items", []))))
                return {"count": s["count"] + 1, "log": [name]}
            return fn

        app = _chain(E, S, node("a"), node("b"), node("c"), checkpointer=E.InMemorySaver())
        cfg = _cfg()
        chunks = []
        for chunk in app.stream({"count": 0, "items": [], "log": [], "note": "n"}, cfg,
                                stream_mode="values", durability="sync"):
            chunks.append(repr(chunk))
            chunk["count"] = 1000
            chunk["items"].append(f"consumer{len(chunks)}")
            chunk["log"].append("consumer-log")
            del chunk["note"]
        return chunks, seen, app.get_state(cfg).values

    differential(scenario)


def test_a_consumer_that_edits_updates_chunks(differential, views):
    """`stream_mode="updates"`: the consumer edits the node's update dict and the lists in
    it; the next node, later chunks and the result."""

    def scenario(E):
        seen = []
        shared = []

        def a(s):
            return {"items": shared, "log": ["a"], "count": 1}

        def b(s):
            seen.append(("b", dict(s)))
            return {"log": ["b"]}

        def c(s):
            seen.append(("c", dict(s)))
            return {}

        app = _chain(E, S, a, b, c)
        chunks = []
        for chunk in app.stream({"log": []}, stream_mode="updates"):
            chunks.append(repr(chunk))
            for upd in chunk.values():
                if upd:
                    upd["count"] = -5
                    if "log" in upd:
                        upd["log"].append("consumer")
                    if "items" in upd:
                        upd["items"].append("consumer")
        return chunks, seen, shared

    differential(scenario)


def test_a_consumer_that_edits_chunks_of_several_modes(differential, views):
    """`stream_mode=["values", "updates", "debug"]`: edits to a `values` chunk's list, and
    to a `debug` task-result payload, seen by what follows."""

    def scenario(E):
        seen = []

        def a(s):
            return {"items": ["a"], "log": ["a"]}

        def b(s):
            seen.append(("b", list(s["items"]), list(s["log"])))
            return {"log": ["b"]}

        app = _chain(E, S, a, b)
        out = []
        for mode, chunk in app.stream({"items": [], "log": []}, stream_mode=["values", "updates", "debug"]):
            if mode == "values":
                out.append(("values", repr(chunk)))
                chunk["items"].append("v")
            elif mode == "updates":
                out.append(("updates", repr(chunk)))
            else:
                p = chunk["payload"]
                out.append(("debug", chunk["type"], p.get("name"), repr(p.get("result")), repr(p.get("input"))))
                if chunk["type"] == "task_result":
                    res = p["result"]
                    if isinstance(res, dict) and "log" in res:
                        res["log"].append("debug")
                elif chunk["type"] == "task" and isinstance(p.get("input"), dict):
                    p["input"]["items"] = ["debug-input"]
        return out, seen

    differential(scenario)


def test_a_consumer_that_keeps_values_chunks_and_compares_them_later(differential, views):
    """A UI keeps every `values` chunk (for undo) and reads them after the run: earlier
    chunks must not have changed as later steps ran."""

    def scenario(E):
        def bump(s):
            return {"count": s["count"] + 1, "note": f"n{s['count']}"}

        app = _chain(E, S, bump, bump, bump, bump)
        kept = list(app.stream({"count": 0}, stream_mode="values"))
        kept_async = asyncio.run(_agather(app.astream({"count": 0}, stream_mode="values")))
        return kept, kept_async, [c is kept[0] for c in kept]

    differential(scenario)


def test_a_consumer_edits_the_invoke_result_then_continues_the_thread(differential, views):
    """`res = app.invoke(...)`, the caller edits `res` (its lists too), then invokes the
    same thread again and reads the state."""

    def scenario(E):
        from langchain_core.messages import AIMessage, HumanMessage

        class M(TypedDict, total=False):
            messages: Annotated[list, E.add_messages]
            items: list
            count: int

        def bot(s):
            n = len(s["messages"])
            return {"messages": [AIMessage(f"r{n}", id=f"r{n}")], "count": s.get("count", 0) + 1}

        app = _chain(E, M, bot, checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = app.invoke({"messages": [HumanMessage("q0", id="q0")], "items": ["i"]}, cfg)
        r1["messages"].append(AIMessage("caller", id="caller"))
        r1["messages"][0].content = "caller-edited"
        r1["items"].append("caller")
        r1["count"] = 99
        r2 = app.invoke({"messages": [HumanMessage("q1", id="q1")]}, cfg)
        return _ids(r2["messages"]), r2["items"], r2["count"], _ids(app.get_state(cfg).values["messages"])

    differential(scenario)


def test_quick_branches_where_one_waits_for_its_sibling(differential):
    """Two branches warmed up so both are known quick; then one waits on an Event the other
    sets (a producer/consumer pair in one step): both finish, either order."""

    def scenario(E):
        mode = {"wait": False}
        ev = {"e": threading.Event()}

        def waiter(s):
            if mode["wait"]:
                ok = ev["e"].wait(5)
                return {"log": [("waiter", ok)]}
            return {"log": [("waiter", None)]}

        def setter(s):
            if mode["wait"]:
                ev["e"].set()
            return {"log": [("setter", None)]}

        out = []
        for first, second in (("a_waiter", "b_setter"), ("a_setter", "b_waiter")):
            g = E.StateGraph(S)
            g.add_node(first, waiter if "waiter" in first else setter)
            g.add_node(second, waiter if "waiter" in second else setter)
            g.add_edge(E.START, first)
            g.add_edge(E.START, second)
            app = g.compile()
            mode["wait"] = False
            for _ in range(3):
                app.invoke({"log": []})
            mode["wait"] = True
            ev["e"] = threading.Event()
            res = app.invoke({"log": []})
            out.append(sorted(res["log"], key=repr))
        return out

    differential(scenario)


def test_values_and_updates_chunks_before_a_node_error(differential):
    """A linear graph whose third node raises: the chunks a `values`/`updates` consumer
    got before the error, with and without a checkpointer."""

    def scenario(E):
        def bad(s):
            raise RuntimeError("third node broke")

        out = []
        for cp in (None, E.InMemorySaver()):
            app = _chain(E, S, lambda s: {"log": ["a"]}, lambda s: {"log": ["b"]}, bad, checkpointer=cp)
            for mode in ("values", "updates", ["values", "updates"], "debug"):
                out.append(collect(lambda app=app, mode=mode: app.stream({"log": []}, _cfg(), stream_mode=mode)))
        return out

    differential(scenario)


def test_a_consumer_that_sets_a_context_var_between_chunks(differential):
    """The consumer sets a ContextVar after each chunk (e.g. a per-chunk trace id); the nodes
    read it: do nodes run in the consumer's context at the time they run?"""

    def scenario(E):
        seen = []

        def node(name):
            def fn(s):
                seen.append((name, _VAR.get()))
                return {"log": [name]}
            return fn

        out = []
        for mode in ("values", "updates"):
            app = _chain(E, S, node("a"), node("b"), node("c"))
            seen.clear()
            token = _VAR.set("before")
            try:
                for i, _chunk in enumerate(app.stream({"log": []}, stream_mode=mode)):
                    _VAR.set(f"after-chunk-{i}")
            finally:
                _VAR.reset(token)
            out.append((mode, list(seen)))
        return out

    differential(scenario)


def test_a_consumer_that_changes_a_global_between_chunks(differential):
    """The consumer flips a flag after the first chunk ("cancel the rest"), the nodes check
    it and skip work: which nodes saw the flag."""

    def scenario(E):
        flag = {"stop": False}
        seen = []

        def node(name):
            def fn(s):
                seen.append((name, flag["stop"]))
                return {"log": [name]}
            return fn

        out = []
        for mode in ("values", "updates", "debug"):
            app = _chain(E, S, node("a"), node("b"), node("c"))
            seen.clear()
            flag["stop"] = False
            n = 0
            for _chunk in app.stream({"log": []}, stream_mode=mode):
                n += 1
                if n == 2:
                    flag["stop"] = True
            out.append((mode, list(seen)))
        return out

    differential(scenario)


def test_a_retried_lone_node_sees_context_vars_and_its_thread(differential):
    """`RetryPolicy(max_attempts=3)` on a lone node that fails twice: each attempt reads
    and sets a ContextVar and notes whether it runs on the main thread."""

    def scenario(E):
        attempts = []

        def flaky(s):
            attempts.append((_VAR.get(), threading.current_thread() is threading.main_thread()))
            _VAR.set(f"attempt{len(attempts)}")
            if len(attempts) % 3:
                raise ConnectionError("try again")
            return {"log": ["ok"]}

        def after(s):
            attempts.append(("after", _VAR.get()))
            return {}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.001,
                                                               jitter=False))
        g.add_node("after", after)
        g.add_edge(E.START, "flaky")
        g.add_edge("flaky", "after")
        app = g.compile()
        token = _VAR.set("caller")
        try:
            r1 = app.invoke({"log": []})
            r2 = list(app.stream({"log": []}, stream_mode="values"))
        finally:
            _VAR.reset(token)
        return r1, r2, attempts

    differential(scenario)


def test_a_node_runs_another_graph_inside_it(differential):
    """A node sets a ContextVar and runs a second compiled graph (a lone node then a
    two-way fan-out): the inner nodes see the var; the outer next node sees what the
    inner nodes set (or not)."""

    def scenario(E):
        seen = []

        def probe(name):
            def fn(s):
                seen.append((name, _VAR.get()))
                _VAR.set(f"set-by-{name}")
                return {"log": [name]}
            return fn

        inner = E.StateGraph(S)
        inner.add_node("i1", probe("i1"))
        inner.add_node("ix", probe("ix"))
        inner.add_node("iy", probe("iy"))
        inner.add_edge(E.START, "i1")
        inner.add_edge("i1", "ix")
        inner.add_edge("i1", "iy")
        inner_app = inner.compile()

        def outer(s):
            _VAR.set("outer")
            r = inner_app.invoke({"log": []})
            seen.append(("outer-after-inner", _VAR.get()))
            return {"log": sorted(r["log"])}

        app = _chain(E, S, outer, probe("next"))
        token = _VAR.set("caller")
        try:
            res = app.invoke({"log": []})
            caller = _VAR.get()
        finally:
            _VAR.reset(token)
        return res, sorted(seen), caller

    differential(scenario)


def test_a_node_raising_a_base_exception(differential):
    """A node raises a `BaseException` subclass (used for control flow) or `SystemExit`:
    what escapes `invoke` and `stream`, and whether the next run works."""

    def scenario(E):
        class Abort(BaseException):
            pass

        out = []
        for exc in (Abort("stop"), SystemExit(3)):
            def boom(s, exc=exc):
                raise exc

            app = _chain(E, S, lambda s: {"log": ["a"]}, boom)
            for how in ("invoke", "values", "updates"):
                chunks = []
                try:
                    if how == "invoke":
                        app.invoke({"log": []})
                    else:
                        for c in app.stream({"log": []}, stream_mode=how):
                            chunks.append(c)
                except BaseException as e:  # noqa: BLE001 - the observable
                    out.append((how, type(e).__name__, str(e), e is exc, chunks))
            ok = _chain(E, S, lambda s: {"log": ["fine"]}).invoke({"log": []})
            out.append(ok)
        return out

    differential(scenario)


def test_context_vars_with_custom_and_multiple_stream_modes(differential):
    """The ContextVar program again, with `custom` (a live stream) and mixed modes: what
    nodes see and what the caller sees afterwards."""

    def scenario(E):
        out = []

        def a(s):
            out.append(("a", _VAR.get()))
            _VAR.set("set-by-a")
            E.get_stream_writer()({"a": 1})
            return {"log": ["a"]}

        def b(s):
            out.append(("b", _VAR.get()))
            return {"log": ["b"]}

        app = _chain(E, S, a, b)
        for mode in ("custom", ["custom", "values"], ["updates", "values"]):
            token = _VAR.set(f"caller-{mode}")
            try:
                chunks = list(app.stream({"log": []}, stream_mode=mode))
                out.append(("caller", repr(mode), _VAR.get(), chunks))
            finally:
                _VAR.reset(token)
        return out

    differential(scenario)


def test_a_lone_sync_node_under_ainvoke_and_astream(differential):
    """A graph of sync nodes run with `ainvoke`/`astream`: whether each runs on the event
    loop's thread, and the ContextVar it sees and sets."""

    async def scenario(E):
        out = []
        loop_thread = threading.current_thread()

        def node(name):
            def fn(s):
                out.append((name, threading.current_thread() is loop_thread, _VAR.get()))
                _VAR.set(f"set-by-{name}")
                return {"log": [name]}
            return fn

        app = _chain(E, S, node("a"), node("b"))
        token = _VAR.set("caller")
        try:
            await app.ainvoke({"log": []})
            out.append(("caller", _VAR.get()))
            await acollect(lambda: app.astream({"log": []}, stream_mode="values"))
            out.append(("caller", _VAR.get()))
        finally:
            _VAR.reset(token)
        return out

    differential(scenario)


def test_a_node_that_edits_its_config_in_place(differential):
    """A node writes into the `config` it receives (`config["configurable"]["user"] = ...`,
    `config["metadata"][...]`): what the next nodes, a fan-out and the caller's own
    config dict show afterwards."""
    differential(_config_editing_scenario(edit_tags=False))


def test_a_node_that_appends_a_tag_to_its_config_in_place(differential):
    """The same program where the node also does `config["tags"].append("tag-a")` (adding a
    tracing tag for what follows): the nodes after it see the tag (one list per run, as on
    LangGraph), the caller's config does not change."""
    differential(_config_editing_scenario(edit_tags=True))


def _tag_probe(seen, name, append=None):
    def fn(s, config):
        seen.append((name, list(config.get("tags", ["<none>"]))))
        if append:
            config.setdefault("tags", []).append(append)
        return {"log": [name]}

    return fn


@pytest.mark.parametrize("how", ["invoke", "stream", "ainvoke"])
@pytest.mark.parametrize("caller_tags", [["t"], None])
def test_tags_appended_in_place_reach_later_nodes_a_subgraph_and_sends_but_not_the_caller(
        differential, how, caller_tags):
    """A node appends a tag in place, then a subgraph runs (its first node appends another),
    then a node fans out with `Send`s, then a subgraph with tags of its own (`with_config`)
    runs: which tags each node sees. A subgraph starts from its parent task's tags, and
    what its nodes append stays inside it; with no tags from the caller the appends stay
    in their own node."""

    def scenario(E):
        seen = []
        sub = E.StateGraph(S)
        sub.add_node("s1", _tag_probe(seen, "s1", "from-s1"))
        sub.add_node("s2", _tag_probe(seen, "s2"))
        sub.add_edge(E.START, "s1")
        sub.add_edge("s1", "s2")
        tagged = E.StateGraph(S)
        tagged.add_node("o1", _tag_probe(seen, "o1", "from-o1"))
        tagged.add_node("o2", _tag_probe(seen, "o2"))
        tagged.add_edge(E.START, "o1")
        tagged.add_edge("o1", "o2")
        g = E.StateGraph(S)
        g.add_node("a", _tag_probe(seen, "a", "from-a"))
        g.add_node("sub", sub.compile())
        g.add_node("fan", _tag_probe(seen, "fan", "from-fan"))
        g.add_node("w", lambda arg, config: seen.append(("w", arg, list(config.get("tags", ["<none>"]))))
                   or {"log": ["w"]})
        g.add_node("own", tagged.compile().with_config(tags=["own-tag"]))
        g.add_node("last", _tag_probe(seen, "last"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "sub")
        g.add_edge("sub", "fan")
        g.add_conditional_edges("fan", lambda s: [E.Send("w", i) for i in range(3)], ["w"])
        g.add_edge("w", "own")
        g.add_edge("own", "last")
        app = g.compile()
        cfg = {"tags": list(caller_tags)} if caller_tags else {}
        if how == "invoke":
            app.invoke({"log": []}, cfg)
        elif how == "stream":
            list(app.stream({"log": []}, cfg, stream_mode=["updates", "custom"]))
        else:
            asyncio.run(app.ainvoke({"log": []}, cfg))
        return sorted(seen, key=repr), cfg

    differential(scenario)


def test_a_tag_appended_by_a_task_call_reaches_the_later_task_calls(differential):
    """The functional API: an `@task` appends a tag to its config; the next `@task` call
    and the entrypoint itself afterwards, as LangGraph shows them."""

    def scenario(E):
        seen = []

        @E.func.task
        def first(x, config):
            seen.append(("first", list(config.get("tags", ["<none>"]))))
            config.setdefault("tags", []).append("from-first")
            return x + 1

        @E.func.task
        def second(x, config):
            seen.append(("second", list(config.get("tags", ["<none>"]))))
            return x * 2

        @E.func.entrypoint()
        def main(x, config):
            y = first(x).result()
            z = second(y).result()
            seen.append(("main", list(config.get("tags", ["<none>"]))))
            return z

        cfg = {"tags": ["t"]}
        return main.invoke(1, cfg), seen, cfg

    differential(scenario)


def test_a_node_that_edits_its_runtime_context_and_a_shared_send_arg(differential):
    """A dataclass `context` object edited by one node and read by the next; one dict
    passed as the arg of 20 `Send`s, each worker adding to it."""

    def scenario(E):
        @dataclasses.dataclass
        class Ctx:
            user: str
            hits: list = dataclasses.field(default_factory=list)

        shared_arg = {"jobs": []}

        def a(s, runtime: E.Runtime[Ctx]):
            runtime.context.hits.append("a")
            runtime.context.user = "changed"
            return {"log": ["a"]}

        def b(s, runtime: E.Runtime[Ctx]):
            return {"log": [(runtime.context.user, list(runtime.context.hits))]}

        def worker(arg):
            arg["jobs"].append(1)
            return {"log": ["w"]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_node("worker", worker)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_conditional_edges("b", lambda s: [E.Send("worker", shared_arg) for _ in range(20)], ["worker"])
        app = g.compile()
        ctx = Ctx(user="u")
        res = app.invoke({"log": []}, context=ctx)
        return res["log"][:2], res["log"].count("w"), dataclasses.asdict(ctx), len(shared_arg["jobs"])

    differential(scenario)

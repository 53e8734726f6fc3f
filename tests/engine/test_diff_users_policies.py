"""Node policies and error handling as users write them, on both engines.

LangGraph 1.2's node-level `error_handler=` (and `set_node_defaults`), `timeout=` /
`TimeoutPolicy` with `runtime.heartbeat()`, `RetryPolicy` combined with handlers, timeouts,
checkpointers and interrupts, `CachePolicy` on graph nodes, errors raised by routers and by
`Send` targets, recursion limits met and resumed, `max_concurrency` over a `Send` fan-out.

Timeout messages carry the measured elapsed time; those are compared with the elapsed value
masked (`_err`). Parallel sync branches finish in thread order in LangGraph, so such streams
are compared per step with `steps_as_multisets`.
"""

import asyncio
import operator
import re
import threading
import time
import uuid
from typing import Annotated

from _diff import acollect, capture, collect, steps_as_multisets
from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]


def _cfg(**extra):
    return {"configurable": {"thread_id": str(uuid.uuid4())}, **extra}


def _hist(app, cfg):
    return [(s.metadata, s.next, s.values,
             [(t.name, t.path, repr(t.error), t.interrupts, t.result) for t in s.tasks],
             s.interrupts)
            for s in app.get_state_history(cfg)]


def _is_values(c):
    return isinstance(c, tuple) and c[0] == "values"


_ELAPSED = re.compile(r"elapsed: [0-9.]+s")


def _err(e):
    """An exception as a comparable tuple, with a timeout's measured elapsed time masked."""
    out = (type(e).__name__, _ELAPSED.sub("elapsed: <t>", str(e)))
    if type(e).__name__ == "NodeTimeoutError":
        out += (e.node, e.kind, e.timeout, e.run_timeout, e.idle_timeout)
    return out


def _run(fn):
    try:
        return fn()
    except Exception as e:
        return ("raises",) + _err(e)


async def _arun(fn):
    try:
        return await fn()
    except Exception as e:
        return ("raises",) + _err(e)


def _line(E, *names, fns=None, **add_kw):
    """START -> n1 -> n2 -> ... ; each node logs its name unless `fns` gives it a function."""
    fns = fns or {}
    g = E.StateGraph(S)
    for n in names:
        g.add_node(n, fns.get(n, (lambda s, n=n: {"log": [n]})), **add_kw.get(n, {}))
    g.add_edge(E.START, names[0])
    for a, b in zip(names, names[1:]):
        g.add_edge(a, b)
    return g


# ============================================================================================
# add_node(error_handler=...)
# ============================================================================================


def test_error_handler_update_replaces_the_failed_node_and_the_run_ends_there(differential):
    """a -> b -> c, b raises, its handler returns an update: the run succeeds with the
    handler's update, and c (b's successor) does not run; the updates stream names the
    handler node."""

    def scenario(E):
        calls = []

        def b(s):
            calls.append("b")
            raise ValueError("b broke")

        def handler(state, error: E.errors.NodeError):
            calls.append(("h", error.node, repr(error.error), list(state["log"])))
            return {"log": ["recovered"]}

        g = _line(E, "a", "b", "c", fns={"b": b}, b={"error_handler": handler})
        app = g.compile()
        res = app.invoke({"log": []})
        ups = collect(lambda: app.stream({"log": []}, stream_mode="updates"))
        return res, ups, calls

    differential(scenario)


def test_error_handler_command_goto_routes_to_a_fallback_node(differential):
    """The handler returns `Command(update=..., goto="fallback")`: the fallback node runs
    next, then the graph continues along the fallback's edges."""

    def scenario(E):
        def fetch(s):
            raise ConnectionError("api down")

        def on_error(state, error: E.errors.NodeError):
            return E.Command(update={"log": [f"fetch failed: {error.error}"]}, goto="fallback")

        g = E.StateGraph(S)
        g.add_node("fetch", fetch, error_handler=on_error)
        g.add_node("fallback", lambda s: {"log": ["cached answer"]})
        g.add_node("answer", lambda s: {"log": ["answer"]})
        g.add_edge(E.START, "fetch")
        g.add_edge("fetch", "answer")
        g.add_edge("fallback", "answer")
        app = g.compile()
        return app.invoke({"log": []}), collect(
            lambda: app.stream({"log": []}, stream_mode=["updates", "tasks"]))

    differential(scenario)


def test_error_handler_without_node_error_parameter_gets_just_the_state(differential):
    """A handler that takes only the state still runs; one typed `error: NodeError` under
    another parameter name is injected by its annotation."""

    def scenario(E):
        def boom(s):
            raise KeyError("missing")

        def plain(state):
            return {"log": [f"plain saw {state['log']}"]}

        def named(state, what_went_wrong: E.errors.NodeError):
            return {"log": [f"named {what_went_wrong.node} {type(what_went_wrong.error).__name__}"]}

        out = []
        for h in (plain, named):
            g = _line(E, "a", "b", fns={"b": boom}, b={"error_handler": h})
            out.append(capture(lambda: g.compile().invoke({"log": []})))
        return out

    differential(scenario)


def test_error_handler_runs_once_after_the_retry_policy_is_exhausted(differential):
    """RetryPolicy(max_attempts=3) plus an error handler: the node runs three times, then
    the handler runs once with the last error; node_attempt is seen by the node."""

    def scenario(E):
        calls = []

        def flaky(s, runtime: E.Runtime):
            calls.append(("flaky", runtime.execution_info.node_attempt))
            raise ConnectionError(f"try {len(calls)}")

        def handler(state, error: E.errors.NodeError):
            calls.append(("handler", str(error.error)))
            return {"log": ["gave up"]}

        g = _line(E, "flaky", fns={"flaky": flaky}, flaky={
            "error_handler": handler,
            "retry_policy": E.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False)})
        app = g.compile()
        return app.invoke({"log": []}), calls

    differential(scenario)


def test_error_handler_that_raises_fails_the_run_with_its_own_error(differential):
    """When the handler itself raises, the run fails with the handler's exception (handlers
    never handle themselves); history records both failures."""

    def scenario(E):
        def b(s):
            raise ValueError("original")

        def handler(state, error: E.errors.NodeError):
            raise RuntimeError(f"handler failed on {error.error}")

        g = _line(E, "a", "b", "c", fns={"b": b}, b={"error_handler": handler})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r = capture(lambda: app.invoke({"log": []}, cfg))
        ch = collect(lambda: app.stream({"log": []}, _cfg(), stream_mode="updates"))
        return r, ch, _hist(app, cfg)

    differential(scenario)


def test_error_handler_with_checkpointer_state_history_and_debug_stream(differential):
    """With a checkpointer: the handler runs in the failed node's step; history, the final
    state, and the debug stream (task paths of the handler) are the same."""

    def scenario(E):
        def b(s):
            raise ValueError("nope")

        def handler(state, error: E.errors.NodeError):
            return {"log": ["handled"]}

        g = _line(E, "a", "b", "c", fns={"b": b}, b={"error_handler": handler})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        dbg = collect(lambda: app.stream({"log": []}, cfg, stream_mode="debug"))
        dbg = [(d["type"], d["step"], d["payload"].get("name"), d["payload"].get("path"),
                d["payload"].get("result"), d["payload"].get("error"))
               for d in dbg if d["type"] in ("task", "task_result")]
        st = app.get_state(cfg)
        return dbg, (st.values, st.next, st.metadata), _hist(app, cfg)

    differential(scenario)


def test_set_node_defaults_error_handler_applies_to_every_node_and_add_node_wins(differential):
    """A default handler catches any node; a node with its own handler uses that one."""

    def scenario(E):
        def fails(name):
            def f(s):
                raise ValueError(f"{name} failed")
            return f

        def default_handler(state, error: E.errors.NodeError):
            return {"log": [f"default:{error.node}"]}

        def own(state, error: E.errors.NodeError):
            return {"log": [f"own:{error.node}"]}

        out = []
        for failing in ("a", "b"):
            g = E.StateGraph(S).set_node_defaults(error_handler=default_handler)
            g.add_node("a", fails("a") if failing == "a" else (lambda s: {"log": ["a"]}))
            g.add_node("b", fails("b") if failing == "b" else (lambda s: {"log": ["b"]}),
                       error_handler=own)
            g.add_edge(E.START, "a")
            g.add_edge("a", "b")
            out.append(capture(lambda: g.compile().invoke({"log": []})))
        return out

    differential(scenario)


def test_set_node_defaults_retry_policy_applies_to_nodes_and_handlers(differential):
    """`set_node_defaults(retry_policy=...)` retries every node (the handler too); a node's
    own retry policy overrides the default."""

    def scenario(E):
        calls = []

        def make(name, fail_times):
            def f(s):
                calls.append(name)
                if calls.count(name) <= fail_times:
                    raise ConnectionError(name)
                return {"log": [name]}
            return f

        def handler(state, error: E.errors.NodeError):
            calls.append("h")
            if calls.count("h") < 2:
                raise ConnectionError("handler hiccup")
            return {"log": [f"h:{error.node}"]}

        g = E.StateGraph(S).set_node_defaults(
            retry_policy=E.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False),
            error_handler=handler)
        g.add_node("a", make("a", 1))
        g.add_node("b", make("b", 3),
                   retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile()
        return capture(lambda: app.invoke({"log": []})), calls

    differential(scenario)


def test_error_handler_is_not_called_for_an_interrupt(differential):
    """A node that calls `interrupt()` and has an error handler: the interrupt pauses the run
    (it is not an error), the resume completes the node; the handler never runs."""

    def scenario(E):
        calls = []

        def ask(s):
            ans = E.interrupt("approve?")
            calls.append(("ask", ans))
            if ans == "no":
                raise PermissionError("rejected")
            return {"log": [f"ok:{ans}"]}

        def handler(state, error: E.errors.NodeError):
            calls.append(("h", repr(error.error)))
            return {"log": ["rejected"]}

        g = _line(E, "a", "ask", "done", fns={"ask": ask}, ask={"error_handler": handler})
        app = g.compile(checkpointer=E.InMemorySaver())
        out = []
        for answer in ("yes", "no"):
            cfg = _cfg()
            r1 = app.invoke({"log": []}, cfg)
            r2 = app.invoke(E.Command(resume=answer), cfg)
            out.append((r1, r2, app.get_state(cfg).next))
        return out, calls

    differential(scenario)


def test_error_handler_that_interrupts_then_resumes(differential):
    """The handler asks a human what to do (`interrupt`) and resumes with the answer: the
    failed node is not re-run on resume, only the handler."""

    def scenario(E):
        calls = []

        def b(s):
            calls.append("b")
            raise ValueError("bad input")

        def handler(state, error: E.errors.NodeError):
            calls.append("h")
            choice = E.interrupt({"failed": error.node, "error": str(error.error)})
            return {"log": [f"human chose {choice}"]}

        g = _line(E, "a", "b", "c", fns={"b": b}, b={"error_handler": handler})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = app.invoke({"log": []}, cfg)
        st = app.get_state(cfg)
        r2 = app.invoke(E.Command(resume="skip"), cfg)
        return r1, (st.next, st.interrupts, [(t.name, t.path) for t in st.tasks]), r2, calls, _hist(app, cfg)

    differential(scenario)


def test_error_handler_on_a_send_target_gets_the_send_payload(differential):
    """Map-reduce: one `Send` payload makes the worker raise; the worker's handler receives
    that payload as its state and the other workers' results are kept."""

    def scenario(E):
        class W(TypedDict):
            item: int

        def worker(w: W):
            if w["item"] == 2:
                raise ValueError(f"cannot process {w['item']}")
            return {"log": [w["item"] * 10]}

        def handler(w: W, error: E.errors.NodeError):
            return {"log": [f"skipped {w['item']}: {error.error}"]}

        g = E.StateGraph(S)
        g.add_node("worker", worker, error_handler=handler)
        g.add_node("reduce", lambda s: {"log": [f"reduced {len(s['log'])}"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i}) for i in (1, 2, 3)])
        g.add_edge("worker", "reduce")
        app = g.compile()
        res = app.invoke({"log": []})
        return sorted(map(str, res["log"][:-1])), res["log"][-1]

    differential(scenario)


def test_error_in_a_conditional_edge_router_goes_to_the_nodes_error_handler(differential):
    """The router after node `a` raises: is `a`'s error handler called (the router runs as
    part of `a`'s task), and what does the run return / raise without a handler?"""

    def scenario(E):
        def route(s):
            raise LookupError("no route")

        def handler(state, error: E.errors.NodeError):
            return {"log": [f"handled {error.node}: {error.error!r}"]}

        out = []
        for with_handler in (False, True):
            g = E.StateGraph(S)
            kw = {"error_handler": handler} if with_handler else {}
            g.add_node("a", lambda s: {"log": ["a"]}, **kw)
            g.add_node("b", lambda s: {"log": ["b"]})
            g.add_edge(E.START, "a")
            g.add_conditional_edges("a", route, ["b", E.END])
            app = g.compile()
            out.append(capture(lambda: app.invoke({"log": []})))
            out.append(collect(lambda: app.stream({"log": []}, stream_mode="updates")))
        return out

    differential(scenario)


def test_error_handler_on_a_subgraph_node(differential):
    """A compiled subgraph whose inner node raises, added with an error handler: the parent's
    handler gets the inner error and the parent run continues."""

    def scenario(E):
        def inner_fail(s):
            raise ValueError("inner broke")

        sub = _line(E, "s1", "s2", fns={"s2": inner_fail}).compile()

        def handler(state, error: E.errors.NodeError):
            return {"log": [f"sub failed: {error.error}"]}

        g = E.StateGraph(S)
        g.add_node("sub", sub, error_handler=handler)
        g.add_edge(E.START, "sub")
        app = g.compile()
        return app.invoke({"log": []}), collect(
            lambda: app.stream({"log": []}, stream_mode="updates", subgraphs=True))

    differential(scenario)


def test_error_handler_in_a_parallel_step_keeps_the_siblings_writes(differential):
    """Fan-out a -> (b, c); b fails and is handled; c's write is kept and the join waits for
    b, which never completes normally. The stream per step and the calls match."""

    def scenario(E):
        def b(s):
            raise ValueError("b")

        def handler(state, error: E.errors.NodeError):
            return E.Command(update={"log": ["b-handled"]}, goto="j")

        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b", b, error_handler=handler)
        g.add_node("c", lambda s: {"log": ["c"]})
        g.add_node("j", lambda s: {"log": [f"j saw {sorted(s['log'])}"]})
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        g.add_edge("c", "j")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        ch = collect(lambda: app.stream({"log": []}, cfg, stream_mode=["updates", "values"]))
        return steps_as_multisets(ch, _is_values), app.get_state(cfg).values

    differential(scenario)


def test_get_graph_with_error_handlers(differential):
    """What `get_graph()` shows for a graph with node and default error handlers."""

    def scenario(E):
        def handler(state, error: E.errors.NodeError):
            return {"log": ["h"]}

        g = _line(E, "a", "b", b={"error_handler": handler})
        g.set_node_defaults(error_handler=handler)
        gg = g.compile().get_graph()
        return sorted(gg.nodes), sorted((e.source, e.target, e.conditional) for e in gg.edges)

    differential(scenario)


async def _async_handler_graph(E, calls):
    async def b(s):
        calls.append("b")
        await asyncio.sleep(0)
        raise ValueError("async b broke")

    async def handler(state, error: E.errors.NodeError):
        calls.append(("h", error.node, str(error.error)))
        await asyncio.sleep(0)
        return E.Command(update={"log": ["async recovered"]}, goto="c")

    return _line(E, "a", "b", "c", fns={"b": b}, b={
        "error_handler": handler,
        "retry_policy": E.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False,
                                      retry_on=ValueError)})


def test_async_error_handler_with_retry_and_goto(differential):
    """Async twin: async node retried twice, async handler routing with `Command(goto)`;
    ainvoke, astream(updates, tasks) and the calls."""

    async def scenario(E):
        calls = []
        app = (await _async_handler_graph(E, calls)).compile(checkpointer=E.InMemorySaver())
        r = await app.ainvoke({"log": []}, _cfg())
        ch = await acollect(lambda: app.astream({"log": []}, _cfg(), stream_mode=["updates", "tasks"]))
        return r, ch, calls

    differential(scenario)


# ============================================================================================
# timeouts: timeout=, TimeoutPolicy, runtime.heartbeat()
# ============================================================================================


def test_async_node_timeout_raises_node_timeout_error(differential):
    """`add_node(..., timeout=0.05)` on an async node sleeping 1 s: `NodeTimeoutError` with
    the node, kind="run" and the configured timeouts; a fast node passes."""

    async def scenario(E):
        async def slow(s):
            await asyncio.sleep(1)
            return {"log": ["slow"]}

        async def fast(s):
            await asyncio.sleep(0.001)
            return {"log": ["fast"]}

        out = []
        for fn in (slow, fast):
            g = _line(E, "n", fns={"n": fn}, n={"timeout": 0.05})
            out.append(await _arun(lambda: g.compile().ainvoke({"log": []})))
        return out

    differential(scenario)


def test_timeout_error_is_retried_by_the_default_retry_policy(differential):
    """NodeTimeoutError is retryable under the default `retry_on`: a node that is slow on its
    first attempt and fast on the second succeeds."""

    async def scenario(E):
        calls = []

        async def sometimes_slow(s):
            calls.append(len(calls) + 1)
            if len(calls) == 1:
                await asyncio.sleep(1)
            return {"log": [f"attempt {len(calls)}"]}

        g = _line(E, "n", fns={"n": sometimes_slow}, n={
            "timeout": 0.05,
            "retry_policy": E.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False)})
        return await g.compile().ainvoke({"log": []}), calls

    differential(scenario)


def test_timeout_error_reaches_the_error_handler(differential):
    """A timed-out node with an error handler: the handler sees the `NodeTimeoutError`
    (kind, node, timeout) and the run continues with its update."""

    async def scenario(E):
        async def slow(s):
            await asyncio.sleep(1)
            return {"log": ["never"]}

        async def handler(state, error: E.errors.NodeError):
            e = error.error
            return {"log": [("timeout", type(e).__name__, e.node, e.kind, e.timeout)]}

        g = _line(E, "a", "slow", "c", fns={"slow": slow}, slow={
            "timeout": E.types.TimeoutPolicy(run_timeout=0.05), "error_handler": handler})
        return await g.compile().ainvoke({"log": []})

    differential(scenario)


def test_idle_timeout_refreshed_by_heartbeat(differential):
    """`TimeoutPolicy(idle_timeout=0.15, refresh_on="heartbeat")`: a node working 0.45 s
    while calling `runtime.heartbeat()` every 0.03 s finishes; the same node without
    heartbeats times out with kind="idle"."""

    async def scenario(E):
        out = []
        for beat in (True, False):
            async def work(s, runtime: E.Runtime):
                for _ in range(15):
                    await asyncio.sleep(0.03)
                    if beat:
                        runtime.heartbeat()
                return {"log": ["done"]}

            g = _line(E, "w", fns={"w": work}, w={"timeout": E.types.TimeoutPolicy(
                idle_timeout=0.15, refresh_on="heartbeat")})
            out.append(await _arun(lambda: g.compile().ainvoke({"log": []})))
        return out

    differential(scenario)


def test_run_timeout_is_not_refreshed_by_heartbeats(differential):
    """A `run_timeout` is a hard cap: heartbeats keep the idle timer alive but the run timer
    still fires (kind="run")."""

    async def scenario(E):
        async def work(s, runtime: E.Runtime):
            for _ in range(20):
                await asyncio.sleep(0.03)
                runtime.heartbeat()
            return {"log": ["done"]}

        g = _line(E, "w", fns={"w": work}, w={"timeout": E.types.TimeoutPolicy(
            run_timeout=0.2, idle_timeout=0.1, refresh_on="heartbeat")})
        return await _arun(lambda: g.compile().ainvoke({"log": []}))

    differential(scenario)


def test_idle_timeout_auto_refreshed_by_stream_writer_progress(differential):
    """`refresh_on="auto"`: custom stream writes count as progress; the same node under
    `refresh_on="heartbeat"` times out. The custom chunks streamed before are the same."""

    async def scenario(E):
        out = []
        for refresh in ("auto", "heartbeat"):
            async def work(s):
                w = E.get_stream_writer()
                for i in range(10):
                    await asyncio.sleep(0.03)
                    w({"progress": i})
                return {"log": ["done"]}

            g = _line(E, "w", fns={"w": work}, w={"timeout": E.types.TimeoutPolicy(
                idle_timeout=0.12, refresh_on=refresh)})
            app = g.compile()
            chunks = []

            async def go():
                async for c in app.astream({"log": []}, stream_mode=["custom", "updates"]):
                    chunks.append(c)

            r = await _arun(go)
            # how many chunks precede a timeout depends on timing: only that some did
            out.append((r, chunks if r is None else len(chunks) >= 2))
        return out

    differential(scenario)


def test_timeout_on_a_sync_node_is_rejected(differential):
    """`timeout=` on a sync node: LangGraph refuses it (sync code cannot be cancelled); when
    (add_node, compile or run) and with which message."""

    def scenario(E):
        out = []
        g = E.StateGraph(S)
        out.append(capture(lambda: g.add_node("n", lambda s: {"log": ["n"]}, timeout=1.0) and "added"))
        g.add_edge(E.START, "n")
        app = capture(lambda: g.compile())
        out.append(type(app).__name__ if not isinstance(app, tuple) else app)
        if not isinstance(app, tuple):
            out.append(capture(lambda: app.invoke({"log": []})))
        return out

    differential(scenario)


def test_timeout_policy_validation(differential):
    """`TimeoutPolicy` / `timeout=` values users get wrong: zero, negative, a timedelta,
    bad `refresh_on`, neither timeout set."""

    def scenario(E):
        from datetime import timedelta

        TP = E.types.TimeoutPolicy
        out = []
        for v in (0, -1, 0.5, timedelta(seconds=2), TP(idle_timeout=timedelta(milliseconds=250)),
                  TP(), TP(run_timeout=1, refresh_on="never")):
            out.append(capture(lambda v=v: TP.coerce(v)))

        async def n(s):
            return {"log": ["n"]}

        for v in (0, -2, "3"):
            out.append(capture(lambda v=v: E.StateGraph(S).add_node("n", n, timeout=v) and "ok"))
        return out

    # lgnb names the class and the value in the message, LangGraph's text kept
    differential(scenario, exc="extends")


def test_set_node_defaults_timeout_applies_to_async_nodes(differential):
    """`set_node_defaults(timeout=0.05)`: the slow async node times out, a node with its own
    longer timeout does not."""

    async def scenario(E):
        async def slowish(s):
            await asyncio.sleep(0.15)
            return {"log": ["slowish"]}

        out = []
        for own in (None, 1.0):
            g = E.StateGraph(S).set_node_defaults(timeout=0.05)
            kw = {"timeout": own} if own else {}
            g.add_node("n", slowish, **kw)
            g.add_edge(E.START, "n")
            out.append(await _arun(lambda: g.compile().ainvoke({"log": []})))
        return out

    differential(scenario)


def test_timeout_in_a_parallel_step_with_checkpointer_then_resume(differential):
    """Two async branches, one times out (no retry): the run fails, the sibling's write is
    saved; resuming after the slow node is fixed runs only the failed branch."""

    async def scenario(E):
        calls = []
        slow_mode = {"on": True}

        async def fast(s):
            calls.append("fast")
            return {"log": ["fast"]}

        async def slow(s):
            calls.append("slow")
            if slow_mode["on"]:
                await asyncio.sleep(1)
            return {"log": ["slow"]}

        g = E.StateGraph(S)
        g.add_node("fast", fast)
        g.add_node("slow", slow, timeout=0.05)
        g.add_node("j", lambda s: {"log": ["j"]})
        g.add_edge(E.START, "fast")
        g.add_edge(E.START, "slow")
        g.add_edge(["fast", "slow"], "j")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = await _arun(lambda: app.ainvoke({"log": []}, cfg))
        st = await app.aget_state(cfg)
        slow_mode["on"] = False
        r2 = await app.ainvoke(None, cfg)
        return r1, (st.next, [(t.name, _err(t.error) if t.error else None) for t in st.tasks]), r2, calls

    differential(scenario)


# ============================================================================================
# retry policies
# ============================================================================================


def test_retry_on_tuple_of_classes_and_subclasses(differential):
    """`retry_on=(ConnectionError, KeyError)` retries subclasses too (ConnectionResetError),
    not others (ValueError)."""

    def scenario(E):
        out = []
        for exc in (ConnectionResetError, KeyError, ValueError):
            calls = []

            def n(s, exc=exc, calls=calls):
                calls.append(1)
                if len(calls) < 3:
                    raise exc("x")
                return {"log": [len(calls)]}

            g = _line(E, "n", fns={"n": n}, n={"retry_policy": E.RetryPolicy(
                max_attempts=3, initial_interval=0.001, jitter=False,
                retry_on=(ConnectionError, KeyError))})
            out.append((exc.__name__, capture(lambda: g.compile().invoke({"log": []})), len(calls)))
        return out

    differential(scenario)


def test_retry_attempts_in_tasks_and_debug_streams_with_checkpointer(differential):
    """A node failing twice then succeeding, with a checkpointer: what the `tasks` and
    `checkpoints` streams show (one task start, one result), and the history."""

    def scenario(E):
        calls = []

        def flaky(s, runtime: E.Runtime):
            calls.append(runtime.execution_info.node_attempt)
            if len(calls) < 3:
                raise TimeoutError("slow upstream")
            return {"log": [f"ok after {len(calls)}"]}

        g = _line(E, "a", "flaky", fns={"flaky": flaky}, flaky={"retry_policy": E.RetryPolicy(
            max_attempts=5, initial_interval=0.001, jitter=False, retry_on=TimeoutError)})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        ch = collect(lambda: app.stream({"log": []}, cfg, stream_mode=["tasks", "updates"]))
        return ch, calls, _hist(app, cfg)

    differential(scenario)


def test_retry_exhausted_with_checkpointer_then_resume_reruns_only_the_failed_node(differential):
    """Retries exhausted: the error reaches the caller, history records the error on the
    task; fixing the cause and invoking with None re-runs only that node."""

    def scenario(E):
        calls = []
        broken = {"on": True}

        def flaky(s):
            calls.append("flaky")
            if broken["on"]:
                raise ConnectionError("db down")
            return {"log": ["flaky"]}

        def first(s):
            calls.append("first")
            return {"log": ["first"]}

        g = _line(E, "first", "flaky", "last", fns={"first": first, "flaky": flaky}, flaky={
            "retry_policy": E.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False)})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = capture(lambda: app.invoke({"log": []}, cfg))
        h1 = _hist(app, cfg)
        broken["on"] = False
        r2 = app.invoke(None, cfg)
        return r1, h1, r2, calls

    differential(scenario)


def test_interrupt_in_a_retried_node_pauses_once_and_the_retry_reuses_the_answer(differential):
    """A node with RetryPolicy(retry_on=Exception) calling `interrupt()`: the interrupt
    pauses once (GraphInterrupt is not retried); after resume an error is retried."""

    def scenario(E):
        calls = []

        def ask(s):
            calls.append("ask")
            ans = E.interrupt("value?")
            if calls.count("ask") < 3:
                raise RuntimeError("transient")
            return {"log": [ans]}

        g = _line(E, "ask", fns={"ask": ask}, ask={"retry_policy": E.RetryPolicy(
            max_attempts=5, initial_interval=0.001, jitter=False, retry_on=Exception)})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = app.invoke({"log": []}, cfg)
        n1 = list(calls)
        r2 = app.invoke(E.Command(resume="42"), cfg)
        return r1, n1, r2, calls

    differential(scenario)


def test_retry_policy_on_a_send_worker_retries_only_the_failing_payload(differential):
    """Send fan-out to a worker with a RetryPolicy; the payload 2 fails once: only it is
    re-run, every payload's result reaches the reducer."""

    def scenario(E):
        calls = []
        lock = threading.Lock()

        class W(TypedDict):
            item: int

        def worker(w: W):
            with lock:
                calls.append(w["item"])
                n = calls.count(w["item"])
            if w["item"] == 2 and n == 1:
                raise ConnectionError("flaky 2")
            return {"log": [w["item"]]}

        g = E.StateGraph(S)
        g.add_node("worker", worker, retry_policy=E.RetryPolicy(
            max_attempts=3, initial_interval=0.001, jitter=False))
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i}) for i in (1, 2, 3)])
        res = g.compile().invoke({"log": []})
        return sorted(res["log"]), sorted(calls)

    differential(scenario)


# ============================================================================================
# cache policies on graph nodes
# ============================================================================================


def _cache():
    from langgraph.cache.memory import InMemoryCache

    return InMemoryCache()


def test_cached_node_updates_stream_marks_cache_hits(differential):
    """A node with `CachePolicy()`: the second run's updates chunk carries LangGraph's
    cache-hit metadata; the downstream node still runs."""

    def scenario(E):
        runs = []

        def expensive(s):
            runs.append("expensive")
            return {"log": ["computed"]}

        g = _line(E, "expensive", "after", fns={"expensive": expensive},
                  expensive={"cache_policy": E.CachePolicy()})
        app = g.compile(cache=_cache())
        a = collect(lambda: app.stream({"log": []}, stream_mode="updates"))
        b = collect(lambda: app.stream({"log": []}, stream_mode="updates"))
        c = collect(lambda: app.stream({"log": []}, stream_mode=["tasks", "debug"]))
        c = [x if x[0] != "debug" else (x[0], x[1]["type"], x[1]["payload"].get("name"))
             for x in c]
        return a, b, c, runs

    differential(scenario)


def test_cache_key_func_and_ttl_expiry(differential):
    """`CachePolicy(key_func=..., ttl=1)`: inputs with equal keys hit; after the ttl the
    node runs again."""

    def scenario(E):
        class Q(TypedDict):
            q: str
            a: str

        runs = []

        def answer(s):
            runs.append(s["q"])
            return {"a": s["q"].strip().lower() + "!"}

        g = E.StateGraph(Q)
        g.add_node("answer", answer, cache_policy=E.CachePolicy(
            key_func=lambda s: s["q"].strip().lower(), ttl=1))
        g.add_edge(E.START, "answer")
        app = g.compile(cache=_cache())
        out = [app.invoke({"q": "Hello"}), app.invoke({"q": "  HELLO "}), app.invoke({"q": "bye"})]
        time.sleep(1.2)
        out.append(app.invoke({"q": "hello"}))
        return out, runs

    differential(scenario)


def test_clear_cache_for_some_nodes_only(differential):
    """Two cached nodes; `clear_cache(nodes=["a"])` clears only `a`'s entries."""

    def scenario(E):
        runs = []

        def mk(n):
            def f(s):
                runs.append(n)
                return {"log": [n]}
            return f

        g = _line(E, "a", "b", fns={"a": mk("a"), "b": mk("b")},
                  a={"cache_policy": E.CachePolicy()}, b={"cache_policy": E.CachePolicy()})
        app = g.compile(cache=_cache())
        r1 = app.invoke({"log": []})
        app.clear_cache(nodes=["a"])
        r2 = app.invoke({"log": []})
        return r1, r2, runs

    differential(scenario)


def test_set_node_defaults_cache_policy_caches_every_node_but_not_handlers(differential):
    """`set_node_defaults(cache_policy=...)` caches regular nodes; the error handler of a
    failing node is not cached (it runs every time)."""

    def scenario(E):
        runs = []

        def ok(s):
            runs.append("ok")
            return {"log": ["ok"]}

        def bad(s):
            runs.append("bad")
            raise ValueError("bad")

        def handler(state, error: E.errors.NodeError):
            runs.append("h")
            return {"log": ["h"]}

        g = E.StateGraph(S).set_node_defaults(cache_policy=E.CachePolicy())
        g.add_node("ok", ok)
        g.add_node("bad", bad, error_handler=handler)
        g.add_edge(E.START, "ok")
        g.add_edge("ok", "bad")
        app = g.compile(cache=_cache())
        return [app.invoke({"log": []}) for _ in range(2)], runs

    differential(scenario)


def test_cached_send_workers_hit_per_payload(differential):
    """Send fan-out to a cached worker: the second run with one new payload only runs it."""

    def scenario(E):
        runs = []
        lock = threading.Lock()

        class W(TypedDict):
            item: int

        def worker(w: W):
            with lock:
                runs.append(w["item"])
            return {"log": [w["item"] * 2]}

        items = {"v": [1, 2]}
        g = E.StateGraph(S)
        g.add_node("worker", worker, cache_policy=E.CachePolicy())
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i}) for i in items["v"]])
        app = g.compile(cache=_cache())
        r1 = sorted(app.invoke({"log": []})["log"])
        items["v"] = [1, 2, 3]
        r2 = sorted(app.invoke({"log": []})["log"])
        return r1, r2, sorted(runs)

    differential(scenario)


# ============================================================================================
# recursion limit, managed values, max_concurrency
# ============================================================================================


def test_recursion_error_then_resume_with_a_higher_limit(differential):
    """A loop stops at `recursion_limit=3` with `GraphRecursionError`; invoking again with
    None and a higher limit continues from the saved checkpoint until the loop ends."""

    def scenario(E):
        class C(TypedDict):
            n: int

        g = E.StateGraph(C)
        g.add_node("inc", lambda s: {"n": s["n"] + 1})
        g.add_edge(E.START, "inc")
        g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 6 else E.END, ["inc", E.END])
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = capture(lambda: app.invoke({"n": 0}, {**cfg, "recursion_limit": 3}))
        st = app.get_state(cfg)
        r2 = capture(lambda: app.invoke(None, {**cfg, "recursion_limit": 10}))
        return r1, (st.values, st.next), r2

    differential(scenario)


def test_remaining_steps_lets_an_agent_stop_gracefully_before_the_limit(differential):
    """The documented pattern: a router checks `remaining_steps` and ends with a final
    message instead of hitting GraphRecursionError; IsLastStep in the same state."""

    def scenario(E):
        class A(TypedDict):
            log: Annotated[list, operator.add]
            remaining_steps: E.RemainingSteps
            is_last_step: E.IsLastStep

        def agent(s):
            if s["remaining_steps"] <= 2:
                return {"log": [("stop", s["remaining_steps"], s["is_last_step"])]}
            return {"log": [("think", s["remaining_steps"], s["is_last_step"])]}

        def route(s):
            return E.END if s["log"][-1][0] == "stop" else "tool"

        g = E.StateGraph(A)
        g.add_node("agent", agent)
        g.add_node("tool", lambda s: {"log": [("tool", s["remaining_steps"])]})
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", route, ["tool", E.END])
        g.add_edge("tool", "agent")
        app = g.compile()
        return [capture(lambda lim=lim: app.invoke({"log": []}, {"recursion_limit": lim}))
                for lim in (3, 4, 7)]

    differential(scenario)


def test_max_concurrency_caps_a_sync_send_fan_out(differential):
    """`max_concurrency=2` over six `Send` tasks of a sync node that sleeps: at most two
    run at once (peak observed with a counter), all results arrive."""

    def scenario(E):
        lock = threading.Lock()
        state = {"now": 0, "peak": 0}

        class W(TypedDict):
            item: int

        def worker(w: W):
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            time.sleep(0.05)
            with lock:
                state["now"] -= 1
            return {"log": [w["item"]]}

        g = E.StateGraph(S)
        g.add_node("worker", worker)
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i}) for i in range(6)])
        res = g.compile().invoke({"log": []}, {"max_concurrency": 2})
        return sorted(res["log"]), state["peak"]

    differential(scenario)


def test_defer_node_with_error_handler_in_map_reduce(differential):
    """A deferred summarizer after a Send fan-out whose workers may fail and are handled:
    the summary runs once, after every worker and handler."""

    def scenario(E):
        class W(TypedDict):
            item: int

        def worker(w: W):
            if w["item"] % 2:
                raise ValueError(f"odd {w['item']}")
            return {"log": [f"w{w['item']}"]}

        def handler(w: W, error: E.errors.NodeError):
            return {"log": [f"h{w['item']}"]}

        g = E.StateGraph(S)
        g.add_node("worker", worker, error_handler=handler)
        g.add_node("summary", lambda s: {"log": [f"summary of {sorted(s['log'])}"]}, defer=True)
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i}) for i in range(4)])
        g.add_edge("worker", "summary")
        res = g.compile().invoke({"log": []})
        return sorted(res["log"][:-1]), res["log"][-1]

    differential(scenario)


# ============================================================================================
# more: default retry_on for HTTP errors, backoff, handlers on resume, cache + routing
# ============================================================================================


def test_default_retry_on_for_http_errors_users_raise(differential):
    """The default `retry_on` with what `resp.raise_for_status()` raises (requests, httpx;
    404 and 503), built-in TimeoutError and a custom exception: which ones are retried."""

    def scenario(E):
        import httpx
        import requests

        def req_err(code):
            r = requests.Response()
            r.status_code = code
            r.url = "http://api.example/x"
            return requests.HTTPError(f"{code} Error", response=r)

        def httpx_err(code):
            req = httpx.Request("GET", "http://api.example/x")
            return httpx.HTTPStatusError(f"{code} Error", request=req,
                                         response=httpx.Response(code, request=req))

        class QuotaExceeded(Exception):
            pass

        makers = {
            "requests 404": lambda: req_err(404), "requests 429": lambda: req_err(429),
            "requests 503": lambda: req_err(503),
            "requests no response": lambda: requests.HTTPError("boom"),
            "httpx 404": lambda: httpx_err(404), "httpx 429": lambda: httpx_err(429),
            "httpx 503": lambda: httpx_err(503),
            "TimeoutError": lambda: TimeoutError("t"), "QuotaExceeded": lambda: QuotaExceeded("q"),
            "requests ConnectionError": lambda: requests.ConnectionError("c"),
        }
        out = {}
        for label, make in makers.items():
            calls = []

            def n(s, make=make, calls=calls):
                calls.append(1)
                if len(calls) < 2:
                    raise make()
                return {"log": ["ok"]}

            g = _line(E, "n", fns={"n": n}, n={"retry_policy": E.RetryPolicy(
                max_attempts=2, initial_interval=0.001, jitter=False)})
            r = capture(lambda: g.compile().invoke({"log": []}))
            out[label] = (r if r == {"log": ["ok"]} else r[1], len(calls))
        return out

    differential(scenario)


def test_retry_backoff_intervals_between_attempts(differential):
    """`RetryPolicy(initial_interval, backoff_factor, max_interval, jitter=False)`: the
    sleeps between attempts grow by the factor and are capped (time.sleep observed)."""

    def scenario(E):
        slept = []
        real_sleep = time.sleep
        node_threads = set()

        def fake_sleep(x):
            # `time.sleep` is patched process-wide: only the retrying thread's sleeps count
            # (a pool or view thread left by an earlier test may sleep meanwhile)
            if threading.get_ident() in node_threads:
                slept.append(round(x, 6))
            real_sleep(0)

        def n(s):
            node_threads.add(threading.get_ident())
            raise ConnectionError("down")

        g = _line(E, "n", fns={"n": n}, n={"retry_policy": E.RetryPolicy(
            initial_interval=0.01, backoff_factor=3.0, max_interval=0.05, max_attempts=5,
            jitter=False)})
        app = g.compile()
        time.sleep = fake_sleep
        try:
            r = capture(lambda: app.invoke({"log": []}))
        finally:
            time.sleep = real_sleep
        return r, slept

    ref = differential(scenario)
    assert ref[1] == [0.01, 0.03, 0.05, 0.05]  # grown by the factor, then capped


def test_async_interrupt_inside_a_retried_node_is_answered_on_every_attempt(differential):
    """Async twin: after `Command(resume=...)` the node fails once and is retried; the
    retried attempt's `interrupt()` returns the same answer instead of pausing again."""

    async def scenario(E):
        calls = []

        async def ask(s):
            calls.append("ask")
            ans = E.interrupt("value?")
            if calls.count("ask") == 2:
                raise ConnectionError("transient")
            return {"log": [ans]}

        g = _line(E, "ask", "after", fns={"ask": ask}, ask={"retry_policy": E.RetryPolicy(
            max_attempts=3, initial_interval=0.001, jitter=False)})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = await app.ainvoke({"log": []}, cfg)
        r2 = await app.ainvoke(E.Command(resume="42"), cfg)
        return r1, r2, calls, (await app.aget_state(cfg)).next

    differential(scenario)


def test_two_interrupts_in_a_retried_node_keep_both_answers(differential):
    """A node asking two questions and failing after the second answer: the retry
    reuses both answers (no third pause)."""

    def scenario(E):
        calls = []

        def form(s):
            calls.append("form")
            name = E.interrupt("name?")
            age = E.interrupt("age?")
            if calls.count("form") == 3:
                raise ConnectionError("save failed")
            return {"log": [f"{name}:{age}"]}

        g = _line(E, "form", fns={"form": form}, form={"retry_policy": E.RetryPolicy(
            max_attempts=2, initial_interval=0.001, jitter=False)})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        out = [app.invoke({"log": []}, cfg), app.invoke(E.Command(resume="ann"), cfg),
               capture(lambda: app.invoke(E.Command(resume="33"), cfg))]
        return out, calls, app.get_state(cfg).next

    differential(scenario)


def test_failed_error_handler_is_rerun_on_resume_not_the_failed_node(differential):
    """With a checkpointer, the handler itself fails; after fixing it, `invoke(None)`
    re-runs the handler (the original node's failure stays handled) and the run ends
    with its update."""

    def scenario(E):
        calls = []
        handler_broken = {"on": True}

        def b(s):
            calls.append("b")
            raise ValueError("b broke")

        def handler(state, error: E.errors.NodeError):
            calls.append("h")
            if handler_broken["on"]:
                raise RuntimeError("handler broke")
            return E.Command(update={"log": [f"handled {error.error}"]}, goto="c")

        g = _line(E, "a", "b", "c", fns={"b": b}, b={"error_handler": handler})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = capture(lambda: app.invoke({"log": []}, cfg))
        st = app.get_state(cfg)
        handler_broken["on"] = False
        r2 = capture(lambda: app.invoke(None, cfg))
        return r1, (st.next, [(t.name, repr(t.error)) for t in st.tasks]), r2, calls

    differential(scenario)


def test_error_handler_returns_none_end_or_an_invalid_update(differential):
    """What happens when the handler returns None, `Command(goto=END)`, or an update for a
    key the state does not have."""

    def scenario(E):
        def b(s):
            raise ValueError("b")

        handlers = {
            "none": lambda state: None,
            "end": lambda state: E.Command(update={"log": ["bye"]}, goto=E.END),
            "bad key": lambda state: {"nope": 1},
        }
        out = {}
        for label, h in handlers.items():
            g = _line(E, "a", "b", "c", fns={"b": b}, b={"error_handler": h})
            app = g.compile()
            out[label] = (capture(lambda: app.invoke({"log": []})),
                          collect(lambda: app.stream({"log": []}, stream_mode="updates")))
        return out

    differential(scenario)


def test_error_handler_sees_its_own_config_metadata_and_the_errors_notes(differential):
    """Inside the handler: `get_config()` metadata (node name, triggers, path, step), the
    attempt number, and the `__notes__` LangGraph adds to the failed node's exception."""

    def scenario(E):
        seen = {}

        def b(s):
            raise ValueError("b broke")

        def handler(state, error: E.errors.NodeError, runtime: E.Runtime):
            md = E.get_config()["metadata"]
            seen["md"] = {k: md.get(k) for k in ("langgraph_node", "langgraph_triggers",
                                                 "langgraph_path", "langgraph_step")}
            seen["attempt"] = runtime.execution_info.node_attempt
            seen["notes"] = [re.sub(r"id '[^']+'", "id <x>", n)
                             for n in getattr(error.error, "__notes__", [])]
            return {"log": ["h"]}

        g = _line(E, "a", "b", fns={"b": b}, b={"error_handler": handler})
        r = g.compile(checkpointer=E.InMemorySaver()).invoke({"log": []}, _cfg())
        return r, seen

    differential(scenario)


def test_error_handler_fans_out_with_send_to_retry_workers(differential):
    """The handler of a batch node splits the failed batch and sends each item to a worker
    (`Command(goto=[Send(...)])`)."""

    def scenario(E):
        class B(TypedDict):
            log: Annotated[list, operator.add]
            items: list

        def batch(s):
            raise OverflowError(f"batch of {len(s['items'])} too big")

        def split(state, error: E.errors.NodeError):
            return E.Command(update={"log": [str(error.error)]},
                             goto=[E.Send("one", {"items": [i]}) for i in state["items"]])

        g = E.StateGraph(B)
        g.add_node("batch", batch, error_handler=split)
        g.add_node("one", lambda s: {"log": [f"one:{s['items'][0]}"]})
        g.add_edge(E.START, "batch")
        r = g.compile().invoke({"log": [], "items": [3, 1, 2]})
        return r["log"][0], sorted(r["log"][1:])

    differential(scenario)


def test_cached_node_replays_its_command_goto_and_router_choice(differential):
    """A cached node that returns `Command(goto=...)` and one followed by a router: on a
    cache hit the same next node runs (the routing is replayed with the writes)."""

    def scenario(E):
        runs = []

        class R(TypedDict):
            log: Annotated[list, operator.add]
            x: int

        def decide(s):
            runs.append("decide")
            return E.Command(update={"log": ["decide"]}, goto="big" if s["x"] > 5 else "small")

        def score(s):
            runs.append("score")
            return {"log": ["score"]}

        g = E.StateGraph(R)
        g.add_node("decide", decide, cache_policy=E.CachePolicy(), destinations=("big", "small"))
        g.add_node("big", lambda s: {"log": ["big"]})
        g.add_node("small", score, cache_policy=E.CachePolicy())
        g.add_node("done", lambda s: {"log": ["done"]})
        g.add_edge(E.START, "decide")
        g.add_conditional_edges("small", lambda s: "done" if s["x"] < 3 else E.END, ["done", E.END])
        app = g.compile(cache=_cache())
        out = [app.invoke({"log": [], "x": x}) for x in (1, 1, 9, 9, 4)]
        return out, runs

    differential(scenario)


def test_a_failing_cached_node_is_not_cached(differential):
    """A cached node that raises: the error is not cached, the next run calls it again and
    its success is cached from then on."""

    def scenario(E):
        runs = []

        def flaky(s):
            runs.append("flaky")
            if len(runs) == 1:
                raise ValueError("first call fails")
            return {"log": ["ok"]}

        g = _line(E, "flaky", fns={"flaky": flaky}, flaky={"cache_policy": E.CachePolicy()})
        app = g.compile(cache=_cache())
        return [capture(lambda: app.invoke({"log": []})) for _ in range(3)], runs

    differential(scenario)


def test_cache_hit_with_checkpointer_history_and_tasks(differential):
    """A cache hit under a checkpointer: history and the final state are the same as a
    real run's, the tasks stream shows the task."""

    def scenario(E):
        runs = []

        def expensive(s):
            runs.append(1)
            return {"log": ["computed"]}

        g = _line(E, "a", "expensive", fns={"expensive": expensive},
                  expensive={"cache_policy": E.CachePolicy()})
        app = g.compile(checkpointer=E.InMemorySaver(), cache=_cache())
        app.invoke({"log": []}, _cfg())
        cfg = _cfg()
        ch = collect(lambda: app.stream({"log": []}, cfg, stream_mode=["tasks", "updates"]))
        return ch, _hist(app, cfg), len(runs)

    differential(scenario)


def test_timeout_on_a_subgraph_node(differential):
    """`timeout=` on a node that is a compiled async subgraph: the whole subgraph call is
    limited; NodeTimeoutError names the parent's node."""

    async def scenario(E):
        async def inner(s):
            await asyncio.sleep(1)
            return {"log": ["inner"]}

        sub = _line(E, "inner", fns={"inner": inner}).compile()
        g = E.StateGraph(S)
        g.add_node("sub", sub, timeout=0.05)
        g.add_edge(E.START, "sub")
        app = g.compile()
        chunks = []

        async def go():
            async for c in app.astream({"log": []}, stream_mode="updates", subgraphs=True):
                chunks.append(c)

        return await _arun(go), chunks

    differential(scenario)


def test_set_node_defaults_timeout_with_sync_nodes(differential):
    """A default `timeout` in a graph that has sync nodes: compile or run refuses it?"""

    def scenario(E):
        g = E.StateGraph(S).set_node_defaults(timeout=1.0)
        g.add_node("n", lambda s: {"log": ["n"]})
        g.add_edge(E.START, "n")
        app = capture(lambda: g.compile())
        if isinstance(app, tuple):
            return app
        return capture(lambda: app.invoke({"log": []}))

    differential(scenario)


def test_idle_timeout_auto_refreshed_by_child_runnable_callbacks(differential):
    """`refresh_on="auto"` counts callback events of runnables the node calls (e.g. a chain
    step) as progress; under `refresh_on="heartbeat"` they do not."""

    async def scenario(E):
        from langchain_core.runnables import RunnableLambda

        async def step(x):
            await asyncio.sleep(0.04)
            return x + 1

        chain_step = RunnableLambda(step)
        out = []
        for refresh in ("auto", "heartbeat"):
            async def work(s):
                x = 0
                for _ in range(8):
                    x = await chain_step.ainvoke(x)
                return {"log": [x]}

            g = _line(E, "w", fns={"w": work}, w={"timeout": E.types.TimeoutPolicy(
                idle_timeout=0.15, refresh_on=refresh)})
            out.append(await _arun(lambda: g.compile().ainvoke({"log": []})))
        return out

    differential(scenario)


def test_timeout_exhausting_retries_then_handled(differential):
    """timeout + RetryPolicy(max_attempts=2) + error handler: two timed-out attempts, then
    the handler sees the last NodeTimeoutError."""

    async def scenario(E):
        calls = []

        async def slow(s, runtime: E.Runtime):
            calls.append(runtime.execution_info.node_attempt)
            await asyncio.sleep(1)
            return {"log": ["never"]}

        async def handler(state, error: E.errors.NodeError):
            return {"log": [("handled", type(error.error).__name__, error.error.kind)]}

        g = _line(E, "slow", fns={"slow": slow}, slow={
            "timeout": 0.05, "error_handler": handler,
            "retry_policy": E.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False)})
        return await g.compile().ainvoke({"log": []}), calls

    differential(scenario)


def test_set_node_defaults_are_not_inherited_by_a_subgraph(differential):
    """The parent's default error handler and retry policy do not reach the nodes of a
    subgraph built with its own builder: they apply to the subgraph node as a whole (the
    subgraph is re-run by the parent's retry, then the parent's default handler runs)."""

    def scenario(E):
        calls = []

        def inner(s):
            calls.append("inner")
            raise ConnectionError("inner down")

        sub = _line(E, "inner", fns={"inner": inner}).compile()

        def handler(state, error: E.errors.NodeError):
            calls.append(("h", error.node))
            return {"log": [f"default handled {error.node}"]}

        g = E.StateGraph(S).set_node_defaults(
            error_handler=handler,
            retry_policy=E.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False))
        g.add_node("sub", sub)
        g.add_edge(E.START, "sub")
        return g.compile().invoke({"log": []}), calls

    differential(scenario)


def test_error_handler_inside_a_subgraph_with_checkpointer(differential):
    """The error handler belongs to a subgraph node; it interrupts to ask a human. The
    parent pauses, `get_state(subgraphs=True)` shows the handler's pending task, the
    resume finishes the subgraph and the parent."""

    def scenario(E):
        def inner(s):
            raise ValueError("inner failed")

        def handler(state, error: E.errors.NodeError):
            ans = E.interrupt(f"{error.node} failed, retry?")
            return {"log": [f"answer {ans}"]}

        sub = _line(E, "inner", "inner_after", fns={"inner": inner},
                    inner={"error_handler": handler}).compile()
        g = _line(E, "pre", "sub", "post", fns={"sub": sub})
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        r1 = app.invoke({"log": []}, cfg)
        st = app.get_state(cfg, subgraphs=True)
        sub_st = st.tasks[0].state if st.tasks else None
        r2 = app.invoke(E.Command(resume="no"), cfg)
        return r1, st.next, [(t.name, t.interrupts) for t in st.tasks], \
            (sub_st.next, [(t.name, t.path) for t in sub_st.tasks]) if sub_st else None, r2

    differential(scenario)


def test_error_handler_of_a_node_with_an_input_schema(differential):
    """A node declared with its own `input_schema`: its handler gets the same (narrowed)
    input as the node."""

    def scenario(E):
        class Full(TypedDict):
            log: Annotated[list, operator.add]
            secret: str
            query: str

        class QueryOnly(TypedDict):
            query: str

        seen = []

        def search(s: QueryOnly):
            seen.append(("node", sorted(s)))
            raise ConnectionError("search down")

        def handler(s, error: E.errors.NodeError):
            seen.append(("handler", sorted(s)))
            return {"log": [f"no results for {s['query']}"]}

        g = E.StateGraph(Full)
        g.add_node("search", search, input_schema=QueryOnly, error_handler=handler)
        g.add_edge(E.START, "search")
        return g.compile().invoke({"log": [], "secret": "s", "query": "q"}), seen

    differential(scenario)


def test_each_retry_is_logged_at_info_with_the_task_the_wait_and_the_error(differential):
    """A node retried after a `ConnectionError`: one INFO record per retry, worded as
    LangGraph words it (the task, the wait, the attempt, the error), with its traceback."""
    import logging

    class Records(logging.Handler):
        def __init__(self):
            super().__init__(logging.INFO)
            self.got = []

        def emit(self, record):
            self.got.append((record.levelname, record.getMessage(), record.exc_info is not None))

    def scenario(E):
        calls = []

        class N(TypedDict):
            n: int

        def flaky(state):
            calls.append(1)
            if len(calls) < 3:
                raise ConnectionError("reset by peer")
            return {"n": len(calls)}

        g = E.StateGraph(N)
        g.add_node("f", flaky, retry_policy=E.RetryPolicy(initial_interval=0.01, backoff_factor=2, jitter=False))
        g.add_edge(E.START, "f")
        handler = Records()
        root = logging.getLogger()
        root.addHandler(handler)
        before = root.level
        root.setLevel(logging.INFO)
        try:
            out = g.compile().invoke({"n": 0})
        finally:
            root.removeHandler(handler)
            root.setLevel(before)
        return out, [r for r in handler.got if r[1].startswith("Retrying task")]

    differential(scenario, expect=({"n": 3}, [
        ("INFO", "Retrying task f after 0.01 seconds (attempt 1) after ConnectionError reset by peer", True),
        ("INFO", "Retrying task f after 0.02 seconds (attempt 2) after ConnectionError reset by peer", True)]))


def _handled_then_next(E, fail, handler, after):
    """START -> a -> b, `fail` as `a` with `handler` as its error handler, `after` as `b`."""
    g = E.StateGraph(S)
    g.add_node("a", fail, error_handler=handler)
    g.add_node("b", after)
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    return g.compile()


def test_a_stream_stopped_at_a_failed_tasks_event_runs_no_error_handler_after_it(differential):
    """A consumer of `stream(stream_mode="tasks")` that stops at the result of a task that
    failed: does the node's error handler (same step) still run, and does the node after
    it? On LangGraph the handler runs (it belongs to the step the consumer stopped in); the
    next step does not. A plain stream and a live one (`custom` too: tasks in threads)."""

    def scenario(E):
        out = []
        for stop in (True, False):
            ran: list[str] = []

            def fail(s):
                ran.append("a")
                raise ValueError("boom")

            def handler(state, error: E.errors.NodeError):
                ran.append("handler")
                return {"log": [f"handled {error.node}"]}

            def after(s):
                ran.append("b")
                return {"log": ["b"]}

            app = _handled_then_next(E, fail, handler, after)
            for modes in ("tasks", ["tasks", "custom"]):  # plain, and live (a thread per task)
                ran.clear()
                seen = []
                for chunk in app.stream({"log": []}, stream_mode=modes):
                    if isinstance(modes, list):
                        chunk = chunk[1]
                    seen.append({k: v for k, v in chunk.items() if k in ("name", "error", "result")})
                    if stop and chunk.get("error"):
                        break
                out.append((stop, modes, seen, list(ran)))
        return out

    differential(scenario)


def test_an_astream_stopped_at_a_failed_tasks_event_runs_no_error_handler_after_it(differential):
    """`astream`'s side of the test above (async nodes)."""

    async def scenario(E):
        out = []
        for stop in (True, False):
            ran: list[str] = []

            async def fail(s):
                ran.append("a")
                raise ValueError("boom")

            async def handler(state, error: E.errors.NodeError):
                ran.append("handler")
                return {"log": [f"handled {error.node}"]}

            async def after(s):
                ran.append("b")
                return {"log": ["b"]}

            app = _handled_then_next(E, fail, handler, after)
            seen = []
            stream = app.astream({"log": []}, stream_mode="tasks")
            async for chunk in stream:
                seen.append({k: v for k, v in chunk.items() if k in ("name", "error", "result")})
                if stop and chunk.get("error"):
                    break
            await stream.aclose()
            await asyncio.sleep(0.05)
            out.append((stop, seen, ran))
        return out

    differential(scenario)


def _stop_after_every_chunk(E, build, modes):
    """For each k, a fresh thread whose stream the consumer stops after its k-th chunk:
    the chunks seen, and what the checkpointer then holds (state, next, pending tasks'
    errors, the history's steps). The last k runs the stream to its end."""
    out = []
    k, total = 0, None
    while total is None or k <= total:
        app, cfg = build(E), _cfg()
        seen = []
        try:
            for chunk in app.stream({"log": []}, cfg, stream_mode=modes):
                if len(seen) == k:
                    break
                seen.append(chunk)
            else:
                total = len(seen)
        except ValueError as exc:  # the graph without a handler fails at its last chunk
            seen.append(("raised", str(exc)))
            total = len(seen) - 1
        state = app.get_state(cfg)
        out.append((k, seen, state.values, state.next,
                    [(t.name, repr(t.error)) for t in state.tasks],
                    [(s.metadata["step"], s.next) for s in app.get_state_history(cfg)]))
        k += 1
    return out


def test_a_stream_stopped_after_any_chunk_leaves_the_checkpoints_langgraph_leaves(differential):
    """A consumer may stop a stream anywhere (a notebook cell interrupted, a `break` on the
    first answer). Whatever chunk it stops after, the thread's checkpoints then hold what
    LangGraph's hold: the steps finished before that chunk was yielded, the pending writes
    of the step it belongs to, the node to run next. A graph whose failing node has an
    error handler, the same graph without one (the run fails), each with a checkpointer,
    in plain modes (lone tasks run as calls) and live ones (`custom`: tasks in threads)."""

    def scenario(E):
        def fail(s):
            raise ValueError("boom")

        def handler(state, error: E.errors.NodeError):
            return {"log": [f"handled {error.node}"]}

        def build(with_handler):
            def make(E):
                g = _line(E, "first", "a", "b", fns={"a": fail},
                          a={"error_handler": handler} if with_handler else {})
                return g.compile(checkpointer=E.InMemorySaver())
            return make

        out = []
        for with_handler in (True, False):
            for modes in ("updates", "tasks", "values", "debug", ["updates", "custom"], ["tasks", "values"]):
                out.append((with_handler, modes, _stop_after_every_chunk(E, build(with_handler), modes)))
        return out

    differential(scenario)


def test_an_astream_stopped_after_any_chunk_leaves_the_checkpoints_langgraph_leaves(differential):
    """`astream`'s side of the test above (async nodes and handler)."""

    async def scenario(E):
        async def fail(s):
            raise ValueError("boom")

        async def handler(state, error: E.errors.NodeError):
            return {"log": [f"handled {error.node}"]}

        async def first(s):
            return {"log": ["first"]}

        out = []
        for with_handler in (True, False):
            for modes in ("updates", "tasks", ["updates", "custom"], ["tasks", "values"]):
                rows, k, total = [], 0, None
                while total is None or k <= total:
                    app = _line(E, "first", "a", "b", fns={"first": first, "a": fail},
                                a={"error_handler": handler} if with_handler else {}).compile(
                        checkpointer=E.InMemorySaver())
                    cfg, seen = _cfg(), []
                    stream = app.astream({"log": []}, cfg, stream_mode=modes)
                    try:
                        async for chunk in stream:
                            if len(seen) == k:
                                break
                            seen.append(chunk)
                        else:
                            total = len(seen)
                    except ValueError as exc:
                        seen.append(("raised", str(exc)))
                        total = len(seen) - 1
                    await stream.aclose()
                    state = await app.aget_state(cfg)
                    rows.append((k, seen, state.values, state.next, [(t.name, repr(t.error)) for t in state.tasks],
                                 [(s.metadata["step"], s.next) async for s in app.aget_state_history(cfg)]))
                    k += 1
                out.append((with_handler, modes, rows))
        return out

    differential(scenario)

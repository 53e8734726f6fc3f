"""What a node sees in its `RunnableConfig`, and what a user's callback handler records.

Users read `config` in their nodes (`def node(state, config)`) for the caller's tags,
metadata and `configurable` keys (user ids, thread ids, feature flags), the `langgraph_*`
metadata (which node, which step), `run_name` / `recursion_limit` / `max_concurrency`, and
hand `config["callbacks"]` on to the models and chains they call; LangChain Runnables
they call *without* passing the config pick it up from LangChain's context variable.
They attach `BaseCallbackHandler`s (`config={"callbacks": [handler]}`) that log
`on_chain_start` / `on_chain_end`. Some nodes edit `config["metadata"]`,
`config["configurable"]` or `config["tags"]` in place and expect (or not) later nodes to
see it. These scenarios compare all of that with LangGraph for chains, parallel steps,
`Send` workers, subgraphs (as nodes, invoked in nodes with and without the config),
`.with_config`, `.batch`, the functional API, a checkpointed thread and a 200-key state.

Parallel observations are sorted (LangGraph runs a step's sync tasks in a thread pool);
`__pregel_*` keys of `configurable` are engine internals and are left out.

Known divergences, xfailed (strict on lgnb, plain tests in selftest): `config["callbacks"]`
is None instead of a handler-less CallbackManager when no handler is given (building one
per task would cost every model call a manager copy).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import operator
import threading
import uuid
from typing import Annotated, Any

import pytest
from _diff import Normalizer, selftest_enabled
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.runnables import RunnableLambda
from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]


# a 200-key state: lgnb takes other paths from 128 keys on
Big = TypedDict("Big", {"log": Annotated[list, operator.add], **{f"k{i}": int for i in range(199)}})


def diverges(reason: str) -> Any:
    """A known divergence from LangGraph: xfail (strict) on lgnb, a plain test in selftest."""
    return pytest.mark.xfail(not selftest_enabled(), strict=True, reason=reason)


def _sorted(items: list) -> list:
    """A multiset of observations, sorted on their content with ids normalized per item."""
    return sorted(items, key=lambda x: repr(Normalizer()(x)))


def view(config: Any) -> dict:
    """What a user reads of a config: every top-level key, the tags, all metadata, the
    public `configurable` keys, run name and limits (what `callbacks` holds is
    `test_config_callbacks_is_a_callback_manager_in_every_node`'s)."""
    cf = config.get("configurable") or {}
    return {
        "keys": sorted(config),
        "tags": list(config["tags"]) if "tags" in config else ("absent",),
        "metadata": dict(config.get("metadata") or {}),
        "configurable": {k: v for k, v in cf.items() if not k.startswith("__")},
        "run_name": config.get("run_name", "<absent>"),
        "run_id": ("given", config["run_id"]) if "run_id" in config else ("absent",),
        "recursion_limit": config.get("recursion_limit", "<absent>"),
        "max_concurrency": config.get("max_concurrency", "<absent>"),
    }


def _probe(seen: list, name: str):
    def node(state, config):
        seen.append((name, view(config)))
        return {"log": [name]}

    node.__name__ = name
    return node


def _caller_cfg(**extra: Any) -> dict:
    return {"tags": ["t"], "metadata": {"m": 1}, "configurable": {"user": "u"}, **extra}


async def _adrain(aiter) -> list:
    return [c async for c in aiter]


def _run(app: Any, inp: Any, cfg: Any, how: str) -> Any:
    """Run a graph the way `how` says: invoke, stream (updates), ainvoke, astream; the
    chunks of a stream as a sorted multiset."""
    if how == "invoke":
        return app.invoke(inp, cfg)
    if how == "stream":  # parallel tasks' updates come in completion order: sorted
        return _sorted(list(app.stream(inp, cfg, stream_mode="updates")))
    if how == "ainvoke":
        return asyncio.run(app.ainvoke(inp, cfg))
    if how == "astream":
        return _sorted(asyncio.run(_adrain(app.astream(inp, cfg, stream_mode="updates"))))
    raise ValueError(how)


HOWS = ("invoke", "stream", "ainvoke", "astream")


# ---------------------------------------------------------------------------------------
# what a node sees
# ---------------------------------------------------------------------------------------


def _shape(E, shape: str, seen: list, state=S):
    """Graphs of several shapes whose every node records its config."""
    g = E.StateGraph(state)
    if shape == "chain":
        g.add_node("a", _probe(seen, "a"))
        g.add_node("b", _probe(seen, "b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
    elif shape == "parallel":
        for n in ("a", "b", "c"):
            g.add_node(n, _probe(seen, n))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge(["a", "b"], "c")
    elif shape == "send":
        g.add_node("fan", _probe(seen, "fan"))

        def w(arg, config):
            seen.append(("w", arg, view(config)))
            return {"log": [f"w{arg}"]}

        g.add_node("w", w)
        g.add_edge(E.START, "fan")
        g.add_conditional_edges("fan", lambda s: [E.Send("w", i) for i in range(3)], ["w"])
    elif shape == "subgraph":
        sub = E.StateGraph(state)
        sub.add_node("s1", _probe(seen, "s1"))
        sub.add_node("s2", _probe(seen, "s2"))
        sub.add_edge(E.START, "s1")
        sub.add_edge("s1", "s2")
        g.add_node("a", _probe(seen, "a"))
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "a")
        g.add_edge("a", "sub")
    else:
        raise ValueError(shape)
    return g.compile()


@pytest.mark.parametrize("shape", ["chain", "parallel", "send", "subgraph"])
def test_nodes_see_the_callers_tags_metadata_configurable_and_their_langgraph_keys(
        differential, shape):
    """`app.invoke(inp, {"tags": [...], "metadata": {...}, "configurable": {"user": ...}})`
    (and `stream`, `ainvoke`, `astream`) and a node printing its `config`: a chain, a
    parallel step with a join, `Send` workers, a compiled subgraph added as a node."""

    def scenario(E):
        seen = []
        app = _shape(E, shape, seen)
        runs = []
        for how in HOWS:
            seen.clear()
            cfg = _caller_cfg()
            out = _run(app, {"log": []}, cfg, how)
            runs.append((how, _sorted(seen), out, cfg))
        return runs

    differential(scenario)


def test_nodes_see_run_name_run_id_recursion_limit_and_max_concurrency_from_the_caller(
        differential):
    """The caller also passes `run_name`, `run_id`, `recursion_limit` and
    `max_concurrency` (`invoke`, `astream`): which of them a node's config still carries."""

    def scenario(E):
        seen = []
        app = _shape(E, "subgraph", seen)
        runs = []
        for how in ("invoke", "astream"):
            seen.clear()
            rid = str(uuid.uuid4())
            cfg = _caller_cfg(run_name="my-run", run_id=rid, recursion_limit=11, max_concurrency=3)
            _run(app, {"log": []}, cfg, how)
            runs.append((how, rid, _sorted(seen), cfg))
        return runs

    differential(scenario)


def test_a_node_called_with_no_config_at_all(differential):
    """`app.invoke(inp)` with no config: what a node of a chain and of a parallel step
    finds in `config` (the keys that are there, the langgraph metadata)."""

    def scenario(E):
        out = []
        for shape in ("chain", "parallel"):
            seen = []
            _shape(E, shape, seen).invoke({"log": []})
            out.append(_sorted(seen))
        return out

    differential(scenario)


@pytest.mark.parametrize("shape", ["chain", "parallel", "send", "subgraph"])
def test_nodes_of_a_200_key_state_see_the_same_config(differential, shape):
    """The same probes on a state with 200 keys (a big form / feature vector state)."""

    def scenario(E):
        seen = []
        app = _shape(E, shape, seen, state=Big)
        runs = []
        for how in HOWS:
            seen.clear()
            cfg = _caller_cfg()
            _run(app, {"log": [], **{f"k{i}": i for i in range(199)}}, cfg, how)
            runs.append((how, _sorted(seen), cfg))
        return runs

    differential(scenario)


@pytest.mark.parametrize("pass_config", [True, False])
@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_a_subgraph_invoked_inside_a_node_with_and_without_the_config(differential, pass_config, how):
    """A node calls `helper.invoke(state, config)` (or `helper.invoke(state)`, leaving
    LangGraph to find the parent config): what the helper's nodes see."""

    def scenario(E):
        seen = []
        sub = _in_a_row(E, s1=_probe(seen, "s1"), s2=_probe(seen, "s2"))
        helper = sub.compile()

        if how == "invoke":
            def call(state, config):
                seen.append(("call", view(config)))
                out = helper.invoke({"log": []}, config) if pass_config else helper.invoke({"log": []})
                return {"log": out["log"]}
        else:
            async def call(state, config):
                seen.append(("call", view(config)))
                out = (await helper.ainvoke({"log": []}, config) if pass_config
                       else await helper.ainvoke({"log": []}))
                return {"log": out["log"]}

        g = _in_a_row(E, call=call)
        app = g.compile()
        cfg = _caller_cfg()
        out = _run(app, {"log": []}, cfg, how)
        return seen, out, cfg

    differential(scenario)


def test_with_config_tags_metadata_configurable_run_name_and_recursion_limit(differential):
    """`app = graph.compile().with_config(tags=..., metadata=..., configurable=...,
    run_name=..., recursion_limit=...)` called with a config of the caller's own: what the
    nodes (and a subgraph's) see."""

    def scenario(E):
        seen = []
        app = _shape(E, "subgraph", seen).with_config(
            tags=["wc"], metadata={"team": "x", "m": 0}, configurable={"flag": True, "user": "default"},
            run_name="pipeline", recursion_limit=9)
        runs = []
        for how in HOWS:
            seen.clear()
            cfg = _caller_cfg()
            _run(app, {"log": []}, cfg, how)
            runs.append((how, _sorted(seen), cfg))
        return runs

    differential(scenario)


def test_a_subgraph_node_with_its_own_with_config(differential):
    """`g.add_node("sub", sub.compile().with_config(tags=["sub-tag"], metadata={...},
    configurable={...}))`: what the subgraph's nodes see on top of the parent's config."""

    def scenario(E):
        seen = []
        sub = _in_a_row(E, s1=_probe(seen, "s1"))
        g = E.StateGraph(S)
        g.add_node("a", _probe(seen, "a"))
        g.add_node("sub", sub.compile().with_config(
            tags=["sub-tag"], metadata={"sub": 1}, configurable={"sub_key": "v"}, run_name="inner"))
        g.add_node("b", _probe(seen, "b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "sub")
        g.add_edge("sub", "b")
        app = g.compile()
        cfg = _caller_cfg()
        app.invoke({"log": []}, cfg)
        return seen, cfg

    differential(scenario)


def test_batch_with_a_config_per_input(differential):
    """`app.batch([in1, in2, in3], [cfg1, cfg2, cfg3])` (and `abatch`): each run's nodes
    see their own input's tags, metadata and configurable (sorted: the runs go in
    parallel)."""

    def scenario(E):
        seen = []

        def a(state, config):
            seen.append((state["log"][0], view(config)))
            return {"log": ["a"]}

        g = _in_a_row(E, a=a)
        app = g.compile()
        runs = []
        for how in ("batch", "abatch"):
            seen.clear()
            cfgs = [{"tags": [f"t{i}"], "metadata": {"i": i}, "configurable": {"user": f"u{i}"}}
                    for i in range(3)]
            inputs = [{"log": [f"in{i}"]} for i in range(3)]
            if how == "batch":
                out = app.batch(inputs, cfgs)
            else:
                out = asyncio.run(app.abatch(inputs, cfgs))
            runs.append((how, _sorted(seen), out, cfgs))
        return runs

    differential(scenario)


def test_batch_with_one_config_for_all_inputs(differential):
    """`app.batch([in1, in2], {"tags": [...], "max_concurrency": 1})`: one config for all."""

    def scenario(E):
        seen = []

        def a(state, config):
            seen.append((state["log"][0], view(config)))
            return {"log": ["a"]}

        g = _in_a_row(E, a=a)
        app = g.compile()
        cfg = _caller_cfg(max_concurrency=1)
        out = app.batch([{"log": ["x"]}, {"log": ["y"]}], cfg)
        return _sorted(seen), out, cfg

    differential(scenario)


def test_functional_api_task_and_entrypoint_configs(differential):
    """`@entrypoint()` calling two `@task`s (one after the other, then two at once): what
    the entrypoint and each task call see."""

    def scenario(E):
        seen = []

        @E.func.task
        def step(x, config):
            seen.append(("step", x, view(config)))
            return x + 1

        @E.func.entrypoint()
        def main(x, config):
            seen.append(("main", view(config)))
            y = step(x).result()
            futs = [step(y), step(y + 10)]
            return [f.result() for f in futs]

        runs = []
        for how in HOWS:
            seen.clear()
            cfg = _caller_cfg()
            out = _run(main, 1, cfg, how)
            runs.append((how, _sorted(seen), out, cfg))
        return runs

    differential(scenario)


def test_functional_api_async_task_configs(differential):
    """The async functional API: an `async def` entrypoint awaiting `async def` tasks."""

    async def scenario(E):
        seen = []

        @E.func.task
        async def step(x, config):
            seen.append(("step", x, view(config)))
            return x + 1

        @E.func.entrypoint()
        async def main(x, config):
            seen.append(("main", view(config)))
            y = await step(x)
            return await asyncio.gather(step(y), step(y + 10))

        cfg = _caller_cfg()
        out = await main.ainvoke(1, cfg)
        return _sorted(seen), out, cfg

    differential(scenario)


@pytest.mark.parametrize("how", ["invoke", "astream"])
def test_a_checkpointed_thread_run_twice(differential, how):
    """`compile(checkpointer=InMemorySaver())` and two runs on `thread_id="t1"`: thread_id,
    checkpoint_ns, checkpoint_id and checkpoint_map as the nodes (and a subgraph's) see
    them, the second run included."""

    def scenario(E):
        seen = []
        sub = _in_a_row(E, s1=_probe(seen, "s1"))
        g = E.StateGraph(S)
        g.add_node("a", _probe(seen, "a"))
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "a")
        g.add_edge("a", "sub")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = []
        for _ in range(2):
            seen.clear()
            cfg = _caller_cfg()
            cfg["configurable"]["thread_id"] = "t1"
            _run(app, {"log": []}, cfg, how)
            out.append((list(seen), cfg))
        return out

    differential(scenario)


def test_a_checkpointed_functional_entrypoint(differential):
    """`@entrypoint(checkpointer=InMemorySaver())` on a thread: the entrypoint's and its
    task's configs."""

    def scenario(E):
        seen = []

        @E.func.task
        def step(x, config):
            seen.append(("step", view(config)))
            return x + 1

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def main(x, config):
            seen.append(("main", view(config)))
            return step(x).result()

        cfg = _caller_cfg()
        cfg["configurable"]["thread_id"] = "t1"
        return main.invoke(1, cfg), seen, cfg

    differential(scenario)


def test_async_nodes_see_the_same_config_under_ainvoke_and_astream(differential):
    """`async def node(state, config)` nodes (an async app): a fan-out node, its `Send`
    workers, a subgraph's node."""

    def scenario(E):
        seen = []

        def aprobe(name):
            async def node(state, config):
                seen.append((name, state if name == "w" else None, view(config)))
                return {"log": [name]}

            return node

        sub = _in_a_row(E, s1=aprobe("s1"))
        g = E.StateGraph(S)
        g.add_node("fan", aprobe("fan"))
        g.add_node("w", aprobe("w"))
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "fan")
        g.add_conditional_edges("fan", lambda s: [E.Send("w", i) for i in range(3)], ["w"])
        g.add_edge("w", "sub")
        app = g.compile()
        out = []
        for how in ("ainvoke", "astream"):
            seen.clear()
            cfg = _caller_cfg()
            _run(app, {"log": []}, cfg, how)
            out.append((how, _sorted(seen), cfg))
        return out

    differential(scenario)


@pytest.mark.parametrize("how", ["invoke", "astream"])
def test_a_node_that_interrupts_and_is_resumed(differential, how):
    """A human-in-the-loop node (`interrupt(...)`) on a thread, resumed with
    `Command(resume=...)` and a config of its own: what the node sees on both runs, and
    the node after it."""

    def scenario(E):
        seen = []

        def ask(state, config):
            seen.append(("ask", view(config)))
            answer = E.interrupt("ok?")
            seen.append(("ask-resumed", answer))
            return {"log": ["ask"]}

        g = E.StateGraph(S)
        g.add_node("a", _probe(seen, "a"))
        g.add_node("ask", ask)
        g.add_node("c", _probe(seen, "c"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "ask")
        g.add_edge("ask", "c")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg1 = _caller_cfg()
        cfg1["configurable"]["thread_id"] = "t1"
        cfg2 = {"tags": ["resume"], "metadata": {"m": 2}, "configurable": {"thread_id": "t1", "user": "v"}}
        _run(app, {"log": []}, cfg1, how)
        _run(app, E.Command(resume="yes"), cfg2, how)
        return seen, cfg1, cfg2

    differential(scenario)


def _in_a_row(E, **nodes: Any) -> Any:
    """A `StateGraph(S)` builder of `nodes` (name=function) run one after another from START."""
    g = E.StateGraph(S)
    names = list(nodes)
    for name in names:
        g.add_node(name, nodes[name])
    g.add_edge(E.START, names[0])
    for prev, nxt in zip(names, names[1:]):
        g.add_edge(prev, nxt)
    return g


def _every_kind_of_task(E, observe: Any) -> tuple[Any, Any]:
    """`(app, main)`: a graph whose chain node `a`, `Send` worker `w` and subgraph node `s1`
    each call `observe(name, config)`, and an entrypoint `main` whose own body and `@task`
    `t` do too."""

    def probe(name):
        def node(state, config):
            observe(name, config)
            return {"log": [name]}

        return node

    sub = _in_a_row(E, s1=probe("s1"))
    g = E.StateGraph(S)
    g.add_node("a", probe("a"))
    g.add_node("w", probe("w"))
    g.add_node("sub", sub.compile())
    g.add_edge(E.START, "a")
    g.add_conditional_edges("a", lambda s: [E.Send("w", 1)], ["w"])
    g.add_edge("w", "sub")

    @E.func.task
    def t(x, config):
        observe("task", config)
        return x

    @E.func.entrypoint()
    def main(x, config):
        observe("main", config)
        return t(x).result()

    return g.compile(), main


def _callbacks_view(config: Any) -> Any:
    """What a node finds in `config["callbacks"]` (users hand it on, or add a handler)."""
    cb = config.get("callbacks", "<absent>")
    if cb is None or isinstance(cb, (list, str)):
        return cb if not isinstance(cb, list) else [type(h).__name__ for h in cb]
    return {"class": type(cb).__name__,
            "handlers": [type(h).__name__ for h in cb.handlers],
            "inheritable_handlers": [type(h).__name__ for h in cb.inheritable_handlers],
            "has_parent_run": cb.parent_run_id is not None,
            "tags": sorted(cb.tags), "inheritable_tags": sorted(cb.inheritable_tags),
            "inheritable_metadata": cb.inheritable_metadata}


_NO_MANAGER = ("with no callback handler given, LangGraph's nodes, Send workers, subgraph "
               "nodes, entrypoints and @tasks see config['callbacks'] = a CallbackManager "
               "(no handlers, parent_run_id set, tags/metadata of the run); lgnb's see None")


@pytest.mark.parametrize("callbacks", [
    pytest.param("not-given", marks=diverges(_NO_MANAGER)),
    pytest.param("empty-list", marks=diverges(_NO_MANAGER)),
    "a-handler",
])
def test_config_callbacks_is_a_callback_manager_in_every_node(differential, callbacks):
    """A node reads `config["callbacks"]` (to hand on, `.add_handler(...)`, or check
    `.parent_run_id`): in a chain node, a `Send` worker, a subgraph's node, an entrypoint
    and its `@task`, with no callbacks given, an empty list, or a handler."""

    def scenario(E):
        seen = []
        app, main = _every_kind_of_task(E, lambda name, config: seen.append((name, _callbacks_view(config))))

        def cfg():
            c = _caller_cfg()
            if callbacks == "empty-list":
                c["callbacks"] = []
            elif callbacks == "a-handler":
                c["callbacks"] = [Handler()]
            return c

        app.invoke({"log": []}, cfg())
        main.invoke(1, cfg())
        return seen

    differential(scenario)


def test_get_config_in_a_helper_is_the_nodes_own_config(differential):
    """A helper function calls `get_config()` (no config parameter threaded through): from
    a node, a `Send` worker, a subgraph's node, an entrypoint and its `@task`: is it the
    very dict the node got, and what does it hold."""

    def scenario(E):
        seen = []

        def helper(name, config):
            got = E.get_config()
            seen.append((name, got is config, view(got)))

        app, main = _every_kind_of_task(E, helper)
        app.invoke({"log": []}, _caller_cfg())
        main.invoke(1, _caller_cfg())
        return seen

    differential(scenario)


def test_a_task_called_from_a_graph_node_and_a_checkpointed_nested_graph(differential):
    """A `StateGraph` node calls an `@task` (`.result()`), and a checkpointed parent's
    node invokes a helper graph with `config`: what the task and the helper's node see
    (thread_id, checkpoint_ns, checkpoint_map)."""

    def scenario(E):
        seen = []

        @E.func.task
        def t(x, config):
            seen.append(("task", view(config)))
            return x

        sub = _in_a_row(E, s1=_probe(seen, "s1"))
        helper = sub.compile()

        def a(state, config):
            t(1).result()
            helper.invoke({"log": []}, config)
            return {"log": ["a"]}

        g = _in_a_row(E, a=a)
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = _caller_cfg()
        cfg["configurable"]["thread_id"] = "t1"
        app.invoke({"log": []}, cfg)
        return seen, cfg

    differential(scenario)


def test_functional_api_sees_run_name_recursion_limit_and_max_concurrency(differential):
    """An entrypoint called with `run_name`, `recursion_limit`, `max_concurrency` (and
    `.with_config(tags=...)`): what it and its `@task` see. (`max_concurrency` of 2 or
    less would hang LangGraph: the sync entrypoint holds a slot of the pool.)"""

    def scenario(E):
        seen = []

        @E.func.task
        def step(x, config):
            seen.append(("step", view(config)))
            return x + 1

        @E.func.entrypoint()
        def main(x, config):
            seen.append(("main", view(config)))
            return step(x).result()

        cfg = _caller_cfg(run_name="fn-run", recursion_limit=13, max_concurrency=5)
        out = main.with_config(tags=["wc"], metadata={"team": "x"}).invoke(1, cfg)
        return seen, out, cfg

    differential(scenario)


# ---------------------------------------------------------------------------------------
# a LangChain Runnable called inside a node without the config
# ---------------------------------------------------------------------------------------


def _lambda_view(seen: list, name: str) -> Any:
    def fn(x, config):
        seen.append((name, view(config)))
        return x

    return RunnableLambda(fn, name=name)


@pytest.mark.parametrize(("node_kind", "how"), [("sync", "stream"), ("async", "ainvoke")])
def test_a_runnable_lambda_called_without_config_inherits_the_nodes(differential, how, node_kind):
    """A node calls a `RunnableLambda` chain (`chain.invoke(x)`, no config): LangChain
    hands it the node's config from its context variable: tags, metadata, configurable."""

    def scenario(E):
        seen = []
        inner = _lambda_view(seen, "inner")
        if node_kind == "sync":
            def a(state, config):
                inner.invoke(1)
                return {"log": ["a"]}
        else:
            async def a(state, config):
                await inner.ainvoke(1)
                return {"log": ["a"]}
        g = _in_a_row(E, a=a)
        app = g.compile()
        cfg = _caller_cfg()
        _run(app, {"log": []}, cfg, how)
        return seen, cfg

    differential(scenario)


@pytest.mark.parametrize("how", ["invoke", "astream"])
def test_a_runnable_lambda_sees_the_nodes_in_place_config_edits(differential, how):
    """A node edits its config in place (metadata, configurable, tags), then calls a
    `RunnableLambda` without config: does the lambda see the edits."""

    def scenario(E):
        seen = []

        def fn(x, config):
            seen.append(("inner", _edits(config)))
            return x

        inner = RunnableLambda(fn)
        edit = _editor(seen, "a")

        def a(state, config):
            edit(state, config)
            inner.invoke(1)
            return {"log": ["a"]}

        g = _in_a_row(E, a=a)
        app = g.compile()
        cfg = _caller_cfg()
        _run(app, {"log": []}, cfg, how)
        return seen, cfg

    differential(scenario)


@pytest.mark.parametrize("where", ["send-worker", "task-call", "graph-invoked-in-a-node"])
def test_a_runnable_lambda_inherits_in_send_workers_task_calls_and_a_nested_graph(differential, where):
    """The same inheritance from a `Send` worker, a `@task` call and a node of a graph
    invoked (without config) inside a node."""

    def scenario(E):
        seen = []
        inner = _lambda_view(seen, "inner")
        cfg = _caller_cfg()
        if where == "send-worker":
            def w(arg):
                inner.invoke(arg)
                return {"log": [f"w{arg}"]}

            g = E.StateGraph(S)
            g.add_node("fan", lambda s: {"log": ["fan"]})
            g.add_node("w", w)
            g.add_edge(E.START, "fan")
            g.add_conditional_edges("fan", lambda s: [E.Send("w", i) for i in range(2)], ["w"])
            g.compile().invoke({"log": []}, cfg)
        elif where == "graph-invoked-in-a-node":
            sub = _in_a_row(E, s1=lambda s: inner.invoke("s1") and {"log": ["s1"]})
            helper = sub.compile()

            def call(state):
                helper.invoke({"log": []})
                return {"log": ["call"]}

            g = _in_a_row(E, call=call)
            g.compile().invoke({"log": []}, cfg)
        else:
            @E.func.task
            def t(x):
                return inner.invoke(("task", x))

            @E.func.entrypoint()
            def main(x):
                return [f.result() for f in [t(x), t(x + 1)]]

            main.invoke(5, cfg)
        return _sorted(seen), cfg

    differential(scenario)


# ---------------------------------------------------------------------------------------
# a user's callback handler
# ---------------------------------------------------------------------------------------

_META = ("m", "team", "ls_integration", "thread_id", "langgraph_node", "langgraph_step",
         "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns", "checkpoint_ns")


class Handler(BaseCallbackHandler):
    """A user's logging handler: on_chain_start / on_chain_end with names, tags,
    metadata; parents recorded by name."""

    def __init__(self, *, keep_order: bool = False) -> None:
        self.names: dict = {}
        self.events: list = []
        self.keep_order = keep_order
        self.lock = threading.Lock()

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None,
                       metadata=None, **kw):
        with self.lock:
            name = kw.get("name") or (serialized or {}).get("name")
            self.names[run_id] = name
            md = metadata or {}
            self.events.append(("start", name, self.names.get(parent_run_id, "<root>"),
                                list(tags or ()) if self.keep_order else sorted(tags or ()),
                                {k: md[k] for k in _META if k in md},
                                "hidden" if "langsmith:hidden" in (tags or ()) else "shown"))

    def on_chain_end(self, outputs, *, run_id, parent_run_id=None, tags=None, **kw):
        with self.lock:
            self.events.append(("end", self.names.get(run_id), self.names.get(parent_run_id, "<root>"),
                                list(tags or ()) if self.keep_order else sorted(tags or ())))

    def on_chain_error(self, error, *, run_id, parent_run_id=None, tags=None, **kw):
        with self.lock:
            self.events.append(("error", self.names.get(run_id), type(error).__name__))

    def observed(self) -> tuple:
        """Starts as a sorted multiset, ends as a sorted multiset (parallel tasks)."""
        starts = [e for e in self.events if e[0] == "start"]
        others = [e for e in self.events if e[0] != "start"]
        return _sorted(starts), _sorted(others), self.events[0][1:3], self.events[-1][:3]


class AsyncHandler(AsyncCallbackHandler, Handler):
    async def on_chain_start(self, *a, **kw):  # type: ignore[override]
        Handler.on_chain_start(self, *a, **kw)

    async def on_chain_end(self, *a, **kw):  # type: ignore[override]
        Handler.on_chain_end(self, *a, **kw)

    async def on_chain_error(self, *a, **kw):  # type: ignore[override]
        Handler.on_chain_error(self, *a, **kw)


def _plain(name: str):
    def node(state):
        return {"log": [name]}

    node.__name__ = name
    return node


def _handler_app(E, shape: str):
    g = E.StateGraph(S)
    if shape == "chain":
        g.add_node("a", _plain("a"))
        g.add_node("b", _plain("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
    elif shape == "router":
        g.add_node("a", _plain("a"))
        g.add_node("b", _plain("b"))
        g.add_node("c", _plain("c"))
        g.add_edge(E.START, "a")

        def route(state):
            return "b" if len(state["log"]) == 1 else "c"

        g.add_conditional_edges("a", route, ["b", "c"])
    elif shape == "send":
        g.add_node("fan", _plain("fan"))
        g.add_node("w", lambda arg: {"log": [arg]})
        g.add_edge(E.START, "fan")
        g.add_conditional_edges("fan", lambda s: [E.Send("w", i) for i in range(3)], ["w"])
    elif shape == "subgraph":
        sub = _in_a_row(E, s1=_plain("s1"), s2=_plain("s2"))
        g.add_node("a", _plain("a"))
        g.add_node("sub", sub.compile(name="inner"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "sub")
    elif shape == "runnable_node":
        g.add_node("r", RunnableLambda(lambda s: s, name="first") | RunnableLambda(
            lambda s: {"log": ["r"]}, name="second"))
        g.add_node("b", _plain("b"))
        g.add_edge(E.START, "r")
        g.add_edge("r", "b")
    elif shape == "big_state":
        g = E.StateGraph(Big)
        g.add_node("a", _plain("a"))
        g.add_node("b", _plain("b"))
        g.add_node("c", _plain("c"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
    elif shape == "subgraph_in_node":
        sub = _in_a_row(E, s1=_plain("s1"))
        helper = sub.compile(name="helper").with_config(tags=["helper-tag"], metadata={"team": "h"})

        def call(state):
            return {"log": helper.invoke({"log": []})["log"]}

        g.add_node("call", call)
        g.add_edge(E.START, "call")
    else:
        raise ValueError(shape)
    return g.compile()


@pytest.mark.parametrize("shape", ["chain", "router", "send", "subgraph", "subgraph_in_node",
                                   "runnable_node", "big_state"])
def test_a_callback_handler_records_chain_runs(differential, shape):
    """`config={"callbacks": [MyHandler()], "tags": [...], "metadata": {...}}` (a sync
    handler under `invoke` / `stream`, an async one under `ainvoke` / `astream`): the chain
    runs the handler sees start and end, with names, parents, tags (as a set) and metadata."""

    def scenario(E):
        app = _handler_app(E, shape)
        runs = []
        for how in HOWS:
            h = AsyncHandler() if how in ("ainvoke", "astream") else Handler()
            cfg = {**_caller_cfg(), "callbacks": [h]}
            out = _run(app, {"log": []}, cfg, how)
            runs.append((how, h.observed(), out))
        return runs

    differential(scenario)


def test_a_callback_handler_sees_tags_in_langgraphs_order(differential):
    """A handler that logs `tags` as given (a list): the order of the caller's tags and
    the engine's `graph:step:N` / `seq:step:N` tags on each run, a router included."""

    def scenario(E):
        app = _handler_app(E, "router")
        h = Handler(keep_order=True)
        app.invoke({"log": []}, {"tags": ["t1", "t2"], "callbacks": [h]})
        return [e for e in h.events if e[0] == "start"]

    differential(scenario)


def test_a_callback_handler_records_functional_api_runs(differential):
    """`@entrypoint` calling `@task`s, traced by a handler: the entrypoint's run, each task
    call's run, their parents and tags."""

    def scenario(E):
        @E.func.task
        def step(x):
            return x + 1

        @E.func.entrypoint()
        def main(x):
            y = step(x).result()
            return [f.result() for f in [step(y), step(y + 1)]]

        runs = []
        for how in HOWS:
            h = AsyncHandler() if how in ("ainvoke", "astream") else Handler()
            cfg = {**_caller_cfg(), "callbacks": [h]}
            out = _run(main, 1, cfg, how)
            runs.append((how, h.observed(), out))
        return runs

    differential(scenario)


def test_a_callback_handler_on_a_with_config_graph_and_a_checkpointed_thread(differential):
    """`app.with_config(run_name="pipeline", tags=["v2"], metadata={"team": "x"})` on a
    thread: the root run's name and every run's tags and metadata (thread_id included)."""

    def scenario(E):
        app = _handler_app(E, "subgraph").builder.compile(checkpointer=E.InMemorySaver())
        app = app.with_config(run_name="pipeline", tags=["v2"], metadata={"team": "x"})
        h = Handler()
        cfg = {**_caller_cfg(), "callbacks": [h]}
        cfg["configurable"]["thread_id"] = "t1"
        out = app.invoke({"log": []}, cfg)
        return h.observed(), out

    differential(scenario)


def test_a_node_hands_config_callbacks_to_a_chain_it_calls(differential):
    """A node passes `config["callbacks"]` (what LangChain tutorials do) or the whole
    config to a `RunnableLambda`: the handler sees the lambda's run under the node."""

    def scenario(E):
        inner = RunnableLambda(lambda x: x, name="inner")

        def a(state, config):
            inner.invoke(1, {"callbacks": config.get("callbacks")})
            inner.invoke(2, config)
            inner.invoke(3)
            return {"log": ["a"]}

        g = _in_a_row(E, a=a)
        app = g.compile()
        h = Handler()
        app.invoke({"log": []}, {**_caller_cfg(), "callbacks": [h]})
        return h.observed()

    differential(scenario)


# ---------------------------------------------------------------------------------------
# in-place edits of a node's config
# ---------------------------------------------------------------------------------------


def _editor(seen: list, name: str, ready: "threading.Event | None" = None):
    """A node that reads, then edits its config in place (metadata, configurable, tags)."""

    def node(state, config):
        seen.append((name, "before", _edits(config)))
        config.setdefault("metadata", {})[f"md-{name}"] = 1
        config.setdefault("configurable", {})[f"cf-{name}"] = 1
        config.setdefault("tags", []).append(f"tag-{name}")
        if ready is not None:
            ready.set()
        return {"log": [name]}

    node.__name__ = name
    return node


def _edits(config: Any) -> tuple:
    """What a node sees of others' edits: the edited keys only."""
    md = config.get("metadata") or {}
    cf = config.get("configurable") or {}
    return (sorted(k for k in md if k.startswith("md-")),
            sorted(k for k in cf if k.startswith("cf-")),
            [t for t in config.get("tags", []) if t.startswith("tag-")])


def _reader(seen: list, name: str, wait: "threading.Event | None" = None):
    def node(state, config):
        if wait is not None:
            seen.append((name, "waited", wait.wait(5)))
        seen.append((name, "sees", _edits(config)))
        return {"log": [name]}

    node.__name__ = name
    return node


@pytest.mark.parametrize("caller_tags", [True, False])
def test_in_place_edits_reach_later_nodes_and_a_subgraph_but_not_the_caller(
        differential, caller_tags):
    """Node `a` edits `config["metadata"]`, `config["configurable"]` and `config["tags"]`
    in place (`invoke`, `stream`, `ainvoke`, `astream`); later nodes, a compiled subgraph's nodes (one editing again), a subgraph
    with `with_config(tags=...)`: what each sees, and the caller's dicts afterwards."""

    def scenario(E):
        seen = []
        sub = _in_a_row(E, s1=_editor(seen, "s1"), s2=_reader(seen, "s2"))
        own = E.StateGraph(S)
        own.add_node("o1", _editor(seen, "o1"))
        own.add_node("o2", _reader(seen, "o2"))
        own.add_edge(E.START, "o1")
        own.add_edge("o1", "o2")
        g = E.StateGraph(S)
        g.add_node("a", _editor(seen, "a"))
        g.add_node("b", _reader(seen, "b"))
        g.add_node("sub", sub.compile())
        g.add_node("own", own.compile().with_config(tags=["own-tag"], metadata={"own": 1}))
        g.add_node("last", _reader(seen, "last"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "sub")
        g.add_edge("sub", "own")
        g.add_edge("own", "last")
        app = g.compile()
        runs = []
        for how in HOWS:
            seen.clear()
            cfg = {"metadata": {"m": 1}, "configurable": {"user": "u"}}
            if caller_tags:
                cfg["tags"] = ["t"]
            _run(app, {"log": []}, cfg, how)
            runs.append((how, list(seen), cfg))
        return runs

    differential(scenario)


@pytest.mark.parametrize("caller_tags", [True, False])
def test_in_place_edits_seen_by_a_parallel_sibling_that_waits_for_them(differential, caller_tags):
    """Two branches of one step: `a` edits its config, then `b` (waiting for `a` to be
    done editing, `threading.Event`) reads its own; then the join node reads."""

    def scenario(E):
        seen = []
        ready = threading.Event()
        g = E.StateGraph(S)
        g.add_node("a", _editor(seen, "a", ready))
        g.add_node("b", _reader(seen, "b", ready))
        g.add_node("join", _reader(seen, "join"))
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge(["a", "b"], "join")
        app = g.compile()
        cfg = {"metadata": {"m": 1}, "configurable": {"user": "u"}}
        if caller_tags:
            cfg["tags"] = ["t"]
        app.invoke({"log": []}, cfg)
        return _sorted(seen), cfg

    differential(scenario)


@pytest.mark.parametrize("pass_config", [True, False])
def test_in_place_edits_and_a_subgraph_invoked_inside_the_node(differential, pass_config):
    """A node edits its config, then invokes a helper graph (with `config` or without):
    what the helper's nodes see (one editing again), what the node sees after, and what
    the next node sees."""

    def scenario(E):
        seen = []
        sub = _in_a_row(E, s1=_editor(seen, "s1"), s2=_reader(seen, "s2"))
        helper = sub.compile()
        edit = _editor(seen, "a")

        def a(state, config):
            edit(state, config)
            if pass_config:
                helper.invoke({"log": []}, config)
            else:
                helper.invoke({"log": []})
            seen.append(("a", "after", _edits(config)))
            return {"log": ["a"]}

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", _reader(seen, "b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile()
        cfg = {"tags": ["t"], "metadata": {"m": 1}, "configurable": {"user": "u"}}
        app.invoke({"log": []}, cfg)
        return seen, cfg

    differential(scenario)


@pytest.mark.parametrize("caller_tags", [True, False])
def test_in_place_edits_by_the_fan_out_node_reach_the_send_workers(differential, caller_tags):
    """`fan` edits its config and fans out `Send`s; the workers and the node after them
    read theirs."""

    def scenario(E):
        seen = []

        def w(arg, config):
            seen.append(("w", arg, _edits(config)))
            return {"log": [f"w{arg}"]}

        g = E.StateGraph(S)
        g.add_node("fan", _editor(seen, "fan"))
        g.add_node("w", w)
        g.add_node("after", _reader(seen, "after"))
        g.add_edge(E.START, "fan")
        g.add_conditional_edges("fan", lambda s: [E.Send("w", i) for i in range(3)], ["w"])
        g.add_edge("w", "after")
        app = g.compile()
        cfg = {"metadata": {"m": 1}, "configurable": {"user": "u"}}
        if caller_tags:
            cfg["tags"] = ["t"]
        app.invoke({"log": []}, cfg)
        return _sorted(seen), cfg

    differential(scenario)


def test_in_place_edits_by_task_calls_and_the_entrypoint(differential):
    """The functional API: the entrypoint edits its config, a `@task` edits its own, the
    next `@task` call and the entrypoint read."""

    def scenario(E):
        seen = []

        @E.func.task
        def first(x, config):
            seen.append(("first", _edits(config)))
            config.setdefault("tags", []).append("tag-first")
            config.setdefault("metadata", {})["md-first"] = 1
            config.setdefault("configurable", {})["cf-first"] = 1
            return x + 1

        @E.func.task
        def second(x, config):
            seen.append(("second", _edits(config)))
            return x * 2

        @E.func.entrypoint()
        def main(x, config):
            config.setdefault("tags", []).append("tag-main")
            config.setdefault("metadata", {})["md-main"] = 1
            config.setdefault("configurable", {})["cf-main"] = 1
            y = first(x).result()
            z = second(y).result()
            seen.append(("main", _edits(config)))
            return z

        runs = []
        for how in ("invoke", "astream"):
            seen.clear()
            cfg = {"tags": ["t"], "metadata": {"m": 1}, "configurable": {"user": "u"}}
            out = _run(main, 1, cfg, how)
            runs.append((how, list(seen), out, cfg))
        return runs

    differential(scenario)


def test_in_place_edits_in_a_checkpointed_200_key_state(differential):
    """The chain-with-edits program on a 200-key state and a checkpointer."""

    def scenario(E):
        seen = []
        g = E.StateGraph(Big)
        g.add_node("a", _editor(seen, "a"))
        g.add_node("b", _reader(seen, "b"))
        g.add_node("c", _reader(seen, "c"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("a", "c")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"tags": ["t"], "metadata": {"m": 1}, "configurable": {"user": "u", "thread_id": "1"}}
        app.invoke({"log": [], **{f"k{i}": i for i in range(199)}}, cfg)
        return _sorted(seen), cfg

    differential(scenario)

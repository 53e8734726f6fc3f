"""Programs written against `langgraph.utils.config` / `langgraph.utils.runnable`, which
LangGraph 1.x still re-exports for 0.x code: `get_store` / `get_config` imported from
there (langmem's examples), `ensure_config` and `patch_configurable`, and nodes built as a
`RunnableCallable` (a sync/async pair, or a subclass, as in copies of LangGraph's prebuilt
`ToolNode`). Ported by renaming the package, they run the same on lgnb.

No `from __future__ import annotations`: the injected parameters are read from real
annotations, as users write them."""

import operator
from typing import Annotated, Optional

import pytest
from _diff import acapture, acollect, capture, collect
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict


class S(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]


def _cfg(tid="compat"):
    return {"configurable": {"thread_id": tid}}


def _view(config):
    """What a program reads of a config: its keys, tags, metadata, limit, configurable."""
    return (sorted(config), list(config.get("tags") or ()), dict(config.get("metadata") or {}),
            int(config.get("recursion_limit") or 0), config.get("callbacks"),
            {k: v for k, v in (config.get("configurable") or {}).items() if not k.startswith("__")})


def test_get_store_and_get_config_imported_from_utils_config_inside_a_node(differential):
    """langmem's examples: `from langgraph.utils.config import get_store` in a node."""
    def scenario(E):
        cfgmod = E.module("utils.config")
        store = InMemoryStore()
        store.put(("users",), "u1", {"name": "Ada"})

        def node(s):
            found = cfgmod.get_store().get(("users",), "u1").value["name"]
            return {"log": [found, cfgmod.get_config()["configurable"]["thread_id"]]}

        g = E.StateGraph(S)
        g.add_node("n", node)
        g.add_edge(E.START, "n")
        app = g.compile(store=store, checkpointer=E.InMemorySaver())
        outside = capture(cfgmod.get_store)  # (lgnb's message adds the fix on a second line)
        return app.invoke({"log": []}, _cfg()), outside[:2] + (outside[2].splitlines()[0],)

    assert differential(scenario)[0]["log"] == ["Ada", "compat"]


def test_ensure_config_and_patch_configurable_outside_a_run(differential):
    def scenario(E):
        m = E.module("utils.config")
        return [
            _view(m.ensure_config()),
            _view(m.ensure_config(None, {"thread_id": "1", "tags": ["a"], "recursion_limit": 5},
                                  {"metadata": {"m": 1, "lc_versions": {"x": "1"}}, "tags": ["b"]},
                                  {"metadata": {"lc_versions": {"y": "2"}}, "configurable": {"k": 2}})),
            _view(m.ensure_config({"tags": [], "metadata": {}, "run_name": None, "max_concurrency": 3})),
            m.patch_configurable(None, {"a": 1}),
            m.patch_configurable({"tags": ["t"]}, {"a": 1}),
            m.patch_configurable({"configurable": {"a": 0, "b": 1}, "tags": ["t"]}, {"a": 1}),
        ]

    ref = differential(scenario)
    assert ref[1][5] == {"thread_id": "1", "k": 2} and ref[1][2]["thread_id"] == "1"


def test_ensure_config_inside_a_node_merges_over_the_nodes_config(differential):
    """Inside a node the ambient config is the node's: its tags and metadata come along; an
    explicit configurable that names a thread drops the node's configurable."""
    def scenario(E):
        m = E.module("utils.config")
        seen = []

        def node(s, config: RunnableConfig):
            inner = m.ensure_config({"tags": ["mine"], "metadata": {"k": "v"}})
            own = m.ensure_config({"configurable": {"thread_id": "elsewhere"}})
            seen.append((inner["tags"], inner["metadata"].get("langgraph_node"),
                         inner["metadata"].get("k"), inner["configurable"].get("thread_id"),
                         own["configurable"], inner["metadata"].get("thread_id")))
            return {"x": 1}

        g = E.StateGraph(S)
        g.add_node("n", node)
        g.add_edge(E.START, "n")
        app = g.compile(checkpointer=E.InMemorySaver())
        app.invoke({"x": 0}, {**_cfg(), "tags": ["run-tag"]})
        return seen

    ref = differential(scenario)
    assert ref[0][1] == "n" and ref[0][3] == "compat" and ref[0][4] == {"thread_id": "elsewhere"}


def _pair_graph(E, *, trace=True):
    RunnableCallable = E.module("utils.runnable").RunnableCallable

    def step(s: S, config: RunnableConfig, writer):
        writer({"sync": config["metadata"]["langgraph_node"]})
        return {"log": [f"sync {s['x']}"]}

    async def astep(s: S, config: RunnableConfig, writer):
        writer({"async": config["metadata"]["langgraph_node"]})
        return {"log": [f"async {s['x']}"]}

    g = E.StateGraph(S)
    g.add_node("pair", RunnableCallable(step, astep, trace=trace))
    g.add_edge(E.START, "pair")
    return g.compile(checkpointer=E.InMemorySaver())


@pytest.mark.parametrize("trace", [True, False])
async def test_a_runnable_callable_node_runs_its_sync_side_in_invoke_and_its_async_side_in_ainvoke(
        differential, trace):
    async def scenario(E):
        app = _pair_graph(E, trace=trace)
        return (collect(lambda: app.stream({"x": 1, "log": []}, _cfg("s"), stream_mode=["custom", "updates"])),
                await acollect(lambda: app.astream({"x": 2, "log": []}, _cfg("a"),
                                                   stream_mode=["custom", "updates"])),
                app.get_state(_cfg("a")).values)

    differential(scenario)


def test_a_runnable_callable_node_in_astream_events(differential):
    async def scenario(E):
        app = _pair_graph(E)
        events = await acollect(lambda: app.astream_events({"x": 3, "log": []}, _cfg("e"), version="v2"))
        return [(ev["event"], ev["name"], ev["metadata"].get("langgraph_node")) for ev in events
                if isinstance(ev, dict)]

    differential(scenario)


def test_a_copied_tool_node_subclassing_runnable_callable_gets_config_and_store(differential):
    """As in copies of LangGraph 0.2's prebuilt code: a class deriving from RunnableCallable
    whose `_func` takes `config` and a keyword-only `store`."""
    def scenario(E):
        RunnableCallable = E.module("utils.runnable").RunnableCallable

        class Lookup(RunnableCallable):
            def __init__(self, key):
                super().__init__(self._func, self._afunc, name="lookup", tags=["copied"], trace=False)
                self.key = key

            def _func(self, input, config: RunnableConfig, *, store: Optional[BaseStore]):
                item = store.get(("kv",), self.key) if store is not None else None
                return {"log": [f"{self.key}={item.value['v'] if item else None}",
                                config["configurable"]["thread_id"]]}

            async def _afunc(self, input, config: RunnableConfig, *, store: Optional[BaseStore]):
                return self._func(input, config, store=store)

        store = InMemoryStore()
        store.put(("kv",), "a", {"v": 42})
        g = E.StateGraph(S)
        g.add_node("lookup", Lookup("a"))
        g.add_edge(E.START, "lookup")
        app = g.compile(store=store, checkpointer=E.InMemorySaver())
        no_store = E.StateGraph(S)
        no_store.add_node("lookup", Lookup("a"))
        no_store.add_edge(E.START, "lookup")
        return (app.invoke({"log": []}, _cfg()), no_store.compile().invoke({"log": []}, _cfg("n")),
                repr(Lookup("b")))

    ref = differential(scenario)
    assert ref[0] != "raises" and ref[0]["log"] == ["a=42", "compat"], ref


def test_a_runnable_callable_on_its_own(differential):
    """Outside a graph: extra keyword arguments, `explode_args`, a returned Runnable run on
    the same input, the async side awaited, and the errors for a missing side or store."""
    async def scenario(E):
        RunnableCallable = E.module("utils.runnable").RunnableCallable

        def add(x, *, n):
            return x + n

        def kv(a, b=0, *, c=0):
            return (a, b, c)

        async def aonly(x):
            return x * 2

        def needs_store(x, store):
            return store

        def with_config(x, config: RunnableConfig):
            return (x, config["configurable"].get("k"), sorted(config))

        return [
            RunnableCallable(add, n=10).invoke(1),
            RunnableCallable(add, n=10).invoke(1, n=5),
            RunnableCallable(kv, explode_args=True).invoke(((1, 2), {"c": 3})),
            RunnableCallable(lambda x: RunnableLambda(lambda y: y + 100)).invoke(1),
            RunnableCallable(lambda x: RunnableLambda(lambda y: y + 100), recurse=False).invoke(1).__class__.__name__,
            await RunnableCallable(None, aonly).ainvoke(4),
            await RunnableCallable(add, n=1).ainvoke(4),
            capture(lambda: RunnableCallable(None, aonly).invoke(4)),
            capture(lambda: RunnableCallable(needs_store).invoke(4)),
            capture(lambda: RunnableCallable(None, None)),
            RunnableCallable(with_config).invoke(7, {"configurable": {"k": "v"}}),
            RunnableCallable(with_config).invoke(7)[:2],
            RunnableCallable(add, n=0).name, RunnableCallable(lambda x: x).name,
            await acapture(lambda: RunnableCallable(None, aonly, name="named").ainvoke(1)),
        ]

    differential(scenario)

"""Remaining observable surface: exception notes, task ordering within a step, checkpointer-
only methods called without a checkpointer, subgraph listing."""

import operator
from typing import Annotated

from typing_extensions import NotRequired, TypedDict

from _diff import acapture, capture


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def test_node_exception_gets_task_note(differential):
    def scenario(E):
        def bad(s):
            raise ValueError("with note")

        g = E.StateGraph(S)
        g.add_node("bad", bad)
        g.add_edge(E.START, "bad")
        try:
            g.compile().invoke({"log": []})
        except ValueError as e:
            return getattr(e, "__notes__", None)
        return "no error"

    differential(scenario)


def test_async_node_exception_gets_task_note(differential):
    async def scenario(E):
        async def bad(s):
            raise ValueError("async note")

        g = E.StateGraph(S)
        g.add_node("bad", bad)
        g.add_edge(E.START, "bad")
        try:
            await g.compile().ainvoke({"log": []})
        except ValueError as e:
            return getattr(e, "__notes__", None)
        return "no error"

    differential(scenario)


def test_subgraph_exception_notes(differential):
    def scenario(E):
        def bad(s):
            raise KeyError("deep")

        sub = E.StateGraph(S)
        sub.add_node("bad", bad)
        sub.add_edge(E.START, "bad")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        try:
            g.compile().invoke({"log": []})
        except KeyError as e:
            return getattr(e, "__notes__", None)
        return "no error"

    differential(scenario)


def test_task_start_order_in_a_parallel_step(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("fan", _logger("fan"))
        for n in ("zeta", "alpha", "mid"):
            g.add_node(n, _logger(n))
            g.add_edge("fan", n)
        g.add_edge(E.START, "fan")
        chunks = list(g.compile().stream({"log": []}, stream_mode="tasks"))
        return [c["name"] for c in chunks if "input" in c]

    differential(scenario)


def test_task_start_order_mixing_pull_and_push_tasks(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            i: NotRequired[int]

        g = E.StateGraph(St)
        g.add_node("first", _logger("first"))
        g.add_node("pushed", lambda s: {"log": [f"pushed{s['i']}"]})
        g.add_node("pulled", _logger("pulled"))
        g.add_edge(E.START, "first")
        g.add_edge("first", "pulled")
        g.add_conditional_edges("first", lambda s: [E.Send("pushed", {"i": i}) for i in range(2)])
        app = g.compile()
        chunks = list(app.stream({"log": []}, stream_mode="tasks"))
        return [(c["name"], c["triggers"]) for c in chunks if "input" in c], app.invoke({"log": []})

    differential(scenario)


def test_get_state_without_checkpointer_raises(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        app = g.compile()
        cfg = {"configurable": {"thread_id": "t"}}
        return (
            capture(lambda: app.get_state(cfg)),
            capture(lambda: list(app.get_state_history(cfg))),
            capture(lambda: app.update_state(cfg, {"log": ["x"]})),
        )

    differential(scenario, exc="extends")


def test_aget_state_without_checkpointer_raises(differential):
    async def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        app = g.compile()
        return await acapture(lambda: app.aget_state({"configurable": {"thread_id": "t"}}))

    differential(scenario, exc="extends")


def test_thread_id_in_config_without_checkpointer_is_harmless(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_edge(E.START, "a")
        app = g.compile()
        cfg = {"configurable": {"thread_id": "t"}}
        return app.invoke({"log": []}, cfg), app.invoke({"log": []}, cfg)

    differential(scenario, expect=({"log": ["a"]}, {"log": ["a"]}))


def test_get_subgraphs_lists_compiled_subgraph_nodes(differential):
    def scenario(E):
        inner = E.StateGraph(S)
        inner.add_node("leaf", _logger("leaf"))
        inner.add_edge(E.START, "leaf")
        mid = E.StateGraph(S)
        mid.add_node("inner", inner.compile())
        mid.add_edge(E.START, "inner")
        top = E.StateGraph(S)
        top.add_node("mid", mid.compile())
        top.add_node("plain", _logger("plain"))
        top.add_edge(E.START, "mid")
        top.add_edge("mid", "plain")
        app = top.compile()
        return (
            sorted(name for name, _ in app.get_subgraphs()),
            sorted(name for name, _ in app.get_subgraphs(recurse=True)),
        )

    differential(scenario)


def test_compiled_graph_nodes_mapping_and_channels_of_user_keys(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            x: int

        g = E.StateGraph(St)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile()
        user_channels = sorted(k for k in app.channels if not k.startswith(("__", "branch:")))
        return sorted(app.nodes), user_channels

    differential(scenario)


def test_a_node_called_on_its_own_returns_what_its_code_returns(differential):
    """LangGraph's testing guide: `graph.nodes["name"].invoke(input)` runs that node's code
    alone (no state read, no reducers, no writes): plain, config-taking, Runnable and async
    nodes, `stream`, and the error for a sync call of an async node."""
    import asyncio

    from langchain_core.runnables import RunnableLambda

    def scenario(E):
        def plain(s):
            return {"log": [s["log"][-1] + "!"]}

        def with_config(s, config):
            return {"log": [sorted(config["metadata"].items()), sorted(config["tags"])]}

        async def later(s):
            return {"log": ["async"]}

        g = E.StateGraph(S)
        g.add_node("plain", plain)
        g.add_node("with_config", with_config, metadata={"owner": "me"})
        g.add_node("runnable", RunnableLambda(lambda s: {"log": ["runnable", len(s["log"])]}))
        g.add_node("later", later)
        g.add_edge(E.START, "plain")
        app = g.compile()
        nodes = app.nodes
        return [nodes["plain"].invoke({"log": ["a"]}),
                nodes["with_config"].invoke({"log": []}, {"metadata": {"m": 1}, "tags": ["t"]}),
                nodes["runnable"].invoke({"log": [1, 2]}),
                list(nodes["plain"].stream({"log": ["b"]})),
                asyncio.run(nodes["later"].ainvoke({"log": []})),
                asyncio.run(nodes["plain"].ainvoke({"log": ["c"]})),
                capture(lambda: nodes["later"].invoke({"log": []}))]

    ref = differential(scenario)
    assert ref[0] == {"log": ["a!"]} and ref[4] == {"log": ["async"]}


def test_a_node_called_on_its_own_gets_an_empty_runtime():
    """lgnb only (LangGraph refuses the call): a node that declares `runtime` is called
    with one that has no context and no store, and a writer that drops."""
    from lgnb.graph import START, StateGraph
    from lgnb.runtime import Runtime

    def node(s, runtime: Runtime):
        runtime.stream_writer("dropped")
        return {"log": [runtime.context, runtime.store]}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    assert g.compile().nodes["node"].invoke({"log": []}) == {"log": [None, None]}


def test_a_subgraph_node_called_on_its_own_streams_the_subgraphs_chunks(differential):
    """`nodes["sub"].stream(...)` of a node that is a compiled graph streams that graph
    (its updates by default, `stream_mode=` passed through), sync and async; keywords
    given to `invoke` reach a function node's code."""
    import asyncio

    def scenario(E):
        inner = E.StateGraph(S)
        inner.add_node("step", _logger("inner"))
        inner.add_edge(E.START, "step")
        g = E.StateGraph(S)
        g.add_node("sub", inner.compile())
        g.add_node("keywords", lambda s, **kw: {"log": sorted(kw.items())})
        g.add_edge(E.START, "sub")
        nodes = g.compile().nodes

        async def astreamed():
            return [c async for c in nodes["sub"].astream({"log": []}, None, stream_mode="values")]

        return [list(nodes["sub"].stream({"log": ["x"]})),
                list(nodes["sub"].stream({"log": []}, None, stream_mode="updates")),
                asyncio.run(astreamed()),
                nodes["keywords"].invoke({"log": []}, None, extra=1),
                asyncio.run(nodes["keywords"].ainvoke({"log": []}, None, extra=2))]

    ref = differential(scenario)
    assert ref[0] == [{"step": {"log": ["inner"]}}] and ref[3] == {"log": [("extra", 1)]}


def test_a_node_that_returns_a_runnable_runs_it_on_its_input(differential):
    """LangChain's RunnableLambda rule, kept by LangGraph for nodes: a node may return a
    Runnable (a chain chosen at run time), which then runs on the node's input, and its
    output is the node's update (sync and async nodes)."""
    import asyncio

    from langchain_core.runnables import RunnableLambda

    def scenario(E):
        def pick(s):
            return RunnableLambda(lambda st: {"log": ["chain saw " + ",".join(st["log"])]})

        async def apick(s):
            return RunnableLambda(lambda st: {"log": ["async chain"]})

        def build(*names):
            g = E.StateGraph(S)
            g.add_node("a", _logger("a"))
            g.add_edge(E.START, "a")
            last = "a"
            for name in names:
                g.add_node(name, {"pick": pick, "apick": apick}[name])
                g.add_edge(last, name)
                last = name
            return g.compile()

        return (list(build("pick").stream({"log": []})),
                asyncio.run(build("pick", "apick").ainvoke({"log": []})))

    ref = differential(scenario)
    assert ref[0][-1] == {"pick": {"log": ["chain saw a"]}}
    assert ref[1] == {"log": ["a", "chain saw a", "async chain"]}

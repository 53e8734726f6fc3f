"""interrupt() without a checkpointer (what a run shows before persistence is involved) and
propagation of config/metadata into pushed tasks and subgraphs."""

import operator
from typing import Annotated

from typing_extensions import NotRequired, TypedDict

import pytest
from _diff import acollect, capture, collect


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


def _asking(E, *, before=None):
    def ask(s):
        answer = E.interrupt({"question": "approve?", "n": len(s["log"])})
        return {"log": [f"answer:{answer}"]}

    g = E.StateGraph(S)
    g.add_node("prep", _logger("prep"))
    g.add_node("ask", ask)
    g.add_node("after", _logger("after"))
    g.add_edge(E.START, "prep")
    g.add_edge("prep", "ask")
    g.add_edge("ask", "after")
    return g.compile()


# --- interrupts without checkpointer ---------------------------------------------------------


def test_invoke_v2_with_interrupt_returns_graph_output_interrupts(differential):
    def scenario(E):
        out = _asking(E).invoke({"log": []}, version="v2")
        return type(out).__name__, out.value, out.interrupts

    differential(scenario)


def test_stream_v2_with_interrupt_values_carry_interrupts(differential):
    def scenario(E):
        return collect(lambda: _asking(E).stream({"log": []}, stream_mode=["values", "updates"], version="v2"))

    differential(scenario)


def test_stream_tasks_with_interrupt_payload(differential):
    def scenario(E):
        return collect(lambda: _asking(E).stream({"log": []}, stream_mode=["tasks", "debug"]))

    differential(scenario)


def test_parallel_interrupts_without_checkpointer(differential):
    def scenario(E):
        def mk(n):
            def f(s):
                return {"log": [E.interrupt(f"q-{n}")]}

            return f

        g = E.StateGraph(S)
        g.add_node("x", mk("x"))
        g.add_node("y", mk("y"))
        g.add_edge(E.START, "x")
        g.add_edge(E.START, "y")
        out = g.compile().invoke({"log": []})
        ints = sorted(out.get("__interrupt__", []), key=lambda i: repr(i.value))
        return {k: v for k, v in out.items() if k != "__interrupt__"}, [i.value for i in ints], len({i.id for i in ints})

    differential(scenario)


def test_interrupt_inside_subgraph_without_checkpointer(differential):
    def scenario(E):
        def ask(s):
            return {"log": [E.interrupt("inner question")]}

        sub = E.StateGraph(S)
        sub.add_node("ask", ask)
        sub.add_edge(E.START, "ask")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_node("after", _logger("after"))
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "after")
        app = g.compile()
        return (
            capture(lambda: app.invoke({"log": []})),
            collect(lambda: app.stream({"log": []}, stream_mode="updates", subgraphs=True)),
        )

    differential(scenario)


def test_interrupt_after_custom_event_and_partial_updates(differential):
    def scenario(E):
        def ask(s, writer: E.StreamWriter):
            writer("before interrupt")
            E.interrupt("stop here")
            writer("never")
            return {"log": ["never"]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_node("side", _logger("side"))
        g.add_edge(E.START, "ask")
        g.add_edge(E.START, "side")
        chunks = collect(lambda: g.compile().stream({"log": []}, stream_mode=["custom", "updates", "values"]))
        # `side` and `ask` run in one step: group that step's events as a multiset
        head, rest = chunks[:1], chunks[1:]
        return head, sorted(rest, key=repr)

    differential(scenario)


def test_ainvoke_interrupt_without_checkpointer(differential):
    async def scenario(E):
        async def ask(s):
            return {"log": [E.interrupt({"async": True})]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app = g.compile()
        return await app.ainvoke({"log": []}), await acollect(lambda: app.astream({"log": []}, stream_mode="updates"))

    differential(scenario)


def test_interrupt_class_fields(differential):
    def scenario(E):
        captured = []

        def ask(s):
            try:
                E.interrupt("v")
            except Exception as e:  # GraphInterrupt bubbles through user code
                captured.append((type(e).__name__, isinstance(e, E.errors.GraphInterrupt)))
                raise
            return {}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        g.compile().invoke({"log": []})
        return captured

    differential(scenario, expect=[("GraphInterrupt", True)])


# --- config propagation --------------------------------------------------------------------


def test_config_metadata_of_pushed_send_tasks(differential):
    def scenario(E):
        seen = []

        def w(s, config):
            md = config["metadata"]
            seen.append((s["i"], md["langgraph_node"], md["langgraph_triggers"], md["langgraph_path"][:2], md["langgraph_step"]))
            return {"log": [s["i"]]}

        g = E.StateGraph(S)
        g.add_node("w", w)
        g.add_conditional_edges(E.START, lambda s: [E.Send("w", {"i": i}) for i in range(3)])
        g.compile().invoke({"log": []})
        return sorted(seen)

    differential(scenario)


def test_configurable_and_tags_reach_subgraph_nodes(differential):
    def scenario(E):
        seen = []

        def inner(s, config):
            seen.append((config["configurable"].get("user"), sorted(t for t in config.get("tags", []) if not t.startswith("graph:")),
                         config["metadata"].get("run_md"), config["metadata"]["langgraph_node"]))
            return {"log": ["inner"]}

        sub = E.StateGraph(S)
        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        g.compile().invoke({"log": []}, {"configurable": {"user": "u"}, "tags": ["t"], "metadata": {"run_md": 1}})
        return seen

    differential(scenario)


def test_step_numbers_in_metadata_across_loop(differential):
    def scenario(E):
        class C(TypedDict):
            n: int
            steps: Annotated[list, operator.add]

        def inc(s, config):
            return {"n": s["n"] + 1, "steps": [config["metadata"]["langgraph_step"]]}

        g = E.StateGraph(C)
        g.add_node("inc", inc)
        g.add_edge(E.START, "inc")
        g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 4 else E.END)
        return g.compile().invoke({"n": 0, "steps": []})

    differential(scenario)


def test_subgraph_step_numbers_restart_at_one(differential):
    def scenario(E):
        seen = []

        def rec(name):
            def f(s, config):
                seen.append((name, config["metadata"]["langgraph_step"]))
                return {"log": [name]}

            return f

        sub = E.StateGraph(S)
        sub.add_node("s1", rec("s1"))
        sub.add_node("s2", rec("s2"))
        sub.add_edge(E.START, "s1")
        sub.add_edge("s1", "s2")
        g = E.StateGraph(S)
        g.add_node("p1", rec("p1"))
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "p1")
        g.add_edge("p1", "sub")
        g.compile().invoke({"log": []})
        return seen

    differential(scenario)


def test_parallel_subgraphs_stream_with_namespaces(differential):
    def scenario(E):
        def mk_sub(tag):
            sub = E.StateGraph(S)
            sub.add_node("inner", _logger(f"inner-{tag}"))
            sub.add_edge(E.START, "inner")
            return sub.compile()

        g = E.StateGraph(S)
        g.add_node("left", mk_sub("L"))
        g.add_node("right", mk_sub("R"))
        g.add_edge(E.START, "left")
        g.add_edge(E.START, "right")
        app = g.compile()
        chunks = list(app.stream({"log": []}, stream_mode="updates", subgraphs=True))
        # per-namespace order is deterministic; interleaving between parallel subgraphs is not
        by_ns = {}
        for ns, upd in chunks:
            key = ns[0].split(":")[0] if ns else ""
            by_ns.setdefault(key, []).append(upd)
        by_ns[""] = sorted(by_ns.get("", []), key=repr)  # root: completion order of left/right
        return app.invoke({"log": []}), dict(sorted(by_ns.items()))

    differential(scenario)


def test_subgraph_fan_out_inside_subgraph_namespaces(differential):
    def scenario(E):
        class It(TypedDict):
            log: Annotated[list, operator.add]
            i: NotRequired[int]

        sub = E.StateGraph(It)
        sub.add_node("w", lambda s: {"log": [f"w{s['i']}"]})
        sub.add_conditional_edges(E.START, lambda s: [E.Send("w", {"i": i}) for i in range(2)])
        g = E.StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "sub")
        app = g.compile()
        chunks = list(app.stream({"log": []}, stream_mode="values", subgraphs=True))
        return app.invoke({"log": []}), chunks

    differential(scenario)


def test_run_metadata_becomes_checkpoint_metadata_in_every_saver(differential, tmp_path):
    """`config["metadata"]` scalars (and `configurable` scalars) are stored with each
    checkpoint: LangGraph Server's `run_id` lives there, and `delete_for_runs` and
    `list(filter=...)` find checkpoints by it."""

    def scenario(E):
        import importlib

        sqlite = importlib.import_module(f"{E.root}.checkpoint.sqlite")
        sg = E.StateGraph(S)
        sg.add_node("x", lambda s: {"log": ["x"]})
        sg.add_edge(E.START, "x")
        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("sub", sg.compile())
        g.add_edge(E.START, "a")
        g.add_edge("a", "sub")
        out = []
        path = tmp_path / f"{E.label}.sqlite"
        with sqlite.SqliteSaver.from_conn_string(str(path)) as on_disk:
            for saver in (E.InMemorySaver(), on_disk):
                app = g.compile(checkpointer=saver)
                config = {"configurable": {"thread_id": "t", "user": "u1", "obj": {"a": 1}},
                          "metadata": {"run_id": "r1", "x": 1, "f": 1.5, "d": {"no": 1}, "__hidden": 1}}
                app.invoke({"log": []}, config)
                app.update_state({"configurable": {"thread_id": "t"}, "metadata": {"upd": "yes"}},
                                 {"log": ["u"]})
                listed = [t.metadata for t in saver.list(None)]
                found = [t.metadata["step"] for t in saver.list(None, filter={"run_id": "r1", "x": 1})]
                out.append((listed, found))
        return out

    differential(scenario)


def test_a_nodes_config_has_langgraphs_public_configurable_keys(differential):
    """A node reads `config["configurable"]`: `thread_id`, `checkpoint_ns`, `checkpoint_map`
    and `checkpoint_id` (None inside a task) are there, with or without a checkpointer, in
    a graph and in a subgraph node; `config["configurable"]["checkpoint_id"]` is no KeyError."""

    def scenario(E):
        seen = []

        def look(state, config):
            c = config["configurable"]
            seen.append((sorted(k for k in c if not k.startswith("__")), c["checkpoint_id"],
                         sorted(c["checkpoint_map"]).__len__()))
            return {"log": ["x"]}

        sub = E.StateGraph(S)
        sub.add_node("inner", look)
        sub.add_edge(E.START, "inner")
        out = []
        for cp in (None, E.InMemorySaver()):
            seen.clear()
            g = E.StateGraph(S)
            g.add_node("outer", look)
            g.add_node("sub", sub.compile())
            g.add_edge(E.START, "outer")
            g.add_edge("outer", "sub")
            g.compile(checkpointer=cp).invoke({"log": []}, {"configurable": {"thread_id": "t"}})
            out.append(list(seen))
        return out

    differential(scenario)


# --- checkpoint_map: the checkpoints a node runs at ----------------------------------------

_CHECKPOINT_MAP_PROGRAM = """
import json, operator, re, sys
from typing import Annotated
from typing_extensions import TypedDict
E = sys.argv[1]
StateGraph = __import__(E + ".graph", fromlist=["x"]).StateGraph
START = __import__(E + ".graph", fromlist=["x"]).START
InMemorySaver = __import__(E + ".checkpoint.memory", fromlist=["x"]).InMemorySaver

class S(TypedDict):
    log: Annotated[list, operator.add]

seen = []
def record(name):
    def node(s, config):
        seen.append((name, config["configurable"].get("checkpoint_map", "missing")))
        return {"log": [name]}
    return node

inner = StateGraph(S)
inner.add_node("inner", record("inner"))
inner.add_edge(START, "inner")
called = inner.compile(checkpointer=True)
def calls(s, config):
    seen.append(("calls", config["configurable"].get("checkpoint_map", "missing")))
    return called.invoke({"log": []}, config)
g = StateGraph(S)
g.add_node("top", record("top"))
g.add_node("sub", inner.compile())
g.add_node("calls", calls)
g.add_edge(START, "top")
g.add_edge("top", "sub")
g.add_edge("sub", "calls")
out = []
for saver in (None, InMemorySaver()):
    seen.clear()
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"log": []}, cfg)
    history = [h.config["configurable"]["checkpoint_id"] for h in app.get_state_history(cfg)] if saver else []
    out.append([list(seen), history])
assert "langgraph.pregel.main" not in sys.modules or E == "langgraph"
labels = {}
text = re.sub(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}",
              lambda m: labels.setdefault(m.group(0), f"<id{len(labels)}>"), json.dumps(out))
print(text)
"""


_CHECKPOINT_MAP_OF_TASKS = """
import json, re, sys
from typing_extensions import TypedDict
E = sys.argv[1]
get_config = __import__(E + ".config", fromlist=["x"]).get_config
func = __import__(E + ".func", fromlist=["x"])
graph = __import__(E + ".graph", fromlist=["x"])
InMemorySaver = __import__(E + ".checkpoint.memory", fromlist=["x"]).InMemorySaver
seen = []
def show(tag):
    c = get_config()["configurable"]
    seen.append((tag, c["checkpoint_ns"], c.get("checkpoint_map", "missing")))

@func.task
def inner(i):
    show("inner")
    return i

@func.task
def outer(i):
    show("outer")
    return inner(i).result()

@func.entrypoint(checkpointer=InMemorySaver())
def main(i):
    show("entry")
    return outer(i).result()

main.invoke(1, {"configurable": {"thread_id": "a"}})

class S(TypedDict):
    x: int

def node(s):
    show("node")
    return {"x": outer(s["x"]).result()}

g = graph.StateGraph(S)
g.add_node("n", node)
g.add_edge(graph.START, "n")
g.compile(checkpointer=InMemorySaver()).invoke({"x": 1}, {"configurable": {"thread_id": "b"}})
assert "langgraph.pregel.main" not in sys.modules or E == "langgraph"
labels = {}
print(re.sub(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}",
             lambda m: labels.setdefault(m.group(0), f"<id{len(labels)}>"), json.dumps(seen)))
"""


@pytest.mark.parametrize("program", ["graphs", "tasks"])
def test_every_node_sees_the_checkpoints_it_runs_at_in_checkpoint_map(tmp_path, program):
    # a node reads `config["configurable"]["checkpoint_map"]`: its graph's checkpoint and
    # the enclosing graphs' ones, by namespace: at top level, in a subgraph node, and in a
    # graph invoked inside a node (its own entry included), with a saver and without. Each
    # engine in a process of its own: lgnb must not owe the keys to LangGraph being loaded
    import subprocess
    import sys

    script = tmp_path / "program.py"
    # (a `@task` call's config extends its caller's: its map names the callers' namespaces)
    script.write_text(_CHECKPOINT_MAP_PROGRAM if program == "graphs" else _CHECKPOINT_MAP_OF_TASKS)
    runs = {e: subprocess.run([sys.executable, str(script), e], capture_output=True, text=True, check=True).stdout
            for e in ("langgraph", "lgnb")}
    assert "missing" not in runs["langgraph"]
    assert runs["lgnb"] == runs["langgraph"]

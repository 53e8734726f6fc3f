"""Second review of the ported public modules and the node config, on both engines.

Generative-UI messages (`graph.ui`) where users push them: async nodes, subgraph nodes
(which state gets the write, which namespace streams the event), `Send` workers, the
functional API, a tool run by LangGraph's `ToolNode`, a node that fails or is retried, a
node that pauses on `interrupt()` (every durability), a state without the `ui` key, and a
chat model's reply in `messages` mode. The node's config (`tags` with node, subgraph and
call-level tags; `get_config()` inside a tool or an inner Runnable, LangChain's innermost
config as on LangGraph), the graph a node's code invokes found when the graph compiles,
a user's own managed value written against `managed.base`, and `MessageGraph` in a tool
loop with a checkpointer. Only ids and timestamps are normalized (by the harness).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import importlib
import operator
import warnings
from typing import Annotated, Any

from _diff import acollect, capture, collect, logged_warnings, snapshot_summary
from _scripted import Scripted
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode
from typing_extensions import TypedDict


def _ui(E: Any) -> Any:
    return importlib.import_module(f"{E.root}.graph.ui")


def _ui_state(E: Any) -> Any:
    class S(TypedDict):
        ui: Annotated[list, _ui(E).ui_message_reducer]
        log: Annotated[list, operator.add]

    return S


# --- generative UI ---------------------------------------------------------------------


def test_an_async_node_pushes_deletes_and_pushes_again_across_awaits(differential: Any) -> None:
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        S = _ui_state(E)

        async def node(state: S) -> dict:
            ui.push_ui_message("spinner", {"n": 1}, id="spin")
            await asyncio.sleep(0)
            ui.delete_ui_message("spin")
            await asyncio.sleep(0)
            card = ui.push_ui_message("card", {"n": 2}, id="card", metadata={"k": "v"})
            return {"log": [card["metadata"]]}

        g = E.StateGraph(S)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        app = g.compile()

        async def go() -> Any:
            return await acollect(lambda: app.astream({"ui": [], "log": []}, stream_mode=["custom", "values"]))

        return go()

    out = differential(scenario)
    assert [m["id"] for m in out[-1][1]["ui"]] == ["card"]


def test_a_subgraph_node_pushes_into_its_own_state_and_streams_under_its_namespace(differential: Any) -> None:
    """The inner node's write lands in the subgraph's `ui` and reaches the parent through the
    subgraph's output; the custom event streams under the subgraph's namespace. A subgraph
    whose state has no `ui` key streams the event but keeps no write (LangGraph warns)."""
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        S = _ui_state(E)

        class Bare(TypedDict):
            log: Annotated[list, operator.add]

        def inner(state: S) -> dict:
            ui.push_ui_message("chart", {"from": "inner"}, id="chart")
            return {"log": ["inner"]}

        def bare(state: Bare) -> dict:
            ui.push_ui_message("toast", {"from": "bare"}, id="toast")
            return {"log": ["bare"]}

        sg = E.StateGraph(S)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")
        bg = E.StateGraph(Bare)
        bg.add_node("bare", bare)
        bg.add_edge(E.START, "bare")
        g = E.StateGraph(S)
        g.add_node("sub", sg.compile())
        g.add_node("plain", bg.compile())
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "plain")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "ui-sub"}}
        with logged_warnings() as warned:
            chunks = collect(lambda: app.stream({"ui": [], "log": []}, cfg,
                                                stream_mode=["custom", "updates"], subgraphs=True))
        return chunks, warned, app.get_state(cfg).values

    chunks, warned, values = differential(scenario)
    assert [m["id"] for m in values["ui"]] == ["chart"]
    assert any("unknown channel ui" in w for w in warned)


def test_send_workers_each_push_a_card(differential: Any) -> None:
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        S = _ui_state(E)

        def worker(arg: dict) -> dict:
            ui.push_ui_message("row", {"n": arg["n"]}, id=f"row-{arg['n']}")
            return {"log": [arg["n"]]}

        g = E.StateGraph(S)
        g.add_node("worker", worker)
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"n": n}) for n in (1, 2, 3)])
        out = g.compile().invoke({"ui": [], "log": []})
        return sorted(m["id"] for m in out["ui"]), sorted(out["log"])

    assert differential(scenario) == (["row-1", "row-2", "row-3"], [1, 2, 3])


def test_parallel_nodes_push_the_same_id_and_a_merge_keeps_both_props(differential: Any) -> None:
    """Writes of one step reduce in the tasks' order, whichever finished first."""
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        S = _ui_state(E)

        def a(state: S) -> None:
            ui.push_ui_message("card", {"a": 1}, id="card")

        def b(state: S) -> None:
            ui.push_ui_message("card", {"b": 2}, id="card", merge=True)

        g = E.StateGraph(S)
        g.add_node("a", a)
        g.add_node("b", b)
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        return g.compile().invoke({"ui": [], "log": []})["ui"]

    out = differential(scenario)
    assert out[0]["props"] == {"a": 1, "b": 2}


def test_the_functional_api_pushes_from_an_entrypoint_and_a_task(differential: Any) -> None:
    """An entrypoint's state is its return value: the pushes stream, and the `ui` writes have
    no channel to land in (dropped, with LangGraph's warning)."""
    def scenario(E: Any) -> Any:
        ui = _ui(E)

        @E.func.task
        def render(n: int) -> int:
            ui.push_ui_message("row", {"n": n}, id=f"row-{n}")
            return n * 10

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def main(n: int) -> int:
            ui.push_ui_message("header", {"n": n}, id="header")
            return render(n).result()

        cfg = {"configurable": {"thread_id": "ui-func"}}
        with logged_warnings() as warned:
            chunks = collect(lambda: main.stream(2, cfg, stream_mode=["custom", "updates"]))
        return chunks, main.get_state(cfg).values, sorted(warned)

    chunks, value, _warned = differential(scenario)
    assert value == 20 and [c[1]["id"] for c in chunks if c[0] == "custom"] == ["header", "row-2"]


def test_a_tool_run_by_toolnode_pushes_a_card_with_the_tools_config(differential: Any) -> None:
    """Inside the tool, `get_config()` and the card's metadata are the tool run's config
    (LangChain's innermost: `tags` [] when the run has none), and the write joins the
    ToolNode's update."""
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        UI_REDUCER = ui.ui_message_reducer

        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            ui: Annotated[list, UI_REDUCER]

        seen: list[Any] = []

        @tool
        def weather(city: str) -> str:
            """The weather in a city."""
            cfg = E.get_config()
            seen.append((cfg.get("tags", "no tags"), cfg.get("recursion_limit"),
                         sorted(cfg.get("metadata") or {}), cfg["configurable"].get("thread_id")))
            ui.push_ui_message("weather", {"city": city}, id=f"w-{city}")
            return "sunny"

        def agent(state: S) -> dict:
            if isinstance(state["messages"][-1], ToolMessage):
                return {"messages": [AIMessage(content="done", id="a2")]}
            calls = [{"name": "weather", "args": {"city": c}, "id": f"tc-{c}"} for c in ("Paris", "Oslo")]
            return {"messages": [AIMessage(content="", id="a1", tool_calls=calls)]}

        g = E.StateGraph(S)
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([weather]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else E.END)
        g.add_edge("tools", "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = []
        for tags in ([], ["chat"]):
            cfg = {"configurable": {"thread_id": f"ui-tools-{len(tags)}"}, "tags": tags}
            final = app.invoke({"messages": [HumanMessage("weather?", id="h")], "ui": []}, cfg)
            out.append(sorted((m["id"], m["metadata"]["tags"]) for m in final["ui"]))
        return out, sorted(seen)

    (no_tags, tagged), seen = differential(scenario)
    assert no_tags == [("w-Oslo", []), ("w-Paris", [])]
    assert tagged == [("w-Oslo", ["chat"]), ("w-Paris", ["chat"])]


def test_get_config_inside_an_inner_runnable_is_its_config(differential: Any) -> None:
    """`get_config()` from a Runnable a node invokes (plain, piped, with its own tags) is
    that Runnable's config, as LangGraph returns LangChain's innermost; in the node itself
    it is the node's."""
    def scenario(E: Any) -> Any:
        class S(TypedDict):
            x: int

        seen: list[Any] = []

        def look(x: int) -> int:
            cfg = E.get_config()
            seen.append((cfg.get("tags", "no tags"), cfg.get("recursion_limit", "no limit"),
                         (cfg.get("metadata") or {}).get("langgraph_node")))
            return x

        inner = RunnableLambda(look)

        def node(state: S) -> dict:
            look(0)
            inner.invoke(1)
            (inner | inner).invoke(2)
            inner.with_config(tags=["inner"]).invoke(3)
            return {}

        g = E.StateGraph(S)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        app = g.compile()
        app.invoke({"x": 0})
        app.invoke({"x": 0}, {"tags": ["run"]})
        return seen

    out = differential(scenario)
    assert out[0] == ("no tags", "no limit", "node") and out[1][0] == []


def test_a_failing_node_streamed_its_card_and_a_retried_one_keeps_only_the_last_attempts(differential: Any) -> None:
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        S = _ui_state(E)
        attempts: list[int] = []

        def flaky(state: S) -> dict:
            attempts.append(1)
            ui.push_ui_message("try", {"n": len(attempts)}, id=f"try-{len(attempts)}")
            if len(attempts) < 3:
                raise ValueError(f"attempt {len(attempts)} failed")
            return {"log": ["ok"]}

        def broken(state: S) -> dict:
            ui.push_ui_message("card", {}, id="card")
            raise ValueError("broken")

        out = []
        for name, fn, policy in (("flaky", flaky, E.RetryPolicy(initial_interval=0, jitter=False, retry_on=ValueError)),
                                 ("broken", broken, None)):
            g = E.StateGraph(S)
            g.add_node(name, fn, retry_policy=policy)
            g.add_edge(E.START, name)
            app = g.compile(checkpointer=E.InMemorySaver())
            cfg = {"configurable": {"thread_id": name}}
            out.append(collect(lambda app=app, cfg=cfg: app.stream({"ui": [], "log": []}, cfg, stream_mode=["custom", "values"])))
            out.append(snapshot_summary(app.get_state(cfg), errors=True))
        return out

    flaky, flaky_state, broken, _ = differential(scenario)
    assert [m["id"] for m in flaky_state["values"]["ui"]] == ["try-3"]
    assert broken[-1] == ("raises", "ValueError", "broken") and broken[1][0] == "custom"


def test_pushes_before_and_after_an_interrupt_on_every_durability(differential: Any) -> None:
    """The node runs again on resume: the card before the question streams twice and is
    kept once (same id), the one after the answer once."""
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        S = _ui_state(E)

        def ask(state: S) -> dict:
            ui.push_ui_message("question", {}, id="q")
            answer = E.interrupt("city?")
            ui.push_ui_message("answer", {"city": answer}, id="a")
            return {"log": [answer]}

        g = E.StateGraph(S)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        out = []
        for durability in ("sync", "async", "exit"):
            app = g.compile(checkpointer=E.InMemorySaver())
            cfg = {"configurable": {"thread_id": durability}}
            out.append(collect(lambda app=app, cfg=cfg, d=durability: app.stream(
                {"ui": [], "log": []}, cfg, stream_mode=["custom", "updates"], durability=d)))
            out.append(app.get_state(cfg).values)
            out.append(collect(lambda app=app, cfg=cfg, d=durability: app.stream(
                E.Command(resume="Oslo"), cfg, stream_mode=["custom", "updates"], durability=d)))
            out.append(app.get_state(cfg).values)
        return out

    out = differential(scenario)
    assert [m["id"] for m in out[3]["ui"]] == ["q", "a"]


def test_ui_errors_users_meet(differential: Any) -> None:
    """Deleting an id that was never pushed fails when the step's writes reduce (the
    reducer's message); a state without the key drops the write with a warning; pushing
    with `state_key=None` touches no state."""
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        S = _ui_state(E)

        class NoUi(TypedDict):
            log: Annotated[list, operator.add]

        def delete_missing(state: S) -> dict:
            ui.delete_ui_message("never-pushed")
            return {"log": ["deleted"]}

        def no_key(state: NoUi) -> dict:
            ui.push_ui_message("card", {}, id="card")
            ui.push_ui_message("toast", {}, id="toast", state_key=None)
            return {"log": ["pushed"]}

        out = []
        for schema, fn in ((S, delete_missing), (NoUi, no_key)):
            g = E.StateGraph(schema)
            g.add_node("n", fn)
            g.add_edge(E.START, "n")
            with logged_warnings() as warned:
                out.append(collect(lambda g=g: g.compile().stream({"log": []}, stream_mode=["custom", "values"])))
            out.append(warned)
        return out

    deleted, _, pushed, warned = differential(scenario)
    assert deleted[-1][0] == "raises" and "never-pushed" in deleted[-1][2]
    assert pushed[-1] == ("values", {"log": ["pushed"]}) and any("unknown channel ui" in w for w in warned)


def test_a_card_tied_to_the_models_reply_in_messages_mode(differential: Any) -> None:
    """LangGraph's generative-UI recipe: call the model, push a card with `message=` its
    reply (the card's metadata names the message id), return the reply."""
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        UI_REDUCER = ui.ui_message_reducer

        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            ui: Annotated[list, UI_REDUCER]

        model = Scripted(script=iter([AIMessage(content="It is sunny", id="reply-1")]))

        def chat(state: S) -> dict:
            reply = model.invoke(state["messages"])
            ui.push_ui_message("weather", {"sky": "sunny"}, message=reply)
            ui.push_ui_message("note", {}, id="n", message={"role": "ai", "content": "x", "id": "dict-id"})
            ui.push_ui_message("plain", {}, id="p", message=AIMessage(content="no id"))
            return {"messages": [reply]}

        g = E.StateGraph(S)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        chunks = collect(lambda: g.compile().stream({"messages": [HumanMessage("weather?", id="h")], "ui": []},
                                                    stream_mode=["messages", "custom"]))
        custom = [c[1] for c in chunks if c[0] == "custom"]
        tokens = [(c[1][0].content, c[1][1].get("langgraph_node")) for c in chunks if c[0] == "messages"]
        return custom, tokens

    custom, tokens = differential(scenario)
    assert [c["metadata"].get("message_id") for c in custom] == ["reply-1", "dict-id", None]


# --- node configs ----------------------------------------------------------------------


def test_tags_a_node_sees_with_node_subgraph_and_call_tags(differential: Any) -> None:
    def scenario(E: Any) -> Any:
        class S(TypedDict):
            x: int

        seen: list[Any] = []

        def record(where: str) -> Any:
            def node(state: S, config: RunnableConfig) -> dict:
                seen.append((where, config.get("tags", "no tags"), config.get("run_name", "no name")))
                return {}

            return node

        sg = E.StateGraph(S)
        sg.add_node("inner", record("inner"))
        sg.add_edge(E.START, "inner")
        sub = sg.compile()

        def caller(state: S) -> dict:
            sub.invoke(state)
            sub.invoke(state, {"tags": ["call"]})
            return {}

        g = E.StateGraph(S)
        g.add_node("tagged", RunnableLambda(record("tagged")).with_config(tags=["node-tag"]))
        g.add_node("sub", sub.with_config(tags=["sub-tag"], run_name="SUB"))
        g.add_node("caller", caller)
        g.add_edge(E.START, "tagged")
        g.add_edge("tagged", "sub")
        g.add_edge("sub", "caller")
        app = g.compile()
        app.invoke({"x": 0})
        app.invoke({"x": 0}, {"tags": ["run"]})
        app.with_config(tags=["bound"]).invoke({"x": 0})
        return seen

    out = differential(scenario)
    assert out[0] == ("tagged", ["node-tag"], "no name")


# --- the graph a node's code invokes, found at compile ---------------------------------


def test_a_graph_assigned_after_compile_is_not_the_nodes_subgraph_until_recompiled(differential: Any) -> None:
    """LangGraph finds a node's subgraph when it compiles: a closure (or module global)
    assigned later is run nested all the same, but is not listed, drawn or read as the
    node's subgraph; compiling the builder again finds it; `with_config` copies keep what
    their graph found; a `Send` target behaves the same."""
    def scenario(E: Any) -> Any:
        class S(TypedDict):
            x: int

        def ask(state: S) -> dict:
            return {"x": state["x"] + E.interrupt("more?")}

        sg = E.StateGraph(S)
        sg.add_node("inner", lambda s: {"x": s["x"] + 1})
        sg.add_node("ask", ask)
        sg.add_edge(E.START, "inner")
        sg.add_edge("inner", "ask")
        late: Any = None

        def node(state: S) -> dict:
            return late.invoke(state)

        g = E.StateGraph(S)
        g.add_node("node", node)
        g.add_conditional_edges(E.START, lambda s: [E.Send("node", {"x": s["x"]})])
        early = g.compile(checkpointer=E.InMemorySaver())
        late = sg.compile()
        later = g.compile(checkpointer=E.InMemorySaver())
        out = []
        for app in (early, early.with_config(tags=["t"]), later):
            cfg = {"configurable": {"thread_id": "late"}}
            out.append([name for name, _ in app.get_subgraphs()])
            out.append(sorted(app.get_graph(xray=True).nodes))
            out.append(collect(lambda app=app, cfg=cfg: app.stream({"x": 0}, cfg, subgraphs=True)))
            out.append(snapshot_summary(app.get_state(cfg, subgraphs=True)))
            out.append(collect(lambda app=app, cfg=cfg: app.stream(E.Command(resume=5), cfg, subgraphs=True)))
        return out

    out = differential(scenario)
    assert out[0] == [] and out[10] == ["node"]


# --- managed values and MessageGraph ----------------------------------------------------


def test_a_users_own_managed_value_written_against_managed_base(differential: Any) -> None:
    """`class StepNo(ManagedValue[int])` with LangGraph's `get(scratchpad)` contract, beside
    the shipped ones; and `managed.base`'s public names."""
    def scenario(E: Any) -> Any:
        base = importlib.import_module(f"{E.root}.managed.base")
        shipped = importlib.import_module(f"{E.root}.managed.is_last_step")

        class StepNo(base.ManagedValue[int]):
            @staticmethod
            def get(scratchpad: Any) -> int:
                return scratchpad.step

        class S(TypedDict):
            log: Annotated[list, operator.add]
            step_no: Annotated[int, StepNo]
            remaining: shipped.RemainingSteps

        def node(state: S) -> dict:
            return {"log": [(state["step_no"], state["remaining"])]}

        g = E.StateGraph(S)
        g.add_node("a", node)
        g.add_node("b", node)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        names = [n for n in ("ManagedValue", "ManagedValueSpec", "ManagedValueMapping", "is_managed_value")
                 if hasattr(base, n)]
        return (g.compile().invoke({"log": []}, {"recursion_limit": 10}), names,
                base.is_managed_value(StepNo), base.is_managed_value(int))

    out = differential(scenario)
    assert out[0]["log"] == [(1, 9), (2, 8)]


def test_message_graph_tool_loop_with_a_checkpointer(differential: Any) -> None:
    """The deprecated MessageGraph as old tutorials use it: a tool loop, then the thread
    edited with `update_state` (a message replaced by id, one removed), then a plain
    message list as the next input."""
    def scenario(E: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = importlib.import_module(f"{E.root}.graph").MessageGraph()
        turns = iter([
            AIMessage(content="", id="a1", tool_calls=[{"name": "t", "args": {}, "id": "tc"}]),
            [AIMessage(content="done", id="a2")],
            AIMessage(content="again", id="a3"),
        ])
        g.add_node("agent", lambda msgs: next(turns))
        g.add_node("tools", lambda msgs: ToolMessage(content="res", tool_call_id="tc", id="t1"))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda m: "tools" if m[-1].tool_calls else E.END)
        g.add_edge("tools", "agent")
        app = g.compile(checkpointer=E.InMemorySaver())
        cfg = {"configurable": {"thread_id": "mg"}}
        out: list[Any] = [collect(lambda: app.stream([HumanMessage("hi", id="h")], cfg, stream_mode=["updates", "values"]))]
        app.update_state(cfg, [AIMessage(content="replaced", id="a2")])
        app.update_state(cfg, RemoveMessage(id="h"))
        out.append(snapshot_summary(app.get_state(cfg)))
        out.append(capture(lambda: app.invoke([("user", "more")], cfg)))
        out.append([snapshot_summary(s)["next"] for s in app.get_state_history(cfg)])
        return out

    out = differential(scenario)
    assert out[2][-1][1]["content"] == "again"

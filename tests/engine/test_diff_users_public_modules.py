"""Programs that import LangGraph's smaller public modules port by renaming the package:
generative-UI messages (`langgraph.graph.ui`: a node pushes components for a front end to
render, on the `custom` stream and into a `ui` state key), the deprecated `MessageGraph`
from `langgraph.graph`, the managed values from `langgraph.managed.is_last_step`, the type
parameters of `langgraph.typing` and `langgraph.version`. Each scenario runs on both engines."""

import importlib
import operator
from typing import Annotated, Any

import pytest
from _diff import capture
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict

PORTED_MODULES = ["graph.ui", "managed.is_last_step", "typing", "version"]


def _ui(E: Any) -> Any:
    return importlib.import_module(f"{E.root}.graph.ui")


def _ui_graph(E: Any, *, checkpointer: Any = None) -> Any:
    """A weather node: a chat reply, a card tied to it, the card's props updated (merge),
    a spinner pushed then deleted, and a stream-only toast (no state key)."""
    ui = _ui(E)
    reducer = ui.ui_message_reducer

    class State(TypedDict):
        messages: Annotated[list, E.add_messages]
        ui: Annotated[list, reducer]
        log: Annotated[list, operator.add]

    def weather(state: State) -> dict:
        reply = AIMessage(content="Sunny in Paris", id="ai-1")
        card = ui.push_ui_message("weather", {"city": "Paris"}, id="card-1", message=reply,
                                  metadata={"source": "test"})
        ui.push_ui_message("weather", {"temp": 21}, id="card-1", merge=True)
        spinner = ui.push_ui_message("spinner", {"label": "<b>loading</b>"}, id="spin-1")
        ui.delete_ui_message(spinner["id"])
        ui.push_ui_message("toast", {"text": "done"}, id="toast-1", state_key=None)
        return {"messages": [reply], "log": [card["metadata"]]}

    def followup(state: State) -> dict:
        ui.push_ui_message("weather", {"city": "Lyon"}, id="card-1")  # replaces, no merge
        return {"log": [[m["id"] for m in state["ui"]]]}

    g = E.StateGraph(State)
    g.add_node("weather", weather)
    g.add_node("followup", followup)
    g.add_edge(E.START, "weather")
    g.add_edge("weather", "followup")
    return g.compile(checkpointer=checkpointer)


def test_ui_messages_stream_as_custom_events_and_reduce_into_the_state(differential: Any) -> None:
    def scenario(E: Any) -> Any:
        app = _ui_graph(E)
        chunks = list(app.stream({"messages": [HumanMessage(content="weather?", id="h-1")], "ui": [], "log": []},
                                 stream_mode=["custom", "updates"]))
        final = app.invoke({"messages": [HumanMessage(content="weather?", id="h-1")], "ui": [], "log": []})
        return chunks, final["ui"], final["log"]

    chunks, ui_state, log = differential(scenario)
    assert [m["id"] for m in ui_state] == ["card-1"]
    assert ui_state[0]["props"] == {"city": "Lyon"}  # the follow-up replaced the merged card
    assert log[0]["message_id"] == "ai-1" and log[0]["source"] == "test"
    assert log[1] == ["card-1"]  # the spinner was deleted, the toast never reached the state
    custom = [c for mode, c in chunks if mode == "custom"]
    assert [(c["type"], c["id"]) for c in custom] == [
        ("ui", "card-1"), ("ui", "card-1"), ("ui", "spin-1"), ("remove-ui", "spin-1"),
        ("ui", "toast-1"), ("ui", "card-1")]


def test_ui_state_survives_a_checkpoint_and_a_merge_keeps_the_old_props(differential: Any) -> None:
    def scenario(E: Any) -> Any:
        ui = _ui(E)
        reducer = ui.ui_message_reducer

        class State(TypedDict):
            ui: Annotated[list, reducer]

        def first(state: State) -> None:
            ui.push_ui_message("chart", {"series": [1, 2]}, id="c")

        def second(state: State) -> None:
            ui.push_ui_message("chart", {"title": "t"}, id="c", merge=True)

        g = E.StateGraph(State)
        g.add_node("first", first)
        g.add_node("second", second)
        g.add_edge(E.START, "first")
        g.add_edge("first", "second")
        app = g.compile(checkpointer=E.InMemorySaver(), interrupt_before=["second"])
        cfg = {"configurable": {"thread_id": "ui"}}
        app.invoke({"ui": []}, cfg)
        paused = app.get_state(cfg).values
        app.invoke(None, cfg)
        return paused, app.get_state(cfg).values

    paused, done = differential(scenario)
    assert done["ui"][0]["props"] == {"series": [1, 2], "title": "t"}


def test_ui_message_reducer_on_its_own(differential: Any) -> None:
    """The reducer as a user calls it in a unit test: single messages or lists, removal,
    merge, and the error for removing an id that is not there."""
    def scenario(E: Any) -> Any:
        r = _ui(E).ui_message_reducer
        a = {"type": "ui", "id": "1", "name": "A", "props": {"x": 1}, "metadata": {}}
        b = {"type": "ui", "id": "2", "name": "B", "props": {}, "metadata": {}}
        merged = {"type": "ui", "id": "1", "name": "A", "props": {"y": 2}, "metadata": {"merge": True}}
        return [
            r([], a),
            r(a, [b, {"type": "remove-ui", "id": "1"}]),
            r([a, b], merged),
            r([a], [{"type": "remove-ui", "id": "1"}, a]),  # removed, then pushed again
            capture(lambda: r([a], {"type": "remove-ui", "id": "9"})),
        ]

    out = differential(scenario)
    assert out[4][0] == "raises" and "'9'" in out[4][2]


def test_push_ui_message_outside_a_node_fails_as_on_langgraph(differential: Any) -> None:
    def scenario(E: Any) -> Any:
        return capture(lambda: _ui(E).push_ui_message("x", {}))

    out = differential(scenario, exc="class")
    assert out[0] == "raises"


def test_message_graph_from_langgraph_graph(differential: Any) -> None:
    """The deprecated `MessageGraph` (the state is the message list), imported from
    `langgraph.graph` as old tutorials do."""
    def scenario(E: Any) -> Any:
        import warnings

        graph_module = importlib.import_module(f"{E.root}.graph")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = graph_module.MessageGraph()
        g.add_node("bot", lambda msgs: AIMessage(content=f"seen {len(msgs)}", id=f"ai-{len(msgs)}"))
        g.add_edge(E.START, "bot")
        g.add_edge("bot", E.END)
        app = g.compile()
        return app.invoke([HumanMessage(content="hi", id="h")]), list(app.stream([("user", "hey")]))

    differential(scenario)


def test_managed_values_from_their_module_stop_a_loop_before_the_limit(differential: Any) -> None:
    def scenario(E: Any) -> Any:
        managed = importlib.import_module(f"{E.root}.managed.is_last_step")

        class State(TypedDict):
            log: Annotated[list, operator.add]
            remaining_steps: managed.RemainingSteps
            is_last_step: managed.IsLastStep

        def loop(state: State) -> dict:
            return {"log": [(state["remaining_steps"], state["is_last_step"])]}

        g = E.StateGraph(State)
        g.add_node("loop", loop)
        g.add_edge(E.START, "loop")
        g.add_conditional_edges("loop", lambda s: E.END if s["remaining_steps"] <= 2 else "loop")
        return g.compile().invoke({"log": []}, {"recursion_limit": 5})

    out = differential(scenario)
    assert out["log"][-1] == (2, False)


@pytest.mark.parametrize("module", PORTED_MODULES)
def test_each_smaller_public_module_exports_what_langgraphs_does(module: str) -> None:
    """Every name in LangGraph's module's `__all__` is importable from lgnb's."""
    theirs = importlib.import_module(f"langgraph.{module}")
    ours = importlib.import_module(f"lgnb.{module}")
    names = getattr(theirs, "__all__", None) or [n for n in vars(theirs) if not n.startswith("_")]
    if module == "managed.is_last_step":
        names = [*names, "RemainingSteps", "IsLastStep"]
    missing = [n for n in names if not hasattr(ours, n)]
    assert missing == [], f"lgnb.{module} lacks {missing}"


def test_typed_user_code_with_the_type_parameters_ports() -> None:
    """Generic user helpers annotated with `langgraph.typing`'s parameters work with lgnb's."""
    from lgnb.graph import StateGraph
    from lgnb.runtime import Runtime
    from lgnb.typing import ContextT, StateT

    def build(schema: type[StateT], context: type[ContextT]) -> StateGraph[StateT, ContextT]:
        return StateGraph(schema, context_schema=context)

    class S(TypedDict):
        x: int

    class Ctx(TypedDict):
        step: int

    def node(state: S, runtime: Runtime[Ctx]) -> dict:
        return {"x": state["x"] + runtime.context["step"]}

    g = build(S, Ctx)
    g.add_node("node", node)
    g.set_entry_point("node")
    assert g.compile().invoke({"x": 1}, context={"step": 2}) == {"x": 3}
    from lgnb.version import __version__

    assert __version__ and __version__ == importlib.import_module("lgnb").__version__


def test_a_nodes_config_has_tags_only_when_some_were_given(differential: Any) -> None:
    """`config.get("tags")` in a node (what `push_ui_message` puts in its metadata) is None
    when the run has no tags, as on LangGraph, not an empty list."""
    def scenario(E: Any) -> Any:
        class S(TypedDict):
            x: int

        seen: list[Any] = []

        def node(state: S, config: RunnableConfig) -> dict:
            seen.append(config.get("tags", "no tags key"))
            return {"x": state["x"] + 1}

        g = E.StateGraph(S)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        app = g.compile()
        app.invoke({"x": 0})
        app.invoke({"x": 0}, {"tags": []})
        app.invoke({"x": 0}, {"tags": ["a"]})
        app.with_config(tags=["w"]).invoke({"x": 0})
        return seen

    assert differential(scenario) == ["no tags key", "no tags key", ["a"], ["w"]]

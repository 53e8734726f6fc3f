"""Scenarios modelled on the semantics LangGraph's own test-suite pins down (test_pregel.py,
test_runtime.py, test_messages_state.py), rewritten as differential checks without a
checkpointer."""

import enum
import operator
from dataclasses import dataclass
from typing import Annotated, Literal

import pydantic
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnablePassthrough
from typing_extensions import NotRequired, TypedDict

from _diff import capture, collect


class S(TypedDict):
    log: Annotated[list, operator.add]


def _logger(name):
    return lambda s: {"log": [name]}


# --- context coercion --------------------------------------------------------------------


def test_context_dict_is_coerced_to_dataclass_schema(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            api_key: str
            timeout: int = 30

        def node(s, runtime: E.Runtime[Ctx]):
            c = runtime.context
            return {"log": [type(c).__name__, c.api_key, c.timeout]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return g.compile().invoke({"log": []}, context={"api_key": "k"})

    differential(scenario)


def test_context_dict_is_coerced_to_pydantic_schema(differential):
    def scenario(E):
        class Ctx(pydantic.BaseModel):
            n: int

        def node(s, runtime: E.Runtime[Ctx]):
            return {"log": [type(runtime.context).__name__, runtime.context.n]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return g.compile().invoke({"log": []}, context={"n": "7"})

    differential(scenario)


def test_context_coercion_errors(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            api_key: str

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("node", _logger("node"))
        g.add_edge(E.START, "node")
        app = g.compile()
        return (
            capture(lambda: app.invoke({"log": []}, context={"timeout": 60})),
            capture(lambda: app.invoke({"log": []}, context={"api_key": "x", "bogus": 1})),
        )

    # the TypeError text comes from the dataclass constructor; class is the contract
    differential(scenario, exc="class")


def test_context_none_with_schema(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            api_key: str = "default"

        def node(s, runtime: E.Runtime[Ctx]):
            return {"log": [repr(runtime.context)]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return g.compile().invoke({"log": []})

    differential(scenario)


def test_context_in_stream_and_astream(differential):
    async def scenario(E):
        @dataclass
        class Ctx:
            who: str

        def node(s, runtime: E.Runtime[Ctx]):
            runtime.stream_writer(runtime.context.who)
            return {"log": [runtime.context.who]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        app = g.compile()
        sync = list(app.stream({"log": []}, context=Ctx(who="s"), stream_mode=["custom", "values"]))
        asy = [c async for c in app.astream({"log": []}, context={"who": "a"}, stream_mode="custom")]
        return sync, asy

    differential(scenario)


def test_runtime_execution_info_node_attempt_under_retry(differential):
    def scenario(E):
        seen = []

        def flaky(s, runtime: E.Runtime):
            info = runtime.execution_info
            seen.append(None if info is None else info.node_attempt)
            if len(seen) < 3:
                raise ConnectionError("again")
            return {"log": ["ok"]}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False))
        g.add_edge(E.START, "flaky")
        g.compile().invoke({"log": []})
        return seen

    differential(scenario)


# --- node names and special nodes ---------------------------------------------------------


def test_enum_node_names(differential):
    def scenario(E):
        class N(str, enum.Enum):
            FIRST = "first"
            SECOND = "second"

        g = E.StateGraph(S)
        g.add_node(N.FIRST, _logger("1"))
        g.add_node(N.SECOND, _logger("2"))
        g.add_edge(E.START, N.FIRST)
        g.add_edge(N.FIRST, N.SECOND)
        app = g.compile()
        return app.invoke({"log": []}), [list(c) for c in app.stream({"log": []})]

    differential(scenario)


def test_runnable_passthrough_node(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("pass", RunnablePassthrough())
        g.add_edge(E.START, "pass")
        app = g.compile()
        return app.invoke({"log": ["x"]}), list(app.stream({"log": ["x"]}, stream_mode="updates"))

    differential(scenario)


def test_root_channel_state_graph(differential):
    def scenario(E):
        g = E.StateGraph(Annotated[list, operator.add])
        g.add_node("a", lambda s: ["a", len(s)])
        g.add_node("b", lambda s: ["b", len(s)])
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile()
        return app.invoke(["in"]), list(app.stream(["in"], stream_mode=["values", "updates"]))

    differential(scenario)


def test_get_graph_self_loop_and_loop(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", _logger("a"))
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", lambda s: "a", ["a", "b"])
        g.add_edge("b", "a")
        gr = g.compile().get_graph()
        return sorted((e.source, e.target, e.conditional) for e in gr.edges)

    differential(scenario)


# --- conditional edge input schemas ---------------------------------------------------------


def test_conditional_edge_path_with_typed_input_schema(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            flag: NotRequired[bool]

        class Narrow(pydantic.BaseModel):
            flag: bool = False

        seen = []

        def route(s: Narrow) -> Literal["yes", "no"]:
            seen.append(type(s).__name__)
            return "yes" if s.flag else "no"

        g = E.StateGraph(St)
        g.add_node("a", lambda s: {"flag": True})
        g.add_node("yes", _logger("yes"))
        g.add_node("no", _logger("no"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route)
        return g.compile().invoke({"log": []}), seen

    differential(scenario)


def test_conditional_edge_sees_node_private_output_via_input_schema(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]

        class Priv(TypedDict):
            secret: str

        def a(s) -> Priv:
            return {"secret": "go-b"}

        def route(s: Priv):
            return "b" if s["secret"] == "go-b" else "c"

        g = E.StateGraph(St)
        g.add_node("a", a)
        g.add_node("b", _logger("b"))
        g.add_node("c", _logger("c"))
        g.add_edge(E.START, "a")
        g.add_conditional_edges("a", route, ["b", "c"])
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


# --- mixed returns / pydantic updates -----------------------------------------------------------


def test_node_returning_list_mixing_dict_and_command(differential):
    def scenario(E):
        g = E.StateGraph(S)
        g.add_node("a", lambda s: [{"log": ["plain"]}, E.Command(goto="b", update={"log": ["cmd"]})])
        g.add_node("b", _logger("b"))
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"log": []}))

    differential(scenario)


def test_pydantic_state_none_update_of_optional_field(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            x: str | None = "start"

        g = E.StateGraph(St)
        g.add_node("clear", lambda s: {"x": None})
        g.add_edge(E.START, "clear")
        return g.compile().invoke({"x": "given"})

    differential(scenario, expect={"x": None})


def test_pydantic_state_in_place_mutation_is_not_an_update(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            items: list[str] = []

        def mutate(s):
            s.items.append("mutated")
            return {}

        def read(s):
            return {"items": s.items + ["read"]}

        g = E.StateGraph(St)
        g.add_node("mutate", mutate)
        g.add_node("read", read)
        g.add_edge(E.START, "mutate")
        g.add_edge("mutate", "read")
        return g.compile().invoke({"items": ["a"]})

    differential(scenario)


def test_typeddict_in_place_mutation_visibility(differential):
    def scenario(E):
        class St(TypedDict):
            items: list

        def mutate(s):
            s["items"].append("mutated")
            return None

        g = E.StateGraph(St)
        g.add_node("mutate", mutate)
        g.add_node("read", lambda s: {"items": s["items"] + ["read"]})
        g.add_edge(E.START, "mutate")
        g.add_edge("mutate", "read")
        return g.compile().invoke({"items": ["a"]})

    differential(scenario)


def test_command_with_pydantic_and_dataclass_update_objects(differential):
    def scenario(E):
        class St(pydantic.BaseModel):
            a: int = 0
            b: str = ""

        g = E.StateGraph(St)
        g.add_node("n", lambda s: E.Command(update=St(a=5, b="set"), goto="m"))
        g.add_node("m", lambda s: {"b": s.b + "+m"})
        g.add_edge(E.START, "n")
        return capture(lambda: g.compile().invoke({"a": 1}))

    differential(scenario)


# --- messages mode dedupe -----------------------------------------------------------------------


def test_messages_mode_does_not_reemit_input_messages(differential):
    def scenario(E):
        def echo(s):
            return {"messages": s["messages"]}  # returns the input messages again

        g = E.StateGraph(E.MessagesState)
        g.add_node("echo", echo)
        g.add_edge(E.START, "echo")
        out = list(g.compile().stream({"messages": [HumanMessage("in", id="in1")]}, stream_mode="messages"))
        return [(m.content, md["langgraph_node"]) for m, md in out]

    differential(scenario)


def test_messages_mode_does_not_reemit_messages_already_in_state(differential):
    def scenario(E):
        def first(s):
            return {"messages": [AIMessage("first", id="f")]}

        def second(s):
            return {"messages": s["messages"] + [AIMessage("second", id="s")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("first", first)
        g.add_node("second", second)
        g.add_edge(E.START, "first")
        g.add_edge("first", "second")
        out = list(g.compile().stream({"messages": [HumanMessage("in", id="in1")]}, stream_mode="messages"))
        return [(m.content, md["langgraph_node"]) for m, md in out]

    differential(scenario)


def test_messages_mode_with_command_update(differential):
    def scenario(E):
        g = E.StateGraph(E.MessagesState)
        g.add_node("a", lambda s: E.Command(update={"messages": [AIMessage("via command", id="c1")]}, goto="b"))
        g.add_node("b", lambda s: {"messages": [AIMessage("plain", id="p1")]})
        g.add_edge(E.START, "a")
        out = list(g.compile().stream({"messages": []}, stream_mode="messages"))
        return [(m.content, md["langgraph_node"]) for m, md in out]

    differential(scenario)


def test_messages_metadata_carries_tags_and_configurable(differential):
    def scenario(E):
        model = GenericFakeChatModel(messages=iter([AIMessage("tok")])).with_config(tags=["model-tag"])

        def chat(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("chat", chat)
        g.add_edge(E.START, "chat")
        out = list(
            g.compile().stream(
                {"messages": [HumanMessage("q", id="q")]},
                {"configurable": {"user_id": "u-1"}, "tags": ["run-tag"]},
                stream_mode="messages",
            )
        )
        return [(m.content, sorted(md.get("tags", [])), md.get("user_id")) for m, md in out]

    differential(scenario)


def test_messages_state_with_openai_format_option(differential):
    def scenario(E):
        class St(TypedDict):
            messages: Annotated[list, E.add_messages]

        g = E.StateGraph(St)
        g.add_node("a", lambda s: {"messages": [{"role": "assistant", "content": "dict-ai", "id": "d1"}]})
        g.add_edge(E.START, "a")
        out = g.compile().invoke({"messages": [("user", "tuple-user")]})
        return [(type(m).__name__, m.content) for m in out["messages"]]

    differential(scenario)


# --- debug with retry / failing task streamed before error ------------------------------------


def test_debug_stream_with_retry(differential):
    def scenario(E):
        attempts = []

        def flaky(s):
            attempts.append(1)
            if len(attempts) < 2:
                raise ConnectionError("retry me")
            return {"log": ["ok"]}

        g = E.StateGraph(S)
        g.add_node("flaky", flaky, retry_policy=E.RetryPolicy(initial_interval=0.001, jitter=False))
        g.add_edge(E.START, "flaky")
        return [(c["type"], c["step"], c["payload"].get("error"), c["payload"].get("result"))
                for c in g.compile().stream({"log": []}, stream_mode="debug")]

    differential(scenario)


def test_failing_task_result_is_streamed_before_the_error_in_parallel_step(differential):
    def scenario(E):
        def bad(s):
            raise ValueError("bad branch")

        g = E.StateGraph(S)
        g.add_node("bad", bad)
        g.add_edge(E.START, "bad")
        out = collect(lambda: g.compile().stream({"log": []}, stream_mode=["tasks"]))
        return out

    differential(scenario)


def test_send_with_untracked_value_channel(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            scratch: Annotated[str, E.channels.UntrackedValue]

        g = E.StateGraph(St)
        g.add_node("w", lambda s: {"log": [f"w:{s.get('scratch')}"]})
        g.add_conditional_edges(E.START, lambda s: [E.Send("w", {"scratch": f"s{i}", "log": []}) for i in range(2)])
        return capture(lambda: g.compile().invoke({"log": [], "scratch": "init"}))

    differential(scenario)

"""Benchmark graphs, built from an engine namespace (see engines.py), plus their "floor".

Each ``Spec`` builds the same graph on any engine and knows how to run the same node
functions in a plain Python loop (the floor: no engine at all, state dict updated in place).
Engine overhead per node execution = (engine time - floor time) / node executions.

Node functions are made by ``_*_nodes(get_writer)`` factories so that the engine's graph and
the floor call identical code; every node emits one custom event through
``get_stream_writer()`` (a no-op writer in the floor and in ``invoke``).
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Iterator, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool

from engines import Engine


@dataclass
class Built:
    """A compiled graph and how to call it."""

    graph: Any
    make_input: Callable[[], Any]
    config: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Spec:
    name: str
    group: str  # "chain", "send", "wide", "react": used for ratio tables
    build: Callable[[Engine], Built]
    floor: Callable[[], Callable[[], Any]]  # returns a zero-argument runner
    node_execs: int  # user node-function calls per run
    params: dict = field(default_factory=dict)


def _noop_writer(_chunk: Any) -> None:
    return None


def _floor_get_writer() -> Callable[[Any], None]:
    return _noop_writer


# ------------------------------------------------------------------ chain --
class ChainState(TypedDict):
    x: int


def _chain_nodes(n: int, get_writer: Callable) -> list[Callable]:
    def make(i: int) -> Callable:
        def node(state: ChainState) -> dict:
            get_writer()({"node": i})
            return {"x": state["x"] + 1}

        return node

    return [make(i) for i in range(n)]


def chain(n: int) -> Spec:
    """A chain of ``n`` nodes, each writing one key."""

    def build(e: Engine) -> Built:
        b = e.StateGraph(ChainState)
        nodes = _chain_nodes(n, e.get_stream_writer)
        for i, fn in enumerate(nodes):
            b.add_node(f"n{i}", fn)
        b.add_edge(e.START, "n0")
        for i in range(n - 1):
            b.add_edge(f"n{i}", f"n{i + 1}")
        b.add_edge(f"n{n - 1}", e.END)
        return Built(b.compile(), lambda: {"x": 0}, {"recursion_limit": n + 10})

    def floor() -> Callable[[], Any]:
        nodes = _chain_nodes(n, _floor_get_writer)

        def run() -> dict:
            state = {"x": 0}
            for fn in nodes:
                state.update(fn(state))
            return state

        return run

    return Spec(f"chain-{n}", "chain", build, floor, node_execs=n, params={"n": n})


# ------------------------------------------------------------------- send --
class SendParent(TypedDict):
    results: Annotated[list, operator.add]


class SendSub(TypedDict):
    i: int
    n: int
    results: Annotated[list, operator.add]


def _sub_nodes(loops: int, get_writer: Callable) -> tuple[Callable, Callable, Callable]:
    def a(state: SendSub) -> dict:
        get_writer()({"a": state["i"]})
        return {"n": state["n"]}

    def b(state: SendSub) -> dict:
        get_writer()({"b": state["i"]})
        return {"n": state["n"]}

    def c(state: SendSub) -> dict:
        get_writer()({"c": state["i"]})
        n = state["n"] + 1
        return {"n": n, "results": [state["i"]] if n >= loops else []}

    return a, b, c


def send(fanout: int, loops: int) -> Spec:
    """``fanout`` Sends into a 3-node subgraph (a -> b -> c -> a ...) that loops ``loops`` times."""

    def build(e: Engine) -> Built:
        a, b, c = _sub_nodes(loops, e.get_stream_writer)
        sb = e.StateGraph(SendSub)
        sb.add_node("a", a)
        sb.add_node("b", b)
        sb.add_node("c", c)
        sb.add_edge(e.START, "a")
        sb.add_edge("a", "b")
        sb.add_edge("b", "c")
        sb.add_conditional_edges("c", lambda s: "a" if s["n"] < loops else e.END, ["a", e.END])
        sub = sb.compile()

        pb = e.StateGraph(SendParent)
        pb.add_node("sub", sub)
        pb.add_conditional_edges(
            e.START, lambda s: [e.Send("sub", {"i": i, "n": 0}) for i in range(fanout)], ["sub"]
        )
        pb.add_edge("sub", e.END)
        return Built(pb.compile(), lambda: {"results": []}, {"recursion_limit": 3 * loops + 20})

    def floor() -> Callable[[], Any]:
        a, b, c = _sub_nodes(loops, _floor_get_writer)

        def run() -> dict:
            parent = {"results": []}
            for i in range(fanout):
                state = {"i": i, "n": 0, "results": []}
                while state["n"] < loops:
                    for fn in (a, b, c):
                        upd = fn(state)
                        state["n"] = upd["n"]
                        state["results"] += upd.get("results", [])
                parent["results"] += state["results"]
            return parent

        return run

    return Spec(
        f"send-{fanout}x{loops}",
        "send",
        build,
        floor,
        node_execs=fanout * 3 * loops,
        params={"fanout": fanout, "loops": loops},
    )


# ------------------------------------------------------------------- wide --
_wide_schemas: dict[int, type] = {}


def _wide_schema(keys: int) -> type:
    if keys not in _wide_schemas:
        _wide_schemas[keys] = TypedDict(f"Wide{keys}", {f"k{i}": int for i in range(keys)})
    return _wide_schemas[keys]


def _wide_nodes(keys: int, nodes: int, writes: int, get_writer: Callable) -> list[Callable]:
    def make(j: int) -> Callable:
        mine = [f"k{(writes * j + m) % keys}" for m in range(writes)]

        def node(state: dict) -> dict:
            get_writer()({"node": j})
            return {k: state[k] + 1 for k in mine}

        return node

    return [make(j) for j in range(nodes)]


def wide(keys: int, nodes: int = 50, writes: int = 5, base: bool = True) -> Spec:
    """A state of ``keys`` keys (all set in the input); ``nodes`` nodes in a row, each writing
    ``writes`` keys. Compare per-step cost across widths: it should not depend on ``keys``.

    ``base=False`` makes a ``wide-<keys>-n<nodes>`` variant: the same graph, longer. Its
    difference to the base graph gives the marginal cost of one step, free of the per-run
    O(keys) cost of reading the input and returning the output."""

    def build(e: Engine) -> Built:
        schema = _wide_schema(keys)
        b = e.StateGraph(schema)
        for j, fn in enumerate(_wide_nodes(keys, nodes, writes, e.get_stream_writer)):
            b.add_node(f"w{j}", fn)
        b.add_edge(e.START, "w0")
        for j in range(nodes - 1):
            b.add_edge(f"w{j}", f"w{j + 1}")
        b.add_edge(f"w{nodes - 1}", e.END)
        return Built(
            b.compile(), lambda: {f"k{i}": 0 for i in range(keys)}, {"recursion_limit": nodes + 10}
        )

    def floor() -> Callable[[], Any]:
        fns = _wide_nodes(keys, nodes, writes, _floor_get_writer)

        def run() -> dict:
            state = {f"k{i}": 0 for i in range(keys)}
            for fn in fns:
                state.update(fn(state))
            return state

        return run

    return Spec(
        f"wide-{keys}" if base else f"wide-{keys}-n{nodes}",
        "wide",
        build,
        floor,
        node_execs=nodes,
        params={"keys": keys, "nodes": nodes, "writes": writes},
    )


# ------------------------------------------------------------------ react --
@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class FakeToolCallingModel(BaseChatModel):
    """A deterministic streaming chat model: asks for the ``add`` tool until ``turns`` tool
    results are in the conversation, then answers. Streams a few tokens per reply, with the
    tool call arriving as a tool-call chunk (as real providers do)."""

    turns: int = 20

    @property
    def _llm_type(self) -> str:
        return "lgnb-bench-fake"

    def _reply(self, messages: list[BaseMessage]) -> tuple[str, list[dict]]:
        done = sum(isinstance(m, ToolMessage) for m in messages)
        if done < self.turns:
            call = {"name": "add", "args": {"a": done, "b": 1}, "id": f"call_{done}", "type": "tool_call"}
            return f"Turn {done}: calling the add tool now.", [call]
        return f"All {done} tool calls are done; the answer is {done}.", []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        text, calls = self._reply(messages)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, tool_calls=calls))])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs) -> Iterator[ChatGenerationChunk]:
        text, calls = self._reply(messages)
        words = text.split(" ")
        for k, w in enumerate(words):
            yield ChatGenerationChunk(message=AIMessageChunk(content=w if k == 0 else " " + w))
        for idx, call in enumerate(calls):
            tc_chunk = {"name": call["name"], "args": json.dumps(call["args"]), "id": call["id"], "index": idx}
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[tc_chunk]))


def _react_nodes(model: FakeToolCallingModel, get_writer: Callable) -> tuple[Callable, Callable]:
    def agent(state: dict) -> dict:
        reply = model.invoke(state["messages"])
        get_writer()({"agent": len(state["messages"])})
        return {"messages": [reply]}

    def tools(state: dict) -> dict:
        last = state["messages"][-1]
        get_writer()({"tools": len(last.tool_calls)})
        return {"messages": [add.invoke(tc) for tc in last.tool_calls]}

    return agent, tools


def react(turns: int) -> Spec:
    """A ReAct loop: agent (fake streaming chat model) <-> tools, ``turns`` tool turns, then a
    final answer."""

    def build(e: Engine) -> Built:
        schema = TypedDict("ReactState", {"messages": Annotated[list, e.add_messages]})
        agent, tools = _react_nodes(FakeToolCallingModel(turns=turns), e.get_stream_writer)
        b = e.StateGraph(schema)
        b.add_node("agent", agent)
        b.add_node("tools", tools)
        b.add_edge(e.START, "agent")
        b.add_conditional_edges(
            "agent", lambda s: "tools" if s["messages"][-1].tool_calls else e.END, ["tools", e.END]
        )
        b.add_edge("tools", "agent")
        return Built(
            b.compile(),
            lambda: {"messages": [HumanMessage(content="Add things up.", id="human-0")]},
            {"recursion_limit": 2 * turns + 10},
        )

    def floor() -> Callable[[], Any]:
        agent, tools = _react_nodes(FakeToolCallingModel(turns=turns), _floor_get_writer)

        def run() -> dict:
            state = {"messages": [HumanMessage(content="Add things up.", id="human-0")]}
            while True:
                state["messages"] = state["messages"] + agent(state)["messages"]
                if not state["messages"][-1].tool_calls:
                    return state
                state["messages"] = state["messages"] + tools(state)["messages"]

        return run

    return Spec(f"react-{turns}", "react", build, floor, node_execs=2 * turns + 1, params={"turns": turns})


# ------------------------------------------------------------------ suites --
def counted_loop(e: Engine, schema: Any, node: Callable[[dict], dict], steps: int, *,
                 saver: Any = None) -> Any:
    """One node looping on itself behind a conditional edge until the state's counter ``n``
    (which the node advances) reaches ``steps``; compiled with ``saver``."""

    def route(state: dict) -> str:
        return "node" if state["n"] < steps else e.END

    g = e.StateGraph(schema)
    g.add_node("node", node)
    g.add_edge(e.START, "node")
    g.add_conditional_edges("node", route, ["node", e.END])
    return g.compile(checkpointer=saver)


def message_loop(e: Engine, steps: int, *, saver: Any = None, words: int = 0) -> Any:
    """A conversation growing by one reply a step: ``messages`` (``add_messages``) and a
    counter ``n``; the node appends an ``AIMessage`` ("reply <n>" and ``words`` words)
    until ``n`` reaches ``steps`` (`counted_loop`). Each run's input gives ``n: 0``. What
    bench_costs, bench_memory and bench_conversation time a step of."""
    schema = TypedDict("Chat", {"messages": Annotated[list, e.add_messages], "n": int})  # type: ignore[misc]  # noqa: UP013
    tail = " word" * words

    def agent(state: dict) -> dict:
        return {"messages": AIMessage(f"reply {state['n']}{tail}"), "n": state["n"] + 1}

    return counted_loop(e, schema, agent, steps, saver=saver)


def suite(quick: bool = False) -> list[Spec]:
    if quick:
        return [chain(20), chain(100), send(10, 3),
                wide(200, nodes=10), wide(1000, nodes=10), wide(20, nodes=10),
                wide(1000, nodes=20, base=False), wide(20, nodes=20, base=False),
                react(3)]
    return [chain(100), chain(1000), send(100, 10),
            wide(200), wide(1000), wide(20),
            wide(1000, nodes=100, base=False), wide(20, nodes=100, base=False),
            react(20)]

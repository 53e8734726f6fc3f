"""The programs a learner writes in LangChain Academy's "Introduction to LangGraph",
modules 1 to 3, run on LangGraph and on lgnb.

Each scenario is the lesson's program retold: the same graph shape and the same calls a
learner makes in the notebook (`invoke`, `stream` in the lesson's modes, `astream_events`,
`get_state`, `get_state_history`, `update_state`, breakpoints, replay and fork), with the
chat model replaced by `_scripted.Scripted` (it answers from a script, streams its words
one by one and its tool calls as a chunk, and records what it was sent). The lessons:

* module 1: simple-graph (a random branch), chain (a tool-calling model node), router
  (`ToolNode` + `tools_condition` to END), agent (the ReAct loop), agent-memory
  (`MemorySaver` and a thread);
* module 2: state-schema (TypedDict, dataclass, pydantic with its validation errors),
  state-reducers (last value, `operator.add`, a custom reducer, `add_messages` with ids,
  `RemoveMessage`), multiple-schemas (private state, input/output schemas),
  trim-filter-messages, chatbot-summarization, chatbot-external-memory (SQLite on a file,
  each engine's own saver);
* module 3: breakpoints, dynamic-breakpoints (`NodeInterrupt`), edit-state-human-feedback,
  streaming-interruption, time-travel.

Observed: what the learner sees — return values, every streamed chunk, what the nodes
`print`, the `pretty_print()` text of messages where the lesson prints them, what the
model was sent, `get_state` / `get_state_history` snapshots, the configs `update_state`
returns and the graph drawn as the lesson draws it (`draw_mermaid()`, with `xray` where the
lesson uses it). Only ids and timestamps are normalized (by the harness).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import io
import operator
import random
import sqlite3
import warnings
from contextlib import redirect_stdout
from dataclasses import dataclass
from typing import Annotated, Literal

import pytest
from _agent_scenarios import saver as _saver
from _agent_scenarios import without_ids
from _diff import capture, collect, snapshot_summary
from _scripted import Scripted
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    trim_messages,
)
from langchain_core.runnables import RunnableConfig
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, field_validator
from typing_extensions import TypedDict

warnings.filterwarnings("ignore", message=".*NodeInterrupt.*")


# --- the lessons' tools and fakes ------------------------------------------------------------


def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: left operand
        b: right operand
    """
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: left operand
        b: right operand
    """
    return a + b


def divide(a: int, b: int) -> float:
    """Divide a by b.

    Args:
        a: dividend
        b: divisor
    """
    return a / b


TOOLS = [add, multiply, divide]
SYS = "You do arithmetic on the numbers you are given."


def _llm(*replies):
    return Scripted(script=iter(list(replies)), seen=[])


def _say(text, mid):
    return AIMessage(text, id=mid)


def _call(mid, name, args, cid):
    return AIMessage("", id=mid, tool_calls=[{"name": name, "args": args, "id": cid, "type": "tool_call"}])


class WordCounter(Scripted):
    """A chat model used as `trim_messages`' token counter (the lesson passes a chat model):
    one token per word, three per message."""

    def get_num_tokens_from_messages(self, messages, tools=None):
        return sum(3 + len(str(m.content).split()) for m in messages)


def _printed(fn):
    """Run `fn()`; what it printed (lines) and its result (or the error it raised)."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        result = capture(fn)
    return buf.getvalue().splitlines(), result


def _pp(messages):
    """The text `m.pretty_print()` prints for each message."""
    if isinstance(messages, BaseMessage):
        messages = [messages]
    lines, _ = _printed(lambda: [m.pretty_print() for m in messages])
    return lines


def _mermaid(app, xray=False):
    return app.get_graph(xray=xray).draw_mermaid()


def _cfg(tid):
    return {"configurable": {"thread_id": tid}}


def _history(app, cfg):
    """The thread's history (`_agent_scenarios.history`) with each checkpoint's metadata, a task's single message (an
    input written as `{"messages": HumanMessage(...)}`) shown without its id too: LangGraph
    saves the write in the background while `add_messages` gives the message its id."""
    out = []
    for s in app.get_state_history(cfg):
        summary = snapshot_summary(s)
        tasks = []
        for name, path, interrupts, result, state in summary["tasks"]:
            if isinstance(result, dict) and isinstance(result.get("messages"), BaseMessage):
                result = {**result, "messages": [result["messages"]]}
            tasks.append((name, path, interrupts, without_ids(result), state))
        summary["tasks"] = tasks
        summary["metadata"] = s.metadata
        out.append(summary)
    return out


def _checkpointer(E, kind, tmp_path):
    """The lessons' checkpointer: `MemorySaver()`, or (`kind="sqlite"`) the engine's own
    `SqliteSaver` on a connection to a file of its own, as chatbot-external-memory opens it."""
    if kind == "memory":
        return E.checkpoint_memory.MemorySaver()
    folder = tmp_path / E.label
    folder.mkdir(exist_ok=True)
    path = folder / f"{len(list(folder.iterdir()))}.db"
    return _saver_class(E)(sqlite3.connect(str(path), check_same_thread=False))


def _saver_class(E):
    if E.root == "lgnb":
        from lgnb.checkpoint.sqlite import SqliteSaver
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver
    return SqliteSaver


def _arith_agent(E, llm, *, checkpointer=None, interrupt_before=None, tools_to="assistant",
                 feedback=False):
    """Module 1's agent and module 3's variants: `assistant` (system message + history to
    the tool-bound model), a `ToolNode`, `tools_condition`; `tools_to` is where the tool
    node goes next (END in the router lesson); `feedback` adds the no-op `human_feedback`
    node of edit-state-human-feedback before the assistant."""
    llm_with_tools = llm.bind_tools(TOOLS, parallel_tool_calls=False)
    sys_msg = SystemMessage(content=SYS)

    def assistant(state: E.MessagesState):
        return {"messages": [llm_with_tools.invoke([sys_msg] + state["messages"])]}

    def human_feedback(state: E.MessagesState):
        pass

    builder = E.StateGraph(E.MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(TOOLS))
    if feedback:
        builder.add_node("human_feedback", human_feedback)
        builder.add_edge(E.START, "human_feedback")
        builder.add_edge("human_feedback", "assistant")
        builder.add_edge("tools", "human_feedback")
    else:
        builder.add_edge(E.START, "assistant")
        builder.add_edge("tools", E.END if tools_to == "END" else tools_to)
    builder.add_conditional_edges("assistant", tools_condition)
    return builder.compile(checkpointer=checkpointer, interrupt_before=interrupt_before)


def _last_of_each(stream):
    """The lesson's loop: `for event in graph.stream(..., stream_mode="values"):
    event["messages"][-1].pretty_print()`."""
    out = []
    for event in stream:
        out.extend(_pp(event["messages"][-1]))
    return out


# === module 1 =================================================================================


def test_simple_graph_prints_each_node_and_follows_the_random_branch(differential):
    """simple-graph: three nodes appending to a string, a conditional edge choosing node_2 or
    node_3 at random (seeded), the nodes' prints, the results, the drawing."""
    def scenario(E):
        class State(TypedDict):
            graph_state: str

        def node_1(state):
            print("---Node 1---")
            return {"graph_state": state["graph_state"] + " I am"}

        def node_2(state):
            print("---Node 2---")
            return {"graph_state": state["graph_state"] + " happy!"}

        def node_3(state):
            print("---Node 3---")
            return {"graph_state": state["graph_state"] + " sad!"}

        graph = _coin_branch(E, State, node_1, node_2, node_3, seed=3)
        runs = [_printed(lambda: graph.invoke({"graph_state": "Hi, this is Lance."})) for _ in range(6)]
        return _mermaid(graph), runs

    ref = differential(scenario)
    results = {r[1]["graph_state"] for r in ref[1]}
    assert results == {"Hi, this is Lance. I am happy!", "Hi, this is Lance. I am sad!"}


def test_chain_messages_add_messages_and_a_tool_calling_model_node(differential):
    """chain: messages pretty-printed, `add_messages` called by hand, then a one-node graph
    calling the tool-bound model — a greeting answered in words, a product answered with a
    tool call (the state's input is a single message, not a list)."""
    def scenario(E):
        convo = [AIMessage("You study sea mammals, right?", name="Model"),
                 HumanMessage("That's right.", name="Lance"),
                 AIMessage("What would you like to know?", name="Model"),
                 HumanMessage("Where can I see orcas in the US?", name="Lance")]
        printed = _pp(convo)

        initial = [AIMessage("Hello! What can I do for you?", name="Model"),
                   HumanMessage("I'm after facts on marine biology.", name="Lance")]
        merged = E.add_messages(initial, AIMessage("Sure, which part?", name="Model"))

        llm = _llm(_say("Hi there! What can I do for you?", "r1"), _call("r2", "multiply", {"a": 2, "b": 3}, "c1"))
        llm_with_tools = llm.bind_tools([multiply])

        class MessagesState(E.MessagesState):
            pass

        def tool_calling_llm(state: MessagesState):
            return {"messages": [llm_with_tools.invoke(state["messages"])]}

        builder = E.StateGraph(MessagesState)
        builder.add_node("tool_calling_llm", tool_calling_llm)
        builder.add_edge(E.START, "tool_calling_llm")
        builder.add_edge("tool_calling_llm", E.END)
        graph = builder.compile()
        hello = graph.invoke({"messages": HumanMessage(content="Hello!")})
        product = graph.invoke({"messages": HumanMessage(content="Multiply 2 and 3")})
        return (printed, merged, _mermaid(graph), _pp(hello["messages"]), _pp(product["messages"]),
                product, llm.seen)

    ref = differential(scenario)
    assert ref[5]["messages"][-1][1]["tool_calls"][0]["name"] == "multiply"


def test_router_sends_a_tool_call_to_the_tool_node_and_a_greeting_to_the_end(differential):
    """router: `tools_condition` routes a tool call to the `ToolNode`, which ends the run;
    a plain reply ends at once."""
    def scenario(E):
        llm = _llm(_call("r1", "multiply", {"a": 2, "b": 2}, "c1"), _say("Hello! How can I help?", "r2"))
        llm_with_tools = llm.bind_tools([multiply])

        def tool_calling_llm(state: E.MessagesState):
            return {"messages": [llm_with_tools.invoke(state["messages"])]}

        builder = E.StateGraph(E.MessagesState)
        builder.add_node("tool_calling_llm", tool_calling_llm)
        builder.add_node("tools", ToolNode([multiply]))
        builder.add_edge(E.START, "tool_calling_llm")
        builder.add_conditional_edges("tool_calling_llm", tools_condition)
        builder.add_edge("tools", E.END)
        graph = builder.compile()
        routed = graph.invoke({"messages": [HumanMessage(content="Hello, what is 2 multiplied by 2?")]})
        greeted = collect(lambda: graph.stream({"messages": [HumanMessage(content="Hello world.")]},
                                               stream_mode="updates"))
        return _mermaid(graph), _pp(routed["messages"]), routed, greeted

    ref = differential(scenario)
    assert ref[2]["messages"][-1][1]["content"] == "4"


def test_agent_loops_through_add_multiply_divide_to_an_answer(differential):
    """agent: the ReAct loop (tools back to the assistant) through three sequential tool
    calls; the xray drawing, the printed conversation and what the model was sent."""
    def scenario(E):
        llm = _llm(_call("a1", "add", {"a": 3, "b": 4}, "c1"), _call("a2", "multiply", {"a": 7, "b": 2}, "c2"),
                   _call("a3", "divide", {"a": 14, "b": 5}, "c3"), _say("The result is 2.8.", "a4"))
        react_graph = _arith_agent(E, llm)
        messages = [HumanMessage(content="Add 3 and 4. Multiply the output by 2. Divide the output by 5")]
        messages = react_graph.invoke({"messages": messages})
        return _mermaid(react_graph, xray=True), _pp(messages["messages"]), llm.seen

    ref = differential(scenario)
    assert any("2.8" in line for line in ref[1])


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_agent_memory_forgets_without_a_checkpointer_and_remembers_on_a_thread(differential, kind, tmp_path):
    """agent-memory: two turns without a checkpointer (the second sees only itself), then
    the same turns on thread "1" of a `MemorySaver` (the second sees the first); the state
    and history of the thread."""
    def scenario(E):
        def turns():
            return [_call("x1", "add", {"a": 3, "b": 4}, "c1"), _say("3 plus 4 is 7.", "x2"),
                    _call("x3", "multiply", {"a": 7, "b": 2}, "c2"), _say("7 times 2 is 14.", "x4")]

        llm = _llm(*turns(), *turns())
        react_graph = _arith_agent(E, llm)
        first = react_graph.invoke({"messages": [HumanMessage(content="Add 3 and 4.")]})
        second = react_graph.invoke({"messages": [HumanMessage(content="Multiply that by 2.")]})

        memory = _checkpointer(E, kind, tmp_path)
        builder_graph = _arith_agent(E, llm, checkpointer=memory)
        config = {"configurable": {"thread_id": "1"}}
        m1 = builder_graph.invoke({"messages": [HumanMessage(content="Add 3 and 4.")]}, config)
        m2 = builder_graph.invoke({"messages": [HumanMessage(content="Multiply that by 2.")]}, config)
        return (_pp(first["messages"]), _pp(second["messages"]), _pp(m1["messages"]), _pp(m2["messages"]),
                snapshot_summary(builder_graph.get_state(config)), _history(builder_graph, config), llm.seen)

    ref = differential(scenario)
    assert len(ref[3]) > len(ref[2])


# === module 2 =================================================================================


def _mood_graph(E, schema, name_of):
    """state-schema's graph over `schema`; `name_of(state)` reads the name as the schema
    allows (a key or an attribute)."""

    def node_1(state):
        print("---Node 1---")
        return {"name": name_of(state) + " is ... "}

    def node_2(state):
        print("---Node 2---")
        return {"mood": "happy"}

    def node_3(state):
        print("---Node 3---")
        return {"mood": "sad"}

    return _coin_branch(E, schema, node_1, node_2, node_3, seed=5)


def _coin_branch(E, schema, node_1, node_2, node_3, *, seed):
    """The lessons' first graph: START -> node_1, then node_2 or node_3 by a seeded coin."""
    coin = random.Random(seed)

    def decide_mood(state) -> Literal["node_2", "node_3"]:
        return "node_2" if coin.random() < 0.5 else "node_3"

    builder = E.StateGraph(schema)
    builder.add_node("node_1", node_1)
    builder.add_node("node_2", node_2)
    builder.add_node("node_3", node_3)
    builder.add_edge(E.START, "node_1")
    builder.add_conditional_edges("node_1", decide_mood)
    builder.add_edge("node_2", E.END)
    builder.add_edge("node_3", E.END)
    return builder.compile()


def test_state_schema_typed_dict_and_dataclass_states(differential):
    """state-schema: a TypedDict state with a `Literal` mood (invoked with the name only) and
    a dataclass state (invoked with an instance; a mood outside the Literal is not checked)."""
    def scenario(E):
        class TypedDictState(TypedDict):
            name: str
            mood: Literal["happy", "sad"]

        @dataclass
        class DataclassState:
            name: str
            mood: Literal["happy", "sad"]

        typed = _mood_graph(E, TypedDictState, lambda s: s["name"])
        dc = _mood_graph(E, DataclassState, lambda s: s.name)
        return (_mermaid(typed), [_printed(lambda: typed.invoke({"name": "Lance"})) for _ in range(3)],
                _mermaid(dc), _printed(lambda: dc.invoke(DataclassState(name="Lance", mood="sad"))),
                _printed(lambda: dc.invoke(DataclassState(name="Lance", mood="mad"))),
                _printed(lambda: dc.invoke({"name": "Lance"})))

    differential(scenario)


def test_state_schema_pydantic_validates_input_and_reports_errors(differential):
    """state-schema: a pydantic state whose validator only allows "happy" or "sad" — the
    model built by hand raises, the graph runs from a valid instance or dict, and an invalid
    mood in the input fails the run with pydantic's `ValidationError`, as does a missing
    field."""
    def scenario(E):
        class PydanticState(BaseModel):
            name: str
            mood: str

            @field_validator("mood")
            @classmethod
            def validate_mood(cls, value):
                if value not in ["happy", "sad"]:
                    raise ValueError("Each mood must be either 'happy' or 'sad'")
                return value

        by_hand = capture(lambda: PydanticState(name="John Doe", mood="mad"))
        graph = _mood_graph(E, PydanticState, lambda s: s.name)
        return (by_hand, _mermaid(graph),
                _printed(lambda: graph.invoke(PydanticState(name="Lance", mood="sad"))),
                _printed(lambda: graph.invoke({"name": "Lance", "mood": "happy"})),
                _printed(lambda: graph.invoke({"name": "Lance", "mood": "mad"})),
                _printed(lambda: graph.invoke({"name": "Lance"})))

    ref = differential(scenario)
    assert ref[4][1][:2] == ("raises", "ValidationError")


def test_state_reducers_last_value_conflicts_and_operator_add(differential):
    """state-reducers: a plain key overwritten by one node; two parallel nodes writing it
    fail with `InvalidUpdateError`; with `operator.add` the list grows (the two branches in
    order), and a `None` input fails with the reducer's `TypeError`."""
    def scenario(E):
        class State(TypedDict):
            foo: int

        def bump(name):
            def node(state):
                print(f"---{name}---")
                return {"foo": state["foo"] + 1}
            return node

        one = E.StateGraph(State)
        one.add_node("node_1", bump("Node 1"))
        one.add_edge(E.START, "node_1")
        one.add_edge("node_1", E.END)
        single = one.compile()

        def fan(schema, nodes):
            b = E.StateGraph(schema)
            for name, fn in nodes:
                b.add_node(name, fn)
            b.add_edge(E.START, "node_1")
            b.add_edge("node_1", "node_2")
            b.add_edge("node_1", "node_3")
            b.add_edge("node_2", E.END)
            b.add_edge("node_3", E.END)
            return b.compile()

        conflicting = fan(State, [(f"node_{i}", bump(f"Node {i}")) for i in (1, 2, 3)])

        def in_order(run):
            lines, result = run
            return lines[:1], sorted(lines[1:]), result  # the branches print from LangGraph's pool

        class AddState(TypedDict):
            foo: Annotated[list[int], operator.add]

        def grow(name):
            def node(state):
                print(f"---{name}---")
                return {"foo": [state["foo"][-1] + 1]}
            return node

        b = E.StateGraph(AddState)
        b.add_node("node_1", grow("Node 1"))
        b.add_edge(E.START, "node_1")
        b.add_edge("node_1", E.END)
        appended = b.compile()
        branches = fan(AddState, [(f"node_{i}", grow(f"Node {i}")) for i in (1, 2, 3)])
        return (_mermaid(single), _printed(lambda: single.invoke({"foo": 1})),
                _mermaid(conflicting), in_order(_printed(lambda: conflicting.invoke({"foo": 1}))),
                _printed(lambda: appended.invoke({"foo": [1]})),
                _mermaid(branches), in_order(_printed(lambda: branches.invoke({"foo": [1]}))),
                _printed(lambda: branches.invoke({"foo": None})))

    ref = differential(scenario)
    assert ref[3][2][:2] == ("raises", "InvalidUpdateError")
    assert ref[6][2] == {"foo": [1, 2, 3, 3]}


def test_state_reducers_custom_reducer_and_message_reducers(differential):
    """state-reducers: `operator.add` fails on a `None` input where a custom reducer treating
    `None` as `[]` runs; `add_messages` called by hand appends, overwrites a message by id
    and deletes with `RemoveMessage`; the extended messages states compile."""
    def scenario(E):
        def reduce_list(left, right):
            return (left or []) + (right or [])

        class DefaultState(TypedDict):
            foo: Annotated[list[int], operator.add]

        class CustomReducerState(TypedDict):
            foo: Annotated[list[int], reduce_list]

        def node_1(state):
            print("---Node 1---")
            return {"foo": [2]}

        def build(schema):
            b = E.StateGraph(schema)
            b.add_node("node_1", node_1)
            b.add_edge(E.START, "node_1")
            b.add_edge("node_1", E.END)
            return b.compile()

        default, custom = build(DefaultState), build(CustomReducerState)

        class CustomMessagesState(TypedDict):
            messages: Annotated[list[AnyMessage], E.add_messages]
            added_key_1: str
            added_key_2: str

        class ExtendedMessagesState(E.MessagesState):
            added_key_1: str
            added_key_2: str

        def echo(state):
            return {"messages": [AIMessage("noted", id="e1")], "added_key_1": "one"}

        keyed = []
        for schema in (CustomMessagesState, ExtendedMessagesState):
            b = E.StateGraph(schema)
            b.add_node("echo", echo)
            b.add_edge(E.START, "echo")
            g = b.compile()
            keyed.append((g.invoke({"messages": [HumanMessage("hi", id="h1")], "added_key_2": "two"}),
                          sorted(g.get_input_jsonschema()["properties"])))

        initial = [AIMessage("Hello! What can I do for you?", name="Model", id="1"),
                   HumanMessage("I'm after facts on marine biology.", name="Lance", id="2")]
        replaced = E.add_messages(initial, HumanMessage("Whales, specifically", name="Lance", id="2"))
        messages = [AIMessage("Hi.", name="Bot", id="1"), HumanMessage("Hi.", name="Lance", id="2"),
                    AIMessage("You study sea mammals?", name="Bot", id="3"),
                    HumanMessage("I know whales. What else?", name="Lance", id="4")]
        delete_messages = [RemoveMessage(id=m.id) for m in messages[:-2]]
        return (_printed(lambda: default.invoke({"foo": None})),
                _printed(lambda: custom.invoke({"foo": None})),
                keyed, replaced, repr(delete_messages), E.add_messages(messages, delete_messages))

    ref = differential(scenario)
    assert ref[0][1][:2] == ("raises", "TypeError")
    assert ref[1][1] == {"foo": [2]}


def test_multiple_schemas_private_state_and_input_output_schemas(differential):
    """multiple-schemas: a private key passed between two nodes and absent from the output;
    a graph returning every key of its one state; the same graph narrowed by input and output
    schemas (returns the answer only); streams and drawings of each."""
    def scenario(E):
        class OverallState(TypedDict):
            foo: int

        class PrivateState(TypedDict):
            baz: int

        def node_1(state: OverallState) -> PrivateState:
            print("---Node 1---")
            return {"baz": state["foo"] + 1}

        def node_2(state: PrivateState) -> OverallState:
            print("---Node 2---")
            return {"foo": state["baz"] + 1}

        b = E.StateGraph(OverallState)
        b.add_node("node_1", node_1)
        b.add_node("node_2", node_2)
        b.add_edge(E.START, "node_1")
        b.add_edge("node_1", "node_2")
        b.add_edge("node_2", E.END)
        private = b.compile()

        class QAState(TypedDict):
            question: str
            answer: str
            notes: str

        class InputState(TypedDict):
            question: str

        class OutputState(TypedDict):
            answer: str

        def thinking_node(state: InputState):
            return {"answer": "bye", "notes": "... his name is Lance"}

        def answer_node(state: QAState) -> OutputState:
            return {"answer": "bye Lance"}

        def qa(**schemas):
            g = E.StateGraph(QAState, **schemas)
            g.add_node("answer_node", answer_node)
            g.add_node("thinking_node", thinking_node)
            g.add_edge(E.START, "thinking_node")
            g.add_edge("thinking_node", "answer_node")
            g.add_edge("answer_node", E.END)
            return g.compile()

        whole, narrowed = qa(), qa(input_schema=InputState, output_schema=OutputState)
        return (_mermaid(private), _printed(lambda: private.invoke({"foo": 1})),
                _printed(lambda: collect(lambda: private.stream({"foo": 1}, stream_mode=["updates", "values"]))),
                _mermaid(whole), whole.invoke({"question": "hi"}),
                _mermaid(narrowed), narrowed.invoke({"question": "hi"}),
                collect(lambda: narrowed.stream({"question": "hi"}, stream_mode=["updates", "values"])))

    ref = differential(scenario)
    assert ref[6] == {"answer": "bye Lance"}


def test_trim_filter_messages_remove_filter_and_trim_before_the_model(differential):
    """trim-filter-messages: a chat node answering the whole list; a `filter` node deleting
    all but the last two messages with `RemoveMessage`; a node sending only the last message;
    a node trimming with `trim_messages` and a chat model as token counter. What each model
    was sent and what the graph returns, printed."""
    def scenario(E):
        def chat_graph(node, pre=None):
            b = E.StateGraph(E.MessagesState)
            if pre:
                b.add_node("filter", pre)
                b.add_edge(E.START, "filter")
                b.add_edge("filter", "chat_model")
            else:
                b.add_edge(E.START, "chat_model")
            b.add_node("chat_model", node)
            b.add_edge("chat_model", E.END)
            return b.compile()

        opening = [AIMessage("You study sea mammals?", name="Bot"),
                   HumanMessage("I know whales. What else should I learn about?", name="Lance")]
        llm = _llm(_say("Try dolphins and seals.", "m1"), _say("Narwhals have a tusk.", "m2"),
                   _say("Manatees graze sea grass.", "m3"), _say("Orcas live in every ocean.", "m4"))
        plain = chat_graph(lambda state: {"messages": llm.invoke(state["messages"])})
        out_plain = plain.invoke({"messages": opening})

        def filter_messages(state: E.MessagesState):
            return {"messages": [RemoveMessage(id=m.id) for m in state["messages"][:-2]]}

        filtered = chat_graph(lambda state: {"messages": [llm.invoke(state["messages"])]}, filter_messages)
        messages = [AIMessage("Hi.", name="Bot", id="1"), HumanMessage("Hi.", name="Lance", id="2"),
                    AIMessage("You study sea mammals?", name="Bot", id="3"),
                    HumanMessage("I know whales. What else?", name="Lance", id="4")]
        out_filtered = filtered.invoke({"messages": messages})

        last_only = chat_graph(lambda state: {"messages": [llm.invoke(state["messages"][-1:])]})
        messages.append(out_filtered["messages"][-1])
        messages.append(HumanMessage("Tell me more about Narwhals!", name="Lance"))
        out_last = last_only.invoke({"messages": messages})

        counter = WordCounter(seen=[])

        def trimmed_node(state: E.MessagesState):
            kept = trim_messages(state["messages"], max_tokens=20, strategy="last",
                                 token_counter=counter, allow_partial=False)
            return {"messages": [llm.invoke(kept)]}

        trimming = chat_graph(trimmed_node)
        messages.append(out_last["messages"][-1])
        messages.append(HumanMessage("Tell me where Orcas live!", name="Lance"))
        by_hand = trim_messages(messages, max_tokens=20, strategy="last", token_counter=counter,
                                allow_partial=False)
        out_trim = trimming.invoke({"messages": messages})
        return (_mermaid(plain), _pp(out_plain["messages"]), _mermaid(filtered), _pp(out_filtered["messages"]),
                _pp(out_last["messages"]), by_hand, _pp(out_trim["messages"][-1]), out_trim, llm.seen)

    ref = differential(scenario)
    sent = ref[-1]
    assert len(sent[1]) == 2 and len(sent[2]) == 1


def _summarizing_chatbot(E, model, checkpointer, *, pass_config=False):
    """chatbot-summarization's graph (streaming-interruption passes the node's config on to
    the model)."""
    class State(E.MessagesState):
        summary: str

    def call_model(state: State, config: RunnableConfig):
        summary = state.get("summary", "")
        if summary:
            messages = [SystemMessage(content=f"Summary of conversation earlier: {summary}")] + state["messages"]
        else:
            messages = state["messages"]
        response = model.invoke(messages, config) if pass_config else model.invoke(messages)
        return {"messages": response}

    def summarize_conversation(state: State):
        summary = state.get("summary", "")
        if summary:
            prompt = (f"This is summary of the conversation to date: {summary}\n\n"
                      "Extend the summary by taking into account the new messages above:")
        else:
            prompt = "Create a summary of the conversation above:"
        response = model.invoke(state["messages"] + [HumanMessage(content=prompt)])
        return {"summary": response.content,
                "messages": [RemoveMessage(id=m.id) for m in state["messages"][:-2]]}

    def should_continue(state: State) -> Literal["summarize_conversation", E.END]:
        if len(state["messages"]) > 6:
            return "summarize_conversation"
        return E.END

    workflow = E.StateGraph(State)
    workflow.add_node("conversation", call_model)
    workflow.add_node(summarize_conversation)
    workflow.add_edge(E.START, "conversation")
    workflow.add_conditional_edges("conversation", should_continue)
    workflow.add_edge("summarize_conversation", E.END)
    return workflow.compile(checkpointer=checkpointer)


def _chat_script():
    return [_say("Hello Lance! How can I help?", "s1"), _say("Your name is Lance.", "s2"),
            _say("The 49ers have a long history.", "s3"), _say("Yes, Nick Bosa is highly paid.", "s4"),
            _say("Lance likes the 49ers and Nick Bosa.", "s5"), _say("Sure, Lance.", "s6"),
            _say("Bosa plays defensive end.", "s7"), _say("Anything else?", "s8"),
            _say("Lance asked about Bosa; summary extended.", "s9")]


_TURNS = ["hi! I'm Lance", "what's my name?", "i like the 49ers!",
          "i like Nick Bosa, isn't he the highest paid defensive player?",
          "what position?", "thanks", "bye"]


def _chat(graph, config, turns):
    out = []
    for text in turns:
        output = graph.invoke({"messages": [HumanMessage(content=text)]}, config)
        out.append(_pp(output["messages"][-1:]))
    return out


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_chatbot_summarization_summarizes_past_six_messages_and_prunes(differential, kind, tmp_path):
    """chatbot-summarization: a thread on a `MemorySaver`; after the fourth turn the history
    passes six messages, the conversation is summarized and all but the last two messages
    removed; later turns send the summary as a system message; a second summary extends the
    first. The summary, state and history along the way."""
    def scenario(E):
        model = _llm(*_chat_script())
        graph = _summarizing_chatbot(E, model, _checkpointer(E, kind, tmp_path))
        config = {"configurable": {"thread_id": "1"}}
        early = _chat(graph, config, _TURNS[:3])
        no_summary = graph.get_state(config).values.get("summary", "")
        fourth = _chat(graph, config, _TURNS[3:4])
        summary = graph.get_state(config).values.get("summary", "")
        late = _chat(graph, config, _TURNS[4:])
        return (_mermaid(graph), early, no_summary, fourth, summary, late,
                snapshot_summary(graph.get_state(config)), _history(graph, config), model.seen)

    ref = differential(scenario)
    assert ref[2] == "" and ref[4] == "Lance likes the 49ers and Nick Bosa."


def test_chatbot_external_memory_sqlite_saver_on_a_connection_and_after_a_restart(differential, tmp_path):
    """chatbot-external-memory: `SqliteSaver(sqlite3.connect(path, check_same_thread=False))`
    (each engine's own, in a file of its own), the conversation summarized on it, then —
    as after a kernel restart — a new connection and a freshly built graph read the thread
    back and continue it; also opened with `SqliteSaver.from_conn_string`."""
    def scenario(E):
        SqliteSaver = _saver_class(E)
        db_path = str(tmp_path / f"{E.label}-example.db")
        model = _llm(*_chat_script())
        conn = sqlite3.connect(db_path, check_same_thread=False)
        memory = SqliteSaver(conn)
        graph = _summarizing_chatbot(E, model, memory)
        config = {"configurable": {"thread_id": "1"}}
        before = _chat(graph, config, _TURNS[:4])
        state_before = snapshot_summary(graph.get_state(config))
        conn.close()

        conn = sqlite3.connect(db_path, check_same_thread=False)
        graph = _summarizing_chatbot(E, model, SqliteSaver(conn))
        state_after = snapshot_summary(graph.get_state(config))
        more = _chat(graph, config, _TURNS[4:5])
        conn.close()

        with _saver(E, "sqlite", tmp_path, name=f"{E.label}-example") as saver:
            graph = _summarizing_chatbot(E, model, saver)
            reopened = snapshot_summary(graph.get_state(config))
            hist = _history(graph, config)
        return before, state_before, state_after, more, reopened, hist, model.seen

    ref = differential(scenario)
    assert ref[1] == ref[2]


# === module 3 =================================================================================


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_breakpoints_interrupt_before_tools_then_resume_or_cancel(differential, kind, tmp_path):
    """breakpoints: `interrupt_before=["tools"]`; the run stops with the tool call pending
    (`next == ("tools",)`), `stream(None)` goes on; on a second thread the user approves,
    on a third declines and the thread stays paused. Streams, snapshots, history."""
    def scenario(E):
        llm = _llm(_call("b1", "multiply", {"a": 2, "b": 3}, "c1"), _say("2 times 3 is 6.", "b2"),
                   _call("b3", "multiply", {"a": 2, "b": 3}, "c2"), _say("That makes 6.", "b4"),
                   _call("b5", "multiply", {"a": 2, "b": 3}, "c3"))
        graph = _arith_agent(E, llm, checkpointer=_checkpointer(E, kind, tmp_path), interrupt_before=["tools"])
        initial_input = {"messages": HumanMessage(content="Multiply 2 and 3")}
        thread = {"configurable": {"thread_id": "1"}}
        paused = _last_of_each(graph.stream(initial_input, thread, stream_mode="values"))
        state = graph.get_state(thread)
        resumed = _last_of_each(graph.stream(None, thread, stream_mode="values"))

        out = {}
        for tid, user_approval in (("2", "yes"), ("3", "no")):
            thread = {"configurable": {"thread_id": tid}}
            first = collect(lambda thread=thread: graph.stream(initial_input, thread, stream_mode="updates"))
            if user_approval.lower() == "yes":
                rest = collect(lambda thread=thread: graph.stream(None, thread, stream_mode="updates"))
            else:
                rest = "Operation cancelled by user."
            out[tid] = (first, rest, snapshot_summary(graph.get_state(thread)), _history(graph, thread))
        return (_mermaid(graph, xray=True), paused, state.next, snapshot_summary(state), resumed,
                _history(graph, {"configurable": {"thread_id": "1"}}), out)

    ref = differential(scenario)
    assert ref[2] == ("tools",)
    assert ref[6]["3"][2]["next"] == ("tools",)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_dynamic_breakpoints_node_interrupt_and_update_state_to_get_past_it(differential, kind, tmp_path):
    """dynamic-breakpoints: `step_2` raises `NodeInterrupt` for a long input; the snapshot
    shows the task's interrupt; re-running with `None` stops again; `update_state` with a
    short input lets `step_2` and `step_3` run. Prints, streams, snapshots, history."""
    def scenario(E):
        class State(TypedDict):
            input: str

        def step_1(state: State) -> State:
            print("---Step 1---")
            return state

        def step_2(state: State) -> State:
            if len(state["input"]) > 5:
                raise E.errors.NodeInterrupt(f"Received input that is longer than 5 characters: {state['input']}")
            print("---Step 2---")
            return state

        def step_3(state: State) -> State:
            print("---Step 3---")
            return state

        builder = E.StateGraph(State)
        builder.add_node("step_1", step_1)
        builder.add_node("step_2", step_2)
        builder.add_node("step_3", step_3)
        builder.add_edge(E.START, "step_1")
        builder.add_edge("step_1", "step_2")
        builder.add_edge("step_2", "step_3")
        builder.add_edge("step_3", E.END)
        graph = builder.compile(checkpointer=_checkpointer(E, kind, tmp_path))
        thread_config = {"configurable": {"thread_id": "1"}}
        first = _printed(lambda: collect(lambda: graph.stream({"input": "hello world"}, thread_config,
                                                              stream_mode="values")))
        state = graph.get_state(thread_config)
        again = _printed(lambda: collect(lambda: graph.stream(None, thread_config, stream_mode="values")))
        still = graph.get_state(thread_config)
        updated = graph.update_state(thread_config, {"input": "hi"})
        after_update = graph.get_state(thread_config)
        last = _printed(lambda: collect(lambda: graph.stream(None, thread_config, stream_mode="values")))
        updates = collect(lambda: graph.stream({"input": "hello world"}, _cfg("2"), stream_mode="updates"))
        return (_mermaid(graph), first, state.next, state.tasks, snapshot_summary(state), again, still.next,
                updated, snapshot_summary(after_update), last, snapshot_summary(graph.get_state(thread_config)),
                _history(graph, thread_config), updates)

    ref = differential(scenario)
    assert ref[2] == ("step_2",) and ref[6] == ("step_2",)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_edit_state_update_messages_at_a_breakpoint_before_the_assistant(differential, kind, tmp_path):
    """edit-state-human-feedback: `interrupt_before=["assistant"]` with a plain string as
    input; the paused snapshot; `update_state` adds a correction (the returned config); the
    state printed; two `stream(None)` runs pause before the assistant again, then finish."""
    def scenario(E):
        llm = _llm(_call("e1", "multiply", {"a": 3, "b": 3}, "c1"), _say("3 times 3 is 9.", "e2"))
        graph = _arith_agent(E, llm, checkpointer=_checkpointer(E, kind, tmp_path),
                             interrupt_before=["assistant"])
        initial_input = {"messages": "Multiply 2 and 3"}
        thread = {"configurable": {"thread_id": "1"}}
        paused = _last_of_each(graph.stream(initial_input, thread, stream_mode="values"))
        state = graph.get_state(thread)
        updated = graph.update_state(thread, {"messages": [HumanMessage(content="No, actually multiply 3 and 3!")]})
        new_state = graph.get_state(thread).values
        printed = _pp(new_state["messages"])
        one = _last_of_each(graph.stream(None, thread, stream_mode="values"))
        two = _last_of_each(graph.stream(None, thread, stream_mode="values"))
        return (_mermaid(graph, xray=True), paused, snapshot_summary(state), state.metadata, updated, printed,
                one, two, snapshot_summary(graph.get_state(thread)), _history(graph, thread), llm.seen)

    ref = differential(scenario)
    assert ref[2]["next"] == ("assistant",)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_edit_state_human_feedback_node_updated_as_node(differential, kind, tmp_path):
    """edit-state-human-feedback: a no-op `human_feedback` node before the assistant, a
    breakpoint before it; the user's text written with `update_state(..., as_node=
    "human_feedback")`, the run goes on to the tool, back to the breakpoint, then ends."""
    def scenario(E):
        llm = _llm(_call("f1", "multiply", {"a": 3, "b": 3}, "c1"), _say("3 times 3 is 9.", "f2"))
        graph = _arith_agent(E, llm, checkpointer=_checkpointer(E, kind, tmp_path),
                             interrupt_before=["human_feedback"], feedback=True)
        thread = {"configurable": {"thread_id": "5"}}
        paused = _last_of_each(graph.stream({"messages": "Multiply 2 and 3"}, thread, stream_mode="values"))
        user_input = "no, multiply 3 and 3"
        updated = graph.update_state(thread, {"messages": user_input}, as_node="human_feedback")
        at_update = graph.get_state(thread)
        one = _last_of_each(graph.stream(None, thread, stream_mode="values"))
        at_breakpoint = graph.get_state(thread)
        two = _last_of_each(graph.stream(None, thread, stream_mode="values"))
        return (_mermaid(graph), paused, updated, snapshot_summary(at_update), at_update.metadata, one,
                snapshot_summary(at_breakpoint), two, _history(graph, thread), llm.seen)

    ref = differential(scenario)
    assert ref[6]["next"] == ("human_feedback",)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_streaming_updates_and_values_of_the_summarizing_chatbot(differential, kind, tmp_path):
    """streaming-interruption: `stream_mode="updates"` printed raw and by
    `chunk["conversation"]["messages"].pretty_print()`, then `stream_mode="values"` printing
    every message of each state."""
    def scenario(E):
        model = _llm(_say("Hello Lance! How can I help?", "u1"), _say("Hi again Lance.", "u2"),
                     _say("Hello, Lance!", "u3"))
        graph = _summarizing_chatbot(E, model, _checkpointer(E, kind, tmp_path), pass_config=True)
        config = {"configurable": {"thread_id": "1"}}
        raw = collect(lambda: graph.stream({"messages": [HumanMessage(content="hi! I'm Lance")]}, config,
                                           stream_mode="updates"))
        printed = []
        for chunk in graph.stream({"messages": [HumanMessage(content="hi! I'm Lance")]}, config,
                                  stream_mode="updates"):
            printed.extend(_pp(chunk["conversation"]["messages"]))
        config = {"configurable": {"thread_id": "2"}}
        values = []
        for event in graph.stream({"messages": [HumanMessage(content="hi! I'm Lance")]}, config,
                                  stream_mode="values"):
            values.append(_pp(event["messages"]))
        return raw, printed, values

    differential(scenario)


def test_streaming_astream_events_and_tokens_of_one_node(differential):
    """streaming-interruption: `astream_events(version="v2")` listed as the lesson prints it
    (node, event type, name), the `on_chat_model_stream` events of the `conversation` node
    (their data) and their contents joined with `|`."""
    async def scenario(E):
        model = _llm(_say("The San Francisco 49ers are a football team.", "t1"),
                     _say("The 49ers play in Santa Clara.", "t2"), _say("They won five Super Bowls.", "t3"))
        graph = _summarizing_chatbot(E, model, E.checkpoint_memory.MemorySaver(), pass_config=True)
        input_message = HumanMessage(content="Tell me about the 49ers NFL team")
        listed = []
        async for event in graph.astream_events({"messages": [input_message]}, _cfg("3"), version="v2"):
            listed.append(f"Node: {event['metadata'].get('langgraph_node', '')}. "
                          f"Type: {event['event']}. Name: {event['name']}")
        node_to_stream = "conversation"
        data = []
        async for event in graph.astream_events({"messages": [input_message]}, _cfg("4"), version="v2"):
            if (event["event"] == "on_chat_model_stream"
                    and event["metadata"].get("langgraph_node", "") == node_to_stream):
                data.append(event["data"])
        joined = []
        async for event in graph.astream_events({"messages": [input_message]}, _cfg("5"), version="v2"):
            if (event["event"] == "on_chat_model_stream"
                    and event["metadata"].get("langgraph_node", "") == node_to_stream):
                joined.append(event["data"]["chunk"].content)
        return listed, data, "|".join(joined)

    ref = differential(scenario)
    assert ref[2].startswith("They| won| five| Super| Bowls.")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_streaming_messages_and_values_of_the_agent(differential, kind, tmp_path):
    """streaming-interruption (the agent part): the agent streamed in `values` mode (the
    last message of each state converted back with `convert_to_messages`) and in `messages`
    mode (every token and tool-call chunk with its metadata, the tool's answer)."""
    def scenario(E):
        from langchain_core.messages import convert_to_messages

        def script():
            return [_call("g1", "multiply", {"a": 2, "b": 3}, "c1"), _say("2 times 3 is 6.", "g2")]

        llm = _llm(*script(), *script())
        graph = _arith_agent(E, llm, checkpointer=_checkpointer(E, kind, tmp_path))
        input_message = HumanMessage(content="Multiply 2 and 3")
        lasts = [repr(convert_to_messages(event["messages"])[-1])
                 for event in graph.stream({"messages": [input_message]}, _cfg("1"), stream_mode="values")]
        messages = collect(lambda: graph.stream({"messages": [input_message]}, _cfg("2"), stream_mode="messages"))
        return lasts, messages

    ref = differential(scenario)
    assert any(m[1]["langgraph_node"] == "tools" for m in ref[1])


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_time_travel_browse_history_replay_and_fork(differential, kind, tmp_path):
    """time-travel: a run of the agent; the thread's state and its five checkpoints; a
    replay from the checkpoint before the assistant (`stream(None, to_replay.config)`); a
    fork by `update_state` on that checkpoint replacing the human message by id, the
    forked state first in the history, then the forked branch run to the end."""
    def scenario(E):
        llm = _llm(_call("h1", "multiply", {"a": 2, "b": 3}, "c1"), _say("2 times 3 is 6.", "h2"),
                   _call("h3", "multiply", {"a": 2, "b": 3}, "c2"), _say("Again, 6.", "h4"),
                   _call("h5", "multiply", {"a": 5, "b": 3}, "c3"), _say("5 times 3 is 15.", "h6"))
        graph = _arith_agent(E, llm, checkpointer=_checkpointer(E, kind, tmp_path))
        thread = {"configurable": {"thread_id": "1"}}
        first = _last_of_each(graph.stream({"messages": HumanMessage(content="Multiply 2 and 3")}, thread,
                                           stream_mode="values"))
        current = snapshot_summary(graph.get_state({"configurable": {"thread_id": "1"}}))
        all_states = [s for s in graph.get_state_history(thread)]
        to_replay = all_states[-2]
        picked = (to_replay.values, to_replay.next, to_replay.config, to_replay.metadata)
        replayed = _last_of_each(graph.stream(None, to_replay.config, stream_mode="values"))
        after_replay = _history(graph, thread)

        to_fork = all_states[-2]
        fork_config = graph.update_state(
            to_fork.config,
            {"messages": [HumanMessage(content="Multiply 5 and 3", id=to_fork.values["messages"][0].id)]})
        all_states = [s for s in graph.get_state_history(thread)]
        newest = (all_states[0].values["messages"], all_states[0].next, all_states[0].metadata)
        at_fork = snapshot_summary(graph.get_state({"configurable": {"thread_id": "1"}}))
        forked = _last_of_each(graph.stream(None, fork_config, stream_mode="values"))
        return (_mermaid(graph, xray=True), first, current, len(all_states), picked, replayed, after_replay,
                fork_config, newest, at_fork, forked, snapshot_summary(graph.get_state(thread)),
                _history(graph, thread), llm.seen)

    ref = differential(scenario)
    assert ref[3] == 10
    assert any("15" in line for line in ref[10])


@pytest.mark.parametrize("mode", ["updates", "values"])
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_time_travel_replay_streams_from_the_checkpoint_in_each_mode(differential, mode, kind, tmp_path):
    """time-travel (the server part, locally): after a run, the checkpoint before the
    assistant found in the history and the run replayed from its `checkpoint_id` in
    `updates` or `values` mode — every chunk."""
    def scenario(E):
        llm = _llm(_call("p1", "multiply", {"a": 2, "b": 3}, "c1"), _say("6.", "p2"),
                   _call("p3", "multiply", {"a": 2, "b": 3}, "c2"), _say("Still 6.", "p4"))
        graph = _arith_agent(E, llm, checkpointer=_checkpointer(E, kind, tmp_path))
        thread = _cfg("t")
        first = collect(lambda: graph.stream({"messages": HumanMessage(content="Multiply 2 and 3")}, thread,
                                             stream_mode=mode))
        states = list(graph.get_state_history(thread))
        checkpoint_id = states[-2].config["configurable"]["checkpoint_id"]
        replay_config = {"configurable": {"thread_id": "t", "checkpoint_id": checkpoint_id}}
        replay = collect(lambda: graph.stream(None, replay_config, stream_mode=mode))
        return first, replay, [s.next for s in graph.get_state_history(thread)]

    differential(scenario)


# === what the lessons print of snapshots, events, async drivers, the course's database ========


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_snapshots_tasks_and_configs_print_as_the_lessons_show_them(differential, kind, tmp_path):
    """The lessons display objects by their repr: `graph.get_state(thread)` (a
    `StateSnapshot`), `print(state.tasks)` (a `PregelTask` with its interrupt), the config
    `update_state` returns, a history entry picked to replay. Their text, ids and
    timestamps normalized."""
    def scenario(E):
        class State(TypedDict):
            input: str

        def step_1(state: State) -> State:
            return state

        def step_2(state: State) -> State:
            if len(state["input"]) > 5:
                raise E.errors.NodeInterrupt(f"Received input that is longer than 5 characters: {state['input']}")
            return state

        builder = E.StateGraph(State)
        builder.add_node("step_1", step_1)
        builder.add_node("step_2", step_2)
        builder.add_edge(E.START, "step_1")
        builder.add_edge("step_1", "step_2")
        dynamic = builder.compile(checkpointer=_checkpointer(E, kind, tmp_path))
        thread_config = _cfg("1")
        collect(lambda: dynamic.stream({"input": "hello world"}, thread_config, stream_mode="values"))
        state = dynamic.get_state(thread_config)
        shown = [repr(state), repr(state.tasks), repr(state.interrupts)]
        shown.append(repr(dynamic.update_state(thread_config, {"input": "hi"})))
        shown.append(repr(dynamic.get_state(thread_config)))

        llm = _llm(_call("r1", "multiply", {"a": 2, "b": 3}, "c1"), _say("6", "r2"))
        graph = _arith_agent(E, llm, checkpointer=_checkpointer(E, kind, tmp_path),
                             interrupt_before=["assistant"])
        thread = _cfg("2")
        collect(lambda: graph.stream({"messages": "Multiply 2 and 3"}, thread, stream_mode="values"))
        shown.append(repr(graph.get_state(thread)))
        collect(lambda: graph.stream(None, thread, stream_mode="values"))
        collect(lambda: graph.stream(None, thread, stream_mode="values"))
        all_states = list(graph.get_state_history(thread))
        shown.extend(repr(_without_result_ids(s)) for s in all_states)
        return shown

    differential(scenario)


def _without_result_ids(snapshot):
    """The snapshot with its tasks' result messages id-less (see `_history`: whether
    LangGraph's saved write has the id `add_messages` gave it varies from run to run)."""
    def strip(result):
        if isinstance(result, dict) and isinstance(result.get("messages"), list):
            return {**result, "messages": [m.model_copy(update={"id": None}) for m in result["messages"]]}
        return result

    return snapshot._replace(tasks=tuple(t._replace(result=strip(t.result)) for t in snapshot.tasks))


def _event(ev):
    """An `astream_events` v2 event as printed whole."""
    return {k: ev.get(k) for k in ("event", "name", "tags", "metadata", "data", "run_id", "parent_ids")}


def test_astream_events_v2_whole_events_of_the_chatbot_and_the_agent(differential):
    """streaming-interruption prints `event["data"]` and reads `event["metadata"]`: every
    v2 event of a chatbot turn and of an agent run compared whole (name, tags, metadata,
    inputs and outputs of the graph, nodes, model, tool and edges)."""
    async def scenario(E):
        model = _llm(_say("Hello Lance!", "v1"))
        chatbot = _summarizing_chatbot(E, model, E.checkpoint_memory.MemorySaver(), pass_config=True)
        chat = [_event(ev) async for ev in chatbot.astream_events(
            {"messages": [HumanMessage(content="hi! I'm Lance", id="in1")]}, _cfg("1"), version="v2")]
        llm = _llm(_call("w1", "multiply", {"a": 2, "b": 3}, "c1"), _say("It is 6.", "w2"))
        agent = _arith_agent(E, llm)
        run = [_event(ev) async for ev in agent.astream_events(
            {"messages": [HumanMessage(content="Multiply 2 and 3", id="in2")]}, version="v2")]
        return chat, run

    ref = differential(scenario)
    assert ("on_tool_end", "multiply") in {(e["event"], e["name"]) for e in ref[1]}


@pytest.mark.parametrize("where", ["compile", "run"])
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_breakpoints_set_at_compile_or_per_run_as_the_studio_client_does(differential, where, kind, tmp_path):
    """breakpoints (the Studio part): the server passes `interrupt_before=["tools"]` to the
    run rather than to `compile`; the same stops and resumptions either way, streamed in
    `values` mode as the lesson prints them."""
    def scenario(E):
        llm = _llm(_call("s1", "multiply", {"a": 2, "b": 3}, "c1"), _say("6 it is.", "s2"))
        compiled_with = ["tools"] if where == "compile" else None
        run_with = {} if where == "compile" else {"interrupt_before": ["tools"]}
        graph = _arith_agent(E, llm, checkpointer=_checkpointer(E, kind, tmp_path),
                             interrupt_before=compiled_with)
        thread = _cfg("1")
        first = collect(lambda: graph.stream({"messages": [HumanMessage(content="Multiply 2 and 3")]}, thread,
                                             stream_mode="values", **run_with))
        paused = snapshot_summary(graph.get_state(thread))
        second = collect(lambda: graph.stream(None, thread, stream_mode="values", **run_with))
        return first, paused, second, _history(graph, thread)

    ref = differential(scenario)
    assert ref[1]["next"] == ("tools",)


def test_breakpoint_edit_and_time_travel_through_the_async_api(differential):
    """The lessons' human-in-the-loop steps as a server runs them, through the async API:
    `astream` to the breakpoint, `aget_state`, `aupdate_state`, `astream(None)` on, then
    `aget_state_history` and a fork by `aupdate_state` on an older checkpoint, run with
    `ainvoke`."""
    async def scenario(E):
        llm = _llm(_call("y1", "multiply", {"a": 3, "b": 3}, "c1"), _say("9.", "y2"),
                   _call("y3", "multiply", {"a": 5, "b": 3}, "c2"), _say("15.", "y4"))
        graph = _arith_agent(E, llm, checkpointer=E.checkpoint_memory.MemorySaver(),
                             interrupt_before=["tools"])
        thread = _cfg("1")
        first = [c async for c in graph.astream({"messages": "Multiply 2 and 3"}, thread, stream_mode="updates")]
        paused = snapshot_summary(await graph.aget_state(thread))
        updated = await graph.aupdate_state(thread, {"messages": [HumanMessage("make it 3 and 3", id="fix")]},
                                            as_node="assistant")
        after_update = snapshot_summary(await graph.aget_state(thread))
        rest = [c async for c in graph.astream(None, thread, stream_mode="updates")]
        states = [s async for s in graph.aget_state_history(thread)]
        to_fork = states[-2]
        fork_config = await graph.aupdate_state(
            to_fork.config, {"messages": [HumanMessage("Multiply 5 and 3", id=to_fork.values["messages"][0].id)]})
        forked = await graph.ainvoke(None, fork_config)
        resumed = await graph.ainvoke(None, thread)
        return (first, paused, updated, after_update, rest, fork_config, forked, resumed,
                _history(graph, thread), llm.seen)

    differential(scenario)


def _academy_style_db(path):
    """A thread saved as the course's `state_db/example.db` stores it (LangGraph of 2024:
    checkpoints format v1, values serialized as JSON, the old `start:<node>` channels):
    one turn of the summarizing chatbot, thread "1"."""
    import json

    def lc(cls, **kwargs):
        return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}

    human = lc("HumanMessage", content="hi! I'm Lance", type="human")
    human_saved = lc("HumanMessage", content="hi! I'm Lance", type="human", id="20dcd0d2-29e3-4bd0-a83e-74485a28e3e0")
    ai = lc("AIMessage", content="Hello Lance!", type="ai", id="run-f2807f1f-9e42-4f38-a137-056980bf3fb7-0",
            tool_calls=[], invalid_tool_calls=[])
    v = "00000000000000000000000000000001.761a8c54329ca020d4813f3f8164401b"
    w = "00000000000000000000000000000002.d6f25946c3108fc12f27abbcf9b4cedc"
    ids = ["1ef64b22-3155-65d8-bfff-cb35a53ab872", "1ef64b22-315d-6eae-8000-a235a23be95b",
           "1ef64b22-3f46-65de-8001-dc95c3aa36b9"]
    checkpoints = [
        ({"v": 1, "ts": "2024-08-27T20:22:52.733166+00:00", "id": ids[0],
          "channel_values": {"messages": [], "__start__": {"messages": [human]}},
          "channel_versions": {"__start__": v}, "versions_seen": {"__input__": {}},
          "pending_sends": [], "current_tasks": {}},
         {"source": "input", "writes": {"messages": [human]}, "step": -1}),
        ({"v": 1, "ts": "2024-08-27T20:22:52.736675+00:00", "id": ids[1],
          "channel_values": {"messages": [human_saved], "start:conversation": "__start__"},
          "channel_versions": {"__start__": "00000000000000000000000000000002.",
                               "messages": "00000000000000000000000000000002.d276c707b06ba21bedb4e6de234b4042",
                               "start:conversation": w},
          "versions_seen": {"__input__": {}, "__start__": {"__start__": v}},
          "pending_sends": [], "current_tasks": {}},
         {"source": "loop", "writes": None, "step": 0}),
        ({"v": 1, "ts": "2024-08-27T20:22:54.195031+00:00", "id": ids[2],
          "channel_values": {"messages": [human_saved, ai], "conversation": "conversation"},
          "channel_versions": {"__start__": "00000000000000000000000000000002.",
                               "messages": "00000000000000000000000000000003.9ba75b73e61cc4bf2b762ddb2ad37426",
                               "start:conversation": "00000000000000000000000000000003.",
                               "conversation": "00000000000000000000000000000003.c1a9456cbcb093548c8af8548661d954"},
          "versions_seen": {"__input__": {}, "__start__": {"__start__": v},
                            "conversation": {"start:conversation": w}},
          "pending_sends": [], "current_tasks": {}},
         {"source": "loop", "writes": {"conversation": {"messages": ai}}, "step": 1}),
    ]
    writes = [(ids[0], "f663dc3b-612f-5aca-92fa-a28f7838f3db", 0, "messages", [human_saved]),
              (ids[0], "f663dc3b-612f-5aca-92fa-a28f7838f3db", 1, "start:conversation", "__start__"),
              (ids[1], "9f248069-15a9-553c-8970-cbe0b516ab19", 0, "conversation", "conversation"),
              (ids[1], "9f248069-15a9-553c-8970-cbe0b516ab19", 1, "messages", ai)]
    conn = sqlite3.connect(path)
    conn.execute("""CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))""")
    conn.execute("""CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL,
        type TEXT, value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))""")
    parent = None
    for checkpoint, metadata in checkpoints:
        conn.execute("INSERT INTO checkpoints VALUES ('1', '', ?, ?, 'json', ?, ?)",
                     (checkpoint["id"], parent, json.dumps(checkpoint).encode(), json.dumps(metadata).encode()))
        parent = checkpoint["id"]
    for cid, task, idx, channel, value in writes:
        conn.execute("INSERT INTO writes VALUES ('1', '', ?, ?, ?, ?, 'json', ?)",
                     (cid, task, idx, channel, json.dumps(value).encode()))
    conn.commit()
    conn.close()


def test_chatbot_external_memory_continues_the_thread_saved_in_the_course_database(differential, tmp_path):
    """chatbot-external-memory opens the course's `state_db/example.db`, whose thread "1"
    LangGraph saved in 2024 (JSON values, checkpoint format v1), and goes on chatting on
    it, with the saver as the lesson makes it: lgnb's strict serializer reads those JSON
    values, rebuilding only allowlisted classes (LangChain's messages here). It refused
    the whole format before, so the lesson stopped at its first call.
    Then: the old turn's state and history, a new turn, the history after it."""
    def scenario(E):
        db_path = str(tmp_path / f"{E.label}-state.db")
        _academy_style_db(db_path)
        conn = sqlite3.connect(db_path, check_same_thread=False)
        SqliteSaver = _saver_class(E)
        memory = SqliteSaver(conn)
        model = _llm(_say("Your name is Lance.", "n1"))
        graph = _summarizing_chatbot(E, model, memory)
        config = {"configurable": {"thread_id": "1"}}
        graph_state = snapshot_summary(graph.get_state(config))
        before = _history(graph, config)
        turn = _chat(graph, config, ["what's my name?"])
        after = _history(graph, config)
        conn.close()
        return graph_state, before, turn, after, model.seen

    ref = differential(scenario)
    assert ref[0]["values"]["messages"][-1][1]["content"] == "Hello Lance!"

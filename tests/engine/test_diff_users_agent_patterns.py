"""Programs written with two small LangGraph agent libraries, run on LangGraph and on lgnb.

`langgraph-bigtool` (`create_agent(llm, tool_registry)`) gives a ReAct agent a registry
of tools it cannot all bind: the model first calls `retrieve_tools` (a semantic search of
the graph's store, whose index holds each tool's description, or the user's own
`retrieve_tools_function` / `retrieve_tools_coroutine`), the ids found accumulate in the
`selected_tool_ids` state key and are bound on the next turn; each tool call is a `Send`
of its own (`select_tools` or the `ToolNode`), so several run in parallel.
`langgraph-reflection` (`create_reflection_graph(graph, reflection)`) runs the user's
agent graph and a judge graph as the two nodes of a loop: the judge answers with a user
message to ask for another draft, with nothing to accept it; the `RemainingSteps` managed
value ends the loop before the recursion limit.

Both return a LangGraph `StateGraph` builder; a user ports the program to lgnb with
`lgnb.graph.from_langgraph(builder)` and compiles that (with the store, a checkpointer).
The user's own code (tools, writer and judge graphs) uses E's names. Two things break on
the LangGraph this suite pins, on both engines, and users work around them:

* bigtool 0.0.3's router calls `ToolNode.inject_tool_args`, which langgraph-prebuilt 1.x
  renamed (its `ToolNode` now injects state and store itself, also for a `Send` of bare
  tool calls): a call to any retrieved tool fails with `AttributeError`. The workaround
  users apply, `ToolNode.inject_tool_args = lambda self, call, state, store: call`, is the
  `restored_injection` fixture.
* reflection 0.0.1 reads `graph.builder.schema`, which LangGraph's `StateGraph` no longer
  has: users pass `state_schema=` (LangGraph's `MessagesState`, or their own schema built
  with LangGraph's `add_messages`; lgnb's is refused by LangGraph's own builder, see
  `test_reflection_with_lgnb_messages_state_is_refused_by_langgraph_builder`).

Users who wrote their own graphs with lgnb hand lgnb compiled graphs to
`create_reflection_graph`: ported, the wrapper adds them as lgnb subgraphs (each test
marked `built_with` runs both ways); compiled by LangGraph as it is, LangGraph runs them as
plain Runnables (root observables match; an `interrupt()` inside one fails, saying to
port the wrapper). One divergence is left, xfailed: LangGraph's `update_state` runs
bigtool's router without the store (`test_bigtool_tool_call_edited_at_the_breakpoint`).

Observables are raw: streams (`subgraphs=True`), what each model was sent and which tools
were bound per turn, the store's items, states, histories; only ids and timestamps are
normalized (by the harness), and the per-step order of parallel `Send` tasks' chunks,
which LangGraph emits in completion order.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import math
import warnings
from typing import Annotated, Literal

import pytest
from _agent_scenarios import calls as _calls
from _agent_scenarios import history as _history
from _agent_scenarios import on as _on
from _agent_scenarios import replies as _replies
from _agent_scenarios import saver as _saver
from _agent_scenarios import say as _say
from _diff import (acollect, candidate_engine, capture, collect, normalize, reference_engine, run_scenario,
                   selftest_enabled, snapshot_summary, steps_as_multisets)
from _scripted import Scripted
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

pytest.importorskip("langgraph_bigtool")
pytest.importorskip("langgraph_reflection")

warnings.filterwarnings("ignore", message=".*convert_positional_only_function_to_tool.*")


# --- helpers ----------------------------------------------------------------------------------


class Binding(Scripted):
    """A scripted model whose `bind_tools` binds as real chat models do and records the
    names of the tools bound on each turn."""

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        self.seen.append(("bind_tools", names))
        return self.bind(tools=names)


def _model(*steps):
    """Replies in order; a step that is a function answers from the messages it is sent."""
    return Binding(script=_replies(*steps), seen=[])


def _cfg(tid="t", **extra):
    return {"configurable": {"thread_id": tid}, **extra}


def _hi(text="hi", mid="h1"):
    return {"messages": [HumanMessage(text, id=mid)]}


def _msgs(state):
    """What a user prints of the conversation: type, name, content, tool calls."""
    return [(m.type, m.name, m.content, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])])
            for m in state["messages"]]


def _stream(app, inp, cfg=None, modes=("updates", "values"), **kwargs):
    return collect(lambda: app.stream(inp, cfg, stream_mode=list(modes), subgraphs=True, **kwargs))


def _parallel(chunks):
    """A `subgraphs=True` stream of updates and values with each step's updates as a
    multiset: parallel `Send` tasks report in completion order on LangGraph."""
    return steps_as_multisets(chunks, lambda c: isinstance(c, tuple) and len(c) == 3 and c[1] == "values")


_VOCAB = ("add", "sum", "multiply", "product", "cosine", "arc", "root", "square", "floor",
          "round", "balance", "account", "history", "ticket", "weather", "remember", "count", "send")


def _no_msg_ids(value):
    """`value` with each message as (type, name, content, tool calls, tool call id): the
    id LangGraph gives a tool result written beside an interrupt depends on whether its
    background save ran before the step's writes were applied (the saved copy then has
    none, and gets a fresh one on every read); lgnb keeps the one the stream showed."""
    from langchain_core.messages import BaseMessage

    if isinstance(value, BaseMessage):
        return (value.type, value.name, value.content, [(c["name"], c["args"]) for c in getattr(value, "tool_calls", [])],
                getattr(value, "tool_call_id", None))
    if isinstance(value, dict):
        return {k: _no_msg_ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_msg_ids(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_no_msg_ids(v) for v in value)
    return value


def _last_step_unordered(chunks):
    """An `updates` stream whose last step (a tool interrupting beside parallel calls)
    becomes a multiset: both engines stream a sibling's update before or after the
    `__interrupt__` as the tasks happen to finish (and a `values` stream then differs in
    its number of chunks, so the paused run is observed in `updates` only)."""
    i = next((i for i, c in enumerate(chunks) if "tools" in c or "__interrupt__" in c), len(chunks))
    return chunks[:i] + steps_as_multisets(chunks[i:], lambda c: False)


def _embed():
    """A deterministic embedding that makes the search meaningful: one dimension per
    word of a small vocabulary (its count in the text), plus a constant one."""
    from langchain_core.embeddings import Embeddings

    class Keywords(Embeddings):
        def embed_documents(self, texts):
            return [self.embed_query(t) for t in texts]

        def embed_query(self, text):
            words = text.lower().replace(":", " ").replace(".", " ").replace("_", " ").split()
            return [float(sum(w.startswith(v) for w in words)) for v in _VOCAB] + [0.1]

    return Keywords()


def _tool_name(t):
    return getattr(t, "name", None) or t.__name__


def _tool_store(registry, *, ns=("tools",)):
    """The README's store: each tool's `"name: description"` indexed (LangGraph's
    `InMemoryStore` with a deterministic fake embedding)."""
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore(index={"dims": len(_VOCAB) + 1, "embed": _embed(), "fields": ["description"]})
    for tid, t in registry.items():
        desc = getattr(t, "description", None) or t.__doc__
        store.put(ns, tid, {"description": f"{_tool_name(t)}: {desc}"})
    return store


def _items(store, *prefix):
    return sorted((tuple(i.namespace), i.key, i.value) for i in store.search(prefix, limit=100))


def _bigtool(E, model, registry, store=None, checkpointer=None, **kwargs):
    from langgraph_bigtool import create_agent

    return _on(E, create_agent(model, registry, **kwargs)).compile(store=store, checkpointer=checkpointer)


def _math_registry():
    """The README's quickstart: functions of `math` as tools (with positional-only
    arguments converted by bigtool's helper), plus two `@tool`s, keyed by id."""
    from langchain_core.tools import tool
    from langgraph_bigtool.utils import convert_positional_only_function_to_tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    registry = {"add": add, "multiply": multiply}
    for name in ("acos", "cos", "sqrt", "floor"):
        registry[name] = convert_positional_only_function_to_tool(getattr(math, name))
    return registry


@pytest.fixture
def restored_injection(monkeypatch):
    """What bigtool users on langgraph-prebuilt 1.x add: the `inject_tool_args` its router
    calls (the `ToolNode` injects state and store itself when the tool call runs)."""
    from langgraph.prebuilt import ToolNode

    monkeypatch.setattr(ToolNode, "inject_tool_args", lambda self, call, state, store: call,
                        raising=False)


# --- bigtool: retrieval, binding, parallel tool calls ----------------------------------------


def test_bigtool_as_installed_fails_calling_a_retrieved_tool_as_on_langgraph(differential):
    """Without the workaround: retrieval works, then the router's call to the removed
    `ToolNode.inject_tool_args` fails the run with the same `AttributeError`, after the
    same steps streamed."""
    def scenario(E):
        registry = _math_registry()
        model = _model(_calls("m1", ("retrieve_tools", {"query": "arc cosine"}, "r1")),
                       _calls("m2", ("acos", {"x": 0.5}, "c1")))
        app = _bigtool(E, model, registry, _tool_store(registry))
        return _stream(app, {"messages": "Use available tools to calculate arc cosine of 0.5."}), model.seen

    ref = differential(scenario)
    assert ref[0][-1][:2] == ("raises", "AttributeError")


def test_bigtool_quickstart_retrieves_math_tools_and_calls_one(differential, restored_injection):
    """The README's quickstart with a string input: `retrieve_tools` searches the store,
    its answer names the tools found, they are bound on the next turn with
    `retrieve_tools`, `acos` runs; `stream_mode="updates"` as the README prints it."""
    def scenario(E):
        registry = _math_registry()
        model = _model(_calls("m1", ("retrieve_tools", {"query": "arc cosine calculation"}, "r1")),
                       lambda ms: _calls("m2", ("acos", {"x": 0.5}, "c1")),
                       _say("The arc cosine of 0.5 is about 1.0472 radians.", "m3"))
        app = _bigtool(E, model, registry, _tool_store(registry))
        chunks = collect(lambda: app.stream(
            {"messages": "Use available tools to calculate arc cosine of 0.5."}, stream_mode="updates"))
        return chunks, model.seen

    ref = differential(scenario)
    binds = [s for s in ref[1] if isinstance(s, tuple)]
    assert binds[0] == ("bind_tools", ["retrieve_tools"]) and len(binds[1][1]) == 3
    assert ref[0][-1]["agent"]["messages"][0][1]["content"].startswith("The arc cosine")


def test_bigtool_parallel_tool_calls_run_as_one_send_each(differential, restored_injection):
    """Two retrievals in one turn (two `Send`s to `select_tools`, their ids merged without
    duplicates by `_add_new`), then `add` and `multiply` in one turn (two `Send`s to the
    `ToolNode`); each step's updates as a multiset, the values after it exact."""
    def scenario(E):
        registry = _math_registry()
        model = _model(
            _calls("m1", ("retrieve_tools", {"query": "add sum"}, "r1"),
                   ("retrieve_tools", {"query": "multiply product"}, "r2")),
            _calls("m2", ("add", {"a": 2, "b": 3}, "c1"), ("multiply", {"a": 4, "b": 5}, "c2")),
            _say("5 and 20.", "m3"))
        app = _bigtool(E, model, registry, _tool_store(registry), limit=1)
        return _parallel(_stream(app, _hi("add 2 and 3, multiply 4 by 5"))), model.seen

    ref = differential(scenario)
    last = ref[0][-1][2]
    assert last["selected_tool_ids"] == ["add", "multiply"]
    assert [m[1]["content"] for m in last["messages"] if m[0] == "ToolMessage"][-2:] == ["5", "20"]


@pytest.mark.parametrize("mode", ["messages", "custom", "debug", "tasks", "checkpoints"])
def test_bigtool_stream_modes(differential, restored_injection, mode):
    """Each stream mode a UI reads, with a custom event from a registry tool
    (`get_stream_writer()`): tokens and tool messages with their node metadata, custom
    payloads, debug/tasks/checkpoints records of the retrieve-then-call loop."""
    def scenario(E):
        from langchain_core.tools import tool

        @tool
        def floor_of(x: float) -> int:
            """Round down: the floor of x."""
            E.get_stream_writer()({"tool": "floor_of", "x": x})
            return math.floor(x)

        registry = {"floor_of": floor_of, **_math_registry()}
        model = _model(_calls("m1", ("retrieve_tools", {"query": "floor round"}, "r1"), content="Looking for tools"),
                       _calls("m2", ("floor_of", {"x": 2.7}, "c1")),
                       _say("The floor is 2.", "m3"))
        app = _bigtool(E, model, registry, _tool_store(registry), E.InMemorySaver())
        out = []
        for chunk in app.stream(_hi("floor of 2.7"), _cfg(), stream_mode=mode):
            if mode == "messages":
                msg, md = chunk
                chunk = (type(msg).__name__, msg.content, getattr(msg, "tool_call_chunks", None),
                         {k: md.get(k) for k in ("langgraph_node", "langgraph_step", "langgraph_triggers",
                                                 "langgraph_path", "ls_model_type")})
            out.append(chunk)
        return out

    ref = differential(scenario)
    if mode == "custom":
        assert ref == [{"tool": "floor_of", "x": 2.7}]
    elif mode == "messages":
        assert [c[1] for c in ref if c[0] == "ToolMessage"] == ["Available tools: ['floor_of', 'floor']", "2"]
    elif mode == "tasks":
        assert [t["name"] for t in ref if "result" in t] == ["agent", "select_tools", "agent", "tools", "agent"]


def test_bigtool_async_agent_uses_the_retrieval_coroutine(differential, restored_injection):
    """`ainvoke` / `astream`: the agent node runs `acall_model`, `select_tools` its async
    twin with the default `store.asearch` retrieval; the store is searched the same way."""
    async def scenario(E):
        registry = _math_registry()
        model = _model(_calls("m1", ("retrieve_tools", {"query": "square root"}, "r1")),
                       _calls("m2", ("sqrt", {"x": 16}, "c1")),
                       _say("4.", "m3"),
                       _calls("m4", ("retrieve_tools", {"query": "cosine"}, "r2")),
                       _say("found it", "m5"))
        app = _bigtool(E, model, registry, _tool_store(registry), limit=1)
        out = await app.ainvoke(_hi("sqrt of 16"))
        chunks = await acollect(lambda: app.astream(_hi("cosine", "h2"), stream_mode=["updates", "values"],
                                                    subgraphs=True))
        return _msgs(out), out["selected_tool_ids"], chunks, model.seen

    ref = differential(scenario)
    assert ref[1] == ["sqrt"] and ("tool", "sqrt", "4.0", []) in ref[0]


@pytest.mark.parametrize("kind", ["function", "function+store", "coroutine", "both"])
def test_bigtool_custom_retrieval(differential, restored_injection, kind):
    """The README's custom retrieval: by category with a `Literal` argument and no store,
    with `InjectedStore` over a namespace of the user's, async only (a sync `invoke` then
    fails as on LangGraph; `ainvoke` works), or both."""
    async def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import InjectedStore
        from langgraph.store.base import BaseStore

        @tool
        def get_balance(account: str) -> str:
            """Get the balance of an account."""
            return f"{account}: 42 EUR"

        @tool
        def get_history(account: str) -> str:
            """Get the transaction history of an account."""
            return f"{account}: +42"

        @tool
        def create_ticket(text: str) -> str:
            """Open a service ticket."""
            return f"ticket: {text}"

        registry = {"id_1": get_balance, "id_2": get_history, "id_3": create_ticket}

        def by_category(category: Literal["billing", "service"]) -> list[str]:
            """Get tools for a category."""
            return ["id_1", "id_2"] if category == "billing" else ["id_3"]

        async def aby_category(category: Literal["billing", "service"]) -> list[str]:
            """Get tools for a category."""
            return by_category(category)

        def from_store(query: str, *, store: Annotated[BaseStore, InjectedStore]) -> list[str]:
            """Retrieve a tool to use, given a search query."""
            return [r.key for r in store.search(("bank", "tools"), query=query, limit=1)]

        kwargs = {"function": {"retrieve_tools_function": by_category},
                  "function+store": {"retrieve_tools_function": from_store},
                  "coroutine": {"retrieve_tools_coroutine": aby_category},
                  "both": {"retrieve_tools_function": by_category,
                           "retrieve_tools_coroutine": aby_category}}[kind]
        name = "from_store" if kind == "function+store" else \
            "aby_category" if kind == "coroutine" else "by_category"
        args = {"query": "account balance"} if kind == "function+store" else {"category": "billing"}

        def script():
            return _model(_calls("m1", (name, args, "r1")),
                          _calls("m2", ("get_balance", {"account": "ACC-1"}, "c1")),
                          _say("You have 42 EUR.", "m3"))

        store = _tool_store(registry, ns=("bank", "tools"))
        model = script()
        app = _bigtool(E, model, registry, store, **kwargs)
        sync = collect(lambda: app.stream(_hi("my balance?"), stream_mode="updates"))
        model2 = script()
        app2 = _bigtool(E, model2, registry, store, **kwargs)
        out = await app2.ainvoke(_hi("my balance?"))
        return sync, model.seen, _msgs(out), out["selected_tool_ids"], model2.seen

    # lgnb adds the fix to LangGraph's "No synchronous function provided" (the async-only case)
    ref = differential(scenario, exc="extends")
    assert "You have 42 EUR." in [m[2] for m in ref[2]]


def test_bigtool_namespace_prefix_and_filter(differential, restored_injection):
    """`namespace_prefix=` searches one part of the store only, `filter=` keeps the items
    whose value matches, `limit=` caps each search."""
    def scenario(E):
        registry = _math_registry()
        from langgraph.store.memory import InMemoryStore

        store = InMemoryStore(index={"dims": len(_VOCAB) + 1, "embed": _embed(), "fields": ["description"]})
        for tid, t in registry.items():
            kind = "trig" if tid in ("acos", "cos") else "arith"
            store.put(("tools", "math", kind), tid, {"description": f"{_tool_name(t)}: {t.description}",
                                                      "kind": kind})
        store.put(("other",), "weather", {"description": "weather: the weather", "kind": "trig"})
        runs = []
        for prefix, flt, query in [(("tools", "math"), {"kind": "trig"}, "add cosine"),
                                   (("tools",), None, "add sum"),
                                   (("tools", "math", "arith"), {"kind": "arith"}, "cosine square root")]:
            model = _model(_calls("m1", ("retrieve_tools", {"query": query}, "r1")), _say("ok", "m2"))
            app = _bigtool(E, model, registry, store, namespace_prefix=prefix, filter=flt, limit=2)
            out = app.invoke(_hi(query))
            runs.append((out["selected_tool_ids"], out["messages"][2].content, model.seen))
        return runs

    ref = differential(scenario)
    assert [run[0] for run in ref] == [["cos", "acos"], ["add", "cos"], ["sqrt", "add"]]
    assert "weather" not in str(ref)


def test_bigtool_tools_with_injected_state_and_store(differential, restored_injection):
    """Registry tools declaring `InjectedState` (the state the `ToolNode` would get from an
    edge, read for a `Send` of bare tool calls), a key of it, and `InjectedStore` (writing
    to the graph's store, read back by another tool); the model is not shown those args."""
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import InjectedState, InjectedStore
        from langgraph.store.base import BaseStore

        @tool
        def count_tools(state: Annotated[dict, InjectedState]) -> str:
            """Count the selected tools and the messages."""
            return f"{len(state['selected_tool_ids'])} tools, {len(state['messages'])} messages"

        @tool
        def history_of(ids: Annotated[list, InjectedState("selected_tool_ids")]) -> str:
            """The history of selected tools."""
            return ",".join(ids)

        @tool
        def remember(fact: str, store: Annotated[BaseStore, InjectedStore]) -> str:
            """Remember a fact."""
            store.put(("facts",), fact[:8], {"fact": fact})
            return "stored"

        @tool
        def recall(store: Annotated[BaseStore, InjectedStore]) -> str:
            """Recall (remember) the facts."""
            return "; ".join(i.value["fact"] for i in store.search(("facts",)))

        registry = {"count_tools": count_tools, "history_of": history_of, "remember": remember,
                    "recall": recall}
        store = _tool_store(registry)
        model = _model(
            _calls("m1", ("retrieve_tools", {"query": "count history"}, "r1"),
                   ("retrieve_tools", {"query": "remember"}, "r2")),
            _calls("m2", ("count_tools", {}, "c1")),
            _calls("m3", ("history_of", {}, "c2")),
            _calls("m4", ("remember", {"fact": "the sky is blue"}, "c3")),
            _calls("m5", ("recall", {}, "c4")),
            _say("done", "m6"))
        app = _bigtool(E, model, registry, store, limit=2)
        out = app.invoke(_hi("count"))
        return _msgs(out), _items(store, "facts"), model.seen

    ref = differential(scenario)
    tools = [m[2] for m in ref[0] if m[0] == "tool"]
    assert tools[2:] == ["4 tools, 5 messages", "count_tools,history_of,remember,recall", "stored",
                         "the sky is blue"]
    assert ref[1] == [(("facts",), "the sky ", {"fact": "the sky is blue"})]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_bigtool_conversation_on_a_checkpointed_thread(differential, restored_injection, kind, tmp_path):
    """Two turns on one thread: the tools selected in the first stay bound in the second
    (`selected_tool_ids` is saved), `get_state`, `get_state_history` (with the parallel
    `Send` tasks and their results) and a fork replayed from a past checkpoint."""
    def scenario(E):
        registry = _math_registry()
        model = _model(
            _calls("m1", ("retrieve_tools", {"query": "add sum"}, "r1")),
            _calls("m2", ("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2")),
            _say("3 and 7.", "m3"),
            _calls("m4", ("add", {"a": 10, "b": 20}, "c3")),
            _say("30.", "m5"),
            _say("forked", "m6"))
        with _saver(E, kind, tmp_path) as cp:
            app = _bigtool(E, model, registry, _tool_store(registry), cp, limit=1)
            cfg = _cfg("thread-1")
            first = app.invoke(_hi("add twice"), cfg)
            second = app.invoke(_hi("and 10 + 20?", "h2"), cfg)
            state = snapshot_summary(app.get_state(cfg))
            hist = _history(app, cfg)
            past = [s for s in app.get_state_history(cfg) if s.next == ("agent",)][-2]
            forked = app.invoke(None, past.config)
            return _msgs(first), _msgs(second), state, hist, _msgs(forked), model.seen

    ref = differential(scenario)
    binds = [s for s in ref[-1] if isinstance(s, tuple)]
    assert binds[3] == ("bind_tools", ["retrieve_tools", "add"])


@pytest.mark.parametrize("parallel", [False, True])
def test_bigtool_interrupt_in_a_tool_resumed_with_command(differential, restored_injection, parallel):
    """A registry tool asks for approval with `interrupt()`: the run pauses (`__interrupt__`
    in the stream, `get_state().interrupts`), `Command(resume=...)` answers it; beside a
    parallel tool call that finished, whose result is kept and not run again."""
    def scenario(E):
        from langchain_core.tools import tool

        ran = []

        @tool
        def send_money(amount: int) -> str:
            """Send money to a friend."""
            answer = E.interrupt({"question": f"send {amount}?"})
            ran.append(("send_money", answer))
            return "sent" if answer == "yes" else "cancelled"

        @tool
        def get_balance(account: str) -> str:
            """Get the balance of an account."""
            ran.append(("get_balance", account))
            return "42"

        registry = {"send_money": send_money, "get_balance": get_balance}
        turn2 = [("send_money", {"amount": 5}, "c1")] + ([("get_balance", {"account": "A"}, "c2")] if parallel else [])
        model = _model(_calls("m1", ("retrieve_tools", {"query": "send money balance"}, "r1")),
                       _calls("m2", *turn2), _say("Done.", "m3"))
        app = _bigtool(E, model, registry, _tool_store(registry), E.InMemorySaver())
        cfg = _cfg()
        paused = _last_step_unordered(collect(lambda: app.stream(_hi("send 5"), cfg, stream_mode="updates")))
        state = snapshot_summary(app.get_state(cfg))
        resumed = _parallel(_stream(app, E.Command(resume="yes"), cfg))
        return _no_msg_ids((paused, state, resumed, sorted(ran), _history(app, cfg)))

    ref = differential(scenario)
    assert ref[1]["interrupts"] == [{"question": "send 5?"}]
    assert ("send_money", "yes") in ref[3]


def test_bigtool_interrupt_async_resume(differential, restored_injection):
    """The same pause and resume with `astream` / `ainvoke`."""
    async def scenario(E):
        from langchain_core.tools import tool

        @tool
        def send_money(amount: int) -> str:
            """Send money to a friend."""
            return f"answer: {E.interrupt(f'send {amount}?')}"

        registry = {"send_money": send_money}
        model = _model(_calls("m1", ("retrieve_tools", {"query": "send"}, "r1")),
                       _calls("m2", ("send_money", {"amount": 5}, "c1")), _say("Done.", "m3"))
        app = _bigtool(E, model, registry, _tool_store(registry), E.InMemorySaver())
        cfg = _cfg()
        paused = await acollect(lambda: app.astream(_hi("send 5"), cfg, stream_mode="updates"))
        out = await app.ainvoke(E.Command(resume="no"), cfg)
        return paused, _msgs(out), snapshot_summary(await app.aget_state(cfg))

    ref = differential(scenario)
    assert ("tool", "send_money", "answer: no", []) in ref[1]


def test_bigtool_tool_errors_and_unknown_tools(differential, restored_injection):
    """A tool raising is answered with the `ToolNode`'s error message; a call to a name
    not in the registry gets its invalid-tool message; a retrieval returning an id missing
    from the registry fails the run with the same `KeyError`."""
    def scenario(E):
        from langchain_core.tools import tool

        @tool
        def divide(a: int, b: int) -> float:
            """Divide a by b."""
            return a / b

        registry = {"divide": divide}
        model = _model(_calls("m1", ("divide", {"a": 1, "b": 0}, "c1"), ("nope", {}, "c2")),
                       _say("Cannot.", "m2"))
        app = _bigtool(E, model, registry, _tool_store(registry))
        out = _stream(app, _hi("1/0"), modes=("updates",))
        model2 = _model(_calls("m1", ("retrieve_tools", {"category": "x"}, "r1")))
        app2 = _bigtool(E, model2, registry, retrieve_tools_function=lambda category: ["missing"])
        return _parallel(out), _stream(app2, _hi("x"), modes=("updates",))

    differential(scenario)


def test_bigtool_recursion_limit_of_a_retrieval_loop(differential, restored_injection):
    """A model that keeps retrieving hits the recursion limit: `GraphRecursionError` after
    the same steps."""
    def scenario(E):
        registry = _math_registry()
        model = Binding(script=lambda ms: _calls(f"m{len(ms)}", ("retrieve_tools", {"query": "add"}, f"r{len(ms)}")),
                        seen=[])
        app = _bigtool(E, model, registry, _tool_store(registry))
        return _stream(app, _hi("loop"), {"recursion_limit": 6}, modes=("updates",))

    ref = differential(scenario)
    assert ref[-1][:2] == ("raises", "GraphRecursionError")


def test_bigtool_stream_events_v2(differential, restored_injection):
    """`astream_events(version="v2")`: the chain, chat model and tool events by name with
    the node they ran in (the retrieval tool is invoked by `select_tools`, a registry tool
    by the `ToolNode`)."""
    async def scenario(E):
        registry = _math_registry()
        model = _model(_calls("m1", ("retrieve_tools", {"query": "floor"}, "r1")),
                       _calls("m2", ("floor", {"x": 2.5}, "c1")), _say("2", "m3"))
        app = _bigtool(E, model, registry, _tool_store(registry))
        out = []
        async for ev in app.astream_events(_hi("floor"), version="v2"):
            md = ev["metadata"]
            out.append((ev["event"], ev["name"], md.get("langgraph_node"), md.get("langgraph_step")))
        return out

    ref = differential(scenario)
    assert ("on_tool_start", "retrieve_tools", "select_tools", 2) in ref
    assert ("on_tool_start", "floor", "tools", 4) in ref


def test_bigtool_graph_drawing(differential):
    """What a notebook shows of the agent: `get_graph()`'s nodes and edges (the router's
    three destinations) and its mermaid text."""
    def scenario(E):
        registry = _math_registry()
        app = _bigtool(E, _model(), registry, _tool_store(registry))
        g = app.get_graph()
        return (sorted(g.nodes), sorted((e.source, e.target, e.conditional) for e in g.edges),
                g.draw_mermaid())

    differential(scenario)


# --- reflection: the user's agent and judge in a loop ---------------------------------------


def _lg():
    from _diff import reference_engine

    return reference_engine()


def _builder_engine(E, built_with):
    """Whose `StateGraph` builds the user's own graphs: LangGraph's (the program as it
    was, only the library's wrapper ported) or E's (the user swapped the imports)."""
    return E if built_with == "E" else _lg()


def _finish_tool():
    from langchain_core.tools import tool

    @tool
    def Finish() -> str:  # noqa: N802 - the tool name the README's judge binds
        """Call when the answer is good."""
        return "done"

    return Finish


def _assistant_graph(S, model, *, name="assistant", is_async=False, ask=False, custom=False):
    """The user's main agent: one model call per turn (async with `ainvoke`); `ask`: it
    asks a human before answering (`interrupt()`); `custom`: it reports progress."""
    def assistant(state):
        if custom:
            S.get_stream_writer()({"drafting": len(state["messages"])})
        reply = model.invoke(state["messages"])
        if ask:
            ok = S.interrupt({"publish": reply.content})
            reply = reply.model_copy(update={"content": f"{reply.content} [{ok}]"})
        return {"messages": [reply]}

    async def aassistant(state):
        return {"messages": [await model.ainvoke(state["messages"])]}

    b = S.StateGraph(S.MessagesState)
    b.add_node(name, aassistant if is_async else assistant)
    b.add_edge(S.START, name)
    return b.compile()


def _judge_graph(S, judge_model, *, is_async=False):
    """The README's LLM-as-a-judge: the judge model bound to `Finish`; a call of it
    accepts (no update), else its words go back as a user message."""
    bound = judge_model.bind_tools([_finish_tool()])

    def judge_response(state):
        response = bound.invoke(state["messages"])
        if len(response.tool_calls) == 1:
            return None
        return {"messages": [{"role": "user", "content": response.content}]}

    async def ajudge_response(state):
        response = await bound.ainvoke(state["messages"])
        if len(response.tool_calls) == 1:
            return None
        return {"messages": [{"role": "user", "content": response.content}]}

    b = S.StateGraph(S.MessagesState)
    b.add_node("judge_response", ajudge_response if is_async else judge_response)
    b.add_edge(S.START, "judge_response")
    return b.compile()


def _reflection(E, assistant, judge, **compile_kwargs):
    """`create_reflection_graph` with LangGraph's `MessagesState` (the workaround for
    0.0.1's `graph.builder.schema`), ported to E and compiled."""
    from langgraph.graph import MessagesState
    from langgraph_reflection import create_reflection_graph

    builder = create_reflection_graph(assistant, judge, state_schema=MessagesState)
    return _on(E, builder).compile(**compile_kwargs)


def _drafts(*texts, prefix="a"):
    return [_say(t, f"{prefix}{i}") for i, t in enumerate(texts, 1)]


def _verdicts(*critiques, prefix="j"):
    """The judge's replies: a critique (words), or None for a call of `Finish`."""
    return [_calls(f"{prefix}{i}", ("Finish", {}, f"f{i}")) if c is None else _say(c, f"{prefix}{i}")
            for i, c in enumerate(critiques, 1)]


BUILT_WITH = pytest.mark.parametrize("built_with", ["langgraph", "E"])


@BUILT_WITH
def test_reflection_as_installed_needs_a_state_schema(differential, built_with):
    """`create_reflection_graph(graph, judge)` with no `state_schema` reads
    `graph.builder.schema`, which neither engine's `StateGraph` has: the same
    `AttributeError` (lgnb's graphs keep LangGraph's attribute names)."""
    def scenario(E):
        from langgraph_reflection import create_reflection_graph

        S = _builder_engine(E, built_with)
        model, judge = _model(), _model()
        return create_reflection_graph(_assistant_graph(S, model), _judge_graph(S, judge))

    ref = differential(scenario)
    assert ref == ("raises", "AttributeError", "'StateGraph' object has no attribute 'schema'")


@BUILT_WITH
def test_reflection_loop_ends_when_the_judge_accepts(differential, built_with):
    """Two critiques, then `Finish`: three drafts, each judged; the judge's critiques reach
    the assistant as user messages; the streams (`subgraphs=True`) show each inner step
    under its namespace and the wrapper's steps at the root."""
    def scenario(E):
        S = _builder_engine(E, built_with)
        model = _model(*_drafts("Paris.", "Paris, France.", "Paris, the capital of France."))
        judge = _model(*_verdicts("Too short.", "Say it is the capital.", None))
        app = _reflection(E, _assistant_graph(S, model), _judge_graph(S, judge))
        chunks = _stream(app, _hi("Capital of France?"))
        return chunks, model.seen, judge.seen

    ref = differential(scenario)
    final = ref[0][-1][2]
    assert [m[1]["content"] for m in final["messages"]] == [
        "Capital of France?", "Paris.", "Too short.", "Paris, France.", "Say it is the capital.",
        "Paris, the capital of France."]


@pytest.mark.parametrize("limit", [3, 4, 7, 11, 25])
def test_reflection_loop_ends_by_remaining_steps(differential, limit):
    """A judge that never accepts: `end_or_reflect` ends the loop once `remaining_steps`
    drops under 2, before an odd recursion limit (the number of drafts follows it); with
    an even one the last judge still sees 2 steps left and the run fails with
    `GraphRecursionError`, on both engines."""
    def scenario(E):
        model = Binding(script=lambda ms: _say(f"draft {len(ms)}", f"a{len(ms)}"), seen=[])
        judge = Binding(script=lambda ms: _say(f"worse than {len(ms)}", f"j{len(ms)}"), seen=[])
        app = _reflection(E, _assistant_graph(E, model), _judge_graph(E, judge))
        out = collect(lambda: app.stream(_hi("write"), {"recursion_limit": limit}, stream_mode="updates"))
        final = capture(lambda: _msgs(app.invoke(_hi("write"), {"recursion_limit": limit})))
        return out, final

    ref = differential(scenario)
    if limit == 4:  # an even limit: 2 steps left after a judge, then 0 at the next one
        assert ref[1][:2] == ("raises", "GraphRecursionError")
    else:
        assert [m[2] for m in ref[1] if m[0] == "ai"] == [f"draft {n}" for n in range(1, limit - 1, 2)]


@pytest.mark.parametrize("mode", ["messages", "custom", "debug", "tasks", "checkpoints"])
@BUILT_WITH
def test_reflection_stream_modes_with_subgraphs(differential, built_with, mode):
    """Every mode with `subgraphs=True`: the assistant's and the judge's tokens under
    their namespaces with their node metadata, the assistant's progress events, the
    debug / tasks / checkpoints records of the loop and of each inner graph."""
    def scenario(E):
        S = _builder_engine(E, built_with)
        model = _model(*_drafts("First try here.", "Second try here."))
        judge = _model(*_verdicts("Be more specific.", None))
        app = _reflection(E, _assistant_graph(S, model, custom=True), _judge_graph(S, judge),
                          checkpointer=E.InMemorySaver())
        out = []
        for ns, chunk in app.stream(_hi("write"), _cfg(), stream_mode=mode, subgraphs=True):
            if mode == "messages":
                msg, md = chunk
                chunk = (type(msg).__name__, msg.content, {k: md.get(k) for k in (
                    "langgraph_node", "langgraph_step", "langgraph_triggers", "langgraph_checkpoint_ns",
                    "checkpoint_ns")})
            out.append((ns, chunk))
        return out

    ref = differential(scenario)
    if mode == "custom":
        assert [c for _, c in ref] == [{"drafting": 1}, {"drafting": 3}] and all(ns for ns, _ in ref)
    elif mode == "messages":
        tokens = [(ns[0].split(":")[0] if ns else "", c[1]) for ns, c in ref if c[0] == "AIMessageChunk" and c[1]]
        assert ("graph", "First") in tokens and ("reflection", "Be") in tokens
    elif mode == "tasks":
        assert [t["name"] for ns, t in ref if not ns and "result" in t] == ["graph", "reflection"] * 2


@BUILT_WITH
def test_reflection_async(differential, built_with):
    """`ainvoke` and `astream(subgraphs=True)` with async assistant and judge nodes."""
    async def scenario(E):
        S = _builder_engine(E, built_with)
        model = _model(*_drafts("one", "two", "three", "four"))
        judge = _model(*_verdicts("again", None, None))
        app = _reflection(E, _assistant_graph(S, model, is_async=True), _judge_graph(S, judge, is_async=True))
        out = await app.ainvoke(_hi("write"))
        chunks = await acollect(lambda: app.astream(_hi("again", "h2"), stream_mode=["updates", "values"],
                                                    subgraphs=True))
        return _msgs(out), chunks, model.seen, judge.seen

    ref = differential(scenario)
    assert [m[2] for m in ref[0]] == ["write", "one", "again", "two"]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@BUILT_WITH
def test_reflection_on_a_checkpointed_thread(differential, built_with, kind, tmp_path):
    """Two turns on one thread (the second question sees the first loop's messages),
    `get_state(subgraphs=True)`, the root history, and a replay from a checkpoint
    between the assistant and the judge."""
    def scenario(E):
        S = _builder_engine(E, built_with)
        model = _model(*_drafts("A haiku.", "A better haiku.", "A limerick.", "A replayed haiku.",
                                prefix="a"))
        judge = _model(*_verdicts("Not a haiku.", None, None, None))
        with _saver(E, kind, tmp_path) as cp:
            app = _reflection(E, _assistant_graph(S, model), _judge_graph(S, judge), checkpointer=cp)
            cfg = _cfg("poems")
            first = app.invoke(_hi("haiku please"), cfg)
            second = app.invoke(_hi("now a limerick", "h2"), cfg)
            state = snapshot_summary(app.get_state(cfg, subgraphs=True))
            hist = _history(app, cfg)
            before_judge = next(s for s in app.get_state_history(cfg) if s.next == ("reflection",))
            replayed = app.invoke(None, before_judge.config)
            return _msgs(first), _msgs(second), state, hist, _msgs(replayed), model.seen, judge.seen

    ref = differential(scenario)
    assert [m[2] for m in ref[1]][-2:] == ["now a limerick", "A limerick."]


@BUILT_WITH
def test_reflection_interrupt_in_the_assistant_graph(differential, built_with):
    """The assistant asks before publishing (`interrupt()` in the inner graph): the run
    pauses with the question, `get_state(subgraphs=True)` shows the inner graph's task
    paused, `Command(resume=...)` answers it and the loop goes on to the judge."""
    def scenario(E):
        S = _builder_engine(E, built_with)
        # the node runs again when resumed, and so does its model call: answer by turn
        model = Binding(script=lambda ms: _say(f"Draft {sum(m.type == 'ai' for m in ms) + 1}.", f"a{len(ms)}"),
                        seen=[])
        judge = _model(*_verdicts("Shorter.", None))
        app = _reflection(E, _assistant_graph(S, model, ask=True), _judge_graph(S, judge),
                          checkpointer=E.InMemorySaver())
        cfg = _cfg()
        runs = [_stream(app, _hi("write"), cfg)]
        states = [snapshot_summary(app.get_state(cfg, subgraphs=True))]
        for answer in ("ok", "fine"):
            runs.append(_stream(app, E.Command(resume=answer), cfg))
            states.append(snapshot_summary(app.get_state(cfg, subgraphs=True)))
        return runs, states, model.seen, judge.seen

    ref = differential(scenario)
    assert ref[1][0]["interrupts"] == [{"publish": "Draft 1."}]
    assert [m[1]["content"] for m in ref[1][-1]["values"]["messages"]] == [
        "write", "Draft 1. [ok]", "Shorter.", "Draft 2. [fine]"]


@BUILT_WITH
def test_reflection_stream_events_v2(differential, built_with):
    """`astream_events(version="v2")`: the wrapper's nodes, the inner graphs' nodes, the
    chat models, by name, with the node and namespace depth they ran at."""
    async def scenario(E):
        S = _builder_engine(E, built_with)
        model = _model(*_drafts("one", "two"))
        judge = _model(*_verdicts("again", None))
        app = _reflection(E, _assistant_graph(S, model, is_async=True), _judge_graph(S, judge, is_async=True))
        out = []
        async for ev in app.astream_events(_hi("write"), version="v2"):
            md = ev["metadata"]
            out.append((ev["event"], ev["name"], md.get("langgraph_node"),
                        md.get("langgraph_checkpoint_ns", "").count("|")))
        return out

    ref = differential(scenario)
    assert ("on_chat_model_start", "Binding", "assistant", 1) in ref


def test_reflection_over_a_bigtool_agent(differential, restored_injection):
    """The two libraries together: a bigtool agent as the main graph (its state schema
    given, with `selected_tool_ids`), its store on the wrapper; the judge asks for a
    check, the agent retrieves and calls a tool, then the judge accepts."""
    def scenario(E):
        from langgraph_bigtool import create_agent
        from langgraph_bigtool.graph import State
        from langgraph_reflection import create_reflection_graph

        registry = _math_registry()
        model = _model(_say("It is about 1.05.", "a1"),
                       _calls("a2", ("retrieve_tools", {"query": "arc cosine"}, "r1")),
                       _calls("a3", ("acos", {"x": 0.5}, "c1")),
                       _say("acos(0.5) = 1.0472.", "a4"))
        judge = _model(*_verdicts("Use a tool to check.", None))
        agent = create_agent(model, registry).compile()
        builder = create_reflection_graph(agent, _judge_graph(_lg(), judge), state_schema=State)
        app = _on(E, builder).compile(store=_tool_store(registry))
        chunks = _stream(app, _hi("arc cosine of 0.5?"))
        return chunks, model.seen, judge.seen

    ref = differential(scenario)
    final = ref[0][-1][2]
    assert final["selected_tool_ids"] == ["acos", "cos"]
    assert final["messages"][-1][1]["content"] == "acos(0.5) = 1.0472."


# --- reflection: lgnb graphs handed to the LangGraph-built wrapper -----------------------------


def test_reflection_unported_wrapper_runs_lgnb_graphs_as_plain_nodes(differential):
    """lgnb graphs given to the wrapper, compiled by LangGraph as it is (not ported): the
    wrapper runs on LangGraph's engine, which calls each lgnb graph as a Runnable. Its
    root steps, result and history are those of the all-LangGraph program (the inner
    graphs' own steps are not LangGraph subgraphs there: root observables only)."""
    def scenario(E):
        from langgraph.graph import MessagesState
        from langgraph_reflection import create_reflection_graph

        model = _model(*_drafts("one", "two"))
        judge = _model(*_verdicts("again", None))
        builder = create_reflection_graph(_assistant_graph(E, model), _judge_graph(E, judge),
                                          state_schema=MessagesState)
        app = builder.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        chunks = collect(lambda: app.stream(_hi("write"), cfg, stream_mode=["updates", "values"]))
        # (a task's `state`, the config of the subgraph it ran, is None: not a subgraph there)
        hist = [{**h, "tasks": [t[:4] for t in h["tasks"]]} for h in _history(app, cfg)]
        return chunks, model.seen, judge.seen, hist

    differential(scenario)


def test_reflection_unported_wrapper_refuses_an_interrupt_in_an_lgnb_graph():
    """lgnb only. The same unported wrapper around an lgnb assistant that calls
    `interrupt()`: LangGraph cannot resume the lgnb graph, and lgnb's `invoke` returning
    its state would lose the question (the loop then ran again and again, silently, to
    the remaining-steps limit); the call fails saying to port the wrapper. Ported, the
    same graphs pause and resume (`test_reflection_interrupt_in_the_assistant_graph`)."""
    from _diff import candidate_engine
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import MessagesState
    from langgraph_reflection import create_reflection_graph

    E = candidate_engine()
    model, judge = _model(*_drafts("one", "two")), _model(*_verdicts(None, None))
    builder = create_reflection_graph(_assistant_graph(E, model, ask=True), _judge_graph(E, judge),
                                      state_schema=MessagesState)
    app = builder.compile(checkpointer=InMemorySaver())
    if E.root == "langgraph":  # the self-test: LangGraph's graphs pause the wrapper
        app.invoke(_hi("write"), _cfg())
        assert app.get_state(_cfg()).interrupts[0].value == {"publish": "one"}
        return
    with pytest.raises(RuntimeError, match="paused on interrupt") as info:
        app.invoke(_hi("write"), _cfg())
    assert "lgnb.graph.from_langgraph(builder)" in str(info.value)
    assert model.seen == [[("human", "write")]]  # one draft asked for: no silent loop


def test_reflection_with_lgnb_messages_state_is_refused_by_langgraph_builder():
    """lgnb only. Passing lgnb's `MessagesState` as `state_schema` (the user swapped that
    import too): LangGraph's own builder refuses it while `create_reflection_graph` adds
    the loop's router, typed with LangGraph's `MessagesState`, since the two `messages`
    channels have different reducers (lgnb's `add_messages` is not LangGraph's). The error
    is LangGraph's, raised before lgnb is involved; the fix is LangGraph's
    `MessagesState` there (or a schema built with LangGraph's `add_messages`)."""
    from _diff import candidate_engine
    from langgraph_reflection import create_reflection_graph

    E = candidate_engine()
    graphs = _assistant_graph(E, _model()), _judge_graph(E, _model())
    if E.root == "langgraph":  # the self-test: LangGraph's own schema is accepted
        create_reflection_graph(*graphs, state_schema=E.MessagesState)
        return
    with pytest.raises(ValueError, match="^Channel 'messages' already exists with a different type$"):
        create_reflection_graph(*graphs, state_schema=E.MessagesState)


# --- more of what users do with them ----------------------------------------------------------


def _breakpoint_agent(E, model):
    from langgraph_bigtool import create_agent

    registry = _math_registry()
    return _on(E, create_agent(model, registry, limit=1)).compile(
        store=_tool_store(registry), checkpointer=E.InMemorySaver(), interrupt_before=["tools"])


def _breakpoint_model():
    return _model(_calls("m1", ("retrieve_tools", {"query": "multiply product"}, "r1")),
                  _calls("m2", ("multiply", {"a": 3, "b": 4}, "c1"), ("add", {"a": 1, "b": 1}, "c2")),
                  _say("Done.", "m3"))


def test_bigtool_breakpoint_before_tools(differential, restored_injection):
    """`compile(interrupt_before=["tools"])`: the run stops before the two `Send`s to the
    `ToolNode` (`next`, the planned tasks with their paths); `stream(None, cfg)` goes on
    from there and runs both."""
    def scenario(E):
        app = _breakpoint_agent(E, _breakpoint_model())
        cfg = _cfg()
        first = _stream(app, _hi("3 times 4, 1 plus 1"), cfg)
        paused = snapshot_summary(app.get_state(cfg))
        rest = _parallel(_stream(app, None, cfg))
        return first, paused, rest, _history(app, cfg)

    ref = differential(scenario)
    assert ref[1]["next"] == ("tools", "tools")
    assert [m[1]["content"] for m in ref[2][-1][2]["messages"]][-3:] == ["12", "2", "Done."]


@pytest.mark.skipif(selftest_enabled(), reason="a deliberate difference: lgnb's side is asserted")
def test_bigtool_tool_call_edited_at_the_breakpoint(restored_injection):
    """At the breakpoint the user replaces the model's tool calls with
    `update_state(..., as_node="agent")` (same message id): the router runs again on the
    edited message and the run goes on with the edited call.

    A deliberate difference (README): LangGraph 1.2.24 runs the node's router for
    `update_state` without the graph's store, so bigtool's `should_continue(state, *, store)`
    fails there ("Missing required config key 'store'"); lgnb gives the router the store, as
    a run does, and the edit applies."""
    def scenario(E):
        app = _breakpoint_agent(E, _breakpoint_model())
        cfg = _cfg()
        first = _stream(app, _hi("3 times 4, 1 plus 1"), cfg)
        edited = _calls("m2", ("multiply", {"a": 5, "b": 6}, "c1"))
        updated = capture(lambda: app.update_state(cfg, {"messages": [edited]}, as_node="agent") and "ok")
        after_edit = snapshot_summary(app.get_state(cfg))
        rest = _stream(app, None, cfg) if updated == "ok" else None
        return first, updated, after_edit, rest

    theirs = run_scenario(scenario, reference_engine())
    assert theirs[1][:2] == ("raises", "ValueError") and "'store'" in theirs[1][2]
    ours = run_scenario(scenario, candidate_engine())
    assert normalize(ours[0]) == normalize(theirs[0])  # the same run up to the breakpoint
    assert ours[1] == "ok"
    assert ours[2]["next"] == ("tools",)
    results = [m.content for ns, mode, data in ours[3] if mode == "updates" and not ns
               for m in (data.get("tools") or {}).get("messages", [])]
    assert results == ["30"]


def test_reflection_with_a_context_schema(differential):
    """`create_reflection_graph(..., config_schema=Ctx)` (LangGraph's deprecated name for
    the context schema): `invoke(..., context=...)` reaches the nodes of both inner graphs
    through `get_runtime()`; the judge's strictness comes from it."""
    def scenario(E):
        from langgraph.graph import MessagesState
        from langgraph_reflection import create_reflection_graph
        from typing_extensions import TypedDict

        class Ctx(TypedDict):
            strict: bool
            author: str

        def assistant(state):
            ctx = E.get_runtime().context
            return {"messages": [AIMessage(f"by {ctx['author']}: draft {len(state['messages'])}")]}

        def judge(state):
            ctx = E.get_runtime().context
            if ctx["strict"] and len(state["messages"]) < 4:
                return {"messages": [HumanMessage("stricter")]}
            return None

        a = E.StateGraph(E.MessagesState, context_schema=Ctx)
        a.add_node(assistant)
        a.add_edge(E.START, "assistant")
        j = E.StateGraph(E.MessagesState, context_schema=Ctx)
        j.add_node(judge)
        j.add_edge(E.START, "judge")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            builder = create_reflection_graph(a.compile(), j.compile(), state_schema=MessagesState,
                                              config_schema=Ctx)
        app = _on(E, builder).compile()
        return [_msgs(app.invoke(_hi("write"), context={"strict": strict, "author": "ann"}))
                for strict in (False, True)]

    ref = differential(scenario)
    assert len(ref[1]) == 4 and ref[1][-1][2] == "by ann: draft 3"


@BUILT_WITH
def test_reflection_graph_drawing(differential, built_with):
    """What a notebook draws of the loop: `get_graph()` (the wrapper's nodes, the router's
    edges) and `get_graph(xray=True)` (the inner graphs' nodes), as mermaid text too."""
    def scenario(E):
        S = _builder_engine(E, built_with)
        app = _reflection(E, _assistant_graph(S, _model()), _judge_graph(S, _model()))
        out = []
        for xray in (False, True):
            g = app.get_graph(xray=xray)
            out.append((sorted(g.nodes), sorted((e.source, e.target, e.conditional) for e in g.edges),
                        g.draw_mermaid()))
        return out

    differential(scenario)

"""Long-term memory (stores), runtime context and tool injection as users write them from
LangGraph's memory and context guides, on both engines: nodes taking `store: BaseStore` /
`runtime: Runtime[Ctx]`, `get_store()` / `get_runtime()` / `get_config()` in nodes, helpers,
threads and asyncio tasks, cross-thread memories keyed by a user id from the context or the
config, `context_schema` as dataclass / TypedDict / pydantic model (defaults, missing
context, subgraphs, `Send` branches, resumes), and tools run by LangGraph's prebuilt
`ToolNode` inside the graph with `InjectedState`, `InjectedStore`, `InjectedToolCallId` and
`ToolRuntime`. The functional API's `entrypoint(store=..., context_schema=...)` too.

Stores are LangGraph's `InMemoryStore` (langgraph-checkpoint, shared by both engines); a
scenario returns what the nodes saw and the store's content, never `Item` objects (their
timestamps differ run to run).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import contextvars
import operator
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated, Any, Optional

import pydantic
from _diff import acapture, acollect, capture, collect
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.prebuilt import InjectedState, InjectedStore, ToolNode, ToolRuntime, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _cfg(thread="t", **extra):
    return {"configurable": {"thread_id": thread, **extra}}


def _msgs(E, **extra):
    return TypedDict("S", {"messages": Annotated[list, E.add_messages], **extra})


def _snap(msgs):
    return [(type(m).__name__, m.id, m.content) for m in msgs]


def _dump(store, prefix=()):
    """The store's content as plain data: (namespace, key, value), sorted."""
    out = []
    for ns in store.list_namespaces(prefix=prefix or None):
        for item in store.search(ns, limit=1000):
            if tuple(item.namespace) == tuple(ns):
                out.append((tuple(item.namespace), item.key, item.value))
    return sorted(out, key=repr)


def _calls(*pairs):
    return [{"name": n, "args": a, "id": f"call-{i}", "type": "tool_call"}
            for i, (n, a) in enumerate(pairs)]


# ---------------------------------------------------------------------------------------
# stores in nodes
# ---------------------------------------------------------------------------------------


def test_memory_guide_chatbot_recalls_facts_across_threads_by_configurable_user_id(differential):
    """The memory how-to: `call_model(state, config: RunnableConfig, *, store: BaseStore)`
    reads ("memories", user_id) for the user id in `configurable`, stores a new memory
    when asked to remember, and a second thread of the same user sees it; another user's
    thread does not."""
    def scenario(E):
        def call_model(state, config: RunnableConfig, *, store: BaseStore):
            user_id = config["configurable"]["user_id"]
            namespace = ("memories", user_id)
            memories = store.search(namespace, query=str(state["messages"][-1].content))
            info = ",".join(sorted(d.value["data"] for d in memories))
            last = state["messages"][-1]
            if "remember" in last.content.lower():
                fact = last.content.split(":", 1)[1].strip()
                store.put(namespace, f"m{len(memories)}", {"data": fact})
            return {"messages": [AIMessage(f"known: [{info}]", id=f"ai-{config['configurable']['thread_id']}-{len(state['messages'])}")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("call_model", call_model)
        g.add_edge(E.START, "call_model")
        store = InMemoryStore()
        app = g.compile(checkpointer=E.InMemorySaver(), store=store)
        outs = []
        for thread, user, text in [("1", "u1", "Hi! Remember: my name is Bob"),
                                   ("1", "u1", "remember: I like tea"),
                                   ("2", "u1", "what is my name?"),
                                   ("3", "u2", "what is my name?")]:
            out = app.invoke({"messages": [HumanMessage(text, id=f"h-{thread}-{text[:4]}")]},
                             _cfg(thread, user_id=user))
            outs.append(_snap(out["messages"]))
        return outs, _dump(store)

    differential(scenario)


def test_runtime_docstring_personalized_greeting_reads_store_with_context_user_id(differential):
    """LangGraph's `Runtime` example verbatim: `set_entry_point`/`set_finish_point`,
    `runtime.context.user_id` and `runtime.store.get(("users",), user_id)`."""
    def scenario(E):
        @dataclass
        class Context:
            user_id: str

        class State(TypedDict, total=False):
            response: str

        store = InMemoryStore()
        store.put(("users",), "user_123", {"name": "Alice"})

        def personalized_greeting(state: State, runtime: E.Runtime[Context]) -> State:
            user_id = runtime.context.user_id
            name = "unknown_user"
            if runtime.store:
                if memory := runtime.store.get(("users",), user_id):
                    name = memory.value["name"]
            return {"response": f"Hello {name}! Nice to see you again."}

        graph = (
            E.StateGraph(state_schema=State, context_schema=Context)
            .add_node("personalized_greeting", personalized_greeting)
            .set_entry_point("personalized_greeting")
            .set_finish_point("personalized_greeting")
            .compile(store=store)
        )
        return (graph.invoke({}, context=Context(user_id="user_123")),
                graph.invoke({}, context=Context(user_id="nobody")),
                graph.invoke({}, context={"user_id": "user_123"}))

    differential(scenario, expect=({"response": "Hello Alice! Nice to see you again."},
                                   {"response": "Hello unknown_user! Nice to see you again."},
                                   {"response": "Hello Alice! Nice to see you again."}))


def test_store_parameter_annotations_that_are_injected(differential):
    """`store` untyped, `BaseStore`, `"BaseStore"`, `Optional[BaseStore]` and
    `BaseStore | None` all receive the compiled store; without a store they get None."""
    def scenario(E):
        def untyped(s, store):
            return {"log": [("untyped", store is not None)]}

        def typed(s, *, store: BaseStore):
            return {"log": [("typed", store is not None)]}

        def quoted(s, store: "BaseStore"):
            return {"log": [("quoted", store is not None)]}

        def optional(s, store: Optional[BaseStore] = None):
            return {"log": [("optional", store is not None)]}

        def pipe(s, store: BaseStore | None = None):
            return {"log": [("pipe", store is not None)]}

        g = E.StateGraph(Log)
        prev = E.START
        for fn in (untyped, typed, quoted, optional, pipe):
            g.add_node(fn.__name__, fn)
            g.add_edge(prev, fn.__name__)
            prev = fn.__name__
        return (g.compile(store=InMemoryStore()).invoke({"log": []}),
                capture(lambda: g.compile().invoke({"log": []})))

    differential(scenario)


def test_store_parameter_with_another_annotation_keeps_its_default(differential):
    """LangGraph injects `store` only when it is untyped or typed `BaseStore` (or
    Optional of it): a parameter typed `Any` or `InMemoryStore` keeps its default."""
    def scenario(E):
        def any_typed(s, store: Any = "default"):
            return {"log": [("any", store if isinstance(store, str) else "injected")]}

        def concrete(s, store: InMemoryStore = None):
            return {"log": [("concrete", store if store is None else "injected")]}

        g = E.StateGraph(Log)
        g.add_node("any_typed", any_typed)
        g.add_node("concrete", concrete)
        g.add_edge(E.START, "any_typed")
        g.add_edge("any_typed", "concrete")
        return g.compile(store=InMemoryStore()).invoke({"log": []})

    differential(scenario)


def test_get_store_in_node_helper_is_the_compiled_store(differential):
    """`get_store()` called from a helper function a node calls returns the very store
    the graph was compiled with; without a store it is None."""
    def scenario(E):
        store = InMemoryStore()

        def save_profile(user, name):
            s = E.get_store()
            s.put(("profiles",), user, {"name": name})
            return s is store

        def node(s):
            return {"log": [save_profile("u1", "ann"), E.get_store().get(("profiles",), "u1").value]}

        def no_store(s):
            return {"log": [E.get_store()]}

        g = E.StateGraph(Log)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        g2 = E.StateGraph(Log)
        g2.add_node("no_store", no_store)
        g2.add_edge(E.START, "no_store")
        return g.compile(store=store).invoke({"log": []}), g2.compile().invoke({"log": []})

    differential(scenario, expect=({"log": [True, {"name": "ann"}]}, {"log": [None]}))


def test_store_search_filters_limit_offset_and_namespaces_from_nodes(differential):
    """A node seeds memories under several namespaces; the next reads them back with
    `search(filter=..., limit=..., offset=...)`, `list_namespaces(prefix=, max_depth=)`
    and deletes one."""
    def scenario(E):
        def seed(s, store: BaseStore):
            for i, (kind, text) in enumerate([("food", "tea"), ("food", "rice"), ("place", "rome"),
                                              ("food", "figs"), ("place", "oslo")]):
                store.put(("memories", "u1", kind), f"k{i}", {"type": kind, "text": text, "rank": i})
            store.put(("memories", "u2", "food"), "k0", {"type": "food", "text": "corn", "rank": 0})
            return {"log": ["seeded"]}

        def read(s, runtime: E.Runtime):
            st = runtime.store
            food = st.search(("memories", "u1"), filter={"type": "food"}, limit=10)
            page = st.search(("memories", "u1"), filter={"type": "food"}, limit=1, offset=1)
            ranked = st.search(("memories",), filter={"rank": {"$gte": 3}})
            st.delete(("memories", "u1", "place"), "k2")
            left = st.search(("memories", "u1", "place"))
            return {"log": [sorted(i.value["text"] for i in food), len(page),
                            sorted(i.value["text"] for i in ranked),
                            sorted(i.key for i in left),
                            sorted(st.list_namespaces(prefix=("memories",))),
                            sorted(st.list_namespaces(prefix=("memories",), max_depth=2))]}

        g = E.StateGraph(Log)
        g.add_node("seed", seed)
        g.add_node("read", read)
        g.add_edge(E.START, "seed")
        g.add_edge("seed", "read")
        store = InMemoryStore()
        return g.compile(store=store).invoke({"log": []}), _dump(store)

    differential(scenario)


def test_memory_writing_node_after_agent_uses_typeddict_context_user_id(differential):
    """An agent node answers from the user's memories, then a `write_memory` node
    stores what the user said under ("memories", user_id) taken from a TypedDict
    context; runs on different threads for two users share the store."""
    def scenario(E):
        class Ctx(TypedDict):
            user_id: str

        def agent(state, runtime: E.Runtime[Ctx]):
            uid = runtime.context["user_id"]
            mem = sorted(i.value["said"] for i in runtime.store.search(("memories", uid)))
            n = len(state["messages"])
            return {"messages": [AIMessage(f"{uid} said before: {mem}", id=f"a-{uid}-{n}")]}

        def write_memory(state, runtime: E.Runtime[Ctx]):
            uid = runtime.context["user_id"]
            human = [m for m in state["messages"] if isinstance(m, HumanMessage)][-1]
            runtime.store.put(("memories", uid), human.id, {"said": human.content})
            return {}

        g = E.StateGraph(E.MessagesState, context_schema=Ctx)
        g.add_node("agent", agent)
        g.add_node("write_memory", write_memory)
        g.add_edge(E.START, "agent")
        g.add_edge("agent", "write_memory")
        store = InMemoryStore()
        app = g.compile(checkpointer=E.InMemorySaver(), store=store)
        outs = []
        for thread, uid, text in [("a", "ann", "hello"), ("b", "ann", "again"),
                                  ("c", "bob", "hi"), ("a", "ann", "third")]:
            out = app.invoke({"messages": [HumanMessage(text, id=f"h-{text}")]}, _cfg(thread),
                             context={"user_id": uid})
            outs.append(_snap(out["messages"]))
        return outs, _dump(store)

    differential(scenario)


def test_async_nodes_use_async_store_methods_and_get_store(differential):
    """Async nodes `await store.aput/aget/asearch` on the injected store and on
    `get_store()`, under `ainvoke` and `astream`."""
    async def scenario(E):
        async def remember(s, store: BaseStore):
            await store.aput(("facts",), "a", {"v": 1})
            await E.get_store().aput(("facts",), "b", {"v": 2})
            return {"log": ["remembered"]}

        async def recall(s, runtime: E.Runtime):
            got = await runtime.store.aget(("facts",), "a")
            found = await E.get_store().asearch(("facts",), filter={"v": 2})
            return {"log": [got.value, [i.key for i in found]]}

        g = E.StateGraph(Log)
        g.add_node("remember", remember)
        g.add_node("recall", recall)
        g.add_edge(E.START, "remember")
        g.add_edge("remember", "recall")
        store = InMemoryStore()
        app = g.compile(store=store)
        out = await app.ainvoke({"log": []})
        chunks = await acollect(lambda: app.astream({"log": []}, stream_mode="updates"))
        return out, chunks, _dump(store)

    differential(scenario)


def test_send_branches_write_memories_and_a_reducer_node_reads_them(differential):
    """Map-reduce over `Send`: each branch stores its own item (namespace from the
    context), the join node searches the namespace."""
    def scenario(E):
        @dataclass
        class Ctx:
            team: str

        class S(TypedDict):
            topics: list
            log: Annotated[list, operator.add]

        def fan_out(s):
            return [E.Send("research", {"topic": t}) for t in s["topics"]]

        def research(arg, runtime: E.Runtime[Ctx]):
            runtime.store.put(("notes", runtime.context.team), arg["topic"],
                              {"summary": f"{arg['topic']} by {runtime.context.team}"})
            return {"log": [f"researched {arg['topic']}"]}

        def join(s, store: BaseStore, runtime: E.Runtime[Ctx]):
            notes = store.search(("notes", runtime.context.team))
            return {"log": [sorted(n.value["summary"] for n in notes)]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("research", research)
        g.add_node("join", join)
        g.add_conditional_edges(E.START, fan_out, ["research"])
        g.add_edge("research", "join")
        out = g.compile(store=InMemoryStore()).invoke({"topics": ["x", "y", "z"], "log": []},
                                                      context=Ctx(team="blue"))
        return {"topics": out["topics"], "log": sorted(out["log"][:3]) + out["log"][3:]}

    differential(scenario)


def test_subgraph_nodes_see_parent_store_and_subgraph_compiled_with_its_own_store(differential):
    """Inside a parent run a subgraph's nodes get the parent's store, whether the subgraph
    is a node or is invoked inside a node, and even when it was compiled with a store of
    its own (also when the parent has none); run alone it uses its own."""
    def scenario(E):
        parent_store, own_store = InMemoryStore(), InMemoryStore()
        parent_store.put(("w",), "k", {"who": "parent"})
        own_store.put(("w",), "k", {"who": "own"})
        seen = []

        def inner(s, store: BaseStore):
            item = store.get(("w",), "k") if store is not None else None
            seen.append((s["log"][-1], item.value["who"] if item else None))
            return {}

        def build(**kw):
            sg = E.StateGraph(Log)
            sg.add_node("inner", inner)
            sg.add_edge(E.START, "inner")
            return sg.compile(**kw)

        plain, owned = build(), build(store=own_store)

        def call_plain(s):
            plain.invoke({"log": ["call_plain"]})
            return {}

        def call_owned(s):
            owned.invoke({"log": ["call_owned"]})
            return {}

        def mark(name):
            return lambda s: {"log": [name]}

        g = E.StateGraph(Log)
        prev = E.START
        for name, node in [("plain_node", plain), ("owned_node", owned),
                           ("call_plain", call_plain), ("call_owned", call_owned)]:
            g.add_node(f"pre_{name}", mark(name))
            g.add_node(name, node)
            g.add_edge(prev, f"pre_{name}")
            g.add_edge(f"pre_{name}", name)
            prev = name
        g.compile(store=parent_store).invoke({"log": []})
        seen.append("no parent store")
        g.compile().invoke({"log": []})
        seen.append("alone")
        owned.invoke({"log": ["alone"]})
        return seen

    differential(scenario)


# ---------------------------------------------------------------------------------------
# context
# ---------------------------------------------------------------------------------------


def test_typeddict_context_schema_arrives_as_the_dict_passed(differential):
    """A TypedDict `context_schema`: nodes, routers and `get_runtime()` see the dict as
    given (no defaults filled in, extra keys kept); without `context=` it is None."""
    def scenario(E):
        class Ctx(TypedDict, total=False):
            model: str
            temperature: float

        def node(s, runtime: E.Runtime[Ctx]):
            c = runtime.context
            return {"log": [(type(c).__name__, sorted(c.items()), E.get_runtime().context is c)]}

        def route(s, runtime: E.Runtime[Ctx]):
            return "big" if runtime.context.get("model") == "large" else "small"

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("node", node)
        g.add_node("big", lambda s: {"log": ["big"]})
        g.add_node("small", lambda s: {"log": ["small"]})
        g.add_edge(E.START, "node")
        g.add_conditional_edges("node", route, ["big", "small"])
        app = g.compile()
        return (capture(lambda: app.invoke({"log": []}, context={"model": "large"})),
                capture(lambda: app.invoke({"log": []}, context={"temperature": 0.5, "extra": 1})),
                capture(lambda: app.invoke({"log": []})))

    differential(scenario)


def test_dataclass_context_defaults_and_factory_fields(differential):
    """A dataclass context with defaults and `field(default_factory=...)`: a partial dict
    is completed; an instance passes through as the same object."""
    def scenario(E):
        @dataclass
        class Ctx:
            user_id: str
            model: str = "small"
            tools: list = field(default_factory=lambda: ["search"])

        given = Ctx(user_id="u2", tools=[])
        seen = []

        def node(s, runtime: E.Runtime[Ctx]):
            seen.append(runtime.context is given)
            c = runtime.context
            return {"log": [(c.user_id, c.model, c.tools)]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        app = g.compile()
        return (app.invoke({"log": []}, context={"user_id": "u1"}),
                app.invoke({"log": []}, context=given), seen)

    differential(scenario)


def test_missing_context_for_required_dataclass_fields(differential):
    """No `context=` while the schema has required fields: what the node gets, and what
    reading a field on it does."""
    def scenario(E):
        @dataclass
        class Ctx:
            user_id: str

        def node(s, runtime: E.Runtime[Ctx]):
            c = runtime.context
            return {"log": [repr(c), capture(lambda: c.user_id)]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        app = g.compile()
        return capture(lambda: app.invoke({"log": []})), capture(lambda: app.invoke({"log": []}, context={}))

    differential(scenario, exc="class")


def test_pydantic_context_validates_coerces_and_keeps_defaults(differential):
    """A pydantic context: dict coerced (str to int), defaults filled, a bad value raises
    `ValidationError` before any node runs."""
    def scenario(E):
        class Ctx(pydantic.BaseModel):
            user_id: str
            max_results: int = 3

        ran = []

        def node(s, runtime: E.Runtime[Ctx]):
            ran.append(1)
            c = runtime.context
            return {"log": [c.model_dump(), type(c.max_results).__name__]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        app = g.compile()
        bad = capture(lambda: app.invoke({"log": []}, context={"user_id": "u", "max_results": "many"}))
        return (app.invoke({"log": []}, context={"user_id": "u", "max_results": "5"}),
                app.invoke({"log": []}, context=Ctx(user_id="v")),
                bad[:2], len(ran))

    differential(scenario)


def test_context_in_send_branches_and_command_goto_send(differential):
    """Workers reached by `Send` from a conditional edge and from `Command(goto=Send)`
    read `runtime.context` and `get_runtime().context`."""
    def scenario(E):
        @dataclass
        class Ctx:
            prefix: str

        class S(TypedDict):
            log: Annotated[list, operator.add]

        def worker(arg, runtime: E.Runtime[Ctx]):
            return {"log": [f"{runtime.context.prefix}{arg['i']}|{E.get_runtime().context.prefix}"]}

        def dispatch(s):
            return E.Command(goto=[E.Send("worker", {"i": 10}), E.Send("worker", {"i": 11})])

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("dispatch", dispatch, destinations=("worker",))
        g.add_node("worker", worker)
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"i": i}) for i in range(2)] + ["dispatch"],
                                ["worker", "dispatch"])
        out = g.compile().invoke({"log": []}, context=Ctx(prefix="#"))
        return sorted(out["log"])

    differential(scenario, expect=["#0|#", "#10|#", "#11|#", "#1|#"])


def test_context_reaches_subgraph_invoked_inside_a_node_and_explicit_context_wins(differential):
    """A compiled subgraph invoked from inside a node inherits the parent's context;
    passing `context=` to that inner invoke replaces it."""
    def scenario(E):
        @dataclass
        class Ctx:
            lang: str

        def inner(s, runtime: E.Runtime[Ctx]):
            c = runtime.context
            return {"log": [f"inner:{c.lang if c is not None else None}"]}

        sg = E.StateGraph(Log, context_schema=Ctx)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")
        sub = sg.compile()

        def inherit(s):
            return {"log": sub.invoke({"log": []})["log"]}

        def explicit(s):
            return {"log": sub.invoke({"log": []}, context=Ctx(lang="fr"))["log"]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("inherit", inherit)
        g.add_node("explicit", explicit)
        g.add_edge(E.START, "inherit")
        g.add_edge("inherit", "explicit")
        return g.compile().invoke({"log": []}, context=Ctx(lang="en"))

    differential(scenario)


def test_subgraph_without_context_schema_sees_parent_context(differential):
    """A subgraph node whose graph declares no `context_schema` still reads the parent's
    context; one declaring a different dataclass schema receives the parent's object."""
    def scenario(E):
        @dataclass
        class Ctx:
            user: str

        @dataclass
        class Other:
            user: str = "other-default"

        def plain_inner(s, runtime: E.Runtime):
            return {"log": [("plain", type(runtime.context).__name__, runtime.context.user)]}

        def other_inner(s, runtime: E.Runtime[Other]):
            return {"log": [("other", type(runtime.context).__name__, runtime.context.user)]}

        def sub(fn, schema=None):
            sg = E.StateGraph(Log, context_schema=schema) if schema else E.StateGraph(Log)
            sg.add_node("inner", fn)
            sg.add_edge(E.START, "inner")
            return sg.compile()

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("plain", sub(plain_inner))
        g.add_node("other", sub(other_inner, Other))
        g.add_edge(E.START, "plain")
        g.add_edge("plain", "other")
        return g.compile().invoke({"log": []}, context=Ctx(user="ann"))

    differential(scenario)


def test_context_is_not_checkpointed_resume_sees_the_new_context(differential):
    """Context is per run: after an interrupt, resuming with another `context=` gives
    the node the new one; resuming without one gives None."""
    def scenario(E):
        @dataclass
        class Ctx:
            user: str

        def ask(s, runtime: E.Runtime[Ctx]):
            before = runtime.context.user if runtime.context else None
            answer = E.interrupt("name?")
            after = runtime.context.user if runtime.context else None
            return {"log": [(before, answer, after)]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app = g.compile(checkpointer=E.InMemorySaver())
        app.invoke({"log": []}, _cfg("1"), context=Ctx(user="first"))
        r1 = app.invoke(E.Command(resume="a"), _cfg("1"), context=Ctx(user="second"))
        app.invoke({"log": []}, _cfg("2"), context=Ctx(user="first"))
        r2 = app.invoke(E.Command(resume="b"), _cfg("2"))
        return r1, r2

    differential(scenario, expect=({"log": [("second", "a", "second")]},
                                   {"log": [(None, "b", None)]}))


def test_context_and_store_in_streamed_subgraph_events(differential):
    """`stream(subgraphs=True, stream_mode=["custom","updates"], context=...)`: nested
    nodes write custom events built from the context and the store."""
    def scenario(E):
        @dataclass
        class Ctx:
            user: str

        def inner(s, runtime: E.Runtime[Ctx]):
            name = runtime.store.get(("users",), runtime.context.user).value["name"]
            runtime.stream_writer({"greeting": f"hi {name}"})
            E.get_stream_writer()({"via": "get_stream_writer"})
            return {"log": [name]}

        sg = E.StateGraph(Log, context_schema=Ctx)
        sg.add_node("inner", inner)
        sg.add_edge(E.START, "inner")
        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("sub", sg.compile())
        g.add_edge(E.START, "sub")
        store = InMemoryStore()
        store.put(("users",), "u1", {"name": "Ann"})
        app = g.compile(store=store)
        return collect(lambda: app.stream({"log": []}, stream_mode=["custom", "updates"],
                                          subgraphs=True, context=Ctx(user="u1")))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# config and get_config
# ---------------------------------------------------------------------------------------


def test_configurable_user_keys_and_thread_id_seen_by_nodes_and_routers(differential):
    """Nodes and a router read user-defined `configurable` keys and `thread_id`; the
    user keys also show in `config["metadata"]`."""
    def scenario(E):
        seen = []

        def node(s, config: RunnableConfig):
            c = config["configurable"]
            seen.append((c.get("thread_id"), c.get("user_id"), c.get("model"),
                         config["metadata"].get("user_id"), config["metadata"].get("thread_id")))
            return {"log": ["node"]}

        def route(s, config: RunnableConfig):
            return "fast" if config["configurable"].get("model") == "fast" else E.END

        g = E.StateGraph(Log)
        g.add_node("node", node)
        g.add_node("fast", lambda s: {"log": ["fast"]})
        g.add_edge(E.START, "node")
        g.add_conditional_edges("node", route, ["fast", E.END])
        app = g.compile(checkpointer=E.InMemorySaver())
        a = app.invoke({"log": []}, _cfg("t1", user_id="u1", model="fast"))
        b = app.invoke({"log": []}, _cfg("t2", user_id="u2"))
        return a, b, seen

    differential(scenario)


def test_configurable_thread_checkpoint_keys_and_user_keys_seen_by_nodes(differential):
    """What a node reads from `configurable` (`thread_id`, `checkpoint_ns`,
    `checkpoint_id`, user keys), with and without a checkpointer, in a parent node and
    in a subgraph node."""
    def scenario(E):
        seen = []

        def look(tag):
            def node(s, config: RunnableConfig):
                c = config["configurable"]
                seen.append((tag, {"thread_id": c.get("thread_id"), "user_id": c.get("user_id"),
                                   "checkpoint_ns": c.get("checkpoint_ns"),
                                   "checkpoint_id": c.get("checkpoint_id")}))
                return {"log": [tag]}
            return node

        sg = E.StateGraph(Log)
        sg.add_node("inner", look("inner"))
        sg.add_edge(E.START, "inner")
        g = E.StateGraph(Log)
        g.add_node("outer", look("outer"))
        g.add_node("sub", sg.compile())
        g.add_edge(E.START, "outer")
        g.add_edge("outer", "sub")
        g.compile().invoke({"log": []}, {"configurable": {"user_id": "u"}})
        g.compile(checkpointer=E.InMemorySaver()).invoke({"log": []}, _cfg("t", user_id="u"))
        return seen

    differential(scenario)


def test_get_config_in_nested_helpers_and_copy_context_threads(differential):
    """`get_config()` from a helper two calls deep, from a thread started with
    `contextvars.copy_context().run`, and from a pool thread given the copied context;
    a bare pool thread has no run context."""
    def scenario(E):
        def deep():
            return E.get_config()["configurable"].get("user_id")

        def helper():
            return deep()

        def node(s):
            res = {}
            ctx = contextvars.copy_context()
            t = threading.Thread(target=lambda: res.__setitem__("thread", ctx.run(helper)))
            t.start()
            t.join()
            with ThreadPoolExecutor(1) as ex:
                res["pool_ctx"] = ex.submit(contextvars.copy_context().run, helper).result()
                res["pool_bare"] = capture(lambda: ex.submit(helper).result())[:2]
            return {"log": [helper(), res["thread"], res["pool_ctx"], res["pool_bare"]]}

        g = E.StateGraph(Log)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return g.compile().invoke({"log": []}, {"configurable": {"user_id": "u7"}})

    differential(scenario)


def test_get_config_get_runtime_in_asyncio_tasks_of_async_node(differential):
    """An async node fans out with `asyncio.gather` and `create_task`: each task reads
    `get_config()`, `get_runtime().context` and `get_store()`."""
    async def scenario(E):
        @dataclass
        class Ctx:
            user: str

        store = InMemoryStore()

        async def lookup(i):
            await asyncio.sleep(0.001 * (3 - i))
            return (i, E.get_config()["configurable"]["k"], E.get_runtime().context.user,
                    E.get_store() is store, E.get_config()["metadata"]["langgraph_node"])

        async def node(s):
            results = await asyncio.gather(*(lookup(i) for i in range(3)))
            t = asyncio.create_task(lookup(9))
            return {"log": list(results) + [await t]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return await g.compile(store=store).ainvoke({"log": []}, {"configurable": {"k": "v"}},
                                                    context=Ctx(user="ann"))

    differential(scenario)


def test_accessors_outside_a_run_raise(differential):
    """`get_config()`, `get_store()`, `get_runtime()` and `get_stream_writer()` called
    outside any graph run."""
    def scenario(E):
        return [capture(f) for f in (E.get_config, E.get_store, E.get_runtime, E.get_stream_writer)]

    # lgnb rewords the message ("Called outside of a running graph node ..."): class only
    differential(scenario, exc="class")


def test_runnable_and_tool_invoked_inside_node_without_config_see_run_config(differential):
    """Inside a node, `RunnableLambda(...).invoke(x)` and `@tool` `.invoke(args)` called
    without passing a config still see the run's configurable (LangChain's context)."""
    def scenario(E):
        def lam(x, config: RunnableConfig):
            return f"{x}:{config['configurable'].get('user_id')}:{config['metadata'].get('langgraph_node')}"

        @tool
        def whoami(q: str, config: RunnableConfig) -> str:
            """Say who."""
            return f"{q}:{config['configurable'].get('user_id')}"

        def node(s):
            return {"log": [RunnableLambda(lam).invoke("lam"), whoami.invoke({"q": "tool"})]}

        async def anode(s):
            return {"log": [await RunnableLambda(lam).ainvoke("alam"), await whoami.ainvoke({"q": "atool"})]}

        g = E.StateGraph(Log)
        g.add_node("node", node)
        g.add_node("anode", anode)
        g.add_edge(E.START, "node")
        g.add_edge("node", "anode")
        return asyncio.run(g.compile().ainvoke({"log": []}, {"configurable": {"user_id": "u3"}}))

    differential(scenario)


def test_configurable_alternatives_inside_node_follow_the_graph_config(differential):
    """A runnable with `configurable_alternatives` / `configurable_fields`, invoked inside
    a node without passing a config, picks the alternative named in the graph call's
    `configurable` (LangChain's inherited config), sync and async."""
    def scenario(E):
        from langchain_core.prompts import PromptTemplate
        from langchain_core.runnables import ConfigurableField

        chain = PromptTemplate.from_template("default:{q}").configurable_alternatives(
            ConfigurableField(id="llm"), default_key="default",
            other=PromptTemplate.from_template("other:{q}"))

        def node(s):
            return {"log": [chain.invoke({"q": "q"}).text]}

        async def anode(s):
            return {"log": [(await chain.ainvoke({"q": "aq"})).text]}

        g = E.StateGraph(Log)
        g.add_node("node", node)
        g.add_node("anode", anode)
        g.add_edge(E.START, "node")
        g.add_edge("node", "anode")
        app = g.compile()
        return (asyncio.run(app.ainvoke({"log": []}, {"configurable": {"llm": "other"}})),
                asyncio.run(app.ainvoke({"log": []})))

    differential(scenario, expect=({"log": ["other:q", "other:aq"]},
                                   {"log": ["default:q", "default:aq"]}))


def test_inherited_config_is_the_current_task_s_on_every_run_of_a_node(differential):
    """A node that reads LangChain's inherited config sees the config of the task running
    now, on its first run and on every later one (lgnb builds it lazily the first time,
    up front afterwards): step, configurable and alternatives follow each call."""
    def scenario(E):
        from langchain_core.prompts import PromptTemplate
        from langchain_core.runnables import ConfigurableField
        from langchain_core.runnables.config import ensure_config

        chain = PromptTemplate.from_template("default:{q}").configurable_alternatives(
            ConfigurableField(id="llm"), default_key="default",
            other=PromptTemplate.from_template("other:{q}"))

        def node(s):
            c = ensure_config()
            seen = (c["metadata"]["langgraph_step"], c["metadata"]["langgraph_node"],
                    c["configurable"].get("user"), chain.invoke({"q": "q"}).text)
            return {"log": [seen]}

        g = E.StateGraph(Log)
        g.add_node("node", node)
        g.add_conditional_edges("node", lambda s: "node" if len(s["log"]) % 3 else E.END)
        g.add_edge(E.START, "node")
        app = g.compile()
        return [app.invoke({"log": []}, {"configurable": {"llm": llm, "user": user}})
                for llm, user in (("other", "a"), ("default", "b"), ("other", None))]

    differential(scenario)


def test_with_config_configurable_defaults_reach_nodes_and_call_config_wins(differential):
    """`graph.with_config(configurable={...})` gives nodes default configurable values;
    a key given at invoke time overrides it."""
    def scenario(E):
        def node(s, config: RunnableConfig):
            c = config["configurable"]
            return {"log": [(c.get("user_id"), c.get("model"))]}

        g = E.StateGraph(Log)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        app = g.compile().with_config(configurable={"user_id": "default-user", "model": "m1"})
        return (app.invoke({"log": []}),
                app.invoke({"log": []}, {"configurable": {"user_id": "u9"}}))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# tools run by LangGraph's ToolNode inside the graph
# ---------------------------------------------------------------------------------------


def _scripted_agent(E, turns):
    """An agent node replaying `turns` (lists of (tool, args)); an empty turn ends."""
    def agent(state):
        n = sum(isinstance(m, AIMessage) for m in state["messages"])
        calls = turns[n] if n < len(turns) else []
        tcs = [{"name": t, "args": a, "id": f"call-{n}-{i}", "type": "tool_call"}
               for i, (t, a) in enumerate(calls)]
        return {"messages": [AIMessage("" if tcs else "done", id=f"ai-{n}", tool_calls=tcs)]}
    return agent


def _agent_graph(E, state, tools, turns, context_schema=None):
    g = E.StateGraph(state, context_schema=context_schema) if context_schema else E.StateGraph(state)
    g.add_node("agent", _scripted_agent(E, turns))
    g.add_node("tools", ToolNode(tools))
    g.add_edge(E.START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g


def test_toolnode_injected_state_key_and_tool_call_id_command_updates_state(differential):
    """A tool takes `InjectedToolCallId` and returns a `Command` updating a state key and
    the messages; a later tool reads that key through `InjectedState("user_name")` and the
    whole state through `InjectedState`."""
    def scenario(E):
        @tool
        def set_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]):
            """Remember the user's name."""
            return E.Command(update={"user_name": name,
                                     "messages": [ToolMessage(f"name set to {name}", tool_call_id=tool_call_id)]})

        @tool
        def greet(user_name: Annotated[str, InjectedState("user_name")]) -> str:
            """Greet the user."""
            return f"hello {user_name}"

        @tool
        def count(state: Annotated[dict, InjectedState]) -> str:
            """Count messages."""
            return f"{len(state['messages'])} messages, name={state.get('user_name')}"

        S = _msgs(E, user_name=str)
        g = _agent_graph(E, S, [set_name, greet, count],
                         [[("set_name", {"name": "Ann"})], [("greet", {}), ("count", {})]])
        app = g.compile(checkpointer=E.InMemorySaver())
        out = app.invoke({"messages": [HumanMessage("hi", id="h")], "user_name": "?"}, _cfg())
        return _snap(out["messages"]), out["user_name"]

    differential(scenario)


def test_toolnode_tool_runtime_reads_context_store_state_config_and_streams(differential):
    """A `ToolRuntime[Ctx]` tool reads `runtime.context`, writes and reads
    `runtime.store` under the context's user id, reads `runtime.state`,
    `runtime.tool_call_id`, `runtime.config`, and emits custom events with
    `runtime.stream_writer`."""
    def scenario(E):
        @dataclass
        class Ctx:
            user_id: str

        @tool
        def save_pref(pref: str, runtime: ToolRuntime[Ctx]) -> str:
            """Save a preference."""
            uid = runtime.context.user_id
            runtime.store.put(("prefs", uid), runtime.tool_call_id, {"pref": pref})
            runtime.stream_writer({"saving": pref, "for": uid})
            prefs = sorted(i.value["pref"] for i in runtime.store.search(("prefs", uid)))
            return (f"{uid} prefs={prefs} msgs={len(runtime.state['messages'])} "
                    f"thread={runtime.config['configurable'].get('thread_id')}")

        g = _agent_graph(E, E.MessagesState, [save_pref],
                         [[("save_pref", {"pref": "tea"})], [("save_pref", {"pref": "jazz"})]],
                         context_schema=Ctx)
        store = InMemoryStore()
        app = g.compile(checkpointer=E.InMemorySaver(), store=store)
        chunks = collect(lambda: app.stream({"messages": [HumanMessage("hi", id="h")]}, _cfg("t1"),
                                            context=Ctx(user_id="u1"), stream_mode=["custom", "updates"]))
        out = [(mode, {k: _snap(v["messages"]) if isinstance(v, dict) and "messages" in v else v
                       for k, v in data.items()} if mode == "updates" else data)
               for mode, data in chunks]
        return out, _dump(store)

    differential(scenario)


def test_tools_call_get_runtime_get_store_get_config_and_writer_inside_toolnode(differential):
    """Inside tools ToolNode runs: `get_runtime().context`, `get_store()`,
    `get_config()` (configurable and node metadata) and `get_stream_writer()`."""
    def scenario(E):
        @dataclass
        class Ctx:
            user_id: str

        @tool
        def lookup(key: str) -> str:
            """Look a key up in the user's memory."""
            uid = E.get_runtime().context.user_id
            item = E.get_store().get(("kv", uid), key)
            cfg = E.get_config()
            E.get_stream_writer()(("lookup", key))
            return (f"{key}={item.value if item else None} user={uid} "
                    f"org={cfg['configurable'].get('org')} node={cfg['metadata'].get('langgraph_node')}")

        store = InMemoryStore()
        store.put(("kv", "u1"), "color", {"v": "blue"})
        g = _agent_graph(E, E.MessagesState, [lookup],
                         [[("lookup", {"key": "color"})], [("lookup", {"key": "size"})]], context_schema=Ctx)
        app = g.compile(store=store)
        chunks = collect(lambda: app.stream({"messages": [HumanMessage("hi", id="h")]},
                                            {"configurable": {"org": "acme"}}, context=Ctx(user_id="u1"),
                                            stream_mode=["custom", "values"]))
        return [(m, _snap(d["messages"]) if m == "values" else d) for m, d in chunks]

    differential(scenario)


def test_memory_agent_template_async_upsert_tool_with_injected_store_and_config(differential):
    """The memory-agent template: an async `upsert_memory` tool with `config:
    RunnableConfig` and `InjectedStore()`, run by ToolNode under `ainvoke` on two threads
    of one user; the agent node reads the memories back."""
    async def scenario(E):
        @tool
        async def upsert_memory(content: str, memory_id: str, *, config: RunnableConfig,
                                store: Annotated[BaseStore, InjectedStore()]) -> str:
            """Upsert a memory."""
            user_id = config["configurable"]["user_id"]
            await store.aput(("memories", user_id), memory_id, {"content": content})
            return f"Stored memory {memory_id}"

        async def agent(state, config: RunnableConfig, *, store: BaseStore):
            uid = config["configurable"]["user_id"]
            mems = sorted(i.value["content"] for i in await store.asearch(("memories", uid)))
            last = state["messages"][-1]
            n = len(state["messages"])
            if isinstance(last, HumanMessage):
                tcs = [{"name": "upsert_memory", "args": {"content": last.content, "memory_id": f"m{n}"},
                        "id": f"c{n}", "type": "tool_call"}]
                return {"messages": [AIMessage(f"I know {mems}", id=f"ai{n}", tool_calls=tcs)]}
            return {"messages": [AIMessage(f"now I know {mems}", id=f"ai{n}")]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([upsert_memory]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        store = InMemoryStore()
        app = g.compile(checkpointer=E.InMemorySaver(), store=store)
        a = await app.ainvoke({"messages": [HumanMessage("likes tea", id="h1")]}, _cfg("1", user_id="u"))
        b = await app.ainvoke({"messages": [HumanMessage("lives in oslo", id="h2")]}, _cfg("2", user_id="u"))
        return _snap(a["messages"]), _snap(b["messages"]), _dump(store)

    differential(scenario)


def test_toolnode_injected_store_without_a_compiled_store(differential):
    """A tool asking for `InjectedStore()` in a graph compiled without a store: the error
    ToolNode raises."""
    def scenario(E):
        @tool
        def remember(fact: str, store: Annotated[Any, InjectedStore()]) -> str:
            """Store a fact."""
            store.put(("f",), "k", {"v": fact})
            return "ok"

        g = _agent_graph(E, E.MessagesState, [remember], [[("remember", {"fact": "x"})]])
        return capture(lambda: g.compile().invoke({"messages": [HumanMessage("hi", id="h")]}))

    differential(scenario)


def test_toolnode_in_subgraph_gets_parent_store_and_context(differential):
    """A ReAct subgraph (agent + ToolNode) added as a node: its ToolRuntime tool sees the
    parent's store and context."""
    def scenario(E):
        @dataclass
        class Ctx:
            team: str

        @tool
        def note(text: str, runtime: ToolRuntime[Ctx]) -> str:
            """Write a note."""
            runtime.store.put(("notes", runtime.context.team), text, {"t": text})
            return f"noted for {runtime.context.team}"

        sub = _agent_graph(E, E.MessagesState, [note], [[("note", {"text": "a"}), ("note", {"text": "b"})]],
                           context_schema=Ctx).compile()
        g = E.StateGraph(E.MessagesState, context_schema=Ctx)
        g.add_node("react", sub)
        g.add_edge(E.START, "react")
        store = InMemoryStore()
        out = g.compile(store=store).invoke({"messages": [HumanMessage("go", id="h")]},
                                            context=Ctx(team="red"))
        return _snap(out["messages"]), _dump(store)

    differential(scenario)


def test_injected_state_with_pydantic_state_schema(differential):
    """`InjectedState` hands a tool the pydantic state object (attribute access) and one
    field of it."""
    def scenario(E):
        class State(pydantic.BaseModel):
            messages: Annotated[list, E.add_messages]
            user: str = "anon"

        @tool
        def who(state: Annotated[Any, InjectedState], user: Annotated[str, InjectedState("user")]) -> str:
            """Who is asking."""
            return f"{type(state).__name__}:{state.user}:{user}:{len(state.messages)}"

        g = _agent_graph(E, State, [who], [[("who", {})]])
        out = g.compile().invoke({"messages": [HumanMessage("hi", id="h")], "user": "zoe"})
        return _snap(out["messages"]), out["user"]

    differential(scenario)


# ---------------------------------------------------------------------------------------
# the Runtime object
# ---------------------------------------------------------------------------------------


def test_runtime_override_and_merge_inside_a_node(differential):
    """`runtime.override(context=...)` returns a copy with the field replaced (the
    original unchanged); `Runtime(...).merge(runtime)` keeps the set values of the
    argument and fills the rest."""
    def scenario(E):
        @dataclass
        class Ctx:
            user: str

        store = InMemoryStore()
        seen = {}

        def node(s, runtime: E.Runtime[Ctx]):
            o = runtime.override(context=Ctx(user="override"))
            m1 = E.Runtime(context=Ctx(user="base"), previous="p").merge(runtime)
            m2 = runtime.merge(E.Runtime())
            seen.update(
                override=(o.context, runtime.context, o.store is store, o.stream_writer is runtime.stream_writer,
                          type(o).__name__),
                merged=(m1.context, m1.store is store, m1.previous),
                kept=(m2.context, m2.store is store, m2.stream_writer is runtime.stream_writer),
                frozen=capture(lambda: setattr(runtime, "context", None))[:2],
            )
            return {"log": ["ok"]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        g.compile(store=store).invoke({"log": []}, context=Ctx(user="run"))
        return seen

    differential(scenario)


def test_runtime_execution_info_in_graph_and_subgraph_nodes(differential):
    """`runtime.execution_info` with a checkpointer and a `run_id`: thread id, run id,
    checkpoint namespace, task id (the node's own) and attempt, in a parent node, a
    subgraph node and a subgraph invoked inside a node; `runtime.previous` is None in a
    StateGraph. The `run_id` of the call is the parent's only."""
    def scenario(E):
        import uuid

        seen = []

        def look(tag):
            def node(s, config: RunnableConfig, runtime: E.Runtime):
                info = runtime.execution_info
                seen.append((tag, {"thread_id": info.thread_id, "run_id": info.run_id,
                                   "checkpoint_ns": info.checkpoint_ns,
                                   "task_id": info.task_id,
                                   "node_attempt": info.node_attempt,
                                   "first_attempt_time_set": info.node_first_attempt_time is not None,
                                   "previous": runtime.previous,
                                   "ns_matches_config": info.checkpoint_ns == config["configurable"]["checkpoint_ns"]}))
                return {"log": [tag]}
            return node

        sg = E.StateGraph(Log)
        sg.add_node("inner", look("inner"))
        sg.add_edge(E.START, "inner")
        subgraph = sg.compile()

        def call_sub(s):
            subgraph.invoke({"log": []})
            return {}

        g = E.StateGraph(Log)
        g.add_node("outer", look("outer"))
        g.add_node("sub", subgraph)
        g.add_node("call_sub", call_sub)
        g.add_edge(E.START, "outer")
        g.add_edge("outer", "sub")
        g.add_edge("sub", "call_sub")
        app = g.compile(checkpointer=E.InMemorySaver())
        rid = uuid.UUID(int=7)
        app.invoke({"log": []}, {"configurable": {"thread_id": "t"}, "run_id": rid})
        app.invoke({"log": []}, {"configurable": {"thread_id": "t"}})
        return seen

    differential(scenario)


def test_execution_info_checkpoint_id_is_the_checkpoint_the_step_ran_from(differential):
    """`execution_info.checkpoint_id` of each node is the id of the checkpoint its step
    started from (the `parent_config` of the checkpoint that step wrote)."""
    def scenario(E):
        ids = []

        def node(s, runtime: E.Runtime):
            ids.append((runtime.execution_info.checkpoint_id, len(s["log"])))
            return {"log": ["x"]}

        g = E.StateGraph(Log)
        g.add_node("a", node)
        g.add_node("b", node)
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        app = g.compile(checkpointer=E.InMemorySaver())
        app.invoke({"log": []}, _cfg())
        hist = list(app.get_state_history(_cfg()))
        parent_of = {h.metadata["step"]: h.parent_config["configurable"]["checkpoint_id"]
                     for h in hist if h.parent_config}
        return [(cid == parent_of.get(step + 1)) for cid, step in ids]

    differential(scenario, expect=[True, True])


# ---------------------------------------------------------------------------------------
# functional API
# ---------------------------------------------------------------------------------------


def test_entrypoint_with_store_and_context_schema_remembers_per_user(differential):
    """`entrypoint(checkpointer=, store=, context_schema=)`: a task reads the user's
    memories through `get_store()` and `get_runtime(Ctx)`, the entrypoint writes the new
    one and returns `entrypoint.final(value=..., save=...)` whose `save` is the next
    `previous`."""
    def scenario(E):
        @dataclass
        class Ctx:
            user_id: str

        store = InMemoryStore()

        @E.func.task
        def recall() -> list:
            uid = E.get_runtime(Ctx).context.user_id
            return sorted(i.value["text"] for i in E.get_store().search(("mem", uid)))

        @E.func.entrypoint(checkpointer=E.InMemorySaver(), store=store, context_schema=Ctx)
        def chat(text: str, *, previous=None, runtime: E.Runtime[Ctx]):
            known = recall().result()
            runtime.store.put(("mem", runtime.context.user_id), text, {"text": text})
            turns = (previous or 0) + 1
            return E.func.entrypoint.final(value={"known": known, "turns": turns}, save=turns)

        out = [chat.invoke("tea", _cfg("1"), context=Ctx(user_id="u1")),
               chat.invoke("oslo", _cfg("1"), context=Ctx(user_id="u1")),
               chat.invoke("jazz", _cfg("2"), context={"user_id": "u1"}),
               chat.invoke("rice", _cfg("3"), context=Ctx(user_id="u2"))]
        return out, _dump(store)

    differential(scenario)


def test_async_entrypoint_tasks_use_store_and_runtime(differential):
    """Async entrypoint and async tasks: `store` parameter, `runtime.store.aput`,
    `get_runtime().context` inside gathered task futures."""
    async def scenario(E):
        @dataclass
        class Ctx:
            ns: str

        store = InMemoryStore()

        @E.func.task
        async def save(i: int) -> str:
            rt = E.get_runtime()
            await rt.store.aput((rt.context.ns,), f"k{i}", {"i": i})
            return f"saved {i}"

        @E.func.entrypoint(store=store, context_schema=Ctx)
        async def wf(n: int, *, store: BaseStore, runtime: E.Runtime[Ctx]) -> dict:
            done = await asyncio.gather(*(save(i) for i in range(n)))
            items = await store.asearch((runtime.context.ns,))
            return {"done": list(done), "keys": sorted(i.key for i in items)}

        return await wf.ainvoke(3, context=Ctx(ns="a")), _dump(store)

    differential(scenario)


def test_tool_calls_sent_one_by_one_with_state_to_toolnode(differential):
    """create_react_agent v2's routing: each tool call goes to ToolNode by `Send` as a
    `tool_call_with_context` carrying the state; tools read `InjectedState`, the store and
    the context."""
    def scenario(E):
        @dataclass
        class Ctx:
            user: str

        @tool
        def tally(label: str, state: Annotated[dict, InjectedState],
                  store: Annotated[Any, InjectedStore()], runtime: ToolRuntime[Ctx]) -> str:
            """Count and store."""
            store.put(("tally", runtime.context.user), label, {"n": len(state["messages"])})
            return f"{label}:{len(state['messages'])}:{runtime.context.user}"

        def route(state):
            last = state["messages"][-1]
            if not last.tool_calls:
                return E.END
            return [E.Send("tools", {"__type": "tool_call_with_context", "tool_call": call, "state": state})
                    for call in last.tool_calls]

        g = E.StateGraph(E.MessagesState, context_schema=Ctx)
        g.add_node("agent", _scripted_agent(E, [[("tally", {"label": "a"}), ("tally", {"label": "b"})]]))
        g.add_node("tools", ToolNode([tally]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", route, ["tools", E.END])
        g.add_edge("tools", "agent")
        store = InMemoryStore()
        app = g.compile(checkpointer=E.InMemorySaver(), store=store)
        out = app.invoke({"messages": [HumanMessage("go", id="h")]}, _cfg(), context=Ctx(user="kim"))
        msgs = _snap(out["messages"])
        # the two Send tasks' ToolMessages land in task order
        return msgs, _dump(store)

    differential(scenario)


def test_get_config_and_get_runtime_from_to_thread_and_run_in_executor(differential):
    """An async node hands blocking work to `asyncio.to_thread` (copies the context: the
    accessors work) and to `loop.run_in_executor` (does not: no run context)."""
    async def scenario(E):
        @dataclass
        class Ctx:
            user: str

        def blocking():
            return (E.get_config()["configurable"].get("k"), E.get_runtime().context.user,
                    E.get_store() is not None)

        async def node(s):
            via_thread = await asyncio.to_thread(blocking)
            loop = asyncio.get_running_loop()
            via_executor = await acapture(lambda: loop.run_in_executor(None, blocking))
            return {"log": [via_thread, via_executor[:2]]}

        g = E.StateGraph(Log, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return await g.compile(store=InMemoryStore()).ainvoke({"log": []}, {"configurable": {"k": "v"}},
                                                              context=Ctx(user="ann"))

    differential(scenario)


def test_context_and_store_survive_interrupt_inside_tool_and_resume(differential):
    """A ToolRuntime tool interrupts for approval; the resumed run (new `context=`, same
    store) finishes the tool, which then writes the store under the resumed context."""
    def scenario(E):
        @dataclass
        class Ctx:
            user: str

        @tool
        def delete_memory(key: str, runtime: ToolRuntime[Ctx]) -> str:
            """Delete a memory after approval."""
            ok = E.interrupt({"delete": key, "asked_by": runtime.context.user})
            if ok == "yes":
                runtime.store.delete(("mem",), key)
                runtime.store.put(("audit",), key, {"by": runtime.context.user})
                return f"deleted {key}"
            return "kept"

        store = InMemoryStore()
        store.put(("mem",), "k1", {"v": 1})
        store.put(("mem",), "k2", {"v": 2})
        g = _agent_graph(E, E.MessagesState, [delete_memory], [[("delete_memory", {"key": "k1"})]],
                         context_schema=Ctx)
        app = g.compile(checkpointer=E.InMemorySaver(), store=store)
        first = app.invoke({"messages": [HumanMessage("forget k1", id="h")]}, _cfg(), context=Ctx(user="a"))
        resumed = app.invoke(E.Command(resume="yes"), _cfg(), context=Ctx(user="b"))
        return ([i.value for i in first["__interrupt__"]], _snap(resumed["messages"]), _dump(store))

    differential(scenario)

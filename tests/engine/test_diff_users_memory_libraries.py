"""Memory libraries built on LangGraph, used in graphs users write, run on lgnb.

`langmem` gives an agent long-term memory: its tools (`create_manage_memory_tool`,
`create_search_memory_tool`) read and write the graph's store through LangGraph's
`get_store()` and fill `{langgraph_user_id}` namespaces from `get_config()`; its memory
managers (`create_memory_manager`, `create_memory_store_manager`) run `trustcall`
extractors, which are graphs LangGraph compiles, called inside a node of the user's graph;
its `SummarizationNode` / `summarize_messages` keep a running summary in the state.
`trustcall.create_extractor` is the same nested graph used directly: extraction, repair of
an invalid tool call by JSON patch, update of existing documents by JSON patch.

The user's graphs are E's `StateGraph` with LangGraph's `ToolNode` / `tools_condition`
(lgnb's README: they work in lgnb graphs), `create_react_agent` ported with
`from_langgraph`, and nodes calling the libraries. The store is LangGraph's
`InMemoryStore` on both engines (with and without a vector index over a deterministic fake
embedding). Chat models are scripted; where the reply needs an id the library made up (a
memory's uuid), the script reads it from what the model is sent, as a model would.
Observables: raw streams (`subgraphs=True`), what each model was sent and bound to, the
store's items, states, histories; only ids and timestamps are normalized (by the harness).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import ast
import json
import re
import warnings
from typing import Annotated, Any, Optional

import pytest
from _agent_scenarios import calls as _calls
from _agent_scenarios import on as _on
from _agent_scenarios import replies as _replies
from _agent_scenarios import saver as _saver
from _agent_scenarios import say as _say
from _diff import acollect, collect, snapshot_summary
from _scripted import Scripted
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel
from typing_extensions import TypedDict

pytest.importorskip("langmem")
pytest.importorskip("trustcall")

warnings.filterwarnings("ignore", message=".*create_react_agent.*")


class Binding(Scripted):
    """A scripted model whose `bind_tools` binds as real chat models do (a binding over
    the model: trustcall reaches `.bound` to bind more tools) and records the tool names
    and `tool_choice` it was given."""

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        self.seen.append(("bind_tools", names, tool_choice))
        return self.bind(tools=names, tool_choice=tool_choice)


def _model(*steps):
    """Replies in order; a step that is a function answers from the messages it is sent."""
    return Binding(script=_replies(*steps), seen=[])


def _cfg(tid="t", user=None):
    conf = {"thread_id": tid}
    if user is not None:
        conf["langgraph_user_id"] = user
    return {"configurable": conf}


def _hi(text, mid):
    return {"messages": [HumanMessage(text, id=mid)]}


def _text(m):
    return m["content"] if isinstance(m, dict) else m.content


def _embedding_store(indexed):
    from langgraph.store.memory import InMemoryStore

    if not indexed:
        return InMemoryStore()
    from langchain_core.embeddings import DeterministicFakeEmbedding

    return InMemoryStore(index={"dims": 16, "embed": DeterministicFakeEmbedding(size=16)})


def _items(store, *prefix):
    """The store's items under `prefix` as users print them, in a stable order (a memory's
    key is a fresh uuid; some libraries put from threads)."""
    found = store.search(prefix, limit=100)
    return sorted(((tuple(i.namespace), i.key, i.value) for i in found),
                  key=lambda t: (t[0], json.dumps(t[2], sort_keys=True)))


# --- langmem's memory tools in the user's agent graph ------------------------------------------

_NS = ("memories", "{langgraph_user_id}")


def _memory_tools():
    from langmem import create_manage_memory_tool, create_search_memory_tool

    return [create_manage_memory_tool(namespace=_NS), create_search_memory_tool(namespace=_NS)]


def _memory_agent(E, model, tools, store, checkpointer=None, *, is_async=False):
    """The user's agent: a model node and LangGraph's `ToolNode` in E's StateGraph."""
    from langgraph.prebuilt import ToolNode, tools_condition

    bound = model.bind_tools(tools)

    def agent(state):
        return {"messages": [bound.invoke(state["messages"])]}

    async def aagent(state):
        return {"messages": [await bound.ainvoke(state["messages"])]}

    b = E.StateGraph(E.MessagesState)
    b.add_node("agent", aagent if is_async else agent)
    b.add_node("tools", ToolNode(tools))
    b.add_edge(E.START, "agent")
    b.add_conditional_edges("agent", tools_condition)
    b.add_edge("tools", "agent")
    return b.compile(store=store, checkpointer=checkpointer)


def _created_id(messages):
    """The id in the last tool answer `created memory <id>`."""
    return re.search(r"created memory (\S+)", messages[-1].content).group(1)


def _found_id(messages, word):
    """The key of the memory mentioning `word` in the last `search_memory` answer."""
    return next(m["key"] for m in json.loads(messages[-1].content) if word in m["value"]["content"])


@pytest.mark.parametrize("indexed", [False, True], ids=["plain", "vector-index"])
def test_agent_creates_searches_updates_and_deletes_memories_per_user(differential, indexed):
    """Alice's facts saved on one thread, found and corrected on another, Bob sees none of
    them, one deleted; a run without `langgraph_user_id` fails in the tool as on LangGraph.
    With a vector index the search results carry the store's scores."""
    def scenario(E):
        model = _model(
            # thread 1, alice: two memories
            _calls("a1", ("manage_memory", {"content": "Alice likes green tea"}, "c1")),
            _calls("a2", ("manage_memory", {"content": "Alice lives in Oslo"}, "c2")),
            _say("Noted both.", "a3"),
            # thread 2, alice: search, then update the tea memory by its key
            _calls("a4", ("search_memory", {"query": "tea"}, "c3")),
            lambda ms: _calls("a5", ("manage_memory", {"action": "update", "id": _found_id(ms, "tea"),
                                                       "content": "Alice prefers coffee"}, "c4")),
            _say("Updated.", "a6"),
            # thread 3, bob: his namespace is empty
            _calls("b1", ("search_memory", {"query": "coffee"}, "c5")),
            _say("I know nothing about you yet.", "b2"),
            # thread 4, alice: delete the Oslo memory
            _calls("a7", ("search_memory", {"query": "Oslo", "limit": 5}, "c6")),
            lambda ms: _calls("a8", ("manage_memory", {"action": "delete", "id": _found_id(ms, "Oslo")}, "c7")),
            _say("Forgotten.", "a9"),
            # no user id in the config
            _calls("x1", ("search_memory", {"query": "anything"}, "c8")),
        )
        store = _embedding_store(indexed)
        app = _memory_agent(E, model, _memory_tools(), store, E.InMemorySaver())
        runs = []
        for tid, user, text in [("1", "alice", "remember: green tea, Oslo"), ("2", "alice", "coffee now"),
                                ("3", "bob", "what do you know?"), ("4", "alice", "forget Oslo")]:
            inp, cfg = _hi(text, f"h{tid}"), _cfg(tid, user)
            runs.append(collect(lambda inp=inp, cfg=cfg: app.stream(
                inp, cfg, stream_mode=["updates", "values"], subgraphs=True)))
            runs.append(_items(store, "memories"))
        try:  # langmem's ConfigurationError is a BaseException: it passes `except Exception`
            missing = list(app.stream(_hi("hi", "h5"), _cfg("5"), stream_mode="updates"))
        except BaseException as e:  # noqa: BLE001 - the observable
            text, _, keys = str(e).partition(" Available keys: ")
            # the message goes on with the keys of the task's `configurable`: which ones an
            # engine adds is its own (private `__pregel_*` keys; LangGraph also has
            # `checkpoint_id: None`, lgnb not), the user's `thread_id` is there on both
            missing = (type(e).__name__, text, "thread_id" in ast.literal_eval(keys))
        return runs, missing, model.seen

    ref = differential(scenario)
    final_items = ref[0][-1]
    assert [(ns, v) for ns, _, v in final_items] == [(("memories", "alice"), {"content": "Alice prefers coffee"})]
    assert ref[1][:2] == ("ConfigurationError", "Missing key in 'configurable' field: langgraph_user_id.")


def test_agent_with_memory_tools_async(differential):
    """`astream` of an async agent: the tools run their coroutines (`store.aput`,
    `store.asearch`) inside the lgnb task, with the user's namespace."""
    async def scenario(E):
        model = _model(
            _calls("a1", ("manage_memory", {"content": "Team prefers Python for backends"}, "c1")),
            lambda ms: _calls("a2", ("search_memory", {"query": "Python"}, "c2"),
                              content=f"saved {_created_id(ms)}"),
            _say("Saved and checked.", "a3"))
        store = _embedding_store(True)
        app = _memory_agent(E, model, _memory_tools(), store, E.InMemorySaver(), is_async=True)
        chunks = await acollect(lambda: app.astream(_hi("we like python", "h1"), _cfg("t", "team-x"),
                                                    stream_mode=["updates", "messages"], subgraphs=True))
        chunks = [(ns, mode, (c[0].content, c[1]["langgraph_node"]) if mode == "messages" else c)
                  for ns, mode, c in chunks]
        return chunks, _items(store, "memories"), model.seen

    ref = differential(scenario)
    assert ref[1][0][0] == ("memories", "team-x")


# --- create_react_agent with langmem's tools, ported ---------------------------------------------


def test_react_agent_with_memory_prompt_and_tools_ported(differential):
    """langmem's README agent: `create_react_agent` with the manage tool, a store, and a
    prompt function reading the user's memories through LangGraph's `get_store()` /
    `get_config()`; ported with `from_langgraph`. A memory saved on one thread shows in the
    system prompt of the user's next thread."""
    def scenario(E):
        from langgraph.config import get_config, get_store
        from langgraph.prebuilt import create_react_agent
        from langmem import create_manage_memory_tool

        def prompt(state):
            user = get_config()["configurable"]["langgraph_user_id"]
            memories = [m.value["content"] for m in get_store().search(("memories", user))]
            return [{"role": "system", "content": f"You are helpful. <memories>{memories}</memories>"},
                    *state["messages"]]

        model = _model(
            _calls("a1", ("manage_memory", {"content": "We like golang for backends"}, "c1")),
            _say("Got it: golang.", "a2"),
            _say("You use golang.", "a3"))
        store = _embedding_store(False)
        agent = create_react_agent(model, [create_manage_memory_tool(namespace=_NS)], prompt=prompt,
                                   store=store, checkpointer=E.InMemorySaver())
        app = _on(E, agent)
        first = collect(lambda: app.stream(_hi("We've decided we like golang", "h1"), _cfg("1", "u1"),
                                           stream_mode=["updates", "values"], subgraphs=True))
        second = app.invoke(_hi("what do we use?", "h2"), _cfg("2", "u1"))
        return first, second, snapshot_summary(app.get_state(_cfg("2", "u1"))), _items(store), model.seen

    ref = differential(scenario)
    assert ref[-1][-1][0] == ("system", "You are helpful. <memories>['We like golang for backends']</memories>")


# --- langmem's memory managers inside a node --------------------------------------------------


def _instance_id(messages, schema="Memory"):
    """The id of the first existing document trustcall shows the model."""
    return re.search(rf'<instance id=(\S+) schema_type="{schema}">', _text(messages[0])).group(1)


def _deletes_in_call_order(chunks: list) -> list:
    """trustcall's `del_tool_call` tasks (one `Send` per tool call, in one step) as LangGraph
    streams them: in the order its pool threads end, which flips on a loaded machine. Each
    run of them is put in the order of the calls they delete, as those first appear earlier
    in the stream (the model's message): the same content compared, not thread timing."""
    def target(chunk: Any) -> Any:
        try:
            return chunk[2]["del_tool_call"]["messages"]["target"]
        except (TypeError, KeyError, IndexError):
            return None

    out, i = list(chunks), 0
    while i < len(out):
        j = i
        while j < len(out) and target(out[j]) is not None and out[j][0] == out[i][0]:
            j += 1
        if j > i + 1:
            before = repr(out[:i])
            out[i:j] = sorted(out[i:j], key=lambda c: before.find(repr(target(c))))
        i = max(j, i + 1)
    return out


def test_memory_manager_in_a_node_extracts_then_updates_memories(differential):
    """`create_memory_manager` called by the user's node: turn 1 extracts two memories
    (trustcall's extractor graph runs nested in the node), turn 2 passes them back as
    `existing` and the model patches one (`PatchDoc`) and inserts another; the state keeps
    them across turns on the checkpointer."""
    def scenario(E):
        from langmem import create_memory_manager

        model = _model(
            _calls("m1", ("Memory", {"content": "Alice likes tea"}, "t1"),
                   ("Memory", {"content": "Alice has a cat"}, "t2")),
            lambda ms: _calls("m2", ("PatchDoc", {"json_doc_id": _instance_id(ms), "planned_edits": "tea -> coffee",
                                                  "patches": [{"op": "replace", "path": "/content",
                                                               "value": "Alice prefers coffee"}]}, "t3"),
                              ("Memory", {"content": "Alice runs on Sundays"}, "t4")))
        manager = create_memory_manager(model)

        class State(E.MessagesState):
            memories: list

        def remember(state):
            found = manager.invoke({"messages": state["messages"], "existing": state.get("memories") or None})
            # a memory the model left alone comes back as it was given (a dict)
            return {"memories": [(m.id, "Memory", m.content if isinstance(m.content, dict) else m.content.model_dump())
                                 for m in found]}

        b = E.StateGraph(State)
        b.add_node("remember", remember)
        b.add_edge(E.START, "remember")
        app = b.compile(checkpointer=E.InMemorySaver())
        first = collect(lambda: app.stream(_hi("I like tea and have a cat", "h1"), _cfg(),
                                           stream_mode=["updates"], subgraphs=True))
        second = collect(lambda: app.stream(_hi("I switched to coffee; I run on Sundays", "h2"), _cfg(),
                                            stream_mode=["updates", "values"], subgraphs=True))
        return (_deletes_in_call_order(first), _deletes_in_call_order(second),
                app.get_state(_cfg()).values["memories"], model.seen)

    ref = differential(scenario)
    assert sorted(m[2]["content"] for m in ref[2]) == ["Alice has a cat", "Alice prefers coffee",
                                                      "Alice runs on Sundays"]


@pytest.mark.parametrize("indexed", [False, True], ids=["plain", "vector-index"])
def test_memory_store_manager_in_a_node_uses_the_graphs_store(differential, indexed):
    """`create_memory_store_manager` in the user's node finds the graph's store with
    `get_store()` and the user's namespace with `get_config()`: turn 1 stores a memory,
    turn 2 searches it, patches it and stores a new one (as the model asked)."""
    def scenario(E):
        from langmem import create_memory_store_manager

        model = _model(
            _calls("m1", ("Memory", {"content": "Bob is vegetarian"}, "t1")),
            lambda ms: _calls("m2", ("PatchDoc", {"json_doc_id": _instance_id(ms), "planned_edits": "vegan now",
                                                  "patches": [{"op": "replace", "path": "/content",
                                                               "value": "Bob is vegan"}]}, "t2"),
                              ("Memory", {"content": "Bob dislikes mushrooms"}, "t3")))
        manager = create_memory_store_manager(model, namespace=_NS)

        class State(E.MessagesState):
            saved: list

        def remember(state):
            puts = manager.invoke({"messages": state["messages"]})
            return {"saved": sorted(p["value"]["content"]["content"] for p in puts)}

        b = E.StateGraph(State)
        b.add_node("remember", remember)
        b.add_edge(E.START, "remember")
        store = _embedding_store(indexed)
        app = b.compile(checkpointer=E.InMemorySaver(), store=store)
        first = collect(lambda: app.stream(_hi("I'm vegetarian", "h1"), _cfg("1", "bob"),
                                           stream_mode=["updates"], subgraphs=True))
        between = _items(store)
        second = app.invoke(_hi("now vegan, and no mushrooms please", "h2"), _cfg("2", "bob"))
        return first, between, second["saved"], _items(store), model.seen

    ref = differential(scenario)
    assert [v["content"]["content"] for _, _, v in ref[3]] == ["Bob dislikes mushrooms", "Bob is vegan"]


# --- langmem's short-term memory: running summaries -----------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_summarization_node_keeps_a_running_summary_over_turns(differential, kind, tmp_path):
    """langmem's README graph: `SummarizationNode` before the model node, its running
    summary in the state's `context`, the model reading `summarized_messages` (a key only
    its input schema names). Over four turns the summary is made, then extended.
    SQLite: lgnb's saver loads only the classes a schema names, and `context` is typed
    `dict[str, Any]`, so the user passes `allow=[RunningSummary]` (README); LangGraph's
    saver needs nothing."""
    def scenario(E):
        from langchain_core.messages import AnyMessage
        from langmem.short_term import RunningSummary, SummarizationNode

        chat = _model(*[_say(f"reply number {i}: " + "la " * 40, f"r{i}") for i in range(1, 5)])
        summarizer = _model(*[_say(f"summary {i}", f"s{i}") for i in range(1, 4)])

        class State(E.MessagesState):
            context: dict[str, Any]

        class LLMInputState(TypedDict):
            summarized_messages: list[AnyMessage]
            context: dict[str, Any]

        def call_model(state: LLMInputState):
            return {"messages": [chat.invoke(state["summarized_messages"])]}

        b = E.StateGraph(State)
        b.add_node(call_model)
        b.add_node("summarize", SummarizationNode(model=summarizer, max_tokens=60,
                                                  max_tokens_before_summary=50, max_summary_tokens=20))
        b.add_edge(E.START, "summarize")
        b.add_edge("summarize", "call_model")
        with _saver(E, kind, tmp_path, allow=[RunningSummary]) as saver:
            app = b.compile(checkpointer=saver)
            outs = [app.invoke(_hi(text, f"h{i}"), _cfg())
                    for i, text in enumerate(["hi, my name is bob", "write a short poem about cats",
                                              "now do the same but for dogs", "what's my name?"])]
            state = app.get_state(_cfg())
            return (outs, snapshot_summary(state), len(list(app.get_state_history(_cfg()))),
                    chat.seen, summarizer.seen)

    ref = differential(scenario)
    summary = ref[1]["values"]["context"]["running_summary"]
    assert summary[0] == "RunningSummary" and summary[1]["summary"] == "summary 2"


def test_summarize_messages_in_an_async_node(differential):
    """langmem's other README form: the node calls `asummarize_messages` itself and keeps
    the `RunningSummary` in a state key of that type; `astream` over three turns."""
    async def scenario(E):
        from langmem.short_term import RunningSummary, asummarize_messages

        chat = _model(*[_say(f"answer {i}: " + "words " * 30, f"r{i}") for i in range(1, 4)])
        summarizer = _model(_say("the user asked about cats", "s1"), _say("cats, then dogs", "s2"))

        class State(E.MessagesState):
            summary: Optional[RunningSummary]

        async def call_model(state):
            result = await asummarize_messages(state["messages"], running_summary=state.get("summary"),
                                               model=summarizer, max_tokens=50, max_summary_tokens=15)
            response = await chat.ainvoke(result.messages)
            update = {"messages": [response]}
            if result.running_summary:
                update["summary"] = result.running_summary
            return update

        b = E.StateGraph(State)
        b.add_node("call_model", call_model)
        b.add_edge(E.START, "call_model")
        app = b.compile(checkpointer=E.InMemorySaver())
        turns = []
        for i, text in enumerate(["tell me about cats please", "and about dogs too", "which did I ask first?"]):
            inp = _hi(text, f"h{i}")
            turns.append(await acollect(lambda inp=inp: app.astream(inp, _cfg(), stream_mode="values")))
        return turns, snapshot_summary(app.get_state(_cfg())), chat.seen, summarizer.seen

    ref = differential(scenario)
    assert ref[1]["values"]["summary"][1]["summary"] == "cats, then dogs"


# --- trustcall's extractor inside a node ----------------------------------------------------------


class UserInfo(BaseModel):
    """The user's profile."""

    name: str
    age: int
    interests: list[str] = []


def _profile_graph(E, extractor, checkpointer, *, existing=None, ask=False):
    """The user's graph: a node runs the extractor on the conversation (with the profile
    saved so far as `existing`), optionally asks a human to approve the result."""
    class State(E.MessagesState):
        profile: Optional[dict]

    def extract(state):
        inputs = {"messages": state["messages"]}
        known = state.get("profile") or existing
        if known:
            inputs["existing"] = {"UserInfo": known}
        result = extractor.invoke(inputs)
        profile = result["responses"][0].model_dump()
        if ask:
            answer = E.interrupt({"approve": profile})
            if answer != "yes":
                return {}
        return {"profile": profile, "messages": [AIMessage(f"profile: {profile}", id=f"p{len(state['messages'])}")]}

    b = E.StateGraph(State)
    b.add_node("extract", extract)
    b.add_edge(E.START, "extract")
    return b.compile(checkpointer=checkpointer)


def test_extractor_repairs_an_invalid_call_with_a_json_patch(differential):
    """The model's first call fails validation (`age: "thirty"`); trustcall's graph asks
    for `PatchFunctionErrors`, applies the JSON patch and validates again, all nested in
    the user's node: its steps stream under the node's namespace, the `Send`s to `patch`
    and `del_tool_call` included; the state and history are LangGraph's."""
    def scenario(E):
        from trustcall import create_extractor

        model = _model(
            _calls("x1", ("UserInfo", {"name": "Alice", "age": "thirty"}, "u1")),
            _calls("x2", ("PatchFunctionErrors", {"json_doc_id": "u1", "planned_edits": "age is an int",
                                                  "patches": [{"op": "replace", "path": "/age", "value": 30}]},
                          "p1")))
        extractor = create_extractor(model, tools=[UserInfo], tool_choice="UserInfo")
        app = _profile_graph(E, extractor, E.InMemorySaver())
        chunks = collect(lambda: app.stream(_hi("I'm Alice, thirty years old", "h1"), _cfg(),
                                            stream_mode=["updates", "values", "debug"], subgraphs=True))
        chunks = [c if c[1] != "debug" else (c[0], c[1], c[2]["type"], c[2]["payload"].get("name"))
                  for c in chunks]
        return chunks, snapshot_summary(app.get_state(_cfg(), subgraphs=True)), \
            [snapshot_summary(s) for s in app.get_state_history(_cfg())], model.seen

    ref = differential(scenario)
    assert ref[1]["values"]["profile"] == {"name": "Alice", "age": 30, "interests": []}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_extractor_updates_the_saved_profile_with_patch_doc(differential, kind, tmp_path):
    """Turn 1 extracts the profile; turn 2 passes it as `existing`, so trustcall binds
    only `PatchDoc` (`tool_choice="PatchDoc"`) and applies the model's JSON patch to it."""
    def scenario(E):
        from trustcall import create_extractor

        model = _model(
            _calls("x1", ("UserInfo", {"name": "Bob", "age": 41, "interests": ["chess"]}, "u1")),
            _calls("x2", ("PatchDoc", {"json_doc_id": "UserInfo", "planned_edits": "birthday, new hobby",
                                       "patches": [{"op": "replace", "path": "/age", "value": 42},
                                                   {"op": "add", "path": "/interests/-", "value": "sailing"}]},
                          "u2")))
        extractor = create_extractor(model, tools=[UserInfo], tool_choice="UserInfo")
        with _saver(E, kind, tmp_path) as saver:
            app = _profile_graph(E, extractor, saver)
            first = app.invoke(_hi("I'm Bob, 41, I play chess", "h1"), _cfg())
            second = collect(lambda: app.stream(_hi("I turned 42 and took up sailing", "h2"), _cfg(),
                                                stream_mode=["updates"], subgraphs=True))
            return first, second, [snapshot_summary(s) for s in app.get_state_history(_cfg())], model.seen

    ref = differential(scenario)
    assert ref[0]["profile"]["age"] == 41
    assert ref[1][-1][2]["extract"]["profile"] == {"name": "Bob", "age": 42, "interests": ["chess", "sailing"]}


def test_extractor_patches_one_listed_doc_and_inserts_another(differential):
    """`existing` as `(id, schema, doc)` triples with `enable_inserts=True`: trustcall binds
    `PatchDoc` and the schemas with `tool_choice="any"`; one reply patches a doc and
    inserts a new one; `response_metadata` names the patched doc."""
    def scenario(E):
        from trustcall import create_extractor

        class Pet(BaseModel):
            """A pet of the user."""

            name: str
            species: str

        model = _model(_calls("x1", ("PatchDoc", {"json_doc_id": "pet-1", "planned_edits": "renamed",
                                                  "patches": [{"op": "replace", "path": "/name", "value": "Rex II"}]},
                                     "c1"),
                              ("Pet", {"name": "Tom", "species": "cat"}, "c2")))
        extractor = create_extractor(model, tools=[Pet], enable_inserts=True)

        class State(TypedDict):
            messages: Annotated[list, E.add_messages]
            pets: list

        def update(state):
            result = extractor.invoke({"messages": state["messages"], "existing": [
                ("pet-1", "Pet", {"name": "Rex", "species": "dog"}),
                ("pet-2", "Pet", {"name": "Kiki", "species": "parrot"})]})
            return {"pets": [(r.model_dump(), meta.get("json_doc_id"))
                             for r, meta in zip(result["responses"], result["response_metadata"])]}

        b = E.StateGraph(State)
        b.add_node("update", update)
        b.add_edge(E.START, "update")
        app = b.compile(checkpointer=E.InMemorySaver())
        chunks = collect(lambda: app.stream(_hi("Rex is Rex II now; we got a cat, Tom", "h1"), _cfg(),
                                            stream_mode=["updates"], subgraphs=True))
        return chunks, model.seen

    ref = differential(scenario)
    assert ref[0][-1][2]["update"]["pets"] == [({"name": "Rex II", "species": "dog"}, "pet-1"),
                                               ({"name": "Tom", "species": "cat"}, None)]


def test_extractor_async_streams_the_nested_models_tokens(differential):
    """An async node awaiting `extractor.ainvoke`: `astream` with `messages` shows the
    nested extractor's model chunks with the inner node and namespace in their metadata."""
    keys = ("langgraph_node", "langgraph_step", "langgraph_checkpoint_ns", "checkpoint_ns", "thread_id")

    async def scenario(E):
        from trustcall import create_extractor

        model = _model(_calls("x1", ("UserInfo", {"name": "Cleo", "age": 29}, "u1"), content="Extracting now."))
        extractor = create_extractor(model, tools=[UserInfo], tool_choice="UserInfo")

        class State(E.MessagesState):
            profile: Optional[dict]

        async def extract(state):
            result = await extractor.ainvoke({"messages": state["messages"]})
            return {"profile": result["responses"][0].model_dump()}

        b = E.StateGraph(State)
        b.add_node("extract", extract)
        b.add_edge(E.START, "extract")
        app = b.compile(checkpointer=E.InMemorySaver())
        out = []
        async for ns, mode, chunk in app.astream(_hi("I'm Cleo, 29", "h1"), _cfg(), subgraphs=True,
                                                 stream_mode=["messages", "updates"]):
            if mode == "messages":
                msg, meta = chunk
                chunk = (type(msg).__name__, msg.content, getattr(msg, "tool_call_chunks", None),
                         {k: meta.get(k) for k in keys})
            out.append((ns, mode, chunk))
        return out, model.seen

    ref = differential(scenario)
    assert any(c[1] == "messages" and c[2][3]["langgraph_node"] == "extract" and c[0] for c in ref[0])


def test_extractor_result_approved_by_a_human_after_a_pause(differential):
    """The node asks a human to approve the extracted profile with `interrupt()`; on
    `Command(resume="yes")` the node runs again, so the nested extractor runs again (it has
    no checkpointer of its own: `checkpointer=False`), as on LangGraph."""
    def scenario(E):
        from trustcall import create_extractor

        model = _model(_calls("x1", ("UserInfo", {"name": "Dana", "age": 35}, "u1")),
                       _calls("x2", ("UserInfo", {"name": "Dana", "age": 35}, "u2")))
        extractor = create_extractor(model, tools=[UserInfo], tool_choice="UserInfo")
        app = _profile_graph(E, extractor, E.InMemorySaver(), ask=True)
        first = collect(lambda: app.stream(_hi("Dana here, 35", "h1"), _cfg(), stream_mode=["updates"],
                                           subgraphs=True))
        paused = snapshot_summary(app.get_state(_cfg(), subgraphs=True))
        resumed = collect(lambda: app.stream(E.Command(resume="yes"), _cfg(), stream_mode=["updates"],
                                             subgraphs=True))
        calls = [s for s in model.seen if isinstance(s, list)]  # the model's calls, not its bindings
        return first, paused, resumed, app.get_state(_cfg()).values["profile"], calls

    ref = differential(scenario)
    assert ref[1]["interrupts"] == [{"approve": {"name": "Dana", "age": 35, "interests": []}}]
    assert ref[-1] == [[("human", "Dana here, 35")]] * 2  # one model call per run of the node


def test_unported_react_agent_invoked_in_a_node_pauses_and_resumes(differential):
    """The user's node calls a `create_react_agent` (LangGraph's graph, not ported) with
    langmem's tool and a tool that asks a human first: the agent runs nested in the task
    on the run's saver (its steps streamed under the node, its state under the node's
    namespace in `get_state(subgraphs=True)`), pauses the run, and resumes inside."""
    def scenario(E):
        from langchain_core.tools import tool
        from langgraph.prebuilt import create_react_agent
        from langgraph.types import interrupt
        from langmem import create_manage_memory_tool

        @tool
        def forget_everything() -> str:
            """Delete all memories (asks the user first)."""
            answer = interrupt({"question": "really forget everything?"})
            return "forgot everything" if answer == "yes" else f"kept: {answer}"

        # one tool call per turn: two in one turn are parallel tasks of the agent's own
        # (LangGraph's) engine, whose updates come in the order they finish
        model = _model(_calls("a1", ("manage_memory", {"content": "likes jazz"}, "c1")),
                       _calls("a2", ("forget_everything", {}, "c2")),
                       _say("Done.", "a3"))
        agent = create_react_agent(model, [create_manage_memory_tool(namespace=_NS), forget_everything])

        class State(E.MessagesState):
            answer: str

        def assistant(state):
            out = agent.invoke({"messages": state["messages"]})
            return {"answer": out["messages"][-1].content}

        b = E.StateGraph(State)
        b.add_node("assistant", assistant)
        b.add_edge(E.START, "assistant")
        store = _embedding_store(False)
        app = b.compile(checkpointer=E.InMemorySaver(), store=store)
        cfg = _cfg("t", "carol")
        first = collect(lambda: app.stream(_hi("remember jazz, then forget all", "h1"), cfg,
                                           stream_mode=["updates"], subgraphs=True))
        paused = snapshot_summary(app.get_state(cfg, subgraphs=True))
        resumed = collect(lambda: app.stream(E.Command(resume="yes"), cfg, stream_mode=["updates"],
                                             subgraphs=True))
        return first, paused, resumed, app.get_state(cfg).values["answer"], _items(store), model.seen

    ref = differential(scenario)
    assert ref[1]["interrupts"] == [{"question": "really forget everything?"}]
    assert ref[3] == "Done."

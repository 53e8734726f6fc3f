"""LangChain Academy's "Introduction to LangGraph", modules 4 and 5, as a learner types them.

Module 4: parallelization (a chain whose nodes overwrite one key; a fan-out writing that
key without a reducer fails with `InvalidUpdateError`; with `operator.add` or a sorting
reducer the parallel writes land in task order; uneven branches joined by a list edge; a
fan-out from START to fake web and Wikipedia searches joined by the answer node),
sub-graphs (two subgraphs with output schemas sharing keys with the parent, drawn with
`xray=1`, streamed with `subgraphs=True`, inspected with `get_state(subgraphs=True)` while
one is paused), map-reduce (`Send` per subject, structured output picking the best joke)
and the research assistant (analysts made with human feedback through `interrupt_before`
and `update_state(as_node=...)`, an interview subgraph per analyst through `Send`, parallel
searches inside each, the report written by three parallel nodes and joined).
Module 5: the memory store chatbot (`store: BaseStore` and `config` in nodes, a memory per
user across threads), profile memories (`with_structured_output` of a TypedDict, then
trustcall's `create_extractor` patching the saved profile), a memory collection (trustcall
with `enable_inserts`, keys from the store) and task_mAIstro, the memory agent (a tool
call routed to update the profile, the ToDo list or the instructions; trustcall with a
`Spy` listener reading the nested model runs; a second thread reading it all back).

Each scenario follows the notebook's program (graph shape and calls) written anew, with
the chat model replaced by a scripted fake answering as a function of what it is sent (so
parallel calls get the same answers in any order), Tavily and Wikipedia by fake search
functions, and the store LangGraph's `InMemoryStore` on both engines. Observed: what the
learner sees — return values, every streamed chunk, what the cells print (`print`,
`pretty_print`), `get_state`/`get_state_history`, `update_state`'s config, the store's items
(`.dict()`), mermaid text of `get_graph(xray=1)` — and what each model was sent. Where
LangGraph runs parallel nodes in a thread pool (completion order) the per-step multiset is
compared (`steps_as_multisets`), and the chunks of parallel subgraphs per namespace.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import contextlib
import json
import operator
import re
import threading
import uuid
import warnings
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Annotated, Literal, Optional

import pytest
from _diff import capture, collect, normalize, snapshot_summary, steps_as_multisets
from _scripted import Scripted
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
    get_buffer_string,
    merge_message_runs,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

pytest.importorskip("trustcall")


# --- the learner's fakes ---------------------------------------------------------------------


class Model(Scripted):
    """The notebook's `ChatOpenAI`, scripted: `script(messages, tools)` answers (`tools`: the
    names bound with `bind_tools`, which binds as real chat models do, so trustcall can
    reach `.bound`); `with_structured_output(schema)` answers `structured(schema, messages)`.
    Everything it is sent is recorded in `seen`."""

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        self.seen.append(("bind_tools", names, tool_choice, sorted(kwargs)))
        return self.bind(tools=names, tool_choice=tool_choice, **kwargs)

    def with_structured_output(self, schema, **kwargs):
        def answer(inp):
            messages = [HumanMessage(inp)] if isinstance(inp, str) else convert_to_messages(inp)
            self.seen.append(("structured", schema.__name__, [(m.type, m.content) for m in messages]))
            return self.structured(schema, messages)

        return RunnableLambda(answer, name=schema.__name__)

    def _answer(self, messages, tools):
        self.seen.append([(m.type, m.content) for m in messages] + ([("tools", tools)] if tools else []))
        return self.script(messages, tools).model_copy()

    def _generate(self, messages, stop=None, run_manager=None, tools=None, **kwargs):
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages, tools))])

    def _stream(self, messages, stop=None, run_manager=None, tools=None, **kwargs):
        msg = self._answer(messages, tools)
        yield ChatGenerationChunk(message=AIMessageChunk(
            content=msg.content, id=msg.id, name=msg.name, tool_call_chunks=[
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                for i, c in enumerate(msg.tool_calls)]))


def _model(script=None, structured=None):
    return Model(script=script, structured=structured, seen=[])


def _calls(mid, *tool_calls, content=""):
    return AIMessage(content, id=mid, tool_calls=[
        {"name": n, "args": a, "id": cid, "type": "tool_call"} for n, a, cid in tool_calls])


class _Lines:
    """stdout as a cell shows it: whole lines, whichever thread printed them."""

    def __init__(self):
        self.lines: list = []
        self._partial: dict = {}
        self._lock = threading.Lock()

    def write(self, text):
        with self._lock:
            me = threading.get_ident()
            *done, rest = (self._partial.get(me, "") + text).split("\n")
            self.lines.extend(done)
            self._partial[me] = rest
        return len(text)

    def flush(self):
        pass


@contextlib.contextmanager
def _printed():
    out = _Lines()
    with contextlib.redirect_stdout(out):
        yield out.lines


def _is_values(chunk):
    return isinstance(chunk, tuple) and len(chunk) in (2, 3) and chunk[-2] == "values"


def _per_source(chunks, *, inner_parallel=False):
    """A `subgraphs=True` stream (with `values`) as the parent's chunks per step, then each
    namespace's chunks in their order (per step if `inner_parallel`: the subgraph has
    parallel nodes); parallel subgraphs run at once, so their namespaces are compared as a
    sorted list."""
    groups: dict = {}
    errors = []
    for c in chunks:
        if isinstance(c, tuple) and len(c) == 3 and isinstance(c[0], tuple):
            groups.setdefault(c[0], []).append(c)
        else:
            errors.append(c)
    parent = steps_as_multisets(groups.pop((), []), _is_values)
    subgraphs = sorted((steps_as_multisets(g, _is_values) if inner_parallel else g for g in groups.values()),
                       key=lambda g: repr(normalize(g)))
    return parent, subgraphs, errors


def _in_steps(chunks, step_of):
    """An `updates` stream of parallel nodes: the step of each chunk in order, and each
    step's chunks as a multiset (LangGraph emits a step's updates as its tasks finish)."""
    steps = [step_of(c) for c in chunks]
    return steps, sorted(chunks, key=lambda c: (step_of(c), repr(normalize(c))))


def _cfg(tid="1", **configurable):
    return {"configurable": {"thread_id": tid, **configurable}}


def _items(store):
    """`for m in store.search(ns): print(m.dict())` over every namespace of the store."""
    return [item.dict() for ns in store.list_namespaces() for item in store.search(ns)]


def _shown(m):
    """A message as a task's saved result shows it, without its id: LangGraph saves a
    task's writes in the background while `add_messages` gives id-less messages their ids
    in place, so whether a saved write has one varies from run to run on LangGraph."""
    if isinstance(m, BaseMessage):
        return (m.type, m.content, m.name, getattr(m, "tool_call_id", None), getattr(m, "tool_calls", None))
    return m


def _hist(app, cfg):
    """`get_state_history`, task results' messages without ids."""
    out = []
    for s in app.get_state_history(cfg):
        summary = snapshot_summary(s)
        tasks = []
        for name, path, interrupts, result, state in summary["tasks"]:
            if isinstance(result, dict) and "messages" in result:
                ms = result["messages"]
                result = {**result, "messages": [_shown(m) for m in ms] if isinstance(ms, list) else _shown(ms)}
            tasks.append((name, path, interrupts, result, state))
        summary["tasks"] = tasks
        if "messages" in summary["values"]:
            summary["values"] = {**summary["values"], "messages": [_shown(m) for m in summary["values"]["messages"]]}
        out.append(summary)
    return out


# --- module 4: parallelization ---------------------------------------------------------------


class ReturnNodeValue:
    """The lesson's node: prints what it sees, writes its secret."""

    def __init__(self, node_secret: str):
        self._value = node_secret

    def __call__(self, state):
        print(f"Adding {self._value} to {state['state']}")
        return {"state": [self._value]}


def _nodes(E, State, names):
    builder = E.StateGraph(State)
    for name in names:
        builder.add_node(name, ReturnNodeValue(f"I'm {name.upper()}"))
    return builder


def test_chain_of_nodes_overwrites_a_key_without_reducer(differential):
    """a → b → c → d: each node sees only the previous one's write."""
    def scenario(E):
        class State(TypedDict):
            state: list[str]

        builder = _nodes(E, State, "abcd")
        builder.add_edge(E.START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("b", "c")
        builder.add_edge("c", "d")
        builder.add_edge("d", E.END)
        graph = builder.compile()
        with _printed() as lines:
            out = graph.invoke({"state": []})
        return graph.get_graph().draw_mermaid(), lines, out

    ref = differential(scenario)
    assert ref[1] == ["Adding I'm A to []", "Adding I'm B to [\"I'm A\"]", "Adding I'm C to [\"I'm B\"]",
                      "Adding I'm D to [\"I'm C\"]"]


def test_parallel_writes_to_a_key_without_reducer_raise_invalid_update_error(differential):
    """a → (b, c) → d with a plain key: the notebook's `except InvalidUpdateError` prints
    LangGraph's message; with a checkpointer the learner sees where the run stopped (the
    step's state, the failed tasks, the history)."""
    def scenario(E):
        class State(TypedDict):
            state: list[str]

        builder = _nodes(E, State, "abcd")
        builder.add_edge(E.START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("a", "c")
        builder.add_edge("b", "d")
        builder.add_edge("c", "d")
        builder.add_edge("d", E.END)
        graph = builder.compile()
        with _printed() as lines:
            try:
                graph.invoke({"state": []})
            except E.errors.InvalidUpdateError as e:
                print(f"An error occurred: {e}")
        printed = (lines[0], sorted(lines[1:3]), lines[3:])

        saved = builder.compile(checkpointer=E.InMemorySaver())
        with _printed():
            chunks = collect(lambda: saved.stream({"state": []}, _cfg(), stream_mode=["updates", "values"]))
        # LangGraph's get_state re-applies the step's saved writes: it raises the same error
        state = capture(lambda: snapshot_summary(saved.get_state(_cfg()), errors=True))
        hist = capture(lambda: [snapshot_summary(s, errors=True) for s in saved.get_state_history(_cfg())])
        return (graph.get_graph().draw_mermaid(), printed, steps_as_multisets(chunks, _is_values),
                state, hist)

    ref = differential(scenario)
    assert ref[1][2][0].startswith("An error occurred: At key 'state': Can receive only one value per step.")


def _fanned_out(E, reducer, *, uneven):
    class State(TypedDict):
        state: Annotated[list, reducer]

    if uneven:
        builder = _nodes(E, State, ["a", "b", "b2", "c", "d"])
        builder.add_edge(E.START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("a", "c")
        builder.add_edge("b", "b2")
        builder.add_edge(["b2", "c"], "d")
    else:
        builder = _nodes(E, State, "abcd")
        builder.add_edge(E.START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("a", "c")
        builder.add_edge("b", "d")
        builder.add_edge("c", "d")
    builder.add_edge("d", E.END)
    return builder


def sorting_reducer(left, right):
    """The lesson's reducer: combine and sort."""
    if not isinstance(left, list):
        left = [left]
    if not isinstance(right, list):
        right = [right]
    return sorted(left + right, reverse=False)


@pytest.mark.parametrize("reducer", [operator.add, sorting_reducer], ids=["operator_add", "sorting_reducer"])
@pytest.mark.parametrize("uneven", [False, True], ids=["even", "b2_and_list_edge"])
def test_parallel_writes_land_in_task_order_with_a_reducer(differential, reducer, uneven):
    """With `operator.add` b's and c's writes land in task order whichever finishes first;
    with the uneven branch (b → b2, `add_edge(["b2", "c"], "d")`) d waits for both; the
    sorting reducer sorts. Printed lines of a parallel step are compared as a set.
    The history is of a run with `durability="sync"`: with LangGraph's default ("async")
    the checkpoint of step 2 is saved in the background holding the join's live set of
    arrived branches, so when b2 is quick (as here) b2's later arrival shows in it and the
    step's `next` reads `('b2', 'd')`; when b2 is slow, `('b2',)` — timing, not the program."""
    def scenario(E):
        graph = _fanned_out(E, reducer, uneven=uneven).compile(checkpointer=E.InMemorySaver())
        with _printed() as lines:
            out = graph.invoke({"state": []}, _cfg("1"), durability="sync")
            chunks = collect(lambda: graph.stream({"state": []}, _cfg("2"), stream_mode=["updates", "values"]))
        steps = [lines[0], sorted(lines[1:3]), *lines[3:len(lines) // 2]]
        hist = [snapshot_summary(s) for s in graph.get_state_history(_cfg("1"))]
        return (graph.get_graph().draw_mermaid(), steps, out, steps_as_multisets(chunks, _is_values), hist)

    ref = differential(scenario)
    expected = ["I'm A", "I'm B", "I'm C", "I'm B2", "I'm D"] if uneven else ["I'm A", "I'm B", "I'm C", "I'm D"]
    if reducer is sorting_reducer:
        expected = ["I'm A", "I'm B", "I'm B2", "I'm C", "I'm D"] if uneven else expected
    assert ref[2] == {"state": expected}


def web_search(query):
    """Fake Tavily: `{"results": [{url, content}, ...]}`."""
    return {"results": [{"url": f"https://news.example/{i}", "content": f"web result {i} on {query}"}
                        for i in (1, 2)]}


def wikipedia_load(query, load_max_docs=2):
    """Fake `WikipediaLoader(query=..., load_max_docs=...).load()`."""
    return [Document(page_content=f"wiki text {i} on {query}",
                     metadata={"source": f"https://en.wikipedia.example/{i}", "page": ""})
            for i in range(1, load_max_docs + 1)]


def test_retrieval_fans_out_from_start_and_joins_at_the_answer(differential):
    """`search_web` and `search_wikipedia` both start at START, write `context` with
    `operator.add`, and `generate_answer` gets both formatted in task order."""
    def scenario(E):
        def answer(messages, tools):
            docs = messages[0].content.count("<Document")
            return AIMessage(f"Nvidia did well, per {docs} documents.", id="answer-1")

        llm = _model(answer)

        class State(TypedDict):
            question: str
            answer: str
            context: Annotated[list, operator.add]

        def search_web(state):
            data = web_search(state["question"])
            search_docs = data.get("results", data)
            formatted = "\n\n---\n\n".join(
                f'<Document href="{doc["url"]}">\n{doc["content"]}\n</Document>' for doc in search_docs)
            return {"context": [formatted]}

        def search_wikipedia(state):
            search_docs = wikipedia_load(state["question"], load_max_docs=2)
            formatted = "\n\n---\n\n".join(
                f'<Document source="{doc.metadata["source"]}" page="{doc.metadata.get("page", "")}">\n'
                f'{doc.page_content}\n</Document>' for doc in search_docs)
            return {"context": [formatted]}

        def generate_answer(state):
            instructions = f"Answer the question {state['question']} using this context: {state['context']}"
            result = llm.invoke([SystemMessage(content=instructions)] + [HumanMessage(content="Answer the question.")])
            return {"answer": result}

        builder = E.StateGraph(State)
        builder.add_node("search_web", search_web)
        builder.add_node("search_wikipedia", search_wikipedia)
        builder.add_node("generate_answer", generate_answer)
        builder.add_edge(E.START, "search_wikipedia")
        builder.add_edge(E.START, "search_web")
        builder.add_edge("search_wikipedia", "generate_answer")
        builder.add_edge("search_web", "generate_answer")
        builder.add_edge("generate_answer", E.END)
        graph = builder.compile()
        result = graph.invoke({"question": "How were Nvidia's Q2 2025 earnings"})
        with _printed() as lines:
            events = collect(lambda: graph.stream({"question": "How were Nvidia Q2 2025 earnings?"},
                                                  stream_mode="values"))
            for event in events:
                if event.get("answer"):
                    print(event["answer"].content)
        updates = collect(lambda: graph.stream({"question": "Q3?"}, stream_mode="updates"))
        return (graph.get_graph().draw_mermaid(), result, result["answer"].content, events, lines,
                _in_steps(updates, lambda c: 1 if "generate_answer" in c else 0), llm.seen)

    ref = differential(scenario)
    assert ref[2] == "Nvidia did well, per 4 documents."


# --- module 4: sub-graphs --------------------------------------------------------------------


class Log(TypedDict):
    id: str
    question: str
    docs: Optional[list]
    answer: str
    grade: Optional[int]
    grader: Optional[str]
    feedback: Optional[str]


RAW_LOGS = [
    Log(id="1", question="How can I import ChatOllama?",
        answer="To import ChatOllama, use: 'from langchain_community.chat_models import ChatOllama.'"),
    Log(id="2", question="How can I use Chroma vector store?",
        answer="To use Chroma, define: rag_chain = create_retrieval_chain(retriever, question_answer_chain).",
        grade=0, grader="Document Relevance Recall",
        feedback="The retrieved documents discuss vector stores in general, but not Chroma specifically"),
]


def _log_graphs(E, *, pause_summary=False, checkpointer=None, output_schemas=True, cleaned_reducer=False):
    """The failure-analysis and question-summarization subgraphs (output schemas) under the
    entry graph; `pause_summary`: the QS subgraph compiled with `interrupt_before`;
    `output_schemas=False`: the lesson's first version, each subgraph returning all its keys;
    `cleaned_reducer`: `cleaned_logs: Annotated[List[Log], add]` in the parent."""
    class FailureAnalysisState(TypedDict):
        cleaned_logs: list[Log]
        failures: list[Log]
        fa_summary: str
        processed_logs: list[str]

    class FailureAnalysisOutputState(TypedDict):
        fa_summary: str
        processed_logs: list[str]

    def get_failures(state):
        return {"failures": [log for log in state["cleaned_logs"] if "grade" in log]}

    def generate_failure_summary(state):
        failures = state["failures"]
        return {"fa_summary": "Poor quality retrieval of Chroma documentation.",
                "processed_logs": [f"failure-analysis-on-log-{failure['id']}" for failure in failures]}

    fa_builder = E.StateGraph(state_schema=FailureAnalysisState,
                              output_schema=FailureAnalysisOutputState if output_schemas else None)
    fa_builder.add_node("get_failures", get_failures)
    fa_builder.add_node("generate_summary", generate_failure_summary)
    fa_builder.add_edge(E.START, "get_failures")
    fa_builder.add_edge("get_failures", "generate_summary")
    fa_builder.add_edge("generate_summary", E.END)

    class QuestionSummarizationState(TypedDict):
        cleaned_logs: list[Log]
        qs_summary: str
        report: str
        processed_logs: list[str]

    class QuestionSummarizationOutputState(TypedDict):
        report: str
        processed_logs: list[str]

    def generate_question_summary(state):
        return {"qs_summary": "Questions focused on usage of ChatOllama and Chroma vector store.",
                "processed_logs": [f"summary-on-log-{log['id']}" for log in state["cleaned_logs"]]}

    def send_to_slack(state):
        return {"report": f"foo bar baz ({state['qs_summary'][:9]})"}

    qs_builder = E.StateGraph(QuestionSummarizationState,
                              output_schema=QuestionSummarizationOutputState if output_schemas else None)
    qs_builder.add_node("generate_summary", generate_question_summary)
    qs_builder.add_node("send_to_slack", send_to_slack)
    qs_builder.add_edge(E.START, "generate_summary")
    qs_builder.add_edge("generate_summary", "send_to_slack")
    qs_builder.add_edge("send_to_slack", E.END)

    class EntryGraphState(TypedDict):
        raw_logs: list[Log]
        cleaned_logs: Annotated[list[Log], operator.add] if cleaned_reducer else list[Log]
        fa_summary: str
        report: str
        processed_logs: Annotated[list[int], operator.add]

    def clean_logs(state):
        return {"cleaned_logs": state["raw_logs"]}

    entry_builder = E.StateGraph(EntryGraphState)
    entry_builder.add_node("clean_logs", clean_logs)
    entry_builder.add_node("question_summarization",
                           qs_builder.compile(interrupt_before=["send_to_slack"] if pause_summary else None))
    entry_builder.add_node("failure_analysis", fa_builder.compile())
    entry_builder.add_edge(E.START, "clean_logs")
    entry_builder.add_edge("clean_logs", "failure_analysis")
    entry_builder.add_edge("clean_logs", "question_summarization")
    entry_builder.add_edge("failure_analysis", E.END)
    entry_builder.add_edge("question_summarization", E.END)
    return fa_builder, qs_builder, entry_builder.compile(checkpointer=checkpointer)


def test_two_subgraphs_with_output_schemas_share_keys_with_the_parent(differential):
    """Each subgraph drawn alone, the entry graph drawn with `xray=1`; `invoke` returns
    the parent's state: `processed_logs` from both (in task order), `fa_summary` and
    `report` from one each, `cleaned_logs` untouched by the subgraphs' output schemas."""
    def scenario(E):
        fa_builder, qs_builder, graph = _log_graphs(E)
        drawings = [fa_builder.compile().get_graph().draw_mermaid(), qs_builder.compile().get_graph().draw_mermaid(),
                    graph.get_graph(xray=1).draw_mermaid(), graph.get_graph().draw_mermaid()]
        return drawings, graph.invoke({"raw_logs": RAW_LOGS})

    ref = differential(scenario)
    assert ref[1]["processed_logs"] == ["failure-analysis-on-log-2", "summary-on-log-1", "summary-on-log-2"]


@pytest.mark.parametrize("cleaned_reducer", [False, True], ids=["plain_cleaned_logs", "add_reducer"])
def test_subgraphs_without_output_schemas_return_every_key(differential, cleaned_reducer):
    """What the lesson explains before adding output schemas: each subgraph returns all its
    keys, so both write `cleaned_logs` in one step — `InvalidUpdateError` without a reducer,
    the logs added twice more with `operator.add` — and `processed_logs` gets each
    subgraph's whole list."""
    def scenario(E):
        _, _, graph = _log_graphs(E, output_schemas=False, cleaned_reducer=cleaned_reducer)
        out = capture(lambda: graph.invoke({"raw_logs": RAW_LOGS}))
        chunks = collect(lambda: graph.stream({"raw_logs": RAW_LOGS}, stream_mode=["updates", "values"],
                                              subgraphs=True))
        return out, _per_source(chunks)

    ref = differential(scenario)
    if cleaned_reducer:
        assert len(ref[0]["cleaned_logs"]) == 6
    else:
        assert ref[0][:2] == ("raises", "InvalidUpdateError")


def test_subgraphs_streamed_and_inspected_while_one_is_paused(differential):
    """With a checkpointer and the QS subgraph compiled with `interrupt_before`:
    `stream(subgraphs=True)` shows each subgraph's steps under its namespace; paused,
    `get_state(subgraphs=True)` shows the subgraph's own state and next node;
    `invoke(None)` finishes it; then the parent's history."""
    def scenario(E):
        _, _, graph = _log_graphs(E, pause_summary=True, checkpointer=E.InMemorySaver())
        chunks = collect(lambda: graph.stream({"raw_logs": RAW_LOGS}, _cfg(), stream_mode=["updates", "values"],
                                              subgraphs=True))
        paused = snapshot_summary(graph.get_state(_cfg(), subgraphs=True))
        flat = snapshot_summary(graph.get_state(_cfg()))
        done = collect(lambda: graph.stream(None, _cfg(), stream_mode=["updates", "values"], subgraphs=True))
        hist = [snapshot_summary(s) for s in graph.get_state_history(_cfg())]
        return _per_source(chunks), paused, flat, _per_source(done), graph.get_state(_cfg()).values, hist

    ref = differential(scenario)
    qs_task = next(t for t in ref[1]["tasks"] if t[0] == "question_summarization")
    assert qs_task[-1]["next"] == ("send_to_slack",)


# --- module 4: map-reduce --------------------------------------------------------------------


class Subjects(BaseModel):
    subjects: list[str]


class BestJoke(BaseModel):
    id: int


class Joke(BaseModel):
    joke: str


def _jokes_model():
    def structured(schema, messages):
        prompt = messages[-1].content
        if schema is Subjects:
            return Subjects(subjects=["mammals", "reptiles", "birds"])
        if schema is Joke:
            subject = prompt.removeprefix("Generate a joke about ")
            return Joke(joke=f"Why did the {subject} cross the road?")
        jokes = prompt.split("Jokes: \n\n  ")[1].split("\n\n")
        return BestJoke(id=next(i for i, j in enumerate(jokes) if "reptiles" in j))

    return _model(structured=structured)


def _jokes_graph(E, model):
    subjects_prompt = "Generate a list of 3 sub-topics that are all related to this overall topic: {topic}."
    joke_prompt = "Generate a joke about {subject}"
    best_joke_prompt = ("Below are a bunch of jokes about {topic}. Select the best one! Return the ID of the best "
                        "one, starting 0 as the ID for the first joke. Jokes: \n\n  {jokes}")

    class OverallState(TypedDict):
        topic: str
        subjects: list
        jokes: Annotated[list, operator.add]
        best_selected_joke: str

    class JokeState(TypedDict):
        subject: str

    def generate_topics(state: OverallState):
        response = model.with_structured_output(Subjects).invoke(subjects_prompt.format(topic=state["topic"]))
        return {"subjects": response.subjects}

    def continue_to_jokes(state: OverallState):
        return [E.Send("generate_joke", {"subject": s}) for s in state["subjects"]]

    def generate_joke(state: JokeState):
        response = model.with_structured_output(Joke).invoke(joke_prompt.format(subject=state["subject"]))
        return {"jokes": [response.joke]}

    def best_joke(state: OverallState):
        jokes = "\n\n".join(state["jokes"])
        response = model.with_structured_output(BestJoke).invoke(
            best_joke_prompt.format(topic=state["topic"], jokes=jokes))
        return {"best_selected_joke": state["jokes"][response.id]}

    graph = E.StateGraph(OverallState)
    graph.add_node("generate_topics", generate_topics)
    graph.add_node("generate_joke", generate_joke)
    graph.add_node("best_joke", best_joke)
    graph.add_edge(E.START, "generate_topics")
    graph.add_conditional_edges("generate_topics", continue_to_jokes, ["generate_joke"])
    graph.add_edge("generate_joke", "best_joke")
    graph.add_edge("best_joke", E.END)
    return graph


def test_map_reduce_sends_a_joke_per_subject_and_picks_the_best(differential):
    """`for s in app.stream({"topic": "animals"}): print(s)`: the topics, a joke per `Send`
    (in any order: they run in parallel), the best one picked by index into `jokes`, which
    holds the jokes in `Send` order."""
    def scenario(E):
        model = _jokes_model()
        app = _jokes_graph(E, model).compile()
        with _printed() as lines:
            for s in app.stream({"topic": "animals"}):
                print(s)
        printed = (lines[0], sorted(lines[1:4]), lines[4:])
        calls = sorted(repr(c) for c in model.seen)
        return app.get_graph().draw_mermaid(), printed, calls

    ref = differential(scenario)
    assert ref[1][2] == ["{'best_joke': {'best_selected_joke': 'Why did the reptiles cross the road?'}}"]


def test_map_reduce_history_shows_the_send_tasks(differential):
    """The same graph with a checkpointer: the final state, and the history with the three
    `generate_joke` tasks (their `Send` args and results) of the fan-out step."""
    def scenario(E):
        app = _jokes_graph(E, _jokes_model()).compile(checkpointer=E.InMemorySaver())
        out = app.invoke({"topic": "animals"}, _cfg())
        return out, [snapshot_summary(s) for s in app.get_state_history(_cfg())]

    ref = differential(scenario)
    assert ref[0]["jokes"] == [f"Why did the {s} cross the road?" for s in ("mammals", "reptiles", "birds")]


# --- module 4: research assistant ------------------------------------------------------------


class Analyst(BaseModel):
    affiliation: str = Field(description="Primary affiliation of the analyst.")
    name: str = Field(description="Name of the analyst.")
    role: str = Field(description="Role of the analyst in the context of the topic.")
    description: str = Field(description="Description of the analyst focus, concerns, and motives.")

    @property
    def persona(self) -> str:
        return (f"Name: {self.name}\nRole: {self.role}\nAffiliation: {self.affiliation}\n"
                f"Description: {self.description}\n")


class Perspectives(BaseModel):
    analysts: list[Analyst] = Field(description="Comprehensive list of analysts with their roles and affiliations.")


class SearchQuery(BaseModel):
    search_query: str = Field(None, description="Search query for retrieval.")


ANALYSTS = [
    Analyst(affiliation="Tech Innovators Inc.", name="Emily Carter", role="Technology Adoption Specialist",
            description="Focuses on how LangGraph streamlines agent development."),
    Analyst(affiliation="Data Security Solutions", name="Raj Patel", role="Cybersecurity Analyst",
            description="Focuses on the security of agent frameworks."),
    Analyst(affiliation="GenAI Native", name="Sam Lee", role="Startup CEO",
            description="Focuses on speed to market for a startup."),
]

ANALYST_INSTRUCTIONS = """You are tasked with creating a set of AI analyst personas.
1. Research topic: {topic}
2. Editorial feedback: {human_analyst_feedback}
3. Pick the top {max_analysts} themes.
4. Assign one analyst to each theme."""

QUESTION_INSTRUCTIONS = """You are an analyst tasked with interviewing an expert.
Here is your topic of focus and set of goals: {goals}
When you are satisfied, complete the interview with: "Thank you so much for your help!\""""

ANSWER_INSTRUCTIONS = """You are an expert being interviewed by an analyst.
Here is analyst area of focus: {goals}.
To answer question, use this context:
{context}"""

SECTION_INSTRUCTIONS = """You are an expert technical writer.
Make your title engaging based upon the focus area of the analyst:
{focus}"""

REPORT_INSTRUCTIONS = """You are a technical writer creating a report on this overall topic: {topic}
Here are the memos from your analysts to build your report from:
{context}"""

INTRO_CONCLUSION_INSTRUCTIONS = """You are a technical writer finishing a report on {topic}
Here are the sections to reflect on for writing: {formatted_str_sections}"""

SEARCH_INSTRUCTIONS = SystemMessage(content="You will be given a conversation between an analyst and an expert. "
                                            "Convert the final question into a web search query.")


def _slug(text):
    return re.sub(r"[^a-z]+", "-", text.lower()).strip("-")


def _research_model():
    """The research assistant's `llm`: every answer a function of what it is sent."""
    def script(messages, tools):
        first = messages[0].content
        if first.startswith("You are an analyst tasked"):
            name = re.search(r"Name: (.+)", first).group(1)
            asked = sum(1 for m in messages[1:] if m.type == "ai" and m.name != "expert")
            if asked == 0:
                return AIMessage(f"I'm {name}. What is the biggest benefit of LangGraph?", id=f"{_slug(name)}-q1")
            if name == "Raj Patel":
                return AIMessage("Thank you so much for your help!", id=f"{_slug(name)}-q{asked + 1}")
            return AIMessage(f"{name} again: a concrete example, please?", id=f"{_slug(name)}-q{asked + 1}")
        if first.startswith("You are an expert being interviewed"):
            name = re.search(r"Name: (.+)", first).group(1)
            answered = sum(1 for m in messages if m.type == "ai" and m.name == "expert")
            return AIMessage(f"Answer {answered + 1} for {name}, from {first.count('<Document')} documents [1].",
                             id=f"{_slug(name)}-a{answered + 1}")
        if first.startswith("You are an expert technical writer"):
            focus = first.rsplit("\n", 1)[-1]
            context = messages[-1].content
            return AIMessage(f"## {focus}\n### Summary\nFrom {context.count('<Document')} documents [1].\n"
                             f"### Sources\n[1] https://news.example/1", id=f"section-{_slug(focus)}")
        if first.startswith("You are a technical writer creating a report"):
            return AIMessage(f"## Insights\nThe memos agree ({first.count('### Summary')} memos) [1].\n"
                             "## Sources\n[1] https://news.example/1", id="report")
        if first.startswith("You are a technical writer finishing"):
            part = messages[-1].content.rsplit(" ", 1)[-1]
            title = "# LangGraph\n" if part == "introduction" else ""
            return AIMessage(f"{title}## {part.title()}\nAbout {first.count('### Summary')} sections.", id=part)
        raise AssertionError(f"unexpected prompt: {first[:60]!r}")

    def structured(schema, messages):
        if schema is Perspectives:
            prompt = messages[0].content
            feedback = re.search(r"Editorial feedback: (.*)", prompt).group(1)
            count = int(re.search(r"Pick the top (\d+) themes", prompt).group(1))
            chosen = ANALYSTS[:2] + ([ANALYSTS[2]] if "startup" in feedback else [])
            return Perspectives(analysts=chosen[:count])
        assert schema is SearchQuery
        return SearchQuery(search_query=f"query: {messages[-1].content}")

    return _model(script, structured)


def _print_analysts(event):
    analysts = event.get("analysts", "")
    if analysts:
        for analyst in analysts:
            print(f"Name: {analyst.name}")
            print(f"Affiliation: {analyst.affiliation}")
            print(f"Role: {analyst.role}")
            print(f"Description: {analyst.description}")
            print("-" * 50)


def _analyst_nodes(llm):
    def create_analysts(state):
        structured_llm = llm.with_structured_output(Perspectives)
        system_message = ANALYST_INSTRUCTIONS.format(
            topic=state["topic"], human_analyst_feedback=state.get("human_analyst_feedback", ""),
            max_analysts=state["max_analysts"])
        analysts = structured_llm.invoke([SystemMessage(content=system_message)]
                                         + [HumanMessage(content="Generate the set of analysts.")])
        return {"analysts": analysts.analysts}

    def human_feedback(state):
        """No-op node that should be interrupted on."""
        pass

    return create_analysts, human_feedback


TOPIC = "The benefits of adopting LangGraph as an agent framework"


def test_analysts_are_revised_with_human_feedback_before_a_breakpoint(differential):
    """`interrupt_before=["human_feedback"]`: the run pauses after the analysts are made;
    `update_state(..., as_node="human_feedback")` with feedback loops back to
    `create_analysts`, with `None` ends; what each streamed event prints, `.next`, the
    configs `update_state` returns, the history."""
    def scenario(E):
        llm = _research_model()
        create_analysts, human_feedback = _analyst_nodes(llm)

        class GenerateAnalystsState(TypedDict):
            topic: str
            max_analysts: int
            human_analyst_feedback: str
            analysts: list[Analyst]

        def should_continue(state: GenerateAnalystsState):
            if state.get("human_analyst_feedback", None):
                return "create_analysts"
            return E.END

        builder = E.StateGraph(GenerateAnalystsState)
        builder.add_node("create_analysts", create_analysts)
        builder.add_node("human_feedback", human_feedback)
        builder.add_edge(E.START, "create_analysts")
        builder.add_edge("create_analysts", "human_feedback")
        builder.add_conditional_edges("human_feedback", should_continue, ["create_analysts", E.END])
        graph = builder.compile(interrupt_before=["human_feedback"], checkpointer=E.InMemorySaver())
        thread = _cfg("1")
        out = [graph.get_graph(xray=1).draw_mermaid()]
        with _printed() as lines:
            for event in graph.stream({"topic": TOPIC, "max_analysts": 3}, thread, stream_mode="values"):
                _print_analysts(event)
        out += [lines, graph.get_state(thread).next]
        out.append(graph.update_state(thread, {"human_analyst_feedback": "Add in someone from a startup"},
                                      as_node="human_feedback"))
        with _printed() as lines:
            for event in graph.stream(None, thread, stream_mode="values"):
                _print_analysts(event)
        out.append(lines)
        out.append(graph.update_state(thread, {"human_analyst_feedback": None}, as_node="human_feedback"))
        with _printed() as lines:
            for event in graph.stream(None, thread, stream_mode="updates"):
                print("--Node--")
                print(next(iter(event.keys())))
        final_state = graph.get_state(thread)
        out += [lines, final_state.next, final_state.values.get("analysts"),
                [snapshot_summary(s) for s in graph.get_state_history(thread)], llm.seen]
        return out

    ref = differential(scenario)
    assert ref[4][-5:] == ["Name: Sam Lee", "Affiliation: GenAI Native", "Role: Startup CEO",
                           "Description: Focuses on speed to market for a startup.", "-" * 50]
    assert ref[6] == []  # approved: the run ends without running a node, as in the notebook


def _interview_builder(E, llm):
    class InterviewState(E.MessagesState):
        max_num_turns: int
        context: Annotated[list, operator.add]
        analyst: Analyst
        interview: str
        sections: list

    def generate_question(state: InterviewState):
        system_message = QUESTION_INSTRUCTIONS.format(goals=state["analyst"].persona)
        question = llm.invoke([SystemMessage(content=system_message)] + state["messages"])
        return {"messages": [question]}

    def search_web(state: InterviewState):
        search_query = llm.with_structured_output(SearchQuery).invoke([SEARCH_INSTRUCTIONS] + state["messages"])
        data = web_search(search_query.search_query)
        search_docs = data.get("results", data)
        formatted = "\n\n---\n\n".join(
            f'<Document href="{doc["url"]}"/>\n{doc["content"]}\n</Document>' for doc in search_docs)
        return {"context": [formatted]}

    def search_wikipedia(state: InterviewState):
        search_query = llm.with_structured_output(SearchQuery).invoke([SEARCH_INSTRUCTIONS] + state["messages"])
        search_docs = wikipedia_load(search_query.search_query, load_max_docs=2)
        formatted = "\n\n---\n\n".join(
            f'<Document source="{doc.metadata["source"]}" page="{doc.metadata.get("page", "")}"/>\n'
            f'{doc.page_content}\n</Document>' for doc in search_docs)
        return {"context": [formatted]}

    def generate_answer(state: InterviewState):
        system_message = ANSWER_INSTRUCTIONS.format(goals=state["analyst"].persona, context=state["context"])
        answer = llm.invoke([SystemMessage(content=system_message)] + state["messages"])
        answer.name = "expert"
        return {"messages": [answer]}

    def save_interview(state: InterviewState):
        return {"interview": get_buffer_string(state["messages"])}

    def route_messages(state: InterviewState, name: str = "expert"):
        messages = state["messages"]
        max_num_turns = state.get("max_num_turns", 2)
        num_responses = len([m for m in messages if isinstance(m, AIMessage) and m.name == name])
        if num_responses >= max_num_turns:
            return "save_interview"
        last_question = messages[-2]
        if "Thank you so much for your help" in last_question.content:
            return "save_interview"
        return "ask_question"

    def write_section(state: InterviewState):
        system_message = SECTION_INSTRUCTIONS.format(focus=state["analyst"].description)
        section = llm.invoke([SystemMessage(content=system_message)]
                             + [HumanMessage(content=f"Use this source to write your section: {state['context']}")])
        return {"sections": [section.content]}

    interview_builder = E.StateGraph(InterviewState)
    interview_builder.add_node("ask_question", generate_question)
    interview_builder.add_node("search_web", search_web)
    interview_builder.add_node("search_wikipedia", search_wikipedia)
    interview_builder.add_node("answer_question", generate_answer)
    interview_builder.add_node("save_interview", save_interview)
    interview_builder.add_node("write_section", write_section)
    interview_builder.add_edge(E.START, "ask_question")
    interview_builder.add_edge("ask_question", "search_web")
    interview_builder.add_edge("ask_question", "search_wikipedia")
    interview_builder.add_edge("search_web", "answer_question")
    interview_builder.add_edge("search_wikipedia", "answer_question")
    interview_builder.add_conditional_edges("answer_question", route_messages, ["ask_question", "save_interview"])
    interview_builder.add_edge("save_interview", "write_section")
    interview_builder.add_edge("write_section", E.END)
    return interview_builder


def test_one_interview_runs_as_its_own_graph_with_a_checkpointer(differential):
    """The interview graph compiled with a saver and `.with_config(run_name=...)`, invoked
    for one analyst (three turns) and another who ends early with "Thank you so much for
    your help!": the section, the transcript, the thread's state and history."""
    def scenario(E):
        llm = _research_model()
        interview_graph = _interview_builder(E, llm).compile(checkpointer=E.InMemorySaver()).with_config(
            run_name="Conduct Interviews")
        out = [interview_graph.get_graph().draw_mermaid()]
        for tid, analyst in (("1", ANALYSTS[0]), ("2", ANALYSTS[1])):
            messages = [HumanMessage(f"So you said you were writing an article on {TOPIC}?", id=f"h{tid}")]
            interview = interview_graph.invoke({"analyst": analyst, "messages": messages, "max_num_turns": 3},
                                               _cfg(tid))
            out += [interview["sections"][0], interview["interview"], interview,
                    _hist(interview_graph, _cfg(tid))]
        return out, sorted(repr(c) for c in llm.seen)

    ref = differential(scenario)
    assert ref[0][2].count("AI: Answer") == 3 and ref[0][6].count("AI: Answer") == 2


def test_standalone_interview_graph_reused_as_the_send_target(differential):
    """A learner's shortcut: the interview graph compiled with its own saver and
    `.with_config(run_name=...)` for the standalone cell is the node `Send` targets. Its
    standalone thread keeps its own state; the parent's runs save the interviews under the
    parent's saver, one namespace per `Send`, as on LangGraph."""
    def scenario(E):
        llm = _research_model()
        interview_graph = _interview_builder(E, llm).compile(checkpointer=E.InMemorySaver()).with_config(
            run_name="Conduct Interviews")
        create_analysts, _ = _analyst_nodes(llm)

        class State(TypedDict):
            topic: str
            max_analysts: int
            analysts: list[Analyst]
            sections: Annotated[list, operator.add]

        def initiate_all_interviews(state: State):
            return [E.Send("conduct_interview", {"analyst": analyst, "messages": [
                HumanMessage(f"So you said you were writing an article on {state['topic']}?", id=f"s{i}")]})
                for i, analyst in enumerate(state["analysts"])]

        builder = E.StateGraph(State)
        builder.add_node("create_analysts", create_analysts)
        builder.add_node("conduct_interview", interview_graph)
        builder.add_edge(E.START, "create_analysts")
        builder.add_conditional_edges("create_analysts", initiate_all_interviews, ["conduct_interview"])
        builder.add_edge("conduct_interview", E.END)
        graph = builder.compile(checkpointer=E.InMemorySaver())
        thread = _cfg("1")
        alone = interview_graph.invoke({"analyst": ANALYSTS[0], "messages": [HumanMessage("Hi!", id="h1")],
                                        "max_num_turns": 1}, thread)
        updates = collect(lambda: graph.stream({"topic": TOPIC, "max_analysts": 2}, thread, stream_mode="updates"))
        standalone = interview_graph.get_state(thread)

        def namespaces(saver):
            found: dict = {}
            for c in saver.list(None):
                ns = c.config["configurable"]["checkpoint_ns"]
                found.setdefault(ns.split(":")[0], set()).add(ns)
            return {k: len(v) for k, v in sorted(found.items())}

        return (graph.get_graph(xray=1).draw_mermaid(), alone["sections"],
                _in_steps(updates, lambda u: 0 if "create_analysts" in u else 1),
                graph.get_state(thread).values, snapshot_summary(standalone),
                len(list(interview_graph.get_state_history(thread))),
                namespaces(graph.checkpointer), namespaces(interview_graph.checkpointer))

    ref = differential(scenario)
    assert ref[-2] == {"": 1, "conduct_interview": 2} and ref[-1] == {"": 1}


def _research_graph(E, llm):
    create_analysts, human_feedback = _analyst_nodes(llm)
    interview_builder = _interview_builder(E, llm)

    class ResearchGraphState(TypedDict):
        topic: str
        max_analysts: int
        human_analyst_feedback: str
        analysts: list[Analyst]
        sections: Annotated[list, operator.add]
        introduction: str
        content: str
        conclusion: str
        final_report: str

    def initiate_all_interviews(state: ResearchGraphState):
        if state.get("human_analyst_feedback"):
            return "create_analysts"
        topic = state["topic"]
        return [E.Send("conduct_interview", {"analyst": analyst, "messages": [HumanMessage(
            content=f"So you said you were writing an article on {topic}?", id=f"start-{_slug(analyst.name)}")]})
            for analyst in state["analysts"]]

    def formatted(state):
        return "\n\n".join([f"{section}" for section in state["sections"]])

    def write_report(state: ResearchGraphState):
        system_message = REPORT_INSTRUCTIONS.format(topic=state["topic"], context=formatted(state))
        report = llm.invoke([SystemMessage(content=system_message)]
                            + [HumanMessage(content="Write a report based upon these memos.")])
        return {"content": report.content}

    def write_introduction(state: ResearchGraphState):
        instructions = INTRO_CONCLUSION_INSTRUCTIONS.format(topic=state["topic"],
                                                            formatted_str_sections=formatted(state))
        intro = llm.invoke([instructions] + [HumanMessage(content="Write the report introduction")])
        return {"introduction": intro.content}

    def write_conclusion(state: ResearchGraphState):
        instructions = INTRO_CONCLUSION_INSTRUCTIONS.format(topic=state["topic"],
                                                            formatted_str_sections=formatted(state))
        conclusion = llm.invoke([instructions] + [HumanMessage(content="Write the report conclusion")])
        return {"conclusion": conclusion.content}

    def finalize_report(state: ResearchGraphState):
        content = state["content"]
        if content.startswith("## Insights"):
            content = content.strip("## Insights")  # noqa: B005 - as the lesson writes it
        if "## Sources" in content:
            try:
                content, sources = content.split("\n## Sources\n")
            except ValueError:
                sources = None
        else:
            sources = None
        final_report = state["introduction"] + "\n\n---\n\n" + content + "\n\n---\n\n" + state["conclusion"]
        if sources is not None:
            final_report += "\n\n## Sources\n" + sources
        return {"final_report": final_report}

    builder = E.StateGraph(ResearchGraphState)
    builder.add_node("create_analysts", create_analysts)
    builder.add_node("human_feedback", human_feedback)
    builder.add_node("conduct_interview", interview_builder.compile())
    builder.add_node("write_report", write_report)
    builder.add_node("write_introduction", write_introduction)
    builder.add_node("write_conclusion", write_conclusion)
    builder.add_node("finalize_report", finalize_report)
    builder.add_edge(E.START, "create_analysts")
    builder.add_edge("create_analysts", "human_feedback")
    builder.add_conditional_edges("human_feedback", initiate_all_interviews, ["create_analysts", "conduct_interview"])
    builder.add_edge("conduct_interview", "write_report")
    builder.add_edge("conduct_interview", "write_introduction")
    builder.add_edge("conduct_interview", "write_conclusion")
    builder.add_edge(["write_conclusion", "write_report", "write_introduction"], "finalize_report")
    builder.add_edge("finalize_report", E.END)
    return builder.compile(interrupt_before=["human_feedback"], checkpointer=E.InMemorySaver())


_REPORT_STEP = {"conduct_interview": 0, "write_report": 1, "write_introduction": 1, "write_conclusion": 1,
                "finalize_report": 2}


def test_research_assistant_runs_an_interview_per_analyst_and_writes_the_report(differential):
    """The whole assistant as the notebook drives it: analysts, feedback, revised analysts,
    approval with `None`, then `stream(None, stream_mode="updates")` printing the nodes: three
    `conduct_interview` (Send, subgraphs in parallel), the three writers, `finalize_report`.
    The final report, the graph drawn with `xray=1`, the parent's history."""
    def scenario(E):
        llm = _research_model()
        graph = _research_graph(E, llm)
        thread = _cfg("1")
        out = [graph.get_graph(xray=1).draw_mermaid()]
        with _printed() as lines:
            for event in graph.stream({"topic": TOPIC, "max_analysts": 3}, thread, stream_mode="values"):
                _print_analysts(event)
        out.append(lines)
        out.append(graph.update_state(thread, {"human_analyst_feedback": "Add in the CEO of gen ai native startup"},
                                      as_node="human_feedback"))
        with _printed() as lines:
            for event in graph.stream(None, thread, stream_mode="values"):
                _print_analysts(event)
        out.append(lines)
        out.append(graph.update_state(thread, {"human_analyst_feedback": None}, as_node="human_feedback"))
        with _printed() as lines:
            events = []
            for event in graph.stream(None, thread, stream_mode="updates"):
                events.append(event)
                print("--Node--")
                print(next(iter(event.keys())))
        printed = [tuple(lines[i:i + 2]) for i in range(0, len(lines), 2)]
        out += [_in_steps(events, lambda e: _REPORT_STEP[next(iter(e))]),
                _in_steps(printed, lambda p: _REPORT_STEP[p[1]])]
        final_state = graph.get_state(thread)
        out += [final_state.next, final_state.values.get("final_report"),
                [snapshot_summary(s) for s in graph.get_state_history(thread)]]
        return out, sorted(repr(c) for c in llm.seen)

    ref = differential(scenario)
    report = ref[0][8]
    assert report.startswith("# LangGraph\n## Introduction\nAbout 3 sections.") and "## Sources\n[1]" in report


def test_research_interviews_streamed_with_subgraphs(differential):
    """The learner approves the first analysts and streams the rest with `subgraphs=True`
    (updates and values): each interview's steps under its own namespace, the parallel
    searches inside each as one step; then `get_state(subgraphs=True)` at the end."""
    def scenario(E):
        llm = _research_model()
        graph = _research_graph(E, llm)
        thread = _cfg("7")
        first = collect(lambda: graph.stream({"topic": TOPIC, "max_analysts": 2}, thread, stream_mode="updates"))
        graph.update_state(thread, {"human_analyst_feedback": None}, as_node="human_feedback")
        chunks = collect(lambda: graph.stream(None, thread, stream_mode=["updates", "values"], subgraphs=True))
        return (first, _per_source(chunks, inner_parallel=True),
                snapshot_summary(graph.get_state(thread, subgraphs=True)))

    ref = differential(scenario)
    assert len(ref[1][1]) == 2  # one namespace per interview


# --- module 5: memory store ------------------------------------------------------------------


MODEL_SYSTEM_MESSAGE = """You are a helpful assistant with memory that provides information about the user.
Here is the memory (it may be empty): {memory}"""

CREATE_MEMORY_INSTRUCTION = """"You are collecting information about the user to personalize your responses.
CURRENT USER INFORMATION:
{memory}
Based on the chat history below, please update the user information:"""


def _turns(graph, config, *texts):
    """The notebook's cells: stream values, `chunk["messages"][-1].pretty_print()`."""
    shown = []
    for text in texts:
        with _printed() as lines:
            chunks = []
            for chunk in graph.stream({"messages": [HumanMessage(content=text)]}, config, stream_mode="values"):
                chunks.append(chunk)
                chunk["messages"][-1].pretty_print()
        shown.append((lines, chunks))
    return shown


def _counter(prefix):
    n = iter(range(1, 1000))
    return lambda: f"{prefix}{next(n)}"


def test_chatbot_saves_a_memory_per_user_in_the_store(differential):
    """`call_model` reads `("memory", user_id)` from the store, `write_memory` rewrites it
    after each turn (both take `config` and `store: BaseStore`); a second thread of the same
    user starts with the memory; `get_state` of thread 1 without `user_id`; the store's
    item as `.dict()` shows it."""
    def scenario(E):
        rid = _counter("r")

        def script(messages, tools):
            first = messages[0].content
            humans = [m.content for m in messages if m.type == "human"]
            if first.startswith('"You are collecting'):
                return AIMessage("**Updated User Information:**\n" + "\n".join(f"- {h}" for h in humans), id=rid())
            memory = first.split("(it may be empty): ", 1)[1]
            return AIMessage(f"You said {humans[-1]!r}; I remember: {memory.splitlines()[-1]}", id=rid())

        model = _model(script)

        def call_model(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
            user_id = config["configurable"]["user_id"]
            existing_memory = store.get(("memory", user_id), "user_memory")
            content = existing_memory.value.get("memory") if existing_memory else "No existing memory found."
            response = model.invoke([SystemMessage(content=MODEL_SYSTEM_MESSAGE.format(memory=content))]
                                    + state["messages"])
            return {"messages": response}

        def write_memory(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
            user_id = config["configurable"]["user_id"]
            namespace = ("memory", user_id)
            existing_memory = store.get(namespace, "user_memory")
            content = existing_memory.value.get("memory") if existing_memory else "No existing memory found."
            new_memory = model.invoke([SystemMessage(content=CREATE_MEMORY_INSTRUCTION.format(memory=content))]
                                      + state["messages"])
            store.put(namespace, "user_memory", {"memory": new_memory.content})

        builder = E.StateGraph(E.MessagesState)
        builder.add_node("call_model", call_model)
        builder.add_node("write_memory", write_memory)
        builder.add_edge(E.START, "call_model")
        builder.add_edge("call_model", "write_memory")
        builder.add_edge("write_memory", E.END)
        across_thread_memory = InMemoryStore()
        graph = builder.compile(checkpointer=E.InMemorySaver(), store=across_thread_memory)
        out = [graph.get_graph(xray=1).draw_mermaid()]
        out.append(_turns(graph, _cfg("1", user_id="1"), "Hi, my name is Lance", "I like to bike around San Francisco"))
        with _printed() as lines:
            for m in graph.get_state(_cfg("1")).values["messages"]:
                m.pretty_print()
        out.append(lines)
        out.append(across_thread_memory.get(("memory", "1"), "user_memory").dict())
        out.append(_turns(graph, _cfg("2", user_id="1"), "Hi! Where would you recommend that I go biking?"))
        out += [_items(across_thread_memory), _hist(graph, _cfg("2")),
                model.seen]
        return out

    ref = differential(scenario)
    assert ref[3]["value"]["memory"].endswith("- I like to bike around San Francisco")


# --- module 5: profile and collection schemas ------------------------------------------------


PROFILE_SYSTEM_MESSAGE = """You are a helpful assistant with memory that provides information about the user.
Here is the memory (it may be empty): {memory}"""


def _facts(humans):
    """What the scripted model extracts from the user's words."""
    interests = [word for key, word in (("bike", "biking"), ("bakeries", "bakeries"), ("croissant", "croissants"))
                 if any(key in h for h in humans)]
    return {"user_name": "Lance" if any("Lance" in h for h in humans) else "unknown", "interests": interests}


def _chat_reply(messages, rid):
    memory = messages[0].content.split("(it may be empty): ", 1)[-1]
    return AIMessage(f"Re {messages[-1].content!r} with memory {memory!r}", id=rid())


def _profile_chatbot(E, model, write_memory):
    def call_model(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
        existing_memory = store.get(("memory", config["configurable"]["user_id"]), "user_memory")
        if existing_memory and existing_memory.value:
            memory_dict = existing_memory.value
            formatted_memory = (f"Name: {memory_dict.get('user_name', 'Unknown')}\n"
                                f"Location: {memory_dict.get('user_location', 'Unknown')}\n"
                                f"Interests: {', '.join(memory_dict.get('interests', []))}")
        else:
            formatted_memory = None
        response = model.invoke([SystemMessage(content=PROFILE_SYSTEM_MESSAGE.format(memory=formatted_memory))]
                                + state["messages"])
        return {"messages": response}

    builder = E.StateGraph(E.MessagesState)
    builder.add_node("call_model", call_model)
    builder.add_node("write_memory", write_memory)
    builder.add_edge(E.START, "call_model")
    builder.add_edge("call_model", "write_memory")
    builder.add_edge("write_memory", E.END)
    store = InMemoryStore()
    return builder.compile(checkpointer=E.InMemorySaver(), store=store), store


def test_profile_saved_with_structured_output_of_a_typed_dict(differential):
    """`model.with_structured_output(UserProfile)` (a TypedDict) returns a dict that
    `write_memory` puts in the store as is; the next thread's system prompt shows it."""
    def scenario(E):
        class UserProfile(TypedDict):
            """User profile schema with typed fields"""
            user_name: str
            interests: list[str]

        rid = _counter("r")
        model = _model(lambda messages, tools: _chat_reply(messages, rid),
                       lambda schema, messages: _facts([m.content for m in messages if m.type == "human"]))
        model_with_structure = model.with_structured_output(UserProfile)

        def write_memory(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
            namespace = ("memory", config["configurable"]["user_id"])
            existing_memory = store.get(namespace, "user_memory")
            formatted_memory = None
            if existing_memory and existing_memory.value:
                formatted_memory = f"Name: {existing_memory.value.get('user_name', 'Unknown')}"
            system_msg = f"Create or update a user profile memory. Existing: {formatted_memory}"
            new_memory = model_with_structure.invoke([SystemMessage(content=system_msg)] + state["messages"])
            store.put(namespace, "user_memory", new_memory)

        graph, store = _profile_chatbot(E, model, write_memory)
        out = [_turns(graph, _cfg("1", user_id="1"),
                      "Hi, my name is Lance and I like to bike around San Francisco and eat at bakeries.")]
        out.append(store.get(("memory", "1"), "user_memory").value)
        out.append(_turns(graph, _cfg("2", user_id="1"), "What should I do this weekend?"))
        return out, _items(store), model.seen

    ref = differential(scenario)
    assert ref[0][1] == {"user_name": "Lance", "interests": ["biking", "bakeries"]}


class UserProfile(BaseModel):
    """Profile of a user"""

    user_name: str = Field(description="The user's preferred name")
    user_location: str = Field(description="The user's location")
    interests: list = Field(description="A list of the user's interests")


def test_profile_extracted_then_patched_with_trustcall(differential):
    """`create_extractor(model, tools=[UserProfile], tool_choice="UserProfile")` in
    `write_memory`: the first turn extracts the profile; later turns pass it as
    `{"UserProfile": value}`, so trustcall asks for a `PatchDoc` and applies it; thread 2 sees
    the profile in its system prompt."""
    def scenario(E):
        from trustcall import create_extractor

        rid = _counter("r")
        cid = _counter("call_")

        def script(messages, tools):
            if messages[0].content.startswith("You are a helpful assistant"):
                return _chat_reply(messages, rid)
            facts = _facts([m.content for m in messages if m.type == "human"])
            location = "San Francisco" if any("San Francisco" in m.content for m in messages) else "unknown"
            if tools == ["PatchDoc"]:
                patches = [{"op": "replace", "path": "/interests", "value": facts["interests"]},
                           {"op": "replace", "path": "/user_location", "value": location}]
                return _calls(rid(), ("PatchDoc", {"json_doc_id": "UserProfile", "planned_edits": "new facts",
                                                   "patches": patches}, cid()))
            return _calls(rid(), ("UserProfile", {**facts, "user_location": location}, cid()))

        model = _model(script)
        trustcall_extractor = create_extractor(model, tools=[UserProfile], tool_choice="UserProfile")
        instruction = "Create or update the memory (JSON doc) to incorporate information from the following conversation:"

        def write_memory(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
            namespace = ("memory", config["configurable"]["user_id"])
            existing_memory = store.get(namespace, "user_memory")
            existing_profile = {"UserProfile": existing_memory.value} if existing_memory else None
            result = trustcall_extractor.invoke({"messages": [SystemMessage(content=instruction)] + state["messages"],
                                                 "existing": existing_profile})
            store.put(namespace, "user_memory", result["responses"][0].model_dump())

        graph, store = _profile_chatbot(E, model, write_memory)
        out = [graph.get_graph(xray=1).draw_mermaid()]
        config = _cfg("1", user_id="1")
        out.append(_turns(graph, config, "Hi, my name is Lance", "I like to bike around San Francisco"))
        out.append(store.get(("memory", "1"), "user_memory").dict())
        out.append(_turns(graph, config, "I also enjoy going to bakeries"))
        out.append(_turns(graph, _cfg("2", user_id="1"), "What bakeries do you recommend for me?"))
        out += [_items(store), _hist(graph, config), model.seen]
        return out

    ref = differential(scenario)
    assert ref[2]["value"] == {"user_name": "Lance", "user_location": "San Francisco", "interests": ["biking"]}


class Memory(BaseModel):
    content: str = Field(description="The main content of the memory.")


def _instances(messages, schema):
    """The existing documents trustcall shows the model: `{id: text}`."""
    return dict(re.findall(rf'<instance id=(\S+) schema_type="{schema}">\n(.*?)\n</instance>', messages[0].content,
                           re.S))


def test_memory_collection_inserted_and_patched_with_trustcall(differential):
    """`enable_inserts=True` over the store's items `(key, "Memory", value)`: new memories
    are put under fresh uuids, a `PatchDoc` updates one in place under its key
    (`json_doc_id` in `response_metadata`); `merge_message_runs` before the call."""
    def scenario(E):
        from trustcall import create_extractor

        rid = _counter("r")
        cid = _counter("call_")

        def script(messages, tools):
            first = messages[0].content
            if first.startswith("You are a helpful chatbot"):
                return _chat_reply(messages, rid)
            last = messages[-2].content if messages[-1].type == "ai" else messages[-1].content
            existing = _instances(messages, "Memory")
            if "enjoy" in last:
                bike = next(k for k, v in existing.items() if "bike" in v)
                return _calls(rid(), ("PatchDoc", {"json_doc_id": bike, "planned_edits": "add bakeries", "patches": [
                    {"op": "replace", "path": "/content", "value": "User likes to bike around SF and visit bakeries."}]},
                    cid()))
            return _calls(rid(), ("Memory", {"content": f"User said: {last}"}, cid()))

        model = _model(script)
        trustcall_extractor = create_extractor(model, tools=[Memory], tool_choice="Memory", enable_inserts=True)
        instruction = "Reflect on following interaction. Use the provided tools to retain any necessary memories."

        def call_model(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
            memories = store.search(("memories", config["configurable"]["user_id"]))
            info = "\n".join(f"- {mem.value['content']}" for mem in memories)
            system_msg = f"You are a helpful chatbot.\nCurrent Memory (it may be empty): {info}"
            return {"messages": model.invoke([SystemMessage(content=system_msg)] + state["messages"])}

        def write_memory(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
            namespace = ("memories", config["configurable"]["user_id"])
            existing_items = store.search(namespace)
            existing_memories = ([(item.key, "Memory", item.value) for item in existing_items]
                                 if existing_items else None)
            updated_messages = list(merge_message_runs(messages=[SystemMessage(content=instruction)]
                                                       + state["messages"]))
            result = trustcall_extractor.invoke({"messages": updated_messages, "existing": existing_memories})
            for r, rmeta in zip(result["responses"], result["response_metadata"]):
                store.put(namespace, rmeta.get("json_doc_id", str(uuid.uuid4())), r.model_dump(mode="json"))

        builder = E.StateGraph(E.MessagesState)
        builder.add_node("call_model", call_model)
        builder.add_node("write_memory", write_memory)
        builder.add_edge(E.START, "call_model")
        builder.add_edge("call_model", "write_memory")
        builder.add_edge("write_memory", E.END)
        store = InMemoryStore()
        graph = builder.compile(checkpointer=E.InMemorySaver(), store=store)
        config = _cfg("1", user_id="1")
        out = [_turns(graph, config, "Hi, my name is Lance", "I like to bike around San Francisco")]
        with _printed() as lines:
            for m in store.search(("memories", "1")):
                print(m.dict())
        out.append(lines)
        out.append(_turns(graph, config, "I also enjoy going to bakeries"))
        out.append(_turns(graph, _cfg("2", user_id="1"), "What bakeries do you recommend for me?"))
        out += [_items(store), model.seen]
        return out

    ref = differential(scenario)
    assert [item["value"]["content"] for item in ref[4]] == [
        "User said: Hi, my name is Lance", "User likes to bike around SF and visit bakeries.",
        "User said: What bakeries do you recommend for me?"]


# --- module 5: task_mAIstro, the memory agent -------------------------------------------------


class Spy:
    """The lesson's listener: collects the tool calls of every chat model run inside."""

    def __init__(self):
        self.called_tools = []

    def __call__(self, run):
        q = [run]
        while q:
            r = q.pop()
            if r.child_runs:
                q.extend(r.child_runs)
            if r.run_type == "chat_model":
                self.called_tools.append(r.outputs["generations"][0][0]["message"]["kwargs"]["tool_calls"])


def extract_tool_info(tool_calls, schema_name="Memory"):
    """The lesson's summary of what trustcall did."""
    changes = []
    for call_group in tool_calls:
        for call in call_group:
            if call["name"] == "PatchDoc":
                changes.append({"type": "update", "doc_id": call["args"]["json_doc_id"],
                                "planned_edits": call["args"]["planned_edits"],
                                "value": call["args"]["patches"][0]["value"]})
            elif call["name"] == schema_name:
                changes.append({"type": "new", "value": call["args"]})
    result_parts = []
    for change in changes:
        if change["type"] == "update":
            result_parts.append(f"Document {change['doc_id']} updated:\nPlan: {change['planned_edits']}\n"
                                f"Added content: {change['value']}")
        else:
            result_parts.append(f"New {schema_name} created:\nContent: {change['value']}")
    return "\n\n".join(result_parts)


class UpdateMemory(TypedDict):
    """Decision on what memory type to update"""

    update_type: Literal["user", "todo", "instructions"]


class Profile(BaseModel):
    """This is the profile of the user you are chatting with"""

    name: Optional[str] = Field(description="The user's name", default=None)
    location: Optional[str] = Field(description="The user's location", default=None)
    job: Optional[str] = Field(description="The user's job", default=None)
    connections: list[str] = Field(description="Personal connections of the user", default_factory=list)
    interests: list[str] = Field(description="Interests that the user has", default_factory=list)


class ToDo(BaseModel):
    task: str = Field(description="The task to be completed.")
    time_to_complete: Optional[int] = Field(description="Estimated time to complete the task (minutes).")
    deadline: Optional[datetime] = Field(description="When the task needs to be completed by", default=None)
    solutions: list[str] = Field(description="List of specific, actionable solutions", min_length=1,
                                 default_factory=list)
    status: Literal["not started", "in progress", "done", "archived"] = Field(
        description="Current status of the task", default="not started")


MAISTRO_SYSTEM_MESSAGE = """You are a helpful chatbot, helping the user keep track of their ToDo list.
<user_profile>
{user_profile}
</user_profile>
<todo>
{todo}
</todo>
<instructions>
{instructions}
</instructions>"""

TRUSTCALL_INSTRUCTION = """Reflect on following interaction.
Use parallel tool calling to handle updates and insertions simultaneously.
System Time: {time}"""

CREATE_INSTRUCTIONS = """Reflect on the following interaction.
Your current instructions are:
<current_instructions>
{current_instructions}
</current_instructions>"""


def _maistro_model():
    rid = _counter("m")
    cid = _counter("call_")

    def script(messages, tools):
        first = messages[0].content
        humans = [m.content for m in messages if m.type == "human"]
        if first.startswith("You are a helpful chatbot"):
            last = messages[-1]
            if last.type == "tool":
                return AIMessage(f"Done ({last.content.splitlines()[0]}).", id=rid())
            kind = ("user" if "name is" in last.content or "I work" in last.content
                    else "instructions" if last.content.startswith("When creating")
                    else "todo" if "need to" in last.content or "asked me" in last.content else None)
            if kind is None:
                todos = re.findall(r"'task': '([^']*)'", first)
                return AIMessage(f"You could do: {'; '.join(todos)}", id=rid())
            return _calls(rid(), ("UpdateMemory", {"update_type": kind}, cid()))
        if first.startswith("Reflect on the following interaction"):
            return AIMessage(f"<current_instructions>\n{humans[-2]}\n</current_instructions>", id=rid())
        assert first.startswith("Reflect on following interaction"), first
        if tools == ["Profile"]:
            return _calls(rid(), ("Profile", {"name": "Lance", "location": "SF", "connections": ["wife", "daughter"]},
                                  cid()))
        if tools == ["PatchDoc"]:
            (doc_id, _), = _instances(messages, "Profile").items()
            return _calls(rid(), ("PatchDoc", {"json_doc_id": doc_id, "planned_edits": "add job", "patches": [
                {"op": "replace", "path": "/job", "value": "software engineer"}]}, cid()))
        if tools == ["ToDo"]:
            return _calls(rid(), ("ToDo", {"task": "Book swim lessons for the baby.", "time_to_complete": 30,
                                           "solutions": ["Check local swim schools"]}, cid()))
        existing = _instances(messages, "ToDo")
        swim = next(k for k, v in existing.items() if "swim" in v)
        if "November" in humans[-1]:
            return _calls(rid(), ("PatchDoc", {"json_doc_id": swim, "planned_edits": "add the deadline", "patches": [
                {"op": "replace", "path": "/deadline", "value": "2024-11-30T23:59:59"}]}, cid()))
        return _calls(rid(), ("ToDo", {"task": "Fix the jammed electric Yale lock.", "time_to_complete": 60,
                                       "solutions": ["Call a local locksmith"]}, cid()),
                      ("PatchDoc", {"json_doc_id": swim, "planned_edits": "local vendors", "patches": [
                          {"op": "add", "path": "/solutions/-", "value": "La Petite Baleen Swim School"}]}, cid()))

    return _model(script)


@dataclass(kw_only=True)
class Configuration:
    """The configurable fields for the chatbot (the course's Studio version)."""

    user_id: str = "default-user"

    @classmethod
    def from_runnable_config(cls, config: Optional[RunnableConfig] = None) -> "Configuration":
        configurable = config["configurable"] if config and "configurable" in config else {}
        values = {f.name: configurable.get(f.name) for f in fields(cls) if f.init}
        return cls(**{k: v for k, v in values.items() if v})


def _maistro(E, model, *, studio=False):
    """task_mAIstro as in the notebook, or (`studio`) as in the course's Studio file:
    `StateGraph(MessagesState, config_schema=Configuration)`, the user id read with
    `Configuration.from_runnable_config(config)`, compiled without a checkpointer."""
    from trustcall import create_extractor

    profile_extractor = create_extractor(model, tools=[Profile], tool_choice="Profile")

    def _user(config):
        return Configuration.from_runnable_config(config).user_id if studio else config["configurable"]["user_id"]

    def task_mAIstro(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
        user_id = _user(config)
        memories = store.search(("profile", user_id))
        user_profile = memories[0].value if memories else None
        memories = store.search(("todo", user_id))
        todo = "\n".join(f"{mem.value}" for mem in memories)
        memories = store.search(("instructions", user_id))
        instructions = memories[0].value if memories else ""
        system_msg = MAISTRO_SYSTEM_MESSAGE.format(user_profile=user_profile, todo=todo, instructions=instructions)
        response = model.bind_tools([UpdateMemory], parallel_tool_calls=False).invoke(
            [SystemMessage(content=system_msg)] + state["messages"])
        return {"messages": [response]}

    def _existing(store, namespace, tool_name):
        existing_items = store.search(namespace)
        return [(item.key, tool_name, item.value) for item in existing_items] if existing_items else None

    def _instruction_and_history(state):
        formatted = TRUSTCALL_INSTRUCTION.format(time=datetime.now().isoformat())
        return list(merge_message_runs(messages=[SystemMessage(content=formatted)] + state["messages"][:-1]))

    def update_profile(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
        namespace = ("profile", _user(config))
        result = profile_extractor.invoke({"messages": _instruction_and_history(state),
                                           "existing": _existing(store, namespace, "Profile")})
        for r, rmeta in zip(result["responses"], result["response_metadata"]):
            store.put(namespace, rmeta.get("json_doc_id", str(uuid.uuid4())), r.model_dump(mode="json"))
        tool_calls = state["messages"][-1].tool_calls
        return {"messages": [{"role": "tool", "content": "updated profile", "tool_call_id": tool_calls[0]["id"]}]}

    def update_todos(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
        namespace = ("todo", _user(config))
        spy = Spy()
        todo_extractor = create_extractor(model, tools=[ToDo], tool_choice="ToDo",
                                          enable_inserts=True).with_listeners(on_end=spy)
        result = todo_extractor.invoke({"messages": _instruction_and_history(state),
                                        "existing": _existing(store, namespace, "ToDo")})
        for r, rmeta in zip(result["responses"], result["response_metadata"]):
            store.put(namespace, rmeta.get("json_doc_id", str(uuid.uuid4())), r.model_dump(mode="json"))
        tool_calls = state["messages"][-1].tool_calls
        todo_update_msg = extract_tool_info(spy.called_tools, "ToDo")
        return {"messages": [{"role": "tool", "content": todo_update_msg, "tool_call_id": tool_calls[0]["id"]}]}

    def update_instructions(state: E.MessagesState, config: RunnableConfig, store: BaseStore):
        namespace = ("instructions", _user(config))
        existing_memory = store.get(namespace, "user_instructions")
        system_msg = CREATE_INSTRUCTIONS.format(current_instructions=existing_memory.value if existing_memory else None)
        new_memory = model.invoke([SystemMessage(content=system_msg)] + state["messages"][:-1]
                                  + [HumanMessage(content="Please update the instructions based on the conversation")])
        store.put(namespace, "user_instructions", {"memory": new_memory.content})
        tool_calls = state["messages"][-1].tool_calls
        return {"messages": [{"role": "tool", "content": "updated instructions", "tool_call_id": tool_calls[0]["id"]}]}

    def route_message(state: E.MessagesState, config: RunnableConfig, store: BaseStore) -> Literal[
            E.END, "update_todos", "update_instructions", "update_profile"]:
        message = state["messages"][-1]
        if len(message.tool_calls) == 0:
            return E.END
        update_type = message.tool_calls[0]["args"]["update_type"]
        if update_type == "user":
            return "update_profile"
        if update_type == "todo":
            return "update_todos"
        if update_type == "instructions":
            return "update_instructions"
        raise ValueError

    builder = E.StateGraph(E.MessagesState, config_schema=Configuration) if studio else E.StateGraph(E.MessagesState)
    builder.add_node(task_mAIstro)
    builder.add_node(update_todos)
    builder.add_node(update_profile)
    builder.add_node(update_instructions)
    builder.add_edge(E.START, "task_mAIstro")
    builder.add_conditional_edges("task_mAIstro", route_message)
    builder.add_edge("update_todos", "task_mAIstro")
    builder.add_edge("update_profile", "task_mAIstro")
    builder.add_edge("update_instructions", "task_mAIstro")
    store = InMemoryStore()
    return builder.compile(checkpointer=None if studio else E.InMemorySaver(), store=store), store


def test_task_maistro_routes_each_update_and_keeps_memories_across_threads(differential):
    """The memory agent over six turns: the profile extracted, a ToDo created, instructions
    saved, a ToDo inserted while another is patched (the `Spy` sees both calls, and the
    tool message says so), a deadline patched; on a second thread the agent lists the
    ToDos from the store and the profile gets a `PatchDoc` under its uuid key."""
    def scenario(E):
        model = _maistro_model()
        graph, store = _maistro(E, model)
        out = [graph.get_graph(xray=1).draw_mermaid()]
        config = _cfg("1", user_id="Lance")
        out.append(_turns(graph, config, "My name is Lance. I live in SF with my wife. I have a 1 year old daughter.",
                          "My wife asked me to book swim lessons for the baby.",
                          "When creating or updating ToDo items, include specific local businesses / vendors."))
        with _printed() as lines:
            for memory in store.search(("instructions", "Lance")):
                print(memory.value)
        out.append(lines)
        out.append(_turns(graph, config, "I need to fix the jammed electric Yale lock on the door.",
                          "For the swim lessons, I need to get that done by end of November."))
        with _printed() as lines:
            for memory in store.search(("todo", "Lance")):
                print(memory.value)
        out.append(lines)
        config2 = _cfg("2", user_id="Lance")
        out.append(_turns(graph, config2, "I have 30 minutes, what tasks can I get done?",
                          "By the way, I work as a software engineer."))
        out += [_items(store), snapshot_summary(graph.get_state(config)), _hist(graph, config2),
                model.seen]
        return out

    ref = differential(scenario)
    todos = [item["value"] for item in ref[-4] if item["namespace"] == ["todo", "Lance"]]
    assert todos[0]["deadline"] == "<ts>" and "La Petite Baleen Swim School" in todos[0]["solutions"]
    profile = next(item["value"] for item in ref[-4] if item["namespace"] == ["profile", "Lance"])
    assert profile["job"] == "software engineer"


def test_task_maistro_studio_file_reads_the_user_from_its_config_schema(differential):
    """The course's Studio version: `config_schema=Configuration` (deprecated in LangGraph
    1.x: the warning the learner sees), the schema Studio's form is built from, a run for a
    named user and one without `user_id` (the dataclass default), the store after both."""
    def scenario(E):
        model = _maistro_model()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            graph, store = _maistro(E, model, studio=True)
        shown = sorted({(w.category.__name__, str(w.message)) for w in caught})
        schemas = [capture(lambda: graph.config_schema().model_json_schema()),
                   capture(lambda: graph.get_config_jsonschema()), capture(lambda: graph.get_context_jsonschema())]
        first = _turns(graph, {"configurable": {"user_id": "Lance"}}, "My name is Lance. I live in SF.")
        second = _turns(graph, {}, "My wife asked me to book swim lessons for the baby.")
        return shown, schemas, first, second, _items(store)

    ref = differential(scenario)
    assert [item["namespace"] for item in ref[-1]] == [["profile", "Lance"], ["todo", "default-user"]]

"""LangGraph's research-agent tutorials, ported as their authors wrote them, run on both engines.

The programs (langchain-ai/langgraph, docs/docs/tutorials/ as of the 0.2/0.3 docs, before
the docs moved out of the repository): Self-RAG, corrective RAG (CRAG) and adaptive RAG
(rag/langgraph_*.ipynb), Reflexion (reflexion/reflexion.ipynb), ReWOO (rewoo/rewoo.ipynb),
LLMCompiler (llm-compiler/LLMCompiler.ipynb with its output_parser.py: the planner's
streamed tasks run by a ThreadPoolExecutor inside a node, a joiner that replans) and STORM
(storm/storm.ipynb: the interview graph run per editor with `.abatch` inside a node of the
outer research graph).

Several tutorials mutate state in place (CRAG appends to `documents`, ReWOO updates
`results`, LLMCompiler's replanner extends a SystemMessage): chunks kept after a run show
the mutation on both engines alike; checkpointed runs of those pass durability="sync",
since LangGraph's background checkpoint writes race the next step's mutation.

Each keeps the tutorial's code (its nodes, edges, prompts, state classes and its printing
loop); only the LLMs, retriever and web search are fakes: the shared `Scripted` chat model
answering from the prompt it is sent, `InMemoryVectorStore` over `DeterministicFakeEmbedding`,
and search tools returning canned results. The hub prompts are inlined (`rlm/rag-prompt`,
`wfh/llm-compiler` as the notebook prints them; `wfh/llm-compiler-joiner` shortened). Compared: what the tutorial prints, the `updates` and `values` streams
(`subgraphs=True` for STORM), final outputs, `get_state` and `get_state_history` on the
engine's in-memory saver and on its SQLite saver, sync and async.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""
# ruff: noqa: UP006, UP035 - the tutorials write typing.List

import ast
import contextlib
import io
import json
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pprint import pprint
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, Union

import pytest
from _agent_scenarios import ahistory, asaver, history, saver
from _diff import acollect, attempt, collect, snapshot_summary
from _scripted import Scripted
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.output_parsers import StrOutputParser
from langchain_core.output_parsers.openai_tools import PydanticToolsParser
from langchain_core.output_parsers.transform import BaseTransformOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableBranch, RunnableConfig, RunnableLambda
from langchain_core.runnables import chain as as_runnable
from langchain_core.tools import BaseTool, StructuredTool, tool
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.prebuilt import ToolNode
from pydantic import BaseModel, Field, ValidationError, field_validator
from typing_extensions import TypedDict

KINDS = ("memory", "sqlite")

# --- fakes -------------------------------------------------------------------------------------


def _model(reply, structured=None):
    """The tutorial's chat model: `reply(text of the prompt)` -> the answer's content (or an
    AIMessage), `structured(text of the prompt)` -> the structured output."""
    def script(messages):
        out = reply("\n".join(str(m.content) for m in messages))
        return out if isinstance(out, AIMessage) else AIMessage(out)

    def answer(inp):
        text = inp if isinstance(inp, str) else "\n".join(str(m.content) for m in inp.to_messages())
        return structured(text)

    return Scripted(script=script, structured=answer, seen=[])


def _embeddings():
    return DeterministicFakeEmbedding(size=16)


BLOG = [
    Document(id="d1", page_content="Agent memory: short-term memory is in-context learning.",
             metadata={"source": "agent"}),
    Document(id="d2", page_content="Long-term memory uses an external vector store for agent recall.",
             metadata={"source": "agent"}),
    Document(id="d3", page_content="Chain of thought prompting asks the model to think step by step.",
             metadata={"source": "prompt-engineering"}),
    Document(id="d4", page_content="Adversarial attacks on LLMs include jailbreak prompts.",
             metadata={"source": "adv-attack"}),
    Document(id="d5", page_content="Tree of thoughts extends chain of thought with search.",
             metadata={"source": "prompt-engineering"}),
]


def _between(text, start, end):
    return text.split(start, 1)[1].split(end, 1)[0].strip()


def _printed(fn):
    """What `fn` prints, and what it returns."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn()
    return buf.getvalue().splitlines(), out


async def _aprinted(fn):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = await fn()
    return buf.getvalue().splitlines(), out


@pytest.fixture
def differential(differential):
    """The shared fixture, guarded: a scenario that raises as a whole tests nothing."""
    def run(scenario, **kw):
        ref = differential(scenario, **kw)
        assert not (isinstance(ref, tuple) and ref[:1] == ("raises",)), ref
        return ref

    return run


def _cfg(tid="1"):
    return {"configurable": {"thread_id": tid}}


# --- RAG: Self-RAG, CRAG, adaptive RAG ---------------------------------------------------------

# hub.pull("rlm/rag-prompt")
RAG_PROMPT = ChatPromptTemplate.from_messages([(
    "human",
    "You are an assistant for question-answering tasks. Use the following pieces of retrieved context "
    "to answer the question. If you don't know the answer, just say that you don't know. Use three "
    "sentences maximum and keep the answer concise.\nQuestion: {question} \nContext: {context} \nAnswer:")])


def _rag_llm(relevant, hallucination=(), answers=(), routes=None):
    """One model for every chain of a RAG tutorial: the grader says a document is relevant
    when `relevant(document, question)`; the hallucination and answer graders answer from
    their sequences (then "yes"); the router picks the web for questions without a word of
    `routes`."""
    hallucination, answers = iter(hallucination), iter(answers)
    counts = {"generate": 0}
    box = {}

    def reply(text):
        if "question re-writer" in text:
            q = _between(text, "Here is the initial question:", "Formulate")
            return f"Improved: {q}"
        if "question-answering tasks" in text:
            counts["generate"] += 1
            q = _between(text, "Question:", "Context:")
            return f"Answer {counts['generate']} to {q}"
        raise AssertionError(text)

    def structured(text):
        schemas = box["schemas"]
        if "relevance of a retrieved document" in text:
            doc = _between(text, "Retrieved document:", "User question:")
            q = text.split("User question:", 1)[1].strip()
            return schemas["GradeDocuments"](binary_score="yes" if relevant(doc, q) else "no")
        if "grounded in / supported by" in text:
            return schemas["GradeHallucinations"](binary_score=next(hallucination, "yes"))
        if "addresses / resolves a question" in text:
            return schemas["GradeAnswer"](binary_score=next(answers, "yes"))
        if "routing a user question" in text:
            q = text.rsplit("\n", 1)[-1]
            hit = any(w in q for w in routes)
            return schemas["RouteQuery"](datasource="vectorstore" if hit else "web_search")
        raise AssertionError(text)

    llm = _model(reply, structured)
    return llm, box


def _web_search_tool(calls):
    @tool
    def tavily_search_results_json(query: str) -> list:
        """A search engine (TavilySearchResults(k=3))."""
        calls.append(query)
        return [{"url": f"https://example.com/{i}", "content": f"Web result {i} for {query}"}
                for i in (1, 2)]

    return tavily_search_results_json


def _rag_workflow(E, variant, llm, box, web_calls):
    """rag/langgraph_self_rag.ipynb, langgraph_crag.ipynb, langgraph_adaptive_rag.ipynb:
    the chains, the state, the nodes and edges, as each tutorial writes them."""
    vectorstore = InMemoryVectorStore.from_documents(documents=BLOG, embedding=_embeddings())
    retriever = vectorstore.as_retriever()

    ### Router (adaptive RAG)
    class RouteQuery(BaseModel):
        """Route a user query to the most relevant datasource."""

        datasource: Literal["vectorstore", "web_search"] = Field(
            ...,
            description="Given a user question choose to route it to web search or a vectorstore.",
        )

    structured_llm_router = llm.with_structured_output(RouteQuery)
    system = """You are an expert at routing a user question to a vectorstore or web search.
The vectorstore contains documents related to agents, prompt engineering, and adversarial attacks.
Use the vectorstore for questions on these topics. Otherwise, use web-search."""
    route_prompt = ChatPromptTemplate.from_messages([("system", system), ("human", "{question}")])
    question_router = route_prompt | structured_llm_router

    ### Retrieval Grader
    class GradeDocuments(BaseModel):
        """Binary score for relevance check on retrieved documents."""

        binary_score: str = Field(description="Documents are relevant to the question, 'yes' or 'no'")

    structured_llm_grader = llm.with_structured_output(GradeDocuments)
    system = """You are a grader assessing relevance of a retrieved document to a user question. \n 
    It does not need to be a stringent test. The goal is to filter out erroneous retrievals. \n
    If the document contains keyword(s) or semantic meaning related to the user question, grade it as relevant. \n
    Give a binary score 'yes' or 'no' score to indicate whether the document is relevant to the question."""  # noqa: W291
    grade_prompt = ChatPromptTemplate.from_messages(
        [("system", system), ("human", "Retrieved document: \n\n {document} \n\n User question: {question}")])
    retrieval_grader = grade_prompt | structured_llm_grader

    ### Generate
    prompt = RAG_PROMPT

    def format_docs(docs):
        return "\n\n".join(doc.page_content for doc in docs)

    rag_chain = prompt | llm | StrOutputParser()

    ### Hallucination Grader
    class GradeHallucinations(BaseModel):
        """Binary score for hallucination present in generation answer."""

        binary_score: str = Field(description="Answer is grounded in the facts, 'yes' or 'no'")

    structured_llm_grader = llm.with_structured_output(GradeHallucinations)
    system = """You are a grader assessing whether an LLM generation is grounded in / supported by a set of retrieved facts. \n 
     Give a binary score 'yes' or 'no'. 'Yes' means that the answer is grounded in / supported by the set of facts."""  # noqa: W291
    hallucination_prompt = ChatPromptTemplate.from_messages(
        [("system", system), ("human", "Set of facts: \n\n {documents} \n\n LLM generation: {generation}")])
    hallucination_grader = hallucination_prompt | structured_llm_grader

    ### Answer Grader
    class GradeAnswer(BaseModel):
        """Binary score to assess answer addresses question."""

        binary_score: str = Field(description="Answer addresses the question, 'yes' or 'no'")

    structured_llm_grader = llm.with_structured_output(GradeAnswer)
    system = """You are a grader assessing whether an answer addresses / resolves a question \n 
     Give a binary score 'yes' or 'no'. Yes' means that the answer resolves the question."""  # noqa: W291
    answer_prompt = ChatPromptTemplate.from_messages(
        [("system", system), ("human", "User question: \n\n {question} \n\n LLM generation: {generation}")])
    answer_grader = answer_prompt | structured_llm_grader

    ### Question Re-writer
    system = """You a question re-writer that converts an input question to a better version that is optimized \n 
     for vectorstore retrieval. Look at the input and try to reason about the underlying semantic intent / meaning."""  # noqa: W291
    re_write_prompt = ChatPromptTemplate.from_messages(
        [("system", system),
         ("human", "Here is the initial question: \n\n {question} \n Formulate an improved question.")])
    question_rewriter = re_write_prompt | llm | StrOutputParser()

    ### Search
    web_search_tool = _web_search_tool(web_calls)

    box["schemas"] = {c.__name__: c for c in (RouteQuery, GradeDocuments, GradeHallucinations, GradeAnswer)}

    if variant == "crag":
        class GraphState(TypedDict):
            """
            Represents the state of our graph.

            Attributes:
                question: question
                generation: LLM generation
                web_search: whether to add search
                documents: list of documents
            """

            question: str
            generation: str
            web_search: str
            documents: List[str]
    else:
        class GraphState(TypedDict):
            """
            Represents the state of our graph.

            Attributes:
                question: question
                generation: LLM generation
                documents: list of documents
            """

            question: str
            generation: str
            documents: List[str]

    ### Nodes

    def retrieve(state):
        print("---RETRIEVE---")
        question = state["question"]

        # Retrieval
        documents = retriever.invoke(question)
        return {"documents": documents, "question": question}

    def generate(state):
        print("---GENERATE---")
        question = state["question"]
        documents = state["documents"]

        # RAG generation
        if variant == "adaptive":
            docs_txt = format_docs(documents)
            generation = rag_chain.invoke({"context": docs_txt, "question": question})
        else:
            generation = rag_chain.invoke({"context": documents, "question": question})
        return {"documents": documents, "question": question, "generation": generation}

    def grade_documents(state):
        print("---CHECK DOCUMENT RELEVANCE TO QUESTION---")
        question = state["question"]
        documents = state["documents"]

        # Score each doc
        filtered_docs = []
        web_search = "No"
        for d in documents:
            score = retrieval_grader.invoke({"question": question, "document": d.page_content})
            grade = score.binary_score
            if grade == "yes":
                print("---GRADE: DOCUMENT RELEVANT---")
                filtered_docs.append(d)
            else:
                print("---GRADE: DOCUMENT NOT RELEVANT---")
                web_search = "Yes"
                continue
        if variant == "crag":
            return {"documents": filtered_docs, "question": question, "web_search": web_search}
        return {"documents": filtered_docs, "question": question}

    def transform_query(state):
        print("---TRANSFORM QUERY---")
        question = state["question"]
        documents = state["documents"]

        # Re-write question
        better_question = question_rewriter.invoke({"question": question})
        return {"documents": documents, "question": better_question}

    def web_search(state):
        print("---WEB SEARCH---")
        question = state["question"]
        if variant == "crag":
            documents = state["documents"]

        # Web search
        docs = web_search_tool.invoke({"query": question})
        web_results = "\n".join([d["content"] for d in docs])
        web_results = Document(page_content=web_results)
        if variant == "crag":
            documents.append(web_results)
            return {"documents": documents, "question": question}
        return {"documents": web_results, "question": question}

    ### Edges

    def route_question(state):
        print("---ROUTE QUESTION---")
        question = state["question"]
        source = question_router.invoke({"question": question})
        if source.datasource == "web_search":
            print("---ROUTE QUESTION TO WEB SEARCH---")
            return "web_search"
        elif source.datasource == "vectorstore":
            print("---ROUTE QUESTION TO RAG---")
            return "vectorstore"

    def decide_to_generate(state):
        print("---ASSESS GRADED DOCUMENTS---")
        state["question"]
        if variant == "crag":
            web_search = state["web_search"]
            state["documents"]
            filtered_out = web_search == "Yes"
        else:
            filtered_documents = state["documents"]
            filtered_out = not filtered_documents

        if filtered_out:
            # All documents have been filtered check_relevance
            # We will re-generate a new query
            print("---DECISION: ALL DOCUMENTS ARE NOT RELEVANT TO QUESTION, TRANSFORM QUERY---")
            return "transform_query"
        else:
            # We have relevant documents, so generate answer
            print("---DECISION: GENERATE---")
            return "generate"

    def grade_generation_v_documents_and_question(state):
        print("---CHECK HALLUCINATIONS---")
        question = state["question"]
        documents = state["documents"]
        generation = state["generation"]

        score = hallucination_grader.invoke({"documents": documents, "generation": generation})
        grade = score.binary_score

        # Check hallucination
        if grade == "yes":
            print("---DECISION: GENERATION IS GROUNDED IN DOCUMENTS---")
            # Check question-answering
            print("---GRADE GENERATION vs QUESTION---")
            score = answer_grader.invoke({"question": question, "generation": generation})
            grade = score.binary_score
            if grade == "yes":
                print("---DECISION: GENERATION ADDRESSES QUESTION---")
                return "useful"
            else:
                print("---DECISION: GENERATION DOES NOT ADDRESS QUESTION---")
                return "not useful"
        else:
            pprint("---DECISION: GENERATION IS NOT GROUNDED IN DOCUMENTS, RE-TRY---")
            return "not supported"

    workflow = E.StateGraph(GraphState)

    if variant == "adaptive":
        workflow.add_node("web_search", web_search)  # web search
    workflow.add_node("retrieve", retrieve)  # retrieve
    workflow.add_node("grade_documents", grade_documents)  # grade documents
    workflow.add_node("generate", generate)  # generate
    workflow.add_node("transform_query", transform_query)  # transform_query
    if variant == "crag":
        workflow.add_node("web_search_node", web_search)  # web search

    # Build graph
    if variant == "adaptive":
        workflow.add_conditional_edges(
            E.START,
            route_question,
            {
                "web_search": "web_search",
                "vectorstore": "retrieve",
            },
        )
        workflow.add_edge("web_search", "generate")
    else:
        workflow.add_edge(E.START, "retrieve")
    workflow.add_edge("retrieve", "grade_documents")
    workflow.add_conditional_edges(
        "grade_documents",
        decide_to_generate,
        {
            "transform_query": "transform_query",
            "generate": "generate",
        },
    )
    if variant == "crag":
        workflow.add_edge("transform_query", "web_search_node")
        workflow.add_edge("web_search_node", "generate")
        workflow.add_edge("generate", E.END)
    else:
        workflow.add_edge("transform_query", "retrieve")
        workflow.add_conditional_edges(
            "generate",
            grade_generation_v_documents_and_question,
            {
                "not supported": "generate",
                "useful": E.END,
                "not useful": "transform_query",
            },
        )
    return workflow


def _run_rag_loop(app, inputs):
    """The tutorial's run cell."""
    for output in app.stream(inputs):
        for key, value in output.items():  # noqa: B007 - the tutorial's loop
            # Node
            pprint(f"Node '{key}':")
            # Optional: print full state at each node
            # pprint.pprint(value["keys"], indent=2, width=80, depth=None)
        pprint("\n---\n")

    # Final generation
    pprint(value["generation"])


def _rag_program(variant, question, tmp_path, durability=None, **llm_script):
    def scenario(E):
        out = {}
        llm, box = _rag_llm(**llm_script)
        web_calls = []
        app = _rag_workflow(E, variant, llm, box, web_calls).compile()
        out["printed"] = _printed(lambda: attempt(lambda: _run_rag_loop(app, {"question": question})))
        out["values"] = collect(lambda: app.stream({"question": question}, stream_mode="values"))
        out["invoke"] = attempt(lambda: app.invoke({"question": question}))
        extra = {"durability": durability} if durability else {}
        for kind in KINDS:
            llm, box = _rag_llm(**llm_script)
            with saver(E, kind, tmp_path) as checkpointer:
                app = _rag_workflow(E, variant, llm, box, web_calls).compile(checkpointer=checkpointer)
                out[kind] = (collect(lambda app=app: app.stream({"question": question}, _cfg(),
                                                                stream_mode=["updates", "values"], **extra)),
                             snapshot_summary(app.get_state(_cfg()), errors=True),
                             _without_results(history(app, _cfg())) if durability else history(app, _cfg()))
        out["seen"], out["web"] = llm.seen, web_calls
        return out

    return scenario


def _memory_words(doc, q):
    return "memory" in doc.lower() and "memory" in q.lower()


def test_self_rag_grades_relevant_documents_and_answers_first_time(differential, tmp_path):
    """Self-RAG: retrieve -> grade (some relevant) -> generate -> grounded and useful -> END."""
    differential(_rag_program("self", "Explain how the different types of agent memory work?", tmp_path,
                              relevant=_memory_words))


def test_self_rag_loops_on_hallucination_and_useless_answer_through_transform_query(differential, tmp_path):
    """Self-RAG: no relevant document -> transform_query -> retrieve again; the generation
    is first not grounded (generate again), then not useful (transform_query again)."""
    def relevant(doc, q):
        return q.startswith("Improved") and "thought" in doc

    differential(_rag_program("self", "Explain how chain of thought prompting works?", tmp_path,
                              relevant=relevant, hallucination=["no"], answers=["no"]))


def test_crag_filters_irrelevant_documents_then_rewrites_and_searches_the_web(differential, tmp_path):
    """CRAG: any irrelevant document -> transform_query -> web_search_node (appends the web
    results to the state's documents list in place) -> generate -> END.

    The checkpointed runs pass durability="sync": under the default ("async") LangGraph's
    savers (in memory and SQLite alike) serialize a step's checkpoint in a background
    thread, sometimes after web_search_node has appended to the very list that checkpoint
    holds, so LangGraph's saved history of the two steps before it varies with thread
    timing from run to run (lgnb's holds the state as of each step)."""
    differential(_rag_program("crag", "What are the types of agent memory?", tmp_path, durability="sync",
                              relevant=_memory_words))


def test_crag_generates_directly_when_every_document_is_relevant(differential, tmp_path):
    differential(_rag_program("crag", "How does the AlphaCodium paper work?", tmp_path,
                              relevant=lambda doc, q: True))


def test_adaptive_rag_routes_an_off_topic_question_to_web_search(differential, tmp_path):
    """Adaptive RAG: the router (a conditional entry point) sends the NFL question to
    web_search, whose update makes `documents` one Document; generate's `format_docs`
    iterates it (pydantic yields field tuples) and fails: the tutorial's own bug, so the
    run raises AttributeError after what it printed, and the thread keeps the failed task."""
    differential(_rag_program("adaptive", "What player at the Bears expected to draft first in the 2024 NFL draft?",
                              tmp_path, relevant=_memory_words, routes=("agent", "prompt", "adversarial")))


def test_adaptive_rag_routes_to_the_vectorstore_and_retries_an_ungrounded_answer(differential, tmp_path):
    differential(_rag_program("adaptive", "What are the types of agent memory?", tmp_path,
                              relevant=_memory_words, routes=("agent", "prompt", "adversarial"),
                              hallucination=["no", "yes"], answers=["no"]))


def test_adaptive_rag_astream_on_the_async_sqlite_saver(differential, tmp_path):
    """Adaptive RAG, run with `astream` on each engine's AsyncSqliteSaver (sync nodes)."""
    async def scenario(E):
        out = {}
        for kind in KINDS:
            llm, box = _rag_llm(relevant=_memory_words, routes=("agent",), answers=["no"])
            async with asaver(E, kind, tmp_path) as checkpointer:
                app = _rag_workflow(E, "adaptive", llm, box, []).compile(checkpointer=checkpointer)
                out[kind] = (await acollect(lambda app=app: app.astream({"question": "What is agent memory?"}, _cfg(),
                                                                        stream_mode=["updates", "values"])),
                             await app.aget_state(_cfg()), await ahistory(app, _cfg()), llm.seen)
        return out

    differential(scenario)


# --- ReWOO ---------------------------------------------------------------------------------------

REWOO_PLAN = """Plan: Use Google to search for the 2024 Australian Open winner. #E1 = Google[2024 Australian Open winner]
Plan: Retrieve the name of the 2024 Australian Open winner from the search results. #E2 = LLM[What is the name of the 2024 Australian Open winner, given #E1]
Plan: Use Google to search for the hometown of the 2024 Australian Open winner. #E3 = Google[hometown of #E2]
Plan: Retrieve the hometown of the 2024 Australian Open winner from the search results. #E4 = LLM[What is the hometown of #E2, given #E3]"""


def _rewoo_app(E, searches, checkpointer=None):
    """rewoo/rewoo.ipynb: planner (regex over the plan), a worker looping over the steps with
    #E substitution, solver."""
    class ReWOO(TypedDict):
        task: str
        plan_string: str
        steps: List
        results: dict
        result: str

    def reply(text):
        if text.startswith("For the following task, make plans"):
            return REWOO_PLAN
        if text.startswith("Solve the following task"):
            return "San Candido, Italy"
        if text.startswith("What is the name"):
            return "Jannik Sinner"
        return "San Candido"

    model = _model(reply)

    prompt = """For the following task, make plans that can solve the problem step by step. For each plan, indicate \
which external tool together with tool input to retrieve evidence. You can store the evidence into a \
variable #E that can be called by later tools. (Plan, #E1, Plan, #E2, Plan, ...)

Tools can be one of the following:
(1) Google[input]: Worker that searches results from Google. Useful when you need to find short
and succinct answers about a specific topic. The input should be a search query.
(2) LLM[input]: A pretrained LLM like yourself. Useful when you need to act with general
world knowledge and common sense. Prioritize it when you are confident in solving the problem
yourself. Input can be any instruction.

For example,
Task: Thomas, Toby, and Rebecca worked a total of 157 hours in one week. Thomas worked x
hours. Toby worked 10 hours less than twice what Thomas worked, and Rebecca worked 8 hours
less than Toby. How many hours did Rebecca work?
Plan: Given Thomas worked x hours, translate the problem into algebraic expressions and solve
with Wolfram Alpha. #E1 = WolframAlpha[Solve x + (2x − 10) + ((2x − 10) − 8) = 157]
Plan: Find out the number of hours Thomas worked. #E2 = LLM[What is x, given #E1]
Plan: Calculate the number of hours Rebecca worked. #E3 = Calculator[(2 ∗ #E2 − 10) − 8]

Begin! 
Describe your plans with rich details. Each Plan should be followed by only one #E.

Task: {task}"""  # noqa: W291, RUF001

    # Regex to match expressions of the form E#... = ...[...]
    regex_pattern = r"Plan:\s*(.+)\s*(#E\d+)\s*=\s*(\w+)\s*\[([^\]]+)\]"
    prompt_template = ChatPromptTemplate.from_messages([("user", prompt)])
    planner = prompt_template | model

    def get_plan(state: ReWOO):
        task = state["task"]
        result = planner.invoke({"task": task})
        # Find all matches in the sample text
        matches = re.findall(regex_pattern, result.content)
        return {"steps": matches, "plan_string": result.content}

    @tool
    def search(query: str) -> list:
        """TavilySearchResults()."""
        searches.append(query)
        return [{"url": "https://ausopen.com", "content": f"Result for {query[:40]}"}]

    def _get_current_task(state: ReWOO):
        if "results" not in state or state["results"] is None:
            return 1
        if len(state["results"]) == len(state["steps"]):
            return None
        else:
            return len(state["results"]) + 1

    def tool_execution(state: ReWOO):
        """Worker node that executes the tools of a given plan."""
        _step = _get_current_task(state)
        _, step_name, tool, tool_input = state["steps"][_step - 1]
        _results = (state["results"] or {}) if "results" in state else {}
        for k, v in _results.items():
            tool_input = tool_input.replace(k, v)
        if tool == "Google":
            result = search.invoke(tool_input)
        elif tool == "LLM":
            result = model.invoke(tool_input)
        else:
            raise ValueError
        _results[step_name] = str(result)
        return {"results": _results}

    solve_prompt = """Solve the following task or problem. To solve the problem, we have made step-by-step Plan and \
retrieved corresponding Evidence to each Plan. Use them with caution since long evidence might \
contain irrelevant information.

{plan}

Now solve the question or task according to provided Evidence above. Respond with the answer
directly with no extra words.

Task: {task}
Response:"""

    def solve(state: ReWOO):
        plan = ""
        for _plan, step_name, tool, tool_input in state["steps"]:  # noqa: F402 - the tutorial's names
            _results = (state["results"] or {}) if "results" in state else {}
            for k, v in _results.items():
                tool_input = tool_input.replace(k, v)
                step_name = step_name.replace(k, v)
            plan += f"Plan: {_plan}\n{step_name} = {tool}[{tool_input}]"
        prompt = solve_prompt.format(plan=plan, task=state["task"])
        result = model.invoke(prompt)
        return {"result": result.content}

    def _route(state):
        _step = _get_current_task(state)
        if _step is None:
            # We have executed all tasks
            return "solve"
        else:
            # We are still executing tasks, loop back to the "tool" node
            return "tool"

    graph = E.StateGraph(ReWOO)
    graph.add_node("plan", get_plan)
    graph.add_node("tool", tool_execution)
    graph.add_node("solve", solve)
    graph.add_edge("plan", "tool")
    graph.add_edge("solve", E.END)
    graph.add_conditional_edges("tool", _route)
    graph.add_edge(E.START, "plan")
    return graph.compile(checkpointer=checkpointer), model


TASK = "what is the exact hometown of the 2024 mens australian open winner"


def test_rewoo_plans_runs_each_step_with_substitution_and_solves(differential):
    """ReWOO: the tutorial's loop prints every update as it comes; the worker node mutates
    the `results` dict of its input state in place and returns it."""
    def scenario(E):
        searches = []
        app, model = _rewoo_app(E, searches)

        def run():
            for s in app.stream({"task": TASK}):
                print(s)
                print("---")
            # Print out the final result
            print(s["solve"]["result"])

        printed = _printed(run)[0]
        values = [repr(v) for v in app.stream({"task": TASK}, stream_mode="values")]
        kept = list(app.stream({"task": TASK}))  # read after the run: chunks share the mutated dict
        return printed, values, repr(kept), app.invoke({"task": TASK}), searches, model.seen

    differential(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_rewoo_checkpointed_state_and_history(differential, tmp_path, kind):
    """ReWOO on each saver (durability="sync", as the worker mutates the saved `results`
    dict in place: see the CRAG scenario): updates+values streams printed as they come,
    get_state, the history; then a second task on the same thread starts from the old
    `results`, so `_get_current_task` finds every step done and the worker fails on
    `None - 1` (the tutorial's bug): the error, the state left pending on `tool`."""
    def scenario(E):
        searches = []
        with saver(E, kind, tmp_path) as checkpointer:
            app, model = _rewoo_app(E, searches, checkpointer)
            first = [repr(c) for c in app.stream({"task": TASK}, _cfg(), stream_mode=["updates", "values"],
                                                 durability="sync")]
            state = app.get_state(_cfg())
            again = attempt(lambda: [repr(c) for c in app.stream({"task": "and the runner-up?"}, _cfg(),
                                                                 durability="sync")])
            failed = snapshot_summary(app.get_state(_cfg()), errors=True)
            return first, state, again, failed, _without_results(history(app, _cfg())), searches

    differential(scenario)


def _without_results(hist):
    """A `history` with each task's result left out, for the tutorials that change state in
    place mid-run (CRAG, ReWOO, LLMCompiler). LangGraph saves a task's writes in a
    background thread even with durability="sync" (it waits for the checkpoint, not the
    writes), and the next step changes the very object the write holds, so what LangGraph
    saved as that write varies with thread timing (on Python 3.13 it usually holds the
    later steps' changes too). Each checkpoint's values are compared whole."""
    return [{**h, "tasks": [(name, path, interrupts, "<not compared>", state)
                            for name, path, interrupts, _result, state in h["tasks"]]}
            for h in hist]


# --- Reflexion -----------------------------------------------------------------------------------


def _reflexion_llm(bad_first=False):
    """Answers the actor prompt by calling the function it names (AnswerQuestion, then
    ReviseAnswer), with a fresh call id each time; `bad_first`: the first call lacks
    `reflection` (fails the validator)."""
    n = {"i": 0}

    def reply(text):
        n["i"] += 1
        i = n["i"]
        name = "ReviseAnswer" if "ReviseAnswer function" in text else "AnswerQuestion"
        args = {"answer": f"Answer v{i}: cut emissions, adapt, fund research.",
                "reflection": {"missing": f"numbers v{i}", "superfluous": "none"},
                "search_queries": [f"climate policy {i}", f"carbon pricing {i}"]}
        if name == "ReviseAnswer":
            args["references"] = [f"https://example.com/{i}"]
        if bad_first and i == 1:
            del args["reflection"]
        return AIMessage("", id=f"ai-{i}", tool_calls=[{"name": name, "args": args, "id": f"call_{i}",
                                                        "type": "tool_call"}])

    return _model(reply)


def _reflexion_graph(E, llm, searches, checkpointer=None):
    """reflexion/reflexion.ipynb: the actor prompt, ResponderWithRetries, the ToolNode running
    the queries, the draft -> execute_tools -> revise loop counting ai/tool messages."""
    import datetime

    @tool
    def tavily_tool(query: str) -> list:
        """TavilySearchResults(max_results=5)."""
        searches.append(query)  # `batch` runs the queries in threads: compared sorted
        return [{"url": f"https://example.com/{query.replace(' ', '-')}", "content": f"About {query}"}]

    class Reflection(BaseModel):
        missing: str = Field(description="Critique of what is missing.")
        superfluous: str = Field(description="Critique of what is superfluous")

    class AnswerQuestion(BaseModel):
        """Answer the question. Provide an answer, reflection, and then follow up with search queries to improve the answer."""

        answer: str = Field(description="~250 word detailed answer to the question.")
        reflection: Reflection = Field(description="Your reflection on the initial answer.")
        search_queries: list[str] = Field(
            description="1-3 search queries for researching improvements to address the critique of your current answer."
        )

    class ResponderWithRetries:
        def __init__(self, runnable, validator):
            self.runnable = runnable
            self.validator = validator

        def respond(self, state: dict):
            response = []
            for attempt in range(3):  # noqa: F402 - the tutorial's names
                response = self.runnable.invoke(
                    {"messages": state["messages"]}, {"tags": [f"attempt:{attempt}"]}
                )
                try:
                    self.validator.invoke(response)
                    return {"messages": response}
                except ValidationError as e:
                    state = state + [
                        response,
                        ToolMessage(
                            content=f"{repr(e)}\n\nPay close attention to the function schema.\n\n"
                            + self.validator.schema_json()
                            + " Respond by fixing all validation errors.",
                            tool_call_id=response.tool_calls[0]["id"],
                        ),
                    ]
            return {"messages": response}

    actor_prompt_template = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                """You are expert researcher.
Current time: {time}

1. {first_instruction}
2. Reflect and critique your answer. Be severe to maximize improvement.
3. Recommend search queries to research information and improve your answer.""",
            ),
            MessagesPlaceholder(variable_name="messages"),
            (
                "user",
                "\n\n<system>Reflect on the user's original question and the"
                " actions taken thus far. Respond using the {function_name} function.</reminder>",
            ),
        ]
    ).partial(
        time=lambda: datetime.datetime.now().isoformat(),
    )
    initial_answer_chain = actor_prompt_template.partial(
        first_instruction="Provide a detailed ~250 word answer.",
        function_name=AnswerQuestion.__name__,
    ) | llm.bind_tools(tools=[AnswerQuestion])
    validator = PydanticToolsParser(tools=[AnswerQuestion])

    first_responder = ResponderWithRetries(runnable=initial_answer_chain, validator=validator)

    revise_instructions = """Revise your previous answer using the new information.
    - You should use the previous critique to add important information to your answer.
        - You MUST include numerical citations in your revised answer to ensure it can be verified.
        - Add a "References" section to the bottom of your answer (which does not count towards the word limit). In form of:
            - [1] https://example.com
            - [2] https://example.com
    - You should use the previous critique to remove superfluous information from your answer and make SURE it is not more than 250 words.
"""

    # Extend the initial answer schema to include references.
    # Forcing citation in the model encourages grounded responses
    class ReviseAnswer(AnswerQuestion):
        """Revise your original answer to your question. Provide an answer, reflection,

        cite your reflection with references, and finally
        add search queries to improve the answer."""

        references: list[str] = Field(description="Citations motivating your updated answer.")

    revision_chain = actor_prompt_template.partial(
        first_instruction=revise_instructions,
        function_name=ReviseAnswer.__name__,
    ) | llm.bind_tools(tools=[ReviseAnswer])
    revision_validator = PydanticToolsParser(tools=[ReviseAnswer])

    revisor = ResponderWithRetries(runnable=revision_chain, validator=revision_validator)

    def run_queries(search_queries: list[str], **kwargs):
        """Run the generated queries."""
        return tavily_tool.batch([{"query": query} for query in search_queries])

    tool_node = ToolNode(
        [
            StructuredTool.from_function(run_queries, name=AnswerQuestion.__name__),
            StructuredTool.from_function(run_queries, name=ReviseAnswer.__name__),
        ]
    )

    class State(TypedDict):
        messages: Annotated[list, E.add_messages]

    MAX_ITERATIONS = 5
    builder = E.StateGraph(State)
    builder.add_node("draft", first_responder.respond)
    builder.add_node("execute_tools", tool_node)
    builder.add_node("revise", revisor.respond)
    # draft -> execute_tools
    builder.add_edge("draft", "execute_tools")
    # execute_tools -> revise
    builder.add_edge("execute_tools", "revise")

    # Define looping logic:

    def _get_num_iterations(state: list):
        i = 0
        for m in state[::-1]:
            if m.type not in {"tool", "ai"}:
                break
            i += 1
        return i

    def event_loop(state: list):
        # in our case, we'll just stop after N plans
        num_iterations = _get_num_iterations(state["messages"])
        if num_iterations > MAX_ITERATIONS:
            return E.END
        return "execute_tools"

    # revise -> execute_tools OR end
    builder.add_conditional_edges("revise", event_loop, ["execute_tools", E.END])
    builder.add_edge(E.START, "draft")
    return builder.compile(checkpointer=checkpointer)


def _no_system(seen):
    """What the model was sent, without the system message (it holds the current time)."""
    return [[m for m in call if m[0] != "system"] if isinstance(call, list) else call for call in seen]


def test_reflexion_drafts_searches_and_revises_until_max_iterations(differential):
    """Reflexion: the tutorial's values loop (pretty-printed), then the updates stream."""
    def scenario(E):
        llm, searches = _reflexion_llm(), []
        graph = _reflexion_graph(E, llm, searches)

        def run():
            events = graph.stream(
                {"messages": [("user", "How should we handle the climate crisis?")]},
                stream_mode="values",
            )
            for i, step in enumerate(events):
                print(f"Step {i}")
                step["messages"][-1].pretty_print()

        printed = _printed(run)[0]
        updates = collect(lambda: graph.stream({"messages": [("user", "Why is reflection useful in AI?")]}))
        return printed, updates, sorted(searches), _no_system(llm.seen)

    differential(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_reflexion_checkpointed_thread_state_history_and_a_second_question(differential, tmp_path, kind):
    """Reflexion on each saver: get_state and the history after a run; a second question on
    the same thread counts iterations from the new human message, so it loops again."""
    def scenario(E):
        llm, searches = _reflexion_llm(), []
        with saver(E, kind, tmp_path) as checkpointer:
            graph = _reflexion_graph(E, llm, searches, checkpointer)
            first = graph.invoke({"messages": [("user", "How should we handle the climate crisis?")]}, _cfg())
            state = graph.get_state(_cfg())
            second = collect(lambda: graph.stream({"messages": [("user", "And in cities?")]}, _cfg(),
                                                  stream_mode=["updates", "values"]))
            return first, state, second, history(graph, _cfg()), sorted(searches)

    differential(scenario)


def test_reflexion_retry_path_raises_the_tutorials_type_error(differential):
    """The first draft fails the validator: the tutorial's retry adds a list to the state
    dict (`state + [...]`), a TypeError out of `draft`; the thread keeps the failed task."""
    def scenario(E):
        llm = _reflexion_llm(bad_first=True)
        graph = _reflexion_graph(E, llm, [], E.InMemorySaver())
        err = attempt(lambda: graph.invoke({"messages": [("user", "Why is reflection useful in AI?")]}, _cfg()))
        return err, snapshot_summary(graph.get_state(_cfg()), errors=True), history(graph, _cfg())

    differential(scenario)


def test_reflexion_ainvoke_and_astream_updates(differential, tmp_path):
    """Reflexion's sync nodes run by `ainvoke` / `astream` on the async SQLite saver."""
    async def scenario(E):
        llm, searches = _reflexion_llm(), []
        async with asaver(E, "sqlite", tmp_path) as checkpointer:
            graph = _reflexion_graph(E, llm, searches, checkpointer)
            first = await graph.ainvoke({"messages": [("user", "How should we handle the climate crisis?")]}, _cfg())
            chunks = await acollect(lambda: graph.astream({"messages": [("user", "And in cities?")]}, _cfg()))
            return first, chunks, await graph.aget_state(_cfg()), await ahistory(graph, _cfg()), sorted(searches)

    differential(scenario)


# --- STORM ---------------------------------------------------------------------------------------

STORM_TOPIC = "Groq, NVIDIA, Llamma.cpp and the future of LLM Inference"


class RateLimitError(Exception):
    """What a provider's client raises when rate limited (retried by the default `retry_on`)."""


def _storm_models(flaky=()):
    """`fast_llm` and `long_context_llm`: each reply is a function of the prompt only (the
    interviews run concurrently, so no shared counters). Editors ask `turns[name]` questions,
    the last one ending the interview with the tutorial's closing phrase. Each entry of
    `flaky` (`(editor, question number)`, or "article") fails once with RateLimitError."""
    turns = {"HardwareAnalyst": 2, "Open Source.Dev": 3}
    flaky = set(flaky)

    def once(key):
        if key in flaky:
            flaky.discard(key)
            raise RateLimitError(f"429 for {key}")

    def persona_name(text):
        return _between(text, "Name:", "\n")

    def fast(messages):
        text = "\n".join(str(m.content) for m in messages)
        name = persona_name(text)
        k = sum(1 for m in messages if isinstance(m, AIMessage) and m.name == name) + 1
        once((name, k))
        end = " Thank you so much for your help!" if k >= turns.get(name, 2) else ""
        return AIMessage(f"{name} question {k} on inference speed?{end}", id=f"q-{name}-{k}")

    def fast_structured(inp):
        messages = inp.to_messages()
        text = "\n".join(str(m.content) for m in messages)
        schemas = box
        if "Write an outline for a Wikipedia page" in text:
            return schemas["Outline"](page_title="LLM Inference", sections=[
                schemas["Section"](section_title="Hardware", description="GPUs and LPUs"),
                schemas["Section"](section_title="Software", description="llama.cpp")])
        if "recommend some Wikipedia pages" in text:
            return schemas["RelatedSubjects"](topics=["Groq", "Nvidia", "Broken page"])
        if "diverse (and distinct) group of Wikipedia editors" in text:
            return schemas["Perspectives"](editors=[
                schemas["Editor"](affiliation="Chip Weekly", name="Hardware Analyst", role="analyst",
                                  description="Compares accelerators."),
                schemas["Editor"](affiliation="GitHub", name="Open Source.Dev", role="maintainer",
                                  description="Runs models locally.")])
        if "Query the search engine" in text:
            question = messages[-1].content
            q = schemas["Queries"](queries=[f"{question[:20]} benchmarks", f"{question[:20]} fail"])
            raw = AIMessage("", id=f"raw-{question[:24]}", tool_calls=[
                {"name": "Queries", "args": q.model_dump(), "id": f"call-{question[:24]}", "type": "tool_call"}])
            return {"raw": raw, "parsed": q, "parsing_error": None}
        if "You are an expert who can use information effectively" in text:
            question = [m for m in messages if isinstance(m, HumanMessage)][-1].content
            results = json.loads(messages[-1].content)
            a = schemas["AnswerWithCitations"](answer=f"Expert answer to: {question}", cited_urls=sorted(results)[:1])
            return {"raw": AIMessage("", id=f"ans-{question[:24]}"), "parsed": a, "parsing_error": None}
        raise AssertionError(text)

    def long(messages):
        text = "\n".join(str(m.content) for m in messages)
        once("article")
        return AIMessage("# LLM Inference\n\n" + text.split("section drafts:", 1)[1].split("Strictly", 1)[0].strip(),
                         id="article")

    def long_structured(inp):
        text = "\n".join(str(m.content) for m in inp.to_messages())
        schemas = box
        if "refining the outline" in text:
            n = text.count("Conversation with")
            return schemas["Outline"](page_title="LLM Inference (refined)", sections=[
                schemas["Section"](section_title="Hardware", description=f"From {n} conversations",
                                   subsections=[schemas["Subsection"](subsection_title="LPUs", description="Groq")]),
                schemas["Section"](section_title="Local inference", description="llama.cpp")])
        if "Complete your assigned WikiSection" in text:
            section = _between(text, "Write the full WikiSection for the", "section.")
            hrefs = re.findall(r'<Document href="([^"]+)"', text)
            return schemas["WikiSection"](section_title=section, content=f"About {section}.",
                                          citations=sorted(hrefs))
        raise AssertionError(text)

    box = {}
    return (Scripted(script=fast, structured=fast_structured, seen=[]),
            Scripted(script=long, structured=long_structured, seen=[]), box)


def _storm(E, checkpointer=None, flaky=()):
    """storm/storm.ipynb: outline, perspectives (survey_subjects), the interview graph
    (compiled with checkpointer=False, run per editor with `.abatch` in a node), the refined
    outline, references indexed in a vector store, sections, article."""
    fast_llm, long_context_llm, box = _storm_models(flaky)

    direct_gen_outline_prompt = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                "You are a Wikipedia writer. Write an outline for a Wikipedia page about a user-provided topic. Be comprehensive and specific.",
            ),
            ("user", "{topic}"),
        ]
    )

    class Subsection(BaseModel):
        subsection_title: str = Field(..., title="Title of the subsection")
        description: str = Field(..., title="Content of the subsection")

        @property
        def as_str(self) -> str:
            return f"### {self.subsection_title}\n\n{self.description}".strip()

    class Section(BaseModel):
        section_title: str = Field(..., title="Title of the section")
        description: str = Field(..., title="Content of the section")
        subsections: Optional[List[Subsection]] = Field(
            default=None,
            title="Titles and descriptions for each subsection of the Wikipedia page.",
        )

        @property
        def as_str(self) -> str:
            subsections = "\n\n".join(
                f"### {subsection.subsection_title}\n\n{subsection.description}"
                for subsection in self.subsections or []
            )
            return f"## {self.section_title}\n\n{self.description}\n\n{subsections}".strip()

    class Outline(BaseModel):
        page_title: str = Field(..., title="Title of the Wikipedia page")
        sections: List[Section] = Field(
            default_factory=list,
            title="Titles and descriptions for each section of the Wikipedia page.",
        )

        @property
        def as_str(self) -> str:
            sections = "\n\n".join(section.as_str for section in self.sections)
            return f"# {self.page_title}\n\n{sections}".strip()

    generate_outline_direct = direct_gen_outline_prompt | fast_llm.with_structured_output(Outline)

    gen_related_topics_prompt = ChatPromptTemplate.from_template(
        """I'm writing a Wikipedia page for a topic mentioned below. Please identify and recommend some Wikipedia pages on closely related subjects. I'm looking for examples that provide insights into interesting aspects commonly associated with this topic, or examples that help me understand the typical content and structure included in Wikipedia pages for similar topics.

Please list the as many subjects and urls as you can.

Topic of interest: {topic}
"""
    )

    class RelatedSubjects(BaseModel):
        topics: List[str] = Field(
            description="Comprehensive list of related subjects as background research.",
        )

    expand_chain = gen_related_topics_prompt | fast_llm.with_structured_output(RelatedSubjects)

    class Editor(BaseModel):
        affiliation: str = Field(
            description="Primary affiliation of the editor.",
        )
        name: str = Field(description="Name of the editor.", pattern=r"^[a-zA-Z0-9_-]{1,64}$")
        role: str = Field(
            description="Role of the editor in the context of the topic.",
        )
        description: str = Field(
            description="Description of the editor's focus, concerns, and motives.",
        )

        @field_validator("name", mode="before")
        def sanitize_name(cls, value: str) -> str:
            return value.replace(" ", "").replace(".", "")

        @property
        def persona(self) -> str:
            return f"Name: {self.name}\nRole: {self.role}\nAffiliation: {self.affiliation}\nDescription: {self.description}\n"

    class Perspectives(BaseModel):
        editors: List[Editor] = Field(
            description="Comprehensive list of editors with their roles and affiliations.",
            # Add a pydantic validation/restriction to be at most M editors
        )

    gen_perspectives_prompt = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                """You need to select a diverse (and distinct) group of Wikipedia editors who will work together to create a comprehensive article on the topic. Each of them represents a different perspective, role, or affiliation related to this topic.\
    You can use other Wikipedia pages of related topics for inspiration. For each editor, add a description of what they will focus on.

    Wiki page outlines of related topics for inspiration:
    {examples}""",
            ),
            ("user", "Topic of interest: {topic}"),
        ]
    )

    gen_perspectives_chain = gen_perspectives_prompt | fast_llm.with_structured_output(
        Perspectives, method="function_calling"
    )

    def _wikipedia(query):
        if query.startswith("Broken"):
            raise LookupError(f"no page {query}")
        return [Document(page_content=f"{query} makes inference hardware.",
                         metadata={"title": query, "categories": ["Computing", query]})]

    wikipedia_retriever = RunnableLambda(_wikipedia, name="WikipediaRetriever")

    def format_doc(doc, max_length=1000):
        related = "- ".join(doc.metadata["categories"])
        return f"### {doc.metadata['title']}\n\nSummary: {doc.page_content}\n\nRelated\n{related}"[:max_length]

    def format_docs(docs):
        return "\n\n".join(format_doc(doc) for doc in docs)

    @as_runnable
    async def survey_subjects(topic: str):
        related_subjects = await expand_chain.ainvoke({"topic": topic})
        retrieved_docs = await wikipedia_retriever.abatch(related_subjects.topics, return_exceptions=True)
        all_docs = []
        for docs in retrieved_docs:
            if isinstance(docs, BaseException):
                continue
            all_docs.extend(docs)
        formatted = format_docs(all_docs)
        return await gen_perspectives_chain.ainvoke({"examples": formatted, "topic": topic})

    def add_messages(left, right):
        if not isinstance(left, list):
            left = [left]
        if not isinstance(right, list):
            right = [right]
        return left + right

    def update_references(references, new_references):
        if not references:
            references = {}
        references.update(new_references)
        return references

    def update_editor(editor, new_editor):
        # Can only set at the outset
        if not editor:
            return new_editor
        return editor

    class InterviewState(TypedDict):
        messages: Annotated[List[AnyMessage], add_messages]
        references: Annotated[Optional[dict], update_references]
        editor: Annotated[Optional[Editor], update_editor]

    gen_qn_prompt = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                """You are an experienced Wikipedia writer and want to edit a specific page. \
Besides your identity as a Wikipedia writer, you have a specific focus when researching the topic. \
Now, you are chatting with an expert to get information. Ask good questions to get more useful information.

When you have no more questions to ask, say "Thank you so much for your help!" to end the conversation.\
Please only ask one question at a time and don't ask what you have asked before.\
Your questions should be related to the topic you want to write.
Be comprehensive and curious, gaining as much unique insight from the expert as possible.\

Stay true to your specific perspective:

{persona}""",
            ),
            MessagesPlaceholder(variable_name="messages", optional=True),
        ]
    )

    def tag_with_name(ai_message: AIMessage, name: str):
        ai_message.name = name
        return ai_message

    def swap_roles(state: InterviewState, name: str):
        converted = []
        for message in state["messages"]:
            if isinstance(message, AIMessage) and message.name != name:
                message = HumanMessage(**message.model_dump(exclude={"type"}))
            converted.append(message)
        return {"messages": converted}

    @as_runnable
    async def generate_question(state: InterviewState):
        editor = state["editor"]
        gn_chain = (
            RunnableLambda(swap_roles).bind(name=editor.name)
            | gen_qn_prompt.partial(persona=editor.persona)
            | fast_llm
            | RunnableLambda(tag_with_name).bind(name=editor.name)
        )
        result = await gn_chain.ainvoke(state)
        return {"messages": [result]}

    class Queries(BaseModel):
        queries: List[str] = Field(
            description="Comprehensive list of search engine queries to answer the user's questions.",
        )

    gen_queries_prompt = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                "You are a helpful research assistant. Query the search engine to answer the user's questions.",
            ),
            MessagesPlaceholder(variable_name="messages", optional=True),
        ]
    )
    gen_queries_chain = gen_queries_prompt | fast_llm.with_structured_output(
        Queries, include_raw=True, method="function_calling"
    )

    class AnswerWithCitations(BaseModel):
        answer: str = Field(
            description="Comprehensive answer to the user's question with citations.",
        )
        cited_urls: List[str] = Field(
            description="List of urls cited in the answer.",
        )

        @property
        def as_str(self) -> str:
            return f"{self.answer}\n\nCitations:\n\n" + "\n".join(
                f"[{i+1}]: {url}" for i, url in enumerate(self.cited_urls)
            )

    gen_answer_prompt = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                """You are an expert who can use information effectively. You are chatting with a Wikipedia writer who wants\
 to write a Wikipedia page on the topic you know. You have gathered the related information and will now use the information to form a response.

Make your response as informative as possible and make sure every sentence is supported by the gathered information.
Each response must be backed up by a citation from a reliable source, formatted as a footnote, reproducing the URLS after your response.""",
            ),
            MessagesPlaceholder(variable_name="messages", optional=True),
        ]
    )

    gen_answer_chain = gen_answer_prompt | fast_llm.with_structured_output(
        AnswerWithCitations, include_raw=True
    ).with_config(run_name="GenerateAnswer")

    @tool
    async def search_engine(query: str):
        """Search engine to the internet."""
        if query.endswith("fail"):
            raise ConnectionError("rate limited")
        results = [{"body": f"{query}: 500 tokens/s", "href": f"https://news.example/{query.split()[-1]}/{len(query)}"}]
        return [{"content": r["body"], "url": r["href"]} for r in results]

    async def gen_answer(
        state: InterviewState,
        config: Optional[RunnableConfig] = None,
        name: str = "Subject_Matter_Expert",
        max_str_len: int = 15000,
    ):
        swapped_state = swap_roles(state, name)  # Convert all other AI messages
        queries = await gen_queries_chain.ainvoke(swapped_state)
        query_results = await search_engine.abatch(queries["parsed"].queries, config, return_exceptions=True)
        successful_results = [res for res in query_results if not isinstance(res, Exception)]
        all_query_results = {res["url"]: res["content"] for results in successful_results for res in results}
        # We could be more precise about handling max token length if we wanted to here
        dumped = json.dumps(all_query_results)[:max_str_len]
        ai_message: AIMessage = queries["raw"]
        tool_call = queries["raw"].tool_calls[0]
        tool_id = tool_call["id"]
        tool_message = ToolMessage(tool_call_id=tool_id, content=dumped)
        swapped_state["messages"].extend([ai_message, tool_message])
        # Only update the shared state with the final answer to avoid
        # polluting the dialogue history with intermediate messages
        generated = await gen_answer_chain.ainvoke(swapped_state)
        cited_urls = set(generated["parsed"].cited_urls)
        # Save the retrieved information to a the shared state for future reference
        cited_references = {k: v for k, v in all_query_results.items() if k in cited_urls}
        formatted_message = AIMessage(name=name, content=generated["parsed"].as_str)
        return {"messages": [formatted_message], "references": cited_references}

    max_num_turns = 5

    def route_messages(state: InterviewState, name: str = "Subject_Matter_Expert"):
        messages = state["messages"]
        num_responses = len([m for m in messages if isinstance(m, AIMessage) and m.name == name])
        if num_responses >= max_num_turns:
            return E.END
        last_question = messages[-2]
        if last_question.content.endswith("Thank you so much for your help!"):
            return E.END
        return "ask_question"

    builder = E.StateGraph(InterviewState)

    builder.add_node("ask_question", generate_question, retry=E.RetryPolicy(max_attempts=5))
    builder.add_node("answer_question", gen_answer, retry=E.RetryPolicy(max_attempts=5))
    builder.add_conditional_edges("answer_question", route_messages)
    builder.add_edge("ask_question", "answer_question")

    builder.add_edge(E.START, "ask_question")
    interview_graph = builder.compile(checkpointer=False).with_config(run_name="Conduct Interviews")

    refine_outline_prompt = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                """You are a Wikipedia writer. You have gathered information from experts and search engines. Now, you are refining the outline of the Wikipedia page. \
You need to make sure that the outline is comprehensive and specific. \
Topic you are writing about: {topic} 

Old outline:

{old_outline}""",  # noqa: W291
            ),
            (
                "user",
                "Refine the outline based on your conversations with subject-matter experts:\n\nConversations:\n\n{conversations}\n\nWrite the refined Wikipedia outline:",
            ),
        ]
    )

    # Using turbo preview since the context can get quite long
    refine_outline_chain = refine_outline_prompt | long_context_llm.with_structured_output(Outline)

    # The notebook's earlier cells: the refined outline of the example interview (used,
    # as the tutorial does, by write_sections below) and an empty vector store.
    refined_outline = Outline(page_title="Example", sections=[Section(section_title="Example", description="")])
    vectorstore = InMemoryVectorStore(embedding=_embeddings())
    retriever = vectorstore.as_retriever(k=3)

    class SubSection(BaseModel):
        subsection_title: str = Field(..., title="Title of the subsection")
        content: str = Field(
            ...,
            title="Full content of the subsection. Include [#] citations to the cited sources where relevant.",
        )

        @property
        def as_str(self) -> str:
            return f"### {self.subsection_title}\n\n{self.content}".strip()

    class WikiSection(BaseModel):
        section_title: str = Field(..., title="Title of the section")
        content: str = Field(..., title="Full content of the section")
        subsections: Optional[List[Subsection]] = Field(
            default=None,
            title="Titles and descriptions for each subsection of the Wikipedia page.",
        )
        citations: List[str] = Field(default_factory=list)

        @property
        def as_str(self) -> str:
            subsections = "\n\n".join(subsection.as_str for subsection in self.subsections or [])
            citations = "\n".join([f" [{i}] {cit}" for i, cit in enumerate(self.citations)])
            return f"## {self.section_title}\n\n{self.content}\n\n{subsections}".strip() + f"\n\n{citations}".strip()

    section_writer_prompt = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                "You are an expert Wikipedia writer. Complete your assigned WikiSection from the following outline:\n\n"
                "{outline}\n\nCite your sources, using the following references:\n\n<Documents>\n{docs}\n<Documents>",
            ),
            ("user", "Write the full WikiSection for the {section} section."),
        ]
    )

    async def retrieve(inputs: dict):
        docs = await retriever.ainvoke(inputs["topic"] + ": " + inputs["section"])
        formatted = "\n".join(
            [f'<Document href="{doc.metadata["source"]}"/>\n{doc.page_content}\n</Document>' for doc in docs]
        )
        return {"docs": formatted, **inputs}

    section_writer = retrieve | section_writer_prompt | long_context_llm.with_structured_output(WikiSection)

    writer_prompt = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                "You are an expert Wikipedia author. Write the complete wiki article on {topic} using the following section drafts:\n\n"
                "{draft}\n\nStrictly follow Wikipedia format guidelines.",
            ),
            (
                "user",
                'Write the complete Wiki article using markdown format. Organize citations using footnotes like "[1]",'
                " avoiding duplicates in the footer. Include URLs in the footer.",
            ),
        ]
    )

    writer = writer_prompt | long_context_llm | StrOutputParser()

    box.update({c.__name__: c for c in (Outline, Section, Subsection, RelatedSubjects, Editor, Perspectives,
                                        Queries, AnswerWithCitations, WikiSection)})

    class ResearchState(TypedDict):
        topic: str
        outline: Outline
        editors: List[Editor]
        interview_results: List[InterviewState]

        # The final sections output
        sections: List[WikiSection]
        article: str

    import asyncio

    async def initialize_research(state: ResearchState):
        topic = state["topic"]
        coros = (
            generate_outline_direct.ainvoke({"topic": topic}),
            survey_subjects.ainvoke(topic),
        )
        results = await asyncio.gather(*coros)
        return {
            **state,
            "outline": results[0],
            "editors": results[1].editors,
        }

    async def conduct_interviews(state: ResearchState):
        topic = state["topic"]
        initial_states = [
            {
                "editor": editor,
                "messages": [
                    AIMessage(
                        content=f"So you said you were writing an article on {topic}?",
                        name="Subject_Matter_Expert",
                    )
                ],
            }
            for editor in state["editors"]
        ]
        # We call in to the sub-graph here to parallelize the interviews
        interview_results = await interview_graph.abatch(initial_states)

        return {
            **state,
            "interview_results": interview_results,
        }

    def format_conversation(interview_state):
        messages = interview_state["messages"]
        convo = "\n".join(f"{m.name}: {m.content}" for m in messages)
        return f'Conversation with {interview_state["editor"].name}\n\n' + convo

    async def refine_outline(state: ResearchState):
        convos = "\n\n".join(
            [format_conversation(interview_state) for interview_state in state["interview_results"]]
        )

        updated_outline = await refine_outline_chain.ainvoke(
            {
                "topic": state["topic"],
                "old_outline": state["outline"].as_str,
                "conversations": convos,
            }
        )
        return {**state, "outline": updated_outline}

    async def index_references(state: ResearchState):
        all_docs = []
        for interview_state in state["interview_results"]:
            reference_docs = [
                Document(page_content=v, metadata={"source": k}) for k, v in interview_state["references"].items()
            ]
            all_docs.extend(reference_docs)
        await vectorstore.aadd_documents(all_docs)
        return state

    async def write_sections(state: ResearchState):
        outline = state["outline"]
        sections = await section_writer.abatch(
            [
                {
                    "outline": refined_outline.as_str,
                    "section": section.section_title,
                    "topic": state["topic"],
                }
                for section in outline.sections
            ]
        )
        return {
            **state,
            "sections": sections,
        }

    async def write_article(state: ResearchState):
        topic = state["topic"]
        sections = state["sections"]
        draft = "\n\n".join([section.as_str for section in sections])
        article = await writer.ainvoke({"topic": topic, "draft": draft})
        return {
            **state,
            "article": article,
        }

    builder_of_storm = E.StateGraph(ResearchState)

    nodes = [
        ("init_research", initialize_research),
        ("conduct_interviews", conduct_interviews),
        ("refine_outline", refine_outline),
        ("index_references", index_references),
        ("write_sections", write_sections),
        ("write_article", write_article),
    ]
    for i in range(len(nodes)):
        name, node = nodes[i]
        builder_of_storm.add_node(name, node, retry=E.RetryPolicy(max_attempts=3))
        if i > 0:
            builder_of_storm.add_edge(nodes[i - 1][0], name)

    builder_of_storm.add_edge(E.START, nodes[0][0])
    builder_of_storm.add_edge(nodes[-1][0], E.END)
    storm = builder_of_storm.compile(checkpointer=checkpointer if checkpointer is not None else E.InMemorySaver())
    return storm, interview_graph, Editor


def _per_interview(chunks):
    """`subgraphs=True` chunks of the research graph: the outer graph's in order, then each
    interview's in order. The interviews `abatch` runs concurrently interleave by thread
    timing (the models' sync calls run in executor threads) on both engines alike, so only
    the order within each is compared. Batch item i > 0 streams under `(ns, "i")`."""
    groups = {"outer": []}
    for chunk in chunks:
        ns = chunk[0]
        groups.setdefault(f"interview {ns[1:]}" if ns else "outer", []).append(chunk)
    return sorted(groups.items(), key=lambda kv: (kv[0] != "outer", kv[0]))


def test_storm_interview_graph_runs_one_editor_as_the_tutorial_streams_it(differential):
    """STORM's interview graph alone: `astream` of one editor's interview, printed as the
    tutorial prints it; then the final state's messages and references."""
    async def scenario(E):
        _, interview_graph, Editor = _storm(E)
        editor = Editor(affiliation="GitHub", name="Open Source.Dev", role="maintainer", description="local")
        example_topic = "Impact of million-plus token context window language models on RAG"
        initial_state = {
            "editor": editor,
            "messages": [
                AIMessage(
                    content=f"So you said you were writing an article on {example_topic}?",
                    name="Subject_Matter_Expert",
                )
            ],
        }

        async def run():
            final_step = None
            async for step in interview_graph.astream(initial_state):
                name = next(iter(step))
                print(name)
                print("-- ", str(step[name]["messages"])[:300])
                final_step = step
            return final_step

        printed, final_step = await _aprinted(run)
        final_state = next(iter(final_step.values()))
        values = await acollect(lambda: interview_graph.astream(initial_state, stream_mode="values"))
        return printed, final_state, values

    differential(scenario)


def test_storm_research_graph_end_to_end_on_the_memory_saver(differential):
    """STORM: the tutorial's `astream` loop over the research graph (printing each step's
    first 300 characters), then the article from `get_state`, and the thread's history.
    The tutorial's `add_node(..., retry=RetryPolicy(...))` warns of the deprecated keyword."""
    async def scenario(E):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            storm, _, _ = _storm(E)
        deprecations = sorted({(w.category.__name__, str(w.message)) for w in caught})
        config = {"configurable": {"thread_id": "my-thread"}}

        async def run():
            async for step in storm.astream({"topic": STORM_TOPIC}, config):
                name = next(iter(step))
                print(name)
                print("-- ", str(step[name])[:300])

        printed, _ = await _aprinted(run)
        checkpoint = storm.get_state(config)
        article = checkpoint.values["article"]
        return deprecations, printed, article, checkpoint, history(storm, config)

    differential(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_storm_streams_updates_and_values_with_subgraphs(differential, tmp_path, kind):
    """STORM with `subgraphs=True`: the interviews run by `abatch` inside conduct_interviews
    stream under that node's namespace (compared per interview, see `_per_interview`); on
    each engine's async saver, with the state and the history after it."""
    async def scenario(E):
        async with asaver(E, kind, tmp_path) as checkpointer:
            storm, _, _ = _storm(E, checkpointer)
            chunks = await acollect(lambda: storm.astream({"topic": STORM_TOPIC}, _cfg(),
                                                          stream_mode=["updates", "values"], subgraphs=True))
            return _per_interview(chunks), await storm.aget_state(_cfg()), await ahistory(storm, _cfg())

    differential(scenario)


# --- LLMCompiler ---------------------------------------------------------------------------------
# The tutorial's output_parser.py, as it ships next to the notebook.

THOUGHT_PATTERN = r"Thought: ([^\n]*)"
ACTION_PATTERN = r"\n*(\d+)\. (\w+)\((.*)\)(\s*#\w+\n)?"
# $1 or ${1} -> 1
ID_PATTERN = r"\$\{?(\d+)\}?"
END_OF_PLAN = "<END_OF_PLAN>"


def _ast_parse(arg: str) -> Any:
    try:
        return ast.literal_eval(arg)
    except:  # noqa
        return arg


def _parse_llm_compiler_action_args(args: str, tool: Union[str, BaseTool]) -> list[Any]:
    """Parse arguments from a string."""
    if args == "":
        return ()
    if isinstance(tool, str):
        return ()
    extracted_args = {}
    tool_key = None
    prev_idx = None
    for key in tool.args.keys():
        # Split if present
        if f"{key}=" in args:
            idx = args.index(f"{key}=")
            if prev_idx is not None:
                extracted_args[tool_key] = _ast_parse(args[prev_idx:idx].strip().rstrip(","))
            args = args.split(f"{key}=", 1)[1]
            tool_key = key
            prev_idx = 0
    if prev_idx is not None:
        extracted_args[tool_key] = _ast_parse(args[prev_idx:].strip().rstrip(",").rstrip(")"))
    return extracted_args


def default_dependency_rule(idx, args: str):
    matches = re.findall(ID_PATTERN, args)
    numbers = [int(match) for match in matches]
    return idx in numbers


def _get_dependencies_from_graph(idx: int, tool_name: str, args: Dict[str, Any]) -> dict[str, list[str]]:
    """Get dependencies from a graph."""
    if tool_name == "join":
        return list(range(1, idx))
    return [i for i in range(1, idx) if default_dependency_rule(i, str(args))]


class Task(TypedDict):
    idx: int
    tool: BaseTool
    args: list
    dependencies: Dict[str, list]
    thought: Optional[str]


def instantiate_task(
    tools: Sequence[BaseTool],
    idx: int,
    tool_name: str,
    args: Union[str, Any],
    thought: Optional[str] = None,
) -> Task:
    if tool_name == "join":
        tool = "join"
    else:
        try:
            tool = tools[[tool.name for tool in tools].index(tool_name)]
        except ValueError as e:
            raise OutputParserException(f"Tool {tool_name} not found.") from e
    tool_args = _parse_llm_compiler_action_args(args, tool)
    dependencies = _get_dependencies_from_graph(idx, tool_name, tool_args)

    return Task(
        idx=idx,
        tool=tool,
        args=tool_args,
        dependencies=dependencies,
        thought=thought,
    )


class LLMCompilerPlanParser(BaseTransformOutputParser[dict], extra="allow"):
    """Planning output parser."""

    tools: List[BaseTool]

    def _transform(self, input: Iterator[Union[str, BaseMessage]]) -> Iterator[Task]:
        texts = []
        # TODO: Cleanup tuple state tracking here.
        thought = None
        for chunk in input:
            # Assume input is str. TODO: support vision/other formats
            text = chunk if isinstance(chunk, str) else str(chunk.content)
            for task, thought in self.ingest_token(text, texts, thought):  # noqa: B007, B020
                yield task
        # Final possible task
        if texts:
            task, _ = self._parse_task("".join(texts), thought)
            if task:
                yield task

    def parse(self, text: str) -> List[Task]:
        return list(self._transform([text]))

    def stream(
        self,
        input: Union[str, BaseMessage],
        config: Optional[RunnableConfig] = None,
        **kwargs: Optional[Any],
    ) -> Iterator[Task]:
        yield from self.transform([input], config, **kwargs)

    def ingest_token(self, token: str, buffer: List[str], thought: Optional[str]) -> Iterator[Tuple[Optional[Task], str]]:
        buffer.append(token)
        if "\n" in token:
            buffer_ = "".join(buffer).split("\n")
            suffix = buffer_[-1]
            for line in buffer_[:-1]:
                task, thought = self._parse_task(line, thought)
                if task:
                    yield task, thought
            buffer.clear()
            buffer.append(suffix)

    def _parse_task(self, line: str, thought: Optional[str] = None):
        task = None
        if match := re.match(THOUGHT_PATTERN, line):
            # Optionally, action can be preceded by a thought
            thought = match.group(1)
        elif match := re.match(ACTION_PATTERN, line):
            # if action is parsed, return the task, and clear the buffer
            idx, tool_name, args, _ = match.groups()
            idx = int(idx)
            task = instantiate_task(
                tools=self.tools,
                idx=idx,
                tool_name=tool_name,
                args=args,
                thought=thought,
            )
            thought = None
        # Else it is just dropped
        return task, thought


# hub.pull("wfh/llm-compiler"), as the notebook prints it
LLM_COMPILER_PROMPT = ChatPromptTemplate.from_messages([
    ("system", """Given a user query, create a plan to solve it with the utmost parallelizability. Each plan should comprise an action from the following {num_tools} types:
{tool_descriptions}
{num_tools}. join(): Collects and combines results from prior actions.

 - An LLM agent is called upon invoking join() to either finalize the user query or wait until the plans are executed.
 - join should always be the last action in the plan, and will be called in two scenarios:
   (a) if the answer can be determined by gathering the outputs from tasks to generate the final response.
   (b) if the answer cannot be determined in the planning phase before you execute the plans. Guidelines:
 - Each action described above contains input/output types and description.
    - You must strictly adhere to the input and output types for each action.
    - The action descriptions contain the guidelines. You MUST strictly follow those guidelines when you use the actions.
 - Each action in the plan should strictly be one of the above types. Follow the Python conventions for each action.
 - Each action MUST have a unique ID, which is strictly increasing.
 - Inputs for actions can either be constants or outputs from preceding actions. In the latter case, use the format $id to denote the ID of the previous action whose output will be the input.
 - Always call join as the last action in the plan. Say '<END_OF_PLAN>' after you call join
 - Ensure the plan maximizes parallelizability.
 - Only use the provided action types. If a query cannot be addressed using these, invoke the join action for the next steps.
 - Never introduce new actions other than the ones provided.{replan}"""),
    MessagesPlaceholder(variable_name="messages"),
    ("system", "Remember, ONLY respond with the task list in the correct format! E.g.:\nidx. tool(arg_name=args)"),
])

# hub.pull("wfh/llm-compiler-joiner") (shortened)
LLM_COMPILER_JOINER_PROMPT = ChatPromptTemplate.from_messages([
    ("system", "Solve a question answering task. Here are some guidelines:\n - In the Assistant Scratchpad, you "
               "will be given results of a plan you have executed to answer the user's question.\n - Thought needs "
               "to reason about the question based on the Observations in 1-2 sentences.\n - Ignore irrelevant "
               "action results.\n - If the required information is present, give a concise but complete and "
               "helpful answer to the user's question.\n - If you are unable to give a satisfactory finishing "
               "answer, replan to get the required information.{examples}"),
    MessagesPlaceholder(variable_name="messages"),
    ("system", "Using the above previous actions, decide whether to replan or finish. If all the required "
               "information is present. You may finish. If you have made many attempts to find the information "
               "without success, admit so and respond with whatever information you have gathered so the user "
               "can work well with you.\n\n{examples}"),
])


def _llm_compiler(E, plans, decisions, calls, checkpointer=None):
    """llm-compiler/LLMCompiler.ipynb: the streaming planner, the task fetching unit (a
    ThreadPoolExecutor in the node, dependent tasks polling for their inputs), the joiner
    that replans with a SystemMessage."""
    import itertools
    import time
    from concurrent.futures import ThreadPoolExecutor, wait

    plans, decisions = iter(plans), iter(decisions)
    box = {}

    @tool("tavily_search_results_json")
    def search(query: str) -> list:
        """tavily_search_results_json(query="the search query") - a search engine."""
        calls.append(("search", query))
        return [{"url": "https://example.com", "content": f"{query}: 2.0 trillion USD"}]

    @tool("math")
    def calculate(problem: str, context: Optional[list[str]] = None) -> float:
        """math(problem: str, context: Optional[list[str]]) -> float:
        - Solves the provided math problem."""
        calls.append(("math", problem, context))
        if not re.fullmatch(r"[\d\s.+\-*/()]+", problem):
            raise ValueError(f"not an expression: {problem}")
        return eval(problem, {"__builtins__": {}})  # noqa: S307 - digits and operators only

    tools = [search, calculate]

    llm = Scripted(script=lambda messages: AIMessage(next(plans), id=f"plan-{len(calls)}"),
                   structured=lambda inp: box["JoinOutputs"](**next(decisions)), seen=[])

    def create_planner(llm: BaseChatModel, tools: Sequence[BaseTool], base_prompt: ChatPromptTemplate):
        tool_descriptions = "\n".join(
            f"{i + 1}. {tool.description}\n"
            for i, tool in enumerate(tools)  # +1 to offset the 0 starting index, we want it count normally from 1.
        )
        planner_prompt = base_prompt.partial(
            replan="",
            num_tools=len(tools) + 1,  # Add one because we're adding the join() tool at the end.
            tool_descriptions=tool_descriptions,
        )
        replanner_prompt = base_prompt.partial(
            replan=' - You are given "Previous Plan" which is the plan that the previous agent created along with the execution results '
            "(given as Observation) of each plan and a general thought (given as Thought) about the executed results."
            'You MUST use these information to create the next plan under "Current Plan".\n'
            ' - When starting the Current Plan, you should start with "Thought" that outlines the strategy for the next plan.\n'
            " - In the Current Plan, you should NEVER repeat the actions that are already executed in the Previous Plan.\n"
            " - You must continue the task index from the end of the previous one. Do not repeat task indices.",
            num_tools=len(tools) + 1,
            tool_descriptions=tool_descriptions,
        )

        def should_replan(state: list):
            # Context is passed as a system message
            return isinstance(state[-1], SystemMessage)

        def wrap_messages(state: list):
            return {"messages": state}

        def wrap_and_get_last_index(state: list):
            next_task = 0
            for message in state[::-1]:
                if isinstance(message, FunctionMessage):
                    next_task = message.additional_kwargs["idx"] + 1
                    break
            state[-1].content = state[-1].content + f" - Begin counting at : {next_task}"
            return {"messages": state}

        return (
            RunnableBranch(
                (should_replan, wrap_and_get_last_index | replanner_prompt),
                wrap_messages | planner_prompt,
            )
            | llm
            | LLMCompilerPlanParser(tools=tools)
        )

    planner = create_planner(llm, tools, LLM_COMPILER_PROMPT)

    def _get_observations(messages: List[BaseMessage]) -> Dict[int, Any]:
        # Get all previous tool responses
        results = {}
        for message in messages[::-1]:
            if isinstance(message, FunctionMessage):
                results[int(message.additional_kwargs["idx"])] = message.content
        return results

    class SchedulerInput(TypedDict):
        messages: List[BaseMessage]
        tasks: Iterable[Task]

    def _execute_task(task, observations, config):
        tool_to_use = task["tool"]
        if isinstance(tool_to_use, str):
            return tool_to_use
        args = task["args"]
        try:
            if isinstance(args, str):
                resolved_args = _resolve_arg(args, observations)
            elif isinstance(args, dict):
                resolved_args = {key: _resolve_arg(val, observations) for key, val in args.items()}
            else:
                # This will likely fail
                resolved_args = args
        except Exception as e:
            return (
                f"ERROR(Failed to call {tool_to_use.name} with args {args}.)"
                f" Args could not be resolved. Error: {repr(e)}"
            )
        try:
            return tool_to_use.invoke(resolved_args, config)
        except Exception as e:
            return (
                f"ERROR(Failed to call {tool_to_use.name} with args {args}."
                + f" Args resolved to {resolved_args}. Error: {repr(e)})"
            )

    def _resolve_arg(arg: Union[str, Any], observations: Dict[int, Any]):
        # $1 or ${1} -> 1
        ID_PATTERN = r"\$\{?(\d+)\}?"

        def replace_match(match):
            # If the string is ${123}, match.group(0) is ${123}, and match.group(1) is 123.
            # Return the match group, in this case the index, from the string. This is the index
            # number we get back.
            idx = int(match.group(1))
            return str(observations.get(idx, match.group(0)))

        # For dependencies on other tasks
        if isinstance(arg, str):
            return re.sub(ID_PATTERN, replace_match, arg)
        elif isinstance(arg, list):
            return [_resolve_arg(a, observations) for a in arg]
        else:
            return str(arg)

    @as_runnable
    def schedule_task(task_inputs, config):
        task: Task = task_inputs["task"]
        observations: Dict[int, Any] = task_inputs["observations"]
        try:
            observation = _execute_task(task, observations, config)
        except Exception:
            import traceback

            observation = traceback.format_exception()  # repr(e) +
        observations[task["idx"]] = observation

    def schedule_pending_task(task: Task, observations: Dict[int, Any], retry_after: float = 0.2):
        while True:
            deps = task["dependencies"]
            if deps and (any([dep not in observations for dep in deps])):
                # Dependencies not yet satisfied
                time.sleep(retry_after)
                continue
            schedule_task.invoke({"task": task, "observations": observations})
            break

    @as_runnable
    def schedule_tasks(scheduler_input: SchedulerInput) -> List[FunctionMessage]:
        """Group the tasks into a DAG schedule."""
        # For streaming, we are making a few simplifying assumption:
        # 1. The LLM does not create cyclic dependencies
        # 2. That the LLM will not generate tasks with future deps
        # If this ceases to be a good assumption, you can either
        # adjust to do a proper topological sort (not-stream)
        # or use a more complicated data structure
        tasks = scheduler_input["tasks"]
        args_for_tasks = {}
        messages = scheduler_input["messages"]
        # If we are re-planning, we may have calls that depend on previous
        # plans. Start with those.
        observations = _get_observations(messages)
        task_names = {}
        originals = set(observations)
        # ^^ We assume each task inserts a different key above to
        # avoid race conditions...
        futures = []
        retry_after = 0.25  # Retry every quarter second
        with ThreadPoolExecutor() as executor:
            for task in tasks:
                deps = task["dependencies"]
                task_names[task["idx"]] = task["tool"] if isinstance(task["tool"], str) else task["tool"].name
                args_for_tasks[task["idx"]] = task["args"]
                if (
                    # Depends on other tasks
                    deps and (any([dep not in observations for dep in deps]))
                ):
                    futures.append(executor.submit(schedule_pending_task, task, observations, retry_after))
                else:
                    # No deps or all deps satisfied
                    # can schedule now
                    schedule_task.invoke(dict(task=task, observations=observations))
                    # futures.append(executor.submit(schedule_task.invoke, dict(task=task, observations=observations)))

            # All tasks have been submitted or enqueued
            # Wait for them to complete
            wait(futures)
        # Convert observations to new tool messages to add to the state
        new_observations = {
            k: (task_names[k], args_for_tasks[k], observations[k]) for k in sorted(observations.keys() - originals)
        }
        tool_messages = [
            FunctionMessage(
                name=name,
                content=str(obs),
                additional_kwargs={"idx": k, "args": task_args},
                tool_call_id=k,
            )
            for k, (name, task_args, obs) in new_observations.items()
        ]
        return tool_messages

    @as_runnable
    def plan_and_schedule(state):
        messages = state["messages"]
        tasks = planner.stream(messages)
        # Begin executing the planner immediately
        try:
            tasks = itertools.chain([next(tasks)], tasks)
        except StopIteration:
            # Handle the case where tasks is empty.
            tasks = iter([])
        scheduled_tasks = schedule_tasks.invoke(
            {
                "messages": messages,
                "tasks": tasks,
            }
        )
        return {"messages": scheduled_tasks}

    class FinalResponse(BaseModel):
        """The final response/answer."""

        response: str

    class Replan(BaseModel):
        feedback: str = Field(
            description="Analysis of the previous attempts and recommendations on what needs to be fixed."
        )

    class JoinOutputs(BaseModel):
        """Decide whether to replan or whether you can return the final response."""

        thought: str = Field(description="The chain of thought reasoning for the selected action")
        action: Union[FinalResponse, Replan]

    box["JoinOutputs"] = JoinOutputs

    joiner_prompt = LLM_COMPILER_JOINER_PROMPT.partial(examples="")  # You can optionally add examples
    runnable = joiner_prompt | llm.with_structured_output(JoinOutputs, method="function_calling")

    def _parse_joiner_output(decision: JoinOutputs) -> List[BaseMessage]:
        response = [AIMessage(content=f"Thought: {decision.thought}")]
        if isinstance(decision.action, Replan):
            return {
                "messages": response
                + [SystemMessage(content=f"Context from last attempt: {decision.action.feedback}")]
            }
        else:
            return {"messages": response + [AIMessage(content=decision.action.response)]}

    def select_recent_messages(state) -> dict:
        messages = state["messages"]
        selected = []
        for msg in messages[::-1]:
            selected.append(msg)
            if isinstance(msg, HumanMessage):
                break
        return {"messages": selected[::-1]}

    joiner = select_recent_messages | runnable | _parse_joiner_output

    class State(TypedDict):
        messages: Annotated[list, E.add_messages]

    graph_builder = E.StateGraph(State)

    # 1.  Define vertices
    # We defined plan_and_schedule above already
    # Assign each node to a state variable to update
    graph_builder.add_node("plan_and_schedule", plan_and_schedule)
    graph_builder.add_node("join", joiner)

    ## Define edges
    graph_builder.add_edge("plan_and_schedule", "join")

    ### This condition determines looping logic

    def should_continue(state):
        messages = state["messages"]
        if isinstance(messages[-1], AIMessage):
            return E.END
        return "plan_and_schedule"

    graph_builder.add_conditional_edges(
        "join",
        # Next, we pass in the function that will determine which node is called next.
        should_continue,
    )
    graph_builder.add_edge(E.START, "plan_and_schedule")
    return graph_builder.compile(checkpointer=checkpointer)


GDP_PLANS = [
    'Thought: look it up\n1. tavily_search_results_json(query="GDP of New York")\n2. join()<END_OF_PLAN>',
    'Thought: per capita\n3. math(problem="2.0 / 0.0198", context=["$1"])\n4. math(problem="what is $3 per person")\n'
    "5. join()<END_OF_PLAN>",
]
GDP_DECISIONS = [
    {"thought": "Need per-capita numbers.", "action": {"feedback": "Compute GDP per capita."}},
    {"thought": "Done.", "action": {"response": "New York's GDP is about 2.0 trillion USD."}},
]
MATH_PLANS = [  # the sum streams first: it waits in the pool for the two tasks after it
    '3. math(problem="$1 + $2")\n1. math(problem="(3*(4+5)/0.5)+3245 + 8")\n2. math(problem="32/4.23")\n'
    "4. join()<END_OF_PLAN>",
]
MATH_DECISIONS = [{"thought": "Summed.", "action": {"response": "3315.565"}}]


def _function_messages(values):
    return [(m.type, m.content, m.name, m.additional_kwargs) for m in values["messages"]]


def test_llm_compiler_streams_the_plan_runs_tasks_and_replans_until_final(differential):
    """LLMCompiler, the GDP question: plan (a search), join replans with a SystemMessage the
    replanner extends in place; the second plan depends on task 1 and its task 4 fails
    inside the tool (an ERROR observation); join answers. Printed as the tutorial prints."""
    def scenario(E):
        calls = []
        chain = _llm_compiler(E, GDP_PLANS, GDP_DECISIONS, calls)

        def run():
            for step in chain.stream({"messages": [HumanMessage(content="What's the GDP of New York?")]}):
                print(step)
                print("---")
            # Final answer
            print(step["join"]["messages"][-1].content)

        printed = _printed(run)[0]
        chain = _llm_compiler(E, GDP_PLANS, GDP_DECISIONS, calls)
        # read after the run: the values chunk of the first join holds the SystemMessage
        # the replanner then extended in place
        kept = list(chain.stream({"messages": [HumanMessage(content="What's the GDP of New York?")]},
                                 stream_mode="values"))
        return printed, [_function_messages(v) for v in kept], sorted(calls, key=repr)

    differential(scenario)


def test_llm_compiler_runs_dependent_tasks_in_the_thread_pool(differential):
    """LLMCompiler, the arithmetic question: the plan streams task 3 (the sum of 1 and 2)
    first, so it (and join) wait in the node's ThreadPoolExecutor, polling, while tasks 1
    and 2 run as they stream; the values stream. (Tasks streamed in dependency order all
    run inline: the pool only serves tasks whose inputs come later in the plan.)"""
    def scenario(E):
        calls = []
        chain = _llm_compiler(E, MATH_PLANS, MATH_DECISIONS, calls)
        q = "What's ((3*(4+5)/0.5)+3245) + 8? What's 32/4.23? What's the sum of those two values?"
        values = collect(lambda: chain.stream({"messages": [HumanMessage(content=q)]}, stream_mode="values"))
        return [_function_messages(v) for v in values], sorted(calls, key=repr)

    differential(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_llm_compiler_checkpointed_replan_state_and_history(differential, tmp_path, kind):
    """LLMCompiler on each saver (durability="sync": the replanner appends to the content
    of the SystemMessage in the state in place, see the CRAG scenario): streams, state,
    history."""
    def scenario(E):
        calls = []
        with saver(E, kind, tmp_path) as checkpointer:
            chain = _llm_compiler(E, GDP_PLANS, GDP_DECISIONS, calls, checkpointer)
            chunks = [repr(c) for c in chain.stream({"messages": [HumanMessage(content="What's the GDP of New York?")]},
                                                    _cfg(), stream_mode=["updates", "values"], durability="sync")]
            return chunks, chain.get_state(_cfg()), _without_results(history(chain, _cfg())), sorted(calls, key=repr)

    differential(scenario)


def test_storm_retry_policies_rerun_a_rate_limited_question_and_article(differential):
    """STORM's RetryPolicy(max_attempts=5) on ask_question (inside the interviews run by
    `abatch`) and RetryPolicy(max_attempts=3) on write_article: each fails once with a
    rate-limit error and is retried; the streams (updates and tasks, with subgraphs) and
    the result are those of a run without failures, plus the failed attempts' task events."""
    async def scenario(E):
        storm, _, _ = _storm(E, flaky=[("HardwareAnalyst", 2), "article"])
        chunks = await acollect(lambda: storm.astream({"topic": STORM_TOPIC}, _cfg(),
                                                      stream_mode=["updates", "tasks"], subgraphs=True))
        return _per_interview(chunks), await storm.aget_state(_cfg())

    differential(scenario)


def test_rewoo_astream_on_the_async_sqlite_saver(differential, tmp_path):
    """ReWOO's sync nodes under `astream` (updates, printed as they come) on each engine's
    AsyncSqliteSaver (durability="sync", see the checkpointed ReWOO scenario)."""
    async def scenario(E):
        searches = []
        async with asaver(E, "sqlite", tmp_path) as checkpointer:
            app, _ = _rewoo_app(E, searches, checkpointer)
            chunks = [repr(c) async for c in app.astream({"task": TASK}, _cfg(), durability="sync")]
            return chunks, await app.aget_state(_cfg()), _without_results(await ahistory(app, _cfg())), searches

    differential(scenario)


def test_llm_compiler_astream_runs_the_thread_pool_node_from_async(differential):
    """LLMCompiler's sync nodes (the thread pool inside plan_and_schedule) run by `astream`
    on the in-memory saver (durability="sync"); then the state and the history."""
    async def scenario(E):
        calls = []
        chain = _llm_compiler(E, GDP_PLANS + MATH_PLANS, GDP_DECISIONS + MATH_DECISIONS, calls, E.InMemorySaver())
        first = await acollect(lambda: chain.astream(
            {"messages": [HumanMessage(content="What's the GDP of New York?")]}, _cfg(), durability="sync"))
        second = await chain.ainvoke({"messages": [HumanMessage(content="And the sum?")]}, _cfg(), durability="sync")
        state = await chain.aget_state(_cfg())
        return ([repr(c) for c in first], _function_messages(second), _function_messages(state.values),
                _without_results(await ahistory(chain, _cfg())), sorted(calls, key=repr))

    differential(scenario)

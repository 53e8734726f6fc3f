"""Whole programs from LangGraph's official tutorials and how-to guides, run on both engines.

Each scenario ports one documented program as close to verbatim as the docs write it (the
page is named in a comment above it), with only the LLM, retriever and web calls replaced
by deterministic fakes: a scripted `BaseChatModel` (`bind_tools` returns itself,
`with_structured_output` returns scripted pydantic objects, tokens stream word by word),
`InMemoryVectorStore` over `DeterministicFakeEmbedding`, and sqlite3 in memory for the SQL
agent. The programs: the get-started chatbot (tools, memory, human assistance, custom
state, time travel), agentic RAG, the SQL agent, plan-and-execute, reflection,
map-reduce summarization, the "workflows and agents" patterns (graph and functional API),
the graph-API how-tos (defer, conditional fan-out, RemainingSteps, private state, runtime
context, Command), conversation summaries with RemoveMessage, the streaming how-tos (every
stream mode, LLM tokens filtered by tags and by node, subgraphs, custom data from tools)
and the functional-API ReAct agent with thread memory.

Final outputs, every streamed chunk, state snapshots and histories are compared. Where
LangGraph runs sync parallel nodes in a thread pool (completion order), the scenario
compares per-step multisets (`steps_as_multisets`) and says so.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import operator
import sqlite3
from dataclasses import dataclass
from typing import Annotated, Literal, Union

from _diff import acollect, collect, snapshot_summary, steps_as_multisets

# --- fakes -----------------------------------------------------------------------------------
from _scripted import Scripted  # noqa: E402 - shared with the multi-agent suite
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import InjectedToolCallId, create_retriever_tool, tool
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, Field
from typing_extensions import TypedDict


def _llm(*replies, structured=()):
    return Scripted(script=iter(list(replies)), structured=iter(list(structured)), seen=[])


def _say(text, mid):
    return AIMessage(text, id=mid)


def _call(mid, name, args, cid, content=""):
    return AIMessage(content, id=mid, tool_calls=[{"name": name, "args": args, "id": cid, "type": "tool_call"}])


def _cfg(tid="1", **extra):
    return {"configurable": {"thread_id": tid}, **extra}


def _m(m):
    """What `pretty_print()` shows of a message."""
    return (m.type, m.content, getattr(m, "name", None), getattr(m, "tool_call_id", None),
            [(c["name"], c["args"]) for c in getattr(m, "tool_calls", None) or []])


def _snap(s):
    return snapshot_summary(s, errors=True)


def _hist(app, cfg):
    return [(s.next, s.metadata.get("step"), s.metadata.get("source"), len(s.values.get("messages", [])),
             [t.name for t in s.tasks]) for s in app.get_state_history(cfg)]


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"LangGraph is a library for building stateful agents ({query})"


# --- get started: basic chatbot, tools, memory -----------------------------------------------


def _chatbot(E, llm, tools, State=None, checkpointer=True):
    # docs/docs/tutorials/get-started/2-add-tools.md + 3-add-memory.md (prebuilt ToolNode version)
    if State is None:
        class State(TypedDict):
            messages: Annotated[list, E.add_messages]

    graph_builder = E.StateGraph(State)
    llm_with_tools = llm.bind_tools(tools)

    def chatbot(state: State):
        message = llm_with_tools.invoke(state["messages"])
        # Because we will be interrupting during tool execution,
        # we disable parallel tool calling to avoid repeating any
        # tool invocations when we resume.
        assert len(message.tool_calls) <= 1
        return {"messages": [message]}

    graph_builder.add_node("chatbot", chatbot)
    tool_node = ToolNode(tools=tools)
    graph_builder.add_node("tools", tool_node)
    graph_builder.add_conditional_edges("chatbot", tools_condition)
    graph_builder.add_edge("tools", "chatbot")
    graph_builder.add_edge(E.START, "chatbot")
    return graph_builder.compile(checkpointer=E.InMemorySaver() if checkpointer else None)


def _stream_graph_updates(graph, user_input, config):
    """The tutorial's chat loop body: stream values, print the last message of each."""
    events = graph.stream({"messages": [{"role": "user", "content": user_input}]}, config,
                          stream_mode="values")
    return [_m(event["messages"][-1]) for event in events]


def test_quickstart_chatbot_uses_the_search_tool_and_remembers_per_thread(differential):
    """get-started 2+3: the tool loop runs, the thread remembers the name, a new thread does not."""
    def scenario(E):
        llm = _llm(_call("a1", "search", {"query": "LangGraph"}, "c1"),
                   _say("LangGraph builds agents.", "a2"),
                   _say("Hi Will, nice to meet you.", "a3"),
                   _say("Your name is Will.", "a4"),
                   _say("I don't know your name.", "a5"))
        graph = _chatbot(E, llm, [search])
        config = _cfg("1")
        out = [_stream_graph_updates(graph, "What do you know about LangGraph?", config),
               _stream_graph_updates(graph, "Hi there! My name is Will.", config),
               _stream_graph_updates(graph, "Remember my name?", config),
               _stream_graph_updates(graph, "Remember my name?", _cfg("2"))]
        snapshot = graph.get_state(config)
        return out, _snap(snapshot), snapshot.next, llm.seen[-1], _hist(graph, config)

    differential(scenario)


def _human_assistance_tool(E):
    # docs/docs/tutorials/get-started/4-human-in-the-loop.md
    @tool
    def human_assistance(query: str) -> str:
        """Request assistance from a human."""
        human_response = E.interrupt({"query": query})
        return human_response["data"]

    return human_assistance


def test_human_in_the_loop_tool_pauses_for_an_expert_and_resumes_with_the_answer(differential):
    """get-started 4: `interrupt` in a tool pauses the run; `Command(resume=...)` answers it."""
    def scenario(E):
        llm = _llm(_call("a1", "human_assistance", {"query": "expert guidance for building an agent"}, "c1"),
                   _say("The experts recommend LangGraph.", "a2"))
        graph = _chatbot(E, llm, [search, _human_assistance_tool(E)])
        config = _cfg("1")
        first = _stream_graph_updates(graph, "I need some expert guidance for building an AI agent.", config)
        snapshot = graph.get_state(config)
        human_response = ("We, the experts are here to help! We'd recommend you check out LangGraph "
                          "to build your agent. It's much more reliable and extensible than simple "
                          "autonomous agents.")
        human_command = E.Command(resume={"data": human_response})
        events = graph.stream(human_command, config, stream_mode="values")
        second = [_m(event["messages"][-1]) for event in events]
        return first, snapshot.next, _snap(snapshot), second, _snap(graph.get_state(config)), _hist(graph, config)

    differential(scenario)


def _birthday_graph(E, llm):
    # docs/docs/tutorials/get-started/5-customize-state.md
    class State(TypedDict):
        messages: Annotated[list, E.add_messages]
        name: str
        birthday: str

    @tool
    def human_assistance(name: str, birthday: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Request assistance from a human."""
        human_response = E.interrupt({"question": "Is this correct?", "name": name, "birthday": birthday})
        if human_response.get("correct", "").lower().startswith("y"):
            verified_name = name
            verified_birthday = birthday
            response = "Correct"
        else:
            verified_name = human_response.get("name", name)
            verified_birthday = human_response.get("birthday", birthday)
            response = f"Made a correction: {human_response}"
        state_update = {
            "name": verified_name,
            "birthday": verified_birthday,
            "messages": [ToolMessage(response, tool_call_id=tool_call_id)],
        }
        return E.Command(update=state_update)

    return _chatbot(E, llm, [search, human_assistance], State=State)


def _birthday_run(E, resume):
    llm = _llm(_call("a1", "human_assistance", {"name": "LangGraph", "birthday": "Jan 17, 2024"}, "c1"),
               _say("LangGraph was released on January 17, 2024.", "a2"))
    graph = _birthday_graph(E, llm)
    user_input = ("Can you look up when LangGraph was released? When you have the answer, use the "
                  "human_assistance tool for review.")
    config = _cfg("1")
    first = _stream_graph_updates(graph, user_input, config)
    human_command = E.Command(resume=resume)
    second = [_m(e["messages"][-1]) for e in graph.stream(human_command, config, stream_mode="values")]
    snapshot = graph.get_state(config)
    fields = {k: v for k, v in snapshot.values.items() if k in ("name", "birthday")}
    return graph, config, (first, second, fields, _snap(snapshot))


def test_customize_state_tool_command_writes_verified_fields_and_update_state_overrides(differential):
    """get-started 5: the tool's `Command(update=...)` sets name/birthday; `update_state` edits it."""
    def scenario(E):
        graph, config, out = _birthday_run(E, {"name": "LangGraph", "birthday": "Jan 17, 2024", "correct": "yes"})
        new_config = graph.update_state(config, {"name": "LangGraph (library)"})
        snapshot = graph.get_state(config)
        return (out, sorted(new_config["configurable"]),
                {k: v for k, v in snapshot.values.items() if k in ("name", "birthday")},
                snapshot.metadata["source"], snapshot.metadata["step"], _hist(graph, config))

    differential(scenario)


def test_customize_state_human_correction_replaces_the_llm_guess(differential):
    """get-started 5: a human answer without 'correct' overrides the birthday the LLM proposed."""
    def scenario(E):
        return _birthday_run(E, {"name": "LangGraph", "birthday": "Jan 10, 2024"})[2]

    differential(scenario)


def test_time_travel_replays_the_thread_from_the_checkpoint_before_the_tools(differential):
    """get-started 6: pick a checkpoint from `get_state_history` and stream from its config."""
    def scenario(E):
        llm = _llm(_call("a1", "search", {"query": "LangGraph"}, "c1"),
                   _say("I learned about LangGraph.", "a2"),
                   _call("a3", "search", {"query": "autonomous agents"}, "c2"),
                   _say("Let's build an autonomous agent.", "a4"),
                   _say("(replayed) Let's build an autonomous agent.", "a5"))
        graph = _chatbot(E, llm, [search])
        config = _cfg("1")
        turns = [_stream_graph_updates(graph, "I'm learning LangGraph. Could you do some research on it for me?",
                                       config),
                 _stream_graph_updates(graph, "Ya that's helpful. Maybe I'll build an autonomous agent with it!",
                                       config)]
        to_replay = None
        listing = []
        for state in graph.get_state_history(config):
            listing.append(("Num Messages: ", len(state.values["messages"]), "Next: ", state.next))
            if len(state.values["messages"]) == 6:
                # We are somewhat arbitrarily selecting a specific state based on the number of chat messages in the state.
                to_replay = state
        replay_next = to_replay.next
        replay_cfg = sorted(to_replay.config["configurable"])
        # The `checkpoint_id` in the `to_replay.config` corresponds to a state we've persisted to our checkpointer.
        replayed = [_m(event["messages"][-1]) for event in graph.stream(None, to_replay.config, stream_mode="values")
                    if "messages" in event]
        return turns, listing, replay_next, replay_cfg, replayed, _hist(graph, config)

    differential(scenario)


def test_time_travel_how_to_forks_a_joke_with_a_new_topic(differential):
    """how-tos/human_in_the_loop/time-travel: update_state on an old checkpoint, then invoke(None, fork)."""
    def scenario(E):
        # docs/docs/how-tos/human_in_the_loop/time-travel.md
        class State(TypedDict):
            topic: str
            joke: str

        llm = _llm(_say("cats", "t1"), _say("Why did the cat sit on the computer? To keep an eye on the mouse!",
                                             "j1"),
                   _say("Why did the chicken join a band? Because it had the drumsticks!", "j2"))

        def generate_topic(state: State):
            """LLM call to generate a topic for the joke"""
            msg = llm.invoke("Give me a funny topic for a joke")
            return {"topic": msg.content}

        def write_joke(state: State):
            """LLM call to write a joke based on the topic"""
            msg = llm.invoke(f"Write a short joke about {state['topic']}")
            return {"joke": msg.content}

        workflow = E.StateGraph(State)
        workflow.add_node("generate_topic", generate_topic)
        workflow.add_node("write_joke", write_joke)
        workflow.add_edge(E.START, "generate_topic")
        workflow.add_edge("generate_topic", "write_joke")
        workflow.add_edge("write_joke", E.END)
        checkpointer = E.InMemorySaver()
        graph = workflow.compile(checkpointer=checkpointer)
        config = _cfg("t")
        state = graph.invoke({}, config)
        states = list(graph.get_state_history(config))
        listing = [(s.next, s.config["configurable"]["checkpoint_id"]) for s in states]
        # This is the state before write_joke
        selected_state = states[1]
        new_config = graph.update_state(selected_state.config, values={"topic": "chickens"})
        forked = graph.invoke(None, new_config)
        return state, listing, selected_state.next, selected_state.values, forked, [
            _snap(s) for s in graph.get_state_history(config)]

    differential(scenario)


# --- agentic RAG ---------------------------------------------------------------------------------

GRADE_PROMPT = (
    "You are a grader assessing relevance of a retrieved document to a user question. \n "
    "Here is the retrieved document: \n\n {context} \n\n"
    "Here is the user question: {question} \n"
    "If the document contains keyword(s) or semantic meaning related to the user question, grade it as relevant. \n"
    "Give a binary score 'yes' or 'no' score to indicate whether the document is relevant to the question."
)
REWRITE_PROMPT = (
    "Look at the input and try to reason about the underlying semantic intent / meaning.\n"
    "Here is the initial question:"
    "\n ------- \n"
    "{question}"
    "\n ------- \n"
    "Formulate an improved question:"
)
GENERATE_PROMPT = (
    "You are an assistant for question-answering tasks. "
    "Use the following pieces of retrieved context to answer the question. "
    "If you don't know the answer, just say that you don't know. "
    "Use three sentences maximum and keep the answer concise.\n"
    "Question: {question} \n"
    "Context: {context}"
)


class GradeDocuments(BaseModel):
    """Grade documents using a binary score for relevance check."""

    binary_score: str = Field(description="Relevance score: 'yes' if relevant, or 'no' if not relevant")


def _agentic_rag(E, response_model, grader_model):
    # docs/docs/tutorials/rag/langgraph_agentic_rag.md
    doc_splits = [
        Document("At a high level, reward hacking can be categorized into two types: environment or goal "
                 "misspecification, and reward tampering.", metadata={"source": "reward-hacking"}),
        Document("Hallucination in LLMs refers to fabricated content.", metadata={"source": "hallucination"}),
        Document("Diffusion models for video generation.", metadata={"source": "diffusion-video"}),
    ]
    vectorstore = InMemoryVectorStore.from_documents(documents=doc_splits,
                                                     embedding=DeterministicFakeEmbedding(size=32))
    retriever = vectorstore.as_retriever(search_kwargs={"k": 2})
    retriever_tool = create_retriever_tool(
        retriever,
        "retrieve_blog_posts",
        "Search and return information about Lilian Weng blog posts.",
    )

    def generate_query_or_respond(state: E.MessagesState):
        """Call the model to generate a response based on the current state. Given
        the question, it will decide to retrieve using the retriever tool, or simply respond to the user.
        """
        response = response_model.bind_tools([retriever_tool]).invoke(state["messages"])
        return {"messages": [response]}

    def grade_documents(state: E.MessagesState) -> Literal["generate_answer", "rewrite_question"]:
        """Determine whether the retrieved documents are relevant to the question."""
        question = state["messages"][0].content
        context = state["messages"][-1].content
        prompt = GRADE_PROMPT.format(question=question, context=context)
        response = grader_model.with_structured_output(GradeDocuments).invoke(
            [{"role": "user", "content": prompt}])
        score = response.binary_score
        if score == "yes":
            return "generate_answer"
        else:
            return "rewrite_question"

    def rewrite_question(state: E.MessagesState):
        """Rewrite the original user question."""
        messages = state["messages"]
        question = messages[0].content
        prompt = REWRITE_PROMPT.format(question=question)
        response = response_model.invoke([{"role": "user", "content": prompt}])
        return {"messages": [{"role": "user", "content": response.content}]}

    def generate_answer(state: E.MessagesState):
        """Generate an answer."""
        question = state["messages"][0].content
        context = state["messages"][-1].content
        prompt = GENERATE_PROMPT.format(question=question, context=context)
        response = response_model.invoke([{"role": "user", "content": prompt}])
        return {"messages": [response]}

    workflow = E.StateGraph(E.MessagesState)
    workflow.add_node(generate_query_or_respond)
    workflow.add_node("retrieve", ToolNode([retriever_tool]))
    workflow.add_node(rewrite_question)
    workflow.add_node(generate_answer)
    workflow.add_edge(E.START, "generate_query_or_respond")
    workflow.add_conditional_edges("generate_query_or_respond", tools_condition,
                                   {"tools": "retrieve", E.END: E.END})
    workflow.add_conditional_edges("retrieve", grade_documents)
    workflow.add_edge("generate_answer", E.END)
    workflow.add_edge("rewrite_question", "generate_query_or_respond")
    return workflow.compile()


def _rag_run(graph, question):
    out = []
    for chunk in graph.stream({"messages": [{"role": "user", "content": question}]}):
        for node, update in chunk.items():
            out.append(("Update from node", node, _m(update["messages"][-1])))
    return out


def test_agentic_rag_retrieves_grades_relevant_and_answers(differential):
    """agentic RAG: retrieve via ToolNode, the grader routes to generate_answer, updates per node."""
    def scenario(E):
        response_model = _llm(_call("a1", "retrieve_blog_posts", {"query": "types of reward hacking"}, "c1"),
                              _say("Lilian Weng categorizes reward hacking into two types.", "a2"))
        grader = _llm(structured=[GradeDocuments(binary_score="yes")])
        graph = _agentic_rag(E, response_model, grader)
        out = _rag_run(graph, "What does Lilian Weng say about types of reward hacking?")
        return out, response_model.seen, grader.seen

    differential(scenario)


def test_agentic_rag_rewrites_an_irrelevant_question_then_answers(differential):
    """agentic RAG: 'no' grade -> rewrite_question -> query again -> 'yes' -> answer."""
    def scenario(E):
        response_model = _llm(_call("a1", "retrieve_blog_posts", {"query": "meow"}, "c1"),
                              _say("What are the types of reward hacking described by Lilian Weng?", "a2"),
                              _call("a3", "retrieve_blog_posts", {"query": "reward hacking types"}, "c2"),
                              _say("Two types: misspecification and tampering.", "a4"))
        grader = _llm(structured=[GradeDocuments(binary_score="no"), GradeDocuments(binary_score="yes")])
        graph = _agentic_rag(E, response_model, grader)
        out = _rag_run(graph, "What does Lilian Weng say about types of reward hacking?")
        return out, response_model.seen, grader.seen

    differential(scenario)


def test_agentic_rag_answers_a_greeting_without_retrieving(differential):
    """agentic RAG: no tool call -> tools_condition maps to END; values stream shows both messages."""
    def scenario(E):
        response_model = _llm(_say("Hello! How can I help you today?", "a1"))
        graph = _agentic_rag(E, response_model, _llm())
        values = collect(lambda: graph.stream({"messages": [{"role": "user", "content": "hello!"}]},
                                              stream_mode="values"))
        return [[_m(m) for m in v["messages"]] for v in values]

    differential(scenario)


# --- SQL agent -----------------------------------------------------------------------------------


def _sql_db():
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript("""
        CREATE TABLE Employee (EmployeeId INTEGER PRIMARY KEY, FirstName TEXT, LastName TEXT);
        CREATE TABLE Invoice (InvoiceId INTEGER PRIMARY KEY, EmployeeId INTEGER, Total REAL, Year INTEGER);
        INSERT INTO Employee VALUES (3, 'Jane', 'Peacock'), (5, 'Steve', 'Johnson');
        INSERT INTO Invoice VALUES (1, 5, 100.0, 2009), (2, 5, 64.34, 2009), (3, 3, 90.0, 2009),
                                   (4, 3, 500.0, 2010);
    """)
    return db


def _sql_agent(E, llm):
    # docs/docs/tutorials/sql/sql-agent.md, "3. Customizing the agent" (tools over sqlite3
    # in place of langchain_community's SQLDatabaseToolkit)
    db = _sql_db()

    @tool("sql_db_list_tables")
    def list_tables_tool() -> str:
        """Input is an empty string, output is a comma-separated list of tables in the database."""
        return ", ".join(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"))

    @tool("sql_db_schema")
    def get_schema_tool(table_names: str) -> str:
        """Input to this tool is a comma-separated list of tables, output is the schema."""
        names = [t.strip() for t in table_names.split(",")]
        marks = ",".join("?" * len(names))
        rows = db.execute(f"SELECT sql FROM sqlite_master WHERE type='table' AND name IN ({marks}) ORDER BY name",
                          names)
        return "\n\n".join(r[0] for r in rows)

    @tool("sql_db_query")
    def run_query_tool(query: str) -> str:
        """Execute a SQL query against the database and get back the result."""
        try:
            return str(db.execute(query).fetchall())
        except sqlite3.Error as e:
            return f"Error: {e}"

    tools = [list_tables_tool, get_schema_tool, run_query_tool]
    get_schema_node = ToolNode([get_schema_tool], name="get_schema")
    run_query_node = ToolNode([run_query_tool], name="run_query")

    def list_tables(state: E.MessagesState):
        tool_call = {"name": "sql_db_list_tables", "args": {}, "id": "abc123", "type": "tool_call"}
        tool_call_message = AIMessage(content="", tool_calls=[tool_call], id="list-call")
        list_tables_tool = next(tool for tool in tools if tool.name == "sql_db_list_tables")
        tool_message = list_tables_tool.invoke(tool_call)
        response = AIMessage(f"Available tables: {tool_message.content}", id="list-answer")
        return {"messages": [tool_call_message, tool_message, response]}

    def call_get_schema(state: E.MessagesState):
        llm_with_tools = llm.bind_tools([get_schema_tool], tool_choice="any")
        response = llm_with_tools.invoke(state["messages"])
        return {"messages": [response]}

    generate_query_system_prompt = "You are an agent designed to interact with a SQL database ({dialect}).".format(
        dialect="sqlite")

    def generate_query(state: E.MessagesState):
        system_message = {"role": "system", "content": generate_query_system_prompt}
        llm_with_tools = llm.bind_tools([run_query_tool])
        response = llm_with_tools.invoke([system_message] + state["messages"])
        return {"messages": [response]}

    check_query_system_prompt = "You are a SQL expert. Double check the {dialect} query.".format(dialect="sqlite")

    def check_query(state: E.MessagesState):
        system_message = {"role": "system", "content": check_query_system_prompt}
        # Generate an artificial user message to check
        tool_call = state["messages"][-1].tool_calls[0]
        user_message = {"role": "user", "content": tool_call["args"]["query"]}
        llm_with_tools = llm.bind_tools([run_query_tool], tool_choice="any")
        response = llm_with_tools.invoke([system_message, user_message])
        response.id = state["messages"][-1].id
        return {"messages": [response]}

    def should_continue(state: E.MessagesState) -> Literal[E.END, "check_query"]:
        messages = state["messages"]
        last_message = messages[-1]
        if not last_message.tool_calls:
            return E.END
        else:
            return "check_query"

    builder = E.StateGraph(E.MessagesState)
    builder.add_node(list_tables)
    builder.add_node(call_get_schema)
    builder.add_node(get_schema_node, "get_schema")
    builder.add_node(generate_query)
    builder.add_node(check_query)
    builder.add_node(run_query_node, "run_query")
    builder.add_edge(E.START, "list_tables")
    builder.add_edge("list_tables", "call_get_schema")
    builder.add_edge("call_get_schema", "get_schema")
    builder.add_edge("get_schema", "generate_query")
    builder.add_conditional_edges("generate_query", should_continue)
    builder.add_edge("check_query", "run_query")
    builder.add_edge("run_query", "generate_query")
    return builder.compile()


_SALES = ("SELECT e.FirstName, e.LastName, SUM(i.Total) AS TotalSales FROM Employee e JOIN Invoice i "
          "ON e.EmployeeId = i.EmployeeId WHERE i.Year = 2009 GROUP BY e.EmployeeId ORDER BY TotalSales DESC "
          "LIMIT 1")


def test_sql_agent_lists_tables_checks_and_runs_the_query_then_answers(differential):
    """SQL agent: forced tool calls per node; check_query replaces the query message by its id."""
    def scenario(E):
        llm = _llm(_call("s1", "sql_db_schema", {"table_names": "Employee, Invoice"}, "c1"),
                   _call("g1", "sql_db_query", {"query": _SALES + ";"}, "c2"),
                   _call("k1", "sql_db_query", {"query": _SALES}, "c3"),
                   _say("Steve Johnson made the most in sales in 2009: 164.34.", "g2"))
        agent = _sql_agent(E, llm)
        question = "Which sales agent made the most in sales in 2009?"
        steps = [_m(step["messages"][-1]) for step in agent.stream(
            {"messages": [{"role": "user", "content": question}]}, stream_mode="values")]
        return steps, llm.seen

    differential(scenario)


def test_sql_agent_sees_the_database_error_and_corrects_its_query(differential):
    """SQL agent: a bad query comes back as an 'Error:' tool message; the loop tries again."""
    def scenario(E):
        bad = "SELECT Name FROM Employe"
        llm = _llm(_call("s1", "sql_db_schema", {"table_names": "Employee"}, "c1"),
                   _call("g1", "sql_db_query", {"query": bad}, "c2"),
                   _call("k1", "sql_db_query", {"query": bad}, "c3"),
                   _call("g2", "sql_db_query", {"query": "SELECT FirstName FROM Employee ORDER BY 1"}, "c4"),
                   _call("k2", "sql_db_query", {"query": "SELECT FirstName FROM Employee ORDER BY 1"}, "c5"),
                   _say("The employees are Jane and Steve.", "g3"))
        agent = _sql_agent(E, llm)
        updates = collect(lambda: agent.stream({"messages": [{"role": "user", "content": "Who works here?"}]},
                                               stream_mode="updates"))
        return [(node, [_m(m) for m in upd["messages"]]) for chunk in updates for node, upd in chunk.items()]

    differential(scenario)


# --- plan-and-execute ----------------------------------------------------------------------------


class Plan(BaseModel):
    """Plan to follow in future"""

    steps: list[str] = Field(description="different steps to follow, should be in sorted order")


class Response(BaseModel):
    """Response to user."""

    response: str


class Act(BaseModel):
    """Action to perform."""

    action: Union[Response, Plan] = Field(
        description="Action to perform. If you want to respond to user, use Response. "
        "If you need to further use tools to get the answer, use Plan.")


def test_plan_and_execute_runs_each_step_with_an_agent_and_replans_to_a_response(differential):
    """plan-and-execute: planner -> agent subgraph per step -> replanner loops until a Response."""
    def scenario(E):
        # docs/docs/tutorials/plan-and-execute/plan-and-execute.ipynb (the ReAct executor is
        # a StateGraph agent in place of create_react_agent)
        class PlanExecute(TypedDict):
            input: str
            plan: list[str]
            past_steps: Annotated[list[tuple], operator.add]
            response: str

        executor_llm = _llm(_call("e1", "search", {"query": "2024 Australian Open winner"}, "c1"),
                            _say("Jannik Sinner won the 2024 Australian Open.", "e2"),
                            _say("Jannik Sinner is from Sesto, Italy.", "e3"))
        planner = _llm(structured=[Plan(steps=["Find the 2024 Australian Open winner.",
                                               "Find the winner's hometown."])])
        replanner = _llm(structured=[Act(action=Plan(steps=["Find the winner's hometown."])),
                                     Act(action=Response(response="Sesto, Italy"))])

        def call_model(state: E.MessagesState):
            return {"messages": [executor_llm.invoke(state["messages"])]}

        ab = E.StateGraph(E.MessagesState)
        ab.add_node("agent", call_model)
        ab.add_node("tools", ToolNode([search]))
        ab.add_edge(E.START, "agent")
        ab.add_conditional_edges("agent", tools_condition)
        ab.add_edge("tools", "agent")
        agent_executor = ab.compile()

        def execute_step(state: PlanExecute):
            plan = state["plan"]
            plan_str = "\n".join(f"{i + 1}. {step}" for i, step in enumerate(plan))
            task = plan[0]
            task_formatted = f"""For the following plan:
{plan_str}\n\nYou are tasked with executing step {1}, {task}."""
            agent_response = agent_executor.invoke({"messages": [("user", task_formatted)]})
            return {"past_steps": [(task, agent_response["messages"][-1].content)]}

        def plan_step(state: PlanExecute):
            plan = planner.with_structured_output(Plan).invoke({"messages": [("user", state["input"])]})
            return {"plan": plan.steps}

        def replan_step(state: PlanExecute):
            output = replanner.with_structured_output(Act).invoke(state)
            if isinstance(output.action, Response):
                return {"response": output.action.response}
            else:
                return {"plan": output.action.steps}

        def should_end(state: PlanExecute):
            if "response" in state and state["response"]:
                return E.END
            else:
                return "agent"

        workflow = E.StateGraph(PlanExecute)
        workflow.add_node("planner", plan_step)
        workflow.add_node("agent", execute_step)
        workflow.add_node("replan", replan_step)
        workflow.add_edge(E.START, "planner")
        workflow.add_edge("planner", "agent")
        workflow.add_edge("agent", "replan")
        workflow.add_conditional_edges("replan", should_end, ["agent", E.END])
        app = workflow.compile()
        config = {"recursion_limit": 50}
        inputs = {"input": "what is the hometown of the mens 2024 Australia open winner?"}
        events = collect(lambda: app.stream(inputs, config=config))
        return events, [m[-1] for m in executor_llm.seen if isinstance(m, list)]

    differential(scenario)


# --- reflection ----------------------------------------------------------------------------------


def test_reflection_essay_loop_alternates_generate_and_reflect_async(differential):
    """reflection tutorial: async generate/reflect nodes swap message roles; stops after 6 messages."""
    async def scenario(E):
        # docs/docs/tutorials/reflection/reflection.ipynb
        llm = _llm(_say("Draft 1 of the essay.", "d1"), _say("Add more detail.", "r1"),
                   _say("Draft 2 of the essay.", "d2"), _say("Shorten the intro.", "r2"),
                   _say("Draft 3 of the essay.", "d3"))
        prompt = ChatPromptTemplate.from_messages([
            ("system", "You are an essay assistant tasked with writing excellent 5-paragraph essays."),
            MessagesPlaceholder(variable_name="messages"),
        ])
        generate = prompt | llm
        reflection_prompt = ChatPromptTemplate.from_messages([
            ("system", "You are a teacher grading an essay submission."),
            MessagesPlaceholder(variable_name="messages"),
        ])
        reflect = reflection_prompt | llm

        class State(TypedDict):
            messages: Annotated[list, E.add_messages]

        async def generation_node(state: State) -> State:
            return {"messages": [await generate.ainvoke(state["messages"])]}

        async def reflection_node(state: State) -> State:
            # Other messages we need to adjust
            cls_map = {"ai": HumanMessage, "human": AIMessage}
            # First message is the original user request. We hold it the same for all nodes
            translated = [state["messages"][0]] + [
                cls_map[msg.type](content=msg.content) for msg in state["messages"][1:]]
            res = await reflect.ainvoke(translated)
            # We treat the output of this as human feedback for the generator
            return {"messages": [HumanMessage(content=res.content)]}

        builder = E.StateGraph(State)
        builder.add_node("generate", generation_node)
        builder.add_node("reflect", reflection_node)
        builder.add_edge(E.START, "generate")

        def should_continue(state: State):
            if len(state["messages"]) > 6:
                # End after 3 iterations
                return E.END
            return "reflect"

        builder.add_conditional_edges("generate", should_continue)
        builder.add_edge("reflect", "generate")
        memory = E.InMemorySaver()
        graph = builder.compile(checkpointer=memory)
        config = _cfg("1")
        events = await acollect(lambda: graph.astream(
            {"messages": [HumanMessage(content="Generate an essay on The Little Prince.", id="h0")]},
            config))
        state = await graph.aget_state(config)
        hist = [(s.next, s.metadata["step"], len(s.values.get("messages", [])))
                async for s in graph.aget_state_history(config)]
        return events, [_m(m) for m in state.values["messages"]], hist, llm.seen

    differential(scenario)


# --- map-reduce summarization --------------------------------------------------------------------


def test_map_reduce_summarization_collapses_summaries_until_they_fit(differential):
    """LangChain summarization tutorial: Send per document, collect, collapse loop, final summary."""
    async def scenario(E):
        # python.langchain.com/docs/tutorials/summarization (langchain.chains helpers inlined)
        def summarize(inp):
            text = inp if isinstance(inp, str) else inp[-1].content
            words = text.split()
            return AIMessage(" ".join(words[: max(2, len(words) // 2)]))

        llm = Scripted(script=summarize, seen=[])
        token_max = 12

        def length_function(documents: list[Document]) -> int:
            """Get number of tokens for input contents."""
            return sum(len(doc.page_content.split()) for doc in documents)

        class OverallState(TypedDict):
            contents: list[str]
            summaries: Annotated[list, operator.add]
            collapsed_summaries: list[Document]
            final_summary: str

        class SummaryState(TypedDict):
            content: str

        async def generate_summary(state: SummaryState):
            response = await llm.ainvoke(f"Write a concise summary of the following: {state['content']}")
            return {"summaries": [response.content]}

        def map_summaries(state: OverallState):
            return [E.Send("generate_summary", {"content": content}) for content in state["contents"]]

        def collect_summaries(state: OverallState):
            return {"collapsed_summaries": [Document(summary) for summary in state["summaries"]]}

        async def _reduce(inp) -> str:
            response = await llm.ainvoke(f"Distill these summaries: {inp}")
            return response.content

        def split_list_of_docs(docs, length_func, max_len):
            out, cur = [], []
            for d in docs:
                if cur and length_func(cur + [d]) > max_len:
                    out.append(cur)
                    cur = []
                cur.append(d)
            return out + ([cur] if cur else [])

        async def collapse_summaries(state: OverallState):
            doc_lists = split_list_of_docs(state["collapsed_summaries"], length_function, token_max)
            results = []
            for doc_list in doc_lists:
                results.append(Document(await _reduce(" ".join(d.page_content for d in doc_list))))
            return {"collapsed_summaries": results}

        def should_collapse(state: OverallState) -> Literal["collapse_summaries", "generate_final_summary"]:
            num_tokens = length_function(state["collapsed_summaries"])
            if num_tokens > token_max:
                return "collapse_summaries"
            else:
                return "generate_final_summary"

        async def generate_final_summary(state: OverallState):
            response = await _reduce(" ".join(d.page_content for d in state["collapsed_summaries"]))
            return {"final_summary": response}

        graph = E.StateGraph(OverallState)
        graph.add_node("generate_summary", generate_summary)
        graph.add_node("collect_summaries", collect_summaries)
        graph.add_node("collapse_summaries", collapse_summaries)
        graph.add_node("generate_final_summary", generate_final_summary)
        graph.add_conditional_edges(E.START, map_summaries, ["generate_summary"])
        graph.add_edge("generate_summary", "collect_summaries")
        graph.add_conditional_edges("collect_summaries", should_collapse)
        graph.add_conditional_edges("collapse_summaries", should_collapse)
        graph.add_edge("generate_final_summary", E.END)
        app = graph.compile()
        contents = ["LangGraph is a library for building stateful multi actor applications with LLMs",
                    "Checkpointers persist the graph state after every super step of a run",
                    "Interrupts pause a graph so that a human can review and resume the run",
                    "Streaming emits updates values messages and custom data while the graph runs"]
        steps = await acollect(lambda: app.astream({"contents": contents}, {"recursion_limit": 10}))
        final = await app.ainvoke({"contents": contents}, {"recursion_limit": 10})
        # the summaries of one step finish in any order: compare each step as a multiset
        return (steps_as_multisets(steps, lambda c: "generate_summary" not in c), final)

    differential(scenario)


# --- workflows and agents (docs/docs/tutorials/workflows.md) ----------------------------------------


def test_workflow_prompt_chaining_gate_decides_whether_to_improve_the_joke(differential):
    """workflows: prompt chaining with a gate; one run improves and polishes, one exits early."""
    def scenario(E):
        class State(TypedDict):
            topic: str
            joke: str
            improved_joke: str
            final_joke: str

        def build(llm):
            def generate_joke(state: State):
                """First LLM call to generate initial joke"""
                msg = llm.invoke(f"Write a short joke about {state['topic']}")
                return {"joke": msg.content}

            def check_punchline(state: State):
                """Gate function to check if the joke has a punchline"""
                # Simple check - does the joke contain "?" or "!"
                if "?" in state["joke"] or "!" in state["joke"]:
                    return "Pass"
                return "Fail"

            def improve_joke(state: State):
                """Second LLM call to improve the joke"""
                msg = llm.invoke(f"Make this joke funnier by adding wordplay: {state['joke']}")
                return {"improved_joke": msg.content}

            def polish_joke(state: State):
                """Third LLM call for final polish"""
                msg = llm.invoke(f"Add a surprising twist to this joke: {state['improved_joke']}")
                return {"final_joke": msg.content}

            workflow = E.StateGraph(State)
            workflow.add_node("generate_joke", generate_joke)
            workflow.add_node("improve_joke", improve_joke)
            workflow.add_node("polish_joke", polish_joke)
            workflow.add_edge(E.START, "generate_joke")
            workflow.add_conditional_edges("generate_joke", check_punchline, {"Fail": "improve_joke", "Pass": E.END})
            workflow.add_edge("improve_joke", "polish_joke")
            workflow.add_edge("polish_joke", E.END)
            return workflow.compile()

        chain = build(_llm(_say("Cats sleep a lot", "j1"), _say("Cats are purr-fect sleepers", "j2"),
                           _say("Cats are purr-fect sleepers, until 5am", "j3")))
        state = chain.invoke({"topic": "cats"})
        gated = build(_llm(_say("Why do cats nap? Because they can!", "j4")))
        return state, collect(lambda: gated.stream({"topic": "cats"}, stream_mode="values"))

    differential(scenario)


def test_workflow_parallelization_aggregator_combines_three_llm_calls(differential):
    """workflows: three nodes fan out from START and the aggregator joins them."""
    def scenario(E):
        class State(TypedDict):
            topic: str
            joke: str
            story: str
            poem: str
            combined_output: str

        def by_prompt(prompt):
            kind = prompt.split()[1]
            return AIMessage(f"a {kind} about {prompt.split()[-1]}")

        llm = Scripted(script=lambda msgs: by_prompt(msgs[-1].content), seen=[])

        def call_llm_1(state: State):
            """First LLM call to generate initial joke"""
            msg = llm.invoke(f"Write joke about {state['topic']}")
            return {"joke": msg.content}

        def call_llm_2(state: State):
            """Second LLM call to generate story"""
            msg = llm.invoke(f"Write story about {state['topic']}")
            return {"story": msg.content}

        def call_llm_3(state: State):
            """Third LLM call to generate poem"""
            msg = llm.invoke(f"Write poem about {state['topic']}")
            return {"poem": msg.content}

        def aggregator(state: State):
            """Combine the joke and story into a single output"""
            combined = f"Here's a story, joke, and poem about {state['topic']}!\n\n"
            combined += f"STORY:\n{state['story']}\n\n"
            combined += f"JOKE:\n{state['joke']}\n\n"
            combined += f"POEM:\n{state['poem']}"
            return {"combined_output": combined}

        parallel_builder = E.StateGraph(State)
        parallel_builder.add_node("call_llm_1", call_llm_1)
        parallel_builder.add_node("call_llm_2", call_llm_2)
        parallel_builder.add_node("call_llm_3", call_llm_3)
        parallel_builder.add_node("aggregator", aggregator)
        parallel_builder.add_edge(E.START, "call_llm_1")
        parallel_builder.add_edge(E.START, "call_llm_2")
        parallel_builder.add_edge(E.START, "call_llm_3")
        parallel_builder.add_edge("call_llm_1", "aggregator")
        parallel_builder.add_edge("call_llm_2", "aggregator")
        parallel_builder.add_edge("call_llm_3", "aggregator")
        parallel_builder.add_edge("aggregator", E.END)
        parallel_workflow = parallel_builder.compile()
        state = parallel_workflow.invoke({"topic": "cats"})
        # the three LLM nodes run in a thread pool: their updates come in completion order
        updates = collect(lambda: parallel_workflow.stream({"topic": "dogs"}))
        return state["combined_output"], steps_as_multisets(updates, lambda c: "aggregator" in c)

    differential(scenario)


class Route(BaseModel):
    step: Literal["poem", "story", "joke"] = Field(None, description="The next step in the routing process")


def test_workflow_routing_with_structured_output_picks_one_writer(differential):
    """workflows: a structured-output router returns the next node's name from a conditional edge."""
    def scenario(E):
        class State(TypedDict):
            input: str
            decision: str
            output: str

        llm = _llm(_say("Why did the cat cross the road?", "o1"), _say("Roses are red, cats are too.", "o2"),
                   structured=[Route(step="joke"), Route(step="poem")])
        router = llm.with_structured_output(Route)

        def llm_call_1(state: State):
            """Write a story"""
            return {"output": llm.invoke(state["input"]).content}

        def llm_call_2(state: State):
            """Write a joke"""
            return {"output": llm.invoke(state["input"]).content}

        def llm_call_3(state: State):
            """Write a poem"""
            return {"output": llm.invoke(state["input"]).content}

        def llm_call_router(state: State):
            """Route the input to the appropriate node"""
            decision = router.invoke([
                SystemMessage(content="Route the input to story, joke, or poem based on the user's request."),
                HumanMessage(content=state["input"]),
            ])
            return {"decision": decision.step}

        def route_decision(state: State):
            # Return the node name you want to visit next
            if state["decision"] == "story":
                return "llm_call_1"
            elif state["decision"] == "joke":
                return "llm_call_2"
            elif state["decision"] == "poem":
                return "llm_call_3"

        router_builder = E.StateGraph(State)
        router_builder.add_node("llm_call_1", llm_call_1)
        router_builder.add_node("llm_call_2", llm_call_2)
        router_builder.add_node("llm_call_3", llm_call_3)
        router_builder.add_node("llm_call_router", llm_call_router)
        router_builder.add_edge(E.START, "llm_call_router")
        router_builder.add_conditional_edges("llm_call_router", route_decision,
                                             {"llm_call_1": "llm_call_1", "llm_call_2": "llm_call_2",
                                              "llm_call_3": "llm_call_3"})
        router_builder.add_edge("llm_call_1", E.END)
        router_builder.add_edge("llm_call_2", E.END)
        router_builder.add_edge("llm_call_3", E.END)
        router_workflow = router_builder.compile()
        first = router_workflow.invoke({"input": "Write me a joke about cats"})
        second = collect(lambda: router_workflow.stream({"input": "Write me a poem about cats"},
                                                        stream_mode=["updates", "values"]))
        return first, second

    differential(scenario)


class Section(BaseModel):
    name: str = Field(description="Name for this section of the report.")
    description: str = Field(description="Brief overview of the main topics and concepts of the section.")


class Sections(BaseModel):
    sections: list[Section] = Field(description="Sections of the report.")


def test_workflow_orchestrator_workers_write_sections_with_send(differential):
    """workflows: the orchestrator plans sections; Send gives each worker its own WorkerState."""
    def scenario(E):
        llm = Scripted(script=lambda msgs: AIMessage(f"## {msgs[-1].content.split(': ')[1].split(' and')[0]}\n..."),
                       structured=iter([Sections(sections=[
                           Section(name="Intro", description="what scaling laws are"),
                           Section(name="Results", description="compute-optimal training"),
                           Section(name="Outlook", description="open questions")])]), seen=[])
        planner = llm.with_structured_output(Sections)

        class State(TypedDict):
            topic: str  # Report topic
            sections: list[Section]  # List of report sections
            completed_sections: Annotated[list, operator.add]  # All workers write to this key in parallel
            final_report: str  # Final report

        class WorkerState(TypedDict):
            section: Section
            completed_sections: Annotated[list, operator.add]

        def orchestrator(state: State):
            """Orchestrator that generates a plan for the report"""
            report_sections = planner.invoke([
                SystemMessage(content="Generate a plan for the report."),
                HumanMessage(content=f"Here is the report topic: {state['topic']}"),
            ])
            return {"sections": report_sections.sections}

        def llm_call(state: WorkerState):
            """Worker writes a section of the report"""
            section = llm.invoke([
                SystemMessage(content="Write a report section following the provided name and description."),
                HumanMessage(content=f"Here is the section name: {state['section'].name} and description: "
                                     f"{state['section'].description}"),
            ])
            return {"completed_sections": [section.content]}

        def synthesizer(state: State):
            """Synthesize full report from sections"""
            completed_sections = state["completed_sections"]
            completed_report_sections = "\n\n---\n\n".join(completed_sections)
            return {"final_report": completed_report_sections}

        def assign_workers(state: State):
            """Assign a worker to each section in the plan"""
            return [E.Send("llm_call", {"section": s}) for s in state["sections"]]

        orchestrator_worker_builder = E.StateGraph(State)
        orchestrator_worker_builder.add_node("orchestrator", orchestrator)
        orchestrator_worker_builder.add_node("llm_call", llm_call)
        orchestrator_worker_builder.add_node("synthesizer", synthesizer)
        orchestrator_worker_builder.add_edge(E.START, "orchestrator")
        orchestrator_worker_builder.add_conditional_edges("orchestrator", assign_workers, ["llm_call"])
        orchestrator_worker_builder.add_edge("llm_call", "synthesizer")
        orchestrator_worker_builder.add_edge("synthesizer", E.END)
        orchestrator_worker = orchestrator_worker_builder.compile(checkpointer=E.InMemorySaver())
        config = _cfg("report")
        state = orchestrator_worker.invoke({"topic": "Create a report on LLM scaling laws"}, config)
        snap = orchestrator_worker.get_state(config)
        history = [(s.next, s.metadata["step"], sorted(t.name for t in s.tasks))
                   for s in orchestrator_worker.get_state_history(config)]
        return state["final_report"], state["sections"], _snap(snap), history

    differential(scenario)


class Feedback(BaseModel):
    grade: Literal["funny", "not funny"] = Field(description="Decide if the joke is funny or not.")
    feedback: str = Field(description="If the joke is not funny, provide feedback on how to improve it.")


def test_workflow_evaluator_optimizer_loops_until_the_joke_is_funny(differential):
    """workflows: generator and evaluator loop on a conditional edge until the grade passes."""
    def scenario(E):
        class State(TypedDict):
            joke: str
            topic: str
            feedback: str
            funny_or_not: str

        llm = _llm(_say("Cats are cats.", "j1"), _say("Cats: purr-manently unimpressed.", "j2"),
                   structured=[Feedback(grade="not funny", feedback="Add wordplay."),
                               Feedback(grade="funny", feedback="")])
        evaluator = llm.with_structured_output(Feedback)

        def llm_call_generator(state: State):
            """LLM generates a joke"""
            if state.get("feedback"):
                msg = llm.invoke(f"Write a joke about {state['topic']} but take into account the feedback: "
                                 f"{state['feedback']}")
            else:
                msg = llm.invoke(f"Write a joke about {state['topic']}")
            return {"joke": msg.content}

        def llm_call_evaluator(state: State):
            """LLM evaluates the joke"""
            grade = evaluator.invoke(f"Grade the joke {state['joke']}")
            return {"funny_or_not": grade.grade, "feedback": grade.feedback}

        def route_joke(state: State):
            """Route back to joke generator or end based upon feedback from the evaluator"""
            if state["funny_or_not"] == "funny":
                return "Accepted"
            elif state["funny_or_not"] == "not funny":
                return "Rejected + Feedback"

        optimizer_builder = E.StateGraph(State)
        optimizer_builder.add_node("llm_call_generator", llm_call_generator)
        optimizer_builder.add_node("llm_call_evaluator", llm_call_evaluator)
        optimizer_builder.add_edge(E.START, "llm_call_generator")
        optimizer_builder.add_edge("llm_call_generator", "llm_call_evaluator")
        optimizer_builder.add_conditional_edges("llm_call_evaluator", route_joke,
                                                {"Accepted": E.END, "Rejected + Feedback": "llm_call_generator"})
        optimizer_workflow = optimizer_builder.compile()
        return collect(lambda: optimizer_workflow.stream({"topic": "Cats"}, stream_mode="debug")), llm.seen

    differential(scenario)


def test_workflow_functional_api_parallel_calls_and_evaluator_loop(differential):
    """workflows (functional API): task futures gathered by an entrypoint; an evaluator loop."""
    def scenario(E):
        task, entrypoint = E.func.task, E.func.entrypoint
        llm = Scripted(script=lambda msgs: AIMessage(f"<{msgs[-1].content}>"),
                       structured=iter([Feedback(grade="not funny", feedback="shorter"),
                                        Feedback(grade="funny", feedback="")]), seen=[])
        evaluator = llm.with_structured_output(Feedback)

        @task
        def call_llm_1(topic: str):
            """First LLM call to generate initial joke"""
            msg = llm.invoke(f"Write a joke about {topic}")
            return msg.content

        @task
        def call_llm_2(topic: str):
            """Second LLM call to generate story"""
            msg = llm.invoke(f"Write a story about {topic}")
            return msg.content

        @task
        def aggregator(topic, joke, story):
            """Combine the joke and story into a single output"""
            return f"Here's a story and joke about {topic}!\n\nSTORY:\n{story}\n\nJOKE:\n{joke}"

        @entrypoint()
        def parallel_workflow(topic: str):
            joke_fut = call_llm_1(topic)
            story_fut = call_llm_2(topic)
            return aggregator(topic, joke_fut.result(), story_fut.result()).result()

        @task
        def llm_call_generator(topic: str, feedback: Feedback):
            """LLM generates a joke"""
            if feedback:
                msg = llm.invoke(f"Write a joke about {topic} but take into account the feedback: "
                                 f"{feedback.feedback}")
            else:
                msg = llm.invoke(f"Write a joke about {topic}")
            return msg.content

        @task
        def llm_call_evaluator(joke: str):
            """LLM evaluates the joke"""
            return evaluator.invoke(f"Grade the joke {joke}")

        @entrypoint()
        def optimizer_workflow(topic: str):
            feedback = None
            while True:
                joke = llm_call_generator(topic, feedback).result()
                feedback = llm_call_evaluator(joke).result()
                if feedback.grade == "funny":
                    break
            return joke

        # the two LLM tasks run in a thread pool: their updates come in completion order
        par = collect(lambda: parallel_workflow.stream("cats", stream_mode="updates"))
        opt = collect(lambda: optimizer_workflow.stream("cats", stream_mode="updates"))
        return steps_as_multisets(par, lambda c: "aggregator" in c or "parallel_workflow" in c), opt

    differential(scenario)


# --- graph API how-tos (docs/docs/how-tos/graph-api.md) -------------------------------------------


def test_defer_node_waits_for_the_longer_branch_before_running(differential):
    """graph-api 'Defer node execution': d runs once, after both a->b->b_2 and a->c finished."""
    def scenario(E):
        class State(TypedDict):
            # The operator.add reducer fn makes this append-only
            aggregate: Annotated[list, operator.add]

        def a(state: State):
            print(f'Adding "A" to {state["aggregate"]}')
            return {"aggregate": ["A"]}

        def b(state: State):
            return {"aggregate": ["B"]}

        def b_2(state: State):
            return {"aggregate": ["B_2"]}

        def c(state: State):
            return {"aggregate": ["C"]}

        def d(state: State):
            return {"aggregate": ["D"]}

        builder = E.StateGraph(State)
        builder.add_node(a)
        builder.add_node(b)
        builder.add_node(b_2)
        builder.add_node(c)
        builder.add_node(d, defer=True)
        builder.add_edge(E.START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("a", "c")
        builder.add_edge("b", "b_2")
        builder.add_edge("b_2", "d")
        builder.add_edge("c", "d")
        builder.add_edge("d", E.END)
        graph = builder.compile(checkpointer=E.InMemorySaver())
        out = graph.invoke({"aggregate": []}, _cfg("d"))
        hist = [(s.next, s.metadata["step"], s.values) for s in graph.get_state_history(_cfg("d"))]
        # b and c run in one thread-pool step: compare each step's updates as a multiset
        ups = collect(lambda: graph.stream({"aggregate": []}, _cfg("d2")))
        return out, hist, steps_as_multisets(ups, lambda u: "a" in u or "b_2" in u or "d" in u)

    differential(scenario)


def test_conditional_branching_fans_out_to_the_nodes_the_router_names(differential):
    """graph-api 'Conditional branching': the router returns a list of nodes to run in parallel."""
    def scenario(E):
        class State(TypedDict):
            aggregate: Annotated[list, operator.add]
            # Add a key to the state. We will set this key to determine
            # how we branch.
            which: str

        def node(name):
            def run(state: State):
                return {"aggregate": [name]}
            return run

        builder = E.StateGraph(State)
        for name in "abcde":
            builder.add_node(name, node(name.upper()))
        builder.add_edge(E.START, "a")

        def route_bc_or_cd(state: State) -> list[str]:
            if state["which"] == "cd":
                return ["c", "d"]
            return ["b", "c"]

        intermediates = ["b", "c", "d"]
        builder.add_conditional_edges("a", route_bc_or_cd, intermediates)
        for node_name in intermediates:
            builder.add_edge(node_name, "e")
        builder.add_edge("e", E.END)
        graph = builder.compile()
        return graph.invoke({"aggregate": [], "which": "bc"}), graph.invoke({"aggregate": [], "which": "cd"})

    differential(scenario, expect=({"aggregate": ["A", "B", "C", "E"], "which": "bc"},
                                   {"aggregate": ["A", "C", "D", "E"], "which": "cd"}))


def test_remaining_steps_returns_the_state_before_the_recursion_limit(differential):
    """graph-api 'Impose a recursion limit': route to END when remaining_steps <= 2; without it, the error."""
    def scenario(E):
        class State(TypedDict):
            value: str
            remaining_steps: E.RemainingSteps

        def reasoning_node(state: State) -> dict:
            # RemainingSteps is automatically populated by LangGraph
            remaining = state["remaining_steps"]
            # Check if we're running low on steps
            if remaining <= 2:
                return {"value": "Reached step limit - wrapping up"}
            # Normal processing
            return {"value": f"Processing - {remaining} steps remaining"}

        def route_decision(state: State) -> Literal["reasoning_node", "__end__"]:
            if state["remaining_steps"] <= 2:
                return E.END
            else:
                return "reasoning_node"

        builder = E.StateGraph(State)
        builder.add_node("reasoning_node", reasoning_node)
        builder.add_edge(E.START, "reasoning_node")
        builder.add_conditional_edges("reasoning_node", route_decision)
        graph = builder.compile()
        result = graph.invoke({"value": "start"}, {"recursion_limit": 10})
        steps = collect(lambda: graph.stream({"value": "start"}, {"recursion_limit": 5}))

        # without the check: the looping graph hits the limit
        plain = E.StateGraph(State)
        plain.add_node("reasoning_node", reasoning_node)
        plain.add_edge(E.START, "reasoning_node")
        plain.add_edge("reasoning_node", "reasoning_node")
        err = collect(lambda: plain.compile().stream({"value": "start"}, {"recursion_limit": 4}))
        return result, steps, err

    differential(scenario)


def test_private_state_passes_between_nodes_and_stays_out_of_the_output(differential):
    """graph-api 'Pass private state between nodes': node_1 writes private_data only node_2 reads."""
    def scenario(E):
        log = []

        # The overall state of the graph (this is the public state shared across nodes)
        class OverallState(TypedDict):
            a: str

        # Output from node_1 contains private data that is not part of the overall state
        class Node1Output(TypedDict):
            private_data: str

        # The private data is only shared between node_1 and node_2
        def node_1(state: OverallState) -> Node1Output:
            output = {"private_data": "set by node_1"}
            print(f"Entered node `node_1`:\n\tInput: {state}.\n\tReturned: {output}")
            log.append(("node_1", state))
            return output

        # Node 2 input only requests the private data available after node_1
        class Node2Input(TypedDict):
            private_data: str

        def node_2(state: Node2Input) -> OverallState:
            output = {"a": "set by node_2"}
            print(f"Entered node `node_2`:\n\tInput: {state}.\n\tReturned: {output}")
            log.append(("node_2", state))
            return output

        # Node 3 only has access to the overall state (no access to private data from node_1)
        def node_3(state: OverallState) -> OverallState:
            output = {"a": "set by node_3"}
            log.append(("node_3", state))
            return output

        builder = E.StateGraph(OverallState).add_sequence([node_1, node_2, node_3])
        builder.add_edge(E.START, "node_1")
        graph = builder.compile()
        response = graph.invoke({"a": "set at start"})
        chunks = collect(lambda: graph.stream({"a": "set at start"}, stream_mode=["updates", "values"]))
        return response, chunks, log

    differential(scenario)


def test_runtime_context_picks_the_model_provider_and_system_message(differential):
    """graph-api 'Add runtime configuration': context_schema + Runtime[Context] choose the model."""
    def scenario(E):
        @dataclass
        class ContextSchema:
            model_provider: str = "anthropic"
            system_message: str | None = None

        MODELS = {
            "anthropic": Scripted(script=lambda msgs: AIMessage(f"claude saw {[m.type for m in msgs]}"), seen=[]),
            "openai": Scripted(script=lambda msgs: AIMessage(f"gpt saw {[m.type for m in msgs]}"), seen=[]),
        }

        def call_model(state: E.MessagesState, runtime: E.Runtime[ContextSchema]):
            model = MODELS[runtime.context.model_provider]
            messages = state["messages"]
            if (system_message := runtime.context.system_message):
                messages = [SystemMessage(system_message)] + messages
            response = model.invoke(messages)
            return {"messages": [response]}

        builder = E.StateGraph(E.MessagesState, context_schema=ContextSchema)
        builder.add_node("model", call_model)
        builder.add_edge(E.START, "model")
        builder.add_edge("model", E.END)
        graph = builder.compile()
        input_message = {"role": "user", "content": "hi"}
        outs = [graph.invoke({"messages": [input_message]}, context=ctx)["messages"][-1].content
                for ctx in ({"model_provider": "openai"}, ContextSchema(),
                            {"model_provider": "openai", "system_message": "Respond in Italian."})]
        return outs

    differential(scenario, expect=["gpt saw ['human']", "claude saw ['human']", "gpt saw ['system', 'human']"])


def test_command_in_a_node_updates_state_and_routes_in_one_return(differential):
    """graph-api 'Combine control flow and state updates with Command': node_a picks b or c."""
    def scenario(E):
        class State(TypedDict):
            foo: str

        picks = iter(["b", "c"])

        def node_a(state: State) -> E.Command[Literal["node_b", "node_c"]]:
            value = next(picks)
            if value == "b":
                goto = "node_b"
            else:
                goto = "node_c"
            # note how Command allows you to BOTH update the graph state AND route to the next node
            return E.Command(
                # this is the state update
                update={"foo": value},
                # this is a replacement for an edge
                goto=goto,
            )

        def node_b(state: State):
            return {"foo": state["foo"] + "b"}

        def node_c(state: State):
            return {"foo": state["foo"] + "c"}

        builder = E.StateGraph(State)
        builder.add_edge(E.START, "node_a")
        builder.add_node(node_a)
        builder.add_node(node_b)
        builder.add_node(node_c)
        # NOTE: there are no edges between nodes A, B and C!
        graph = builder.compile()
        drawn = sorted((e.source, e.target, e.conditional) for e in graph.get_graph().edges)
        return graph.invoke({"foo": ""}), collect(lambda: graph.stream({"foo": ""})), drawn

    differential(scenario, expect=({"foo": "bb"}, [{"node_a": {"foo": "c"}}, {"node_c": {"foo": "cc"}}], [
        ("__start__", "node_a", False), ("node_a", "node_b", True), ("node_a", "node_c", True),
        ("node_b", "__end__", False), ("node_c", "__end__", False)]))


def test_summarize_conversation_history_removes_old_messages(differential):
    """memory how-to 'Summarize messages': after 6 messages, summarize and delete all but the last 2."""
    def scenario(E):
        # docs/docs/how-tos/memory/add-memory.md ("Summarize messages")
        class State(E.MessagesState):
            summary: str

        model = Scripted(script=lambda msgs: AIMessage(f"reply {len(msgs)}", id=f"r{len(msgs)}-{msgs[-1].content[:8]}"),
                         seen=[])

        def call_model(state: State):
            # If a summary exists, we add this in as a system message
            summary = state.get("summary", "")
            if summary:
                system_message = f"Summary of conversation earlier: {summary}"
                messages = [SystemMessage(content=system_message)] + state["messages"]
            else:
                messages = state["messages"]
            response = model.invoke(messages)
            return {"messages": [response]}

        def should_continue(state: State) -> Literal["summarize_conversation", E.END]:
            """Return the next node to execute."""
            messages = state["messages"]
            # If there are more than six messages, then we summarize the conversation
            if len(messages) > 6:
                return "summarize_conversation"
            return E.END

        def summarize_conversation(state: State):
            summary = state.get("summary", "")
            if summary:
                summary_message = (f"This is summary of the conversation to date: {summary}\n\n"
                                   "Extend the summary by taking into account the new messages above:")
            else:
                summary_message = "Create a summary of the conversation above:"
            messages = state["messages"] + [HumanMessage(content=summary_message)]
            response = model.invoke(messages)
            # We now need to delete messages that we no longer want to show up
            delete_messages = [RemoveMessage(id=m.id) for m in state["messages"][:-2]]
            return {"summary": response.content, "messages": delete_messages}

        workflow = E.StateGraph(State)
        workflow.add_node("conversation", call_model)
        workflow.add_node(summarize_conversation)
        workflow.add_edge(E.START, "conversation")
        workflow.add_conditional_edges("conversation", should_continue)
        workflow.add_edge("summarize_conversation", E.END)
        app = workflow.compile(checkpointer=E.InMemorySaver())
        config = _cfg("4")
        turns = []
        for i, text in enumerate(["hi! I'm bob", "what's my name?", "i like the celtics!",
                                  "i like how much they win"]):
            input_message = HumanMessage(content=text, id=f"h{i}")
            turns.append(collect(lambda m=input_message: app.stream({"messages": [m]}, config,
                                                                     stream_mode="updates")))
        values = app.get_state(config).values
        return turns, [_m(m) for m in values["messages"]], values.get("summary"), _hist(app, config)

    differential(scenario)


# --- streaming how-tos (docs/docs/how-tos/streaming.md) -------------------------------------------


def _joke_graph(E, checkpointer=None):
    class State(TypedDict):
        topic: str
        joke: str

    def refine_topic(state: State):
        return {"topic": state["topic"] + " and cats"}

    def generate_joke(state: State):
        return {"joke": f"This is a joke about {state['topic']}"}

    return (E.StateGraph(State)
            .add_node(refine_topic)
            .add_node(generate_joke)
            .add_edge(E.START, "refine_topic")
            .add_edge("refine_topic", "generate_joke")
            .add_edge("generate_joke", E.END)
            .compile(checkpointer=checkpointer))


def test_stream_the_joke_graph_in_every_graph_state_mode(differential):
    """streaming: updates, values, several modes at once, debug and checkpoints/tasks with a saver."""
    def scenario(E):
        graph = _joke_graph(E, checkpointer=E.InMemorySaver())
        out = {}
        for mode in ("updates", "values", "debug", "checkpoints", "tasks"):
            out[mode] = collect(lambda mode=mode: graph.stream({"topic": "ice cream"}, _cfg(mode), stream_mode=mode))
        out["multi"] = collect(lambda: graph.stream({"topic": "ice cream"}, _cfg("multi"),
                                                    stream_mode=["updates", "custom", "values"]))
        return out

    differential(scenario)


def test_stream_llm_tokens_filtered_by_tags_from_two_models_in_one_node(differential):
    """streaming 'Filter by LLM invocation': tags on each model separate the interleaved tokens."""
    async def scenario(E):
        import asyncio

        # The joke_model is tagged with "joke" / the poem_model with "poem"
        joke_model = Scripted(script=iter([AIMessage("Why did the cat sit on the mouse? To catch it!",
                                                     id="jm")]), seen=[]).with_config(tags=["joke"])
        poem_model = Scripted(script=iter([AIMessage("Cats in the moonlight softly purr", id="pm")]),
                              seen=[]).with_config(tags=["poem"])

        class State(TypedDict):
            topic: str
            joke: str
            poem: str

        async def call_model(state, config):
            topic = state["topic"]
            joke_response, poem_response = await asyncio.gather(
                joke_model.ainvoke([{"role": "user", "content": f"Write a joke about {topic}"}], config),
                poem_model.ainvoke([{"role": "user", "content": f"Write a poem about {topic}"}], config),
            )
            return {"joke": joke_response.content, "poem": poem_response.content}

        graph = E.StateGraph(State).add_node(call_model).add_edge(E.START, "call_model").compile()
        joke, poem, rest = [], [], []
        async for msg, metadata in graph.astream({"topic": "cats"}, stream_mode="messages"):
            if metadata["tags"] == ["joke"]:
                joke.append((msg.content, metadata["langgraph_node"], metadata["langgraph_step"]))
            elif metadata["tags"] == ["poem"]:
                poem.append((msg.content, metadata["langgraph_node"]))
            else:
                rest.append((type(msg).__name__, msg.content))
        return joke, poem, rest

    differential(scenario)


def test_stream_llm_tokens_filtered_by_the_node_that_produced_them(differential):
    """streaming 'Filter by node': keep only the write_poem node's tokens while write_joke runs too."""
    def scenario(E):
        model = Scripted(script=lambda msgs: AIMessage(
            "Cats nap and purr" if "poem" in msgs[-1].content else "Cats knock things off tables",
            id="poem" if "poem" in msgs[-1].content else "joke"), seen=[])

        class State(TypedDict):
            topic: str
            joke: str
            poem: str

        def write_joke(state):
            topic = state["topic"]
            joke_response = model.invoke([{"role": "user", "content": f"Write a joke about {topic}"}])
            return {"joke": joke_response.content}

        def write_poem(state):
            topic = state["topic"]
            poem_response = model.invoke([{"role": "user", "content": f"Write a short poem about {topic}"}])
            return {"poem": poem_response.content}

        graph = (E.StateGraph(State)
                 .add_node(write_joke)
                 .add_node(write_poem)
                 # write both the joke and the poem concurrently
                 .add_edge(E.START, "write_joke")
                 .add_edge(E.START, "write_poem")
                 .compile())
        poem_tokens, joke_meta = [], []
        for msg, metadata in graph.stream({"topic": "cats"}, stream_mode="messages"):
            if msg.content and metadata["langgraph_node"] == "write_poem":
                poem_tokens.append((msg.content, metadata["langgraph_triggers"], metadata["ls_model_type"],
                                    metadata["langgraph_path"]))
            elif metadata["langgraph_node"] == "write_joke":
                joke_meta.append(msg.content)
        return poem_tokens, joke_meta

    differential(scenario)


def test_stream_subgraph_outputs_with_namespaces(differential):
    """streaming 'Stream subgraph outputs': subgraphs=True yields (namespace, chunk) pairs."""
    def scenario(E):
        # Define subgraph
        class SubgraphState(TypedDict):
            foo: str  # note that this key is shared with the parent graph state
            bar: str

        def subgraph_node_1(state: SubgraphState):
            return {"bar": "bar"}

        def subgraph_node_2(state: SubgraphState):
            return {"foo": state["foo"] + state["bar"]}

        subgraph_builder = E.StateGraph(SubgraphState)
        subgraph_builder.add_node(subgraph_node_1)
        subgraph_builder.add_node(subgraph_node_2)
        subgraph_builder.add_edge(E.START, "subgraph_node_1")
        subgraph_builder.add_edge("subgraph_node_1", "subgraph_node_2")
        subgraph = subgraph_builder.compile()

        # Define parent graph
        class ParentState(TypedDict):
            foo: str

        def node_1(state: ParentState):
            return {"foo": "hi! " + state["foo"]}

        builder = E.StateGraph(ParentState)
        builder.add_node("node_1", node_1)
        builder.add_node("node_2", subgraph)
        builder.add_edge(E.START, "node_1")
        builder.add_edge("node_1", "node_2")
        graph = builder.compile()
        return (collect(lambda: graph.stream({"foo": "foo"}, subgraphs=True)),
                collect(lambda: graph.stream({"foo": "foo"}, stream_mode=["updates", "debug"], subgraphs=True)))

    differential(scenario)


def test_stream_custom_data_written_by_a_tool_and_a_node(differential):
    """streaming 'Stream custom data': get_stream_writer in a tool run by ToolNode and in a node."""
    def scenario(E):
        @tool
        def query_database(query: str) -> str:
            """Query the database."""
            writer = E.get_stream_writer()
            writer({"data": "Retrieved 0/100 records", "type": "progress"})
            # perform query
            writer({"data": "Retrieved 100/100 records", "type": "progress"})
            return "some-answer"

        llm = _llm(_call("a1", "query_database", {"query": "SELECT *"}, "c1"), _say("Done: some-answer", "a2"),
                   _call("a3", "query_database", {"query": "SELECT *"}, "c2"), _say("Done: some-answer", "a4"))

        def agent(state: E.MessagesState):
            writer = E.get_stream_writer()
            writer({"custom_key": "Generating custom data inside node"})
            return {"messages": [llm.invoke(state["messages"])]}

        g = E.StateGraph(E.MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([query_database]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        graph = g.compile()
        inputs = {"messages": [{"role": "user", "content": "query the database"}]}
        custom = collect(lambda: graph.stream(inputs, stream_mode="custom"))
        mixed = [(mode, chunk if mode == "custom" else sorted(chunk))
                 for mode, chunk in graph.stream(inputs, stream_mode=["updates", "custom"])]
        return custom, mixed

    differential(scenario, expect=([
        {"custom_key": "Generating custom data inside node"},
        {"data": "Retrieved 0/100 records", "type": "progress"},
        {"data": "Retrieved 100/100 records", "type": "progress"},
        {"custom_key": "Generating custom data inside node"}], [
        ("custom", {"custom_key": "Generating custom data inside node"}), ("updates", ["agent"]),
        ("custom", {"data": "Retrieved 0/100 records", "type": "progress"}),
        ("custom", {"data": "Retrieved 100/100 records", "type": "progress"}), ("updates", ["tools"]),
        ("custom", {"custom_key": "Generating custom data inside node"}), ("updates", ["agent"])]))


# --- functional API tutorials ----------------------------------------------------------------------


@tool
def get_weather(location: str):
    """Call to get the weather from a specific location."""
    # This is a placeholder for the actual implementation
    if any(city in location.lower() for city in ["sf", "san francisco"]):
        return "It's sunny!"
    elif "boston" in location.lower():
        return "It's rainy!"
    else:
        return f"I am not sure what the weather is in {location}"


def _functional_react(E, model, checkpointer=None):
    # docs/docs/tutorials/functional_api/react_functional_api.ipynb (+ "Add thread-level persistence")
    task, entrypoint = E.func.task, E.func.entrypoint
    tools = [get_weather]
    tools_by_name = {tool.name: tool for tool in tools}

    @task
    def call_model(messages):
        """Call model with a sequence of messages."""
        response = model.bind_tools(tools).invoke(messages)
        return response

    @task
    def call_tool(tool_call):
        tool = tools_by_name[tool_call["name"]]
        observation = tool.invoke(tool_call["args"])
        return ToolMessage(content=observation, tool_call_id=tool_call["id"])

    @entrypoint(checkpointer=checkpointer)
    def agent(messages, previous):
        if previous is not None:
            messages = E.add_messages(previous, messages)
        llm_response = call_model(messages).result()
        while True:
            if not llm_response.tool_calls:
                break
            # Execute tools
            tool_result_futures = [call_tool(tool_call) for tool_call in llm_response.tool_calls]
            tool_results = [fut.result() for fut in tool_result_futures]
            # Append to message list
            messages = E.add_messages(messages, [llm_response, *tool_results])
            # Call model again
            llm_response = call_model(messages).result()
        # Generate final response
        messages = E.add_messages(messages, llm_response)
        return entrypoint.final(value=llm_response, save=messages)

    return agent


def test_functional_react_agent_calls_tools_in_parallel_and_remembers_the_thread(differential):
    """functional ReAct: tool-call futures, a `previous`-based memory and `entrypoint.final`."""
    def scenario(E):
        model = _llm(AIMessage("", id="a1", tool_calls=[
                         {"name": "get_weather", "args": {"location": "sf"}, "id": "c1", "type": "tool_call"},
                         {"name": "get_weather", "args": {"location": "boston"}, "id": "c2", "type": "tool_call"}]),
                     _say("Sunny in SF, rainy in Boston.", "a2"),
                     _say("You asked about SF and Boston.", "a3"))
        agent = _functional_react(E, model, checkpointer=E.InMemorySaver())
        config = _cfg("1")
        user_message = {"role": "user", "content": "What's the weather in san francisco and boston?"}
        # the two tool calls run in a thread pool: their updates come in completion order
        first = collect(lambda: agent.stream([user_message], config))
        second = collect(lambda: agent.stream([{"role": "user", "content": "Which cities did I ask about?"}],
                                              config))
        saved = agent.get_state(config).values
        return (steps_as_multisets(first, lambda c: "call_model" in c or "agent" in c), second,
                [_m(m) for m in saved], model.seen[-1])

    differential(scenario)


def test_functional_react_agent_streams_tokens_from_the_model_task(differential):
    """functional ReAct: stream_mode='messages' gives tokens with the task's node metadata."""
    def scenario(E):
        model = _llm(_call("a1", "get_weather", {"location": "boston"}, "c1"), _say("It is rainy in Boston.", "a2"))
        agent = _functional_react(E, model)
        out = []
        for msg, metadata in agent.stream([{"role": "user", "content": "Weather in Boston?"}],
                                          stream_mode="messages"):
            out.append((type(msg).__name__, msg.content, metadata["langgraph_node"], metadata["langgraph_step"],
                        getattr(msg, "tool_call_chunks", None)))
        return out

    differential(scenario)


def test_functional_api_review_tool_calls_with_interrupt_before_running_them(differential):
    """functional HITL 'review tool calls': interrupt per call; accept one, edit another."""
    def scenario(E):
        # docs/docs/how-tos/human_in_the_loop/add-human-in-the-loop.md ("Review tool calls", functional API)
        task, entrypoint = E.func.task, E.func.entrypoint
        model = _llm(AIMessage("", id="a1", tool_calls=[
                         {"name": "get_weather", "args": {"location": "sf"}, "id": "c1", "type": "tool_call"}]),
                     _say("It's rainy in Boston.", "a2"))
        tools_by_name = {"get_weather": get_weather}

        @task
        def call_model(messages):
            return model.bind_tools([get_weather]).invoke(messages)

        @task
        def call_tool(tool_call):
            tool = tools_by_name[tool_call["name"]]
            observation = tool.invoke(tool_call["args"])
            return ToolMessage(content=observation, tool_call_id=tool_call["id"])

        def review_tool_call(tool_call) -> Union[dict, ToolMessage]:
            """Review a tool call, returning a validated version."""
            human_review = E.interrupt({"question": "Is this correct?", "tool_call": tool_call})
            review_action = human_review["action"]
            review_data = human_review.get("data")
            if review_action == "continue":
                return tool_call
            elif review_action == "update":
                updated_tool_call = {**tool_call, **{"args": review_data}}
                return updated_tool_call
            elif review_action == "feedback":
                return ToolMessage(content=review_data, name=tool_call["name"], tool_call_id=tool_call["id"])

        @entrypoint(checkpointer=E.InMemorySaver())
        def agent(messages, previous):
            if previous is not None:
                messages = E.add_messages(previous, messages)
            llm_response = call_model(messages).result()
            while True:
                if not llm_response.tool_calls:
                    break
                # Review tool calls
                tool_results = []
                tool_calls = []
                for i, tool_call in enumerate(llm_response.tool_calls):
                    review = review_tool_call(tool_call)
                    if isinstance(review, ToolMessage):
                        tool_results.append(review)
                    else:  # is a validated tool call
                        tool_calls.append(review)
                        if review != tool_call:
                            llm_response.tool_calls[i] = review  # update message
                # Execute remaining tool calls
                tool_result_futures = [call_tool(tool_call) for tool_call in tool_calls]
                remaining_tool_results = [fut.result() for fut in tool_result_futures]
                # Append to message list
                messages = E.add_messages(messages, [llm_response, *tool_results, *remaining_tool_results])
                # Call model again
                llm_response = call_model(messages).result()
            # Generate final response
            messages = E.add_messages(messages, llm_response)
            return entrypoint.final(value=llm_response, save=messages)

        config = _cfg("1")
        first = collect(lambda: agent.stream([{"role": "user", "content": "What's the weather in SF?"}], config))
        paused = agent.get_state(config)
        second = collect(lambda: agent.stream(
            E.Command(resume={"action": "update", "data": {"location": "Boston"}}), config))
        return first, _snap(paused), second, [_m(m) for m in agent.get_state(config).values], model.seen[-1]

    differential(scenario)


def test_graph_api_review_tool_calls_routes_with_command_from_the_review_node(differential):
    """HITL 'Review tool calls' (graph API): human_review_node interrupts and returns Command(goto=...)."""
    def scenario(E):
        # docs/docs/how-tos/human_in_the_loop/review-tool-calls.ipynb
        model = _llm(_call("a1", "get_weather", {"location": "sf"}, "c1"), _say("It's sunny in SF!", "a2"),
                     _call("a3", "get_weather", {"location": "San Francisco"}, "c2"),
                     _say("Please ask about a city in the US.", "a4"))

        def call_llm(state):
            return {"messages": [model.bind_tools([get_weather]).invoke(state["messages"])]}

        def human_review_node(state) -> E.Command[Literal["call_llm", "run_tool"]]:
            last_message = state["messages"][-1]
            tool_call = last_message.tool_calls[-1]
            # this is the value we'll be providing via Command(resume=<human_review>)
            human_review = E.interrupt({"question": "Is this correct?",
                                        # Surface tool calls for review
                                        "tool_call": tool_call})
            review_action = human_review["action"]
            review_data = human_review.get("data")
            # if approved, call the tool
            if review_action == "continue":
                return E.Command(goto="run_tool")
            # update the AI message AND call tools
            elif review_action == "update":
                updated_message = {
                    "role": "ai",
                    "content": last_message.content,
                    "tool_calls": [{"id": tool_call["id"], "name": tool_call["name"],
                                    # This the update provided by the human
                                    "args": review_data}],
                    # This is important - this needs to be the same as the message you replacing!
                    # Otherwise, it will show up as a separate message
                    "id": last_message.id,
                }
                return E.Command(goto="run_tool", update={"messages": [updated_message]})
            # provide feedback to LLM
            elif review_action == "feedback":
                # NOTE: we're adding feedback message as a ToolMessage
                # to preserve the correct order in the message history
                # (AI messages with tool calls need to be followed by tool call messages)
                tool_message = {"role": "tool",
                                # This is our natural language feedback
                                "content": review_data,
                                "name": tool_call["name"],
                                "tool_call_id": tool_call["id"]}
                return E.Command(goto="call_llm", update={"messages": [tool_message]})

        def run_tool(state):
            new_messages = []
            tools = {"get_weather": get_weather}
            tool_calls = state["messages"][-1].tool_calls
            for tool_call in tool_calls:
                tool = tools[tool_call["name"]]
                result = tool.invoke(tool_call["args"])
                new_messages.append({"role": "tool", "name": tool_call["name"], "content": result,
                                     "tool_call_id": tool_call["id"]})
            return {"messages": new_messages}

        def route_after_llm(state) -> Literal[E.END, "human_review_node"]:
            if len(state["messages"][-1].tool_calls) == 0:
                return E.END
            else:
                return "human_review_node"

        builder = E.StateGraph(E.MessagesState)
        builder.add_node(call_llm)
        builder.add_node(run_tool)
        builder.add_node(human_review_node)
        builder.add_edge(E.START, "call_llm")
        builder.add_conditional_edges("call_llm", route_after_llm)
        builder.add_edge("run_tool", "call_llm")
        memory = E.InMemorySaver()
        graph = builder.compile(checkpointer=memory)

        out = []
        thread = _cfg("2")
        out.append(collect(lambda: graph.stream({"messages": [{"role": "user", "content": "weather in sf?"}]},
                                                thread, stream_mode="updates")))
        out.append(_snap(graph.get_state(thread)))
        out.append(collect(lambda: graph.stream(E.Command(resume={"action": "update", "data": {"location": "San Francisco, USA"}}),
                                                thread, stream_mode="updates")))
        thread = _cfg("5")
        out.append(collect(lambda: graph.stream({"messages": [{"role": "user", "content": "weather in sf?"}]},
                                                thread, stream_mode="updates")))
        out.append(collect(lambda: graph.stream(
            E.Command(resume={"action": "feedback",
                              "data": "User requested changes: use <city, country> format for location"}),
            thread, stream_mode="updates")))
        out.append([_m(m) for m in graph.get_state(thread).values["messages"]])
        out.append(_hist(graph, thread))
        return out

    differential(scenario)


# --- the same tutorials streamed token by token ----------------------------------------------------


def _tokens(stream):
    return [(type(m).__name__, m.content, md["langgraph_node"], md["langgraph_step"], md.get("tags"),
             getattr(m, "tool_call_id", None)) for m, md in stream]


def test_quickstart_human_assistance_streamed_as_tokens_across_the_interrupt(differential):
    """get-started 4 with stream_mode='messages': tokens before the pause, tool result and answer after."""
    def scenario(E):
        llm = _llm(_call("a1", "human_assistance", {"query": "expert guidance"}, "c1"),
                   _say("The experts recommend LangGraph.", "a2"))
        graph = _chatbot(E, llm, [search, _human_assistance_tool(E)])
        config = _cfg("1")
        first = _tokens(graph.stream({"messages": [{"role": "user", "content": "I need expert guidance."}]},
                                     config, stream_mode="messages"))
        second = _tokens(graph.stream(E.Command(resume={"data": "Use LangGraph."}), config,
                                      stream_mode="messages"))
        return first, second

    differential(scenario)


def test_agentic_rag_streamed_as_tokens_with_the_rewritten_question(differential):
    """agentic RAG with stream_mode='messages': model tokens, the retriever's ToolMessage, the
    rewritten question returned as a dict, and no tokens from the structured-output grader."""
    def scenario(E):
        response_model = _llm(_call("a1", "retrieve_blog_posts", {"query": "meow"}, "c1"),
                              _say("What types of reward hacking exist?", "a2"),
                              _call("a3", "retrieve_blog_posts", {"query": "reward hacking types"}, "c2"),
                              _say("Two types.", "a4"))
        grader = _llm(structured=[GradeDocuments(binary_score="no"), GradeDocuments(binary_score="yes")])
        graph = _agentic_rag(E, response_model, grader)
        return _tokens(graph.stream({"messages": [{"role": "user", "content": "Types of reward hacking?"}]},
                                    stream_mode="messages"))

    differential(scenario)


def test_sql_agent_streamed_as_tokens_where_check_query_reuses_the_message_id(differential):
    """SQL agent with stream_mode='messages' + updates: list_tables' own messages, forced tool calls,
    and check_query's reply that takes the id of the message it replaces."""
    def scenario(E):
        llm = _llm(_call("s1", "sql_db_schema", {"table_names": "Employee, Invoice"}, "c1"),
                   _call("g1", "sql_db_query", {"query": _SALES + ";"}, "c2"),
                   _call("k1", "sql_db_query", {"query": _SALES}, "c3"),
                   _say("Steve Johnson sold the most.", "g2"))
        agent = _sql_agent(E, llm)
        chunks = collect(lambda: agent.stream({"messages": [{"role": "user", "content": "Top seller in 2009?"}]},
                                              stream_mode=["messages", "updates"]))
        return [(mode, _tokens([c])[0] if mode == "messages" else
                 {n: [_m(m) for m in u["messages"]] for n, u in c.items()}) for mode, c in chunks]

    differential(scenario)


def test_quickstart_chatbot_astream_tokens_and_values_over_two_turns(differential):
    """get-started chatbot run with `astream(stream_mode=['messages', 'values'])` on one thread."""
    async def scenario(E):
        llm = _llm(_call("a1", "search", {"query": "LangGraph"}, "c1"), _say("LangGraph builds agents.", "a2"),
                   _say("You asked about LangGraph.", "a3"))
        graph = _chatbot(E, llm, [search])
        config = _cfg("1")
        out = []
        for text in ("What is LangGraph?", "What did I ask?"):
            async for mode, chunk in graph.astream({"messages": [{"role": "user", "content": text}]}, config,
                                                   stream_mode=["messages", "values"]):
                if mode == "messages":
                    out.append((mode, _tokens([chunk])[0]))
                else:
                    out.append((mode, [_m(m) for m in chunk["messages"]]))
        state = await graph.aget_state(config)
        return out, _snap(state)

    differential(scenario)


# --- long-term memory (docs/docs/how-tos/memory/add-memory.md, "Add long-term memory") -------------


def test_long_term_memory_store_shared_across_threads_of_one_user(differential):
    """add-memory: a node reads and writes the store by user_id from the runtime context; a new
    thread of the same user sees the memory."""
    def scenario(E):
        from langgraph.store.memory import InMemoryStore

        @dataclass
        class Context:
            user_id: str

        model = Scripted(script=lambda msgs: AIMessage(msgs[0].content), seen=[])
        counter = iter(range(100))

        def call_model(state: E.MessagesState, runtime: E.Runtime[Context]):
            user_id = runtime.context.user_id
            namespace = ("memories", user_id)
            memories = runtime.store.search(namespace, query=str(state["messages"][-1].content))
            info = "\n".join([d.value["data"] for d in memories])
            system_msg = f"You are a helpful assistant talking to the user. User info: {info}"
            # Store new memories if the user asks the model to remember
            last_message = state["messages"][-1]
            if "remember" in last_message.content.lower():
                memory = "User name is Bob"
                runtime.store.put(namespace, f"mem-{next(counter)}", {"data": memory})
            response = model.invoke([{"role": "system", "content": system_msg}] + state["messages"])
            return {"messages": response}

        builder = E.StateGraph(E.MessagesState, context_schema=Context)
        builder.add_node(call_model)
        builder.add_edge(E.START, "call_model")
        store = InMemoryStore()
        graph = builder.compile(checkpointer=E.InMemorySaver(), store=store)
        out = []
        for tid, text in (("1", "Hi! Remember: my name is Bob"), ("2", "what is my name?")):
            for chunk in graph.stream({"messages": [{"role": "user", "content": text}]}, _cfg(tid),
                                      stream_mode="values", context=Context(user_id="1")):
                out.append(_m(chunk["messages"][-1]))
        other_user = graph.invoke({"messages": [{"role": "user", "content": "what is my name?"}]}, _cfg("3"),
                                  context=Context(user_id="2"))
        items = [(i.namespace, i.key, i.value) for i in store.search(("memories", "1"))]
        return out, _m(other_user["messages"][-1]), items

    differential(scenario)


# --- subgraph state (docs/docs/how-tos/subgraph.md / subgraphs-manage-state.ipynb) -----------------


def _weather_graph(E, model):
    class RouterState(E.MessagesState):
        route: Literal["weather", "other"]

    class Router(TypedDict):
        route: Literal["weather", "other"]

    class SubState(TypedDict):
        city: str
        messages: Annotated[list, E.add_messages]

    def model_node(state: SubState):
        result = model.invoke(state["messages"])
        return {"city": result.tool_calls[0]["args"]["city"]}

    def weather_node(state: SubState):
        result = get_weather.invoke({"location": state["city"]})
        return {"messages": [{"role": "assistant", "content": result}]}

    subgraph = E.StateGraph(SubState)
    subgraph.add_node(model_node)
    subgraph.add_node(weather_node)
    subgraph.add_edge(E.START, "model_node")
    subgraph.add_edge("model_node", "weather_node")
    subgraph.add_edge("weather_node", E.END)
    subgraph = subgraph.compile(interrupt_before=["weather_node"])

    def router_node(state: RouterState):
        system_message = "Classify the incoming query as either about weather or not."
        messages = [{"role": "system", "content": system_message}] + state["messages"]
        route = model.with_structured_output(Router).invoke(messages)
        return {"route": route["route"]}

    def normal_llm_node(state: RouterState):
        response = model.invoke(state["messages"])
        return {"messages": [response]}

    def route_after_prediction(state: RouterState) -> Literal["weather_graph", "normal_llm_node"]:
        if state["route"] == "weather":
            return "weather_graph"
        else:
            return "normal_llm_node"

    graph = E.StateGraph(RouterState)
    graph.add_node(router_node)
    graph.add_node(normal_llm_node)
    graph.add_node("weather_graph", subgraph)
    graph.add_edge(E.START, "router_node")
    graph.add_conditional_edges("router_node", route_after_prediction)
    graph.add_edge("normal_llm_node", E.END)
    graph.add_edge("weather_graph", E.END)
    return graph.compile(checkpointer=E.InMemorySaver())


def test_subgraph_breakpoint_state_is_inspected_updated_and_resumed_from_the_parent(differential):
    """subgraphs-manage-state: interrupt_before in the subgraph, get_state(subgraphs=True),
    update_state on the subgraph's config, then resume from the parent."""
    def scenario(E):
        model = _llm(_call("m1", "get_weather", {"city": "San Francisco"}, "c1"),
                     structured=[{"route": "weather"}])
        graph = _weather_graph(E, model)
        config = _cfg("1")
        inputs = {"messages": [{"role": "user", "content": "what's the weather in sf"}]}
        first = collect(lambda: graph.stream(inputs, config=config, stream_mode="updates", subgraphs=True))
        state = graph.get_state(config, subgraphs=True)
        sub = state.tasks[0].state
        new_cfg = graph.update_state(sub.config, {"city": "la"})
        after_update = _snap(graph.get_state(config, subgraphs=True))
        resumed = collect(lambda: graph.stream(None, config=config, stream_mode="values", subgraphs=True))
        return (first, _snap(state), sorted(new_cfg["configurable"]), new_cfg["configurable"]["checkpoint_ns"]
                .split(":")[0], after_update, resumed, _snap(graph.get_state(config)))

    differential(scenario)


def test_subgraph_node_is_acted_as_from_the_parent_with_update_state_as_node(differential):
    """subgraphs-manage-state: `update_state(sub_config, values, as_node='weather_node')` skips the node."""
    def scenario(E):
        model = _llm(_call("m1", "get_weather", {"city": "San Francisco"}, "c1"),
                     structured=[{"route": "weather"}])
        graph = _weather_graph(E, model)
        config = _cfg("14")
        inputs = {"messages": [{"role": "user", "content": "what's the weather in sf"}]}
        first = collect(lambda: graph.stream(inputs, config=config, stream_mode="updates", subgraphs=True))
        state = graph.get_state(config, subgraphs=True)
        graph.update_state(state.tasks[0].state.config,
                           {"messages": [{"role": "assistant", "content": "rainy", "id": "fake"}]},
                           as_node="weather_node")
        resumed = collect(lambda: graph.stream(None, config=config, stream_mode="updates", subgraphs=True))
        final = graph.get_state(config)
        return first, resumed, [_m(m) for m in final.values["messages"]], _snap(final)

    differential(scenario)


def test_wait_for_user_input_ask_human_tool_routes_to_a_node_that_interrupts(differential):
    """wait-user-input: the agent calls an AskHuman tool; an ask_human node interrupts and answers it."""
    def scenario(E):
        # docs/docs/how-tos/human_in_the_loop/wait-user-input.ipynb ("Agent" section)
        class AskHuman(BaseModel):
            """Ask the human a question"""

            question: str

        model = _llm(_call("a1", "AskHuman", {"question": "Where are you located?"}, "c1"),
                     _call("a2", "search", {"query": "weather in san francisco"}, "c2"),
                     _say("It's sunny in San Francisco.", "a3"))
        model = model.bind_tools([search, AskHuman])

        def should_continue(state):
            messages = state["messages"]
            last_message = messages[-1]
            # If there is no function call, then we finish
            if not last_message.tool_calls:
                return E.END
            # If tool call is asking Human, we return that node
            # You could also add logic here to let some system know that there's something that requires Human input
            # For example, send a slack message, etc
            elif last_message.tool_calls[0]["name"] == "AskHuman":
                return "ask_human"
            # Otherwise if there is, we continue
            else:
                return "action"

        def call_model(state):
            messages = state["messages"]
            response = model.invoke(messages)
            # We return a list, because this will get added to the existing list
            return {"messages": [response]}

        # We define a fake node to ask the human
        def ask_human(state):
            tool_call_id = state["messages"][-1].tool_calls[0]["id"]
            ask = AskHuman.model_validate(state["messages"][-1].tool_calls[0]["args"])
            location = E.interrupt(ask.question)
            tool_message = [{"tool_call_id": tool_call_id, "type": "tool", "content": location}]
            return {"messages": tool_message}

        workflow = E.StateGraph(E.MessagesState)
        workflow.add_node("agent", call_model)
        workflow.add_node("action", ToolNode([search]))
        workflow.add_node("ask_human", ask_human)
        workflow.add_edge(E.START, "agent")
        workflow.add_conditional_edges("agent", should_continue, path_map=["ask_human", "action", E.END])
        workflow.add_edge("action", "agent")
        workflow.add_edge("ask_human", "agent")
        app = workflow.compile(checkpointer=E.InMemorySaver())
        config = _cfg("2")
        out = [[_m(e["messages"][-1]) for e in app.stream(
            {"messages": [("user", "Ask the user where they are, then look up the weather there")]},
            config, stream_mode="values")]]
        out.append(app.get_state(config).next)
        out.append([_m(e["messages"][-1]) for e in app.stream(E.Command(resume="san francisco"), config,
                                                              stream_mode="values")])
        out.append(_hist(app, config))
        return out

    differential(scenario)


# --- customer support bot, part 2 (docs/docs/tutorials/customer-support/customer-support.ipynb) ----


def test_customer_support_bot_confirms_tool_use_with_interrupt_before_tools(differential):
    """customer-support part 2: a tool node with error fallbacks, `interrupt_before=['tools']`,
    'y' continues with `invoke(None)`, a refusal answers the call with a ToolMessage."""
    def scenario(E):
        db = {"flights": [{"ticket": "7240005432906569", "flight": "LX0112", "seat": "18E"}]}

        @tool
        def fetch_user_flight_information() -> list[dict]:
            """Fetch all tickets for the user along with corresponding flight information."""
            return db["flights"]

        @tool
        def update_ticket_to_new_flight(ticket_no: str, new_flight_id: str) -> str:
            """Update the user's ticket to a new valid flight."""
            for f in db["flights"]:
                if f["ticket"] == ticket_no:
                    f["flight"] = new_flight_id
                    return "Ticket successfully updated to new flight."
            raise ValueError(f"No ticket found for the given ticket number: {ticket_no}")

        def handle_tool_error(state) -> dict:
            error = state.get("error")
            tool_calls = state["messages"][-1].tool_calls
            return {"messages": [ToolMessage(content=f"Error: {repr(error)}\n please fix your mistakes.",
                                             tool_call_id=tc["id"]) for tc in tool_calls]}

        def create_tool_node_with_fallback(tools: list) -> dict:
            return ToolNode(tools).with_fallbacks([RunnableLambda(handle_tool_error)], exception_key="error")

        class State(TypedDict):
            messages: Annotated[list[AnyMessage], E.add_messages]
            user_info: str

        llm = _llm(_call("a1", "update_ticket_to_new_flight", {"ticket_no": "bad", "new_flight_id": "LX0113"}, "c1"),
                   _call("a2", "update_ticket_to_new_flight",
                         {"ticket_no": "7240005432906569", "new_flight_id": "LX0113"}, "c2"),
                   _say("Your ticket is now on LX0113.", "a3"),
                   _call("a4", "update_ticket_to_new_flight",
                         {"ticket_no": "7240005432906569", "new_flight_id": "LX9999"}, "c3"),
                   _say("OK, I did not change it.", "a5"))

        class Assistant:
            def __init__(self, runnable):
                self.runnable = runnable

            def __call__(self, state: State, config):
                while True:
                    result = self.runnable.invoke(state)
                    # If the LLM happens to return an empty response, we will re-prompt it
                    # for an actual response.
                    if not result.tool_calls and (not result.content or isinstance(result.content, list)
                                                  and not result.content[0].get("text")):
                        messages = state["messages"] + [("user", "Respond with a real output.")]
                        state = {**state, "messages": messages}
                    else:
                        break
                return {"messages": result}

        primary_assistant_prompt = ChatPromptTemplate.from_messages([
            ("system", "You are a helpful customer support assistant for Swiss Airlines.\n\n"
                       "Current user:\n<User>\n{user_info}\n</User>"),
            ("placeholder", "{messages}"),
        ])
        part_2_assistant_runnable = primary_assistant_prompt | llm.bind_tools(
            [fetch_user_flight_information, update_ticket_to_new_flight])

        builder = E.StateGraph(State)

        def user_info(state: State):
            return {"user_info": str(fetch_user_flight_information.invoke({}))}

        # NEW: The fetch_user_info node runs first, meaning our assistant can see the user's flight information without
        # having to take an action
        builder.add_node("fetch_user_info", user_info)
        builder.add_edge(E.START, "fetch_user_info")
        builder.add_node("assistant", Assistant(part_2_assistant_runnable))
        builder.add_node("tools", create_tool_node_with_fallback(
            [fetch_user_flight_information, update_ticket_to_new_flight]))
        builder.add_edge("fetch_user_info", "assistant")
        builder.add_conditional_edges("assistant", tools_condition)
        builder.add_edge("tools", "assistant")
        memory = E.InMemorySaver()
        part_2_graph = builder.compile(
            checkpointer=memory,
            # NEW: The graph will always halt before executing the "tools" node.
            # The user can approve or reject (or even alter the request) before
            # the assistant continues
            interrupt_before=["tools"],
        )
        config = _cfg("cs")
        out = []
        approvals = iter(["y", "y", "n"])
        for question in ["Change my flight to LX0113", "Now move it to LX9999"]:
            events = part_2_graph.stream({"messages": ("user", question)}, config, stream_mode="values")
            out.append([_m(e["messages"][-1]) for e in events])
            snapshot = part_2_graph.get_state(config)
            while snapshot.next:
                # We have an interrupt! The agent is trying to use a tool, and the user can approve or deny it
                user_input = next(approvals)
                if user_input.strip() == "y":
                    # Just continue
                    result = part_2_graph.invoke(None, config)
                else:
                    # Satisfy the tool invocation by
                    # providing instructions on the requested changes / explanation
                    result = part_2_graph.invoke(
                        {"messages": [ToolMessage(
                            tool_call_id=snapshot.values["messages"][-1].tool_calls[0]["id"],
                            content=f"API call denied by user. Reasoning: '{user_input}'. Continue assisting, "
                                    "accounting for the user's input.")]},
                        config)
                out.append(("resumed", user_input, _m(result["messages"][-1])))
                snapshot = part_2_graph.get_state(config)
        return out, db, _hist(part_2_graph, config)

    ref = differential(scenario)
    assert ref[1] == {"flights": [{"ticket": "7240005432906569", "flight": "LX0113", "seat": "18E"}]}


def test_functional_chatbot_second_turn_streams_only_the_new_reply(differential):
    """functional memory: on turn two the task gets the saved history; tokens come only from the
    new reply and the saved human messages are not re-emitted as messages."""
    def scenario(E):
        task, entrypoint = E.func.task, E.func.entrypoint
        model = _llm(_say("Hi Bob!", "r1"), _say("Your name is Bob.", "r2"))

        @task
        def call_model(messages: list[AnyMessage]):
            response = model.invoke(messages)
            return response

        @entrypoint(checkpointer=E.InMemorySaver())
        def workflow(inputs: list[AnyMessage], *, previous: list[AnyMessage]):
            if previous:
                inputs = E.add_messages(previous, inputs)
            response = call_model(inputs).result()
            return entrypoint.final(value=response, save=E.add_messages(inputs, response))

        config = _cfg("1")
        out = []
        for text in ("hi! I'm bob", "what's my name?"):
            input_message = {"role": "user", "content": text}
            out.append(_tokens(workflow.stream([input_message], config, stream_mode="messages")))
        return out, [_m(m) for m in workflow.get_state(config).values]

    differential(scenario)


def test_weather_router_streams_subgraph_tokens_with_their_namespace(differential):
    """subgraph streaming: stream_mode='messages' with subgraphs=True tags each token with the
    subgraph's namespace; without subgraphs, only the parent's own messages come."""
    def scenario(E):
        def run(subgraphs):
            model = _llm(_call("m1", "get_weather", {"city": "Boston"}, "c1"), structured=[{"route": "weather"}])
            graph = _weather_graph(E, model)
            config = _cfg(f"w{subgraphs}")
            inputs = {"messages": [{"role": "user", "content": "what's the weather in boston", "id": "u1"}]}
            out = []
            for _ in range(2):
                for chunk in graph.stream(inputs, config, stream_mode="messages", subgraphs=subgraphs):
                    ns, (msg, md) = chunk if subgraphs else ((), chunk)
                    out.append((tuple(s.split(":")[0] for s in ns), type(msg).__name__, msg.content,
                                md["langgraph_node"], md["langgraph_checkpoint_ns"].split(":")[0]))
                inputs = None  # resume past the breakpoint
            return out

        return run(True), run(False)

    differential(scenario)

"""LangChain's "agents-from-scratch" e-mail assistant, run on LangGraph and on lgnb.

The course (github.com/langchain-ai/agents-from-scratch, `src/email_assistant/`, driven
by `notebooks/hitl.ipynb` and `notebooks/memory.ipynb`) builds three assistants, retold
here with the same graph shapes and API uses, prompts shortened:

* `email_assistant`: a triage router (a `with_structured_output(RouterSchema)` model)
  returning `Command(goto=..., update=...)` to the response agent or END; the response
  agent is a compiled `StateGraph` added as a node: `llm_call` (a model bound to the tools
  with `tool_choice="any"`) and `environment` (runs the calls) until the model calls Done.
* `email_assistant_hitl`: notify goes to `triage_interrupt_handler`, which asks the user
  with an Agent Inbox request (`interrupt([request])[0]`: ignore or respond); the response
  agent's `interrupt_handler` asks before each `write_email` / `schedule_meeting` /
  `Question` call (`accept`, `edit`, `response`, `ignore`, as each tool's config allows)
  and runs `check_calendar_availability` at once.
* `email_assistant_hitl_memory`: the same, with an `InMemoryStore` injected into the nodes
  (`store: BaseStore`): the triage, response and calendar preferences are read from it
  (created with defaults on first use) and rewritten by a
  `with_structured_output(UserPreferences)` model after each edit, response and ignore.

The course drives them as the notebooks do: `graph.stream(input, config)` in "updates"
mode, `Command(resume=[{"type": ..., "args": ...}])` after each `__interrupt__` chunk,
`graph.get_state(config)`, the store's `get`/`search`. Observed: every chunk, `get_state`
(values, next, tasks with their interrupts, also with `subgraphs=True`) at each pause, the
final state, the store's content, what each scripted model was sent (and bound) and the
e-mails and meetings the tools sent, on `InMemorySaver` and on each engine's SQLite saver.
Only ids and timestamps are normalized (by the harness).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import json
import warnings
from datetime import datetime
from typing import Literal

import pytest
from _agent_scenarios import calls as _calls
from _agent_scenarios import replies as _replies
from _agent_scenarios import saver as _saver
from _diff import acollect, capture, collect, snapshot_summary
from _scripted import Scripted
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

# the course builds its graphs with `StateGraph(State, input=StateInput)` (deprecated since
# LangGraph 0.5; both engines warn alike)
warnings.filterwarnings("ignore", message=".*`input` is deprecated.*")

# --- the course's prompts and defaults (placeholders) ------------------------------------------

BACKGROUND = "I'm Lance, a software engineer at LangChain."
TRIAGE_SYSTEM = "Triage Lance's e-mail.\n<background>{background}</background>\n<rules>{triage_instructions}</rules>"
TRIAGE_USER = "From: {author}\nTo: {to}\nSubject: {subject}\n{email_thread}"
AGENT_SYSTEM = ("You are Lance's assistant.\n{tools_prompt}\n<background>{background}</background>\n"
                "<response>{response_preferences}</response>\n<calendar>{cal_preferences}</calendar>")
TOOLS_PROMPT = "1. write_email 2. schedule_meeting 3. check_calendar_availability 4. Question 5. Done"
MEMORY_UPDATE = "Update the user's profile.\n<profile>{current_profile}</profile>\n<namespace>{namespace}</namespace>"
REINFORCE = "never overwrite the whole profile"
DEFAULT_TRIAGE = "Respond to meeting requests; notify about announcements; ignore newsletters."
DEFAULT_RESPONSE = "Be concise and *friendly*."
DEFAULT_CAL = "30 minute meetings are preferred."
TRIAGE_NS = ("email_assistant", "triage_preferences")
RESPONSE_NS = ("email_assistant", "response_preferences")
CAL_NS = ("email_assistant", "cal_preferences")


class RouterSchema(BaseModel):
    """Analyze the unread email and route it according to its content."""

    reasoning: str = Field(description="Step-by-step reasoning behind the classification.")
    classification: Literal["ignore", "respond", "notify"] = Field(description="ignore, notify or respond")


class UserPreferences(BaseModel):
    """Updated user preferences based on user's feedback."""

    chain_of_thought: str = Field(description="Reasoning about which user preferences to update")
    user_preferences: str = Field(description="Updated user preferences")


# --- the course's utils ---------------------------------------------------------------------


def parse_email(email_input):
    return email_input["author"], email_input["to"], email_input["subject"], email_input["email_thread"]


def format_email_markdown(subject, author, to, email_thread):
    return f"\n\n**Subject**: {subject}\n**From**: {author}\n**To**: {to}\n\n{email_thread}\n\n---\n"


def format_for_display(tool_call):
    args = tool_call["args"]
    if tool_call["name"] == "write_email":
        return f"# Email Draft\n\n**To**: {args.get('to')}\n**Subject**: {args.get('subject')}\n\n{args.get('content')}\n"
    if tool_call["name"] == "schedule_meeting":
        return (f"# Calendar Invite\n\n**Meeting**: {args.get('subject')}\n**Attendees**: "
                f"{', '.join(args.get('attendees'))}\n**Duration**: {args.get('duration_minutes')} minutes\n"
                f"**Day**: {args.get('preferred_day')}\n")
    if tool_call["name"] == "Question":
        return f"# Question for User\n\n{args.get('content')}\n"
    return f"# Tool Call: {tool_call['name']}\n\nArguments:\n{json.dumps(args, indent=2)}\n"


def make_tools(outbox):
    """The course's tools (`tools/default/`); what they send is appended to `outbox`."""

    @tool
    def write_email(to: str, subject: str, content: str) -> str:
        """Write and send an email."""
        outbox.append(("write_email", {"to": to, "subject": subject, "content": content}))
        return f"Email sent to {to} with subject '{subject}' and content: {content}"

    @tool
    def schedule_meeting(attendees: list[str], subject: str, duration_minutes: int, preferred_day: datetime,
                         start_time: int) -> str:
        """Schedule a calendar meeting."""
        outbox.append(("schedule_meeting", {"attendees": attendees, "subject": subject,
                                            "minutes": duration_minutes, "day": preferred_day.strftime("%Y-%m-%d")}))
        date_str = preferred_day.strftime("%A, %B %d, %Y")
        return (f"Meeting '{subject}' scheduled on {date_str} at {start_time} for {duration_minutes} minutes "
                f"with {len(attendees)} attendees")

    @tool
    def check_calendar_availability(day: str) -> str:
        """Check calendar availability for a given day."""
        return f"Available times on {day}: 9:00 AM, 2:00 PM, 4:00 PM"

    @tool
    class Question(BaseModel):
        """Question to ask user."""

        content: str

    @tool
    class Done(BaseModel):
        """E-mail has been sent."""

        done: bool

    return [write_email, schedule_meeting, check_calendar_availability, Question, Done]


# --- scripted models ---------------------------------------------------------------------


def _said(messages):
    return [(m.type, m.content) if isinstance(m, BaseMessage) else (m["role"], m["content"]) for m in messages]


class Model(Scripted):
    """A chat model as the course uses it: `bind_tools(tools, tool_choice=...)` records the
    tools and the choice; `with_structured_output(schema)` answers `structured(schema,
    messages)` and records what it was sent."""

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        self.seen.append(("bind_tools", names, tool_choice))
        return self.bind(tools=names, tool_choice=tool_choice)

    def with_structured_output(self, schema, **kwargs):
        def answer(messages):
            self.seen.append((schema.__name__, _said(messages)))
            return self.structured(schema, messages)

        return RunnableLambda(answer, name=schema.__name__)


def router(*labels):
    """The triage model: its classifications in order."""
    it = iter(labels)
    return Model(structured=lambda schema, messages: schema(reasoning="scripted", classification=next(it)), seen=[])


def agent(*steps):
    """The response agent's model: its replies in order."""
    return Model(script=_replies(*steps), seen=[])


def memory_model():
    """The memory updater: keeps the current profile and adds a numbered line naming the
    feedback it was given (the last message's first words)."""
    count = iter(range(1, 100))

    def learn(schema, messages):
        current = messages[0]["content"].split("<profile>")[1].split("</profile>")[0]
        last = messages[-1]
        text = last.content if isinstance(last, BaseMessage) else last["content"]
        return schema(chain_of_thought="scripted", user_preferences=f"{current}\n{next(count)}. {text[:48]}")

    return Model(structured=learn, seen=[])


# --- the three assistants ------------------------------------------------------------------


def _state(E):
    class StateInput(TypedDict):
        email_input: dict

    class State(E.MessagesState):
        email_input: dict
        classification_decision: Literal["ignore", "respond", "notify"]

    return State, StateInput


def _triage(llm_router, email_input, instructions):
    author, to, subject, email_thread = parse_email(email_input)
    result = llm_router.invoke([
        {"role": "system", "content": TRIAGE_SYSTEM.format(background=BACKGROUND, triage_instructions=instructions)},
        {"role": "user", "content": TRIAGE_USER.format(author=author, to=to, subject=subject,
                                                       email_thread=email_thread)},
    ])
    return result.classification, format_email_markdown(subject, author, to, email_thread)


def email_assistant(E, router_llm, llm, outbox):
    """`email_assistant.py`: triage, then the response agent runs every call until Done."""
    State, StateInput = _state(E)
    tools = make_tools(outbox)
    tools_by_name = {t.name: t for t in tools}
    llm_router = router_llm.with_structured_output(RouterSchema)
    llm_with_tools = llm.bind_tools(tools, tool_choice="any")

    def llm_call(state: State):
        system = AGENT_SYSTEM.format(tools_prompt=TOOLS_PROMPT, background=BACKGROUND,
                                     response_preferences=DEFAULT_RESPONSE, cal_preferences=DEFAULT_CAL)
        return {"messages": [llm_with_tools.invoke([{"role": "system", "content": system}] + state["messages"])]}

    def tool_node(state: State):
        result = []
        for tool_call in state["messages"][-1].tool_calls:
            observation = tools_by_name[tool_call["name"]].invoke(tool_call["args"])
            result.append({"role": "tool", "content": observation, "tool_call_id": tool_call["id"]})
        return {"messages": result}

    def should_continue(state: State) -> Literal["Action", "__end__"]:
        last_message = state["messages"][-1]
        if last_message.tool_calls:
            for tool_call in last_message.tool_calls:
                return E.END if tool_call["name"] == "Done" else "Action"

    agent_builder = E.StateGraph(State)
    agent_builder.add_node("llm_call", llm_call)
    agent_builder.add_node("environment", tool_node)
    agent_builder.add_edge(E.START, "llm_call")
    agent_builder.add_conditional_edges("llm_call", should_continue, {"Action": "environment", E.END: E.END})
    agent_builder.add_edge("environment", "llm_call")

    def triage_router(state: State) -> E.Command[Literal["response_agent", "__end__"]]:
        classification, email_markdown = _triage(llm_router, state["email_input"], DEFAULT_TRIAGE)
        if classification == "respond":
            return E.Command(goto="response_agent", update={
                "classification_decision": classification,
                "messages": [{"role": "user", "content": f"Respond to the email: {email_markdown}"}]})
        if classification in ("ignore", "notify"):
            return E.Command(goto=E.END, update={"classification_decision": classification})
        raise ValueError(f"Invalid classification: {classification}")

    return (E.StateGraph(State, input=StateInput)
            .add_node(triage_router)
            .add_node("response_agent", agent_builder.compile())
            .add_edge(E.START, "triage_router"))


REVIEW_CONFIG = {
    "write_email": {"allow_ignore": True, "allow_respond": True, "allow_edit": True, "allow_accept": True},
    "schedule_meeting": {"allow_ignore": True, "allow_respond": True, "allow_edit": True, "allow_accept": True},
    "Question": {"allow_ignore": True, "allow_respond": True, "allow_edit": False, "allow_accept": False},
}
IGNORED = {"write_email": "email draft", "schedule_meeting": "calendar meeting draft", "Question": "question"}
FEEDBACK = {"write_email": "User gave feedback, which can we incorporate into the email. Feedback: {}",
            "schedule_meeting": "User gave feedback, which can we incorporate into the meeting request. Feedback: {}",
            "Question": "User answered the question, which can we can use for any follow up actions. Feedback: {}"}
# where an edit / a response / an ignore of each reviewed call is remembered (memory assistant)
EDITED = {"write_email": (RESPONSE_NS, "email response", "email"),
          "schedule_meeting": (CAL_NS, "calendar invitation", "calendar invitation")}
RESPONDED = {"write_email": (RESPONSE_NS, "response"), "schedule_meeting": (CAL_NS, "calendar")}


def hitl_assistant(E, router_llm, llm, outbox, memory=None, as_written=False):
    """`email_assistant_hitl.py`, or with `memory` (the updater's model)
    `email_assistant_hitl_memory.py`: nodes take the store and learn from each review.

    The course stores each profile as a bare string, which the langgraph-checkpoint it
    pins (2.0) accepted; langgraph-checkpoint 4 (with LangGraph 1.2) takes dict values
    only, so the port stores `{"content": profile}` (as the course's JS port stores
    `{memoryContent}`); `as_written=True` keeps the course's line."""
    State, StateInput = _state(E)
    tools = make_tools(outbox)
    tools_by_name = {t.name: t for t in tools}
    llm_router = router_llm.with_structured_output(RouterSchema)
    llm_with_tools = llm.bind_tools(tools, tool_choice="required")
    remember = memory is not None

    def get_memory(store, namespace, default_content):
        if not remember:
            return default_content
        user_preferences = store.get(namespace, "user_preferences")
        if user_preferences:
            return user_preferences.value if as_written else user_preferences.value["content"]
        store.put(namespace, "user_preferences", default_content if as_written else {"content": default_content})
        return default_content

    def update_memory(store, namespace, messages):
        current = store.get(namespace, "user_preferences").value["content"]
        result = memory.with_structured_output(UserPreferences).invoke(
            [{"role": "system", "content": MEMORY_UPDATE.format(current_profile=current, namespace=namespace)}]
            + messages)
        store.put(namespace, "user_preferences", {"content": result.user_preferences})

    def _triage_router(state, store):
        instructions = get_memory(store, TRIAGE_NS, DEFAULT_TRIAGE)
        classification, email_markdown = _triage(llm_router, state["email_input"], instructions)
        if classification == "respond":
            goto = "response_agent"
            update = {"classification_decision": classification,
                      "messages": [{"role": "user", "content": f"Respond to the email: {email_markdown}"}]}
        elif classification == "ignore":
            goto, update = E.END, {"classification_decision": classification}
        elif classification == "notify":
            goto, update = "triage_interrupt_handler", {"classification_decision": classification}
        else:
            raise ValueError(f"Invalid classification: {classification}")
        return E.Command(goto=goto, update=update)

    def _triage_interrupt_handler(state, store):
        author, to, subject, email_thread = parse_email(state["email_input"])
        email_markdown = format_email_markdown(subject, author, to, email_thread)
        messages = [{"role": "user", "content": f"Email to notify user about: {email_markdown}"}]
        request = {
            "action_request": {"action": f"Email Assistant: {state['classification_decision']}", "args": {}},
            "config": {"allow_ignore": True, "allow_respond": True, "allow_edit": False, "allow_accept": False},
            "description": email_markdown,
        }
        response = E.interrupt([request])[0]
        if response["type"] == "response":
            messages.append({"role": "user", "content": "User wants to reply to the email. Use this feedback to "
                                                        f"respond: {response['args']}"})
            if remember:
                update_memory(store, TRIAGE_NS, [{"role": "user", "content": "The user decided to respond to the "
                                                  "email, so update the triage preferences to capture this."}]
                              + messages)
            goto = "response_agent"
        elif response["type"] == "ignore":
            if remember:
                messages.append({"role": "user", "content": "The user decided to ignore the email even though it "
                                 "was classified as notify. Update triage preferences to capture this."})
                update_memory(store, TRIAGE_NS, messages)
            goto = E.END
        else:
            raise ValueError(f"Invalid response: {response}")
        return E.Command(goto=goto, update={"messages": messages})

    def _llm_call(state, store):
        cal_preferences = get_memory(store, CAL_NS, DEFAULT_CAL)
        response_preferences = get_memory(store, RESPONSE_NS, DEFAULT_RESPONSE)
        system = AGENT_SYSTEM.format(tools_prompt=TOOLS_PROMPT, background=BACKGROUND,
                                     response_preferences=response_preferences, cal_preferences=cal_preferences)
        return {"messages": [llm_with_tools.invoke([{"role": "system", "content": system}] + state["messages"])]}

    def _interrupt_handler(state, store):
        result = []
        goto = "llm_call"
        for tool_call in state["messages"][-1].tool_calls:
            name = tool_call["name"]
            if name not in ("write_email", "schedule_meeting", "Question"):
                observation = tools_by_name[name].invoke(tool_call["args"])
                result.append({"role": "tool", "content": observation, "tool_call_id": tool_call["id"]})
                continue
            author, to, subject, email_thread = parse_email(state["email_input"])
            description = format_email_markdown(subject, author, to, email_thread) + format_for_display(tool_call)
            request = {"action_request": {"action": name, "args": tool_call["args"]},
                       "config": REVIEW_CONFIG[name], "description": description}
            response = E.interrupt([request])[0]
            if response["type"] == "accept":
                observation = tools_by_name[name].invoke(tool_call["args"])
                result.append({"role": "tool", "content": observation, "tool_call_id": tool_call["id"]})
            elif response["type"] == "edit":
                if name not in EDITED:
                    raise ValueError(f"Invalid tool call: {name}")
                initial_tool_call = tool_call["args"]
                edited_args = response["args"]["args"]
                ai_message = state["messages"][-1]
                current_id = tool_call["id"]
                updated_tool_calls = [tc for tc in ai_message.tool_calls if tc["id"] != current_id] + [
                    {"type": "tool_call", "name": name, "args": edited_args, "id": current_id}]
                result.append(ai_message.model_copy(update={"tool_calls": updated_tool_calls}))
                observation = tools_by_name[name].invoke(edited_args)
                result.append({"role": "tool", "content": observation, "tool_call_id": current_id})
                if remember:
                    namespace, what, short = EDITED[name]
                    update_memory(store, namespace, [{"role": "user", "content": (
                        f"User edited the {what}. Here is the initial {short} generated by the assistant: "
                        f"{initial_tool_call}. Here is the edited {short}: {edited_args}. Follow all "
                        f"instructions above, and remember: {REINFORCE}.")}])
            elif response["type"] == "ignore":
                result.append({"role": "tool", "content": f"User ignored this {IGNORED[name]}. Ignore this email "
                               "and end the workflow.", "tool_call_id": tool_call["id"]})
                goto = E.END
                if remember:
                    update_memory(store, TRIAGE_NS, state["messages"] + result + [{"role": "user", "content": (
                        f"The user ignored the {IGNORED[name]}. Update the triage preferences to ensure emails "
                        f"of this type are not classified as respond. Remember: {REINFORCE}.")}])
            elif response["type"] == "response":
                result.append({"role": "tool", "content": FEEDBACK[name].format(response["args"]),
                               "tool_call_id": tool_call["id"]})
                if remember and name in RESPONDED:
                    namespace, what = RESPONDED[name]
                    update_memory(store, namespace, state["messages"] + result + [{"role": "user", "content": (
                        f"User gave feedback, which we can use to update the {what} preferences. "
                        f"Remember: {REINFORCE}.")}])
            else:
                raise ValueError(f"Invalid response: {response}")
        return E.Command(goto=goto, update={"messages": result})

    def _should_continue(state):
        last_message = state["messages"][-1]
        if last_message.tool_calls:
            for tool_call in last_message.tool_calls:
                return E.END if tool_call["name"] == "Done" else "interrupt_handler"

    if remember:
        def triage_router(state: State, store: BaseStore) -> E.Command[
                Literal["triage_interrupt_handler", "response_agent", "__end__"]]:
            return _triage_router(state, store)

        def triage_interrupt_handler(state: State, store: BaseStore) -> E.Command[
                Literal["response_agent", "__end__"]]:
            return _triage_interrupt_handler(state, store)

        def llm_call(state: State, store: BaseStore):
            return _llm_call(state, store)

        def interrupt_handler(state: State, store: BaseStore) -> E.Command[Literal["llm_call", "__end__"]]:
            return _interrupt_handler(state, store)

        def should_continue(state: State, store: BaseStore) -> Literal["interrupt_handler", "__end__"]:
            return _should_continue(state)
    else:
        def triage_router(state: State) -> E.Command[Literal["triage_interrupt_handler", "response_agent", "__end__"]]:
            return _triage_router(state, None)

        def triage_interrupt_handler(state: State) -> E.Command[Literal["response_agent", "__end__"]]:
            return _triage_interrupt_handler(state, None)

        def llm_call(state: State):
            return _llm_call(state, None)

        def interrupt_handler(state: State) -> E.Command[Literal["llm_call", "__end__"]]:
            return _interrupt_handler(state, None)

        def should_continue(state: State) -> Literal["interrupt_handler", "__end__"]:
            return _should_continue(state)

    agent_builder = E.StateGraph(State)
    agent_builder.add_node("llm_call", llm_call)
    agent_builder.add_node("interrupt_handler", interrupt_handler)
    agent_builder.add_edge(E.START, "llm_call")
    agent_builder.add_conditional_edges("llm_call", should_continue,
                                        {"interrupt_handler": "interrupt_handler", E.END: E.END})
    response_agent = agent_builder.compile()
    return (E.StateGraph(State, input=StateInput)
            .add_node(triage_router)
            .add_node(triage_interrupt_handler)
            .add_node("response_agent", response_agent)
            .add_edge(E.START, "triage_router"))


# --- the course's e-mails and the model's calls ------------------------------------------------

MEETING = {"to": "Lance Martin <lance@company.com>", "author": "Project Manager <pm@client.com>",
           "subject": "Tax season let's schedule call",
           "email_thread": "Lance,\n\nIt's tax season again. Are you available sometime next week? Tuesday or "
                           "Thursday afternoon would work best for me, for about 45 minutes.\n\nRegards,\nPM"}
DINNER = {"to": "Lance Martin <lance@company.com>", "author": "Partner <partner@home.com>", "subject": "Dinner?",
          "email_thread": "Hey, do you want italian or indian tonight?"}
API_QUESTION = {"to": "John Doe <john.doe@company.com>", "author": "Alice Smith <alice.smith@company.com>",
                "subject": "Quick question about API documentation",
                "email_thread": "Hi John,\nSome endpoints seem missing from the specs:\n- /auth/refresh\n"
                                "- /auth/validate\nThanks!\nAlice"}
NEWSLETTER = {"to": "Lance Martin <lance@company.com>", "author": "News <news@ai.example>",
              "subject": "This week in AI", "email_thread": "Ten papers you missed."}
NOTICE = {"to": "Lance Martin <lance@company.com>", "author": "IT <it@company.com>",
          "subject": "Maintenance <tonight>", "email_thread": "Servers go down at 10pm for *maintenance*."}

EMAIL_ARGS = {"to": "pm@client.com", "subject": "Re: Tax season let's schedule call",
              "content": "Hello,\n\nI scheduled a call on **Tuesday** at 2pm. <Looking forward> to it!\n\nLance"}
MEETING_ARGS = {"attendees": ["pm@client.com", "lance@company.com"], "subject": "Tax Planning Strategies",
                "duration_minutes": 45, "preferred_day": "2025-05-06", "start_time": 14}
EDITED_EMAIL = {"to": "pm@client.com", "subject": "Re: Tax season let's schedule call",
                "content": "Thanks! I scheduled a 30-minute call next Thursday at 3:00 PM.\n\nBest regards,\nLance"}
EDITED_MEETING = {"attendees": ["pm@client.com", "lance@company.com"], "subject": "Tax Planning Discussion",
                  "duration_minutes": 30, "preferred_day": "2025-04-22", "start_time": 14}


def write(mid, cid=None, **args):
    return _calls(mid, ("write_email", {**EMAIL_ARGS, **args}, cid or f"w-{mid}"))


def meeting(mid, cid=None, **args):
    return _calls(mid, ("schedule_meeting", {**MEETING_ARGS, **args}, cid or f"s-{mid}"))


def calendar(mid, day="Tuesday"):
    return _calls(mid, ("check_calendar_availability", {"day": day}, f"c-{mid}"))


def question(mid, text="Should the /auth endpoints be documented?"):
    return _calls(mid, ("Question", {"content": text}, f"q-{mid}"))


def done(mid):
    return _calls(mid, ("Done", {"done": True}, f"d-{mid}"))


ACCEPT = {"type": "accept"}
IGNORE = {"type": "ignore"}


def respond(text):
    return {"type": "response", "args": text}


def edit(args):
    return {"type": "edit", "args": {"args": args}}


# --- driving it as the notebooks do ------------------------------------------------------------


def _cfg(tid="thread-1"):
    return {"configurable": {"thread_id": tid}}


def _dump(store):
    """The store's content: (namespace, key, value), sorted (values are the course's strings)."""
    if store is None:
        return None
    return sorted(((tuple(i.namespace), i.key, i.value) for ns in store.list_namespaces()
                   for i in store.search(ns, limit=100) if tuple(i.namespace) == tuple(ns)), key=repr)


def _asked(chunks):
    """What each `__interrupt__` chunk asked: the request's action (the notebooks print it)."""
    return [[i.value[0]["action_request"]["action"] for i in c["__interrupt__"]]
            for c in chunks if isinstance(c, dict) and "__interrupt__" in c]


def _paused(app, cfg):
    return {"state": snapshot_summary(app.get_state(cfg)),
            "nested": snapshot_summary(app.get_state(cfg, subgraphs=True))}


def course(E, app, cfg, email, *answers, **stream_kw):
    """The notebook's cells: stream the e-mail, then `Command(resume=[answer])` for each
    answer, each turn's chunks and `get_state` recorded."""
    turns = []
    for answer in (None, *answers):
        inp = {"email_input": email} if answer is None else E.Command(resume=[answer])
        chunks = collect(lambda inp=inp: app.stream(inp, cfg, stream_mode="updates", **stream_kw))
        turns.append({"chunks": chunks, "asked": _asked(chunks), **_paused(app, cfg)})
    return turns


def _run(E, build, email, *answers, replies=(), labels=("respond",), memory=False, saver=None, store=None):
    """Build the assistant on E, run the course's cells, return everything observed."""
    outbox = []
    models = {"router": router(*labels), "agent": agent(*replies)}
    if memory:
        models["memory"] = memory_model()
        store = InMemoryStore() if store is None else store
    app = build(E, models["router"], models["agent"], outbox, **({"memory": models["memory"]} if memory else {}))
    app = app.compile(checkpointer=saver if saver is not None else E.InMemorySaver(), store=store)
    turns = course(E, app, _cfg(), email, *answers)
    return {"turns": turns, "outbox": outbox, "store": _dump(store),
            "sent": {k: m.seen for k, m in models.items()}}


def _history(app, cfg):
    """The thread's history; task results show messages as (type or role, content,
    tool_call_id), without ids (see `_agent_scenarios.history`)."""
    def plain(m):
        if isinstance(m, BaseMessage):
            return (m.type, m.content, getattr(m, "tool_call_id", None))
        return (m["role"], m["content"], m.get("tool_call_id"))

    def result(r):
        if isinstance(r, dict) and isinstance(r.get("messages"), list):
            return {**r, "messages": [plain(m) for m in r["messages"]]}
        return r

    out = []
    for s in app.get_state_history(cfg):
        summary = snapshot_summary(s)
        summary["tasks"] = [(name, path, asked, result(r), state) for name, path, asked, r, state in summary["tasks"]]
        out.append(summary)
    return out


def _final(obs):
    return obs["turns"][-1]["state"]


def _msgs(values):
    """The conversation as the notebook's `pretty_print` loop shows it."""
    out = []
    for m in values["messages"]:
        m = m[1] if isinstance(m, tuple) else m.model_dump()
        out.append((m["type"], m["content"], [(c["name"], c["args"]) for c in m.get("tool_calls") or []]))
    return out


# --- email_assistant.py (no review) -----------------------------------------------------------


@pytest.mark.parametrize("label", ["ignore", "notify"])
def test_triage_ignore_or_notify_ends_after_the_router(differential, label):
    """The router's `Command(goto=END, update=...)`: the decision is saved, nothing else runs."""
    def scenario(E):
        outbox = []
        app = email_assistant(E, router(label, label), agent(), outbox).compile()
        return {"invoke": app.invoke({"email_input": NEWSLETTER}),
                "stream": collect(lambda: app.stream({"email_input": NEWSLETTER}, stream_mode="updates"))}

    ref = differential(scenario)
    assert ref["invoke"] == {"email_input": NEWSLETTER, "messages": [], "classification_decision": label}


def test_respond_runs_every_tool_call_until_done(differential):
    """respond: the response agent (a subgraph node) checks the calendar, schedules, writes,
    then calls Done; the tool node runs each call; streamed in updates mode, with and without
    subgraphs."""
    def scenario(E):
        steps = [calendar("m1"), meeting("m2"), write("m3"), done("m4")]
        outbox = []
        app = email_assistant(E, router("respond", "respond"), agent(*steps, *steps), outbox).compile()
        flat = collect(lambda: app.stream({"email_input": MEETING}, stream_mode="updates"))
        nested = collect(lambda: app.stream({"email_input": MEETING}, stream_mode="updates", subgraphs=True))
        return {"flat": flat, "nested": nested, "outbox": outbox}

    ref = differential(scenario)
    assert [t for t, _ in ref["outbox"]] == ["schedule_meeting", "write_email"] * 2
    assert [list(c) for c in ref["flat"]] == [["triage_router"], ["response_agent"]]


def test_the_graph_drawn_with_xray_as_the_notebook_shows_it(differential):
    """`show_graph(email_assistant, xray=True)`: the nodes, edges and mermaid text of
    `get_graph(xray=...)` (the routers' `Command[Literal[...]]` annotations draw their
    edges), for all three assistants."""
    def scenario(E):
        out = {}
        for name, build, kw in (("agent", email_assistant, {}), ("hitl", hitl_assistant, {}),
                                ("memory", hitl_assistant, {"memory": memory_model()})):
            app = build(E, router(), agent(), [], **kw).compile()
            for xray in (False, True):
                g = app.get_graph(xray=xray)
                out[name, xray] = (sorted(g.nodes), sorted((e.source, e.target, e.conditional) for e in g.edges),
                                   g.draw_mermaid())
        return out

    ref = differential(scenario)
    assert ("triage_router", "triage_interrupt_handler", True) in ref["hitl", False][1]


# --- email_assistant_hitl.py / _memory.py: triage ---------------------------------------------

VARIANTS = pytest.mark.parametrize("memory", [False, True], ids=["hitl", "memory"])


@VARIANTS
def test_triage_ignore_asks_nothing(differential, memory):
    """ignore: the router ends the run, nothing is asked; the memory assistant has put the
    default triage preferences on first use."""
    def scenario(E):
        return _run(E, hitl_assistant, NEWSLETTER, labels=("ignore",), memory=memory)

    ref = differential(scenario)
    assert ref["turns"][0]["asked"] == [] and ref["turns"][0]["state"]["next"] == ()
    assert ref["store"] == (None if not memory else [(TRIAGE_NS, "user_preferences", {"content": DEFAULT_TRIAGE})])


@VARIANTS
@pytest.mark.parametrize("answer", ["ignore", "response"])
def test_notify_asks_the_inbox_and_each_answer_goes_on(differential, memory, answer):
    """notify: `triage_interrupt_handler` pauses with the Agent Inbox request (respond or
    ignore); ignore ends (the memory assistant learns it), a response goes to the response
    agent with the user's words (learned too), which writes the e-mail."""
    def scenario(E):
        if answer == "ignore":
            return _run(E, hitl_assistant, NOTICE, IGNORE, labels=("notify",), memory=memory)
        return _run(E, hitl_assistant, NOTICE, respond("Thank IT, I'll save my work."), ACCEPT,
                    replies=[write("m1", to="it@company.com"), done("m2")], labels=("notify",), memory=memory)

    ref = differential(scenario)
    first = ref["turns"][0]
    assert first["asked"] == [["Email Assistant: notify"]] and first["state"]["next"] == ("triage_interrupt_handler",)
    assert ref["turns"][-1]["state"]["next"] == ()
    assert len(ref["outbox"]) == (answer == "response")
    if memory:
        triage = dict(((ns, v["content"]) for ns, _, v in ref["store"]))[TRIAGE_NS]
        assert triage.startswith(DEFAULT_TRIAGE + "\n1. ")


# --- the reviewed tools: every answer type ----------------------------------------------------

WRITE_FLOWS = {
    "accept": ([ACCEPT], [write("m1"), done("m2")]),
    "edit": ([edit(EDITED_EMAIL)], [write("m1"), done("m2")]),
    "response": ([respond("Shorter and less formal."), ACCEPT], [write("m1"), write("m2", content="Tue 2pm?"),
                                                                  done("m3")]),
    "ignore": ([IGNORE], [write("m1")]),
}


@VARIANTS
@pytest.mark.parametrize("kind", list(WRITE_FLOWS))
def test_write_email_review_each_answer(differential, memory, kind):
    """The agent drafts an e-mail: the run pauses inside the response agent with the
    request (action, args, config, the e-mail and the draft as markdown); accept sends it,
    edit sends the user's args (the AI message's call replaced in place), response gives the
    agent the feedback for a second draft, ignore ends. The memory assistant rewrites the
    response preferences after an edit or a response, the triage preferences after an
    ignore."""
    answers, replies = WRITE_FLOWS[kind]

    def scenario(E):
        return _run(E, hitl_assistant, MEETING, *answers, replies=replies, memory=memory)

    ref = differential(scenario)
    first = ref["turns"][0]
    assert first["asked"] == [["write_email"]] and first["state"]["next"] == ("response_agent",)
    assert first["nested"]["tasks"][0][-1]["next"] == ("interrupt_handler",)
    sent = [args for name, args in ref["outbox"]]
    assert sent == {"accept": [EMAIL_ARGS], "edit": [EDITED_EMAIL], "response": [{**EMAIL_ARGS, "content": "Tue 2pm?"}],
                    "ignore": []}[kind]
    if memory:
        learned = {ns: v["content"].count("\n") for ns, _, v in ref["store"]}
        assert learned == {TRIAGE_NS: int(kind == "ignore"), RESPONSE_NS: int(kind in ("edit", "response")),
                           CAL_NS: 0}, ref["store"]


MEETING_FLOWS = {
    "accept": ([ACCEPT, ACCEPT], [calendar("m0"), meeting("m1"), write("m2"), done("m3")]),
    "edit": ([edit(EDITED_MEETING), ACCEPT], [calendar("m0"), meeting("m1"), write("m2"), done("m3")]),
    "response": ([respond("30 minutes, after 2pm."), ACCEPT, ACCEPT],
                 [calendar("m0"), meeting("m1"), meeting("m2", duration_minutes=30, start_time=15), write("m3"),
                  done("m4")]),
    "ignore": ([IGNORE], [calendar("m0"), meeting("m1")]),
}


@VARIANTS
@pytest.mark.parametrize("kind", list(MEETING_FLOWS))
def test_schedule_meeting_review_each_answer(differential, memory, kind):
    """The agent checks the calendar (run at once, no question), then proposes a meeting:
    each answer as for e-mails; the edited day is a string the tool parses; the memory
    assistant learns calendar preferences from an edit or a response."""
    answers, replies = MEETING_FLOWS[kind]

    def scenario(E):
        return _run(E, hitl_assistant, MEETING, *answers, replies=replies, memory=memory)

    ref = differential(scenario)
    assert ref["turns"][0]["asked"] == [["schedule_meeting"]]
    meetings = [args for name, args in ref["outbox"] if name == "schedule_meeting"]
    assert meetings == {"accept": [{"attendees": MEETING_ARGS["attendees"], "subject": "Tax Planning Strategies",
                                    "minutes": 45, "day": "2025-05-06"}],
                        "edit": [{"attendees": MEETING_ARGS["attendees"], "subject": "Tax Planning Discussion",
                                  "minutes": 30, "day": "2025-04-22"}],
                        "response": [{"attendees": MEETING_ARGS["attendees"], "subject": "Tax Planning Strategies",
                                      "minutes": 30, "day": "2025-05-06"}],
                        "ignore": []}[kind]
    if memory:
        learned = {ns: v["content"].count("\n") for ns, _, v in ref["store"]}
        assert learned == {TRIAGE_NS: int(kind == "ignore"), CAL_NS: int(kind in ("edit", "response")),
                           RESPONSE_NS: 0}, ref["store"]


@VARIANTS
@pytest.mark.parametrize("kind", ["response", "ignore"])
def test_question_is_answered_or_ignored(differential, memory, kind):
    """The agent asks the user (`Question`: only respond or ignore allowed): the answer is a
    tool message the agent uses to write the reply; ignore ends (and is learned)."""
    def scenario(E):
        if kind == "ignore":
            return _run(E, hitl_assistant, API_QUESTION, IGNORE, replies=[question("m1")], memory=memory)
        return _run(E, hitl_assistant, API_QUESTION, respond("Yes, document both."), ACCEPT,
                    replies=[question("m1"), write("m2", to="alice.smith@company.com"), done("m3")], memory=memory)

    ref = differential(scenario)
    request = ref["turns"][0]["chunks"][-1]["__interrupt__"][0][1][0]
    assert request["config"] == REVIEW_CONFIG["Question"] and request["action_request"]["action"] == "Question"
    assert request["description"].endswith("# Question for User\n\nShould the /auth endpoints be documented?\n")


# --- the notebooks' multi-turn threads ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_notebook_thread_feedback_then_accept_for_meeting_and_email(differential, tmp_path, kind):
    """hitl.ipynb / memory.ipynb thread 5: feedback on the meeting, accept the revised one,
    feedback on the e-mail, accept the revised one, Done; on InMemorySaver and on each
    engine's SQLite saver (a file of its own); the history of the thread at the end."""
    def scenario(E):
        replies = [calendar("m0"), meeting("m1"), meeting("m2", duration_minutes=30), write("m3"),
                   write("m4", content="Short and sweet. Looking forward to it!"), done("m5")]
        answers = [respond("Please schedule this for 30 minutes instead of 45 minutes."), ACCEPT,
                   respond("Shorter and less formal. Include a closing statement."), ACCEPT]
        with _saver(E, kind, tmp_path) as saver:
            obs = _run(E, hitl_assistant, MEETING, *answers, replies=replies, memory=True, saver=saver)
            app = hitl_assistant(E, router(), agent(), [], memory=memory_model()).compile(checkpointer=saver)
            obs["history"] = _history(app, _cfg())
        return obs

    ref = differential(scenario)
    assert [t["asked"] for t in ref["turns"]] == [[["schedule_meeting"]], [["schedule_meeting"]], [["write_email"]],
                                                  [["write_email"]], []]
    assert [n for n, _ in ref["outbox"]] == ["schedule_meeting", "write_email"]


def test_notebook_thread_edit_meeting_then_edit_email(differential):
    """hitl.ipynb thread 2: edit the meeting, then edit the e-mail; the AI messages show the
    edited calls (replaced in place, same ids), the notebook's `response_agent` chunks."""
    def scenario(E):
        return _run(E, hitl_assistant, MEETING, edit(EDITED_MEETING), edit(EDITED_EMAIL),
                    replies=[meeting("m1"), write("m2"), done("m3")], memory=True)

    ref = differential(scenario)
    calls = [c for _, _, cs in _msgs(_final(ref)["values"]) for c in cs]
    assert calls == [("schedule_meeting", EDITED_MEETING), ("write_email", EDITED_EMAIL), ("Done", {"done": True})]


def test_several_reviewed_calls_in_one_message_pause_one_after_the_other(differential):
    """The model calls the calendar, a meeting and an e-mail at once: `interrupt_handler`
    asks for each reviewed call in turn; each resume re-runs the node from its start (the
    calendar check and the accepted meeting run again, as LangGraph re-executes a node)."""
    def scenario(E):
        both = _calls("m1", ("check_calendar_availability", {"day": "Tuesday"}, "c1"),
                      ("schedule_meeting", MEETING_ARGS, "s1"), ("write_email", EMAIL_ARGS, "w1"))
        return _run(E, hitl_assistant, MEETING, ACCEPT, edit(EDITED_EMAIL), replies=[both, done("m2")], memory=True)

    ref = differential(scenario)
    assert [t["asked"] for t in ref["turns"]] == [[["schedule_meeting"]], [["write_email"]], []]
    assert [n for n, _ in ref["outbox"]] == ["schedule_meeting", "schedule_meeting", "write_email"]


def test_an_answer_the_handler_does_not_know_fails_the_run(differential):
    """`{"type": "approve"}` (a LangChain v1 decision, not an inbox response): the handler's
    ValueError escapes `stream`; the thread stays paused on the same request, and the
    answer sticks: the task's first resume value is saved, so a second `Command(resume=...)`
    re-runs the handler with the same bad answer."""
    def scenario(E):
        return _run(E, hitl_assistant, MEETING, {"type": "approve"}, ACCEPT, replies=[write("m1"), done("m2")])

    ref = differential(scenario)
    assert ref["turns"][1]["chunks"][-1][:2] == ("raises", "ValueError")
    assert ref["turns"][1]["state"]["next"] == ("response_agent",)
    assert ref["turns"][2]["chunks"] == ref["turns"][1]["chunks"]
    assert ref["turns"][2]["state"]["next"] == ("response_agent",) and ref["outbox"] == []


def test_the_default_stream_mode_is_the_notebooks_updates(differential):
    """The notebooks call `graph.stream(input, config=...)` with no mode: the same chunks as
    "updates"; `subgraphs=True` shows the response agent's own steps and the nested
    `__interrupt__`."""
    def scenario(E):
        app = hitl_assistant(E, router("respond"), agent(write("m1"), done("m2")), []).compile(
            checkpointer=E.InMemorySaver())
        plain = collect(lambda: app.stream({"email_input": MEETING}, config=_cfg()))
        resumed = collect(lambda: app.stream(E.Command(resume=[ACCEPT]), config=_cfg(), subgraphs=True))
        return {"plain": plain, "resumed": resumed}

    ref = differential(scenario)
    assert "__interrupt__" in ref["plain"][-1]


def test_a_thread_streamed_with_subgraphs_in_updates_and_values(differential):
    """The same thread watched closer than the notebooks do: `subgraphs=True` with
    "updates" and "values", so the response agent's own states, its `__interrupt__` and
    the parent's values after the subgraph returns are all compared."""
    def scenario(E):
        store = InMemoryStore()
        app = hitl_assistant(E, router("respond"), agent(write("m1"), write("m2", content="v2"), done("m3")), [],
                             memory=memory_model()).compile(checkpointer=E.InMemorySaver(), store=store)
        out = []
        for inp in ({"email_input": MEETING}, E.Command(resume=[respond("warmer")]), E.Command(resume=[ACCEPT])):
            out.append(collect(lambda inp=inp: app.stream(inp, _cfg(), stream_mode=["updates", "values"],
                                                          subgraphs=True)))
        return {"streams": out, "store": _dump(store)}

    ref = differential(scenario)
    first = [(ns, list(chunk)) for ns, mode, chunk in ref["streams"][0] if mode == "updates"]
    assert [keys for _, keys in first] == [["triage_router"], ["llm_call"], ["__interrupt__"], ["__interrupt__"]]
    assert first[1][0][0].startswith("response_agent:") and first[3][0] == ()


# --- memory ---------------------------------------------------------------------------------


def test_memory_is_created_on_first_use_and_read_by_the_next_thread(differential):
    """memory.ipynb: the first run puts the three default profiles; an edit on thread 1
    rewrites the response preferences; the e-mail on thread 2 is answered with them (the
    agent's system prompt) and its ignore rewrites the triage preferences."""
    def scenario(E):
        outbox, store = [], InMemoryStore()
        models = {"router": router("respond", "respond"), "memory": memory_model(),
                  "agent": agent(write("m1"), done("m2"), write("m3", to="partner@home.com"))}
        app = hitl_assistant(E, models["router"], models["agent"], outbox, memory=models["memory"]).compile(
            checkpointer=E.InMemorySaver(), store=store)
        first = course(E, app, _cfg("t1"), MEETING)
        after_first_pause = _dump(store)
        edited = collect(lambda: app.stream(E.Command(resume=[edit(EDITED_EMAIL)]), _cfg("t1")))
        first.append({"chunks": edited, **_paused(app, _cfg("t1"))})
        second = course(E, app, _cfg("t2"), DINNER, IGNORE)
        return {"first": first, "after_first_pause": after_first_pause, "second": second, "store": _dump(store),
                "sent": {k: m.seen for k, m in models.items()}}

    ref = differential(scenario)
    assert [k[0] for k in ref["after_first_pause"]] == [CAL_NS, RESPONSE_NS, TRIAGE_NS]
    prompts = [s for s in ref["sent"]["agent"] if isinstance(s, list)]
    assert "1. User edited the email response." in prompts[-1][0][1]


def test_sqlite_thread_resumes_after_a_restart(differential, tmp_path):
    """A kernel restart between the pause and the answer: the graph rebuilt on a new SQLite
    saver of the same file (and the same store) resumes the paused request."""
    def scenario(E):
        outbox, store = [], InMemoryStore()
        replies = [write("m1"), done("m2")]
        with _saver(E, "sqlite", tmp_path) as saver:
            app = hitl_assistant(E, router("respond"), agent(*replies), outbox, memory=memory_model()).compile(
                checkpointer=saver, store=store)
            before = course(E, app, _cfg(), MEETING)
        with _saver(E, "sqlite", tmp_path) as saver:
            app = hitl_assistant(E, router(), agent(*replies[1:]), outbox, memory=memory_model()).compile(
                checkpointer=saver, store=store)
            paused = _paused(app, _cfg())
            after = collect(lambda: app.stream(E.Command(resume=[respond("warmer, please")]), _cfg()))
            final = _paused(app, _cfg())
        return {"before": before, "paused": paused, "after": after, "final": final, "store": _dump(store),
                "outbox": outbox}

    ref = differential(scenario)
    assert ref["paused"] == {k: ref["before"][0][k] for k in ("state", "nested")}
    assert ref["paused"]["state"]["next"] == ("response_agent",) and ref["final"]["state"]["next"] == ()


# --- async --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_async_notebook_thread(differential, tmp_path, kind):
    """The main thread driven with `astream` / `aget_state` (the course's sync nodes run in
    the executor): edit the meeting, accept the e-mail; on InMemorySaver and each engine's
    async SQLite saver."""
    async def scenario(E):
        outbox, store = [], InMemoryStore()
        models = {"router": router("respond"), "memory": memory_model(),
                  "agent": agent(calendar("m0"), meeting("m1"), write("m2"), done("m3"))}
        builder = hitl_assistant(E, models["router"], models["agent"], outbox, memory=models["memory"])
        turns = []
        async with _asaver(E, kind, tmp_path) as saver:
            app = builder.compile(checkpointer=saver, store=store)
            for inp in ({"email_input": MEETING}, E.Command(resume=[edit(EDITED_MEETING)]),
                        E.Command(resume=[ACCEPT])):
                chunks = await acollect(lambda inp=inp: app.astream(inp, _cfg(), stream_mode="updates"))
                state = snapshot_summary(await app.aget_state(_cfg()))
                nested = snapshot_summary(await app.aget_state(_cfg(), subgraphs=True))
                turns.append({"chunks": chunks, "state": state, "nested": nested})
        return {"turns": turns, "outbox": outbox, "store": _dump(store), "sent": {k: m.seen for k, m in models.items()}}

    ref = differential(scenario)
    assert [n for n, _ in ref["outbox"]] == ["schedule_meeting", "write_email"]
    assert ref["turns"][-1]["state"]["next"] == ()


class _asaver:
    """Each engine's own async checkpointer (in memory, or SQLite in a file of its own)."""

    def __init__(self, E, kind, tmp_path):
        self.E, self.kind, self.path = E, kind, str(tmp_path / f"{E.label}-async.db")

    async def __aenter__(self):
        if self.kind == "memory":
            self.cm = None
            return self.E.InMemorySaver()
        if self.E.root == "lgnb":
            from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
        else:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
        self.cm = AsyncSqliteSaver.from_conn_string(self.path)
        return await self.cm.__aenter__()

    async def __aexit__(self, *exc):
        if self.cm is not None:
            await self.cm.__aexit__(*exc)


def test_invalid_classification_raises_from_the_router(differential):
    """A classification the router does not handle (a user widened the schema, or a model
    object built without validation): the course's ValueError escapes the first step and
    the thread stays before the router."""
    def scenario(E):
        bad = Model(structured=lambda schema, messages: schema.model_construct(reasoning="?", classification="spam"),
                    seen=[])
        app = hitl_assistant(E, bad, agent(), []).compile(checkpointer=E.InMemorySaver())
        return {"stream": collect(lambda: app.stream({"email_input": NEWSLETTER}, _cfg(), stream_mode="updates")),
                "state": capture(lambda: snapshot_summary(app.get_state(_cfg())))}

    ref = differential(scenario)
    assert ref["stream"] == [("raises", "ValueError", "Invalid classification: spam")]
    assert ref["state"]["next"] == ("triage_router",)


def test_the_courses_bare_string_profile_fails_alike_on_todays_store(differential):
    """The course's own `store.put(namespace, "user_preferences", default_content)` (a
    string): langgraph-checkpoint 4's `InMemoryStore` refuses it, so the first node that
    reads memory fails, on both engines alike, and the thread stays before the router."""
    def scenario(E):
        store = InMemoryStore()
        app = hitl_assistant(E, router("respond"), agent(), [], memory=memory_model(), as_written=True).compile(
            checkpointer=E.InMemorySaver(), store=store)
        return {"turns": course(E, app, _cfg(), MEETING), "store": _dump(store)}

    ref = differential(scenario)
    assert ref["turns"][0]["chunks"][-1][:2] == ("raises", "ValueError") and ref["store"] == []
    assert ref["turns"][0]["state"]["next"] == ("triage_router",)

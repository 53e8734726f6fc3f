"""Items changed in place are saved changed, as LangGraph's savers save them.

lgnb's savers join the bytes of a list that only grew (`lgnb.checkpoint._grown`). A node
may change an earlier item *in place* — edit a message and return it, edit one and not
return it, mark an earlier entry done, set a field — and the list then holds the same
objects as before. LangGraph's savers serialize the whole list at its next version, so
the change is saved; lgnb's must save it too. Each program below runs on the lgnb engine
twice, once with an lgnb saver and once with LangGraph's own `InMemorySaver` (the
oracle), and every checkpoint of the thread's history must read back the same values.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import html
import operator
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver as LangGraphInMemorySaver
from langgraph.graph.message import add_messages as langgraph_add_messages
from pydantic import BaseModel, field_validator
from typing_extensions import TypedDict

from lgnb.checkpoint import _grown
from lgnb.checkpoint.memory import InMemorySaver
from lgnb.graph import END, START, MessagesState, StateGraph
from lgnb.types import Command, Overwrite, interrupt

STEPS = 24
PAD = "word " * 60  # ~300 bytes an item: lists pass `_grown.MIN_BYTES` after a few steps


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 200}


def _looping(state_type: Any, step: Callable[[dict], Any], done: Callable[[dict], bool]) -> StateGraph:
    g = StateGraph(state_type)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: END if done(s) else "step", ["step", END])
    return g


# --- the programs ---------------------------------------------------------------------------


class _Todos(TypedDict):
    todos: Annotated[list, operator.add]


def _todos() -> tuple[StateGraph, Any]:
    """A plan whose step marks the previous entry done in place and adds the next."""

    def step(state: dict) -> dict:
        todos = state["todos"]
        todos[-1]["done"] = True
        return {"todos": [{"task": f"task {len(todos)} " + PAD, "done": False}]}

    return _looping(_Todos, step, lambda s: len(s["todos"]) >= STEPS), {
        "todos": [{"task": "first " + PAD, "done": False}]}


def _reply(n: int) -> AIMessage:
    return AIMessage(f"reply {n} " + PAD, id=f"ai-{n}")


def _question() -> dict[str, Any]:
    return {"messages": [HumanMessage("question " + PAD, id="q")]}


def _flags_previous_reply() -> tuple[StateGraph, Any]:
    """Each step sets a flag in the previous reply's `additional_kwargs` and appends a reply."""

    def step(state: dict) -> dict:
        messages = state["messages"]
        messages[-1].additional_kwargs["seen"] = len(messages)
        return {"messages": [_reply(len(messages))]}

    return _looping(MessagesState, step, lambda s: len(s["messages"]) >= STEPS), _question()


def _edits_the_first_and_overwrites() -> tuple[StateGraph, Any]:
    """Each step edits the first message in place and sets the list with `Overwrite`."""

    def step(state: dict) -> dict:
        messages = state["messages"]
        messages[0].content = f"question, edited {len(messages)} times " + PAD
        return {"messages": Overwrite([*messages, _reply(len(messages))])}

    return _looping(MessagesState, step, lambda s: len(s["messages"]) >= STEPS), _question()


def _keep_messages(left: list, right: Any) -> list:
    """A reducer of a ported program: LangGraph's `add_messages`, wrapped."""
    return langgraph_add_messages(left, right)


class _Wrapped(TypedDict):
    messages: Annotated[list, _keep_messages]


def _wrapped_reducer_edit_and_return() -> tuple[StateGraph, Any]:
    """A draft and a review in turn; the review edits the draft in place and returns it."""

    def step(state: dict) -> dict:
        messages = state["messages"]
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.content.startswith("EDITED"):
            last.content = "EDITED " + last.content
            return {"messages": [last]}
        return {"messages": [_reply(len(messages))]}

    return _looping(_Wrapped, step, lambda s: len(s["messages"]) >= STEPS), _question()


def _sets_an_extra_field() -> tuple[StateGraph, Any]:
    """Each step sets an attribute that is not a field (LangChain's messages keep it as an
    extra, and serialize it) on an earlier message."""

    def step(state: dict) -> dict:
        messages = state["messages"]
        messages[len(messages) // 2].note = f"seen at {len(messages)}"
        return {"messages": [_reply(len(messages))]}

    return _looping(MessagesState, step, lambda s: len(s["messages"]) >= STEPS), _question()


@dataclasses.dataclass
class _Entry:
    text: str
    votes: int = 0


class _Entries(TypedDict):
    entries: Annotated[list, operator.add]


def _votes_on_dataclasses() -> tuple[StateGraph, Any]:
    """A list of dataclass objects, the first one changed in place at each step."""

    def step(state: dict) -> dict:
        entries = state["entries"]
        entries[0].votes += 1
        return {"entries": [_Entry(f"entry {len(entries)} " + PAD)]}

    return _looping(_Entries, step, lambda s: len(s["entries"]) >= STEPS), {"entries": [_Entry("first")]}


@dataclasses.dataclass
class _Task:
    text: str
    _done: bool = False  # (ormsgpack leaves fields named `_...` out of what it packs)


class _Tasks(TypedDict):
    tasks: Annotated[list, operator.add]


def _marks_a_private_field() -> tuple[StateGraph, Any]:
    """Dataclass items whose `_done` field the next step sets in place."""

    def step(state: dict) -> dict:
        tasks = state["tasks"]
        tasks[-1]._done = True
        return {"tasks": [_Task(f"task {len(tasks)} " + PAD)]}

    return _looping(_Tasks, step, lambda s: len(s["tasks"]) >= STEPS), {"tasks": [_Task("first")]}


class _Status(str, enum.Enum):
    OPEN = "open"


def _swaps_values_for_equal_ones_of_another_type() -> tuple[StateGraph, Any]:
    """Each step swaps, in the previous entry, a datetime for its ISO text, an enum member
    for its value and a UUID for its text: equal data, another type, which LangGraph's
    serializer keeps."""

    def step(state: dict) -> dict:
        todos = state["todos"]
        last = todos[-1]
        last["when"] = last["when"].isoformat()
        last["status"] = last["status"].value
        last["ref"] = str(last["ref"])
        return {"todos": [_entry(len(todos))]}

    return _looping(_Todos, step, lambda s: len(s["todos"]) >= STEPS), {"todos": [_entry(0)]}


def _entry(n: int) -> dict[str, Any]:
    return {"task": f"task {n} " + PAD, "when": datetime.datetime(2026, 1, 1, n % 24),
            "status": _Status.OPEN, "ref": uuid.UUID(int=n)}


def _flags_a_dataclass_in_a_message() -> tuple[StateGraph, Any]:
    """A dataclass kept in a reply's `additional_kwargs`, its private field set later."""

    def step(state: dict) -> dict:
        messages = state["messages"]
        if isinstance(messages[-1], AIMessage):
            messages[-1].additional_kwargs["task"]._done = True
        reply = _reply(len(messages))
        reply.additional_kwargs["task"] = _Task(f"task {len(messages)}")
        return {"messages": [reply]}

    return _looping(MessagesState, step, lambda s: len(s["messages"]) >= STEPS), _question()


PROGRAMS = {
    "plain list of dicts, previous entry marked done": _todos,
    "messages, previous reply flagged in place": _flags_previous_reply,
    "messages set with Overwrite, the first edited in place": _edits_the_first_and_overwrites,
    "a reducer wrapping LangGraph's add_messages, edit and return": _wrapped_reducer_edit_and_return,
    "messages, an extra attribute set in place": _sets_an_extra_field,
    "dataclass items changed in place": _votes_on_dataclasses,
    "dataclass items, a private field set in place": _marks_a_private_field,
    "dict items, values swapped for equal ones of another type": _swaps_values_for_equal_ones_of_another_type,
    "a dataclass in a message, a private field set in place": _flags_a_dataclass_in_a_message,
}


# --- the savers -----------------------------------------------------------------------------

_ALLOWED = [_Entry, _Task, _Status]


@contextmanager
def _saver(kind: str, tmp_path: Any, postgres_url: str | None) -> Iterator[Any]:
    if kind == "memory":
        yield InMemorySaver()
    elif kind == "sqlite":
        from lgnb.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(str(tmp_path / "t.sqlite"), allow=[*_ALLOWED, _Note]) as saver:
            yield saver
    else:
        from lgnb.checkpoint.postgres import PostgresSaver

        assert postgres_url is not None
        with PostgresSaver.from_conn_string(postgres_url, allow=[*_ALLOWED, _Note]) as saver:
            saver.setup()
            yield saver


def _typed(value: Any) -> Any:
    """`value` with each leaf paired with its type: `==` alone takes an enum member for its
    value, a str for a str enum member."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_typed(v) for v in value]
    if isinstance(value, BaseModel):  # a message
        return (type(value), _typed(value.__dict__))
    if dataclasses.is_dataclass(value):
        return (type(value), _typed(dataclasses.asdict(value)))
    return (type(value), value)


def _history(app: Any, thread: str) -> list[Any]:
    return [_typed(snapshot.values) for snapshot in app.get_state_history(_cfg(thread))]


def _run(make: Callable[[], tuple[StateGraph, Any]], saver: Any, thread: str) -> list[Any]:
    graph, first = make()
    app = graph.compile(checkpointer=saver)
    app.invoke(first, _cfg(thread), durability="sync")
    return _history(app, thread)


KINDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def _compared(kind: str, tmp_path: Any, request: pytest.FixtureRequest,
              run: Callable[[Any, str], list[Any]]) -> tuple[list[Any], list[Any]]:
    """`run(saver, thread)` on LangGraph's InMemorySaver, then on lgnb's saver of `kind`
    (a PostgreSQL thread deleted after): (what LangGraph's saved, what lgnb's saved)."""
    postgres_url = request.getfixturevalue("postgres_url") if kind == "postgres" else None
    want = run(LangGraphInMemorySaver(), "t")
    thread = f"in-place-{uuid.uuid4()}"
    with _saver(kind, tmp_path, postgres_url) as saver:
        got = run(saver, thread)
        if kind == "postgres":
            saver.delete_thread(thread)
    return want, got


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_a_change_in_place_is_saved_as_langgraphs_saver_saves_it(
    program: str, kind: str, tmp_path: Any, request: pytest.FixtureRequest
) -> None:
    want, got = _compared(kind, tmp_path, request, lambda saver, thread: _run(PROGRAMS[program], saver, thread))
    assert len(got) == len(want) > STEPS
    assert got == want


@pytest.mark.parametrize("kind", KINDS)
def test_an_edit_before_an_interrupt_is_saved_when_the_run_resumes(
    kind: str, tmp_path: Any, request: pytest.FixtureRequest
) -> None:
    """A node edits an earlier message in place, pauses with `interrupt()`, and on resume
    appends a different message: the edit is in the saved list, as on LangGraph."""

    def grow(state: dict) -> dict:
        return {"messages": [_reply(len(state["messages"]))]}

    def review(state: dict) -> dict:
        state["messages"][1].content = "edited before asking"
        answer = interrupt("ok?")
        return {"messages": [HumanMessage(f"answer: {answer}", id=f"h-{len(state['messages'])}")]}

    def run(saver: Any, thread: str) -> list[Any]:
        g = StateGraph(MessagesState)
        g.add_node("grow", grow)
        g.add_node("review", review)
        g.add_edge(START, "grow")
        g.add_conditional_edges("grow", lambda s: "review" if len(s["messages"]) >= 12 else "grow",
                                ["grow", "review"])
        g.add_edge("review", END)
        app = g.compile(checkpointer=saver)
        app.invoke(_question(), _cfg(thread), durability="sync")
        app.invoke(Command(resume="yes"), _cfg(thread), durability="sync")
        return _history(app, thread)

    want, got = _compared(kind, tmp_path, request, run)
    assert got[0]["messages"][1][1]["content"] == (str, "edited before asking")
    assert got == want


class _Note(BaseModel):
    """A model whose validator changes what it loads: it escapes its text again each time
    (a validator that stamps, counts or normalizes differently does the same)."""

    text: str

    @field_validator("text")
    @classmethod
    def _escaped(cls, text: str) -> str:
        return html.escape(text)


class _Notes(TypedDict):
    notes: Annotated[list, operator.add]


@pytest.mark.parametrize("kind", KINDS)
def test_a_list_read_back_holding_a_model_that_changes_what_it_loads_is_saved_as_loaded(
    kind: str, tmp_path: Any, request: pytest.FixtureRequest
) -> None:
    """Turn after turn, LangGraph decodes the list (each note escaped once more) and
    serializes what it decoded at the list's next version. A list read back may be joined
    to the bytes it was read from only if its items serialize to them again; these do not,
    so every version holds the notes as loaded, as on LangGraph."""

    def run(saver: Any, thread: str) -> list[Any]:
        g = StateGraph(_Notes)
        g.add_node("note", lambda s: {"notes": [_Note(text=f"{len(s['notes'])} & " + PAD)]})
        g.add_edge(START, "note")
        g.add_edge("note", END)
        app = g.compile(checkpointer=saver)
        for _ in range(STEPS):
            app.invoke({"notes": []}, _cfg(thread), durability="sync")
        return _history(app, thread)

    want, got = _compared(kind, tmp_path, request, run)
    first = want[0]["notes"][0][1]["text"][1]
    assert first.count("amp;") == STEPS + 1  # escaped once more at every load: each turn, and this read
    assert got == want


# --- what joining costs when lists change in place -----------------------------------------


class _Counted:
    """Counts the items `_grown.snapshot` is asked for (a snapshot costs a `model_dump` per
    message) and the items each list serialization covers."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, saver: Any) -> None:
        self.snapshotted = 0
        self.lists: list[int] = []
        inner = _grown.snapshot

        def snapshot(items: Any, **options: Any) -> Any:
            self.snapshotted += len(items)
            return inner(items, **options)

        monkeypatch.setattr(_grown, "snapshot", snapshot)
        dumps = saver.serde.dumps_typed

        def dumps_typed(obj: Any) -> Any:
            if isinstance(obj, list):
                self.lists.append(len(obj))
            return dumps(obj)

        saver.serde.dumps_typed = dumps_typed


def test_a_list_changed_in_place_at_every_step_is_snapshotted_less_and_less(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every version is serialized whole (each has a change), and the snapshots that could
    not be joined back off: far fewer items snapshotted (before serializing, and of the
    bytes read back to check them) than serialized; without the back-off, twice as many."""
    saver = InMemorySaver()
    counted = _Counted(monkeypatch, saver)
    graph, first = _flags_previous_reply()
    graph.compile(checkpointer=saver).invoke(first, _cfg("t"), durability="sync")
    whole = [n for n in counted.lists if n > 2]
    assert len(whole) >= STEPS - 4  # every version from the first large one on: whole
    assert counted.snapshotted < sum(whole) / 3


def test_a_single_edit_in_place_is_joined_again_two_versions_later() -> None:
    saver = InMemorySaver()
    lists: list[int] = []
    dumps = saver.serde.dumps_typed
    saver.serde.dumps_typed = lambda obj: (lists.append(len(obj)) if isinstance(obj, list) else None,
                                           dumps(obj))[1]

    def step(state: dict) -> dict:
        messages = state["messages"]
        if len(messages) == 15:
            messages[3].content = "edited once"
        return {"messages": [_reply(len(messages))]}

    graph = _looping(MessagesState, step, lambda s: len(s["messages"]) >= 30)
    app = graph.compile(checkpointer=saver)
    app.invoke(_question(), _cfg("t"), durability="sync")
    sizes = [n for n in lists if n > 1]  # the whole lists serialized (a tail is one reply)
    assert sizes[-2:] == [16, 17]  # the edited version, and the snapshotted one after it
    assert app.get_state(_cfg("t")).values["messages"][3].content == "edited once"


@pytest.mark.parametrize("back", ["at the next step", "as soon as it is serialized"])
def test_an_item_changed_while_it_is_serialized_is_not_joined_to_afterwards(back: str) -> None:
    """Another thread (a node running beside a background save) edits a message just as
    the saver serializes it, and changes it back: at the next step, or before the saver
    could look at it again. The saved bytes hold the edit, the snapshot taken before does
    not. Those bytes must not be joined to afterwards, or the edit would stay in every
    later checkpoint while the message is back as it was."""
    saver = InMemorySaver()
    edited: list[Any] = []
    lists_ending_with_it: list[int] = []
    dumps = saver.serde.dumps_typed

    def dumps_typed(obj: Any) -> Any:
        if isinstance(obj, list) and obj and getattr(obj[-1], "id", None) == "ai-12":
            lists_ending_with_it.append(len(obj))
            if len(lists_ending_with_it) == 2:  # the task's write first, then the checkpoint's
                edited.append((obj[-1], obj[-1].content))
                obj[-1].content = "TEMPORARY EDIT"  # (another thread, between snapshot and bytes)
                if back == "as soon as it is serialized":
                    try:
                        return dumps(obj)
                    finally:
                        obj[-1].content = edited[0][1]
        return dumps(obj)

    saver.serde.dumps_typed = dumps_typed

    def step(state: dict) -> dict:
        for message, content in edited:  # the other thread puts it back
            message.content = content
        return {"messages": [_reply(len(state["messages"]))]}

    app = _looping(MessagesState, step, lambda s: len(s["messages"]) >= STEPS).compile(checkpointer=saver)
    app.invoke(_question(), _cfg("t"), durability="sync")
    assert edited and lists_ending_with_it[:2] == [1, 1]  # the write, then the joined tail
    history = [s.values["messages"] for s in app.get_state_history(_cfg("t"))]
    holding = [len(m) for m in history if any(x.content == "TEMPORARY EDIT" for x in m)]
    assert holding == [13]  # the checkpoint saved while it was edited, and no later one

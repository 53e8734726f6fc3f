"""lgnb.graph.message: add_messages, REMOVE_ALL_MESSAGES, MessagesState.

Two kinds of test:

* differential: the same inputs go to LangGraph's ``add_messages`` and to ours,
  and the results (and any error's class), plus the ids written back onto the
  input messages, must match. Generated uuids are replaced by ``<id-N>`` in
  order of appearance before comparing.
* spec: what the reducer promises, one behaviour per test.
"""

from __future__ import annotations

import importlib.util
import copy
import inspect
import pathlib
import random
import re
import time
import uuid
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    ToolMessageChunk,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES as LG_REMOVE_ALL_MESSAGES
from langgraph.graph.message import add_messages as lg_add_messages
from pydantic import BaseModel
from typing_extensions import TypedDict

try:
    from lgnb.graph import message as ours
except ImportError:  # package __init__ not importable yet: load the module by path
    _path = pathlib.Path(__file__).resolve().parents[1] / "lgnb" / "graph" / "message.py"
    _spec = importlib.util.spec_from_file_location("lgnb.graph.message", _path)
    ours = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(ours)

add_messages = ours.add_messages
MessagesState = ours.MessagesState
REMOVE_ALL_MESSAGES = ours.REMOVE_ALL_MESSAGES


# --------------------------------------------------------------------------
# differential harness
# --------------------------------------------------------------------------

_UUID_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)


class _Normalizer:
    """Replaces generated uuids by <id-0>, <id-1>, ... in order of appearance."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def id(self, value: Any) -> Any:
        if isinstance(value, str) and _UUID_RE.match(value):
            return self.names.setdefault(value, f"<id-{len(self.names)}>")
        return value

    def message(self, m: Any) -> Any:
        if not isinstance(m, BaseMessage):
            return ("not-a-message", repr(m))
        data = m.model_dump()
        data["id"] = self.id(data.get("id"))
        return (type(m).__name__, data)

    def value(self, v: Any) -> Any:
        if isinstance(v, list):
            return [self.message(m) for m in v]
        return ("not-a-list", type(v).__name__)


def _walk_messages(obj: Any) -> list[BaseMessage]:
    """The message objects inside an input, in order (to compare mutations)."""
    if isinstance(obj, BaseMessage):
        return [obj]
    if isinstance(obj, list):
        return [m for m in obj if isinstance(m, BaseMessage)]
    return []


def _run(fn: Callable, make_case: Callable[[], tuple]) -> Any:
    left, right, kwargs = make_case()
    norm = _Normalizer()
    try:
        result = fn(left, right, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the class is what we compare
        outcome: Any = ("raised", type(exc).__name__)
    else:
        outcome = ("returned", norm.value(result))
    # ids written back onto the caller's messages
    written = [
        norm.id(m.id) for m in _walk_messages(left) + _walk_messages(right)
    ]
    return outcome, written


def assert_same_as_langgraph(make_case: Callable[[], tuple]) -> Any:
    theirs = _run(lg_add_messages, make_case)
    mine = _run(add_messages, make_case)
    assert mine == theirs
    return mine


def H(content: Any = "h", id: str | None = None, **kw: Any) -> HumanMessage:
    return HumanMessage(content=content, id=id, **kw)


def A(content: Any = "a", id: str | None = None, **kw: Any) -> AIMessage:
    return AIMessage(content=content, id=id, **kw)


def R(id: str) -> RemoveMessage:
    return RemoveMessage(id=id)


# Each case is a factory returning fresh (left, right, kwargs): add_messages
# writes ids onto the messages it is given, so inputs are never shared.
CASES: dict[str, Callable[[], tuple]] = {
    "append_single": lambda: ([H("hello", "1")], A("hi", "2"), {}),
    "append_list": lambda: ([H("hello", "1")], [A("hi", "2"), SystemMessage("s", id="3")], {}),
    "both_single": lambda: (H("hello", "1"), A("hi", "2"), {}),
    "empty_both": lambda: ([], [], {}),
    "empty_left": lambda: ([], [H("x", "1")], {}),
    "empty_right": lambda: ([H("x", "1")], [], {}),
    "replace_in_place": lambda: ([H("a", "1"), A("b", "2"), H("c", "3")], A("B", "2"), {}),
    "replace_changes_type": lambda: ([H("a", "1"), A("b", "2")], [H("now human", "2")], {}),
    "duplicates_in_right": lambda: ([], [A("x", "1"), A("y", "1")], {}),
    "duplicates_in_left": lambda: ([A("x", "1"), A("y", "1"), H("z", "2")], [A("new", "1")], {}),
    "remove_dup_in_left": lambda: ([A("x", "1"), H("z", "2"), A("y", "1")], [R("1")], {}),
    "remove_one": lambda: ([H("a", "1"), A("b", "2")], R("2"), {}),
    "remove_twice": lambda: ([H("a", "1"), A("b", "2")], [R("2"), R("2")], {}),
    "remove_all_by_id": lambda: ([H("a", "1"), A("b", "2")], [R("1"), R("2")], {}),
    "remove_then_readd": lambda: (
        [A("x", "1"), H("y", "2")],
        [R("1"), A("again", "1"), A("again2", "1")],
        {},
    ),
    "readd_then_remove": lambda: ([A("x", "1"), H("y", "2")], [A("new", "1"), R("1")], {}),
    "remove_added_in_same_update": lambda: ([H("a", "1")], [A("b", "2"), R("2")], {}),
    "remove_missing_id": lambda: ([H("a", "1")], R("2"), {}),
    "remove_missing_after_valid": lambda: ([H("a", "1")], [A("b", "2"), R("nope")], {}),
    "mixed_operations": lambda: (
        [H("a", "1"), A("b", "2")],
        [H("A", "1"), R("2"), SystemMessage("c", id="3")],
        {},
    ),
    "missing_ids_both_sides": lambda: ([H("a"), A("b")], [A("c"), H("d", "x")], {}),
    "missing_ids_with_remove": lambda: ([H("a"), A("b", "k")], [R("k"), H("c")], {}),
    "empty_string_id_is_kept": lambda: ([H("a", "")], [A("b", "")], {}),
    "remove_all_only": lambda: ([H("a"), A("b")], [R(LG_REMOVE_ALL_MESSAGES)], {}),
    "remove_all_single": lambda: ([H("a"), A("b")], R(LG_REMOVE_ALL_MESSAGES), {}),
    "remove_all_then_add": lambda: ([H("a"), A("b")], [R(LG_REMOVE_ALL_MESSAGES), H("new")], {}),
    "remove_all_drops_preceding_right": lambda: (
        [H("a"), A("b")],
        [H("before"), R(LG_REMOVE_ALL_MESSAGES), H("after")],
        {},
    ),
    "remove_all_twice_last_wins": lambda: (
        [H("a", "1")],
        [R(LG_REMOVE_ALL_MESSAGES), H("x"), R(LG_REMOVE_ALL_MESSAGES), H("y")],
        {},
    ),
    "remove_all_keeps_tail_verbatim": lambda: (
        [H("a", "1")],
        [R(LG_REMOVE_ALL_MESSAGES), A("x", "2"), A("y", "2"), R("zzz")],
        {},
    ),
    "remove_all_on_empty_left": lambda: ([], [R(LG_REMOVE_ALL_MESSAGES)], {}),
    "remove_all_with_bad_format": lambda: (
        [H("a")],
        [R(LG_REMOVE_ALL_MESSAGES), H("b")],
        {"format": "bogus"},
    ),
    "remove_all_with_openai_format": lambda: (
        [H("a")],
        [R(LG_REMOVE_ALL_MESSAGES), H([{"type": "text", "text": "b"}])],
        {"format": "langchain-openai"},
    ),
    "tuple_user": lambda: ([], ("user", "hi"), {}),
    "tuple_list": lambda: ([], [("user", "hi"), ("assistant", "yo"), ("system", "s")], {}),
    "tuple_human_ai": lambda: ([H("a", "1")], [("human", "hi"), ("ai", "yo")], {}),
    "string_single": lambda: ([], "hello", {}),
    "string_list": lambda: ([H("a", "1")], ["x", "y"], {}),
    "dict_single": lambda: ([], {"role": "user", "content": "hi"}, {}),
    "dict_with_id_replaces": lambda: ([H("a", "1")], {"role": "assistant", "content": "b", "id": "1"}, {}),
    "dict_tool": lambda: (
        [A("", "1", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])],
        [{"role": "tool", "content": "r", "tool_call_id": "c1"}],
        {},
    ),
    "dict_ai_with_tool_calls": lambda: (
        [],
        [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}
        ]}],
        {},
    ),
    "dict_in_left": lambda: ([{"role": "user", "content": "a", "id": "1"}], [A("b", "2")], {}),
    "string_left": lambda: ("hello", [A("b", "2")], {}),
    "chunk_right": lambda: ([H("a", "1")], AIMessageChunk(content="c", id="2"), {}),
    "chunk_left_and_right": lambda: ([AIMessageChunk(content="a", id="1")], [AIMessageChunk(content="b", id="2")], {}),
    "chunk_without_id": lambda: ([], [AIMessageChunk(content="c")], {}),
    "chunk_with_tool_call_chunks": lambda: (
        [],
        [AIMessageChunk(content="", id="1", tool_call_chunks=[
            {"name": "f", "args": '{"x": 1}', "id": "c1", "index": 0}
        ])],
        {},
    ),
    "human_and_tool_chunks": lambda: (
        [],
        [HumanMessageChunk(content="h", id="1"), ToolMessageChunk(content="t", tool_call_id="c", id="2")],
        {},
    ),
    "chunk_replaces_message": lambda: ([A("old", "1")], [AIMessageChunk(content="new", id="1")], {}),
    "mixed_likes": lambda: (
        [H("a", "1"), {"role": "assistant", "content": "b", "id": "2"}],
        [AIMessageChunk(content="c", id="3"), ("user", "d"), "e", {"role": "system", "content": "f"}],
        {},
    ),
    "tool_message": lambda: (
        [A("", "1", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])],
        ToolMessage("out", tool_call_id="c1", id="2"),
        {},
    ),
    "format_none": lambda: ([H("a", "1")], [A("b", "2")], {"format": None}),
    "format_empty_string": lambda: ([H("a", "1")], [A("b", "2")], {"format": ""}),
    "format_invalid": lambda: ([], [], {"format": "invalid"}),
    "format_invalid_after_missing_remove": lambda: ([H("a", "1")], [R("x")], {"format": "invalid"}),
    "format_openai_simple": lambda: ([H("a", "1")], [("ai", "yo")], {"format": "langchain-openai"}),
    "format_openai_blocks": lambda: (
        [("user", "meow")],
        [
            H([
                {"type": "text", "text": "Here's an image:", "cache_control": {"type": "ephemeral"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "1234"}},
            ]),
            A([{"type": "tool_use", "name": "foo", "input": {"bar": "baz"}, "id": "1"}]),
            H([{
                "type": "tool_result", "tool_use_id": "1", "is_error": False,
                "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "1234"}}],
            }]),
        ],
        {"format": "langchain-openai"},
    ),
    "bad_tuple": lambda: ([], ("user", "hi", "extra"), {}),
    "bad_role": lambda: ([], [("wizard", "hi")], {}),
    "none_in_list": lambda: ([], [None], {}),
    "int_item": lambda: ([], [42], {}),
    "tuple_of_messages_is_not_a_list": lambda: ([], (H("a", "1"), H("b", "2")), {}),
    "dict_missing_content": lambda: ([], [{"role": "user"}], {}),
    "left_none": lambda: (None, [H("a", "1")], {}),
    "right_none": lambda: ([H("a", "1")], None, {}),
    "left_empty_right_none": lambda: ([], None, {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_result_as_langgraph(name: str) -> None:
    assert_same_as_langgraph(CASES[name])


def _random_update(rng: random.Random, known: list[str], counter: list[int]) -> Any:
    """A random update: fresh/known ids, removals of known ids, coercibles."""
    items: list[Any] = []
    for _ in range(rng.randint(0, 6)):
        roll = rng.random()
        if roll < 0.25:
            counter[0] += 1
            items.append(A(f"m{counter[0]}", f"id{counter[0]}"))
        elif roll < 0.4 and known:
            items.append(H(f"r{rng.random():.3f}", rng.choice(known)))
        elif roll < 0.5 and known:
            items.append(R(rng.choice(known)))
        elif roll < 0.6:
            items.append(A("anon"))
        elif roll < 0.7:
            items.append(("user", f"t{rng.randint(0, 9)}"))
        elif roll < 0.78:
            counter[0] += 1
            items.append({"role": "assistant", "content": "d", "id": f"id{counter[0]}"})
        elif roll < 0.86:
            items.append(AIMessageChunk(content="ch", id=rng.choice(known) if known and rng.random() < 0.5 else None))
        elif roll < 0.9:
            items.append("plain string")
        elif roll < 0.92:
            items.append(R(LG_REMOVE_ALL_MESSAGES))
        elif roll < 0.94:
            items.append(R("missing-id"))
        else:
            counter[0] += 1
            items.append(SystemMessage("s", id=f"id{counter[0]}"))
    if len(items) == 1 and rng.random() < 0.3:
        return items[0]
    return items


@pytest.mark.parametrize("seed", range(40))
def test_same_result_as_langgraph_over_random_conversations(seed: int) -> None:
    """A conversation of random updates, fed step by step to both reducers."""
    rng = random.Random(seed)
    counter = [0]
    known: list[str] = []
    # Build the updates as a script first so both sides replay identical inputs.
    script = []
    for _ in range(12):
        upd = _random_update(rng, known, counter)
        script.append(upd)
        for it in upd if isinstance(upd, list) else [upd]:
            if isinstance(it, BaseMessage) and it.id and not isinstance(it, RemoveMessage):
                known.append(it.id)
            if isinstance(it, dict) and it.get("id"):
                known.append(it["id"])

    def replay(fn: Callable) -> list:
        norm = _Normalizer()
        state: Any = []
        trace = []
        for upd in copy.deepcopy(script):
            try:
                state = fn(state, upd)
            except Exception as exc:  # noqa: BLE001
                trace.append(("raised", type(exc).__name__))
            else:
                trace.append(("ok", norm.value(state)))
        return trace

    assert replay(add_messages) == replay(lg_add_messages)


# --------------------------------------------------------------------------
# spec tests
# --------------------------------------------------------------------------


def test_remove_all_messages_constant_is_langgraphs() -> None:
    assert REMOVE_ALL_MESSAGES == LG_REMOVE_ALL_MESSAGES == "__remove_all__"


def test_new_ids_are_appended_in_order() -> None:
    result = add_messages([H("a", "1")], [A("b", "2"), H("c", "3")])
    assert [m.id for m in result] == ["1", "2", "3"]


def test_a_single_message_update_is_appended() -> None:
    assert add_messages([H("a", "1")], A("b", "2")) == [H("a", "1"), A("b", "2")]


def test_an_existing_id_is_replaced_in_place() -> None:
    result = add_messages([H("a", "1"), A("b", "2"), H("c", "3")], A("B", "2"))
    assert result == [H("a", "1"), A("B", "2"), H("c", "3")]


def test_the_last_of_duplicate_ids_in_an_update_wins() -> None:
    result = add_messages([], [A("x", "1"), A("y", "1")])
    assert result == [A("y", "1")]


def test_remove_message_deletes_by_id() -> None:
    assert add_messages([H("a", "1"), A("b", "2")], R("2")) == [H("a", "1")]


def test_removing_the_same_id_twice_is_not_an_error() -> None:
    assert add_messages([H("a", "1"), A("b", "2")], [R("2"), R("2")]) == [H("a", "1")]


def test_readding_a_removed_id_keeps_its_original_position() -> None:
    result = add_messages([A("x", "1"), H("y", "2")], [R("1"), A("back", "1")])
    assert result == [A("back", "1"), H("y", "2")]


def test_removing_a_missing_id_raises_value_error_naming_the_id_and_the_fix() -> None:
    with pytest.raises(ValueError) as info:
        add_messages([H("a", "1")], R("ghost-42"))
    text = str(info.value)
    # LangGraph's wording, so code matching on it keeps working
    assert "Attempting to delete a message with an ID that doesn't exist" in text
    assert "'ghost-42'" in text
    assert "REMOVE_ALL_MESSAGES" in text and "existing message" in text
    # and LangGraph raises the same class for the same input
    with pytest.raises(ValueError, match="doesn't exist"):
        lg_add_messages([H("a", "1")], R("ghost-42"))


def test_remove_all_messages_clears_everything_before_it() -> None:
    result = add_messages(
        [H("a"), A("b")],
        [H("before"), R(REMOVE_ALL_MESSAGES), H("after", "9")],
    )
    assert result == [H("after", "9")]


def test_remove_all_messages_alone_gives_an_empty_list() -> None:
    assert add_messages([H("a"), A("b")], [R(REMOVE_ALL_MESSAGES)]) == []


def test_tuples_dicts_and_strings_become_messages() -> None:
    result = add_messages(
        [],
        [("user", "t"), {"role": "assistant", "content": "d"}, "s", ("system", "x")],
    )
    assert [type(m) for m in result] == [HumanMessage, AIMessage, HumanMessage, SystemMessage]
    assert [m.content for m in result] == ["t", "d", "s", "x"]


def test_a_single_tuple_update_is_one_message() -> None:
    (only,) = add_messages([], ("user", "hi"))
    assert isinstance(only, HumanMessage) and only.content == "hi"


def test_chunks_become_full_messages_on_both_sides() -> None:
    result = add_messages(
        [AIMessageChunk(content="a", id="1")],
        [AIMessageChunk(content="b", id="2"), HumanMessageChunk(content="c", id="3")],
    )
    assert [type(m) for m in result] == [AIMessage, AIMessage, HumanMessage]


def test_messages_without_ids_get_uuid4_ids_on_both_sides() -> None:
    left, right = [H("a")], [A("b")]
    result = add_messages(left, right)
    assert all(uuid.UUID(m.id).version == 4 for m in result)
    # written onto the caller's messages, as LangGraph does
    assert left[0].id == result[0].id and right[0].id == result[1].id


def test_existing_ids_are_never_changed() -> None:
    msgs = [H("a", "keep-me"), A("b", "")]
    add_messages(msgs, [])
    assert [m.id for m in msgs] == ["keep-me", ""]


def test_the_result_is_a_new_list_and_the_inputs_are_unchanged() -> None:
    left = [H("a", "1")]
    right = [A("b", "2")]
    result = add_messages(left, right)
    assert result is not left and result is not right
    assert left == [H("a", "1")] and right == [A("b", "2")]
    assert add_messages(left, []) is not left


def test_invalid_format_raises_value_error() -> None:
    with pytest.raises(ValueError, match="Unrecognized format="):
        add_messages([], [], format="invalid")


def test_format_factory_returns_a_two_argument_reducer() -> None:
    reducer = add_messages(format="langchain-openai")
    positional = [
        p for p in inspect.signature(reducer).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    assert len(positional) == 2
    blocks = [
        {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
    ]
    result = reducer([], [H(blocks)])
    assert result[0].content == [
        {"type": "text", "text": "x"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
    ]


def test_bare_call_returns_a_reducer() -> None:
    reducer = add_messages()
    assert reducer([H("a", "1")], [A("b", "2")]) == [H("a", "1"), A("b", "2")]


def test_add_messages_itself_has_a_two_argument_reducer_signature() -> None:
    params = inspect.signature(add_messages).parameters.values()
    assert sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) == 2


@pytest.mark.parametrize("left,right,given", [(None, [], "right"), ([], None, "left")])
def test_passing_only_one_side_raises_value_error_naming_it(left, right, given) -> None:
    with pytest.raises(ValueError, match="Must specify non-null arguments") as info:
        add_messages(left, right)
    assert f"received '{given}'" in str(info.value)


def test_messages_state_declares_messages_with_add_messages() -> None:
    from typing import get_type_hints

    hints = get_type_hints(MessagesState, include_extras=True)
    assert list(hints) == ["messages"]
    assert hints["messages"].__metadata__ == (add_messages,)
    assert hints["messages"].__origin__ == list[AnyMessage]


def test_messages_state_works_as_a_langgraph_state_schema() -> None:
    """Our reducer drives real LangGraph graphs too (the widgets show both)."""
    from langgraph.graph import END, START, StateGraph

    class State(MessagesState):
        turns: int

    def bot(state: State) -> dict:
        return {"messages": [("assistant", f"seen {len(state['messages'])}")], "turns": 1}

    builder = StateGraph(State)
    builder.add_node("bot", bot)
    builder.add_edge(START, "bot")
    builder.add_edge("bot", END)
    out = builder.compile().invoke({"messages": [("user", "hi")]})
    assert [type(m) for m in out["messages"]] == [HumanMessage, AIMessage]
    assert out["messages"][1].content == "seen 1"
    assert all(m.id for m in out["messages"])


def test_add_messages_works_in_a_pydantic_state() -> None:
    class State(BaseModel):
        messages: Annotated[list[AnyMessage], add_messages]

    s = State(messages=[H("a", "1")])
    assert add_messages(s.messages, [A("b", "2")]) == [H("a", "1"), A("b", "2")]


def test_merging_is_linear_on_long_conversations() -> None:
    """50k messages, 5k replacements + 5k appends + 100 removals: well under a second.

    A quadratic merge would need ~5e8 comparisons here.
    """
    left = [H(str(i), f"m{i}") for i in range(50_000)]
    right: list[Any] = [A("r", f"m{i}") for i in range(0, 50_000, 10)]
    right += [A("n", f"n{i}") for i in range(5_000)]
    right += [R(f"m{i}") for i in range(1, 50_000, 500)]
    start = time.perf_counter()
    result = add_messages(left, right)
    elapsed = time.perf_counter() - start
    assert len(result) == 50_000 + 5_000 - 100
    assert elapsed < 1.0, elapsed

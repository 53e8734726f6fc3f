"""Loading a checkpoint never imports arbitrary modules or runs code."""

from __future__ import annotations

import dataclasses
import json
import datetime
import enum
import pickle
import uuid
from decimal import Decimal
from pathlib import Path

import ormsgpack
import pydantic
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Interrupt, Send

from lgnb.checkpoint.serde import (
    CheckpointDecodeError,
    StrictSerializer,
    UnsafeCheckpointTypeError,
)
from lgnb.checkpoint.sqlite import SqliteSaver

from _ckpt_helpers import checkpoint, config, os_system_row


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Profile(pydantic.BaseModel):
    name: str
    tags: list[str] = []


class Color(enum.Enum):
    RED = "red"


def test_crafted_row_naming_os_system_is_refused_and_nothing_runs(
    saver: SqliteSaver, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    v = saver.get_next_version(None)
    stored = saver.put(config("t"), checkpoint({"doc": "ok"}, {"doc": v}), {}, {"doc": v})
    saver.conn.execute(
        "UPDATE lgnb_blobs SET blob = ?, type = 'msgpack' WHERE channel = 'doc'",
        (os_system_row(f"touch {marker}"),),
    )
    with pytest.raises(UnsafeCheckpointTypeError, match=r"os\.system.*allow"):
        saver.get_tuple(stored)
    assert not marker.exists()


def test_the_unsafe_opt_in_runs_what_a_crafted_row_names(db_path: Path, tmp_path: Path) -> None:
    """What the strict default prevents: LangGraph's permissive loading, asked for by
    name, runs the command a row names (so the refusal tests above refuse real code)."""
    marker = tmp_path / "pwned"
    with SqliteSaver.from_conn_string(db_path, allow_unsafe_deserialization=True) as saver:
        assert type(saver.serde) is JsonPlusSerializer
        v = saver.get_next_version(None)
        stored = saver.put(config("t"), checkpoint({"doc": "ok"}, {"doc": v}), {}, {"doc": v})
        saver.conn.execute(
            "UPDATE lgnb_blobs SET blob = ?, type = 'msgpack' WHERE channel = 'doc'",
            (os_system_row(f"touch {marker}"),),
        )
        saver.get_tuple(stored)
    assert marker.exists()


def test_refused_type_is_refused_even_nested_inside_an_allowed_one() -> None:
    inner = ormsgpack.Ext(0, ormsgpack.packb(("subprocess", "getoutput", "id")))
    outer = ormsgpack.Ext(2, ormsgpack.packb(("collections", "deque", {"iterable": [inner]})))
    with pytest.raises(UnsafeCheckpointTypeError, match="subprocess.getoutput"):
        StrictSerializer().loads_typed(("msgpack", ormsgpack.packb(outer)))


def test_pickle_is_never_used(saver: SqliteSaver) -> None:
    serde = StrictSerializer()
    assert serde.pickle_fallback is False
    with pytest.raises(CheckpointDecodeError, match="pickle"):
        serde.loads_typed(("pickle", pickle.dumps({"a": 1})))
    with pytest.raises(TypeError, match="Cannot store a value of type builtins.object"):
        serde.dumps_typed(object())


def test_only_allowlisted_method_calls_are_revived() -> None:
    payload = ormsgpack.packb(ormsgpack.Ext(3, ormsgpack.packb(("os", "path", "/", "exists"))))
    with pytest.raises(UnsafeCheckpointTypeError):
        StrictSerializer().loads_typed(("msgpack", payload))


def test_unregistered_type_is_refused_when_written_with_the_fix_in_the_message(
    saver: SqliteSaver,
) -> None:
    v = saver.get_next_version(None)
    with pytest.raises(UnsafeCheckpointTypeError, match=r"allow=\[Point\]"):
        saver.put(config("t"), checkpoint({"p": Point(1, 2)}, {"p": v}), {}, {"p": v})


def test_registered_user_types_round_trip(db_path) -> None:
    values = {"p": Point(1, 2), "who": Profile(name="ada", tags=["x"]), "c": Color.RED}
    versions = {k: "1" for k in values}
    with SqliteSaver.from_conn_string(db_path, allow=[Point, Profile, Color]) as saver:
        stored = saver.put(config("t"), checkpoint(values, versions), {}, versions)
        assert saver.get_tuple(stored).checkpoint["channel_values"] == values


def test_messages_and_stdlib_values_round_trip() -> None:
    serde = StrictSerializer()
    values = [
        [HumanMessage("hi", id="1"), AIMessage("yo", id="2", tool_calls=[]), ToolMessage("r", tool_call_id="c")],
        datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone.utc),
        datetime.date(2024, 5, 1),
        datetime.timedelta(seconds=3),
        uuid.UUID(int=7),
        Decimal("1.5"),
        {1, 2},
        frozenset({"a"}),
        Send("node", {"x": 1}),
        Interrupt(value={"ask": "ok?"}, id="i1"),
        {"nested": [1, 2.5, None, "s", b"raw"]},
        None,
        b"bytes",
    ]
    for value in values:
        assert serde.loads_typed(serde.dumps_typed(value)) == value


def test_bytes_match_langgraph_jsonplus_so_data_stays_portable() -> None:
    value = {"messages": [HumanMessage("hi", id="1")], "n": 3}
    assert StrictSerializer().dumps_typed(value) == JsonPlusSerializer().dumps_typed(value)


def test_langgraph_schema_allowlist_extends_the_strict_serializer(db_path) -> None:
    with SqliteSaver.from_conn_string(db_path) as saver:
        extended = saver.with_allowlist({(Point.__module__, Point.__name__)})
        assert extended is not saver and isinstance(extended.serde, StrictSerializer)
        v = "1"
        stored = extended.put(config("t"), checkpoint({"p": Point(3, 4)}, {"p": v}), {}, {"p": v})
        assert extended.get_tuple(stored).checkpoint["channel_values"]["p"] == Point(3, 4)
        with pytest.raises(UnsafeCheckpointTypeError):
            saver.get_tuple(stored)


def test_a_users_serializer_subclass_stays_on_the_saver_it_holds_once_a_graph_compiles(db_path) -> None:
    """`serde=` a subclass of StrictSerializer (logging, compression): compiling a graph
    that teaches the saver its schema's classes keeps that subclass, and its settings, on
    the saver the user holds and on the graph's."""
    from typing_extensions import TypedDict

    from lgnb.graph import START, StateGraph

    class Counting(StrictSerializer):
        def __init__(self, *, allow=()) -> None:
            super().__init__(allow=allow)
            self.loads = []

        def loads_typed(self, data):
            self.loads.append(data[0])
            return super().loads_typed(data)

    class S(TypedDict, total=False):
        p: Point

    with SqliteSaver.from_conn_string(db_path, serde=Counting()) as saver:
        g = StateGraph(S)
        g.add_node("n", lambda s: {"p": Point(1, 2)})
        g.add_edge(START, "n")
        app = g.compile(checkpointer=saver)
        assert type(saver.serde) is Counting and type(app.checkpointer.serde) is Counting
        app.invoke({}, config("t"))
        assert saver.get_tuple(config("t")).checkpoint["channel_values"]["p"] == Point(1, 2)
        assert saver.serde.loads, "the user's loads_typed was not called"


def test_serde_and_allow_are_exclusive(db_path) -> None:
    with pytest.raises(TypeError, match="either serde= or allow="):
        SqliteSaver(str(db_path), serde=StrictSerializer(), allow=[Point])


def test_plain_data_decodes_without_the_ext_hook_and_marker_bytes_do_not_confuse_it() -> None:
    """Payloads without msgpack ext markers skip the checked decoder (nothing to rebuild);
    the same bytes inside strings, numbers or keys send a value down the checked path,
    which gives the same result; a damaged payload is still reported as damaged."""
    serde = StrictSerializer()
    marker_text = "caf\u00e9 \u00d4\u00d5\u00c7 \xc8"  # UTF-8 of these holds 0xc3 0x94 ... 0xc7 0xc8
    values = [
        {"a": [1, 2.5, None, True], "b": "plain"},
        marker_text,
        {"k\u00c7": marker_text, 200: -199, 2**40: [b"\xc7\xd4 bytes"]},
        [AIMessage("hi", id="m1"), {"nested": HumanMessage("there", id="h1")}],
    ]
    for value in values:
        assert serde.loads_typed(serde.dumps_typed(value)) == value
    typ, payload = serde.dumps_typed({"a": "x" * 40})
    with pytest.raises(CheckpointDecodeError):
        serde.loads_typed((typ, payload[:-5]))


# --- values an older LangGraph stored as JSON (before msgpack, 2024) -------------------------

_CALLED: list = []


class Recorder:
    """A class whose construction is a side effect: a crafted JSON row must not reach it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        _CALLED.append((args, kwargs))


def _lc1(cls: str, **kwargs: object) -> dict:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def test_json_rows_of_an_older_langgraph_load_langchain_messages_by_their_legacy_path() -> None:
    row = {"messages": [_lc1("HumanMessage", content="hi", id="h1"),
                        _lc1("AIMessage", content="hello", id="a1", tool_calls=[])],
           "count": 2, "nested": {"lc": 3, "kept": True}}
    got = StrictSerializer().loads_typed(("json", json.dumps(row).encode()))
    assert got["messages"] == [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")]
    assert got["count"] == 2 and got["nested"] == {"lc": 3, "kept": True}
    # the same as LangGraph's own serializer reads it
    assert got == JsonPlusSerializer().loads_typed(("json", json.dumps(row).encode()))


def test_json_rows_rebuild_langgraph_constructor_records_only_for_allowed_classes() -> None:
    allowed = {"lc": 2, "type": "constructor", "id": ["uuid", "UUID"], "args": ["12345678123456781234567812345678"]}
    assert StrictSerializer().loads_typed(("json", json.dumps(allowed).encode())) == uuid.UUID(int=0x12345678123456781234567812345678)
    crafted = {"lc": 2, "type": "constructor", "id": [*__name__.split("."), "Recorder"], "args": [1]}
    with pytest.raises(UnsafeCheckpointTypeError, match=r"Recorder: it is not on lgnb's checkpoint allowlist.*allow=\[Recorder\]"):
        StrictSerializer().loads_typed(("json", json.dumps({"v": [crafted]}).encode()))
    assert _CALLED == []
    # registered with the saver, it is rebuilt
    got = StrictSerializer(allow=[Recorder]).loads_typed(("json", json.dumps(crafted).encode()))
    assert isinstance(got, Recorder) and _CALLED == [((1,), {})]
    _CALLED.clear()


def test_json_rows_refuse_a_langchain_class_not_on_the_allowlist_by_its_stored_path() -> None:
    prompt = {"lc": 1, "type": "constructor", "id": ["langchain", "prompts", "prompt", "PromptTemplate"],
              "kwargs": {"template": "{x}", "input_variables": ["x"]}}
    with pytest.raises(UnsafeCheckpointTypeError, match=r"langchain\.prompts\.prompt\.PromptTemplate"):
        StrictSerializer().loads_typed(("json", json.dumps(prompt).encode()))
    from langchain_core.prompts import PromptTemplate

    assert StrictSerializer(allow=[PromptTemplate]).loads_typed(
        ("json", json.dumps(prompt).encode())) == PromptTemplate.from_template("{x}")


def test_damaged_json_rows_are_a_decode_error() -> None:
    with pytest.raises(CheckpointDecodeError, match="not valid JSON"):
        StrictSerializer().loads_typed(("json", b"{not json"))


def test_writing_the_same_typed_values_again_still_refuses_what_the_allowlist_lacks() -> None:
    """A saver writes a conversation again at every step; the typed values it checked
    once are not decoded again, but the check still holds: a new unallowed type is
    refused next to known messages, the same message bytes are refused once the
    allowlist no longer has their type, and a serializer with its own allowlist checks
    afresh."""
    history = [HumanMessage(f"m{i}", id=f"h{i}") for i in range(50)]
    strict = StrictSerializer()
    first = strict.dumps_typed(history)
    assert strict.dumps_typed(history) == first  # checked once, the same bytes again
    assert strict.loads_typed(first) == history
    with pytest.raises(UnsafeCheckpointTypeError, match="Profile"):
        strict.dumps_typed([*history, Profile(name="not allowed")])
    allowed = StrictSerializer(allow=[Profile])
    assert allowed.loads_typed(allowed.dumps_typed([*history, Profile(name="ok")]))[-1].name == "ok"
    with pytest.raises(UnsafeCheckpointTypeError, match="Profile"):
        strict.dumps_typed([Profile(name="still not allowed")])
    narrowed = StrictSerializer(allow=[Profile])
    narrowed.dumps_typed([Profile(name="ok")])
    narrowed.allowed = StrictSerializer().allowed  # the allowlist replaced: nothing is trusted
    with pytest.raises(UnsafeCheckpointTypeError, match="Profile"):
        narrowed.dumps_typed([Profile(name="ok")])

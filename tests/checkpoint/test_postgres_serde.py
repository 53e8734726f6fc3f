"""lgnb's PostgreSQL savers load as strictly as its SQLite saver.

A row crafted by anyone who can write to the database — naming `os.system` or
`subprocess.run` — is refused by the sync and async savers before anything runs; a
graph's own pydantic models and dataclasses round-trip with default settings (the
graph tells the saver its classes when it compiles); LangGraph's permissive loading
comes back only when asked for by name, `allow_unsafe_deserialization=True`.

Real PostgreSQL (`postgres_url`), real rows written with SQL, real commands: each
crafted row would create a marker file, and the tests assert it does not exist (and,
with the unsafe opt-in, that it does — so the refusals refuse real code).
"""

from __future__ import annotations

import dataclasses
import operator
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import psycopg
import pydantic
import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from psycopg.rows import dict_row
from typing_extensions import TypedDict

from lgnb.checkpoint.postgres import PostgresSaver, ShallowPostgresSaver
from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver, AsyncShallowPostgresSaver
from lgnb.checkpoint.serde import StrictSerializer, UnsafeCheckpointTypeError
from lgnb.graph import START, StateGraph
from lgnb.types import Command, interrupt

from _ckpt_helpers import checkpoint, config, os_system_row, subprocess_row


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Profile(pydantic.BaseModel):
    name: str
    tags: list[str] = []


class Card(TypedDict, total=False):
    who: Profile
    where: Point
    log: Annotated[list, operator.add]


class Loose(TypedDict, total=False):
    data: Any


PAYLOADS: dict[str, Callable[[Path], bytes]] = {
    "os.system": lambda marker: os_system_row(f"touch {marker}"),
    "subprocess.run": lambda marker: subprocess_row(["touch", str(marker)]),
}
WHERE = ["checkpoint_blobs", "checkpoint_writes"]  # a channel value, a pending write


def _thread() -> str:
    return f"lgnb-serde-{uuid.uuid4().hex}"


DOC = {"doc": ["ok"]}  # not a primitive: PostgresSaver keeps those inline, as JSON


def _put_thread(saver: Any, thread_id: str) -> dict:
    """A checkpoint with one channel value and one pending write; its config."""
    v = saver.get_next_version(None, None)
    stored = saver.put(config(thread_id), checkpoint(DOC, {"doc": v}), {}, {"doc": v})
    saver.put_writes(stored, [("doc", "next")], "task-1")
    return stored


async def _aput_thread(saver: Any, thread_id: str) -> dict:
    v = saver.get_next_version(None, None)
    stored = await saver.aput(config(thread_id), checkpoint(DOC, {"doc": v}), {}, {"doc": v})
    await saver.aput_writes(stored, [("doc", "next")], "task-1")
    return stored


def _plant(url: str, table: str, thread_id: str, row: bytes) -> None:
    """Overwrite the thread's stored bytes in `table`, as an attacker with SQL access would."""
    with psycopg.connect(url, autocommit=True) as conn:
        changed = conn.execute(
            f"UPDATE {table} SET type = 'msgpack', blob = %s WHERE thread_id = %s",
            (row, thread_id),
        ).rowcount
    assert changed == 1


@pytest.fixture
def marker(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pwned"
    yield path
    path.unlink(missing_ok=True)


# ------------------------------------------------------------ crafted rows


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_a_crafted_row_is_refused_by_the_sync_saver_and_nothing_runs(
    postgres_url: str, marker: Path, payload: str, where: str
) -> None:
    thread_id = _thread()
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        stored = _put_thread(saver, thread_id)
        _plant(postgres_url, where, thread_id, PAYLOADS[payload](marker))
        try:
            with pytest.raises(UnsafeCheckpointTypeError, match=payload.replace(".", r"\.")) as err:
                saver.get_tuple(stored)
            with pytest.raises(UnsafeCheckpointTypeError):
                list(saver.list(config(thread_id)))
        finally:
            saver.delete_thread(thread_id)
    assert "allow=[" in str(err.value)
    assert not marker.exists()


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("payload", list(PAYLOADS))
async def test_a_crafted_row_is_refused_by_the_async_saver_and_nothing_runs(
    postgres_url: str, marker: Path, payload: str, where: str
) -> None:
    thread_id = _thread()
    async with AsyncPostgresSaver.from_conn_string(postgres_url) as saver:
        await saver.setup()
        stored = await _aput_thread(saver, thread_id)
        _plant(postgres_url, where, thread_id, PAYLOADS[payload](marker))
        try:
            with pytest.raises(UnsafeCheckpointTypeError, match=payload.replace(".", r"\.")):
                await saver.aget_tuple(stored)
            with pytest.raises(UnsafeCheckpointTypeError):
                [t async for t in saver.alist(config(thread_id))]
        finally:
            await saver.adelete_thread(thread_id)
    assert not marker.exists()


def _card_graph(saver: Any) -> Any:
    def ask(state: Card) -> Card:
        answer = interrupt(f"{state['who'].name} at {state['where'].x},{state['where'].y}?")
        kinds = f"{type(state['who']).__name__}:{type(state['where']).__name__}"
        return {"log": [f"{answer}:{kinds}"]}

    g = StateGraph(Card)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    return g.compile(checkpointer=saver)


CARD = {"who": Profile(name="ada", tags=["x"]), "where": Point(1, 2), "log": []}


def test_a_graphs_own_classes_do_not_let_a_crafted_row_through(postgres_url: str, marker: Path) -> None:
    """Compiling adds the schema's classes to the saver's allowlist, and nothing else."""
    thread_id = _thread()
    cfg = {"configurable": {"thread_id": thread_id}}
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        app = _card_graph(saver)
        app.invoke(CARD, cfg)
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(
                "UPDATE checkpoint_blobs SET blob = %s WHERE thread_id = %s AND channel = 'who'",
                (os_system_row(f"touch {marker}"), thread_id),
            )
        try:
            with pytest.raises(UnsafeCheckpointTypeError, match=r"os\.system"):
                app.get_state(cfg)
        finally:
            saver.delete_thread(thread_id)
    assert not marker.exists()


@pytest.mark.parametrize("flavor", ["sync", "async"])
async def test_the_unsafe_opt_in_runs_what_a_crafted_row_names(
    postgres_url: str, marker: Path, flavor: str
) -> None:
    """LangGraph's permissive loading, asked for by name: the command runs. This is what
    the strict default prevents, and proof that the refused rows above carry real code."""
    thread_id = _thread()
    if flavor == "sync":
        with PostgresSaver.from_conn_string(postgres_url, allow_unsafe_deserialization=True) as saver:
            saver.setup()
            assert type(saver.serde) is JsonPlusSerializer
            stored = _put_thread(saver, thread_id)
            _plant(postgres_url, "checkpoint_blobs", thread_id, PAYLOADS["os.system"](marker))
            saver.get_tuple(stored)
            saver.delete_thread(thread_id)
    else:
        async with AsyncPostgresSaver.from_conn_string(
            postgres_url, allow_unsafe_deserialization=True
        ) as saver:
            await saver.setup()
            stored = await _aput_thread(saver, thread_id)
            _plant(postgres_url, "checkpoint_blobs", thread_id, PAYLOADS["os.system"](marker))
            await saver.aget_tuple(stored)
            await saver.adelete_thread(thread_id)
    assert marker.exists()


# ------------------------------------------------------------ user classes


def test_a_graphs_pydantic_model_and_dataclass_round_trip_on_postgres_by_default(postgres_url: str) -> None:
    cfg = {"configurable": {"thread_id": _thread()}}
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        _card_graph(saver).invoke(CARD, cfg)
    with PostgresSaver.from_conn_string(postgres_url) as saver:  # another connection, as another kernel
        app = _card_graph(saver)
        assert app.get_state(cfg).values == CARD
        assert app.invoke(Command(resume="yes"), cfg)["log"] == ["yes:Profile:Point"]
        saver.delete_thread(cfg["configurable"]["thread_id"])


async def test_a_graphs_pydantic_model_and_dataclass_round_trip_on_async_postgres_by_default(
    postgres_url: str,
) -> None:
    cfg = {"configurable": {"thread_id": _thread()}}
    async with AsyncPostgresSaver.from_conn_string(postgres_url) as saver:
        await saver.setup()
        await _card_graph(saver).ainvoke(CARD, cfg)
    async with AsyncPostgresSaver.from_conn_string(postgres_url) as saver:
        app = _card_graph(saver)
        assert (await app.aget_state(cfg)).values == CARD
        assert (await app.ainvoke(Command(resume="yes"), cfg))["log"] == ["yes:Profile:Point"]
        await saver.adelete_thread(cfg["configurable"]["thread_id"])


def test_without_the_graph_the_saver_refuses_user_classes_and_the_opt_ins_load_them(
    postgres_url: str,
) -> None:
    """A bare saver knows only the default types; `allow=[...]` and the unsafe opt-in
    both load the model and the dataclass the graph stored. (The saver the graph compiled
    with learned them: it reads them as they are.)"""
    thread_id = _thread()
    cfg = {"configurable": {"thread_id": thread_id}}
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        _card_graph(saver).invoke(CARD, cfg)
        assert saver.get_tuple(cfg).checkpoint["channel_values"]["who"] == CARD["who"]
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        with pytest.raises(UnsafeCheckpointTypeError, match=r"PostgresSaver\.from_conn_string\(url, allow="):
            saver.get_tuple(cfg)
    for options in ({"allow": [Profile, Point]}, {"allow_unsafe_deserialization": True}):
        with PostgresSaver.from_conn_string(postgres_url, **options) as saver:
            values = saver.get_tuple(cfg).checkpoint["channel_values"]
            assert values["who"] == CARD["who"] and values["where"] == CARD["where"]
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.delete_thread(thread_id)


def _loose(saver: Any) -> Any:
    g = StateGraph(Loose)
    g.add_node("put", lambda s: {"data": Point(3, 4)})
    g.add_edge(START, "put")
    return g.compile(checkpointer=saver)


async def test_a_class_the_schema_does_not_name_is_refused_naming_the_fix_and_allow_stores_it(
    postgres_url: str,
) -> None:
    cfg = {"configurable": {"thread_id": _thread()}}
    async with AsyncPostgresSaver.from_conn_string(postgres_url) as saver:
        await saver.setup()
        with pytest.raises(UnsafeCheckpointTypeError, match=r"Point.*allow=\[Point\]"):
            await _loose(saver).ainvoke({"data": None}, cfg)
    async with AsyncPostgresSaver.from_conn_string(postgres_url, allow=[Point]) as saver:
        assert await _loose(saver).ainvoke({"data": None}, cfg) == {"data": Point(3, 4)}
        assert (await _loose(saver).aget_state(cfg)).values == {"data": Point(3, 4)}
        await saver.adelete_thread(cfg["configurable"]["thread_id"])


# ------------------------------------------------------------ the other savers, options


@pytest.fixture
def fresh_database(postgres_url: str) -> Iterator[str]:
    """A database of its own: the deprecated shallow savers' tables and migrations
    differ from `PostgresSaver`'s, so they must not share the test database."""
    name = f"lgnb_shallow_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield postgres_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.mark.filterwarnings("ignore:ShallowPostgresSaver is deprecated:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:AsyncShallowPostgresSaver is deprecated:DeprecationWarning")
async def test_the_deprecated_shallow_savers_refuse_crafted_rows_too(fresh_database: str, marker: Path) -> None:
    row = PAYLOADS["subprocess.run"](marker)
    with psycopg.Connection.connect(fresh_database, autocommit=True, row_factory=dict_row) as conn:
        saver = ShallowPostgresSaver(conn)
        saver.setup()
        stored = _put_thread(saver, "shallow-sync")
        _plant(fresh_database, "checkpoint_blobs", "shallow-sync", row)
        with pytest.raises(UnsafeCheckpointTypeError, match=r"subprocess\.run"):
            saver.get_tuple(stored)
    async with AsyncShallowPostgresSaver.from_conn_string(fresh_database) as asaver:
        stored = await _aput_thread(asaver, "shallow-async")
        _plant(fresh_database, "checkpoint_blobs", "shallow-async", row)
        with pytest.raises(UnsafeCheckpointTypeError, match=r"subprocess\.run"):
            await asaver.aget_tuple(stored)
    assert not marker.exists()


NOWHERE = "postgresql://nobody@127.0.0.1:1/none"  # connecting would fail: options are checked first


@pytest.mark.parametrize(
    "options,message",
    [
        ({"serde": StrictSerializer(), "allow": [Point]}, "either serde= or allow="),
        ({"serde": JsonPlusSerializer(), "allow_unsafe_deserialization": True}, "either serde= or allow_unsafe"),
        ({"allow": [Point], "allow_unsafe_deserialization": True}, "allow= has no effect"),
        ({"allow_unsafe_deserialization": "yes"}, "must be True or False"),
        ({"allow": ["Point"]}, r"allow=\[MyModel\]"),
    ],
)
async def test_conflicting_serializer_options_are_refused_before_connecting(options: dict, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        with PostgresSaver.from_conn_string(NOWHERE, **options):
            pass
    with pytest.raises(TypeError, match=message):
        async with AsyncPostgresSaver.from_conn_string(NOWHERE, **options):
            pass


def test_a_serializer_passed_as_serde_is_used_as_given(postgres_url: str) -> None:
    serde = StrictSerializer(allow=[Point])
    with PostgresSaver.from_conn_string(postgres_url, serde=serde) as saver:
        assert saver.serde is serde
    with psycopg.Connection.connect(postgres_url, autocommit=True, row_factory=dict_row) as conn:
        assert PostgresSaver(conn, None, serde).serde is serde
        assert isinstance(PostgresSaver(conn).serde, StrictSerializer)

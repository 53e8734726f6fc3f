"""What data-science notebook users put in graph state, through every checkpointer,
compared with LangGraph.

Values: numpy arrays (float32, int64, bool, uint8, unicode, complex, 0-d, Fortran order,
strided), datetimes (naive, UTC, ZoneInfo, offsets), date / time / timedelta, Decimal, UUID,
sets, tuples, bytes / bytearray, Path, re.Pattern, nested dicts, Documents, messages with
tool calls and artifacts, and the enums / dataclasses / pydantic models a schema names. They
travel as node updates, Send args, interrupt payloads and resume values, and are read back
with invoke, get_state, get_state_history, update_state and a fork.

Checkpointers (`kind`): `none`; `memory` (InMemorySaver, LangGraph's on both engines);
`sqlite` (lgnb's `SqliteSaver(path)` / LangGraph's `SqliteSaver(sqlite3.connect(path,
check_same_thread=False))`); `postgres` (each engine's `PostgresSaver`; needs
`LGNB_TEST_POSTGRES_URL`, skipped otherwise).

Rules: what LangGraph round-trips (value, type, dtype, shape, memory order), lgnb does too;
what LangGraph's serializer refuses (DataFrame, Series, numpy scalars, complex, datetime64
arrays) fails the same way (`exc="extends"`), lgnb's message naming where the value is
(state key, input, Send, interrupt, resume), its type and the fix, the completed steps
intact and the thread continuing once fixed; with
`serde=JsonPlusSerializer(pickle_fallback=True)` DataFrames round-trip on both.

Deliberate differences, asserted on lgnb only, each test says why: its strict savers refuse
when written an enum / dataclass no schema names, a pandas Timestamp and an object array
(LangGraph loads a str, None), with the fix; a bytearray stays one on its SqliteSaver; a
failed save stops the run. The history widget shows all of it as text, never as HTML.
"""
import dataclasses
import datetime as dt
import enum
import itertools
import json
import os
import re
import sqlite3
import uuid
from collections.abc import Callable
from contextlib import closing, contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple, Optional
from zoneinfo import ZoneInfo

import _diff
import numpy as np
import pandas as pd
import pytest
from _diff import candidate_engine, capture, selftest_enabled
from _savers import thread
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict

KINDS = ("none", "memory", "sqlite", "postgres")
SAVED = ("memory", "sqlite", "postgres")
_files = itertools.count()


# --- the user's types (module level: LangGraph's serializer imports them by name) -----------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    HIGH = 3


class Mode(getattr(enum, "StrEnum", enum.Enum)):  # StrEnum: Python 3.11+
    FAST = "fast"


@dataclasses.dataclass
class Sample:
    when: dt.datetime
    values: np.ndarray
    tags: frozenset
    amount: Decimal


class Report(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    id: uuid.UUID
    created: dt.datetime
    scores: np.ndarray
    color: Color
    sample: Optional[Sample] = None


@dataclasses.dataclass
class Point:  # named by no schema below
    x: float
    y: float


class Unit(enum.Enum):  # named by no schema below
    KG = "kg"


class Coord(NamedTuple):
    lat: float
    lon: float


class Located(TypedDict):
    where: Optional[Coord]
    color: Color
    sample: Sample


class Nb(TypedDict, total=False):
    n: int
    bad: bool
    v: Any
    sent: Any
    back: Any
    color: Color
    level: Level
    mode: Mode
    sample: Sample
    report: Report


# --- values ---------------------------------------------------------------------------------

WHEN = dt.datetime(2024, 3, 1, 9, 30, 0, 123456)


def _sample() -> Sample:
    return Sample(WHEN, np.array([0.5, 1.5]), frozenset({"a", "b"}), Decimal("2.50"))


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"<b>x</b>": [1, 2], "y": ["p", "q"]})


ROUND_TRIP: dict[str, Callable[[], dict[str, Any]]] = {
    "float32_matrix": lambda: {"v": np.arange(6, dtype=np.float32).reshape(2, 3) / 4},
    "int64_vector": lambda: {"v": np.array([1, -2, 3**30], dtype=np.int64)},
    "bool_mask": lambda: {"v": np.array([True, False, True])},
    "uint8_image": lambda: {"v": np.arange(24, dtype=np.uint8).reshape(2, 3, 4)},
    "zero_d_array": lambda: {"v": np.array(2.5)},
    "fortran_order": lambda: {"v": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3))},
    "strided_slice": lambda: {"v": np.arange(10.0)[::3]},
    "unicode_array": lambda: {"v": np.array(["α", "beta"])},
    "complex_array": lambda: {"v": np.array([1 + 2j, -1j])},
    "datetimes": lambda: {"v": {
        "naive": WHEN, "utc": WHEN.replace(tzinfo=dt.timezone.utc),
        "paris": WHEN.replace(tzinfo=ZoneInfo("Europe/Paris")),
        "offset": WHEN.replace(tzinfo=dt.timezone(dt.timedelta(hours=-5, minutes=-30)))}},
    "date_time_timedelta": lambda: {"v": {
        "date": dt.date(2024, 2, 29), "time": dt.time(12, 1, 2, 3),
        "time_tz": dt.time(8, 0, tzinfo=dt.timezone.utc),
        "td": dt.timedelta(days=-1, seconds=5, microseconds=7)}},
    "decimal_uuid": lambda: {"v": {"price": Decimal("19.990"), "id": uuid.UUID(int=2**100 + 5)}},
    "sets": lambda: {"v": {"tags": {"a", "b"}, "frozen": frozenset({1, 2})}},
    "tuples": lambda: {"v": (1, ("a", 2.5), ())},
    "bytes": lambda: {"v": {"raw": b"\x00\xff", "buf": bytearray(b"ab")}},
    "top_level_bytearray": lambda: {"v": bytearray(b"xyz")},
    "path_and_pattern": lambda: {"v": {"path": Path("/data/run 1/out.csv"),
                                       "pattern": re.compile(r"^\d+$", re.M)}},
    "nested": lambda: {"v": {"stats": {"mean": np.array([0.25], dtype=np.float32),
                                       "when": dt.date(2024, 1, 2)},
                             "rows": [{"id": uuid.UUID(int=1), "amount": Decimal("-0.01"),
                                       "tags": frozenset({"x"})}]}},
    "documents": lambda: {"v": [Document(
        page_content="p", id="doc-1",
        metadata={"score": 0.5, "when": dt.date(2024, 1, 2), "vec": np.array([0.1, 0.2])})]},
    "messages_with_tool_calls": lambda: {"v": [
        HumanMessage("plot it", id="h1"),
        AIMessage("", id="a1", tool_calls=[{"name": "plot", "args": {"cols": ["a"], "n": 3},
                                            "id": "call_1"}]),
        ToolMessage("done", tool_call_id="call_1", id="t1",
                    artifact={"png": b"\x89PNG", "shape": np.array([2, 3]), "at": WHEN})]},
    "enums_the_schema_names": lambda: {"color": Color.RED, "level": Level.HIGH, "mode": Mode.FAST},
    "dataclass_the_schema_names": lambda: {"sample": _sample()},
    "pydantic_the_schema_names": lambda: {"report": Report(
        id=uuid.UUID(int=9), created=WHEN.replace(tzinfo=dt.timezone.utc),
        scores=np.array([0.5, 0.75], dtype=np.float32), color=Color.BLUE, sample=_sample())},
}

# what LangGraph's serializer gives back changed (lgnb's the same)
LANGGRAPH_CHANGES = {
    "datetimes": "a ZoneInfo tzinfo comes back as a fixed-offset timezone",
    "tuples": "tuples come back as lists",
    "bytes": "a bytearray inside a container comes back as bytes",
    "top_level_bytearray": "the same, in the interrupt payload's dict",
    "object_array": "None (its buffer held memory addresses)",
    "pandas_timestamp": "a str",
}

# no serializer of either engine stores these by default (both raise when writing)
UNSTORABLE: dict[str, Callable[[], Any]] = {
    "dataframe": _frame,
    "dataframe_in_a_dict": lambda: {"frame": _frame()},
    "series": lambda: pd.Series([1.5, 2.5], name="s"),
    "numpy_int64": lambda: np.int64(7),
    "numpy_float64": lambda: np.float64(0.5),
    "numpy_bool": lambda: np.bool_(True),
    "complex": lambda: complex(1, 2),
    "datetime64_array": lambda: np.array(["2024-01-01", "2024-02-01"], dtype="datetime64[ns]"),
}
# the fix each error must name (beyond the pickling serializer)
FIX = {"dataframe": "to_dict(", "dataframe_in_a_dict": "to_dict(", "series": "to_dict(",
       "numpy_int64": ".item()", "numpy_float64": ".item()", "numpy_bool": ".item()",
       "complex": "z.real", "datetime64_array": "astype(str)"}

# LangGraph stores these but loads them changed (or imports an unnamed class); lgnb's
# strict savers refuse them when written: (value, lgnb's fix, the value stored with the fix)
REFUSED_BY_LGNB: dict[str, tuple[Callable[[], Any], str, Any]] = {
    "object_array": (lambda: np.array([1, "a"], dtype=object), ".tolist()", [1, "a"]),
    "pandas_timestamp": (lambda: pd.Timestamp("2024-01-01 12:00"), "to_pydatetime()",
                         dt.datetime(2024, 1, 1, 12)),
    "enum_in_an_any_field": (lambda: {"c": Unit.KG}, "allow=[Unit]", {"c": Unit.KG}),
    "dataclass_in_an_any_field": (lambda: [Point(1.0, 2.0)], "allow=[Point]", [Point(1.0, 2.0)]),
}


def show(v: Any) -> Any:
    """`v` as comparable data that keeps what users rely on: every class, numpy dtype, shape
    and memory order, pandas dtypes, tz names."""
    if isinstance(v, np.ndarray):
        order = "F" if v.flags.f_contiguous and not v.flags.c_contiguous else "C"
        return ("ndarray", v.dtype.str, v.shape, order, show(v.tolist()))
    if isinstance(v, np.generic):
        return (type(v).__name__, v.item())
    if isinstance(v, pd.DataFrame):
        return ("DataFrame", [str(d) for d in v.dtypes], show(v.to_dict("list")))
    if isinstance(v, pd.Series):
        return ("Series", str(v.dtype), v.name, show(v.to_dict()))
    if isinstance(v, enum.Enum):
        return (type(v).__name__, v.name)
    if isinstance(v, (dt.date, dt.time, dt.timedelta, Decimal, uuid.UUID, Path, re.Pattern,
                      complex)):
        return (type(v).__name__, repr(v))
    if isinstance(v, (bytes, bytearray)):
        return (type(v).__name__, bytes(v))
    if isinstance(v, (set, frozenset)):
        return (type(v).__name__, sorted(repr(show(x)) for x in v))
    if isinstance(v, dict):
        return {k: show(x) for k, x in v.items()}
    if isinstance(v, list):
        return [show(x) for x in v]
    if isinstance(v, tuple):
        return ("tuple", [show(x) for x in v])
    if isinstance(v, BaseMessage):
        return (type(v).__name__, show(v.model_dump()))
    if isinstance(v, Document):
        return ("Document", v.id, v.page_content, show(v.metadata))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__, {f.name: show(getattr(v, f.name)) for f in dataclasses.fields(v)})
    if isinstance(v, BaseModel):
        return (type(v).__name__, {k: show(getattr(v, k)) for k in type(v).model_fields})
    if type(v).__name__ == "Interrupt":
        return ("Interrupt", show(v.value))
    return v


def snap(s: Any) -> Any:
    """What a user reads of a StateSnapshot, shown."""
    return show({"values": s.values, "next": list(s.next),
                 "interrupts": [i.value for i in s.interrupts],
                 "tasks": [(t.name, [i.value for i in t.interrupts]) for t in s.tasks],
                 "step": s.metadata.get("step"), "source": s.metadata.get("source")})


# --- checkpointers --------------------------------------------------------------------------


class Savers:
    """Opens a `kind` of saver for an engine: lgnb's on lgnb, LangGraph's on LangGraph."""

    def __init__(self, kind: str, tmp_path: Path, pg_url: Optional[str]) -> None:
        self.kind, self.tmp_path, self.pg_url = kind, tmp_path, pg_url
        self.path = ""

    @contextmanager
    def open(self, E: Any, *, serde: Any = None, allow: tuple = (), again: bool = False):
        """`again`: the database of the previous open (a new file otherwise)."""
        kw = {"allow": allow} if allow else {"serde": serde} if serde else {}  # allow: lgnb only
        if self.kind == "none":
            yield None
        elif self.kind == "memory":
            yield E.InMemorySaver(**kw)
        elif self.kind == "sqlite":
            if not again:
                self.path = str(self.tmp_path / f"{E.root}-{next(_files)}.sqlite")
            if E.root == "lgnb":
                from lgnb.checkpoint.sqlite import SqliteSaver

                with closing(SqliteSaver(self.path, **kw)) as saver:
                    yield saver
            else:
                from langgraph.checkpoint.sqlite import SqliteSaver

                with closing(sqlite3.connect(self.path, check_same_thread=False)) as conn:
                    yield SqliteSaver(conn, **kw)
        else:
            from psycopg import Connection
            from psycopg.rows import dict_row

            if E.root == "lgnb":
                from lgnb.checkpoint.postgres import PostgresSaver
            else:
                from langgraph.checkpoint.postgres import PostgresSaver
            with Connection.connect(self.pg_url, autocommit=True, prepare_threshold=0,
                                    row_factory=dict_row) as conn:
                saver = PostgresSaver(conn, **kw)
                saver.setup()
                yield saver


def _savers(kind: str, tmp_path: Path) -> Savers:
    url = None
    if kind == "postgres":
        url = os.environ.get("LGNB_TEST_POSTGRES_URL", "").strip()
        if not url:
            pytest.skip("LGNB_TEST_POSTGRES_URL is not set")
    return Savers(kind, tmp_path, url)


def run(differential: Any, scenario: Callable[[Any], Any], **kw: Any) -> Any:
    """`differential`, refusing a scenario that raised as a whole (each captures its errors)."""
    ref = differential(scenario, **kw)
    assert not (isinstance(ref, tuple) and ref[:1] == ("raises",)), f"the scenario raised: {ref}"
    return ref


# --- round trips ----------------------------------------------------------------------------


def notebook_app(E: Any, make: Callable[[], dict[str, Any]], saver: Any) -> Any:
    """load (returns the values) -> Send("w", values) -> w -> ask (interrupt(values))."""

    def load(s: Nb) -> dict[str, Any]:
        return {**make(), "n": s.get("n", 0) + 1}

    def ask(s: Nb) -> dict[str, Any]:
        return {"back": E.interrupt(make())}

    g = E.StateGraph(Nb)
    g.add_node("load", load)
    g.add_node("w", lambda arg: {"sent": arg})
    g.add_edge(E.START, "load")
    g.add_conditional_edges("load", lambda s: [E.Send("w", make())], ["w"])
    if saver is not None:
        g.add_node("ask", ask)
        g.add_edge("w", "ask")
    return g.compile(checkpointer=saver)


def round_trip(E: Any, savers: Savers, make: Callable[[], dict[str, Any]],
               serde: Any = None) -> dict[str, Any]:
    with savers.open(E, serde=serde) as saver:
        app = notebook_app(E, make, saver)
        cfg = thread("nb")
        if saver is None:
            return {"invoke": capture(lambda: show(app.invoke({"n": 0})))}
        out = {"paused": capture(lambda: show(app.invoke({"n": 0}, cfg))),
               "get_state": capture(lambda: snap(app.get_state(cfg))),
               "exact": capture(lambda: show(app.get_state(cfg).interrupts[0].value) == show(make())),
               "resumed": capture(lambda: show(app.invoke(E.Command(resume=make()), cfg))),
               "history": capture(lambda: [snap(h) for h in app.get_state_history(cfg)])}

        def update() -> Any:
            app.update_state(cfg, make(), as_node="ask")
            return snap(app.get_state(cfg))

        def fork() -> Any:
            old = next(h for h in app.get_state_history(cfg) if h.next == ("ask",))
            forked = app.update_state(old.config, {"n": 7})
            return (show(app.invoke(None, forked)),
                    show(app.invoke(E.Command(resume=make()), cfg)), snap(app.get_state(cfg)))

        out["update_state"] = capture(update)
        out["fork"] = capture(fork)
        return out


# LangGraph's SqliteSaver stores channel values inside the checkpoint, so a bytearray state
# value comes back as bytes; lgnb's (as InMemorySaver and PostgresSaver) keeps a bytearray.
# InMemorySaver is LangGraph's on both engines: what LangGraph loads changed is the same there.
# Without a checkpointer nothing is serialized: every value passes through.
ROUND_TRIP_CASES = [
    *[(k, name) for k in KINDS for name in ROUND_TRIP if (k, name) != ("sqlite", "top_level_bytearray")],
    *[("none", name) for name in UNSTORABLE], *[(k, name) for k in ("none", "memory") for name in REFUSED_BY_LGNB]]
# LangGraph's PostgresSaver stores a float subclass inline as a JSON number
POSTGRES_FLOAT = ("postgres", "numpy_float64")


@pytest.mark.parametrize(("kind", "name"), ROUND_TRIP_CASES)
def test_notebook_values_round_trip_through_every_read_api_like_langgraph(
        differential: Any, tmp_path: Path, kind: str, name: str) -> None:
    savers = _savers(kind, tmp_path)
    make = ROUND_TRIP.get(name) or (lambda: {"v": (UNSTORABLE.get(name) or REFUSED_BY_LGNB[name][0])()})
    ref = run(differential, lambda E: round_trip(E, savers, make))
    assert "raises" not in repr(ref), ref  # LangGraph stores and loads each of these
    if kind == "none":  # the Send arg and the state hold the very values the node made
        assert ref["invoke"]["sent"] == {k: ref["invoke"][k] for k in ref["invoke"]["sent"]}
    else:  # read back as it was written, or changed as LangGraph changes it
        assert ref["exact"] is (name not in LANGGRAPH_CHANGES), ref["exact"]
        if ref["exact"]:  # the resume value reached the node as the payload was read back
            assert ref["resumed"]["back"] == ref["get_state"]["interrupts"][0]


@pytest.mark.parametrize("kind", SAVED)
@pytest.mark.parametrize("name", list(UNSTORABLE))
def test_with_a_pickling_serializer_dataframes_and_numpy_scalars_round_trip(
        differential: Any, tmp_path: Path, kind: str, name: str) -> None:
    """`serde=JsonPlusSerializer(pickle_fallback=True)`, given to both engines' savers: what
    msgpack cannot encode is pickled (for files only you write: loading runs code)."""
    savers = _savers(kind, tmp_path)

    def make() -> dict[str, Any]:
        return {"v": UNSTORABLE[name]()}

    ref = run(differential,
              lambda E: round_trip(E, savers, make, serde=JsonPlusSerializer(pickle_fallback=True)))
    stored = float(make()["v"]) if (kind, name) == POSTGRES_FLOAT else make()["v"]
    assert "raises" not in repr(ref) and ref["fork"][2]["values"]["v"] == show(stored)


def test_a_bytearray_state_value_stays_a_bytearray_on_lgnb_sqlite(tmp_path: Path) -> None:
    """Deliberate: as on InMemorySaver and PostgresSaver; LangGraph's SqliteSaver gives bytes."""
    make = ROUND_TRIP["top_level_bytearray"]
    lg = round_trip(_diff.reference_engine(), _savers("sqlite", tmp_path), make)
    assert lg["get_state"]["values"]["v"] == ("bytes", b"xyz")
    mem = round_trip(_diff.reference_engine(), _savers("memory", tmp_path), make)
    ours = round_trip(candidate_engine(), _savers("sqlite", tmp_path), make)
    assert mem["get_state"]["values"]["v"] == ("bytearray", b"xyz")
    if not selftest_enabled():
        assert _diff.normalize(ours) == _diff.normalize(mem)


# --- values no serializer stores: the same error, named and fixable, nothing lost ------------


def frame_app(E: Any, where: str, make: Callable[[], Any], saver: Any) -> Any:
    """a -> b -> c; `make()` travels `where` while the state's `bad` flag is on (default)."""

    def value(s: Nb) -> Any:
        return make() if s.get("bad", True) else "fixed"

    def b(s: Nb) -> dict[str, Any]:
        if where == "interrupt":
            return {"back": E.interrupt(value(s))}
        if where == "resume":
            return {"back": E.interrupt("rows?")}
        return {"v": value(s)} if where == "node" else {}

    g = E.StateGraph(Nb)
    g.add_node("a", lambda s: {"n": 1})
    g.add_node("b", b)
    g.add_node("c", lambda s: {"n": s["n"] + 1})
    g.add_node("w", lambda arg: {"sent": arg})
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    if where == "send":
        g.add_conditional_edges("b", lambda s: [E.Send("w", value(s)), E.Send("c", s)], ["w", "c"])
    else:
        g.add_edge("b", "c")
    return g.compile(checkpointer=saver)


WHERE = ("node", "input", "send", "interrupt", "resume")
# how lgnb's message says where the value is
PLACE = {"node": "state key 'v'", "input": "the graph input", "send": "a Send",
         "interrupt": "an interrupt", "resume": "Command(resume="}


def failing_thread(E: Any, savers: Savers, where: str, make: Callable[[], Any],
                   messages: dict[str, str]) -> dict[str, Any]:
    """Run into the unstorable value, read what was saved, fix the value, carry on."""
    with savers.open(E) as saver:
        app = frame_app(E, where, make, saver)
        cfg = thread("bad")

        def fail() -> Any:
            try:
                first = app.invoke({"v": make()} if where == "input" else {"n": 0}, cfg)
                if where != "resume":
                    return show(first)
                return show(app.invoke(E.Command(resume=make()), cfg))
            except Exception as exc:
                messages[E.label] = str(exc)
                raise

        def fix() -> Any:
            if where == "input":
                return show(app.invoke({"v": "fixed"}, cfg))
            if where == "resume":
                return show(app.invoke(E.Command(resume="fixed"), cfg))
            app.update_state(cfg, {"bad": False})
            first = show(app.invoke(None, cfg))
            return first if where != "interrupt" else (first, show(app.invoke(E.Command(resume="ok"), cfg)))

        return {"error": capture(fail),
                "saved": capture(lambda: [snap(h) for h in app.get_state_history(cfg)]),
                "fixed": capture(fix),
                "end": capture(lambda: snap(app.get_state(cfg)))}


def check_message(message: str, *, place: str, type_name: str, fix: str, pickle: bool = True) -> None:
    assert place in message and type_name in message and fix in message, message
    if pickle:
        assert "JsonPlusSerializer(pickle_fallback=True)" in message, message


def type_name(value: Any) -> str:
    root = type(value).__module__.split(".")[0]
    return type(value).__name__ if root == "builtins" else f"{root}.{type(value).__name__}"


# a DataFrame everywhere it can travel; each unstorable type as a node's update
FAILING = [(k, w, "dataframe_in_a_dict" if w != "node" else n) for k in SAVED for w in WHERE
           for n in (UNSTORABLE if w == "node" else [None]) if (k, n) != POSTGRES_FLOAT]


@pytest.mark.parametrize(("kind", "where", "name"), FAILING)
def test_unstorable_values_fail_like_langgraph_named_with_their_fix_and_the_thread_recovers(
        differential: Any, tmp_path: Path, kind: str, where: str, name: str) -> None:
    savers, messages = _savers(kind, tmp_path), {}
    ref = run(differential, lambda E: failing_thread(E, savers, where, UNSTORABLE[name], messages),
              exc="extends")
    assert ref["error"][:2] == ("raises", "TypeError")  # LangGraph names the type, Send or Interrupt
    assert "raises" not in repr({k: ref[k] for k in ("saved", "fixed", "end")})
    assert ref["end"]["next"] == [] and ref["end"]["values"]["n"] == 2
    if not selftest_enabled():
        leaf = UNSTORABLE[name]()
        check_message(messages["lgnb"], place=PLACE[where], fix=FIX[name],
                      type_name=type_name(leaf["frame"] if isinstance(leaf, dict) else leaf))
        assert name != "dataframe_in_a_dict" or "['frame']" in messages["lgnb"], messages["lgnb"]


def test_postgres_numpy_float64_langgraph_runs_on_past_the_failed_write_lgnb_stops(tmp_path: Path) -> None:
    """Deliberate: LangGraph's PostgresSaver cannot store the node's write of an np.float64
    but stores the next checkpoint (a float, inline JSON); LangGraph, which never waits on
    writes, runs to the end and raises there, the value now a float. lgnb stops at the
    failed save, the step saved before it intact, and the thread continues once fixed."""
    savers = _savers("postgres", tmp_path)
    lg = failing_thread(_diff.reference_engine(), savers, "node", UNSTORABLE["numpy_float64"], {})
    assert lg["error"][:2] == ("raises", "TypeError") and lg["saved"][0]["values"]["v"] == 0.5
    if selftest_enabled():
        return
    messages: dict[str, str] = {}
    ours = failing_thread(candidate_engine(), savers, "node", UNSTORABLE["numpy_float64"], messages)
    assert lg["error"][2] in ours["error"][2] and [h["next"] for h in ours["saved"]][0] == ["b"]
    assert ours["end"]["values"] == {"n": 2, "bad": False, "v": "fixed"}
    check_message(messages["lgnb"], place="state key 'v'", type_name="numpy.float64", fix=".item()")


# --- lgnb's strict savers: refused when written, with the fix ---------------------------------


@pytest.mark.parametrize("kind", ("sqlite", "postgres"))
@pytest.mark.parametrize("name", list(REFUSED_BY_LGNB))
def test_lgnb_savers_refuse_what_langgraph_loads_back_changed_and_lose_nothing(
        ref_engine: Any, tmp_path: Path, kind: str, name: str) -> None:
    """Deliberate: LangGraph stores these and loads them back changed (an object array as
    None: its buffer held memory addresses; a Timestamp as a str) or by importing a class
    no schema names. lgnb's savers refuse them at the step that wrote them, saying how to
    store them; the thread goes on once the value is fixed."""
    make, fix, fixed = REFUSED_BY_LGNB[name]
    savers = _savers(kind, tmp_path)
    lg = failing_thread(ref_engine, savers, "node", make, {})
    assert lg["error"] == show({"n": 2, "v": make()})  # LangGraph stores it, loads it changed
    assert (lg["saved"][0]["values"]["v"] != show(make())) is (name in LANGGRAPH_CHANGES)
    if selftest_enabled():
        return
    messages: dict[str, str] = {}
    ours = failing_thread(candidate_engine(), savers, "node", make, messages)
    assert ours["error"][:2] in (("raises", "UnsafeCheckpointTypeError"), ("raises", "TypeError"))
    check_message(messages["lgnb"], place="state key 'v'", type_name="", fix=fix, pickle=False)
    assert [h["next"] for h in ours["saved"]] == [["b"], ["a"], ["__start__"]]
    assert ours["end"]["values"] == {"n": 2, "bad": False, "v": "fixed"}
    with savers.open(candidate_engine(), allow=(Unit, Point)) as saver:  # the fix named works
        app, cfg = frame_app(candidate_engine(), "node", lambda: fixed, saver), thread("fixed")
        app.invoke({"n": 0}, cfg)
        assert show(app.get_state(cfg).values["v"]) == show(fixed)


@pytest.mark.parametrize("kind", ("sqlite", "postgres"))
def test_lgnb_savers_read_a_class_no_schema_names_only_once_allowed(tmp_path: Path, kind: str) -> None:
    """A thread written with LangGraph's serializer holding an enum in an `Any` field: lgnb's
    default saver refuses to load it (it never imports what a row names) and says
    `allow=[Unit]`; with that, it loads."""
    if selftest_enabled():
        pytest.skip("lgnb's strict savers only")
    E, savers, cfg = candidate_engine(), _savers(kind, tmp_path), thread("shared")

    def app(saver: Any) -> Any:
        return frame_app(E, "node", lambda: {"c": Unit.KG}, saver)

    with savers.open(E, serde=JsonPlusSerializer()) as saver:
        app(saver).invoke({"n": 0}, cfg)
    with savers.open(E, again=True) as strict:
        err = capture(lambda: app(strict).get_state(cfg))
        assert err[:2] == ("raises", "UnsafeCheckpointTypeError") and "allow=[Unit]" in err[2], err
    with savers.open(E, again=True, allow=(Unit,)) as allowed:
        assert app(allowed).get_state(cfg).values["v"] == {"c": Unit.KG}


@pytest.mark.parametrize("kind", ("sqlite", "postgres"))
def test_the_saver_a_user_holds_reads_the_classes_its_graphs_schemas_name(
        differential: Any, tmp_path: Path, kind: str) -> None:
    """LangGraph's docs inspect threads on the saver itself: `saver.get_tuple(config)`,
    `saver.list(config)`. A named tuple, an enum and a dataclass the schema names round-trip
    there as through the graph (lgnb's strict saver refused the named tuple when saving, and
    refused all three when read from the saver rather than the graph)."""
    savers = _savers(kind, tmp_path)

    def scenario(E: Any) -> Any:
        def locate(s: Located) -> dict[str, Any]:
            return {"where": Coord(1.5, 2.5), "color": Color.BLUE,
                    "sample": Sample(WHEN, np.arange(3), frozenset({"a"}), Decimal("2.5"))}

        g = E.StateGraph(Located)
        g.add_node("locate", locate)
        g.add_edge(E.START, "locate")
        with savers.open(E) as saver:
            cfg = thread("held")
            app = g.compile(checkpointer=saver)
            out = capture(lambda: app.invoke({"where": None}, cfg))
            got = capture(lambda: _typed(saver.get_tuple(cfg).checkpoint["channel_values"]))
            listed = capture(lambda: [(t.metadata["step"], _typed(t.checkpoint["channel_values"]))
                                      for t in saver.list(cfg)])
            return _typed(out), got, listed

    ref = run(differential, scenario)
    assert ref[1]["where"][0] == "Coord" and [step for step, _ in ref[2]] == [1, 0, -1]


def _typed(values: Any) -> Any:
    """`show` of each value, with its class's name (a named tuple shows as a tuple)."""
    if not isinstance(values, dict):
        return values
    return {k: (type(v).__name__, show(v)) for k, v in values.items()}


# --- the history widget -----------------------------------------------------------------------


def test_history_view_shows_notebook_values_as_text_never_as_html(tmp_path: Path) -> None:
    from lgnb.widgets import history

    E = candidate_engine()

    def make() -> dict[str, Any]:
        return {"v": {"frame": _frame(), "grid": np.asfortranarray(np.eye(2)), "when": WHEN,
                      "tags": {"a"}, "price": Decimal("1.5"), "z": np.int64(3)},
                **ROUND_TRIP["pydantic_the_schema_names"](), **ROUND_TRIP["enums_the_schema_names"]()}

    serde = JsonPlusSerializer(pickle_fallback=True)
    with Savers("sqlite", tmp_path, None).open(E, serde=serde) as saver:
        app, cfg = notebook_app(E, make, saver), thread("view")
        app.invoke({"n": 0}, cfg)
        app.invoke(E.Command(resume={"frame": _frame()}), cfg)
        view = history(app, cfg)
        ids = [c["id"] for c in view.timeline["checkpoints"]]
        assert len(ids) == 5
        for cid in ids:
            view._msg_select({"id": cid})
            assert "error" not in view.details and "error" not in view.details["form"], view.details
            json.dumps(view.details)  # what the page receives is JSON
        v = view.details["values"]["v"]
        assert isinstance(v["frame"], str) and "<b>x</b>" in v["frame"]  # text, shown as text
        assert isinstance(view.details["values"]["back"]["frame"], str)
        view._msg_compare({"id": ids[0]})
        assert view.diff and "error" not in view.diff, view.diff
        json.dumps(view.diff)
        view.error = repr(_frame())  # whatever an error says is escaped in the saved page
        html = view._static_html()
        assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_history_view_reads_every_notebook_value_from_the_default_strict_saver(tmp_path: Path) -> None:
    from lgnb.widgets import history

    E = candidate_engine()
    values = {k: v for name in ROUND_TRIP for k, v in ROUND_TRIP[name]().items() if k != "v"}
    values["v"] = {name: ROUND_TRIP[name]()["v"] for name in ROUND_TRIP if "v" in ROUND_TRIP[name]()}
    with Savers("sqlite", tmp_path, None).open(E) as saver:
        app, cfg = notebook_app(E, lambda: values, saver), thread("all")
        app.invoke({"n": 0}, cfg)
        view = history(app, cfg)
        ids = [c["id"] for c in view.timeline["checkpoints"]]
        view._msg_select({"id": ids[-1]})
        view._msg_compare({"id": ids[0]})
    assert "error" not in view.details and "error" not in view.details["form"], view.details
    shown = view.details["values"]
    assert shown["v"]["float32_matrix"].startswith("array(") and shown["color"] == "<Color.RED: 'red'>"
    assert shown["report"]["scores"].startswith("array(") and json.dumps(view.details)
    assert view.diff["added"] and "error" not in view.diff, view.diff

"""lgnb.history on big threads (issue 11, items 6 and 7): the timeline is read without
decoding state values, only the clicked checkpoint's values are decoded (each stored
version once), checkpoints are read a page at a time, and long linear runs are drawn as
one node. Real SQLite files, real graphs on lgnb and on LangGraph."""

from __future__ import annotations

import importlib
import operator
import tracemalloc
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.serde import StrictSerializer
from lgnb.checkpoint.sqlite import SqliteSaver
from lgnb.draw import timeline
from lgnb.draw.history_runs import EXPAND_ALL, LANDMARKS, MIN_RUN
from lgnb.widgets import history
from lgnb.widgets._history_pages import PAGE

CFG = {"configurable": {"thread_id": "big"}}
MB = 1024 * 1024


class CountingSerializer(StrictSerializer):
    """The saver's own serializer, counting how many payloads over 1 MB it decodes."""

    def __init__(self) -> None:
        super().__init__()
        self.big_decodes = 0

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        if data[1] is not None and len(data[1]) > MB:
            self.big_decodes += 1
        return super().loads_typed(data)


class Big(TypedDict):
    big: str
    n: int


def ticking(eng: Any, saver: Any, *, steps: int, change_at: int | None = None) -> Any:
    """START → tick → tick … (`steps` times); at step `change_at` tick replaces `big`."""
    def tick(state: Big) -> dict[str, Any]:
        out: dict[str, Any] = {"n": state["n"] + 1}
        if change_at is not None and state["n"] + 1 == change_at:
            out["big"] = "y" * len(state["big"])
        return out

    b = eng.StateGraph(Big)
    b.add_node("tick", tick)
    b.add_edge(eng.START, "tick")
    b.add_conditional_edges("tick", lambda s: "tick" if s["n"] < steps else eng.END, ["tick", eng.END])
    return b.compile(checkpointer=saver)


def fill(eng: Any, path: Path, *, value_mb: float, steps: int, change_at: int | None = None) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        g = ticking(eng, saver, steps=steps, change_at=change_at)
        g.invoke({"big": "x" * int(value_mb * MB), "n": 0}, {**CFG, "recursion_limit": steps + 10})


def engine(name: str) -> Any:
    from widget_graphs import _engine

    return _engine(name)


# -- memory and decoding ----------------------------------------------------------------

def test_opening_the_history_of_a_5mb_value_over_200_steps_stays_small(tmp_path: Path) -> None:
    eng = engine("lgnb")
    path = tmp_path / "threads.sqlite"
    fill(eng, path, value_mb=5, steps=200)
    saver = SqliteSaver(path)
    g = ticking(eng, saver, steps=200)
    tracemalloc.start()
    try:
        view = history(g, CFG, limit=None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # before: every one of the 202 checkpoints decoded its own copy of the value (~1 GB)
    assert len(view.model.checkpoints) == 202
    assert peak < 10 * 5 * MB, f"opening the history allocated {peak / MB:.0f} MB at peak"
    saver.close()


def test_only_the_clicked_checkpoint_is_decoded_and_each_stored_version_once(tmp_path: Path) -> None:
    eng = engine("lgnb")
    path = tmp_path / "threads.sqlite"
    fill(eng, path, value_mb=2, steps=30, change_at=20)  # "x"*2MB until step 20, then "y"*2MB
    serde = CountingSerializer()
    saver = SqliteSaver(path, serde=serde)
    g = ticking(eng, saver, steps=30, change_at=20)
    view = history(g, CFG)
    assert len(view.model.checkpoints) == 32 and serde.big_decodes == 0  # the timeline decodes none

    at = {c.step: c.id for c in view.model.checkpoints}
    view._msg_select({"id": at[5]})
    assert serde.big_decodes == 1
    shown = view.details["values"]["big"]
    assert shown.startswith("xxxx") and shown.endswith(f"(+{2 * MB - 1500} chars)")  # folded for the page
    assert view.details["values"]["n"] == 5 and view.details["next"] == ["tick"]
    form = {f["key"]: f for f in view.details["form"]["fields"]}
    assert form["big"]["too_big"] == 2 * MB and form["big"]["text"] == "" and form["n"]["value"] == 5

    view._msg_select({"id": at[12]})  # the same stored version: not decoded again
    assert serde.big_decodes == 1 and view.details["values"]["n"] == 12
    view._msg_select({"id": at[25]})  # the second version: decoded once
    assert serde.big_decodes == 2 and view.details["values"]["big"].startswith("yyyy")
    view._msg_compare({"id": at[5]})  # the diff reads both through the cache
    assert serde.big_decodes == 2
    changed = {c["key"]: c for c in view.diff["changed"]}
    assert set(changed) == {"big", "n"} and changed["big"]["before"].startswith("xxxx")
    assert len(changed["big"]["after"]) < 2000  # cut short for the page, compared in full
    assert view.values_at(at[25])["big"] == "y" * (2 * MB)  # from code: in full
    assert serde.big_decodes == 2

    # a page edit of a field too big for the page is refused, with how to do it from code
    view._msg_fork({"kind": "fork", "id": at[25], "values": {"big": "z"}})
    assert "too big to edit in the page" in view.fork_errors["big"] and "view.fork(" in view.fork_errors["big"]
    saver.close()


# -- the light timeline is the timeline -------------------------------------------------

class Doc(TypedDict):
    topic: str
    notes: Annotated[list, operator.add]


def doc_graph(eng: Any, saver: Any) -> Any:
    types = importlib.import_module(f"{eng.name}.types")

    def plan(state: Doc) -> dict[str, Any]:
        return {"notes": ["plan"]}

    def fan(state: Doc) -> list[Any]:  # a Send payload over the preview size
        return [types.Send("write", {"topic": "s" * 100_000, "notes": []}) for _ in range(2)]

    def write(state: Doc) -> dict[str, Any]:
        return {"notes": [len(state["topic"])]}

    def ask(state: Doc) -> dict[str, Any]:
        return {"notes": [types.interrupt({"question": "ok?"})]}

    b = eng.StateGraph(Doc)
    b.add_node("plan", plan)
    b.add_node("write", write)
    b.add_node("ask", ask)
    b.add_edge(eng.START, "plan")
    b.add_conditional_edges("plan", fan, ["write"])
    b.add_edge("write", "ask")
    return b.compile(checkpointer=saver)


def shape(t: Any) -> list[tuple[Any, ...]]:
    return [(c.id, c.parent, c.step, c.source, c.next, c.interrupts, c.fork) for c in t.checkpoints]


@contextmanager
def a_saver(kind: str, eng: Any, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    if kind == "sqlite":  # lgnb's: values handed over undecoded (list_stored)
        with SqliteSaver.from_conn_string(tmp_path / "t.sqlite") as saver:
            yield saver
    elif kind == "memory":  # the others: list() decodes, big values are dropped after
        yield eng.InMemorySaver()
    elif kind == "lgnb-postgres":  # lgnb's: list_stored over LangGraph's tables
        from lgnb.checkpoint.postgres import PostgresSaver as LgnbPostgresSaver

        with LgnbPostgresSaver.from_conn_string(request.getfixturevalue("postgres_url")) as saver:
            saver.setup()
            yield saver
    else:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(request.getfixturevalue("postgres_url")) as saver:
            saver.setup()
            yield saver


@pytest.mark.parametrize("saver_kind", ["sqlite", "memory", pytest.param("postgres", marks=pytest.mark.postgres),
                                        pytest.param("lgnb-postgres", marks=pytest.mark.postgres)])
def test_the_timeline_read_without_values_is_the_one_get_state_history_gives(
        eng: Any, tmp_path: Path, saver_kind: str, request: pytest.FixtureRequest) -> None:
    cfg = {"configurable": {"thread_id": f"light-{uuid.uuid4()}"}}
    with a_saver(saver_kind, eng, tmp_path, request) as saver:
        g = doc_graph(eng, saver)
        types = importlib.import_module(f"{eng.name}.types")
        g.invoke({"topic": "t" * 100_000, "notes": []}, cfg)  # big input, a big Send, then an interrupt
        plan = next(s for s in g.get_state_history(cfg) if s.next == ("plan",))
        g.update_state(plan.config, {"notes": ["edited"]})  # a fork
        g.invoke(None, cfg)  # the fork runs on, to the interrupt again
        # resumed with a big update: the paused checkpoint's snapshot applies it (the planner
        # needs that write, left out of the light read: that checkpoint is read in full)
        g.invoke(types.Command(resume="yes", update={"notes": ["n" * 100_000]}), cfg)
        view = history(g, cfg)
        expected = timeline(g.get_state_history(cfg))
        view.close()
    assert shape(view.model) == shape(expected)
    assert any(c.interrupts for c in view.model.checkpoints) and view.model.branch_points
    assert any(c.next == ("write", "write") for c in view.model.checkpoints)


# -- on PostgreSQL ----------------------------------------------------------------------

@contextmanager
def pg_thread(request: pytest.FixtureRequest, big: Any, *, steps: int, serde: Any = None) -> Iterator[Any]:
    """A thread on lgnb's PostgresSaver: `big` in the input, then `steps` ticks."""
    from lgnb.checkpoint.postgres import PostgresSaver

    cfg = {"configurable": {"thread_id": f"pg-big-{uuid.uuid4()}"}}
    with PostgresSaver.from_conn_string(request.getfixturevalue("postgres_url"), serde=serde) as saver:
        saver.setup()
        g = ticking(engine("lgnb"), saver, steps=steps)
        g.invoke({"big": big, "n": 0}, {**cfg, "recursion_limit": steps + 10})
        try:
            yield g, cfg
        finally:
            saver.delete_thread(cfg["configurable"]["thread_id"])


def test_opening_the_history_of_a_big_value_on_postgres_stays_small(request: pytest.FixtureRequest) -> None:
    """A string is stored inline in each checkpoint's JSONB (LangGraph's layout): 62 copies
    of 2 MB that LangGraph's list() would fetch and decode (~250 MB); the timeline reads
    their sizes only."""
    with pg_thread(request, "x" * (2 * MB), steps=60) as (g, cfg):
        tracemalloc.start()
        try:
            view = history(g, cfg, limit=None)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(view.model.checkpoints) == 62
        assert peak < 10 * 2 * MB, f"opening the history allocated {peak / MB:.0f} MB at peak"
        at = {c.step: c.id for c in view.model.checkpoints}
        view._msg_select({"id": at[30]})  # the clicked one is read in full
        assert view.details["values"]["n"] == 30 and view.details["values"]["big"].startswith("xxxx")


def test_on_postgres_only_the_clicked_checkpoint_is_decoded_and_each_blob_version_once(
        request: pytest.FixtureRequest) -> None:
    """A list is stored once in checkpoint_blobs per version: decoded when clicked, once."""
    serde = CountingSerializer()
    with pg_thread(request, ["x" * (2 * MB)], steps=20, serde=serde) as (g, cfg):
        serde.big_decodes = 0
        view = history(g, cfg)
        assert len(view.model.checkpoints) == 22 and serde.big_decodes == 0
        at = {c.step: c.id for c in view.model.checkpoints}
        view._msg_select({"id": at[5]})
        assert serde.big_decodes == 1 and view.details["values"]["n"] == 5
        view._msg_select({"id": at[12]})
        assert serde.big_decodes == 1 and view.details["values"]["n"] == 12


def test_postgres_list_stored_hands_over_what_list_decodes(request: pytest.FixtureRequest) -> None:
    """Every tuple of list_stored, its values decoded, equals list()'s: the same configs,
    metadata, parents, versions, values and pending writes, across pages."""
    from lgnb.checkpoint.postgres import _stored

    with pg_thread(request, {"k": ["v"] * 3}, steps=_stored.PAGE + 5) as (g, cfg):
        saver = g.checkpointer
        listed = list(saver.list(cfg))
        stored = list(saver.list_stored(cfg, load=lambda v: v.decode(saver.serde), inline_max=16))
        assert len(listed) == len(stored) == _stored.PAGE + 7
        for a, b in zip(listed, stored):
            assert (a.config, a.metadata, a.parent_config) == (b.config, b.metadata, b.parent_config)
            assert a.checkpoint["channel_versions"] == b.checkpoint["channel_versions"]
            assert a.checkpoint["channel_values"] == b.checkpoint["channel_values"]
            assert a.pending_writes == b.pending_writes
        window = list(saver.list_stored(cfg, load=lambda v: v.decode(saver.serde), before=listed[3].config, limit=4))
        assert [t.config for t in window] == [t.config for t in listed[4:8]]


# -- pages and collapsed runs ------------------------------------------------------------

class N(TypedDict):
    n: int


def counter(eng: Any, saver: Any, steps: int) -> Any:
    b = eng.StateGraph(N)
    b.add_node("tick", lambda s: {"n": s["n"] + 1})
    b.add_edge(eng.START, "tick")
    b.add_conditional_edges("tick", lambda s: "tick" if s["n"] < steps else eng.END, ["tick", eng.END])
    return b.compile(checkpointer=saver)


@pytest.fixture(scope="module")
def long_thread(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,200 steps of the counter on lgnb, in a SQLite file (1,202 checkpoints)."""
    path = tmp_path_factory.mktemp("long") / "t.sqlite"
    eng = engine("lgnb")
    with SqliteSaver.from_conn_string(path) as saver:
        counter(eng, saver, 1200).invoke({"n": 0}, {**CFG, "recursion_limit": 1300})
    return path


def test_limit_none_reads_a_page_and_load_older_reads_the_next(long_thread: Path) -> None:
    saver = SqliteSaver(long_thread)
    g = counter(engine("lgnb"), saver, 1200)
    view = history(g, CFG, limit=None)
    steps = sorted(c.step for c in view.model.checkpoints)
    assert len(steps) == PAGE and steps[-1] == 1200 and view.timeline["has_older"]
    assert view.load_older() == PAGE and len(view.model.checkpoints) == 2 * PAGE
    assert view.model.by_id(min(c.id for c in view.model.checkpoints)).step == 1200 - 2 * PAGE + 1
    view._msg_load_older({"kind": "load_older"})
    assert len(view.model.checkpoints) == 1202 and not view.timeline["has_older"]
    assert view.model.checkpoints[0].step == -1 and view.model.checkpoints[0].parent is None
    assert view.load_older() == 0  # nothing older
    # the pages join into one chain: every checkpoint but the first has its parent
    assert sum(c.parent is None for c in view.model.checkpoints) == 1
    saver.close()


def test_limit_caps_what_is_read_and_says_how_to_read_more(long_thread: Path) -> None:
    saver = SqliteSaver(long_thread)
    view = history(counter(engine("lgnb"), saver, 1200), CFG, limit=700)
    assert len(view.model.checkpoints) == PAGE and view.timeline["has_older"]
    assert view.load_older() == 200 and len(view.model.checkpoints) == 700
    assert not view.timeline["has_older"] and view.timeline["at_cap"]
    assert view.load_older() == 0 and "limit=None" in view.notice
    saver.close()


def test_a_long_linear_run_is_drawn_as_one_segment_that_expands(long_thread: Path) -> None:
    saver = SqliteSaver(long_thread)
    view = history(counter(engine("lgnb"), saver, 1200), CFG, limit=None)
    drawn = view.timeline
    [seg] = drawn["segments"]
    # the oldest loaded, its next, [the run], the one before the latest, the latest
    assert [c["step"] for c in drawn["checkpoints"]] == [701, 702, 1199, 1200]
    assert (seg["count"], seg["first_step"], seg["last_step"]) == (PAGE - 4, 703, 1198)
    assert len(drawn["links"]) == 4 and view.dot.count("->") == 4
    assert "steps 703–1,198" in view.dot and "496 checkpoints" in view.dot

    view._msg_expand({"kind": "expand", "id": seg["id"]})  # a long run: a few landmarks
    assert view.error == "" and view.timeline["expanded"]
    segs = view.timeline["segments"]
    assert len(segs) == LANDMARKS + 1 and max(s["count"] for s in segs) <= 496 // LANDMARKS
    # still a small drawing: the 4 drawn before, the landmarks, each gap as head, run, tail
    assert len(view.timeline["checkpoints"]) + len(segs) <= 4 + LANDMARKS + 3 * (LANDMARKS + 1)
    total = len(view.timeline["checkpoints"]) + sum(s["count"] for s in view.timeline["segments"])
    assert total == PAGE  # every loaded checkpoint is drawn or in a segment, once
    short = min(view.timeline["segments"], key=lambda s: s["count"])
    assert short["count"] <= EXPAND_ALL
    view.expand(short["id"])  # a short run: all of it
    ids = {c["id"] for c in view.timeline["checkpoints"]}
    assert short["first"] in ids and short["last"] in ids
    assert all(s["id"] != short["id"] for s in view.timeline["segments"])
    assert len(view.timeline["checkpoints"]) + sum(s["count"] for s in view.timeline["segments"]) == PAGE

    view.collapse_runs()
    assert [c["step"] for c in view.timeline["checkpoints"]] == [701, 702, 1199, 1200]
    # selecting a checkpoint inside a run draws it on its own, with its details
    inside = next(c for c in view.model.checkpoints if c.step == 950)
    view.selected = inside.id
    assert inside.id in [c["id"] for c in view.timeline["checkpoints"]]
    assert view.details["id"] == inside.id and view.details["values"] == {"n": 950}
    assert len(view.timeline["segments"]) == 2
    with pytest.raises(KeyError, match="no collapsed run"):
        view.expand("run:nope")
    saver.close()


def test_runs_shorter_than_the_minimum_are_drawn_in_full(eng: Any) -> None:
    g = counter(eng, eng.InMemorySaver(), MIN_RUN - 1)
    g.invoke({"n": 0}, CFG)
    view = history(g, CFG)
    assert view.timeline["segments"] == [] and len(view.timeline["checkpoints"]) == MIN_RUN + 1


def test_a_branchy_timeline_over_the_cap_folds_its_oldest_nodes_into_one(eng: Any) -> None:
    from lgnb.draw import timeline_to_dot
    from lgnb.draw.history_runs import collapse

    g = counter(eng, eng.InMemorySaver(), 3)
    g.invoke({"n": 0}, CFG)
    first = next(s for s in g.get_state_history(CFG) if s.metadata["step"] == 0)
    for i in range(15):  # fifteen forks of one checkpoint: nothing linear to collapse
        g.update_state(first.config, {"n": 100 + i})
    t = timeline(g.get_state_history(CFG), details=False)
    assert len(t.checkpoints) == 20 and collapse(t).segments == []
    oldest_fork = min((c for c in t.checkpoints if c.source == "update"), key=lambda c: c.id)
    drawn = collapse(t, keep={oldest_fork.id}, max_drawn=10)
    [hidden] = drawn.segments
    assert hidden.kind == "hidden" and len(drawn.checkpoints) + 1 == 10
    assert len(drawn.checkpoints) + len(hidden.ids) == 20  # each checkpoint drawn or hidden, once
    kept = {c.id for c in drawn.checkpoints}
    assert t.latest in kept and oldest_fork.id in kept  # the latest and the ones asked for stay drawn
    assert hidden.ids[0] == t.checkpoints[0].id  # the oldest go first
    dot = timeline_to_dot(drawn)
    assert f"{len(hidden.ids)} checkpoints" in dot and "older: not drawn" in dot
    # every drawn checkpoint whose parent is hidden hangs off the hidden node
    assert all(link.source in kept or link.source == hidden.id for link in drawn.links)


async def test_async_postgres_list_stored_hands_over_what_alist_decodes(request: pytest.FixtureRequest) -> None:
    """The async saver's list_stored (called from a thread other than its loop, as its
    sync methods are) reads the same tuples as its alist()."""
    import asyncio

    from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver

    cfg = {"configurable": {"thread_id": f"apg-{uuid.uuid4()}"}}
    async with AsyncPostgresSaver.from_conn_string(request.getfixturevalue("postgres_url")) as saver:
        await saver.setup()
        g = ticking(engine("lgnb"), saver, steps=3)
        await g.ainvoke({"big": "x" * 100, "n": 0}, cfg)
        listed = [t async for t in saver.alist(cfg)]
        stored = await asyncio.to_thread(
            lambda: list(saver.list_stored(cfg, load=lambda v: v.decode(saver.serde), inline_max=16)))
        assert [t.config for t in stored] == [t.config for t in listed] and len(stored) == 5
        assert [t.checkpoint["channel_values"] for t in stored] == [t.checkpoint["channel_values"] for t in listed]
        with pytest.raises(asyncio.InvalidStateError, match="different thread"):
            list(saver.list_stored(cfg, load=lambda v: v))
        await saver.adelete_thread(cfg["configurable"]["thread_id"])

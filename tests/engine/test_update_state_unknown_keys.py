"""`update_state` with a key the state does not have warns (`UnknownStateKeyWarning`).

LangGraph drops such a key silently, and so do lgnb's node writers: the update still
applies its known keys and the checkpoint is written as on LangGraph. A misspelt key in a
notebook cell (`{"mesages": [...]}`) would otherwise lose the edit without a word, so lgnb
warns, naming the state's keys and the closest one, at the user's own line.
"""

from __future__ import annotations

import asyncio
import operator
import warnings
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.graph import START, StateGraph
from lgnb.warnings import UnknownStateKeyWarning


class State(TypedDict):
    messages: Annotated[list, operator.add]
    count: int


class Private(TypedDict):
    scratch: str


def _app():
    def first(s: State) -> dict:
        return {"count": s["count"] + 1, "scratch": "noted"}

    def second(s: Private) -> dict:
        return {"messages": [s["scratch"]]}

    g = StateGraph(State)
    g.add_node("first", first)
    g.add_node("second", second, input_schema=Private)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": ["hi"], "count": 0}, cfg)
    return app, cfg


def test_a_misspelt_key_warns_naming_the_closest_key_and_the_rest_is_written():
    app, cfg = _app()
    with pytest.warns(UnknownStateKeyWarning, match=r"'mesages' \(did you mean 'messages'\?\) is not a key") as got:
        app.update_state(cfg, {"mesages": ["lost"], "count": 10}, as_node="first")
    assert got[0].filename == __file__  # points at the user's call
    values = app.get_state(cfg).values
    assert values["count"] == 10 and "lost" not in values["messages"]
    assert "mesages" not in values


def test_known_keys_and_private_channels_do_not_warn():
    app, cfg = _app()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownStateKeyWarning)
        app.update_state(cfg, {"messages": ["more"], "scratch": "edited"}, as_node="first")
    assert app.get_state(cfg).values["messages"][-1] == "more"


def test_several_unknown_keys_are_named_in_one_warning():
    app, cfg = _app()
    with pytest.warns(UnknownStateKeyWarning, match=r"'cuont' \(did you mean 'count'\?\), 'zzz' are not keys") as got:
        app.update_state(cfg, {"cuont": 1, "zzz": 2})
    assert len(got) == 1
    assert "state keys: count, messages, scratch" in str(got[0].message)


def test_async_and_bulk_updates_warn_too():
    app, cfg = _app()
    with pytest.warns(UnknownStateKeyWarning, match="'counts'"):
        asyncio.run(app.aupdate_state(cfg, {"counts": 3}, as_node="first"))
    from lgnb.types import StateUpdate

    with pytest.warns(UnknownStateKeyWarning, match="'mesage'"):
        app.bulk_update_state(cfg, [[StateUpdate({"mesage": ["x"]}, "first")]])


def test_a_non_dict_update_is_not_checked():
    """A pydantic or dataclass state's update carries only its fields: nothing to check."""
    app, cfg = _app()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownStateKeyWarning)
        app.update_state(cfg, None, as_node="first")

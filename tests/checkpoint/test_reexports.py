"""lgnb.checkpoint import paths mirror LangGraph's and re-export the ecosystem savers."""

from __future__ import annotations

import importlib
import sys
import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver as LangGraphInMemorySaver


def test_memory_module_exports_langgraphs_in_memory_saver_extended() -> None:
    """A subclass (isinstance against LangGraph's class holds) with LangGraph's storage;
    it only serializes grown lists by joining bytes (tests/checkpoint/test_joined_lists.py)."""
    from langgraph.checkpoint.memory import PersistentDict as LangGraphPersistentDict

    from lgnb.checkpoint.memory import InMemorySaver, MemorySaver, PersistentDict

    assert issubclass(InMemorySaver, LangGraphInMemorySaver) and MemorySaver is InMemorySaver
    assert PersistentDict is LangGraphPersistentDict


def test_postgres_savers_are_langgraphs_loading_with_lgnbs_strict_serializer() -> None:
    """Same classes to `isinstance`, same SQL; only the default serializer differs, and
    LangGraph's own savers are left as they are."""
    from langgraph.checkpoint.postgres import PostgresSaver as Theirs
    from langgraph.checkpoint.postgres import ShallowPostgresSaver as TheirsShallow
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver as TheirsAsync
    from langgraph.checkpoint.postgres.aio import AsyncShallowPostgresSaver as TheirsAsyncShallow
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from lgnb.checkpoint.postgres import PostgresSaver, ShallowPostgresSaver
    from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver, AsyncShallowPostgresSaver
    from lgnb.checkpoint.serde import StrictSerializer

    pairs = [
        (PostgresSaver, Theirs),
        (ShallowPostgresSaver, TheirsShallow),
        (AsyncPostgresSaver, TheirsAsync),
        (AsyncShallowPostgresSaver, TheirsAsyncShallow),
    ]
    for ours, theirs in pairs:
        assert issubclass(ours, theirs) and ours is not theirs
    assert isinstance(PostgresSaver(conn=None).serde, StrictSerializer)  # type: ignore[arg-type]
    assert type(Theirs(conn=None).serde) is JsonPlusSerializer  # type: ignore[arg-type]


@pytest.mark.parametrize("module", ["lgnb.checkpoint.postgres", "lgnb.checkpoint.postgres.aio"])
def test_missing_postgres_extra_says_how_to_install_it(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(sys.modules):
        if name.startswith(("lgnb.checkpoint.postgres", "langgraph.checkpoint.postgres")):
            monkeypatch.delitem(sys.modules, name)
    # None in sys.modules makes `import` fail as if the package were not installed
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.postgres", None)
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.postgres.aio", None)
    with pytest.raises(ImportError, match=r"pip install 'lgnb\[postgres\]'"):
        importlib.import_module(module)


@pytest.mark.postgres
def test_postgres_saver_re_export_stores_a_checkpoint(postgres_url: str) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    from lgnb.checkpoint.postgres import PostgresSaver

    thread = f"lgnb-{uuid.uuid4()}"
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        stored = saver.put(config, empty_checkpoint(), {"step": 1}, {})
        assert saver.get_tuple(stored).metadata["step"] == 1
        saver.delete_thread(thread)

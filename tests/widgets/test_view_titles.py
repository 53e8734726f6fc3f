"""Every view is titled by its graph, not "LangGraph" (LangGraph's name for an unnamed graph).

The same rule on LangGraph's graphs and lgnb's (the views read only the public protocol).
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace
from typing import Any

import pytest
from typing_extensions import TypedDict

from lgnb.widgets import history, lens, run, show
from lgnb.widgets._title import graph_title


class EssayState(TypedDict):
    draft: str


class State(TypedDict):
    draft: str


def write(state: Any) -> dict[str, Any]:
    return {"draft": state["draft"] + "!"}


def essay(eng: SimpleNamespace, schema: type = EssayState, *, name: str | None = None) -> Any:
    b = eng.StateGraph(schema)
    b.add_node("write", write)
    b.add_edge(eng.START, "write")
    b.add_edge("write", eng.END)
    return b.compile(checkpointer=eng.InMemorySaver(), name=name)


def all_views(graph: Any, **title: Any) -> dict[str, str]:
    """The header title of each kind of view of `graph` (one run on thread 't1')."""
    cfg = {"configurable": {"thread_id": "t1"}}
    r = run(graph, {"draft": "x"}, cfg, display=False, **title)
    r.wait(timeout=30)
    return {
        "show": show(graph, **title).title,
        "run": r.view.title,
        "lens": lens(graph, {"draft": "x"}, {"configurable": {"thread_id": "t2"}}, display=False, **title).view.title,
        "history": history(graph, cfg, **title).title,
    }


def test_a_named_graph_titles_every_view_with_its_name(eng: SimpleNamespace) -> None:
    titles = all_views(essay(eng, name="support bot"))
    assert titles == {"show": "support bot", "run": "support bot", "lens": "support bot",
                      "history": "support bot · thread t1"}


def test_an_unnamed_graph_is_titled_by_its_state_schema_never_langgraph(eng: SimpleNamespace) -> None:
    graph = essay(eng)
    assert graph.name == "LangGraph"  # what both engines call a graph compiled without name=
    titles = all_views(graph)
    assert titles == {"show": "EssayState", "run": "EssayState", "lens": "EssayState",
                      "history": "EssayState · thread t1"}


def test_an_unnamed_graph_with_a_generic_schema_is_titled_graph(eng: SimpleNamespace) -> None:
    assert graph_title(essay(eng, State)) == "graph"
    assert show(essay(eng, State)).title == "graph"


def test_a_create_agent_graph_is_not_titled_by_its_generated_schema(eng: SimpleNamespace) -> None:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    agent = create_agent(GenericFakeChatModel(messages=iter([AIMessage("hi")])), tools=[])
    assert agent.builder.state_schema.__name__ == "StateSchema"
    assert graph_title(agent) == "graph"


def test_an_entrypoint_is_titled_by_its_function(eng: SimpleNamespace) -> None:
    entrypoint = importlib.import_module(f"{eng.name}.func").entrypoint

    @entrypoint()
    def summarize(text: str) -> str:
        return text[:10]

    assert summarize.name == "LangGraph"
    # (graph_title, not a view: lgnb's get_graph of a builder-less Pregel is not drawable yet)
    assert graph_title(summarize) == "summarize"


def test_title_keyword_overrides_the_graph_name_in_every_view(eng: SimpleNamespace) -> None:
    titles = all_views(essay(eng, name="support bot"), title="my <b>title</b>")
    assert set(titles.values()) == {"my <b>title</b>"}  # kept as text; the page escapes it


@pytest.mark.parametrize("entry", ["show", "run", "lens", "history"])
def test_a_title_that_is_not_a_string_is_refused_naming_the_entry_point(eng: SimpleNamespace, entry: str) -> None:
    graph = essay(eng)
    cfg = {"configurable": {"thread_id": "t9"}}
    calls = {"show": lambda: show(graph, title=42), "run": lambda: run(graph, {"draft": ""}, cfg, display=False, title=42),
             "lens": lambda: lens(graph, {"draft": ""}, cfg, display=False, title=42),
             "history": lambda: history(graph, cfg, title=42)}
    with pytest.raises(TypeError, match=rf"lgnb\.{entry}: title must be a string .*got int"):
        calls[entry]()

"""Stream chunks → patches → content, with no kernel and no browser."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from widget_fakes import FakeStreamingChat

from lgnb.widgets._store import ContentStore, coalesce
from lgnb.widgets._stream import StreamReducer, normalize

MODES = ["values", "updates", "messages", "custom", "tasks"]
REPLIES = [{"content": "let me add", "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}, "id": "call-1"}]},
           "2 + 3 = 5"]


def reduce(graph: Any, *, version: str = "v1") -> tuple[StreamReducer, ContentStore, list[dict[str, Any]]]:
    reducer, store, patches = StreamReducer(), ContentStore(), []
    reducer.begin_segment()
    for chunk in graph.stream({"messages": [("user", "hi")]}, stream_mode=MODES, subgraphs=True, version=version):
        for p in reducer.feed(chunk):
            store.apply(p)
            patches.append(p)
    reducer.end_segment(finished=True)
    return reducer, store, patches


def test_messages_tools_progress_log(eng: Any) -> None:
    from widget_graphs import agent_graph

    _, store, patches = reduce(agent_graph(eng, FakeStreamingChat(replies=REPLIES)))
    snap = store.snapshot()
    msgs = snap["messages"]
    assert [m["type"] for m in msgs] == ["human", "ai", "tool", "ai"]  # one bubble per id, no duplicates
    first = msgs[1]
    assert first["node"] == "agent" and first["content"] == "let me add"
    assert first["tool_calls"][0]["name"] == "add" and '"a": 2' in first["tool_calls"][0]["args"]
    assert msgs[3]["content"] == "2 + 3 = 5" and msgs[3]["final"]
    # tokens arrived as deltas, tool arguments in pieces
    assert sum(p["kind"] == "msg.delta" for p in patches) >= 4
    assert sum(p["kind"] == "tool.delta" for p in patches) >= 3
    assert snap["progress"] == [{"id": "|tools|adding", "node": "tools", "ns": "", "stage": "adding",
                                 "label": "tools · adding", "value": 1.0}]
    assert snap["log"][0]["payload"] == {"note": "added <b>numbers</b>"} and snap["log"][0]["node"] == "tools"
    assert [(u["step"], u["node"]) for u in snap["updates"]] == [(1, "agent"), (2, "tools"), (3, "agent")]


def test_v1_and_v2_give_the_same_content(lg: Any) -> None:
    from widget_graphs import agent_graph

    def content(version: str) -> Any:
        _, store, _ = reduce(agent_graph(lg, FakeStreamingChat(replies=REPLIES)), version=version)
        snap = store.snapshot()
        for m in snap["messages"]:
            m.pop("id")
        return snap["messages"], snap["progress"], [u["delta"]["messages"][0]["content"] for u in snap["updates"]]

    assert content("v1") == content("v2")


def test_graph_state_steps_visited_taken(eng: Any) -> None:
    from widget_graphs import agent_graph

    reducer, _, _ = reduce(agent_graph(eng, FakeStreamingChat(replies=REPLIES)))
    assert reducer.step == 3
    assert reducer.visited == ["__start__", "agent", "tools", "__end__"]
    assert reducer.taken == [["__start__", "agent"], ["agent", "tools"], ["tools", "agent"], ["agent", "__end__"]]
    assert reducer.active_keys == []


def test_normalize_shapes() -> None:
    assert normalize((("a:1",), "updates", {})) == (("a:1",), "updates", {})
    assert normalize(("values", 1)) == ((), "values", 1)
    assert normalize({"type": "custom", "ns": ["x:2"], "data": 3}) == (("x:2",), "custom", 3)


def test_coalesce_keeps_order_and_text() -> None:
    ps = [{"kind": "msg.new", "id": "m", "seq": 1, "content": "", "tool_calls": []}]
    ps += [{"kind": "msg.delta", "id": "m", "seq": i + 2, "text": str(i)} for i in range(10)]
    ps += [{"kind": "progress", "id": "p", "seq": 20, "value": 0.1}, {"kind": "progress", "id": "p", "seq": 21, "value": 0.2}]
    ps += [{"kind": "msg.delta", "id": "m", "seq": 22, "text": "!"}]
    out = coalesce(ps)
    assert [p["kind"] for p in out] == ["msg.new", "msg.delta", "progress", "msg.delta"]
    assert out[1]["text"] == "0123456789" and out[1]["seq"] == 11 and out[2]["value"] == 0.2
    a, b = ContentStore(), ContentStore()
    for p in ps:
        a.apply(p)
    for p in out:
        b.apply(p)
    assert a.snapshot() == b.snapshot()


class S(TypedDict):
    x: Annotated[list, operator.add]


def test_subgraph_keys(eng: Any) -> None:
    def node(state: Any) -> Any:
        eng.get_stream_writer()({"progress": 0.5, "stage": "inner"})
        return {"x": [1]}

    sub = eng.StateGraph(S)
    sub.add_node("inner", node)
    sub.add_edge(eng.START, "inner")
    g = eng.StateGraph(S)
    g.add_node("outer", sub.compile())
    g.add_edge(eng.START, "outer")
    reducer, store = StreamReducer(), ContentStore()
    reducer.begin_segment()
    for chunk in g.compile().stream({"x": []}, stream_mode=MODES, subgraphs=True):
        for p in reducer.feed(chunk):
            store.apply(p)
    assert "outer:inner" in reducer.visited and "outer" in reducer.visited
    assert store.snapshot()["progress"][0]["node"] == "outer:inner"
    assert any(u["node"] == "outer:inner" for u in store.snapshot()["updates"])


def test_updates_are_folded_like_the_state_panel(eng: Any) -> None:
    """A node's update reaches the page folded by `_panel.fold`: a 1 MB string ships its
    head and length, a long list its length and last items — never the whole value."""
    import json

    from lgnb.widgets._panel import FOLD_CHARS, LAST_ITEMS

    class S(TypedDict):
        text: str
        items: list[int]

    g = eng.StateGraph(S)
    g.add_node("big", lambda state: {"text": "x" * 1_000_000, "items": list(range(500))})
    g.add_edge(eng.START, "big")
    reducer, store = StreamReducer(), ContentStore()
    reducer.begin_segment()
    for chunk in g.compile().stream({"text": "", "items": []}, stream_mode=MODES, subgraphs=True):
        for p in reducer.feed(chunk):
            store.apply(p)
    [update] = [u for u in store.snapshot()["updates"] if u["node"] == "big"]
    delta = update["delta"]
    assert delta["text"] == {"__fold__": "str", "len": 1_000_000, "head": "x" * FOLD_CHARS}
    assert delta["items"] == {"__fold__": "list", "len": 500, "last": [497, 498, 499][-LAST_ITEMS:]}
    assert len(json.dumps(update)) < 2_000


def test_a_waiting_edge_is_taken_from_every_source_though_they_wrote_in_different_steps(eng: Any) -> None:
    """The pregel lesson's uneven branches: `d` waits on `b` (step 2) and `e` (step 3);
    both edges into `d` are on the run's path, not only the one from the step before."""
    import operator
    from typing import Annotated

    from typing_extensions import TypedDict

    from lgnb.draw import layout

    class S(TypedDict):
        log: Annotated[list, operator.add]

    g = eng.StateGraph(S)
    for n in "abced":
        g.add_node(n, lambda s, n=n: {"log": [n]})
    g.add_edge(eng.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge("c", "e")
    g.add_edge(["b", "e"], "d")
    graph = g.compile()
    reducer = StreamReducer(edges={(e.source, e.target) for e in layout(graph, expanded=True).edges})
    reducer.begin_segment()
    for chunk in graph.stream({"log": []}, stream_mode=["tasks", "updates"], subgraphs=True):
        reducer.feed(chunk)
    reducer.end_segment(finished=True)
    assert ["b", "d"] in reducer.taken and ["e", "d"] in reducer.taken
    assert ["c", "d"] not in reducer.taken

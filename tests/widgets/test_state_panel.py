"""The run view's state panel: content per step for a graph without messages, folding, step
numbers equal to the checkpoints' across an interrupt and its resume, a Send fan-out of 3
keeping three updates, LangGraph's internal writes not shown as updates."""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

import pytest

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.graph import START, StateGraph
from lgnb.types import Command, Send, interrupt
from lgnb.widgets._panel import StatePanel
from lgnb.widgets._stream import StreamReducer
from lgnb.widgets.run_view import VIEW_MODES


def panels(app: Any, inputs: list[Any], cfg: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Feed the view's reducer and panel as the run view does; the panel after every values chunk."""
    r, p = StreamReducer(), StatePanel()
    out, patches = [], []
    for i, inp in enumerate(inputs):
        r.begin_segment()
        p.begin_segment()
        for chunk in app.stream(inp, cfg, stream_mode=list(VIEW_MODES), subgraphs=True):
            patches += r.feed(chunk)
            p.feed(chunk, r)
            if p.dirty:
                out.append(p.render())
        r.end_segment(finished=i == len(inputs) - 1)
    return out, patches


class Plain(TypedDict, total=False):
    text: str
    items: list
    count: int


def test_a_graph_without_messages_keys_changed_marks_and_folding() -> None:
    g = StateGraph(Plain)
    g.add_node("big", lambda s: {"text": "x" * 1_000_000, "items": list(range(10_000))})
    g.add_node("count", lambda s: {"count": len(s["items"])})
    g.add_edge(START, "big")
    g.add_edge("big", "count")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "plain"}}
    shown, _ = panels(app, [{"count": 0}], cfg)
    assert [(s["step"], s["status"]) for s in shown] == [(0, "input"), (1, "step"), (2, "step")]
    first, big, last = shown
    assert [(k["key"], k["changed"]) for k in first["keys"]] == [("count", True)]
    assert {k["key"]: k["changed"] for k in big["keys"]} == {"count": False, "text": True, "items": True}
    assert [t["node"] for t in big["tasks"]] == ["big"] and big["tasks"][0]["count"] == 1
    value = {k["key"]: k["value"] for k in big["keys"]}
    assert value["text"]["__fold__"] == "str" and value["text"]["len"] == 1_000_000 and len(value["text"]["head"]) < 1000
    assert value["items"] == {"__fold__": "list", "len": 10_000, "last": [9997, 9998, 9999]}
    assert {k["key"]: k["changed"] for k in last["keys"]} == {"count": True, "text": False, "items": False}
    assert {k["key"]: k["value"] for k in last["keys"]}["count"] == 10_000
    # bounded: the whole panel of a step, with a 1 MB string and a 10,000-item list, stays small
    for s in shown:
        assert len(json.dumps(s)) < 20_000
    # the step shown is the checkpoint's step holding that state
    saved = {c.metadata["step"]: c.values for c in app.get_state_history(cfg)}
    assert saved[2]["count"] == 10_000 and "count" in saved[0] and "items" not in saved[0]
    assert saved[1]["items"][-1] == 9999 and "count" not in {k for k, v in saved[1].items() if v == 10_000}


class Log(TypedDict):
    log: Annotated[list, operator.add]


def test_step_numbers_equal_the_checkpoints_across_an_interrupt_and_resume() -> None:
    g = StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": [f"b={interrupt('ok?')}"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge("a", "c")
    g.add_edge("b", "c")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "resume"}}
    shown, patches = panels(app, [{"log": []}, Command(resume="yes")], cfg)
    saved = {c.metadata["step"]: c.values["log"] for c in app.get_state_history(cfg)}
    done = [s for s in shown if s["status"] in ("input", "step", "saved")]
    for s in done:  # every settled state shown is the checkpoint of the step it names
        assert {k["key"]: k["value"] for k in s["keys"]}["log"] == saved[s["step"]], s
    assert [(s["step"], s["status"]) for s in done][-2:] == [(1, "step"), (2, "step")]
    assert any(s["status"] == "saved" and s["step"] == 0 for s in done)  # the resume starts from step 0
    assert any(s["status"] == "interrupted" and s["step"] == 1 for s in shown)
    step1 = next(s for s in done if s["step"] == 1)
    # the finished task's write comes back on resume marked cached: listed once
    assert sorted((t["node"], len(t["updates"])) for t in step1["tasks"]) == [("a", 1), ("b", 1)]
    assert step1["changed"] == ["log"]
    updates = [(p["step"], p["node"]) for p in patches if p["kind"] == "update"]
    assert updates == [(1, "a"), (1, "b"), (2, "c")]


class Fan(TypedDict, total=False):
    items: list
    out: Annotated[list, operator.add]


def test_a_send_fan_out_of_three_keeps_three_updates() -> None:
    g = StateGraph(Fan)
    g.add_node("fan", lambda s: {})
    g.add_node("work", lambda x: {"out": [x * 10]})
    g.add_edge(START, "fan")
    g.add_conditional_edges("fan", lambda s: [Send("work", i) for i in s["items"]], ["work"])
    app = g.compile()
    shown, _ = panels(app, [{"items": [1, 2, 3]}], {})
    step = next(s for s in shown if any(t["node"] == "work" for t in s["tasks"]))
    work = next(t for t in step["tasks"] if t["node"] == "work")
    assert work["count"] == 3
    assert sorted(u["out"][0] for u in work["updates"]) == [10, 20, 30]
    assert {k["key"]: k["value"] for k in step["keys"]}["out"] == [10, 20, 30]


def test_metadata_and_a_cached_write_are_not_shown_as_updates() -> None:
    r, p = StreamReducer(), StatePanel()
    chunks = [((), "values", {"x": 0}), ((), "tasks", {"id": "1", "name": "n", "input": {}, "triggers": ["t"]}),
              ((), "updates", {"n": {"x": 1}, "__metadata__": {"cached": True}}),
              ((), "updates", {"n": {"x": 1}, "__metadata__": {"cached": True}}),
              ((), "values", {"x": 1})]
    r.begin_segment()
    p.begin_segment()
    patches = [q for c in chunks for q in (r.feed(c), p.feed(c, r))[0]]
    assert [(q["kind"], q["node"]) for q in patches] == [("update", "n")]
    shown = p.render()
    assert [(t["node"], t["updates"]) for t in shown["tasks"]] == [("n", [{"x": 1}])]
    assert all(k["key"] != "__metadata__" for k in shown["keys"])


def test_the_run_view_syncs_the_panel(kernel_loop: Any = None) -> None:
    import lgnb

    g = StateGraph(Plain)
    g.add_node("inc", lambda s: {"count": s["count"] + 1, "text": "<b>not html</b>"})
    g.add_edge(START, "inc")
    run = lgnb.run(g.compile(), {"count": 1}, display=False)
    run.wait(timeout=10)
    panel = run.view.panel
    assert panel["step"] == 1 and panel["status"] == "step"
    assert {k["key"]: (k["value"], k["changed"]) for k in panel["keys"]} == {
        "count": (2, True), "text": ("<b>not html</b>", True)}
    assert [(t["node"], t["count"]) for t in panel["tasks"]] == [("inc", 1)]


if __name__ == "__main__":
    pytest.main([__file__, "-q"])


def test_a_tool_calls_small_arguments_are_shown_whole_deep_in_an_update() -> None:
    """update → messages → message → tool_calls → call → args is six levels down: small
    arguments show whole (as the messages pane shows them), a large nested value is cut."""
    from langchain_core.messages import AIMessage

    from lgnb.graph import MessagesState
    from lgnb.widgets._panel import fold

    call = {"name": "add", "args": {"a": 2, "b": 3}, "id": "c1", "type": "tool_call"}
    g = StateGraph(MessagesState)
    g.add_node("agent", lambda s: {"messages": [AIMessage("", tool_calls=[call], id="m1")]})
    g.add_edge(START, "agent")
    shown, _ = panels(g.compile(checkpointer=InMemorySaver()), [{"messages": []}], {"configurable": {"thread_id": "c"}})
    (task,) = shown[-1]["tasks"]
    (message,) = task["updates"][0]["messages"]
    assert message["tool_calls"][0]["args"] == {"a": 2, "b": 3}
    deep = fold({"a": {"b": {"c": {"d": {"e": {"big": list(range(500))}}}}}})
    assert deep["a"]["b"]["c"]["d"]["e"] == {"__fold__": "cut"}

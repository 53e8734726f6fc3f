"""The run view numbers super-steps as the checkpoints do, across interrupts and resumes."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from lgnb.checkpoint.memory import InMemorySaver
from lgnb.graph import START, StateGraph
from lgnb.types import Command, interrupt
from lgnb.widgets._stream import StreamReducer
from lgnb.widgets.run_view import VIEW_MODES


class S(TypedDict):
    log: Annotated[list, operator.add]


def _asker(name):
    def node(s):
        return {"log": [f"{name}={interrupt(name)}"]}

    return node


def test_step_numbers_match_the_checkpoints_across_three_interrupts_and_resumes():
    g = StateGraph(S)
    prev = START
    for n in ("a", "b", "c"):
        g.add_node(n, _asker(n))
        g.add_edge(prev, n)
        prev = n
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "steps"}}
    r = StreamReducer()
    seen: list[tuple[str, int]] = []
    inputs = [{"log": []}, Command(resume=1), Command(resume=2), Command(resume=3)]
    for i, inp in enumerate(inputs):
        r.begin_segment()
        for chunk in app.stream(inp, cfg, stream_mode=list(VIEW_MODES), subgraphs=True):
            for p in r.feed(chunk):
                if p["kind"] == "update":
                    seen.append((p["node"], p["step"]))
        r.end_segment(finished=i == len(inputs) - 1)
    # the checkpoint after a node's step holds its write, and says that step
    by_step = {
        s.metadata["step"]: s.values["log"]
        for s in app.get_state_history(cfg)
        if s.metadata.get("source") == "loop"
    }
    assert seen == [("a", 1), ("b", 2), ("c", 3)]
    for node, step in seen:
        assert by_step[step][-1].startswith(f"{node}=") and not any(
            v.startswith(f"{node}=") for v in by_step.get(step - 1, [])
        )


def test_a_cached_write_marker_is_not_shown_as_a_node_update():
    r = StreamReducer()
    r.begin_segment()
    patches = r.feed(((), "updates", {"n": {"x": 1}, "__metadata__": {"cached": True}}))
    assert [(p["kind"], p["node"]) for p in patches] == [("update", "n")]

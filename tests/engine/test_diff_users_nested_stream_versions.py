"""A node streams (or invokes) another graph while the caller streams with another version.

Users mix stream APIs across nesting levels: a chat app streams its graph with the v1
tuples, the v2 typed parts (`version="v2"`) or the v3 run stream
(`stream_events(version="v3")`, content-block `messages` events), maybe with a tracer in
its config (LangSmith), and one node runs a sub-agent with `.stream(...)` /
`.astream(...)` / `.invoke(...)` for `messages`, `["messages", "updates"]` or `values`,
sharing the caller's config or on a thread of its own. LangChain callbacks follow the
config, so the caller's `messages` handler reaches the sub-agent's model: a v3 caller's
content-block handler must not turn the sub-agent's v1 stream into content-block events
(LangGraph strips it from the nested run's callbacks, traced or not), while a nested
`version="v2"` stream keeps it (and, sharing the caller's config, asks for content-block
events itself).

Each scenario compares with LangGraph: what the node reads from the inner stream (chunk
classes, content, content blocks, ids and metadata as the harness normalizes them), what
the caller's stream yields (v1 tuples, v2 parts, v3 protocol events) and, when traced,
the run tree LangSmith would show (`test_diff_users_traces.tree`). The model is
`_scripted.Echo` (streams "helper heard <last message>" word by word).

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import asyncio
import itertools
from typing import Any

import pytest
from _diff import acollect, collect
from test_diff_stream_v3 import _event
from test_diff_users_nested_streams import CFG, HELPER, HI, _caller, _helper
from test_diff_users_traces import Recorder, tree

OUTERS = ("v1", "v2", "v3")
INNERS = ("stream", "astream", "invoke")
MODES = {"messages": "messages", "messages+updates": ["messages", "updates"], "values": "values"}
WHERE = ("shared-config", "own-thread")
TRACED = ("untraced", "traced")

# the sub-agent's answer, as `Echo(who="helper")` streams it after the note node's message
WORDS = ["helper", " heard", " note", " 1", ""]


def _run_outer(app: Any, outer: str, cfg: dict, *, is_async: bool) -> list:
    """What the caller's stream yields: v1 `(ns, mode, chunk)` tuples or v2 parts of
    `["messages", "updates"]` with subgraphs, or the v3 run stream's protocol events."""
    if outer == "v3":
        if is_async:
            async def events() -> list:
                run = await app.astream_events(HI, cfg, version="v3")
                return [_event(e) async for e in run]

            return asyncio.run(events())
        return [_event(e) for e in app.stream_events(HI, cfg, version="v3")]
    kw: dict[str, Any] = {"stream_mode": ["messages", "updates"], "subgraphs": True}
    if outer == "v2":
        kw["version"] = "v2"
    if is_async:
        return asyncio.run(acollect(lambda: app.astream(HI, cfg, **kw)))
    return collect(lambda: app.stream(HI, cfg, **kw))


def _traced_run(E: Any, node: Any, outer: str, traced: bool, *, is_async: bool) -> dict:
    """The caller (one node) run once; what its stream yielded and, traced, the run tree."""
    rec = Recorder()
    cfg = {**CFG, "callbacks": [rec]} if traced else CFG
    out = _run_outer(_caller(E, node), outer, cfg, is_async=is_async)
    return {"outer": out, "tree": tree(rec) if traced else None}


def _node_messages(seen: list) -> list:
    """(class, content) of each message the node read (normalized observable): the bare
    `(message, metadata)` pairs of `messages`, or the `("messages", pair)` tuples of a
    list of modes."""
    pairs = [c[1] if c[0] == "messages" else c for c in seen if c[0] != "updates"]
    return [(msg[0], msg[1]["content"]) for msg, _md in pairs]


MATRIX = list(itertools.product(OUTERS, INNERS, MODES, TRACED, WHERE))


@pytest.mark.parametrize(("outer", "inner", "mode", "traced", "where"), MATRIX,
                         ids=["-".join(x) for x in MATRIX])
def test_what_a_node_reads_from_a_graph_it_runs_and_what_the_caller_streams(
        differential, outer, inner, mode, traced, where):
    """The caller streams v1 / v2 / v3 (traced or not); its node runs the sub-agent with
    `stream`, `astream` (an async node, the caller then `astream`s) or `invoke`, for
    `messages`, `["messages", "updates"]` or `values`, sharing the caller's config or on
    its own thread. The node reads v1 chunks token by token in every combination (never
    content-block events, nor the answer a second time as a whole message), and the
    caller's stream and trace tree match LangGraph's."""
    is_async = inner == "astream"

    def scenario(E):
        own = where == "own-thread"
        sub = _helper(E, own_thread=own)
        cfg = HELPER if own else None
        stream_mode = MODES[mode]
        seen: list = []

        def node(s):
            inp = {"messages": s["messages"][-1:]}
            if inner == "invoke":
                seen.append(sub.invoke(inp, cfg, stream_mode=stream_mode))
            else:
                seen.extend(sub.stream(inp, cfg, stream_mode=stream_mode))
            return {"out": [len(seen)]}

        async def anode(s):
            async for chunk in sub.astream({"messages": s["messages"][-1:]}, cfg, stream_mode=stream_mode):
                seen.append(chunk)
            return {"out": [len(seen)]}

        run = _traced_run(E, anode if is_async else node, outer, traced == "traced", is_async=is_async)
        return {"seen": seen, **run}

    obs = differential(scenario)
    if mode != "values":
        seen = obs["seen"][0] if inner == "invoke" else obs["seen"]
        assert _node_messages(seen) == [("AIMessage", "note 1"), *(("AIMessageChunk", w) for w in WORDS)]
    if traced == "traced":
        assert obs["tree"] and obs["tree"][0][0] == "LangGraph"


V2_CASES = list(itertools.product(("stream", "astream"), TRACED, WHERE))


@pytest.mark.parametrize(("inner", "traced", "where"), V2_CASES, ids=["-".join(x) for x in V2_CASES])
def test_node_streaming_version_v2_messages_inside_a_v3_run(differential, inner, traced, where):
    """In a node of a v3 run, the sub-agent is streamed with `version="v2"` for
    `messages`. As in LangGraph: sharing the caller's config it asks for content-block
    events too (the v3 flag comes with the node's `configurable`), so the node reads
    protocol events; on a thread of its own it reads v1 chunks, and the caller's
    content-block handler stays in its callbacks (a v2 stream keeps it)."""
    is_async = inner == "astream"

    def scenario(E):
        own = where == "own-thread"
        sub = _helper(E, own_thread=own)
        cfg = HELPER if own else None
        seen: list = []

        def node(s):
            seen.extend(sub.stream({"messages": s["messages"][-1:]}, cfg, stream_mode="messages", version="v2"))
            return {"out": [len(seen)]}

        async def anode(s):
            async for part in sub.astream({"messages": s["messages"][-1:]}, cfg, stream_mode="messages",
                                          version="v2"):
                seen.append(part)
            return {"out": [len(seen)]}

        run = _traced_run(E, anode if is_async else node, "v3", traced == "traced", is_async=is_async)
        return {"seen": seen, **run}

    obs = differential(scenario)
    first = [part["data"][0] for part in obs["seen"]][1]  # after the note node's message
    if where == "shared-config":
        assert isinstance(first, dict) and first["event"] == "message-start"
    else:
        assert first[0] == "AIMessageChunk"


V3_CASES = list(itertools.product(OUTERS, ("sync", "async"), TRACED, WHERE))


@pytest.mark.parametrize(("outer", "node_kind", "traced", "where"), V3_CASES,
                         ids=["-".join(x) for x in V3_CASES])
def test_node_running_a_v3_stream_of_a_sub_agent(differential, outer, node_kind, traced, where):
    """The node runs the sub-agent with `stream_events(version="v3")` (or
    `astream_events` in an async node) and reads its protocol events, while the caller
    streams v1 / v2 / v3, traced or not: the node's events (content-block `messages`
    events of the sub-agent's model), the caller's stream and the trace match LangGraph's."""
    is_async = node_kind == "async"

    def scenario(E):
        own = where == "own-thread"
        sub = _helper(E, own_thread=own)
        cfg = HELPER if own else None
        seen: list = []

        def node(s):
            seen.extend(_event(e) for e in sub.stream_events({"messages": s["messages"][-1:]}, cfg, version="v3"))
            return {"out": [len(seen)]}

        async def anode(s):
            run = await sub.astream_events({"messages": s["messages"][-1:]}, cfg, version="v3")
            async for e in run:
                seen.append(_event(e))
            return {"out": [len(seen)]}

        run = _traced_run(E, anode if is_async else node, outer, traced == "traced", is_async=is_async)
        return {"seen": seen, **run}

    obs = differential(scenario)
    events = [e[3][0] for e in obs["seen"] if e[1] == "messages" and isinstance(e[3][0], dict)]
    deltas = [e["delta"]["text"] for e in events if e["event"] == "content-block-delta"]
    assert deltas == WORDS[:-1]


EVENTS_CASES = list(itertools.product(("stream", "astream"), ("messages", "messages+updates"), TRACED, WHERE))


@pytest.mark.parametrize(("inner", "mode", "traced", "where"), EVENTS_CASES,
                         ids=["-".join(x) for x in EVENTS_CASES])
def test_node_streaming_a_sub_agent_under_astream_events(differential, inner, mode, traced, where):
    """The caller uses LangChain's `astream_events(version="v2")` (with a tracer or not)
    and its async node streams the sub-agent (`stream` or `astream`): the node still reads
    v1 chunks, and the caller's events (name, node, chat-model chunks) match LangGraph's."""
    def scenario(E):
        own = where == "own-thread"
        sub = _helper(E, own_thread=own)
        cfg = HELPER if own else None
        seen: list = []

        async def anode(s):
            inp = {"messages": s["messages"][-1:]}
            if inner == "astream":
                async for chunk in sub.astream(inp, cfg, stream_mode=MODES[mode]):
                    seen.append(chunk)
            else:
                seen.extend(sub.stream(inp, cfg, stream_mode=MODES[mode]))
            return {"out": [len(seen)]}

        rec = Recorder()
        config = {**CFG, "callbacks": [rec]} if traced == "traced" else CFG

        def shown(e: dict) -> tuple:
            md = e.get("metadata") or {}
            chunk = e["data"].get("chunk") if e["event"].endswith("_stream") else None
            return e["event"], e["name"], md.get("langgraph_node"), chunk

        events = asyncio.run(acollect(lambda: _caller(E, anode).astream_events(HI, config, version="v2")))
        return {"seen": seen, "events": [shown(e) for e in events],
                "tree": tree(rec) if traced == "traced" else None}

    obs = differential(scenario)
    assert _node_messages(obs["seen"]) == [("AIMessage", "note 1"), *(("AIMessageChunk", w) for w in WORDS)]
    assert sum(1 for e in obs["events"] if e[0] == "on_chat_model_stream") == len(WORDS)

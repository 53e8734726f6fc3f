"""Reading and writing a thread's state: get_state, get_state_history, update_state.

A snapshot is rebuilt the way a resuming run would see the checkpoint: a Loop is made
from the saved checkpoint (no run, no stream) and plans the step's tasks; the saved
pending writes say which of them finished, asked a question or failed. update_state
applies values through a node's writers, as if that node had returned them, and saves
the result as a new checkpoint (`source: "update"`) — on an old checkpoint, a fork.
"""

from __future__ import annotations

import difflib
import os
import sys
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, cast, overload
from uuid import UUID, uuid5

from lgnb._internal.constants import (
    CONF,
    CONFIG_KEY_CHECKPOINTER,
    END,
    INPUT,
    INTERRUPT,
    NULL_TASK_ID,
    PUSH,
    ROOT,
    START,
)
from lgnb._internal.context import TASK_CTX, TaskContext
from lgnb.errors import InvalidUpdateError
from lgnb.pregel._delta import (
    COUNTERS,
    ensure_message_ids,
    hydrating,
    overwritten_delta_keys,
    seen_without_bumps,
)
from lgnb.pregel._io import read_channels, result_writes
from lgnb.pregel._loop import Loop
from lgnb.pregel._migrate import save_request
from lgnb.pregel._options import lift_config_keys, recast_ns
from lgnb.pregel._program import Program, aanswer, answer, saver_request
from lgnb.pregel._replay import superseding
from lgnb.pregel._run import RunContext
from lgnb.pregel._status import read_task_statuses
from lgnb.pregel._task import Task, WriteBatch
from lgnb.types import PregelTask, StateSnapshot, StateUpdate
from lgnb.warnings import UnknownStateKeyWarning

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from lgnb.pregel.main import Pregel

__all__ = (
    "get_state",
    "aget_state",
    "get_state_history",
    "aget_state_history",
    "update_state",
    "aupdate_state",
    "bulk_update_state",
    "checkpoint_stream_payload",
)


# ---------------------------------------------------------------------- helpers
def _checkpointer(graph: Pregel, config: dict[str, Any]) -> Any:
    if not isinstance(config, Mapping):  # (LangGraph: a TypeError from indexing it)
        raise TypeError(
            f"A thread's state is read and updated by its config, a dict: e.g. "
            f"`{{'configurable': {{'thread_id': '1'}}}}` (got {type(config).__name__})."
        )
    saver = graph.checkpointer if graph.checkpointer not in (None, True, False) else None
    saver = config.get(CONF, {}).get(CONFIG_KEY_CHECKPOINTER, saver)
    if saver is None and graph.checkpointer is True:
        raise RuntimeError(
            "checkpointer=True cannot be used for root graphs: it makes a subgraph keep "
            "its state in its parent's checkpointer. Read the state through the parent "
            "graph (`parent.get_state(config, subgraphs=True)`), or compile this graph "
            "with a saver, e.g. `compile(checkpointer=InMemorySaver())`."
        )
    if saver is None:
        raise ValueError(
            "No checkpointer set: compile the graph with one, e.g. "
            "`builder.compile(checkpointer=InMemorySaver())`, and pass "
            "`{'configurable': {'thread_id': ...}}`, to keep and read thread state."
        )
    from lgnb.graph._allowlist import saver_for

    return saver_for(saver, graph)


def _unknown_as_node(graph: Pregel, as_node: Any) -> InvalidUpdateError:
    """LangGraph's words, then the names `as_node` may take (the graph's: a subgraph's
    own when the config names its namespace)."""
    names = ", ".join(repr(n) for n in graph.nodes if not n.startswith("__"))
    if as_node == END:  # a node name LangGraph takes only with no values: the thread ends
        return InvalidUpdateError(
            f"Node {as_node} does not exist\n`as_node=END` takes no values (`update_state(config, "
            f"None, as_node=END)` ends the thread); values come from a node: one of {names} (or START)."
        )
    return InvalidUpdateError(
        f"Node {as_node} does not exist\n`as_node` names the node the update stands for: "
        f"one of {names} (or START, or END with no values)."
    )


def _own_config(graph: Pregel, config: dict[str, Any]) -> dict[str, Any]:
    conf = dict((graph.config or {}).get(CONF) or {})
    conf.update(config.get(CONF) or {})
    if "thread_id" not in conf:
        hint = ""
        if config.get("thread_id") is not None:  # invoke takes it there; as in LangGraph,
            # get_state and update_state do not (LangGraph: a bare KeyError)
            hint = (
                f"\n`thread_id` is at the top level of the config: get_state and update_state read it "
                f"under 'configurable', e.g. {{'configurable': {{'thread_id': {config['thread_id']!r}}}}}."
            )
        raise ValueError(
            "Checkpointer requires one or more of the following 'configurable' keys: "
            "thread_id, checkpoint_ns, checkpoint_id" + hint
        )
    conf["thread_id"] = str(conf["thread_id"])
    conf.setdefault("checkpoint_ns", "")
    return {**config, CONF: conf}


def _subgraph_for_ns(
    graph: Pregel, config: dict[str, Any], *, for_update: bool = False
) -> tuple[Pregel, dict[str, Any]] | None:
    """A config naming a subgraph namespace is answered by that subgraph. A namespace
    no declared or detected subgraph owns (a graph a tool invokes) is read with this
    graph's channels; an update to it raises, as it would write the wrong state."""
    ns = config.get(CONF, {}).get("checkpoint_ns", "")
    if not ns or CONFIG_KEY_CHECKPOINTER in config.get(CONF, {}):
        return None  # the root namespace, or already resolved to this graph
    recast = recast_ns(ns, keep_numbers=False)
    current = next((sub for _, sub in graph.get_subgraphs(namespace=recast, recurse=True)), None)
    if current is None:
        if for_update:
            raise ValueError(
                f"Subgraph {recast} not found (checkpoint_ns {ns!r}): no node of this graph "
                "is, or invokes, a compiled graph at that namespace, so its state cannot be "
                "updated through this graph."
            )
        return None
    conf = dict(config[CONF])
    conf[CONFIG_KEY_CHECKPOINTER] = _checkpointer(graph, config)
    if current.checkpointer is True:  # its state outlives each call: kept without task ids
        conf["checkpoint_ns"] = recast_ns(ns)
    return current, {**config, CONF: conf}


@overload
def _patch_map(config: dict[str, Any], metadata: dict[str, Any] | None) -> dict[str, Any]: ...
@overload
def _patch_map(config: None, metadata: dict[str, Any] | None) -> None: ...
@overload
def _patch_map(config: dict[str, Any] | None, metadata: dict[str, Any] | None) -> dict[str, Any] | None: ...


def _patch_map(config: dict[str, Any] | None, metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """The config with `checkpoint_map` (the enclosing graphs' checkpoint ids, from the
    metadata's `parents`) added to its configurable, as LangGraph's snapshots carry it."""
    if config is None:
        return None
    parents = metadata.get("parents") if metadata else None
    if not parents:
        return config
    conf = config[CONF]
    return {
        **config,
        CONF: {**conf, "checkpoint_map": {**parents, conf["checkpoint_ns"]: conf["checkpoint_id"]}},
    }


def _clean(config: dict[str, Any]) -> dict[str, Any]:
    return {CONF: {k: v for k, v in config.get(CONF, {}).items() if not k.startswith("__")}}


def _loop_for(graph: Pregel, config: dict[str, Any], saved: Any, saver: Any) -> Loop:
    # (the graph's store: a router `update_state(..., as_node=...)` runs reads it, as a run's do)
    run = RunContext(sink=None, modes=frozenset(), subgraphs=False, config=config, tracing=False,
                     store=getattr(graph, "store", None))
    ns = config[CONF].get("checkpoint_ns", "")
    loop = Loop(
        graph,
        run,
        config=config,
        saved=saved,
        checkpointer=saver,
        durability="sync",
        ns=ns,
        interrupt_before=(),
        interrupt_after=(),
        output_keys=graph.stream_channels,
        recursion_limit=1,
        is_nested=bool(ns),
    )
    loop.records_updated_channels = False
    loop.builds_inputs = False
    return loop


def _tasks_with_writes(
    loop: Loop,
    tasks: Sequence[Task],
    pending: Sequence[tuple[str, str, Any]],
    states: dict[str, Any],
    *,
    live: bool,
) -> tuple[PregelTask, ...]:
    statuses = read_task_statuses(pending)
    keys = loop.graph.stream_channels
    out = []
    for task in tasks:
        st = statuses.get(task.id)
        result = None
        if st is not None and st.finished:
            if isinstance(keys, str):
                mapped = result_writes([(c, v) for c, v in st.output if c == keys])
                result = mapped.get(keys) if mapped else None
            else:
                chosen = [(c, v) for c, v in st.output if c in keys]
                result = result_writes(chosen) if chosen else {}
        interrupts = () if st is None else (st.pending_interrupts if live else st.interrupts)
        out.append(
            PregelTask(
                task.id,
                task.name,
                task.path if task.path[0] != PUSH else (*task.path, False),
                st.error if st is not None else None,
                tuple(interrupts),
                states.get(task.id),
                result,
            )
        )
    return tuple(out)


def _subgraph_states(
    loop: Loop, tasks: Sequence[Task], saver: Any, thread_id: str, recurse: bool
) -> tuple[dict[str, Any], list[tuple[Any, dict[str, Any]]]]:
    """Config (or, recursing, snapshot requests) of the subgraph each task runs."""
    states: dict[str, Any] = {}
    requests: list[tuple[Any, dict[str, Any]]] = []
    for task in tasks:
        subs = task.node.subgraphs
        if not subs or getattr(subs[0], "checkpointer", None) is False:
            continue  # a subgraph compiled with checkpointer=False keeps no state
        if recurse:  # read where it is kept: without the task ids for `checkpointer=True`
            ns = recast_ns(task.ns) if subs[0].checkpointer is True else task.ns
            requests.append((task, {CONF: {"thread_id": thread_id, "checkpoint_ns": ns,
                                           CONFIG_KEY_CHECKPOINTER: saver}}))
        else:  # the task's namespace, as LangGraph names it (`_subgraph_for_ns` reads it)
            states[task.id] = {CONF: {"thread_id": thread_id, "checkpoint_ns": task.ns}}
    return states, requests


def _snapshot_parts(
    graph: Pregel, config: dict[str, Any], saved: Any, saver: Any, *, live: bool
) -> tuple[Loop, list[Task]] | None:
    if saved is None:
        return None
    loop = _loop_for(graph, config, saved, saver)
    loop.updated_channels = None  # plan every node, in the order they were added
    tasks = loop._plan()
    null = [(c, v) for t, c, v in loop.pending if t == NULL_TASK_ID]
    if null:
        loop._apply([WriteBatch(INPUT, null)])
    if live and loop.pending:
        statuses = read_task_statuses(loop.pending)
        done = []
        for task in tasks:
            st = statuses.get(task.id)
            if st is not None and st.output:
                task.writes = list(st.output)
                done.append(task)
        if done:
            loop._apply(done)
    return loop, tasks


@overload
def _runnable(config: dict[str, Any]) -> RunnableConfig: ...
@overload
def _runnable(config: dict[str, Any] | None) -> RunnableConfig | None: ...


def _runnable(config: dict[str, Any] | None) -> RunnableConfig | None:
    """The engine's plain config dict typed as the RunnableConfig a snapshot carries."""
    return cast("RunnableConfig | None", config)


def _empty(config: dict[str, Any]) -> StateSnapshot:
    return StateSnapshot({}, (), _runnable(config), None, None, None, (), ())


def _finish_snapshot(
    loop: Loop, tasks: list[Task], saved: Any, states: dict[str, Any], *, live: bool
) -> StateSnapshot:
    with_writes = _tasks_with_writes(loop, tasks, loop.pending, states, live=live)
    # the loop keeps `state` current, in the schema's order: a copy is the values
    values = dict(loop.state) if loop.output_all_state else read_channels(loop.channels, loop.graph.stream_channels)
    return StateSnapshot(
        values,
        tuple(t.name for t in tasks if not t.writes),
        _runnable(_patch_map(saved.config, saved.metadata)),
        saved.metadata,
        saved.checkpoint["ts"],
        _runnable(_patch_map(saved.parent_config, saved.metadata)),
        with_writes,
        tuple(i for t in with_writes for i in t.interrupts),
    )


def _snapshotting(graph: Pregel, config: dict[str, Any], saved: Any, saver: Any, *, recurse: bool, live: bool) -> Program[StateSnapshot]:
    parts = _snapshot_parts(graph, config, saved, saver, live=live)
    if parts is None:
        return _empty(config)
    loop, tasks = parts
    states, requests = _subgraph_states(loop, tasks, saver, saved.config[CONF]["thread_id"], recurse)
    for task, cfg in requests:
        sub = task.node.subgraphs[0]
        states[task.id] = yield (sub.get_state, sub.aget_state, (cfg,), {"subgraphs": True})
    return _finish_snapshot(loop, tasks, saved, states, live=live)


# ---------------------------------------------------------------------- reading
def _under_bound_config(graph: Pregel, config: dict[str, Any]) -> dict[str, Any]:
    """`config` over the graph's `with_config` values, as LangGraph's get_state reads with
    `merge_configs(self.config, config)` (empty values skipped, metadata merged, tags
    joined; `_own_config` adds the configurable): a saver asked for a checkpoint id
    returns that config as the snapshot's, so `get_state(old_checkpoint).config` shows
    them (e.g. the recursion limit and metadata `create_agent` and deepagents bind)."""
    bound = graph.config
    if not bound:
        return config
    merged: dict[str, Any] = {}
    sources: tuple[dict[str, Any], ...] = (dict(bound), config)
    for source in sources:
        for k, v in source.items():
            if not v or k == CONF:
                continue
            if k == "metadata" and merged.get(k):
                merged[k] = {**merged[k], **v}
            elif k == "tags" and merged.get(k):
                merged[k] = [*merged[k], *v]
            else:
                merged[k] = v
    merged[CONF] = config.get(CONF) or {}
    return merged


def _reading(graph: Pregel, config: dict[str, Any], subgraphs: bool) -> Program[StateSnapshot]:
    saver = _checkpointer(graph, config)
    if (sub := _subgraph_for_ns(graph, config)) is not None:
        graph, config = sub
        return (yield (graph.get_state, graph.aget_state, (config,), {"subgraphs": subgraphs}))
    own = _own_config(graph, _under_bound_config(graph, config))
    found = yield saver_request(saver, "get_tuple", own)
    saved = yield from hydrating(saver, found, graph.channels)
    if saved is None:
        return _empty(config)
    live = "checkpoint_id" not in own[CONF]
    return (yield from _snapshotting(graph, own, saved, saver, recurse=subgraphs, live=live))


def get_state(graph: Pregel, config: dict[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
    return answer(_reading(graph, config, subgraphs))


async def aget_state(graph: Pregel, config: dict[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
    return await aanswer(_reading(graph, config, subgraphs))


def _listing(
    graph: Pregel, config: dict[str, Any], kwargs: dict[str, Any]
) -> Program[tuple[Any, dict[str, Any], list[Any]] | tuple[Pregel, dict[str, Any], None]]:
    """(saver, config, the checkpoints listed), or (subgraph, its config, None) when a
    subgraph answers. Listed in full first: a saver's list() may hold its connection
    (lock, cursor) while it yields, and hydrating/snapshotting calls the same saver again
    (a deadlock). A top-level `thread_id` is read as configurable, as LangGraph's
    get_state_history does (its get_state and update_state do not)."""
    config = lift_config_keys(config)
    saver = _checkpointer(graph, config)
    if (sub := _subgraph_for_ns(graph, config)) is not None:
        return sub[0], sub[1], None
    config = _own_config(graph, config)
    return saver, config, (yield saver_request(saver, "iter_list", config, **kwargs))


def _history_entry(graph: Pregel, config: dict[str, Any], saved: Any, saver: Any) -> Program[StateSnapshot]:
    saved = yield from hydrating(saver, saved, graph.channels)
    return (yield from _snapshotting(graph, config, saved, saver, recurse=False, live=False))


def get_state_history(
    graph: Pregel,
    config: dict[str, Any],
    *,
    filter: dict[str, Any] | None = None,
    before: dict[str, Any] | None = None,
    limit: int | None = None,
) -> Iterator[StateSnapshot]:
    kwargs: dict[str, Any] = {"filter": filter, "before": before, "limit": limit}
    saver, config, listed = answer(_listing(graph, config, kwargs))
    if listed is None:  # a subgraph's namespace: the subgraph answers
        yield from saver.get_state_history(_runnable(config), **kwargs)
        return
    for saved in listed:
        yield answer(_history_entry(graph, config, saved, saver))


async def aget_state_history(
    graph: Pregel,
    config: dict[str, Any],
    *,
    filter: dict[str, Any] | None = None,
    before: dict[str, Any] | None = None,
    limit: int | None = None,
) -> AsyncIterator[StateSnapshot]:
    kwargs: dict[str, Any] = {"filter": filter, "before": before, "limit": limit}
    saver, config, listed = await aanswer(_listing(graph, config, kwargs))
    if listed is None:
        async for snap in saver.aget_state_history(_runnable(config), **kwargs):
            yield snap
        return
    for saved in listed:
        yield await aanswer(_history_entry(graph, config, saved, saver))


# ---------------------------------------------------------------------- writing
def _infer_as_node(graph: Pregel, loop: Loop) -> str | None:
    nodes = [n for n in graph.nodes if n != START] if len(graph.nodes) > 1 else list(graph.nodes)
    if len(graph.nodes) == 1:
        return next(iter(graph.nodes))
    if len(nodes) == 1 and not loop.versions.seen:
        pass
    seen = {n: s for n, s in seen_without_bumps(loop.versions.seen).items() if n != INTERRUPT}
    if not any(v for s in seen.values() for v in s.values()):
        return START if START in graph.nodes else None
    last = sorted((v, n) for n, s in seen.items() if n in graph.nodes for v in s.values())
    if len(last) == 1 or (last and last[-1][0] != last[-2][0]):
        return last[-1][1]
    return None


def _run_writers(task: Task, ctx: TaskContext) -> None:
    """Run a node's writers on the update it stands for (its conditional edges too)."""
    from lgnb.pregel._runner import _finish

    token = TASK_CTX.set(ctx)
    try:
        _finish(task, task.input)
    finally:
        TASK_CTX.reset(token)


async def _arun_writers(task: Task, ctx: TaskContext) -> None:
    """`_run_writers` for an async run: async conditional edges are awaited."""
    from lgnb.pregel._runner import _afinish

    token = TASK_CTX.set(ctx)
    try:
        await _afinish(task, task.input)
    finally:
        TASK_CTX.reset(token)


def _update_steps(
    graph: Pregel,
    config: dict[str, Any],
    saved: Any,
    saver: Any,
    updates: Sequence[Any],
    *,
    is_first: bool = True,
    superseded: bool = False,
) -> Program[Loop]:
    """Apply one superstep of updates to a Loop built from `saved`; queue the save.

    Asks (a `_program` request) to run the writers of each node the update stands for on
    `task.input`, sync or async; returns the Loop.
    `superseded`: the thread has moved past `saved` (an update on an older checkpoint)."""
    loop = _loop_for(graph, config, saved, saver)
    if loop.delta_keys and is_first and saved is not None:
        # a new branch from `saved`: its saved writes belong to the child that used them
        loop.forced_snapshots.update(
            c for _, c, _ in (saved.pending_writes or ()) if c in loop.delta_keys
        )
    step = saved.metadata.get("step", -1) if saved else -1
    loop.step = step + 1
    values, as_node = updates[0][0], updates[0][1]
    if values is None and as_node == END:
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot apply multiple updates when clearing state")
        if saved is not None:
            loop.step = step + 1
            tasks = loop._plan()
            null = [(c, v) for t, c, v in loop.pending if t == NULL_TASK_ID]
            if null:
                loop._apply([WriteBatch(INPUT, null)])
            for tid, st in read_task_statuses(loop.pending).items():
                for task in tasks:
                    if task.id == tid:
                        task.writes.extend(st.output)
            loop.updated_channels = loop._apply(tasks)
        loop.pending = []
        loop.step = step + 1
        _with_parents(loop, saved)
        loop._put_checkpoint({"source": "update"})
        return loop
    if as_node == INPUT:
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot apply multiple updates when updating as input")
        writes = graph.map_input(values) if values is not None else []
        if not writes:
            raise InvalidUpdateError(f"Received no input writes for {graph.input_channels}")
        tid = str(uuid5(UUID(loop.checkpoint_id), INPUT))
        _store_delta_update(loop, saved, [(tid, writes, "")], superseded)
        loop.updated_channels = loop._apply([WriteBatch(INPUT, writes)])
        loop.pending = []
        loop.step = step + 1 if saved is not None and saved.metadata.get("step") is not None else -1
        _with_parents(loop, saved)
        loop._put_checkpoint({"source": "input"})
        return loop
    if as_node == "__copy__":
        return _copy_checkpoint(graph, config, saved, saver, updates)
    planned: dict[str, list[str]] = {}
    if saved is not None:
        for t in loop._plan():
            planned.setdefault(t.name, []).append(t.id)
    chosen: list[tuple[str, Any, str | None]] = []
    if len(updates) == 1:
        values, as_node, task_id = (*updates[0], None, None)[:3]
        if as_node is None:
            as_node = _infer_as_node(graph, loop)
        if as_node is None:
            raise InvalidUpdateError(
                "Ambiguous update, specify as_node: several nodes wrote in the last step, "
                "so pass `as_node=<node name>` to say which node the update comes from."
            )
        if as_node not in graph.nodes:
            raise _unknown_as_node(graph, as_node)
        chosen.append((as_node, values, task_id))
    else:
        for update in updates:
            values, as_node, task_id = (*update, None, None)[:3]
            if as_node is None:
                raise InvalidUpdateError("as_node is required when applying multiple updates")
            if as_node not in graph.nodes:
                raise _unknown_as_node(graph, as_node)
            chosen.append((as_node, values, task_id))
    batches: list[Any] = []
    for i, (as_node, values, task_id) in enumerate(chosen):
        _warn_unknown_keys(graph, as_node, values)
        node = graph.nodes[as_node]
        ids = planned.get(as_node) or []
        tid = task_id or (ids.pop(0) if ids else str(uuid5(UUID(loop.checkpoint_id), INTERRUPT if i == 0 else f"{INTERRUPT}:{i}")))
        task = Task(id=tid, name=as_node, path=(INTERRUPT, i), input=values, node=node, triggers=(INTERRUPT,), ns=loop.ns)
        yield (_run_writers, _arun_writers, (task, TaskContext(task, loop, loop.run.runtime_for(loop))))
        batches.append(task)
    # as LangGraph: the update's writes are also the results of the tasks it stands for
    _store_delta_update(loop, saved, [(t.id, t.writes, "") for t in batches], superseded)
    loop.updated_channels = loop._apply(batches)
    loop.pending = []
    loop.step = step + 1
    _with_parents(loop, saved)
    loop._put_checkpoint({"source": "update"})
    return loop


def _warn_unknown_keys(graph: Pregel, as_node: str, values: Any) -> None:
    """Warn of the keys of a dict update to a StateGraph's state that name no state key:
    the node's writers drop them, as LangGraph's do, so a misspelt key would be lost
    without a word."""
    if not isinstance(values, Mapping) or getattr(graph, "builder", None) is None or ROOT in graph.channels:
        return
    unknown = [k for k in values if isinstance(k, str) and k not in graph.channels]
    if not unknown:
        return
    keys = sorted(k for k in graph.channels if not k.startswith(("__", "branch:")))
    hints = [f"{k!r} (did you mean {near[0]!r}?)" if (near := difflib.get_close_matches(k, keys, 1)) else repr(k)
             for k in unknown]
    warnings.warn(
        f"update_state(..., as_node={as_node!r}): {', '.join(hints)} "
        f"{'is not a key' if len(unknown) == 1 else 'are not keys'} of the graph's state, so nothing was "
        f"written for {'it' if len(unknown) == 1 else 'them'} (state keys: {', '.join(keys)}).",
        UnknownStateKeyWarning,
        stacklevel=_outside_lgnb(),
    )


def _outside_lgnb() -> int:
    """The `stacklevel` of the caller's first frame outside the lgnb package (the user's
    `update_state` call), however deep the update program ran."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame: Any = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _store_delta_update(
    loop: Loop,
    saved: Any,
    writes: Sequence[tuple[str, list[tuple[str, Any]], str]],
    superseded: bool,
) -> None:
    """Save an update's writes where its delta keys will read them: on the checkpoint the
    update builds on. A new thread has none, and an older checkpoint's other children would
    read them too: then the update's checkpoint snapshots the keys instead. The messages
    in `writes` get their ids first, in place (pass the lists the update then applies)."""
    delta = loop.delta_keys
    if delta:
        for _, ws, _ in writes:
            ensure_message_ids(loop.graph.channels, ws)
    all_writes = [w for _, ws, _ in writes for w in ws]
    loop.forced_snapshots |= overwritten_delta_keys(loop.graph.channels, all_writes)
    if saved is None or superseded:
        loop.forced_snapshots.update(c for c, _ in all_writes if c in delta)
        return
    for tid, ws, path in writes:
        kept = [(c, v) for c, v in ws if c != PUSH]
        if kept:
            loop._save_writes(tid, kept, path)


def _copy_checkpoint(graph: Pregel, config: dict[str, Any], saved: Any, saver: Any, updates: Sequence[Any]) -> Loop:
    """`as_node="__copy__"`: the checkpoint again, as a sibling (a fork) of itself."""
    if len(updates) > 1:
        raise InvalidUpdateError("Cannot copy checkpoint with multiple updates")
    if saved is None:
        raise InvalidUpdateError("Cannot copy a non-existent checkpoint")
    loop = _loop_for(graph, config, saved, saver)
    step = saved.metadata.get("step", -1)
    parent = saved.parent_config or {CONF: {**saved.config[CONF], "checkpoint_id": None}}
    parent_conf = {k: v for k, v in parent[CONF].items() if v is not None}
    loop.checkpoint_config = {CONF: parent_conf}
    loop.unsaved = set()
    loop.step = step + 1
    _with_parents(loop, saved)
    # the copy has the same values and parent: its delta counters are the original's
    counters = {k: v for k, v in saved.metadata.items() if k == COUNTERS}
    loop.delta_keys = []
    loop._put_checkpoint({"source": "fork", **counters})
    return loop


def _with_parents(loop: Loop, saved: Any) -> None:
    parents = saved.metadata.get("parents", {}) if saved else {}
    loop.config = {**loop.config, CONF: {**loop.config[CONF], "checkpoint_map": parents}}


def _put_config(loop: Loop) -> dict[str, Any]:
    conf = dict(loop.checkpoint_config[CONF])
    return _patch_map({CONF: conf}, loop.metadata) or {CONF: conf}


def _after_copy(updates: Sequence[Any]) -> list[list[StateUpdate]]:
    """`update_state(cfg, [StateUpdate(...), ...], as_node="__copy__")` copies the
    checkpoint, then applies those updates to the copy as one more superstep; each update
    stands for the copy's next task of its node, in order (grouped by node, as LangGraph)."""
    values, as_node = updates[0][0], updates[0][1]
    if as_node != "__copy__" or not isinstance(values, list) or not values:
        return []
    by_node: dict[str, list[StateUpdate]] = {}
    for item in values:
        if not isinstance(item, Sequence) or isinstance(item, str):
            raise InvalidUpdateError(f"Invalid update item: {item} when copying checkpoint")
        by_node.setdefault(item[1], []).append(StateUpdate(item[0], item[1]))
    return [[u for group in by_node.values() for u in group]]


_BULK_SHAPE = ("`bulk_update_state(config, supersteps)`: supersteps is a list of super-steps, each a "
               "list of StateUpdate(values, as_node), e.g. [[StateUpdate({'key': ...}, 'node')]]")


def _is_list_like(v: Any) -> bool:
    return isinstance(v, Sequence) and not isinstance(v, (str, bytes))


def _check_supersteps(supersteps: Any) -> None:
    """The shape of `bulk_update_state`'s argument, checked up front: LangGraph fails on a
    wrong shape with a bare KeyError / TypeError / unpacking error from deep inside."""
    if not _is_list_like(supersteps):
        raise InvalidUpdateError(f"Expected a list of super-steps, got a {type(supersteps).__name__}. {_BULK_SHAPE}")
    for step in supersteps:
        if not _is_list_like(step) or isinstance(step, StateUpdate):
            raise InvalidUpdateError(f"Expected each super-step to be a list of StateUpdate, got {step!r}. {_BULK_SHAPE}")
        for u in step:
            if not _is_list_like(u) or len(u) not in (2, 3) or not (u[1] is None or isinstance(u[1], str)):
                raise InvalidUpdateError(f"Expected a StateUpdate(values, as_node), got {u!r}. {_BULK_SHAPE}")


def _with_bound_metadata(graph: Pregel, config: dict[str, Any]) -> dict[str, Any]:
    """`config` with the graph's own `with_config` metadata under the caller's: LangGraph's
    update_state builds each superstep's config with `ensure_config(self.config, ...)`, and
    the saver copies its scalar keys into the new checkpoint's metadata, as for a run's
    checkpoints (deepagents binds `ls_integration`; a fork lost it on lgnb)."""
    bound = (graph.config or {}).get("metadata")
    if not bound:
        return config
    return {**config, "metadata": {**bound, **(config.get("metadata") or {})}}


def _pregel_class() -> type:
    from lgnb.pregel.main import Pregel

    return Pregel


def _bulk_updating(graph: Pregel, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]) -> Program[dict[str, Any]]:
    saver = _checkpointer(graph, config)
    if not supersteps:
        raise ValueError("No supersteps provided")
    _check_supersteps(supersteps)
    if any(len(u) == 0 for u in supersteps):
        raise ValueError("No updates provided")
    if (sub := _subgraph_for_ns(graph, config, for_update=True)) is not None:
        target, config = sub
        if not isinstance(target, _pregel_class()):
            # a graph LangGraph compiled, invoked by a node's code (a library's agent): it
            # ran nested on LangGraph's engine, which updates its own state, on this saver
            as_tuples = [[tuple(u) for u in step] for step in supersteps]
            return (yield (target.bulk_update_state, target.abulk_update_state, (config, as_tuples)))
        return (yield from _bulk_updating(target, config, supersteps))
    current = _own_config(graph, config)
    steps = list(supersteps)
    for i, updates in enumerate(steps):
        found = yield saver_request(saver, "get_tuple", current)
        saved = yield from hydrating(saver, found, graph.channels)
        superseded = (yield from superseding(saver, current, saved)) if i == 0 else False
        loop = yield from _update_steps(
            graph, _with_bound_metadata(graph, current), saved, saver, updates, is_first=i == 0,
            superseded=superseded,
        )
        for op in loop.io:
            if op[0] == "put":
                current = yield save_request(saver, op)
            elif op[0] == "put_writes":
                yield save_request(saver, op)
        current = _patch_map(current, loop.metadata) or current
        steps[i + 1:i + 1] = _after_copy(updates)
    return current


def bulk_update_state(graph: Pregel, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
    return answer(_bulk_updating(graph, config, supersteps))


async def abulk_update_state(graph: Pregel, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
    return await aanswer(_bulk_updating(graph, config, supersteps))


def update_state(graph: Pregel, config: dict[str, Any], values: Any, *, as_node: str | None, task_id: str | None) -> dict[str, Any]:
    return bulk_update_state(graph, config, [[StateUpdate(values, as_node, task_id)]])


async def aupdate_state(graph: Pregel, config: dict[str, Any], values: Any, *, as_node: str | None, task_id: str | None) -> dict[str, Any]:
    return await abulk_update_state(graph, config, [[StateUpdate(values, as_node, task_id)]])


# ---------------------------------------------------------------------- streaming
def checkpoint_stream_payload(loop: Loop) -> dict[str, Any]:
    """The `checkpoints` stream event (and debug `checkpoint`) for the loop's checkpoint."""
    tasks = list(loop.tasks.values())
    states: dict[str, Any] = {}
    thread_id = loop.checkpoint_config[CONF].get("thread_id")
    for task in tasks:
        # a node that is a graph, or whose code invokes one (LangGraph's `task.subgraphs`)
        if task.node.subgraphs:
            states[task.id] = {CONF: {"thread_id": thread_id, "checkpoint_ns": task.ns}}
    conf = loop.checkpoint_config[CONF]
    # (LangGraph's key order: the namespace first, as printed or dumped to JSON)
    current = {CONF: {"checkpoint_ns": conf.get("checkpoint_ns", ""), **conf, "checkpoint_id": loop.checkpoint_id}}
    config = _clean(_patch_map(current, loop.metadata) or current)
    parent = loop.prev_checkpoint_config
    if parent:
        parent = {**parent, CONF: {"checkpoint_ns": parent[CONF].get("checkpoint_ns", ""), **parent[CONF]}}
    with_writes = _tasks_with_writes(loop, tasks, loop.pending, states, live=False)
    return {
        "config": config,
        "parent_config": _clean(_patch_map(parent, loop.metadata)) if parent else None,
        "values": read_channels(loop.channels, loop.stream_keys),
        "metadata": loop.metadata,
        "next": [t.name for t in tasks],
        "tasks": [
            {"id": t.id, "name": t.name, "error": t.error, "state": t.state}
            if t.error
            else {
                "id": t.id,
                "name": t.name,
                "result": t.result,
                "interrupts": tuple(asdict(i) for i in t.interrupts),
                "state": t.state,
            }
            if t.result
            else {
                "id": t.id,
                "name": t.name,
                "interrupts": tuple(asdict(i) for i in t.interrupts),
                "state": t.state,
            }
            for t in with_writes
        ],
    }

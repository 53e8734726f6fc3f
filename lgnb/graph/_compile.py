"""Lowering a validated StateGraph to Pregel nodes and channels.

Each node `n` is triggered by the channel `branch:to:n`; an edge `a -> b` is a write to
`branch:to:b` when `a` finishes; `[a, b] -> c` is a NamedBarrierValue `join:a+b:c`; a
conditional edge is a writer that runs the path function on the state as the node left
it. START is a hidden node that turns the input into state writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lgnb._internal.callable import NodeCallable
from lgnb._internal.constants import END, ROOT, START, TAG_HIDDEN
from lgnb._internal.context import TASK_CTX, current_task
from lgnb._internal.missing import MISSING
from lgnb.channels.ephemeral_value import EphemeralValue
from lgnb.channels.last_value import LastValueAfterFinish
from lgnb.channels.messages import MessagesChannel
from lgnb.channels.named_barrier_value import (
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
)
from lgnb.graph._branch import Branch
from lgnb.graph._schema import schema_mapper
from lgnb.graph._writers import updates_writer
from lgnb.graph.state import CompiledStateGraph, StateGraph
from lgnb.managed import is_managed_value
from lgnb.managed.base import Scratchpad
from lgnb.pregel._node import PregelNode, check_timeout_supported
from lgnb.pregel._task import Task
from lgnb.pregel._view import EdgeView
from lgnb.types import RetryPolicy

__all__ = ("lower",)


_SET = dict.__setitem__  # a snapshot's own updates do not mark it changed


def _identity(value: Any) -> Any:
    return value


def _keys(builder: StateGraph[Any, Any, Any, Any], schema: Any) -> list[str]:
    return list(builder.schemas[schema])


def _reads(builder: StateGraph[Any, Any, Any, Any], schema: Any) -> tuple[list[str] | str, dict[str, Any]]:
    keys = _keys(builder, schema)
    if keys == [ROOT]:
        return ROOT, {}
    managed = {k: builder.schemas[schema][k] for k in keys if is_managed_value(builder.schemas[schema][k])}
    return [k for k in keys if k not in managed], managed


def lower(
    builder: StateGraph[Any, Any, Any, Any],
    *,
    checkpointer: Any,
    store: Any,
    interrupt_before: Any,
    interrupt_after: Any,
    debug: bool,
    name: str,
    cache: Any = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    # managed values ride along so Pregel(...) validates their names as LangGraph does (a
    # reserved name, a state key `__pregel_tasks`); it adds the Send queue itself
    channels: dict[str, Any] = {**builder.channels, **builder.managed}
    channels[START] = EphemeralValue(builder.input_schema, key=START)
    out_schema = builder.schemas[builder.output_schema]
    output_channels: Any = (
        ROOT
        if list(out_schema) == [ROOT]
        else [k for k, v in out_schema.items() if not is_managed_value(v)]
    )
    stream_channels: Any = (
        ROOT if list(builder.channels) == [ROOT] else list(builder.channels)
    )
    state_keys = list(builder.channels)
    all_output_keys = list(builder.channels) + list(builder.managed)
    # one key set and one read list per schema, shared by every node: per-node copies
    # cost O(keys) memory each (a 100-node graph over 20,000 keys held 240 MB of them)
    all_output_key_set = frozenset(all_output_keys)
    reads_of: dict[Any, tuple[list[str] | str, dict[str, Any]]] = {}
    reads_all_of: dict[Any, bool] = {}
    mapper_of: dict[Any, Callable[[dict], Any] | None] = {}
    nodes: dict[str, PregelNode] = {}

    # START: the input becomes state writes
    in_keys = [k for k, v in builder.schemas[builder.input_schema].items() if not is_managed_value(v)]
    start = PregelNode(
        name=START,
        triggers=[START],
        channels=START,
        bound=NodeCallable(_identity, name=START),
        writers=[updates_writer(in_keys, root=in_keys == [ROOT], node_name=START, control=True)],
        tags=[TAG_HIDDEN],
        hidden=True,
    )
    nodes[START] = start

    for key, spec in builder.nodes.items():
        branch_channel = f"branch:to:{key}"
        channels[branch_channel] = (
            LastValueAfterFinish(Any, key=branch_channel)
            if spec.defer
            else EphemeralValue(Any, guard=False, key=branch_channel)
        )
        if spec.input_schema not in reads_of:
            reads_of[spec.input_schema] = _reads(builder, spec.input_schema)
            mapper_of[spec.input_schema] = schema_mapper(
                spec.input_schema, _keys(builder, spec.input_schema)
            )
        reads, managed = reads_of[spec.input_schema]
        policy = spec.retry_policy
        policies = (policy,) if isinstance(policy, RetryPolicy) else tuple(policy or ())
        node = PregelNode(
            name=key,
            triggers=[branch_channel],
            channels=reads,
            bound=NodeCallable(spec.action, name=key),
            writers=[
                updates_writer(
                    all_output_keys,
                    root=all_output_keys == [ROOT],
                    node_name=key,
                    control=True,
                    key_set=all_output_key_set,
                )
            ],
            mapper=mapper_of[spec.input_schema],
            metadata=spec.metadata,
            retry_policy=policies,
        )
        node.managed = managed
        if spec.input_schema not in reads_all_of:
            reads_all_of[spec.input_schema] = reads != ROOT and set(reads) >= set(state_keys) and not managed
        node.reads_all_state = reads_all_of[spec.input_schema]
        node.ends = spec.ends
        node.defer = spec.defer
        node.trace_policy = getattr(spec, "trace_policy", None)
        node.cache_policy = spec.cache_policy
        node.error_handler = spec.error_handler
        node.is_error_handler = spec.is_error_handler
        if spec.timeout is not None:
            check_timeout_supported(node)
            node.timeout = spec.timeout
        # the graph a node's code invokes is found now, as LangGraph finds it when it
        # compiles: one assigned later (a global or closure variable set after this
        # compile, as open_deep_research's researcher graph) is not the node's subgraph
        node.subgraphs = node.subgraphs
        nodes[key] = node

    for source, end in sorted(builder.edges):
        if end != END:
            nodes[source].static_writes.append((f"branch:to:{end}", None))

    for starts, end in sorted(builder.waiting_edges):
        if end == END:
            continue
        chan = f"join:{'+'.join(starts)}:{end}"
        barrier = NamedBarrierValueAfterFinish if builder.nodes[end].defer else NamedBarrierValue
        channels[chan] = barrier(str, set(starts), key=chan)
        nodes[end].triggers.append(chan)
        for s in starts:
            nodes[s].static_writes.append((chan, s))

    for source, branches in builder.branches.items():
        # traced, a path function's run is step N of its node's sequence, numbered as
        # LangGraph's writers: the node (START has none), its update, one per edge and
        # join leaving it
        step = (2 if source == START else 3) + sum(1 for s, e in builder.edges if s == source and e != END) + sum(
            1 for starts, e in builder.waiting_edges if source in starts and e != END)
        for offset, branch in enumerate(branches.values()):
            writer = _branch_writer(builder, source, branch)
            writer.trace_step = step + offset  # type: ignore[attr-defined]
            nodes[source].writers.append(writer)
            if branch.is_async:
                nodes[source].async_writers = True

    graph: CompiledStateGraph[Any, Any, Any, Any] = CompiledStateGraph(
        nodes=nodes,
        channels=channels,
        input_channels=START,
        output_channels=output_channels,
        stream_channels=stream_channels,
        state_keys=state_keys,
        checkpointer=checkpointer,
        interrupt_before_nodes=interrupt_before,
        interrupt_after_nodes=interrupt_after,
        stream_mode="updates",
        name=name,
        debug=debug,
        context_schema=builder.context_schema,
        store=store,
    )
    graph.cache = cache
    graph.attach_builder(builder)
    if output_channels != ROOT:
        graph.output_mapper = schema_mapper(builder.output_schema, list(output_channels))
    return graph


def _branch_writer(builder: StateGraph[Any, Any, Any, Any], source: str, branch: Branch) -> Callable[[Task, Any], Any]:
    """A writer that routes by `branch.path` on the state as this task left it."""
    if branch.input_schema is not None:
        schema = branch.input_schema
    elif source in builder.nodes:
        schema = builder.nodes[source].input_schema
    else:
        schema = builder.state_schema
    reads, managed = _reads(builder, schema)
    mapper = schema_mapper(schema, _keys(builder, schema))
    passthrough = branch.input_schema is None
    wanted = frozenset(reads) if isinstance(reads, list) else frozenset()
    # a wide state is read as a reused snapshot (`EdgeView`), not copied every step
    shareable = isinstance(reads, list) and not managed and mapper is None

    def read(task: Task, output: Any) -> Any:
        ctx = TASK_CTX.get() or current_task()  # (raises outside a task)
        loop = ctx.loop
        if shareable and len(loop.state) >= loop.views.share_from and len(loop.tasks) == 1:
            return ctx, _shared_read(loop, read, task, output if passthrough else None,
                                     reads, wanted)  # type: ignore[arg-type]
        value = fresh_read(loop, task, reads, managed, wanted)
        if passthrough and isinstance(value, dict) and isinstance(output, dict):
            value = {**output, **value}
        if mapper is not None and isinstance(value, dict):
            value = mapper(value)
        return ctx, value

    if branch.is_async:

        async def awriter(task: Task, output: Any) -> Any:
            ctx, value = read(task, output)
            return branch.writes(await branch.call.acall(value, ctx))

        def writer(task: Task, output: Any) -> Any:
            return awriter(task, output)

        writer.is_async = True  # type: ignore[attr-defined]

    else:

        def writer(task: Task, output: Any) -> Any:
            ctx, value = read(task, output)
            return branch.writes(branch.call.call(value, ctx))

    # a traced task runs the three parts itself, the path function as a chain run
    writer.route = (read, branch)  # type: ignore[attr-defined]
    return writer


def fresh_read(loop: Any, task: Task, reads: list[str] | str, managed: dict[str, Any],
               wanted: frozenset[str] | None = None) -> Any:
    """The state with this task's own writes applied (what a conditional edge sees).
    `wanted`: `reads` as a set, when the caller keeps one."""
    if isinstance(reads, str):
        ch = loop.channels[reads]
        vals = [v for c, v in task.writes if c == reads]
        if vals:
            ch = ch.copy()
            ch.update(vals)
        return ch.get() if ch.is_available() else None
    value = _with_writes(loop.state, reads, _written(loop, task, set(reads) if wanted is None else wanted))
    for k, mv in managed.items():
        value[k] = mv.get(Scratchpad(loop.step, loop.stop))
    return value


def _written(loop: Any, task: Task, wanted: frozenset[str] | set[str]) -> dict[str, Any]:
    """Each channel in `wanted` this task wrote: its value after the writes (MISSING if
    it has none then), the channel itself left as it is."""
    written: dict[str, list[Any]] = {}
    for c, v in task.writes:
        if c in wanted:
            some = written.get(c)
            if some is None:
                written[c] = [v]
            else:
                some.append(v)
    if not written:
        return written
    channels = loop.channels
    after: dict[str, Any] = {}
    for c, vals in written.items():
        ch = channels[c]
        if type(ch) is MessagesChannel and len(vals) == 1:  # a node's new messages
            new = ch.value_after(vals[0])
            if new is not None:
                after[c] = new
                continue
        ch = ch.copy()
        ch.update(vals)
        after[c] = ch.get() if ch.is_available() else MISSING
    return after


def _with_writes(state: dict[str, Any], reads: list[str], written: dict[str, Any]) -> dict[str, Any]:
    """`reads` of `state` with `written` laid over, in `reads` order (a key the writes set
    for the first time takes its place in it, as in LangGraph's fresh read)."""
    if all(c in state for c in written):  # the common case: the keys keep their places
        value = {k: state[k] for k in reads if k in state}
        for c, new in written.items():
            if new is MISSING:
                del value[c]
            else:
                value[c] = new
        return value
    value = {}
    for k in reads:
        if k in written:
            new = written[k]
            if new is not MISSING:
                value[k] = new
        elif k in state:
            value[k] = state[k]
    return value


def _shared_read(loop: Any, key: Any, task: Task, output: Any, reads: list[str],
                 wanted: frozenset[str]) -> dict[str, Any]:
    """`fresh_read` (and `{**output, **state}`, `output` a dict) for a wide state in a
    step of one task: the edge's `EdgeView` snapshot, brought up to date in O(keys
    changed) when it can be reused, else built in full and kept."""
    view = loop.edge_views.get(key)
    if view is None:
        view = loop.edge_views[key] = EdgeView(wanted)
    out_keys = tuple(output) if isinstance(output, dict) else None
    # (one task per step: two tasks of one node could run this edge in two threads at once)
    written = _written(loop, task, wanted)
    state = loop.state
    snap = view.reusable(state, out_keys)
    if snap is not None and all(c in snap and new is not MISSING for c, new in written.items()):
        for c, new in written.items():
            _SET(snap, c, new)
        # the state takes these after the step (and keeps the old ones if the step fails)
        view.stale.update(written)
        if out_keys:
            for k in out_keys:  # the output's keys the state does not give: the output's values
                if k not in wanted or (k not in state and k not in written):
                    _SET(snap, k, output[k])
        return snap
    value = _with_writes(state, reads, written)
    if out_keys is not None:
        value = {**output, **value}
    return view.keep(value, out_keys, written)

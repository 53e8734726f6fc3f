"""A graph built with LangGraph's own `StateGraph`, rebuilt as an lgnb graph.

Libraries build their agents with LangGraph's classes: `langgraph.prebuilt`'s
`create_react_agent`, LangChain 1.x's `create_agent`. Run as it is, such a graph runs on
LangGraph's engine; added as a node of an lgnb graph it would be one opaque step (its
inner steps neither streamed as a subgraph nor checkpointed by the parent's saver).
`from_langgraph` rebuilds it from its builder with lgnb's `StateGraph`: the library's own
node functions (a `ToolNode` included), edges, waiting edges, conditional edges, schemas,
per-node policies and the compile options. LangGraph's `add_messages`, managed values and
`Send` / `Command` objects are taken as lgnb's (`lgnb.graph._schema`,
`lgnb._internal.foreign`), so the rebuilt graph behaves as LangGraph runs the original.

Detection is by module and class name: nothing here imports `langgraph`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ("from_langgraph", "is_langgraph_graph")

_STATE = "langgraph.graph.state"


def is_langgraph_graph(value: Any) -> bool:
    """True for a `StateGraph` or `CompiledStateGraph` made by LangGraph itself."""
    cls = type(value)
    return any(
        k.__module__ == _STATE and k.__name__ in ("StateGraph", "CompiledStateGraph")
        for k in cls.__mro__
    )


def from_langgraph(graph: Any) -> Any:
    """The lgnb equivalent of a graph LangGraph built.

    A LangGraph `CompiledStateGraph` (what `create_react_agent` and `create_agent`
    return) becomes an lgnb `CompiledStateGraph`, compiled with the same checkpointer,
    store, cache, breakpoints, name and debug flag; a LangGraph `StateGraph` builder
    becomes an lgnb `StateGraph` to compile yourself. An lgnb graph (what `lgnb.prebuilt`'s
    factory returns) is returned as it is. Any other value is a `TypeError`.
    """
    if _is_lgnb_graph(graph):
        return graph  # (already lgnb's: a factory ported by its import, `lgnb.prebuilt`)
    if not is_langgraph_graph(graph):
        raise TypeError(
            f"from_langgraph() takes a graph built with LangGraph's StateGraph (its builder or "
            f"its compiled graph); got {type(graph).__name__}."
        )
    builder = getattr(graph, "builder", None)
    if builder is None:
        return _rebuild(graph)
    if not is_langgraph_graph(builder):
        raise TypeError(
            f"from_langgraph(): the compiled graph {getattr(graph, 'name', '')!r} was not "
            f"built by a StateGraph (its builder is a {type(builder).__name__}), so it cannot "
            "be rebuilt; run it with LangGraph, or build it with lgnb.graph.StateGraph."
        )
    compiled = _rebuild(builder).compile(
        checkpointer=graph.checkpointer,
        store=graph.store,
        cache=graph.cache,
        interrupt_before=_breakpoints(graph.interrupt_before_nodes),
        interrupt_after=_breakpoints(graph.interrupt_after_nodes),
        debug=graph.debug,
        name=graph.name,
        # create_agent registers its stream transformers (tool calls, middleware's) here
        transformers=tuple(getattr(graph, "stream_transformers", ()) or ()) or None,
    )
    if getattr(graph, "step_timeout", None):
        compiled.step_timeout = graph.step_timeout
    config = getattr(graph, "config", None)  # `with_config` (create_agent sets a recursion limit)
    return compiled.with_config(config) if config else compiled


def _is_lgnb_graph(graph: Any) -> bool:
    from lgnb.graph.state import StateGraph
    from lgnb.pregel.main import Pregel

    return isinstance(graph, (Pregel, StateGraph))


def _breakpoints(nodes: Any) -> Any:
    return nodes if nodes == "*" else list(nodes or ())


def _rebuild(builder: Any) -> Any:
    from lgnb._internal.callable import CompiledGraphBase
    from lgnb._internal.foreign_node import bridged
    from lgnb.graph._branch import Branch
    from lgnb.graph.state import StateGraph, _handler_spec

    ours = StateGraph(
        builder.state_schema,
        builder.context_schema,
        input_schema=builder.input_schema,
        output_schema=builder.output_schema,
    )
    for schema in builder.schemas:
        ours._add_schema(schema)
    for name, spec in builder.nodes.items():
        if getattr(spec, "is_error_handler", False):
            ours.nodes[name] = _handler_spec(bridged(spec.runnable, name=name), spec.input_schema)
            continue
        action = spec.runnable
        if is_langgraph_graph(action):
            action = from_langgraph(action)
        elif not isinstance(action, CompiledGraphBase):
            # (an lgnb graph the library was handed, such as the user's graph given to
            # `create_reflection_graph`, is added as it is: a subgraph, async if need be)
            action = bridged(action, name=name)
        ours.add_node(
            name,
            action,
            defer=spec.defer,
            metadata=spec.metadata,
            input_schema=spec.input_schema,
            retry_policy=_retry(spec.retry_policy),
            destinations=spec.ends or None,
            timeout=_timeout(getattr(spec, "timeout", None)),
            cache_policy=_cache(spec.cache_policy),
            trace_policy=_trace(getattr(spec, "trace_policy", None)),
        )
        ours.nodes[name].error_handler = getattr(spec, "error_handler_node", None)
    defaults = getattr(builder, "_node_defaults", None)
    if defaults is not None and not builder.compiled:  # (compiling applies them to the nodes)
        handler = getattr(defaults, "error_handler", None)
        ours.set_node_defaults(
            retry_policy=_retry(defaults.retry_policy),
            cache_policy=_cache(defaults.cache_policy),
            error_handler=None if handler is None else bridged(handler, name="error_handler"),
            timeout=_timeout(defaults.timeout),
        )
    for start, end in builder.edges:
        ours.add_edge(start, end)
    for starts, end in builder.waiting_edges:
        ours.add_edge(list(starts), end)
    for source, branches in builder.branches.items():
        for name, spec in branches.items():  # under LangGraph's names (drawings, errors)
            branch = Branch(spec.path, spec.ends, name=name)
            ours.branches[source][name] = branch
            if branch.input_schema is not None:
                ours._add_schema(branch.input_schema)
    return ours


def _retry(policy: Any) -> Any:
    from lgnb.types import RetryPolicy

    if policy is None:
        return None
    if isinstance(policy, (list, tuple)) and not hasattr(policy, "_asdict"):
        return [_retry(p) for p in policy]
    return RetryPolicy(**policy._asdict())


def _fields(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _timeout(policy: Any) -> Any:
    from lgnb.types import TimeoutPolicy

    return None if policy is None else TimeoutPolicy(**_fields(policy))


def _cache(policy: Any) -> Any:
    from lgnb.types import CachePolicy

    return None if policy is None else CachePolicy(**_fields(policy))


def _trace(policy: Any) -> Any:
    from lgnb.types import TracePolicy

    return None if policy is None else TracePolicy(**_fields(policy))

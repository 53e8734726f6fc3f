"""`Pregel`: a compiled graph and its public API (invoke, stream, state, drawing).

The methods here are thin: they resolve options, build a `RunContext` and a `Loop`, and
hand them to a driver. Sync and async entry points share everything but the driver.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from lgnb._internal.callable import CompiledGraphBase
from lgnb._internal.constants import CONF, CONFIG_KEY_DURABILITY, INTERRUPT, NS_SEP
from lgnb._internal.context import TASK_CTX, TaskContext
from lgnb._internal.runnable_compat import register_when_loaded, runnable_attribute
from lgnb.channels.base import BaseChannel
from lgnb.pregel._builder import NodeBuilder
from lgnb.pregel._delta import hydrating
from lgnb.pregel._driver import adrive, drive, exit_error, run_to_end
from lgnb.pregel._invoke import Collector
from lgnb.pregel._lease import check_multitask, leased
from lgnb.pregel._live import (
    aclose_driver,
    drain,
    ensure_future,
    install_async_wakeup,
    wait_either,
)
from lgnb.pregel._loop import Loop
from lgnb.pregel._node import PregelNode
from lgnb.pregel._options import (
    CONFIG_KEYS,
    DEFAULT_RECURSION_LIMIT,
    add_handlers,
    coerce_context,
    config_inside_node,
    lift_config_keys,
    merge_callbacks,
    nested_resuming,
    recast_ns,
    saver_config,
)
from lgnb.pregel._program import Program, aanswer, answer
from lgnb.pregel._replay import LoadPlan, loading, plan_load, superseding
from lgnb.pregel._run import RunContext, StreamSink
from lgnb.pregel._stream import make_formatter
from lgnb.runtime import RunControl
from lgnb.types import (
    All,
    Checkpointer,
    Durability,
    GraphOutput,
    MultitaskStrategy,
    RetryPolicy,
    StateSnapshot,
    StreamMode,
)

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.cache.base import BaseCache
    from langgraph.store.base import BaseStore

    from lgnb.types import CachePolicy

_NO_CACHE = "This graph has no cache to clear: compile it with one, e.g. builder.compile(cache=InMemoryCache())"

#: `multitask=`: what a run does when another holds its thread (see `lgnb.pregel._lease`)

__all__ = ("Pregel",)



_VALID_MODES = frozenset(
    {"values", "updates", "checkpoints", "tasks", "debug", "messages", "custom", "tools",
     "pregel",  # "pregel": lgnb only, the records of lgnb/pregel/records.py
     "lgnb:custom"}  # lgnb only: custom events naming their task (`_run.CUSTOM_WITH_TASK`)
)


class Pregel(CompiledGraphBase):
    """A compiled graph: nodes reading and writing channels in super-steps.

    It is a LangChain `Runnable` (a virtual subclass, registered when LangChain's
    Runnable module loads — see `_internal/runnable_compat.py`), so `batch`, `|`,
    `astream_events` and LangChain callbacks work as with LangGraph's compiled graphs.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _OWN_ATTRIBUTES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return runnable_attribute(self, name)

    def __or__(self, other: Any) -> Any:
        return runnable_attribute(self, "__or__")(other)

    def __ror__(self, other: Any) -> Any:
        return runnable_attribute(self, "__ror__")(other)

    def __init__(
        self,
        *,
        nodes: Mapping[str, PregelNode | NodeBuilder],
        channels: dict[str, BaseChannel] | None,
        input_channels: str | Sequence[str],
        output_channels: str | Sequence[str],
        stream_channels: str | Sequence[str] | None = None,
        state_keys: Sequence[str] | None = None,
        checkpointer: Checkpointer = None,
        interrupt_before_nodes: All | Sequence[str] = (),
        interrupt_after_nodes: All | Sequence[str] = (),
        stream_mode: StreamMode = "values",
        name: str = "LangGraph",
        debug: bool | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] = (),
        cache_policy: CachePolicy | None = None,
        cache: BaseCache | None = None,
        context_schema: type[Any] | None = None,
        store: BaseStore | None = None,
        config: RunnableConfig | None = None,
        auto_validate: bool = True,
        stream_eager: bool = False,
        step_timeout: float | None = None,
        trigger_to_nodes: Any = None,
        **deprecated_kwargs: Any,
    ) -> None:
        """A graph of hand-built nodes over `channels` (StateGraph.compile builds one too).

        `nodes` maps names to `PregelNode`s or `NodeBuilder`s; `input_channels` receive
        the input, `output_channels` are read for the output, `stream_channels` (default:
        every channel) for `values`/`updates` streaming. `state_keys`: the channels whose
        values the loop mirrors for list-reading nodes (default: every channel).
        """
        from lgnb.pregel._assemble import assemble

        parts = assemble(
            nodes=nodes,
            channels=channels,
            input_channels=input_channels,
            output_channels=output_channels,
            stream_channels=stream_channels,
            state_keys=state_keys,
            interrupt_before_nodes=interrupt_before_nodes,
            interrupt_after_nodes=interrupt_after_nodes,
            context_schema=context_schema,
            retry_policy=retry_policy,
            checkpointer=checkpointer,
            validate=auto_validate,
            deprecated_kwargs=deprecated_kwargs,
        )
        self.nodes = parts.nodes
        self.channels = parts.channels
        self.input_channels = input_channels
        self.output_channels = output_channels
        self.stream_channels = parts.stream_channels
        self.checkpointer = checkpointer
        self.interrupt_before_nodes = interrupt_before_nodes
        self.interrupt_after_nodes = interrupt_after_nodes
        self.stream_mode = stream_mode
        self.stream_eager = stream_eager
        self.step_timeout = step_timeout
        self.name = name
        self.debug = bool(debug)
        self.retry_policy = parts.retry_policy
        self.cache_policy = cache_policy
        self.cache = cache
        self.context_schema = parts.context_schema
        self.store = store
        self.config = config
        self.state_keys = parts.state_keys
        # the state's managed values by key (RemainingSteps, ...): what a read of the
        # state through `configurable["__pregel_read"]` answers for them
        self.managed_values: dict[str, Any] = parts.managed
        self.output_mapper: Any = None
        # transformer factories every v3 run stream gets (`compile(transformers=...)`)
        self.stream_transformers: Sequence[Any] = ()
        self._index()

    def validate(self) -> Pregel:
        """Check that nodes, channels and interrupt names fit together (ValueError if not)."""
        from lgnb.pregel._assemble import validate_graph

        validate_graph(self)
        self._index()
        return self

    def _index(self) -> None:
        """Precompute what the loop looks up on every step."""
        from lgnb.channels.untracked_value import UntrackedValue

        self.state_key_set = frozenset(self.state_keys)
        t2n: dict[str, list[str]] = {}
        for name, node in self.nodes.items():
            for trigger in node.triggers:
                t2n.setdefault(trigger, []).append(name)
        self.trigger_to_nodes = t2n
        self.step_channels = frozenset(k for k, c in self.channels.items() if c.clears_each_step)
        self.finish_channels = [k for k, c in self.channels.items() if c.waits_for_finish]
        self.untracked_keys = frozenset(
            k for k, c in self.channels.items() if isinstance(c, UntrackedValue)
        )

    # ------------------------------------------------------------------ helpers
    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        return (name or self.name) + (suffix or "")

    @property
    def InputType(self) -> Any:  # noqa: N802 - LangChain's Runnable name
        """The type a single input channel accepts (None for a dict of channels)."""
        if isinstance(self.input_channels, str):
            channel = self.channels.get(self.input_channels)
            if isinstance(channel, BaseChannel):
                return channel.UpdateType
        return None

    @property
    def OutputType(self) -> Any:  # noqa: N802 - LangChain's Runnable name
        """The type a single output channel holds (None for a dict of channels)."""
        if isinstance(self.output_channels, str):
            channel = self.channels.get(self.output_channels)
            if isinstance(channel, BaseChannel):
                return channel.ValueType
        return None

    def get_input_schema(self, config: RunnableConfig | None = None) -> Any:
        """A pydantic model of the input: the input channel's type (`<name>Input` root
        model) or, for several input channels, one optional field per channel."""
        if isinstance(self.input_channels, str):
            return runnable_attribute(self, "get_input_schema")(config)
        keys = self.input_channels or list(self.channels)
        return _channels_model(self.get_name("Input"), self.channels, keys, "UpdateType")

    def get_output_schema(self, config: RunnableConfig | None = None) -> Any:
        """A pydantic model of the output: the output channel's type (`<name>Output` root
        model) or, for several output channels, one optional field per channel."""
        if isinstance(self.output_channels, str):
            return runnable_attribute(self, "get_output_schema")(config)
        return _channels_model(
            self.get_name("Output"), self.channels, self.output_channels, "ValueType"
        )

    def get_input_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """JSON schema of the graph's input (its `input_schema`)."""
        from lgnb.graph._jsonschema import graph_json_schema

        return graph_json_schema(self, "input")

    def get_output_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """JSON schema of the graph's output (its `output_schema`)."""
        from lgnb.graph._jsonschema import graph_json_schema

        return graph_json_schema(self, "output")

    def _cache_namespaces(self, nodes: Sequence[str] | None) -> list[tuple[str, ...]]:
        from lgnb.pregel._cache import node_namespace

        if self.cache is None:
            raise ValueError(
                "No cache is set for this graph. Cannot clear cache: compile it with "
                "`cache=InMemoryCache()` (from langgraph.cache.memory) or another cache."
            )
        names = nodes or list(self.nodes)
        return [node_namespace(n, self.nodes[n]) for n in names if n in self.nodes]

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Drop the cached writes of `nodes` (default: every node) from the graph's cache."""
        if self.cache is None:
            raise ValueError(_NO_CACHE)
        self.cache.clear(self._cache_namespaces(nodes))

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Async twin of `clear_cache`."""
        if self.cache is None:
            raise ValueError(_NO_CACHE)
        await self.cache.aclear(self._cache_namespaces(nodes))

    def config_schema(self, *, include: Sequence[str] | None = None) -> Any:
        """Deprecated: a pydantic model with `configurable` typed by `context_schema`."""
        from pydantic import create_model

        from lgnb.warnings import LangGraphDeprecatedSinceV10

        warnings.warn(
            "`config_schema` is deprecated. Use `get_context_jsonschema` for the relevant "
            "schema instead.",
            category=LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        fields = {"configurable": (self.context_schema, None)} if self.context_schema else {}
        return create_model(self.get_name("Config"), **fields)  # type: ignore[call-overload]

    def get_config_jsonschema(self, *, include: Sequence[str] | None = None) -> dict[str, Any]:
        """Deprecated: the JSON schema of `config_schema()`."""
        from lgnb.warnings import LangGraphDeprecatedSinceV10

        warnings.warn(
            "`get_config_jsonschema` is deprecated. Use `get_context_jsonschema` instead.",
            category=LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
            return self.config_schema(include=include).model_json_schema()

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """JSON schema of the graph's `context_schema` (None when it has none)."""
        from lgnb.graph._jsonschema import context_json_schema

        return context_json_schema(self)

    def branch_channel(self, node: str) -> str:
        return f"branch:to:{node}"

    def map_input(self, input: Any) -> list[tuple[str, Any]]:
        """The writes that put `input` into the graph's input channel(s)."""
        if isinstance(self.input_channels, str):
            return [(self.input_channels, input)]
        if not isinstance(input, dict):
            raise TypeError(f"Expected input to be a dict, got {type(input).__name__}")
        return [(k, v) for k, v in input.items() if k in self.input_channels]

    def copy(self, update: dict[str, Any] | None = None) -> Pregel:
        """A shallow copy of this graph with the attributes in `update` replaced
        (e.g. `graph.copy({"name": "other"})`); the step lookups are rebuilt."""
        import copy

        clone = copy.copy(self)
        for key, value in (update or {}).items():
            setattr(clone, key, value)
        clone._index()
        return clone

    def with_config(self, config: RunnableConfig | None = None, **kwargs: Any) -> Pregel:
        """A copy of this graph with default config values (e.g. `recursion_limit`)."""
        import copy

        clone = copy.copy(self)
        merged: dict[str, Any] = dict(self.config or {})
        for k, v in [*(config or {}).items(), *kwargs.items()]:
            # as LangGraph's merge_configs: a chained `with_config(configurable=...)`
            # adds to the keys given before, tags accumulate
            if k in ("configurable", "metadata") and isinstance(v, dict) and merged.get(k):
                merged[k] = {**merged[k], **v}
            elif k == "tags" and v and merged.get(k):
                merged[k] = [*merged[k], *v]
            else:
                merged[k] = v
        clone.config = cast("RunnableConfig", merged)
        return clone

    def _merged_config(self, config: Mapping[str, Any] | None, *, defaults: bool = True) -> dict[str, Any]:
        # a None value is "not given" (LangGraph's ensure_config): `recursion_limit=None`
        # keeps the graph's or the default limit. `defaults=False`: `config` already holds
        # this graph's `with_config` values (a graph invoked inside a node)
        merged: dict[str, Any] = {k: v for k, v in (self.config or {}).items()
                                  if v is not None} if defaults else {}
        if config:
            for k, v in config.items():
                if v is None:
                    continue
                if k in ("configurable", "metadata") and isinstance(v, dict):
                    merged[k] = {**merged.get(k, {}), **v}
                elif k == "tags":
                    merged[k] = list(merged.get(k, [])) + list(v)
                elif k == "callbacks":  # `with_config(callbacks=...)` and the call's: both
                    merged[k] = merge_callbacks(merged.get(k), v)
                else:
                    merged[k] = v
        merged = lift_config_keys(merged)  # `{"thread_id": "1"}` is a configurable value
        if merged.get("recursion_limit", DEFAULT_RECURSION_LIMIT) < 1:
            raise ValueError("recursion_limit must be at least 1")
        return merged

    def _resolve_checkpointer(self, config: dict[str, Any], parent: TaskContext | None = None) -> Any:
        """The saver of a run: none for `checkpointer=False`; inside a node (not on a
        thread of its own) the caller's; else the graph's own."""
        if self.checkpointer is False:
            return None
        if parent is not None:
            # as LangGraph: a graph invoked in a node keeps its state in the caller's saver
            # (none if the caller has none), even when compiled with a saver of its own;
            # that one serves the runs it makes on a thread of its own
            return parent.loop.checkpointer
        if self.checkpointer is True:
            raise RuntimeError(
                "checkpointer=True cannot be used for root graphs: it makes a subgraph "
                "keep its state in its parent's checkpointer. Compile the graph you "
                "invoke directly with a saver, e.g. `compile(checkpointer=InMemorySaver())`."
            )
        return self.checkpointer

    def _load_plan(self, loop_kwargs: dict[str, Any], config: dict[str, Any]) -> LoadPlan:
        parent = loop_kwargs["parent_ctx"]
        if parent is None:
            return LoadPlan("latest", saver_config(config))
        return plan_load(config, loop_kwargs["ns"], parent.loop.replay)

    def _opening(self, run: RunContext, loop_kwargs: dict[str, Any], config: dict[str, Any]) -> Program[Loop]:
        """The run's loop, started from the checkpoint it continues (if any); a root run
        with `multitask=` takes its thread's lease first (`_lease`)."""
        if run.multitask is not None and loop_kwargs["checkpointer"] is not None:
            return (yield from leased(self._loading(run, loop_kwargs, config), run, config))
        return (yield from self._loading(run, loop_kwargs, config))

    def _loading(self, run: RunContext, loop_kwargs: dict[str, Any], config: dict[str, Any]) -> Program[Loop]:
        checkpointer = loop_kwargs["checkpointer"]
        if checkpointer is None:
            return Loop(self, run, saved=None, **loop_kwargs)
        plan = self._load_plan(loop_kwargs, config)
        saved = yield from hydrating(checkpointer, (yield from loading(checkpointer, plan)), self.channels)
        loop = Loop(self, run, saved=saved, **loop_kwargs)
        if loop.addressed and plan.how == "latest":
            loop.superseded = yield from superseding(checkpointer, plan.config, saved)
        return self._replayed(loop, plan)

    @staticmethod
    def _replayed(loop: Loop, plan: LoadPlan) -> Loop:
        """A graph invoked inside a node of a replaying (or addressed) run time-travels."""
        if plan.how == "before":
            loop.time_travel = True
            loop.run.resuming = False  # its input runs afresh from the earlier state
        elif plan.how == "exact" and loop.has_saved:
            loop.time_travel = True
        return loop

    def _prepare(
        self,
        given_config: RunnableConfig | None,
        *,
        context: Any,
        stream_mode: Any,
        print_mode: Any,
        output_keys: Any,
        interrupt_before: Any,
        interrupt_after: Any,
        durability: Any,
        subgraphs: bool,
        debug: bool | None,
        control: Any = None,
        version_v2: bool = False,
        multitask: Any = None,
    ) -> tuple[dict[str, Any], RunContext, dict[str, Any], Any]:
        # a RunnableConfig is a plain dict at run time; from here on it is handled as one
        config = cast("dict[str, Any] | None", given_config)
        parent = caller = TASK_CTX.get()
        ambient, in_langgraph = _ambient_config(caller)
        if ambient is not None:
            # invoked from a task of a graph LangGraph runs (its node, or code its node
            # calls, inside any lgnb task around it), or from a LangChain runnable (a
            # chain, a tool) outside any graph: its config is the ambient one, under the
            # call's, as LangGraph's `ensure_config` takes it
            parent = caller = None
            config = _under_ambient(ambient, config, configurable=not in_langgraph
                                    or self.checkpointer in (None, False))
        elif parent is not None and _own_lineage(parent, given_config, defaults=self.config):
            parent = None  # a child given its own thread or checkpoint runs as a root graph
        if parent is not None:
            config = config_inside_node(parent, given_config, defaults=self.config)
            config[CONF]["checkpoint_ns"] = parent.next_subgraph_ns()
        config = self._merged_config(config, defaults=parent is None)
        if parent is None and caller is not None:
            config = _under_caller(caller, config)
        if stream_mode is None:
            stream_mode = self.stream_mode
        modes = {stream_mode} if isinstance(stream_mode, str) else set(stream_mode)
        prints = {print_mode} if isinstance(print_mode, str) else set(print_mode or ())
        if debug if debug is not None else self.debug:
            prints.update(("updates", "values"))
        unknown = (modes | prints) - _VALID_MODES
        if unknown:
            raise ValueError(
                f"Unknown stream_mode {sorted(unknown)}: use one or more of "
                f"{sorted(_VALID_MODES)}."
            )
        all_modes = frozenset(modes | prints)
        from lgnb.graph._allowlist import saver_for

        checkpointer = self._resolve_checkpointer(config, parent)
        given = dict(config.get(CONF) or {})
        if parent is None:
            config = _root_config(config)
        elif self.checkpointer is True:
            # one state per thread: the namespace without the run's task ids
            config[CONF]["checkpoint_ns"] = recast_ns(config[CONF]["checkpoint_ns"])
        if checkpointer is not None and not config.get(CONF):
            raise ValueError(
                "Checkpointer requires one or more of the following 'configurable' keys: "
                "thread_id, checkpoint_ns, checkpoint_id"
            )
        callbacks = config.get("callbacks") or None
        if parent is not None and parent.loop.run.callbacks:
            # the caller's handlers and those given on top, as LangGraph merges them (a
            # traced caller's node run carries the caller's: `_trace._graph_manager` adds
            # the others)
            callbacks = merge_callbacks(parent.loop.run.callbacks, callbacks)
        sink = StreamSink()
        own_context, store = coerce_context(self.context_schema, context), self.store
        if parent is not None:  # a graph invoked inside a node: the caller's context unless
            # given, and always the caller's store (LangGraph's runtime merge)
            own_context = own_context or parent.loop.run.context
            store = parent.loop.run.store
        run = RunContext(
            sink=sink,
            modes=all_modes,
            subgraphs=subgraphs,
            config=config,
            context=own_context,
            store=store,
            callbacks=callbacks,
            checkpointer=checkpointer,
        )
        if parent is None:
            run.address = given
        # one control per call, shared with the graphs it runs (subgraphs, nested invokes)
        if control is None:
            control = parent.loop.run.control if parent is not None else None
        run.control = control if control is not None else RunControl()
        if parent is None:  # only a root run takes its thread (`_lease`); subgraphs share it
            run.multitask = check_multitask(multitask)
        parent_ns = tuple(config[CONF]["checkpoint_ns"].split("|")) if parent is not None else ()
        if "messages" in all_modes:
            from lgnb.pregel._messages import (
                StreamMessagesHandler,
                StreamMessagesHandlerV2,
                without_v2_handlers,
            )
            from lgnb.pregel._run_stream import STREAM_MESSAGES_V2

            # a v2 stream whose config asks for content-block events: a v3 run's, or one
            # in its node sharing its config (the flag comes with the node's `configurable`)
            messages_v2 = version_v2 and bool((config.get(CONF) or {}).get(STREAM_MESSAGES_V2))
            handler_cls = StreamMessagesHandlerV2 if messages_v2 else StreamMessagesHandler
            if not version_v2:  # as LangGraph, a v2 stream keeps inherited ones
                callbacks = without_v2_handlers(callbacks)
            handler = handler_cls(sink, subgraphs=subgraphs, parent_ns=parent_ns)
            run.messages_handler = handler
            run.node_messages = (handler,)
            run.callbacks = add_handlers(callbacks, [handler])
        if "tools" in all_modes:
            from lgnb.pregel._tools import StreamToolCallHandler

            tools_handler = StreamToolCallHandler(sink, subgraphs=subgraphs, parent_ns=parent_ns)
            run.callbacks = add_handlers(run.callbacks, [tools_handler])
        if parent is not None:
            run.parent = parent.loop.run
            run.tracing = parent.loop.run.tracing or run.tracing
            if run.callbacks is None and parent.loop.run.callbacks:
                run.callbacks = parent.loop.run.callbacks
            if inherited := parent.loop.run.node_messages:
                # the caller's `messages` streams see this graph's nodes too (the messages
                # they return), as LangGraph's inherited callbacks do; a v1 `messages`
                # stream of its own dropped content-block handlers (`without_v2_handlers`)
                if run.node_messages and not version_v2:
                    from lgnb.pregel._messages import StreamMessagesHandlerV2

                    inherited = tuple(h for h in inherited
                                      if not isinstance(h, StreamMessagesHandlerV2))
                run.node_messages += inherited
            if checkpointer is None and self.checkpointer is not False:
                checkpointer = parent.loop.checkpointer
                run.checkpointer = checkpointer
        elif caller is not None and caller.loop.run.callbacks:
            # a root run inside a node (its own thread) reports to the caller's callbacks
            # (its stream), as LangGraph's inherits them, less the handlers of streams
            # without `subgraphs`; callbacks it is given and its own `messages` / `tools`
            # stream (a `.stream()` in the node) come on top: tokens reach every stream
            from lgnb.pregel._messages import without_own_graph_handlers, without_v2_handlers

            inherited = without_own_graph_handlers(caller.loop.run.callbacks) or None
            inherited_nodes = tuple(h for h in caller.loop.run.node_messages if h.subgraphs)
            if run.node_messages and not version_v2:  # a v1 `messages` stream of its own
                from lgnb.pregel._messages import StreamMessagesHandlerV2

                inherited = without_v2_handlers(inherited)
                inherited_nodes = tuple(h for h in inherited_nodes
                                        if not isinstance(h, StreamMessagesHandlerV2))
            run.callbacks = merge_callbacks(inherited, run.callbacks) or None
            run.node_messages += inherited_nodes
            if caller.node_run is not None:  # its graph run nests under the traced node's
                run.caller_run = caller.node_run
                run.tracing = True
        if durability is not None and checkpointer is None:
            warnings.warn("`durability` has no effect when no checkpointer is present.", stacklevel=3)
        if durability is not None:
            # as LangGraph: nodes (and graphs they invoke) see the mode the caller chose
            config[CONF] = {**(config.get(CONF) or {}), CONFIG_KEY_DURABILITY: durability}
        else:
            durability = (config.get(CONF) or {}).get(CONFIG_KEY_DURABILITY) or (
                parent.loop.durability if parent is not None else "async"
            )
        if output_keys is not None and output_keys is not self.output_channels:  # (the caller's own)
            _check_output_keys(output_keys, self.channels)
        loop_kwargs = {
            "config": config,
            "checkpointer": saver_for(checkpointer, self),
            "durability": durability,
            "ns": "",
            "interrupt_before": interrupt_before or self.interrupt_before_nodes,
            "interrupt_after": interrupt_after or self.interrupt_after_nodes,
            "output_keys": output_keys if output_keys is not None else self.stream_channels,
            "recursion_limit": config.get("recursion_limit", DEFAULT_RECURSION_LIMIT),
            "is_nested": parent is not None,
            "run_root": True,
            "parent_ctx": parent,
        }
        if parent is not None:
            loop_kwargs["ns"] = config[CONF]["checkpoint_ns"]
            run.resuming = parent.loop.is_resuming
        elif checkpointer is None and (lg_ns := langgraph_task_ns(given)):
            # invoked by a task of a graph LangGraph runs: its steps run under that task's
            # namespace, as a LangGraph subgraph's do (node metadata, so LangGraph's
            # `messages` handler labels their tokens; commands for the parent), and its
            # events reach that run's stream when it asked for subgraphs
            loop_kwargs["ns"] = lg_ns
            stream = given.get("__pregel_stream")
            if stream is not None and hasattr(stream, "modes"):
                run.langgraph_stream = stream
        return config, run, loop_kwargs, (stream_mode, prints)

    def _open_stream(
        self, config: RunnableConfig | None, *, version: str, **options: Any
    ) -> tuple[dict[str, Any], RunContext, dict[str, Any], Any]:
        """What `stream` and `astream` share: options resolved, run context, formatter."""
        run_config, run, loop_kwargs, (stream_mode, prints) = self._prepare(
            config, version_v2=version == "v2", **options
        )
        fmt = make_formatter(
            stream_mode,
            subgraphs=options["subgraphs"],
            version=version,
            print_mode=sorted(prints),
            output_mapper=self.output_mapper if version == "v2" else None,
            state_mapper=self._state_mapper() if version == "v2" else None,
        )
        return run_config, run, loop_kwargs, fmt

    def _state_mapper(self) -> Any:
        """dict -> the builder's state type (pydantic / dataclass), or None for dicts."""
        builder = getattr(self, "builder", None)
        if builder is None:
            return None
        from lgnb.graph._schema import schema_mapper

        return schema_mapper(builder.state_schema, list(self.state_keys))

    # ------------------------------------------------------------------ stream
    def stream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: Literal["v1", "v2"] = "v1",
        control: RunControl | None = None,
        multitask: MultitaskStrategy | None = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Run the graph, yielding stream events as they happen (see `stream_mode`).

        `multitask` (lgnb only; default None, as LangGraph, which lets runs share a
        thread): with a checkpointer and a `thread_id`, the run first takes the thread's
        lease, so no other run (in this process or one sharing the saver's database)
        runs the thread at once; when it is taken, "reject" raises `ThreadBusyError`,
        "enqueue" waits for the holder to end, "interrupt" cancels the holder
        (`RunControl.request_cancel`). See `lgnb.pregel._lease`."""
        durability = _checkpoint_during(durability, kwargs, "stream")
        run_config, run, loop_kwargs, fmt = self._open_stream(
            config,
            context=context,
            stream_mode=stream_mode,
            print_mode=print_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
            debug=debug,
            version=version,
            control=control,
            multitask=multitask,
        )
        sink = run.sink
        assert sink is not None
        live = bool(run.modes & {"messages", "custom", "lgnb:custom"}) or subgraphs or self.stream_eager
        if live:
            sink.make_blocking()
        loop = answer(self._opening(run, loop_kwargs, run_config))
        items = sink.items
        resuming = (run.resuming and loop.has_saved) if loop.is_nested else None
        popleft = items.popleft
        only = getattr(fmt, "only_mode", None)
        try:
            for _ in drive(loop, input, resuming=resuming, live=sink if live else None):
                # `drain`, inline: this runs after every task, and per token when live
                if only is not None:
                    while items:
                        event = popleft()
                        if event[1] == only:
                            yield event[2]
                    continue
                while items:
                    ok, chunk = fmt(popleft())
                    if ok:
                        yield chunk
        except Exception:
            if "pregel" in run.modes:  # the records of the failing step (its error)
                yield from drain(items, fmt)
            raise
        yield from drain(items, fmt)
        self._check_exit(loop, run_config)

    async def astream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: Literal["v1", "v2"] = "v1",
        control: RunControl | None = None,
        multitask: MultitaskStrategy | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async twin of `stream`: async nodes run as tasks, sync nodes in threads."""
        durability = _checkpoint_during(durability, kwargs, "astream")
        run_config, run, loop_kwargs, fmt = self._open_stream(
            config,
            context=context,
            stream_mode=stream_mode,
            print_mode=print_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
            debug=debug,
            version=version,
            control=control,
            multitask=multitask,
        )
        if subgraphs and run.parent is not None:  # see `RunContext.keeps_subgraphs`
            run.keeps_subgraphs = True
        sink = run.sink
        assert sink is not None
        install_async_wakeup(sink)
        # live events (tokens, custom events, subgraphs) are handed over as they come;
        # others where the driver hands them over (each step's start, a task's end in a
        # parallel step), so a consumer that stops at a step's update finds that step
        # saved, as with LangGraph
        live = bool(run.modes & {"messages", "custom", "lgnb:custom"}) or subgraphs or self.stream_eager
        loop = await aanswer(self._opening(run, loop_kwargs, run_config))
        # live, the driver also stops after a lone task (LangGraph yields as each task
        # ends): it does not pass the step's barrier while the consumer holds its update
        loop.live = live
        items = sink.items
        resuming = (run.resuming and loop.has_saved) if loop.is_nested else None
        agen = adrive(loop, input, resuming=resuming)
        step: Any = None  # the step running in a task of its own (live)
        closed = False
        try:
            while True:
                if live:  # the step runs in a task of its own while its live events come
                    step = ensure_future(agen.__anext__())
                    while not step.done():
                        await wait_either(step, sink)
                        for chunk in drain(items, fmt):
                            yield chunk
                try:
                    if live:
                        step.result()
                    else:  # the step runs in this task: no pass of the event loop between steps
                        await agen.__anext__()
                except StopAsyncIteration:
                    # the finished step's exception holds this frame, which holds the
                    # step: let go of it (no reference cycle left to the cyclic GC)
                    step = None
                    break
                except Exception:
                    if "pregel" in run.modes:  # the records of the failing step (its error)
                        for chunk in drain(items, fmt):
                            yield chunk
                    raise
                for chunk in drain(items, fmt):
                    yield chunk
        except GeneratorExit:  # the consumer closed the stream (`aclose()`, `aclosing`)
            closed = True
            raise
        finally:
            await aclose_driver(agen, step, loop if closed else None)
        for chunk in drain(items, fmt):
            yield chunk
        self._check_exit(loop, run_config)

    def _check_exit(self, loop: Loop, config: dict[str, Any]) -> None:
        if (error := exit_error(loop, config)) is not None:
            raise error

    # ------------------------------------------------------------------ event streams
    def stream_events(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        version: Literal["v1", "v2", "v3"] = "v2",
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """`version="v3"`: a `GraphRunStream` (`lgnb.stream`) the caller drives by
        iterating its projections (`run.values`, `run.messages`, ...). Other versions are
        LangChain's `Runnable.stream_events`. Extra keyword arguments go to `stream`."""
        if version == "v3":
            from lgnb.pregel._run_stream import reject_owned_kwargs, run_stream

            reject_owned_kwargs(kwargs)
            return run_stream(self, input, config, transformers=transformers, **kwargs)
        return runnable_attribute(self, "stream_events")(input, config, version=version, **kwargs)

    def astream_events(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        version: Literal["v1", "v2", "v3"] = "v2",
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """`version="v3"`: an awaitable of an `AsyncGraphRunStream`; other versions are
        LangChain's `Runnable.astream_events` (an async iterator of event dicts)."""
        if version == "v3":
            from lgnb.pregel._run_stream import arun_stream, reject_owned_kwargs

            reject_owned_kwargs(kwargs)
            return arun_stream(self, input, config, transformers=transformers, **kwargs)
        return runnable_attribute(self, "astream_events")(input, config, version=version, **kwargs)

    # ------------------------------------------------------------------ invoke
    def invoke(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: StreamMode | Sequence[StreamMode] = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Any:
        """Run the graph to completion (or to an interrupt) and return its output."""
        durability = _checkpoint_during(durability, kwargs, "invoke")
        if output_keys is None:
            output_keys = self.output_channels
        # (a `stream_eager` graph, an `@entrypoint`'s, runs even a lone task in the pool,
        # as LangGraph's: its stream path does that)
        if (stream_mode == "values" and not print_mode and not kwargs.get("debug", self.debug)
                and not self.stream_eager):
            run_config, run, loop_kwargs = self._start_invoke(
                input, config, context, output_keys, interrupt_before, interrupt_after, durability, kwargs
            )
            loop = answer(self._opening(run, loop_kwargs, run_config))
            run_to_end(loop, input, resuming=nested_resuming(loop))
            self._check_exit(loop, loop.config)
            _check_not_paused_in_langgraph(self, loop, config)
            return self._invoke_result(loop, version)
        collector = Collector(stream_mode, version)
        for chunk in self.stream(
            input,
            config,
            context=context,
            stream_mode=collector.modes,
            print_mode=print_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            version=version,
            **kwargs,
        ):
            collector.add(chunk)
        return collector.result()

    async def ainvoke(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: StreamMode | Sequence[StreamMode] = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Any:
        """Async twin of `invoke`."""
        durability = _checkpoint_during(durability, kwargs, "ainvoke")
        if output_keys is None:
            output_keys = self.output_channels
        if stream_mode == "values" and not print_mode and not kwargs.get("debug", self.debug):
            run_config, run, loop_kwargs = self._start_invoke(
                input, config, context, output_keys, interrupt_before, interrupt_after, durability, kwargs
            )
            loop = await aanswer(self._opening(run, loop_kwargs, run_config))
            async for _ in adrive(loop, input, resuming=nested_resuming(loop)):
                pass
            self._check_exit(loop, loop.config)
            _check_not_paused_in_langgraph(self, loop, config)
            return self._invoke_result(loop, version)
        collector = Collector(stream_mode, version)
        async for chunk in self.astream(
            input,
            config,
            context=context,
            stream_mode=collector.modes,
            print_mode=print_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            version=version,
            **kwargs,
        ):
            collector.add(chunk)
        return collector.result()

    def _start_invoke(
        self,
        input: Any,
        config: RunnableConfig | None,
        context: Any,
        output_keys: Any,
        interrupt_before: Any,
        interrupt_after: Any,
        durability: Any,
        kwargs: dict[str, Any],
    ) -> tuple[dict[str, Any], RunContext, dict[str, Any]]:
        """What an `invoke` needs: no stream events are built, only the final state."""
        unknown = set(kwargs) - {"debug", "subgraphs", "control", "multitask"}
        if unknown:
            raise _unexpected_kwargs("invoke", unknown)
        run_config, run, loop_kwargs, _ = self._prepare(
            config,
            context=context,
            stream_mode=[],
            print_mode=(),
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=False,
            debug=False,
            control=kwargs.get("control"),
            multitask=kwargs.get("multitask"),
        )
        return run_config, run, loop_kwargs

    def _invoke_result(self, loop: Loop, version: str) -> Any:
        value = loop.output if loop.values_emitted else None
        interrupts = loop.interrupts_seen
        if version == "v2":
            if self.output_mapper is not None and isinstance(value, dict):
                value = self.output_mapper(value)
            elif interrupts and not isinstance(value, dict):
                # LangGraph's value is its last `values` part: the `__interrupt__` one,
                # the key taken out
                value = {}
            return GraphOutput(value=value, interrupts=tuple(interrupts))
        if interrupts:
            if isinstance(value, dict):
                return {**value, INTERRUPT: list(interrupts)}
            return {INTERRUPT: list(interrupts)}
        return value

    # ------------------------------------------------------------------ nesting
    def _run_as_subgraph(self, value: Any, ctx: TaskContext) -> Any:
        """Run this graph as a node of a parent graph; return its output state."""
        from lgnb.pregel._subgraph import run_as_subgraph

        return run_as_subgraph(self, value, ctx)

    async def _arun_as_subgraph(self, value: Any, ctx: TaskContext) -> Any:
        from lgnb.pregel._subgraph import arun_as_subgraph

        return await arun_as_subgraph(self, value, ctx)

    # ------------------------------------------------------------------ state & drawing
    def get_graph(self, config: RunnableConfig | None = None, *, xray: int | bool = False) -> Any:
        """The graph's structure as a `langchain_core.runnables.graph.Graph`."""
        from lgnb.graph._draw import draw_graph

        return draw_graph(self, xray=xray)

    async def aget_graph(self, config: RunnableConfig | None = None, *, xray: int | bool = False) -> Any:
        return self.get_graph(config, xray=xray)

    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state at its latest (or the addressed) checkpoint."""
        from lgnb.pregel._state import get_state

        return get_state(self, _plain(config), subgraphs=subgraphs)

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        from lgnb.pregel._state import aget_state

        return await aget_state(self, _plain(config), subgraphs=subgraphs)

    def get_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """The thread's checkpoints, newest first, as StateSnapshots."""
        from lgnb.pregel._state import get_state_history

        return get_state_history(self, _plain(config), filter=filter, before=cast("dict[str, Any] | None", before), limit=limit)

    async def aget_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        from lgnb.pregel._state import aget_state_history

        async for snap in aget_state_history(self, _plain(config), filter=filter, before=cast("dict[str, Any] | None", before), limit=limit):
            yield snap

    def update_state(
        self,
        config: RunnableConfig,
        values: Any,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> RunnableConfig:
        """Write `values` to the thread as if node `as_node` returned them (a new checkpoint)."""
        from lgnb.pregel._state import update_state

        return cast("RunnableConfig", update_state(self, _plain(config), values, as_node=as_node, task_id=task_id))

    def bulk_update_state(self, config: RunnableConfig, supersteps: Sequence[Sequence[Any]]) -> RunnableConfig:
        """Apply several supersteps of `StateUpdate(values, as_node, task_id)` at once."""
        from lgnb.pregel._state import bulk_update_state

        return cast("RunnableConfig", bulk_update_state(self, _plain(config), supersteps))

    async def abulk_update_state(
        self, config: RunnableConfig, supersteps: Sequence[Sequence[Any]]
    ) -> RunnableConfig:
        from lgnb.pregel._state import abulk_update_state

        return cast("RunnableConfig", await abulk_update_state(self, _plain(config), supersteps))

    def get_subgraphs(self, *, namespace: str | None = None, recurse: bool = False) -> Iterator[tuple[str, Pregel]]:
        """The compiled graphs used as (or invoked by) nodes: `(name, graph)`, nested names
        joined by `|`. With `namespace` (e.g. `parent|child`, no task ids), only the
        graph at exactly that namespace; a nested one needs `recurse=True`."""
        for name, node in self.nodes.items():
            if namespace is not None and namespace != name and not namespace.startswith(name + "|"):
                continue  # namespaces match by whole segments
            sub = node.subgraphs[0] if node.subgraphs else None
            if sub is None:
                continue
            if namespace == name:
                yield name, sub
                return
            if namespace is None:
                yield name, sub
            if recurse and (isinstance(sub, Pregel) or hasattr(sub, "get_subgraphs")):  # (a graph
                # LangGraph compiled lists its own, with the same arguments)
                rest = None if namespace is None else namespace[len(name) + 1 :]
                for sub_name, subsub in sub.get_subgraphs(namespace=rest, recurse=True):
                    yield f"{name}|{sub_name}", subsub

    async def aget_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> AsyncIterator[tuple[str, Pregel]]:
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item

    async def aupdate_state(
        self,
        config: RunnableConfig,
        values: Any,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> RunnableConfig:
        from lgnb.pregel._state import aupdate_state

        return cast("RunnableConfig", await aupdate_state(self, _plain(config), values, as_node=as_node, task_id=task_id))


def _plain(config: RunnableConfig) -> dict[str, Any]:
    """A RunnableConfig (a TypedDict) as the plain dict it is at run time, for the engine's
    helpers that take `dict[str, Any]`."""
    return cast("dict[str, Any]", config)


def _under_caller(caller: TaskContext, config: dict[str, Any]) -> dict[str, Any]:
    """A graph invoked in a node on a thread of its own still runs under the node's config,
    as LangGraph's `ensure_config` merges the ambient config under the graph's and the
    call's: the node's metadata (node metadata and checkpoints carry it), tags and
    recursion limit. (Its callbacks: `_prepare`; its `configurable`: the call's own.)"""
    ambient = caller.config
    out = dict(config)
    if metadata := ambient.get("metadata"):
        out["metadata"] = {**metadata, **(config.get("metadata") or {})}
    if tags := ambient.get("tags"):
        out["tags"] = [*tags, *[t for t in config.get("tags") or () if t not in tags]]
    if "recursion_limit" not in config and "recursion_limit" in ambient:
        out["recursion_limit"] = ambient["recursion_limit"]
    return out


def _own_lineage(parent: TaskContext, config: RunnableConfig | None, *,
                 defaults: Mapping[str, Any] | None = None) -> bool:
    """A config naming its own checkpoint coordinates (thread, namespace, checkpoint)
    addresses its own lineage; the node's own config passed through does not. The
    invoked graph's `with_config` (`defaults`) counts, under the call's config."""
    conf = {**((defaults or {}).get(CONF) or {}), **((config or {}).get(CONF) or {})}
    if not any(conf.get(k) for k in ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")):
        return False
    return conf.get("checkpoint_ns") != parent.task.ns


def _unexpected_kwargs(method: str, unknown: set[str]) -> TypeError:
    """LangGraph ignores unknown keywords (`invoke(x, recursion_limit=5)` runs with the
    default limit); lgnb refuses them, saying where a config key goes."""
    message = f"{method}() got unexpected keyword arguments: {sorted(unknown)}"
    config_keys = sorted(k for k in unknown if k in CONFIG_KEYS and k != CONF)
    configurable = sorted(k for k in unknown if k in ("thread_id", "checkpoint_id", "checkpoint_ns"))
    if config_keys:
        example = ", ".join(f"{k!r}: ..." for k in config_keys)
        what = "is a config key" if len(config_keys) == 1 else "are config keys"
        message += f"\n{', '.join(config_keys)} {what}: `{method}(input, {{{example}}})`."
    if configurable:
        example = ", ".join(f"{k!r}: ..." for k in configurable)
        message += (
            f"\n{', '.join(configurable)} belong(s) under the config's 'configurable': "
            f"`{method}(input, {{'configurable': {{{example}}}}})`."
        )
    return TypeError(message)


def _checkpoint_during(durability: Any, kwargs: dict[str, Any], method: str) -> Any:
    """The durability a call asked for, the deprecated `checkpoint_during=` included
    (`True` is "async", `False` is "exit"); any other unknown keyword is a TypeError."""
    checkpoint_during = kwargs.pop("checkpoint_during", None)
    unknown = set(kwargs) - {"debug", "subgraphs", "control", "multitask"} if method.endswith("invoke") else set(kwargs)
    if unknown:
        raise _unexpected_kwargs(method, unknown)
    if checkpoint_during is None:
        return durability
    from lgnb.warnings import LangGraphDeprecatedSinceV10

    warnings.warn(
        "`checkpoint_during` is deprecated and will be removed. Please use `durability` instead.",
        category=LangGraphDeprecatedSinceV10,
        stacklevel=3,
    )
    if durability is not None:
        raise ValueError(
            "Cannot use both `checkpoint_during` and `durability` parameters. "
            "Please use `durability` instead."
        )
    return "async" if checkpoint_during else "exit"


def _channels_model(
    name: str, channels: dict[str, BaseChannel], keys: Sequence[str], attr: str
) -> Any:
    """A pydantic model named `name` with one field per channel in `keys`, typed by the
    channel's `attr` (`UpdateType` for input, `ValueType` for output), defaulting to None."""
    from pydantic import create_model

    fields = {
        k: (getattr(channels[k], attr), None)
        for k in keys
        if isinstance(channels.get(k), BaseChannel)
    }
    return create_model(name, **fields)  # type: ignore[call-overload]


def _ambient_config(caller: TaskContext | None) -> tuple[dict[str, Any] | None, bool]:
    """LangChain's ambient config, when this call should run under it, and whether it is a
    LangGraph task's: a LangGraph task's (LangGraph sets it for each task it runs) nearer
    than `caller`, the lgnb task around this call if any (its namespace then extends the
    caller's); with no lgnb task around, any (a chain's or a tool's run). Else None: inside
    an lgnb task the task's config serves (`config_inside_node`)."""
    lc = sys.modules.get("langchain_core.runnables.config")
    config = lc.var_child_runnable_config.get() if lc is not None else None
    if type(config) is not dict:  # (lgnb's own task configs are `LazyConfig`s)
        return None, False
    conf = config.get(CONF)
    lg_ns = langgraph_task_ns(conf) if type(conf) is dict else None
    if caller is None:
        return config, lg_ns is not None
    if lg_ns is not None and lg_ns.startswith(caller.task.ns + NS_SEP):
        return config, True
    return None, False


def _under_ambient(ambient: dict[str, Any], config: dict[str, Any] | None, *,
                   configurable: bool) -> dict[str, Any]:
    """`config` over the ambient LangGraph task config, as LangGraph's `ensure_config`
    merges them: each key the call gives replaces the ambient one. The ambient
    `configurable` (the task's thread, namespace and hooks) only for a graph without a
    saver of its own: one with its own saver runs on the thread its call names."""
    out = {k: v for k, v in ambient.items()
           if v is not None and k not in ("run_id", "run_name") and (configurable or k != CONF)}
    for k, v in (config or {}).items():
        if v is not None:
            out[k] = v
    return out


def langgraph_task_ns(conf: dict[str, Any]) -> str | None:
    """The namespace of the LangGraph task whose `configurable` this is (it carries
    LangGraph's scratchpad), else None."""
    pad = conf.get("__pregel_scratchpad")
    if pad is None or not type(pad).__module__.startswith("langgraph"):
        return None
    ns = conf.get("checkpoint_ns")
    return ns if isinstance(ns, str) and ns else None


def _check_not_paused_in_langgraph(graph: Pregel, loop: Loop, config: Any) -> None:
    """An lgnb graph invoked by a task LangGraph runs (a node of a graph LangGraph compiled,
    such as a library's wrapper around the user's graphs) that paused on `interrupt()`:
    LangGraph cannot resume it, and returning its state would lose the question (the
    caller went on as if the node had run), so the call fails saying what to do."""
    if not loop.interrupts_seen or TASK_CTX.get() is not None:
        return
    pad = ((config or {}).get(CONF) or {}).get("__pregel_scratchpad")
    if pad is None or not type(pad).__module__.startswith("langgraph"):
        return
    raise RuntimeError(
        f"The lgnb graph {graph.name!r} paused on interrupt() while a graph LangGraph runs "
        "invoked it (as a node, or from a node's code): LangGraph cannot resume an lgnb "
        "graph, so the question would be lost. Run the outer graph on lgnb too: rebuild its "
        "builder with `lgnb.graph.from_langgraph(builder)` and compile that (an lgnb graph "
        "added as a node then runs as its subgraph, and its interrupts pause the run)."
    )


def _root_config(config: dict[str, Any]) -> dict[str, Any]:
    """A root run given a subgraph's config (from `get_state(subgraphs=True)`) starts
    from the root checkpoint its `checkpoint_map` names; the subgraph's own entry then
    addresses the subgraph when it runs."""
    conf = config.get(CONF)
    if not conf or not conf.get("checkpoint_ns"):
        return config
    cmap = conf.get("checkpoint_map") or {}
    return {**config, CONF: {**conf, "checkpoint_ns": "", "checkpoint_id": cmap.get("")}}


_OWN_ATTRIBUTES = frozenset(
    {
        "nodes", "channels", "input_channels", "output_channels", "stream_channels",
        "checkpointer", "interrupt_before_nodes", "interrupt_after_nodes", "stream_mode",
        "name", "debug", "retry_policy", "context_schema", "store", "config", "state_keys",
        "output_mapper", "builder", "state_key_set", "stream_eager", "step_timeout",
        "cache_policy", "cache", "trigger_to_nodes", "step_channels",
        "finish_channels", "untracked_keys", "stream_transformers",
    }
)

register_when_loaded(Pregel)


def _check_output_keys(keys: str | Sequence[str], channels: Mapping[str, Any]) -> None:
    """`output_keys` must name channels of the graph: refused before anything runs, as on
    LangGraph (with its words, then the keys there are)."""
    for key in [keys] if isinstance(keys, str) else keys:
        if key not in channels:
            known = ", ".join(sorted(k for k in channels if not k.startswith(("branch:", "__"))))
            raise ValueError(f"Key {key} not in channels (output_keys names state keys to return; "
                             f"this graph's are: {known})")

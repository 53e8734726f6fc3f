"""`StateGraph`: build a graph of nodes over a shared state, then compile it to Pregel.

The builder records nodes, edges and conditional edges; `compile()` validates them and
lowers them to channels and Pregel nodes the way LangGraph does (same channel names:
`branch:to:<node>`, `join:<a>+<b>:<node>`, `__start__`, `__pregel_tasks`), so checkpoints
and stream output have the same shape on both engines.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from datetime import timedelta
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from typing_extensions import Self

from lgnb._internal.callable import warn_config_annotation
from lgnb._internal.constants import END, NS_END, NS_SEP, START
from lgnb._internal.foreign import hook_tool_node
from lgnb.channels.base import BaseChannel
from lgnb.channels.last_value import LastValue
from lgnb.graph._branch import Branch
from lgnb.graph._port import from_langgraph, is_langgraph_graph
from lgnb.graph._schema import schema_channels
from lgnb.pregel.main import Pregel
from lgnb.types import All, CachePolicy, Checkpointer, Command, RetryPolicy, TimeoutPolicy
from lgnb.typing import ContextT, InputT, OutputT, StateT
from lgnb.warnings import LangGraphDeprecatedSinceV05, LangGraphDeprecatedSinceV10

__all__ = ("StateGraph", "CompiledStateGraph", "NodeSpec")

logger = logging.getLogger("langgraph")

if TYPE_CHECKING:
    from langgraph.cache.base import BaseCache
    from langgraph.store.base import BaseStore



class NodeSpec:
    """What `add_node` recorded about a node."""

    __slots__ = (
        "action", "metadata", "input_schema", "retry_policy", "ends", "defer", "cache_policy",
        "trace_policy", "timeout", "error_handler", "is_error_handler",
    )

    def __init__(
        self,
        action: Any,
        *,
        metadata: dict[str, Any] | None,
        input_schema: Any,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None,
        ends: tuple[str, ...] | dict[str, str],
        defer: bool,
    ) -> None:
        self.action = action
        self.metadata = metadata
        self.input_schema = input_schema
        self.retry_policy = retry_policy
        self.ends = ends
        self.defer = defer
        self.cache_policy: Any = None  # a CachePolicy: writes cached by input
        self.trace_policy: Any = None  # a TracePolicy: what tracers record of its runs
        self.timeout: Any = None  # a TimeoutPolicy per attempt (async nodes)
        self.error_handler: str | None = None  # the node run when this one fails
        self.is_error_handler = False

    @property
    def runnable(self) -> Any:
        """The node's code as a Runnable, as LangGraph's node spec exposes it (a plain
        function comes wrapped; its `.func` is the function)."""
        from lgnb._internal.node_runnable import as_runnable

        return as_runnable(self.action, getattr(self.action, "__name__", "node"))


class StateGraph(Generic[StateT, ContextT, InputT, OutputT]):
    """A graph whose nodes read a shared state and return updates to it.

    `state_schema` (TypedDict, dataclass or pydantic model) declares the keys: a plain
    field keeps the last value written, `Annotated[T, reducer]` folds writes with the
    reducer. `context_schema` types the run-scoped `context=` nodes get via `Runtime`.
    """

    def __init__(
        self,
        state_schema: type[StateT],
        context_schema: type[ContextT] | None = None,
        *,
        input_schema: type[InputT] | None = None,
        output_schema: type[OutputT] | None = None,
        **deprecated: Any,
    ) -> None:
        context_schema = _prefer(
            context_schema,
            _renamed(deprecated, "config_schema", "context_schema", LangGraphDeprecatedSinceV10),
        )
        input_schema = _prefer(
            input_schema, _renamed(deprecated, "input", "input_schema", LangGraphDeprecatedSinceV05)
        )
        output_schema = _prefer(
            output_schema,
            _renamed(deprecated, "output", "output_schema", LangGraphDeprecatedSinceV05),
        )
        if deprecated:
            raise TypeError(f"StateGraph() got unexpected keyword arguments: {sorted(deprecated)}")
        self.nodes: dict[str, NodeSpec] = {}
        self.edges: set[tuple[str, str]] = set()
        self.branches: defaultdict[str, dict[str, Branch]] = defaultdict(dict)
        self.schemas: dict[Any, dict[str, Any]] = {}
        self.channels: dict[str, BaseChannel] = {}
        self.managed: dict[str, Any] = {}
        self.waiting_edges: set[tuple[tuple[str, ...], str]] = set()
        self.compiled = False
        self.node_defaults: dict[str, Any] = {}  # set_node_defaults(...), applied by compile
        self.state_schema = state_schema
        self.input_schema = input_schema or state_schema
        self.output_schema = output_schema or state_schema
        self.context_schema = context_schema
        self._add_schema(self.state_schema)
        self._add_schema(self.input_schema, allow_managed=False)
        self._add_schema(self.output_schema, allow_managed=False)

    # ------------------------------------------------------------------ schema
    def _add_schema(self, schema: Any, allow_managed: bool = True) -> None:
        if schema in self.schemas:
            return
        channels, managed, _ = schema_channels(schema)
        if managed and not allow_managed:
            raise ValueError(
                f"Invalid managed channels detected in {getattr(schema, '__name__', '')}: "
                f"{', '.join(managed)}. Managed channels are not permitted in Input/Output schema."
            )
        self.schemas[schema] = {**channels, **managed}
        for key, channel in channels.items():
            if key in self.channels:
                if self.channels[key] != channel and not isinstance(channel, LastValue):
                    raise ValueError(f"Channel '{key}' already exists with a different type")
            else:
                self.channels[key] = channel
        for key, mv in managed.items():
            if key in self.managed and self.managed[key] != mv:
                raise ValueError(f"Managed value '{key}' already exists with a different type")
            self.managed[key] = mv

    @property
    def _all_edges(self) -> set[tuple[str, str]]:
        return self.edges | {(s, e) for starts, e in self.waiting_edges for s in starts}

    # ------------------------------------------------------------------ building
    def add_node(
        self,
        node: str | Any,
        action: Any = None,
        *,
        defer: bool = False,
        metadata: dict[str, Any] | None = None,
        input_schema: type[Any] | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        destinations: dict[str, str] | tuple[str, ...] | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
        error_handler: Any = None,
        **kwargs: Any,
    ) -> Self:
        """Add a node: a function of the state (sync or async), a Runnable, or a compiled graph.

        `destinations` names where a node returning `Command(goto=...)` may go (for
        drawing); `defer=True` runs the node only when nothing else is left to run.
        `timeout` (seconds, a timedelta or a `TimeoutPolicy`) limits each attempt of an
        async node (`NodeTimeoutError`). `error_handler` runs in the same step when the
        node fails for good (after its retries): it gets the state and, as a parameter
        `error: NodeError`, the failure, and returns an update or a `Command(goto=...)`;
        the run goes on.
        """
        policy = TimeoutPolicy.coerce(timeout)
        retry_policy = _prefer(
            retry_policy, _renamed(kwargs, "retry", "retry_policy", LangGraphDeprecatedSinceV05)
        )
        input_schema = _prefer(
            input_schema, _renamed(kwargs, "input", "input_schema", LangGraphDeprecatedSinceV05)
        )
        unknown = set(kwargs) - {"retry", "input", "cache_policy", "trace_policy"}
        if unknown:
            raise TypeError(f"add_node() got unexpected keyword arguments: {sorted(unknown)}")
        if not isinstance(node, str):
            action = node
            name = getattr(action, "name", None) if not inspect.isfunction(action) else None
            node = name or getattr(action, "__name__", None) or type(action).__name__
            if not isinstance(node, str):
                raise ValueError("Node name must be provided if action is not a function")
        if action is None:
            raise RuntimeError(f"add_node(`{node}`): the node's function is missing")
        if self.compiled:
            logger.warning(
                "Adding a node to a graph that has already been compiled. This will not be "
                "reflected in the compiled graph."
            )
        if node in self.nodes:
            raise ValueError(f"Node `{node}` already present.")
        if node in (END, START):
            raise ValueError(f"Node `{node}` is reserved.")
        for character in (NS_SEP, NS_END):
            if character in node:
                raise ValueError(
                    f"'{character}' is a reserved character and is not allowed in the node names."
                )
        if isinstance(action, dict):  # {key: runnable}: run them all, as LangChain does
            from langchain_core.runnables import RunnableParallel

            action = RunnableParallel(action)
        warn_config_annotation(action)
        hook_tool_node(action)  # LangGraph's ToolNode: its tools may return lgnb's Command
        if is_langgraph_graph(action):  # a library's agent (create_agent): run it on lgnb
            action = from_langgraph(action)
        if not callable(action) and not hasattr(action, "invoke"):
            raise TypeError(
                f"Node `{node}` must be a function, an async function, a Runnable or a "
                f"compiled graph; got {type(action).__name__} ({action!r})."
            )
        inferred, ends = _inspect_action(action, want_input=input_schema is None)
        if destinations is not None:
            ends = destinations
        schema = input_schema or inferred
        self.nodes[node] = NodeSpec(
            action,
            metadata=metadata,
            input_schema=schema or self.state_schema,
            retry_policy=retry_policy,
            ends=ends,
            defer=defer,
        )
        self.nodes[node].cache_policy = kwargs.get("cache_policy")
        self.nodes[node].trace_policy = kwargs.get("trace_policy")
        self.nodes[node].timeout = policy
        if error_handler is not None:
            handler = f"__error_handler__{node}"
            if handler in self.nodes:
                raise ValueError(f"Auto-generated error handler node `{handler}` already exists.")
            self.nodes[node].error_handler = handler
            self.nodes[handler] = _handler_spec(error_handler, schema or self.state_schema)
        if schema is not None:
            self._add_schema(schema)
        return self

    def set_node_defaults(
        self,
        *,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
        error_handler: Any = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
    ) -> Self:
        """Policies for every node that does not set its own, applied at `compile()`.

        `retry_policy` and `timeout` also apply to error-handler nodes; `cache_policy` and
        `error_handler` only to regular nodes (a handler never handles itself). Not
        inherited by subgraphs. Returns the builder, for chaining.
        """
        defaults = self.node_defaults
        if retry_policy is not None:
            defaults["retry_policy"] = retry_policy
        if cache_policy is not None:
            defaults["cache_policy"] = cache_policy
        if error_handler is not None:
            defaults["error_handler"] = error_handler
        if timeout is not None:
            defaults["timeout"] = TimeoutPolicy.coerce(timeout)
        return self

    def _apply_node_defaults(self) -> None:
        defaults = self.node_defaults
        if not defaults:
            return
        default_handler = None
        if defaults.get("error_handler") is not None:
            default_handler = _DEFAULT_ERROR_HANDLER
            existing = self.nodes.get(default_handler)
            if existing is not None and not existing.is_error_handler:
                raise ValueError(
                    f"Auto-generated default error handler node `{default_handler}` already exists."
                )
            self.nodes[default_handler] = _handler_spec(
                defaults["error_handler"], self.state_schema
            )
        for spec in self.nodes.values():
            if default_handler is not None and not spec.is_error_handler and spec.error_handler is None:
                spec.error_handler = default_handler
            if spec.retry_policy is None and defaults.get("retry_policy") is not None:
                spec.retry_policy = defaults["retry_policy"]
            if (
                not spec.is_error_handler
                and spec.cache_policy is None
                and defaults.get("cache_policy") is not None
            ):
                spec.cache_policy = defaults["cache_policy"]
            if spec.timeout is None and defaults.get("timeout") is not None:
                spec.timeout = defaults["timeout"]

    def add_edge(self, start_key: str | list[str], end_key: str) -> Self:
        """Run `end_key` after `start_key`; with a list of starts, after all of them."""
        if self.compiled:
            logger.warning(
                "Adding an edge to a graph that has already been compiled. This will not be "
                "reflected in the compiled graph."
            )
        if isinstance(start_key, str):
            if start_key == END:
                raise ValueError("END cannot be a start node")
            if end_key == START:
                raise ValueError("START cannot be an end node")
            self.edges.add((start_key, end_key))
            return self
        for start in start_key:
            if start == END:
                raise ValueError("END cannot be a start node")
            if start not in self.nodes:
                raise ValueError(f"Need to add_node `{start}` first")
        if end_key == START:
            raise ValueError("START cannot be an end node")
        if end_key != END and end_key not in self.nodes:
            raise ValueError(f"Need to add_node `{end_key}` first")
        self.waiting_edges.add((tuple(start_key), end_key))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Hashable | Sequence[Hashable]] | Any,
        path_map: dict[Hashable, str] | list[str] | None = None,
    ) -> Self:
        """After `source`, call `path(state)` and go where it says (names, END or Sends)."""
        if self.compiled:
            logger.warning(
                "Adding an edge to a graph that has already been compiled. This will not be "
                "reflected in the compiled graph."
            )
        given = getattr(path, "name", None) or getattr(path, "__name__", None)
        if given == "<lambda>":
            given = None
        name = given or "condition"
        if name in self.branches[source]:
            # LangGraph's text names an unnamed path function (a lambda) `None`
            hint = "" if given else (
                "\nAn unnamed path function (a lambda) is named `condition`, and a node "
                "has one branch of each name: give the second one a name (a `def`)."
            )
            raise ValueError(f"Branch with name `{given}` already exists for node `{source}`{hint}")
        branch = Branch(path, path_map, name=name)
        self.branches[source][name] = branch
        if branch.input_schema is not None:
            self._add_schema(branch.input_schema)
        return self

    def add_sequence(self, nodes: Sequence[Any | tuple[str, Any]]) -> Self:
        """Add nodes that run one after the other, in the order given."""
        if len(nodes) < 1:
            raise ValueError("Sequence requires at least one node.")
        previous: str | None = None
        for item in nodes:
            if isinstance(item, tuple) and len(item) == 2:
                name, action = item
            else:
                action = item
                name = getattr(action, "name", None) if not inspect.isfunction(action) else None
                name = name or getattr(action, "__name__", None) or type(action).__name__
            if name in self.nodes:
                raise ValueError(
                    f"Node names must be unique: node with the name '{name}' already exists. "
                    "If you need to use two different runnables/callables with the same name "
                    "(for example, using `lambda`), please provide them as tuples "
                    "(name, runnable/callable)."
                )
            self.add_node(name, action)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> Self:
        """Same as `add_edge(START, key)`."""
        return self.add_edge(START, key)

    def set_conditional_entry_point(
        self, path: Callable[..., Any], path_map: dict[Hashable, str] | list[str] | None = None
    ) -> Self:
        """Same as `add_conditional_edges(START, path, path_map)`."""
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> Self:
        """Same as `add_edge(key, END)`."""
        return self.add_edge(key, END)

    # ------------------------------------------------------------------ validation
    def validate(self, interrupt: Sequence[str] | None = None) -> Self:
        """Check edges and interrupts name existing nodes; raise ValueError naming the problem."""
        sources = {s for s, _ in self._all_edges} | set(self.branches)
        sources |= {name for name, spec in self.nodes.items() if spec.ends}
        for source in sources:
            if source not in self.nodes and source != START:
                raise ValueError(f"Found edge starting at unknown node '{source}'")
        if START not in sources:
            raise ValueError(
                "Graph must have an entrypoint: add at least one edge from START to another node"
            )
        targets = {e for _, e in self._all_edges}
        for start, branches in self.branches.items():
            for cond, branch in branches.items():
                if branch.ends is not None:
                    for end in branch.ends.values():
                        if end not in self.nodes and end != END:
                            raise ValueError(
                                f"At '{start}' node, '{cond}' branch found unknown target '{end}'"
                            )
                        targets.add(end)
                else:
                    targets.add(END)
                    targets.update(n for n in self.nodes if n != start)
        for spec in self.nodes.values():
            if spec.ends:
                targets.update(spec.ends)
        for target in targets:
            if target not in self.nodes and target != END:
                raise ValueError(f"Found edge ending at unknown node `{target}`")
        for node in interrupt or ():
            if node not in self.nodes:
                raise ValueError(f"Interrupt node `{node}` not found")
        self.compiled = True
        return self

    def compile(
        self,
        checkpointer: Checkpointer = None,
        *,
        store: BaseStore | None = None,
        cache: BaseCache | None = None,
        interrupt_before: All | list[str] | None = None,
        interrupt_after: All | list[str] | None = None,
        debug: bool = False,
        name: str | None = None,
        transformers: Sequence[Any] | None = None,
    ) -> CompiledStateGraph[StateT, ContextT, InputT, OutputT]:
        """Validate the graph and lower it to a runnable `CompiledStateGraph`.

        `transformers`: stream transformer classes (or `scope -> transformer` factories)
        every `stream_events(version="v3")` run of the graph gets (`lgnb.stream`)."""
        interrupt_before = interrupt_before or []
        interrupt_after = interrupt_after or []
        self._apply_node_defaults()
        self.validate(
            interrupt=(
                (interrupt_before if interrupt_before != "*" else [])
                + (interrupt_after if interrupt_after != "*" else [])
            )
        )
        from lgnb.graph._allowlist import remember_allowlist, with_allowlist
        from lgnb.graph._compile import lower
        from lgnb.pregel._assemble import _check_checkpointer

        _check_checkpointer(checkpointer)  # before the saver is asked anything
        schemas = [self.state_schema, self.input_schema, self.output_schema, self.context_schema]
        schemas += [spec.input_schema for spec in self.nodes.values()]
        checkpointer = with_allowlist(checkpointer, schemas)
        compiled = lower(
            self,
            checkpointer=checkpointer,
            store=store,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
            name=name or "LangGraph",
            cache=cache,
        )
        remember_allowlist(compiled, schemas)
        if transformers:
            compiled.stream_transformers = tuple(transformers)  # checked per run
        return compiled


class CompiledStateGraph(Pregel, Generic[StateT, ContextT, InputT, OutputT]):
    """A compiled StateGraph: run it with invoke / stream, inspect it with get_graph."""

    builder: StateGraph[StateT, ContextT, InputT, OutputT]

    def attach_builder(self, builder: StateGraph[StateT, ContextT, InputT, OutputT]) -> None:
        self.builder = builder
        # what `get_graph()` draws: the structure as compiled, not the builder's nodes and
        # edges a later notebook cell adds (as LangGraph, which draws its compiled nodes)
        self.compiled_structure = CompiledStructure(builder)


class CompiledStructure:
    """The nodes, edges, joins and branches of a builder when it was compiled (copies of
    its containers: the builder may change afterwards)."""

    __slots__ = ("nodes", "edges", "waiting_edges", "branches")

    def __init__(self, builder: StateGraph[Any, Any, Any, Any]) -> None:
        self.nodes = dict(builder.nodes)
        self.edges = set(builder.edges)
        self.waiting_edges = set(builder.waiting_edges)
        self.branches = {source: dict(b) for source, b in builder.branches.items()}


_DEFAULT_ERROR_HANDLER = "__default_error_handler__"


def _handler_spec(action: Any, input_schema: Any) -> NodeSpec:
    """The node that runs an error handler: reads what the failed node read."""
    spec = NodeSpec(
        action, metadata=None, input_schema=input_schema, retry_policy=None, ends=(), defer=False
    )
    spec.is_error_handler = True
    return spec


def _prefer(given: Any, deprecated: Any) -> Any:
    """The new keyword's value when given, else the deprecated keyword's."""
    return given if given is not None else deprecated


def _renamed(kwargs: dict[str, Any], old: str, new: str, since: type[Warning]) -> Any:
    """The value of a deprecated keyword (removed from `kwargs`), with its warning."""
    if old not in kwargs:
        return None
    warnings.warn(
        since(f"`{old}` is deprecated and will be removed. Please use `{new}` instead."),
        stacklevel=3,
    )
    return kwargs.pop(old)


def _inspect_action(
    action: Any, *, want_input: bool
) -> tuple[Any, tuple[str, ...] | dict[str, str]]:
    """The input schema a node function's first parameter declares, and the `Command`
    destinations its return annotation declares (`-> Command[Literal["a", "b"]]`)."""
    inferred = None
    ends: tuple[str, ...] | dict[str, str] = ()
    func = action
    try:
        if (
            inspect.isfunction(action)
            or inspect.ismethod(action)
            or inspect.ismethod(getattr(action, "__call__", None))  # noqa: B004 - an object's bound __call__
        ):
            hints = get_type_hints(action.__call__) or get_type_hints(action)
        else:
            return None, ()
        if want_input:
            first = next(iter(inspect.signature(func).parameters))
            hint = hints.get(first)
            if isinstance(hint, type) and get_type_hints(hint):
                inferred = hint
        rtn = hints.get("return")
        if rtn is not None:
            if get_origin(rtn) is Union:
                for arg in get_args(rtn):
                    if get_origin(arg) is Command:
                        rtn = arg
                        break
            if (
                get_origin(rtn) is Command
                and (args := get_args(rtn))
                and get_origin(args[0]) is Literal
            ):
                ends = get_args(args[0])
    except (NameError, TypeError, StopIteration, ValueError):
        pass
    return inferred, ends

"""Run-wide context shared by a graph run and the subgraph runs nested in its tasks.

One `RunContext` per `invoke`/`stream` call: the stream sink every producer writes to
(one `(namespace, mode, payload)` envelope, one queue), the requested modes, the
callbacks LangChain models inherit (the `messages` handler among them), the user's
`context=` value and store. Nested subgraph runs get the same object, so their events
land in the same queue under their own namespace.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import CONF, NS_SEP
from lgnb.pregel._trace import tracing_enabled
from lgnb.runtime import Runtime

if TYPE_CHECKING:
    from lgnb.pregel._loop import Loop
    from lgnb.pregel._task import Task

__all__ = ("CUSTOM_WITH_TASK", "Emits", "RunContext", "StreamSink", "give_permit")

_DEBUG_MODES = frozenset({"checkpoints", "tasks"})

CUSTOM_WITH_TASK = "lgnb:custom"
"""An lgnb-only stream mode (what `lgnb.run`'s view asks for): each custom event as
``(namespace, "lgnb:custom", {"id": task id, "name": node, "value": payload})``, naming the
task that wrote it, which a `custom` chunk does not (several tasks of one namespace may run
at once). `id` and `name` are None for a write from a thread that is no task's (a thread
the node started itself). With `custom` also asked for, both chunks come."""

# configurable keys a node's metadata (and so `messages` stream metadata and traces)
# carries, as LangGraph's: the run's address, never arbitrary user settings or secrets
_PROPAGATE_TO_METADATA = (
    "thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id",
    "graph_id",
)


class Emits:
    """Which loop events are wanted, precomputed per loop (checked on hot paths)."""

    __slots__ = ("values", "updates", "tasks", "checkpoints", "custom", "pregel", "targets")

    def __init__(self, targets: list[tuple[Callable[[Any], None], frozenset[str]]]) -> None:
        modes: set[str] = set()
        for _, m in targets:
            modes |= m
        debug = "debug" in modes
        self.targets = targets
        self.values = "values" in modes
        self.updates = "updates" in modes
        self.tasks = "tasks" in modes or debug
        self.checkpoints = "checkpoints" in modes or debug
        self.custom = "custom" in modes or CUSTOM_WITH_TASK in modes
        self.pregel = "pregel" in modes  # lgnb only: the mechanism's records (records.py)


def _custom_writer(put: Callable[[Any], None], ns: tuple[str, ...], *, plain: bool, tagged: bool
                   ) -> Callable[[Any], None]:
    """The custom-event writer of a stream: `custom` chunks, and with `tagged` the
    `CUSTOM_WITH_TASK` chunk naming the task that runs in the writer's thread."""
    if not tagged:
        def writer(value: Any) -> None:
            put((ns, "custom", value))

        return writer
    from lgnb._internal.context import TASK_CTX

    def tagged_writer(value: Any) -> None:
        ctx = TASK_CTX.get()
        task = ctx.task if ctx is not None else None
        if plain:
            put((ns, "custom", value))
        put((ns, CUSTOM_WITH_TASK, {"id": getattr(task, "id", None), "name": getattr(task, "name", None),
                                    "value": value}))

    return tagged_writer


_TO_LANGGRAPH = frozenset({"values", "updates", "custom", "tasks", "checkpoints", "debug"})
"""The modes an lgnb run passes to a LangGraph run's stream (`RunContext.langgraph_stream`):
`messages` reach it by LangGraph's own callback handler, which the nodes' model calls carry."""


class StreamSink:
    """The run's one queue of `(namespace, mode, payload)` events; thread-safe.

    `put` is called by the loop, by node code (custom events) and by the chat-model
    callback handler, possibly from worker threads; the consumer drains it between
    tasks, and, while a live stream's task runs in a worker thread, blocks on `wait`
    until an event or the task's end (`nudge`) comes.
    """

    __slots__ = ("items", "wake", "closed", "put", "event", "_waiting")

    def __init__(self) -> None:
        self.items: deque[tuple[tuple[str, ...], str, Any]] = deque()
        self.wake: Any = None  # a lock used as a one-permit semaphore (`make_blocking`)
        self.closed = False
        # whether the consumer is (about to be) blocked in `wait`: a one-item list that
        # the blocking `put` shares, so that `put` need not hold the sink (which holds
        # `put`: a reference cycle per stream, left to the cyclic GC)
        self._waiting = [False]
        self.put: Callable[[tuple[tuple[str, ...], str, Any]], None] = self.items.append

    def make_blocking(self) -> None:
        """Let a consumer wait for items put by other threads (`wait`).

        Producers append without a lock (deque appends are atomic) and wake the consumer
        only when it said it waits (`waiting`, a plain attribute: no method call per
        token), so a burst of tokens costs one wake-up, not one each. A producer appends
        before it looks, so every wake-up has its item in the deque already.

        The wake-up is a bare lock held while no permit is available: the producer
        releases it, the waiting consumer's `acquire` returns. A `threading.Event` does
        the same through a Python-level `Condition` (a waiter lock allocated, three lock
        round trips, a `notify_all` loop) — on a live `messages` stream that is once per
        token, when the consumer keeps up with the model.
        """
        wake = self.wake = threading.Lock()
        wake.acquire()  # no permit yet
        items = self.items
        waiting = self._waiting

        def put(item: tuple[tuple[str, ...], str, Any]) -> None:
            items.append(item)
            if waiting[0]:
                waiting[0] = False
                give_permit(wake)

        self.put = put

    def nudge(self, *_: Any) -> None:
        """Wake a waiting consumer without an item (a task it waits on ended). Called
        after the state the consumer checks changed, as `put` appends first."""
        waiting = self._waiting
        if waiting[0]:
            waiting[0] = False
            give_permit(self.wake)

    def close(self) -> None:
        self.closed = True
        if self.wake is not None:
            self._waiting[0] = False
            give_permit(self.wake)

    def wait(self, ready: Callable[[], bool] | None = None, timeout: float | None = None) -> None:
        """Block until an item arrives, the producer closed the sink, `ready()` holds
        (after a `nudge`) or `timeout` seconds passed (or return early, at worst once,
        for a permit left by a producer that raced with the last check: callers loop)."""
        wake = self.wake
        assert wake is not None
        if self.items or self.closed or (ready is not None and ready()):
            return
        waiting = self._waiting
        waiting[0] = True
        if self.items or self.closed or (ready is not None and ready()):  # came meanwhile
            waiting[0] = False
            wake.acquire(False)  # a permit given meanwhile: take it back if it is there
            return
        wake.acquire(timeout=-1 if timeout is None else max(timeout, 0.0))
        waiting[0] = False


def give_permit(wake: Any) -> None:
    """Release `wake`'s permit; already given (two producers saw `waiting` at once): fine."""
    try:
        wake.release()
    except RuntimeError:
        pass


class RunContext:
    """What every (sub)graph loop of one call shares."""

    def __init__(
        self,
        *,
        sink: StreamSink | None,
        modes: frozenset[str],
        subgraphs: bool,
        config: dict[str, Any],
        context: Any = None,
        store: Any = None,
        callbacks: list[Any] | None = None,
        checkpointer: Any = None,
        tracing: bool | None = None,
    ) -> None:
        """`tracing`: whether the run's nodes are traced; None (a run): as LangChain
        decides (`tracing_enabled`), False for the loops of state reads, which run no
        node."""
        self.sink = sink
        self.modes = modes
        self.subgraphs = subgraphs
        self.user_config = config
        # the configurable a root run was called with, before its checkpoint address is
        # resolved: `checkpoint_id` / `checkpoint_ns` as given go to node metadata
        self.address: dict[str, Any] = {}
        self._address_metadata: tuple[dict[str, Any], dict[str, Any]] | None = None
        self.context = context
        self.store = store
        self.callbacks = callbacks
        self.checkpointer = checkpointer
        self.parent: RunContext | None = None
        self.tracing = (bool(callbacks) or tracing_enabled()) if tracing is None else tracing
        self.resuming = False
        self.cancelled = False
        self.messages_handler: Any = None
        # the traced node run a graph given its own thread was invoked under (None
        # elsewhere): that graph's run is traced as its child, as LangGraph's is
        self.caller_run: Any = None
        # the `messages` handlers told of this run's node starts and ends: its own, then
        # those of the runs whose node invoked this graph (LangGraph's callbacks reach them)
        self.node_messages: tuple[Any, ...] = ()
        # an `astream(..., subgraphs=True)` inside a node: the events of its subgraphs
        # (and of graphs their nodes run) stop at its queue, as LangGraph's async stream
        # gives them only its own (its sync `stream` passes them on to the caller's too)
        self.keeps_subgraphs = False
        self.control: Any = None  # the caller's RunControl (cooperative draining)
        # one run per thread (`_lease`): the strategy asked for, and the lease a root run holds
        self.multitask: str | None = None
        self.lease: Any = None
        # a root run a task of a graph LangGraph runs invoked (an lgnb agent as a node of
        # `create_supervisor(...).compile()`): that run's stream when it asked for
        # subgraphs (LangGraph's `__pregel_stream`), which gets this run's events
        self.langgraph_stream: Any = None

    def emits_for(self, loop: Loop) -> Emits:
        """Where `loop`'s events go: this call's queue (its own graph, or any graph with
        `subgraphs=True`), and the queue of each enclosing run that asked for subgraphs —
        at any depth, also through calls in between that did not (a node's `invoke`)."""
        targets: list[tuple[Callable[[Any], None], frozenset[str]]] = []
        if self.sink is not None and (loop.is_run_root or self.subgraphs):
            targets.append((self.sink.put, self.modes))
        parent = None if self.keeps_subgraphs and not loop.is_run_root else self.parent
        while parent is not None:
            if parent.subgraphs and parent.sink is not None:
                targets.append((parent.sink.put, parent.modes))
            parent = None if parent.keeps_subgraphs else parent.parent
        run: RunContext | None = self
        while run is not None:  # (the outermost lgnb run's: one LangGraph task called it)
            if run.langgraph_stream is not None:
                stream = run.langgraph_stream
                targets.append((stream, frozenset(stream.modes) & _TO_LANGGRAPH))
                break
            run = run.parent
        return Emits(targets)

    def emit(self, loop: Loop, mode: str, payload: Any) -> None:
        """Put a loop event in the wanting queues; `debug` wraps `tasks`/`checkpoints`."""
        for put, modes in loop.emits.targets:
            if mode in modes:
                put((loop.ns_tuple, mode, payload))
            if mode in _DEBUG_MODES and "debug" in modes:  # tasks/checkpoints only: cold
                if mode == "checkpoints":
                    kind, step = "checkpoint", loop.step - 1
                else:
                    kind, step = ("task_result" if "result" in payload else "task"), loop.step
                put(
                    (
                        loop.ns_tuple,
                        "debug",
                        {
                            "step": step,
                            "timestamp": datetime.now(timezone.utc).isoformat(),
                            "type": kind,
                            "payload": payload,
                        },
                    )
                )

    def runtime_for(self, loop: Loop, ns: tuple[str, ...] | None = None) -> Runtime:
        """The Runtime nodes of `loop` receive: context, store, custom-event writer (its
        events labelled `ns`, by default the loop's namespace)."""
        puts = [(put, modes) for put, modes in loop.emits.targets
                if "custom" in modes or CUSTOM_WITH_TASK in modes]
        server = _server_info(self.user_config.get(CONF))
        if not puts:
            return Runtime(
                context=self.context, store=self.store, control=self.control, server_info=server
            )
        if ns is None:
            ns = loop.ns_tuple
        # the innermost stream that asks for `custom` takes the events, as in LangGraph (a
        # node streaming a graph it invokes gets them; they reach outer streams only when
        # that node passes them on)
        put, modes = puts[0]
        writer = _custom_writer(put, ns, plain="custom" in modes, tagged=CUSTOM_WITH_TASK in modes)
        return Runtime(
            context=self.context,
            store=self.store,
            stream_writer=writer,
            control=self.control,
            server_info=server,
        )

    def address_metadata(self) -> dict[str, Any]:
        """The configurable keys that address this run (thread_id, checkpoint_id, run_id,
        ...; the root's as given) that its traces and node metadata carry."""
        cached = self._address_metadata
        if cached is not None and cached[0] is self.address:
            return cached[1]
        conf = {**(self.user_config.get(CONF) or {}), **self.address}
        found = {k: conf[k] for k in _PROPAGATE_TO_METADATA if conf.get(k)}
        self._address_metadata = (self.address, found)  # read-only to callers: they copy it
        return found

    def _task_tags(self, loop: Loop, parent: Any, own: Any, node_tags: Any) -> list[str]:
        """The `tags` of a task's config. As on LangGraph, the tasks of one graph run share
        one list, copied from the caller's config when the run starts (a subgraph's: from
        its parent task's, so it has the parent's tags): a tag a node appends to
        `config["tags"]` in place is seen by the tasks planned after it, not by the caller
        or the enclosing graph. A subgraph's own tags (`with_config`) are in its list; a
        node with tags of its own gets a list of its own."""
        shared = loop.task_tags
        if shared is None:
            if parent is not None and parent.loop.run is self:
                base = parent.config.get("tags")
            else:
                base = self.user_config.get("tags")
            shared = list(base or ())
            if own:  # a subgraph's `with_config(tags=...)`: after the caller's
                shared += [t for t in own.get("tags") or () if t not in shared]
            loop.task_tags = shared
        return [*shared, *node_tags] if node_tags else shared

    def task_config(self, loop: Loop, task: Task) -> dict[str, Any]:
        """The RunnableConfig a node sees (what LangGraph passes as `config`).

        Inside a subgraph it extends the config of the parent task, as LangGraph's does:
        the parent's metadata (with `checkpoint_ns` naming the outermost task) stays.
        """
        user = self.user_config
        parent = loop.parent_ctx
        own = loop.graph.config if parent is not None else None  # a subgraph's `with_config`
        if parent is not None:
            metadata = dict(parent.config["metadata"])
            metadata.setdefault("checkpoint_ns", parent.task.ns)
            if parent.loop.run is not self:  # a graph invoked inside a node: its own and
                metadata.update(user.get("metadata") or {})  # the call's over the caller's
            elif own:  # a subgraph node: the caller's over its own
                metadata = {**(own.get("metadata") or {}), **metadata}
        else:
            metadata = dict(user.get("metadata") or {})
        if task.metadata is not None:  # a `@task` call: its caller's, as LangGraph's
            metadata = dict(task.metadata)
        node = task.node
        if node.metadata:
            metadata.update(node.metadata)
        path = task.path
        if path[0] == "__pregel_push" and path[-1] is not True:
            # a Send's task: False (its interrupts are its own); a `@task` call's path
            # already ends in True (the caller answers for its interrupts)
            path = (*path, False)
        metadata["langgraph_step"] = loop.step
        metadata["langgraph_node"] = task.name
        metadata["langgraph_triggers"] = task.triggers
        metadata["langgraph_path"] = path
        metadata["langgraph_checkpoint_ns"] = task.ns
        address = self.address_metadata()
        if address:
            for key, value in address.items():
                metadata.setdefault(key, value)
        configurable = dict(user.get(CONF) or ())
        tags = self._task_tags(loop, parent, own, node.tags)
        if own:
            configurable = {**(own.get(CONF) or {}), **configurable}
        configurable["checkpoint_ns"] = task.ns
        configurable["checkpoint_id"] = None  # (LangGraph: a task runs at no checkpoint of its own)
        # the checkpoints this task runs at, its graph's and the enclosing graphs' (by namespace);
        # a `@task` call's also under its callers' namespaces, whose configs it extends
        cmap = {**((loop.config.get(CONF) or {}).get("checkpoint_map") or {}), loop.ns: loop.checkpoint_id}
        callers = []
        caller = task.ns.rpartition(NS_SEP)[0]
        while caller and caller != loop.ns and caller not in cmap:
            callers.append(caller)
            caller = caller.rpartition(NS_SEP)[0]
        for caller in reversed(callers):  # (outermost first, as each config extends its caller's)
            cmap[caller] = loop.checkpoint_id
        configurable["checkpoint_map"] = cmap
        callbacks: Any = self.callbacks
        if callbacks and not self.tracing:
            # a manager, not a list: a model's own tags and metadata add to these
            from langchain_core.callbacks.manager import CallbackManager

            callbacks = CallbackManager(
                handlers=list(callbacks),
                inheritable_handlers=list(callbacks),
                tags=list(tags),
                inheritable_tags=list(tags),
                metadata=dict(metadata),
                inheritable_metadata=dict(metadata),
            )
        config: dict[str, Any] = {
            "metadata": metadata,
            "callbacks": callbacks,
            "configurable": configurable,
        }
        if tags:  # LangGraph's task config has no `tags` when none were given
            config["tags"] = tags
        limits = loop.config if own else user
        if "recursion_limit" in limits:
            config["recursion_limit"] = limits["recursion_limit"]
        if "max_concurrency" in user:
            config["max_concurrency"] = user["max_concurrency"]
        return config


def _server_info(conf: dict[str, Any] | None) -> Any:
    """What a LangGraph server put in `configurable` (assistant, graph, authenticated
    user) as `runtime.server_info`; None for a local run."""
    if not conf:
        return None
    assistant_id, graph_id = conf.get("assistant_id"), conf.get("graph_id")
    user = conf.get("langgraph_auth_user")
    if user is not None and not hasattr(user, "identity"):
        user = None  # not a user object (the server's users all have an identity)
    if assistant_id is None and graph_id is None and user is None:
        return None
    from lgnb.runtime import ServerInfo

    return ServerInfo(
        assistant_id=str(assistant_id) if assistant_id else "",
        graph_id=str(graph_id) if graph_id else "",
        user=user,
    )


def ns_parent(ns: str) -> tuple[str, ...]:
    """The namespace tuple of the graph a task (with checkpoint ns `ns`) runs in."""
    return tuple(ns.split(NS_SEP)[:-1])

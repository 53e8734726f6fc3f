"""The Pregel loop: one graph run as a sequence of super-steps over channels.

The loop owns the channels, versions and pending writes of one (sub)graph run and
decides what happens next; it never executes a node and never talks to a saver
itself. Drivers (`_driver.py`) run the tasks it plans and carry out the I/O it queues in
`self.io` (checkpoint and write saves), synchronously or with `await` — so sync and async
entry points share this one core.

    first()       input / resume / Command  -> input checkpoint
    tick()        plan the step's tasks (False when the run is over)
    put_writes()  a task finished: record, save, stream its writes
    after_tick()  barrier: apply all writes, stream values, checkpoint
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from random import getrandbits as _random_bits
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid5

from lgnb._internal.constants import (
    CONF,
    ERROR,
    INPUT,
    INTERRUPT,
    NS_SEP,
    NULL_TASK_ID,
    PULL,
    RESUME,
    TASKS,
)
from lgnb._internal.ids import legacy_task_id, new_checkpoint_id, task_id, unsaved_task_ids
from lgnb.channels.base import MISSING
from lgnb.channels.binop import BinaryOperatorAggregate
from lgnb.channels.delta import DeltaSnapshot
from lgnb.channels.ephemeral_value import EphemeralValue
from lgnb.channels.last_value import LastValue
from lgnb.channels.messages import MessagesChannel
from lgnb.errors import (
    EmptyInputError,
    GraphInterrupt,
)
from lgnb.managed.base import Scratchpad
from lgnb.pregel._algo import Versions, apply_writes, int_next_version, plan_tasks
from lgnb.pregel._delta import (
    COUNTERS,
    advance_counters,
    delta_keys,
    due_for_snapshot,
    ensure_message_ids,
    exit_late_task_id,
    exit_task_id,
    mark_bump_seen,
    nonzero,
    overwritten_delta_keys,
    stored_counters,
)
from lgnb.pregel._handlers import resume_handled
from lgnb.pregel._io import (
    read_channels,
    task_result_payload,
    task_start_payload,
    updates_payload,
)
from lgnb.pregel._migrate import (
    CHECKPOINT_VERSION,
    migrate_checkpoint,
    own_interrupts,
    storable_send,
    storable_writes,
)
from lgnb.pregel._record import Recorder
from lgnb.pregel._replay import ReplayBound
from lgnb.pregel._resume import SAVED_SPECIAL, ResumeMixin
from lgnb.pregel._status import read_task_statuses
from lgnb.pregel._task import Task, WriteBatch
from lgnb.pregel._view import EdgeView, StateViews
from lgnb.runtime import RunControl
from lgnb.types import Command, Interrupt

if TYPE_CHECKING:
    from lgnb.pregel._run import RunContext
    from lgnb.pregel.main import Pregel

# channels whose `get` / `is_available` are ValueChannel's (their `value`, MISSING when
# empty): the state cache reads them without a call
_PLAIN_VALUE_CHANNELS = frozenset({BinaryOperatorAggregate, MessagesChannel})
_VALUE_SLOT_CHANNELS = _PLAIN_VALUE_CHANNELS | {LastValue}

__all__ = ("Loop",)



def _graph_delta_keys(graph: Any) -> list[str]:
    """The graph's DeltaChannel keys, found once per compiled graph (not once per run)."""
    channels = graph.channels
    store = getattr(graph, "__dict__", None)
    memo = store.get("_lgnb_delta_keys") if store is not None else None
    if memo is None or memo[0] is not channels or memo[1] != len(channels):
        memo = (channels, len(channels), delta_keys(channels))
        if store is not None:
            store["_lgnb_delta_keys"] = memo
    return list(memo[2])


_STEP_HEX = 1 << 32
"""`hex(_STEP_HEX | n)[3:]` is `n` as 8 hex digits, `f"{n:08x}"` without the format-spec
parser (ids of a run that saves nothing are made once per step)."""


class Loop(ResumeMixin):
    """State of one (sub)graph run between super-steps."""

    # False for update_state's checkpoints: as LangGraph's, they leave `updated_channels`
    # unset, so the run resuming from one plans every node
    records_updated_channels = True
    # False for the loops of state reads and updates: they plan tasks for their names and
    # ids only, so a node's input is not coerced into its schema (a state saved before the
    # schema gained a required field stays readable, and repairable with update_state)
    builds_inputs = True

    def __init__(
        self,
        graph: Pregel,
        run: RunContext,
        *,
        config: dict[str, Any],
        saved: Any,
        checkpointer: Any,
        durability: str,
        ns: str,
        interrupt_before: Sequence[str] | str,
        interrupt_after: Sequence[str] | str,
        output_keys: str | Sequence[str],
        recursion_limit: int,
        is_nested: bool,
        run_root: bool | None = None,
        parent_ctx: Any = None,
    ) -> None:
        self.graph = graph
        # the graph's parts read every step, read once: the compiled graph's attributes
        # cost ~4× a plain object's (its class has a `__getattr__`, for LangChain's
        # Runnable methods, so the interpreter cannot specialize reads of them)
        self.nodes = graph.nodes
        self.trigger_to_nodes = graph.trigger_to_nodes
        self.step_channels = graph.step_channels
        self.finish_channels = graph.finish_channels
        self.state_key_set = graph.state_key_set
        self.retry_policy = graph.retry_policy
        self.step_timeout = graph.step_timeout
        self.run = run
        self.config = config
        self.run_metadata = config.get("metadata")
        self.checkpointer = checkpointer
        self.durability = durability
        # durability "async": the saves written in the background (`_background`), by
        # the async driver's kind when `driven_async` (set by the driver that runs it)
        self.background: Any = None
        self.driven_async = False
        # whether the driver hands control to its caller after each committed task (so
        # the caller drains the stream); `invoke` drains nothing until the end (set by
        # the driver that runs it)
        self.drained = True
        # a sync stream with live events (`drive(live=...)`): its tasks hand their events
        # over as each ends, and slow ones run in a worker thread
        self.live = False
        # the step whose tasks commit themselves while a sync stream's consumer holds it
        # (`_driver._Held`), for the live driver's waits
        self.held: Any = None
        self.ns = ns
        self.ns_tuple: tuple[str, ...] = tuple(ns.split(NS_SEP)) if ns else ()
        self.is_nested = is_nested
        self.is_run_root = not is_nested if run_root is None else run_root
        self.parent_ctx = parent_ctx
        # the tags list this loop's tasks share (`RunContext.task_config`), made at its first task
        self.task_tags: list[str] | None = None
        self.run_manager: Any = None
        self.runtime: Any = None
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.output_keys = output_keys
        self.output_key_set = output_keys if isinstance(output_keys, str) else frozenset(output_keys)
        self.output_in_state = not isinstance(output_keys, str) and frozenset(output_keys) <= graph.state_key_set
        # output = the whole state, in its order: a `values` chunk is one dict copy
        self.output_all_state = self.output_in_state and list(output_keys) == list(graph.state_keys)
        self.stream_keys = graph.stream_channels
        self.io: list[tuple] = []
        self.status = "input"
        self.tasks: dict[str, Task] = {}
        self.views = StateViews()
        self.edge_views: dict[Any, EdgeView] = {}  # conditional edges' (graph/_compile.py)
        self.output: Any = None
        self.emits = run.emits_for(self)
        # the "pregel" mode's record builder; None (no record work at all) without it
        self.recorder: Recorder | None = Recorder(self) if self.emits.pregel else None

        conf = config.get(CONF, {})
        self.thread_id = conf.get("thread_id")
        if saved is None:
            checkpoint: dict[str, Any] = {
                "v": CHECKPOINT_VERSION,
                # (a timestamp is made for each saved checkpoint; none without a saver)
                "ts": datetime.now(timezone.utc).isoformat() if checkpointer is not None else None,
                "id": new_checkpoint_id(-2),
                "channel_values": {},
                "channel_versions": {},
                "versions_seen": {},
                "updated_channels": None,
            }
            metadata: dict[str, Any] = {"step": -2}
            pending: list[tuple[str, str, Any]] = []
            self.saved_config = None
            self.prev_checkpoint_config = None
            self.has_saved = False
        else:
            checkpoint = migrate_checkpoint(saved.checkpoint, graph)
            metadata = dict(saved.metadata)
            pending = [(str(t), c, v if c != INTERRUPT else own_interrupts(v)) for t, c, v in (saved.pending_writes or [])]
            self.saved_config = saved.config
            self.prev_checkpoint_config = saved.parent_config
            self.has_saved = True
        self.checkpoint_id = checkpoint["id"]
        # a format-1 checkpoint's tasks have SHA-1 ids (its pending writes name them)
        self.legacy_ids_for = checkpoint["id"] if checkpoint.get("v", 1) < 2 else None
        # ids of this run's unsaved checkpoints (no saver): unique per process is enough
        self.run_key = "" if checkpointer is not None else f"{_random_bits(96):024x}"
        # ... and its task ids need no hash of them (nothing resumes them)
        self.unsaved_ids = unsaved_task_ids() if checkpointer is None else None
        self.checkpoint_id_saved = checkpoint["id"] if saved is not None else None
        self.checkpoint_ts = checkpoint.get("ts")
        self.metadata = metadata
        self.pending = pending
        # the writes the saver already holds (kept alive, so their ids stay theirs)
        self.loaded_writes = list(pending)
        self.loaded_ids = {id(w) for w in pending}
        next_version = checkpointer.get_next_version if checkpointer else int_next_version
        self.versions = Versions(
            dict(checkpoint["channel_versions"]),
            {k: dict(v) for k, v in checkpoint["versions_seen"].items()},
            next_version,
        )
        # what the last saved checkpoint held; only what changed since is re-read on save
        self.unsaved: set[str] = set()
        self.unsaved_seen: set[str] = set()
        self.saved_values: dict[str, Any] | None = None
        self.saved_seen: dict[str, dict[str, Any]] | None = None
        values = checkpoint["channel_values"]
        get = values.get
        self.channels = {
            k: spec.from_checkpoint(get(k, MISSING)) for k, spec in graph.channels.items()
        }
        channels = self.channels
        # an ephemeral channel is available while it holds a value (`is_available`, inline)
        self.live_ephemeral = {
            k for k in graph.step_channels
            if (channels[k].value is not MISSING if channels[k].__class__ is EphemeralValue
                else channels[k].is_available())
        }
        self.state: dict[str, Any] = {}
        state = self.state
        for k in graph.state_keys:
            ch = channels[k]
            if ch.__class__ in _VALUE_SLOT_CHANNELS:  # `is_available` / `get`, inline
                if (value := ch.value) is not MISSING:
                    state[k] = value
            elif ch.is_available():
                state[k] = ch.get()
        self.step = metadata["step"] + 1
        self.stop = self.step + recursion_limit + 1
        upd = checkpoint.get("updated_channels")
        self.updated_channels: set[str] | None = set(upd) if upd else None
        if checkpointer is not None:
            base_conf = {**conf, **(saved.config.get(CONF, {}) if saved is not None else {})}
            base_conf["checkpoint_ns"] = ns
            if base_conf.get("thread_id") is not None:
                base_conf["thread_id"] = str(base_conf["thread_id"])
            self.checkpoint_config: dict[str, Any] = {CONF: base_conf}
        else:
            self.checkpoint_config = {CONF: {}}
        # where the run started: durability "exit" stores its delta writes there
        self.initial_checkpoint_id = checkpoint["id"]
        self.initial_checkpoint_config = self.checkpoint_config
        self.resume_map: dict[str, Any] | None = None
        self.is_resuming = False
        self.is_replaying = False
        # LangGraph's task keys shared by this step's tasks (foreign_node._step_keys)
        self.langgraph_keys: tuple[Any, dict[str, Any], tuple[str, ...]] | None = None
        self.values_emitted = False
        self.interrupts_seen: list[Interrupt] = []
        self.addressed = bool(conf.get("checkpoint_id")) and saved is not None
        # DeltaChannel keys, and those that must store a full snapshot at the next save
        self.delta_keys: list[str] = _graph_delta_keys(graph)
        self.forced_snapshots: set[str] = set()
        # durability "exit": the run's delta writes (step, task id, path, key, value), stored
        # at exit on the checkpoint it started from; the Command's, counted at its first
        # step; and the (task, key) writes loaded with that checkpoint (stored already)
        self.exit_delta: list[tuple[int, str, str, str, Any]] | None = (
            [] if durability == "exit" and checkpointer is not None and self.delta_keys else None
        )
        self.exit_command: list[tuple[str, Any]] = []
        self.exit_first_step: int | None = None
        self.stored_delta = {
            (t, c) for t, c, _ in pending if t != NULL_TASK_ID and c in self.delta_keys
        }
        # set by whoever loaded `saved` for a subgraph being time-travelled (see _replay)
        self.time_travel = False
        # set by whoever loaded `saved` for an addressed run: the thread has moved past it
        self.superseded = False
        # a Command's null writes applied, not stored (this run forks: see `first`)
        self.carried: list[tuple[str, str, Any]] = []
        # a resume's loaded delta writes, and the tasks they went back to (see `first`)
        self.resume_loaded: list[tuple[str, str, Any]] = []
        self.reapplied_ids: set[str] = set()
        # the replay this run belongs to: set by a time-travelling root, seen by subgraphs
        self.replay: ReplayBound | None = (
            parent_ctx.loop.replay if parent_ctx is not None else None
        )

    # ------------------------------------------------------------------ input
    def first(self, input: Any, *, resuming: bool | None = None) -> None:
        """Turn the run's input into writes and the input checkpoint."""
        graph = self.graph
        if type(input).__module__ == "langgraph.types":
            # LangGraph's `Command(resume=...)`, which a ported notebook may still import:
            # taken as lgnb's (otherwise it read as plain input and restarted the thread)
            from lgnb._internal.foreign import adopt

            input = adopt(input)
        is_command = isinstance(input, Command)
        self.is_resuming = bool(self.versions.versions) and (
            resuming if resuming is not None else (input is None or is_command)
        )
        # an addressed checkpoint replayed without an answer re-runs its tasks: time travel
        time_travel = self.time_travel or (
            self.addressed
            and self.is_resuming
            and not ((is_command and input.resume is not None) or resuming)
        )
        # finished tasks rerun on time travel, and on a resume at a checkpoint the thread
        # has moved past (their saved writes may belong to a branch that replaced them)
        self.is_replaying = time_travel or self.superseded
        # the replay starts a new branch of the timeline with a fork checkpoint; an
        # `update_state` fork is one already, unless the thread has grown from it since
        forks = (
            self.is_resuming
            and time_travel
            and (self.metadata.get("source") not in ("update", "fork") or self.superseded)
        )
        if time_travel and not self.is_nested:
            self.replay = ReplayBound(self._replay_bound())
        if time_travel:
            self.pending = [w for w in self.pending if w[1] != RESUME]
        if self.delta_keys and self.pending:
            delta = self.delta_keys
            if self.is_resuming and not self.is_replaying:
                # the saved writes go back to their tasks; `after_tick` snapshots the
                # keys of those no task takes back (a task the resume dropped)
                self.resume_loaded = [
                    w for w in self.pending if w[0] != NULL_TASK_ID and w[1] in delta
                ]
            else:
                # a new branch from a checkpoint whose saved writes it does not reapply:
                # the ancestor walk would replay them, so the branch starts from a snapshot
                self.forced_snapshots.update(c for _, c, _ in self.pending if c in delta)
        if is_command:
            # a forking run carries the Command's writes into its fork checkpoint: stored
            # on the addressed checkpoint, its other children would read them
            writes = self._apply_command(input, store=not forks)
            if self.exit_delta is not None and not forks:
                self.exit_command = [(c, v) for c, v in writes if c in self.delta_keys]
        null_writes = [(c, v) for t, c, v in (*self.pending, *self.carried) if t == NULL_TASK_ID]
        if null_writes:
            batch: list[Task | WriteBatch] = [WriteBatch(INPUT, null_writes)]
            rec = self.recorder.before(batch) if self.recorder is not None else None
            updated = self._apply(batch)
            if rec is not None:
                self.recorder.update(rec, "command")  # type: ignore[union-attr]
            if self.updated_channels is not None:
                self.updated_channels |= updated
        if self.is_resuming:
            seen = self.versions.seen.setdefault(INTERRUPT, {})
            seen.update(self.versions.versions)
            self.unsaved_seen.add(INTERRUPT)
            if forks:
                if self.delta_keys:
                    delta = self.delta_keys
                    self.forced_snapshots.update(c for _, c, _ in self.carried if c in delta)
                self.pending = [w for w in self.pending if w[1] != INTERRUPT]
                # as LangGraph's, the fork records no updated channels; the run still
                # plans from the ones it loaded
                planned, self.updated_channels = self.updated_channels, None
                self._put_checkpoint({"source": "fork"})
                self.updated_channels = planned
            self._values(None)
        elif input is not None:
            writes = graph.map_input(input)
            if not writes:
                raise EmptyInputError(f"Received no input for {graph.input_channels}")
            if self.delta_keys:
                # before it is applied, so this run reads the ids saved with it
                ensure_message_ids(graph.channels, writes)
            # tasks left unfinished by an earlier run are discarded: mark them seen (their
            # inputs are never read, so a saved state that no longer fits is no error)
            builds, self.builds_inputs = self.builds_inputs, False
            try:
                discard = self._plan()
            finally:
                self.builds_inputs = builds
            if self.delta_keys:
                self._store_delta_input(writes)
            batch = [*discard, WriteBatch(INPUT, writes)]
            rec = self.recorder.before(batch) if self.recorder is not None else None
            self.updated_channels = self._apply(batch)
            if rec is not None:
                self.recorder.update(rec, "input")  # type: ignore[union-attr]
            self._put_checkpoint({"source": "input"})
        elif not self.is_nested or resuming is None:
            raise EmptyInputError(
                f"Received no input for {graph.input_channels}: pass the graph's input "
                "as the first argument, or resume an existing thread with "
                "`invoke(None, config)` / `Command(resume=...)` and a `thread_id`."
            )
        self.status = "pending"

    def _replay_bound(self) -> str:
        """The checkpoint whose past the subgraphs of this replay start from: the
        addressed one, or for a fork (`update_state`) the checkpoint it forked."""
        if self.metadata.get("source") in ("update", "fork") and self.prev_checkpoint_config:
            parent_id = self.prev_checkpoint_config.get(CONF, {}).get("checkpoint_id")
            if parent_id:
                return parent_id
        return self.checkpoint_id

    # ------------------------------------------------------------------ steps
    def _read_input(self, node: Any) -> Any:
        if node.reads_all_state:  # never with managed values (see graph/_compile.py)
            # a small state is copied (cheaper than any bookkeeping); a wide one is a
            # shared snapshot, brought up to date, unless someone could notice
            state = self.state
            views = self.views
            if len(state) < views.share_from:
                value = dict(state)
            else:
                value = views.read(state, self.step, self.tasks.values())
        elif isinstance(node.channels, str):
            ch = self.channels[node.channels]
            if not ch.is_available():
                return MISSING
            value = ch.get()
        else:
            state = self.state
            value = {k: state[k] for k in node.channels if k in state}
            if node.managed:
                for k, mv in node.managed.items():
                    value[k] = mv.get(Scratchpad(self.step, self.stop))
        if node.mapper is not None and self.builds_inputs:
            try:
                value = node.mapper(value)
            except Exception as exc:
                self._note_input_error(exc, node)
                raise
        return value

    def _note_input_error(self, exc: Exception, node: Any) -> None:
        """Say which task's input could not be built (LangGraph's note), and for a saved
        thread, that the saved state may predate the schema (notes: Python 3.11+)."""
        if not hasattr(exc, "add_note"):
            return
        exc.add_note(f"Before task with name '{node.name}' and path '{(PULL, node.name)}'")
        if self.has_saved:
            exc.add_note(
                f"Node '{node.name}' reads the state of thread {self.thread_id!r} (its saved "
                "values and this run's input), which does not fit the node's schema. If the "
                "schema gained a required field since "
                "the thread was saved, give the field a default, pass it in the input, or "
                "set it with `graph.update_state(config, {...})`; `get_state` and "
                "`get_state_history` still show what was saved."
            )

    def _plan(self) -> list[Task]:
        return plan_tasks(
            checkpoint_id=self.checkpoint_id,
            parent_ns=self.ns,
            step=self.step,
            nodes=self.nodes,
            channels=self.channels,
            versions=self.versions,
            trigger_to_nodes=self.trigger_to_nodes,
            updated_channels=self.updated_channels,
            read_input=self._read_input,
            missing=MISSING,
            make_id=self.unsaved_ids or (
                legacy_task_id if self.checkpoint_id == self.legacy_ids_for else task_id
            ),
        )

    def _apply(self, tasks: Sequence[Any]) -> set[str]:
        changed: set[str] = set()
        updated = apply_writes(
            self.versions,
            self.channels,
            tasks,
            self.trigger_to_nodes,
            self.step_channels,
            self.finish_channels,
            self.live_ephemeral,
            changed,
        )
        if self.checkpointer is not None:
            self.unsaved |= changed
            self.unsaved_seen.update(t.name for t in tasks)
        state = self.state
        state_keys = self.state_key_set
        channels: Any = self.channels
        size = len(state)
        for k in changed:
            if k in state_keys:
                ch = channels[k]
                kind = type(ch)
                if kind is LastValue:
                    state[k] = ch.value  # written this step, so it holds a value
                elif kind in _PLAIN_VALUE_CHANNELS:  # `is_available` / `get`, inline
                    value = ch.value
                    if value is MISSING:
                        state.pop(k, None)
                    else:
                        state[k] = value
                elif ch.is_available():
                    state[k] = ch.get()
                else:
                    state.pop(k, None)
        if len(state) > size:  # a key set for the first time: keep the schema's order
            self.state = {k: state[k] for k in self.graph.state_keys if k in state}
        views = self.views
        if views.snapshot is not None:  # the shared snapshot lags behind these keys
            views.stale |= changed
        if self.edge_views:  # so do the conditional edges'
            for view in self.edge_views.values():
                if view.snapshot is not None:
                    view.stale |= changed
        return updated

    def tick(self) -> bool:
        """Plan the next step; False when the run is done (or out of steps)."""
        if self.step > self.stop:
            self.status = "out_of_steps"
            self._plan_and_emit_checkpoint()
            return False
        self._plan_and_emit_checkpoint()
        if not self.tasks:
            self.status = "done"
            return False
        reapplied = bool(self.pending)  # only saved writes give a task writes before it runs
        if reapplied:
            self._reapply_pending_writes()
        if self.recorder is not None:
            self.recorder.plan()
        if self.interrupt_before and self._should_interrupt(self.interrupt_before):
            self.status = "interrupt_before"
            raise GraphInterrupt()
        # a drain stops before the step runs; after the breakpoint check, since a resume
        # passes the step's breakpoints and draining in front of one would skip it
        control = self.run.control
        if control is not None and (
            control._drain_reason is not None if type(control) is RunControl else control.drain_requested
        ):
            self.status = "draining"
            return False
        if self.emits.tasks:
            for task in self.tasks.values():
                if not task.node.hidden:
                    self.emit("tasks", task_start_payload(task, self.run.task_config(self, task)))
        if reapplied:
            for task in self.tasks.values():
                if task.writes:
                    self._output_writes(task, task.writes, cached=True)
        return True

    def _plan_and_emit_checkpoint(self) -> None:
        planned = self._plan()
        if len(planned) == 1:  # the common step: no comprehension
            task = planned[0]
            self.tasks = {task.id: task}
        else:
            self.tasks = {t.id: t for t in planned}
        if self.checkpointer is not None and self.emits.checkpoints:
            self.emit("checkpoints", self._checkpoint_payload())

    def _reapply_pending_writes(self) -> None:
        """Tasks that finished before an interrupt, error or crash keep their saved writes
        (they do not run again); unfinished ones run."""
        if self.is_replaying:
            return
        mine = (w for w in self.pending if w[0] in self.tasks)
        for tid, status in read_task_statuses(mine).items():
            if status.output:
                self.tasks[tid].writes = list(status.output)
                self.reapplied_ids.add(tid)
        resume_handled(self)

    def _should_interrupt(self, nodes: Sequence[str] | str) -> bool:
        seen = self.versions.seen.get(INTERRUPT, {})
        if not any(v > seen[c] if c in seen else True for c, v in self.versions.versions.items()):
            return False
        for task in self.tasks.values():
            if (not task.node.hidden) if nodes == "*" else task.name in nodes:
                return True
        return False

    def runnable_tasks(self) -> list[Task]:
        """The step's tasks that still have to run (not restored from saved writes)."""
        tasks = self.tasks
        if len(tasks) == 1:  # the common step: no comprehension
            for task in tasks.values():
                return [] if task.writes else [task]
        return [t for t in tasks.values() if not t.writes]

    # ------------------------------------------------------------------ writes
    def put_writes(self, task: Task, writes: list[tuple[str, Any]], *, cached: bool = False,
                   quiet: bool = False) -> None:
        """A task finished (or failed / interrupted): keep, save and stream its writes.

        `cached`: the writes come from the node cache (streamed with `cached` metadata,
        not stored in the cache again); otherwise a cacheable task's writes are queued
        for the cache. `quiet`: kept and saved, not streamed (a sibling cancelled by a
        failure, which LangGraph records after its stream has raised)."""
        if not writes:
            return
        if self.delta_keys and not cached:
            ensure_message_ids(self.graph.channels, writes)
        if writes[0][0] in SAVED_SPECIAL and all(c in SAVED_SPECIAL for c, _ in writes):
            writes = list({c: (c, v) for c, v in writes}.values())
        tid = task.id
        if self.checkpointer is not None:
            pending = self.pending
            if pending and any(w[0] == tid for w in pending):
                self.pending = pending = [w for w in pending if w[0] != tid]
            pending.extend([(tid, c, v) for c, v in writes])
        if self.checkpointer is not None:
            self._save_writes(task.id, writes, _path_str(task.path))
        emits = self.emits
        if (emits.updates or emits.tasks or emits.values or writes[0][0] == INTERRUPT) and not quiet:
            self._output_writes(task, writes, cached=cached)
        if self.recorder is not None:
            self.recorder.task_done(task, writes, cached)
        if not cached and task.cache_key is not None:
            from lgnb.pregel._cache import cache_set_op

            op = cache_set_op(task, writes)
            if op is not None:
                self.io.append(op)

    def _save_writes(self, task_id: str, writes: Sequence[tuple[str, Any]], path: str) -> None:
        if self.checkpointer is None or self.durability == "exit":
            return
        writes = storable_writes(writes, self.graph.untracked_keys)
        config = {
            CONF: {
                **self.checkpoint_config[CONF],
                "checkpoint_id": self.checkpoint_id,
            }
        }
        self.io.append(("put_writes", config, writes, task_id, path))

    def _output_writes(self, task: Task, writes: Sequence[tuple[str, Any]], *, cached: bool = False) -> None:
        if task.node.hidden:
            return
        emits = self.emits
        first = writes[0][0]
        if first == INTERRUPT:
            if task.path[-1] is True:
                return  # a task call's interrupt is streamed by its caller
            interrupts = tuple(
                i for c, v in writes if c == INTERRUPT for i in (v if isinstance(v, (tuple, list)) else (v,))
            )
            self.interrupts_seen.extend(interrupts)
            self.values_emitted = True
            if emits.updates:
                self.emit("updates", {INTERRUPT: interrupts})
            if emits.values:
                current = self.read_output()
                if isinstance(current, dict):
                    # a copy: an `@entrypoint`'s output is its return value itself, which a
                    # `checkpoints` chunk streamed before also holds (LangGraph's v1 adds the
                    # key to that chunk afterwards; its v2 does not)
                    self.emit("values", {**current, INTERRUPT: interrupts})
                else:
                    self.emit("values", {INTERRUPT: interrupts})
        elif first != ERROR and emits.updates:
            payload = updates_payload(task.name, writes, self.output_key_set)
            if cached:
                payload["__metadata__"] = {"cached": True}
            self.run.emit(self, "updates", payload)
        if not cached and emits.tasks:
            self.emit("tasks", task_result_payload(task, writes, self.stream_keys))

    # ------------------------------------------------------------------ barrier
    def after_tick(self) -> None:
        """All tasks of the step are done: apply their writes, stream values, checkpoint."""
        tasks = list(self.tasks.values())
        if self.delta_keys:
            self.forced_snapshots |= overwritten_delta_keys(
                self.graph.channels, (w for t in tasks for w in t.writes)
            )
            if self.resume_loaded:
                # loaded writes of a task this run dropped (a Send a `Command(goto=...)`
                # replaced) or reran stay on the checkpoint: readers must not apply them
                done = self.reapplied_ids
                self.forced_snapshots.update(c for t, c, _ in self.resume_loaded if t not in done)
                self.resume_loaded = []
        recorder = self.recorder
        if recorder is None:
            self.updated_channels = self._apply(tasks)
        else:
            rec = recorder.before(tasks)
            try:
                self.updated_channels = self._apply(tasks)
            except Exception as e:
                recorder.update(rec, "loop", e)
                raise
            recorder.update(rec, "loop")
        self._values(self.updated_channels)
        if self.exit_delta is not None:
            self._collect_exit_delta()
        self.pending.clear()
        self.is_resuming = False  # subgraphs of later steps start fresh
        if self.checkpointer is None:  # `_put_checkpoint`'s first lines, inline: once per step
            self.metadata = {"source": "loop"}
            self.checkpoint_id = self.run_key + hex(_STEP_HEX | self.step & 0xFFFFFFFF)[3:]
            self.step += 1
        else:
            self._put_checkpoint({"source": "loop"})
        if self.interrupt_after and self._should_interrupt(self.interrupt_after):
            self.status = "interrupt_after"
            self._plan_and_emit_checkpoint()
            if self.recorder is not None and self.tasks:  # planned, not run (as interrupt_before)
                self.recorder.plan()
            raise GraphInterrupt()

    def _touches_output(self, updated: set[str]) -> bool:
        keys = self.output_keys
        if isinstance(keys, str):
            return keys in updated
        return not updated.isdisjoint(self.output_key_set)

    def _values(self, updated: set[str] | None) -> None:
        """A `values` event when output keys changed (`updated` None: always)."""
        if updated is not None:  # (`_touches_output`, inline: once per step)
            keys = self.output_keys
            if (keys not in updated) if isinstance(keys, str) else updated.isdisjoint(self.output_key_set):
                return
        self.values_emitted = True
        if self.emits.values:
            self.emit("values", self.read_output())

    def read_output(self) -> Any:
        """The output keys' current values (from the state cache when they are state keys)."""
        keys = self.output_keys
        if not self.output_in_state:
            return read_channels(self.channels, keys)
        state = self.state
        if self.output_all_state:
            return state.copy()
        return {k: state[k] for k in keys if k in state}

    def emit(self, mode: str, payload: Any) -> None:
        self.run.emit(self, mode, payload)

    # ------------------------------------------------------------------ exit
    def finish(self, exc: BaseException | None) -> bool:
        """Save what must be saved on exit; True when `exc` is an interrupt to swallow."""
        if self.recorder is not None:
            self.recorder.step_stopped()
        # (a run that failed reading its input, `first`, has nothing to save: LangGraph
        # saves no empty checkpoint for a new thread then)
        if self.durability == "exit" and self.checkpointer is not None and self.status != "input" and (
            not self.is_nested
            or exc is not None
            # a checkpointer=True subgraph (no task ids in its namespace) keeps its state
            or all(":" not in part for part in self.ns_tuple)
        ):
            if self.exit_delta:
                self._put_exit_delta_writes()
            self._put_checkpoint(self.metadata, exiting=True)
            self._save_all_pending_writes()
        if isinstance(exc, GraphInterrupt) and not self.is_nested:
            if any(t.writes for t in self.tasks.values()):
                self._values(self._apply(list(self.tasks.values())))
            if not exc.args or not exc.args[0]:
                if self.emits.updates:
                    self.emit("updates", {INTERRUPT: exc.args[0] if exc.args else ()})
            self.output = self.read_output()
            return True
        if exc is None:
            self.output = self.read_output()
        return False

    def _collect_exit_delta(self) -> None:
        """Durability "exit": keep the step's delta writes for `_put_exit_delta_writes`.
        The first step skips the writes loaded with the checkpoint (stored on it)."""
        assert self.exit_delta is not None
        first = self.exit_first_step is None
        if first:
            self.exit_first_step = self.step
            self.exit_delta.extend((self.step, NULL_TASK_ID, "", c, v) for c, v in self.exit_command)
        delta = self.delta_keys
        for tid, c, v in self.pending:
            if c not in delta or (first and (tid == NULL_TASK_ID or (tid, c) in self.stored_delta)):
                continue
            task = self.tasks.get(tid)
            self.exit_delta.append((self.step, tid, _path_str(task.path) if task else "", c, v))

    def _put_exit_delta_writes(self) -> None:
        """Durability "exit": store the run's delta writes on the checkpoint it started from
        (the final checkpoint's parent), so a read of the final one replays them; keys that
        snapshot at exit need none. A new thread gets an empty root checkpoint to hold them.

        The first step's writes keep their task paths, so they interleave with the writes
        a resume loaded from that checkpoint; later steps sort after every real task, in
        step order, whether a saver orders a checkpoint's writes by path or by task id."""
        assert self.exit_delta is not None
        if self.has_saved and (self.addressed or self.time_travel):
            # an older checkpoint may have children, which would read writes stored on it
            self.forced_snapshots.update(w[3] for w in self.exit_delta)
        snapshots = self._snapshot_keys(stored_counters(self.metadata))
        pending = [w for w in self.exit_delta if w[3] not in snapshots]
        if not pending:
            return
        conf = self.initial_checkpoint_config[CONF]
        if not self.has_saved:
            stub = {
                "v": CHECKPOINT_VERSION,
                "ts": datetime.now(timezone.utc).isoformat(),
                "id": self.initial_checkpoint_id,
                "channel_values": {},
                "channel_versions": {},
                "versions_seen": {},
                "updated_channels": None,
            }
            root = {k: v for k, v in conf.items() if k != "checkpoint_id"}
            self.io.append(("put", {CONF: root}, stub, {"step": -2}, {}))
            conf = {**root, "checkpoint_id": stub["id"]}
            self.checkpoint_config = {CONF: dict(conf)}
        grouped: dict[tuple[str, str], list[tuple[str, Any]]] = {}
        for step, tid, path, c, v in pending:
            if tid == NULL_TASK_ID:
                key = (exit_task_id(step, tid), "")
            elif step == self.exit_first_step:
                key = (exit_task_id(step, tid), path)
            else:
                key = (exit_late_task_id(step, tid), f"~~{step:010d}{path}")
            grouped.setdefault(key, []).append((c, v))
        config = {CONF: {**conf, "checkpoint_ns": self.ns}}
        for (tid, path), writes in grouped.items():
            self.io.append(("put_writes", config, writes, tid, path))

    def _save_all_pending_writes(self) -> None:
        by_task: dict[str, list[tuple[str, Any]]] = {}
        fresh: set[str] = set()
        for w in self.pending:
            by_task.setdefault(w[0], []).append((w[1], w[2]))
            if id(w) not in self.loaded_ids:
                fresh.add(w[0])
        for tid, writes in by_task.items():
            if tid not in fresh:
                continue  # loaded from the saver, unchanged: saving again would duplicate
            task = self.tasks.get(tid)
            config = {CONF: {**self.checkpoint_config[CONF], "checkpoint_id": self.checkpoint_id}}
            writes = storable_writes(writes, self.graph.untracked_keys)  # type: ignore[assignment]
            self.io.append(("put_writes", config, writes, tid, _path_str(task.path) if task else ""))

    # ------------------------------------------------------------------ checkpoints
    def _put_checkpoint(self, metadata: dict[str, Any], *, exiting: bool = False) -> None:
        if self.checkpointer is None:
            # nothing is saved: an id unique per run and step is enough for task ids
            if not exiting:
                self.metadata = metadata
                self.checkpoint_id = self.run_key + hex(_STEP_HEX | self.step & 0xFFFFFFFF)[3:]
                self.step += 1
            return
        if exiting and self.checkpoint_id == self.checkpoint_id_saved:
            return
        previous_counters = stored_counters(self.metadata) if self.delta_keys else {}
        if not exiting:
            metadata["step"] = self.step
            metadata["parents"] = dict(self.config.get(CONF, {}).get("checkpoint_map", {}))
            self.metadata = metadata
            self.checkpoint_id = new_checkpoint_id(self.step)
            self.checkpoint_ts = datetime.now(timezone.utc).isoformat()
        save = exiting or self.durability != "exit"
        snapshots = (
            self._delta_bookkeeping(previous_counters, exiting, save) if self.delta_keys else ()
        )
        if save:
            checkpoint = self._checkpoint_dict(snapshots)
            versions = checkpoint["channel_versions"]
            new_versions = {k: versions[k] for k in self.unsaved if k in versions}
            self.unsaved = set()
            if self.checkpoint_config[CONF].get("checkpoint_id"):
                self.prev_checkpoint_config = self.checkpoint_config
            put_config = dict(self.checkpoint_config)
            if self.run_metadata:  # LangGraph's savers add its scalar keys to the metadata
                put_config["metadata"] = self.run_metadata
            self.io.append(("put", put_config, checkpoint, dict(self.metadata), new_versions))
            self.checkpoint_config = {
                CONF: {**self.checkpoint_config[CONF], "checkpoint_id": self.checkpoint_id}
            }
            self.checkpoint_id_saved = self.checkpoint_id
            if self.recorder is not None:
                self.recorder.checkpoint(self.metadata)
        if not exiting:
            self.step += 1

    def _delta_bookkeeping(
        self, counters: dict[str, tuple[int, int]], exiting: bool, save: bool
    ) -> set[str]:
        """Advance the delta keys' counters in `self.metadata`; the keys to snapshot now.

        Every checkpoint counts a superstep (the exit save re-saves the last one, so it
        does not count again). A key snapshots when its cadence is due, when an Overwrite
        or a new branch forced it, and — with durability "exit", where the intermediate
        checkpoints and their writes are never saved — when the run wrote it.
        """
        delta = self.delta_keys
        if not exiting:
            updated = [k for k in (self.updated_channels or ()) if k in delta]
            counters = advance_counters(counters, delta, updated)
        snapshots: set[str] = set()
        if save:
            snapshots = self._snapshot_keys(counters)
            self.forced_snapshots -= snapshots
            versions = self.versions.versions
            for k in snapshots:
                counters[k] = (0, 0)
                if k not in versions or (k not in self.unsaved and self.has_saved_version(k)):
                    self._bump_for_snapshot(k)
        kept = nonzero(counters)
        if kept:
            self.metadata[COUNTERS] = kept
        else:
            self.metadata.pop(COUNTERS, None)
        return snapshots

    def _snapshot_keys(self, counters: dict[str, tuple[int, int]]) -> set[str]:
        """The delta keys a checkpoint saved now stores a snapshot of: those due by their
        cadence, and the forced ones that have a value (a key never written included:
        its snapshot stops the ancestor walk before writes that are not this branch's)."""
        channels = self.channels
        return due_for_snapshot(channels, counters, self.versions.versions) | {
            k for k in self.forced_snapshots if channels[k].is_available()
        }

    def has_saved_version(self, key: str) -> bool:
        """Whether the saver already holds a blob for the key's current version."""
        return self.saved_values is not None or self.has_saved

    def _bump_for_snapshot(self, key: str) -> None:
        """A new version for `key`, so the saver stores its snapshot blob (savers store one
        blob per version). It is not a write: whoever had seen the old version has seen
        the new one too, so nothing is triggered by it."""
        versions = self.versions
        old = versions.versions.get(key)
        new = versions.bump()
        versions.versions[key] = new
        subscribers = self.graph.trigger_to_nodes.get(key, ())
        self.unsaved_seen |= mark_bump_seen(versions.seen, key, old, new, subscribers)
        self.unsaved.add(key)

    def _store_delta_input(self, writes: Sequence[tuple[str, Any]]) -> None:
        """Where a delta key's input is read from: the writes saved on the checkpoint the
        run starts from, or — for a new thread, an addressed (older) checkpoint whose other
        children must not read them, or durability "exit" — a snapshot at the input
        checkpoint."""
        delta = self.delta_keys
        mine = [(c, v) for c, v in writes if c in delta]
        if not mine:
            return
        self.forced_snapshots |= overwritten_delta_keys(self.graph.channels, mine)
        if self.exit_delta is not None:
            self.exit_delta.extend((self.step, NULL_TASK_ID, "", c, v) for c, v in mine)
        elif self.has_saved and not self.addressed:
            self._save_writes(str(uuid5(UUID(self.checkpoint_id), INPUT)), mine, "")
        else:
            self.forced_snapshots.update(c for c, _ in mine)

    def _checkpoint_dict(self, snapshots: Iterable[str] = ()) -> dict[str, Any]:
        """The checkpoint to save, re-reading only channels changed since the last save;
        the delta keys in `snapshots` store a full `_DeltaSnapshot` of their value."""
        versions = self.versions.versions
        seen_all = self.versions.seen
        values = self.saved_values
        seen = self.saved_seen
        if values is None or seen is None:
            values, seen = {}, {}
            dirty: Iterable[str] = self.channels
            dirty_seen: Iterable[str] = seen_all
        else:
            dirty, dirty_seen = self.unsaved, self.unsaved_seen
        for k in dirty:
            v = self.channels[k].checkpoint() if k in versions else MISSING
            if v is MISSING:
                values.pop(k, None)
            else:
                values[k] = v
        for n in dirty_seen:
            if n in seen_all:
                seen[n] = dict(seen_all[n])
        for k in snapshots:
            values[k] = DeltaSnapshot(self.channels[k].get())
        self.saved_values, self.saved_seen = values, seen
        self.unsaved_seen = set()
        channel_values = dict(values)
        untracked = self.graph.untracked_keys
        if untracked and channel_values.get(TASKS):
            channel_values[TASKS] = [storable_send(p, untracked) for p in channel_values[TASKS]]
        return {
            "v": CHECKPOINT_VERSION,  # (keys in LangGraph's order, as users print them)
            "ts": self.checkpoint_ts,
            "id": self.checkpoint_id,
            "channel_values": channel_values,
            "channel_versions": dict(versions),
            # inner dicts are never mutated once saved (changed nodes get a new copy)
            "versions_seen": dict(seen),
            "updated_channels": (
                sorted(self.updated_channels)
                if self.updated_channels and self.records_updated_channels
                else None
            ),
        }

    def _checkpoint_payload(self) -> dict[str, Any]:
        from lgnb.pregel._state import checkpoint_stream_payload

        return checkpoint_stream_payload(self)


def _path_str(path: tuple) -> str:
    if not path:
        return ""
    parts = [f"{p:010d}" if isinstance(p, int) else str(p) for p in path]
    return "~".join(parts)


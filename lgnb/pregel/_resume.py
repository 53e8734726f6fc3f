"""Answers to interrupts: `Command` input, resume values and their checks, per loop.

`Command(resume=...)` becomes a write of the null task (`__resume__`) or a map of
interrupt ids; a task's `interrupt()` calls find their answers here, in the task's saved
RESUME writes, the id map, or the pending null resume — of this run or of the run that
contains it (an interrupt inside a subgraph is answered through the parent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import INTERRUPT, NULL_TASK_ID, RESUME, START, TASKS
from lgnb._internal.ids import interrupt_id, is_interrupt_id
from lgnb.channels.base import MISSING
from lgnb.errors import EmptyInputError, InvalidUpdateError, UnknownInterruptError
from lgnb.pregel._delta import ensure_message_ids
from lgnb.pregel._status import read_task_statuses
from lgnb.types import Command, Send

if TYPE_CHECKING:
    from lgnb.pregel._task import Task

__all__ = ("ResumeMixin", "SAVED_SPECIAL")

SAVED_SPECIAL = {"__error__": -1, "__scheduled__": -2, INTERRUPT: -3, RESUME: -4}
"""Writes a saver keeps one of per task (the latest replaces the earlier)."""


class ResumeMixin:
    """The Loop's handling of Command input and resume values (see the module doc)."""

    # provided by Loop
    pending: list[tuple[str, str, Any]]
    carried: list[tuple[str, str, Any]]
    delta_keys: list[str]
    resume_map: dict[str, Any] | None
    parent_ctx: Any
    checkpointer: Any
    is_nested: bool
    has_saved: bool
    thread_id: Any
    graph: Any
    nodes: Any
    channels: dict[str, Any]
    versions: Any

    def _plan(self) -> list[Task]:  # pragma: no cover - Loop's
        raise NotImplementedError

    def _save_writes(self, task_id: str, writes: list[tuple[str, Any]], path: str) -> None:  # pragma: no cover
        raise NotImplementedError

    def _apply_command(self, cmd: Command, *, store: bool = True) -> list[tuple[str, Any]]:
        """`Command` as input: goto, resume and update become writes of the null task,
        saved on the checkpoint the run starts from (`store`), or only carried into the
        next checkpoint (`self.carried`). Returns the writes."""
        if cmd.graph == Command.PARENT:
            raise InvalidUpdateError("There is no parent graph")
        writes: list[tuple[str, Any]] = []
        resume_is_map = False
        gotos = cmd.goto if isinstance(cmd.goto, (list, tuple)) else [cmd.goto] if cmd.goto else []
        for go in gotos:
            if isinstance(go, Send):
                writes.append((TASKS, go))
            elif isinstance(go, str):
                writes.append((self.graph.branch_channel(go), START))
            else:
                raise TypeError(f"In Command.goto, expected Send/str, got {type(go).__name__}")
        if cmd.resume is not None:
            if self.checkpointer is None:
                raise RuntimeError(
                    "Cannot use Command(resume=...) without checkpointer: compile the graph "
                    "with `checkpointer=InMemorySaver()` (or a SqliteSaver) and pass a "
                    "`thread_id` in the config."
                )
            resume = cmd.resume
            if isinstance(resume, dict) and not resume and not self.is_nested:
                # LangGraph reads `{}` as a resume map naming no interrupt: it answers none,
                # and the node asks again (its strict mode refuses it, as here)
                pending = sorted(self.pending_interrupt_ids())
                raise UnknownInterruptError(
                    f"Command(resume={{}}) on thread {self._thread_label()} is a resume map that names "
                    "no interrupt: LangGraph answers nothing with it and the question is asked again. "
                    "To answer with an empty dict, key it by the interrupt's id: "
                    f"Command(resume={{{pending[0]!r}: {{}}}})" if pending else
                    f"Command(resume={{}}) on thread {self._thread_label()} is a resume map that names "
                    "no interrupt (none is pending): start the thread with an input, or answer a "
                    "pending question by its id (`graph.get_state(config).interrupts`).",
                    reason="empty_map",
                    pending_ids=pending,
                )
            if isinstance(resume, dict) and resume and all(is_interrupt_id(k) for k in resume):
                resume_is_map = True
                self.resume_map = resume
                if not self.is_nested:
                    self._check_resume_map(resume)
            else:
                if not self.is_nested:
                    self._check_something_to_resume()
                if len(self.pending_interrupt_ids()) > 1:
                    raise RuntimeError(
                        "When there are multiple pending interrupts, you must specify the "
                        "interrupt id when resuming. Docs: https://docs.langchain.com/oss/"
                        "python/langgraph/interrupts#handling-multiple-interrupts."
                    )
                writes.append((RESUME, resume))
        if cmd.update:
            writes.extend(cmd._update_as_tuples())
        if not writes and not resume_is_map:
            raise EmptyInputError("Received empty Command input")
        if not writes:
            return writes
        if self.delta_keys:
            ensure_message_ids(self.graph.channels, writes)
        if store:
            self._record_null_writes(writes)
        else:
            self.carried.extend((NULL_TASK_ID, c, v) for c, v in writes)
        return writes

    def _thread_label(self) -> str:
        return repr(self.thread_id) if self.thread_id is not None else "(no thread_id)"

    def _check_something_to_resume(self) -> None:
        """`Command(resume=v)` needs a pending interrupt or a breakpoint to continue from."""
        if not self.has_saved:
            raise UnknownInterruptError(
                f"Nothing to resume on thread {self._thread_label()}: it has no checkpoint. "
                "Start it with an input first, e.g. `graph.invoke(inputs, config)`.",
                reason="not_pending",
            )
        pending = self.pending_interrupt_ids()
        if not pending and not self._plan():
            raise UnknownInterruptError(
                f"Nothing to resume on thread {self._thread_label()}: it has no pending "
                "interrupt and no step left to run (the run finished). Start a new run with "
                "an input, or fork an earlier checkpoint (see `get_state_history`).",
                reason="not_pending",
            )
        if pending:
            self._check_interrupted_nodes_exist(pending, every=True)

    def _check_resume_map(self, resume: dict[str, Any]) -> None:
        """Every id of `Command(resume={id: value})` must name a pending interrupt."""
        pending = self.pending_interrupt_ids()
        unknown = sorted(set(resume) - pending)
        if unknown:
            raise UnknownInterruptError(
                f"Unknown or already-answered interrupt id(s) {unknown} on thread "
                f"{self._thread_label()}. Pending interrupts: {sorted(pending) or 'none'}. "
                "Take the ids from `graph.get_state(config).interrupts`.",
                reason="not_pending",
                interrupt_ids=unknown,
                pending_ids=sorted(pending),
            )
        self._check_interrupted_nodes_exist(set(resume), every=False)

    def _check_interrupted_nodes_exist(self, ids: set[str], *, every: bool) -> None:
        """A graph recompiled without the node an interrupt was raised in would drop its
        answer silently (LangGraph does): refuse it, naming the node. Raised when the
        saved checkpoint still triggers nodes this graph lacks and the interrupts `ids`
        (`every`: all of them; else any) belong to no task this graph would run."""
        missing = self._missing_triggered_nodes()
        if not missing:
            return
        planned = {t.id for t in self._plan()}
        orphaned = sorted(
            i.id
            for tid, st in read_task_statuses(self.pending).items()
            if tid not in planned
            for i in st.pending_interrupts
            if i.id in ids
        )
        if not orphaned or (every and len(orphaned) < len(ids)):
            return
        where = (
            f"node {missing[0]!r}, which this graph no longer has"
            if len(missing) == 1
            else f"one of the nodes {', '.join(map(repr, missing))}, which this graph no longer has"
        )
        have = ", ".join(repr(n) for n in self.nodes if n != START) or "none"
        raise UnknownInterruptError(
            f"Cannot resume thread {self._thread_label()}: its pending interrupt was raised "
            f"in {where} (its nodes: {have}), so the "
            "answer would be lost. Nothing was written. Compile the graph with that node "
            "again to answer it; or leave the interrupt behind: start a new run with an "
            "input (`graph.invoke(inputs, config)`), move the thread on with "
            "`graph.update_state(config, values, as_node=...)`, or fork an earlier "
            "checkpoint (see `get_state_history`).",
            reason="not_pending",
            interrupt_ids=orphaned,
            pending_ids=sorted(self.pending_interrupt_ids()),
        )

    def _missing_triggered_nodes(self) -> list[str]:
        """Nodes the saved checkpoint triggers (an edge's trigger not yet seen by the
        node, or a pending Send) that this graph does not have, in name order."""
        nodes = self.nodes
        versions, seen = self.versions.versions, self.versions.seen
        missing: set[str] = set()
        for chan, version in versions.items():
            if chan.startswith("branch:to:"):
                name = chan[len("branch:to:"):]
            elif chan.startswith("join:") and chan.count(":") >= 2:
                name = chan.rsplit(":", 1)[1]
            else:
                continue
            if name in nodes or name in missing:
                continue
            before = seen.get(name, {}).get(chan)
            try:
                if before is None or version > before:
                    missing.add(name)
            except TypeError:  # versions of two schemes: count it as triggered
                missing.add(name)
        tasks = self.channels.get(TASKS)
        if tasks is not None and tasks.is_available():
            # (LangGraph's `Send` too, from a thread it wrote: as `plan_tasks` reads them)
            for packet in tasks.get():
                node = getattr(packet, "node", None)
                if type(packet).__name__ == "Send" and isinstance(node, str) and node not in nodes:
                    missing.add(node)
        return sorted(missing)

    def _record_null_writes(self, writes: list[tuple[str, Any]]) -> None:
        special = {c for c, _ in writes if c in SAVED_SPECIAL}
        self.pending = [
            w for w in self.pending if not (w[0] == NULL_TASK_ID and w[1] in special)
        ]
        writes = sorted(writes, key=lambda w: w[0] in SAVED_SPECIAL)
        all_null = [(c, v) for t, c, v in self.pending if t == NULL_TASK_ID] + writes
        self.pending.extend((NULL_TASK_ID, c, v) for c, v in writes)
        self._save_writes(NULL_TASK_ID, all_null, "")

    def pending_interrupt_ids(self) -> set[str]:
        """Interrupts saved in the current checkpoint that have no answer yet."""
        return {
            i.id for st in read_task_statuses(self.pending).values() for i in st.pending_interrupts
        }

    def resume_for(self, task: Task) -> tuple[list[Any], Any]:
        """(answers already given to this task's interrupts, a pending null resume)."""
        answers: list[Any] = []
        for tid, chan, val in self.pending:
            if tid == task.id and chan == RESUME:
                answers = list(val) if isinstance(val, list) else [val]
                break
        resume_map = self.effective_resume_map()
        if resume_map:
            nxt = interrupt_id(task.ns, len(answers))
            if nxt in resume_map:
                answers.append(resume_map[nxt])
            elif (first := interrupt_id(task.ns, 0)) in resume_map:
                answers.append(resume_map[first])
        return answers, None

    def effective_resume_map(self) -> dict[str, Any] | None:
        """`Command(resume={id: value})` given to this run or to an enclosing one."""
        loop: Any = self
        while loop is not None:
            if loop.resume_map:
                return loop.resume_map
            loop = loop.parent_ctx.loop if loop.parent_ctx is not None else None
        return None

    def allow_response_schema(self, schema: Any) -> None:
        """Let this run (and the runs enclosing it) store the classes `schema` names:
        an `interrupt(response_schema=...)` answer is what its node gets back."""
        from lgnb.graph._allowlist import allow_response_schema

        allow_response_schema(self, schema)

    def peek_null_resume(self) -> Any:
        """The pending `Command(resume=v)` value (here or in an enclosing run), unconsumed."""
        for tid, chan, val in self.pending:
            if tid == NULL_TASK_ID and chan == RESUME:
                return val
        if self.parent_ctx is not None:
            return self.parent_ctx.loop.peek_null_resume()
        return MISSING

    def take_null_resume(self) -> Any:
        """Consume the resume value of `Command(resume=v)` (first interrupt that asks);
        an interrupt inside a subgraph is answered by the value given to the parent."""
        for i, (tid, chan, val) in enumerate(self.pending):
            if tid == NULL_TASK_ID and chan == RESUME:
                del self.pending[i]
                return val
        if self.parent_ctx is not None:
            return self.parent_ctx.loop.take_null_resume()
        return MISSING

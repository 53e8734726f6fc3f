"""`lgnb.run(graph, input)`: run a graph as a live view, without blocking the kernel.

A synchronous graph's `stream` runs in a worker thread (`astream` on lgnb's background
loop), so a busy node never blocks the kernel: other cells execute, clicks arrive. Chunks
are reduced where they are produced, in the run's thread, into run state and content
patches (`_stream`, `_store`), so `run.status` / `run.result` are current from any thread
at any time. Traffic to the browser is coalesced: at most one trait sync and one batch of
patches per flush interval, nothing dropped, order kept; it is sent from the run's thread
or lgnb's timer thread, never waiting for the kernel's loop, so the view streams while
another cell runs. One lock per run (`Run._lock`) serialises its state changes and its
sends: the producer, the timer, the page's clicks and the user's calls take turns, and one
view never has two senders at once. ipykernel's IOPub socket takes sends from any thread
(each thread gets its own pipe to the IOPub thread, which sends in arrival order).
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import itertools
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import traitlets

from lgnb.draw import START, jsonable, layout
from lgnb.pregel._lease import check_multitask
from lgnb.pregel._run import CUSTOM_WITH_TASK
from lgnb.types import MultitaskStrategy
from lgnb.widgets._async_nodes import needs_async
from lgnb.widgets._forms import (
    FormInvalid,
    answer_for,
    answered_with,
    asked,
    describe,
    form_for,
    no_answer_for_raised,
    raised,
    stopped_by,
    tools_of,
    waits_without_question,
)
from lgnb.widgets._loops import (
    Timer,
    background_loop,
    call_later,
    loop_bound_error,
    loop_for_run,
    loop_of,
    refuses_sync_here,
    running_loop,
)
from lgnb.widgets._panel import StatePanel
from lgnb.widgets._pump import Pump
from lgnb.widgets._runtime import View, show_in_notebook
from lgnb.widgets._snapshot import run_html
from lgnb.widgets._snapshot_svg import mark, path_marks, svg_for_dot
from lgnb.widgets._store import CAPS, ContentStore, Patch, coalesce
from lgnb.widgets._stream import StreamReducer
from lgnb.widgets._thread import (
    aleased_stream,
    cancel_segment,
    check_not_busy,
    leased_stream,
    segment_options,
    view_takes_lease,
    was_cancelled,
)
from lgnb.widgets._title import view_title
from lgnb.widgets.graph_view import GraphMixin, check_graph

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from lgnb.types import StreamOptions

#: Comm messages a view sends per second at most (trait syncs and patch batches together;
#: the budget is < 30/s). A flush that sent k messages defers the next one by k / MESSAGE_RATE,
#: forced flushes (start, end, a new view's hello) included, so any 1 s window holds at most
#: MESSAGE_RATE + 3 messages. While tokens stream, one batch goes out every FLUSH_INTERVAL.
MESSAGE_RATE = 25
FLUSH_INTERVAL = 1 / MESSAGE_RATE
VIEW_MODES = ("values", "updates", "messages", "custom", "tasks")
SETTLED = ("interrupted", "done", "error", "cancelled")

TEXT_ONLY_STREAM = (
    "Note: {models} streams text only. lgnb.run streams every model (stream_mode \"messages\") to "
    "show its tokens, so if the messages it was scripted with hold tool calls, its stream drops "
    "them (graph.invoke keeps them). To script tool calls, use lgnb.testing.ScriptedChatModel."
)

NO_GENERATIONS_HINT = (
    " (A fake model was asked to stream a message with tool calls and no text: "
    "GenericFakeChatModel cannot stream one. Use lgnb.testing.ScriptedChatModel, which streams tool calls.)"
)

NO_CHECKPOINTER = (
    "This run paused at an interrupt, but the graph has no checkpointer, so it cannot be "
    "resumed. Compile with one and run on a thread: "
    "graph = builder.compile(checkpointer=InMemorySaver())  "
    "(from lgnb.checkpoint.memory or langgraph.checkpoint.memory), then "
    "lgnb.run(graph, input, {'configurable': {'thread_id': '1'}})."
)


class RunView(GraphMixin, View):
    """What the browser shows of a run: graph, status, and (via patches) content."""

    _view_kind = traitlets.Unicode("run").tag(sync=True)
    status = traitlets.Unicode("pending").tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    elapsed = traitlets.Float(0.0).tag(sync=True)
    active = traitlets.List(traitlets.Unicode()).tag(sync=True)
    visited = traitlets.List(traitlets.Unicode()).tag(sync=True)
    taken = traitlets.List(traitlets.List()).tag(sync=True)
    error = traitlets.Dict().tag(sync=True)
    interrupts = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: one approval form per pending interrupt (see `_forms`); its buttons send "resume"
    forms = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: why the last resume from the view failed ("" once a resume starts)
    form_error = traitlets.Unicode("").tag(sync=True)
    #: a run paused at a static breakpoint (interrupt_before / interrupt_after, no question)
    #: or stopped by a node raising NodeInterrupt (no answer to give): {"next": [the nodes
    #: the thread runs next], "stopped": [{"node", "says"} per NodeInterrupt]}; {} otherwise.
    #: Its button sends "continue"
    breakpoint = traitlets.Dict().tag(sync=True)
    #: answers on record: {"interrupt_id", "node", "by" (page|code), "at" (HH:MM:SS), "asked"
    #: (the question in one line, or ""), "summary"}
    answers = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: answers the page collected, not sent yet: interrupt id → summary
    held = traitlets.Dict().tag(sync=True)
    #: how many times each node ran in this thread (this run's segments), and the nodes that
    #: re-run from their first line in the current segment because they were resumed
    runs = traitlets.Dict().tag(sync=True)
    reruns = traitlets.List(traitlets.Unicode()).tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    thread = traitlets.Unicode("").tag(sync=True)
    snapshot = traitlets.Dict().tag(sync=True)
    #: the state panel: the state after the latest step, folded to a bounded size (see `_panel`):
    #: {"step", "status", "keys": [{"key", "value", "changed"}], "more_keys", "changed",
    #: "tasks": [{"node", "count", "updates", "more"}]}
    panel = traitlets.Dict().tag(sync=True)
    #: rows the page keeps per bounded list, the kernel's own caps ({"log", "updates"}); the
    #: page counts what it drops and says so
    caps = traitlets.Dict(default_value=dict(CAPS)).tag(sync=True)

    _controller: Run | None = None
    _snapshot_on = ("status",)

    def _static_html(self) -> str:
        state = {k: getattr(self, k) for k in ("title", "status", "step", "elapsed", "thread", "notice",
                                               "error", "visited", "interrupts", "answers")}
        content = self._controller.content if self._controller is not None else self.snapshot
        return run_html(state, content, svg=mark(svg_for_dot(self.dot), path_marks(self._drawing, self.visited, self.taken)))

    def _msg_hello(self, content: dict[str, Any]) -> None:
        if self._controller is not None:
            self._controller._send_snapshot()

    def _msg_resume(self, content: dict[str, Any]) -> None:
        if self._controller is not None:
            self._controller._resume_from_view(content)
        else:
            self.send({"kind": "resume-result", "id": content.get("id"), "ok": False,
                       "error": "this view has no run in this kernel (re-run the cell that made it)"})

    def _msg_answer(self, content: dict[str, Any]) -> None:
        if self._controller is not None:
            self._controller._answer_from_view(content)
        else:
            self.send({"kind": "resume-result", "id": content.get("id"), "ok": False,
                       "interrupt_id": content.get("interrupt_id"),
                       "error": "this view has no run in this kernel (re-run the cell that made it)"})

    def _msg_send_held(self, content: dict[str, Any]) -> None:
        if self._controller is not None:
            self._controller._send_held(content)

    def _msg_continue(self, content: dict[str, Any]) -> None:
        if self._controller is not None:
            self._controller._continue_from_view(content)
        else:
            self.send({"kind": "resume-result", "id": content.get("id"), "ok": False, "interrupt_id": "",
                       "error": "this view has no run in this kernel (re-run the cell that made it)"})

    def _msg_cancel(self, content: dict[str, Any]) -> None:
        if self._controller is not None and self._controller.status == "running":
            self._controller.cancel()


def _has_checkpointer(graph: Any) -> bool:
    """Whether the graph's threads persist (so a paused run can resume): a local graph
    compiled with a saver, or a RemoteGraph (lgnb's or LangGraph's, told by its
    `assistant_id`), whose LangGraph server checkpoints every thread."""
    if getattr(graph, "assistant_id", None) is not None:
        return True
    saver = getattr(graph, "checkpointer", None)
    return saver is not None and saver is not False


def view_modes(graph: Any, modes: list[str], *, checkpointed: bool) -> list[str]:
    """The stream modes a run view asks `graph` for (`modes`: the view's and the user's).

    An lgnb graph streams custom events naming their task (`CUSTOM_WITH_TASK`, instead of
    `custom`), so the view shows each under the node that wrote it, also while parallel
    branches run. A local graph with a saver streams its `checkpoints`, whose steps the view
    numbers its steps by (not a remote one's: each would carry the whole state over the wire).
    """
    from lgnb.pregel.main import Pregel
    from lgnb.remote._edge import is_remote

    if isinstance(graph, Pregel):
        modes = [CUSTOM_WITH_TASK if mode == "custom" else mode for mode in modes]
    if checkpointed and not is_remote(graph):
        modes.append("checkpoints")
    return list(dict.fromkeys(modes))


async def _chained_async(first: Any, then: Callable[[], Any]) -> Any:
    """The chunks of async iterator `first`, then those of the one `then()` opens."""
    async for chunk in first:
        yield chunk
    async for chunk in then():
        yield chunk


def first_step(graph: Any) -> int:
    """The checkpoint step of a fresh thread's first task: 1 for a graph whose input is
    written by a hidden `__start__` task (a StateGraph: that is step 0), 0 for one whose input
    starts its first node directly (a functional-API `@entrypoint`, a hand-built Pregel)."""
    from lgnb.remote._edge import is_remote

    nodes = None if is_remote(graph) else getattr(graph, "nodes", None)
    if isinstance(nodes, Mapping) and nodes and START not in nodes:
        return 0
    return 1


def _refused_resume(exc: BaseException) -> bool:
    """An error by which the engine refused a resume before saving anything (its answer
    did not match `response_schema`; a question no longer pending), on either engine."""
    from lgnb.errors import is_invalid_resume

    return is_invalid_resume(exc) or any(k.__name__ == "UnknownInterruptError" for k in type(exc).__mro__)


def _command_type(graph: Any) -> Any:
    """`Command` from the graph's own library (lgnb or langgraph)."""
    root = type(graph).__module__.split(".")[0]
    for name in (root, "lgnb", "langgraph"):
        try:
            return importlib.import_module(f"{name}.types").Command
        except (ImportError, AttributeError):
            continue
    raise RuntimeError("cannot find a Command type (neither lgnb.types nor langgraph.types)")


_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(method: _F) -> _F:
    """Run the method holding the run's lock (re-entrant): one thread at a time changes a
    run's state or sends to its view."""

    @wraps(method)
    def locked(self: Run, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked  # type: ignore[return-value]


class _Stale(RuntimeError):
    """An answer to a question the thread no longer asks."""


class Run:
    """A live run of a graph. Create with :func:`lgnb.run`.

    `status` is one of pending, running, interrupted, done, error, cancelled.
    """

    def __init__(self, graph: Any, input: Any, config: Mapping[str, Any] | None = None, *,
                 use_async: bool | None = None, title: str | None = None, multitask: MultitaskStrategy | None = "reject",
                 **stream_options: Any) -> None:
        check_graph(graph, what="lgnb.run")
        from lgnb.remote._edge import for_views, is_remote

        graph = for_views(graph)  # a server's wire dicts become messages and Interrupts here, once
        if use_async is None:
            use_async = needs_async(graph)
        self._multitask = check_multitask(multitask)
        if not callable(getattr(graph, "astream" if use_async else "stream", None)):
            raise TypeError(f"lgnb.run: {type(graph).__name__} has no {'astream' if use_async else 'stream'}()")
        self.graph = graph
        self.config: dict[str, Any] = dict(config or {})
        configurable = dict(self.config.get("configurable") or {})
        self.checkpointed = _has_checkpointer(graph)
        # a server thread the run may continue: the view reads its step before the first segment
        self._saved_thread = self.checkpointed and "thread_id" in configurable and hasattr(graph, "thread_step")
        if self.checkpointed and "thread_id" not in configurable:
            # a LangGraph server takes only UUID thread ids
            configurable["thread_id"] = str(uuid.uuid4()) if is_remote(graph) else f"lgnb-{uuid.uuid4().hex[:12]}"
        if configurable:
            self.config["configurable"] = configurable
        modes = stream_options.pop("stream_mode", None) or []
        modes = [modes] if isinstance(modes, str) else list(modes)
        self._modes = view_modes(graph, [*VIEW_MODES, *modes], checkpointed=self.checkpointed)
        stream_options.pop("subgraphs", None)
        self._options = stream_options
        self._use_async = use_async
        self._control: Any = None  # the running segment's RunControl (`_thread`)
        if self.checkpointed:
            check_not_busy(graph, self.config, self._multitask)

        self.view = RunView()
        self.view._controller = self
        self.view.title = view_title(graph, title, what="lgnb.run")
        self.view._set_graph(graph)
        self.view.thread = str(configurable.get("thread_id", ""))
        edges = {(e.source, e.target) for e in layout(graph, expanded=True).edges}
        self._reducer = StreamReducer(edges=edges, first_step=first_step(graph))
        self._panel = StatePanel()
        self._store = ContentStore()
        self._pending: list[Patch] = []
        self._loop = loop_for_run()
        self._status = "pending"
        self._result: Any = None
        self._error: BaseException | None = None
        self._view_error: BaseException | None = None
        self._settled = threading.Event()
        self._waiters: list[asyncio.Future[None]] = []
        self._pump: Pump | None = None
        self._answers: list[dict[str, Any]] = []
        self._held: dict[str, tuple[Any, str]] = {}
        # a resume's undo, until its segment settles: what the run showed and held before
        # (answers on record, held answers, the questions, error rows); a refused resume
        # puts it back
        self._undo: tuple[int, dict[str, tuple[Any, str]], list[Any], dict[str, Any], int] | None = None
        self._refused: BaseException | None = None  # raised once by the next wait()
        self._requests: set[Any] = set()  # request ids of the page already handled (one action once)
        self._tools: dict[str, Any] | None = None
        self._noted_models: list[str] = []  # text-only streaming models the notice named
        self._flush_handle: Timer | None = None
        self._flush_timers = 0  # timers scheduled so far: a stale one (a flush went out since) does nothing
        self._next_flush = 0.0  # monotonic time the next (unforced) flush may go out
        self._elapsed_before = 0.0
        self._t0 = 0.0
        self._displayed_at: object = object()
        self._batches = 0
        #: comm messages sent to the browser (trait syncs + patch batches), patches, batches
        self.stats = {"messages": 0, "patches": 0, "batches": 0, "trait_syncs": 0, "chunks": 0}
        self._lock = threading.RLock()
        self._call(lambda: self._start(input))

    # -- public API --------------------------------------------------------------
    @property
    def status(self) -> str:
        """pending, running, interrupted, done, error or cancelled. Read under the run's
        lock: a read while the run settles (its last patches and snapshot going to the
        page) waits for that, so "done" means the view was sent everything."""
        with self._lock:
            return self._status

    @property
    def result(self) -> Any:
        """The latest state values (final once `status` is done)."""
        return self._result

    @property
    def error(self) -> BaseException | None:
        return self._error

    @property
    def view_error(self) -> BaseException | None:
        """The first failure to send the view an update (None while every send went out).

        The run never depends on its view: a failed send is recorded here and said in the
        view's notice (when the page still listens), the run goes on and settles as usual.
        """
        return self._view_error

    @property
    def interrupts(self) -> list[dict[str, Any]]:
        """Pending interrupts as ``{"id", "value", "node"}`` (JSON-safe values) while interrupted."""
        if self._status != "interrupted":
            return []
        return [{k: v for k, v in i.items() if k != "response_schema"} for i in self._reducer.interrupts]

    @property
    def forms(self) -> list[dict[str, Any]]:
        """The approval forms the view shows: one per pending interrupt."""
        if self._status != "interrupted":
            return []
        # from the payloads the nodes passed: an input's value is then whole, not the cut
        # copy the view shows (an argument edited on the page must not come back cut)
        payloads = self._reducer.payloads
        return [dict(form_for(answered_with(i, payloads), self._form_context()), resumable=self.checkpointed)
                for i in self._reducer.interrupts if not raised(i)]

    @property
    def answers(self) -> list[dict[str, Any]]:
        """Answers given so far, in order: ``{"interrupt_id", "node", "by": "page" | "code",
        "at": "HH:MM:SS", "asked" (the question in one line), "summary", "value"}``."""
        return [dict(a) for a in self._answers]

    def _form_context(self) -> dict[str, Any]:
        if self._tools is None:
            try:
                self._tools = tools_of(self.graph)
            except Exception:  # noqa: BLE001 - no tools found only costs typed argument fields
                self._tools = {}
        return {"tools": self._tools}

    @property
    def elapsed(self) -> float:
        running = time.monotonic() - self._t0 if self._status == "running" else 0.0
        return self._elapsed_before + running

    @property
    def content(self) -> dict[str, Any]:
        """Snapshot of what the view shows: messages, progress, log, updates, errors."""
        with self._lock:
            return self._store.snapshot()

    def wait(self, timeout: float | None = None) -> Any:
        """Block until the run pauses or ends; return `result`, re-raise a node's error.

        Works in scripts, under nbclient and in a kernel cell: the run's own thread feeds
        the view while the cell waits (nothing needs the blocked kernel loop), and the
        browser keeps receiving updates live. Interrupted (the notebook's stop button), it
        cancels the run (`cancel()`) and re-raises KeyboardInterrupt.
        """
        saver = getattr(self.graph, "checkpointer", None)
        if not self._settled.is_set() and refuses_sync_here(saver):  # it would wait for itself
            raise loop_bound_error(saver, "Run.wait", instead="`await run`")
        try:
            settled = self._settled.is_set() or self._settled.wait(timeout)
        except KeyboardInterrupt:  # the stop button stops what the cell waits for, then says so
            self.cancel()
            raise
        if not settled:
            raise TimeoutError(f"run still {self._status} after {timeout} s")
        self.view._publish_snapshot()  # from the waiting cell, so a headless run saves it too
        return self._outcome()

    def __await__(self) -> Any:
        return self._wait_async().__await__()

    async def _wait_async(self) -> Any:
        if not self._settled.is_set():
            if running_loop() is self._loop:
                await asyncio.shield(self._new_waiter())
            else:
                await asyncio.get_running_loop().run_in_executor(None, self._settled.wait)
        self.view._publish_snapshot()
        return self._outcome()

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the run as a standalone HTML file: graph, status, transcript, progress,
        updates, forms and answers as they stand now (no script, no network)."""
        return self.view.to_html(path)

    def resume(self, value: Any = None) -> Run:
        """Resume an interrupted run with `value` (or ``{interrupt_id: value}``).

        Resumes with ``Command(resume=...)`` on the same thread config; a run paused at a
        static breakpoint (no interrupt value) continues with ``None`` input. The answer is
        put on record (`answers`, and a line in the view: "answered by code at ...").
        """
        return self._resume(value, by="code")

    @_locked
    def _resume(self, value: Any, *, by: str, summaries: Mapping[str, str] | None = None) -> Run:
        if self._status in ("running", "pending"):
            raise RuntimeError("the run is still running: wait until it pauses (run.wait()) before resume()")
        if self._status != "interrupted":
            raise RuntimeError(f"the run has already ended ({self._status}); there is nothing to resume. "
                               "Start a new one with lgnb.run(...).")
        if not self.checkpointed:
            raise RuntimeError(NO_CHECKPOINTER)
        check_not_busy(self.graph, self.config, self._multitask)  # another run took the thread
        # the questions: a NodeInterrupt beside them takes no answer (its node runs again)
        ids = [i["id"] for i in self._reducer.interrupts if not raised(i)]
        if waits_without_question(self._reducer.interrupts):  # a breakpoint, or NodeInterrupt
            no_answer_for_raised(value)
            command: Any = None
            answered: dict[str, Any] = {}
        elif isinstance(value, Mapping) and value and set(map(str, value)) <= set(ids):
            command = _command_type(self.graph)(resume=dict(value))
            answered = {str(k): v for k, v in value.items()}
        elif len(ids) > 1:
            raise ValueError(f"{len(ids)} interrupts are pending (ids {', '.join(ids)}): "
                             "resume with a map {interrupt_id: value}")
        else:  # keyed too: Command(resume=None) unkeyed is no answer for LangGraph
            command = _command_type(self.graph)(resume={ids[0]: value})
            answered = {ids[0]: value}
        self._undo = (len(self._answers), dict(self._held), list(self._reducer.interrupts),
                      dict(self._reducer.payloads), len(self._store.errors))
        at = time.strftime("%H:%M:%S")
        nodes = {i["id"]: i.get("node", "") for i in self._reducer.interrupts}
        values = {i["id"]: i.get("value") for i in self._reducer.interrupts}
        for iid, answer in answered.items():
            summary = (summaries or {}).get(iid) or describe(answer, values.get(iid))
            self._answers.append({"interrupt_id": iid, "node": nodes.get(iid, ""), "by": by, "at": at,
                                  "asked": asked(values.get(iid)), "summary": summary, "value": jsonable(answer)})
            self._held.pop(iid, None)
        self._status = "running"  # at once, so a second resume() is refused
        self._settled.clear()
        # the answer goes to the thread where it paused: a replay or a fork paused on a new
        # checkpoint, not on the one its config names
        config = self._thread_config() if self.checkpointed else self.config
        self._call(lambda: self._start(command, config))
        return self

    @_locked
    def _resume_from_view(self, content: Mapping[str, Any]) -> None:
        """The old message ({kind: "resume", interrupt_id, value}): a value sent as it is,
        still keyed by interrupt id and checked against what is pending now."""
        iid = str(content.get("interrupt_id") or "")
        self._page_answer(content, iid, lambda interrupt: (content.get("value"), describe(content.get("value"))))

    @_locked
    def _answer_from_view(self, content: Mapping[str, Any]) -> None:
        """A form's answer ({kind: "answer", id, interrupt_id, picks, hold}): the kernel
        computes and validates the value, then resumes keyed by interrupt id (or holds it
        until "send" when several questions are open). Runs in the comm handler, on the
        kernel loop: resuming only starts the run, it never waits."""
        iid = str(content.get("interrupt_id") or "")
        given = content.get("picks")
        picks: list[dict[str, Any]] = given if isinstance(given, list) else []
        self._page_answer(content, iid, lambda interrupt: answer_for(
            answered_with(interrupt, self._reducer.payloads), picks, self._form_context()), hold=bool(content.get("hold")))

    def _thread_config(self) -> dict[str, Any]:
        """The run's config addressing its thread's latest checkpoint (no `checkpoint_id`)."""
        configurable = {k: v for k, v in (self.config.get("configurable") or {}).items() if k != "checkpoint_id"}
        return {**self.config, "configurable": configurable}

    def _thread_pending(self) -> list[str]:
        """Interrupt ids pending on the thread now (its latest checkpoint), else the run's."""
        ours = [i["id"] for i in self._reducer.interrupts]
        get_state = getattr(self.graph, "get_state", None)
        if not callable(get_state) or not self.checkpointed:
            return ours
        try:
            snapshot = get_state(self._thread_config())
        except Exception:  # noqa: BLE001 - a thread we cannot read now: trust what the run saw
            return ours
        found = getattr(snapshot, "interrupts", None)
        if found is None:
            return ours
        return [str(getattr(i, "id", None) or (i.get("id") if isinstance(i, Mapping) else "")) for i in found]

    def _check_pending(self, iids: list[str]) -> None:
        if self._status != "interrupted":
            if self._status in ("running", "pending"):
                raise RuntimeError("the run is still running (this answer was sent already, or the run "
                                   "resumed from code): nothing was sent")
            raise RuntimeError(f"the run has already ended ({self._status}); there is nothing to resume")
        if not self.checkpointed:
            raise RuntimeError(NO_CHECKPOINTER)
        pending = self._thread_pending()
        stale = [i for i in iids if i not in pending]
        if stale:
            raise _Stale("this question is no longer pending on the thread (answered elsewhere, or the "
                         "thread moved on); nothing was sent"
                         + (f". Pending now: {', '.join(pending)}" if pending else ""))

    def _page_answer(self, content: Mapping[str, Any], iid: str, compute: Any, *, hold: bool = False) -> None:
        request = content.get("id")
        reply: dict[str, Any] = {"kind": "resume-result", "id": request, "interrupt_id": iid}
        try:
            self._claim(request)
            if not iid:
                raise RuntimeError("the answer names no interrupt: nothing was sent")
            self._check_pending([iid])
            interrupt = next((i for i in self._reducer.interrupts if i["id"] == iid), None)
            if interrupt is None:
                raise _Stale("this run's view does not know this question (the thread moved on): nothing was sent")
            value, summary = compute(interrupt)
            if hold and len(self._reducer.interrupts) > 1:
                self._held[iid] = (value, summary)
                self.view.form_error = ""
                self._flush()
                self.view.send({**reply, "ok": True, "held": True, "summary": summary})
                return
            self._resume({iid: value}, by="page", summaries={iid: summary})
        except FormInvalid as exc:
            self.view.send({**reply, "ok": False, "error": f"Not sent: {exc}", "errors": exc.errors})
            return
        except Exception as exc:  # noqa: BLE001 - any refusal is shown in the view, never lost
            message = f"Could not resume: {exc}"
            if not isinstance(exc, _Stale):
                self.view.form_error = message
            self.view.send({**reply, "ok": False, "error": message, "stale": isinstance(exc, _Stale)})
            return
        self.view.send({**reply, "ok": True, "summary": summary})

    def _claim(self, request: Any) -> None:
        """A click's request id is acted on once: the page may send a click again that the
        kernel already took (a retry after no answer came)."""
        if request is not None and request in self._requests:
            raise RuntimeError("this click was handled already: nothing was sent again")
        if request is not None:
            self._requests.add(request)

    @_locked
    def _continue_from_view(self, content: Mapping[str, Any]) -> None:
        """The breakpoint's button ({kind: "continue", id}): a run paused at a static
        breakpoint goes on from the thread's latest checkpoint (a state changed meanwhile
        by `update_state` included), as `resume()` from code does."""
        request = content.get("id")
        reply: dict[str, Any] = {"kind": "resume-result", "id": request, "interrupt_id": ""}
        try:
            self._claim(request)
            if self._status == "interrupted" and not waits_without_question(self._reducer.interrupts):
                raise RuntimeError("the run waits for an answer, not at a breakpoint: answer its form")
            self._resume(None, by="page")
        except Exception as exc:  # noqa: BLE001 - any refusal is shown in the view, never lost
            message = f"Could not continue: {exc}"
            self.view.form_error = message
            self.view.send({**reply, "ok": False, "error": message})
            return
        self.view.send({**reply, "ok": True})

    @_locked
    def _send_held(self, content: Mapping[str, Any]) -> None:
        """Send collected answers as one keyed resume ({kind: "send_held", id, ids?})."""
        request = content.get("id")
        wanted = [str(i) for i in content.get("ids") or self._held]
        reply: dict[str, Any] = {"kind": "resume-result", "id": request, "interrupt_id": ""}
        try:
            self._claim(request)
            chosen = {i: self._held[i] for i in wanted if i in self._held}
            if not chosen:
                raise RuntimeError("no answers are ready to send")
            self._check_pending(list(chosen))
            self._resume({i: v for i, (v, _) in chosen.items()}, by="page",
                         summaries={i: s for i, (_, s) in chosen.items()})
        except Exception as exc:  # noqa: BLE001
            message = f"Could not resume: {exc}"
            self.view.form_error = message
            self.view.send({**reply, "ok": False, "error": message, "stale": isinstance(exc, _Stale)})
            return
        self.view.send({**reply, "ok": True})

    @_locked
    def cancel(self) -> bool:
        """Stop a running run. Once this returns the run writes nothing more to its
        thread: a node that is busy finishes in its thread, unseen, its writes thrown
        away (it can read `runtime.cancel_requested`); a new run may start at once."""
        if self._status != "running" or self._pump is None:
            return False
        cancel_segment(self._control, "cancelled by run.cancel()")
        self._pump.cancel()
        self._call(lambda: self._settle(exc=None, cancelled=True))
        return True

    # -- display -------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        count = getattr(shell, "execution_count", None)
        if count is not None and count == self._displayed_at:
            return  # lgnb.run() displayed it already in this cell
        self._displayed_at = count
        display(self.view)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.view._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        broken = f" view_error={type(self._view_error).__name__}" if self._view_error is not None else ""
        return f"<lgnb.Run {self._status} step={self._reducer.step} thread={self.view.thread!r}{broken}>"

    # -- driving (in whichever thread holds the run's lock) ----------------------------
    def _call(self, fn: Any) -> None:
        with self._lock:
            fn()

    @_locked
    def _start(self, input: Any, config: dict[str, Any] | None = None) -> None:
        self._status = "running"
        self._settled.clear()
        self._t0 = time.monotonic()
        self._reducer.begin_segment()
        self._panel.begin_segment()
        self._show(notice="", form_error="", error={}, breakpoint={})
        kwargs = dict(self._options, stream_mode=self._modes, subgraphs=True)
        extra, self._control = segment_options(self.graph, "astream" if self._use_async else "stream",
                                               self._options, multitask=self._multitask,
                                               checkpointed=self.checkpointed)
        kwargs.update(extra)
        pump: Pump = Pump(lambda chunks: self._on_chunks(chunks, pump),
                          lambda exc: self._on_end(exc, pump))
        self._pump = pump
        graph, control = self.graph, self._control
        config = self.config if config is None else config
        multitask = self._multitask or "reject"
        lease = self._multitask is not None and self.checkpointed and view_takes_lease(graph)
        # where the thread stands, read first (a server's stream has no checkpoints to count by)
        where = self._saved_thread and not self._reducer.counted
        if self._use_async:
            def astream() -> Any:
                if where:
                    return _chained_async(graph.athread_step(config, input), lambda: graph.astream(input, config, **kwargs))
                return graph.astream(input, config, **kwargs)

            # a LangGraph async saver made in a cell takes calls on its own loop only (the
            # kernel's: its asyncio.Lock and connection are bound there), so drive astream there
            pump.start_async((lambda: aleased_stream(astream, graph, config, multitask, control)) if lease
                             else astream, loop_of(getattr(graph, "checkpointer", None)) or background_loop())
        else:
            ctx = contextvars.copy_context()

            def stream() -> Any:
                if where:
                    return itertools.chain(graph.thread_step(config, input), graph.stream(input, config, **kwargs))
                return graph.stream(input, config, **kwargs)

            pump.start_sync((lambda: ctx.run(leased_stream, stream, graph, config, multitask, control)) if lease
                            else (lambda: ctx.run(stream)))
        self._flush()

    @_locked
    def _on_chunks(self, chunks: list[Any], pump: Pump) -> None:
        if self._status != "running" or pump is not self._pump:  # a cancelled segment's leftovers
            return
        for chunk in chunks:
            self.stats["chunks"] += 1
            try:
                patches = self._reducer.feed(chunk)
            except Exception as exc:  # noqa: BLE001 - a payload we cannot read must not kill the run
                patches = [self._reducer._patch("log", f"view-{self._reducer._next_id()}", node="", ns="",
                                                payload=f"lgnb view could not read a chunk: {exc!r}")]
            try:
                self._panel.feed(chunk, self._reducer)
            except Exception:  # noqa: BLE001 - the panel only shows; the run goes on
                pass
            for patch in patches:
                self._store.apply(patch)
            self._pending.extend(patches)
            if self._pending and time.monotonic() >= self._next_flush:
                self._flush()  # keep the cadence while draining a long backlog
        if self._reducer.values is not None:
            self._result = self._reducer.values
        lossy = self._reducer.text_only_models
        if lossy and not self.view.notice and lossy != self._noted_models:
            self._noted_models = list(lossy)
            self._show(notice=TEXT_ONLY_STREAM.format(models=" and ".join(lossy)))
        self._schedule_flush()

    @_locked
    def _on_end(self, exc: BaseException | None, pump: Pump) -> None:
        if self._status == "running" and pump is self._pump:
            reason = was_cancelled(self._control)  # e.g. another run interrupted this one
            if reason is not None:
                self._show(notice=f"Cancelled: {reason}.")
            self._settle(exc=None if reason is not None else exc, cancelled=reason is not None)

    @_locked
    def _settle(self, *, exc: BaseException | None, cancelled: bool) -> None:
        """End the segment in one ordered step: decide the outcome and record it on the run,
        then show it (one forced flush), and last, whatever showing it raised, release
        every waiter (`wait()`, `await run`, observers of the view's status)."""
        if self._status not in ("running", "pending"):
            return
        self._elapsed_before += time.monotonic() - self._t0
        undo, self._undo = self._undo, None
        if undo is not None and exc is not None and not cancelled and _refused_resume(exc):
            self._unresume(undo, exc)
            return
        paused = self._reducer.paused
        if self._reducer.values is not None:
            self._result = self._reducer.values
        if cancelled:
            self._status = "cancelled"
        elif exc is not None:
            self._status, self._error = "error", exc
        else:
            self._status = "interrupted" if paused else "done"
        try:
            self._reducer.end_segment(finished=self._status == "done")
            if self.view.form_error:  # a click refused while the run ran (a second click, a
                self._show(form_error="")  # second page): stale once it settles
            if self._status == "error" and exc is not None:
                node, patch = self._reducer.error_patch(exc)
                if patch is not None:
                    self._store.apply(patch)
                    self._pending.append(patch)
                message = str(exc)
                if "No generations found in stream" in message:
                    message += NO_GENERATIONS_HINT
                self._show(error={"type": type(exc).__name__, "message": message, "node": node or ""})
            elif self._status == "interrupted" and not self.checkpointed:
                self._show(notice=NO_CHECKPOINTER)
            elif self._status == "interrupted" and waits_without_question(self._reducer.interrupts):
                stopped = stopped_by(self._reducer.interrupts)
                self._show(breakpoint={"next": list(self._reducer.next_nodes),
                                       **({"stopped": stopped} if stopped else {})})
            self._flush(snapshot=True)
        except Exception as failure:  # noqa: BLE001 - the view's trouble never keeps a run from settling
            self._view_failed(failure)
        finally:
            self._release()

    def _unresume(self, undo: tuple[int, dict[str, tuple[Any, str]], list[Any], dict[str, Any], int],
                  exc: BaseException) -> None:
        """The engine refused the answer (it did not match the question's `response_schema`,
        or names a question no longer pending) and saved nothing: the thread still waits,
        so the run does too — its questions, forms and held answers back, the refused answer
        off the record (and the error row the node's refusal left: it is no error of the
        run, which goes on once answered again), the reason on the form; the next `wait()`
        raises it."""
        answered, held, interrupts, payloads, errors = undo
        if len(self._store.errors) > errors:
            del self._store.errors[errors:]
            self._store.seq = self._reducer.next_seq()  # the page reloads the snapshot
        self._reducer.interrupts, self._reducer.payloads, self._reducer.paused = interrupts, payloads, True
        # several answered at once: the engine kept those it accepted (their nodes ran)
        # and still asks the others; the view follows the thread
        pending = set(self._thread_pending())
        if pending:
            self._reducer.interrupts = [i for i in interrupts if i["id"] in pending]
            self._reducer.payloads = {k: v for k, v in payloads.items() if k in pending}
        sent = {a["interrupt_id"] for a in self._answers[answered:]}
        self._answers[answered:] = [a for a in self._answers[answered:]
                                    if pending and a["interrupt_id"] not in pending]
        # a held answer that went out is no longer held: accepted, or refused (asked again)
        self._held = {k: v for k, v in held.items() if k not in sent and (not pending or k in pending)}
        self._status, self._refused = "interrupted", exc
        try:
            self._reducer.end_segment(finished=False)
            self._show(form_error=f"Could not resume: {type(exc).__name__}: {exc} (nothing was saved: "
                                  "answer again)", error={})
            self._flush(snapshot=True)
        except Exception as failure:  # noqa: BLE001 - the view's trouble never keeps a run from settling
            self._view_failed(failure)
        finally:
            self._release()

    def _release(self) -> None:
        """Tell everyone the run settled: the view's status first (its observers run), then
        the `wait()` event and the `await` futures. Never raises."""
        try:
            if self.view.status != self._status:
                self.view.status = self._status
        except Exception as failure:  # noqa: BLE001 - a failed send or observer: recorded, not raised
            self._view_failed(failure)
        self._settled.set()
        waiters, self._waiters = self._waiters, []
        if not waiters:
            return
        if running_loop() is self._loop:
            _release_waiters(waiters)
        else:  # futures belong to their loop's thread
            try:
                self._loop.call_soon_threadsafe(_release_waiters, waiters)
            except RuntimeError:  # that loop is closed: nobody awaits there any more
                pass

    def _new_waiter(self) -> asyncio.Future[None]:
        waiter: asyncio.Future[None] = self._loop.create_future()
        with self._lock:
            if self._settled.is_set():
                waiter.set_result(None)
            else:
                self._waiters.append(waiter)
        return waiter

    def _outcome(self) -> Any:
        if self._status == "error" and self._error is not None:
            raise self._error
        refused, self._refused = self._refused, None
        if refused is not None:
            raise refused
        return self._result

    # -- traffic to the browser ------------------------------------------------------
    def _show(self, **traits: Any) -> None:
        """Set view traits in one sync; a failure to send them is recorded, never raised."""
        try:
            with self.view.hold_sync():
                for key, value in traits.items():
                    setattr(self.view, key, value)
        except Exception as failure:  # noqa: BLE001
            self._view_failed(failure)

    def _view_failed(self, failure: BaseException) -> None:
        """A send to the page failed: keep the first failure (`view_error`) and, if the page
        still listens, tell it the view may be behind and where the run stands."""
        if self._view_error is None:
            self._view_error = failure
        try:
            self.view.notice = (f"This view could not be updated ({type(failure).__name__}: {failure}), so it "
                                "may be behind. The run itself goes on in the kernel: see run.status, "
                                "run.result and run.view_error.")
            self.view.send_state(["status", "notice"])
        except Exception:  # noqa: BLE001 S110 - the page is out of reach; view_error holds why
            pass

    @_locked
    def _schedule_flush(self) -> None:
        """Flush what is pending once the budget allows, from lgnb's timer thread (not the
        kernel's loop, which a busy cell blocks)."""
        if self._flush_handle is None:
            delay = max(0.0, self._next_flush - time.monotonic())
            self._flush_timers += 1
            timer = self._flush_timers  # which timer this is (the handle may fire before it is stored)
            self._flush_handle = call_later(delay, lambda: self._timed_flush(timer))

    @_locked
    def _timed_flush(self, timer: int) -> None:
        if self._flush_handle is not None and timer == self._flush_timers:  # no flush went out meanwhile
            self._flush()

    @_locked
    def _flush(self, snapshot: bool = False) -> None:
        """Send what is new at once: one batch of patches, one trait sync (run state; with
        `snapshot`, the content snapshot too). The cadence calls it when the budget allows;
        start, end and a new view's hello call it directly."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        view, r = self.view, self._reducer
        state = {"status": self._status, "step": r.step, "active": r.active_keys,
                 "visited": list(r.visited), "taken": [list(t) for t in r.taken],
                 "interrupts": self.interrupts, "forms": self.forms,
                 "answers": [{k: v for k, v in a.items() if k != "value"} for a in self._answers],
                 "held": {k: s for k, (_, s) in self._held.items() if k in {i["id"] for i in r.interrupts}},
                 "runs": dict(r.runs), "reruns": list(r.reruns)}
        if self._panel.dirty:  # folded once per flush, however many steps went by
            state["panel"] = self._panel.render()
        changed: dict[str, Any] = {k: v for k, v in state.items() if getattr(view, k) != v}
        sent = 0
        if self._pending:  # patches first: a view that loads the snapshot then skips them by seq
            patches, self._pending = coalesce(self._pending), []
            self._batches += 1
            try:
                view.send({"kind": "patches", "id": self._batches, "t": time.time(), "patches": patches})
            except Exception as failure:  # noqa: BLE001 - the store keeps them: a hello reloads the snapshot
                self._view_failed(failure)
            sent += 1
            self.stats["batches"] += 1
            self.stats["patches"] += len(patches)
        if snapshot:
            changed["snapshot"] = self._store.snapshot()
        if changed:
            changed["elapsed"] = round(self.elapsed, 3)
            self._show(**changed)
            sent += 1
            self.stats["trait_syncs"] += 1
        self.stats["messages"] += sent
        if sent and self._pump is not None:
            self._pump.hand_off()  # let ipykernel's IOPub thread push it out now
        self._next_flush = max(self._next_flush, time.monotonic()) + sent / MESSAGE_RATE

    @_locked
    def _send_snapshot(self) -> None:
        self._flush()
        self._batches += 1
        try:
            self.view.send({"kind": "snapshot", "id": self._batches, "snapshot": self._store.snapshot()})
        except Exception as failure:  # noqa: BLE001
            self._view_failed(failure)
        self.stats["messages"] += 1
        self._next_flush = max(self._next_flush, time.monotonic()) + 1 / MESSAGE_RATE


def _release_waiters(waiters: list[asyncio.Future[None]]) -> None:
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(None)


def run(graph: Any, input: Any, config: Mapping[str, Any] | None = None, *, display: bool = True,
        use_async: bool | None = None, title: str | None = None, multitask: MultitaskStrategy | None = "reject",
        **stream_options: Unpack[StreamOptions]) -> Run:
    """Start `graph` on `input` as a live view and return the :class:`Run` at once.

    `config` is the usual RunnableConfig (a `thread_id` is generated when the graph has a
    checkpointer and none is given). `stream_options` go to `graph.stream` (e.g.
    `context=`, `interrupt_before=`); the view adds the stream modes it needs and
    `subgraphs=True`. `use_async=True` drives `graph.astream` on the kernel loop instead of
    `graph.stream` in a worker thread; the default (None) does so when the graph has an
    async-only node or conditional edge, in it or in a subgraph. `display=False` skips
    showing the view (display `run` or `run.view` later).

    One run per thread: on a thread another run is running on (this kernel's, e.g. the
    same cell run twice, or another process's through the saver's database),
    `multitask="reject"` (default) raises `ThreadBusyError`, "enqueue" waits for it to
    end and then runs on the thread's latest state, "interrupt" cancels it and runs;
    None shares the thread as LangGraph does. It applies to lgnb graphs on a thread
    (see `lgnb.widgets._thread`).
    """
    handle = Run(graph, input, config, use_async=use_async, title=title, multitask=multitask,
                 **stream_options)
    if display:
        show_in_notebook(handle)
    return handle

"""`lgnb.lens(graph, input)`: step a graph one super-step per click and see the mechanism.

Each step shows the graph with that step's tasks lit (a node run as N tasks, a `Send`
fan-out, shows "×N"), the edges whose channels triggered them, and the plan → execute →
update table, with the state before and after and the changed keys marked. "What if"
re-applies the step's writes under another reducer (`lgnb.whatif`), nodes not re-run.

Never blocking the kernel: the graph's `stream` generator lives in one worker thread per
lens and is advanced there, one super-step per request. A click only queues a request
(the comm handler returns at once); `.step()` / `.run()` from code wait for theirs. The
worker publishes each step by setting the view's traits (they reach the browser from any
thread). Interrupts show the run view's approval form; an answer resumes the graph on the
same thread and advances one step. With ``use_async=True`` the lens drives ``graph.astream``
instead (async nodes): each `__anext__` runs on lgnb's background event loop while the
worker waits for it, so stepping works the same.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import traitlets

from lgnb.draw import END, START, layout
from lgnb.pregel.records import to_jsonable
from lgnb.whatif import REDUCERS, reducer_name, what_if
from lgnb.widgets._async_nodes import needs_async
from lgnb.widgets._forms import (
    FormInvalid,
    answer_for,
    answered_with,
    form_for,
    no_answer_for_raised,
    raised,
    stopped_by,
    tools_of,
    waits_without_question,
)
from lgnb.widgets._loops import background_loop, loop_bound_error, loop_of, refuses_sync_here
from lgnb.widgets._runtime import View, show_in_notebook
from lgnb.widgets._snapshot import lens_html
from lgnb.widgets._snapshot_svg import mark, path_marks, svg_for_dot
from lgnb.widgets._title import view_title
from lgnb.widgets.graph_view import GraphMixin, check_graph
from lgnb.widgets.lens_edges import EdgeTracer, drawn_edges
from lgnb.widgets.lens_steps import REDUCED_NOTICE, StepBuilder, public_step, reducer_names
from lgnb.widgets.run_view import NO_CHECKPOINTER, _command_type, _has_checkpointer, _refused_resume

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from lgnb.types import StreamOptions

BREAKPOINT_NOTICE = ("Stopped at a breakpoint (interrupt_before / interrupt_after): no question "
                     "is asked. Step ▶ or Run continues the run from here.")
STOPPED_NOTICE = ("Stopped by NodeInterrupt ({said}): no question is asked. Step ▶ or Run runs the "
                  "node again, and it stops again unless its state changes: change it first with "
                  "graph.update_state(config, values).")
PUBLIC_MODES = ["tasks", "updates", "checkpoints", "values"]


def _is_lgnb(graph: Any) -> bool:
    return type(graph).__module__.split(".")[0] == "lgnb"


class LensView(GraphMixin, View):
    """What the browser shows of a lens."""

    _view_kind = traitlets.Unicode("lens").tag(sync=True)
    _snapshot_on = ("status", "busy")
    status = traitlets.Unicode("ready").tag(sync=True)
    #: the step shown (JSON: see `lens_steps`), and a one-line summary of every step so far
    current = traitlets.Dict().tag(sync=True)
    summary = traitlets.List(traitlets.Dict()).tag(sync=True)
    active = traitlets.List(traitlets.Unicode()).tag(sync=True)
    visited = traitlets.List(traitlets.Unicode()).tag(sync=True)
    taken = traitlets.List(traitlets.List()).tag(sync=True)
    counts = traitlets.Dict().tag(sync=True)
    busy = traitlets.Bool(False).tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Dict().tag(sync=True)
    interrupts = traitlets.List(traitlets.Dict()).tag(sync=True)
    forms = traitlets.List(traitlets.Dict()).tag(sync=True)
    form_error = traitlets.Unicode("").tag(sync=True)
    reducers = traitlets.List(traitlets.Unicode(), list(REDUCERS)).tag(sync=True)
    #: the last "what if": {"step", "reducer", "results": [...]} (JSON-able)
    whatif = traitlets.Dict().tag(sync=True)
    thread = traitlets.Unicode("").tag(sync=True)

    _controller: Lens | None = None

    def _static_html(self) -> str:
        state = {k: getattr(self, k) for k in ("title", "status", "thread", "error", "visited", "summary",
                                               "interrupts")}
        return lens_html(state, svg=mark(svg_for_dot(self.dot), path_marks(self._drawing, self.visited, self.taken)))

    def _msg_step(self, content: dict[str, Any]) -> None:
        if self._controller is not None:
            self._controller._request(self._controller._advance)

    def _msg_run(self, content: dict[str, Any]) -> None:
        if self._controller is not None:
            self._controller._request(self._controller._run_all)

    def _msg_reset(self, content: dict[str, Any]) -> None:
        if self._controller is not None:
            self._controller._request(self._controller._reset)

    def _msg_whatif(self, content: dict[str, Any]) -> None:
        if self._controller is not None and isinstance(content.get("reducer"), str):
            index = content.get("index")
            try:
                self._controller.what_if(content["reducer"], step=index if isinstance(index, int) else None)
            except Exception as exc:  # noqa: BLE001 - shown, never lost
                self.whatif = {"error": f"{type(exc).__name__}: {exc}"}

    def _msg_resume(self, content: dict[str, Any]) -> None:
        controller = self._controller
        if controller is not None:
            controller._request(lambda: controller._resume_from_view(content))

    def _msg_answer(self, content: dict[str, Any]) -> None:
        """A form's answer ({kind: "answer", id, interrupt_id, picks, hold}), as the run
        view's forms send it: the kernel computes and validates the value."""
        controller = self._controller
        if controller is not None:
            controller._request(lambda: controller._answer_from_view(content))

    def _msg_send_held(self, content: dict[str, Any]) -> None:
        """Send the answers held for several open questions as one keyed resume."""
        controller = self._controller
        if controller is not None:
            controller._request(lambda: controller._send_held_from_view(content))


class Lens:
    """A graph run one super-step at a time. Create with :func:`lgnb.lens`.

    `status`: ready (nothing ran yet), paused (between steps), interrupted, done, error.
    """

    def __init__(self, graph: Any, input: Any, config: Mapping[str, Any] | None = None, *,
                 use_async: bool | None = None, title: str | None = None, **stream_options: Any) -> None:
        check_graph(graph, what="lgnb.lens")
        if use_async is None:
            use_async = needs_async(graph)
        method = "astream" if use_async else "stream"
        if not callable(getattr(graph, method, None)):
            raise TypeError(f"lgnb.lens: {type(graph).__name__} has no {method}()")
        self.use_async = use_async
        self.graph, self.input = graph, input
        self.config: dict[str, Any] = dict(config or {})
        self._given_thread = "thread_id" in dict(self.config.get("configurable") or {})
        self.checkpointed = _has_checkpointer(graph)
        self.native = _is_lgnb(graph)
        stream_options.pop("stream_mode", None)
        stream_options.pop("subgraphs", None)
        self._options = stream_options
        if not self.native and self.checkpointed:
            # a graph not lgnb's: its route writes are read from its saver after each step
            # (`_saved_writes`), so each step's writes are saved before the next one starts
            self._options.setdefault("durability", "sync")
        self._held: dict[str, Any] = {}  # answers held until "send" (several questions open)
        self._tool_map: dict[str, Any] | None = None
        self.view = LensView()
        self.view._controller = self
        self.view.title = view_title(graph, title, what="lgnb.lens")
        self.view._set_graph(graph)
        self._edges = {(e.source, e.target) for e in layout(graph, expanded=True).edges}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lgnb-lens")
        self._ctx = contextvars.copy_context()
        self._displayed_at: object = object()
        self._stop_requested = False  # `run()` was interrupted: end it after the step in progress
        self._reset()

    # -- public API ------------------------------------------------------------------------
    @property
    def status(self) -> str:
        return self._status

    @property
    def trace(self) -> list[dict[str, Any]]:
        """The records so far (plan, execute, update, checkpoint; `lgnb.pregel.records`)."""
        return list(self._builder.records)

    @property
    def subgraph_trace(self) -> list[dict[str, Any]]:
        """The records streamed under subgraphs' namespaces so far (each with its ``ns``);
        each step's ``subgraphs`` holds those of that step, per namespace."""
        return list(self._builder.sub_records)

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The super-steps so far, each with its records, state before/after, changed keys."""
        return [public_step(s) for s in self._builder.steps]

    @property
    def result(self) -> Any:
        """The latest state values."""
        return self._builder.raw_values

    @property
    def interrupts(self) -> list[dict[str, Any]]:
        if self._status != "interrupted":
            return []
        return [{k: v for k, v in i.items() if k != "response_schema"} for i in self._builder.interrupts]

    def text(self) -> str:
        """The steps so far as text, one line each (what the view's step list says, for a
        terminal or a headless notebook): ``step 2: b, c | changed: log | log=['a', 'b', 'c']``;
        a node run as N tasks shows "×N"; an error, an interrupt or a breakpoint (the step
        planned, not run) ends its line."""
        lines = []
        for s in self._builder.steps:
            nodes = ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in (s.get("counts") or {}).items()) or (
                "(no task ran)" if s.get("error") and (s.get("step") or 0) > 0 else "(input)")
            given = s.get("after")
            after: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
            changed = s.get("changed") or []
            line = f"step {s.get('step')}: {nodes}"
            if changed:
                line += " | changed: " + ", ".join(changed) + " | " + " ".join(f"{k}={after.get(k)!r}" for k in changed)
            if s.get("error"):
                line += f" | {s['error']['type']}: {s['error']['message'].splitlines()[0]}"
            if s.get("interrupts"):
                line += " | interrupted: " + ", ".join(repr(i.get("value")) for i in s["interrupts"])
            elif s.get("status") == "interrupted" and not s.get("execute"):
                line += " | breakpoint: planned, stopped before it runs"  # interrupt_before/after
            lines.append(line)
            for sub in s.get("subgraphs") or ():  # nested: the subgraph's own super-steps
                for r in sub["records"]:
                    if r.get("kind") == "plan" and r.get("tasks"):
                        ran = [t["node"] for t in r["tasks"]]
                        lines.append(f"  └ {sub['name']} · step {r.get('step')}: "
                                     + ", ".join(f"{n} ×{ran.count(n)}" if ran.count(n) > 1 else n
                                                 for n in dict.fromkeys(ran)))
                    elif r.get("kind") == "update" and r.get("source") != "input":
                        wrote = [c for c in r.get("channels") or () if not c.get("internal") and c.get("writes")]
                        if wrote:
                            lines[-1] += " | " + " ".join(f"{c['channel']}={c.get('after')!r}" for c in wrote)
        return "\n".join(lines)

    def step(self, timeout: float | None = 60) -> dict[str, Any] | None:
        """Advance one super-step; return it (None when the run has nothing more to do).
        At a static breakpoint (`interrupt_before` / `interrupt_after`) the run goes on
        past it; an `interrupt()` waits for `resume`."""
        self._not_on_saver_loop("step")
        return self._request(self._advance).result(timeout)

    def run(self, timeout: float | None = 120) -> Any:
        """Step until the run ends or is interrupted; return the latest state values.
        Interrupted (the notebook's stop button), it takes no step after the one in
        progress and re-raises KeyboardInterrupt; `.step()` / `.run()` go on from there."""
        self._not_on_saver_loop("run")
        self._stop_requested = False
        future: Future[Any] | None = None
        try:  # (a stop landing as the run is handed over, before the wait, stops it too)
            future = self._request(self._run_all)
            future.result(timeout)
        except KeyboardInterrupt:  # the stop button: no step after the one in progress
            self._stop_requested = True
            if future is not None:
                future.cancel()
            raise
        return self.result

    def reset(self) -> Lens:
        """Start over from the input (on a fresh thread when the lens made the thread id)."""
        self._not_on_saver_loop("reset")
        self._request(self._reset).result(30)
        return self

    def resume(self, value: Any = None, timeout: float | None = 60) -> dict[str, Any] | None:
        """Answer the pending interrupt(s) (a value, or ``{interrupt_id: value}``) and
        advance one step; at a static breakpoint (no question asked) continue the run."""
        self._not_on_saver_loop("resume")
        return self._request(lambda: self._resume(value)).result(timeout)

    def what_if(self, reducer: str | Callable[[Any, Any], Any], *, step: int | None = None,
                channels: list[str] | None = None) -> list[dict[str, Any]]:
        """Re-apply step `step`'s writes (index into `.steps`; default: the one shown)
        under `reducer` ("last value", "operator.add", "add_messages", or a function
        ``(current, write) -> new``), beside the real result; shown in the view too."""
        steps = self._builder.steps
        if not steps:
            raise RuntimeError("no step yet: call .step() first")
        index = self._shown if step is None else step
        chosen = steps[index]
        update = chosen.get("update") or {}
        chans = [c for c in update.get("channels") or () if not c.get("internal")]
        if not chans and update.get("error"):
            err = update["error"]
            before = (chosen.get("before") or {}).get(err.get("channel")) if isinstance(chosen.get("before"), Mapping) else None
            chans = [{"channel": err.get("channel"), "before": before, "writes": err.get("writes") or [],
                      "after": None, "error": err.get("message"), "reducer": "LastValue"}]
        results = what_if(chans, reducer, channels=channels, types=_key_types(self.graph))
        self.view.whatif = {"index": index, "step": chosen.get("step"), "reducer": reducer_name(reducer),
                            "results": to_jsonable(results)}
        return results

    # -- display ---------------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        count = getattr(get_ipython(), "execution_count", None)
        if count is not None and count == self._displayed_at:
            return
        self._displayed_at = count
        display(self.view)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.view._repr_mimebundle_(**kwargs)

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the lens as a standalone HTML file: graph, status, its steps so far (no script)."""
        return self.view.to_html(path)

    def __repr__(self) -> str:
        return f"<lgnb.Lens {self._status} steps={len(self._builder.steps)}>"

    # -- the worker --------------------------------------------------------------------------
    def _not_on_saver_loop(self, what: str) -> None:
        """Refuse to wait for a step on the thread of the loop the graph's saver is bound to
        (LangGraph's async savers made in a cell): the step saves through that loop, so
        it would wait for itself until the timeout."""
        saver = getattr(self.graph, "checkpointer", None)
        if refuses_sync_here(saver):
            raise loop_bound_error(saver, f"Lens.{what}")

    def _request(self, fn: Callable[[], Any]) -> Future[Any]:
        self.view.busy = True

        def job() -> Any:
            try:
                return fn()
            finally:
                self.view.busy = False

        return self._pool.submit(job)

    def _reset(self) -> None:
        self._gen: Any = None
        self._next_input: Any = self.input
        configurable = dict(self.config.get("configurable") or {})
        if self.checkpointed and not self._given_thread:
            configurable["thread_id"] = f"lgnb-lens-{uuid.uuid4().hex[:12]}"
        if configurable:
            self.config["configurable"] = configurable
        self._tracer = EdgeTracer(self._edges)
        self._builder = StepBuilder(native=self.native, checkpointed=self.checkpointed, input=self.input,
                                    reducers=None if self.native else reducer_names(self.graph),
                                    initial=self._thread_state() or _initial_state(self.graph),
                                    saved_writes=None if self.native else self._saved_writes)
        self._status = "ready"
        self._shown = 0
        self._error: BaseException | None = None
        v = self.view
        with v.hold_sync():
            v.thread = str(configurable.get("thread_id", ""))
            v.current, v.summary, v.counts, v.whatif, v.error = {}, [], {}, {}, {}
            v.active, v.visited, v.taken = [], [START], []
            v.interrupts, v.forms, v.form_error = [], [], ""
            v.notice = "" if self.native else REDUCED_NOTICE
            v.status = "ready"

    def _open(self) -> None:
        modes = [*PUBLIC_MODES, "pregel"] if self.native else list(PUBLIC_MODES)
        inp, self._next_input = self._next_input, None
        command = type(inp).__name__ == "Command"
        self._builder.begin_segment(resuming=inp is None or command,
                                    update=getattr(inp, "update", None) if command else None)
        stream = self.graph.astream if self.use_async else self.graph.stream
        gen = self._ctx.run(stream, inp, self.config, stream_mode=modes, subgraphs=True, **self._options)
        self._gen = _drive(gen, loop_of(getattr(self.graph, "checkpointer", None))) if self.use_async else gen

    def _at_breakpoint(self) -> bool:
        """Stopped by `interrupt_before` / `interrupt_after`: no question is pending, so
        stepping on continues the run (with None input, as LangGraph resumes one)."""
        return (self._status == "interrupted" and self.checkpointed
                and waits_without_question(self._builder.interrupts))

    def _advance(self) -> dict[str, Any] | None:
        if self._at_breakpoint():
            return self._resume(None)
        if self._status in ("done", "error", "interrupted"):
            return None
        if self._gen is None:
            self._open()
        b = self._builder
        while True:
            try:
                chunk = self._ctx.run(next, self._gen)
            except StopIteration:
                self._gen = None
                step = b.end_segment()
                self._status = "interrupted" if b.paused else "done"
                self._publish(step)
                return public_step(step) if step else None
            except Exception as exc:  # noqa: BLE001 - shown in the view, re-raised by nothing
                self._gen, self._error = None, exc
                step = b.end_segment(exc)
                self._status = "error"
                self._publish(step)
                return public_step(step) if step else None
            if b.feed(chunk):
                step = b.last_closed
                if b.finished:  # the checkpoint said nothing is next: end the stream now
                    self._drain()
                else:
                    self._status = "paused"
                self._publish(step)
                return public_step(step) if step else None

    def _drain(self) -> None:
        b = self._builder
        try:
            for chunk in self._ctx.run(lambda: list(self._gen)):
                b.feed(chunk)
        except Exception as exc:  # noqa: BLE001
            self._error = exc
        self._gen = None
        extra = b.end_segment(self._error)
        if extra is not None:
            self._publish(extra)
        self._status = "error" if self._error else "interrupted" if b.paused else "done"

    def _run_all(self) -> None:
        if self._at_breakpoint():  # Run continues past the breakpoint it stands at
            self._resume(None)
        while self._status in ("ready", "paused") and not self._stop_requested:
            self._advance()

    def _resume(self, value: Any) -> dict[str, Any] | None:
        if self._status != "interrupted":
            raise RuntimeError(f"the lens is {self._status}: there is no interrupt to answer")
        if not self.checkpointed:
            raise RuntimeError(NO_CHECKPOINTER)
        # the questions: a NodeInterrupt beside them takes no answer (its node runs again)
        ids = [i["id"] for i in self._builder.interrupts if not raised(i)]
        Command = _command_type(self.graph)
        command: Any
        if waits_without_question(self._builder.interrupts):
            # a static breakpoint (interrupt_before/after), or NodeInterrupt: continue with None input
            no_answer_for_raised(value)
            command = None
        elif isinstance(value, Mapping) and value and set(map(str, value)) <= set(ids):
            command = Command(resume=dict(value))
        elif len(ids) > 1:
            raise ValueError(f"{len(ids)} interrupts are pending (ids {', '.join(ids)}): resume with {{id: value}}")
        else:  # keyed, as the run view does: an unkeyed Command(resume=None) is no answer for LangGraph
            command = Command(resume={ids[0]: value})
        questions = self._builder.questions()
        self._next_input, self._gen, self._status = command, None, "paused"
        self._held = {}
        self.view.forms, self.view.interrupts, self.view.form_error = [], [], ""
        step = self._advance()
        if self._status == "error" and self._error is not None and _refused_resume(self._error):
            self._ask_again(questions, self._error)
        return step

    def _ask_again(self, questions: tuple[list[dict[str, Any]], dict[str, Any], Any], exc: BaseException) -> None:
        """The engine refused the answer (it did not match the question's `response_schema`,
        or names a question no longer pending) and saved nothing: the thread still waits, so
        the lens does too — its questions and forms back, the reason on the form, and raised
        to the caller. The step that ran and refused stays in the trace (it is what the
        engine did), marked "refused"; answering again runs that step anew."""
        self._builder.ask_again(questions)
        self._status, self._error = "interrupted", None
        steps = self._builder.steps
        self._publish(steps[-1] if steps else None)  # (its row now says "refused")
        self.view.error = {}
        self.view.form_error = (f"Could not resume: {type(exc).__name__}: {exc} "
                                "(nothing was saved: answer again)")
        raise exc

    def _resume_from_view(self, content: Mapping[str, Any]) -> None:
        request, iid, value = content.get("id"), str(content.get("interrupt_id") or ""), content.get("value")
        try:
            pending = [i["id"] for i in self._builder.interrupts] if self._status == "interrupted" else []
            if iid and pending and iid not in pending:
                raise RuntimeError(f"interrupt {iid} is no longer pending")
            self.view.send({"kind": "resume-result", "id": request, "ok": True})
            self._resume({iid: value} if iid and len(pending) > 1 else value)
        except Exception as exc:  # noqa: BLE001 - shown in the view
            message = f"Could not resume: {exc}"
            self.view.form_error = message
            self.view.send({"kind": "resume-result", "id": request, "ok": False, "error": message})

    def _answer_from_view(self, content: Mapping[str, Any]) -> None:
        """A form's answer: its value computed and validated here (as in the run view),
        then the graph resumes keyed by interrupt id, or (several questions open and the
        form asked to hold) the answer waits for "send"."""
        request, iid = content.get("id"), str(content.get("interrupt_id") or "")
        reply: dict[str, Any] = {"kind": "resume-result", "id": request, "interrupt_id": iid}
        try:
            pending = self._builder.interrupts if self._status == "interrupted" else []
            interrupt = next((i for i in pending if i["id"] == iid), None)
            if interrupt is None:
                raise RuntimeError(f"interrupt {iid or '(none)'} is not pending in the lens: nothing was sent")
            given = content.get("picks")
            picks: list[dict[str, Any]] = given if isinstance(given, list) else []
            value, summary = answer_for(answered_with(interrupt, self._builder.payloads), picks, {"tools": self._tools()})
            if content.get("hold") and len(pending) > 1:
                self._held[iid] = value
                self.view.form_error = ""
                self.view.send({**reply, "ok": True, "held": True, "summary": summary})
                return
            self.view.send({**reply, "ok": True, "summary": summary})
            self._resume({**self._held, iid: value})
        except FormInvalid as exc:
            self.view.send({**reply, "ok": False, "error": f"Not sent: {exc}", "errors": exc.errors})
        except Exception as exc:  # noqa: BLE001 - shown in the view
            message = f"Could not resume: {exc}"
            self.view.form_error = message
            self.view.send({**reply, "ok": False, "error": message})

    def _send_held_from_view(self, content: Mapping[str, Any]) -> None:
        request = content.get("id")
        reply: dict[str, Any] = {"kind": "resume-result", "id": request, "interrupt_id": ""}
        wanted = [str(i) for i in content.get("ids") or self._held]
        chosen = {i: self._held[i] for i in wanted if i in self._held}
        if not chosen:
            self.view.send({**reply, "ok": False, "error": "no answer is held: nothing was sent"})
            return
        try:
            self.view.send({**reply, "ok": True})
            self._resume(chosen)
        except Exception as exc:  # noqa: BLE001 - shown in the view
            message = f"Could not resume: {exc}"
            self.view.form_error = message
            self.view.send({**reply, "ok": False, "error": message})

    def _tools(self) -> dict[str, Any]:
        """The graph's tools by name (typed argument fields in the forms), found once."""
        if self._tool_map is None:
            try:
                self._tool_map = tools_of(self.graph)
            except Exception:  # noqa: BLE001 - no tools found only costs typed argument fields
                self._tool_map = {}
        return self._tool_map

    # -- publishing ------------------------------------------------------------------------
    def _publish(self, step: dict[str, Any] | None) -> None:
        v, b = self.view, self._builder
        with v.hold_sync():
            if step is not None:
                self._shown = step["index"]
                shown = public_step(step)
                nodes = list((step.get("counts") or {}).keys())
                taken = self._tracer.lit(b.steps, step["index"])
                if self._status == "done" and not step.get("plan"):
                    taken += self._to_end(self._prev_nodes(step["index"]))
                v.current = shown
                v.active = nodes
                v.counts = dict(step.get("counts") or {})
                v.taken = taken
                v.visited = list(dict.fromkeys([*v.visited, *nodes]))
                v.summary = [{"index": s["index"], "step": s["step"], "status": s["status"],
                              "nodes": [f"{n} ×{c}" if c > 1 else n for n, c in (s.get("counts") or {}).items()]}
                             for s in b.steps]
                v.whatif = {}
            if self._status == "done":
                last = [s for s in b.steps if s.get("counts")]
                ends = list((last[-1]["counts"] if last else {}).keys())
                v.taken = [*v.taken, *(e for e in self._to_end(ends) if e not in v.taken)]
                v.visited = list(dict.fromkeys([*v.visited, END]))
                v.active = [] if step is None or not step.get("plan") else v.active
            if self._status == "error" and self._error is not None:
                v.error = {"type": type(self._error).__name__,
                           "message": str(self._error).split("\nFor troubleshooting")[0]}
            base = "" if self.native else REDUCED_NOTICE
            if self._status == "interrupted":
                v.interrupts = self.interrupts
                v.forms = [dict(form_for(answered_with(i, b.payloads), {"tools": self._tools()}),
                                resumable=self.checkpointed)
                           for i in b.interrupts if not raised(i)]
                if not self.checkpointed:
                    base = NO_CHECKPOINTER
                elif self._at_breakpoint() and b.interrupts:
                    said = "; ".join(f"{s['node']}: {s['says']}" if s["node"] else s["says"]
                                     for s in stopped_by(b.interrupts))
                    base = f"{STOPPED_NOTICE.format(said=said)}\n{base}".rstrip()
                elif self._at_breakpoint():
                    base = f"{BREAKPOINT_NOTICE}\n{base}".rstrip()
            v.notice = base
            v.status = self._status

    def _to_end(self, nodes: list[str]) -> list[list[str]]:
        """The drawn edges from `nodes` to END (a subgraph's from its inner nodes)."""
        return [[a, b] for n in nodes for a, b in drawn_edges(n, END, self._edges)]

    def _thread_state(self) -> dict[str, Any] | None:
        """The saved state of the thread the lens runs on, when it has one (a second input on a
        conversation): what the input's step starts from. None on a new thread, or when the
        saver cannot be read from this thread (an async one bound to this loop)."""
        if not (self.checkpointed and self._given_thread) or refuses_sync_here(getattr(self.graph, "checkpointer", None)):
            return None
        try:
            saved = self.graph.get_state(self.config)
        except Exception:  # noqa: BLE001 - the lens then starts from the empty state
            return None
        values = getattr(saved, "values", None)
        if getattr(saved, "metadata", None) is None or not isinstance(values, Mapping):
            return None
        return {str(k): to_jsonable(v) for k, v in values.items()}

    def _saved_writes(self, config: Mapping[str, Any]) -> Any:
        """The writes the graph's saver keeps for the tasks run from checkpoint `config`
        (a graph not lgnb's: its streams hide the route and `Send` writes). None when it
        has no saver of its own the lens can read from this thread (an async-only one)."""
        saver = getattr(self.graph, "checkpointer", None)
        if saver is None or isinstance(saver, bool) or loop_of(saver) is not None:
            return None
        found = saver.get_tuple(config)
        return None if found is None else found.pending_writes

    def _prev_nodes(self, index: int) -> list[str]:
        for s in reversed(self._builder.steps[:index]):
            if s.get("counts"):
                return list(s["counts"].keys())
        return [START]


def _initial_state(graph: Any) -> dict[str, Any]:
    """The state keys that hold a value before anything is written (a reducer key's empty
    value: `operator.add` on a list starts from `[]`), as JSON: what the input's step
    starts from. Read from the compiled graph's channels (LangGraph's too)."""
    channels = getattr(graph, "channels", None)
    keys = getattr(graph, "stream_channels", None)
    if not isinstance(channels, Mapping):
        return {}
    keys = [keys] if isinstance(keys, str) else list(keys or ())
    out = {}
    for key in keys:
        channel = channels.get(key)
        try:
            if channel is not None and channel.is_available():
                out[key] = to_jsonable(channel.get())
        except Exception:  # noqa: BLE001 - a channel the lens cannot read: shown as unset
            continue
    return out


def _key_types(graph: Any) -> dict[str, Any]:
    """Each state key's type, read from the compiled graph's channels (LangGraph's too)."""
    channels = getattr(graph, "channels", None)
    if not isinstance(channels, Mapping):
        return {}
    return {k: c.typ for k, c in channels.items() if isinstance(k, str) and getattr(c, "typ", None) is not None}


def _drive(agen: Any, loop: asyncio.AbstractEventLoop | None = None) -> Any:
    """An async generator advanced from the lens's worker thread: each item is awaited on
    `loop` (the loop the graph's saver is bound to, see `loop_of`), else on the background
    loop (in the worker's context, copied by the scheduling call)."""
    loop = loop or background_loop()
    try:
        while True:
            try:
                yield asyncio.run_coroutine_threadsafe(agen.__anext__(), loop).result()
            except StopAsyncIteration:
                return
    finally:
        aclose = getattr(agen, "aclose", None)
        if aclose is not None:
            try:
                asyncio.run_coroutine_threadsafe(aclose(), loop).result(10)
            except Exception:  # noqa: BLE001 - closing an abandoned run is best effort
                pass


def lens(graph: Any, input: Any, config: Mapping[str, Any] | None = None, *, display: bool = True,
         use_async: bool | None = None, title: str | None = None, **stream_options: Unpack[StreamOptions]) -> Lens:
    """A lens on `graph` run on `input`: one super-step per click (Step, Run to end, Reset;
    → / Enter, e, r on the keyboard), or `.step()`, `.run()`, `.reset()`, `.what_if(...)`
    from code; `.trace` holds the records so far (`.subgraph_trace` those of subgraphs),
    `.steps` the steps, `.text()` them as text. `use_async=True` drives `graph.astream`;
    the default (None) does so when the graph has async-only nodes or edges."""
    handle = Lens(graph, input, config, use_async=use_async, title=title, **stream_options)
    if display:
        show_in_notebook(handle)
    return handle

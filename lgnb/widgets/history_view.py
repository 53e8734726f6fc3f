"""`lgnb.history(graph, config)`: a thread's checkpoint timeline, forks drawn as branches.

The kernel reads ``graph.get_state_history(config)`` and builds the timeline and its DOT
(`lgnb.draw.history`); the browser renders the SVG with Graphviz WASM. Clicking a
checkpoint shows its values / next / metadata as text and a fork form generated from the
state schema; shift-clicking a second one shows the diff between the two.

* **Fork from here** sends the edited values (validated here, in the kernel) through
  ``graph.update_state(checkpoint_config, values, as_node=...)``: a new branch.
* **Replay from here** starts ``lgnb.run(graph, None, checkpoint_config)``; its run view
  opens under the timeline and streams the replay, and the timeline grows as it goes.
* ``follow(run)`` / ``history(..., follow=run)`` redraw the timeline while a run on the
  thread proceeds; ``follow=True`` polls the thread instead.

Big threads stay small and fast: the timeline is read without decoding state values
(`_history_read`: only the clicked checkpoint's values are decoded, each stored version
once), a page of checkpoints at a time (`_history_pages`: "load older" asks for the next
one), and long linear runs are drawn as one expandable node (`lgnb.draw.history_runs`).

Each action has one busy guard here and one in the page: a double click starts one replay.

A graph whose saver is bound to the notebook's event loop (LangGraph's
``AsyncSqliteSaver`` / ``AsyncPostgresSaver``, made in a cell) is read on a thread of the
view's own: the first page, clicks, forms, forks and a followed run's redraws are handed
to it and land once the loop is free (see `_loops.loop_of`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import ipywidgets
import traitlets

from lgnb.draw import jsonable
from lgnb.draw.history import DETAIL_LIMIT, Timeline, checkpoint_diff, snapshot_details, timeline, timeline_to_dot
from lgnb.draw.history_runs import MAX_DRAWN, collapse, reveal
from lgnb.widgets._async_nodes import needs_async
from lgnb.widgets._history_fork import FORM_TEXT_MAX, ForkError, fork_form, parse_edits
from lgnb.widgets._history_pages import MAX_LOADED, PAGE, HistoryPages
from lgnb.widgets._history_read import HistoryReader
from lgnb.widgets._loops import Repeating, loop_bound_error, loop_of, refuses_sync_here
from lgnb.widgets._runtime import View
from lgnb.widgets._snapshot import history_html
from lgnb.widgets._snapshot_svg import svg_for_dot
from lgnb.widgets._title import view_title
from lgnb.widgets.graph_view import check_graph

#: a second identical fork (same checkpoint, values, as_node) within this many seconds is
#: taken for a double click and refused
FORK_DEBOUNCE = 1.5
#: the name prefix of a view's reader thread (a loop-bound saver, see `_on_worker`)
_READER = "lgnb-history-read-"
#: replay views kept under the timeline (the newest last)
KEEP_REPLAYS = 3

__all__ = ["FORM_TEXT_MAX", "ForkError", "HistoryView", "history"]


class HistoryView(View):
    """The timeline widget returned by :func:`history`."""

    _view_kind = traitlets.Unicode("history").tag(sync=True)
    _snapshot_on = ("timeline",)
    dot = traitlets.Unicode("").tag(sync=True)
    timeline = traitlets.Dict().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    thread = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    #: a second checkpoint (shift-click) to compare `selected` with
    compare = traitlets.Unicode("").tag(sync=True)
    #: the selected checkpoint's values / next / metadata / tasks and its fork form
    details = traitlets.Dict().tag(sync=True)
    #: checkpoint_diff(compare → selected), with "a"/"b" ids and steps ({} when not comparing)
    diff = traitlets.Dict().tag(sync=True)
    #: why the last fork from the page was refused, per field ("" key: the whole fork)
    fork_errors = traitlets.Dict().tag(sync=True)
    #: "replay" while a replay started from the view runs, "" otherwise
    busy = traitlets.Unicode("").tag(sync=True)
    following = traitlets.Bool(False).tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, graph: Any, config: Mapping[str, Any], *, limit: int | None = None,
                 use_async: bool | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.graph = graph
        self.config = dict(config)
        self.limit = limit
        #: replays drive ``graph.astream`` (a graph with async nodes) instead of ``graph.stream``
        self.use_async = needs_async(graph) if use_async is None else use_async
        self.thread = str((self.config.get("configurable") or {}).get("thread_id", ""))
        self.runs: list[Any] = []  # replays started from the view (lgnb.Run handles)
        #: the run views of the replays, shown under the timeline
        self.replays = ipywidgets.VBox([])
        self._panel: ipywidgets.VBox | None = None
        self._timeline: Timeline | None = None
        self._last_fork: tuple[str, float] | None = None
        self._followed: list[tuple[Any, Any]] = []  # (run view, observer)
        self._poll: Repeating | None = None
        self._latest_seen: str | None = None
        self._reader = HistoryReader(graph, self.config)
        self._pages = HistoryPages(self._reader, limit=limit)
        self._worker: ThreadPoolExecutor | None = None  # reads for a loop-bound saver
        self._revealed: set[str] = set()  # checkpoints revealed by expanding runs
        self._drawn: Timeline | None = None
        self._loaded = False
        #: one reader at a time: a followed run refreshes from its thread, clicks come from the comm
        self._lock = threading.RLock()

    # -- display: the timeline with the replay views under it ----------------------------
    @property
    def panel(self) -> ipywidgets.VBox:
        """The timeline and, under it, the run views of its replays (what displays)."""
        if self._panel is None:
            self._panel = ipywidgets.VBox([self, self.replays])
        return self._panel

    def _widget_mimebundle(self, **kwargs: Any) -> Any:
        return self.panel._repr_mimebundle_(**kwargs)

    def _static_html(self) -> str:
        state = {"title": self.title, "thread": self.thread, "error": self.error, "timeline": self.timeline}
        return history_html(state, svg=svg_for_dot(self.dot))

    # -- public API --------------------------------------------------------------
    @property
    def model(self) -> Timeline | None:
        """The timeline of every checkpoint read so far (see `lgnb.draw.history.Timeline`;
        without per-checkpoint details: :meth:`values_at` reads a checkpoint's values)."""
        return self._timeline

    @property
    def drawn(self) -> Timeline | None:
        """What is drawn: :attr:`model` with long linear runs folded into segments."""
        return self._drawn

    def refresh(self) -> Timeline:
        """Read the history again (the newest checkpoints, and all new ones) and redraw."""
        self._not_on_loop("refresh")
        with self._lock:
            if self._loaded:
                self._pages.refresh()
            else:
                self._pages.load_first()
                self._loaded = True
            return self._redraw()

    def load_older(self) -> int:
        """Read the next page of older checkpoints (`PAGE` of them, within `limit`) and
        redraw; returns how many were added."""
        self._not_on_loop("load_older")
        if not self.can_load_older():
            if self._pages.has_older and self._pages.at_cap:
                self.notice = (f"the view keeps {self._pages.cap:,} checkpoints: "
                               "lgnb.history(..., limit=None) pages through all of them")
            return 0
        # one sync: the notice arrives with the drawing it describes, never after it. The lock
        # first (as in `_redraw`): the held sync goes out before another thread's redraw can
        # start, so that redraw never lands in this hold and is never half sent
        with self._lock, self.hold_sync():
            added = self._pages.load_older()
            self._redraw()
            self.notice = f"loaded {added:,} older checkpoint{'s' if added != 1 else ''}" if added else \
                "no older checkpoints"
        return added

    def can_load_older(self) -> bool:
        """Whether older checkpoints may exist that "load older" would read."""
        return self._pages.has_older and not self._pages.at_cap

    def expand(self, segment_id: str) -> None:
        """Draw the checkpoints of a collapsed run (a short run in full, a long one as a
        few checkpoints that split it into shorter runs)."""
        if refuses_sync_here(self._saver) and self._on_worker(self.expand, segment_id):
            return  # the reader thread may hold the lock while it waits for this loop
        with self._lock:
            drawn, timeline = self._drawn, self._timeline
            seg = drawn.segment_of(segment_id) if drawn else None
            if drawn is None or seg is None or seg.kind != "run":
                raise KeyError(f"no collapsed run {segment_id!r} is drawn: refresh, or call collapse_runs()")
            self._revealed.update(reveal(seg))
            # its drawn neighbours stay drawn: the runs between landmarks are exactly the gaps
            self._revealed.update(e for link in drawn.links for e in (link.source, link.target)
                                  if seg.id in (link.source, link.target)
                                  and timeline is not None and timeline.by_id(e) is not None)
            self._redraw()

    def collapse_runs(self) -> None:
        """Fold every expanded run again."""
        if refuses_sync_here(self._saver) and self._on_worker(self.collapse_runs):
            return  # as in `expand`
        with self._lock:
            self._revealed.clear()
            self._redraw()

    def _redraw(self) -> Timeline:
        with self._lock:
            return self._redraw_locked()

    def _redraw_locked(self) -> Timeline:
        t = timeline(self._pages.records.values(), current=self.selected or None, details=False)
        self._timeline = t
        self._latest_seen = t.latest
        drawn = collapse(t, keep=self._revealed | ({self.compare} if self.compare else set()))
        self._drawn = drawn
        with self.hold_sync():
            self.timeline = {**drawn.to_json(details=False), "loaded": len(t.checkpoints),
                             "has_older": self.can_load_older(), "at_cap": self._pages.at_cap and self._pages.has_older,
                             "expanded": bool(self._revealed),
                             "caps": {"page": PAGE, "loaded": self._pages.cap, "drawn": MAX_DRAWN,
                                      "max_loaded": MAX_LOADED}}
            self.dot = timeline_to_dot(drawn)
            self._show_details()
            self._show_diff()
        return t

    def _folded(self, cid: str) -> bool:
        return bool(cid) and self._drawn is not None and self._drawn.segment_of(cid) is not None

    @traitlets.observe("selected")
    def _selected_changed(self, _change: Any) -> None:
        if self._on_worker(self._selected_changed, _change):
            return
        if self._folded(self.selected):
            self._redraw()  # drawn on its own now (the selected checkpoint is never folded)
            return
        self._show_details()
        self._show_diff()

    @traitlets.observe("compare")
    def _compare_changed(self, _change: Any) -> None:
        if self._on_worker(self._compare_changed, _change):
            return
        if self._folded(self.compare):
            self._redraw()
            return
        self._show_diff()

    def _show_details(self) -> None:
        c = self._timeline.by_id(self.selected) if self._timeline and self.selected else None
        if c is None:
            self.details = {}
            return
        try:
            snap = self._reader.state(self.checkpoint_config(c.id))
        except Exception as exc:  # noqa: BLE001 - shown in the view
            self.details = {"id": c.id, "error": f"{type(exc).__name__}: {exc}", "form": {"id": c.id, "fields": [],
                            "as_node": [], "error": "the checkpoint could not be read"}}
            return
        try:
            raw = getattr(snap, "values", None)
            form = self.fork_form(c.id, values=jsonable(raw, limit=10**9), raw=raw)
        except Exception as exc:  # noqa: BLE001 - the details still show; the form says why not
            form = {"id": c.id, "fields": [], "as_node": [], "error": f"{type(exc).__name__}: {exc}"}
        self.details = {"id": c.id, **snapshot_details(snap), "form": form}

    def _show_diff(self) -> None:
        if not (self.selected and self.compare and self.selected != self.compare and self._timeline):
            self.diff = {}
            return
        try:
            self.diff = self.checkpoint_diff(self.compare, self.selected)
        except Exception as exc:  # noqa: BLE001 - shown in the view
            self.diff = {"a": self.compare, "b": self.selected, "error": f"{type(exc).__name__}: {exc}"}

    def checkpoint_config(self, checkpoint_id: str) -> dict[str, Any]:
        """The RunnableConfig addressing `checkpoint_id` on this thread."""
        t = self._timeline or self.refresh()
        c = t.by_id(checkpoint_id)
        if c is None:
            raise KeyError(f"no checkpoint {checkpoint_id!r} in the history of thread {self.thread!r}; "
                           "call refresh() if it is new")
        configurable = dict(self.config.get("configurable") or {})
        configurable.update({k: v for k, v in (c.config.get("configurable") or {}).items()
                             if k in ("thread_id", "checkpoint_ns", "checkpoint_id")})
        return {**self.config, "configurable": configurable}

    def values_at(self, checkpoint_id: str) -> Any:
        """The state values of a checkpoint, as JSON (strings not cut short). Read through
        the view's cache: a stored value shared by many checkpoints is decoded once."""
        self._not_on_loop("values_at")
        snap = self._reader.state(self.checkpoint_config(checkpoint_id))
        return jsonable(getattr(snap, "values", None), limit=10**9)

    def checkpoint_diff(self, a: str, b: str) -> dict[str, Any]:
        """What changed from checkpoint `a` to checkpoint `b` (see `lgnb.draw.checkpoint_diff`);
        compared in full, long strings cut short in the result (it is sent to the page)."""
        out = jsonable(checkpoint_diff(self.values_at(a), self.values_at(b)), limit=DETAIL_LIMIT)
        return {"a": a, "b": b, "a_step": self._step(a), "b_step": self._step(b), **out}

    # -- fork ----------------------------------------------------------------------------
    def fork_form(self, checkpoint_id: str, *, values: Any = None, raw: Any = None) -> dict[str, Any]:
        """The fork form of a checkpoint (see `lgnb.widgets._history_fork.fork_form`);
        `values`: the checkpoint's values as JSON and `raw` as stored, when already read."""
        if values is None:
            self._not_on_loop("fork_form")
            snap = self._reader.state(self.checkpoint_config(checkpoint_id))
            raw = getattr(snap, "values", None)
            values = jsonable(raw, limit=10**9)
        return fork_form(self._own_graph(), checkpoint_id, values, raw=raw)

    def _own_graph(self) -> Any:
        """The graph whose checkpoints the view shows: a subgraph's, for a view on a
        subgraph's namespace (its state keys, reducers and nodes make the fork form),
        else the graph given."""
        ns = str((self.config.get("configurable") or {}).get("checkpoint_ns") or "")
        if not ns:
            return self.graph
        from lgnb.pregel._options import recast_ns

        path = recast_ns(ns, keep_numbers=False)
        try:
            found = dict(self.graph.get_subgraphs(namespace=path, recurse=True))
        except Exception:  # noqa: BLE001 - a graph that cannot list them: the given graph's form
            return self.graph
        return found.get(path, self.graph)

    def parse_edits(self, checkpoint_id: str, edits: Mapping[str, Any]) -> dict[str, Any] | None:
        """The values to send for the page's edited fields (``{key: text}``, booleans as
        true/false), validated: a :class:`ForkError` names every field that is wrong.
        Unchanged fields and empty reducer fields are left out; None when nothing changed."""
        return parse_edits(self.fork_form(checkpoint_id), edits)

    def fork(self, checkpoint_id: str, values: Any = None, *, as_node: str | None = None) -> dict[str, Any]:
        """``graph.update_state`` on that checkpoint (no changes by default): a new branch.

        Returns the new checkpoint's config and selects it.
        """
        kwargs = {"as_node": as_node} if as_node else {}
        new = self.graph.update_state(self.checkpoint_config(checkpoint_id), values, **kwargs)
        cid = (new.get("configurable") or {}).get("checkpoint_id") if isinstance(new, Mapping) else None
        edited = f" with {', '.join(values)} edited" if isinstance(values, Mapping) and values else ""
        self.selected = str(cid or "")
        self.notice = f"forked from step {self._step(checkpoint_id)}{edited}: new checkpoint {cid}"
        self.refresh()
        return dict(new) if isinstance(new, Mapping) else new

    def fork_with_edits(self, checkpoint_id: str, edits: Mapping[str, Any], *,
                        as_node: str | None = None) -> dict[str, Any]:
        """What the page's Fork button does: parse and validate `edits` (``{key: text}``),
        then :meth:`fork`. Raises :class:`ForkError` (nothing sent) when a field is wrong."""
        return self.fork(checkpoint_id, self.parse_edits(checkpoint_id, edits), as_node=as_node or None)

    # -- replay --------------------------------------------------------------------------
    def replay(self, checkpoint_id: str, *, display: bool = False, use_async: bool | None = None) -> Any:
        """``lgnb.run(graph, None, checkpoint_config)``: re-run from that checkpoint.

        Returns the :class:`lgnb.Run`; its view opens under the timeline (`replays`), and
        the timeline redraws as the replay's checkpoints land. One replay at a time.
        `use_async` (default: the view's, see :func:`history`): drive ``graph.astream``,
        as a graph with async nodes needs.
        """
        from lgnb.widgets.run_view import run

        running = self.running_replay()
        if running is not None:
            raise RuntimeError(f"a replay from this timeline is still running ({running.view.title}): "
                               "wait for it to end, or cancel it (run.cancel()), then replay again")
        step = self._step(checkpoint_id)
        config = self.checkpoint_config(checkpoint_id)
        self.busy = "replay"
        try:
            handle = run(self.graph, None, config, display=display, title=f"replay from step {step}",
                         use_async=self.use_async if use_async is None else use_async)
        except BaseException:
            self.busy = ""
            raise
        self.runs.append(handle)
        self.replays.children = (*self.replays.children[-(KEEP_REPLAYS - 1):], handle.view)
        self.notice = f"replaying from step {step}…"

        def settled(status: str) -> None:
            self.busy = "" if self.running_replay() is None else "replay"
            self.notice = f"replay from step {step}: {status}"

        self.follow(handle, on_settle=settled)
        return handle

    def running_replay(self) -> Any:
        """The replay started from this view that is still running (None if none)."""
        return next((r for r in reversed(self.runs) if r.status in ("running", "pending")), None)

    # -- following a run on the thread ---------------------------------------------------
    def follow(self, run: Any = True, *, interval: float = 0.5, on_settle: Any = None) -> HistoryView:
        """Redraw the timeline while a run on this thread proceeds.

        `run` an :class:`lgnb.Run`: redraw at each of its steps and when it pauses or ends
        (no polling). ``True``: poll the thread's latest checkpoint every `interval` seconds
        until :meth:`unfollow` (or the view is closed).
        """
        if run is True:
            if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0:
                raise ValueError(f"follow(True, interval=...) polls every `interval` seconds: give a positive "
                                 f"number, e.g. interval=0.5 (got {interval!r})")
            self._start_polling(interval)
            return self
        view = getattr(run, "view", None)
        if view is None:
            raise TypeError(f"follow() takes an lgnb.Run (or True to poll), not {type(run).__name__}")

        def changed(change: Mapping[str, Any]) -> None:
            if not self._on_worker(self.refresh):
                self._safely(self.refresh)
            self.following = self._polling() or any(v.status in ("running", "pending") for v, _ in self._followed)
            if change["name"] == "status" and change["new"] not in ("running", "pending") and on_settle:
                on_settle(change["new"])

        view.observe(changed, names=["step", "status"])
        self._followed.append((view, changed))
        self.following = self._polling() or run.status in ("running", "pending")
        if run.status not in ("running", "pending"):
            changed({"name": "status", "new": run.status})
        return self

    def unfollow(self) -> None:
        """Stop redrawing by itself (see :meth:`follow`)."""
        for view, fn in self._followed:
            try:
                view.unobserve(fn, names=["step", "status"])
            except ValueError:
                pass
        self._followed.clear()
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None
        self.following = False

    def _polling(self) -> bool:
        return self._poll is not None and not self._poll.done()

    def _start_polling(self, interval: float) -> None:
        """Poll the thread's latest checkpoint on a thread of its own: a cell that blocks
        the kernel's loop (`time.sleep`, a long computation) does not stop the redraws."""
        if self._poll is not None and not self._poll.done():
            return

        def tick() -> bool:
            if getattr(self, "comm", None) is None:  # the view was closed
                self.following = False
                return False
            try:
                snap = self.graph.get_state(self.config)
            except Exception:  # noqa: BLE001 - a saver hiccup: try again next time
                return True
            latest = (getattr(snap, "config", None) or {}).get("configurable", {}).get("checkpoint_id")
            if latest and latest != self._latest_seen:
                self._safely(self.refresh)
            return True

        self.following = True
        self._poll = Repeating(interval, tick, name="lgnb-history-follow")

    def close(self) -> None:
        self.unfollow()
        if self._worker is not None:
            self._worker.shutdown(wait=False)
        super().close()

    # -- a saver bound to the notebook's event loop --------------------------------------
    @property
    def _saver(self) -> Any:
        return getattr(self.graph, "checkpointer", None)

    def _on_worker(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Hand `fn(*args)` to the view's reader thread when the graph's saver is bound to
        an event loop (see `loop_of`); False: run it here. From any thread: the caller may
        be the loop's own (which the saver refuses), or one holding a run view's lock that
        the loop's thread may wait for while the saver waits for the loop. One thread, so
        clicks are answered in the order they came; its errors are shown in the view."""
        if loop_of(self._saver) is None:
            return False
        if threading.current_thread().name.startswith(_READER):
            return False  # already on it
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix=f"{_READER}{id(self):x}")
        self._worker.submit(self._safely, fn, *args)
        return True

    def _not_on_loop(self, what: str) -> None:
        """Refuse a direct call that reads the saver on the thread of the loop it is bound to
        (before taking the view's lock, which the reader thread may hold while it waits
        for that loop)."""
        saver = self._saver
        if refuses_sync_here(saver):
            raise loop_bound_error(saver, f"HistoryView.{what}")

    def _dispatch(self, widget: object, content: object, buffers: object) -> None:
        if not self._on_worker(super()._dispatch, widget, content, buffers):
            super()._dispatch(widget, content, buffers)

    # -- messages from the browser -----------------------------------------------
    def _step(self, checkpoint_id: str) -> str:
        c = self._timeline.by_id(checkpoint_id) if self._timeline else None
        return "?" if c is None or c.step is None else str(c.step)

    def _safely(self, fn: Any, *args: Any) -> bool:
        try:
            self.error = ""
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - shown in the view: a comm handler has nowhere else to report
            self.error = f"{type(exc).__name__}: {exc}"
            return False
        return True

    def _reply(self, kind: str, content: Mapping[str, Any], **result: Any) -> None:
        if getattr(self, "comm", None) is not None:  # a closed view has no one to answer
            self.send({"kind": kind, "request": content.get("request"), **result})

    def _msg_select(self, content: dict[str, Any]) -> None:
        if isinstance(content.get("id"), str):
            self.selected = content["id"]

    def _msg_compare(self, content: dict[str, Any]) -> None:
        if isinstance(content.get("id"), str):
            self.compare = content["id"]

    def _msg_refresh(self, _content: dict[str, Any]) -> None:
        self._safely(self.refresh)

    def _msg_expand(self, content: dict[str, Any]) -> None:
        if isinstance(content.get("id"), str):
            ok = self._safely(self.expand, content["id"])
            self._reply("expand-result", content, ok=ok, error=self.error)

    def _msg_collapse(self, content: dict[str, Any]) -> None:
        self._safely(self.collapse_runs)

    def _msg_load_older(self, content: dict[str, Any]) -> None:
        added: list[int] = []
        ok = self._safely(lambda: added.append(self.load_older()))
        self._reply("load-older-result", content, ok=ok, added=added[0] if added else 0, error=self.error)

    def _msg_fork(self, content: dict[str, Any]) -> None:
        cid = content.get("id")
        if not isinstance(cid, str):
            return
        values = content.get("values")
        edits: Mapping[str, Any] = values if isinstance(values, Mapping) else {}
        as_node = content.get("as_node") if isinstance(content.get("as_node"), str) else None
        key = json.dumps([cid, edits, as_node], sort_keys=True, default=str)
        now = time.monotonic()
        if self._last_fork is not None and self._last_fork[0] == key and now - self._last_fork[1] < FORK_DEBOUNCE:
            self._reply("fork-result", content, ok=False, error="this fork was just made (a double click?): nothing sent")
            return
        self.fork_errors = {}
        try:
            self.error = ""
            self.fork_with_edits(cid, edits, as_node=as_node)
        except ForkError as exc:
            self.fork_errors = dict(exc.errors)
            self._reply("fork-result", content, ok=False, error="fix the fields marked in red: nothing was sent",
                        errors=exc.errors)
            return
        except Exception as exc:  # noqa: BLE001 - shown in the view
            message = f"{type(exc).__name__}: {exc}"
            self.fork_errors = {"": message}
            self.error = message
            self._reply("fork-result", content, ok=False, error=message)
            return
        self._last_fork = (key, time.monotonic())
        self._reply("fork-result", content, ok=True, checkpoint=self.selected)

    def _msg_replay(self, content: dict[str, Any]) -> None:
        if not isinstance(content.get("id"), str):
            return
        try:
            self.error = ""
            handle = self.replay(content["id"])
        except Exception as exc:  # noqa: BLE001 - shown in the view
            self.error = f"{type(exc).__name__}: {exc}"
            self._reply("replay-result", content, ok=False, error=self.error)
            return
        self._reply("replay-result", content, ok=True, thread=handle.view.thread)


def history(graph: Any, config: Mapping[str, Any], *, title: str | None = None,
            limit: int | None = 200, follow: Any = None, use_async: bool | None = None) -> HistoryView:
    """The checkpoint timeline of the thread in `config` (``{"configurable": {"thread_id": ...}}``).

    Click a checkpoint for its values, next nodes and metadata; fork (with edited values)
    or replay from it; shift-click a second one for the diff between the two. The graph
    needs a checkpointer. `view.refresh()` re-reads the history; `limit` caps how many of
    the newest checkpoints the view reads (None: all, a page of them at a time, "load older"
    reads the next; at most `MAX_LOADED`). `follow`: an :class:`lgnb.Run` on the
    thread (the timeline redraws as its checkpoints land), or True to poll the thread.
    `use_async=True`: "Replay from here" drives ``graph.astream`` (as `lgnb.run(...,
    use_async=True)`), which a graph with async nodes needs; the default (None) decides
    from the graph's nodes.
    """
    check_graph(graph, what="lgnb.history")
    if not callable(getattr(graph, "get_state_history", None)):
        raise TypeError(f"lgnb.history: {type(graph).__name__} has no get_state_history()")
    if not isinstance(config, Mapping) or (config.get("configurable") or {}).get("thread_id") in (None, ""):
        raise ValueError("lgnb.history needs the thread's config, e.g. "
                         "lgnb.history(graph, {'configurable': {'thread_id': '1'}})")
    from lgnb.remote._edge import for_views, is_remote

    graph = for_views(graph)  # a server's threads are checkpointed; its wire dicts become objects here
    if not is_remote(graph) and getattr(graph, "checkpointer", None) in (None, False):
        raise ValueError("lgnb.history: the graph has no checkpointer, so it keeps no history. "
                         "Compile it with one: builder.compile(checkpointer=InMemorySaver())")
    view = HistoryView(graph, config, limit=limit, use_async=use_async)
    view.title = view_title(graph, title, what="lgnb.history", detail=f"thread {view.thread}")
    reading = "reading the history…"

    def first_page() -> None:
        view.refresh()
        if view.notice == reading:
            view.notice = ""

    if refuses_sync_here(getattr(graph, "checkpointer", None)):
        view.notice = reading  # before the page is read, so the reader clears it
        view._on_worker(first_page)
    else:
        view.refresh()
    if follow is not None and follow is not False:
        view.follow(follow)
    return view

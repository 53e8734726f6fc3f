"""`lgnb.history(graph, config)`: a thread's checkpoint timeline, forks drawn as branches.

The kernel reads ``graph.get_state_history(config)`` and builds the timeline and its DOT
(`lgnb.draw.history`); the browser renders the SVG with Graphviz WASM. Clicking a
checkpoint shows its values / next / metadata as text; its buttons fork from it
(``update_state`` with no changes) or replay from it (``lgnb.run(graph, None, config)``),
after which the timeline re-reads the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import traitlets

from lgnb.draw.history import Timeline, timeline, timeline_to_dot
from lgnb.widgets._runtime import View
from lgnb.widgets.graph_view import check_graph


class HistoryView(View):
    """The timeline widget returned by :func:`history`."""

    _view_kind = traitlets.Unicode("history").tag(sync=True)
    dot = traitlets.Unicode("").tag(sync=True)
    timeline = traitlets.Dict().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    thread = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    #: the selected checkpoint's values / next / metadata / tasks ({"id": ..., ...})
    details = traitlets.Dict().tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, graph: Any, config: Mapping[str, Any], *, limit: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.graph = graph
        self.config = dict(config)
        self.limit = limit
        self.thread = str((self.config.get("configurable") or {}).get("thread_id", ""))
        self.runs: list[Any] = []  # replays started from the view (lgnb.Run handles)
        self._timeline: Timeline | None = None

    # -- public API --------------------------------------------------------------
    @property
    def model(self) -> Timeline | None:
        """The timeline last read (see `lgnb.draw.history.Timeline`)."""
        return self._timeline

    def refresh(self) -> Timeline:
        """Re-read the history and redraw."""
        kwargs = {"limit": self.limit} if self.limit is not None else {}
        snapshots = list(self.graph.get_state_history(self.config, **kwargs))
        t = timeline(snapshots, current=self.selected or None)
        self._timeline = t
        with self.hold_sync():
            self.timeline = t.to_json(details=False)
            self.dot = timeline_to_dot(t)
            self._show_details()
        return t

    @traitlets.observe("selected")
    def _selected_changed(self, _change: Any) -> None:
        self._show_details()

    def _show_details(self) -> None:
        c = self._timeline.by_id(self.selected) if self._timeline and self.selected else None
        self.details = {"id": c.id, **c.details} if c is not None else {}

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

    def fork(self, checkpoint_id: str, values: Any = None, *, as_node: str | None = None) -> dict[str, Any]:
        """``graph.update_state`` on that checkpoint (no changes by default): a new branch.

        Returns the new checkpoint's config and selects it.
        """
        kwargs = {"as_node": as_node} if as_node is not None else {}
        new = self.graph.update_state(self.checkpoint_config(checkpoint_id), values, **kwargs)
        cid = (new.get("configurable") or {}).get("checkpoint_id") if isinstance(new, Mapping) else None
        self.selected = str(cid or "")
        self.notice = f"forked from step {self._step(checkpoint_id)}: new checkpoint {cid}"
        self.refresh()
        return dict(new) if isinstance(new, Mapping) else new

    def replay(self, checkpoint_id: str, *, display: bool = False) -> Any:
        """``lgnb.run(graph, None, checkpoint_config)``: re-run from that checkpoint.

        Returns the :class:`lgnb.Run`; the timeline refreshes when it pauses or ends.
        """
        from lgnb.widgets.run_view import run

        step = self._step(checkpoint_id)
        handle = run(self.graph, None, self.checkpoint_config(checkpoint_id), display=display,
                     title=f"replay from step {step}")
        self.runs.append(handle)
        self.notice = f"replaying from step {step}…"

        def settled(change: Mapping[str, Any]) -> None:
            if change["new"] in ("running", "pending"):
                return
            self.notice = f"replay from step {step}: {change['new']}"
            self._safely(self.refresh)

        handle.view.observe(settled, names="status")
        if handle.status not in ("running", "pending"):
            settled({"new": handle.status})
        return handle

    # -- messages from the browser -----------------------------------------------
    def _step(self, checkpoint_id: str) -> str:
        c = self._timeline.by_id(checkpoint_id) if self._timeline else None
        return "?" if c is None or c.step is None else str(c.step)

    def _safely(self, fn: Any, *args: Any) -> None:
        try:
            self.error = ""
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - shown in the view: a comm handler has nowhere else to report
            self.error = f"{type(exc).__name__}: {exc}"

    def _msg_select(self, content: dict[str, Any]) -> None:
        if isinstance(content.get("id"), str):
            self.selected = content["id"]

    def _msg_refresh(self, _content: dict[str, Any]) -> None:
        self._safely(self.refresh)

    def _msg_fork(self, content: dict[str, Any]) -> None:
        if isinstance(content.get("id"), str):
            self._safely(self.fork, content["id"])

    def _msg_replay(self, content: dict[str, Any]) -> None:
        if isinstance(content.get("id"), str):
            self._safely(self.replay, content["id"])


def history(graph: Any, config: Mapping[str, Any], *, title: str | None = None,
            limit: int | None = 200) -> HistoryView:
    """The checkpoint timeline of the thread in `config` (``{"configurable": {"thread_id": ...}}``).

    Click a checkpoint for its values, next nodes and metadata; fork or replay from it.
    The graph needs a checkpointer. `view.refresh()` re-reads the history; `limit` caps
    how many of the newest checkpoints are drawn (None for all).
    """
    check_graph(graph, what="lgnb.history")
    if not callable(getattr(graph, "get_state_history", None)):
        raise TypeError(f"lgnb.history: {type(graph).__name__} has no get_state_history()")
    if not isinstance(config, Mapping) or not (config.get("configurable") or {}).get("thread_id"):
        raise ValueError("lgnb.history needs the thread's config, e.g. "
                         "lgnb.history(graph, {'configurable': {'thread_id': '1'}})")
    if getattr(graph, "checkpointer", None) in (None, False):
        raise ValueError("lgnb.history: the graph has no checkpointer, so it keeps no history. "
                         "Compile it with one: builder.compile(checkpointer=InMemorySaver())")
    view = HistoryView(graph, config, limit=limit)
    view.title = title if title is not None else f"history · thread {view.thread}"
    view.refresh()
    return view

"""`lgnb.inbox(url)`: the review inbox of a LangGraph server.

Threads interrupted on a server (an agent waiting for a person) are listed newest first,
a page at a time (`threads.search(status="interrupted")` with a limit and an offset, so a
server with thousands of threads costs one small request per page), each with its
question and how long it has waited. Clicking one opens it under the list as an attached
run view (`lgnb.attach`): its state and the usual approval form; the form's answer
resumes the server thread, and when that run pauses or ends the list is read again, so an
answered thread leaves it (unless it asks again).
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import ipywidgets
import traitlets

from lgnb.widgets._forms import asked
from lgnb.widgets._runtime import View

__all__ = ("InboxView", "inbox")

_FIELDS = ["thread_id", "updated_at", "metadata", "interrupts", "status"]


def _age_seconds(stamp: Any, now: float) -> float:
    try:
        then = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if then.tzinfo is None:
        then = then.replace(tzinfo=timezone.utc)
    return max(0.0, now - then.timestamp())


def _question(thread: Mapping[str, Any]) -> tuple[str, str]:
    """The first pending interrupt's question (short text) and id."""
    interrupts = thread.get("interrupts") or {}
    pending = [i for group in interrupts.values() for i in (group or ())] if isinstance(interrupts, Mapping) else []
    if not pending:
        return "(waiting, no question recorded)", ""
    first = pending[0]
    value = first.get("value") if isinstance(first, Mapping) else first
    more = f" (+{len(pending) - 1} more)" if len(pending) > 1 else ""
    return (asked(value) or "(a question)") + more, str(first.get("id", "") if isinstance(first, Mapping) else "")


class InboxView(View):
    """The inbox widget returned by :func:`inbox`."""

    _view_kind = traitlets.Unicode("inbox").tag(sync=True)
    _snapshot_on = ("rows",)
    title = traitlets.Unicode("").tag(sync=True)
    url = traitlets.Unicode("").tag(sync=True)
    rows: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    page = traitlets.Int(0).tag(sync=True)
    page_size = traitlets.Int(20).tag(sync=True)
    has_more = traitlets.Bool(False).tag(sync=True)
    opened = traitlets.Unicode("").tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, client: Any, url: str, *, graph_id: str | None, metadata: Mapping[str, Any] | None,
                 page_size: int, api_key: str | None, headers: Mapping[str, str] | None) -> None:
        super().__init__(url=url, page_size=page_size)
        self.client = client
        self.graph_id = graph_id
        self.metadata = dict(metadata or {})
        self._api_key = api_key
        self._headers = dict(headers) if headers else None
        #: the run view of the thread opened from the list (under it)
        self.panes = ipywidgets.VBox([])
        self._panel: ipywidgets.VBox | None = None
        #: the attached run of the opened thread
        self.run: Any = None

    # -- display ---------------------------------------------------------------------
    @property
    def panel(self) -> ipywidgets.VBox:
        """The list and, under it, the opened thread's run view (what displays)."""
        if self._panel is None:
            self._panel = ipywidgets.VBox([self, self.panes])
        return self._panel

    def _widget_mimebundle(self, **kwargs: Any) -> Any:
        return self.panel._repr_mimebundle_(**kwargs)

    def _static_html(self) -> str:
        items = "".join(
            f"<li>{html.escape(r['question'])} <small>· thread {html.escape(r['thread_id'])}</small></li>"
            for r in self.rows
        )
        return (f"<div class='lgnb-inbox-snapshot'><b>{html.escape(self.title)}</b>"
                f"<ul>{items or '<li>no thread is waiting</li>'}</ul></div>")

    # -- public API --------------------------------------------------------------------
    def refresh(self) -> list[dict[str, Any]]:
        """Read the current page of interrupted threads (newest first) from the server."""
        filters = dict(self.metadata)
        if self.graph_id:
            filters["graph_id"] = self.graph_id
        try:
            found = self.client.threads.search(
                metadata=filters or None, status="interrupted", limit=self.page_size + 1,
                offset=self.page * self.page_size, sort_by="updated_at", sort_order="desc", select=_FIELDS,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - shown in the view, and raised to a caller
            self.error = f"{type(exc).__name__}: {exc}"
            raise
        now = time.time()
        rows = []
        for thread in found[: self.page_size]:
            question, iid = _question(thread)
            meta = thread.get("metadata") or {}
            rows.append({"thread_id": str(thread["thread_id"]), "graph_id": str(meta.get("graph_id") or ""),
                         "question": question, "interrupt_id": iid, "updated_at": str(thread.get("updated_at") or ""),
                         "age_s": round(_age_seconds(thread.get("updated_at"), now), 1)})
        self.has_more = len(found) > self.page_size
        self.error = ""
        self.rows = rows
        return rows

    def next_page(self) -> list[dict[str, Any]]:
        """Show the next (older) page."""
        if self.has_more:
            self.page += 1
        return self.refresh()

    def previous_page(self) -> list[dict[str, Any]]:
        """Show the previous (newer) page."""
        self.page = max(0, self.page - 1)
        return self.refresh()

    def open_thread(self, thread_id: str) -> Any:
        """Open a listed thread under the list: its state and its question's form (an
        attached `lgnb.Run`). Answering there resumes it; the list then refreshes."""
        from lgnb.remote._join import attach

        row = next((r for r in self.rows if r["thread_id"] == thread_id), None)
        run = attach(self.url, thread_id, graph_id=(row or {}).get("graph_id") or self.graph_id, display=False,
                     api_key=self._api_key, headers=self._headers)
        self.run = run
        self.opened = thread_id
        self.panes.children = (run.view,)
        self.notice = f"opened thread {thread_id}"

        def settled(change: Mapping[str, Any]) -> None:
            if change["new"] in ("running", "pending"):
                return
            answered = bool(run.answers)
            try:
                self.refresh()
            except Exception:  # noqa: BLE001 - the error is on the view
                return
            if answered:
                still = any(r["thread_id"] == thread_id for r in self.rows)
                self.notice = (f"thread {thread_id} answered: {run.status}"
                               + (" (it asks again)" if still else ", it left the inbox"))

        run.view.observe(settled, names="status")
        return run

    # -- the page's messages ---------------------------------------------------------------
    def _guard(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - a click's failure is shown, never lost
            self.error = f"{type(exc).__name__}: {exc}"

    def _msg_open(self, content: dict[str, Any]) -> None:
        if isinstance(content.get("thread_id"), str):
            self._guard(self.open_thread, content["thread_id"])

    def _msg_refresh(self, _content: dict[str, Any]) -> None:
        self._guard(self.refresh)

    def _msg_page(self, content: dict[str, Any]) -> None:
        self._guard(self.next_page if content.get("to") == "next" else self.previous_page)


def inbox(url: str, graph_id: str | None = None, *, metadata: Mapping[str, Any] | None = None,
          page_size: int = 20, title: str | None = None, api_key: str | None = None,
          headers: Mapping[str, str] | None = None) -> InboxView:
    """The review inbox of the LangGraph server at `url`: its interrupted threads, newest
    first, `page_size` at a time, each with its question and age; click one to open its
    form, answer to resume it.

    `graph_id` lists only that graph's threads (checked against the server's graphs);
    `metadata` only threads whose metadata holds those items. Raises
    `ServerUnreachableError` / `UnknownGraphError` with what to do.
    """
    from lgnb.remote import UnknownGraphError, graph_ids, sync_client

    if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= 1000:
        raise ValueError(f"lgnb.inbox: page_size is how many threads one page lists (1 to 1000), got {page_size!r}")
    client = sync_client(url, api_key=api_key, headers=headers)
    url = url.rstrip("/")
    if graph_id is not None:
        graphs, assistants = graph_ids(client)
        if graph_id not in graphs and graph_id not in assistants:
            raise UnknownGraphError(url, graph_id, graphs)
    view = InboxView(client, url, graph_id=graph_id, metadata=metadata, page_size=page_size,
                     api_key=api_key, headers=headers)
    view.title = title or f"inbox · {graph_id or 'all graphs'} on {url}"
    view.refresh()
    return view

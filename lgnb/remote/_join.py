"""`lgnb.attach(url, thread_id)`: watch a server thread someone else is running.

A run on a LangGraph server may have been started by another client (a web app, a job,
a teammate's notebook). `attach` makes an ordinary `lgnb.Run` view of it: the thread's
state so far, then the active run's events live from where it is (the SDK's
`runs.join_stream`), then its outcome; with no active run, the thread's state, its
pending questions as forms, and its history. A form's answer resumes the server thread
as in any run view.

The Run drives a `ThreadJoin`: the remote graph seen through the views' edge
(`ViewEdge`), whose first segment is the join rather than a new run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from lgnb._internal.constants import INTERRUPT
from lgnb.remote._edge import ViewEdge, _chunk
from lgnb.remote._errors import server_error

__all__ = ("JOIN", "ThreadJoin", "attach", "settled_chunks")


class _Join:
    """The input of an attached run's first segment: join what is there, start nothing."""

    def __repr__(self) -> str:
        return "JOIN"


JOIN = _Join()


def _saved(snapshot: Any, *, running: bool = False) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """The thread's saved state, marked as such (its checkpoint step; `running`: a run is
    under way on it), for the views."""
    from lgnb.widgets._stream import SAVED_STATE

    step = (getattr(snapshot, "metadata", None) or {}).get("step")
    if isinstance(step, int):
        yield (), SAVED_STATE, {"step": step, "running": running}
    yield (), "values", snapshot.values


def _step(snapshot: Any, *, asking: bool) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """The step a joined run is at, from the thread: the saved state's step, or the step
    after it while a question of that step is pending."""
    from lgnb.widgets._stream import STEP

    step = (getattr(snapshot, "metadata", None) or {}).get("step")
    if isinstance(step, int):
        yield (), STEP, {"step": step + 1 if asking else step}


def settled_chunks(snapshot: Any) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """Stream chunks that draw a thread at rest: its saved values, and for each question
    it is waiting on, the asking task (so the form knows its node) and the interrupt
    (the asking step, the one after the saved state, is then under way)."""
    yield from _saved(snapshot, running=bool(snapshot.interrupts or any(t.interrupts for t in snapshot.tasks or ())))
    asked = []
    for task in snapshot.tasks or ():
        if task.interrupts:
            yield (), "tasks", {"id": task.id, "name": task.name, "error": None, "result": [],
                                "interrupts": list(task.interrupts)}
            asked.extend(task.interrupts)
    pending = asked or list(snapshot.interrupts or ())
    if pending:
        yield (), "updates", {INTERRUPT: tuple(pending)}


class ThreadJoin(ViewEdge):
    """A remote graph whose `stream(JOIN, config)` joins the thread's active run (or
    shows the thread at rest); every other input starts a server run as usual."""

    def __init__(self, graph: Any, run_id: str | None) -> None:
        super().__init__(graph)
        self.run_id = run_id
        #: the server run this view joined (None: the thread was at rest)
        self.joined = run_id

    def stream(self, input: Any, config: Any = None, *, multitask: str | None = None,
               **kwargs: Any) -> Iterator[Any]:
        if input is not JOIN:
            yield from super().stream(input, config, multitask=multitask, **kwargs)
            return
        try:
            yield from self._join(config, kwargs.get("stream_mode"))
        except Exception as exc:
            explained = self._explained(exc, config)
            if explained is None:
                raise
            raise explained from exc

    def thread_step(self, config: Any, input: Any) -> Iterator[Any]:
        """Nothing for the join itself: it streams the thread's saved step (`_saved`)."""
        if input is JOIN:
            return iter(())
        return super().thread_step(config, input)

    async def athread_step(self, config: Any, input: Any) -> AsyncIterator[Any]:
        """As `thread_step`."""
        if input is not JOIN:
            async for chunk in super().athread_step(config, input):
                yield chunk

    def _join(self, config: Any, stream_mode: Any) -> Iterator[Any]:
        from lgnb.pregel._remote_wire import ChunkTranslator, StreamPlan

        thread_id = str(((config or {}).get("configurable") or {})["thread_id"])
        run_id, self.run_id = self.run_id, None  # joined once; a resume is a new run
        state = self.get_state({"configurable": {"thread_id": thread_id}})
        if run_id is None:
            yield from settled_chunks(state)
            return
        yield from _saved(state, running=True)  # the state so far, then the run from where it is
        plan = StreamPlan(stream_mode or ["values", "updates"])
        translator = ChunkTranslator(plan, subgraphs=True, version="v1")
        paused = False
        # every mode the run streams (a subset asked of the server drops events; the
        # translator keeps the ones the view reads)
        for part in self.remote.sync_client.runs.join_stream(thread_id, run_id):
            if part.event in ("metadata", "end"):
                continue
            item = translator.feed(part.event, part.data)
            if item is translator.SKIP:
                continue
            chunk = _chunk(item)
            if chunk[1] == "updates" and not chunk[0] and isinstance(chunk[2], Mapping) and INTERRUPT in chunk[2]:
                paused = True
                # the starting client may not have streamed `tasks`: which node asked is read
                # from the thread (its form needs it)
                after = self.get_state({"configurable": {"thread_id": thread_id}})
                yield from _step(after, asking=True)  # the asking step is the one after the saved
                yield from (c for c in settled_chunks(after) if c[1] == "tasks")
            yield chunk
        if not paused:  # the run ended before we joined, or its interrupt came before: read it
            after = self.get_state({"configurable": {"thread_id": thread_id}})
            yield from _step(after, asking=bool(after.interrupts))
            if after.interrupts:
                yield from (c for c in settled_chunks(after) if c[1] in ("tasks", "updates"))


def attach(url: str, thread_id: str, *, graph_id: str | None = None, display: bool = True,
           title: str | None = None, api_key: str | None = None,
           headers: Mapping[str, str] | None = None) -> Any:
    """A live `lgnb.Run` view of server thread `thread_id` at `url`.

    With an active run (running or pending), the view joins it: the state so far, then
    its tokens, updates and progress live, then its outcome (a question becomes the
    usual form; answering resumes the thread). With none, the view shows the thread at
    rest (its state and pending forms) and, when `display` is True, its history timeline
    under it. `graph_id` defaults to the graph the thread's runs used. `run.graph.joined`
    is the server run joined (None when the thread was at rest).
    Raises `ServerUnreachableError`, or LookupError when the server has no such thread.
    """
    from lgnb.pregel.remote import RemoteGraph
    from lgnb.remote import sync_client
    from lgnb.widgets._runtime import show_in_notebook
    from lgnb.widgets.run_view import Run

    client = sync_client(url, api_key=api_key, headers=headers)
    url = url.rstrip("/")
    tid = str(thread_id)
    try:
        thread = client.threads.get(tid)
        active = (client.runs.list(tid, status="running", limit=1)
                  or client.runs.list(tid, status="pending", limit=1))
    except Exception as exc:
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
        if status in (404, 422):
            raise LookupError(f"lgnb.attach: the LangGraph server at {url} has no thread {tid!r} "
                              f"(it answered {status}: {getattr(response, 'text', '')[:200]}). "
                              "List its threads with lgnb.inbox(url) or the SDK's threads.search().") from exc
        explained = server_error(exc, url=url, thread_id=tid)
        if explained is None:
            raise
        raise explained from exc
    run_id = str(active[0]["run_id"]) if active else None
    assistant = graph_id or (active[0]["assistant_id"] if active else None) \
        or (thread.get("metadata") or {}).get("graph_id") or (thread.get("metadata") or {}).get("assistant_id")
    if not assistant:
        raise ValueError(f"lgnb.attach: thread {tid!r} on {url} has never run a graph; pass graph_id=")
    graph = ThreadJoin(RemoteGraph(str(assistant), url=url, api_key=api_key,
                                   headers=dict(headers) if headers else None), run_id)
    config = {"configurable": {"thread_id": tid}}
    shown = title or f"{assistant} · thread {tid[:8]}… ({'joined run' if run_id else 'at rest'})"
    handle = Run(graph, JOIN, config, title=shown, multitask=None)
    if display:
        show_in_notebook(handle)
        if run_id is None:
            from lgnb.widgets.history_view import history

            show_in_notebook(history(graph.remote, config))
    return handle

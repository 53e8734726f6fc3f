"""Notebook access to a LangGraph server: `connect`, `attach`, and the review `inbox`.

A graph deployed on a LangGraph server (`langgraph dev`, LangGraph Platform) runs on
LangGraph's engine; lgnb is the client. `lgnb.connect(url, graph_id)` checks the server
answers and serves that graph, and returns a `RemoteGraph` that `lgnb.run`, `lgnb.show`
and `lgnb.history` take like a local graph. Failures a person can act on raise
`ServerUnreachableError`, `UnknownGraphError` or `ThreadBusyError` with the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lgnb.remote._errors import ServerUnreachableError, UnknownGraphError, server_error

if TYPE_CHECKING:
    from lgnb.pregel.remote import RemoteGraph

__all__ = ("ServerUnreachableError", "UnknownGraphError", "attach", "connect", "graph_ids", "inbox", "sync_client")


def __getattr__(name: str) -> Any:
    if name == "attach":  # loads the widgets: only on use
        from lgnb.remote._join import attach

        return attach
    if name == "inbox":
        from lgnb.widgets.inbox_view import inbox

        return inbox
    raise AttributeError(f"module 'lgnb.remote' has no attribute {name!r}")


def sync_client(url: str, *, api_key: str | None = None, headers: Mapping[str, str] | None = None,
                timeout: float = 5.0) -> Any:
    """A `langgraph_sdk` sync client for `url`, after checking the server answers
    (`GET /ok`); raises `ServerUnreachableError` (with how to start one) when it does not."""
    import httpx
    from langgraph_sdk import get_sync_client

    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"lgnb.connect: url must be the server's http(s) address, e.g. "
                         f"'http://127.0.0.1:2024', got {url!r}")
    url = url.rstrip("/")
    try:
        response = httpx.get(f"{url}/ok", timeout=timeout, headers=dict(headers or {}))
    except httpx.HTTPError as exc:
        raise ServerUnreachableError(url, f"{type(exc).__name__}: {exc}") from exc
    if response.status_code != 200:
        raise ServerUnreachableError(url, f"GET /ok answered {response.status_code}; is this a LangGraph server?")
    return get_sync_client(url=url, api_key=api_key, headers=dict(headers) if headers else None)


def graph_ids(client: Any) -> tuple[list[str], set[str]]:
    """The graph ids a server serves (sorted) and every assistant id it has."""
    graphs: set[str] = set()
    assistants: set[str] = set()
    offset = 0
    while True:
        page = client.assistants.search(limit=100, offset=offset)
        for a in page:
            graphs.add(str(a["graph_id"]))
            assistants.add(str(a["assistant_id"]))
        if len(page) < 100:
            return sorted(graphs), assistants
        offset += 100


def connect(url: str, graph_id: str, *, api_key: str | None = None,
            headers: Mapping[str, str] | None = None, timeout: float = 5.0) -> RemoteGraph:
    """The graph `graph_id` (a key of "graphs" in the server's langgraph.json, or an
    assistant id) served at `url`, as a `RemoteGraph` for `lgnb.run` / `lgnb.show` /
    `lgnb.history`.

    Raises `ServerUnreachableError` (URL and how to start a server) when nothing answers,
    `UnknownGraphError` (the ids the server has) when it serves no such graph.
    """
    from lgnb.pregel.remote import RemoteGraph

    if not isinstance(graph_id, str) or not graph_id:
        raise ValueError(f"lgnb.connect: graph_id must be a graph id string such as 'agent', got {graph_id!r}")
    client = sync_client(url, api_key=api_key, headers=headers, timeout=timeout)
    url = url.rstrip("/")
    try:
        graphs, assistants = graph_ids(client)
    except Exception as exc:
        explained = server_error(exc, url=url)
        if explained is None:
            raise
        raise explained from exc
    if graph_id not in graphs and graph_id not in assistants:
        raise UnknownGraphError(url, graph_id, graphs)
    return RemoteGraph(graph_id, url=url, api_key=api_key, headers=dict(headers) if headers else None)

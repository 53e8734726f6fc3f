"""The errors a user meets talking to a LangGraph server, each saying what to do next.

The SDK raises `httpx` errors (a refused connection, `409 Conflict`, `404 Not Found`);
`server_error(exc, url=..., thread_id=...)` turns the ones a person can act on into
these, keeping the original as `__cause__`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lgnb.errors import ThreadBusyError

__all__ = ("ServerUnreachableError", "UnknownGraphError", "server_error", "start_hint")


def start_hint(url: str) -> str:
    port = url.rstrip("/").rsplit(":", 1)[-1] if url.rstrip("/").rsplit(":", 1)[-1].isdigit() else "2024"
    return (
        f"Start one in the folder holding langgraph.json with `langgraph dev --no-browser --port {port}` "
        "(pip install \"langgraph-cli[inmem]\"), or from the notebook: "
        "server = lgnb.server.start_dev_server('path/to/project'), then lgnb.connect(server.url, ...)."
    )


class ServerUnreachableError(ConnectionError):
    """No LangGraph server answers at `url`."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        super().__init__(f"No LangGraph server answers at {url} ({reason}). {start_hint(url)}")


class UnknownGraphError(LookupError):
    """The server serves no graph (or assistant) by that id; `available` are the ones it has."""

    def __init__(self, url: str, graph_id: str, available: Sequence[str]) -> None:
        self.url = url
        self.graph_id = graph_id
        self.available = tuple(available)
        listed = ", ".join(repr(a) for a in self.available) or "none"
        super().__init__(
            f"The LangGraph server at {url} has no graph {graph_id!r}. Its graphs: {listed}. "
            "Pass one of those ids (the keys of \"graphs\" in its langgraph.json) or an assistant id."
        )


def _response_text(exc: Any) -> str:
    response = getattr(exc, "response", None)
    if response is None:
        return str(exc)
    try:
        body = response.json()
        if isinstance(body, dict) and body.get("detail"):
            return str(body["detail"])
    except Exception:  # noqa: BLE001 - not JSON: show the text
        pass
    return (getattr(response, "text", "") or str(exc)).strip()


def server_error(exc: BaseException, *, url: str | None, thread_id: Any = None) -> BaseException | None:
    """The actionable error for an SDK failure, or None when it is not one we explain."""
    import httpx

    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return ServerUnreachableError(url or "the server", f"{type(exc).__name__}: {exc}")
    if isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code == 409:
        answer = _response_text(exc)
        return ThreadBusyError(
            str(thread_id), "another run on the LangGraph server",
            note=(f"The server answered 409 Conflict: {answer!r} (its multitask strategy is 'reject'). "
                  "Wait for that run to end (lgnb.attach(url, thread_id) shows it live), or start this "
                  "one on another thread."),
        )  # fmt: skip
    return None

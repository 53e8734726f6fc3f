"""Generative-UI messages: a node pushes a UI component (name + props) for a front end to
render, on the `custom` stream and into a state key, as LangGraph's `langgraph.graph.ui`.

A front end (LangGraph's `useStream`, agent-chat-ui) renders each `{"type": "ui", ...}`
event as it streams and rebuilds the list from the state key (`ui` by default, reduced by
`ui_message_reducer`) when it reloads a thread. `delete_ui_message` removes one by id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal
from uuid import uuid4

from typing_extensions import TypedDict

from lgnb._internal.context import current_task
from lgnb.config import get_config

if TYPE_CHECKING:
    from langchain_core.messages import AnyMessage

__all__ = (
    "UIMessage",
    "RemoveUIMessage",
    "AnyUIMessage",
    "push_ui_message",
    "delete_ui_message",
    "ui_message_reducer",
)


class UIMessage(TypedDict):
    """A UI component to render: `name` (the component), `props`, and `metadata` (`merge`,
    the run's id, tags and name, the id of the chat message it belongs to, your own)."""

    type: Literal["ui"]
    id: str
    name: str
    props: dict[str, Any]
    metadata: dict[str, Any]


class RemoveUIMessage(TypedDict):
    """Removes the UI message with this `id` from the state key."""

    type: Literal["remove-ui"]
    id: str


AnyUIMessage = UIMessage | RemoveUIMessage


def push_ui_message(
    name: str,
    props: dict[str, Any],
    *,
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
    message: AnyMessage | dict[str, Any] | None = None,
    state_key: str | None = "ui",
    merge: bool = False,
) -> UIMessage:
    """Push UI component `name` with `props` from inside a node: emitted on the `custom`
    stream at once, and written to `state_key` (None: stream only) with this task's writes.

    `id` (a new uuid by default) lets a later push replace it, or, with `merge=True`, add to
    its props; `message` ties it to a chat message (its id goes in the metadata)."""
    ctx = current_task()
    config = get_config()  # a tool's or inner Runnable's own, as LangGraph reads it
    message_id = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
    event: UIMessage = {
        "type": "ui",
        "id": id or str(uuid4()),
        "name": name,
        "props": props,
        "metadata": {
            "merge": merge,
            "run_id": config.get("run_id"),
            "tags": config.get("tags"),
            "name": config.get("run_name"),
            **(metadata or {}),
            **({"message_id": message_id} if message_id else {}),
        },
    }
    ctx.stream_writer(event)
    if state_key:
        ctx.task.writes.append((state_key, event))
    return event


def delete_ui_message(id: str, *, state_key: str = "ui") -> RemoveUIMessage:
    """Remove the UI message `id`: a `remove-ui` event on the `custom` stream, and written
    to `state_key`, whose `ui_message_reducer` drops the message."""
    ctx = current_task()
    event: RemoveUIMessage = {"type": "remove-ui", "id": id}
    ctx.stream_writer(event)
    ctx.task.writes.append((state_key, event))
    return event


def ui_message_reducer(
    left: list[AnyUIMessage] | AnyUIMessage,
    right: list[AnyUIMessage] | AnyUIMessage,
) -> list[AnyUIMessage]:
    """The state key's reducer: a UI message replaces the one with its id (its props added
    to the old ones when its metadata says `merge`) or is appended; a `remove-ui` drops the
    one with its id, and fails naming the id when there is none."""
    current: list[Any] = list(left) if isinstance(left, list) else [left]
    incoming: list[Any] = right if isinstance(right, list) else [right]
    position = {m.get("id"): i for i, m in enumerate(current)}
    removed: set[Any] = set()
    for msg in incoming:
        mid = msg.get("id")
        at = position.get(mid)
        if at is None:
            if msg.get("type") == "remove-ui":
                raise ValueError(
                    f"Attempting to delete an UI message with an ID that doesn't exist ('{mid}')")
            position[mid] = len(current)
            current.append(msg)
        elif msg.get("type") == "remove-ui":
            removed.add(mid)
        else:
            removed.discard(mid)
            if msg.get("metadata", {}).get("merge", False):
                old = current[at]
                msg = {**msg, "props": {**old.get("props", {}), **msg.get("props", {})}}
            current[at] = msg
    return [m for m in current if m.get("id") not in removed]

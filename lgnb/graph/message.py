"""The ``add_messages`` reducer and ``MessagesState``.

A port of ``langgraph.graph.message``: same names, same behaviour, so that a
program written against LangGraph works after ``langgraph`` -> ``lgnb`` in its
imports.

``add_messages(left, right)`` merges an update (``right``) into a message list
(``left``):

* a message whose id is new is appended;
* a message whose id is already present replaces that message in place;
* ``RemoveMessage(id=...)`` deletes the message with that id (an id that is not
  there is an error);
* ``RemoveMessage(id=REMOVE_ALL_MESSAGES)`` drops everything before it: the
  result is whatever follows it in ``right``.

Both sides may be a single message-like or a list of them. Message-likes are
coerced the way LangChain coerces them (``("user", "hi")``, ``{"role": ...,
"content": ...}``, a bare string = a human message, chunks become full
messages), and every message without an id gets a fresh ``uuid4`` string id.
Like LangGraph, ids are written onto the message objects themselves, so a
message you passed in carries its new id afterwards.

The merge is one pass over ``right`` with a dict from id to position. As a
graph's reducer (``format=None``) the key is kept by
:class:`lgnb.channels.messages.MessagesChannel`, which keeps that dict between
steps, so a step costs O(len(right)) plus a list copy however long the
conversation grows.
"""

from collections.abc import Callable, Sequence
from functools import partial
from typing import Annotated, Any, Literal, Union, cast

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    BaseMessageChunk,
    MessageLikeRepresentation,
    RemoveMessage,
    convert_to_messages,
    convert_to_openai_messages,
    message_chunk_to_message,
)
from typing_extensions import TypedDict

from lgnb._internal.ids import new_uuid4

__all__ = ("add_messages", "MessagesState", "REMOVE_ALL_MESSAGES")

Messages = Union[list[MessageLikeRepresentation], MessageLikeRepresentation]

#: Use as ``RemoveMessage(id=REMOVE_ALL_MESSAGES)`` to clear the list.
REMOVE_ALL_MESSAGES = "__remove_all__"

_FORMATS = ("langchain-openai",)

# type -> "instances need no coercion" (a plain, non-chunk BaseMessage).
# A conversation uses a handful of message classes, so this stays tiny.
_plain_type_cache: dict[type, bool] = {}


def _is_plain_message_type(cls: type) -> bool:
    verdict = _plain_type_cache.get(cls)
    if verdict is None:
        verdict = issubclass(cls, BaseMessage) and not issubclass(
            cls, BaseMessageChunk
        )
        _plain_type_cache[cls] = verdict
    return verdict


def _as_message_list(value: Any) -> list:
    """Wrap anything that is not a list (a message, tuple, dict, str) in one."""
    items = value if isinstance(value, list) else [value]
    # The steady state is a history of ready-made messages: check the few
    # distinct classes present rather than converting item by item.
    if all(map(_is_plain_message_type, {type(item) for item in items})):
        return items
    return [message_chunk_to_message(m) for m in convert_to_messages(items)]


def _missing_id_error(message_id: Any) -> ValueError:
    # The first sentence is LangGraph's wording, kept so that code matching
    # on it keeps working; the rest says what to do about it.
    return ValueError(
        f"Attempting to delete a message with an ID that doesn't exist "
        f"({message_id!r}). RemoveMessage(id={message_id!r}) must name a message "
        f"that is already in the list or that comes earlier in the same update, "
        f"and no message has that id. Use the id of an existing message (for "
        f"example `state['messages'][-1].id`), or "
        f"RemoveMessage(id=REMOVE_ALL_MESSAGES) to clear the whole list."
    )


_new_id = new_uuid4  # a message's id when it has none: a uuid4 string, as LangGraph's


def _remove_all_cut(update: list) -> int:
    """The position of the last ``RemoveMessage(id=REMOVE_ALL_MESSAGES)`` (it wins), or -1."""
    cut = -1
    for pos, msg in enumerate(update):
        if msg.id == REMOVE_ALL_MESSAGES and isinstance(msg, RemoveMessage):
            cut = pos
    return cut


def _to_openai_format(messages: list[BaseMessage]) -> list[AnyMessage]:
    # convert_to_messages makes only the concrete message classes AnyMessage lists
    return cast("list[AnyMessage]", convert_to_messages(convert_to_openai_messages(messages)))


def _merge(
    left: Messages,
    right: Messages,
    *,
    format: Literal["langchain-openai"] | None = None,
) -> list[AnyMessage]:
    current = _as_message_list(left)
    update = _as_message_list(right)

    for msg in current:
        if msg.id is None:
            msg.id = _new_id()
    # Ids go onto every message of the update, including those a later
    # REMOVE_ALL_MESSAGES discards.
    for msg in update:
        if msg.id is None:
            msg.id = _new_id()
    cut = _remove_all_cut(update)
    if cut >= 0:
        # As in LangGraph, what follows the marker is returned as given:
        # neither merged among itself nor formatted.
        return update[cut + 1 :]

    merged = list(current)
    position = {msg.id: pos for pos, msg in enumerate(merged)}
    merged, _ = merge_by_id(merged, update, position.get, position.__setitem__)

    if format == "langchain-openai":
        return _to_openai_format(merged)
    if format:
        raise ValueError(
            f"Unrecognized format={format!r} for add_messages. Expected one of "
            f"{', '.join(repr(f) for f in _FORMATS)} or None (messages as given)."
        )
    return merged


def add_messages(
    left: Messages | None = None,
    right: Messages | None = None,
    *,
    format: Literal["langchain-openai"] | None = None,
) -> Any:
    """Merge two lists of messages, replacing messages that share an id.

    Used as a reducer: ``messages: Annotated[list, add_messages]``. The update
    ``right`` is appended to ``left``, except that a message whose id is already
    in ``left`` replaces it in place, ``RemoveMessage(id=...)`` deletes the
    message with that id, and ``RemoveMessage(id=REMOVE_ALL_MESSAGES)`` drops
    everything before it. Either side may be a single message-like; tuples,
    dicts and strings are coerced to messages, chunks to full messages, and
    messages without an id get a uuid4 id.

    Called with neither ``left`` nor ``right`` (``add_messages(format=...)``), it
    returns the reducer with those options bound:
    ``Annotated[list, add_messages(format="langchain-openai")]``.

    Args:
        left: the current messages.
        right: the update: a message-like or a list of them.
        format: ``None`` keeps messages as they are; ``"langchain-openai"``
            rewrites their content in OpenAI's format (text, ``image_url``
            blocks, tool results as ``ToolMessage``).

    Returns:
        A new list; neither argument is modified, except that messages without
        an id receive one.

    Raises:
        ValueError: ``RemoveMessage`` names an id that is not present; only one
            of ``left``/``right`` was given; ``format`` is not recognized.
    """
    if left is not None and right is not None:
        return _merge(left, right, format=format)
    if left is None and right is None:
        return partial(_merge, format=format)
    given, missing = ("left", "right") if right is None else ("right", "left")
    raise ValueError(
        f"Must specify non-null arguments for both 'left' and 'right'. "
        f"add_messages received '{given}' but '{missing}' is None: call it with "
        f"both (add_messages(left, right)) to merge, or with neither "
        f"(add_messages(format=...)) to get a configured reducer. Use [] for "
        f"an empty side."
    )


# State with one key, `messages`, merged by `add_messages`. (A comment, not a docstring:
# pydantic would put a docstring into the graph's JSON schemas as a description, and
# LangGraph's class has none.)
class MessagesState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def push_message(message: Any, *, state_key: str | None = "messages") -> Any:
    """Emit `message` on the `messages` stream from inside a node, and write it to
    `state_key` (None: stream only). The message must have an id."""
    from lgnb.pregel._messages import push_message as _push

    return _push(message, state_key=state_key)


def __getattr__(name: str) -> Any:
    # MessageGraph subclasses StateGraph; built on first access so that importing the
    # reducer does not import the graph builder.
    if name == "MessageGraph":
        from lgnb.graph._message_graph import MessageGraph

        return MessageGraph
    raise AttributeError(f"module 'lgnb.graph.message' has no attribute {name!r}")


def merge_by_id(
    merged: list[Any], update: Sequence[Any], find: Callable[[Any], int | None], record: Callable[[Any, int], None]
) -> tuple[list[Any], bool]:
    """`add_messages`' merge, written once for the reducer and `MessagesChannel`: each
    message replaces the one with its id (`find` gives the position) or is appended
    (`record` notes its new position); a `RemoveMessage` drops its id, and re-adding an
    id removed earlier in the same update revives it in its old place. Returns the
    merged list and whether anything was removed (positions then shift)."""
    removed: set = set()
    for msg in update:
        mid = msg.id
        pos = find(mid)
        if pos is None:
            if isinstance(msg, RemoveMessage):
                raise _missing_id_error(mid)
            record(mid, len(merged))
            merged.append(msg)
        elif isinstance(msg, RemoveMessage):
            removed.add(mid)
        else:
            removed.discard(mid)
            merged[pos] = msg
    if removed:
        merged = [msg for msg in merged if msg.id not in removed]
    return merged, bool(removed)

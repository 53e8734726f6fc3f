"""`MessageGraph` (deprecated in LangGraph 1.0): a StateGraph whose whole state is one
message list merged with `add_messages`. Use `StateGraph(MessagesState)` instead."""

from __future__ import annotations

import warnings
from typing import Annotated

from langchain_core.messages import AnyMessage

from lgnb.graph.message import add_messages
from lgnb.graph.state import StateGraph
from lgnb.warnings import LangGraphDeprecatedSinceV10

__all__ = ("MessageGraph",)


class MessageGraph(StateGraph):
    """A graph whose nodes take the message list and return message(s) to add to it.

    Deprecated: build `StateGraph(MessagesState)` (a `messages` key with `add_messages`).
    """

    def __init__(self) -> None:
        warnings.warn(
            "MessageGraph is deprecated in LangGraph v1.0.0, to be removed in v2.0.0. "
            "Please use StateGraph with a `messages` key instead.",
            category=LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        super().__init__(Annotated[list[AnyMessage], add_messages])  # type: ignore[arg-type]

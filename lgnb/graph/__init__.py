"""Graph builders: `StateGraph`, its compiled form, and the message helpers."""

from lgnb._internal.constants import END, START
from lgnb.graph.message import MessagesState, add_messages
from lgnb.graph.state import CompiledStateGraph, StateGraph

__all__ = ("END", "START", "StateGraph", "CompiledStateGraph", "MessagesState", "add_messages")

"""lgnb's version, where LangGraph keeps its own (`langgraph.version.__version__`)."""

from lgnb import __version__

__all__ = ("__version__",)

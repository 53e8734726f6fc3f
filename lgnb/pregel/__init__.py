"""The Pregel runtime: super-steps over channels (plan, execute, update, checkpoint)."""

from lgnb.pregel._builder import NodeBuilder
from lgnb.pregel.main import Pregel

__all__ = ("NodeBuilder", "Pregel")

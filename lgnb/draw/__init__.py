"""Drawing: pure functions from a graph to DOT text (no rendering except `to_svg` export).

>>> from lgnb.draw import to_dot
>>> print(to_dot(compiled_graph))          # doctest: +SKIP
"""

from lgnb.draw._dot import GraphvizNotFound, drawing_to_dot, to_dot, to_svg
from lgnb.draw._jsonable import jsonable
from lgnb.draw._layout import (
    END,
    START,
    Drawing,
    DrawnCluster,
    DrawnEdge,
    DrawnNode,
    display_key,
    layout,
)
from lgnb.draw.history import Timeline, checkpoint_diff, history_to_dot, timeline, timeline_to_dot

__all__ = [
    "END",
    "START",
    "Drawing",
    "DrawnCluster",
    "DrawnEdge",
    "DrawnNode",
    "GraphvizNotFound",
    "Timeline",
    "checkpoint_diff",
    "display_key",
    "drawing_to_dot",
    "history_to_dot",
    "jsonable",
    "layout",
    "timeline",
    "timeline_to_dot",
    "to_dot",
    "to_svg",
]

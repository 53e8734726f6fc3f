"""`lgnb.show(graph)`: the graph drawn in the browser (pan/zoom, node details, subgraphs).

The kernel computes the drawable model and its DOT text (`lgnb.draw`); the browser renders
the SVG with Graphviz compiled to WASM. Expanding or collapsing a subgraph is a message to
the kernel, which redraws.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import traitlets

from lgnb.draw import Drawing, drawing_to_dot, layout
from lgnb.widgets._runtime import View
from lgnb.widgets._snapshot import graph_html
from lgnb.widgets._snapshot_svg import svg_for_dot
from lgnb.widgets._title import view_title


def check_graph(graph: Any, *, what: str) -> None:
    """Raise TypeError with what is expected when `graph` is not a compiled graph."""
    if not callable(getattr(graph, "get_graph", None)):
        hint = ""
        if hasattr(graph, "compile") and hasattr(graph, "add_node"):
            hint = " This looks like a graph builder: call .compile() first."
        raise TypeError(
            f"{what} expects a compiled graph (e.g. StateGraph(...).compile(), from lgnb.graph or "
            f"langgraph.graph), got {type(graph).__module__}.{type(graph).__qualname__}.{hint}"
        )


class GraphMixin(traitlets.HasTraits):
    """Graph traits shared by the graph view and the run view."""

    if TYPE_CHECKING:  # ipywidgets.Widget's, which every view mixing this in is
        def hold_sync(self) -> AbstractContextManager[Any]: ...

    dot = traitlets.Unicode("").tag(sync=True)
    drawing = traitlets.Dict().tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    _graph: Any = None
    _drawing: Drawing | None = None

    def _set_graph(self, graph: Any, *, expanded: bool | list[str] = False) -> None:
        self._graph = graph
        full = layout(graph, expanded=True)
        keys = full.subgraphs if expanded is True else [] if expanded is False else list(expanded)
        self._redraw(keys)

    def _redraw(self, expanded: list[str]) -> None:
        drawing = layout(self._graph, expanded=expanded)
        self._drawing = drawing
        with self.hold_sync():
            self.expanded = list(expanded)
            self.drawing = drawing.to_json()
            self.dot = drawing_to_dot(drawing)

    def toggle(self, key: str) -> None:
        """Expand the subgraph `key` if collapsed, collapse it if expanded."""
        if self._drawing is None or key not in self._drawing.subgraphs:
            return
        if key in self.expanded:
            keep = [k for k in self.expanded if k != key and not k.startswith(key + ":")]
        else:
            parts = key.split(":")
            keep = list(dict.fromkeys([*self.expanded, *(":".join(parts[:i]) for i in range(1, len(parts) + 1))]))
        self._redraw(keep)

    def _msg_toggle(self, content: dict[str, Any]) -> None:
        if isinstance(content.get("id"), str):
            self.toggle(content["id"])


class GraphView(GraphMixin, View):
    """The graph view widget returned by :func:`show`."""

    _view_kind = traitlets.Unicode("graph").tag(sync=True)
    _snapshot_on = ("dot",)

    def _static_html(self) -> str:
        return graph_html({"title": self.title}, svg=svg_for_dot(self.dot))


def show(graph: Any, *, expanded: bool | list[str] = False, title: str | None = None) -> GraphView:
    """A live drawing of `graph`: pan/zoom, click a node for details, expand subgraphs.

    `expanded`: subgraphs to draw as clusters (True for all); the others are single nodes
    you can expand by clicking them.
    """
    check_graph(graph, what="lgnb.show")
    view = GraphView()
    view.title = view_title(graph, title, what="lgnb.show")
    view._set_graph(graph, expanded=expanded)
    return view

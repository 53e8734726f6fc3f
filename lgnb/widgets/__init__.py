"""Notebook views of graphs and runs: `lgnb.show(graph)`, `lgnb.run(graph, input)`.

The views consume only the public graph protocol (`stream`, `astream`, `get_graph`, ...),
so they work with lgnb graphs and LangGraph graphs alike. Importing this package is cheap
and never imports the engine: the widget modules load on first attribute access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lgnb.widgets._forms import FormInvalid, Renderer, register_form, unregister_form
    from lgnb.widgets.graph_view import GraphView, show
    from lgnb.widgets.history_view import HistoryView, history
    from lgnb.widgets.lens_view import Lens, LensView, lens
    from lgnb.widgets.run_view import Run, RunView, run

__all__ = ["FormInvalid", "GraphView", "HistoryView", "Lens", "LensView", "Renderer", "Run", "RunView", "history",
           "lens", "register_form", "run", "show", "unregister_form"]

_WHERE = {
    "FormInvalid": "lgnb.widgets._forms",
    "Renderer": "lgnb.widgets._forms",
    "register_form": "lgnb.widgets._forms",
    "unregister_form": "lgnb.widgets._forms",
    "GraphView": "lgnb.widgets.graph_view",
    "show": "lgnb.widgets.graph_view",
    "HistoryView": "lgnb.widgets.history_view",
    "history": "lgnb.widgets.history_view",
    "Lens": "lgnb.widgets.lens_view",
    "LensView": "lgnb.widgets.lens_view",
    "lens": "lgnb.widgets.lens_view",
    "Run": "lgnb.widgets.run_view",
    "RunView": "lgnb.widgets.run_view",
    "run": "lgnb.widgets.run_view",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'lgnb.widgets' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

"""The one widget per kernel that carries the front-end bundle (see `_assets`)."""

from __future__ import annotations

import logging
import uuid

import anywidget
import traitlets

from lgnb.widgets._assets import VIEW_ESM, bundle_payload
from lgnb.widgets._wire import wire_safe
from lgnb.widgets.protocol import PROTOCOL_VERSION

_log = logging.getLogger("lgnb.widgets")


class Runtime(anywidget.AnyWidget):
    """Carries the bundle; never displayed. Views reference it by model id."""

    _esm = traitlets.Unicode("").tag(sync=True)
    _bundle = traitlets.Unicode("").tag(sync=True)


_runtime: Runtime | None = None


def get_runtime() -> Runtime:
    """The kernel's runtime widget, created on first use (again if it was closed)."""
    global _runtime
    if _runtime is None or getattr(_runtime, "comm", None) is None:
        esm, bundle = bundle_payload()
        _runtime = Runtime(_esm=esm, _bundle=bundle)
    return _runtime


class View(anywidget.AnyWidget):
    """Base of lgnb views: a tiny ESM that delegates rendering to the shared runtime.

    Everything a view sends passes `wire_safe` here, once: its trait state (the comm's
    open and every sync go through `get_state`) and its custom messages (`send`). So no
    string a user or a model produced can make a send fail (see `_wire`).

    `_protocol` tells the page which version of the kernel↔page protocol this kernel speaks
    (`lgnb.widgets.protocol`); a page built for another shows the mismatch, not the view.
    A message of a kind the view has no `_msg_<kind>` for is logged and ignored.
    """

    _esm = VIEW_ESM
    _view_kind = traitlets.Unicode("").tag(sync=True)
    _lgnb_runtime = traitlets.Unicode("").tag(sync=True)
    _uid = traitlets.Unicode("").tag(sync=True)
    _protocol = traitlets.Int(PROTOCOL_VERSION).tag(sync=True)

    def __init__(self, **kwargs: object) -> None:
        runtime = get_runtime()
        super().__init__(_lgnb_runtime=f"anywidget:{runtime.model_id}", _uid=uuid.uuid4().hex, **kwargs)
        self.on_msg(self._dispatch)

    def get_state(self, key: object = None, drop_defaults: bool = False) -> dict[str, object]:
        return wire_safe(super().get_state(key=key, drop_defaults=drop_defaults))

    def send(self, content: object, buffers: object = None) -> None:
        super().send(wire_safe(content), buffers)

    def _dispatch(self, _widget: object, content: object, _buffers: object) -> None:
        if isinstance(content, dict) and isinstance(content.get("kind"), str):
            handler = getattr(self, f"_msg_{content['kind']}", None)
            if handler is not None:
                handler(content)
            else:
                _log.warning("lgnb: %s ignored a message of unknown kind %r (page and kernel of "
                             "different versions?)", type(self).__name__, content["kind"])


def show_in_notebook(handle: object) -> None:
    """Display `handle` when running under IPython; elsewhere (a script) do nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is not None:
        from IPython.display import display

        display(handle)

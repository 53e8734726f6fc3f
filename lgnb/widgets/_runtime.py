"""The base of every lgnb view widget, and which view carries the front-end bundle (see `_assets`)."""

from __future__ import annotations

import logging
import uuid
import weakref

import anywidget
import traitlets

from lgnb.widgets._assets import VIEW_ESM, bundle_payload
from lgnb.widgets._snapshot_display import Snapshotted
from lgnb.widgets._wire import wire_safe
from lgnb.widgets.protocol import PROTOCOL_VERSION

_log = logging.getLogger("lgnb.widgets")

#: The live view that carries the bundle in its `_bundle` trait (one per kernel).
_carrier: weakref.ref[View] | None = None


def _bundle_for_new_view() -> str:
    """The bundle for the view being made if no live view carries it yet, else `""`:
    one copy in the kernel's widget state (and so in a saved notebook)."""
    carrier = _carrier() if _carrier is not None else None
    if carrier is not None and getattr(carrier, "comm", None) is not None:
        return ""
    return bundle_payload()[1]


class View(Snapshotted, anywidget.AnyWidget):
    """Base of lgnb views: a tiny ESM that loads the page's one copy of the bundle and
    delegates rendering to it.

    Everything a view sends passes `wire_safe` here, once: its trait state (the comm's
    open and every sync go through `get_state`) and its custom messages (`send`). So no
    string a user or a model produced can make a send fail (see `_wire`).

    `_protocol` tells the page which version of the kernel↔page protocol this kernel speaks
    (`lgnb.widgets.protocol`); a page built for another shows the mismatch, not the view.
    A message of a kind the view has no `_msg_<kind>` for is logged and ignored.
    """

    _esm = VIEW_ESM
    _view_kind = traitlets.Unicode("").tag(sync=True)
    _lgnb_bundle = traitlets.Unicode("").tag(sync=True)
    _bundle = traitlets.Unicode("").tag(sync=True)
    _uid = traitlets.Unicode("").tag(sync=True)
    _protocol = traitlets.Int(PROTOCOL_VERSION).tag(sync=True)

    def __init__(self, **kwargs: object) -> None:
        global _carrier
        bundle = _bundle_for_new_view()
        super().__init__(_lgnb_bundle=bundle_payload()[0], _bundle=bundle, _uid=uuid.uuid4().hex, **kwargs)
        if bundle:
            _carrier = weakref.ref(self)
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

    def _msg_lgnb_bundle(self, _content: object) -> None:
        """The page has no copy of the bundle (its carrier is not displayed there): send one,
        as a message, so it stays out of the saved widget state."""
        digest, bundle = bundle_payload()
        self.send({"kind": "lgnb_bundle", "hash": digest, "bundle": bundle})


def show_in_notebook(handle: object) -> None:
    """Display `handle` when running under IPython; elsewhere (a script) do nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is not None:
        from IPython.display import display

        display(handle)

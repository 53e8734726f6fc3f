"""How the front-end bundle reaches the page: one live view per kernel carries it in its
state, every view knows its hash, and any view hands it over by message when asked."""

from __future__ import annotations

import base64
import gzip
import hashlib
from typing import Any

import pytest

from lgnb.widgets import GraphView, show
from lgnb.widgets import _runtime
from lgnb.widgets._assets import BUNDLE, VIEW_ESM, bundle_built

pytestmark = pytest.mark.skipif(not bundle_built(), reason="ships the real bundle: build it (./dev setup)")


class _Graph:
    def get_graph(self, xray: bool = False) -> Any:
        from langchain_core.runnables.graph import Graph

        graph = Graph()
        a, b = graph.add_node(None, "__start__"), graph.add_node(None, "x")
        graph.add_edge(a, b)
        return graph


def _fresh_kernel_state() -> None:
    """Close the view that carries the bundle now, as if no view had been made yet."""
    carrier = _runtime._carrier() if _runtime._carrier is not None else None
    if carrier is not None:
        carrier.close()


def _unpack(b64: str) -> bytes:
    return gzip.decompress(base64.b64decode(b64))


def test_the_first_view_carries_the_bundle_and_later_views_only_its_hash() -> None:
    _fresh_kernel_state()
    first, second, third = show(_Graph()), show(_Graph()), show(_Graph())
    built = BUNDLE.read_bytes()
    assert isinstance(first, GraphView)
    assert _unpack(first._bundle) == built
    assert second._bundle == "" and third._bundle == ""
    assert first._lgnb_bundle == second._lgnb_bundle == third._lgnb_bundle == hashlib.sha256(built).hexdigest()[:16]
    assert first._esm == second._esm == VIEW_ESM and len(VIEW_ESM) < 4000  # each view's own module stays tiny


def test_a_new_view_carries_the_bundle_again_once_its_carrier_is_closed() -> None:
    _fresh_kernel_state()
    carrier, other = show(_Graph()), show(_Graph())
    carrier.close()
    assert other._bundle == ""
    replacement = show(_Graph())
    assert _unpack(replacement._bundle) == BUNDLE.read_bytes()
    assert show(_Graph())._bundle == ""


def test_a_view_asked_for_the_bundle_sends_it_as_a_message_not_as_state() -> None:
    _fresh_kernel_state()
    show(_Graph())
    view = show(_Graph())  # carries no bundle: a page that never saw the carrier asks this one
    sent: list[Any] = []
    view.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    view._dispatch(view, {"kind": "lgnb_bundle"}, [])
    (reply,) = sent
    assert reply["kind"] == "lgnb_bundle" and reply["hash"] == view._lgnb_bundle
    assert _unpack(reply["bundle"]) == BUNDLE.read_bytes()
    assert view._bundle == "" and "bundle" not in {k for k, v in view.get_state().items() if v == reply["bundle"]}

"""What the page gets: every custom message the kernel sends a run view, as the wire
carries it. A test module imports `page_spy` (an autouse fixture: importing it turns it on
for that module), then reads `SENT[id(view)]` or `sent_patches(run)`."""

from __future__ import annotations

from typing import Any

import pytest

import lgnb.widgets.run_view as rv
from lgnb.widgets._wire import wire_safe

SENT: dict[int, list[dict[str, Any]]] = {}


@pytest.fixture(autouse=True)
def page_spy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every custom message the kernel sends a view (as the page would get it)."""

    def send(self: Any, content: Any, buffers: Any = None) -> None:
        SENT.setdefault(id(self), []).append(wire_safe(content))

    monkeypatch.setattr(rv.RunView, "send", send)


def sent_patches(r: Any) -> list[dict[str, Any]]:
    """The state patches sent to the page of run `r`'s view, in order."""
    return [p for m in SENT.get(id(r.view), []) if m.get("kind") == "patches" for p in m["patches"]]

"""A page double for widget tests: the views' comms, packed and unpacked as Jupyter does.

Install it with the `page` fixture (or `install(monkeypatch)`): every view made meanwhile
sends through a `PageComm`, whose messages go through the kernel's packer
(jupyter_client's `Session.pack`, what ipykernel sends with) and the server's unpacker
into `Page.received`, so a message that could not leave a real kernel fails here the
same way; `Page.patches(kind)` and `Page.synced(trait)` read what the page was sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import comm as comm_package
import pytest
from comm.base_comm import BaseComm
from jupyter_client.session import Session

SESSION = Session()


class PageComm(BaseComm):
    """A widget comm whose messages go through the kernel's packer and the server's
    unpacker into `received`; `fail(msg_type, data)` returning True makes a send raise."""

    def __init__(self, *args: Any, received: list[dict[str, Any]],
                 fail: Callable[[str, Any], bool] | None = None, **kwargs: Any) -> None:
        self.received, self.fail = received, fail
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None,
                    buffers: Any = None, **keys: Any) -> None:
        if self.fail is not None and self.fail(msg_type, data):
            raise OSError("the comm to the page is gone")
        self.received.append({"msg_type": msg_type, "data": SESSION.unpack(SESSION.pack(data))})


class Page:
    """What the page received from every view made while it is installed."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.fail: Callable[[str, Any], bool] | None = None

    def make(self, *args: Any, **kwargs: Any) -> PageComm:
        return PageComm(*args, received=self.received, fail=lambda t, d: self.fail is not None and self.fail(t, d),
                        **kwargs)

    def strings(self) -> list[str]:
        out: list[str] = []

        def walk(value: Any) -> None:
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, dict):
                for k, v in value.items():
                    walk(k)
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)

        walk([m["data"] for m in self.received])
        return out

    def patches(self, kind: str) -> list[dict[str, Any]]:
        return [p for m in self.received
                if isinstance(m["data"], dict) and m["data"].get("method") == "custom"
                and m["data"]["content"].get("kind") == "patches"
                for p in m["data"]["content"]["patches"] if p["kind"] == kind]

    def synced(self, key: str) -> list[Any]:
        """Every value of trait `key` the page received (comm open and updates), in order."""
        return [m["data"]["state"][key] for m in self.received
                if isinstance(m["data"], dict) and key in (m["data"].get("state") or {})]


def install(monkeypatch: pytest.MonkeyPatch) -> Page:
    """Send every view's comm messages to a new `Page` (undone with `monkeypatch`)."""
    p = Page()
    monkeypatch.setattr(comm_package, "create_comm", p.make)
    return p

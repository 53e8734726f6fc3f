"""Public constants, as in `langgraph.constants`: `START`, `END`, tags and config keys.

`CONFIG_KEY_CHECKPOINTER` is the `configurable` key under which a caller may hand a graph
compiled without a checkpointer the saver to use for one run. Other reserved names live in
`lgnb._internal.constants`; reading them from here still works, with LangGraph's
deprecation warning, so programs that did so port unchanged.
"""

from __future__ import annotations

from typing import Any
from warnings import warn

from lgnb._internal.constants import (
    CONF,
    CONFIG_KEY_CHECKPOINTER,
    END,
    START,
    TAG_HIDDEN,
    TAG_NOSTREAM,
    TASKS,
)
from lgnb.warnings import LangGraphDeprecatedSinceV10

__all__ = ("TAG_NOSTREAM", "TAG_HIDDEN", "START", "END", "CONF", "TASKS", "CONFIG_KEY_CHECKPOINTER")


def __getattr__(name: str) -> Any:
    from importlib import import_module

    if name in ("Send", "Interrupt"):
        warn(
            f"Importing {name} from langgraph.constants is deprecated. "
            f"Please use 'from langgraph.types import {name}' instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        return getattr(import_module("lgnb.types"), name)
    private = import_module("lgnb._internal.constants")
    if hasattr(private, name):
        warn(
            f"Importing {name} from langgraph.constants is deprecated. "
            "This constant is now private and should not be used directly.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        return getattr(private, name)
    raise AttributeError(f"module 'lgnb.constants' has no attribute {name!r}")

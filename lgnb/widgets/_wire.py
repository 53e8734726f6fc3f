"""What leaves the kernel for the page: every string made encodable, visibly.

A Python string may hold a lone UTF-16 surrogate (``"\\ud800"``): a provider that splits an
emoji across two stream chunks sends one half per token, and a JSON payload decoded with
``\\ud83d`` escapes yields one. Jupyter sends comm messages as UTF-8, which has no encoding
for a surrogate: the kernel's packer raises ``UnicodeEncodeError`` in the middle of a
flush (or, for ``\\udc80``-``\\udcff``, ships bytes the server cannot decode). One such
string used to leave a run unsettled and its view stuck.

:func:`wire_safe` is applied where every view's traffic leaves the kernel — the trait
state (`View.get_state`, used by the comm's open and by every sync) and custom messages
(`View.send`) — so no call site has to remember it. A surrogate pair that arrived as two
code points is joined into its character; a lone half becomes U+FFFD (the replacement
character), so the reader sees that something was there. The kernel's own values (run
results, `run.content`) keep the user's data as it was.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"

_SURROGATE = re.compile("[\ud800-\udfff]")


def wire_text(text: str) -> str:
    """`text` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    # UTF-16 round trip: a high + low pair decodes to its character, a lone half to U+FFFD
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def wire_safe(value: Any) -> Any:
    """`value` with every string (dict keys included) passed through :func:`wire_text`.

    Walks dicts, lists and tuples; anything else is returned as it is. Containers without
    a surrogate anywhere are returned unchanged (the same object), so the common case
    allocates nothing.
    """
    if isinstance(value, str):
        return wire_text(value)
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            safe_key = wire_text(key) if isinstance(key, str) else key
            safe_item = wire_safe(item)
            changed = changed or safe_key is not key or safe_item is not item
            out[safe_key] = safe_item
        return out if changed else value
    if isinstance(value, (list, tuple)):
        items = [wire_safe(item) for item in value]
        if all(new is old for new, old in zip(items, value)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value

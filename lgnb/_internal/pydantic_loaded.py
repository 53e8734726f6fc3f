"""Pydantic checks that do not import pydantic.

Importing pydantic costs about a fifth of `import lgnb`, and most graphs never meet a
pydantic object. An object can only be a pydantic model if pydantic was imported to
define its class, so these checks look for pydantic among the loaded modules and answer
False, without importing it, when it is not there.
"""

from __future__ import annotations

import sys
from typing import Any


def _base_model() -> type | None:
    module = sys.modules.get("pydantic")
    base = getattr(module, "BaseModel", None) if module is not None else None
    return base if isinstance(base, type) else None


def is_model(obj: Any) -> bool:
    """Whether `obj` is an instance of a pydantic model (`pydantic.BaseModel`)."""
    base = _base_model()
    return base is not None and isinstance(obj, base)


def is_model_class(typ: Any) -> bool:
    """Whether `typ` is a pydantic model class (a subclass of `pydantic.BaseModel`)."""
    base = _base_model()
    return base is not None and isinstance(typ, type) and issubclass(typ, base)

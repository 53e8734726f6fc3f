"""`langgraph.utils.config` under lgnb's name: config helpers older programs import.

`get_config` and `get_store` are lgnb's (the running node's config and store);
`ensure_config` and `patch_configurable` behave as LangGraph's helpers of those names.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lgnb.config import get_config, get_store
from lgnb.pregel._options import DEFAULT_RECURSION_LIMIT

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ("ensure_config", "get_config", "get_store", "patch_configurable")

_CONFIG_KEYS = ("tags", "metadata", "callbacks", "run_name", "max_concurrency",
                "recursion_limit", "configurable", "run_id")
_COPIABLE = ("tags", "metadata", "callbacks", "configurable")
# a configurable with one of these addresses a checkpoint lineage of its own
_COORDINATES = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
_TO_METADATA = ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id",
                "assistant_id", "graph_id")


def patch_configurable(config: RunnableConfig | None, patch: dict[str, Any]) -> RunnableConfig:
    """`config` with `patch` merged over its `configurable` (a new dict; `config` is kept)."""
    if config is None:
        return {"configurable": patch}
    if "configurable" not in config:
        return {**config, "configurable": patch}
    return {**config, "configurable": {**config["configurable"], **patch}}


def ensure_config(*configs: RunnableConfig | None) -> RunnableConfig:
    """A config with every key, the given configs merged over the ambient one (the config of
    the LangChain run this is called in, if any), as LangGraph's `ensure_config`.

    Later configs win; `configurable` and `metadata` merge key by key, `tags` and
    `callbacks` add up; keys that are not config keys go into `configurable`; an explicit
    `configurable` naming a thread or checkpoint drops the ambient one; `thread_id` and the
    other run coordinates are copied into `metadata`.
    """
    from langchain_core.runnables.config import var_child_runnable_config

    out: dict[str, Any] = {"tags": [], "metadata": ChainMap(), "callbacks": None,
                           "recursion_limit": DEFAULT_RECURSION_LIMIT, "configurable": {}}
    inherited: set[str] = set()
    ambient = var_child_runnable_config.get()
    if ambient:
        out.update({k: v.copy() if k in _COPIABLE else v  # type: ignore[attr-defined]
                    for k, v in ambient.items() if _given(v)})
        inherited.update(out["tags"])
    if out.get("configurable") and any(
        _given((c.get("configurable") or {}).get(k)) for c in configs if c for k in _COORDINATES
    ):
        out["configurable"] = {}
    for config in configs:
        if config is None:
            continue
        v: Any
        for k, v in config.items():
            if not _given(v):
                continue
            if k not in _CONFIG_KEYS:
                out["configurable"][k] = v
            elif k == "configurable":
                out[k] = {**out[k], **v} if out.get(k) else dict(v)
            elif k == "callbacks":
                out[k] = _merged_callbacks(out.get(k), v)
            elif k == "metadata":
                out[k] = _merged_metadata(out.get(k), v)
            elif k == "tags":
                out[k] = [*(out.get(k) or ()), *(t for t in v if t not in inherited)]
            else:
                out[k] = v
    configurable, metadata = out.get("configurable"), out.get("metadata")
    if configurable and metadata is not None:
        for key in _TO_METADATA:
            if key not in metadata and configurable.get(key):
                metadata[key] = configurable[key]
    return out  # type: ignore[return-value]  # every RunnableConfig key is set


def _given(value: Any) -> bool:
    """Not None and, for a list, tuple or dict, not empty (LangGraph's "not empty")."""
    return len(value) > 0 if isinstance(value, (list, tuple, dict)) else value is not None


def _merged_metadata(base: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """`new` over `base`; `lc_versions` merges one level deeper; mapping values are copied."""
    merged = {k: dict(v) if isinstance(v, Mapping) else v for k, v in (base or {}).items()}
    for k, v in new.items():
        if k == "lc_versions" and isinstance(merged.get(k), Mapping) and isinstance(v, Mapping):
            merged[k] = {**merged[k], **v}
        else:
            merged[k] = dict(v) if isinstance(v, Mapping) else v
    return merged


def _merged_callbacks(base: Any, new: Any) -> Any:
    """`new` added to `base` (each a list of handlers or a callback manager; copies)."""
    if base is None:
        return new.copy() if hasattr(new, "copy") else new
    if isinstance(new, list) and isinstance(base, list):
        return base + new
    manager, extra = (base.copy(), new) if not isinstance(base, list) else (new.copy(), base)
    if isinstance(extra, list):
        for handler in extra:
            manager.add_handler(handler, inherit=True)
        return manager
    return manager.merge(extra)

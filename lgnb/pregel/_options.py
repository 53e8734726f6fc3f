"""Resolving a call's options: configs of nested runs, callbacks, context, saver keys."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lgnb._internal.constants import CONF

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from lgnb._internal.context import TaskContext
    from lgnb.pregel._loop import Loop

__all__ = (
    "CONFIG_KEYS",
    "DEFAULT_RECURSION_LIMIT",
    "add_handlers",
    "coerce_context",
    "config_inside_node",
    "loop_args",
    "merge_callbacks",
    "nested_resuming",
    "lift_config_keys",
    "recast_ns",
    "saver_config",
)

CONFIG_KEYS = frozenset(
    ("tags", "metadata", "callbacks", "run_name", "max_concurrency", "recursion_limit", CONF, "run_id")
)
"""The keys of a RunnableConfig (LangChain's `CONFIG_KEYS`)."""


def lift_config_keys(config: dict[str, Any]) -> dict[str, Any]:
    """A key a RunnableConfig does not have (`{"thread_id": "1"}`) is a configurable value,
    as LangChain's and LangGraph's `ensure_config` read it."""
    extra = [k for k in config if k not in CONFIG_KEYS and config[k] is not None]
    if not extra:
        return config
    lifted = {k: v for k, v in config.items() if k in CONFIG_KEYS}
    lifted[CONF] = {**(config.get(CONF) or {}), **{k: config[k] for k in extra}}
    return lifted


DEFAULT_RECURSION_LIMIT = int(
    os.environ.get("LGNB_DEFAULT_RECURSION_LIMIT")
    or os.environ.get("LANGGRAPH_DEFAULT_RECURSION_LIMIT")
    or 10007
)
"""Super-steps a run may take before GraphRecursionError (LangGraph 1.2's default)."""


def recast_ns(ns: str, *, keep_numbers: bool = True) -> str:
    """`a:<task id>|b:<task id>` -> `a|b`: the namespace without the run's task ids.
    A numeric segment (`a:<id>|1`: a node's second nested graph) is kept unless
    `keep_numbers` is false (naming a subgraph of the graph, as `get_subgraphs` does)."""
    return "|".join(
        part.split(":")[0] for part in ns.split("|") if keep_numbers or not part.isdigit()
    )


def nested_resuming(loop: Loop) -> bool | None:
    return (loop.run.resuming and loop.has_saved) if loop.is_nested else None


def config_inside_node(
    parent: TaskContext, config: RunnableConfig | None, *, defaults: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A graph invoked from a node's code runs as a child of that node's task: it shares
    the thread (and checkpointer) and lives under the task's namespace.

    Its config is, as LangGraph layers it: the caller's, then the invoked graph's own
    `defaults` (`with_config`: LangChain's `create_agent` names its agent in the metadata
    this way), then the `config` given to the call. `metadata` and `configurable` merge
    key by key, tags add up, other keys are replaced. The caller's `tags` and
    `configurable` are the calling task's as they are now (LangGraph's nested graph reads
    the task's config from LangChain's context): what the node added to them in place,
    its node's tags and the enclosing checkpoints (`checkpoint_map`) carry over; the
    task's hooks (`__pregel_*`) do not (the nested tasks get theirs), the run's flags do.
    """
    base = parent.loop.run.user_config
    merged: dict[str, Any] = {
        k: v for k, v in base.items() if k not in ("callbacks", "run_name", "run_id", "tags")
    }
    task = parent.config
    if task.get("tags"):
        merged["tags"] = list(task["tags"])
    conf = dict(base.get(CONF) or {})  # (the run's own `__pregel_*` flags, v3 streams')
    conf.update((k, v) for k, v in (task.get(CONF) or {}).items() if not k.startswith("__pregel_"))
    layers: tuple[Mapping[str, Any], ...] = (defaults or {}, config or {})
    for layer in layers:
        for k, v in layer.items():
            if k == CONF:
                conf.update(v or {})
            elif v is None:
                continue
            elif k == "metadata" and isinstance(v, Mapping):
                merged[k] = {**(merged.get(k) or {}), **v}
            elif k == "tags":
                merged[k] = list(dict.fromkeys([*(merged.get(k) or ()), *v]))
            elif k == "callbacks":  # the graph's own handlers and the call's, as LangGraph
                merged[k] = merge_callbacks(merged.get(k), v)
            else:
                merged[k] = v
    conf["checkpoint_ns"] = parent.task.ns
    conf.pop("checkpoint_id", None)
    # the checkpoints of the enclosing graphs, as for a subgraph node: the child's
    # checkpoints record them (metadata "parents"), and its snapshots' configs show them
    loop = parent.loop
    if loop.checkpointer is not None:
        # the calling task's (`task_config`): a `@task` call's also names its callers'
        # namespaces, as LangGraph's call configs extend their callers'
        cmap = dict(((parent.config.get(CONF) or {}).get("checkpoint_map")) or {})
        if not cmap:
            cmap = dict((loop.config.get(CONF) or {}).get("checkpoint_map") or {})
            cmap[loop.ns] = loop.checkpoint_id
        conf["checkpoint_map"] = cmap
    merged[CONF] = conf
    return merged


def saver_config(config: dict[str, Any]) -> dict[str, Any]:
    conf = dict(config.get(CONF) or {})
    if conf.get("thread_id") is not None:
        conf["thread_id"] = str(conf["thread_id"])
    conf.setdefault("checkpoint_ns", "")
    return {CONF: conf}


def loop_args(loop: Loop) -> dict[str, Any]:
    return {
        "config": loop.config,
        "checkpointer": loop.checkpointer,
        "durability": loop.durability,
        "ns": loop.ns,
        "interrupt_before": loop.interrupt_before,
        "interrupt_after": loop.interrupt_after,
        "output_keys": loop.output_keys,
        "recursion_limit": loop.stop - loop.step - 1,
        "is_nested": loop.is_nested,
        "parent_ctx": loop.parent_ctx,
        "run_root": loop.is_run_root,
    }


def add_handlers(callbacks: Any, extra: Any) -> Any:
    """`callbacks` (a list or a CallbackManager) with `extra` handlers inherited by children."""
    if not extra:
        return callbacks
    extra = list(extra) if isinstance(extra, list) else [extra]
    if callbacks is None:
        return extra
    if isinstance(callbacks, list):
        return [*callbacks, *extra]
    manager = callbacks.copy()
    for handler in extra:
        manager.add_handler(handler, inherit=True)
    return manager


def merge_callbacks(base: Any, new: Any) -> Any:
    """`base` callbacks with `new` ones on top (each None, a list or a CallbackManager), as
    LangGraph merges the ambient config's callbacks (a node's) with those a graph invoked
    in the node is given: a handler in both is kept once (the node's own config passed
    back carries the run's handlers already)."""
    if new is None:
        return base
    if base is None:
        return new
    if isinstance(base, list) and isinstance(new, list):
        return [*base, *(h for h in new if h not in base)]
    if isinstance(base, list):
        base, new = new, base  # a manager with the list's handlers added
    manager = base.copy()
    inheritable = new if isinstance(new, list) else new.inheritable_handlers
    for handler in new if isinstance(new, list) else new.handlers:
        manager.add_handler(handler, inherit=handler in inheritable)  # (once: it checks)
    return manager


def coerce_context(schema: Any, context: Any) -> Any:
    """A dict `context=` becomes the `context_schema` dataclass / pydantic model."""
    if schema is None or context is None or not isinstance(context, dict):
        return context
    from dataclasses import is_dataclass

    from pydantic import BaseModel

    if isinstance(schema, type) and (is_dataclass(schema) or issubclass(schema, BaseModel)):
        return schema(**context)
    return context

"""Small builders for checkpoint tests (not a test module)."""

from __future__ import annotations

import copy
from typing import Any

from langgraph.checkpoint.base import Checkpoint, empty_checkpoint


def checkpoint(values: dict[str, Any], versions: dict[str, Any]) -> Checkpoint:
    cp = empty_checkpoint()
    cp["channel_values"] = dict(values)
    cp["channel_versions"] = dict(versions)
    return cp


def config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict:
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def count(saver: Any, table: str, where: str = "1", params: tuple = ()) -> int:
    return saver.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", params).fetchone()[0]


def os_system_row(command: str) -> bytes:
    """msgpack bytes asking the loader to call `os.system(command)`, as an attacker
    who can write to the database would store them (LangGraph's wire format)."""
    import ormsgpack

    inner = ormsgpack.packb(("os", "system", command))
    return ormsgpack.packb({"value": ormsgpack.Ext(0, inner)})


def subprocess_row(argv: list[str]) -> bytes:
    """msgpack bytes asking the loader to call `subprocess.run(argv)`."""
    import ormsgpack

    return ormsgpack.packb(ormsgpack.Ext(1, ormsgpack.packb(("subprocess", "run", [argv]))))


class Recorded:
    """Each checkpoint's values as a saver's `put` received them (deep copies: a message
    given its id in place later must not change what was recorded): the oracle of
    read-back tests. `watch` wraps a saver; call it again for a reopened one."""

    def __init__(self) -> None:
        self.saved: dict[str, dict[str, Any]] = {}

    def watch(self, saver: Any) -> Any:
        inner = saver.put

        def put(config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            self.saved[checkpoint["id"]] = copy.deepcopy(dict(checkpoint["channel_values"]))
            return inner(config, checkpoint, metadata, new_versions)

        saver.put = put
        return saver

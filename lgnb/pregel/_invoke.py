"""What `invoke` keeps of a run: the final values and interrupts, or every chunk."""

from __future__ import annotations

from typing import Any

from lgnb._internal.constants import INTERRUPT
from lgnb.types import GraphOutput

__all__ = ("Collector",)


class Collector:
    """What `invoke` keeps of the stream: the last values (and interrupts), or all chunks."""

    def __init__(self, stream_mode: Any, version: str) -> None:
        self.stream_mode = stream_mode
        self.version = version
        self.values_mode = stream_mode == "values"
        if self.values_mode and version != "v2":
            self.modes: Any = ["updates", "values"]
        else:
            self.modes = stream_mode
        self.latest: Any = None
        self.interrupts: list[Any] = []
        self.chunks: list[Any] = []

    def add(self, chunk: Any) -> None:
        if not self.values_mode:
            self.chunks.append(chunk)
        elif self.version == "v2":
            self.latest = chunk["data"]
            self.interrupts.extend(chunk.get("interrupts", ()))
        else:
            # (ns, mode, payload) when `subgraphs=True` streams them: the last root values
            # come last, as in LangGraph, which drops the namespace here too
            mode, payload = chunk if len(chunk) == 2 else chunk[1:]
            if mode == "updates":
                if (
                    isinstance(payload, dict)
                    and (ints := payload.get(INTERRUPT)) is not None
                ):
                    self.interrupts.extend(ints)
            else:
                self.latest = payload

    def result(self) -> Any:
        if not self.values_mode:
            return self.chunks
        if self.version == "v2":
            return GraphOutput(value=self.latest, interrupts=tuple(self.interrupts))
        if self.interrupts:
            if isinstance(self.latest, dict):
                return {**self.latest, INTERRUPT: self.interrupts}
            return {INTERRUPT: self.interrupts}
        return self.latest

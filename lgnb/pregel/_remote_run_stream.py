"""`RemoteGraph.stream_events(version="v3")`: a run stream over a run on a LangGraph server.

The server speaks the v3 streaming protocol itself (channels `values`, `messages`,
`updates`, `lifecycle`, ...), and the SDK's thread stream (`client.threads.stream(...)`)
decodes it. These classes give that SDK object the surface of lgnb's local run streams
(`lgnb.stream.GraphRunStream`): a context manager that starts the run on entry;
projections `values`, `messages`, `subgraphs`, `tool_calls` and the `extensions` registry
(`updates`, `checkpoints`, `tasks`, `custom` decoded to the same items the local
transformers push); `output` / `interrupted` / `interrupts`; `abort()`, which cancels the
server run; iteration over the raw protocol events.

One difference from a local run stream: `interrupted` / `interrupts` report what the SDK
has seen so far instead of driving the run to its end first (drain a projection, or read
`output`, before asking).

Shared state and lookups live in `_RemoteRunStreamBase`; the sync and async classes only
differ in how they call the SDK (`with` / `async with`, plain / awaited calls).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from types import TracebackType
from typing import Any

from lgnb.types import Command

__all__ = ("AsyncRemoteRunStream", "ChannelProjection", "ProjectionRegistry", "RemoteRunStream", "wire_input")

logger = logging.getLogger(__name__)


def wire_input(input: Any) -> Any:
    """The v3 `run.start` input for `input`.

    The v3 server decides between starting and resuming from the thread's state, and on a
    resume wraps the input as `{"resume": input}` itself: a `Command(resume=v)` therefore
    travels as plain `v`. The v3 start path has no channel for `goto` / `update`.
    """
    if not isinstance(input, Command):
        return input
    if input.goto or input.update:
        raise NotImplementedError(
            "RemoteGraph.stream_events(version='v3') takes Command(resume=...) only; a "
            "Command with `goto` / `update` cannot be sent on the v3 run.start path. Use "
            "RemoteGraph.stream(Command(...)) (v1/v2) for those."
        )
    return input.resume


class ChannelProjection:
    """Items of one protocol channel the SDK has no typed projection for (`updates`,
    `checkpoints`, `tasks`, `custom`): each event's `params.data`, decoded by the SDK's
    `DataDecoder`, the same items the local transformer of that channel pushes.

    `for` over it on a sync run stream, `async for` on an async one.
    """

    def __init__(self, sdk: Any, channel: str) -> None:
        self._sdk = sdk
        self._channel = channel

    def __iter__(self) -> Iterator[Any]:
        from langgraph_sdk.stream.decoders import DataDecoder

        decoder = DataDecoder(self._channel)
        for event in self._sdk.subscribe([self._channel]):
            yield from decoder.feed(event)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._aiter()

    async def _aiter(self) -> AsyncIterator[Any]:
        from langgraph_sdk.stream.decoders import DataDecoder

        decoder = DataDecoder(self._channel)
        async for event in self._sdk.subscribe([self._channel]):
            for item in decoder.feed(event):
                yield item


class ProjectionRegistry(Mapping[str, Any]):
    """`run.extensions` of a remote run: projection name -> projection.

    Lists the protocol channels whose items match the local ones; any other name is a
    custom extension channel (`custom:<name>` on the wire). `lifecycle` is not listed:
    the SDK consumes it to track the run's status (read it from the raw events); nor is
    `debug`, which is not a v3 channel.
    """

    _TYPED = ("values", "messages", "tool_calls", "subgraphs")
    _DECODED = ("updates", "checkpoints", "tasks", "custom")
    _NATIVE = _TYPED + _DECODED

    def __init__(self, sdk: Any) -> None:
        self._sdk = sdk

    def __getitem__(self, name: str) -> Any:
        if name in self._TYPED:
            return getattr(self._sdk, name)
        if name in self._DECODED:
            return ChannelProjection(self._sdk, name)
        return self._sdk.extensions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._NATIVE)

    def __len__(self) -> int:
        return len(self._NATIVE)


class _RemoteRunStreamBase:
    """What both lanes share: the start arguments, the run id, the projections."""

    def __init__(self, client: Any, sdk_thread: Any, input: Any, config: Any, metadata: Any) -> None:
        self._client = client
        self._sdk = sdk_thread
        self._start_kwargs: dict[str, Any] = {
            "input": wire_input(input),
            "config": config,
            "metadata": metadata,
        }
        self._run_id: str | None = None
        self._closed = False
        self._events: Any = None

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(
                f"{type(self).__name__} was already closed; call stream_events() again "
                "for a new run."
            )

    def _started(self, result: Any) -> None:
        self._run_id = result["run_id"]

    def _missing_values(self) -> list[Any] | None:
        """The SDK's interrupt payloads, or None when some lack their value: langgraph-api
        sends an `input.requested` event's question as `payload`, the SDK reads `value`
        (so it holds None); the thread's state has the question, keyed by interrupt id."""
        payloads = list(self._sdk.interrupts)
        return None if any(p.get("value") is None for p in payloads) else payloads

    @staticmethod
    def _fill(payloads: list[Any], state: Any) -> list[Any]:
        asked = {}
        for entry in (state or {}).get("interrupts") or ():
            if isinstance(entry, Mapping) and "id" in entry:
                asked[str(entry["id"])] = entry.get("value")
        return [{**p, "value": asked.get(str(p.get("interrupt_id")))} if p.get("value") is None else p
                for p in payloads]

    def _cancel_args(self) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        """`runs.cancel` arguments for abort(), or None when no run was started."""
        if self._run_id is None:
            return None
        return (self._sdk.thread_id, self._run_id), {"wait": False}

    @property
    def values(self) -> Any:
        """The run's state after each step (local: `run.values`)."""
        return self._sdk.values

    @property
    def messages(self) -> Any:
        """Chat-model message streams (local: `run.messages`)."""
        return self._sdk.messages

    @property
    def subgraphs(self) -> Any:
        """Handles of the subgraph runs (local: `run.subgraphs`)."""
        return self._sdk.subgraphs

    @property
    def tool_calls(self) -> Any:
        """Tool *execution* events (the `tools` channel), not the tool-call inputs that
        `messages` carries."""
        return self._sdk.tool_calls

    @property
    def extensions(self) -> Mapping[str, Any]:
        """Projection name -> projection (local: `run.extensions`)."""
        return ProjectionRegistry(self._sdk)


class RemoteRunStream(_RemoteRunStreamBase):
    """Sync run stream over a remote run: `with graph.stream_events(..., version="v3") as run:`."""

    def __init__(
        self, *, sync_client: Any, sdk_thread: Any, input: Any, config: Any, metadata: Any
    ) -> None:
        super().__init__(sync_client, sdk_thread, input, config, metadata)

    def __enter__(self) -> RemoteRunStream:
        self._check_open()
        self._sdk.__enter__()
        try:
            result = self._sdk.run.start(**self._start_kwargs)
        except BaseException:
            self._sdk.__exit__(*sys.exc_info())
            raise
        self._started(result)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._closed:
            self._closed = True
            self._sdk.__exit__(exc_type, exc, tb)

    @property
    def output(self) -> Any:
        """The run's final state (blocks until the run ends)."""
        return self._sdk.output

    @property
    def interrupted(self) -> bool:
        """Whether the run is paused at an interrupt, as far as seen so far."""
        return self._sdk.interrupted

    @property
    def interrupts(self) -> list[Any]:
        """The pending interrupt payloads seen so far (`interrupt_id`, `value`, `namespace`)."""
        payloads = self._missing_values()
        if payloads is not None:
            return payloads
        return self._fill(list(self._sdk.interrupts), self._client.threads.get_state(self._sdk.thread_id))

    def abort(self) -> None:
        """Cancel the server run (if started) and close the stream; idempotent."""
        if self._closed:
            return
        self._closed = True
        if (cancel := self._cancel_args()) is not None:
            try:
                self._client.runs.cancel(*cancel[0], **cancel[1])
            except Exception:
                logger.debug("RemoteRunStream.abort: runs.cancel failed", exc_info=True)
        try:
            self._sdk.close()
        except Exception:
            logger.debug("RemoteRunStream.abort: closing the stream failed", exc_info=True)

    def __iter__(self) -> Iterator[Any]:
        """The raw protocol events (one subscription, however often iterated)."""
        if self._events is None:
            self._events = iter(self._sdk.events)
        return self._events

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """`(name, item)` pairs of several projections, in arrival order."""
        yield from self._sdk.interleave_projections(list(names))


class AsyncRemoteRunStream(_RemoteRunStreamBase):
    """Async run stream over a remote run:
    `async with await graph.astream_events(..., version="v3") as run:`.

    Like the local `AsyncGraphRunStream`, `output()`, `interrupted()` and `interrupts()`
    are coroutine methods, and there is no `interleave` (compose projections with
    `asyncio.gather`).
    """

    def __init__(self, *, client: Any, sdk_thread: Any, input: Any, config: Any, metadata: Any) -> None:
        super().__init__(client, sdk_thread, input, config, metadata)

    async def __aenter__(self) -> AsyncRemoteRunStream:
        self._check_open()
        await self._sdk.__aenter__()
        try:
            result = await self._sdk.run.start(**self._start_kwargs)
        except BaseException:
            await self._sdk.__aexit__(*sys.exc_info())
            raise
        self._started(result)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._closed:
            self._closed = True
            await self._sdk.__aexit__(exc_type, exc, tb)

    async def output(self) -> Any:
        """The run's final state (waits for the run to end)."""
        return await self._sdk.output

    async def interrupted(self) -> bool:
        """Whether the run is paused at an interrupt, as far as seen so far."""
        return self._sdk.interrupted

    async def interrupts(self) -> list[Any]:
        """The pending interrupt payloads seen so far (`interrupt_id`, `value`, `namespace`)."""
        payloads = self._missing_values()
        if payloads is not None:
            return payloads
        return self._fill(list(self._sdk.interrupts), await self._client.threads.get_state(self._sdk.thread_id))

    async def abort(self) -> None:
        """Cancel the server run (if started) and close the stream; idempotent."""
        if self._closed:
            return
        self._closed = True
        if (cancel := self._cancel_args()) is not None:
            try:
                await self._client.runs.cancel(*cancel[0], **cancel[1])
            except Exception:
                logger.debug("AsyncRemoteRunStream.abort: runs.cancel failed", exc_info=True)
        try:
            await self._sdk.close()
        except Exception:
            logger.debug("AsyncRemoteRunStream.abort: closing the stream failed", exc_info=True)

    def __aiter__(self) -> AsyncIterator[Any]:
        """The raw protocol events (one subscription, however often iterated)."""
        if self._events is None:
            self._events = self._sdk.events.__aiter__()
        return self._events

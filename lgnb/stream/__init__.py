"""LangGraph 1.2's streaming API (beta): run streams and their transformers.

`graph.stream_events(input, version="v3")` (or `await graph.astream_events(...)`) returns
a run stream whose projections — `run.values`, `run.messages`, `run.lifecycle`,
`run.subgraphs`, plus those of extra transformers (`compile(transformers=[...])`,
`stream_events(transformers=[...])`) — are drained by the caller, which drives the run.
It is built on the engine's one stream pipeline: the run's `(namespace, mode, payload)`
events become protocol events (`lgnb.stream._event`) fed through a `StreamMux`.
"""

from lgnb.stream._event import ProtocolEvent
from lgnb.stream._transformer import StreamTransformer
from lgnb.stream.run_stream import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    GraphRunStream,
    SubgraphRunStream,
)
from lgnb.stream.stream_channel import StreamChannel
from lgnb.stream.transformers import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    LifecyclePayload,
    LifecycleTransformer,
    SubgraphStatus,
    SubgraphTransformer,
    TasksTransformer,
    UpdatesTransformer,
)

__all__ = [
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "GraphRunStream",
    "LifecyclePayload",
    "LifecycleTransformer",
    "ProtocolEvent",
    "StreamChannel",
    "StreamTransformer",
    "SubgraphRunStream",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
]

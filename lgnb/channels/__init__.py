"""Channels: the state keys and plumbing of a Pregel graph, one class per module."""

from lgnb.channels.any_value import AnyValue
from lgnb.channels.base import BaseChannel
from lgnb.channels.binop import BinaryOperatorAggregate
from lgnb.channels.delta import DeltaChannel
from lgnb.channels.ephemeral_value import EphemeralValue
from lgnb.channels.last_value import LastValue, LastValueAfterFinish
from lgnb.channels.named_barrier_value import (
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
)
from lgnb.channels.topic import Topic
from lgnb.channels.untracked_value import UntrackedValue

__all__ = (
    "AnyValue",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "EphemeralValue",
    "LastValue",
    "LastValueAfterFinish",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "Topic",
    "UntrackedValue",
)

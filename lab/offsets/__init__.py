"""At-least-once offset bookkeeping, as Apache Storm's Kafka spouts did it.

Read in this order: `offset_manager` (storm-kafka-client: emitted and acked offsets, and the commit walk that may jump
compacted gaps), `retry` (exponential back-off for failed offsets), `partition_log` (the little a spout needs from a
partition), `partition_manager` (the older storm-kafka rules: pending offsets, `max_offset_behind`, out-of-range jumps,
and the traps they set).
"""

from lab.offsets.offset_manager import OffsetManager
from lab.offsets.partition_log import (
    EARLIEST_TIME,
    LATEST_TIME,
    InMemoryPartitionLog,
    OffsetOutOfRangeError,
    PartitionLog,
)
from lab.offsets.partition_manager import EmitState, PartitionManager
from lab.offsets.retry import ExponentialBackoffMsgRetryManager, MessageRetryRecord

__all__ = [
    "EARLIEST_TIME",
    "LATEST_TIME",
    "EmitState",
    "ExponentialBackoffMsgRetryManager",
    "InMemoryPartitionLog",
    "MessageRetryRecord",
    "OffsetManager",
    "OffsetOutOfRangeError",
    "PartitionLog",
    "PartitionManager",
]

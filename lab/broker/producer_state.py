"""Idempotent producers: sequence numbers per producer and partition, after Kafka's `ProducerStateManager`.

An idempotent producer numbers its batches per partition: 0, 1, 2, ... (a batch of n records takes n numbers). The
broker remembers, per (producer id, partition), the epoch and the last few batches it appended. A retried batch that
matches one of them is a duplicate: it is answered with the offset it got the first time and not written again. A
gap in the numbers means a batch was lost in between: OUT_OF_ORDER_SEQUENCE_NUMBER.

    >>> state = ProducerStateManager()
    >>> state.check(producer_id=7, epoch=0, first_seq=0, last_seq=4, key=("t", 0))
    >>> state.record(7, 0, 0, 4, ("t", 0), first_offset=100, last_offset=104)
    >>> state.check(7, 0, 0, 4, ("t", 0))           # a retry of the same batch
    Duplicate(first_offset=100)
    >>> state.check(7, 0, 9, 12, ("t", 0))          # numbers 5..8 never arrived
    Traceback (most recent call last):
    ...
    lab.broker.producer_state.SequenceError: OUT_OF_ORDER_SEQUENCE_NUMBER: expected sequence 5, got 9
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lab.broker.log import PartitionLog

RECENT_BATCHES = 5  # Kafka keeps the metadata of the last five batches per producer and partition
REBUILD_SEGMENTS = 2  # a restart rebuilds the state from the batch headers of each log's last two segments
CONTROL_BIT = 0x20

OUT_OF_ORDER_SEQUENCE_NUMBER = 45
INVALID_PRODUCER_EPOCH = 47


class SequenceError(Exception):
    def __init__(self, error_code: int, message: str) -> None:
        out_of_order = error_code == OUT_OF_ORDER_SEQUENCE_NUMBER
        name = "OUT_OF_ORDER_SEQUENCE_NUMBER" if out_of_order else "INVALID_PRODUCER_EPOCH"
        super().__init__(f"{name}: {message}")
        self.error_code = error_code


@dataclass(frozen=True)
class Duplicate:
    first_offset: int


@dataclass
class _Entry:
    epoch: int
    batches: deque[tuple[int, int, int, int]] = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))


class ProducerStateManager:
    def __init__(self) -> None:
        self._entries: dict[tuple[int, tuple[str, int]], _Entry] = {}

    def check(self, producer_id: int, epoch: int, first_seq: int, last_seq: int,
              key: tuple[str, int]) -> Duplicate | None:
        """None if the batch may be appended; Duplicate if it already was; SequenceError if it must be refused."""
        entry = self._entries.get((producer_id, key))
        if entry is None or epoch > entry.epoch:
            if first_seq != 0 and entry is not None:
                raise SequenceError(OUT_OF_ORDER_SEQUENCE_NUMBER, f"a new epoch must start at 0, got {first_seq}")
            return None  # first batch we see from this producer here (the log may have been truncated)
        if epoch < entry.epoch:
            raise SequenceError(INVALID_PRODUCER_EPOCH, f"epoch {epoch} is older than {entry.epoch}")
        for batch_first, batch_last, first_offset, _ in entry.batches:
            if (batch_first, batch_last) == (first_seq, last_seq):
                return Duplicate(first_offset)
        expected = (entry.batches[-1][1] + 1) % 2**31 if entry.batches else 0
        if first_seq != expected:
            raise SequenceError(OUT_OF_ORDER_SEQUENCE_NUMBER, f"expected sequence {expected}, got {first_seq}")
        return None

    def record(self, producer_id: int, epoch: int, first_seq: int, last_seq: int, key: tuple[str, int],
               first_offset: int, last_offset: int) -> None:
        entry = self._entries.get((producer_id, key))
        if entry is None or epoch > entry.epoch:
            entry = self._entries[producer_id, key] = _Entry(epoch)
        entry.batches.append((first_seq, last_seq, first_offset, last_offset))

    def forget_topic(self, topic: str) -> None:
        for key in [k for k in self._entries if k[1][0] == topic]:
            del self._entries[key]

    def rebuild(self, logs: Iterable[PartitionLog]) -> int:
        """After a restart, read back what the logs say about idempotent producers: the last batches of each
        (producer, partition), from the batch headers of each log's newest segments (the state is otherwise kept in
        memory only). Without this a producer's retry of a batch that was written just before a crash was written a
        second time. Kafka gets the same from its `.snapshot` files plus the log after the snapshot
        (`ProducerStateManager.truncateAndReload`, `UnifiedLog.rebuildProducerState`); the lab reads the segments
        themselves, which costs one 61-byte read per batch. Returns the number of batches read."""
        read = 0
        for log in logs:
            key = (log.topic, log.partition)
            for segment in log.segments[-REBUILD_SEGMENTS:]:
                for header in segment.batch_headers():
                    read += 1
                    if header.producer_id < 0 or header.attributes & CONTROL_BIT:
                        continue
                    self.record(header.producer_id, header.producer_epoch, header.base_sequence,
                                header.last_sequence, key, header.base_offset, header.last_offset)
        return read

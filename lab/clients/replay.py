"""Replay by timestamp: the records of a topic whose timestamps fall in a window [start_ms, end_ms), read again.

Three steps, all with confluent-kafka and none of them joining a group:

1. where the window starts: `offsets_for_times(start_ms)` gives, per partition, the first offset whose timestamp is
   at or after `start_ms` (the broker's ListOffsets by timestamp, answered from the time index); -1 when no record is
   that late;
2. where it ends: the same question for `end_ms` (the window excludes its end), or the high watermark when that
   answer is -1: the partition has nothing as late as `end_ms`, so the window runs to the last record;
3. `assign()` each partition at its first offset and read until its position reaches the stop offset.

A worked example: partition 0 holds records stamped (in seconds into some minute) 0, 15, 30, 45 at offsets 0-3, and
60, 75 at offsets 4-5.

    offsets_for_times(15 s) -> 1        offsets_for_times(60 s) -> 4        so [15 s, 60 s) is offsets 1, 2, 3
    offsets_for_times(80 s) -> -1                                           so [80 s, 90 s) is nothing
    offsets_for_times(70 s) -> 5, and for 90 s -1: the high watermark, 6    so [70 s, 90 s) is offset 5

    records = replay("127.0.0.1:9092", "clicks", start_ms, end_ms)         # partition 0's, then partition 1's...

The lookup assumes the timestamps of a partition go up with its offsets, as they do when producers stamp records at
send time. Kafka keeps any create time a producer gives, so a late record could sit after the window's end offset:
the lookup only says where to start and stop reading (`UnifiedLog.fetchOffsetByTimestamp`, and Kafka's
`KafkaConsumer.offsetsForTimes` javadoc). The records read are still filtered by timestamp, so nothing outside the
window is ever returned.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, Message, TopicPartition

NO_OFFSET = -1      # offsets_for_times' answer when no record is that late (librdkafka's OFFSET_END)


@dataclass(frozen=True, slots=True)
class Record:
    """A record as the replay hands it back."""

    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None = None
    value: bytes | None = None

    @classmethod
    def of(cls, message: Message) -> Record:
        partition, offset = message.partition(), message.offset()
        assert partition is not None and offset is not None, "an error message is not a record"
        return cls(partition, offset, message.timestamp()[1], message.key(), message.value())


def window_offsets(consumer: Consumer, topic: str, start_ms: int, end_ms: int,
                   timeout_s: float) -> dict[int, tuple[int, int]]:
    """Per partition with something in the window, the offsets to read: [first, stop)."""
    metadata = consumer.list_topics(topic, timeout_s).topics[topic]
    if metadata.error is not None:
        raise KafkaException(metadata.error)
    partitions = sorted(metadata.partitions)
    starts = consumer.offsets_for_times([TopicPartition(topic, p, start_ms) for p in partitions], timeout_s)
    ends = consumer.offsets_for_times([TopicPartition(topic, p, end_ms) for p in partitions], timeout_s)
    found = {}
    for start, end in zip(starts, ends, strict=True):
        if start.offset == NO_OFFSET:            # nothing at or after start_ms in this partition
            continue
        stop = end.offset
        if stop == NO_OFFSET:                     # nothing as late as end_ms: read to the end of the partition
            stop = consumer.get_watermark_offsets(TopicPartition(topic, start.partition), timeout_s)[1]
        if start.offset < stop:
            found[start.partition] = (start.offset, stop)
    return found


def replay(bootstrap: str, topic: str, start_ms: int, end_ms: int, *, timeout_s: float = 30.0) -> list[Record]:
    """The records of `topic` whose timestamps are in [start_ms, end_ms), partition by partition, each in offset
    order. Raises TimeoutError if they cannot all be read within `timeout_s`."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"lab-replay-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100})  # the group is never joined
    try:
        ranges = window_offsets(consumer, topic, start_ms, end_ms, timeout_s)
        if not ranges:
            return []
        consumer.assign([TopicPartition(topic, p, first) for p, (first, _) in ranges.items()])
        got: list[Record] = []
        left = {p: stop for p, (_, stop) in ranges.items()}    # partitions still being read, and where they stop
        deadline = time.monotonic() + timeout_s
        while left:
            if time.monotonic() > deadline:
                raise TimeoutError(f"replay of {topic}: partitions {sorted(left)} not read to their stop offsets "
                                   f"{left} within {timeout_s:.0f} s")
            for message in consumer.consume(500, 0.1):
                error = message.error()
                if error is not None:   # an event, not a record: librdkafka retries what it can by itself
                    if error.fatal():
                        raise KafkaException(error)
                    continue
                record = Record.of(message)
                stop = left.get(record.partition)
                if stop is None or record.offset >= stop:
                    continue
                if start_ms <= record.timestamp_ms < end_ms:
                    got.append(record)
            # done with a partition once its position reaches the stop offset (position: the next offset to read)
            for tp in consumer.position([TopicPartition(topic, p) for p in left]):
                if tp.offset >= left[tp.partition]:
                    del left[tp.partition]
        return sorted(got, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()

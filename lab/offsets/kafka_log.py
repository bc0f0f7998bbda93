"""A `PartitionLog` over one partition of a real Kafka topic, read and committed with confluent-kafka.

The spouts in this package only ask a partition three things: where it starts, where it ends, and "give me the
offsets from here". Against a broker those are a ListOffsets request (`get_watermark_offsets`) and a fetch
(`assign` at the offset, then `poll` until the end of the partition or `max_records`). The records themselves are
kept by offset, so a caller that needs more than the offset (the key and value a bolt works on) asks `record()`
without the `PartitionLog` protocol changing.

It also holds the consumer group the spout stores its progress in. librdkafka wants a `group.id` on every
consumer; this one only ever `assign()`s, so it never joins the group, and `commit()` is a "simple consumer"
commit (generation -1, no member id) that Kafka accepts while no member has joined. Lag tools
(`kafka-consumer-groups --describe`) then show the committed offset against the log end as for any group.

    with KafkaPartitionLog(bootstrap, "orders", 0, group_id="spout") as log:
        log.earliest_offset(), log.latest_offset()     # (0, 40): the log start offset and the high watermark
        log.fetch(13, max_records=5)                   # [13, 14, 15, 16, 17]
        log.record(13).key                             # b'order-13'
        log.commit(13); log.committed()                # 13, read back from the group coordinator

Out of range: a fetch below the log start offset (retention deleted it) or above the high watermark raises
`OffsetOutOfRangeError`, as storm-kafka's `KafkaUtils.fetchMessages` throws `TopicOffsetOutOfRangeException` on
the broker's OFFSET_OUT_OF_RANGE. The offset is checked against fresh watermarks before fetching; a fetch that
still meets the error (retention ran in between) is reported the same way, since `auto.offset.reset=error` makes
librdkafka hand the error to the application instead of silently resetting the position.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import OFFSET_INVALID, Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from lab.offsets.partition_log import OffsetOutOfRangeError

TIMEOUT_S = 15.0
# librdkafka's ways of saying "that offset is not in the log": the broker's error, and the consumer error it raises
# instead of resetting when auto.offset.reset=error.
OUT_OF_RANGE = (KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET)


@dataclass(frozen=True, slots=True)
class KafkaRecord:
    """What the fetch returned at one offset."""

    offset: int
    key: bytes | None
    value: bytes | None
    timestamp_ms: int


class KafkaPartitionLog:
    """One partition of a real topic as a `PartitionLog`, plus the committed offset of one consumer group."""

    def __init__(self, bootstrap: str, topic: str, partition: int = 0, *, group_id: str,
                 timeout: float = TIMEOUT_S, config: dict[str, Any] | None = None) -> None:
        self.topic, self.partition, self.group_id, self.timeout = topic, partition, group_id, timeout
        self._consumer = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": group_id,
            "enable.auto.commit": False,        # only the commits the spout asks for
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,       # a fetch ends at the high watermark: librdkafka says when it is there
            "auto.offset.reset": "error",       # an offset out of range is an error to report, not to paper over
            "fetch.wait.max.ms": 50,
            **(config or {}),
        })
        self._records: dict[int, KafkaRecord] = {}

    # ---- the PartitionLog protocol ---------------------------------------------------------------------------------

    def earliest_offset(self) -> int:
        """The log start offset: the first offset still stored."""
        return self.watermarks()[0]

    def latest_offset(self) -> int:
        """The high watermark: what a consumer can read up to (one replica here, so also the log end offset)."""
        return self.watermarks()[1]

    def fetch(self, offset: int, max_records: int) -> list[int]:
        """Up to `max_records` offsets present at or after `offset`, up to the high watermark.

        Compacted offsets are simply not among them. Raises OffsetOutOfRangeError when `offset` is not in
        [log start offset, high watermark], and TimeoutError when the broker sends neither a record nor the end of
        the partition within the timeout.
        """
        low, high = self.watermarks()
        if not low <= offset <= high:
            raise OffsetOutOfRangeError(f"offset {offset} is out of range [{low}, {high}] of {self.topic}"
                                        f"[{self.partition}]")
        if offset == high or max_records <= 0:
            return []
        self._consumer.assign([KafkaTopicPartition(self.topic, self.partition, offset)])
        fetched: list[int] = []
        deadline = time.monotonic() + self.timeout
        while len(fetched) < max_records:
            message = self._consumer.poll(max(deadline - time.monotonic(), 0.0))
            if message is None:
                if fetched:
                    break  # a slow broker: hand over what arrived
                raise TimeoutError(f"no record and no end of partition from {self.topic}[{self.partition}] at "
                                   f"offset {offset} within {self.timeout:.0f} s")
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    break
                if error.code() in OUT_OF_RANGE:
                    raise OffsetOutOfRangeError(f"offset {offset} of {self.topic}[{self.partition}]: {error.str()}")
                raise KafkaException(error)
            at = message.offset()
            if at is None or at < offset:
                continue  # a fetch may start inside a batch below the offset asked for
            self._records[at] = KafkaRecord(at, message.key(), message.value(), message.timestamp()[1])
            fetched.append(at)
        return fetched

    # ---- beyond the protocol ---------------------------------------------------------------------------------------

    def watermarks(self) -> tuple[int, int]:
        """(log start offset, high watermark), asked of the partition leader now (ListOffsets), not cached."""
        low, high = self._consumer.get_watermark_offsets(self._partition(), timeout=self.timeout, cached=False)
        return low, high

    def record(self, offset: int) -> KafkaRecord:
        """The record a fetch returned at `offset` (KeyError if no fetch returned it)."""
        return self._records[offset]

    def commit(self, offset: int, metadata: str | None = None) -> None:
        """Store `offset` (the next record to process) as the group's committed offset, synchronously."""
        [result] = self._consumer.commit(offsets=[self._partition(offset, metadata)], asynchronous=False)
        if result.error is not None:
            raise KafkaException(result.error)

    def committed(self) -> int | None:
        """The group's committed offset as the coordinator has it now (OffsetFetch), or None if there is none."""
        [result] = self._consumer.committed([self._partition()], timeout=self.timeout)
        if result.error is not None:
            raise KafkaException(result.error)
        return None if result.offset == OFFSET_INVALID else result.offset

    def close(self) -> None:
        self._consumer.close()

    def __enter__(self) -> KafkaPartitionLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _partition(self, offset: int = OFFSET_INVALID, metadata: str | None = None) -> KafkaTopicPartition:
        if metadata is None:  # the C extension takes a str or nothing, not None
            return KafkaTopicPartition(self.topic, self.partition, offset)
        return KafkaTopicPartition(self.topic, self.partition, offset, metadata)

    def __repr__(self) -> str:
        return f"KafkaPartitionLog({self.topic}[{self.partition}], group {self.group_id})"

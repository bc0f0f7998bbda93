"""What the reader's tests do to Kafka besides reading it: unique names, the log start, retention made to bite."""

from __future__ import annotations

import itertools
import uuid

from confluent_kafka import Consumer, TopicPartition

from lab.clients.producer import produce_records
from lab.scenarios.runner import Target

_names = itertools.count()


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}-{uuid.uuid4().hex[:6]}"


def watermarks(bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
    """(log start offset, high watermark) of one partition, asked of the broker now."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("probe")})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10, cached=False)
        return low, high
    finally:
        consumer.close()


SHRINKING = {"segment.bytes": "4096", "retention.ms": "1"}  # the topic config `shrink` needs


def shrink(target: Target, topic: str) -> int:
    """Write 200 records of ~120 B to partition 0 of `topic` (made with SHRINKING), have the embedded broker's
    retention delete its old segments, then write 20 more (offsets 200-219); return the log start offset now."""
    for burst in range(10):  # one batch of ~2.5 KB each: a segment holds one or two of them
        produce_records(target.bootstrap, topic, 20, partition=0, value=b"z" * 100, first=20 * burst)
    assert target.broker.call(lambda b: b.logs.delete_old_segments()) > 0
    produce_records(target.bootstrap, topic, 20, partition=0, value=b"z" * 100, first=200)
    low, _ = watermarks(target.bootstrap, topic, 0)
    assert 0 < low <= 200
    return low

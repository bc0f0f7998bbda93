"""Treats the window's end as included: reads each partition up to the first record *after* end_ms."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, TopicPartition

from lab.clients.replay import Record


def replay(bootstrap: str, topic: str, start_ms: int, end_ms: int) -> list[Record]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "replayer", "enable.auto.commit": False})
    try:
        partitions = sorted(consumer.list_topics(topic, 10).topics[topic].partitions)
        starts = consumer.offsets_for_times([TopicPartition(topic, p, start_ms) for p in partitions], 10)
        high = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), 10)[1] for p in partitions}
        reading = {tp.partition: high[tp.partition] for tp in starts if 0 <= tp.offset < high[tp.partition]}
        if not reading:
            return []
        consumer.assign([tp for tp in starts if tp.partition in reading])
        records: list[Record] = []
        deadline = time.monotonic() + 20
        while reading and time.monotonic() < deadline:
            message = consumer.poll(0.1)
            if message is None or message.error() is not None or message.partition() not in reading:
                continue
            record = Record.of(message)
            if record.timestamp_ms <= end_ms:
                records.append(record)
            if record.timestamp_ms > end_ms or record.offset == reading[record.partition] - 1:
                del reading[record.partition]
        return sorted(records, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()

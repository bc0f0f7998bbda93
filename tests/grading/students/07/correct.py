"""A correct answer written from scratch: stop offsets from offsets_for_times(end_ms), or the high watermark."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, TopicPartition

from lab.clients.replay import Record


def replay(bootstrap: str, topic: str, start_ms: int, end_ms: int) -> list[Record]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "replayer", "enable.auto.commit": False})
    try:
        partitions = sorted(consumer.list_topics(topic, 10).topics[topic].partitions)
        starts = consumer.offsets_for_times([TopicPartition(topic, p, start_ms) for p in partitions], 10)
        ends = consumer.offsets_for_times([TopicPartition(topic, p, end_ms) for p in partitions], 10)
        wanted = {}
        for start, end in zip(starts, ends):
            stop = end.offset if end.offset >= 0 else consumer.get_watermark_offsets(start, 10)[1]
            if 0 <= start.offset < stop:
                wanted[start.partition] = (start.offset, stop)
        if not wanted:
            return []
        consumer.assign([TopicPartition(topic, p, first) for p, (first, _) in wanted.items()])
        records: dict[int, list[Record]] = {p: [] for p in wanted}
        deadline = time.monotonic() + 20
        while any(not records[p] or records[p][-1].offset < stop - 1 for p, (_, stop) in wanted.items()):
            if time.monotonic() > deadline:
                raise TimeoutError("the window was not read in 20 s")
            message = consumer.poll(0.1)
            if message is None or message.error() is not None:
                continue
            partition, offset = message.partition(), message.offset()
            if offset < wanted[partition][1]:
                records[partition].append(Record.of(message))
        return [r for p in sorted(records) for r in records[p] if start_ms <= r.timestamp_ms < end_ms]
    finally:
        consumer.close()

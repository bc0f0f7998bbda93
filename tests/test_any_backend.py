"""The same client code on whichever backend `--backend` chose: produce, consume in a group, commit, resume."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def test_produce_consume_commit_and_resume(kafka_bootstrap: str) -> None:
    topic, group = f"any-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})  # kept: a dropped client cancels its futures
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i in range(20):
        producer.produce(topic, value=str(i).encode())
    assert producer.flush(30) == 0
    settings = {"bootstrap.servers": kafka_bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                "enable.auto.commit": False, "session.timeout.ms": 6000}
    consumer = Consumer(settings)
    consumer.subscribe([topic])
    seen: list[int] = []
    for _ in range(120):
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            seen.append(int(message.value()))
            if len(seen) == 10:
                consumer.commit(asynchronous=False)
                break
    consumer.close()
    assert seen == list(range(10))
    resumed = Consumer(settings)
    assert resumed.committed([TopicPartition(topic, 0)], timeout=30)[0].offset == 10
    resumed.subscribe([topic])
    first = None
    for _ in range(120):
        message = resumed.poll(0.5)
        if message is not None and message.error() is None:
            first = int(message.value())
            break
    resumed.close()
    assert first == 10

"""Small helpers over confluent-kafka for the broker tests: produce a known set, read it all back."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from lab.broker.embedded import EmbeddedBroker


@dataclass(frozen=True)
class Seen:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


def create_topic(bootstrap: str, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})], operation_timeout=10)
    futures[name].result(15)


def produce(bootstrap: str, topic: str, records: list[dict[str, Any]], **config: Any) -> list[Message]:
    """Produce every record (dicts of Producer.produce kwargs); returns the delivery reports, failing on any error."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})
    reports: list[Message] = []
    errors: list[KafkaError] = []

    def on_delivery(error: KafkaError | None, message: Message) -> None:
        (errors.append(error) if error else reports.append(message))

    for record in records:
        producer.produce(topic, on_delivery=on_delivery, **record)
        producer.poll(0)
    left = producer.flush(30)
    assert left == 0, f"{left} records still undelivered"
    assert not errors, errors[:3]
    return reports


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int, timeout: float = 30,
                **config: Any) -> list[Seen]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}", "enable.auto.commit": False,
                         "fetch.wait.max.ms": 50, **config})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen: list[Seen] = []
    deadline = time.monotonic() + timeout
    try:
        while len(seen) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            assert message.error() is None, message.error()
            seen.append(Seen(message.partition(), message.offset(), message.key(), message.value(),
                             tuple(message.headers() or ()), message.timestamp()[1]))
        # a little longer, to catch duplicates delivered after the expected count
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            message = consumer.poll(0.05)
            if message is not None and message.error() is None:
                seen.append(Seen(message.partition(), message.offset(), message.key(), message.value(),
                                 tuple(message.headers() or ()), message.timestamp()[1]))
    finally:
        consumer.close()
    return seen


@contextlib.contextmanager
def recorded_events(broker: EmbeddedBroker) -> Iterator[list[object]]:
    """Every event the broker publishes while the block runs."""
    events: list[object] = []
    unsubscribe = broker.bus.subscribe(events.append)
    try:
        yield events
    finally:
        unsubscribe()

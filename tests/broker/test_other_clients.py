"""Second opinions: kafka-python and aiokafka, pure-Python clients with their own protocol code, against the
embedded broker. What confluent-kafka (librdkafka) accepts, they must accept too."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaPythonTopicPartition

from tests.broker.clients import create_topic


def test_kafka_python_produces_and_consumes_every_record_in_order(bootstrap: str, topic_name: str) -> None:
    create_topic(bootstrap, topic_name, partitions=1)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="gzip")
    for i in range(100):
        producer.send(topic_name, key=b"k", value=f"v{i}".encode(), headers=[("i", str(i).encode())], partition=0)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=5000, auto_offset_reset="earliest")
    consumer.assign([KafkaPythonTopicPartition(topic_name, 0)])
    consumer.seek_to_beginning()
    seen = []
    for message in consumer:
        seen.append((message.offset, message.value, message.headers))
        if len(seen) == 100:
            break
    consumer.close()
    assert seen == [(i, f"v{i}".encode(), [("i", str(i).encode())]) for i in range(100)]


async def test_aiokafka_produces_and_consumes_every_record_in_order(bootstrap: str, topic_name: str) -> None:
    create_topic(bootstrap, topic_name, partitions=1)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await producer.start()
    try:
        for i in range(100):
            await producer.send(topic_name, value=f"a{i}".encode(), partition=0)
        await producer.flush()
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic_name, 0)])
        await consumer.seek_to_beginning()
        seen: list[tuple[int, bytes]] = []
        while len(seen) < 100:
            batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), timeout=30)
            for messages in batches.values():
                seen.extend((m.offset, m.value) for m in messages)
    finally:
        await consumer.stop()
    assert seen == [(i, f"a{i}".encode()) for i in range(100)]

"""confluent-kafka against the embedded broker: produce, consume, offsets and admin, over a real socket."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from lab.broker.embedded import EmbeddedBroker
from tests.broker.clients import Seen, consume_all, create_topic, produce, recorded_events


def records(n: int, base_ts: int) -> list[dict[str, object]]:
    return [{"key": f"k{i % 5}".encode(), "value": f"value-{i}".encode() * (1 + i % 3),
             "headers": [("n", str(i).encode()), ("empty", None)], "partition": i % 2, "timestamp": base_ts + i}
            for i in range(n)]


def check_round_trip(sent: list[dict[str, object]], seen: list[Seen]) -> None:
    assert len(seen) == len(sent), f"expected {len(sent)} records, got {len(seen)}"
    by_partition: dict[int, list[Seen]] = defaultdict(list)
    for record in seen:
        by_partition[record.partition].append(record)
    for partition, got in by_partition.items():
        expected = [r for r in sent if r["partition"] == partition]
        assert [s.offset for s in got] == list(range(len(expected))), "offsets contiguous from 0, in order, once"
        assert [(s.key, s.value, s.timestamp) for s in got] == [(r["key"], r["value"], r["timestamp"])
                                                                 for r in expected]
        assert [s.headers for s in got] == [tuple(r["headers"]) for r in expected]  # type: ignore[arg-type]


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("acks", ["0", "1", "all"])
def test_every_record_comes_back_once_in_order_with_key_value_headers_and_timestamp(
    bootstrap: str, topic_name: str, compression: str, acks: str
) -> None:
    create_topic(bootstrap, topic_name, partitions=2)
    sent = records(200, base_ts=1_700_000_000_000)
    produce(bootstrap, topic_name, sent, **{"compression.type": compression, "acks": acks})
    check_round_trip(sent, consume_all(bootstrap, topic_name, 2, len(sent)))


def test_an_idempotent_producer_writes_each_record_once(bootstrap: str, topic_name: str) -> None:
    create_topic(bootstrap, topic_name, partitions=2)
    sent = records(500, base_ts=1_700_000_000_000)
    reports = produce(bootstrap, topic_name, sent, **{"enable.idempotence": True, "compression.type": "lz4"})
    assert sorted((m.partition(), m.offset()) for m in reports) == sorted(
        [(0, o) for o in range(250)] + [(1, o) for o in range(250)])
    check_round_trip(sent, consume_all(bootstrap, topic_name, 2, len(sent)))


def test_a_topic_is_auto_created_on_first_produce_with_the_default_partition_count(
    bootstrap: str, topic_name: str
) -> None:
    produce(bootstrap, topic_name, [{"value": b"hello"}])
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic_name, timeout=10)
    assert len(metadata.topics[topic_name].partitions) == 3
    assert metadata.topics[topic_name].error is None


def test_watermarks_follow_the_log(bootstrap: str, topic_name: str) -> None:
    create_topic(bootstrap, topic_name)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "w"})
    try:
        assert consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10) == (0, 0)
        produce(bootstrap, topic_name, [{"value": b"x", "partition": 0}] * 7)
        assert consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10) == (0, 7)
    finally:
        consumer.close()


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_offsets_for_times_before_between_inside_and_after_the_records(
    bootstrap: str, topic_name: str, compression: str
) -> None:
    create_topic(bootstrap, topic_name)
    base = 1_600_000_000_000
    # Ten records 1 s apart, all in one (compressed) batch: lookups must land inside the batch.
    produce(bootstrap, topic_name, [{"value": str(i).encode(), "partition": 0, "timestamp": base + 1000 * i}
                                    for i in range(10)], **{"compression.type": compression, "linger.ms": 100})
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "times"})
    try:
        cases = {base - 5: 0, base: 0, base + 1: 1, base + 3500: 4, base + 9000: 9, base + 9001: -1}
        # One call per timestamp: librdkafka merges repeated partitions within a single call.
        answers = {ts: consumer.offsets_for_times([TopicPartition(topic_name, 0, ts)], timeout=10)[0].offset
                   for ts in cases}
        assert answers == cases
    finally:
        consumer.close()


def test_admin_creates_describes_and_deletes_topics(bootstrap: str, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic_name, 4, 1, config={"retention.ms": "3600000"})])
    futures[topic_name].result(10)
    assert len(admin.list_topics(timeout=10).topics[topic_name].partitions) == 4

    described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic_name)])
    configs = next(iter(described.values())).result(10)
    assert configs["retention.ms"].value == "3600000" and not configs["retention.ms"].is_default
    assert configs["segment.bytes"].is_default

    again = admin.create_topics([NewTopic(topic_name, 1, 1)])
    with pytest.raises(Exception, match=r"TOPIC_ALREADY_EXISTS|already exists"):
        again[topic_name].result(10)
    too_many_replicas = admin.create_topics([NewTopic(topic_name + "-rf3", 1, 3)])
    with pytest.raises(Exception, match=r"REPLICATION_FACTOR|replication factor"):
        too_many_replicas[topic_name + "-rf3"].result(10)
    bad_config = admin.create_topics([NewTopic(topic_name + "-bad", 1, 1, config={"retention.ms": "soon"})])
    with pytest.raises(Exception, match=r"retention\.ms"):
        bad_config[topic_name + "-bad"].result(10)

    admin.delete_topics([topic_name])[topic_name].result(10)
    deadline = time.monotonic() + 10
    while topic_name in admin.list_topics(timeout=10).topics and time.monotonic() < deadline:
        time.sleep(0.1)
    assert topic_name not in admin.list_topics(timeout=10).topics


def test_a_fetch_waits_in_the_purgatory_until_data_arrives(
    embedded_broker: EmbeddedBroker, bootstrap: str, topic_name: str
) -> None:
    from lab.broker.request_events import FetchCompleted, FetchParked

    create_topic(bootstrap, topic_name)
    with recorded_events(embedded_broker) as events:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "slow", "fetch.min.bytes": 1,
                             "fetch.wait.max.ms": 5000})
        consumer.assign([TopicPartition(topic_name, 0, 0)])
        consumer.poll(0.5)  # the consumer is now parked on an empty partition
        produce(bootstrap, topic_name, [{"value": b"wake up", "partition": 0}])
        message = None
        deadline = time.monotonic() + 10
        while message is None and time.monotonic() < deadline:
            message = consumer.poll(0.2)
        consumer.close()
    assert message is not None and message.value() == b"wake up"
    parked = [e for e in events if isinstance(e, FetchParked) and (topic_name, 0) in e.partitions]
    completed = [e for e in events if isinstance(e, FetchCompleted) and (topic_name, 0) in e.partitions]
    assert parked, "no fetch was parked"
    assert any(not e.expired for e in completed), "no parked fetch was completed by the produce"


def test_a_fetch_that_never_gets_enough_bytes_expires_after_max_wait(
    embedded_broker: EmbeddedBroker, bootstrap: str, topic_name: str
) -> None:
    from lab.broker.request_events import FetchCompleted

    create_topic(bootstrap, topic_name)
    with recorded_events(embedded_broker) as events:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "expiry", "fetch.min.bytes": 10_000_000,
                             "fetch.wait.max.ms": 200})
        consumer.assign([TopicPartition(topic_name, 0, 0)])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
                isinstance(e, FetchCompleted) and e.expired and (topic_name, 0) in e.partitions for e in events):
            consumer.poll(0.1)
        consumer.close()
    expired = [e for e in events if isinstance(e, FetchCompleted) and e.expired and (topic_name, 0) in e.partitions]
    assert expired and all(e.waited_ms >= 200 for e in expired)

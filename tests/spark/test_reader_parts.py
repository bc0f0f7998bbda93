"""The reader's planner and its fetch loop against the embedded broker, without Spark: the paths a Spark test cannot
aim at (a broker restart in the middle of a task's fetch, data deleted under a running task, a partition that ends
early, topics that appear or vanish between batches, headers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from lab.assignors.contract import TopicPartition as TP
from lab.broker.config import BrokerConfig
from lab.broker.embedded import EmbeddedBroker
from lab.clients.admin import Admin
from lab.clients.producer import produce_records
from lab.scenarios.runner import Target
from lab.spark.options import ReaderOptions
from lab.spark.source import DataLossError, Planner, fetch, read_split
from tests.helpers import free_port
from tests.spark.kafka_helpers import SHRINKING, shrink, unique


@pytest.fixture
def admin(lab_target: Target) -> Iterator[Admin]:
    client = Admin(lab_target.bootstrap)
    yield client
    client.close()


def options(bootstrap: str, **extra: str) -> ReaderOptions:
    return ReaderOptions.parse({"kafka.bootstrap.servers": bootstrap, "subscribe": "unused", **extra})


def consumer_for(bootstrap: str, **extra: str) -> Consumer:
    return Consumer(options(bootstrap, **extra).consumer_config())


def test_a_fetch_outlives_a_broker_restart_in_the_middle(tmp_path: Path) -> None:
    config = BrokerConfig(data_dir=tmp_path / "broker", port=free_port())
    broker = EmbeddedBroker(config=config).start()
    try:
        Admin(broker.bootstrap_servers).create_topic("restarting", 1)
        produce_records(broker.bootstrap_servers, "restarting", 3000, partition=0)
        # tiny fetches, so that most of the partition is still on the broker when it goes away
        small = {"kafka.max.partition.fetch.bytes": "2048", "kafka.fetch.max.bytes": "2048",
                 "kafka.message.max.bytes": "2048", "kafka.queued.max.messages.kbytes": "1"}
        consumer = consumer_for(broker.bootstrap_servers, **small)
        records = fetch(consumer, TP("restarting", 0), 0, 3000, timeout_s=60)
        offsets = [next(records).offset() for _ in range(10)]
        broker.stop()
        broker = EmbeddedBroker(config=config).start()
        offsets += [m.offset() for m in records]
        consumer.close()
        assert offsets == list(range(3000))
    finally:
        broker.stop()


@pytest.fixture
def shrunk_topic(lab_target: Target, admin: Admin) -> Iterator[tuple[str, int]]:
    """A topic whose first segments retention already deleted: (name, its first offset now); 220 records written."""
    name = unique("shrunk")
    admin.create_topic(name, 1, SHRINKING)
    yield name, shrink(lab_target, name)
    admin.delete_topics([name])


def test_offsets_deleted_under_a_task_are_data_loss(lab_target: Target, shrunk_topic: tuple[str, int]) -> None:
    name, low = shrunk_topic
    consumer = consumer_for(lab_target.bootstrap)
    try:
        with pytest.raises(DataLossError, match=f"offsets 0..{low - 1} were deleted before this task read them"):
            list(fetch(consumer, TP(name, 0), 0, 220, timeout_s=30))
        skipped = [m.offset() for m in fetch(consumer, TP(name, 0), 0, 220, timeout_s=30, fail_on_data_loss=False)]
        assert skipped == list(range(low, 220))
    finally:
        consumer.close()


def test_a_partition_that_ends_before_the_range_is_data_loss_and_never_a_hang(
        lab_target: Target, admin: Admin) -> None:
    name = unique("short")
    admin.create_topic(name, 1)
    produce_records(lab_target.bootstrap, name, 30, partition=0)
    consumer = consumer_for(lab_target.bootstrap)
    try:
        with pytest.raises(DataLossError, match="now ends at offset 30, but this task was to read up to 39"):
            list(fetch(consumer, TP(name, 0), 0, 40, timeout_s=30))
        assert [m.offset() for m in fetch(consumer, TP(name, 0), 25, 40, timeout_s=30,
                                          fail_on_data_loss=False)] == [25, 26, 27, 28, 29]
    finally:
        consumer.close()
        admin.delete_topics([name])


def test_the_planner_finds_topics_that_appear_and_reports_topics_that_vanish(
        lab_target: Target, admin: Admin) -> None:
    prefix = unique("orders")
    first = f"{prefix}-eu"
    admin.create_topic(first, 2)
    produce_records(lab_target.bootstrap, first, 10, key_prefix="k")
    pattern = {"kafka.bootstrap.servers": lab_target.bootstrap, "subscribePattern": f"{prefix}-.*",
               "startingOffsets": "earliest"}
    planner = Planner(ReaderOptions.parse(pattern))
    lenient = Planner(ReaderOptions.parse({**pattern, "failOnDataLoss": "false"}))
    try:
        start = planner.initial_offsets()
        assert set(start) == {TP(first, 0), TP(first, 1)} and set(start.values()) == {0}
        second = f"{prefix}-us"
        admin.create_topic(second, 1)
        produce_records(lab_target.bootstrap, second, 7, partition=0)
        end = planner.plan_end(start, None)
        assert end[TP(second, 0)] == 7  # a new topic's partitions are read from their earliest offset
        assert sum(end[TP(first, p)] for p in (0, 1)) == 10
        admin.delete_topics([second])
        with pytest.raises(DataLossError, match=f"{second}-0 no longer exist"):
            planner.plan_end(end, None)
        carried_on = lenient.plan_end(end, None)
        assert TP(second, 0) not in carried_on and set(carried_on) == {TP(first, 0), TP(first, 1)}
        assert lenient.plan_splits(end, carried_on) == []  # nothing new to read; the vanished topic is not asked
    finally:
        planner.close()
        lenient.close()
        admin.delete_topics([first])


def test_headers_come_through_when_asked_for(lab_target: Target, admin: Admin) -> None:
    name = unique("headed")
    admin.create_topic(name, 1)
    producer = Producer({"bootstrap.servers": lab_target.bootstrap})
    producer.produce(name, b"v", key=b"k", partition=0, headers=[("trace", b"abc"), ("empty", None)])
    producer.produce(name, b"w", partition=0)
    producer.flush(10)
    try:
        plain = list(read_split(options(lab_target.bootstrap), [(name, 0, 0, 2)]))
        assert plain[0].schema.names == ["key", "value", "topic", "partition", "offset", "timestamp",
                                         "timestampType"]
        headed = list(read_split(options(lab_target.bootstrap, includeHeaders="true"), [(name, 0, 0, 2)]))
        rows = headed[0].to_pylist()
        assert rows[0]["headers"] == [{"key": "trace", "value": b"abc"}, {"key": "empty", "value": None}]
        assert rows[1]["headers"] == [] and rows[1]["key"] is None
        assert [r["timestampType"] for r in rows] == [0, 0]
    finally:
        admin.delete_topics([name])


def test_a_subscription_to_no_topic_yet_starts_empty(lab_target: Target) -> None:
    planner = Planner(ReaderOptions.parse({"kafka.bootstrap.servers": lab_target.bootstrap,
                                           "subscribe": unique("not-yet")}))
    try:
        assert planner.initial_offsets() == {}
        assert planner.plan_end({}, None) == {}
    finally:
        planner.close()


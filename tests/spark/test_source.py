"""The `lab-kafka` reader end to end: a real local SparkSession reading the embedded broker with confluent-kafka.

The sink in these tests is idempotent (a dict keyed by topic, partition and offset), as a sink must be for Spark's
exactly-once: a batch that is replayed after a restart writes the same keys again. Separately each test counts every
write, so a record read twice shows up as a duplicate even though the dict would hide it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from lab.broker.config import BrokerConfig
from lab.broker.embedded import EmbeddedBroker
from lab.clients.admin import Admin
from lab.clients.producer import produce_records
from lab.scenarios.runner import Target
from tests.helpers import free_port
from tests.spark.kafka_helpers import SHRINKING, shrink, unique, watermarks

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

class Sink:
    """foreachBatch target: every row's (topic, partition, offset), per batch id, plus a few columns to check.

    Idempotent per batch id, as Spark asks of a foreachBatch sink: a batch that Spark runs again after a restart
    (its offsets logged, its commit not yet written when the query stopped) replaces what that batch wrote before.
    A record in two different batches is a duplicate.
    """

    def __init__(self) -> None:
        self.by_id: dict[int, list[tuple[str, int, int]]] = {}
        self.tasks: list[int] = []
        self.rows: dict[tuple[str, int, int], dict[str, Any]] = {}
        self.lock = threading.Lock()

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        rows = frame.collect()
        with self.lock:
            self.tasks.append(frame.rdd.getNumPartitions())
            self.by_id[batch_id] = [(r.topic, r.partition, r.offset) for r in rows]
            for r in rows:
                self.rows[(r.topic, r.partition, r.offset)] = r.asDict()

    @property
    def batches(self) -> list[list[tuple[str, int, int]]]:
        return [self.by_id[batch_id] for batch_id in sorted(self.by_id)]

    @property
    def writes(self) -> Counter[tuple[str, int, int]]:
        return Counter(key for batch in self.by_id.values() for key in batch)

    def wait_for(self, count: int, query: StreamingQuery, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while len(self.rows) < count:
            if query.exception() is not None:
                raise AssertionError(f"the query failed: {query.exception()}")
            assert time.monotonic() < deadline, f"only {len(self.rows)} of {count} records arrived in {timeout_s} s"
            time.sleep(0.2)


def reader(spark: SparkSession, bootstrap: str, topic: str, **options: Any) -> DataFrame:
    stream = (spark.readStream.format("lab-kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest"))
    for name, value in options.items():
        stream = stream.option(name.replace("__", "."), str(value))
    return stream.load()


def run_available_now(frame: DataFrame, sink: Sink, checkpoint: Path) -> None:
    query = frame.writeStream.foreachBatch(sink).trigger(availableNow=True) \
        .option("checkpointLocation", str(checkpoint)).start()
    query.awaitTermination(120)
    assert query.exception() is None, query.exception()


def expected_keys(topic: str, ends: dict[int, int], starts: dict[int, int] | None = None) -> set[tuple[str, int, int]]:
    return {(topic, p, o) for p, end in ends.items() for o in range((starts or {}).get(p, 0), end)}


@pytest.fixture
def topic(lab_target: Target) -> Iterator[Callable[..., str]]:
    admin = Admin(lab_target.bootstrap)
    made: list[str] = []

    def make(partitions: int = 3, config: dict[str, str] | None = None) -> str:
        name = unique("spark")
        admin.create_topic(name, partitions, config)
        made.append(name)
        return name

    yield make
    admin.delete_topics(made)
    admin.close()


def test_available_now_reads_every_record_once_within_the_limit(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    name = topic(3)
    written = produce_records(lab_target.bootstrap, name, 300, key_prefix="k")
    ends = Counter(w.partition for w in written)
    sink = Sink()
    run_available_now(reader(spark, lab_target.bootstrap, name, maxOffsetsPerTrigger=100), sink, tmp_path / "ck")
    assert set(sink.rows) == expected_keys(name, dict(ends))
    assert max(sink.writes.values()) == 1, "a record was read twice"
    assert all(len(batch) <= 100 for batch in sink.batches), [len(b) for b in sink.batches]
    assert len(sink.batches) >= 3
    first = sink.rows[(name, written[0].partition, written[0].offset)]
    assert first["key"] == written[0].key and first["value"] == b"v"
    assert first["timestamp"] is not None and first["timestampType"] == 0  # CreateTime, as Spark numbers it


def test_available_now_takes_exactly_the_batches_sparks_suite_expects(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    # KafkaMicroBatchSourceSuite "Trigger.AvailableNow": 15 records in one of 5 partitions, maxOffsetsPerTrigger 5
    name = topic(5)
    produce_records(lab_target.bootstrap, name, 15, partition=0)
    sink = Sink()
    run_available_now(reader(spark, lab_target.bootstrap, name, maxOffsetsPerTrigger=5), sink, tmp_path / "ck")
    assert [len(b) for b in sink.batches] == [5, 5, 5]


def test_restart_from_the_checkpoint_loses_and_duplicates_nothing(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    name = topic(2)
    # more than the first run can read before it is stopped, even on a loaded machine
    produce_records(lab_target.bootstrap, name, 400, key_prefix="k")
    sink = Sink()
    frame = reader(spark, lab_target.bootstrap, name, maxOffsetsPerTrigger=40)
    query = frame.writeStream.foreachBatch(sink).trigger(processingTime="200 milliseconds") \
        .option("checkpointLocation", str(tmp_path / "ck")).start()
    try:
        sink.wait_for(80, query)
    finally:
        query.stop()
    stopped_at = len(sink.rows)
    assert stopped_at < 400, "the query read everything before it was stopped; the restart proves nothing"
    # a batch that was planned (in the offset log) but not committed when the query stopped is run again first, as
    # planned, under its own id; the batches after the last logged one are planned afresh
    last_logged = max(int(p.name) for p in (tmp_path / "ck" / "offsets").iterdir() if p.name.isdigit())
    produce_records(lab_target.bootstrap, name, 100, key_prefix="more")
    # the restarted query has backpressure on: a fresh estimator, so its first new batch is held to the initial rate
    # (20 records a second over a one-second interval, shared by lag between the two partitions, each share truncated)
    restarted = reader(spark, lab_target.bootstrap, name, maxOffsetsPerTrigger=40, backpressure__enabled="true",
                       backpressure__initialRate=20, backpressure__batchIntervalMs=1000)
    run_available_now(restarted, sink, tmp_path / "ck")
    first_new = sink.by_id[last_logged + 1]
    assert 18 <= len(first_new) <= 20, (last_logged, {i: len(b) for i, b in sorted(sink.by_id.items())})
    end = ends(lab_target.bootstrap, name, 2)
    assert sum(end.values()) == 500
    assert set(sink.rows) == expected_keys(name, end)
    assert max(sink.writes.values()) == 1, "a record was delivered in two batches across the restart"


def ends(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    return {p: watermarks(bootstrap, topic, p)[1] for p in range(partitions)}


def test_backpressure_starts_at_the_initial_rate_then_follows_the_estimator(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    name = topic(2)
    for partition in (0, 1):
        produce_records(lab_target.bootstrap, name, 1500, partition=partition)
    sink = Sink()
    # initialRate 100/s over a 500 ms interval: the first batch takes 50 records (25 a partition, lag being equal)
    report = tmp_path / "plans.json"
    frame = reader(spark, lab_target.bootstrap, name, backpressure__enabled="true", backpressure__initialRate=100,
                   backpressure__batchIntervalMs=500, backpressure__pid__minRate=10,
                   backpressure__reportFile=report)
    query = frame.writeStream.foreachBatch(sink).trigger(processingTime="500 milliseconds") \
        .option("checkpointLocation", str(tmp_path / "ck")).start()
    try:
        deadline = time.monotonic() + 90
        while not any(len(b) > 50 for b in sink.batches):
            assert query.exception() is None, query.exception()
            sizes = [len(b) for b in sink.batches]
            assert time.monotonic() < deadline, f"the rate never left the initial rate: {sizes}"
            time.sleep(0.2)
    finally:
        query.stop()
    assert len(sink.batches[0]) == 50
    assert max(sink.writes.values()) == 1
    # every batch, not only the first, keeps to the rate it was planned with: per partition its lag share of
    # rate x 0.5 s, truncated, and at least one record (minRatePerPartition)
    plans = json.loads(report.read_text())["batches"]
    assert all(p["rate"] is not None and p["records"] <= p["rate"] * 0.5 + 2 for p in plans), plans
    planned_sizes = Counter(p["records"] for p in plans if p["records"])
    assert not Counter(len(b) for b in sink.batches) - planned_sizes, (plans, [len(b) for b in sink.batches])
    assert len({round(p["rate"]) for p in plans}) > 1, "the estimator never changed the rate"


def test_balanced_splits_make_tasks_of_equal_bytes(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    big, small = topic(1), topic(1)
    produce_records(lab_target.bootstrap, big, 40, value=b"x" * 10_000)       # 400 KB in 40 records
    produce_records(lab_target.bootstrap, small, 4000, value=b"y" * 100)      # 400 KB in 4000 records
    sizes: list[list[int]] = []

    def per_task_bytes(frame: DataFrame, batch_id: int) -> None:
        sizes.append(frame.rdd.mapPartitions(lambda rows: [sum(len(r.key) + len(r.value) for r in rows)]).collect())

    frame = (spark.readStream.format("lab-kafka").option("kafka.bootstrap.servers", lab_target.bootstrap)
             .option("subscribe", f"{big},{small}").option("startingOffsets", "earliest")
             .option("splits", "balanced").option("numSplits", 4).load())
    query = frame.writeStream.foreachBatch(per_task_bytes).trigger(availableNow=True) \
        .option("checkpointLocation", str(tmp_path / "ck")).start()
    query.awaitTermination(120)
    assert query.exception() is None, query.exception()
    tasks = sizes[0]
    assert len(tasks) == 4
    # keys are "<topic>-<n>": the reader weighs them too, as it weighs whole records
    total = sum(len(f"{big}-{n}") + 10_000 for n in range(40)) + sum(len(f"{small}-{n}") + 100 for n in range(4000))
    assert sum(tasks) == total
    biggest_record = len(f"{big}-39") + 10_000
    assert max(tasks) <= total / 4 + biggest_record, tasks  # a quarter, plus at most one record


def test_min_partitions_splits_like_spark(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    name = topic(1)
    produce_records(lab_target.bootstrap, name, 100)
    sink = Sink()
    run_available_now(reader(spark, lab_target.bootstrap, name, minPartitions=4), sink, tmp_path / "ck")
    assert sink.tasks == [4]
    assert len(sink.rows) == 100


def test_commit_shows_progress_to_the_consumer_group(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    name = topic(2)
    produce_records(lab_target.bootstrap, name, 60)
    group = unique("lag-tools")
    sink = Sink()
    run_available_now(reader(spark, lab_target.bootstrap, name, kafka__group__id=group, maxOffsetsPerTrigger=20),
                      sink, tmp_path / "ck")
    consumer = Consumer({"bootstrap.servers": lab_target.bootstrap, "group.id": group})
    try:
        committed = consumer.committed([TopicPartition(name, p) for p in range(2)], timeout=10)
    finally:
        consumer.close()
    # Spark tells a source a batch is done when it plans the next one, so the group trails by one batch: after an
    # AvailableNow run it holds the end of the second-to-last batch.
    assert len(sink.batches) >= 3
    done = [key for batch in sink.batches[:-1] for key in batch]
    expected = {p: max(o for _, q, o in done if q == p) + 1 for p in range(2)}
    assert {tp.partition: tp.offset for tp in committed} == expected


def test_starting_timestamp_starts_at_the_first_record_at_or_after_it(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    name = topic(1)
    base = 1_790_000_000_000
    produce_records(lab_target.bootstrap, name, 10, partition=0, timestamps_ms=[base + 1000 * i for i in range(10)])
    sink = Sink()
    frame = (spark.readStream.format("lab-kafka").option("kafka.bootstrap.servers", lab_target.bootstrap)
             .option("subscribe", name).option("startingTimestamp", base + 6500).load())
    run_available_now(frame, sink, tmp_path / "ck")
    assert sorted(offset for _, _, offset in sink.rows) == [7, 8, 9]


def test_deleted_offsets_fail_the_query_unless_told_to_skip_them(
        spark: SparkSession, lab_target: Target, topic: Callable[..., str], tmp_path: Path) -> None:
    name = topic(1, SHRINKING)
    first = shrink(lab_target, name)
    start = f'{{"{name}": {{"0": 0}}}}'
    failing = reader(spark, lab_target.bootstrap, name, startingOffsets=start)
    query = failing.writeStream.foreachBatch(Sink()).trigger(availableNow=True) \
        .option("checkpointLocation", str(tmp_path / "ck1")).start()
    with pytest.raises(Exception, match=f"offsets 0..{first - 1} were deleted"):
        query.awaitTermination(120)
    sink = Sink()
    run_available_now(reader(spark, lab_target.bootstrap, name, startingOffsets=start, failOnDataLoss="false"),
                      sink, tmp_path / "ck2")
    assert set(sink.rows) == expected_keys(name, {0: 220}, {0: first})


def test_a_bad_option_stops_the_query_with_the_reason(spark: SparkSession, lab_target: Target) -> None:
    frame = spark.readStream.format("lab-kafka").option("kafka.bootstrap.servers", lab_target.bootstrap).load()
    query = frame.writeStream.format("noop").start()
    with pytest.raises(Exception, match="exactly one of subscribe, subscribePattern or assign"):
        query.awaitTermination(60)


def test_the_query_survives_a_broker_restart(spark: SparkSession, tmp_path: Path) -> None:
    port = free_port()
    config = BrokerConfig(data_dir=tmp_path / "broker", port=port)
    broker = EmbeddedBroker(config=config).start()
    bootstrap = broker.bootstrap_servers
    try:
        admin = Admin(bootstrap)
        admin.create_topic("survivor", 2)
        admin.close()
        produce_records(bootstrap, "survivor", 100)
        sink = Sink()
        frame = reader(spark, bootstrap, "survivor", maxOffsetsPerTrigger=30, fetchOffset__retryIntervalMs=500,
                       fetchOffset__numRetries=20)
        query = frame.writeStream.foreachBatch(sink).trigger(processingTime="300 milliseconds") \
            .option("checkpointLocation", str(tmp_path / "ck")).start()
        try:
            sink.wait_for(30, query)
            broker.stop()
            time.sleep(1.0)
            broker = EmbeddedBroker(config=config).start()
            produce_records(bootstrap, "survivor", 50)
            sink.wait_for(150, query, timeout_s=90)
        finally:
            query.stop()
        end = ends(bootstrap, "survivor", 2)
        assert sum(end.values()) == 150
        assert set(sink.rows) == expected_keys("survivor", end)
    finally:
        broker.stop()

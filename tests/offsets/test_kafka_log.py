"""KafkaPartitionLog on a real broker: watermarks, fetches, records, group commits, retention and compaction.

The first tests run on whichever backend `--backend` chose. Retention and compaction need the broker to run them
within the test: on the embedded broker a retention check and a cleaner pass can be made frequent through its
config (Kafka's `log.retention.check.interval.ms` and `log.cleaner.backoff.ms`); a shared docker or external
cluster keeps its own five-minute and fifteen-second defaults, so those tests start an embedded broker of their own.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from lab.broker.config import BrokerConfig
from lab.broker.embedded import EmbeddedBroker
from lab.clients.admin import Admin
from lab.clients.producer import produce_records
from lab.clients.waits import wait_until
from lab.offsets import EmitState, OffsetOutOfRangeError, PartitionManager
from lab.offsets.kafka_log import KafkaPartitionLog

HOUR_MS = 3_600_000


def fresh(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def topic(kafka_bootstrap: str) -> Iterator[str]:
    admin, name = Admin(kafka_bootstrap), fresh("kafka-log")
    admin.create_topic(name, 1)
    yield name
    admin.delete_topics([name])


def test_watermarks_and_fetches_follow_what_the_broker_acknowledged(kafka_bootstrap: str, topic: str) -> None:
    written = produce_records(kafka_bootstrap, topic, 12, partition=0, key_prefix="order")
    offsets = sorted(w.offset for w in written)
    with KafkaPartitionLog(kafka_bootstrap, topic, group_id=fresh("reader")) as log:
        assert (log.earliest_offset(), log.latest_offset()) == (offsets[0], offsets[-1] + 1)
        assert log.fetch(offsets[0], max_records=100) == offsets
        assert log.fetch(offsets[5], max_records=3) == offsets[5:8]
        assert log.fetch(offsets[2], max_records=2) == offsets[2:4]  # backwards, as a retry re-fetches
        assert log.fetch(offsets[-1] + 1, max_records=10) == []      # at the high watermark: nothing yet


def test_records_are_kept_by_offset_with_their_key_and_value(kafka_bootstrap: str, topic: str) -> None:
    written = produce_records(kafka_bootstrap, topic, 5, partition=0, key_prefix="order", value=b"paid")
    with KafkaPartitionLog(kafka_bootstrap, topic, group_id=fresh("reader")) as log:
        log.fetch(0, max_records=5)
        for w in written:
            record = log.record(w.offset)
            assert (record.offset, record.key, record.value, record.timestamp_ms) == (
                w.offset, w.key, b"paid", w.timestamp_ms)
        with pytest.raises(KeyError):
            log.record(99)


def test_an_offset_past_the_high_watermark_is_out_of_range(kafka_bootstrap: str, topic: str) -> None:
    produce_records(kafka_bootstrap, topic, 3, partition=0)
    with (KafkaPartitionLog(kafka_bootstrap, topic, group_id=fresh("reader")) as log,
          pytest.raises(OffsetOutOfRangeError, match=r"offset 4 is out of range \[0, 3\]")):
        log.fetch(4, max_records=1)


def test_a_commit_by_a_consumer_that_never_joined_is_stored_for_the_group(kafka_bootstrap: str, topic: str) -> None:
    produce_records(kafka_bootstrap, topic, 10, partition=0)
    group = fresh("spout")
    with KafkaPartitionLog(kafka_bootstrap, topic, group_id=group) as log:
        assert log.committed() is None
        log.commit(7, metadata="storm-kafka PartitionManager")
        assert log.committed() == 7
        log.commit(4)  # a commit may go backwards: Kafka stores what it is given
        assert log.committed() == 4
    # Another client of the same group sees it too: it is the group's offset, not the log object's.
    other = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": group})
    try:
        [stored] = other.committed([TopicPartition(topic, 0)], timeout=15)
    finally:
        other.close()
    assert stored.offset == 4
    assert not Admin(kafka_bootstrap).delete_groups([group])


# ---- retention and compaction: an embedded broker that runs them often ----------------------------------------------

@pytest.fixture
def housekeeping_broker(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    config = BrokerConfig(data_dir=tmp_path, port=0, retention_check_interval_ms=100, log_cleaner_backoff_ms=100)
    with EmbeddedBroker(config=config) as broker:
        yield broker


def produce_an_hour_old_segment_then_now(bootstrap: str, topic: str, old: int, new: int) -> None:
    """`old` records stamped an hour ago, then `new` stamped now. With segment.ms of a minute the first new record
    rolls a new segment (its timestamp is an hour past the segment's first one), so the old records sit in closed
    segments of their own, which retention and the cleaner may process."""
    hour_ago = int(time.time() * 1000) - HOUR_MS
    produce_records(bootstrap, topic, old, partition=0, key_prefix="old", timestamps_ms=[hour_ago] * old)
    produce_records(bootstrap, topic, new, partition=0, key_prefix="new")


def test_records_deleted_by_retention_are_out_of_range_and_the_old_spout_jumps_them(
        housekeeping_broker: EmbeddedBroker) -> None:
    bootstrap, topic = housekeeping_broker.bootstrap_servers, fresh("retention")
    Admin(bootstrap).create_topic(topic, 1, {"segment.ms": "60000", "retention.ms": "600000"})
    produce_an_hour_old_segment_then_now(bootstrap, topic, old=5, new=5)
    with KafkaPartitionLog(bootstrap, topic, group_id=fresh("reader")) as log:
        # retention deletes the closed segment whose newest record is an hour old: the log now starts at 5
        wait_until(lambda: log.earliest_offset() == 5, "retention to delete offsets 0-4", state=log.watermarks)
        assert log.latest_offset() == 10
        with pytest.raises(OffsetOutOfRangeError, match=r"offset 2 is out of range \[5, 10\]"):
            log.fetch(2, max_records=10)
        assert log.fetch(5, max_records=10) == [5, 6, 7, 8, 9]
        # storm-kafka's answer (STORM-643): the spout stored 2, which is gone; it jumps to the log start, counting
        # 2, 3 and 4 as lost, and carries on from 5
        manager, emitted = PartitionManager(log, committed_to=2), list[int]()
        assert manager.next(emitted.append) is EmitState.NO_EMITTED
        assert (manager.emitted_to_offset, manager.lost_message_count) == (5, 3)
        while manager.next(emitted.append) is not EmitState.EMITTED_END:
            pass
        assert emitted == [5, 6, 7, 8, 9]


def test_compacted_offsets_are_holes_a_fetch_steps_over(housekeeping_broker: EmbeddedBroker) -> None:
    bootstrap, topic = housekeeping_broker.bootstrap_servers, fresh("compacted")
    Admin(bootstrap).create_topic(topic, 1, {"cleanup.policy": "compact", "segment.ms": "60000",
                                             "min.cleanable.dirty.ratio": "0.01"})
    hour_ago = int(time.time() * 1000) - HOUR_MS
    # keys a, b, a, b at offsets 0-3 an hour ago; c at 4 now, in the active segment the cleaner leaves alone
    for key in ("a", "b", "a", "b"):
        produce_records(bootstrap, topic, 1, partition=0, key_prefix=key, timestamps_ms=[hour_ago])
    produce_records(bootstrap, topic, 1, partition=0, key_prefix="c")
    with KafkaPartitionLog(bootstrap, topic, group_id=fresh("reader")) as log:
        wait_until(lambda: log.fetch(0, max_records=10) == [2, 3, 4], "the cleaner to drop offsets 0 and 1",
                   state=lambda: log.fetch(0, max_records=10))
        assert (log.earliest_offset(), log.latest_offset()) == (0, 5)  # compaction moves neither end
        assert [log.record(o).key for o in (2, 3, 4)] == [b"a-0", b"b-0", b"c-0"]

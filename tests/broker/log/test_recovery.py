"""Restarting on the same directory: everything flushed comes back, torn tails are cut, lost indexes rebuilt."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.broker.log import (
    ConfigError,
    ConfigSource,
    InvalidTopicError,
    LogManager,
    SimpleRecord,
    TimestampAndOffset,
    TopicExistsError,
    UnknownTopicOrPartitionError,
    build_batch,
)
from lab.broker.log.metadata import read_partition_metadata, topic_id_from_str, topic_id_to_str
from tests.broker.log.helpers import consume_all, open_log

BATCHES = [build_batch([SimpleRecord(b"%d-%d" % (n, i), timestamp=1_000 + n) for i in range(3)]) for n in range(6)]


def fill(directory: Path, **configs: str | int) -> None:
    log = open_log(directory, **configs)
    for batch in BATCHES:
        log.append(batch)
    log.close()


def values(directory: Path, **configs: str | int) -> list[bytes | None]:
    return [record.value for record in consume_all(open_log(directory, **configs))]


ALL_VALUES = [b"%d-%d" % (n, i) for n in range(6) for i in range(3)]


def test_a_restart_reads_every_record_back(tmp_path: Path) -> None:
    fill(tmp_path, segment_bytes=250)
    log = open_log(tmp_path)
    assert len(log.segments) > 1
    assert (log.log_start_offset, log.log_end_offset) == (0, 18)
    assert [r.value for r in consume_all(log)] == ALL_VALUES
    assert log.offset_for_timestamp(1_004) == TimestampAndOffset(1_004, 12)


def test_a_batch_cut_in_half_by_a_crash_is_dropped_and_the_rest_kept(tmp_path: Path) -> None:
    fill(tmp_path)
    segment = tmp_path / "00000000000000000000.log"
    keep = sum(len(batch) for batch in BATCHES[:4])
    with segment.open("r+b") as file:
        file.truncate(keep + len(BATCHES[4]) // 2)
    assert values(tmp_path) == ALL_VALUES[:12]
    assert segment.stat().st_size == keep
    assert open_log(tmp_path).append(BATCHES[0]).first_offset == 12


def test_garbage_after_the_last_batch_is_cut_off(tmp_path: Path) -> None:
    fill(tmp_path)
    segment = tmp_path / "00000000000000000000.log"
    size = segment.stat().st_size
    with segment.open("ab") as file:
        file.write(b"\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x80garbage-garbage")
    assert values(tmp_path) == ALL_VALUES
    assert segment.stat().st_size == size


def test_a_batch_with_a_bad_crc_ends_the_valid_prefix(tmp_path: Path) -> None:
    fill(tmp_path)
    segment = tmp_path / "00000000000000000000.log"
    position = sum(len(batch) for batch in BATCHES[:5]) + 70
    data = bytearray(segment.read_bytes())
    data[position] ^= 0xFF
    segment.write_bytes(bytes(data))
    assert values(tmp_path) == ALL_VALUES[:15]


def test_a_deleted_index_of_an_older_segment_is_rebuilt(tmp_path: Path) -> None:
    fill(tmp_path, segment_bytes=250, index_interval_bytes=0)
    first = sorted(tmp_path.glob("*.index"))[0]
    original = first.read_bytes()
    assert original
    first.unlink()
    (tmp_path / first.name.replace(".index", ".timeindex")).write_bytes(b"\x01\x02\x03")  # corrupt too
    assert values(tmp_path, segment_bytes=250, index_interval_bytes=0) == ALL_VALUES
    assert first.read_bytes() == original


def test_partition_metadata_keeps_the_topic_id_in_kafkas_format(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    text = (tmp_path / "partition.metadata").read_text()
    assert text == f"version: 0\ntopic_id: {topic_id_to_str(log.topic_id)}\n"
    assert read_partition_metadata(tmp_path) == log.topic_id
    assert topic_id_from_str(topic_id_to_str(log.topic_id)) == log.topic_id
    assert log.topic_id.int != 0


def test_topics_ids_and_configs_survive_a_restart(tmp_path: Path) -> None:
    with LogManager(tmp_path, {"retention.ms": "3600000"}) as manager:
        orders = manager.create_topic("orders", 3, {"segment.bytes": "1024", "cleanup.policy": "compact,delete"})
        manager.create_topic("audit", 1)
        keyed = [SimpleRecord(b"v", key=b"%d" % number, timestamp=1_000) for number in range(3)]
        manager.get_log("orders", 2).append(build_batch(keyed))  # a compacted topic takes only keyed records
    with LogManager(tmp_path, {"retention.ms": "3600000"}) as manager:
        assert sorted(manager.topics()) == ["audit", "orders"]
        assert manager.topic("orders").topic_id == orders and manager.topic_name(orders) == "orders"
        assert manager.get_log("orders", 2).log_end_offset == 3
        assert manager.get_log("orders", 2).config.segment_bytes == 1024
        described = {entry.name: entry for entry in manager.describe_configs("orders")}
        assert (described["segment.bytes"].value, described["segment.bytes"].source) == (
            "1024", ConfigSource.TOPIC_CONFIG)
        assert (described["retention.ms"].value, described["retention.ms"].source) == (
            "3600000", ConfigSource.STATIC_BROKER_CONFIG)
        assert described["index.interval.bytes"].is_default and described["index.interval.bytes"].value == "4096"
        assert described["cleanup.policy"].value == "compact,delete"


def test_deleting_a_topic_removes_its_directories_and_frees_the_name(tmp_path: Path) -> None:
    with LogManager(tmp_path) as manager:
        first = manager.create_topic("orders", 2)
        manager.get_log("orders", 0).append(BATCHES[0])
        manager.delete_topic("orders")
        assert not (tmp_path / "orders-0").exists() and list(tmp_path.glob("*-delete")) == []
        with pytest.raises(UnknownTopicOrPartitionError):
            manager.get_log("orders", 0)
        second = manager.create_topic("orders", 1)
        assert second != first and manager.get_log("orders", 0).log_end_offset == 0
    with LogManager(tmp_path) as manager:
        assert manager.topic("orders").num_partitions == 1


def test_a_deletion_interrupted_by_a_crash_is_finished_at_start(tmp_path: Path) -> None:
    leftover = tmp_path / "orders-0.abc-delete"
    leftover.mkdir()
    (leftover / "00000000000000000000.log").write_bytes(b"old")
    LogManager(tmp_path).close()
    assert not leftover.exists()


@pytest.mark.parametrize(("name", "problem"), [
    ("", "empty"), (".", '"."'), ("..", '"."'), ("a" * 250, "249"), ("orders/eu", "'/'"), ("é", "illegal"),
])
def test_kafka_topic_name_rules_are_enforced(tmp_path: Path, name: str, problem: str) -> None:
    with LogManager(tmp_path) as manager, pytest.raises(InvalidTopicError, match=problem):
        manager.create_topic(name, 1)


def test_bad_configs_and_duplicate_topics_are_refused_with_what_is_allowed(tmp_path: Path) -> None:
    with LogManager(tmp_path) as manager:
        with pytest.raises(ConfigError, match=r"unknown topic config 'retention\.hours'.*retention\.ms"):
            manager.create_topic("t", 1, {"retention.hours": "1"})
        with pytest.raises(ConfigError, match=r"segment\.bytes must be an integer >= 14, got 'big'"):
            manager.create_topic("t", 1, {"segment.bytes": "big"})
        with pytest.raises(ConfigError, match="one of: CreateTime, LogAppendTime"):
            manager.create_topic("t", 1, {"message.timestamp.type": "Now"})
        with pytest.raises(ConfigError, match="between -1 and"):
            manager.create_topic("t", 1, {"retention.ms": "-5"})
        assert manager.topics() == {}
        manager.create_topic("t", 1)
        with pytest.raises(TopicExistsError):
            manager.create_topic("t", 1)


def test_a_second_manager_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    with LogManager(tmp_path), pytest.raises(RuntimeError, match="in use"):
        LogManager(tmp_path)

"""Retention by time and by size: whole segments go, the log start offset moves, the active data stays readable."""

from __future__ import annotations

from pathlib import Path

from lab.broker.events import Event, EventBus, LogStartOffsetMoved, SegmentDeleted
from lab.broker.log import LogConfig, PartitionLog, SimpleRecord, build_batch
from lab.broker.log.metadata import new_topic_id
from lab.timer import MockTime
from tests.broker.log.helpers import consume_all, open_log


def one_record(timestamp: int) -> bytes:
    return build_batch([SimpleRecord(b"x" * 50, timestamp=timestamp)])


def test_segments_whose_newest_record_is_older_than_retention_ms_are_deleted(tmp_path: Path) -> None:
    clock = MockTime(start_ms=8_500)
    log = open_log(tmp_path, clock, segment_bytes=300, retention_ms=1_000)
    for number in range(9):
        log.append(one_record(timestamp=1_000 * number))  # batches of about 120 bytes: 2 per segment
    bases = [segment.base_offset for segment in log.segments]
    assert bases == [0, 2, 4, 6, 8]
    # At 8_500, a segment whose newest record is before 7_500 is too old: [0,1] .. [6,7]; [8] (8_000) stays.
    assert log.delete_old_segments() == 4
    assert [segment.base_offset for segment in log.segments] == [8]
    assert log.log_start_offset == 8
    assert sorted(path.name for path in tmp_path.glob("*.log")) == ["00000000000000000008.log"]
    assert [record.offset for record in consume_all(log)] == [8]


def test_retention_ms_minus_one_keeps_everything(tmp_path: Path) -> None:
    clock = MockTime(start_ms=10**12)
    log = open_log(tmp_path, clock, segment_bytes=300, retention_ms=-1)
    for number in range(6):
        log.append(one_record(timestamp=number))
    assert log.delete_old_segments() == 0 and log.log_start_offset == 0


def test_when_every_segment_expires_the_log_rolls_and_keeps_its_offsets(tmp_path: Path) -> None:
    clock = MockTime(start_ms=100_000)
    log = open_log(tmp_path, clock, retention_ms=1_000)
    log.append(one_record(timestamp=1))
    log.append(one_record(timestamp=2))
    assert log.delete_old_segments() == 1
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (2, 2, 2)
    assert [segment.base_offset for segment in log.segments] == [2]
    assert log.append(one_record(timestamp=100_000)).first_offset == 2


def test_retention_bytes_deletes_the_oldest_segments_until_the_log_fits(tmp_path: Path) -> None:
    batch_size = len(one_record(0))
    log = open_log(tmp_path, segment_bytes=2 * batch_size, retention_bytes=3 * batch_size, retention_ms=-1)
    for number in range(10):
        log.append(one_record(timestamp=number))
    assert [segment.base_offset for segment in log.segments] == [0, 2, 4, 6, 8]
    # 10 batches, limit 3: deleting whole 2-batch segments while the rest stays >= the limit leaves 4 batches.
    assert log.delete_old_segments() == 3
    assert log.log_start_offset == 6 and log.size_in_bytes == 4 * batch_size


def test_deletions_are_published_with_their_reason(tmp_path: Path) -> None:
    bus, seen = EventBus(), list[Event]()
    bus.subscribe(seen.append)
    clock = MockTime(start_ms=50_000)
    config = LogConfig.from_overrides({"segment.bytes": str(len(one_record(0))), "retention.ms": "10"})
    log = PartitionLog.open(tmp_path, "t", 0, config, topic_id=new_topic_id(), time=clock, bus=bus)
    log.append(one_record(timestamp=1))
    log.append(one_record(timestamp=49_999))
    seen.clear()
    log.delete_old_segments()
    assert seen == [SegmentDeleted("t", 0, 0, len(one_record(0)), "retention.ms"),
                    LogStartOffsetMoved("t", 0, 0, 1, "retention.ms")]


def test_compact_only_topics_are_not_trimmed(tmp_path: Path) -> None:
    log = open_log(tmp_path, MockTime(start_ms=10**9), segment_bytes=300, retention_ms=1, cleanup_policy="compact")
    for number in range(5):
        log.append(build_batch([SimpleRecord(b"x" * 50, key=b"k", timestamp=number)]))
    assert log.delete_old_segments() == 0

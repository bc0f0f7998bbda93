"""Appending to and reading from a partition log: offsets, segment rolls, index lookups, limits, events."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lab.broker.events import Append, Event, EventBus, HighWatermarkMoved, LogRecovered, SegmentRolled
from lab.broker.log import (
    CorruptRecordError,
    InvalidRecordError,
    LogConfig,
    OffsetOutOfRangeError,
    PartitionLog,
    RecordTooLargeError,
    SimpleRecord,
    TimestampType,
    build_batch,
    check_batch,
)
from lab.broker.log.metadata import new_topic_id
from lab.timer import MockTime
from tests.broker.log.helpers import consume_all, open_log, records_in


def batch(*values: bytes, timestamp: int = 1_000) -> bytes:
    return build_batch([SimpleRecord(value, timestamp=timestamp) for value in values])


def test_offsets_are_assigned_by_the_log_not_the_producer(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    first = log.append(batch(b"a", b"b", b"c"))
    second = log.append(batch(b"d"))
    assert (first.first_offset, first.last_offset, first.record_count) == (0, 2, 3)
    assert (second.first_offset, second.last_offset) == (3, 3)
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (0, 4, 4)
    assert [(r.offset, r.value) for r in consume_all(log)] == [(0, b"a"), (1, b"b"), (2, b"c"), (3, b"d")]


def test_a_produce_request_with_several_batches_is_appended_whole(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    info = log.append(batch(b"a", b"b") + batch(b"c") + batch(b"d", b"e", b"f"))
    assert (info.first_offset, info.last_offset, info.batch_count, info.record_count) == (0, 5, 3, 6)
    assert [check_batch(log.read(offset, 1).bytes).base_offset for offset in range(6)] == [0, 0, 2, 3, 3, 3]


def test_a_bad_batch_anywhere_in_the_request_rejects_all_of_it(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    bad = bytearray(batch(b"x"))
    bad[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError):
        log.append(batch(b"ok") + bytes(bad))
    with pytest.raises(InvalidRecordError):
        log.append(b"")
    assert log.log_end_offset == 0 and log.active_segment.size == 0


def test_reading_an_offset_inside_a_batch_returns_that_whole_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(batch(b"a", b"b", b"c"))
    log.append(batch(b"d", b"e"))
    result = log.read(4, 1 << 20)
    assert [r.offset for r in records_in(result.bytes)] == [3, 4]
    assert [r.offset for r in records_in(log.read(1, 1 << 20).bytes)] == [0, 1, 2, 3, 4]


def test_max_bytes_stops_at_a_batch_boundary(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    sizes = [len(b) for b in (batch(b"a" * 10), batch(b"b" * 10), batch(b"c" * 10))]
    for letter in b"abc":
        log.append(batch(bytes([letter]) * 10))
    result = log.read(0, sizes[0] + sizes[1] + 5)
    assert result.records is not None and result.records.length == sizes[0] + sizes[1]
    assert [r.value for r in records_in(result.bytes)] == [b"a" * 10, b"b" * 10]


def test_a_first_batch_larger_than_max_bytes_still_comes_back_alone(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(batch(b"x" * 500))
    log.append(batch(b"y"))
    result = log.read(0, 10)
    assert [r.value for r in records_in(result.bytes)] == [b"x" * 500]
    assert log.read(0, 10, min_one_message=False).bytes == b""


def test_the_file_slice_names_the_bytes_for_sendfile(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(batch(b"a"))
    log.append(batch(b"b"))
    result = log.read(1, 1 << 20)
    assert result.records is not None
    assert result.records.path == tmp_path / "00000000000000000000.log"
    assert os.pread(result.records.fd, result.records.length, result.records.position) == result.bytes
    assert result.records.position == len(batch(b"a"))


def test_fetching_outside_the_log_is_out_of_range_and_at_the_end_is_empty(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(batch(b"a", b"b"))
    with pytest.raises(OffsetOutOfRangeError):
        log.read(3, 100)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 100)
    empty = log.read(2, 100)
    assert empty.records is None and empty.bytes == b"" and empty.high_watermark == 2


def test_reads_stop_at_max_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(batch(b"a"))
    log.append(batch(b"b"))
    assert [r.value for r in records_in(log.read(0, 1 << 20, max_offset=1).bytes)] == [b"a"]
    assert log.read(1, 1 << 20, max_offset=1).bytes == b""


def test_small_segments_roll_and_reads_cross_them(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_bytes=200)
    for number in range(10):
        log.append(batch(b"%03d" % number, b"x" * 40))
    names = sorted(path.name for path in tmp_path.glob("*.log"))
    assert len(names) > 1 and names[0] == "00000000000000000000.log"
    assert all(path.stat().st_size <= 200 for path in tmp_path.glob("*.log"))
    assert [int(name[:20]) for name in names] == [segment.base_offset for segment in log.segments]
    assert [r.value for r in consume_all(log, max_bytes=50)][::2] == [b"%03d" % n for n in range(10)]


def test_a_batch_larger_than_max_message_bytes_is_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path, max_message_bytes=100)
    with pytest.raises(RecordTooLargeError, match=r"max\.message\.bytes"):
        log.append(batch(b"x" * 200))


def test_index_lookups_land_on_the_batch_that_holds_the_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path, index_interval_bytes=100)
    for _ in range(50):
        log.append(batch(b"a" * 30, b"b" * 30))  # 2 records per batch
    index = log.active_segment.offset_index
    assert index.entries > 5
    for offset in (0, 1, 37, 64, 99):
        indexed_offset, position = index.lookup(offset)
        assert indexed_offset <= offset
        found = log.active_segment.translate_offset(offset)
        assert found is not None and found[1].base_offset == offset - offset % 2 and found[0] >= position


def test_segment_ms_rolls_by_record_time(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_ms=1_000)
    log.append(batch(b"a", timestamp=10_000))
    log.append(batch(b"b", timestamp=10_500))
    log.append(batch(b"c", timestamp=11_001))
    assert [segment.base_offset for segment in log.segments] == [0, 2]


def test_log_append_time_stamps_batches_with_the_broker_clock(tmp_path: Path) -> None:
    clock = MockTime(start_ms=77_000)
    log = open_log(tmp_path, clock, message_timestamp_type="LogAppendTime")
    info = log.append(batch(b"a", b"b", timestamp=5))
    assert info.log_append_time == 77_000
    stored = log.read(0, 1 << 20).bytes
    assert check_batch(stored).timestamp_type is TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in records_in(stored)] == [77_000, 77_000]


def test_opening_and_appending_publish_recovery_append_hw_and_roll_events(tmp_path: Path) -> None:
    bus, seen = EventBus(), list[Event]()
    bus.subscribe(seen.append)
    config = LogConfig.from_overrides({"segment.bytes": "150"})
    log = PartitionLog.open(tmp_path, "orders", 3, config, topic_id=new_topic_id(), bus=bus)
    one = batch(b"a" * 40)
    log.append(one)
    log.append(batch(b"b" * 40, b"c"))
    assert seen == [
        LogRecovered("orders", 3, 0, 0, 0),
        Append("orders", 3, 0, 0, 1, len(one), 1_000), HighWatermarkMoved("orders", 3, 0, 1),
        SegmentRolled("orders", 3, 0, 1, "segment.bytes"),
        Append("orders", 3, 1, 2, 2, len(batch(b"b" * 40, b"c")), 1_000), HighWatermarkMoved("orders", 3, 1, 3),
    ]


def test_flush_messages_fsyncs_after_that_many_records(tmp_path: Path) -> None:
    log = open_log(tmp_path, flush_messages=3)
    log.append(batch(b"a", b"b"))
    assert log.recovery_point == 0
    log.append(batch(b"c"))
    assert log.recovery_point == 3


def test_recovery_names_what_it_cut_in_a_warning_and_an_event(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """One flipped byte in the second of three batches: recovery keeps the first batch only, as Kafka does, and says
    so, with the segment, the byte position and the records the cut batches held (a silent cut of 6,446
    acknowledged records was reported)."""
    config = LogConfig.from_overrides({})
    topic_id = new_topic_id()
    log = PartitionLog.open(tmp_path, "orders", 0, config, topic_id=topic_id)
    first, second, third = batch(b"a"), batch(b"b", b"c"), batch(b"d", b"e", b"f")
    for one in (first, second, third):
        log.append(one)
    log.close()
    segment = tmp_path / f"{0:020d}.log"
    data = bytearray(segment.read_bytes())
    data[len(first) + len(second) - 2] ^= 0xFF                 # inside the second batch's records: its CRC fails
    segment.write_bytes(bytes(data))
    bus, seen = EventBus(), list[Event]()
    bus.subscribe(seen.append)
    with caplog.at_level("WARNING", logger="lab.broker.log.log"):
        reopened = PartitionLog.open(tmp_path, "orders", 0, config, topic_id=topic_id, bus=bus)
    assert reopened.log_end_offset == 1
    assert seen == [LogRecovered("orders", 0, 0, 1, len(second) + len(third), len(first), 5)]
    assert (f"orders-0: recovery cut {len(second) + len(third)} bytes from segment {0:020d} at byte {len(first)} "
            f"(5 records by their batch headers); the log now ends at offset 1") in caplog.text
    reopened.close()

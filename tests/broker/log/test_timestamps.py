"""ListOffsets by timestamp: the first record at or after a time, exact even inside compressed batches."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.broker.log import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    Compression,
    PartitionLog,
    SimpleRecord,
    TimestampAndOffset,
    build_batch,
)
from tests.broker.log.helpers import open_log


@pytest.fixture
def log(tmp_path: Path) -> PartitionLog:
    """Offsets 0-2 at 100, 200, 300; offsets 3-5 (one gzip batch) at 400, 450, 500; offset 6 at 900."""
    log = open_log(tmp_path, index_interval_bytes=0)
    log.append(build_batch([SimpleRecord(b"%d" % ts, timestamp=ts) for ts in (100, 200, 300)]))
    log.append(build_batch([SimpleRecord(b"%d" % ts, timestamp=ts) for ts in (400, 450, 500)],
                           compression=Compression.GZIP))
    log.append(build_batch([SimpleRecord(b"900", timestamp=900)]))
    return log


@pytest.mark.parametrize(("target", "expected"), [
    (0, TimestampAndOffset(100, 0)),        # before every record: the first one
    (100, TimestampAndOffset(100, 0)),      # exactly a record's time
    (150, TimestampAndOffset(200, 1)),      # between two records of one batch
    (301, TimestampAndOffset(400, 3)),      # between batches
    (420, TimestampAndOffset(450, 4)),      # inside the compressed batch
    (500, TimestampAndOffset(500, 5)),
    (501, TimestampAndOffset(900, 6)),
    (900, TimestampAndOffset(900, 6)),
])
def test_the_first_record_at_or_after_the_timestamp_is_found(log: PartitionLog, target: int,
                                                             expected: TimestampAndOffset) -> None:
    assert log.offset_for_timestamp(target) == expected


def test_a_timestamp_after_every_record_finds_nothing(log: PartitionLog) -> None:
    assert log.offset_for_timestamp(901) is None


def test_earliest_latest_and_max_timestamp(log: PartitionLog) -> None:
    assert log.offset_for_timestamp(EARLIEST_TIMESTAMP) == TimestampAndOffset(-1, 0)
    assert log.offset_for_timestamp(LATEST_TIMESTAMP) == TimestampAndOffset(-1, 7)
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == TimestampAndOffset(900, 6)


def test_the_max_timestamp_may_sit_inside_a_batch_and_before_newer_offsets(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(build_batch([SimpleRecord(b"a", timestamp=5), SimpleRecord(b"b", timestamp=50),
                            SimpleRecord(b"c", timestamp=7)], compression=Compression.LZ4))
    log.append(build_batch([SimpleRecord(b"d", timestamp=20)]))
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == TimestampAndOffset(50, 1)
    assert log.offset_for_timestamp(8) == TimestampAndOffset(50, 1)


def test_lookups_work_across_segments_with_the_time_index(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_bytes=300, index_interval_bytes=0)
    for number in range(40):
        log.append(build_batch([SimpleRecord(b"v", timestamp=1_000 + 10 * number)]))
    assert len(log.segments) > 3
    assert log.offset_for_timestamp(1_155) == TimestampAndOffset(1_160, 16)
    assert log.offset_for_timestamp(1_390) == TimestampAndOffset(1_390, 39)


def test_an_empty_log_has_no_max_timestamp(tmp_path: Path) -> None:
    assert open_log(tmp_path).offset_for_timestamp(MAX_TIMESTAMP) is None

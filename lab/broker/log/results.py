"""What the partition log hands back: append and read results, timestamp lookups, and the clock it reads.

A Produce handler turns an `AppendInfo` into a partition response (base offset = `first_offset`,
`log_append_time`, `log_start_offset`); a Fetch handler sends `ReadResult.records` (whole batches,
or `None`) with the three offsets; a ListOffsets handler answers from a `TimestampAndOffset`, or with
offset -1 and timestamp -1 when the lookup found nothing. For example, appending batches of 3 and 2
records to an empty log returns `AppendInfo(first_offset=0, last_offset=4, record_count=5, ...)`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from lab.broker.log.segment import FileSlice

# ListOffsets' special timestamps (Kafka's ListOffsetsRequest)
LATEST_TIMESTAMP, EARLIEST_TIMESTAMP, MAX_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP = -1, -2, -3, -4


class WallTime:
    """Milliseconds since the epoch. Record timestamps are epoch times, so retention and LogAppendTime
    need this clock, not a monotonic one."""

    def milliseconds(self) -> int:
        return time.time_ns() // 1_000_000

    def sleep(self, ms: int) -> None:
        time.sleep(ms / 1000)


@dataclass(frozen=True, slots=True)
class AppendInfo:
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    record_count: int
    batch_count: int
    size: int
    log_append_time: int  # -1 unless message.timestamp.type=LogAppendTime (the Produce response field)
    log_start_offset: int


@dataclass(frozen=True, slots=True)
class ReadResult:
    """Whole batches (or none) plus the offsets a Fetch response reports."""

    records: FileSlice | None
    fetch_offset: int
    high_watermark: int
    log_start_offset: int
    log_end_offset: int

    @property
    def bytes(self) -> bytes:
        return self.records.bytes if self.records else b""


@dataclass(frozen=True, slots=True)
class TimestampAndOffset:
    """A ListOffsets answer (Kafka's `FileRecords.TimestampAndOffset`); timestamp -1 for earliest/latest."""

    timestamp: int
    offset: int

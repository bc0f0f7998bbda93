"""Shared helpers for the storage tests: records in, records out, without going through the code under test's
own bookkeeping."""

from __future__ import annotations

from pathlib import Path

from lab.broker.log import LogConfig, PartitionLog, decode_records, iter_batches
from lab.broker.log.metadata import new_topic_id
from lab.broker.log.records import Record
from lab.timer import MockTime


def open_log(directory: Path, clock: MockTime | None = None, **configs: str | int) -> PartitionLog:
    """A log for topic "t" partition 0 (reopened if it exists); config names use underscores: segment_bytes=200."""
    overrides = {name.replace("_", "."): str(value) for name, value in configs.items()}
    topic_id = None if (directory / "partition.metadata").exists() else new_topic_id()
    return PartitionLog.open(directory, "t", 0, LogConfig.from_overrides(overrides), topic_id=topic_id,
                             time=clock or MockTime(start_ms=1_000_000))


def records_in(data: bytes) -> list[Record]:
    return [record for position, header in iter_batches(data)
            for record in decode_records(data[position:position + header.size], header)]


def consume_all(log: PartitionLog, max_bytes: int = 1 << 20) -> list[Record]:
    """What a consumer sees reading from the log start to the high watermark, skipping records below its
    position the way real clients do."""
    position, seen = log.log_start_offset, []
    while position < log.high_watermark:
        chunk = log.read(position, max_bytes).bytes
        assert chunk, f"read at {position} returned nothing below the high watermark {log.high_watermark}"
        for record in records_in(chunk):
            if record.offset >= position:
                seen.append(record)
                position = record.offset + 1
    return seen

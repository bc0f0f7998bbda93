"""Helpers for the compaction tests: compacted logs, records written one key at a time, and two views of what is
left, what the segment files hold and what a consumer reads."""

from __future__ import annotations

from pathlib import Path

from lab.broker.log import (
    Compression,
    PartitionLog,
    SimpleRecord,
    build_batch,
    decode_records,
    iter_batches,
)
from lab.timer import MockTime
from tests.broker.log.helpers import open_log

Row = tuple[int, bytes | None, bytes | None, int]  # offset, key, value, timestamp


def compacted_log(directory: Path, clock: MockTime | None = None, **configs: str | int) -> PartitionLog:
    """A compacted log that is cleaned as soon as anything is dirty (min.cleanable.dirty.ratio=0), unless told."""
    settings: dict[str, str | int] = {"cleanup_policy": "compact", "min_cleanable_dirty_ratio": 0, **configs}
    return open_log(directory, clock, **settings)


def put(log: PartitionLog, key: bytes, value: bytes | None, timestamp: int = 1_000,
        compression: Compression = Compression.NONE) -> int:
    """Append one record; returns its offset."""
    return log.append(build_batch([SimpleRecord(value, key=key, timestamp=timestamp)],
                                  compression=compression)).first_offset


def write(log: PartitionLog, *pairs: tuple[bytes, bytes | None], per_segment: int = 2, timestamp: int = 1_000) -> None:
    """One record per batch, rolling whenever the log end offset is a multiple of `per_segment`."""
    for key, value in pairs:
        put(log, key, value, timestamp)
        if log.log_end_offset % per_segment == 0:
            log.roll()


def rows(log: PartitionLog) -> list[Row]:
    """Every record in the segment files, in file order."""
    return [(record.offset, record.key, record.value, record.timestamp)
            for segment in log.segments for position, header in segment.batches()
            for record in decode_records(segment.read_batch(position, header), header)]


def pairs(log: PartitionLog) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(offset, key, value) for offset, key, value, _ in rows(log)]


def consume(log: PartitionLog, start: int | None = None, max_bytes: int = 1 << 20) -> list[Row]:
    """What a consumer reads from `start` to the high watermark. Like Kafka's consumers, it skips records below
    its position and moves past the end of every batch it gets, since a compacted batch can end in removed offsets."""
    position = log.log_start_offset if start is None else start
    seen: list[Row] = []
    while position < log.high_watermark:
        data = log.read(position, max_bytes).bytes
        if not data:  # everything from here to the high watermark was compacted away
            break
        for offset, header in iter_batches(data):
            seen += [(r.offset, r.key, r.value, r.timestamp)
                     for r in decode_records(data[offset:offset + header.size], header) if r.offset >= position]
            position = max(position, header.next_offset)
    return seen


def replay(records: list[Row]) -> dict[bytes | None, bytes]:
    """The table a compacted topic stands for: the last value of each key, tombstones deleting."""
    table: dict[bytes | None, bytes] = {}
    for _, key, value, _ in records:
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
    return table

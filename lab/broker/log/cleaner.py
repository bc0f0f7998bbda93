"""Log compaction, `cleanup.policy=compact`: keep the latest record of every key.

After Kafka's core/src/main/scala/kafka/log/LogCleaner.scala (how to clean) and LogCleanerManager.scala (when,
and how much).

A compacted topic is a table kept as a log. Each record is an upsert of its key, and a record with a null value
(a *tombstone*) is a delete. The cleaner rewrites the older part of the log so that only the latest record of
each key remains. The log then grows with the number of keys, not the number of writes. `__consumer_offsets`
is compacted this way: only a group's latest committed offset for each partition matters.

Two offsets split the log into three parts:

    | clean: compacted before | dirty: written since   | active segment: never touched |
    ^ log start               ^ first dirty offset     ^ first uncleanable offset      ^ LEO

The first dirty offset is the cleaner's checkpoint, kept in `cleaner-offset-checkpoint` in the partition
directory (Kafka keeps one such file per data directory). A log is cleaned when its dirty ratio, dirty bytes /
(clean + dirty bytes), is *above* `min.cleanable.dirty.ratio` (strictly, as in Kafka's `LogCleanerManager`),
or when a dirty segment is older than `max.compaction.lag.ms`. Segments newer than `min.compaction.lag.ms`
count as uncleanable. One cleaning:

1. builds the offset map: the offset of the latest record of each key in the dirty part (`build_offset_map`);
2. copies every segment before the first uncleanable offset, the clean part too, keeping a record only if
   the map knows no later offset for its key (record_filter.py says what happens to each batch). Keyless records
   are dropped. A tombstone stays for `delete.retention.ms` after the cleaning that first keeps it;
3. merges neighbours that fit in `segment.bytes` together (`group_segments_by_size`), swaps each merged segment
   in crash-safely (swap.py), then moves the checkpoint to the first uncleanable offset.

Offsets never change. A consumer asking for a removed offset gets the next record that survived. The log
start offset stays where it was.

A worked example with two records per segment, where `a=1` is a record and `b=∅` a tombstone:

    offset    0    1   |  2    3   |  4    5   |  6 (active)
              a=1  b=1 |  a=2  c=1 |  b=∅  a=3 |  c=2

Nothing has been cleaned yet, so offsets 0 to 5 are dirty and the ratio is 1.0. The map is a -> 5, b -> 4,
c -> 3. The active segment's c=2 is not in the map. Offsets 0, 1 and 2 go. c=1 at 3 stays, b=∅ at 4 stays
and its batch gets a delete horizon, and a=3 at 5 stays. The three segments merge into one, and the
checkpoint becomes 6:

    >>> import tempfile
    >>> from lab.broker.log import LogManager, SimpleRecord, build_batch, decode_records
    >>> from lab.timer import MockTime
    >>> clock = MockTime(start_ms=0)
    >>> manager = LogManager(tempfile.mkdtemp(), time=clock)
    >>> _ = manager.create_topic("table", 1, {"cleanup.policy": "compact", "delete.retention.ms": "1000"})
    >>> log = manager.get_log("table", 0)
    >>> def write(*pairs):
    ...     for key, value in pairs:
    ...         _ = log.append(build_batch([SimpleRecord(value, key=key, timestamp=clock.milliseconds())]))
    ...         if log.log_end_offset % 2 == 0:
    ...             _ = log.roll()
    >>> def contents():
    ...     return [(r.offset, r.key, r.value) for s in log.segments for p, h in s.batches()
    ...             for r in decode_records(s.read_batch(p, h), h)]
    >>> write((b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1"), (b"b", None), (b"a", b"3"), (b"c", b"2"))
    >>> result = log.clean()
    >>> result.first_dirty_offset, result.last_offset, result.dirty_ratio, result.records_removed
    (0, 5, 1.0, 3)
    >>> contents()
    [(3, b'c', b'1'), (4, b'b', None), (5, b'a', b'3'), (6, b'c', b'2')]
    >>> [segment.base_offset for segment in log.segments]
    [0, 6]

After `delete.retention.ms`, the next cleaning drops the tombstone, and c=1 too, since c=2 is now dirty:

    >>> clock.sleep(1_000)
    >>> write((b"d", b"1"), (b"d", b"2"), (b"e", b"1"))
    >>> log.clean().first_dirty_offset
    6
    >>> contents()
    [(5, b'a', b'3'), (6, b'c', b'2'), (8, b'd', b'2'), (9, b'e', b'1')]
    >>> manager.close()
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lab.broker.events import LogCleaned
from lab.broker.log.config import INT_MAX, LogConfig
from lab.broker.log.errors import InvalidRecordError
from lab.broker.log.metadata import atomic_write
from lab.broker.log.record_filter import filter_batch
from lab.broker.log.records import BatchHeader, decode_records, read_header
from lab.broker.log.segment import BatchInfo, LogSegment
from lab.broker.log.swap import CLEANED_SUFFIX, delete_cleaned

if TYPE_CHECKING:
    from lab.broker.log.log import PartitionLog

CHECKPOINT_FILE = "cleaner-offset-checkpoint"


@dataclass(frozen=True, slots=True)
class LogToClean:
    """Where the dirty part lies and how dirty it is (Kafka's `LogToClean` and `cleanableOffsets`)."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    needs_compaction_now: bool  # max.compaction.lag.ms has passed for a dirty segment

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.cleanable_bytes
        return self.cleanable_bytes / total if total else 0.0

    def should_clean(self, min_cleanable_ratio: float) -> bool:
        """`grabFilthiestCompactedLog`'s test: an overdue segment, or a ratio strictly above the minimum."""
        if self.clean_bytes + self.cleanable_bytes == 0:
            return False
        return (self.needs_compaction_now and self.cleanable_bytes > 0) or self.dirty_ratio > min_cleanable_ratio


def log_to_clean(segments: Sequence[LogSegment], checkpoint: int | None, config: LogConfig, log_start_offset: int,
                 log_end_offset: int, high_watermark: int, now_ms: int) -> LogToClean:
    """Find the cleanable range of a log whose last segment is the active one."""
    # A checkpoint outside the log (retention moved the start past it, or the log was cut) restarts from the start.
    first_dirty = checkpoint if checkpoint is not None and log_start_offset <= checkpoint <= log_end_offset \
        else log_start_offset
    bases = [segment.base_offset for segment in segments]
    ends = [*bases[1:], log_end_offset + 1]  # a segment holds offsets [its base, the next segment's base)
    active = segments[-1]
    dirty = [segment for segment, end in zip(segments[:-1], ends, strict=False) if end > first_dirty]
    uncleanable = min(high_watermark, active.base_offset)  # never the active segment, nothing above the HW
    if config.min_compaction_lag_ms > 0:
        too_new = [s.base_offset for s in dirty if s.max_timestamp_so_far > now_ms - config.min_compaction_lag_ms]
        uncleanable = min([uncleanable, *too_new[:1]])
    uncleanable = max(first_dirty, uncleanable)
    slot = bisect_right(bases, uncleanable) - 1  # down to the start of its segment (calculateCleanableBytes)
    first_uncleanable = bases[slot] if 0 <= slot < len(segments) - 1 else active.base_offset
    lower = min(first_dirty, first_uncleanable)
    first_batch_times = [s.rolling_based_timestamp for s in dirty
                         if s.rolling_based_timestamp is not None and s.rolling_based_timestamp > 0]
    overdue = bool(first_batch_times) and min(first_batch_times) < now_ms - config.max_compaction_lag_ms
    return LogToClean(
        first_dirty_offset=first_dirty, first_uncleanable_offset=first_uncleanable,
        clean_bytes=sum(segment.size for segment in segments if segment.base_offset < first_dirty),
        cleanable_bytes=sum(segment.size for segment, end in zip(segments, ends, strict=True)
                            if segment.base_offset < first_uncleanable and end > lower),
        needs_compaction_now=overdue)


def build_offset_map(segments: Sequence[LogSegment], start: int, end: int) -> dict[bytes, int]:
    """Key -> offset of its latest record in [start, end) (Kafka's `buildOffsetMap`; Kafka stores key hashes
    in a fixed buffer, `log.cleaner.dedupe.buffer.size`, and may clean less than the whole dirty part)."""
    latest: dict[bytes, int] = {}
    for segment in segments:
        if segment.base_offset >= end or segment.next_offset <= start:
            continue
        for position, header in segment.batches():
            if header.is_control or header.last_offset < start or header.base_offset >= end:
                continue
            for record in decode_records(segment.read_batch(position, header), header):
                if record.key is not None and start <= record.offset < end:
                    latest[record.key] = record.offset
    return latest


def group_segments_by_size(segments: Sequence[LogSegment], max_size: int, max_index_size: int,
                           first_uncleanable_offset: int) -> list[list[LogSegment]]:
    """Consecutive segments whose logs, offset indexes and time indexes each fit in one segment's limits, and
    whose offsets fit in 4-byte relative index entries (Kafka's `groupSegmentsBySize`)."""
    groups: list[list[LogSegment]] = []
    rest = list(segments)
    while rest:
        group = [rest.pop(0)]
        sizes = [group[0].size, _index_bytes(group[0])[0], _index_bytes(group[0])[1]]
        while rest:
            candidate = rest[0]
            offsets, times = _index_bytes(candidate)
            last_offset = rest[1].base_offset - 1 if len(rest) > 1 else first_uncleanable_offset - 1
            if (sizes[0] + candidate.size > max_size or sizes[1] + offsets > max_index_size
                    or sizes[2] + times > max_index_size
                    or (candidate.size > 0 and last_offset - group[0].base_offset > INT_MAX)):
                break
            group.append(rest.pop(0))
            sizes = [sizes[0] + candidate.size, sizes[1] + offsets, sizes[2] + times]
        groups.append(group)
    return groups


def _index_bytes(segment: LogSegment) -> tuple[int, int]:
    return (segment.offset_index.entries * segment.offset_index.entry_size,
            segment.time_index.entries * segment.time_index.entry_size)


def clean_log(log: PartitionLog, now_ms: int) -> LogCleaned | None:
    """One cleaning of `log` if it is dirty enough (see the module's docstring); None otherwise."""
    segments = log.segments
    todo = log_to_clean(segments, read_checkpoint(log.directory), log.config, log.log_start_offset,
                        log.log_end_offset, log.high_watermark, now_ms)
    if not todo.should_clean(log.config.min_cleanable_dirty_ratio):
        return None
    end = todo.first_uncleanable_offset
    latest = build_offset_map(segments, todo.first_dirty_offset, end)
    cleanable = [segment for segment in segments if segment.base_offset < end]
    bytes_before = sum(segment.size for segment in cleanable)
    read = kept = 0
    for group in group_segments_by_size(cleanable, log.config.segment_bytes, log.config.segment_index_bytes, end):
        group_read, group_kept = _clean_group(log, group, latest, now_ms)
        read, kept = read + group_read, kept + group_kept
    write_checkpoint(log.directory, log.topic, log.partition, end)
    bytes_after = sum(segment.size for segment in log.segments if segment.base_offset < end)
    return LogCleaned(log.topic, log.partition, cleanable[0].base_offset, end - 1, todo.first_dirty_offset,
                      todo.dirty_ratio, bytes_before, bytes_after, kept, read - kept)


def _clean_group(log: PartitionLog, group: Sequence[LogSegment], latest: dict[bytes, int],
                 now_ms: int) -> tuple[int, int]:
    """Copy what survives of `group` into one `.cleaned` segment and swap it in (Kafka's `cleanSegments`)."""
    base = group[0].base_offset
    delete_cleaned(log.directory, base)  # leftovers of a cleaning that failed earlier
    cleaned = LogSegment(log.directory, base, index_interval_bytes=log.config.index_interval_bytes,
                         max_index_size=log.config.segment_index_bytes, created_ms=now_ms, file_suffix=CLEANED_SUFFIX)
    read = kept = 0
    try:
        for segment in group:
            data, batches = bytearray(), list[BatchInfo]()
            for position, header in segment.batches():
                filtered = filter_batch(segment.read_batch(position, header), latest, now_ms,
                                        log.config.delete_retention_ms, header)
                read, kept = read + filtered.records_read, kept + filtered.records_kept
                if filtered.data:
                    new = read_header(filtered.data)
                    batches.append((len(data), new.size, new.last_offset, new.max_timestamp))
                    data += filtered.data
            if data:
                cleaned.append(data, batches)
        cleaned.on_become_inactive()
        cleaned.flush()
    except BaseException:
        cleaned.close()
        delete_cleaned(log.directory, base)
        raise
    cleaned.close()
    log.replace_segments(base, group)
    return read, kept


def require_keys(batch: bytes | bytearray | memoryview, header: BatchHeader, position: int) -> None:
    """A compacted topic refuses keyless records: INVALID_RECORD (Kafka's `LogValidator.validateKey`)."""
    for number, record in enumerate(decode_records(batch, header)):
        if record.key is None:
            raise InvalidRecordError(f"a compacted topic cannot accept a record without a key (record {number} "
                                     f"of the batch at position {position})")


def read_checkpoint(directory: Path) -> int | None:
    """The first dirty offset saved by the last cleaning; None if there is none (or it cannot be read: the next
    cleaning then starts from the log start, which is safe, only slower)."""
    try:
        lines = (directory / CHECKPOINT_FILE).read_text("ascii").splitlines()
        if lines[:2] == ["0", "1"] and len(lines) == 3:
            return int(lines[2].rsplit(" ", 1)[1])
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        pass
    return None


def write_checkpoint(directory: Path, topic: str, partition: int, offset: int) -> None:
    """Kafka's `OffsetCheckpointFile` text: a version line, an entry count, then "topic partition offset"."""
    atomic_write(directory / CHECKPOINT_FILE, f"0\n1\n{topic} {partition} {offset}\n".encode("ascii"))

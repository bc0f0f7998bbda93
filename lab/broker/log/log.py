"""The log of one partition: an ordered list of segments, three offsets, appends, reads and retention.

Kafka splits this between `UnifiedLog` and `LocalLog`; here it is one class. The three offsets:

    log start offset   first offset a consumer may read; retention moves it forward
    high watermark     first offset not yet safe to read: reads stop here (with one replica it is the LEO)
    log end offset     offset the next appended record will get (LEO)

A worked example. An empty log receives a produce request holding two batches, of 3 and 2 records.
The log checks each batch (header and CRC), writes base offsets 0 and 3 into their headers, appends
both to the active segment in one write, and moves LEO and HW from 0 to 5. A fetch at offset 4 finds
the batch holding 4 (the one based at 3) and returns it whole: the consumer skips offset 3 itself.
With `segment.bytes=100` the second produce rolls a new segment named after offset 5; once the
newest record of the first segment is older than `retention.ms`, retention deletes that segment and
the log start offset becomes 5. With `cleanup.policy=compact`, `clean()` compacts instead (cleaner.py).

Not thread-safe: the broker calls it from one thread (its event loop).
"""

from __future__ import annotations

import logging
import uuid
from bisect import bisect_right
from collections.abc import Callable, Sequence
from pathlib import Path

from lab.broker.events import (
    Append,
    Event,
    EventBus,
    HighWatermarkMoved,
    LogCleaned,
    LogRecovered,
    LogStartOffsetMoved,
    SegmentDeleted,
    SegmentRolled,
)
from lab.broker.log.cleaner import clean_log, require_keys
from lab.broker.log.config import INT_MAX, LogConfig
from lab.broker.log.errors import InvalidRecordError, OffsetOutOfRangeError, RecordTooLargeError
from lab.broker.log.metadata import fsync_path, read_partition_metadata, write_partition_metadata
from lab.broker.log.records import NO_TIMESTAMP, decode_records, iter_batches, set_base_offset, set_log_append_time
from lab.broker.log.results import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    AppendInfo,
    ReadResult,
    TimestampAndOffset,
    WallTime,
)
from lab.broker.log.retention import beyond_size, deletable_segments, older_than
from lab.broker.log.segment import (
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    BatchInfo,
    FileSlice,
    LogSegment,
)
from lab.broker.log.swap import complete_interrupted_swaps, swap_in
from lab.timer.time import Time

logger = logging.getLogger(__name__)

class PartitionLog:
    def __init__(self, directory: Path, topic: str, partition: int, topic_id: uuid.UUID, config: LogConfig,
                 clock: Time, bus: EventBus | None) -> None:
        self.directory, self.topic, self.partition, self.topic_id = directory, topic, partition, topic_id
        self.config, self._clock, self._bus = config, clock, bus
        self._segments: list[LogSegment] = []
        self._base_offsets: list[int] = []
        self._log_start_offset = self._log_end_offset = self._high_watermark = 0
        self._unflushed_messages = 0
        self._last_flush_ms = clock.milliseconds()
        self._dirty: dict[int, LogSegment] = {}
        self._directory_changed = True  # a file was created here since the last directory fsync
        self.recovery_point = 0  # everything below this offset has been fsynced

    @classmethod
    def open(cls, directory: Path, topic: str, partition: int, config: LogConfig, *,
             topic_id: uuid.UUID | None = None, time: Time | None = None, bus: EventBus | None = None
             ) -> PartitionLog:
        """Open (creating if needed) the log in `directory`: load segments, recover the last one."""
        directory.mkdir(parents=True, exist_ok=True)
        stored = read_partition_metadata(directory)
        if stored is None:
            if topic_id is None:
                raise ValueError(f"{directory} has no partition.metadata and no topic id was given")
            write_partition_metadata(directory, topic_id)
        elif topic_id is not None and stored != topic_id:
            raise ValueError(f"{directory} belongs to topic id {stored}, not {topic_id}")
        log = cls(directory, topic, partition, stored or topic_id or uuid.UUID(int=0), config,
                  time or WallTime(), bus)
        log._load()
        return log

    def _load(self) -> None:
        # Kafka's LogLoader: drop leftovers of interrupted deletions, load every segment, recover the
        # last one (the only one a crash can have left half-written), and derive the offsets.
        for leftover in self.directory.glob(f"*{DELETED_SUFFIX}"):
            leftover.unlink(missing_ok=True)
        complete_interrupted_swaps(self.directory)  # a cleaning cut short by a crash (swap.py)
        bases = sorted(int(path.stem) for path in self.directory.glob(f"*{LOG_SUFFIX}") if path.stem.isdigit())
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            for orphan in self.directory.glob(f"*{suffix}"):
                if not orphan.stem.isdigit() or int(orphan.stem) not in bases:
                    orphan.unlink()
        now = self._clock.milliseconds()
        truncated = 0
        for number, base in enumerate(bases or [0]):
            segment, truncated = LogSegment.open(
                self.directory, base, index_interval_bytes=self.config.index_interval_bytes,
                max_index_size=self.config.segment_index_bytes, now_ms=now, recover=number == len(bases) - 1)
            self._segments.append(segment)
            self._base_offsets.append(base)
        self._log_start_offset = self._segments[0].base_offset
        self._log_end_offset = self._high_watermark = self.recovery_point = self.active_segment.next_offset
        active = self.active_segment
        position, dropped = active.dropped_at, active.dropped_records
        if truncated:
            # Kafka's LogSegment.recover logs what it truncates; a silent cut of acknowledged records is worse
            logger.warning("%s-%d: recovery cut %d bytes from segment %020d at byte %d (%d records by their batch "
                           "headers); the log now ends at offset %d", self.topic, self.partition, truncated,
                           active.base_offset, position, dropped, self._log_end_offset)
        self._publish(lambda: LogRecovered(self.topic, self.partition, active.base_offset, self._log_end_offset,
                                           truncated, position, dropped))

    # -- offsets ---------------------------------------------------------------------------------------
    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        return tuple(self._segments)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[-1]

    @property
    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    # -- append ----------------------------------------------------------------------------------------
    def append(self, records: bytes | bytearray | memoryview) -> AppendInfo:
        """Validate, assign offsets to and write one or more back-to-back batches (a Produce's `records`).

        All or nothing: any bad batch raises before a byte is written. The work per batch is the header,
        the CRC (in C) and an 8-byte offset rewrite; records are never parsed.
        """
        data = bytearray(records)
        if len(data) > self.config.segment_bytes:
            raise RecordTooLargeError(f"{len(data)} bytes of batches exceed segment.bytes "
                                      f"({self.config.segment_bytes})")
        now = self._clock.milliseconds()
        append_time = now if self.config.log_append_time else NO_TIMESTAMP
        batches: list[BatchInfo] = []
        offset, max_timestamp, offset_of_max, count = self._log_end_offset, NO_TIMESTAMP, -1, 0
        for position, header in iter_batches(data, from_client=True):
            if header.size > self.config.max_message_bytes:
                raise RecordTooLargeError(f"batch of {header.size} bytes at position {position} exceeds "
                                          f"max.message.bytes ({self.config.max_message_bytes})")
            if self.config.compacts:
                require_keys(memoryview(data)[position:position + header.size], header, position)
            set_base_offset(data, position, offset)
            last = offset + header.last_offset_delta
            batch_max = header.max_timestamp
            if append_time != NO_TIMESTAMP:
                batch_max = append_time
                set_log_append_time(data, position, header.size, append_time)
            if batch_max > max_timestamp:
                max_timestamp, offset_of_max = batch_max, last
            batches.append((position, header.size, last, batch_max))
            count += header.records_count
            offset = last + 1
        if not batches:
            raise InvalidRecordError("the produce request holds no record batches")
        self._maybe_roll(len(data), max_timestamp, offset - 1, now)
        first = self._log_end_offset
        self.active_segment.append(data, batches)
        self._dirty[self.active_segment.base_offset] = self.active_segment
        self._log_end_offset = offset
        self._publish(lambda: Append(self.topic, self.partition, first, offset - 1, count, len(data),
                                     max_timestamp))
        self._unflushed_messages += count
        if (self._unflushed_messages >= self.config.flush_messages
                or now - self._last_flush_ms >= self.config.flush_ms):
            self.flush()
        self._advance_high_watermark(self._log_end_offset)
        return AppendInfo(first, offset - 1, max_timestamp, offset_of_max, count, len(batches), len(data),
                          append_time, self._log_start_offset)

    def _advance_high_watermark(self, new: int) -> None:
        # With a single replica the ISR is just this log, so everything appended is replicated at once.
        old, self._high_watermark = self._high_watermark, new
        if new != old:
            self._publish(lambda: HighWatermarkMoved(self.topic, self.partition, old, new))

    def _maybe_roll(self, size: int, max_timestamp: int, max_offset: int, now: int) -> None:
        # The conditions of Kafka's LogSegment.shouldRoll, each named by the config that triggers it.
        segment = self.active_segment
        if segment.size == 0:
            return
        if segment.size > self.config.segment_bytes - size:
            self.roll("segment.bytes")
        elif segment.time_waited_for_roll(now, max_timestamp) > self.config.segment_ms:
            self.roll("segment.ms")
        elif segment.offset_index.is_full or segment.time_index.is_full:
            self.roll("segment.index.bytes")
        elif max_offset - segment.base_offset > INT_MAX:
            self.roll("relative offset overflow")

    def roll(self, reason: str = "requested") -> LogSegment:
        """Close the active segment to appends and start a new one at the log end offset."""
        old = self.active_segment
        if old.size == 0:
            return old
        old.on_become_inactive()
        segment = LogSegment(self.directory, self._log_end_offset,
                             index_interval_bytes=self.config.index_interval_bytes,
                             max_index_size=self.config.segment_index_bytes, created_ms=self._clock.milliseconds())
        self._segments.append(segment)
        self._base_offsets.append(segment.base_offset)
        self._directory_changed = True
        self._publish(lambda: SegmentRolled(self.topic, self.partition, old.base_offset, segment.base_offset,
                                            reason))
        return segment

    # -- read ------------------------------------------------------------------------------------------
    def read(self, fetch_offset: int, max_bytes: int, *, max_offset: int | None = None,
             min_one_message: bool = True) -> ReadResult:
        """Whole batches from the one containing `fetch_offset`, ending before `max_offset` (default: HW).

        At most `max_bytes`, except that a first batch larger than that is returned alone so the consumer
        can make progress (KIP-74). Raises OffsetOutOfRangeError below the log start or above the LEO.
        """
        if not self._log_start_offset <= fetch_offset <= self._log_end_offset:
            raise OffsetOutOfRangeError(f"offset {fetch_offset} of {self.topic}-{self.partition} is outside "
                                        f"[{self._log_start_offset}, {self._log_end_offset}]")
        limit = self._high_watermark if max_offset is None else min(max_offset, self._log_end_offset)
        found: FileSlice | None = None
        slot = bisect_right(self._base_offsets, fetch_offset) - 1
        for segment in self._segments[max(slot, 0):]:
            if fetch_offset >= limit or segment.base_offset >= limit:
                break
            max_position = segment.size
            if limit < segment.next_offset:
                boundary = segment.translate_offset(limit)
                max_position = boundary[0] if boundary else segment.size
            found = segment.read(fetch_offset, max_bytes, max_position, min_one_message=min_one_message)
            if found is not None:
                break
        return ReadResult(found, fetch_offset, self._high_watermark, self._log_start_offset, self._log_end_offset)

    def offset_for_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """ListOffsets: the first record with timestamp >= `timestamp`, or one of the special timestamps
        (-1 latest = HW, -2 earliest = log start, -3 the record with the largest timestamp, -4 earliest
        local). None when no record qualifies (the handler answers offset -1, timestamp -1)."""
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return TimestampAndOffset(NO_TIMESTAMP, self._log_start_offset)
        if timestamp == LATEST_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, self._high_watermark)
        if timestamp == MAX_TIMESTAMP:
            return self.max_timestamp_offset()
        # Any other timestamp, a negative one included, is a search, as Kafka's UnifiedLog.fetchOffsetByTimestamp
        # treats every value but its special ones: a negative target finds the first record.
        # Kafka's UnifiedLog.fetchOffsetByTimestamp: the first segment whose newest record is new enough
        # must hold the answer (segments are in offset order and each covers everything before it).
        for segment in self._segments:
            if segment.max_timestamp_so_far >= timestamp:
                found = segment.find_offset_by_timestamp(timestamp, self._log_start_offset)
                if found is not None and found[0] < self._high_watermark:
                    return TimestampAndOffset(found[1], found[0])
        return None

    def max_timestamp_offset(self) -> TimestampAndOffset | None:
        """The first record carrying the largest timestamp in the log (ListOffsets -3, KIP-734)."""
        if self._log_end_offset == self._log_start_offset:
            return None
        segment = max(self._segments, key=lambda candidate: candidate.max_timestamp_so_far)
        target = segment.max_timestamp_so_far
        for position, header in segment.batches():
            if header.max_timestamp == target:
                for record in decode_records(segment.read_batch(position, header), header):
                    if record.timestamp == target:
                        return TimestampAndOffset(target, record.offset)
        return None

    # -- retention -------------------------------------------------------------------------------------
    def delete_old_segments(self) -> int:
        """Apply `retention.ms` then `retention.bytes`; returns how many segments were deleted."""
        if not self.config.deletes:
            return 0
        deleted = 0
        if self.config.retention_ms >= 0:
            deleted += self._delete_segments(
                older_than(self._clock.milliseconds(), self.config.retention_ms), "retention.ms")
        if self.config.retention_bytes >= 0:
            deleted += self._delete_segments(
                beyond_size(self.size_in_bytes, self.config.retention_bytes), "retention.bytes")
        return deleted

    def _delete_segments(self, predicate: Callable[[LogSegment], bool], reason: str) -> int:
        doomed = deletable_segments(self._segments, self._log_end_offset, self._high_watermark, predicate)
        if not doomed:
            return 0
        if len(doomed) == len(self._segments):  # keep one segment: roll first, as Kafka does
            self.roll(reason)
        for segment in doomed:
            self._segments.remove(segment)
            self._base_offsets.remove(segment.base_offset)
            self._dirty.pop(segment.base_offset, None)
            event = SegmentDeleted(self.topic, self.partition, segment.base_offset, segment.size, reason)
            segment.delete()
            if self._bus is not None:
                self._bus.publish(event)
        old, self._log_start_offset = self._log_start_offset, max(self._log_start_offset,
                                                                  self._segments[0].base_offset)
        if old != self._log_start_offset:
            self._publish(lambda: LogStartOffsetMoved(self.topic, self.partition, old, self._log_start_offset,
                                                      reason))
        return len(doomed)

    # -- compaction ------------------------------------------------------------------------------------
    def clean(self, now_ms: int | None = None) -> LogCleaned | None:
        """Compact the segments before the active one if `cleanup.policy` includes compact and the log is dirty
        enough (`min.cleanable.dirty.ratio`); what was done (also published), or None. See cleaner.py."""
        if not self.config.compacts:
            return None
        result = clean_log(self, self._clock.milliseconds() if now_ms is None else now_ms)
        if result is not None:
            self._publish(lambda: result)
        return result

    def replace_segments(self, base_offset: int, old: Sequence[LogSegment]) -> LogSegment:
        """Swap the cleaner's finished `.cleaned` segment in for the consecutive segments `old` (Kafka's
        `replaceSegments`): swap.py moves the files crash-safely, then the new segment takes their place here."""
        first = self._segments.index(old[0])
        swap_in(self.directory, base_offset, old)
        segment, _ = LogSegment.open(self.directory, base_offset, index_interval_bytes=self.config.index_interval_bytes,
                                     max_index_size=self.config.segment_index_bytes,
                                     now_ms=self._clock.milliseconds(), recover=False)
        self._segments[first:first + len(old)] = [segment]
        self._base_offsets[first:first + len(old)] = [base_offset]
        for replaced in old:
            self._dirty.pop(replaced.base_offset, None)
        return segment

    # -- durability and lifecycle ----------------------------------------------------------------------
    def flush(self) -> None:
        """Make every acknowledged batch durable (call before answering an acks=all produce).

        Only the log bytes must reach the disk: recovery rebuilds the active segment's indexes from them. So the
        active segment fsyncs its .log alone, a segment rolled since the last flush fsyncs its indexes too, and
        the directory is fsynced only when a file was created in it (Kafka's LogSegment.flush does all four).
        """
        active = self.active_segment
        for segment in self._dirty.values():
            if segment is active:
                segment.flush_log()
            else:
                segment.flush()
        if self._directory_changed:
            fsync_path(self.directory)
            self._directory_changed = False
        self._dirty.clear()
        self._unflushed_messages = 0
        self._last_flush_ms = self._clock.milliseconds()
        self.recovery_point = self._log_end_offset

    def update_config(self, config: LogConfig) -> None:
        """New limits apply from the next append or retention pass (index settings from the next segment)."""
        self.config = config

    def close(self) -> None:
        for segment in self._dirty.values():
            segment.flush()  # a clean shutdown leaves the indexes durable too: no rebuild on the next open
        self.flush()
        for segment in self._segments:
            segment.close()

    def abandon(self) -> None:
        """Close every segment without flushing: for a log about to be removed (a topic creation rolled back)."""
        for segment in self._segments:
            segment.abandon()

    def _publish(self, make: Callable[[], Event]) -> None:
        if self._bus is not None and self._bus.has_subscribers():
            self._bus.publish(make())

    def __repr__(self) -> str:
        return (f"PartitionLog({self.topic}-{self.partition}, start={self._log_start_offset}, "
                f"hw={self._high_watermark}, leo={self._log_end_offset}, segments={len(self._segments)})")


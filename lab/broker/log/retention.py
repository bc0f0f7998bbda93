"""Which segments retention may delete (Kafka's `UnifiedLog.deleteOldSegments` and `deletableSegments`).

Retention only ever removes a prefix of whole segments, oldest first, and stops at the first segment
that must stay. A segment may go only if every offset in it is below the high watermark, and the
active segment only if it is not empty (the log then rolls first so that one segment remains).

A worked example with `retention.bytes=250` and segments of 100, 100, 100 and 40 bytes (340 in all):
the excess is 90 bytes, less than the first segment, so nothing goes. With `retention.bytes=200`
the excess is 140: the first segment (100) goes, leaving 40 bytes of excess, less than the next
segment, so the log keeps 240 bytes. Retention by size never cuts the log below its limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lab.broker.log.segment import LogSegment

Predicate = Callable[[LogSegment], bool]


def older_than(now_ms: int, retention_ms: int) -> Predicate:
    """`retention.ms`: the segment's newest record is more than `retention_ms` old."""
    return lambda segment: now_ms - segment.max_timestamp_so_far > retention_ms


def beyond_size(log_size: int, retention_bytes: int) -> Predicate:
    """`retention.bytes`: deleting this segment still leaves the log at or above the limit."""
    excess = log_size - retention_bytes

    def over_size(segment: LogSegment) -> bool:
        nonlocal excess
        if excess - segment.size < 0:
            return False
        excess -= segment.size
        return True

    return over_size


def deletable_segments(segments: Sequence[LogSegment], log_end_offset: int, high_watermark: int,
                       predicate: Predicate) -> list[LogSegment]:
    """The longest prefix of `segments` that `predicate` accepts and the high watermark has passed."""
    doomed: list[LogSegment] = []
    for number, segment in enumerate(segments):
        is_last = number == len(segments) - 1
        upper = log_end_offset if is_last else segments[number + 1].base_offset
        if (is_last and segment.size == 0) or high_watermark < upper or not predicate(segment):
            break
        doomed.append(segment)
    return doomed

"""The one thing the old spout needs from Kafka: fetch records from an offset, and say where the log starts and ends.

`PartitionLog` is that interface; `InMemoryPartitionLog` is a deterministic partition for lessons and tests, whose
records are just their offsets. Retention (`delete_before`) moves the log start offset, so fetching a deleted offset
raises `OffsetOutOfRangeError`, as a real broker answers OFFSET_OUT_OF_RANGE; compaction (`compact`) leaves holes
that a fetch silently steps over.

    >>> log = InMemoryPartitionLog()
    >>> log.append(5)
    [0, 1, 2, 3, 4]
    >>> log.compact([1, 2])
    >>> log.fetch(0, max_records=10)
    [0, 3, 4]
    >>> log.delete_before(3)
    >>> log.earliest_offset(), log.latest_offset()
    (3, 5)
    >>> log.fetch(0, max_records=10)
    Traceback (most recent call last):
    ...
    lab.offsets.partition_log.OffsetOutOfRangeError: offset 0 is out of range [3, 5]
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from typing import Protocol

EARLIEST_TIME = -2
"""`kafka.api.OffsetRequest.EarliestTime()`: start from the log start offset."""
LATEST_TIME = -1
"""`kafka.api.OffsetRequest.LatestTime()`: start from the log end offset."""


class OffsetOutOfRangeError(Exception):
    """The fetch offset is below the log start offset or past the log end offset (storm-kafka's
    `TopicOffsetOutOfRangeException`)."""


class PartitionLog(Protocol):
    def earliest_offset(self) -> int:
        """The log start offset: the first offset still stored."""
        ...

    def latest_offset(self) -> int:
        """The log end offset: the offset the next appended record will get."""
        ...

    def fetch(self, offset: int, max_records: int) -> list[int]:
        """Up to `max_records` offsets present at or after `offset`; raises OffsetOutOfRangeError."""
        ...


class InMemoryPartitionLog:
    """A partition whose records are their own offsets."""

    def __init__(self) -> None:
        self._offsets: list[int] = []  # sorted offsets still present
        self._log_start_offset = 0
        self._log_end_offset = 0

    def append(self, count: int = 1) -> list[int]:
        """Produce `count` records; returns their offsets."""
        new = list(range(self._log_end_offset, self._log_end_offset + count))
        self._offsets.extend(new)
        self._log_end_offset += count
        return new

    def delete_before(self, offset: int) -> None:
        """Retention: delete every record below `offset` and move the log start offset there."""
        offset = min(offset, self._log_end_offset)
        del self._offsets[: bisect_left(self._offsets, offset)]
        self._log_start_offset = max(self._log_start_offset, offset)

    def compact(self, offsets: Iterable[int]) -> None:
        """Compaction: remove single records; the offsets of the others do not change."""
        gone = set(offsets)
        self._offsets = [offset for offset in self._offsets if offset not in gone]

    def earliest_offset(self) -> int:
        return self._log_start_offset

    def latest_offset(self) -> int:
        return self._log_end_offset

    def fetch(self, offset: int, max_records: int) -> list[int]:
        if not self._log_start_offset <= offset <= self._log_end_offset:
            raise OffsetOutOfRangeError(
                f"offset {offset} is out of range [{self._log_start_offset}, {self._log_end_offset}]"
            )
        start = bisect_left(self._offsets, offset)
        return self._offsets[start : start + max_records]

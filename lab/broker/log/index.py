"""The two sparse indexes beside each segment: offset -> file position, and timestamp -> offset.

Neither index has an entry per record. While appending, the segment adds an entry only after
`index.interval.bytes` more bytes have gone into the log, so a lookup is a binary search in the index
followed by a short scan of the log. Offsets are stored relative to the segment's base offset in 4
bytes, as Kafka does (`OffsetIndex.java`: 8 bytes per entry, `TimeIndex.java`: 12 bytes per entry).

A worked example, a segment with base offset 100 and batches of 10 records, one index entry every 2
batches (the entry names the last offset of the batch that starts at that position):

    offset index: (109 -> 0), (129 -> 8200), (149 -> 16400)       stored as relative 9, 29, 49
    time index:   (1000 -> 109), (1300 -> 129)                      max timestamp so far -> offset

To find offset 135: the largest indexed offset <= 135 is 129 at position 8200; scanning batch headers
from 8200 reaches the batch 130..139. To find the first record at or after time 1200: the largest
indexed timestamp <= 1200 is 1000 (offset 109), so every batch before 109's batch is older than 1200
and the scan starts there.

The entries live in compact arrays in memory; the files are written by `flush()` (appending only the
entries not written yet). A file whose length is not a whole number of entries, or whose entries go
backwards, fails `load()` with IndexCorruptError and the segment rebuilds it from its log.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_right
from pathlib import Path

from lab.broker.log.metadata import fsync_path
from lab.broker.log.records import NO_TIMESTAMP

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


class IndexCorruptError(Exception):
    """An index file that fails its sanity check; the caller rebuilds it from the log."""


class _Index:
    entry_size: int

    def __init__(self, path: Path, base_offset: int, max_index_size: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(1, max_index_size // self.entry_size)
        self._relative_offsets = array("i")
        self._persisted = 0  # entries already in the file
        self._rewrite = True  # the file must be rewritten from scratch (new, rebuilt or truncated)

    @property
    def entries(self) -> int:
        return len(self._relative_offsets)

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def _check_relative(self, offset: int) -> int:
        relative = offset - self.base_offset
        if not 0 <= relative <= 0x7FFF_FFFF:
            raise ValueError(f"offset {offset} cannot be stored relative to base offset {self.base_offset}")
        return relative

    def _encode(self, start: int) -> bytes:
        raise NotImplementedError

    def _truncate_entries(self, keep: int) -> None:
        del self._relative_offsets[keep:]

    def reset(self) -> None:
        """Forget every entry (before a rebuild)."""
        self._truncate_entries(0)
        self._persisted = 0
        self._rewrite = True

    def flush(self, *, fsync: bool = False) -> None:
        """Write the entries added since the last flush (or the whole file after a reset)."""
        if self._rewrite:
            self.path.write_bytes(self._encode(0))
        elif self._persisted < self.entries:
            with self.path.open("ab") as file:
                file.write(self._encode(self._persisted))
        else:
            if fsync and self.path.exists():
                fsync_path(self.path)
            return
        self._rewrite = False
        self._persisted = self.entries
        if fsync:
            fsync_path(self.path)

    def delete_file(self) -> None:
        self.path.unlink(missing_ok=True)


class OffsetIndex(_Index):
    """Sparse map from offset to the file position of the batch holding it."""

    entry_size = _OFFSET_ENTRY.size

    def __init__(self, path: Path, base_offset: int, max_index_size: int) -> None:
        super().__init__(path, base_offset, max_index_size)
        self._positions = array("i")

    @classmethod
    def load(cls, path: Path, base_offset: int, max_index_size: int, log_size: int) -> OffsetIndex:
        index = cls(path, base_offset, max_index_size)
        data = path.read_bytes()
        if len(data) % cls.entry_size:
            raise IndexCorruptError(f"{path} is {len(data)} bytes, not a multiple of {cls.entry_size}")
        for relative, position in _OFFSET_ENTRY.iter_unpack(data):
            if index.entries and (relative <= index._relative_offsets[-1] or position <= index._positions[-1]):
                raise IndexCorruptError(f"{path} goes backwards at entry {index.entries}")
            if not 0 <= position < log_size or relative < 0:
                raise IndexCorruptError(f"{path} entry {index.entries} points outside the log ({position})")
            index._relative_offsets.append(relative)
            index._positions.append(position)
        index._persisted, index._rewrite = index.entries, False
        return index

    @property
    def last_offset(self) -> int:
        return self.base_offset + (self._relative_offsets[-1] if self.entries else 0)

    def append(self, offset: int, position: int) -> None:
        relative = self._check_relative(offset)
        if self.entries and relative <= self._relative_offsets[-1]:
            raise ValueError(f"index entry for offset {offset} is not after the last one ({self.last_offset})")
        self._relative_offsets.append(relative)
        self._positions.append(position)

    def lookup(self, target_offset: int) -> tuple[int, int]:
        """(offset, position) of the largest entry with offset <= target; (base_offset, 0) when there is none."""
        slot = bisect_right(self._relative_offsets, target_offset - self.base_offset) - 1
        if slot < 0:
            return self.base_offset, 0
        return self.base_offset + self._relative_offsets[slot], self._positions[slot]

    def entry(self, slot: int) -> tuple[int, int]:
        return self.base_offset + self._relative_offsets[slot], self._positions[slot]

    def _truncate_entries(self, keep: int) -> None:
        super()._truncate_entries(keep)
        del self._positions[keep:]

    def _encode(self, start: int) -> bytes:
        return b"".join(_OFFSET_ENTRY.pack(self._relative_offsets[i], self._positions[i])
                        for i in range(start, self.entries))


class TimeIndex(_Index):
    """Sparse map from the largest timestamp seen so far to the offset where it was reached."""

    entry_size = _TIME_ENTRY.size

    def __init__(self, path: Path, base_offset: int, max_index_size: int) -> None:
        super().__init__(path, base_offset, max_index_size)
        self._timestamps = array("q")

    @classmethod
    def load(cls, path: Path, base_offset: int, max_index_size: int) -> TimeIndex:
        index = cls(path, base_offset, max_index_size)
        data = path.read_bytes()
        if len(data) % cls.entry_size:
            raise IndexCorruptError(f"{path} is {len(data)} bytes, not a multiple of {cls.entry_size}")
        for timestamp, relative in _TIME_ENTRY.iter_unpack(data):
            if relative < 0 or (index.entries and (timestamp <= index._timestamps[-1]
                                                   or relative < index._relative_offsets[-1])):
                raise IndexCorruptError(f"{path} goes backwards at entry {index.entries}")
            index._timestamps.append(timestamp)
            index._relative_offsets.append(relative)
        index._persisted, index._rewrite = index.entries, False
        return index

    @property
    def last_entry(self) -> tuple[int, int]:
        """(timestamp, offset) of the newest entry, or (NO_TIMESTAMP, base_offset) when empty."""
        if not self.entries:
            return NO_TIMESTAMP, self.base_offset
        return self._timestamps[-1], self.base_offset + self._relative_offsets[-1]

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Add (timestamp, offset) only if the timestamp is larger than the last entry's (it is a running max).

        Capacity is not enforced here: the log rolls before an index fills, and the final entry written
        when a segment becomes inactive may go one past it, as Kafka's `skipFullCheck` allows.
        """
        relative = self._check_relative(offset)
        if self.entries and timestamp <= self._timestamps[-1]:
            return
        if self.entries and relative < self._relative_offsets[-1]:
            raise ValueError(f"time index entry for offset {offset} is before the last one")
        self._timestamps.append(timestamp)
        self._relative_offsets.append(relative)

    def lookup(self, target_timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the largest entry with timestamp <= target; (NO_TIMESTAMP, base) if none."""
        slot = bisect_right(self._timestamps, target_timestamp) - 1
        if slot < 0:
            return NO_TIMESTAMP, self.base_offset
        return self._timestamps[slot], self.base_offset + self._relative_offsets[slot]

    def entry(self, slot: int) -> tuple[int, int]:
        return self._timestamps[slot], self.base_offset + self._relative_offsets[slot]

    def _truncate_entries(self, keep: int) -> None:
        super()._truncate_entries(keep)
        del self._timestamps[keep:]

    def _encode(self, start: int) -> bytes:
        return b"".join(_TIME_ENTRY.pack(self._timestamps[i], self._relative_offsets[i])
                        for i in range(start, self.entries))


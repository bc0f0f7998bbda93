"""One segment of a partition log: a `.log` file of raw batches and its `.index` and `.timeindex` files.

A segment is named by the first offset it may hold, zero-padded to 20 digits so that file names sort
like offsets. A partition that has seen 250 records in segments of about 100 records looks like:

    00000000000000000000.log  .index  .timeindex      offsets   0 .. 99
    00000000000000000100.log  .index  .timeindex      offsets 100 .. 199
    00000000000000000200.log  .index  .timeindex      offsets 200 .. 249  (the active segment)

Only the active segment is appended to. Appending writes the batches at the end of the `.log` and,
once `index.interval.bytes` have gone by since the last index entry, adds an entry to both indexes
(Kafka's `LogSegment.append`). Reading an offset looks it up in the offset index, then walks batch
headers from there (61 bytes each, never the records). Recovery re-reads the whole file, checks every
batch's CRC, cuts off whatever follows the last good batch, and rebuilds both indexes from what is left.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lab.broker.log.errors import LogError
from lab.broker.log.index import IndexCorruptError, OffsetIndex, TimeIndex
from lab.broker.log.records import (
    HEADER_SIZE,
    NO_TIMESTAMP,
    BatchHeader,
    batch_size_at,
    check_batch,
    decode_records,
    read_header,
)

LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, DELETED_SUFFIX = ".log", ".index", ".timeindex", ".deleted"
_SCAN_CHUNK = 1 << 20

# (position of the batch inside the appended bytes, batch size, last offset, max timestamp)
BatchInfo = tuple[int, int, int, int]


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}"


@dataclass(frozen=True, slots=True)
class FileSlice:
    """A byte range of a segment file: enough for `os.sendfile(socket, fd, position, length)`.

    `fd` stays valid while the segment is alive (until retention or a topic deletion removes it), so use
    it before yielding to other work that might delete segments. `bytes` is the same range, already read.
    """

    path: Path
    fd: int
    position: int
    length: int
    data: builtins.bytes = field(repr=False)

    @property
    def bytes(self) -> builtins.bytes:
        return self.data


class LogSegment:
    def __init__(self, directory: Path, base_offset: int, *, index_interval_bytes: int, max_index_size: int,
                 created_ms: int, file_suffix: str = "") -> None:
        """`file_suffix` names files still being written, e.g. the cleaner's `0000.log.cleaned` (see swap.py)."""
        self.base_offset = base_offset
        stem = directory / segment_name(base_offset)
        self.log_path = stem.with_suffix(LOG_SUFFIX + file_suffix)
        self.index_interval_bytes = index_interval_bytes
        self._max_index_size = max_index_size
        self.created_ms = created_ms
        self.offset_index = OffsetIndex(stem.with_suffix(INDEX_SUFFIX + file_suffix), base_offset, max_index_size)
        self.time_index = TimeIndex(stem.with_suffix(TIME_INDEX_SUFFIX + file_suffix), base_offset, max_index_size)
        self.fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        self.size = os.fstat(self.fd).st_size
        self.dropped_at, self.dropped_records = self.size, 0   # what the last recover() cut: from where, how many
        self.next_offset = base_offset  # offset after the last batch
        self.max_timestamp_so_far = NO_TIMESTAMP
        self.offset_of_max_timestamp_so_far = base_offset
        self.rolling_based_timestamp: int | None = None  # max timestamp of the first batch (segment.ms)
        self._bytes_since_last_index_entry = 0

    @classmethod
    def open(cls, directory: Path, base_offset: int, *, index_interval_bytes: int, max_index_size: int,
             now_ms: int, recover: bool) -> tuple[LogSegment, int]:
        """Open an existing (or new) segment. Returns it and the number of torn bytes cut off by recovery.

        With `recover=False` the indexes are loaded from disk and rebuilt only if missing or corrupt.
        """
        segment = cls(directory, base_offset, index_interval_bytes=index_interval_bytes,
                      max_index_size=max_index_size, created_ms=now_ms)
        if recover or not segment._load_indexes():
            return segment, segment.recover()
        return segment, 0

    def _load_indexes(self) -> bool:
        try:
            offsets = OffsetIndex.load(self.offset_index.path, self.base_offset, self._max_index_size, self.size)
            times = TimeIndex.load(self.time_index.path, self.base_offset, self._max_index_size)
        except (FileNotFoundError, IndexCorruptError):
            return False
        _, position = offsets.lookup(offsets.last_offset)
        last: BatchHeader | None = None
        for _, header in self._headers_from(position):
            last = header
        if self.size and last is None:
            return False
        self.next_offset = last.next_offset if last else self.base_offset
        # An inactive segment's time index always ends with the segment's max timestamp; an empty one, or
        # entries past the last batch, mean the files were not written out completely: rebuild them.
        if self.size and (times.entries == 0 or offsets.last_offset >= self.next_offset
                          or times.last_entry[1] >= self.next_offset):
            return False
        self.offset_index, self.time_index = offsets, times
        self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = times.last_entry
        if self.size:
            self.rolling_based_timestamp = read_header(os.pread(self.fd, HEADER_SIZE, 0)).max_timestamp
        return True

    # -- writing ---------------------------------------------------------------------------------------
    def append(self, data: bytes | bytearray, batches: Sequence[BatchInfo]) -> None:
        """Write back-to-back batches whose offsets are already assigned, and index them."""
        start = self.size
        for position, size, last_offset, max_timestamp in batches:
            self._index_batch(start + position, size, last_offset, max_timestamp)
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]
        self.size = start + len(data)

    def _index_batch(self, position: int, size: int, last_offset: int, max_timestamp: int) -> None:
        # Kafka's LogSegment.append: track the running max timestamp, and add an index entry for a batch
        # once more than index.interval.bytes were written since the previous entry.
        if self.rolling_based_timestamp is None:
            self.rolling_based_timestamp = max_timestamp
        if max_timestamp > self.max_timestamp_so_far:
            self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = max_timestamp, last_offset
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(last_offset, position)
            self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += size
        self.next_offset = last_offset + 1

    def recover(self) -> int:
        """Re-read the log, keep the longest prefix of valid batches, rebuild both indexes.

        A batch is valid if it is complete, passes `check_batch` (CRC included) and does not go back in
        offsets (Kafka's `LogSegment.recover`). Returns the number of bytes cut from the end.
        """
        self.offset_index.reset()
        self.time_index.reset()
        self.next_offset, self.rolling_based_timestamp = self.base_offset, None
        self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = NO_TIMESTAMP, self.base_offset
        self._bytes_since_last_index_entry = 0
        file_size = os.fstat(self.fd).st_size
        valid = 0
        for position, header in self._valid_batches(file_size):
            self._index_batch(position, header.size, header.last_offset, header.max_timestamp)
            valid = position + header.size
        self.dropped_at, self.dropped_records = valid, 0
        if valid < file_size:
            self.dropped_records = self._records_claimed(valid, file_size)
            os.ftruncate(self.fd, valid)
        self.size = valid
        self.offset_index.flush()
        self.time_index.flush()
        return file_size - valid

    def _records_claimed(self, position: int, file_size: int) -> int:
        """How many records the batches from `position` on say they hold, read from their headers alone (no CRC
        check): what recovery is about to cut, as far as the headers can be believed; a header whose length does
        not fit the file ends the count."""
        claimed = 0
        while position + HEADER_SIZE <= file_size:
            try:
                header = read_header(os.pread(self.fd, HEADER_SIZE, position))
            except LogError:
                break
            if header.size < HEADER_SIZE or position + header.size > file_size or header.records_count < 0:
                break
            claimed += header.records_count
            position += header.size
        return claimed

    def _valid_batches(self, file_size: int) -> Iterator[tuple[int, BatchHeader]]:
        chunk, chunk_start, position, expected = b"", 0, 0, self.base_offset
        while position < file_size:
            relative = position - chunk_start
            size = batch_size_at(chunk, relative)
            if size is None or relative + size > len(chunk):
                wanted = max(_SCAN_CHUNK, size or 0)
                chunk, chunk_start, relative = os.pread(self.fd, wanted, position), position, 0
                size = batch_size_at(chunk, 0)
                if size is None or size > len(chunk) or size < HEADER_SIZE:
                    return
            try:
                header = check_batch(memoryview(chunk)[relative:relative + size])
            except LogError:
                return
            if header.base_offset < expected:
                return
            yield position, header
            expected = header.next_offset
            position += size

    def on_become_inactive(self) -> None:
        """When a newer segment takes over, record the final max timestamp and write the indexes out."""
        if self.size:
            self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far)
        self.offset_index.flush()
        self.time_index.flush()

    def flush_log(self) -> None:
        """fsync the .log only: the indexes can be rebuilt from it."""
        os.fsync(self.fd)

    def flush(self) -> None:
        os.fsync(self.fd)
        self.offset_index.flush(fsync=True)
        self.time_index.flush(fsync=True)

    # -- reading ---------------------------------------------------------------------------------------
    def batch_headers(self) -> Iterator[BatchHeader]:
        """Every batch's header, in order (a torn tail ends them)."""
        for _, header in self._headers_from(0):
            yield header

    def _headers_from(self, position: int, end: int | None = None) -> Iterator[tuple[int, BatchHeader]]:
        """Batch headers from `position` on, 61 bytes per batch; stops at a torn tail or `end`."""
        end = self.size if end is None else end
        while position + HEADER_SIZE <= end:
            header = read_header(os.pread(self.fd, HEADER_SIZE, position))
            if header.size < HEADER_SIZE or position + header.size > end:
                return
            yield position, header
            position += header.size

    def translate_offset(self, offset: int, start_position: int = 0) -> tuple[int, BatchHeader] | None:
        """Position and header of the first batch whose last offset is >= `offset`, if any."""
        _, position = self.offset_index.lookup(offset)
        for found in self._headers_from(max(position, start_position)):
            if found[1].last_offset >= offset:
                return found
        return None

    def read(self, start_offset: int, max_size: int, max_position: int, *, min_one_message: bool = True
             ) -> FileSlice | None:
        """Whole batches from the one holding `start_offset`, at most `max_size` bytes, none at or past
        `max_position`; a first batch larger than `max_size` comes back alone when `min_one_message`."""
        found = self.translate_offset(start_offset)
        if found is None or found[0] >= max_position:
            return None
        start, first = found
        window = min(max_size, max_position - start)
        if first.size > window:
            if not min_one_message:
                return None
            data = os.pread(self.fd, first.size, start)
        else:
            data = os.pread(self.fd, window, start)
            length = 0
            while (size := batch_size_at(data, length)) is not None and length + size <= len(data):
                length += size
            data = data[:length]
        return FileSlice(self.log_path, self.fd, start, len(data), data)

    def read_batch(self, position: int, header: BatchHeader) -> bytes:
        return os.pread(self.fd, header.size, position)

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after `timestamp` with offset >= `starting_offset`.

        The time index gives a batch before which everything is older; batch headers skip whole batches
        whose max timestamp is too small; only the one batch that must hold the answer is decoded.
        """
        _, indexed_offset = self.time_index.lookup(timestamp)
        _, position = self.offset_index.lookup(max(indexed_offset, starting_offset))
        for batch_position, header in self._headers_from(position):
            if header.max_timestamp >= timestamp and header.last_offset >= starting_offset:
                for record in decode_records(self.read_batch(batch_position, header), header):
                    if record.timestamp >= timestamp and record.offset >= starting_offset:
                        return record.offset, record.timestamp
        return None

    def batches(self) -> Iterator[tuple[int, BatchHeader]]:
        return self._headers_from(0)

    # -- lifecycle -------------------------------------------------------------------------------------
    def time_waited_for_roll(self, now_ms: int, message_timestamp: int) -> int:
        """Kafka's rule for `segment.ms`: record time since the first batch, or wall time if empty."""
        if self.rolling_based_timestamp is not None and self.rolling_based_timestamp >= 0:
            return message_timestamp - self.rolling_based_timestamp
        return now_ms - self.created_ms

    def close(self) -> None:
        if self.fd >= 0:
            self.offset_index.flush()
            self.time_index.flush()
            os.close(self.fd)
            self.fd = -1

    def abandon(self) -> None:
        """Close the file without writing anything out: for a segment about to be removed."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> None:
        """Rename every file to `*.deleted`, then remove it (readers of a renamed file see it vanish whole)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        paths = [self.log_path, self.offset_index.path, self.time_index.path]
        renamed = []
        for path in paths:
            if path.exists():
                target = path.with_name(path.name + DELETED_SUFFIX)
                path.rename(target)
                renamed.append(target)
        for path in renamed:
            path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size}, next_offset={self.next_offset})"


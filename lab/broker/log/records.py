"""Record batches, magic v2, read straight from their bytes (Kafka's `DefaultRecordBatch` and `DefaultRecord`).

A batch is a fixed 61-byte header followed by its records (compressed as a whole, or not):

    offset  size  field
         0     8  baseOffset            the broker overwrites this on append; the CRC does not cover it
         8     4  batchLength           bytes after this field, so a batch occupies batchLength + 12 bytes
        12     4  partitionLeaderEpoch
        16     1  magic                 2
        17     4  crc                   CRC-32C of every byte from `attributes` to the end of the batch
        21     2  attributes            bits 0-2 codec, bit 3 timestamp type, bit 4 transactional, bit 5 control,
                                        bit 6 delete horizon (set by compaction: baseTimestamp is then the horizon)
        23     4  lastOffsetDelta       record count - 1 for a batch fresh from a producer
        27     8  baseTimestamp
        35     8  maxTimestamp
        43     8  producerId
        51     2  producerEpoch
        53     4  baseSequence
        57     4  recordsCount
        61     .  records

Each record is a varint-prefixed body of zigzag varints (timestamp and offset deltas, key and value
lengths with -1 for null) and a list of headers. Because offsets live only in the header, a broker
assigns them by rewriting 8 bytes; that is why the CRC starts at `attributes`. For example, a producer
sends a batch of 3 records with baseOffset 0; the log's end offset is 40, so the broker writes 40 into
bytes 0-7 and the records become offsets 40, 41 and 42 without a single record being parsed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum

import crc32c

from lab.broker.log.compression import Compression, decompress
from lab.broker.log.errors import CorruptRecordError, InvalidRecordError

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the bytes not counted by batchLength
CRC_START = 21  # the CRC covers bytes [21, end)
MAGIC_V2 = 2
NO_TIMESTAMP = -1
NO_SEQUENCE = -1
_LENGTH = struct.Struct(">qi")
_BASE_OFFSET = struct.Struct(">q")
_CRC = struct.Struct(">I")
_MAGIC_POS = 16
_COMPRESSION_MASK = 0x07
_TIMESTAMP_TYPE_BIT = 0x08
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40


class TimestampType(IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def label(self) -> str:
        """The spelling Kafka prints ("CreateTime", "LogAppendTime")."""
        return "CreateTime" if self is TimestampType.CREATE_TIME else "LogAppendTime"


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The 61 header bytes, decoded. `size` is the whole batch on disk, header included."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & _COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.attributes & _TIMESTAMP_TYPE_BIT else TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & _TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & _CONTROL_BIT)

    @property
    def delete_horizon_ms(self) -> int | None:
        """When compaction may drop this batch's tombstones: `baseTimestamp` if attributes bit 6 is set (KIP-534)."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_BIT else None

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record; sequences wrap at 2**31 - 1 like Kafka's `DefaultRecordBatch`."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (2**31)


@dataclass(frozen=True, slots=True)
class Record:
    """One record of a batch, with its absolute offset and timestamp already worked out."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    sequence: int

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)


def read_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Decode the header at `pos`. Checks only that 61 bytes are there; `check_batch` does the rest."""
    if len(buf) - pos < HEADER_SIZE:
        raise CorruptRecordError(f"{len(buf) - pos} bytes at position {pos} are too few for a batch header "
                                 f"({HEADER_SIZE})")
    return BatchHeader(*HEADER.unpack_from(buf, pos))


def batch_size_at(buf: bytes | bytearray | memoryview, pos: int) -> int | None:
    """Size of the batch starting at `pos` from its length field, or None if even that is cut off."""
    if len(buf) - pos < LOG_OVERHEAD:
        return None
    return int(_LENGTH.unpack_from(buf, pos)[1]) + LOG_OVERHEAD


def compute_crc(batch: bytes | bytearray | memoryview) -> int:
    """CRC-32C over `attributes` .. end, the value a valid batch stores at offset 17."""
    return int(crc32c.crc32c(memoryview(batch)[CRC_START:]))


def check_batch(buf: bytes | bytearray | memoryview, pos: int = 0, *, from_client: bool = False) -> BatchHeader:
    """Decode and validate the batch at `pos`: magic, length, record count and CRC. O(batch), in C for the CRC.

    Raises CorruptRecordError for bytes that cannot be a batch and InvalidRecordError for a well-formed
    batch the log will not take (Kafka's `LogValidator.validateBatch` draws the same line). A batch fresh
    from a client (`from_client=True`, what `PartitionLog.append` checks) must hold lastOffsetDelta + 1
    records; a stored batch may hold fewer, because compaction removes records but keeps the batch's
    offsets (Kafka's `MemoryRecords.filterTo`), so it spans more offsets than it has records.
    """
    header = read_header(buf, pos)
    if header.magic != MAGIC_V2:
        raise InvalidRecordError(f"batch at position {pos} has magic {header.magic}; this broker stores only v2")
    if header.batch_length < HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptRecordError(f"batch at position {pos} declares {header.batch_length} bytes, less than "
                                 f"a header ({HEADER_SIZE - LOG_OVERHEAD})")
    end = pos + header.size
    if end > len(buf):
        raise CorruptRecordError(f"batch at position {pos} needs {header.size} bytes but only {len(buf) - pos} "
                                 "are left")
    actual = int(crc32c.crc32c(memoryview(buf)[pos + CRC_START:end]))
    if actual != header.crc:
        raise CorruptRecordError(f"batch at position {pos} (baseOffset {header.base_offset}) stores CRC "
                                 f"{header.crc} but its bytes give {actual}")
    if header.records_count < (1 if from_client else 0):
        raise InvalidRecordError(f"batch at position {pos} holds {header.records_count} records")
    if (header.last_offset_delta != header.records_count - 1 if from_client
            else header.last_offset_delta < max(header.records_count - 1, 0)):
        raise InvalidRecordError(f"batch at position {pos} has {header.records_count} records but "
                                 f"lastOffsetDelta {header.last_offset_delta}")
    if header.compression > Compression.ZSTD:
        raise InvalidRecordError(f"batch at position {pos} uses unknown codec {header.compression}")
    return header


def iter_batches(buf: bytes | bytearray | memoryview, *, from_client: bool = False
                 ) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of each batch in a run of back-to-back batches; any defect raises."""
    pos = 0
    while pos < len(buf):
        header = check_batch(buf, pos, from_client=from_client)
        yield pos, header
        pos += header.size


def set_base_offset(buf: bytearray | memoryview, pos: int, base_offset: int) -> None:
    """Assign offsets to a batch in place. The CRC stays valid: it does not cover these 8 bytes."""
    _BASE_OFFSET.pack_into(buf, pos, base_offset)


def set_log_append_time(buf: bytearray, pos: int, size: int, timestamp: int) -> None:
    """Stamp a batch with the broker's time (message.timestamp.type=LogAppendTime): set the timestamp-type
    bit and maxTimestamp, then recompute the CRC, which covers both (Kafka's `setMaxTimestamp`)."""
    buf[pos + 22] |= _TIMESTAMP_TYPE_BIT
    _BASE_OFFSET.pack_into(buf, pos + 35, timestamp)
    _CRC.pack_into(buf, pos + 17, compute_crc(memoryview(buf)[pos:pos + size]))


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Zigzag varint (protobuf style, as Kafka's `ByteUtils.readVarlong`): returns (value, next position)."""
    shift = raw = 0
    while True:
        if pos >= len(buf):
            raise CorruptRecordError("a varint runs past the end of the records")
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if shift > 63:
            raise CorruptRecordError("a varint is longer than 10 bytes")


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    length, pos = read_varint(buf, pos)
    if length < 0:
        return None, pos
    if pos + length > len(buf):
        raise CorruptRecordError(f"a field of {length} bytes runs past the end of its record")
    return buf[pos:pos + length], pos + length


def decode_records(batch: bytes | bytearray | memoryview, header: BatchHeader | None = None) -> list[Record]:
    """Every record of one batch, decompressing first if needed (the slow path: per-record Python work)."""
    header = header or read_header(batch)
    data = decompress(header.compression, memoryview(batch)[HEADER_SIZE:header.size])
    log_append = header.timestamp_type is TimestampType.LOG_APPEND_TIME
    records: list[Record] = []
    pos = 0
    for _ in range(header.records_count):
        length, pos = read_varint(data, pos)
        end = pos + length
        if length < 0 or end > len(data):
            raise CorruptRecordError(f"record of {length} bytes runs past the end of batch {header.base_offset}")
        pos += 1  # record attributes: unused in v2
        timestamp_delta, pos = read_varint(data, pos)
        offset_delta, pos = read_varint(data, pos)
        key, pos = _read_bytes(data, pos)
        value, pos = _read_bytes(data, pos)
        count, pos = read_varint(data, pos)
        headers: list[tuple[str, bytes | None]] = []
        for _ in range(count):
            name, pos = _read_bytes(data, pos)
            header_value, pos = _read_bytes(data, pos)
            if name is None:
                raise CorruptRecordError(f"a record header in batch {header.base_offset} has a null key")
            headers.append((name.decode("utf-8", errors="replace"), header_value))
        if pos != end:
            raise CorruptRecordError(f"record at delta {offset_delta} of batch {header.base_offset} declares "
                                     f"{length} bytes but its fields use {length + pos - end}")
        sequence = NO_SEQUENCE if header.base_sequence == NO_SEQUENCE else (
            (header.base_sequence + offset_delta) % (2**31))
        timestamp = header.max_timestamp if log_append else header.base_timestamp + timestamp_delta
        records.append(Record(header.base_offset + offset_delta, timestamp, key, value, tuple(headers), sequence))
    if pos != len(data):
        raise CorruptRecordError(f"batch {header.base_offset} has {len(data) - pos} bytes after its last record")
    return records

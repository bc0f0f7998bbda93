"""Encode record batches v2 (what a producer does; Kafka's `MemoryRecordsBuilder` and `DefaultRecord.writeTo`).

The broker uses it for its own internal topics and the tests use it to make input. The first record's
timestamp becomes `baseTimestamp`, each record stores its delta from it, and `maxTimestamp` is the largest:

    >>> batch = build_batch([SimpleRecord(b"a", timestamp=1_000), SimpleRecord(b"b", timestamp=1_005)])
    >>> from lab.broker.log.records import check_batch
    >>> header = check_batch(batch)
    >>> header.records_count, header.base_timestamp, header.max_timestamp, len(batch)
    (2, 1000, 1005, 77)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from lab.broker.log.compression import Compression, compress
from lab.broker.log.records import (
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    NO_SEQUENCE,
    TimestampType,
    compute_crc,
)


@dataclass(frozen=True, slots=True)
class SimpleRecord:
    """A record to write (Kafka's `SimpleRecord`). `timestamp=None` means "now" at build time."""

    value: bytes | None
    key: bytes | None = None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    timestamp: int | None = None


def write_varint(value: int, out: bytearray) -> None:
    """Zigzag-encode a signed 64-bit value as a varint (the inverse of `records.read_varint`)."""
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFF_FFFF_FFFF_FFFF
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)


def _write_bytes(value: bytes | None, out: bytearray) -> None:
    if value is None:
        write_varint(-1, out)
    else:
        write_varint(len(value), out)
        out += value


def encode_record(record: SimpleRecord, offset_delta: int, timestamp_delta: int) -> bytes:
    """One record: its varint length, then attributes (0), deltas, key, value and headers."""
    body = bytearray(b"\x00")
    write_varint(timestamp_delta, body)
    write_varint(offset_delta, body)
    _write_bytes(record.key, body)
    _write_bytes(record.value, body)
    write_varint(len(record.headers), body)
    for name, value in record.headers:
        _write_bytes(name.encode("utf-8"), body)
        _write_bytes(value, body)
    out = bytearray()
    write_varint(len(body), out)
    return bytes(out + body)


def build_batch(
    records: Sequence[SimpleRecord],
    *,
    base_offset: int = 0,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    partition_leader_epoch: int = -1,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control: bool = False,
    xerial_snappy: bool = True,
) -> bytes:
    """Encode `records` as one batch. Snappy is xerial-framed like the Java client unless `xerial_snappy=False`."""
    if not records:
        raise ValueError("a record batch needs at least one record")
    now = int(time.time() * 1000)
    timestamps = [now if record.timestamp is None else record.timestamp for record in records]
    base_timestamp = timestamps[0]
    body = b"".join(encode_record(record, delta, ts - base_timestamp)
                    for delta, (record, ts) in enumerate(zip(records, timestamps, strict=True)))
    body = compress(compression, body, xerial=xerial_snappy)
    attributes = (int(compression) | (0x08 if timestamp_type is TimestampType.LOG_APPEND_TIME else 0)
                  | (0x10 if is_transactional else 0) | (0x20 if is_control else 0))
    batch = bytearray(HEADER_SIZE + len(body))
    HEADER.pack_into(batch, 0, base_offset, HEADER_SIZE - LOG_OVERHEAD + len(body), partition_leader_epoch,
                     MAGIC_V2, 0, attributes, len(records) - 1, base_timestamp, max(timestamps), producer_id,
                     producer_epoch, base_sequence, len(records))
    batch[HEADER_SIZE:] = body
    batch[CRC_START - 4:CRC_START] = compute_crc(batch).to_bytes(4, "big")
    return bytes(batch)

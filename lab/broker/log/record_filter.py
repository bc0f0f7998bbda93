"""Compaction's step for one batch: keep some of its records, rewrite it, keep its offsets.

This is Kafka's `MemoryRecords.filterTo` (clients/src/main/java/org/apache/kafka/common/record/MemoryRecords.java)
with the cleaner's `shouldRetainRecord` (core/src/main/scala/kafka/log/LogCleaner.scala). A
record survives when no later record of its key exists (`latest`, the offset map, says which offset is the
latest), it has a key, and it is not a tombstone whose delete horizon has passed. Then the batch becomes:

    nothing kept                     dropped: no bytes at all
    everything kept, no new horizon  the original bytes, untouched (no CRC, no recompression)
    otherwise                        a new batch: same base offset, lastOffsetDelta, producer id, epoch, base
                                     sequence, leader epoch, codec and flags; only the kept records, each with
                                     its original offset delta. It still spans the same offsets with fewer
                                     records (recordsCount < lastOffsetDelta + 1), so offsets never move.

A tombstone (null value) is kept for `delete.retention.ms` after the cleaning that first keeps it: that
cleaning gives its batch a delete horizon, now + delete.retention.ms, stored in `baseTimestamp` with bit 6
of the attributes set (KIP-534; record timestamps are deltas, so they are re-based). A cleaning at or after
the horizon drops the tombstone. The horizon travels with the batch: a restart or a copy keeps it.

Worked example: offsets 10, 11, 12 hold a=1, b=1 and a tombstone for a; the offset map knows a -> 12 and
b -> 30 (a later b exists). 10 and 11 go, the tombstone stays and gets its horizon:

    >>> from lab.broker.log.batch_builder import SimpleRecord, build_batch
    >>> batch = build_batch([SimpleRecord(b"1", key=b"a", timestamp=5), SimpleRecord(b"1", key=b"b", timestamp=6),
    ...                      SimpleRecord(None, key=b"a", timestamp=7)], base_offset=10)
    >>> kept = filter_batch(batch, {b"a": 12, b"b": 30}, now_ms=1_000, delete_retention_ms=100)
    >>> header = check_batch(kept.data)
    >>> header.base_offset, header.last_offset, header.records_count, header.delete_horizon_ms
    (10, 12, 1, 1100)
    >>> [(r.offset, r.key, r.value, r.timestamp) for r in decode_records(kept.data)]
    [(12, b'a', None, 7)]
    >>> filter_batch(kept.data, {b"a": 12}, now_ms=1_100, delete_retention_ms=100).data   # past the horizon
    b''

What the lab leaves out: Kafka keeps an emptied batch as a bare 61-byte header when it is the last batch of
an idempotent producer that is still active (so the producer's last sequence survives) or the last batch of
the cleaning round. The lab's producer state lives in memory and is never rebuilt from the log, so an emptied
batch is always dropped. Control batches (transaction markers) are copied as they are: the lab has no
transactions, hence no aborted records to remove.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lab.broker.log.batch_builder import SimpleRecord, encode_record
from lab.broker.log.compression import compress
from lab.broker.log.records import (
    CRC_START,
    DELETE_HORIZON_BIT,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    BatchHeader,
    Record,
    TimestampType,
    check_batch,
    compute_crc,
    decode_records,
    read_header,
)


@dataclass(frozen=True, slots=True)
class FilteredBatch:
    """What is left of one batch: `data` (b"" when nothing is), and how many records were read and kept."""

    data: bytes
    records_read: int
    records_kept: int


def should_retain_record(record: Record, latest: Mapping[bytes, int], delete_horizon_ms: int | None,
                         now_ms: int) -> bool:
    """Kafka's `Cleaner.shouldRetainRecord` for a v2 batch."""
    if record.key is None:
        return False  # useless in a compacted log: nothing could ever replace or delete it
    if latest.get(record.key, -1) > record.offset:
        return False  # a later record of the same key exists
    # a tombstone stays until its batch's delete horizon (set by the first cleaning that kept it) has passed
    return record.value is not None or delete_horizon_ms is None or now_ms < delete_horizon_ms


def filter_batch(batch: bytes, latest: Mapping[bytes, int], now_ms: int, delete_retention_ms: int,
                 header: BatchHeader | None = None) -> FilteredBatch:
    """Filter one stored batch against the offset map `latest` (key -> offset of its latest record)."""
    header = header or check_batch(batch)
    if header.is_control:
        return FilteredBatch(bytes(batch), header.records_count, header.records_count)
    records = decode_records(batch, header)
    kept = [record for record in records
            if should_retain_record(record, latest, header.delete_horizon_ms, now_ms)]
    if not kept:
        return FilteredBatch(b"", len(records), 0)
    # filterTo: a batch that now holds tombstones and has no horizon yet gets one (now + delete.retention.ms).
    needs_horizon = header.delete_horizon_ms is None and any(record.value is None for record in kept)
    if len(kept) == len(records) and not needs_horizon:
        return FilteredBatch(bytes(batch), len(records), len(kept))
    horizon = now_ms + delete_retention_ms if needs_horizon else header.delete_horizon_ms
    return FilteredBatch(rebuild_batch(header, kept, horizon), len(records), len(kept))


def rebuild_batch(header: BatchHeader, records: list[Record], delete_horizon_ms: int | None) -> bytes:
    """A batch like `header`'s holding only `records` (Kafka's `buildRetainedRecordsInto` with
    `overrideLastOffset`): same base offset and lastOffsetDelta, so the batch keeps its offsets."""
    base_timestamp = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    if header.timestamp_type is TimestampType.LOG_APPEND_TIME:
        max_timestamp = header.max_timestamp  # the broker's stamp, preserved (DefaultRecordBatch's doc)
    else:
        max_timestamp = max(record.timestamp for record in records)
    body = b"".join(encode_record(SimpleRecord(record.value, record.key, record.headers, record.timestamp),
                                  record.offset - header.base_offset, record.timestamp - base_timestamp)
                    for record in records)
    body = compress(header.compression, body)
    attributes = header.attributes & ~DELETE_HORIZON_BIT
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_BIT
    out = bytearray(HEADER_SIZE + len(body))
    HEADER.pack_into(out, 0, header.base_offset, HEADER_SIZE - LOG_OVERHEAD + len(body),
                     header.partition_leader_epoch, MAGIC_V2, 0, attributes, header.last_offset_delta,
                     base_timestamp, max_timestamp, header.producer_id, header.producer_epoch,
                     header.base_sequence, len(records))
    out[HEADER_SIZE:] = body
    out[CRC_START - 4:CRC_START] = compute_crc(out).to_bytes(4, "big")
    return bytes(out)


def batch_info(data: bytes) -> tuple[int, int]:
    """(last offset, max timestamp) of a filtered batch: what the segment's indexes need."""
    header = read_header(data)
    return header.last_offset, header.max_timestamp

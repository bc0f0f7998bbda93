"""Record batches v2: hand-assembled bytes, the builder, the CRC, and every codec."""

from __future__ import annotations

import struct

import crc32c
import pytest

from lab.broker.log import (
    Compression,
    CorruptRecordError,
    InvalidRecordError,
    SimpleRecord,
    TimestampType,
    build_batch,
    check_batch,
    decode_records,
    iter_batches,
)
from lab.broker.log.compression import XERIAL_MAGIC, compress, decompress, snappy_xerial_encode
from lab.broker.log.records import read_varint

# Two records written out byte by byte (zigzag varints: 5 -> 0x0a, 1 -> 0x02, -1 -> 0x01).
RECORD_0 = bytes([0x10, 0x00, 0x0A, 0x00, 0x02]) + b"k" + bytes([0x02]) + b"v" + bytes([0x00])
RECORD_1 = (bytes([0x20, 0x00, 0x14, 0x02, 0x01, 0x0A]) + b"hello" + bytes([0x02, 0x02]) + b"h"
            + bytes([0x04]) + b"hi")


def hand_made_batch(base_offset: int = 0) -> bytes:
    records = RECORD_0 + RECORD_1
    after_crc = struct.pack(">hiqqqhii", 0, 1, 1_000, 1_010, 7, 3, 42, 2) + records
    crc = crc32c.crc32c(after_crc)
    return struct.pack(">qiibI", base_offset, 49 + len(records), 5, 2, crc) + after_crc


def test_a_hand_assembled_batch_parses_field_by_field() -> None:
    batch = hand_made_batch(base_offset=100)
    header = check_batch(batch)
    assert (header.base_offset, header.last_offset, header.records_count, header.size) == (100, 101, 2, len(batch))
    assert (header.base_timestamp, header.max_timestamp) == (1_000, 1_010)
    assert (header.producer_id, header.producer_epoch, header.base_sequence, header.last_sequence) == (7, 3, 42, 43)
    assert header.partition_leader_epoch == 5
    assert header.compression is Compression.NONE and header.timestamp_type is TimestampType.CREATE_TIME
    first, second = decode_records(batch)
    assert (first.offset, first.timestamp, first.key, first.value, first.headers, first.sequence) == (
        100, 1_005, b"k", b"v", (), 42)
    assert (second.offset, second.timestamp, second.key, second.value, second.headers) == (
        101, 1_010, None, b"hello", (("h", b"hi"),))


def test_the_builder_writes_the_same_bytes_as_the_hand_assembled_batch() -> None:
    built = build_batch([SimpleRecord(b"v", key=b"k", timestamp=1_005),
                         SimpleRecord(b"hello", headers=(("h", b"hi"),), timestamp=1_010)],
                        partition_leader_epoch=5, producer_id=7, producer_epoch=3, base_sequence=42)
    # The builder takes the first record's timestamp as the base, so only the timestamp fields differ.
    expected = bytearray(hand_made_batch())
    expected[27:35] = struct.pack(">q", 1_005)
    expected[61:] = RECORD_0.replace(b"\x0a", b"\x00", 1) + RECORD_1.replace(b"\x14", b"\x0a", 1)
    expected[17:21] = struct.pack(">I", crc32c.crc32c(bytes(expected[21:])))
    assert built == bytes(expected)


def test_a_flipped_byte_is_caught_by_the_crc() -> None:
    batch = bytearray(hand_made_batch())
    batch[70] ^= 0x01
    with pytest.raises(CorruptRecordError, match="CRC"):
        check_batch(batch)


def test_the_base_offset_is_outside_the_crc() -> None:
    batch = bytearray(hand_made_batch())
    batch[0:8] = struct.pack(">q", 123_456)
    assert check_batch(batch).base_offset == 123_456


@pytest.mark.parametrize("cut", [10, 60, 61, 80])
def test_a_truncated_batch_is_corrupt(cut: int) -> None:
    with pytest.raises(CorruptRecordError):
        check_batch(hand_made_batch()[:cut])


def test_old_magic_and_inconsistent_counts_are_invalid() -> None:
    batch = bytearray(hand_made_batch())
    batch[16] = 1
    with pytest.raises(InvalidRecordError, match="magic 1"):
        check_batch(batch)
    batch = bytearray(hand_made_batch())
    batch[57:61] = struct.pack(">i", 3)
    batch[17:21] = struct.pack(">I", crc32c.crc32c(bytes(batch[21:])))
    with pytest.raises(InvalidRecordError, match="lastOffsetDelta"):
        check_batch(batch)


def test_back_to_back_batches_are_iterated_with_their_positions() -> None:
    first, second = hand_made_batch(), build_batch([SimpleRecord(b"x", timestamp=1)])
    assert [(position, header.records_count) for position, header in iter_batches(first + second)] == [
        (0, 2), (len(first), 1)]


@pytest.mark.parametrize("codec", list(Compression))
def test_every_codec_round_trips_a_batch(codec: Compression) -> None:
    records = [SimpleRecord(b"value-%d" % i * 20, key=b"key-%d" % i, timestamp=2_000 + i) for i in range(50)]
    batch = build_batch(records, compression=codec)
    header = check_batch(batch)
    assert header.compression is codec
    decoded = decode_records(batch)
    assert [(r.key, r.value, r.timestamp, r.offset) for r in decoded] == [
        (b"key-%d" % i, b"value-%d" % i * 20, 2_000 + i, i) for i in range(50)]


def test_snappy_accepts_both_xerial_frames_and_raw_blocks() -> None:
    payload = b"0123456789" * 10_000
    framed = snappy_xerial_encode(payload, block_size=4096)
    assert framed.startswith(XERIAL_MAGIC) and framed[8:16] == struct.pack(">ii", 1, 1)
    assert decompress(Compression.SNAPPY, framed) == payload
    assert decompress(Compression.SNAPPY, compress(Compression.SNAPPY, payload, xerial=False)) == payload


def test_librdkafka_style_raw_snappy_batches_decode() -> None:
    batch = build_batch([SimpleRecord(b"raw")], compression=Compression.SNAPPY, xerial_snappy=False)
    assert not batch[61:].startswith(XERIAL_MAGIC)
    assert [r.value for r in decode_records(batch)] == [b"raw"]


def test_garbage_inside_a_compressed_batch_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError):
        decompress(Compression.GZIP, b"not gzip at all")


@pytest.mark.parametrize(("encoded", "value"), [(b"\x00", 0), (b"\x01", -1), (b"\x02", 1), (b"\xac\x02", 150),
                                                 (b"\xff\xff\xff\xff\x0f", -2**31)])
def test_zigzag_varints_decode_like_protobuf(encoded: bytes, value: int) -> None:
    assert read_varint(encoded, 0) == (value, len(encoded))

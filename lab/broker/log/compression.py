"""The four codecs a v2 record batch may use, chosen by bits 0-2 of the batch's `attributes`.

Only the records section of a batch is compressed; the 61-byte header stays readable, so the broker can
assign offsets and check the CRC without ever decompressing. Decompression is needed only to look inside
a batch (a timestamp lookup, `lab dump-log --print-data-log`).

Snappy comes in two framings. Java clients write Xerial's stream format (Kafka's `SnappyFactory` wraps
xerial's `SnappyOutputStream`): an 16-byte header, then blocks, each a 4-byte big-endian length and a
raw snappy block. librdkafka writes one raw snappy block with no header at all. Readers must accept both:

    >>> framed = snappy_xerial_encode(b"hello hello hello")
    >>> framed[:8], decompress(Compression.SNAPPY, framed)
    (b'\\x82SNAPPY\\x00', b'hello hello hello')
    >>> raw = compress(Compression.SNAPPY, b"hi", xerial=False)
    >>> decompress(Compression.SNAPPY, raw)
    b'hi'
"""

from __future__ import annotations

import struct
from enum import IntEnum

import cramjam

from lab.broker.log.errors import CorruptRecordError, InvalidRecordError

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)  # version 1, compatible with version 1
_XERIAL_BLOCK = 32 * 1024  # xerial's default block size
_INT32 = struct.Struct(">i")


class Compression(IntEnum):
    """The codec ids of Kafka's `CompressionType`; `.name.lower()` is what kafka-dump-log prints."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


def compress(codec: Compression, data: bytes, *, xerial: bool = True) -> bytes:
    """Compress a records section. Snappy uses the Java clients' xerial framing unless `xerial=False`."""
    match codec:
        case Compression.NONE:
            return data
        case Compression.GZIP:
            return bytes(cramjam.gzip.compress(data))
        case Compression.SNAPPY:
            return snappy_xerial_encode(data) if xerial else bytes(cramjam.snappy.compress_raw(data))
        case Compression.LZ4:
            return bytes(cramjam.lz4.compress(data))
        case Compression.ZSTD:
            return bytes(cramjam.zstd.compress(data))
    raise InvalidRecordError(f"unknown compression codec {codec}")


def decompress(codec: int, data: bytes | memoryview) -> bytes:
    """Decompress a records section; bad input raises CorruptRecordError, an unknown codec InvalidRecordError."""
    payload = bytes(data)
    try:
        match codec:
            case Compression.NONE:
                return payload
            case Compression.GZIP:
                return bytes(cramjam.gzip.decompress(payload))
            case Compression.SNAPPY:
                return snappy_decode(payload)
            case Compression.LZ4:
                return bytes(cramjam.lz4.decompress(payload))
            case Compression.ZSTD:
                return bytes(cramjam.zstd.decompress(payload))
    except (cramjam.DecompressionError, ValueError, OSError) as error:
        raise CorruptRecordError(f"cannot decompress {Compression(codec).name.lower()} records: {error}") from error
    raise InvalidRecordError(f"unknown compression codec {codec} (allowed: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)")


def snappy_xerial_encode(data: bytes, block_size: int = _XERIAL_BLOCK) -> bytes:
    """Xerial's stream format: header, then (length, raw block) pairs of at most `block_size` input bytes."""
    parts = [_XERIAL_HEADER]
    for start in range(0, len(data), block_size):
        block = bytes(cramjam.snappy.compress_raw(data[start:start + block_size]))
        parts.append(_INT32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def snappy_decode(data: bytes) -> bytes:
    """Either framing: xerial if the magic header is there (as xerial's `SnappyInputStream` decides), else raw."""
    if not data.startswith(XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    pos, out = len(_XERIAL_HEADER), []
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptRecordError("xerial snappy stream ends inside a block length")
        (length,) = _INT32.unpack_from(data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise CorruptRecordError(f"xerial snappy block of {length} bytes runs past the end of the data")
        out.append(bytes(cramjam.snappy.decompress_raw(data[pos:pos + length])))
        pos += length
    return b"".join(out)

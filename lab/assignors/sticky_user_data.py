"""The bytes an eager sticky consumer sends in its subscription: what it owned, and in which generation.

The eager protocol revokes everything before a rebalance, so the subscription's own `owned_partitions` field is empty
by the time the leader sees it. Kafka's `StickyAssignor` therefore smuggles the previous assignment through the
subscription's opaque `userData`, using Kafka's own protocol types (big-endian):

    version 1:  ARRAY(int32 count) of { topic: STRING (int16 length + UTF-8), partitions: ARRAY of INT32 }
                generation: INT32
    version 0:  the same without the generation (written by very old clients)

Worked example: owning t-0 and t-2 in generation 5 gives

    00 00 00 01              one topic
    00 01 74                 topic "t" (length 1)
    00 00 00 02              two partitions
    00 00 00 00  00 00 00 02 partitions 0 and 2
    00 00 00 05              generation 5

Topics are written in the iteration order of the `java.util.HashMap` Kafka groups them with, so the bytes equal
Kafka's. A reader tries version 1, falls back to version 0, and if both fail treats the member as owning nothing
with generation -1, exactly as Kafka does (a corrupt user data never fails a rebalance).

`CooperativeStickyAssignor` needs far less: its subscriptions carry owned partitions and the generation directly,
and its user data is a single INT32 generation, for brokers that drop the generation field.

Upstream: `clients/.../consumer/StickyAssignor.java` (`serializeTopicPartitionAssignment`, `memberData`) and
`clients/.../consumer/CooperativeStickyAssignor.java` (`subscriptionUserData`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import NamedTuple

from lab.assignors.contract import DEFAULT_GENERATION, TopicPartition
from lab.assignors.java_order import java_hash_map_order


class MemberData(NamedTuple):
    """What the leader learns about a member's past: partitions it owned and the generation it owned them in."""

    partitions: tuple[TopicPartition, ...]
    generation: int | None


class UserDataError(ValueError):
    """The bytes do not follow the schema (short, negative lengths, or bad UTF-8)."""


def encode_sticky_user_data(owned_partitions: Iterable[TopicPartition], generation: int | None) -> bytes:
    """Version 1 bytes (version 0 when `generation` is None)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in owned_partitions:
        by_topic.setdefault(topic, []).append(partition)
    out = bytearray(struct.pack(">i", len(by_topic)))
    for topic in java_hash_map_order(by_topic):
        name = topic.encode("utf-8")
        partitions = by_topic[topic]
        out += struct.pack(">h", len(name)) + name
        out += struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    if generation is not None:
        out += struct.pack(">i", generation)
    return bytes(out)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def take(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self.offset + size > len(self.data):
            left = len(self.data) - self.offset
            raise UserDataError(f"needed {size} bytes at offset {self.offset}, only {left} left")
        (value,) = struct.unpack_from(fmt, self.data, self.offset)
        self.offset += size
        return int(value)

    def count(self) -> int:
        value = self.take(">i")
        if value < 0:
            raise UserDataError(f"negative array length {value} at offset {self.offset - 4}")
        return value

    def string(self) -> str:
        length = self.take(">h")
        if length < 0 or self.offset + length > len(self.data):
            raise UserDataError(f"bad string length {length} at offset {self.offset - 2}")
        raw = self.data[self.offset:self.offset + length]
        self.offset += length
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserDataError(str(exc)) from exc


def _read_partitions(reader: _Reader) -> tuple[TopicPartition, ...]:
    partitions: list[TopicPartition] = []
    for _ in range(reader.count()):
        topic = reader.string()
        partitions.extend(TopicPartition(topic, reader.take(">i")) for _ in range(reader.count()))
    return tuple(partitions)


def decode_sticky_user_data(data: bytes) -> MemberData:
    """Read version 1, else version 0, else (like Kafka) nothing owned at generation -1."""
    try:
        reader = _Reader(data)
        partitions = _read_partitions(reader)
        return MemberData(partitions, reader.take(">i"))
    except UserDataError:
        pass
    try:
        return MemberData(_read_partitions(_Reader(data)), None)
    except UserDataError:
        return MemberData((), DEFAULT_GENERATION)


def encode_cooperative_user_data(generation: int) -> bytes:
    """`CooperativeStickyAssignor`'s user data: the generation as one INT32."""
    return struct.pack(">i", generation)


def decode_cooperative_user_data(data: bytes) -> int:
    """The generation from `CooperativeStickyAssignor` user data; -1 if unreadable, as upstream."""
    if len(data) < 4:
        return DEFAULT_GENERATION
    return int(struct.unpack_from(">i", data)[0])

"""The consumer protocol: the bytes a consumer puts inside JoinGroup and SyncGroup.

The group coordinator never looks inside a member's metadata: to the broker a JoinGroup protocol is just a name
("range") and an opaque byte string. Consumers (protocol type "consumer") agree on what those bytes mean:

* in JoinGroup each member sends a **ConsumerProtocolSubscription**: the topics it wants, assignor `user_data`, the
  partitions it still owns (v1+, for cooperative rebalancing), the generation it owned them in (v2+) and its rack (v3+);
* in SyncGroup the leader sends each member a **ConsumerProtocolAssignment**: its partitions and assignor `user_data`.

Both start with an int16 version and use Kafka's classic (non-flexible) encodings, big-endian: STRING = int16
length + UTF-8 (-1 is null where nullable), BYTES = int32 length + bytes (-1 is null), ARRAY = int32 count + items.
Partitions travel grouped by topic, `[{topic, [partition, ...]}, ...]`. Worked example: a member subscribed to "t",
still owning t-0 from generation 4, on rack "r1", sends version 3:

    00 03                           version 3
    00 00 00 01   00 01 74          topics: 1 of them, "t"
    ff ff ff ff                     user_data: null
    00 00 00 01   00 01 74          owned_partitions: 1 topic, "t",
    00 00 00 01   00 00 00 00          with 1 partition: 0
    00 00 00 04                     generation_id 4
    00 02 72 31                     rack_id "r1"

    >>> blob = encode_subscription(["t"], owned_partitions=[TopicPartition("t", 0)], generation_id=4, rack_id="r1")
    >>> blob.hex(" ")
    '00 03 00 00 00 01 00 01 74 ff ff ff ff 00 00 00 01 00 01 74 00 00 00 01 00 00 00 00 00 00 00 04 00 02 72 31'
    >>> decode_subscription(blob).to_assignor_subscription()
    Subscription(topics=('t',), owned_partitions=(TopicPartition(topic='t', partition=0),), generation=4, \
group_instance_id=None, rack='r1')

Versions only ever append fields, so a reader meeting a version newer than 3 reads the fields it knows and ignores
the rest (Kafka's `ConsumerProtocol.checkSubscriptionVersion` "parses it using the current format"); writing a newer
version writes version 3, as Kafka does. Who writes what: the Java client writes both at version 3 with topics and
owned partitions sorted; librdkafka (confluent-kafka) writes subscriptions at version 3 (rack null unless
`client.rack` is set, user_data empty rather than null) and assignments at version 0. This module writes items in the
order given, partitions grouped by topic in order of first appearance (how Kafka builds an assignment).

Upstream: `clients/src/main/resources/common/message/ConsumerProtocolSubscription.json` and `...Assignment.json`,
`clients/.../consumer/internals/ConsumerProtocol.java`; librdkafka `src/rdkafka_assignor.c`
(`rd_kafka_consumer_protocol_member_metadata_new`) and `src/rdkafka_request.c` (`MemberState_consumer_write`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

from lab.assignors.contract import Subscription, TopicPartition

CONSUMER_PROTOCOL_TYPE = "consumer"
HIGHEST_VERSION = 3
"""The newest version of both schemas (Kafka's `ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION`)."""


class ConsumerProtocolError(ValueError):
    """The bytes do not follow the consumer protocol schema; the message says which field and at which byte."""


@dataclass(frozen=True)
class ConsumerSubscription:
    """A decoded ConsumerProtocolSubscription. `version` is the version found in the bytes, even when it is newer
    than `HIGHEST_VERSION` (then only the version 3 fields were read). Fields the version lacks keep their defaults."""

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "topics", tuple(self.topics))
        object.__setattr__(self, "owned_partitions", tuple(TopicPartition(*tp) for tp in self.owned_partitions))

    def to_assignor_subscription(self, group_instance_id: str | None = None) -> Subscription:
        """What the leader's assignor sees, as Kafka's `ConsumerProtocol.deserializeSubscription` builds it: a
        negative generation means "unknown" and an empty rack means "no rack"."""
        return Subscription(self.topics, self.owned_partitions,
                            generation=self.generation_id if self.generation_id >= 0 else None,
                            group_instance_id=group_instance_id, rack=self.rack_id or None, user_data=self.user_data)


@dataclass(frozen=True)
class ConsumerAssignment:
    """A decoded ConsumerProtocolAssignment: the partitions the leader gave one member (all versions look alike)."""

    version: int
    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", tuple(TopicPartition(*tp) for tp in self.partitions))


# --- writing --------------------------------------------------------------------------------------------------------

def _string(value: str | None, field: str) -> bytes:
    if value is None:
        return struct.pack(">h", -1)
    raw = value.encode("utf-8")
    if len(raw) > 0x7FFF:
        raise ConsumerProtocolError(f"{field} is {len(raw)} bytes of UTF-8, more than a STRING holds (32767)")
    return struct.pack(">h", len(raw)) + raw


def _bytes(value: bytes | None) -> bytes:
    return struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value


def _partitions(partitions: Iterable[TopicPartition], field: str) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    out = bytearray(struct.pack(">i", len(by_topic)))
    for topic, numbers in by_topic.items():
        out += _string(topic, f"{field} topic") + struct.pack(f">i{len(numbers)}i", len(numbers), *numbers)
    return bytes(out)


def _check_version(version: int, what: str) -> int:
    if version < 0:
        raise ConsumerProtocolError(f"unsupported {what} version {version}: versions start at 0")
    return min(version, HIGHEST_VERSION)  # Kafka writes a too-new version as the newest it knows


def encode_subscription(topics: Iterable[str], user_data: bytes | None = None,
                        owned_partitions: Iterable[TopicPartition] = (), generation_id: int = -1,
                        rack_id: str | None = None, *, version: int = HIGHEST_VERSION) -> bytes:
    """The JoinGroup metadata bytes of one member. Fields newer than `version` are left out."""
    version = _check_version(version, "subscription")
    names = list(topics)
    out = bytearray(struct.pack(">hi", version, len(names)))
    for topic in names:
        out += _string(topic, "topic")
    out += _bytes(user_data)
    try:
        if version >= 1:
            out += _partitions(owned_partitions, "owned_partitions")
        if version >= 2:
            out += struct.pack(">i", generation_id)
    except struct.error as exc:
        raise ConsumerProtocolError(f"cannot encode subscription: {exc}") from None
    if version >= 3:
        out += _string(rack_id, "rack_id")
    return bytes(out)


def encode_assignment(partitions: Iterable[TopicPartition], user_data: bytes | None = None, *,
                      version: int = HIGHEST_VERSION) -> bytes:
    """The SyncGroup assignment bytes for one member (the fields are the same in every version)."""
    version = _check_version(version, "assignment")
    try:
        return struct.pack(">h", version) + _partitions(partitions, "assigned_partitions") + _bytes(user_data)
    except struct.error as exc:
        raise ConsumerProtocolError(f"cannot encode assignment: {exc}") from None


# --- reading --------------------------------------------------------------------------------------------------------

class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.what, self.offset = bytes(data), what, 0

    def _take(self, size: int, field: str) -> bytes:
        left = len(self.data) - self.offset
        if size > left:
            raise ConsumerProtocolError(f"{self.what} truncated at byte {self.offset} reading {field}: "
                                        f"needed {size} bytes, {left} left")
        self.offset += size
        return self.data[self.offset - size:self.offset]

    def fixed(self, fmt: str, field: str) -> int:
        return int(struct.unpack(fmt, self._take(struct.calcsize(fmt), field))[0])

    def length(self, fmt: str, field: str, nullable: bool) -> int:
        start = self.offset
        value = self.fixed(fmt, field)
        if value < -1 or (value == -1 and not nullable):
            raise ConsumerProtocolError(f"{self.what}: negative length {value} for {field} at byte {start}"
                                        + ("" if value < -1 else f" (null, but {field} is not nullable)"))
        return value

    def string(self, field: str, nullable: bool = False) -> str | None:
        size = self.length(">h", field, nullable)
        if size < 0:
            return None
        start = self.offset
        try:
            return self._take(size, field).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConsumerProtocolError(f"{self.what}: {field} at byte {start} is not UTF-8 ({exc.reason})") from None

    def topic(self, field: str) -> str:
        value = self.string(field)
        assert value is not None  # non-nullable: string() rejected -1
        return value

    def nullable_bytes(self, field: str) -> bytes | None:
        size = self.length(">i", field, nullable=True)
        return None if size < 0 else self._take(size, field)

    def partitions(self, field: str) -> tuple[TopicPartition, ...]:
        out: list[TopicPartition] = []
        for index in range(self.length(">i", field, nullable=False)):
            topic = self.topic(f"{field}[{index}].topic")
            count = self.length(">i", f"{field}[{index}].partitions", nullable=False)
            raw = self._take(4 * count, f"{field}[{index}].partitions")
            out.extend(TopicPartition(topic, p) for p in struct.unpack(f">{count}i", raw))
        return tuple(out)

    def version(self) -> int:
        version = self.fixed(">h", "version")
        if version < 0:
            raise ConsumerProtocolError(f"unsupported {self.what} version {version}: versions start at 0")
        return version


def decode_subscription(data: bytes) -> ConsumerSubscription:
    """Read a member's JoinGroup metadata. Raises `ConsumerProtocolError` if the bytes are malformed."""
    reader = _Reader(data, "subscription")
    version = reader.version()
    topics = tuple(reader.topic(f"topics[{i}]") for i in range(reader.length(">i", "topics", nullable=False)))
    user_data = reader.nullable_bytes("user_data")
    owned = reader.partitions("owned_partitions") if version >= 1 else ()
    generation_id = reader.fixed(">i", "generation_id") if version >= 2 else -1
    rack_id = reader.string("rack_id", nullable=True) if version >= 3 else None
    return ConsumerSubscription(version, topics, user_data, owned, generation_id, rack_id)


def decode_assignment(data: bytes) -> ConsumerAssignment:
    """Read a member's SyncGroup assignment. Raises `ConsumerProtocolError` if the bytes are malformed."""
    reader = _Reader(data, "assignment")
    version = reader.version()
    partitions = reader.partitions("assigned_partitions")
    return ConsumerAssignment(version, partitions, reader.nullable_bytes("user_data"))

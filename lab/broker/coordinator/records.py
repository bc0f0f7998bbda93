"""The records of `__consumer_offsets`: how the group coordinator persists offsets and classic groups.

The coordinator keeps its state in memory and makes it durable by appending records to the internal, compacted topic
`__consumer_offsets`. Group g lives in partition `partition_for(g)` of it (50 partitions by default), so that
partition's leader coordinates all of g. Key and value each start with an int16 version; the *key's* version says
what the record is:

    key version 0 or 1  OffsetCommitKey   (group, topic, partition) -> OffsetCommitValue  (a committed offset)
    key version 2       GroupMetadataKey  (group)                   -> GroupMetadataValue (generation, members...)

Newer brokers also write KIP-848 consumer and share group records (key versions 3 and up); the lab does not.
Compaction keeps the last value of each key, and a record whose value is None, a *tombstone*, deletes the key: that
is how expired offsets and deleted groups disappear. A tombstone has no value bytes, so it needs no codec.

Values v0-3 use the classic encodings (STRING = int16 length + UTF-8, ARRAY = int32 count, BYTES = int32 length);
v4 is "flexible": lengths are unsigned varints of length + 1 (0 = null) and each struct ends with tagged fields (a
varint count, then tag, size and bytes for each). Group "g" committing offset 5 of t-0 at time 1000:

    key:   00 01   00 01 67   00 01 74   00 00 00 00        version 1, "g", "t", partition 0
    value: 00 03   00 00 00 00 00 00 00 05   ff ff ff ff    version 3, offset 5, leader_epoch -1
           00 00   00 00 00 00 00 00 03 e8                  metadata "", commit_timestamp 1000

    >>> encode_key(OffsetKey("g", "t", 0)).hex(" ")
    '00 01 00 01 67 00 01 74 00 00 00 00'
    >>> encode_offset_value(OffsetValue(offset=5, commit_timestamp=1000)).hex(" ")
    '00 03 00 00 00 00 00 00 00 05 ff ff ff ff 00 00 00 00 00 00 00 00 03 e8'

Kafka's choice of value version (`MetadataVersion.offsetCommitValueVersion` and `groupMetadataValueVersion`):
offsets v1 if the commit has an expire timestamp (old OffsetCommit requests with a retention time), else v3; groups
v3. Kafka 4.1 writes offsets as v4, which may carry the topic id in tagged field 0 (KAFKA-19141). Fields a version
lacks read as their defaults and are dropped when written, as Kafka does for these "ignorable" fields. A v0 group
has no rebalance_timeout: it reads as -1 (Kafka's loader then uses the session timeout).

Upstream: `group-coordinator/src/main/resources/common/message/{OffsetCommit,GroupMetadata}{Key,Value}.json`,
`GroupCoordinatorRecordSerde.java`, `GroupCoordinatorRecordHelpers.java`, `GroupMetadataManager.partitionFor`.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass

from lab.assignors.java_order import java_string_hash

CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"
DEFAULT_NUM_PARTITIONS = 50  # offsets.topic.num.partitions
OFFSET_KEY_VERSION, GROUP_KEY_VERSION = 1, 2  # what Kafka writes; offset key v0 has the same layout
HIGHEST_VALUE_VERSION = FLEXIBLE_VERSION = 4
_TOPIC_ID_TAG = 0


class RecordFormatError(ValueError):
    """The bytes are not a record Kafka would write (or not one the lab knows); the message says what and where."""


@dataclass(frozen=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupKey:
    group: str


@dataclass(frozen=True, kw_only=True)
class OffsetValue:
    """A committed offset. `expire_timestamp` (v1 only) is None when absent (-1 in the bytes), `topic_id` (v4, tag 0)
    when absent (Kafka's zero UUID)."""

    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int
    expire_timestamp: int | None = None
    topic_id: uuid.UUID | None = None

    def __post_init__(self) -> None:
        if self.topic_id is not None and self.topic_id.int == 0:
            object.__setattr__(self, "topic_id", None)


@dataclass(frozen=True, kw_only=True)
class MemberValue:
    """One member of a stored classic group; `subscription` and `assignment` are its consumer protocol bytes."""

    member_id: str
    group_instance_id: str | None = None
    client_id: str
    client_host: str
    rebalance_timeout: int = -1
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, kw_only=True)
class GroupValue:
    """A classic group as stored after each rebalance. An empty group is stored with protocol_type "", protocol and
    leader None and no members (`GroupCoordinatorRecordHelpers.newEmptyGroupMetadataRecord`)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: tuple[MemberValue, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", tuple(self.members))


def _check_version(version: int, what: str) -> None:
    if not 0 <= version <= HIGHEST_VALUE_VERSION:
        raise RecordFormatError(f"unknown {what} value version {version}: Kafka knows 0-{HIGHEST_VALUE_VERSION}")


# --- writing --------------------------------------------------------------------------------------------------------

class _Writer:
    def __init__(self, version: int, flexible: bool = False) -> None:
        self.out, self.flexible = bytearray(struct.pack(">h", version)), flexible

    def fixed(self, fmt: str, value: int) -> None:
        try:
            self.out += struct.pack(fmt, value)
        except struct.error as exc:
            raise RecordFormatError(f"cannot encode {value}: {exc}") from None

    def uvarint(self, value: int) -> None:
        while value >= 0x80:
            self.out.append(value & 0x7F | 0x80)
            value >>= 7
        self.out.append(value)

    def length(self, size: int | None, classic_fmt: str) -> None:
        """Classic: the length itself (-1 for null). Flexible: an unsigned varint of length + 1 (0 for null)."""
        if self.flexible:
            self.uvarint(0 if size is None else size + 1)
        else:
            self.fixed(classic_fmt, -1 if size is None else size)

    def string(self, *values: str | None) -> None:
        for value in values:
            raw = None if value is None else value.encode("utf-8")
            if raw is not None and len(raw) > 0x7FFF:
                raise RecordFormatError(f"string of {len(raw)} UTF-8 bytes is longer than a STRING holds (32767)")
            self.length(None if raw is None else len(raw), ">h")
            self.out += raw or b""

    def blob(self, *values: bytes) -> None:
        for value in values:
            self.length(len(value), ">i")
            self.out += value

    def tags(self, fields: dict[int, bytes] | None = None) -> None:
        """A flexible struct ends with its tagged fields: a count, then (tag, size, bytes) each, in tag order."""
        if self.flexible:
            self.uvarint(len(fields or {}))
            for tag, raw in sorted((fields or {}).items()):
                self.uvarint(tag)
                self.uvarint(len(raw))
                self.out += raw


def encode_key(key: OffsetKey | GroupKey) -> bytes:
    """Key bytes: version 1 for an offset commit, version 2 for group metadata (what Kafka writes)."""
    writer = _Writer(GROUP_KEY_VERSION if isinstance(key, GroupKey) else OFFSET_KEY_VERSION)
    writer.string(key.group)
    if isinstance(key, OffsetKey):
        writer.string(key.topic)
        writer.fixed(">i", key.partition)
    return bytes(writer.out)


def encode_offset_value(value: OffsetValue, version: int | None = None) -> bytes:
    """Value bytes of an offset commit. By default Kafka's choice: v1 if it expires, v4 with a topic id, else v3."""
    if version is None:
        version = 1 if value.expire_timestamp is not None else 4 if value.topic_id is not None else 3
    _check_version(version, "offset commit")
    writer = _Writer(version, version >= FLEXIBLE_VERSION)
    writer.fixed(">q", value.offset)
    if version >= 3:
        writer.fixed(">i", value.leader_epoch)
    writer.string(value.metadata)
    writer.fixed(">q", value.commit_timestamp)
    if version == 1:
        writer.fixed(">q", -1 if value.expire_timestamp is None else value.expire_timestamp)
    writer.tags({_TOPIC_ID_TAG: value.topic_id.bytes} if value.topic_id is not None else None)
    return bytes(writer.out)


def encode_group_value(value: GroupValue, version: int = 3) -> bytes:
    """Value bytes of a classic group (Kafka writes version 3)."""
    _check_version(version, "group metadata")
    writer = _Writer(version, version >= FLEXIBLE_VERSION)
    writer.string(value.protocol_type)
    writer.fixed(">i", value.generation)
    writer.string(value.protocol, value.leader)
    if version >= 2:
        writer.fixed(">q", value.current_state_timestamp)
    writer.length(len(value.members), ">i")
    for member in value.members:
        writer.string(member.member_id)
        if version >= 3:
            writer.string(member.group_instance_id)
        writer.string(member.client_id, member.client_host)
        if version >= 1:
            writer.fixed(">i", member.rebalance_timeout)
        writer.fixed(">i", member.session_timeout)
        writer.blob(member.subscription, member.assignment)
        writer.tags()
    writer.tags()
    return bytes(writer.out)


# --- reading --------------------------------------------------------------------------------------------------------

class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.what, self.offset, self.flexible = bytes(data), what, 0, False

    def take(self, size: int, field: str) -> bytes:
        left = len(self.data) - self.offset
        if size > left:
            raise RecordFormatError(f"{self.what} truncated at byte {self.offset} reading {field}: "
                                    f"needed {size} bytes, {left} left")
        self.offset += size
        return self.data[self.offset - size:self.offset]

    def fixed(self, fmt: str, field: str) -> int:
        return int(struct.unpack(fmt, self.take(struct.calcsize(fmt), field))[0])

    def uvarint(self, field: str) -> int:
        value = 0
        for shift in range(0, 35, 7):  # an int32 takes at most 5 bytes
            byte = self.take(1, field)[0]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
        raise RecordFormatError(f"{self.what}: varint for {field} longer than 5 bytes at byte {self.offset - 5}")

    def length(self, field: str, classic_fmt: str, nullable: bool = False) -> int:
        """A length, -1 for null; null in a non-nullable field, or below -1, is an error."""
        start = self.offset
        size = self.uvarint(field) - 1 if self.flexible else self.fixed(classic_fmt, field)
        if size < -1 or (size == -1 and not nullable):
            raise RecordFormatError(f"{self.what}: invalid length {size} for {field} at byte {start}"
                                    + ("" if size < -1 else f" (null, but {field} is not nullable)"))
        return size

    def nullable_string(self, field: str, nullable: bool = True) -> str | None:
        size, start = self.length(field, ">h", nullable), self.offset
        if size > 0x7FFF:
            raise RecordFormatError(f"{self.what}: {field} has invalid length {size} (a STRING holds 32767 bytes)")
        try:
            return None if size < 0 else self.take(size, field).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"{self.what}: {field} at byte {start} is not UTF-8 ({exc.reason})") from None

    def string(self, field: str) -> str:
        return self.nullable_string(field, nullable=False) or ""

    def blob(self, field: str) -> bytes:
        return self.take(self.length(field, ">i"), field)

    def tags(self, field: str) -> dict[int, bytes]:
        """A flexible struct's tagged fields, tag -> raw bytes (none before v4). Unknown tags are skipped by callers."""
        fields: dict[int, bytes] = {}
        for _ in range(self.uvarint(f"{field} tag count") if self.flexible else 0):
            tag = self.uvarint(f"{field} tag")
            fields[tag] = self.take(self.uvarint(f"{field} tag {tag} size"), f"{field} tag {tag}")
        return fields

    def value_version(self, what: str) -> int:
        version = self.fixed(">h", "version")
        _check_version(version, what)
        self.flexible = version >= FLEXIBLE_VERSION
        return version


def decode_key(data: bytes) -> OffsetKey | GroupKey:
    """Read a key, dispatching on its version: 0 or 1 is an offset commit, 2 a classic group."""
    reader = _Reader(data, "key")
    version = reader.fixed(">h", "version")
    if version in (0, 1):
        return OffsetKey(reader.string("group"), reader.string("topic"), reader.fixed(">i", "partition"))
    if version == GROUP_KEY_VERSION:
        return GroupKey(reader.string("group"))
    raise RecordFormatError(f"unknown key version {version}: the lab reads offset commits (0, 1) and classic group "
                            "metadata (2); KIP-848 consumer and share group records (3 and up) are not modelled")


def decode_offset_value(data: bytes) -> OffsetValue:
    """Read an offset commit value (versions 0-4)."""
    reader = _Reader(data, "offset commit value")
    version = reader.value_version("offset commit")
    offset = reader.fixed(">q", "offset")
    leader_epoch = reader.fixed(">i", "leader_epoch") if version >= 3 else -1
    metadata, commit_timestamp = reader.string("metadata"), reader.fixed(">q", "commit_timestamp")
    expire = reader.fixed(">q", "expire_timestamp") if version == 1 else -1
    topic_id = reader.tags("offset commit value").get(_TOPIC_ID_TAG)
    if topic_id is not None and len(topic_id) != 16:
        raise RecordFormatError(f"offset commit value: topic_id (tag 0) has {len(topic_id)} bytes, not 16")
    return OffsetValue(offset=offset, leader_epoch=leader_epoch, metadata=metadata, commit_timestamp=commit_timestamp,
                       expire_timestamp=None if expire == -1 else expire,
                       topic_id=None if topic_id is None else uuid.UUID(bytes=topic_id))


def _read_member(reader: _Reader, version: int, field: str) -> MemberValue:
    member_id = reader.string(f"{field}.member_id")
    instance_id = reader.nullable_string(f"{field}.group_instance_id") if version >= 3 else None
    client_id, client_host = reader.string(f"{field}.client_id"), reader.string(f"{field}.client_host")
    rebalance_timeout = reader.fixed(">i", f"{field}.rebalance_timeout") if version >= 1 else -1
    member = MemberValue(member_id=member_id, group_instance_id=instance_id, client_id=client_id,
                         client_host=client_host, rebalance_timeout=rebalance_timeout,
                         session_timeout=reader.fixed(">i", f"{field}.session_timeout"),
                         subscription=reader.blob(f"{field}.subscription"),
                         assignment=reader.blob(f"{field}.assignment"))
    reader.tags(field)
    return member


def decode_group_value(data: bytes) -> GroupValue:
    """Read a classic group's value (versions 0-4)."""
    reader = _Reader(data, "group metadata value")
    version = reader.value_version("group metadata")
    protocol_type, generation = reader.string("protocol_type"), reader.fixed(">i", "generation")
    protocol, leader = reader.nullable_string("protocol"), reader.nullable_string("leader")
    timestamp = reader.fixed(">q", "current_state_timestamp") if version >= 2 else -1
    members = tuple(_read_member(reader, version, f"members[{i}]") for i in range(reader.length("members", ">i")))
    reader.tags("group metadata value")
    return GroupValue(protocol_type=protocol_type, generation=generation, protocol=protocol, leader=leader,
                      current_state_timestamp=timestamp, members=members)


def partition_for(group_id: str, num_partitions: int = DEFAULT_NUM_PARTITIONS) -> int:
    """The `__consumer_offsets` partition of a group: Kafka's `Utils.abs(groupId.hashCode()) % numPartitions`,
    with Java's String.hashCode over UTF-16 code units wrapping at 32 bits.

    `Utils.abs` is `Math.abs`, except that Integer.MIN_VALUE maps to 0; it is not `n & 0x7fffffff` (that is
    `Utils.toPositive`, used by the producer's partitioner). "my-group" hashes to -1906497762 and so, with the
    default 50 partitions, lands on partition 12:

    >>> partition_for("my-group")
    12
    """
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    unsigned = java_string_hash(group_id)
    signed = unsigned - (1 << 32) if unsigned >= 1 << 31 else unsigned
    return (0 if signed == -(1 << 31) else abs(signed)) % num_partitions

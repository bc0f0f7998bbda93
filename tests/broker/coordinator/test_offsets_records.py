"""The `__consumer_offsets` records: Kafka's schemas written out by hand, a real Kafka 4.1 value, kafka-python's
generic schema codec as a second opinion, round trips through every version, and the group -> partition hash."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import struct
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.data_container import DataContainer
from kafka.protocol.schemas.fields.struct import StructField

from lab.broker.coordinator.records import (
    GroupKey,
    GroupValue,
    MemberValue,
    OffsetKey,
    OffsetValue,
    RecordFormatError,
    decode_group_value,
    decode_key,
    decode_offset_value,
    encode_group_value,
    encode_key,
    encode_offset_value,
    partition_for,
)

T_1700000000000 = "0000018bcfe56800"   # int64 1_700_000_000_000 (a commit time in ms)
T_1700000060000 = "0000018bcfe65260"   # int64 1_700_000_060_000 (an expire time, one minute later)

# --- keys -----------------------------------------------------------------------------------------------------------

OFFSET_KEY = bytes.fromhex("0001"                 # key version 1: OffsetCommitKey
                           "0003" "677270"        # group "grp"
                           "0006" "6f7264657273"  # topic "orders"
                           "00000003")            # partition 3


def test_offset_commit_key_is_version_1_group_topic_partition() -> None:
    assert encode_key(OffsetKey("grp", "orders", 3)) == OFFSET_KEY
    assert decode_key(OFFSET_KEY) == OffsetKey("grp", "orders", 3)


def test_a_version_0_offset_key_has_the_same_layout() -> None:
    assert decode_key(b"\x00\x00" + OFFSET_KEY[2:]) == OffsetKey("grp", "orders", 3)


def test_group_metadata_key_is_version_2_and_the_group() -> None:
    assert encode_key(GroupKey("grp")) == bytes.fromhex("0002" "0003" "677270")
    assert decode_key(bytes.fromhex("0002" "0003" "677270")) == GroupKey("grp")


@pytest.mark.parametrize("version", [3, 15, 16, -1])
def test_keys_the_lab_does_not_model_are_refused_by_version(version: int) -> None:
    # 3 and up are KIP-848 consumer group and share group records (GroupCoordinatorRecordSerde.apiMessageKeyFor).
    with pytest.raises(RecordFormatError, match=f"unknown key version {version}: .* KIP-848"):
        decode_key(struct.pack(">h", version) + bytes.fromhex("0001" "67"))


# --- offset commit values -------------------------------------------------------------------------------------------

OFFSET = "000000000000002a"  # offset 42
EPOCH = "00000007"           # leader_epoch 7 (v3+)
METADATA = "0001" "6d"       # metadata "m" (classic STRING)
COMMITTED = OffsetValue(offset=42, leader_epoch=7, metadata="m", commit_timestamp=1_700_000_000_000)


@pytest.mark.parametrize(("version", "hex_bytes", "value"), [
    (0, "0000" + OFFSET + METADATA + T_1700000000000, dataclasses.replace(COMMITTED, leader_epoch=-1)),
    (1, "0001" + OFFSET + METADATA + T_1700000000000 + T_1700000060000,
     dataclasses.replace(COMMITTED, leader_epoch=-1, expire_timestamp=1_700_000_060_000)),
    (2, "0002" + OFFSET + METADATA + T_1700000000000, dataclasses.replace(COMMITTED, leader_epoch=-1)),
    (3, "0003" + OFFSET + EPOCH + METADATA + T_1700000000000, COMMITTED),
    (4, "0004" + OFFSET + EPOCH + "02" "6d" + T_1700000000000 + "00",  # compact "m"; no tagged fields
     COMMITTED),
])
def test_offset_commit_value_versions_match_the_schema(version: int, hex_bytes: str, value: OffsetValue) -> None:
    assert encode_offset_value(value, version) == bytes.fromhex(hex_bytes)
    assert decode_offset_value(bytes.fromhex(hex_bytes)) == value


def test_a_value_written_by_kafka_4_1_is_read() -> None:
    # Seen on a Kafka 4.1.0 broker (twmb/franz-go issue #1105): version 4, offset 2217128, leader_epoch -1,
    # metadata "" (compact: 01), commit_timestamp 1758335260726, no tagged fields (00).
    blob = bytes.fromhex("0004" "000000000021d4a8" "ffffffff" "01" "0000019964f2d836" "00")
    value = OffsetValue(offset=2217128, leader_epoch=-1, metadata="", commit_timestamp=1758335260726)
    assert decode_offset_value(blob) == value
    assert encode_offset_value(value, 4) == blob


TOPIC_ID = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")


def test_a_topic_id_travels_in_tagged_field_0_of_version_4() -> None:
    blob = bytes.fromhex("0004" + OFFSET + EPOCH + "02" "6d" + T_1700000000000
                         + "01"                                          # one tagged field
                         + "00" "10" "6ba7b8109dad11d180b400c04fd430c8")  # tag 0, 16 bytes: the UUID
    with_id = dataclasses.replace(COMMITTED, topic_id=TOPIC_ID)
    assert encode_offset_value(with_id) == blob
    assert decode_offset_value(blob) == with_id


def test_unknown_tagged_fields_are_skipped() -> None:
    blob = bytes.fromhex("0004" + OFFSET + EPOCH + "02" "6d" + T_1700000000000 + "01" "05" "02" "abcd")
    assert decode_offset_value(blob) == COMMITTED


def test_the_default_version_is_kafkas_choice() -> None:
    assert encode_offset_value(COMMITTED)[:2] == b"\x00\x03"
    assert encode_offset_value(dataclasses.replace(COMMITTED, expire_timestamp=5))[:2] == b"\x00\x01"
    assert encode_offset_value(dataclasses.replace(COMMITTED, topic_id=TOPIC_ID))[:2] == b"\x00\x04"


# --- group metadata values ------------------------------------------------------------------------------------------

MEMBER = MemberValue(member_id="m1", group_instance_id="i1", client_id="c", client_host="/h",
                     rebalance_timeout=300_000, session_timeout=45_000, subscription=b"\x00\x03", assignment=b"")
GROUP = GroupValue(protocol_type="consumer", generation=1, protocol="range", leader="m1",
                   current_state_timestamp=1_700_000_000_000, members=(MEMBER,))
GROUP_V3 = bytes.fromhex(
    "0003"                     # version 3
    "0008" "636f6e73756d6572"  # protocol_type "consumer"
    "00000001"                 # generation 1
    "0005" "72616e6765"        # protocol "range"
    "0002" "6d31"              # leader "m1"
    + T_1700000000000 +        # current_state_timestamp
    "00000001"                 # members: 1
    "0002" "6d31"              #   member_id "m1"
    "0002" "6931"              #   group_instance_id "i1"
    "0001" "63"                #   client_id "c"
    "0002" "2f68"              #   client_host "/h"
    "000493e0"                 #   rebalance_timeout 300000
    "0000afc8"                 #   session_timeout 45000
    "00000002" "0003"          #   subscription: 2 bytes
    "00000000")                #   assignment: empty
GROUP_V4 = bytes.fromhex(
    "0004"                     # version 4, flexible: compact lengths are varint(length + 1)
    "09" "636f6e73756d6572"    # protocol_type "consumer"
    "00000001"                 # generation 1
    "06" "72616e6765"          # protocol "range"
    "03" "6d31"                # leader "m1"
    + T_1700000000000 +        # current_state_timestamp
    "02"                       # members: 1
    "03" "6d31" "03" "6931"    #   member_id "m1", group_instance_id "i1"
    "02" "63" "03" "2f68"      #   client_id "c", client_host "/h"
    "000493e0" "0000afc8"      #   rebalance_timeout 300000, session_timeout 45000
    "03" "0003" "01"           #   subscription 2 bytes, assignment empty
    "00"                       #   the member's tagged fields: none
    "00")                      # the group's tagged fields: none
GROUP_V0 = bytes.fromhex(
    "0000" "0008" "636f6e73756d6572" "00000001" "0005" "72616e6765" "0002" "6d31"  # no current_state_timestamp
    "00000001" "0002" "6d31" "0001" "63" "0002" "2f68"  # member: no group_instance_id ...
    "0000afc8" "00000002" "0003" "00000000")            # ... and no rebalance_timeout


def test_group_metadata_value_version_3_is_what_kafka_writes() -> None:
    assert encode_group_value(GROUP) == GROUP_V3
    assert decode_group_value(GROUP_V3) == GROUP


def test_group_metadata_value_version_4_uses_compact_lengths_and_tagged_fields() -> None:
    assert encode_group_value(GROUP, 4) == GROUP_V4
    assert decode_group_value(GROUP_V4) == GROUP


def test_version_0_has_no_timestamp_instance_id_or_rebalance_timeout() -> None:
    old = GroupValue(protocol_type="consumer", generation=1, protocol="range", leader="m1",
                     members=[dataclasses.replace(MEMBER, group_instance_id=None, rebalance_timeout=-1)])
    assert encode_group_value(GROUP, 0) == GROUP_V0
    assert decode_group_value(GROUP_V0) == old


def test_an_empty_group_is_stored_without_protocol_leader_or_members() -> None:
    empty = GroupValue(protocol_type="", generation=0, protocol=None, leader=None,
                       current_state_timestamp=1_700_000_000_000)
    blob = bytes.fromhex("0003" "0000" "00000000" "ffff" "ffff" + T_1700000000000 + "00000000")
    assert encode_group_value(empty) == blob
    assert decode_group_value(blob) == empty


@pytest.mark.parametrize(("decode", "blob", "message"), [
    (decode_offset_value, "0005", "unknown offset commit value version 5: Kafka knows 0-4"),
    (decode_offset_value, "0003" + OFFSET + EPOCH + "ffff",
     "offset commit value: invalid length -1 for metadata at byte 14 (null, but metadata is not nullable)"),
    (decode_offset_value, "0004" + OFFSET + EPOCH + "ffffffffff01", "varint for metadata longer than 5 bytes"),
    (decode_offset_value, "0004" + OFFSET + EPOCH + "01" + T_1700000000000 + "01" "00" "02" "abcd",
     "topic_id (tag 0) has 2 bytes, not 16"),
    (decode_group_value, GROUP_V3[:60].hex(),
     "group metadata value truncated at byte 58 reading members[0].session_timeout: needed 4 bytes, 2 left"),
    (decode_group_value, "0003" "0000" "00000000" "ffff" "ffff" + T_1700000000000 + "ffffffff",
     "invalid length -1 for members at byte 20 (null, but members is not nullable)"),
])
def test_malformed_values_name_the_field_and_the_byte(decode: Any, blob: str, message: str) -> None:
    with pytest.raises(RecordFormatError, match=re.escape(message)):
        decode(bytes.fromhex(blob))


# --- a second opinion: kafka-python's generic schema codec fed Kafka's JSON schemas --------------------------------
# Restated from apache/kafka group-coordinator/src/main/resources/common/message/*.json (trunk, October 2024).

def _field(name: str, type_: str, versions: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "versions": versions, **extra}


def _schema(name: str, *fields: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "type": "data", "validVersions": "0-4", "flexibleVersions": "4+", "fields": list(fields)}


OFFSET_COMMIT_VALUE_SCHEMA = _schema(
    "OffsetCommitValue",
    _field("offset", "int64", "0+"), _field("leaderEpoch", "int32", "3+", default=-1, ignorable=True),
    _field("metadata", "string", "0+"), _field("commitTimestamp", "int64", "0+"),
    _field("expireTimestamp", "int64", "1", default=-1, ignorable=True))
GROUP_METADATA_VALUE_SCHEMA = _schema(
    "GroupMetadataValue",
    _field("protocolType", "string", "0+"), _field("generation", "int32", "0+"),
    _field("protocol", "string", "0+", nullableVersions="0+"), _field("leader", "string", "0+", nullableVersions="0+"),
    _field("currentStateTimestamp", "int64", "2+", default=-1, ignorable=True),
    _field("members", "[]MemberMetadata", "0+", fields=[
        _field("memberId", "string", "0+"),
        _field("groupInstanceId", "string", "3+", default="null", nullableVersions="3+", ignorable=True),
        _field("clientId", "string", "0+"), _field("clientHost", "string", "0+"),
        _field("rebalanceTimeout", "int32", "1+", default=-1, ignorable=True),
        _field("sessionTimeout", "int32", "0+"), _field("subscription", "bytes", "0+"),
        _field("assignment", "bytes", "0+")]))


def _kafka_python_type(schema: dict[str, Any]) -> Any:
    message = type(schema["name"], (DataContainer,), {"_struct": StructField(schema)})
    message._struct.set_data_class(message)
    return message


KpOffsetValue = _kafka_python_type(OFFSET_COMMIT_VALUE_SCHEMA)
KpGroupValue = _kafka_python_type(GROUP_METADATA_VALUE_SCHEMA)


def _kafka_python_bytes(message: Any, version: int) -> bytes:
    flexible = version >= 4
    return struct.pack(">h", version) + message.encode(version=version, compact=flexible, tagged=flexible)


names = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)
int32s, int64s = st.integers(-(2**31), 2**31 - 1), st.integers(-(2**63), 2**63 - 1)
offset_values = st.builds(OffsetValue, offset=int64s, leader_epoch=int32s, metadata=names, commit_timestamp=int64s,
                          expire_timestamp=st.none() | int64s.filter(lambda t: t != -1),
                          topic_id=st.none() | st.uuids())
member_values = st.builds(MemberValue, member_id=names, group_instance_id=st.none() | names, client_id=names,
                          client_host=names, rebalance_timeout=int32s, session_timeout=int32s,
                          subscription=st.binary(max_size=12), assignment=st.binary(max_size=12))
group_values = st.builds(GroupValue, protocol_type=names, generation=int32s, protocol=st.none() | names,
                         leader=st.none() | names, current_state_timestamp=int64s,
                         members=st.lists(member_values, max_size=3).map(tuple))
versions = st.integers(0, 4)


def _offset_as_written(value: OffsetValue, version: int) -> OffsetValue:
    """What survives a given version: fields it lacks come back as their defaults."""
    return dataclasses.replace(value, leader_epoch=value.leader_epoch if version >= 3 else -1,
                               expire_timestamp=value.expire_timestamp if version == 1 else None,
                               topic_id=value.topic_id if version >= 4 else None)


def _group_as_written(value: GroupValue, version: int) -> GroupValue:
    members = tuple(dataclasses.replace(m, group_instance_id=m.group_instance_id if version >= 3 else None,
                                        rebalance_timeout=m.rebalance_timeout if version >= 1 else -1)
                    for m in value.members)
    return dataclasses.replace(value, members=members,
                               current_state_timestamp=value.current_state_timestamp if version >= 2 else -1)


@given(offset_values, versions)
def test_offset_values_round_trip_through_every_version(value: OffsetValue, version: int) -> None:
    assert decode_offset_value(encode_offset_value(value, version)) == _offset_as_written(value, version)


@given(group_values, versions)
def test_group_values_round_trip_through_every_version(value: GroupValue, version: int) -> None:
    assert decode_group_value(encode_group_value(value, version)) == _group_as_written(value, version)


@given(st.one_of(st.builds(OffsetKey, names, names, int32s), st.builds(GroupKey, names)))
def test_keys_round_trip(key: OffsetKey | GroupKey) -> None:
    assert decode_key(encode_key(key)) == key


@given(offset_values.map(lambda v: dataclasses.replace(v, topic_id=None)), versions)
def test_offset_value_bytes_equal_kafka_pythons(value: OffsetValue, version: int) -> None:
    theirs = KpOffsetValue(version=version, offset=value.offset, leader_epoch=value.leader_epoch,
                           metadata=value.metadata, commit_timestamp=value.commit_timestamp,
                           expire_timestamp=-1 if value.expire_timestamp is None else value.expire_timestamp)
    ours = encode_offset_value(value, version)
    assert ours == _kafka_python_bytes(theirs, version)
    read_back = KpOffsetValue.decode(io.BytesIO(ours[2:]), version=version, compact=version >= 4, tagged=version >= 4)
    assert (read_back.offset, read_back.metadata) == (value.offset, value.metadata)


@given(group_values, versions)
def test_group_value_bytes_equal_kafka_pythons(value: GroupValue, version: int) -> None:
    members = [KpGroupValue.MemberMetadata(
        version=version, member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
        client_host=m.client_host, rebalance_timeout=m.rebalance_timeout, session_timeout=m.session_timeout,
        subscription=m.subscription, assignment=m.assignment) for m in value.members]
    theirs = KpGroupValue(version=version, protocol_type=value.protocol_type, generation=value.generation,
                          protocol=value.protocol, leader=value.leader,
                          current_state_timestamp=value.current_state_timestamp, members=members)
    ours = encode_group_value(value, version)
    assert ours == _kafka_python_bytes(theirs, version)
    read_back = KpGroupValue.decode(io.BytesIO(ours[2:]), version=version, compact=version >= 4, tagged=version >= 4)
    assert [m.member_id for m in read_back.members] == [m.member_id for m in value.members]


@given(st.one_of(
    st.builds(OffsetKey, names, names, int32s).map(lambda k: (decode_key, encode_key(k))),
    st.tuples(offset_values, versions).map(lambda vv: (decode_offset_value, encode_offset_value(*vv))),
    st.tuples(group_values, versions).map(lambda vv: (decode_group_value, encode_group_value(*vv)))), st.data())
def test_a_truncated_record_is_always_a_record_format_error(case: tuple[Any, bytes], data: st.DataObject) -> None:
    decode, encoded = case
    cut = data.draw(st.integers(0, len(encoded) - 1), label="cut")
    with pytest.raises(RecordFormatError, match="truncated at byte"):
        decode(encoded[:cut])


@given(st.tuples(st.integers(0, 4).map(lambda v: struct.pack(">h", v)), st.binary(max_size=64)).map(b"".join))
def test_arbitrary_bytes_decode_or_raise_record_format_error(blob: bytes) -> None:
    for decode in (decode_key, decode_offset_value, decode_group_value):
        with contextlib.suppress(RecordFormatError):
            decode(blob)


# --- which partition of __consumer_offsets a group lives in ---------------------------------------------------------

def java_hash_code(text: str) -> int:
    """Java's String.hashCode written out independently: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, in
    signed 32-bit arithmetic that wraps around."""
    units = struct.unpack(f">{len(text.encode('utf-16-be')) // 2}H", text.encode("utf-16-be"))
    h = 0
    for unit in units:
        h = (31 * h + unit) % 2**32
    return h - 2**32 if h >= 2**31 else h


# hashCode() values printed by OpenJDK 17 ("...".hashCode()); partition = Utils.abs(hash) % 50.
@pytest.mark.parametrize(("group", "java_hash", "partition"), [
    ("", 0, 0),
    ("a", 97, 47),
    ("my-group", -1906497762, 12),
    ("group-with-a-long-name-overflowing", -1877197910, 10),
    ("g\U0001F600", 1871882, 32),               # one character outside the BMP = two UTF-16 code units
    ("polygenelubricants", -(2**31), 0),        # Integer.MIN_VALUE: Utils.abs gives 0
])
def test_a_group_lives_in_the_partition_kafka_computes(group: str, java_hash: int, partition: int) -> None:
    assert java_hash_code(group) == java_hash
    assert partition_for(group, 50) == partition


def test_utils_abs_is_not_the_producers_to_positive_mask() -> None:
    # For a negative hash the two differ: the mask would put "my-group" on 36, Kafka's coordinator uses 12.
    assert (-1906497762 & 0x7FFFFFFF) % 50 == 36
    assert partition_for("my-group") == 12
    assert partition_for("my-group", 1) == 0
    with pytest.raises(ValueError, match="positive"):
        partition_for("my-group", 0)

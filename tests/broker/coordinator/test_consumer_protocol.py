"""The consumer protocol bytes inside JoinGroup and SyncGroup: Kafka's schemas written out by hand, kafka-python's
independent codec as a second opinion, and round trips through every version."""

from __future__ import annotations

import contextlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.consumer import ConsumerProtocolAssignment as KafkaPythonAssignment
from kafka.protocol.consumer import ConsumerProtocolSubscription as KafkaPythonSubscription

from lab.assignors import Subscription, TopicPartition
from lab.broker.coordinator.consumer_protocol import (
    ConsumerAssignment,
    ConsumerProtocolError,
    ConsumerSubscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)

# ConsumerProtocolSubscription.json, one field per fragment, for topics [t0, t1], user_data 01 02, owning t0-0, t0-2
# and t1-1 in generation 7 on rack "r1". Each version appends one field, so version v is the first 2 + v fragments.
TOPICS = "00000002" "0002" "7430" "0002" "7431"             # ARRAY count 2; STRING "t0"; STRING "t1"
USER_DATA = "00000002" "0102"                               # BYTES length 2: 01 02
OWNED = ("00000002"                                         # owned_partitions: ARRAY of 2 topics
         "0002" "7430" "00000002" "00000000" "00000002"     #   "t0": [0, 2]
         "0002" "7431" "00000001" "00000001")               #   "t1": [1]
GENERATION = "00000007"                                     # generation_id 7 (v2+)
RACK = "0002" "7231"                                        # rack_id "r1" (v3+)
FIELDS = [TOPICS, USER_DATA, OWNED, GENERATION, RACK]
OWNED_PARTITIONS = [TopicPartition("t0", 0), TopicPartition("t0", 2), TopicPartition("t1", 1)]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_each_version_writes_the_schema_fields_it_has(version: int) -> None:
    expected = bytes.fromhex(f"000{version}" + "".join(FIELDS[:2 + version]))
    encoded = encode_subscription(["t0", "t1"], b"\x01\x02", OWNED_PARTITIONS, 7, "r1", version=version)
    assert encoded == expected


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_each_version_reads_back_with_defaults_for_missing_fields(version: int) -> None:
    decoded = decode_subscription(bytes.fromhex(f"000{version}" + "".join(FIELDS[:2 + version])))
    assert decoded == ConsumerSubscription(
        version=version, topics=("t0", "t1"), user_data=b"\x01\x02",
        owned_partitions=tuple(OWNED_PARTITIONS) if version >= 1 else (),
        generation_id=7 if version >= 2 else -1, rack_id="r1" if version >= 3 else None)


def test_what_librdkafka_sends_without_a_rack_or_owned_partitions() -> None:
    # rd_kafka_consumer_protocol_member_metadata_new: always v3, empty (not null) user data, rack null.
    blob = bytes.fromhex("0003"                  # version 3
                         "00000001" "0006" "6f7264657273"  # topics: ["orders"]
                         "00000000"              # user_data: empty
                         "00000000"              # owned_partitions: none
                         "ffffffff"              # generation_id -1
                         "ffff")                 # rack_id null
    decoded = decode_subscription(blob)
    assert decoded == ConsumerSubscription(version=3, topics=("orders",), user_data=b"")
    assert decoded.to_assignor_subscription() == Subscription(["orders"], user_data=b"")


def test_assignor_subscription_treats_negative_generation_and_empty_rack_as_unknown() -> None:
    sub = ConsumerSubscription(version=3, topics=("t",), generation_id=-1, rack_id="")
    converted = sub.to_assignor_subscription(group_instance_id="static-1")
    assert (converted.generation, converted.rack, converted.group_instance_id) == (None, None, "static-1")
    known = ConsumerSubscription(version=3, topics=("t",), owned_partitions=[("t", 1)], generation_id=0, rack_id="r")
    assert known.to_assignor_subscription() == Subscription(["t"], [TopicPartition("t", 1)], generation=0, rack="r")


def test_a_newer_version_is_read_with_the_fields_version_3_knows() -> None:
    blob = bytes.fromhex("0009" + "".join(FIELDS) + "deadbeef")  # version 9, a field the lab does not know
    decoded = decode_subscription(blob)
    assert decoded.version == 9
    assert (decoded.topics, decoded.generation_id, decoded.rack_id) == (("t0", "t1"), 7, "r1")


def test_writing_a_version_newer_than_3_writes_version_3_as_kafka_does() -> None:
    assert encode_subscription(["t0", "t1"], b"\x01\x02", OWNED_PARTITIONS, 7, "r1", version=9) == \
        bytes.fromhex("0003" + "".join(FIELDS))
    assert encode_assignment([], version=5)[:2] == b"\x00\x03"


# librdkafka's SyncGroup assignment (rd_kafka_group_MemberState_consumer_write): version 0, t-1 and t-2, no user data.
ASSIGNMENT_V0 = bytes.fromhex("0000"                          # version 0
                              "00000001"                      # assigned_partitions: 1 topic
                              "0001" "74"                     #   "t"
                              "00000002" "00000001" "00000002"  #   [1, 2]
                              "ffffffff")                     # user_data null


def test_assignment_bytes_match_the_schema() -> None:
    partitions = [TopicPartition("t", 1), TopicPartition("t", 2)]
    assert encode_assignment(partitions, version=0) == ASSIGNMENT_V0
    assert decode_assignment(ASSIGNMENT_V0) == ConsumerAssignment(0, tuple(partitions), None)


def test_assignment_groups_partitions_by_topic_in_order_of_first_appearance() -> None:
    encoded = encode_assignment([TopicPartition("b", 0), TopicPartition("a", 5), TopicPartition("b", 1)], version=3)
    assert encoded == bytes.fromhex("0003" "00000002"          # version 3, 2 topics
                                    "0001" "62" "00000002" "00000000" "00000001"  # "b": [0, 1]
                                    "0001" "61" "00000001" "00000005"             # "a": [5]
                                    "ffffffff")                                   # user_data null


@pytest.mark.parametrize(("blob", "message"), [
    ("", "subscription truncated at byte 0 reading version: needed 2 bytes, 0 left"),
    ("ffff", "unsupported subscription version -1"),
    ("0000" "ffffffff", "negative length -1 for topics at byte 2 (null, but topics is not nullable)"),
    ("0000" "00000001" "fffe", "negative length -2 for topics[0] at byte 6"),
    ("0000" "00000001" "0002" "74", "truncated at byte 8 reading topics[0]: needed 2 bytes, 1 left"),
    ("0000" "00000001" "0001" "ff" "ffffffff", "topics[0] at byte 8 is not UTF-8"),
    ("0001" "00000000" "ffffffff" "00000001" "0001" "74" "7fffffff",
     "truncated at byte 21 reading owned_partitions[0].partitions: needed 8589934588 bytes, 0 left"),
    ("0003" "00000000" "ffffffff" "00000000" "ffffffff" "fffd", "negative length -3 for rack_id at byte 18"),
])
def test_malformed_subscriptions_name_the_field_and_the_byte(blob: str, message: str) -> None:
    with pytest.raises(ConsumerProtocolError, match=re.escape(message)):
        decode_subscription(bytes.fromhex(blob))


def test_values_that_do_not_fit_their_fields_are_refused_when_encoding() -> None:
    with pytest.raises(ConsumerProtocolError, match="cannot encode assignment"):
        encode_assignment([TopicPartition("t", 2**31)])
    with pytest.raises(ConsumerProtocolError, match="more than a STRING holds"):
        encode_subscription(["x" * 40_000])
    with pytest.raises(ConsumerProtocolError, match="version -1"):
        encode_subscription(["t"], version=-1)


# --- properties -----------------------------------------------------------------------------------------------------

names = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)
int32s = st.integers(-(2**31), 2**31 - 1)
# Partitions grouped by topic, as they travel: the decoder gives them back in that grouped order.
grouped_partitions = st.dictionaries(names, st.lists(int32s, min_size=1, max_size=4), max_size=4).map(
    lambda by_topic: tuple(TopicPartition(t, p) for t, ps in by_topic.items() for p in ps))
subscriptions = st.builds(
    ConsumerSubscription, version=st.integers(0, 3), topics=st.lists(names, max_size=5).map(tuple),
    user_data=st.none() | st.binary(max_size=16), owned_partitions=grouped_partitions, generation_id=int32s,
    rack_id=st.none() | names)
assignments = st.builds(ConsumerAssignment, version=st.integers(0, 3), partitions=grouped_partitions,
                        user_data=st.none() | st.binary(max_size=16))


def _encode(sub: ConsumerSubscription) -> bytes:
    return encode_subscription(sub.topics, sub.user_data, sub.owned_partitions, sub.generation_id, sub.rack_id,
                               version=sub.version)


def _as_written(sub: ConsumerSubscription) -> ConsumerSubscription:
    """What survives encoding at `sub.version`: later fields fall back to their defaults."""
    v = sub.version
    return ConsumerSubscription(v, sub.topics, sub.user_data, sub.owned_partitions if v >= 1 else (),
                                sub.generation_id if v >= 2 else -1, sub.rack_id if v >= 3 else None)


def _grouped(partitions: tuple[TopicPartition, ...]) -> dict[str, list[int]]:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return by_topic


@given(subscriptions)
def test_subscriptions_round_trip_through_every_version(sub: ConsumerSubscription) -> None:
    assert decode_subscription(_encode(sub)) == _as_written(sub)


@given(assignments)
def test_assignments_round_trip_through_every_version(assignment: ConsumerAssignment) -> None:
    encoded = encode_assignment(assignment.partitions, assignment.user_data, version=assignment.version)
    assert decode_assignment(encoded) == assignment


@given(subscriptions)
def test_subscription_bytes_equal_kafka_pythons(sub: ConsumerSubscription) -> None:
    owned = [KafkaPythonSubscription.TopicPartition(topic=topic, partitions=partitions)
             for topic, partitions in _grouped(sub.owned_partitions).items()]
    theirs = KafkaPythonSubscription(
        version=sub.version, topics=list(sub.topics), user_data=sub.user_data, owned_partitions=owned,
        generation_id=sub.generation_id, rack_id=sub.rack_id).encode(version=sub.version)
    assert _encode(sub) == theirs
    decoded = KafkaPythonSubscription.decode(_encode(sub))
    assert (decoded.version, decoded.topics) == (sub.version, list(sub.topics))


@given(assignments)
def test_assignment_bytes_equal_kafka_pythons(assignment: ConsumerAssignment) -> None:
    grouped = [KafkaPythonAssignment.TopicPartition(topic=topic, partitions=partitions)
               for topic, partitions in _grouped(assignment.partitions).items()]
    theirs = KafkaPythonAssignment(version=assignment.version, assigned_partitions=grouped,
                                   user_data=assignment.user_data).encode(version=assignment.version)
    ours = encode_assignment(assignment.partitions, assignment.user_data, version=assignment.version)
    assert ours == theirs
    assert tuple(KafkaPythonAssignment.decode(ours).partitions()) == assignment.partitions


@given(subscriptions, st.data())
def test_a_truncated_subscription_is_always_a_consumer_protocol_error(sub: ConsumerSubscription,
                                                                       data: st.DataObject) -> None:
    encoded = _encode(sub)
    cut = data.draw(st.integers(0, len(encoded) - 1), label="cut")
    with pytest.raises(ConsumerProtocolError, match="truncated at byte"):
        decode_subscription(encoded[:cut])


@given(assignments, st.data())
def test_a_truncated_assignment_is_always_a_consumer_protocol_error(assignment: ConsumerAssignment,
                                                                     data: st.DataObject) -> None:
    encoded = encode_assignment(assignment.partitions, assignment.user_data, version=assignment.version)
    cut = data.draw(st.integers(0, len(encoded) - 1), label="cut")
    with pytest.raises(ConsumerProtocolError, match="truncated at byte"):
        decode_assignment(encoded[:cut])


@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_consumer_protocol_error(blob: bytes) -> None:
    for decode in (decode_subscription, decode_assignment):
        with contextlib.suppress(ConsumerProtocolError):
            decode(blob)

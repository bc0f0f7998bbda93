"""The eager sticky assignor's user data: Kafka's StickyAssignor schema, byte for byte."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from lab.assignors import CooperativeStickyAssignor, StickyAssignor, Subscription, TopicPartition
from lab.assignors.sticky_user_data import MemberData, decode_cooperative_user_data

# Schema version 1, written out by hand: ARRAY(int32) of {STRING topic (int16 len + UTF-8), ARRAY(int32) of INT32},
# then INT32 generation.
ONE_TOPIC_GENERATION_5 = bytes.fromhex(
    "00000001"            # one topic
    "0001" "74"           # "t"
    "00000002"            # two partitions
    "00000000" "00000002"  # 0 and 2
    "00000005"            # generation 5
)


def test_user_data_for_one_topic_matches_kafkas_version_1_bytes() -> None:
    encoded = StickyAssignor.encode_user_data([TopicPartition("t", 0), TopicPartition("t", 2)], 5)
    assert encoded == ONE_TOPIC_GENERATION_5


def test_user_data_groups_topics_in_java_hash_map_order() -> None:
    # Java: "topic".hashCode() = 110546223 -> bucket 9 of 16; "other".hashCode() = 106069776 -> bucket 2.
    # Kafka's HashMap therefore yields "other" first, whatever order the partitions came in.
    encoded = StickyAssignor.encode_user_data([TopicPartition("topic", 0), TopicPartition("other", 1)], 1)
    topic_entry = struct.pack(">h", 5) + b"topic" + struct.pack(">ii", 1, 0)
    other_entry = struct.pack(">h", 5) + b"other" + struct.pack(">ii", 1, 1)
    assert encoded == struct.pack(">i", 2) + other_entry + topic_entry + struct.pack(">i", 1)


def test_hand_built_version_1_bytes_decode_to_partitions_and_generation() -> None:
    assert StickyAssignor.decode_user_data(ONE_TOPIC_GENERATION_5) == MemberData(
        (TopicPartition("t", 0), TopicPartition("t", 2)), 5)


def test_version_0_bytes_without_a_generation_are_still_read() -> None:
    version_0 = ONE_TOPIC_GENERATION_5[:-4]
    assert StickyAssignor.decode_user_data(version_0) == MemberData(
        (TopicPartition("t", 0), TopicPartition("t", 2)), None)


def test_corrupt_user_data_means_owning_nothing_at_default_generation() -> None:
    assert StickyAssignor.decode_user_data(b"\xff\xff") == MemberData((), -1)


def test_missing_generation_is_encoded_as_version_0() -> None:
    assert StickyAssignor.encode_user_data([TopicPartition("t", 0), TopicPartition("t", 2)], None) == \
        ONE_TOPIC_GENERATION_5[:-4]


topic_names = st.text(alphabet=st.characters(codec="utf-8"), min_size=0, max_size=12)


@given(owned=st.lists(st.tuples(topic_names, st.integers(0, 2**31 - 1)), max_size=20, unique=True),
       generation=st.integers(-(2**31), 2**31 - 1))
def test_user_data_round_trips_through_bytes(owned: list[tuple[str, int]], generation: int) -> None:
    partitions = [TopicPartition(*tp) for tp in owned]
    decoded = StickyAssignor.decode_user_data(StickyAssignor.encode_user_data(partitions, generation))
    assert sorted(decoded.partitions) == sorted(partitions)
    assert decoded.generation == generation


def test_eager_sticky_reads_ownership_from_the_bytes_not_the_owned_field() -> None:
    sub = Subscription(["t"], owned_partitions=[TopicPartition("t", 9)], generation=7,
                       user_data=ONE_TOPIC_GENERATION_5)
    assert StickyAssignor().member_data(sub) == MemberData((TopicPartition("t", 0), TopicPartition("t", 2)), 5)


def test_cooperative_sticky_falls_back_to_the_generation_in_its_user_data() -> None:
    sub = Subscription(["t"], owned_partitions=[TopicPartition("t", 1)],
                       user_data=CooperativeStickyAssignor.encode_user_data(4))
    assert CooperativeStickyAssignor().member_data(sub) == MemberData((TopicPartition("t", 1),), 4)
    assert decode_cooperative_user_data(b"\x00") == -1

"""The `lab assign` group syntax: what parses, and what the errors say."""

from __future__ import annotations

import pytest

from lab.assignors import TopicPartition
from lab.assignors.specs import SpecError, parse_member, parse_owned, parse_racks, parse_topics


def test_topics_parse_into_partition_counts() -> None:
    assert parse_topics("t0:3, t1:12") == {"t0": 3, "t1": 12}


def test_a_member_may_declare_a_static_instance_id() -> None:
    assert parse_member("c0@i1=t0,t1") == ("c0", "i1", ["t0", "t1"])
    assert parse_member("c1=t0") == ("c1", None, ["t0"])


def test_owned_partitions_parse_as_topic_partition_pairs() -> None:
    assert parse_owned("c0=t0:0,my:topic:2") == ("c0", [TopicPartition("t0", 0), TopicPartition("my:topic", 2)])


def test_racks_name_either_a_consumer_or_replica_racks() -> None:
    consumers, replicas = parse_racks(["c0=a", "t0:1=a+b", "t1=c"], ["c0"], {"t0": 2, "t1": 2})
    assert consumers == {"c0": "a"}
    assert replicas == {TopicPartition("t0", 1): {"a", "b"}, TopicPartition("t1", 0): {"c"},
                        TopicPartition("t1", 1): {"c"}}


@pytest.mark.parametrize("text", ["t0", "t0:x", ":3", "t0:3,,t1:2"])
def test_bad_topics_say_what_was_expected(text: str) -> None:
    with pytest.raises(SpecError, match="Expected TOPIC:PARTITIONS"):
        parse_topics(text)


def test_a_rack_for_a_partition_that_does_not_exist_is_rejected() -> None:
    with pytest.raises(SpecError, match="neither a member nor an existing partition"):
        parse_racks(["t0:5=a"], ["c0"], {"t0": 2})

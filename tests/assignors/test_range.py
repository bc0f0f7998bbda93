"""RangeAssignor against Kafka's and librdkafka's own test cases, plus the scenarios the lessons use."""

from __future__ import annotations

from typing import Any

import pytest

from lab.assignors import RangeAssignor, Subscription, TopicPartition, get, is_co_partitioned
from lab.grading.assignor_cases import plain_subscriptions, range_roundrobin_problems
from tests.assignors.vectors import load

RANGE_CASES = [case for case in load("assignors_range_roundrobin.json") if case["assignor"] == "range"]


@pytest.mark.parametrize("case", RANGE_CASES, ids=[case["name"] for case in RANGE_CASES])
def test_range_matches_upstream_case(case: dict[str, Any]) -> None:
    for step in case["steps"]:
        subscriptions = plain_subscriptions(step)
        assignment = get("range").assign(step["partitions_per_topic"], subscriptions)
        assert range_roundrobin_problems(case, step, assignment, subscriptions) == []


def test_range_gives_the_first_member_the_extra_partition_of_every_topic() -> None:
    members = {"C0": Subscription(["t0", "t1", "t2"]), "C1": Subscription(["t0", "t1", "t2"])}
    assignment = RangeAssignor().assign({"t0": 3, "t1": 3, "t2": 3}, members)
    assert [len(assignment["C0"]), len(assignment["C1"])] == [6, 3]


def test_range_orders_static_members_by_instance_id_before_dynamic_ones() -> None:
    members = {"a-dynamic": Subscription(["t"]), "z-static": Subscription(["t"], group_instance_id="i1")}
    assignment = RangeAssignor().assign({"t": 3}, members)
    assert assignment == {"z-static": [TopicPartition("t", 0), TopicPartition("t", 1)],
                          "a-dynamic": [TopicPartition("t", 2)]}


def test_range_keeps_topics_with_the_same_partition_count_co_partitioned() -> None:
    members = {"C0": Subscription(["orders", "payments"]), "C1": Subscription(["orders", "payments"]),
               "C2": Subscription(["orders", "payments"])}
    counts = {"orders": 4, "payments": 4}
    assert is_co_partitioned(RangeAssignor().assign(counts, members), members, counts)


def test_range_lists_every_member_even_when_a_topic_is_missing_from_metadata() -> None:
    members = {"C0": Subscription(["gone"]), "C1": Subscription(["t"])}
    assert RangeAssignor().assign({"t": 1}, members) == {"C0": [], "C1": [TopicPartition("t", 0)]}

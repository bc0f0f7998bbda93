"""RoundRobinAssignor against Kafka's and librdkafka's own test cases, plus the lessons' uneven scenario."""

from __future__ import annotations

from typing import Any

import pytest

from lab.assignors import RoundRobinAssignor, Subscription, TopicPartition, get
from lab.grading.assignor_cases import plain_subscriptions, range_roundrobin_problems
from tests.assignors.vectors import load

ROUND_ROBIN_CASES = [case for case in load("assignors_range_roundrobin.json") if case["assignor"] == "roundrobin"]


@pytest.mark.parametrize("case", ROUND_ROBIN_CASES, ids=[case["name"] for case in ROUND_ROBIN_CASES])
def test_round_robin_matches_upstream_case(case: dict[str, Any]) -> None:
    for step in case["steps"]:
        subscriptions = plain_subscriptions(step)
        assignment = get("roundrobin").assign(step["partitions_per_topic"], subscriptions)
        assert range_roundrobin_problems(case, step, assignment, subscriptions) == []


def test_round_robin_splits_three_topics_of_three_partitions_five_and_four() -> None:
    members = {"C0": Subscription(["t0", "t1", "t2"]), "C1": Subscription(["t0", "t1", "t2"])}
    assignment = RoundRobinAssignor().assign({"t0": 3, "t1": 3, "t2": 3}, members)
    assert [len(assignment["C0"]), len(assignment["C1"])] == [5, 4]


def test_round_robin_with_uneven_subscriptions_leaves_all_of_t2_to_the_only_member_on_it() -> None:
    members = {"C0": Subscription(["t0"]), "C1": Subscription(["t0", "t1"]), "C2": Subscription(["t0", "t1", "t2"])}
    assignment = RoundRobinAssignor().assign({"t0": 1, "t1": 2, "t2": 3}, members)
    assert assignment == {
        "C0": [TopicPartition("t0", 0)],
        "C1": [TopicPartition("t1", 0)],
        "C2": [TopicPartition("t1", 1), TopicPartition("t2", 0), TopicPartition("t2", 1), TopicPartition("t2", 2)],
    }


def test_round_robin_sorts_topics_as_java_strings_not_code_points() -> None:
    # U+FF5E sorts after U+1F600 in UTF-16 (0xFF5E > 0xD83D) but before it by code point.
    emoji, fullwidth = "\U0001f600", "\uff5e"
    members = {"C0": Subscription([emoji, fullwidth])}
    assignment = RoundRobinAssignor().assign({emoji: 1, fullwidth: 1}, members)
    assert assignment["C0"] == [TopicPartition(emoji, 0), TopicPartition(fullwidth, 0)]

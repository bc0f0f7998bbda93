"""The measures shown beside every assignment: balance, moves, validity, co-partitioning, stickiness."""

from __future__ import annotations

from lab.assignors import (
    Subscription,
    TopicPartition,
    balance,
    is_balanced_kafka,
    is_co_partitioned,
    is_sticky,
    is_valid,
    moves,
    validity_problems,
)

T = TopicPartition


def test_balance_is_the_gap_between_the_busiest_and_the_idlest_member() -> None:
    assert balance({"a": [T("t", 0), T("t", 1)], "b": [], "c": [T("t", 2)]}) == 2
    assert balance({}) == 0


def test_moves_counts_partitions_whose_owner_changed() -> None:
    before = {"C0": [T("t", 0), T("t", 1)], "C1": [T("t", 2)]}
    after = {"C0": [T("t", 0)], "C1": [T("t", 2)], "C2": [T("t", 1), T("t", 3)]}
    assert moves(before, after) == 1  # t-1; t-3 is new, not moved


def test_validity_names_each_problem() -> None:
    subscriptions = {"C0": Subscription(["t"]), "C1": Subscription(["u"])}
    assignment = {"C0": [T("t", 0), T("t", 0), T("t", 9)], "C1": [T("t", 1)]}
    problems = validity_problems(assignment, subscriptions, {"t": 3, "u": 1})
    assert "t-0 was given to both C0 and C0" in problems
    assert "t-9 does not exist but was given to C0" in problems
    assert "t-1 was given to C1, which does not subscribe to t" in problems
    assert "t-2 has subscribers but was assigned to nobody" in problems
    assert "u-0 has subscribers but was assigned to nobody" in problems
    assert not is_valid(assignment, subscriptions, {"t": 3, "u": 1})


def test_co_partitioning_holds_when_partition_i_of_twin_topics_has_one_owner() -> None:
    subscriptions = {"C0": Subscription(["a", "b"]), "C1": Subscription(["a", "b"])}
    together = {"C0": [T("a", 0), T("b", 0)], "C1": [T("a", 1), T("b", 1)]}
    split = {"C0": [T("a", 0), T("b", 1)], "C1": [T("a", 1), T("b", 0)]}
    assert is_co_partitioned(together, subscriptions, {"a": 2, "b": 2})
    assert not is_co_partitioned(split, subscriptions, {"a": 2, "b": 2})


def test_kafka_balance_allows_a_gap_only_between_members_without_common_topics() -> None:
    assert is_balanced_kafka({"C0": [T("a", 0), T("a", 1), T("a", 2)], "C1": [T("b", 0)]})
    assert not is_balanced_kafka({"C0": [T("a", 0), T("a", 1), T("a", 2)], "C1": [T("a", 3)]})


def test_stickiness_is_broken_by_swapping_partitions_of_one_topic() -> None:
    before = {"C0": [T("t", 0)], "C1": [T("t", 1)]}
    assert not is_sticky(before, {"C0": [T("t", 1)], "C1": [T("t", 0)]})
    assert is_sticky(before, {"C0": [T("t", 0), T("t", 1)], "C1": []})

"""Rack-aware assignment (KIP-881) for range, sticky and cooperative-sticky against Kafka's own test cases.

Replica racks come precomputed in the vectors. `prefer_rack_aware_logic` is upstream's package-private switch that
forces the rack-aware code path even when every partition is on every rack.
"""

from __future__ import annotations

from typing import Any

import pytest

from lab.assignors import (
    CooperativeStickyAssignor,
    PartitionAssignor,
    RangeAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
    num_partitions_with_rack_mismatch,
)
from lab.grading.assignor_cases import subscription, tps
from tests.assignors.vectors import load, partition_racks

RACK_CASES = load("assignors_rack_aware.json")


def make_assignor(name: str, prefer_rack_aware_logic: bool) -> PartitionAssignor:
    kinds: dict[str, type[PartitionAssignor]] = {
        "range": RangeAssignor, "sticky": StickyAssignor, "cooperative-sticky": CooperativeStickyAssignor}
    return kinds[name](prefer_rack_aware_logic=prefer_rack_aware_logic)


def build_subscriptions(raw: dict[str, Any], assignor: PartitionAssignor) -> dict[str, Subscription]:
    return {member: subscription(sub, owned=tps(sub.get("owned_partitions")),
                                 eager_sticky=isinstance(assignor, StickyAssignor),
                                 owned_visible=sub.get("owned_partitions_visible_to_assignor", True))
            for member, sub in raw.items()}


@pytest.mark.parametrize("case", RACK_CASES, ids=[case["name"] for case in RACK_CASES])
def test_rack_aware_assignment_matches_upstream_case(case: dict[str, Any]) -> None:
    assignor = make_assignor(case["assignor"], case["prefer_rack_aware_logic"])
    racks = partition_racks(case)
    for step in case.get("steps", [case]):
        subscriptions = build_subscriptions(step["subscriptions"], assignor)
        assignment = assignor.assign(step["partitions_per_topic"], subscriptions, partition_racks=racks)
        if step.get("expected") is not None:
            assert {m: sorted(p) for m, p in assignment.items()} == \
                   {m: sorted(tps(p)) for m, p in step["expected"].items()}
        mismatches = step.get("expected_num_partitions_with_rack_mismatch")
        if mismatches is not None:
            assert num_partitions_with_rack_mismatch(assignment, subscriptions, racks) == mismatches
        if "expected_partitions_transferring_ownership_count" in step:
            assert isinstance(assignor, CooperativeStickyAssignor)
            transferring = assignor.partitions_transferring_ownership
            assert transferring is not None
            assert len(transferring) == step["expected_partitions_transferring_ownership_count"]


def test_range_rack_aware_never_breaks_a_range_quota_to_align_racks() -> None:
    # Both partitions live only on rack a; both consumers want one each, and quota wins over the rack.
    members = {"C0": Subscription(["t"], rack="a"), "C1": Subscription(["t"], rack="b")}
    racks = {TopicPartition("t", 0): {"a"}, TopicPartition("t", 1): {"a"}}
    assignment = RangeAssignor().assign({"t": 2}, members, partition_racks=racks)
    assert sorted(len(p) for p in assignment.values()) == [1, 1]


def test_range_rack_aware_places_a_partition_with_the_consumer_on_its_rack() -> None:
    members = {"C0": Subscription(["t"], rack="a"), "C1": Subscription(["t"], rack="b")}
    racks = {TopicPartition("t", 0): {"b"}, TopicPartition("t", 1): {"a"}}
    assignment = RangeAssignor().assign({"t": 2}, members, partition_racks=racks)
    assert assignment == {"C0": [TopicPartition("t", 1)], "C1": [TopicPartition("t", 0)]}


def test_rack_logic_is_skipped_when_consumer_racks_and_replica_racks_do_not_overlap() -> None:
    members = {"C0": Subscription(["t"], rack="x"), "C1": Subscription(["t"], rack="y")}
    racks = {TopicPartition("t", 0): {"b"}, TopicPartition("t", 1): {"a"}}
    assert RangeAssignor().assign({"t": 2}, members, partition_racks=racks) == \
        RangeAssignor().assign({"t": 2}, members)

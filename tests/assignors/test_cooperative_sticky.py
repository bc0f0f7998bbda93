"""CooperativeStickyAssignor: a partition changing owner waits one rebalance, until its old owner revoked it."""

from __future__ import annotations

from lab.assignors import CooperativeStickyAssignor, StickyAssignor, Subscription, TopicPartition, cooperative_rounds
from lab.assignors.cooperative_sticky import partitions_transferring_ownership, revoked_partitions

T = TopicPartition


def test_a_joining_member_gets_its_partition_only_in_the_follow_up_rebalance() -> None:
    subscriptions = {"C1": Subscription(["t"], owned_partitions=[T("t", 0), T("t", 1), T("t", 2)], generation=1),
                     "C2": Subscription(["t"])}
    first, second = cooperative_rounds(CooperativeStickyAssignor(), {"t": 3}, subscriptions)
    assert first == {"C1": [T("t", 0), T("t", 1)], "C2": []}
    assert second == {"C1": [T("t", 0), T("t", 1)], "C2": [T("t", 2)]}


def test_eager_sticky_hands_the_partition_over_at_once() -> None:
    owned = [T("t", 0), T("t", 1), T("t", 2)]
    subscriptions = {"C1": Subscription(["t"], user_data=StickyAssignor.encode_user_data(owned, 1)),
                     "C2": Subscription(["t"])}
    assert StickyAssignor().assign({"t": 3}, subscriptions) == {"C1": [T("t", 0), T("t", 1)], "C2": [T("t", 2)]}


def test_transferring_partitions_are_found_by_diffing_when_subscriptions_differ() -> None:
    subscriptions = {"C1": Subscription(["a", "b"], owned_partitions=[T("a", 0), T("a", 1), T("b", 0)], generation=2),
                     "C2": Subscription(["a"], generation=2)}
    assignor = CooperativeStickyAssignor()
    first = assignor.assign({"a": 2, "b": 1}, subscriptions)
    assert assignor.partitions_transferring_ownership is None  # the general builder ran
    # Balancing walks a's partitions in order: a-0 is the first that may move to C2, so C1 must revoke it, and C2
    # only gets it in the follow-up rebalance.
    assert first == {"C1": [T("a", 1), T("b", 0)], "C2": []}
    assert revoked_partitions(subscriptions, first) == {T("a", 0)}


def test_a_partition_nobody_owned_is_given_at_once() -> None:
    target = {"C1": [T("t", 0)], "C2": [T("t", 1)]}
    subscriptions = {"C1": Subscription(["t"], owned_partitions=[T("t", 0)], generation=1),
                     "C2": Subscription(["t"], generation=1)}
    assert partitions_transferring_ownership(subscriptions, target) == {}


def test_a_generation_in_user_data_is_used_when_the_subscription_has_none() -> None:
    stale = Subscription(["t"], owned_partitions=[T("t", 0)],
                         user_data=CooperativeStickyAssignor.encode_user_data(1))
    fresh = Subscription(["t"], owned_partitions=[T("t", 0)], generation=2)
    assignment = CooperativeStickyAssignor().assign({"t": 2}, {"old": stale, "new": fresh})
    assert T("t", 0) in assignment["new"]

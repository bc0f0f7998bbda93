"""The sticky assignors' named steps, each on the worked example from its module docstring."""

from __future__ import annotations

from lab.assignors import CooperativeStickyAssignor, StickyAssignor, Subscription, TopicPartition
from lab.assignors.sticky_general import balance_score
from lab.assignors.sticky_ownership import clean_owned_partitions
from lab.assignors.sticky_user_data import MemberData

T = TopicPartition


def test_clean_owned_partitions_lets_the_higher_generation_win_a_double_claim() -> None:
    subscriptions = {"C1": Subscription(["t"], generation=3), "C2": Subscription(["t"], generation=1),
                     "C3": Subscription(["t"], generation=2)}
    data = {"C1": MemberData((T("t", 0), T("t", 2)), 3), "C2": MemberData((T("t", 1), T("t", 2)), 1),
            "C3": MemberData((T("t", 2), T("t", 4)), 2)}
    cleaned = clean_owned_partitions(["C1", "C2", "C3"], subscriptions, data, {"t": 6})
    assert cleaned.owned == {"C1": [T("t", 0), T("t", 2)], "C2": [T("t", 1)], "C3": [T("t", 4)]}
    assert cleaned.multiply_claimed == set()
    assert cleaned.max_generation == 3


def test_clean_owned_partitions_drops_a_same_generation_double_claim_from_both() -> None:
    subscriptions = {"C1": Subscription(["t"], generation=1), "C2": Subscription(["t"], generation=1)}
    data = {"C1": MemberData((T("t", 0), T("t", 1)), 1), "C2": MemberData((T("t", 0), T("t", 2)), 1)}
    cleaned = clean_owned_partitions(["C1", "C2"], subscriptions, data, {"t": 3})
    assert cleaned.owned == {"C1": [T("t", 1)], "C2": [T("t", 2)]}
    assert cleaned.multiply_claimed == {T("t", 0)}


def test_clean_owned_partitions_forgets_deleted_topics_and_notices_different_subscriptions() -> None:
    subscriptions = {"C1": Subscription(["t"]), "C2": Subscription(["t", "u"])}
    data = {"C1": MemberData((T("gone", 0), T("t", 0)), 1), "C2": MemberData((), None)}
    cleaned = clean_owned_partitions(["C1", "C2"], subscriptions, data, {"t": 1, "u": 1})
    assert cleaned.owned == {"C1": [T("t", 0)], "C2": []}
    assert not cleaned.all_subscriptions_equal


def test_constrained_builder_gives_the_only_max_slot_to_the_first_member_visited() -> None:
    # HashMap order is C3, C1, C2: C1 keeps two, C2 keeps one and gives up t2-1, which C3 receives.
    subscriptions = {"C1": Subscription(["t1", "t2"], owned_partitions=[T("t1", 0), T("t2", 0)], generation=1),
                     "C2": Subscription(["t1", "t2"], owned_partitions=[T("t1", 1), T("t2", 1)], generation=1),
                     "C3": Subscription(["t1", "t2"], generation=1)}
    outcome = CooperativeStickyAssignor().assign_with_details({"t1": 2, "t2": 2}, subscriptions)
    assert outcome.builder == "constrained"
    assert outcome.partitions_transferring_ownership == {T("t2", 1): "C3"}
    assert outcome.assignment == {"C1": [T("t1", 0), T("t2", 0)], "C2": [T("t1", 1)], "C3": []}


def test_general_builder_fills_the_topic_with_fewest_consumers_first() -> None:
    subscriptions = {"C1": Subscription(["t1"]), "C2": Subscription(["t1", "t2"]), "C3": Subscription(["t1"])}
    outcome = StickyAssignor().assign_with_details({"t1": 3, "t2": 2}, subscriptions)
    assert outcome.builder == "general"
    assert outcome.partitions_transferring_ownership is None
    assert outcome.assignment == {"C1": [T("t1", 0), T("t1", 2)], "C2": [T("t2", 0), T("t2", 1)],
                                  "C3": [T("t1", 1)]}


def test_balance_score_sums_size_differences_over_all_member_pairs() -> None:
    # sizes 0, 1, 3: |0-1| + |0-3| + |1-3| = 6
    assignment = {"a": [], "b": [T("t", 0)], "c": [T("t", 1), T("t", 2), T("t", 3)]}
    assert balance_score(assignment) == 6
    assert balance_score({}) == 0


def test_sticky_with_no_members_returns_an_empty_assignment() -> None:
    assert StickyAssignor().assign({"t": 3}, {}) == {}
    assert CooperativeStickyAssignor().assign({"t": 3}, {}) == {}


def test_sticky_gives_nothing_when_there_are_more_members_than_partitions_to_spare() -> None:
    subscriptions = {f"c{i}": Subscription(["t"]) for i in range(4)}
    sizes = sorted(len(p) for p in StickyAssignor().assign({"t": 2}, subscriptions).values())
    assert sizes == [0, 0, 1, 1]

"""Randomised checks (hypothesis) of what every assignor promises, over groups that churn.

A scenario is a set of topics, a group of members, and a sequence of rebalances in which members join, leave, change
their subscriptions, or come back from the dead claiming what they owned generations ago. Each rebalance feeds the
previous result back as owned partitions (and user data, for the eager sticky assignor) at a new generation.
On failure hypothesis prints the smallest such scenario; `note()` adds each round's inputs and outputs.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from lab.assignors import (
    AbstractStickyAssignor,
    Assignment,
    CooperativeStickyAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
    balance,
    get,
    validity_problems,
)
from lab.assignors.cooperative_sticky import revoked_partitions

EXAMPLES = int(os.environ.get("LAB_HYPOTHESIS_EXAMPLES", "100"))  # raise it locally for a deeper search
PROPERTY_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

topic_counts = st.lists(st.integers(0, 30), min_size=0, max_size=20).map(
    lambda counts: {f"t{i}": n for i, n in enumerate(counts)})


@st.composite
def groups(draw: st.DrawFn, identical: bool) -> tuple[dict[str, int], dict[str, Subscription]]:
    counts = draw(topic_counts)
    topics = list(counts) or ["t0"]
    size = draw(st.integers(1, 30))
    shared = draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
    members = {}
    for index in range(size):
        chosen = shared if identical else draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
        members[f"c{index}"] = Subscription(chosen)
    return counts, members


def readable(assignment: Assignment) -> str:
    return "; ".join(f"{m}: {' '.join(str(tp) for tp in sorted(p))}" for m, p in sorted(assignment.items()))


@dataclass
class Churn:
    """A group living through rebalances under one assignor."""

    assignor: AbstractStickyAssignor
    counts: dict[str, int]
    subscriptions: dict[str, Subscription]
    generation: int = 0
    departed: dict[str, Subscription] = field(default_factory=dict)
    last: Assignment = field(default_factory=dict)

    def rebalance(self) -> Assignment:
        note(f"generation {self.generation} subscriptions: " + "; ".join(
            f"{m}: topics={list(s.topics)} owned={[str(tp) for tp in s.owned_partitions]} gen={s.generation}"
            for m, s in self.subscriptions.items()))
        result = self.assignor.assign(self.counts, self.subscriptions)
        note(f"{self.assignor.name} gave: {readable(result)}")
        self.last = result
        return result

    def feed_back(self) -> None:
        self.generation += 1
        self.subscriptions = {m: self.assignor.resubscribe(s, self.last[m], self.generation)
                              for m, s in self.subscriptions.items()}

    def apply(self, action: str, rng: random.Random, identical: bool) -> None:
        topics = list(self.counts) or ["t0"]
        members = list(self.subscriptions)
        if action == "join" or not members:
            shared = list(next(iter(self.subscriptions.values())).topics) if identical and members else None
            name = f"j{self.generation}"
            self.subscriptions[name] = Subscription(shared or rng.sample(topics, rng.randint(1, len(topics))))
        elif action == "leave" and len(members) > 1:
            gone = rng.choice(members)
            self.departed[gone] = self.subscriptions.pop(gone)
        elif action == "resubscribe":
            new_topics = rng.sample(topics, rng.randint(1, len(topics)))
            chosen = members if identical else [rng.choice(members)]
            for member in chosen:
                self.subscriptions[member] = replace(self.subscriptions[member], topics=tuple(new_topics))
        elif action == "zombie" and self.departed and not identical:
            # A member that left comes back claiming what it owned then, at its old generation.
            name, old = self.departed.popitem()
            self.subscriptions[name] = replace(old, topics=tuple(rng.sample(topics, rng.randint(1, len(topics)))))


actions = st.lists(st.sampled_from(["join", "leave", "resubscribe", "zombie"]), min_size=1, max_size=4)
sticky_kinds = st.sampled_from(["sticky", "cooperative-sticky"])


def assert_valid(assignment: Assignment, churn: Churn) -> None:
    problems = validity_problems(assignment, churn.subscriptions, churn.counts)
    assert not problems, problems


def assert_cooperative_rule(churn: Churn, result: Assignment) -> None:
    revoked = revoked_partitions(churn.subscriptions, result)
    gained = {tp for m, tps in result.items() for tp in set(tps) - set(churn.subscriptions[m].owned_partitions)}
    assert not revoked & gained, f"revoked and handed over in one round: {sorted(map(str, revoked & gained))}"


MAX_FOLLOW_UPS = 4  # upstream's cooperative test helper allows at most four follow-up rebalances


def settle(churn: Churn, check_first: Callable[[Assignment], bool] | None = None) -> Assignment:
    """Rebalance; for cooperative-sticky, follow up (owned := result) while anything was revoked, checking the
    cooperative rule in every round. Returns the settled assignment."""
    result = churn.rebalance()
    assert check_first is None or check_first(result), "a balanced outcome could have kept more partitions"
    if not isinstance(churn.assignor, CooperativeStickyAssignor):
        return result
    for _ in range(MAX_FOLLOW_UPS):
        assert_cooperative_rule(churn, result)
        if not revoked_partitions(churn.subscriptions, result):
            return result
        churn.feed_back()
        note("follow-up rebalance")
        result = churn.rebalance()
    assert_cooperative_rule(churn, result)
    assert not revoked_partitions(churn.subscriptions, result), "still revoking after the allowed follow-ups"
    return result


def keepable(churn: Churn) -> int:
    """With identical subscriptions and consistent ownership, the most owned partitions a balanced outcome keeps:
    everyone keeps up to min quota, and up to P % M members that own at least max quota keep one more."""
    existing = {TopicPartition(t, p) for t, n in churn.counts.items() for p in range(n)}
    subscribed = set(next(iter(churn.subscriptions.values())).topics)
    total = sum(n for t, n in churn.counts.items() if t in subscribed)
    members = len(churn.subscriptions)
    low, high, slots = total // members, -(-total // members), total % members
    owned = [sum(1 for tp in s.owned_partitions if tp in existing and tp.topic in subscribed)
             for s in churn.subscriptions.values()]
    return sum(min(o, low) for o in owned) + min(slots, sum(1 for o in owned if o >= high))


def kept(churn: Churn, result: Assignment) -> int:
    return sum(len(set(result[m]) & set(s.owned_partitions)) for m, s in churn.subscriptions.items())


@PROPERTY_SETTINGS
@given(group=groups(identical=False), name=st.sampled_from(["range", "roundrobin"]), seed=st.randoms())
def test_range_and_round_robin_are_valid_and_ignore_the_order_members_are_listed_in(
        group: tuple[dict[str, int], dict[str, Subscription]], name: str, seed: random.Random) -> None:
    counts, subscriptions = group
    first = get(name).assign(counts, subscriptions)
    shuffled = list(subscriptions.items())
    seed.shuffle(shuffled)
    note(f"{name} gave: {readable(first)}")
    assert validity_problems(first, subscriptions, counts) == []
    assert get(name).assign(counts, dict(shuffled)) == first
    assert get(name).assign(counts, subscriptions) == first


@PROPERTY_SETTINGS
@given(group=groups(identical=False), kind=sticky_kinds, steps=actions, seed=st.randoms())
def test_sticky_assignments_stay_valid_while_the_group_churns(
        group: tuple[dict[str, int], dict[str, Subscription]], kind: str, steps: list[str],
        seed: random.Random) -> None:
    counts, subscriptions = group
    churn = Churn(StickyAssignor() if kind == "sticky" else CooperativeStickyAssignor(), counts, subscriptions)
    for action in ["start", *steps]:
        if action != "start":
            churn.feed_back()
            churn.apply(action, seed, identical=False)
            note(f"then: {action}")
        result = settle(churn)
        assert_valid(result, churn)


@PROPERTY_SETTINGS
@given(group=groups(identical=True), kind=sticky_kinds, steps=actions, seed=st.randoms())
def test_sticky_with_identical_subscriptions_is_balanced_and_keeps_all_it_can(
        group: tuple[dict[str, int], dict[str, Subscription]], kind: str, steps: list[str],
        seed: random.Random) -> None:
    counts, subscriptions = group
    churn = Churn(StickyAssignor() if kind == "sticky" else CooperativeStickyAssignor(), counts, subscriptions)
    for action in ["start", *steps]:
        if action != "start":
            churn.feed_back()
            churn.apply(action, seed, identical=True)
            note(f"then: {action}")
        result = settle(churn, check_first=lambda first: kept(churn, first) == keepable(churn))
        assert_valid(result, churn)
        assert balance(result) <= 1

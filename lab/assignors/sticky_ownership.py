"""Step 1 of the sticky assignors: decide what each member may claim to own, and whether subscriptions are identical.

Members report what they owned and in which generation. The reports can disagree: a member that missed a rebalance
(a "zombie") still believes it owns partitions that were since given to someone else. The cleaning rules:

* partitions of topics that no longer exist are dropped (the lab also drops partition numbers beyond a topic's current
  count, which Kafka never sees because partitions are never removed from a topic);
* if two members claim one partition, the claim from the *higher generation* wins;
* if both claims come from the *same generation*, nobody can be trusted: the partition is dropped from both and
  remembered as "claimed by multiple owners" (giving it to anyone is then an ownership transfer).

At the same time the step checks whether all members subscribe to the same topics, which selects the builder:
`sticky_constrained` when they do, `sticky_general` otherwise.

Worked example (generation in brackets): C1[3] claims t-0, t-2; C2[1] claims t-1, t-2; C3[2] claims t-2, t-4.

    visit C1: t-0, t-2 are free                 -> C1 owns t-0, t-2
    visit C2: t-1 free; t-2 held by C1, 1 < 3   -> C2 owns t-1 (C1 keeps t-2)
    visit C3: t-2 held by C1, 2 < 3; t-4 free   -> C3 owns t-4

Members are visited in `java.util.HashMap` order (see `java_order.py`), as the Kafka leader visits them. The
generation of the member already holding a claim is read from its `Subscription.generation`, while the visiting
member's comes from its member data (for the eager assignor: its user data), exactly as upstream does.

Upstream: `clients/.../consumer/internals/AbstractStickyAssignor.java` (`allSubscriptionsEqual`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lab.assignors.contract import DEFAULT_GENERATION, Subscription, TopicPartition
from lab.assignors.sticky_user_data import MemberData


@dataclass
class CleanedOwnership:
    """Result of step 1: trusted owned partitions per member (in claim order), the doubly claimed partitions,
    whether every member has the same subscription, and the highest generation seen."""

    owned: dict[str, list[TopicPartition]] = field(default_factory=dict)
    multiply_claimed: set[TopicPartition] = field(default_factory=set)
    all_subscriptions_equal: bool = True
    max_generation: int = DEFAULT_GENERATION


def clean_owned_partitions(members_in_order: Sequence[str], subscriptions: Mapping[str, Subscription],
                           member_data: Mapping[str, MemberData],
                           partitions_per_topic: Mapping[str, int]) -> CleanedOwnership:
    result = CleanedOwnership()
    first_topics: frozenset[str] | None = None
    claimed_by: dict[TopicPartition, str] = {}
    owned_sets: dict[str, dict[TopicPartition, None]] = {}
    for member in members_in_order:
        topics = frozenset(subscriptions[member].topics)
        # Upstream keys this on "the set collected so far is empty", which would let a member with no topics slip
        # through; the lab compares with the first member, which is what upstream's comment intends.
        if first_topics is None:
            first_topics = topics
        elif topics != first_topics:
            result.all_subscriptions_equal = False
        data = member_data[member]
        generation = data.generation if data.generation is not None else DEFAULT_GENERATION
        result.max_generation = max(result.max_generation, generation)
        mine: dict[TopicPartition, None] = {}
        owned_sets[member] = mine
        for tp in data.partitions:
            if not 0 <= tp.partition < partitions_per_topic.get(tp.topic, 0):
                continue
            holder = claimed_by.get(tp)
            if holder is None:
                mine[tp] = None
                claimed_by[tp] = member
                continue
            holder_generation = subscriptions[holder].generation_id
            holder_generation = DEFAULT_GENERATION if holder_generation is None else holder_generation
            if generation == holder_generation:
                # Same generation, two owners: trust neither.
                result.multiply_claimed.add(tp)
                owned_sets[holder].pop(tp, None)
                claimed_by[tp] = member
            elif generation > holder_generation:
                mine[tp] = None
                owned_sets[holder].pop(tp, None)
                claimed_by[tp] = member
            # else: the holder's newer claim stands.
    result.owned = {member: list(partitions) for member, partitions in owned_sets.items()}
    return result

"""Kafka's `CooperativeStickyAssignor`: the sticky algorithm, made safe for incremental (cooperative) rebalancing.

In the eager protocol every member drops all its partitions before a rebalance, so handing a partition straight to a
new owner is safe. In the cooperative protocol members *keep* consuming what they own during the rebalance. If the
leader gave partition p to C2 while C1 still consumes it, both would process the same records. So:

    a partition that changes owner is withheld from its new owner in this rebalance;
    the old owner sees p missing from its assignment and revokes it;
    having revoked something, it triggers a follow-up rebalance, in which p is unowned and goes to its new owner.

Worked example: one topic with 3 partitions, C1 owns all three (generation 1), C2 joins.

    round 1: target C1 [t-0, t-1], C2 [t-2]; t-2 is transferring ownership C1 -> C2, so C2 gets []
             C1 receives [t-0, t-1] and revokes t-2
    round 2: C1 owns [t-0, t-1], nobody owns t-2: C2 gets [t-2]; nothing is revoked, the group is stable

Differences from the eager `StickyAssignor`: ownership comes from the subscription's `owned_partitions` and
`generation` fields (falling back to a generation in the user data for old brokers), not from user data bytes.

`cooperative_rounds` replays the follow-up rebalances (owned := last result, same generation) until nothing is
revoked, as the lessons (and upstream's test helper) do.

Upstream: `clients/src/main/java/org/apache/kafka/clients/consumer/CooperativeStickyAssignor.java`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from lab.assignors.contract import Assignment, PartitionRacks, Subscription, TopicPartition
from lab.assignors.sticky import AbstractStickyAssignor, StickyOutcome
from lab.assignors.sticky_user_data import MemberData, decode_cooperative_user_data, encode_cooperative_user_data


class CooperativeStickyAssignor(AbstractStickyAssignor):
    """Sticky, with transferring partitions withheld until their old owner has revoked them."""

    name = "cooperative-sticky"

    @staticmethod
    def encode_user_data(generation: int) -> bytes:
        """Kafka's cooperative user data: just the generation (INT32)."""
        return encode_cooperative_user_data(generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        if subscription.generation_id is not None:
            return MemberData(tuple(subscription.owned_partitions), subscription.generation_id)
        encoded = None if subscription.user_data is None else decode_cooperative_user_data(subscription.user_data)
        return MemberData(tuple(subscription.owned_partitions), encoded)

    def assign_with_details(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription],
                            *, partition_racks: PartitionRacks | None = None) -> StickyOutcome:
        outcome = super().assign_with_details(partitions_per_topic, subscriptions, partition_racks=partition_racks)
        transferring = outcome.partitions_transferring_ownership
        if transferring is None:
            transferring = partitions_transferring_ownership(subscriptions, outcome.assignment)
        withheld = {member: list(partitions) for member, partitions in outcome.assignment.items()}
        for tp, new_owner in transferring.items():
            withheld[new_owner].remove(tp)
        return replace(outcome, assignment=withheld)


def partitions_transferring_ownership(subscriptions: Mapping[str, Subscription],
                                      target: Assignment) -> dict[TopicPartition, str]:
    """Partitions that some member gains in `target` while another member (still present) has to revoke them."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member, partitions in target.items():
        owned = set(subscriptions[member].owned_partitions)
        now = set(partitions)
        added.update((tp, member) for tp in partitions if tp not in owned)
        revoked.update(tp for tp in subscriptions[member].owned_partitions if tp not in now)
    return {tp: member for tp, member in added.items() if tp in revoked}


def revoked_partitions(subscriptions: Mapping[str, Subscription], assignment: Assignment) -> set[TopicPartition]:
    """Partitions members owned but were not assigned this round: they must revoke them."""
    return {tp for member, partitions in assignment.items()
            for tp in set(subscriptions[member].owned_partitions) - set(partitions)}


def cooperative_rounds(assignor: AbstractStickyAssignor, partitions_per_topic: Mapping[str, int],
                       subscriptions: Mapping[str, Subscription], *, partition_racks: PartitionRacks | None = None,
                       generation: int = 1, max_rounds: int = 5) -> list[Assignment]:
    """Run a rebalance and its follow-ups until no member has to revoke anything.

    After each round every member re-subscribes owning exactly what it was given, at `generation`; a follow-up is
    needed while some member lost something it owned. Returns every round's assignment (the last one is stable).
    """
    rounds = [assignor.assign(partitions_per_topic, subscriptions, partition_racks=partition_racks)]
    current = dict(subscriptions)
    while revoked_partitions(current, rounds[-1]) and len(rounds) < max_rounds:
        current = {member: assignor.resubscribe(subscription, rounds[-1][member], generation)
                   for member, subscription in current.items()}
        rounds.append(assignor.assign(partitions_per_topic, current, partition_racks=partition_racks))
    return rounds

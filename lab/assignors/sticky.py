"""Kafka's sticky assignors: balanced like round-robin, but keeping as many partitions where they were as possible.

Every rebalance costs something for each partition that changes owner: the new owner re-reads from the last committed
offset and rebuilds whatever state it kept. The sticky assignors therefore aim for two things, in order:

1. *balance*: sizes differ by at most one (when subscriptions allow it);
2. *stickiness*: within that, move as few partitions as possible.

The work is split into named steps, each in its own module:

    sticky_user_data    what a member owned, read from its subscription (eager: from the user data bytes)
    sticky_ownership    clean owned partitions: conflicting claims, deleted topics; detect identical subscriptions
    sticky_constrained  identical subscriptions: compute quotas, keep, fill (O(P log P))
    sticky_general      different subscriptions: keep, fill, then balance by moves
    sticky_racks        rack information (KIP-881) shared by both builders

Worked example (Kafka's own): topics t0..t3 with two partitions each, three members on all of them.

    before:          C0 [t0-0, t1-1, t3-0]   C1 [t0-1, t2-0, t3-1]   C2 [t1-0, t2-1]
    C1 leaves; round-robin would start over:
                     C0 [t0-0, t1-0, t2-0, t3-0]   C2 [t0-1, t1-1, t2-1, t3-1]      (5 partitions change owner)
    sticky keeps what C0 and C2 had (listed first, sorted by partition then topic) and shares out C1's three:
                     C0 [t0-0, t3-0, t1-1, t0-1]   C2 [t1-0, t2-1, t2-0, t3-1]      (only C1's 3 move)

`StickyAssignor` (eager) lives here; `CooperativeStickyAssignor` in `cooperative_sticky.py`.

Upstream: `clients/.../consumer/internals/AbstractStickyAssignor.java`, `clients/.../consumer/StickyAssignor.java`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from lab.assignors.contract import (
    DEFAULT_GENERATION,
    Assignment,
    PartitionAssignor,
    PartitionRacks,
    Subscription,
    TopicPartition,
    subscribed_partition_counts,
)
from lab.assignors.java_order import java_hash_map_order
from lab.assignors.sticky_constrained import ConstrainedAssignmentBuilder
from lab.assignors.sticky_general import GeneralAssignmentBuilder
from lab.assignors.sticky_ownership import clean_owned_partitions
from lab.assignors.sticky_racks import RackInfo
from lab.assignors.sticky_user_data import MemberData, decode_sticky_user_data, encode_sticky_user_data


@dataclass(frozen=True)
class StickyOutcome:
    """One run of a sticky builder. `partitions_transferring_ownership` maps a partition to its new owner when the
    constrained builder ran; it is None after the general builder (the cooperative assignor then diffs)."""

    assignment: Assignment
    partitions_transferring_ownership: dict[TopicPartition, str] | None
    builder: str
    max_generation: int


class AbstractStickyAssignor(PartitionAssignor):
    """The shared algorithm; subclasses only say where a member's past comes from (`member_data`)."""

    def __init__(self, *, prefer_rack_aware_logic: bool = False) -> None:
        super().__init__(prefer_rack_aware_logic=prefer_rack_aware_logic)
        # Like upstream's fields of the same names: filled in by each assign() call, for tests and lessons.
        self.partitions_transferring_ownership: dict[TopicPartition, str] | None = {}
        self.max_generation = DEFAULT_GENERATION

    @abstractmethod
    def member_data(self, subscription: Subscription) -> MemberData:
        """The partitions this member owned and the generation it owned them in."""

    def resubscribe(self, subscription: Subscription, owned: Iterable[TopicPartition], generation: int) -> Subscription:
        """The subscription this member sends in the next rebalance, having been given `owned` in `generation`."""
        return replace(subscription, owned_partitions=tuple(owned), generation=generation)

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: PartitionRacks | None = None) -> Assignment:
        return self.assign_with_details(partitions_per_topic, subscriptions,
                                        partition_racks=partition_racks).assignment

    def assign_with_details(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription],
                            *, partition_racks: PartitionRacks | None = None) -> StickyOutcome:
        outcome = self._run_builder(partitions_per_topic, subscriptions, partition_racks)
        self.partitions_transferring_ownership = outcome.partitions_transferring_ownership
        self.max_generation = outcome.max_generation
        return outcome

    def _run_builder(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription],
                     partition_racks: PartitionRacks | None) -> StickyOutcome:
        if not subscriptions:
            return StickyOutcome({}, {}, "constrained", DEFAULT_GENERATION)
        counts = subscribed_partition_counts(partitions_per_topic, subscriptions)
        # The Kafka leader holds members in a java.util.HashMap; its iteration order decides ties.
        members = java_hash_map_order(subscriptions)
        data = {member: self.member_data(subscriptions[member]) for member in members}
        rack_info = RackInfo(counts, subscriptions, members, partition_racks, self.prefer_rack_aware_logic)
        cleaned = clean_owned_partitions(members, subscriptions, data, counts)
        transferring: dict[TopicPartition, str] | None
        if cleaned.all_subscriptions_equal:
            constrained = ConstrainedAssignmentBuilder(counts, rack_info, cleaned.owned, members,
                                                       cleaned.multiply_claimed)
            built = constrained.build()
            transferring, builder = constrained.transferring, "constrained"
        else:
            general = GeneralAssignmentBuilder(counts, rack_info, cleaned.owned, members, subscriptions, data,
                                               cleaned.max_generation)
            built = general.build()
            transferring, builder = None, "general"
        assignment = {member: built[member] for member in subscriptions}
        return StickyOutcome(assignment, transferring, builder, cleaned.max_generation)


class StickyAssignor(AbstractStickyAssignor):
    """The eager sticky assignor: members revoke everything before a rebalance, so their previous assignment travels
    only in the subscription's user data (see `sticky_user_data.py`). Without user data a member owns nothing."""

    name = "sticky"

    @staticmethod
    def encode_user_data(owned_partitions: Iterable[TopicPartition], generation: int | None) -> bytes:
        """The bytes Kafka's `StickyAssignor.subscriptionUserData` sends: schema version 1 (version 0 when
        `generation` is None)."""
        return encode_sticky_user_data((TopicPartition(*tp) for tp in owned_partitions), generation)

    @staticmethod
    def decode_user_data(user_data: bytes) -> MemberData:
        return decode_sticky_user_data(user_data)

    def resubscribe(self, subscription: Subscription, owned: Iterable[TopicPartition], generation: int) -> Subscription:
        owned = tuple(owned)
        return replace(subscription, owned_partitions=owned, generation=generation,
                       user_data=self.encode_user_data(owned, generation))

    def member_data(self, subscription: Subscription) -> MemberData:
        if not subscription.user_data:
            return MemberData((), None)
        return decode_sticky_user_data(subscription.user_data)

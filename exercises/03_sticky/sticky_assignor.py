"""Exercise 03: Kafka's (eager) sticky assignor (see README.md). Fill in every # TODO; keep the names, the grader
imports them. `encode_user_data` and `member_data` are given: the byte format is not the point of this exercise.

Upstream: clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractStickyAssignor.java and
clients/src/main/java/org/apache/kafka/clients/consumer/StickyAssignor.java
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lab.assignors import PartitionAssignor, Subscription, TopicPartition
from lab.assignors.contract import DEFAULT_GENERATION, PartitionRacks  # noqa: F401  (DEFAULT_GENERATION: yours to use)
from lab.assignors.sticky_user_data import MemberData, decode_sticky_user_data, encode_sticky_user_data


class StickyAssignor(PartitionAssignor):
    name = "sticky"

    @staticmethod
    def encode_user_data(owned_partitions: Iterable[TopicPartition], generation: int | None) -> bytes:
        """Given. The bytes an eager sticky consumer sends: what it owned, and in which generation."""
        return encode_sticky_user_data((TopicPartition(*tp) for tp in owned_partitions), generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        """Given. What this member owned (`.partitions`) and the generation it owned them in (`.generation`, None
        when unknown). Kafka's eager assignor reads them from the user data only; when there is none, this helper
        reads the subscription's `owned_partitions` and `generation` fields, so that you can try your code on plain
        `Subscription(topics, owned_partitions=[...], generation=3)`. The grader always sends both, the same."""
        if subscription.user_data:
            return decode_sticky_user_data(subscription.user_data)
        return MemberData(tuple(subscription.owned_partitions), subscription.generation)

    def trusted_ownership(self, partitions_per_topic: Mapping[str, int],
                          subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
        """Step 1 (README): member id -> the owned partitions it can be trusted with."""
        # TODO: read every member's past with self.member_data. Drop partitions that no longer exist (topic missing
        # or partition number too high). When two members claim one partition, the higher generation wins (a
        # generation of None counts as DEFAULT_GENERATION, -1); with equal generations neither keeps it.
        raise NotImplementedError

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: PartitionRacks | None = None) -> dict[str, list[TopicPartition]]:
        """Every member id -> the partitions it consumes, balanced first and sticky second. Racks are out of scope:
        ignore `partition_racks`."""
        # TODO step 2 (keep): each member keeps its trusted partitions of topics it still subscribes to. When every
        # member subscribes to the same topics, keep no more than the quotas allow (README: min and max quota).
        # TODO step 3 (fill): give each partition nobody kept (topics with the fewest possible consumers first) to
        # the subscribed member that has the fewest partitions at that moment.
        # TODO step 4 (balance): while some partition sits on a member two or more larger than another member
        # subscribed to its topic, move it to the smallest such member. Walk the partitions in the same order as
        # step 3. Never loop until the sizes differ by at most one: with different subscriptions that can be
        # impossible.
        # Every member must be in the result (possibly with []); never change the arguments.
        raise NotImplementedError

"""Exercise 01: Kafka's range assignor (see README.md). Fill in every # TODO; keep the names, the grader imports them.

Upstream: clients/src/main/java/org/apache/kafka/clients/consumer/RangeAssignor.java
"""

from __future__ import annotations

from collections.abc import Mapping

from lab.assignors import PartitionAssignor, Subscription, TopicPartition
from lab.assignors.contract import PartitionRacks
from lab.assignors.java_order import java_string_key  # noqa: F401  (a sort key: strings in Java's order)


def sorted_members(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """The member ids in Kafka's order (README, rule 1)."""
    # TODO: static members (subscription.group_instance_id is not None) first, sorted by instance id; then the
    # dynamic members, sorted by member id. Use java_string_key as the sort key for both.
    raise NotImplementedError


class RangeAssignor(PartitionAssignor):
    name = "range"

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: PartitionRacks | None = None) -> dict[str, list[TopicPartition]]:
        """Every member id -> the partitions it consumes. Racks are out of scope: ignore `partition_racks`."""
        # TODO: start with an empty list for every member, so that members who get nothing are in the result too.
        # TODO: for each topic, in the order of partitions_per_topic: find its subscribers (in sorted_members), give
        # each n // m consecutive partitions and the first n % m of them one more (README, rule 2).
        # Remember: never change partitions_per_topic or subscriptions.
        raise NotImplementedError

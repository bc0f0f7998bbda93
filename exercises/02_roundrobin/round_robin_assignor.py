"""Exercise 02: Kafka's round-robin assignor (see README.md). Fill in every # TODO; keep the names, the grader imports
them.

Upstream: clients/src/main/java/org/apache/kafka/clients/consumer/RoundRobinAssignor.java
"""

from __future__ import annotations

from collections.abc import Mapping

from lab.assignors import PartitionAssignor, Subscription, TopicPartition
from lab.assignors.contract import PartitionRacks
from lab.assignors.java_order import java_string_key  # noqa: F401  (a sort key: strings in Java's order)


def sorted_members(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """The member ids in Kafka's order: the seats round the table (README, rule 2)."""
    # TODO: static members (with a group_instance_id) first, by instance id; then the others by member id; compare
    # with java_string_key. (The same order as in exercise 01.)
    raise NotImplementedError


def _all_partitions_sorted(partitions_per_topic: Mapping[str, int],
                          subscriptions: Mapping[str, Subscription]) -> list[TopicPartition]:
    """The deck: every partition of every topic someone subscribes to, by topic name, then partition (rule 1)."""
    # TODO: the union of all subscribed topics, sorted with java_string_key; skip topics that are not in
    # partitions_per_topic; partitions 0 .. n-1 of each.
    raise NotImplementedError


class RoundRobinAssignor(PartitionAssignor):
    name = "roundrobin"

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: PartitionRacks | None = None) -> dict[str, list[TopicPartition]]:
        """Every member id -> the partitions it consumes. Racks are out of scope: ignore `partition_racks`."""
        # TODO: an empty list for every member; then deal the deck round the table (README, rule 3): for each
        # partition, move round from the current seat to the next member subscribed to its topic, give it the
        # partition, and step one seat past that member. The position carries over from one partition to the next.
        raise NotImplementedError

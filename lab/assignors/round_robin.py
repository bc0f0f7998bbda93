"""Kafka's `RoundRobinAssignor`: deal every partition of every subscribed topic around the members like cards.

All topics that anyone subscribes to are sorted by name; their partitions are listed in (topic, partition) order.
The members, in Kafka's member order, sit in a circle. For each partition the dealer moves round the circle to the
next member subscribed to that partition's topic, gives it the partition, and steps past it.

Worked example 1 (identical subscriptions): t0, t1, t2 with three partitions each, C0 and C1 on all three.

    t0-0 C0, t0-1 C1, t0-2 C0, t1-0 C1, t1-1 C0, t1-2 C1, t2-0 C0, t2-1 C1, t2-2 C0
    result: C0 has 5 partitions, C1 has 4 (range gives 6 and 3)

Worked example 2 (different subscriptions, where round-robin is *not* balanced): t0, t1, t2 with 1, 2 and 3
partitions; C0 subscribes to t0, C1 to t0 and t1, C2 to t0, t1 and t2.

    t0-0 -> C0          t1-0 -> C1 (C0 skipped: not subscribed)     t1-1 -> C2
    t2-0 -> C2 (C0, C1 skipped)   t2-1 -> C2   t2-2 -> C2
    result: C0: [t0-0], C1: [t1-0], C2: [t1-1, t2-0, t2-1, t2-2]; C1 could have taken t1-1 for a 1/2/3 split.

Upstream: `clients/src/main/java/org/apache/kafka/clients/consumer/RoundRobinAssignor.java`.
"""

from __future__ import annotations

from collections.abc import Mapping

from lab.assignors.contract import (
    Assignment,
    PartitionAssignor,
    PartitionRacks,
    Subscription,
    TopicPartition,
    sorted_members,
)
from lab.assignors.java_order import java_string_key


class RoundRobinAssignor(PartitionAssignor):
    """Deal partitions round a circle of members (see the module docstring). Racks are ignored, as upstream."""

    name = "roundrobin"

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: PartitionRacks | None = None) -> Assignment:
        assignment: Assignment = {member: [] for member in subscriptions}
        circle = sorted_members(subscriptions)
        if not circle:
            return assignment
        topics_of = {member: frozenset(subscriptions[member].topics) for member in circle}
        position = 0
        for tp in _all_partitions_sorted(partitions_per_topic, subscriptions):
            # Kafka's CircularIterator: skip members not subscribed to this topic; someone is, or the topic
            # would not be listed.
            while tp.topic not in topics_of[circle[position]]:
                position = (position + 1) % len(circle)
            assignment[circle[position]].append(tp)
            position = (position + 1) % len(circle)
        return assignment


def _all_partitions_sorted(partitions_per_topic: Mapping[str, int],
                           subscriptions: Mapping[str, Subscription]) -> list[TopicPartition]:
    topics = {topic for subscription in subscriptions.values() for topic in subscription.topics}
    return [TopicPartition(topic, p)
            for topic in sorted(topics, key=java_string_key)
            for p in range(partitions_per_topic.get(topic, 0))]

"""Round-robin that seats the dealer one place too far: the first partition goes to the second member."""

from __future__ import annotations

from collections.abc import Mapping

from lab.assignors import PartitionAssignor, Subscription, TopicPartition
from lab.assignors.java_order import java_string_key


class RoundRobinAssignor(PartitionAssignor):
    name = "roundrobin"

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: object = None) -> dict[str, list[TopicPartition]]:
        def seat(member: str) -> tuple[int, bytes]:
            instance = subscriptions[member].group_instance_id
            return (0, java_string_key(instance)) if instance is not None else (1, java_string_key(member))

        table = sorted(subscriptions, key=seat)
        result: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        topics = sorted({t for s in subscriptions.values() for t in s.topics}, key=java_string_key)
        position = 1
        for topic in topics:
            for partition in range(partitions_per_topic.get(topic, 0)):
                while topic not in subscriptions[table[position % len(table)]].topics:
                    position += 1
                result[table[position % len(table)]].append(TopicPartition(topic, partition))
                position += 1
        return result

"""Deals every topic of the metadata, subscribed or not: the dealer goes round the table for ever looking for a
member subscribed to a topic nobody wants."""

from lab.assignors import TopicPartition
from lab.assignors.contract import sorted_members
from lab.assignors.round_robin import RoundRobinAssignor as Reference


class RoundRobinAssignor(Reference):
    def assign(self, partitions_per_topic, subscriptions, *, partition_racks=None):  # type: ignore[no-untyped-def]
        table = sorted_members(subscriptions)
        result = {member: [] for member in subscriptions}
        position = 0
        for topic in sorted(partitions_per_topic):
            for partition in range(partitions_per_topic[topic]):
                while topic not in subscriptions[table[position]].topics:
                    position = (position + 1) % len(table)
                result[table[position]].append(TopicPartition(topic, partition))
                position = (position + 1) % len(table)
        return result

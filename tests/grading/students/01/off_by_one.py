"""Range with an off-by-one: `index <= extra` where Kafka has `index < extra`, so one member too many gets an extra
partition and the last member is short (right only when n % m is 0... and then it is wrong)."""

from __future__ import annotations

from collections.abc import Mapping

from lab.assignors import PartitionAssignor, Subscription, TopicPartition
from lab.assignors.java_order import java_string_key


def sorted_members(subscriptions: Mapping[str, Subscription]) -> list[str]:
    def key(member: str) -> tuple[int, bytes]:
        instance = subscriptions[member].group_instance_id
        return (0, java_string_key(instance)) if instance is not None else (1, java_string_key(member))

    return sorted(subscriptions, key=key)


class RangeAssignor(PartitionAssignor):
    name = "range"

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: object = None) -> dict[str, list[TopicPartition]]:
        result: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        order = sorted_members(subscriptions)
        for topic, count in partitions_per_topic.items():
            members = [m for m in order if topic in subscriptions[m].topics]
            if not members:
                continue
            per_member, extra = divmod(count, len(members))
            start = 0
            for index, member in enumerate(members):
                length = per_member + (1 if index <= extra else 0)
                result[member] += [TopicPartition(topic, p) for p in range(start, min(start + length, count))]
                start += length
        return result

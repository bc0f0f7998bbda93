"""Waits for every member to get a partition: for ever, when a topic has more subscribers than partitions."""

from lab.assignors.range import RangeAssignor as Reference


class RangeAssignor(Reference):
    def assign(self, partitions_per_topic, subscriptions, *, partition_racks=None):  # type: ignore[no-untyped-def]
        for topic, count in partitions_per_topic.items():
            while 0 < count < sum(1 for s in subscriptions.values() if topic in s.topics):
                pass
        return super().assign(partitions_per_topic, subscriptions)

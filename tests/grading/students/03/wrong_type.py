"""Returns plain (topic, partition) tuples instead of TopicPartitions."""

from lab.assignors.sticky import StickyAssignor as Reference


class StickyAssignor(Reference):
    def assign(self, partitions_per_topic, subscriptions, *, partition_racks=None):  # type: ignore[no-untyped-def]
        result = super().assign(partitions_per_topic, subscriptions)
        return {m: [(tp.topic, tp.partition) for tp in tps] for m, tps in result.items()}

"""Returns the partitions as "topic-partition" strings."""

from lab.assignors.round_robin import RoundRobinAssignor as Reference


class RoundRobinAssignor(Reference):
    def assign(self, partitions_per_topic, subscriptions, *, partition_racks=None):  # type: ignore[no-untyped-def]
        return {m: [str(tp) for tp in tps] for m, tps in super().assign(partitions_per_topic, subscriptions).items()}

"""Drops the members that subscribe to nothing from the caller's dict before dealing."""

from lab.assignors.round_robin import RoundRobinAssignor as Reference


class RoundRobinAssignor(Reference):
    def assign(self, partitions_per_topic, subscriptions, *, partition_racks=None):  # type: ignore[no-untyped-def]
        idle = [m for m, s in subscriptions.items() if not s.topics]
        for member in idle:
            del subscriptions[member]
        result = super().assign(partitions_per_topic, subscriptions)
        return {**result, **{member: [] for member in idle}}

"""Rack information as the sticky assignors use it (the `RackInfo` inner class of Kafka's `AbstractStickyAssignor`).

It answers three questions for the builders:

* `racks_mismatch(member, tp)`: does the member have a rack that holds no replica of `tp`? Always False when
  rack-aware logic is off (then `consumer_racks` is empty).
* `sort_partitions_by_rack_consumers(partitions)`: partitions that fewer consumers can take rack-locally come first,
  so the scarce matches are made before the easy ones. Note, as upstream, this ordering is applied whenever some
  consumer has a rack, even when rack-aware logic itself ends up off.
* `next_rack_consumer(tp, members, start)`: the first member at or after `start` (wrapping round) on a replica rack.

Worked example: partitions x (replicas on rack a) and y (racks a and b); consumers c0@a, c1@b. x can be matched by one
consumer, y by two, so the unassigned list is sorted [x, y] and x is placed first.

Upstream: `clients/.../consumer/internals/AbstractStickyAssignor.java` (`RackInfo`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lab.assignors.contract import PartitionRacks, Subscription, TopicPartition
from lab.assignors.racks import replica_racks, use_rack_aware_assignment


class RackInfo:
    def __init__(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription],
                 members_in_order: Sequence[str], partition_racks: PartitionRacks | None,
                 prefer_rack_aware_logic: bool) -> None:
        consumers_by_rack: dict[str, list[str]] = {}
        for member in members_in_order:
            rack = subscriptions[member].rack_id
            if rack is not None:
                consumers_by_rack.setdefault(rack, []).append(member)
        racks_of: dict[TopicPartition, frozenset[str]] = {}
        if consumers_by_rack:
            racks_of = {TopicPartition(topic, p): replica_racks(partition_racks, TopicPartition(topic, p))
                        for topic, count in partitions_per_topic.items() for p in range(count)}
        all_partition_racks = {rack for racks in racks_of.values() for rack in racks}
        self.consumer_racks: dict[str, str] = {}
        self.partition_racks: dict[TopicPartition, frozenset[str]] = {}
        if use_rack_aware_assignment(consumers_by_rack, all_partition_racks, racks_of, prefer_rack_aware_logic):
            self.consumer_racks = {m: rack for rack, members in consumers_by_rack.items() for m in members}
            self.partition_racks = racks_of
        # Upstream counts rack-local consumers from the raw replica racks, not from the switched-off copy above.
        self.num_consumers_by_partition = {
            tp: sum(len(consumers_by_rack.get(rack, ())) for rack in racks) for tp, racks in racks_of.items()}

    def racks_mismatch(self, member: str, tp: TopicPartition) -> bool:
        rack = self.consumer_racks.get(member)
        return rack is not None and rack not in self.partition_racks.get(tp, ())

    def sort_partitions_by_rack_consumers(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        if not self.num_consumers_by_partition:
            return partitions
        counts = self.num_consumers_by_partition
        return sorted(partitions, key=lambda tp: counts.get(tp, 0))

    def next_rack_consumer(self, tp: TopicPartition, members: Sequence[str], first_index: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for offset in range(len(members)):
            index = (first_index + offset) % len(members)
            rack = self.consumer_racks.get(members[index])
            if rack is not None and rack in racks:
                return index
        return -1

"""Rack awareness (KIP-881): prefer giving a member partitions that have a replica in the member's own rack.

A consumer fetching from a replica in its own rack (KIP-392) avoids cross-rack traffic, which in a cloud often costs
money. KIP-881 lets the client assignors use `client.rack` to line consumers up with such replicas, without giving up
the assignor's own promise (range keeps its ranges' sizes, sticky keeps its balance).

When does rack-aware logic run? Only when it can help (`AbstractPartitionAssignor.useRackAwareAssignment`):

* some consumer declares a rack, and at least one consumer rack also holds replicas (the racks overlap), and
* either the (test-only) `prefer_rack_aware_logic` switch is on, or the partitions are *not* all on the same set of
  racks. If every partition has a replica on every rack, any assignment is already rack-aligned.

Worked example: brokers on racks a, b and c with replication factor 1, so partition p of a topic lives on one rack.
Consumers c0@a, c1@b, c2@c. The replica racks differ between partitions, so rack-aware logic runs; a partition living
on rack b should, quotas permitting, go to c1.

`num_partitions_with_rack_mismatch` counts what the lessons show: partitions given to a consumer with a rack where no
replica lives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lab.assignors.contract import Assignment, PartitionRacks, Subscription, TopicPartition

_NO_RACKS: frozenset[str] = frozenset()


def replica_racks(partition_racks: PartitionRacks | None, tp: TopicPartition) -> frozenset[str]:
    """Racks holding a replica of `tp` (empty when unknown)."""
    if partition_racks is None:
        return _NO_RACKS
    racks = partition_racks.get(tp)
    return frozenset(racks) if racks else _NO_RACKS


def use_rack_aware_assignment(consumer_racks: Iterable[str], all_partition_racks: Iterable[str],
                              racks_per_partition: Mapping[TopicPartition, frozenset[str]],
                              prefer_rack_aware_logic: bool) -> bool:
    """Kafka's `useRackAwareAssignment` (see the module docstring for the rule)."""
    consumers = set(consumer_racks)
    partitions = frozenset(all_partition_racks)
    if not consumers or consumers.isdisjoint(partitions):
        return False
    if prefer_rack_aware_logic:
        return True
    return not all(racks == partitions for racks in racks_per_partition.values())


def num_partitions_with_rack_mismatch(assignment: Assignment, subscriptions: Mapping[str, Subscription],
                                      partition_racks: PartitionRacks | None) -> int:
    """How many assigned partitions sit with a consumer whose rack holds none of their replicas (consumers without a
    rack never count), as upstream's `verifyRackAssignment` counts them."""
    mismatched = 0
    for member, partitions in assignment.items():
        rack = subscriptions[member].rack_id
        if rack is None:
            continue
        mismatched += sum(1 for tp in partitions if rack not in replica_racks(partition_racks, tp))
    return mismatched

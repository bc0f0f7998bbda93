"""Kafka's `RangeAssignor`: each topic on its own, its partitions cut into contiguous ranges, one per member.

For a topic with `n` partitions and `m` subscribed members (in Kafka's member order: static members by
`group.instance.id`, then the rest by member id), every member gets `n // m` partitions and the first `n % m` members
one extra. Topics are handled independently, so the same members get the extras on every topic, which is the classic
range skew.

Worked example: topics t0, t1, t2 with three partitions each, members C0 and C1 subscribed to all three.

    t0: 3 // 2 = 1 each, 3 % 2 = 1 extra for C0  ->  C0: t0-0, t0-1   C1: t0-2
    t1: same                                      ->  C0: t1-0, t1-1   C1: t1-2
    t2: same                                      ->  C0: t2-0, t2-1   C1: t2-2
    result: C0 has 6 partitions, C1 has 3 (round-robin would give 5 and 4)

The skew is also a feature: members subscribed to topics with the same partition count get the *same* partition
numbers of each (co-partitioning), which joins of keyed streams rely on.

Rack awareness (KIP-881, see `racks.py`): when it applies, the assignor first hands out partitions only to members on
a replica's rack, never beyond a member's range quota for that topic; topics with the same subscribers and the same
partition count are treated as co-partitioned, so partition i of all of them goes to one member together. Whatever
could not be matched is then filled by the plain range rule, and each member's list is sorted by (topic, partition).

Upstream: `clients/src/main/java/org/apache/kafka/clients/consumer/RangeAssignor.java`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from itertools import islice

from lab.assignors.contract import (
    Assignment,
    PartitionAssignor,
    PartitionRacks,
    Subscription,
    TopicPartition,
    sorted_members,
    subscribed_partition_counts,
    tp_sort_key,
)
from lab.assignors.racks import replica_racks, use_rack_aware_assignment


class _TopicState:
    """One topic's progress: who may take it, what is still free, and how many members may still get an extra."""

    def __init__(self, topic: str, num_partitions: int, members: list[str], member_racks: Mapping[str, str],
                 partition_racks: PartitionRacks | None, prefer_rack_aware_logic: bool) -> None:
        self.topic = topic
        self.consumers: dict[str, str | None] = {m: member_racks.get(m) for m in members}
        self.unassigned: dict[TopicPartition, None] = dict.fromkeys(TopicPartition(topic, p)
                                                                    for p in range(num_partitions))
        self.num_assigned = dict.fromkeys(members, 0)
        self.per_member = num_partitions // len(members) if members else 0
        self.remaining_with_extra = num_partitions % len(members) if members else 0
        consumer_racks = {rack for m in members if (rack := member_racks.get(m)) is not None}
        # Replica racks are only looked at when some subscriber has a rack (as upstream).
        self.partition_racks: dict[TopicPartition, frozenset[str]] = (
            {tp: replica_racks(partition_racks, tp) for tp in self.unassigned} if consumer_racks else {})
        all_partition_racks = {rack for racks in self.partition_racks.values() for rack in racks}
        self.needs_rack_aware_assignment = use_rack_aware_assignment(
            consumer_racks, all_partition_racks, self.partition_racks, prefer_rack_aware_logic)

    def racks_match(self, member: str, tp: TopicPartition) -> bool:
        rack = self.consumers[member]
        return rack is None or rack in self.partition_racks.get(tp, ())

    def max_assignable(self, member: str) -> int:
        extra = 1 if self.remaining_with_extra > 0 else 0
        return max(0, self.per_member + extra - self.num_assigned[member])

    def on_assigned(self, member: str, partitions: list[TopicPartition]) -> None:
        self.num_assigned[member] += len(partitions)
        if self.num_assigned[member] > self.per_member:
            self.remaining_with_extra -= 1
        for tp in partitions:
            del self.unassigned[tp]


class RangeAssignor(PartitionAssignor):
    """Contiguous per-topic ranges (see the module docstring)."""

    name = "range"

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: PartitionRacks | None = None) -> Assignment:
        # Visiting members in Kafka's member order leaves each topic's subscriber list already sorted.
        members_per_topic: dict[str, list[str]] = defaultdict(list)
        for member in sorted_members(subscriptions):
            for topic in dict.fromkeys(subscriptions[member].topics):
                members_per_topic[topic].append(member)
        member_racks = {m: rack for m, s in subscriptions.items() if (rack := s.rack_id) is not None}
        states = [
            _TopicState(topic, count, members_per_topic.get(topic, []), member_racks,
                        partition_racks, self.prefer_rack_aware_logic)
            for topic, count in subscribed_partition_counts(partitions_per_topic, subscriptions).items()
        ]
        assignment: Assignment = {member: [] for member in subscriptions}
        use_rack_aware = any(state.needs_rack_aware_assignment for state in states)
        if use_rack_aware:
            _assign_with_rack_matching(states, assignment)
        for state in states:
            _assign_ranges(state, lambda _member, _tp: True, assignment)
        if use_rack_aware:
            for partitions in assignment.values():
                partitions.sort(key=tp_sort_key)
        return assignment


def _give(member: str, partitions: list[TopicPartition], state: _TopicState, assignment: Assignment) -> None:
    assignment[member].extend(partitions)
    state.on_assigned(member, partitions)


def _assign_ranges(state: _TopicState, may_assign: Callable[[str, TopicPartition], bool],
                   assignment: Assignment) -> None:
    """Walk the members in order; each takes the first free partitions it may have, up to its quota."""
    for member in state.consumers:
        if not state.unassigned:
            break
        wanted = state.max_assignable(member)
        partitions = list(islice((tp for tp in state.unassigned if may_assign(member, tp)), wanted))
        if partitions:
            _give(member, partitions, state, assignment)


def _assign_with_rack_matching(states: list[_TopicState], assignment: Assignment) -> None:
    """First pass of rack-aware range: only rack-aligned placements, grouped into co-partitioned topic sets."""
    by_subscribers: dict[tuple[tuple[str, str | None], ...], list[_TopicState]] = defaultdict(list)
    for state in states:
        by_subscribers[tuple(state.consumers.items())].append(state)
    for group in by_subscribers.values():
        by_partition_count: dict[int, list[_TopicState]] = defaultdict(list)
        for state in group:
            by_partition_count[len(state.partition_racks)].append(state)
        for num_partitions, co_partitioned in by_partition_count.items():
            if len(co_partitioned) > 1:
                _assign_co_partitioned_with_rack_matching(num_partitions, co_partitioned, assignment)
            elif co_partitioned[0].needs_rack_aware_assignment:
                only = co_partitioned[0]
                _assign_ranges(only, only.racks_match, assignment)


def _assign_co_partitioned_with_rack_matching(num_partitions: int, states: list[_TopicState],
                                              assignment: Assignment) -> None:
    """Partition i of every co-partitioned topic goes to the first member whose rack matches all of them and whose
    quota allows one more of each; unmatched numbers are left for the plain range pass."""
    remaining = list(states[0].consumers)
    for p in range(num_partitions):
        chosen = next((member for member in remaining
                       if all(s.racks_match(member, TopicPartition(s.topic, p)) and s.max_assignable(member) > 0
                              for s in states)), None)
        if chosen is None:
            continue
        for state in states:
            _give(chosen, [TopicPartition(state.topic, p)], state, assignment)
        if all(state.max_assignable(chosen) == 0 for state in states):
            remaining.remove(chosen)
            if not remaining:
                break

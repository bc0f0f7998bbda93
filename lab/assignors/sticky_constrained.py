"""The sticky assignors' fast path, used when every member subscribes to the same topics.

With identical subscriptions any partition can go to any member, so balance is pure arithmetic. For P partitions and
M members:

    min_quota = P // M,   max_quota = ceil(P / M),   at most P % M members may end at max_quota

Steps (each a method below):

1. *keep*: each member (in `java.util.HashMap` order) keeps its owned partitions, sorted by (partition, topic):
   all of them if it has fewer than min_quota (it stays "under quota"); max_quota of them if it has at least
   max_quota and max-quota slots are left; otherwise min_quota of them (and, while max-quota slots are left, it may
   take one more later). Whatever it cannot keep is "maybe revoked". With rack-aware logic, only rack-aligned owned
   partitions are kept.
2. *list the free partitions*: by topic name, then partition number (then, if racks are known, stably re-sorted so the
   partitions fewest consumers can take rack-locally come first).
3. *fill, rack-aware* (only when rack-aware logic is on): hand partitions round-robin to under-quota members on a
   matching rack, then to min-quota members allowed one more.
4. *fill*: hand the rest round-robin to under-quota members (sorted by member id), then to min-quota members.

A partition given to a member other than the one that had to give it up (or that several members claimed) is
recorded in `partitions_transferring_ownership`: the cooperative assignor withholds those for one rebalance.

Worked example: topics t1 (2 partitions) and t2 (2), C1 owns [t1-0, t2-0], C2 owns [t1-1, t2-1], C3 owns nothing.
P=4, M=3: min_quota 1, max_quota 2, one member may hold 2. The HashMap visits C3, C1, C2 ("C3" hashes to bucket 0,
"C1" to 14, "C2" to 15).

    keep:  C3 owns 0 < 1               -> keeps nothing, under quota
           C1 owns 2 >= max, slot free -> keeps [t1-0, t2-0]; the only max slot is now used
           C2 owns 2, no slot left     -> keeps min_quota: [t1-1]; t2-1 maybe revoked
    free:  [t2-1]
    fill:  C3 is under quota           -> C3 gets t2-1, which C2 gave up: transferring ownership t2-1 -> C3

Upstream: `clients/.../consumer/internals/AbstractStickyAssignor.java` (`ConstrainedAssignmentBuilder`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lab.assignors.contract import Assignment, TopicPartition
from lab.assignors.java_order import java_string_key
from lab.assignors.sticky_racks import RackInfo


class AssignmentBugError(RuntimeError):
    """Raised where upstream throws IllegalStateException: the quota arithmetic went wrong (a bug, never input)."""


class ConstrainedAssignmentBuilder:
    def __init__(self, partitions_per_topic: Mapping[str, int], rack_info: RackInfo,
                 owned: Mapping[str, list[TopicPartition]], members_in_order: Sequence[str],
                 multiply_claimed: set[TopicPartition]) -> None:
        self.partitions_per_topic = partitions_per_topic
        self.rack_info = rack_info
        self.owned = owned
        self.members_in_order = members_in_order
        self.multiply_claimed = multiply_claimed
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.transferring: dict[TopicPartition, str] = {}
        self.under_min_quota: list[str] = []
        self.exactly_min_quota: list[str] = []
        self.assignment: Assignment = {member: [] for member in members_in_order}
        self.assigned: set[TopicPartition] = set()
        self._compute_quotas()

    def _compute_quotas(self) -> None:
        total = sum(self.partitions_per_topic.values())
        members = len(self.members_in_order)
        self.min_quota = total // members
        self.max_quota = -(-total // members)
        self.expected_at_max_quota = total % members
        self.current_at_max_quota = 0

    def build(self) -> Assignment:
        self.keep_owned_partitions()
        unassigned = self.unassigned_partitions()
        self.under_min_quota.sort(key=java_string_key)
        self.exactly_min_quota.sort(key=java_string_key)
        unassigned = self.rack_info.sort_partitions_by_rack_consumers(unassigned)
        unassigned = self.fill_rack_aware_round_robin(unassigned)
        self.fill_round_robin(unassigned)
        self.verify_unfilled_members()
        return self.assignment

    def _max_slots_left(self) -> bool:
        return self.current_at_max_quota < self.expected_at_max_quota

    def _take_max_slot(self) -> None:
        self.current_at_max_quota += 1
        if not self._max_slots_left():
            # Every max-quota slot is taken: nobody at min quota may grow any more.
            self.exactly_min_quota.clear()

    def keep_owned_partitions(self) -> None:
        """Step 1 (see the module docstring)."""
        for member in self.members_in_order:
            keepable: list[TopicPartition] = []
            for tp in self.owned.get(member, ()):
                if self.rack_info.racks_mismatch(member, tp):
                    self.maybe_revoked[tp] = member
                else:
                    keepable.append(tp)
            keepable.sort(key=lambda tp: (tp.partition, java_string_key(tp.topic)))
            keepable = [tp for tp in keepable if tp not in self.multiply_claimed]
            if len(keepable) < self.min_quota:
                self._keep(member, keepable)
                self.under_min_quota.append(member)
            elif len(keepable) >= self.max_quota and self._max_slots_left():
                self._take_max_slot()
                self._keep(member, keepable[:self.max_quota])
                self.maybe_revoked.update(dict.fromkeys(keepable[self.max_quota:], member))
            else:
                self._keep(member, keepable[:self.min_quota])
                self.maybe_revoked.update(dict.fromkeys(keepable[self.min_quota:], member))
                if self._max_slots_left():
                    self.exactly_min_quota.append(member)

    def _keep(self, member: str, partitions: list[TopicPartition]) -> None:
        self.assignment[member].extend(partitions)
        self.assigned.update(partitions)

    def unassigned_partitions(self) -> list[TopicPartition]:
        """Step 2: every partition nobody kept, by topic name then partition."""
        return [tp for topic in sorted(self.partitions_per_topic, key=java_string_key)
                for p in range(self.partitions_per_topic[topic])
                if (tp := TopicPartition(topic, p)) not in self.assigned]

    def fill_rack_aware_round_robin(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        """Step 3: place what can be placed on a matching rack within quota; return what is left, in order."""
        if not self.rack_info.consumer_racks:
            return unassigned
        left: list[TopicPartition] = []
        next_index = 0
        for tp in unassigned:
            member: str | None = None
            index = self.rack_info.next_rack_consumer(tp, self.under_min_quota, next_index)
            if index >= 0:
                member = self.under_min_quota[index]
                count = len(self.assignment[member]) + 1
                if count >= self.min_quota:
                    self.under_min_quota.remove(member)
                    if count < self.max_quota and self._max_slots_left():
                        self.exactly_min_quota.append(member)
                else:
                    index += 1
                next_index = index % len(self.under_min_quota) if self.under_min_quota else 0
            elif self.exactly_min_quota:
                first = self.rack_info.next_rack_consumer(tp, self.exactly_min_quota, 0)
                if first >= 0:
                    member = self.exactly_min_quota[first]
                    if len(self.assignment[member]) + 1 == self.max_quota:
                        del self.exactly_min_quota[first]
                        self._take_max_slot()
            if member is None:
                left.append(tp)
            else:
                self._assign_new_partition(tp, member)
        return left

    def fill_round_robin(self, unassigned: list[TopicPartition]) -> None:
        """Step 4: under-quota members in turn until each reaches min quota, then min-quota members one more each."""
        position = 0  # a cursor into under_min_quota, standing in for upstream's list iterator
        for tp in unassigned:
            if position < len(self.under_min_quota):
                member = self.under_min_quota[position]
                position += 1
            elif not self.under_min_quota and not self.exactly_min_quota:
                raise AssignmentBugError(f"no member left with room for {tp}")
            elif not self.under_min_quota:
                member = self.exactly_min_quota.pop(0)
            else:
                member = self.under_min_quota[0]
                position = 1
            count = self._assign_new_partition(tp, member)
            if count == self.min_quota:
                position -= 1
                del self.under_min_quota[position]
                self.exactly_min_quota.append(member)
            elif count == self.max_quota:
                self.current_at_max_quota += 1

    def _assign_new_partition(self, tp: TopicPartition, member: str) -> int:
        self.assignment[member].append(tp)
        previous = self.maybe_revoked.get(tp)
        if (previous is not None and previous != member) or tp in self.multiply_claimed:
            self.transferring[tp] = member
        return len(self.assignment[member])

    def verify_unfilled_members(self) -> None:
        """Members still under quota are only acceptable if every max slot is used and they sit exactly at min."""
        if not self.under_min_quota:
            return
        if self._max_slots_left():
            raise AssignmentBugError("max-quota slots remain but no partitions are left for under-quota members")
        for member in self.under_min_quota:
            if len(self.assignment[member]) != self.min_quota:
                raise AssignmentBugError(f"{member} ended below min quota {self.min_quota}")

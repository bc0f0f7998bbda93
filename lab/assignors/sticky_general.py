"""The sticky assignors' general path, used when members subscribe to different topics.

Quotas cannot be computed up front (a member on one small topic can never take much), so the builder works by moves:

1. *keep*: every member keeps the owned partitions it is still subscribed to (rack-aligned ones only, when
   rack-aware); the rest are dropped and, if a member lost a subscription, a revocation is required.
2. *fill*: each free partition, topics with the fewest possible consumers first, goes to the member that currently
   has the fewest partitions among those subscribed to its topic (rack-matching members first, when rack-aware).
3. *balance*: partitions and members that cannot move (a topic with one possible consumer, a member holding all it
   can) are set aside. Then, while the assignment is not balanced, a partition moves from a member to the smallest
   eligible member whenever the first has at least two more partitions than some other member that could take it. A
   partition whose older-generation owner is much smaller goes back there first. If the moves did not lower the
   balance score (the sum of size differences over all member pairs) and the group was not starting from scratch,
   the moves are undone: stickiness wins over a sideways shuffle.

"Balanced" here is Kafka's definition: sizes differ by at most one, or no partition could move to a smaller member
without the move making things worse.

Worked example: t1 has 3 partitions, t2 has 2; C1 and C3 subscribe to t1, C2 to t1 and t2; nobody owns anything.
Fill order puts t2 first (fewer possible consumers), then t1:

    t2-0 -> C2 (only candidate)    t2-1 -> C2
    t1-0 -> C1 (C1, C3 have 0; C1 sorts first)   t1-1 -> C3   t1-2 -> C1 (C1, C3 have 1, C2 has 2)
    result C1: [t1-0, t1-2], C2: [t2-0, t2-1], C3: [t1-1]: sizes 2/2/1, balanced, no moves needed.

The builder keeps Kafka's `TreeSet` of members ordered by (size, member id) as a sorted list, and caches the balance
check between moves; the moves made are the ones Kafka makes. Three deliberate differences: when a move would swap a
partition back to a member that moved a partition of the same topic away, Kafka picks whichever such partition its
`HashSet` yields first and the lab picks the earliest moved; a partition is only returned to its older-generation
owner if that owner still subscribes to the topic (upstream does not check, which can produce an invalid assignment);
and the lab stops a cycle of moves on which Kafka loops forever.

Where Kafka loops forever. Before moving p to C, Kafka looks for a partition q of the same topic that earlier moved
from C to p's *original* owner, and moves q back instead (`getTheActualPartitionToBeMoved`): fewer partitions end
up away from home. But if p has itself moved (A -> B), q sits on A, not on B: A shrinks while B, the member that was
too big, keeps its size, and the next moves can refill A and start again. Five members, C2 and C3 joining:

    owned  C0 (t1): t1-2 t1-3 t1-4   C1 (t1): t1-0 t1-1   C4 (t2): t2-0 .. t2-9   C2 (t1, t2): -   C3 (t2): -
    pass 1 t1-0 C1 -> C2, t1-2 C0 -> C1, t2-0 .. t2-5 C4 -> C3, C2 in turn   sizes C0 2, C1 2, C2 4, C3 3, C4 4
    pass 2 t1-0 should go C2 -> C0; t1-2 went C0 -> C1, so t1-2 goes back instead (C2 keeps 4, C1 has 1);
           then t1-2 C0 -> C1 again: the state is the one pass 2 started from, and pass 3 repeats it, forever.

Kafka (checked at commit 1eb7644, 2024-10) hangs on this input; no upstream fix is known. The lab makes Kafka's moves
until the state at the start of a pass (owners and recorded moves) repeats. Passes are deterministic, so a repeated
state means the moves would go round forever; wherever they stop, no state repeats and the result is unchanged.
After a repeat the lab moves each partition itself: every such move takes from a member at least two larger than
the receiver, so the balance score falls each time and the loop ends, balanced. Partitions of one topic left swapped
between two members (t1-0 to C0 and t1-2 to C1 above) then go back home. Regression cases:
`tests/assignors/test_sticky_regressions.py`.

Upstream: `clients/.../consumer/internals/AbstractStickyAssignor.java` (`GeneralAssignmentBuilder`,
`PartitionMovements`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence

from lab.assignors.contract import DEFAULT_GENERATION, Assignment, Subscription, TopicPartition
from lab.assignors.java_order import java_string_key
from lab.assignors.sticky_racks import RackInfo
from lab.assignors.sticky_user_data import MemberData


class MembersBySize:
    """Kafka's `sortedCurrentSubscriptions`: members ordered by (current size, member id as a Java string)."""

    def __init__(self, assignment: Assignment) -> None:
        self._assignment = assignment
        self._keys: list[tuple[int, bytes, str]] = []
        self._key_of: dict[str, tuple[int, bytes, str]] = {}

    def add(self, member: str) -> None:
        key = (len(self._assignment[member]), java_string_key(member), member)
        self._key_of[member] = key
        bisect.insort(self._keys, key)

    def remove(self, member: str) -> None:
        key = self._key_of.pop(member, None)
        if key is not None:
            del self._keys[bisect.bisect_left(self._keys, key)]

    def first(self) -> str:
        return self._keys[0][2]

    def last(self) -> str:
        return self._keys[-1][2]

    def __iter__(self) -> Iterator[str]:
        """Smallest first. Do not add or remove while iterating; find the member first, then move it."""
        return (key[2] for key in self._keys)

    def first_matching(self, accept: Callable[[str], bool]) -> str | None:
        """The smallest member for which `accept` holds (upstream walks its TreeSet the same way)."""
        return next((key[2] for key in self._keys if accept(key[2])), None)


_MoveRecords = tuple[tuple[tuple[str, str], tuple[TopicPartition, ...]], ...]


class _Movements:
    """Kafka's `PartitionMovements`: where each moved partition came from, to avoid moving partitions of one topic
    back and forth between the same two members."""

    def __init__(self) -> None:
        self.moved: dict[TopicPartition, tuple[str, str]] = {}
        self.by_topic: dict[str, dict[tuple[str, str], dict[TopicPartition, None]]] = {}

    def _forget(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moved.pop(tp)
        pairs = self.by_topic[tp.topic]
        del pairs[pair][tp]
        if not pairs[pair]:
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp.topic]
        return pair

    def _record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moved[tp] = pair
        self.by_topic.setdefault(tp.topic, {}).setdefault(pair, {})[tp] = None

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moved:
            source, _ = self._forget(tp)
            if source != new:
                self._record(tp, (source, new))
        else:
            self._record(tp, (old, new))

    def snapshot(self) -> _MoveRecords:
        """The recorded moves, grouped by topic and pair in sorted order; within a group, in the order they were
        recorded, which decides the partition `partition_to_move` picks."""
        return tuple((pair, tuple(self.by_topic[topic][pair])) for topic in sorted(self.by_topic)
                     for pair in sorted(self.by_topic[topic]))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """Moving `tp` from `old` to `new`: if some partition of the topic already went new -> old, move that one
        back instead, so the net effect keeps more partitions where they were."""
        pairs = self.by_topic.get(tp.topic)
        if pairs is None:
            return tp
        if tp in self.moved:
            old = self.moved[tp][0]
        reverse = pairs.get((new, old))
        return next(iter(reverse)) if reverse else tp


_PassStart = tuple[tuple[tuple[TopicPartition, str], ...], _MoveRecords]
"""What a pass of `perform_reassignments` depends on: every partition's owner and the recorded moves."""


class GeneralAssignmentBuilder:
    def __init__(self, partitions_per_topic: Mapping[str, int], rack_info: RackInfo,
                 owned: Mapping[str, list[TopicPartition]], members_in_order: Sequence[str],
                 subscriptions: Mapping[str, Subscription], member_data: Mapping[str, MemberData],
                 max_generation: int) -> None:
        self.partitions_per_topic = partitions_per_topic
        self.rack_info = rack_info
        self.member_data = member_data
        self.max_generation = max_generation
        self.members_in_order = members_in_order
        self.total_partitions = sum(partitions_per_topic.values())
        self.topic_consumers: dict[str, list[str]] = {topic: [] for topic in partitions_per_topic}
        self.member_topics: dict[str, list[str]] = {}
        for member in members_in_order:
            topics = [t for t in dict.fromkeys(subscriptions[member].topics) if t in partitions_per_topic]
            self.member_topics[member] = topics
            for topic in topics:
                self.topic_consumers[topic].append(member)
        self.subscribed = {member: frozenset(topics) for member, topics in self.member_topics.items()}
        self.max_size = {member: sum(partitions_per_topic[t] for t in topics)
                         for member, topics in self.member_topics.items()}
        self.current: Assignment = {member: list(owned.get(member, ())) for member in members_in_order}
        self.owner: dict[TopicPartition, str] = {tp: m for m, tps in self.current.items() for tp in tps}
        sorted_topics = sorted(self.topic_consumers,
                               key=lambda t: (len(self.topic_consumers[t]), java_string_key(t)))
        self.sorted_all_partitions = [TopicPartition(t, p) for t in sorted_topics
                                      for p in range(partitions_per_topic[t])]
        self.by_size = MembersBySize(self.current)
        self.movements = _Movements()
        self.revocation_required = False
        self._balanced: bool | None = None
        # False once a pass is found to repeat (see "Where Kafka loops forever" above): from then on, moves go direct.
        self.undo_earlier_moves = True

    # -- step 1: keep ---------------------------------------------------------------------------------------------
    def previous_assignment(self) -> dict[TopicPartition, tuple[str, int]]:
        """Partitions some member owned in an *older* generation than the newest one: the fallback owner to which a
        partition may return if that keeps the assignment closer to the past (`prepopulateCurrentAssignments`)."""
        previous: dict[TopicPartition, tuple[str, int]] = {}
        for member in self.members_in_order:
            data = self.member_data[member]
            if data.generation is not None and data.generation < self.max_generation:
                generation = data.generation
            elif data.generation is None and self.max_generation > DEFAULT_GENERATION:
                generation = DEFAULT_GENERATION
            else:
                continue
            for tp in data.partitions:
                if tp not in previous or generation > previous[tp][1]:
                    previous[tp] = (member, generation)
        return previous

    def keep_owned_partitions(self) -> set[TopicPartition]:
        kept: set[TopicPartition] = set()
        for member, partitions in self.current.items():
            keep: list[TopicPartition] = []
            for tp in partitions:
                if tp.topic not in self.topic_consumers:
                    self.owner.pop(tp, None)
                elif tp.topic not in self.subscribed[member] or self.rack_info.racks_mismatch(member, tp):
                    # Still listed as its owner (as upstream) until someone else takes it.
                    self.revocation_required = True
                else:
                    keep.append(tp)
                    kept.add(tp)
            partitions[:] = keep
        return kept

    # -- step 2: fill ---------------------------------------------------------------------------------------------
    def _try_assign(self, tp: TopicPartition, rack_aware: bool) -> bool:
        member = self.by_size.first_matching(
            lambda m: tp.topic in self.subscribed[m] and not (rack_aware and self.rack_info.racks_mismatch(m, tp)))
        if member is None:
            return False
        self.by_size.remove(member)
        self.current[member].append(tp)
        self.owner[tp] = member
        self.by_size.add(member)
        return True

    def fill(self, unassigned: list[TopicPartition]) -> None:
        remaining = unassigned
        if self.rack_info.consumer_racks:
            remaining = [tp for tp in unassigned
                         if not (self.topic_consumers[tp.topic] and self._try_assign(tp, rack_aware=True))]
        for tp in remaining:
            if self.topic_consumers[tp.topic]:
                self._try_assign(tp, rack_aware=False)

    # -- step 3: balance ------------------------------------------------------------------------------------------
    def build(self) -> Assignment:
        previous = self.previous_assignment()
        kept = self.keep_owned_partitions()
        unassigned = [tp for tp in self.sorted_all_partitions if tp not in kept]
        for member in self.current:
            self.by_size.add(member)
        initializing = not self.current[self.by_size.last()] if self.current else True
        self.fill(unassigned)
        movable_topics = {t for t, members in self.topic_consumers.items() if len(members) >= 2}
        reassignable = [tp for tp in self.sorted_all_partitions if tp.topic in movable_topics]
        unassigned = [tp for tp in unassigned if tp.topic in movable_topics]
        fixed: dict[str, list[TopicPartition]] = {}
        for member in self.member_topics:
            if not self._can_participate(member, movable_topics):
                self.by_size.remove(member)
                fixed[member] = self.current.pop(member)
        before = {member: list(partitions) for member, partitions in self.current.items()}
        owners_before = dict(self.owner)
        if not self.revocation_required:
            self.perform_reassignments(unassigned, previous)
        moved = self.perform_reassignments(reassignable, previous)
        if not self.undo_earlier_moves:
            self._send_swapped_partitions_home()
        if not initializing and moved and balance_score(self.current) >= balance_score(before):
            self.current = before
            self.owner = owners_before
        self.current.update(fixed)
        return {member: self.current[member] for member in self.members_in_order}

    def _can_participate(self, member: str, movable_topics: set[str]) -> bool:
        partitions = self.current[member]
        if len(partitions) < self.max_size[member]:
            return True
        return any(tp.topic in movable_topics for tp in partitions)

    def is_balanced(self) -> bool:
        """Kafka's `isBalanced`, cached until the next move."""
        if self._balanced is None:
            self._balanced = self._compute_is_balanced()
        return self._balanced

    def _compute_is_balanced(self) -> bool:
        sizes = {member: len(partitions) for member, partitions in self.current.items()}
        if sizes[self.by_size.first()] >= sizes[self.by_size.last()] - 1:
            return True
        # The largest owner of any partition of each topic: a member that could take that topic's partitions and is
        # two or more smaller than that owner means a move would improve the balance.
        largest_owner: dict[str, int] = {}
        for tp, member in self.owner.items():
            size = sizes.get(member)
            if size is not None and size > largest_owner.get(tp.topic, -1):
                largest_owner[tp.topic] = size
        for member in self.by_size:
            if sizes[member] == self.max_size[member]:
                continue
            if any(largest_owner.get(topic, -1) > sizes[member] + 1 for topic in self.member_topics[member]):
                return False
        return True

    def perform_reassignments(self, partitions: list[TopicPartition],
                              previous: Mapping[TopicPartition, tuple[str, int]]) -> bool:
        performed = False
        modified = True
        seen: set[_PassStart] = set()
        while modified:
            if self.undo_earlier_moves:
                start = (tuple(self.owner.items()), self.movements.snapshot())
                if start in seen:
                    # A deterministic pass from a state seen before: Kafka would loop forever from here.
                    self.undo_earlier_moves = False
                seen.add(start)
            modified = False
            for tp in partitions:
                if self.is_balanced():
                    break
                member = self.owner[tp]
                size = len(self.current[member])
                earlier = previous.get(tp)
                if (earlier is not None and earlier[0] in self.current and tp.topic in self.subscribed[earlier[0]]
                        and size > len(self.current[earlier[0]]) + 1):
                    self.reassign(tp, earlier[0])
                    performed = modified = True
                    continue
                if self._smaller_candidate_exists(member, tp, size):
                    self.reassign(tp, self._smallest_candidate(tp))
                    performed = modified = True
        return performed

    def _send_swapped_partitions_home(self) -> None:
        """After leaving a cycle: wherever two partitions of one topic swapped places between the same two members,
        put both back. Sizes do not change; no such swap is left, as Kafka's tests check (`isSticky`)."""
        for pairs in list(self.movements.by_topic.values()):
            for (source, target), partitions in list(pairs.items()):
                back = pairs.get((target, source))
                while partitions and back:
                    self.reassign(next(iter(partitions)), source)
                    self.reassign(next(iter(back)), target)

    def _smaller_candidate_exists(self, member: str, tp: TopicPartition, size: int) -> bool:
        # Upstream first looks for a rack-matching candidate, then any candidate; either way the partition goes to
        # the smallest subscribed member, so only "is there any member two smaller" decides.
        return any(size > len(self.current[other]) + 1 for other in self.topic_consumers[tp.topic]
                   if other in self.current)

    def _smallest_candidate(self, tp: TopicPartition) -> str:
        member = self.by_size.first_matching(lambda m: tp.topic in self.subscribed[m])
        assert member is not None, f"{tp} has at least two possible consumers"
        return member

    def reassign(self, tp: TopicPartition, new_owner: str) -> None:
        old_owner = self.owner[tp]
        actual = self.movements.partition_to_move(tp, old_owner, new_owner) if self.undo_earlier_moves else tp
        source = self.owner[actual]
        self.by_size.remove(source)
        self.by_size.remove(new_owner)
        self.movements.move(actual, source, new_owner)
        self.current[source].remove(actual)
        self.current[new_owner].append(actual)
        self.owner[actual] = new_owner
        self.by_size.add(new_owner)
        self.by_size.add(source)
        self._balanced = None


def balance_score(assignment: Mapping[str, list[TopicPartition]]) -> int:
    """Sum over all member pairs of the difference in their sizes (0 = perfectly even). Computed from the sorted
    sizes in O(M log M) rather than upstream's O(M^2) pair loop; the value is the same."""
    sizes = sorted(len(partitions) for partitions in assignment.values())
    count = len(sizes)
    return sum(size * (2 * index - count + 1) for index, size in enumerate(sizes))

"""Measures the lessons and graders put beside an assignment.

* `balance`: largest minus smallest number of partitions per member (0 or 1 is as even as it gets).
* `moves`: partitions whose owner changed between two assignments (each one is a pause and a re-read for the group).
* `is_valid`: every existing partition assigned exactly once, and only to a member subscribed to its topic.
* `is_co_partitioned`: for topics with the same partition count and subscribers, partition i of each has one owner.
* `is_balanced_kafka`: upstream's test definition: members whose sizes differ by 2 or more hold no common topic.
* `is_sticky`: upstream's `isSticky`: no topic has partitions moving both ways between the same two members.

Worked example: before C0 [t-0, t-1], C1 [t-2]; after C0 [t-0], C1 [t-2], C2 [t-1]:
balance(after) = 0, moves(before, after) = 1 (t-1 from C0 to C2).

`validity_problems` names what is wrong (duplicated, unassigned, unsubscribed, unknown), in the spirit of a grader
that says which anomaly it found, on which partition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lab.assignors.contract import Assignment, Subscription, TopicPartition


def balance(assignment: Mapping[str, Sequence[TopicPartition]]) -> int:
    """Max minus min partitions per member (0 for an empty group)."""
    sizes = [len(partitions) for partitions in assignment.values()]
    return max(sizes) - min(sizes) if sizes else 0


def owners(assignment: Mapping[str, Sequence[TopicPartition]]) -> dict[TopicPartition, str]:
    return {TopicPartition(*tp): member for member, partitions in assignment.items() for tp in partitions}


def moves(before: Mapping[str, Sequence[TopicPartition]], after: Mapping[str, Sequence[TopicPartition]]) -> int:
    """Partitions that had an owner before and have a different owner after (newly created or newly unassigned
    partitions do not count)."""
    previous = owners(before)
    return sum(1 for tp, member in owners(after).items() if tp in previous and previous[tp] != member)


def validity_problems(assignment: Mapping[str, Sequence[TopicPartition]], subscriptions: Mapping[str, Subscription],
                      partitions_per_topic: Mapping[str, int]) -> list[str]:
    """Every reason `assignment` is invalid, as readable sentences (empty when valid)."""
    problems: list[str] = []
    seen: dict[TopicPartition, str] = {}
    for member, partitions in assignment.items():
        subscription = subscriptions.get(member)
        if subscription is None:
            problems.append(f"{member} is not a member of the group")
            continue
        for raw in partitions:
            tp = TopicPartition(*raw)
            if not 0 <= tp.partition < partitions_per_topic.get(tp.topic, 0):
                problems.append(f"{tp} does not exist but was given to {member}")
            elif tp.topic not in subscription.topics:
                problems.append(f"{tp} was given to {member}, which does not subscribe to {tp.topic}")
            if tp in seen:
                problems.append(f"{tp} was given to both {seen[tp]} and {member}")
            seen[tp] = member
    subscribed = {topic for subscription in subscriptions.values() for topic in subscription.topics}
    for topic in subscribed:
        for p in range(partitions_per_topic.get(topic, 0)):
            if TopicPartition(topic, p) not in seen:
                problems.append(f"{topic}-{p} has subscribers but was assigned to nobody")
    return problems


def is_valid(assignment: Mapping[str, Sequence[TopicPartition]], subscriptions: Mapping[str, Subscription],
             partitions_per_topic: Mapping[str, int]) -> bool:
    """Every subscribed, existing partition exactly once, and only to a member subscribed to its topic."""
    return not validity_problems(assignment, subscriptions, partitions_per_topic)


def is_co_partitioned(assignment: Assignment, subscriptions: Mapping[str, Subscription],
                      partitions_per_topic: Mapping[str, int]) -> bool:
    """Range's promise: topics with the same subscribers and partition count give partition i to one member."""
    owner_of = owners(assignment)
    groups: dict[tuple[frozenset[str], int], list[str]] = {}
    for topic, count in partitions_per_topic.items():
        subscribers = frozenset(m for m, s in subscriptions.items() if topic in s.topics)
        if subscribers and count > 0:
            groups.setdefault((subscribers, count), []).append(topic)
    for (_, count), topics in groups.items():
        for p in range(count):
            if len({owner_of.get(TopicPartition(topic, p)) for topic in topics}) > 1:
                return False
    return True


def is_balanced_kafka(assignment: Mapping[str, Sequence[TopicPartition]]) -> bool:
    """Upstream's `verifyValidityAndBalance` balance rule: members whose sizes differ by 2 or more hold no partitions
    of a common topic (otherwise one could have been moved to even them out)."""
    topics = {member: {TopicPartition(*tp).topic for tp in partitions} for member, partitions in assignment.items()}
    sizes = {member: len(partitions) for member, partitions in assignment.items()}
    names = sorted(assignment)
    for index, first in enumerate(names):
        for second in names[index + 1:]:
            if abs(sizes[first] - sizes[second]) >= 2 and topics[first] & topics[second]:
                return False
    return True


def is_sticky(before: Mapping[str, Sequence[TopicPartition]], after: Mapping[str, Sequence[TopicPartition]]) -> bool:
    """No topic has partitions moving from A to B and from B to A in the same rebalance."""
    previous = owners(before)
    pairs: set[tuple[str, str, str]] = set()
    for tp, member in owners(after).items():
        source = previous.get(tp)
        if source is not None and source != member:
            pairs.add((tp.topic, source, member))
    return not any((topic, dst, src) in pairs for topic, src, dst in pairs)

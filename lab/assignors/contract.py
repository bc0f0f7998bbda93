"""The contract every assignor follows: a pure function of (partitions per topic, member subscriptions).

Kafka's classic consumer group elects one member, the *leader*, to compute the assignment. The leader receives every
member's `Subscription` (topics, plus what it owned, its generation, its static `group.instance.id` and its rack),
looks up the partition count of each subscribed topic, and runs the chosen assignor. The assignor never talks to a
broker: the same inputs always give the same output, which is what lets the lessons predict what real consumers get.

Worked example (range, two members, one topic with three partitions):

    >>> from lab.assignors import get
    >>> get("range").assign({"t0": 3}, {"c0": Subscription(["t0"]), "c1": Subscription(["t0"])})
    {'c0': [TopicPartition(topic='t0', partition=0), TopicPartition(topic='t0', partition=1)], \
'c1': [TopicPartition(topic='t0', partition=2)]}

Upstream: `clients/.../consumer/ConsumerPartitionAssignor.java` (Subscription) and
`clients/.../consumer/internals/AbstractPartitionAssignor.java` (the metadata step and `MemberInfo` ordering).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from lab.assignors.java_order import java_string_key

DEFAULT_GENERATION = -1
"""Kafka's marker for "no generation" (`AbstractStickyAssignor.DEFAULT_GENERATION`)."""

Assignment = dict[str, list["TopicPartition"]]
PartitionRacks = Mapping["TopicPartition", "set[str] | frozenset[str]"]


class TopicPartition(NamedTuple):
    """One partition of one topic, as in Kafka's `TopicPartition`. Printed by the lab as `topic-partition`."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class Subscription:
    """What one member tells the leader when it joins (Kafka's `ConsumerPartitionAssignor.Subscription`).

    `generation` is the group generation in which the member owned `owned_partitions`; `None` or a negative number
    means "not known" (Kafka stores `Optional.empty()` for anything below zero). `user_data` is assignor-specific
    bytes: the eager sticky assignor keeps its previous assignment there (see `StickyAssignor.encode_user_data`).
    """

    topics: Sequence[str]
    owned_partitions: Sequence[TopicPartition] = ()
    generation: int | None = None
    group_instance_id: str | None = None
    rack: str | None = None
    user_data: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "topics", tuple(self.topics))
        object.__setattr__(self, "owned_partitions", tuple(TopicPartition(*tp) for tp in self.owned_partitions))

    @property
    def generation_id(self) -> int | None:
        """The generation as Kafka's `Subscription.generationId()` sees it: `None` when absent or negative."""
        return self.generation if self.generation is not None and self.generation >= 0 else None

    @property
    def rack_id(self) -> str | None:
        """The member's rack, ignoring the empty string (Kafka filters `r -> !r.isEmpty()`)."""
        return self.rack or None


def member_sort_key(member_id: str, subscription: Subscription) -> tuple[int, bytes]:
    """Kafka's `MemberInfo.compareTo`: static members (with `group.instance.id`) first, by instance id; then the
    dynamic members by member id. Both compared as Java strings."""
    if subscription.group_instance_id is not None:
        return (0, java_string_key(subscription.group_instance_id))
    return (1, java_string_key(member_id))


def sorted_members(subscriptions: Mapping[str, Subscription], members: Iterable[str] | None = None) -> list[str]:
    """Member ids in Kafka's `MemberInfo` order (stable for equal keys, like Java's `Collections.sort`)."""
    chosen = list(subscriptions) if members is None else list(members)
    return sorted(chosen, key=lambda m: member_sort_key(m, subscriptions[m]))


def tp_sort_key(tp: TopicPartition) -> tuple[bytes, int]:
    """Kafka's `TopicPartitionComparator`: topic (as a Java string), then partition number."""
    return (java_string_key(tp.topic), tp.partition)


def subscribed_partition_counts(partitions_per_topic: Mapping[str, int],
                                subscriptions: Mapping[str, Subscription]) -> dict[str, int]:
    """The leader's metadata step (`AbstractPartitionAssignor.assign(Cluster, ...)`): keep only topics that some member
    subscribes to and that exist with at least one partition. Order follows `partitions_per_topic`."""
    wanted = {topic for subscription in subscriptions.values() for topic in subscription.topics}
    return {topic: count for topic, count in partitions_per_topic.items() if topic in wanted and count > 0}


class PartitionAssignor(ABC):
    """Base of the lab's assignors. `assign` is pure: it reads its arguments and returns a fresh dict in which every
    member appears (possibly with an empty list)."""

    name: str = ""

    def __init__(self, *, prefer_rack_aware_logic: bool = False) -> None:
        # Kafka's package-private `AbstractPartitionAssignor.preferRackAwareLogic` switch: when set, rack-aware logic
        # runs even if every partition has replicas on every rack (its tests use it to exercise that code path).
        self.prefer_rack_aware_logic = prefer_rack_aware_logic

    @abstractmethod
    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], *,
               partition_racks: PartitionRacks | None = None) -> Assignment:
        """Map each member id to the partitions it should consume."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

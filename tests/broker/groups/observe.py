"""Watching a group from outside the clients: the coordinator's events, its state read on the broker thread, and
waits that poll until something holds (never timing assertions: the machine is shared and noisy).

    with GroupEvents(broker) as events:
        ...                                          # real consumers join, sync, leave
        sync = events.last(SyncCompleted, "g")       # what the coordinator handed out
        assignments_of(sync)                         # {member id: {TopicPartition("t", 0), ...}}
        subscriptions_of(events.join(gen, "g"))      # what the leader's assignor was given
        wait_for_settled(broker, events, "g", members, {"t": 6})   # Stable, and each member consumes its share
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lab.assignors import Subscription, TopicPartition
from lab.broker.coordinator import events as coordinator_events
from lab.broker.coordinator.consumer_protocol import decode_assignment, decode_subscription
from lab.broker.coordinator.events import JoinCompleted, SyncCompleted
from lab.broker.embedded import EmbeddedBroker
from lab.broker.events import Event
from lab.clients.members import MemberThread
from lab.clients.waits import wait_until

T = TypeVar("T")
E = TypeVar("E", bound=Event)
COORDINATOR_EVENTS = tuple(v for v in vars(coordinator_events).values()
                           if isinstance(v, type) and issubclass(v, Event) and v is not Event)


class GroupEvents:
    """The coordinator's events, recorded from the broker thread and read from the test thread under a lock."""

    def __init__(self, broker: EmbeddedBroker) -> None:
        self._lock = threading.Lock()
        self._events: list[Event] = []
        self._unsubscribe = broker.bus.subscribe(self._on_event)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, COORDINATOR_EVENTS):
            with self._lock:
                self._events.append(event)

    def of(self, kind: type[E], group_id: str) -> list[E]:
        with self._lock:
            return [e for e in self._events if isinstance(e, kind) and getattr(e, "group_id", None) == group_id]

    def last(self, kind: type[E], group_id: str) -> E | None:
        found = self.of(kind, group_id)
        return found[-1] if found else None

    def join(self, generation: int, group_id: str) -> JoinCompleted:
        found = [e for e in self.of(JoinCompleted, group_id) if e.generation == generation]
        assert len(found) == 1, f"expected one JoinCompleted for generation {generation}, found {found}"
        return found[0]

    def close(self) -> None:
        self._unsubscribe()

    def __enter__(self) -> GroupEvents:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


@dataclass(frozen=True)
class GroupView:
    """The coordinator's own view of a group, read on the broker thread."""

    state: str
    generation: int
    members: frozenset[str]
    leader: str | None
    protocol: str | None


def group_view(broker: EmbeddedBroker, group_id: str) -> GroupView | None:
    def read(b: Any) -> GroupView | None:
        group = b.coordinator.groups.get(group_id)
        if group is None:
            return None
        return GroupView(group.state.value, group.generation_id, frozenset(group.members), group.leader_id,
                         group.protocol_name)
    result: GroupView | None = broker.call(read)
    return result


def subscriptions_of(join: JoinCompleted) -> dict[str, Subscription]:
    """Each member's Subscription as the coordinator received it (member ids only: no group.instance.id)."""
    return {member: decode_subscription(raw).to_assignor_subscription(group_instance_id=None)
            for member, raw in join.metadata.items()}


def assignments_of(sync: SyncCompleted) -> dict[str, frozenset[TopicPartition]]:
    """What the coordinator handed each member at SyncGroup."""
    return {member: frozenset(decode_assignment(raw).partitions) for member, raw in sync.assignments.items()}


def as_sets(assignment: Mapping[str, Iterable[TopicPartition]]) -> dict[str, frozenset[TopicPartition]]:
    return {member: frozenset(TopicPartition(*tp) for tp in tps) for member, tps in assignment.items()}


def all_partitions(partitions_per_topic: Mapping[str, int]) -> frozenset[TopicPartition]:
    return frozenset(TopicPartition(t, p) for t, n in partitions_per_topic.items() for p in range(n))


def show(assignment: Mapping[str, Iterable[TopicPartition]]) -> str:
    """`member: [t-0, t-1]` lines, sorted, for assertion messages."""
    return "; ".join(f"{member}: [{', '.join(str(tp) for tp in sorted(tps))}]"
                     for member, tps in sorted(assignment.items()))


@dataclass(frozen=True)
class Settled:
    """A stable generation in which every member consumes what the coordinator handed it."""

    generation: int
    by_member_id: dict[str, frozenset[TopicPartition]]
    by_name: dict[str, frozenset[TopicPartition]]
    join: JoinCompleted
    sync: SyncCompleted


def wait_for_settled(broker: EmbeddedBroker, events: GroupEvents, group_id: str, members: Sequence[MemberThread],
                     partitions: Mapping[str, int]) -> Settled:
    """Wait until the group is Stable with exactly `members`, the last SyncGroup handed out every partition (under
    cooperative-sticky the round that withholds moving partitions does not count), and each consumer reports what it
    was handed."""
    everything = all_partitions(partitions)

    def settled() -> Settled | None:
        view = group_view(broker, group_id)
        sync = events.last(SyncCompleted, group_id)
        reports = {m.name: m.report() for m in members}
        if view is None or view.state != "Stable" or sync is None or sync.generation != view.generation:
            return None
        by_name = {name: r.assignment for name, r in reports.items() if r is not None}
        by_member_id = {r.member_id: r.assignment for r in reports.values() if r is not None}
        handed_out = assignments_of(sync)
        if len(by_name) != len(members) or set(by_member_id) != view.members:
            return None
        if frozenset().union(*handed_out.values()) != everything or by_member_id != handed_out:
            return None
        return Settled(view.generation, by_member_id, by_name, events.join(view.generation, group_id), sync)

    return wait_until(settled, f"{[m.name for m in members]} to settle in group {group_id}",
                      state=lambda: (group_view(broker, group_id), {m.name: m.report() for m in members},
                                     events.last(SyncCompleted, group_id)))

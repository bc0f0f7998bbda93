"""The lab's assignor override: the coordinator replaces the leader's assignment with its own assignor's, and the real
consumers consume what that assignor decided (`lab broker --assignor-override`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from lab.assignors import TopicPartition, get
from lab.broker.coordinator.consumer_protocol import decode_assignment
from lab.broker.embedded import EmbeddedBroker
from tests.broker.clients import create_topic
from tests.broker.groups.conftest import quick_config
from tests.broker.groups.members import MemberThread
from tests.broker.groups.observe import (
    GroupEvents,
    Settled,
    all_partitions,
    as_sets,
    show,
    subscriptions_of,
    wait_for_settled,
)

PARTITIONS = {"a": 3, "b": 3}   # range: c0 [a-0, a-1, b-0, b-1], c1 [a-2, b-2]; round-robin interleaves them

STUDENT_ASSIGNOR = '''
from lab.assignors import TopicPartition


class GiveEverythingToTheSmallestId:
    """A student's (deliberately lopsided) assignor: every partition to the member whose id sorts first."""

    def assign(self, partitions_per_topic, subscriptions):
        first = min(subscriptions)
        everything = [TopicPartition(topic, p) for topic, count in sorted(partitions_per_topic.items())
                      for p in range(count)]
        return {member: everything if member == first else [] for member in subscriptions}
'''


@contextlib.contextmanager
def two_range_consumers(override: str, data_dir: Path) -> Iterator[Settled]:
    """Two consumers asking for `range`, on a broker whose coordinator overrides the assignment with `override`."""
    with EmbeddedBroker(config=quick_config(data_dir, assignor_override=override)) as broker, \
            GroupEvents(broker) as events:
        for topic, count in PARTITIONS.items():
            create_topic(broker.bootstrap_servers, topic, count)
        members = [MemberThread(f"c{i}", broker.bootstrap_servers, "overridden", list(PARTITIONS), "range").start()
                   for i in range(2)]
        try:
            yield wait_for_settled(broker, events, "overridden", members, PARTITIONS)
        finally:
            for member in members:
                member.stop()


def leaders_assignment(settled: Settled) -> dict[str, frozenset[TopicPartition]]:
    assert settled.sync.leader_assignments is not None
    return {member: frozenset(decode_assignment(raw).partitions)
            for member, raw in settled.sync.leader_assignments.items()}


def test_a_roundrobin_override_replaces_the_range_leaders_assignment(tmp_path: Path) -> None:
    with two_range_consumers("roundrobin", tmp_path) as settled:
        subscriptions = subscriptions_of(settled.join)
        expected = as_sets(get("roundrobin").assign(PARTITIONS, subscriptions))
        assert settled.join.protocol == "range" and settled.sync.overridden_by == "roundrobin"
        assert settled.by_member_id == expected, f"consumers: {show(settled.by_member_id)}; expected {show(expected)}"
        # The leader did run range; the coordinator replaced its answer.
        assert leaders_assignment(settled) == as_sets(get("range").assign(PARTITIONS, subscriptions))
        assert settled.by_member_id != leaders_assignment(settled)


def test_a_students_assignor_file_drives_the_consumers(tmp_path: Path) -> None:
    path = tmp_path / "smallest.py"
    path.write_text(STUDENT_ASSIGNOR)
    spec = f"{path}:GiveEverythingToTheSmallestId"
    with two_range_consumers(spec, tmp_path / "data") as settled:
        smallest, other = sorted(settled.by_member_id)
        assert settled.sync.overridden_by == spec
        assert settled.by_member_id == {smallest: all_partitions(PARTITIONS), other: frozenset()}
        assert leaders_assignment(settled) == as_sets(get("range").assign(PARTITIONS, subscriptions_of(settled.join)))

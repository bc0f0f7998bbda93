"""The lab's assignor override: let a `lab.assignors` (or a student's) assignor drive real consumers.

In Kafka's classic protocol the *leader client* computes the assignment; the coordinator only stores it and hands it
out. With `lab broker --assignor-override NAME|module:attr|path/to/file.py:attr` the lab's coordinator replaces the
leader's assignment, at the leader's SyncGroup, with the one this assignor computes from the members' Subscription
bytes (topics, user data, owned partitions, generation, rack). Real Kafka never does this: every event of an
overridden rebalance says so (`SyncCompleted.overridden_by`).

Under the cooperative protocol (`cooperative-sticky` selected) a partition may not go straight from one member to
another: its old owner must revoke it first. Assignors other than the cooperative-sticky one do not know that, so the
override withholds any partition another member still owns; the owner revokes it, rejoins, and the next rebalance
hands it over (what Kafka's `ConsumerCoordinator` checks with `validateCooperativeAssignment`).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lab.assignors import ASSIGNORS, Subscription, TopicPartition
from lab.assignors import get as get_assignor
from lab.broker.coordinator.consumer_protocol import HIGHEST_VERSION, decode_subscription, encode_assignment

if TYPE_CHECKING:
    from lab.broker.coordinator.group import GroupMetadata

COOPERATIVE_PROTOCOLS = frozenset({"cooperative-sticky"})


class OverrideError(ValueError):
    """The override spec names nothing usable; the message says what is allowed."""


def load_assignor(spec: str) -> Any:
    """An assignor from "range" (a lab.assignors name), "package.module:attr" or "path/to/file.py:attr"."""
    if spec in ASSIGNORS:
        return get_assignor(spec)
    if ":" not in spec:
        raise OverrideError(f"unknown assignor {spec!r}: give one of {', '.join(ASSIGNORS)}, "
                            f"or module:attr, or path/to/file.py:attr")
    where, attr = spec.rsplit(":", 1)
    try:
        if where.endswith(".py"):
            path = Path(where)
            module_spec = importlib.util.spec_from_file_location(f"lab_override_{path.stem}", path)
            if module_spec is None or module_spec.loader is None or not path.is_file():
                raise OverrideError(f"assignor file {where} not found")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
        target = getattr(module, attr)
    except OverrideError:
        raise
    except Exception as error:
        raise OverrideError(f"cannot load assignor {spec!r}: {type(error).__name__}: {error}") from error
    assignor = target() if isinstance(target, type) else target
    if not callable(getattr(assignor, "assign", None)):
        raise OverrideError(f"{spec!r} has no assign(partitions_per_topic, subscriptions) method")
    return assignor


def withhold_owned_elsewhere(assignment: Mapping[str, list[TopicPartition]],
                             subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    """Drop from each member's list the partitions another member still owns (they must be revoked first)."""
    owner = {tp: member for member, sub in subscriptions.items() for tp in sub.owned_partitions}
    return {member: [tp for tp in tps if owner.get(tp, member) == member] for member, tps in assignment.items()}


class AssignorOverride:
    def __init__(self, spec: str) -> None:
        self.name = spec
        self.assignor = load_assignor(spec)

    def subscriptions(self, group: GroupMetadata) -> dict[str, Subscription]:
        assert group.protocol_name is not None
        return {m.member_id: decode_subscription(m.metadata(group.protocol_name)).to_assignor_subscription(
                    group_instance_id=m.group_instance_id)
                for m in group.members.values()}

    def compute(self, group: GroupMetadata, partitions_per_topic: Mapping[str, int]) -> dict[str, list[TopicPartition]]:
        subscriptions = self.subscriptions(group)
        wanted = {topic for sub in subscriptions.values() for topic in sub.topics}
        counts = {topic: n for topic, n in partitions_per_topic.items() if topic in wanted}
        result = self.assignor.assign(counts, subscriptions)
        assignment = {member: list(result.get(member, [])) for member in subscriptions}
        if group.protocol_name in COOPERATIVE_PROTOCOLS:
            assignment = withhold_owned_elsewhere(assignment, subscriptions)
        return assignment

    def assign(self, group: GroupMetadata, partitions_per_topic: Mapping[str, int]) -> dict[str, bytes]:
        """Each member's Assignment bytes, in the oldest consumer-protocol version any member used."""
        assert group.protocol_name is not None
        version = min((decode_subscription(m.metadata(group.protocol_name)).version for m in group.members.values()),
                      default=HIGHEST_VERSION)
        return {member: encode_assignment(tps, version=version)
                for member, tps in self.compute(group, partitions_per_topic).items()}

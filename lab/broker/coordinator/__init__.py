"""The group coordinator: Kafka's classic consumer-group protocol, driven by the lab's timing-wheel purgatory.

    state.py              the five group states and the one table of legal transitions
    member.py, group.py   a member, and a group's membership, generation, leader and protocol
    coordinator.py        JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups, DeleteGroups
    delayed.py            DelayedJoin, InitialDelayedJoin, DelayedSync, DelayedHeartbeat
    offsets.py            OffsetCommit / OffsetFetch checks
    store.py              committed offsets and group metadata in the compacted `__consumer_offsets` topic
    records.py            the byte formats of that topic's keys and values
    consumer_protocol.py  the Subscription / Assignment bytes consumers put inside JoinGroup / SyncGroup
    override.py           the lab's assignor override (off by default)
    events.py             one event per step, for views and tests
"""

from lab.broker.coordinator.config import CoordinatorConfig
from lab.broker.coordinator.coordinator import GroupCoordinator
from lab.broker.coordinator.group import GroupMetadata
from lab.broker.coordinator.member import MemberMetadata
from lab.broker.coordinator.offset_types import OffsetAndMetadata
from lab.broker.coordinator.results import GroupOverview, GroupSummary, JoinMember, JoinResult, SyncResult
from lab.broker.coordinator.state import TRANSITIONS, VALID_PREVIOUS_STATES, GroupState, IllegalStateTransition

__all__ = [
    "TRANSITIONS", "VALID_PREVIOUS_STATES", "CoordinatorConfig", "GroupCoordinator", "GroupMetadata", "GroupOverview",
    "GroupState", "GroupSummary", "IllegalStateTransition", "JoinMember", "JoinResult", "MemberMetadata",
    "OffsetAndMetadata", "SyncResult",
]

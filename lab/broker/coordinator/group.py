"""A classic group's membership, generation and protocol, after Kafka's `GroupMetadata.scala`.

The group keeps no timers and sends nothing: the coordinator drives it. What lives here is the bookkeeping Kafka does
under the group lock: who is a member, who is still pending (got a member id but has not rejoined yet), which static
instance id maps to which member id, who is awaiting join or sync, the leader (the first member added; when it leaves,
the next remaining member), and the protocol every member supports.

Member order is insertion order (Kafka iterates a hash map; the lab picks the order a student can follow), so "the
next leader" is the oldest remaining member.

    >>> group = GroupMetadata("orders", time_ms=lambda: 0)
    >>> group.add(MemberMetadata("c1-a", None, "c1", "/h", 300, 100, "consumer", [("range", b"")]), lambda r: None)
    >>> group.add(MemberMetadata("c2-b", None, "c2", "/h", 300, 100, "consumer", [("range", b""), ("roundrobin", b"")]))
    >>> group.leader_id, group.select_protocol(), group.has_all_members_joined()
    ('c1-a', 'range', False)
    >>> group.remove("c1-a"); group.leader_id
    'c2-b'
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable

from lab.assignors import TopicPartition
from lab.broker.coordinator.errors import FENCED_INSTANCE_ID
from lab.broker.coordinator.member import JoinCallback, MemberMetadata, Protocols
from lab.broker.coordinator.offset_types import OffsetAndMetadata
from lab.broker.coordinator.results import JoinMember, JoinResult, SyncResult
from lab.broker.coordinator.state import GroupState, check_transition

Transition = Callable[["GroupMetadata", GroupState, str], None]


class GroupMetadata:
    def __init__(self, group_id: str, *, time_ms: Callable[[], int], state: GroupState = GroupState.EMPTY,
                 on_transition: Transition | None = None) -> None:
        self.group_id = group_id
        self.state = state
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, MemberMetadata] = {}
        self.pending_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        self.new_member_added = False
        self.state_timestamp_ms: int | None = None
        self.offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self._supported: Counter[str] = Counter()
        self._awaiting_join = 0
        self._time_ms = time_ms
        self._on_transition = on_transition

    # --- state -------------------------------------------------------------------------------------------------------
    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def transition_to(self, target: GroupState, reason: str) -> None:
        """The only place the state changes: checked against the transition table, then reported."""
        check_transition(self.group_id, self.state, target)
        old, self.state = self.state, target
        self.state_timestamp_ms = self._time_ms()
        if self._on_transition is not None:
            self._on_transition(self, old, reason)

    # --- membership --------------------------------------------------------------------------------------------------
    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> MemberMetadata:
        return self.members[member_id]

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def num_awaiting_join(self) -> int:
        return self._awaiting_join

    def add(self, member: MemberMetadata, callback: JoinCallback | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise ValueError(f"static member {member.group_instance_id} is already in group {self.group_id}")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._supported.update(member.protocol_names)
        member.awaiting_join = callback
        if callback is not None:
            self._awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._supported.subtract(member.protocol_names)
            if member.is_awaiting_join:
                self._awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def update_member(self, member: MemberMetadata, protocols: Protocols, rebalance_timeout_ms: int,
                      session_timeout_ms: int, callback: JoinCallback | None) -> None:
        self._supported.subtract(member.protocol_names)
        member.protocols = protocols
        self._supported.update(member.protocol_names)
        member.rebalance_timeout_ms, member.session_timeout_ms = rebalance_timeout_ms, session_timeout_ms
        if callback is not None and not member.is_awaiting_join:
            self._awaiting_join += 1
        elif callback is None and member.is_awaiting_join:
            self._awaiting_join -= 1
        member.awaiting_join = callback

    def replace_static_member(self, instance_id: str, old_member_id: str, new_member_id: str) -> MemberMetadata:
        """The instance rejoined under a new member id; whoever waits under the old id is fenced."""
        member = self.members.pop(old_member_id)
        self.invoke_join_callback(member, JoinResult(old_member_id, FENCED_INSTANCE_ID))
        self.invoke_sync_callback(member, SyncResult(FENCED_INSTANCE_ID))
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        self.static_members[instance_id] = new_member_id
        return member

    def add_pending_member(self, member_id: str) -> None:
        self.pending_members.add(member_id)

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def static_member_id(self, instance_id: str) -> str | None:
        return self.static_members.get(instance_id)

    def not_yet_rejoined(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self._awaiting_join and not self.pending_members

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def maybe_elect_new_joined_leader(self) -> bool:
        """If the leader did not rejoin, make the first member that did the leader. False if nobody rejoined."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].is_awaiting_join:
            return True
        joined = next((m.member_id for m in self.members.values() if m.is_awaiting_join), None)
        if joined is None:
            return False
        self.leader_id = joined
        return True

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    @staticmethod
    def generate_member_id(client_id: str, instance_id: str | None) -> str:
        return f"{instance_id if instance_id is not None else client_id}-{uuid.uuid4()}"

    # --- protocols ---------------------------------------------------------------------------------------------------
    def candidate_protocols(self) -> set[str]:
        return {name for name, count in self._supported.items() if count == len(self.members)}

    def supports_protocols(self, protocol_type: str, protocols: set[str]) -> bool:
        if self.is_(GroupState.EMPTY):
            return bool(protocol_type) and bool(protocols)
        return self.protocol_type == protocol_type and any(self._supported[p] == len(self.members) for p in protocols)

    def select_protocol(self) -> str:
        """The protocol with the most votes among those every member supports (ties: the first voted for)."""
        if not self.members:
            raise ValueError(f"cannot select a protocol for empty group {self.group_id}")
        candidates = self.candidate_protocols()
        votes = Counter(member.vote(candidates) for member in self.members.values())
        return votes.most_common(1)[0][0]

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(GroupState.COMPLETING_REBALANCE, "every member rejoined or the rebalance timed out")
        else:
            self.protocol_name = None
            self.transition_to(GroupState.EMPTY, "no members left after the rebalance")
        self.pending_sync_members.clear()

    def current_member_metadata(self) -> tuple[JoinMember, ...]:
        assert self.protocol_name is not None
        return tuple(JoinMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                     for m in self.members.values())

    # --- callbacks ---------------------------------------------------------------------------------------------------
    def invoke_join_callback(self, member: MemberMetadata, result: JoinResult) -> None:
        if member.awaiting_join is not None:
            callback, member.awaiting_join = member.awaiting_join, None
            self._awaiting_join -= 1
            callback(result)

    def invoke_sync_callback(self, member: MemberMetadata, result: SyncResult) -> bool:
        if member.awaiting_sync is None:
            return False
        callback, member.awaiting_sync = member.awaiting_sync, None
        callback(result)
        return True

    def __repr__(self) -> str:
        return (f"GroupMetadata({self.group_id!r}, {self.state.value}, generation={self.generation_id}, "
                f"leader={self.leader_id!r}, members={list(self.members)})")

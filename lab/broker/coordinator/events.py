"""Events of the group coordinator: every step of the classic rebalance protocol, with the reason it happened.

Published on the broker's `EventBus` next to the log's events. A group view can replay a whole rebalance from them:

    MemberAdded(c1) ─▶ GroupStateChanged(Empty ─▶ PreparingRebalance, "Adding new member c1 ...")
    ─▶ DelayedJoinScheduled(initial=True, 3000 ms) ─▶ GroupStateChanged(─▶ CompletingRebalance) ─▶ JoinCompleted(gen 1)
    ─▶ SyncCompleted(gen 1, assignments) ─▶ GroupStateChanged(─▶ Stable) ─▶ HeartbeatHandled ...
    ─▶ MemberRemoved(c1, ...)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lab.broker.events import Event


@dataclass(frozen=True, slots=True)
class GroupStateChanged(Event):
    group_id: str
    old: str
    new: str
    generation: int
    reason: str


@dataclass(frozen=True, slots=True)
class MemberAdded(Event):
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    protocols: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PendingMemberAdded(Event):
    """A JoinGroup v4+ without a member id got MEMBER_ID_REQUIRED and this id, to rejoin with."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class MemberRemoved(Event):
    group_id: str
    member_id: str
    group_instance_id: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class StaticMemberReplaced(Event):
    """A static member (group.instance.id) rejoined with no member id: it takes over the old id's place (KIP-345)."""

    group_id: str
    group_instance_id: str
    old_member_id: str
    new_member_id: str
    rebalance: bool


@dataclass(frozen=True, slots=True)
class DelayedJoinScheduled(Event):
    """The group waits in the rebalance purgatory for members to (re)join: `initial` is the new-group delay."""

    group_id: str
    delay_ms: int
    initial: bool


@dataclass(frozen=True, slots=True)
class JoinCompleted(Event):
    """A generation began: every member got its JoinGroup response; the leader also got the members' metadata."""

    group_id: str
    generation: int
    protocol_type: str | None
    protocol: str | None
    leader: str | None
    members: tuple[str, ...]
    metadata: dict[str, bytes] = field(default_factory=dict)  # member id -> its metadata for `protocol`


@dataclass(frozen=True, slots=True)
class SyncCompleted(Event):
    """The leader's assignment was stored and handed out; `overridden_by` names the lab's assignor override, if any."""

    group_id: str
    generation: int
    leader: str
    assignments: dict[str, bytes]
    overridden_by: str | None = None
    leader_assignments: dict[str, bytes] | None = None  # what the leader sent, when the override replaced it


@dataclass(frozen=True, slots=True)
class AssignorOverrideFailed(Event):
    """The override's assignor raised (or could not read a member's Subscription): the leader's assignment stands."""

    group_id: str
    generation: int
    assignor: str
    error: str


@dataclass(frozen=True, slots=True)
class HeartbeatHandled(Event):
    group_id: str
    member_id: str
    generation: int
    error_code: int


@dataclass(frozen=True, slots=True)
class OffsetsCommitted(Event):
    group_id: str
    member_id: str
    generation: int
    offsets: tuple[tuple[str, int, int], ...]   # (topic, partition, offset)
    error_code: int


@dataclass(frozen=True, slots=True)
class GroupsLoaded(Event):
    """Groups and committed offsets were read back from `__consumer_offsets` at start-up."""

    groups: int
    offsets: int
    records: int

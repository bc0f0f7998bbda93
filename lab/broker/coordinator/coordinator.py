"""The group coordinator of Kafka's classic protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, with no sockets.

Follows `core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala` (Kafka 3.x) closely; the method names are
Kafka's, in snake case, so a student can read both side by side. Requests that must wait (a JoinGroup until the
other members rejoin, a follower's SyncGroup until the leader sends the assignment) take a callback, called once with
the result, maybe much later, from a purgatory's timer or another member's request. Everything runs on one thread
(the broker's event loop), so unlike Kafka there is no group lock.

One rebalance, two consumers, eager protocol:

    c1 JoinGroup(member "")      -> MEMBER_ID_REQUIRED, member id c1-…       (v4+: the id is handed out first)
    c1 JoinGroup(c1-…)           group Empty -> PreparingRebalance; InitialDelayedJoin waits initial.rebalance.delay
    c2 JoinGroup(c2-…)           joins the same rebalance (the initial delay restarts: a new member was added)
    delay over                   -> CompletingRebalance, generation 1; JoinGroup answered: c1 leader (gets members)
    c2 SyncGroup(gen 1, [])      waits: the leader has not sent the assignment yet
    c1 SyncGroup(gen 1, {c1: …, c2: …}) -> stored; both SyncGroups answered; -> Stable
    c1, c2 Heartbeat             NONE; each resets that member's DelayedHeartbeat (its session timeout)

The lab's addition is the assignor override (see `override.py`): off by default; when on, the leader's assignment is
replaced with one computed here, and `SyncCompleted.overridden_by` says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from lab.assignors import TopicPartition
from lab.broker.coordinator import errors as E
from lab.broker.coordinator.config import CoordinatorConfig
from lab.broker.coordinator.delayed import (
    DelayedHeartbeat,
    DelayedJoin,
    DelayedSync,
    InitialDelayedJoin,
    join_key,
    member_key,
    sync_key,
)
from lab.broker.coordinator.events import (
    AssignorOverrideFailed,
    DelayedJoinScheduled,
    GroupsLoaded,
    GroupStateChanged,
    HeartbeatHandled,
    JoinCompleted,
    MemberAdded,
    MemberRemoved,
    PendingMemberAdded,
    StaticMemberReplaced,
    SyncCompleted,
)
from lab.broker.coordinator.group import GroupMetadata
from lab.broker.coordinator.member import JoinCallback, MemberMetadata, Protocols, SyncCallback
from lab.broker.coordinator.offset_types import OffsetAndMetadata
from lab.broker.coordinator.offsets import commit_offsets, fetch_offsets
from lab.broker.coordinator.results import GroupOverview, GroupSummary, JoinResult, MemberSummary, SyncResult
from lab.broker.coordinator.state import GroupState, can_rebalance
from lab.broker.events import Event, EventBus
from lab.purgatory import DelayedOperationPurgatory
from lab.timer import SystemTimer, Time

if TYPE_CHECKING:
    from lab.broker.coordinator.override import AssignorOverride
    from lab.broker.coordinator.store import GroupStore

logger = logging.getLogger(__name__)

UNKNOWN_MEMBER_ID = ""
EMPTY, PREPARING, COMPLETING, STABLE, DEAD = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE,
                                              GroupState.COMPLETING_REBALANCE, GroupState.STABLE, GroupState.DEAD)


class GroupCoordinator:
    def __init__(self, config: CoordinatorConfig | None = None, *, time: Time, bus: EventBus | None = None,
                 store: GroupStore | None = None, override: AssignorOverride | None = None,
                 partitions_per_topic: Callable[[], Mapping[str, int]] | None = None) -> None:
        self.config = config or CoordinatorConfig()
        self.time = time
        self.bus = bus if bus is not None else EventBus()
        self.store = store
        self.override = override
        self.partitions_per_topic = partitions_per_topic or dict
        self.groups: dict[str, GroupMetadata] = {}
        self.heartbeat_purgatory = DelayedOperationPurgatory("Heartbeat", timer=SystemTimer("heartbeat", time=time))
        self.rebalance_purgatory = DelayedOperationPurgatory("Rebalance", timer=SystemTimer("rebalance", time=time))

    # --- plumbing ----------------------------------------------------------------------------------------------------
    def publish(self, make: Callable[[], Event]) -> None:
        if self.bus.has_subscribers():
            self.bus.publish(make())

    def _on_transition(self, group: GroupMetadata, old: GroupState, reason: str) -> None:
        self.publish(lambda: GroupStateChanged(group.group_id, old.value, group.state.value, group.generation_id,
                                                reason))

    def new_group(self, group_id: str, state: GroupState = EMPTY) -> GroupMetadata:
        group = GroupMetadata(group_id, time_ms=self.time.milliseconds, state=state,
                              on_transition=self._on_transition)
        self.groups[group_id] = group
        return group

    @property
    def override_name(self) -> str:
        return self.override.name if self.override is not None else ""

    def get_group(self, group_id: str) -> GroupMetadata | None:
        return self.groups.get(group_id)

    def _store_group(self, group: GroupMetadata) -> None:
        if self.store is not None:
            self.store.store_group(group)

    def advance_clock(self, timeout_ms: int) -> None:
        """Let `timeout_ms` pass, firing every delayed operation in deadline order as its time comes.

        For tests and lessons on a MockTime (on the system clock this really sleeps); the broker instead ticks each
        purgatory from its own asyncio driver."""
        purgatories = (self.heartbeat_purgatory, self.rebalance_purgatory)
        deadline = self.time.milliseconds() + max(timeout_ms, 0)
        while True:
            if any([p.advance_clock(0) for p in purgatories]):
                continue
            now = self.time.milliseconds()
            due = [e for e in (p.next_expiration_ms() for p in purgatories) if e is not None]
            target = min([*due, deadline])
            if target <= now:
                return
            self.time.sleep(target - now)

    @staticmethod
    def _valid_group_id(group_id: str | None, *, empty_allowed: bool = False) -> bool:
        return group_id is not None and (empty_allowed or group_id != "")

    def load(self) -> None:
        """Rebuild groups and offsets from the store, as Kafka does when it becomes a group's coordinator
        (`GroupMetadataManager.loadGroupsAndOffsets`, `GroupCoordinator.onGroupLoaded`)."""
        if self.store is None:
            return
        state = self.store.load()
        for group_id in {*state.groups, *state.offsets}:
            value = state.groups.get(group_id)
            group = self.new_group(group_id, STABLE if value is not None and value.members else EMPTY)
            group.offsets.update(state.offsets.get(group_id, {}))
            if value is None:
                continue
            group.generation_id, group.protocol_name = value.generation, value.protocol
            group.protocol_type = value.protocol_type or None
            for m in value.members:
                member = MemberMetadata(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                        m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout,
                                        m.session_timeout, value.protocol_type,
                                        [(value.protocol or "", m.subscription)], assignment=m.assignment)
                group.add(member)
            group.leader_id = value.leader if value.leader in group.members else group.leader_id
            for member in group.members.values():  # members must heartbeat again within their session timeout
                self._complete_and_schedule_next_heartbeat(group, member)
        self.publish(lambda: GroupsLoaded(len(state.groups), sum(map(len, state.offsets.values())), state.records))

    # --- JoinGroup ---------------------------------------------------------------------------------------------------
    def handle_join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                          require_known_member_id: bool, support_skipping_assignment: bool, client_id: str,
                          client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                          protocols: Protocols, callback: JoinCallback, reason: str | None = None) -> None:
        if not self._valid_group_id(group_id):
            callback(JoinResult(member_id, E.INVALID_GROUP_ID))
            return
        cfg = self.config
        if not cfg.group_min_session_timeout_ms <= session_timeout_ms <= cfg.group_max_session_timeout_ms:
            callback(JoinResult(member_id, E.INVALID_SESSION_TIMEOUT))
            return
        is_unknown = member_id == UNKNOWN_MEMBER_ID
        group = self.groups.get(group_id)
        if group is None:
            if not is_unknown:  # a member id for a group that does not exist
                callback(JoinResult(member_id, E.UNKNOWN_MEMBER_ID))
                return
            group = self.new_group(group_id)
        why = reason or "not provided"
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            callback(JoinResult(UNKNOWN_MEMBER_ID, E.GROUP_MAX_SIZE_REACHED))
        elif (error := self._join_error(group, protocol_type, protocols)) is not None:
            callback(JoinResult(member_id, error))  # member_id is "" for a new member, as Kafka answers
        elif is_unknown:
            self._new_member_join(group, group_instance_id, require_known_member_id, support_skipping_assignment,
                                  client_id, client_host, rebalance_timeout_ms, session_timeout_ms, protocol_type,
                                  protocols, callback, why)
        else:
            self._current_member_join(group, member_id, group_instance_id, client_id, client_host,
                                      rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols, callback, why)
        if group.is_(PREPARING):
            self.rebalance_purgatory.check_and_complete(join_key(group_id))

    def _accept_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        limit = self.config.group_max_size
        if group.state in (EMPTY, DEAD):
            return True
        if group.is_(PREPARING):
            return (group.has(member_id) and group.get(member_id).is_awaiting_join) or group.num_awaiting_join < limit
        return group.has(member_id) or group.size < limit

    @staticmethod
    def _join_error(group: GroupMetadata, protocol_type: str, protocols: Protocols) -> int | None:
        """The checks every JoinGroup passes first: the group lives, and it shares a protocol with the joiner."""
        if group.is_(DEAD):
            return E.COORDINATOR_NOT_AVAILABLE
        if not group.supports_protocols(protocol_type, {name for name, _ in protocols}):
            return E.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _new_member_join(self, group: GroupMetadata, instance_id: str | None, require_known_member_id: bool,
                         support_skipping_assignment: bool, client_id: str, client_host: str, rebalance_timeout_ms: int,
                         session_timeout_ms: int, protocol_type: str, protocols: Protocols, callback: JoinCallback,
                         reason: str) -> None:
        new_member_id = group.generate_member_id(client_id, instance_id)
        if instance_id is not None:
            old_member_id = group.static_member_id(instance_id)
            if old_member_id is not None:
                self._update_static_member_and_rebalance(group, old_member_id, new_member_id, instance_id, protocols,
                                                         rebalance_timeout_ms, session_timeout_ms, callback, reason,
                                                         support_skipping_assignment)
                return
        elif require_known_member_id:
            # v4+: hand out the member id first; the member must rejoin with it within its session timeout.
            group.add_pending_member(new_member_id)
            self._add_pending_member_expiration(group, new_member_id, session_timeout_ms)
            self.publish(lambda: PendingMemberAdded(group.group_id, new_member_id))
            callback(JoinResult(new_member_id, E.MEMBER_ID_REQUIRED))
            return
        self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id, instance_id,
                                       client_id, client_host, protocol_type, protocols, group, callback, reason)

    def validate_current_member(self, group: GroupMetadata, member_id: str, instance_id: str | None) -> int | None:
        if instance_id is not None:
            current = group.static_member_id(instance_id)
            if current is None:
                return E.UNKNOWN_MEMBER_ID
            if current != member_id:
                return E.FENCED_INSTANCE_ID
            return None
        return None if group.has(member_id) else E.UNKNOWN_MEMBER_ID

    def _validate_member_of_generation(self, group: GroupMetadata, member_id: str, instance_id: str | None,
                                       generation_id: int) -> int | None:
        """SyncGroup's and Heartbeat's common checks: the group lives, the member is current, the generation too."""
        if group.is_(DEAD):
            return E.COORDINATOR_NOT_AVAILABLE
        error = self.validate_current_member(group, member_id, instance_id)
        if error is not None:
            return error
        return E.ILLEGAL_GENERATION if generation_id != group.generation_id else None

    def _current_member_join(self, group: GroupMetadata, member_id: str, instance_id: str | None, client_id: str,
                             client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                             protocols: Protocols, callback: JoinCallback, reason: str) -> None:
        if group.is_pending_member(member_id):
            if instance_id is not None:  # Kafka treats this as a broken client; answer instead of crashing
                callback(JoinResult(member_id, E.INVALID_REQUEST))
                return
            self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, member_id, None, client_id,
                                           client_host, protocol_type, protocols, group, callback, reason)
            return
        error = self.validate_current_member(group, member_id, instance_id)
        if error is not None:
            callback(JoinResult(member_id, error))
            return
        if group.state in (EMPTY, DEAD):
            callback(JoinResult(member_id, E.UNKNOWN_MEMBER_ID))
            return
        member = group.get(member_id)
        if group.is_(PREPARING):
            self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                              f"member {member_id} joining during PreparingRebalance; "
                                              f"client reason: {reason}", callback)
        elif group.is_(COMPLETING) and member.matches(protocols):
            # Same metadata: it probably missed the JoinGroup response. Answer with the current generation.
            callback(self._join_result(group, member_id))
        elif group.is_(STABLE) and not group.is_leader(member_id) and member.matches(protocols):
            callback(self._join_result(group, member_id, members=False))
        else:
            # The leader rejoining a stable group forces a rebalance (it may have seen a metadata change);
            # so does any member whose protocols changed.
            what = "leader re-joining" if group.is_leader(member_id) and group.is_(STABLE) else "metadata changed"
            self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                              f"member {member_id}: {what} during {group.state.value}; "
                                              f"client reason: {reason}", callback)

    def _join_result(self, group: GroupMetadata, member_id: str, *, members: bool = True,
                     leader: str | None = None, skip_assignment: bool = False) -> JoinResult:
        is_leader = group.is_leader(member_id)
        return JoinResult(member_id, E.NONE, group.generation_id, group.protocol_type, group.protocol_name,
                          leader if leader is not None else (group.leader_id or ""), skip_assignment,
                          group.current_member_metadata() if members and is_leader else ())

    def _add_member_and_rebalance(self, rebalance_timeout_ms: int, session_timeout_ms: int, member_id: str,
                                  instance_id: str | None, client_id: str, client_host: str, protocol_type: str,
                                  protocols: Protocols, group: GroupMetadata, callback: JoinCallback,
                                  reason: str) -> None:
        member = MemberMetadata(member_id, instance_id, client_id, client_host, rebalance_timeout_ms,
                                session_timeout_ms, protocol_type, list(protocols), is_new=True)
        if group.is_(PREPARING) and group.generation_id == 0:
            group.new_member_added = True  # lets the initial delay wait a little longer
        group.add(member, callback)
        self.publish(lambda: MemberAdded(group.group_id, member_id, instance_id, client_id,
                                          tuple(name for name, _ in protocols)))
        # A new member cannot heartbeat yet, and a disconnect goes unnoticed while its JoinGroup is parked:
        # it gets a generous join timeout instead of its session timeout.
        self._complete_and_schedule_next_expiration(group, member, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance(group, f"adding new member {member_id} with group instance id "
                                             f"{instance_id}; client reason: {reason}")

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata, protocols: Protocols,
                                     rebalance_timeout_ms: int, session_timeout_ms: int, reason: str,
                                     callback: JoinCallback) -> None:
        group.update_member(member, list(protocols), rebalance_timeout_ms, session_timeout_ms, callback)
        self._maybe_prepare_rebalance(group, reason)

    def _update_static_member_and_rebalance(self, group: GroupMetadata, old_member_id: str, new_member_id: str,
                                            instance_id: str, protocols: Protocols, rebalance_timeout_ms: int,
                                            session_timeout_ms: int, callback: JoinCallback, reason: str,
                                            support_skipping_assignment: bool) -> None:
        current_leader = group.leader_id or ""
        member = group.replace_static_member(instance_id, old_member_id, new_member_id)
        self._complete_and_schedule_next_heartbeat(group, member)
        group.update_member(member, list(protocols), rebalance_timeout_ms, session_timeout_ms, callback)
        keeps_assignment = group.is_(STABLE) and group.protocol_name == group.select_protocol()
        self.publish(lambda: StaticMemberReplaced(group.group_id, instance_id, old_member_id, new_member_id,
                                                   not keeps_assignment and not group.is_(PREPARING)))
        if group.is_(STABLE):
            if keeps_assignment:
                # KIP-345: the instance gets its old assignment back, with no rebalance and no new generation.
                self._store_group(group)
                is_leader = group.is_leader(new_member_id)
                if support_skipping_assignment:
                    result = self._join_result(group, new_member_id, skip_assignment=is_leader)
                else:  # older clients: report the old leader id, so a restarted leader does not run the assignor
                    result = self._join_result(group, new_member_id, members=False, leader=current_leader)
                group.invoke_join_callback(member, result)
            else:
                self._maybe_prepare_rebalance(group, f"static member {instance_id} rejoined with a protocol that "
                                                     f"changes the group's choice; client reason: {reason}")
        elif group.is_(COMPLETING):
            # The leader may already be assigning for the old member id: start over.
            self._prepare_rebalance(group, f"static member {instance_id} rejoined during CompletingRebalance; "
                                           f"client reason: {reason}")

    # --- rebalance ---------------------------------------------------------------------------------------------------
    def _maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if can_rebalance(group.state):
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.is_(COMPLETING):  # members waiting for an assignment must rejoin instead
            self._reset_and_propagate_assignment_error(group, E.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        initial = group.is_(EMPTY)
        if initial:
            delay = self.config.group_initial_rebalance_delay_ms
            operation: DelayedJoin = InitialDelayedJoin(self, group, delay, delay,
                                                        max(group.rebalance_timeout_ms - delay, 0))
        else:
            operation = DelayedJoin(self, group, group.rebalance_timeout_ms)
        group.transition_to(PREPARING, reason)
        self.schedule_join(operation, initial=initial)

    def schedule_join(self, operation: DelayedJoin, *, initial: bool) -> None:
        group = operation.group
        self.publish(lambda: DelayedJoinScheduled(group.group_id, operation.delay_ms, initial))
        self.rebalance_purgatory.try_complete_else_watch(operation, [join_key(group.group_id)])

    def on_complete_join(self, group: GroupMetadata) -> None:
        for member in [m for m in group.not_yet_rejoined() if not m.is_static]:
            self._remove_member(group, member, "did not rejoin before the rebalance timeout")
            self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))
        if group.is_(DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined (only static members remain): wait another round for session timeouts to act.
            self.schedule_join(DelayedJoin(self, group, group.rebalance_timeout_ms), initial=False)
            return
        group.init_next_generation()
        if group.is_(EMPTY):
            self._store_group(group)
            return
        self.publish(lambda: JoinCompleted(
            group.group_id, group.generation_id, group.protocol_type, group.protocol_name, group.leader_id,
            tuple(group.members), {m.member_id: m.metadata for m in group.current_member_metadata()}))
        for member in list(group.members.values()):
            group.invoke_join_callback(member, self._join_result(group, member.member_id))
            self._complete_and_schedule_next_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        self.rebalance_purgatory.try_complete_else_watch(
            DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms), [sync_key(group.group_id)])

    def _remove_member(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        group.remove(member.member_id)
        self.publish(lambda: MemberRemoved(group.group_id, member.member_id, member.group_instance_id, reason))

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        # A new member may time out while its JoinGroup is parked: answer it so that the client retries.
        group.invoke_join_callback(member, JoinResult(UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID))
        self._remove_member(group, member, reason)
        if group.state in (STABLE, COMPLETING):
            self._maybe_prepare_rebalance(group, f"removing member {member.member_id}: {reason}")
        elif group.is_(PREPARING):
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        group.remove(member_id)
        self.publish(lambda: MemberRemoved(group.group_id, member_id, None, "pending member left or expired"))
        if group.is_(PREPARING):
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    # --- SyncGroup ---------------------------------------------------------------------------------------------------
    def handle_sync_group(self, group_id: str, generation_id: int, member_id: str, protocol_type: str | None,
                          protocol_name: str | None, group_instance_id: str | None, assignments: Mapping[str, bytes],
                          callback: SyncCallback) -> None:
        if not self._valid_group_id(group_id):
            callback(SyncResult(E.INVALID_GROUP_ID))
            return
        group = self.groups.get(group_id)
        if group is None:
            callback(SyncResult(E.UNKNOWN_MEMBER_ID))
            return
        error = self._validate_sync_group(group, generation_id, member_id, protocol_type, protocol_name,
                                          group_instance_id)
        if error is not None:
            callback(SyncResult(error))
        elif group.is_(EMPTY):
            callback(SyncResult(E.UNKNOWN_MEMBER_ID))
        elif group.is_(PREPARING):
            callback(SyncResult(E.REBALANCE_IN_PROGRESS))
        elif group.is_(COMPLETING):
            group.get(member_id).awaiting_sync = callback
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                self._complete_sync(group, dict(assignments))
        elif group.is_(STABLE):
            self._remove_pending_sync_member(group, member_id)
            member = group.get(member_id)
            callback(SyncResult(E.NONE, group.protocol_type, group.protocol_name, member.assignment))
            self._complete_and_schedule_next_heartbeat(group, member)

    def _validate_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str,
                             protocol_type: str | None, protocol_name: str | None,
                             instance_id: str | None) -> int | None:
        error = self._validate_member_of_generation(group, member_id, instance_id, generation_id)
        if error is not None:
            return error
        if protocol_type is not None and group.protocol_type != protocol_type:
            return E.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and group.protocol_name != protocol_name:
            return E.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _complete_sync(self, group: GroupMetadata, from_leader: dict[str, bytes]) -> None:
        assignment = {member_id: from_leader.get(member_id, b"") for member_id in group.members}
        overridden_by = None
        if self.override is not None and group.protocol_type == "consumer":
            try:
                assignment = self.override.assign(group, self.partitions_per_topic())
                overridden_by = self.override.name
            except Exception as error:  # a student's assignor, or bytes it cannot read: keep the leader's
                why = f"{type(error).__name__}: {error}"
                logger.warning("assignor override %s failed for group %s: %s", self.override_name, group.group_id, why)
                self.publish(lambda: AssignorOverrideFailed(group.group_id, group.generation_id, self.override_name,
                                                            why))
        for member in group.members.values():
            member.assignment = assignment[member.member_id]
        self._store_group(group)
        self.publish(lambda: SyncCompleted(group.group_id, group.generation_id, group.leader_id or "", assignment,
                                            overridden_by, from_leader if overridden_by else None))
        self._propagate_assignment(group, E.NONE)
        group.transition_to(STABLE, f"assignment received from leader {group.leader_id}"
                                    + (f", replaced by the lab's override {overridden_by}" if overridden_by else ""))

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: int) -> None:
        ok = error == E.NONE
        for member in list(group.members.values()):
            result = SyncResult(error, group.protocol_type if ok else None, group.protocol_name if ok else None,
                                member.assignment)
            if group.invoke_sync_callback(member, result):
                # Restart the session timer: it was ignored while the member waited for its assignment.
                self._complete_and_schedule_next_heartbeat(group, member)

    def _remove_pending_sync_member(self, group: GroupMetadata, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def _remove_sync_expiration(self, group: GroupMetadata) -> None:
        group.pending_sync_members.clear()
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def pending_sync_done(self, group: GroupMetadata, generation_id: int) -> bool:
        if generation_id != group.generation_id or group.state in (DEAD, EMPTY, PREPARING):
            return True
        return group.has_received_sync_from_all_members()

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        if generation_id != group.generation_id or group.state not in (COMPLETING, STABLE):
            return
        if not group.has_received_sync_from_all_members():
            missing = sorted(group.pending_sync_members)
            for member_id in missing:
                self._remove_member(group, group.get(member_id), "did not send SyncGroup before the rebalance timeout")
                self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))
            self._prepare_rebalance(group, f"removed {missing}: no SyncGroup before the rebalance timeout")

    # --- Heartbeat ---------------------------------------------------------------------------------------------------
    def handle_heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None,
                         generation_id: int) -> int:
        error = self._heartbeat(group_id, member_id, group_instance_id, generation_id)
        self.publish(lambda: HeartbeatHandled(group_id, member_id, generation_id, error))
        return error

    def _heartbeat(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int) -> int:
        if not self._valid_group_id(group_id):
            return E.INVALID_GROUP_ID
        group = self.groups.get(group_id)
        if group is None:
            return E.UNKNOWN_MEMBER_ID
        error = self._validate_member_of_generation(group, member_id, instance_id, generation_id)
        if error is not None:
            return error
        if group.is_(EMPTY):
            return E.UNKNOWN_MEMBER_ID
        self._complete_and_schedule_next_heartbeat(group, group.get(member_id))
        return E.REBALANCE_IN_PROGRESS if group.is_(PREPARING) else E.NONE

    def heartbeat_member(self, group: GroupMetadata, member_id: str) -> None:
        """A commit from a member also counts as its heartbeat."""
        self._complete_and_schedule_next_heartbeat(group, group.get(member_id))

    def _complete_and_schedule_next_heartbeat(self, group: GroupMetadata, member: MemberMetadata) -> None:
        self._complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def _complete_and_schedule_next_expiration(self, group: GroupMetadata, member: MemberMetadata,
                                               timeout_ms: int) -> None:
        key = member_key(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member.member_id, False, timeout_ms), [key])

    def _add_pending_member_expiration(self, group: GroupMetadata, member_id: str, timeout_ms: int) -> None:
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member_id, True, timeout_ms), [member_key(group.group_id, member_id)])

    def heartbeat_done(self, group: GroupMetadata, member_id: str, is_pending: bool) -> bool:
        if group.is_(DEAD):
            return True
        if is_pending:
            return group.has(member_id)
        return not group.has(member_id) or group.get(member_id).has_satisfied_heartbeat()

    def on_expire_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool) -> None:
        if group.is_(DEAD):
            return
        if is_pending:
            if group.is_pending_member(member_id):
                self._remove_pending_member_and_update_group(group, member_id)
        elif group.has(member_id) and not group.get(member_id).has_satisfied_heartbeat():
            self._remove_member_and_update_group(group, group.get(member_id), "session timeout expired")

    # --- LeaveGroup --------------------------------------------------------------------------------------------------
    def handle_leave_group(self, group_id: str,
                           leaving: Sequence[tuple[str, str | None, str | None]]) -> tuple[int, list[int]]:
        """`leaving`: (member id, group instance id, reason) per member. Returns the top-level and per-member errors."""
        if not self._valid_group_id(group_id):
            return E.INVALID_GROUP_ID, []
        group = self.groups.get(group_id)
        if group is None:
            return E.NONE, [E.UNKNOWN_MEMBER_ID for _ in leaving]
        if group.is_(DEAD):
            return E.COORDINATOR_NOT_AVAILABLE, []
        errors = []
        for member_id, instance_id, reason in leaving:
            why = f"left the group (LeaveGroup; client reason: {reason or 'not provided'})"
            if member_id == UNKNOWN_MEMBER_ID:  # an admin removing a static member by instance id
                current = group.static_member_id(instance_id) if instance_id is not None else None
                if current is None:
                    errors.append(E.UNKNOWN_MEMBER_ID)
                    continue
                self._remove_current_member(group, current, why)
                errors.append(E.NONE)
            elif group.is_pending_member(member_id):
                self._remove_pending_member_and_update_group(group, member_id)
                self.heartbeat_purgatory.check_and_complete(member_key(group_id, member_id))
                errors.append(E.NONE)
            else:
                error = self.validate_current_member(group, member_id, instance_id)
                if error is None:
                    self._remove_current_member(group, member_id, why)
                errors.append(error if error is not None else E.NONE)
        return E.NONE, errors

    def _remove_current_member(self, group: GroupMetadata, member_id: str, reason: str) -> None:
        self._remove_member_and_update_group(group, group.get(member_id), reason)
        self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))

    # --- OffsetCommit, OffsetFetch (the checks live in offsets.py) ----------------------------------------------------
    def handle_commit_offsets(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int,
                              offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> dict[TopicPartition, int]:
        if not self._valid_group_id(group_id, empty_allowed=True):
            return dict.fromkeys(offsets, E.INVALID_GROUP_ID)
        return commit_offsets(self, group_id, member_id, group_instance_id, generation_id, offsets)

    def handle_fetch_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None
                             ) -> tuple[int, dict[TopicPartition, OffsetAndMetadata | None]]:
        if not self._valid_group_id(group_id, empty_allowed=True):
            return E.INVALID_GROUP_ID, {}
        return E.NONE, fetch_offsets(self, group_id, partitions)

    # --- DescribeGroups, ListGroups, DeleteGroups --------------------------------------------------------------------
    def handle_describe_group(self, group_id: str) -> GroupSummary:
        group = self.groups.get(group_id)
        if group is None:
            return GroupSummary(group_id, DEAD.value, "", "", ())
        protocol = group.protocol_name if group.is_(STABLE) else None  # metadata is reported once Stable
        members = tuple(
            MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                          m.metadata(protocol) if protocol else b"", m.assignment if protocol else b"")
            for m in group.members.values())
        return GroupSummary(group_id, group.state.value, group.protocol_type or "", protocol or "", members)

    def handle_list_groups(self, states: Sequence[str] = ()) -> list[GroupOverview]:
        wanted = {s.lower() for s in states}
        return [GroupOverview(g.group_id, g.protocol_type or "", g.state.value) for g in self.groups.values()
                if not wanted or g.state.value.lower() in wanted]

    def handle_delete_groups(self, group_ids: Sequence[str]) -> dict[str, int]:
        results = {}
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if group is None or group.is_(DEAD):
                results[group_id] = E.GROUP_ID_NOT_FOUND
            elif not group.is_(EMPTY):
                results[group_id] = E.NON_EMPTY_GROUP
            else:
                group.transition_to(DEAD, "deleted (DeleteGroups)")
                if self.store is not None:
                    self.store.delete_group(group)
                del self.groups[group_id]
                results[group_id] = E.NONE
        return results
